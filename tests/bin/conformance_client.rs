//! The MCP conformance suite's client under test (`conformance client --command …`): Cowork's
//! own composition — the app, its gateway and its scheduler — connecting to the suite's mock
//! server as a toolpack, as an installed Cowork connects to a remote server. The suite appends
//! the server's URL and names the scenario in `MCP_CONFORMANCE_SCENARIO`.
//!
//! The person stands in by rule, not by judgment: every ask is allowed once and every form is
//! accepted as shown (the suite tests the protocol; the policy has its own tests). A sign-in
//! follows the suite's authorization server's redirects as a browser would. Each listed tool
//! is called once with arguments made from its schema, as a model would fill them.

use cowork_app::{App, AppOptions};
use cowork_core::{
    ApprovalChoice, ApprovalRequest, Approver, CallRequest, Caller, ElicitationAnswer,
    ElicitationRequest, SchedulerConfig,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

struct StandIn;

#[async_trait::async_trait]
impl Approver for StandIn {
    fn name(&self) -> &str {
        "conformance stand-in"
    }
    async fn decide(&self, _: &ApprovalRequest) -> ApprovalChoice {
        ApprovalChoice::Once
    }
    /// Accepted untouched: what the form pre-fills (its defaults) is the gateway's to apply.
    async fn elicit(&self, _: &ElicitationRequest) -> ElicitationAnswer {
        ElicitationAnswer::Accept { content: json!({}) }
    }
    fn can_ask(&self) -> bool {
        true
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let url = std::env::args().next_back().expect("the server's URL");
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    if let Err(e) = run(&url, &scenario).await {
        eprintln!("conformance client ({scenario}): {e}");
        std::process::exit(1);
    }
}

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
    let app = App::builder(AppOptions {
        home: Some(home),
        workspace_roots: vec![],
        approver: Arc::new(StandIn),
        scheduler: SchedulerConfig::default(),
    })
    .secrets(Arc::new(cowork_tests::MapSecrets::default()))
    .without_logging()
    .open()
    .map_err(|e| e.to_string())?;
    install(&app, dir.path(), url).await?;
    let patience = Duration::from_secs(20);
    app.toolpacks_settled(patience).await;
    if state(&app) == Some(cowork_mcp::ServerState::NeedsSignIn) {
        sign_in(&app).await?;
        app.toolpacks_settled(patience).await;
    }
    // The suite's mock server sends its form request on the stream the client opens beside the
    // session, in the background, after the handshake; a person's first call comes later than
    // a script's, so this waits as long as they would at the least.
    tokio::time::sleep(Duration::from_secs(1)).await;
    call_every_tool(&app, scenario).await
}

/// The mock server as a remote toolpack (no declared effects: every call asks, and is allowed).
async fn install(app: &App, dir: &std::path::Path, url: &str) -> Result<(), String> {
    let pack = dir.join("pack");
    std::fs::create_dir_all(&pack).map_err(|e| e.to_string())?;
    let manifest = json!({"manifest_version": "0.3", "name": "conformance", "version": "1.0.0",
        "server": {"type": "http", "url": url}});
    std::fs::write(pack.join("manifest.json"), manifest.to_string()).map_err(|e| e.to_string())?;
    let staged = app
        .stage_toolpack(&pack.display().to_string(), None)
        .await
        .map_err(|e| e.to_string())?;
    app.install_toolpack(staged, BTreeMap::new(), false)
        .map_err(|e| e.to_string())?;
    Ok(())
}

fn state(app: &App) -> Option<cowork_mcp::ServerState> {
    app.mcp_servers()
        .into_iter()
        .find(|s| s.name == "conformance")
        .map(|s| s.state)
}

/// The person's browser: follows the authorization server's redirects to Cowork's loopback
/// callback (the suite's server approves at once).
async fn sign_in(app: &App) -> Result<(), String> {
    let sign_in = app
        .begin_toolpack_sign_in("conformance")
        .await
        .map_err(|e| e.to_string())?;
    let url = sign_in.url().to_string();
    let browser = tokio::spawn(async move {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::limited(10))
            .build()
            .expect("a client");
        client.get(url).send().await.map(|_| ())
    });
    app.finish_toolpack_sign_in("conformance", sign_in)
        .await
        .map_err(|e| e.to_string())?;
    browser
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

async fn call_every_tool(app: &App, scenario: &str) -> Result<(), String> {
    let mut tools: Vec<_> = app
        .scheduler()
        .registry()
        .list()
        .into_iter()
        .filter(|t| t.spec.name.starts_with("mcp__conformance__"))
        .collect();
    tools.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
    for tool in tools {
        let args = arguments_for(&tool.spec.input_schema);
        let request = CallRequest::new(&tool.spec.name, args, Caller::Cli, scenario);
        let outcome = app.scheduler().call(request).await;
        eprintln!(
            "{}: {:?}",
            tool.spec.name,
            outcome.result.map(|o| o.text_content())
        );
    }
    Ok(())
}

/// Arguments a model would give: each required property filled by its type.
fn arguments_for(schema: &Value) -> Value {
    let mut args = serde_json::Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("number") | Some("integer") => json!(2),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        args.insert(name.to_string(), value);
    }
    Value::Object(args)
}
