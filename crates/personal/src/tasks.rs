use crate::{PersonalTools, db_error};
use cowork_contract::{ToolContext, ToolError, ToolResult, tools};
use rusqlite::{OptionalExtension, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Todo,
    InProgress,
    Done,
    Cancelled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    Low,
    Normal,
    High,
    Urgent,
}

fn as_text<T: Serialize>(value: T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Task {
    pub id: i64,
    pub title: String,
    pub notes: String,
    pub status: Status,
    pub priority: Priority,
    pub due: Option<String>,
    // JSON text in its row.
    #[serde(deserialize_with = "cowork_store::json_text")]
    pub tags: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
}

const TASK_COLUMNS: &str = "id, title, notes, status, priority, due, tags, created_at, updated_at";

/// Accepts `YYYY-MM-DD` or an RFC 3339 date-time; stores it normalized so string order is time
/// order.
fn normalize_due(due: &str) -> Result<String, ToolError> {
    let due = due.trim();
    if let Ok(date) = chrono::NaiveDate::parse_from_str(due, "%Y-%m-%d") {
        return Ok(date.format("%Y-%m-%d").to_string());
    }
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(due) {
        return Ok(dt
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string());
    }
    Err(ToolError::invalid(format!(
        "`due` {due:?} is not a date: use YYYY-MM-DD or an RFC 3339 time like 2026-11-23T10:00:00+08:00"
    )))
}

/// A tag as stored: without the `#` a person may write before it.
fn clean_tag(tag: &str) -> String {
    tag.trim().trim_start_matches('#').to_string()
}

/// The tags as stored (a JSON array): cleaned, sorted, each once.
fn tags_json(tags: &[String]) -> String {
    let mut out: Vec<String> = tags
        .iter()
        .map(|t| clean_tag(t))
        .filter(|t| !t.is_empty())
        .collect();
    out.sort();
    out.dedup();
    serde_json::to_string(&out).unwrap_or_else(|_| "[]".into())
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn check_title(title: &str) -> Result<(), ToolError> {
    if title.trim().is_empty() {
        return Err(ToolError::invalid(
            "`title` is empty: give the task a short title",
        ));
    }
    Ok(())
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTaskInput {
    /// What to do, in a few words.
    pub title: String,
    pub notes: Option<String>,
    /// Due date `YYYY-MM-DD` or RFC 3339 date-time.
    pub due: Option<String>,
    pub priority: Option<Priority>,
    #[serde(default)]
    pub tags: Vec<String>,
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct ListTasksInput {
    pub status: Option<Status>,
    /// Only tasks due on or before this date/time.
    pub due_before: Option<String>,
    /// Only tasks due on or after this date/time.
    pub due_after: Option<String>,
    pub tag: Option<String>,
    /// Words to find in the title or notes.
    pub text: Option<String>,
    /// At most this many tasks (default 50, max 500).
    pub limit: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
pub struct TaskList {
    pub tasks: Vec<Task>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTaskInput {
    /// The task's id (from `list_tasks`).
    pub id: i64,
    pub title: Option<String>,
    pub notes: Option<String>,
    pub status: Option<Status>,
    pub priority: Option<Priority>,
    /// New due date; an empty string clears it.
    pub due: Option<String>,
    /// Replaces the tags.
    pub tags: Option<Vec<String>>,
}

fn create_task_text(task: &Task) -> String {
    format!(
        "Created task #{}: {}{}",
        task.id,
        task.title,
        task.due
            .as_ref()
            .map(|d| format!(" (due {d})"))
            .unwrap_or_default()
    )
}

fn list_tasks_text(list: &TaskList) -> String {
    if list.tasks.is_empty() {
        return "No tasks match.".into();
    }
    list.tasks
        .iter()
        .map(|t| {
            let due = t
                .due
                .as_ref()
                .map(|d| format!(" — due {d}"))
                .unwrap_or_default();
            let tags = if t.tags.is_empty() {
                String::new()
            } else {
                format!(" #{}", t.tags.join(" #"))
            };
            format!("#{} [{}] {}{due}{tags}", t.id, as_text(t.status), t.title)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn update_task_text(task: &Task) -> String {
    format!(
        "Updated task #{} [{}]: {}",
        task.id,
        as_text(task.status),
        task.title
    )
}

#[tools(list = task_tools)]
impl PersonalTools {
    #[tool(name = "create_task", title = "Create task", category = "tasks", effects = [TasksWrite],
           description = "Add a task to the to-do list, with optional due date, priority and tags.",
           text = create_task_text)]
    async fn create_task(&self, input: &CreateTaskInput, ctx: &ToolContext) -> ToolResult<Task> {
        check_title(&input.title)?;
        let due = input.due.as_deref().map(normalize_due).transpose()?;
        let tags = tags_json(&input.tags);
        let now = now();
        let conn = self.db.lock().unwrap();
        conn.query_row(
            &format!(
                "INSERT INTO tasks (title, notes, priority, due, tags, created_at, updated_at, call_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7) RETURNING {TASK_COLUMNS}"
            ),
            params![
                input.title.trim(),
                input.notes.clone().unwrap_or_default(),
                as_text(input.priority.unwrap_or(Priority::Normal)),
                due,
                tags,
                now,
                ctx.call_id
            ],
            cowork_store::from_row,
        )
        .map_err(db_error)
    }

    #[tool(name = "list_tasks", title = "List tasks", category = "tasks", effects = [TasksRead],
           read_only, idempotent,
           description = "List tasks, filtered by status, due range, tag or text; soonest due first.",
           text = list_tasks_text)]
    async fn list_tasks(&self, input: &ListTasksInput) -> ToolResult<TaskList> {
        let before = input.due_before.as_deref().map(normalize_due).transpose()?;
        // A bare date as upper bound includes that whole day.
        let before = before.map(|b| {
            if b.len() == 10 {
                format!("{b}T23:59:59Z")
            } else {
                b
            }
        });
        let after = input.due_after.as_deref().map(normalize_due).transpose()?;
        let text = input.text.as_ref().map(|t| {
            format!(
                "%{}%",
                t.replace('\\', "\\\\")
                    .replace('%', "\\%")
                    .replace('_', "\\_")
            )
        });
        let tag = input.tag.as_deref().map(clean_tag);
        let limit = input.limit.unwrap_or(50).clamp(1, 500);
        let conn = self.db.lock().unwrap();
        let tasks = cowork_store::all_rows(
            &conn,
            &format!(
                "SELECT {TASK_COLUMNS} FROM tasks
                 WHERE (?1 IS NULL OR status = ?1)
                   AND (?2 IS NULL OR (due IS NOT NULL AND due <= ?2))
                   AND (?3 IS NULL OR (due IS NOT NULL AND due >= ?3))
                   AND (?4 IS NULL OR EXISTS (SELECT 1 FROM json_each(tasks.tags) WHERE value = ?4))
                   AND (?5 IS NULL OR title LIKE ?5 ESCAPE '\\' OR notes LIKE ?5 ESCAPE '\\')
                 ORDER BY due IS NULL, due, id
                 LIMIT ?6"
            ),
            params![input.status.map(as_text), before, after, tag, text, limit],
        )
        .map_err(db_error)?;
        Ok(TaskList { tasks })
    }

    #[tool(name = "update_task", title = "Update task", category = "tasks", effects = [TasksWrite],
           idempotent,
           description = "Change a task's status, title, notes, due date, priority or tags.",
           text = update_task_text)]
    async fn update_task(&self, input: &UpdateTaskInput) -> ToolResult<Task> {
        if let Some(title) = &input.title {
            check_title(title)?;
        }
        let due = match input.due.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(d) => Some(Some(normalize_due(d)?)),
        };
        let mut conn = self.db.lock().unwrap();
        let tx = conn.transaction().map_err(db_error)?;
        let exists: Option<i64> = tx
            .query_row("SELECT id FROM tasks WHERE id = ?1", [input.id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(db_error)?;
        if exists.is_none() {
            return Err(ToolError::invalid(format!(
                "no task has id {}: `list_tasks` shows the ids",
                input.id
            )));
        }
        tx.execute(
            "UPDATE tasks SET
                title = COALESCE(?2, title), notes = COALESCE(?3, notes), status = COALESCE(?4, status),
                priority = COALESCE(?5, priority), due = CASE WHEN ?6 THEN ?7 ELSE due END,
                tags = COALESCE(?8, tags), updated_at = ?9
             WHERE id = ?1",
            params![
                input.id,
                input.title.as_deref().map(str::trim),
                input.notes,
                input.status.map(as_text),
                input.priority.map(as_text),
                due.is_some(),
                due.flatten(),
                input.tags.as_deref().map(tags_json),
                now()
            ],
        )
        .map_err(db_error)?;
        let task = tx
            .query_row(
                &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"),
                [input.id],
                cowork_store::from_row,
            )
            .map_err(db_error)?;
        tx.commit().map_err(db_error)?;
        Ok(task)
    }
}
