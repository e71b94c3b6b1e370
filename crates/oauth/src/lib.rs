//! OAuth 2 sign-in for the person's accounts (mail, calendars, remote MCP servers): the
//! authorization server's metadata (RFC 8414, then OpenID discovery), authorization code with
//! PKCE in the person's browser through a loopback redirect (RFC 8252), refresh before expiry,
//! and revocation on sign-out. The protocol is the `oauth2` crate's; discovery is a metadata
//! fetch it does not do. Tokens leave here only as [`Tokens`], which callers keep in the OS
//! keyring, never in a file, a log or the model's context (its `Debug` hides them).

mod discovery;
mod flow;
mod keeper;

pub use discovery::{Server, discover, secure};
pub use flow::{Pending, Tokens, begin, loopback_answer, refresh, revoke};
pub use keeper::{Keeper, TokenStore};

/// Why a sign-in or a token request failed, in words that name a fix.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("the sign-in server at {0} could not be reached: {1}")]
    Unreachable(String, String),
    #[error("{0} publishes no OAuth metadata (tried {1})")]
    NoMetadata(String, String),
    #[error(
        "the metadata at {url} names the issuer {said:?}, not {asked:?}: refused (a server may only speak for itself)"
    )]
    IssuerMismatch {
        url: String,
        asked: String,
        said: String,
    },
    #[error("the sign-in answer is not for this sign-in ({0}): refused")]
    Forged(&'static str),
    #[error("the sign-in server refused: {0}")]
    Refused(String),
    #[error("nobody finished signing in within {0} s: start again")]
    TimedOut(u64),
    #[error(
        "the account {0} is signed out (no tokens, or the server refused to renew them): sign in to it again"
    )]
    NeedsSignIn(String),
    #[error("{0}")]
    Invalid(String),
}
