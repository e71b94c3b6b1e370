use crate::ToolError;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A progress report from a running tool (MCP-style: progress out of an optional total).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Where secrets come from (the OS keyring in the app, a map in tests).
pub trait SecretSource: Send + Sync {
    fn get(&self, name: &str) -> Result<Option<String>, String>;
    /// Keeps a secret (sign-ins save their renewed tokens). A read-only source refuses.
    fn set(&self, name: &str, _value: &str) -> Result<(), String> {
        Err(format!(
            "cannot keep the secret {name:?}: this secret source is read-only"
        ))
    }
    /// Whether there was one to delete.
    fn delete(&self, name: &str) -> Result<bool, String> {
        Err(format!(
            "cannot delete the secret {name:?}: this secret source is read-only"
        ))
    }
}

/// What a tool needs to compute its effects: workspace roots and the home directory, so paths
/// are resolved the same way for the policy as for the call itself.
#[derive(Clone, Debug, Default)]
pub struct EffectEnv {
    pub workspace_roots: Vec<PathBuf>,
    pub home: Option<PathBuf>,
    /// Cowork's own data folder (settings, audit log, credentials): no program Cowork starts
    /// sees it, even when it lies inside a workspace.
    pub cowork_data: Option<PathBuf>,
}

impl EffectEnv {
    /// Resolve a path argument to the real target the policy must see: `~` expanded, relative
    /// paths joined to the first workspace root, `.`/`..` removed lexically, and the longest
    /// existing prefix canonicalized so a symlink cannot point the policy at the wrong file.
    /// Re-resolves a reviewed path just before use: if anything on the way changed since
    /// review (a directory or the file became a symlink), the call stops — a run acts on what
    /// was reviewed or on nothing.
    pub fn recheck(&self, reviewed: &std::path::Path) -> Result<(), crate::ToolError> {
        let now = self.resolve_path(&reviewed.to_string_lossy());
        if now != reviewed {
            return Err(crate::ToolError::SecurityViolation {
                reason: format!(
                    "{} now resolves to {} (a symlink changed since the call was reviewed); nothing was done",
                    reviewed.display(),
                    now.display()
                ),
            });
        }
        Ok(())
    }

    /// Opens a reviewed file for reading, for any family: no final symlink, and the
    /// descriptor's real path must be the reviewed one — a file swapped for a link between
    /// review and use is refused, not followed.
    pub fn open_reviewed(&self, reviewed: &Path) -> Result<std::fs::File, crate::ToolError> {
        use std::os::unix::fs::OpenOptionsExt;
        self.recheck(reviewed)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(reviewed)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) => crate::ToolError::SecurityViolation {
                    reason: format!(
                        "{} became a symlink after review; nothing was read",
                        reviewed.display()
                    ),
                },
                _ => crate::ToolError::io(reviewed, e),
            })?;
        check_descriptor(&file, reviewed)?;
        Ok(file)
    }

    pub fn resolve_path(&self, raw: &str) -> PathBuf {
        let expanded = match (raw.strip_prefix('~'), &self.home) {
            (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                home.join(rest.trim_start_matches('/'))
            }
            _ => PathBuf::from(raw),
        };
        let absolute = if expanded.is_absolute() {
            expanded
        } else {
            let base = self
                .workspace_roots
                .first()
                .cloned()
                .unwrap_or_else(|| PathBuf::from("/"));
            base.join(expanded)
        };
        canonicalize_existing_prefix(&normalize_lexically(&absolute))
    }

    /// Whether a resolved path lies inside one of the workspace roots (roots are canonicalized
    /// the same way as the path) and does not reach outside them through a link.
    pub fn is_inside_workspace(&self, resolved: &Path) -> bool {
        self.root_of(resolved)
            .is_some_and(|root| escapes_by_link(resolved, &root).is_none())
    }

    /// Why a path that lies textually inside a root still reaches outside it (see
    /// [`escapes_by_link`]); None when it is plainly inside or plainly outside.
    pub fn link_escape(&self, resolved: &Path) -> Option<String> {
        self.root_of(resolved)
            .and_then(|root| escapes_by_link(resolved, &root))
    }

    /// The workspace root a resolved path lies in (canonical), if any.
    pub fn root_of(&self, resolved: &Path) -> Option<PathBuf> {
        self.canonical_roots()
            .into_iter()
            .find(|root| resolved.starts_with(root))
    }

    /// The workspace roots, resolved as paths are.
    pub fn canonical_roots(&self) -> Vec<PathBuf> {
        self.workspace_roots
            .iter()
            .map(|root| canonicalize_existing_prefix(&normalize_lexically(root)))
            .collect()
    }
}

