//! A chat in daily use, in the REAL window (WebDriver, Xvfb) against the scripted server, once
//! per wire format: files and an image attached through the file input reach the request as
//! that API wants them; usage and cost under the answer; regenerate and edit make branches the
//! person switches between; the model picked from the provider's list is used; long messages
//! compact mid-conversation and the summary shows; rename and pin in the sidebar.

#[path = "webdriver.rs"]
mod webdriver;

use cowork_tests::llm_server::{ScriptedLlm, Turn};
use cowork_tests::wait::patience;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use webdriver::{Driver, artifacts, launch};

/// A 1×1 PNG.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// Sets a text field's value the way typing would end (one input event): long texts in a blink.
async fn fill(d: &Driver, css: &str, text: &str) {
    d.exec(
        "const el = document.querySelector(arguments[0]); el.value = arguments[1]; el.dispatchEvent(new Event('input', {bubbles: true}));",
        json!([css, text]),
    )
    .await;
}

/// The text of each element matching `css` (its DOM text: WebDriver's rendered text leaves
/// out some buttons' labels in WebKit).
async fn texts(d: &Driver, css: &str) -> Vec<String> {
    d.exec(
        "return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent)",
        json!([css]),
    )
    .await
    .as_array()
    .into_iter()
    .flatten()
    .filter_map(|v| v.as_str().map(String::from))
    .collect()
}

