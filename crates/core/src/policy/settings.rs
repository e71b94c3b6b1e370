//! Settings files that carry rules: the organisation's managed ones (`/etc/cowork/managed-settings.json`),
//! the user's (`<data dir>/settings.json`) and each workspace's (`<root>/.cowork/settings.json`).
//! Claude Code's shape: `{"permissions": {"allow": [], "ask": [], "deny": [], "defaultMode":
//! "default"}}` (a managed file adds `"modeCeiling"`); other keys are preserved untouched on write.

use super::rules::{Action, Rule};
use super::{Mode, PolicyError};
use crate::hooks::{Hook, HookEvent};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Permissions {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    default_mode: Option<String>,
    /// Managed files only: the widest mode anyone may choose.
    mode_ceiling: Option<String>,
}

/// Tuning of the default decision; `policy` key of the user settings.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Thresholds {
    /// Scores up to this are allowed when no rule matches.
    pub allow_max: u8,
    /// Scores from this up are denied when no rule matches.
    pub deny_min: u8,
    /// An ask nobody answers is denied after this many seconds.
    pub ask_timeout_secs: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            allow_max: 3,
            deny_min: 9,
            ask_timeout_secs: 120,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct SettingsFile {
    #[serde(default)]
    permissions: Permissions,
    policy: Option<Thresholds>,
    /// Claude Code's shape: `{"PreToolUse": [{"matcher": "…", "hooks": [{"type": "command",
    /// "command": "…", "timeout": 30}]}]}`.
    #[serde(default)]
    hooks: std::collections::BTreeMap<String, Vec<HookGroup>>,
}

#[derive(Debug, Deserialize)]
struct HookGroup {
    #[serde(default)]
    matcher: String,
    hooks: Vec<HookCommand>,
}

#[derive(Debug, Deserialize)]
struct HookCommand {
    #[serde(rename = "type", default = "command_type")]
    kind: String,
    command: String,
    timeout: Option<u64>,
}

fn command_type() -> String {
    "command".into()
}

/// The file's hooks, and what of them cannot run as written.
fn hooks_of(
    file: &std::collections::BTreeMap<String, Vec<HookGroup>>,
    path: &Path,
) -> (Vec<Hook>, Vec<String>) {
    let (mut hooks, mut problems) = (Vec::new(), Vec::new());
    for (name, groups) in file {
        let Some(event) = HookEvent::ALL.into_iter().find(|e| e.as_str() == name) else {
            problems.push(format!(
                "hooks for {name:?} are not run: Cowork runs PreToolUse, PostToolUse and Stop"
            ));
            continue;
        };
        for group in groups {
            for command in &group.hooks {
                if command.kind != "command" {
                    problems.push(format!(
                        "a {name} hook of type {:?} is not run: only \"command\" hooks are",
                        command.kind
                    ));
                    continue;
                }
                let hook = Hook::new(
                    event,
                    &group.matcher,
                    &command.command,
                    command.timeout,
                    path,
                );
                problems.extend(hook.matcher_problem());
                hooks.push(hook);
            }
        }
    }
    (hooks, problems)
}

/// The rules and options one file contributed.
#[derive(Debug, Default)]
pub struct Loaded {
    pub rules: Vec<(Action, Rule)>,
    /// Rules that are broken as written, each with what was done instead.
    pub problems: Vec<String>,
    pub mode: Option<Mode>,
    /// The widest mode allowed (read from managed files only).
    pub ceiling: Option<Mode>,
    pub thresholds: Option<Thresholds>,
    pub hooks: Vec<Hook>,
    /// The file's bytes (None when it does not exist): what trust is pinned to.
    pub bytes: Option<Vec<u8>>,
}

pub fn load(path: &Path) -> Result<Loaded, PolicyError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::default()),
        Err(e) => {
            return Err(PolicyError::Settings {
                path: path.into(),
                message: e.to_string(),
            });
        }
    };
    let bad = |message: String| PolicyError::Settings {
        path: path.into(),
        message,
    };
    let file: SettingsFile = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    let mut rules = Vec::new();
    let mut problems = Vec::new();
    for (action, list) in [
        (Action::Allow, &file.permissions.allow),
        (Action::Ask, &file.permissions.ask),
        (Action::Deny, &file.permissions.deny),
    ] {
        for text in list {
            match Rule::parse(text) {
                Ok(rule) => {
                    if let Err(why) = rule.check(None) {
                        problems.push(match action {
                            Action::Allow => format!("{why}: it allows nothing until fixed"),
                            _ => format!("{why}: as a{} {} rule it covers every call of the tool until fixed", if action == Action::Ask { "n" } else { "" }, action.as_str()),
                        });
                    }
                    rules.push((action, rule));
                }
                Err(why) if action == Action::Allow => problems.push(format!("{why}: ignored")),
                // Fail closed: a deny or ask the person wrote must not silently stop applying.
                Err(why) => {
                    let fallback = Rule::tool_part(text).unwrap_or("*");
                    problems.push(format!(
                        "{why}: treated as `{} {fallback}` (the whole tool) until fixed",
                        action.as_str()
                    ));
                    rules.push((
                        action,
                        Rule::parse(fallback).expect("a valid tool name parses"),
                    ));
                }
            }
        }
    }
    let (hooks, hook_problems) = hooks_of(&file.hooks, path);
    problems.extend(hook_problems);
    let mode_of = |text: &Option<String>| text.as_deref().map(Mode::parse).transpose();
    let mode = mode_of(&file.permissions.default_mode).map_err(bad)?;
    let ceiling = mode_of(&file.permissions.mode_ceiling).map_err(bad)?;
    Ok(Loaded {
        rules,
        problems,
        mode,
        ceiling,
        thresholds: file.policy,
        hooks,
        bytes: Some(bytes),
    })
}

/// Read-modify-write of one file's `permissions` object, keeping every other key (atomic).
pub fn edit_rules(
    path: &Path,
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) -> Result<(), PolicyError> {
    cowork_store::settings::update_json(path, |root| {
        let perms = root
            .entry("permissions")
            .or_insert_with(|| serde_json::json!({}));
        let Some(perms) = perms.as_object_mut() else {
            return Err("`permissions` must be an object".into());
        };
        edit(perms);
        Ok(())
    })
    .map_err(|message| PolicyError::Settings {
        path: path.into(),
        message,
    })
}
