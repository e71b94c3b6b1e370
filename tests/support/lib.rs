//! Test harness: a real data dir in a temp folder, the app opened with the production wiring
//! (`App::builder`: every family, the gate, chains, toolpacks), and probe tools whose effects
//! and behaviour tests choose. Probes are registered like any family's tools and run only
//! through the scheduler.

pub mod agentdojo;
pub mod bench;
pub mod conformance;
pub mod desktop;
pub mod display;
pub mod llama;
pub mod llm_server;
pub mod login_wall;
pub mod mcp;
pub mod peers;
pub mod shop;
pub mod speech;
pub mod wait;
pub mod world;

use cowork_contract::{
    Annotations, CallPlan, Content, DynTool, Effect, EffectEnv, EffectKind, PreparedCall, Tool,
    ToolContext, ToolError, ToolMeta, ToolOutput, ToolResult, ToolSpec, typed,
};
use cowork_core::{Approver, Scheduler, SchedulerConfig};
use cowork_store::Store;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

pub struct Harness {
    pub workspace: PathBuf,
    pub store: Store,
    pub scheduler: Arc<Scheduler>,
    /// What the families read as the keyring (account passwords).
    pub secrets: Arc<MapSecrets>,
    /// The app (mail's undo delay [`MAIL_UNDO`]; tests spawn its `outbox_worker` when they
    /// send).
    pub app: cowork_app::App,
    /// The vault (folder `home/vault`), with the e5 model setup installed.
    pub vault: Arc<cowork_vault::Vault>,
    /// Last, so the folder is removed after the app has closed (fields drop in order).
    pub dir: tempfile::TempDir,
}

/// Serves `app` on 127.0.0.1 (a free port) on a thread and runtime of its own, so tests may
/// block (run processes) while a client talks to it; it lives as long as the test. Its base URL.
pub fn serve(app: axum::Router) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    serve_on(listener, app)
}

/// [`serve`] on a listener bound already (for an app that must know its own address).
pub fn serve_on(listener: std::net::TcpListener, app: axum::Router) -> String {
    listener.set_nonblocking(true).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    base
}

/// The harness's undo delay: long enough to undo in a test, short enough to wait for.
pub const MAIL_UNDO: Duration = Duration::from_millis(1500);

/// Approves every ask, remembering what it was asked (tool and effects).
#[derive(Default)]
pub struct Recorder {
    pub asked: std::sync::Mutex<Vec<(String, Vec<Effect>)>>,
}

#[async_trait::async_trait]
impl Approver for Recorder {
    fn name(&self) -> &str {
        "test"
    }
    async fn decide(&self, request: &cowork_core::ApprovalRequest) -> cowork_core::ApprovalChoice {
        self.asked
            .lock()
            .unwrap()
            .push((request.tool.clone(), request.effects.clone()));
        cowork_core::ApprovalChoice::Once
    }
}

/// Every file under `dir` (database, WAL, settings, logs…) whose bytes hold one of `secrets`:
/// where a password, a key or a token must not be.
pub fn files_holding(dir: &std::path::Path, secrets: &[&str]) -> Vec<std::path::PathBuf> {
    let (mut pending, mut holding) = (vec![dir.to_path_buf()], Vec::new());
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            let bytes = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            if secrets.iter().any(|s| bytes.contains(s)) {
                holding.push(path);
            }
        }
    }
    holding
}

/// An in-memory secret source for in-process tests; the keyring itself is tested through the CLI.
#[derive(Default)]
pub struct MapSecrets(std::sync::Mutex<std::collections::HashMap<String, String>>);

impl MapSecrets {
    pub fn set(&self, name: &str, value: &str) {
        self.0.lock().unwrap().insert(name.into(), value.into());
    }
}

impl cowork_contract::SecretSource for MapSecrets {
    fn get(&self, name: &str) -> Result<Option<String>, String> {
        Ok(self.0.lock().unwrap().get(name).cloned())
    }
    fn set(&self, name: &str, value: &str) -> Result<(), String> {
        MapSecrets::set(self, name, value);
        Ok(())
    }
    fn delete(&self, name: &str) -> Result<bool, String> {
        Ok(self.0.lock().unwrap().remove(name).is_some())
    }
}

