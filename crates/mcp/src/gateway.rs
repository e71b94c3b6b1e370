//! The gateway: every supervised server's tools as registry tools (`ToolProvider`), so an MCP
//! call is reviewed, approved, audited, rate-limited and timed out by the scheduler like any
//! builtin. This module only adapts; it never decides.

use crate::context_tools::FindServers;
use crate::effects::effects_of;
use crate::manifest::{CoworkMeta, EffectTemplate};
use crate::server::{Elicitor, LaunchSpec, McpServer, Offers, ServerStatus, Workspace};
use cowork_contract::{
    Annotations, AppView, DynTool, Effect, EffectEnv, EffectKind, PreparedCall, ToolError,
    ToolProvider, ToolSpec,
};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The canonical name of a server's tool.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

struct Entry {
    server: McpServer,
    meta: CoworkMeta,
    /// What the server's sandbox lets it do beyond its own folders (see `sandbox`).
    reach: Vec<Effect>,
}

#[derive(Default)]
pub struct McpGateway {
    servers: RwLock<BTreeMap<String, Entry>>,
    on_change: RwLock<Option<Arc<dyn Fn() + Send + Sync>>>,
    offers: RwLock<Offers>,
    /// The resources/prompts tools, built once around a lookup into `servers`.
    context_tools: std::sync::OnceLock<ContextTools>,
}

/// The resources/prompts tools and the lookup they hold weakly (kept alive here).
struct ContextTools {
    _find: Arc<FindServers>,
    tools: Vec<Arc<dyn DynTool>>,
}

impl McpGateway {
    pub fn new() -> Arc<McpGateway> {
        let gateway = Arc::new(McpGateway::default());
        let weak = Arc::downgrade(&gateway);
        let lookup: Arc<FindServers> = Arc::new(move |name: Option<&str>| {
            let Some(gateway) = weak.upgrade() else {
                return Vec::new();
            };
            let servers = gateway.servers.read().unwrap();
            servers
                .values()
                .map(|e| e.server.clone())
                .filter(|s| name.is_none_or(|n| s.name() == n))
                .collect()
        });
        let tools = crate::context_tools::tools(Arc::downgrade(&lookup));
        let _ = gateway.context_tools.set(ContextTools {
            _find: lookup,
            tools,
        });
        gateway
    }

    /// What to run when the set of tools changes (the app reloads the registry).
    pub fn set_on_change(&self, f: Arc<dyn Fn() + Send + Sync>) {
        *self.on_change.write().unwrap() = Some(f);
    }

    /// Who shows servers' elicitations to the person (servers started afterwards get it).
    pub fn set_elicitor(&self, f: Elicitor) {
        self.offers.write().unwrap().elicitor = Some(f);
    }

    /// Who hears that a subscribed resource changed (servers started afterwards get it).
    pub fn set_watcher(&self, f: crate::server::Watcher) {
        self.offers.write().unwrap().watcher = Some(f);
    }

    /// Subscribes to `uri` of `server` (see [`McpServer::subscribe`]): false when the server
    /// offers no subscriptions.
    pub async fn subscribe(&self, server: &str, uri: &str) -> Result<bool, ToolError> {
        match self.server(server) {
            Some(server) => server.subscribe(uri).await,
            None => Err(ToolError::failed(format!("no MCP server {server}"))),
        }
    }

    /// Who answers servers' sampling requests (servers started afterwards get it).
    pub fn set_sampler(&self, f: crate::Sampler) {
        self.offers.write().unwrap().sampler = Some(f);
    }

    /// Where the person's workspace is read from, for servers' roots (servers started
    /// afterwards get it); [`McpGateway::roots_changed`] tells running ones it moved.
    pub fn set_workspace(&self, f: Workspace) {
        self.offers.write().unwrap().workspace = Some(f);
    }

    /// The person's workspace changed: every running server that was told about roots hears so.
    pub fn roots_changed(&self) {
        for entry in self.servers.read().unwrap().values() {
            entry.server.roots_changed();
        }
    }

    fn notify(self: &Arc<Self>) {
        if let Some(f) = self.on_change.read().unwrap().clone() {
            f();
        }
    }

