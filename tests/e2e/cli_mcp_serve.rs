//! `cowork mcp serve` as another MCP host uses it: a real rmcp client over stdio lists the
//! reviewed tools, calls them as `mcp:<client>`, answers Cowork's asks in its own form
//! (elicitation) — offered once or "this client", never "always" — and a client that cannot
//! show a form gets a refusal that says why. Over HTTP: the token, Host and Origin checks.

use cowork_tests::mcp::post;
use cowork_tests::{output_text, run_cowork};
use rmcp::model::{
    CallToolRequestParams, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

/// A form Cowork showed: its message and the answers it offered.
type Form = (String, Vec<String>);

/// A host that shows Cowork's forms and answers each from `answers` in turn; what each form
/// said and offered is kept.
#[derive(Clone, Default)]
struct Host {
    name: &'static str,
    shows_forms: bool,
    answers: Arc<Mutex<Vec<&'static str>>>,
    forms: Arc<Mutex<Vec<Form>>>,
}

impl ClientHandler for Host {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info.name = self.name.into();
        info.client_info.version = "1.0".into();
        if self.shows_forms {
            let mut elicitation = rmcp::model::ElicitationCapability::new();
            elicitation.form = Some(Default::default());
            info.capabilities.elicitation = Some(elicitation);
        }
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap();
        let offered = schema["properties"]["answer"]["oneOf"]
            .as_array()
            .map(|options| {
                options
                    .iter()
                    .filter_map(|o| o["const"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        self.forms.lock().unwrap().push((message, offered));
        let answer = self.answers.lock().unwrap().remove(0);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"answer": answer})))
    }
}

/// A data dir and a workspace, in a folder that goes with the returned guard.
fn folders() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let (home, workspace) = (work.path().join("home"), work.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&workspace).unwrap();
    (work, home, workspace)
}

async fn connect(home: &Path, workspace: &Path, host: Host) -> RunningService<RoleClient, Host> {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cowork"));
    cmd.args(["--workspace", workspace.to_str().unwrap(), "mcp", "serve"])
        .env("COWORK_HOME", home);
    let transport = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
        .0;
    host.serve(transport)
        .await
        .expect("a session with cowork mcp serve")
}

async fn call(
    client: &RunningService<RoleClient, Host>,
    tool: &str,
    args: Value,
) -> (bool, String) {
    let result = client
        .call_tool(
            CallToolRequestParams::new(tool.to_string())
                .with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    let text = serde_json::to_string(&result.content).unwrap();
    (result.is_error.unwrap_or(false), text)
}

fn audit_callers(home: &Path) -> Vec<(String, String, String)> {
    let out = run_cowork(
        env!("CARGO_BIN_EXE_cowork"),
        home,
        &["audit", "export", "--jsonl"],
        None,
    );
    output_text(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|row| row["phase"] != "intent")
        .map(|row| {
            let s = |k: &str| row[k].as_str().unwrap_or_default().to_string();
            (s("tool"), s("caller"), s("approved_by"))
        })
        .collect()
}

#[tokio::test]
async fn a_host_calls_reviewed_tools_as_itself_and_answers_asks_in_its_own_form() {
    let (_work, home, workspace) = folders();
    let host = Host {
        name: "Test Host <3>",
        shows_forms: true,
        answers: Arc::new(Mutex::new(vec!["once", "deny"])),
        ..Host::default()
    };
    let client = connect(&home, &workspace, host.clone()).await;

    let tools = client.list_all_tools().await.unwrap();
    let list_tasks = tools
        .iter()
        .find(|t| t.name == "list_tasks")
        .expect("builtins are served");
    assert_eq!(
        list_tasks
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint),
        Some(true),
        "what a tool declares of itself is served with it"
    );
    assert!(
        tools.iter().all(|t| !t.name.starts_with("mcp__")),
        "toolpacks are served only when the person names them"
    );

    // A read runs without a question.
    let (failed, text) = call(&client, "list_tasks", json!({})).await;
    assert!(!failed, "{text}");
    assert!(host.forms.lock().unwrap().is_empty(), "a read asks nothing");

    // A command asks, in the host's form: plain words, and grants of the client's own only.
    let (failed, text) = call(
        &client,
        "run_command",
        json!({"command": "echo served-$((6*7))"}),
    )
    .await;
    assert!(!failed, "allowed in the form, it ran: {text}");
    assert!(text.contains("served-42"), "{text}");
    let (message, offered) = host.forms.lock().unwrap()[0].clone();
    assert!(
        message.contains("mcp:Test-Host-3"),
        "the form names the client as Cowork knows it: {message}"
    );
    assert!(message.contains("Why Cowork asks"), "{message}");
    assert!(
        offered.contains(&"once".to_string()) && offered.contains(&"deny".to_string()),
        "{offered:?}"
    );
    assert!(
        !offered.iter().any(|o| o.starts_with("always")),
        "an MCP client is never offered a rule for every caller: {offered:?}"
    );

    // Denied in the form: the result says so and nothing ran.
    let (failed, text) = call(&client, "run_command", json!({"command": "echo again"})).await;
    assert!(failed, "denied in the form: {text}");
    assert!(!text.contains("again\\n"), "{text}");
    client.cancel().await.unwrap();

    let rows = audit_callers(&home);
    let commands: Vec<_> = rows.iter().filter(|r| r.0 == "run_command").collect();
    assert_eq!(commands.len(), 2, "{rows:?}");
    assert!(
        commands.iter().all(|r| r.1 == "mcp:Test-Host-3"),
        "every call is audited as the client's: {rows:?}"
    );
    assert!(commands[0].2.contains("through its form"), "{rows:?}");
}

