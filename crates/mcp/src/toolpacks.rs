//! Installed toolpacks: folders under `<data dir>/toolpacks/<name>/`, recorded in
//! `<data dir>/toolpacks.json` with where they came from and what they hashed to.
//!
//! Install is two steps so a person can review before anything runs: [`Toolpacks::stage`]
//! fetches and unpacks into a staging folder and returns a [`Review`]; [`Toolpacks::commit`]
//! moves it into place, installs dependencies and pins it. Every later start re-hashes the
//! folder and refuses a pack whose content no longer matches its pin.

use crate::manifest::{Manifest, Vars, substitute, substitute_args};
use crate::sandbox::{Confinement, Sandbox, Unconfined};
use crate::server::{LaunchSpec, RestartPolicy, Transport};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Content that is generated on install and so not part of the pin.
const UNPINNED: &[&str] = &["node_modules", ".venv", "__pycache__", ".git"];
/// A download or unpacked pack larger than this is refused.
pub(crate) const MAX_PACK_BYTES: u64 = 200 << 20;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "ToolpackRecord")] // the TypeScript name (JSON does not carry it)
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub source: String,
    #[serde(default)]
    pub r#ref: Option<String>,
    #[serde(default)]
    pub commit: Option<String>,
    pub sha256: String,
    /// sha256 of the whole installed folder after its dependencies were installed
    /// (`node_modules`, `.venv` included): everything that executes is pinned, not just the
    /// source. The per-file list beside `toolpacks.json` names a changed file.
    #[serde(default)]
    pub installed_sha256: Option<String>,
    pub enabled: bool,
    #[serde(default)]
    pub last_used: Option<String>,
    /// Why its server did not come up the last time a command or the app ran it (None: it
    /// did). Commands that list tools do not wait for a server known to be broken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_start_error: Option<String>,
    /// The person turned this pack's sandbox off: its server runs with their full rights, and
    /// every call asks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sandbox_off: bool,
    /// Non-sensitive `user_config` values; sensitive ones live in the keyring.
    #[serde(default)]
    pub config: BTreeMap<String, Value>,
    pub version: String,
    pub installed_at: String,
}

/// What the person sees before accepting an install or update.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "ToolpackReview")] // the TypeScript name (JSON does not carry it)
pub struct Review {
    pub name: String,
    pub display_name: String,
    pub version: String,
    pub description: String,
    pub source: String,
    pub commit: Option<String>,
    pub sha256: String,
    /// The command line that will run, as far as it is known before configuration.
    pub command: String,
    /// Each declared tool with its declared effects (or "undeclared: asks").
    pub tools: Vec<ReviewTool>,
    pub overrides: BTreeMap<String, String>,
    /// Settings the pack needs; sensitive ones go to the keyring.
    pub user_config: Vec<ReviewConfig>,
    /// What its sandbox lets it reach (or that it has none, and why).
    pub sandbox: Vec<String>,
    /// For an update: what changed in permissions (empty for a fresh install).
    pub changes: Vec<String>,
    /// A remote server's sign-in, as it describes it: where the person signs in, so the
    /// server acts as them there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acts_as: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReviewTool {
    pub name: String,
    pub description: String,
    pub effects: Option<Vec<String>>,
    /// Why its description is withheld from the model (it addresses the model), if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReviewConfig {
    pub key: String,
    pub title: String,
    pub required: bool,
    pub sensitive: bool,
    pub has_default: bool,
}

pub struct Staged {
    dir: PathBuf,
    pub manifest: Manifest,
    pub review: Review,
    record: Record,
}

impl Staged {
    /// The staging folder: what is there when the install is committed is what gets pinned
    /// (dependencies placed here beforehand, e.g. offline, are pinned with the rest).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("download failed: {0}")]
    Download(String),
    #[error(
        "toolpack {name}: its content changed{} ({found}, pinned {pinned}) — refusing to run it. `cowork toolpack update {name}` reinstalls it from its source, showing the review",
        .file.as_ref().map(|f| format!(": {f}")).unwrap_or_default()
    )]
    Tampered {
        name: String,
        pinned: String,
        found: String,
        file: Option<String>,
    },
    #[error("no toolpack named {0:?}; `cowork toolpack list` shows the installed ones")]
    Unknown(String),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> PackError {
    let what = what.into();
    move |source| PackError::Io { what, source }
}

/// Where a pack comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Github {
        owner: String,
        repo: String,
        r#ref: Option<String>,
    },
    Folder(PathBuf),
    Mcpb(PathBuf),
    /// An entry of the MCP Registry (`registry:io.github.owner/server[@version]`); no version
    /// is its latest, so an update finds the newest.
    Registry {
        name: String,
        version: Option<String>,
    },
}

impl Source {
    pub fn parse(text: &str) -> Result<Source, PackError> {
        if let Some(rest) = text.strip_prefix("github:") {
            let (path, r#ref) = match rest.split_once('@') {
                Some((p, r)) => (p, Some(r.to_string())),
                None => (rest, None),
            };
            let (owner, repo) = path
                .split_once('/')
                .filter(|(o, r)| !o.is_empty() && !r.is_empty() && !r.contains('/'))
                .ok_or_else(|| {
                    PackError::Invalid(format!(
                        "{text:?}: expected github:owner/repo or github:owner/repo@ref"
                    ))
                })?;
            return Ok(Source::Github {
                owner: owner.into(),
                repo: repo.into(),
                r#ref,
            });
        }
        if let Some(rest) = text.strip_prefix("registry:") {
            let (name, version) = match rest.split_once('@') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (rest, None),
            };
            // The registry's own name rule: a reverse-DNS namespace, one '/', a name.
            let word = |s: &str, extra: &str| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
            };
            let valid = name
                .split_once('/')
                .is_some_and(|(ns, n)| word(ns, ".-") && word(n, "._-"))
                && version.as_deref().is_none_or(|v| word(v, ".-+_"));
            if !valid {
                return Err(PackError::Invalid(format!(
                    "{text:?}: expected registry:<namespace>/<name> or registry:<namespace>/<name>@<version> (as the MCP Registry names servers, e.g. registry:io.github.owner/server)"
                )));
            }
            return Ok(Source::Registry {
                name: name.into(),
                version,
            });
        }
        let path = PathBuf::from(text);
        if path.extension().is_some_and(|e| e == "mcpb" || e == "dxt") {
            return Ok(Source::Mcpb(path.canonicalize().unwrap_or(path)));
        }
        if path.is_dir() {
            // Recorded absolute, so `update` works from any directory.
            return Ok(Source::Folder(path.canonicalize().unwrap_or(path)));
        }
        Err(PackError::Invalid(format!(
            "{text:?} is neither github:owner/repo[@ref], registry:<namespace>/<name>, a folder with a manifest.json, nor a .mcpb file"
        )))
    }
}

