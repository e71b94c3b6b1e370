//! The PolicyBridge: one review for every tool call.
//!
//! `review` takes the tool, its computed effects, the caller and the conversation, and returns
//! allow | ask | deny with the deterministic risk score, its reasons, and the rule (and source)
//! that decided. Precedence: deny > ask > allow across all sources; among rules of the same
//! action the narrowest source is reported (conversation grant > workspace > user > built-in).
//! With no rule, the score decides (allow ≤ 3, ask 4–8, deny ≥ 9 by default).

mod conversation;
pub mod meaning;
pub mod profile;
pub mod protected;
pub mod provenance;
mod review;
pub mod rules;
pub mod score;
mod settings;
pub mod shell;
mod trust;

pub use profile::ToolProfile;
pub use protected::Protection;
pub use rules::{Action, CallFacts, Rule, grant_rules_for};
pub use score::{Reason, Risk};
pub use settings::Thresholds;
pub use trust::TrustState;

use conversation::ConversationStates;
use cowork_contract::{Effect, EffectEnv, EffectKind, ToolSpec};
use cowork_store::Store;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum PolicyError {
    #[error("settings file {path}: {message} — fix the file (or move it away) and try again")]
    Settings { path: PathBuf, message: String },
    #[error("policy state: {0}")]
    Store(String),
    #[error("{0}")]
    BadRule(String),
    /// A rule wider than a person usually means to grant; the shells say how to insist.
    #[error("{}", why.text)]
    RuleTooBroad {
        rule: String,
        why: crate::plain::Words,
    },
    #[error(
        "the workspace {root} is not trusted, so an allow rule in its settings would not apply — trust it first, or add the rule to your user settings"
    )]
    WorkspaceNotTrusted { root: PathBuf },
    #[error("{root} is not an open workspace")]
    NotAWorkspace { root: PathBuf },
    /// A rule naming no tool there is does nothing — a misspelled deny protects nothing.
    #[error("{}", unknown_tool_text(rule, name, suggestion.as_deref()))]
    UnknownTool {
        rule: String,
        name: String,
        suggestion: Option<String>,
    },
    #[error(
        "{path} changed since it was shown to you; look at it again before trusting the folder"
    )]
    ChangedSinceShown { path: PathBuf },
    /// A rule the organisation set: only whoever manages the computer can remove it.
    #[error(
        "`{rule}` is set by your organisation in {} — it cannot be removed here; ask whoever manages this computer",
        file.display()
    )]
    ManagedRule { rule: String, file: PathBuf },
    /// The organisation's managed settings cap the mode.
    #[error(
        "mode {} is wider than your organisation allows ({} at most, set in {}) — ask whoever manages this computer",
        wanted.as_str(), ceiling.as_str(), file.display()
    )]
    AboveCeiling {
        wanted: Mode,
        ceiling: Mode,
        file: PathBuf,
    },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
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
    /// How much the mode lets through: a workspace may lower the person's mode, never raise it.
    pub(crate) fn latitude(self) -> u8 {
        match self {
            Mode::Plan => 0,
            Mode::Normal => 1,
            Mode::AcceptEdits => 2,
        }
    }

    /// Whichever of the two lets less through (`self` when they are alike).
    pub fn narrower(self, other: Mode) -> Mode {
        if other.latitude() < self.latitude() {
            other
        } else {
            self
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
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RuleSource {
    Builtin,
    /// The organisation's managed settings (`/etc/cowork/managed-settings.json`): the person
    /// cannot remove them, and their deny and ask rules stand over every allow.
    Managed,
    User,
    Workspace,
    Conversation,
}

impl RuleSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            RuleSource::Builtin => "built-in",
            RuleSource::Managed => "your organisation (managed)",
            RuleSource::User => "user settings",
            RuleSource::Workspace => "workspace settings",
            RuleSource::Conversation => "this conversation",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RuleEntry {
    pub action: Action,
    pub rule: String,
    pub source: RuleSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// Why this allow rule is broad (see [`Rule::breadth`]): the window and `rules list` warn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broad: Option<crate::plain::Words>,
    /// What the rule covers, in words (see [`meaning::meaning`]).
    pub meaning: crate::plain::Words,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MatchedRule {
    pub rule: String,
    pub action: Action,
    pub source: RuleSource,
}

/// The PolicyBridge's answer, with everything the modal and `policy explain` show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Review {
    pub decision: Action,
    pub score: u8,
    pub reasons: Vec<Reason>,
    pub matched: Option<MatchedRule>,
    /// One sentence: why this decision.
    pub why: String,
    pub mode: Mode,
    pub tainted_by: Option<String>,
    /// In a conversation holding untrusted content, a value steering this call's risky effect
    /// (a recipient, a payee, a site…) that the person did not write: why taint asks
    /// (`provenance`). None when the person wrote them all, or nothing untrusted was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsaid: Option<String>,
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
    /// The call's arguments: where an effect does not name its whole harm, provenance looks
    /// at all of them.
    pub args: &'a serde_json::Value,
    pub effects: &'a [Effect],
    pub conversation: &'a str,
    pub env: &'a EffectEnv,
    /// The conversation's tool profile (least privilege); None = every tool, any mode.
    pub profile: Option<&'a ToolProfile>,
    /// Allow rules the person gave for this run only (see [`PolicyBridge::run_grant`]): judged
    /// as this conversation's grants are, never kept.
    pub run_grants: &'a [Rule],
    /// The values kept from the model that the call's placeholders stand for: the gate puts
    /// them in once the call is approved, so the review says what they are.
    pub carried: &'a [crate::placeholders::Kept],
}

#[derive(Default)]
struct Config {
    rules: Vec<(Action, Rule, RuleSource, Option<PathBuf>)>,
    /// The person's mode (user settings).
    mode: Mode,
    /// The narrowest mode a workspace asks for: it lowers the person's, never raises it.
    workspace_mode: Option<Mode>,
    managed: Managed,
    thresholds: Thresholds,
    problems: Vec<PolicyProblem>,
    workspaces: Vec<WorkspaceStatus>,
    /// The person's hooks, and those of workspaces they trust.
    hooks: Vec<crate::hooks::Hook>,
}

/// A settings file's rule that is broken or not applied, and what was done instead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PolicyProblem {
    pub file: PathBuf,
    pub message: String,
}

/// One open workspace's settings as the policy sees them: what they ask for, what applies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WorkspaceStatus {
    pub root: PathBuf,
    pub settings: PathBuf,
    pub state: TrustState,
    /// What trusting pins, as read now: the settings file and the repository's programs
    /// (`trust::digest`).
    pub digest: String,
    /// What trusting would add: the allow rules (in force only while trusted).
    pub allow: Vec<String>,
    /// These apply whether trusted or not (they only narrow).
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    /// The mode it asks for; it can only lower yours.
    pub mode: Option<Mode>,
    /// Its hooks: commands run at each call or turn's end, only while it is trusted.
    pub hooks: Vec<String>,
    /// Allow rules that cover more than a person usually means (`*`, a bare `run_command`,
    /// `read_file(//**)`): shown as warnings before trusting.
    pub broad: Vec<crate::plain::Words>,
}