    /// Starts (or restarts with a new spec) a server. Needs a tokio runtime.
    pub fn add_server(self: &Arc<Self>, spec: LaunchSpec, meta: CoworkMeta) {
        let weak = Arc::downgrade(self);
        let on_change = Arc::new(move || {
            if let Some(gateway) = weak.upgrade() {
                gateway.notify();
            }
        });
        let name = spec.name.clone();
        let reach = spec.sandbox.reach(&name);
        let offers = self.offers.read().unwrap().clone();
        let server = McpServer::start_with(spec, on_change, offers);
        if let Some(old) = self.servers.write().unwrap().insert(
            name,
            Entry {
                server,
                meta,
                reach,
            },
        ) {
            old.server.stop();
        }
        self.notify();
    }

    pub fn remove_server(self: &Arc<Self>, name: &str) -> bool {
        let removed = self.servers.write().unwrap().remove(name);
        if let Some(entry) = &removed {
            entry.server.stop();
            self.notify();
        }
        removed.is_some()
    }

    pub fn stop_all(&self) {
        for entry in self.servers.read().unwrap().values() {
            entry.server.stop();
        }
    }

    /// What an MCP App view of `server` may reach (None: no such server): the server's own
    /// tools by their remote names, and whether its sandbox gives it the network — the view gets
    /// no more than the server that serves it.
    pub fn view_reach(&self, server: &str) -> Option<ViewReach> {
        let servers = self.servers.read().unwrap();
        let server = &servers.get(server)?.server;
        let tools = server.tools();
        Some(ViewReach {
            views: tools
                .iter()
                .filter_map(|t| app_of(server.name(), t))
                .map(|v| v.resource)
                .collect(),
            tools: tools.iter().map(|t| t.name.to_string()).collect(),
            network: server.has_network(),
        })
    }

    pub fn server(&self, name: &str) -> Option<McpServer> {
        let servers = self.servers.read().unwrap();
        servers.get(name).map(|e| e.server.clone())
    }

    /// Lets suspensions waiting on a server's task go on once it ends (see `tasks`).
    pub fn task_probe(self: &Arc<Self>) -> Arc<dyn cowork_contract::ResumeProbe> {
        Arc::new(crate::tasks::TaskEnded(Arc::downgrade(self)))
    }

    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.servers
            .read()
            .unwrap()
            .values()
            .map(|e| e.server.status())
            .collect()
    }

    /// Waits until every server is running, stopped or failed (the CLI waits before calling).
    pub async fn wait_settled(&self, limit: Duration) -> Vec<ServerStatus> {
        self.wait_settled_for(None, limit).await
    }

    /// [`McpGateway::wait_settled`] for some servers only (None: all).
    pub async fn wait_settled_for(
        &self,
        names: Option<&[String]>,
        limit: Duration,
    ) -> Vec<ServerStatus> {
        let servers: Vec<McpServer> = self
            .servers
            .read()
            .unwrap()
            .iter()
            .filter(|(name, _)| names.is_none_or(|n| n.contains(name)))
            .map(|(_, e)| e.server.clone())
            .collect();
        futures::future::join_all(servers.iter().map(|s| s.wait_settled(limit))).await
    }

    /// The servers a call of `name` may need: its own for `mcp__<server>__<tool>`, and any pack
    /// that overrides `name`. `known` says the name is already a tool (a builtin): then only an
    /// override can change it, so no other server is waited for. None: cannot tell (a pack
    /// tool's bare name, not listed yet), so all.
    pub fn servers_needed(&self, name: &str, known: bool) -> Option<Vec<String>> {
        let servers = self.servers.read().unwrap();
        if let Some(rest) = name.strip_prefix("mcp__") {
            let server = rest.split("__").next().unwrap_or_default();
            return Some(servers.keys().filter(|s| *s == server).cloned().collect());
        }
        let overriding: Vec<String> = servers
            .iter()
            .filter(|(_, e)| e.meta.overrides.contains_key(name))
            .map(|(s, _)| s.clone())
            .collect();
        (known || !overriding.is_empty()).then_some(overriding)
    }
}

impl ToolProvider for McpGateway {
    fn name(&self) -> &str {
        "mcp"
    }

