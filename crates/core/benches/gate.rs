//! Gate overhead: a no-op tool called through `Scheduler::call` (validation + policy + audit +
//! events) vs its handler called directly, in one run, on a real SQLite file.
//!
//!     cargo bench -p cowork-core --bench gate
//!
//! Prints p50/p99 per call (sequential) and calls/s with 64 concurrent callers, for a read-only
//! no-op (one audit row) and an effectful no-op (write-ahead intent row + final row).

use cowork_contract::{EffectEnv, ToolContext, ToolResult, tools};
use cowork_core::{
    CallRequest, Caller, DenyApprover, Layer, PolicyBridge, Registry, Scheduler, SchedulerConfig,
};
use cowork_store::{DataDir, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Deserialize, JsonSchema)]
pub struct NoopInput {
    #[allow(dead_code)]
    n: u64,
}

#[derive(Serialize, JsonSchema)]
pub struct NoopOutput {
    ok: bool,
}

/// The two no-ops: one read-only, one with an effect (so the gate writes its intent first).
#[derive(Clone)]
struct Noops;

#[tools]
impl Noops {
    #[tool(
        name = "noop_read",
        title = "No-op",
        description = "Does nothing.",
        read_only
    )]
    async fn noop_read(&self, _input: &NoopInput) -> ToolResult<NoopOutput> {
        Ok(NoopOutput { ok: true })
    }

    #[tool(name = "noop_write", title = "No-op", description = "Does nothing.",
           effects = [TasksWrite])]
    async fn noop_write(&self, _input: &NoopInput) -> ToolResult<NoopOutput> {
        Ok(NoopOutput { ok: true })
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let calls: usize = std::env::var("GATE_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(DataDir::at(tmp.path()), &[&cowork_core::SCHEMA]).unwrap();
    let registry = Registry::new();
    for tool in Noops.tool_list() {
        registry.register(Layer::Builtin, tool);
    }
    let policy = Arc::new(PolicyBridge::open(&store, &[]).unwrap());
    let audit = Arc::new(cowork_core::AuditLog::open(&store).unwrap());
    let scheduler = Arc::new(Scheduler::new(
        registry,
        policy,
        audit,
        Arc::new(DenyApprover),
        EffectEnv::default(),
        SchedulerConfig::default(),
    ));
    // A subscriber, as the window would have, so events are really delivered.
    let mut events = scheduler.subscribe();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.spawn(async move {
        loop {
            if let Err(tokio::sync::broadcast::error::RecvError::Closed) = events.recv().await {
                break;
            }
        }
    });

    println!(
        "gate benchmark: {calls} calls per measurement, audit on {}",
        store.dir().db_path().display()
    );
    for direct_tool in Noops.tool_list() {
        let name = direct_tool.spec().name.clone();
        let (direct, gated, throughput) = runtime.block_on(async {
            let args = serde_json::json!({"n": 1});
            let env = EffectEnv::default();
            let mut direct = Vec::with_capacity(calls);
            for i in 0..calls {
                let t = Instant::now();
                let prepared = direct_tool
                    .prepare(serde_json::json!({"n": i}), &env)
                    .unwrap();
                prepared
                    .run(ToolContext::new("c", "bench", env.clone()))
                    .await
                    .unwrap();
                direct.push(t.elapsed());
            }
            let mut gated = Vec::with_capacity(calls);
            for _ in 0..calls {
                let t = Instant::now();
                let outcome = scheduler
                    .call(CallRequest::new(&name, args.clone(), Caller::Cli, "bench"))
                    .await;
                gated.push(t.elapsed());
                outcome.result.unwrap();
            }
            // Throughput: 64 concurrent callers sharing the calls.
            let start = Instant::now();
            let per_task = calls / 64;
            let tasks: Vec<_> = (0..64)
                .map(|_| {
                    let scheduler = scheduler.clone();
                    let (name, args) = (name.clone(), args.clone());
                    tokio::spawn(async move {
                        for _ in 0..per_task {
                            scheduler
                                .call(CallRequest::new(&name, args.clone(), Caller::Cli, "bench"))
                                .await
                                .result
                                .unwrap();
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
            let throughput = (per_task * 64) as f64 / start.elapsed().as_secs_f64();
            (direct, gated, throughput)
        });
        let (mut direct, mut gated) = (direct, gated);
        direct.sort();
        gated.sort();
        let (d50, g50) = (percentile(&direct, 0.5), percentile(&gated, 0.5));
        println!(
            "{name:11} direct p50 {:>7.2} µs | gate p50 {:>7.2} µs p99 {:>7.2} µs | overhead p50 {:>7.2} µs | sequential {:>8.0} calls/s | 64 concurrent {:>8.0} calls/s",
            d50.as_secs_f64() * 1e6,
            g50.as_secs_f64() * 1e6,
            percentile(&gated, 0.99).as_secs_f64() * 1e6,
            (g50.saturating_sub(d50)).as_secs_f64() * 1e6,
            calls as f64 / gated.iter().sum::<Duration>().as_secs_f64(),
            throughput
        );
    }
    let report = scheduler.audit().verify().unwrap();
    println!(
        "audit rows written: {} (chain verified: {})",
        report.rows,
        report.ok()
    );
}
