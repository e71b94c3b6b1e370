//! One window per data dir: a second launch hands its arguments (a `cowork://` link, a `.mcpb`
//! file) to the window already running and exits; `cowork mcp serve` hands it the asks of the
//! MCP clients it serves, for the person to answer in the modal.
//!
//! Hand-written on a Unix socket rather than tauri-plugin-single-instance: the plugin keys the
//! instance on the app's identifier over D-Bus, so two data dirs (a second profile, tests running
//! side by side) could not each have their window, and a machine without a session bus would get
//! none of it. The socket is named after the data dir and lives in the runtime dir (private to
//! the user).

use cowork_core::{ApprovalChoice, ApprovalRequest};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
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

/// What one connection carries: a later launch's arguments, or an ask from another Cowork
/// process of this data dir (`cowork mcp serve`) for the person to answer in the window.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum Arrival {
    Launch(Vec<String>),
    Ask { ask: Box<ApprovalRequest> },
}

impl Arrivals {
    /// Blocks, calling `on_launch` with each later launch's arguments and `on_ask` with each
    /// forwarded ask, whose answer goes back to the asker (run it on a thread). Each
    /// connection has its own thread: an ask waiting for the person holds no launch up.
    pub fn serve(
        self,
        on_launch: impl Fn(Vec<String>) + Send + Sync + 'static,
        on_ask: impl Fn(ApprovalRequest) -> ApprovalChoice + Send + Sync + 'static,
    ) {
        let handlers = Arc::new((on_launch, on_ask));
        for stream in self.listener.incoming() {
            let Ok(stream) = stream else { continue };
            let handlers = handlers.clone();
            std::thread::spawn(move || {
                let (on_launch, on_ask) = &*handlers;
                arrive(stream, on_launch, on_ask);
            });
        }
    }
}

fn arrive(
    stream: UnixStream,
    on_launch: &impl Fn(Vec<String>),
    on_ask: &impl Fn(ApprovalRequest) -> ApprovalChoice,
) {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    if !same_user(stream.as_raw_fd()) {
        return;
    }
    // One line per connection, of a bounded size; a peer that sends nothing cannot hold its
    // thread.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut line = String::new();
    if BufReader::new((&stream).take(1 << 20))
        .read_line(&mut line)
        .is_err()
    {
        return;
    }
    match serde_json::from_str::<Arrival>(&line) {
        Ok(Arrival::Launch(args)) => {
            let _ = (&stream).write_all(b"ok\n");
            on_launch(args);
        }
        Ok(Arrival::Ask { ask }) => {
            let choice = on_ask(*ask);
            let answer = serde_json::to_string(&choice).unwrap_or_default() + "\n";
            let _ = (&stream).write_all(answer.as_bytes());
        }
        Err(_) => {}
    }
}

/// What asking the window found.
#[derive(Debug, PartialEq, Eq)]
pub enum WindowAnswer {
    /// No window runs for this data dir.
    NoWindow,
    Answered(ApprovalChoice),
    /// The window took the ask and closed before answering.
    Lost,
}

/// Puts `request` in front of the person in the window running for `home`, if one runs, and
/// waits for the answer (dropping the future withdraws nothing: the window's own timeout does).
pub async fn ask_window(home: &Path, request: &ApprovalRequest) -> WindowAnswer {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let Ok(path) = socket_path(home) else {
        return WindowAnswer::NoWindow;
    };
    let Ok(mut stream) = tokio::net::UnixStream::connect(path).await else {
        return WindowAnswer::NoWindow;
    };
    // Whoever listens there must be this user's window, or it hears nothing of the ask.
    if !same_user(std::os::fd::AsRawFd::as_raw_fd(&stream)) {
        return WindowAnswer::NoWindow;
    }
    let Ok(line) = serde_json::to_string(&Arrival::Ask {
        ask: Box::new(request.clone()),
    }) else {
        return WindowAnswer::Lost;
    };
    if stream.write_all((line + "\n").as_bytes()).await.is_err() {
        return WindowAnswer::NoWindow;
    }
    let mut answer = String::new();
    match tokio::io::BufReader::new(stream)
        .read_line(&mut answer)
        .await
    {
        Ok(n) if n > 0 => serde_json::from_str(answer.trim())
            .map(WindowAnswer::Answered)
            .unwrap_or(WindowAnswer::Lost),
        _ => WindowAnswer::Lost,
    }
}

/// The socket for `home`: in the runtime dir, named by a hash of the data dir's path (a Unix
/// socket's path is limited to about 100 bytes; data dirs can be longer).
pub fn socket_path(home: &Path) -> std::io::Result<PathBuf> {
    use std::hash::{Hash, Hasher};
    let home = home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    home.hash(&mut hasher);
    Ok(private_dir()?.join(format!("cowork-{:016x}.sock", hasher.finish())))
}

/// A folder only this user can enter: the session's runtime dir, else `cowork-<uid>` in the
/// temporary folder, made 0700 — and refused if someone else made it first (another user
/// could otherwise bind the socket a window is looked for at and answer its asks).
fn private_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
    {
        return Ok(dir);
    }
    let uid = this_user();
    let dir = std::env::temp_dir().join(format!("cowork-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(std::io::Error::other(format!(
            "{} is not this user's private folder: remove it, or set XDG_RUNTIME_DIR",
            dir.display()
        )));
    }
    Ok(dir)
}

/// The peer on the other end of a local socket runs as this user (SO_PEERCRED): a socket file
/// is only a name, and a name can be taken.
fn same_user(fd: std::os::fd::RawFd) -> bool {
    let mut cred = libc::ucred {
        pid: 0,
        uid: u32::MAX,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given; `fd` is an open socket.
    let ok = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    } == 0;
    ok && cred.uid == this_user()
}

fn this_user() -> u32 {
    // SAFETY: getuid cannot fail and touches no memory.
    unsafe { libc::getuid() }
}

/// Becomes the window for `home`, or hands `args` to the one already running.
pub fn claim(home: &Path, args: &[String]) -> std::io::Result<Instance> {
    let path = socket_path(home)?;
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
    use std::os::fd::AsRawFd;
    let mut stream = UnixStream::connect(path)?;
    if !same_user(stream.as_raw_fd()) {
        return Err(std::io::Error::other(
            "the socket's listener is another user",
        ));
    }
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
        std::thread::spawn(move || {
            arrivals.serve(move |args| tx.send(args).unwrap(), |_| ApprovalChoice::Deny)
        });
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
        let path = socket_path(&home).unwrap();
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