    /// A tool of a server waiting for the person's sign-in is unknown until it connects: say
    /// that, and how to sign in, rather than "no tool named".
    fn why_missing(&self, name: &str) -> Option<String> {
        let server = name.strip_prefix("mcp__")?.split("__").next()?;
        self.statuses()
            .into_iter()
            .find(|s| s.name == server && s.state == crate::ServerState::NeedsSignIn)
            .and_then(|s| s.last_error)
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        let servers = self.servers.read().unwrap();
        let mut out: Vec<Arc<dyn DynTool>> = Vec::new();
        if !servers.is_empty()
            && let Some(context) = self.context_tools.get()
        {
            out.extend(context.tools.iter().cloned());
        }
        for entry in servers.values() {
            let server_name = entry.server.name().to_string();
            let remotes = entry.server.tools();
            let own: Vec<String> = remotes.iter().map(|t| t.name.to_string()).collect();
            for remote in remotes {
                let mut tool = McpTool::new(
                    &server_name,
                    &remote,
                    &entry.meta,
                    &entry.reach,
                    entry.server.clone(),
                );
                // Texts written to the model are withheld from it, and what passes is framed as
                // the pack's words (see `instructions`).
                let named = crate::instructions::addresses_model(&remote.name, &own);
                if let Some(why) = named.or_else(|| {
                    crate::instructions::tool_addresses_model(
                        &tool.spec.title,
                        &tool.spec.description,
                        &tool.spec.input_schema,
                        &own,
                    )
                }) {
                    tracing::warn!(tool = %tool.spec.name, "texts withheld from the model: {why}");
                    tool.spec.title = remote.name.to_string();
                    tool.spec.description = crate::instructions::withheld(&tool.spec.title);
                    crate::instructions::strip_texts(&mut tool.spec.input_schema);
                } else {
                    tool.spec.description =
                        crate::instructions::framed(&server_name, &tool.spec.description);
                }
                let tool = Arc::new(tool);
                // An override answers to the builtin's name too (same handler, visible layer).
                for (builtin, target) in &entry.meta.overrides {
                    if *target == remote.name {
                        let mut twin = (*tool).clone();
                        twin.spec.name = builtin.clone();
                        twin.spec.aliases.clear();
                        out.push(Arc::new(twin));
                    }
                }
                out.push(tool);
            }
        }
        out
    }
}

/// See [`McpGateway::view_reach`].
#[derive(Clone, Debug, PartialEq)]
pub struct ViewReach {
    pub tools: Vec<String>,
    /// The `ui://` views its tools declare now.
    pub views: Vec<String>,
    pub network: bool,
}

#[derive(Clone)]
struct McpTool {
    spec: ToolSpec,
    server_name: String,
    remote: String,
    declared: Option<Vec<EffectTemplate>>,
    /// The sandbox's reach its declarations do not admit: added to every call.
    reach: Vec<Effect>,
    server: McpServer,
    /// The MCP App view its results come with (`_meta.ui.resourceUri`), if it has one.
    app: Option<AppView>,
}

/// A tool's MCP App view: `_meta.ui.resourceUri` (or the older flat `_meta["ui/resourceUri"]`),
/// and only a `ui://` resource of the tool's own server.
fn app_of(server_name: &str, remote: &rmcp::model::Tool) -> Option<AppView> {
    let meta = serde_json::to_value(remote.meta.as_ref()?).ok()?;
    let uri = meta["ui"]["resourceUri"]
        .as_str()
        .or_else(|| meta["ui/resourceUri"].as_str())?;
    uri.starts_with("ui://").then(|| AppView {
        server: server_name.to_string(),
        resource: uri.to_string(),
    })
}