impl Source {
    /// Where a pack comes from beyond this computer, ref and version aside
    /// (`github:owner/repo`, `registry:<name>`); None for a folder or file the person picked.
    fn origin(&self) -> Option<String> {
        match self {
            Source::Github { owner, repo, .. } => {
                Some(format!("github:{owner}/{repo}").to_ascii_lowercase())
            }
            Source::Registry { name, .. } => Some(format!("registry:{name}")),
            Source::Folder(_) | Source::Mcpb(_) => None,
        }
    }
}

/// A pack from elsewhere must not take over an installed pack of the same name: it would
/// inherit its settings, keyring secrets, sign-in and the person's rules for its tools. The
/// same origin is an update; a folder or file the person picked may replace it.
fn same_origin(name: &str, installed: &str, new: &Source) -> Result<(), PackError> {
    let Some(origin) = new.origin() else {
        return Ok(());
    };
    let before = Source::parse(installed).ok().and_then(|s| s.origin());
    if before.as_deref() == Some(origin.as_str()) {
        return Ok(());
    }
    Err(PackError::Invalid(format!(
        "a toolpack named {name} is already installed from {installed}; {origin} would replace it and inherit its settings, secrets, sign-in and your rules for its tools — `cowork toolpack remove {name}` first if that is what you want"
    )))
}

#[derive(Clone)]
pub struct Toolpacks {
    root: PathBuf,
    index: PathBuf,
    logs: PathBuf,
    /// `https://api.github.com` unless configured (tests serve repositories from loopback).
    pub github_api: String,
    /// The MCP Registry's address (`COWORK_MCP_REGISTRY`; tests replay recorded answers).
    pub registry: String,
}

impl Toolpacks {
    /// `home` is the data dir: packs in `toolpacks/`, the index in `toolpacks.json`, server
    /// logs in `logs/mcp/`.
    pub fn new(home: &Path) -> Toolpacks {
        let github_api =
            std::env::var("COWORK_GITHUB_API").unwrap_or_else(|_| "https://api.github.com".into());
        Toolpacks {
            root: home.join("toolpacks"),
            index: home.join("toolpacks.json"),
            logs: home.join("logs").join("mcp"),
            github_api,
            registry: std::env::var("COWORK_MCP_REGISTRY")
                .unwrap_or_else(|_| crate::catalog::DEFAULT_REGISTRY.into()),
        }
    }

    /// The MCP Registry, its answers cached beside the packs (no pack's name starts with '.').
    pub fn catalog(&self) -> crate::catalog::Catalog {
        crate::catalog::Catalog::new(&self.registry, &self.root.join(".catalog"))
    }

