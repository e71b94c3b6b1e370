//! `cowork mcp serve`: the registry's tools served to another program's model (Claude Desktop,
//! Claude Code, goose, Zed…) over stdio or Streamable HTTP. Every call is a `Scheduler::call`
//! with caller `mcp:<client>`, reviewed and audited like any other.
//!
//! Stricter than the person's own window, by structure rather than by settings:
//! - the client's conversation (`mcp:<client>`) starts as holding untrusted content: Cowork
//!   cannot see what the client's model has read, so a risky call asks unless the person named
//!   its destination in a rule (there are no words of theirs here for provenance to find);
//! - its grants are its own: an ask offers once or "for this app", never a rule that every
//!   caller would share (`Scheduler::choices`);
//! - an ask goes to the person: in Cowork's window when it runs (the modal names the app),
//!   else through the client's own form (MCP elicitation), which can only allow once; with
//!   neither, the call is refused saying why;
//! - a server that runs for a host's whole session follows what the person changes from
//!   elsewhere: every call reads the pause first, and grants, rules and settings are taken in
//!   at most 25 ms old (`Scheduler::catch_up_before_call`).

use crate::App;
use crate::instance::WindowAnswer;
use cowork_contract::{Content as CoworkContent, ToolOutput};
use cowork_core::{
    Answered, ApprovalChoice, ApprovalRequest, Approver, CallRequest, Caller, Layer, Scheduler,
    ToolInfo,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// Which toolpacks' tools are served beside the builtins: the person chooses (`--toolpack`).
#[derive(Clone, Debug, Default)]
pub enum Toolpacks {
    #[default]
    None,
    Named(BTreeSet<String>),
    All,
}

#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// The client's name as the person gave it (`--as`); else the name it declares.
    pub client: Option<String>,
    pub toolpacks: Toolpacks,
}

/// The name a client goes by in audit rows, rules and its conversation: letters, digits, `.`,
/// `_` and `-` only (what it declares is its own text), at most 40 characters.
pub fn client_name(declared: &str) -> String {
    let mut name = String::new();
    for c in declared.trim().chars() {
        let c = match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '-',
        };
        if !(c == '-' && name.ends_with('-')) && name.len() < 40 {
            name.push(c);
        }
    }
    let name = name.trim_matches('-').to_string();
    if name.is_empty() {
        "unnamed-client".into()
    } else {
        name
    }
}

/// The conversation an MCP client's calls belong to: its grants and its taint.
pub fn conversation_of(client: &str) -> String {
    format!("mcp:{client}")
}

/// Who answers an MCP client's asks: the person in Cowork's window when it runs for this data
/// dir (the modal names the client); else the person through that client's own form
/// (elicitation), when it can show one; else nobody, and the call is refused saying why.
#[derive(Default)]
pub struct ClientAsks {
    /// The client to ask for each conversation: the latest session that called from it.
    peers: Mutex<HashMap<String, Peer<RoleServer>>>,
    /// The data dir, whose window is asked first (set when the server is made).
    home: std::sync::OnceLock<std::path::PathBuf>,
}

impl ClientAsks {
    fn connected(&self, conversation: &str, peer: &Peer<RoleServer>) {
        let mut peers = self.peers.lock().unwrap();
        match peers.get_mut(conversation) {
            Some(known) => *known = peer.clone(),
            None => {
                peers.insert(conversation.to_string(), peer.clone());
            }
        }
    }

    fn form_reader(&self, conversation: &str) -> Option<Peer<RoleServer>> {
        let peer = self.peers.lock().unwrap().get(conversation).cloned()?;
        let info = peer.peer_info()?;
        // Protocol 2026-07-28 forbids requests from server to client mid-call (it has
        // input-required results instead, which rmcp's handler cannot yet return from here).
        let can = info.capabilities.elicitation.is_some() && info.protocol_version.has_initialize();
        can.then_some(peer)
    }
}

const NOBODY: &str = "nobody could be asked: the Cowork window is not open and this MCP client shows no forms (elicitation) — open Cowork, or ask for it in its window";

#[async_trait::async_trait]
impl Approver for ClientAsks {
    fn name(&self) -> &str {
        "the MCP client's form"
    }
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalChoice {
        self.answer(request).await.choice
    }
    async fn answer(&self, request: &ApprovalRequest) -> Answered {
        if let Some(answered) = self.in_the_window(request).await {
            return answered;
        }
        let Some(peer) = self.form_reader(&request.conversation) else {
            return refused(NOBODY.into());
        };
        let by = format!("{} (its person, through its form)", request.caller);
        let choice = ask_through_form(&peer, request).await;
        Answered {
            choice: choice.unwrap_or(ApprovalChoice::Deny),
            by: Some(by),
            heard: choice.is_some(),
        }
    }
}

