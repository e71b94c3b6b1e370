//! The composition root: opens the data dir, builds the core and registers every family. Both
//! shells (the `cowork` CLI and the Tauri window) start here and then talk only to the
//! [`Scheduler`] and the services it exposes — no tool is ever reachable any other way.

mod accounts;
mod agent_settings;
pub mod assets;
pub mod attachments;
mod desktop;
pub mod doctor;
mod families;
mod follow;
pub mod gnome_shortcut;
pub mod instance;
pub mod mail_setup;
pub mod mcp_apps;
pub mod mcp_serve;
pub mod notify;
mod sampling;
pub mod secrets;
mod signin;
pub mod skills;
mod srv;
mod toolpacks;
mod vault;

pub use accounts::{AccountKind, AccountSettings, Auth, Security};
pub use agent_settings::{
    AgentSettings, LOCAL_SERVERS, LocalServer, ProviderKind, RecallSettings, check_provider,
    default_core_tools, detect_local_servers,
};
pub use cowork_calendar::Reminder;
/// Tool chains (the shells list, explain, run and resume them).
pub use cowork_chains as chains;
pub use cowork_mail::OutboxRow;
pub use cowork_mcp::auth::SignIn as ToolpackSignIn;
/// The MCP Registry's catalog as the shells show it.
pub use cowork_mcp::catalog::{CatalogEntry, CatalogInstall, CatalogPage};
pub use cowork_mcp::import::{
    claude_desktop_config as import_claude_desktop_config,
    default_config_path as claude_desktop_config_path,
};
pub use cowork_mcp::{
    PackError, Record as ToolpackRecord, Review as ToolpackReview, ServerState, ServerStatus,
    Staged as StagedToolpack,
};
pub use cowork_vault::{
    Entry as VaultEntry, Filter as VaultFilter, Progress as VaultProgress, ReindexReport,
    Stats as VaultStats,
};
pub use cowork_voice::{
    MicState, VoiceSettings, input_devices as voice_input_devices,
    output_devices as voice_output_devices,
};
pub use cowork_web::{SearchProvider, WebSettings};
pub use desktop::{
    DesktopRequest, DesktopRequestError, DesktopSettings, autostart_entry, desktop_request,
    follow_tray_host, set_autostart,
};
pub use follow::{Drained, Following};
pub use signin::{SIGN_IN_TIMEOUT, SignIn, SignedOut};

/// A link the window may hand to the system browser: http(s) only, so a `file:`, `javascript:` or
/// custom-scheme link in a page, a search result or a headline opens nothing.
pub fn link_to_open(raw: &str) -> Result<String, String> {
    cowork_contract::address::web_origin(raw)
        .map(|(url, _)| url.to_string())
        .map_err(|e| e.to_string())
}

/// Stores a search provider's key in the OS keyring (never in a file).
pub fn set_web_key(provider: SearchProvider, key: &str) -> Result<(), String> {
    secrets::set(provider.keyring_account(), key)
}

/// Whether a key is stored for the provider (never the key itself).
pub fn has_web_key(provider: SearchProvider) -> Result<bool, String> {
    Ok(secrets::get(provider.keyring_account())?.is_some())
}
pub use toolpacks::{ResourceUpdated, Started, TOOLPACK_SETTLE, ToolpackSetting, UpdateCheck};
pub use vault::{EmbedderSettings, VaultSettings};

use cowork_contract::EffectEnv;
use cowork_core::{Approver, AuditLog, Layer, PolicyBridge, Registry, Scheduler, SchedulerConfig};
use cowork_store::{DataDir, Store};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use thiserror::Error;

pub use cowork_store::DataDir as Home;
pub use cowork_store::settings::Section;

/// What trusting a workspace would let happen (see [`App::workspace_review`]).
#[derive(Clone, Debug, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WorkspaceReview {
    #[serde(flatten)]
    pub status: cowork_core::policy::WorkspaceStatus,
    /// What the folder's repository configured git to run (`key=value`, hooks): switched off
    /// while untrusted, run once trusted.
    pub repository_programs: Vec<String>,
}

#[cfg(test)]
mod log_tests {
    #[test]
    fn credentials_never_reach_a_log_line() {
        let line =
            super::scrub_log_line("DEBUG async_imap: > A0001 LOGIN \"alice\" \"hunter2\"\r\n");
        assert!(
            !line.contains("hunter2") && !line.contains("alice"),
            "{line}"
        );
        let line =
            super::scrub_log_line("authorization: Bearer abc.def and sk-abcdefghijklmnopqrstu\n");
        assert!(
            !line.contains("abc.def") && !line.contains("sk-abc"),
            "{line}"
        );
        assert_eq!(
            super::scrub_log_line("INFO cowork opened\n"),
            "INFO cowork opened\n"
        );
        assert!(super::scrub_log_line("x\u{1b}[2Ky\n").contains("\\u{1b}"));
    }
}

