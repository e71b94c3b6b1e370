//! `cowork`: the command-line shell. Parses arguments, prints results, and asks in the terminal
//! when the policy says "ask". Everything else is the core's (through cowork-app).

/// Every line printed goes through these: text that came from a tool, a model, a server or a
/// call (tool names of rejected calls included) has its control characters escaped, so it cannot
/// erase or forge lines on the person's terminal. Fields inside a line use `printable_field`.
macro_rules! say {
    ($($arg:tt)*) => { println!("{}", cowork_contract::text::printable_text(&format!($($arg)*))) };
}
macro_rules! esay {
    ($($arg:tt)*) => { eprintln!("{}", cowork_contract::text::printable_text(&format!($($arg)*))) };
}
macro_rules! ewrite {
    ($dst:expr, $($arg:tt)*) => { writeln!($dst, "{}", cowork_contract::text::printable_text(&format!($($arg)*))) };
}

mod approve;
mod print;

use clap::{Parser, Subcommand, ValueEnum};
use cowork_app::{App, AppOptions};
use cowork_core::{
    Action, AuditFilter, CallRequest, Caller, Mode, Registry, RuleSource, SchedulerConfig,
};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "cowork",
    version,
    about = "Cowork: a desktop assistant whose every tool call is reviewed and audited"
)]
struct Cli {
    /// Data directory (default: $COWORK_HOME, else the platform data dir).
    #[arg(long, global = true, env = "COWORK_HOME")]
    home: Option<PathBuf>,
    /// A workspace root (repeatable; default: none).
    #[arg(long = "workspace", global = true)]
    workspaces: Vec<PathBuf>,
    /// Conversation id that grants and taint belong to.
    #[arg(long, global = true, default_value = "cli")]
    conversation: String,
    /// Machine-readable output.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List, search, inspect, call and export tools.
    #[command(subcommand)]
    Tools(ToolsCmd),
    /// Explain decisions, manage rules and the mode.
    #[command(subcommand)]
    Policy(PolicyCmd),
    /// Read, verify and export the audit log.
    #[command(subcommand)]
    Audit(AuditCmd),
    /// Configure the chat's model provider; keys go to the OS keyring.
    #[command(subcommand)]
    Provider(ProviderCmd),
    /// Install and manage toolpacks (MCP servers with an MCPB manifest).
    #[command(subcommand)]
    Toolpack(ToolpackCmd),
    /// MCP servers of the enabled toolpacks.
    #[command(subcommand)]
    Mcp(McpCmd),
    /// The assistant's staged file changes: review, apply (whole or by hunk), reject, roll back.
    #[command(subcommand)]
    Changes(ChangesCmd),
    /// CalDAV and mail accounts; passwords go to the OS keyring only.
    #[command(subcommand)]
    Account(AccountCmd),
    /// Tasks waiting for you (a login, a code, an answer): list, resume, cancel, extend.
    #[command(subcommand)]
    Tasks(TasksCmd),
    /// Long-term memory and notes: Markdown files in the vault folder, searched by meaning.
    #[command(subcommand)]
    Vault(VaultCmd),
    /// Trust a folder's own settings (they only narrow until you do), see what they ask for.
    #[command(subcommand)]
    Workspace(WorkspaceCmd),
}

#[derive(Subcommand)]
enum WorkspaceCmd {
    /// Each open workspace (`--workspace DIR`): trusted or not, what its settings ask for.
    Status,
    /// Shows what trusting DIR would allow (its allow rules, mode, what its repository runs), then asks.
    Trust {
        dir: PathBuf,
        /// Trust without asking (scripts). The review is still printed.
        #[arg(long)]
        yes: bool,
    },
    /// Withdraw trust: the folder's settings only narrow again.
    Untrust { dir: PathBuf },
    /// Every trusted folder.
    List,
}

#[derive(Subcommand)]
enum TasksCmd {
    /// Suspended tasks, oldest first (`--all`: settled ones too).
    Suspended {
        #[arg(long)]
        all: bool,
    },
    /// Run the suspended call again (reviewed and audited like any call).
    Resume {
        id: String,
        /// If it suspends again, wait and go on by itself once its condition holds (e.g. you
        /// logged in in the browser window it shows).
        #[arg(long)]
        wait: bool,
    },
    Cancel {
        id: String,
    },
    /// More time before it times out.
    Extend {
        id: String,
        #[arg(long, default_value_t = 30)]
        minutes: u64,
    },
}

#[derive(Subcommand)]
enum VaultCmd {
    /// Remember something (save_to_vault, reviewed and audited).
    Save {
        content: String,
        #[arg(long, default_value = "")]
        title: String,
        /// note (default), fact, preference, decision, learning
        #[arg(long)]
        kind: Option<String>,
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// global (default), workspace:<path>, project:<name>
        #[arg(long)]
        scope: Option<String>,
    },
    /// Search by meaning and words (search_vault, reviewed and audited).
    Search {
        query: String,
        #[arg(short, long, default_value_t = 5)]
        k: usize,
        /// note, memory, fact, preference, decision, learning (repeatable)
        #[arg(long = "kind")]
        kinds: Vec<String>,
        #[arg(long = "tag")]
        tags: Vec<String>,
        #[arg(long)]
        scope: Option<String>,
        /// Updated on or after (YYYY-MM-DD)
        #[arg(long)]
        since: Option<String>,
        /// Updated before (YYYY-MM-DD)
        #[arg(long)]
        until: Option<String>,
        /// hybrid (default), words, meaning
        #[arg(long, default_value = "hybrid")]
        mode: String,
    },
    /// Bring the index in step with the folder (resumable; shows progress), then embed what lacks a vector.
    Reindex,
    /// Entries, vectors per model, problems, memory of the vector cache.
    Stats,
}

