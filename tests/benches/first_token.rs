//! First-token latency: the agent (persist the user message, load the conversation, build the
//! request with the visible tools, stream, forward the delta as an event) vs a raw streaming
//! client reading the same scripted server, alternating, in one run.
//!
//!     cargo bench -p cowork-tests --bench first_token

use cowork_agent::provider::openai::OpenAiCompatible;
use cowork_agent::{Agent, AgentConfig, AgentEvent, Conversations};
use cowork_core::DenyApprover;
use cowork_tests::Harness;
use cowork_tests::llm_server::{ScriptedLlm, Turn};
use futures::StreamExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::var("FIRST_TOKEN_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let h = Harness::new(Arc::new(DenyApprover));
        let server = ScriptedLlm::start().await;
        let provider = Arc::new(OpenAiCompatible::new("openai", &server.openai_base(), ""));
        let agent = Agent::new(h.scheduler.clone(), provider, Conversations::open(&h.store).unwrap(), AgentConfig { model: "m".into(), ..Default::default() });
        let http = reqwest::Client::new();
        let body = serde_json::json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
        let (mut raw, mut via_agent) = (Vec::new(), Vec::new());
        for i in 0..runs {
            server.push(Turn::text("hello world"));
            let t = Instant::now();
            let mut stream = http.post(format!("{}/chat/completions", server.openai_base())).json(&body).send().await.unwrap().bytes_stream();
            let mut seen = String::new();
            while let Some(chunk) = stream.next().await {
                seen.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
                if seen.contains("hello") {
                    break;
                }
            }
            raw.push(t.elapsed());
            drop(stream);

            server.push(Turn::text("hello world"));
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let t = Instant::now();
            let conversation = format!("bench-{i}");
            let run = agent.send(&conversation, "hi", &tx, Default::default());
            tokio::pin!(run);
            // If the whole turn finishes within one poll, the event is read afterwards: that
            // only overstates the agent's time (conservative).
            let mut done = false;
            let first = loop {
                if done {
                    match rx.recv().await {
                        Some(AgentEvent::TextDelta { .. }) => break t.elapsed(),
                        Some(_) => continue,
                        None => panic!("the turn produced no text"),
                    }
                }
                tokio::select! {
                    biased;
                    Some(event) = rx.recv() => if let AgentEvent::TextDelta { .. } = event { break t.elapsed() },
                    result = &mut run => { result.unwrap(); done = true; }
                }
            };
            via_agent.push(first);
            if !done {
                run.await.unwrap();
            }
        }
        let (r, a) = (median(raw), median(via_agent));
        println!(
            "first token over {runs} runs: raw stream p50 {:.2} ms | agent p50 {:.2} ms | overhead {:.2} ms",
            r.as_secs_f64() * 1e3,
            a.as_secs_f64() * 1e3,
            (a.as_secs_f64() - r.as_secs_f64()) * 1e3
        );
    });
}
