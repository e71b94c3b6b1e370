//! `task`: the model hands a piece of work to a sub-agent — a conversation of its own, with its
//! own instructions and context, under a profile no wider than its parent's — and gets its
//! final answer back. Its calls go through the same review as every call, as
//! `agent:<parent>/<name>`; taint flows down at its start and back up at its end.

use crate::{Agent, AgentEvent, ConversationSettings, Part, Role};
use cowork_contract::{ToolContext, ToolError, ToolResult, tools};
use cowork_core::ToolProfile;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// The tool's name: never offered to a sub-agent (a sub-agent does not start sub-agents).
pub const TASK: &str = "task";

/// Sub-agents running at once, across the app: each is a model stream and its calls.
const AT_ONCE: usize = 3;

/// Makes the agent a sub-agent runs on (the app's, as the settings say now).
pub type AgentSource = Arc<dyn Fn() -> Result<Agent, String> + Send + Sync>;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskInput {
    /// A short name for the sub-agent, shown to the person (e.g. "flight research").
    pub name: String,
    /// The whole task: the sub-agent sees nothing of this conversation but this.
    pub prompt: String,
    /// A named tool profile that narrows the sub-agent's tools further; it never has more
    /// than this conversation.
    #[serde(default)]
    pub profile: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct TaskCall {
    pub tool: String,
    pub ok: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct TaskOutput {
    pub name: String,
    /// The sub-agent's own conversation (the window shows it folded under the call).
    pub conversation: String,
    /// The profile it ran under.
    pub profile: String,
    /// Its final answer: all that is handed back.
    pub answer: String,
    pub steps: u32,
    pub calls: Vec<TaskCall>,
}

fn answer_text(output: &TaskOutput) -> String {
    format!(
        "[sub-agent «{}»: {} step(s), {} call(s)]\n{}",
        output.name,
        output.steps,
        output.calls.len(),
        output.answer
    )
}

/// The provider of `task`.
#[derive(Clone)]
pub struct SubAgents {
    source: AgentSource,
    running: Arc<tokio::sync::Semaphore>,
}

impl SubAgents {
    pub fn new(source: AgentSource) -> SubAgents {
        SubAgents {
            source,
            running: Arc::new(tokio::sync::Semaphore::new(AT_ONCE)),
        }
    }
}

#[tools(list = sub_agent_tools)]
impl SubAgents {
    #[tool(name = "task", title = "Hand work to a sub-agent", category = "agent", read_only,
           timeout = Duration::from_secs(30 * 60), text = answer_text,
           description = "Run a sub-agent on a self-contained task (research, a search across files, a draft) with its own context, and get its final answer back. It sees only `prompt`, so say everything it needs. Several can run at once. `profile` narrows its tools.")]
    async fn task(&self, input: &TaskInput, ctx: &ToolContext) -> ToolResult<TaskOutput> {
        let agent = (self.source)().map_err(ToolError::failed)?;
        let name = display_name(&input.name);
        let child = agent
            .start_sub_agent(&ctx.conversation_id, &name, input.profile.as_deref())
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let _turn = tokio::select! {
            permit = self.running.acquire() => permit.map_err(|_| ToolError::failed("shutting down"))?,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let run = async {
            let tx = tx;
            agent
                .send(
                    &child.conversation,
                    &input.prompt,
                    &tx,
                    ctx.cancel.child_token(),
                )
                .await
        };
        let mut calls = Vec::new();
        let (ran, ()) = tokio::join!(run, async {
            while let Some(event) = rx.recv().await {
                follow(&event, &name, &mut calls, ctx);
            }
        });
        // Whatever the sub-agent read reaches its parent through its words: taint goes back
        // up before they do, whether it finished or not.
        agent
            .hand_back(&child.conversation, &ctx.conversation_id, &name)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let steps =
            ran.map_err(|e| ToolError::failed(format!("the sub-agent «{name}» stopped: {e}")))?;
        Ok(TaskOutput {
            answer: agent.last_answer(&child.conversation),
            name,
            conversation: child.conversation,
            profile: child.profile,
            steps,
            calls,
        })
    }
}

/// The person sees the sub-agent's calls as the task's progress.
fn follow(event: &AgentEvent, name: &str, calls: &mut Vec<TaskCall>, ctx: &ToolContext) {
    if let AgentEvent::ToolCallFinished { name: tool, ok, .. } = event {
        calls.push(TaskCall {
            tool: tool.clone(),
            ok: *ok,
        });
        let how = if *ok { "done" } else { "not done" };
        ctx.report_progress(
            calls.len() as f64,
            None,
            Some(format!("«{name}»: {tool} {how}")),
        );
    }
}

/// The model's name for a sub-agent, as the person and the audit read it: letters, digits,
/// spaces, `-` and `_`, at most 40 characters (it is part of the caller `agent:<parent>/<name>`,
/// so never a `/`).
fn display_name(given: &str) -> String {
    let kept: String = given
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .take(40)
        .collect();
    match kept.trim() {
        "" => "helper".into(),
        name => name.to_string(),
    }
}

/// A sub-agent's conversation, made and ready to run.
pub(crate) struct Child {
    pub conversation: String,
    pub profile: String,
}

impl Agent {
    /// Makes the conversation of sub-agent `name` under `parent`: its instructions, its profile
    /// (the parent's, narrowed by `profile` when named, never with `task`, under the parent's
    /// mode), and the parent's taint and words judged as they are in the parent.
    pub(crate) fn start_sub_agent(
        &self,
        parent: &str,
        name: &str,
        profile: Option<&str>,
    ) -> Result<Child, crate::AgentError> {
        let store = crate::AgentError::Store;
        // A sub-agent belongs to a chat, which the person can open: another program's session
        // (`cowork mcp serve`) or a bare `cowork call` has none, and no model of its own here.
        if self.conversations.title(parent).map_err(store)?.is_none() {
            return Err(crate::AgentError::Invalid(format!(
                "a sub-agent runs inside a chat, and {parent} is not one: start it from the window or `cowork chat`"
            )));
        }
        let own = self.conversations.settings(parent).map_err(store)?;
        if own.sub_agent.is_some() {
            return Err(crate::AgentError::Invalid(
                "a sub-agent does not start sub-agents: do the work with your own tools".into(),
            ));
        }
        let persona = own
            .persona
            .as_ref()
            .and_then(|p| self.config.personas.iter().find(|x| &x.name == p));
        let outer = self
            .profile_for(&own, persona)?
            .map(|p| (*p).clone())
            .unwrap_or_else(|| ToolProfile::any("this conversation's"));
        let mut fixed = match profile {
            Some(named) => self.named_profile(named)?.within(&outer),
            None => outer,
        };
        let mode = self.scheduler.policy().mode_for(parent);
        fixed.mode = Some(fixed.mode.map_or(mode, |m| m.narrower(mode)));
        let all = self.scheduler.registry().list();
        let fixed = fixed.without(
            crate::subagent::TASK,
            all.into_iter().map(|t| t.spec.name.clone()),
        );
        let conversation = uuid::Uuid::new_v4().to_string();
        let settings = ConversationSettings {
            system: Some(instructions(name)),
            fixed_profile: Some(fixed.clone()),
            sub_agent: Some(name.to_string()),
            ..ConversationSettings::default()
        };
        self.conversations
            .create_child(
                &conversation,
                parent,
                &format!("Sub-agent «{name}»"),
                &settings,
            )
            .map_err(store)?;
        self.scheduler
            .policy()
            .start_sub_conversation(&conversation, parent)
            .map_err(|e| store(e.to_string()))?;
        Ok(Child {
            conversation,
            profile: fixed.name,
        })
    }

    /// The sub-agent's conversation is done: what tainted it taints its parent.
    pub(crate) fn hand_back(
        &self,
        child: &str,
        parent: &str,
        name: &str,
    ) -> Result<(), crate::AgentError> {
        let policy = self.scheduler.policy();
        match policy.tainted_by(child) {
            Some(source) => policy
                .mark_tainted(parent, &format!("sub-agent «{name}» (it read {source})"))
                .map_err(|e| crate::AgentError::Store(e.to_string())),
            None => Ok(()),
        }
    }

    /// The last words the model said in a conversation.
    pub(crate) fn last_answer(&self, conversation: &str) -> String {
        let messages = self
            .conversations
            .messages(conversation)
            .unwrap_or_default();
        messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| {
                m.parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }
}

fn instructions(name: &str) -> String {
    format!(
        "You are «{name}», a sub-agent of Cowork doing one task for another assistant. You see nothing of its conversation: the task you are given is all you have. Use the tools offered when they help. Finish with your findings in full — your last message is all that is handed back."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sub_agents_name_is_plain_words_without_a_slash() {
        assert_eq!(display_name("flight research"), "flight research");
        assert_eq!(display_name("a/b\u{202e}c\n"), "abc");
        assert_eq!(display_name("///"), "helper");
        assert_eq!(display_name(&"x".repeat(100)).len(), 40);
    }
}
