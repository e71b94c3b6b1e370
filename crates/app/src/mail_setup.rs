//! Adding a mail account is typing the address: its settings come from Cowork's built-in ones
//! for the big providers (`presets/mail/*.xml`), else the domain's own autoconfig file, else
//! Thunderbird's ISP database, else the domain's DNS SRV records (RFC 6186, `srv.rs`), else a
//! guess at the usual host names — each step reported as it goes. The files are all the
//! Thunderbird autoconfig format (clientConfig 1.1), so one reader serves them all; the
//! built-in ones are files of that format too. A provider's calendars come with its settings
//! (the `<calendar>` element), or from the domain's `_caldavs._tcp` record (RFC 6764).
//!
//! What a source says is content, not the person's word: the settings found (hosts, where to
//! sign in) are shown to the person, who confirms them before any password or token is sent.

use crate::App;
use crate::srv::{Resolver, Service};
use cowork_store::accounts::{AccountConfig, Auth, OauthEndpoints, Security};
use std::collections::BTreeMap;
use std::time::Duration;

/// `accounts` in settings.json.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AccountsSettings {
    /// Thunderbird's ISP database, or an organisation's own copy of it (a URL ending in `/`).
    pub autoconfig_url: Option<String>,
    /// The OAuth client Cowork is registered as, by issuer (`accounts.google.com`, or a URL).
    pub oauth_clients: BTreeMap<String, OauthClient>,
    /// The DNS server asked for SRV records (`IP:PORT`); default the system's.
    pub dns_server: Option<String>,
}

#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OauthClient {
    pub client_id: String,
    /// The mail servers this issuer's tokens may go to, for an issuer Cowork has no built-in
    /// settings for (a company's own sign-in): settings found on the network that name other
    /// servers do not get its sign-in.
    #[serde(default)]
    pub hosts: Vec<String>,
}

impl cowork_store::settings::Section for AccountsSettings {
    const KEY: &'static str = "accounts";
}

const ISPDB: &str = "https://autoconfig.thunderbird.net/v1.1/";

/// Cowork's own settings for the providers most people use, by file.
const PRESETS: [&str; 7] = [
    include_str!("../presets/mail/gmail.xml"),
    include_str!("../presets/mail/outlook.xml"),
    include_str!("../presets/mail/icloud.xml"),
    include_str!("../presets/mail/fastmail.xml"),
    include_str!("../presets/mail/yahoo.xml"),
    include_str!("../presets/mail/qq.xml"),
    include_str!("../presets/mail/163.xml"),
];

/// What was found for an address, for the person to confirm.
#[derive(Clone, Debug, PartialEq)]
pub struct MailSetup {
    pub provider: String,
    /// Where the settings came from (a URL, or Cowork's built-in settings).
    pub found_by: String,
    /// Ready to save: hosts, ports, security, login name and how to sign in.
    pub config: AccountConfig,
    /// What the person must know to sign in with a password (an app password, an
    /// authorization code), with the page that makes one.
    pub password_note: Option<(String, Option<String>)>,
    /// The provider's calendars as an account of their own (CalDAV, or Microsoft Graph), when
    /// the settings name them: a second sign-in, for the calendar's own scopes.
    pub calendar: Option<AccountConfig>,
}

/// A `<calendar>` of a clientConfig document (Thunderbird's `type="caldav"`, or Cowork's
/// `type="microsoft-graph"`), read.
#[derive(Debug)]
struct CalendarEntry {
    graph: bool,
    url: String,
    username: String,
    /// The scopes of its own sign-in (Cowork's `<scope>` inside it); `None`: a password.
    oauth_scopes: Option<Vec<String>>,
}

/// One server of a clientConfig document.
#[derive(Debug)]
struct ServerEntry {
    host: String,
    port: u16,
    security: Security,
    username: String,
    oauth: bool,
    /// Takes a password at all (Microsoft's servers take OAuth only).
    password: bool,
}

/// A clientConfig document, read.
#[derive(Debug)]
struct ClientConfig {
    domains: Vec<String>,
    provider: String,
    imap: ServerEntry,
    smtp: ServerEntry,
    /// issuer, scopes, and the endpoints when given.
    oauth: Option<(String, Vec<String>, Option<OauthEndpoints>)>,
    note: Option<(String, Option<String>)>,
    calendar: Option<CalendarEntry>,
}

