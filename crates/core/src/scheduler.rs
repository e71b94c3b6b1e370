//! The Scheduler: the only way a tool runs. Every call, from every caller, takes this path:
//!
//! resolve → size check → validate input (JSON Schema) → compute effects → PolicyBridge review →
//! ask the Approver if needed → rate limit → intent audit row (effectful calls) → run with
//! timeout, cancellation and retries (idempotent + transient only) → validate output → taint →
//! final audit row → event. A call that fails at any step still gets its final audit row.

use crate::approver::{
    ApprovalChoice, ApprovalRequest, Approver, ElicitationAnswer, ElicitationRequest,
};
use crate::audit::{AuditLog, AuditRecord};
use crate::hooks::{HookEvent, HookVerdict};
use crate::policy::{
    Action, MatchedRule, PolicyBridge, PolicyError, Review, ReviewRequest, RuleSource,
    grant_rules_for,
};
use crate::redact::redact;
use crate::registry::{Handler, Layer, Registry};
use cowork_contract::{
    CancellationToken, DynTool, Effect, EffectEnv, Progress, ToolContext, ToolError, ToolOutput,
    ToolSpec,
};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use serde::Serialize;
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

/// Who is calling: recorded in every audit row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Caller {
    Chat,
    /// The person's own act in the window: what they typed as a slash command or clicked on
    /// what the window shows (apply a change, undo a send, delete a memory). The act is the
    /// approval: an ask is answered by it, on record; a denial stays a denial.
    Person,
    /// A call the person set going again from the window (a waiting task resumed): its
    /// arguments are not theirs, so it is reviewed and asked as the first time.
    Palette,
    Cli,
    Chain,
    /// Another program: a model through `cowork mcp serve` (`mcp:<client>`, the name the person
    /// gave it or the one it declared; see `mcp_serve` in the app), or a toolpack's server asking
    /// the person's model (`mcp-server:<server>`; see `sampling` in the app). Its grants are its
    /// own.
    Mcp(Arc<str>),
    /// A sub-agent the model of a conversation started (`agent:<parent>/<name>`): its words are
    /// that model's, so its calls are judged as the chat's are, in a conversation of its own.
    SubAgent(Arc<str>),
}

impl Caller {
    /// The MCP client `client`: its audit name is `mcp:<client>`.
    pub fn mcp(client: &str) -> Caller {
        Caller::Mcp(Arc::from(format!("mcp:{client}")))
    }

    /// The MCP server `server` asking the person's model: `mcp-server:<server>`.
    pub fn mcp_server(server: &str) -> Caller {
        Caller::Mcp(Arc::from(format!("mcp-server:{server}")))
    }

    /// The MCP App view of toolpack `server` in the window (`mcp-app:<server>`): the view is the
    /// server's code, so what it asks is the server's, never the person's act.
    pub fn mcp_app(server: &str) -> Caller {
        Caller::Mcp(Arc::from(format!("mcp-app:{server}")))
    }

    /// The sub-agent `name` that conversation `parent`'s model started.
    pub fn sub_agent(parent: &str, name: &str) -> Caller {
        Caller::SubAgent(Arc::from(format!("agent:{parent}/{name}")))
    }

    /// The sub-agent's name, for a sub-agent's call.
    pub fn sub_agent_name(&self) -> Option<&str> {
        match self {
            Caller::SubAgent(label) => label.rsplit_once('/').map(|(_, name)| name),
            _ => None,
        }
    }

    /// The server whose view calls, for an MCP App view's call.
    pub fn view_of(&self) -> Option<&str> {
        match self {
            Caller::Mcp(label) => label.strip_prefix("mcp-app:"),
            _ => None,
        }
    }

    /// The app a recorded caller (`as_str`) names, when it is one (`mcp:<app>`).
    pub fn recorded_app(recorded: &str) -> Option<Caller> {
        recorded.strip_prefix("mcp:").map(Caller::mcp)
    }

    /// The MCP client's name, for an MCP client's call.
    pub fn mcp_client(&self) -> Option<&str> {
        match self {
            Caller::Mcp(label) => label.strip_prefix("mcp:"),
            _ => None,
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Caller::Chat => "chat",
            Caller::Person => "person",
            Caller::Palette => "palette",
            Caller::Cli => "cli",
            Caller::Chain => "chain",
            Caller::Mcp(label) | Caller::SubAgent(label) => label,
        }
    }
}

pub struct CallRequest {
    pub tool: String,
    pub args: serde_json::Value,
    pub caller: Caller,
    pub conversation: String,
    /// Workspace roots and home for this call; the scheduler's default when None.
    pub env: Option<EffectEnv>,
    pub cancel: CancellationToken,
    /// Overrides the tool's default timeout.
    pub timeout: Option<Duration>,
    /// The conversation's profile (least privilege): any other tool, effect kind or wider mode
    /// is denied, on record.
    pub profile: Option<Arc<crate::policy::ToolProfile>>,
    /// Allow rules the person gave for this run only (`cowork chat --allow`): judged as this
    /// conversation's grants, never kept.
    pub run_grants: Option<Arc<[crate::policy::Rule]>>,
    /// The caller's own id for this call (the model's tool_use id, a palette card id), echoed
    /// in `ToolEvent::Started` so a UI can tie progress events to what it shows.
    pub caller_ref: Option<String>,
    /// Effects the person approved up front for this call's run (a chain's `explain`, a
    /// schedule's unattended grant): an ask for a call whose effects are all among them is
    /// answered by that approval, on record. Any other effect still asks; deny rules, taint and
    /// ask rules still stand.
    pub granted: Option<Arc<[Effect]>>,
    /// Nobody is there to ask (a scheduled run): an ask the grant does not cover suspends the
    /// call — a task waiting for the person, who resumes it — instead of waiting or denying.
    pub unattended: bool,
    /// Set by a Resume: what the suspended call recorded, passed to the tool as
    /// `ToolContext::resumed` so it can go on where it stopped.
    pub resumed: Option<serde_json::Value>,
}

impl CallRequest {
    pub fn new(tool: &str, args: serde_json::Value, caller: Caller, conversation: &str) -> Self {
        CallRequest {
            tool: tool.to_string(),
            args,
            caller,
            conversation: conversation.to_string(),
            env: None,
            cancel: CancellationToken::new(),
            timeout: None,
            profile: None,
            run_grants: None,
            caller_ref: None,
            granted: None,
            unattended: false,
            resumed: None,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolEvent {
    Started {
        call_id: String,
        tool: String,
        conversation: String,
        caller_ref: Option<String>,
    },
    Progress {
        call_id: String,
        progress: Progress,
    },
    Completed {
        call_id: String,
        tool: String,
        duration_us: u64,
    },
    Failed {
        call_id: String,
        tool: String,
        error_kind: String,
        message: String,
        duration_us: u64,
        /// The caller's own reference, as in `Started`: a call its review stopped never
        /// started, and this ties its failure to what the UI shows for it.
        caller_ref: Option<String>,
    },
}

/// The result of one call: always returned (errors included) with its review and duration.
#[derive(Debug)]
pub struct CallOutcome {
    pub call_id: String,
    /// The canonical name (an alias resolves to its tool).
    pub tool: String,
    pub layer: Option<Layer>,
    pub review: Option<Review>,
    pub approved_by: Option<String>,
    pub result: Result<ToolOutput, ToolError>,
    pub duration: Duration,
    /// Every effect it had was read-only (or it never got as far as having any): nothing in
    /// the world changed, so doing it again is harmless.
    pub read_only: bool,
}

/// What `policy explain` shows: the review a call would get, without running it.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    pub tool: String,
    pub layer: Layer,
    pub effects: Vec<Effect>,
    pub review: Review,
}

#[derive(Clone, Debug)]
pub struct SchedulerConfig {
    /// Larger arguments are refused before anything else happens.
    pub max_args_bytes: usize,
    /// Arguments longer than this are stored truncated (with their hash) in the audit row.
    pub max_audit_args_bytes: usize,
    pub retry_attempts: u32,
    pub retry_base_delay: Duration,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            max_args_bytes: 1 << 20,
            max_audit_args_bytes: 16 << 10,
            retry_attempts: 3,
            retry_base_delay: Duration::from_millis(100),
        }
    }
}

