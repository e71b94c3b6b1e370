//! The PolicyBridge: one review for every tool call.
//!
//! `review` takes the tool, its computed effects, the caller and the conversation, and returns
//! allow | ask | deny with the deterministic risk score, its reasons, and the rule (and source)
//! that decided. Precedence: deny > ask > allow across all sources; among rules of the same
//! action the narrowest source is reported (conversation grant > workspace > user > built-in).
//! With no rule, the score decides (allow ≤ 3, ask 4–8, deny ≥ 9 by default).

mod conversation;
pub mod rules;
pub mod score;
mod settings;

pub use rules::{Action, CallFacts, Rule, grant_rules_for};
pub use score::{Reason, Risk};
pub use settings::Thresholds;

use conversation::ConversationStates;
use cowork_contract::{Effect, EffectEnv, EffectKind, ToolSpec};
use cowork_store::Store;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum PolicyError {
    #[error("settings file {path}: {message} — fix the file (or move it away) and try again")]
    Settings { path: PathBuf, message: String },
    #[error("policy state: {0}")]
    Store(String),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    #[default]
    Normal,
    /// Read-only effects only, until a plan is approved.
    Plan,
    /// Writes inside the workspace are allowed without asking (still reviewed and audited).
    AcceptEdits,
}

impl Mode {
    /// Accepts our names and Claude Code's (`default`, `acceptEdits`, `plan`). There is no
    /// bypass mode: every call is reviewed and audited.
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "normal" | "default" => Ok(Mode::Normal),
            "plan" => Ok(Mode::Plan),
            "accept-edits" | "acceptEdits" => Ok(Mode::AcceptEdits),
            "bypassPermissions" => Err("mode bypassPermissions does not exist in Cowork: every call is reviewed; use accept-edits or rules".into()),
            other => Err(format!("unknown mode {other:?}: use normal, plan or accept-edits")),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Normal => "normal",
            Mode::Plan => "plan",
            Mode::AcceptEdits => "accept-edits",
        }
    }
}

/// Where a rule came from, narrowest last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleSource {
    Builtin,
    User,
    Workspace,
    Conversation,
}

impl RuleSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            RuleSource::Builtin => "built-in",
            RuleSource::User => "user settings",
            RuleSource::Workspace => "workspace settings",
            RuleSource::Conversation => "this conversation",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct RuleEntry {
    pub action: Action,
    pub rule: String,
    pub source: RuleSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchedRule {
    pub rule: String,
    pub action: Action,
    pub source: RuleSource,
}

/// The PolicyBridge's answer, with everything the modal and `policy explain` show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Review {
    pub decision: Action,
    pub score: u8,
    pub reasons: Vec<Reason>,
    pub matched: Option<MatchedRule>,
    /// One sentence: why this decision.
    pub why: String,
    pub mode: Mode,
    pub tainted_by: Option<String>,
    /// Whether "this conversation" / "always" may be offered: not when an explicit ask rule or
    /// the taint rule forced the question (a grant would not stop the next ask anyway).
    pub can_grant: bool,
    /// A denial because a path lies outside the workspace roots: the call fails as a security
    /// violation, not as a plain denial.
    #[serde(default)]
    pub outside_workspace: bool,
}

pub struct ReviewRequest<'a> {
    pub spec: &'a ToolSpec,
    pub effects: &'a [Effect],
    pub conversation: &'a str,
    pub env: &'a EffectEnv,
    /// The conversation's tool profile (least privilege); None = every tool.
    pub allowed_tools: Option<&'a [String]>,
}

struct Config {
    rules: Vec<(Action, Rule, RuleSource, Option<PathBuf>)>,
    mode: Mode,
    thresholds: Thresholds,
}

pub struct PolicyBridge {
    user_settings: PathBuf,
    workspace_settings: Vec<PathBuf>,
    config: RwLock<Arc<Config>>,
    mode_override: RwLock<Option<Mode>>,
    conversations: ConversationStates,
}

