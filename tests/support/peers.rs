//! Real servers on loopback, started per test from `tests/peers/.venv` (installed by
//! tests/setup.sh): Radicale (CalDAV). Each lives in its own temp dir and dies with its handle.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/.venv/bin")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits (bounded) until something accepts on the port.
pub fn wait_for_port(port: u16, child: &mut Child, what: &str, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited ({status}): {}", std::fs::read_to_string(log).unwrap_or_default());
        }
        assert!(Instant::now() < deadline, "{what} did not listen on {port} within 20 s: {}", std::fs::read_to_string(log).unwrap_or_default());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A Radicale CalDAV server with plain-text htpasswd users.
pub struct Radicale {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Radicale {
    pub fn start(users: &[(&str, &str)]) -> Radicale {
        let bin = peers_dir().join("radicale");
        assert!(bin.exists(), "{} is missing: run tests/setup.sh", bin.display());
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let users_file = dir.path().join("users");
        std::fs::write(&users_file, users.iter().map(|(u, p)| format!("{u}:{p}\n")).collect::<String>()).unwrap();
        let config = dir.path().join("config");
        std::fs::write(
            &config,
            format!(
                "[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = htpasswd\nhtpasswd_filename = {}\nhtpasswd_encryption = plain\n\
                 [storage]\nfilesystem_folder = {}\n[rights]\ntype = owner_only\n[logging]\nlevel = warning\n",
                users_file.display(),
                dir.path().join("collections").display()
            ),
        )
        .unwrap();
        let log = dir.path().join("log");
        let mut child = Command::new(bin)
            .args(["--config", config.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        wait_for_port(port, &mut child, "radicale", &log);
        Radicale { port, child, _dir: dir }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Radicale {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
