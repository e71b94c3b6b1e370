//! The house's maps cannot drift from the code: ARCHITECTURE.md's tool table names, for every
//! tool the registry lists, a file that declares it; its crate table names every workspace crate
//! with a layer, and no crate depends on one at its own layer or above; the pack authors'
//! guide names every effect kind; no function is longer than 80 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(repo().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The rows of the Markdown table whose header row is `header`, each split into its cells.
fn table(markdown: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = markdown.lines().skip_while(|l| l.trim() != header);
    assert!(lines.next().is_some(), "no table headed {header:?}");
    lines
        .skip(1) // the |---| line
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// `` `a`, `b` `` → ["a", "b"].
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_map_names_where_each_tool_is_declared() {
    let map = read("ARCHITECTURE.md");
    let specs: serde_json::Value =
        serde_json::from_str(&read("tests/data/tool-specs.json")).unwrap();
    let shipped: BTreeSet<String> = specs
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["spec"]["name"].as_str().unwrap().to_string())
        .collect();
    let mut mapped = BTreeSet::new();
    for row in table(&map, "| file | tools |") {
        let file = ticked(&row[0]).pop().expect("a file in backticks");
        let source = read(&file);
        for tool in ticked(&row[1]) {
            assert!(
                source.contains(&format!("\"{tool}\"")),
                "ARCHITECTURE.md says {tool} is declared in {file}, which does not name it"
            );
            assert!(mapped.insert(tool.clone()), "{tool} is mapped twice");
        }
    }
    let unmapped: Vec<_> = shipped.difference(&mapped).collect();
    let gone: Vec<_> = mapped.difference(&shipped).collect();
    assert!(
        unmapped.is_empty() && gone.is_empty(),
        "ARCHITECTURE.md's tool table is out of date: add {unmapped:?}, remove {gone:?}"
    );
}

/// Layers, lowest first. A crate may depend only on crates of a lower layer, so a family never
/// reaches core or another family, and nothing below a shell reaches a shell.
const LAYERS: &[&str] = &[
    "macro",
    "library",
    "store",
    "family|core",
    "chains",
    "agent",
    "app",
    "shell",
    "tests",
];

fn rank(layer: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.split('|').any(|name| name == layer))
        .unwrap_or_else(|| panic!("unknown layer {layer:?}; the layers are {LAYERS:?}"))
}

/// The one edge between shells, and why: the packages hold one program for both faces (two of
/// ~60 MB each made a 45 MB .deb), so the window's program runs the command line's `main_from`
/// when started with `--cli` — and uses nothing else of it (checked below).
const EMBEDDED_PROGRAMS: [(&str, &str); 1] = [("cowork-desktop", "cowork-cli")];

#[test]
fn the_window_program_uses_nothing_of_the_command_line_but_its_main() {
    let mut uses = Vec::new();
    let mut folders = vec![repo().join("src-tauri/src")];
    let mut files = Vec::new();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 3, "{files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for (at, _) in text.match_indices("cowork_cli::") {
            let rest = &text[at + "cowork_cli::".len()..];
            if !rest.starts_with("main_from(") {
                uses.push(format!(
                    "{}: cowork_cli::{}",
                    path.display(),
                    rest.lines().next().unwrap_or("")
                ));
            }
        }
    }
    assert!(
        uses.is_empty(),
        "the window reaches into the command line: {uses:?}"
    );
}

