//! What an authorization server publishes about itself (RFC 8414 §3, OpenID Connect Discovery
//! 1.0 §4). Hand-written because `oauth2` does no discovery and the fetch is one GET; the
//! checks are the RFCs': the metadata must name the issuer it was asked for (RFC 8414 §3.3),
//! which is what keeps one server from speaking for another (mix-up).

use crate::OAuthError;
use serde::Deserialize;
use url::Url;

/// An authorization server, as its metadata describes it.
#[derive(Clone, Debug, Deserialize)]
pub struct Server {
    pub issuer: String,
    pub authorization_endpoint: Url,
    pub token_endpoint: Url,
    #[serde(default)]
    pub revocation_endpoint: Option<Url>,
    #[serde(default)]
    pub scopes_supported: Vec<String>,
    #[serde(default)]
    pub code_challenge_methods_supported: Vec<String>,
    /// RFC 9207: the redirect carries `iss`, checked against `issuer`.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
}

/// The metadata addresses for `issuer`: RFC 8414's (the well-known part inserted before the
/// issuer's path), then OpenID Connect's (appended to it).
fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |well_known: &str, inserted: bool| {
        let mut url = issuer.clone();
        url.set_query(None);
        url.set_fragment(None);
        url.set_path(&if inserted {
            format!("/.well-known/{well_known}{path}")
        } else {
            format!("{path}/.well-known/{well_known}")
        });
        url
    };
    vec![
        at("oauth-authorization-server", true),
        at("openid-configuration", false),
    ]
}

/// HTTPS, or plain HTTP to this machine's loopback address (RFC 8252 §8.3).
pub fn secure(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => {
            matches!(
                url.host(),
                Some(url::Host::Ipv4(ip)) if ip.is_loopback()
            ) || matches!(url.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
        }
        _ => false,
    }
}

impl Server {
    /// A server known by its endpoints rather than by metadata (a provider whose published
    /// metadata does not name itself — Microsoft's multi-tenant `common` — or a mail
    /// provider's autoconfig that gives them). The same rule as discovery: HTTPS or loopback.
    pub fn from_endpoints(
        issuer: &str,
        authorization_endpoint: &str,
        token_endpoint: &str,
    ) -> Result<Server, OAuthError> {
        let parse = |text: &str| {
            Url::parse(text).map_err(|e| OAuthError::Invalid(format!("{text:?}: {e}")))
        };
        let (authorization_endpoint, token_endpoint) =
            (parse(authorization_endpoint)?, parse(token_endpoint)?);
        if let Some(plain) = [&authorization_endpoint, &token_endpoint]
            .into_iter()
            .find(|u| !secure(u))
        {
            return Err(OAuthError::Invalid(format!(
                "{plain} is not HTTPS: tokens would cross the network in clear"
            )));
        }
        Ok(Server {
            issuer: issuer.to_string(),
            authorization_endpoint,
            token_endpoint,
            revocation_endpoint: None,
            scopes_supported: Vec::new(),
            code_challenge_methods_supported: Vec::new(),
            authorization_response_iss_parameter_supported: false,
        })
    }
}

impl Server {
    /// The same server with its revocation endpoint (RFC 7009), when it has one; held to the
    /// same HTTPS-or-loopback rule.
    pub fn with_revocation(mut self, endpoint: Option<&str>) -> Result<Server, OAuthError> {
        if let Some(text) = endpoint {
            let url =
                Url::parse(text).map_err(|e| OAuthError::Invalid(format!("{text:?}: {e}")))?;
            if !secure(&url) {
                return Err(OAuthError::Invalid(format!(
                    "{url} is not HTTPS: tokens would cross the network in clear"
                )));
            }
            self.revocation_endpoint = Some(url);
        }
        Ok(self)
    }
}

/// The metadata of the authorization server `issuer` names.
pub async fn discover(http: &reqwest::Client, issuer: &Url) -> Result<Server, OAuthError> {
    let asked = issuer.as_str().trim_end_matches('/').to_string();
    // Metadata fetched in clear could be rewritten on the way to name endpoints of someone else.
    if !secure(issuer) {
        return Err(OAuthError::Invalid(format!(
            "{asked} is not HTTPS: its metadata could be changed on the way — use its https:// address"
        )));
    }
    let urls = metadata_urls(issuer);
    for url in &urls {
        let response = http
            .get(url.clone())
            .send()
            .await
            .map_err(|e| OAuthError::Unreachable(asked.clone(), e.to_string()))?;
        if !response.status().is_success() {
            continue;
        }
        let Ok(server) = response.json::<Server>().await else {
            continue;
        };
        if server.issuer.trim_end_matches('/') != asked {
            return Err(OAuthError::IssuerMismatch {
                url: url.to_string(),
                asked,
                said: server.issuer,
            });
        }
        let endpoints = [&server.authorization_endpoint, &server.token_endpoint];
        let endpoints = endpoints
            .into_iter()
            .chain(server.revocation_endpoint.as_ref());
        if let Some(plain) = endpoints.into_iter().find(|u| !secure(u)) {
            return Err(OAuthError::Invalid(format!(
                "{plain} is not HTTPS: tokens would cross the network in clear"
            )));
        }
        if !server.code_challenge_methods_supported.is_empty()
            && !server
                .code_challenge_methods_supported
                .iter()
                .any(|m| m == "S256")
        {
            return Err(OAuthError::Invalid(format!(
                "{asked} does not offer PKCE with S256, which Cowork requires"
            )));
        }
        return Ok(server);
    }
    let tried: Vec<String> = urls.iter().map(Url::to_string).collect();
    Err(OAuthError::NoMetadata(asked, tried.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_given_by_hand_are_held_to_the_same_transport_rule() {
        assert!(
            Server::from_endpoints("x", "https://a.example/auth", "https://a.example/token")
                .is_ok()
        );
        assert!(
            Server::from_endpoints("x", "http://127.0.0.1:9/auth", "http://127.0.0.1:9/t").is_ok()
        );
        let plain = Server::from_endpoints("x", "https://a.example/auth", "http://a.example/token");
        assert!(plain.unwrap_err().to_string().contains("not HTTPS"));
        assert!(Server::from_endpoints("x", "javascript:alert(1)", "https://a.example/t").is_err());
    }

    #[test]
    fn metadata_is_looked_for_where_the_rfcs_put_it() {
        let at = |issuer: &str| -> Vec<String> {
            metadata_urls(&issuer.parse().unwrap())
                .iter()
                .map(Url::to_string)
                .collect()
        };
        assert_eq!(
            at("https://login.example.com/tenant/v2.0"),
            [
                "https://login.example.com/.well-known/oauth-authorization-server/tenant/v2.0",
                "https://login.example.com/tenant/v2.0/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            at("https://accounts.example.com"),
            [
                "https://accounts.example.com/.well-known/oauth-authorization-server",
                "https://accounts.example.com/.well-known/openid-configuration"
            ]
        );
    }
}
