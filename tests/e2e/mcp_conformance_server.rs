//! The official MCP conformance suite's server scenarios against `cowork mcp serve --http`, for
//! both revisions Cowork serves (2025-11-25 with its handshake, 2026-07-28 stateless). The suite
//! cannot send the token, so tests/conformance/token-proxy.mjs adds it and changes nothing else.
//! Known failures, each with its reason, are in tests/conformance/baseline.yml.

use cowork_tests::conformance::{node, run_suite};
use serde_json::Value;
use std::process::{Child, Command, Stdio};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_server_passes_the_conformance_suite_but_its_explained_baseline() {
    use std::io::BufRead;
    let home = tempfile::tempdir().unwrap();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_cowork"))
        .args(["--json", "mcp", "serve", "--http"])
        .env("COWORK_HOME", home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _serve = Killed(serve);
    let announced: Value = serde_json::from_str(&line).unwrap();
    let port = free_port();
    let proxy = Command::new(node())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/conformance/token-proxy.mjs"
        ))
        .args([
            &port.to_string(),
            announced["url"].as_str().unwrap(),
            announced["token"].as_str().unwrap(),
        ])
        .spawn()
        .unwrap();
    let _proxy = Killed(proxy);
    cowork_tests::wait::until_true("the token proxy listening", || {
        std::net::TcpStream::connect(("127.0.0.1", port))
            .map(drop)
            .map_err(|e| e.to_string())
    })
    .await;
    // `localhost`: the suite's DNS-rebinding scenario needs a loopback name to vary.
    let url = format!("http://localhost:{port}/mcp");
    for revision in ["2025-11-25", "2026-07-28"] {
        run_suite(
            &["server", "--url", &url, "--requirements", revision],
            revision,
        );
    }
}
