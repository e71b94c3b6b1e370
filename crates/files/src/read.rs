//! Reading tools: `read_file`, `list_directory`, `glob`.

use crate::paths::{self, Target, default_root, walker};
use crate::shadow::Shadow;
use crate::{FilesTools, off_workers, shadow_error};
use cowork_contract::{EffectEnv, ToolContext, ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read};
use std::path::Path;
use std::path::PathBuf;

const DEFAULT_LINES: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// Files up to this size are counted and outlined in full when a page is returned.
const OUTLINE_MAX_BYTES: u64 = 8 << 20;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileInput {
    /// The file: relative to the workspace, absolute, or `~/…`.
    pub path: String,
    /// First line to return, 1-based (default 1).
    pub offset: Option<usize>,
    /// How many lines to return (default 2000).
    pub limit: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
pub struct FilePage {
    pub path: String,
    /// The lines, each as `number\ttext` (long lines cut at 2000 characters).
    pub text: String,
    pub first_line: usize,
    pub last_line: usize,
    /// None when the file is too big to count quickly.
    pub total_lines: Option<usize>,
    pub size_bytes: u64,
    /// More lines follow: ask again with `offset`.
    pub truncated: bool,
    /// Functions and types with their line numbers, when the page is not the whole file.
    pub outline: Vec<String>,
    /// Notes for the reader: binary, not UTF-8, staged content.
    pub notes: Vec<String>,
}

impl Target for ReadFileInput {
    fn target(&self, _: &EffectEnv) -> String {
        self.path.clone()
    }
}

fn read_file_text(page: &FilePage) -> String {
    let mut out = String::new();
    for note in &page.notes {
        out.push_str(&format!("[{note}]\n"));
    }
    out.push_str(&page.text);
    if page.truncated {
        let total = page
            .total_lines
            .map(|t| format!(" of {t}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n[lines {}–{}{total}; more with offset={}]\n",
            page.first_line,
            page.last_line,
            page.last_line + 1
        ));
        if !page.outline.is_empty() {
            out.push_str("[outline]\n");
            out.push_str(&page.outline.join("\n"));
            out.push('\n');
        }
    }
    out
}

/// One page of lines; reads no further than the page unless `count_all` (then it counts the
/// rest and outlines the whole file).
fn page_of(
    mut reader: impl BufRead,
    shown: &str,
    offset: usize,
    limit: usize,
    size: u64,
    count_all: bool,
) -> Result<FilePage, ToolError> {
    let failed = |e: std::io::Error| ToolError::failed(format!("{shown}: {e}"));
    let head = reader.fill_buf().map_err(failed)?;
    if head.iter().take(8192).any(|b| *b == 0) {
        return Ok(binary_page(shown, size, sniff(head)));
    }
    let mut page = Paging {
        first: offset,
        end: offset + limit,
        count_all,
        ..Paging::default()
    };
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(failed)? == 0 {
            break;
        }
        if !page.take(&line) {
            break;
        }
    }
    let mut notes = Vec::new();
    if page.lossy {
        notes.push("not valid UTF-8: undecodable bytes are shown as �".into());
    }
    Ok(FilePage {
        path: shown.into(),
        text: page.text,
        first_line: if page.last == 0 { 0 } else { offset },
        last_line: page.last,
        total_lines: count_all.then_some(page.number),
        size_bytes: size,
        truncated: page.more,
        outline: if page.more || offset > 1 {
            page.outline
        } else {
            vec![]
        },
        notes,
    })
}

/// What a binary file shows instead of its lines.
fn binary_page(shown: &str, size: u64, kind: &str) -> FilePage {
    FilePage {
        path: shown.into(),
        text: String::new(),
        first_line: 0,
        last_line: 0,
        total_lines: None,
        size_bytes: size,
        truncated: false,
        outline: vec![],
        notes: vec![format!(
            "binary file ({kind}, {size} bytes): not shown as text"
        )],
    }
}

