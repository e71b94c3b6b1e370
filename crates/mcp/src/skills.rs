//! Agent Skills (`SKILL.md` folders) and Agent Plugins (`.claude-plugin/plugin.json` with
//! `skills/` and `.mcp.json`), installed with the same staged review as toolpacks: fetched,
//! shown, and only then put in place, pinned to their content's hash.
//!
//! A skill is words for the model: its instructions are shown in full at the review as the
//! skill's own, and reach the model only when it loads the skill (the `skill` tool, whose
//! description is the index of names and descriptions: progressive disclosure). What a skill
//! ships besides is not read by the person in full: a file read from it through `skill` is
//! untrusted content, and its scripts are code that runs only through reviewed tools
//! (`run_command`, confined; the skills folder is readable there). A skill's `allowed-tools`
//! grants nothing here. A plugin's MCP servers become toolpacks, each with its own review.

use crate::toolpacks::{PackError, hash_tree};
use cowork_contract::{
    Annotations, Content, DynTool, EffectEnv, PreparedCall, ToolError, ToolOutput, ToolSpec,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The tool that loads a skill.
pub const SKILL_TOOL: &str = "skill";
/// Longest instructions a skill may have (the spec advises under 5,000 words).
const BODY_MAX: usize = 256 * 1024;
/// Longest bundled file `skill` hands the model.
const FILE_MAX: u64 = 256 * 1024;
/// How much of each description the index carries.
const INDEX_DESCRIPTION_MAX: usize = 300;

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> PackError {
    let what = what.into();
    move |source| PackError::Io { what, source }
}

/// A `SKILL.md`: its frontmatter and its instructions.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkillDoc {
    pub name: String,
    pub description: String,
    pub license: Option<String>,
    /// What it asks to run unasked (Claude Code's `allowed-tools`): shown, never granted.
    pub allowed_tools: Option<String>,
    pub instructions: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Frontmatter {
    name: Option<String>,
    description: Option<String>,
    license: Option<String>,
    allowed_tools: Option<serde_yaml_ng::Value>,
}

impl SkillDoc {
    /// Parses `SKILL.md` in `dir`; the name must follow the spec (lowercase letters, digits and
    /// single hyphens, at most 64) — it becomes a folder name and is shown as the skill's.
    pub fn load(dir: &Path) -> Result<SkillDoc, PackError> {
        let path = dir.join("SKILL.md");
        let text =
            std::fs::read_to_string(&path).map_err(io(format!("reading {}", path.display())))?;
        let bad = |why: String| PackError::Invalid(format!("{}: {why}", path.display()));
        let rest = text.strip_prefix("---").ok_or_else(|| {
            bad("it does not start with a `---` frontmatter block (name, description)".into())
        })?;
        let (front, body) = rest
            .split_once("\n---")
            .ok_or_else(|| bad("its frontmatter block is not closed with `---`".into()))?;
        let front: Frontmatter = serde_yaml_ng::from_str(front)
            .map_err(|e| bad(format!("its frontmatter is not YAML ({e})")))?;
        let name = front
            .name
            .ok_or_else(|| bad("its frontmatter has no `name`".into()))?;
        if !valid_name(&name) {
            return Err(bad(format!(
                "its name {name:?} is not a skill name: lowercase letters, digits and single hyphens, at most 64"
            )));
        }
        let description = front
            .description
            .filter(|d| !d.trim().is_empty())
            .ok_or_else(|| bad("its frontmatter has no `description`".into()))?;
        let instructions = body.trim_start_matches(['-', '\n', '\r']).to_string();
        if instructions.len() > BODY_MAX {
            return Err(bad(format!(
                "its instructions are over {} KB",
                BODY_MAX / 1024
            )));
        }
        let allowed_tools = front.allowed_tools.map(|v| match v {
            serde_yaml_ng::Value::String(s) => s,
            other => serde_yaml_ng::to_string(&other)
                .unwrap_or_default()
                .trim()
                .to_string(),
        });
        Ok(SkillDoc {
            name,
            description: description.trim().to_string(),
            license: front.license,
            allowed_tools,
            instructions,
        })
    }
}

fn valid_name(name: &str) -> bool {
    name.len() <= 64
        && !name.is_empty()
        && name.split('-').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// What the person sees of one skill before installing it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkillReview {
    #[serde(flatten)]
    pub doc: SkillDoc,
    /// Every other file it ships, relative to its folder: scripts among them are code.
    pub files: Vec<String>,
    /// A skill of this name is installed and would be replaced.
    pub replaces: bool,
}

/// An Agent Plugin's own description (`.claude-plugin/plugin.json`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PluginInfo {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
}

