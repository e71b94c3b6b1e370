//! Settings files that carry rules: the user's (`<data dir>/settings.json`) and each workspace's
//! (`<root>/.cowork/settings.json`). Claude Code's shape: `{"permissions": {"allow": [], "ask": [],
//! "deny": [], "defaultMode": "default"}}`; other keys are preserved untouched on write.

use super::rules::{Action, Rule};
use super::{Mode, PolicyError};
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
        Thresholds { allow_max: 3, deny_min: 9, ask_timeout_secs: 120 }
    }
}

#[derive(Debug, Default, Deserialize)]
struct SettingsFile {
    #[serde(default)]
    permissions: Permissions,
    policy: Option<Thresholds>,
}

/// The rules and options one file contributed.
#[derive(Debug, Default)]
pub struct Loaded {
    pub rules: Vec<(Action, Rule)>,
    pub mode: Option<Mode>,
    pub thresholds: Option<Thresholds>,
}

pub fn load(path: &Path) -> Result<Loaded, PolicyError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::default()),
        Err(e) => return Err(PolicyError::Settings { path: path.into(), message: e.to_string() }),
    };
    let bad = |message: String| PolicyError::Settings { path: path.into(), message };
    let file: SettingsFile = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let mut rules = Vec::new();
    for (action, list) in [
        (Action::Allow, &file.permissions.allow),
        (Action::Ask, &file.permissions.ask),
        (Action::Deny, &file.permissions.deny),
    ] {
        for text in list {
            rules.push((action, Rule::parse(text).map_err(bad)?));
        }
    }
    let mode = file.permissions.default_mode.as_deref().map(Mode::parse).transpose().map_err(bad)?;
    Ok(Loaded { rules, mode, thresholds: file.policy })
}

/// Read-modify-write of one file's `permissions` object, keeping every other key (atomic).
pub fn edit_rules(path: &Path, edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) -> Result<(), PolicyError> {
    cowork_store::settings::update_json(path, |root| {
        let perms = root.entry("permissions").or_insert_with(|| serde_json::json!({}));
        let Some(perms) = perms.as_object_mut() else { return Err("`permissions` must be an object".into()) };
        edit(perms);
        Ok(())
    })
    .map_err(|message| PolicyError::Settings { path: path.into(), message })
}