impl ClientAsks {
    /// The window's answer, when a window runs for this data dir (None: there is none).
    async fn in_the_window(&self, request: &ApprovalRequest) -> Option<Answered> {
        let home = self.home.get()?;
        let by = format!("window (asked for {})", request.caller);
        match crate::instance::ask_window(home, request).await {
            WindowAnswer::NoWindow => None,
            // An answer that was not offered is a denial here (the scheduler would take it for
            // "once"): whoever answers on the window's socket must answer as the modal does.
            WindowAnswer::Answered(choice) if request.choices.contains(&choice) => Some(Answered {
                choice,
                by: Some(by),
                heard: true,
            }),
            WindowAnswer::Answered(_) => {
                Some(refused(format!("{by}: an answer it was not offered")))
            }
            WindowAnswer::Lost => Some(refused(format!("{by}: closed before an answer"))),
        }
    }
}

/// No, from no one: `by` says why nobody answered.
fn refused(by: String) -> Answered {
    Answered {
        choice: ApprovalChoice::Deny,
        by: Some(by),
        heard: false,
    }
}

/// The ask as a form in the client: what will happen in plain words, why Cowork asks, and
/// "allow once" or "deny". None when the form could not be shown or was not accepted.
///
/// Only once: the client program shows the form, and one that answers its own forms (or lets
/// its model fill them) must not come away with a lasting grant. Lasting grants are made in
/// Cowork's window, where the person is.
async fn ask_through_form(
    peer: &Peer<RoleServer>,
    request: &ApprovalRequest,
) -> Option<ApprovalChoice> {
    let choices: Vec<ApprovalChoice> = request
        .choices
        .iter()
        .copied()
        .filter(|c| matches!(c, ApprovalChoice::Once | ApprovalChoice::Deny))
        .collect();
    let offered: Vec<Value> = choices
        .iter()
        .map(|c| json!({"const": c.as_str(), "title": choice_words(*c, &request.caller)}))
        .collect();
    let params = json!({
        "mode": "form",
        "message": ask_words(request),
        "requestedSchema": {
            "type": "object",
            "properties": {"answer": {"type": "string", "title": "Allow?", "oneOf": offered}},
            "required": ["answer"],
        },
    });
    let params = serde_json::from_value(params).ok()?;
    let result = peer.create_elicitation(params).await.ok()?;
    if result.action != rmcp::model::ElicitationAction::Accept {
        return None;
    }
    let answer = result.content?.get("answer")?.as_str()?.to_string();
    choices.into_iter().find(|c| c.as_str() == answer)
}

fn choice_words(choice: ApprovalChoice, caller: &str) -> String {
    match choice {
        ApprovalChoice::Once => "Allow once".into(),
        ApprovalChoice::Conversation => format!("Allow for {caller} from now on"),
        ApprovalChoice::Always | ApprovalChoice::AlwaysWorkspace => "Always allow".into(),
        ApprovalChoice::Deny => "Deny".into(),
    }
}

/// What the form says: who asks for what, what will happen, whether it can be undone, why.
fn ask_words(request: &ApprovalRequest) -> String {
    use cowork_contract::text::printable_field as field;
    use cowork_core::plain::Undo;
    let mut lines = vec![format!(
        "Cowork: {} wants to run “{}”.",
        field(&request.caller),
        field(&request.title)
    )];
    lines.extend(
        request
            .plain
            .what
            .iter()
            .map(|w| field(&w.text).into_owned()),
    );
    if let Some(place) = &request.plain.place {
        lines.push(field(&place.text).into_owned());
    }
    lines.push(
        match request.plain.undo {
            Undo::NothingChanges => "Nothing is changed.",
            Undo::Undoable => "Cowork keeps the earlier version.",
            Undo::ChangeableLater => "Cowork does not undo this; you can change it later.",
            Undo::CannotUndo => "Cowork cannot undo this once it is done.",
        }
        .into(),
    );
    lines.push(format!("Why Cowork asks: {}", field(&request.review.why)));
    lines.join("\n")
}

/// The MCP server: one per session, sharing the app's scheduler.
#[derive(Clone)]
pub struct CoworkServer {
    scheduler: Arc<Scheduler>,
    asks: Arc<ClientAsks>,
    options: Arc<ServeOptions>,
}

impl CoworkServer {
    pub fn new(app: &App, asks: Arc<ClientAsks>, options: ServeOptions) -> Self {
        let _ = asks.home.set(app.home().root().to_path_buf());
        CoworkServer {
            scheduler: app.scheduler().clone(),
            asks,
            options: Arc::new(options),
        }
    }

