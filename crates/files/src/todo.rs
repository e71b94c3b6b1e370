//! `todo_write`: the coding agent's plan for the conversation, replaced whole on every call
//! (Claude Code's TodoWrite, same shape), kept in SQLite so it survives a restart.

use crate::FilesTools;
use cowork_contract::{ToolContext, ToolError, ToolResult, tools};
use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    pub content: String,
    /// pending | in_progress | completed
    pub status: String,
    /// The present-tense form shown while it is in progress ("Running the tests").
    #[serde(default, rename = "activeForm")]
    pub active_form: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteInput {
    /// The whole list, in order; it replaces the previous one.
    pub todos: Vec<Todo>,
}

#[derive(Serialize, JsonSchema)]
pub struct TodoList {
    pub todos: Vec<Todo>,
}

fn todo_list_text(list: &TodoList) -> String {
    let mark = |s: &str| match s {
        "completed" => "[x]",
        "in_progress" => "[>]",
        _ => "[ ]",
    };
    list.todos
        .iter()
        .map(|t| format!("{} {}", mark(&t.status), t.content))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tools(list = todo_tools)]
impl FilesTools {
    #[tool(name = "todo_write", title = "Plan (to-do list)", category = "files",
           aliases = ["TodoWrite"], idempotent, effects = [TasksWrite], text = todo_list_text,
           description = "Replace this conversation's to-do list: items with status pending, in_progress or completed (one in progress at a time).")]
    async fn todo_write(&self, input: &TodoWriteInput, ctx: &ToolContext) -> ToolResult<TodoList> {
        let invalid = |message: String| ToolError::invalid(message);
        if let Some(bad) = input
            .todos
            .iter()
            .find(|t| !["pending", "in_progress", "completed"].contains(&t.status.as_str()))
        {
            return Err(invalid(format!(
                "status {:?} of {:?}: use pending, in_progress or completed",
                bad.status, bad.content
            )));
        }
        if input
            .todos
            .iter()
            .filter(|t| t.status == "in_progress")
            .count()
            > 1
        {
            return Err(invalid(
                "more than one item is in_progress: finish one before starting the next".into(),
            ));
        }
        let mut db = self.db.lock().unwrap();
        let tx = db
            .transaction()
            .map_err(|e| ToolError::failed(format!("to-do list: {e}")))?;
        let write = || -> rusqlite::Result<()> {
            tx.execute(
                "DELETE FROM todos WHERE conversation = ?1",
                [&ctx.conversation_id],
            )?;
            for (i, t) in input.todos.iter().enumerate() {
                tx.execute(
                    "INSERT INTO todos (conversation, position, content, status, active_form) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![ctx.conversation_id, i as i64, t.content, t.status, t.active_form],
                )?;
            }
            Ok(())
        };
        write().map_err(|e| ToolError::failed(format!("to-do list: {e}")))?;
        tx.commit()
            .map_err(|e| ToolError::failed(format!("to-do list: {e}")))?;
        Ok(TodoList {
            todos: input.todos.clone(),
        })
    }
}
