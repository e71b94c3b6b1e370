//! Git in a workspace the person has not trusted.
//!
//! A repository's own configuration can make git run programs: `core.fsmonitor` and hooks on
//! `git status`, clean filters on any file that changed, `!` aliases, diff and merge drivers. So
//! a rule like `run_command(git status:*)` would run whatever a cloned repository planted. Two
//! mechanisms close it (docs/trust.md, "Commands in an untrusted repository"):
//! - [`neutralizing_env`]: every command run in an untrusted workspace gets git settings that
//!   switch off what can be switched off by name (fsmonitor, hooks, pager, editors, ssh command,
//!   credential helper, signing program), through `GIT_CONFIG_COUNT`, which outranks the
//!   repository's config and reaches git however deep it is started.
//! - [`workspace_code`]: what cannot be switched off by name (filters, drivers, textconv, `!`
//!   aliases, remote programs — their names are the repository's choice) is found when the call's
//!   effects are computed and reported on the effect; the PolicyBridge then asks instead of
//!   letting an allow rule cover the command, until the person trusts the workspace.
//!
//! `git config --list` itself runs no repository code (it reads config files only).

use std::path::Path;

/// Settings that make git run nothing the repository configured, by name.
const NEUTRAL: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("gpg.program", "gpg"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.defaultKeyCommand", "false"),
    ("protocol.ext.allow", "never"),
    ("core.alternateRefsCommand", ""),
];

/// The environment for a command in an untrusted workspace.
pub fn neutralizing_env() -> Vec<(String, String)> {
    let mut env = vec![
        ("GIT_CONFIG_COUNT".to_string(), NEUTRAL.len().to_string()),
        ("GIT_PAGER".into(), "cat".into()),
        ("GIT_EDITOR".into(), "false".into()),
        ("GIT_SEQUENCE_EDITOR".into(), "false".into()),
        ("GIT_TERMINAL_PROMPT".into(), "0".into()),
        ("GIT_ASKPASS".into(), String::new()),
    ];
    for (i, (key, value)) in NEUTRAL.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), key.to_string()));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), value.to_string()));
    }
    env
}

/// Whether the command line starts git anywhere (`git`, `/usr/bin/git`, after `&&`…).
fn mentions_git(command: &str) -> bool {
    command
        .split(|c: char| c.is_whitespace() || ";&|()`$<>".contains(c))
        .any(|w| {
            Path::new(w.trim_matches(['"', '\'']))
                .file_name()
                .is_some_and(|n| n == "git")
        })
}

/// What the repositories a command's git would use (its folder, and any `git -C DIR`) configured
/// that runs a program and is not switched off by [`neutralizing_env`]: `key=value` entries.
pub fn workspace_code(command: &str, cwd: &Path) -> Vec<String> {
    if !mentions_git(command) {
        return vec![];
    }
    let mut dirs = vec![cwd.to_path_buf()];
    let words = shlex::split(command)
        .unwrap_or_else(|| command.split_whitespace().map(str::to_string).collect());
    for pair in words.windows(2) {
        if pair[0] == "-C" {
            dirs.push(cwd.join(&pair[1]));
        }
    }
    let mut found = Vec::new();
    for dir in dirs {
        for entry in repository_config(&dir) {
            if !found.contains(&entry) {
                found.push(entry);
            }
        }
    }
    found
}

/// Everything a repository configured git to run, the entries [`neutralizing_env`] switches off
/// included, and its hooks: what trusting the folder lets run (the trust review shows it).
pub fn configured_programs(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = repository_programs(dir)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    found.extend(hooks(dir));
    found
}

/// The repository-scoped settings that name a program git would run (those [`neutralizing_env`]
/// switches off by name included), as (key, value): what the `git` tool switches off.
pub fn repository_programs(dir: &Path) -> Vec<(String, String)> {
    scan(dir, |key, value| {
        runs_code(key, value) || NEUTRAL.iter().any(|(k, _)| k.eq_ignore_ascii_case(key))
    })
}

/// Every repository-scoped setting (local and worktree config, and what they include), as
/// (key, value): what the `git` tool judges before it runs.
pub fn repository_settings(dir: &Path) -> Vec<(String, String)> {
    scan(dir, |_, _| true)
}

/// Runs git for what it reads (`rev-parse`, `remote`, `check-ref-format`), with nothing the
/// repository configured switched on: its output, or what git said when it failed.
pub(crate) fn read_only_git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut cmd = std::process::Command::new("git");
    cmd.args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null());
    for (k, v) in neutralizing_env() {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("could not start git: {e}"))?;
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        false => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
    }
}

/// The repository's hooks (where git looks for them: `core.hooksPath`, a worktree's common
/// folder), each with a digest of its content, so trust pins what a hook does, not its name.
fn hooks(dir: &Path) -> Vec<String> {
    use sha2::Digest;
    let Ok(out) = std::process::Command::new("git")
        .args(["rev-parse", "--path-format=absolute", "--git-path", "hooks"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return vec![];
    };
    let folder = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return vec![];
    };
    let mut hooks: Vec<String> = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".sample"))
        .map(|e| {
            let digest = std::fs::read(e.path())
                .map(|bytes| hex::encode(&sha2::Sha256::digest(&bytes)[..8]))
                .unwrap_or_else(|_| "unreadable".into());
            let path = e.path();
            let root = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
            let shown = path.strip_prefix(&root).unwrap_or(&path);
            format!("hook {} ({digest})", shown.display())
        })
        .collect();
    hooks.sort();
    hooks
}