    fn served(&self, info: &ToolInfo) -> bool {
        match info.layer {
            Layer::Builtin => true,
            Layer::Mcp => match &self.options.toolpacks {
                Toolpacks::None => false,
                Toolpacks::All => true,
                Toolpacks::Named(packs) => packs.iter().any(|p| {
                    let server = cowork_mcp::manifest::server_name(p);
                    info.spec
                        .name
                        .starts_with(&cowork_mcp::tool_name(&server, ""))
                }),
            },
        }
    }

    /// The client this session speaks for, and its conversation (tainted on first sight).
    fn client(&self, context: &RequestContext<RoleServer>) -> Result<(String, String), ErrorData> {
        // 2026-07-28 clients say who they are in each request; older ones in the handshake.
        let declared = context.client_info().map(|i| i.name);
        let name = client_name(
            self.options
                .client
                .as_deref()
                .or(declared.as_deref())
                .unwrap_or_default(),
        );
        let conversation = conversation_of(&name);
        let policy = self.scheduler.policy();
        if policy.tainted_by(&conversation).is_none() {
            let source = format!("the MCP client “{name}” (Cowork cannot see what it has read)");
            policy
                .mark_tainted(&conversation, &source)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        }
        self.asks.connected(&conversation, &context.peer);
        Ok((name, conversation))
    }
}

/// A registry tool as MCP lists it: name, title, description, schemas and what it declares of
/// itself. Built through serde: rmcp's types are non-exhaustive.
fn mcp_tool(info: &ToolInfo) -> Option<Tool> {
    let spec = &info.spec;
    let a = spec.annotations;
    let mut tool = json!({
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "inputSchema": object_schemas(spec.input_schema.clone()),
        "annotations": {
            "title": spec.title,
            "readOnlyHint": a.read_only,
            "destructiveHint": a.destructive,
            "idempotentHint": a.idempotent,
            "openWorldHint": a.open_world,
        },
    });
    // MCP output schemas describe an object; another shape is left out, not sent wrong.
    if let Some(output) = spec
        .output_schema
        .as_ref()
        .filter(|s| s["type"] == "object")
    {
        tool["outputSchema"] = object_schemas(output.clone());
    }
    serde_json::from_value(tool).ok()
}

/// MCP's schema wants each property's schema as an object; JSON Schema also allows `true`
/// (anything) and `false` (nothing), which schemars writes for an untyped value.
fn object_schemas(mut schema: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get_mut("properties") {
                    for prop in props.values_mut() {
                        match prop {
                            Value::Bool(true) => *prop = json!({}),
                            Value::Bool(false) => *prop = json!({"not": {}}),
                            _ => {}
                        }
                    }
                }
                map.values_mut().for_each(walk);
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut schema);
    schema
}

/// A call's outcome as MCP returns it: a failure is a result the model reads (`isError`), so a
/// refusal's reason reaches it, not an opaque protocol error.
pub(crate) fn mcp_result(result: Result<ToolOutput, cowork_contract::ToolError>) -> CallToolResult {
    match result {
        Ok(output) => {
            let mut result =
                CallToolResult::success(output.content.iter().map(mcp_content).collect());
            result.structured_content = output.structured;
            result
        }
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
    }
}

fn mcp_content(content: &CoworkContent) -> ContentBlock {
    match content {
        CoworkContent::Text { text } => ContentBlock::text(text.clone()),
        CoworkContent::Json { value } => ContentBlock::text(value.to_string()),
        CoworkContent::Image {
            mime_type,
            data_base64,
        } => ContentBlock::image(data_base64.clone(), mime_type.clone()),
        // Through serde: rmcp's resource type is non-exhaustive.
        CoworkContent::ResourceLink {
            uri,
            name,
            mime_type,
        } => serde_json::from_value(
            json!({"type": "resource_link", "uri": uri, "name": name, "mimeType": mime_type}),
        )
        .unwrap_or_else(|_| ContentBlock::text(format!("{name}: {uri}"))),
    }
}

