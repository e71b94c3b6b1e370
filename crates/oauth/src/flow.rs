//! Signing in: the authorization URL the person opens, the loopback redirect that brings the
//! code back (RFC 8252 §7.3: 127.0.0.1 and a port of our own), the code exchanged with its PKCE
//! verifier, and later the refresh and the revocation — each request made by `oauth2`.

use crate::{OAuthError, Server};
use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, CsrfToken, EndpointNotSet, EndpointSet,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken, Scope, TokenResponse, TokenUrl,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

type Client = BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

fn client(server: &Server, client_id: &str) -> Client {
    BasicClient::new(ClientId::new(client_id.to_string()))
        .set_auth_uri(AuthUrl::from_url(server.authorization_endpoint.clone()))
        .set_token_uri(TokenUrl::from_url(server.token_endpoint.clone()))
}

/// What a sign-in gave: kept in the keyring as JSON. `Debug` never shows a token.
#[derive(Clone, Serialize, Deserialize, PartialEq)]
pub struct Tokens {
    pub access_token: String,
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// Unix seconds; `None` when the server did not say.
    #[serde(default)]
    pub expires_at: Option<i64>,
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"…")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl Tokens {
    /// Whether the access token should be refreshed before use (it ends within a minute).
    pub fn expires_soon(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|at| at - 60 <= now)
    }

    fn from_response(
        token: &impl TokenResponse,
        asked: &[String],
        earlier: Option<&Tokens>,
    ) -> Result<Tokens, OAuthError> {
        let granted: Vec<String> = match token.scopes() {
            Some(scopes) => scopes.iter().map(|s| s.to_string()).collect(),
            None => asked.to_vec(),
        };
        // The person agreed to what was shown: a grant wider than that is refused.
        if let Some(wider) = granted.iter().find(|s| !asked.contains(s)) {
            return Err(OAuthError::Refused(format!(
                "the server granted {wider:?}, which was not asked for"
            )));
        }
        let now = now();
        Ok(Tokens {
            access_token: token.access_token().secret().clone(),
            refresh_token: token
                .refresh_token()
                .map(|r| r.secret().clone())
                .or_else(|| earlier.and_then(|e| e.refresh_token.clone())),
            expires_at: token
                .expires_in()
                .map(|d| now.saturating_add(i64::try_from(d.as_secs()).unwrap_or(i64::MAX))),
            scopes: granted,
        })
    }
}

pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A sign-in under way: the URL the person opens, and the loopback listener waiting for the
/// browser to come back.
pub struct Pending {
    url: Url,
    state: CsrfToken,
    verifier: PkceCodeVerifier,
    listener: TcpListener,
    redirect: RedirectUrl,
    server: Server,
    client_id: String,
    scopes: Vec<String>,
}