/// A standing permission the person gave: an "always" allow rule in their settings or a
/// workspace's, or a "this conversation" grant. `cowork policy grants` and Settings list them
/// all in one place; each can be revoked.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Grant {
    pub rule: String,
    /// What it covers, in words.
    pub meaning: crate::plain::Words,
    pub source: RuleSource,
    /// The settings file of an "always" grant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// The conversation of a "this conversation" grant, and when it was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
}

/// What the organisation's managed settings impose, as the window and `policy explain` show it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Managed {
    /// The managed files that exist and were read.
    pub files: Vec<PathBuf>,
    /// The widest mode anyone may choose, and the file that set it.
    pub ceiling: Option<(Mode, PathBuf)>,
    /// How many rules they add.
    pub rules: usize,
}

/// Where an organisation puts its managed settings; `COWORK_MANAGED_SETTINGS` names one more
/// (a deployment's or a test's). Both apply: another file can only add to what the system file
/// imposes, never replace it. The second is read only when only the administrator can write it
/// (owned by root, not writable by group or others): otherwise it would be the person's own
/// rules passed off as the organisation's, out of `policy grants`' sight.
fn managed_settings_paths() -> Vec<(PathBuf, bool)> {
    let mut paths = vec![(PathBuf::from("/etc/cowork/managed-settings.json"), true)];
    paths.extend(std::env::var_os("COWORK_MANAGED_SETTINGS").map(|p| (PathBuf::from(p), false)));
    paths
}

/// Why a managed settings file named by the environment is not read, if it is not.
fn not_administrators(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    (meta.uid() != 0 || meta.mode() & 0o022 != 0).then(|| {
        "not applied: a managed settings file must be owned by root and writable by no one else"
            .into()
    })
}

pub struct PolicyBridge {
    user_settings: PathBuf,
    /// Cowork's data folder: every file in it configures Cowork (protected).
    data_dir: PathBuf,
    /// The open workspace folders (the window can open another one).
    roots: RwLock<Vec<PathBuf>>,
    trust: trust::TrustStore,
    config: RwLock<Arc<Config>>,
    mode_override: RwLock<Option<Mode>>,
    conversations: ConversationStates,
    /// Values that reach a remote model only as placeholders (see `placeholders.rs`).
    placeholders: crate::placeholders::Placeholders,
    tool_kinds: RwLock<Option<ToolKinds>>,
    tool_names: RwLock<Option<ToolNames>>,
    /// What a folder's repository configured to run (a family's knowledge, lent to the policy):
    /// trust covers these as the review showed them.
    repository_programs: RwLock<Option<RepositoryPrograms>>,
    /// The families' default rules (see `ToolProvider::default_rules`): the floor under every
    /// person's settings, source `builtin`.
    defaults: RwLock<Arc<Vec<(Action, Rule)>>>,
    /// The settings files' modification times at the last `catch_up`.
    settings_seen: Mutex<Option<Vec<Option<std::time::SystemTime>>>>,
}

