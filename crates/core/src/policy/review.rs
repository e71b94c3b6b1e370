//! The review's precedence ladder. Each step looks at the call and either decides it or lets
//! the next step look; the order of the steps is the policy (see [`Call::by_rules_and_modes`]).

use super::{
    Action, CallFacts, Config, MatchedRule, Mode, PolicyBridge, Protection, Review, ReviewRequest,
    Risk, Rule, RuleSource, protected, provenance, rules, score,
};
use cowork_contract::{Effect, EffectEnv, EffectKind, Subject};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

/// A step's verdict: `Break` decides the call, `Continue` hands it to the next step.
type Step = ControlFlow<Review>;

/// The step has nothing to say about this call: the next one looks.
const GO_ON: Step = ControlFlow::Continue(());

impl PolicyBridge {
    /// The review. Pure: it reads state and changes nothing, so `explain` is the same call.
    pub fn review(&self, req: &ReviewRequest<'_>) -> Review {
        let call = Call::new(self, req);
        match call.by_rules_and_modes() {
            ControlFlow::Break(decided) => decided,
            ControlFlow::Continue(()) => call.by_score(),
        }
    }
}

/// One call under review, with the state every step judges it by (read once).
struct Call<'a> {
    bridge: &'a PolicyBridge,
    req: &'a ReviewRequest<'a>,
    config: Arc<Config>,
    defaults: Arc<Vec<(Action, Rule)>>,
    mode: Mode,
    tainted_by: Option<String>,
    /// With untrusted content in the conversation: the value steering a risky effect that the
    /// person did not write (`provenance::unsaid`). None: the person chose every such value.
    unsaid: Option<String>,
    risk: Risk,
    grants: Vec<Rule>,
}

impl<'a> Call<'a> {
    fn new(bridge: &'a PolicyBridge, req: &'a ReviewRequest<'a>) -> Self {
        let mut call = Call {
            bridge,
            req,
            config: bridge.config.read().unwrap().clone(),
            defaults: bridge.defaults.read().unwrap().clone(),
            // The profile's mode is a ceiling: it lowers the conversation's, never raises it.
            mode: match req.profile.and_then(|p| p.mode) {
                Some(ceiling) => bridge.mode_for(req.conversation).narrower(ceiling),
                None => bridge.mode_for(req.conversation),
            },
            tainted_by: bridge.conversations.tainted_by(req.conversation),
            unsaid: None,
            risk: Risk::default(),
            grants: {
                let mut grants = bridge.conversations.grants(req.conversation);
                grants.extend(req.run_grants.iter().cloned());
                grants
            },
        };
        call.unsaid = call.find_unsaid();
        call.risk = score::assess(
            req.spec,
            req.effects,
            req.env,
            call.unsaid.is_some(),
            Some(&bridge.data_dir),
        );
        score::carrying(&mut call.risk, req.carried);
        call
    }

    /// With untrusted content in the conversation, the value steering a risky effect that the
    /// person gave neither in their words nor in the allow rule that matched (a rule naming
    /// the destination — one site, these people, this payee — is the person's choice of it).
    fn find_unsaid(&self) -> Option<String> {
        self.tainted_by.as_ref()?;
        let named = self
            .matching(Action::Allow)
            .any(|m| rules::names_destination(&m.rule));
        // People, payees and sites only: a command rule matches a family of commands.
        let chosen: Vec<&str> = if named {
            self.req
                .effects
                .iter()
                .filter(|e| {
                    matches!(
                        e.kind().class().subject,
                        Subject::People | Subject::Payee | Subject::Origin
                    )
                })
                .flat_map(Effect::subjects)
                .collect()
        } else {
            Vec::new()
        };
        let req = self.req;
        self.bridge
            .conversations
            .with_said(req.conversation, |said| {
                provenance::unsaid(req.effects, req.args, said, &chosen)
            })
    }

