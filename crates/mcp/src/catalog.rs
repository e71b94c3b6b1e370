//! The official MCP Registry as a catalog: search it (answers cached, so offline shows the last
//! ones), and turn an entry into a toolpack folder that goes through the same review as any
//! other pack (`registry:<name>[@version]` as a source).
//!
//! An entry is content. It chooses the package, never the program that runs it: npm packages
//! run with `npx`, PyPI ones with `uvx`, bundles are unpacked and checked against the sha256
//! the entry pins, remote servers are connected to. Nothing in it reaches the sandbox: a
//! generated pack may use the network (to fetch its package, to call its API) and nothing of
//! the person's files. Its tools declare no effects, so every call asks until the person says
//! otherwise.

use crate::toolpacks::PackError;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::Digest;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const DEFAULT_REGISTRY: &str = "https://registry.modelcontextprotocol.io";
/// The registry's frozen API revision.
const API: &str = "v0.1";
/// An answer larger than this is not a catalog page.
const MAX_ANSWER_BYTES: usize = 8 << 20;
const PAGE_SIZE: u32 = 30;

// The registry's wire format (server.json as served): lenient, every field but the name optional.

#[derive(Deserialize)]
struct ListAnswer {
    #[serde(default)]
    servers: Vec<Answer>,
    #[serde(default)]
    metadata: ListMetadata,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListMetadata {
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct Answer {
    server: ServerJson,
    #[serde(default, rename = "_meta")]
    meta: Value,
}

impl Answer {
    /// Withdrawn from the registry (its status `deleted`): not offered, not installed.
    fn withdrawn(&self) -> bool {
        self.meta["io.modelcontextprotocol.registry/official"]["status"] == "deleted"
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerJson {
    name: String,
    title: Option<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    version: String,
    repository: Option<Repository>,
    website_url: Option<String>,
    #[serde(default)]
    packages: Vec<Package>,
    #[serde(default)]
    remotes: Vec<Remote>,
}

#[derive(Clone, Debug, Deserialize)]
struct Repository {
    url: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Package {
    registry_type: String,
    identifier: String,
    version: Option<String>,
    file_sha256: Option<String>,
    transport: Option<Transport>,
    #[serde(default)]
    environment_variables: Vec<Input>,
    #[serde(default)]
    package_arguments: Vec<Input>,
}

#[derive(Clone, Debug, Deserialize)]
struct Transport {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Clone, Debug, Deserialize)]
struct Remote {
    #[serde(rename = "type")]
    kind: String,
    url: String,
    #[serde(default)]
    headers: Vec<Input>,
}

/// An environment variable, a header or an argument: a fixed `value` (which may name
/// `{variables}`), or a value the person gives.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Input {
    /// For an argument: "positional" or "named".
    #[serde(rename = "type", default)]
    kind: String,
    name: Option<String>,
    value: Option<String>,
    value_hint: Option<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    is_required: bool,
    #[serde(default)]
    is_secret: bool,
    default: Option<String>,
    #[serde(default)]
    variables: BTreeMap<String, Input>,
}

/// How installing an entry would run it, as the catalog shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CatalogInstall {
    /// A `.mcpb` bundle, checked against the sha256 the entry pins.
    Bundle {
        url: String,
    },
    Npm {
        package: String,
        version: String,
    },
    Pypi {
        package: String,
        version: String,
    },
    /// A server already running elsewhere (streamable HTTP, or the older SSE).
    Remote {
        url: String,
    },
    /// Nothing Cowork can install (a container image, say): why.
    Unsupported {
        why: String,
    },
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CatalogEntry {
    /// The registry's name (`io.github.owner/server`); `registry:<name>` installs it.
    pub name: String,
    pub title: String,
    pub description: String,
    pub version: String,
    pub repository: Option<String>,
    pub website: Option<String>,
    pub install: CatalogInstall,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CatalogPage {
    pub entries: Vec<CatalogEntry>,
    /// Opaque: pass it back for the next page.
    pub next_cursor: Option<String>,
    /// Set when the registry could not be reached and this page is the cached answer.
    pub offline: Option<CatalogOffline>,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CatalogOffline {
    /// When the cached answer was fetched (RFC 3339).
    pub fetched_at: String,
    pub why: String,
}

/// What the cache keeps of an answer.
#[derive(Serialize, Deserialize)]
struct Cached {
    fetched_at: String,
    body: Value,
}

/// The registry client: `base` is the registry's address, `cache` a folder of its answers.
pub struct Catalog {
    base: String,
    cache: PathBuf,
}

impl Catalog {
    pub fn new(base: &str, cache: &Path) -> Catalog {
        Catalog {
            base: base.trim_end_matches('/').to_string(),
            cache: cache.to_path_buf(),
        }
    }

    /// One page of the latest versions whose names match `query` (all of them when empty).
    pub async fn search(
        &self,
        query: &str,
        cursor: Option<&str>,
    ) -> Result<CatalogPage, PackError> {
        let mut url = url::Url::parse(&format!("{}/{API}/servers", self.base))
            .map_err(|e| PackError::Invalid(format!("the registry address {}: {e}", self.base)))?;
        url.query_pairs_mut()
            .append_pair("version", "latest")
            .append_pair("limit", &PAGE_SIZE.to_string());
        if !query.trim().is_empty() {
            url.query_pairs_mut().append_pair("search", query.trim());
        }
        if let Some(cursor) = cursor {
            url.query_pairs_mut().append_pair("cursor", cursor);
        }
        let (body, offline) = self.get_cached(url.as_str()).await?;
        let answer: ListAnswer = serde_json::from_value(body)
            .map_err(|e| PackError::Download(format!("{url}: not a registry answer ({e})")))?;
        Ok(CatalogPage {
            entries: answer
                .servers
                .into_iter()
                .filter(|a| !a.withdrawn())
                .map(|a| entry_of(a.server))
                .collect(),
            next_cursor: answer.metadata.next_cursor.filter(|c| !c.is_empty()),
            offline,
        })
    }

    /// Writes the pack for the entry `name` at `version` (the latest when `None`) into
    /// `staging`: a bundle's own files, or a generated manifest.json.
    pub async fn materialize(
        &self,
        name: &str,
        version: Option<&str>,
        staging: &Path,
    ) -> Result<(), PackError> {
        let url = format!(
            "{}/{API}/servers/{}/versions/{}",
            self.base,
            path_segment(name),
            path_segment(version.unwrap_or("latest"))
        );
        // Never from the cache: an install or an update takes the registry's answer of now (a
        // version withdrawn since must not install, a stale "latest" must not look current).
        let bytes = fetch(&url, MAX_ANSWER_BYTES).await.map_err(|e| {
            PackError::Download(format!("{} — the MCP Registry could not answer", e.text()))
        })?;
        let answer: Answer = serde_json::from_slice(&bytes)
            .map_err(|e| PackError::Download(format!("{url}: not a registry entry ({e})")))?;
        if answer.withdrawn() {
            return Err(PackError::Invalid(format!(
                "{name} was withdrawn from the MCP Registry: not installed"
            )));
        }
        let server = answer.server;
        if server.name != name {
            return Err(PackError::Download(format!(
                "{url}: answered with {:?}, not {name:?}",
                server.name
            )));
        }
        match choose(&server)? {
            Choice::Bundle(package) => {
                same_site(&package.identifier, &self.base)?;
                self.unpack_bundle(package, staging).await
            }
            Choice::Package(package) => {
                write_manifest(staging, &package_manifest(&server, package)?)
            }
            Choice::Remote(remote) => write_manifest(staging, &remote_manifest(&server, remote)?),
        }
    }

    /// The answer at `url`, cached; when the registry cannot be reached, the cached answer
    /// with why (or an error saying nothing is cached).
    async fn get_cached(&self, url: &str) -> Result<(Value, Option<CatalogOffline>), PackError> {
        let file = self
            .cache
            .join(format!("{}.json", hex::encode(sha2::Sha256::digest(url))));
        match fetch(url, MAX_ANSWER_BYTES).await {
            Ok(bytes) => {
                let body: Value = serde_json::from_slice(&bytes)
                    .map_err(|e| PackError::Download(format!("{url}: not JSON ({e})")))?;
                let cached = Cached {
                    fetched_at: chrono::Utc::now().to_rfc3339(),
                    body,
                };
                // A cache that cannot be written costs only the offline view.
                let _ = std::fs::create_dir_all(&self.cache).and_then(|()| {
                    cowork_store::write_atomically(&file, &serde_json::to_vec(&cached)?)
                });
                Ok((cached.body, None))
            }
            // A refusal (404: gone) is the registry's answer, not a reason to show the cache.
            Err(Fetch::Refused(why)) => Err(PackError::Download(why)),
            Err(Fetch::Unreachable(why)) => match std::fs::read(&file)
                .ok()
                .and_then(|b| serde_json::from_slice::<Cached>(&b).ok())
            {
                Some(cached) => Ok((
                    cached.body,
                    Some(CatalogOffline {
                        fetched_at: cached.fetched_at,
                        why,
                    }),
                )),
                None => Err(PackError::Download(format!(
                    "{why} — the MCP Registry could not be reached and nothing from it is cached yet: check the network and try again"
                ))),
            },
        }
    }

    /// Downloads (or finds in the cache) the bundle, checks it against the entry's sha256 and
    /// unpacks it.
    async fn unpack_bundle(&self, package: &Package, staging: &Path) -> Result<(), PackError> {
        let pinned = package
            .file_sha256
            .as_deref()
            .map(str::to_ascii_lowercase)
            .filter(|s| s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit()))
            .ok_or_else(|| {
                PackError::Invalid(format!(
                    "the bundle {} has no valid fileSha256 in its registry entry: not installed (its content could not be checked)",
                    package.identifier
                ))
            })?;
        let cached = self.cache.join("bundles").join(format!("{pinned}.mcpb"));
        let bytes = match std::fs::read(&cached) {
            Ok(bytes) if hex::encode(sha2::Sha256::digest(&bytes)) == pinned => bytes,
            _ => fetch(
                &package.identifier,
                crate::toolpacks::MAX_PACK_BYTES as usize,
            )
            .await
            .map_err(|e| PackError::Download(e.text()))?,
        };
        let found = hex::encode(sha2::Sha256::digest(&bytes));
        if found != pinned {
            return Err(PackError::Invalid(format!(
                "the bundle at {} is not the one its registry entry pins (sha256 {found}, pinned {pinned}): not installed",
                package.identifier
            )));
        }
        let _ = std::fs::create_dir_all(cached.parent().expect("has a parent"))
            .and_then(|()| cowork_store::write_atomically(&cached, &bytes));
        crate::toolpacks::unzip(&bytes, staging)
    }
}

/// `name` as one path segment (the registry's names hold a '/').
fn path_segment(name: &str) -> String {
    url::form_urlencoded::byte_serialize(name.as_bytes()).collect()
}

/// Why a GET gave nothing; each holds the sentence to show.
enum Fetch {
    /// No answer (no network, a timeout, a server error): the cache may stand in.
    Unreachable(String),
    /// An answer that says no (not found, gone) or is too large: it stands.
    Refused(String),
}

impl Fetch {
    fn text(self) -> String {
        match self {
            Fetch::Unreachable(s) | Fetch::Refused(s) => s,
        }
    }
}

/// GETs `url`, at most `limit` bytes.
async fn fetch(url: &str, limit: usize) -> Result<Vec<u8>, Fetch> {
    let unreachable = |e: reqwest::Error| Fetch::Unreachable(format!("{url}: {e}"));
    let http = reqwest::Client::builder()
        .user_agent(concat!("cowork/", env!("CARGO_PKG_VERSION")))
        .timeout(Duration::from_secs(20))
        .build()
        .map_err(unreachable)?;
    let mut resp = http.get(url).send().await.map_err(unreachable)?;
    let status = resp.status();
    if status.is_server_error() {
        return Err(Fetch::Unreachable(format!("{url}: HTTP {status}")));
    }
    if !status.is_success() {
        return Err(Fetch::Refused(format!("{url}: HTTP {status}")));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(unreachable)? {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > limit {
            let why = format!("{url}: larger than {} MB", limit >> 20);
            return Err(Fetch::Refused(why));
        }
    }
    Ok(bytes)
}

/// A bundle comes over HTTPS, or from the registry's own site (a registry on this computer):
/// an entry must not make Cowork GET plain-HTTP addresses on the person's network.
fn same_site(bundle: &str, registry: &str) -> Result<(), PackError> {
    let parsed = url::Url::parse(bundle)
        .map_err(|e| PackError::Invalid(format!("the bundle address {bundle:?}: {e}")))?;
    let registry = url::Url::parse(registry).ok();
    if parsed.scheme() == "https" || registry.is_some_and(|r| r.origin() == parsed.origin()) {
        return Ok(());
    }
    Err(PackError::Invalid(format!(
        "the bundle address {bundle:?} is not HTTPS: not downloaded"
    )))
}

enum Choice<'a> {
    Bundle(&'a Package),
    Package(&'a Package),
    Remote(&'a Remote),
}

/// The way to install an entry: a bundle first (it may declare its tools' effects), then an
/// npm or PyPI package run over stdio, then a remote server.
fn choose(server: &ServerJson) -> Result<Choice<'_>, PackError> {
    let stdio = |p: &&Package| p.transport.as_ref().is_none_or(|t| t.kind == "stdio");
    let of_type = |kind: &str| {
        server
            .packages
            .iter()
            .filter(stdio)
            .find(|p| p.registry_type == kind)
    };
    if let Some(p) = of_type("mcpb") {
        return Ok(Choice::Bundle(p));
    }
    if let Some(p) = of_type("npm").or_else(|| of_type("pypi")) {
        return Ok(Choice::Package(p));
    }
    if let Some(r) = server
        .remotes
        .iter()
        .find(|r| matches!(r.kind.as_str(), "streamable-http" | "sse"))
    {
        return Ok(Choice::Remote(r));
    }
    let kinds: Vec<&str> = server
        .packages
        .iter()
        .map(|p| p.registry_type.as_str())
        .chain(server.remotes.iter().map(|r| r.kind.as_str()))
        .collect();
    Err(PackError::Invalid(format!(
        "{} is published only as {}, which Cowork cannot install (it installs .mcpb bundles, npm and PyPI packages over stdio, and remote servers)",
        server.name,
        if kinds.is_empty() {
            "nothing installable".into()
        } else {
            kinds.join(", ")
        }
    )))
}

fn entry_of(server: ServerJson) -> CatalogEntry {
    let install = match choose(&server) {
        Ok(Choice::Bundle(p)) => CatalogInstall::Bundle {
            url: p.identifier.clone(),
        },
        Ok(Choice::Package(p)) if p.registry_type == "npm" => CatalogInstall::Npm {
            package: p.identifier.clone(),
            version: p.version.clone().unwrap_or_default(),
        },
        Ok(Choice::Package(p)) => CatalogInstall::Pypi {
            package: p.identifier.clone(),
            version: p.version.clone().unwrap_or_default(),
        },
        Ok(Choice::Remote(r)) => CatalogInstall::Remote { url: r.url.clone() },
        Err(e) => CatalogInstall::Unsupported { why: e.to_string() },
    };
    // The registry's words, escaped where they are made (controls, bidi and invisible marks
    // shown, not obeyed), for the window and the terminal alike.
    let shown = |s: &str| cowork_contract::text::printable_field(s).into_owned();
    CatalogEntry {
        title: shown(server.title.as_deref().unwrap_or(&server.name)),
        name: shown(&server.name),
        description: shown(&server.description),
        version: shown(&server.version),
        repository: server.repository.and_then(|r| r.url).map(|u| shown(&u)),
        website: server.website_url.map(|u| shown(&u)),
        install,
    }
}

/// The settings a generated pack asks for, and how each input reads them.
#[derive(Default)]
struct Settings {
    fields: BTreeMap<String, Value>,
}

impl Settings {
    /// The text an input becomes: its fixed value with `{variable}`s as settings, or one
    /// setting for the whole value. `None`: an optional input nobody must give.
    fn template(&mut self, input: &Input, label: &str) -> Result<Option<String>, PackError> {
        if let Some(value) = &input.value {
            return self.with_variables(value, input).map(Some);
        }
        let key = setting_key(label);
        if key.is_empty() {
            return Ok(None);
        }
        self.field(&key, label, input, input.is_secret);
        Ok(Some(format!("${{user_config.{key}}}")))
    }

    /// `value` with each `{name}` read from a setting of that name.
    fn with_variables(&mut self, value: &str, input: &Input) -> Result<String, PackError> {
        if value.contains("${") {
            return Err(PackError::Invalid(format!(
                "{value:?}: a registry entry's value may not use ${{…}} (Cowork's launch variables)"
            )));
        }
        let mut out = String::new();
        let mut rest = value;
        while let Some(start) = rest.find('{') {
            let Some(len) = rest[start + 1..].find('}') else {
                break;
            };
            let name = &rest[start + 1..start + 1 + len];
            let key = setting_key(name);
            out.push_str(&rest[..start]);
            if key.is_empty() {
                out.push_str(&rest[start..start + len + 2]);
            } else {
                let var = input.variables.get(name).cloned().unwrap_or_else(|| Input {
                    is_required: true,
                    ..Input::default()
                });
                self.field(&key, name, &var, var.is_secret || input.is_secret);
                out.push_str(&format!("${{user_config.{key}}}"));
            }
            rest = &rest[start + len + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn field(&mut self, key: &str, label: &str, input: &Input, sensitive: bool) {
        let mut field = json!({
            "type": "string",
            "title": label,
            "description": input.description,
            "sensitive": sensitive,
            "required": input.is_required && input.default.is_none(),
        });
        if let Some(default) = &input.default {
            field["default"] = json!(default);
        }
        self.fields.insert(key.to_string(), field);
    }
}

/// A setting's key: the label's letters and digits, lowercased, words joined by '_'.
fn setting_key(label: &str) -> String {
    label
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("_")
}

/// The command line of an npm or PyPI package: the runner is Cowork's choice by the package's
/// registry, never the entry's.
fn package_manifest(server: &ServerJson, package: &Package) -> Result<Value, PackError> {
    let mut settings = Settings::default();
    let versioned = package_spec(package)?;
    let (command, mut args) = match package.registry_type.as_str() {
        "npm" => ("npx", vec!["-y".to_string(), versioned]),
        _ => ("uvx", vec![versioned]),
    };
    for (i, arg) in package.package_arguments.iter().enumerate() {
        let label = arg
            .value_hint
            .clone()
            .or_else(|| arg.name.clone())
            .unwrap_or_else(|| format!("argument {}", i + 1));
        if arg.kind == "named" {
            // An optional flag nobody set is left out, its name with it.
            if arg.value.is_none() && !arg.is_required {
                continue;
            }
            if let Some(name) = &arg.name {
                args.push(settings.with_variables(name, &Input::default())?);
            }
        }
        args.extend(settings.template(arg, &label)?);
    }
    let mut env = BTreeMap::new();
    for var in &package.environment_variables {
        let name = var.name.clone().unwrap_or_default();
        runner_cannot_read(&name)?;
        if let Some(value) = settings.template(var, &name)? {
            env.insert(name, value);
        }
    }
    let server_part = json!({"type": "binary", "entry_point": command,
        "mcp_config": {"command": command, "args": args, "env": env}});
    Ok(manifest_of(server, server_part, settings))
}

/// `name@version` (npm) or `name==version` (PyPI), each part checked against its registry's
/// naming rule: anything else — a leading '-' above all — would be read by the runner as an
/// option of its own (`npx -c <shell command>`), not as a package.
fn package_spec(package: &Package) -> Result<String, PackError> {
    let chars = |s: &str, extra: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    };
    let starts_well = |s: &str| s.starts_with(|c: char| c.is_ascii_alphanumeric());
    let name = package.identifier.as_str();
    let name_ok = match package.registry_type.as_str() {
        // `@scope/name` or `name`: lowercase letters, digits and -._~
        "npm" => {
            let bare = match name.strip_prefix('@').and_then(|r| r.split_once('/')) {
                Some((scope, rest)) => (starts_well(scope) && chars(scope, "-._~")).then_some(rest),
                None => Some(name),
            };
            bare.is_some_and(|b| starts_well(b) && chars(b, "-._~"))
                && name == name.to_ascii_lowercase()
        }
        _ => starts_well(name) && chars(name, "-._"),
    };
    // An exact version (a digit first): a tag like `latest` would run whatever it names at
    // each start, not what was reviewed.
    let version_ok = package
        .version
        .as_deref()
        .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()) && chars(v, "-.+_"));
    if !name_ok || !version_ok || name.len() > 214 {
        return Err(PackError::Invalid(format!(
            "{:?} (version {:?}) is not a valid {} package name with an exact version: not installed",
            package.identifier, package.version, package.registry_type
        )));
    }
    let version = package.version.as_deref().unwrap_or_default();
    Ok(match package.registry_type.as_str() {
        "npm" => format!("{name}@{version}"),
        _ => format!("{name}=={version}"),
    })
}

/// The variables an entry may set for its server. The runner (npx, uvx), the interpreters
/// they start and the loader read their own configuration from the environment — where to
/// fetch the package, code to preload, which program `npx` is — so a variable in one of their
/// namespaces would let the entry choose what runs. A list, because these namespaces are the
/// tools' documented ones and nothing in a name says whose it is; the property test generates
/// names in and around each. Names must look like environment names at all.
const RUNNER_NAMESPACES: &[&str] = &[
    "NPM_",
    "NODE_",
    "NPX_",
    "COREPACK_",
    "UV_",
    "PIP_",
    "PYTHON",
    "VIRTUAL_ENV",
    "LD_",
    "DYLD_",
    "GCONV_",
    "GLIBC_",
    "MALLOC_",
    "SSL_",
    "GIT_",
    "XDG_",
    "TMP",
    "TEMP",
];
const RUNNER_NAMES: &[&str] = &["PATH", "HOME", "SHELL", "ENV", "BASH_ENV", "IFS", "CDPATH"];

fn runner_cannot_read(name: &str) -> Result<(), PackError> {
    let upper = name.to_ascii_uppercase();
    let shaped = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if shaped
        && !RUNNER_NAMES.contains(&upper.as_str())
        && !RUNNER_NAMESPACES.iter().any(|p| upper.starts_with(p))
        && !upper.ends_with("_PROXY")
    {
        return Ok(());
    }
    Err(PackError::Invalid(format!(
        "the registry entry sets the environment variable {name:?}, which the program that starts its server reads (or is not a variable name): not installed"
    )))
}

fn remote_manifest(server: &ServerJson, remote: &Remote) -> Result<Value, PackError> {
    let mut settings = Settings::default();
    let url = settings.with_variables(&remote.url, &Input::default())?;
    let mut headers = BTreeMap::new();
    for header in &remote.headers {
        let name = header.name.clone().unwrap_or_default();
        if let Some(value) = settings.template(header, &name)? {
            headers.insert(name, value);
        }
    }
    let kind = if remote.kind == "sse" { "sse" } else { "http" };
    Ok(manifest_of(
        server,
        json!({"type": kind, "url": url, "headers": headers}),
        settings,
    ))
}

fn manifest_of(server: &ServerJson, server_part: Value, settings: Settings) -> Value {
    // The last part of the registry's name, as a pack name no other pack can read as.
    let short = server.name.rsplit('/').next().unwrap_or(&server.name);
    json!({
        "manifest_version": "0.3",
        "name": crate::import::pack_name(short, "registry"),
        "display_name": server.title.clone().unwrap_or_else(|| server.name.clone()),
        "version": if server.version.is_empty() { "0.0.0" } else { &server.version },
        "description": server.description,
        "server": server_part,
        "user_config": settings.fields,
        "_meta": {"app.cowork": {"sandbox": {"network": true}}},
    })
}

fn write_manifest(staging: &Path, manifest: &Value) -> Result<(), PackError> {
    let path = staging.join("manifest.json");
    std::fs::write(&path, serde_json::to_vec_pretty(manifest).expect("json")).map_err(|source| {
        PackError::Io {
            what: format!("writing {}", path.display()),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;
    use proptest::prelude::*;

    /// The entries the e2e tests' registry replays, in the registry's v0.1 shape.
    fn recorded() -> Vec<ServerJson> {
        let text = include_str!("../../../tests/data/registry/servers.json")
            .replace("{{BASE}}", "http://127.0.0.1:9")
            .replace("{{PROBE_SHA}}", &"ab".repeat(32));
        let answer: ListAnswer = serde_json::from_str(&text).unwrap();
        answer.servers.into_iter().map(|a| a.server).collect()
    }

    fn entry(name: &str) -> ServerJson {
        recorded().into_iter().find(|s| s.name == name).unwrap()
    }

    /// The manifest a package or remote entry becomes, parsed as any pack's would be.
    fn generated(server: &ServerJson) -> Result<Manifest, PackError> {
        let value = match choose(server)? {
            Choice::Package(p) => package_manifest(server, p)?,
            Choice::Remote(r) => remote_manifest(server, r)?,
            Choice::Bundle(_) => panic!("a bundle brings its own manifest"),
        };
        Ok(Manifest::parse(&value.to_string(), "generated")?)
    }

    #[test]
    fn each_recorded_entry_is_shown_with_how_it_would_install() {
        let installs: Vec<CatalogInstall> = recorded()
            .into_iter()
            .map(|s| entry_of(s).install)
            .collect();
        assert!(
            matches!(&installs[0], CatalogInstall::Bundle { url } if url.ends_with("/bundles/probe.mcpb"))
        );
        assert_eq!(
            installs[2],
            CatalogInstall::Npm {
                package: "@modelcontextprotocol/server-filesystem".into(),
                version: "2026.7.1".into()
            }
        );
        assert!(
            matches!(&installs[3], CatalogInstall::Pypi { package, .. } if package == "mcp-server-time")
        );
        assert!(matches!(&installs[4], CatalogInstall::Remote { url } if url.contains("{region}")));
        assert!(
            matches!(&installs[5], CatalogInstall::Unsupported { why } if why.contains("oci") && why.contains("npm and PyPI")),
            "{installs:?}"
        );
    }

    #[test]
    fn an_npm_entry_runs_with_npx_and_asks_for_its_required_folder() {
        let manifest = generated(&entry("io.github.modelcontextprotocol/filesystem")).unwrap();
        assert_eq!(manifest.name, "filesystem");
        assert_eq!(manifest.server.mcp_config.command, "npx");
        assert_eq!(
            manifest.server.mcp_config.args,
            [
                "-y",
                "@modelcontextprotocol/server-filesystem@2026.7.1",
                "${user_config.allowed_directory}"
            ]
        );
        let folder = &manifest.user_config["allowed_directory"];
        assert!(folder.required && !folder.sensitive);
        // An optional variable with a default: set from the default, changeable.
        assert_eq!(
            manifest.server.mcp_config.env["LOG_LEVEL"],
            "${user_config.log_level}"
        );
        assert!(!manifest.user_config["log_level"].required);
        assert_eq!(manifest.cowork().unwrap().sandbox, network_only());
    }

    #[test]
    fn a_pypi_entry_runs_with_uvx_and_leaves_an_unset_optional_flag_out() {
        let manifest = generated(&entry("io.github.modelcontextprotocol/time")).unwrap();
        assert_eq!(manifest.server.mcp_config.command, "uvx");
        assert_eq!(
            manifest.server.mcp_config.args,
            ["mcp-server-time==2026.1.26"]
        );
    }

    #[test]
    fn a_remote_entry_asks_for_its_url_variable_and_keeps_its_key_in_the_keyring() {
        let manifest = generated(&entry("com.example.weather/forecast")).unwrap();
        assert_eq!(
            manifest.server.url.as_deref(),
            Some("https://mcp.weather.example.com/${user_config.region}/mcp")
        );
        assert_eq!(
            manifest.server.headers["Authorization"],
            "Bearer ${user_config.api_key}"
        );
        assert!(manifest.user_config["api_key"].sensitive);
        assert!(manifest.user_config["region"].required);
        assert_eq!(
            manifest.display_name.as_deref(),
            Some("Weather <b>Forecast</b>")
        );
    }

    #[test]
    fn a_tag_is_not_a_version_and_a_plain_http_bundle_elsewhere_is_not_fetched() {
        let mut server = entry("io.github.modelcontextprotocol/filesystem");
        server.packages[0].version = Some("latest".into());
        let refused = generated(&server).err().unwrap().to_string();
        assert!(refused.contains("exact version"), "{refused}");
        server.packages[0].version = None;
        assert!(generated(&server).is_err());
        let registry = "http://127.0.0.1:9";
        assert!(same_site("http://127.0.0.1:9/b.mcpb", registry).is_ok());
        assert!(same_site("https://github.com/a/b/releases/x.mcpb", registry).is_ok());
        for elsewhere in [
            "http://192.168.1.1/x.mcpb",
            "http://127.0.0.1:10/x.mcpb",
            "file:///etc/passwd",
        ] {
            assert!(same_site(elsewhere, registry).is_err(), "{elsewhere}");
        }
    }

    #[test]
    fn a_withdrawn_entry_is_not_offered_and_entry_text_is_escaped() {
        let answer: Answer = serde_json::from_value(json!({
            "server": {"name": "a.b/c", "title": "Safe\u{202e}txt.exe", "description": "x"},
            "_meta": {"io.modelcontextprotocol.registry/official": {"status": "deleted"}}
        }))
        .unwrap();
        assert!(answer.withdrawn());
        let shown = entry_of(answer.server).title;
        assert!(!shown.contains('\u{202e}'), "{shown:?}");
    }

    #[test]
    fn a_value_using_cowork_launch_variables_is_refused() {
        let mut server = entry("io.github.modelcontextprotocol/filesystem");
        server.packages[0].package_arguments[0].value = Some("${HOME}".into());
        let refused = generated(&server).err().unwrap().to_string();
        assert!(refused.contains("may not use ${…}"), "{refused}");
    }

    fn network_only() -> crate::manifest::SandboxRequest {
        crate::manifest::SandboxRequest {
            network: true,
            ..Default::default()
        }
    }

    fn input() -> impl Strategy<Value = Input> {
        let text = "[a-zA-Z0-9{}$ ./:_-]{0,24}";
        (
            proptest::option::of(text),
            text,
            any::<bool>(),
            any::<bool>(),
            proptest::option::of(text),
        )
            .prop_map(|(value, name, is_required, is_secret, default)| Input {
                kind: if is_required {
                    "named".into()
                } else {
                    "positional".into()
                },
                name: Some(name),
                value,
                is_required,
                is_secret,
                default,
                ..Input::default()
            })
    }

    /// A name in one of the runners' namespaces, in any case, or one of their exact names.
    fn runner_name() -> impl Strategy<Value = String> {
        let prefixed = (
            proptest::sample::select(RUNNER_NAMESPACES),
            "[A-Za-z0-9_]{0,8}",
        )
            .prop_map(|(p, rest)| format!("{p}{rest}"));
        let exact = proptest::sample::select(RUNNER_NAMES).prop_map(String::from);
        let proxy = "[A-Za-z][A-Za-z0-9]{0,6}_PROXY".prop_map(|s| s);
        (prop_oneof![prefixed, exact, proxy], any::<u64>()).prop_map(|(name, bits)| {
            // Random case: npm reads `npm_config_*` as readily as `NPM_CONFIG_*`.
            name.chars()
                .enumerate()
                .map(|(i, c)| match bits >> (i % 64) & 1 {
                    1 => c.to_ascii_lowercase(),
                    _ => c,
                })
                .collect()
        })
    }

    proptest! {
        /// An entry cannot set what its runner reads; a variable of its own it can.
        #[test]
        fn an_entry_cannot_set_what_its_runner_reads(
            runner in runner_name(),
            own in "[A-Z][A-Z0-9_]{0,12}",
        ) {
            let mut server = entry("io.github.modelcontextprotocol/filesystem");
            let with = |name: &str| Input { name: Some(name.into()), value: Some("x".into()), ..Input::default() };
            server.packages[0].environment_variables = vec![with(&runner)];
            let refused = generated(&server).err().map(|e| e.to_string()).unwrap_or_default();
            prop_assert!(refused.contains("which the program that starts its server reads"), "{runner}: {refused}");
            let upper = own.to_ascii_uppercase();
            let theirs = RUNNER_NAMES.contains(&upper.as_str())
                || RUNNER_NAMESPACES.iter().any(|p| upper.starts_with(p))
                || upper.ends_with("_PROXY");
            server.packages[0].environment_variables = vec![with(&own)];
            prop_assert_eq!(generated(&server).is_ok(), !theirs, "{}", own);
        }

        /// Whatever an entry says, the pack it becomes runs Cowork's runner for its registry
        /// (or connects to its address), reaches the network and nothing of the person's, and
        /// parses as a manifest — or the entry is refused.
        #[test]
        fn no_entry_chooses_its_runner_or_widens_its_sandbox(
            registry_type in prop_oneof!["npm", "pypi", "[a-z]{1,6}"],
            identifier in prop_oneof!["(@[a-z0-9]{1,6}/)?[a-z0-9][a-z0-9._-]{0,12}", "[a-zA-Z0-9@/._ ;|&$=-]{1,30}"],
            version in prop_oneof![
                "[0-9][0-9.]{0,6}".prop_map(Some),
                proptest::option::of("[a-zA-Z0-9.+ -]{1,8}"),
            ],
            args in proptest::collection::vec(input(), 0..4),
            env in proptest::collection::vec(input(), 0..4),
            name in "[a-z]{1,8}\\.[a-z]{1,8}/[a-zA-Z0-9._-]{1,12}",
        ) {
            let server = ServerJson {
                name, title: None, description: String::new(), version: "1.0.0".into(),
                repository: None, website_url: None, remotes: vec![],
                packages: vec![Package {
                    registry_type: registry_type.clone(), identifier: identifier.clone(), version, file_sha256: None,
                    transport: None, environment_variables: env, package_arguments: args,
                }],
            };
            match generated(&server) {
                Ok(manifest) => {
                    let runner = if registry_type == "npm" { "npx" } else { "uvx" };
                    prop_assert!(registry_type == "npm" || registry_type == "pypi");
                    prop_assert_eq!(&manifest.server.mcp_config.command, runner);
                    prop_assert_eq!(manifest.cowork().unwrap().sandbox, network_only());
                    prop_assert!(manifest.server.kind.remote().is_none());
                    // The package is one argument the runner reads as a package, never an option.
                    let spec = &manifest.server.mcp_config.args[usize::from(runner == "npx")];
                    prop_assert!(spec.starts_with(&identifier) && !spec.starts_with('-'), "{}", spec);
                }
                Err(e) => {
                    let why = e.to_string();
                    prop_assert!(
                        why.contains("may not use ${")
                            || why.contains("cannot install")
                            || why.contains("not a valid")
                            || why.contains("environment variable"),
                        "{}", why
                    );
                }
            }
        }
    }
}
