//! Files family figures, side by side in one run:
//! - `search_code` through the full gate (scheduler, policy, audit) vs the `rg` binary on the same
//!   100k-file tree, alternating runs, medians (target ≤ 1.5×);
//! - `read_file`'s first page of a 50 MB file through the gate (target ≤ 50 ms).
//!
//!     cargo bench -p cowork-tests --bench files      (FILES_BENCH_FILES=100000, FILES_BENCH_RUNS=7)

use cowork_core::{CallRequest, Caller, DenyApprover};
use cowork_tests::Harness;
use serde_json::json;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let files: usize = std::env::var("FILES_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let runs: usize = std::env::var("FILES_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let h = Harness::new(Arc::new(DenyApprover));
    let tree = h.workspace.join("tree");

    // A source-like tree: 100 files per folder, ~1.2 KB each; one file in 2,000 holds the needle.
    let t = Instant::now();
    for i in 0..files {
        let dir = tree.join(format!("pkg{:04}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(dir.join(format!("mod{:03}.rs", i % 100))).unwrap(),
        );
        for line in 0..40 {
            writeln!(
                f,
                "    let value_{line} = compute(input_{line}, {i}); // ordinary line"
            )
            .unwrap();
        }
        if i % 2000 == 7 {
            writeln!(f, "    panic!(\"needle_{i} reached\");").unwrap();
        }
    }
    println!(
        "tree: {files} files written in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let pattern = r"needle_\d+ reached";
    let (mut ours, mut rg) = (Vec::new(), Vec::new());
    let mut counts = (0, 0);
    for run in 0..runs + 1 {
        let t = Instant::now();
        let out = rt.block_on(h.scheduler.call(CallRequest::new(
            "search_code",
            json!({"pattern": pattern, "path": "tree", "max_results": 10000}),
            Caller::Cli,
            "bench",
        )));
        let took = t.elapsed();
        counts.0 = out.result.unwrap().structured.unwrap()["hits"]
            .as_array()
            .unwrap()
            .len();
        let t = Instant::now();
        let output = std::process::Command::new("rg")
            .args(["-n", pattern])
            .arg(&tree)
            .output()
            .expect("rg (ripgrep) is installed by tests/setup.sh");
        let rg_took = t.elapsed();
        counts.1 = String::from_utf8_lossy(&output.stdout).lines().count();
        // The first run of each warms the page cache; it is not counted.
        if run > 0 {
            ours.push(took);
            rg.push(rg_took);
        }
    }
    assert_eq!(counts.0, counts.1, "both find the same lines");
    let (o, r) = (median(ours), median(rg));
    println!(
        "search_code over {files} files ({} hits), median of {runs}:",
        counts.0
    );
    println!("  rg binary            {:8.1} ms", ms(r));
    println!("  search_code (gate)   {:8.1} ms", ms(o));
    println!(
        "  ratio {:.2}x (target ≤ 1.5x)",
        o.as_secs_f64() / r.as_secs_f64()
    );

    // read_file: the first page of a 50 MB file.
    let big = h.workspace.join("big.log");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
        let mut n = 0u64;
        while n < 50 << 20 {
            let line = format!("2026-11-22T10:00:00Z INFO request {n} served in 3 ms\n");
            n += line.len() as u64;
            f.write_all(line.as_bytes()).unwrap();
        }
    }
    let mut pages = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let out = rt.block_on(h.scheduler.call(CallRequest::new(
            "read_file",
            json!({"path": "big.log"}),
            Caller::Cli,
            "bench",
        )));
        pages.push(t.elapsed());
        assert!(out.result.unwrap().structured.unwrap()["truncated"] == true);
    }
    println!(
        "read_file first page of a 50 MB file (2000 lines), median of 20: {:.2} ms (target ≤ 50 ms)",
        ms(median(pages))
    );
}