#[derive(Subcommand)]
enum AccountCmd {
    /// Add or replace an account; the password is read from standard input (one line).
    Add {
        /// A short name used in rules and effects, e.g. `work`.
        name: String,
        /// A CalDAV server or principal URL (calendars are discovered).
        #[arg(long, conflicts_with_all = ["email", "imap", "smtp"])]
        caldav: Option<String>,
        /// The address mail is sent from.
        #[arg(long, requires_all = ["imap", "smtp"])]
        email: Option<String>,
        /// IMAP server, HOST or HOST:PORT.
        #[arg(long)]
        imap: Option<String>,
        /// SMTP server, HOST or HOST:PORT.
        #[arg(long)]
        smtp: Option<String>,
        /// Login name (default: the email address).
        #[arg(long)]
        user: Option<String>,
        /// tls (default), starttls, or plain (this computer only).
        #[arg(long, default_value = "tls")]
        security: String,
        #[arg(long)]
        display_name: Option<String>,
    },
    List,
    /// Remove the account, its password from the keyring and its synced calendars.
    Remove {
        name: String,
    },
    /// Log in and read a little, through the scheduler (reviewed and audited).
    Test {
        name: String,
    },
}

#[derive(Subcommand)]
enum ChangesCmd {
    /// Staged and settled changes, newest first.
    List {
        /// staged | applied | rejected | rolled_back
        #[arg(long)]
        status: Option<String>,
    },
    /// One change's diff, with numbered hunks.
    Diff { id: i64 },
    /// Write staged changes to disk (asks first); `--hunks 1,3` applies part of one change.
    Apply {
        #[arg(required = true)]
        ids: Vec<i64>,
        #[arg(long, value_delimiter = ',')]
        hunks: Option<Vec<usize>>,
    },
    /// Drop a staged change.
    Reject { id: i64 },
    /// Put back the exact previous bytes of an applied change.
    Rollback { id: i64 },
}

#[derive(Subcommand)]
enum ToolpackCmd {
    /// Install from github:owner/repo[@ref], a folder, or a .mcpb file. Shows a review first.
    Install {
        source: String,
        /// Accept the review without asking (scripts).
        #[arg(long)]
        yes: bool,
        /// Refuse unless the content hashes to this (a pin shared from another toolpacks.json).
        #[arg(long)]
        sha256: Option<String>,
        /// A user_config value, `key=value` (repeatable; JSON values allowed).
        #[arg(long = "config", value_name = "KEY=VALUE")]
        config: Vec<String>,
        /// Skip npm/pip (the dependencies are already in the folder).
        #[arg(long)]
        no_deps: bool,
    },
    /// Installed toolpacks with their pins.
    List,
    Enable {
        name: String,
    },
    Disable {
        name: String,
    },
    /// Fetch the source again (same ref), show the permission changes and ask.
    Update {
        name: String,
        #[arg(long)]
        yes: bool,
    },
    /// Turn a pack's sandbox on or off. Off: its server runs with all your rights, and every
    /// call of its tools asks.
    Sandbox {
        name: String,
        #[arg(value_enum)]
        state: OnOff,
    },
    /// Set user_config values: `cowork toolpack configure NAME key=value …`.
    Configure {
        name: String,
        values: Vec<String>,
    },
    Remove {
        name: String,
    },
    /// Restart every enabled toolpack's server from disk.
    Reload,
    /// Turn the servers of a claude_desktop_config.json into toolpacks.
    Import {
        config: PathBuf,
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Subcommand)]
enum McpCmd {
    /// State, restarts, tool count, pid and log of each server.
    Servers,
}