fn calendar_entry(root: roxmltree::Node, email: &str) -> Option<CalendarEntry> {
    let node = root.children().find(|c| c.has_tag_name("calendar"))?;
    let graph = match node.attribute("type")? {
        "caldav" => false,
        "microsoft-graph" => true,
        _ => return None,
    };
    let url = child_text(node, "serverURL")?.replace("%EMAILADDRESS%", email);
    let username = child_text(node, "username")
        .unwrap_or("%EMAILADDRESS%")
        .replace("%EMAILADDRESS%", email);
    let oauth_scopes = (child_text(node, "authentication") == Some("OAuth2")).then(|| {
        let scopes = child_text(node, "scope").unwrap_or_default();
        scopes.split_whitespace().map(String::from).collect()
    });
    Some(CalendarEntry {
        graph,
        url,
        username,
        oauth_scopes,
    })
}

fn child_text<'a>(node: roxmltree::Node<'a, 'a>, name: &str) -> Option<&'a str> {
    node.children()
        .find(|c| c.has_tag_name(name))
        .and_then(|c| c.text())
        .map(str::trim)
}

/// The first server of `kind` (`incomingServer type="imap"`, `outgoingServer type="smtp"`).
fn server(provider: roxmltree::Node, tag: &str, kind: &str, email: &str) -> Option<ServerEntry> {
    let node = provider
        .children()
        .find(|c| c.has_tag_name(tag) && c.attribute("type") == Some(kind))?;
    let security = match child_text(node, "socketType")? {
        "SSL" => Security::Tls,
        "STARTTLS" => Security::Starttls,
        "plain" => Security::Plain,
        _ => return None,
    };
    let local = email.split('@').next().unwrap_or(email);
    let username = child_text(node, "username")
        .unwrap_or("%EMAILADDRESS%")
        .replace("%EMAILADDRESS%", email)
        .replace("%EMAILLOCALPART%", local);
    let methods: Vec<&str> = node
        .children()
        .filter(|c| c.has_tag_name("authentication"))
        .filter_map(|c| c.text())
        .map(str::trim)
        .collect();
    Some(ServerEntry {
        host: child_text(node, "hostname")?.to_string(),
        port: child_text(node, "port")?.parse().ok()?,
        security,
        username,
        oauth: methods.contains(&"OAuth2"),
        password: methods.is_empty() || methods.iter().any(|m| m.starts_with("password-")),
    })
}

/// Reads a clientConfig document for `email`; `None` when it lacks an IMAP or SMTP server.
fn parse(xml: &str, email: &str) -> Option<ClientConfig> {
    let doc = roxmltree::Document::parse(xml).ok()?;
    let root = doc.root_element();
    let provider = root.children().find(|c| c.has_tag_name("emailProvider"))?;
    let oauth = root.children().find(|c| c.has_tag_name("oAuth2")).map(|o| {
        let endpoints = child_text(o, "authURL")
            .zip(child_text(o, "tokenURL"))
            .map(|(a, t)| OauthEndpoints {
                authorization: a.into(),
                token: t.into(),
                // Cowork's addition to the format (other readers ignore it).
                revocation: child_text(o, "revokeURL").map(String::from),
            });
        let scopes = child_text(o, "scope").unwrap_or_default();
        let issuer = child_text(o, "issuer").unwrap_or_default();
        (
            issuer.to_string(),
            scopes.split_whitespace().map(String::from).collect(),
            endpoints,
        )
    });
    let note = root
        .children()
        .find(|c| c.has_tag_name("enable"))
        .and_then(|e| {
            let text = child_text(e, "instruction")?;
            // A page to open from content is an https:// page, nothing else (no javascript:, file:).
            let page = e
                .attribute("visiturl")
                .filter(|u| u.starts_with("https://"));
            Some((text.to_string(), page.map(String::from)))
        });
    Some(ClientConfig {
        domains: provider
            .children()
            .filter(|c| c.has_tag_name("domain"))
            .filter_map(|c| c.text())
            .map(|d| d.trim().to_ascii_lowercase())
            .collect(),
        provider: child_text(provider, "displayName")
            .unwrap_or_default()
            .to_string(),
        imap: server(provider, "incomingServer", "imap", email)?,
        smtp: server(provider, "outgoingServer", "smtp", email)?,
        oauth,
        note,
        calendar: calendar_entry(root, email),
    })
}

/// An issuer as a URL: a bare host name (as the ISP database writes them) is HTTPS.
fn issuer_url(issuer: &str) -> String {
    if issuer.contains("://") {
        issuer.trim_end_matches('/').to_string()
    } else {
        format!("https://{issuer}")
    }
}

/// Where the settings came from: Cowork's own files, or content fetched from the network.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    BuiltIn,
    Fetched,
}

