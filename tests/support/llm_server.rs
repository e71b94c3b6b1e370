//! A scripted LLM server on loopback that speaks both streaming APIs (Anthropic Messages SSE and
//! OpenAI Chat Completions SSE) and replays scripted turns, including the failures a real
//! provider produces: 429 with retry-after, 401, a connection cut mid-stream, a malformed chunk.

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug)]
pub enum Turn {
    /// Streamed text chunks, then tool calls (`(id, name, arguments JSON)`), then the end.
    Reply {
        text: Vec<String>,
        tool_calls: Vec<(String, String, String)>,
        chunk_delay: Duration,
    },
    Error {
        status: u16,
        retry_after: Option<String>,
        body: String,
    },
    /// Sends these text chunks, then closes the connection without finishing the message.
    Disconnect { text: Vec<String> },
    /// Sends a chunk that is not JSON.
    Malformed,
}

impl Turn {
    pub fn text(text: &str) -> Turn {
        // Split in a few chunks so streaming is exercised.
        let words: Vec<String> = text.split_inclusive(' ').map(String::from).collect();
        Turn::Reply {
            text: words,
            tool_calls: vec![],
            chunk_delay: Duration::ZERO,
        }
    }
    pub fn tools(text: &str, calls: &[(&str, &str, Value)]) -> Turn {
        let mut turn = Turn::text(text);
        if let Turn::Reply { tool_calls, .. } = &mut turn {
            *tool_calls = calls
                .iter()
                .map(|(id, name, args)| (id.to_string(), name.to_string(), args.to_string()))
                .collect();
        }
        turn
    }
}

#[derive(Clone, Default)]
struct Shared {
    turns: Arc<Mutex<VecDeque<Turn>>>,
    requests: Arc<Mutex<Vec<(String, HeaderMap, Value)>>>,
    /// Requests whose prompt is longer (see [`prompt_tokens`]) are refused as too long.
    context_window: Arc<Mutex<Option<u32>>>,
    /// How many compaction calls were answered.
    summaries: Arc<Mutex<u32>>,
    /// Turns for requests whose system prompt holds a marker (a sub-agent's name), in order,
    /// so conversations that run at once each get their own script.
    keyed: Arc<Mutex<Keyed>>,
}

/// Scripts by marker (see [`ScriptedLlm::push_for`]).
type Keyed = std::collections::HashMap<String, VecDeque<Turn>>;

/// A request's system prompt, in either wire format.
fn system_of(body: &Value) -> String {
    match &body["system"] {
        Value::String(s) => s.clone(),
        Value::Null => body["messages"][0]["content"].to_string(),
        other => other.to_string(),
    }
}

pub struct ScriptedLlm {
    pub port: u16,
    shared: Shared,
    _server: tokio::task::JoinHandle<()>,
}

fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

fn halves(s: &str) -> (String, String) {
    let mid = s
        .char_indices()
        .map(|(i, _)| i)
        .nth(s.chars().count() / 2)
        .unwrap_or(0);
    (s[..mid].to_string(), s[mid..].to_string())
}

/// The scripted server's own token count of a request, reported as its usage the way the
/// real APIs do: a fixed rule the tests can predict (a JSON body's length over four).
pub fn prompt_tokens(body: &Value) -> u32 {
    (body.to_string().len() / 4) as u32
}