    /// Precedence: the first step that decides, decides. Deny > ask > allow across all
    /// sources; what no rule or mode decides, the score does ([`Call::by_score`]).
    fn by_rules_and_modes(&self) -> Step {
        self.outside_tool_profile()?;
        self.rule_as_written(Action::Deny)?;
        self.plan_mode()?;
        self.confinement()?;
        self.protected_file()?;
        self.rule_as_written(Action::Ask)?;
        self.allow_rule()?;
        self.taint_without_rule()?;
        self.accept_edits()
    }

    /// The conversation's tool profile (least privilege): a tool outside it is never called.
    fn outside_tool_profile(&self) -> Step {
        let refused = self
            .req
            .profile
            .and_then(|profile| profile.refuses(&self.req.spec.name, self.req.effects));
        match refused {
            Some(why) => self.decided(Action::Deny, None, why),
            None => GO_ON,
        }
    }

    /// A deny or an ask rule decides as it says.
    fn rule_as_written(&self, action: Action) -> Step {
        let Some(m) = self.narrowest(action) else {
            return GO_ON;
        };
        let why = format!("{} rule {}", action.as_str(), cited(&m));
        self.decided(action, Some(m), why)
    }

    /// Plan mode (the person's, or the model's while it plans): read-only calls only.
    fn plan_mode(&self) -> Step {
        if self.mode == Mode::Plan && !self.read_only() {
            let why = "plan mode allows read-only tools only, until the plan is approved";
            return self.decided(Action::Deny, None, why.into());
        }
        GO_ON
    }

    /// Confinement: without an allow rule naming it, no file outside the workspace roots is
    /// touched, whatever the score or ask rules say (deny > ask > allow: a missing allow is
    /// the deny here).
    fn confinement(&self) -> Step {
        let env = self.req.env;
        if let Some(path) = self
            .req
            .effects
            .iter()
            .find_map(|e| outside_workspace(e, env))
            && self.narrowest(Action::Allow).is_none()
        {
            let why = outside_workspace_why(path, env, &self.req.spec.name);
            let mut denied = self.answer(Action::Deny, None, why, false);
            denied.outside_workspace = true;
            return ControlFlow::Break(denied);
        }
        GO_ON
    }

    /// Files that configure a program which runs code or grants permissions (Cowork's own
    /// settings, git, the shell, CI…): the person sees every such write, in every mode, whatever
    /// allows the tool — no call can change what later calls may do unseen. Credentials
    /// likewise: no rule reads a key unseen.
    fn protected_file(&self) -> Step {
        let Some((path, protection, reads)) = self
            .req
            .effects
            .iter()
            .find_map(|e| self.bridge.protected_effect(e, self.req.env))
        else {
            return GO_ON;
        };
        let what = match protection {
            Protection::Secret(what) => format!("holds {what}"),
            Protection::Configures(what) => format!("configures {what}"),
        };
        let act = if reads { "reading" } else { "changing" };
        let why = format!("{path} {what}: {act} it is asked every time, in every mode");
        self.decided(Action::Ask, None, why)
    }

    /// An allow rule allows, unless the workspace's own configuration would run code or the
    /// conversation's untrusted content could steer the call: then it asks.
    fn allow_rule(&self) -> Step {
        let Some(m) = self.narrowest(Action::Allow) else {
            return GO_ON;
        };
        // A rule for `git status` is about git, not about what this repository configured
        // git to run (fsmonitor, filters, `!` aliases): that is covered only once the person
        // trusts the workspace.
        if let Some(code) = self.workspace_code()
            && !self.bridge.workspace_trusted()
        {
            let why = format!(
                "allowed by {}, but the workspace's own configuration would run code ({}) and the workspace is not trusted",
                cited(&m),
                code.join(", ")
            );
            return self.decided(Action::Ask, Some(m), why);
        }
        if let Some(by) = self.steering_taint() {
            let why = format!("allowed by {}, but {}", cited(&m), taint_note(by));
            return self.decided(Action::Ask, Some(m), why);
        }
        let why = format!("allow rule {}", cited(&m));
        self.decided(Action::Allow, Some(m), why)
    }

