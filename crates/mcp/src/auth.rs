//! Remote MCP servers behind OAuth, as the MCP authorization spec has it: the server's
//! protected resource metadata (RFC 9728) names its authorization server, whose metadata is
//! discovered; Cowork registers itself there (dynamic client registration) unless a client ID
//! is known, and signs the person in with PKCE through a loopback redirect, asking for a token
//! for this server only (resource indicator, RFC 8707). All of that protocol is `rmcp`'s
//! (`transport::auth`); here are only where the tokens live (the OS keyring, through the app's
//! secret source) and the loopback redirect the person's browser comes back to.
//!
//! Signing in is the person's act (`cowork toolpack signin`, the window); a server that needs
//! it and has no tokens does not start, and its status says how to sign in.

use cowork_contract::SecretSource;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, CredentialStore, OAuthState,
    StoredCredentials,
};
use std::sync::Arc;
use std::time::Duration;

/// Where one server's OAuth tokens live: the keyring entry `mcp-oauth/<server>`.
#[derive(Clone)]
pub struct OauthStore {
    secrets: Arc<dyn SecretSource>,
    name: String,
}

impl std::fmt::Debug for OauthStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OauthStore({})", self.name)
    }
}

impl OauthStore {
    pub fn new(secrets: Arc<dyn SecretSource>, server: &str) -> OauthStore {
        OauthStore {
            secrets,
            name: format!("mcp-oauth/{server}"),
        }
    }

    /// Whether the person has signed in (tokens are kept).
    pub fn signed_in(&self) -> bool {
        matches!(self.secrets.get(&self.name), Ok(Some(_)))
    }

    /// Forgets the tokens (sign-out); whether there were any.
    pub fn forget(&self) -> Result<bool, String> {
        self.secrets.delete(&self.name)
    }
}

fn store_error(e: String) -> AuthError {
    AuthError::InternalError(format!("the keyring: {e}"))
}

#[async_trait::async_trait]
impl CredentialStore for OauthStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let json = self.secrets.get(&self.name).map_err(store_error)?;
        // Unreadable tokens are no sign-in: the person signs in again.
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let json = serde_json::to_string(&credentials)
            .map_err(|e| AuthError::InternalError(e.to_string()))?;
        self.secrets.set(&self.name, &json).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.secrets
            .delete(&self.name)
            .map(drop)
            .map_err(store_error)
    }
}

/// An HTTP client that sends the server's token (refreshed when it expires), when the person
/// has signed in; `None` when there are no tokens to send.
pub async fn authorized_client(
    url: &str,
    store: &OauthStore,
) -> Result<Option<AuthClient<reqwest013::Client>>, String> {
    if !store.signed_in() {
        return Ok(None);
    }
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| e.to_string())?;
    manager.set_credential_store(store.clone());
    if !manager
        .initialize_from_store()
        .await
        .map_err(|e| format!("its sign-in could not be used ({e}): sign in again"))?
    {
        return Ok(None);
    }
    Ok(Some(AuthClient::new(reqwest013::Client::new(), manager)))
}

/// A manifest's headers as the transport sends them; a name or value that is not a valid
/// header is refused naming it (the value itself is never shown: it may be a key).
pub fn header_map(
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<
    std::collections::HashMap<reqwest013::header::HeaderName, reqwest013::header::HeaderValue>,
    String,
> {
    headers
        .iter()
        .map(|(name, value)| {
            let bad = || format!("the header {name:?} in the manifest is not a valid HTTP header");
            let name =
                reqwest013::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
            let mut value = reqwest013::header::HeaderValue::from_str(value).map_err(|_| bad())?;
            value.set_sensitive(true);
            Ok((name, value))
        })
        .collect()
}

/// What the server at `url` says about signing in to it (its protected resource metadata,
/// RFC 9728), in words for the install review: where the person would sign in, and for what.
/// `None` when it publishes none (it takes no sign-in, or a key in its headers).
pub async fn who_it_acts_as(url: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        #[serde(default)]
        authorization_servers: Vec<String>,
        #[serde(default)]
        scopes_supported: Vec<String>,
    }
    let parsed = url::Url::parse(url).ok()?;
    let path = parsed.path().trim_end_matches('/');
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    for well_known in [
        format!("/.well-known/oauth-protected-resource{path}"),
        "/.well-known/oauth-protected-resource".to_string(),
    ] {
        let mut at = parsed.clone();
        at.set_path(&well_known);
        at.set_query(None);
        let Ok(response) = http.get(at).send().await else {
            return None;
        };
        if !response.status().is_success() {
            continue;
        }
        let metadata: Metadata = response.json().await.ok()?;
        let issuer = metadata.authorization_servers.first()?;
        let scopes = match metadata.scopes_supported.is_empty() {
            true => String::new(),
            false => format!(" (asking for: {})", metadata.scopes_supported.join(", ")),
        };
        return Some(format!(
            "asks you to sign in at {issuer}: it will act as you there{scopes}. You sign in after installing (`cowork toolpack signin`, or Sign in on the Toolpacks page)."
        ));
    }
    None
}

/// A sign-in under way: the address the person's browser opens.
pub struct SignIn {
    state: OAuthState,
    listener: tokio::net::TcpListener,
    url: String,
}

impl SignIn {
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// Starts signing in to the server at `url`: finds its authorization server, registers Cowork
/// there when needed, and builds the authorization URL (PKCE, this server as the resource).
pub async fn begin_sign_in(url: &str, store: &OauthStore) -> Result<SignIn, String> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("no loopback port for the sign-in: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| e.to_string())?;
    manager.set_credential_store(store.clone());
    let mut state = OAuthState::Unauthorized(manager);
    state
        .start_authorization(AuthorizationRequest::new(redirect).with_client_name("Cowork"))
        .await
        .map_err(|e| format!("{url}: the sign-in could not start: {e}"))?;
    let url = state
        .get_authorization_url()
        .await
        .map_err(|e| e.to_string())?;
    // The address comes from the server's metadata and is handed to the person's browser:
    // HTTPS, or plain HTTP to this machine, nothing else (no file:, no other scheme).
    if !url::Url::parse(&url).is_ok_and(|u| cowork_oauth::secure(&u)) {
        return Err(format!("{url}: the sign-in address is not HTTPS: refused"));
    }
    Ok(SignIn {
        state,
        listener,
        url,
    })
}

/// Waits (at most `patience`) for the browser to come back, then exchanges the code; rmcp checks
/// the state and keeps the tokens in the store.
pub async fn finish_sign_in(mut sign_in: SignIn, patience: Duration) -> Result<(), String> {
    // The state rmcp put in the address: only the answer that carries it ends the wait.
    let expected = url::Url::parse(&sign_in.url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or("the sign-in address carries no state: refused")?;
    let answer = cowork_oauth::loopback_answer(&sign_in.listener, &expected);
    let query = tokio::time::timeout(patience, answer)
        .await
        .map_err(|_| {
            format!(
                "nobody finished signing in within {} s: start again",
                patience.as_secs()
            )
        })?
        .map_err(|e| e.to_string())?;
    let param = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    if let Some(error) = param("error") {
        return Err(format!("the sign-in server refused: {error}"));
    }
    let (Some(code), Some(state)) = (param("code"), param("state")) else {
        return Err("the sign-in answer had no code: start again".into());
    };
    // The issuer the answer names (RFC 9207), when it names one: rmcp refuses a mismatch.
    let issuer = param("iss");
    sign_in
        .state
        .handle_callback_with_issuer(&code, &state, issuer.as_deref())
        .await
        .map_err(|e| format!("the sign-in could not be finished: {e}"))
}
