//! The providers against a real model server: llama.cpp's `llama-server` with SmolLM2-135M-
//! Instruct on loopback. A streamed turn with its usage, the model list, a request carrying tool
//! definitions, and a conversation longer than the server's 2,048-token window that goes on
//! through compaction (the real model writes the summary).

use cowork_agent::provider::openai::OpenAiCompatible;
use cowork_agent::{Agent, AgentConfig, AgentEvent, Conversations, Provider};
use cowork_core::DenyApprover;
use cowork_tests::Harness;
use cowork_tests::llama::{LlamaServer, model_file};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

async fn turn(agent: &Agent, conversation: &str, text: &str) -> (u32, Vec<AgentEvent>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let steps = agent
        .send(conversation, text, &tx, CancellationToken::new())
        .await
        .unwrap_or_else(|e| panic!("{text:?}: {e}"));
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    (steps, events)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_llama_cpp_server_streams_reports_usage_and_survives_a_long_conversation() {
    let server = LlamaServer::start(2048).await;
    let provider = Arc::new(OpenAiCompatible::new("llama.cpp", &server.base(), ""));
    let models = provider.models().await.unwrap();
    let file = model_file();
    let name = file.file_name().unwrap().to_string_lossy();
    assert!(models.iter().any(|m| m.ends_with(&*name)), "{models:?}");

    let h = Harness::new(Arc::new(DenyApprover));
    let agent = Agent::new(
        h.scheduler.clone(),
        provider,
        Conversations::open(&h.store).unwrap(),
        AgentConfig {
            model: models[0].clone(),
            max_tokens: 96,
            context_window: 2048,
            // Only the core set and tool_search are defined: the request carries tools, which
            // this small model answers in words (it was not trained to call them).
            core_tools: vec!["list_tasks".into()],
            ..Default::default()
        },
    );

    // A streamed turn: text in several chunks, and the server's token counts.
    let (steps, events) = turn(&agent, "local", "Say hello to Ada in one short sentence.").await;
    assert_eq!(steps, 1);
    let chunks: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(chunks.len() > 2, "streamed in {} chunks", chunks.len());
    assert!(!chunks.concat().trim().is_empty());
    let usage = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Usage { usage } => Some(*usage),
            _ => None,
        })
        .expect("llama-server reports usage");
    assert!(
        usage.input_tokens > 100 && usage.output_tokens > 0,
        "{usage:?}"
    );

    // Far past the 2,048-token window: compaction keeps every request inside it. (No tools
    // here: the notes fill the window faster.)
    let notes = Agent::new(
        h.scheduler.clone(),
        Arc::new(OpenAiCompatible::new("llama.cpp", &server.base(), "")),
        Conversations::open(&h.store).unwrap(),
        AgentConfig {
            model: models[0].clone(),
            max_tokens: 48,
            context_window: 2048,
            profile: Some(cowork_core::ToolProfile {
                name: "none".into(),
                tools: Some(vec![]),
                ..Default::default()
            }),
            ..Default::default()
        },
    );
    let agent = &notes;
    let paragraph = "Our garden plan: tomatoes by the south fence, basil between them, beans on the trellis, and a row of marigolds against pests. ".repeat(10);
    let mut compacted = 0;
    for n in 0..7 {
        let (_, events) = turn(agent, "local", &format!("Note {n}: {paragraph}")).await;
        compacted += events
            .iter()
            .filter(|e| matches!(e, AgentEvent::Compacted { .. }))
            .count();
    }
    assert!(
        compacted >= 1,
        "no compaction in a conversation of ~5,000 tokens"
    );
    let summaries = agent.conversations().compactions("local").unwrap();
    assert!(summaries.iter().all(|c| !c.summary.is_empty()));
    eprintln!(
        "llama.cpp: {} compactions; the last summary: {:?}",
        summaries.len(),
        summaries
            .last()
            .map(|c| c.summary.chars().take(200).collect::<String>())
    );
}
