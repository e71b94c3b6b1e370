//! `run_command`, `command_output`, `command_stop`.
//!
//! A command runs under `bash -c` in its own process group, so a timeout or a stop kills the
//! whole tree; its working folder must lie inside a workspace root. Output is capped, keeping
//! the head and the tail. It runs confined (`cowork_contract::confine`): the workspace roots
//! writable but their configuration, the system read-only, the home folder covered, a private
//! /tmp, and no network unless the call asks for it. Long-running services (dev servers, watchers,
//! `http.server`) would never return: they are refused in the foreground and offered as
//! background processes whose output is read with `command_output` and which `command_stop`
//! ends.

use crate::{FilesTools, paths};
use cowork_contract::confine::{self, Aftermath, Confinement, Watch};
use cowork_contract::{CallPlan, Effect, EffectEnv, ToolContext, ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;

const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_TIMEOUT_MS: u64 = 600_000;
/// Kept of each stream: the first and the last half of this.
pub(crate) const OUTPUT_CAP: usize = 30_000;
/// Kept of a background process's output (the newest part).
const BACKGROUND_CAP: usize = 256 << 10;

/// Commands that serve or watch until stopped. Matched on words, anywhere in the command.
const SERVICES: &[&[&str]] = &[
    &["npm", "run", "dev"],
    &["npm", "start"],
    &["npm", "run", "start"],
    &["npm", "run", "serve"],
    &["npm", "run", "watch"],
    &["yarn", "dev"],
    &["yarn", "start"],
    &["pnpm", "dev"],
    &["pnpm", "start"],
    &["npx", "vite"],
    &["vite", "dev"],
    &["next", "dev"],
    &["nuxt", "dev"],
    &["ng", "serve"],
    &["-m", "http.server"],
    &["flask", "run"],
    &["uvicorn"],
    &["gunicorn"],
    &["rails", "server"],
    &["rails", "s"],
    &["manage.py", "runserver"],
    &["cargo", "watch"],
    &["webpack", "serve"],
    &["webpack-dev-server"],
    &["nodemon"],
    &["jekyll", "serve"],
    &["hugo", "server"],
    &["php", "-S"],
    &["tail", "-f"],
    &["docker", "compose", "up"],
    &["docker-compose", "up"],
    &["live-server"],
    &["http-server"],
    &["--watch"],
    &["-w"],
    &["serve", "-s"],
    &["trunk", "serve"],
    &["mkdocs", "serve"],
    &["jupyter", "notebook"],
    &["jupyter", "lab"],
];

/// Tools whose `-w` / `--watch` flag means "watch": elsewhere (`grep -w`) it means something else.
const WATCHERS: &[&str] = &[
    "tsc",
    "jest",
    "vitest",
    "mocha",
    "sass",
    "tailwindcss",
    "esbuild",
    "rollup",
    "webpack",
    "cargo",
    "go",
    "nodemon",
];

/// Why `command` looks like a service that never exits, if it does.
pub fn long_running(command: &str) -> Option<String> {
    let words = words_of(command);
    let has_watcher = words.iter().any(|w| WATCHERS.contains(&w.as_str()));
    let detached = words.iter().any(|w| w == "-d" || w == "--detach");
    SERVICES
        .iter()
        .find(|pattern| {
            let flag_only = pattern.len() == 1 && pattern[0].starts_with('-');
            let docker = matches!(pattern.first(), Some(&"docker" | &"docker-compose"));
            let hit = words.windows(pattern.len()).any(|w| {
                w.iter()
                    .zip(pattern.iter())
                    .all(|(a, b)| a == b || Path::new(a).file_name().is_some_and(|n| n == *b))
            });
            hit && (!flag_only || has_watcher) && !(docker && detached)
        })
        .map(|pattern| format!("`{}` serves or watches until stopped", pattern.join(" ")))
}

fn words_of(command: &str) -> Vec<String> {
    command
        .split(['&', '|', ';', '\n'])
        .flat_map(|part| {
            part.split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Keeps the first and last half of `cap` bytes, on character boundaries.
pub fn head_and_tail(bytes: &[u8], cap: usize) -> (String, bool) {
    let text = String::from_utf8_lossy(bytes);
    if text.len() <= cap {
        return (text.into_owned(), false);
    }
    let half = cap / 2;
    let head_end = text.floor_char_boundary(half);
    let tail_start = text.ceil_char_boundary(text.len() - half);
    let omitted = tail_start - head_end;
    (
        format!(
            "{}\n… {omitted} bytes omitted …\n{}",
            &text[..head_end],
            &text[tail_start..]
        ),
        true,
    )
}

/// The command under `bash -c`, in the one confinement every program Cowork starts runs in
/// (`cowork_contract::confine`): it may change the workspace roots but not their configuration,
/// sees the system and the toolchains the person's PATH names but nothing else of the home
/// folder, and reaches the network only when the call asked for it (and was reviewed so).
fn build_command(
    command: &str,
    cwd: &Path,
    env: &EffectEnv,
    network: bool,
    trusted: bool,
) -> (tokio::process::Command, bool, Watch) {
    let mut jail = Confinement::new(cwd).network(network);
    for root in &env.workspace_roots {
        jail = jail.write(root);
    }
    if let Some(home) = &env.home {
        jail = jail.home(home);
    }
    if let Some(data) = &env.cowork_data {
        // Installed skills are readable (their scripts run through this very review), nothing
        // else of Cowork's own data.
        jail = jail.hide(data).own(&data.join("skills"), false);
    }
    if !trusted {
        // The repository's own hooks, fsmonitor, pager… stay off until the person trusts it.
        jail = jail.envs(crate::git::neutralizing_env());
    }
    let watch = jail.watch();
    let launch = jail
        .envs(git_identity().iter().cloned())
        .command("bash", &["-c", command]);
    (ended_as_a_group(launch.command), launch.confined, watch)
}

/// A program to start with no input and its output captured, in a process group of its own
/// ([`run_to_end`] ends that whole group).
pub(crate) fn ended_as_a_group(command: std::process::Command) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::from(command);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    cmd
}

/// A hint for the model when a command tried to write a git directory, which is read-only inside
/// the sandbox: git's writes are the `git` tool's. (Only a hint: the mount is what holds.)
fn git_write_hint(result: &CommandResult) -> Option<String> {
    let said = |needle: &str| result.stderr.contains(needle) || result.stdout.contains(needle);
    (said("Read-only file system") && said(".git")).then(|| {
        "git's folders are read-only inside commands: use the git tool to add, commit, switch, merge, stash, fetch, pull or push".to_string()
    })
}

/// What a run left where other programs read configuration, in words for the model and the
/// person (see [`Watch`]), and in the log.
pub(crate) fn aftermath_notes(after: &Aftermath, env: &EffectEnv) -> Vec<String> {
    let notes = after.notes(env);
    if !notes.is_empty() {
        tracing::warn!(notes = ?notes, "a command left configuration behind");
    }
    notes
}

/// The person's git identity from their own git configuration, for commits made inside the
/// sandbox, where the home folder (and its `.gitconfig`) is covered. Read once; reading git's
/// configuration runs no program.
fn git_identity() -> &'static [(String, String)] {
    static IDENTITY: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    IDENTITY.get_or_init(|| {
        let get = |key: &str| {
            std::process::Command::new("git")
                .args(["config", "--global", "--get", key])
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let mut vars = Vec::new();
        for (key, role) in [("user.name", "NAME"), ("user.email", "EMAIL")] {
            if let Some(value) = get(key) {
                vars.push((format!("GIT_AUTHOR_{role}"), value.clone()));
                vars.push((format!("GIT_COMMITTER_{role}"), value));
            }
        }
        vars
    })
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid {
        // SAFETY: kill(2) with a negative pid signals the process group we created.
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
    }
}

/// The folder a command (or git) runs in: the call's `cwd`, else the first workspace root,
/// resolved and inside the workspace. `none_open` says what to do when no workspace is open.
pub(crate) fn working_folder(
    env: &EffectEnv,
    cwd: &Option<String>,
    none_open: &str,
) -> Result<PathBuf, ToolError> {
    let cwd = cwd
        .clone()
        .or_else(|| env.workspace_roots.first().map(|r| r.display().to_string()))
        .ok_or_else(|| ToolError::invalid(none_open))?;
    let cwd = paths::resolve(env, &cwd)?;
    // Refused before review: no rule could make a folder outside the workspace a place to run.
    cwd_inside(env, &cwd)?;
    Ok(cwd)
}

pub(crate) fn cwd_inside(env: &EffectEnv, cwd: &Path) -> Result<(), ToolError> {
    // A grant of the whole file system would bind the machine's sockets and devices back in.
    if env.workspace_roots.iter().any(|r| r.parent().is_none()) {
        return Err(ToolError::invalid(
            "the open workspace is the whole computer (/), and commands run confined to a workspace: open a project folder instead",
        ));
    }
    if !env.is_inside_workspace(cwd) {
        return Err(ToolError::SecurityViolation {
            reason: format!(
                "the working folder {} is outside the workspace roots; commands run inside an open workspace",
                cwd.display()
            ),
        });
    }
    if !cwd.is_dir() {
        return Err(ToolError::invalid(format!(
            "{} is not a folder",
            cwd.display()
        )));
    }
    Ok(())
}

/// Background processes of this app run, by id.
#[derive(Clone, Default)]
pub struct Background(Arc<Mutex<HashMap<String, Arc<BackgroundProcess>>>>);

pub struct BackgroundProcess {
    command: String,
    pid: Option<u32>,
    output: Mutex<(Vec<u8>, usize)>,
    exit: Mutex<Option<i32>>,
}

/// What is known of a started command besides its process.
struct Ran {
    sandboxed: bool,
    watch: Watch,
    env: EffectEnv,
}

/// Waits for a foreground command (or its timeout, or the call's cancellation), then ends its
/// whole group and collects the capped output.
pub(crate) async fn run_to_end(
    mut child: tokio::process::Child,
    timeout: Duration,
    ctx: &ToolContext,
) -> ToolResult<CommandResult> {
    let pid = child.id();
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = tokio::spawn(read_all(stdout));
    let err = tokio::spawn(read_all(stderr));
    let (status, timed_out) = tokio::select! {
        status = child.wait() => (status.ok().and_then(|s| s.code()), false),
        _ = tokio::time::sleep(timeout) => { kill_group(pid); let _ = child.wait().await; (None, true) }
        _ = ctx.cancel.cancelled() => { kill_group(pid); let _ = child.wait().await; return Err(ToolError::Cancelled) }
    };
    // The group may hold children that kept the pipes open: end them too.
    kill_group(pid);
    let (out, err) = (out.await.unwrap_or_default(), err.await.unwrap_or_default());
    let (stdout, cut_out) = head_and_tail(&out, OUTPUT_CAP);
    let (stderr, cut_err) = head_and_tail(&err, OUTPUT_CAP);
    Ok(CommandResult {
        exit_code: status,
        stdout,
        stderr,
        timed_out,
        truncated: cut_out || cut_err,
        ..CommandResult::default()
    })
}

impl Background {
    /// Keeps a started command's output (the newest part) and, when it ends, its exit code and
    /// what it left behind ([`Watch`]), told in its output.
    fn start(
        &self,
        input: &RunCommandInput,
        mut child: tokio::process::Child,
        ran: Ran,
    ) -> CommandResult {
        let pid = child.id();
        let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let process = Arc::new(BackgroundProcess {
            command: input.command.clone(),
            pid,
            output: Mutex::new((Vec::new(), 0)),
            exit: Mutex::new(None),
        });
        let id = pid.unwrap_or(0).to_string();
        self.0.lock().unwrap().insert(id.clone(), process.clone());
        for pipe in [
            Box::new(stdout) as Box<dyn tokio::io::AsyncRead + Unpin + Send>,
            Box::new(stderr),
        ] {
            tokio::spawn(keep_output(pipe, process.clone()));
        }
        tokio::spawn(async move {
            let status = child.wait().await.ok().and_then(|s| s.code());
            for note in aftermath_notes(&ran.watch.check(), &ran.env) {
                process.append(format!("\n[{note}]\n").as_bytes());
            }
            *process.exit.lock().unwrap() = Some(status.unwrap_or(-1));
        });
        CommandResult {
            sandboxed: ran.sandboxed,
            background_id: Some(id),
            ..CommandResult::default()
        }
    }
}

async fn keep_output(
    mut pipe: Box<dyn tokio::io::AsyncRead + Unpin + Send>,
    process: Arc<BackgroundProcess>,
) {
    let mut buf = [0u8; 8 << 10];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        process.append(&buf[..n]);
    }
}

impl BackgroundProcess {
    /// Adds output, keeping the newest [`BACKGROUND_CAP`] bytes.
    fn append(&self, bytes: &[u8]) {
        let mut out = self.output.lock().unwrap();
        out.0.extend_from_slice(bytes);
        if out.0.len() > BACKGROUND_CAP {
            let drop = out.0.len() - BACKGROUND_CAP;
            out.0.drain(..drop);
            out.1 = out.1.saturating_sub(drop);
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommandInput {
    /// A bash command line.
    pub command: String,
    /// The working folder (default: the first workspace root); must be inside a root.
    pub cwd: Option<String>,
    /// Milliseconds before the whole process tree is killed (default 120000, at most 600000).
    pub timeout_ms: Option<u64>,
    /// Start it in the background (for servers and watchers) and return at once.
    #[serde(default)]
    pub background: bool,
    /// Let it use the network (installing packages, fetching, pushing). Without it the command
    /// reaches no site and no service on this computer.
    #[serde(default)]
    pub network: bool,
    /// What the command is for: the person reads it in the approval modal and the audit row
    /// (both show the arguments); the tool itself does not need it.
    #[serde(default)]
    #[allow(dead_code)]
    pub description: Option<String>,
}

#[derive(Serialize, JsonSchema, Default)]
pub struct CommandResult {
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub truncated: bool,
    pub sandboxed: bool,
    /// Set for a background start: read it with command_output, end it with command_stop.
    pub background_id: Option<String>,
    pub duration_ms: u64,
    /// What it left where other programs read configuration (held back or named).
    pub configuration: Vec<String>,
}

async fn read_all(mut pipe: impl tokio::io::AsyncRead + Unpin) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 16 << 10];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                // Bounded memory: keep the head and the newest part only.
                if out.len() > 4 * OUTPUT_CAP {
                    let keep_tail = out.split_off(out.len() - OUTPUT_CAP);
                    out.truncate(OUTPUT_CAP);
                    out.extend_from_slice("\n… output cut …\n".as_bytes());
                    out.extend_from_slice(&keep_tail);
                }
            }
        }
    }
    out
}

