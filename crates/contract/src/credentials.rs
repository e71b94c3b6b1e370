//! How a family proves who the person is to an account's server (IMAP, SMTP, CalDAV): a
//! password, or an OAuth access token the app keeps fresh. Families ask for it by account name
//! and never see where it is kept (the OS keyring) or how it is renewed.

use crate::{SuspendRequest, ToolContext, ToolError};
use std::time::Duration;

/// An account's credential at this moment. `Debug` never shows it.
#[derive(Clone, PartialEq)]
pub enum Credential {
    Password(String),
    /// An OAuth 2 access token (`Authorization: Bearer`, IMAP/SMTP XOAUTH2).
    Bearer(String),
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Credential::Password(_) => "Password(…)",
            Credential::Bearer(_) => "Bearer(…)",
        })
    }
}

/// Why there is no credential, each with its fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CredentialError {
    /// Only the person can fix this, by signing in: a tool suspends its task until they have.
    #[error(
        "account {0:?} is signed out — sign in to it in Settings → Accounts or with `cowork account signin {0}`"
    )]
    NeedsSignIn(String),
    #[error("{0}")]
    Missing(String),
    /// The keyring or the sign-in server did not answer; trying later may work.
    #[error("{0}")]
    Unreachable(String),
}

/// The kind of [`SuspendRequest::resume_when`] a sign-in satisfies: `{"kind": "signed_in",
/// "account": NAME}`.
pub const SIGNED_IN: &str = "signed_in";

impl CredentialError {
    /// The tool's error: a call that needs a sign-in waits for it (suspended, resumed once the
    /// person signed in) when its caller can wait; otherwise it fails saying so.
    pub fn into_tool_error(self, ctx: Option<&ToolContext>) -> ToolError {
        match (self, ctx) {
            (CredentialError::NeedsSignIn(account), Some(ctx)) => ctx.suspend(SuspendRequest {
                reason: CredentialError::NeedsSignIn(account.clone()).to_string(),
                resume_when: serde_json::json!({"kind": SIGNED_IN, "account": account}),
                timeout: Duration::from_secs(7 * 24 * 3600),
            }),
            (CredentialError::Unreachable(m), _) => ToolError::transient(m),
            (other, _) => ToolError::failed(other.to_string()),
        }
    }
}

/// Where families get accounts' credentials (the app: keyring and OAuth sign-ins; tests: a map).
#[async_trait::async_trait]
pub trait Credentials: Send + Sync {
    async fn credential(&self, account: &str) -> Result<Credential, CredentialError>;
}
