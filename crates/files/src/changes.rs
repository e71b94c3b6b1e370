//! The review side of the shadow filesystem as tools, so the window, the CLI and the model all
//! go through the scheduler (reviewed and audited). Applying and rolling back are marked
//! destructive: they score one above a plain workspace write, so the person is asked — the
//! model cannot apply its own staged change unseen.

use crate::shadow::{Change, ChangeDiff};
use crate::{Shared, shadow_error};
use cowork_contract::{
    CallPlan, Effect, EffectEnv, Tool, ToolContext, ToolError, ToolResult, tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// File I/O with fsyncs off the async workers (any runtime flavour: the CLI's is current-thread).
async fn blocking(
    work: impl FnOnce() -> Result<Change, crate::shadow::ShadowError> + Send + 'static,
) -> Result<Change, ToolError> {
    crate::off_workers("file task", move || work().map_err(shadow_error)).await
}

/// The change's file, for its effects: one indexed lookup (effects are computed on every call
/// and every `explain`, so no blob is read or diffed here).
fn path_of(shared: &Shared, id: i64) -> Result<String, ToolError> {
    shared.shadow.path_of(id).map_err(shadow_error)
}

pub struct ChangesList(pub Shared);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangesListInput {
    /// staged | applied | rejected | rolled_back (default: every status).
    #[serde(default)]
    pub status: Option<String>,
    /// Only this conversation's changes.
    #[serde(default)]
    pub conversation: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct ChangeList {
    pub changes: Vec<Change>,
}

#[tool(name = "changes_list", title = "List file changes", category = "files", read_only,
       idempotent, effects = [FsRead],
       description = "List staged and settled file changes (the shadow filesystem), newest first.")]
impl Tool for ChangesList {
    type Input = ChangesListInput;
    type Output = ChangeList;

    fn plan(&self, _input: &Self::Input, _env: &EffectEnv) -> Result<CallPlan, ToolError> {
        Ok(CallPlan::new(vec![]))
    }

    async fn call(
        &self,
        input: &Self::Input,
        _: &(),
        _ctx: &ToolContext,
    ) -> ToolResult<ChangeList> {
        if let Some(s) = &input.status
            && !["staged", "applied", "rejected", "rolled_back"].contains(&s.as_str())
        {
            return Err(ToolError::invalid(format!(
                "status {s:?}: use staged, applied, rejected or rolled_back"
            )));
        }
        Ok(ChangeList {
            changes: self
                .0
                .shadow
                .list(input.status.as_deref(), input.conversation.as_deref())
                .map_err(shadow_error)?,
        })
    }

    fn to_text(&self, list: &ChangeList) -> String {
        if list.changes.is_empty() {
            return "no changes".into();
        }
        list.changes
            .iter()
            .map(|c| {
                format!(
                    "#{:<4} {:<11} {:<8} +{:<4} −{:<4} {}{}",
                    c.id,
                    c.status,
                    c.kind,
                    c.added,
                    c.removed,
                    c.path,
                    if c.binary { "  (binary)" } else { "" }
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeId {
    /// The change's id (`changes_list`).
    pub id: i64,
}

pub struct ChangesDiff(pub Shared);

#[tool(name = "changes_diff", title = "Show a file change", category = "files", read_only,
       idempotent, effects = [FsRead],
       description = "The diff of one change, hunk by hunk (numbered for a partial apply).")]
impl Tool for ChangesDiff {
    type Input = ChangeId;
    type Output = ChangeDiff;

    fn plan(&self, input: &Self::Input, _env: &EffectEnv) -> Result<CallPlan, ToolError> {
        Ok(CallPlan::new(vec![Effect::FsRead {
            path: path_of(&self.0, input.id)?,
        }]))
    }

    async fn call(
        &self,
        input: &Self::Input,
        _: &(),
        _ctx: &ToolContext,
    ) -> ToolResult<ChangeDiff> {
        self.0.shadow.diff(input.id).map_err(shadow_error)
    }

    fn to_text(&self, d: &ChangeDiff) -> String {
        let c = &d.change;
        let mut out = format!(
            "change {} — {} {} ({}), +{} −{}\n",
            c.id, c.kind, c.path, c.status, c.added, c.removed
        );
        if d.conflict {
            out.push_str("CONFLICT: the file changed on disk since this was staged\n");
        }
        if let Some(summary) = &d.summary {
            out.push_str(summary);
            out.push('\n');
        }
        for h in &d.hunks {
            out.push_str(&format!("[hunk {}] {}\n{}", h.number, h.header, h.text));
        }
        out
    }
}

pub struct ChangesApply(pub Shared);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangesApplyInput {
    pub id: i64,
    /// Only these hunks (1-based, from `changes_diff`); default: all of it.
    #[serde(default)]
    pub hunks: Option<Vec<usize>>,
}

#[tool(name = "changes_apply", title = "Apply a file change", category = "files",
       destructive, undoable, effects = [FsWrite],
       description = "Write a staged change (or some of its hunks) to disk, atomically and journaled.")]
impl Tool for ChangesApply {
    type Input = ChangesApplyInput;
    type Output = Change;

    fn plan(&self, input: &Self::Input, _env: &EffectEnv) -> Result<CallPlan, ToolError> {
        Ok(CallPlan::new(vec![Effect::FsWrite {
            path: path_of(&self.0, input.id)?,
        }]))
    }

    async fn call(&self, input: &Self::Input, _: &(), _ctx: &ToolContext) -> ToolResult<Change> {
        let (shadow, id, hunks) = (self.0.shadow.clone(), input.id, input.hunks.clone());
        blocking(move || shadow.apply(id, hunks.as_deref())).await
    }

    fn to_text(&self, c: &Change) -> String {
        format!("applied change {} to {}", c.id, c.path)
    }
}

pub struct ChangesReject(pub Shared);

#[tool(
    name = "changes_reject",
    title = "Reject a file change",
    category = "files",
    idempotent,
    description = "Drop a staged change; the file on disk is not touched."
)]
impl Tool for ChangesReject {
    type Input = ChangeId;
    type Output = Change;

    async fn call(&self, input: &Self::Input, _: &(), _ctx: &ToolContext) -> ToolResult<Change> {
        self.0.shadow.reject(input.id).map_err(shadow_error)
    }

    fn to_text(&self, c: &Change) -> String {
        format!("rejected change {} ({})", c.id, c.path)
    }
}

pub struct ChangesRollback(pub Shared);

#[tool(name = "changes_rollback", title = "Roll back a file change", category = "files",
       destructive, effects = [FsWrite],
       description = "Put back the exact bytes and permissions a file had before an applied change.")]
impl Tool for ChangesRollback {
    type Input = ChangeId;
    type Output = Change;

    fn plan(&self, input: &Self::Input, _env: &EffectEnv) -> Result<CallPlan, ToolError> {
        Ok(CallPlan::new(vec![Effect::FsWrite {
            path: path_of(&self.0, input.id)?,
        }]))
    }

    async fn call(&self, input: &Self::Input, _: &(), _ctx: &ToolContext) -> ToolResult<Change> {
        let (shadow, id) = (self.0.shadow.clone(), input.id);
        blocking(move || shadow.rollback(id)).await
    }

    fn to_text(&self, c: &Change) -> String {
        format!("rolled back change {} ({})", c.id, c.path)
    }
}
