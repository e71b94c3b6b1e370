//! One MCP server under supervision: spawn (stdio) or connect (streamable HTTP), initialize,
//! discover tools, serve calls, and restart with exponential backoff when it dies.
//!
//! Lifecycle: configured → starting → running (initialized, tools discovered, registered) →
//! restarting (backoff) → … → stopped | failed. While it is down its tools stay in the catalog
//! and calls fail at once with an error that says so; a call in flight when it dies fails with
//! "exited during the call", never hangs.

use cowork_contract::{Content, Progress, ProgressSink, ToolContext, ToolError, ToolOutput};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, ProgressNotificationParam,
    ProgressToken, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How to reach a server.
#[derive(Clone, Debug)]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout; stderr goes to the server's log.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (`http://127.0.0.1:P/mcp`), with the person's sign-in to it when it
    /// asks for one (OAuth tokens in `oauth`).
    Http {
        url: String,
        /// Sent with every request (an API key the manifest names); never logged.
        headers: BTreeMap<String, String>,
        oauth: Option<crate::auth::OauthStore>,
        protocol: HttpProtocol,
    },
}

/// Which of MCP's two HTTP transports a remote server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpProtocol {
    /// Streamable HTTP (2025-03-26 and later): one endpoint for every message.
    Streamable,
    /// HTTP+SSE (2024-11-05): an event stream naming a second endpoint for messages.
    LegacySse,
}

#[derive(Clone, Debug)]
pub struct LaunchSpec {
    /// The server's name in tool names (`mcp__<name>__<tool>`).
    pub name: String,
    pub transport: Transport,
    pub log_file: PathBuf,
    pub restart: RestartPolicy,
    /// Where a stdio server runs: confined by bubblewrap, or not (and why).
    pub sandbox: crate::sandbox::Sandbox,
}

#[derive(Clone, Copy, Debug)]
pub struct RestartPolicy {
    /// First backoff; doubles per consecutive failure.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Consecutive failed starts (or crashes soon after start) before giving up.
    pub max_restarts: u32,
    /// The same, for a server that has not yet answered once: a pack that cannot start (a missing
    /// module, a bad command line) fails the same way each time, and a person installing it (or a
    /// one-shot `cowork` command) should hear so at once, not after the backoff series' 8 s.
    pub max_first_restarts: u32,
    /// Initialization (spawn + handshake + tools/list) must finish within this.
    pub start_timeout: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(30),
            max_restarts: 5,
            max_first_restarts: 1,
            start_timeout: Duration::from_secs(30),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    Configured,
    Starting,
    Running,
    Restarting,
    Stopped,
    Failed,
    /// A remote server that asks the person to sign in, who has not (or whose sign-in ended).
    NeedsSignIn,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    pub restarts: u32,
    pub tools: usize,
    pub pid: Option<u32>,
    pub last_error: Option<String>,
    pub log_file: PathBuf,
    /// When a tool of this server was last called (toolpacks.json's `lastUsed` shows it).
    #[serde(skip)]
    pub last_used: Option<std::time::SystemTime>,
}

type OnChange = Arc<dyn Fn() + Send + Sync>;

