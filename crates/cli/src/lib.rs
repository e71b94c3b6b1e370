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
mod audit;
mod calendar;
mod call;
mod chains;
mod changes;
mod chat;
mod doctor;
mod policy;
mod print;
mod provider;
mod schedule;
mod serve;
mod skill;
mod tasks;
mod toolpack;
mod tools;
mod vault;
mod voice;
mod web;
mod workspace;

use account::*;
use assets::*;
use audit::*;
use calendar::*;
use call::*;
use chains::*;
use changes::*;
use doctor::*;
use policy::*;
use provider::*;
use schedule::*;
use tasks::*;
use toolpack::*;
use tools::*;
use vault::*;
use voice::*;
use web::*;
use workspace::*;

use clap::{Parser, Subcommand, ValueEnum};
use cowork_app::{App, AppOptions};
use cowork_core::{Caller, SchedulerConfig};
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
    /// Ask the assistant: one turn, in the window's conversations (`-c` goes on with the latest).
    Chat(chat::ChatArgs),
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
    /// Agent Skills and Agent Plugins: install (with a review), list, remove.
    #[command(subcommand)]
    Skill(skill::SkillCmd),
    /// MCP servers of the enabled toolpacks.
    #[command(subcommand)]
    Mcp(McpCmd),
    /// The assistant's staged file changes: review, apply (whole or by hunk), reject, roll back.
    #[command(subcommand)]
    Changes(ChangesCmd),
    /// CalDAV and mail accounts; passwords go to the OS keyring only.
    #[command(subcommand)]
    Account(AccountCmd),
    /// The calendar: events, free time, .ics files, CalDAV sync.
    #[command(subcommand)]
    Calendar(CalendarCmd),
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

async fn run(cli: Cli) -> Result<ExitCode, String> {
    // The doctor opens nothing of the app's: it must answer where the app cannot start.
    match &cli.command {
        Command::Doctor => return doctor(&cli).await,
        Command::Assets(cmd) => return assets(&cli, cmd).await,
        _ => {}
    }
    if let Command::Mcp(McpCmd::Serve(args)) = &cli.command {
        return serve::serve(&cli, args).await;
    }
    let app = open_app(&cli)?;
    start_toolpacks_for(&app, &cli.command).await?;
    dispatch(&app, cli.command, &cli.conversation, cli.json).await
}

fn open_app(cli: &Cli) -> Result<App, String> {
    // Asking needs a person at a terminal; piped input answers only when explicitly requested
    // (scripts and tests), otherwise an ask is denied.
    let approver: Arc<dyn cowork_core::Approver> = if approve::person_at_terminal() {
        Arc::new(approve::TerminalApprover)
    } else {
        Arc::new(approve::Nobody)
    };
    open_app_with(cli, approver)
}

fn open_app_with(cli: &Cli, approver: Arc<dyn cowork_core::Approver>) -> Result<App, String> {
    let mut roots = cli.workspaces.clone();
    // `workspace trust DIR` opens DIR as a workspace, to read its settings as the policy would.
    if let Command::Workspace(WorkspaceCmd::Trust { dir, .. }) = &cli.command
        && !roots.contains(dir)
    {
        roots.push(dir.clone());
    }
    App::open(AppOptions {
        home: cli.home.clone(),
        workspace_roots: roots,
        approver,
        scheduler: SchedulerConfig::default(),
    })
    .map_err(|e| e.to_string())
}

/// Toolpack servers start before anything that lists or calls tools; their tools join the
/// registry as they come up. Managing toolpacks starts them itself.
async fn start_toolpacks_for(app: &App, command: &Command) -> Result<(), String> {
    match command {
        // A call waits only for the servers it may need: a builtin is never delayed by a pack.
        Command::Tools(ToolsCmd::Call { name, .. })
        | Command::Policy(PolicyCmd::Explain { name, .. }) => {
            warn_unstarted(app.start_toolpacks().map_err(|e| e.to_string())?);
            warn_not_running(&app.toolpacks_settled_for(name, SETTLE).await);
        }
        // A chain's plan names its steps' tools before any runs; a schedule's prompt is offered
        // the packs' tools (its runs would start them anyway, through the same function).
        Command::Tools(_)
        | Command::Chat(_)
        | Command::Chains(ChainsCmd::Run { .. } | ChainsCmd::Explain { .. })
        | Command::Schedule(ScheduleCmd::Serve) => start_toolpacks(app).await?,
        // `mcp servers` waits for every server, the ones that failed last time included: it is
        // how a pack that was fixed is found healthy again.
        Command::Mcp(_) => {
            warn_unstarted(app.start_toolpacks().map_err(|e| e.to_string())?);
            app.toolpacks_settled(SETTLE).await;
        }
        _ => {}
    }
    Ok(())
}

/// One function per command group.
async fn dispatch(
    app: &App,
    command: Command,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    match command {
        Command::Chat(args) => chat::chat(app, args, conversation).await,
        Command::Tools(cmd) => tools(app, cmd, conversation, json).await,
        Command::Policy(cmd) => policy(app, cmd, conversation, json),
        Command::Audit(cmd) => audit(app, cmd, json),
        Command::Provider(cmd) => provider(app, cmd).await,
        Command::Toolpack(cmd) => toolpack(app, cmd, json).await,
        Command::Skill(cmd) => skill::skill(app, cmd, json).await,
        Command::Mcp(cmd) => mcp(app, cmd, json),
        Command::Changes(cmd) => changes(app, cmd, conversation, json).await,
        Command::Account(cmd) => account(app, cmd, conversation, json).await,
        Command::Calendar(cmd) => calendar(app, cmd, conversation, json).await,
        Command::Tasks(cmd) => tasks(app, cmd, json).await,
        Command::Chains(cmd) => chains(app, cmd, conversation, json).await,
        Command::Schedule(cmd) => schedule(app, cmd, conversation, json).await,
        Command::Vault(cmd) => vault(app, cmd, conversation, json).await,
        Command::Voice(cmd) => voice(app, cmd, conversation, json).await,
        Command::Web(cmd) => web(app, cmd, conversation, json).await,
        Command::Workspace(cmd) => workspace(app, cmd, json),
        Command::Open { link } => open(app, &link, json).await,
        Command::Doctor | Command::Assets(_) => {
            unreachable!("the doctor and assets answer before the app opens")
        }
    }
}
