//! The conversations: the list (search, rename, pin, delete), a thread and its branches, its
//! settings, and its export.

use super::Res;
use crate::Shell;
use cowork_agent::{ConversationSummary, Message};
use serde::Serialize;
use tauri::{AppHandle, Runtime, State};
use tokio::sync::oneshot;

/// The branch shown, with each message's siblings, and the compactions.
#[derive(Serialize, specta::Type)]
pub struct Thread {
    messages: Vec<cowork_agent::ThreadMessage>,
    compactions: Vec<cowork_agent::Compaction>,
    settings: cowork_agent::ConversationSettings,
}

#[tauri::command]
#[specta::specta]
pub fn get_thread(shell: State<'_, Shell>, conversation: String) -> Res<Thread> {
    Ok(Thread {
        messages: shell.conversations.thread(&conversation)?,
        compactions: shell.conversations.compactions(&conversation)?,
        settings: shell.conversations.settings(&conversation)?,
    })
}

#[tauri::command]
#[specta::specta]
pub fn switch_branch(shell: State<'_, Shell>, conversation: String, message: i64) -> Res<bool> {
    shell.conversations.switch_branch(&conversation, message)
}

#[tauri::command]
#[specta::specta]
pub fn set_pinned(shell: State<'_, Shell>, conversation: String, pinned: bool) -> Res<bool> {
    shell.conversations.set_pinned(&conversation, pinned)
}

#[tauri::command]
#[specta::specta]
pub fn export_conversation(shell: State<'_, Shell>, conversation: String) -> Res<String> {
    shell.conversations.export_markdown(&conversation)
}

/// Saves the conversation as Markdown where the person chooses; None when they cancel.
#[tauri::command]
#[specta::specta]
pub async fn save_export<R: Runtime>(
    handle: AppHandle<R>,
    shell: State<'_, Shell>,
    conversation: String,
) -> Res<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let markdown = shell.conversations.export_markdown(&conversation)?;
    let title = shell
        .conversations
        .title(&conversation)?
        .unwrap_or_default();
    let file: String = title
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == ' ' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    let (tx, rx) = oneshot::channel();
    handle
        .dialog()
        .file()
        .set_file_name(format!("{}.md", file.trim()))
        .add_filter("Markdown", &["md"])
        .save_file(move |path| {
            let _ = tx.send(path.and_then(|p| p.into_path().ok()));
        });
    let Some(path) = rx.await.ok().flatten() else {
        return Ok(None);
    };
    std::fs::write(&path, markdown).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some(path.display().to_string()))
}

#[tauri::command]
#[specta::specta]
pub fn get_conversation_settings(
    shell: State<'_, Shell>,
    conversation: String,
) -> Res<cowork_agent::ConversationSettings> {
    shell.conversations.settings(&conversation)
}

#[tauri::command]
#[specta::specta]
pub fn save_conversation_settings(
    shell: State<'_, Shell>,
    conversation: String,
    settings: cowork_agent::ConversationSettings,
) -> Res<()> {
    shell.conversations.ensure(&conversation, "New chat")?;
    shell
        .conversations
        .choose_settings(&conversation, &settings)
        .map(|_| ())
}

#[tauri::command]
#[specta::specta]
pub fn list_conversations(
    shell: State<'_, Shell>,
    search: Option<String>,
) -> Res<Vec<ConversationSummary>> {
    shell
        .conversations
        .list(search.as_deref().filter(|s| !s.is_empty()))
}

#[tauri::command]
#[specta::specta]
pub fn get_messages(shell: State<'_, Shell>, conversation: String) -> Res<Vec<Message>> {
    shell.conversations.messages(&conversation)
}

#[tauri::command]
#[specta::specta]
pub fn rename_conversation(
    shell: State<'_, Shell>,
    conversation: String,
    title: String,
) -> Res<bool> {
    shell.conversations.rename(&conversation, &title)
}

#[tauri::command]
#[specta::specta]
pub fn delete_conversation(shell: State<'_, Shell>, conversation: String) -> Res<bool> {
    shell.conversations.delete(&conversation)
}