/// Waits until some element matching `css` shows `text`.
async fn wait_text(d: &Driver, css: &str, text: &str) {
    let start = Instant::now();
    loop {
        if texts(d, css).await.iter().any(|t| t.contains(text)) {
            return;
        }
        if start.elapsed() > patience() {
            let shot = artifacts().join("timeout.png");
            d.screenshot(&shot).await;
            panic!(
                "no {css} shows {text:?}; they show {:?} (screenshot {})",
                texts(d, css).await,
                shot.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the server has received `n` requests.
async fn requests(server: &ScriptedLlm, n: usize) -> Vec<Value> {
    let start = Instant::now();
    while server.requests().len() < n {
        assert!(
            start.elapsed() < patience(),
            "{} requests of {n}",
            server.requests().len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.requests().into_iter().map(|(_, _, b)| b).collect()
}

async fn send(d: &Driver, text: &str) {
    d.wait_for("[data-testid=send]").await;
    fill(d, "[data-testid=chat-input]", text).await;
    d.click(&d.wait_for("[data-testid=send]").await).await;
}

async fn chat_in_daily_use(api: &str) {
    let home = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start().await;
    let base = if api == "anthropic" {
        server.anthropic_base()
    } else {
        server.openai_base()
    };
    std::fs::write(
        home.path().join("settings.json"),
        serde_json::to_string_pretty(&json!({
            "agent": {
                "provider": api, "baseUrl": base, "model": "scripted", "apiKeyEnv": "",
                "contextWindow": 16000,
                "prices": {"scripted": {"inputPerMtok": 3.0, "outputPerMtok": 15.0}},
                "personas": [{"name": "Translator", "system": "You translate into French."}]
            }
        }))
        .unwrap(),
    )
    .unwrap();
    let files = tempfile::tempdir().unwrap();
    let png = files.path().join("pixel.png");
    std::fs::write(&png, webdriver::base64_decode(PIXEL)).unwrap();
    let notes = files.path().join("notes.md");
    std::fs::write(&notes, "# Notes\nbuy oat milk").unwrap();

    let (_xvfb, _driver, d) = launch(home.path(), &[]).await;
    let out = artifacts();
    d.wait_for("[data-testid=chat-input]").await;

    // Attach through the file input (the picker's stand-in), then send.
    let input = d.wait_for("[data-testid=attach-input]").await;
    d.type_into(&input, &format!("{}\n{}", png.display(), notes.display()))
        .await;
    let start = Instant::now();
    while d
        .find_all("[data-testid=pending-attachments] [data-testid=attachment]")
        .await
        .len()
        < 2
    {
        assert!(
            start.elapsed() < patience(),
            "the attachments did not appear"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.push(Turn::text("A pixel and your notes."));
    send(&d, "what is in these?").await;
    wait_text(
        &d,
        "[data-testid=assistant-message]",
        "A pixel and your notes.",
    )
    .await;
    let first = &requests(&server, 1).await[0];
    let body = first.to_string();
    assert!(
        body.contains("buy oat milk") && body.contains("notes.md"),
        "{api}: {body}"
    );
    if api == "anthropic" {
        let content = &first["messages"][0]["content"];
        let image = content
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] == "image")
            .unwrap();
        assert_eq!(image["source"]["data"], PIXEL);
        assert_eq!(image["source"]["media_type"], "image/png");
    } else {
        let content = &first["messages"][1]["content"];
        let image = content
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] == "image_url")
            .unwrap();
        assert_eq!(
            image["image_url"]["url"],
            format!("data:image/png;base64,{PIXEL}")
        );
    }
    // The message shows its attachments; the turn its tokens and cost.
    assert_eq!(
        d.find_all("[data-testid=user-message] [data-testid=attachment]")
            .await
            .len(),
        2
    );
    wait_text(&d, "[data-testid=usage]", "$0.").await;
    d.screenshot(&out.join(format!("chat-attachments-{api}.png")))
        .await;

    // Regenerate: a second answer, and ‹ › between the two.
    server.push(Turn::text("Second answer."));
    d.click(&d.wait_for("[data-testid=regenerate]").await).await;
    wait_text(&d, "[data-testid=assistant-message]", "Second answer.").await;
    wait_text(
        &d,
        "[data-testid=assistant-message] [data-testid=branches]",
        "2/2",
    )
    .await;
    let previous = d
        .wait_for("[data-testid=assistant-message] [data-testid=branches] button")
        .await;
    d.click(&previous).await;
    wait_text(
        &d,
        "[data-testid=assistant-message]",
        "A pixel and your notes.",
    )
    .await;
    wait_text(
        &d,
        "[data-testid=assistant-message] [data-testid=branches]",
        "1/2",
    )
    .await;

    // Edit the question: a new branch of it, answered.
    server.push(Turn::text("Edited answer."));
    d.click(&d.wait_for("[data-testid=edit]").await).await;
    d.wait_for("[data-testid=edit-input]").await;
    fill(&d, "[data-testid=edit-input]", "just the notes, please").await;
    d.click(&d.wait_for("[data-testid=edit-send]").await).await;
    wait_text(&d, "[data-testid=assistant-message]", "Edited answer.").await;
    wait_text(
        &d,
        "[data-testid=user-message] [data-testid=branches]",
        "2/2",
    )
    .await;
    let edited = &requests(&server, 3).await[2];
    assert!(edited.to_string().contains("just the notes, please"));
    assert!(
        !edited.to_string().contains("what is in these?"),
        "{api}: the edit replaced the question"
    );

    // The model, from the provider's list.
    // The list loads when the picker is first reached (here by keyboard focus, as Tab does:
    // WebKitWebDriver's click on a <select> sends no focus or mouse-down).
    d.wait_for("[data-testid=chat-model]").await;
    d.exec(
        "const s = document.querySelector('[data-testid=chat-model]'); s.focus(); s.dispatchEvent(new FocusEvent('focus'));",
        json!([]),
    )
    .await;
    // The provider's list arrives; pick from it (options carry their value as a property,
    // which no CSS selector sees, so the pick is by script, as a click on it does).
    let start = Instant::now();
    loop {
        let listed = d
            .exec(
                "return [...document.querySelector('[data-testid=chat-model]').options].map((o) => o.value)",
                json!([]),
            )
            .await;
        if listed.to_string().contains("scripted-vision") {
            break;
        }
        assert!(
            start.elapsed() < patience(),
            "the model list did not load: {listed}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    d.exec(
        "const s = document.querySelector('[data-testid=chat-model]'); s.value = 'scripted-vision'; s.dispatchEvent(new Event('change', {bubbles: true}));",
        json!([]),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // And a system prompt of its own.
    d.click(&d.wait_for("[data-testid=system-prompt]").await)
        .await;
    d.wait_for("[data-testid=system-input]").await;
    fill(&d, "[data-testid=system-input]", "Answer in haiku.").await;
    d.exec(
        "document.querySelector('[data-testid=system-input]').dispatchEvent(new FocusEvent('blur'))",
        json!([]),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.push(Turn::text("From the vision model."));
    send(&d, "and now?").await;
    wait_text(
        &d,
        "[data-testid=assistant-message]",
        "From the vision model.",
    )
    .await;
    assert_eq!(
        requests(&server, 4).await[3]["model"],
        "scripted-vision",
        "{api}"
    );
    assert!(
        requests(&server, 4).await[3]
            .to_string()
            .contains("Answer in haiku."),
        "{api}: the conversation's system prompt"
    );

    // Long messages: the window fills, earlier turns are summarized mid-conversation.
    let filler = "The quarterly report covers revenue, costs and hiring in detail. ".repeat(160);
    for n in 0..4 {
        server.push(Turn::text(&format!("Noted part {n}.")));
        send(&d, &format!("part {n}: {filler}")).await;
        wait_text(
            &d,
            "[data-testid=assistant-message]",
            &format!("Noted part {n}."),
        )
        .await;
    }
    d.wait_for("[data-testid=compacted]").await;
    let all = server.requests();
    let summarized = all
        .iter()
        .position(|(_, _, b)| b.to_string().contains("You write the running summary"))
        .expect("a compaction call");
    assert!(
        all[summarized + 1].2.to_string().contains("SUMMARY-1"),
        "{api}"
    );
    assert!(
        all.iter()
            .all(|(_, _, b)| cowork_tests::llm_server::prompt_tokens(b) < 16_000)
    );
    let card = d.wait_for("[data-testid=compacted] summary").await;
    d.click(&card).await;
    wait_text(&d, "[data-testid=compacted]", "SUMMARY-1").await;
    d.screenshot(&out.join(format!("chat-compacted-{api}.png")))
        .await;

    // Rename (double-click the title) and pin in the sidebar.
    d.wait_for("[data-testid=conversation].active button.link")
        .await;
    d.exec(
        "document.querySelector('[data-testid=conversation].active button.link').dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))",
        json!([]),
    )
    .await;
    d.wait_for("[data-testid=rename-input]").await;
    fill(&d, "[data-testid=rename-input]", "Pixel and notes").await;
    let rename = d.wait_for("[data-testid=rename-input]").await;
    d.type_into(&rename, "\u{E007}").await;
    wait_text(&d, "[data-testid=conversation]", "Pixel and notes").await;
    d.click(
        &d.wait_for("[data-testid=conversation].active [data-testid=pin]")
            .await,
    )
    .await;
    d.wait_for("[data-testid=conversation][data-pinned=true]")
        .await;
    d.screenshot(&out.join(format!("chat-daily-{api}.png")))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_in_daily_use_in_the_window_over_the_openai_format() {
    chat_in_daily_use("openai").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_in_daily_use_in_the_window_over_the_anthropic_format() {
    chat_in_daily_use("anthropic").await;
}

#[path = "chat_render.rs"]
mod chat_render;

/// The rendering figures' smoke run (debug build; the release figures come from
/// `cargo bench -p cowork-desktop --bench chat_render`): a 2,000-message conversation opens
/// with its newest messages, earlier ones on demand, and a reply streamed at 100 tokens/s keeps
/// each update's work within a frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2000_message_conversation_opens_at_its_end_and_a_streamed_reply_renders_incrementally() {
    let home = tempfile::tempdir().unwrap();
    let server = ScriptedLlm::start().await;
    std::fs::write(
        home.path().join("settings.json"),
        serde_json::to_string_pretty(&json!({
            "agent": {"provider": "openai", "baseUrl": server.openai_base(), "model": "scripted", "apiKeyEnv": ""}
        }))
        .unwrap(),
    )
    .unwrap();
    chat_render::seed(home.path(), 2000);
    let (_xvfb, _driver, d) = launch(home.path(), &[]).await;
    d.wait_for("[data-testid=chat-input]").await;
    d.wait_for("[data-testid=conversation]").await;
    let open = chat_render::open_ms(&d, chat_render::BIG, "turn 999").await;
    // Only the newest messages are in the page; the rest come on demand.
    let shown = d.find_all("[data-testid=assistant-message]").await.len();
    assert!(shown <= 60, "{shown} answers rendered at once");
    d.click(&d.wait_for("[data-testid=show-earlier]").await)
        .await;
    let start = Instant::now();
    while d.find_all("[data-testid=assistant-message]").await.len() <= shown {
        assert!(
            start.elapsed() < patience(),
            "earlier messages did not come"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let streamed = chat_render::stream(&d, &server, 300).await;
    let update_p95 = chat_render::percentile(&streamed.updates_ms, 0.95);
    eprintln!(
        "open 2,000 messages: {open:.0} ms; {} streamed updates for {} tokens in {:.1} s, update p95 {update_p95:.1} ms, frame interval p95 {:.1} ms",
        streamed.updates_ms.len(),
        streamed.tokens,
        streamed.seconds,
        chat_render::percentile(&streamed.frames_ms, 0.95)
    );
    // Updates are batched per frame, not one per chunk.
    assert!(!streamed.updates_ms.is_empty());
    assert!(
        streamed.updates_ms.len() < streamed.tokens,
        "one update per chunk"
    );
    // Figures are the bench's (cargo bench -p cowork-desktop --bench chat_render): a test on a
    // busy machine asserts behaviour, never time.
    d.screenshot(&artifacts().join("chat-2000.png")).await;
}

/// A real local model in the window: llama.cpp's server with SmolLM2 on loopback, its model
/// picked from the server's list, a streamed answer and its token counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_llama_cpp_model_answers_in_the_window() {
    let llama = cowork_tests::llama::LlamaServer::start(4096).await;
    let home = tempfile::tempdir().unwrap();
    let models =
        cowork_agent::provider::openai::OpenAiCompatible::new("llama.cpp", &llama.base(), "");
    let model = cowork_agent::Provider::models(&models).await.unwrap()[0].clone();
    std::fs::write(
        home.path().join("settings.json"),
        serde_json::to_string_pretty(&json!({
            "agent": {"provider": "openai", "baseUrl": llama.base(), "model": model, "apiKeyEnv": "", "contextWindow": 4096}
        }))
        .unwrap(),
    )
    .unwrap();
    let (_xvfb, _driver, d) = launch(home.path(), &[]).await;
    d.wait_for("[data-testid=chat-input]").await;
    send(&d, "Say hello to Ada in one short sentence.").await;
    // Streamed in: the answer grows while the model runs, then the turn's counts show.
    let start = Instant::now();
    let mut lengths = Vec::new();
    while d.find("[data-testid=usage]").await.is_none() {
        let shown = texts(&d, "[data-testid=assistant-message]").await;
        lengths.push(shown.last().map(|t| t.len()).unwrap_or(0));
        assert!(
            start.elapsed() < patience(),
            "the turn's token counts never showed within {:?}; the answer's lengths seen: {:?}",
            patience(),
            lengths.iter().rev().take(5).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let answer = texts(&d, "[data-testid=assistant-message]").await;
    assert!(!answer.last().unwrap().trim().is_empty());
    let mut distinct = lengths.clone();
    distinct.dedup();
    eprintln!(
        "local model: {:?} (lengths seen while streaming: {distinct:?})",
        answer.last()
    );
    wait_text(&d, "[data-testid=usage]", " in · ").await;
    d.screenshot(&artifacts().join("chat-local-model.png"))
        .await;
}
