//! A mail account as the tools use it: settings from the store, the password from the keyring.

use cowork_contract::{SecretSource, ToolError};
use cowork_store::accounts::{self, AccountConfig, Security};
use rusqlite::Connection;

pub struct MailAccount {
    pub name: String,
    pub email: String,
    pub display_name: Option<String>,
    pub username: String,
    pub password: String,
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

pub fn load(
    conn: &Connection,
    secrets: &dyn SecretSource,
    name: &str,
) -> Result<MailAccount, ToolError> {
    let account =
        accounts::get(conn, name).map_err(|e| ToolError::failed(format!("database error: {e}")))?;
    let Some(accounts::Account { config, .. }) = account else {
        return Err(not_configured(format!("no mail account {name:?}")));
    };
    accounts::check_transport(name, &config).map_err(ToolError::failed)?;
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
    } = config
    else {
        return Err(not_configured(format!(
            "{name:?} is a calendar account, not a mail account"
        )));
    };
    let password = secrets
        .get(&accounts::secret_name(name))
        .map_err(ToolError::failed)?
        .ok_or_else(|| ToolError::failed(format!("mail account {name:?} has no password in the keyring — add the account again to store it")))?;
    Ok(MailAccount {
        name: name.into(),
        email,
        display_name,
        username,
        password,
        imap_host,
        imap_port,
        imap_security,
        smtp_host,
        smtp_port,
        smtp_security,
    })
}
