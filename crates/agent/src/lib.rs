//! The agent: a conversation turn with an LLM, where every tool call the model asks for goes
//! through `Scheduler::call_batch` (parallel calls: read-only ones run together), results flow
//! back to the model, and every message is persisted.

mod conversations;

pub mod provider;
mod schema;

/// The most bytes of a tool's structured output kept for the window's cards: above it, the
/// card shows the text (a long page is read as text anyway).
pub const CARD_DATA_MAX: usize = 64 * 1024;

/// This crate's tables, for the store (the app composes every owner's).
pub use schema::SCHEMA;

pub use conversations::{ConversationSummary, Conversations};
pub use provider::{
    ChatRequest, Message, Part, Provider, ProviderError, Role, StopReason, StreamEvent, ToolDef,
};

use cowork_core::{CallRequest, Caller, Scheduler};
use futures::StreamExt;
use serde::Serialize;
use std::sync::Arc;
use thiserror::Error;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Debug)]
pub struct AgentConfig {
    pub model: String,
    pub system: String,
    /// Model round trips per turn before the agent stops and says so.
    pub max_steps: u32,
    pub max_tokens: u32,
    /// Tool results longer than this are cut, with a note the model can act on.
    pub max_tool_result_chars: usize,
    /// The profile: only these tools are offered (and any other is denied). None = all visible.
    pub allowed_tools: Option<Vec<String>>,
    /// Before each turn, recall this many memories from the vault (`search_vault`, reviewed
    /// like any call) and give them to the model. None = off (the default).
    pub recall: Option<usize>,
    /// Effects the person approved up front for this agent's calls (a schedule's grant).
    pub granted: Option<Arc<[cowork_contract::Effect]>>,
    /// Nobody is there (a scheduled prompt): an ask outside the grant suspends the call as a
    /// task waiting for the person.
    pub unattended: bool,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            model: String::new(),
            system: "You are Cowork, a careful desktop assistant. Use tools when they help; say what you did.".into(),
            max_steps: 8,
            max_tokens: 4096,
            max_tool_result_chars: 20_000,
            allowed_tools: None,
            recall: None,
            granted: None,
            unattended: false,
        }
    }
}

/// What the window (or a test) sees while a turn runs.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    TextDelta {
        text: String,
    },
    ToolCallRequested {
        id: String,
        name: String,
        input: serde_json::Value,
    },
    /// `images` are the result's image blocks (a screenshot), for the window only: the model
    /// gets the text.
    ToolCallFinished {
        id: String,
        name: String,
        call_id: String,
        ok: bool,
        /// The suspension it waits on, when it stopped for the person (see `Part::ToolResult`).
        #[serde(skip_serializing_if = "Option::is_none")]
        suspended: Option<String>,
        result: String,
        images: Vec<cowork_contract::Content>,
        /// See `Part::ToolResult::structured`.
        #[serde(skip_serializing_if = "Option::is_none")]
        structured: Option<serde_json::Value>,
        duration_ms: u64,
    },
    /// Memories recalled for this turn, shown with the person's message.
    Recalled {
        call_id: String,
        memories: Vec<Recalled>,
    },
    /// The turn goes on after a suspended call of it (`tool`) finished: a new stretch of the
    /// conversation begins.
    Resumed {
        suspension: String,
        tool: String,
    },
    Finished {
        steps: u32,
    },
}

/// A suspended call that ran again and finished (`Agent::continue_after_resume`).
#[derive(Clone, Debug)]
pub struct ResumedCall {
    pub suspension: String,
    pub tool: String,
    pub args: serde_json::Value,
    pub ok: bool,
    /// Its text result (or error).
    pub result: String,
}

/// One memory the model was given.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Recalled {
    pub id: String,
    pub title: String,
    pub kind: String,
    pub snippet: String,
}

