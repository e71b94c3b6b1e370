//! The MCP gateway and toolpacks against REAL servers: npm `@modelcontextprotocol/server-filesystem`
//! and `server-memory`, PyPI `mcp-server-time`, and a probe server written with the official
//! TypeScript SDK (`tests/mcp-servers/probe-server.mjs`) for progress, cancellation,
//! list_changed, crashes, hangs and garbage. All installed by tests/setup.sh; all on stdio or
//! loopback. Every call goes through the scheduler, so reviews and audit rows are checked too.

use cowork_app::{App, AppOptions, ServerState};
use cowork_contract::ToolError;
use cowork_core::{
    ApprovalChoice, ApprovalRequest, Approver, CallRequest, Caller, ElicitationAnswer,
    ElicitationRequest, Layer, SchedulerConfig, ToolEvent,
};
use cowork_tests::mcp::{FakeGithub, link_tree, probe_pack, servers, with_servers_readable};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Answers asks with a queued choice (deny when the queue is empty) and remembers each ask.
#[derive(Default)]
struct Script {
    answers: Mutex<Vec<ApprovalChoice>>,
    asked: Mutex<Vec<ApprovalRequest>>,
    /// The next form's answer (decline when none).
    form: Mutex<Option<ElicitationAnswer>>,
    forms: Mutex<Vec<ElicitationRequest>>,
}

#[async_trait::async_trait]
impl Approver for Script {
    fn name(&self) -> &str {
        "script"
    }
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalChoice {
        self.asked.lock().unwrap().push(request.clone());
        self.answers
            .lock()
            .unwrap()
            .pop()
            .unwrap_or(ApprovalChoice::Deny)
    }
    async fn elicit(&self, request: &ElicitationRequest) -> ElicitationAnswer {
        self.forms.lock().unwrap().push(request.clone());
        self.form
            .lock()
            .unwrap()
            .take()
            .unwrap_or(ElicitationAnswer::Decline)
    }
}

impl Script {
    fn answer(&self, choice: ApprovalChoice) {
        self.answers.lock().unwrap().push(choice);
    }
    fn asked(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

struct Env {
    dir: tempfile::TempDir,
    workspace: PathBuf,
    script: Arc<Script>,
    app: App,
}

fn open(settings: Option<Value>) -> Env {
    open_with(settings, None)
}

/// As [`open`], with an in-memory secret source instead of the OS keyring when given.
fn open_with(settings: Option<Value>, secrets: Option<Arc<cowork_tests::MapSecrets>>) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    if let Some(settings) = settings {
        std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
    }
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let workspace = workspace.canonicalize().unwrap();
    let script = Arc::new(Script::default());
    let builder = App::builder(AppOptions {
        home: Some(home),
        workspace_roots: vec![workspace.clone()],
        approver: script.clone(),
        scheduler: SchedulerConfig::default(),
    });
    let app = match secrets {
        Some(secrets) => builder.secrets(secrets),
        None => builder,
    }
    .open()
    .unwrap();
    Env {
        dir,
        workspace,
        script,
        app,
    }
}

impl Env {
    /// Installs a folder (dependencies are linked from tests/mcp-servers, never downloaded).
    async fn install(
        &self,
        folder: &Path,
        config: BTreeMap<String, Value>,
    ) -> cowork_app::ToolpackRecord {
        let staged = self
            .app
            .stage_toolpack(&folder.display().to_string(), None)
            .await
            .unwrap();
        // Dependencies are placed before the install is committed, so they are pinned with it.
        for dep in ["node_modules", ".venv"] {
            if folder.join(dep).exists() || !servers().join(dep).exists() {
                continue;
            }
            // Real files in the pack, as an install leaves them: its sandbox shows it nothing else.
            link_tree(&servers().join(dep), &staged.dir().join(dep));
        }
        self.app.install_toolpack(staged, config, false).unwrap()
    }

    async fn settle(&self) {
        self.app
            .toolpacks_settled(cowork_tests::wait::patience())
            .await;
    }

    async fn call(&self, tool: &str, args: Value) -> cowork_core::CallOutcome {
        self.app
            .scheduler()
            .call(CallRequest::new(tool, args, Caller::Cli, "mcp-test"))
            .await
    }

    fn status(&self, server: &str) -> cowork_app::ServerStatus {
        self.app
            .mcp_servers()
            .into_iter()
            .find(|s| s.name == server)
            .unwrap_or_else(|| panic!("no server {server}"))
    }

    fn audit_layer(&self, call_id: &str) -> Option<String> {
        let rows = self.audit(cowork_core::AuditFilter {
            call_id: Some(call_id.into()),
            ..Default::default()
        });
        rows.first().and_then(|r| r.record.layer.clone())
    }

    /// The audit rows `filter` selects, once every queued row is written.
    fn audit(&self, filter: cowork_core::AuditFilter) -> Vec<cowork_core::AuditEntry> {
        self.app.scheduler().flush().unwrap();
        self.app.scheduler().audit().list(&filter).unwrap()
    }