#[tokio::test]
async fn a_host_that_cannot_show_a_form_is_refused_with_the_reason_and_the_fix() {
    let (_work, home, workspace) = folders();
    let host = Host {
        name: "plain-host",
        ..Host::default()
    };
    let client = connect(&home, &workspace, host).await;
    let (failed, text) = call(&client, "run_command", json!({"command": "echo never"})).await;
    assert!(failed, "{text}");
    assert!(text.contains("nobody could be asked"), "{text}");
    assert!(
        text.contains("Cowork window"),
        "what would let it be asked is named: {text}"
    );
    // An unknown tool is a protocol error naming it, not a silent nothing.
    let unknown = client
        .call_tool(CallToolRequestParams::new("no_such_tool"))
        .await
        .expect_err("no such tool");
    assert!(unknown.to_string().contains("no_such_tool"), "{unknown}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn over_http_only_the_token_holder_on_a_loopback_name_gets_in() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let (mut server, url, token) = serve_http(&home, &[]).await;
    let (url, token) = (url.as_str(), token.as_str());
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let token_file = std::fs::metadata(home.join("mcp-serve.token")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        token_file.permissions().mode() & 0o077,
        0,
        "the token is the person's only"
    );

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}});
    let bearer = format!("Bearer {token}");
    let auth = ("authorization", bearer.as_str());
    for (headers, why) in [
        (vec![], "no token"),
        (vec![("authorization", "Bearer wrong")], "a wrong token"),
    ] {
        let (status, _, _) = post(url, &headers, None, init.clone()).await;
        assert_eq!(status, 401, "{why} is refused");
    }
    for (header, why) in [
        (("host", "evil.example"), "a rebound name"),
        (("origin", "http://evil.example"), "a page elsewhere"),
    ] {
        let (status, _, _) = post(url, &[auth, header], None, init.clone()).await;
        assert_eq!(status, 403, "{why} is refused even with the token");
    }
    let (status, session, reply) = post(url, &[auth], None, init.clone()).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["result"]["serverInfo"]["name"], "cowork", "{reply}");
    let session = session.expect("a session");
    let notified = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(url, &[auth], Some(&session), notified).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (_, _, reply) = post(url, &[auth], Some(&session), list).await;
    let tools = reply["result"]["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["name"] == "list_tasks"), "{reply}");
    server.kill().await.unwrap();

    // A server for one named app takes that app's own token only: the general token (or
    // another app's) cannot make a client that app.
    let (mut named, named_url, named_token) = serve_http(&home, &["--as", "app-a"]).await;
    assert_ne!(named_token, token);
    let (status, _, _) = post(&named_url, &[auth], None, init.clone()).await;
    assert_eq!(
        status, 401,
        "the general token does not open app-a's server"
    );
    let bearer = format!("Bearer {named_token}");
    let (status, _, _) = post(
        &named_url,
        &[("authorization", bearer.as_str())],
        None,
        init,
    )
    .await;
    assert_eq!(status, 200);
    named.kill().await.unwrap();
}

