//! `search_code`: regex search over the workspace with ripgrep's own libraries (`ignore` for the
//! parallel, .gitignore-aware walk; `grep-regex` + `grep-searcher` for matching).

use crate::paths::{self, Target, default_root, walker};
use crate::{FilesTools, off_workers};
use cowork_contract::pathclass::{self, Classifier, PathClass};
use cowork_contract::{EffectEnv, ToolContext, ToolError, ToolResult, tools};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, Sink, SinkContext, SinkMatch};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchCodeInput {
    /// A regular expression (Rust/ripgrep syntax).
    pub pattern: String,
    /// Where to search (default: the workspace root); a folder or one file.
    pub path: Option<String>,
    /// Only files matching this glob, e.g. `*.rs` or `src/**/*.ts`.
    pub glob: Option<String>,
    #[serde(default)]
    pub case_insensitive: bool,
    /// Lines of context before and after each match (default 0, at most 10).
    pub context: Option<usize>,
    /// Lines of context before each match (overrides `context` on that side).
    pub before: Option<usize>,
    /// Lines of context after each match.
    pub after: Option<usize>,
    /// content (matching lines, the default) | files_with_matches | count
    pub output_mode: Option<String>,
    /// A file type as ripgrep names them: rust, ts, js, py, go, md…
    pub file_type: Option<String>,
    /// Let `.` match newlines and patterns span lines.
    #[serde(default)]
    pub multiline: bool,
    /// Accepted for Claude Code's Grep; line numbers are always shown.
    #[serde(default)]
    #[allow(dead_code)]
    pub line_numbers: Option<bool>,
    /// At most this many matching lines (default 200).
    pub max_results: Option<usize>,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct Hit {
    pub path: String,
    pub line: u64,
    pub text: String,
    /// Context lines, `number: text`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct SearchResult {
    pub hits: Vec<Hit>,
    pub files_with_hits: usize,
    pub truncated: bool,
    /// content | files_with_matches | count: how `to_text` shows the hits.
    pub mode: String,
    /// Files not read because their content also lives elsewhere (hard links, another
    /// filesystem): they count as outside the workspace.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_linked: usize,
    /// Files not read because they hold credentials (by name, place or content): read_file
    /// asks the person for each.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_credentials: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

struct Collect<'a> {
    path: String,
    hits: Vec<Hit>,
    pending_context: Vec<String>,
    found: &'a AtomicUsize,
    cap: usize,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _: &grep_searcher::Searcher,
        m: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        if self.found.fetch_add(1, Ordering::Relaxed) >= self.cap {
            return Ok(false);
        }
        let text = String::from_utf8_lossy(m.bytes())
            .trim_end_matches(['\n', '\r'])
            .chars()
            .take(500)
            .collect();
        self.hits.push(Hit {
            path: self.path.clone(),
            line: m.line_number().unwrap_or(0),
            text,
            context: std::mem::take(&mut self.pending_context),
        });
        Ok(true)
    }

    fn context(
        &mut self,
        _: &grep_searcher::Searcher,
        c: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        let line = format!(
            "{}: {}",
            c.line_number().unwrap_or(0),
            String::from_utf8_lossy(c.bytes()).trim_end_matches(['\n', '\r'])
        );
        match c.kind() {
            grep_searcher::SinkContextKind::After => {
                if let Some(last) = self.hits.last_mut() {
                    last.context.push(line);
                }
            }
            _ => self.pending_context.push(line),
        }
        Ok(true)
    }
}

impl Target for SearchCodeInput {
    fn target(&self, env: &EffectEnv) -> String {
        default_root(env, &self.path)
    }
}

fn search_code_text(r: &SearchResult) -> String {
    let mut out = hits_text(r).trim_end().to_string();
    if r.skipped_linked > 0 {
        out.push_str(&format!(
            "\n({} hard-linked or mounted file(s) skipped: they count as outside the workspace)",
            r.skipped_linked
        ));
    }
    if r.skipped_credentials > 0 {
        out.push_str(&format!(
            "\n({} file(s) that hold credentials were not searched: read_file asks the person for each)",
            r.skipped_credentials
        ));
    }
    out
}

