//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`, streamed): OpenAI,
//! Ollama, DeepSeek, Qwen/DashScope, LM Studio, llama.cpp server.

use super::{
    ChatRequest, Decoder, EventStream, Http, Part, Provider, ProviderError, Role, StopReason,
    StreamEvent, decode, parse_arguments,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tokio_util::sync::CancellationToken;

pub struct OpenAiCompatible {
    name: String,
    base_url: String,
    api_key: String,
    http: Http,
}

impl OpenAiCompatible {
    /// `base_url` including the version path, e.g. `https://api.openai.com/v1` or
    /// `http://127.0.0.1:11434/v1` (Ollama). An empty key sends no Authorization header.
    pub fn new(name: &str, base_url: &str, api_key: &str) -> OpenAiCompatible {
        OpenAiCompatible {
            name: name.to_string(),
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: api_key.to_string(),
            http: Http::new(name),
        }
    }

    pub fn body(request: &ChatRequest) -> Value {
        let mut messages = Vec::new();
        if !request.system.is_empty() {
            messages.push(json!({"role": "system", "content": request.system}));
        }
        for m in &request.messages {
            let text: String = m
                .parts
                .iter()
                .filter_map(|p| {
                    if let Part::Text { text } = p {
                        Some(text.as_str())
                    } else {
                        None
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
            match m.role {
                Role::Assistant => {
                    let calls: Vec<Value> = m
                        .parts
                        .iter()
                        .filter_map(|p| match p {
                            Part::ToolUse { id, name, input } => Some(json!({"id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}})),
                            _ => None,
                        })
                        .collect();
                    let mut msg = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
                    if !calls.is_empty() {
                        msg["tool_calls"] = json!(calls);
                    }
                    messages.push(msg);
                }
                Role::User => {
                    // Tool results are messages of their own in this API.
                    for p in &m.parts {
                        if let Part::ToolResult {
                            tool_use_id,
                            content,
                            ..
                        } = p
                        {
                            messages.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
                        }
                    }
                    if !text.is_empty() {
                        messages.push(json!({"role": "user", "content": text}));
                    }
                }
            }
        }
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
            .collect();
        let mut body = json!({"model": request.model, "stream": true, "max_tokens": request.max_tokens, "messages": messages});
        if !tools.is_empty() {
            body["tools"] = json!(tools);
        }
        body
    }
}

struct OpenAiDecoder {
    provider: String,
    /// tool call index → (id, name, arguments so far)
    calls: BTreeMap<u64, (String, String, String)>,
    finish: Option<StopReason>,
}

impl OpenAiDecoder {
    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        let mut events = Vec::new();
        for (_, (id, name, args)) in std::mem::take(&mut self.calls) {
            let input = parse_arguments(&self.provider, &name, &args)?;
            events.push(StreamEvent::ToolCall { id, name, input });
        }
        events.push(StreamEvent::Done {
            stop: self.finish.take().unwrap_or(StopReason::EndTurn),
        });
        Ok(events)
    }
}

impl Decoder for OpenAiDecoder {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn on_event(
        &mut self,
        event: &eventsource_stream::Event,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        if event.data.trim() == "[DONE]" {
            return self.finish();
        }
        let data: Value =
            serde_json::from_str(&event.data).map_err(|e| ProviderError::Malformed {
                provider: self.provider.clone(),
                message: format!("chunk is not JSON: {e}"),
            })?;
        if let Some(message) = data["error"]["message"].as_str() {
            return Err(ProviderError::Stream {
                provider: self.provider.clone(),
                message: message.to_string(),
            });
        }
        let mut events = Vec::new();
        let Some(choice) = data["choices"].get(0) else {
            return Ok(events);
        };
        if let Some(text) = choice["delta"]["content"]
            .as_str()
            .filter(|t| !t.is_empty())
        {
            events.push(StreamEvent::TextDelta(text.to_string()));
        }
        for call in choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let index = call["index"].as_u64().unwrap_or(0);
            let entry = self.calls.entry(index).or_default();
            if let Some(id) = call["id"].as_str() {
                entry.0 = id.to_string();
            }
            if let Some(name) = call["function"]["name"].as_str() {
                entry.1.push_str(name);
            }
            if let Some(args) = call["function"]["arguments"].as_str() {
                entry.2.push_str(args);
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish = Some(match reason {
                "stop" => StopReason::EndTurn,
                "tool_calls" | "function_call" => StopReason::ToolUse,
                "length" => StopReason::MaxTokens,
                _ => StopReason::Other,
            });
        }
        Ok(events)
    }

    fn on_end(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        // Some servers end after the finish reason without `[DONE]`: that message is complete.
        if self.finish.is_some() {
            self.finish()
        } else {
            Ok(vec![])
        }
    }
}

#[async_trait::async_trait]
impl Provider for OpenAiCompatible {
    fn name(&self) -> &str {
        &self.name
    }

    async fn stream(
        &self,
        request: &ChatRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ProviderError> {
        let url = format!("{}/chat/completions", self.base_url);
        let headers: Vec<(&str, String)> = if self.api_key.is_empty() {
            vec![]
        } else {
            vec![("authorization", format!("Bearer {}", self.api_key))]
        };
        let sse = self
            .http
            .post_sse(&url, &headers, &Self::body(request), &cancel)
            .await?;
        Ok(decode(
            sse,
            OpenAiDecoder {
                provider: self.name.clone(),
                calls: BTreeMap::new(),
                finish: None,
            },
            cancel,
        ))
    }
}