/// A file inside a root whose content also lives elsewhere: more than one hard link (another
/// name, possibly outside the workspace, is the same file — `ln /etc/shadow ws/x`), or on
/// another filesystem than its root (a bind mount). Symlinks are already resolved by
/// canonicalizing; these are the links canonicalizing cannot see. Directories always have
/// several links, so only non-directories are checked.
pub fn escapes_by_link(resolved: &Path, root: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(resolved).ok()?;
    if !meta.is_dir() && meta.nlink() > 1 {
        return Some(format!(
            "{} has {} hard links: another name for the same file may lie outside the workspace",
            resolved.display(),
            meta.nlink()
        ));
    }
    let root_dev = std::fs::metadata(root).ok()?.dev();
    // A bind mount of the same filesystem keeps the device number: the mount id tells it.
    let other_mount = matches!((mount_id(resolved), mount_id(root)), (Some(a), Some(b)) if a != b);
    (meta.dev() != root_dev || other_mount).then(|| {
        format!(
            "{} is on another filesystem or mount than its workspace root (a mount)",
            resolved.display()
        )
    })
}

/// The id of the mount a path lies on (statx, Linux 5.8+); None where the kernel cannot say.
fn mount_id(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statx reads a NUL-terminated path and fills the zeroed buffer it is given.
    let mut buf: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c_path.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            libc::STATX_MNT_ID,
            &mut buf,
        )
    };
    (rc == 0 && buf.stx_mask & libc::STATX_MNT_ID != 0).then_some(buf.stx_mnt_id)
}

/// The kernel's name for what a descriptor really is must be the reviewed path.
pub fn check_descriptor(file: &std::fs::File, reviewed: &Path) -> Result<(), crate::ToolError> {
    use std::os::fd::AsRawFd;
    match std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
        Ok(real) if real == reviewed => Ok(()),
        Ok(real) => Err(crate::ToolError::SecurityViolation {
            reason: format!(
                "{} opened as {}; refused",
                reviewed.display(),
                real.display()
            ),
        }),
        // Without /proc (not Linux) the pre-open recheck is what we have.
        Err(_) => Ok(()),
    }
}

fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn canonicalize_existing_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// What a call that must wait for the person records: why, and what lets it go on (a
/// family-defined condition, e.g. `{"url_leaves": "https://shop.example/login"}`; null = the
/// person's Resume only).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SuspendRequest {
    pub reason: String,
    #[serde(default)]
    pub resume_when: serde_json::Value,
    /// How long the suspension stays open before it times out (the person can extend it).
    pub timeout: Duration,
}

/// A family's check of its own resume conditions: suspensions whose `resume_when.kind` is this
/// probe's kind go on by themselves once `holds` says so (the browser: the person got past the
/// login). A probe may also prepare what the person needs — e.g. show the login page again
/// after a restart.
#[async_trait::async_trait]
pub trait ResumeProbe: Send + Sync {
    fn kind(&self) -> &str;
    async fn holds(&self, resume_when: &serde_json::Value) -> bool;
}

/// Records a suspension of the current call (bound by the scheduler to its tool, arguments and
/// conversation) and returns its id.
pub type Suspender = Arc<dyn Fn(SuspendRequest) -> Result<String, String> + Send + Sync>;

/// Everything a running tool may use. Built by the scheduler for each call; cheap to clone.
#[derive(Clone)]
pub struct ToolContext {
    pub call_id: String,
    /// The tool's registered name, set by the scheduler (for provenance a tool records).
    pub tool: String,
    pub conversation_id: String,
    pub env: EffectEnv,
    pub cancel: CancellationToken,
    pub progress: ProgressSink,
    pub config: Arc<serde_json::Value>,
    secrets: Option<Arc<dyn SecretSource>>,
    /// Secret names the reviewed effects named (`secrets.read(name)`): nothing else is readable.
    allowed_secrets: Arc<[String]>,
    /// The person chose accept-edits mode: file writes apply at once instead of waiting for
    /// review (the shadow FS still journals them, so they can be rolled back).
    pub accept_edits: bool,
    /// Every workspace root is one the person trusts: its own configuration (a repository's
    /// hooks, fsmonitor, pager) may run. Otherwise tools that start programs disable it.
    pub workspace_trusted: bool,
    /// Set by the scheduler when suspensions are stored (the app); see [`ToolContext::suspend`].
    pub suspender: Option<Suspender>,
    /// The person approved this very call (its effects as shown), not a rule: a tool that runs
    /// further calls under that approval (a chain) may pass it on for exactly those effects.
    pub person_approved: bool,
    /// When the scheduler stops waiting for this call (its timeout). A tool whose work goes on
    /// elsewhere (an MCP task) suspends before it, instead of being cut off.
    pub deadline: Option<std::time::Instant>,
    /// What this call recorded when it suspended (`SuspendRequest::resume_when`), when it runs
    /// again from that suspension: a tool that can go on where it stopped reads it; any other
    /// starts over.
    pub resumed: Option<serde_json::Value>,
}