impl ServerHandler for CoworkServer {
    fn get_info(&self) -> ServerConfig {
        let info = json!({
            "protocolVersion": rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE,
            // Resources and prompts: none yet, answered as empty lists (declared, because a
            // 2026-07-28 client is told in discovery what the server answers).
            "capabilities": {"tools": {"listChanged": false}, "logging": {}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": "cowork", "title": "Cowork", "version": env!("CARGO_PKG_VERSION")},
            "instructions": "Cowork's tools: calendar, mail, notes and memory, tasks, files, the web. Every call is reviewed by Cowork's policy and written to its audit log; a risky call asks the person, and a refused call's result says why.",
        });
        serde_json::from_value(info).expect("a fixed, valid server info")
    }

    /// Accepted: Cowork sends the client no log messages (its log is its own file), so there is
    /// nothing to filter; refusing would break clients that set a level on connecting.
    /// (Logging leaves the protocol after 2025-11-25, SEP-2577; clients of that revision use it.)
    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    /// Cowork lists no resources yet, so every address is one it does not have (SEP-2164:
    /// invalid params, naming the address).
    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        Err(ErrorData::invalid_params(
            format!("Cowork has no resource {:?}", request.uri),
            Some(json!({"uri": request.uri})),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut infos: Vec<ToolInfo> = self
            .scheduler
            .registry()
            .list()
            .into_iter()
            .filter(|i| self.served(i))
            .collect();
        infos.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        Ok(ListToolsResult::with_all_items(
            infos.iter().filter_map(mcp_tool).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let registry = self.scheduler.registry();
        if !registry.get(&request.name).is_some_and(|i| self.served(&i)) {
            return Err(ErrorData::invalid_params(
                format!("Cowork serves no tool named {:?}", request.name),
                None,
            ));
        }
        let (name, conversation) = self.client(&context)?;
        let args = Value::Object(request.arguments.unwrap_or_default());
        let mut call = CallRequest::new(&request.name, args, Caller::mcp(&name), &conversation);
        call.cancel = context.ct.clone();
        let outcome = self.scheduler.call(call).await;
        // The client's model is another app's, usually remote: values kept home reach it as
        // placeholders, which its calls here may use.
        let kept = self.scheduler.policy().placeholders();
        let failed = |e: cowork_core::placeholders::PlaceholderError| {
            cowork_contract::ToolError::failed(e.to_string())
        };
        let result = match kept
            .refresh(&conversation)
            .map_err(failed)
            .and(outcome.result)
        {
            Ok(output) => kept.veil_output(&conversation, output).map_err(failed),
            // An error's words may echo a value put in for a placeholder.
            Err(e) => Err(kept
                .veil(&conversation, &e.to_string(), true)
                .map_or_else(failed, cowork_contract::ToolError::failed)),
        };
        Ok(mcp_result(result).into())
    }
}

/// Serves over this process's stdin and stdout until the client closes them.
pub async fn serve_stdio(server: CoworkServer) -> Result<(), String> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP client did not start a session: {e}"))?;
    running.waiting().await.map_err(|e| e.to_string())?;
    Ok(())
}

/// The bearer token an HTTP client must send (`Authorization: Bearer …`): made once, kept in
/// the data dir readable by this user only, shown by `cowork mcp serve --http` for the person to
/// copy into their client's settings. A server for one named app (`--as NAME`) takes that
/// app's own token only, so holding another token (the general one, another app's) cannot make
/// a client that app.
pub fn http_token(home: &std::path::Path, client: Option<&str>) -> Result<String, String> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let path = match client {
        None => home.join("mcp-serve.token"),
        Some(name) => {
            let dir = home.join("mcp-serve-tokens");
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            dir.join(format!("{}.token", client_name(name)))
        }
    };
    if let Ok(token) = std::fs::read_to_string(&path) {
        return Ok(token.trim().to_string());
    }
    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    file.write_all(token.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(token)
}

/// Serves Streamable HTTP at `/mcp` on `listener` (loopback only) until `stop` completes.
/// A request without the token is refused before it reaches MCP; rmcp checks `Host` (a
/// loopback name only) and refuses any request a browser page sends (an `Origin` header), which
/// is what DNS rebinding needs (loopback origins pass: they need the token too).
pub async fn serve_http(
    server: CoworkServer,
    listener: tokio::net::TcpListener,
    token: String,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    if !local.ip().is_loopback() {
        return Err(format!(
            "{local} is not a loopback address: Cowork serves MCP on this computer only"
        ));
    }
    let sessions = tokio_util::sync::CancellationToken::new();
    // A page on this computer may connect (it still needs the token); a page elsewhere,
    // reaching us through a rebound name, is refused by its Origin or its Host.
    let config = StreamableHttpServerConfig::default()
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
        .with_cancellation_token(sessions.clone());
    let mcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let expected = token_digest(&token);
    let app = axum::Router::new()
        .route_service("/mcp", mcp)
        .layer(axum::middleware::from_fn(move |req, next| {
            bearer_only(expected, req, next)
        }));
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stop.await;
            // Open event streams would hold the graceful shutdown forever.
            sessions.cancel();
        })
        .await
        .map_err(|e| e.to_string())
}

fn token_digest(token: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).into()
}

/// Compared as digests, so the time taken says nothing about how much of the token matched.
async fn bearer_only(
    expected: [u8; 32],
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let given = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(token) if token_digest(token.trim()) == expected => next.run(req).await,
        _ => (
            axum::http::StatusCode::UNAUTHORIZED,
            [(axum::http::header::WWW_AUTHENTICATE, "Bearer")],
            "Cowork: this MCP endpoint needs its token (`cowork mcp serve --http` shows it)",
        )
            .into_response(),
    }
}