impl ClientConfig {
    /// The account these settings make. OAuth when both servers take it and Cowork has a
    /// client registered at that issuer; else a password (with the provider's note, or why).
    fn setup(
        self,
        email: &str,
        found_by: String,
        settings: &AccountsSettings,
        source: Source,
    ) -> MailSetup {
        let oauth = self
            .oauth_auth(settings, source)
            .filter(|_| self.imap.oauth && self.smtp.oauth);
        let (auth, refused) = match oauth {
            Some(Ok(auth)) => (auth, None),
            Some(Err(why)) => (Auth::Password, Some(why)),
            None => (Auth::Password, None),
        };
        let calendar = self.calendar_account(email, &auth, source);
        let password_note = match (&auth, refused, !self.imap.password) {
            (Auth::Oauth { .. }, ..) => None,
            (_, Some(why), _) => Some((why, None)),
            (_, None, true) => Some((
                format!(
                    "{} signs in only through its own page (OAuth), and this Cowork has no client registered there: set accounts.oauthClients in settings.json (docs/accounts.md)",
                    self.provider
                ),
                None,
            )),
            (_, None, false) => self.note,
        };
        MailSetup {
            provider: self.provider,
            found_by,
            calendar,
            config: AccountConfig::Mail {
                email: email.to_string(),
                display_name: None,
                username: self.imap.username,
                imap_host: self.imap.host,
                imap_port: self.imap.port,
                imap_security: self.imap.security,
                smtp_host: self.smtp.host,
                smtp_port: self.smtp.port,
                smtp_security: self.smtp.security,
                auth,
            },
            password_note,
        }
    }

    /// The calendar account these settings name. Its sign-in is the mail's issuer and client
    /// with the calendar's scopes; a fetched file's calendar is taken only with a password over
    /// HTTPS or to this machine (where tokens go is not content's to say), and shown like the rest.
    fn calendar_account(
        &self,
        email: &str,
        mail_auth: &Auth,
        source: Source,
    ) -> Option<AccountConfig> {
        let entry = self.calendar.as_ref()?;
        if source == Source::Fetched && !self.is_providers(&entry.url, email) {
            return None;
        }
        let auth = match (&entry.oauth_scopes, mail_auth, source) {
            (None, ..) if fetchable(&entry.url) && !entry.graph => Auth::Password,
            (None, ..) => return None,
            (
                Some(scopes),
                Auth::Oauth {
                    issuer,
                    client_id,
                    endpoints,
                    ..
                },
                Source::BuiltIn,
            ) => Auth::Oauth {
                issuer: issuer.clone(),
                client_id: client_id.clone(),
                scopes: scopes.clone(),
                endpoints: endpoints.clone(),
            },
            (Some(_), ..) => return None,
        };
        let (url, username) = (entry.url.clone(), entry.username.clone());
        Some(if entry.graph {
            AccountConfig::MicrosoftGraph {
                url,
                username,
                auth,
            }
        } else {
            AccountConfig::Caldav {
                url,
                username,
                auth,
            }
        })
    }

    /// Whether `url` is at the address's own domain or one of these mail servers: the one
    /// password goes nowhere else.
    fn is_providers(&self, url: &str, email: &str) -> bool {
        let domain = email.rsplit_once('@').map_or("", |(_, d)| d);
        same_provider(url, domain, [&self.imap.host, &self.smtp.host])
    }

    /// The OAuth sign-in these settings ask for, when Cowork has a client at that issuer. A
    /// fetched file may not say where tokens are made or where they go: the endpoints come from
    /// Cowork's built-in settings for that issuer, else from the issuer's own metadata; and a
    /// token of a provider Cowork knows goes only to that provider's own servers.
    fn oauth_auth(
        &self,
        settings: &AccountsSettings,
        source: Source,
    ) -> Option<Result<Auth, String>> {
        let (issuer, scopes, endpoints) = self.oauth.as_ref()?;
        let issuer = issuer_url(issuer);
        let client = settings
            .oauth_clients
            .iter()
            .find(|(key, _)| issuer_url(key) == issuer)?
            .1;
        let client_id = client.client_id.clone();
        let known = PRESETS
            .iter()
            .filter_map(|xml| parse(xml, "someone@example.org"))
            .find(|p| {
                p.oauth
                    .as_ref()
                    .is_some_and(|(i, ..)| issuer_url(i) == issuer)
            });
        let ours = [&self.imap.host, &self.smtp.host];
        let elsewhere = |allowed: &[&String], whose: &str| {
            (!ours.iter().all(|h| allowed.contains(h))).then(|| {
                format!(
                    "these settings would send {issuer}'s sign-in to {} and {}, which are not {whose} servers: refused — give the password the servers take, or check the address",
                    self.imap.host, self.smtp.host
                )
            })
        };
        // What the fetched file cannot choose comes from Cowork's own settings for the issuer.
        let (endpoints, scopes) = match (&known, source) {
            (_, Source::BuiltIn) => (endpoints.clone(), scopes.clone()),
            (Some(known), Source::Fetched) => {
                let theirs = [&known.imap.host, &known.smtp.host];
                if let Some(why) = elsewhere(&theirs, &format!("{}'s", known.provider)) {
                    return Some(Err(why));
                }
                let (_, scopes, endpoints) = known.oauth.clone()?;
                (endpoints, scopes)
            }
            (None, Source::Fetched) => {
                let allowed: Vec<&String> = client.hosts.iter().collect();
                if let Some(why) = elsewhere(&allowed, "the accounts.oauthClients entry's (hosts)")
                {
                    return Some(Err(why));
                }
                (None, scopes.clone())
            }
        };
        Some(Ok(Auth::Oauth {
            issuer,
            client_id,
            scopes,
            endpoints,
        }))
    }
}

