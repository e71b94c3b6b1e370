//! Suspended tasks (a call that stopped for the person, e.g. to log in): the banner's list,
//! resumed, cancelled or given more time.

use super::Res;
use super::chat::{TurnFailed, stream_turn};
use super::tools::{ToolCallView, call_view};
use crate::Shell;
use crate::events::{TaskResumed, push};
use cowork_core::Caller;
use tauri::{AppHandle, Manager, Runtime, State};

fn coordinator(shell: &Shell) -> Res<&std::sync::Arc<cowork_core::SuspendCoordinator>> {
    shell
        .app
        .scheduler()
        .suspensions()
        .ok_or_else(|| "suspended tasks are not kept in this build".to_string())
}

/// Tasks waiting for the person (the banner reads it again on `tool-event` and `task-resumed`,
/// so a resume from the CLI shows too).
#[tauri::command]
#[specta::specta]
pub fn list_suspensions(shell: State<'_, Shell>) -> Res<Vec<cowork_core::Suspension>> {
    coordinator(&shell)?.list(false).map_err(|e| e.to_string())
}

/// Runs the suspended call again, through the gate (reviewed and audited).
#[tauri::command]
#[specta::specta]
pub async fn resume_suspension<R: Runtime>(
    handle: AppHandle<R>,
    shell: State<'_, Shell>,
    id: String,
) -> Res<ToolCallView> {
    let outcome = shell
        .app
        .scheduler()
        .resume(&id, Caller::Palette)
        .await
        .map_err(|e| e.to_string())?;
    emit_resumed(&handle, &id, &outcome);
    Ok(call_view(&outcome))
}

/// Tells the window a suspended task ran again (by the button or by itself): the banner and
/// the task's card show what it did. If the model made that call, its turn goes on with the
/// result once the call has finished (a call that suspended again keeps waiting).
pub fn emit_resumed<R: Runtime>(
    handle: &AppHandle<R>,
    id: &str,
    outcome: &cowork_core::CallOutcome,
) {
    push(
        handle,
        TaskResumed {
            id: id.to_string(),
            call: call_view(outcome),
        },
    );
    // A chain run waiting on this task goes on from its next step.
    let (waiting, task, result) = (handle.clone(), id.to_string(), outcome.result.clone());
    tauri::async_runtime::spawn(async move {
        let shell = waiting.state::<Shell>();
        if let Some(Err(e)) = shell.app.task_resumed(&task, &result).await {
            tracing::warn!("the chain waiting on task {task}: {e}");
        }
    });
    let shell = handle.state::<Shell>();
    let Some((conversation, resumed)) = shell.app.resume_continuation(id, outcome) else {
        return;
    };
    let Some(agent) = shell.agent.lock().unwrap().clone() else {
        return;
    };
    let conv = conversation.clone();
    stream_turn(
        handle.clone(),
        &shell,
        &conversation,
        move |tx, cancel| async move {
            agent
                .continue_after_resume(&conv, &resumed, &tx, cancel)
                .await
                .err()
                .map(TurnFailed::from)
        },
    );
}

#[tauri::command]
#[specta::specta]
pub fn cancel_suspension(shell: State<'_, Shell>, id: String) -> Res<cowork_core::Suspension> {
    coordinator(&shell)?
        .cancel(&id, "window")
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn extend_suspension(
    shell: State<'_, Shell>,
    id: String,
    minutes: u64,
) -> Res<cowork_core::Suspension> {
    coordinator(&shell)?
        .extend(&id, std::time::Duration::from_secs(minutes * 60))
        .map_err(|e| e.to_string())
}