/// A page being read, line by line: lines `first..end` are shown; with `count_all` every line
/// is counted and outlined.
#[derive(Default)]
struct Paging {
    first: usize,
    end: usize,
    count_all: bool,
    text: String,
    /// The last line read.
    number: usize,
    /// The last line shown.
    last: usize,
    outline: Vec<String>,
    lossy: bool,
    /// Lines follow the page.
    more: bool,
}

impl Paging {
    /// Takes the next line; false when nothing after it is wanted.
    fn take(&mut self, line: &[u8]) -> bool {
        self.number += 1;
        let number = self.number;
        let in_page = number >= self.first && number < self.end;
        if !in_page && !self.count_all {
            if number >= self.end {
                self.more = true;
                return false;
            }
            return true;
        }
        let content = match std::str::from_utf8(line) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => {
                self.lossy = true;
                String::from_utf8_lossy(line)
            }
        };
        let content = content.trim_end_matches(['\n', '\r']);
        if self.count_all
            && self.outline.len() < 300
            && let Some(entry) = outline_entry(content)
        {
            self.outline.push(format!("{number}: {entry}"));
        }
        if in_page {
            let cut: String = content.chars().take(MAX_LINE_CHARS).collect();
            self.text.push_str(&format!("{number:>6}\t{cut}\n"));
            self.last = number;
        } else if number >= self.end {
            self.more = true;
        }
        true
    }
}

fn sniff(head: &[u8]) -> &'static str {
    match head {
        [0x89, b'P', b'N', b'G', ..] => "PNG image",
        [0xFF, 0xD8, 0xFF, ..] => "JPEG image",
        [b'%', b'P', b'D', b'F', ..] => "PDF",
        [b'P', b'K', 3, 4, ..] => "zip archive",
        [0x7F, b'E', b'L', b'F', ..] => "ELF executable",
        [0x1F, 0x8B, ..] => "gzip",
        [b'S', b'Q', b'L', b'i', b't', b'e', ..] => "SQLite database",
        _ => "unknown type",
    }
}

