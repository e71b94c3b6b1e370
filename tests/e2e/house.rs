//! The house's maps cannot drift from the code: ARCHITECTURE.md's tool table names, for every
//! tool the registry lists, a file that declares it; its crate table names every workspace crate
//! with a layer, and no crate depends on one at its own layer or above; the pack authors'
//! guide names every effect kind.

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
