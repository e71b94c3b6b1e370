//! Chain overhead (issue 24 target: ≤ 20 µs per step over a bare `Scheduler::call`): the same
//! read-only tool called N times bare, and as an N-step chain (templating, the step's record in
//! the store, events), side by side in one run; the difference per step.
//!
//!     cargo bench -p cowork-tests --bench chains   (CHAINS_BENCH_RUNS=20, 20 steps)

use cowork_app::chains::{Chains, RunOptions, RunState};
use cowork_core::{CallRequest, Caller, DenyApprover};
use cowork_tests::Harness;
use cowork_tests::bench::{env, percentile};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

const STEPS: usize = 20;

#[tokio::main]
async fn main() {
    let runs = env("CHAINS_BENCH_RUNS", 20);
    let h = Harness::new(Arc::new(DenyApprover));
    let dir = h.store.dir().root().join("chains");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::from("name = \"bench\"\n[inputs.target]\ntype = \"string\"\n");
    for i in 0..STEPS {
        // Each step names the one before: the templating is part of what is measured.
        let target = if i == 0 {
            "{{ inputs.target }}".to_string()
        } else {
            format!("{{{{ steps.s{}.result.target }}}}", i - 1)
        };
        text.push_str(&format!(
            "[[steps]]\nid = \"s{i}\"\ntool = \"flaky_probe\"\nargs = {{ target = \"{target}\" }}\n"
        ));
    }
    std::fs::write(dir.join("bench.toml"), text).unwrap();
    let chains = Chains::open(&h.store, h.scheduler.clone(), vec![dir]).unwrap();
    let chain = chains.get("bench").unwrap();
    let options = RunOptions {
        conversation: "bench".into(),
        granted: None,
    };
    let mut bare = Vec::new();
    let mut chained = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        for _ in 0..STEPS {
            let out = h
                .scheduler
                .call(CallRequest::new(
                    "flaky_probe",
                    json!({"target": "x"}),
                    Caller::Chain,
                    "bench",
                ))
                .await;
            assert!(out.result.is_ok());
        }
        bare.push(t.elapsed());
        let t = Instant::now();
        let report = chains
            .run(&chain, &json!({"target": "x"}), &options, &|_| {})
            .await
            .unwrap();
        chained.push(t.elapsed());
        assert_eq!(report.state, RunState::Completed);
    }
    let per_step = |d: Duration| d.as_secs_f64() * 1e6 / STEPS as f64;
    let (bare_median, chain_median) = (
        per_step(percentile(&mut bare, 0.5)),
        per_step(percentile(&mut chained, 0.5)),
    );
    println!(
        "chains: per step, bare Scheduler::call median {bare_median:.1} µs, in a chain {chain_median:.1} µs — overhead {:.1} µs per step ({} runs of {STEPS} steps)",
        chain_median - bare_median,
        runs
    );
}