/// A server's request for input from the person (MCP elicitation, form mode).
#[derive(Clone, Debug)]
pub struct Elicitation {
    pub server: String,
    pub message: String,
    /// The requested JSON Schema (a flat object).
    pub schema: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ElicitReply {
    Accept(Value),
    Decline,
    Cancel,
}

/// Who shows elicitations to the person (the app routes them to the scheduler's Approver).
pub type Elicitor =
    Arc<dyn Fn(Elicitation) -> futures::future::BoxFuture<'static, ElicitReply> + Send + Sync>;

/// A server asks the person's model (MCP sampling): its words, made printable. Only text is
/// passed on; the server's own context (`includeContext`) is never added.
#[derive(Clone, Debug)]
pub struct SamplingRequest {
    pub server: String,
    pub system: Option<String>,
    pub messages: Vec<SampledMessage>,
    pub max_tokens: u32,
    /// Cancelled when the server withdraws the request.
    pub cancel: CancellationToken,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SampledMessage {
    /// Given as the model's earlier turn (MCP role `assistant`) — the server wrote it all the
    /// same — else the server's question.
    pub from_model: bool,
    pub text: String,
}

/// The model's answer, and which model gave it.
#[derive(Clone, Debug)]
pub struct SamplingReply {
    pub model: String,
    pub text: String,
    pub hit_limit: bool,
}

/// Who answers sampling requests (the app: through the gate, with the person's model). An
/// error is the refusal's reason, which the server reads.
pub type Sampler = Arc<
    dyn Fn(SamplingRequest) -> futures::future::BoxFuture<'static, Result<SamplingReply, String>>
        + Send
        + Sync,
>;

/// The person's workspace folders now (MCP roots are offered from them).
pub type Workspace = Arc<dyn Fn() -> Vec<PathBuf> + Send + Sync>;

/// What the client offers servers beyond calls: someone to answer their forms, and the
/// workspace to tell them about (roots). Without either, the capability is not declared.
#[derive(Clone, Default)]
pub struct Offers {
    pub elicitor: Option<Elicitor>,
    pub workspace: Option<Workspace>,
    pub sampler: Option<Sampler>,
    /// Who hears that a subscribed resource changed (`server`, `uri`).
    pub watcher: Option<Watcher>,
}

/// Told that a resource Cowork subscribed to changed: the server's name and the resource's URI.
pub type Watcher = Arc<dyn Fn(&str, &str) + Send + Sync>;

struct Inner {
    spec: LaunchSpec,
    status: Mutex<ServerStatus>,
    peer: RwLock<Option<Peer<RoleClient>>>,
    tools: RwLock<Vec<rmcp::model::Tool>>,
    /// Where each call's progress notifications go.
    progress: Mutex<Routes>,
    on_change: OnChange,
    offers: Offers,
    stop: CancellationToken,
    /// Bumped on every state change; `wait_settled` watches it.
    changed: watch::Sender<u64>,
    /// The running stdio server's process group (its pid): ended with the server, so neither a
    /// server that ignores EOF nor its children outlive the command or app that started them.
    group: Mutex<Option<i32>>,
    /// For a confined server granted folders to change: what they held at the last look, so
    /// that what it leaves there for the person's own git is held back (see `confine::Watch`).
    watch: Mutex<Option<cowork_contract::confine::Watch>>,
    /// The last connection was refused for want of a sign-in (set by `connect_http`).
    wants_sign_in: std::sync::atomic::AtomicBool,
    /// Tool calls Cowork has in flight to this server: only while one runs may it ask the
    /// person's model (sampling), so a server cannot raise asks out of the blue.
    calls: std::sync::atomic::AtomicUsize,
}

/// A tool call in flight, counted in `Inner::calls` for as long as it lives.
struct Busy(Arc<Inner>);

impl Busy {
    fn enter(inner: &Arc<Inner>) -> Busy {
        inner
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Busy(inner.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0
            .calls
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Inner {
    /// The workspace folders the server can reach (see `list_roots`).
    fn reachable_roots(&self) -> Vec<PathBuf> {
        let Some(workspace) = &self.offers.workspace else {
            return Vec::new();
        };
        let roots = workspace();
        match (&self.spec.transport, &self.spec.sandbox) {
            (Transport::Http { .. }, _) => Vec::new(),
            (_, crate::sandbox::Sandbox::Unconfined(_)) => roots,
            (_, crate::sandbox::Sandbox::Confined(c)) => {
                // A workspace folder inside a granted one, or granted folders inside the
                // workspace: the overlap, never a folder the sandbox hides.
                let granted: Vec<&PathBuf> = c.read.iter().chain(&c.write).collect();
                let mut reachable: Vec<PathBuf> = Vec::new();
                for root in roots {
                    if granted.iter().any(|g| root.starts_with(g)) {
                        reachable.push(root);
                    } else {
                        let inside = granted.iter().filter(|g| g.starts_with(&root));
                        reachable.extend(inside.map(|g| (*g).clone()));
                    }
                }
                reachable.sort();
                reachable.dedup();
                reachable
            }
        }
    }

    /// The confinement of a server that may change folders of the person's, if this is one.
    fn writable_jail(&self) -> Option<cowork_contract::confine::Confinement> {
        match &self.spec.sandbox {
            crate::sandbox::Sandbox::Confined(c) if !c.write.is_empty() => Some(c.jail()),
            _ => None,
        }
    }

    /// Starts watching the server's writable grants from now (at launch); what an earlier run
    /// of it left since the last look is held back first (it may have died mid-call).
    fn start_watch(&self) {
        let mut slot = self.watch.lock().unwrap();
        if let Some(earlier) = slot.take() {
            self.logged(earlier.check().notes(&Default::default()));
        }
        *slot = self.writable_jail().map(|jail| jail.watch());
    }

    /// Looks at the server's writable grants since the last look: what it left where the
    /// person's git would run it is held back now, and the next look starts from here. A
    /// server runs between calls too, so every call's end is a look (and its words go with the
    /// call's result), not only the server's exit.
    fn look_again(&self, env: &cowork_contract::EffectEnv) -> Vec<String> {
        let mut slot = self.watch.lock().unwrap();
        let (Some(watch), Some(jail)) = (slot.as_ref(), self.writable_jail()) else {
            return vec![];
        };
        let notes = watch.check().notes(env);
        *slot = Some(jail.watch());
        self.logged(notes)
    }

    fn logged(&self, notes: Vec<String>) -> Vec<String> {
        if !notes.is_empty() {
            tracing::warn!(server = %self.spec.name, notes = ?notes, "an MCP server left configuration behind");
        }
        notes
    }

    /// Signals the server's whole process group, once.
    fn end_group(&self, signal: i32) {
        if let Some(pid) = self.group.lock().unwrap().take() {
            // SAFETY: kill(2) on the process group this server was started in (its own).
            unsafe {
                libc::kill(-pid, signal);
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.end_group(libc::SIGKILL);
    }
}

/// A cheap handle to a supervised server.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

impl McpServer {
    /// The person's workspace changed: a running server that was told about roots asks again.
    #[allow(deprecated)]
    pub fn roots_changed(&self) {
        let peer = self.inner.peer.read().unwrap().clone();
        if let (Some(peer), Some(_)) = (peer, &self.inner.offers.workspace) {
            tokio::spawn(async move {
                let _ = peer.notify_roots_list_changed().await;
            });
        }
    }

    /// Starts supervising (spawns a task on the current tokio runtime). `on_change` runs when
    /// the tool list changes (first discovery, `list_changed`, restart).
    pub fn start(spec: LaunchSpec, on_change: OnChange) -> McpServer {
        McpServer::start_with(spec, on_change, Offers::default())
    }

    /// Like [`McpServer::start`], with what the client offers the server (forms shown to the
    /// person, the workspace as roots); what is not offered is not declared.
    pub fn start_with(spec: LaunchSpec, on_change: OnChange, offers: Offers) -> McpServer {
        let status = ServerStatus {
            name: spec.name.clone(),
            state: ServerState::Configured,
            restarts: 0,
            tools: 0,
            pid: None,
            last_error: None,
            log_file: spec.log_file.clone(),
            last_used: None,
        };
        let inner = Arc::new(Inner {
            spec,
            status: Mutex::new(status),
            peer: RwLock::new(None),
            tools: RwLock::new(Vec::new()),
            progress: Mutex::new(Routes::default()),
            on_change,
            offers,
            stop: CancellationToken::new(),
            changed: watch::channel(0).0,
            group: Mutex::new(None),
            watch: Mutex::new(None),
            wants_sign_in: Default::default(),
            calls: Default::default(),
        });
        tokio::spawn(supervise(inner.clone()));
        McpServer { inner }
    }

    pub fn name(&self) -> &str {
        &self.inner.spec.name
    }

    pub fn status(&self) -> ServerStatus {
        self.inner.status.lock().unwrap().clone()
    }

    /// Whether the server can reach the network: confined with the network granted, or not
    /// confined at all (sandbox off, no bubblewrap, a remote server).
    pub fn has_network(&self) -> bool {
        match &self.inner.spec.sandbox {
            crate::sandbox::Sandbox::Confined(c) => c.network,
            crate::sandbox::Sandbox::Unconfined(_) => true,
        }
    }

    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.inner.tools.read().unwrap().clone()
    }

    /// Stops the server for good (disable, uninstall, app exit).
    pub fn stop(&self) {
        self.inner.stop.cancel();
        // Not left to the server's goodwill: EOF on stdin is a request a server may ignore.
        self.inner.end_group(libc::SIGKILL);
    }

    /// Waits until the server is running, stopped or failed (not starting or in backoff).
    pub async fn wait_settled(&self, limit: Duration) -> ServerStatus {
        let mut rx = self.inner.changed.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let status = self.status();
            if matches!(
                status.state,
                ServerState::Running
                    | ServerState::Stopped
                    | ServerState::Failed
                    | ServerState::NeedsSignIn
            ) {
                return status;
            }
            if tokio::time::timeout_at(deadline, rx.changed())
                .await
                .is_err()
            {
                return status;
            }
        }
    }

    /// The live connection, or an error saying why there is none (and whether to retry).
    pub(crate) fn peer(&self) -> Result<Peer<RoleClient>, ToolError> {
        self.inner.peer.read().unwrap().clone().ok_or_else(|| {
            let s = self.status();
            let why = s.last_error.as_deref().unwrap_or("not started yet");
            let msg = match s.state {
                ServerState::Failed => format!(
                    "MCP server {} failed after {} restarts ({why}); its log: {}",
                    s.name,
                    s.restarts,
                    s.log_file.display()
                ),
                ServerState::Stopped => format!(
                    "MCP server {} is stopped; enable its toolpack to use it",
                    s.name
                ),
                ServerState::NeedsSignIn => why.to_string(),
                _ => format!(
                    "MCP server {} is {} ({why}); try again in a moment",
                    s.name,
                    state_word(s.state)
                ),
            };
            if matches!(
                s.state,
                ServerState::Failed | ServerState::Stopped | ServerState::NeedsSignIn
            ) {
                ToolError::failed(msg)
            } else {
                ToolError::transient(msg)
            }
        })
    }

    /// `resources/list` (all pages), as the protocol's JSON.
    pub async fn list_resources(&self) -> Result<Vec<Value>, ToolError> {
        let list = self
            .peer()?
            .list_all_resources()
            .await
            .map_err(|e| self.service_error(e))?;
        Ok(as_json(&list))
    }

    /// `resources/subscribe`, when the server offers subscriptions (false when it does not):
    /// its `resources/updated` then reaches the gateway's watcher.
    /// Legacy in 2026-07-28 (replaced by `subscriptions/listen`); Cowork's handshake is the
    /// 2025-11-25 revision, where it is the way, and rmcp marks it deprecated.
    #[allow(deprecated)]
    pub async fn subscribe(&self, uri: &str) -> Result<bool, ToolError> {
        let peer = self.peer()?;
        let offers = peer
            .peer_info()
            .and_then(|info| info.capabilities.resources.clone())
            .and_then(|r| r.subscribe)
            .unwrap_or(false);
        if offers {
            peer.subscribe(rmcp::model::SubscribeRequestParams::new(uri))
                .await
                .map_err(|e| self.service_error(e))?;
        }
        Ok(offers)
    }

    /// `resources/read`: the contents, as the protocol's JSON.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, ToolError> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        let result = self
            .peer()?
            .read_resource(params)
            .await
            .map_err(|e| self.service_error(e))?;
        Ok(serde_json::to_value(result).unwrap_or_default())
    }

    /// `prompts/list` (all pages).
    pub async fn list_prompts(&self) -> Result<Vec<Value>, ToolError> {
        let list = self
            .peer()?
            .list_all_prompts()
            .await
            .map_err(|e| self.service_error(e))?;
        Ok(as_json(&list))
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<Value, ToolError> {
        let mut params = rmcp::model::GetPromptRequestParams::new(name);
        params.arguments = Some(arguments);
        let result = self
            .peer()?
            .get_prompt(params)
            .await
            .map_err(|e| self.service_error(e))?;
        Ok(serde_json::to_value(result).unwrap_or_default())
    }

    /// One `tools/call`, or, when the call is resumed from a suspension that waited on this
    /// server's task, that task followed again. Dropping the future (timeout, cancel) sends
    /// `notifications/cancelled`.
    pub async fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        self.inner.status.lock().unwrap().last_used = Some(std::time::SystemTime::now());
        let result = match crate::tasks::resumed_task(ctx, self.name(), tool) {
            Some(task) => self.follow_again(task, tool, ctx).await,
            None => self.call_tool(tool, args, ctx).await,
        };
        let left = self.inner.look_again(&ctx.env);
        convert(result?).map(|mut output| {
            for note in left {
                output.content.push(Content::Text {
                    text: format!("[{note}]"),
                });
            }
            output
        })
    }

    async fn call_tool(
        &self,
        tool: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<rmcp::model::CallToolResult, ToolError> {
        let inner = &self.inner;
        let peer = self.peer()?;
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => Default::default(),
            other => {
                return Err(ToolError::invalid(format!(
                    "MCP arguments must be an object, got {other}"
                )));
            }
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let _busy = Busy::enter(inner);
        let handle = peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.service_error(e))?;
        let token = handle.progress_token.clone();
        inner
            .progress
            .lock()
            .unwrap()
            .open(token.clone(), ctx.progress.clone());
        let task_peer = peer.clone();
        let probe = matches!(inner.spec.transport, Transport::Http { .. }).then(|| peer.clone());
        let mut guard = InFlight {
            inner: inner.clone(),
            peer,
            id: Some(handle.id.clone()),
            token,
        };
        // Over HTTP nothing tells us the server died (no child process, no closed pipe): a
        // long call pings it meanwhile and ends as soon as the server cannot be reached.
        let response = match probe {
            None => handle.await_response().await,
            Some(probe) => tokio::select! {
                response = handle.await_response() => response,
                why = unreachable_server(probe) => {
                    return Err(ToolError::transient(format!(
                        "MCP server {} stopped answering during the call ({why}); `cowork mcp servers` shows its state",
                        self.name()
                    )));
                }
            },
        };
        guard.id = None;
        drop(guard);
        match response {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(ServerResult::CreateTaskResult(created)) => {
                self.follow_task(&task_peer, created.task, tool, ctx).await
            }
            Ok(other) => Err(ToolError::failed(format!(
                "MCP server {} answered tools/call with an unexpected result: {other:?}",
                self.name()
            ))),
            Err(e) => Err(self.service_error(e)),
        }
    }

    pub(crate) fn service_error(&self, e: rmcp::service::ServiceError) -> ToolError {
        use rmcp::service::ServiceError as E;
        match e {
            E::TransportClosed | E::TransportSend(_) => ToolError::transient(format!(
                "MCP server {} exited during the call; it is restarting (log: {})",
                self.name(),
                self.inner.spec.log_file.display()
            )),
            E::McpError(err) => {
                ToolError::failed(format!("MCP server {}: {}", self.name(), err.message))
            }
            other => ToolError::failed(format!("MCP server {}: {other}", self.name())),
        }
    }
}

/// Returns once the server cannot be reached (a ping fails at the transport: connection refused
/// or closed); a slow answer to a ping is not death — a busy server may be slow.
async fn unreachable_server(peer: Peer<RoleClient>) -> String {
    use rmcp::service::ServiceError as E;
    loop {
        tokio::time::sleep(HEALTH_INTERVAL).await;
        let ping = peer.send_request(ClientRequest::PingRequest(
            rmcp::model::PingRequest::default(),
        ));
        match tokio::time::timeout(HEALTH_INTERVAL * 2, ping).await {
            Ok(Err(E::TransportClosed)) => return "the connection closed".into(),
            Ok(Err(E::TransportSend(e))) => return format!("ping failed: {e}"),
            _ => {}
        }
    }
}

/// How often a long HTTP call checks that its server is still there.
const HEALTH_INTERVAL: Duration = Duration::from_secs(2);

fn state_word(state: ServerState) -> &'static str {
    match state {
        ServerState::Configured | ServerState::Starting => "starting",
        ServerState::Running => "running",
        ServerState::Restarting => "restarting",
        ServerState::Stopped => "stopped",
        ServerState::Failed => "failed",
        ServerState::NeedsSignIn => "waiting for you to sign in",
    }
}

/// Cleans up after a call; if the call did not finish (timeout, cancel), tells the server.
struct InFlight {
    inner: Arc<Inner>,
    peer: Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
    token: ProgressToken,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            self.inner
                .progress
                .lock()
                .unwrap()
                .finish(self.token.clone());
            return;
        };
        self.inner
            .progress
            .lock()
            .unwrap()
            .routes
            .remove(&self.token);
        let peer = self.peer.clone();
        let param = rmcp::model::CancelledNotificationParam::new(
            Some(id),
            Some("cancelled by Cowork (stop or timeout)".into()),
        );
        tokio::spawn(async move {
            let _ = peer.notify_cancelled(param).await;
        });
    }
}

/// How long a finished call still takes its progress notifications. The server sends its last
/// notification before the result, but rmcp hands notifications to a task of their own and the
/// result straight to the caller, so the last step can arrive just after the call returned.
const LATE_PROGRESS_GRACE: Duration = Duration::from_secs(5);

/// The progress sinks of calls in flight, by the progress token rmcp put in their request, and
/// of calls finished less than [`LATE_PROGRESS_GRACE`] ago. Finished routes expire as later
/// calls open and finish, in the order they finished: no task or timer per call (one each cost
/// the MCP layer ~6 % of a call's time in the gateway bench).
#[derive(Default)]
struct Routes {
    routes: HashMap<ProgressToken, ProgressSink>,
    finished: std::collections::VecDeque<(Instant, ProgressToken)>,
}

impl Routes {
    fn open(&mut self, token: ProgressToken, sink: ProgressSink) {
        self.expire(Instant::now());
        self.routes.insert(token, sink);
    }