#[derive(Debug, Error)]
pub enum AgentError {
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(
        "stopped after {0} model steps without a final answer — ask again to continue, or raise max steps in the profile"
    )]
    MaxSteps(u32),
    #[error("stopped")]
    Cancelled,
    #[error("{0}")]
    Store(String),
}

pub struct Agent {
    scheduler: Arc<Scheduler>,
    provider: Arc<dyn Provider>,
    conversations: Conversations,
    config: AgentConfig,
}

fn truncate(text: String, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text;
    }
    let kept: String = text.chars().take(limit).collect();
    let total = text.chars().count();
    format!(
        "{kept}\n[truncated: showing {limit} of {total} characters — ask the tool for a narrower range (offset/limit, filters) to see the rest]"
    )
}

impl Agent {
    pub fn new(
        scheduler: Arc<Scheduler>,
        provider: Arc<dyn Provider>,
        conversations: Conversations,
        config: AgentConfig,
    ) -> Agent {
        Agent {
            scheduler,
            provider,
            conversations,
            config,
        }
    }

    pub fn conversations(&self) -> &Conversations {
        &self.conversations
    }

    fn tools(&self, conversation: &str) -> Result<Vec<ToolDef>, AgentError> {
        let loaded = self
            .conversations
            .loaded_tools(conversation)
            .map_err(AgentError::Store)?;
        Ok(self
            .scheduler
            .registry()
            .visible(&loaded)
            .into_iter()
            .filter(|t| {
                self.config
                    .allowed_tools
                    .as_ref()
                    .is_none_or(|allowed| allowed.contains(&t.spec.name))
            })
            .map(|t| ToolDef {
                name: t.spec.name.clone(),
                description: t.spec.description.clone(),
                input_schema: t.spec.input_schema.clone(),
            })
            .collect())
    }

