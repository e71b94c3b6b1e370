//! Git directories inside a writable grant, as the confinement guards them. Git outside the
//! sandbox (the person's terminal, their shell prompt's `git status`) runs what a repository's
//! git directory configures, so a confined program must not be able to leave a program there.
//! Inside the sandbox every git directory is read-only (git's writes go through the reviewed
//! `git` tool). What this module adds is the check after a run, for what containment cannot
//! cover: a run without bubblewrap, and repositories a run makes. What git itself writes in a
//! git directory during ordinary work is known and short ([`GIT_DATA`]); whatever else appears
//! in one during a run is held back — a list of what may be written, not of what may not.

use std::collections::hash_map::RandomState;
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

/// What git writes at the top of a git directory in ordinary work (commits, merges, rebases,
/// fetches, gc), besides `*.lock` files. Anything else that appears during a run is held back.
/// The parts of a git directory that make git run programs: its config (and the worktree's),
/// `commondir` (which names the folder whose config git reads), hooks and info (attributes).
/// Read-only where git itself writes the rest of a git directory (the `git` tool).
pub const GIT_PROGRAM_PARTS: [&str; 5] =
    ["config", "config.worktree", "commondir", "hooks", "info"];

const GIT_DATA: &[&str] = &[
    "HEAD",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "AUTO_MERGE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "BISECT_LOG",
    "BISECT_START",
    "BISECT_EXPECTED_REV",
    "BISECT_ANCESTORS_OK",
    "BISECT_NAMES",
    "BISECT_TERMS",
    "COMMIT_EDITMSG",
    "SQUASH_MSG",
    "TAG_EDITMSG",
    "index",
    "packed-refs",
    "shallow",
    "description",
    "objects",
    "refs",
    "logs",
    "rr-cache",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "gc.pid",
    "gc.log",
    "lfs",
    "modules",
    "worktrees",
];

/// What `git init` and `git clone` make at the top of a new git directory besides [`GIT_DATA`].
const GIT_INIT: &[&str] = &["config", "hooks", "info", "branches"];

/// The config keys git writes itself when it makes a repository (init, clone, submodule,
/// worktree), as `section.name`: a new repository whose config holds anything else was
/// configured by the run, and its config is held back. (`remote.*.url` is checked apart: an
/// `ext::` transport is a program.)
pub const GIT_OWN_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.worktree",
    "remote.url",
    "remote.fetch",
    "branch.remote",
    "branch.merge",
    "init.defaultbranch",
    "extensions.objectformat",
    "extensions.worktreeconfig",
    "submodule.url",
    "submodule.active",
];

/// Where a rebase or a cherry-pick keeps its to-do list: an `exec` line there runs a program at
/// the person's next `git rebase --continue`.
const TODO_FILES: &[&str] = &["rebase-merge/git-rebase-todo", "sequencer/todo"];

/// Whether `entry` is a git directory (a `HEAD` file and an `objects` folder).
fn is_git_dir(entry: &Path) -> bool {
    entry.join("HEAD").is_file() && entry.join("objects").is_dir()
}

/// The git directories one entry holds: itself and every submodule's (at any depth, however
/// its name nests: `modules/libs/foo`, `modules/a/modules/b`) and worktree's; `None` when it is
/// not a git directory.
pub(crate) fn git_dirs(entry: &Path) -> Option<Vec<PathBuf>> {
    if !is_git_dir(entry) {
        return None;
    }
    let mut dirs = vec![entry.to_path_buf()];
    let mut pending: Vec<PathBuf> = ["modules", "worktrees"]
        .iter()
        .map(|n| entry.join(n))
        .collect();
    // A linked worktree's folder has no objects of its own, yet git reads its commondir and
    // config.worktree: each one is guarded as a git directory.
    dirs.extend(real_subfolders(&entry.join("worktrees")));
    pending.retain(|p| !p.ends_with("worktrees"));
    while let Some(dir) = pending.pop() {
        for child in real_subfolders(&dir) {
            if is_git_dir(&child) {
                dirs.push(child.clone());
                pending.push(child.join("modules"));
            } else if dirs.len() < 10_000 {
                pending.push(child);
            }
        }
    }
    Some(dirs)
}

