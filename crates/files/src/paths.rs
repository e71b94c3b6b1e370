//! Path confinement. Every path argument is resolved before effects are computed (`~`, relative,
//! `..`, symlinks: the existing prefix is canonicalized), so the PolicyBridge reviews the real
//! target; whether a target outside the workspace may be touched is the policy's call (a rule
//! can allow it). At the moment of use the path is resolved again and must be the one that was
//! reviewed, and files are opened without following a final symlink and checked through the
//! opened descriptor: a symlink swapped in between review and use is refused.

use cowork_contract::pathclass::{Classifier, PathClass};
use cowork_contract::{CallPlan, Effect, EffectEnv, ToolError};
use std::path::{Path, PathBuf};

/// The reviewed target of a path argument.
pub fn resolve(env: &EffectEnv, raw: &str) -> Result<PathBuf, ToolError> {
    let invalid = ToolError::invalid;
    if raw.trim().is_empty() {
        return Err(invalid(
            "the path is empty: give a file or folder inside the workspace".into(),
        ));
    }
    if raw.contains('\0') {
        return Err(invalid("the path contains a NUL byte".into()));
    }
    // `~user/...` would name another account's home; only the person's own `~` is expanded.
    if raw.starts_with('~') && !(raw == "~" || raw.starts_with("~/")) {
        return Err(invalid(format!(
            "{raw:?}: only `~` and `~/…` (your own home) are expanded; write the full path"
        )));
    }
    if env.workspace_roots.is_empty() && !Path::new(raw).is_absolute() && !raw.starts_with('~') {
        return Err(invalid(format!(
            "{raw:?} is relative but no workspace is open: open a folder (the folder button above the chat, or `--workspace DIR`) or give an absolute path"
        )));
    }
    Ok(env.resolve_path(raw))
}

pub fn io_error(path: &Path, e: std::io::Error) -> ToolError {
    ToolError::io(path, e)
}

/// Shown to the model instead of absolute paths inside the workspace.
pub fn display(env: &EffectEnv, path: &Path) -> String {
    for root in &env.workspace_roots {
        if let Ok(rest) = path.strip_prefix(root) {
            return if rest.as_os_str().is_empty() {
                ".".into()
            } else {
                rest.display().to_string()
            };
        }
    }
    path.display().to_string()
}

/// Plans a call that reads `raw`: its one effect, and the resolved path the run will use.
pub fn read_plan(env: &EffectEnv, raw: &str) -> Result<CallPlan<PathBuf>, ToolError> {
    let path = resolve(env, raw)?;
    let effect = Effect::FsRead {
        path: path.display().to_string(),
    };
    Ok(CallPlan::with(vec![effect], path))
}

/// Plans a call that writes `raw` (see [`read_plan`]).
pub fn write_plan(env: &EffectEnv, raw: &str) -> Result<CallPlan<PathBuf>, ToolError> {
    let path = resolve(env, raw)?;
    let effect = Effect::FsWrite {
        path: path.display().to_string(),
    };
    Ok(CallPlan::with(vec![effect], path))
}

/// The planned path, re-checked against the filesystem now: the run uses exactly what the
/// PolicyBridge saw, or nothing.
pub fn planned(env: &EffectEnv, planned: &Path) -> Result<PathBuf, ToolError> {
    env.recheck(planned)?;
    Ok(planned.to_path_buf())
}

/// How many entries of a folder a move looks through for configuration and credentials.
const SUBTREE_BUDGET: usize = 20_000;

/// The configuration and credentials inside a folder (each protected entry once, its content
/// not listed): a folder-level effect reaches them too, so a move is reviewed for them. Links
/// are not followed. A folder too large to look through is refused rather than guessed at.
pub fn protected_inside(env: &EffectEnv, dir: &Path) -> Result<Vec<PathBuf>, ToolError> {
    let classifier = Classifier::new(env);
    let mut found = Vec::new();
    let mut budget = SUBTREE_BUDGET;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            budget = budget.checked_sub(1).ok_or_else(|| {
                ToolError::invalid(format!(
                    "{} holds more than {SUBTREE_BUDGET} entries: move its parts one by one",
                    dir.display()
                ))
            })?;
            let path = entry.path();
            if classifier.classify(&path) != PathClass::Ordinary {
                found.push(path);
            } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A folder argument's default: the first workspace root.
pub fn default_root(env: &EffectEnv, raw: &Option<String>) -> String {
    raw.clone().unwrap_or_else(|| {
        env.workspace_roots
            .first()
            .map(|r| r.display().to_string())
            .unwrap_or_else(|| ".".into())
    })
}

/// A tool input that names the one file or folder the call reads or writes: what the review
/// sees (`FilesTools::plan_read`, `plan_write`).
pub(crate) trait Target {
    /// The path as the call gave it; a folder argument left out is [`default_root`].
    fn target(&self, env: &EffectEnv) -> String;
}

/// A glob as the family's tools read one: `*` stays within a folder, `**` crosses folders.
pub fn glob_matcher(pattern: &str) -> Result<globset::GlobMatcher, globset::Error> {
    Ok(globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()?
        .compile_matcher())
}

/// The one way the family walks a tree: dotfiles are shown (the person's `.github`, `.env`
/// exist), `.git` itself is not; .gitignore and .ignore are respected, as in `rg`.
pub fn walker(root: &Path, depth: Option<usize>) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(false)
        .max_depth(depth)
        .filter_entry(|e| e.file_name() != ".git")
        .require_git(false);
    builder
}
