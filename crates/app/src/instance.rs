//! One window per data dir: a second launch hands its arguments (a `cowork://` link, a `.mcpb`
//! file) to the window already running and exits.
//!
//! Hand-written on a Unix socket rather than tauri-plugin-single-instance: the plugin keys the
//! instance on the app's identifier over D-Bus, so two data dirs (a second profile, tests running
//! side by side) could not each have their window, and a machine without a session bus would get
//! none of it. The socket is named after the data dir and lives in the runtime dir (private to
//! the user).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What starting the window found.
pub enum Instance {
    /// This process is the window: arguments later launches send arrive on the listener.
    First(Arrivals),
    /// A window was already running and took the arguments; this process should exit.
    Forwarded,
}

/// Later launches' arguments, one `Vec<String>` per launch.
pub struct Arrivals {
    listener: UnixListener,
    path: PathBuf,
}

impl Drop for Arrivals {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Arrivals {
    /// Blocks, calling `on_launch` with each later launch's arguments (run it on a thread).
    pub fn serve(self, on_launch: impl Fn(Vec<String>)) {
        for stream in self.listener.incoming() {
            let Ok(stream) = stream else { continue };
            // A launch sends one line; a peer that sends nothing cannot hold the loop.
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut line = String::new();
            let mut reader = BufReader::new(&stream);
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let Ok(args) = serde_json::from_str::<Vec<String>>(&line) else {
                continue;
            };
            let _ = (&stream).write_all(b"ok\n");
            on_launch(args);
        }
    }
}

/// The socket for `home`: in the runtime dir, named by a hash of the data dir's path (a Unix
/// socket's path is limited to about 100 bytes; data dirs can be longer).
pub fn socket_path(home: &Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let home = home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    home.hash(&mut hasher);
    let dir = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    dir.join(format!("cowork-{:016x}.sock", hasher.finish()))
}

/// Becomes the window for `home`, or hands `args` to the one already running.
pub fn claim(home: &Path, args: &[String]) -> std::io::Result<Instance> {
    let path = socket_path(home);
    for _ in 0..2 {
        match UnixListener::bind(&path) {
            Ok(listener) => {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
                return Ok(Instance::First(Arrivals { listener, path }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                if forward(&path, args).is_ok() {
                    return Ok(Instance::Forwarded);
                }
                // Left behind by a window that was killed: nobody listens.
                std::fs::remove_file(&path)?;
            }
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "{}: another launch is taking the window's place — try again",
        path.display()
    )))
}

fn forward(path: &Path, args: &[String]) -> std::io::Result<()> {
    let mut stream = UnixStream::connect(path)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let line = serde_json::to_string(args).map_err(std::io::Error::other)? + "\n";
    stream.write_all(line.as_bytes())?;
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer)?;
    if answer.trim() == "ok" {
        Ok(())
    } else {
        Err(std::io::Error::other("the running window did not answer"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_launch_hands_its_arguments_to_the_first() {
        let home = tempfile_dir();
        let Instance::First(arrivals) = claim(&home, &[]).unwrap() else {
            panic!("the first launch is the window");
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || arrivals.serve(move |args| tx.send(args).unwrap()));
        let link = "cowork://toolpack/install?source=github:a/b".to_string();
        assert!(matches!(
            claim(&home, std::slice::from_ref(&link)).unwrap(),
            Instance::Forwarded
        ));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), vec![link]);
        // Another data dir is another window.
        let other = tempfile_dir();
        assert!(matches!(claim(&other, &[]).unwrap(), Instance::First(_)));
    }

    #[test]
    fn a_socket_left_by_a_killed_window_is_taken_over() {
        let home = tempfile_dir();
        let path = socket_path(&home);
        // Bound and closed without removing the file, as a window killed with -9 leaves it.
        drop(UnixListener::bind(&path).unwrap());
        assert!(path.exists());
        assert!(matches!(claim(&home, &[]).unwrap(), Instance::First(_)));
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "cowork-instance-{}-{}",
            std::process::id(),
            uuid::Uuid::now_v7()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
