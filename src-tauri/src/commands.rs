//! Tauri commands: each one calls the core (through cowork-app) and shapes nothing but the
//! transport. Streaming reaches the webview as events: `agent-event`, `agent-done`,
//! `approval-request`, `tool-event`.

use cowork_agent::{Agent, AgentEvent, ConversationSummary, Conversations, Message, Part};
use cowork_app::notify::NoticeTarget;
use cowork_app::{AgentSettings, App};
use cowork_core::policy::RuleEntry;
use cowork_core::{
    Action, ApprovalChoice, AuditEntry, AuditFilter, CallRequest, Caller, ElicitationAnswer, Mode,
    RuleSource, ToolInfo, VerifyReport,
};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tauri::{AppHandle, Emitter, Manager, Runtime, State};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

pub struct Shell {
    pub started: std::time::Instant,
    pub app: App,
    pub conversations: Conversations,
    pub agent: Mutex<Option<Arc<Agent>>>,
    pub runs: Mutex<HashMap<String, CancellationToken>>,
    /// Asks waiting for the person, by id: what was asked (shown again by a window that
    /// opens later) and where the answer goes.
    pub approvals: crate::Waiting<cowork_core::ApprovalRequest, ApprovalChoice>,
    pub elicitations: crate::Waiting<cowork_core::ElicitationRequest, ElicitationAnswer>,
    /// Fetched toolpacks waiting for the person's decision on their review, by token.
    pub staged: Mutex<HashMap<String, cowork_app::StagedToolpack>>,
    /// Which waiting asks the person has seen (their silence timeout counts from then).
    pub attention: Arc<cowork_core::Attention>,
    pub notifier: Arc<cowork_app::notify::Notifier>,
    /// Tool calls running now, by call id (the tray's "working").
    pub in_flight: Mutex<std::collections::HashSet<String>>,
    /// Outbox messages already notified (the undo window's notice goes out once).
    pub mail_told: Mutex<std::collections::HashSet<i64>>,
    /// Links and files handed over by launches, until the view takes them.
    pub desktop_requests: Mutex<Vec<cowork_app::DesktopRequest>>,
}

type Res<T> = Result<T, String>;

#[derive(Serialize, specta::Type)]
pub struct FirstRun {
    provider_configured: bool,
    provider_error: Option<String>,
    /// Model servers running on this computer (looked for only while no provider is set).
    local_servers: Vec<cowork_app::LocalServer>,
    mode: Mode,
    /// A workspace is open: rules may go to its `.cowork/settings.json`.
    workspace: bool,
}

#[tauri::command]
#[specta::specta]
pub async fn first_run(shell: State<'_, Shell>) -> Res<FirstRun> {
    let (configured, error) = match shell.app.agent() {
        Ok(agent) => {
            let configured = agent.is_some();
            *shell.agent.lock().unwrap() = agent.map(Arc::new);
            (configured, None)
        }
        Err(e) => (false, Some(e)),
    };
    let local_servers = match configured {
        true => vec![],
        false => cowork_app::detect_local_servers(cowork_app::LOCAL_SERVERS).await,
    };
    Ok(FirstRun {
        provider_configured: configured,
        provider_error: error,
        local_servers,
        mode: shell.app.scheduler().policy().mode(),
        workspace: shell.app.scheduler().policy().has_workspace(),
    })
}

/// `agent-event`: one step of a conversation's turn.
#[derive(Clone, Serialize, specta::Type)]
pub struct AgentEventPayload {
    conversation: String,
    event: AgentEvent,
}

/// `agent-done`: a turn ended (`error` says why, when it failed; `remedy`, what the person can
/// do about it).
#[derive(Clone, Serialize, specta::Type)]
pub struct AgentDone {
    conversation: String,
    error: Option<String>,
    remedy: Option<cowork_agent::Remedy>,
}

/// Why a turn failed, for `agent-done`.
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