fn anthropic_events(
    text: &[String],
    calls: &[(String, String, String)],
    complete: bool,
    prompt: u32,
) -> Vec<String> {
    let mut out = vec![sse(
        Some("message_start"),
        &json!({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": [], "usage": {"input_tokens": prompt, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    if !text.is_empty() {
        out.push(sse(Some("content_block_start"), &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
        out.push(sse(Some("ping"), &json!({"type": "ping"})));
        for chunk in text {
            out.push(sse(Some("content_block_delta"), &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": chunk}})));
        }
        if !complete {
            return out;
        }
        out.push(sse(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": 0}),
        ));
        index = 1;
    }
    for (id, name, args) in calls {
        out.push(sse(Some("content_block_start"), &json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
        let (a, b) = halves(args);
        for part in [a, b] {
            out.push(sse(Some("content_block_delta"), &json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": part}})));
        }
        out.push(sse(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.push(sse(
        Some("message_delta"),
        &json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": text.len() + calls.len()}}),
    ));
    out.push(sse(Some("message_stop"), &json!({"type": "message_stop"})));
    out
}

fn openai_events(
    text: &[String],
    calls: &[(String, String, String)],
    complete: bool,
    usage: Option<u32>,
) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        sse(
            None,
            &json!({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut out = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    for t in text {
        out.push(chunk(json!({"content": t}), Value::Null));
    }
    if !complete {
        return out;
    }
    for (i, (id, name, args)) in calls.iter().enumerate() {
        let (a, b) = halves(args);
        out.push(chunk(json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": a}}]}), Value::Null));
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "function": {"arguments": b}}]}),
            Value::Null,
        ));
    }
    out.push(chunk(
        json!({}),
        json!(if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        }),
    ));
    if let Some(prompt) = usage {
        out.push(sse(
            None,
            &json!({"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": text.len() + calls.len()}}),
        ));
    }
    out.push("data: [DONE]\n\n".to_string());
    out
}

async fn respond(shared: Shared, path: &str, headers: HeaderMap, body: Value) -> Response {
    shared
        .requests
        .lock()
        .unwrap()
        .push((path.to_string(), headers, body.clone()));
    let anthropic = path.contains("messages");
    let prompt = prompt_tokens(&body);
    // The agent's compaction calls are answered here, numbered, leaving the script for the
    // conversation's own turns (a test cannot know in advance which turn compacts).
    let turn = if body.to_string().contains("You write the running summary") {
        let mut n = shared.summaries.lock().unwrap();
        *n += 1;
        Some(Turn::text(&format!("SUMMARY-{n}")))
    } else {
        let system = system_of(&body);
        let keyed = shared
            .keyed
            .lock()
            .unwrap()
            .iter_mut()
            .find(|(marker, _)| system.contains(marker.as_str()))
            .map(|(_, turns)| turns.pop_front());
        match keyed {
            Some(turn) => turn,
            None => shared.turns.lock().unwrap().pop_front(),
        }
    };
    let limit = *shared.context_window.lock().unwrap();
    if limit.is_some_and(|limit| prompt > limit) {
        // As the real APIs say it; a scripted turn stays for the retry.
        if let Some(turn) = turn
            && !body.to_string().contains("You write the running summary")
        {
            shared.turns.lock().unwrap().push_front(turn);
        }
        return (
            StatusCode::BAD_REQUEST,
            format!(
                r#"{{"error":{{"message":"prompt is too long: {prompt} tokens > {} maximum"}}}}"#,
                limit.unwrap_or_default()
            ),
        )
            .into_response();
    }
    let usage = body["stream_options"]["include_usage"]
        .as_bool()
        .unwrap_or(false)
        .then_some(prompt);
    let render = |text: &[String], calls: &[(String, String, String)], complete| {
        if anthropic {
            anthropic_events(text, calls, complete, prompt)
        } else {
            openai_events(text, calls, complete, usage)
        }
    };
    let (events, delay) = match turn {
        None => {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the script has no more turns",
            )
                .into_response();
        }
        Some(Turn::Error {
            status,
            retry_after,
            body,
        }) => {
            let mut response = (StatusCode::from_u16(status).unwrap(), body).into_response();
            if let Some(after) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", after.parse().unwrap());
            }
            return response;
        }
        Some(Turn::Reply {
            text,
            tool_calls,
            chunk_delay,
        }) => (render(&text, &tool_calls, true), chunk_delay),
        Some(Turn::Disconnect { text }) => (render(&text, &[], false), Duration::ZERO),
        Some(Turn::Malformed) => {
            let mut events = render(&["Hel".to_string()], &[], false);
            events.push(if anthropic {
                "event: content_block_delta\ndata: {not json\n\n".into()
            } else {
                "data: {not json\n\n".into()
            });
            (events, Duration::ZERO)
        }
    };
    let stream = futures::stream::iter(events).then(move |event| async move {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Ok::<_, std::convert::Infallible>(event)
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

impl ScriptedLlm {
    pub async fn start() -> ScriptedLlm {
        let shared = Shared::default();
        let app = Router::new()
            .route(
                "/v1/messages",
                post(
                    |State(s): State<Shared>, h: HeaderMap, axum::Json(b): axum::Json<Value>| {
                        respond(s, "/v1/messages", h, b)
                    },
                ),
            )
            .route(
                "/v1/chat/completions",
                post(
                    |State(s): State<Shared>, h: HeaderMap, axum::Json(b): axum::Json<Value>| {
                        respond(s, "/v1/chat/completions", h, b)
                    },
                ),
            )
            .route(
                "/v1/models",
                axum::routing::get(|| async {
                    axum::Json(json!({"object": "list", "data": [
                        {"id": "scripted", "object": "model"},
                        {"id": "scripted-vision", "object": "model"},
                    ]}))
                }),
            )
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        ScriptedLlm {
            port,
            shared,
            _server: server,
        }
    }

    /// From now on, refuse prompts longer than `tokens` (by [`prompt_tokens`]) as real APIs do.
    pub fn set_context_window(&self, tokens: Option<u32>) {
        *self.shared.context_window.lock().unwrap() = tokens;
    }

    pub fn push(&self, turn: Turn) {
        self.shared.turns.lock().unwrap().push_back(turn);
    }

    /// A turn for the next request whose system prompt contains `marker` (a sub-agent's name):
    /// such requests take only these turns, never the common script's.
    pub fn push_for(&self, marker: &str, turn: Turn) {
        self.shared
            .keyed
            .lock()
            .unwrap()
            .entry(marker.to_string())
            .or_default()
            .push_back(turn);
    }

    /// Base URL for the Anthropic provider (it appends `/v1/messages`).
    pub fn anthropic_base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Base URL for OpenAI-compatible providers (they append `/chat/completions`).
    pub fn openai_base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Every request received: path, headers, JSON body.
    pub fn requests(&self) -> Vec<(String, HeaderMap, Value)> {
        self.shared.requests.lock().unwrap().clone()
    }
}
