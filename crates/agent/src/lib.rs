//! The agent: a conversation turn with an LLM, where every tool call the model asks for goes
//! through `Scheduler::call_batch` (parallel calls: read-only ones run together), results flow
//! back to the model, and every message is persisted.

mod compaction;
mod conversations;
pub mod tokens;

pub mod provider;
mod schema;
pub mod subagent;

/// The most bytes of a tool's structured output kept for the window's cards: above it, the
/// card shows the text (a long page is read as text anyway).
pub const CARD_DATA_MAX: usize = 64 * 1024;

/// This crate's tables, for the store (the app composes every owner's).
pub use schema::SCHEMA;

pub use conversations::{
    Compaction, ConversationSettings, ConversationSummary, Conversations, ThreadMessage, TurnUsage,
};
use provider::EventStream;
pub use provider::{
    ChatRequest, ImageData, Message, Part, Provider, ProviderError, Role, StopReason, StreamEvent,
    ToolDef, Usage,
};

use cowork_core::{CallOutcome, CallRequest, Caller, Scheduler, ToolProfile};
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
    /// The default tool profile (least privilege): only what it allows is offered, and the
    /// review denies the rest. None = every tool, any mode.
    pub profile: Option<ToolProfile>,
    /// Named profiles a conversation, persona or sub-agent can run under.
    pub profiles: Vec<ToolProfile>,
    /// Before each turn, recall this many memories from the vault (`search_vault`, reviewed
    /// like any call) and give them to the model. None = off (the default).
    pub recall: Option<usize>,
    /// Effects the person approved up front for this agent's calls (a schedule's grant).
    pub granted: Option<Arc<[cowork_contract::Effect]>>,
    /// Allow rules the person gave for this run only (`cowork chat --allow`).
    pub run_grants: Option<Arc<[cowork_core::policy::Rule]>>,
    /// Nobody is there (a scheduled prompt): an ask outside the grant suspends the call as a
    /// task waiting for the person.
    pub unattended: bool,
    /// The model sees images (attachments, screenshots); otherwise each becomes a note.
    pub vision: bool,
    /// The model's context window in tokens: older turns are compacted before it fills.
    pub context_window: u32,
    /// Dollars per million tokens, by model id (the cost shown per turn).
    pub prices: std::collections::HashMap<String, Price>,
    /// Saved system prompts a conversation can pick by name.
    pub personas: Vec<Persona>,
    /// The tools whose definitions every request carries when tools are deferred (the
    /// default): the rest are listed by name and loaded through `tool_search` when needed.
    pub core_tools: Vec<String>,
    /// Values kept home (a stored password, a card, a credential-shaped token) reach the model
    /// only as placeholders (`«secret:1»`; see `cowork_core::placeholders`). Off only for a
    /// model server on this computer the person chose to show them to.
    pub keep_secrets_home: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Deserialize, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

#[derive(Clone, Debug, PartialEq, serde::Deserialize, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Persona {
    pub name: String,
    pub system: String,
    /// The named tool profile its conversations run under, unless they choose another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            model: String::new(),
            system: "You are Cowork, a careful desktop assistant. Use tools when they help; say what you did.".into(),
            max_steps: 8,
            max_tokens: 4096,
            max_tool_result_chars: 20_000,
            profile: None,
            profiles: vec![],
            recall: None,
            granted: None,
            run_grants: None,
            unattended: false,
            vision: true,
            context_window: 128_000,
            prices: Default::default(),
            personas: vec![],
            core_tools: vec![],
            keep_secrets_home: true,
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
        /// See `Part::ToolResult::app`.
        #[serde(skip_serializing_if = "Option::is_none")]
        app: Option<cowork_contract::AppView>,
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
    /// What a model call of this turn used (one per step).
    Usage {
        usage: TurnUsage,
    },
    /// Older turns are being summarized (the context window is filling, or the person asked).
    Compacting,
    Compacted {
        compaction: Compaction,
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
    /// The message to edit or regenerate is not one that can be (named in the text).
    #[error("{0}")]
    Invalid(String),
}

/// What the person can do about a failed turn; the window offers it as a button.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Remedy {
    /// Ask again (a passing failure: a rate limit, a broken stream, a server error).
    Retry,
    /// Fix the provider's settings first (a key, an address, a model name).
    OpenSettings,
}

