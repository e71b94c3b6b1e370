//! `check_code_quality` and `batch_check_quality`: per file, the functions (tree-sitter parse of
//! Rust, TypeScript/TSX, JavaScript and Python) with their length and cyclomatic complexity,
//! hard-coded secrets, TODO/FIXME counts, and a summary.
//!
//! Complexity is McCabe's: 1 + the decision points inside the function's own body (branches,
//! loops, match arms/cases, catch clauses, ternaries, `&&`/`||`/`??`); a nested function counts
//! for itself, not for its parent.

use crate::paths::{self, Target, default_root, walker};
use crate::{FilesTools, off_workers};
use cowork_contract::pathclass::{Classifier, PathClass};
use cowork_contract::{EffectEnv, ToolContext, ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::path::PathBuf;
use std::sync::OnceLock;

const LONG_FUNCTION_LINES: usize = 60;
const COMPLEX: u32 = 10;
const MAX_FILE_BYTES: u64 = 2 << 20;

#[derive(Clone, Copy)]
enum Lang {
    Rust,
    TypeScript,
    Tsx,
    JavaScript,
    Python,
}

impl Lang {
    fn of(path: &Path) -> Option<Lang> {
        match path.extension()?.to_str()? {
            "rs" => Some(Lang::Rust),
            "ts" | "mts" | "cts" => Some(Lang::TypeScript),
            "tsx" => Some(Lang::Tsx),
            "js" | "mjs" | "cjs" | "jsx" => Some(Lang::JavaScript),
            "py" | "pyi" => Some(Lang::Python),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::JavaScript => "javascript",
            Lang::Python => "python",
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
        }
    }

    fn is_function(self, kind: &str) -> bool {
        match self {
            Lang::Rust => kind == "function_item",
            Lang::Python => kind == "function_definition",
            _ => matches!(
                kind,
                "function_declaration"
                    | "function_expression"
                    | "function"
                    | "arrow_function"
                    | "method_definition"
                    | "generator_function_declaration"
            ),
        }
    }

    /// Decision points; `operator` is the text of a binary expression's operator, if any.
    fn is_decision(self, kind: &str, operator: Option<&str>) -> bool {
        let logical = matches!(operator, Some("&&" | "||" | "??" | "and" | "or"));
        match self {
            Lang::Rust => {
                matches!(
                    kind,
                    "if_expression" | "while_expression" | "for_expression" | "match_arm"
                ) || (kind == "binary_expression" && logical)
            }
            Lang::Python => {
                matches!(
                    kind,
                    "if_statement"
                        | "elif_clause"
                        | "for_statement"
                        | "while_statement"
                        | "except_clause"
                        | "conditional_expression"
                        | "case_clause"
                        | "if_clause"
                ) || (kind == "boolean_operator" && logical)
            }
            _ => {
                matches!(
                    kind,
                    "if_statement"
                        | "for_statement"
                        | "for_in_statement"
                        | "while_statement"
                        | "do_statement"
                        | "switch_case"
                        | "catch_clause"
                        | "ternary_expression"
                ) || (kind == "binary_expression" && logical)
            }
        }
    }
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct Function {
    pub name: String,
    pub line: usize,
    pub lines: usize,
    pub complexity: u32,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct Secret {
    pub line: usize,
    pub kind: String,
    /// The first characters only: the report must not spread the secret further.
    pub preview: String,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct FileQuality {
    pub path: String,
    pub language: Option<String>,
    pub lines: usize,
    pub functions: Vec<Function>,
    pub long_functions: Vec<String>,
    pub complex_functions: Vec<String>,
    pub max_complexity: u32,
    pub secrets: Vec<Secret>,
    pub todos: usize,
    pub fixmes: usize,
    /// One line: what needs attention first.
    pub summary: String,
}

fn secret_patterns() -> &'static [(&'static str, regex::Regex)] {
    static PATTERNS: OnceLock<Vec<(&'static str, regex::Regex)>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        [
            ("private key", r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY"),
            ("AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
            ("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
            ("Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
            ("API key (sk-…)", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
            ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
            ("assigned secret", r#"(?i)\b[a-z0-9_]*(?:password|passwd|secret|api_?key|access_?token|auth_?token)[a-z0-9_]*\s*[:=]\s*["'][^"'\s]{8,}["']"#),
        ]
        .into_iter()
        .map(|(kind, re)| (kind, regex::Regex::new(re).expect("secret pattern")))
        .collect()
    })
}

/// Analyses one file's text (`path` only names it and picks the language).
pub fn analyse(path: &Path, shown: &str, text: &str) -> FileQuality {
    let lang = Lang::of(path);
    let functions = lang
        .map(|lang| functions_of(lang, text))
        .unwrap_or_default();
    let marks = Marks::of(text);
    let long_functions: Vec<String> = functions
        .iter()
        .filter(|f| f.lines > LONG_FUNCTION_LINES)
        .map(|f| format!("{} (line {}, {} lines)", f.name, f.line, f.lines))
        .collect();
    let complex_functions: Vec<String> = functions
        .iter()
        .filter(|f| f.complexity > COMPLEX)
        .map(|f| format!("{} (line {}, complexity {})", f.name, f.line, f.complexity))
        .collect();
    let max_complexity = functions.iter().map(|f| f.complexity).max().unwrap_or(0);
    let notes = notes(&marks, &complex_functions, &long_functions);
    let summary = match (lang, notes.is_empty()) {
        (None, true) => "not a supported language (Rust, TypeScript, JavaScript, Python): secrets and TODOs only; none found".into(),
        (_, true) => format!("{} functions, max complexity {max_complexity}: nothing to flag", functions.len()),
        _ => notes.join("; "),
    };
    FileQuality {
        path: shown.into(),
        language: lang.map(|l| l.name().to_string()),
        lines: text.lines().count(),
        functions,
        long_functions,
        complex_functions,
        max_complexity,
        secrets: marks.secrets,
        todos: marks.todos,
        fixmes: marks.fixmes,
        summary,
    }
}

/// The functions of a text in `lang`, in source order; none when it does not parse.
fn functions_of(lang: Lang, text: &str) -> Vec<Function> {
    let mut functions = Vec::new();
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&lang.grammar()).is_ok()
        && let Some(tree) = parser.parse(text, None)
    {
        collect(
            lang,
            tree.root_node(),
            text.as_bytes(),
            None,
            &mut functions,
        );
    }
    functions
}

/// What a line-by-line look finds, in any language: secrets and TODO/FIXME marks.
struct Marks {
    secrets: Vec<Secret>,
    todos: usize,
    fixmes: usize,
}

impl Marks {
    fn of(text: &str) -> Marks {
        let mut marks = Marks {
            secrets: Vec::new(),
            todos: 0,
            fixmes: 0,
        };
        for (i, line) in text.lines().enumerate() {
            marks.todos += usize::from(line.contains("TODO"));
            marks.fixmes += usize::from(line.contains("FIXME") || line.contains("XXX"));
            if let Some(secret) = secret_in(line, i + 1) {
                marks.secrets.push(secret);
            }
        }
        marks
    }
}

/// The first secret pattern a line matches, shown by its first characters only.
fn secret_in(line: &str, number: usize) -> Option<Secret> {
    secret_patterns().iter().find_map(|(kind, re)| {
        let m = re.find(line)?;
        let preview: String = m.as_str().chars().take(6).collect();
        Some(Secret {
            line: number,
            kind: kind.to_string(),
            preview: format!("{preview}…"),
        })
    })
}

/// What needs attention, most urgent first.
fn notes(marks: &Marks, complex_functions: &[String], long_functions: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    if !marks.secrets.is_empty() {
        notes.push(format!(
            "{} possible hard-coded secret(s)",
            marks.secrets.len()
        ));
    }
    if !complex_functions.is_empty() {
        notes.push(format!(
            "{} function(s) over complexity {COMPLEX}",
            complex_functions.len()
        ));
    }
    if !long_functions.is_empty() {
        notes.push(format!(
            "{} function(s) over {LONG_FUNCTION_LINES} lines",
            long_functions.len()
        ));
    }
    let (todos, fixmes) = (marks.todos, marks.fixmes);
    if todos + fixmes > 0 {
        notes.push(format!("{todos} TODO, {fixmes} FIXME"));
    }
    notes
}

fn function_name(node: tree_sitter::Node<'_>, source: &[u8]) -> String {
    let text = |n: tree_sitter::Node<'_>| n.utf8_text(source).unwrap_or("?").to_string();
    if let Some(name) = node.child_by_field_name("name") {
        return text(name);
    }
    // `const f = () => …` / `x = function () …`: the name is on the parent.
    node.parent()
        .and_then(|p| {
            p.child_by_field_name("name")
                .or_else(|| p.child_by_field_name("left"))
        })
        .map(text)
        .unwrap_or_else(|| "<anonymous>".into())
}

fn collect(
    lang: Lang,
    node: tree_sitter::Node<'_>,
    source: &[u8],
    current: Option<usize>,
    out: &mut Vec<Function>,
) {
    let kind = node.kind();
    let mut current = current;
    if lang.is_function(kind) {
        let (start, end) = (node.start_position().row, node.end_position().row);
        out.push(Function {
            name: function_name(node, source),
            line: start + 1,
            lines: end - start + 1,
            complexity: 1,
        });
        current = Some(out.len() - 1);
    } else {
        let operator = node
            .child_by_field_name("operator")
            .and_then(|o| o.utf8_text(source).ok());
        if let Some(i) = current
            && lang.is_decision(kind, operator)
        {
            out[i].complexity += 1;
        }
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect(lang, child, source, current, out);
    }
}

fn read_text(path: &Path, env: &EffectEnv) -> Result<String, ToolError> {
    use std::io::Read;
    let mut file = env.open_reviewed(path)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > MAX_FILE_BYTES {
        return Err(ToolError::invalid(format!(
            "{} is {} MB; files over 2 MB are not analysed",
            path.display(),
            size >> 20
        )));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| crate::paths::io_error(path, e))?;
    String::from_utf8(bytes)
        .map_err(|_| ToolError::invalid(format!("{} is not UTF-8 text", path.display())))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckInput {
    pub path: String,
}

impl Target for CheckInput {
    fn target(&self, _: &EffectEnv) -> String {
        self.path.clone()
    }
}

fn report(q: &FileQuality) -> String {
    let mut out = format!(
        "{} ({}, {} lines): {}\n",
        q.path,
        q.language.as_deref().unwrap_or("text"),
        q.lines,
        q.summary
    );
    for f in q.complex_functions.iter().chain(&q.long_functions) {
        out.push_str(&format!("  - {f}\n"));
    }
    for s in &q.secrets {
        out.push_str(&format!(
            "  - line {}: {} ({})\n",
            s.line, s.kind, s.preview
        ));
    }
    out
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchInput {
    /// A folder to check (default: the workspace root).
    pub path: Option<String>,
    /// Only files matching this glob (relative to the folder), e.g. `src/**/*.ts`.
    pub glob: Option<String>,
    /// At most this many files (default 500).
    pub limit: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
pub struct BatchQuality {
    pub files_checked: usize,
    pub functions: usize,
    /// Files with something to flag, worst first (secrets, then complexity).
    pub flagged: Vec<FileQuality>,
    pub truncated: bool,
    pub summary: String,
}

impl Target for BatchInput {
    fn target(&self, env: &EffectEnv) -> String {
        default_root(env, &self.path)
    }
}

fn batch_text(b: &BatchQuality) -> String {
    let mut out = format!("{}\n", b.summary);
    for q in b.flagged.iter().take(30) {
        out.push_str(&report(q));
    }
    if b.truncated {
        out.push_str("… more files: narrow with glob or raise limit\n");
    }
    out
}

/// Analyses the source files under `root` (at most `limit`); the analyses, and whether files
/// were left for the limit.
fn check_folder(
    root: &Path,
    glob: Option<&globset::GlobMatcher>,
    limit: usize,
    env: &EffectEnv,
) -> (Vec<FileQuality>, bool) {
    let classifier = Classifier::new(env);
    let mut checked = Vec::new();
    for entry in walker(root, None).build().flatten() {
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap_or(path);
        // Files that hold credentials are not opened by a folder-wide look.
        let credentials = matches!(classifier.classify(path), PathClass::Credential(_));
        if credentials
            || !entry.file_type().is_some_and(|t| t.is_file())
            || Lang::of(path).is_none()
            || glob.is_some_and(|g| !g.is_match(rel))
        {
            continue;
        }
        if checked.len() >= limit {
            return (checked, true);
        }
        // Unreadable or oversized files are skipped, not fatal, in a batch.
        if let Ok(text) = read_text(path, env) {
            checked.push(analyse(path, &rel.display().to_string(), &text));
        }
    }
    (checked, false)
}

/// The totals of a folder's analyses, and the flagged files worst first (secrets, then
/// complexity).
fn batch(checked: Vec<FileQuality>, truncated: bool) -> BatchQuality {
    let functions = checked.iter().map(|q| q.functions.len()).sum();
    let files_checked = checked.len();
    let mut flagged: Vec<FileQuality> = checked
        .into_iter()
        .filter(|q| {
            !q.secrets.is_empty() || !q.complex_functions.is_empty() || !q.long_functions.is_empty()
        })
        .collect();
    flagged.sort_by(|a, b| {
        b.secrets
            .len()
            .cmp(&a.secrets.len())
            .then(b.max_complexity.cmp(&a.max_complexity))
    });
    let secrets: usize = flagged.iter().map(|q| q.secrets.len()).sum();
    let summary = format!(
        "{files_checked} files, {functions} functions; {} files flagged, {secrets} possible secrets",
        flagged.len()
    );
    BatchQuality {
        files_checked,
        functions,
        flagged,
        truncated,
        summary,
    }
}

#[tools(list = quality_tools)]
impl FilesTools {
    #[tool(name = "check_code_quality", title = "Check code quality", category = "files",
           read_only, idempotent, effects = [FsRead], plan = Self::plan_read, text = report,
           description = "One file's functions with length and cyclomatic complexity (Rust, TypeScript, JavaScript, Python), hard-coded secrets, TODO/FIXME counts and a summary.")]
    async fn check_code_quality(
        &self,
        _: &CheckInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<FileQuality> {
        let path = paths::planned(&ctx.env, plan)?;
        let text = read_text(&path, &ctx.env)?;
        let shown = crate::paths::display(&ctx.env, &path);
        off_workers("analysis", move || Ok(analyse(&path, &shown, &text))).await
    }

    #[tool(name = "batch_check_quality", title = "Check code quality (folder)", category = "files",
           read_only, idempotent, effects = [FsRead], plan = Self::plan_read, text = batch_text,
           description = "check_code_quality over a folder's source files (respecting .gitignore): totals and the files that need attention, worst first.")]
    async fn batch_check_quality(
        &self,
        input: &BatchInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<BatchQuality> {
        let root = paths::planned(&ctx.env, plan)?;
        let glob = input
            .glob
            .as_deref()
            .map(paths::glob_matcher)
            .transpose()
            .map_err(|e| ToolError::invalid(format!("glob: {e}")))?;
        let limit = input.limit.unwrap_or(500).max(1);
        let env = ctx.env.clone();
        off_workers("analysis", move || {
            let (checked, truncated) = check_folder(&root, glob.as_ref(), limit, &env);
            Ok(batch(checked, truncated))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complexity_of(q: &FileQuality, name: &str) -> u32 {
        let function = q.functions.iter().find(|f| f.name == name);
        function.unwrap().complexity
    }

    #[test]
    fn complexity_counts_decisions_per_function_in_each_language() {
        let rust = "fn a(x: i32) -> i32 {\n    if x > 0 && x < 9 { 1 } else { match x { 0 => 2, _ => 3 } }\n}\nfn b() { let f = |y: i32| y; }\n";
        let q = analyse(Path::new("a.rs"), "a.rs", rust);
        let f = |name: &str| complexity_of(&q, name);
        // 1 + if + && + two arms
        assert_eq!(
            (f("a"), f("b")),
            (5, 1),
            "{:?}",
            q.functions
                .iter()
                .map(|f| (&f.name, f.complexity))
                .collect::<Vec<_>>()
        );

        let py = "def g(x):\n    if x and y:\n        return 1\n    elif x:\n        return 2\n    for i in x:\n        pass\n    def inner():\n        while True:\n            pass\n";
        let q = analyse(Path::new("g.py"), "g.py", py);
        let f = |name: &str| complexity_of(&q, name);
        assert_eq!((f("g"), f("inner")), (5, 2));

        let ts = "export function h(a: number): number {\n  return a > 1 ? (a ?? 0) : a || 2;\n}\nconst k = (x: string) => { switch (x) { case 'a': return 1; case 'b': return 2; default: return 0; } };\n";
        let q = analyse(Path::new("h.ts"), "h.ts", ts);
        let f = |name: &str| complexity_of(&q, name);
        assert_eq!((f("h"), f("k")), (4, 3));
    }

    #[test]
    fn secrets_and_todos_are_found_without_echoing_the_secret() {
        let text = "const API_KEY = \"sk-ant-REDACTEDREDACTEDREDACTED\";\n// TODO: rotate\n// FIXME later\nlet password = \"hunter2hunter2\";\n";
        let q = analyse(Path::new("x.js"), "x.js", text);
        assert_eq!(
            q.secrets.len(),
            2,
            "{:?}",
            q.secrets.iter().map(|s| &s.kind).collect::<Vec<_>>()
        );
        assert!(q.secrets.iter().all(|s| s.preview.chars().count() <= 7));
        assert_eq!((q.todos, q.fixmes), (1, 1));
    }
}