/// The repository-scoped config entries (local and worktree) that run programs.
fn repository_config(dir: &Path) -> Vec<String> {
    let found = scan(dir, runs_code).into_iter();
    found.map(|(k, v)| format!("{k}={v}")).collect()
}

/// Repository-scoped (local, worktree) config entries `keep` selects, as (key, value).
fn scan(dir: &Path, keep: impl Fn(&str, &str) -> bool) -> Vec<(String, String)> {
    if !dir.is_dir() {
        return vec![];
    }
    let mut cmd = std::process::Command::new("git");
    cmd.args(["config", "--list", "--show-scope", "-z"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in neutralizing_env() {
        cmd.env(k, v);
    }
    let Ok(out) = cmd.output() else { return vec![] };
    let mut found = Vec::new();
    let mut fields = out.stdout.split(|b| *b == 0);
    while let (Some(scope), Some(entry)) = (fields.next(), fields.next()) {
        if scope != b"local" && scope != b"worktree" {
            continue;
        }
        let entry = String::from_utf8_lossy(entry);
        let (key, value) = entry.split_once('\n').unwrap_or((&entry, ""));
        if keep(key, value) {
            found.push((key.to_string(), value.to_string()));
        }
    }
    found
}

/// Config keys (as git lists them: section and name lower-cased) whose value is a program git
/// runs, and that [`NEUTRAL`] does not override.
fn runs_code(key: &str, value: &str) -> bool {
    let parts: Vec<&str> = key.split('.').collect();
    let (section, name) = (parts[0], parts[parts.len() - 1]);
    let subsection = parts.len() > 2;
    match (section, name) {
        ("filter", "clean" | "smudge" | "process") if subsection => true,
        ("diff", "textconv" | "command") if subsection => true,
        ("diff", "external") => true,
        ("merge", "driver") if subsection => true,
        ("difftool" | "mergetool", "cmd") if subsection => true,
        ("alias", _) | ("submodule", "update") => value.trim_start().starts_with('!'),
        ("core", "gitproxy") => true,
        ("remote", "uploadpack" | "receivepack" | "vcs") if subsection => true,
        // A transport that is a program: `ext::sh -c …`, directly or through insteadOf.
        ("remote", "url" | "pushurl") => value.trim_start().starts_with("ext::"),
        ("url", "insteadof" | "pushinsteadof") => key.starts_with("url.ext::"),
        ("protocol", "allow") => value == "always",
        ("core", "alternaterefscommand") => !value.is_empty(),
        ("pager", _) => !matches!(
            value,
            "true" | "false" | "1" | "0" | "yes" | "no" | "on" | "off"
        ),
        ("difftool" | "mergetool", "path") if subsection => true,
        ("interactive", "difffilter") => true,
        ("sendemail", "sendmailcmd") => true,
        ("lfs", "path") => true,
        ("gpg", "defaultkeycommand") => !value.is_empty(),
        ("credential", "helper") if subsection => !value.is_empty(),
        ("include" | "includeif", "path") => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_a_planted_repository_would_run() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path();
        let git = |args: &[&str]| {
            assert!(
                std::process::Command::new("git")
                    .args(args)
                    .current_dir(repo)
                    .output()
                    .unwrap()
                    .status
                    .success()
            )
        };
        git(&["init", "-q"]);
        assert_eq!(
            workspace_code("git status", repo),
            Vec::<String>::new(),
            "a fresh repository runs nothing of its own"
        );
        git(&["config", "core.fsmonitor", "touch /tmp/pwned"]);
        assert_eq!(
            workspace_code("git status", repo),
            Vec::<String>::new(),
            "fsmonitor is switched off by the environment instead"
        );
        git(&["config", "filter.lfs.clean", "sh -c evil"]);
        git(&["config", "alias.st", "!sh -c evil"]);
        git(&["config", "alias.lg", "log --oneline"]);
        let found = workspace_code("git status --porcelain", repo);
        assert_eq!(
            found,
            vec![
                "filter.lfs.clean=sh -c evil".to_string(),
                "alias.st=!sh -c evil".to_string()
            ]
        );
        assert_eq!(
            workspace_code("ls -la", repo),
            Vec::<String>::new(),
            "only commands that start git are looked at"
        );
        assert_eq!(workspace_code("cd x && /usr/bin/git diff", repo).len(), 2);
    }

    #[test]
    fn the_environment_switches_off_fsmonitor_and_hooks() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path();
        let marker = repo.join("ran");
        let run = |args: &[&str], neutral: bool| {
            let mut cmd = std::process::Command::new("git");
            cmd.args(args).current_dir(repo);
            if neutral {
                for (k, v) in neutralizing_env() {
                    cmd.env(k, v);
                }
            }
            cmd.output().unwrap()
        };
        run(&["init", "-q"], false);
        run(
            &[
                "config",
                "core.fsmonitor",
                &format!("touch {}; echo", marker.display()),
            ],
            false,
        );
        std::fs::write(repo.join("a.txt"), "a").unwrap();
        run(&["status", "--porcelain"], true);
        assert!(
            !marker.exists(),
            "neutralized: the planted fsmonitor did not run"
        );
        run(&["status", "--porcelain"], false);
        assert!(marker.exists(), "the test plants a working fsmonitor");
    }
}
