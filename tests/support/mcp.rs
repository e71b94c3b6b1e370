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
        "_meta": {"app.cowork": with_servers_readable(cowork)},
    });
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
    dir
}

/// The probe lives in `tests/mcp-servers` with its npm dependencies, outside the pack: its
/// sandbox must be granted reading them.
pub fn with_servers_readable(mut cowork: Value) -> Value {
    let dir = servers().display().to_string();
    match cowork["sandbox"]["read"].as_array_mut() {
        Some(read) => read.push(json!(dir)),
        None => cowork["sandbox"]["read"] = json!([dir]),
    }
    cowork
}

/// Copies `from` to `to` as hard links where it can (symlinks kept as they are): a pack's
/// dependencies placed in its folder the way an install leaves them, in milliseconds.
pub fn link_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if kind.is_dir() {
            link_tree(&src, &dst);
        } else if std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// A tar.gz like GitHub's: one top folder `owner-repo-<sha7>/` holding the pack.
pub fn tarball(pack: &Path, sha: &str) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    builder
        .append_dir_all(format!("owner-repo-{}", &sha[..7]), pack)
        .unwrap();
    builder.into_inner().unwrap().finish().unwrap()
}

/// GitHub's two endpoints an install uses, for `owner/repo`, on 127.0.0.1 in its own thread:
/// `GET /repos/owner/repo/commits/{ref}` (the sha) and `GET /repos/owner/repo/tarball/{sha}`.
pub struct FakeGithub {
    pub base: String,
    state: Arc<Mutex<(String, Vec<u8>)>>,
}

impl FakeGithub {
    pub const SHA: &'static str = "0123456789abcdef0123456789abcdef01234567";

    pub fn start(pack: &Path) -> FakeGithub {
        use axum::{Router, extract::State, routing::get};
        type Shared = Arc<Mutex<(String, Vec<u8>)>>;
        let state: Shared = Arc::new(Mutex::new((
            Self::SHA.to_string(),
            self::tarball(pack, Self::SHA),
        )));
        async fn commit(State(s): State<Shared>) -> String {
            s.lock().unwrap().0.clone()
        }
        async fn tar(State(s): State<Shared>) -> Vec<u8> {
            s.lock().unwrap().1.clone()
        }
        let app = Router::new()
            .route("/repos/owner/repo/commits/{r}", get(commit))
            .route("/repos/owner/repo/tarball/{r}", get(tar))
            .with_state(state.clone());
        let base = crate::serve(app);
        FakeGithub { base, state }
    }

    /// Serve other bytes for the same commit (tampering upstream).
    pub fn serve(&self, pack: &Path) {
        let mut state = self.state.lock().unwrap();
        state.1 = tarball(pack, &state.0);
    }

    /// A new commit on the ref, with this content (a real update).
    pub fn push(&self, pack: &Path, sha: &str) {
        *self.state.lock().unwrap() = (sha.to_string(), tarball(pack, sha));
    }
}

/// `cowork mcp serve --http` (the `cowork` at `bin`) for the data dir `home`, with `extra`
/// arguments: the process (killed when dropped), the URL and the token it announced.
pub async fn serve_http(
    bin: &Path,
    home: &Path,
    extra: &[&str],
) -> (tokio::process::Child, String, String) {
    use tokio::io::AsyncBufReadExt;
    let mut server = tokio::process::Command::new(bin)
        .args(["--json", "mcp", "serve", "--http"])
        .args(extra)
        .env("COWORK_HOME", home)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut line = String::new();
    let stdout = server.stdout.as_mut().unwrap();
    tokio::io::BufReader::new(stdout)
        .read_line(&mut line)
        .await
        .unwrap();
    let announced: Value = serde_json::from_str(&line).unwrap();
    let field = |k: &str| announced[k].as_str().unwrap().to_string();
    (server, field("url"), field("token"))
}

/// One JSON-RPC message to a Streamable HTTP endpoint with `headers` (and the session, once
/// there is one): the reply's status, the session it names, and its JSON-RPC message (read
/// from the event stream's data line, or the body).
pub async fn post(
    url: &str,
    headers: &[(&str, &str)],
    session: Option<&str>,
    body: Value,
) -> (u16, Option<String>, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let reply = request.send().await.unwrap();
    let status = reply.status().as_u16();
    let session = reply
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = reply.text().await.unwrap();
    let message = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .find_map(|d| serde_json::from_str(d).ok())
        .or_else(|| serde_json::from_str(&text).ok())
        .unwrap_or(Value::String(text));
    (status, session, message)
}
