//! Settings → Permissions: the rules, the mode, and the workspaces' trust.

use super::Res;
use crate::Shell;
use cowork_core::policy::RuleEntry;
use cowork_core::{Action, Mode, RuleSource};
use serde::Serialize;
use tauri::State;

#[tauri::command]
#[specta::specta]
pub fn list_rules(shell: State<'_, Shell>, conversation: Option<String>) -> Vec<RuleEntry> {
    shell
        .app
        .scheduler()
        .policy()
        .rules(conversation.as_deref())
}

/// What adding a rule did.
#[derive(Serialize, specta::Type)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RuleAdded {
    /// Added; `broad` warns of a broad rule added with `force`.
    Added {
        broad: Option<cowork_core::plain::Words>,
    },
    /// Not added: it covers more than a person usually means; the window shows why and adds it
    /// only when the person insists (`force`).
    TooBroad { why: cowork_core::plain::Words },
}

/// Adds a person's rule. A broad allow rule is held back unless `force`.
#[tauri::command]
#[specta::specta]
pub fn add_rule(
    shell: State<'_, Shell>,
    action: Action,
    rule: String,
    source: Option<RuleSource>,
    force: Option<bool>,
) -> Res<RuleAdded> {
    let source = source.unwrap_or(RuleSource::User);
    let added = shell.app.scheduler().policy().add_rule_checked(
        action,
        &rule,
        source,
        force.unwrap_or(false),
    );
    match added {
        Ok(broad) => Ok(RuleAdded::Added { broad }),
        Err(cowork_core::PolicyError::RuleTooBroad { why, .. }) => Ok(RuleAdded::TooBroad { why }),
        Err(other) => Err(other.to_string()),
    }
}

/// Every standing permission the person gave ("always" rules and every conversation's
/// grants), for Settings → Permissions to show in one place and revoke.
#[tauri::command]
#[specta::specta]
pub fn list_grants(shell: State<'_, Shell>) -> Res<Vec<cowork_core::Grant>> {
    shell
        .app
        .scheduler()
        .policy()
        .grants()
        .map_err(|e| e.to_string())
}

/// What the organisation's managed settings impose (files, mode ceiling), shown as such.
#[tauri::command]
#[specta::specta]
pub fn managed_policy(shell: State<'_, Shell>) -> cowork_core::Managed {
    shell.app.scheduler().policy().managed()
}

/// Rules that are broken or not applied (an untrusted workspace's allow rules), per file.
#[tauri::command]
#[specta::specta]
pub fn policy_problems(shell: State<'_, Shell>) -> Vec<cowork_core::policy::PolicyProblem> {
    shell.app.scheduler().policy().problems()
}

/// Each open workspace: trusted or not, and exactly what trusting it would allow.
#[tauri::command]
#[specta::specta]
pub fn workspace_reviews(shell: State<'_, Shell>) -> Res<Vec<cowork_app::WorkspaceReview>> {
    let policy = shell.app.scheduler().policy();
    policy
        .workspaces()
        .iter()
        .map(|w| shell.app.workspace_review(&w.root))
        .collect()
}

/// The person trusts a workspace as the dialog showed it (`digest` of what they saw: a file
/// changed meanwhile is refused).
#[tauri::command]
#[specta::specta]
pub fn trust_workspace(
    shell: State<'_, Shell>,
    root: std::path::PathBuf,
    digest: String,
) -> Res<()> {
    shell
        .app
        .scheduler()
        .policy()
        .trust_workspace(&root, &digest)
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn remove_rule(
    shell: State<'_, Shell>,
    rule: String,
    conversation: Option<String>,
) -> Res<usize> {
    shell
        .app
        .scheduler()
        .policy()
        .remove_rule(&rule, conversation.as_deref())
        .map_err(|e| e.to_string())
}

#[tauri::command]
#[specta::specta]
pub fn set_mode(shell: State<'_, Shell>, mode: Mode) -> Res<()> {
    shell
        .app
        .scheduler()
        .policy()
        .set_mode(mode, true)
        .map_err(|e| e.to_string())
}