    fn finish(&mut self, token: ProgressToken) {
        let now = Instant::now();
        self.finished.push_back((now, token));
        self.expire(now);
    }

    fn expire(&mut self, now: Instant) {
        while let Some((at, _)) = self.finished.front() {
            if now.duration_since(*at) < LATE_PROGRESS_GRACE {
                break;
            }
            if let Some((_, token)) = self.finished.pop_front() {
                self.routes.remove(&token);
            }
        }
    }
}

fn convert(result: rmcp::model::CallToolResult) -> Result<ToolOutput, ToolError> {
    // Map through JSON: the block types are plain and stable on the wire, less so in rmcp.
    let content: Vec<Content> = result
        .content
        .iter()
        .filter_map(|block| serde_json::to_value(block).ok())
        .map(|v| match v["type"].as_str() {
            Some("text") => Content::Text {
                text: v["text"].as_str().unwrap_or_default().to_string(),
            },
            Some("image") => Content::Image {
                mime_type: v["mimeType"]
                    .as_str()
                    .unwrap_or("application/octet-stream")
                    .to_string(),
                data_base64: v["data"].as_str().unwrap_or_default().to_string(),
            },
            Some("resource_link") => Content::ResourceLink {
                uri: v["uri"].as_str().unwrap_or_default().to_string(),
                name: v["name"].as_str().unwrap_or_default().to_string(),
                mime_type: v["mimeType"].as_str().map(String::from),
            },
            _ => Content::Json { value: v },
        })
        .collect();
    let output = ToolOutput {
        content,
        structured: result.structured_content.filter(|v| !v.is_null()),
        ..Default::default()
    };
    if result.is_error == Some(true) {
        return Err(ToolError::failed(output.text_content()));
    }
    Ok(output)
}

/// Receives the server's notifications.
#[derive(Clone)]
struct Client {
    inner: Weak<Inner>,
}

impl Client {
    /// What the window lists of the server changed (its resources, its prompts): it is told
    /// as of a tool list change, and lists again.
    fn lists_changed(&self) -> std::future::Ready<()> {
        if let Some(inner) = self.inner.upgrade() {
            (inner.on_change)();
        }
        std::future::ready(())
    }
}

impl ClientHandler for Client {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        if let Some(inner) = self.inner.upgrade() {
            let sink = inner
                .progress
                .lock()
                .unwrap()
                .routes
                .get(&params.progress_token)
                .cloned();
            if let Some(sink) = sink {
                sink(Progress {
                    progress: params.progress,
                    total: params.total,
                    message: params.message,
                });
            }
        }
        std::future::ready(())
    }

    fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        if let Some(inner) = self.inner.upgrade()
            && let Some(watcher) = &inner.offers.watcher
        {
            watcher(&inner.spec.name, &params.uri);
        }
        std::future::ready(())
    }

    fn on_resource_list_changed(
        &self,
        _: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.lists_changed()
    }

    fn on_prompt_list_changed(
        &self,
        _: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.lists_changed()
    }

    fn on_tool_list_changed(
        &self,
        _: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        // Refresh off the service loop: the loop must stay free to deliver the response.
        if let Some(inner) = self.inner.upgrade() {
            tokio::spawn(async move {
                let peer = inner.peer.read().unwrap().clone();
                if let Some(peer) = peer {
                    match peer.list_all_tools().await {
                        Ok(tools) => inner.set_tools(tools),
                        Err(e) => tracing::warn!(
                            "MCP server {}: tools/list after list_changed failed: {e}",
                            inner.spec.name
                        ),
                    }
                }
            });
        }
        std::future::ready(())
    }

    fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _: rmcp::service::RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<rmcp::model::ElicitResult, rmcp::ErrorData>> + Send + '_ {
        use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
        let inner = self.inner.upgrade();
        async move {
            let decline = Ok(ElicitResult::new(ElicitationAction::Decline));
            let Some(inner) = inner else { return decline };
            let Some(elicit) = inner.offers.elicitor.clone() else {
                return decline;
            };
            // URL mode would send the person to a page of the server's choosing: not offered.
            let ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } = request
            else {
                return decline;
            };
            // The server's words reach the person's screen: no control or bidi characters.
            let schema = cowork_contract::text::printable_json(
                serde_json::to_value(&requested_schema).unwrap_or_default(),
            );
            Ok(
                match elicit(Elicitation {
                    server: inner.spec.name.clone(),
                    message: cowork_contract::text::printable_text(&message).into_owned(),
                    schema: schema.clone(),
                })
                .await
                {
                    ElicitReply::Accept(content) => ElicitResult::new(ElicitationAction::Accept)
                        .with_content(with_defaults(content, &schema)),
                    ElicitReply::Decline => ElicitResult::new(ElicitationAction::Decline),
                    ElicitReply::Cancel => ElicitResult::new(ElicitationAction::Cancel),
                },
            )
        }
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        // The handshake's revision: rmcp's default (its latest) has no `initialize` at all.
        info.protocol_version = rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE;
        info.client_info.name = "cowork".into();
        info.client_info.version = env!("CARGO_PKG_VERSION").into();
        let offers = self
            .inner
            .upgrade()
            .map(|i| i.offers.clone())
            .unwrap_or_default();
        if offers.elicitor.is_some() {
            let mut elicitation = rmcp::model::ElicitationCapability::new();
            elicitation.form = Some(Default::default());
            info.capabilities.elicitation = Some(elicitation);
        }
        if offers.workspace.is_some() {
            info.capabilities.roots =
                serde_json::from_value(serde_json::json!({"listChanged": true})).ok();
        }
        if offers.sampler.is_some() {
            info.capabilities.sampling = serde_json::from_value(serde_json::json!({})).ok();
        }
        // Long calls a server runs as tasks are followed to their end (`follow_task`).
        info.capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(rmcp::model::TASKS_EXTENSION_ID.into(), Default::default());
        info
    }

    /// A server asks the person's model: handed to the app's sampler (which reviews it like a
    /// call); a request that is not plain text, or that the sampler refuses, is an error the
    /// server reads.
    /// Sampling leaves the protocol after 2025-11-25 (SEP-2577); servers of that revision still
    /// ask, and rmcp marks its types deprecated.
    #[allow(deprecated)]
    fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<rmcp::model::CreateMessageResult, rmcp::ErrorData>> + Send + '_
    {
        let inner = self.inner.upgrade();
        async move {
            let refuse = |why: String| rmcp::ErrorData::invalid_request(why, None);
            let inner = inner.ok_or_else(|| refuse("Cowork is shutting down".into()))?;
            let sampler =
                inner.offers.sampler.clone().ok_or_else(|| {
                    refuse("this client does not answer sampling requests".into())
                })?;
            // Only while it works on a call of Cowork's: an idle server raising asks at the
            // person (2024/2025 revisions do not tie sampling to a request; rmcp checks 2026's).
            if inner.calls.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                return Err(refuse(
                    "sampling is answered only during a tool call Cowork made to this server"
                        .into(),
                ));
            }
            let mut request = sampling_request(&inner.spec.name, &params).map_err(refuse)?;
            // The server gave up (cancelled, timed out, restarted): so does its ask.
            request.cancel = context.ct.child_token();
            let reply = sampler(request).await.map_err(refuse)?;
            serde_json::from_value(serde_json::json!({
                "model": reply.model,
                "role": "assistant",
                "content": {"type": "text", "text": reply.text},
                "stopReason": if reply.hit_limit { "maxTokens" } else { "endTurn" },
            }))
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))
        }
    }

    /// The workspace folders this server can reach, and nothing wider: all of them for a server
    /// running with the person's rights, those its sandbox was given (or that lie inside one)
    /// for a confined one, none for a remote server (it cannot reach this computer's files, so
    /// their names would only tell it about the person). Roots leave the protocol after
    /// 2025-11-25 (SEP-2577); servers of that revision still ask.
    #[allow(deprecated)]
    fn list_roots(
        &self,
        _: rmcp::service::RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<rmcp::model::ListRootsResult, rmcp::ErrorData>> + Send + '_
    {
        let roots = self
            .inner
            .upgrade()
            .map(|inner| inner.reachable_roots())
            .unwrap_or_default();
        let roots: Vec<serde_json::Value> = roots
            .iter()
            .filter_map(|r| url::Url::from_directory_path(r).ok())
            .map(|u| serde_json::json!({"uri": u.as_str()}))
            .collect();
        std::future::ready(
            serde_json::from_value(serde_json::json!({"roots": roots}))
                .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None)),
        )
    }
}

