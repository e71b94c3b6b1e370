//! Accounts the families share (a CalDAV server, a mailbox): their settings live in the `accounts`
//! table; their passwords live in the OS keyring under [`secret_name`], never here. The store
//! holds this (not a family) because calendar and mail must not depend on each other.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

/// How a connection is protected. `Plain` is refused for anything but loopback (test servers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Security {
    Tls,
    Starttls,
    Plain,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AccountConfig {
    /// A CalDAV server: `url` is the server or principal URL (discovery finds the calendars).
    Caldav { url: String, username: String },
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
    },
}

impl AccountConfig {
    pub fn kind(&self) -> &'static str {
        match self {
            AccountConfig::Caldav { .. } => "caldav",
            AccountConfig::Mail { .. } => "mail",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub name: String,
    #[serde(flatten)]
    pub config: AccountConfig,
}

/// The keyring entry holding this account's password.
pub fn secret_name(account: &str) -> String {
    format!("account/{account}")
}

/// Names are used in effects, rules and keyring entries: keep them plain.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        return Err(format!("account name {name:?}: use 1–64 letters, digits, `-`, `_` or `.` (e.g. `work`, `icloud`)"));
    }
    Ok(())
}

fn from_row(name: String, config: String) -> rusqlite::Result<Account> {
    let config = serde_json::from_str(&config).map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))?;
    Ok(Account { name, config })
}

pub fn list(conn: &Connection, kind: Option<&str>) -> rusqlite::Result<Vec<Account>> {
    let mut stmt = conn.prepare_cached("SELECT name, config FROM accounts WHERE ?1 IS NULL OR kind = ?1 ORDER BY name")?;
    let rows = stmt.query_map(params![kind], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.map(|r| r.and_then(|(n, c)| from_row(n, c))).collect()
}

pub fn get(conn: &Connection, name: &str) -> rusqlite::Result<Option<Account>> {
    conn.query_row("SELECT name, config FROM accounts WHERE name = ?1", params![name], |r| Ok((r.get(0)?, r.get(1)?)))
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
