//! The vault family: long-term memory and notes as Markdown files in a folder the person can
//! open in Obsidian, indexed in the store for hybrid search — BM25 over an FTS5 trigram index
//! (works for Chinese) and multilingual-e5 vectors, merged by reciprocal rank fusion.
//!
//! Tools (`tools.rs`): `save_to_vault`, `search_vault`, `update_vault_entry`,
//! `delete_vault_entry`, `restore_vault_entry`, `promote_memory`, `quick_note`.
//! The files are the truth (`entry.rs`); the index (`index.rs`) can always be rebuilt from
//! them, and a watcher (`watch.rs`) keeps it in step with edits made outside the app.

pub mod embed;
pub mod entry;
mod index;
mod language;
mod schema;
mod settings;
mod tools;
mod vectors;
mod watch;

/// This crate's tables, for the store (the app composes every owner's).
pub use schema::SCHEMA;

pub use embed::{E5, Embedder, HttpEmbedder, Role};
pub use entry::Kind;
pub use index::{Entry, Filter, cjk_grams};
pub use settings::{EmbedderSettings, VaultSettings};

use cowork_contract::{DynTool, ToolProvider};
use cowork_store::Store;
use entry::{Document, FrontMatter, Source};
use index::FileStamp;
use rusqlite::Connection;
use serde::Serialize;
use sha2::Digest;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use vectors::VectorCache;

type Db = Arc<Mutex<Connection>>;

/// Reciprocal rank fusion constant (Cormack et al.): damps the weight of the very first ranks.
pub(crate) const RRF_K: f32 = 60.0;
/// Candidates taken from each ranking before fusion.
const DEPTH: usize = 50;
/// A hit found by meaning alone, this far below the best one's similarity, is not about the
/// query: every entry has some nearest neighbour, so without a cut a search lists the vault.
/// Relative, not absolute: one model's scores cluster (e5: 0.75–0.9), and only the distance
/// from the best says "unrelated".
const MEANING_MARGIN: f32 = 0.08;
/// Files indexed per transaction (and per embedding batch) in a re-index.
const BATCH: usize = 16;
/// e5 reads at most 512 tokens; more text only costs time.
const EMBED_CHARS: usize = 2000;

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "VaultPhase")] // the TypeScript name (JSON does not carry it)
#[serde(rename_all = "lowercase")]
pub enum Phase {
    #[default]
    Idle,
    Scanning,
    Indexing,
    Embedding,
}

/// What the indexer is doing, for the panel and `cowork vault reindex`.
#[derive(Clone, Debug, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "VaultProgress")] // the TypeScript name (JSON does not carry it)
pub struct Progress {
    pub phase: Phase,
    pub done: usize,
    pub total: usize,
}

#[derive(Clone, Debug, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReindexReport {
    pub files: usize,
    pub indexed: usize,
    pub unchanged: usize,
    pub removed: usize,
    pub embedded: usize,
    /// (relative path, why it was skipped)
    pub problems: Vec<(String, String)>,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "VaultStats")] // the TypeScript name (JSON does not carry it)
pub struct Stats {
    pub folder: String,
    pub entries: usize,
    pub by_kind: Vec<(String, usize)>,
    /// Vectors per model; only `model`'s are searched.
    pub vectors: Vec<(String, usize)>,
    pub model: Option<String>,
    /// Why semantic search is off, when it is.
    pub semantic_off: Option<String>,
    /// Vectors in memory, and the bytes they take.
    pub cached_vectors: usize,
    pub cache_bytes: usize,
    pub problems: Vec<(String, String)>,
}

/// One search result.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Hit {
    pub id: String,
    pub path: String,
    pub title: String,
    pub kind: Kind,
    pub scope: String,
    pub tags: Vec<String>,
    /// Part of the text around the match, matches in **bold**.
    pub snippet: String,
    /// Fused score (reciprocal rank fusion); compare within one search only.
    pub score: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub word_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meaning_rank: Option<usize>,
    /// Cosine similarity to the query (e5 scores cluster around 0.75–0.9: rank, don't threshold).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f32>,
    #[serde(default, skip_serializing_if = "Source::is_empty")]
    pub source: Source,
    pub updated: String,
}

/// Which rankings a search uses; hybrid unless asked (the relevance test compares all three).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Hybrid,
    Words,
    Meaning,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct SearchResult {
    pub hits: Vec<Hit>,
    pub mode: Mode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One entry's place in each ranking, and its fused score.
#[derive(Default)]
struct Fused {
    score: f32,
    word_rank: Option<usize>,
    meaning_rank: Option<usize>,
    similarity: Option<f32>,
}

/// The rows nearest in meaning, with their similarity, best first.
type Nearest = Result<Vec<(i64, f32)>, String>;

/// Reciprocal-rank fusion of the word and meaning rankings: the best `k` rows. A row found by
/// meaning alone must come close to the best similarity.
fn fuse(word_rows: &[i64], meaning: &[(i64, f32)], k: usize) -> Vec<(i64, Fused)> {
    let mut fused: HashMap<i64, Fused> = HashMap::new();
    for (rank, row) in word_rows.iter().enumerate() {
        let slot = fused.entry(*row).or_default();
        slot.score += 1.0 / (RRF_K + rank as f32 + 1.0);
        slot.word_rank = Some(rank + 1);
    }
    for (rank, (row, sim)) in meaning.iter().enumerate() {
        let slot = fused.entry(*row).or_default();
        slot.score += 1.0 / (RRF_K + rank as f32 + 1.0);
        slot.meaning_rank = Some(rank + 1);
        slot.similarity = Some(*sim);
    }
    let best = meaning.first().map(|(_, sim)| *sim).unwrap_or(f32::MIN);
    let mut ranked: Vec<(i64, Fused)> = fused
        .into_iter()
        .filter(|(_, f)| {
            f.word_rank.is_some() || f.similarity.is_some_and(|s| s >= best - MEANING_MARGIN)
        })
        .collect();
    ranked.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.cmp(&b.0)));
    ranked.truncate(k);
    ranked
}