/// The parts of a sampling request Cowork passes on, as printable text: the messages (text
/// only: an image or audio from a server is refused rather than dropped, so the model never
/// answers a question it did not see) and the system prompt.
#[allow(deprecated)]
fn sampling_request(
    server: &str,
    params: &rmcp::model::CreateMessageRequestParams,
) -> Result<SamplingRequest, String> {
    let printable = |s: &str| cowork_contract::text::printable_text(s).into_owned();
    // Read from the wire form: rmcp's content types vary by revision; the JSON does not.
    let wire = serde_json::to_value(params).map_err(|e| e.to_string())?;
    let mut messages = Vec::new();
    for message in wire["messages"].as_array().into_iter().flatten() {
        let parts = match &message["content"] {
            serde_json::Value::Array(parts) => parts.clone(),
            part => vec![part.clone()],
        };
        for part in parts {
            let Some(text) = part["text"].as_str().filter(|_| part["type"] == "text") else {
                return Err(format!(
                    "only text can be sampled here, not {}",
                    part["type"].as_str().unwrap_or("this content")
                ));
            };
            messages.push(SampledMessage {
                from_model: message["role"] == "assistant",
                text: printable(text),
            });
        }
    }
    if messages.is_empty() {
        return Err("the request has no messages".into());
    }
    Ok(SamplingRequest {
        server: server.to_string(),
        system: params.system_prompt.as_deref().map(printable),
        messages,
        max_tokens: params.max_tokens,
        cancel: CancellationToken::new(),
    })
}