impl AgentError {
    pub fn remedy(&self) -> Option<Remedy> {
        use ProviderError as P;
        match self {
            AgentError::Provider(P::Auth { .. } | P::Network { .. }) => Some(Remedy::OpenSettings),
            AgentError::Provider(P::Http { status, .. }) if *status < 500 => {
                Some(Remedy::OpenSettings)
            }
            AgentError::Provider(
                P::Http { .. } | P::RateLimited { .. } | P::Stream { .. } | P::Malformed { .. },
            )
            | AgentError::MaxSteps(_) => Some(Remedy::Retry),
            _ => None,
        }
    }
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

    /// Calls of this agent's turns are also allowed by `rules` (checked by
    /// [`cowork_core::PolicyBridge::run_grant`]), for as long as this agent runs.
    pub fn with_run_grants(mut self, rules: Vec<cowork_core::policy::Rule>) -> Agent {
        self.config.run_grants = (!rules.is_empty()).then(|| Arc::from(rules));
        self
    }

    /// The provider this agent talks to (its model list).
    pub fn provider(&self) -> &Arc<dyn Provider> {
        &self.provider
    }

    pub fn conversations(&self) -> &Conversations {
        &self.conversations
    }

    /// A named profile, or an error naming the fix: a profile that is not there never means
    /// "no profile".
    pub fn named_profile(&self, name: &str) -> Result<&ToolProfile, AgentError> {
        self.config
            .profiles
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| {
                AgentError::Invalid(format!(
                    "the tool profile «{name}» is not defined — add it in Settings → Profiles, or choose another"
                ))
            })
    }

    /// The profile a conversation runs under: its fixed one (a sub-agent's), else the one it
    /// chose, else its persona's, else the default.
    fn profile_for(
        &self,
        own: &ConversationSettings,
        persona: Option<&Persona>,
    ) -> Result<Option<Arc<ToolProfile>>, AgentError> {
        if let Some(fixed) = &own.fixed_profile {
            return Ok(Some(Arc::new(fixed.clone())));
        }
        let chosen = own
            .profile
            .as_deref()
            .or_else(|| persona.and_then(|p| p.profile.as_deref()));
        Ok(match chosen {
            Some(name) => Some(Arc::new(self.named_profile(name)?.clone())),
            None => self.config.profile.clone().map(Arc::new),
        })
    }

    /// Who a conversation's calls are made by: the chat, or the sub-agent whose work it is.
    fn caller_for(
        &self,
        conversation: &str,
        own: &ConversationSettings,
    ) -> Result<Caller, AgentError> {
        let Some(name) = &own.sub_agent else {
            return Ok(Caller::Chat);
        };
        let parent = self
            .conversations
            .parent(conversation)
            .map_err(AgentError::Store)?
            .ok_or_else(|| {
                AgentError::Invalid(format!(
                    "sub-agent conversation {conversation} has no parent"
                ))
            })?;
        Ok(Caller::sub_agent(&parent, name))
    }

    /// What this conversation's turns use: the model, the system prompt and the tools'
    /// loading, its own settings over the app's.
    fn turn(&self, conversation: &str) -> Result<Turn, AgentError> {
        let own = self
            .conversations
            .settings(conversation)
            .map_err(AgentError::Store)?;
        let persona = own
            .persona
            .as_ref()
            .and_then(|name| self.config.personas.iter().find(|p| &p.name == name));
        Ok(Turn {
            profile: self.profile_for(&own, persona)?,
            caller: self.caller_for(conversation, &own)?,
            model: own
                .model
                .clone()
                .unwrap_or_else(|| self.config.model.clone()),
            system: own
                .system
                .clone()
                .or_else(|| persona.map(|p| p.system.clone()))
                .unwrap_or_else(|| self.config.system.clone()),
            all_tools: own.all_tools,
        })
    }

    /// The tool definitions a request carries, and (when deferring) the index of the others
    /// for the system prompt. Deferring keeps the core set, `tool_search` and what the model
    /// loaded through it; everything else is one name in the index.
    fn tools(&self, conversation: &str, turn: &Turn) -> Result<(Vec<ToolDef>, String), AgentError> {
        let loaded = self
            .conversations
            .loaded_tools(conversation)
            .map_err(AgentError::Store)?;
        let registry = self.scheduler.registry();
        let offered =
            |spec: &cowork_contract::ToolSpec| turn.profile.as_ref().is_none_or(|p| p.offers(spec));
        let def = |t: &cowork_core::ToolInfo| ToolDef {
            name: t.spec.name.clone(),
            description: t.spec.description.clone(),
            input_schema: t.spec.input_schema.clone(),
        };
        let mut all: Vec<cowork_core::ToolInfo> = registry
            .visible(&loaded)
            .into_iter()
            .filter(|t| offered(&t.spec))
            .collect();
        all.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        let all: Vec<ToolDef> = all.iter().map(def).collect();
        // Deferring needs `tool_search` (a profile may leave it out), and pays only when the
        // definitions are more than a small model can spare.
        let can_defer = registry.get(TOOL_SEARCH).is_some_and(|t| offered(&t.spec));
        if turn.all_tools || !can_defer || tokens::tools(&all) <= DEFER_ABOVE_TOKENS {
            return Ok((all, String::new()));
        }
        let mut defs = Vec::new();
        let mut index: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for t in registry.list() {
            let name = &t.spec.name;
            if !offered(&t.spec) {
                continue;
            }
            let full = name == TOOL_SEARCH
                || loaded.contains(name)
                || self.config.core_tools.iter().any(|c| c == name);
            if full {
                defs.push(def(&t));
            } else {
                index
                    .entry(t.spec.category.clone())
                    .or_default()
                    .push(name.clone());
            }
        }
        defs.sort_by(|a, b| a.name.cmp(&b.name));
        let mut text = format!(
            "More tools exist than are defined here. To use one, first load it with {TOOL_SEARCH} (query `select:name1,name2`, or keywords when unsure), then call it. By category:"
        );
        for (category, mut names) in index {
            names.sort();
            text.push_str(&format!("\n- {category}: {}", names.join(", ")));
        }
        Ok((defs, text))
    }

    /// The system prompt with the memories `search_vault` finds for `text`. The search is a
    /// tool call like any other (reviewed, audited, subject to the profile's tools); when it
    /// fails the turn goes on without memories.
    async fn recall(
        &self,
        conversation: &str,
        system: &str,
        text: &str,
        k: usize,
        turn: &Turn,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> String {
        let mut request = CallRequest::new(
            "search_vault",
            serde_json::json!({"query": text, "k": k}),
            turn.caller.clone(),
            conversation,
        );
        request.profile = turn.profile.clone();
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
            return system.to_string();
        }
        let _ = events.send(AgentEvent::Recalled {
            call_id: outcome.call_id.clone(),
            memories: memories.clone(),
        });
        let mut system = format!(
            "{system}\n\nFrom the person's vault (long-term memory), possibly relevant to this message. Use them only if they help, and cite the ones you use as [memory: title]:"
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
        self.send_parts(
            conversation,
            vec![Part::Text {
                text: text.to_string(),
            }],
            events,
            cancel,
        )
        .await
    }

    /// A turn whose message carries attachments (text, files, images) as well as words.
    pub async fn send_parts(
        &self,
        conversation: &str,
        parts: Vec<Part>,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<u32, AgentError> {
        let title: String = title_of(&parts).chars().take(60).collect();
        self.conversations
            .ensure(conversation, &title)
            .map_err(AgentError::Store)?;
        self.say_and_answer(conversation, parts, events, cancel)
            .await
    }

    /// The person's message joins the branch shown, and the model answers it.
    async fn say_and_answer(
        &self,
        conversation: &str,
        parts: Vec<Part>,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<u32, AgentError> {
        // The person's own words steer calls as theirs (provenance); attachments are content,
        // and one a server wrote taints the conversation it is sent in.
        let policy = self.scheduler.policy();
        // In a sub-agent's conversation every word is its parent model's: none steers as the
        // person's.
        let person_speaks = self
            .conversations
            .settings(conversation)
            .map_err(AgentError::Store)?
            .sub_agent
            .is_none();
        for part in &parts {
            match part {
                Part::Text { text } if person_speaks => {
                    if let Err(e) = policy.person_said(conversation, text) {
                        // Not recorded: values from it ask as untrusted ones would — the safe side.
                        tracing::warn!("recording the person's words for provenance: {e}");
                    }
                }
                Part::File {
                    untrusted_from: Some(source),
                    ..
                } => policy
                    .mark_tainted(conversation, source)
                    .map_err(|e| AgentError::Store(e.to_string()))?,
                _ => {}
            }
        }
        self.conversations
            .append(
                conversation,
                &Message {
                    role: Role::User,
                    parts,
                },
            )
            .map_err(AgentError::Store)?;
        self.answer(conversation, events, cancel).await
    }

    /// The person rewrote one of their messages: the new text becomes a sibling of it (the
    /// old branch stays, switchable) and the model answers it.
    pub async fn edit(
        &self,
        conversation: &str,
        message: i64,
        parts: Vec<Part>,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<u32, AgentError> {
        let Some((Role::User, parent, old)) = self
            .conversations
            .message(conversation, message)
            .map_err(AgentError::Store)?
        else {
            return Err(AgentError::Invalid(format!(
                "message {message} is not one of the person's messages in this conversation — edit a message you wrote"
            )));
        };
        if !is_person_turn(&old) {
            return Err(AgentError::Invalid(format!(
                "message {message} holds tool results, not the person's words — edit a message you wrote"
            )));
        }
        self.conversations
            .set_head(conversation, parent)
            .map_err(AgentError::Store)?;
        self.say_and_answer(conversation, parts, events, cancel)
            .await
    }

    /// Answers again the person's message that `message` (any message of that turn) answered:
    /// the new answer is a sibling of the old one, which stays switchable.
    pub async fn regenerate(
        &self,
        conversation: &str,
        message: i64,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<u32, AgentError> {
        let path = self
            .conversations
            .path(conversation)
            .map_err(AgentError::Store)?;
        let start = path
            .iter()
            .position(|(id, _)| *id == message)
            .and_then(|at| {
                path[..=at]
                    .iter()
                    .rev()
                    .find(|(_, m)| m.role == Role::User && is_person_turn(&m.parts))
            })
            .map(|(id, _)| *id)
            .ok_or_else(|| {
                AgentError::Invalid(format!(
                    "message {message} is not on the branch shown — switch to its branch first"
                ))
            })?;
        self.conversations
            .set_head(conversation, Some(start))
            .map_err(AgentError::Store)?;
        self.answer(conversation, events, cancel).await
    }

    /// The model's answer to the person's message at the head (with memories, if on).
    async fn answer(
        &self,
        conversation: &str,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<u32, AgentError> {
        let turn = self.turn(conversation)?;
        let system = match self.config.recall {
            Some(k) => {
                let asked = self
                    .conversations
                    .messages(conversation)
                    .map_err(AgentError::Store)?
                    .last()
                    .map(|m| title_of(&m.parts))
                    .unwrap_or_default();
                self.recall(conversation, &turn.system, &asked, k, &turn, events)
                    .await
            }
            None => turn.system.clone(),
        };
        self.run_steps(conversation, &turn, &system, events, cancel)
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
        let messages = self
            .conversations
            .messages(conversation)
            .map_err(AgentError::Store)?;
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
                images: vec![],
                app: None,
            }],
        };
        self.conversations
            .append(conversation, &call)
            .map_err(AgentError::Store)?;
        self.conversations
            .append(conversation, &result)
            .map_err(AgentError::Store)?;
        let _ = events.send(AgentEvent::Resumed {
            suspension: resumed.suspension.clone(),
            tool: resumed.tool.clone(),
        });
        let turn = self.turn(conversation)?;
        self.run_steps(conversation, &turn, &turn.system, events, cancel)
            .await
            .map(Some)
    }

    /// The branch shown, and the compactions that summarize its older turns.
    fn branch(&self, conversation: &str) -> Result<Branch, AgentError> {
        let path = self.conversations.path(conversation);
        let path = path.map_err(AgentError::Store)?;
        let compactions = self.conversations.compactions(conversation);
        Ok((path, compactions.map_err(AgentError::Store)?))
    }

    /// The request for the next step: the branch shown (from the newest compaction's summary
    /// on), images as notes for a model without vision, and the tools — veiled (values kept
    /// home as their placeholders) before anything else is done with it (cut, estimated, sent).
    fn request(
        &self,
        conversation: &str,
        turn: &Turn,
        system: &str,
    ) -> Result<ChatRequest, AgentError> {
        let (path, compactions) = self.branch(conversation)?;
        let mut messages = compaction::apply(path, &compactions);
        if !self.config.vision {
            messages = messages.iter().map(Message::without_images).collect();
        }
        let (tools, index) = self.tools(conversation, turn)?;
        let system = if index.is_empty() {
            system.to_string()
        } else {
            format!("{system}\n\n{index}")
        };
        self.veiled(
            conversation,
            ChatRequest {
                model: turn.model.clone(),
                system,
                messages,
                tools,
                max_tokens: self.config.max_tokens,
            },
        )
    }

    /// The request as the model may see it — every request to the provider is made by
    /// `request` or by compaction, both through here:
    /// values kept home become their placeholders, in what tools returned and files hold, and
    /// credential-shaped tokens wherever they are (the person's and the model's own words are
    /// not searched for kept values, which they hold only by coincidence: a site's name).
    fn veiled(
        &self,
        conversation: &str,
        mut request: ChatRequest,
    ) -> Result<ChatRequest, AgentError> {
        // The messages first: veiling them reloads what other conversations and processes kept
        // since, which the system prompt (recalled memories) may hold too.
        self.veil_messages(conversation, request.messages.iter_mut())?;
        if self.config.keep_secrets_home {
            request.system = (self.scheduler.policy().placeholders())
                .veil(conversation, &request.system, true)
                .map_err(|e| AgentError::Store(e.to_string()))?;
        }
        Ok(request)
    }

    /// `messages` veiled as [`Agent::veiled`] says (nothing, for a model the person lets see
    /// the values).
    fn veil_messages<'m>(
        &self,
        conversation: &str,
        messages: impl Iterator<Item = &'m mut Message>,
    ) -> Result<(), AgentError> {
        if !self.config.keep_secrets_home {
            return Ok(());
        }
        let kept = self.scheduler.policy().placeholders();
        let store =
            |e: cowork_core::placeholders::PlaceholderError| AgentError::Store(e.to_string());
        kept.refresh(conversation).map_err(store)?;
        let veil = |text: &str, values: bool| kept.veil(conversation, text, values).map_err(store);
        for message in messages {
            for part in &mut message.parts {
                match part {
                    Part::Text { text } => *text = veil(text, false)?,
                    Part::File { text, .. } => *text = veil(text, true)?,
                    Part::ToolResult { content, .. } => *content = veil(content, true)?,
                    Part::ToolUse { input, .. } => {
                        *input = kept.veil_json(conversation, input, false).map_err(store)?
                    }
                    Part::Image { .. } => {}
                }
            }
        }
        Ok(())
    }

    /// The prompt tokens a request will take, corrected by what the provider reported last.
    fn estimate(&self, conversation: &str, request: &ChatRequest) -> usize {
        let ratio = self
            .conversations
            .token_ratio(conversation)
            .ok()
            .flatten()
            .unwrap_or(1.0);
        (tokens::request(request) as f64 * ratio).ceil() as usize
    }

    /// How many prompt tokens a request may take: the window less the answer's room and a
    /// margin for the estimate's error.
    fn prompt_budget(&self) -> usize {
        let window = self.config.context_window as usize;
        window.saturating_sub(self.config.max_tokens as usize) * 9 / 10
    }

    /// Summarizes older turns now (the person asked): all but the newest turn.
    pub async fn compact(
        &self,
        conversation: &str,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<Option<Compaction>, AgentError> {
        let turn = self.turn(conversation)?;
        self.compact_keeping(conversation, &turn, 0, events, cancel)
            .await
    }

    /// One model call that summarizes the turns before the newest ones that fit in `keep`
    /// tokens (at least the newest turn stays as it is). `None`: nothing older to summarize.
    async fn compact_keeping(
        &self,
        conversation: &str,
        turn: &Turn,
        keep: usize,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<Option<Compaction>, AgentError> {
        let (mut path, earlier) = self.branch(conversation)?;
        // Veiled before the transcript clips long results: a value cut in two no longer matches.
        self.veil_messages(conversation, path.iter_mut().map(|(_, m)| m))?;
        let Some(plan) = compaction::plan(&path, &earlier, keep) else {
            return Ok(None);
        };
        let _ = events.send(AgentEvent::Compacting);
        let before = self.estimate(
            conversation,
            &self.request(conversation, turn, &turn.system)?,
        );
        // The summary must fit the window with room for its own answer (a quarter of a small
        // window at most).
        let summary_tokens = compaction::SUMMARY_TOKENS.min(self.config.context_window / 4);
        let room = (self.config.context_window as usize)
            .saturating_sub(summary_tokens as usize + tokens::text(compaction::INSTRUCTIONS) + 64)
            .max(256);
        let request = ChatRequest {
            model: turn.model.clone(),
            system: compaction::INSTRUCTIONS.to_string(),
            messages: vec![Message::user_text(&plan.transcript(room))],
            tools: vec![],
            max_tokens: summary_tokens,
        };
        let request = self.veiled(conversation, request)?;
        let mut stream = self.provider.stream(&request, cancel.clone()).await?;
        let mut summary = String::new();
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta(delta) => summary.push_str(&delta),
                StreamEvent::Done { .. } => break,
                StreamEvent::ToolCall { .. } | StreamEvent::ToolCallStarting { .. } => {}
            }
        }
        let mut compaction = Compaction {
            id: 0,
            upto: plan.upto,
            summary: summary.trim().to_string(),
            messages: plan.messages,
            tokens_before: before as u32,
            tokens_after: 0,
            created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        };
        let mut all = earlier;
        all.push(compaction.clone());
        let after = compaction::apply(
            self.conversations
                .path(conversation)
                .map_err(AgentError::Store)?,
            &all,
        );
        compaction.tokens_after = self.estimate(
            conversation,
            &ChatRequest {
                messages: after,
                ..self.request(conversation, turn, &turn.system)?
            },
        ) as u32;
        compaction.id = self
            .conversations
            .add_compaction(conversation, &compaction)
            .map_err(AgentError::Store)?;
        let _ = events.send(AgentEvent::Compacted {
            compaction: compaction.clone(),
        });
        Ok(Some(compaction))
    }

    /// The request for the next step, within the context window: older turns are compacted
    /// when it would not fit, and if even the newest turn is too long, its oldest long tool
    /// results are cut in the request (the stored ones stay whole).
    async fn fitted_request(
        &self,
        conversation: &str,
        turn: &Turn,
        system: &str,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Result<ChatRequest, AgentError> {
        let budget = self.prompt_budget();
        let mut request = self.request(conversation, turn, system)?;
        if self.estimate(conversation, &request) <= budget {
            return Ok(request);
        }
        // Keep the newest turns that fill about a third of the window verbatim.
        if self
            .compact_keeping(conversation, turn, budget / 3, events, cancel.clone())
            .await?
            .is_some()
        {
            request = self.request(conversation, turn, system)?;
        }
        let ratio =
            self.estimate(conversation, &request) as f64 / tokens::request(&request).max(1) as f64;
        compaction::cut_tool_results(&mut request, (budget as f64 / ratio) as usize);
        Ok(request)
    }

    /// The model ↔ tools loop on the conversation as stored, until the model stops asking for
    /// tools (or `max_steps`).
    async fn run_steps(
        &self,
        conversation: &str,
        turn: &Turn,
        system: &str,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<u32, AgentError> {
        // The tools served from elsewhere (toolpacks) are there before the model is offered any.
        self.scheduler.find_tools(None).await;
        for step in 1..=self.config.max_steps {
            let (request, stream) = self
                .open_stream(conversation, turn, system, events, &cancel)
                .await?;
            let estimated = tokens::request(&request);
            let offered: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
            let registry = self.scheduler.registry();
            // Nothing starts for a call while every tool is paused (the emergency stop).
            let paused = *self.scheduler.paused().borrow();
            let warm_up = |name: &str| {
                if offered.contains(&name) && !paused {
                    registry.warm_up(name);
                }
            };
            let (reply, ending) = collect_reply(stream, events, warm_up).await;
            let used = match ending {
                Ok(used) => used,
                Err(e) => return Err(self.interrupted(conversation, &reply.text, e)),
            };
            let usage = used.map(|u| self.turn_usage(conversation, turn, u, estimated));
            if let Some(usage) = usage {
                let _ = events.send(AgentEvent::Usage { usage });
            }
            self.append_reply(conversation, &reply, usage.as_ref())?;
            if reply.calls.is_empty() {
                self.scheduler.turn_ended(conversation).await;
                let _ = events.send(AgentEvent::Finished { steps: step });
                return Ok(step);
            }
            let results = self
                .run_calls(conversation, &reply.calls, turn, &cancel, events)
                .await?;
            self.conversations
                .append(
                    conversation,
                    &Message {
                        role: Role::User,
                        parts: results,
                    },
                )
                .map_err(AgentError::Store)?;
            if cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
        }
        Err(AgentError::MaxSteps(self.config.max_steps))
    }

    /// The next step's request, fitted to the window, and the model's stream answering it.
    async fn open_stream(
        &self,
        conversation: &str,
        turn: &Turn,
        system: &str,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> Result<(ChatRequest, EventStream), AgentError> {
        let mut request = self
            .fitted_request(conversation, turn, system, events, cancel)
            .await?;
        let stream = match self.provider.stream(&request, cancel.clone()).await {
            Err(overflow @ ProviderError::ContextOverflow { .. }) => {
                // Our estimate was short of the provider's count: compact what can be,
                // cut the rest harder, and try once more — if that changed anything.
                let compacted = self
                    .compact_keeping(
                        conversation,
                        turn,
                        self.prompt_budget() / 4,
                        events,
                        cancel.clone(),
                    )
                    .await?
                    .is_some();
                request = self.request(conversation, turn, system)?;
                let cut = compaction::cut_tool_results(&mut request, self.prompt_budget() / 2);
                if !compacted && !cut {
                    return Err(overflow.into());
                }
                self.provider.stream(&request, cancel.clone()).await?
            }
            other => other?,
        };
        Ok((request, stream))
    }

    /// The stream broke off (or the person stopped it): what was said before the break is
    /// kept, marked, so the person sees it.
    fn interrupted(&self, conversation: &str, said: &str, e: ProviderError) -> AgentError {
        if !said.is_empty() {
            let note = if e == ProviderError::Cancelled {
                "[stopped]"
            } else {
                "[interrupted]"
            };
            let partial = Message {
                role: Role::Assistant,
                parts: vec![Part::Text {
                    text: format!("{said}\n\n{note}"),
                }],
            };
            if let Err(e) = self.conversations.append(conversation, &partial) {
                return AgentError::Store(e);
            }
        }
        if e == ProviderError::Cancelled {
            AgentError::Cancelled
        } else {
            e.into()
        }
    }

    /// What a step used, with its cost; the provider's count also corrects our estimate of
    /// the next requests' tokens.
    fn turn_usage(&self, conversation: &str, turn: &Turn, u: Usage, estimated: usize) -> TurnUsage {
        if u.input_tokens > 0 && estimated > 0 {
            let _ = self
                .conversations
                .set_token_ratio(conversation, u.input_tokens as f64 / estimated as f64);
        }
        let cost = self.config.prices.get(&turn.model).map(|p| {
            (u.input_tokens as f64 * p.input_per_mtok + u.output_tokens as f64 * p.output_per_mtok)
                / 1e6
        });
        TurnUsage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cost_usd: cost,
        }
    }

    /// The model's message joins the conversation: its words and the calls it asked for.
    fn append_reply(
        &self,
        conversation: &str,
        reply: &Reply,
        usage: Option<&TurnUsage>,
    ) -> Result<(), AgentError> {
        let mut parts = Vec::new();
        if !reply.text.is_empty() {
            parts.push(Part::Text {
                text: reply.text.clone(),
            });
        }
        parts.extend(reply.calls.iter().map(|c| Part::ToolUse {
            id: c.id.clone(),
            name: c.name.clone(),
            input: c.input.clone(),
        }));
        if parts.is_empty() {
            parts.push(Part::Text {
                text: String::new(),
            });
        }
        let message = Message {
            role: Role::Assistant,
            parts,
        };
        self.conversations
            .append_with_usage(conversation, &message, usage)
            .map_err(AgentError::Store)?;
        Ok(())
    }

    /// Runs the calls the model asked for through the scheduler (which reviews each one), and
    /// returns their results for the model, in the order asked.
    async fn run_calls(
        &self,
        conversation: &str,
        calls: &[ToolCall],
        turn: &Turn,
        cancel: &CancellationToken,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> Result<Vec<Part>, AgentError> {
        let requests = calls
            .iter()
            .map(|call| {
                let mut req = CallRequest::new(
                    &call.name,
                    call.input.clone(),
                    turn.caller.clone(),
                    conversation,
                );
                req.cancel = cancel.child_token();
                req.profile = turn.profile.clone();
                req.caller_ref = Some(call.id.clone());
                req.granted = self.config.granted.clone();
                req.run_grants = self.config.run_grants.clone();
                req.unattended = self.config.unattended;
                req
            })
            .collect();
        let outcomes = self.scheduler.call_batch(requests).await;
        let mut results = Vec::new();
        for (call, outcome) in calls.iter().zip(outcomes) {
            results.push(self.tool_result(conversation, call, outcome, events)?);
        }
        Ok(results)
    }

    /// One finished call: the window is told, and the model gets its result (cut to
    /// `max_tool_result_chars`).
    fn tool_result(
        &self,
        conversation: &str,
        call: &ToolCall,
        outcome: CallOutcome,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) -> Result<Part, AgentError> {
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
                .map_err(AgentError::Store)?;
        }
        // Never cut inside a value kept home: its first half would reach the model unhidden.
        let limit = self
            .scheduler
            .policy()
            .placeholders()
            .cut_point(conversation, &content, self.config.max_tool_result_chars)
            .map_err(|e| AgentError::Store(e.to_string()))?;
        let content = truncate(content, limit);
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
        let shown = outcome
            .result
            .as_ref()
            .map(|o| o.images())
            .unwrap_or_default();
        let app = outcome.result.as_ref().ok().and_then(|o| o.app.clone());
        let _ = events.send(AgentEvent::ToolCallFinished {
            id: call.id.clone(),
            name: call.name.clone(),
            call_id: outcome.call_id.clone(),
            ok,
            suspended: suspended.clone(),
            result: content.clone(),
            images: shown.clone(),
            structured: structured.clone(),
            duration_ms: outcome.duration.as_millis() as u64,
            app: app.clone(),
        });
        Ok(Part::ToolResult {
            tool_use_id: call.id.clone(),
            content,
            is_error: !ok,
            suspended,
            structured,
            images: images_for_model(&shown),
            app,
        })
    }
}

/// A tool call the model asked for.
struct ToolCall {
    id: String,
    name: String,
    input: serde_json::Value,
}

/// What the model said in one step: its words and the calls it asked for.
#[derive(Default)]
struct Reply {
    text: String,
    calls: Vec<ToolCall>,
}

/// Reads one step's stream to its end, passing words and calls on to the window as they come,
/// and each call's tool to `warm_up` as soon as it is named. The ending is what the step used,
/// or why the stream broke off.
async fn collect_reply(
    mut stream: EventStream,
    events: &mpsc::UnboundedSender<AgentEvent>,
    warm_up: impl Fn(&str),
) -> (Reply, Result<Option<Usage>, ProviderError>) {
    let mut reply = Reply::default();
    while let Some(event) = stream.next().await {
        match event {
            Ok(StreamEvent::TextDelta(delta)) => {
                reply.text.push_str(&delta);
                let _ = events.send(AgentEvent::TextDelta { text: delta });
            }
            Ok(StreamEvent::ToolCallStarting { name }) => warm_up(&name),
            Ok(StreamEvent::ToolCall { id, name, input }) => {
                let _ = events.send(AgentEvent::ToolCallRequested {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                });
                reply.calls.push(ToolCall { id, name, input });
            }
            Ok(StreamEvent::Done { usage, .. }) => return (reply, Ok(usage)),
            Err(e) => return (reply, Err(e)),
        }
    }
    (reply, Ok(None))
}

/// The tool `tool_search`, which deferring always offers.
const TOOL_SEARCH: &str = "tool_search";

/// Below this many tokens of definitions every tool is sent (deferring would save little).
const DEFER_ABOVE_TOKENS: usize = 2_000;

/// The most image bytes (base64) of one tool result a model gets: a few screenshots.
const TOOL_IMAGES_MAX: usize = 4 * 1024 * 1024;

/// A tool's raster images as the model gets them, within `TOOL_IMAGES_MAX`.
fn images_for_model(content: &[cowork_contract::Content]) -> Vec<ImageData> {
    let mut left = TOOL_IMAGES_MAX;
    content
        .iter()
        .filter_map(|c| match c {
            cowork_contract::Content::Image {
                mime_type,
                data_base64,
            } if ["image/png", "image/jpeg", "image/webp", "image/gif"]
                .contains(&mime_type.as_str()) =>
            {
                (data_base64.len() <= left).then(|| {
                    left -= data_base64.len();
                    ImageData {
                        media_type: mime_type.clone(),
                        data_base64: data_base64.clone(),
                    }
                })
            }
            _ => None,
        })
        .collect()
}

/// The branch shown (message ids and messages, oldest first) and the compactions that
/// summarize its older turns.
type Branch = (Vec<(i64, Message)>, Vec<Compaction>);

/// What one conversation's turns use.
struct Turn {
    model: String,
    system: String,
    all_tools: bool,
    /// What the conversation may use (see [`Agent::profile_for`]).
    profile: Option<Arc<ToolProfile>>,
    /// Who its calls are made by.
    caller: Caller,
}

/// A message the person wrote (not one carrying tool results back).
pub(crate) fn is_person_turn(parts: &[Part]) -> bool {
    !parts.iter().any(|p| matches!(p, Part::ToolResult { .. }))
}

/// A message's words (or its first attachment's name), for titles and recall.
pub fn title_of(parts: &[Part]) -> String {
    parts
        .iter()
        .find_map(|p| match p {
            Part::Text { text } if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        })
        .or_else(|| {
            parts.iter().find_map(|p| match p {
                Part::File { name, .. } => Some(name.clone()),
                Part::Image { name, .. } => name.clone(),
                _ => None,
            })
        })
        .unwrap_or_default()
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
