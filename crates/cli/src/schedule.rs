//! Scheduled runs: `cowork schedule add | list | remove | runs | serve`.

use super::*;
use cowork_app::chains::{Missed, Target};

#[derive(Subcommand)]
pub(crate) enum ScheduleCmd {
    /// A new schedule: a chain (its effects are shown and granted for its unattended runs) or a
    /// prompt, at a cron time in your zone, e.g. "0 8 * * 1-5" (weekdays at 8:00).
    Add {
        cron: String,
        #[arg(long, conflicts_with = "prompt", required_unless_present = "prompt")]
        chain: Option<String>,
        /// The chain's inputs as a JSON object.
        #[arg(long, default_value = "{}")]
        inputs: String,
        #[arg(long)]
        prompt: Option<String>,
        /// Its name (default: the chain's, or the prompt's first words).
        #[arg(long)]
        name: Option<String>,
        /// A run missed while the computer slept or Cowork was closed: run-once or skip.
        #[arg(long, default_value = "run-once")]
        missed: String,
    },
    List,
    Remove {
        name: String,
    },
    /// Recent runs (of one schedule, or all).
    Runs {
        name: Option<String>,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Runs the schedules in the foreground (the window does this while it runs).
    Serve,
}

pub(crate) async fn schedule(
    app: &App,
    cmd: ScheduleCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let schedules = app.schedules();
    match cmd {
        ScheduleCmd::Add {
            cron,
            chain,
            inputs,
            prompt,
            name,
            missed,
        } => {
            let missed: Missed = missed.parse()?;
            let added = match (chain, prompt) {
                (Some(chain), _) => {
                    let found = app.chains().get(&chain)?;
                    let inputs: serde_json::Value = serde_json::from_str(&inputs)
                        .map_err(|e| format!("--inputs is not valid JSON ({e})"))?;
                    let plan = app.chains().explain(&found, &inputs, conversation)?;
                    let granted = grant(&plan.effects)?;
                    let target = Target::Chain {
                        chain: chain.clone(),
                        inputs,
                    };
                    let name = name.as_deref().unwrap_or(&chain);
                    schedules.add(name, &cron, target, missed, granted, chrono::Utc::now())
                }
                (None, Some(prompt)) => {
                    esay!(
                        "A scheduled prompt runs unattended: anything that needs your approval waits for you as a task."
                    );
                    schedules.add_prompt(name.as_deref(), &cron, &prompt, missed, chrono::Utc::now())
                }
                (None, None) => return Err("give --chain NAME or --prompt TEXT".into()),
            }
            .map_err(|e| e.to_string())?;
            if json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&added).unwrap_or_default()
                );
            } else {
                say!(
                    "{}: {} — next {}",
                    added.name,
                    added.when,
                    added
                        .next_due
                        .with_timezone(&chrono::Local)
                        .format("%a %d %b %H:%M")
                );
            }
        }
        ScheduleCmd::List => {
            let all = schedules.list().map_err(|e| e.to_string())?;
            if json {
                say!("{}", serde_json::to_string_pretty(&all).unwrap_or_default());
            } else {
                for s in all {
                    say!(
                        "{}  {} ({})  next {}  {} effect(s) granted",
                        s.name,
                        s.when,
                        s.cron,
                        s.next_due
                            .with_timezone(&chrono::Local)
                            .format("%a %d %b %H:%M"),
                        s.granted.len()
                    );
                }
            }
        }
        ScheduleCmd::Remove { name } => {
            schedules.remove(&name).map_err(|e| e.to_string())?;
            say!("removed {name}");
        }
        ScheduleCmd::Runs { name, limit } => {
            let runs = schedules
                .history(name.as_deref(), limit)
                .map_err(|e| e.to_string())?;
            if json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&runs).unwrap_or_default()
                );
            } else {
                for r in runs {
                    say!(
                        "{}  {}  due {}  {}{}{}{}",
                        r.schedule,
                        r.id,
                        r.due_at,
                        r.state,
                        if r.missed { " (missed)" } else { "" },
                        r.waiting_on
                            .iter()
                            .map(|task| format!(" — `cowork tasks resume {task}`"))
                            .collect::<String>(),
                        r.detail.map(|d| format!(" — {d}")).unwrap_or_default()
                    );
                }
            }
        }
        ScheduleCmd::Serve => {
            esay!("running the schedules; Ctrl+C stops");
            tokio::select! {
                _ = app.schedule_worker() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The person grants a chain's effects for its unattended runs, seeing each; without a
/// terminal nothing is granted (every ask then waits for them).
fn grant(effects: &[cowork_contract::Effect]) -> Result<Vec<cowork_contract::Effect>, String> {
    if effects.is_empty() {
        return Ok(vec![]);
    }
    esay!("Its runs will have these effects:");
    for effect in effects {
        esay!("  {}", serde_json::to_string(effect).unwrap_or_default());
    }
    if !(std::io::stdin().is_terminal() || std::env::var_os("COWORK_APPROVE_FROM_STDIN").is_some())
    {
        esay!(
            "No terminal to ask: nothing is granted; anything that needs approval will wait for you."
        );
        return Ok(vec![]);
    }
    eprint!("Allow them for every run of this schedule, with nobody there? [y/N] > ");
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    Ok(
        if matches!(line.trim().to_lowercase().as_str(), "y" | "yes") {
            effects.to_vec()
        } else {
            vec![]
        },
    )
}
