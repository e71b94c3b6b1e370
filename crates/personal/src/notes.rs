use crate::{Db, db_error};
use cowork_contract::{Effect, EffectEnv, EffectKind, Tool, ToolContext, ToolError, ToolMeta};
use rusqlite::params;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub struct QuickNote {
    pub db: Db,
    pub dir: PathBuf,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuickNoteInput {
    pub title: String,
    /// Markdown.
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub tags: Vec<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct NoteSaved {
    pub id: i64,
    pub path: String,
}

/// File-name-safe slug that keeps letters of any script (Chinese titles stay readable).
fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
        if out.chars().count() >= 60 {
            break;
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() { "note".into() } else { out }
}

/// YAML front matter written by hand: every value is a JSON string/array, which is valid YAML
/// (flow scalars), so no YAML library is needed to write it and Obsidian reads it.
fn front_matter(title: &str, created: &str, tags: &[String], call_id: &str) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    format!(
        "---\ntitle: {}\ncreated: {}\ntags: {}\nsource: {}\n---\n\n",
        q(title),
        q(created),
        serde_json::to_string(tags).unwrap_or_else(|_| "[]".into()),
        q(&format!("cowork call {call_id}"))
    )
}

#[async_trait::async_trait]
impl Tool for QuickNote {
    type Input = QuickNoteInput;
    type Output = NoteSaved;

    fn meta(&self) -> ToolMeta {
        ToolMeta::new("quick_note", "Quick note", "Save a Markdown note (title, body, tags) to the notes folder.")
            .category("notes")
            .effects(&[EffectKind::NotesWrite])
    }

    fn effects(&self, _input: &Self::Input, _env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        Ok(vec![Effect::NotesWrite])
    }

    async fn call(&self, input: &Self::Input, ctx: &ToolContext) -> Result<NoteSaved, ToolError> {
        if input.title.trim().is_empty() {
            return Err(ToolError::InvalidArguments { tool: "quick_note".into(), message: "`title` is empty: give the note a title".into() });
        }
        let now = chrono::Utc::now();
        let created = now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let tags: Vec<String> = input.tags.iter().map(|t| t.trim().trim_start_matches('#').to_string()).filter(|t| !t.is_empty()).collect();
        let base = format!("{}-{}", now.format("%Y-%m-%d"), slug(&input.title));
        let path = (1..)
            .map(|n| if n == 1 { self.dir.join(format!("{base}.md")) } else { self.dir.join(format!("{base}-{n}.md")) })
            .find(|p| !p.exists())
            .expect("unbounded");
        let content = format!("{}# {}\n\n{}\n", front_matter(input.title.trim(), &created, &tags, &ctx.call_id), input.title.trim(), input.body.trim_end());
        std::fs::create_dir_all(&self.dir).map_err(|e| ToolError::failed(format!("cannot create {}: {e}", self.dir.display())))?;
        cowork_store::write_atomically(&path, content.as_bytes()).map_err(|e| ToolError::failed(format!("cannot write {}: {e}", path.display())))?;
        let conn = self.db.lock().unwrap();
        let id = conn
            .query_row(
                "INSERT INTO notes (path, title, tags, created_at, call_id) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
                params![path.display().to_string(), input.title.trim(), serde_json::to_string(&tags).unwrap_or_default(), created, ctx.call_id],
                |r| r.get(0),
            )
            .map_err(db_error)?;
        Ok(NoteSaved { id, path: path.display().to_string() })
    }

    fn to_text(&self, saved: &NoteSaved) -> String {
        format!("Saved note #{} to {}", saved.id, saved.path)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn slugs_keep_any_script_and_drop_punctuation() {
        assert_eq!(super::slug("Meeting: Q3 plan!"), "meeting-q3-plan");
        assert_eq!(super::slug("周会 纪要"), "周会-纪要");
        assert_eq!(super::slug("???"), "note");
    }
}