/// Built-in defaults: the floor under every user's settings.
const BUILTIN_RULES: &[(Action, &str)] = &[
    (Action::Deny, "run_command(sudo:*)"),
    (Action::Deny, "run_command(su:*)"),
    (Action::Deny, "run_command(mkfs:*)"),
    (Action::Ask, "read_file(~/.ssh/**)"),
    // Code execution in a page: asked every time, whatever allows the page's origin.
    (Action::Ask, "browser_evaluate"),
];

pub fn workspace_settings_path(root: &Path) -> PathBuf {
    root.join(".cowork").join("settings.json")
}

impl PolicyBridge {
    pub fn open(store: &Store, workspace_roots: &[PathBuf]) -> Result<Self, PolicyError> {
        let bridge = PolicyBridge {
            user_settings: store.dir().settings_path(),
            workspace_settings: workspace_roots.iter().map(|r| workspace_settings_path(r)).collect(),
            config: RwLock::new(Arc::new(Config { rules: vec![], mode: Mode::Normal, thresholds: Thresholds::default() })),
            mode_override: RwLock::new(None),
            conversations: ConversationStates::open(store)?,
        };
        bridge.reload()?;
        Ok(bridge)
    }

    /// Re-reads the settings files (after an edit in the UI or by hand).
    pub fn reload(&self) -> Result<(), PolicyError> {
        let mut rules = Vec::new();
        for (action, text) in BUILTIN_RULES {
            rules.push((*action, Rule::parse(text).expect("built-in rules parse"), RuleSource::Builtin, None));
        }
        let user = settings::load(&self.user_settings)?;
        let mut mode = user.mode.unwrap_or_default();
        let thresholds = user.thresholds.unwrap_or_default();
        rules.extend(user.rules.into_iter().map(|(a, r)| (a, r, RuleSource::User, Some(self.user_settings.clone()))));
        for path in &self.workspace_settings {
            let ws = settings::load(path)?;
            mode = ws.mode.unwrap_or(mode);
            rules.extend(ws.rules.into_iter().map(|(a, r)| (a, r, RuleSource::Workspace, Some(path.clone()))));
        }
        *self.config.write().unwrap() = Arc::new(Config { rules, mode, thresholds });
        Ok(())
    }

    pub fn mode(&self) -> Mode {
        self.mode_override.read().unwrap().unwrap_or(self.config.read().unwrap().mode)
    }

    /// Sets the mode for this session (the window's switch); `persist` also writes it as the
    /// user's default.
    pub fn set_mode(&self, mode: Mode, persist: bool) -> Result<(), PolicyError> {
        if persist {
            settings::edit_rules(&self.user_settings, |perms| {
                perms.insert("defaultMode".into(), serde_json::json!(mode.as_str()));
            })?;
            self.reload()?;
        }
        *self.mode_override.write().unwrap() = Some(mode);
        Ok(())
    }

    pub fn thresholds(&self) -> Thresholds {
        self.config.read().unwrap().thresholds
    }

    /// Every rule in force for `conversation`, broadest source first.
    pub fn rules(&self, conversation: Option<&str>) -> Vec<RuleEntry> {
        let config = self.config.read().unwrap().clone();
        let mut out: Vec<RuleEntry> = config
            .rules
            .iter()
            .map(|(action, rule, source, file)| RuleEntry { action: *action, rule: rule.text.clone(), source: *source, file: file.clone() })
            .collect();
        if let Some(conv) = conversation {
            for rule in self.conversations.grants(conv) {
                out.push(RuleEntry { action: Action::Allow, rule: rule.text, source: RuleSource::Conversation, file: None });
            }
        }
        out
    }

    /// Whether a workspace settings file can take rules (the modal offers "always in this
    /// workspace" only then).
    pub fn has_workspace(&self) -> bool {
        !self.workspace_settings.is_empty()
    }

    fn settings_file(&self, source: &RuleSource) -> Result<&Path, PolicyError> {
        match source {
            RuleSource::User => Ok(&self.user_settings),
            RuleSource::Workspace => self.workspace_settings.first().map(PathBuf::as_path).ok_or_else(|| {
                PolicyError::Store("no workspace is open: pass --workspace DIR or add the rule to user settings".into())
            }),
            other => Err(PolicyError::Store(format!("rules from {} are not stored in a settings file", other.as_str()))),
        }
    }