/// A bundle fetched and read, not installed.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StagedSkills {
    #[serde(skip)]
    pub dir: PathBuf,
    pub source: String,
    pub sha256: String,
    pub plugin: Option<PluginInfo>,
    pub skills: Vec<SkillReview>,
    /// Folders of the toolpacks its MCP servers become (each installed with its own review).
    #[serde(skip)]
    pub servers: Vec<PathBuf>,
    pub server_names: Vec<String>,
    /// What the bundle has that Cowork does not take from it (hooks, commands, agents), said
    /// so the person knows.
    pub not_used: Vec<String>,
}

/// One installed skill, as the index keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct InstalledSkill {
    pub name: String,
    pub description: String,
    pub source: String,
    /// sha256 of its folder when installed: a changed folder is refused.
    pub sha256: String,
    #[serde(default)]
    pub plugin: Option<String>,
    pub installed_at: String,
}

/// The installed skills: `<data>/skills/<name>/`, indexed in `<data>/skills.json`.
#[derive(Clone)]
pub struct Skills {
    root: PathBuf,
    index: PathBuf,
}

impl Skills {
    pub fn new(home: &Path) -> Skills {
        Skills {
            root: home.join("skills"),
            index: home.join("skills.json"),
        }
    }

    pub fn list(&self) -> Result<BTreeMap<String, InstalledSkill>, PackError> {
        crate::toolpacks::read_index(&self.index)
    }

    fn save(&self, index: &BTreeMap<String, InstalledSkill>) -> Result<(), PackError> {
        crate::toolpacks::write_index(&self.index, index)
    }

