//! Calls a server runs as tasks (MCP Tasks, SEP-2663): followed until they end, and, when a
//! task outlives the call's timeout, kept as a Cowork task (a suspension) that goes on by
//! itself once the server says the task ended — `cowork tasks` and the window list it, and a
//! Resume follows the same task instead of calling the tool again.
//!
//! What a resume reads back is what this module recorded (`resume_when`, a row only Cowork
//! writes), and it is only followed on the server and tool that recorded it.

use crate::server::McpServer;
use cowork_contract::{Progress, ResumeProbe, SuspendRequest, ToolContext, ToolError};
use rmcp::model::{CallToolResult, GetTaskParams, Task, TaskPayload};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The `resume_when.kind` of a suspension waiting on an MCP task.
pub const TASK_KIND: &str = "mcp_task";

/// How long before the call's deadline a task still running becomes a Cowork task: one poll
/// (`tasks/get`) must fit in it.
const DEADLINE_MARGIN: Duration = Duration::from_millis(750);

/// A suspension waits at most this long for its task (the server's TTL when shorter).
const LONGEST_WAIT: Duration = Duration::from_secs(7 * 86_400);

/// The task a resumed call goes on following: the one this server's `tool` recorded.
pub(crate) fn resumed_task<'a>(
    ctx: &'a ToolContext,
    server: &str,
    tool: &str,
) -> Option<RecordedTask<'a>> {
    let recorded = ctx.resumed.as_ref()?;
    let field = |name: &str| recorded.get(name).and_then(Value::as_str);
    let ours = field("kind")? == TASK_KIND && field("server")? == server && field("tool")? == tool;
    ours.then(|| {
        Some(RecordedTask {
            id: field("task")?,
            process: recorded.get("process").and_then(Value::as_u64),
        })
    })
    .flatten()
}

/// A task as a suspension recorded it: its id, and the server process that runs it (a local
/// server's pid; None over HTTP, where the server outlives our connections).
pub(crate) struct RecordedTask<'a> {
    pub id: &'a str,
    pub process: Option<u64>,
}

/// How long one `tasks/get` may take before the server counts as not answering.
const POLL_LIMIT: Duration = Duration::from_secs(5);

impl McpServer {
    /// A resumed call: the recorded task, asked for again and followed to its end.
    pub(crate) async fn follow_again(
        &self,
        task: RecordedTask<'_>,
        tool: &str,
        ctx: &ToolContext,
    ) -> Result<CallToolResult, ToolError> {
        let gone = |why: String| {
            ToolError::failed(format!(
                "MCP server {} no longer has the task this call waited on ({why}) — call the \
                 tool again",
                self.name()
            ))
        };
        // Another process of the server (it restarted, or this is another Cowork process's) may
        // hold another task under the same id: only the one that was asked is followed.
        let process = self.status().pid.map(u64::from);
        if task.process.is_some() && task.process != process {
            return Err(gone("the server has restarted since".into()));
        }
        let peer = self.peer()?;
        let asked = peer.get_task(GetTaskParams::new(task.id.to_string()));
        let current = match tokio::time::timeout(POLL_LIMIT, asked).await {
            Ok(Ok(current)) => current.task,
            Ok(Err(e)) => return Err(gone(self.service_error(e).to_string())),
            Err(_) => return Err(gone("the server did not answer".into())),
        };
        let guard = TaskGuard::over(&peer, &current);
        match self.ended(current.payload) {
            Some(end) => {
                guard.release_unless_waiting();
                end
            }
            None => {
                guard.release();
                self.follow_task(&peer, current.task, tool, ctx).await
            }
        }
    }

    /// Polls the task until it ends, at the pace the server asks within bounds, each new status
    /// message shown as the call's progress. Dropping the call (stop) cancels the task on the
    /// server; a call whose time is nearly up suspends instead, and the task goes on.
    pub(crate) async fn follow_task(
        &self,
        peer: &Peer<RoleClient>,
        mut task: Task,
        tool: &str,
        ctx: &ToolContext,
    ) -> Result<CallToolResult, ToolError> {
        let mut guard = TaskGuard {
            peer: peer.clone(),
            id: Some(task.task_id.clone()),
            waiting_for_input: false,
        };
        let (mut polls, mut said) = (0u32, None);
        loop {
            if task.status_message.is_some() && task.status_message != said {
                said = task.status_message.clone();
                let message = said.as_deref().map(cowork_contract::text::printable_text);
                (ctx.progress)(Progress {
                    progress: f64::from(polls),
                    total: None,
                    message: message.map(|m| m.into_owned()),
                });
            }
            let pause = Duration::from_millis(task.poll_interval_ms.unwrap_or(1_000))
                .clamp(Duration::from_millis(50), Duration::from_secs(5));
            if ctx.deadline.is_some_and(|d| {
                d.saturating_duration_since(Instant::now()) < pause + DEADLINE_MARGIN
            }) {
                return Err(self.wait_as_cowork_task(&mut guard, &task, tool, ctx));
            }
            tokio::time::sleep(pause).await;
            // A poll that outlasts the call's time would have the call dropped (and the task
            // cancelled): the call waits as a Cowork task instead.
            let limit = ctx.deadline.map_or(POLL_LIMIT, |d| {
                d.saturating_duration_since(Instant::now())
                    .saturating_sub(DEADLINE_MARGIN / 2)
            });
            let asked = peer.get_task(GetTaskParams::new(task.task_id.clone()));
            let current = match tokio::time::timeout(limit, asked).await {
                Ok(answer) => answer.map_err(|e| self.service_error(e))?.task,
                Err(_) if ctx.deadline.is_some() => {
                    return Err(self.wait_as_cowork_task(&mut guard, &task, tool, ctx));
                }
                Err(_) => continue,
            };
            polls += 1;
            guard.waiting_for_input = matches!(current.payload, TaskPayload::InputRequired { .. });
            match self.ended(current.payload) {
                Some(end) => {
                    guard.release_unless_waiting();
                    return end;
                }
                None => task = current.task,
            }
        }
    }