fn run_command_text(r: &CommandResult) -> String {
    if let Some(id) = &r.background_id {
        return format!(
            "started in the background as {id}: read its output with command_output {{\"id\": \"{id}\"}}, end it with command_stop"
        );
    }
    let mut out = String::new();
    if !r.stdout.is_empty() {
        out.push_str(&r.stdout);
        if !r.stdout.ends_with('\n') {
            out.push('\n');
        }
    }
    if !r.stderr.is_empty() {
        out.push_str("[stderr]\n");
        out.push_str(&r.stderr);
        if !r.stderr.ends_with('\n') {
            out.push('\n');
        }
    }
    match (r.timed_out, r.exit_code) {
        (true, _) => out.push_str(&format!(
            "[timed out after {} ms: the process tree was killed]",
            r.duration_ms
        )),
        (false, Some(code)) => out.push_str(&format!("[exit code {code}]")),
        (false, None) => out.push_str("[killed by a signal]"),
    }
    for note in &r.configuration {
        out.push_str(&format!("\n[{note}]"));
    }
    out
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundId {
    /// The id run_command returned.
    pub id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct BackgroundStatus {
    pub id: String,
    pub command: String,
    pub running: bool,
    pub exit_code: Option<i32>,
    /// Output since the last command_output.
    pub new_output: String,
}

impl Background {
    fn get(&self, id: &str) -> Result<Arc<BackgroundProcess>, ToolError> {
        self.0
            .lock()
            .unwrap()
            .get(id)
            .cloned()
            .ok_or_else(|| ToolError::invalid(format!("no background process {id}")))
    }

    fn status(&self, id: &str) -> Result<BackgroundStatus, ToolError> {
        let p = self.get(id)?;
        let exit = *p.exit.lock().unwrap();
        let mut out = p.output.lock().unwrap();
        let new = out.0[out.1..].to_vec();
        out.1 = out.0.len();
        Ok(BackgroundStatus {
            id: id.to_string(),
            command: p.command.clone(),
            running: exit.is_none(),
            exit_code: exit,
            new_output: head_and_tail(&new, OUTPUT_CAP).0,
        })
    }
}

#[tools(list = command_tools)]
impl FilesTools {
    #[tool(name = "run_command", title = "Run command", category = "files", aliases = ["Bash"],
           arg_aliases = [("timeout", "timeout_ms"), ("run_in_background", "background")],
           timeout = Duration::from_millis(MAX_TIMEOUT_MS + 5_000), effects = [ProcessExec],
           plan = Self::plan_run_command, text = run_command_text,
           description = "Run a bash command in the workspace: timeout kills the process tree, output capped (head and tail), exit code. Servers and watchers must use background=true. It has no network unless network=true.")]
    async fn run_command(
        &self,
        input: &RunCommandInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<CommandResult> {
        let cwd = paths::planned(&ctx.env, plan)?;
        cwd_inside(&ctx.env, &cwd)?;
        if !input.background
            && let Some(why) = long_running(&input.command)
        {
            return Err(ToolError::invalid(format!(
                "{why}: run it with background=true, then read its output with command_output and end it with command_stop"
            )));
        }
        let started = std::time::Instant::now();
        let (mut cmd, sandboxed, watch) = build_command(
            &input.command,
            &cwd,
            &ctx.env,
            input.network,
            ctx.workspace_trusted,
        );
        let child = cmd
            .spawn()
            .map_err(|e| ToolError::failed(format!("could not start bash: {e}")))?;
        let ran = Ran {
            sandboxed,
            watch,
            env: ctx.env.clone(),
        };
        if input.background {
            return Ok(self.background.start(input, child, ran));
        }
        let timeout = Duration::from_millis(
            input
                .timeout_ms
                .unwrap_or(DEFAULT_TIMEOUT_MS)
                .clamp(1, MAX_TIMEOUT_MS),
        );
        let ended = run_to_end(child, timeout, ctx).await;
        // Checked however the run ended (a cancelled one too): what it left is held back.
        let configuration = aftermath_notes(&ran.watch.check(), &ran.env);
        let mut result = ended?;
        result.configuration = configuration;
        result.configuration.extend(git_write_hint(&result));
        result.sandboxed = ran.sandboxed;
        result.duration_ms = started.elapsed().as_millis() as u64;
        Ok(result)
    }

    fn plan_run_command(
        &self,
        input: &RunCommandInput,
        env: &EffectEnv,
    ) -> Result<CallPlan<PathBuf>, ToolError> {
        let cwd = working_folder(
            env,
            &input.cwd,
            "no workspace is open: open a folder (the folder button above the chat, or `--workspace DIR`) to run commands in",
        )?;
        let mut effects = vec![Effect::ProcessExec {
            command: input.command.clone(),
            workspace_code: crate::git::workspace_code(&input.command, &cwd),
        }];
        if input.network {
            effects.push(Effect::NetFetch {
                origin: confine::ANY_NETWORK.into(),
            });
        }
        Ok(CallPlan::with(effects, cwd))
    }

    #[tool(name = "command_output", title = "Background output", category = "files",
           aliases = ["BashOutput"], arg_aliases = [("bash_id", "id")], read_only,
           description = "New output and state of a background process started by run_command.")]
    async fn command_output(&self, input: &BackgroundId) -> ToolResult<BackgroundStatus> {
        self.background.status(&input.id)
    }

    #[tool(name = "command_stop", title = "Stop background process", category = "files",
           aliases = ["KillShell"], arg_aliases = [("shell_id", "id")], idempotent,
           description = "End a background process started by run_command (its whole process tree).")]
    async fn command_stop(&self, input: &BackgroundId) -> ToolResult<BackgroundStatus> {
        let p = self.background.get(&input.id)?;
        kill_group(p.pid);
        for _ in 0..100 {
            if p.exit.lock().unwrap().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let status = self.background.status(&input.id);
        self.background.0.lock().unwrap().remove(&input.id);
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_are_detected_and_ordinary_commands_are_not() {
        for cmd in [
            "npm run dev",
            "python3 -m http.server 8000",
            "cd web && npx vite",
            "tsc -w",
            "cargo watch -x test",
            "docker compose up",
            "uvicorn app:app --reload",
            "tail -f log.txt",
        ] {
            assert!(long_running(cmd).is_some(), "{cmd}");
        }
        for cmd in [
            "npm run build",
            "grep -w foo x",
            "cargo test",
            "docker compose up -d",
            "python3 -m pytest",
            "ls -la",
            "git status",
        ] {
            assert!(
                long_running(cmd).is_none(),
                "{cmd}: {:?}",
                long_running(cmd)
            );
        }
    }

    #[test]
    fn head_and_tail_keep_both_ends() {
        let text: String = (0..10_000).map(|i| format!("{i}\n")).collect();
        let (out, cut) = head_and_tail(text.as_bytes(), 1000);
        assert!(
            cut && out.starts_with("0\n1\n")
                && out.ends_with("9999\n")
                && out.contains("bytes omitted")
        );
    }
}
