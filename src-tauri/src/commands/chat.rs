//! The chat: a turn started, edited, regenerated, compacted or stopped, streamed to the webview
//! as `agent-event`s and one `agent-done`; attachments for the next message.

use super::Res;
use crate::Shell;
use crate::events::{AgentDone, AgentEventPayload, push};
use cowork_agent::{Agent, AgentEvent, Part};
use std::sync::Arc;
use tauri::{AppHandle, Manager, Runtime, State};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Why a turn failed, for [`AgentDone`].
pub(crate) struct TurnFailed {
    message: String,
    remedy: Option<cowork_agent::Remedy>,
}

impl From<cowork_agent::AgentError> for TurnFailed {
    fn from(e: cowork_agent::AgentError) -> Self {
        TurnFailed {
            remedy: e.remedy(),
            message: e.to_string(),
        }
    }
}

impl From<String> for TurnFailed {
    fn from(message: String) -> Self {
        TurnFailed {
            message,
            remedy: None,
        }
    }
}

/// Starts a turn; returns the conversation id at once. Progress arrives as events.
#[tauri::command]
#[specta::specta]
pub fn send_message<R: Runtime>(
    handle: AppHandle<R>,
    shell: State<'_, Shell>,
    conversation: Option<String>,
    text: String,
    attachments: Vec<Part>,
) -> Res<String> {
    let parts = cowork_app::attachments::person_parts(&text, attachments)?;
    let agent = chat_agent(&shell)?;
    let conversation = match conversation {
        // An id the window chose for a new chat: stored now, so the list it reads next has it.
        Some(id) if shell.conversations.title(&id)?.is_none() => {
            let title: String = cowork_agent::title_of(&parts).chars().take(60).collect();
            shell.conversations.ensure(&id, &title)?;
            shell
                .conversations
                .set_workspace(&id, shell.app.workspace().as_deref())?;
            id
        }
        Some(id) => {
            // Its folder, opened if another one is open now.
            shell
                .app
                .enter_conversation_workspace(&shell.conversations, &id, &shell.running())?;
            id
        }
        None => {
            let id = shell
                .conversations
                .create(&text.chars().take(60).collect::<String>())?;
            // A new chat works in the folder open now.
            shell
                .conversations
                .set_workspace(&id, shell.app.workspace().as_deref())?;
            id
        }
    };
    agent_turn(
        handle,
        &shell,
        &conversation,
        agent,
        move |agent, conv, tx, cancel| async move { agent.send_parts(&conv, parts, &tx, cancel).await },
    );
    Ok(conversation)
}

/// Runs one of the agent's turns on `conversation` (see `stream_turn`); its error ends it.
fn agent_turn<R: Runtime, Turn>(
    handle: AppHandle<R>,
    shell: &Shell,
    conversation: &str,
    agent: Arc<Agent>,
    turn: impl FnOnce(
        Arc<Agent>,
        String,
        tokio::sync::mpsc::UnboundedSender<AgentEvent>,
        CancellationToken,
    ) -> Turn,
) where
    Turn: std::future::Future<Output = Result<u32, cowork_agent::AgentError>> + Send + 'static,
{
    let conv = conversation.to_string();
    stream_turn(handle, shell, conversation, move |tx, cancel| {
        let run = turn(agent, conv, tx, cancel);
        async move { run.await.err().map(TurnFailed::from) }
    });
}

pub(crate) fn chat_agent(shell: &Shell) -> Res<Arc<Agent>> {
    shell.agent.lock().unwrap().clone().ok_or_else(|| {
        "no model provider is configured — open Settings → Model, or use /tool commands".into()
    })
}

/// The person rewrote their message `message`: a new branch from there, answered.
#[tauri::command]
#[specta::specta]
pub fn edit_message<R: Runtime>(
    handle: AppHandle<R>,
    shell: State<'_, Shell>,
    conversation: String,
    message: i64,
    text: String,
    attachments: Vec<Part>,
) -> Res<()> {
    let agent = chat_agent(&shell)?;
    let parts = cowork_app::attachments::person_parts(&text, attachments)?;
    agent_turn(
        handle,
        &shell,
        &conversation,
        agent,
        move |agent, conv, tx, cancel| async move {
            agent.edit(&conv, message, parts, &tx, cancel).await
        },
    );
    Ok(())
}

/// Another answer to the person's message that `message` belongs to (a new branch).
#[tauri::command]
#[specta::specta]
pub fn regenerate<R: Runtime>(
    handle: AppHandle<R>,
    shell: State<'_, Shell>,
    conversation: String,
    message: i64,
) -> Res<()> {
    let agent = chat_agent(&shell)?;
    agent_turn(
        handle,
        &shell,
        &conversation,
        agent,
        move |agent, conv, tx, cancel| async move {
            agent.regenerate(&conv, message, &tx, cancel).await
        },
    );
    Ok(())
}