/// The git directory a `.git` file points to (`gitdir: PATH`, relative to the file's folder), and
/// the common directory it names when it is a linked worktree's (which holds the config and hooks
/// git reads for it): canonical; none for a `.git` folder or a pointer to nothing.
pub(crate) fn pointed_git_dirs(entry: &Path) -> Vec<PathBuf> {
    let Some(dir) = std::fs::read_to_string(entry).ok().and_then(|text| {
        let target = text.strip_prefix("gitdir:")?.trim().to_string();
        entry.parent()?.join(target).canonicalize().ok()
    }) else {
        return vec![];
    };
    let common = std::fs::read_to_string(dir.join("commondir")).ok();
    let common = common.and_then(|c| dir.join(c.trim()).canonicalize().ok());
    std::iter::once(dir).chain(common).collect()
}

/// Subfolders of `dir` that are not links.
fn real_subfolders(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect()
}

/// Folders a walk visits at most (a workspace holding a hundred thousand folders is checked that
/// far, and the result says it was cut).
pub(crate) const WALK_BUDGET: usize = 200_000;

/// What a walk of a writable grant found.
#[derive(Clone, Debug, Default)]
pub(crate) struct Walked {
    /// Every `.git` (folder or file) below the top, the top one excluded.
    pub git: Vec<PathBuf>,
    /// Folders git would take for a bare repository (a `HEAD` file, `objects` and `refs`
    /// folders), the top included: git finds one from any folder below it.
    pub bare: Vec<PathBuf>,
    /// `false` when the walk stopped at [`WALK_BUDGET`].
    pub complete: bool,
}

/// Walks `root` without following links or entering git directories.
pub(crate) fn repositories_below(root: &Path) -> Walked {
    let mut walked = Walked {
        complete: true,
        ..Walked::default()
    };
    let mut pending = vec![root.to_path_buf()];
    let mut visited = 0;
    while let Some(dir) = pending.pop() {
        visited += 1;
        if visited > WALK_BUDGET {
            walked.complete = false;
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut shape = (false, false, false);
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let path = entry.path();
            match name.to_str() {
                Some("HEAD") => shape.0 = kind.is_file(),
                Some("objects") => shape.1 = kind.is_dir(),
                Some("refs") => shape.2 = kind.is_dir(),
                _ => {}
            }
            if name == ".git" {
                if dir != root {
                    walked.git.push(path);
                }
            } else if kind.is_dir() {
                pending.push(path);
            }
        }
        if shape == (true, true, true) {
            walked.bare.push(dir);
        }
    }
    walked.git.sort();
    walked.bare.sort();
    walked
}

/// Paths the repository's own config names for git to run from or read config from
/// (`core.hooksPath`, `include.path`, `includeIf.*.path`), resolved as git does: relative hook
/// paths against the work tree, relative includes against the config's folder.
pub(crate) fn configured_paths(git_dir: &Path, work_tree: &Path) -> Vec<PathBuf> {
    let config = git_dir.join("config");
    let out = std::process::Command::new("git")
        .args(["config", "--no-includes", "--file"])
        .arg(&config)
        .args([
            "--get-regexp",
            r"^(core\.hookspath|include\.path|includeif\..*\.path)$",
        ])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Ok(out) = out else { return vec![] };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(' ')?;
            let base = if key == "core.hookspath" {
                work_tree
            } else {
                git_dir
            };
            let value = Path::new(value);
            Some(if value.is_absolute() {
                value.to_path_buf()
            } else {
                base.join(value)
            })
        })
        .filter_map(|p| p.canonicalize().ok())
        .collect()
}

/// One git directory as it was when a run started.
#[derive(Debug)]
pub(crate) struct GitDirAtLaunch {
    pub dir: PathBuf,
    identity: Option<(u64, u64)>,
    entries: Vec<OsString>,
    was_git_dir: bool,
    head: Option<Vec<u8>>,
}

