//! Settings → Accounts: CalDAV and mail accounts, and the outbox's Undo bar.

use super::Res;
use super::tools::{ToolCallView, call_view};
use crate::Shell;
use cowork_core::Caller;
use tauri::State;

/// CalDAV and mail accounts: settings only (passwords never come back to the webview).
#[tauri::command]
#[specta::specta]
pub fn list_accounts(shell: State<'_, Shell>) -> Res<Vec<cowork_app::AccountSettings>> {
    shell.app.accounts()
}

/// Saves an account; its password goes to the OS keyring (an OAuth account has none: empty).
#[tauri::command]
#[specta::specta]
pub fn add_account(
    shell: State<'_, Shell>,
    account: cowork_app::AccountSettings,
    password: String,
) -> Res<()> {
    let password = (!password.is_empty()).then_some(password.as_str());
    shell.app.add_account(&account, password)
}

#[tauri::command]
#[specta::specta]
pub fn remove_account(shell: State<'_, Shell>, name: String) -> Res<bool> {
    shell.app.remove_account(&name)
}

/// Recent outbox messages: the Undo bar shows those still queued. Undo itself is the
/// `email_undo` tool, reviewed and audited.
#[tauri::command]
#[specta::specta]
pub fn outbox(shell: State<'_, Shell>) -> Res<Vec<cowork_app::OutboxRow>> {
    shell.app.outbox(20)
}

/// Logs in and reads a little, as an audited call.
#[tauri::command]
#[specta::specta]
pub async fn test_account(shell: State<'_, Shell>, name: String) -> Res<ToolCallView> {
    Ok(call_view(
        &shell
            .app
            .test_account(&name, Caller::Palette, "settings")
            .await?,
    ))
}