    pub fn dir_of(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// A pack's private writable folder (its HOME inside the sandbox). Pack names never start
    /// with a dot, so `.data` is no pack's folder.
    pub fn data_dir_of(&self, name: &str) -> PathBuf {
        self.root.join(".data").join(name)
    }

    pub fn list(&self) -> Result<BTreeMap<String, Record>, PackError> {
        read_index(&self.index)
    }

    fn save(&self, index: &BTreeMap<String, Record>) -> Result<(), PackError> {
        write_index(&self.index, index)
    }

    fn edit(&self, name: &str, f: impl FnOnce(&mut Record)) -> Result<Record, PackError> {
        let mut index = self.list()?;
        let record = index
            .get_mut(name)
            .ok_or_else(|| PackError::Unknown(name.into()))?;
        f(record);
        let record = record.clone();
        self.save(&index)?;
        Ok(record)
    }

    /// Fetches and unpacks `source` into a staging folder and prepares the review. Nothing is
    /// installed or run yet. `expected_sha256` pins the content up front (e.g. from a shared
    /// toolpacks.json); a mismatch is refused.
    pub async fn stage(
        &self,
        source: &str,
        expected_sha256: Option<&str>,
    ) -> Result<Staged, PackError> {
        let parsed = Source::parse(source)?;
        let source = match &parsed {
            Source::Folder(dir) | Source::Mcpb(dir) => dir.display().to_string(),
            Source::Github { .. } | Source::Registry { .. } => source.to_string(),
        };
        let source = source.as_str();
        let staging =
            self.root
                .join(".staging")
                .join(format!("{}-{}", std::process::id(), nanos()));
        std::fs::create_dir_all(&staging).map_err(io(format!("creating {}", staging.display())))?;
        let result = self
            .stage_into(&parsed, source, &staging, expected_sha256)
            .await;
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&staging);
        }
        result
    }

    async fn stage_into(
        &self,
        parsed: &Source,
        source: &str,
        staging: &Path,
        expected: Option<&str>,
    ) -> Result<Staged, PackError> {
        let (r#ref, commit) = self.fetch_into(parsed, staging).await?;
        let manifest = Manifest::load(staging)?;
        let sha256 = hash_tree(staging)?;
        let name = manifest.name.clone();
        if let Some(expected) = expected
            && expected != sha256
        {
            return Err(tampered(&name, expected, &sha256));
        }
        // Re-fetching the same commit must give the same bytes: a changed tarball is tampering.
        let installed = self.list()?;
        if let Some(previous) = installed.get(&name)
            && previous.commit.is_some()
            && previous.commit == commit
            && previous.sha256 != sha256
        {
            return Err(tampered(&name, &previous.sha256, &sha256));
        }
        if let Some(installed) = installed.get(&name) {
            same_origin(&name, &installed.source, parsed)?;
        }
        let previous = installed
            .get(&name)
            .and_then(|_| Manifest::load(&self.dir_of(&name)).ok());
        // The person's choice about the sandbox outlives updates.
        let sandbox_off = installed.get(&name).is_some_and(|r| r.sandbox_off);
        let mut review = review_of(
            &manifest,
            source,
            commit.clone(),
            &sha256,
            previous.as_ref(),
            sandbox_off,
        );
        if let Some(url) = manifest.server.url.as_deref().filter(|u| !u.contains("${")) {
            // The server's own words (its metadata): escaped like everything else shown.
            review.acts_as = crate::auth::who_it_acts_as(url)
                .await
                .map(|words| cowork_contract::text::printable_field(&words).into_owned());
        }
        let record = Record {
            source: source.to_string(),
            r#ref,
            commit,
            sha256,
            installed_sha256: None,
            enabled: true,
            last_used: None,
            last_start_error: None,
            sandbox_off,
            config: BTreeMap::new(),
            version: manifest.version.clone(),
            installed_at: now(),
        };
        Ok(Staged {
            dir: staging.to_path_buf(),
            manifest,
            review,
            record,
        })
    }

    /// Puts a skill or plugin bundle's files into `staging`: from GitHub, a folder, a `.zip` or
    /// `.skill` archive, or a `.tgz` (an npm package). Returns the source as it is recorded.
    pub async fn fetch_bundle(&self, source: &str, staging: &Path) -> Result<String, PackError> {
        let path = Path::new(source);
        let named = |ext: &[&str]| ext.iter().any(|e| source.ends_with(e)) && path.is_file();
        let read = || std::fs::read(path).map_err(io(format!("reading {}", path.display())));
        if named(&[".tgz", ".tar.gz"]) {
            untar_gz(&read()?, staging)?;
        } else if named(&[".zip", ".skill"]) {
            unzip(&read()?, staging)?;
        } else {
            let parsed = Source::parse(source)?;
            if let Source::Registry { .. } | Source::Mcpb(_) = parsed {
                return Err(PackError::Invalid(format!(
                    "{source}: skills come from github:owner/repo, a folder, a .zip/.skill or a .tgz"
                )));
            }
            self.fetch_into(&parsed, staging).await?;
            if let Source::Folder(dir) = parsed {
                return Ok(dir.display().to_string());
            }
            return Ok(source.to_string());
        }
        Ok(path
            .canonicalize()
            .unwrap_or(path.to_path_buf())
            .display()
            .to_string())
    }

    /// Puts the pack's files into `staging`; for GitHub, the ref asked for and the commit it
    /// resolved to.
    async fn fetch_into(
        &self,
        parsed: &Source,
        staging: &Path,
    ) -> Result<(Option<String>, Option<String>), PackError> {
        match parsed {
            Source::Folder(dir) => {
                copy_tree(dir, staging)?;
                Ok((None, None))
            }
            Source::Mcpb(file) => {
                let bytes =
                    std::fs::read(file).map_err(io(format!("reading {}", file.display())))?;
                unzip(&bytes, staging)?;
                Ok((None, None))
            }
            Source::Github { owner, repo, r#ref } => {
                let (commit, tarball) = self.fetch_github(owner, repo, r#ref.as_deref()).await?;
                untar_gz(&tarball, staging)?;
                Ok((r#ref.clone(), Some(commit)))
            }
            Source::Registry { name, version } => {
                self.catalog()
                    .materialize(name, version.as_deref(), staging)
                    .await?;
                Ok((version.clone(), None))
            }
        }
    }

    /// The person accepted: move into place, install dependencies, pin. `config` holds the
    /// non-sensitive `user_config` values (defaults fill the rest).
    pub fn commit(
        &self,
        staged: Staged,
        config: BTreeMap<String, Value>,
        install_deps: bool,
    ) -> Result<Record, PackError> {
        let name = staged.manifest.name.clone();
        // `my-pack` and `my_pack` (or `Time` and `time`) would serve the same tool names: the
        // second would run under rules the person wrote for the first.
        let server = crate::manifest::server_name(&name).to_ascii_lowercase();
        if let Some(other) = self
            .list()?
            .keys()
            .find(|n| **n != name && crate::manifest::server_name(n).to_ascii_lowercase() == server)
        {
            return Err(PackError::Invalid(format!(
                "toolpack {name:?} would serve the same tool names as the installed {other:?} (mcp__{server}__…): remove {other:?} first, or ask its author to rename it"
            )));
        }
        let target = self.dir_of(&name);
        let old = self
            .root
            .join(".staging")
            .join(format!("old-{name}-{}", nanos()));
        if target.exists() {
            std::fs::rename(&target, &old)
                .map_err(io(format!("moving the old {}", target.display())))?;
        }
        std::fs::rename(&staged.dir, &target)
            .map_err(io(format!("moving into {}", target.display())))?;
        let mut record = staged.record;
        let mut index = self.list()?;
        if let Some(previous) = index.get(&name) {
            // An update keeps the person's settings and on/off choice.
            record.config = previous.config.clone();
            record.enabled = previous.enabled;
        }
        record.config.extend(config);
        if install_deps && let Err(e) = install_dependencies(&target, &staged.manifest) {
            let _ = std::fs::remove_dir_all(&target);
            if old.exists() {
                let _ = std::fs::rename(&old, &target);
            }
            return Err(e);
        }
        let files = hash_files(&target)?;
        record.installed_sha256 = Some(digest_of(&files));
        self.save_file_list(&name, &files)?;
        index.insert(name, record.clone());
        self.save(&index)?;
        let _ = std::fs::remove_dir_all(&old);
        Ok(record)
    }

    /// Throws a staged install away (the person declined).
    pub fn discard(&self, staged: Staged) {
        let _ = std::fs::remove_dir_all(&staged.dir);
    }

    pub fn set_enabled(&self, name: &str, enabled: bool) -> Result<Record, PackError> {
        // Turning a pack on (again) gives its server a fresh chance to be waited for.
        self.edit(name, |r| {
            r.enabled = enabled;
            r.last_start_error = None;
        })
    }

    /// The person turns a pack's sandbox on or off (off: it runs with their rights, and every
    /// call asks).
    pub fn set_sandbox(&self, name: &str, on: bool) -> Result<Record, PackError> {
        self.edit(name, |r| {
            r.sandbox_off = !on;
            r.last_start_error = None;
        })
    }

    pub fn configure(
        &self,
        name: &str,
        values: BTreeMap<String, Value>,
    ) -> Result<Record, PackError> {
        self.edit(name, |r| r.config.extend(values))
    }

    /// Records when each pack was last used (`server name → time`), in one write.
    pub fn record_usage(
        &self,
        used: &BTreeMap<String, std::time::SystemTime>,
    ) -> Result<(), PackError> {
        let mut index = self.list()?;
        let mut changed = false;
        for (name, record) in index.iter_mut() {
            if let Some(at) = used.get(&crate::manifest::server_name(name)) {
                let at = chrono::DateTime::<chrono::Utc>::from(*at)
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                if record.last_used.as_ref() != Some(&at) {
                    record.last_used = Some(at);
                    changed = true;
                }
            }
        }
        if changed { self.save(&index) } else { Ok(()) }
    }

    /// Records each server's health (`server name → why it is not up`, None when it is), in
    /// one write, only when something changed.
    pub fn record_health(
        &self,
        health: &BTreeMap<String, Option<String>>,
    ) -> Result<(), PackError> {
        let mut index = self.list()?;
        let mut changed = false;
        for (name, record) in index.iter_mut() {
            if let Some(error) = health.get(&crate::manifest::server_name(name))
                && record.last_start_error != *error
            {
                record.last_start_error = error.clone();
                changed = true;
            }
        }
        if changed { self.save(&index) } else { Ok(()) }
    }

    pub fn remove(&self, name: &str) -> Result<(), PackError> {
        let mut index = self.list()?;
        index
            .remove(name)
            .ok_or_else(|| PackError::Unknown(name.into()))?;
        self.save(&index)?;
        for dir in [self.dir_of(name), self.data_dir_of(name)] {
            if dir.exists() {
                std::fs::remove_dir_all(&dir).map_err(io(format!("removing {}", dir.display())))?;
            }
        }
        Ok(())
    }

    /// Verifies the pin and builds the launch spec. `secret` reads a sensitive `user_config`
    /// value (the keyring).
    /// Checks an installed pack against its pins: the source hash, and every installed file
    /// (dependencies included) when the install recorded them. The error names a changed file.
    pub fn verify(&self, name: &str) -> Result<(), PackError> {
        let index = self.list()?;
        let record = index
            .get(name)
            .ok_or_else(|| PackError::Unknown(name.into()))?;
        self.verify_record(name, record)
    }

    fn verify_record(&self, name: &str, record: &Record) -> Result<(), PackError> {
        let dir = self.dir_of(name);
        let Some(pinned) = &record.installed_sha256 else {
            // Installed before whole-tree pins: the source pin only.
            let found = hash_tree(&dir)?;
            if found != record.sha256 {
                return Err(tampered(name, &record.sha256, &found));
            }
            return Ok(());
        };
        let files = hash_files(&dir)?;
        let found = digest_of(&files);
        if found == *pinned {
            return Ok(());
        }
        let known = self.load_file_list(name).unwrap_or_default();
        let file = files
            .iter()
            .find(|(path, hash)| known.get(*path) != Some(*hash))
            .map(|(path, _)| path.clone())
            .or_else(|| {
                known
                    .keys()
                    .find(|path| !files.contains_key(*path))
                    .map(|p| format!("{p} (removed)"))
            });
        Err(PackError::Tampered {
            name: name.into(),
            pinned: pinned.clone(),
            found,
            file,
        })
    }

    fn file_list_path(&self, name: &str) -> PathBuf {
        self.root.join(format!("{name}.files.json"))
    }

    fn save_file_list(
        &self,
        name: &str,
        files: &BTreeMap<String, String>,
    ) -> Result<(), PackError> {
        let path = self.file_list_path(name);
        cowork_store::write_private(&path, &serde_json::to_vec(files).expect("json"))
            .map_err(io(format!("writing {}", path.display())))
    }

    fn load_file_list(&self, name: &str) -> Option<BTreeMap<String, String>> {
        serde_json::from_slice(&std::fs::read(self.file_list_path(name)).ok()?).ok()
    }

    /// `secret` reads a sensitive `user_config` value; `oauth` keeps a remote server's
    /// sign-in (its tokens), given the server's name.
    pub fn launch(
        &self,
        name: &str,
        secret: &dyn Fn(&str) -> Option<String>,
        oauth: &dyn Fn(&str) -> crate::auth::OauthStore,
    ) -> Result<(LaunchSpec, Manifest), PackError> {
        let index = self.list()?;
        let record = index
            .get(name)
            .ok_or_else(|| PackError::Unknown(name.into()))?;
        let dir = self.dir_of(name);
        self.verify_record(name, record)?;
        let manifest = Manifest::load(&dir)?;
        let values = config_values(name, &manifest, record, secret)?;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let data_dir = self.data_dir_of(name);
        std::fs::create_dir_all(&data_dir)
            .map_err(io(format!("creating {}", data_dir.display())))?;
        let vars = Vars {
            dirname: &dir,
            data_dir: &data_dir,
            home: home.as_deref(),
            user_config: &values,
        };
        let bad = |e: String| PackError::Invalid(format!("toolpack {name}: {e}"));
        let remote = manifest.server.kind.remote();
        let (transport, sandbox) = match (&manifest.server.url, remote) {
            (Some(url), Some(protocol)) => (
                Transport::Http {
                    protocol,
                    url: substitute(url, &vars).map_err(bad)?,
                    headers: manifest
                        .server
                        .headers
                        .iter()
                        .map(|(k, v)| Ok((k.clone(), substitute(v, &vars)?)))
                        .collect::<Result<_, String>>()
                        .map_err(bad)?,
                    oauth: Some(oauth(&manifest.server_name())),
                },
                Sandbox::Unconfined(Unconfined::Remote),
            ),
            _ => self
                .stdio_launch(&manifest, record, &vars, &dir)
                .map_err(bad)?,
        };
        let server = manifest.server_name();
        let spec = LaunchSpec {
            name: server.clone(),
            transport,
            log_file: self.logs.join(format!("{server}.log")),
            restart: RestartPolicy::default(),
            sandbox,
        };
        Ok((spec, manifest))
    }

    /// How a pack's stdio server runs: its command line with the variables filled in, and its
    /// sandbox (unless it has none, and why).
    fn stdio_launch(
        &self,
        manifest: &Manifest,
        record: &Record,
        vars: &Vars<'_>,
        dir: &Path,
    ) -> Result<(Transport, Sandbox), String> {
        let config = &manifest.server.mcp_config;
        let command = substitute(&config.command, vars)?;
        let args = substitute_args(&config.args, vars)?;
        let env = config
            .env
            .iter()
            .map(|(k, v)| Ok((k.clone(), substitute(v, vars)?)))
            .collect::<Result<_, String>>()?;
        let sandbox = match unconfined(record.sandbox_off) {
            Some(why) => Sandbox::Unconfined(why),
            None => {
                let request = manifest.cowork()?.sandbox;
                let cowork_root = self.root.parent().unwrap_or(&self.root);
                Sandbox::Confined(Confinement::resolve(&request, vars, &command, cowork_root)?)
            }
        };
        let transport = Transport::Stdio {
            command,
            args,
            env,
            cwd: Some(dir.to_path_buf()),
        };
        Ok((transport, sandbox))
    }

    async fn fetch_github(
        &self,
        owner: &str,
        repo: &str,
        r#ref: Option<&str>,
    ) -> Result<(String, Vec<u8>), PackError> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("cowork/", env!("CARGO_PKG_VERSION")))
            .timeout(std::time::Duration::from_secs(120))
            .build()
            .map_err(|e| PackError::Download(e.to_string()))?;
        let base = self.github_api.trim_end_matches('/');
        let r#ref = r#ref.unwrap_or("HEAD");
        // Resolve the ref to a commit first: the install is pinned to it, not to a moving ref.
        let url = format!("{base}/repos/{owner}/{repo}/commits/{ref}");
        let resp = answered(
            http.get(&url)
                .header("accept", "application/vnd.github.sha"),
            &url,
            " — check the owner, repository and ref",
        )
        .await?;
        let commit = resp
            .text()
            .await
            .map_err(|e| PackError::Download(e.to_string()))?
            .trim()
            .to_string();
        if commit.len() != 40 || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(PackError::Download(format!(
                "{url}: expected a commit sha, got {:?}",
                commit.chars().take(60).collect::<String>()
            )));
        }
        let url = format!("{base}/repos/{owner}/{repo}/tarball/{commit}");
        let resp = answered(http.get(&url), &url, "").await?;
        if resp.content_length().is_some_and(|n| n > MAX_PACK_BYTES) {
            return Err(PackError::Download(format!(
                "{url}: larger than {} MB",
                MAX_PACK_BYTES >> 20
            )));
        }
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| PackError::Download(format!("{url}: {e}")))?;
        Ok((commit, bytes.to_vec()))
    }
}

