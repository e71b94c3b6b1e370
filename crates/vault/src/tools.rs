//! The vault's tools. Each is a thin typed layer over [`Vault`]; effects are `vault.read` and
//! `vault.write`, reviewed by the PolicyBridge like every call.

use crate::entry::{Kind, Source};
use crate::index::{Entry, Filter};
use crate::{Changes, Mode, NewEntry, SearchResult, VaultTools};
use cowork_contract::{ToolContext, ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn failed(e: String) -> ToolError {
    ToolError::failed(e)
}

fn source(ctx: &ToolContext) -> Source {
    Source {
        conversation: Some(ctx.conversation_id.clone()).filter(|c| !c.is_empty()),
        tool: Some(ctx.tool.clone()),
        call: Some(ctx.call_id.clone()),
        promoted_from: None,
    }
}

/// What a write returns.
#[derive(Serialize, JsonSchema)]
pub struct Saved {
    pub id: String,
    /// Relative to the vault folder.
    pub path: String,
    pub title: String,
    pub kind: Kind,
    pub scope: String,
}

impl From<Entry> for Saved {
    fn from(e: Entry) -> Saved {
        Saved {
            id: e.id,
            path: e.path,
            title: e.title,
            kind: e.kind,
            scope: e.scope,
        }
    }
}

fn said(verb: &str, s: &Saved) -> String {
    format!(
        "{verb} {} \"{}\" (id {}, {})",
        s.kind.as_str(),
        s.title,
        s.id,
        s.path
    )
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveInput {
    /// The text to remember (Markdown; `[[links]]` and `#tags` are kept).
    pub content: String,
    /// A short title; the first line of the content when omitted.
    #[serde(default)]
    pub title: String,
    /// `fact`, `preference`, `decision` or `learning` for things to remember about the person
    /// or the work; `note` (default) for anything else.
    pub kind: Option<Kind>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// `global` (default), `workspace:<path>` or `project:<name>`.
    pub scope: Option<String>,
}

// No deny_unknown_fields here: serde does not support it with `flatten`; `Filter` denies them.
#[derive(Deserialize, JsonSchema)]
pub struct SearchInput {
    /// What to look for, in any language: matched by meaning and by words.
    pub query: String,
    /// How many results (default 5, at most 100).
    pub k: Option<usize>,
    #[serde(flatten)]
    pub filter: Filter,
    /// `hybrid` (default), `words` (BM25 only) or `meaning` (vectors only).
    #[serde(default)]
    pub mode: Mode,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateInput {
    /// The entry's id (or its path in the vault).
    pub id: String,
    pub title: Option<String>,
    /// Replaces the whole text.
    pub content: Option<String>,
    /// Added at the end of the text.
    pub append: Option<String>,
    pub kind: Option<Kind>,
    /// Replaces the tags.
    pub tags: Option<Vec<String>>,
    pub scope: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdInput {
    /// The entry's id (or its path in the vault).
    pub id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Trashed {
    pub id: String,
    pub title: String,
    /// Where the file is now, relative to the vault folder.
    pub trash_path: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromoteInput {
    /// An existing entry to promote (its text and tags are carried over)…
    pub id: Option<String>,
    /// …or the insight itself, as learned in this conversation.
    pub insight: Option<String>,
    #[serde(default)]
    pub title: String,
    /// `decision` (default), `learning`, `preference` or `fact`.
    pub kind: Option<Kind>,
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
    pub id: String,
    /// The file's full path.
    pub path: String,
}

fn remembered(s: &Saved) -> String {
    said("Remembered", s)
}

fn updated(s: &Saved) -> String {
    said("Updated", s)
}

fn restored(s: &Saved) -> String {
    said("Restored", s)
}

fn promoted(s: &Saved) -> String {
    said("Promoted to a global", s)
}

fn search_text(r: &SearchResult) -> String {
    let mut out = String::new();
    if let Some(note) = &r.note {
        out.push_str(&format!("({note})\n"));
    }
    if r.hits.is_empty() {
        out.push_str("Nothing in the vault matches.");
    }
    for (i, h) in r.hits.iter().enumerate() {
        out.push_str(&format!(
            "{}. [{}] {} — id {} ({}, updated {})\n   {}\n",
            i + 1,
            h.kind.as_str(),
            h.title,
            h.id,
            h.path,
            &h.updated[..h.updated.len().min(10)],
            h.snippet
        ));
    }
    out
}

fn trashed_text(t: &Trashed) -> String {
    format!(
        "Moved \"{}\" to the trash ({}); restore_vault_entry with id {} brings it back",
        t.title, t.trash_path, t.id
    )
}

fn note_saved_text(saved: &NoteSaved) -> String {
    format!("Saved note {} to {}", saved.id, saved.path)
}

#[tools(list = vault_tools)]
impl VaultTools {
    #[tool(name = "save_to_vault", title = "Remember", category = "vault", effects = [VaultWrite],
           description = "Remember a fact, preference, decision or learning about the person (or save a note) in the vault, the long-term memory, as a Markdown file.",
           text = remembered)]
    async fn save_to_vault(&self, input: &SaveInput, ctx: &ToolContext) -> ToolResult<Saved> {
        let new = NewEntry {
            title: input.title.clone(),
            body: input.content.clone(),
            kind: Some(input.kind.unwrap_or(Kind::Note)),
            scope: input.scope.clone(),
            tags: input.tags.clone(),
            source: source(ctx),
        };
        self.vault.save(new).await.map(Saved::from).map_err(failed)
    }

    #[tool(name = "search_vault", title = "Search memory", category = "vault",
           effects = [VaultRead], read_only, idempotent,
           description = "Search the vault (memories and notes) by meaning and words, in Chinese or English; filters: scope, kinds, tags, since/until.",
           text = search_text)]
    async fn search_vault(&self, input: &SearchInput) -> ToolResult<SearchResult> {
        if input.query.trim().is_empty() {
            return Err(ToolError::invalid("`query` is empty: say what to look for"));
        }
        self.vault
            .search(
                &input.query,
                &input.filter,
                input.k.unwrap_or(5),
                input.mode,
            )
            .await
            .map_err(failed)
    }

    #[tool(name = "update_vault_entry", title = "Edit memory", category = "vault",
           effects = [VaultWrite],
           description = "Change a vault entry's text, title, kind, tags or scope (the file is rewritten; unknown front matter is kept).",
           text = updated)]
    async fn update_vault_entry(&self, input: &UpdateInput) -> ToolResult<Saved> {
        let changes = Changes {
            title: input.title.clone(),
            body: input.content.clone(),
            append: input.append.clone(),
            kind: input.kind,
            scope: input.scope.clone(),
            tags: input.tags.clone(),
        };
        self.vault
            .update(&input.id, changes)
            .await
            .map(Saved::from)
            .map_err(failed)
    }

    #[tool(name = "delete_vault_entry", title = "Forget", category = "vault",
           effects = [VaultWrite],
           description = "Move a vault entry to the vault's trash folder (restorable with restore_vault_entry).",
           text = trashed_text)]
    async fn delete_vault_entry(&self, input: &IdInput) -> ToolResult<Trashed> {
        let (entry, trash_path) = self.vault.trash(&input.id).await.map_err(failed)?;
        Ok(Trashed {
            id: entry.id,
            title: entry.title,
            trash_path,
        })
    }

    #[tool(name = "restore_vault_entry", title = "Restore memory", category = "vault",
           effects = [VaultWrite],
           description = "Bring a deleted vault entry back from the trash (by id or trash path).",
           text = restored)]
    async fn restore_vault_entry(&self, input: &IdInput) -> ToolResult<Saved> {
        self.vault
            .restore(&input.id)
            .await
            .map(Saved::from)
            .map_err(failed)
    }

    #[tool(name = "promote_memory", title = "Promote memory", category = "vault",
           effects = [VaultWrite],
           description = "Turn an insight from this conversation or project (or a scoped entry) into a global memory — a decision, learning or preference every later conversation can recall.",
           text = promoted)]
    async fn promote_memory(&self, input: &PromoteInput, ctx: &ToolContext) -> ToolResult<Saved> {
        let invalid = |m: &str| ToolError::invalid(m);
        let kind = input.kind.unwrap_or(Kind::Decision);
        if !kind.is_memory() {
            return Err(invalid(
                "`kind` must be decision, learning, preference or fact: a promoted memory is not a plain note",
            ));
        }
        let mut source = source(ctx);
        let new = match (&input.id, &input.insight) {
            (Some(id), None) => {
                let from = self.vault.get(id).map_err(failed)?.ok_or_else(|| {
                    failed(format!(
                        "no vault entry {id:?} — search_vault gives the ids"
                    ))
                })?;
                source.promoted_from = Some(from.id.clone());
                let title = if input.title.trim().is_empty() {
                    from.title.clone()
                } else {
                    input.title.clone()
                };
                NewEntry {
                    title,
                    body: format!(
                        "{}\n\nPromoted from [[{}]] ({}).",
                        from.body, from.title, from.scope
                    ),
                    kind: Some(kind),
                    scope: None,
                    tags: from.tags,
                    source,
                }
            }
            (None, Some(insight)) => NewEntry {
                title: input.title.clone(),
                body: insight.clone(),
                kind: Some(kind),
                scope: None,
                tags: vec![],
                source,
            },
            _ => {
                return Err(invalid(
                    "give either `id` (an entry to promote) or `insight` (the text), not both",
                ));
            }
        };
        self.vault.save(new).await.map(Saved::from).map_err(failed)
    }

    /// `quick_note` (the spine's notes tool) writes into the vault as a note.
    #[tool(name = "quick_note", title = "Quick note", category = "notes", effects = [NotesWrite],
           description = "Save a Markdown note (title, body, tags) to the vault's notes folder.",
           text = note_saved_text)]
    async fn quick_note(&self, input: &QuickNoteInput, ctx: &ToolContext) -> ToolResult<NoteSaved> {
        if input.title.trim().is_empty() {
            return Err(ToolError::invalid(
                "`title` is empty: give the note a title",
            ));
        }
        let new = NewEntry {
            title: input.title.clone(),
            body: input.body.clone(),
            kind: Some(Kind::Note),
            scope: None,
            tags: input.tags.clone(),
            source: source(ctx),
        };
        let entry = self.vault.save(new).await.map_err(failed)?;
        Ok(NoteSaved {
            id: entry.id,
            path: self.vault.root().join(&entry.path).display().to_string(),
        })
    }
}