    /// The system prompt with the memories `search_vault` finds for `text`. The search is a
    /// tool call like any other (reviewed, audited, subject to the profile's tools); when it
    /// fails the turn goes on without memories.
    async fn recall(
        &self,
        conversation: &str,
        text: &str,
        k: usize,
        allowed: Option<Arc<[String]>>,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> String {
        let mut request = CallRequest::new(
            "search_vault",
            serde_json::json!({"query": text, "k": k}),
            Caller::Chat,
            conversation,
        );
        request.allowed_tools = allowed;
        request.caller_ref = Some("recall".into());
        let outcome = self.scheduler.call(request).await;
        let hits = match &outcome.result {
            Ok(output) => output
                .structured
                .as_ref()
                .and_then(|s| s["hits"].as_array().cloned())
                .unwrap_or_default(),
            Err(e) => {
                tracing::warn!("recall: {e}");
                vec![]
            }
        };
        let field = |h: &serde_json::Value, k: &str| h[k].as_str().unwrap_or_default().to_string();
        let memories: Vec<Recalled> = hits
            .iter()
            .map(|h| Recalled {
                id: field(h, "id"),
                title: field(h, "title"),
                kind: field(h, "kind"),
                snippet: field(h, "snippet"),
            })
            .collect();
        if memories.is_empty() {
            return self.config.system.clone();
        }
        let _ = events.send(AgentEvent::Recalled {
            call_id: outcome.call_id.clone(),
            memories: memories.clone(),
        });
        let mut system = format!(
            "{}\n\nFrom the person's vault (long-term memory), possibly relevant to this message. Use them only if they help, and cite the ones you use as [memory: title]:",
            self.config.system
        );
        for m in &memories {
            system.push_str(&format!(
                "\n- {} ({}, id {}): {}",
                m.title,
                m.kind,
                m.id,
                m.snippet.replace("**", "")
            ));
        }
        system
    }

    /// Runs one user turn to its end: streams text, runs tool calls through the scheduler,
    /// loops until the model stops asking for tools (or `max_steps`).
    pub async fn send(
        &self,
        conversation: &str,
        text: &str,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<u32, AgentError> {
        let store = |e: String| AgentError::Store(e);
        let title: String = text.chars().take(60).collect();
        self.conversations
            .ensure(conversation, &title)
            .map_err(store)?;
        self.conversations
            .append(conversation, &Message::user_text(text))
            .map_err(store)?;
        let allowed: Option<Arc<[String]>> = self
            .config
            .allowed_tools
            .as_ref()
            .map(|t| Arc::from(t.clone()));
        let system = match self.config.recall {
            Some(k) => {
                self.recall(conversation, text, k, allowed.clone(), events)
                    .await
            }
            None => self.config.system.clone(),
        };
        self.run_steps(conversation, &system, allowed, events, cancel)
            .await
    }

    /// Picks a turn up again after a call of it that was suspended (a login wall) ran again and
    /// finished: the result goes to the model as that tool's result — never as the person's
    /// words, since it may be untrusted page text — and the model goes on. Returns `None` when
    /// no call in this conversation was answered with that suspension (the palette's calls,
    /// another conversation's), so there is no turn to continue.
    pub async fn continue_after_resume(
        &self,
        conversation: &str,
        resumed: &ResumedCall,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<Option<u32>, AgentError> {
        let store = |e: String| AgentError::Store(e);
        let messages = self.conversations.messages(conversation).map_err(store)?;
        let waited = messages.iter().flat_map(|m| &m.parts).any(|p| {
            matches!(p, Part::ToolResult { suspended: Some(id), .. } if *id == resumed.suspension)
        });
        if !waited {
            return Ok(None);
        }
        // A call and its result as a pair, so every provider's tool-use pairing rule holds.
        let id = format!("resume-{}", resumed.suspension);
        let call = Message {
            role: Role::Assistant,
            parts: vec![Part::ToolUse {
                id: id.clone(),
                name: resumed.tool.clone(),
                input: resumed.args.clone(),
            }],
        };
        let content = truncate(
            format!(
                "[the call that waited for the person went on]\n{}",
                resumed.result
            ),
            self.config.max_tool_result_chars,
        );
        let result = Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                tool_use_id: id,
                content,
                is_error: !resumed.ok,
                suspended: None,
                structured: None,
            }],
        };
        self.conversations
            .append(conversation, &call)
            .map_err(store)?;
        self.conversations
            .append(conversation, &result)
            .map_err(store)?;
        let _ = events.send(AgentEvent::Resumed {
            suspension: resumed.suspension.clone(),
            tool: resumed.tool.clone(),
        });
        let allowed: Option<Arc<[String]>> = self
            .config
            .allowed_tools
            .as_ref()
            .map(|t| Arc::from(t.clone()));
        self.run_steps(conversation, &self.config.system, allowed, events, cancel)
            .await
            .map(Some)
    }