/// An accepted form with the fields the person left untouched set to the form's defaults
/// (SEP-1034: the form shows them filled in, so leaving one is choosing it).
fn with_defaults(content: serde_json::Value, schema: &serde_json::Value) -> serde_json::Value {
    let serde_json::Value::Object(mut fields) = content else {
        return content;
    };
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            if let Some(default) = property.get("default")
                && !fields.contains_key(name)
            {
                fields.insert(name.clone(), default.clone());
            }
        }
    }
    serde_json::Value::Object(fields)
}

impl Inner {
    /// Ends supervision without another try: waiting for the person's sign-in when that is why
    /// the server refused, else failed.
    fn give_up(&self) {
        let state = match self.wants_sign_in.load(std::sync::atomic::Ordering::SeqCst) {
            true => ServerState::NeedsSignIn,
            false => ServerState::Failed,
        };
        self.update(|s| s.state = state);
        (self.on_change)();
    }

    fn update(&self, f: impl FnOnce(&mut ServerStatus)) {
        f(&mut self.status.lock().unwrap());
        self.changed.send_modify(|n| *n += 1);
    }

    fn set_tools(&self, tools: Vec<rmcp::model::Tool>) {
        let count = tools.len();
        *self.tools.write().unwrap() = tools;
        self.update(|s| s.tools = count);
        (self.on_change)();
    }