/// `task-resumed`: a suspended task ran again (by the button or by itself).
#[derive(Clone, Serialize, specta::Type)]
pub struct TaskResumed {
    id: String,
    call: ToolCallView,
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
                .enter_conversation_workspace(&shell.conversations, &id, &running(&shell))?;
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

fn chat_agent(shell: &Shell) -> Res<Arc<Agent>> {
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
        .set_settings(&conversation, &settings)
        .map(|_| ())
}

/// Whether these (unsaved) provider settings reach a server that answers: the models it offers,
/// or the error that names the fix.
#[tauri::command]
#[specta::specta]
pub async fn test_provider(settings: cowork_app::AgentSettings) -> Res<Vec<String>> {
    cowork_app::check_provider(&settings).await
}

/// The models the configured provider offers.
#[tauri::command]
#[specta::specta]
pub async fn list_models(shell: State<'_, Shell>) -> Res<Vec<String>> {
    let agent = chat_agent(&shell)?;
    agent.provider().models().await.map_err(|e| e.to_string())
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

/// Bytes the person pasted (a screenshot) or dropped from the web view, as an attachment.
#[tauri::command]
#[specta::specta]
pub fn attach_pasted(name: String, data_base64: String) -> Res<Part> {
    cowork_app::attachments::attach_bytes(&name, &data_base64)
}

/// Runs an agent turn in the background and streams it to the webview: its `agent-event`s,
/// then `agent-done` strictly after the last one (the UI stops its spinner on it). `stop_run`
/// cancels it.
fn stream_turn<R: Runtime, Turn>(
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
            let _ = handle.emit(
                "agent-event",
                AgentEventPayload {
                    conversation: conv.clone(),
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
        let _ = handle.emit(
            "agent-done",
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

#[tauri::command]
#[specta::specta]
pub fn list_tools(shell: State<'_, Shell>) -> Vec<ToolInfo> {
    shell.app.scheduler().registry().list()
}

#[derive(Clone, Serialize, specta::Type)]
pub struct ToolCallView {
    call_id: String,
    tool: String,
    ok: bool,
    /// The suspension the call waits on, when it stopped for the person.
    suspended: Option<String>,
    text: String,
    /// The tool's structured output (panels like the change review read it).
    structured: Option<serde_json::Value>,
    /// Image blocks (a screenshot), shown under the text.
    images: Vec<cowork_contract::Content>,
    decision: Option<Action>,
    score: Option<u8>,
    duration_ms: u64,
}

/// The person's own act in the window (a slash command, a panel's button): a direct call through
/// the same scheduler, review and audit; the act is its approval (see [`Caller::Person`]).
#[tauri::command]
#[specta::specta]
pub async fn call_tool(
    shell: State<'_, Shell>,
    name: String,
    args: serde_json::Value,
    conversation: String,
    card: Option<String>,
) -> Res<ToolCallView> {
    let mut request = CallRequest::new(&name, args, Caller::Person, &conversation);
    request.caller_ref = card;
    Ok(call_view(&shell.app.scheduler().call(request).await))
}

fn call_view(outcome: &cowork_core::CallOutcome) -> ToolCallView {
    let (ok, text, structured) = match &outcome.result {
        Ok(output) => (true, output.text_content(), output.structured.clone()),
        Err(e) => (false, e.to_string(), None),
    };
    ToolCallView {
        call_id: outcome.call_id.clone(),
        tool: outcome.tool.clone(),
        ok,
        suspended: match &outcome.result {
            Err(cowork_contract::ToolError::Suspended { id, .. }) => Some(id.clone()),
            _ => None,
        },
        text,
        structured,
        images: outcome
            .result
            .as_ref()
            .map(|o| o.images())
            .unwrap_or_default(),
        decision: outcome.review.as_ref().map(|r| r.decision),
        score: outcome.review.as_ref().map(|r| r.score),
        duration_ms: outcome.duration.as_millis() as u64,
    }
}

/// CalDAV and mail accounts: settings only (passwords never come back to the webview).
#[tauri::command]
#[specta::specta]
pub fn list_accounts(shell: State<'_, Shell>) -> Res<Vec<cowork_app::AccountSettings>> {
    shell.app.accounts()
}

/// Saves an account; its password goes to the OS keyring.
#[tauri::command]
#[specta::specta]
pub fn add_account(
    shell: State<'_, Shell>,
    account: cowork_app::AccountSettings,
    password: String,
) -> Res<()> {
    shell.app.add_account(&account, &password)
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

#[tauri::command]
#[specta::specta]
pub fn get_agent_settings(shell: State<'_, Shell>) -> Res<Option<AgentSettings>> {
    AgentSettings::load(&shell.app.home().settings_path())
}

#[tauri::command]
#[specta::specta]
pub fn save_agent_settings(shell: State<'_, Shell>, settings: AgentSettings) -> Res<()> {
    settings.save(&shell.app.home().settings_path())?;
    *shell.agent.lock().unwrap() = shell.app.agent()?.map(Arc::new);
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub fn list_rules(shell: State<'_, Shell>, conversation: Option<String>) -> Vec<RuleEntry> {
    shell
        .app
        .scheduler()
        .policy()
        .rules(conversation.as_deref())
}

/// What adding a rule did.
#[derive(Serialize, specta::Type)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RuleAdded {
    /// Added; `broad` warns of a broad rule added with `force`.
    Added {
        broad: Option<cowork_core::plain::Words>,
    },
    /// Not added: it covers more than a person usually means; the window shows why and adds it
    /// only when the person insists (`force`).
    TooBroad { why: cowork_core::plain::Words },
}

/// Adds a person's rule. A broad allow rule is held back unless `force`.
#[tauri::command]
#[specta::specta]
pub fn add_rule(
    shell: State<'_, Shell>,
    action: Action,
    rule: String,
    source: Option<RuleSource>,
    force: Option<bool>,
) -> Res<RuleAdded> {
    let source = source.unwrap_or(RuleSource::User);
    let added = shell.app.scheduler().policy().add_rule_checked(
        action,
        &rule,
        source,
        force.unwrap_or(false),
    );
    match added {
        Ok(broad) => Ok(RuleAdded::Added { broad }),
        Err(cowork_core::PolicyError::RuleTooBroad { why, .. }) => Ok(RuleAdded::TooBroad { why }),
        Err(other) => Err(other.to_string()),
    }
}

/// Rules that are broken or not applied (an untrusted workspace's allow rules), per file.
#[tauri::command]
#[specta::specta]
pub fn policy_problems(shell: State<'_, Shell>) -> Vec<cowork_core::policy::PolicyProblem> {
    shell.app.scheduler().policy().problems()
}

/// Each open workspace: trusted or not, and exactly what trusting it would allow.
#[tauri::command]
#[specta::specta]
pub fn workspace_reviews(shell: State<'_, Shell>) -> Res<Vec<cowork_app::WorkspaceReview>> {
    let policy = shell.app.scheduler().policy();
    policy
        .workspaces()
        .iter()
        .map(|w| shell.app.workspace_review(&w.root))
        .collect()
}

/// The person trusts a workspace as the dialog showed it (`digest` of what they saw: a file
/// changed meanwhile is refused).
#[tauri::command]
#[specta::specta]
pub fn trust_workspace(
    shell: State<'_, Shell>,
    root: std::path::PathBuf,
    digest: String,
) -> Res<()> {
    shell
        .app
        .scheduler()
        .policy()
        .trust_workspace(&root, &digest)
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn remove_rule(
    shell: State<'_, Shell>,
    rule: String,
    conversation: Option<String>,
) -> Res<usize> {
    shell
        .app
        .scheduler()
        .policy()
        .remove_rule(&rule, conversation.as_deref())
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn set_mode(shell: State<'_, Shell>, mode: Mode) -> Res<()> {
    shell
        .app
        .scheduler()
        .policy()
        .set_mode(mode, true)
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn audit_list(shell: State<'_, Shell>, filter: AuditFilter) -> Res<Vec<AuditEntry>> {
    // Final rows are group-committed just after a call returns; the viewer must show them.
    shell.app.scheduler().flush().map_err(|e| e.to_string())?;
    shell
        .app
        .scheduler()
        .audit()
        .list(&filter)
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn audit_verify(shell: State<'_, Shell>) -> Res<VerifyReport> {
    shell.app.scheduler().flush().map_err(|e| e.to_string())?;
    shell
        .app
        .scheduler()
        .audit()
        .verify()
        .map_err(|e| e.to_string())
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

/// Stores the current provider's API key in the OS keyring. The key is never sent back.
#[tauri::command]
#[specta::specta]
pub fn set_api_key(shell: State<'_, Shell>, key: String) -> Res<()> {
    let settings =
        AgentSettings::load(&shell.app.home().settings_path())?.ok_or("save the provider first")?;
    cowork_app::secrets::set(&settings.keyring_account(), &key)?;
    *shell.agent.lock().unwrap() = shell.app.agent()?.map(Arc::new);
    Ok(())
}

/// Whether a key is stored for the current provider (never the key itself).
#[tauri::command]
#[specta::specta]
pub fn has_api_key(shell: State<'_, Shell>) -> Res<bool> {
    let Some(settings) = AgentSettings::load(&shell.app.home().settings_path())? else {
        return Ok(false);
    };
    Ok(cowork_app::secrets::get(&settings.keyring_account())?.is_some())
}

#[derive(Serialize, specta::Type)]
pub struct ToolpacksView {
    records: std::collections::BTreeMap<String, cowork_app::ToolpackRecord>,
    servers: Vec<cowork_app::ServerStatus>,
}

#[tauri::command]
#[specta::specta]
pub fn list_toolpacks(shell: State<'_, Shell>) -> Res<ToolpacksView> {
    Ok(ToolpacksView {
        records: shell.app.toolpack_records().map_err(|e| e.to_string())?,
        servers: shell.app.mcp_servers(),
    })
}

#[derive(Serialize, specta::Type)]
pub struct StagedView {
    token: String,
    review: cowork_app::ToolpackReview,
}

/// Fetches and unpacks a toolpack and returns its review; nothing runs until `install_toolpack`.
#[tauri::command]
#[specta::specta]
pub async fn stage_toolpack(shell: State<'_, Shell>, source: String) -> Res<StagedView> {
    let staged = shell
        .app
        .stage_toolpack(source.trim(), None)
        .await
        .map_err(|e| e.to_string())?;
    let review = staged.review.clone();
    let token = format!(
        "{}-{}",
        review.name,
        review.sha256.get(..12).unwrap_or_default()
    );
    shell.staged.lock().unwrap().insert(token.clone(), staged);
    Ok(StagedView { token, review })
}

/// The person accepted the review (the modal): install (npm/pip may take a while), start.
#[tauri::command]
#[specta::specta]
pub async fn install_toolpack(
    shell: State<'_, Shell>,
    token: String,
    config: std::collections::BTreeMap<String, serde_json::Value>,
) -> Res<cowork_app::ToolpackRecord> {
    let staged = shell
        .staged
        .lock()
        .unwrap()
        .remove(&token)
        .ok_or("this review expired; install again")?;
    let record = tokio::task::block_in_place(|| shell.app.install_toolpack(staged, config, true))
        .map_err(|e| e.to_string())?;
    shell
        .app
        .toolpacks_settled(std::time::Duration::from_secs(30))
        .await;
    Ok(record)
}

#[tauri::command]
#[specta::specta]
pub fn discard_toolpack(shell: State<'_, Shell>, token: String) {
    if let Some(staged) = shell.staged.lock().unwrap().remove(&token) {
        shell.app.discard_toolpack(staged);
    }
}

#[tauri::command]
#[specta::specta]
pub fn set_toolpack_enabled(shell: State<'_, Shell>, name: String, enabled: bool) -> Res<()> {
    shell
        .app
        .set_toolpack_enabled(&name, enabled)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn remove_toolpack(shell: State<'_, Shell>, name: String) -> Res<()> {
    shell.app.remove_toolpack(&name).map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn reload_toolpacks(shell: State<'_, Shell>) -> Res<Vec<cowork_app::Started>> {
    shell.app.reload_toolpacks().map_err(|e| e.to_string())
}

/// The end of a server's stderr log (what the UI shows under "Logs").
#[tauri::command]
#[specta::specta]
pub fn toolpack_log(shell: State<'_, Shell>, server: String) -> Res<String> {
    let status = shell
        .app
        .mcp_servers()
        .into_iter()
        .find(|s| s.name == server)
        .ok_or("no such server")?;
    let text = std::fs::read_to_string(&status.log_file).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    Ok(lines[lines.len().saturating_sub(200)..].join("\n"))
}

/// The memory panel's browsing: the newest entries (searching is `search_vault` through
/// `call_tool`; edits and deletes are vault tools too, reviewed and audited).
#[tauri::command]
#[specta::specta]
pub fn vault_recent(
    shell: State<'_, Shell>,
    filter: cowork_app::VaultFilter,
    limit: usize,
) -> Res<Vec<cowork_app::VaultEntry>> {
    shell.app.vault().recent(&filter, limit)
}

/// One entry as indexed (the editor's starting text).
#[tauri::command]
#[specta::specta]
pub fn vault_entry(shell: State<'_, Shell>, id: String) -> Res<Option<cowork_app::VaultEntry>> {
    shell.app.vault().get(&id)
}

#[derive(serde::Serialize, specta::Type)]
pub struct VaultStatus {
    stats: cowork_app::VaultStats,
    progress: cowork_app::VaultProgress,
}

/// Entries, model, problems, and what the indexer is doing now.
#[tauri::command]
#[specta::specta]
pub fn vault_status(shell: State<'_, Shell>) -> Res<VaultStatus> {
    let vault = shell.app.vault();
    Ok(VaultStatus {
        stats: vault.stats()?,
        progress: vault.progress().borrow().clone(),
    })
}

#[tauri::command]
#[specta::specta]
pub async fn vault_reindex(shell: State<'_, Shell>) -> Res<cowork_app::ReindexReport> {
    shell.app.vault().reindex().await
}

#[tauri::command]
#[specta::specta]
pub fn get_vault_settings(shell: State<'_, Shell>) -> Res<cowork_app::VaultSettings> {
    cowork_app::VaultSettings::load(&shell.app.home().settings_path())
}

/// Saves the vault settings and switches to their model now; re-embedding runs in the
/// background (its progress is in `vault_status`).
#[tauri::command]
#[specta::specta]
pub fn save_vault_settings(
    shell: State<'_, Shell>,
    settings: cowork_app::VaultSettings,
) -> Res<()> {
    tauri::async_runtime::spawn(shell.app.set_vault_settings(settings)?);
    Ok(())
}

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
    let _ = handle.emit(
        "task-resumed",
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

/// The microphones and speakers cpal sees (Settings → Voice), defaults first.
#[derive(Clone, Debug, serde::Serialize, specta::Type)]
pub struct VoiceDevices {
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

#[tauri::command]
#[specta::specta]
pub async fn voice_devices() -> Res<VoiceDevices> {
    // Enumerating devices opens each briefly: off the main thread.
    tauri::async_runtime::spawn_blocking(|| VoiceDevices {
        inputs: cowork_app::voice_input_devices(),
        outputs: cowork_app::voice_output_devices(),
    })
    .await
    .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn get_voice_settings(shell: State<'_, Shell>) -> Res<cowork_app::VoiceSettings> {
    cowork_app::VoiceSettings::load(&shell.app.home().settings_path())
}

/// Saves the voice settings; the next recording or reply read aloud uses them.
#[tauri::command]
#[specta::specta]
pub fn save_voice_settings(
    shell: State<'_, Shell>,
    settings: cowork_app::VoiceSettings,
) -> Res<()> {
    settings.save(&shell.app.home().settings_path())
}

#[tauri::command]
#[specta::specta]
pub fn get_web_settings(shell: State<'_, Shell>) -> Res<cowork_app::WebSettings> {
    cowork_app::WebSettings::load(&shell.app.home().settings_path())
}

/// Saves the web settings; the next web call uses them (a changed proxy too).
#[tauri::command]
#[specta::specta]
pub fn save_web_settings(shell: State<'_, Shell>, settings: cowork_app::WebSettings) -> Res<()> {
    settings.save(&shell.app.home().settings_path())
}

/// Stores a search provider's key in the OS keyring. The key is never sent back.
#[tauri::command]
#[specta::specta]
pub fn set_web_key(provider: cowork_app::SearchProvider, key: String) -> Res<()> {
    cowork_app::set_web_key(provider, &key)
}

#[tauri::command]
#[specta::specta]
pub fn has_web_key(provider: cowork_app::SearchProvider) -> Res<bool> {
    cowork_app::has_web_key(provider)
}

/// Opens a web link (a search result, a headline) in the system browser.
#[tauri::command]
#[specta::specta]
pub fn open_link<R: tauri::Runtime>(app: tauri::AppHandle<R>, url: String) -> Res<()> {
    use tauri_plugin_opener::OpenerExt;
    let url = cowork_app::link_to_open(&url)?;
    app.opener()
        .open_url(url, None::<&str>)
        .map_err(|e| format!("the system browser could not be opened: {e}"))
}

/// Ends the recording in progress (the person let go of the key, keeping what was said) and
/// any speech being read aloud (Esc). Recording and speaking are tool calls (`call_tool`).
#[tauri::command]
#[specta::specta]
pub fn voice_stop(shell: State<'_, Shell>) -> bool {
    shell.app.voice().stop()
}

/// Links and files handed to Cowork (`cowork://toolpack/install?…`, a `.mcpb`) not yet shown:
/// each opens the usual install review.
#[tauri::command]
#[specta::specta]
pub fn take_desktop_requests<R: Runtime>(handle: AppHandle<R>) -> Vec<cowork_app::DesktopRequest> {
    crate::desktop::take_requests(&handle)
}

#[tauri::command]
#[specta::specta]
pub fn get_desktop_settings(shell: State<'_, Shell>) -> Res<cowork_app::DesktopSettings> {
    cowork_app::DesktopSettings::load(&shell.app.home().settings_path())
}

#[tauri::command]
#[specta::specta]
pub fn save_desktop_settings(
    shell: State<'_, Shell>,
    settings: cowork_app::DesktopSettings,
) -> Res<()> {
    settings.save(&shell.app.home().settings_path())?;
    let program = std::env::current_exe().map_err(|e| e.to_string())?;
    cowork_app::set_autostart(settings.autostart, &program)
}

/// Pauses (or resumes) every tool, as the tray's "Pause all tools" does.
#[tauri::command]
#[specta::specta]
pub fn set_tools_paused<R: Runtime>(handle: AppHandle<R>, paused: bool) {
    crate::desktop::set_paused(&handle, paused);
}

/// The tray's status now (then pushed as `desktop-status`).
#[tauri::command]
#[specta::specta]
pub fn desktop_status<R: Runtime>(handle: AppHandle<R>) -> crate::desktop::Status {
    crate::desktop::status(&handle)
}

/// The folder the chat works in and the recent ones (the picker above the chat).
#[derive(Serialize, specta::Type)]
pub struct WorkspaceState {
    open: Option<String>,
    recent: Vec<String>,
}

fn workspace_state_of(shell: &Shell) -> WorkspaceState {
    let recent = cowork_app::DesktopSettings::load(&shell.app.home().settings_path())
        .unwrap_or_default()
        .recent_workspaces;
    WorkspaceState {
        open: shell.app.workspace().map(|p| p.display().to_string()),
        recent: recent.iter().map(|p| p.display().to_string()).collect(),
    }
}

fn running(shell: &Shell) -> Vec<String> {
    shell.runs.lock().unwrap().keys().cloned().collect()
}

#[tauri::command]
#[specta::specta]
pub fn workspace_state(shell: State<'_, Shell>) -> WorkspaceState {
    workspace_state_of(&shell)
}

/// The person opens a folder for this conversation (or, with no conversation yet, for the
/// chat about to start); `folder: null` closes it.
#[tauri::command]
#[specta::specta]
pub fn choose_workspace(
    shell: State<'_, Shell>,
    conversation: Option<String>,
    folder: Option<String>,
) -> Res<WorkspaceState> {
    shell.app.choose_workspace(
        &shell.conversations,
        conversation.as_deref(),
        folder.as_deref().map(std::path::Path::new),
        &running(&shell),
    )?;
    Ok(workspace_state_of(&shell))
}

/// The person opened a conversation: its folder opens with it.
#[tauri::command]
#[specta::specta]
pub fn enter_conversation(shell: State<'_, Shell>, conversation: String) -> Res<WorkspaceState> {
    shell.app.enter_conversation_workspace(
        &shell.conversations,
        &conversation,
        &running(&shell),
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

/// The quick-ask window's answer continues in the main window.
#[tauri::command]
#[specta::specta]
pub fn open_in_chat<R: Runtime>(handle: AppHandle<R>, conversation: String) {
    crate::desktop::open_in_chat(&handle, conversation);
}

/// Closes the quick-ask window (Escape).
#[tauri::command]
#[specta::specta]
pub fn close_quick_ask<R: Runtime>(handle: AppHandle<R>) {
    if let Some(quick) = handle.get_webview_window("quick") {
        let _ = quick.close();
    }
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
        approvals: crate::still_waiting(&shell.approvals),
        elicitations: crate::still_waiting(&shell.elicitations),
    }
}

/// Ctrl+W: the window closes; Cowork stays in the tray when the person chose so.
#[tauri::command]
#[specta::specta]
pub fn close_window<R: Runtime>(window: tauri::Window<R>) {
    let _ = window.close();
}

/// Settings → Schedules: every schedule and its next time.
#[tauri::command]
#[specta::specta]
pub fn list_schedules(shell: State<'_, Shell>) -> Res<Vec<cowork_app::chains::Schedule>> {
    shell.app.schedules().list().map_err(|e| e.to_string())
}

/// The run history (of one schedule, or all), newest first.
#[tauri::command]
#[specta::specta]
pub fn schedule_runs(
    shell: State<'_, Shell>,
    name: Option<String>,
) -> Res<Vec<cowork_app::chains::ScheduleRun>> {
    shell
        .app
        .schedules()
        .history(name.as_deref(), 30)
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn remove_schedule(shell: State<'_, Shell>, name: String) -> Res<()> {
    shell
        .app
        .schedules()
        .remove(&name)
        .map_err(|e| e.to_string())
}

/// Settings → Schedules, the new-schedule form: the pattern in words and its next times, asked
/// as the person types.
#[tauri::command]
#[specta::specta]
pub fn preview_schedule(cron: String) -> Res<cowork_app::chains::CronPreview> {
    cowork_app::chains::preview(&cron, chrono::Utc::now(), 3).map_err(|e| e.to_string())
}

/// A scheduled prompt made in the window: it is granted nothing, so whatever needs an approval
/// waits for the person as a task.
#[tauri::command]
#[specta::specta]
pub fn add_prompt_schedule(
    shell: State<'_, Shell>,
    name: Option<String>,
    cron: String,
    prompt: String,
    missed: cowork_app::chains::Missed,
) -> Res<cowork_app::chains::Schedule> {
    shell
        .app
        .schedules()
        .add_prompt(name.as_deref(), &cron, &prompt, missed, chrono::Utc::now())
        .map_err(|e| e.to_string())
}

/// Settings → This computer: what works here and what is missing, with each fix (the same
/// checks as `cowork doctor`).
#[tauri::command]
#[specta::specta]
pub async fn doctor(shell: State<'_, Shell>) -> Res<Vec<cowork_app::doctor::Finding>> {
    let home = shell.app.home().root().to_path_buf();
    cowork_app::doctor::examine(Some(home), &cowork_app::doctor::Place::here())
        .await
        .map_err(|e| e.to_string())
}

/// Settings → Desktop: quick ask on `shortcut` through GNOME's own custom shortcuts (a Wayland
/// session lets no app take a global key). Says what it did.
#[tauri::command]
#[specta::specta]
pub fn bind_quick_ask_in_gnome(shortcut: String) -> Res<String> {
    let program = std::env::current_exe().map_err(|e| e.to_string())?;
    cowork_app::gnome_shortcut::Gsettings::default()
        .bind_quick_ask(&shortcut, &program)
        .map_err(|e| e.to_string())
}

/// Settings → This computer: the models and the browser driver Cowork downloads, each with
/// whether it is here and what fetching it costs.
#[tauri::command]
#[specta::specta]
pub fn list_assets() -> Res<Vec<cowork_app::assets::AssetStatus>> {
    cowork_app::assets::list().map_err(|e| e.to_string())
}

/// Downloads one asset, pushing `asset-progress` events; answers when it is ready or failed.
#[tauri::command]
#[specta::specta]
pub async fn fetch_asset<R: Runtime>(
    handle: AppHandle<R>,
    shell: State<'_, Shell>,
    id: String,
) -> Res<()> {
    let asset = cowork_app::assets::find(&id)
        .ok_or_else(|| cowork_app::assets::AssetError::Unknown(id.clone()).to_string())?;
    let home = shell.app.home().root().to_path_buf();
    let fetcher = cowork_app::assets::fetcher(Some(home), None)?;
    fetcher
        .fetch(asset, &|progress| {
            let _ = handle.emit("asset-progress", progress);
        })
        .await
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn get_asset_settings(shell: State<'_, Shell>) -> Res<cowork_app::assets::AssetSettings> {
    cowork_app::assets::AssetSettings::load(&shell.app.home().settings_path())
}

#[tauri::command]
#[specta::specta]
pub fn save_asset_settings(
    shell: State<'_, Shell>,
    settings: cowork_app::assets::AssetSettings,
) -> Res<()> {
    settings.save(&shell.app.home().settings_path())
}