    /// The model ↔ tools loop on the conversation as stored, until the model stops asking for
    /// tools (or `max_steps`).
    async fn run_steps(
        &self,
        conversation: &str,
        system: &str,
        allowed: Option<Arc<[String]>>,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<u32, AgentError> {
        let store = |e: String| AgentError::Store(e);
        for step in 1..=self.config.max_steps {
            let request = ChatRequest {
                model: self.config.model.clone(),
                system: system.to_string(),
                messages: self.conversations.messages(conversation).map_err(store)?,
                tools: self.tools(conversation)?,
                max_tokens: self.config.max_tokens,
            };
            let mut stream = self.provider.stream(&request, cancel.clone()).await?;
            let mut reply = String::new();
            let mut calls = Vec::new();
            let mut failure = None;
            while let Some(event) = stream.next().await {
                match event {
                    Ok(StreamEvent::TextDelta(delta)) => {
                        reply.push_str(&delta);
                        let _ = events.send(AgentEvent::TextDelta { text: delta });
                    }
                    Ok(StreamEvent::ToolCall { id, name, input }) => {
                        let _ = events.send(AgentEvent::ToolCallRequested {
                            id: id.clone(),
                            name: name.clone(),
                            input: input.clone(),
                        });
                        calls.push((id, name, input));
                    }
                    Ok(StreamEvent::Done { .. }) => break,
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = failure {
                // Keep what was said before the break, marked, so the person sees it.
                if !reply.is_empty() {
                    let note = if e == ProviderError::Cancelled {
                        "[stopped]"
                    } else {
                        "[interrupted]"
                    };
                    let partial = Message {
                        role: Role::Assistant,
                        parts: vec![Part::Text {
                            text: format!("{reply}\n\n{note}"),
                        }],
                    };
                    self.conversations
                        .append(conversation, &partial)
                        .map_err(store)?;
                }
                return Err(if e == ProviderError::Cancelled {
                    AgentError::Cancelled
                } else {
                    e.into()
                });
            }

            let mut parts = Vec::new();
            if !reply.is_empty() {
                parts.push(Part::Text { text: reply });
            }
            parts.extend(calls.iter().map(|(id, name, input)| Part::ToolUse {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
            }));
            if parts.is_empty() {
                parts.push(Part::Text {
                    text: String::new(),
                });
            }
            self.conversations
                .append(
                    conversation,
                    &Message {
                        role: Role::Assistant,
                        parts,
                    },
                )
                .map_err(store)?;
            if calls.is_empty() {
                let _ = events.send(AgentEvent::Finished { steps: step });
                return Ok(step);
            }

            let requests = calls
                .iter()
                .map(|(id, name, input)| {
                    let mut req = CallRequest::new(name, input.clone(), Caller::Chat, conversation);
                    req.cancel = cancel.child_token();
                    req.allowed_tools = allowed.clone();
                    req.caller_ref = Some(id.clone());
                    req.granted = self.config.granted.clone();
                    req.unattended = self.config.unattended;
                    req
                })
                .collect();
            let outcomes = self.scheduler.call_batch(requests).await;
            let mut results = Vec::new();
            for ((id, name, _), outcome) in calls.iter().zip(outcomes) {
                let (ok, content) = match &outcome.result {
                    Ok(output) => (true, output.text_content()),
                    Err(e) => (false, e.to_string()),
                };
                // Deferred tools a result reveals (a tool search's finds) become callable here.
                if let Ok(output) = &outcome.result
                    && !output.reveals.is_empty()
                {
                    self.conversations
                        .add_loaded_tools(conversation, &output.reveals)
                        .map_err(store)?;
                }
                let content = truncate(content, self.config.max_tool_result_chars);
                let suspended = match &outcome.result {
                    Err(cowork_contract::ToolError::Suspended { id, .. }) => Some(id.clone()),
                    _ => None,
                };
                let structured = outcome
                    .result
                    .as_ref()
                    .ok()
                    .and_then(|o| o.structured.clone())
                    .filter(|v| v.to_string().len() <= CARD_DATA_MAX);
                let _ = events.send(AgentEvent::ToolCallFinished {
                    id: id.clone(),
                    name: name.clone(),
                    call_id: outcome.call_id.clone(),
                    ok,
                    suspended: suspended.clone(),
                    result: content.clone(),
                    images: outcome
                        .result
                        .as_ref()
                        .map(|o| o.images())
                        .unwrap_or_default(),
                    structured: structured.clone(),
                    duration_ms: outcome.duration.as_millis() as u64,
                });
                results.push(Part::ToolResult {
                    tool_use_id: id.clone(),
                    content,
                    is_error: !ok,
                    suspended,
                    structured,
                });
            }
            self.conversations
                .append(
                    conversation,
                    &Message {
                        role: Role::User,
                        parts: results,
                    },
                )
                .map_err(store)?;
            if cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
        }
        Err(AgentError::MaxSteps(self.config.max_steps))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_results_are_cut_with_an_actionable_note() {
        let out = super::truncate("x".repeat(50), 10);
        assert!(out.starts_with("xxxxxxxxxx\n[truncated: showing 10 of 50"));
        assert_eq!(super::truncate("short".into(), 10), "short");
    }
}