fn hits_text(r: &SearchResult) -> String {
    if r.hits.is_empty() {
        return "no matches".into();
    }
    let mut out = String::new();
    if r.mode != "content" {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for hit in &r.hits {
            match counts.last_mut() {
                Some((path, n)) if *path == hit.path => *n += 1,
                _ => counts.push((&hit.path, 1)),
            }
        }
        for (path, n) in counts {
            out.push_str(&if r.mode == "count" {
                format!("{path}:{n}\n")
            } else {
                format!("{path}\n")
            });
        }
        return out;
    }
    for hit in &r.hits {
        for c in &hit.context {
            out.push_str(&format!("{}-{c}\n", hit.path));
        }
        out.push_str(&format!("{}:{}: {}\n", hit.path, hit.line, hit.text));
    }
    if r.truncated {
        out.push_str("… more matches: narrow the pattern, add a glob, or raise max_results\n");
    }
    out
}

fn output_mode(input: &SearchCodeInput) -> Result<String, ToolError> {
    let mode = input
        .output_mode
        .clone()
        .unwrap_or_else(|| "content".into());
    if !["content", "files_with_matches", "count"].contains(&mode.as_str()) {
        return Err(ToolError::invalid(format!(
            "output_mode {mode:?}: use content, files_with_matches or count"
        )));
    }
    Ok(mode)
}

fn matcher(input: &SearchCodeInput) -> Result<grep_regex::RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder.case_insensitive(input.case_insensitive);
    if input.multiline {
        builder.multi_line(true).dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder
        .build(&input.pattern)
        .map_err(|e| ToolError::invalid(format!("pattern {:?}: {e}", input.pattern)))
}

fn glob_filter(glob: Option<&str>) -> Result<Option<globset::GlobMatcher>, ToolError> {
    glob.map(|g| {
        // A glob without a slash matches file names anywhere, as `rg -g` does.
        if g.contains('/') {
            paths::glob_matcher(g)
        } else {
            paths::glob_matcher(&format!("**/{g}"))
        }
    })
    .transpose()
    .map_err(|e| ToolError::invalid(format!("glob: {e}")))
}

fn file_types(file_type: Option<&str>) -> Result<Option<ignore::types::Types>, ToolError> {
    file_type
        .map(|t| {
            let mut types = ignore::types::TypesBuilder::new();
            types.add_defaults();
            types.select(t);
            types.build()
        })
        .transpose()
        .map_err(|e| {
            ToolError::invalid(format!(
                "file_type: {e} (ripgrep's names: rust, ts, js, py, go, md…)"
            ))
        })
}

struct Options {
    before: usize,
    after: usize,
    cap: usize,
    multiline: bool,
}

impl Options {
    fn of(input: &SearchCodeInput) -> Self {
        let context = input.context.unwrap_or(0);
        Options {
            before: input.before.unwrap_or(context).min(10),
            after: input.after.unwrap_or(context).min(10),
            cap: input.max_results.unwrap_or(200).max(1),
            multiline: input.multiline,
        }
    }
}

/// What a search walks, and what it leaves out.
struct Walk<'a> {
    root: &'a Path,
    classifier: &'a Classifier,
    glob: Option<&'a globset::GlobMatcher>,
    cancel: &'a cowork_contract::CancellationToken,
}

/// Whether an opened file holds credentials by its place, name or first bytes (a private key
/// under any name). The file is left at its start.
fn holds_credentials(classifier: &Classifier, path: &Path, file: &mut std::fs::File) -> bool {
    use std::io::{Read, Seek};
    if matches!(classifier.classify(path), PathClass::Credential(_)) {
        return true;
    }
    let mut head = [0u8; 4096];
    let n = file.read(&mut head).unwrap_or(0);
    let _ = file.rewind();
    pathclass::holds_private_key(&head[..n])
}

fn search(
    walk: &Walk<'_>,
    matcher: &grep_regex::RegexMatcher,
    types: Option<ignore::types::Types>,
    options: &Options,
) -> Result<SearchResult, ToolError> {
    let tally = Tally {
        found: AtomicUsize::new(0),
        skipped_linked: AtomicUsize::new(0),
        skipped_credentials: AtomicUsize::new(0),
        root_dev: std::fs::metadata(walk.root)
            .map(|m| std::os::unix::fs::MetadataExt::dev(&m))
            .ok(),
        all: Mutex::new(Vec::new()),
    };
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(8);
    let mut builder = walker(walk.root, None);
    builder.threads(threads);
    if let Some(types) = types {
        builder.types(types);
    }
    builder.build_parallel().run(|| {
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .before_context(options.before)
            .after_context(options.after)
            .multi_line(options.multiline)
            .binary_detection(BinaryDetection::quit(0))
            .build();
        let tally = &tally;
        Box::new(move |entry| search_entry(walk, matcher, &mut searcher, options.cap, tally, entry))
    });
    if walk.cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    Ok(tally.result(options.cap))
}

