//! Running a chain: every step is a `Scheduler::call` (caller `chain`, reviewed and audited on
//! its own), its progress told as six events, and every run and step on record in the store,
//! so a run cut short (a crash, kill -9) is found `interrupted` and goes on from where it
//! stopped — and a step that may already have acted is never run twice.

use crate::def::{Chain, OnError, Step};
use crate::template;
use cowork_contract::Effect;
use cowork_core::{AuditFilter, CallRequest, Caller, Scheduler};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The six events of a run, in order.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChainEvent {
    ChainStarted {
        run: String,
        chain: String,
        steps: Vec<String>,
    },
    StepStarted {
        run: String,
        step: String,
        tool: String,
        attempt: u32,
    },
    StepCompleted {
        run: String,
        step: String,
        /// Its condition was false (or it failed under `on_error = "skip"`).
        skipped: bool,
    },
    StepFailed {
        run: String,
        step: String,
        error: String,
        /// It is tried again (`retry`).
        retrying: bool,
    },
    ChainCompleted {
        run: String,
        outputs: Value,
    },
    ChainFailed {
        run: String,
        step: Option<String>,
        error: String,
    },
}

/// How a run ended.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunReport {
    pub run: String,
    pub chain: String,
    pub state: RunState,
    pub outputs: Value,
    /// The step that failed, and why.
    pub failed_step: Option<String>,
    pub error: Option<String>,
    /// The suspended task a waiting run goes on after.
    pub waiting_on: Option<String>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Running,
    Completed,
    Failed,
    /// A step waits for the person (an approval nobody was there to give, a login): the run
    /// goes on by itself once that task is resumed.
    Waiting,
    /// Cut short (the process ended mid-run): can be resumed. A state this version does not
    /// know reads as this one.
    #[serde(other)]
    Interrupted,
}

impl RunState {
    fn as_str(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Completed => "completed",
            RunState::Failed => "failed",
            RunState::Interrupted => "interrupted",
            RunState::Waiting => "waiting",
        }
    }
}

/// One run as listed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRow {
    pub id: String,
    pub chain: String,
    pub state: RunState,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub error: Option<String>,
}

pub struct RunOptions {
    /// Grants and taint belong to it; the steps' audit rows name it.
    pub conversation: String,
    /// Effects the person approved for this run up front (the chain's explain): a step whose
    /// effects are all among them is not asked again; anything else is.
    pub granted: Option<Arc<[Effect]>>,
    /// Nobody is there (a schedule): a step that needs an approval the grant does not cover
    /// waits for the person instead.
    pub unattended: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Inputs(String),
    #[error("no run {0:?}")]
    UnknownRun(String),
    #[error(
        "run {run} is {state}: only an interrupted or failed run goes on (a waiting one goes on when its task is resumed: `cowork tasks suspended`)"
    )]
    NotResumable { run: String, state: &'static str },
    #[error(
        "step {step:?} of run {run} may already have acted (its audit has the intent, no outcome): check what it did, then `cowork chains resume {run} --skip {step}` or `--rerun {step}`"
    )]
    Uncertain { run: String, step: String },
    #[error("chain store: {0}")]
    Store(String),
}

