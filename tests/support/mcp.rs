//! Shared by the MCP tests and benchmarks: where the real test servers live, a toolpack around
//! the SDK probe server, and a loopback stand-in for GitHub's API (commits + tarball).

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// `tests/mcp-servers`: npm and PyPI servers installed by tests/setup.sh, and the probe.
pub fn servers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-servers")
}

/// A toolpack folder `parent/pack-<name>` around the probe server; `cowork` becomes
/// `_meta["app.cowork"]`.
pub fn probe_pack(parent: &Path, name: &str, flags: &[&str], cowork: Value) -> PathBuf {
    let dir = parent.join(format!("pack-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut args = vec![servers().join("probe-server.mjs").display().to_string()];
    args.extend(flags.iter().map(|f| f.to_string()));
    let manifest = json!({
        "manifest_version": "0.3", "name": name, "version": "1.0.0", "description": "probe",
        "server": {"type": "node", "entry_point": "probe-server.mjs", "mcp_config": {"command": "node", "args": args}},
        "_meta": {"app.cowork": cowork},
    });
    std::fs::write(dir.join("manifest.json"), serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    dir
}

/// A tar.gz like GitHub's: one top folder `owner-repo-<sha7>/` holding the pack.
pub fn tarball(pack: &Path, sha: &str) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    builder.append_dir_all(format!("owner-repo-{}", &sha[..7]), pack).unwrap();
    builder.into_inner().unwrap().finish().unwrap()
}

/// GitHub's two endpoints an install uses, for `owner/repo`, on 127.0.0.1 in its own thread:
/// `GET /repos/owner/repo/commits/{ref}` (the sha) and `GET /repos/owner/repo/tarball/{sha}`.
pub struct FakeGithub {
    pub base: String,
    pub sha: &'static str,
    tarball: Arc<Mutex<Vec<u8>>>,
}

impl FakeGithub {
    pub const SHA: &'static str = "0123456789abcdef0123456789abcdef01234567";

    pub fn start(pack: &Path) -> FakeGithub {
        use axum::{Router, extract::State, routing::get};
        let tarball = Arc::new(Mutex::new(self::tarball(pack, Self::SHA)));
        async fn commit() -> &'static str {
            FakeGithub::SHA
        }
        async fn tar(State(bytes): State<Arc<Mutex<Vec<u8>>>>) -> Vec<u8> {
            bytes.lock().unwrap().clone()
        }
        let app = Router::new()
            .route("/repos/owner/repo/commits/{r}", get(commit))
            .route("/repos/owner/repo/tarball/{r}", get(tar))
            .with_state(tarball.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        FakeGithub { base, sha: Self::SHA, tarball }
    }

    /// Serve other bytes for the same commit (tampering upstream).
    pub fn serve(&self, pack: &Path) {
        *self.tarball.lock().unwrap() = tarball(pack, self.sha);
    }
}