/// How stale another Cowork process's change (a revoked grant, a rule, a settings edit) may be
/// when a call is judged: no person acts in one process and calls from another faster than
/// this, and each call is spared the stats and the read that catching up costs (~5 µs, more
/// with cold caches after a server's round trip). The pause is not throttled.
const CATCH_UP_EVERY: Duration = Duration::from_millis(25);

pub struct Scheduler {
    registry: Arc<Registry>,
    policy: Arc<PolicyBridge>,
    audit: Arc<AuditLog>,
    approver: Arc<dyn Approver>,
    /// Workspace roots and home for calls that bring none (the open workspace can change).
    env: std::sync::RwLock<Arc<EffectEnv>>,
    config: SchedulerConfig,
    events: broadcast::Sender<ToolEvent>,
    limiters: Mutex<HashMap<String, Arc<DefaultDirectRateLimiter>>>,
    /// Where suspended calls are recorded; without it a tool cannot suspend (tests, benches).
    suspensions: std::sync::OnceLock<Arc<crate::suspend::SuspendCoordinator>>,
    /// Families' checks of their own resume conditions, by `resume_when.kind`.
    resume_probes: std::sync::RwLock<Vec<Arc<dyn cowork_contract::ResumeProbe>>>,
    /// Brings tools that are served from elsewhere before they are looked up (see
    /// [`Scheduler::set_tool_finder`]).
    tool_finder: std::sync::OnceLock<ToolFinder>,
    /// The person's "pause all tools" (the tray): while true every call is refused.
    paused: tokio::sync::watch::Sender<bool>,
    /// Cancelled by a pause: every call in flight at that moment stops.
    pause_epoch: Mutex<CancellationToken>,
    /// When a call last took in other processes' changes (see [`CATCH_UP_EVERY`]).
    caught_up: Mutex<Option<Instant>>,
}

/// Where a tool's `ctx.suspend` leaves its suspension's id and request for the scheduler.
type SuspendSlot = Arc<Mutex<Option<(String, cowork_contract::SuspendRequest)>>>;

/// Brings the tools a call may need (see [`Scheduler::find_tools`]); None when they are there
/// already, which must be cheap to tell: it is asked before every call.
pub type ToolFinder = Arc<
    dyn Fn(Option<&str>) -> Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>
        + Send
        + Sync,
>;

/// How far a call got, for the final audit row.
#[derive(Default)]
struct Trail {
    layer: Option<Layer>,
    /// Lower layers the tool replaced: an override is named in every audit row.
    overrides: Vec<Layer>,
    tool: Option<String>,
    effects: Vec<Effect>,
    review: Option<Review>,
    approved_by: Option<String>,
    /// The person (not a rule) approved the call.
    person_approved: bool,
    /// It ran with values kept from the model put in for its placeholders.
    carried: bool,
    secret_args: Vec<String>,
}

/// Everything an audit row says about a call, owned, so that a call's final row can be built on
/// the audit writer's thread instead of the caller's (`AuditLog::append_deferred`).
struct Row {
    at: chrono::DateTime<chrono::Utc>,
    call_id: String,
    phase: &'static str,
    tool: String,
    layer: Option<Layer>,
    overrides: Vec<Layer>,
    caller: Caller,
    conversation: String,
    args: serde_json::Value,
    secret_args: Vec<String>,
    effects: Vec<Effect>,
    /// None: the call never reached review (unknown tool, bad arguments).
    decision: Option<Action>,
    score: Option<u8>,
    rule: Option<MatchedRule>,
    approved_by: Option<String>,
    outcome: Option<&'static str>,
    error: Option<String>,
    duration_us: Option<i64>,
    max_args_bytes: usize,
}

impl Row {
    fn into_record(self) -> AuditRecord {
        let mut args =
            serde_json::to_string(&redact(&self.args, &self.secret_args)).unwrap_or_default();
        if args.len() > self.max_args_bytes {
            use sha2::Digest;
            let digest = hex::encode(sha2::Sha256::digest(args.as_bytes()));
            let mut cut = self.max_args_bytes;
            while !args.is_char_boundary(cut) {
                cut -= 1;
            }
            args = format!(
                "{}…(truncated: {} bytes, sha256 {digest})",
                &args[..cut],
                args.len()
            );
        }
        let layer = self.layer.map(|l| {
            let replaced: Vec<&str> = self.overrides.iter().map(|o| o.as_str()).collect();
            if replaced.is_empty() {
                l.as_str().to_string()
            } else {
                format!("{} (overrides {})", l.as_str(), replaced.join(", "))
            }
        });
        AuditRecord {
            ts: self.at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            call_id: self.call_id,
            phase: self.phase.to_string(),
            tool: self.tool,
            layer,
            caller: self.caller.as_str().to_string(),
            conversation: self.conversation,
            args,
            effects: serde_json::to_string(&self.effects).unwrap_or_default(),
            decision: self
                .decision
                .map(|d| d.as_str())
                .unwrap_or("rejected")
                .to_string(),
            score: self.score.map(i64::from),
            rule: self
                .rule
                .map(|m| format!("{} ({})", m.rule, m.source.as_str())),
            approved_by: self.approved_by,
            outcome: self.outcome.map(str::to_string),
            error: self.error,
            duration_us: self.duration_us,
        }
    }
}

struct CountingWriter(usize);
impl std::io::Write for CountingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

fn format_schema_errors(
    validator: &jsonschema::Validator,
    args: &serde_json::Value,
) -> Option<ToolError> {
    // The common case, valid input, without building the error iterator.
    if validator.is_valid(args) {
        return None;
    }
    let messages: Vec<String> = validator
        .iter_errors(args)
        .take(5)
        .map(|e| {
            let path = e.instance_path().to_string();
            let at = if path.is_empty() {
                "the arguments".to_string()
            } else {
                format!("`{path}`")
            };
            // Masked: the message names the field and the expected type but never echoes the
            // value, which may be a secret in the wrong place (error text lands in the audit row).
            format!("{at}: {}", e.masked())
        })
        .collect();
    (!messages.is_empty()).then(|| ToolError::invalid(messages.join("; ")))
}

/// Stage size: arguments past the limit are refused before anything parses them.
fn check_size(args: &serde_json::Value, limit: usize) -> Result<(), ToolError> {
    let mut counter = CountingWriter(0);
    let _ = serde_json::to_writer(&mut counter, args);
    if counter.0 > limit {
        return Err(ToolError::invalid(format!(
            "the arguments are {} bytes; the limit is {limit} bytes — pass a file path or a smaller piece",
            counter.0
        )));
    }
    Ok(())
}

/// Stage plan, its check: a tool's declared effect kinds decide what may run in parallel and
/// what plan mode lets through, so a call whose effects say otherwise is a family's bug, refused
/// rather than run under the wrong assumptions. (`mcp.call` is the unknown-effect marker a
/// pack's inexact declaration falls back to: always allowed to appear.)
fn check_declared(spec: &ToolSpec, effects: &[Effect]) -> Result<(), ToolError> {
    match effects
        .iter()
        .map(Effect::kind)
        .find(|k| !spec.effects.contains(k) && *k != cowork_contract::EffectKind::McpCall)
    {
        Some(kind) => Err(ToolError::failed(format!(
            "{} returned a `{kind}` effect it does not declare — a bug in its family; its declaration must list every kind it can have",
            spec.name
        ))),
        None => Ok(()),
    }
}

/// Who answered an ask: the person, or nobody (silence, a cancel, a run with no one to ask).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Heard {
    Person,
    Nobody,
}

/// A call as its suspension records it.
fn stopped<'a>(
    req: &'a CallRequest,
    call_id: &'a str,
    tool: &'a str,
) -> crate::suspend::Stopped<'a> {
    crate::suspend::Stopped {
        call_id,
        caller: req.caller.as_str(),
        conversation: &req.conversation,
        tool,
        args: &req.args,
    }
}

