//! Tool chains: declarative files (TOML) in the data dir's `chains/` folder and in toolpacks,
//! each a list of steps — a tool, its arguments templated from the chain's inputs and earlier
//! results, a condition, what to do on error — run by [`Runner`], in which every step is a
//! `Scheduler::call` (caller `chain`), reviewed and audited on its own.
//!
//! Trust: a chain file is content. It names tools and arguments, nothing more: it cannot allow
//! anything. [`Chains::explain`] lists every step's effects up front; when the person approves
//! the chain (its tool call, whose effects are the steps' known ones), that approval covers
//! exactly those effects — a step whose effects turn out different when it runs asks again.
//! Each chain is also a tool (`chain_<name>`), so the model can run it.

mod def;
mod run;
mod schedule;
mod schema;
mod template;

pub use def::{Chain, ChainFileError, Input, InputKind, OnError, Step};
pub use run::{
    ChainEvent, ResumeChoice, RunError, RunOptions, RunReport, RunRow, RunState, Runner,
};
pub use schedule::{
    Clock, CronPreview, Firing, Missed, PromptReply, PromptRunner, Schedule, ScheduleError,
    ScheduleRun, ScheduleRunState, Schedules, SystemClock, Target, name_for_prompt, preview, serve,
};
pub use schema::SCHEMA;

use cowork_contract::{
    Annotations, DynTool, Effect, EffectEnv, PreparedCall, ToolError, ToolOutput, ToolProvider,
    ToolSpec,
};
use cowork_core::Scheduler;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

/// The chains of this data dir and of the installed toolpacks, and their runner.
pub struct Chains {
    dirs: Vec<PathBuf>,
    runner: Arc<Runner>,
    events: tokio::sync::broadcast::Sender<ChainEvent>,
}

/// One step as `explain` shows it.
#[derive(Clone, Debug, Serialize)]
pub struct StepPlan {
    pub id: String,
    pub tool: String,
    pub when: Option<String>,
    /// Known before the run (arguments from the inputs only); `None` when they depend on an
    /// earlier step's result — then they are reviewed (and asked) when the step runs.
    pub effects: Option<Vec<Effect>>,
    /// What the review would say now: allow, ask or deny.
    pub decision: Option<String>,
    pub why: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ChainPlan {
    pub chain: String,
    pub steps: Vec<StepPlan>,
    /// Every effect known up front: what approving the chain covers.
    pub effects: Vec<Effect>,
}

impl Chains {
    /// `dirs`: the data dir's `chains/` first, then each toolpack's (a toolpack's chain with the
    /// name of the person's own is hidden by it).
    pub fn open(
        store: &cowork_store::Store,
        scheduler: Arc<Scheduler>,
        dirs: Vec<PathBuf>,
    ) -> Result<Chains, RunError> {
        Ok(Chains {
            dirs,
            runner: Arc::new(Runner::new(scheduler, store)?),
            events: tokio::sync::broadcast::channel(256).0,
        })
    }

    pub fn runner(&self) -> &Arc<Runner> {
        &self.runner
    }

    /// Progress of every run (the window's card).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ChainEvent> {
        self.events.subscribe()
    }

    /// Every chain file found, and the files that could not be used (with line and field).
    pub fn load_all(&self) -> (Vec<Chain>, Vec<ChainFileError>) {
        load_all(&self.dirs)
    }

    pub fn get(&self, name: &str) -> Result<Chain, String> {
        let (chains, problems) = self.load_all();
        if let Some(chain) = chains.into_iter().find(|c| c.name == name) {
            return Ok(chain);
        }
        let broken = problems
            .iter()
            .find(|p| p.file.file_stem().and_then(|s| s.to_str()) == Some(name));
        Err(match broken {
            Some(problem) => problem.to_string(),
            None => format!(
                "no chain {name:?}: `cowork chains list` shows them; a chain is a TOML file in {}",
                self.dirs
                    .first()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default()
            ),
        })
    }

    /// Every step's effects and review, before anything runs.
    pub fn explain(
        &self,
        chain: &Chain,
        inputs: &serde_json::Value,
        conversation: &str,
    ) -> Result<ChainPlan, String> {
        explain(&self.runner.scheduler(), chain, inputs, conversation)
    }

