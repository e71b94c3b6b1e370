//! An on-disk HTTP cache: one JSON file of metadata and one body file per URL, under the
//! person's cache folder. The metadata file is written last (temp file + rename): a process killed
//! mid-write leaves the old entry or none, never a body that does not match its metadata.
//!
//! Hand-written: the crates that cache for reqwest bring a middleware stack and a content store
//! for what is here three rules (Cache-Control max-age / no-cache / no-store, ETag and
//! Last-Modified revalidation, the stale answer when offline).

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub url: String,
    pub status: u16,
    pub content_type: Option<String>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// Unix seconds when the answer was stored or last confirmed by the server.
    pub stored_at: u64,
    /// Seconds it stays fresh (Cache-Control max-age; 0 for no-cache); unknown means revalidate.
    pub max_age: Option<u64>,
}

impl Entry {
    pub fn age(&self) -> u64 {
        now().saturating_sub(self.stored_at)
    }

    pub fn is_fresh(&self) -> bool {
        self.max_age.is_some_and(|max| self.age() < max)
    }
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// What Cache-Control says: `None` when the answer must not be stored, else its max age.
pub fn freshness(cache_control: Option<&str>) -> Option<Option<u64>> {
    let mut max_age = None;
    for directive in cache_control.unwrap_or("").split(',') {
        let directive = directive.trim().to_ascii_lowercase();
        if directive == "no-store" {
            return None;
        }
        if directive == "no-cache" {
            max_age = Some(0);
        } else if let Some(n) = directive.strip_prefix("max-age=") {
            max_age = max_age.or(n.trim_matches('"').parse().ok());
        }
    }
    Some(max_age)
}

pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    fn paths(&self, url: &str) -> (PathBuf, PathBuf) {
        let key = hex::encode(Sha256::digest(url.as_bytes()));
        (
            self.dir.join(format!("{key}.json")),
            self.dir.join(format!("{key}.body")),
        )
    }

    pub fn get(&self, url: &str) -> Option<(Entry, Bytes)> {
        let (meta, body) = self.paths(url);
        let entry: Entry = serde_json::from_slice(&std::fs::read(meta).ok()?).ok()?;
        // A hash collision is not this URL's answer.
        if entry.url != url {
            return None;
        }
        Some((entry, Bytes::from(std::fs::read(body).ok()?)))
    }

    pub fn put(&self, entry: &Entry, body: &[u8]) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let (meta, body_path) = self.paths(&entry.url);
        write_atomic(&body_path, body)?;
        write_atomic(
            &meta,
            &serde_json::to_vec(entry).map_err(std::io::Error::other)?,
        )
    }

    /// The server confirmed the stored answer (304): it is fresh again from now.
    pub fn confirm(&self, entry: &Entry, max_age: Option<u64>) -> std::io::Result<Entry> {
        let entry = Entry {
            stored_at: now(),
            max_age: max_age.or(entry.max_age),
            ..entry.clone()
        };
        let (meta, _) = self.paths(&entry.url);
        write_atomic(
            &meta,
            &serde_json::to_vec(&entry).map_err(std::io::Error::other)?,
        )?;
        Ok(entry)
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_control_decides_storing_and_freshness() {
        assert_eq!(freshness(Some("public, max-age=600")), Some(Some(600)));
        assert_eq!(freshness(Some("no-cache")), Some(Some(0)));
        assert_eq!(freshness(Some("no-store, max-age=60")), None);
        assert_eq!(freshness(None), Some(None));
    }

    #[test]
    fn an_entry_round_trips_and_a_confirmation_makes_it_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let entry = Entry {
            url: "https://example.org/a".into(),
            status: 200,
            content_type: Some("text/html".into()),
            etag: Some("\"v1\"".into()),
            last_modified: None,
            stored_at: now() - 100,
            max_age: Some(10),
        };
        cache.put(&entry, b"<p>hi</p>").unwrap();
        let (got, body) = cache.get("https://example.org/a").unwrap();
        assert_eq!(got, entry);
        assert_eq!(&body[..], b"<p>hi</p>");
        assert!(!got.is_fresh());
        assert!(cache.confirm(&got, None).unwrap().is_fresh());
        assert!(cache.get("https://example.org/b").is_none());
    }
}
