//! How fast the chat renders, measured in the real window: opening a 2,000-message
//! conversation (click → its newest message laid out) and streaming a reply at 100 tokens/s
//! (each streamed update's work up to its layout, and the frame intervals while it streams).
//! Shared by the window smoke test and the release benchmark (`#[path]`-included).

#![allow(dead_code)]

use crate::webdriver::Driver;
use cowork_tests::llm_server::{ScriptedLlm, Turn};
use cowork_tests::wait::patience;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

pub const BIG: &str = "A long conversation";
pub const SMALL: &str = "A short one";

/// Writes a conversation of `messages` messages (Markdown answers with lists and code, as real
/// ones have) and a short one, into the data dir the app will open.
pub fn seed(home: &Path, messages: usize) {
    let store = cowork_store::Store::open(
        cowork_store::DataDir::at(home.to_path_buf()),
        &cowork_app::SCHEMAS,
    )
    .unwrap();
    let conversations = cowork_agent::Conversations::open(&store).unwrap();
    conversations.ensure("small", SMALL).unwrap();
    conversations
        .append("small", &cowork_agent::Message::user_text("hello"))
        .unwrap();
    conversations.ensure("big", BIG).unwrap();
    for n in 0..messages / 2 {
        conversations
            .append(
                "big",
                &cowork_agent::Message::user_text(&format!(
                    "Question {n}: how should I plan the week's tasks around the trip?"
                )),
            )
            .unwrap();
        let code = if n % 5 == 0 {
            "\n\n```rust\nfn plan(days: u32) -> Vec<Task> {\n    (0..days).map(Task::for_day).collect()\n}\n```"
        } else {
            ""
        };
        let answer = format!(
            "Here is a plan for **turn {n}**:\n\n1. Book the train on Monday.\n2. Move the *review* to Thursday.\n3. Pack on Friday evening.\n\nThat leaves Wednesday free for the report, which is due next week.{code}"
        );
        conversations
            .append(
                "big",
                &cowork_agent::Message {
                    role: cowork_agent::Role::Assistant,
                    parts: vec![cowork_agent::Part::Text { text: answer }],
                },
            )
            .unwrap();
    }
    // The big one last touched: it is listed first, but not open at launch.
    let _ = conversations.rename("big", BIG);
}

/// Milliseconds from clicking `title` in the sidebar to a message showing `marker` being laid out.
pub async fn open_ms(d: &Driver, title: &str, marker: &str) -> f64 {
    let script = r#"
        const [title, marker, done] = arguments;
        const button = [...document.querySelectorAll('[data-testid=conversation] button.link')].find((b) => b.textContent === title);
        if (!button) { done(-1); return; }
        const t0 = performance.now();
        const check = () => {
          const all = document.querySelectorAll('[data-testid=assistant-message], [data-testid=user-message]');
          const last = all[all.length - 1];
          if (last && last.textContent.includes(marker)) {
            observer.disconnect();
            void document.body.offsetHeight;
            done(performance.now() - t0);
          }
        };
        const observer = new MutationObserver(check);
        observer.observe(document.body, { childList: true, subtree: true, characterData: true });
        button.click();
        check();
    "#;
    let ms = d
        .exec_async(script, json!([title, marker]))
        .await
        .as_f64()
        .unwrap_or(-1.0);
    assert!(ms >= 0.0, "{title} is not in the sidebar");
    ms
}

pub struct Streamed {
    /// Each streamed update's work: from the text arriving to the list laid out again.
    pub updates_ms: Vec<f64>,
    /// The intervals between frames while the reply streamed.
    pub frames_ms: Vec<f64>,
    pub tokens: usize,
    pub seconds: f64,
}

/// Streams a reply of `tokens` chunks at 100 per second into the open conversation.
pub async fn stream(d: &Driver, server: &ScriptedLlm, tokens: usize) -> Streamed {
    let words = [
        "The ",
        "plan ",
        "keeps ",
        "**Wednesday** ",
        "free; ",
        "the ",
        "`report` ",
        "is ",
        "due ",
        "soon. ",
    ];
    let mut text: Vec<String> = (0..tokens)
        .map(|i| words[i % words.len()].to_string())
        .collect();
    for (i, chunk) in text.iter_mut().enumerate() {
        if i % 60 == 59 {
            chunk.push_str("\n\n");
        }
        if i % 150 == 100 {
            chunk.push_str("\n\n```rust\nlet week = plan(7);\n```\n\n");
        }
    }
    text.push("END-OF-REPLY".into());
    server.push(Turn::Reply {
        text,
        tool_calls: vec![],
        chunk_delay: Duration::from_millis(10),
    });
    d.exec(
        r#"performance.clearMeasures('cowork:stream-update');
           window.__frames = []; window.__sampling = true;
           let last = performance.now();
           const tick = (now) => { window.__frames.push(now - last); last = now; if (window.__sampling) requestAnimationFrame(tick); };
           requestAnimationFrame(tick);"#,
        json!([]),
    )
    .await;
    let start = Instant::now();
    d.exec(
        "const el = document.querySelector('[data-testid=chat-input]'); el.value = 'stream please'; el.dispatchEvent(new Event('input', {bubbles: true})); document.querySelector('[data-testid=send]').click();",
        json!([]),
    )
    .await;
    loop {
        let done = d
            .exec(
                "const m = document.querySelectorAll('[data-testid=assistant-message]'); const last = m[m.length - 1]; return !!(last && last.textContent.includes('END-OF-REPLY')) && !!document.querySelector('[data-testid=send]');",
                json!([]),
            )
            .await;
        if done.as_bool() == Some(true) {
            break;
        }
        assert!(start.elapsed() < patience(), "the reply did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seconds = start.elapsed().as_secs_f64();
    let data = d
        .exec(
            "window.__sampling = false; return { frames: window.__frames.slice(1), updates: performance.getEntriesByName('cowork:stream-update').map((e) => e.duration) };",
            json!([]),
        )
        .await;
    let list = |k: &str| -> Vec<f64> {
        data[k]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_f64())
            .collect()
    };
    Streamed {
        updates_ms: list("updates"),
        frames_ms: list("frames"),
        tokens,
        seconds,
    }
}

pub fn percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

/// The frame intervals of the page doing nothing for `seconds`: the display's own pace, the
/// baseline the streaming frames compare with (under Xvfb, WebKit paints by a timer).
pub async fn idle_frames(d: &Driver, seconds: f64) -> Vec<f64> {
    let data = d
        .exec_async(
            r#"const [seconds, done] = arguments;
               const frames = []; let last = performance.now(); const end = last + seconds * 1000;
               const tick = (now) => { frames.push(now - last); last = now; if (now < end) requestAnimationFrame(tick); else done(frames.slice(1)); };
               requestAnimationFrame(tick);"#,
            json!([seconds]),
        )
        .await;
    data.as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_f64())
        .collect()
}