fn db(e: impl std::fmt::Display) -> RunError {
    RunError::Store(e.to_string())
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// Whether a process runs (a run left `running` by a live process is not interrupted).
pub(crate) fn alive(pid: i64) -> bool {
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    pid > 0 && unsafe { libc::kill(pid as libc::pid_t, 0) } == 0
}

/// What resuming does with a step that may already have acted.
#[derive(Clone, Debug, Default)]
pub struct ResumeChoice {
    pub skip: Vec<String>,
    pub rerun: Vec<String>,
}

pub struct Runner {
    scheduler: Arc<Scheduler>,
    conn: Mutex<Connection>,
    pending: Mutex<Vec<StepEnd>>,
}

impl Runner {
    pub fn new(scheduler: Arc<Scheduler>, store: &cowork_store::Store) -> Result<Runner, RunError> {
        let conn = store.connect().map_err(db)?;
        let runner = Runner {
            scheduler,
            conn: Mutex::new(conn),
            pending: Mutex::default(),
        };
        runner.mark_interrupted()?;
        Ok(runner)
    }

    /// Runs left `running` by a process that is gone were cut short.
    fn mark_interrupted(&self) -> Result<(), RunError> {
        let conn = self.conn.lock().unwrap();
        let running: Vec<(String, i64)> = conn
            .prepare("SELECT id, pid FROM chain_runs WHERE state = 'running'")
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .map_err(db)?;
        for (id, pid) in running {
            if !alive(pid) || pid == i64::from(std::process::id()) {
                conn.execute(
                    "UPDATE chain_runs SET state = 'interrupted', ended_at = ?2 WHERE id = ?1",
                    params![id, now()],
                )
                .map_err(db)?;
            }
        }
        Ok(())
    }

    pub fn scheduler(&self) -> Arc<Scheduler> {
        self.scheduler.clone()
    }

    /// The chain a run ran.
    pub fn chain_of(&self, run: &str) -> Result<String, RunError> {
        self.conn
            .lock()
            .unwrap()
            .query_row("SELECT chain FROM chain_runs WHERE id = ?1", [run], |r| {
                r.get(0)
            })
            .optional()
            .map_err(db)?
            .ok_or_else(|| RunError::UnknownRun(run.to_string()))
    }

    pub fn runs(&self, limit: usize) -> Result<Vec<RunRow>, RunError> {
        self.mark_interrupted()?;
        let conn = self.conn.lock().unwrap();
        cowork_store::all_rows(
            &conn,
            "SELECT id, chain, state, started_at, ended_at, error FROM chain_runs ORDER BY started_at DESC LIMIT ?1",
            [limit as i64],
        )
        .map_err(db)
    }

    /// A new run of `chain` with `inputs`.
    pub async fn run(
        &self,
        chain: &Chain,
        inputs: &Value,
        options: &RunOptions,
        on_event: &(dyn Fn(&ChainEvent) + Send + Sync),
    ) -> Result<RunReport, RunError> {
        let inputs = chain.bind_inputs(inputs).map_err(RunError::Inputs)?;
        let run = uuid::Uuid::now_v7().to_string();
        self.conn
            .lock()
            .unwrap()
            .execute(
                "INSERT INTO chain_runs (id, chain, source, inputs, conversation, state, pid, started_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7)",
                params![
                    run,
                    chain.name,
                    chain.source.display().to_string(),
                    inputs.to_string(),
                    options.conversation,
                    std::process::id(),
                    now()
                ],
            )
            .map_err(db)?;
        Ok(self
            .execute(&run, chain, inputs, HashMap::new(), options, on_event)
            .await)
    }

    /// Goes on with an interrupted or failed run of `chain`: steps that completed keep their
    /// results and are not run again; a step that may have acted needs the person's word.
    pub async fn resume(
        &self,
        run: &str,
        chain: &Chain,
        choice: &ResumeChoice,
        on_event: &(dyn Fn(&ChainEvent) + Send + Sync),
    ) -> Result<RunReport, RunError> {
        self.mark_interrupted()?;
        let stored = self.stored_run(run)?;
        if !matches!(stored.state, RunState::Interrupted | RunState::Failed) {
            return Err(RunError::NotResumable {
                run: run.to_string(),
                state: stored.state.as_str(),
            });
        }
        let inputs: Value = serde_json::from_str(&stored.inputs).map_err(db)?;
        let done = self.ended_steps(run, chain, &stored, choice)?;
        self.conn
            .lock()
            .unwrap()
            .execute(
                "UPDATE chain_runs SET state = 'running', pid = ?2, ended_at = NULL, error = NULL WHERE id = ?1",
                params![run, std::process::id()],
            )
            .map_err(db)?;
        let options = RunOptions {
            conversation: stored.conversation,
            granted: None,
            unattended: false,
        };
        Ok(self
            .execute(run, chain, inputs, done, &options, on_event)
            .await)
    }

    /// What the store holds of run `run`.
    fn stored_run(&self, run: &str) -> Result<StoredRun, RunError> {
        self.conn
            .lock()
            .unwrap()
            .query_row(
                "SELECT state, inputs, conversation, started_at FROM chain_runs WHERE id = ?1",
                [run],
                cowork_store::from_row,
            )
            .optional()
            .map_err(db)?
            .ok_or_else(|| RunError::UnknownRun(run.to_string()))
    }

    /// The steps of a run that resuming does not run again, with their records.
    fn ended_steps(
        &self,
        run: &str,
        chain: &Chain,
        stored: &StoredRun,
        choice: &ResumeChoice,
    ) -> Result<HashMap<String, Value>, RunError> {
        let recorded: HashMap<String, StepRow> = self
            .steps_of(run)?
            .into_iter()
            .map(|row| (row.step.clone(), row))
            .collect();
        // Steps run in order: those recorded done keep their results; the first one that is not
        // may have been cut short mid-call (no record is written as a call starts: the audit's
        // rows since the last record tell what it did).
        let mut done = HashMap::new();
        let mut since = stored.started_at.clone();
        for step in &chain.steps {
            let row = recorded.get(&step.id);
            if let Some(row) = row
                && matches!(row.state.as_str(), "completed" | "skipped")
            {
                done.insert(
                    step.id.clone(),
                    serde_json::from_str(&row.result).unwrap_or(Value::Null),
                );
                since = row.recorded_at.clone();
                continue;
            }
            if let Some(row) = row {
                since = row.recorded_at.clone();
            }
            let cut_short = self.cut_short_step(run, step, &stored.conversation, &since, choice)?;
            if let Some(record) = cut_short {
                done.insert(step.id.clone(), record);
            }
            break;
        }
        Ok(done)
    }

    /// The step a run was cut short at, whose end was not recorded: its record when it is
    /// not run again (the person skips it, or the audit says it finished), None when it is.
    fn cut_short_step(
        &self,
        run: &str,
        step: &Step,
        conversation: &str,
        since: &str,
        choice: &ResumeChoice,
    ) -> Result<Option<Value>, RunError> {
        let (skip, rerun) = (
            choice.skip.contains(&step.id),
            choice.rerun.contains(&step.id),
        );
        match self.settled_in_audit(conversation, &step.tool, since) {
            _ if skip => Ok(Some(json!({"ok": false, "skipped": true, "result": null}))),
            Settled::Done if !rerun => {
                Ok(Some(json!({"ok": true, "skipped": false, "result": null,
                    "note": "finished before the interruption; its result was not kept"})))
            }
            Settled::MaybeActed if !rerun => Err(RunError::Uncertain {
                run: run.to_string(),
                step: step.id.clone(),
            }),
            _ => Ok(None),
        }
    }

    fn steps_of(&self, run: &str) -> Result<Vec<StepRow>, RunError> {
        let conn = self.conn.lock().unwrap();
        cowork_store::all_rows(
            &conn,
            "SELECT step, state, COALESCE(result, 'null') AS result, recorded_at FROM chain_steps WHERE run = ?1",
            [run],
        )
        .map_err(db)
    }

    /// What the audit log says of a chain step's call that started at `since` and whose end
    /// was not recorded by the chain.
    fn settled_in_audit(&self, conversation: &str, tool: &str, since: &str) -> Settled {
        let rows = self
            .scheduler
            .audit()
            .list(&AuditFilter {
                conversation: Some(conversation.to_string()),
                limit: Some(200),
                ..Default::default()
            })
            .unwrap_or_default();
        let mine: Vec<_> = rows
            .iter()
            .filter(|r| {
                r.record.caller == Caller::Chain.as_str()
                    && r.record.tool == tool
                    && r.record.ts.as_str() >= since
            })
            .collect();
        // Only an effectful call has an intent row: a read-only one (or one that failed) is
        // simply run again; an effectful one that finished is not; one with an intent and no
        // outcome may have acted.
        let Some(intent) = mine.iter().rev().find(|r| r.record.phase == "intent") else {
            return Settled::NotRun;
        };
        match mine
            .iter()
            .find(|r| r.record.phase == "final" && r.record.call_id == intent.record.call_id)
        {
            Some(done) if done.record.outcome.as_deref() == Some("ok") => Settled::Done,
            Some(_) => Settled::NotRun,
            None => Settled::MaybeActed,
        }
    }

    /// A step's end (completed, skipped, failed, waiting), its result kept for later steps and
    /// a resume. Nothing is written as a call starts — the audit's intent row is that record,
    /// for the calls whose repeat would matter. The end of a step that changed nothing (read
    /// only, skipped, failed) waits to be written with the next one that did, or with the run's
    /// end: lost in a crash, it is simply done again.
    #[allow(clippy::too_many_arguments)]
    fn record_step(
        &self,
        run: &str,
        step: &Step,
        state: &str,
        attempt: u32,
        result: Option<&Value>,
        error: Option<&str>,
        durable: bool,
    ) {
        self.pending.lock().unwrap().push(StepEnd {
            run: run.to_string(),
            step: step.id.clone(),
            tool: step.tool.clone(),
            state: state.to_string(),
            attempt,
            at: now(),
            result: result.map(Value::to_string),
            error: error.map(String::from),
        });
        if durable {
            self.flush();
        }
    }

    /// Writes the step ends waiting to be written, in one transaction.
    fn flush(&self) {
        let ends = std::mem::take(&mut *self.pending.lock().unwrap());
        if ends.is_empty() {
            return;
        }
        let mut conn = self.conn.lock().unwrap();
        let written = conn.transaction().and_then(|tx| {
            {
                let mut insert = tx.prepare_cached(
                    "INSERT INTO chain_steps (run, step, tool, state, attempt, recorded_at, result, error)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                     ON CONFLICT(run, step) DO UPDATE SET state = excluded.state, attempt = excluded.attempt,
                       recorded_at = excluded.recorded_at, result = excluded.result, error = excluded.error",
                )?;
                for end in &ends {
                    insert.execute(params![
                        end.run, end.step, end.tool, end.state, end.attempt, end.at, end.result,
                        end.error
                    ])?;
                }
            }
            tx.commit()
        });
        if let Err(e) = written {
            tracing::error!("chain runs: could not record {} step ends: {e}", ends.len());
        }
    }

    fn finish(&self, report: &RunReport) {
        self.flush();
        let written = self.conn.lock().unwrap().execute(
            "UPDATE chain_runs SET state = ?2, ended_at = ?3, error = ?4, outputs = ?5 WHERE id = ?1",
            params![
                report.run,
                report.state.as_str(),
                now(),
                report.error,
                report.outputs.to_string()
            ],
        );
        if let Err(e) = written {
            tracing::error!("chain run {}: could not record its end: {e}", report.run);
        }
    }

    async fn execute(
        &self,
        run: &str,
        chain: &Chain,
        inputs: Value,
        mut done: HashMap<String, Value>,
        options: &RunOptions,
        on_event: &(dyn Fn(&ChainEvent) + Send + Sync),
    ) -> RunReport {
        on_event(&ChainEvent::ChainStarted {
            run: run.to_string(),
            chain: chain.name.clone(),
            steps: chain.steps.iter().map(|s| s.id.clone()).collect(),
        });
        let mut pass = Pass {
            run,
            chain,
            results: serde_json::Map::new(),
            context: template::Context::new(&inputs),
            on_event,
        };
        for step in &chain.steps {
            let went_on = match done.remove(&step.id) {
                Some(kept) => {
                    // Ended before this run went on (a resume): its card shows it as it ended.
                    pass.completed(step, kept["skipped"] == json!(true));
                    pass.keep(step, kept);
                    Ok(())
                }
                None => self.take_step(&mut pass, step, options).await,
            };
            if let Err(stopped) = went_on {
                return stopped;
            }
        }
        self.complete(&pass)
    }

    /// One step of a pass: skipped when its condition is false, else run; the run's report
    /// when the run stops there (failed, or waiting for the person).
    async fn take_step(
        &self,
        pass: &mut Pass<'_>,
        step: &Step,
        options: &RunOptions,
    ) -> Result<(), RunReport> {
        if let Some(when) = &step.when {
            match template::holds(when, &pass.context) {
                Ok(true) => {}
                Ok(false) => {
                    let record = json!({"ok": false, "skipped": true, "result": null});
                    self.skip(pass, step, record, None);
                    return Ok(());
                }
                Err(e) => return Err(self.stop(pass, Some(step), e, None)),
            }
        }
        let args = match template::render(&step.args, &pass.context) {
            Ok(args) => args,
            Err(e) => {
                let error = format!("step {:?} (line {}): {e}", step.id, step.line);
                pass.failed(step, error.clone(), false);
                return Err(self.stop(pass, Some(step), error, None));
            }
        };
        match self.run_step(pass, step, &args, options).await {
            Ok(record) => pass.keep(step, record),
            Err(StepError::Waiting { task, reason }) => {
                return Err(self.wait(pass, step, &task, reason));
            }
            Err(StepError::Failed(error)) if step.on_error == OnError::Skip => {
                let record = json!({"ok": false, "skipped": true, "result": null, "error": error});
                self.skip(pass, step, record, Some(&error));
            }
            Err(StepError::Failed(error)) => return Err(self.stop(pass, Some(step), error, None)),
        }
        Ok(())
    }

    /// A step that did not run (its condition was false, or it failed under `skip`).
    fn skip(&self, pass: &mut Pass<'_>, step: &Step, record: Value, error: Option<&str>) {
        self.record_step(pass.run, step, "skipped", 0, Some(&record), error, false);
        pass.keep(step, record);
        pass.completed(step, true);
    }

    /// Every step ended: the chain's outputs, rendered, are the run's.
    fn complete(&self, pass: &Pass<'_>) -> RunReport {
        let mut outputs = serde_json::Map::new();
        for (name, expression) in &pass.chain.outputs {
            match template::render(&json!(expression), &pass.context) {
                Ok(value) => {
                    outputs.insert(name.clone(), value);
                }
                Err(e) => return self.stop(pass, None, format!("output {name:?}: {e}"), None),
            }
        }
        let report = RunReport {
            run: pass.run.to_string(),
            chain: pass.chain.name.clone(),
            state: RunState::Completed,
            outputs: Value::Object(outputs),
            failed_step: None,
            error: None,
            waiting_on: None,
        };
        (pass.on_event)(&ChainEvent::ChainCompleted {
            run: pass.run.to_string(),
            outputs: report.outputs.clone(),
        });
        self.finish(&report);
        report
    }

    /// The run stops at `step` (None: at its outputs): it failed, or, `waiting_on` a task of
    /// the person's, it waits.
    fn stop(
        &self,
        pass: &Pass<'_>,
        step: Option<&Step>,
        error: String,
        waiting_on: Option<&str>,
    ) -> RunReport {
        let report = RunReport {
            run: pass.run.to_string(),
            chain: pass.chain.name.clone(),
            state: match waiting_on {
                Some(_) => RunState::Waiting,
                None => RunState::Failed,
            },
            outputs: json!({"steps": pass.results}),
            failed_step: step.map(|s| s.id.clone()),
            error: Some(error.clone()),
            waiting_on: waiting_on.map(String::from),
        };
        (pass.on_event)(&ChainEvent::ChainFailed {
            run: pass.run.to_string(),
            step: step.map(|s| s.id.clone()),
            error,
        });
        self.finish(&report);
        report
    }

    /// The run stops at `step`, which waits for the person's task `task`; it goes on when that
    /// task is resumed ([`Runner::continue_after`]).
    fn wait(&self, pass: &Pass<'_>, step: &Step, task: &str, reason: String) -> RunReport {
        let report = self.stop(pass, Some(step), reason, Some(task));
        let run = pass.run;
        let written = self.conn.lock().unwrap().execute(
            "UPDATE chain_runs SET waiting_on = ?2 WHERE id = ?1",
            params![run, task],
        );
        if let Err(e) = written {
            tracing::error!("chain run {run}: could not record the task it waits on: {e}");
        }
        report
    }

    /// The person resumed task `task` (the call a waiting run stopped at) and it ended with
    /// `outcome`: that is the step's result — it ran once, there — and the run goes on from
    /// the next step. None when no run waits on that task.
    pub async fn continue_after(
        &self,
        task: &str,
        outcome: &Result<cowork_contract::ToolOutput, cowork_contract::ToolError>,
        chain_named: &(dyn Fn(&str) -> Result<Chain, String> + Send + Sync),
        on_event: &(dyn Fn(&ChainEvent) + Send + Sync),
    ) -> Option<Result<RunReport, RunError>> {
        if matches!(outcome, Err(cowork_contract::ToolError::Suspended { .. })) {
            return None;
        }
        let (run, name, step) = self
            .conn
            .lock()
            .unwrap()
            .query_row(
                "SELECT r.id, r.chain, s.step FROM chain_runs r JOIN chain_steps s ON s.run = r.id AND s.state = 'waiting'
                 WHERE r.waiting_on = ?1 AND r.state = 'waiting'",
                [task],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)),
            )
            .optional()
            .ok()??;
        let chain = match chain_named(&name) {
            Ok(chain) => chain,
            Err(e) => return Some(Err(RunError::Inputs(e))),
        };
        let step = chain.steps.iter().find(|s| s.id == step)?;
        match outcome {
            Ok(output) => {
                let record = json!({"ok": true, "skipped": false, "result": step_result(output)});
                self.record_step(&run, step, "completed", 1, Some(&record), None, true);
            }
            Err(e) => {
                let error = format!("step {:?} ({}): {e}", step.id, step.tool);
                self.record_step(&run, step, "failed", 1, None, Some(&error), true);
            }
        }
        let _ = self.conn.lock().unwrap().execute(
            "UPDATE chain_runs SET state = 'failed', waiting_on = NULL WHERE id = ?1",
            [&run],
        );
        if outcome.is_err() && step.on_error != OnError::Skip {
            return Some(Err(RunError::Inputs(format!(
                "the resumed step {:?} failed: run {run} stops there (`cowork chains resume {run}` tries it again)",
                step.id
            ))));
        }
        Some(
            self.resume(&run, &chain, &ResumeChoice::default(), on_event)
                .await,
        )
    }

    /// One step through the scheduler, tried again as its `on_error` says; its record for the
    /// templates of later steps (`ok`, `result`), or the last error.
    async fn run_step(
        &self,
        pass: &Pass<'_>,
        step: &Step,
        args: &Value,
        options: &RunOptions,
    ) -> Result<Value, StepError> {
        let (tries, mut wait) = match step.on_error {
            OnError::Retry { times, backoff } => (times + 1, backoff),
            _ => (1, std::time::Duration::ZERO),
        };
        let mut attempt = 1;
        loop {
            (pass.on_event)(&ChainEvent::StepStarted {
                run: pass.run.to_string(),
                step: step.id.clone(),
                tool: step.tool.clone(),
                attempt,
            });
            let outcome = self
                .scheduler
                .call(step_request(pass.run, step, args, options))
                .await;
            match outcome.result {
                Ok(output) => {
                    let record =
                        json!({"ok": true, "skipped": false, "result": step_result(&output)});
                    let durable = !outcome.read_only;
                    self.record_step(
                        pass.run,
                        step,
                        "completed",
                        attempt,
                        Some(&record),
                        None,
                        durable,
                    );
                    pass.completed(step, false);
                    return Ok(record);
                }
                Err(cowork_contract::ToolError::Suspended { id, reason }) => {
                    let error =
                        format!("step {:?} ({}) waits for you: {reason}", step.id, step.tool);
                    self.record_step(pass.run, step, "waiting", attempt, None, Some(&error), true);
                    pass.failed(step, error.clone(), false);
                    return Err(StepError::Waiting {
                        task: id,
                        reason: error,
                    });
                }
                Err(e) => {
                    let error = format!("step {:?} ({}): {e}", step.id, step.tool);
                    let retrying = attempt < tries && e.is_retryable_by_chain();
                    self.record_step(pass.run, step, "failed", attempt, None, Some(&error), false);
                    pass.failed(step, error.clone(), retrying);
                    if !retrying {
                        return Err(StepError::Failed(error));
                    }
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                    attempt += 1;
                }
            }
        }
    }
}