/// Whether `url`'s host is `domain`, under it, or one of `mail_hosts`.
fn same_provider(url: &str, domain: &str, mail_hosts: [&str; 2]) -> bool {
    let Some(host) = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    else {
        return false;
    };
    let domain = domain.to_ascii_lowercase();
    host == domain
        || host.ends_with(&format!(".{domain}"))
        || mail_hosts.iter().any(|m| m.eq_ignore_ascii_case(&host))
}

/// Cowork's built-in settings for `domain`, if it has some.
fn preset(email: &str, domain: &str) -> Option<ClientConfig> {
    PRESETS
        .iter()
        .filter_map(|xml| parse(xml, email))
        .find(|c| c.domains.iter().any(|d| d == domain))
}

/// HTTPS, or plain HTTP to this machine only (a local test or a company's own server here).
fn fetchable(url: &str) -> bool {
    url.starts_with("https://")
        || url::Url::parse(url).is_ok_and(|u| {
            u.scheme() == "http"
                && u.host_str()
                    .is_some_and(cowork_store::accounts::is_loopback)
        })
}

async fn fetch(http: &reqwest::Client, url: &str) -> Result<String, String> {
    if !fetchable(url) {
        return Err("not HTTPS".into());
    }
    let response = http.get(url).send().await.map_err(|e| {
        // The innermost cause ("failed to lookup address", "connection refused"): the URL
        // was just shown.
        let mut cause: &dyn std::error::Error = &e;
        while let Some(inner) = cause.source() {
            cause = inner;
        }
        cause.to_string()
    })?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status().as_u16()));
    }
    response.text().await.map_err(|e| e.to_string())
}

/// Whether something answers at `host:port` (the last step's guesses).
async fn answers(host: &str, port: u16) -> bool {
    let connect = tokio::net::TcpStream::connect((host, port));
    matches!(
        tokio::time::timeout(Duration::from_secs(3), connect).await,
        Ok(Ok(_))
    )
}

/// A password account at these servers, found by `found_by`.
fn password_setup(
    email: &str,
    provider: &str,
    found_by: String,
    imap: Service,
    smtp: Service,
) -> MailSetup {
    MailSetup {
        provider: provider.to_string(),
        found_by,
        config: AccountConfig::Mail {
            email: email.to_string(),
            display_name: None,
            username: email.to_string(),
            imap_host: imap.host,
            imap_port: imap.port,
            imap_security: imap.security,
            smtp_host: smtp.host,
            smtp_port: smtp.port,
            smtp_security: smtp.security,
            auth: Auth::Password,
        },
        password_note: None,
        calendar: None,
    }
}

/// The usual host names, tried in turn: `imap.DOMAIN`/`smtp.DOMAIN`, then `mail.DOMAIN`.
async fn guess(
    email: &str,
    domain: &str,
    report: &mut (dyn FnMut(String) + Send),
) -> Option<MailSetup> {
    for (imap, smtp) in [
        (format!("imap.{domain}"), format!("smtp.{domain}")),
        (format!("mail.{domain}"), format!("mail.{domain}")),
    ] {
        report(format!("trying {imap}:993 and {smtp}:465/587…"));
        if !answers(&imap, 993).await {
            continue;
        }
        let smtp_at = if answers(&smtp, 465).await {
            Some((465, Security::Tls))
        } else if answers(&smtp, 587).await {
            Some((587, Security::Starttls))
        } else {
            None
        };
        let Some((port, security)) = smtp_at else {
            continue;
        };
        let found_by = format!("a guess: {imap} and {smtp} answer");
        let imap = Service {
            host: imap,
            port: 993,
            security: Security::Tls,
        };
        let smtp = Service {
            host: smtp,
            port,
            security,
        };
        return Some(password_setup(email, domain, found_by, imap, smtp));
    }
    None
}