/// Why a call the person was asked about did not run, for whoever reads it next: the model
/// hears that the person said no (not a policy's verdict, and nothing about rules it cannot
/// add); a person at the terminal also reads the rule that would let it run without asking.
fn declined_reason(
    caller: &Caller,
    heard: Heard,
    spec: &ToolSpec,
    effects: &[Effect],
    review: &Review,
    by: &str,
) -> String {
    let fix = match grant_rules_for(&spec.name, effects) {
        Some(rules) if review.can_grant && (*caller == Caller::Cli || heard == Heard::Nobody) => {
            format!(
                " — to allow it without asking, add a rule: `cowork policy rules add allow '{}'`",
                rules.join("' '")
            )
        }
        _ => String::new(),
    };
    match (caller, heard) {
        (Caller::Cli, _) | (_, Heard::Nobody) => format!("{} ({by}){fix}", review.why),
        _ => format!(
            "the person said no when asked ({}; {by}) — do not try it another way; ask them what they would like instead",
            review.why
        ),
    }
}

/// Stage approve, its first half: a denial ends the call here (a path outside the workspace is
/// a security violation, anything else a plain denial).
/// What a hook reads of a call on its input, in Claude Code's field names; secrets redacted.
fn hook_input(
    event: HookEvent,
    req: &CallRequest,
    spec: &ToolSpec,
    env: &EffectEnv,
) -> serde_json::Value {
    // Claude Code's argument names beside ours (`file_path` for `path`…), so its scripts read
    // what they expect.
    let mut input = redact(&req.args, &spec.secret_args);
    if let Some(object) = input.as_object_mut() {
        for (theirs, ours) in &spec.arg_aliases {
            if let Some(value) = object.get(ours).cloned() {
                object.entry(theirs.clone()).or_insert(value);
            }
        }
    }
    serde_json::json!({
        "hook_event_name": event.as_str(),
        "session_id": req.conversation,
        "caller": req.caller.as_str(),
        "cwd": env.workspace_roots.first(),
        "tool_name": spec.name,
        "tool_aliases": spec.aliases,
        "tool_input": input,
    })
}

fn refusal(review: &Review) -> Option<ToolError> {
    match review.decision {
        Action::Deny if review.outside_workspace => Some(ToolError::SecurityViolation {
            reason: review.why.clone(),
        }),
        Action::Deny => Some(ToolError::Denied {
            reason: review.why.clone(),
        }),
        Action::Allow | Action::Ask => None,
    }
}

/// Stage output check: structured output must match the tool's declared output schema.
/// Which tool a call runs: the registry's, by the request's name, or one listed nowhere
/// (its handler; None when its schema does not compile).
enum Target {
    Named,
    Unlisted(Option<Arc<Handler>>),
}

fn check_output(handler: &Handler, output: &ToolOutput) -> Result<(), ToolError> {
    let (Some(validator), Some(structured)) = (handler.output(), &output.structured) else {
        return Ok(());
    };
    match format_schema_errors(validator, structured) {
        Some(err) => Err(ToolError::failed(format!(
            "{} returned output that does not match its output schema: {err}",
            handler.info.spec.name
        ))),
        None => Ok(()),
    }
}

/// What came of a question a tool put to the person.
#[derive(Debug)]
pub enum PersonAnswer {
    Answered(ElicitationAnswer),
    /// Nobody could answer (no window or terminal), or nobody did before the ask timeout.
    Nobody,
}

impl Scheduler {
    pub fn new(
        registry: Arc<Registry>,
        policy: Arc<PolicyBridge>,
        audit: Arc<AuditLog>,
        approver: Arc<dyn Approver>,
        env: EffectEnv,
        config: SchedulerConfig,
    ) -> Self {
        let (events, _) = broadcast::channel(1024);
        // The policy judges rules by what their tool does; the registry knows (weakly held:
        // the registry owns providers that may hold the policy).
        let weak = Arc::downgrade(&registry);
        let weak_names = weak.clone();
        policy.set_tool_kinds(
            Arc::new(move |name: &str| {
                weak.upgrade()?
                    .get(name)
                    .map(|info| crate::policy::ToolFacts {
                        kinds: info.spec.effects.clone(),
                        title: info.spec.title.clone(),
                    })
            }),
            Arc::new(move || {
                weak_names.upgrade().map_or_else(Vec::new, |registry| {
                    registry
                        .list()
                        .into_iter()
                        .flat_map(|info| {
                            std::iter::once(info.spec.name.clone()).chain(info.spec.aliases.clone())
                        })
                        .collect()
                })
            }),
        );
        // The families' default rules become the policy's floor (again after every reload).
        let weak_policy = Arc::downgrade(&policy);
        registry.set_on_rules(Arc::new(move |rules| {
            if let Some(policy) = weak_policy.upgrade() {
                policy.set_default_rules(rules);
            }
        }));
        Scheduler {
            registry,
            policy,
            audit,
            approver,
            env: std::sync::RwLock::new(Arc::new(env)),
            config,
            events,
            limiters: Mutex::new(HashMap::new()),
            suspensions: std::sync::OnceLock::new(),
            resume_probes: Default::default(),
            tool_finder: Default::default(),
            paused: tokio::sync::watch::Sender::new(false),
            pause_epoch: Mutex::new(CancellationToken::new()),
            caught_up: Mutex::new(None),
        }
    }

    /// The person pauses every tool: calls in flight stop (audited as `paused`) and new ones are
    /// refused until [`Scheduler::resume_all`].
    /// Stops every call, here and in every other Cowork process of this data dir (they see it
    /// at their next call, `catch_up`).
    pub fn pause_all(&self) {
        self.policy.set_paused_everywhere(true);
        self.paused.send_replace(true);
        let mut epoch = self.pause_epoch.lock().unwrap();
        epoch.cancel();
        *epoch = CancellationToken::new();
    }

    pub fn resume_all(&self) {
        self.policy.set_paused_everywhere(false);
        self.paused.send_replace(false);
    }

    /// Several Cowork processes share a data dir (the window, `cowork mcp serve`, schedules,
    /// the CLI): a call starting `now` is judged by what the person last set in any of them.
    /// The pause (the emergency stop, one `stat`) is read before every call; grants, rules and
    /// settings at most every [`CATCH_UP_EVERY`] (this process's own changes apply at once).
    fn catch_up_before_call(&self, now: Instant) {
        self.follow_pause();
        let due = {
            let mut last = self.caught_up.lock().unwrap();
            let due = last.is_none_or(|t| now.duration_since(t) >= CATCH_UP_EVERY);
            if due {
                *last = Some(now);
            }
            due
        };
        if due && let Err(e) = self.policy.catch_up() {
            tracing::warn!("catching up with the settings and grants on disk: {e}");
        }
    }

    /// Takes the pause set from another Cowork process (its marker in the data dir).
    fn follow_pause(&self) {
        let paused = self.policy.paused_everywhere();
        if paused != *self.paused.borrow() {
            self.paused.send_replace(paused);
        }
    }

    /// Takes in what the person changed from another Cowork process — a pause, a revoked grant,
    /// a new rule — now (about 5 µs: a read and a few `stat`s).
    pub fn catch_up(&self) -> Result<(), PolicyError> {
        self.follow_pause();
        self.policy.catch_up()
    }

    /// Whether tools are paused, now and as it changes (the tray and the window show it).
    pub fn paused(&self) -> tokio::sync::watch::Receiver<bool> {
        self.paused.subscribe()
    }

    /// Lets tools suspend (the app sets it once, at start).
    pub fn set_suspensions(&self, coordinator: Arc<crate::suspend::SuspendCoordinator>) {
        let _ = self.suspensions.set(coordinator);
    }

    pub fn suspensions(&self) -> Option<&Arc<crate::suspend::SuspendCoordinator>> {
        self.suspensions.get()
    }