/// The e5 model as setup installs it; a test that needs it fails with setup's instructions.
pub fn e5() -> Result<Arc<dyn cowork_vault::Embedder>, String> {
    let dir = cowork_vault::embed::default_e5_dir().ok_or("no HOME")?;
    cowork_vault::E5::load(&dir).map(|e| Arc::new(e) as Arc<dyn cowork_vault::Embedder>)
}

impl Harness {
    pub fn new(approver: Arc<dyn Approver>) -> Harness {
        Harness::with_config(approver, SchedulerConfig::default())
    }

    pub fn with_config(approver: Arc<dyn Approver>, config: SchedulerConfig) -> Harness {
        Harness::build(approver, config, None)
    }

    /// A harness whose workspace is an existing folder (e.g. this repository's checkout).
    pub fn with_workspace(approver: Arc<dyn Approver>, workspace: &std::path::Path) -> Harness {
        Harness::build(
            approver,
            SchedulerConfig::default(),
            Some(workspace.canonicalize().unwrap()),
        )
    }

    fn build(
        approver: Arc<dyn Approver>,
        config: SchedulerConfig,
        workspace: Option<PathBuf>,
    ) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let workspace = workspace.unwrap_or_else(|| {
            std::fs::create_dir_all(dir.path().join("ws")).unwrap();
            dir.path().join("ws").canonicalize().unwrap()
        });
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        // The undo delay is a setting, read when the mail family opens.
        let undo = serde_json::json!({ "mail": { "undoSeconds": MAIL_UNDO.as_secs_f64() } });
        std::fs::write(home.join("settings.json"), undo.to_string()).unwrap();
        let secrets = Arc::new(MapSecrets::default());
        let app = cowork_app::App::builder(cowork_app::AppOptions {
            home: Some(home),
            workspace_roots: vec![workspace.clone()],
            approver,
            scheduler: config,
        })
        .secrets(secrets.clone())
        .embedder(e5())
        .person_home(dir.path().join("userhome"))
        .tools(Arc::new(Probes))
        .without_logging()
        .open()
        .unwrap();
        let (store, scheduler) = (app.store().clone(), app.scheduler().clone());
        let vault = app.vault().clone();
        Harness {
            dir,
            workspace,
            store,
            scheduler,
            secrets,
            vault,
            app,
        }
    }

    /// The app's suspended tasks (the window's and `cowork tasks`' list).
    pub fn tasks(&self) -> Arc<cowork_core::SuspendCoordinator> {
        self.scheduler
            .suspensions()
            .expect("the app has one")
            .clone()
    }

    /// A mail account `me` whose servers are nowhere (port 9): sends are reviewed and queued,
    /// and nothing leaves the outbox.
    pub fn add_mail_account_nowhere(&self) {
        self.add_account("me", mail_nowhere(), "pw");
    }

    /// Adds an account with its password (in the harness's keyring stand-in).
    pub fn add_account(
        &self,
        name: &str,
        config: cowork_store::accounts::AccountConfig,
        password: &str,
    ) {
        let account = cowork_store::accounts::Account {
            name: name.into(),
            config,
        };
        cowork_store::accounts::put(&self.store.connect().unwrap(), &account).unwrap();
        self.secrets
            .set(&cowork_store::accounts::secret_name(name), password);
    }

    /// One chat call through the scheduler (conversation `conv`).
    pub async fn call(&self, tool: &str, args: serde_json::Value) -> cowork_core::CallOutcome {
        self.scheduler
            .call(cowork_core::CallRequest::new(
                tool,
                args,
                cowork_core::Caller::Chat,
                "conv",
            ))
            .await
    }

    /// A call that must succeed: its structured output.
    pub async fn ok(&self, tool: &str, args: serde_json::Value) -> serde_json::Value {
        match self.call(tool, args).await.result {
            Ok(o) => o.structured.unwrap_or(serde_json::Value::Null),
            Err(e) => panic!("{tool} failed: {e}"),
        }
    }

    /// Audit rows of one call, oldest first, after a flush.
    pub fn audit_rows(&self, call_id: &str) -> Vec<cowork_core::AuditEntry> {
        self.scheduler.flush().unwrap();
        let mut rows = self
            .scheduler
            .audit()
            .list(&cowork_core::AuditFilter {
                call_id: Some(call_id.into()),
                ..Default::default()
            })
            .unwrap();
        rows.reverse();
        rows
    }
}

