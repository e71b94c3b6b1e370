//! Hooks: the person's own commands at points of a call's life and at a turn's end — Claude
//! Code's `hooks` in settings.json (`PreToolUse`, `PostToolUse`, `Stop`), so scripts written for
//! it run here. A hook can refuse a call (exit 2, `"decision": "block"`, or a
//! `permissionDecision` of `"deny"`); nothing it says lets through a call the review would not,
//! so an "allow" is ignored. Hooks come from the person's settings, or from a workspace they
//! trust (shown in the trust review). They run confined as `run_command` does — the workspace
//! writable, the home folder covered, no network — with the call as JSON on their input.

use cowork_contract::EffectEnv;
use cowork_contract::confine::Confinement;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum HookEvent {
    /// Before a call the review lets through runs (before the person is asked): it may refuse.
    PreToolUse,
    /// After a call ran.
    PostToolUse,
    /// When the model's turn ends.
    Stop,
}

impl HookEvent {
    pub const ALL: [HookEvent; 3] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
        }
    }
}

/// The longest a hook may run unless its settings say otherwise (Claude Code's default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// What a hook may print that is read: a reason, a decision.
const OUTPUT_MAX: u64 = 64 * 1024;

#[derive(Clone, Debug)]
pub struct Hook {
    pub event: HookEvent,
    /// Which tools, as Claude Code writes it: a regular expression over the whole name
    /// (`write_file|edit_file`, `mcp__github__.*`); empty or `*` is every tool.
    pub matcher: String,
    /// The matcher read once, when the settings are: the gate asks it at every call.
    tools: Tools,
    /// A `bash -c` command line.
    pub command: String,
    pub timeout_secs: u64,
    /// The settings file it is written in.
    pub file: PathBuf,
}

#[derive(Clone, Debug)]
enum Tools {
    Every,
    Matching(regex::Regex),
    /// Not a valid expression: every tool (a gate must not silently stop gating), and why.
    Broken(String),
}

impl Tools {
    fn read(matcher: &str) -> Tools {
        if matcher.is_empty() || matcher == "*" {
            return Tools::Every;
        }
        match regex::Regex::new(&format!("^(?:{matcher})$")) {
            Ok(re) => Tools::Matching(re),
            Err(e) => Tools::Broken(e.to_string()),
        }
    }
}

/// What a hook said of a call.
#[derive(Clone, Debug, PartialEq)]
pub enum HookVerdict {
    GoOn,
    /// It refused, saying why (or what went wrong running it, for a hook that must answer).
    Refused(String),
}

impl Hook {
    pub fn new(
        event: HookEvent,
        matcher: &str,
        command: &str,
        timeout: Option<u64>,
        file: &Path,
    ) -> Hook {
        Hook {
            event,
            matcher: matcher.to_string(),
            tools: Tools::read(matcher),
            command: command.to_string(),
            timeout_secs: timeout.unwrap_or(DEFAULT_TIMEOUT.as_secs()).clamp(1, 600),
            file: file.to_path_buf(),
        }
    }

    /// Whether it runs for `tool`. A matcher that is not a valid expression matches every tool
    /// (its file's problem says so): a gate the person set must not silently stop gating.
    /// `aliases` are the tool's other names (Claude Code's `Bash`, `Write`…): a matcher written
    /// for Claude Code matches the same tool here.
    pub fn matches(&self, tool: &str, aliases: &[String]) -> bool {
        match &self.tools {
            Tools::Every | Tools::Broken(_) => true,
            Tools::Matching(re) => re.is_match(tool) || aliases.iter().any(|a| re.is_match(a)),
        }
    }

    /// Why the matcher cannot be read, if it cannot.
    pub fn matcher_problem(&self) -> Option<String> {
        let Tools::Broken(e) = &self.tools else {
            return None;
        };
        Some(format!(
            "the {} hook's matcher {:?} is not a regular expression ({e}): it runs for every tool until fixed",
            self.event.as_str(),
            self.matcher
        ))
    }

    /// How the trust review and the settings list name it.
    pub fn describe(&self) -> String {
        let tools = if matches!(self.tools, Tools::Every) {
            "every tool".to_string()
        } else {
            self.matcher.clone()
        };
        match self.event {
            HookEvent::Stop => format!("Stop: {}", self.command),
            event => format!("{} ({tools}): {}", event.as_str(), self.command),
        }
    }

    /// Runs it with `input` on its standard input. Before a call, a hook that cannot be run or
    /// does not answer in time refuses (the person set it as a gate); after one, that is only
    /// logged.
    pub async fn run(&self, input: &serde_json::Value, env: &EffectEnv) -> HookVerdict {
        let gate = self.event == HookEvent::PreToolUse;
        let ran = tokio::time::timeout(
            Duration::from_secs(self.timeout_secs),
            self.run_to_end(input, env),
        )
        .await;
        let failed = |why: String| {
            tracing::warn!(hook = %self.command, "{why}");
            match gate {
                true => HookVerdict::Refused(format!(
                    "the hook `{}` {why}, so the call is refused — fix or remove it in {}",
                    self.command,
                    self.file.display()
                )),
                false => HookVerdict::GoOn,
            }
        };
        match ran {
            Err(_) => failed(format!("did not finish within {} s", self.timeout_secs)),
            Ok(Err(e)) => failed(format!("could not run ({e})")),
            // 126/127: the shell could not run what it names; none: a signal ended it.
            Ok(Ok((None | Some(126 | 127), _, err))) => {
                failed(format!("could not run ({})", err.trim()))
            }
            Ok(Ok((code, out, err))) if gate => verdict(&self.command, code, &out, &err),
            Ok(Ok(_)) => HookVerdict::GoOn,
        }
    }

