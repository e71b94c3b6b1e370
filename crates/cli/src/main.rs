//! `cowork`: the command-line shell. Parses arguments, prints results, and asks in the terminal
//! when the policy says "ask". Everything else is the core's (through cowork-app).

mod approve;
mod print;

use clap::{Parser, Subcommand, ValueEnum};
use cowork_app::{App, AppOptions};
use cowork_core::{Action, AuditFilter, CallRequest, Caller, Mode, Registry, RuleSource, SchedulerConfig};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(name = "cowork", version, about = "Cowork: a desktop assistant whose every tool call is reviewed and audited")]
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
    /// Check the hash chain; exits 1 naming each tampered row.
    Verify,
    /// Every row, oldest first.
    Export {
        /// One JSON object per line (the only format so far).
        #[arg(long)]
        jsonl: bool,
    },
    /// The last row's number and hash: write it down elsewhere to anchor the chain.
    Head,
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
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let result = runtime.block_on(run(cli));
    // A terminal prompt still blocked on stdin (its ask timed out) must not keep us alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

async fn run(cli: Cli) -> Result<ExitCode, String> {
    // Asking needs a person at a terminal; piped input answers only when explicitly requested
    // (scripts and tests), otherwise an ask is denied.
    let approver: Arc<dyn cowork_core::Approver> = if std::io::stdin().is_terminal() || std::env::var_os("COWORK_APPROVE_FROM_STDIN").is_some() {
        Arc::new(approve::TerminalApprover)
    } else {
        Arc::new(cowork_core::DenyApprover)
    };
    let app = App::open(AppOptions { home: cli.home.clone(), workspace_roots: cli.workspaces.clone(), approver, scheduler: SchedulerConfig::default() })
        .map_err(|e| e.to_string())?;
    let scheduler = app.scheduler().clone();
    let registry = scheduler.registry().clone();
    let policy = scheduler.policy().clone();
    let json = cli.json;
    let conversation = cli.conversation.as_str();

    match cli.command {
        Command::Tools(ToolsCmd::List { category }) => {
            let tools: Vec<_> = registry.list().into_iter().filter(|t| category.as_ref().is_none_or(|c| &t.spec.category == c)).collect();
            print::tools(&tools, json);
        }
        Command::Tools(ToolsCmd::Search { query, limit }) => print::search(&registry.search(&query, limit), json),
        Command::Tools(ToolsCmd::Show { name }) => {
            let info = registry.get(&name).ok_or_else(|| registry.not_found(&name).to_string())?;
            print::tool(&info, json);
        }
        Command::Tools(ToolsCmd::Export { format }) => {
            let visible = registry.visible(&[]);
            let out = match format {
                Format::Anthropic => Registry::export_anthropic(&visible),
                Format::Openai => Registry::export_openai(&visible),
            };
            println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        }
        Command::Tools(ToolsCmd::Call { name, args }) => {
            let args = parse_args(&args)?;
            let outcome = scheduler.call(CallRequest::new(&name, args, Caller::Cli, conversation)).await;
            // Nothing is reported done before its audit row is committed.
            scheduler.flush().map_err(|e| e.to_string())?;
            print::outcome(&outcome, json);
            return Ok(match &outcome.result {
                Ok(_) => ExitCode::SUCCESS,
                Err(cowork_contract::ToolError::Denied { .. }) => ExitCode::from(3),
                Err(_) => ExitCode::FAILURE,
            });
        }
        Command::Policy(PolicyCmd::Explain { name, args }) => {
            let args = parse_args(&args)?;
            let explanation = scheduler.explain(&name, &args, conversation, None).map_err(|e| e.to_string())?;
            print::explanation(&explanation, json);
        }
        Command::Policy(PolicyCmd::Rules(RulesCmd::List)) => print::rules(&policy.rules(Some(conversation)), json),
        Command::Policy(PolicyCmd::Rules(RulesCmd::Add { action, rule, in_workspace })) => {
            let action: Action = action.parse()?;
            let source = if in_workspace { RuleSource::Workspace } else { RuleSource::User };
            policy.add_rule(action, &rule, source).map_err(|e| e.to_string())?;
            if !json {
                println!("added {} rule `{rule}` to {}", action.as_str(), source.as_str());
            }
        }
        Command::Policy(PolicyCmd::Rules(RulesCmd::Remove { rule })) => {
            let removed = policy.remove_rule(&rule, Some(conversation)).map_err(|e| e.to_string())?;
            if removed == 0 {
                return Err(format!("no rule `{rule}` found; `cowork policy rules list` shows them"));
            }
            if !json {
                println!("removed `{rule}` ({removed} entr{})", if removed == 1 { "y" } else { "ies" });
            }
        }
        Command::Policy(PolicyCmd::Mode { mode }) => {
            if let Some(mode) = mode {
                policy.set_mode(Mode::parse(&mode)?, true).map_err(|e| e.to_string())?;
            }
            if json {
                println!("{}", serde_json::json!({"mode": policy.mode()}));
            } else {
                println!("mode: {}", policy.mode().as_str());
            }
        }
        Command::Audit(AuditCmd::List { tool, decision, limit }) => {
            let filter = AuditFilter { tool, decision, limit: Some(limit), ..Default::default() };
            print::audit_rows(&scheduler.audit().list(&filter).map_err(|e| e.to_string())?, json);
        }
        Command::Audit(AuditCmd::Verify) => {
            let report = scheduler.audit().verify().map_err(|e| e.to_string())?;
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
                        && let Err(e) = writeln!(out, "{}", serde_json::to_string(&row).unwrap_or_default())
                    {
                        write_err = Some(e);
                    }
                })
                .map_err(|e| e.to_string())?;
            out.flush().map_err(|e| e.to_string())?;
        }
        Command::Provider(cmd) => return provider(&app, cmd).await,
        Command::Audit(AuditCmd::Head) => {
            let (seq, hash) = scheduler.audit().head().map_err(|e| e.to_string())?;
            if json {
                println!("{}", serde_json::json!({"seq": seq, "hash": hash}));
            } else {
                println!("{seq} {hash}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn provider(app: &App, cmd: ProviderCmd) -> Result<ExitCode, String> {
    use cowork_app::{AgentSettings, ProviderKind};
    let path = app.home().settings_path();
    match cmd {
        ProviderCmd::Set { provider, base_url, model, api_key_env } => {
            let provider = match provider {
                ProviderArg::Anthropic => ProviderKind::Anthropic,
                ProviderArg::Openai => ProviderKind::Openai,
            };
            let settings = AgentSettings { provider, base_url, model, api_key_env, allowed_tools: None, max_steps: cowork_agent_default_steps() };
            settings.save(&path)?;
            println!("provider saved to {}", path.display());
        }
        ProviderCmd::Key => {
            let settings = AgentSettings::load(&path)?.ok_or("set a provider first: `cowork provider set …`")?;
            let mut key = String::new();
            std::io::stdin().read_line(&mut key).map_err(|e| e.to_string())?;
            cowork_app::secrets::set(&settings.keyring_account(), &key)?;
            println!("key stored in the OS keyring ({})", settings.keyring_account());
        }
        ProviderCmd::Check => {
            let agent = app.agent()?.ok_or("set a provider first: `cowork provider set …`")?;
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let conversation = format!("provider-check-{}", std::process::id());
            agent.send(&conversation, "Reply with one word: pong.", &tx, Default::default()).await.map_err(|e| e.to_string())?;
            drop(tx);
            let mut reply = String::new();
            while let Some(event) = rx.recv().await {
                if let cowork_agent::AgentEvent::TextDelta { text } = event {
                    reply.push_str(&text);
                }
            }
            println!("{}", reply.trim());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn cowork_agent_default_steps() -> u32 {
    cowork_agent::AgentConfig::default().max_steps
}