impl ToolContext {
    pub fn new(
        call_id: impl Into<String>,
        conversation_id: impl Into<String>,
        env: EffectEnv,
    ) -> Self {
        // Shared empty defaults: a context is made per call, and these are replaced or unused
        // in most calls, so they cost a reference count instead of three allocations.
        struct Defaults {
            progress: ProgressSink,
            config: Arc<serde_json::Value>,
            allowed_secrets: Arc<[String]>,
        }
        static DEFAULTS: std::sync::OnceLock<Defaults> = std::sync::OnceLock::new();
        let defaults = DEFAULTS.get_or_init(|| Defaults {
            progress: Arc::new(|_| {}),
            config: Arc::new(serde_json::Value::Null),
            allowed_secrets: Arc::from(Vec::new()),
        });
        ToolContext {
            call_id: call_id.into(),
            tool: String::new(),
            conversation_id: conversation_id.into(),
            env,
            cancel: CancellationToken::new(),
            progress: defaults.progress.clone(),
            config: defaults.config.clone(),
            secrets: None,
            allowed_secrets: defaults.allowed_secrets.clone(),
            accept_edits: false,
            workspace_trusted: false,
            suspender: None,
            person_approved: false,
            deadline: None,
            resumed: None,
        }
    }

    /// Ends this call as suspended: records why and what lets it go on, and returns the error
    /// the tool returns. Resuming runs the same call again (reviewed again), so a tool only
    /// needs to be able to start over — after a restart too.
    pub fn suspend(&self, request: SuspendRequest) -> ToolError {
        let Some(suspender) = &self.suspender else {
            return ToolError::failed(format!(
                "{} — and this caller cannot wait for you (no task store): do it, then call again",
                request.reason
            ));
        };
        let reason = request.reason.clone();
        match suspender(request) {
            Ok(id) => ToolError::Suspended { id, reason },
            Err(e) => ToolError::failed(format!(
                "{reason} — and the suspension could not be recorded: {e}"
            )),
        }
    }

    pub fn with_secrets(mut self, source: Arc<dyn SecretSource>, allowed: Vec<String>) -> Self {
        self.secrets = Some(source);
        self.allowed_secrets = Arc::from(allowed);
        self
    }

    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        (self.progress)(Progress {
            progress,
            total,
            message,
        });
    }

    /// A secret, if this call's reviewed effects included `secrets.read(name)`.
    pub fn secret(&self, name: &str) -> Result<Option<String>, ToolError> {
        if !self.allowed_secrets.iter().any(|n| n == name) {
            return Err(ToolError::SecurityViolation {
                reason: format!("secret {name:?} was not declared as an effect of this call"),
            });
        }
        match &self.secrets {
            Some(source) => source.get(name).map_err(ToolError::failed),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_path_expands_home_joins_roots_and_removes_dotdot() {
        let tmp = std::env::temp_dir().canonicalize().unwrap();
        let env = EffectEnv {
            workspace_roots: vec![tmp.join("ws")],
            home: Some(PathBuf::from("/home/u")),
            ..Default::default()
        };
        assert_eq!(
            env.resolve_path("~/Documents/a.txt"),
            PathBuf::from("/home/u/Documents/a.txt")
        );
        assert_eq!(env.resolve_path("src/../x.rs"), tmp.join("ws/x.rs"));
        assert_eq!(
            env.resolve_path("../../etc/passwd"),
            PathBuf::from("/etc/passwd")
        );
        assert!(env.is_inside_workspace(&env.resolve_path("a/b")));
        assert!(!env.is_inside_workspace(&env.resolve_path("../ws2/b")));
    }
}