/// What the policy knows of a tool by name: its declared effect kinds (what a rule on it is
/// judged by) and its title (how a rule on it is said).
#[derive(Clone, Debug, Default)]
pub struct ToolFacts {
    pub kinds: Vec<EffectKind>,
    pub title: String,
}

/// A tool's facts by name (the registry's knowledge, lent to the policy).
pub type ToolKinds = Arc<dyn Fn(&str) -> Option<ToolFacts> + Send + Sync>;

/// Every tool name the registry knows (aliases included), for naming the one a rule misspelled.
pub type ToolNames = Arc<dyn Fn() -> Vec<String> + Send + Sync>;

/// The programs a folder's repository configured to run (hooks, filters, fsmonitor…), as the
/// trust review lists them.
pub type RepositoryPrograms = Arc<dyn Fn(&Path) -> Vec<String> + Send + Sync>;

fn unknown_tool_text(rule: &str, name: &str, suggestion: Option<&str>) -> String {
    let hint = suggestion.map_or(String::new(), |s| format!(" — did you mean `{s}`?"));
    format!(
        "no tool is named `{name}`{hint} (`{rule}` would do nothing; a tool a pack will bring later can be named with --force)"
    )
}

/// The known name closest to `name`, when it is close enough to be a slip.
fn closest_name(name: &str, names: &[String]) -> Option<String> {
    names
        .iter()
        .map(|n| {
            (
                strsim::damerau_levenshtein(&name.to_lowercase(), &n.to_lowercase()),
                n,
            )
        })
        .filter(|(distance, n)| *distance <= 2.max(n.len() / 4))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, n)| n.clone())
}

/// A settings file's problems, each naming the file.
fn problems_in(file: &Path, messages: Vec<String>) -> Vec<PolicyProblem> {
    messages
        .into_iter()
        .map(|message| PolicyProblem {
            file: file.to_path_buf(),
            message,
        })
        .collect()
}

/// A store error, as the policy reports it.
fn db_err(e: impl std::fmt::Display) -> PolicyError {
    PolicyError::Store(e.to_string())
}

/// Adds one managed settings file to `config`: its rules (source `managed`), its mode ceiling
/// (the narrowest of all managed files wins) and its thresholds, which can only make the
/// defaults stricter. A file that cannot be read stops the policy, as the person's own does:
/// running without the organisation's rules would be wider than it allows.
fn read_managed(path: &Path, config: &mut Config) -> Result<(), PolicyError> {
    let loaded = settings::load(path)?;
    if loaded.bytes.is_none() {
        return Ok(());
    }
    let managed = &mut config.managed;
    managed.files.push(path.to_path_buf());
    managed.rules += loaded.rules.len();
    if let Some(ceiling) = loaded.ceiling {
        let narrower = managed
            .ceiling
            .as_ref()
            .is_none_or(|(now, _)| ceiling.narrower(*now) == ceiling);
        if narrower {
            managed.ceiling = Some((ceiling, path.to_path_buf()));
        }
    }
    if let Some(t) = loaded.thresholds {
        let own = &mut config.thresholds;
        own.allow_max = own.allow_max.min(t.allow_max);
        own.deny_min = own.deny_min.min(t.deny_min);
    }
    config.problems.extend(problems_in(path, loaded.problems));
    config.rules.extend(
        loaded
            .rules
            .into_iter()
            .map(|(a, r)| (a, r, RuleSource::Managed, Some(path.to_path_buf()))),
    );
    Ok(())
}

pub fn workspace_settings_path(root: &Path) -> PathBuf {
    root.join(".cowork").join("settings.json")
}

impl PolicyBridge {
    pub fn open(store: &Store, workspace_roots: &[PathBuf]) -> Result<Self, PolicyError> {
        let bridge = PolicyBridge {
            user_settings: store.dir().settings_path(),
            data_dir: store
                .dir()
                .root()
                .canonicalize()
                .unwrap_or_else(|_| store.dir().root().to_path_buf()),
            roots: RwLock::new(workspace_roots.to_vec()),
            trust: trust::TrustStore::open(store)?,
            config: RwLock::default(),
            mode_override: RwLock::new(None),
            conversations: ConversationStates::open(store)?,
            placeholders: crate::placeholders::Placeholders::open(store).map_err(db_err)?,
            tool_kinds: RwLock::new(None),
            tool_names: RwLock::new(None),
            repository_programs: RwLock::new(None),
            defaults: RwLock::default(),
            settings_seen: Mutex::default(),
        };
        bridge.reload()?;
        Ok(bridge)
    }