#[derive(Debug, Error)]
pub enum AppError {
    #[error(transparent)]
    Store(#[from] cowork_store::StoreError),
    #[error(transparent)]
    Policy(#[from] cowork_core::PolicyError),
    #[error(transparent)]
    Audit(#[from] cowork_core::AuditError),
    #[error(transparent)]
    Files(#[from] cowork_files::shadow::ShadowError),
    #[error("vault: {0}")]
    Vault(String),
    #[error("chains: {0}")]
    Chains(String),
    #[error("the {0} family is missing from the families' table")]
    Family(&'static str),
    #[error(
        "workspace {path}: {source} — open an existing folder (the folder button above the chat, or --workspace)"
    )]
    Workspace {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub struct AppOptions {
    /// The data dir; `COWORK_HOME` or the platform data dir when None.
    pub home: Option<PathBuf>,
    pub workspace_roots: Vec<PathBuf>,
    pub approver: Arc<dyn Approver>,
    pub scheduler: SchedulerConfig,
}

pub struct App {
    store: Store,
    scheduler: Arc<Scheduler>,
    gateway: Arc<cowork_mcp::McpGateway>,
    toolpacks: cowork_mcp::Toolpacks,
    mail: Arc<cowork_mail::MailTools>,
    vault: Arc<cowork_vault::Vault>,
    vault_settings: VaultSettings,
    browser: Arc<cowork_browser::BrowserTools>,
    voice: Arc<cowork_voice::Voice>,
    chains: Arc<cowork_chains::Chains>,
    schedules: Arc<cowork_chains::Schedules>,
    credentials: Arc<signin::AccountCredentials>,
    /// Starts the toolpacks' servers, once, for whichever path needs them first.
    packs_starter: Arc<toolpacks::PacksStarter>,
    /// Bumped whenever a toolpack's server or tools change (started, failed, list changed).
    toolpack_changes: tokio::sync::watch::Sender<u64>,
    /// The MCP App views' pages the window shows (see `mcp_apps`).
    view_pages: mcp_apps::ViewPages,
    /// Resources the person attached that their server says changed (see `watch_resource`).
    resource_updates: tokio::sync::broadcast::Sender<toolpacks::ResourceUpdated>,
}

impl Drop for App {
    fn drop(&mut self) {
        if let Err(e) = self.save_toolpack_usage() {
            tracing::warn!("toolpacks: could not record last use: {e}");
        }
        // Servers are child processes: they end with the app.
        self.gateway.stop_all();
    }
}

/// Every log line passes through here: control characters escaped (a page title or a server's
/// message cannot forge log lines) and credentials that slipped into a message cut out — a
/// second line of defence behind the level cap on every dependency (`init_logging`).
#[derive(Clone)]
struct ScrubbingWriter<W> {
    inner: W,
}

impl<'a, W: tracing_subscriber::fmt::MakeWriter<'a>> tracing_subscriber::fmt::MakeWriter<'a>
    for ScrubbingWriter<W>
{
    type Writer = Scrubbed<W::Writer>;
    fn make_writer(&'a self) -> Self::Writer {
        Scrubbed(self.inner.make_writer())
    }
}

struct Scrubbed<W>(W);

impl<W: std::io::Write> std::io::Write for Scrubbed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let clean = scrub_log_line(&text);
        self.0.write_all(clean.as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Credentials in protocol text (IMAP `LOGIN user pass`, `AUTHENTICATE`, SMTP `AUTH`, HTTP
/// `Authorization:`) and token shapes, replaced; controls escaped, line breaks kept.
fn scrub_log_line(text: &str) -> String {
    let text = cowork_contract::text::printable_text(text);
    let mut out = String::with_capacity(text.len());
    let mut hide_rest = 0usize;
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let upper = word
            .trim_matches(|c: char| !c.is_ascii_alphanumeric())
            .to_ascii_uppercase();
        let line_end = if word.ends_with('\n') { "\n" } else { "" };
        if hide_rest > 0 || cowork_core::redact::looks_like_secret(word.trim_end()) {
            hide_rest = hide_rest.saturating_sub(1);
            out.push_str(cowork_core::redact::REDACTED);
            out.push_str(line_end);
            continue;
        }
        out.push_str(word);
        hide_rest = match upper.as_str() {
            "LOGIN" => 2,
            "AUTHENTICATE" | "AUTH" => 2,
            "AUTHORIZATION" => 2,
            "PASSWORD" | "PASS" => 1,
            _ => 0,
        };
    }
    out
}

static LOG_GUARD: OnceLock<tracing_appender::non_blocking::WorkerGuard> = OnceLock::new();

/// Logs go to a daily-rotated file in the data dir (`COWORK_LOG` sets the filter, default
/// `info`). Arguments are never logged; tool output neither — secrets can't reach a log line.
fn init_logging(dir: &DataDir) {
    if LOG_GUARD.get().is_some() {
        return;
    }
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("cowork")
        .filename_suffix("log")
        .max_log_files(14)
        .build(dir.logs_dir());
    let Ok(appender) = appender else { return };
    let (writer, guard) = tracing_appender::non_blocking(appender);
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("COWORK_LOG").unwrap_or_else(|_| "info".into());
    let in_force = filter.to_string();
    // Dependencies log what they send at debug/trace — an IMAP LOGIN with its password, HTTP
    // headers with tokens. Whatever the filter asks, however it is spelled (a crate, one of its
    // modules, a span), nothing but Cowork's own code logs below info: a second filter both
    // must pass, judged by whose code it is rather than a list of crates.
    let cap = tracing_subscriber::filter::filter_fn(|meta| {
        meta.target().starts_with("cowork") || *meta.level() <= tracing::Level::INFO
    });
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(ScrubbingWriter { inner: writer })
        .with_ansi(false)
        .with_filter(filter)
        .with_filter(cap);
    if tracing_subscriber::registry()
        .with(layer)
        .try_init()
        .is_ok()
    {
        let _ = LOG_GUARD.set(guard);
        tracing::debug!("log filter in force: {in_force} (dependencies capped at info)");
    }
}

pub use families::SCHEMAS;

/// `toolpacks` in settings.json.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct ToolpackSettings {
    /// Where GitHub installs go instead of api.github.com (a mirror, or the tests' loopback
    /// server).
    github_api: Option<String>,
    /// Where the catalog reads instead of the official MCP Registry (a company's own registry,
    /// or the tests' replay of recorded answers).
    registry: Option<String>,
}

impl Section for ToolpackSettings {
    const KEY: &'static str = "toolpacks";
}

/// `audit` in settings.json.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct AuditSettings {
    /// Where the window appends the audit head at each start (see `record_anchor_at_start`).
    anchor_file: Option<String>,
}

impl Section for AuditSettings {
    const KEY: &'static str = "audit";
}

/// How an app is opened: the shells' options, plus what tests inject instead of the
/// machine's own (keyring, embedding model, home folder, more tools). Everything else is the
/// production wiring: the tests' harness opens its apps here too.
pub struct AppBuilder {
    options: AppOptions,
    secrets: Arc<dyn cowork_contract::SecretSource>,
    embedder: Option<Result<Arc<dyn cowork_vault::Embedder>, String>>,
    person_home: Option<PathBuf>,
    more_tools: Vec<Arc<dyn cowork_contract::ToolProvider>>,
    logging: bool,
}

impl AppBuilder {
    /// Account passwords and keys from `secrets` instead of the OS keyring.
    pub fn secrets(mut self, secrets: Arc<dyn cowork_contract::SecretSource>) -> Self {
        self.secrets = secrets;
        self
    }

    /// The vault's embedding model, instead of the one its settings choose.
    pub fn embedder(mut self, embedder: Result<Arc<dyn cowork_vault::Embedder>, String>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// The person's home folder (`~` in settings, the policy's home) instead of `$HOME`.
    pub fn person_home(mut self, home: PathBuf) -> Self {
        self.person_home = Some(home);
        self
    }

    /// More tools beside the families' (built-in layer; reviewed like every tool).
    pub fn tools(mut self, provider: Arc<dyn cowork_contract::ToolProvider>) -> Self {
        self.more_tools.push(provider);
        self
    }

    /// No log file: for processes that open many apps one after another (tests).
    pub fn without_logging(mut self) -> Self {
        self.logging = false;
        self
    }

    pub fn open(self) -> Result<App, AppError> {
        let dir = match &self.options.home {
            Some(home) => DataDir::at(home.clone()),
            None => DataDir::locate()?,
        };
        let store = Store::open(dir, &SCHEMAS)?;
        if self.logging {
            init_logging(store.dir());
        }
        let roots = canonical_roots(&self.options.workspace_roots)?;
        let registry = Registry::new();
        cowork_core::register_core_tools(&registry);
        let credentials = Arc::new(signin::AccountCredentials::new(
            store.clone(),
            self.secrets.clone(),
        ));
        let wiring = families::Wiring {
            store: &store,
            secrets: self.secrets.clone(),
            credentials: credentials.clone(),
            embedder: self.embedder.clone(),
            person_home: self.person_home.clone(),
        };
        let mut opened = families::Opened::default();
        for family in &families::FAMILIES {
            let tools = (family.open)(&wiring, &mut opened)?;
            tracing::debug!(family = family.name, "opened");
            registry.add_provider(Layer::Builtin, tools);
        }
        for tools in &self.more_tools {
            registry.add_provider(Layer::Builtin, tools.clone());
        }
        let toolpacks = Toolpacks::open(&store, &registry);
        let scheduler = self.scheduler(&store, registry.clone(), roots)?;
        register_sub_agents(&registry, &store, &scheduler);
        App::assemble(store, scheduler, toolpacks, opened, credentials)
    }

    /// The gate in front of the registry: policy, audit, the person's approver and what the
    /// effects are judged against.
    fn scheduler(
        self,
        store: &Store,
        registry: Arc<Registry>,
        roots: Vec<PathBuf>,
    ) -> Result<Arc<Scheduler>, AppError> {
        let policy = Arc::new(PolicyBridge::open(store, &roots)?);
        // Trust in a folder covers what its repository runs, as the trust review lists it.
        policy.set_repository_programs(Arc::new(|root: &std::path::Path| {
            cowork_files::git::configured_programs(root)
        }));
        let env = EffectEnv {
            workspace_roots: roots,
            home: self
                .person_home
                .or_else(|| std::env::var_os("HOME").map(PathBuf::from)),
            cowork_data: Some(store.dir().root().to_path_buf()),
        };
        let scheduler = Arc::new(Scheduler::new(
            registry,
            policy,
            Arc::new(AuditLog::open(store)?),
            self.options.approver,
            env,
            self.options.scheduler,
        ));
        scheduler.set_suspensions(Arc::new(cowork_core::SuspendCoordinator::open(store)?));
        // ask_user, confirm, request_input and the model's plan mode speak through the scheduler.
        cowork_core::register_person_tools(&scheduler);
        Ok(scheduler)
    }
}

/// The agent the settings describe now (None when no model provider is set).
fn agent_of(
    store: &Store,
    scheduler: &Arc<Scheduler>,
) -> Result<Option<cowork_agent::Agent>, String> {
    let Some(settings) = AgentSettings::load(&store.dir().settings_path())? else {
        return Ok(None);
    };
    let conversations = cowork_agent::Conversations::open(store)?;
    Ok(Some(cowork_agent::Agent::new(
        scheduler.clone(),
        settings.provider()?,
        conversations,
        settings.agent_config(),
    )))
}

/// A scheduled prompt's conversation runs under its schedule's profile (the default's when it
/// names none); a profile that is not defined fails the run, saying so.
fn hold_to_profile(
    agent: &cowork_agent::Agent,
    conversation: &str,
    prompt: &str,
    profile: Option<String>,
) -> Result<(), String> {
    if let Some(name) = &profile {
        agent.named_profile(name).map_err(|e| e.to_string())?;
    }
    let conversations = agent.conversations();
    let title: String = prompt.chars().take(60).collect();
    conversations.ensure(conversation, &title)?;
    let settings = conversations.settings(conversation)?;
    conversations.choose_settings(
        conversation,
        &cowork_agent::ConversationSettings {
            profile,
            ..settings
        },
    )?;
    Ok(())
}

/// `task`: sub-agents run on the agent the settings describe when they start. The scheduler
/// is held weakly (it holds the registry that holds the tool).
fn register_sub_agents(registry: &Arc<Registry>, store: &Store, scheduler: &Arc<Scheduler>) {
    let scheduler = Arc::downgrade(scheduler);
    let store = store.clone();
    let source: cowork_agent::subagent::AgentSource = Arc::new(move || {
        let scheduler = scheduler.upgrade().ok_or("the app is shutting down")?;
        agent_of(&store, &scheduler)?.ok_or_else(|| {
            "no model provider is configured: Settings → Model, or `cowork provider set …`".into()
        })
    });
    for tool in cowork_agent::subagent::SubAgents::new(source).sub_agent_tools() {
        registry.register(Layer::Builtin, tool);
    }
}

fn canonical_roots(roots: &[PathBuf]) -> Result<Vec<PathBuf>, AppError> {
    roots
        .iter()
        .map(|r| {
            r.canonicalize().map_err(|source| AppError::Workspace {
                path: r.clone(),
                source,
            })
        })
        .collect()
}

/// The MCP layer: the gateway (the registry's highest layer) and the installed packs. Servers
/// start later (`start_toolpacks`, on a runtime); each discovery or list_changed reloads the
/// registry and ticks `changes`.
struct Toolpacks {
    gateway: Arc<cowork_mcp::McpGateway>,
    packs: cowork_mcp::Toolpacks,
    changes: tokio::sync::watch::Sender<u64>,
}

impl Toolpacks {
    fn open(store: &Store, registry: &Arc<Registry>) -> Toolpacks {
        let gateway = cowork_mcp::McpGateway::new();
        registry.add_provider(Layer::Mcp, gateway.clone());
        registry.add_provider(
            Layer::Builtin,
            Arc::new(cowork_mcp::skills::SkillTools {
                skills: cowork_mcp::skills::Skills::new(store.dir().root()),
            }),
        );
        let weak = Arc::downgrade(registry);
        let changes = tokio::sync::watch::Sender::new(0u64);
        let changed = changes.clone();
        gateway.set_on_change(Arc::new(move || {
            if let Some(registry) = weak.upgrade() {
                registry.reload();
            }
            changed.send_modify(|n| *n += 1);
        }));
        let mut packs = cowork_mcp::Toolpacks::new(store.dir().root());
        let settings = ToolpackSettings::load_or_default(&store.dir().settings_path());
        if let Some(api) = settings.github_api {
            packs.github_api = api;
        }
        if let Some(registry) = settings.registry {
            packs.registry = registry;
        }
        Toolpacks {
            gateway,
            packs,
            changes,
        }
    }

    /// Chain folders: the person's (data dir) first, then the enabled toolpacks'.
    fn chain_dirs(&self, store: &Store) -> Vec<PathBuf> {
        let mut dirs = vec![store.dir().root().join("chains")];
        if let Ok(packs) = self.packs.list() {
            dirs.extend(
                packs
                    .iter()
                    .filter(|(_, record)| record.enabled)
                    .map(|(name, _)| self.packs.dir_of(name).join("chains")),
            );
        }
        dirs
    }
}

/// Servers' elicitations go to the person through the same Approver as asks, audited.
fn elicit_through(scheduler: &Arc<Scheduler>) -> cowork_mcp::Elicitor {
    let weak = Arc::downgrade(scheduler);
    Arc::new(move |e: cowork_mcp::Elicitation| {
        let weak = weak.clone();
        Box::pin(async move {
            let Some(scheduler) = weak.upgrade() else {
                return cowork_mcp::ElicitReply::Decline;
            };
            let request = cowork_core::ElicitationRequest {
                id: uuid::Uuid::now_v7().to_string(),
                from: format!("mcp:{}", e.server),
                message: e.message,
                schema: e.schema,
            };
            match scheduler.elicit(request).await {
                cowork_core::ElicitationAnswer::Accept { content } => {
                    cowork_mcp::ElicitReply::Accept(content)
                }
                cowork_core::ElicitationAnswer::Decline => cowork_mcp::ElicitReply::Decline,
                cowork_core::ElicitationAnswer::Cancel => cowork_mcp::ElicitReply::Cancel,
            }
        })
    })
}

/// A family the table lacks: a programming error the families' unit test catches first.
fn missing(family: &'static str) -> AppError {
    AppError::Family(family)
}

impl App {
    /// The app as the shells open it: the machine's keyring, models and home.
    pub fn open(options: AppOptions) -> Result<App, AppError> {
        App::builder(options).open()
    }

    pub fn builder(options: AppOptions) -> AppBuilder {
        AppBuilder {
            options,
            secrets: Arc::new(secrets::Keyring),
            embedder: None,
            person_home: None,
            more_tools: Vec::new(),
            logging: true,
        }
    }

    /// The parts after the registry and the gate: chains (a tool provider that calls through
    /// the scheduler), schedules, elicitation, and the families' handles.
    fn assemble(
        store: Store,
        scheduler: Arc<Scheduler>,
        toolpacks: Toolpacks,
        opened: families::Opened,
        credentials: Arc<signin::AccountCredentials>,
    ) -> Result<App, AppError> {
        let browser = opened.browser.ok_or_else(|| missing("browser"))?;
        scheduler.add_resume_probe(browser.resume_probe());
        scheduler.add_resume_probe(Arc::new(signin::SignedInProbe(credentials.clone())));
        scheduler.add_resume_probe(toolpacks.gateway.task_probe());
        let packs_starter = toolpacks::PacksStarter::new(
            toolpacks.packs.clone(),
            toolpacks.gateway.clone(),
            credentials.clone(),
        );
        scheduler.set_tool_finder(packs_starter.finder(Arc::downgrade(scheduler.registry())));
        let chains = Arc::new(
            cowork_chains::Chains::open(&store, scheduler.clone(), toolpacks.chain_dirs(&store))
                .map_err(|e| AppError::Chains(e.to_string()))?,
        );
        scheduler
            .registry()
            .add_provider(Layer::Builtin, chains.provider());
        let schedules = Arc::new(
            cowork_chains::Schedules::open(&store).map_err(|e| AppError::Chains(e.to_string()))?,
        );
        toolpacks.gateway.set_elicitor(elicit_through(&scheduler));
        let resource_updates = tokio::sync::broadcast::channel(64).0;
        let updates = resource_updates.clone();
        toolpacks.gateway.set_watcher(Arc::new(move |server, uri| {
            let _ = updates.send(toolpacks::ResourceUpdated {
                server: server.to_string(),
                uri: uri.to_string(),
            });
        }));
        toolpacks.gateway.set_sampler(sampling::sampler(
            store.dir().settings_path(),
            Arc::downgrade(&scheduler),
        ));
        let weak = Arc::downgrade(&scheduler);
        toolpacks.gateway.set_workspace(Arc::new(move || {
            weak.upgrade()
                .map(|s| s.env().workspace_roots.clone())
                .unwrap_or_default()
        }));
        let (vault, vault_settings) = opened.vault.ok_or_else(|| missing("vault"))?;
        tracing::info!(home = %store.dir().root().display(), "cowork opened");
        Ok(App {
            mail: opened.mail.ok_or_else(|| missing("mail"))?,
            voice: opened.voice.ok_or_else(|| missing("voice"))?,
            store,
            scheduler,
            gateway: toolpacks.gateway,
            toolpacks: toolpacks.packs,
            vault,
            vault_settings,
            browser,
            chains,
            schedules,
            credentials,
            packs_starter,
            toolpack_changes: toolpacks.changes,
            view_pages: Default::default(),
            resource_updates,
        })
    }

    /// After the person resumed a suspended task: if a chain run waits on it, the run goes on
    /// from the next step (the task's outcome is that step's result; it ran once); a schedule's
    /// run waiting on it is moved on too (it ends once nothing it waits on is left).
    pub async fn task_resumed(
        &self,
        task: &str,
        outcome: &Result<cowork_contract::ToolOutput, cowork_contract::ToolError>,
    ) -> Option<Result<cowork_chains::RunReport, cowork_chains::RunError>> {
        if matches!(outcome, Err(cowork_contract::ToolError::Suspended { .. })) {
            return None; // still waiting (a login wall again): nothing moved
        }
        let chain = self.chains.continue_after(task, outcome, &|_| {}).await;
        let succeeded = outcome.is_ok() && !matches!(chain, Some(Err(_)));
        let report = chain.as_ref().and_then(|c| c.as_ref().ok());
        if let Err(e) = self.schedules.went_on(task, succeeded, report) {
            tracing::error!("schedules: the run waiting on task {task}: {e}");
        }
        chain
    }

    /// Scheduled runs of chains and prompts.
    pub fn schedules(&self) -> &Arc<cowork_chains::Schedules> {
        &self.schedules
    }

    /// Runs the schedules (on the system clock) for as long as it lives: a scheduled prompt
    /// runs through the model provider of Settings, unattended, with the schedule's grant.
    /// Shells run it for as long as they live (`cowork schedule serve`, the window).
    pub fn schedule_worker(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (store, scheduler) = (self.store.clone(), self.scheduler.clone());
        let prompt: cowork_chains::PromptRunner =
            Arc::new(move |conversation, text, granted, profile| {
                let (store, scheduler) = (store.clone(), scheduler.clone());
                Box::pin(async move {
                    let settings = AgentSettings::load(&store.dir().settings_path())?.ok_or(
                    "no model provider is configured: Settings → Model, or `cowork provider set`",
                )?;
                    let mut config = settings.agent_config();
                    config.granted = Some(Arc::from(granted));
                    config.unattended = true;
                    let agent = cowork_agent::Agent::new(
                        scheduler,
                        settings.provider()?,
                        cowork_agent::Conversations::open(&store)?,
                        config,
                    );
                    hold_to_profile(&agent, &conversation, &text, profile)?;
                    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                    let turn = agent.send(
                        &conversation,
                        &text,
                        &tx,
                        tokio_util::sync::CancellationToken::new(),
                    );
                    let result = turn.await.map_err(|e| e.to_string());
                    drop(tx);
                    let mut reply = cowork_chains::PromptReply::default();
                    while let Ok(event) = rx.try_recv() {
                        match event {
                            cowork_agent::AgentEvent::TextDelta { text } => {
                                reply.text.push_str(&text)
                            }
                            // A call outside the grant: suspended, waiting for the person.
                            cowork_agent::AgentEvent::ToolCallFinished {
                                suspended: Some(task),
                                ..
                            } => reply.waiting_on.push(task),
                            _ => {}
                        }
                    }
                    result.map(|_| reply)
                })
            });
        cowork_chains::serve(
            self.schedules.clone(),
            self.chains.clone(),
            Arc::new(cowork_chains::SystemClock),
            prompt,
        )
    }

    /// The tool chains of this data dir and the enabled toolpacks.
    pub fn chains(&self) -> &Arc<cowork_chains::Chains> {
        &self.chains
    }

    /// Ticks when a toolpack's server or tools change: shells push it to their views instead of
    /// polling.
    pub fn toolpack_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.toolpack_changes.subscribe()
    }

    /// The outbox worker: sends mail once its undo delay has passed. Shells run it on their
    /// runtime for as long as they live.
    pub fn outbox_worker(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.mail.outbox_worker()
    }

    /// Calendar reminders (VALARM): `on_due` gets each as it falls due, once (also one missed
    /// while Cowork was not running, as long as its event is still ahead). Shells run it for as
    /// long as they live.
    pub fn reminder_worker<F>(
        &self,
        mut on_due: F,
    ) -> impl std::future::Future<Output = ()> + Send + 'static
    where
        F: FnMut(cowork_calendar::Reminder) + Send + 'static,
    {
        // Events written meanwhile (by a tool, a sync) are seen at the latest this late.
        const RECHECK: std::time::Duration = std::time::Duration::from_secs(20);
        let store = self.store.clone();
        async move {
            let reminders = match cowork_calendar::Reminders::new(&store) {
                Ok(r) => r,
                Err(e) => return tracing::warn!("calendar reminders are off: {e}"),
            };
            loop {
                let now = chrono::Utc::now();
                match reminders.due(now) {
                    Ok(due) => due.into_iter().for_each(&mut on_due),
                    Err(e) => tracing::warn!("calendar reminders: {e}"),
                }
                let next = reminders.next(now).ok().flatten();
                let wait = next
                    .and_then(|at| (at - chrono::Utc::now()).to_std().ok())
                    .map_or(RECHECK, |until| until.min(RECHECK));
                tokio::time::sleep(wait).await;
            }
        }
    }

    /// Keeps the vault's index in step with its folder (a re-index, then file events) and
    /// makes missing vectors in the background. Shells run it for as long as they live.
    pub fn vault_worker(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (vault, settings) = (self.vault.clone(), self.vault_settings.embedder.clone());
        async move {
            if matches!(settings, EmbedderSettings::Openai { .. }) {
                vault::apply_embedder(&vault, &settings).await;
            }
            if let Err(e) = cowork_vault::watch(vault).await {
                tracing::warn!("vault: {e}");
            }
        }
    }

    /// The vault, for its panel and `cowork vault`: browsing, stats, re-index, progress. Its
    /// content changes only through the vault tools (reviewed) or the person's own edits.
    pub fn vault(&self) -> &Arc<cowork_vault::Vault> {
        &self.vault
    }

    /// Saves the vault settings. The returned future switches to their model and embeds what
    /// the new model lacks (progress on `vault().progress()`); shells spawn it. A new folder
    /// takes effect at the next start.
    pub fn set_vault_settings(
        &self,
        settings: VaultSettings,
    ) -> Result<impl std::future::Future<Output = ()> + Send + 'static, String> {
        settings.save(&self.store.dir().settings_path())?;
        let vault = self.vault.clone();
        Ok(async move { vault::apply_embedder(&vault, &settings.embedder).await })
    }

    /// Resumes suspended calls whose condition came true (the person got past a login), once a
    /// second. Shells run it for as long as they live; resumed calls run as `caller`, and
    /// `on_resumed` gets each one's suspension id and outcome (the window shows it).
    pub fn suspension_watcher(
        &self,
        caller: cowork_core::Caller,
        on_resumed: impl Fn(&str, &cowork_core::CallOutcome) + Send + 'static,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let scheduler = Arc::downgrade(&self.scheduler);
        async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                let Some(scheduler) = scheduler.upgrade() else {
                    return;
                };
                for (id, outcome) in scheduler.resume_ready(caller.clone()).await {
                    tracing::info!(suspension = %id, ok = outcome.result.is_ok(), "resumed by its condition");
                    on_resumed(&id, &outcome);
                }
            }
        }
    }

    /// The microphone's state (the window's indicator), stopping speech and recordings, and the
    /// voice settings. Recording and speaking themselves are tool calls, through the gate.
    pub fn voice(&self) -> &Arc<cowork_voice::Voice> {
        &self.voice
    }

    /// Ends the app's browser (and its driver and Chromium).
    pub async fn close_browser(&self) {
        self.browser.close().await;
    }

    /// Messages still waiting in the outbox.
    pub fn mail_pending(&self) -> usize {
        self.mail.pending()
    }

    /// Recent outbox messages, newest first.
    pub fn outbox(&self, limit: usize) -> Result<Vec<cowork_mail::OutboxRow>, String> {
        self.mail.outbox(limit)
    }

    /// Outbox ids this process queued that are still waiting (a one-shot CLI's Ctrl+C takes
    /// them back with `email_undo`).
    pub fn mail_queued_here(&self) -> Vec<i64> {
        self.mail.queued_here()
    }

    /// `audit.anchorFile` in settings.json: the window appends the audit head there at each
    /// start, so a later `cowork audit verify --anchor-file` can prove the log was not rewritten
    /// whole since. Best somewhere the data dir's owner cannot quietly edit (a synced folder).
    pub fn record_anchor_at_start(&self) {
        let settings = AuditSettings::load_or_default(&self.store.dir().settings_path());
        let Some(file) = settings.anchor_file else {
            return;
        };
        let file = match file.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default()
                .join(rest),
            None => PathBuf::from(file),
        };
        match self.scheduler.audit().append_anchor(&file) {
            Ok((seq, hash)) => {
                tracing::info!(seq, %hash, file = %file.display(), "audit anchor recorded")
            }
            Err(e) => tracing::warn!("{e}"),
        }
    }