/// A new entry.
#[derive(Clone, Debug, Default)]
pub struct NewEntry {
    pub title: String,
    pub body: String,
    pub kind: Option<Kind>,
    pub scope: Option<String>,
    pub tags: Vec<String>,
    pub source: Source,
}

/// Changes to an entry; None leaves a field as it is.
#[derive(Clone, Debug, Default)]
pub struct Changes {
    pub title: Option<String>,
    pub body: Option<String>,
    pub append: Option<String>,
    pub kind: Option<Kind>,
    pub scope: Option<String>,
    pub tags: Option<Vec<String>>,
}

pub struct Vault {
    root: PathBuf,
    db: Db,
    /// The model in use, or why semantic search is off.
    space: RwLock<Result<Arc<Space>, String>>,
    cache: Arc<RwLock<VectorCache>>,
    progress: tokio::sync::watch::Sender<Progress>,
    /// One re-index or background embedding at a time.
    indexing: tokio::sync::Mutex<()>,
}

/// A model and its language centring: all vectors of one space are comparable, and no vector
/// of another space is ever compared with them.
struct Space {
    embedder: Arc<dyn Embedder>,
    /// Read from the store, or computed (which embeds sample texts), at the first embedding:
    /// choosing a model costs nothing until it is used (an empty vault never loads it).
    centroids: OnceLock<Result<language::Centroids, String>>,
    db: Db,
    /// The model id plus the centring version: what stored vectors are tagged with.
    key: String,
}