/// `cowork mcp serve --http` with `extra` arguments: the process, its URL and its token.
async fn serve_http(home: &Path, extra: &[&str]) -> (tokio::process::Child, String, String) {
    cowork_tests::mcp::serve_http(Path::new(env!("CARGO_BIN_EXE_cowork")), home, extra).await
}

/// With Cowork's window running for the data dir, an MCP client's ask goes to its modal — named
/// as the client's, with grants of the client's own — before any form of the client's.
#[tokio::test]
async fn with_the_window_open_a_hosts_ask_reaches_the_modal_first() {
    use cowork_app::instance::{Instance, claim};
    use cowork_core::{ApprovalChoice, ApprovalRequest};
    let (_work, home, workspace) = folders();
    // The window's side of its socket, answering as the person would in the modal.
    let Instance::First(window) = claim(&home, &[]).unwrap() else {
        panic!("no window runs for a new data dir");
    };
    let shown: Arc<Mutex<Vec<ApprovalRequest>>> = Arc::default();
    let modal = shown.clone();
    std::thread::spawn(move || {
        window.serve(
            |_| {},
            move |request| {
                modal.lock().unwrap().push(request);
                ApprovalChoice::Once
            },
        )
    });
    let host = Host {
        name: "window-host",
        shows_forms: true,
        ..Host::default()
    };
    let client = connect(&home, &workspace, host.clone()).await;
    let (failed, text) = call(
        &client,
        "run_command",
        json!({"command": "echo from-$((2+3))"}),
    )
    .await;
    assert!(!failed, "allowed in the window: {text}");
    assert!(text.contains("from-5"), "{text}");
    assert!(
        host.forms.lock().unwrap().is_empty(),
        "the window answered: no form in the client"
    );
    let asked = shown.lock().unwrap()[0].clone();
    assert_eq!(
        asked.asker.as_deref(),
        Some("window-host"),
        "the modal names the client"
    );
    assert_eq!(asked.caller, "mcp:window-host");
    assert!(
        !asked
            .choices
            .iter()
            .any(|c| matches!(c, ApprovalChoice::Always | ApprovalChoice::AlwaysWorkspace)),
        "{:?}",
        asked.choices
    );
    client.cancel().await.unwrap();
    let rows = audit_callers(&home);
    let ran = rows.iter().find(|r| r.0 == "run_command").unwrap();
    assert!(
        ran.2.starts_with("window (asked for mcp:window-host)"),
        "{rows:?}"
    );
}

/// A server that runs for a host's whole session follows what the person changes meanwhile
/// from elsewhere: a pause of all tools, a rule added at the command line.
#[tokio::test]
async fn a_running_server_follows_the_pause_and_the_rules_set_elsewhere() {
    let (_work, home, workspace) = folders();
    let host = Host {
        name: "long-host",
        ..Host::default()
    };
    let client = connect(&home, &workspace, host).await;
    let (failed, text) = call(&client, "list_tasks", json!({})).await;
    assert!(!failed, "{text}");

    // The window's "Pause all tools" (its marker in the data dir).
    std::fs::write(home.join("tools-paused"), b"").unwrap();
    let (failed, text) = call(&client, "list_tasks", json!({})).await;
    assert!(failed && text.contains("paused"), "{text}");
    std::fs::remove_file(home.join("tools-paused")).unwrap();
    let (failed, text) = call(&client, "list_tasks", json!({})).await;
    assert!(!failed, "resumed: {text}");

    // A rule the person adds in another process applies to the next call.
    let added = run_cowork(
        env!("CARGO_BIN_EXE_cowork"),
        &home,
        &["policy", "rules", "add", "deny", "list_tasks"],
        None,
    );
    assert!(added.status.success(), "{}", output_text(&added));
    let (failed, text) = call(&client, "list_tasks", json!({})).await;
    assert!(
        failed,
        "the new deny rule holds in the running server: {text}"
    );
    client.cancel().await.unwrap();
}