    /// Taint makes a call ask; it never softens one the score alone refuses (taint's own
    /// point taken off): untrusted content must not turn a refusal into a question.
    fn taint_without_rule(&self) -> Step {
        if let Some(by) = self.steering_taint()
            && self.risk.score.saturating_sub(1) < self.config.thresholds.deny_min
        {
            return self.decided(Action::Ask, None, format!("no rule; {}", taint_note(by)));
        }
        GO_ON
    }

    /// Accept-edits mode lets ordinary edits inside the workspace through unasked.
    fn accept_edits(&self) -> Step {
        let effects = self.req.effects;
        if self.mode == Mode::AcceptEdits
            && !effects.is_empty()
            && effects.iter().all(|e| is_workspace_edit(e, self.req.env))
        {
            let why = "accept-edits mode allows writes inside the workspace";
            return self.decided(Action::Allow, None, why.into());
        }
        GO_ON
    }

    /// With no rule, the score decides (allow ≤ 3, ask 4–8, deny ≥ 9 by default); only this
    /// ask may be answered with a grant.
    fn by_score(&self) -> Review {
        let t = self.config.thresholds;
        let score = self.risk.score;
        let (decision, why) = if score <= t.allow_max {
            (
                Action::Allow,
                format!(
                    "no rule; score {score} ≤ {} is allowed by default",
                    t.allow_max
                ),
            )
        } else if score >= t.deny_min {
            (
                Action::Deny,
                format!(
                    "no rule; score {score} ≥ {} is denied by default — add an allow rule to permit it",
                    t.deny_min
                ),
            )
        } else {
            (
                Action::Ask,
                format!("no rule; score {score} asks by default"),
            )
        };
        self.answer(decision, None, why, decision == Action::Ask)
    }

    /// The narrowest matching rule for `action`: conversation grant > workspace > user >
    /// built-in.
    fn narrowest(&self, action: Action) -> Option<MatchedRule> {
        self.matching(action)
            .reduce(|best, m| if m.source >= best.source { m } else { best })
    }

    /// Every rule for `action` that matches the call, in the order the sources are read.
    fn matching(&self, action: Action) -> impl Iterator<Item = MatchedRule> + '_ {
        let facts = CallFacts {
            tool: &self.req.spec.name,
            aliases: &self.req.spec.aliases,
            effects: self.req.effects,
            env: self.req.env,
        };
        let granted = self
            .grants
            .iter()
            .map(|r| (Action::Allow, r, RuleSource::Conversation));
        let configured = self
            .defaults
            .iter()
            .map(|(a, r)| (*a, r, RuleSource::Builtin))
            .chain(self.config.rules.iter().map(|(a, r, s, _)| (*a, r, *s)));
        configured
            .chain(granted)
            .filter(move |(a, rule, _)| *a == action && rule.matches(action, &facts))
            .map(move |(_, rule, source)| MatchedRule {
                rule: rule.text.clone(),
                action,
                source,
            })
    }

    /// Effects are the truth: a call with no effects changes nothing.
    fn read_only(&self) -> bool {
        self.req.effects.iter().all(Effect::is_read_only)
    }

    /// Browser effects are scoped to a site the rule names: an allow rule (or grant) for an
    /// origin is the person's trust in that site, so acting on it after reading its pages
    /// stays allowed; taint still asks for every other egress, and for sites not allowed.
    fn site_scoped(&self) -> bool {
        let effects = self.req.effects;
        !effects.is_empty()
            && effects.iter().all(|e| {
                matches!(
                    e.kind(),
                    EffectKind::BrowserNavigate | EffectKind::BrowserAct
                )
            })
    }

    /// The tool whose untrusted content the conversation holds, when this call is one such
    /// content could steer into harm: a risky effect carries a value the person did not write.
    fn steering_taint(&self) -> Option<Steered<'_>> {
        let value = self.unsaid.as_deref().filter(|_| !self.site_scoped())?;
        let by = self.tainted_by.as_deref()?;
        Some(Steered { by, value })
    }

    /// What the workspace's own configuration would run for this call (hooks, filters…).
    fn workspace_code(&self) -> Option<&'a Vec<String>> {
        self.req.effects.iter().find_map(|e| match e {
            Effect::ProcessExec { workspace_code, .. } if !workspace_code.is_empty() => {
                Some(workspace_code)
            }
            _ => None,
        })
    }

    fn decided(&self, decision: Action, matched: Option<MatchedRule>, why: String) -> Step {
        ControlFlow::Break(self.answer(decision, matched, why, false))
    }

    fn answer(
        &self,
        decision: Action,
        matched: Option<MatchedRule>,
        why: String,
        can_grant: bool,
    ) -> Review {
        Review {
            decision,
            score: self.risk.score,
            reasons: self.risk.reasons.clone(),
            matched,
            why,
            mode: self.mode,
            tainted_by: self.tainted_by.clone(),
            unsaid: self.unsaid.clone(),
            can_grant,
            outside_workspace: false,
        }
    }
}

