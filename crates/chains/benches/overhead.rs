//! Chain overhead (target: ≤ 20 µs per step over a bare `Scheduler::call`): a no-op
//! read-only tool called N times bare, and as an N-step chain whose every step templates its
//! argument from the step before, side by side in one run, on a real SQLite file; the
//! difference per step (templating, the step's record in the store, events).
//!
//! Also: the schedule worker with 1,000 schedules, none due for hours, on the system clock —
//! the CPU time the whole process spends in 3 s (target ≈ 0: it sleeps until one is due).
//!
//!     cargo bench -p cowork-chains --bench overhead   (CHAINS_BENCH_RUNS=50, 20 steps)

use cowork_chains::{Chains, RunOptions, RunState};
use cowork_contract::{EffectEnv, ToolResult, tools};
use cowork_core::{
    CallRequest, Caller, DenyApprover, Layer, PolicyBridge, Registry, Scheduler, SchedulerConfig,
};
use cowork_store::{DataDir, Store};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};

const STEPS: usize = 20;

#[derive(Deserialize, JsonSchema)]
pub struct EchoInput {
    target: String,
}

#[derive(Serialize, JsonSchema)]
pub struct EchoOutput {
    target: String,
}

/// The tool every step calls: read-only, it gives its argument back.
#[derive(Clone)]
struct Bench;

#[tools]
impl Bench {
    #[tool(
        name = "echo",
        title = "Echo",
        description = "Gives its argument back.",
        read_only
    )]
    async fn echo(&self, input: &EchoInput) -> ToolResult<EchoOutput> {
        Ok(EchoOutput {
            target: input.target.clone(),
        })
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::var("CHAINS_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(
        DataDir::at(tmp.path()),
        &[&cowork_core::SCHEMA, &cowork_chains::SCHEMA],
    )
    .unwrap();
    let registry = Registry::new();
    for tool in Bench.tool_list() {
        registry.register(Layer::Builtin, tool);
    }
    let scheduler = Arc::new(Scheduler::new(
        registry,
        Arc::new(PolicyBridge::open(&store, &[]).unwrap()),
        Arc::new(cowork_core::AuditLog::open(&store).unwrap()),
        Arc::new(DenyApprover),
        EffectEnv::default(),
        SchedulerConfig::default(),
    ));
    let dir = tmp.path().join("chains");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::from("name = \"bench\"\n[inputs.target]\ntype = \"string\"\n");
    for i in 0..STEPS {
        let target = if i == 0 {
            "{{ inputs.target }}".to_string()
        } else {
            format!("{{{{ steps.s{}.result.target }}}}", i - 1)
        };
        text.push_str(&format!(
            "[[steps]]\nid = \"s{i}\"\ntool = \"echo\"\nargs = {{ target = \"{target}\" }}\n"
        ));
    }
    std::fs::write(dir.join("bench.toml"), text).unwrap();
    let chains = Chains::open(&store, scheduler.clone(), vec![dir]).unwrap();
    let chain = chains.get("bench").unwrap();
    let chain = Arc::new(chain);
    let options = RunOptions {
        conversation: "bench".into(),
        granted: None,
        unattended: false,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (bare, chained) = runtime.block_on(async {
        let (mut bare, mut chained) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let t = Instant::now();
            for _ in 0..STEPS {
                let out = scheduler
                    .call(CallRequest::new(
                        "echo",
                        serde_json::json!({"target": "x"}),
                        Caller::Chain,
                        "bench",
                    ))
                    .await;
                assert!(out.result.is_ok());
            }
            bare.push(t.elapsed());
            let t = Instant::now();
            let report = chains
                .run(
                    &chain,
                    &serde_json::json!({"target": "x"}),
                    &options,
                    &|_| {},
                )
                .await
                .unwrap();
            chained.push(t.elapsed());
            assert_eq!(report.state, RunState::Completed);
        }
        (bare, chained)
    });
    // 1,000 schedules, the next due hours away (03:00 and 04:00 are never within the 3 s).
    let schedules = Arc::new(cowork_chains::Schedules::open(&store).unwrap());
    for i in 0..1000 {
        schedules
            .add(
                &format!("s{i}"),
                &format!("{} {} * * *", i % 60, 3 + i % 2),
                cowork_chains::Target::Prompt {
                    prompt: "x".into(),
                    profile: None,
                },
                cowork_chains::Missed::Skip,
                vec![],
                chrono::Utc::now(),
            )
            .unwrap();
    }
    let prompt: cowork_chains::PromptRunner =
        Arc::new(|_, _, _, _| Box::pin(async { Ok(cowork_chains::PromptReply::default()) }));
    let chains = Arc::new(chains);
    let idle_cpu = runtime.block_on(async {
        let worker = tokio::spawn(cowork_chains::serve(
            schedules,
            chains.clone(),
            Arc::new(cowork_chains::SystemClock),
            prompt,
        ));
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = cpu_time();
        tokio::time::sleep(Duration::from_secs(3)).await;
        let spent = cpu_time() - before;
        worker.abort();
        spent
    });
    let per_step = |d: Duration| d.as_secs_f64() * 1e6 / STEPS as f64;
    let (bare, chained) = (per_step(median(bare)), per_step(median(chained)));
    println!(
        "chains: per step, bare Scheduler::call median {bare:.1} µs, in a chain {chained:.1} µs — overhead {:.1} µs per step ({runs} runs of {STEPS} steps)",
        chained - bare
    );
    println!(
        "schedules: 1,000 schedules, none due: the process used {:.2} ms of CPU in 3 s",
        idle_cpu.as_secs_f64() * 1e3
    );
}

/// User + system CPU time of this process so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
