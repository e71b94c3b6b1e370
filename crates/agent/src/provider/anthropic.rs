//! Anthropic Messages API (`POST {base}/v1/messages`, streamed).

use super::{
    ChatRequest, Decoder, EventStream, Http, ImageData, Part, Provider, ProviderError, Role,
    StopReason, StreamEvent, Usage, model_ids, parse_arguments,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use tokio_util::sync::CancellationToken;

pub struct Anthropic {
    base_url: String,
    api_key: String,
    http: Http,
}

impl Anthropic {
    /// `base_url` without the `/v1` suffix, e.g. `https://api.anthropic.com`.
    pub fn new(base_url: &str, api_key: &str) -> Anthropic {
        Anthropic {
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: api_key.to_string(),
            http: Http::new("anthropic"),
        }
    }

    fn headers(&self) -> [(&'static str, String); 2] {
        [
            ("x-api-key", self.api_key.clone()),
            ("anthropic-version", "2023-06-01".to_string()),
        ]
    }

    pub fn body(request: &ChatRequest) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| {
                let content: Vec<Value> = m
                    .parts
                    .iter()
                    .map(|p| match p {
                        Part::Text { text } => json!({"type": "text", "text": text}),
                        Part::Image { image, .. } => image_block(image),
                        Part::File { .. } => json!({"type": "text", "text": super::file_text(p)}),
                        Part::ToolUse { id, name, input } => json!({"type": "tool_use", "id": id, "name": name, "input": input}),
                        Part::ToolResult { tool_use_id, content, is_error, images, .. } => {
                            let content = if images.is_empty() {
                                json!(content)
                            } else {
                                let mut blocks = vec![json!({"type": "text", "text": content})];
                                blocks.extend(images.iter().map(image_block));
                                json!(blocks)
                            };
                            json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error})
                        }
                    })
                    .collect();
                json!({"role": match m.role { Role::User => "user", Role::Assistant => "assistant" }, "content": content})
            })
            .collect();
        let mut tools: Vec<Value> = request.tools.iter().map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema})).collect();
        let mut messages = messages;
        // Prompt caching: the tool list and system prompt repeat on every step of a turn, and
        // each step's history is the previous one plus a little, so three breakpoints (tools,
        // system, the newest message) let the API reuse nearly the whole prefix. Prefixes below
        // the model's minimum are simply not cached; the markers cost nothing.
        let ephemeral = json!({"type": "ephemeral"});
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral.clone();
        }
        if let Some(block) = messages
            .last_mut()
            .and_then(|m| m["content"].as_array_mut())
            .and_then(|c| c.last_mut())
        {
            block["cache_control"] = ephemeral.clone();
        }
        let mut body = json!({"model": request.model, "max_tokens": request.max_tokens, "stream": true, "messages": messages});
        if !request.system.is_empty() {
            body["system"] =
                json!([{"type": "text", "text": request.system, "cache_control": ephemeral}]);
        }
        if !tools.is_empty() {
            body["tools"] = json!(tools);
        }
        body
    }
}

fn image_block(image: &ImageData) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data_base64}})
}

#[derive(Default)]
struct AnthropicDecoder {
    /// content block index → (tool id, tool name, argument JSON so far)
    tools: HashMap<u64, (String, String, String)>,
    stop: Option<StopReason>,
    usage: Option<Usage>,
}

impl AnthropicDecoder {
    fn malformed(&self, message: String) -> ProviderError {
        ProviderError::Malformed {
            provider: "anthropic".into(),
            message,
        }
    }

    /// The prompt's tokens: fresh, written to the cache and read from it.
    fn on_message_start(&mut self, data: &Value) {
        let u = &data["message"]["usage"];
        let count = |k: &str| u[k].as_u64().unwrap_or(0) as u32;
        self.usage = Some(Usage {
            input_tokens: count("input_tokens")
                + count("cache_creation_input_tokens")
                + count("cache_read_input_tokens"),
            output_tokens: count("output_tokens"),
        });
    }