    /// Runs a chain (the CLI, a schedule); its events go to `on_event` and to subscribers.
    pub async fn run(
        &self,
        chain: &Chain,
        inputs: &serde_json::Value,
        options: &RunOptions,
        on_event: &(dyn Fn(&ChainEvent) + Send + Sync),
    ) -> Result<RunReport, RunError> {
        let events = self.events.clone();
        let both = move |e: &ChainEvent| {
            let _ = events.send(e.clone());
            on_event(e);
        };
        self.runner.run(chain, inputs, options, &both).await
    }

    pub async fn resume(
        &self,
        run: &str,
        choice: &ResumeChoice,
        on_event: &(dyn Fn(&ChainEvent) + Send + Sync),
    ) -> Result<RunReport, RunError> {
        let name = self.runner.chain_of(run)?;
        let chain = self.get(&name).map_err(RunError::Inputs)?;
        let events = self.events.clone();
        let both = move |e: &ChainEvent| {
            let _ = events.send(e.clone());
            on_event(e);
        };
        self.runner.resume(run, &chain, choice, &both).await
    }

    /// A waiting run's task was resumed by the person: the run goes on (see
    /// [`Runner::continue_after`]). None when no run waits on `task`.
    pub async fn continue_after(
        &self,
        task: &str,
        outcome: &Result<cowork_contract::ToolOutput, ToolError>,
        on_event: &(dyn Fn(&ChainEvent) + Send + Sync),
    ) -> Option<Result<RunReport, RunError>> {
        let events = self.events.clone();
        let both = move |e: &ChainEvent| {
            let _ = events.send(e.clone());
            on_event(e);
        };
        let lookup = |name: &str| self.get(name);
        self.runner
            .continue_after(task, outcome, &lookup, &both)
            .await
    }

    /// The chains as tools (`chain_<name>`), for the registry.
    pub fn provider(&self) -> Arc<dyn ToolProvider> {
        Arc::new(ChainTools {
            dirs: self.dirs.clone(),
            runner: Arc::downgrade(&self.runner),
            events: self.events.clone(),
        })
    }
}

fn load_all(dirs: &[PathBuf]) -> (Vec<Chain>, Vec<ChainFileError>) {
    let mut chains: Vec<Chain> = Vec::new();
    let mut problems = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for file in files {
            match Chain::load(&file) {
                Ok(chain) if chains.iter().any(|c| c.name == chain.name) => {}
                Ok(chain) => chains.push(chain),
                Err(e) => problems.push(e),
            }
        }
    }
    (chains, problems)
}

fn explain(
    scheduler: &Scheduler,
    chain: &Chain,
    inputs: &serde_json::Value,
    conversation: &str,
) -> Result<ChainPlan, String> {
    let inputs = chain.bind_inputs(inputs)?;
    let context = template::Context::new(&inputs);
    let mut steps = Vec::new();
    let mut all: Vec<Effect> = Vec::new();
    for step in &chain.steps {
        let mut plan = StepPlan {
            id: step.id.clone(),
            tool: step.tool.clone(),
            when: step.when.clone(),
            effects: None,
            decision: None,
            why: String::new(),
        };
        if !template::needs_only_inputs(&step.args) {
            plan.why = "its arguments come from an earlier step: reviewed when it runs".into();
            steps.push(plan);
            continue;
        }
        let args = template::render(&step.args, &context)
            .map_err(|e| format!("step {:?} (line {}): {e}", step.id, step.line))?;
        match scheduler.explain(&step.tool, &args, conversation, None) {
            Ok(explained) => {
                for effect in &explained.effects {
                    if !all.contains(effect) {
                        all.push(effect.clone());
                    }
                }
                plan.decision = Some(explained.review.decision.as_str().to_string());
                plan.why = explained.review.why.clone();
                plan.effects = Some(explained.effects);
            }
            Err(e) => {
                return Err(format!("step {:?} (line {}): {e}", step.id, step.line));
            }
        }
        steps.push(plan);
    }
    Ok(ChainPlan {
        chain: chain.name.clone(),
        steps,
        effects: all,
    })
}

/// Each chain as a tool the model can call.
struct ChainTools {
    dirs: Vec<PathBuf>,
    runner: Weak<Runner>,
    events: tokio::sync::broadcast::Sender<ChainEvent>,
}