/// The servers the domain publishes in DNS (RFC 6186). Servers outside the domain are said to
/// be so: RFC 6186 §6 asks that the person confirm those.
async fn from_dns(
    email: &str,
    domain: &str,
    dns: &Resolver,
    report: &mut (dyn FnMut(String) + Send),
) -> Option<MailSetup> {
    report(format!(
        "asking DNS for _imaps._tcp.{domain} and _submissions._tcp.{domain} (RFC 6186)…"
    ));
    let Some((imap, smtp)) = dns.mail(domain).await else {
        report("  none published".into());
        return None;
    };
    let suffix = format!(".{domain}");
    for host in [&imap.host, &smtp.host] {
        if !(host.ends_with(&suffix) || host == domain) {
            report(format!(
                "  note: {host} is not under {domain}: check it is your provider's"
            ));
        }
    }
    let found_by = format!("{domain}'s DNS (SRV records)");
    Some(password_setup(email, domain, found_by, imap, smtp))
}

/// Where the settings for `email` are looked for, in order, after the built-in ones.
fn sources(email: &str, domain: &str, settings: &AccountsSettings) -> Vec<String> {
    let ispdb = settings.autoconfig_url.as_deref().unwrap_or(ISPDB);
    let query: String = url::form_urlencoded::byte_serialize(email.as_bytes()).collect();
    vec![
        format!("https://autoconfig.{domain}/mail/config-v1.1.xml?emailaddress={query}"),
        format!("https://{domain}/.well-known/autoconfig/mail/config-v1.1.xml"),
        format!("{ispdb}{domain}"),
    ]
}

/// Finds the settings for `email`, reporting each step; an error says what was tried.
pub async fn find(
    email: &str,
    settings: &AccountsSettings,
    report: &mut (dyn FnMut(String) + Send),
) -> Result<MailSetup, String> {
    let (_, domain) = email
        .rsplit_once('@')
        .filter(|(local, domain)| !local.is_empty() && domain.contains('.'))
        .ok_or_else(|| format!("{email:?} is not an email address"))?;
    let domain = domain.to_ascii_lowercase();
    if let Some(found) = preset(email, &domain) {
        report(format!(
            "{domain}: Cowork's built-in settings ({})",
            found.provider
        ));
        let by = format!("Cowork's built-in settings for {domain}");
        return Ok(found.setup(email, by, settings, Source::BuiltIn));
    }
    let dns = Resolver::new(settings.dns_server.as_deref())
        .map_err(|why| report(format!("DNS: {why}")))
        .ok();
    let mut setup = from_network(email, &domain, settings, dns.as_ref(), report).await?;
    // A calendar the domain publishes (RFC 6764), for an account that signs in with a password.
    if let Some(dns) = dns.as_ref().filter(|_| setup.calendar.is_none())
        && *setup.config.auth() == Auth::Password
    {
        report(format!("asking DNS for _caldavs._tcp.{domain} (RFC 6764)…"));
        setup.calendar = dns_calendar(dns, email, &domain, &setup.config, report).await;
    }
    Ok(setup)
}

/// The calendars `domain` publishes (RFC 6764), for the mail account `mail`: only at the domain
/// itself or the mail's own servers, where the one password may go.
async fn dns_calendar(
    dns: &Resolver,
    email: &str,
    domain: &str,
    mail: &AccountConfig,
    report: &mut (dyn FnMut(String) + Send),
) -> Option<AccountConfig> {
    let Some(url) = dns.caldav(domain).await else {
        report("  none published".into());
        return None;
    };
    let AccountConfig::Mail {
        imap_host,
        smtp_host,
        ..
    } = mail
    else {
        return None;
    };
    if !same_provider(&url, domain, [imap_host, smtp_host]) {
        report(format!(
            "  {url} is neither at {domain} nor at its mail servers: not offered"
        ));
        return None;
    }
    Some(AccountConfig::Caldav {
        url,
        username: email.to_string(),
        auth: Auth::Password,
    })
}