    /// Err carries whether retrying can help (a missing program will not appear by itself).
    async fn connect(
        self: &Arc<Self>,
    ) -> Result<RunningService<RoleClient, Client>, (String, bool)> {
        let client = Client {
            inner: Arc::downgrade(self),
        };
        let running = match &self.spec.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let transport = self.spawn(command, args, env, cwd.as_deref())?;
                client
                    .serve(transport)
                    .await
                    .map_err(|e| (format!("initialize failed: {e}"), true))?
            }
            Transport::Http {
                url,
                headers,
                oauth,
                protocol: HttpProtocol::Streamable,
            } => match self.connect_http(client.clone(), url, headers, oauth).await {
                Ok(running) => running,
                // The transport's backward compatibility (MCP 2025-03-26): a server that
                // refuses the streamable handshake may speak the older HTTP+SSE at that address.
                Err(streamable)
                    if !self.wants_sign_in.load(std::sync::atomic::Ordering::SeqCst) =>
                {
                    match self.connect_legacy_sse(client, url, headers).await {
                        Ok(running) => {
                            tracing::info!("MCP server {}: {url} speaks HTTP+SSE", self.spec.name);
                            running
                        }
                        Err(_) => return Err(streamable),
                    }
                }
                Err(e) => return Err(e),
            },
            Transport::Http {
                url,
                headers,
                protocol: HttpProtocol::LegacySse,
                ..
            } => self.connect_legacy_sse(client, url, headers).await?,
        };
        let tools = running
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| (format!("tools/list failed: {e}"), true))?;
        *self.peer.write().unwrap() = Some(running.peer().clone());
        self.set_tools(tools);
        Ok(running)
    }

    /// Connects to a server speaking MCP's older HTTP+SSE transport (`legacy_sse.rs`).
    async fn connect_legacy_sse(
        &self,
        client: Client,
        url: &str,
        headers: &BTreeMap<String, String>,
    ) -> Result<RunningService<RoleClient, Client>, (String, bool)> {
        let headers = crate::auth::header_map(headers).map_err(|e| (e, false))?;
        let transport = crate::legacy_sse::LegacySse::connect(url, headers)
            .await
            .map_err(|e| (format!("connecting to {url}: {e}"), true))?;
        client
            .serve(transport)
            .await
            .map_err(|e| (format!("initialize with {url} failed: {e}"), true))
    }

    /// Connects to a streamable HTTP server, with its token when the person signed in to it.
    /// One that asks for a sign-in and has none is not retried: it waits for the person.
    async fn connect_http(
        &self,
        client: Client,
        url: &str,
        headers: &BTreeMap<String, String>,
        oauth: &Option<crate::auth::OauthStore>,
    ) -> Result<RunningService<RoleClient, Client>, (String, bool)> {
        use rmcp::transport::StreamableHttpClientTransport as Http;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        // rustls needs one process-wide crypto provider; a second install is a no-op.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut config = StreamableHttpClientTransportConfig::with_uri(url);
        config.custom_headers = crate::auth::header_map(headers).map_err(|e| (e, false))?;
        let authorized = match oauth {
            Some(store) => crate::auth::authorized_client(url, store)
                .await
                .map_err(|e| (format!("{url}: {e}"), false))?,
            None => None,
        };
        let served = match authorized {
            Some(http) => client.serve(Http::with_client(http, config)).await,
            None => {
                let http = reqwest013::Client::new();
                client.serve(Http::with_client(http, config)).await
            }
        };
        let wants = served.as_ref().err().is_some_and(asks_to_sign_in);
        self.wants_sign_in
            .store(wants, std::sync::atomic::Ordering::SeqCst);
        served.map_err(|e| match asks_to_sign_in(&e) {
            true => (
                format!(
                    "{url} asks you to sign in: `cowork toolpack signin {}` (or Sign in on the Toolpacks page)",
                    self.spec.name
                ),
                false,
            ),
            false => (format!("initialize with {url} failed: {e}"), true),
        })
    }

    /// Starts a stdio server's process (in its sandbox when it has one), its stderr to the
    /// server's log, and watches it.
    fn spawn(
        &self,
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: Option<&std::path::Path>,
    ) -> Result<rmcp::transport::TokioChildProcess, (String, bool)> {
        let log = open_log(&self.spec.log_file).map_err(|e| (e, false))?;
        let confined = match &self.spec.sandbox {
            crate::sandbox::Sandbox::Confined(c) => Some(c),
            crate::sandbox::Sandbox::Unconfined(_) => None,
        };
        // Inside the sandbox a missing program would look like a server that died at
        // once (and be retried): say so up front instead.
        if let Some(c) = confined
            && crate::sandbox::find_program(command, &c.code).is_none()
        {
            return Err((
                format!(
                    "cannot start {command:?}: not found — is it installed (toolpack dependencies included) and on PATH?"
                ),
                false,
            ));
        }
        let cmd = server_process(confined, command, args, env, cwd);
        let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
            .stderr(log)
            .spawn()
            .map_err(|e| {
                let permanent = matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied);
                (format!("cannot start {command:?}: {e} — is it installed (toolpack dependencies included) and on PATH?"), !permanent)
            })?;
        let pid = transport.id();
        *self.group.lock().unwrap() = pid.map(|p| p as i32);
        self.start_watch();
        self.update(|s| s.pid = pid);
        Ok(transport)
    }
}

/// Whether connecting failed because the server wants a token (HTTP 401 with a
/// `WWW-Authenticate` challenge), through whatever wraps the transport's error.
fn asks_to_sign_in(error: &rmcp::service::ClientInitializeError) -> bool {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    // The transport's error is a field, not a `source`, of the initialize error.
    let ClientInitializeError::TransportError { error, .. } = error else {
        return false;
    };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(e) = cause {
        let auth = |e: &(dyn std::error::Error + 'static)| {
            matches!(
                e.downcast_ref::<StreamableHttpError<reqwest013::Error>>(),
                Some(StreamableHttpError::AuthRequired(_))
            ) || matches!(
                e.downcast_ref::<StreamableHttpError<rmcp::transport::auth::AuthError>>(),
                Some(StreamableHttpError::AuthRequired(_))
            )
        };
        if auth(e) {
            return true;
        }
        cause = e.source();
    }
    false
}