impl ToolProvider for ChainTools {
    fn name(&self) -> &str {
        "chains"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        let (chains, problems) = load_all(&self.dirs);
        for problem in problems {
            tracing::warn!("chain not loaded: {problem}");
        }
        // The kinds of effect a chain can have are its steps' tools' (as registered so far: a
        // step's tool that arrives later is counted at the next reload).
        let registry = self
            .runner
            .upgrade()
            .map(|r| r.scheduler().registry().clone());
        chains
            .into_iter()
            .map(|chain| {
                let steps: Vec<&str> = chain.steps.iter().map(|s| s.tool.as_str()).collect();
                let mut kinds = Vec::new();
                for step in &steps {
                    let known = registry.as_ref().and_then(|r| r.get(step));
                    for kind in known
                        .map(|info| info.spec.effects.clone())
                        .unwrap_or_default()
                    {
                        if !kinds.contains(&kind) {
                            kinds.push(kind);
                        }
                    }
                }
                let spec = ToolSpec {
                    name: format!("chain_{}", chain.name),
                    title: format!("Chain: {}", chain.name),
                    description: format!(
                        "{} (a chain of {} steps: {}; each step is reviewed on its own)",
                        chain.description.trim(),
                        steps.len(),
                        steps.join(" → ")
                    ),
                    category: "chains".into(),
                    input_schema: chain.input_schema(),
                    output_schema: None,
                    annotations: Annotations {
                        open_world: true,
                        ..Default::default()
                    },
                    timeout_ms: 24 * 3600 * 1000,
                    effects: kinds,
                    aliases: vec![],
                    deferred: false,
                    rate_limit: None,
                    secret_args: vec![],
                    arg_aliases: vec![],
                };
                Arc::new(ChainTool {
                    spec,
                    chain: Arc::new(chain),
                    runner: self.runner.clone(),
                    events: self.events.clone(),
                }) as Arc<dyn DynTool>
            })
            .collect()
    }
}

struct ChainTool {
    spec: ToolSpec,
    chain: Arc<Chain>,
    runner: Weak<Runner>,
    events: tokio::sync::broadcast::Sender<ChainEvent>,
}

impl DynTool for ChainTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The chain's effects are its steps' known ones: what the person sees and approves.
    fn prepare(
        &self,
        args: serde_json::Value,
        _env: &EffectEnv,
    ) -> Result<PreparedCall, ToolError> {
        let runner = self
            .runner
            .upgrade()
            .ok_or_else(|| ToolError::failed("Cowork is shutting down"))?;
        let inputs = self.chain.bind_inputs(&args).map_err(ToolError::invalid)?;
        let plan =
            explain(&runner.scheduler(), &self.chain, &inputs, "").map_err(ToolError::invalid)?;
        let effects = plan.effects;
        let (chain, events, granted) = (self.chain.clone(), self.events.clone(), effects.clone());
        Ok(PreparedCall::new(
            effects,
            Arc::new(move |ctx| {
                let (runner, chain, inputs, events) = (
                    runner.clone(),
                    chain.clone(),
                    inputs.clone(),
                    events.clone(),
                );
                // Only the person's approval of this call is passed on, for exactly its effects.
                let granted: Option<Arc<[Effect]>> =
                    ctx.person_approved.then(|| Arc::from(granted.clone()));
                Box::pin(async move {
                    let options = RunOptions {
                        conversation: ctx.conversation_id.clone(),
                        granted,
                        unattended: false,
                    };
                    let send = move |e: &ChainEvent| {
                        let _ = events.send(e.clone());
                    };
                    let report = runner
                        .run(&chain, &inputs, &options, &send)
                        .await
                        .map_err(|e| ToolError::failed(e.to_string()))?;
                    match report.state {
                        RunState::Completed => {
                            let structured = serde_json::to_value(&report).unwrap_or_default();
                            Ok(ToolOutput {
                                content: vec![cowork_contract::Content::Text {
                                    text: serde_json::to_string_pretty(&report.outputs)
                                        .unwrap_or_default(),
                                }],
                                structured: Some(structured),
                                ..Default::default()
                            })
                        }
                        _ => Err(ToolError::failed(format!(
                            "chain {} stopped{}: {} (run {}; `cowork chains resume {}` goes on)",
                            chain.name,
                            report
                                .failed_step
                                .as_deref()
                                .map(|s| format!(" at step {s:?}"))
                                .unwrap_or_default(),
                            report.error.as_deref().unwrap_or("failed"),
                            report.run,
                            report.run
                        ))),
                    }
                })
            }),
        ))
    }
}
