//! A mail account as the tools use it: settings from the store, the credential (a password or
//! an OAuth access token) from the app's [`Credentials`].

use crate::Shared;
use cowork_contract::{Credential, CredentialError, ToolContext, ToolError};
use cowork_store::accounts::{self, AccountConfig, Security};
use rusqlite::Connection;

pub struct MailAccount {
    pub name: String,
    pub email: String,
    pub display_name: Option<String>,
    pub username: String,
    pub credential: Credential,
    pub imap_host: String,
    pub imap_port: u16,
    pub imap_security: Security,
    pub smtp_host: String,
    pub smtp_port: u16,
    pub smtp_security: Security,
}

pub fn not_configured(what: String) -> ToolError {
    ToolError::not_configured(
        what,
        "add a mail account in Settings → Accounts, or `cowork account add NAME --email ADDRESS --imap HOST[:PORT] --smtp HOST[:PORT]`",
    )
}

/// The name of the account a call uses: the one named, else the only (or first) mail account.
pub fn resolve_name(conn: &Connection, wanted: Option<&str>) -> Result<String, ToolError> {
    let all = accounts::list(conn, Some("mail"))
        .map_err(|e| ToolError::failed(format!("database error: {e}")))?;
    match wanted {
        Some(name) => all
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.name.clone())
            .ok_or_else(|| {
                not_configured(format!(
                    "no mail account {name:?} (there are: {})",
                    all.iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }),
        None => all
            .first()
            .map(|a| a.name.clone())
            .ok_or_else(|| not_configured("no mail account".into())),
    }
}

/// Why an account could not be loaded: the tools suspend on a sign-in they need; the outbox
/// keeps the message until the person has signed in.
pub enum LoadError {
    Tool(ToolError),
    Credential(CredentialError),
}

impl LoadError {
    pub fn into_tool_error(self, ctx: Option<&ToolContext>) -> ToolError {
        match self {
            LoadError::Tool(e) => e,
            LoadError::Credential(e) => e.into_tool_error(ctx),
        }
    }
}

pub async fn load(shared: &Shared, name: &str) -> Result<MailAccount, LoadError> {
    let account = accounts::get(&shared.db.lock().unwrap(), name)
        .map_err(|e| LoadError::Tool(ToolError::failed(format!("database error: {e}"))))?;
    let Some(accounts::Account { config, .. }) = account else {
        return Err(LoadError::Tool(not_configured(format!(
            "no mail account {name:?}"
        ))));
    };
    accounts::check_transport(name, &config).map_err(|e| LoadError::Tool(ToolError::failed(e)))?;
    let AccountConfig::Mail {
        email,
        display_name,
        username,
        imap_host,
        imap_port,
        imap_security,
        smtp_host,
        smtp_port,
        smtp_security,
        auth: _,
    } = config
    else {
        return Err(LoadError::Tool(not_configured(format!(
            "{name:?} is a calendar account, not a mail account"
        ))));
    };
    let credential = shared
        .credentials
        .credential(name)
        .await
        .map_err(LoadError::Credential)?;
    Ok(MailAccount {
        name: name.into(),
        email,
        display_name,
        username,
        credential,
        imap_host,
        imap_port,
        imap_security,
        smtp_host,
        smtp_port,
        smtp_security,
    })
}