    /// Adds a rule to the user's or the workspace's settings file (and reloads).
    pub fn add_rule(&self, action: Action, text: &str, source: RuleSource) -> Result<(), PolicyError> {
        let rule = Rule::parse(text).map_err(PolicyError::Store)?;
        let path = self.settings_file(&source)?;
        settings::edit_rules(path, |perms| {
            let list = perms.entry(action.as_str()).or_insert_with(|| serde_json::json!([]));
            if let Some(list) = list.as_array_mut()
                && !list.iter().any(|v| v.as_str() == Some(&rule.text))
            {
                list.push(serde_json::json!(rule.text));
            }
        })?;
        self.reload()
    }

    /// Removes a rule wherever it is stored (settings files or conversation grants). Returns how
    /// many entries were removed.
    pub fn remove_rule(&self, text: &str, conversation: Option<&str>) -> Result<usize, PolicyError> {
        let text = text.trim();
        let mut removed = 0;
        let mut files = vec![self.user_settings.clone()];
        files.extend(self.workspace_settings.iter().cloned());
        for path in files {
            if !path.exists() {
                continue;
            }
            settings::edit_rules(&path, |perms| {
                for action in ["allow", "ask", "deny"] {
                    if let Some(list) = perms.get_mut(action).and_then(|v| v.as_array_mut()) {
                        let before = list.len();
                        list.retain(|v| v.as_str() != Some(text));
                        removed += before - list.len();
                    }
                }
            })?;
        }
        if let Some(conv) = conversation {
            removed += self.conversations.revoke(conv, text)?;
        }
        self.reload()?;
        Ok(removed)
    }

    pub fn grant_for_conversation(&self, conversation: &str, rules: &[String]) -> Result<(), PolicyError> {
        self.conversations.grant(conversation, rules)
    }

    pub fn mark_tainted(&self, conversation: &str, by_tool: &str) -> Result<(), PolicyError> {
        self.conversations.taint(conversation, by_tool)
    }

    pub fn tainted_by(&self, conversation: &str) -> Option<String> {
        self.conversations.tainted_by(conversation)
    }