    /// Resumes a suspended call: marks it resumed (once: a second Resume is refused) and runs
    /// the recorded call again through the whole gate — reviewed again, audited again.
    pub async fn resume(
        &self,
        id: &str,
        caller: Caller,
    ) -> Result<CallOutcome, crate::suspend::SuspendError> {
        let by = caller.as_str().to_string();
        self.resume_by(id, caller, &by).await
    }

    /// `resume`, recording who settled it (`auto` when its condition came true).
    async fn resume_by(
        &self,
        id: &str,
        caller: Caller,
        by: &str,
    ) -> Result<CallOutcome, crate::suspend::SuspendError> {
        let coordinator = self
            .suspensions
            .get()
            .ok_or_else(|| crate::suspend::SuspendError::NotFound(id.to_string()))?;
        let taken = coordinator.take_for_resume(id, by)?;
        // Another app's call runs again as that app's, whoever resumes it.
        let caller = taken
            .caller
            .as_deref()
            .and_then(Caller::recorded_app)
            .unwrap_or(caller);
        let mut request = CallRequest::new(&taken.tool, taken.args, caller, &taken.conversation);
        request.caller_ref = Some(format!("resume:{id}"));
        request.resumed = Some(taken.resume_when);
        Ok(self.call(request).await)
    }

    /// Who brings tools served from elsewhere (the app: toolpack servers, started when first
    /// needed). Set once.
    pub fn set_tool_finder(&self, finder: ToolFinder) {
        let _ = self.tool_finder.set(finder);
    }

    /// Waits until the tools a call of `name` may need are there (None: every tool, as before a
    /// model is offered them). Every path that calls tools comes through here — a call, a chain
    /// step, an agent's turn — so no path finds a served tool missing because nothing started it.
    pub async fn find_tools(&self, name: Option<&str>) {
        if let Some(finding) = self.tool_finder.get().and_then(|find| find(name)) {
            finding.await;
        }
    }

    /// Lets suspensions whose `resume_when.kind` is the probe's go on by themselves.
    pub fn add_resume_probe(&self, probe: Arc<dyn cowork_contract::ResumeProbe>) {
        self.resume_probes.write().unwrap().push(probe);
    }

    /// One pass over the open suspensions: each whose family says its condition holds is
    /// resumed (settled by `auto`, re-run as `caller`). Returns what those calls did, by
    /// suspension id. The window runs it every second while it lives.
    pub async fn resume_ready(&self, caller: Caller) -> Vec<(String, CallOutcome)> {
        let Some(coordinator) = self.suspensions.get() else {
            return vec![];
        };
        let mut done = Vec::new();
        for suspension in coordinator.list(false).unwrap_or_default() {
            if let Some(outcome) = self.resume_when_ready(&suspension, caller.clone()).await {
                done.push((suspension.id, outcome));
            }
        }
        done
    }

    /// Resumes this one suspension if its family says its condition holds (a CLI waiting on
    /// its own task uses this, and leaves other tasks alone).
    pub async fn resume_if_ready(&self, id: &str, caller: Caller) -> Option<CallOutcome> {
        let suspension = self.suspensions.get()?.get(id).ok()??;
        self.resume_when_ready(&suspension, caller).await
    }

    async fn resume_when_ready(
        &self,
        suspension: &crate::suspend::Suspension,
        caller: Caller,
    ) -> Option<CallOutcome> {
        if suspension.state != "suspended" {
            return None;
        }
        let kind = suspension
            .resume_when
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or_default();
        let probe = self
            .resume_probes
            .read()
            .unwrap()
            .iter()
            .find(|p| p.kind() == kind)
            .cloned()?;
        if !probe.holds(&suspension.resume_when).await {
            return None;
        }
        self.resume_by(&suspension.id, caller, "auto").await.ok()
    }

