//! Accounts' credentials for the families, and signing in with OAuth 2 — the person's act, in
//! the window or the CLI. A password account's password and an OAuth account's tokens are both
//! in the keyring (`secrets`), never in a file, a log, the audit or the model's context; tokens
//! are refreshed before they expire (`cowork_oauth::Keeper`), so one sign-in lasts until the
//! server withdraws it. A tool that finds an account signed out suspends its task until the
//! person has signed in ([`SignedInProbe`] lets it go on).

use crate::App;
use cowork_contract::{
    Credential, CredentialError, Credentials, ResumeProbe, SIGNED_IN, SecretSource,
};
use cowork_oauth::{Keeper, OAuthError, Pending, Server, TokenStore, Tokens};
use cowork_store::Store;
use cowork_store::accounts::{self, Auth};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How long a sign-in waits for the person to finish it in the browser.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(600);

/// Tokens as JSON in the secret source, under [`accounts::oauth_secret_name`].
struct SecretTokens(Arc<dyn SecretSource>);

impl TokenStore for SecretTokens {
    fn load(&self, account: &str) -> Result<Option<Tokens>, String> {
        let Some(json) = self.0.get(&accounts::oauth_secret_name(account))? else {
            return Ok(None);
        };
        // Unreadable tokens are no sign-in: the person signs in again (never a crash).
        Ok(serde_json::from_str(&json).ok())
    }

    fn save(&self, account: &str, tokens: &Tokens) -> Result<(), String> {
        let json = serde_json::to_string(tokens).map_err(|e| e.to_string())?;
        self.0.set(&accounts::oauth_secret_name(account), &json)
    }
}

/// The app's [`Credentials`]: passwords from the keyring, OAuth access tokens kept fresh.
pub(crate) struct AccountCredentials {
    store: Store,
    secrets: Arc<dyn SecretSource>,
    tokens: Arc<SecretTokens>,
    keeper: Keeper,
    http: reqwest::Client,
    /// Authorization servers' metadata by issuer, fetched once per process.
    servers: tokio::sync::Mutex<HashMap<String, Server>>,
}

impl AccountCredentials {
    pub fn new(store: Store, secrets: Arc<dyn SecretSource>) -> AccountCredentials {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .connect_timeout(Duration::from_secs(10))
            // A token endpoint that redirects is not followed: a token request goes where
            // the discovered metadata says, and nowhere else.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        let tokens = Arc::new(SecretTokens(secrets.clone()));
        AccountCredentials {
            keeper: Keeper::new(tokens.clone(), http.clone()),
            store,
            secrets,
            tokens,
            http,
            servers: Default::default(),
        }
    }

    fn auth(&self, account: &str) -> Result<Auth, CredentialError> {
        let conn = self
            .store
            .connect()
            .map_err(|e| CredentialError::Missing(e.to_string()))?;
        match accounts::get(&conn, account) {
            Ok(Some(found)) => Ok(found.config.auth().clone()),
            Ok(None) => Err(CredentialError::Missing(format!(
                "no account {account:?}: `cowork account list` shows them"
            ))),
            Err(e) => Err(CredentialError::Missing(format!("database error: {e}"))),
        }
    }

    /// The account's authorization server: its given endpoints, else its metadata.
    async fn server(&self, auth: &Auth) -> Result<Server, CredentialError> {
        let Auth::Oauth {
            issuer, endpoints, ..
        } = auth
        else {
            return Err(CredentialError::Missing("not an OAuth account".into()));
        };
        match endpoints {
            Some(given) => Server::from_endpoints(issuer, &given.authorization, &given.token)
                .map_err(from_oauth),
            None => self.discovered(issuer).await,
        }
    }

    async fn discovered(&self, issuer: &str) -> Result<Server, CredentialError> {
        let mut servers = self.servers.lock().await;
        if let Some(found) = servers.get(issuer) {
            return Ok(found.clone());
        }
        let url = url::Url::parse(issuer)
            .map_err(|e| CredentialError::Missing(format!("issuer {issuer:?}: {e}")))?;
        let server = cowork_oauth::discover(&self.http, &url)
            .await
            .map_err(from_oauth)?;
        servers.insert(issuer.to_string(), server.clone());
        Ok(server)
    }

    fn signed_in(&self, account: &str) -> bool {
        matches!(self.tokens.load(account), Ok(Some(_)))
    }

    /// The secret source itself (remote MCP servers keep their sign-ins there too).
    pub fn secrets(&self) -> Arc<dyn SecretSource> {
        self.secrets.clone()
    }
}