#[test]
fn every_crate_has_a_layer_an_invariant_and_depends_only_downward() {
    let map = read("ARCHITECTURE.md");
    let mut layer_of = BTreeMap::new();
    let mut folder_of = BTreeMap::new();
    for row in table(&map, "| crate | folder | layer | invariant | detail |") {
        let name = ticked(&row[0]).pop().expect("a crate in backticks");
        assert!(
            row[3].starts_with("Invariant:"),
            "{name}'s invariant cell must say `Invariant: …`"
        );
        layer_of.insert(name.clone(), rank(&row[2]));
        folder_of.insert(name, ticked(&row[1]).pop().expect("a folder in backticks"));
    }
    let mut members = BTreeSet::new();
    for entry in ["crates", "."]
        .iter()
        .flat_map(|d| std::fs::read_dir(repo().join(d)).unwrap())
    {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        if let Ok(text) = std::fs::read_to_string(&manifest) {
            let value: toml::Value = toml::from_str(&text).unwrap();
            if let Some(name) = value.get("package").and_then(|p| p["name"].as_str()) {
                members.insert(name.to_string());
            }
        }
    }
    let listed: BTreeSet<String> = layer_of.keys().cloned().collect();
    assert_eq!(
        members, listed,
        "ARCHITECTURE.md's crate table lists the workspace's crates"
    );
    for (name, folder) in &folder_of {
        let manifest: toml::Value = toml::from_str(&read(&format!("{folder}/Cargo.toml"))).unwrap();
        assert_eq!(
            manifest["package"]["name"].as_str(),
            Some(name.as_str()),
            "{folder}"
        );
        for section in ["dependencies", "build-dependencies"] {
            let Some(deps) = manifest.get(section).and_then(|d| d.as_table()) else {
                continue;
            };
            for dep in deps.keys().filter(|d| layer_of.contains_key(*d)) {
                if EMBEDDED_PROGRAMS.contains(&(name.as_str(), dep.as_str())) {
                    continue;
                }
                assert!(
                    layer_of[dep] < layer_of[name],
                    "{name} ({}) depends on {dep} ({}): a crate depends only on lower layers",
                    LAYERS[layer_of[name]],
                    LAYERS[layer_of[dep]]
                );
            }
        }
    }
}

#[test]
fn the_pack_authors_guide_names_every_effect_kind() {
    let guide = read("toolpacks/README.md");
    let missing: Vec<&str> = cowork_contract::EffectKind::ALL
        .iter()
        .map(|k| k.as_str())
        .filter(|name| !guide.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "toolpacks/README.md does not say what {missing:?} mean to a pack author"
    );
}

/// The window says what a tool can do and its category in words: a kind or a shipped category
/// it has no words for would show as its id (`process.exec`, `vault`) on the Tools page and in a
/// toolpack's review.
#[test]
fn the_window_has_words_for_every_effect_kind_and_category_in_both_languages() {
    let i18n = read("ui/src/i18n.ts");
    // Shipped tools' categories too (a pack's own category is shown as written).
    let specs: serde_json::Value =
        serde_json::from_str(&read("tests/data/tool-specs.json")).unwrap();
    let categories = specs.as_array().unwrap().iter().map(|t| {
        format!(
            "category.{}",
            t["spec"]["category"].as_str().unwrap_or_default()
        )
    });
    let mut missing: Vec<String> = cowork_contract::EffectKind::ALL
        .iter()
        .map(|k| format!("effect.{}", k.as_str()))
        .chain(categories)
        .filter(|id| {
            let row = format!("\"{id}\": [\"");
            // A row holds both languages: `"effect.x": ["English", "中文"],`.
            !i18n
                .lines()
                .any(|l| l.trim_start().starts_with(&row) && l.matches('"').count() == 6)
        })
        .collect();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "ui/src/i18n.ts's vocabulary has no English and Chinese words for {missing:?}"
    );
}

/// The longest a function may be, in lines from its first to its closing brace. Long bodies
/// grew back once where nothing counted them; now something does.
const LONGEST_FUNCTION: usize = 80;

/// Every file below `folder` (recursively) whose name ends with one of `endings`.
fn files_below(folder: &Path, endings: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() && !["node_modules", "dist", "target"].contains(&name.as_str()) {
                folders.push(path);
            } else if endings.iter().any(|e| name.ends_with(e)) {
                found.push(path);
            }
        }
    }
    found
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The line (index) closing the block opened at `open` and indented by `at` — rustfmt and
/// Biome put it alone at the opener's indent — and whether it closes the function (`}) {`
/// after destructured parameters goes on).
fn closing_line(lines: &[&str], open: usize, at: usize) -> usize {
    let mut end = open;
    for (k, line) in lines.iter().enumerate().skip(open + 1) {
        if line.trim().is_empty() {
            continue;
        }
        if indent(line) <= at {
            let t = line.trim();
            if indent(line) == at && t.starts_with(['}', ')', ']']) {
                end = k;
                if t.ends_with(['{', '(']) || t.ends_with("=>") {
                    continue;
                }
            }
            break;
        }
        end = k;
    }
    end
}