    /// Who answers asks here: the window relays other processes' asks to it (`cowork mcp serve`).
    pub fn approver(&self) -> &Arc<dyn Approver> {
        &self.approver
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
    pub fn policy(&self) -> &Arc<PolicyBridge> {
        &self.policy
    }
    pub fn audit(&self) -> &Arc<AuditLog> {
        &self.audit
    }
    pub fn env(&self) -> Arc<EffectEnv> {
        self.env.read().unwrap().clone()
    }

    /// Opens other workspace folders for the calls that follow (the window's folder picker):
    /// the policy reads their settings as the person trusts them, and relative paths resolve
    /// in them. Calls already running keep the folders they started with.
    pub fn set_workspaces(&self, roots: Vec<std::path::PathBuf>) -> Result<(), PolicyError> {
        self.policy.set_workspaces(&roots)?;
        let env = EffectEnv {
            workspace_roots: roots,
            ..(*self.env()).clone()
        };
        *self.env.write().unwrap() = Arc::new(env);
        Ok(())
    }

    /// Waits until the audit rows of every call that has returned are committed.
    pub fn flush(&self) -> Result<(), crate::AuditError> {
        self.audit.flush()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<ToolEvent> {
        self.events.subscribe()
    }

    fn resolve(&self, name: &str) -> Result<Arc<Handler>, ToolError> {
        self.registry
            .handler(name)
            .ok_or_else(|| self.registry.not_found(name))
    }

    /// Stages resolve → size → validate → plan, shared by `call` and `explain`.
    fn prepare(
        &self,
        name: &str,
        args: &serde_json::Value,
        env: &EffectEnv,
    ) -> Result<(Arc<Handler>, cowork_contract::PreparedCall), ToolError> {
        let handler = self.resolve(name)?;
        let prepared = self.prepare_resolved(&handler, args, env)?;
        Ok((handler, prepared))
    }

    /// Checks the arguments of a resolved tool and asks it for the call's effects.
    fn prepare_resolved(
        &self,
        handler: &Handler,
        args: &serde_json::Value,
        env: &EffectEnv,
    ) -> Result<cowork_contract::PreparedCall, ToolError> {
        let spec = &handler.info.spec;
        let renamed = spec.canonical_args(args);
        let args = renamed.as_ref().unwrap_or(args);
        check_size(args, self.config.max_args_bytes)?;
        if let Some(err) = format_schema_errors(handler.input()?, args) {
            return Err(err);
        }
        let prepared = handler.tool.prepare(args.clone(), env)?;
        check_declared(spec, &prepared.effects)?;
        Ok(prepared)
    }

    /// The review a call would get, without running it or writing anything.
    pub fn explain(
        &self,
        name: &str,
        args: &serde_json::Value,
        conversation: &str,
        env: Option<&EffectEnv>,
    ) -> Result<Explanation, ToolError> {
        let default_env = self.env();
        let env = env.unwrap_or(&default_env);
        let (handler, prepared) = self.prepare(name, args, env).map_err(|e| e.stamped(name))?;
        let carried = self
            .carried(conversation, args)
            .map_err(|e| e.stamped(name))?;
        let review = self.policy.review(&ReviewRequest {
            spec: &handler.info.spec,
            args,
            effects: &prepared.effects,
            conversation,
            env,
            profile: None,
            run_grants: &[],
            carried: &carried,
        });
        Ok(Explanation {
            tool: handler.info.spec.name.clone(),
            layer: handler.info.layer,
            effects: prepared.effects,
            review,
        })
    }

    /// A tool asks the person (`ask_user`, `confirm`, …): through the same approver as asks,
    /// bounded by the same timeout, which counts from when the form reached the person. Silence
    /// or nobody to ask is [`PersonAnswer::Nobody`] — never a decline the model could take for
    /// the person's answer. The call itself is the audit row.
    pub async fn ask_person(&self, request: ElicitationRequest) -> PersonAnswer {
        if !self.approver.can_ask() {
            return PersonAnswer::Nobody;
        }
        let limit = Duration::from_secs(self.policy.thresholds().ask_timeout_secs);
        let answer = tokio::select! {
            answer = self.approver.elicit(&request) => PersonAnswer::Answered(answer),
            _ = self.silence(&request.id, limit) => PersonAnswer::Nobody,
        };
        self.approver.settled(&request.id);
        answer
    }

    /// A server asks the person for input (MCP elicitation). Goes to the same Approver as asks,
    /// bounded by the same timeout (silence declines), and leaves an audit row: who asked, the
    /// message, the answer's action — never the content, which may be personal.
    pub async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        let limit = Duration::from_secs(self.policy.thresholds().ask_timeout_secs);
        let answer = tokio::select! {
            answer = self.approver.elicit(&request) => answer,
            _ = self.silence(&request.id, limit) => ElicitationAnswer::Decline,
        };
        self.approver.settled(&request.id);
        let record = AuditRecord {
            ts: now(),
            call_id: request.id.clone(),
            phase: "final".into(),
            tool: "elicitation".into(),
            layer: Some("mcp".into()),
            caller: request.from.clone(),
            conversation: String::new(),
            args: serde_json::json!({"message": request.message}).to_string(),
            effects: serde_json::json!([{"kind": "ui.ask"}]).to_string(),
            decision: Action::Ask.as_str().into(),
            approved_by: Some(format!("{}: {}", self.approver.name(), answer.as_str())),
            outcome: Some(answer.as_str().into()),
            ..Default::default()
        };
        if let Err(e) = self.audit.append(record) {
            tracing::error!(
                "elicitation from {}: could not audit ({e}); declining",
                request.from
            );
            return ElicitationAnswer::Decline;
        }
        answer
    }

    /// Runs one tool call through the whole gate. Never panics on bad input; always audits.
    pub async fn call(&self, req: CallRequest) -> CallOutcome {
        self.call_with(req, Target::Named).await
    }

    /// Runs a call of a tool listed in no registry through the same whole gate: one Cowork
    /// makes for something outside, such as an MCP server asking the person's model (sampling).
    /// Listed nowhere, no model and no other app can name it; `req.tool` must be its name.
    pub async fn call_unlisted(
        &self,
        req: CallRequest,
        tool: Arc<dyn DynTool>,
        layer: Layer,
    ) -> CallOutcome {
        let handler = crate::registry::unlisted(layer, tool).map(Arc::new);
        self.call_with(req, Target::Unlisted(handler)).await
    }

    async fn call_with(&self, req: CallRequest, target: Target) -> CallOutcome {
        let started = Instant::now();
        self.catch_up_before_call(started);
        let call_id = uuid::Uuid::now_v7().to_string();
        let mut trail = Trail::default();
        let epoch = self.pause_epoch.lock().unwrap().clone();
        let result = if *self.paused.borrow() {
            Err(ToolError::Paused)
        } else {
            tokio::select! {
                result = self.run(&req, &call_id, &mut trail, target) => result,
                _ = epoch.cancelled() => Err(ToolError::Paused),
            }
        };
        let duration = started.elapsed();
        let tool = trail.tool.take().unwrap_or(req.tool);
        let mut result = result.map_err(|e| e.stamped(&tool));
        let error = result
            .as_ref()
            .err()
            .map(|e| self.unrevealed(&req.conversation, e.to_string(), trail.carried));
        let review = trail.review.as_ref();
        let read_only = trail.effects.iter().all(Effect::is_read_only);
        let row = Row {
            at: chrono::Utc::now(),
            call_id: call_id.clone(),
            phase: "final",
            tool: tool.clone(),
            layer: trail.layer,
            overrides: std::mem::take(&mut trail.overrides),
            caller: req.caller,
            conversation: req.conversation,
            args: req.args,
            secret_args: std::mem::take(&mut trail.secret_args),
            effects: std::mem::take(&mut trail.effects),
            decision: review.map(|r| r.decision),
            score: review.map(|r| r.score),
            rule: review.and_then(|r| r.matched.clone()),
            approved_by: trail.approved_by.clone(),
            outcome: Some(match &result {
                Ok(_) => "ok",
                Err(e) => e.kind(),
            }),
            error: error.clone(),
            duration_us: Some(duration.as_micros() as i64),
            max_args_bytes: self.config.max_audit_args_bytes,
        };
        // Queued, built and committed by the next group commit (see audit.rs for the contract).
        if let Err(e) = self.audit.append_deferred(move || row.into_record()) {
            // Fail closed: a result we could not record is not handed out.
            result = Err(ToolError::failed(e.to_string()));
        }
        let duration_us = duration.as_micros() as u64;
        let _ = self.events.send(match &result {
            Ok(_) => ToolEvent::Completed {
                call_id: call_id.clone(),
                tool: tool.clone(),
                duration_us,
            },
            Err(e) => ToolEvent::Failed {
                call_id: call_id.clone(),
                tool: tool.clone(),
                error_kind: e.kind().into(),
                message: error.unwrap_or_else(|| e.to_string()),
                duration_us,
                caller_ref: req.caller_ref.clone(),
            },
        });
        CallOutcome {
            call_id,
            tool,
            layer: trail.layer,
            review: trail.review,
            approved_by: trail.approved_by,
            result,
            duration,
            read_only,
        }
    }

    /// Runs calls in order, except that consecutive read-only calls run in parallel: the
    /// batch means what it would mean run one by one.
    pub async fn call_batch(&self, requests: Vec<CallRequest>) -> Vec<CallOutcome> {
        let mut outcomes = Vec::with_capacity(requests.len());
        let mut parallel: Vec<CallRequest> = Vec::new();
        for req in requests {
            let read_only = self
                .registry
                .get(&req.tool)
                .is_some_and(|i| i.spec.is_read_only());
            if read_only {
                parallel.push(req);
                continue;
            }
            outcomes
                .extend(futures::future::join_all(parallel.drain(..).map(|r| self.call(r))).await);
            outcomes.push(self.call(req).await);
        }
        outcomes
            .extend(futures::future::join_all(parallel.into_iter().map(|r| self.call(r))).await);
        outcomes
    }

    /// The write-ahead row of an effectful call, built at once (the caller waits for it anyway).
    fn intent_record(&self, req: &CallRequest, call_id: &str, trail: &Trail) -> AuditRecord {
        let review = trail.review.as_ref();
        Row {
            at: chrono::Utc::now(),
            call_id: call_id.to_string(),
            phase: "intent",
            tool: trail.tool.clone().unwrap_or_else(|| req.tool.clone()),
            layer: trail.layer,
            overrides: trail.overrides.clone(),
            caller: req.caller.clone(),
            conversation: req.conversation.clone(),
            args: req.args.clone(),
            secret_args: trail.secret_args.clone(),
            effects: trail.effects.clone(),
            decision: review.map(|r| r.decision),
            score: review.map(|r| r.score),
            rule: review.and_then(|r| r.matched.clone()),
            approved_by: trail.approved_by.clone(),
            outcome: None,
            error: None,
            duration_us: None,
            max_args_bytes: self.config.max_audit_args_bytes,
        }
        .into_record()
    }

    /// The gate after `prepare`, stage by stage: review → approve → rate → intent → execute →
    /// output check → taint. `call` writes the final audit row whatever happens here.
    async fn run(
        &self,
        req: &CallRequest,
        call_id: &str,
        trail: &mut Trail,
        target: Target,
    ) -> Result<ToolOutput, ToolError> {
        let default_env = self.env();
        let env = req.env.as_ref().unwrap_or(&default_env);
        // Named by its canonical name from here on, even if preparing it fails (an alias or a
        // tool that is not configured is audited under the tool it is).
        let handler = match target {
            Target::Named => {
                self.find_tools(Some(&req.tool)).await;
                self.resolve(&req.tool)?
            }
            Target::Unlisted(handler) => handler.ok_or_else(|| {
                ToolError::failed(format!("{}'s input schema does not compile", req.tool))
            })?,
        };
        let spec = &handler.info.spec;
        trail.tool = Some(spec.name.clone());
        trail.layer = Some(handler.info.layer);
        let mut prepared = self.prepare_resolved(&handler, &req.args, env)?;
        trail.overrides = handler.info.overrides.clone();
        trail.effects = std::mem::take(&mut prepared.effects);
        trail.secret_args = spec.secret_args.clone();
        let carried = self.carried(&req.conversation, &req.args)?;

        let review = self.policy.review(&ReviewRequest {
            spec,
            args: &req.args,
            effects: &trail.effects,
            conversation: &req.conversation,
            env,
            profile: req.profile.as_deref(),
            run_grants: req.run_grants.as_deref().unwrap_or_default(),
            carried: &carried,
        });
        trail.review = Some(review);
        self.gate_hooks(req, spec, env, trail).await;
        self.approve(req, call_id, spec, trail).await?;
        if let Some(limit) = spec.rate_limit {
            self.check_rate(&spec.name, limit)?;
        }
        if !carried.is_empty() {
            trail.carried = true;
            prepared = self.with_kept_values(&handler, req, env, &carried, &trail.effects)?;
        }
        self.write_intent(req, call_id, trail).await?;
        let executed = self
            .execute(req, call_id, spec, &prepared, env, trail)
            .await;
        self.after_hooks(req, spec, env, &executed).await;
        let output = match executed {
            Ok(output) => output,
            // A failure's text reaches the model as well: from a tool that reads the outside
            // world (an MCP server's error, a page's error body) it is untrusted too.
            Err(e) => {
                if spec.annotations.open_world {
                    self.policy
                        .mark_tainted(&req.conversation, &spec.name)
                        .map_err(|e| ToolError::failed(e.to_string()))?;
                }
                return Err(e);
            }
        };
        check_output(&handler, &output)?;
        self.keep_home(req, spec, &trail.effects, &output)?;
        if output.untrusted {
            self.policy
                .mark_tainted(&req.conversation, &spec.name)
                .map_err(|e| ToolError::failed(e.to_string()))?;
        }
        Ok(output)
    }

    /// The values a call's placeholders stand for (empty when it uses none); a placeholder the
    /// conversation does not hold fails the call before its review.
    fn carried(
        &self,
        conversation: &str,
        args: &serde_json::Value,
    ) -> Result<Vec<crate::placeholders::Kept>, ToolError> {
        let used = self.policy.placeholders().used(conversation, args);
        Ok(used
            .map_err(|e| ToolError::invalid(e.to_string()))?
            .unwrap_or_default())
    }

    /// A failure's words as the audit row keeps them: a call that ran with kept values may
    /// have echoed one (`cannot log in as hunter2`); the row holds the placeholder instead.
    fn unrevealed(&self, conversation: &str, error: String, carried: bool) -> String {
        if !carried {
            return error;
        }
        let veiled = self.policy.placeholders().veil(conversation, &error, true);
        veiled.unwrap_or_else(|e| format!("(its error is not shown: {e})"))
    }

    /// The reviewed and approved call, prepared again with its placeholders' values: what runs.
    /// A value may fill what the call carries, never change what was reviewed (where it
    /// reaches, who receives it): then the effects differ and the call is refused.
    fn with_kept_values(
        &self,
        handler: &Handler,
        req: &CallRequest,
        env: &EffectEnv,
        carried: &[crate::placeholders::Kept],
        reviewed: &[Effect],
    ) -> Result<cowork_contract::PreparedCall, ToolError> {
        let args = crate::placeholders::reveal(&req.args, carried);
        let prepared = self.prepare_resolved(handler, &args, env)?;
        if prepared.effects != reviewed {
            let names: Vec<String> = carried.iter().map(|k| k.placeholder()).collect();
            return Err(ToolError::SecurityViolation {
                reason: format!(
                    "{} would change where this call reaches: a value kept from the model may only fill what a call carries (a text, a field to type into), never an address, a path or a recipient",
                    names.join(", ")
                ),
            });
        }
        Ok(prepared)
    }

    /// What a read of data kept home returned is kept (numbered) before the result goes
    /// anywhere: from now on the conversation reaches a remote model with placeholders for
    /// it. A result that could not be kept is not handed out.
    fn keep_home(
        &self,
        req: &CallRequest,
        spec: &ToolSpec,
        effects: &[Effect],
        output: &ToolOutput,
    ) -> Result<(), ToolError> {
        let reads: Vec<(cowork_contract::Sensitive, Option<&str>)> = effects
            .iter()
            .filter_map(|effect| {
                let subject = match effect {
                    Effect::SensitiveRead { subject, .. }
                    | Effect::SecretsRead { name: subject } => Some(subject.as_str()),
                    _ => None,
                };
                effect.kept_home().map(|category| (category, subject))
            })
            .collect();
        if reads.is_empty() {
            return Ok(());
        }
        let values = crate::placeholders::values_of(output, &req.args);
        for (category, subject) in reads {
            self.policy
                .placeholders()
                .keep(
                    &req.conversation,
                    &values,
                    category,
                    Some(&spec.name),
                    subject,
                )
                .map_err(|e| ToolError::failed(e.to_string()))?;
        }
        Ok(())
    }

    /// The person's `PreToolUse` hooks for a call the review lets through: one that refuses
    /// turns the decision into a denial, on record, before anyone is asked. Nothing a hook says
    /// widens the decision.
    async fn gate_hooks(
        &self,
        req: &CallRequest,
        spec: &ToolSpec,
        env: &EffectEnv,
        trail: &mut Trail,
    ) {
        let review = trail.review.as_mut().expect("reviewed before the hooks");
        if review.decision == Action::Deny {
            return;
        }
        let hooks = self
            .policy
            .hooks(HookEvent::PreToolUse, &spec.name, &spec.aliases);
        if hooks.is_empty() {
            return;
        }
        let input = hook_input(HookEvent::PreToolUse, req, spec, env);
        for hook in hooks {
            if let HookVerdict::Refused(why) = hook.run(&input, env).await {
                review.decision = Action::Deny;
                review.why = why;
                review.matched = None;
                review.can_grant = false;
                return;
            }
        }
    }

    /// The person's `PostToolUse` hooks, once the call ran (whatever its outcome).
    async fn after_hooks(
        &self,
        req: &CallRequest,
        spec: &ToolSpec,
        env: &EffectEnv,
        executed: &Result<ToolOutput, ToolError>,
    ) {
        let hooks = self
            .policy
            .hooks(HookEvent::PostToolUse, &spec.name, &spec.aliases);
        if hooks.is_empty() {
            return;
        }
        let mut input = hook_input(HookEvent::PostToolUse, req, spec, env);
        input["tool_response"] = match executed {
            Ok(output) => {
                serde_json::json!({"ok": true, "text": output.text_content(), "structured": output.structured})
            }
            Err(e) => serde_json::json!({"ok": false, "error": e.to_string()}),
        };
        for hook in hooks {
            hook.run(&input, env).await;
        }
    }

    /// The person's `Stop` hooks, at the end of a model's turn in `conversation`.
    pub async fn turn_ended(&self, conversation: &str) {
        let env = self.env();
        let input = serde_json::json!({
            "hook_event_name": HookEvent::Stop.as_str(),
            "session_id": conversation,
            "cwd": env.workspace_roots.first(),
        });
        for hook in self.policy.hooks(HookEvent::Stop, "", &[]) {
            hook.run(&input, &env).await;
        }
    }

    /// Stage approve: the review's decision stands, or the person is asked.
    async fn approve(
        &self,
        req: &CallRequest,
        call_id: &str,
        spec: &ToolSpec,
        trail: &mut Trail,
    ) -> Result<(), ToolError> {
        let review = trail.review.as_ref().expect("reviewed before approval");
        if let Some(refusal) = refusal(review) {
            return Err(refusal);
        }
        if review.decision == Action::Allow {
            trail.approved_by = Some(format!("policy: {}", review.why));
            return Ok(());
        }
        if req.caller == Caller::Person {
            trail.approved_by = Some("person: their own action in the window".into());
            trail.person_approved = true;
            return Ok(());
        }
        if review.can_grant
            && let Some(granted) = &req.granted
            && !trail.effects.is_empty()
            && trail.effects.iter().all(|e| granted.contains(e))
        {
            trail.approved_by = Some("person: approved these effects up front".into());
            trail.person_approved = true;
            return Ok(());
        }
        if req.unattended {
            return Err(self.wait_for_person(req, call_id, spec, trail));
        }
        let redacted = redact(&req.args, &spec.secret_args);
        let (choice, by, heard) = self
            .ask(req, call_id, spec, redacted, &trail.effects, review)
            .await;
        trail.approved_by = Some(by.clone());
        if choice != ApprovalChoice::Deny {
            trail.person_approved = true;
            return Ok(());
        }
        Err(ToolError::Denied {
            reason: declined_reason(&req.caller, heard, spec, &trail.effects, review, &by),
        })
    }

    /// An unattended call met an ask: it becomes a task waiting for the person (resumed, it
    /// runs again with the person there to answer). Never a silent denial, never a hang.
    fn wait_for_person(
        &self,
        req: &CallRequest,
        call_id: &str,
        spec: &ToolSpec,
        trail: &mut Trail,
    ) -> ToolError {
        let why = trail
            .review
            .as_ref()
            .map(|r| r.why.clone())
            .unwrap_or_default();
        trail.approved_by = Some("nobody: an unattended run waits for the person".into());
        let Some(coordinator) = self.suspensions.get() else {
            return ToolError::Denied {
                reason: format!("{why} — and nobody is there to ask (an unattended run)"),
            };
        };
        let id = uuid::Uuid::now_v7().to_string();
        let request = cowork_contract::SuspendRequest {
            reason: format!("{} needs your approval ({why})", spec.title),
            resume_when: serde_json::Value::Null,
            timeout: Duration::from_secs(7 * 86_400),
        };
        match coordinator.record(&id, &stopped(req, call_id, &spec.name), &request) {
            Ok(()) => ToolError::Suspended {
                id,
                reason: request.reason,
            },
            Err(e) => ToolError::failed(format!(
                "{} — and the waiting task could not be recorded: {e}",
                request.reason
            )),
        }
    }

    /// Stage intent: an effectful call is on record (durably) before it can touch the world.
    async fn write_intent(
        &self,
        req: &CallRequest,
        call_id: &str,
        trail: &Trail,
    ) -> Result<(), ToolError> {
        if trail.effects.iter().all(Effect::is_read_only) {
            return Ok(());
        }
        self.audit
            .append_durable(self.intent_record(req, call_id, trail))
            .await
            .map_err(|e| ToolError::failed(e.to_string()))
    }

    /// Stage execute: the tool runs with its context, under its timeout and the caller's
    /// cancellation, retried when idempotent and transiently failing; a suspension is recorded.
    async fn execute(
        &self,
        req: &CallRequest,
        call_id: &str,
        spec: &ToolSpec,
        prepared: &cowork_contract::PreparedCall,
        env: &EffectEnv,
        trail: &Trail,
    ) -> Result<ToolOutput, ToolError> {
        let accept_edits = trail
            .review
            .as_ref()
            .is_some_and(|r| r.mode == crate::policy::Mode::AcceptEdits);
        let _ = self.events.send(ToolEvent::Started {
            call_id: call_id.to_string(),
            tool: spec.name.clone(),
            conversation: req.conversation.clone(),
            caller_ref: req.caller_ref.clone(),
        });
        let (mut ctx, suspended) = self.context(req, call_id, spec, env, accept_edits);
        ctx.person_approved = trail.person_approved;
        let output = self.run_with_retries(req, spec, prepared, ctx).await;
        self.record_suspension(output, suspended, req, call_id, spec)
    }

    /// What a tool sees of its call: ids, cancellation, progress, the suspender, the modes.
    fn context(
        &self,
        req: &CallRequest,
        call_id: &str,
        spec: &ToolSpec,
        env: &EffectEnv,
        accept_edits: bool,
    ) -> (ToolContext, Option<SuspendSlot>) {
        let mut ctx = ToolContext::new(call_id, &req.conversation, env.clone());
        ctx.cancel = req.cancel.clone();
        ctx.tool = spec.name.clone();
        ctx.resumed = req.resumed.clone();
        // A tool that suspends only names its request here; the row (with the call's arguments,
        // which are not copied for the calls that never suspend) is written once the call ends.
        let suspended: Option<SuspendSlot> = self.suspensions.get().map(|_| Arc::default());
        if let Some(slot) = suspended.clone() {
            ctx.suspender = Some(Arc::new(move |request| {
                let id = uuid::Uuid::now_v7().to_string();
                *slot.lock().unwrap() = Some((id.clone(), request));
                Ok(id)
            }));
        }
        ctx.accept_edits = accept_edits;
        // Only a tool that starts programs uses it, and the check reads the folder again.
        ctx.workspace_trusted = spec
            .effects
            .contains(&cowork_contract::EffectKind::ProcessExec)
            && self.policy.workspace_trusted();
        let events = self.events.clone();
        let progress_id = call_id.to_string();
        ctx.progress = Arc::new(move |progress| {
            let _ = events.send(ToolEvent::Progress {
                call_id: progress_id.clone(),
                progress,
            });
        });
        (ctx, suspended)
    }

    async fn run_with_retries(
        &self,
        req: &CallRequest,
        spec: &ToolSpec,
        prepared: &cowork_contract::PreparedCall,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let timeout = req
            .timeout
            .unwrap_or(Duration::from_millis(spec.timeout_ms));
        let attempts = if spec.annotations.idempotent {
            self.config.retry_attempts.max(1)
        } else {
            1
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut ctx = ctx.clone();
            ctx.deadline = Some(std::time::Instant::now() + timeout);
            let run = prepared.run(ctx);
            let result = tokio::select! {
                biased;
                _ = req.cancel.cancelled() => Err(ToolError::Cancelled),
                r = tokio::time::timeout(timeout, run) => r.unwrap_or(Err(ToolError::Timeout { after: timeout })),
            };
            match result {
                Err(e) if e.is_transient() && attempt < attempts => {
                    let delay = self.config.retry_base_delay * 2u32.pow(attempt - 1);
                    tracing::debug!(tool = %spec.name, attempt, "transient failure, retrying in {delay:?}");
                    tokio::select! {
                        _ = req.cancel.cancelled() => break Err(ToolError::Cancelled),
                        _ = tokio::time::sleep(delay) => {}
                    }
                }
                other => break other,
            }
        }
    }

    /// A tool that suspended through its context is put on record with the call's arguments
    /// (copied only now, for the calls that do suspend).
    fn record_suspension(
        &self,
        output: Result<ToolOutput, ToolError>,
        suspended: Option<SuspendSlot>,
        req: &CallRequest,
        call_id: &str,
        spec: &ToolSpec,
    ) -> Result<ToolOutput, ToolError> {
        match (output, suspended, self.suspensions.get()) {
            (Err(ToolError::Suspended { id, reason }), Some(slot), Some(coordinator)) => {
                let request = slot
                    .lock()
                    .unwrap()
                    .take()
                    .filter(|(named, _)| *named == id)
                    .map(|(_, request)| request);
                let recorded = request
                    .ok_or_else(|| "the tool did not suspend through its context".to_string())
                    .and_then(|request| {
                        coordinator
                            .record(&id, &stopped(req, call_id, &spec.name), &request)
                            .map_err(|e| e.to_string())
                    });
                Err(match recorded {
                    Ok(()) => ToolError::Suspended { id, reason },
                    Err(e) => ToolError::failed(format!(
                        "{reason} — and the suspension could not be recorded: {e}"
                    )),
                })
            }
            (other, _, _) => other,
        }
    }

    /// What the person may answer: once or deny, and the grants when one would mean something
    /// ("always in this workspace" only for a workspace they trust). Another program's model (an
    /// MCP client) gets grants of its own only — once, or for that client — never a rule that
    /// every caller would share.
    fn choices(&self, can_grant: bool, caller: &Caller) -> Vec<ApprovalChoice> {
        let mut choices = vec![ApprovalChoice::Once];
        if can_grant {
            choices.push(ApprovalChoice::Conversation);
        }
        if can_grant && !matches!(caller, Caller::Mcp(_)) {
            choices.push(ApprovalChoice::Always);
            if self.policy.has_workspace() {
                choices.push(ApprovalChoice::AlwaysWorkspace);
            }
        }
        choices.push(ApprovalChoice::Deny);
        choices
    }
    async fn ask(
        &self,
        req: &CallRequest,
        call_id: &str,
        spec: &ToolSpec,
        args: serde_json::Value,
        effects: &[Effect],
        review: &Review,
    ) -> (ApprovalChoice, String, Heard) {
        let tool = spec.name.as_str();
        let grants = grant_rules_for(tool, effects).filter(|_| review.can_grant);
        let choices = self.choices(grants.is_some(), &req.caller);
        let request = ApprovalRequest {
            call_id: call_id.to_string(),
            conversation: req.conversation.clone(),
            caller: req.caller.as_str().to_string(),
            asker: req.caller.mcp_client().map(str::to_string),
            view_of: req.caller.view_of().map(str::to_string),
            sub_agent: req.caller.sub_agent_name().map(str::to_string),
            tool: tool.to_string(),
            title: spec.title.clone(),
            annotations: spec.annotations,
            plain: crate::plain::describe(spec, effects, &args, &self.env()),
            args,
            effects: effects.to_vec(),
            review: review.clone(),
            choices: choices.clone(),
            grants: grants.clone().unwrap_or_default(),
        };
        let limit = Duration::from_secs(self.policy.thresholds().ask_timeout_secs);
        let answered = tokio::select! {
            _ = req.cancel.cancelled() => Err("cancelled while asking".to_string()),
            answer = self.approver.answer(&request) => Ok(answer),
            _ = self.silence(call_id, limit) => Err(format!("no answer within {} s of being shown", limit.as_secs())),
        };
        self.approver.settled(call_id);
        let (choice, who, heard) = match answered {
            Ok(answer) => (
                answer.choice,
                answer
                    .by
                    .unwrap_or_else(|| self.approver.name().to_string()),
                if answer.heard {
                    Heard::Person
                } else {
                    Heard::Nobody
                },
            ),
            Err(why) => return (ApprovalChoice::Deny, why, Heard::Nobody),
        };
        // A choice that was not offered counts as the narrowest approval.
        let choice = if choices.contains(&choice) {
            choice
        } else {
            ApprovalChoice::Once
        };
        let persisted = self.keep_grant(choice, grants.as_deref(), &req.conversation);
        let by = match (choice, persisted) {
            (ApprovalChoice::Deny, _) => format!("{who}: denied"),
            (_, Err(e)) => format!("{who}: {} (could not save the grant: {e})", choice.as_str()),
            (_, Ok(rules)) if rules.is_empty() => format!("{who}: {}", choice.as_str()),
            (_, Ok(rules)) => format!("{who}: {} ({rules})", choice.as_str()),
        };
        (choice, by, heard)
    }

    /// The grant an answer gives (for the conversation, or a rule for always), kept; the rules
    /// it wrote, joined (empty when it gives none).
    fn keep_grant(
        &self,
        choice: ApprovalChoice,
        grants: Option<&[String]>,
        conversation: &str,
    ) -> Result<String, PolicyError> {
        let source = match (choice, grants) {
            (ApprovalChoice::Conversation, Some(rules)) => {
                return self
                    .policy
                    .grant_for_conversation(conversation, rules)
                    .map(|_| rules.join(", "));
            }
            (ApprovalChoice::Always, Some(_)) => RuleSource::User,
            (ApprovalChoice::AlwaysWorkspace, Some(_)) => RuleSource::Workspace,
            _ => return Ok(String::new()),
        };
        let rules = grants.unwrap_or_default();
        rules
            .iter()
            .try_for_each(|r| self.policy.add_rule(Action::Allow, r, source))
            .map(|_| rules.join(", "))
    }

    /// Silence long enough to count as no: `limit` from the moment the ask reached the person
    /// (an ask nobody could see waits, it is not denied unseen).
    async fn silence(&self, id: &str, limit: Duration) {
        self.approver.reached(id).await;
        tokio::time::sleep(limit).await;
    }

    fn check_rate(&self, tool: &str, limit: cowork_contract::RateLimit) -> Result<(), ToolError> {
        let limiter = {
            let mut limiters = self.limiters.lock().unwrap();
            limiters
                .entry(tool.to_string())
                .or_insert_with(|| {
                    let per_minute = NonZeroU32::new(limit.per_minute.max(1)).expect("max(1)");
                    let burst = NonZeroU32::new(limit.burst.max(1)).expect("max(1)");
                    Arc::new(RateLimiter::direct(
                        Quota::per_minute(per_minute).allow_burst(burst),
                    ))
                })
                .clone()
        };
        limiter.check().map_err(|not_until| {
            use governor::clock::{Clock, DefaultClock};
            ToolError::RateLimited {
                tool: tool.to_string(),
                per_minute: limit.per_minute,
                retry_after: not_until.wait_time_from(DefaultClock::default().now()),
            }
        })
    }
}

/// The gate's stages that decide without running anything, one by one. The whole gate, with
/// every public way in, is exercised by tests/e2e/scheduler_gate.rs.
#[cfg(test)]
mod stage_tests {
    use super::*;
    use cowork_contract::{EffectKind, ToolMeta};
    use serde_json::json;

