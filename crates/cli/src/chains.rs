//! Tool chains: `cowork chains list | show | explain | run | runs | resume`.

use super::*;
use cowork_app::chains::{
    Chain, ChainEvent, ChainPlan, ResumeChoice, RunOptions, RunReport, RunState,
};
use cowork_contract::Effect;
use std::sync::Arc;

#[derive(Subcommand)]
pub(crate) enum ChainsCmd {
    /// The chains of the data dir and the installed toolpacks (and files that could not be read).
    List,
    /// One chain's inputs, steps and outputs.
    Show { name: String },
    /// Every step's effects and review, before anything runs.
    Explain {
        name: String,
        /// Inputs as a JSON object.
        #[arg(long, default_value = "{}")]
        inputs: String,
    },
    /// Runs a chain: its effects are shown and asked for once; each step is still reviewed.
    Run {
        name: String,
        #[arg(long, default_value = "{}")]
        inputs: String,
    },
    /// Recent runs and how they ended.
    Runs {
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Goes on with an interrupted or failed run; steps that completed are not run again.
    Resume {
        run: String,
        /// A step that may already have acted: take it as done (not run again).
        #[arg(long)]
        skip: Vec<String>,
        /// A step that may already have acted: run it again anyway.
        #[arg(long)]
        rerun: Vec<String>,
    },
}

fn parse_inputs(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| {
        format!("--inputs is not valid JSON ({e}); write an object, e.g. --inputs '{{\"path\": \"notes.md\"}}'")
    })
}

/// Progress, one line per event, to stderr (stdout keeps the result).
fn progress(json: bool) -> impl Fn(&ChainEvent) + Send + Sync {
    move |event: &ChainEvent| {
        if json {
            return;
        }
        match event {
            ChainEvent::ChainStarted { chain, steps, .. } => {
                esay!("▶ {chain}: {} steps", steps.len())
            }
            ChainEvent::StepStarted {
                step,
                tool,
                attempt,
                ..
            } if *attempt > 1 => esay!("  · {step} ({tool}), try {attempt}"),
            ChainEvent::StepStarted { step, tool, .. } => esay!("  · {step} ({tool})"),
            ChainEvent::StepCompleted { step, skipped, .. } => {
                esay!("  {} {step}", if *skipped { "–" } else { "✓" })
            }
            ChainEvent::StepFailed {
                step,
                error,
                retrying,
                ..
            } => esay!(
                "  ✗ {step}: {error}{}",
                if *retrying { " (trying again)" } else { "" }
            ),
            ChainEvent::ChainCompleted { .. } => esay!("■ done"),
            ChainEvent::ChainFailed { error, .. } => esay!("■ stopped: {error}"),
        }
    }
}

fn report(report: &RunReport, json: bool) -> ExitCode {
    if json {
        print::print_json(report);
    } else {
        say!("run {} — {:?}", report.run, report.state);
        print::print_json(&report.outputs);
        if report.state != RunState::Completed {
            say!("go on with: cowork chains resume {}", report.run);
        }
    }
    success_if(report.state == RunState::Completed)
}

/// A finished run, reported once its calls' audit rows are committed.
fn finish(app: &App, done: &RunReport, json: bool) -> Result<ExitCode, String> {
    app.scheduler().flush().map_err(|e| e.to_string())?;
    Ok(report(done, json))
}

