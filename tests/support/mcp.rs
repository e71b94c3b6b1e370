//! Shared by the MCP tests and benchmarks: where the real test servers live, a toolpack around
//! the SDK probe server, and a loopback stand-in for GitHub's API (commits + tarball).

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// `tests/mcp-servers`: npm and PyPI servers installed by tests/setup.sh, and the probe.
pub fn servers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-servers")
}

/// A toolpack folder `parent/pack-tasks` around `tests/bin/tasks_server.rs` (`server`: its
/// binary, `env!("CARGO_BIN_EXE_tasks-server")` in a test), copied in as an install leaves it
/// (its sandbox shows it nothing else): `report {seconds}` runs as an MCP task.
pub fn tasks_pack(parent: &Path, server: &Path) -> PathBuf {
    let pack = parent.join("pack-tasks");
    std::fs::create_dir_all(&pack).unwrap();
    std::fs::copy(server, pack.join("tasks-server")).unwrap();
    let manifest = json!({"manifest_version": "0.3", "name": "tasks", "version": "1.0.0",
        "server": {"type": "binary", "entry_point": "tasks-server",
            "mcp_config": {"command": "${__dirname}/tasks-server"}},
        "_meta": {"app.cowork": {"effects": {"report": []}}}});
    std::fs::write(pack.join("manifest.json"), manifest.to_string()).unwrap();
    pack
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

/// A `.mcpb` bundle of the pack folder (a zip of its manifest, as the probe needs nothing else).
pub fn mcpb(pack: &Path) -> Vec<u8> {
    let file = pack.with_extension("mcpb");
    let status = std::process::Command::new("python3")
        .args(["-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], 'w'); z.write(sys.argv[2], 'manifest.json'); z.close()"])
        .arg(&file)
        .arg(pack.join("manifest.json"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read(&file).unwrap()
}

/// The MCP Registry's read endpoints on 127.0.0.1, replaying `tests/data/registry/servers.json`
/// (entries in the registry's v0.1 shape; `search` filters by name as the registry does): the
/// list, one entry's latest version, and the bundles the entries name. `probe.mcpb` is served
/// as given and pinned by its sha256; `swapped.mcpb` is served under a pin it does not match.
pub struct FakeRegistry {
    pub base: String,
    down: Arc<std::sync::atomic::AtomicBool>,
}

#[derive(Clone)]
struct Replay {
    answer: Value,
    bundles: Arc<std::collections::HashMap<String, Vec<u8>>>,
    down: Arc<std::sync::atomic::AtomicBool>,
}

impl FakeRegistry {
    pub fn start(probe: Vec<u8>, swapped: Vec<u8>) -> FakeRegistry {
        use axum::{Router, routing::get};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let sha = {
            use sha2::Digest;
            hex::encode(sha2::Sha256::digest(&probe))
        };
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("data/registry/servers.json"),
        )
        .unwrap()
        .replace("{{BASE}}", &base)
        .replace("{{PROBE_SHA}}", &sha);
        let down = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let replay = Replay {
            answer: serde_json::from_str(&text).unwrap(),
            bundles: Arc::new(
                [
                    ("probe.mcpb".to_string(), probe),
                    ("swapped.mcpb".to_string(), swapped),
                ]
                .into(),
            ),
            down: down.clone(),
        };
        let app = Router::new()
            .route("/v0.1/servers", get(registry_list))
            .route(
                "/v0.1/servers/{name}/versions/{version}",
                get(registry_entry),
            )
            .route("/bundles/{file}", get(registry_bundle))
            .with_state(replay);
        FakeRegistry {
            base: crate::serve_on(listener, app),
            down,
        }
    }

    /// Down: every request answers 503, as an unreachable registry would fail.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, std::sync::atomic::Ordering::SeqCst);
    }
}

type Answered = Result<axum::Json<Value>, axum::http::StatusCode>;

fn up(replay: &Replay) -> Result<(), axum::http::StatusCode> {
    match replay.down.load(std::sync::atomic::Ordering::SeqCst) {
        true => Err(axum::http::StatusCode::SERVICE_UNAVAILABLE),
        false => Ok(()),
    }
}

async fn registry_list(
    axum::extract::State(replay): axum::extract::State<Replay>,
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> Answered {
    up(&replay)?;
    let mut answer = replay.answer.clone();
    if let Some(words) = query.get("search") {
        let servers = answer["servers"].as_array_mut().unwrap();
        servers.retain(|s| {
            s["server"]["name"]
                .as_str()
                .unwrap()
                .contains(words.as_str())
        });
        answer["metadata"] = json!({"count": servers.len()});
    }
    Ok(axum::Json(answer))
}

async fn registry_entry(
    axum::extract::State(replay): axum::extract::State<Replay>,
    axum::extract::Path((name, _version)): axum::extract::Path<(String, String)>,
) -> Answered {
    up(&replay)?;
    replay.answer["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["server"]["name"] == name.as_str())
        .map(|s| axum::Json(s.clone()))
        .ok_or(axum::http::StatusCode::NOT_FOUND)
}

async fn registry_bundle(
    axum::extract::State(replay): axum::extract::State<Replay>,
    axum::extract::Path(file): axum::extract::Path<String>,
) -> Result<Vec<u8>, axum::http::StatusCode> {
    up(&replay)?;
    replay
        .bundles
        .get(&file)
        .cloned()
        .ok_or(axum::http::StatusCode::NOT_FOUND)
}
