//! Who answers an `ask`: the window's modal (over a channel), the terminal prompt (the CLI
//! implements [`Approver`]), or nobody (headless: deny). The scheduler bounds every ask with the
//! policy's timeout; silence is a denial.

use crate::policy::Review;
use cowork_contract::Effect;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalChoice {
    Once,
    Conversation,
    /// Always, for everyone using this user account.
    Always,
    /// Always, but only in the open workspace (its `.cowork/settings.json`, which can be shared
    /// with the project).
    AlwaysWorkspace,
    Deny,
}

impl ApprovalChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalChoice::Once => "once",
            ApprovalChoice::Conversation => "conversation",
            ApprovalChoice::Always => "always",
            ApprovalChoice::AlwaysWorkspace => "always_workspace",
            ApprovalChoice::Deny => "deny",
        }
    }
}

/// Everything the modal shows.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ApprovalRequest {
    pub call_id: String,
    pub conversation: String,
    pub caller: String,
    pub tool: String,
    pub title: String,
    /// Arguments with secrets redacted.
    pub args: serde_json::Value,
    pub effects: Vec<Effect>,
    pub review: Review,
    /// The choices offered; `conversation`/`always` only when a grant would be meaningful.
    pub choices: Vec<ApprovalChoice>,
}

/// An MCP server asks the person for input (MCP elicitation): a message and a flat form
/// (`schema` is an object schema whose properties are strings, numbers, booleans or enums).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ElicitationRequest {
    pub id: String,
    /// Who asks: `mcp:<server>`.
    pub from: String,
    pub message: String,
    pub schema: serde_json::Value,
}

/// The person's answer to an elicitation. Silence, or an approver that cannot show a form,
/// declines: nothing is ever filled in on the person's behalf.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ElicitationAnswer {
    Accept { content: serde_json::Value },
    Decline,
    Cancel,
}

impl ElicitationAnswer {
    pub fn as_str(&self) -> &'static str {
        match self {
            ElicitationAnswer::Accept { .. } => "accepted",
            ElicitationAnswer::Decline => "declined",
            ElicitationAnswer::Cancel => "cancelled",
        }
    }
}

#[async_trait::async_trait]
pub trait Approver: Send + Sync {
    /// Shown in the audit row's `approved_by` (e.g. "terminal", "window").
    fn name(&self) -> &str;
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalChoice;
    /// A form for the person. The default declines (no one to ask).
    async fn elicit(&self, _request: &ElicitationRequest) -> ElicitationAnswer {
        ElicitationAnswer::Decline
    }
}

/// Nobody can answer (non-interactive CLI, background jobs): every ask is denied.
pub struct DenyApprover;

#[async_trait::async_trait]
impl Approver for DenyApprover {
    fn name(&self) -> &str {
        "nobody (non-interactive)"
    }
    async fn decide(&self, _request: &ApprovalRequest) -> ApprovalChoice {
        ApprovalChoice::Deny
    }
}

pub type PendingApproval = (ApprovalRequest, oneshot::Sender<ApprovalChoice>);
pub type PendingElicitation = (ElicitationRequest, oneshot::Sender<ElicitationAnswer>);

/// Forwards asks to a receiver (the window shows a modal and answers on the oneshot). A dropped
/// answer or a closed channel is a denial (a decline, for elicitations).
pub struct ChannelApprover {
    name: String,
    tx: mpsc::Sender<PendingApproval>,
    elicitations: Option<mpsc::Sender<PendingElicitation>>,
}

impl ChannelApprover {
    pub fn new(name: &str, capacity: usize) -> (Self, mpsc::Receiver<PendingApproval>) {
        let (tx, rx) = mpsc::channel(capacity);
        (
            ChannelApprover {
                name: name.to_string(),
                tx,
                elicitations: None,
            },
            rx,
        )
    }

    /// Also forwards elicitations (forms), on their own channel.
    pub fn with_elicitations(
        mut self,
        capacity: usize,
    ) -> (Self, mpsc::Receiver<PendingElicitation>) {
        let (tx, rx) = mpsc::channel(capacity);
        self.elicitations = Some(tx);
        (self, rx)
    }
}

#[async_trait::async_trait]
impl Approver for ChannelApprover {
    fn name(&self) -> &str {
        &self.name
    }
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalChoice {
        let (answer_tx, answer_rx) = oneshot::channel();
        if self.tx.send((request.clone(), answer_tx)).await.is_err() {
            return ApprovalChoice::Deny;
        }
        answer_rx.await.unwrap_or(ApprovalChoice::Deny)
    }
    async fn elicit(&self, request: &ElicitationRequest) -> ElicitationAnswer {
        let Some(tx) = &self.elicitations else {
            return ElicitationAnswer::Decline;
        };
        let (answer_tx, answer_rx) = oneshot::channel();
        if tx.send((request.clone(), answer_tx)).await.is_err() {
            return ElicitationAnswer::Decline;
        }
        answer_rx.await.unwrap_or(ElicitationAnswer::Decline)
    }
}