impl McpTool {
    fn new(
        server_name: &str,
        remote: &rmcp::model::Tool,
        meta: &CoworkMeta,
        reach: &[Effect],
        server: McpServer,
    ) -> McpTool {
        let declared = meta.effects.get(remote.name.as_ref()).cloned();
        let (kinds, reach) = judged_kinds(declared.as_deref(), reach);
        let hints = remote.annotations.clone().unwrap_or_default();
        let annotations = annotations_of(declared.is_some(), &kinds, &hints);
        // A server's words reach the model and the person's screen: no control or bidi
        // characters (they could hide or reorder text).
        let printable = |s: &str| cowork_contract::text::printable_text(s).into_owned();
        let title = printable(
            &remote
                .title
                .clone()
                .or_else(|| hints.title.clone())
                .unwrap_or_else(|| remote.name.to_string()),
        );
        let spec = ToolSpec {
            name: crate::tool_name(server_name, &remote.name),
            title,
            description: printable(remote.description.as_deref().unwrap_or_default()),
            category: meta.category.clone().unwrap_or_else(|| "mcp".into()),
            input_schema: serde_json::Value::Object((*remote.input_schema).clone()),
            output_schema: None,
            annotations,
            timeout_ms: 60_000,
            effects: kinds,
            aliases: vec![remote.name.to_string()],
            deferred: false,
            rate_limit: None,
            secret_args: Vec::new(),
            arg_aliases: Vec::new(),
        };
        McpTool {
            spec,
            server_name: server_name.to_string(),
            remote: remote.name.to_string(),
            declared,
            reach,
            app: app_of(server_name, remote),
            server,
        }
    }
}

/// The kinds of effect a tool is judged by, and the part of its sandbox's `reach` its
/// declarations do not admit (added to every call).
fn judged_kinds(
    declared: Option<&[EffectTemplate]>,
    reach: &[Effect],
) -> (Vec<EffectKind>, Vec<Effect>) {
    let mut kinds: Vec<EffectKind> = match declared {
        Some(templates) => templates
            .iter()
            .filter_map(|t| serde_json::from_value(t["kind"].clone()).ok())
            .collect(),
        None => vec![EffectKind::McpCall],
    };
    // A tool is judged by what its sandbox lets it do wherever it claims less.
    let reach: Vec<Effect> = reach
        .iter()
        .filter(|r| !crate::sandbox::admits(&kinds, r))
        .cloned()
        .collect();
    kinds.extend(reach.iter().map(Effect::kind));
    kinds.sort();
    kinds.dedup();
    (kinds, reach)
}

/// A tool's annotations from its effects (`declared` or not) and the server's `hints`.
fn annotations_of(
    declared: bool,
    kinds: &[EffectKind],
    hints: &rmcp::model::ToolAnnotations,
) -> Annotations {
    // The server's hints only ever make a tool stricter: read-only (which lets calls run in
    // parallel and pass plan mode) needs declared read-only effects as well.
    let declared_read_only = declared && kinds.iter().all(|k| k.is_read_only());
    let read_only = declared_read_only && hints.read_only_hint != Some(false);
    Annotations {
        // A pack cannot promise Cowork can take its changes back.
        undoable: false,
        read_only,
        // Only an explicit hint adds the destructive point: an undeclared tool already
        // scores 8 for being unknown, and must ask rather than be denied outright.
        destructive: hints.destructive_hint.unwrap_or(false) && !read_only,
        idempotent: read_only && hints.idempotent_hint.unwrap_or(false),
        // MCP's default is open-world; a pack that declares only local effects is not. What
        // a tool reads from outside (mail, a calendar, a service, private data such as other
        // people's messages) stays untrusted whatever the server hints: a hint can only make
        // a tool stricter.
        open_world: hints.open_world_hint == Some(true)
            || !declared
            || kinds.iter().any(|k| {
                k.is_egress()
                    || matches!(
                        k,
                        EffectKind::MailRead
                            | EffectKind::CalendarRead
                            | EffectKind::ServiceRead
                            | EffectKind::SensitiveRead
                    )
            }),
    }
}

impl DynTool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: serde_json::Value, env: &EffectEnv) -> Result<PreparedCall, ToolError> {
        let mut effects = effects_of(
            &self.server_name,
            &self.remote,
            self.declared.as_deref(),
            &args,
            env,
        );
        effects.extend(self.reach.iter().cloned());
        let server = self.server.clone();
        let remote = self.remote.clone();
        let untrusted = self.spec.annotations.open_world;
        let app = self.app.clone();
        Ok(PreparedCall::new(
            effects,
            Arc::new(move |ctx| {
                let server = server.clone();
                let remote = remote.clone();
                let args = args.clone();
                let app = app.clone();
                Box::pin(async move {
                    let mut output = server.call(&remote, args, &ctx).await?;
                    // Open-world output (web pages, third-party data) taints the conversation.
                    output.untrusted |= untrusted;
                    output.app = app;
                    Ok(output)
                })
            }),
        ))
    }
}
