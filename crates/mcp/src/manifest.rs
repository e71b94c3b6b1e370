//! The toolpack manifest: MCPB `manifest.json` v0.3 (the format of Claude Desktop extensions)
//! plus Cowork's per-tool effect declarations under `_meta["app.cowork"]`.
//!
//! Parsing goes through `serde_path_to_error`, so a wrong or missing field is reported by its
//! path (`server.mcp_config.command`), never as a bare serde message.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The `_meta` key our extensions live under (MCPB asks for reverse-DNS keys).
pub const META_KEY: &str = "app.cowork";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// "0.3" (older packs say `dxt_version`).
    #[serde(alias = "dxt_version")]
    pub manifest_version: String,
    pub name: String,
    pub display_name: Option<String>,
    pub version: String,
    #[serde(default)]
    pub description: String,
    pub author: Option<Author>,
    pub server: Server,
    #[serde(default)]
    pub tools: Vec<DeclaredTool>,
    #[serde(default)]
    pub user_config: BTreeMap<String, UserConfigField>,
    #[serde(default, rename = "_meta")]
    pub meta: BTreeMap<String, Value>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Author {
    pub name: String,
    pub url: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerType {
    Node,
    Python,
    Binary,
    Uv,
    /// Cowork's extension: a server already listening on streamable HTTP at `server.url`.
    Http,
    /// Cowork's extension: a server speaking the older HTTP+SSE transport (2024-11-05) at
    /// `server.url`, its event stream's address (often ending in `/sse`).
    Sse,
}

impl ServerType {
    /// The transport of a server already listening somewhere (Cowork starts no process).
    pub fn remote(self) -> Option<crate::server::HttpProtocol> {
        match self {
            ServerType::Http => Some(crate::server::HttpProtocol::Streamable),
            ServerType::Sse => Some(crate::server::HttpProtocol::LegacySse),
            ServerType::Node | ServerType::Python | ServerType::Binary | ServerType::Uv => None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Server {
    #[serde(rename = "type")]
    pub kind: ServerType,
    #[serde(default)]
    pub entry_point: String,
    /// Required for every type but `http`.
    #[serde(default)]
    pub mcp_config: McpConfig,
    /// For `type: "http"` and `"sse"` only: the streamable HTTP endpoint
    /// (`http://127.0.0.1:8000/mcp`) or the legacy event stream (`http://127.0.0.1:8000/sse`).
    pub url: Option<String>,
    /// For `type: "http"` and `"sse"` only: headers sent with every request, e.g. an API key as
    /// `{"Authorization": "Bearer ${user_config.api_key}"}` — a sensitive value comes from the
    /// keyring at launch and is never written here.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct McpConfig {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DeclaredTool {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfigType {
    String,
    Number,
    Boolean,
    Directory,
    File,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UserConfigField {
    #[serde(rename = "type")]
    pub kind: ConfigType,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// Stored in the OS keyring, never in toolpacks.json.
    #[serde(default)]
    pub sensitive: bool,
    #[serde(default)]
    pub required: bool,
    /// Several values (a directory list): expands to several arguments.
    #[serde(default)]
    pub multiple: bool,
    pub default: Option<Value>,
}

/// Cowork's additions, from `_meta["app.cowork"]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoworkMeta {
    /// Per tool, the effects of a call as templates over its arguments. A tool missing here
    /// declares nothing: its calls are `mcp.call` (unknown) and ask.
    #[serde(default)]
    pub effects: BTreeMap<String, Vec<EffectTemplate>>,
    /// Builtin tool names this toolpack takes over: `{"read_file": "read_text_file"}` makes the
    /// server's `read_text_file` answer to `read_file` (shown as an override everywhere).
    #[serde(default)]
    pub overrides: BTreeMap<String, String>,
    /// A category for the catalog (default "mcp").
    pub category: Option<String>,
    /// What the server's sandbox lets it reach beyond its own folder (read-only) and its
    /// private data folder; the install review shows it.
    #[serde(default)]
    pub sandbox: SandboxRequest,
}

/// `_meta["app.cowork"].sandbox`: paths may use the launch variables (`${HOME}/Notes`,
/// `${user_config.allowed_directories}` — a list value gives several paths).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxRequest {
    /// Folders or files it may read.
    #[serde(default)]
    pub read: Vec<String>,
    /// Folders or files it may read and change.
    #[serde(default)]
    pub write: Vec<String>,
    /// Whether it may use the network (all of it: a sandbox cannot tell one site from another).
    #[serde(default)]
    pub network: bool,
}

/// `{"kind": "fs.read", "path": "{path}"}`: an effect whose string fields may name arguments in
/// braces. An array argument yields one effect per element.
pub type EffectTemplate = BTreeMap<String, Value>;

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    #[error("{file}: cannot read it: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
}

impl Manifest {
    pub fn load(dir: &Path) -> Result<Manifest, ManifestError> {
        let path = dir.join("manifest.json");
        let file = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|source| ManifestError::Io {
            file: file.clone(),
            source,
        })?;
        Manifest::parse(&text, &file)
    }

    pub fn parse(text: &str, file: &str) -> Result<Manifest, ManifestError> {
        let invalid = |message: String| ManifestError::Invalid {
            file: file.to_string(),
            message,
        };
        let de = &mut serde_json::Deserializer::from_str(text);
        let manifest: Manifest = serde_path_to_error::deserialize(de).map_err(|e| {
            let at = e.path().to_string();
            let inner = e.into_inner();
            if at == "." || at.is_empty() {
                invalid(inner.to_string())
            } else {
                invalid(format!("field `{at}`: {inner}"))
            }
        })?;
        if !manifest.manifest_version.starts_with("0.") {
            return Err(invalid(format!(
                "field `manifest_version`: {:?} is not supported (expected 0.1–0.3)",
                manifest.manifest_version
            )));
        }
        if !is_injective_name(&manifest.name) {
            return Err(invalid(format!(
                "field `name`: {:?} must be letters and digits, single '-' or '_' between them (no leading, trailing or doubled separators: the name becomes part of tool names like mcp__<name>__<tool>, and must never read as another pack's)",
                manifest.name
            )));
        }
        match (manifest.server.kind.remote(), &manifest.server.url) {
            (Some(_), Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {}
            (Some(_), _) => {
                return Err(invalid(
                    "field `server.url`: an http or sse server needs its URL (http://host:port/mcp, or http://host:port/sse for sse)"
                        .into(),
                ));
            }
            _ if manifest.server.mcp_config.command.trim().is_empty() => {
                return Err(invalid("field `server.mcp_config.command`: missing or empty (the program that runs the server)".into()));
            }
            _ => {}
        }
        let meta = manifest.cowork().map_err(invalid)?;
        for (tool, templates) in &meta.effects {
            for (i, t) in templates.iter().enumerate() {
                if !t.get("kind").is_some_and(Value::is_string) {
                    return Err(invalid(format!(
                        "field `_meta.{META_KEY}.effects.{tool}[{i}].kind`: missing (e.g. \"fs.read\")"
                    )));
                }
            }
        }
        Ok(manifest)
    }

    /// The person's `user_config` values checked against the fields and typed by them: an
    /// unknown key is refused (naming the real ones) rather than stored where nothing reads
    /// it, and text from a command line becomes the field's type — a string field keeps
    /// `8.10` or `1e3` exactly as typed; a number field refuses `abc`.
    pub fn check_config(
        &self,
        values: BTreeMap<String, Value>,
    ) -> Result<BTreeMap<String, Value>, String> {
        let mut out = BTreeMap::new();
        for (key, value) in values {
            let Some(field) = self.user_config.get(&key) else {
                let known: Vec<&str> = self.user_config.keys().map(String::as_str).collect();
                return Err(if known.is_empty() {
                    format!(
                        "toolpack {} has no settings (`{key}` is not one)",
                        self.name
                    )
                } else {
                    format!(
                        "`{key}` is not a setting of toolpack {}; its settings: {}",
                        self.name,
                        known.join(", ")
                    )
                });
            };
            let text = |v: &Value| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let wrong = |what: &str| format!("`{key}` takes {what}, not {}", text(&value));
            let typed = match field.kind {
                ConfigType::String => Value::String(text(&value)),
                ConfigType::Number => match &value {
                    Value::Number(_) => value.clone(),
                    Value::String(s) => serde_json::from_str::<serde_json::Number>(s.trim())
                        .map(Value::Number)
                        .map_err(|_| wrong("a number"))?,
                    _ => return Err(wrong("a number")),
                },
                ConfigType::Boolean => match &value {
                    Value::Bool(_) => value.clone(),
                    Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                        "true" | "yes" | "on" | "1" => Value::Bool(true),
                        "false" | "no" | "off" | "0" => Value::Bool(false),
                        _ => return Err(wrong("true or false")),
                    },
                    _ => return Err(wrong("true or false")),
                },
                ConfigType::Directory | ConfigType::File => {
                    // A list may come as JSON text (`["/a","/b"]`) from a command line.
                    let parsed = match &value {
                        Value::String(s) if field.multiple && s.trim_start().starts_with('[') => {
                            serde_json::from_str(s).map_err(|_| wrong("a list of paths"))?
                        }
                        other => other.clone(),
                    };
                    match parsed {
                        Value::Array(items) if field.multiple => {
                            for p in &items {
                                check_path(&key, field.kind, p)?;
                            }
                            Value::Array(items)
                        }
                        Value::String(_) => {
                            check_path(&key, field.kind, &parsed)?;
                            if field.multiple {
                                Value::Array(vec![parsed])
                            } else {
                                parsed
                            }
                        }
                        _ => return Err(wrong("a path")),
                    }
                }
            };
            out.insert(key, typed);
        }
        Ok(out)
    }

    /// The server name used in tool names (`mcp__<server>__<tool>`).
    pub fn server_name(&self) -> String {
        server_name(&self.name)
    }

    pub fn cowork(&self) -> Result<CoworkMeta, String> {
        match self.meta.get(META_KEY) {
            None => Ok(CoworkMeta::default()),
            Some(v) => serde_path_to_error::deserialize(v.clone())
                .map_err(|e| format!("field `_meta.{META_KEY}.{}`: {}", e.path(), e.inner())),
        }
    }
}

/// A configured folder or file must exist (a typo would otherwise reach the server as a path
/// it refuses, or its sandbox would leave it out).
fn check_path(key: &str, kind: ConfigType, value: &Value) -> Result<(), String> {
    let Some(path) = value.as_str() else {
        return Err(format!("`{key}` takes paths, not {value}"));
    };
    let ok = match kind {
        ConfigType::Directory => Path::new(path).is_dir(),
        _ => Path::new(path).is_file(),
    };
    if ok || path.contains("${") {
        Ok(())
    } else {
        let what = if kind == ConfigType::Directory {
            "folder"
        } else {
            "file"
        };
        Err(format!("`{key}`: there is no {what} {path:?}"))
    }
}

/// Whether a pack name maps to a server name no other pack's tools can be mistaken for: words of
/// letters and digits joined by single separators. Then `mcp__<server>__` is followed only by
/// the tool's name, and a rule `mcp__time__*` can only ever match the pack named `time` (or
/// `Time`: rule matching ignores case, so installs compare names case-insensitively too).
pub fn is_injective_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .split(['-', '_'])
            .all(|word| !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// A pack's server name: '-' becomes '_' because tool names and rules split on "__".
pub fn server_name(pack: &str) -> String {
    pack.replace('-', "_")
}

/// Expands `${__dirname}`, `${user_config.x}`, `${HOME}` and friends in the launch command.
/// A `multiple` user_config value standing alone in an argument becomes several arguments.
pub fn substitute_args(args: &[String], vars: &Vars) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for arg in args {
        if let Some(key) = arg
            .strip_prefix("${user_config.")
            .and_then(|r| r.strip_suffix('}'))
            && let Some(value @ (Value::Array(_) | Value::Null)) = vars.user_config.get(key)
        {
            // A list is several arguments; an optional setting left unset is none.
            for item in value.as_array().into_iter().flatten() {
                out.push(substitute(&value_text(item), vars)?);
            }
            continue;
        }
        out.push(substitute(arg, vars)?);
    }
    Ok(out)
}

pub struct Vars<'a> {
    pub dirname: &'a Path,
    /// The pack's private writable folder (`${DATA_DIR}`; its HOME inside the sandbox).
    pub data_dir: &'a Path,
    pub home: Option<&'a Path>,
    pub user_config: &'a BTreeMap<String, Value>,
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

pub fn substitute(text: &str, vars: &Vars) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("unclosed ${{ in {text:?}"))?;
        let name = &after[..end];
        let home = || {
            vars.home
                .map(|h| h.display().to_string())
                .ok_or("no home directory")
        };
        let value = match name {
            "__dirname" => vars.dirname.display().to_string(),
            "DATA_DIR" => vars.data_dir.display().to_string(),
            "HOME" => home()?,
            "DESKTOP" => format!("{}/Desktop", home()?),
            "DOCUMENTS" => format!("{}/Documents", home()?),
            "DOWNLOADS" => format!("{}/Downloads", home()?),
            "pathSeparator" | "/" => std::path::MAIN_SEPARATOR.to_string(),
            _ => match name.strip_prefix("user_config.") {
                Some(key) => vars.user_config.get(key).map(value_text).ok_or_else(|| {
                    format!("${{user_config.{key}}} has no value: set it with `cowork toolpack configure <name> {key}=…`")
                })?,
                None => return Err(format!("unknown variable ${{{name}}} in {text:?}")),
            },
        };
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
      "manifest_version": "0.3", "name": "time", "version": "1.0.0",
      "server": {"type": "python", "entry_point": "server.py",
                 "mcp_config": {"command": "${__dirname}/.venv/bin/python", "args": ["-m", "mcp_server_time", "--local-timezone=${user_config.tz}"]}},
      "user_config": {"tz": {"type": "string", "title": "Time zone", "default": "UTC"}},
      "_meta": {"app.cowork": {"effects": {"get_current_time": [], "convert_time": []}}}
    }"#;

    #[test]
    fn pack_names_cannot_read_as_another_packs() {
        for good in ["time", "my-pack", "git_tools", "a1-b2_c3"] {
            assert!(is_injective_name(good), "{good}");
        }
        for bad in [
            "time--evil",
            "time__evil",
            "time-_evil",
            "-time",
            "time_",
            "",
            "ti me",
            "time.x",
        ] {
            assert!(!is_injective_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_good_manifest_parses_and_substitutes() {
        let m = Manifest::parse(GOOD, "manifest.json").unwrap();
        assert_eq!(m.server.kind, ServerType::Python);
        assert_eq!(
            m.cowork().unwrap().effects["get_current_time"],
            Vec::<EffectTemplate>::new()
        );
        let config = BTreeMap::from([("tz".to_string(), Value::from("Europe/Paris"))]);
        let vars = Vars {
            dirname: Path::new("/packs/time"),
            data_dir: Path::new("/packs/.data/time"),
            home: Some(Path::new("/home/me")),
            user_config: &config,
        };
        assert_eq!(
            substitute(&m.server.mcp_config.command, &vars).unwrap(),
            "/packs/time/.venv/bin/python"
        );
        assert_eq!(
            substitute_args(&m.server.mcp_config.args, &vars).unwrap(),
            ["-m", "mcp_server_time", "--local-timezone=Europe/Paris"]
        );
        let dirs = BTreeMap::from([("dirs".to_string(), serde_json::json!(["/a", "/b c"]))]);
        let vars = Vars {
            dirname: Path::new("/p"),
            data_dir: Path::new("/d"),
            home: None,
            user_config: &dirs,
        };
        assert_eq!(
            substitute_args(&["x".into(), "${user_config.dirs}".into()], &vars).unwrap(),
            ["x", "/a", "/b c"]
        );
        let missing = substitute("${user_config.nope}", &vars).unwrap_err();
        assert!(missing.contains("toolpack configure"), "{missing}");
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (
                GOOD.replace(r#""name": "time","#, ""),
                "missing field `name`",
            ),
            (
                GOOD.replace(r#""type": "python""#, r#""type": "ruby""#),
                "field `server.type`",
            ),
            (
                GOOD.replace(r#""command": "${__dirname}/.venv/bin/python", "#, ""),
                "field `server.mcp_config`: missing field `command`",
            ),
            (
                GOOD.replace(r#""type": "python""#, r#""type": "http""#),
                "field `server.url`",
            ),
            (
                GOOD.replace(r#""args": ["#, r#""args": 5, "x": ["#),
                "field `server.mcp_config.args`",
            ),
            (
                GOOD.replace(r#""name": "time""#, r#""name": "my time""#),
                "field `name`",
            ),
            (
                GOOD.replace(
                    r#""get_current_time": []"#,
                    r#""get_current_time": [{"path": "{p}"}]"#,
                ),
                "effects.get_current_time[0].kind",
            ),
            (
                GOOD.replace(r#""effects": {"#, r#""efects": {"#),
                "_meta.app.cowork",
            ),
            (GOOD.replace("0.3", "2.0"), "manifest_version"),
            ("{".to_string(), "EOF"),
        ];
        for (text, expected) in cases {
            let err = Manifest::parse(&text, "manifest.json")
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "expected {expected:?} in: {err}");
        }
    }

    #[test]
    fn settings_are_checked_and_typed_by_the_manifest() {
        let m = Manifest::parse(r#"{"manifest_version": "0.3", "name": "p", "version": "1",
            "server": {"type": "node", "entry_point": "x", "mcp_config": {"command": "node"}},
            "user_config": {"port": {"type": "number"}, "verbose": {"type": "boolean"},
                            "label": {"type": "string"}, "dirs": {"type": "directory", "multiple": true}}}"#, "m").unwrap();
        let text = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                .collect::<BTreeMap<_, _>>()
        };
        let ok = m
            .check_config(text(&[
                ("port", "8080"),
                ("verbose", "yes"),
                ("label", "1e3"),
                ("dirs", "/tmp"),
            ]))
            .unwrap();
        assert_eq!(ok["port"], serde_json::json!(8080));
        assert_eq!(ok["verbose"], Value::Bool(true));
        assert_eq!(
            ok["label"],
            Value::String("1e3".into()),
            "a string stays as typed"
        );
        assert_eq!(ok["dirs"], serde_json::json!(["/tmp"]));
        for (pairs, expected) in [
            (
                text(&[("prot", "1")]),
                "its settings: dirs, label, port, verbose",
            ),
            (text(&[("port", "abc")]), "takes a number"),
            (text(&[("verbose", "maybe")]), "true or false"),
            (text(&[("dirs", "/no/such/dir")]), "there is no folder"),
        ] {
            let err = m.check_config(pairs).unwrap_err();
            assert!(err.contains(expected), "expected {expected:?} in: {err}");
        }
    }
}