    /// What trusting a workspace would let happen: its settings (allow rules, mode, broad
    /// rules) and what its repository configured git to run. Both shells show exactly this
    /// before the person trusts a folder.
    pub fn workspace_review(&self, root: &std::path::Path) -> Result<WorkspaceReview, String> {
        let root = root
            .canonicalize()
            .map_err(|e| format!("{}: {e}", root.display()))?;
        let status = self
            .scheduler
            .policy()
            .workspaces()
            .into_iter()
            .find(|w| w.root == root)
            .ok_or_else(|| {
                format!(
                    "{} is not open as a workspace: pass --workspace {}",
                    root.display(),
                    root.display()
                )
            })?;
        Ok(WorkspaceReview {
            repository_programs: cowork_files::git::configured_programs(&root),
            status,
        })
    }

    /// Opens `folder` as the workspace for the calls that follow (the window's folder picker),
    /// remembered among the recent folders. `None` closes the workspace.
    pub fn open_workspace(
        &self,
        folder: Option<&std::path::Path>,
    ) -> Result<Option<PathBuf>, AppError> {
        let root = match folder {
            None => None,
            Some(folder) => {
                let failed = |source| AppError::Workspace {
                    path: folder.to_path_buf(),
                    source,
                };
                let root = folder.canonicalize().map_err(failed)?;
                if !root.is_dir() {
                    return Err(failed(std::io::Error::new(
                        std::io::ErrorKind::NotADirectory,
                        "not a folder",
                    )));
                }
                Some(root)
            }
        };
        self.scheduler
            .set_workspaces(root.iter().cloned().collect())?;
        self.gateway.roots_changed();
        if let Some(root) = &root {
            let path = self.store.dir().settings_path();
            let mut desktop = DesktopSettings::load(&path).unwrap_or_default();
            desktop.remember_workspace(root);
            if let Err(e) = desktop.save(&path) {
                tracing::warn!("recent folders: {e}");
            }
        }
        Ok(root)
    }