/// What a run changed in one git directory.
#[derive(Debug, Default)]
pub(crate) struct GitDirChanges {
    /// What appeared that git does not write itself, or a to-do that runs a program.
    pub held: Vec<(PathBuf, Held)>,
    /// The directory is not the one there at launch, or no longer a git directory.
    pub replaced: bool,
}

pub(crate) fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

fn names(dir: &Path) -> Vec<OsString> {
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    entries.map(|e| e.file_name()).collect()
}

impl GitDirAtLaunch {
    pub fn take(dir: &Path) -> Self {
        GitDirAtLaunch {
            dir: dir.to_path_buf(),
            identity: identity(dir),
            entries: names(dir),
            was_git_dir: is_git_dir(dir),
            head: std::fs::read(dir.join("HEAD")).ok(),
        }
    }

    /// Holds back what appeared that git does not write itself, and a to-do list that runs a
    /// program; says whether the directory was replaced.
    pub fn check(&self) -> GitDirChanges {
        let mut changes = GitDirChanges {
            replaced: identity(&self.dir) != self.identity
                || (self.was_git_dir && !is_git_dir(&self.dir)),
            ..GitDirChanges::default()
        };
        if changes.replaced {
            return changes;
        }
        for name in names(&self.dir) {
            let known = GIT_DATA.iter().any(|d| OsStr::new(d) == name)
                || name.to_string_lossy().ends_with(".lock");
            if !known && !self.entries.contains(&name) {
                let path = self.dir.join(&name);
                changes.held.push((path.clone(), hold_back(&path)));
            }
        }
        // A HEAD git cannot read makes git skip this directory and take a folder above (or the
        // work tree itself) for a repository: it is put back as it was.
        let head = self.dir.join("HEAD");
        if let Some(was) = &self.head
            && !std::fs::read(&head).is_ok_and(|now| valid_head(&now))
            && std::fs::write(&head, was).is_ok()
        {
            changes.held.push((head, Held::Restored));
        }
        for todo in TODO_FILES {
            let path = self.dir.join(todo);
            if runs_a_program(&path) {
                let folder = path.parent().unwrap_or(&self.dir).to_path_buf();
                changes.held.push((folder.clone(), hold_back(&folder)));
            }
        }
        changes
    }
}

/// Whether HEAD holds what git reads as one: a symbolic ref under `refs/`, or an object id.
fn valid_head(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end();
    match text.strip_prefix("ref: ") {
        Some(target) => target.starts_with("refs/") && !target.contains(".."),
        None => (40..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit()),
    }
}

/// Whether a rebase or sequencer to-do list holds an `exec` line (git's only to-do command
/// that runs a program).
fn runs_a_program(todo: &Path) -> bool {
    // Read as bytes: one byte that is not UTF-8 must not hide the line.
    std::fs::read(todo).is_ok_and(|bytes| {
        String::from_utf8_lossy(&bytes).lines().any(|line| {
            let word = line.split_whitespace().next().unwrap_or("");
            word == "exec" || word == "x"
        })
    })
}

/// Where something held back went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Held {
    /// Moved aside, here: git does not read it under this name.
    Moved(PathBuf),
    /// It could not be moved, so it was removed.
    Removed,
    /// It could be neither moved nor removed: it is still where git reads it.
    Stuck,
    /// It was changed into what git cannot read, and put back as it was at launch.
    Restored,
}

/// Moves `path` aside, under a name nobody can guess in advance, so git never reads it; when it
/// cannot be moved, it is removed (a program left where git runs it is worse than a lost file).
pub(crate) fn hold_back(path: &Path) -> Held {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    for _ in 0..4 {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        let aside = path.with_file_name(format!("{name}.held-by-cowork-{:016x}", hasher.finish()));
        if rename_no_replace(path, &aside) {
            return Held::Moved(aside);
        }
    }
    let removed = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        _ => std::fs::remove_file(path),
    };
    match removed {
        Ok(()) => Held::Removed,
        Err(_) => Held::Stuck,
    }
}

