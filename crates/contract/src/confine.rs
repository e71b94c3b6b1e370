//! One confinement for every program Cowork starts: commands, git, quality tools, MCP servers
//! and a pack's install steps. A planted program (a repository's hook, a pack's setup script)
//! then has nowhere to reach, whatever name it hides behind:
//! - its environment is built from an allowlist plus what the caller sets on purpose, and is
//!   handed to the program inside the sandbox, never to the launcher (bubblewrap is started by
//!   absolute path with an empty environment: no `PATH` or `LD_PRELOAD` reaches it);
//! - it sees the system's programs and libraries read-only, a private `/tmp`, and the folders it
//!   was granted, by their canonical paths; the home folder is covered by an empty one, so only
//!   what is granted of it shows (no list of credential folders to miss), and the dot entries of
//!   a home folder a grant contains stay covered unless granted one by one;
//! - inside every grant, what configures a program (`pathclass`) is read-only and what holds
//!   credentials is hidden, so a writable workspace cannot be used to plant a hook or a rule;
//! - no network and no sockets of the machine (no `/run`, a network namespace of its own) unless
//!   granted.
//!
//! Without bubblewrap the program runs with the person's rights; [`Launch::confined`] says so and
//! the callers' reviews score it higher.

pub use crate::gitdirs::Held;
use crate::gitdirs::{self, GitDirAtLaunch};
pub use crate::gitdirs::{GIT_OWN_KEYS, GIT_PROGRAM_PARTS};
use crate::pathclass::{self, PathClass};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Parts of the system every confined program sees read-only (programs, libraries,
/// configuration). Symlinks among them (merged /usr: `/bin -> usr/bin`) are recreated as links.
pub const SYSTEM: &[&str] = &[
    "/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// Where bubblewrap is looked for: system folders only, never `PATH`, which an environment
/// could point at a program that only pretends to confine.
const BWRAP: &[&str] = &["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"];

/// Variables a confined program inherits from Cowork's own environment: the person's locale,
/// time zone and name (`LC_*` too). An allowlist: what it leaves out, a program does not see.
/// How this machine reaches the network (proxies, the certificate authorities it trusts) comes
/// along too: it is the person's setup, and a network grant is useless without it.
const INHERITED: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "USER",
    "LOGNAME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PIP_CERT",
    "GIT_SSL_CAINFO",
];

/// What a network grant reaches, as the review names it: a sandbox can share the machine's
/// network or none of it, so the services listening on this computer come with it.
pub const ANY_NETWORK: &str = "any site, and services on this computer";

/// bubblewrap's absolute path, when installed in a system folder.
pub fn bwrap() -> Option<&'static Path> {
    BWRAP.iter().map(Path::new).find(|p| p.is_file())
}