pub(crate) async fn chains(
    app: &App,
    cmd: ChainsCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let chains = app.chains();
    match cmd {
        ChainsCmd::List => list(app, json),
        ChainsCmd::Show { name } => show(&chains.get(&name)?),
        ChainsCmd::Explain { name, inputs } => {
            let chain = chains.get(&name)?;
            let plan = chains.explain(&chain, &parse_inputs(&inputs)?, conversation)?;
            print_plan(&plan, json);
        }
        ChainsCmd::Run { name, inputs } => {
            return run(app, &name, &inputs, conversation, json).await;
        }
        ChainsCmd::Runs { limit } => runs(app, limit, json)?,
        ChainsCmd::Resume { run, skip, rerun } => {
            let choice = ResumeChoice { skip, rerun };
            let done = chains
                .resume(&run, &choice, &progress(json))
                .await
                .map_err(|e| e.to_string())?;
            return finish(app, &done, json);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(app: &App, json: bool) {
    let (found, problems) = app.chains().load_all();
    if json {
        let list: Vec<_> = found
            .iter()
            .map(|c| serde_json::json!({"name": c.name, "description": c.description, "steps": c.steps.len(), "source": c.source}))
            .collect();
        let problems: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        say!(
            "{}",
            serde_json::json!({"chains": list, "problems": problems})
        );
        return;
    }
    for chain in &found {
        say!(
            "{}  {} ({} steps) — {}",
            chain.name,
            chain.description,
            chain.steps.len(),
            chain.source.display()
        );
    }
    for problem in &problems {
        esay!("not loaded: {problem}");
    }
    if found.is_empty() && problems.is_empty() {
        say!(
            "no chains yet: a chain is a TOML file in {}",
            app.home().root().join("chains").display()
        );
    }
}

fn show(chain: &Chain) {
    say!("{} — {}", chain.name, chain.description);
    say!(
        "inputs: {}",
        serde_json::to_string(&chain.input_schema()["properties"]).unwrap_or_default()
    );
    for step in &chain.steps {
        say!(
            "  {} = {}({}){}",
            step.id,
            step.tool,
            step.args,
            step.when
                .as_deref()
                .map(|w| format!(" when {w}"))
                .unwrap_or_default()
        );
    }
    for (name, expression) in &chain.outputs {
        say!("  → {name} = {expression}");
    }
}

/// Shows the plan, asks once for its effects when a step would ask, then runs it.
async fn run(
    app: &App,
    name: &str,
    inputs: &str,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let chains = app.chains();
    let chain = chains.get(name)?;
    let inputs = parse_inputs(inputs)?;
    let plan = chains.explain(&chain, &inputs, conversation)?;
    print_plan(&plan, json);
    let granted = grant_for_run(&chain, &plan)?;
    let options = RunOptions {
        conversation: conversation.to_string(),
        granted,
        unattended: false,
    };
    let done = chains
        .run(&chain, &inputs, &options, &progress(json))
        .await
        .map_err(|e| e.to_string())?;
    finish(app, &done, json)
}

/// When a step would ask and someone can answer, the plan's effects are asked for once and
/// granted for this run; declining runs nothing.
fn grant_for_run(chain: &Chain, plan: &ChainPlan) -> Result<Option<Arc<[Effect]>>, String> {
    let asks = plan
        .steps
        .iter()
        .any(|s| s.decision.as_deref() == Some("ask"));
    if !(asks && approve::person_at_terminal()) {
        return Ok(None);
    }
    let question = format!(
        "Run {} and allow these {} effect(s) for this run? [y/N] > ",
        chain.name,
        plan.effects.len()
    );
    if !approve::ask_yes(&question)? {
        return Err("not run".into());
    }
    Ok(Some(Arc::from(plan.effects.clone())))
}

fn runs(app: &App, limit: usize, json: bool) -> Result<(), String> {
    let runs = app
        .chains()
        .runner()
        .runs(limit)
        .map_err(|e| e.to_string())?;
    if json {
        print::print_json(&runs);
        return Ok(());
    }
    for run in runs {
        say!(
            "{}  {}  {:?}  {}{}",
            run.id,
            run.chain,
            run.state,
            run.started_at,
            run.error
                .as_deref()
                .map(|e| format!(" — {e}"))
                .unwrap_or_default()
        );
    }
    Ok(())
}

fn print_plan(plan: &ChainPlan, json: bool) {
    if json {
        return print::print_json(plan);
    }
    say!("{}: {} steps", plan.chain, plan.steps.len());
    for step in &plan.steps {
        let effects = match &step.effects {
            Some(effects) if effects.is_empty() => "no effects".to_string(),
            Some(effects) => effects
                .iter()
                .map(|e| serde_json::to_string(e).unwrap_or_default())
                .collect::<Vec<_>>()
                .join(", "),
            None => "effects known when it runs".to_string(),
        };
        say!(
            "  {} ({}): {} — {} {}",
            step.id,
            step.tool,
            effects,
            step.decision.as_deref().unwrap_or("review at run time"),
            step.why
        );
    }
}