/// A matched rule as the reasons quote it: "`rule` (source)".
fn cited(m: &MatchedRule) -> String {
    format!("`{}` ({})", m.rule, m.source.as_str())
}

/// Untrusted content could be steering this call: where it came from, and the value of the
/// call the person did not write.
struct Steered<'a> {
    by: &'a str,
    value: &'a str,
}

fn taint_note(steered: Steered<'_>) -> String {
    format!(
        "the conversation holds untrusted content from {} and this call sends data out or changes your records with “{}”, which you did not write",
        steered.by,
        quoted(steered.value)
    )
}

/// A value from the call as a reason quotes it: escaped to one line, at most 80 characters.
fn quoted(value: &str) -> String {
    let line = cowork_contract::text::printable_field(value);
    match line.char_indices().nth(79) {
        Some((cut, _)) if line.chars().count() > 80 => format!("{}…", &line[..cut]),
        _ => line.into_owned(),
    }
}

/// Why a path outside the workspace is refused, and what the person can do about it.
fn outside_workspace_why(path: &str, env: &EffectEnv, tool: &str) -> String {
    if let Some(link) = env.link_escape(Path::new(path)) {
        format!(
            "{link} — it counts as outside the workspace; copy the content into the workspace if the assistant should use it"
        )
    } else if env.workspace_roots.is_empty() {
        format!(
            "{path} is outside the workspace: no workspace is open — open its folder (the folder button above the chat, or `--workspace DIR`) or add an allow rule for it"
        )
    } else {
        format!(
            "{path} is outside the workspace roots — open its folder as a workspace or add an allow rule like `{tool}({path})`"
        )
    }
}

fn outside_workspace<'a>(effect: &'a Effect, env: &EffectEnv) -> Option<&'a str> {
    match effect {
        Effect::FsRead { path } | Effect::FsWrite { path } | Effect::FsDelete { path }
            if !env.is_inside_workspace(Path::new(path)) =>
        {
            Some(path)
        }
        _ => None,
    }
}

/// What accept-edits allows without asking: writing or deleting ordinary files inside the
/// workspace (the shadow FS journals them, so they can be rolled back). Protected files are asked
/// before this is reached.
fn is_workspace_edit(effect: &Effect, env: &EffectEnv) -> bool {
    match effect {
        Effect::FsWrite { path } | Effect::FsDelete { path } => {
            env.is_inside_workspace(Path::new(path))
        }
        other => other.kind() == EffectKind::NotesWrite,
    }
}

impl PolicyBridge {
    /// A write or delete of a protected file, or a read of one that holds credentials (see
    /// [`protected`]): the path, what it protects, and whether the call reads it.
    fn protected_effect<'a>(
        &self,
        effect: &'a Effect,
        env: &EffectEnv,
    ) -> Option<(&'a str, Protection, bool)> {
        let (path, reads) = match effect {
            Effect::FsWrite { path } | Effect::FsDelete { path } => (path, false),
            Effect::FsRead { path } => (path, true),
            _ => return None,
        };
        match protected::classify(path, Some(&self.data_dir), env)? {
            Protection::Configures(_) if reads => None,
            protection => Some((path.as_str(), protection, reads)),
        }
    }
}
