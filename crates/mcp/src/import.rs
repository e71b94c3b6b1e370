//! Import Claude Desktop's `claude_desktop_config.json` (`mcpServers{name:{command,args,env}}`):
//! each server becomes a toolpack folder with a generated MCPB manifest. Nothing declares
//! effects, so every imported tool asks until the person adds declarations or rules.

use crate::toolpacks::PackError;
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClaudeConfig {
    #[serde(default)]
    mcp_servers: BTreeMap<String, ClaudeServer>,
}

#[derive(Deserialize)]
struct ClaudeServer {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

/// What a server from Claude Desktop's config is given in its sandbox: the folders its
/// arguments name (it was configured to work in them: read and change), the folder of a script
/// it runs (read, for the script's own imports), and the network (such servers usually fetch
/// their package or call an API). The install review shows all of it.
fn sandbox_for(args: &[String]) -> serde_json::Value {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let (mut read, mut write) = (Vec::new(), Vec::new());
    for arg in args {
        let path = Path::new(arg);
        if !path.is_absolute() {
            continue;
        }
        if path.is_dir() {
            write.push(arg.clone());
        } else if path.is_file() {
            // The script's folder, unless that is the home folder or above it: then the file.
            let folder = path.parent().filter(|p| {
                p.parent().is_some() && home.as_deref().is_none_or(|h| !h.starts_with(p))
            });
            read.push(folder.unwrap_or(path).display().to_string());
        }
    }
    json!({"read": read, "write": write, "network": true})
}

/// Where Claude Desktop keeps its config on this system (its Linux builds follow XDG).
pub fn default_config_path() -> Option<PathBuf> {
    let home = PathBuf::from(std::env::var_os("HOME")?);
    let dir = if cfg!(target_os = "macos") {
        home.join("Library/Application Support/Claude")
    } else {
        std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".config"))
            .join("Claude")
    };
    Some(dir.join("claude_desktop_config.json"))
}

/// Words of letters and digits joined by single '_' (`fallback` when there are none): a name
/// no other pack can read as.
pub(crate) fn pack_name(text: &str, fallback: &str) -> String {
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    match words.is_empty() {
        true => fallback.to_string(),
        false => words.join("_"),
    }
}

/// Writes one folder per server under `out` and returns them (install each as a folder source).
pub fn claude_desktop_config(config: &Path, out: &Path) -> Result<Vec<PathBuf>, PackError> {
    packs_from(config, out, None)
}

/// An Agent Plugin's `.mcp.json`: one folder per server under `out`, each holding a copy of the
/// plugin (its `${CLAUDE_PLUGIN_ROOT}` is the pack's own folder) and named `<plugin>_<server>`,
/// so no plugin can take an installed pack's name. Unlike the person's own Claude Desktop
/// config, the plugin's arguments grant no folders: its sandbox is the pack's folder and the
/// network, which its review shows.
pub fn plugin_servers(
    mcp_json: &Path,
    plugin_root: &Path,
    plugin: &str,
    out: &Path,
) -> Result<Vec<PathBuf>, PackError> {
    packs_from(mcp_json, out, Some((plugin_root, plugin)))
}

fn packs_from(
    config: &Path,
    out: &Path,
    plugin: Option<(&Path, &str)>,
) -> Result<Vec<PathBuf>, PackError> {
    let text = std::fs::read_to_string(config).map_err(|source| PackError::Io {
        what: format!("reading {}", config.display()),
        source,
    })?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    let parsed: ClaudeConfig = serde_path_to_error::deserialize(de).map_err(|e| {
        PackError::Invalid(format!(
            "{}: field `{}`: {}",
            config.display(),
            e.path(),
            e.inner()
        ))
    })?;
    if parsed.mcp_servers.is_empty() {
        return Err(PackError::Invalid(format!(
            "{}: no `mcpServers` to import",
            config.display()
        )));
    }
    let mut dirs = Vec::new();
    for (name, server) in parsed.mcp_servers {
        let (safe, sandbox, args) = match plugin {
            None => (
                pack_name(&name, "imported"),
                sandbox_for(&server.args),
                server.args,
            ),
            Some((_, plugin)) => (
                pack_name(&format!("{plugin} {name}"), "plugin"),
                json!({"read": [], "write": [], "network": true}),
                server
                    .args
                    .iter()
                    .map(|a| a.replace("${CLAUDE_PLUGIN_ROOT}", "${__dirname}"))
                    .collect(),
            ),
        };
        let manifest = json!({
            "manifest_version": "0.3",
            "name": safe,
            "display_name": name,
            "version": "0.0.0",
            "description": format!("Imported from {}", config.display()),
            "server": {"type": "binary", "entry_point": server.command, "mcp_config": {"command": server.command, "args": args, "env": server.env}},
            "_meta": {"app.cowork": {"sandbox": sandbox}},
        });
        let dir = out.join(&safe);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|source| PackError::Io {
            what: format!("creating {}", dir.display()),
            source,
        })?;
        if let Some((root, _)) = plugin {
            crate::toolpacks::copy_tree(root, &dir)?;
        }
        let bytes = serde_json::to_vec_pretty(&manifest).expect("json");
        std::fs::write(dir.join("manifest.json"), bytes).map_err(|source| PackError::Io {
            what: format!("writing {}", dir.display()),
            source,
        })?;
        dirs.push(dir);
    }
    Ok(dirs)
}
