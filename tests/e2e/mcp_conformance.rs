//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, pinned in
//! tests/conformance/) against Cowork's MCP client: each client scenario runs
//! `conformance-client` (Cowork's app, gateway and scheduler) against the suite's mock servers.
//! The server side runs against `cowork mcp serve` (crates/cli's `mcp_conformance_server`).
//! Known failures, each with its reason, are in tests/conformance/baseline.yml.

use cowork_tests::conformance::run_suite;

/// At 2025-11-25, the revision Cowork's client speaks (its handshake): rmcp 3.9's client always
/// opens with `initialize`, which 2026-07-28 removed.
#[test]
fn the_client_passes_the_conformance_suite_but_its_explained_baseline() {
    let client = env!("CARGO_BIN_EXE_conformance-client");
    run_suite(
        &[
            "client",
            "--command",
            client,
            "--requirements",
            "2025-11-25",
        ],
        "client at 2025-11-25",
    );
}