/// bubblewrap installed and allowed to create its namespaces (a container may forbid user
/// namespaces): probed once per process with a tiny sandbox of the kind every launch uses.
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let Some(bwrap) = bwrap() else { return false };
        let empty = Confinement {
            cwd: "/".into(),
            ..Confinement::default()
        };
        Command::new(bwrap)
            .env_clear()
            .args(empty.bwrap_args())
            .args(["--", "true"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// A program ready to start, and whether it is confined.
pub struct Launch {
    pub command: Command,
    pub confined: bool,
}

/// What a confined program may reach. Built with the methods below; every path is taken by its
/// canonical form, and one that does not exist is left out (nothing to bind).
#[derive(Clone, Debug, Default)]
pub struct Confinement {
    cwd: PathBuf,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    own_read: Vec<PathBuf>,
    own_write: Vec<PathBuf>,
    home: Option<PathBuf>,
    hidden: Vec<PathBuf>,
    /// Read-only whatever else grants: applied last.
    protected: Vec<PathBuf>,
    network: bool,
    env: BTreeMap<String, OsString>,
    /// The person turned the sandbox off for this program: it runs with their rights.
    turned_off: bool,
    /// Each writable grant's walk at launch, taken once: the sandbox's mounts and the [`Watch`]
    /// both need it.
    walks: OnceLock<Vec<(PathBuf, gitdirs::Walked)>>,
}

/// One step of the sandbox's file view, applied in order (a later step covers an earlier one).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mount {
    /// An empty writable folder over what is there.
    Cover(PathBuf),
    ReadOnly(PathBuf),
    Writable(PathBuf),
    /// Read-only again inside a writable grant: configuration.
    Protect(PathBuf),
    /// Not there at all: credentials, and what the caller hides.
    Hide(PathBuf),
}

impl Mount {
    fn path(&self) -> &Path {
        match self {
            Mount::Cover(p)
            | Mount::ReadOnly(p)
            | Mount::Writable(p)
            | Mount::Protect(p)
            | Mount::Hide(p) => p,
        }
    }
}

fn canonical(path: &Path) -> Option<PathBuf> {
    path.canonicalize().ok()
}

/// What of Cowork's own environment a program it starts may see ([`INHERITED`], `LC_*` and
/// `PATH`): confined programs, and the person's git that the `git` tool runs.
pub fn inherited_env() -> impl Iterator<Item = (String, OsString)> {
    std::env::vars_os().filter_map(|(key, value)| {
        let key = key.into_string().ok()?;
        let kept = INHERITED.contains(&key.as_str()) || key.starts_with("LC_") || key == "PATH";
        kept.then_some((key, value))
    })
}

impl Confinement {
    /// A sandbox whose program starts in `cwd` (which a grant must make visible).
    pub fn new(cwd: &Path) -> Self {
        let mut env: BTreeMap<String, OsString> = inherited_env().collect();
        env.insert("TMPDIR".into(), "/tmp".into());
        Confinement {
            cwd: canonical(cwd).unwrap_or_else(|| cwd.to_path_buf()),
            env,
            ..Confinement::default()
        }
    }

    /// A folder (or file) it may read.
    pub fn read(mut self, path: &Path) -> Self {
        self.read.extend(canonical(path));
        self
    }

    /// A folder (or file) it may change; its configuration stays read-only.
    pub fn write(mut self, path: &Path) -> Self {
        self.write.extend(canonical(path));
        self
    }

    /// The person's home folder: covered by an empty one (its `HOME`), so only grants show.
    /// Programs installed under it that the person's `PATH` names stay usable, read-only.
    pub fn home(mut self, home: &Path) -> Self {
        let Some(home) = canonical(home) else {
            return self;
        };
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path) {
                self.read.extend(toolchain(&dir, &home));
            }
        }
        self.env.insert("HOME".into(), home.clone().into());
        self.home = Some(home);
        self
    }

    /// Never shown, even inside a grant (Cowork's own data folder) — but for the program's own
    /// folders ([`Confinement::own`]).
    pub fn hide(mut self, path: &Path) -> Self {
        self.hidden.extend(canonical(path));
        self
    }

    /// The program's own folder (a pack's pinned code, its private data): shown even inside a
    /// hidden folder, writable or not.
    pub fn own(mut self, path: &Path, writable: bool) -> Self {
        let list = if writable {
            &mut self.own_write
        } else {
            &mut self.own_read
        };
        list.extend(canonical(path));
        self
    }

    /// Read-only even inside the program's own writable folder (the parts of a git directory
    /// that make git run programs, when git itself is the program and writes the rest).
    pub fn protect(mut self, path: &Path) -> Self {
        self.protected.extend(canonical(path));
        self
    }

    /// Its own network namespace (nothing reachable, loopback included) unless granted.
    pub fn network(mut self, granted: bool) -> Self {
        self.network = granted;
        self
    }

    /// Run it without the sandbox (the person turned it off), with the same clean environment.
    pub fn without_sandbox(mut self) -> Self {
        self.turned_off = true;
        self
    }

    /// A variable for the program (never the launcher).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<OsString>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    pub fn envs<K: Into<String>, V: Into<OsString>>(
        mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        for (k, v) in vars {
            self = self.env(k, v);
        }
        self
    }

    /// `program args…`, confined when bubblewrap can run here.
    pub fn command<S: AsRef<OsStr>>(&self, program: &str, args: &[S]) -> Launch {
        let confined = !self.turned_off && available();
        let mut command = match bwrap().filter(|_| confined) {
            Some(bwrap) => {
                let mut command = Command::new(bwrap);
                command.args(self.bwrap_args()).arg("--").arg(program);
                command
            }
            None => Command::new(program),
        };
        command.env_clear().args(args).current_dir(&self.cwd);
        if !confined {
            command.envs(&self.env);
        }
        Launch { command, confined }
    }

    /// bubblewrap's arguments up to (not including) `--` and the program.
    pub fn bwrap_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = Vec::new();
        let mut push = |parts: &[&dyn AsRef<OsStr>]| {
            out.extend(parts.iter().map(|p| p.as_ref().to_os_string()));
        };
        push(&[&"--unshare-all", &"--die-with-parent", &"--new-session"]);
        if self.network {
            push(&[&"--share-net"]);
        }
        for dir in SYSTEM {
            let path = Path::new(dir);
            match std::fs::read_link(path) {
                Ok(target) => push(&[&"--symlink", &target, dir]),
                Err(_) if path.is_dir() => push(&[&"--ro-bind", dir, dir]),
                Err(_) => {}
            }
        }
        push(&[&"--dev", &"/dev", &"--proc", &"/proc", &"--tmpfs", &"/tmp"]);
        if self.network {
            // /etc/resolv.conf often points here (systemd-resolved).
            push(&[
                &"--ro-bind-try",
                &"/run/systemd/resolve",
                &"/run/systemd/resolve",
            ]);
        }
        // A hidden folder is an empty tmpfs, made read-only once everything inside it is
        // mounted (the program's own folder may lie in it).
        let mut sealed: Vec<PathBuf> = Vec::new();
        for mount in self.mounts() {
            match &mount {
                Mount::Cover(p) => push(&[&"--tmpfs", p]),
                Mount::ReadOnly(p) | Mount::Protect(p) => push(&[&"--ro-bind", p, p]),
                Mount::Writable(p) => push(&[&"--bind", p, p]),
                Mount::Hide(p) if p.is_dir() => {
                    push(&[&"--tmpfs", p]);
                    sealed.push(p.clone());
                }
                Mount::Hide(p) => push(&[&"--ro-bind", &"/dev/null", p]),
            }
        }
        for p in &sealed {
            push(&[&"--remount-ro", p]);
        }
        push(&[&"--chdir", &self.cwd, &"--clearenv"]);
        for (key, value) in &self.env {
            push(&[&"--setenv", key, value]);
        }
        out
    }

    /// The file view, in the order it is built: shallower paths first (a grant inside a covered
    /// home, a protected file inside a writable grant), and what is hidden last of all.
    fn mounts(&self) -> Vec<Mount> {
        let mut mounts = self.grant_mounts(&self.read, &self.write, self.home.as_ref());
        let explicit = self.hidden.iter().filter(|h| self.visible(h));
        mounts.extend(explicit.cloned().map(Mount::Hide));
        mounts.extend(self.grant_mounts(&self.own_read, &self.own_write, None));
        mounts.extend(self.protected.iter().cloned().map(Mount::Protect));
        mounts
    }

    /// One set of grants' mounts, shallower paths first.
    fn grant_mounts(
        &self,
        read: &[PathBuf],
        write: &[PathBuf],
        cover: Option<&PathBuf>,
    ) -> Vec<Mount> {
        let mut mounts: Vec<Mount> = cover.cloned().map(Mount::Cover).into_iter().collect();
        let writable = |p: &PathBuf| write.iter().any(|w| w == p);
        mounts.extend(
            read.iter()
                .filter(|p| !writable(p))
                .cloned()
                .map(Mount::ReadOnly),
        );
        mounts.extend(write.iter().cloned().map(Mount::Writable));
        for grant in read.iter().chain(write) {
            mounts.extend(self.inside_grant(grant, writable(grant)));
        }
        mounts.sort_by(|a, b| {
            let depth = |m: &Mount| m.path().components().count();
            depth(a).cmp(&depth(b)).then(a.cmp(b))
        });
        mounts.dedup();
        mounts
    }

    /// Inside one grant: credentials hidden and configuration protected (its top entries), and
    /// a home folder it contains covered but for what is granted one by one.
    fn inside_grant(&self, grant: &Path, writable: bool) -> Vec<Mount> {
        let granted = |p: &Path| self.grants_all().any(|g| g == p);
        let mut out = Vec::new();
        // An entry granted by itself is what the caller meant to give.
        for entry in top_entries(grant).into_iter().filter(|e| !granted(e)) {
            let name = entry.file_name().and_then(OsStr::to_str).unwrap_or("");
            match pathclass::classify(Path::new(name), None) {
                PathClass::Credential(_) if entry.is_dir() => out.push(Mount::Hide(entry)),
                PathClass::Credential(_) | PathClass::Configuration(_) if writable => {
                    out.push(Mount::Protect(entry))
                }
                _ => {}
            }
        }
        if writable {
            out.extend(self.repository_mounts(grant));
        }
        if let Some(home) = self.home.as_ref().filter(|h| h.starts_with(grant)) {
            out.extend(
                top_entries(home)
                    .into_iter()
                    .filter(|e| {
                        e.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                    })
                    .filter(|e| !granted(e))
                    .map(Mount::Hide),
            );
        }
        out
    }

    /// Inside a writable grant, every git directory is read-only, as the top one is (a
    /// monorepo's vendored clone, a folder of projects; submodules and linked worktrees live in
    /// their repository's): nothing a command runs can leave git a program, so git's own writes
    /// (add, commit, switch, merge, fetch…) go through the reviewed `git` tool. What a
    /// repository's config names for git to run from or read (`core.hooksPath`, included files)
    /// is read-only too when it lies in the grant.
    fn repository_mounts(&self, grant: &Path) -> Vec<Mount> {
        let walked = self.walked(grant);
        let nested = walked.git;
        // Every git directory, wherever it lies: a `.git` entry, what a `.git` file points to
        // (`--separate-git-dir`, a worktree's), and a folder shaped as a bare repository (a
        // remote kept in the workspace, whose hooks a push runs).
        let pointed = std::iter::once(grant.join(".git"))
            .chain(nested.iter().cloned())
            .flat_map(|entry| gitdirs::pointed_git_dirs(&entry))
            .filter(|dir| dir.starts_with(grant));
        let mut out: Vec<Mount> = nested
            .iter()
            .cloned()
            .chain(pointed)
            // A grant that is itself a git directory was given writable on purpose (the git
            // tool's own repository).
            .chain(walked.bare.iter().filter(|b| *b != grant).cloned())
            .map(Mount::Protect)
            .collect();
        for entry in std::iter::once(grant.join(".git")).chain(nested) {
            let work_tree = entry.parent().unwrap_or(grant);
            for dir in gitdirs::git_dirs(&entry).into_iter().flatten() {
                out.extend(
                    gitdirs::configured_paths(&dir, work_tree)
                        .into_iter()
                        .filter(|p| p.starts_with(grant))
                        .map(Mount::Protect),
                );
            }
        }
        out
    }

    /// The launch walk of a writable grant (see `walks`).
    fn walked(&self, grant: &Path) -> gitdirs::Walked {
        let walks = self.walks.get_or_init(|| {
            let walk = |g: &PathBuf| (g.clone(), gitdirs::repositories_below(g));
            self.write.iter().map(walk).collect()
        });
        walks
            .iter()
            .find(|(g, _)| g == grant)
            .map_or_else(|| gitdirs::repositories_below(grant), |(_, w)| w.clone())
    }

    fn grants_all(&self) -> impl Iterator<Item = &PathBuf> {
        self.read
            .iter()
            .chain(&self.write)
            .chain(&self.own_read)
            .chain(&self.own_write)
    }

    /// Whether a path would show inside, or hold something that would: under a grant or the
    /// covered home, or around a grant.
    fn visible(&self, path: &Path) -> bool {
        self.grants_all()
            .chain(&self.home)
            .any(|g| path.starts_with(g) || g.starts_with(path))
    }
}

