//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`, streamed): OpenAI,
//! Ollama, DeepSeek, Qwen/DashScope, LM Studio, llama.cpp server.

use super::{
    ChatRequest, Decoder, EventStream, Http, ImageData, Message, Part, Provider, ProviderError,
    Role, StopReason, StreamEvent, Usage, file_text, model_ids, parse_arguments, sorted_names,
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

    fn headers(&self) -> Vec<(&'static str, String)> {
        if self.api_key.is_empty() {
            vec![]
        } else {
            vec![("authorization", format!("Bearer {}", self.api_key))]
        }
    }

    pub fn body(request: &ChatRequest) -> Value {
        let mut messages = Vec::new();
        if !request.system.is_empty() {
            messages.push(json!({"role": "system", "content": request.system}));
        }
        for m in &request.messages {
            match m.role {
                Role::Assistant => messages.push(assistant_message(m)),
                Role::User => {
                    tool_result_messages(m, &mut messages);
                    messages.extend(user_message(m));
                }
            }
        }
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
            .collect();
        // `include_usage`: the last chunk says what the call used (tokens per turn, and the
        // correction of our token estimate).
        let mut body = json!({"model": request.model, "stream": true, "stream_options": {"include_usage": true}, "max_tokens": request.max_tokens, "messages": messages});
        if !tools.is_empty() {
            body["tools"] = json!(tools);
        }
        body
    }
}

/// The model's message: its words, and the calls it asked for as `tool_calls`.
fn assistant_message(m: &Message) -> Value {
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
    msg
}

/// Tool results are messages of their own in this API, and carry only text: a result's images
/// follow in a user message that names the call.
fn tool_result_messages(m: &Message, messages: &mut Vec<Value>) {
    let mut tool_images = Vec::new();
    for p in &m.parts {
        if let Part::ToolResult {
            tool_use_id,
            content,
            images,
            ..
        } = p
        {
            messages.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
            if !images.is_empty() {
                tool_images.push(json!({"type": "text", "text": format!("[the images tool call {tool_use_id} returned]")}));
                tool_images.extend(images.iter().map(image_url));
            }
        }
    }
    if !tool_images.is_empty() {
        messages.push(json!({"role": "user", "content": tool_images}));
    }
}

/// The person's words and attachments: blocks when an image is among them, else plain text
/// (None when there is nothing but tool results).
fn user_message(m: &Message) -> Option<Value> {
    let has_image = m.parts.iter().any(|p| matches!(p, Part::Image { .. }));
    if has_image {
        let content: Vec<Value> = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(json!({"type": "text", "text": text})),
                Part::File { .. } => Some(json!({"type": "text", "text": file_text(p)})),
                Part::Image { image, .. } => Some(image_url(image)),
                _ => None,
            })
            .collect();
        return Some(json!({"role": "user", "content": content}));
    }
    let text: Vec<String> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.clone()),
            Part::File { .. } => Some(file_text(p)),
            _ => None,
        })
        .collect();
    (!text.is_empty()).then(|| json!({"role": "user", "content": text.join("\n")}))
}

fn image_url(image: &ImageData) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", image.media_type, image.data_base64)}})
}

struct OpenAiDecoder {
    provider: String,
    /// tool call index → (id, name, arguments so far)
    calls: BTreeMap<u64, (String, String, String)>,
    finish: Option<StopReason>,
    usage: Option<Usage>,
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
            usage: self.usage.take(),
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
        if let Some(usage) = data.get("usage").filter(|u| u.is_object()) {
            let count = |k: &str| usage[k].as_u64().unwrap_or(0) as u32;
            self.usage = Some(Usage {
                input_tokens: count("prompt_tokens"),
                output_tokens: count("completion_tokens"),
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
                // The name is whole once arguments come (it may arrive in pieces before).
                if entry.2.is_empty() && !args.is_empty() && !entry.1.is_empty() {
                    events.push(StreamEvent::ToolCallStarting {
                        name: entry.1.clone(),
                    });
                }
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

    async fn models(&self) -> Result<Vec<String>, ProviderError> {
        let listed = self
            .http
            .get_json(&format!("{}/models", self.base_url), &self.headers())
            .await;
        match listed {
            Ok(list) => Ok(model_ids(&list)),
            // Ollama before its OpenAI-compatible list: its own, beside `/v1`.
            Err(first) => {
                let Some(root) = self.base_url.strip_suffix("/v1") else {
                    return Err(first);
                };
                let tags = self
                    .http
                    .get_json(&format!("{root}/api/tags"), &self.headers())
                    .await
                    .map_err(|_| first)?;
                Ok(sorted_names(&tags, "models", "name"))
            }
        }
    }

    async fn stream(
        &self,
        request: &ChatRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ProviderError> {
        let url = format!("{}/chat/completions", self.base_url);
        let decoder = OpenAiDecoder {
            provider: self.name.clone(),
            calls: BTreeMap::new(),
            finish: None,
            usage: None,
        };
        let body = Self::body(request);
        self.http
            .stream(&url, &self.headers(), &body, decoder, cancel)
            .await
    }
}
