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

/// Tokens as JSON in the secret source, under [`accounts::oauth_secret_name`], bound to the
/// authorization server and client they came from: an account replaced by one of another
/// provider under the same name never hands the old provider's tokens to the new servers.
struct SecretTokens {
    secrets: Arc<dyn SecretSource>,
    store: Store,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Bound {
    issuer: String,
    client_id: String,
    tokens: Tokens,
}

impl SecretTokens {
    /// The issuer and client the account signs in with now.
    fn binding(&self, account: &str) -> Option<(String, String)> {
        let conn = self.store.connect().ok()?;
        match accounts::get(&conn, account).ok()??.config.auth() {
            Auth::Oauth {
                issuer, client_id, ..
            } => Some((issuer.clone(), client_id.clone())),
            Auth::Password => None,
        }
    }
}

impl TokenStore for SecretTokens {
    fn load(&self, account: &str) -> Result<Option<Tokens>, String> {
        let Some(json) = self.secrets.get(&accounts::oauth_secret_name(account))? else {
            return Ok(None);
        };
        // Unreadable tokens, or another provider's, are no sign-in: the person signs in again.
        let bound: Option<Bound> = serde_json::from_str(&json).ok();
        Ok(bound
            .filter(|b| self.binding(account) == Some((b.issuer.clone(), b.client_id.clone())))
            .map(|b| b.tokens))
    }

    fn save(&self, account: &str, tokens: &Tokens) -> Result<(), String> {
        let (issuer, client_id) = self
            .binding(account)
            .ok_or_else(|| format!("account {account:?} does not sign in with OAuth"))?;
        let bound = Bound {
            issuer,
            client_id,
            tokens: tokens.clone(),
        };
        let json = serde_json::to_string(&bound).map_err(|e| e.to_string())?;
        self.secrets
            .set(&accounts::oauth_secret_name(account), &json)
    }

    fn delete(&self, account: &str) -> Result<bool, String> {
        self.secrets.delete(&accounts::oauth_secret_name(account))
    }

    /// A lock file per account in the data dir, held (`flock`) while a refresh runs: the
    /// window, a schedule runner and a command line share the keyring.
    fn exclusive(&self, account: &str) -> Result<Option<Box<dyn Send>>, String> {
        let dir = self.store.dir().root().join("locks");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join(format!("oauth-{account}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        file.lock()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Some(Box::new(file)))
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
        let tokens = Arc::new(SecretTokens {
            secrets: secrets.clone(),
            store: store.clone(),
        });
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
                .and_then(|server| server.with_revocation(given.revocation.as_deref()))
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

/// What a sign-out did.
#[derive(Debug, PartialEq)]
pub enum SignedOut {
    /// The tokens left the keyring and the server revoked the grant.
    Revoked,
    /// The tokens left the keyring; the server did not revoke (why): the grant may live on
    /// there until the person removes Cowork in the account's own settings.
    NotRevoked(String),
    /// There was no sign-in.
    WasNot,
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
        self.credentials
            .keeper
            .keep(&sign_in.account, &tokens)
            .await
            .map_err(|e| e.to_string())?;
        tracing::info!(account = %sign_in.account, "signed in");
        Ok(())
    }

    /// Signs out: the tokens leave the keyring, then the server is asked to revoke the grant
    /// (what it answered is said: some providers offer no revocation).
    pub async fn sign_out(&self, account: &str) -> Result<SignedOut, String> {
        let forgotten = self.credentials.keeper.forget(account).await;
        let Some(tokens) = forgotten.map_err(|e| e.to_string())? else {
            return Ok(SignedOut::WasNot);
        };
        let (auth, client_id, _) = self.oauth(account)?;
        let server = self
            .credentials
            .server(&auth)
            .await
            .map_err(|e| e.to_string());
        let revoked = match server {
            Ok(server) => {
                cowork_oauth::revoke(&self.credentials.http, &server, &client_id, &tokens)
                    .await
                    .map_err(|e| e.to_string())
            }
            Err(e) => Err(e),
        };
        Ok(match revoked {
            Ok(()) => SignedOut::Revoked,
            Err(why) => SignedOut::NotRevoked(why),
        })
    }

    pub fn signed_in(&self, account: &str) -> bool {
        self.credentials.signed_in(account)
    }
}