    /// Fetches `source` (github:owner/repo[@ref], a folder, a `.zip`/`.skill` or a `.tgz`) and
    /// reads what it holds. Nothing is installed.
    pub async fn stage(
        &self,
        packs: &crate::Toolpacks,
        source: &str,
    ) -> Result<StagedSkills, PackError> {
        let staging = self.root.with_file_name(".skills-staging").join(format!(
            "{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        let bundle = staging.join("bundle");
        std::fs::create_dir_all(&bundle).map_err(io(format!("creating {}", bundle.display())))?;
        let staged = async {
            let source = packs.fetch_bundle(source, &bundle).await?;
            let staged = self.read_staged(&staging, source)?;
            no_takeover(packs, &staged)?;
            Ok(staged)
        }
        .await;
        if staged.is_err() {
            let _ = std::fs::remove_dir_all(&staging);
        }
        staged
    }

    /// `staging/bundle` holds what was fetched; the plugin's servers are written beside it.
    fn read_staged(&self, staging: &Path, source: String) -> Result<StagedSkills, PackError> {
        let dir = &staging.join("bundle");
        let plugin = read_plugin(dir)?;
        let installed = self.list()?;
        let skills = skill_dirs(dir)?
            .into_iter()
            .map(|skill| {
                let doc = SkillDoc::load(&skill)?;
                Ok(SkillReview {
                    replaces: installed.contains_key(&doc.name),
                    files: files_in(&skill)?,
                    doc,
                })
            })
            .collect::<Result<Vec<_>, PackError>>()?;
        let mcp = dir.join(".mcp.json");
        let servers = match (mcp.is_file(), &plugin) {
            (true, Some(plugin)) => {
                crate::import::plugin_servers(&mcp, dir, &plugin.name, &staging.join("servers"))?
            }
            (true, None) => {
                return Err(PackError::Invalid(format!(
                    "{source} has a .mcp.json but no .claude-plugin/plugin.json: install its servers as toolpacks, or as a plugin"
                )));
            }
            (false, _) => vec![],
        };
        if skills.is_empty() && servers.is_empty() {
            return Err(PackError::Invalid(format!(
                "{source} holds no skill (a folder with a SKILL.md) and no plugin MCP servers (.mcp.json)"
            )));
        }
        let not_used = ["hooks", "commands", "agents"]
            .into_iter()
            .filter(|part| dir.join(part).exists())
            .map(|part| format!("its {part} (Cowork takes skills and MCP servers from a plugin; add hooks to your own settings if you want them)"))
            .collect();
        Ok(StagedSkills {
            sha256: hash_tree(dir)?,
            server_names: servers
                .iter()
                .filter_map(|s| s.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect(),
            dir: staging.to_path_buf(),
            source,
            plugin,
            skills,
            servers,
            not_used,
        })
    }

    /// The person accepted: each skill's folder goes into place (replacing one of its name),
    /// pinned. Returns the names installed. The staging folder is removed.
    pub fn commit(&self, staged: &StagedSkills) -> Result<Vec<String>, PackError> {
        let bundle = staged.dir.join("bundle");
        // What goes into place is what the person was shown.
        let now = hash_tree(&bundle)?;
        if now != staged.sha256 {
            return Err(PackError::Tampered {
                name: staged.source.clone(),
                pinned: staged.sha256.clone(),
                found: now,
                file: None,
            });
        }
        let mut index = self.list()?;
        let mut names = Vec::new();
        std::fs::create_dir_all(&self.root)
            .map_err(io(format!("creating {}", self.root.display())))?;
        for review in &staged.skills {
            if let Some(installed) = index.get(&review.doc.name) {
                same_origin(&review.doc.name, &installed.source, &staged.source)?;
            }
        }
        for (review, from) in staged.skills.iter().zip(skill_dirs(&bundle)?) {
            let name = &review.doc.name;
            let to = self.root.join(name);
            let old = self
                .root
                .join(format!(".old-{name}-{}", uuid::Uuid::new_v4()));
            if to.exists() {
                std::fs::rename(&to, &old).map_err(io(format!("moving {}", to.display())))?;
            }
            std::fs::rename(&from, &to).map_err(io(format!("installing {}", to.display())))?;
            let _ = std::fs::remove_dir_all(&old);
            index.insert(
                name.clone(),
                InstalledSkill {
                    name: name.clone(),
                    description: review.doc.description.clone(),
                    source: staged.source.clone(),
                    sha256: hash_tree(&to)?,
                    plugin: staged.plugin.as_ref().map(|p| p.name.clone()),
                    installed_at: chrono::Utc::now().to_rfc3339(),
                },
            );
            names.push(name.clone());
        }
        self.save(&index)?;
        Ok(names)
    }

    /// Throws away what was staged and not installed.
    pub fn discard(&self, staged: &StagedSkills) {
        let _ = std::fs::remove_dir_all(&staged.dir);
    }

    pub fn remove(&self, name: &str) -> Result<(), PackError> {
        let mut index = self.list()?;
        if index.remove(name).is_none() {
            return Err(PackError::Invalid(format!(
                "no skill named {name:?}; `cowork skill list` shows the installed ones"
            )));
        }
        self.save(&index)?;
        let _ = std::fs::remove_dir_all(self.root.join(name));
        Ok(())
    }

    /// An installed skill's folder, if its content is still what was installed.
    pub fn verified_dir(&self, name: &str) -> Result<PathBuf, PackError> {
        let index = self.list()?;
        let skill = index.get(name).ok_or_else(|| {
            let names: Vec<&str> = index.keys().map(String::as_str).collect();
            PackError::Invalid(format!(
                "no skill named {name:?}; installed: {}",
                names.join(", ")
            ))
        })?;
        let dir = self.root.join(name);
        let found = hash_tree(&dir)?;
        if found != skill.sha256 {
            return Err(PackError::Tampered {
                name: name.into(),
                pinned: skill.sha256.clone(),
                found,
                file: None,
            });
        }
        Ok(dir)
    }
}

/// A skill from elsewhere does not replace one installed from another origin (the model would
/// follow the newcomer's words under the old name); a folder or file the person picked may.
fn same_origin(name: &str, installed: &str, new: &str) -> Result<(), PackError> {
    let origin = |s: &str| {
        s.strip_prefix("github:")
            .map(|rest| rest.split('@').next().unwrap_or(rest).to_ascii_lowercase())
    };
    match origin(new) {
        Some(new) if origin(installed).as_deref() != Some(new.as_str()) => {
            Err(PackError::Invalid(format!(
                "a skill named {name} is already installed from {installed}; github:{new} would replace it — `cowork skill remove {name}` first if that is what you want"
            )))
        }
        _ => Ok(()),
    }
}

/// A plugin's server must not take over a toolpack installed from elsewhere (it would inherit
/// its settings, secrets, sign-in and the person's rules for its tools).
fn no_takeover(packs: &crate::Toolpacks, staged: &StagedSkills) -> Result<(), PackError> {
    let installed = packs.list()?;
    for name in &staged.server_names {
        if let Some(record) = installed.get(name)
            && !record.source.contains(".skills-staging")
        {
            return Err(PackError::Invalid(format!(
                "the plugin's server {name} would replace the toolpack {name} installed from {} — `cowork toolpack remove {name}` first if that is what you want",
                record.source
            )));
        }
    }
    Ok(())
}

/// The plugin's description, when the bundle is one.
fn read_plugin(dir: &Path) -> Result<Option<PluginInfo>, PackError> {
    let path = dir.join(".claude-plugin").join("plugin.json");
    if !path.is_file() {
        return Ok(None);
    }
    let bytes = std::fs::read(&path).map_err(io(format!("reading {}", path.display())))?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| PackError::Invalid(format!("{}: {e}", path.display())))
}

/// The skill folders of a bundle: itself (a `SKILL.md` at the top), else `skills/*/`, else the
/// folders at the top that hold a `SKILL.md`.
fn skill_dirs(dir: &Path) -> Result<Vec<PathBuf>, PackError> {
    if dir.join("SKILL.md").is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let within = |parent: &Path| -> Result<Vec<PathBuf>, PackError> {
        let mut found: Vec<PathBuf> = match std::fs::read_dir(parent) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join("SKILL.md").is_file())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => vec![],
            Err(e) => return Err(io(format!("listing {}", parent.display()))(e)),
        };
        found.sort();
        Ok(found)
    };
    let nested = within(&dir.join("skills"))?;
    if !nested.is_empty() {
        return Ok(nested);
    }
    within(dir)
}

