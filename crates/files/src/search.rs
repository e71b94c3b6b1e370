//! `search_code`: regex search over the workspace with ripgrep's own libraries (`ignore` for the
//! parallel, .gitignore-aware walk; `grep-regex` + `grep-searcher` for matching).

use crate::paths::Reviewed;
use cowork_contract::{Annotations, Effect, EffectEnv, EffectKind, Tool, ToolContext, ToolError, ToolMeta};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, Sink, SinkContext, SinkMatch};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct SearchCode;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchCodeInput {
    /// A regular expression (Rust/ripgrep syntax).
    pub pattern: String,
    /// Where to search (default: the workspace root); a folder or one file.
    #[serde(default)]
    pub path: Option<String>,
    /// Only files matching this glob, e.g. `*.rs` or `src/**/*.ts`.
    #[serde(default)]
    pub glob: Option<String>,
    #[serde(default)]
    pub case_insensitive: bool,
    /// Lines of context before and after each match (default 0, at most 10).
    #[serde(default)]
    pub context: Option<usize>,
    /// At most this many matching lines (default 200).
    #[serde(default)]
    pub max_results: Option<usize>,
    #[serde(skip)]
    #[schemars(skip)]
    reviewed: Reviewed,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct Hit {
    pub path: String,
    pub line: u64,
    pub text: String,
    /// Context lines, `number: text`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct SearchResult {
    pub hits: Vec<Hit>,
    pub files_with_hits: usize,
    pub truncated: bool,
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

    fn matched(&mut self, _: &grep_searcher::Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.found.fetch_add(1, Ordering::Relaxed) >= self.cap {
            return Ok(false);
        }
        let text = String::from_utf8_lossy(m.bytes()).trim_end_matches(['\n', '\r']).chars().take(500).collect();
        self.hits.push(Hit { path: self.path.clone(), line: m.line_number().unwrap_or(0), text, context: std::mem::take(&mut self.pending_context) });
        Ok(true)
    }

    fn context(&mut self, _: &grep_searcher::Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let line = format!("{}: {}", c.line_number().unwrap_or(0), String::from_utf8_lossy(c.bytes()).trim_end_matches(['\n', '\r']));
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

#[async_trait::async_trait]
impl Tool for SearchCode {
    type Input = SearchCodeInput;
    type Output = SearchResult;

    fn meta(&self) -> ToolMeta {
        ToolMeta::new("search_code", "Search code", "Search file contents by regex, respecting .gitignore; optional glob filter, context lines and a result cap.")
            .category("files")
            .aliases(&["Grep"])
            .annotations(Annotations { read_only: true, idempotent: true, ..Default::default() })
            .effects(&[EffectKind::FsRead])
    }

    fn effects(&self, input: &Self::Input, env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        let raw = input.path.clone().unwrap_or_else(|| env.workspace_roots.first().map(|r| r.display().to_string()).unwrap_or_else(|| ".".into()));
        let path = input.reviewed.set(env, "search_code", &raw)?;
        Ok(vec![Effect::FsRead { path: path.display().to_string() }])
    }

    async fn call(&self, input: &Self::Input, ctx: &ToolContext) -> Result<SearchResult, ToolError> {
        let root = input.reviewed.get(&ctx.env)?;
        let invalid = |message: String| ToolError::InvalidArguments { tool: "search_code".into(), message };
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(input.case_insensitive)
            .line_terminator(Some(b'\n'))
            .build(&input.pattern)
            .map_err(|e| invalid(format!("pattern {:?}: {e}", input.pattern)))?;
        let glob = input
            .glob
            .as_deref()
            .map(|g| {
                // A glob without a slash matches file names anywhere, as `rg -g` does.
                let g = if g.contains('/') { g.to_string() } else { format!("**/{g}") };
                globset::GlobBuilder::new(&g).literal_separator(true).build().map(|g| g.compile_matcher())
            })
            .transpose()
            .map_err(|e| invalid(format!("glob: {e}")))?;
        let context = input.context.unwrap_or(0).min(10);
        let cap = input.max_results.unwrap_or(200).max(1);
        let cancel = ctx.cancel.clone();
        tokio::task::spawn_blocking(move || search(&root, &matcher, glob.as_ref(), context, cap, &cancel))
            .await
            .map_err(|e| ToolError::failed(format!("search failed: {e}")))?
    }

    fn to_text(&self, r: &SearchResult) -> String {
        if r.hits.is_empty() {
            return "no matches".into();
        }
        let mut out = String::new();
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
}

fn search(
    root: &Path,
    matcher: &grep_regex::RegexMatcher,
    glob: Option<&globset::GlobMatcher>,
    context: usize,
    cap: usize,
    cancel: &cowork_contract::CancellationToken,
) -> Result<SearchResult, ToolError> {
    let found = AtomicUsize::new(0);
    let all: Mutex<Vec<Hit>> = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(8);
    let mut builder = ignore::WalkBuilder::new(root);
    builder.hidden(false).filter_entry(|e| e.file_name() != ".git").require_git(false).threads(threads);
    builder.build_parallel().run(|| {
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .before_context(context)
            .after_context(context)
            .binary_detection(BinaryDetection::quit(0))
            .build();
        let (found, all) = (&found, &all);
        Box::new(move |entry| {
            use ignore::WalkState;
            if found.load(Ordering::Relaxed) >= cap || cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else { return WalkState::Continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            if let Some(glob) = glob
                && !glob.is_match(rel)
                && !glob.is_match(entry.path())
            {
                return WalkState::Continue;
            }
            let shown = if rel.as_os_str().is_empty() { entry.path().display().to_string() } else { rel.display().to_string() };
            let mut sink = Collect { path: shown, hits: Vec::new(), pending_context: Vec::new(), found, cap };
            let _ = searcher.search_path(matcher, entry.path(), &mut sink);
            if !sink.hits.is_empty() {
                all.lock().unwrap().extend(sink.hits);
            }
            WalkState::Continue
        })
    });
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    let mut hits = all.into_inner().unwrap();
    hits.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    let truncated = found.load(Ordering::Relaxed) > cap || hits.len() >= cap;
    hits.truncate(cap);
    let files_with_hits = {
        let mut files: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
        files.dedup();
        files.len()
    };
    Ok(SearchResult { hits, files_with_hits, truncated })
}
