//! `cowork chat`: one turn of the assistant from the command line, in the same conversation
//! store as the window (a chat started here opens there) and through the same agent, review and
//! audit. Asks are answered at the terminal; with no terminal they are refused (the model hears
//! why).

use crate::print::json_text;
use clap::{Args, ValueEnum};
use cowork_agent::AgentEvent;
use cowork_app::App;
use std::io::Write;
use std::process::ExitCode;

#[derive(Args)]
pub struct ChatArgs {
    /// What to ask; read from standard input when left out or `-`.
    prompt: Option<String>,
    /// Go on with the most recent conversation (the global `--conversation ID` names another).
    #[arg(short = 'c', long = "continue")]
    resume: bool,
    /// How to print: the answer as it streams (text), one JSON object at the end (json), or
    /// every event of the turn as a JSON line (stream-json).
    #[arg(long, value_enum, default_value_t = ChatOutput::Text)]
    output: ChatOutput,
    /// The model this conversation uses from now on (the provider's id for it).
    #[arg(long)]
    model: Option<String>,
    /// The named tool profile this conversation runs under from now on (Settings → Profiles).
    #[arg(long)]
    profile: Option<String>,
    /// Allow calls this rule covers, for this run only, without asking — a rule as in your
    /// settings (`create_task`, `write_file(~/notes/**)`, `run_command(git status:*)`), held to
    /// the same checks: no rule wider than a person usually means. Deny rules and taint stand.
    #[arg(long = "allow", value_name = "RULE")]
    allow: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum ChatOutput {
    Text,
    Json,
    StreamJson,
}

/// The global `--conversation` when none was given.
const UNNAMED: &str = "cli";

/// Exit codes: 0 answered, 1 the turn failed, 2 the command was wrong (as for clap's own
/// errors), 3 answered, but something waited for an answer nobody at a terminal could give.
const FAILED: u8 = 1;
const WRONG: u8 = 2;
const NOBODY_TO_ASK: u8 = 3;

pub async fn chat(app: &App, args: ChatArgs, conversation: &str) -> Result<ExitCode, String> {
    match prepare(app, &args, conversation) {
        Ok((agent, conversation)) => turn(agent, args, conversation).await,
        Err(e) => {
            esay!("error: {e}");
            Ok(ExitCode::from(WRONG))
        }
    }
}

/// The agent (with this run's grants) and the conversation, its model and profile set.
fn prepare(
    app: &App,
    args: &ChatArgs,
    conversation: &str,
) -> Result<(cowork_agent::Agent, String), String> {
    let policy = app.scheduler().policy();
    let grants = args
        .allow
        .iter()
        .map(|rule| {
            policy
                .run_grant(rule)
                .map_err(|e| format!("--allow {rule}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let agent = app.agent()?.ok_or(
        "no model provider is configured: `cowork provider set …`, or Settings → Model in the window",
    )?;
    let conversation = conversation_for(app, args.resume, conversation)?;
    if args.model.is_some() || args.profile.is_some() {
        if let Some(name) = &args.profile {
            agent.named_profile(name).map_err(|e| e.to_string())?;
        }
        let conversations = agent.conversations();
        conversations.ensure(&conversation, "Chat from the terminal")?;
        let mut settings = conversations.settings(&conversation)?;
        settings.model = args.model.clone().or(settings.model);
        settings.profile = args.profile.clone().or(settings.profile);
        conversations.choose_settings(&conversation, &settings)?;
    }
    Ok((agent.with_run_grants(grants), conversation))
}

/// One turn, printed as asked.
async fn turn(
    agent: cowork_agent::Agent,
    args: ChatArgs,
    conversation: String,
) -> Result<ExitCode, String> {
    let prompt = prompt_of(args.prompt)?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    // The sender ends with the turn, and with it the loop printing its events.
    let turn = async {
        let tx = tx;
        let cancel = tokio_util::sync::CancellationToken::new();
        agent.send(&conversation, &prompt, &tx, cancel).await
    };
    let mut printed = Printed::default();
    let (result, ()) = tokio::join!(turn, async {
        while let Some(event) = rx.recv().await {
            printed.show(args.output, &event);
        }
    });
    let failed = result.as_ref().err().map(|e| e.to_string());
    match args.output {
        ChatOutput::Json => println!(
            "{}",
            json_text(
                &serde_json::json!({"conversation": conversation, "text": printed.text,
                    "tool_calls": printed.calls, "error": failed}),
                false
            )
        ),
        ChatOutput::StreamJson => println!(
            "{}",
            json_text(
                &serde_json::json!({"type": "result", "conversation": conversation, "error": failed}),
                false
            )
        ),
        ChatOutput::Text => {
            say!("");
            esay!("(conversation {conversation}: `cowork chat -c` goes on)");
        }
    }
    let refused = crate::approve::refused_for_nobody();
    match failed {
        Some(e) => {
            esay!("error: {e}");
            Ok(ExitCode::from(FAILED))
        }
        None if refused > 0 => {
            esay!(
                "{refused} call(s) needed your answer and there was no terminal to ask, so they were refused: run at a terminal, or allow them for one run with --allow RULE"
            );
            Ok(ExitCode::from(NOBODY_TO_ASK))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

/// What the turn printed so far, for the JSON at its end.
#[derive(Default)]
struct Printed {
    text: String,
    calls: Vec<serde_json::Value>,
}

impl Printed {
    fn show(&mut self, output: ChatOutput, event: &AgentEvent) {
        match event {
            AgentEvent::TextDelta { text } => {
                self.text.push_str(text);
                if output == ChatOutput::Text {
                    // Streamed as it comes, escaped like every line the CLI prints.
                    print!("{}", cowork_contract::text::printable_text(text));
                    let _ = std::io::stdout().flush();
                }
            }
            AgentEvent::ToolCallFinished { name, ok, .. } => {
                self.calls.push(serde_json::json!({"tool": name, "ok": ok}));
                if output == ChatOutput::Text {
                    esay!("[{name}: {}]", if *ok { "done" } else { "not done" });
                }
            }
            _ => {}
        }
        if output == ChatOutput::StreamJson {
            println!("{}", json_text(event, false));
        }
    }
}

/// The prompt: the argument, or standard input (all of it) when there is none or it is `-`.
fn prompt_of(given: Option<String>) -> Result<String, String> {
    let text = match given.filter(|p| p != "-") {
        Some(text) => text,
        None => std::io::read_to_string(std::io::stdin())
            .map_err(|e| format!("reading the prompt from standard input: {e}"))?,
    };
    if text.trim().is_empty() {
        return Err("nothing to ask: give a prompt, or pipe one in".into());
    }
    Ok(text)
}

/// The conversation the turn goes to: the one named, the most recent (`-c`), or a new one.
fn conversation_for(app: &App, resume: bool, named: &str) -> Result<String, String> {
    if named != UNNAMED {
        return Ok(named.to_string());
    }
    if !resume {
        return Ok(uuid::Uuid::new_v4().to_string());
    }
    let conversations =
        cowork_agent::Conversations::open(app.store()).map_err(|e| e.to_string())?;
    let listed = conversations.list(None).map_err(|e| e.to_string())?;
    listed
        .into_iter()
        .max_by(|a, b| a.updated_at.cmp(&b.updated_at))
        .map(|c| c.id)
        .ok_or_else(|| "no conversation to go on with: start one with `cowork chat \"…\"`".into())
}