    /// Opens other workspace folders (the window's picker), closing the ones open now: their
    /// settings are read as the person's trust in each allows.
    pub fn set_workspaces(&self, roots: &[PathBuf]) -> Result<(), PolicyError> {
        *self.roots.write().unwrap() = roots.to_vec();
        self.reload()
    }

    fn roots(&self) -> Vec<PathBuf> {
        self.roots.read().unwrap().clone()
    }

    /// Where rules are judged to reach: the open workspaces and the person's home folder.
    fn rules_env(&self) -> EffectEnv {
        EffectEnv {
            workspace_roots: self.roots(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            ..Default::default()
        }
    }

    /// Catches up with what another Cowork process changed — rules and modes in the settings
    /// files, grants, taint and words in the database — before a call is reviewed.
    pub fn catch_up(&self) -> Result<(), PolicyError> {
        self.conversations.catch_up()?;
        let mut files = vec![self.user_settings.clone()];
        files.extend(self.roots().iter().map(|r| workspace_settings_path(r)));
        let stamps: Vec<Option<std::time::SystemTime>> = files
            .iter()
            .map(|f| std::fs::metadata(f).and_then(|m| m.modified()).ok())
            .collect();
        let changed = {
            let mut seen = self.settings_seen.lock().unwrap();
            let changed = seen.as_ref().is_some_and(|s| *s != stamps);
            *seen = Some(stamps);
            changed
        };
        if changed {
            self.reload()?;
        }
        Ok(())
    }

    /// Whether tools are paused for every Cowork process of this data dir (the window's "Pause
    /// all tools"), and setting it: a file in the data dir, which every process can see.
    pub fn paused_everywhere(&self) -> bool {
        self.data_dir.join("tools-paused").exists()
    }

    pub fn set_paused_everywhere(&self, paused: bool) {
        let marker = self.data_dir.join("tools-paused");
        let done = match paused {
            true => std::fs::write(&marker, b""),
            false => std::fs::remove_file(&marker).or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            }),
        };
        if let Err(e) = done {
            tracing::error!("{}: {e}", marker.display());
        }
    }

    /// Re-reads the settings files (after an edit in the UI or by hand).
    pub fn reload(&self) -> Result<(), PolicyError> {
        let user = settings::load(&self.user_settings)?;
        let file = || Some(self.user_settings.clone());
        let mut config = Config {
            rules: user
                .rules
                .into_iter()
                .map(|(a, r)| (a, r, RuleSource::User, file()))
                .collect(),
            mode: user.mode.unwrap_or_default(),
            workspace_mode: None,
            managed: Managed::default(),
            thresholds: user.thresholds.unwrap_or_default(),
            problems: problems_in(&self.user_settings, user.problems),
            workspaces: Vec::new(),
            hooks: user.hooks,
        };
        for (path, system) in managed_settings_paths() {
            match (system, not_administrators(&path)) {
                (false, Some(message)) => config.problems.push(PolicyProblem {
                    file: path,
                    message,
                }),
                _ => read_managed(&path, &mut config)?,
            }
        }
        // Scores between the two thresholds ask: an allow ceiling at or above the deny floor
        // (a managed `denyMin` under the person's `allowMax`) must not let them through.
        let t = &mut config.thresholds;
        t.allow_max = t.allow_max.min(t.deny_min.saturating_sub(1));
        for root in &self.roots() {
            self.read_workspace(root, &mut config)?;
        }
        *self.config.write().unwrap() = Arc::new(config);
        Ok(())
    }

    /// Adds one open workspace's settings to `config`, as far as the person's trust in it lets
    /// them apply.
    fn read_workspace(&self, root: &Path, config: &mut Config) -> Result<(), PolicyError> {
        let path = &workspace_settings_path(root);
        let ws = settings::load(path)?;
        let digest = self.trust_digest(root, ws.bytes.as_deref());
        let state = self.trust.state(root, &digest);
        let trusted = state == TrustState::Trusted;
        config.problems.extend(problems_in(path, ws.problems));
        if let Some(wanted) = ws.mode {
            config.workspace_mode =
                Some(config.workspace_mode.map_or(wanted, |m| m.narrower(wanted)));
        }
        let texts = |action: Action| {
            ws.rules
                .iter()
                .filter(|(a, _)| *a == action)
                .map(|(_, r)| r.text.clone())
                .collect::<Vec<_>>()
        };
        let allow = texts(Action::Allow);
        let hooks: Vec<String> = ws.hooks.iter().map(|h| h.describe()).collect();
        if !trusted && !hooks.is_empty() {
            config.problems.push(PolicyProblem {
                file: path.clone(),
                message: format!(
                    "{} hook(s) not run: this workspace is not trusted — `cowork workspace trust {}` shows them and asks",
                    hooks.len(),
                    root.display()
                ),
            });
        }
        if trusted {
            config.hooks.extend(ws.hooks);
        }
        if !trusted && !allow.is_empty() {
            config.problems.push(PolicyProblem {
                file: path.clone(),
                message: format!(
                    "{} allow rule(s) not applied: this workspace is {} — `cowork workspace trust {}` shows them and asks",
                    allow.len(),
                    if state == TrustState::Changed { "trusted, but its settings changed since" } else { "not trusted" },
                    root.display()
                ),
            });
        }
        config.workspaces.push(WorkspaceStatus {
            root: root.to_path_buf(),
            settings: path.clone(),
            state,
            digest,
            broad: vec![],
            allow,
            ask: texts(Action::Ask),
            deny: texts(Action::Deny),
            mode: ws.mode,
            hooks,
        });
        // Untrusted settings only narrow: their deny and ask rules apply, allow rules wait.
        config.rules.extend(
            ws.rules
                .into_iter()
                .filter(|(a, _)| trusted || *a != Action::Allow)
                .map(|(a, r)| (a, r, RuleSource::Workspace, Some(path.clone()))),
        );
        Ok(())
    }

    /// The mode in force: the person's (this session's choice, else their settings), lowered by
    /// a workspace that asks for a narrower one and by the organisation's ceiling — never raised.
    pub fn mode(&self) -> Mode {
        let person = self.person_mode();
        let config = self.config.read().unwrap();
        let lowered = match config.workspace_mode {
            Some(ws) => person.narrower(ws),
            None => person,
        };
        match &config.managed.ceiling {
            Some((ceiling, _)) => lowered.narrower(*ceiling),
            None => lowered,
        }
    }

    /// The hooks that run at `event` for `tool`, known also as `aliases` (for `Stop`, every
    /// Stop hook).
    pub fn hooks(
        &self,
        event: crate::hooks::HookEvent,
        tool: &str,
        aliases: &[String],
    ) -> Vec<crate::hooks::Hook> {
        let config = self.config.read().unwrap();
        let stop = event == crate::hooks::HookEvent::Stop;
        config
            .hooks
            .iter()
            .filter(|h| h.event == event && (stop || h.matches(tool, aliases)))
            .cloned()
            .collect()
    }

    /// What the organisation's managed settings impose (nothing when there are none).
    pub fn managed(&self) -> Managed {
        self.config.read().unwrap().managed.clone()
    }

    /// The mode the person chose, before any workspace lowers it.
    pub fn person_mode(&self) -> Mode {
        self.mode_override
            .read()
            .unwrap()
            .unwrap_or(self.config.read().unwrap().mode)
    }

    /// Rules that are broken or not applied, per file: the window and `policy rules list` show
    /// them. A rule naming no installed tool is one (judged with the tools known now).
    pub fn problems(&self) -> Vec<PolicyProblem> {
        let config = self.config.read().unwrap();
        let mut problems = config.problems.clone();
        for (_, rule, _, file) in &config.rules {
            if let Err(e) = self.check_tool_name(rule) {
                problems.push(PolicyProblem {
                    file: file.clone().unwrap_or_default(),
                    message: e.to_string(),
                });
            }
        }
        problems
    }

    /// A rule's tool must exist, unless it is a pattern or an MCP tool (a pack may bring it).
    fn check_tool_name(&self, rule: &Rule) -> Result<(), PolicyError> {
        let Some(name) = Rule::tool_part(&rule.text).filter(|n| !n.contains('*')) else {
            return Ok(());
        };
        let names = self.tool_names.read().unwrap().as_ref().map(|f| f());
        let Some(names) = names.filter(|n| !n.is_empty()) else {
            return Ok(());
        };
        if name.starts_with("mcp__") || self.kinds_of(&rule.text).is_some() {
            return Ok(());
        }
        Err(PolicyError::UnknownTool {
            rule: rule.text.clone(),
            name: name.to_string(),
            suggestion: closest_name(name, &names),
        })
    }

    /// Each open workspace: its trust, what its settings ask for, and which of its allow rules
    /// are broad (judged with the effect kinds of the tools installed now).
    pub fn workspaces(&self) -> Vec<WorkspaceStatus> {
        let mut list = self.config.read().unwrap().workspaces.clone();
        let env = self.rules_env();
        for ws in &mut list {
            ws.broad = ws
                .allow
                .iter()
                .filter_map(|text| {
                    Rule::parse(text)
                        .ok()?
                        .breadth(&self.kinds_of(text).unwrap_or_default(), &env)
                })
                .collect();
        }
        list
    }

    /// Tells the bridge what each tool does (its declared effect kinds) and which tools there
    /// are, for judging rules.
    pub fn set_tool_kinds(&self, lookup: ToolKinds, names: ToolNames) {
        *self.tool_kinds.write().unwrap() = Some(lookup);
        *self.tool_names.write().unwrap() = Some(names);
    }

    /// The families' default rules. One that does not parse is a family's bug: it is logged and
    /// left out, never taken as a wider rule.
    pub fn set_default_rules(&self, rules: &[cowork_contract::DefaultRule]) {
        let parsed = rules
            .iter()
            .filter_map(|r| match Rule::parse(r.rule) {
                Ok(rule) => Some((Action::from(r.action), rule)),
                Err(e) => {
                    tracing::error!(rule = r.rule, "a family's default rule does not parse: {e}");
                    None
                }
            })
            .collect();
        *self.defaults.write().unwrap() = Arc::new(parsed);
    }

    /// The declared effect kinds of the tool a rule names; None for a pattern or an unknown tool.
    pub fn kinds_of(&self, rule_text: &str) -> Option<Vec<EffectKind>> {
        self.facts_of(rule_text).map(|facts| facts.kinds)
    }

    /// The facts of the tool a rule names; None for a pattern or an unknown tool.
    fn facts_of(&self, rule_text: &str) -> Option<ToolFacts> {
        let name = Rule::tool_part(rule_text)?;
        self.tool_kinds
            .read()
            .unwrap()
            .as_ref()
            .and_then(|lookup| lookup(name))
    }

    /// Whether every open workspace is trusted as it is now (none open: false): its settings and
    /// its repository's programs are read again, so a hook added since the person trusted it
    /// is not covered. Tools that start programs let a repository's own configuration run only
    /// then.
    pub fn workspace_trusted(&self) -> bool {
        let workspaces = self.config.read().unwrap().workspaces.clone();
        !workspaces.is_empty()
            && workspaces.iter().all(|w| {
                w.state == TrustState::Trusted
                    && self.trust.state(&w.root, &self.current_digest(&w.root))
                        == TrustState::Trusted
            })
    }

    /// Lends the policy a family's knowledge of what a repository configured to run.
    pub fn set_repository_programs(&self, programs: RepositoryPrograms) {
        *self.repository_programs.write().unwrap() = Some(programs);
        if let Err(e) = self.reload() {
            tracing::error!("reloading settings: {e}");
        }
    }

    /// What trust in `root` is pinned to, from its settings bytes and its repository's programs.
    fn trust_digest(&self, root: &Path, settings: Option<&[u8]>) -> String {
        let lookup = self.repository_programs.read().unwrap().clone();
        let programs = lookup.map(|f| f(root)).unwrap_or_default();
        trust::digest(settings, &programs)
    }

    /// [`Self::trust_digest`] of the folder as it is on disk now.
    fn current_digest(&self, root: &Path) -> String {
        let settings = std::fs::read(workspace_settings_path(root)).ok();
        self.trust_digest(root, settings.as_deref())
    }

    fn workspace_index(&self, root: &Path) -> Result<usize, PolicyError> {
        let root_c = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        self.roots()
            .iter()
            .position(|r| *r == root_c || r == root)
            .ok_or_else(|| PolicyError::NotAWorkspace {
                root: root.to_path_buf(),
            })
    }

    /// The person trusts an open workspace as they were shown it: `seen_digest` is the
    /// [`WorkspaceStatus::digest`] of what they saw, so a file changed in between is refused.
    pub fn trust_workspace(&self, root: &Path, seen_digest: &str) -> Result<(), PolicyError> {
        let root = &self.roots()[self.workspace_index(root)?];
        let file = workspace_settings_path(root);
        let now = self.current_digest(root);
        if now != seen_digest {
            return Err(PolicyError::ChangedSinceShown { path: file });
        }
        self.trust.trust(root, &now)?;
        self.reload()
    }

    /// Withdraws trust from a folder (open or not). Returns whether it was trusted.
    pub fn untrust_workspace(&self, root: &Path) -> Result<bool, PolicyError> {
        let root_c = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let removed = self.trust.untrust(&root_c)?;
        self.reload()?;
        Ok(removed)
    }

    /// Every trusted folder, with when it was trusted.
    pub fn trusted_workspaces(&self) -> Result<Vec<(String, String)>, PolicyError> {
        self.trust.list()
    }

    /// Sets the mode for this session (the window's switch); `persist` also writes it as the
    /// user's default.
    pub fn set_mode(&self, mode: Mode, persist: bool) -> Result<(), PolicyError> {
        if let Some((ceiling, file)) = self.managed().ceiling
            && mode.narrower(ceiling) != mode
        {
            return Err(PolicyError::AboveCeiling {
                wanted: mode,
                ceiling,
                file,
            });
        }
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
        let defaults = self.defaults.read().unwrap().clone();
        let env = self.rules_env();
        let entry = |action: Action, rule: &Rule, source: RuleSource, file: Option<PathBuf>| {
            let facts = self.facts_of(&rule.text);
            // Only a person's allow rule is warned about: the built-in ones are the floor, a
            // conversation's grants were shown when given.
            let judged = action == Action::Allow
                && matches!(source, RuleSource::User | RuleSource::Workspace);
            RuleEntry {
                action,
                rule: rule.text.clone(),
                source,
                file,
                broad: judged
                    .then(|| rule.breadth(&facts.clone().unwrap_or_default().kinds, &env))
                    .flatten(),
                meaning: meaning::meaning(rule, facts.as_ref()),
            }
        };
        let mut out: Vec<RuleEntry> = defaults
            .iter()
            .map(|(action, rule)| entry(*action, rule, RuleSource::Builtin, None))
            .collect();
        out.extend(
            config
                .rules
                .iter()
                .map(|(action, rule, source, file)| entry(*action, rule, *source, file.clone())),
        );
        if let Some(conv) = conversation {
            for rule in self.conversations.grants(conv) {
                out.push(entry(Action::Allow, &rule, RuleSource::Conversation, None));
            }
        }
        out
    }

    /// Whether a workspace settings file can take allow rules (the modal offers "always in this
    /// workspace" only then): the first workspace is open and trusted.
    pub fn has_workspace(&self) -> bool {
        self.config
            .read()
            .unwrap()
            .workspaces
            .first()
            .is_some_and(|w| w.state == TrustState::Trusted)
    }

    fn settings_file(&self, source: &RuleSource) -> Result<PathBuf, PolicyError> {
        match source {
            RuleSource::User => Ok(self.user_settings.clone()),
            RuleSource::Workspace => self.roots().first().map(|r| workspace_settings_path(r)).ok_or_else(|| {
                PolicyError::Store("no workspace is open: pass --workspace DIR or add the rule to user settings".into())
            }),
            other => Err(PolicyError::Store(format!("rules from {} are not stored in a settings file", other.as_str()))),
        }
    }

    /// Edits a settings file on the person's behalf. A workspace file they trusted stays trusted
    /// (re-pinned to the new bytes: the change is theirs); an untrusted one stays untrusted.
    fn edit_settings_file(
        &self,
        path: &Path,
        edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
    ) -> Result<(), PolicyError> {
        let roots = self.roots();
        let workspace = roots
            .iter()
            .position(|r| workspace_settings_path(r) == path);
        // Judged on the file as it is now: one changed since the last reload is not re-pinned.
        let was_trusted = workspace.is_some_and(|i| {
            self.trust.state(&roots[i], &self.current_digest(&roots[i])) == TrustState::Trusted
        });
        settings::edit_rules(path, edit)?;
        if let (Some(i), true) = (workspace, was_trusted) {
            self.trust
                .trust(&roots[i], &self.current_digest(&roots[i]))?;
        }
        Ok(())
    }

    /// Adds a rule to the user's or the workspace's settings file (and reloads). Checked first:
    /// a rule that can never match is refused, and an allow rule wider than a person usually
    /// means (see [`Rule::breadth`]) is refused unless `force`; `kinds` are the effect kinds of
    /// the tool it names, when that tool is known.
    pub fn add_rule_checked(
        &self,
        action: Action,
        text: &str,
        source: RuleSource,
        force: bool,
    ) -> Result<Option<crate::plain::Words>, PolicyError> {
        let (rule, broad) = self.checked_rule(action, text, force)?;
        if action == Action::Allow && source == RuleSource::Workspace && !self.has_workspace() {
            let root = self.roots().first().cloned().unwrap_or_default();
            return Err(PolicyError::WorkspaceNotTrusted { root });
        }
        self.add_rule(action, &rule.text, source)?;
        Ok(broad)
    }

    /// An allow rule the person gives for one run only (`cowork chat --allow`), held to what
    /// a rule they add is: it must name a tool there is, be able to match, and be no wider than
    /// a person usually means.
    pub fn run_grant(&self, text: &str) -> Result<Rule, PolicyError> {
        self.checked_rule(Action::Allow, text, false)
            .map(|(rule, _)| rule)
    }

    /// `text` parsed and checked as [`PolicyBridge::add_rule_checked`] says, with why it is
    /// broad (an allow rule; refused unless `force`).
    fn checked_rule(
        &self,
        action: Action,
        text: &str,
        force: bool,
    ) -> Result<(Rule, Option<crate::plain::Words>), PolicyError> {
        let rule = Rule::parse(text).map_err(PolicyError::BadRule)?;
        if !force {
            self.check_tool_name(&rule)?;
        }
        let kinds = self.kinds_of(text);
        let kinds = kinds.as_deref();
        rule.check(kinds).map_err(PolicyError::BadRule)?;
        let broad = if action == Action::Allow {
            rule.breadth(kinds.unwrap_or_default(), &self.rules_env())
        } else {
            None
        };
        if let (Some(why), false) = (&broad, force) {
            return Err(PolicyError::RuleTooBroad {
                rule: rule.text.clone(),
                why: why.clone(),
            });
        }
        Ok((rule, broad))
    }

    /// Adds a rule to the user's or the workspace's settings file (and reloads): the approval
    /// modal's narrow grants. People's own rules go through [`PolicyBridge::add_rule_checked`].
    pub fn add_rule(
        &self,
        action: Action,
        text: &str,
        source: RuleSource,
    ) -> Result<(), PolicyError> {
        let rule = Rule::parse(text).map_err(PolicyError::BadRule)?;
        let path = self.settings_file(&source)?;
        self.edit_settings_file(&path, |perms| {
            let list = perms
                .entry(action.as_str())
                .or_insert_with(|| serde_json::json!([]));
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
    pub fn remove_rule(
        &self,
        text: &str,
        conversation: Option<&str>,
    ) -> Result<usize, PolicyError> {
        let text = text.trim();
        let managed = self
            .config
            .read()
            .unwrap()
            .rules
            .iter()
            .find_map(|(_, r, source, file)| {
                (*source == RuleSource::Managed && r.text == text).then(|| file.clone())
            });
        let mut removed = 0;
        let mut files = vec![self.user_settings.clone()];
        files.extend(self.roots().iter().map(|r| workspace_settings_path(r)));
        for path in files {
            if !path.exists() {
                continue;
            }
            self.edit_settings_file(&path, |perms| {
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
        match managed {
            // Nothing of the person's by that text: the organisation's rule stays.
            Some(file) if removed == 0 => Err(PolicyError::ManagedRule {
                rule: text.to_string(),
                file: file.unwrap_or_default(),
            }),
            _ => Ok(removed),
        }
    }

    /// Every standing permission the person gave (see [`Grant`]): their allow rules, then
    /// every conversation's grants, oldest first.
    pub fn grants(&self) -> Result<Vec<Grant>, PolicyError> {
        let mut out: Vec<Grant> = self
            .rules(None)
            .into_iter()
            .filter(|r| {
                r.action == Action::Allow
                    && matches!(r.source, RuleSource::User | RuleSource::Workspace)
            })
            .map(|r| Grant {
                rule: r.rule,
                meaning: r.meaning,
                source: r.source,
                file: r.file,
                conversation: None,
                since: None,
            })
            .collect();
        for (conversation, rule, since) in self.conversations.all_grants()? {
            let Ok(parsed) = Rule::parse(&rule) else {
                continue;
            };
            out.push(Grant {
                meaning: meaning::meaning(&parsed, self.facts_of(&rule).as_ref()),
                rule,
                source: RuleSource::Conversation,
                file: None,
                conversation: Some(conversation),
                since: Some(since),
            });
        }
        Ok(out)
    }

    pub fn grant_for_conversation(
        &self,
        conversation: &str,
        rules: &[String],
    ) -> Result<(), PolicyError> {
        self.conversations.grant(conversation, rules)
    }

    pub fn mark_tainted(&self, conversation: &str, by_tool: &str) -> Result<(), PolicyError> {
        self.conversations.taint(conversation, by_tool)
    }

    pub fn placeholders(&self) -> &crate::placeholders::Placeholders {
        &self.placeholders
    }

    pub fn tainted_by(&self, conversation: &str) -> Option<String> {
        self.conversations.tainted_by(conversation)
    }

    /// A sub-agent's conversation `child` starts as its parent stands: tainted by what tainted
    /// the parent (delegating never launders content), and knowing the person's words there.
    /// Its placeholders mean what they mean in the parent (the parent's model hands them on).
    pub fn start_sub_conversation(&self, child: &str, parent: &str) -> Result<(), PolicyError> {
        self.conversations.inherit(child, parent)?;
        self.placeholders.inherit(child, parent).map_err(db_err)
    }

    /// The person wrote `text` in `conversation`: every shell's path for the person's own turn
    /// calls this (the agent's turn, a scheduled prompt). Values in it steer calls as the
    /// person's (see [`provenance`]).
    pub fn person_said(&self, conversation: &str, text: &str) -> Result<(), PolicyError> {
        self.conversations.person_said(conversation, text)
    }

    /// The model put `conversation` into plan mode (`enter_plan_mode`): only read-only tools
    /// run there until the person approves its plan. Narrowing only, so the model may do it.
    pub fn enter_plan(&self, conversation: &str) -> Result<(), PolicyError> {
        self.conversations.set_planning(conversation, true)
    }

    /// The person approved the plan: the conversation is back under the person's own mode
    /// (which stays the ceiling: a person in plan mode stays there).
    pub fn leave_plan(&self, conversation: &str) -> Result<(), PolicyError> {
        self.conversations.set_planning(conversation, false)
    }

    pub fn planning(&self, conversation: &str) -> bool {
        self.conversations.planning(conversation)
    }

    /// The mode in force for one conversation: [`PolicyBridge::mode`], lowered to plan while
    /// the model plans there.
    pub fn mode_for(&self, conversation: &str) -> Mode {
        if self.conversations.planning(conversation) {
            Mode::Plan
        } else {
            self.mode()
        }
    }
}
