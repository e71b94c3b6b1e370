//! Tauri's build step (config, ACL, context), and the window's commands listed once.
//!
//! The commands are found, not kept in a list: every function marked `#[tauri::command]` in
//! `src/commands/*.rs` is one. The scan is structural (it reads the attribute the compiler
//! reads, on the function it marks) so that three things name exactly the same commands without
//! anyone keeping them in step:
//!  - Tauri's app manifest: one `allow-<name>` permission per command;
//!  - the permission set `app-commands`, the only command permission the capability grants (the
//!    webview may call these commands and nothing else);
//!  - `$OUT_DIR/commands.rs`, the `collect_commands![…]` that lib.rs includes: it registers the
//!    commands and generates `ui/src/bindings.ts`.
//!
//! A command added is in all three; a name the scan finds that is no command fails to compile in
//! `collect_commands!`; an attribute the scan cannot read stops the build.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One `#[tauri::command]` function.
struct Command {
    /// Its module under `commands` (the file's stem).
    module: String,
    name: String,
    /// Generic over the runtime (`<R: Runtime>`): registered and typed as `::<tauri::Wry>`.
    generic: bool,
}

fn main() {
    // The config sits at the repository root (the product layout); plain cargo builds it.
    println!("cargo:rerun-if-changed=../tauri.conf.json");
    println!("cargo:rerun-if-changed=src/commands");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let commands = scan(Path::new("src/commands"));
    write(&out_dir.join("commands.rs"), &collect_commands(&commands));
    let permissions = out_dir.join("permissions");
    std::fs::create_dir_all(&permissions).expect("the permissions folder in OUT_DIR");
    write(
        &permissions.join("app-commands.toml"),
        &permission_set(&commands),
    );
    // tauri-build keeps both for the whole build script's run (`&'static`): leaked once here.
    let names: Vec<&'static str> = commands.iter().map(|c| &*c.name.clone().leak()).collect();
    let pattern = permissions.join("*.toml").display().to_string();
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .config_path("../tauri.conf.json")
            .app_manifest(
                tauri_build::AppManifest::new()
                    .commands(names.leak())
                    .permissions_path_pattern(pattern.leak()),
            ),
    )
    .expect("tauri build step");
}

/// Every command in the folder's files, by file name, then in file order.
fn scan(folder: &Path) -> Vec<Command> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .expect("src/commands")
        .map(|entry| entry.expect("an entry of src/commands").path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut commands = Vec::new();
    for file in files {
        let module = file.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).expect("a command file");
        commands.extend(
            commands_in(&text, &file)
                .into_iter()
                .map(|(name, generic)| Command {
                    module: module.clone(),
                    name,
                    generic,
                }),
        );
    }
    assert!(!commands.is_empty(), "no #[tauri::command] in src/commands");
    commands
}

/// The `#[tauri::command]` functions of one file: each attribute must mark a `pub fn` (after
/// other attributes and comments), without arguments (a `rename` would give the command a name
/// its permission does not have).
fn commands_in(text: &str, file: &Path) -> Vec<(String, bool)> {
    let mut lines = text.lines().enumerate();
    let mut found = Vec::new();
    while let Some((at, line)) = lines.next() {
        let line = line.trim();
        if !line.starts_with("#[tauri::command") {
            continue;
        }
        let place = format!("{}:{}", file.display(), at + 1);
        assert!(
            line == "#[tauri::command]",
            "{place}: only a bare #[tauri::command] is supported (the ACL names a command by its function)"
        );
        let signature = lines
            .by_ref()
            .map(|(_, l)| l.trim())
            .find(|l| !(l.starts_with("#[") || l.starts_with("//")))
            .unwrap_or_default();
        let function = signature
            .strip_prefix("pub fn ")
            .or_else(|| signature.strip_prefix("pub async fn "))
            .unwrap_or_else(|| panic!("{place}: #[tauri::command] must mark a `pub fn`"));
        let name: String = function
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        found.push((name.clone(), function[name.len()..].starts_with('<')));
    }
    found
}

/// The `collect_commands![…]` lib.rs includes.
fn collect_commands(commands: &[Command]) -> String {
    let mut text = String::from(
        "// Generated by build.rs from every #[tauri::command] in src/commands/.\n\
         tauri_specta::collect_commands![\n",
    );
    for c in commands {
        let generics = if c.generic { "::<tauri::Wry>" } else { "" };
        writeln!(text, "    commands::{}::{}{generics},", c.module, c.name).unwrap();
    }
    text.push(']');
    text
}

/// The permission set the capability grants: every command, and only they.
fn permission_set(commands: &[Command]) -> String {
    let allowed: Vec<String> = commands
        .iter()
        .map(|c| format!("\"allow-{}\"", c.name.replace('_', "-")))
        .collect();
    format!(
        "# Generated by build.rs from every #[tauri::command] in src/commands/.\n\
         [[set]]\n\
         identifier = \"app-commands\"\n\
         description = \"Every command of Cowork's window, and nothing else.\"\n\
         permissions = [{}]\n",
        allowed.join(", ")
    )
}

/// Writes `text` unless the file already holds it (an unchanged file keeps its time, so what
/// depends on it is not built again).
fn write(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}