/// Every file in a skill's folder but its `SKILL.md`, relative, sorted.
fn files_in(dir: &Path) -> Result<Vec<String>, PackError> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), PackError> {
        for entry in std::fs::read_dir(dir).map_err(io(format!("listing {}", dir.display())))? {
            let path = entry
                .map_err(io(format!("listing {}", dir.display())))?
                .path();
            if path.is_dir() {
                walk(root, &path, out)?;
            } else if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.display().to_string());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.retain(|f| f != "SKILL.md");
    out.sort();
    Ok(out)
}

/// The `skill` tool: loads an installed skill's instructions (or one file it ships). Its
/// description is the index the model chooses from.
pub struct SkillTool {
    skills: Skills,
    spec: ToolSpec,
}

/// The provider of `skill`: offered while any skill is installed.
pub struct SkillTools {
    pub skills: Skills,
}

impl cowork_contract::ToolProvider for SkillTools {
    fn name(&self) -> &str {
        "skills"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        let installed = self.skills.list().unwrap_or_else(|e| {
            tracing::warn!("skills: {e}");
            BTreeMap::new()
        });
        if installed.is_empty() {
            return vec![];
        }
        vec![Arc::new(SkillTool {
            spec: skill_spec(&installed),
            skills: self.skills.clone(),
        })]
    }
}

