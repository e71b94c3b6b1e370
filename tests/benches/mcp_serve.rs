//! `cowork mcp serve`'s cost per call: an rmcp client calling a builtin (`list_tasks`, an empty
//! list) through `cowork mcp serve` over stdio, next to the same call made in process through
//! the scheduler as the same caller (`mcp:bench`, the same review, the same audit row), side by
//! side in one run, call by call in rotation, with a ping through the same pipe (the transport
//! alone: two process hops and rmcp's framing, no scheduler). The difference of the medians is
//! what serving adds; less the ping, what Cowork's server itself adds.
//!
//!     cargo bench -p cowork-cli --bench mcp_serve        (MCP_SERVE_BENCH_CALLS=2000 by default)

use cowork_app::{App, AppOptions};
use cowork_core::{CallRequest, Caller, DenyApprover, SchedulerConfig};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn percentile(v: &mut [Duration], p: f64) -> f64 {
    v.sort();
    v[((v.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e6
}

fn main() {
    let calls: usize = std::env::var("MCP_SERVE_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let (served_home, local_home) = (dir.path().join("served"), dir.path().join("local"));
        std::fs::create_dir_all(&served_home).unwrap();
        let app = App::open(AppOptions {
            home: Some(local_home),
            workspace_roots: vec![],
            approver: Arc::new(DenyApprover),
            scheduler: SchedulerConfig::default(),
        })
        .unwrap();
        let scheduler = app.scheduler().clone();
        let local = || {
            let scheduler = scheduler.clone();
            async move {
                let request =
                    CallRequest::new("list_tasks", json!({}), Caller::mcp("bench"), "mcp:bench");
                let out = scheduler.call(request).await;
                assert!(out.result.is_ok(), "{:?}", out.result);
            }
        };

        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cowork"));
        cmd.args(["mcp", "serve", "--as", "bench"])
            .env("COWORK_HOME", &served_home);
        let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let client = ().serve(transport).await.unwrap();
        let peer = client.peer().clone();
        let served = || {
            let peer = peer.clone();
            async move {
                let r = peer
                    .call_tool(CallToolRequestParams::new("list_tasks"))
                    .await
                    .unwrap();
                assert!(r.is_error != Some(true), "{r:?}");
            }
        };

        // The transport alone: a ping answered by the server without the scheduler.
        let ping = || {
            let peer = peer.clone();
            async move {
                let request = rmcp::model::ClientRequest::PingRequest(rmcp::model::PingRequest {
                    method: Default::default(),
                    extensions: Default::default(),
                });
                peer.send_request(request).await.unwrap();
            }
        };

        {
            let t = Instant::now();
            for _ in 0..1000 {
                scheduler.catch_up().unwrap();
            }
            let each = t.elapsed().as_secs_f64() * 1e6 / 1000.0;
            println!("catching up with other processes (settings, database, pause), alone: {each:.1} µs");
        }
        for _ in 0..100 {
            local().await;
            served().await;
            ping().await;
        }
        let (mut local_t, mut served_t, mut ping_t) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..calls {
            for k in 0..3 {
                let t = Instant::now();
                match (i + k) % 3 {
                    0 => {
                        local().await;
                        local_t.push(t.elapsed());
                    }
                    1 => {
                        served().await;
                        served_t.push(t.elapsed());
                    }
                    _ => {
                        ping().await;
                        ping_t.push(t.elapsed());
                    }
                }
            }
        }
        let (l50, s50) = (
            percentile(&mut local_t, 0.5),
            percentile(&mut served_t, 0.5),
        );
        let (l95, s95) = (
            percentile(&mut local_t, 0.95),
            percentile(&mut served_t, 0.95),
        );
        println!("list_tasks, {calls} calls each, as caller mcp:bench:");
        println!("  in process (scheduler.call)     p50 {l50:8.1} µs   p95 {l95:8.1} µs");
        println!("  through cowork mcp serve (stdio) p50 {s50:8.1} µs   p95 {s95:8.1} µs");
        let p50 = percentile(&mut ping_t, 0.5);
        println!("  a ping through the same pipe     p50 {p50:8.1} µs   (the transport alone)");
        println!(
            "  serving adds {:+.1} µs at p50, {:.2}x; beyond the transport's round trip: {:+.1} µs (target ≤ 50 µs)",
            s50 - l50,
            s50 / l50,
            s50 - l50 - p50
        );
        client.cancel().await.unwrap();
    });
}
