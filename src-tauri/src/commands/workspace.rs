//! The folder the chat works in (the picker above the chat).

use super::Res;
use crate::Shell;
use serde::Serialize;
use tauri::{AppHandle, Runtime, State};
use tokio::sync::oneshot;

/// The folder the chat works in and the recent ones (the picker above the chat).
#[derive(Serialize, specta::Type)]
pub struct WorkspaceState {
    open: Option<String>,
    recent: Vec<String>,
}

fn workspace_state_of(shell: &Shell) -> WorkspaceState {
    let recent = shell
        .app
        .settings::<cowork_app::DesktopSettings>()
        .unwrap_or_default()
        .recent_workspaces;
    WorkspaceState {
        open: shell.app.workspace().map(|p| p.display().to_string()),
        recent: recent.iter().map(|p| p.display().to_string()).collect(),
    }
}

#[tauri::command]
#[specta::specta]
pub fn workspace_state(shell: State<'_, Shell>) -> WorkspaceState {
    workspace_state_of(&shell)
}

/// The person opens a folder for this conversation (or, with no conversation yet, for the
/// chat about to start); `folder: null` closes it. Async, as every command that reaches the
/// toolpacks' servers: their roots change, and telling them needs the runtime sync commands
/// (run on the main thread) do not have.
#[tauri::command]
#[specta::specta]
pub async fn choose_workspace(
    shell: State<'_, Shell>,
    conversation: Option<String>,
    folder: Option<String>,
) -> Res<WorkspaceState> {
    shell.app.choose_workspace(
        &shell.conversations,
        conversation.as_deref(),
        folder.as_deref().map(std::path::Path::new),
        &shell.running(),
    )?;
    Ok(workspace_state_of(&shell))
}

/// The person opened a conversation: its folder opens with it.
#[tauri::command]
#[specta::specta]
pub async fn enter_conversation(
    shell: State<'_, Shell>,
    conversation: String,
) -> Res<WorkspaceState> {
    shell.app.enter_conversation_workspace(
        &shell.conversations,
        &conversation,
        &shell.running(),
    )?;
    Ok(workspace_state_of(&shell))
}

/// The desktop's folder chooser; None when the person cancels.
#[tauri::command]
#[specta::specta]
pub async fn pick_folder<R: Runtime>(handle: AppHandle<R>) -> Option<String> {
    use tauri_plugin_dialog::DialogExt;
    let (tx, rx) = oneshot::channel();
    handle.dialog().file().pick_folder(move |folder| {
        let _ = tx.send(folder.and_then(|f| f.into_path().ok()));
    });
    rx.await.ok().flatten().map(|p| p.display().to_string())
}
