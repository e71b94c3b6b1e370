//! `git`: git's writes — add, commit, switch, merge, stash, fetch, pull, push — which commands
//! cannot make, since every git directory is read-only inside the sandbox (a command could
//! otherwise leave git a program to run outside it).
//!
//! The person's git runs here, outside the sandbox, so it runs only where nothing the repository
//! says can make it run a program or go elsewhere. That is judged by what may be there, not by
//! what may not: the repository's own settings must all be ordinary ones
//! ([`ORDINARY_SETTINGS`], what `git init`, `clone`, `remote add` and a person's identity
//! write); anything else — a filter, a signing program, a proxy, a promisor remote, a key git
//! adds next year — refuses the call, naming it. Its git directory must lie in the workspace,
//! submodules are not entered, hooks never run, and a remote must be a network address (a
//! remote that is a folder starts that repository's own programs). The tool offers operations,
//! not git's options. Its effects are what the repository resolves to: its top folder, and
//! every address of the remote.

use crate::command::{aftermath_notes, cwd_inside, ended_as_a_group, run_to_end, working_folder};
use crate::{FilesTools, paths};
use cowork_contract::{
    CallPlan, Effect, EffectEnv, ToolContext, ToolError, ToolResult, confine, tools,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum GitAction {
    Add,
    Commit,
    Switch,
    Merge,
    Stash,
    StashPop,
    Fetch,
    Pull,
    Push,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitInput {
    /// What to do: add (stage paths), commit (message; all=true stages tracked changes first),
    /// switch (to branch; create=true makes it), merge (branch into the current one), stash /
    /// stash_pop (put uncommitted changes aside / bring them back), fetch, pull, push (remote,
    /// default origin; branch, default the current one's).
    pub action: GitAction,
    /// add: the files or folders to stage.
    #[serde(default)]
    pub paths: Vec<String>,
    /// commit: the commit message.
    pub message: Option<String>,
    /// commit: stage the changes of every tracked file first.
    #[serde(default)]
    pub all: bool,
    /// switch, merge, pull, push: the branch.
    pub branch: Option<String>,
    /// switch: make the branch from the current commit.
    #[serde(default)]
    pub create: bool,
    /// fetch, pull, push: a remote the repository names (default origin).
    pub remote: Option<String>,
    /// The repository's folder (default: the workspace).
    pub cwd: Option<String>,
}

#[derive(Serialize, JsonSchema, Debug)]
pub struct GitResult {
    /// What git printed (head and tail when long).
    pub output: String,
}

/// The repository settings the git tool runs with besides what git itself writes
/// ([`confine::GIT_OWN_KEYS`]: `init`, `clone`, `remote add`, `branch --set-upstream`), as
/// `section.name` (subsections aside): a person's identity, line endings, and the plain choices
/// of how pulls and pushes go. An allowlist, so a setting missing here refuses a call (and says
/// which), never runs.
const ORDINARY_SETTINGS: &[&str] = &[
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.quotepath",
    "remote.pushurl",
    "remote.push",
    "remote.prune",
    "remote.tagopt",
    "branch.rebase",
    "user.name",
    "user.email",
    "pull.rebase",
    "pull.ff",
    "merge.ff",
    "push.default",
    "push.autosetupremote",
    "fetch.prune",
    "include.path",
    "includeif.path",
];

/// The reviewed call: git's arguments and the folder it runs in.
pub struct GitPlan {
    top: PathBuf,
    args: Vec<String>,
}

/// Fetching and pushing wait on the network; everything else is local.
const GIT_TIMEOUT: Duration = Duration::from_secs(300);

fn git_text(r: &GitResult) -> String {
    match r.output.trim() {
        "" => "done".to_string(),
        said => said.to_string(),
    }
}

/// The person's git, for one call in `top`, confined as every program Cowork starts: the
/// workspace writable, this repository's git directory writable but for the parts that make git
/// run programs, the home folder hidden but for the person's git settings (read-only), the
/// network only for fetch, pull and push. What a symlink or an alternate inside the repository
/// points at outside is not there. No hooks, no submodules entered, no lazy fetch, no prompts.
fn confined_git(
    env: &EffectEnv,
    top: &Path,
    git_dirs: &[PathBuf],
    network: bool,
    args: &[String],
) -> Result<(tokio::process::Command, confine::Watch), ToolError> {
    let mut jail = confine::Confinement::new(top).network(network);
    for root in &env.workspace_roots {
        jail = jail.write(root);
    }
    if let Some(home) = &env.home {
        jail = jail.home(home);
        for settings in [".gitconfig", ".config/git/config"] {
            jail = jail.read(&home.join(settings));
        }
    }
    if let Some(data) = &env.cowork_data {
        jail = jail.hide(data);
    }
    for dir in git_dirs {
        jail = jail.own(dir, true);
        for part in confine::GIT_PROGRAM_PARTS {
            jail = jail.protect(&dir.join(part));
        }
    }
    let settings = [
        ("core.hooksPath", "/dev/null"),
        ("core.fsmonitor", "false"),
        ("protocol.ext.allow", "never"),
        ("submodule.recurse", "false"),
        ("diff.ignoreSubmodules", "all"),
    ];
    jail = jail.env("GIT_CONFIG_COUNT", settings.len().to_string());
    for (i, (key, value)) in settings.iter().enumerate() {
        jail = jail
            .env(format!("GIT_CONFIG_KEY_{i}"), *key)
            .env(format!("GIT_CONFIG_VALUE_{i}"), *value);
    }
    for (key, value) in [
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_NO_LAZY_FETCH", "1"),
        ("GIT_EDITOR", "false"),
        ("GIT_PAGER", "cat"),
    ] {
        jail = jail.env(key, value);
    }
    let watch = jail.watch();
    let launch = jail.command("git", args);
    if !launch.confined {
        return Err(ToolError::failed(
            "the git tool runs git confined, and bubblewrap is not available here: install it (sudo apt install bubblewrap), or run git yourself in a terminal",
        ));
    }
    Ok((ended_as_a_group(launch.command), watch))
}

/// The repository's git directory and its common directory (a worktree's), canonical.
fn git_dirs(top: &Path) -> Result<Vec<PathBuf>, ToolError> {
    let mut dirs = Vec::new();
    for which in ["--absolute-git-dir", "--git-common-dir"] {
        let dir = crate::git::read_only_git(top, &["rev-parse", "--path-format=absolute", which])
            .map_err(|said| {
            ToolError::invalid(format!(
                "git could not read the repository at {}: {said}",
                top.display()
            ))
        })?;
        let dir = PathBuf::from(dir.trim());
        let dir = dir.canonicalize().unwrap_or(dir);
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    Ok(dirs)
}

/// Refuses a repository git would not run plainly in: a setting outside [`ORDINARY_SETTINGS`]
/// (its own config, a worktree's, what it includes), a git directory outside the workspace
/// (its history would be written there), or submodules (their configs are theirs).
fn repository_is_ordinary(env: &EffectEnv, top: &Path) -> Result<Vec<PathBuf>, ToolError> {
    // Keys only: a value may be a secret read from an included file.
    let mut unusual: Vec<String> = crate::git::repository_settings(top)
        .into_iter()
        .filter(|(key, value)| !ordinary_setting(key, value))
        .map(|(key, _)| key)
        .collect();
    unusual.dedup();
    if !unusual.is_empty() {
        return Err(ToolError::invalid(format!(
            "the repository at {} has settings the git tool does not run with (they can make git run a program or go elsewhere): {}. Run git yourself in a terminal, or remove them (git config --unset KEY)",
            top.display(),
            unusual.join(", ")
        )));
    }
    let dirs = git_dirs(top)?;
    for dir in &dirs {
        if !env.is_inside_workspace(dir) {
            return Err(ToolError::SecurityViolation {
                reason: format!(
                    "the repository's history lives at {}, outside the workspace: open that folder as the workspace to change it",
                    dir.display()
                ),
            });
        }
    }
    if top.join(".gitmodules").exists() {
        return Err(ToolError::invalid(
            "the repository has submodules, which the git tool does not enter yet: run git yourself in a terminal",
        ));
    }
    Ok(dirs)
}

/// Whether a repository setting is an ordinary one: its `section.name` is listed, and an
/// address is not a program (a folder is refused only when it is reached).
fn ordinary_setting(key: &str, value: &str) -> bool {
    let section = key.split('.').next().unwrap_or("");
    let name = key.rsplit('.').next().unwrap_or("");
    let short = format!("{section}.{name}").to_ascii_lowercase();
    let address = matches!(short.as_str(), "remote.url" | "remote.pushurl");
    let program = address && remote_reach(value) == RemoteReach::Program;
    let listed = |list: &[&str]| list.contains(&short.as_str());
    (listed(ORDINARY_SETTINGS) || listed(confine::GIT_OWN_KEYS)) && !program
}

/// The repository's top folder, as git finds it from `cwd`.
fn repository_top(cwd: &Path) -> Result<PathBuf, ToolError> {
    let out = crate::git::read_only_git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|said| {
        ToolError::invalid(format!(
            "git could not find a repository at {}: {said} (a new one is made with run_command: git init)",
            cwd.display()
        ))
    })?;
    let top = PathBuf::from(out.trim());
    top.canonicalize()
        .map_err(|e| ToolError::invalid(format!("the repository's folder {}: {e}", top.display())))
}

/// git's arguments for the action, checked, and the remote it reaches (if any).
fn arguments(
    input: &GitInput,
    env: &EffectEnv,
    top: &Path,
) -> Result<(Vec<String>, Option<String>), ToolError> {
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let branch = || -> Result<String, ToolError> {
        let name = input.branch.as_deref();
        checked_branch(
            top,
            name.ok_or_else(|| ToolError::invalid("name the branch (branch)"))?,
        )
    };
    let with_branch = |w: &[&str]| -> Result<(Vec<String>, Option<String>), ToolError> {
        let mut args = words(w);
        args.push(branch()?);
        Ok((args, None))
    };
    match input.action {
        GitAction::Add => Ok((add_arguments(&input.paths, env, top)?, None)),
        GitAction::Commit => {
            let message = input.message.clone().filter(|m| !m.trim().is_empty());
            let message =
                message.ok_or_else(|| ToolError::invalid("write a commit message (message)"))?;
            let mut args = words(&["commit", "--no-verify"]);
            if input.all {
                args.push("--all".into());
            }
            args.extend(["--message".into(), message]);
            Ok((args, None))
        }
        GitAction::Switch if input.create => with_branch(&["switch", "--create"]),
        GitAction::Switch => with_branch(&["switch", "--no-guess"]),
        GitAction::Merge => with_branch(&["merge", "--no-edit", "--no-verify"]),
        GitAction::Stash => Ok((words(&["stash", "push"]), None)),
        GitAction::StashPop => Ok((words(&["stash", "pop"]), None)),
        GitAction::Fetch | GitAction::Pull | GitAction::Push => {
            let remote = checked_remote(top, input.remote.as_deref().unwrap_or("origin"))?;
            let mut args = words(match input.action {
                GitAction::Fetch => &["fetch", "--no-recurse-submodules"],
                GitAction::Pull => &[
                    "pull",
                    "--no-edit",
                    "--no-verify",
                    "--no-recurse-submodules",
                ],
                _ => &["push", "--no-verify", "--no-recurse-submodules"],
            });
            args.push(remote.clone());
            if input.branch.is_some() && input.action != GitAction::Fetch {
                args.push(branch()?);
            }
            Ok((args, Some(remote)))
        }
    }
}

/// `git add -- PATHS`, each path resolved as every file tool resolves one and kept inside the
/// repository.
fn add_arguments(paths: &[String], env: &EffectEnv, top: &Path) -> Result<Vec<String>, ToolError> {
    if paths.is_empty() {
        return Err(ToolError::invalid("name the paths to add (paths)"));
    }
    let mut args = vec!["add".to_string(), "--".to_string()];
    for path in paths {
        let path = paths::resolve(env, &top.join(path).display().to_string())?;
        if !path.starts_with(top) {
            return Err(ToolError::invalid(format!(
                "{} is outside the repository at {}",
                path.display(),
                top.display()
            )));
        }
        args.push(path.display().to_string());
    }
    Ok(args)
}

/// A branch name git accepts as one, and that no option could be read from.
fn checked_branch(top: &Path, name: &str) -> Result<String, ToolError> {
    let valid = !name.starts_with(['-', '+'])
        && crate::git::read_only_git(top, &["check-ref-format", "--branch", name]).is_ok();
    match valid {
        true => Ok(name.to_string()),
        false => Err(ToolError::invalid(format!(
            "{name:?} is not a branch name git accepts"
        ))),
    }
}

/// A remote the repository names (an address cannot be given here: where git goes is what the
/// repository says, and the review shows it).
fn checked_remote(top: &Path, name: &str) -> Result<String, ToolError> {
    let listed = crate::git::read_only_git(top, &["remote"]).unwrap_or_default();
    match listed.lines().any(|r| r == name) {
        true => Ok(name.to_string()),
        false => Err(ToolError::invalid(format!(
            "the repository has no remote named {name:?} (it has: {})",
            if listed.trim().is_empty() {
                "none".to_string()
            } else {
                listed.split_whitespace().collect::<Vec<_>>().join(", ")
            }
        ))),
    }
}

/// What reaching a remote is: a site for each of its addresses (`https://host`, `ssh://host`
/// for `host:path`) — git pushes to every one. A remote that is a folder or a program is
/// refused: git would start that repository's own programs (its hooks), or the program itself.
fn remote_effects(top: &Path, remote: &str, push: bool) -> Result<Vec<Effect>, ToolError> {
    let mut args = vec!["remote", "get-url", "--all"];
    if push {
        args.push("--push");
    }
    args.push(remote);
    let urls = crate::git::read_only_git(top, &args).map_err(|said| {
        ToolError::invalid(format!("the remote {remote:?} has no address: {said}"))
    })?;
    let mut effects = Vec::new();
    for url in urls.lines().map(str::trim).filter(|u| !u.is_empty()) {
        match remote_reach(url) {
            RemoteReach::Site(origin) => effects.push(Effect::NetFetch { origin }),
            RemoteReach::Folder(_) | RemoteReach::Program => {
                return Err(ToolError::SecurityViolation {
                    reason: format!(
                        "the remote {remote:?} is {url}, not a network address: git would start that repository's own programs there. Run git yourself in a terminal for it"
                    ),
                });
            }
        }
    }
    Ok(effects)
}

#[derive(Debug, PartialEq)]
enum RemoteReach {
    Site(String),
    Folder(String),
    Program,
}

/// Where a remote's address reaches, read as git reads it (`git help urls`): a URL by a URL
/// parser (the host is what the parser and curl take, not what the text seems to say:
/// `http://a:1#@b/` reaches `a`), an address with a colon before any slash as ssh's host.
fn remote_reach(address: &str) -> RemoteReach {
    if names_a_helper(address) {
        // `<transport>::<address>` (`ext::`, `fd::`): a remote helper, which is a program.
        return RemoteReach::Program;
    }
    if address.contains("://") {
        let Ok(parsed) = url::Url::parse(address) else {
            return RemoteReach::Program;
        };
        if parsed.scheme() == "file" {
            return RemoteReach::Folder(parsed.path().to_string());
        }
        return match (parsed.host_str(), parsed.port()) {
            (Some(host), Some(port)) => {
                RemoteReach::Site(format!("{}://{host}:{port}", parsed.scheme()))
            }
            (Some(host), None) => RemoteReach::Site(format!("{}://{host}", parsed.scheme())),
            (None, _) => RemoteReach::Program,
        };
    }
    // ssh's short form, `[user@]host:path`; an IPv6 host is bracketed (`[::1]:path`).
    let after_user = address.find('@').map_or(0, |at| at + 1);
    let colon = match address[after_user..].starts_with('[') {
        true => address[after_user..]
            .find("]:")
            .map(|end| after_user + end + 1),
        false => address.find(':'),
    };
    match (colon, address.find('/')) {
        (Some(colon), slash) if slash.is_none_or(|s| colon < s) => {
            let host = &address[..colon];
            let host = host.rsplit('@').next().unwrap_or(host);
            RemoteReach::Site(format!("ssh://{host}"))
        }
        _ => RemoteReach::Folder(address.to_string()),
    }
}

/// Whether git reads `address` as `<transport>::<address>`, as its transport code does: a run
/// of scheme characters from the start (a letter or digit, then also `+ - .`) followed by `::`.
/// An IPv6 address (`https://[::1]/r`) has `::` elsewhere and is a URL.
fn names_a_helper(address: &str) -> bool {
    let scheme = address
        .char_indices()
        .take_while(|&(i, c)| c.is_ascii_alphanumeric() || (i > 0 && "+-.".contains(c)))
        .count();
    address[scheme..].starts_with("::")
}

#[tools(list = git_tools)]
impl FilesTools {
    #[tool(name = "git", title = "Git", category = "files", effects = [FsWrite, FsRead, NetFetch],
           timeout = GIT_TIMEOUT + Duration::from_secs(5), plan = Self::plan_git, text = git_text,
           description = "Change a git repository: add, commit, switch, merge, stash, stash_pop, fetch, pull, push. Use this for git's writes (inside run_command git's folder is read-only; reading with git status/log/diff works there). The repository's own hooks and configured programs do not run.")]
    async fn git(&self, _: &GitInput, plan: &GitPlan, ctx: &ToolContext) -> ToolResult<GitResult> {
        let top = paths::planned(&ctx.env, &plan.top)?;
        cwd_inside(&ctx.env, &top)?;
        // Judged again at use: the repository may have changed since the review.
        let git_dirs = repository_is_ordinary(&ctx.env, &top)?;
        let network = matches!(plan.args[0].as_str(), "fetch" | "pull" | "push");
        let (mut cmd, watch) = confined_git(&ctx.env, &top, &git_dirs, network, &plan.args)?;
        let child = cmd
            .spawn()
            .map_err(|e| ToolError::failed(format!("could not start git: {e}")))?;
        // run_command's own ending: a timeout or a cancel ends git's whole group (a remote
        // helper, ssh), not only the sandbox's first process.
        let ended = run_to_end(child, GIT_TIMEOUT, ctx).await;
        // What the run left that git does not write itself is held back however it ended (a
        // cancelled run too) and told, as for run_command.
        let notes = aftermath_notes(&watch.check(), &ctx.env);
        let out = ended?;
        if out.timed_out {
            return Err(ToolError::failed(format!(
                "git {} did not finish within {} s",
                plan.args[0],
                GIT_TIMEOUT.as_secs()
            )));
        }
        let mut output = out.stdout;
        output.push_str(&out.stderr);
        for note in notes {
            output.push_str(&format!("\n[{note}]"));
        }
        if out.exit_code != Some(0) {
            return Err(ToolError::failed(format!(
                "git {} failed: {}",
                plan.args.join(" "),
                output.trim()
            )));
        }
        Ok(GitResult { output })
    }

    fn plan_git(&self, input: &GitInput, env: &EffectEnv) -> Result<CallPlan<GitPlan>, ToolError> {
        let cwd = working_folder(
            env,
            &input.cwd,
            "no workspace is open: open a folder to use git in",
        )?;
        let top = repository_top(&cwd)?;
        cwd_inside(env, &top)?;
        repository_is_ordinary(env, &top)?;
        let (args, remote) = arguments(input, env, &top)?;
        let push = input.action == GitAction::Push;
        let mut effects = match push {
            true => vec![],
            false => vec![Effect::FsWrite {
                path: top.display().to_string(),
            }],
        };
        if let Some(remote) = remote {
            effects.extend(remote_effects(&top, &remote, push)?);
        }
        Ok(CallPlan::with(effects, GitPlan { top, args }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_reaches_what_its_address_says() {
        let site = |s: &str| RemoteReach::Site(s.to_string());
        assert_eq!(
            remote_reach("https://github.com/o/r.git"),
            site("https://github.com")
        );
        assert_eq!(
            remote_reach("ssh://git@host.example:2222/r"),
            site("ssh://host.example:2222")
        );
        assert_eq!(
            remote_reach("git@github.com:o/r.git"),
            site("ssh://github.com")
        );
        assert_eq!(
            remote_reach("https://[::1]:8443/r.git"),
            site("https://[::1]:8443")
        );
        assert_eq!(
            remote_reach("git@[fd00::2]:o/r.git"),
            site("ssh://[fd00::2]")
        );
        for helper in ["ext::sh -c touch% /tmp/x", "fd::3", "a+b.c-d::x", "::x"] {
            assert_eq!(remote_reach(helper), RemoteReach::Program, "{helper}");
        }
        assert_eq!(
            remote_reach("../other"),
            RemoteReach::Folder("../other".into())
        );
        assert_eq!(
            remote_reach("/srv/r.git"),
            RemoteReach::Folder("/srv/r.git".into())
        );
        assert_eq!(
            remote_reach("file:///srv/r.git"),
            RemoteReach::Folder("/srv/r.git".into())
        );
        assert_eq!(remote_reach("ext::sh -c evil"), RemoteReach::Program);
        assert_eq!(remote_reach("fd::3"), RemoteReach::Program);
        assert_eq!(
            remote_reach("./a:b/c"),
            RemoteReach::Folder("./a:b/c".into())
        );
    }
}
