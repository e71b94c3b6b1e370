//! A trivial MCP tool call through the full gateway path (scheduler: schema validation, effects,
//! PolicyBridge review, audit row, events; then the supervised rmcp client) vs a bare `rmcp`
//! client calling the same stdio server (`echo` of the SDK probe server), side by side in one
//! run: sequential calls in rotation (each server process equally warm — blocks of calls per
//! process skewed results by ±20 µs), then 8 concurrent callers for each. The middle path, our
//! supervised client without the scheduler, splits the overhead between client and gate.
//!
//! A fourth path, the supervised client with the server inside bubblewrap, prices the sandbox
//! next to the same client unconfined.
//!
//!     cargo bench -p cowork-tests --bench mcp_gateway        (MCP_BENCH_CALLS=2000 by default)

use cowork_app::{App, AppOptions};
use cowork_core::{CallRequest, Caller, DenyApprover, SchedulerConfig};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Calls per second with `callers` concurrent tasks making `per` calls each.
async fn rate<F, Fut>(callers: usize, per: usize, call: F) -> f64
where
    F: Fn(String) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let t = Instant::now();
    let tasks: Vec<_> = (0..callers)
        .map(|c| {
            let f = call.clone();
            tokio::spawn(async move {
                for i in 0..per {
                    f(format!("{c}-{i}")).await
                }
            })
        })
        .collect();
    futures::future::join_all(tasks).await;
    (callers * per) as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let calls: usize = std::env::var("MCP_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let servers = cowork_tests::mcp::servers();
    let probe = servers.join("probe-server.mjs");
    assert!(
        servers.join("node_modules").exists(),
        "run tests/setup.sh first (it installs the MCP test servers)"
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // The gateway: a real data dir with the probe installed as a toolpack.
        let home = tempfile::tempdir().unwrap();
        let pack = cowork_tests::mcp::probe_pack(home.path(), "probe", &[], json!({"effects": {"echo": []}}));
        let app = App::open(AppOptions { home: Some(home.path().join("home")), workspace_roots: vec![], approver: Arc::new(DenyApprover), scheduler: SchedulerConfig::default() }).unwrap();
        let staged = app.stage_toolpack(&pack.display().to_string(), None).await.unwrap();
        app.install_toolpack(staged, Default::default(), false).unwrap();
        app.toolpacks_settled(Duration::from_secs(30)).await;
        let scheduler = app.scheduler().clone();

        // The baseline: a bare rmcp client on its own copy of the same server.
        let mut cmd = tokio::process::Command::new("node");
        cmd.arg(&probe);
        let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd).stderr(std::process::Stdio::null()).spawn().unwrap();
        let bare = ().serve(transport).await.unwrap();
        let bare_peer = bare.peer().clone();
        let bare_call = move |text: String| {
            let peer = bare_peer.clone();
            async move {
                let args = json!({"text": text}).as_object().unwrap().clone();
                let r = peer.call_tool(CallToolRequestParams::new("echo").with_arguments(args)).await.unwrap();
                assert!(r.is_error != Some(true));
            }
        };
        let gateway_scheduler = scheduler.clone();
        let gateway_call = move |text: String| {
            let scheduler = gateway_scheduler.clone();
            async move {
                let out = scheduler.call(CallRequest::new("mcp__probe__echo", json!({"text": text}), Caller::Cli, "bench")).await;
                assert!(out.result.is_ok(), "{:?}", out.result);
            }
        };

        // The middle: our supervised client alone (no scheduler), to split the overhead — once
        // with the server unconfined and once inside bubblewrap as toolpacks run, to price the
        // sandbox on its own.
        let supervised = |name: &str, sandbox: cowork_mcp::Sandbox| {
            let spec = cowork_mcp::LaunchSpec {
                name: name.into(),
                transport: cowork_mcp::Transport::Stdio { command: "node".into(), args: vec![probe.display().to_string()], env: Default::default(), cwd: Some(servers.clone()) },
                log_file: home.path().join(format!("{name}.log")),
                restart: Default::default(),
                sandbox,
            };
            cowork_mcp::McpServer::start(spec, Arc::new(|| {}))
        };
        let open = supervised("probe2", cowork_mcp::Sandbox::Unconfined(cowork_mcp::Unconfined::TurnedOff));
        assert!(cowork_contract::confine::available(), "bubblewrap runs here (tests/setup.sh installs it)");
        let data = home.path().join("probe3-data");
        std::fs::create_dir_all(&data).unwrap();
        let confined = supervised("probe3", cowork_mcp::Sandbox::Confined(cowork_mcp::sandbox::Confinement {
            code: servers.clone(), data, program: None, read: vec![], write: vec![], network: false, home: None, hidden: vec![],
        }));
        for s in [&open, &confined] {
            let status = s.wait_settled(Duration::from_secs(30)).await;
            assert_eq!(status.state, cowork_mcp::ServerState::Running, "{status:?}");
        }
        let client = |server: cowork_mcp::McpServer| move |text: String| {
            let server = server.clone();
            async move {
                let ctx = cowork_contract::ToolContext::new("bench", "bench", Default::default());
                server.call("echo", json!({"text": text}), &ctx).await.unwrap();
            }
        };
        let supervised_call = client(open);
        let sandboxed_call = client(confined);

        {
            let t = Instant::now();
            for i in 0..1000 { scheduler.explain("mcp__probe__echo", &json!({"text": format!("x{i}")}), "bench", None).unwrap(); }
            println!("review alone, hot loop (scheduler.explain: schema, effects, policy): {:.1} µs", micros(t.elapsed()) / 1000.0);
        }
        // Warm up both (JIT in node, connection caches, SQLite pages).
        for i in 0..100 {
            bare_call(format!("w{i}")).await;
            supervised_call(format!("w{i}")).await;
            sandboxed_call(format!("w{i}")).await;
            gateway_call(format!("w{i}")).await;
        }
        let mut bare_t = Vec::with_capacity(calls);
        let (mut sup_t, mut box_t, mut gate_t) = (bare_t.clone(), bare_t.clone(), bare_t.clone());

        // Call by call in rotation, so each server process is exactly as warm as the others.
        for i in 0..calls {
            for k in 0..4 {
                let which = (i + k) % 4;
                let t = Instant::now();
                match which {
                    0 => { bare_call(format!("{i}")).await; bare_t.push(t.elapsed()) }
                    1 => { supervised_call(format!("{i}")).await; sup_t.push(t.elapsed()) }
                    2 => { sandboxed_call(format!("{i}")).await; box_t.push(t.elapsed()) }
                    _ => { gateway_call(format!("{i}")).await; gate_t.push(t.elapsed()) }
                }
            }
        }
        // The gate's review (schema, effects, policy) timed right after a node round trip, i.e.
        // in the cache state the gateway path meets, next to its hot-loop figure above. A
        // separate pass: inside the rotation it would warm the gate for the next gateway call.
        let mut review_t = Vec::with_capacity(calls / 4);
        for i in 0..(calls / 4).max(1) {
            bare_call(format!("r{i}")).await;
            let t = Instant::now();
            scheduler.explain("mcp__probe__echo", &json!({"text": format!("r{i}")}), "bench", None).unwrap();
            review_t.push(t.elapsed());
        }
        let (b, sv, bx, g, review) = (median(bare_t), median(sup_t), median(box_t), median(gate_t), median(review_t));
        println!("sequential, {calls} calls each (median):");
        println!("  bare rmcp client   {:8.1} µs", micros(b));
        println!("  supervised client  {:8.1} µs  (our McpServer::call, no scheduler)", micros(sv));
        println!("  supervised, in bubblewrap {:8.1} µs  (sandboxed / unsandboxed: {:.3}x)", micros(bx), bx.as_secs_f64() / sv.as_secs_f64());
        println!("  gateway full path  {:8.1} µs  (sandboxed, as toolpacks run)", micros(g));
        println!("  ratio {:.3}x, overhead {:+.1} µs", g.as_secs_f64() / b.as_secs_f64(), micros(g) - micros(b));
        println!("  of which the MCP layer (supervised / bare): {:.3}x; the gate in situ (full - supervised): {:+.1} µs", sv.as_secs_f64() / b.as_secs_f64(), micros(g) - micros(sv));
        println!("  the gate's review alone, right after a node round trip: {:.1} µs (median)", micros(review));

        // Throughput: 8 concurrent callers, each making calls/8 calls.
        let per = (calls / 8).max(1);
        let bare_rate = rate(8, per, bare_call).await;
        let gate_rate = rate(8, per, gateway_call).await;
        println!("8 concurrent callers, {} calls each path:", per * 8);
        println!("  bare rmcp client   {bare_rate:8.0} calls/s");
        println!("  gateway full path  {gate_rate:8.0} calls/s  ({:.2} of bare)", gate_rate / bare_rate);
        scheduler.flush().unwrap();
        let report = scheduler.audit().verify().unwrap();
        assert!(report.ok() && report.rows as usize >= calls, "every gateway call left an audit row: {report:?}");
    });
}