/// The settings found on the network: the domain's autoconfig, the ISP database, the domain's
/// DNS, then a guess.
async fn from_network(
    email: &str,
    domain: &str,
    settings: &AccountsSettings,
    dns: Option<&Resolver>,
    report: &mut (dyn FnMut(String) + Send),
) -> Result<MailSetup, String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(8))
        .connect_timeout(Duration::from_secs(5))
        // A redirect is followed only to where a first address could have been (HTTPS).
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() < 3 && fetchable(attempt.url().as_str()) {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }))
        .build()
        .map_err(|e| e.to_string())?;
    for url in sources(email, domain, settings) {
        report(format!("looking at {url}…"));
        match fetch(&http, &url).await {
            Ok(xml) => match parse(&xml, email) {
                Some(found) => return Ok(found.setup(email, url, settings, Source::Fetched)),
                None => report("  not a usable autoconfig file (no IMAP and SMTP server)".into()),
            },
            Err(why) => report(format!("  nothing there ({why})")),
        }
    }
    if let Some(dns) = dns
        && let Some(found) = from_dns(email, domain, dns, report).await
    {
        return Ok(found);
    }
    guess(email, domain, report).await.ok_or_else(|| {
        format!(
            "no settings found for {domain}: give the servers yourself (--imap HOST[:PORT] --smtp HOST[:PORT]); your provider's help pages name them"
        )
    })
}