/// Every entry directly in a folder, links included.
fn all_entries(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    entries.map(|e| e.path()).collect()
}

/// The entries directly in a folder (none for a file), by their real names; symlinks are left
/// as they are (what they point at outside a grant does not show).
fn top_entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// What a run could leave behind for programs outside the sandbox to run later, taken before it
/// starts and checked when it ends (confined or not):
/// - in every git directory of a writable grant (nested repositories and submodules included),
///   whatever appears that git does not write itself (`gitdirs`) is held back — moved aside so
///   the person's own git never reads it — and so is a rebase to-do that runs a program;
/// - a git directory replaced by another is named;
/// - a new configuration entry at the top of a writable grant (`.envrc`, `.vscode`) and a new
///   repository anywhere in it are named, for the person to see: they may be what was asked
///   for (`git init`, `cargo new`, a virtualenv).
#[derive(Debug, Default)]
pub struct Watch {
    git_dirs: Vec<GitDirAtLaunch>,
    tops: Vec<(PathBuf, Vec<PathBuf>)>,
    /// Per writable grant: its `.git` entries and bare-looking folders, by identity.
    repositories: Vec<(PathBuf, Vec<Known>)>,
    complete: bool,
}

/// A path and the file or folder it named at launch (device, inode).
type Known = (PathBuf, Option<(u64, u64)>);

