//! One tool call through the scheduler (reviewed, approved, audited), printed once its audit
//! row is committed; and what a call leaves behind: a suspended task, queued mail.

use super::*;
use cowork_contract::ToolError;
use cowork_core::{CallOutcome, CallRequest, Scheduler};

pub(crate) fn parse_args(text: &str) -> Result<serde_json::Value, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        format!("--args is not valid JSON ({e}); write an object, e.g. --args '{{\"title\": \"Buy milk\"}}'")
    })?;
    if !value.is_object() {
        return Err("--args must be a JSON object, e.g. --args '{\"title\": \"Buy milk\"}'".into());
    }
    Ok(value)
}

/// `SUCCESS` when `ok`, else `FAILURE` (exit 1).
pub(crate) fn success_if(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// While the call is suspended, checks its condition twice a second and resumes it once it
/// holds (the person logged in in the browser window the call opened); stops when the task is
/// settled elsewhere (Resume in the window, cancel, timeout). Ctrl+C leaves it suspended.
/// Follows a suspended call until it goes on (`--wait`), saying what it waits for.
pub(crate) async fn wait_while_suspended(app: &App, outcome: CallOutcome) -> CallOutcome {
    app.follow_suspension(outcome, Caller::Cli, |step| match step {
        cowork_app::Following::Waiting { id, reason } => {
            esay!("waiting: {reason}\n  (task {id}; Ctrl+C stops waiting and leaves it suspended)")
        }
        cowork_app::Following::Settled { id, state, by } => esay!(
            "task {id} was {state} (by {})",
            by.as_deref().unwrap_or("its deadline")
        ),
    })
    .await
}

/// Prints an outcome once its audit row is committed: nothing is reported done before that.
pub(crate) fn print_committed(
    scheduler: &Scheduler,
    outcome: &CallOutcome,
    json: bool,
) -> Result<(), String> {
    scheduler.flush().map_err(|e| e.to_string())?;
    print::outcome(outcome, json);
    Ok(())
}

/// One call through the scheduler, printed once its audit row is committed.
pub(crate) async fn call_and_print(
    scheduler: &Scheduler,
    name: &str,
    args: serde_json::Value,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    call_and_print_waiting(scheduler, name, args, conversation, json, None).await
}

/// [`call_and_print`]; with `wait`, a call that suspends is followed until it goes on.
pub(crate) async fn call_and_print_waiting(
    scheduler: &Scheduler,
    name: &str,
    args: serde_json::Value,
    conversation: &str,
    json: bool,
    wait: Option<&App>,
) -> Result<ExitCode, String> {
    let progress = (!json).then(|| print_progress(scheduler));
    let mut outcome = scheduler
        .call(CallRequest::new(name, args, Caller::Cli, conversation))
        .await;
    if let Some(task) = progress {
        task.abort();
    }
    if let Some(app) = wait {
        outcome = wait_while_suspended(app, outcome).await;
    }
    print_committed(scheduler, &outcome, json)?;
    Ok(exit_code(&outcome.result))
}

/// A long call's progress (an MCP server's notifications, a re-index) on stderr as it comes.
fn print_progress(scheduler: &Scheduler) -> tokio::task::JoinHandle<()> {
    let mut events = scheduler.subscribe();
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            if let cowork_core::ToolEvent::Progress { progress, .. } = event {
                let total = progress.total.map(|t| format!("/{t}")).unwrap_or_default();
                let message = progress
                    .message
                    .map(|m| format!(" {m}"))
                    .unwrap_or_default();
                esay!("progress {}{total}{message}", progress.progress);
            }
        }
    })
}

fn exit_code<T>(result: &Result<T, ToolError>) -> ExitCode {
    match result {
        Ok(_) => ExitCode::SUCCESS,
        // A path outside the workspace, a swapped symlink: refused for safety, like a denial.
        Err(ToolError::Denied { .. } | ToolError::SecurityViolation { .. }) => ExitCode::from(3),
        Err(ToolError::InvalidArguments { .. } | ToolError::NotFound { .. }) => ExitCode::from(2),
        // Waiting for the person: `cowork tasks resume ID` goes on.
        Err(ToolError::Suspended { .. }) => ExitCode::from(4),
        Err(_) => ExitCode::FAILURE,
    }
}

/// Waits for queued mail to leave (the undo delay), or takes it back on Ctrl+C.
/// Holds a one-shot call open while its mail waits out the undo delay; Ctrl+C takes it back.
pub(crate) async fn drain_outbox(app: &App, conversation: &str) {
    let pending = app.mail_pending();
    if pending > 0 {
        esay!("{pending} message(s) leave after the undo delay — press Ctrl+C to take them back");
    }
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    if let cowork_app::Drained::TookBack(taken) = app.drain_outbox(conversation, stop).await {
        esay!("took back {taken} message(s); mail queued elsewhere stays queued");
    }
}
