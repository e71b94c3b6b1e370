//! `cowork`: the command-line shell. Parses arguments, prints results, and asks in the terminal
//! when the policy says "ask". Everything else is the core's (through cowork-app). A library so
//! the packaged window program can answer as the command line too (one binary in the package).

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

mod account;
mod approve;
mod assets;
mod chains;
mod print;
mod provider;
mod schedule;
mod tasks;
mod toolpack;
mod vault;
mod voice;
mod web;
mod workspace;

use account::*;
use assets::*;
use chains::*;
use provider::*;
use schedule::*;
use tasks::*;
use toolpack::*;
use vault::*;
use voice::*;
use web::*;
use workspace::*;

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
    /// Tool chains: list, show, explain (every step's effects), run, runs, resume.
    #[command(subcommand)]
    Chains(ChainsCmd),
    /// Scheduled runs of a chain or a prompt: add, list, remove, runs, serve.
    #[command(subcommand)]
    Schedule(ScheduleCmd),
    /// Long-term memory and notes: Markdown files in the vault folder, searched by meaning.
    #[command(subcommand)]
    Vault(VaultCmd),
    /// Speech: transcribe an audio file, offline.
    #[command(subcommand)]
    Voice(VoiceCmd),
    /// The web: search, pages, weather, news; the search provider and its key.
    #[command(subcommand)]
    Web(WebCmd),
    /// Trust a folder's own settings (they only narrow until you do), see what they ask for.
    #[command(subcommand)]
    Workspace(WorkspaceCmd),
    /// What works on this computer and what is missing, with the fix for each (exit 1 when
    /// something you set up or turned on does not work).
    Doctor,
    /// Models and the browser driver Cowork downloads after install: list, fetch, add.
    #[command(subcommand)]
    Assets(AssetsCmd),
    /// Open a Cowork link (`cowork://toolpack/install?source=github:owner/repo@ref`) or a .mcpb
    /// file: shows the install review and asks (a link can never skip the question).
    Open { link: String },
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

/// The command line, with this process's arguments.
pub fn main() -> ExitCode {
    main_from(std::env::args_os())
}

/// The command line with `args` (the first is the program's name, as in `std::env::args_os`).
pub fn main_from(args: impl IntoIterator<Item = std::ffi::OsString>) -> ExitCode {
    // `cowork tools list | head` must end quietly when the reader goes away, as other command
    // line tools do, instead of panicking on the broken pipe (Rust ignores SIGPIPE by default).
    // SAFETY: restoring the default disposition of one signal at start, before any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse_from(args);
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
/// Follows a suspended call until it goes on (`--wait`), saying what it waits for.
async fn wait_while_suspended(
    app: &App,
    outcome: cowork_core::CallOutcome,
) -> cowork_core::CallOutcome {
    app.follow_suspension(outcome, Caller::Cli, |step| match step {
        cowork_app::Following::Waiting { id, reason } => {
            esay!("waiting: {reason}\n  (task {id}; Ctrl+C stops waiting and leaves it suspended)")
        }
        cowork_app::Following::Settled { id, state, by } => esay!(
            "task {id} was {state} (by {})",
            by.as_deref().unwrap_or("its deadline")
        ),
    })
    .await
}

/// One call through the scheduler, printed once its audit row is committed.
async fn call_and_print(
    scheduler: &cowork_core::Scheduler,
    name: &str,
    args: serde_json::Value,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    call_and_print_waiting(scheduler, name, args, conversation, json, None).await
}

async fn call_and_print_waiting(
    scheduler: &cowork_core::Scheduler,
    name: &str,
    args: serde_json::Value,
    conversation: &str,
    json: bool,
    wait: Option<&App>,
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
    if let Some(app) = wait {
        outcome = wait_while_suspended(app, outcome).await;
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

async fn doctor(cli: &Cli) -> Result<ExitCode, String> {
    let findings =
        cowork_app::doctor::examine(cli.home.clone(), &cowork_app::doctor::Place::here())
            .await
            .map_err(|e| e.to_string())?;
    print::doctor(&findings, cli.json);
    Ok(match findings.iter().any(|f| f.fails()) {
        true => ExitCode::FAILURE,
        false => ExitCode::SUCCESS,
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
    // The doctor opens nothing of the app's: it must answer where the app cannot start.
    match &cli.command {
        Command::Doctor => return doctor(&cli).await,
        Command::Assets(cmd) => return assets(&cli, cmd).await,
        _ => {}
    }
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
                wait.then_some(&app),
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
        Command::Voice(cmd) => return voice(&app, cmd, conversation, json).await,
        Command::Web(cmd) => return web(&app, cmd, conversation, json).await,
        Command::Chains(cmd) => return chains(&app, cmd, conversation, json).await,
        Command::Schedule(cmd) => return schedule(&app, cmd, conversation, json).await,
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
                    format!("{} — that is broader than one tool's use; add --force if you mean it, or name what it covers (e.g. `run_command(git status:*)`, `read_file(~/Documents/**)`)", why.text)
                }
                other => other.to_string(),
            })?;
            if let Some(why) = broad {
                esay!("warning: {}", why.text);
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
        Command::Doctor | Command::Assets(_) => {
            unreachable!("the doctor and assets answer before the app opens")
        }
        Command::Open { link } => {
            let cowork_app::DesktopRequest::InstallToolpack { source } =
                cowork_app::desktop_request(&link).map_err(|e| e.to_string())?;
            let install = ToolpackCmd::Install {
                source,
                yes: false,
                sha256: None,
                config: Vec::new(),
                no_deps: false,
            };
            return toolpack(&app, install, json).await;
        }
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

/// Waits for queued mail to leave (the undo delay), or takes it back on Ctrl+C.
/// Holds a one-shot call open while its mail waits out the undo delay; Ctrl+C takes it back.
async fn drain_outbox(app: &App, conversation: &str) {
    let pending = app.mail_pending();
    if pending > 0 {
        esay!("{pending} message(s) leave after the undo delay — press Ctrl+C to take them back");
    }
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    if let cowork_app::Drained::TookBack(taken) = app.drain_outbox(conversation, stop).await {
        esay!("took back {taken} message(s); mail queued elsewhere stays queued");
    }
}