/// What [`Watch::check`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Aftermath {
    /// What appeared in a git directory that git does not write itself, and where it went.
    pub held: Vec<(PathBuf, Held)>,
    /// A git directory that is no longer the one there at launch.
    pub replaced: Vec<PathBuf>,
    /// New configuration entries at the top of a writable grant, and new repositories in it.
    pub created: Vec<PathBuf>,
    /// The grants held more folders than a check walks ([`gitdirs::WALK_BUDGET`]).
    pub cut_short: bool,
}

impl Aftermath {
    pub fn is_empty(&self) -> bool {
        self.held.is_empty() && self.replaced.is_empty() && self.created.is_empty()
    }

    /// What was found, in words for the model and the person; paths are shown relative to the
    /// workspace root they lie in.
    pub fn notes(&self, env: &crate::EffectEnv) -> Vec<String> {
        let shown = |p: &Path| {
            env.workspace_roots
                .iter()
                .find_map(|r| p.strip_prefix(r).ok())
                .unwrap_or(p)
                .display()
                .to_string()
        };
        let mut notes = Vec::new();
        for (part, held) in &self.held {
            notes.push(match held {
            Held::Moved(aside) => format!(
                "held back {}: git would run what it names; it was moved to {} — if the person wants it, they put it back themselves",
                shown(part),
                shown(aside)
            ),
            Held::Removed => format!(
                "removed {}: git would run what it names, and it could not be moved aside",
                shown(part)
            ),
            Held::Restored => format!(
                "put back {}: the command made it unreadable to git, which would then take another folder for the repository",
                shown(part)
            ),
            Held::Stuck => format!(
                "could not hold back {}: git may run what it names — tell the person to look at it",
                shown(part)
            ),
        });
        }
        for dir in &self.replaced {
            notes.push(format!(
                "the git directory {} was replaced while the command ran — tell the person",
                shown(dir)
            ));
        }
        for path in &self.created {
            notes.push(format!(
                "created {}, which other programs read as configuration",
                shown(path)
            ));
        }
        if self.cut_short {
            notes.push(
                "the workspace holds too many folders to check them all for repositories".into(),
            );
        }
        notes
    }
}