fn skill_spec(installed: &BTreeMap<String, InstalledSkill>) -> ToolSpec {
    let mut description = String::from(
        "Load a skill's instructions before a task it fits, then follow them. `file` reads a file the skill ships (relative to its folder). Installed skills:",
    );
    for skill in installed.values() {
        let short: String = skill
            .description
            .chars()
            .take(INDEX_DESCRIPTION_MAX)
            .collect();
        description.push_str(&format!("\n- {}: {short}", skill.name));
    }
    ToolSpec {
        name: SKILL_TOOL.into(),
        title: "Use a skill".into(),
        description,
        category: "agent".into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": installed.keys().collect::<Vec<_>>()},
                "file": {"type": "string", "description": "A file of the skill's folder, e.g. references/guide.md"},
            },
            "required": ["name"],
            "additionalProperties": false,
        }),
        output_schema: None,
        annotations: Annotations {
            read_only: true,
            idempotent: true,
            ..Default::default()
        },
        timeout_ms: 10_000,
        effects: vec![],
        aliases: vec!["Skill".into()],
        deferred: false,
        rate_limit: None,
        secret_args: vec![],
        arg_aliases: vec![],
    }
}

impl DynTool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: Value, _env: &EffectEnv) -> Result<PreparedCall, ToolError> {
        let skills = self.skills.clone();
        Ok(PreparedCall::new(
            vec![],
            Arc::new(move |_ctx| {
                let (skills, args) = (skills.clone(), args.clone());
                Box::pin(async move { load(&skills, &args) })
            }),
        ))
    }
}

/// The skill's instructions (its words the person read at install), or one file it ships
/// (which the person did not read in full: untrusted, like a page).
fn load(skills: &Skills, args: &Value) -> Result<ToolOutput, ToolError> {
    let name = args["name"].as_str().unwrap_or_default();
    let dir = skills
        .verified_dir(name)
        .map_err(|e| ToolError::failed(e.to_string()))?;
    let Some(file) = args["file"].as_str() else {
        let doc = SkillDoc::load(&dir).map_err(|e| ToolError::failed(e.to_string()))?;
        let files = files_in(&dir).map_err(|e| ToolError::failed(e.to_string()))?;
        let text = format!(
            "# Skill «{}» (its folder: {})\n\n{}\n\nFiles it ships: {}",
            doc.name,
            dir.display(),
            doc.instructions,
            if files.is_empty() {
                "none".into()
            } else {
                files.join(", ")
            }
        );
        return Ok(ToolOutput {
            content: vec![Content::Text { text }],
            structured: Some(json!({"name": doc.name, "folder": dir, "files": files})),
            ..Default::default()
        });
    };
    let path = dir.join(file);
    let inside = path
        .canonicalize()
        .ok()
        .filter(|p| dir.canonicalize().is_ok_and(|d| p.starts_with(d)))
        .ok_or_else(|| ToolError::invalid(format!("{file:?} is not a file of the skill {name}")))?;
    let mut text = String::new();
    use std::io::Read;
    std::fs::File::open(&inside)
        .and_then(|f| f.take(FILE_MAX).read_to_string(&mut text))
        .map_err(|e| ToolError::failed(format!("reading {file}: {e}")))?;
    Ok(ToolOutput {
        content: vec![Content::Text { text }],
        untrusted: true,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path, text: &str) -> Result<SkillDoc, PackError> {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), text).unwrap();
        SkillDoc::load(dir)
    }

    #[test]
    fn a_skill_needs_a_spec_name_and_a_description() {
        let dir = tempfile::tempdir().unwrap();
        let ok = skill(
            dir.path(),
            "---\nname: pdf-tools\ndescription: Work with PDFs.\nallowed-tools: Bash(node x.js *)\n---\n\n# Use\nDo it.\n",
        )
        .unwrap();
        assert_eq!(ok.name, "pdf-tools");
        assert_eq!(ok.allowed_tools.as_deref(), Some("Bash(node x.js *)"));
        assert!(
            ok.instructions.starts_with("# Use"),
            "{:?}",
            ok.instructions
        );
        for (text, why) in [
            ("no frontmatter", "frontmatter"),
            ("---\nname: x\n", "not closed"),
            ("---\ndescription: d\n---\nx", "no `name`"),
            (
                "---\nname: Bad_Name\ndescription: d\n---\nx",
                "not a skill name",
            ),
            (
                "---\nname: ../up\ndescription: d\n---\nx",
                "not a skill name",
            ),
            (
                "---\nname: a--b\ndescription: d\n---\nx",
                "not a skill name",
            ),
            ("---\nname: ok\n---\nx", "no `description`"),
        ] {
            let err = skill(dir.path(), text).unwrap_err().to_string();
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }
}
