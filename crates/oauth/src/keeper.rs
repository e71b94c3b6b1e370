//! One sign-in per account that lasts: the access token handed out is refreshed before it
//! expires and the new tokens saved, one refresh at a time per account (a server that rotates
//! refresh tokens refuses the second of two concurrent refreshes, which would ask the person to
//! sign in again for nothing). A refresh the server refuses means the grant is gone: the person
//! must sign in again, and only then.

use crate::{OAuthError, Server, Tokens, refresh};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Where accounts' tokens are kept (the OS keyring in the app; never a file).
pub trait TokenStore: Send + Sync {
    fn load(&self, account: &str) -> Result<Option<Tokens>, String>;
    fn save(&self, account: &str, tokens: &Tokens) -> Result<(), String>;
    /// Whether there were tokens to delete.
    fn delete(&self, account: &str) -> Result<bool, String>;
    /// Holds every other process off this account's tokens until the guard drops (the window
    /// and a command line share one keyring: two refreshes at once spend a rotating refresh
    /// token twice, and the provider then revokes both). May block while another holds it.
    /// `None`: nothing else shares this store.
    fn exclusive(&self, _account: &str) -> Result<Option<Box<dyn Send>>, String> {
        Ok(None)
    }
}

/// Hands out access tokens for signed-in accounts.
pub struct Keeper {
    store: Arc<dyn TokenStore>,
    http: reqwest::Client,
    refreshing: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Keeper {
    pub fn new(store: Arc<dyn TokenStore>, http: reqwest::Client) -> Keeper {
        Keeper {
            store,
            http,
            refreshing: Mutex::default(),
        }
    }

    /// The in-process lock of one account's tokens.
    fn lock_for(&self, account: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.refreshing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(account.to_string())
            .or_default()
            .clone()
    }

    /// Keeps a new sign-in's tokens, after any refresh under way (which would overwrite them).
    pub async fn keep(&self, account: &str, tokens: &Tokens) -> Result<(), OAuthError> {
        let lock = self.lock_for(account);
        let _one_at_a_time = lock.lock().await;
        self.store
            .save(account, tokens)
            .map_err(OAuthError::Invalid)
    }

    /// Takes the tokens away (sign-out), after any refresh under way (which would bring them
    /// back); returns them, for the caller to revoke.
    pub async fn forget(&self, account: &str) -> Result<Option<Tokens>, OAuthError> {
        let lock = self.lock_for(account);
        let _one_at_a_time = lock.lock().await;
        let tokens = self.store.load(account).map_err(OAuthError::Invalid)?;
        self.store.delete(account).map_err(OAuthError::Invalid)?;
        Ok(tokens)
    }

    /// The kept access token when it is good for a while yet, else the tokens to refresh.
    fn current(&self, account: &str) -> Result<Result<String, Tokens>, OAuthError> {
        let tokens = self
            .store
            .load(account)
            .map_err(OAuthError::Invalid)?
            .ok_or_else(|| OAuthError::NeedsSignIn(account.to_string()))?;
        Ok(match tokens.expires_soon(crate::flow::now()) {
            false => Ok(tokens.access_token),
            true => Err(tokens),
        })
    }

    /// A usable access token for `account` at `server`, refreshed first when it is about to
    /// expire. [`OAuthError::NeedsSignIn`] when there are no tokens or the server refused the
    /// refresh (the grant was revoked or expired).
    pub async fn access_token(
        &self,
        account: &str,
        server: &Server,
        client_id: &str,
    ) -> Result<String, OAuthError> {
        let lock = self.lock_for(account);
        let _one_at_a_time = lock.lock().await;
        // Read under the lock: a refresh that just finished has saved its tokens.
        if let Ok(fresh) = self.current(account)? {
            return Ok(fresh);
        }
        // Another process may be refreshing this very account: wait for it, then read again.
        let store = self.store.clone();
        let who = account.to_string();
        let _across = tokio::task::spawn_blocking(move || store.exclusive(&who))
            .await
            .map_err(|e| OAuthError::Invalid(e.to_string()))?
            .map_err(OAuthError::Invalid)?;
        let tokens = match self.current(account)? {
            Ok(fresh) => return Ok(fresh),
            Err(expiring) => expiring,
        };
        let renewed = match refresh(&self.http, server, client_id, &tokens).await {
            Ok(renewed) => renewed,
            Err(OAuthError::Refused(why)) => {
                tracing::info!("oauth: {account}: the refresh was refused ({why}): sign in again");
                // The grant is gone: tokens kept would look like a sign-in to whoever waits
                // for one, and be refused again at every try.
                self.store.delete(account).map_err(OAuthError::Invalid)?;
                return Err(OAuthError::NeedsSignIn(account.to_string()));
            }
            Err(other) => return Err(other),
        };
        self.store
            .save(account, &renewed)
            .map_err(OAuthError::Invalid)?;
        Ok(renewed.access_token)
    }
}
