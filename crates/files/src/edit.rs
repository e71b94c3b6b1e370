//! Writing tools. `write_file` and `edit_file` never touch the person's file: they stage a
//! change in the shadow filesystem (see shadow.rs) that the person applies from the review
//! panel or `cowork changes apply`.

use crate::paths::{self, Target};
use crate::read::current_bytes;
use crate::shadow::{Change, Shadow};
use crate::{FilesTools, shadow_error};
use cowork_contract::{CallPlan, Effect, EffectEnv, ToolContext, ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Stages the new content; in accept-edits mode applies it at once (journaled, so it can still
/// be rolled back).
fn stage(
    shadow: &Shadow,
    ctx: &ToolContext,
    path: &Path,
    content: &[u8],
) -> Result<Change, ToolError> {
    let change = shadow
        .stage(&ctx.conversation_id, path, Some(content))
        .map_err(shadow_error)?;
    if ctx.accept_edits {
        return shadow.apply(change.id, None).map_err(shadow_error);
    }
    Ok(change)
}

fn staged_text(c: &Change) -> String {
    if c.status == "applied" {
        return format!(
            "written ({} {}, +{} −{}; accept-edits mode — undo with `cowork changes rollback {}`)",
            c.kind, c.path, c.added, c.removed, c.id
        );
    }
    format!(
        "staged as change {} ({} {}, +{} −{}); the person reviews it — it is not on disk until applied (`cowork changes apply {}`)",
        c.id, c.kind, c.path, c.added, c.removed, c.id
    )
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileInput {
    /// The file: relative to the workspace, absolute, or `~/…`.
    pub path: String,
    /// The whole new content.
    pub content: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileInput {
    pub path: String,
    /// The exact text to replace (whitespace included). It must occur exactly once unless
    /// `replace_all`.
    pub old_string: String,
    pub new_string: String,
    #[serde(default)]
    pub replace_all: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateDirectoryInput {
    pub path: String,
}

#[derive(serde::Serialize, JsonSchema)]
pub struct Done {
    pub message: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveFileInput {
    pub from: String,
    pub to: String,
}

impl Target for WriteFileInput {
    fn target(&self, _: &EffectEnv) -> String {
        self.path.clone()
    }
}

impl Target for EditFileInput {
    fn target(&self, _: &EffectEnv) -> String {
        self.path.clone()
    }
}

impl Target for CreateDirectoryInput {
    fn target(&self, _: &EffectEnv) -> String {
        self.path.clone()
    }
}

fn done_text(done: &Done) -> String {
    done.message.clone()
}

#[tools(list = edit_tools)]
impl FilesTools {
    #[tool(name = "write_file", title = "Write file", category = "files", aliases = ["Write"],
           arg_aliases = [("file_path", "path")], effects = [FsWrite], undoable,
           plan = Self::plan_write, text = staged_text,
           description = "Write a whole file. The write is staged for the person's review (a diff they apply or reject), not written at once.")]
    async fn write_file(
        &self,
        input: &WriteFileInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<Change> {
        let path = paths::planned(&ctx.env, plan)?;
        if path.is_dir() {
            return Err(ToolError::invalid(format!(
                "{} is a folder",
                path.display()
            )));
        }
        stage(&self.shadow, ctx, &path, input.content.as_bytes())
    }

    #[tool(name = "edit_file", title = "Edit file", category = "files", aliases = ["Edit"],
           arg_aliases = [("file_path", "path")], effects = [FsWrite], undoable,
           plan = Self::plan_write, text = staged_text,
           description = "Replace exact text in a file (fails if the text is absent or not unique, unless replace_all). Staged for the person's review.")]
    async fn edit_file(
        &self,
        input: &EditFileInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<Change> {
        let invalid = |message: String| ToolError::invalid(message);
        let path = paths::planned(&ctx.env, plan)?;
        let shown = paths::display(&ctx.env, &path);
        if input.old_string.is_empty() {
            return Err(invalid(
                "`old_string` is empty: to create a file use write_file".into(),
            ));
        }
        if input.old_string == input.new_string {
            return Err(invalid(
                "`old_string` and `new_string` are the same: nothing to change".into(),
            ));
        }
        let Some(bytes) = current_bytes(&self.shadow, ctx, &path)? else {
            return Err(invalid(format!(
                "{shown} does not exist: create it with write_file"
            )));
        };
        let text = String::from_utf8(bytes).map_err(|_| {
            invalid(format!(
                "{shown} is not UTF-8 text; edit_file only edits text"
            ))
        })?;
        let count = text.matches(&input.old_string).count();
        let edited = match count {
            0 => {
                return Err(invalid(format!(
                    "`old_string` was not found in {shown}: read the file again and copy the text exactly (indentation included)"
                )));
            }
            1 => text.replacen(&input.old_string, &input.new_string, 1),
            _ if input.replace_all => text.replace(&input.old_string, &input.new_string),
            n => {
                return Err(invalid(format!(
                    "`old_string` occurs {n} times in {shown}: include more surrounding lines to make it unique, or set replace_all"
                )));
            }
        };
        stage(&self.shadow, ctx, &path, edited.as_bytes())
    }

    #[tool(name = "create_directory", title = "Create folder", category = "files", idempotent,
           effects = [FsWrite], plan = Self::plan_write, text = done_text,
           description = "Create a folder (and its parents).")]
    async fn create_directory(
        &self,
        _: &CreateDirectoryInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<Done> {
        let path = paths::planned(&ctx.env, plan)?;
        std::fs::create_dir_all(&path).map_err(|e| paths::io_error(&path, e))?;
        Ok(Done {
            message: format!("created {}", paths::display(&ctx.env, &path)),
        })
    }

    #[tool(name = "move_file", title = "Move file", category = "files", effects = [FsDelete, FsWrite],
           plan = Self::plan_move_file, text = done_text,
           description = "Move or rename a file or folder; never replaces an existing target.")]
    async fn move_file(
        &self,
        _: &MoveFileInput,
        (from, to): &(PathBuf, PathBuf),
        ctx: &ToolContext,
    ) -> ToolResult<Done> {
        let from = paths::planned(&ctx.env, from)?;
        let to = paths::planned(&ctx.env, to)?;
        if to.symlink_metadata().is_ok() {
            return Err(ToolError::invalid(format!(
                "{} already exists: choose another name or remove it first",
                to.display()
            )));
        }
        std::fs::rename(&from, &to).map_err(|e| paths::io_error(&from, e))?;
        Ok(Done {
            message: format!(
                "moved {} → {}",
                paths::display(&ctx.env, &from),
                paths::display(&ctx.env, &to)
            ),
        })
    }

    /// Its plan: the resolved source and target.
    fn plan_move_file(
        &self,
        input: &MoveFileInput,
        env: &EffectEnv,
    ) -> Result<CallPlan<(PathBuf, PathBuf)>, ToolError> {
        let from = paths::resolve(env, &input.from)?;
        let to = paths::resolve(env, &input.to)?;
        let moved = |at: &Path| {
            let target = match at.strip_prefix(&from) {
                Ok(rel) if !rel.as_os_str().is_empty() => to.join(rel),
                _ => to.clone(),
            };
            let delete = Effect::FsDelete {
                path: at.display().to_string(),
            };
            let write = Effect::FsWrite {
                path: target.display().to_string(),
            };
            (delete, write)
        };
        // Both ends of the folder and of everything protected inside it: a move must not carry
        // a repository's `.git` or a `.vscode` into place unseen.
        let mut parts = vec![from.clone()];
        if from.is_dir() && !from.is_symlink() {
            parts.extend(paths::protected_inside(env, &from)?);
        }
        let effects = parts
            .iter()
            .flat_map(|at| {
                let (delete, write) = moved(at);
                [delete, write]
            })
            .collect();
        Ok(CallPlan::with(effects, (from, to)))
    }
}