#[derive(Subcommand)]
enum ProviderCmd {
    /// Choose the provider, e.g. `--provider openai --base-url http://127.0.0.1:11434/v1 --model qwen3`.
    Set {
        #[arg(long, value_enum)]
        provider: ProviderArg,
        #[arg(long)]
        base_url: String,
        #[arg(long)]
        model: String,
        /// Read the key from this environment variable instead of the keyring.
        #[arg(long, default_value = "")]
        api_key_env: String,
    },
    /// Store the API key in the OS keyring (read from standard input, never from arguments).
    Key,
    /// Send one short message to the provider and print the reply.
    Check,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OnOff {
    On,
    Off,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProviderArg {
    Anthropic,
    Openai,
}

#[derive(Subcommand)]
enum ToolsCmd {
    List {
        #[arg(long)]
        category: Option<String>,
    },
    Search {
        query: String,
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
    Show {
        name: String,
    },
    /// Call a tool through the scheduler (review, approval, audit).
    Call {
        name: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        /// If the call is suspended (a login wall), wait and go on by itself once its
        /// condition holds — you log in in the browser window it opens. Exit 4 without it.
        #[arg(long)]
        wait: bool,
    },
    /// The tool definitions a model would receive.
    Export {
        #[arg(long, value_enum, default_value_t = Format::Anthropic)]
        format: Format,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Anthropic,
    Openai,
}

#[derive(Subcommand)]
enum PolicyCmd {
    /// The decision a call would get, its score and reasons — without running it.
    Explain {
        name: String,
        #[arg(long, default_value = "{}")]
        args: String,
    },
    #[command(subcommand)]
    Rules(RulesCmd),
    /// Show or set the mode (normal, plan, accept-edits).
    Mode { mode: Option<String> },
}

#[derive(Subcommand)]
enum RulesCmd {
    List,
    /// Add a rule, e.g. `cowork policy rules add allow 'run_command(git status:*)'`.
    Add {
        action: String,
        rule: String,
        /// Store it in the first workspace's .cowork/settings.json instead of user settings.
        #[arg(long)]
        in_workspace: bool,
        /// Add an allow rule even though it is broad (`*`, a bare `run_command`, `read_file(//**)`).
        #[arg(long)]
        force: bool,
    },
    Remove {
        rule: String,
    },
}

#[derive(Subcommand)]
enum AuditCmd {
    List {
        #[arg(long)]
        tool: Option<String>,
        #[arg(long)]
        decision: Option<String>,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Check the hash chain and its guards; exits 1 naming each problem.
    Verify {
        /// A head written down earlier (`SEQ HASH` from `cowork audit head`): proves the log was
        /// not rewritten whole since (repeatable).
        #[arg(long = "anchor", value_name = "SEQ:HASH")]
        anchors: Vec<String>,
        /// A file of heads, one per line (what `cowork audit head --append FILE` writes).
        #[arg(long)]
        anchor_file: Option<PathBuf>,
    },
    /// Every row, oldest first.
    Export {
        /// One JSON object per line (the only format so far).
        #[arg(long)]
        jsonl: bool,
    },
    /// The last row's number and hash: write it down elsewhere to anchor the chain.
    Head {
        /// Also append it (with the time) to this file — somewhere the data dir's owner cannot
        /// quietly rewrite, ideally (another machine, a synced folder, removable media).
        #[arg(long)]
        append: Option<PathBuf>,
    },
}

fn parse_args(text: &str) -> Result<serde_json::Value, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        format!("--args is not valid JSON ({e}); write an object, e.g. --args '{{\"title\": \"Buy milk\"}}'")
    })?;
    if !value.is_object() {
        return Err("--args must be a JSON object, e.g. --args '{\"title\": \"Buy milk\"}'".into());
    }
    Ok(value)
}

fn main() -> ExitCode {
    // `cowork tools list | head` must end quietly when the reader goes away, as other command
    // line tools do, instead of panicking on the broken pipe (Rust ignores SIGPIPE by default).
    // SAFETY: restoring the default disposition of one signal at start, before any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result = runtime.block_on(run(cli));
    // A terminal prompt still blocked on stdin (its ask timed out) must not keep us alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(message) => {
            esay!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// While the call is suspended, checks its condition twice a second and resumes it once it
/// holds (the person logged in in the browser window the call opened); stops when the task is
/// settled elsewhere (Resume in the window, cancel, timeout). Ctrl+C leaves it suspended.
async fn wait_while_suspended(
    scheduler: &cowork_core::Scheduler,
    mut outcome: cowork_core::CallOutcome,
) -> cowork_core::CallOutcome {
    let Some(coordinator) = scheduler.suspensions() else {
        return outcome;
    };
    while let Err(cowork_contract::ToolError::Suspended { id, reason }) = &outcome.result {
        let id = id.clone();
        esay!("waiting: {reason}\n  (task {id}; Ctrl+C stops waiting and leaves it suspended)");
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            if let Some(next) = scheduler.resume_if_ready(&id, Caller::Cli).await {
                outcome = next;
                break;
            }
            match coordinator.get(&id) {
                Ok(Some(row)) if row.state == "suspended" => {}
                Ok(Some(row)) => {
                    esay!(
                        "task {id} was {} (by {})",
                        row.state,
                        row.settled_by.as_deref().unwrap_or("its deadline")
                    );
                    return outcome;
                }
                _ => return outcome,
            }
        }
    }
    outcome
}

/// One call through the scheduler, printed once its audit row is committed.
async fn call_and_print(
    scheduler: &cowork_core::Scheduler,
    name: &str,
    args: serde_json::Value,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    call_and_print_waiting(scheduler, name, args, conversation, json, false).await
}

async fn call_and_print_waiting(
    scheduler: &cowork_core::Scheduler,
    name: &str,
    args: serde_json::Value,
    conversation: &str,
    json: bool,
    wait: bool,
) -> Result<ExitCode, String> {
    // A long call's progress (an MCP server's notifications, a re-index) on stderr as it comes.
    let progress = (!json).then(|| {
        let mut events = scheduler.subscribe();
        tokio::spawn(async move {
            while let Ok(event) = events.recv().await {
                if let cowork_core::ToolEvent::Progress { progress, .. } = event {
                    let total = progress.total.map(|t| format!("/{t}")).unwrap_or_default();
                    let message = progress
                        .message
                        .map(|m| format!(" {m}"))
                        .unwrap_or_default();
                    esay!("progress {}{total}{message}", progress.progress);
                }
            }
        })
    });
    let mut outcome = scheduler
        .call(CallRequest::new(name, args, Caller::Cli, conversation))
        .await;
    if let Some(task) = progress {
        task.abort();
    }
    if wait {
        outcome = wait_while_suspended(scheduler, outcome).await;
    }
    // Nothing is reported done before its audit row is committed.
    scheduler.flush().map_err(|e| e.to_string())?;
    print::outcome(&outcome, json);
    Ok(match &outcome.result {
        Ok(_) => ExitCode::SUCCESS,
        // A path outside the workspace, a swapped symlink: refused for safety, like a denial.
        Err(
            cowork_contract::ToolError::Denied { .. }
            | cowork_contract::ToolError::SecurityViolation { .. },
        ) => ExitCode::from(3),
        Err(
            cowork_contract::ToolError::InvalidArguments { .. }
            | cowork_contract::ToolError::NotFound { .. },
        ) => ExitCode::from(2),
        // Waiting for the person: `cowork tasks resume ID` goes on.
        Err(cowork_contract::ToolError::Suspended { .. }) => ExitCode::from(4),
        Err(_) => ExitCode::FAILURE,
    })
}

async fn run(cli: Cli) -> Result<ExitCode, String> {
    // Asking needs a person at a terminal; piped input answers only when explicitly requested
    // (scripts and tests), otherwise an ask is denied.
    let approver: Arc<dyn cowork_core::Approver> = if std::io::stdin().is_terminal()
        || std::env::var_os("COWORK_APPROVE_FROM_STDIN").is_some()
    {
        Arc::new(approve::TerminalApprover)
    } else {
        Arc::new(cowork_core::DenyApprover)
    };
    let mut roots = cli.workspaces.clone();
    // `workspace trust DIR` opens DIR as a workspace, to read its settings as the policy would.
    if let Command::Workspace(WorkspaceCmd::Trust { dir, .. }) = &cli.command
        && !roots.contains(dir)
    {
        roots.push(dir.clone());
    }
    let app = App::open(AppOptions {
        home: cli.home.clone(),
        workspace_roots: roots,
        approver,
        scheduler: SchedulerConfig::default(),
    })
    .map_err(|e| e.to_string())?;
    // Toolpack servers start before anything that lists or calls tools; their tools join the
    // registry as they come up. Managing toolpacks starts them itself.
    match &cli.command {
        // A call waits only for the servers it may need: a builtin is never delayed by a pack.
        Command::Tools(ToolsCmd::Call { name, .. })
        | Command::Policy(PolicyCmd::Explain { name, .. }) => {
            warn_unstarted(app.start_toolpacks().map_err(|e| e.to_string())?);
            warn_not_running(&app.toolpacks_settled_for(name, SETTLE).await);
        }
        Command::Tools(_) => start_toolpacks(&app).await?,
        // `mcp servers` waits for every server, the ones that failed last time included: it is
        // how a pack that was fixed is found healthy again.
        Command::Mcp(_) => {
            warn_unstarted(app.start_toolpacks().map_err(|e| e.to_string())?);
            app.toolpacks_settled(SETTLE).await;
        }
        _ => {}
    }
    // A tool call sends due mail from this process and waits for it to leave (`drain_outbox`).
    // Other commands never start a send they would not wait for: exiting mid-SMTP would leave
    // the message uncertain.
    let outbox = matches!(cli.command, Command::Tools(ToolsCmd::Call { .. }))
        .then(|| tokio::spawn(app.outbox_worker()));
    let scheduler = app.scheduler().clone();
    let registry = scheduler.registry().clone();
    let policy = scheduler.policy().clone();
    let json = cli.json;
    let conversation = cli.conversation.as_str();

    match cli.command {
        Command::Tools(ToolsCmd::List { category }) => {
            let tools: Vec<_> = registry
                .list()
                .into_iter()
                .filter(|t| category.as_ref().is_none_or(|c| &t.spec.category == c))
                .collect();
            print::tools(&tools, json);
        }
        Command::Tools(ToolsCmd::Search { query, limit }) => {
            print::search(&registry.search(&query, limit), json)
        }
        Command::Tools(ToolsCmd::Show { name }) => {
            let info = registry
                .get(&name)
                .ok_or_else(|| registry.not_found(&name).to_string())?;
            print::tool(&info, json);
        }
        Command::Tools(ToolsCmd::Export { format }) => {
            let visible = registry.visible(&[]);
            let out = match format {
                Format::Anthropic => Registry::export_anthropic(&visible),
                Format::Openai => Registry::export_openai(&visible),
            };
            say!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        }
        Command::Tools(ToolsCmd::Call { name, args, wait }) => {
            let code = call_and_print_waiting(
                &scheduler,
                &name,
                parse_args(&args)?,
                conversation,
                json,
                wait,
            )
            .await?;
            // A clean close writes the browser's cookies (a login) to the profile now.
            app.close_browser().await;
            drain_outbox(&app, conversation).await;
            if let Some(worker) = outbox {
                worker.abort();
            }
            return Ok(code);
        }
        Command::Account(cmd) => return account(&app, cmd, conversation, json).await,
        Command::Vault(cmd) => return vault(&app, cmd, conversation, json).await,
        Command::Tasks(cmd) => {
            let code = tasks(&app, cmd, json).await;
            app.close_browser().await;
            return code;
        }
        // The review side of the shadow FS runs as tools: reviewed and audited like any call.
        Command::Changes(cmd) => {
            let calls = match cmd {
                ChangesCmd::List { status } => {
                    vec![("changes_list", serde_json::json!({"status": status}))]
                }
                ChangesCmd::Diff { id } => vec![("changes_diff", serde_json::json!({"id": id}))],
                ChangesCmd::Apply { ids, hunks } => {
                    if hunks.is_some() && ids.len() > 1 {
                        return Err("--hunks applies to one change: give one id".into());
                    }
                    ids.iter()
                        .map(|id| {
                            (
                                "changes_apply",
                                serde_json::json!({"id": id, "hunks": hunks}),
                            )
                        })
                        .collect()
                }
                ChangesCmd::Reject { id } => {
                    vec![("changes_reject", serde_json::json!({"id": id}))]
                }
                ChangesCmd::Rollback { id } => {
                    vec![("changes_rollback", serde_json::json!({"id": id}))]
                }
            };
            for (tool, args) in calls {
                let code = call_and_print(&scheduler, tool, args, conversation, json).await?;
                if code != ExitCode::SUCCESS {
                    return Ok(code);
                }
            }
        }
        Command::Policy(PolicyCmd::Explain { name, args }) => {
            let args = parse_args(&args)?;
            let explanation = scheduler
                .explain(&name, &args, conversation, None)
                .map_err(|e| e.to_string())?;
            print::explanation(&explanation, json);
        }
        Command::Policy(PolicyCmd::Rules(RulesCmd::List)) => {
            print::rules(&policy.rules(Some(conversation)), &policy.problems(), json)
        }
        Command::Policy(PolicyCmd::Rules(RulesCmd::Add {
            action,
            rule,
            in_workspace,
            force,
        })) => {
            let action: Action = action.parse()?;
            let source = if in_workspace {
                RuleSource::Workspace
            } else {
                RuleSource::User
            };
            let broad = policy.add_rule_checked(action, &rule, source, force).map_err(|e| match e {
                cowork_core::PolicyError::RuleTooBroad { why, .. } => {
                    format!("{why} — that is broader than one tool's use; add --force if you mean it, or name what it covers (e.g. `run_command(git status:*)`, `read_file(~/Documents/**)`)")
                }
                other => other.to_string(),
            })?;
            if let Some(why) = broad {
                esay!("warning: {why}");
            }
            if !json {
                say!(
                    "added {} rule `{}` to {}",
                    action.as_str(),
                    cowork_contract::text::printable_field(&rule),
                    source.as_str()
                );
            }
        }
        Command::Policy(PolicyCmd::Rules(RulesCmd::Remove { rule })) => {
            let removed = policy
                .remove_rule(&rule, Some(conversation))
                .map_err(|e| e.to_string())?;
            if removed == 0 {
                return Err(format!(
                    "no rule `{rule}` found; `cowork policy rules list` shows them"
                ));
            }
            if !json {
                say!(
                    "removed `{rule}` ({removed} entr{})",
                    if removed == 1 { "y" } else { "ies" }
                );
            }
        }
        Command::Policy(PolicyCmd::Mode { mode }) => {
            if let Some(mode) = mode {
                policy
                    .set_mode(Mode::parse(&mode)?, true)
                    .map_err(|e| e.to_string())?;
            }
            if json {
                say!("{}", serde_json::json!({"mode": policy.mode()}));
            } else {
                say!("mode: {}", policy.mode().as_str());
            }
        }
        Command::Audit(AuditCmd::List {
            tool,
            decision,
            limit,
        }) => {
            let filter = AuditFilter {
                tool,
                decision,
                limit: Some(limit),
                ..Default::default()
            };
            print::audit_rows(
                &scheduler.audit().list(&filter).map_err(|e| e.to_string())?,
                json,
            );
        }
        Command::Audit(AuditCmd::Verify {
            anchors,
            anchor_file,
        }) => {
            let mut anchors = anchors
                .iter()
                .map(|a| a.parse::<cowork_core::Anchor>())
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(file) = anchor_file {
                anchors.extend(cowork_core::Anchor::read_file(&file)?);
            }
            let report = scheduler
                .audit()
                .verify_anchored(&anchors)
                .map_err(|e| e.to_string())?;
            print::verify(&report, json);
            if !report.ok() {
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Audit(AuditCmd::Export { jsonl: _ }) => {
            use std::io::Write;
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let mut write_err = None;
            scheduler
                .audit()
                .for_each(|row| {
                    if write_err.is_none()
                        && let Err(e) =
                            writeln!(out, "{}", serde_json::to_string(&row).unwrap_or_default())
                    {
                        write_err = Some(e);
                    }
                })
                .map_err(|e| e.to_string())?;
            out.flush().map_err(|e| e.to_string())?;
        }
        Command::Provider(cmd) => return provider(&app, cmd).await,
        Command::Toolpack(cmd) => return toolpack(&app, cmd, json).await,
        Command::Mcp(McpCmd::Servers) => print::servers(&app.mcp_servers(), json),
        Command::Workspace(cmd) => return workspace(&app, cmd, json),
        Command::Audit(AuditCmd::Head { append }) => {
            let (seq, hash) = match append {
                Some(file) => scheduler.audit().append_anchor(&file),
                None => scheduler.audit().head(),
            }
            .map_err(|e| e.to_string())?;
            if json {
                say!("{}", serde_json::json!({"seq": seq, "hash": hash}));
            } else {
                say!("{seq} {hash}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn workspace(app: &App, cmd: WorkspaceCmd, json: bool) -> Result<ExitCode, String> {
    let policy = app.scheduler().policy();
    match cmd {
        WorkspaceCmd::Status => {
            let reviews = policy
                .workspaces()
                .iter()
                .map(|w| app.workspace_review(&w.root))
                .collect::<Result<Vec<_>, _>>()?;
            if reviews.is_empty() && !json {
                say!("no workspace is open: pass --workspace DIR");
            }
            print::workspace_reviews(&reviews, json);
        }
        WorkspaceCmd::Trust { dir, yes } => {
            let review = app.workspace_review(&dir)?;
            print::workspace_reviews(std::slice::from_ref(&review), json);
            if review.status.state == cowork_core::policy::TrustState::Trusted {
                esay!("already trusted as it is");
                return Ok(ExitCode::SUCCESS);
            }
            if !yes {
                if !std::io::stdin().is_terminal() {
                    return Err("nobody at a terminal to confirm: read the review above, then run again with --yes".into());
                }
                eprint!(
                    "Trust {} as shown? [y/N] > ",
                    cowork_contract::text::printable_field(
                        &review.status.root.display().to_string()
                    )
                );
                let mut answer = String::new();
                std::io::stdin()
                    .read_line(&mut answer)
                    .map_err(|e| e.to_string())?;
                if !matches!(answer.trim(), "y" | "Y" | "yes") {
                    esay!("not trusted");
                    return Ok(ExitCode::from(3));
                }
            }
            policy
                .trust_workspace(&review.status.root, &review.status.digest)
                .map_err(|e| e.to_string())?;
            if !json {
                say!(
                    "trusted {} (pinned to its settings as shown: a change to them needs trust again)",
                    review.status.root.display()
                );
            }
        }
        WorkspaceCmd::Untrust { dir } => {
            let was = policy.untrust_workspace(&dir).map_err(|e| e.to_string())?;
            if !json {
                say!(
                    "{}",
                    if was {
                        "no longer trusted: its settings only narrow"
                    } else {
                        "it was not trusted"
                    }
                );
            }
        }
        WorkspaceCmd::List => {
            let list = policy.trusted_workspaces().map_err(|e| e.to_string())?;
            if json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&list).unwrap_or_default()
                );
            } else if list.is_empty() {
                say!("no trusted folders");
            }
            for (root, at) in list.iter().filter(|_| !json) {
                say!(
                    "{}  trusted {at}",
                    cowork_contract::text::printable_field(root)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn provider(app: &App, cmd: ProviderCmd) -> Result<ExitCode, String> {
    use cowork_app::{AgentSettings, ProviderKind};
    let path = app.home().settings_path();
    match cmd {
        ProviderCmd::Set {
            provider,
            base_url,
            model,
            api_key_env,
        } => {
            let provider = match provider {
                ProviderArg::Anthropic => ProviderKind::Anthropic,
                ProviderArg::Openai => ProviderKind::Openai,
            };
            let settings = AgentSettings {
                provider,
                base_url,
                model,
                api_key_env,
                allowed_tools: None,
                recall: Default::default(),
                max_steps: cowork_agent_default_steps(),
            };
            settings.save(&path)?;
            say!("provider saved to {}", path.display());
        }
        ProviderCmd::Key => {
            let settings = AgentSettings::load(&path)?
                .ok_or("set a provider first: `cowork provider set …`")?;
            let mut key = String::new();
            std::io::stdin()
                .read_line(&mut key)
                .map_err(|e| e.to_string())?;
            cowork_app::secrets::set(&settings.keyring_account(), &key)?;
            say!(
                "key stored in the OS keyring ({})",
                settings.keyring_account()
            );
        }
        ProviderCmd::Check => {
            let agent = app
                .agent()?
                .ok_or("set a provider first: `cowork provider set …`")?;
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let conversation = format!("provider-check-{}", std::process::id());
            agent
                .send(
                    &conversation,
                    "Reply with one word: pong.",
                    &tx,
                    Default::default(),
                )
                .await
                .map_err(|e| e.to_string())?;
            drop(tx);
            let mut reply = String::new();
            while let Some(event) = rx.recv().await {
                if let cowork_agent::AgentEvent::TextDelta { text } = event {
                    reply.push_str(&text);
                }
            }
            say!("{}", reply.trim());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Waits for queued mail to leave (the undo delay), or takes it back on Ctrl+C.
async fn drain_outbox(app: &App, conversation: &str) {
    let pending = app.mail_pending();
    if pending == 0 {
        return;
    }
    esay!("{pending} message(s) leave after the undo delay — press Ctrl+C to take them back");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(660);
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {
                // Undo is a tool call like any other: reviewed and audited.
                let mut taken = 0;
                for id in app.mail_queued_here() {
                    let undo = CallRequest::new("email_undo", serde_json::json!({"id": id}), Caller::Cli, conversation);
                    taken += usize::from(app.scheduler().call(undo).await.result.is_ok());
                }
                esay!("took back {taken} message(s); mail queued elsewhere stays queued");
                return;
            }
            _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {
                if app.mail_pending() == 0 || tokio::time::Instant::now() > deadline {
                    return;
                }
            }
        }
    }
}

fn host_port(flag: &str, text: &str, default_port: u16) -> Result<(String, u16), String> {
    match text.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() => Ok((
            host.to_string(),
            port.parse()
                .map_err(|_| format!("--{flag} {text:?}: the port must be a number"))?,
        )),
        _ => Ok((text.to_string(), default_port)),
    }
}

async fn tasks(app: &App, cmd: TasksCmd, json: bool) -> Result<ExitCode, String> {
    let scheduler = app.scheduler();
    let coordinator = scheduler
        .suspensions()
        .ok_or("this build keeps no suspended tasks")?;
    match cmd {
        TasksCmd::Suspended { all } => {
            print::suspensions(&coordinator.list(all).map_err(|e| e.to_string())?, json)
        }
        TasksCmd::Resume { id, wait } => {
            let mut outcome = scheduler
                .resume(&id, Caller::Cli)
                .await
                .map_err(|e| e.to_string())?;
            if wait {
                outcome = wait_while_suspended(scheduler, outcome).await;
            }
            scheduler.flush().map_err(|e| e.to_string())?;
            print::outcome(&outcome, json);
            return Ok(if outcome.result.is_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
        TasksCmd::Cancel { id } => print::suspensions(
            &[coordinator.cancel(&id, "cli").map_err(|e| e.to_string())?],
            json,
        ),
        TasksCmd::Extend { id, minutes } => print::suspensions(
            &[coordinator
                .extend(&id, std::time::Duration::from_secs(minutes * 60))
                .map_err(|e| e.to_string())?],
            json,
        ),
    }
    Ok(ExitCode::SUCCESS)
}

async fn vault(
    app: &App,
    cmd: VaultCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let scheduler = app.scheduler();
    match cmd {
        VaultCmd::Save {
            content,
            title,
            kind,
            tags,
            scope,
        } => {
            let args = serde_json::json!({"content": content, "title": title, "kind": kind, "tags": tags, "scope": scope});
            call_and_print(scheduler, "save_to_vault", args, conversation, json).await
        }
        VaultCmd::Search {
            query,
            k,
            kinds,
            tags,
            scope,
            since,
            until,
            mode,
        } => {
            let args = serde_json::json!({"query": query, "k": k, "kinds": kinds, "tags": tags, "scope": scope, "since": since, "until": until, "mode": mode});
            call_and_print(scheduler, "search_vault", args, conversation, json).await
        }
        VaultCmd::Reindex => {
            let mut progress = app.vault().progress();
            let show = tokio::spawn(async move {
                while progress.changed().await.is_ok() {
                    let p = progress.borrow_and_update().clone();
                    if p.total > 0 {
                        eprint!("\r{:?}: {}/{}   ", p.phase, p.done, p.total);
                    }
                }
            });
            let report = app.vault().reindex().await;
            show.abort();
            esay!("");
            let report = report?;
            print::vault_reindex(&report, json);
            Ok(ExitCode::SUCCESS)
        }
        VaultCmd::Stats => {
            print::vault_stats(&app.vault().stats()?, json);
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn account(
    app: &App,
    cmd: AccountCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    use cowork_app::{AccountKind, AccountSettings, Security};
    match cmd {
        AccountCmd::Add {
            name,
            caldav,
            email,
            imap,
            smtp,
            user,
            security,
            display_name,
        } => {
            let security = match security.as_str() {
                "tls" => Security::Tls,
                "starttls" => Security::Starttls,
                "plain" => Security::Plain,
                other => return Err(format!("--security {other:?}: use tls, starttls or plain")),
            };
            let config = match (caldav, email) {
                (Some(url), None) => {
                    if !(url.starts_with("https://") || url.starts_with("http://")) {
                        return Err(format!("--caldav {url:?}: give the server's https:// URL"));
                    }
                    AccountKind::Caldav { url, username: user.ok_or("--user is required for a CalDAV account")? }
                }
                (None, Some(email)) => {
                    let (imap_port, smtp_port) = security.default_ports();
                    let (imap_host, imap_port) = host_port("imap", imap.as_deref().unwrap_or_default(), imap_port)?;
                    let (smtp_host, smtp_port) = host_port("smtp", smtp.as_deref().unwrap_or_default(), smtp_port)?;
                    AccountKind::Mail {
                        username: user.unwrap_or_else(|| email.clone()),
                        email,
                        display_name,
                        imap_host,
                        imap_port,
                        imap_security: security,
                        smtp_host,
                        smtp_port,
                        smtp_security: security,
                    }
                }
                _ => return Err("give --caldav URL (a calendar account) or --email ADDRESS --imap HOST --smtp HOST (a mail account)".into()),
            };
            if std::io::stdin().is_terminal() {
                eprint!("password for {name}: ");
            }
            let mut password = String::new();
            std::io::stdin()
                .read_line(&mut password)
                .map_err(|e| e.to_string())?;
            app.add_account(
                &AccountSettings {
                    name: name.clone(),
                    config,
                },
                password.trim_end_matches(['\r', '\n']),
            )?;
            say!(
                "account {name} saved; its password is in the OS keyring. Check it with `cowork account test {name}`."
            );
        }
        AccountCmd::List => {
            let accounts = app.accounts()?;
            if json {
                say!("{}", serde_json::to_string(&accounts).unwrap_or_default());
            } else if accounts.is_empty() {
                say!(
                    "no accounts: add one with `cowork account add NAME --caldav URL --user NAME` or `--email ADDRESS --imap HOST --smtp HOST`"
                );
            }
            for a in accounts.iter().filter(|_| !json) {
                match &a.config {
                    AccountKind::Caldav { url, username } => {
                        say!("{}  caldav  {username} @ {url}", a.name)
                    }
                    AccountKind::Mail {
                        email,
                        imap_host,
                        imap_port,
                        smtp_host,
                        smtp_port,
                        ..
                    } => {
                        say!(
                            "{}  mail  {email}  imap {imap_host}:{imap_port}  smtp {smtp_host}:{smtp_port}",
                            a.name
                        )
                    }
                }
            }
        }
        AccountCmd::Remove { name } => {
            if !app.remove_account(&name)? {
                return Err(format!(
                    "no account {name:?}: `cowork account list` shows them"
                ));
            }
            say!("account {name} removed (settings, keyring entry and synced calendars)");
        }
        AccountCmd::Test { name } => {
            let outcome = app.test_account(&name, Caller::Cli, conversation).await?;
            app.scheduler().flush().map_err(|e| e.to_string())?;
            print::outcome(&outcome, json);
            return Ok(if outcome.result.is_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// How long a command waits for toolpack servers: just past a server's own start limit (30 s),
/// so a server that never answers has failed (and is remembered as broken) by the time we stop
/// waiting.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(31);

async fn start_toolpacks(app: &App) -> Result<(), String> {
    warn_unstarted(app.start_toolpacks().map_err(|e| e.to_string())?);
    let (_, skipped) = app.toolpacks_settled_healthy(SETTLE).await;
    for (name, why) in skipped {
        esay!(
            "warning: toolpack {name} did not start last time ({why}); not waiting for it — `cowork mcp servers` checks it again; `cowork toolpack update {name}` reinstalls it"
        );
    }
    Ok(())
}

/// A server this command waited for that is not up: say so and why, instead of letting its
/// tools look as if they did not exist.
fn warn_not_running(statuses: &[cowork_app::ServerStatus]) {
    for s in statuses
        .iter()
        .filter(|s| s.state != cowork_app::ServerState::Running)
    {
        let state = serde_json::to_value(s.state)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let why = s
            .last_error
            .as_deref()
            .unwrap_or("it did not finish starting in time");
        esay!(
            "warning: toolpack server {} is {state}: {why} — `cowork mcp servers` and its log {}",
            s.name,
            s.log_file.display()
        );
    }
}

fn warn_unstarted(started: Vec<cowork_app::Started>) {
    for s in started {
        if let Some(e) = s.error {
            esay!("warning: toolpack {} not started: {e}", s.name);
        }
    }
}

fn parse_config(
    pairs: &[String],
) -> Result<std::collections::BTreeMap<String, serde_json::Value>, String> {
    pairs
        .iter()
        .map(|pair| {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?}: expected key=value"))?;
            // Typed later by the pack's own settings (a string field keeps `8.10` as typed).
            Ok((
                k.trim().to_string(),
                serde_json::Value::String(v.to_string()),
            ))
        })
        .collect()
}

/// Shows the review and asks; `--yes` accepts, and without a terminal nothing is accepted
/// silently (COWORK_APPROVE_FROM_STDIN lets scripts answer).
fn accept(review: &cowork_app::ToolpackReview, yes: bool, json: bool) -> Result<bool, String> {
    print::toolpack_review(review, json);
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() && std::env::var_os("COWORK_APPROVE_FROM_STDIN").is_none() {
        return Err(
            "not installed: no terminal to ask — review the above and pass --yes to accept".into(),
        );
    }
    eprint!("Install {}? [y/N] > ", review.name);
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    Ok(matches!(line.trim().to_lowercase().as_str(), "y" | "yes"))
}

async fn toolpack(app: &App, cmd: ToolpackCmd, json: bool) -> Result<ExitCode, String> {
    let err = |e: cowork_app::PackError| e.to_string();
    match cmd {
        ToolpackCmd::Install {
            source,
            yes,
            sha256,
            config,
            no_deps,
        } => {
            let config = parse_config(&config)?;
            let staged = app
                .stage_toolpack(&source, sha256.as_deref())
                .await
                .map_err(err)?;
            if !accept(&staged.review, yes, json)? {
                app.discard_toolpack(staged);
                esay!("not installed");
                return Ok(ExitCode::from(3));
            }
            let name = staged.manifest.name.clone();
            app.install_toolpack(staged, config, !no_deps)
                .map_err(err)?;
            let statuses = app.toolpacks_settled(SETTLE).await;
            print::servers(&statuses, json);
            if !json {
                say!("installed {name}");
            }
        }
        ToolpackCmd::List => print::toolpacks(&app.toolpack_records().map_err(err)?, json),
        ToolpackCmd::Enable { name } => {
            app.set_toolpack_enabled(&name, true).map_err(err)?;
            print::servers(&app.toolpacks_settled(SETTLE).await, json);
        }
        ToolpackCmd::Disable { name } => {
            app.set_toolpack_enabled(&name, false).map_err(err)?;
            if !json {
                say!("disabled {name}");
            }
        }
        ToolpackCmd::Update { name, yes } => {
            let (staged, repair, source) =
                match app.check_toolpack_update(&name).await.map_err(err)? {
                    cowork_app::UpdateCheck::UpToDate => {
                        say!("{name} is up to date");
                        return Ok(ExitCode::SUCCESS);
                    }
                    cowork_app::UpdateCheck::Changed {
                        staged,
                        repair,
                        source,
                    } => (*staged, repair, source),
                };
            if repair {
                esay!(
                    "the installed copy of {name} was changed on disk: reinstalling it from {source}"
                );
            }
            if !accept(&staged.review, yes, json)? {
                app.discard_toolpack(staged);
                esay!("not updated");
                return Ok(ExitCode::from(3));
            }
            app.install_toolpack(staged, Default::default(), true)
                .map_err(err)?;
            print::servers(&app.toolpacks_settled(SETTLE).await, json);
        }
        ToolpackCmd::Sandbox { name, state } => {
            let on = state == OnOff::On;
            app.set_toolpack_sandbox(&name, on).map_err(err)?;
            if !json {
                if on {
                    say!("{name} runs sandboxed again");
                } else {
                    say!(
                        "{name} now runs without a sandbox, with all your rights: every call of its tools asks"
                    );
                }
            }
            print::servers(&app.toolpacks_settled(SETTLE).await, json);
        }
        ToolpackCmd::Configure { name, values } => {
            app.configure_toolpack(&name, parse_config(&values)?)
                .map_err(err)?;
            print::servers(&app.toolpacks_settled(SETTLE).await, json);
        }
        ToolpackCmd::Remove { name } => {
            app.remove_toolpack(&name).map_err(err)?;
            if !json {
                say!("removed {name}");
            }
        }
        ToolpackCmd::Reload => {
            warn_unstarted(app.reload_toolpacks().map_err(err)?);
            print::servers(&app.toolpacks_settled(SETTLE).await, json);
        }
        ToolpackCmd::Import { config, yes } => {
            // The generated packs stay where they were written: they are the installed packs'
            // source, so `toolpack update` can reinstall from them.
            let out = app.home().root().join("toolpacks").join(".imported");
            for dir in cowork_app::import_claude_desktop_config(&config, &out).map_err(err)? {
                let staged = app
                    .stage_toolpack(&dir.display().to_string(), None)
                    .await
                    .map_err(err)?;
                if accept(&staged.review, yes, json)? {
                    let name = staged.manifest.name.clone();
                    app.install_toolpack(staged, Default::default(), false)
                        .map_err(err)?;
                    say!("imported {name}");
                } else {
                    app.discard_toolpack(staged);
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn cowork_agent_default_steps() -> u32 {
    cowork_agent::AgentConfig::default().max_steps
}