    async fn run_to_end(
        &self,
        input: &serde_json::Value,
        env: &EffectEnv,
    ) -> std::io::Result<(Option<i32>, String, String)> {
        let mut child = self.launch(env).spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            // A hook that does not read its input must not make this fail.
            let _ = stdin.write_all(input.to_string().as_bytes()).await;
        }
        // Both at once: a hook that fills one pipe while the other is read must not stall.
        let read = |pipe: Option<Box<dyn tokio::io::AsyncRead + Unpin + Send>>| async move {
            let mut text = String::new();
            if let Some(pipe) = pipe {
                // Past the limit the rest is drained, so the hook is never blocked on writing.
                let mut limited = pipe.take(OUTPUT_MAX);
                limited.read_to_string(&mut text).await?;
                tokio::io::copy(&mut limited.into_inner(), &mut tokio::io::sink()).await?;
            }
            Ok::<_, std::io::Error>(text)
        };
        let stdout = child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>);
        let stderr = child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>);
        let (out, err) = tokio::join!(read(stdout), read(stderr));
        let status = child.wait().await?;
        Ok((status.code(), out?, err?))
    }

    /// The command under `bash -c`, confined as `run_command` is; its own group, ended with it.
    fn launch(&self, env: &EffectEnv) -> tokio::process::Command {
        let cwd = env
            .workspace_roots
            .first()
            .or(env.home.as_ref())
            .cloned()
            .unwrap_or_else(|| PathBuf::from("/"));
        let mut jail = Confinement::new(&cwd).network(false);
        for root in &env.workspace_roots {
            jail = jail.write(root);
        }
        if let Some(home) = &env.home {
            jail = jail.home(home);
        }
        if let Some(data) = &env.cowork_data {
            // The person's hook scripts may live beside their settings, in `hooks/`.
            jail = jail.hide(data).own(&data.join("hooks"), false);
        }
        jail = jail.env("COWORK_PROJECT_DIR", cwd.as_os_str());
        let launch = jail.command("bash", &["-c", &self.command]);
        let mut command = tokio::process::Command::from(launch.command);
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command
    }
}

/// A gate hook's answer, as Claude Code's hooks give it: exit 2 refuses with its error output as
/// the reason; exit 0 may print `{"decision": "block", "reason": …}` or
/// `{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": …}}`. Any
/// other exit is the hook's own error: logged, and the call goes on (as in Claude Code).
fn verdict(command: &str, code: Option<i32>, out: &str, err: &str) -> HookVerdict {
    let said = |reason: &str| {
        let reason = reason.trim();
        HookVerdict::Refused(if reason.is_empty() {
            format!("the hook `{command}` refused it")
        } else {
            format!("the hook `{command}` refused it: {reason}")
        })
    };
    match code {
        Some(2) => said(err),
        Some(0) => {
            let Ok(answer) = serde_json::from_str::<serde_json::Value>(out.trim()) else {
                return HookVerdict::GoOn;
            };
            let specific = &answer["hookSpecificOutput"];
            let refused = matches!(answer["decision"].as_str(), Some("block" | "deny"))
                || specific["permissionDecision"].as_str() == Some("deny");
            let reason = answer["reason"]
                .as_str()
                .or(specific["permissionDecisionReason"].as_str())
                .unwrap_or_default();
            if refused {
                said(reason)
            } else {
                HookVerdict::GoOn
            }
        }
        other => {
            tracing::warn!(hook = %command, code = ?other, "a hook failed: {}", err.trim());
            HookVerdict::GoOn
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_refusal_is_heard_and_an_allow_widens_nothing() {
        let refused = |v: HookVerdict| matches!(v, HookVerdict::Refused(_));
        assert!(refused(verdict("h", Some(2), "", "no secrets")));
        assert!(refused(verdict(
            "h",
            Some(0),
            r#"{"decision":"block","reason":"x"}"#,
            ""
        )));
        assert!(refused(verdict(
            "h",
            Some(0),
            r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#,
            ""
        )));
        for allow in [
            r#"{"decision":"approve"}"#,
            r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#,
            "not json",
        ] {
            assert_eq!(
                verdict("h", Some(0), allow, ""),
                HookVerdict::GoOn,
                "{allow}"
            );
        }
        assert_eq!(verdict("h", Some(1), "", "oops"), HookVerdict::GoOn);
        match verdict("h", Some(2), "", "no secrets\n") {
            HookVerdict::Refused(why) => assert!(why.ends_with("no secrets"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_matcher_is_a_whole_name_expression_and_a_broken_one_matches_everything() {
        let hook = |m: &str| Hook::new(HookEvent::PreToolUse, m, "true", None, Path::new("s"));
        let none: &[String] = &[];
        assert!(hook("write_file|edit_file").matches("edit_file", none));
        assert!(!hook("write_file").matches("write_file_x", none));
        assert!(hook("mcp__github__.*").matches("mcp__github__push", none));
        assert!(hook("Bash").matches("run_command", &["Bash".into()]));
        assert!(hook("").matches("anything", none) && hook("*").matches("anything", none));
        assert!(hook("(").matches("anything", none));
        assert!(hook("(").matcher_problem().is_some());
        assert!(hook("*").matcher_problem().is_none());
    }
}
