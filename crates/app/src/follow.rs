//! What a shell does after a call, decided once for both shells: follow a suspended call until
//! it goes on or is settled, hold a one-shot process open while its mail waits out the undo
//! delay, and carry a resumed call's result back into the model's turn.

use crate::App;
use cowork_contract::ToolError;
use cowork_core::{CallOutcome, CallRequest, Caller};
use std::future::Future;
use std::time::Duration;

/// What following a suspension tells the shell to show.
#[derive(Debug, Clone, PartialEq)]
pub enum Following {
    /// The call is waiting for `reason`; it goes on by itself once its condition holds.
    Waiting { id: String, reason: String },
    /// Somebody else settled it (cancelled, timed out, resumed elsewhere).
    Settled {
        id: String,
        state: String,
        by: Option<String>,
    },
}

/// How a drained outbox ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drained {
    Nothing,
    Sent,
    /// The person stopped it: this many of the messages queued here were taken back.
    TookBack(usize),
    /// Still waiting after the longest undo delay: left to the next start.
    GaveUp,
}

/// The longest undo delay plus a margin: a drain never holds a process longer.
const DRAIN_LIMIT: Duration = Duration::from_secs(660);

impl App {
    /// Waits while `outcome` is a suspension whose condition its family can check, resuming it
    /// as `caller` once the condition holds; returns the last outcome (still suspended when
    /// the suspension was settled some other way). `tell` hears each step.
    pub async fn follow_suspension(
        &self,
        mut outcome: CallOutcome,
        caller: Caller,
        mut tell: impl FnMut(Following),
    ) -> CallOutcome {
        let scheduler = self.scheduler();
        let Some(coordinator) = scheduler.suspensions() else {
            return outcome;
        };
        while let Err(ToolError::Suspended { id, reason }) = &outcome.result {
            let id = id.clone();
            tell(Following::Waiting {
                id: id.clone(),
                reason: reason.clone(),
            });
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                if let Some(next) = scheduler.resume_if_ready(&id, caller.clone()).await {
                    outcome = next;
                    break;
                }
                match coordinator.get(&id) {
                    Ok(Some(row)) if row.state == "suspended" => {}
                    Ok(Some(row)) => {
                        tell(Following::Settled {
                            id,
                            state: row.state,
                            by: row.settled_by,
                        });
                        return outcome;
                    }
                    _ => return outcome,
                }
            }
        }
        outcome
    }

    /// Holds on while mail this process queued waits out its undo delay (a one-shot process
    /// would otherwise leave it to the next start). When `stop` fires first, the messages
    /// queued here are taken back, each by an `email_undo` call (reviewed and audited).
    pub async fn drain_outbox(
        &self,
        conversation: &str,
        stop: impl Future<Output = ()>,
    ) -> Drained {
        if self.mail_pending() == 0 {
            return Drained::Nothing;
        }
        let deadline = tokio::time::Instant::now() + DRAIN_LIMIT;
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => {
                    let mut taken = 0;
                    for id in self.mail_queued_here() {
                        let undo = CallRequest::new(
                            "email_undo",
                            serde_json::json!({"id": id}),
                            Caller::Cli,
                            conversation,
                        );
                        taken += usize::from(self.scheduler().call(undo).await.result.is_ok());
                    }
                    return Drained::TookBack(taken);
                }
                _ = tokio::time::sleep(Duration::from_millis(100)) => {
                    if self.mail_pending() == 0 {
                        return Drained::Sent;
                    }
                    if tokio::time::Instant::now() > deadline {
                        return Drained::GaveUp;
                    }
                }
            }
        }
    }

    /// A resumed call whose result belongs in the model's turn: the conversation and the call
    /// to hand to `Agent::continue_after_resume`. None when the call suspended again (its turn
    /// keeps waiting) or the suspension is not on record.
    pub fn resume_continuation(
        &self,
        suspension: &str,
        outcome: &CallOutcome,
    ) -> Option<(String, cowork_agent::ResumedCall)> {
        let (ok, result) = match &outcome.result {
            Err(ToolError::Suspended { .. }) => return None,
            Ok(output) => (true, output.text_content()),
            Err(e) => (false, e.to_string()),
        };
        let row = self.scheduler().suspensions()?.get(suspension).ok()??;
        let resumed = cowork_agent::ResumedCall {
            suspension: suspension.to_string(),
            tool: row.tool,
            args: row.args,
            ok,
            result,
        };
        Some((row.conversation, resumed))
    }
}
