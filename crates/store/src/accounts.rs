//! Accounts the families share (a CalDAV server, a mailbox): their settings live in the `accounts`
//! table; their passwords live in the OS keyring under [`secret_name`], never here. The store
//! holds this (not a family) because calendar and mail must not depend on each other.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

/// How a connection is protected. `Plain` is refused for anything but loopback (test servers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Security {
    Tls,
    Starttls,
    Plain,
}

impl Security {
    /// The usual (IMAP, SMTP) ports for this kind of connection.
    pub fn default_ports(self) -> (u16, u16) {
        match self {
            Security::Tls => (993, 465),
            Security::Starttls => (143, 587),
            Security::Plain => (143, 25),
        }
    }
}

/// How an account signs in to its servers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Auth {
    /// A password (or an app password) in the keyring under [`secret_name`].
    #[default]
    Password,
    /// OAuth 2 at `issuer`, as the client `client_id`, asking for `scopes`; the server's
    /// endpoints are discovered from its metadata unless given (`endpoints`). The tokens are in
    /// the keyring under [`oauth_secret_name`].
    Oauth {
        issuer: String,
        client_id: String,
        scopes: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        endpoints: Option<OauthEndpoints>,
    },
}

/// An authorization server's endpoints, when they are known rather than discovered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OauthEndpoints {
    pub authorization: String,
    pub token: String,
    /// Where a sign-out revokes the grant (RFC 7009), if the provider has such a place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AccountConfig {
    /// A CalDAV server: `url` is the server or principal URL (discovery finds the calendars).
    Caldav {
        url: String,
        username: String,
        #[serde(default)]
        auth: Auth,
    },
    /// Microsoft 365 calendars through Microsoft Graph: `url` is the service root
    /// (`https://graph.microsoft.com/v1.0`); `username` the person's address, shown.
    MicrosoftGraph {
        url: String,
        username: String,
        #[serde(default)]
        auth: Auth,
    },
    Mail {
        /// The address mail is sent from.
        email: String,
        #[serde(default)]
        display_name: Option<String>,
        username: String,
        imap_host: String,
        imap_port: u16,
        imap_security: Security,
        smtp_host: String,
        smtp_port: u16,
        smtp_security: Security,
        #[serde(default)]
        auth: Auth,
    },
}

impl AccountConfig {
    pub fn kind(&self) -> &'static str {
        match self {
            AccountConfig::Caldav { .. } => "caldav",
            AccountConfig::MicrosoftGraph { .. } => "microsoft_graph",
            AccountConfig::Mail { .. } => "mail",
        }
    }

    /// An account whose calendars are synced (CalDAV or Graph).
    pub fn is_calendar(&self) -> bool {
        !matches!(self, AccountConfig::Mail { .. })
    }

    pub fn auth(&self) -> &Auth {
        match self {
            AccountConfig::Caldav { auth, .. }
            | AccountConfig::MicrosoftGraph { auth, .. }
            | AccountConfig::Mail { auth, .. } => auth,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Account {
    pub name: String,
    #[serde(flatten)]
    pub config: AccountConfig,
}

/// Loopback only may go unencrypted: a password must never cross a network in clear text.
pub fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Refuses settings that would send the password unencrypted to another machine, or sign in
/// at an authorization server reached in clear (its answers could be changed on the way).
pub fn check_transport(name: &str, config: &AccountConfig) -> Result<(), String> {
    if let Auth::Oauth { issuer, .. } = config.auth()
        && !issuer.starts_with("https://")
        && !url_host(issuer).is_some_and(is_loopback)
    {
        return Err(format!(
            "account {name:?}: the sign-in server {issuer} is not HTTPS — use its https:// address"
        ));
    }
    check_hosts(name, config)
}

/// The host of an `http://` URL (without port), if it is one.
fn url_host(url: &str) -> Option<&str> {
    url.strip_prefix("http://")
        .map(|rest| rest.split(['/', '?']).next().unwrap_or(""))
        .map(|h| h.rsplit_once(':').map_or(h, |(h, _)| h))
}

fn check_hosts(name: &str, config: &AccountConfig) -> Result<(), String> {
    match config {
        AccountConfig::MicrosoftGraph {
            auth: Auth::Password,
            ..
        } => Err(format!(
            "account {name:?}: Microsoft Graph takes a sign-in, not a password — add it with --oauth"
        )),
        AccountConfig::Caldav { url, .. } | AccountConfig::MicrosoftGraph { url, .. } => {
            match url_host(url) {
                Some(host) if !is_loopback(host) => Err(format!(
                    "account {name:?}: {url} is plain http, which would send the password in clear text — use its https:// URL"
                )),
                _ if !(url.starts_with("https://") || url.starts_with("http://")) => {
                    Err(format!("account {name:?}: {url:?} is not an http(s) URL"))
                }
                _ => Ok(()),
            }
        }
        AccountConfig::Mail {
            imap_host,
            imap_security,
            smtp_host,
            smtp_security,
            ..
        } => {
            for (host, security, what) in [
                (imap_host, imap_security, "IMAP"),
                (smtp_host, smtp_security, "SMTP"),
            ] {
                if *security == Security::Plain && !is_loopback(host) {
                    return Err(format!(
                        "account {name:?}: {what} to {host} without TLS would send the password in clear text — set its security to tls or starttls"
                    ));
                }
            }
            Ok(())
        }
    }
}

/// The keyring entry holding this account's password.
pub fn secret_name(account: &str) -> String {
    format!("account/{account}")
}

/// The keyring entry holding this account's OAuth tokens (JSON).
pub fn oauth_secret_name(account: &str) -> String {
    format!("oauth/{account}")
}

/// Names are used in effects, rules and keyring entries: keep them plain.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(format!(
            "account name {name:?}: use 1–64 letters, digits, `-`, `_` or `.` (e.g. `work`, `icloud`)"
        ));
    }
    Ok(())
}