/// What the search threads share: the hits, and how many matches and skipped files they saw.
struct Tally {
    found: AtomicUsize,
    skipped_linked: AtomicUsize,
    skipped_credentials: AtomicUsize,
    /// The root's filesystem: a file on another one is outside the workspace.
    root_dev: Option<u64>,
    all: Mutex<Vec<Hit>>,
}

impl Tally {
    /// The hits in path and line order, cut at `cap`.
    fn result(self, cap: usize) -> SearchResult {
        let mut hits = self.all.into_inner().unwrap();
        hits.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
        let truncated = self.found.load(Ordering::Relaxed) > cap || hits.len() >= cap;
        hits.truncate(cap);
        let files_with_hits = {
            let mut files: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
            files.dedup();
            files.len()
        };
        SearchResult {
            hits,
            files_with_hits,
            truncated,
            mode: "content".into(),
            skipped_linked: self.skipped_linked.into_inner(),
            skipped_credentials: self.skipped_credentials.into_inner(),
        }
    }
}

/// Searches one entry of the walk, unless it is left out (not a file, outside the glob, linked,
/// holding credentials); stops the walk once the cap is reached or the call is cancelled.
fn search_entry(
    walk: &Walk<'_>,
    matcher: &grep_regex::RegexMatcher,
    searcher: &mut grep_searcher::Searcher,
    cap: usize,
    tally: &Tally,
    entry: Result<ignore::DirEntry, ignore::Error>,
) -> ignore::WalkState {
    use ignore::WalkState;
    if tally.found.load(Ordering::Relaxed) >= cap || walk.cancel.is_cancelled() {
        return WalkState::Quit;
    }
    let Ok(entry) = entry else {
        return WalkState::Continue;
    };
    if !entry.file_type().is_some_and(|t| t.is_file()) {
        return WalkState::Continue;
    }
    let rel = entry.path().strip_prefix(walk.root).unwrap_or(entry.path());
    if let Some(glob) = walk.glob
        && !glob.is_match(rel)
        && !glob.is_match(entry.path())
    {
        return WalkState::Continue;
    }
    let shown = if rel.as_os_str().is_empty() {
        entry.path().display().to_string()
    } else {
        rel.display().to_string()
    };
    let mut sink = Collect {
        path: shown,
        hits: Vec::new(),
        pending_context: Vec::new(),
        found: &tally.found,
        cap,
    };
    // Checked on the opened file, so the check and the read see the same inode.
    let Ok(mut file) = std::fs::File::open(entry.path()) else {
        return WalkState::Continue;
    };
    if let Ok(meta) = file.metadata() {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 || tally.root_dev.is_some_and(|dev| dev != meta.dev()) {
            tally.skipped_linked.fetch_add(1, Ordering::Relaxed);
            return WalkState::Continue;
        }
    }
    if holds_credentials(walk.classifier, entry.path(), &mut file) {
        tally.skipped_credentials.fetch_add(1, Ordering::Relaxed);
        return WalkState::Continue;
    }
    let _ = searcher.search_file(matcher, &file, &mut sink);
    if !sink.hits.is_empty() {
        tally.all.lock().unwrap().extend(sink.hits);
    }
    WalkState::Continue
}

#[tools(list = search_tools)]
impl FilesTools {
    #[tool(name = "search_code", title = "Search code", category = "files", aliases = ["Grep"],
           arg_aliases = [("-i", "case_insensitive"), ("-C", "context"), ("-B", "before"), ("-A", "after"), ("head_limit", "max_results"), ("type", "file_type"), ("-n", "line_numbers")],
           read_only, idempotent, effects = [FsRead], plan = Self::plan_read, text = search_code_text,
           description = "Search file contents by regex, respecting .gitignore; optional glob filter, context lines and a result cap.")]
    async fn search_code(
        &self,
        input: &SearchCodeInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<SearchResult> {
        let root = paths::planned(&ctx.env, plan)?;
        let mode = output_mode(input)?;
        let matcher = matcher(input)?;
        let glob = glob_filter(input.glob.as_deref())?;
        let types = file_types(input.file_type.as_deref())?;
        let options = Options::of(input);
        let cancel = ctx.cancel.clone();
        let classifier = Classifier::new(&ctx.env);
        let mut result = off_workers("search", move || {
            let walk = Walk {
                root: &root,
                classifier: &classifier,
                glob: glob.as_ref(),
                cancel: &cancel,
            };
            search(&walk, &matcher, types, &options)
        })
        .await?;
        result.mode = mode;
        Ok(result)
    }
}