    fn on_tool_use_start(
        &mut self,
        data: &Value,
        index: u64,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        let block = &data["content_block"];
        let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
            return Err(self.malformed("tool_use block without id or name".into()));
        };
        self.tools
            .insert(index, (id.to_string(), name.to_string(), String::new()));
        Ok(vec![StreamEvent::ToolCallStarting {
            name: name.to_string(),
        }])
    }

    /// Words, or a piece of a tool call's arguments (kept until its block stops).
    fn on_block_delta(
        &mut self,
        data: &Value,
        index: u64,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        match data["delta"]["type"].as_str() {
            Some("text_delta") => Ok(vec![StreamEvent::TextDelta(
                data["delta"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )]),
            Some("input_json_delta") => {
                let Some(tool) = self.tools.get_mut(&index) else {
                    return Err(self.malformed(format!("argument delta for unknown block {index}")));
                };
                tool.2
                    .push_str(data["delta"]["partial_json"].as_str().unwrap_or_default());
                Ok(vec![])
            }
            _ => Ok(vec![]),
        }
    }

    /// A tool call's block stopped: its arguments are complete.
    fn on_block_stop(&mut self, index: u64) -> Result<Vec<StreamEvent>, ProviderError> {
        match self.tools.remove(&index) {
            Some((id, name, json)) => {
                let input = parse_arguments("anthropic", &name, &json)?;
                Ok(vec![StreamEvent::ToolCall { id, name, input }])
            }
            None => Ok(vec![]),
        }
    }

    /// The answer's own tokens and why it stopped.
    fn on_message_delta(&mut self, data: &Value) {
        if let Some(out) = data["usage"]["output_tokens"].as_u64() {
            self.usage.get_or_insert_default().output_tokens = out as u32;
        }
        self.stop = Some(match data["delta"]["stop_reason"].as_str() {
            Some("end_turn") | Some("stop_sequence") => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens") => StopReason::MaxTokens,
            _ => StopReason::Other,
        });
    }
}

impl Decoder for AnthropicDecoder {
    fn provider(&self) -> &str {
        "anthropic"
    }

    fn on_event(
        &mut self,
        event: &eventsource_stream::Event,
    ) -> Result<Vec<StreamEvent>, ProviderError> {
        if event.event == "ping" {
            return Ok(vec![]);
        }
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| self.malformed(format!("{} event is not JSON: {e}", event.event)))?;
        let index = data["index"].as_u64().unwrap_or(0);
        match data["type"].as_str().unwrap_or(event.event.as_str()) {
            "message_start" => {
                self.on_message_start(&data);
                Ok(vec![])
            }
            "content_block_start" if data["content_block"]["type"] == "tool_use" => {
                self.on_tool_use_start(&data, index)
            }
            "content_block_delta" => self.on_block_delta(&data, index),
            "content_block_stop" => self.on_block_stop(index),
            "message_delta" => {
                self.on_message_delta(&data);
                Ok(vec![])
            }
            "message_stop" => Ok(vec![StreamEvent::Done {
                stop: self.stop.unwrap_or(StopReason::EndTurn),
                usage: self.usage,
            }]),
            "error" => Err(ProviderError::Stream {
                provider: "anthropic".into(),
                message: data["error"]["message"]
                    .as_str()
                    .unwrap_or("unknown error")
                    .to_string(),
            }),
            _ => Ok(vec![]),
        }
    }

    fn on_end(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        Ok(vec![])
    }
}

#[async_trait::async_trait]
impl Provider for Anthropic {
    fn name(&self) -> &str {
        "anthropic"
    }

    async fn models(&self) -> Result<Vec<String>, ProviderError> {
        let list = self
            .http
            .get_json(
                &format!("{}/v1/models?limit=1000", self.base_url),
                &self.headers(),
            )
            .await?;
        Ok(model_ids(&list))
    }

    async fn stream(
        &self,
        request: &ChatRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ProviderError> {
        let url = format!("{}/v1/messages", self.base_url);
        let body = Self::body(request);
        self.http
            .stream(
                &url,
                &self.headers(),
                &body,
                AnthropicDecoder::default(),
                cancel,
            )
            .await
    }
}