fn from_row(name: String, config: String) -> rusqlite::Result<Account> {
    let config = serde_json::from_str(&config).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })?;
    Ok(Account { name, config })
}

pub fn list(conn: &Connection, kind: Option<&str>) -> rusqlite::Result<Vec<Account>> {
    let mut stmt = conn.prepare_cached(
        "SELECT name, config FROM accounts WHERE ?1 IS NULL OR kind = ?1 ORDER BY name",
    )?;
    let rows = stmt.query_map(params![kind], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.map(|r| r.and_then(|(n, c)| from_row(n, c))).collect()
}

pub fn get(conn: &Connection, name: &str) -> rusqlite::Result<Option<Account>> {
    conn.query_row(
        "SELECT name, config FROM accounts WHERE name = ?1",
        params![name],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()?
    .map(|(n, c)| from_row(n, c))
    .transpose()
}

/// Adds or replaces an account's settings.
pub fn put(conn: &Connection, account: &Account) -> rusqlite::Result<()> {
    let config = serde_json::to_string(&account.config).expect("account config serializes");
    conn.execute(
        "INSERT INTO accounts (name, kind, config, created_at) VALUES (?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%SZ','now'))
         ON CONFLICT(name) DO UPDATE SET kind = excluded.kind, config = excluded.config",
        params![account.name, account.config.kind(), config],
    )?;
    Ok(())
}

pub fn remove(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute("DELETE FROM accounts WHERE name = ?1", params![name])? > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_cross_a_network_only_encrypted() {
        let dav = |url: &str| AccountConfig::Caldav {
            url: url.into(),
            username: "u".into(),
            auth: Auth::Password,
        };
        assert!(check_transport("a", &dav("https://cloud.example.com/dav")).is_ok());
        assert!(check_transport("a", &dav("http://127.0.0.1:5232/")).is_ok());
        assert!(check_transport("a", &dav("http://localhost/")).is_ok());
        assert!(
            check_transport("a", &dav("http://cloud.example.com/dav"))
                .unwrap_err()
                .contains("https://")
        );
        assert!(check_transport("a", &dav("ftp://x")).is_err());
        let mail = |host: &str, security| AccountConfig::Mail {
            email: "a@x".into(),
            display_name: None,
            username: "a".into(),
            imap_host: host.into(),
            imap_port: 143,
            imap_security: security,
            smtp_host: host.into(),
            smtp_port: 25,
            smtp_security: security,
            auth: Auth::Password,
        };
        assert!(check_transport("a", &mail("127.0.0.1", Security::Plain)).is_ok());
        assert!(check_transport("a", &mail("mail.example.com", Security::Starttls)).is_ok());
        assert!(
            check_transport("a", &mail("mail.example.com", Security::Plain))
                .unwrap_err()
                .contains("clear text")
        );
    }
}