impl Confinement {
    /// What to check when the run ends (see [`Watch`]).
    pub fn watch(&self) -> Watch {
        let mut watch = Watch {
            complete: true,
            ..Watch::default()
        };
        for grant in &self.write {
            let walked = self.walked(grant);
            watch.complete &= walked.complete;
            let top = grant.join(".git");
            for entry in std::iter::once(&top).chain(&walked.git) {
                for dir in gitdirs::git_dirs(entry).into_iter().flatten() {
                    watch.git_dirs.push(GitDirAtLaunch::take(&dir));
                }
            }
            watch.tops.push((grant.clone(), all_entries(grant)));
            let found = walked.git.iter().chain(&walked.bare);
            let known = found.map(|p| (p.clone(), gitdirs::identity(p))).collect();
            watch.repositories.push((grant.clone(), known));
        }
        watch
    }
}

impl Watch {
    /// Holds back what appeared where git reads programs, and names what else changed.
    pub fn check(&self) -> Aftermath {
        let mut after = Aftermath {
            cut_short: !self.complete,
            ..Aftermath::default()
        };
        for git_dir in &self.git_dirs {
            let changes = git_dir.check();
            after.held.extend(changes.held);
            if changes.replaced {
                // Whatever stands there now was made by the run: judged as a new repository.
                if std::fs::symlink_metadata(&git_dir.dir).is_ok() {
                    after.held.extend(gitdirs::hold_back_planted(&git_dir.dir));
                }
                after.replaced.push(git_dir.dir.clone());
            }
        }
        for (grant, before) in &self.tops {
            after.created.extend(
                all_entries(grant)
                    .into_iter()
                    .filter(|p| !before.contains(p))
                    .filter(|p| {
                        let name = p.file_name().and_then(OsStr::to_str).unwrap_or("");
                        pathclass::classify(Path::new(name), None) != PathClass::Ordinary
                    }),
            );
        }
        for (grant, before) in &self.repositories {
            let walked = gitdirs::repositories_below(grant);
            after.cut_short |= !walked.complete;
            // New, or the same name on another file or folder (a submodule's folder swapped).
            let is_new = |p: &PathBuf| !before.contains(&(p.clone(), gitdirs::identity(p)));
            for new in walked.git.into_iter().filter(is_new) {
                after.held.extend(gitdirs::hold_back_planted(&new));
                after.created.push(new);
            }
            for bare in walked.bare.into_iter().filter(is_new) {
                after.held.extend(gitdirs::hold_back_bare(&bare));
                after.created.push(bare);
            }
        }
        after.created.sort();
        after
    }
}

/// The read-only grant a `PATH` entry under the home folder needs: the folder itself, or the
/// installation it is the `bin` of when that lies deeper than one level under home (an nvm or
/// pyenv version; `~/.local` and `~/.cargo` hold more than programs).
fn toolchain(dir: &Path, home: &Path) -> Option<PathBuf> {
    let dir = canonical(dir)?;
    let below = dir.strip_prefix(home).ok()?;
    if below.as_os_str().is_empty() {
        return None;
    }
    let install = dir
        .parent()
        .filter(|_| dir.file_name().is_some_and(|n| n == "bin"))
        .filter(|parent| {
            parent
                .strip_prefix(home)
                .is_ok_and(|r| r.components().count() >= 2)
        });
    Some(install.map_or(dir.clone(), Path::to_path_buf))
}