    fn spec(kinds: &[EffectKind]) -> ToolSpec {
        ToolSpec::from_meta(
            ToolMeta::new("probe", "Probe", "").effects(kinds),
            json!({"type": "object"}),
        )
    }

    fn review(decision: Action, outside_workspace: bool) -> Review {
        Review {
            decision,
            score: 5,
            reasons: vec![],
            matched: None,
            why: "because".into(),
            mode: crate::policy::Mode::Normal,
            tainted_by: None,
            unsaid: None,
            can_grant: false,
            outside_workspace,
        }
    }

    #[test]
    fn size_refuses_arguments_past_the_limit_and_says_what_to_do() {
        let args = json!({"text": "x".repeat(100)});
        assert!(check_size(&args, 1_000).is_ok());
        let err = check_size(&args, 50).unwrap_err();
        assert!(
            matches!(&err, ToolError::InvalidArguments { message, .. } if message.contains("pass a file path")),
            "{err}"
        );
    }

    #[test]
    fn validate_names_the_field_and_never_echoes_the_value() {
        let schema = json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"]
        });
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(format_schema_errors(&validator, &json!({"count": 3})).is_none());
        let err = format_schema_errors(&validator, &json!({"count": "hunter2-secret"})).unwrap();
        let text = err.to_string();
        assert!(text.contains("/count"), "{text}");
        assert!(
            !text.contains("hunter2"),
            "the value must not be echoed: {text}"
        );
    }

    #[test]
    fn plan_check_refuses_an_effect_kind_the_tool_did_not_declare() {
        let declared = spec(&[EffectKind::FsRead]);
        let read = Effect::FsRead {
            path: "/w/a".into(),
        };
        let write = Effect::FsWrite {
            path: "/w/a".into(),
        };
        let unknown = Effect::McpCall {
            server: "s".into(),
            tool: "t".into(),
            unfilled: None,
        };
        assert!(check_declared(&declared, &[read.clone(), unknown]).is_ok());
        let err = check_declared(&declared, &[read, write]).unwrap_err();
        assert!(err.to_string().contains("does not declare"), "{err}");
    }

    #[test]
    fn approve_turns_a_denial_into_the_right_error_and_lets_the_rest_through() {
        assert!(matches!(
            refusal(&review(Action::Deny, true)),
            Some(ToolError::SecurityViolation { .. })
        ));
        assert!(matches!(
            refusal(&review(Action::Deny, false)),
            Some(ToolError::Denied { .. })
        ));
        assert!(refusal(&review(Action::Ask, false)).is_none());
        assert!(refusal(&review(Action::Allow, false)).is_none());
    }
}
