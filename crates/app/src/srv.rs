//! What an address's domain publishes in DNS about its services: mail by RFC 6186 SRV records
//! (`_imaps._tcp`, `_imap._tcp`, and RFC 8314's `_submissions._tcp` before `_submission._tcp`)
//! and calendars by RFC 6764 (`_caldavs._tcp`, with the path in its TXT record). DNS answers are
//! content like a fetched autoconfig file: the settings they make are shown and confirmed, and
//! they only ever lead to a password sign-in.

use cowork_store::accounts::Security;
use hickory_resolver::TokioResolver;
use hickory_resolver::config::{NameServerConfig, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::proto::rr::RData;
use std::time::Duration;

pub struct Resolver(TokioResolver);

/// A server a record names.
#[derive(Clone, Debug, PartialEq)]
pub struct Service {
    pub host: String,
    pub port: u16,
    pub security: Security,
}

impl Resolver {
    /// The system's resolver, or the one at `server` (`IP:PORT`, settings'
    /// `accounts.dnsServer`: a company's own, or the tests' on loopback).
    pub fn new(server: Option<&str>) -> Result<Resolver, String> {
        let provider = TokioRuntimeProvider::default();
        let mut builder = match server {
            Some(at) => {
                let address: std::net::SocketAddr = at
                    .parse()
                    .map_err(|_| format!("accounts.dnsServer {at:?}: give IP:PORT"))?;
                let mut name_server = NameServerConfig::udp_and_tcp(address.ip());
                for connection in &mut name_server.connections {
                    connection.port = address.port();
                }
                let config = ResolverConfig::from_parts(None, vec![], vec![name_server]);
                TokioResolver::builder_with_config(config, provider)
            }
            None => TokioResolver::builder(provider)
                .map_err(|e| format!("the system's DNS settings: {e}"))?,
        };
        let options = builder.options_mut();
        options.timeout = Duration::from_secs(3);
        options.attempts = 1;
        builder.build().map(Resolver).map_err(|e| e.to_string())
    }

    /// The targets of `name`'s SRV records, best first: lowest priority, then highest weight
    /// (RFC 2782 picks by weight at random; a person choosing once wants the same answer each
    /// time). None when there are none, or when the domain says the service is not offered (a
    /// single record whose target is `.`, RFC 2782).
    async fn srv(&self, name: &str) -> Vec<(String, u16)> {
        let Ok(lookup) = self.0.srv_lookup(name).await else {
            return Vec::new();
        };
        let mut records: Vec<_> = lookup
            .answers()
            .iter()
            .filter_map(|r| match &r.data {
                RData::SRV(srv) => Some(srv.clone()),
                _ => None,
            })
            .collect();
        records.sort_by_key(|s| (s.priority, std::cmp::Reverse(s.weight)));
        records
            .into_iter()
            .map(|s| (s.target.to_utf8().trim_end_matches('.').to_string(), s.port))
            .filter(|(host, port)| !host.is_empty() && *port != 0)
            .collect()
    }

    async fn txt(&self, name: &str) -> Vec<String> {
        let Ok(lookup) = self.0.txt_lookup(name).await else {
            return Vec::new();
        };
        lookup
            .answers()
            .iter()
            .filter_map(|r| match &r.data {
                RData::TXT(txt) => Some(
                    txt.txt_data
                        .iter()
                        .map(|part| String::from_utf8_lossy(part).into_owned())
                        .collect::<String>(),
                ),
                _ => None,
            })
            .collect()
    }

    /// The first of `services` (label, security) the domain publishes.
    async fn first_of(&self, domain: &str, services: [(&str, Security); 2]) -> Option<Service> {
        for (label, security) in services {
            if let Some((host, port)) = self
                .srv(&format!("{label}.{domain}."))
                .await
                .into_iter()
                .next()
            {
                return Some(Service {
                    host,
                    port,
                    security,
                });
            }
        }
        None
    }

    /// The IMAP and submission servers `domain` publishes (RFC 6186), implicit TLS first.
    pub async fn mail(&self, domain: &str) -> Option<(Service, Service)> {
        let imap = self
            .first_of(
                domain,
                [
                    ("_imaps._tcp", Security::Tls),
                    ("_imap._tcp", Security::Starttls),
                ],
            )
            .await?;
        let smtp = self
            .first_of(
                domain,
                [
                    ("_submissions._tcp", Security::Tls),
                    ("_submission._tcp", Security::Starttls),
                ],
            )
            .await?;
        Some((imap, smtp))
    }

    /// The CalDAV server `domain` publishes over TLS (RFC 6764 §3), as a URL: its TXT record's
    /// `path=` when there is one, else the root (where `/.well-known/caldav` is asked).
    pub async fn caldav(&self, domain: &str) -> Option<String> {
        let name = format!("_caldavs._tcp.{domain}.");
        let (host, port) = self.srv(&name).await.into_iter().next()?;
        let path = self
            .txt(&name)
            .await
            .into_iter()
            .find_map(|t| t.strip_prefix("path=").map(String::from))
            .filter(|p| p.starts_with('/'))
            .unwrap_or_else(|| "/".into());
        let mut url = url::Url::parse(&format!("https://{host}/")).ok()?;
        url.set_port((port != 443).then_some(port)).ok()?;
        url.set_path(&path);
        Some(url.to_string())
    }
}
