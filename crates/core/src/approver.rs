//! Who answers an `ask`: the window's modal (over a channel), the terminal prompt (the CLI
//! implements [`Approver`]), or nobody (headless: deny). The scheduler bounds every ask with the
//! policy's timeout, counted from the moment the ask reached the person; silence is a denial.

use crate::policy::Review;
use cowork_contract::Effect;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, mpsc, oneshot};

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
    /// Another program whose model made the call (an MCP client through `cowork mcp serve`):
    /// its name, which the modal names above the fold. None for the person's own assistant.
    #[serde(default)]
    pub asker: Option<String>,
    /// The toolpack whose interactive view in the chat made the call (an MCP App): its server's
    /// name, which the modal names above the fold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_of: Option<String>,
    /// The sub-agent (of this conversation's model) that made the call: its name, which the
    /// modal names above the fold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_agent: Option<String>,
    pub tool: String,
    pub title: String,
    /// What the tool says of itself (read-only, destructive, open-world…): shown in the details,
    /// beside what the review made of it.
    #[serde(default)]
    pub annotations: cowork_contract::Annotations,
    /// Arguments with secrets redacted.
    pub args: serde_json::Value,
    pub effects: Vec<Effect>,
    pub review: Review,
    /// What will happen, where, and whether it can be undone, in words (shown first).
    pub plain: crate::plain::Plain,
    /// The choices offered; `conversation`/`always` only when a grant would be meaningful.
    pub choices: Vec<ApprovalChoice>,
    /// The rules "this conversation" or "always" would add, as they will be kept: what the
    /// person grants, shown before they grant it (empty when only "once" is offered).
    pub grants: Vec<String>,
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

/// An answer with who gave it, for an approver that routes each ask to whoever can answer it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answered {
    pub choice: ApprovalChoice,
    /// Who answered, as the audit row's `approved_by` says it (the approver's name when None).
    pub by: Option<String>,
    /// A person answered: a denial is theirs, not a stand-in's for someone who is not there.
    pub heard: bool,
}

#[async_trait::async_trait]
pub trait Approver: Send + Sync {
    /// Shown in the audit row's `approved_by` (e.g. "terminal", "window").
    fn name(&self) -> &str;
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalChoice;
    /// The answer and who gave it. The default: [`Approver::decide`], by this approver, heard
    /// when it is a person. An approver that reaches a different answerer per ask (an MCP
    /// client's form, the window, or nobody) says which.
    async fn answer(&self, request: &ApprovalRequest) -> Answered {
        Answered {
            choice: self.decide(request).await,
            by: None,
            heard: self.is_a_person(),
        }
    }
    /// A form for the person. The default declines (no one to ask).
    async fn elicit(&self, _request: &ElicitationRequest) -> ElicitationAnswer {
        ElicitationAnswer::Decline
    }
    /// Whether its "no" is a person's (a window, a terminal), not a stand-in for one who is not
    /// there: the model is told the person said no only then.
    fn is_a_person(&self) -> bool {
        true
    }
    /// Whether a person can answer a form here at all (a window, a terminal). When not, the
    /// tools that ask the person suspend their task instead of taking a decline for an answer.
    fn can_ask(&self) -> bool {
        false
    }
    /// Returns once the ask `id` (an approval's call id, an elicitation's id) is in front of the
    /// person: the silence timeout counts from then. The default: at once (a terminal prompt is
    /// shown as it is asked).
    async fn reached(&self, _id: &str) {}
    /// The ask `id` is settled (answered, timed out or cancelled).
    fn settled(&self, _id: &str) {}
}

/// Which waiting asks have reached the person. A window hidden in the tray, with no
/// notification shown, has not reached anyone: its asks wait (the tray says "waiting for you")
/// instead of being denied unseen. The shell marks an ask reached when the window shows it
/// focused, when a notification about it is on screen, or when the window comes back.
#[derive(Default)]
pub struct Attention {
    reached: Mutex<HashSet<String>>,
    changed: Notify,
}

impl Attention {
    pub fn mark_reached(&self, id: &str) {
        self.reached.lock().unwrap().insert(id.to_string());
        self.changed.notify_waiters();
    }

    pub async fn wait(&self, id: &str) {
        loop {
            // Registered before the check, so a mark between the two is not missed.
            let changed = self.changed.notified();
            if self.reached.lock().unwrap().contains(id) {
                return;
            }
            changed.await;
        }
    }

    pub fn forget(&self, id: &str) {
        self.reached.lock().unwrap().remove(id);
    }
}

/// Nobody can answer (non-interactive CLI, background jobs): every ask is denied.
pub struct DenyApprover;

#[async_trait::async_trait]
impl Approver for DenyApprover {
    fn name(&self) -> &str {
        "nobody (non-interactive)"
    }
    fn is_a_person(&self) -> bool {
        false
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
    attention: Option<Arc<Attention>>,
}

impl ChannelApprover {
    pub fn new(name: &str, capacity: usize) -> (Self, mpsc::Receiver<PendingApproval>) {
        let (tx, rx) = mpsc::channel(capacity);
        (
            ChannelApprover {
                name: name.to_string(),
                tx,
                elicitations: None,
                attention: None,
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

    /// Asks count as seen only once the receiver marks them reached (see [`Attention`]).
    pub fn with_attention(mut self) -> (Self, Arc<Attention>) {
        let attention = Arc::new(Attention::default());
        self.attention = Some(attention.clone());
        (self, attention)
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
    fn can_ask(&self) -> bool {
        self.elicitations.as_ref().is_some_and(|tx| !tx.is_closed())
    }
    async fn reached(&self, id: &str) {
        if let Some(attention) = &self.attention {
            attention.wait(id).await;
        }
    }
    fn settled(&self, id: &str) {
        if let Some(attention) = &self.attention {
            attention.forget(id);
        }
    }
}