impl App {
    /// The settings for `email` (see [`find`]), with this app's `accounts` settings.
    pub async fn find_mail_setup(
        &self,
        email: &str,
        report: &mut (dyn FnMut(String) + Send),
    ) -> Result<MailSetup, String> {
        use cowork_store::settings::Section;
        let settings = AccountsSettings::load(&self.store.dir().settings_path())?;
        find(email, &settings, report).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(email: &str, settings: &AccountsSettings) -> MailSetup {
        let domain = email.rsplit_once('@').unwrap().1;
        preset(email, domain)
            .unwrap()
            .setup(email, "built-in".into(), settings, Source::BuiltIn)
    }

    #[test]
    fn every_preset_reads_and_the_address_picks_it() {
        assert_eq!(PRESETS.iter().filter_map(|x| parse(x, "a@b.c")).count(), 7);
        for (email, imap) in [
            ("a@gmail.com", "imap.gmail.com"),
            ("a@hotmail.com", "outlook.office365.com"),
            ("a@me.com", "imap.mail.me.com"),
            ("a@fastmail.com", "imap.fastmail.com"),
            ("a@yahoo.com", "imap.mail.yahoo.com"),
            ("a@foxmail.com", "imap.qq.com"),
            ("a@163.com", "imap.163.com"),
        ] {
            let AccountConfig::Mail {
                imap_host,
                imap_security,
                username,
                ..
            } = found(email, &AccountsSettings::default()).config
            else {
                unreachable!()
            };
            assert_eq!(
                (imap_host.as_str(), imap_security),
                (imap, Security::Tls),
                "{email}"
            );
            assert_eq!(username, email);
        }
        assert!(preset("a@example.com", "example.com").is_none());
    }

    #[test]
    fn oauth_needs_a_registered_client_and_app_password_providers_say_so() {
        let gmail = found("a@gmail.com", &AccountsSettings::default());
        assert_eq!(*gmail.config.auth(), Auth::Password);
        assert!(gmail.password_note.unwrap().0.contains("app password"));
        let outlook = found("a@outlook.com", &AccountsSettings::default());
        assert!(outlook.password_note.unwrap().0.contains("oauthClients"));
        let registered = google_registered();
        let gmail = found("a@gmail.com", &registered);
        let Auth::Oauth {
            issuer,
            client_id,
            endpoints,
            scopes,
        } = gmail.config.auth()
        else {
            panic!("{gmail:?}")
        };
        assert_eq!(
            (issuer.as_str(), client_id.as_str()),
            ("https://accounts.google.com", "id-1")
        );
        assert_eq!(scopes, &["https://mail.google.com/"]);
        assert!(endpoints.as_ref().unwrap().token.starts_with("https://"));
        assert_eq!(
            endpoints.as_ref().unwrap().revocation.as_deref(),
            Some("https://oauth2.googleapis.com/revoke")
        );
        assert_eq!(gmail.password_note, None);
        assert!(
            found("a@qq.com", &registered)
                .password_note
                .unwrap()
                .0
                .contains("授权码")
        );
    }

    #[test]
    fn sources_follow_thunderbirds_order_and_only_https_is_fetched() {
        let urls = sources(
            "a+b@example.org",
            "example.org",
            &AccountsSettings::default(),
        );
        assert_eq!(
            urls,
            [
                "https://autoconfig.example.org/mail/config-v1.1.xml?emailaddress=a%2Bb%40example.org",
                "https://example.org/.well-known/autoconfig/mail/config-v1.1.xml",
                "https://autoconfig.thunderbird.net/v1.1/example.org",
            ]
        );
        assert!(fetchable("http://127.0.0.1:8080/v1.1/x"));
        assert!(!fetchable(
            "http://autoconfig.example.org/mail/config-v1.1.xml"
        ));
        assert!(!fetchable("file:///etc/passwd"));
    }

    /// A clientConfig as a fetched file could say it.
    fn fetched_xml(host: &str, issuer: &str, auth_url: &str, visit: &str) -> String {
        let server = |tag: &str, kind: &str| {
            format!(
                "<{tag} type=\"{kind}\"><hostname>{host}</hostname><port>993</port><socketType>SSL</socketType>\
                 <authentication>OAuth2</authentication><authentication>password-cleartext</authentication></{tag}>"
            )
        };
        format!(
            "<clientConfig><emailProvider id=\"x\"><domain>example.org</domain><displayName>X</displayName>{}{}</emailProvider>\
             <oAuth2><issuer>{issuer}</issuer><scope>https://mail.google.com/</scope><authURL>{auth_url}</authURL>\
             <tokenURL>{auth_url}</tokenURL></oAuth2><enable visiturl=\"{visit}\"><instruction>note</instruction></enable></clientConfig>",
            server("incomingServer", "imap"),
            server("outgoingServer", "smtp")
        )
    }

    /// A file read as if fetched for a@example.org.
    fn as_fetched(xml: &str, settings: &AccountsSettings) -> MailSetup {
        parse(xml, "a@example.org").unwrap().setup(
            "a@example.org",
            "fetched".into(),
            settings,
            Source::Fetched,
        )
    }

    fn google_registered() -> AccountsSettings {
        AccountsSettings {
            oauth_clients: [(
                "accounts.google.com".to_string(),
                OauthClient {
                    client_id: "id-1".into(),
                    hosts: vec![],
                },
            )]
            .into(),
            ..Default::default()
        }
    }

    #[test]
    fn fetched_settings_cannot_say_where_tokens_are_made_or_send_a_known_providers_token_elsewhere()
    {
        let settings = google_registered();
        let fetched = |host: &str, auth_url: &str| {
            as_fetched(
                &fetched_xml(host, "accounts.google.com", auth_url, "javascript:alert(1)"),
                &settings,
            )
        };
        // Google's sign-in sent to another server: no OAuth, and the person is told why.
        let elsewhere = fetched(
            "imap.evil.example",
            "https://accounts.google.com/o/oauth2/v2/auth",
        );
        assert_eq!(*elsewhere.config.auth(), Auth::Password);
        assert!(elsewhere.password_note.unwrap().0.contains("refused"));
        // Google's servers, endpoints at another host: the built-in endpoints are used.
        let phished = fetched("imap.gmail.com", "https://evil.example/oauth");
        let Auth::Oauth { endpoints, .. } = phished.config.auth() else {
            panic!("{phished:?}")
        };
        let endpoints = endpoints.as_ref().unwrap();
        assert!(
            endpoints
                .authorization
                .starts_with("https://accounts.google.com/")
        );
        assert!(!endpoints.token.contains("evil"));
        // An issuer Cowork has no settings for: its own metadata says where (discovery).
        let mut own = settings.clone();
        own.oauth_clients.insert(
            "https://sso.example.org".into(),
            OauthClient {
                client_id: "c".into(),
                hosts: vec!["mail.example.org".into(), "127.0.0.1".into()],
            },
        );
        let company = as_fetched(
            &fetched_xml(
                "mail.example.org",
                "https://sso.example.org",
                "https://evil.example/x",
                "https://help.example.org/",
            ),
            &own,
        );
        let Auth::Oauth {
            endpoints, issuer, ..
        } = company.config.auth()
        else {
            panic!("{company:?}")
        };
        assert_eq!(
            (issuer.as_str(), endpoints),
            ("https://sso.example.org", &None)
        );
        // The same company sign-in, sent by a fetched file to servers the person did not name.
        let diverted = as_fetched(
            &fetched_xml("imap.evil.example", "https://sso.example.org", "x:y", "x:y"),
            &own,
        );
        assert_eq!(*diverted.config.auth(), Auth::Password);
        assert!(diverted.password_note.unwrap().0.contains("refused"));
    }

    #[test]
    fn providers_calendars_come_with_their_own_sign_in() {
        let mut registered = google_registered();
        registered.oauth_clients.insert(
            "login.microsoftonline.com".into(),
            OauthClient {
                client_id: "ms-1".into(),
                hosts: vec![],
            },
        );
        let gmail = found("a@gmail.com", &registered).calendar.unwrap();
        let AccountConfig::Caldav { url, auth, .. } = &gmail else {
            panic!("{gmail:?}")
        };
        assert_eq!(
            url,
            "https://apidata.googleusercontent.com/caldav/v2/a@gmail.com/user"
        );
        let Auth::Oauth { scopes, issuer, .. } = auth else {
            panic!("{auth:?}")
        };
        assert_eq!(
            (issuer.as_str(), scopes.as_slice()),
            (
                "https://accounts.google.com",
                &["https://www.googleapis.com/auth/calendar".to_string()][..]
            )
        );
        // Google's calendars take OAuth only: no client registered, no calendar offered.
        let unregistered = found("a@gmail.com", &AccountsSettings::default());
        assert_eq!(unregistered.calendar, None);
        let outlook = found("a@outlook.com", &registered).calendar.unwrap();
        assert!(
            matches!(&outlook, AccountConfig::MicrosoftGraph { url, auth: Auth::Oauth { client_id, .. }, .. }
                if url == "https://graph.microsoft.com/v1.0" && client_id == "ms-1"),
            "{outlook:?}"
        );
        let icloud = found("a@icloud.com", &AccountsSettings::default()).calendar;
        assert!(
            matches!(
                &icloud,
                Some(AccountConfig::Caldav {
                    auth: Auth::Password,
                    ..
                })
            ),
            "{icloud:?}"
        );
        assert_eq!(found("a@qq.com", &registered).calendar, None);
    }

    /// A fetched file may name a CalDAV server for a password over HTTPS, nothing more: not
    /// where a token goes, not plain HTTP.
    #[test]
    fn a_fetched_calendar_is_only_a_password_over_https() {
        let settings = google_registered();
        let with_calendar = |kind: &str, auth: &str, url: &str| {
            let calendar = format!(
                "<calendar type=\"{kind}\"><authentication>{auth}</authentication><scope>x</scope><serverURL>{url}</serverURL></calendar></clientConfig>"
            );
            let xml = fetched_xml(
                "imap.gmail.com",
                "accounts.google.com",
                "https://accounts.google.com/o/oauth2/v2/auth",
                "https://help.example.org/",
            )
            .replace("</clientConfig>", &calendar);
            as_fetched(&xml, &settings).calendar
        };
        let dav = with_calendar("caldav", "http-basic", "https://dav.example.org/");
        assert!(
            matches!(
                dav,
                Some(AccountConfig::Caldav {
                    auth: Auth::Password,
                    ..
                })
            ),
            "{dav:?}"
        );
        assert_eq!(
            with_calendar("caldav", "OAuth2", "https://dav.example.org/"),
            None
        );
        // The one password goes only to the address's domain or its mail servers.
        assert_eq!(
            with_calendar("caldav", "http-basic", "https://dav.evil.example/"),
            None
        );
        assert_eq!(
            with_calendar("caldav", "http-basic", "http://dav.example.org/"),
            None
        );
        assert_eq!(
            with_calendar("microsoft-graph", "OAuth2", "https://evil.example/"),
            None
        );
    }

    proptest::proptest! {
        /// Whatever a fetched file holds, reading it never panics, a page it names to open is
        /// an https:// page or nothing, and its own endpoints are never used.
        #[test]
        fn any_fetched_file_is_read_safely(
            host in "[a-z0-9.\\-]{1,30}",
            issuer in "(https?://)?[a-z0-9.:/\\-]{1,30}",
            auth_url in "[a-zA-Z]{1,10}:[ -~]{0,30}",
            visit in "[a-zA-Z]{1,10}:[ -~]{0,30}",
        ) {
            let escape = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;").replace('"', "&quot;");
            let xml = fetched_xml(&escape(&host), &escape(&issuer), &escape(&auth_url), &escape(&visit));
            let mut settings = google_registered();
            settings.oauth_clients.insert(issuer.clone(), OauthClient { client_id: "c".into(), hosts: vec!["mail.example.org".into(), "127.0.0.1".into()] });
            if let Some(found) = parse(&xml, "a@example.org") {
                let setup = found.setup("a@example.org", "fetched".into(), &settings, Source::Fetched);
                if let Some((_, Some(page))) = &setup.password_note {
                    proptest::prop_assert!(page.starts_with("https://"));
                }
                if let Auth::Oauth { endpoints: Some(e), .. } = setup.config.auth() {
                    proptest::prop_assert!(!e.authorization.contains(&auth_url) || auth_url.starts_with("https://accounts.google.com"));
                }
            }
        }
    }
}