/// A step's call, as the chain makes it: caller `chain`, named by run and step.
fn step_request(run: &str, step: &Step, args: &Value, options: &RunOptions) -> CallRequest {
    let mut request = CallRequest::new(
        &step.tool,
        args.clone(),
        Caller::Chain,
        &options.conversation,
    );
    request.caller_ref = Some(format!("chain:{run}:{}", step.id));
    request.granted = options.granted.clone();
    request.unattended = options.unattended;
    request
}

/// One pass of a run through its chain's steps: what later steps see of the earlier ones, and
/// where its events go.
struct Pass<'a> {
    run: &'a str,
    chain: &'a Chain,
    /// Each ended step's record, by id (the run's outputs when it stops short).
    results: serde_json::Map<String, Value>,
    context: template::Context,
    on_event: &'a (dyn Fn(&ChainEvent) + Send + Sync),
}

impl Pass<'_> {
    /// A step's record, for the later steps' templates and the report.
    fn keep(&mut self, step: &Step, record: Value) {
        self.context.add_step(&step.id, &record);
        self.results.insert(step.id.clone(), record);
    }

    fn completed(&self, step: &Step, skipped: bool) {
        (self.on_event)(&ChainEvent::StepCompleted {
            run: self.run.to_string(),
            step: step.id.clone(),
            skipped,
        });
    }

    fn failed(&self, step: &Step, error: String, retrying: bool) {
        (self.on_event)(&ChainEvent::StepFailed {
            run: self.run.to_string(),
            step: step.id.clone(),
            error,
            retrying,
        });
    }
}