/// A line that starts a function or a type, in the common languages. A line heuristic rather
/// than a parser: it runs over every line of an 8 MB file within the page budget; the
/// tree-sitter parse is for `check_code_quality`, which needs exact function bodies.
fn outline_entry(line: &str) -> Option<&str> {
    const STARTS: &[&str] = &[
        "fn ",
        "pub fn ",
        "pub(crate) fn ",
        "async fn ",
        "pub async fn ",
        "pub(crate) async fn ",
        "struct ",
        "pub struct ",
        "pub(crate) struct ",
        "enum ",
        "pub enum ",
        "pub(crate) enum ",
        "trait ",
        "pub trait ",
        "impl ",
        "impl<",
        "mod ",
        "pub mod ",
        "type ",
        "pub type ",
        "def ",
        "async def ",
        "class ",
        "function ",
        "async function ",
        "export function ",
        "export async function ",
        "export class ",
        "export default function ",
        "export default class ",
        "interface ",
        "export interface ",
        "export type ",
        "func ",
        "public class ",
        "public interface ",
        "public static ",
        "private static ",
        "protected ",
    ];
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    (indent <= 8 && STARTS.iter().any(|s| trimmed.starts_with(s))).then(|| {
        let end = trimmed
            .find(['{', ':'])
            .filter(|&i| i > 0)
            .unwrap_or(trimmed.len())
            .min(160);
        trimmed[..trimmed.floor_char_boundary(end)].trim_end()
    })
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirectoryInput {
    /// The folder (default: the workspace root).
    pub path: Option<String>,
    /// How deep to go (default 1: the folder's own entries).
    pub depth: Option<usize>,
    /// At most this many entries (default 500).
    pub limit: Option<usize>,
    /// Globs of names to leave out (beyond .gitignore), e.g. `["*.log", "node_modules"]`.
    #[serde(default)]
    pub ignore: Vec<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Entry {
    pub path: String,
    /// file | dir | symlink
    pub kind: &'static str,
    pub size: Option<u64>,
}

#[derive(Serialize, JsonSchema)]
pub struct Listing {
    pub path: String,
    pub entries: Vec<Entry>,
    pub truncated: bool,
}

impl Target for ListDirectoryInput {
    fn target(&self, env: &EffectEnv) -> String {
        default_root(env, &self.path)
    }
}

fn listing_text(listing: &Listing) -> String {
    let mut out = format!("{}:\n", listing.path);
    for e in &listing.entries {
        match e.size {
            Some(size) => out.push_str(&format!("  {}  ({size} B)\n", e.path)),
            None => out.push_str(&format!("  {}\n", e.path)),
        }
    }
    if listing.truncated {
        out.push_str("  … more entries: raise limit or list a subfolder\n");
    }
    out
}
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// A glob relative to `path`, e.g. `**/*.rs` or `src/**/mod.ts`.
    pub pattern: String,
    /// Where to look (default: the workspace root).
    pub path: Option<String>,
    /// At most this many paths (default 1000).
    pub limit: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
pub struct GlobMatches {
    /// Newest first, as Claude Code's Glob returns them.
    pub paths: Vec<String>,
    pub truncated: bool,
}

impl Target for GlobInput {
    fn target(&self, env: &EffectEnv) -> String {
        default_root(env, &self.path)
    }
}

fn glob_text(m: &GlobMatches) -> String {
    if m.paths.is_empty() {
        return "no files match".into();
    }
    let mut out = m.paths.join("\n");
    if m.truncated {
        out.push_str("\n… more: narrow the pattern or raise limit");
    }
    out
}

/// Reads a whole file the reviewed way (for edits): the staged view first.
pub fn current_bytes(
    shadow: &Shadow,
    ctx: &ToolContext,
    path: &Path,
) -> Result<Option<Vec<u8>>, ToolError> {
    if let Some(staged) = shadow
        .staged_view(&ctx.conversation_id, path)
        .map_err(shadow_error)?
    {
        return Ok(staged);
    }
    match ctx.env.open_reviewed(path) {
        Ok(mut file) => {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(|e| paths::io_error(path, e))?;
            Ok(Some(bytes))
        }
        Err(_) if !path.exists() => Ok(None),
        Err(e) => Err(e),
    }
}

#[tools(list = read_tools)]
impl FilesTools {
    #[tool(name = "read_file", title = "Read file", category = "files", aliases = ["Read"],
           arg_aliases = [("file_path", "path")], read_only, idempotent, effects = [FsRead],
           plan = Self::plan_read, text = read_file_text,
           description = "Read a text file by line range (offset, limit). A big file returns its first page and an outline of its functions and types; binary files are detected.")]
    async fn read_file(
        &self,
        input: &ReadFileInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<FilePage> {
        let path = paths::planned(&ctx.env, plan)?;
        let offset = input.offset.unwrap_or(1).max(1);
        let limit = input.limit.unwrap_or(DEFAULT_LINES).max(1);
        let shown = paths::display(&ctx.env, &path);
        // The conversation reads its own staged writes.
        if let Some(staged) = self
            .shadow
            .staged_view(&ctx.conversation_id, &path)
            .map_err(shadow_error)?
        {
            let Some(bytes) = staged else {
                return Err(ToolError::failed(format!(
                    "{shown} is staged for deletion in this conversation"
                )));
            };
            let size = bytes.len() as u64;
            let mut page = page_of(
                std::io::Cursor::new(bytes),
                &shown,
                offset,
                limit,
                size,
                true,
            )?;
            page.notes
                .push("staged in this conversation, not yet applied to disk".into());
            return Ok(page);
        }
        // One page: a bounded read, done in place.
        {
            let file = ctx.env.open_reviewed(&path)?;
            let meta = file.metadata().map_err(|e| paths::io_error(&path, e))?;
            if meta.is_dir() {
                return Err(ToolError::invalid(format!(
                    "{shown} is a folder: use list_directory"
                )));
            }
            let size = meta.len();
            let mut page = page_of(
                std::io::BufReader::with_capacity(64 << 10, file),
                &shown,
                offset,
                limit,
                size,
                size <= OUTLINE_MAX_BYTES,
            )?;
            if page.truncated && page.total_lines.is_none() {
                page.notes.push(format!(
                    "a {} MB file: showing lines {}–{}; read on with offset",
                    size >> 20,
                    page.first_line,
                    page.last_line
                ));
            }
            Ok(page)
        }
    }
}

// A list of its own: `attach_file` (attach.rs) comes between `read_file` and these in the
// family's order.
#[tools(list = listing_tools)]
impl FilesTools {
    #[tool(name = "list_directory", title = "List folder", category = "files", aliases = ["LS"],
           read_only, idempotent, effects = [FsRead], plan = Self::plan_read, text = listing_text,
           description = "List a folder's entries with sizes, respecting .gitignore (depth, limit).")]
    async fn list_directory(
        &self,
        input: &ListDirectoryInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<Listing> {
        let root = paths::planned(&ctx.env, plan)?;
        if !root.is_dir() {
            return Err(ToolError::invalid(format!(
                "{} is not a folder",
                root.display()
            )));
        }
        let limit = input.limit.unwrap_or(500).max(1);
        let depth = input.depth.unwrap_or(1).max(1);
        let shown = paths::display(&ctx.env, &root);
        let mut ignore = globset::GlobSetBuilder::new();
        for pattern in &input.ignore {
            ignore.add(
                globset::Glob::new(pattern)
                    .map_err(|e| ToolError::invalid(format!("ignore pattern {pattern:?}: {e}")))?,
            );
        }
        let ignore = ignore
            .build()
            .map_err(|e| ToolError::invalid(e.to_string()))?;
        off_workers("walk", move || {
            let mut entries = Vec::new();
            let mut truncated = false;
            for entry in walker(&root, Some(depth)).build().flatten() {
                if entry.depth() == 0 || ignore.is_match(entry.file_name()) {
                    continue;
                }
                if entries.len() >= limit {
                    truncated = true;
                    break;
                }
                let file_type = entry.file_type();
                let kind = match file_type {
                    Some(t) if t.is_symlink() => "symlink",
                    Some(t) if t.is_dir() => "dir",
                    _ => "file",
                };
                let size = (kind == "file")
                    .then(|| entry.metadata().ok().map(|m| m.len()))
                    .flatten();
                let rel = entry
                    .path()
                    .strip_prefix(&root)
                    .unwrap_or(entry.path())
                    .display()
                    .to_string();
                entries.push(Entry {
                    path: if kind == "dir" {
                        format!("{rel}/")
                    } else {
                        rel
                    },
                    kind,
                    size,
                });
            }
            entries.sort_by(|a, b| a.path.cmp(&b.path));
            Ok(Listing {
                path: shown,
                entries,
                truncated,
            })
        })
        .await
    }

    #[tool(name = "glob", title = "Find files", category = "files", aliases = ["Glob"],
           read_only, idempotent, effects = [FsRead], plan = Self::plan_read, text = glob_text,
           description = "Find files by glob pattern (e.g. `**/*.rs`), newest first, respecting .gitignore.")]
    async fn glob(
        &self,
        input: &GlobInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<GlobMatches> {
        let root = paths::planned(&ctx.env, plan)?;
        let matcher = paths::glob_matcher(&input.pattern)
            .map_err(|e| ToolError::invalid(format!("pattern {:?}: {e}", input.pattern)))?;
        let limit = input.limit.unwrap_or(1000).max(1);
        off_workers("walk", move || {
            let mut found: Vec<(std::time::SystemTime, String)> = Vec::new();
            let mut truncated = false;
            for entry in walker(&root, None).build().flatten() {
                let rel = entry.path().strip_prefix(&root).unwrap_or(entry.path());
                if entry.depth() == 0 || !matcher.is_match(rel) {
                    continue;
                }
                if found.len() >= limit {
                    truncated = true;
                    break;
                }
                let modified = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(std::time::UNIX_EPOCH);
                found.push((modified, rel.display().to_string()));
            }
            found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            Ok(GlobMatches {
                paths: found.into_iter().map(|(_, p)| p).collect(),
                truncated,
            })
        })
        .await
    }
}
