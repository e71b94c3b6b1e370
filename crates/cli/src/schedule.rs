//! Scheduled runs: `cowork schedule add | list | remove | runs | serve`.

use super::*;
use cowork_app::chains::{Missed, Schedule, Target};

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
        /// The named tool profile a prompt's runs are held to (Settings → Profiles).
        #[arg(long, requires = "prompt")]
        profile: Option<String>,
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
            profile,
            name,
            missed,
        } => {
            let missed: Missed = missed.parse()?;
            let added = match (chain, prompt) {
                (Some(chain), _) => {
                    let (target, granted) = chain_target(app, &chain, &inputs, conversation)?;
                    let name = name.as_deref().unwrap_or(&chain);
                    schedules.add(name, &cron, target, missed, granted, chrono::Utc::now())
                }
                (None, Some(prompt)) => {
                    esay!(
                        "A scheduled prompt runs unattended: anything that needs your approval waits for you as a task."
                    );
                    schedules.add_prompt(name.as_deref(), &cron, &prompt, profile.as_deref(), missed, chrono::Utc::now())
                }
                (None, None) => return Err("give --chain NAME or --prompt TEXT".into()),
            }
            .map_err(|e| e.to_string())?;
            print_added(&added, json);
        }
        ScheduleCmd::List => list(app, json)?,
        ScheduleCmd::Remove { name } => {
            schedules.remove(&name).map_err(|e| e.to_string())?;
            say!("removed {name}");
        }
        ScheduleCmd::Runs { name, limit } => runs(app, name.as_deref(), limit, json)?,
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

/// A chain to schedule with its inputs, and the effects the person grants its unattended runs.
fn chain_target(
    app: &App,
    chain: &str,
    inputs: &str,
    conversation: &str,
) -> Result<(Target, Vec<cowork_contract::Effect>), String> {
    let found = app.chains().get(chain)?;
    let inputs: serde_json::Value =
        serde_json::from_str(inputs).map_err(|e| format!("--inputs is not valid JSON ({e})"))?;
    let plan = app.chains().explain(&found, &inputs, conversation)?;
    let granted = grant(&plan.effects)?;
    let target = Target::Chain {
        chain: chain.to_string(),
        inputs,
    };
    Ok((target, granted))
}

/// When a schedule runs next, in the local zone.
fn local_time(at: &chrono::DateTime<chrono::Utc>) -> impl std::fmt::Display {
    at.with_timezone(&chrono::Local).format("%a %d %b %H:%M")
}

fn print_added(added: &Schedule, json: bool) {
    if json {
        return print::print_json(added);
    }
    say!(
        "{}: {} — next {}",
        added.name,
        added.when,
        local_time(&added.next_due)
    );
}

fn list(app: &App, json: bool) -> Result<(), String> {
    let all = app.schedules().list().map_err(|e| e.to_string())?;
    if json {
        print::print_json(&all);
        return Ok(());
    }
    for s in all {
        say!(
            "{}  {} ({})  next {}  {} effect(s) granted",
            s.name,
            s.when,
            s.cron,
            local_time(&s.next_due),
            s.granted.len()
        );
    }
    Ok(())
}

fn runs(app: &App, name: Option<&str>, limit: usize, json: bool) -> Result<(), String> {
    let runs = app
        .schedules()
        .history(name, limit)
        .map_err(|e| e.to_string())?;
    if json {
        print::print_json(&runs);
        return Ok(());
    }
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
    Ok(())
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
    if !approve::person_at_terminal() {
        esay!(
            "No terminal to ask: nothing is granted; anything that needs approval will wait for you."
        );
        return Ok(vec![]);
    }
    let allowed =
        approve::ask_yes("Allow them for every run of this schedule, with nobody there? [y/N] > ")?;
    Ok(if allowed { effects.to_vec() } else { vec![] })
}