/// "path:line N lines" for a function from line index `first` to `last` that is too long.
fn too_long(path: &Path, first: usize, last: usize) -> Option<String> {
    let lines = last + 1 - first;
    (lines > LONGEST_FUNCTION).then(|| format!("{}:{} {lines} lines", path.display(), first + 1))
}

/// Rust functions outside test code: `fn` lines (any visibility, async, const) to their
/// closing brace; `#[cfg(test)]` modules are skipped whole.
fn long_rust_functions(path: &Path, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let words: Vec<&str> = line.split_whitespace().collect();
        let is_fn = words.iter().position(|w| *w == "fn").is_some_and(|at| {
            words[..at]
                .iter()
                .all(|w| w.starts_with("pub") || ["async", "const", "unsafe", "extern"].contains(w))
        });
        if line.trim() == "#[cfg(test)]" && lines.get(i + 1).is_some_and(|l| l.contains("mod ")) {
            // To its own `}` line: a raw string inside may start lines at any column.
            let close = format!("{}}}", &lines[i + 1][..indent(lines[i + 1])]);
            i += lines[i..]
                .iter()
                .position(|l| *l == close)
                .unwrap_or(lines.len());
            continue;
        }
        if is_fn && !line.trim_end().ends_with(';') {
            long.extend(too_long(path, i, closing_line(&lines, i, indent(line))));
        }
        i += 1;
    }
    long
}

/// Top-level functions and components in the UI: `function X(` and `const X = (…) =>`.
fn long_ui_functions(path: &Path, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let declared = line
            .trim_start_matches("export ")
            .trim_start_matches("default ");
        let declared = declared.trim_start_matches("async ");
        let is_fn = declared.starts_with("function ")
            || (declared.starts_with("const ")
                && (line.contains("= (") || line.contains("= async (") || line.contains("=> {")));
        if is_fn && indent(line) == 0 {
            long.extend(too_long(path, i, closing_line(&lines, i, 0)));
        }
    }
    long
}

#[test]
fn no_function_is_longer_than_80_lines() {
    let mut long = Vec::new();
    let mut rust = files_below(&repo().join("crates"), &[".rs"]);
    rust.extend(files_below(&repo().join("src-tauri/src"), &[".rs"]));
    let production = |p: &PathBuf| {
        let p = p.to_string_lossy();
        !p.contains("/tests/") && !p.contains("/benches/") && !p.ends_with("/tests.rs")
    };
    let rust: Vec<_> = rust.into_iter().filter(production).collect();
    assert!(rust.len() > 100, "found only {} Rust files", rust.len());
    for path in &rust {
        long.extend(long_rust_functions(
            path,
            &std::fs::read_to_string(path).unwrap(),
        ));
    }
    let ui = files_below(&repo().join("ui/src"), &[".ts", ".tsx"]);
    assert!(ui.len() > 20, "found only {} UI files", ui.len());
    for path in ui.iter().filter(|p| !p.ends_with("bindings.ts")) {
        long.extend(long_ui_functions(
            path,
            &std::fs::read_to_string(path).unwrap(),
        ));
    }
    assert!(
        long.is_empty(),
        "over {LONGEST_FUNCTION} lines — split into named steps: {long:#?}"
    );
}

#[test]
fn the_function_counter_counts() {
    let body = "    let x = 1;\n".repeat(LONGEST_FUNCTION);
    let rust = format!(
        "pub async fn f() {{\n{body}}}\n\n#[cfg(test)]\nmod tests {{\n    fn t() {{\n{body}    }}\n}}\n"
    );
    assert_eq!(long_rust_functions(Path::new("a.rs"), &rust).len(), 1);
    let short = format!(
        "fn g(\n    a: u8,\n) -> u8 {{\n{}}}\n",
        "    a;\n".repeat(10)
    );
    assert!(long_rust_functions(Path::new("a.rs"), &short).is_empty());
    let ui = format!(
        "export function View({{\n  a,\n}}: P) {{\n{}}}\n",
        "  a;\n".repeat(LONGEST_FUNCTION)
    );
    assert_eq!(long_ui_functions(Path::new("a.tsx"), &ui).len(), 1);
}
