//! `cowork chat` from start to its first token, over the model server's own latency: the same
//! scripted server on loopback read by a raw streaming client (the server's latency) and by a
//! fresh `cowork chat --output stream-json` process (start, open the app, build the request,
//! stream, print the first text event), alternating, in one run. Target: ≤ 150 ms over the
//! server's own latency.
//!
//!     cargo bench -p cowork-cli --bench chat_start        (CHAT_START_RUNS=20 by default)

use cowork_tests::llm_server::{ScriptedLlm, Turn};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// From spawning `cowork chat` to the first text it prints (a `text_delta` line).
fn chat_first_token(home: &std::path::Path) -> Duration {
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cowork"))
        .args(["chat", "--output", "stream-json", "hi"])
        .env("COWORK_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let first = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains("\"text_delta\""))
        .map(|_| t.elapsed())
        .expect("cowork chat printed no text");
    child.wait().unwrap();
    first
}

fn main() {
    let runs: usize = std::env::var("CHAT_START_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let server = rt.block_on(ScriptedLlm::start());
    std::fs::write(
        home.path().join("settings.json"),
        serde_json::json!({"agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "m", "apiKeyEnv": ""}})
            .to_string(),
    )
    .unwrap();
    let http = reqwest::Client::new();
    let body = serde_json::json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    // The first start creates the data folder and its database: not what a person waits for
    // each time.
    server.push(Turn::text("hello world"));
    chat_first_token(home.path());
    let (mut raw, mut chat) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        server.push(Turn::text("hello world"));
        raw.push(rt.block_on(async {
            let t = Instant::now();
            let mut response = http
                .post(format!("{}/chat/completions", server.openai_base()))
                .json(&body)
                .send()
                .await
                .unwrap();
            let mut seen = String::new();
            while let Some(chunk) = response.chunk().await.unwrap() {
                seen.push_str(&String::from_utf8_lossy(&chunk));
                if seen.contains("hello") {
                    break;
                }
            }
            t.elapsed()
        }));
        server.push(Turn::text("hello world"));
        chat.push(chat_first_token(home.path()));
    }
    let (r, c) = (median(raw), median(chat));
    println!(
        "cowork chat first token over {runs} runs: server alone p50 {:.2} ms | cowork chat p50 {:.2} ms | over the server {:.2} ms (target ≤ 150)",
        r.as_secs_f64() * 1e3,
        c.as_secs_f64() * 1e3,
        (c.as_secs_f64() - r.as_secs_f64()) * 1e3
    );
}
