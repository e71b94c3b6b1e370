//! The review side of the shadow filesystem as tools, so the window, the CLI and the model all
//! go through the scheduler (reviewed and audited). Applying and rolling back are marked
//! destructive: they score one above a plain workspace write, so the person is asked — the
//! model cannot apply its own staged change unseen.

use crate::shadow::{Change, ChangeDiff};
use crate::{FilesTools, shadow_error};
use cowork_contract::{CallPlan, Effect, EffectEnv, ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// File I/O with fsyncs off the async workers (any runtime flavour: the CLI's is current-thread).
async fn blocking(
    work: impl FnOnce() -> Result<Change, crate::shadow::ShadowError> + Send + 'static,
) -> Result<Change, ToolError> {
    crate::off_workers("file task", move || work().map_err(shadow_error)).await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangesListInput {
    /// staged | applied | rejected | rolled_back (default: every status).
    pub status: Option<String>,
    /// Only this conversation's changes.
    pub conversation: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct ChangeList {
    pub changes: Vec<Change>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeId {
    /// The change's id (`changes_list`).
    pub id: i64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangesApplyInput {
    pub id: i64,
    /// Only these hunks (1-based, from `changes_diff`); default: all of it.
    pub hunks: Option<Vec<usize>>,
}

fn changes_list_text(list: &ChangeList) -> String {
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

fn changes_diff_text(d: &ChangeDiff) -> String {
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

fn applied(c: &Change) -> String {
    format!("applied change {} to {}", c.id, c.path)
}

fn rejected(c: &Change) -> String {
    format!("rejected change {} ({})", c.id, c.path)
}

fn rolled_back(c: &Change) -> String {
    format!("rolled back change {} ({})", c.id, c.path)
}

#[tools(list = change_tools)]
impl FilesTools {
    #[tool(name = "changes_list", title = "List file changes", category = "files", read_only,
           idempotent, effects = [FsRead], plan = Self::plan_nothing, text = changes_list_text,
           description = "List staged and settled file changes (the shadow filesystem), newest first.")]
    async fn changes_list(&self, input: &ChangesListInput) -> ToolResult<ChangeList> {
        if let Some(s) = &input.status
            && !["staged", "applied", "rejected", "rolled_back"].contains(&s.as_str())
        {
            return Err(ToolError::invalid(format!(
                "status {s:?}: use staged, applied, rejected or rolled_back"
            )));
        }
        Ok(ChangeList {
            changes: self
                .shadow
                .list(input.status.as_deref(), input.conversation.as_deref())
                .map_err(shadow_error)?,
        })
    }

    #[tool(name = "changes_diff", title = "Show a file change", category = "files", read_only,
           idempotent, effects = [FsRead], plan = Self::plan_diff, text = changes_diff_text,
           description = "The diff of one change, hunk by hunk (numbered for a partial apply).")]
    async fn changes_diff(&self, input: &ChangeId) -> ToolResult<ChangeDiff> {
        self.shadow.diff(input.id).map_err(shadow_error)
    }

    #[tool(name = "changes_apply", title = "Apply a file change", category = "files",
           destructive, undoable, effects = [FsWrite], plan = Self::plan_apply, text = applied,
           description = "Write a staged change (or some of its hunks) to disk, atomically and journaled.")]
    async fn changes_apply(&self, input: &ChangesApplyInput) -> ToolResult<Change> {
        let (shadow, id, hunks) = (self.shadow.clone(), input.id, input.hunks.clone());
        blocking(move || shadow.apply(id, hunks.as_deref())).await
    }

    #[tool(name = "changes_reject", title = "Reject a file change", category = "files",
           idempotent, text = rejected,
           description = "Drop a staged change; the file on disk is not touched.")]
    async fn changes_reject(&self, input: &ChangeId) -> ToolResult<Change> {
        self.shadow.reject(input.id).map_err(shadow_error)
    }

    #[tool(name = "changes_rollback", title = "Roll back a file change", category = "files",
           destructive, effects = [FsWrite], plan = Self::plan_rollback, text = rolled_back,
           description = "Put back the exact bytes and permissions a file had before an applied change.")]
    async fn changes_rollback(&self, input: &ChangeId) -> ToolResult<Change> {
        let (shadow, id) = (self.shadow.clone(), input.id);
        blocking(move || shadow.rollback(id)).await
    }

    /// No effect to review: the list reads the shadow's records, no file.
    fn plan_nothing(&self, _: &ChangesListInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        Ok(CallPlan::new(vec![]))
    }

    fn plan_diff(&self, input: &ChangeId, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        let path = self.path_of(input.id)?;
        Ok(CallPlan::new(vec![Effect::FsRead { path }]))
    }

    fn plan_apply(&self, input: &ChangesApplyInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        self.writes_change(input.id)
    }

    fn plan_rollback(&self, input: &ChangeId, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        self.writes_change(input.id)
    }

    /// The write to the change's file.
    fn writes_change(&self, id: i64) -> Result<CallPlan, ToolError> {
        let path = self.path_of(id)?;
        Ok(CallPlan::new(vec![Effect::FsWrite { path }]))
    }

    /// The change's file, for its effects: one indexed lookup (effects are computed on every
    /// call and every `explain`, so no blob is read or diffed here).
    fn path_of(&self, id: i64) -> Result<String, ToolError> {
        self.shadow.path_of(id).map_err(shadow_error)
    }
}