/// A run as stored, for a resume.
#[derive(Deserialize)]
struct StoredRun {
    state: RunState,
    inputs: String,
    conversation: String,
    started_at: String,
}

/// A step's end, to be written.
struct StepEnd {
    run: String,
    step: String,
    tool: String,
    state: String,
    attempt: u32,
    at: String,
    result: Option<String>,
    error: Option<String>,
}

/// A step's last state in a run, as stored.
#[derive(Deserialize)]
struct StepRow {
    step: String,
    state: String,
    result: String,
    recorded_at: String,
}

/// What later steps see of a step's output: its structured result, else its text.
fn step_result(output: &cowork_contract::ToolOutput) -> Value {
    output.structured.clone().unwrap_or_else(|| {
        json!(
            output
                .content
                .iter()
                .filter_map(|c| match c {
                    cowork_contract::Content::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

/// Why a step did not complete.
enum StepError {
    Failed(String),
    /// It waits for the person: the suspended task's id.
    Waiting {
        task: String,
        reason: String,
    },
}

enum Settled {
    /// An effectful call that finished (its result was not kept).
    Done,
    MaybeActed,
    NotRun,
}

/// Which failures a `retry` tries again: not a denial, a suspension or bad arguments (the same
/// call would meet the same answer).
trait ChainRetry {
    fn is_retryable_by_chain(&self) -> bool;
}

impl ChainRetry for cowork_contract::ToolError {
    fn is_retryable_by_chain(&self) -> bool {
        use cowork_contract::ToolError as E;
        !matches!(
            self,
            E::Denied { .. }
                | E::SecurityViolation { .. }
                | E::Suspended { .. }
                | E::InvalidArguments { .. }
                | E::NotFound { .. }
                | E::NotConfigured { .. }
                | E::Paused
                | E::Cancelled
        )
    }
}
