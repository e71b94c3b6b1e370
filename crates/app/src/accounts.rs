//! Accounts as the shells see them: add (settings to the store, password to the keyring — only
//! there), list, remove, and test (a real call through the scheduler, reviewed and audited like
//! any other).

use crate::App;
use cowork_core::{CallOutcome, CallRequest, Caller};
use cowork_store::accounts::{self, Account, AccountConfig};

pub use cowork_store::accounts::{
    Account as AccountSettings, AccountConfig as AccountKind, Auth, Security,
};

impl App {
    pub fn accounts(&self) -> Result<Vec<Account>, String> {
        let conn = self.store.connect().map_err(|e| e.to_string())?;
        accounts::list(&conn, None).map_err(|e| format!("database error: {e}"))
    }

    /// Stores the password first: a password account never exists without its secret. An
    /// OAuth account takes none (its tokens come from signing in).
    pub fn add_account(&self, account: &Account, password: Option<&str>) -> Result<(), String> {
        accounts::check_name(&account.name)?;
        accounts::check_transport(&account.name, &account.config)?;
        match (account.config.auth(), password) {
            (accounts::Auth::Oauth { .. }, None) => {}
            (accounts::Auth::Oauth { .. }, Some(_)) => {
                return Err("an OAuth account takes no password: sign in to it instead".into());
            }
            (accounts::Auth::Password, None | Some("")) => {
                return Err("the password is empty".into());
            }
            (accounts::Auth::Password, Some(password)) => {
                crate::secrets::set(&accounts::secret_name(&account.name), password)?
            }
        }
        // A replaced account's sign-in is not the new one's.
        crate::secrets::delete(&accounts::oauth_secret_name(&account.name))?;
        let conn = self.store.connect().map_err(|e| e.to_string())?;
        accounts::put(&conn, account).map_err(|e| format!("database error: {e}"))
    }

    pub fn remove_account(&self, name: &str) -> Result<bool, String> {
        let conn = self.store.connect().map_err(|e| e.to_string())?;
        if accounts::get(&conn, name)
            .map_err(|e| format!("database error: {e}"))?
            .is_none()
        {
            return Ok(false);
        }
        // Secrets first: an account whose keyring entries could not be deleted stays listed,
        // so no later account of that name inherits them.
        crate::secrets::delete(&accounts::secret_name(name))?;
        crate::secrets::delete(&accounts::oauth_secret_name(name))?;
        let removed = accounts::remove(&conn, name).map_err(|e| format!("database error: {e}"))?;
        cowork_calendar::forget_account(&self.store, name)?;
        Ok(removed)
    }

    /// Logs in and reads a little: `calendar_sync` for CalDAV, `email_check` for mail.
    pub async fn test_account(
        &self,
        name: &str,
        caller: Caller,
        conversation: &str,
    ) -> Result<CallOutcome, String> {
        let account = self
            .accounts()?
            .into_iter()
            .find(|a| a.name == name)
            .ok_or_else(|| format!("no account {name:?}: `cowork account list` shows them"))?;
        let (tool, args) = match account.config {
            AccountConfig::Caldav { .. } | AccountConfig::MicrosoftGraph { .. } => {
                ("calendar_sync", serde_json::json!({"account": name}))
            }
            AccountConfig::Mail { .. } => (
                "email_check",
                serde_json::json!({"account": name, "limit": 1}),
            ),
        };
        Ok(self
            .scheduler
            .call(CallRequest::new(tool, args, caller, conversation))
            .await)
    }
}
