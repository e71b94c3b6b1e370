//! The files & coding family: `read_file`, `list_directory`, `glob`, `search_code`,
//! `write_file`, `edit_file`, `create_directory`, `move_file`, and the shadow filesystem's
//! review tools `changes_list|diff|apply|reject|rollback`.
//!
//! - paths.rs: confinement (resolution before review, re-check at use, no-follow opens).
//! - shadow.rs: staged changes, content-addressed blobs, journaled apply/rollback, recovery.
//! - read.rs / search.rs / edit.rs / changes.rs: the tools.
//!
//! - todo.rs: `todo_write` (Claude Code's TodoWrite).
//! - command.rs: `run_command` (process groups, timeouts, head+tail caps, bubblewrap), background
//!   processes (`command_output`, `command_stop`).
//! - git_tool.rs: `git` (git's writes, which commands cannot make: the person's git with the
//!   repository's programs switched off); git.rs: what a repository configured to run.
//! - quality.rs: `check_code_quality`, `batch_check_quality` (tree-sitter).

pub mod attach;
mod changes;
mod command;
mod edit;
pub mod git;
mod git_tool;
pub mod paths;
mod quality;
mod read;
mod schema;
mod search;
pub mod shadow;
mod todo;

/// This crate's tables, for the store (the app composes every owner's).
pub use schema::SCHEMA;

use cowork_contract::{
    CallPlan, DefaultRule, DynTool, EffectEnv, RuleAction, ToolError, ToolProvider,
};
use cowork_store::Store;
use paths::Target;
use shadow::{Shadow, ShadowError};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The family's tools; each tool holds a clone (the fields are handles).
#[derive(Clone)]
pub struct FilesTools {
    shadow: Shadow,
    background: command::Background,
    db: Arc<Mutex<rusqlite::Connection>>,
}

impl FilesTools {
    pub fn new(store: &Store) -> Result<Self, ShadowError> {
        Ok(FilesTools {
            shadow: Shadow::open(store)?,
            background: Default::default(),
            db: Arc::new(Mutex::new(store.connect()?)),
        })
    }

    /// The plan of a tool that reads the file or folder its input names.
    fn plan_read(
        &self,
        input: &impl Target,
        env: &EffectEnv,
    ) -> Result<CallPlan<PathBuf>, ToolError> {
        paths::read_plan(env, &input.target(env))
    }

    /// The plan of a tool that writes the file or folder its input names.
    fn plan_write(
        &self,
        input: &impl Target,
        env: &EffectEnv,
    ) -> Result<CallPlan<PathBuf>, ToolError> {
        paths::write_plan(env, &input.target(env))
    }
}

pub(crate) fn shadow_error(e: ShadowError) -> ToolError {
    match e {
        ShadowError::Conflict { .. } => ToolError::failed(e.to_string()),
        ShadowError::NoSuchChange(_)
        | ShadowError::WrongStatus { .. }
        | ShadowError::NoSuchHunk { .. }
        | ShadowError::NotHunkable(_) => ToolError::invalid(e.to_string()),
        other => ToolError::failed(other.to_string()),
    }
}

/// Runs a tool's blocking work (a tree walk, a parse, the shadow's database) off the async
/// workers; `what` names it should the work panic.
pub(crate) async fn off_workers<T: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::failed(format!("{what} failed: {e}")))?
}

impl ToolProvider for FilesTools {
    fn name(&self) -> &str {
        "files"
    }

    /// Commands that take over the machine or wipe a disk are refused whatever the person's
    /// rules say; reading SSH keys is asked every time.
    fn default_rules(&self) -> Vec<DefaultRule> {
        let deny = |rule| DefaultRule {
            action: RuleAction::Deny,
            rule,
        };
        let mut rules: Vec<DefaultRule> = [
            "run_command(sudo:*)",
            "run_command(su:*)",
            "run_command(mkfs:*)",
            "run_command(mkfs.ext4:*)",
            "run_command(mkfs.ext3:*)",
            "run_command(mkfs.xfs:*)",
            "run_command(mkfs.btrfs:*)",
            "run_command(mkfs.vfat:*)",
            "run_command(mkfs.fat:*)",
            "run_command(mke2fs:*)",
            "run_command(wipefs:*)",
        ]
        .into_iter()
        .map(deny)
        .collect();
        // Both ways of reading a file whole.
        for rule in ["read_file(~/.ssh/**)", "attach_file(~/.ssh/**)"] {
            rules.push(DefaultRule {
                action: RuleAction::Ask,
                rule,
            });
        }
        rules
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        [
            self.read_tools(),
            self.attach_tools(),
            self.listing_tools(),
            self.search_tools(),
            self.edit_tools(),
            self.command_tools(),
            self.git_tools(),
            self.todo_tools(),
            self.quality_tools(),
            self.change_tools(),
        ]
        .concat()
    }
}