fn from_oauth(e: OAuthError) -> CredentialError {
    match e {
        OAuthError::NeedsSignIn(account) => CredentialError::NeedsSignIn(account),
        OAuthError::Unreachable(..) => CredentialError::Unreachable(e.to_string()),
        other => CredentialError::Missing(other.to_string()),
    }
}

#[cowork_contract::async_trait]
impl Credentials for AccountCredentials {
    async fn credential(&self, account: &str) -> Result<Credential, CredentialError> {
        let auth = self.auth(account)?;
        match &auth {
            Auth::Password => self
                .secrets
                .get(&accounts::secret_name(account))
                .map_err(CredentialError::Unreachable)?
                .map(Credential::Password)
                .ok_or_else(|| CredentialError::Missing(format!(
                    "account {account:?} has no password in the keyring — add the account again to store it"
                ))),
            Auth::Oauth { client_id, .. } => {
                let server = self.server(&auth).await?;
                self.keeper
                    .access_token(account, &server, client_id)
                    .await
                    .map(Credential::Bearer)
                    .map_err(from_oauth)
            }
        }
    }
}

/// Lets a task that waited for a sign-in go on once the account has tokens again.
pub(crate) struct SignedInProbe(pub Arc<AccountCredentials>);

#[cowork_contract::async_trait]
impl ResumeProbe for SignedInProbe {
    fn kind(&self) -> &str {
        SIGNED_IN
    }

    async fn holds(&self, resume_when: &serde_json::Value) -> bool {
        resume_when["account"]
            .as_str()
            .is_some_and(|account| self.0.signed_in(account))
    }
}

/// A sign-in under way: the address the person opens in their browser.
pub struct SignIn {
    account: String,
    pending: Pending,
}

impl SignIn {
    pub fn url(&self) -> &url::Url {
        self.pending.url()
    }
}

impl App {
    /// The account's OAuth settings; a password account is refused.
    fn oauth(&self, account: &str) -> Result<(Auth, String, Vec<String>), String> {
        let auth = self.credentials.auth(account).map_err(|e| e.to_string())?;
        match &auth {
            Auth::Oauth {
                client_id, scopes, ..
            } => {
                let (client_id, scopes) = (client_id.clone(), scopes.clone());
                Ok((auth, client_id, scopes))
            }
            Auth::Password => Err(format!(
                "account {account:?} signs in with a password, not OAuth — add it again with its provider's sign-in"
            )),
        }
    }

    /// Starts signing in to `account`: the URL to open in the person's browser.
    pub async fn begin_sign_in(&self, account: &str) -> Result<SignIn, String> {
        let (auth, client_id, scopes) = self.oauth(account)?;
        let server = self
            .credentials
            .server(&auth)
            .await
            .map_err(|e| e.to_string())?;
        let pending = cowork_oauth::begin(&server, &client_id, &scopes)
            .await
            .map_err(|e| e.to_string())?;
        Ok(SignIn {
            account: account.to_string(),
            pending,
        })
    }

    /// Waits for the browser to come back, then keeps the tokens in the keyring.
    pub async fn finish_sign_in(&self, sign_in: SignIn) -> Result<(), String> {
        let tokens = sign_in
            .pending
            .finish(&self.credentials.http, SIGN_IN_TIMEOUT)
            .await
            .map_err(|e| e.to_string())?;
        self.credentials.tokens.save(&sign_in.account, &tokens)?;
        tracing::info!(account = %sign_in.account, "signed in");
        Ok(())
    }

    /// Signs out: the server is asked to revoke the grant (best effort: the tokens are
    /// deleted here whatever it says), then the tokens leave the keyring.
    pub async fn sign_out(&self, account: &str) -> Result<bool, String> {
        let Some(tokens) = self.credentials.tokens.load(account)? else {
            return Ok(false);
        };
        if let Ok((auth, client_id, _)) = self.oauth(account) {
            match self.credentials.server(&auth).await {
                Ok(server) => {
                    let http = &self.credentials.http;
                    if let Err(e) = cowork_oauth::revoke(http, &server, &client_id, &tokens).await {
                        tracing::warn!(account, "sign-out: the server did not revoke: {e}");
                    }
                }
                Err(e) => tracing::warn!(account, "sign-out: no server to revoke at: {e}"),
            }
        }
        self.credentials
            .secrets
            .delete(&accounts::oauth_secret_name(account))
    }

    pub fn signed_in(&self, account: &str) -> bool {
        self.credentials.signed_in(account)
    }
}