    /// The review. Pure: it reads state and changes nothing, so `explain` is the same call.
    pub fn review(&self, req: &ReviewRequest<'_>) -> Review {
        let config = self.config.read().unwrap().clone();
        let mode = self.mode();
        let tainted_by = self.conversations.tainted_by(req.conversation);
        let risk = score::assess(req.spec, req.effects, req.env, tainted_by.is_some());
        let facts = CallFacts { tool: &req.spec.name, aliases: &req.spec.aliases, effects: req.effects, env: req.env };
        let grants = self.conversations.grants(req.conversation);

        // The narrowest matching rule for each action.
        let find = |action: Action| -> Option<MatchedRule> {
            let mut best: Option<MatchedRule> = None;
            let granted = grants.iter().map(|r| (Action::Allow, r, RuleSource::Conversation));
            let configured = config.rules.iter().map(|(a, r, s, _)| (*a, r, *s));
            for (a, rule, source) in configured.chain(granted) {
                if a == action && rule.matches(action, &facts) && best.as_ref().is_none_or(|b| source >= b.source) {
                    best = Some(MatchedRule { rule: rule.text.clone(), action, source });
                }
            }
            best
        };
        // Browser effects are scoped to a site the rule names: an allow rule (or grant) for an
        // origin is the person's trust in that site, so acting on it after reading its pages
        // stays allowed; taint still asks for every other egress, and for sites not allowed.
        let site_scoped = !req.effects.is_empty() && req.effects.iter().all(|e| matches!(e.kind(), EffectKind::BrowserNavigate | EffectKind::BrowserAct));
        let is_egress = !site_scoped && req.effects.iter().any(|e| e.kind().is_egress());
        // Effects are the truth: a call with no effects changes nothing.
        let read_only = req.effects.iter().all(Effect::is_read_only);
        let review = |decision, matched, why: String, can_grant| Review {
            decision,
            score: risk.score,
            reasons: risk.reasons.clone(),
            matched,
            why,
            mode,
            tainted_by: tainted_by.clone(),
            can_grant,
            outside_workspace: false,
        };
        let taint_note = |by: &str| format!("the conversation holds untrusted content from {by} and this call sends data out");

        if let Some(allowed) = req.allowed_tools
            && !allowed.contains(&req.spec.name)
        {
            return review(Action::Deny, None, format!("{} is not in this conversation's tool profile", req.spec.name), false);
        }
        if let Some(m) = find(Action::Deny) {
            let why = format!("deny rule `{}` ({})", m.rule, m.source.as_str());
            return review(Action::Deny, Some(m), why, false);
        }
        if mode == Mode::Plan && !read_only {
            return review(Action::Deny, None, "plan mode allows read-only tools only, until the plan is approved".into(), false);
        }
        // Confinement: without an allow rule naming it, no file outside the workspace roots is
        // touched, whatever the score or ask rules say (deny > ask > allow: a missing allow is
        // the deny here).
        if let Some(path) = req.effects.iter().find_map(|e| outside_workspace(e, req.env))
            && find(Action::Allow).is_none()
        {
            let why = if req.env.workspace_roots.is_empty() {
                format!("{path} is outside the workspace: no workspace is open — open its folder (`--workspace DIR`, Settings → Workspaces) or add an allow rule for it")
            } else {
                format!("{path} is outside the workspace roots — open its folder as a workspace or add an allow rule like `{}({path})`", req.spec.name)
            };
            let mut denied = review(Action::Deny, None, why, false);
            denied.outside_workspace = true;
            return denied;
        }
        if let Some(m) = find(Action::Ask) {
            let why = format!("ask rule `{}` ({})", m.rule, m.source.as_str());
            return review(Action::Ask, Some(m), why, false);
        }
        if let Some(m) = find(Action::Allow) {
            if let (Some(by), true) = (&tainted_by, is_egress) {
                let why = format!("allowed by `{}` ({}), but {}", m.rule, m.source.as_str(), taint_note(by));
                return review(Action::Ask, Some(m), why, false);
            }
            let why = format!("allow rule `{}` ({})", m.rule, m.source.as_str());
            return review(Action::Allow, Some(m), why, false);
        }
        if let (Some(by), true) = (&tainted_by, is_egress) {
            return review(Action::Ask, None, format!("no rule; {}", taint_note(by)), false);
        }
        if mode == Mode::AcceptEdits && !req.effects.is_empty() && req.effects.iter().all(|e| is_workspace_edit(e, req.env)) {
            return review(Action::Allow, None, "accept-edits mode allows writes inside the workspace".into(), false);
        }
        let t = config.thresholds;
        let (decision, why) = if risk.score <= t.allow_max {
            (Action::Allow, format!("no rule; score {} ≤ {} is allowed by default", risk.score, t.allow_max))
        } else if risk.score >= t.deny_min {
            (Action::Deny, format!("no rule; score {} ≥ {} is denied by default — add an allow rule to permit it", risk.score, t.deny_min))
        } else {
            (Action::Ask, format!("no rule; score {} asks by default", risk.score))
        };
        review(decision, None, why, decision == Action::Ask)
    }
}

fn outside_workspace<'a>(effect: &'a Effect, env: &EffectEnv) -> Option<&'a str> {
    match effect {
        Effect::FsRead { path } | Effect::FsWrite { path } | Effect::FsDelete { path } if !env.is_inside_workspace(Path::new(path)) => Some(path),
        _ => None,
    }
}

/// What accept-edits allows without asking: writing or deleting ordinary files inside the
/// workspace (the shadow FS journals them, so they can be rolled back). Sensitive files still ask.
fn is_workspace_edit(effect: &Effect, env: &EffectEnv) -> bool {
    match effect {
        Effect::FsWrite { path } | Effect::FsDelete { path } => env.is_inside_workspace(Path::new(path)) && !score::is_sensitive(path),
        other => other.kind() == EffectKind::NotesWrite,
    }
}