    /// The person opens `folder` (None: closes it) for `conversation` (None: the chat not yet
    /// started, which takes the open folder when it starts). Refused while another conversation's
    /// run works in the folder open now.
    pub fn choose_workspace(
        &self,
        conversations: &cowork_agent::Conversations,
        conversation: Option<&str>,
        folder: Option<&std::path::Path>,
        running: &[String],
    ) -> Result<Option<PathBuf>, String> {
        if running.iter().any(|c| Some(c.as_str()) != conversation) {
            return Err(
                "another conversation is still working in the open folder — wait for it or stop it, then switch"
                    .into(),
            );
        }
        let root = self.open_workspace(folder).map_err(|e| e.to_string())?;
        if let Some(conversation) = conversation {
            conversations.set_workspace(conversation, root.as_deref())?;
        }
        Ok(root)
    }

    /// Opens the folder `conversation` works in, if it has one and it is not open already.
    /// Refused while a run in another conversation works in a different folder: its calls
    /// must not change folders under it.
    pub fn enter_conversation_workspace(
        &self,
        conversations: &cowork_agent::Conversations,
        conversation: &str,
        running: &[String],
    ) -> Result<Option<PathBuf>, String> {
        let wanted = conversations.workspace(conversation)?;
        let open = self.workspace();
        if wanted.is_none() || wanted == open {
            return Ok(open);
        }
        for other in running.iter().filter(|c| *c != conversation) {
            if conversations.workspace(other)? != wanted {
                let folder = open.as_deref().map(|p| p.display().to_string());
                return Err(format!(
                    "another conversation is still working in {} — wait for it or stop it, then switch",
                    folder.unwrap_or_else(|| "no folder".into())
                ));
            }
        }
        self.open_workspace(wanted.as_deref())
            .map_err(|e| e.to_string())
    }

    /// The workspace open now (the first root).
    pub fn workspace(&self) -> Option<PathBuf> {
        self.scheduler.env().workspace_roots.first().cloned()
    }

    pub fn scheduler(&self) -> &Arc<Scheduler> {
        &self.scheduler
    }

    /// A section of settings.json as its owner's type (its defaults when absent).
    pub fn settings<T: Section>(&self) -> Result<T, String> {
        T::load(&self.store.dir().settings_path())
    }

    /// Writes a section of settings.json, keeping every other key.
    pub fn save_settings<T: Section + serde::Serialize>(&self, settings: &T) -> Result<(), String> {
        settings.save(&self.store.dir().settings_path())
    }

    pub fn home(&self) -> &DataDir {
        self.store.dir()
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The chat agent per the user's settings; `Ok(None)` while no provider is configured (the
    /// palette and slash commands still work then).
    pub fn agent(&self) -> Result<Option<cowork_agent::Agent>, String> {
        agent_of(&self.store, &self.scheduler)
    }
}