/// The command that runs a stdio server: confined when `confined`, else as the person, in
/// `cwd`.
fn server_process(
    confined: Option<&crate::sandbox::Confinement>,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&std::path::Path>,
) -> tokio::process::Command {
    // The manifest's variables are the server's, set inside the sandbox: none reaches
    // the launcher. The installed pack is pinned file by file: Python must not add
    // bytecode to it.
    let launch = match confined {
        Some(c) => c.jail(),
        None => {
            cowork_contract::confine::Confinement::new(cwd.unwrap_or(std::path::Path::new(".")))
                .envs(std::env::var_os("HOME").map(|home| ("HOME", home)))
                .without_sandbox()
        }
    }
    .envs(env.clone())
    .env("PYTHONDONTWRITEBYTECODE", "1")
    .command(command, args);
    let mut cmd = tokio::process::Command::from(launch.command);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    // Its own process group (ended whole by `end_group`), and killed by the kernel
    // if we die first — a kill -9 of the CLI or app leaves no server behind.
    cmd.process_group(0);
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    cmd
}

/// A list from the server, as the protocol's JSON.
fn as_json<T: Serialize>(list: &[T]) -> Vec<Value> {
    list.iter()
        .filter_map(|item| serde_json::to_value(item).ok())
        .collect()
}

fn open_log(path: &std::path::Path) -> Result<std::fs::File, String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    // Keep logs bounded: a chatty server starts a fresh file past 5 MB.
    let too_big = std::fs::metadata(path)
        .map(|m| m.len() > 5 << 20)
        .unwrap_or(false);
    let mut options = std::fs::OpenOptions::new();
    options.create(true);
    if too_big {
        options.write(true).truncate(true)
    } else {
        options.append(true)
    };
    options
        .open(path)
        .map_err(|e| format!("cannot open the log {}: {e}", path.display()))
}

/// A started server, until it exits (why) or is stopped (`None`).
async fn serve_until_exit(
    inner: &Inner,
    running: RunningService<RoleClient, Client>,
) -> Option<String> {
    inner.update(|s| {
        s.state = ServerState::Running;
        s.last_error = None;
    });
    tracing::info!("MCP server {} running", inner.spec.name);
    let cancel = running.cancellation_token();
    let reason = tokio::select! {
        _ = inner.stop.cancelled() => {
            cancel.cancel();
            None
        }
        quit = running.waiting() => Some(format!("{quit:?}")),
    };
    *inner.peer.write().unwrap() = None;
    reason
}

async fn supervise(inner: Arc<Inner>) {
    let policy = inner.spec.restart;
    let mut failures = 0u32;
    let mut ever_ran = false;
    loop {
        inner.update(|s| s.state = ServerState::Starting);
        let started = Instant::now();
        let connected = tokio::select! {
            _ = inner.stop.cancelled() => break,
            r = tokio::time::timeout(policy.start_timeout, inner.connect()) => r.unwrap_or_else(|_| Err((format!("no answer to initialize within {} s", policy.start_timeout.as_secs()), true))),
        };
        match connected {
            Ok(running) => {
                ever_ran = true;
                let Some(reason) = serve_until_exit(&inner, running).await else {
                    break;
                };
                inner.end_group(libc::SIGKILL);
                tracing::warn!("MCP server {} exited ({reason})", inner.spec.name);
                inner.update(|s| {
                    s.pid = None;
                    s.last_error = Some("the server exited".into());
                });
                // A server that ran a while before dying starts a fresh backoff series.
                if started.elapsed() > Duration::from_secs(30) {
                    failures = 0;
                }
            }
            Err((e, retry)) => {
                // A server that never answered is still running: end it before any retry.
                inner.end_group(libc::SIGKILL);
                tracing::warn!("MCP server {} did not start: {e}", inner.spec.name);
                inner.update(|s| {
                    s.pid = None;
                    s.last_error = Some(e);
                });
                if !retry {
                    inner.give_up();
                    return;
                }
            }
        }
        failures += 1;
        let limit = if ever_ran {
            policy.max_restarts
        } else {
            policy.max_first_restarts
        };
        if failures > limit {
            inner.update(|s| s.state = ServerState::Failed);
            (inner.on_change)();
            return;
        }
        inner.update(|s| {
            s.state = ServerState::Restarting;
            s.restarts += 1;
        });
        let backoff = policy
            .initial_backoff
            .saturating_mul(1 << (failures - 1).min(16))
            .min(policy.max_backoff);
        tokio::select! {
            _ = inner.stop.cancelled() => break,
            _ = tokio::time::sleep(backoff) => {}
        }
    }
    *inner.peer.write().unwrap() = None;
    inner.end_group(libc::SIGKILL);
    inner.update(|s| {
        s.state = ServerState::Stopped;
        s.pid = None;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finished call's route takes late notifications for the grace period, then expires as
    /// later calls come; a call still in flight keeps its route however long it runs.
    #[test]
    fn finished_routes_expire_in_order_and_open_ones_stay() {
        let sink: ProgressSink = Arc::new(|_| {});
        let token = |n: i64| ProgressToken(rmcp::model::NumberOrString::Number(n));
        let mut routes = Routes::default();
        for n in 0..3 {
            routes.open(token(n), sink.clone());
        }
        routes.finish(token(0));
        routes.finish(token(1));
        assert_eq!(routes.routes.len(), 3, "finished just now: still routed");
        routes.expire(Instant::now() + LATE_PROGRESS_GRACE);
        assert_eq!(routes.routes.len(), 1);
        assert!(routes.routes.contains_key(&token(2)), "in flight");
        assert!(routes.finished.is_empty());
    }
}