/// A tool with a chosen effect and behaviour.
#[derive(Clone)]
pub struct Probe {
    pub name: &'static str,
    pub effect: fn(&ProbeInput) -> Vec<Effect>,
    pub kinds: &'static [EffectKind],
    pub annotations: Annotations,
    pub rate_limit: Option<(u32, u32)>,
    pub failures: Arc<AtomicU32>,
    pub calls: Arc<AtomicU32>,
}

#[derive(Deserialize, JsonSchema, Default)]
pub struct ProbeInput {
    #[serde(default)]
    pub target: String,
    /// Sleep this long (cooperating with cancellation).
    #[serde(default)]
    pub sleep_ms: u64,
    /// Fail transiently this many times first.
    #[serde(default)]
    pub fail_times: u32,
    #[serde(default)]
    pub api_key: Option<String>,
    /// Free text the call carries beside its target (a message's body).
    #[serde(default)]
    pub body: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct ProbeOutput {
    pub target: String,
    pub calls: u32,
}

#[async_trait::async_trait]
impl Tool for Probe {
    type Input = ProbeInput;
    type Output = ProbeOutput;
    type Plan = ();
    fn meta(&self) -> ToolMeta {
        let mut meta = ToolMeta::new(self.name, self.name, "A test probe.")
            .category("test")
            .effects(self.kinds)
            .annotations(self.annotations);
        if let Some((per_minute, burst)) = self.rate_limit {
            meta = meta.rate_limit(per_minute, burst);
        }
        meta
    }
    fn plan(&self, input: &ProbeInput, env: &EffectEnv) -> Result<CallPlan, ToolError> {
        let mut effects = (self.effect)(input);
        for e in &mut effects {
            if let Effect::FsWrite { path } | Effect::FsRead { path } | Effect::FsDelete { path } =
                e
            {
                *path = env.resolve_path(path).display().to_string();
            }
        }
        Ok(CallPlan::new(effects))
    }
    async fn call(&self, input: &ProbeInput, _: &(), ctx: &ToolContext) -> ToolResult<ProbeOutput> {
        let calls = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if input.sleep_ms > 0 {
            ctx.report_progress(0.0, Some(1.0), Some("sleeping".into()));
            tokio::select! {
                _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                _ = tokio::time::sleep(Duration::from_millis(input.sleep_ms)) => {}
            }
        }
        if self.failures.fetch_add(1, Ordering::SeqCst) < input.fail_times {
            return Err(ToolError::transient("flaky peer"));
        }
        Ok(ProbeOutput {
            target: input.target.clone(),
            calls,
        })
    }
}

fn probe(
    name: &'static str,
    kinds: &'static [EffectKind],
    effect: fn(&ProbeInput) -> Vec<Effect>,
) -> Probe {
    Probe {
        name,
        effect,
        kinds,
        annotations: Annotations::default(),
        rate_limit: None,
        failures: Arc::default(),
        calls: Arc::default(),
    }
}

/// A tool whose output breaks its own declared output schema.
struct LiarTool {
    spec: ToolSpec,
}

impl DynTool for LiarTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn prepare(
        &self,
        _args: serde_json::Value,
        _env: &EffectEnv,
    ) -> Result<PreparedCall, ToolError> {
        Ok(PreparedCall::new(
            vec![],
            Arc::new(|_ctx| {
                Box::pin(async {
                    Ok(ToolOutput {
                        content: vec![Content::Text { text: "x".into() }],
                        structured: Some(serde_json::json!({"count": "many"})),
                        ..Default::default()
                    })
                })
            }),
        ))
    }
}

#[derive(Default)]
pub struct Probes;