/// Starts a sign-in: binds the loopback redirect and builds the authorization URL (PKCE S256,
/// a random state).
pub async fn begin(
    server: &Server,
    client_id: &str,
    scopes: &[String],
) -> Result<Pending, OAuthError> {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| OAuthError::Invalid(format!("no loopback port for the sign-in: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| OAuthError::Invalid(e.to_string()))?
        .port();
    let redirect = RedirectUrl::new(format!("http://127.0.0.1:{port}/callback"))
        .map_err(|e| OAuthError::Invalid(e.to_string()))?;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = client(server, client_id)
        .set_redirect_uri(redirect.clone())
        .authorize_url(CsrfToken::new_random)
        .add_scopes(scopes.iter().cloned().map(Scope::new))
        .set_pkce_challenge(challenge)
        .url();
    Ok(Pending {
        url,
        state,
        verifier,
        listener,
        redirect,
        server: server.clone(),
        client_id: client_id.to_string(),
        scopes: scopes.to_vec(),
    })
}

impl Pending {
    /// What the person's browser opens.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Waits (at most `patience`) for the browser to come back to the loopback redirect, checks
    /// the answer is this sign-in's (state; the issuer, RFC 9207), and exchanges the code.
    pub async fn finish(
        self,
        http: &reqwest::Client,
        patience: Duration,
    ) -> Result<Tokens, OAuthError> {
        let query = tokio::time::timeout(
            patience,
            loopback_answer(&self.listener, self.state.secret()),
        )
        .await
        .map_err(|_| OAuthError::TimedOut(patience.as_secs()))??;
        let param = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        if param("state").as_deref() != Some(self.state.secret().as_str()) {
            return Err(OAuthError::Forged("its state is not the one sent"));
        }
        let issuer = param("iss");
        if (self.server.authorization_response_iss_parameter_supported || issuer.is_some())
            && issuer.as_deref().map(|i| i.trim_end_matches('/'))
                != Some(self.server.issuer.trim_end_matches('/'))
        {
            return Err(OAuthError::Forged("it comes from another issuer"));
        }
        if let Some(error) = param("error") {
            let said = param("error_description").unwrap_or_default();
            return Err(OAuthError::Refused(
                format!("{error} {said}").trim().to_string(),
            ));
        }
        let code = param("code").ok_or(OAuthError::Forged("it carries no code"))?;
        let token = client(&self.server, &self.client_id)
            .set_redirect_uri(self.redirect)
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(self.verifier)
            .request_async(http)
            .await
            .map_err(|e| token_error(&self.server, e))?;
        let tokens = Tokens::from_response(&token, &self.scopes, None);
        if tokens.is_err() {
            // Refused, but issued: give it back rather than leave a grant nobody agreed to.
            let granted = Tokens {
                access_token: token.access_token().secret().clone(),
                refresh_token: token.refresh_token().map(|r| r.secret().clone()),
                expires_at: None,
                scopes: Vec::new(),
            };
            let _ = revoke(http, &self.server, &self.client_id, &granted).await;
        }
        tokens
    }
}

/// How long the loopback listener waits for a connection's request line.
const QUIET_CONNECTION: Duration = Duration::from_secs(2);

/// The query of the first request to `/callback` (other requests, a favicon, get a 404). One
/// GET needs no HTTP server crate: the request line is all that is read.
/// The query of the request for `/callback` on `listener` that carries `state` (the browser
/// coming back from this sign-in). Any other request is answered and ignored — another sign-in's
/// answer, a page probing the port, a program that connects and says nothing — so none of them
/// can cancel the sign-in under way. Public for sign-ins whose protocol another crate runs
/// (remote MCP servers, through `rmcp`).
pub async fn loopback_answer(
    listener: &TcpListener,
    state: &str,
) -> Result<Vec<(String, String)>, OAuthError> {
    loop {
        let (mut socket, _) = listener
            .accept()
            .await
            .map_err(|e| OAuthError::Invalid(e.to_string()))?;
        let mut buffer = vec![0u8; 8192];
        // A connection that says nothing (another program on this machine) must not hold up
        // the person's browser behind it.
        let read = tokio::time::timeout(QUIET_CONNECTION, socket.read(&mut buffer))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or(0);
        let head = String::from_utf8_lossy(&buffer[..read]).to_string();
        let target = head
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or("");
        let query: Option<Vec<(String, String)>> = Url::parse(&format!("http://127.0.0.1{target}"))
            .ok()
            .filter(|url| url.path() == "/callback")
            .map(|url| url.query_pairs().into_owned().collect());
        let ours = query
            .as_ref()
            .is_some_and(|q| q.iter().any(|(k, v)| k == "state" && v == state));
        let (status, page) = if ours {
            (
                "200 OK",
                "Cowork has the answer: return to Cowork, which says whether the sign-in worked. You can close this tab.",
            )
        } else {
            (
                "400 Bad Request",
                "This is not the answer to the sign-in Cowork started.",
            )
        };
        let page = format!("<!doctype html><meta charset=utf-8><title>Cowork</title><p>{page}</p>");
        let answer = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = socket.write_all(answer.as_bytes()).await;
        if ours {
            return Ok(query.unwrap_or_default());
        }
    }
}

/// A token request's failure: the server's own refusal (the grant is gone, or the code was not
/// good), or a request that never got an answer — which must not end a sign-in that lasts.
fn token_error<RE, T>(server: &Server, e: oauth2::RequestTokenError<RE, T>) -> OAuthError
where
    RE: std::error::Error + 'static,
    T: oauth2::ErrorResponse + 'static,
{
    match e {
        oauth2::RequestTokenError::ServerResponse(refusal) => {
            OAuthError::Refused(refusal.to_string())
        }
        other => OAuthError::Unreachable(server.issuer.clone(), describe(&other)),
    }
}

fn describe<E: std::error::Error>(e: &E) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// New tokens for `tokens` (its refresh token), keeping the refresh token when the server sends
/// no new one.
pub async fn refresh(
    http: &reqwest::Client,
    server: &Server,
    client_id: &str,
    tokens: &Tokens,
) -> Result<Tokens, OAuthError> {
    let refresh = tokens
        .refresh_token
        .clone()
        .ok_or_else(|| OAuthError::Refused("no refresh token: sign in again".into()))?;
    let token = client(server, client_id)
        .exchange_refresh_token(&RefreshToken::new(refresh))
        .request_async(http)
        .await
        .map_err(|e| token_error(server, e))?;
    Tokens::from_response(&token, &tokens.scopes, Some(tokens))
}

/// Revokes the refresh token (or the access token when there is none) at the server, on
/// sign-out (RFC 7009 §2.1: one form POST). Not through `oauth2`: it refuses any endpoint but
/// HTTPS, also the loopback servers RFC 8252 allows (discovery already refused plain HTTP
/// anywhere else).
pub async fn revoke(
    http: &reqwest::Client,
    server: &Server,
    client_id: &str,
    tokens: &Tokens,
) -> Result<(), OAuthError> {
    let Some(endpoint) = &server.revocation_endpoint else {
        return Err(OAuthError::Invalid(format!(
            "{} offers no revocation: remove Cowork's access in the account's own settings",
            server.issuer
        )));
    };
    let (token, hint) = match &tokens.refresh_token {
        Some(r) => (r.as_str(), "refresh_token"),
        None => (tokens.access_token.as_str(), "access_token"),
    };
    let form = [
        ("token", token),
        ("token_type_hint", hint),
        ("client_id", client_id),
    ];
    let response = http
        .post(endpoint.clone())
        .form(&form)
        .send()
        .await
        .map_err(|e| OAuthError::Unreachable(server.issuer.clone(), describe(&e)))?;
    match response.status() {
        status if status.is_success() => Ok(()),
        status => Err(OAuthError::Refused(format!(
            "revocation answered {status}: {}",
            response.text().await.unwrap_or_default()
        ))),
    }
}
