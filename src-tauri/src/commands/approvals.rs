//! Asks waiting for the person: the approval modal and MCP servers' forms (elicitations).

use super::Res;
use crate::Shell;
use cowork_app::notify::NoticeTarget;
use cowork_core::{ApprovalChoice, ElicitationAnswer};
use serde::Serialize;
use tauri::{AppHandle, Runtime, State};

#[tauri::command]
#[specta::specta]
pub fn answer_approval<R: Runtime>(
    handle: AppHandle<R>,
    shell: State<'_, Shell>,
    call_id: String,
    choice: ApprovalChoice,
) -> Res<()> {
    let answer = shell
        .approvals
        .lock()
        .unwrap()
        .remove(&call_id)
        .map(|(_, answer)| answer)
        .ok_or("this approval is no longer waiting (it timed out or was answered)")?;
    crate::desktop::answered(&handle, NoticeTarget::Approval { id: call_id });
    answer
        .send(choice)
        .map_err(|_| "the call is no longer waiting".to_string())
}

/// The person's answer to an MCP server's form.
#[tauri::command]
#[specta::specta]
pub fn answer_elicitation<R: Runtime>(
    handle: AppHandle<R>,
    shell: State<'_, Shell>,
    id: String,
    answer: ElicitationAnswer,
) -> Res<()> {
    let waiting = shell
        .elicitations
        .lock()
        .unwrap()
        .remove(&id)
        .map(|(_, answer)| answer)
        .ok_or("this form is no longer waiting (it timed out or was answered)")?;
    crate::desktop::answered(&handle, NoticeTarget::Question { id });
    waiting
        .send(answer)
        .map_err(|_| "the server is no longer waiting".to_string())
}

/// What waits for the person now: a window opened later (from the tray) shows these first.
#[derive(Serialize, specta::Type)]
pub struct PendingAsks {
    approvals: Vec<cowork_core::ApprovalRequest>,
    elicitations: Vec<cowork_core::ElicitationRequest>,
}

#[tauri::command]
#[specta::specta]
pub fn pending_asks(shell: State<'_, Shell>) -> PendingAsks {
    PendingAsks {
        approvals: crate::shell::still_waiting(&shell.approvals),
        elicitations: crate::shell::still_waiting(&shell.elicitations),
    }
}
