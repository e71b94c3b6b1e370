//! Downloading an asset's archives: from its source or the person's mirror (a URL or a folder),
//! resumed where a cut transfer stopped, checked by size and sha256 before anything is made from
//! them; a wrong file is removed and downloaded again, never used.

use crate::{Asset, AssetError, Download, make};
use futures::StreamExt;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a fetch is doing, for a progress bar or line.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FetchProgress {
    pub asset: String,
    pub step: FetchStep,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FetchStep {
    Downloading {
        file: String,
        done: u64,
        total: u64,
    },
    Checking {
        file: String,
    },
    Retrying {
        file: String,
        attempt: u32,
        why: String,
    },
    Making {
        file: String,
    },
    Done,
}

/// How often a download reports progress: every this many bytes (and at its end).
const PROGRESS_EVERY: u64 = 1 << 20;
const ATTEMPTS: u32 = 3;

pub struct Fetcher {
    cache_root: PathBuf,
    /// A URL whose folder holds the archives under their own names, or a local folder.
    mirror: Option<String>,
    /// Keep the archives after the files are made (setup keeps them to serve tests as a mirror).
    keep_downloads: bool,
    client: reqwest::Client,
}

impl Fetcher {
    pub fn new(cache_root: PathBuf, mirror: Option<String>) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .read_timeout(Duration::from_secs(60))
            .user_agent(concat!("cowork/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("a client with timeouts builds");
        Fetcher {
            cache_root,
            mirror: mirror.filter(|m| !m.trim().is_empty()),
            keep_downloads: false,
            client,
        }
    }

    pub fn keep_downloads(mut self, keep: bool) -> Self {
        self.keep_downloads = keep;
        self
    }

    /// Where archives wait while an asset is made.
    pub fn downloads_dir(&self) -> PathBuf {
        self.cache_root.join("cowork/downloads")
    }

    /// Makes `asset` present: downloads what is missing, makes its files, checks them.
    pub async fn fetch(
        &self,
        asset: &Asset,
        progress: &(dyn Fn(FetchProgress) + Sync),
    ) -> Result<(), AssetError> {
        let say = |step| {
            progress(FetchProgress {
                asset: asset.id.clone(),
                step,
            })
        };
        if !asset.is_present(&self.cache_root) {
            let mut archives = Vec::new();
            for download in asset.needed_downloads() {
                archives.push(self.download(download, &say).await?);
            }
            let (asset_owned, dir) = (asset.clone(), asset.place(&self.cache_root));
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let archives_for_make = archives.clone();
            let making = tokio::task::spawn_blocking(move || {
                make::make_files(&asset_owned, &dir, &archives_for_make, &|file| {
                    let _ = tx.send(file.to_owned());
                })
            });
            while let Some(file) = rx.recv().await {
                say(FetchStep::Making { file });
            }
            making.await.expect("making files does not panic")?;
            if !self.keep_downloads {
                for archive in archives {
                    let _ = std::fs::remove_file(archive);
                }
            }
        }
        say(FetchStep::Done);
        Ok(())
    }

    /// One archive in the downloads folder, checked; a partial one is resumed.
    async fn download(
        &self,
        download: &Download,
        say: &(dyn Fn(FetchStep) + Sync),
    ) -> Result<PathBuf, AssetError> {
        let dir = self.downloads_dir();
        std::fs::create_dir_all(&dir).map_err(|e| AssetError::io(&dir, e))?;
        let name = download.file_name().to_owned();
        let done = dir.join(&name);
        if done.exists() {
            say(FetchStep::Checking { file: name.clone() });
            if matches_sum(&done, download).await? {
                return Ok(done);
            }
            remove(&done)?;
        }
        let part = dir.join(format!("{name}.part"));
        let mut attempt = 1;
        loop {
            let result = match self.transfer(download, &part, say).await {
                Ok(()) => {
                    say(FetchStep::Checking { file: name.clone() });
                    check(&part, download).await
                }
                Err(e) => Err(e),
            };
            match result {
                Ok(()) => {
                    std::fs::rename(&part, &done).map_err(|e| AssetError::io(&done, e))?;
                    return Ok(done);
                }
                Err(e) if e.is_transient() && attempt < ATTEMPTS => {
                    tracing::warn!(file = %name, attempt, error = %e, "asset download failed; trying again");
                    say(FetchStep::Retrying {
                        file: name.clone(),
                        attempt,
                        why: e.to_string(),
                    });
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(500 * u64::from(attempt))).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Brings `part` up to the archive's size, from where it stopped.
    async fn transfer(
        &self,
        download: &Download,
        part: &Path,
        say: &(dyn Fn(FetchStep) + Sync),
    ) -> Result<(), AssetError> {
        let name = download.file_name();
        let have = std::fs::metadata(part).map_or(0, |m| m.len());
        if have > download.size {
            remove(part)?;
        }
        let source = match &self.mirror {
            Some(mirror) if !is_url(mirror) => {
                return copy_from_folder(Path::new(mirror), name, part);
            }
            Some(mirror) => format!("{}/{name}", mirror.trim_end_matches('/')),
            None => download.url.clone(),
        };
        let have = std::fs::metadata(part).map_or(0, |m| m.len());
        if have == download.size {
            return Ok(());
        }
        let unreachable = |why: String| AssetError::Unreachable {
            url: source.clone(),
            why,
        };
        let mut request = self.client.get(&source);
        if have > 0 {
            request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
        }
        let response = request
            .send()
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        let status = response.status();
        let resumed = status == reqwest::StatusCode::PARTIAL_CONTENT;
        if !status.is_success() {
            return Err(AssetError::Http {
                url: source.clone(),
                status: status.as_u16(),
            });
        }
        // A server that ignores the range sends the whole file again: start over.
        let from = if resumed { have } else { 0 };
        let done = write_body(response, part, from, download, say)
            .await
            .map_err(|e| match e {
                BodyError::Network(why) => unreachable(why),
                BodyError::Asset(e) => e,
            })?;
        if done < download.size {
            return Err(AssetError::Truncated {
                file: name.to_owned(),
                got: done,
                size: download.size,
            });
        }
        Ok(())
    }

    /// Takes a file the person already has (an archive from the manifest, recognised by its
    /// sha256 whatever its name): the next fetch uses it instead of downloading.
    pub async fn add_local(&self, path: &Path) -> Result<String, AssetError> {
        self.add_local_of(path, crate::manifest()).await
    }

    pub(crate) async fn add_local_of(
        &self,
        path: &Path,
        assets: &[Asset],
    ) -> Result<String, AssetError> {
        let sum = sha256_of(path).await?;
        let download = assets
            .iter()
            .flat_map(|a| &a.downloads)
            .find(|d| d.sha256 == sum)
            .ok_or_else(|| AssetError::NotInManifest(path.display().to_string()))?;
        let dir = self.downloads_dir();
        std::fs::create_dir_all(&dir).map_err(|e| AssetError::io(&dir, e))?;
        let target = dir.join(download.file_name());
        let part = dir.join(format!("{}.part", download.file_name()));
        std::fs::copy(path, &part).map_err(|e| AssetError::io(path, e))?;
        std::fs::rename(&part, &target).map_err(|e| AssetError::io(&target, e))?;
        Ok(download.file_name().to_owned())
    }
}

enum BodyError {
    Network(String),
    Asset(AssetError),
}

/// Appends the response's body to `part` (which holds `from` bytes), reporting progress; how
/// many bytes `part` holds at the end.
async fn write_body(
    response: reqwest::Response,
    part: &Path,
    from: u64,
    download: &Download,
    say: &(dyn Fn(FetchStep) + Sync),
) -> Result<u64, BodyError> {
    let io = |e| BodyError::Asset(AssetError::io(part, e));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(from > 0)
        .write(true)
        .truncate(from == 0)
        .open(part)
        .map_err(io)?;
    let (mut done, mut reported) = (from, from);
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| BodyError::Network(e.to_string()))?;
        done += chunk.len() as u64;
        if done > download.size {
            drop(file);
            remove(part).map_err(BodyError::Asset)?;
            return Err(BodyError::Asset(AssetError::TooLarge {
                file: download.file_name().to_owned(),
                size: download.size,
            }));
        }
        file.write_all(&chunk).map_err(io)?;
        if done - reported >= PROGRESS_EVERY || done == download.size {
            reported = done;
            say(FetchStep::Downloading {
                file: download.file_name().to_owned(),
                done,
                total: download.size,
            });
        }
    }
    file.sync_all().map_err(io)?;
    Ok(done)
}

fn is_url(mirror: &str) -> bool {
    mirror.starts_with("http://") || mirror.starts_with("https://")
}

fn copy_from_folder(folder: &Path, name: &str, part: &Path) -> Result<(), AssetError> {
    let source = folder.join(name);
    std::fs::copy(&source, part).map_err(|e| AssetError::io(&source, e))?;
    Ok(())
}

/// Size, then sha256; a wrong one is removed so the next try starts clean.
async fn check(part: &Path, download: &Download) -> Result<(), AssetError> {
    if matches_sum(part, download).await? {
        return Ok(());
    }
    let got = sha256_of(part).await?;
    remove(part)?;
    Err(AssetError::Corrupt {
        file: download.file_name().to_owned(),
        expected: download.sha256.clone(),
        got,
    })
}

async fn matches_sum(path: &Path, download: &Download) -> Result<bool, AssetError> {
    let size = std::fs::metadata(path)
        .map_err(|e| AssetError::io(path, e))?
        .len();
    Ok(size == download.size && sha256_of(path).await? == download.sha256)
}

pub(crate) async fn sha256_of(path: &Path) -> Result<String, AssetError> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || make::sha256_file(&path))
        .await
        .expect("hashing does not panic")
}

fn remove(path: &Path) -> Result<(), AssetError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(AssetError::io(path, e)),
        _ => Ok(()),
    }
}