impl Space {
    fn centroids(&self) -> Result<&language::Centroids, String> {
        self.centroids
            .get_or_init(|| {
                let stored = index::centroids(&self.db.lock().unwrap(), &self.key)
                    .map_err(db_err)?
                    .and_then(|b| language::Centroids::from_blob(&b, self.embedder.dim()));
                if let Some(c) = stored {
                    return Ok(c);
                }
                let c = language::Centroids::compute(self.embedder.as_ref())?;
                index::set_centroids(&self.db.lock().unwrap(), &self.key, &c.to_blob())
                    .map_err(db_err)?;
                Ok(c)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Blocking: centred, normalized vectors of `texts`.
    fn embed(&self, texts: &[String], role: Role) -> Result<Vec<Vec<f32>>, String> {
        let centroids = self.centroids()?;
        let raw = self.embedder.embed(texts, role)?;
        Ok(texts
            .iter()
            .zip(raw)
            .map(|(t, v)| centroids.center(t, &v))
            .collect())
    }

    /// The same, off the runtime's threads.
    async fn embed_off_thread(
        self: &Arc<Self>,
        texts: Vec<String>,
        role: Role,
    ) -> Result<Vec<Vec<f32>>, String> {
        let space = self.clone();
        tokio::task::spawn_blocking(move || space.embed(&texts, role))
            .await
            .map_err(|e| format!("embedding task: {e}"))?
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn db_err(e: rusqlite::Error) -> String {
    format!("vault index: {e}")
}

pub fn check_scope(scope: &str) -> Result<(), String> {
    let ok = scope == "global"
        || ["workspace:", "project:"].iter().any(|p| {
            scope
                .strip_prefix(p)
                .is_some_and(|rest| !rest.trim().is_empty())
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "scope {scope:?} is not `global`, `workspace:<path>` or `project:<name>`"
        ))
    }
}

/// Inside a dot folder (`.obsidian`, `.trash`, `.git`), or a dot file.
pub(crate) fn is_hidden(rel: &str) -> bool {
    rel.split('/').any(|part| part.starts_with('.'))
}

/// Markdown outside dot folders is the vault's content.
fn is_content(rel: &str) -> bool {
    rel.ends_with(".md") && !is_hidden(rel)
}

fn stamp_of(meta: &std::fs::Metadata) -> FileStamp {
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    FileStamp {
        mtime_ns,
        size: meta.len() as i64,
    }
}

/// A parsed file ready to index.
struct Parsed {
    entry: Entry,
    stamp: FileStamp,
    hash: String,
}

impl Vault {
    /// Opens the vault at `root` (created if missing) with its index in `store`. Semantic search
    /// stays off until [`Vault::set_embedder`].
    pub fn open(store: &Store, root: PathBuf) -> Result<Arc<Vault>, String> {
        std::fs::create_dir_all(&root)
            .map_err(|e| format!("cannot create the vault folder {}: {e}", root.display()))?;
        let root = root
            .canonicalize()
            .map_err(|e| format!("{}: {e}", root.display()))?;
        // Half-written files of a writer killed mid-write (its own folder may be outside the data dir).
        cowork_store::clean_temp_files(&root);
        let mut conn = store.connect().map_err(|e| e.to_string())?;
        index::backfill_grams(&mut conn)
            .map_err(|e| format!("vault: filling the word index: {e}"))?;
        let db = Arc::new(Mutex::new(conn));
        Ok(Arc::new(Vault {
            root,
            db,
            space: RwLock::new(Err("no embedding model is configured".into())),
            cache: Arc::new(RwLock::new(VectorCache::new("", 0))),
            progress: tokio::sync::watch::channel(Progress::default()).0,
            indexing: tokio::sync::Mutex::new(()),
        }))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Uses `embedder` from now on. Its vectors are read into the cache when first needed;
    /// entries it has no vector for are searched by words only until [`Vault::embed_missing`]
    /// has run. Cheap: the model's language centroids are read or computed (then stored) at its
    /// first embedding.
    pub fn set_embedder(&self, embedder: Result<Arc<dyn Embedder>, String>) {
        let space = embedder.and_then(|e| self.space_for(e)).map(Arc::new);
        if let Err(why) = &space {
            tracing::warn!("vault: semantic search is off: {why}");
        }
        *self.cache.write().unwrap() = VectorCache::new("", 0);
        *self.space.write().unwrap() = space;
    }

    fn space_for(&self, embedder: Arc<dyn Embedder>) -> Result<Space, String> {
        let key = format!("{}#centred-v{}", embedder.model(), language::VERSION);
        Ok(Space {
            embedder,
            centroids: OnceLock::new(),
            db: self.db.clone(),
            key,
        })
    }

    fn space(&self) -> Option<Arc<Space>> {
        self.space.read().unwrap().as_ref().ok().cloned()
    }

    pub fn progress(&self) -> tokio::sync::watch::Receiver<Progress> {
        self.progress.subscribe()
    }

    fn report(&self, phase: Phase, done: usize, total: usize) {
        self.progress.send_replace(Progress { phase, done, total });
    }

    fn rel(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.root).ok()?;
        Some(
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
        )
    }

    fn abs(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Reads and parses one file; Err is the reason it cannot be indexed.
    fn parse_file(&self, rel: &str) -> Result<Option<Parsed>, String> {
        let path = self.abs(rel);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read: {e}")),
        };
        let meta = std::fs::metadata(&path).map_err(|e| format!("cannot stat: {e}"))?;
        let doc = Document::parse(&bytes).map_err(|e| e.to_string())?;
        let stem = Path::new(rel)
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let modified = chrono::DateTime::<chrono::Utc>::from(
            meta.modified().unwrap_or(std::time::SystemTime::now()),
        )
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let front = &doc.front;
        let entry = Entry {
            id: front
                .id
                .clone()
                .filter(|i| !i.trim().is_empty())
                .unwrap_or_else(|| format!("path:{rel}")),
            path: rel.to_string(),
            kind: front
                .kind
                .as_deref()
                .and_then(Kind::parse)
                .unwrap_or(Kind::Note),
            scope: front
                .scope
                .clone()
                .filter(|s| check_scope(s).is_ok())
                .unwrap_or_else(|| "global".into()),
            title: doc.title(&stem),
            tags: doc.tags(),
            source: front.source.clone().unwrap_or_default(),
            created: front.created.clone().unwrap_or_else(|| modified.clone()),
            updated: front.updated.clone().unwrap_or(modified),
            body: doc.body.trim().to_string(),
        };
        Ok(Some(Parsed {
            entry,
            stamp: stamp_of(&meta),
            hash: hex::encode(sha2::Sha256::digest(&bytes)),
        }))
    }

    /// What is embedded for an entry (the same text on every path, or vectors would differ).
    fn passage(title: &str, body: &str) -> String {
        let text = format!("{title}\n{body}");
        text.chars().take(EMBED_CHARS).collect()
    }

    /// Indexes parsed files in one transaction, with their vectors when `embed` and a model is set.
    async fn commit(&self, parsed: Vec<Parsed>, embed: bool) -> Result<(), String> {
        if parsed.is_empty() {
            return Ok(());
        }
        let space = if embed { self.space() } else { None };
        let vectors = match &space {
            Some(space) => match space
                .embed_off_thread(
                    parsed
                        .iter()
                        .map(|p| Self::passage(&p.entry.title, &p.entry.body))
                        .collect(),
                    Role::Passage,
                )
                .await
            {
                Ok(v) => Some(v),
                Err(err) => {
                    // Words still find them; the background pass retries the vectors.
                    tracing::warn!("vault: embedding failed, indexed by words only: {err}");
                    None
                }
            },
            None => None,
        };
        let model = space.as_ref().map(|s| s.key.clone());
        let rows = {
            let mut conn = self.db.lock().unwrap();
            let tx = conn.transaction().map_err(db_err)?;
            let mut rows = Vec::new();
            for (i, p) in parsed.iter().enumerate() {
                let vector = vectors
                    .as_ref()
                    .zip(model.as_deref())
                    .map(|(v, m)| (m, v[i].as_slice()));
                rows.push(index::upsert(&tx, &p.entry, p.stamp, &p.hash, vector).map_err(db_err)?);
            }
            tx.commit().map_err(db_err)?;
            rows
        };
        if let Some((vectors, model)) = vectors.zip(model) {
            // A cache not loaded yet reads these from the store when it is.
            let mut cache = self.cache.write().unwrap();
            if cache.model() == model {
                for (row, v) in rows.iter().zip(&vectors) {
                    cache.upsert(*row, v);
                }
            }
        } else {
            let mut cache = self.cache.write().unwrap();
            rows.iter().for_each(|r| cache.remove(*r));
        }
        Ok(())
    }

    /// Brings one file's index row in step with the disk (added, changed or gone).
    pub async fn index_path(&self, rel: &str) -> Result<(), String> {
        if !is_content(rel) {
            return Ok(());
        }
        self.index_path_now(rel).await?;
        self.db
            .lock()
            .unwrap()
            .execute("DELETE FROM vault_pending WHERE path = ?1", [rel])
            .map_err(db_err)?;
        Ok(())
    }

    async fn index_path_now(&self, rel: &str) -> Result<(), String> {
        match self.parse_file(rel) {
            Ok(None) => {
                let removed = index::remove_path(&self.db.lock().unwrap(), rel).map_err(db_err)?;
                if let Some(row) = removed {
                    self.cache.write().unwrap().remove(row);
                }
                Ok(())
            }
            Ok(Some(parsed)) => match self.unchanged(parsed)? {
                Some(parsed) => self.commit(vec![parsed], true).await,
                None => Ok(()),
            },
            Err(why) => {
                tracing::warn!(path = rel, "vault: skipped: {why}");
                index::record_problem(&self.db.lock().unwrap(), rel, &why).map_err(db_err)
            }
        }
    }

    /// None when the file's bytes are what is indexed already (its stamp is brought up to
    /// date): saves re-embedding files that were only touched, or our own writes seen again.
    fn unchanged(&self, parsed: Parsed) -> Result<Option<Parsed>, String> {
        let conn = self.db.lock().unwrap();
        if index::hash_of(&conn, &parsed.entry.path)
            .map_err(db_err)?
            .is_some_and(|h| h == parsed.hash)
        {
            index::touch(&conn, &parsed.entry.path, parsed.stamp).map_err(db_err)?;
            return Ok(None);
        }
        Ok(Some(parsed))
    }

    fn walk(&self) -> Vec<(String, FileStamp)> {
        let mut out: Vec<(String, FileStamp)> = files_under(&self.root)
            .into_iter()
            .filter_map(|(path, meta)| {
                self.rel(&path)
                    .filter(|r| is_content(r))
                    .map(|rel| (rel, stamp_of(&meta)))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Makes the index match the folder. Resumable: each batch is committed, and unchanged
    /// files (same mtime and size) are skipped, so a run after a crash continues where the
    /// last one stopped. Then embeds entries that lack a vector of the current model.
    pub async fn reindex(&self) -> Result<ReindexReport, String> {
        let _one = self.indexing.lock().await;
        self.report(Phase::Scanning, 0, 0);
        let files = self.walk();
        let known = index::stamps(&self.db.lock().unwrap()).map_err(db_err)?;
        let mut report = ReindexReport {
            files: files.len(),
            ..Default::default()
        };
        let changed: Vec<&String> = files
            .iter()
            .filter(|(rel, stamp)| known.get(rel) != Some(stamp))
            .map(|(rel, _)| rel)
            .collect();
        report.unchanged = files.len() - changed.len();
        let on_disk: HashSet<&String> = files.iter().map(|(rel, _)| rel).collect();
        for gone in known.keys().filter(|k| !on_disk.contains(k)) {
            if let Some(row) = index::remove_path(&self.db.lock().unwrap(), gone).map_err(db_err)? {
                self.cache.write().unwrap().remove(row);
                report.removed += 1;
            }
        }
        for (n, batch) in changed.chunks(BATCH).enumerate() {
            self.report(Phase::Indexing, n * BATCH, changed.len());
            let mut parsed = Vec::new();
            for rel in batch {
                match self
                    .parse_file(rel)
                    .and_then(|p| p.map(|p| self.unchanged(p)).transpose())
                {
                    Ok(Some(Some(p))) => parsed.push(p),
                    Ok(Some(None)) => report.unchanged += 1,
                    Ok(None) => {}
                    Err(why) => {
                        tracing::warn!(path = %rel, "vault: skipped: {why}");
                        index::record_problem(&self.db.lock().unwrap(), rel, &why)
                            .map_err(db_err)?;
                    }
                }
            }
            report.indexed += parsed.len();
            // Words first: a large folder is searchable by words within seconds; the vectors
            // follow in the pass below (about 20 notes/s on two cores), with progress.
            self.commit(parsed, false).await?;
        }
        report.problems = index::problems(&self.db.lock().unwrap()).map_err(db_err)?;
        report.embedded = self.embed_missing_locked().await?;
        self.report(Phase::Idle, 0, 0);
        Ok(report)
    }

    /// Embeds, in the background, entries without a vector of the current model (new entries
    /// indexed while the model was missing, or all of them after a switch of model).
    pub async fn embed_missing(&self) -> Result<usize, String> {
        let _one = self.indexing.lock().await;
        let done = self.embed_missing_locked().await;
        self.report(Phase::Idle, 0, 0);
        done
    }

    async fn embed_missing_locked(&self) -> Result<usize, String> {
        let Some(space) = self.space() else {
            return Ok(0);
        };
        let model = space.key.clone();
        let total =
            index::count_missing_vectors(&self.db.lock().unwrap(), &model).map_err(db_err)?;
        let mut done = 0;
        while done < total {
            self.report(Phase::Embedding, done, total);
            let batch = index::missing_vectors(&self.db.lock().unwrap(), &model, BATCH * 2)
                .map_err(db_err)?;
            if batch.is_empty() {
                break;
            }
            let texts = batch
                .iter()
                .map(|(_, title, body)| Self::passage(title, body))
                .collect();
            let vectors = space.embed_off_thread(texts, Role::Passage).await?;
            {
                let mut conn = self.db.lock().unwrap();
                let tx = conn.transaction().map_err(db_err)?;
                for ((row, ..), v) in batch.iter().zip(&vectors) {
                    index::set_vector(&tx, *row, &model, v).map_err(db_err)?;
                }
                tx.commit().map_err(db_err)?;
            }
            let mut cache = self.cache.write().unwrap();
            if cache.model() == model {
                for ((row, ..), v) in batch.iter().zip(&vectors) {
                    cache.upsert(*row, v);
                }
            }
            done += batch.len();
        }
        Ok(done)
    }

    /// Hybrid search: BM25 (trigram FTS) and vector similarity, fused by reciprocal rank. The
    /// query is embedded while the word search runs.
    pub async fn search(
        &self,
        query: &str,
        filter: &Filter,
        k: usize,
        mode: Mode,
    ) -> Result<SearchResult, String> {
        self.settle_pending().await;
        let k = k.clamp(1, 100);
        let depth = DEPTH.max(k * 4);
        let (space, mut note) = self.search_space(mode);
        // Embedding the query and scanning the vectors run on a blocking thread while BM25 runs here.
        let by_meaning = match space {
            Some(space) => Some(self.search_by_meaning(space, query, filter, depth)?),
            None => None,
        };
        let word_rows = if mode == Mode::Meaning {
            vec![]
        } else {
            index::bm25(&self.db.lock().unwrap(), query, filter, depth)?
        };
        let mut meaning: Vec<(i64, f32)> = vec![];
        if let Some(task) = by_meaning {
            match task.await.map_err(|e| e.to_string())? {
                Ok(found) => meaning = found,
                Err(e) => note = Some(format!("searched by words only: {e}")),
            }
        }
        let ranked = fuse(&word_rows, &meaning, k);
        let hits = self.hits(ranked, query)?;
        Ok(SearchResult { hits, mode, note })
    }

    /// The embedding space a search in `mode` uses, or the note saying why it searches by words
    /// only.
    fn search_space(&self, mode: Mode) -> (Option<Arc<Space>>, Option<String>) {
        match (mode, &*self.space.read().unwrap()) {
            (Mode::Words, _) => (None, None),
            (_, Ok(space)) => (Some(space.clone()), None),
            (_, Err(why)) => (
                None,
                Some(format!(
                    "searched by words only: semantic search is off ({why})"
                )),
            ),
        }
    }

    /// Starts the search by meaning on a blocking thread: the `depth` nearest entries the filter
    /// allows, with their similarity.
    fn search_by_meaning(
        &self,
        space: Arc<Space>,
        query: &str,
        filter: &Filter,
        depth: usize,
    ) -> Result<tokio::task::JoinHandle<Nearest>, String> {
        let allowed = index::allowed_rows(&self.db.lock().unwrap(), filter)?;
        let (query, cache, db) = (query.to_string(), self.cache.clone(), self.db.clone());
        Ok(tokio::task::spawn_blocking(move || -> Nearest {
            load_cache(&db, &cache, &space);
            let vector = space.embed(&[query], Role::Query)?;
            let cache = cache.read().unwrap();
            Ok(cache.nearest(&vector[0], depth, |row| {
                allowed.as_ref().is_none_or(|a| a.contains(&row))
            }))
        }))
    }

    /// The ranked rows as hits, each with a snippet around the query's words.
    fn hits(&self, ranked: Vec<(i64, Fused)>, query: &str) -> Result<Vec<Hit>, String> {
        let rows: Vec<i64> = ranked.iter().map(|(r, _)| *r).collect();
        let entries = index::entries_by_rows(&self.db.lock().unwrap(), &rows).map_err(db_err)?;
        let marks = highlight_terms(query);
        Ok(ranked
            .into_iter()
            .filter_map(|(row, fused)| {
                let e = entries.get(&row)?;
                Some(Hit {
                    id: e.id.clone(),
                    path: e.path.clone(),
                    title: e.title.clone(),
                    kind: e.kind,
                    scope: e.scope.clone(),
                    tags: e.tags.clone(),
                    snippet: snippet(&e.body, &marks, 200),
                    score: fused.score,
                    word_rank: fused.word_rank,
                    meaning_rank: fused.meaning_rank,
                    similarity: fused.similarity,
                    source: e.source.clone(),
                    updated: e.updated.clone(),
                })
            })
            .collect())
    }

    pub fn get(&self, id: &str) -> Result<Option<Entry>, String> {
        Ok(index::get(&self.db.lock().unwrap(), id)
            .map_err(db_err)?
            .map(|(_, e)| e))
    }

    pub fn recent(&self, filter: &Filter, limit: usize) -> Result<Vec<Entry>, String> {
        index::recent(&self.db.lock().unwrap(), filter, limit.clamp(1, 500))
    }

    pub fn stats(&self) -> Result<Stats, String> {
        if let Some(space) = self.space() {
            load_cache(&self.db, &self.cache, &space);
        }
        let conn = self.db.lock().unwrap();
        let s = index::stats(&conn).map_err(db_err)?;
        let cache = self.cache.read().unwrap();
        Ok(Stats {
            folder: self.root.display().to_string(),
            entries: s.entries,
            by_kind: s.by_kind,
            vectors: s.vectors,
            model: self.space().map(|s| s.key.clone()),
            semantic_off: self.space.read().unwrap().as_ref().err().cloned(),
            cached_vectors: cache.len(),
            cache_bytes: cache.memory_bytes(),
            problems: index::problems(&conn).map_err(db_err)?,
        })
    }

    /// A free file name in the kind's folder: `<date>-<slug>.md`, `-2`, `-3`… if taken.
    fn new_path(&self, kind: Kind, title: &str) -> String {
        let base = format!(
            "{}/{}-{}",
            kind.folder(),
            chrono::Utc::now().format("%Y-%m-%d"),
            entry::slug(title)
        );
        (1..)
            .map(|n| {
                if n == 1 {
                    format!("{base}.md")
                } else {
                    format!("{base}-{n}.md")
                }
            })
            .find(|rel| !self.abs(rel).exists())
            .expect("unbounded")
    }

    /// Writes an entry's file. The path is journaled first (`vault_pending`) and cleared once
    /// indexed: a kill -9 between the two is caught up by [`Vault::settle_pending`].
    fn write(&self, rel: &str, doc: &Document) -> Result<(), String> {
        let path = self.abs(rel);
        self.db
            .lock()
            .unwrap()
            .execute(
                "INSERT OR REPLACE INTO vault_pending (path, since) VALUES (?1, ?2)",
                rusqlite::params![rel, now()],
            )
            .map_err(db_err)?;
        cowork_store::write_atomically(&path, doc.render().as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Indexes files whose write was journaled but never indexed (the process was killed in
    /// between). Returns how many. Cheap when there are none: one query.
    pub async fn settle_pending(&self) -> usize {
        let pending: Vec<String> = {
            let conn = self.db.lock().unwrap();
            let Ok(mut stmt) = conn.prepare("SELECT path FROM vault_pending") else {
                return 0;
            };
            stmt.query_map([], |r| r.get(0))
                .map(|rows| rows.filter_map(Result::ok).collect())
                .unwrap_or_default()
        };
        let mut settled = 0;
        for rel in pending {
            match self.index_path(&rel).await {
                Ok(()) => settled += 1,
                Err(e) => tracing::warn!(
                    path = rel,
                    "vault: a journaled write could not be indexed: {e}"
                ),
            }
        }
        settled
    }

    /// Writes a new entry's file and indexes it.
    pub async fn save(&self, new: NewEntry) -> Result<Entry, String> {
        let title = new.title.trim();
        let title = if title.is_empty() {
            new.body
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("")
                .chars()
                .take(80)
                .collect::<String>()
        } else {
            title.to_string()
        };
        if title.is_empty() {
            return Err("the entry is empty: give it a title or some text".into());
        }
        if let Some(scope) = &new.scope {
            check_scope(scope)?;
        }
        let kind = new.kind.unwrap_or(Kind::Note);
        let stamp = now();
        let doc = Document {
            front: FrontMatter {
                id: Some(uuid::Uuid::now_v7().to_string()),
                title: Some(title.clone()),
                kind: Some(kind.as_str().into()),
                scope: Some(new.scope.unwrap_or_else(|| "global".into())),
                tags: new
                    .tags
                    .iter()
                    .map(|t| entry::normalize_tag(t))
                    .filter(|t| !t.is_empty())
                    .collect(),
                source: (!new.source.is_empty()).then_some(new.source),
                created: Some(stamp.clone()),
                updated: Some(stamp),
                rest: Default::default(),
            },
            body: format!("{}\n", new.body.trim_end()),
        };
        let rel = self.new_path(kind, &title);
        self.write(&rel, &doc)?;
        self.index_path(&rel).await?;
        self.get(&rel)?.ok_or_else(|| {
            format!("{rel} was written but could not be indexed: see `cowork vault stats`")
        })
    }

    /// Applies `changes` to the file as it is on disk now (an edit made in Obsidian meanwhile is
    /// kept), then re-indexes it.
    pub async fn update(&self, id: &str, changes: Changes) -> Result<Entry, String> {
        let entry = self
            .get(id)?
            .ok_or_else(|| format!("no vault entry {id:?} — search_vault gives the ids"))?;
        let bytes =
            std::fs::read(self.abs(&entry.path)).map_err(|e| format!("{}: {e}", entry.path))?;
        let mut doc = Document::parse(&bytes).map_err(|e| format!("{}: {e}", entry.path))?;
        if let Some(scope) = &changes.scope {
            check_scope(scope)?;
            doc.front.scope = Some(scope.clone());
        }
        if let Some(title) = changes.title.filter(|t| !t.trim().is_empty()) {
            doc.front.title = Some(title.trim().to_string());
        }
        if let Some(body) = changes.body {
            doc.body = format!("{}\n", body.trim_end());
        }
        if let Some(more) = changes.append {
            doc.body = format!("{}\n\n{}\n", doc.body.trim_end(), more.trim_end());
        }
        if let Some(kind) = changes.kind {
            doc.front.kind = Some(kind.as_str().into());
        }
        if let Some(tags) = changes.tags {
            doc.front.tags = tags
                .iter()
                .map(|t| entry::normalize_tag(t))
                .filter(|t| !t.is_empty())
                .collect();
        }
        // Files made outside the app get an id now, so the entry keeps it across renames.
        doc.front
            .id
            .get_or_insert_with(|| uuid::Uuid::now_v7().to_string());
        doc.front.created.get_or_insert(entry.created.clone());
        doc.front.updated = Some(now());
        self.write(&entry.path, &doc)?;
        self.index_path(&entry.path).await?;
        self.get(&entry.path)?
            .ok_or_else(|| format!("{} could not be re-indexed", entry.path))
    }

    /// Moves the entry's file to `.trash/` (Obsidian's trash folder too); `restore` brings it back.
    pub async fn trash(&self, id: &str) -> Result<(Entry, String), String> {
        let entry = self
            .get(id)?
            .ok_or_else(|| format!("no vault entry {id:?} — search_vault gives the ids"))?;
        let (from, to) = (self.abs(&entry.path), self.trash_path(&entry.path));
        std::fs::create_dir_all(to.parent().unwrap_or(&self.root)).map_err(|e| e.to_string())?;
        std::fs::rename(&from, &to)
            .map_err(|e| format!("cannot move {} to the trash: {e}", entry.path))?;
        self.index_path(&entry.path).await?;
        Ok((entry, self.rel(&to).unwrap_or_default()))
    }

    fn trash_path(&self, rel: &str) -> PathBuf {
        let base = self.root.join(".trash").join(rel);
        let stem = base.with_extension("");
        (1..)
            .map(|n| {
                if n == 1 {
                    base.clone()
                } else {
                    PathBuf::from(format!("{}-{n}.md", stem.display()))
                }
            })
            .find(|p| !p.exists())
            .expect("unbounded")
    }

    /// Brings a trashed entry back to where it was (or beside it, if that name is taken now).
    pub async fn restore(&self, id_or_trash_path: &str) -> Result<Entry, String> {
        let trash = self.root.join(".trash");
        let found = files_under(&trash).into_iter().find_map(|(path, _)| {
            let rel_in_trash = path
                .strip_prefix(&trash)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            let id = std::fs::read(&path)
                .ok()
                .and_then(|b| Document::parse(&b).ok())
                .and_then(|d| d.front.id);
            let matches = id.as_deref() == Some(id_or_trash_path)
                || rel_in_trash == id_or_trash_path
                || format!(".trash/{rel_in_trash}") == id_or_trash_path;
            matches.then_some((path, rel_in_trash))
        });
        let (from, rel) = found
            .ok_or_else(|| format!("nothing in the vault's trash matches {id_or_trash_path:?}"))?;
        let rel = if self.abs(&rel).exists() {
            format!("{}-restored.md", rel.trim_end_matches(".md"))
        } else {
            rel
        };
        let to = self.abs(&rel);
        std::fs::create_dir_all(to.parent().unwrap_or(&self.root)).map_err(|e| e.to_string())?;
        std::fs::rename(&from, &to).map_err(|e| format!("cannot restore {rel}: {e}"))?;
        self.index_path(&rel).await?;
        self.get(&rel)?.ok_or_else(|| {
            format!("{rel} was restored but could not be indexed: see `cowork vault stats`")
        })
    }
}

/// The vector cache of `space`, read from the store the first time it is needed: a command
/// that never searches never pays for it (0.4 s at 100k entries). Loaded under the write lock,
/// so no vector committed meanwhile is missed.
fn load_cache(db: &Db, cache: &RwLock<VectorCache>, space: &Space) {
    if cache.read().unwrap().model() == space.key {
        return;
    }
    let mut slot = cache.write().unwrap();
    if slot.model() == space.key {
        return;
    }
    let mut loaded = VectorCache::new(&space.key, space.embedder.dim());
    if let Err(e) = index::vectors(&db.lock().unwrap(), &space.key, |row, v| {
        loaded.upsert(row, &v)
    }) {
        tracing::warn!("vault: cannot load vectors: {e}");
    }
    loaded.shrink();
    *slot = loaded;
}

/// Files below `dir`, not entering or listing dot entries (`.obsidian`, `.trash`, `.git`).
fn files_under(dir: &Path) -> Vec<(PathBuf, std::fs::Metadata)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for item in read.flatten() {
            if item.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(meta) = item.metadata() else { continue };
            if meta.is_dir() {
                stack.push(item.path());
            } else {
                out.push((item.path(), meta));
            }
        }
    }
    out
}

/// Words of the query worth marking in a snippet: terms of ≥ 2 characters but the little words
/// the search itself skips ("the", "what"), and CJK bigrams.
fn highlight_terms(query: &str) -> Vec<String> {
    let mut marks: Vec<String> = index::terms(query)
        .into_iter()
        .filter(|t| t.chars().count() >= 3 && !index::STOPWORDS.contains(&t.as_str()))
        .collect();
    // Words of two letters ("AI", "Go") are marked only when the query has nothing longer:
    // beside real words they are mostly "is", "of", "in".
    if marks.is_empty() {
        marks.extend(
            index::like_terms(query)
                .into_iter()
                .filter(|t| t.chars().count() >= 2),
        );
    }
    // Chinese words of two characters: the bigrams the word search matched.
    marks.extend(
        index::cjk_grams(query)
            .split(' ')
            .filter(|g| !g.is_empty())
            .map(String::from),
    );
    marks.sort_by_key(|t| std::cmp::Reverse(t.chars().count()));
    marks.dedup();
    marks
}

/// Where `mark` first occurs in `haystack[from..to]` as a word would: Latin marks only where a
/// word starts (not "pass" inside "bypass"), and a mark of two letters only as a whole word ("is"
/// not inside "this"); Chinese has no spaces, so its marks match anywhere.
fn find_mark(haystack: &str, from: usize, to: usize, mark: &str) -> Option<usize> {
    let cjk = mark.chars().all(crate::language::is_cjk);
    let word_char =
        |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() && !crate::language::is_cjk(c));
    haystack[from..to]
        .match_indices(mark)
        .map(|(p, _)| from + p)
        .find(|&p| {
            let before = haystack[..p].chars().next_back();
            let after = haystack[p + mark.len()..].chars().next();
            cjk || (!word_char(before) && (mark.chars().count() >= 3 || !word_char(after)))
        })
}

/// About `width` characters of `body` around the first match, matches in **bold**. Hand-written:
/// FTS5's snippet() only covers word matches, and vector hits need one too.
fn snippet(body: &str, marks: &[String], width: usize) -> String {
    let flat: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = flat.to_lowercase();
    // Lower-casing can change byte lengths outside ASCII; then match on the text as it is.
    let haystack = if lower.len() == flat.len() {
        &lower
    } else {
        &flat
    };
    let first = marks
        .iter()
        .filter_map(|m| find_mark(haystack, 0, haystack.len(), m))
        .min();
    let chars: Vec<(usize, char)> = flat.char_indices().collect();
    let start_char = first.map_or(0, |byte| {
        chars
            .iter()
            .position(|(b, _)| *b == byte)
            .unwrap_or(0)
            .saturating_sub(width / 4)
    });
    let end_char = (start_char + width).min(chars.len());
    let byte = |c: usize| chars.get(c).map_or(flat.len(), |(b, _)| *b);
    let (from, to) = (byte(start_char), byte(end_char));
    let mut out = String::new();
    if start_char > 0 {
        out.push('…');
    }
    let mut at = from;
    while at < to {
        let next = marks
            .iter()
            .filter_map(|m| find_mark(haystack, at, to, m).map(|p| (p, m.len())))
            .min_by_key(|(p, len)| (*p, std::cmp::Reverse(*len)));
        match next {
            Some((p, len)) if p + len <= to => {
                out.push_str(&flat[at..p]);
                out.push_str("**");
                out.push_str(&flat[p..p + len]);
                out.push_str("**");
                at = p + len;
            }
            _ => {
                out.push_str(&flat[at..to]);
                break;
            }
        }
    }
    if end_char < chars.len() {
        out.push('…');
    }
    out
}

/// The vault's tools (`tools.rs`).
#[derive(Clone)]
pub struct VaultTools {
    vault: Arc<Vault>,
}

impl VaultTools {
    pub fn new(vault: Arc<Vault>) -> VaultTools {
        VaultTools { vault }
    }
}

impl ToolProvider for VaultTools {
    fn name(&self) -> &str {
        "vault"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.vault_tools()
    }
}

pub use watch::watch;

#[cfg(test)]
mod tests {
    /// A process killed between writing a note and indexing it: the journal lets the next
    /// search find it, and a killed writer's temp file is gone at the next open.
    #[tokio::test]
    async fn a_write_killed_before_indexing_is_found_at_the_next_search() {
        let tmp = tempfile::tempdir().unwrap();
        let store = cowork_store::Store::open(
            cowork_store::DataDir::at(tmp.path().join("data")),
            &[&crate::SCHEMA],
        )
        .unwrap();
        let vault = super::Vault::open(&store, tmp.path().join("notes")).unwrap();
        // What `write` leaves when the process dies before `index_path`.
        let doc = super::Document::parse(
            b"---\ntitle: Passport\n---\nThe passport is in the blue folder.\n",
        )
        .unwrap();
        vault.write("notes/passport.md", &doc).unwrap();
        std::fs::write(
            vault.root().join("notes/.x.md.999999999.cowork-tmp"),
            "half",
        )
        .unwrap();
        drop(vault);
        let vault = super::Vault::open(&store, tmp.path().join("notes")).unwrap();
        assert!(
            !vault
                .root()
                .join("notes/.x.md.999999999.cowork-tmp")
                .exists()
        );
        let found = vault
            .search("passport", &Default::default(), 5, super::Mode::Words)
            .await
            .unwrap();
        assert_eq!(found.hits.len(), 1, "the journaled write was indexed");
        assert_eq!(vault.settle_pending().await, 0, "nothing is left pending");
    }

    #[test]
    fn snippets_mark_matches_in_any_script() {
        let s = super::snippet(
            "My passport number is in the blue folder.",
            &["passport".into(), "blue".into()],
            200,
        );
        assert_eq!(s, "My **passport** number is in the **blue** folder.");
        let s = super::snippet(
            "护照号码在蓝色文件夹里。",
            &super::highlight_terms("护照在哪里"),
            200,
        );
        assert_eq!(s, "**护照**号码在蓝色文件夹里。");
        // The little words are not marked, nor a word inside another.
        let s = super::snippet(
            "Where is it? My passport is in the bypass, with the other papers.",
            &super::highlight_terms("where is the pass passport"),
            200,
        );
        assert_eq!(
            s,
            "Where is it? My **passport** is in the bypass, with the other papers."
        );
        let s = super::snippet(
            "This AI said: ai tools are fair.",
            &super::highlight_terms("AI"),
            200,
        );
        assert_eq!(s, "This **AI** said: **ai** tools are fair.");
        let long = format!("{} needle {}", "a ".repeat(300), "b ".repeat(300));
        let s = super::snippet(&long, &["needle".into()], 40);
        assert!(
            s.starts_with('…') && s.ends_with('…') && s.contains("**needle**"),
            "{s}"
        );
    }
}