    /// What an ended task gives the call (None: still running). A task asking for input is
    /// treated as ended: answering it (`tasks/update`) is not built, so the guard cancels it
    /// rather than leaving it waiting.
    fn ended(&self, payload: TaskPayload) -> Option<Result<CallToolResult, ToolError>> {
        let ended =
            |why: String| ToolError::failed(format!("MCP server {}: its task {why}", self.name()));
        Some(Err(match payload {
            TaskPayload::Completed { result } => {
                return Some(
                    serde_json::from_value(Value::Object(result))
                        .map_err(|e| ended(format!("ended with a result that is not one ({e})"))),
                );
            }
            TaskPayload::Failed { error } => {
                let why = error.get("message").and_then(Value::as_str).unwrap_or("");
                ended(format!(
                    "failed: {}",
                    cowork_contract::text::printable_text(why)
                ))
            }
            TaskPayload::Cancelled => ended("was cancelled by the server".into()),
            TaskPayload::InputRequired { .. } => {
                ended("asks for input while it runs, which Cowork does not answer yet".into())
            }
            _ => return None,
        }))
    }

    /// The call's time is up but the server is still working: the call ends as a Cowork task
    /// waiting on the server's task, which the guard then leaves running (the error to return;
    /// a plain failure when this caller cannot wait, and then the guard cancels the task).
    fn wait_as_cowork_task(
        &self,
        guard: &mut TaskGuard,
        task: &Task,
        tool: &str,
        ctx: &ToolContext,
    ) -> ToolError {
        let ttl = task.ttl_ms.map(Duration::from_millis);
        let error = ctx.suspend(SuspendRequest {
            reason: format!(
                "the toolpack «{}» is still working on this; its result is picked up when it \
                 is done",
                self.name()
            ),
            resume_when: json!({"kind": TASK_KIND, "server": self.name(), "tool": tool,
                "task": task.task_id, "process": self.status().pid}),
            timeout: ttl.map_or(LONGEST_WAIT, |t| {
                t.clamp(Duration::from_secs(60), LONGEST_WAIT)
            }),
        });
        if matches!(error, ToolError::Suspended { .. }) {
            guard.id = None;
        }
        error
    }

    /// Whether the task has ended (None: cannot tell now — the server is not connected). A
    /// task the server no longer knows counts as ended: the resume then says so.
    pub async fn task_ended(&self, task_id: &str) -> Option<bool> {
        let peer = self.peer().ok()?;
        let asked = peer.get_task(GetTaskParams::new(task_id.to_string()));
        match tokio::time::timeout(POLL_LIMIT, asked).await.ok()? {
            Ok(current) => Some(self.ended(current.task.payload).is_some()),
            Err(rmcp::service::ServiceError::McpError(_)) => Some(true),
            Err(_) => None,
        }
    }
}

/// A task the call no longer follows (stopped, timed out, or it asked for input): cancelled on
/// the server, as dropping a plain call cancels its request.
struct TaskGuard {
    peer: Peer<RoleClient>,
    id: Option<String>,
    /// The task asks for input: ended for the call, but left waiting on the server unless
    /// cancelled.
    waiting_for_input: bool,
}

impl TaskGuard {
    fn over(peer: &Peer<RoleClient>, current: &rmcp::model::DetailedTask) -> TaskGuard {
        TaskGuard {
            peer: peer.clone(),
            id: Some(current.task.task_id.clone()),
            waiting_for_input: matches!(current.payload, TaskPayload::InputRequired { .. }),
        }
    }

    fn release(mut self) {
        self.id = None;
    }

    fn release_unless_waiting(mut self) {
        if !self.waiting_for_input {
            self.id = None;
        }
    }
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let peer = self.peer.clone();
            tokio::spawn(async move {
                let _ = peer
                    .cancel_task(rmcp::model::CancelTaskParams::new(id))
                    .await;
            });
        }
    }
}

/// Lets a suspension waiting on an MCP task go on by itself once the task has ended.
pub struct TaskEnded(pub std::sync::Weak<crate::gateway::McpGateway>);

#[async_trait::async_trait]
impl ResumeProbe for TaskEnded {
    fn kind(&self) -> &str {
        TASK_KIND
    }

    async fn holds(&self, resume_when: &Value) -> bool {
        let field = |name: &str| resume_when.get(name).and_then(Value::as_str);
        let (Some(gateway), Some(server), Some(task)) =
            (self.0.upgrade(), field("server"), field("task"))
        else {
            return false;
        };
        match gateway.server(server) {
            Some(server) => server.task_ended(task).await.unwrap_or(false),
            None => false,
        }
    }
}