    /// The audit rows of the tool `tool`.
    fn audit_of(&self, tool: &str) -> Vec<cowork_core::AuditEntry> {
        self.audit(cowork_core::AuditFilter {
            tool: Some(tool.into()),
            ..Default::default()
        })
    }
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    cowork_tests::wait::until_true(what, || match check() {
        true => Ok(()),
        false => Err("not yet".into()),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shipped_toolpacks_run_real_servers_through_review_and_audit() {
    let env = open(None);
    let fs_config = BTreeMap::from([(
        "allowed_directories".to_string(),
        json!([env.workspace.display().to_string()]),
    )]);
    env.install(&repo().join("toolpacks/time"), BTreeMap::new())
        .await;
    env.install(&repo().join("toolpacks/filesystem"), fs_config)
        .await;
    // server-memory ships with no declarations: every call is an unknown effect.
    let memory = env.dir.path().join("pack-memory");
    std::fs::create_dir_all(&memory).unwrap();
    let js = servers().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    // Its code stays in tests/mcp-servers (granted read-only); its graph goes to its own
    // private folder, the only place its sandbox lets it write.
    let manifest = json!({"manifest_version": "0.3", "name": "memory", "version": "1.0.0",
        "server": {"type": "node", "entry_point": "index.js", "mcp_config": {"command": "node", "args": [js],
            "env": {"MEMORY_FILE_PATH": "${DATA_DIR}/memory.jsonl"}}},
        "_meta": {"app.cowork": with_servers_readable(json!({}))}});
    std::fs::write(memory.join("manifest.json"), manifest.to_string()).unwrap();
    env.install(&memory, BTreeMap::new()).await;
    env.settle().await;
    for server in ["time", "filesystem", "memory"] {
        let s = env.status(server);
        assert_eq!(s.state, ServerState::Running, "{s:?}");
        assert!(s.tools > 0 && s.pid.is_some(), "{s:?}");
    }

    // Discovery: namespaced names, the plain name as alias, the MCP layer.
    let registry = env.app.scheduler().registry();
    let time = registry
        .get("mcp__time__get_current_time")
        .expect("discovered");
    assert_eq!(time.layer, Layer::Mcp);
    assert_eq!(
        registry.canonical_name("get_current_time").as_deref(),
        Some("mcp__time__get_current_time")
    );
    // The shipped declarations cover every tool the real servers report.
    for info in registry.list().into_iter().filter(|t| {
        t.spec.name.starts_with("mcp__filesystem__") || t.spec.name.starts_with("mcp__time__")
    }) {
        assert!(
            !info
                .spec
                .effects
                .contains(&cowork_contract::EffectKind::McpCall),
            "{} is undeclared in its shipped manifest",
            info.spec.name
        );
    }

    // A call with no effects: allowed, runs, audited as an MCP call.
    let out = env
        .call("get_current_time", json!({"timezone": "Asia/Shanghai"}))
        .await;
    let text = out.result.as_ref().unwrap().text_content();
    assert!(text.contains("+08:00"), "{text}");
    assert_eq!(
        out.review.as_ref().unwrap().decision,
        cowork_core::Action::Allow
    );
    assert_eq!(env.audit_layer(&out.call_id).as_deref(), Some("mcp"));

    // Declared effects are judged on the call's real paths: inside the workspace a write
    // scores 3, plus 1 for the server's destructive hint (it overwrites), so it asks; outside
    // the workspace, with no rule naming the path, a read is a security violation: refused
    // without asking, never reaching the server.
    let target = env.workspace.join("hello.txt");
    env.script.answer(ApprovalChoice::Once);
    let write = env
        .call(
            "mcp__filesystem__write_file",
            json!({"path": target, "content": "hi from MCP"}),
        )
        .await;
    assert!(write.result.is_ok(), "{:?}", write.result);
    let review = write.review.as_ref().unwrap();
    assert_eq!(review.score, 4, "{review:?}");
    assert!(
        review
            .reasons
            .iter()
            .any(|r| r.text.contains("inside the workspace"))
            && review
                .reasons
                .iter()
                .any(|r| r.text.contains("destructive")),
        "{review:?}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi from MCP");
    let read = env
        .call("mcp__filesystem__read_text_file", json!({"path": target}))
        .await;
    assert_eq!(read.result.unwrap().text_content(), "hi from MCP");
    let asked_before = env.script.asked.lock().unwrap().len();
    let outside = env
        .call(
            "mcp__filesystem__read_text_file",
            json!({"path": "/etc/hostname"}),
        )
        .await;
    assert!(
        matches!(outside.result, Err(ToolError::SecurityViolation { .. })),
        "{:?}",
        outside.result
    );
    assert!(
        outside
            .review
            .as_ref()
            .unwrap()
            .why
            .contains("outside the workspace"),
        "{:?}",
        outside.review
    );
    assert_eq!(
        env.script.asked.lock().unwrap().len(),
        asked_before,
        "confinement does not ask"
    );
    // A move declares a delete and a write; both are reviewed (delete inside: 6, asks).
    env.script.answer(ApprovalChoice::Once);
    let moved = env
        .call(
            "mcp__filesystem__move_file",
            json!({"source": target, "destination": env.workspace.join("moved.txt")}),
        )
        .await;
    assert!(moved.result.is_ok(), "{:?}", moved.result);
    assert!(env.workspace.join("moved.txt").exists());

    // Undeclared → mcp.call, risk 8, asks; approved once it runs.
    env.script.answer(ApprovalChoice::Once);
    let before = env.script.asked();
    let created = env.call("mcp__memory__create_entities", json!({"entities": [{"name": "Ada", "entityType": "person", "observations": ["likes tea"]}]})).await;
    assert!(created.result.is_ok(), "{:?}", created.result);
    assert_eq!(env.script.asked(), before + 1);
    let review = created.review.unwrap();
    assert_eq!(review.score, 8, "{review:?}");
    assert!(
        review.reasons[0].text.contains("declares no effects"),
        "{review:?}"
    );
    // A tool is scored by its sandbox where it claims less: the filesystem pack may change the
    // folders it was given, so even its `list_directory` (declared fs.read) carries that write.
    let listed = env
        .call(
            "mcp__filesystem__list_directory",
            json!({"path": env.workspace}),
        )
        .await;
    let review = listed.review.as_ref().unwrap();
    assert!(
        review.reasons[0]
            .text
            .contains("writes a file inside the workspace"),
        "{review:?}"
    );
    // Plan mode lets read-only tools run — the time pack's sandbox reaches nothing beyond its
    // own folders — and stops the undeclared ones and those whose sandbox can write.
    env.app
        .scheduler()
        .policy()
        .set_mode(cowork_core::Mode::Plan, false)
        .unwrap();
    assert!(
        env.call("get_current_time", json!({"timezone": "UTC"}))
            .await
            .result
            .is_ok()
    );
    assert!(matches!(
        env.call(
            "mcp__filesystem__list_directory",
            json!({"path": env.workspace})
        )
        .await
        .result,
        Err(ToolError::Denied { .. })
    ));
    assert!(matches!(
        env.call("mcp__memory__read_graph", json!({})).await.result,
        Err(ToolError::Denied { .. })
    ));
    env.app.scheduler().flush().unwrap();
    let report = env.app.scheduler().audit().verify().unwrap();
    assert!(report.ok(), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_progress_cancel_timeout_list_changed_crash_and_override() {
    let env = open(None);
    let declared = json!({"effects": {"echo": [], "pid": [], "slow": [], "hang": [], "crash": [], "fail": [], "add_tool": [], "touch_readme": [], "add_note": [], "ask_name": [{"kind": "ui.ask"}]},
                          "overrides": {"web_fetch": "echo"}});
    env.install(
        &probe_pack(env.dir.path(), "probe", &[], declared),
        BTreeMap::new(),
    )
    .await;
    env.settle().await;
    let scheduler = env.app.scheduler();

    // Override: web_fetch (built in) is now the probe's echo, visibly,
    // also in the audit row.
    let web_fetch = scheduler.registry().get("web_fetch").unwrap();
    assert_eq!(
        (web_fetch.layer, web_fetch.overrides.clone()),
        (Layer::Mcp, vec![Layer::Builtin])
    );
    let echoed = env.call("web_fetch", json!({"text": "via override"})).await;
    assert_eq!(echoed.result.unwrap().text_content(), "via override");
    assert_eq!(
        env.audit_layer(&echoed.call_id).as_deref(),
        Some("mcp (overrides builtin)")
    );

    // Progress notifications become scheduler progress events.
    let mut events = scheduler.subscribe();
    let slow = env
        .call("mcp__probe__slow", json!({"steps": 3, "delay_ms": 30}))
        .await;
    assert_eq!(slow.result.unwrap().text_content(), "done after 3 steps");
    // The last notification and the result travel separately (rmcp hands notifications to
    // their own task), so it may land just after the call returned: the client keeps a finished
    // call's progress route a few seconds for it (CI once lost step 3); wait for it, bounded.
    let mut progress = Vec::new();
    let deadline = tokio::time::Instant::now() + cowork_tests::wait::patience();
    while progress.len() < 3 {
        let Ok(Ok(event)) = tokio::time::timeout_at(deadline, events.recv()).await else {
            break;
        };
        if let ToolEvent::Progress {
            call_id,
            progress: p,
        } = event
            && call_id == slow.call_id
        {
            progress.push((p.progress, p.total, p.message));
        }
    }
    assert_eq!(
        progress,
        [
            (1.0, Some(3.0), Some("step 1".into())),
            (2.0, Some(3.0), Some("step 2".into())),
            (3.0, Some(3.0), Some("step 3".into()))
        ]
    );

    // Cancel and timeout send notifications/cancelled: the server sees them (its log says so).
    let log = env.status("probe").log_file;
    let req = CallRequest::new("mcp__probe__hang", json!({}), Caller::Cli, "mcp-test");
    let cancel = req.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    assert!(matches!(
        scheduler.call(req).await.result,
        Err(ToolError::Cancelled)
    ));
    // `hang` never answers: only the cancel can have ended it.
    assert!(started.elapsed() < cowork_tests::wait::patience());
    let mut req = CallRequest::new("mcp__probe__hang", json!({}), Caller::Cli, "mcp-test");
    req.timeout = Some(Duration::from_millis(300));
    assert!(matches!(
        scheduler.call(req).await.result,
        Err(ToolError::Timeout { .. })
    ));
    eventually("two cancellations in the server log", || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("cancelled request")
            .count()
            >= 2
    })
    .await;

    // Resources and prompts: listed and read through the gateway tools, reviewed like any call.
    let listed = env
        .call("mcp_list_resources", json!({}))
        .await
        .result
        .unwrap();
    assert_eq!(
        listed.structured.as_ref().unwrap()[0]["uri"],
        "probe://readme",
        "{listed:?}"
    );
    assert_eq!(listed.structured.as_ref().unwrap()[0]["server"], "probe");
    env.script.answer(ApprovalChoice::Once);
    let read = env
        .call(
            "mcp_read_resource",
            json!({"server": "probe", "uri": "probe://readme"}),
        )
        .await;
    assert_eq!(read.result.unwrap().text_content(), "The probe says hi.");
    let review = read.review.unwrap();
    assert_eq!(
        (review.score, review.tainted_by.as_deref()),
        (9, Some("mcp_list_resources")),
        "reading runs server code on its URI: asks — higher once the list (the server's words) tainted the conversation"
    );
    // Attached from the window: the person's pick reads it (no ask), as a file part, and the
    // conversation is tainted by what the server said.
    let scheduler = env.app.scheduler();
    let attached = cowork_app::attachments::attach_resource(
        scheduler,
        "attach-test",
        "probe",
        "probe://readme",
    )
    .await
    .unwrap();
    assert!(
        matches!(&attached, cowork_agent::Part::File { name, text, .. }
            if name == "probe: probe://readme" && text == "The probe says hi."),
        "{attached:?}"
    );
    assert_eq!(
        scheduler.policy().tainted_by("attach-test").as_deref(),
        Some("mcp_read_resource")
    );
    let none = cowork_app::attachments::attach_resource(
        scheduler,
        "attach-test",
        "probe",
        "probe://nothing",
    )
    .await
    .unwrap_err();
    assert!(!none.is_empty());
    // Watched: the server offers subscriptions, and says when the readme changes.
    let mut updates = env.app.resource_updates();
    assert_eq!(
        env.app.watch_resource("probe", "probe://readme").await,
        Ok(true)
    );
    let touched = env
        .call("mcp__probe__touch_readme", json!({"text": "new words"}))
        .await;
    assert_eq!(touched.result.unwrap().text_content(), "changed");
    let update = tokio::time::timeout(cowork_tests::wait::patience(), updates.recv())
        .await
        .expect("resources/updated within patience")
        .unwrap();
    assert_eq!(
        update,
        cowork_app::ResourceUpdated {
            server: "probe".into(),
            uri: "probe://readme".into()
        }
    );
    // A resource added while running: list_changed reaches the window (toolpacks changed).
    let mut changes = env.app.toolpack_changes();
    changes.borrow_and_update();
    let added = env
        .call("mcp__probe__add_note", json!({"name": "n1"}))
        .await;
    assert!(added.result.is_ok(), "{:?}", added.result);
    tokio::time::timeout(cowork_tests::wait::patience(), changes.changed())
        .await
        .expect("the list change reaches the app")
        .unwrap();
    let prompts = env
        .call("mcp_list_prompts", json!({"server": "probe"}))
        .await
        .result
        .unwrap();
    assert_eq!(prompts.structured.unwrap()[0]["name"], "greet");
    let prompt = env
        .call(
            "mcp_get_prompt",
            json!({"server": "probe", "name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(
        prompt.result.unwrap().text_content(),
        "user: Say hello to Ada."
    );
    let missing = env
        .call("mcp_list_prompts", json!({"server": "nope"}))
        .await
        .result
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("no running MCP server named \"nope\"") && missing.contains("toolpack"),
        "{missing}"
    );

    // Elicitation: the server's form goes to the person through the Approver, and is audited
    // (the action, never the content).
    *env.script.form.lock().unwrap() = Some(ElicitationAnswer::Accept {
        content: json!({"name": "Ada"}),
    });
    let named = env.call("mcp__probe__ask_name", json!({})).await;
    assert_eq!(named.result.unwrap().text_content(), "Hello, Ada!");
    let form = env.script.forms.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        (form.from.as_str(), form.message.as_str()),
        ("mcp:probe", "What is your name?")
    );
    assert_eq!(form.schema["properties"]["name"]["type"], "string");
    let declined = env.call("mcp__probe__ask_name", json!({})).await;
    assert_eq!(declined.result.unwrap().text_content(), "no name (decline)");
    let rows = env.audit_of("elicitation");
    let answers: Vec<_> = rows
        .iter()
        .map(|r| r.record.approved_by.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        answers,
        ["script: declined", "script: accepted"],
        "newest first"
    );
    assert!(
        rows.iter().all(|r| !r.record.args.contains("Ada")),
        "the answer's content stays out of the log"
    );

    // An error result is a failed call with the server's message.
    let failed = env.call("mcp__probe__fail", json!({})).await;
    assert!(
        failed
            .result
            .unwrap_err()
            .to_string()
            .contains("failed on purpose")
    );

    // list_changed refreshes the registry without a restart.
    assert!(
        env.call("mcp__probe__add_tool", json!({"name": "fresh"}))
            .await
            .result
            .is_ok()
    );
    eventually("the new tool in the registry", || {
        scheduler.registry().has("mcp__probe__fresh")
    })
    .await;
    // Undeclared in the manifest, so it asks; approve once.
    env.script.answer(ApprovalChoice::Once);
    assert_eq!(
        env.call("mcp__probe__fresh", json!({}))
            .await
            .result
            .unwrap()
            .text_content(),
        "I am fresh"
    );

    // The server runs in its own pid namespace (bubblewrap): it sees itself as one of the
    // first processes there, not by its pid on the machine.
    let inner_pid: i32 = env
        .call("mcp__probe__pid", json!({}))
        .await
        .result
        .unwrap()
        .text_content()
        .parse()
        .unwrap();
    assert!(inner_pid <= 3, "sandboxed in a pid namespace: {inner_pid}");
    // Crash: kill -9 the server's sandbox mid-call; the call fails at once (no hang), the
    // server comes back by itself with a new pid, and calls work again.
    let pid = env.status("probe").pid.expect("running") as i32;
    let hanging = tokio::spawn({
        let scheduler = scheduler.clone();
        async move {
            scheduler
                .call(CallRequest::new(
                    "mcp__probe__hang",
                    json!({}),
                    Caller::Cli,
                    "mcp-test",
                ))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let killed_at = Instant::now();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let in_flight = hanging.await.unwrap();
    let err = in_flight.result.unwrap_err().to_string();
    assert!(err.contains("exited during the call"), "{err}");
    assert!(
        killed_at.elapsed() < cowork_tests::wait::patience(),
        "the in-flight call must fail, not wait forever"
    );
    eventually("a restart", || {
        let s = env.status("probe");
        s.restarts >= 1 && s.state == ServerState::Running
    })
    .await;
    assert!(env.call("mcp__probe__pid", json!({})).await.result.is_ok());
    assert_ne!(Some(pid as u32), env.status("probe").pid);
    scheduler.flush().unwrap();
    let report = scheduler.audit().verify().unwrap();
    assert!(report.ok(), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_misbehave_fail_clearly() {
    use cowork_mcp::{LaunchSpec, McpServer, RestartPolicy, Transport};
    let dir = tempfile::tempdir().unwrap();
    let quick = RestartPolicy {
        initial_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(200),
        max_restarts: 2,
        max_first_restarts: 2,
        start_timeout: Duration::from_millis(1500),
    };
    let spec = |name: &str, flags: &[&str]| {
        let mut args = vec![servers().join("probe-server.mjs").display().to_string()];
        args.extend(flags.iter().map(|f| f.to_string()));
        LaunchSpec {
            name: name.into(),
            transport: Transport::Stdio {
                command: "node".into(),
                args,
                env: Default::default(),
                cwd: None,
            },
            log_file: dir.path().join(format!("{name}.log")),
            restart: quick,
            sandbox: cowork_mcp::Sandbox::Unconfined(cowork_mcp::Unconfined::TurnedOff),
        }
    };
    // Never answers initialize: bounded by the start timeout, retried, then failed.
    let mute = McpServer::start(spec("mute", &["--mute"]), Arc::new(|| {}));
    let started = Instant::now();
    let status = mute.wait_settled(cowork_tests::wait::patience()).await;
    assert_eq!(status.state, ServerState::Failed, "{status:?}");
    assert!(
        status
            .last_error
            .unwrap()
            .contains("no answer to initialize")
    );
    assert_eq!(status.restarts, 2);
    assert!(started.elapsed() < cowork_tests::wait::patience());
    let ctx = cowork_contract::ToolContext::new("c", "t", Default::default());
    let err = mute
        .call("echo", json!({"text": "x"}), &ctx)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("failed after 2 restarts") && err.contains("mute.log"),
        "{err}"
    );

    // Garbage on stdout before the protocol: either survived or a clear failure, never a hang.
    let garbage = McpServer::start(spec("garbage", &["--garbage"]), Arc::new(|| {}));
    let status = garbage.wait_settled(cowork_tests::wait::patience()).await;
    match status.state {
        ServerState::Running => {
            let out = garbage
                .call("echo", json!({"text": "still fine"}), &ctx)
                .await
                .unwrap();
            assert_eq!(out.text_content(), "still fine");
        }
        ServerState::Failed => assert!(status.last_error.is_some()),
        other => panic!("garbage server left in {other:?}"),
    }

    // A program that does not exist fails at once, without retrying.
    let mut missing = spec("missing", &[]);
    missing.transport = Transport::Stdio {
        command: "/nonexistent/mcp-server".into(),
        args: vec![],
        env: Default::default(),
        cwd: None,
    };
    let status = McpServer::start(missing, Arc::new(|| {}))
        .wait_settled(cowork_tests::wait::patience())
        .await;
    assert_eq!((status.state, status.restarts), (ServerState::Failed, 0));
    assert!(status.last_error.unwrap().contains("is it installed"));
    mute.stop();
    garbage.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_install_is_pinned_and_tampering_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let pack = probe_pack(
        work.path(),
        "gh-probe",
        &[],
        json!({"effects": {"echo": []}}),
    );
    let github = FakeGithub::start(&pack);
    const SHA: &str = FakeGithub::SHA;
    let base = github.base.clone();
    let env = open(Some(json!({"toolpacks": {"githubApi": base}})));
    let staged = env
        .app
        .stage_toolpack("github:owner/repo@v1", None)
        .await
        .unwrap();
    assert_eq!(staged.review.commit.as_deref(), Some(SHA));
    assert_eq!(
        staged
            .review
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["echo"]
    );
    let record = env
        .app
        .install_toolpack(staged, BTreeMap::new(), false)
        .unwrap();
    assert_eq!(
        (
            record.source.as_str(),
            record.r#ref.as_deref(),
            record.commit.as_deref()
        ),
        ("github:owner/repo@v1", Some("v1"), Some(SHA))
    );
    env.settle().await;
    let echoed = env
        .call("mcp__gh_probe__echo", json!({"text": "from github"}))
        .await;
    assert_eq!(echoed.result.unwrap().text_content(), "from github");
    let on_disk: Value = serde_json::from_slice(
        &std::fs::read(env.app.home().root().join("toolpacks.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(on_disk["gh-probe"]["sha256"], json!(record.sha256));
    assert_eq!(on_disk["gh-probe"]["commit"], json!(SHA));

    // The same commit served with different bytes: refused, and nothing replaced.
    std::fs::write(pack.join("extra.js"), "console.log('evil')").unwrap();
    github.serve(&pack);
    let err = env
        .app
        .stage_toolpack("github:owner/repo@v1", None)
        .await
        .err()
        .expect("tampered tarball refused")
        .to_string();
    assert!(err.contains("its content changed"), "{err}");
    // A pin given up front is enforced too.
    let err = env
        .app
        .stage_toolpack(&pack.display().to_string(), Some(&record.sha256))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("its content changed"), "{err}");

    // Tampering on disk: the pack is refused at the next start.
    let installed = env
        .app
        .home()
        .root()
        .join("toolpacks/gh-probe/manifest.json");
    let text = std::fs::read_to_string(&installed)
        .unwrap()
        .replace("probe", "pwned");
    std::fs::write(&installed, text).unwrap();
    let started = env.app.reload_toolpacks().unwrap();
    let error = started
        .iter()
        .find(|s| s.name == "gh-probe")
        .and_then(|s| s.error.clone())
        .expect("refused");
    assert!(
        error.contains("its content changed") && error.contains("toolpack update"),
        "{error}"
    );
    assert!(!env.app.scheduler().registry().has("mcp__gh_probe__echo"));

    // Bad manifests name the field; unknown sources say what is accepted.
    let broken = work.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("manifest.json"), r#"{"manifest_version": "0.3", "name": "b", "version": "1", "server": {"type": "node", "entry_point": "x", "mcp_config": {"args": []}}}"#).unwrap();
    let err = env
        .app
        .stage_toolpack(&broken.display().to_string(), None)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("server.mcp_config") && err.contains("command"),
        "{err}"
    );
    let err = env
        .app
        .stage_toolpack("gitlab:x/y", None)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("github:owner/repo"), "{err}");
}

/// A server of tests/mcp-servers (the test venv's Python, or Node), killed when dropped.
struct ServerProcess(std::process::Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `script PORT ARGS…` on a free loopback port and waits until it listens.
async fn python_server(script: &str, args: &[String]) -> (u16, ServerProcess) {
    let python = servers().join(".venv/bin/python");
    server_on_port(python.to_str().unwrap(), |port| {
        let mut line = vec![servers().join(script).display().to_string(), port];
        line.extend(args.iter().cloned());
        line
    })
    .await
}

/// Starts `program` with the command line `args` makes of a free loopback port, and waits until
/// it listens there.
async fn server_on_port(
    program: &str,
    args: impl FnOnce(String) -> Vec<String>,
) -> (u16, ServerProcess) {
    let port = cowork_tests::peers::free_port();
    let child = std::process::Command::new(program)
        .args(args(port.to_string()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e} (tests/setup.sh installs it)"));
    let server = ServerProcess(child);
    eventually("the HTTP server listening", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    })
    .await;
    (port, server)
}

/// Stages a pack for a server already listening at `url` (`kind` "http" or "sse") whose `echo`
/// and `slow` declare nothing, checks the review names its transport, and installs it.
async fn install_remote(
    env: &Env,
    name: &str,
    kind: &str,
    url: &str,
    transport: &str,
) -> Vec<String> {
    let pack = env.dir.path().join(format!("pack-{name}"));
    std::fs::create_dir_all(&pack).unwrap();
    let manifest = json!({"manifest_version": "0.3", "name": name, "version": "1.0.0",
        "server": {"type": kind, "url": url},
        "_meta": {"app.cowork": {"effects": {"echo": [], "slow": []}}}});
    std::fs::write(pack.join("manifest.json"), manifest.to_string()).unwrap();
    let staged = env
        .app
        .stage_toolpack(&pack.display().to_string(), None)
        .await
        .unwrap();
    assert!(
        staged.review.command.contains(transport),
        "{}",
        staged.review.command
    );
    let sandbox = staged.review.sandbox.clone();
    env.app
        .install_toolpack(staged, BTreeMap::new(), false)
        .unwrap();
    env.settle().await;
    sandbox
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_http_sse_server_through_the_gateway() {
    // The official TypeScript SDK's SSEServerTransport (MCP 2024-11-05), on loopback.
    let probe = servers().join("probe-server.mjs").display().to_string();
    let (port, _server) = server_on_port("node", |port| vec![probe, "--sse".into(), port]).await;
    let env = open(None);
    let url = format!("http://127.0.0.1:{port}/sse");
    install_remote(&env, "old-probe", "sse", &url, "HTTP+SSE").await;
    let status = env.status("old_probe");
    assert_eq!(status.state, ServerState::Running, "{status:?}");
    assert!(status.tools >= 5, "{status:?}");
    // Replies come back on the event stream, progress included, and match their requests when
    // several are in flight.
    env.script.answer(ApprovalChoice::Once);
    env.script.answer(ApprovalChoice::Once);
    let (a, b) = tokio::join!(
        env.call(
            "mcp__old_probe__echo",
            json!({"text": "over the old transport"})
        ),
        env.call("mcp__old_probe__slow", json!({"steps": 3, "delay_ms": 50})),
    );
    assert_eq!(a.result.unwrap().text_content(), "over the old transport");
    assert_eq!(b.result.unwrap().text_content(), "done after 3 steps");
    // Remote, so unconfined: every call asks, whatever it declares.
    assert_eq!(a.review.unwrap().decision, cowork_core::Action::Ask);

    // Installed as "http" (a person pasting the address): the streamable handshake is refused,
    // and the client falls back to HTTP+SSE there, as the transport's compatibility rule says.
    install_remote(&env, "pasted", "http", &url, "streamable HTTP").await;
    let status = env.status("pasted");
    assert_eq!(status.state, ServerState::Running, "{status:?}");
    env.script.answer(ApprovalChoice::Once);
    let out = env
        .call("mcp__pasted__echo", json!({"text": "found the old way"}))
        .await;
    assert_eq!(out.result.unwrap().text_content(), "found the old way");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_sampling_request_is_reviewed_answered_by_the_persons_model_and_budgeted() {
    use cowork_tests::llm_server::{ScriptedLlm, Turn};
    let llm = ScriptedLlm::start().await;
    let env = open(Some(
        json!({"agent": {"provider": "openai", "baseUrl": llm.openai_base(),
                                         "model": "scripted", "apiKeyEnv": ""}}),
    ));
    let declared = json!({"effects": {"ask_model": []}});
    env.install(
        &probe_pack(env.dir.path(), "probe", &[], declared),
        BTreeMap::new(),
    )
    .await;
    env.settle().await;
    let ask = |question: &str, max_tokens: u32| {
        env.call(
            "mcp__probe__ask_model",
            json!({"question": question, "max_tokens": max_tokens}),
        )
    };

    // Denied: the server reads a refusal and nothing reached the model. The ask showed the
    // server's question and which model would answer, in words.
    let out = ask("What is 2+2?", 50).await;
    let text = out.result.unwrap_err().to_string();
    assert!(text.contains("sampling refused"), "{text}");
    assert!(llm.requests().is_empty());
    let asked = env.script.asked.lock().unwrap().last().cloned().unwrap();
    assert_eq!(asked.tool, "mcp_sampling");
    let what = &asked.plain.what[0].text;
    assert!(
        what.contains("probe") && what.contains("scripted"),
        "{what}"
    );
    assert_eq!(asked.args["messages"][0]["text"], "What is 2+2?");
    assert!(
        !asked.choices.contains(&ApprovalChoice::Always),
        "{:?}",
        asked.choices
    );

    // Allowed once: the person's model answers the server's words alone, within the budget's
    // longest answer, and the server gets the answer and the model's name.
    llm.push(Turn::text("4"));
    env.script.answer(ApprovalChoice::Once);
    let out = ask("What is 2+2?", 1_000_000).await;
    assert_eq!(out.result.unwrap().text_content(), "scripted said: 4");
    let (_, _, body) = llm.requests().pop().unwrap();
    assert_eq!(body["max_tokens"], 2048, "{body}");
    let sent = body["messages"].to_string();
    assert!(
        sent.contains("What is 2+2?") && sent.contains("Answer in one line."),
        "{sent}"
    );
    assert!(body["tools"].as_array().is_none_or(Vec::is_empty), "{body}");

    // On record under the server's own name.
    let rows = env.audit_of("mcp_sampling");
    let calls: std::collections::BTreeSet<_> = rows.iter().map(|r| &r.record.call_id).collect();
    assert_eq!(calls.len(), 2, "{rows:?}");
    assert!(rows.iter().all(|r| r.record.caller == "mcp-server:probe"));

    // "For this toolpack": later requests of this server go through without asking.
    for _ in 0..4 {
        llm.push(Turn::text("again"));
    }
    env.script.answer(ApprovalChoice::Conversation);
    let asks = env.script.asked() + 1;
    for _ in 0..4 {
        let out = ask("again?", 10).await;
        assert_eq!(out.result.unwrap().text_content(), "scripted said: again");
    }
    assert_eq!(env.script.asked(), asks);

    // A budget per server: a burst of six, then refusals that say why, without asking.
    let out = ask("and again?", 10).await;
    let text = out.result.unwrap_err().to_string();
    assert!(text.contains("sampling budget"), "{text}");
    assert_eq!(env.script.asked(), asks);
    // The refusal is on record too.
    let rows = env.audit_of("mcp_sampling");
    assert!(
        rows.iter().any(|r| r
            .record
            .error
            .as_deref()
            .is_some_and(|e| e.contains("sampling budget"))),
        "{rows:?}"
    );

    // The grant goes with the pack.
    let granted = |env: &Env| {
        let grants = env.app.scheduler().policy().grants().unwrap();
        grants
            .iter()
            .any(|g| g.conversation.as_deref() == Some("mcp-server:probe"))
    };
    assert!(granted(&env));
    env.app.remove_toolpack("probe").unwrap();
    assert!(!granted(&env));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_server_through_the_gateway() {
    // The official Python SDK serving streamable HTTP on loopback.
    let (port, _guard) = python_server("http_server.py", &[]).await;

    let env = open(None);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let staged_sandbox = install_remote(&env, "web-echo", "http", &url, "streamable HTTP").await;
    let status = env.status("web_echo");
    assert_eq!(status.state, ServerState::Running, "{status:?}");
    // Cowork does not start an HTTP server, so nothing confines it: the review says so and
    // every call asks, whatever its tools declare.
    assert!(
        staged_sandbox
            .iter()
            .any(|l| l.starts_with("NOT sandboxed")),
        "{staged_sandbox:?}"
    );
    env.script.answer(ApprovalChoice::Once);
    let out = env
        .call("mcp__web_echo__echo", json!({"text": "over HTTP"}))
        .await;
    assert_eq!(out.result.unwrap().text_content(), "over HTTP");
    let review = out.review.unwrap();
    assert_eq!(review.decision, cowork_core::Action::Ask);
    assert!(
        review.reasons[0].text.contains("runs outside a sandbox"),
        "{review:?}"
    );
    // What an unconfined server returns is untrusted (it may have fetched anything), so even
    // an allow rule asks from here on in this conversation; the person approves.
    env.script.answer(ApprovalChoice::Once);
    let mut guard = _guard;
    // Killed while a long call waits: the call ends within seconds, saying why, instead of
    // waiting out its 60 s timeout (nothing else tells an HTTP client the server died).
    let started = std::time::Instant::now();
    let call = env.call("mcp__web_echo__slow", json!({"seconds": 50}));
    let kill = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let _ = guard.0.kill();
        let _ = guard.0.wait();
    };
    let (out, ()) = tokio::join!(call, kill);
    let err = out.result.expect_err("the call fails").to_string();
    // Either the broken stream says so at once, or the liveness ping finds the server gone.
    assert!(
        err.contains("stopped answering") || err.contains("exited during the call"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "noticed before the call's 60 s timeout: {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_dependencies_install_into_the_pack_and_a_failure_leaves_nothing() {
    let env = open(None);
    // A local package as the dependency: npm installs it without the network.
    let lib = env.dir.path().join("greet-lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(
        lib.join("package.json"),
        r#"{"name": "greet-lib", "version": "1.0.0", "main": "index.js"}"#,
    )
    .unwrap();
    std::fs::write(lib.join("index.js"), "module.exports = () => 'hi';").unwrap();
    let pack = probe_pack(
        env.dir.path(),
        "with-deps",
        &[],
        json!({"effects": {"echo": []}}),
    );
    std::fs::write(pack.join("package.json"), json!({"name": "with-deps", "private": true, "dependencies": {"greet-lib": format!("file:{}", lib.display())}}).to_string()).unwrap();
    let staged = env
        .app
        .stage_toolpack(&pack.display().to_string(), None)
        .await
        .unwrap();
    let record = env
        .app
        .install_toolpack(staged, BTreeMap::new(), true)
        .unwrap();
    let installed = env.app.home().root().join("toolpacks/with-deps");
    assert!(
        installed
            .join("node_modules/greet-lib/package.json")
            .exists(),
        "npm installed into the pack's own folder"
    );
    env.settle().await;
    assert_eq!(
        env.call("mcp__with_deps__echo", json!({"text": "deps ok"}))
            .await
            .result
            .unwrap()
            .text_content(),
        "deps ok"
    );
    // node_modules is not part of the pin: the pack still verifies at the next start.
    assert!(
        env.app
            .reload_toolpacks()
            .unwrap()
            .iter()
            .all(|s| s.error.is_none())
    );
    assert_eq!(
        env.app.toolpack_records().unwrap()["with-deps"].sha256,
        record.sha256
    );

    // A dependency that cannot be installed: a clear error, nothing left installed.
    let broken = probe_pack(env.dir.path(), "broken-deps", &[], json!({}));
    std::fs::write(
        broken.join("package.json"),
        r#"{"name": "broken", "dependencies": {"#,
    )
    .unwrap();
    let staged = env
        .app
        .stage_toolpack(&broken.display().to_string(), None)
        .await
        .unwrap();
    let err = env
        .app
        .install_toolpack(staged, BTreeMap::new(), true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("npm install") && err.contains("failed"),
        "{err}"
    );
    assert!(!env.app.home().root().join("toolpacks/broken-deps").exists());
    assert!(
        !env.app
            .toolpack_records()
            .unwrap()
            .contains_key("broken-deps")
    );
}

/// A tool declaring that it reads mail stays a source of untrusted text even when its server
/// hints `openWorldHint: false`: after it, a call that sends data out names it as the taint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_world_hint_does_not_untaint_what_a_tool_reads() {
    let env = open(None);
    let declared = json!({"effects": {
        "inbox": [{"kind": "mail.read", "account": "work"}],
        "echo": [{"kind": "message.send", "service": "chat", "recipients": "{text}"}],
    }});
    env.install(
        &probe_pack(env.dir.path(), "hinted", &[], declared),
        BTreeMap::new(),
    )
    .await;
    env.settle().await;
    let read = env.call("mcp__hinted__inbox", json!({})).await;
    assert!(read.result.is_ok(), "{:?}", read.result);
    env.script.answer(ApprovalChoice::Deny);
    let sent = env
        .call("mcp__hinted__echo", json!({"text": "mallory"}))
        .await;
    let review = sent.review.expect("reviewed");
    assert_eq!(review.tainted_by.as_deref(), Some("mcp__hinted__inbox"));
    assert_eq!(env.script.asked(), 1, "it asked: {}", review.why);
    assert!(sent.result.is_err(), "the person said no");
}

/// A server granted a folder to change is watched like a command: what it leaves there for the
/// person's own git to run (a repository with a planted program) is held back when its call
/// ends, and the result says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_server_leaves_for_the_persons_git_is_held_back() {
    let env = open(None);
    let ws = env.workspace.display().to_string();
    let declared = json!({
        // It declares nothing: what its grant reaches is what the review sees (a write in the
        // workspace), and the planted file is never named to the gate.
        "effects": {"write_file": []},
        "sandbox": {"write": [ws]},
    });
    env.install(
        &probe_pack(env.dir.path(), "writer", &[], declared),
        BTreeMap::new(),
    )
    .await;
    env.settle().await;
    let config = env.workspace.join("sub/.git/config");
    let planted = "[core]\n\tfsmonitor = touch /tmp/cowork-never\n";
    let wrote = env
        .call(
            "mcp__writer__write_file",
            json!({"path": config.display().to_string(), "text": planted}),
        )
        .await
        .result
        .unwrap()
        .text_content();
    assert!(wrote.contains("held back"), "{wrote}");
    assert_ne!(
        std::fs::read_to_string(&config).ok().as_deref(),
        Some(planted),
        "the planted program is still where git reads it"
    );
    // An ordinary file is just written.
    let notes = env.workspace.join("notes.md");
    let wrote = env
        .call(
            "mcp__writer__write_file",
            json!({"path": notes.display().to_string(), "text": "hello"}),
        )
        .await
        .result
        .unwrap()
        .text_content();
    assert!(!wrote.contains("held back"), "{wrote}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "hello");
}

/// A remote MCP server behind OAuth (the official Python SDK as a resource server, a real
/// OpenID provider as its authorization server): installed and reviewed, it does not start
/// until the person signs in — then Cowork finds the authorization server from the server's
/// protected resource metadata, registers itself, signs the person in (PKCE, a token for this
/// server only) and calls it. A token issued for something else is refused by the server; a
/// sign-out leaves it waiting again. The tokens live in the secret source and nowhere else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_server_behind_oauth_is_installed_signed_into_and_called() {
    use cowork_tests::MapSecrets;
    use cowork_tests::peers::OidcProvider;
    let provider = tokio::task::spawn_blocking(|| OidcProvider::start(&[]))
        .await
        .unwrap();
    let (port, _server) = python_server(
        "auth_server.py",
        &[provider.issuer(), provider.introspection_url()],
    )
    .await;
    let mcp_url = format!("http://127.0.0.1:{port}/mcp");

    let secrets = Arc::new(MapSecrets::default());
    let env = open_with(None, Some(secrets.clone()));
    let pack = env.dir.path().join("pack-auth");
    std::fs::create_dir_all(&pack).unwrap();
    let manifest = json!({"manifest_version": "0.3", "name": "auth-probe", "version": "1.0.0",
        "server": {"type": "http", "url": mcp_url},
        "_meta": {"app.cowork": {"effects": {"whoami": []}}}});
    std::fs::write(pack.join("manifest.json"), manifest.to_string()).unwrap();
    let staged = env
        .app
        .stage_toolpack(&pack.display().to_string(), None)
        .await
        .unwrap();
    env.app
        .install_toolpack(staged, BTreeMap::new(), false)
        .unwrap();
    env.settle().await;
    let waiting = env.status("auth_probe");
    assert_eq!(waiting.state, ServerState::NeedsSignIn);
    let why = waiting.last_error.unwrap_or_default();
    assert!(
        why.contains("asks you to sign in") && why.contains("cowork toolpack signin auth_probe"),
        "{why}"
    );

    // The person signs in: the address is the provider's, for this server only (RFC 8707).
    let sign_in = env.app.begin_toolpack_sign_in("auth-probe").await.unwrap();
    let url: reqwest::Url = sign_in.url().parse().unwrap();
    assert!(url.as_str().starts_with(&provider.issuer()), "{url}");
    let pairs: BTreeMap<String, String> = url.query_pairs().into_owned().collect();
    assert_eq!(pairs.get("resource"), Some(&mcp_url), "{url}");
    assert_eq!(
        pairs.get("code_challenge_method").map(String::as_str),
        Some("S256")
    );
    let person = tokio::spawn(async move { OidcProvider::person_signs_in(&url, "alice").await });
    env.app
        .finish_toolpack_sign_in("auth-probe", sign_in)
        .await
        .unwrap();
    person.await.unwrap();
    env.settle().await;
    assert_eq!(env.status("auth_probe").state, ServerState::Running);
    env.script.answer(ApprovalChoice::Once);
    let out = env.call("mcp__auth_probe__whoami", json!({})).await;
    assert_eq!(out.result.unwrap().text_content(), "signed in as alice");
    let kept = cowork_contract::SecretSource::get(&*secrets, "mcp-oauth/auth_probe")
        .unwrap()
        .expect("the tokens are in the secret source");
    assert!(kept.contains("access_token"));

    // A token the same provider issued for something else: the server refuses it.
    let http = reqwest::Client::new();
    let server = cowork_oauth::discover(&http, &provider.issuer().parse().unwrap())
        .await
        .unwrap();
    let other = cowork_oauth::begin(&server, "cowork-test", &["openid".into(), "mail".into()])
        .await
        .unwrap();
    let other_url = other.url().clone();
    let person =
        tokio::spawn(async move { OidcProvider::person_signs_in(&other_url, "alice").await });
    let mail_token = other.finish(&http, Duration::from_secs(30)).await.unwrap();
    person.await.unwrap();
    let refused = http
        .post(&mcp_url)
        .bearer_auth(&mail_token.access_token)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        refused.status().as_u16(),
        401,
        "a token for another audience"
    );

    // Signed out: the server waits for a sign-in again.
    assert!(env.app.sign_out_toolpack("auth-probe").unwrap());
    env.settle().await;
    assert_eq!(env.status("auth_probe").state, ServerState::NeedsSignIn);
    // A call meanwhile says how to sign in, rather than that no such tool exists.
    let waiting_call = env.call("mcp__auth_probe__whoami", json!({})).await;
    let why = waiting_call.result.unwrap_err().to_string();
    assert!(
        why.contains("is not available now") && why.contains("cowork toolpack signin auth_probe"),
        "{why}"
    );
    // …and the name it gives (the server's) is one the sign-in takes.
    let again = env.app.begin_toolpack_sign_in("auth_probe").await;
    assert!(again.is_ok(), "{:?}", again.err());

    assert!(
        cowork_contract::SecretSource::get(&*secrets, "mcp-oauth/auth_probe")
            .unwrap()
            .is_none()
    );
}

/// MCP roots: the real filesystem server asks for them and narrows what it serves to them.
/// Cowork offers the person's open workspace — only the part the server's sandbox can reach —
/// and tells the server when the workspace moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filesystem_server_is_told_the_workspace_it_can_reach_as_its_roots() {
    let dir = tempfile::tempdir().unwrap();
    let folder = |name: &str| {
        let p = dir.path().join(name);
        std::fs::create_dir_all(&p).unwrap();
        p.canonicalize().unwrap()
    };
    let (a, b, c) = (folder("a"), folder("b"), folder("c"));
    let workspace: Arc<std::sync::Mutex<Vec<std::path::PathBuf>>> =
        Arc::new(std::sync::Mutex::new(vec![a.clone(), c.clone()]));
    let open = workspace.clone();
    let offers = cowork_mcp::Offers {
        workspace: Some(Arc::new(move || open.lock().unwrap().clone())),
        ..Default::default()
    };
    let js = servers().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let data = folder("data");
    // Confined, given a and b (as its manifest would ask): the workspace's c is not its to see.
    let sandbox = cowork_mcp::Sandbox::Confined(cowork_mcp::sandbox::Confinement {
        code: servers(),
        data,
        program: None,
        read: vec![],
        write: vec![a.clone(), b.clone()],
        network: false,
        home: None,
        hidden: vec![],
    });
    let spec = cowork_mcp::LaunchSpec {
        name: "fs".into(),
        transport: cowork_mcp::Transport::Stdio {
            command: "node".into(),
            args: vec![
                js.display().to_string(),
                a.display().to_string(),
                b.display().to_string(),
            ],
            env: Default::default(),
            cwd: Some(servers()),
        },
        log_file: dir.path().join("fs.log"),
        restart: Default::default(),
        sandbox,
    };
    let server = cowork_mcp::McpServer::start_with(spec, Arc::new(|| {}), offers);
    let status = server.wait_settled(cowork_tests::wait::patience()).await;
    assert_eq!(status.state, ServerState::Running, "{status:?}");
    let allowed = || async {
        let ctx = cowork_contract::ToolContext::new("roots", "roots", Default::default());
        match server
            .call("list_allowed_directories", json!({}), &ctx)
            .await
        {
            Ok(out) => out.text_content(),
            Err(e) => e.to_string(),
        }
    };
    let shown = |p: &std::path::Path| p.display().to_string();
    cowork_tests::wait::until("the server narrowed to the reachable workspace", || async {
        let now = allowed().await;
        let ok = now.contains(&shown(&a)) && !now.contains(&shown(&b)) && !now.contains(&shown(&c));
        ok.then_some(()).ok_or(now)
    })
    .await;
    // The person opens b instead: the server hears of it and follows.
    *workspace.lock().unwrap() = vec![b.clone()];
    server.roots_changed();
    cowork_tests::wait::until("the server followed the workspace", || async {
        let now = allowed().await;
        let ok = now.contains(&shown(&b)) && !now.contains(&shown(&a));
        ok.then_some(()).ok_or(now)
    })
    .await;
    server.stop();
}

/// An MCP App (the SDK's reference server, npm `@modelcontextprotocol/server-basic-vanillajs`):
/// its tool's result says which view it comes with — a `ui://` resource of the same server —
/// and that view reads as the HTML an MCP App host renders. The window's part (the sandboxed
/// frame, the app's calls reviewed as its own) is still to come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_apps_tool_result_names_its_view_and_the_view_is_its_servers_html() {
    let env = open(None);
    let pack = env.dir.path().join("pack-apps");
    std::fs::create_dir_all(&pack).unwrap();
    let manifest = json!({"manifest_version": "0.3", "name": "apps", "version": "2.0.3",
        "server": {"type": "node", "entry_point": "index.js", "mcp_config": {"command": "node",
            "args": ["${__dirname}/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js", "--stdio"]}},
        "_meta": {"app.cowork": {"effects": {"get-time": []}}}});
    std::fs::write(pack.join("manifest.json"), manifest.to_string()).unwrap();
    env.install(&pack, BTreeMap::new()).await;
    env.settle().await;
    let called = env.call("mcp__apps__get-time", json!({})).await;
    let output = called.result.expect("get-time answers");
    assert_eq!(
        output.app,
        Some(cowork_contract::AppView {
            server: "apps".into(),
            resource: "ui://get-time/mcp-app.html".into()
        })
    );
    assert!(output.structured.unwrap()["time"].is_string());
    env.script.answer(ApprovalChoice::Once);
    let view = env
        .call(
            "mcp_read_resource",
            json!({"server": "apps", "uri": "ui://get-time/mcp-app.html"}),
        )
        .await
        .result
        .unwrap();
    let content = &view.structured.unwrap()["contents"][0];
    assert_eq!(content["mimeType"], "text/html;profile=mcp-app");
    assert!(content["text"].as_str().unwrap().contains("<html"));

    // The window's side (`mcp_apps`): only a view a current tool declares is read; the page is
    // kept for its frame with a CSP of its own (no network: the pack's sandbox has none).
    use cowork_app::mcp_apps::ViewError;
    let app = &env.app;
    assert!(matches!(
        app.open_app_view("c", "apps", "ui://get-time/other.html")
            .await,
        Err(ViewError::NotDeclared { .. })
    ));
    assert!(matches!(
        app.open_app_view("c", "nowhere", "ui://get-time/mcp-app.html")
            .await,
        Err(ViewError::NoServer(_))
    ));
    let token = app
        .open_app_view("c", "apps", "ui://get-time/mcp-app.html")
        .await
        .unwrap();
    let page = app.app_view_page(&token).unwrap();
    assert!(page.html.contains("<html") && page.csp.contains("connect-src 'none'"));
    assert!(app.app_view_page("guessed").is_none());
    // Its calls: its own server's tools only, as the view, in the view's own conversation.
    let refused = app
        .call_from_view("apps", "mcp__apps__get-time", json!({}))
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
    let answered = app.call_from_view("apps", "get-time", json!({})).await;
    assert!(
        answered["structuredContent"]["time"].is_string(),
        "{answered}"
    );
    let callers: Vec<String> = env
        .audit_of("mcp__apps__get-time")
        .into_iter()
        .map(|e| e.record.caller)
        .collect();
    assert!(callers.contains(&"mcp-app:apps".into()), "{callers:?}");
    // Its message is the server's words: sent anywhere, it taints there.
    let part = app.message_from_view("apps", "hello");
    assert!(matches!(
        part,
        cowork_agent::Part::File { untrusted_from: Some(ref s), .. } if s.contains("apps")
    ));
}

/// MCP Tasks (SEP-2663): a server that runs its tool as a task (the Rust SDK's own task
/// runtime, `tests/bin/tasks_server.rs`) is followed to the task's end: its status messages are
/// the call's progress and its result is the call's. A call stopped meanwhile cancels the task
/// on the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_the_server_runs_as_a_task_is_followed_to_its_end_and_cancelled_with_the_call()
{
    let env = open(None);
    install_tasks_pack(&env).await;
    let scheduler = env.app.scheduler();
    let mut events = scheduler.subscribe();
    let done = env
        .call("mcp__tasks__report", json!({"seconds": 0.6}))
        .await;
    assert_eq!(
        done.result.expect("the task's result").text_content(),
        "the report, written"
    );
    let mut said = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let ToolEvent::Progress { call_id, progress } = event
            && call_id == done.call_id
        {
            said.extend(progress.message);
        }
    }
    // "writing" is seen when a poll lands in its half (every 100 ms of 500 ms); a busy machine
    // may miss it, never reorder or invent one.
    assert!(
        said == ["gathering"] || said == ["gathering", "writing"],
        "{said:?}"
    );

    let req = CallRequest::new(
        "mcp__tasks__report",
        json!({"seconds": 30}),
        Caller::Cli,
        "mcp-test",
    );
    let cancel = req.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.cancel();
    });
    let stopped = scheduler.call(req).await;
    assert!(stopped.result.is_err());
    let log = env.status("tasks").log_file;
    cowork_tests::wait::until_true("the server to hear the task cancelled", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("cancelled") {
            Ok(())
        } else {
            Err(text)
        }
    })
    .await;
}

/// The pack whose `report` runs as a task (`tests/bin/tasks_server.rs`), installed and running.
async fn install_tasks_pack(env: &Env) {
    let pack = cowork_tests::mcp::tasks_pack(
        env.dir.path(),
        Path::new(env!("CARGO_BIN_EXE_tasks-server")),
    );
    env.install(&pack, BTreeMap::new()).await;
    env.settle().await;
}

/// A `report` call given less time than its task needs.
async fn report_outliving_its_call(env: &Env) -> (cowork_core::CallOutcome, String) {
    let mut req = CallRequest::new(
        "mcp__tasks__report",
        json!({"seconds": 4}),
        Caller::Cli,
        "mcp-test",
    );
    req.timeout = Some(Duration::from_millis(1_500));
    let outcome = env.app.scheduler().call(req).await;
    let id = match &outcome.result {
        Err(ToolError::Suspended { id, reason }) => {
            assert!(reason.contains("«tasks» is still working"), "{reason}");
            id.clone()
        }
        other => panic!("the call should wait as a Cowork task: {other:?}"),
    };
    (outcome, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_outlives_its_call_waits_as_a_cowork_task_and_goes_on_where_it_stopped() {
    let env = open(None);
    install_tasks_pack(&env).await;
    let scheduler = env.app.scheduler();
    let (_, id) = report_outliving_its_call(&env).await;
    let suspensions = scheduler
        .suspensions()
        .expect("the app records suspensions");
    let waiting = suspensions.get(&id).unwrap().expect("the suspension's row");
    assert_eq!(waiting.state, "suspended");
    assert_eq!(waiting.resume_when["kind"], "mcp_task");
    assert_eq!(waiting.resume_when["server"], "tasks");
    assert!(suspensions.list(false).unwrap().iter().any(|s| s.id == id));

    // It goes on by itself once the server says the task ended, following the same task.
    let resumed = cowork_tests::wait::until("the task to end and the call to go on", || {
        let scheduler = scheduler.clone();
        let id = id.clone();
        async move {
            let done = scheduler.resume_ready(Caller::Cli).await;
            let found = done.into_iter().find(|(s, _)| *s == id).map(|(_, o)| o);
            found.ok_or_else(|| "still suspended".to_string())
        }
    })
    .await;
    assert_eq!(
        resumed.result.expect("the task's result").text_content(),
        "the report, written"
    );
    let settled = suspensions.get(&id).unwrap().unwrap();
    assert_eq!(
        (settled.state.as_str(), settled.settled_by.as_deref()),
        ("resumed", Some("auto"))
    );
    let log = std::fs::read_to_string(env.status("tasks").log_file).unwrap();
    assert_eq!(log.matches("report started").count(), 1, "{log}");
    assert!(
        !log.contains("cancelled"),
        "the task was left to run: {log}"
    );

    // A server that restarted meanwhile has no such task: the resume says so and what to do.
    let (_, id) = report_outliving_its_call(&env).await;
    let before = env.status("tasks").pid.expect("a running server's pid");
    std::process::Command::new("kill")
        .args(["-9", &before.to_string()])
        .status()
        .unwrap();
    cowork_tests::wait::until_true("the server to be restarted", || {
        let now = env.status("tasks");
        match now.pid {
            Some(pid) if pid != before && now.state == ServerState::Running => Ok(()),
            _ => Err(format!("{now:?}")),
        }
    })
    .await;
    let gone = scheduler.resume(&id, Caller::Cli).await.unwrap();
    let error = gone.result.expect_err("the task is gone").to_string();
    assert!(
        error.contains("no longer has the task") && error.contains("call the tool again"),
        "{error}"
    );
}