/// Summarizes the older turns now; `compacting`/`compacted` events, then `agent-done`.
#[tauri::command]
#[specta::specta]
pub fn compact_conversation<R: Runtime>(
    handle: AppHandle<R>,
    shell: State<'_, Shell>,
    conversation: String,
) -> Res<()> {
    let agent = chat_agent(&shell)?;
    let conv = conversation.clone();
    stream_turn(
        handle,
        &shell,
        &conversation,
        move |tx, cancel| async move {
            match agent.compact(&conv, &tx, cancel).await {
                Ok(Some(_)) => None,
                Ok(None) => Some(TurnFailed::from(
                    "nothing to compact yet: the conversation is one turn long".to_string(),
                )),
                Err(e) => Some(TurnFailed::from(e)),
            }
        },
    );
    Ok(())
}

/// Runs an agent turn in the background and streams it to the webview: its `agent-event`s,
/// then `agent-done` strictly after the last one (the UI stops its spinner on it). `stop_run`
/// cancels it.
pub(crate) fn stream_turn<R: Runtime, Turn>(
    handle: AppHandle<R>,
    shell: &Shell,
    conversation: &str,
    turn: impl FnOnce(tokio::sync::mpsc::UnboundedSender<AgentEvent>, CancellationToken) -> Turn,
) where
    Turn: std::future::Future<Output = Option<TurnFailed>> + Send + 'static,
{
    let cancel = CancellationToken::new();
    shell
        .runs
        .lock()
        .unwrap()
        .insert(conversation.to_string(), cancel.clone());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let conv = conversation.to_string();
    // `tx` lives in the run: when it ends, the channel closes after its last event.
    let turn = turn(tx, cancel);
    crate::desktop::refresh_status(&handle);
    tauri::async_runtime::spawn(async move {
        let started = std::time::Instant::now();
        let run = tauri::async_runtime::spawn(turn);
        while let Some(event) = rx.recv().await {
            let conversation = conv.clone();
            push(
                &handle,
                AgentEventPayload {
                    conversation,
                    event,
                },
            );
        }
        let failed = run.await.unwrap_or_else(|e| {
            Some(TurnFailed::from(format!(
                "the run stopped unexpectedly: {e}"
            )))
        });
        handle.state::<Shell>().runs.lock().unwrap().remove(&conv);
        crate::desktop::on_turn_done(&handle, &conv, started.elapsed()).await;
        push(
            &handle,
            AgentDone {
                conversation: conv,
                remedy: failed.as_ref().and_then(|f| f.remedy),
                error: failed.map(|f| f.message),
            },
        );
    });
}

#[tauri::command]
#[specta::specta]
pub fn stop_run(shell: State<'_, Shell>, conversation: String) {
    if let Some(token) = shell.runs.lock().unwrap().remove(&conversation) {
        token.cancel();
    }
}

/// Files the person picks to attach (the desktop's chooser); empty when they cancel.
#[tauri::command]
#[specta::specta]
pub async fn pick_files<R: Runtime>(handle: AppHandle<R>) -> Vec<String> {
    use tauri_plugin_dialog::DialogExt;
    let (tx, rx) = oneshot::channel();
    handle.dialog().file().pick_files(move |files| {
        let _ = tx.send(
            files
                .unwrap_or_default()
                .into_iter()
                .filter_map(|f| f.into_path().ok())
                .collect::<Vec<_>>(),
        );
    });
    rx.await
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.display().to_string())
        .collect()
}

/// A file the person picked or dropped, read for a message (reviewed; their pick grants it).
#[tauri::command]
#[specta::specta]
pub async fn attach_path(shell: State<'_, Shell>, conversation: String, path: String) -> Res<Part> {
    cowork_app::attachments::attach_file(
        shell.app.scheduler(),
        &conversation,
        std::path::Path::new(&path),
    )
    .await
}

/// A toolpack server's resource the person picked, as an attachment (watched for changes when
/// its server offers subscriptions).
#[tauri::command]
#[specta::specta]
pub async fn attach_resource(
    shell: State<'_, Shell>,
    conversation: String,
    server: String,
    uri: String,
) -> Res<Part> {
    let part = cowork_app::attachments::attach_resource(
        shell.app.scheduler(),
        &conversation,
        &server,
        &uri,
    )
    .await?;
    // Told when it changes, so the composer can read it again before it is sent.
    if let Err(e) = shell.app.watch_resource(&server, &uri).await {
        tracing::warn!("subscribing to {uri} of {server}: {e}");
    }
    Ok(part)
}

/// Bytes the person pasted (a screenshot) or dropped from the web view, as an attachment.
#[tauri::command]
#[specta::specta]
pub fn attach_pasted(name: String, data_base64: String) -> Res<Part> {
    cowork_app::attachments::attach_bytes(&name, &data_base64)
}

/// The UI calls this once the chat input is mounted and focused. With COWORK_REPORT_READY=1 the
/// time since process start goes to stdout (the launch benchmark reads it).
#[tauri::command]
#[specta::specta]
pub fn ui_ready(shell: State<'_, Shell>) {
    if std::env::var_os("COWORK_REPORT_READY").is_some() {
        println!("ready_ms={}", shell.started.elapsed().as_millis());
    }
}