impl cowork_contract::ToolProvider for Probes {
    fn name(&self) -> &str {
        "probes"
    }
    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        let mut fetch = probe("fetch_probe", &[EffectKind::NetFetch], |i| {
            vec![Effect::NetFetch {
                origin: i.target.clone(),
            }]
        });
        fetch.annotations = Annotations {
            read_only: true,
            open_world: true,
            ..Default::default()
        };
        let mut flaky = probe("flaky_probe", &[EffectKind::TasksRead], |_| {
            vec![Effect::TasksRead]
        });
        flaky.annotations = Annotations {
            read_only: true,
            idempotent: true,
            ..Default::default()
        };
        let mut limited = probe("limited_probe", &[EffectKind::TasksRead], |_| {
            vec![Effect::TasksRead]
        });
        limited.rate_limit = Some((2, 2));
        vec![
            typed(probe("exec_probe", &[EffectKind::ProcessExec], |i| {
                vec![Effect::ProcessExec {
                    command: i.target.clone(),
                    workspace_code: vec![],
                }]
            })),
            typed(probe("write_probe", &[EffectKind::FsWrite], |i| {
                vec![Effect::FsWrite {
                    path: i.target.clone(),
                }]
            })),
            typed(probe("delete_probe", &[EffectKind::FsDelete], |i| {
                vec![Effect::FsDelete {
                    path: i.target.clone(),
                }]
            })),
            // Declares a read, has a write: the gate refuses it (a family's bug, caught).
            typed(probe(
                "undeclared_write_probe",
                &[EffectKind::FsRead],
                |i| {
                    vec![Effect::FsWrite {
                        path: i.target.clone(),
                    }]
                },
            )),
            typed(probe("read_probe", &[EffectKind::FsRead], |i| {
                vec![Effect::FsRead {
                    path: i.target.clone(),
                }]
            })),
            typed(probe("mail_probe", &[EffectKind::MailSend], |i| {
                vec![Effect::MailSend {
                    account: "work".into(),
                    recipients: i.target.split(',').map(String::from).collect(),
                }]
            })),
            typed(fetch),
            typed(flaky),
            typed(limited),
            Arc::new(LiarTool {
                spec: ToolSpec {
                    output_schema: Some(
                        serde_json::json!({"type": "object", "properties": {"count": {"type": "integer"}}}),
                    ),
                    ..ToolSpec::from_meta(
                        ToolMeta::new(
                            "liar_probe",
                            "liar",
                            "returns output that breaks its schema",
                        )
                        .category("test")
                        .annotations(Annotations {
                            read_only: true,
                            ..Default::default()
                        }),
                        serde_json::json!({"type": "object"}),
                    )
                },
            }),
        ]
    }
}

/// Runs the `cowork` binary `bin` on data dir `home`. With `stdin`, the terminal prompt reads
/// it (COWORK_APPROVE_FROM_STDIN); without, nobody is at a terminal and asks are denied.
pub fn run_cowork(
    bin: &str,
    home: &std::path::Path,
    args: &[&str],
    stdin: Option<&str>,
) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env("COWORK_HOME", home)
        .env_remove("COWORK_APPROVE_FROM_STDIN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if stdin.is_some() {
        cmd.env("COWORK_APPROVE_FROM_STDIN", "1");
    }
    let mut child = cmd.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        pipe.write_all(text.as_bytes()).unwrap();
    }
    drop(pipe);
    child.wait_with_output().unwrap()
}

/// stdout and stderr of a finished process, as one text.
pub fn output_text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A tool with no effects that always returns the same output: a screenshot-taking tool, or
/// one of the many tools an installed toolpack brings (the tool-definition budget's tests).
pub struct FixedTool {
    pub spec: ToolSpec,
    pub output: ToolOutput,
}

impl FixedTool {
    pub fn new(
        name: &str,
        category: &str,
        description: &str,
        input_schema: serde_json::Value,
        output: ToolOutput,
    ) -> Arc<FixedTool> {
        Arc::new(FixedTool {
            spec: ToolSpec::from_meta(
                ToolMeta::new(name, name, description).category(category),
                input_schema,
            ),
            output,
        })
    }
}

impl DynTool for FixedTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn prepare(
        &self,
        _args: serde_json::Value,
        _env: &EffectEnv,
    ) -> Result<PreparedCall, ToolError> {
        let output = self.output.clone();
        Ok(PreparedCall::new(
            vec![],
            Arc::new(move |_ctx| {
                let output = output.clone();
                Box::pin(async move { Ok(output) })
            }),
        ))
    }
}

/// A mail account's settings whose servers are nowhere (port 9): a send can be reviewed and
/// queued, and nothing leaves.
pub fn mail_nowhere() -> cowork_store::accounts::AccountConfig {
    cowork_store::accounts::AccountConfig::Mail {
        email: "me@example.test".into(),
        display_name: None,
        username: "me".into(),
        imap_host: "127.0.0.1".into(),
        imap_port: 9,
        imap_security: cowork_store::accounts::Security::Plain,
        smtp_host: "127.0.0.1".into(),
        smtp_port: 9,
        smtp_security: cowork_store::accounts::Security::Plain,
        auth: Default::default(),
    }
}