/// rename(2) that never replaces what is at `to` (renameat2 with RENAME_NOREPLACE).
fn rename_no_replace(from: &Path, to: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (Ok(from), Ok(to)) = (
        std::ffi::CString::new(from.as_os_str().as_bytes()),
        std::ffi::CString::new(to.as_os_str().as_bytes()),
    ) else {
        return false;
    };
    // SAFETY: two valid NUL-terminated paths, resolved against the current directory.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        ) == 0
    }
}

/// A repository a run made (`git init`, `git clone`, `cargo new`): what git itself makes there
/// stays, anything a program added is held back — hooks (but git's samples), info files (but
/// `exclude`), top entries git does not make, and a config holding keys git does not write. A
/// `.git` file (a pointer to a git directory elsewhere) is held back whole: where it points was
/// not guarded during the run.
pub(crate) fn hold_back_planted(entry: &Path) -> Vec<(PathBuf, Held)> {
    if !is_git_dir(entry) {
        return vec![(entry.to_path_buf(), hold_back(entry))];
    }
    let mut planted: Vec<PathBuf> = Vec::new();
    for name in names(entry) {
        let text = name.to_string_lossy();
        let known = GIT_DATA.contains(&text.as_ref()) || GIT_INIT.contains(&text.as_ref());
        if !known && !text.ends_with(".lock") {
            planted.push(entry.join(&name));
        }
    }
    for name in names(&entry.join("hooks")) {
        if !name.to_string_lossy().ends_with(".sample") {
            planted.push(entry.join("hooks").join(name));
        }
    }
    for name in names(&entry.join("info")) {
        if name != "exclude" {
            planted.push(entry.join("info").join(name));
        }
    }
    let config = entry.join("config");
    if config.exists() && !only_git_own_keys(&config) {
        planted.push(config);
    }
    // git makes no links in its own folder; one there (`logs/HEAD` → `~/.bashrc`) would have
    // the person's git write through it.
    let links: Vec<PathBuf> = links_inside(entry)
        .into_iter()
        .filter(|l| !planted.iter().any(|p| l.starts_with(p)))
        .collect();
    planted.extend(links);
    planted
        .into_iter()
        .map(|p| {
            let held = hold_back(&p);
            (p, held)
        })
        .collect()
}

/// Every symbolic link below `dir` (links are not followed), within the walk's budget.
fn links_inside(dir: &Path) -> Vec<PathBuf> {
    let mut links = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    let mut visited = 0;
    while let Some(folder) = pending.pop() {
        visited += 1;
        if visited > WALK_BUDGET {
            break;
        }
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(kind) if kind.is_symlink() => links.push(entry.path()),
                Ok(kind) if kind.is_dir() => pending.push(entry.path()),
                _ => {}
            }
        }
    }
    links
}

/// Whether a config file holds only [`GIT_OWN_KEYS`] (subsections aside) and no `ext::`
/// transport — read by git's own parser, so no spelling git accepts reads differently here; a
/// file git cannot read holds something else.
fn only_git_own_keys(config: &Path) -> bool {
    let out = std::process::Command::new("git")
        .args(["config", "--no-includes", "--list", "-z", "--file"])
        .arg(config)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Some(out) = out.ok().filter(|o| o.status.success()) else {
        return false;
    };
    out.stdout
        .split(|b| *b == 0)
        .filter(|e| !e.is_empty())
        .all(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (key, value) = entry.split_once('\n').unwrap_or((&entry, ""));
            let section = key.split('.').next().unwrap_or("");
            let name = key.rsplit('.').next().unwrap_or("");
            let short = format!("{section}.{name}").to_ascii_lowercase();
            GIT_OWN_KEYS.contains(&short.as_str()) && !value.trim_start().starts_with("ext::")
        })
}

/// A folder that became what git takes for a bare repository during the run (git finds it from
/// any folder below): its `HEAD` is held back, so git no longer takes it for one — the folder's
/// other files may be the person's own.
pub(crate) fn hold_back_bare(dir: &Path) -> Vec<(PathBuf, Held)> {
    let head = dir.join("HEAD");
    vec![(head.clone(), hold_back(&head))]
}