/// The response to `request` (a GET of `url`) when it succeeded; `hint` follows the HTTP
/// status when it did not.
async fn answered(
    request: reqwest::RequestBuilder,
    url: &str,
    hint: &str,
) -> Result<reqwest::Response, PackError> {
    let resp = request
        .send()
        .await
        .map_err(|e| PackError::Download(format!("{url}: {e}")))?;
    if !resp.status().is_success() {
        return Err(PackError::Download(format!(
            "{url}: HTTP {}{hint}",
            resp.status()
        )));
    }
    Ok(resp)
}

/// The pack's `user_config` values for a launch: sensitive ones from `secret` (the keyring),
/// the rest as configured, then the defaults; a required one unset is an error.
fn config_values(
    name: &str,
    manifest: &Manifest,
    record: &Record,
    secret: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, Value>, PackError> {
    let mut values = BTreeMap::new();
    for (key, field) in &manifest.user_config {
        let value = if field.sensitive {
            secret(key).map(Value::String)
        } else {
            record.config.get(key).cloned()
        }
        .or_else(|| field.default.clone());
        match value {
            Some(v) => {
                values.insert(key.clone(), v);
            }
            None if field.required => {
                return Err(PackError::Invalid(format!(
                    "toolpack {name} needs `{key}` ({}): `cowork toolpack configure {name} {key}=…`",
                    field.title
                )));
            }
            // Optional and unset: empty where the launch names it.
            None => {
                values.insert(key.clone(), Value::Null);
            }
        }
    }
    Ok(values)
}

/// A pack whose content is not what it was pinned to.
fn tampered(name: &str, pinned: &str, found: &str) -> PackError {
    PackError::Tampered {
        name: name.to_string(),
        pinned: pinned.to_string(),
        found: found.to_string(),
        file: None,
    }
}

fn review_of(
    manifest: &Manifest,
    source: &str,
    commit: Option<String>,
    sha256: &str,
    previous: Option<&Manifest>,
    sandbox_off: bool,
) -> Review {
    let meta = manifest.cowork().unwrap_or_default();
    let mut names: Vec<String> = manifest.tools.iter().map(|t| t.name.clone()).collect();
    names.extend(
        meta.effects
            .keys()
            .filter(|k| !names.contains(k))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let changes = match previous {
        Some(old) => changes_since(old, manifest, &meta, &names),
        None => Vec::new(),
    };
    printable(Review {
        name: manifest.name.clone(),
        display_name: manifest
            .display_name
            .clone()
            .unwrap_or_else(|| manifest.name.clone()),
        version: manifest.version.clone(),
        description: manifest.description.clone(),
        source: source.to_string(),
        commit,
        sha256: sha256.to_string(),
        command: command_line(manifest),
        tools: review_tools(manifest, &names),
        overrides: meta.overrides.clone(),
        sandbox: crate::sandbox::describe_request(
            &meta.sandbox,
            match manifest.server.kind.remote() {
                Some(_) => Some(Unconfined::Remote),
                None => unconfined(sandbox_off),
            },
        ),
        user_config: manifest
            .user_config
            .iter()
            .map(|(k, f)| ReviewConfig {
                key: k.clone(),
                title: f.title.clone(),
                required: f.required,
                sensitive: f.sensitive,
                has_default: f.default.is_some(),
            })
            .collect(),
        changes,
        acts_as: None,
    })
}

/// A stdio server's command line, as the manifest writes it.
/// What the pack's server is, as the review shows it and an update compares it: the
/// environment it sets and its command line, or the address it connects to and the headers it
/// sends (by name: their values are templates of settings, secrets among them).
fn command_line(manifest: &Manifest) -> String {
    let server = &manifest.server;
    if let Some(protocol) = server.kind.remote() {
        let url = server.url.as_deref().unwrap_or_default();
        let how = match protocol {
            crate::server::HttpProtocol::Streamable => "streamable HTTP",
            crate::server::HttpProtocol::LegacySse => "HTTP+SSE, MCP's older transport",
        };
        let names: Vec<&str> = server.headers.keys().map(String::as_str).collect();
        return match names.is_empty() {
            true => format!("connects to {url} ({how})"),
            false => format!("connects to {url} ({how}), sending {}", names.join(", ")),
        };
    }
    let config = &server.mcp_config;
    let env: String = config
        .env
        .iter()
        .map(|(k, v)| format!("{k}={v} "))
        .collect();
    format!("{env}{} {}", config.command, config.args.join(" "))
}

/// The kinds of effect a pack declares for `tool` (None: undeclared).
fn declared_effects(manifest: &Manifest, tool: &str) -> Option<Vec<String>> {
    let meta = manifest.cowork().unwrap_or_default();
    meta.effects.get(tool).map(|ts| {
        ts.iter()
            .map(|t| t["kind"].as_str().unwrap_or("?").to_string())
            .collect()
    })
}

/// Each tool `names` lists, with its description, declared effects, and whether its texts are
/// withheld from the model.
fn review_tools(manifest: &Manifest, names: &[String]) -> Vec<ReviewTool> {
    names
        .iter()
        .map(|name| {
            let description = manifest
                .tools
                .iter()
                .find(|t| &t.name == name)
                .map(|t| t.description.clone())
                .unwrap_or_default();
            let withheld = crate::instructions::tool_addresses_model(
                name,
                &description,
                &serde_json::Value::Null,
                names,
            )
            .map(str::to_string);
            ReviewTool {
                name: name.clone(),
                description,
                effects: declared_effects(manifest, name),
                withheld,
            }
        })
        .collect()
}

/// What an update changes in what the pack may do: its command, each tool's effects, its
/// sandbox and overrides.
fn changes_since(
    old: &Manifest,
    manifest: &Manifest,
    meta: &crate::manifest::CoworkMeta,
    names: &[String],
) -> Vec<String> {
    let mut changes = Vec::new();
    let (old_cmd, new_cmd) = (command_line(old), command_line(manifest));
    if old_cmd != new_cmd {
        changes.push(format!("command: {old_cmd} → {new_cmd}"));
    }
    let old_meta = old.cowork().unwrap_or_default();
    for name in names {
        let (before, after) = (
            declared_effects(old, name),
            declared_effects(manifest, name),
        );
        if before != after {
            let show = |e: &Option<Vec<String>>| {
                e.as_ref()
                    .map(|v| {
                        if v.is_empty() {
                            "none".to_string()
                        } else {
                            v.join(", ")
                        }
                    })
                    .unwrap_or_else(|| "undeclared".into())
            };
            changes.push(format!("{name}: {} → {}", show(&before), show(&after)));
        }
    }
    for gone in old_meta.effects.keys().filter(|k| !names.contains(k)) {
        changes.push(format!("{gone}: removed"));
    }
    if old_meta.sandbox != meta.sandbox {
        changes.push(format!(
            "sandbox: {} → {}",
            crate::sandbox::describe_request(&old_meta.sandbox, None).join("; "),
            crate::sandbox::describe_request(&meta.sandbox, None).join("; ")
        ));
    }
    if old_meta.overrides != meta.overrides {
        changes.push(format!(
            "overrides: {:?} → {:?}",
            old_meta.overrides, meta.overrides
        ));
    }
    changes
}

/// Every string of a review is the pack's (or built from it) and reaches a terminal or the
/// window: no control or bidi characters, whatever shell shows it.
fn printable(review: Review) -> Review {
    use cowork_contract::text::{printable_field, printable_json};
    let mut review: Review =
        serde_json::from_value(printable_json(serde_json::to_value(review).expect("json")))
            .expect("the same shape");
    review.overrides = std::mem::take(&mut review.overrides)
        .into_iter()
        .map(|(k, v)| (printable_field(&k).into_owned(), v))
        .collect();
    review
}

/// Why a stdio server would run without a sandbox, if it would.
fn unconfined(turned_off: bool) -> Option<Unconfined> {
    if turned_off {
        Some(Unconfined::TurnedOff)
    } else if !cowork_contract::confine::available() {
        Some(Unconfined::NoBubblewrap)
    } else {
        None
    }
}

/// npm / pip into the pack's own folder, so packs never share or pollute global installs.
fn install_dependencies(dir: &Path, manifest: &Manifest) -> Result<(), PackError> {
    use crate::manifest::ServerType;
    // Install steps run a pack's code (a setup script, a git or local dependency) — confined like
    // its server: they may change the pack's folder (its generated `.venv` too) and reach the
    // registries, and see nothing else of the person's files.
    let run = |program: &str, args: &[&str]| -> Result<(), PackError> {
        let mut jail = cowork_contract::confine::Confinement::new(dir)
            .write(dir)
            .write(&dir.join(".venv"))
            .network(true);
        if let Some(home) = std::env::var_os("HOME") {
            jail = jail.home(Path::new(&home));
        }
        let out = jail.command(program, args).command.output().map_err(|e| {
            PackError::Invalid(format!(
                "cannot run {program}: {e} — install it and try again"
            ))
        })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(PackError::Invalid(format!(
                "{program} {} failed in {}: {}",
                args.join(" "),
                dir.display(),
                err.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
            )));
        }
        Ok(())
    };
    match manifest.server.kind {
        // The pack's own files must not change (they are pinned): a shipped lockfile is used
        // as is (`npm ci`), and without one npm must not write one.
        ServerType::Node
            if dir.join("package.json").exists() && !dir.join("node_modules").exists() =>
        {
            if dir.join("package-lock.json").exists() {
                run(
                    "npm",
                    &[
                        "ci",
                        "--omit=dev",
                        "--no-audit",
                        "--no-fund",
                        "--ignore-scripts",
                    ],
                )
            } else {
                run(
                    "npm",
                    &[
                        "install",
                        "--no-package-lock",
                        "--omit=dev",
                        "--no-audit",
                        "--no-fund",
                        "--ignore-scripts",
                    ],
                )
            }
        }
        ServerType::Python | ServerType::Uv
            if dir.join("requirements.txt").exists() && !dir.join(".venv").exists() =>
        {
            run("python3", &["-m", "venv", ".venv"])?;
            run(
                ".venv/bin/pip",
                &[
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "-r",
                    "requirements.txt",
                ],
            )
        }
        _ => Ok(()),
    }
}

/// An index of installed things (`toolpacks.json`, `skills.json`): empty when there is none yet.
pub(crate) fn read_index<T: serde::de::DeserializeOwned + Default>(
    path: &Path,
) -> Result<T, PackError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            PackError::Invalid(format!(
                "{} is not valid ({e}); fix or remove it",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(io(format!("reading {}", path.display()))(e)),
    }
}

/// Writes an index whole, atomically.
pub(crate) fn write_index<T: Serialize>(path: &Path, index: &T) -> Result<(), PackError> {
    let bytes = serde_json::to_vec_pretty(index).expect("records serialize");
    cowork_store::write_atomically(path, &bytes).map_err(io(format!("writing {}", path.display())))
}

/// sha256 over the pack's files: sorted relative paths and contents, generated folders
/// (`node_modules`, `.venv`) excluded. Symlinks are hashed as their target text.
pub fn hash_tree(dir: &Path) -> Result<String, PackError> {
    let mut files = Vec::new();
    // Generated folders are left out of the source pin: at the top of the pack, and
    // __pycache__ anywhere.
    collect(
        dir,
        dir,
        &|top, name| (top && UNPINNED.iter().any(|u| name == *u)) || name == "__pycache__",
        &mut files,
    )?;
    files.sort();
    let mut hasher = Sha256::new();
    for rel in files {
        hasher.update(rel.as_bytes());
        hasher.update([0]);
        feed(&dir.join(&rel), &mut hasher)?;
        hasher.update([0]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Every file of an installed pack (dependencies and bytecode included; only `.git` left out)
/// with its sha256, by relative path.
fn hash_files(dir: &Path) -> Result<BTreeMap<String, String>, PackError> {
    let mut files = Vec::new();
    collect(dir, dir, &|top, name| top && name == ".git", &mut files)?;
    let mut out = BTreeMap::new();
    for rel in files {
        let mut hasher = Sha256::new();
        feed(&dir.join(&rel), &mut hasher)?;
        out.insert(rel, hex::encode(hasher.finalize()));
    }
    Ok(out)
}

/// A file's bytes into the hash; a symlink as its target text (never followed).
fn feed(path: &Path, hasher: &mut Sha256) -> Result<(), PackError> {
    let meta =
        std::fs::symlink_metadata(path).map_err(io(format!("reading {}", path.display())))?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).map_err(io(format!("reading {}", path.display())))?;
        hasher.update(b"symlink:");
        hasher.update(target.to_string_lossy().as_bytes());
    } else {
        let mut file =
            std::fs::File::open(path).map_err(io(format!("reading {}", path.display())))?;
        std::io::copy(&mut file, hasher).map_err(io(format!("reading {}", path.display())))?;
    }
    Ok(())
}

/// One digest of a file list (paths and their hashes, in order).
fn digest_of(files: &BTreeMap<String, String>) -> String {
    let mut hasher = Sha256::new();
    for (path, hash) in files {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(hash.as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

/// Relative paths of the files under `dir`, skipping entries `skip(at_top, name)` names.
fn collect(
    root: &Path,
    dir: &Path,
    skip: &dyn Fn(bool, &std::ffi::OsStr) -> bool,
    out: &mut Vec<String>,
) -> Result<(), PackError> {
    for entry in std::fs::read_dir(dir).map_err(io(format!("listing {}", dir.display())))? {
        let entry = entry.map_err(io(format!("listing {}", dir.display())))?;
        if skip(dir == root, &entry.file_name()) {
            continue;
        }
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(io(format!("reading {}", path.display())))?;
        if kind.is_dir() {
            collect(root, &path, skip, out)?;
        } else {
            out.push(
                path.strip_prefix(root)
                    .expect("under root")
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
    Ok(())
}

pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<(), PackError> {
    for entry in std::fs::read_dir(from).map_err(io(format!("listing {}", from.display())))? {
        let entry = entry.map_err(io(format!("listing {}", from.display())))?;
        let name = entry.file_name();
        if UNPINNED.iter().any(|u| name == *u) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let kind = entry
            .file_type()
            .map_err(io(format!("reading {}", src.display())))?;
        if kind.is_dir() {
            std::fs::create_dir_all(&dst).map_err(io(format!("creating {}", dst.display())))?;
            copy_tree(&src, &dst)?;
        } else if kind.is_file() {
            std::fs::copy(&src, &dst).map_err(io(format!("copying {}", src.display())))?;
        }
    }
    Ok(())
}

/// A relative path that stays inside the destination, or None (`..`, absolute, empty).
fn safe_relative(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// GitHub tarballs have one top folder (`owner-repo-sha/`); it is stripped. Links, devices and
/// paths escaping the folder are refused rather than skipped: such a pack is not trustworthy.
fn untar_gz(bytes: &[u8], dest: &Path) -> Result<(), PackError> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes).take(MAX_PACK_BYTES));
    let bad =
        |e: std::io::Error| PackError::Download(format!("the tarball is not a valid .tar.gz: {e}"));
    for entry in archive.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let path = entry.path().map_err(bad)?.into_owned();
        let stripped: PathBuf = path.components().skip(1).collect();
        if stripped.as_os_str().is_empty() {
            continue;
        }
        let rel = safe_relative(&stripped).ok_or_else(|| {
            PackError::Download(format!("the tarball has an unsafe path {}", path.display()))
        })?;
        let target = dest.join(&rel);
        match entry.header().entry_type() {
            tar::EntryType::Directory => std::fs::create_dir_all(&target)
                .map_err(io(format!("creating {}", target.display())))?,
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(io(format!("creating {}", parent.display())))?;
                }
                entry
                    .unpack(&target)
                    .map_err(io(format!("unpacking {}", rel.display())))?;
            }
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => {}
            other => {
                return Err(PackError::Download(format!(
                    "the tarball has a {other:?} entry ({}); toolpacks may hold only files and folders",
                    path.display()
                )));
            }
        }
    }
    Ok(())
}

pub(crate) fn unzip(bytes: &[u8], dest: &Path) -> Result<(), PackError> {
    let bad =
        |e: zip::result::ZipError| PackError::Invalid(format!("not a valid .mcpb (zip) file: {e}"));
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(bad)?;
    let mut total = 0u64;
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).map_err(bad)?;
        let rel = file
            .enclosed_name()
            .and_then(|p| safe_relative(&p))
            .ok_or_else(|| {
                PackError::Invalid(format!("the .mcpb has an unsafe path {:?}", file.name()))
            })?;
        let target = dest.join(rel);
        if file.is_dir() {
            std::fs::create_dir_all(&target)
                .map_err(io(format!("creating {}", target.display())))?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(io(format!("creating {}", parent.display())))?;
        }
        let mut out =
            std::fs::File::create(&target).map_err(io(format!("creating {}", target.display())))?;
        // Counted as written, not as declared: an entry may claim 1 byte and inflate to gigabytes.
        let room = MAX_PACK_BYTES - total;
        total += std::io::copy(&mut (&mut file).take(room + 1), &mut out)
            .map_err(io(format!("unpacking {}", target.display())))?;
        if total > MAX_PACK_BYTES {
            return Err(PackError::Invalid(format!(
                "the .mcpb unpacks to more than {} MB",
                MAX_PACK_BYTES >> 20
            )));
        }
    }
    Ok(())
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pack_from_elsewhere_does_not_take_over_an_installed_one() {
        let source = |s: &str| Source::parse(s).unwrap();
        // The same origin is an update, whatever its ref, version or case.
        assert!(same_origin("x", "github:Owner/Repo@v1", &source("github:owner/repo@v2")).is_ok());
        assert!(
            same_origin(
                "x",
                "registry:io.github.a/x",
                &source("registry:io.github.a/x@2.0.0")
            )
            .is_ok()
        );
        // Another origin is refused, naming both and the way out.
        let taken = same_origin(
            "github",
            "github:github/github-mcp",
            &source("registry:io.github.evil/github"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            taken.contains("github:github/github-mcp") && taken.contains("toolpack remove github"),
            "{taken}"
        );
        assert!(same_origin("x", "/home/me/x", &source("github:a/x")).is_err());
        // A folder or file the person picked may replace it.
        let dir = tempfile::tempdir().unwrap();
        assert!(
            same_origin(
                "x",
                "github:a/x",
                &source(&dir.path().display().to_string())
            )
            .is_ok()
        );
    }
}
