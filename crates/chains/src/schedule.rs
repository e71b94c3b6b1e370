//! Scheduled runs of a chain or a prompt, cron-style (croner; in the person's time zone),
//! persisted — they survive restarts and a machine that slept. A run that fell due while the
//! machine slept or Cowork was closed is "missed": run once on waking (never once per missed
//! time) or skipped, as the schedule says. The worker ([`serve`]) sleeps until the next one is
//! due: with a thousand schedules it wakes only when one is (no polling).
//!
//! Unattended: a run carries the effects the person granted when making the schedule (shown
//! to them then); anything else suspends the run as a task waiting for the person, who is
//! notified — a run never hangs on an approval and never denies it silently.

use crate::run::{RunOptions, RunState};
use crate::{ChainEvent, Chains};
use chrono::{DateTime, Local, Utc};
use cowork_contract::Effect;
use cowork_store::Store;
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a schedule runs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    Chain {
        chain: String,
        #[serde(default)]
        inputs: Value,
    },
    Prompt {
        prompt: String,
        /// The named tool profile its runs are held to (the default's when None).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<String>,
    },
}

/// What happens to a run that fell due while the machine slept or Cowork was closed.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Missed {
    /// Once on waking (not once per missed time).
    RunOnce,
    Skip,
}

impl FromStr for Missed {
    type Err = String;
    fn from_str(text: &str) -> Result<Missed, String> {
        match text {
            "run-once" | "run_once" => Ok(Missed::RunOnce),
            "skip" => Ok(Missed::Skip),
            other => Err(format!("missed runs: {other:?} — use run-once or skip")),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Schedule {
    pub id: String,
    pub name: String,
    pub cron: String,
    /// The cron pattern in words.
    pub when: String,
    pub target: Target,
    pub missed: Missed,
    /// The effects the person granted for its unattended runs.
    pub granted: Vec<Effect>,
    pub enabled: bool,
    pub next_due: DateTime<Utc>,
}

/// Where a schedule's run stands.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ScheduleRunState {
    Running,
    Completed,
    Failed,
    /// A call needed an approval outside the grant (or a login): it waits, as a suspended
    /// task, for the person; the run ends when they resume it.
    Waiting,
    /// Missed, and its schedule skips missed runs.
    Skipped,
    /// The process running it ended mid-run.
    Interrupted,
}

impl ScheduleRunState {
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleRunState::Running => "running",
            ScheduleRunState::Completed => "completed",
            ScheduleRunState::Failed => "failed",
            ScheduleRunState::Waiting => "waiting",
            ScheduleRunState::Skipped => "skipped",
            ScheduleRunState::Interrupted => "interrupted",
        }
    }
}

impl std::fmt::Display for ScheduleRunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl rusqlite::types::ToSql for ScheduleRunState {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl rusqlite::types::FromSql for ScheduleRunState {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        serde_json::from_value(Value::String(value.as_str()?.to_string()))
            .map_err(|e| rusqlite::types::FromSqlError::Other(Box::new(e)))
    }
}

/// One run a schedule made (or skipped).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ScheduleRun {
    pub id: String,
    pub schedule: String,
    pub due_at: String,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub state: ScheduleRunState,
    /// It fell due while the machine slept or Cowork was closed.
    pub missed: bool,
    pub detail: Option<String>,
    /// The suspended tasks a waiting run goes on after (`cowork tasks resume <id>`).
    // JSON text in its row; a list on the wire.
    #[serde(deserialize_with = "cowork_store::json_text")]
    #[cfg_attr(feature = "specta", specta(type = Vec<String>))]
    pub waiting_on: Vec<String>,
}

/// A run to make now.
#[derive(Clone, Debug)]
pub struct Firing {
    pub run: String,
    pub schedule: Schedule,
    pub due: DateTime<Utc>,
    pub missed: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error(
        "{0:?} is not a cron pattern ({1}): five fields, minute hour day month weekday — e.g. \"0 8 * * 1-5\" for weekdays at 8:00"
    )]
    Cron(String, String),
    #[error("schedule names use letters, digits, `-` and `_` (got {0:?})")]
    Name(String),
    #[error("a schedule {0:?} exists: remove it first (`cowork schedule remove {0}`)")]
    Exists(String),
    #[error("no schedule {0:?} — `cowork schedule list` shows them")]
    Unknown(String),
    #[error("a scheduled prompt needs words: what should the assistant do at that time?")]
    EmptyPrompt,
    #[error("schedules: {0}")]
    Store(String),
}

fn db(e: impl std::fmt::Display) -> ScheduleError {
    ScheduleError::Store(e.to_string())
}

/// A run this much later than its time was missed (the machine slept, Cowork was closed).
const LATE: chrono::TimeDelta = chrono::TimeDelta::minutes(2);

fn parse_cron(text: &str) -> Result<croner::Cron, ScheduleError> {
    croner::Cron::from_str(text.trim())
        .map_err(|e| ScheduleError::Cron(text.to_string(), e.to_string()))
}

/// The next time `cron` matches after `after`, read in the person's zone.
fn next_after(cron: &croner::Cron, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
    cron.find_next_occurrence(&after.with_timezone(&Local), false)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// A cron pattern as a new schedule would read it: in words, and its next few times (the
/// window shows them before the person adds it).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CronPreview {
    pub when: String,
    pub next: Vec<DateTime<Utc>>,
}

/// `cron`'s words and its next `count` times after `now`, in the person's zone.
pub fn preview(cron: &str, now: DateTime<Utc>, count: usize) -> Result<CronPreview, ScheduleError> {
    let pattern = parse_cron(cron)?;
    let mut next: Vec<DateTime<Utc>> = Vec::with_capacity(count);
    while next.len() < count {
        match next_after(&pattern, next.last().copied().unwrap_or(now)) {
            Some(at) => next.push(at),
            None => break,
        }
    }
    if next.is_empty() {
        return Err(ScheduleError::Cron(
            cron.to_string(),
            "it never matches".into(),
        ));
    }
    Ok(CronPreview {
        when: pattern.describe(),
        next,
    })
}

/// A schedule name from a prompt's first words ("Summarize my inbox" → `summarize-my-inbox`),
/// in the letters names allow; `prompt` when none are left.
pub fn name_for_prompt(prompt: &str) -> String {
    let words: Vec<String> = prompt
        .split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .take(4)
        .collect();
    let name: String = words.join("-").chars().take(40).collect();
    if name.is_empty() {
        "prompt".into()
    } else {
        name
    }
}

fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn parse_stamp(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

/// Time, for the worker: the system's, or one a test moves.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
    /// Returns at `at` (or earlier: the worker looks at the time again anyway).
    fn sleep_until(&self, at: DateTime<Utc>) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// The system clock. Its timers stop while the machine sleeps, so a sleep is cut into pieces
/// of at most 15 minutes: after waking, a due run is found within 15 minutes.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
    fn sleep_until(&self, at: DateTime<Utc>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let wait = (at - Utc::now())
            .to_std()
            .unwrap_or_default()
            .min(Duration::from_secs(15 * 60));
        Box::pin(tokio::time::sleep(wait))
    }
}

pub struct Schedules {
    conn: Mutex<Connection>,
    changed: Arc<tokio::sync::Notify>,
}

const COLUMNS: &str = "id, name, cron, target, missed, granted, enabled, next_due";

fn schedule_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Schedule> {
    let cron: String = r.get(2)?;
    let target: String = r.get(3)?;
    let missed: String = r.get(4)?;
    let granted: String = r.get(5)?;
    Ok(Schedule {
        id: r.get(0)?,
        name: r.get(1)?,
        when: parse_cron(&cron).map(|c| c.describe()).unwrap_or_default(),
        cron,
        target: serde_json::from_str(&target).unwrap_or(Target::Prompt {
            prompt: String::new(),
            profile: None,
        }),
        missed: missed.parse().unwrap_or(Missed::RunOnce),
        granted: serde_json::from_str(&granted).unwrap_or_default(),
        enabled: r.get(6)?,
        next_due: parse_stamp(&r.get::<_, String>(7)?),
    })
}

impl Schedules {
    pub fn open(store: &Store) -> Result<Schedules, ScheduleError> {
        let schedules = Schedules {
            conn: Mutex::new(store.connect().map_err(db)?),
            changed: Arc::default(),
        };
        // Runs left `running` by a process that is gone were cut short.
        {
            let conn = schedules.conn.lock().unwrap();
            let running: Vec<(String, i64)> = conn
                .prepare("SELECT id, pid FROM schedule_runs WHERE state = ?1")
                .and_then(|mut s| {
                    s.query_map([ScheduleRunState::Running], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect()
                })
                .map_err(db)?;
            for (id, pid) in running {
                if !crate::run::alive(pid) {
                    conn.execute(
                        "UPDATE schedule_runs SET state = ?3, ended_at = ?2 WHERE id = ?1",
                        params![id, stamp(Utc::now()), ScheduleRunState::Interrupted],
                    )
                    .map_err(db)?;
                }
            }
        }
        Ok(schedules)
    }

    pub fn add(
        &self,
        name: &str,
        cron: &str,
        target: Target,
        missed: Missed,
        granted: Vec<Effect>,
        now: DateTime<Utc>,
    ) -> Result<Schedule, ScheduleError> {
        if name.is_empty()
            || name.len() > 60
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            return Err(ScheduleError::Name(name.to_string()));
        }
        let pattern = parse_cron(cron)?;
        let next = next_after(&pattern, now)
            .ok_or_else(|| ScheduleError::Cron(cron.to_string(), "it never matches".into()))?;
        let id = uuid::Uuid::now_v7().to_string();
        let added = self.conn.lock().unwrap().execute(
            "INSERT INTO schedules (id, name, cron, target, missed, granted, enabled, next_due, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8)",
            params![
                id,
                name,
                cron.trim(),
                serde_json::to_string(&target).map_err(db)?,
                serde_json::to_value(missed).map_err(db)?.as_str().unwrap_or("run_once"),
                serde_json::to_string(&granted).map_err(db)?,
                stamp(next),
                stamp(now)
            ],
        );
        match added {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                return Err(ScheduleError::Exists(name.to_string()));
            }
            other => {
                other.map_err(db)?;
            }
        }
        self.changed.notify_one();
        self.get(name)
    }

    pub fn get(&self, name: &str) -> Result<Schedule, ScheduleError> {
        self.conn
            .lock()
            .unwrap()
            .query_row(
                &format!("SELECT {COLUMNS} FROM schedules WHERE name = ?1"),
                [name],
                schedule_from_row,
            )
            .optional()
            .map_err(db)?
            .ok_or_else(|| ScheduleError::Unknown(name.to_string()))
    }

    pub fn list(&self) -> Result<Vec<Schedule>, ScheduleError> {
        let conn = self.conn.lock().unwrap();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM schedules ORDER BY next_due"
            ))
            .map_err(db)?;
        let rows = stmt.query_map([], schedule_from_row).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    /// `stem` if no schedule has that name yet, else `stem-2`, `stem-3`…
    pub fn free_name(&self, stem: &str) -> Result<String, ScheduleError> {
        let taken: std::collections::HashSet<String> =
            self.list()?.into_iter().map(|s| s.name).collect();
        Ok(std::iter::once(stem.to_string())
            .chain((2..).map(|n| format!("{stem}-{n}")))
            .find(|name| !taken.contains(name))
            .expect("an unbounded sequence has a free name"))
    }

    /// A scheduled prompt: it runs unattended with nothing granted, so anything that needs an
    /// approval waits for the person as a task. Named from its words unless `name` is given.
    pub fn add_prompt(
        &self,
        name: Option<&str>,
        cron: &str,
        prompt: &str,
        profile: Option<&str>,
        missed: Missed,
        now: DateTime<Utc>,
    ) -> Result<Schedule, ScheduleError> {
        if prompt.trim().is_empty() {
            return Err(ScheduleError::EmptyPrompt);
        }
        let name = match name.map(str::trim).filter(|n| !n.is_empty()) {
            Some(name) => name.to_string(),
            None => self.free_name(&name_for_prompt(prompt))?,
        };
        let target = Target::Prompt {
            prompt: prompt.trim().to_string(),
            profile: profile.map(String::from),
        };
        self.add(&name, cron, target, missed, vec![], now)
    }

    pub fn remove(&self, name: &str) -> Result<(), ScheduleError> {
        let removed = self
            .conn
            .lock()
            .unwrap()
            .execute("DELETE FROM schedules WHERE name = ?1", [name])
            .map_err(db)?;
        if removed == 0 {
            return Err(ScheduleError::Unknown(name.to_string()));
        }
        self.changed.notify_one();
        Ok(())
    }

    /// When the next enabled schedule is due.
    pub fn next_due(&self) -> Result<Option<DateTime<Utc>>, ScheduleError> {
        let next: Option<String> = self
            .conn
            .lock()
            .unwrap()
            .query_row(
                "SELECT min(next_due) FROM schedules WHERE enabled = 1",
                [],
                |r| r.get(0),
            )
            .map_err(db)?;
        Ok(next.map(|t| parse_stamp(&t)))
    }

    /// The runs due at `now`, each on record (`running`, or `skipped` for a missed run of a
    /// schedule that skips them), and each schedule moved to its next time after `now` — a
    /// week asleep makes one run, not seven.
    pub fn take_due(&self, now: DateTime<Utc>) -> Result<Vec<Firing>, ScheduleError> {
        let mut conn = self.conn.lock().unwrap();
        let tx = conn.transaction().map_err(db)?;
        let due: Vec<Schedule> = {
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT {COLUMNS} FROM schedules WHERE enabled = 1 AND next_due <= ?1"
                ))
                .map_err(db)?;
            stmt.query_map([stamp(now)], schedule_from_row)
                .map_err(db)?
                .collect::<Result<_, _>>()
                .map_err(db)?
        };
        let mut firings = Vec::new();
        for schedule in due {
            let missed = now - schedule.next_due > LATE;
            let skip = missed && schedule.missed == Missed::Skip;
            let run = uuid::Uuid::now_v7().to_string();
            tx.execute(
                "INSERT INTO schedule_runs (id, schedule, due_at, started_at, ended_at, state, missed, pid, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    run,
                    schedule.name,
                    stamp(schedule.next_due),
                    stamp(now),
                    skip.then(|| stamp(now)),
                    if skip { ScheduleRunState::Skipped } else { ScheduleRunState::Running },
                    missed,
                    std::process::id(),
                    skip.then_some("missed while the computer slept or Cowork was closed; this schedule skips missed runs")
                ],
            )
            .map_err(db)?;
            let next = parse_cron(&schedule.cron)
                .ok()
                .and_then(|c| next_after(&c, now));
            match next {
                Some(next) => tx.execute(
                    "UPDATE schedules SET next_due = ?2 WHERE id = ?1",
                    params![schedule.id, stamp(next)],
                ),
                None => tx.execute(
                    "UPDATE schedules SET enabled = 0 WHERE id = ?1",
                    [&schedule.id],
                ),
            }
            .map_err(db)?;
            if !skip {
                firings.push(Firing {
                    run,
                    due: schedule.next_due,
                    schedule,
                    missed,
                });
            }
        }
        tx.commit().map_err(db)?;
        Ok(firings)
    }

    /// A run's end: completed, failed or waiting (for the person, on these suspended tasks).
    pub fn finish(
        &self,
        run: &str,
        state: ScheduleRunState,
        detail: Option<&str>,
        waiting_on: &[String],
    ) {
        let waiting_on =
            (!waiting_on.is_empty()).then(|| serde_json::to_string(waiting_on).unwrap_or_default());
        let written = self.conn.lock().unwrap().execute(
            "UPDATE schedule_runs SET state = ?2, ended_at = ?3, detail = ?4, waiting_on = ?5 WHERE id = ?1",
            params![run, state, stamp(Utc::now()), detail, waiting_on],
        );
        if let Err(e) = written {
            tracing::error!("schedule run {run}: could not record its end: {e}");
        }
    }

    /// The person resumed suspended `task`: a run waiting on it waits on one task fewer, and
    /// ends once none is left — failed if this one failed (or the chain it carried on did).
    /// Returns the run that moved.
    pub fn went_on(
        &self,
        task: &str,
        succeeded: bool,
        chain: Option<&crate::RunReport>,
    ) -> Result<Option<ScheduleRun>, ScheduleError> {
        let pattern = format!("%{}%", serde_json::to_string(task).map_err(db)?);
        let Some(mut run) = self
            .runs(
                "state = ?1 AND waiting_on LIKE ?2",
                params![ScheduleRunState::Waiting, pattern],
            )?
            .into_iter()
            .find(|r| r.waiting_on.iter().any(|t| t == task))
        else {
            return Ok(None);
        };
        run.waiting_on.retain(|t| t != task);
        // A chain that went on may wait again, on a new task.
        run.waiting_on
            .extend(chain.and_then(|report| report.waiting_on.clone()));
        let state = match chain.map(|report| report.state) {
            _ if !succeeded => ScheduleRunState::Failed,
            Some(RunState::Failed | RunState::Interrupted) => ScheduleRunState::Failed,
            _ if !run.waiting_on.is_empty() => ScheduleRunState::Waiting,
            _ => ScheduleRunState::Completed,
        };
        let detail = match (state, chain) {
            (ScheduleRunState::Failed, Some(report)) => report.error.clone(),
            (ScheduleRunState::Failed, None) => Some(format!("waiting task {task} failed")),
            (ScheduleRunState::Completed, Some(report)) => Some(format!(
                "completed after you resumed the waiting task (chain run {})",
                report.run
            )),
            (ScheduleRunState::Completed, None) => {
                Some("completed after you resumed the waiting task".into())
            }
            _ => run.detail.clone(),
        };
        self.finish(&run.id, state, detail.as_deref(), &run.waiting_on);
        run.state = state;
        Ok(Some(run))
    }

    /// Recent runs, newest first (of one schedule, or all).
    pub fn history(
        &self,
        name: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ScheduleRun>, ScheduleError> {
        self.runs(
            "?1 IS NULL OR schedule = ?1 ORDER BY started_at DESC, id DESC LIMIT ?2",
            params![name, limit as i64],
        )
    }

    fn runs(
        &self,
        filter: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<ScheduleRun>, ScheduleError> {
        let conn = self.conn.lock().unwrap();
        cowork_store::all_rows(
            &conn,
            &format!(
                "SELECT id, schedule, due_at, started_at, ended_at, state, missed, detail, waiting_on
                 FROM schedule_runs WHERE {filter}"
            ),
            params,
        )
        .map_err(db)
    }
}

/// What an unattended prompt came to: the reply's text, and the suspended tasks its calls wait
/// on (approvals outside the grant, logins).
#[derive(Clone, Debug, Default)]
pub struct PromptReply {
    pub text: String,
    pub waiting_on: Vec<String>,
}

/// How a prompt runs unattended (the app's agent): the text of the reply, or why it could not.
pub type PromptRunner = Arc<
    dyn Fn(
            String,
            String,
            Vec<Effect>,
            Option<String>,
        ) -> Pin<Box<dyn Future<Output = Result<PromptReply, String>> + Send>>
        + Send
        + Sync,
>;

/// Runs the schedules for as long as it lives: sleeps until the next is due (or one is
/// added), makes the runs due — each on its own task — and sleeps again.
pub async fn serve(
    schedules: Arc<Schedules>,
    chains: Arc<Chains>,
    clock: Arc<dyn Clock>,
    prompt: PromptRunner,
) {
    let changed = schedules.changed.clone();
    loop {
        let notified = changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let now = clock.now();
        match schedules.take_due(now) {
            Ok(firings) => {
                for firing in firings {
                    let (schedules, chains, prompt) =
                        (schedules.clone(), chains.clone(), prompt.clone());
                    tokio::spawn(async move { fire(&schedules, &chains, &prompt, firing).await });
                }
            }
            Err(e) => tracing::error!("schedules: {e}"),
        }
        let next = schedules.next_due().ok().flatten();
        let until = next.unwrap_or(now + chrono::TimeDelta::days(1));
        tokio::select! {
            _ = clock.sleep_until(until) => {}
            _ = &mut notified => {}
        }
    }
}

async fn fire(schedules: &Schedules, chains: &Chains, prompt: &PromptRunner, firing: Firing) {
    use ScheduleRunState::{Completed, Failed, Waiting};
    let conversation = format!("schedule:{}", firing.schedule.name);
    let (state, detail, waiting_on) = match &firing.schedule.target {
        Target::Chain { chain, inputs } => match chains.get(chain) {
            Err(e) => (Failed, Some(e), vec![]),
            Ok(chain) => {
                let options = RunOptions {
                    conversation,
                    granted: Some(Arc::from(firing.schedule.granted.clone())),
                    unattended: true,
                };
                match chains
                    .run(&chain, inputs, &options, &|_: &ChainEvent| {})
                    .await
                {
                    Ok(report) => match report.state {
                        RunState::Completed => {
                            (Completed, Some(format!("chain run {}", report.run)), vec![])
                        }
                        RunState::Waiting => (
                            Waiting,
                            Some(format!(
                                "{} (chain run {}; it goes on when you resume the waiting task)",
                                report.error.unwrap_or_default(),
                                report.run
                            )),
                            report.waiting_on.into_iter().collect(),
                        ),
                        _ => (Failed, report.error, vec![]),
                    },
                    Err(e) => (Failed, Some(e.to_string()), vec![]),
                }
            }
        },
        Target::Prompt {
            prompt: text,
            profile,
        } => {
            let granted = firing.schedule.granted.clone();
            match prompt(conversation, text.clone(), granted, profile.clone()).await {
                Ok(reply) if reply.waiting_on.is_empty() => (Completed, Some(reply.text), vec![]),
                Ok(reply) => (Waiting, Some(reply.text), reply.waiting_on),
                Err(e) => (Failed, Some(e), vec![]),
            }
        }
    };
    schedules.finish(&firing.run, state, detail.as_deref(), &waiting_on);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedules() -> (tempfile::TempDir, Schedules) {
        let dir = tempfile::tempdir().unwrap();
        let store =
            cowork_store::Store::open(cowork_store::DataDir::at(dir.path()), &[&crate::SCHEMA])
                .unwrap();
        let schedules = Schedules::open(&store).unwrap();
        (dir, schedules)
    }

    #[test]
    fn a_preview_says_the_pattern_and_its_next_times_in_order() {
        let now = Utc::now();
        let seen = preview("0 8 * * 1-5", now, 3).unwrap();
        assert_eq!(seen.next.len(), 3);
        assert!(seen.next.windows(2).all(|w| w[0] < w[1]), "{:?}", seen.next);
        assert!(seen.next[0] > now);
        assert!(!seen.when.is_empty());
        assert!(matches!(
            preview("0 8 * *", now, 3),
            Err(ScheduleError::Cron(..))
        ));
    }

    #[test]
    fn a_prompt_is_named_from_its_words_and_never_takes_a_name_that_is_taken() {
        assert_eq!(
            name_for_prompt("Summarize my inbox, please!"),
            "summarize-my-inbox-please"
        );
        assert_eq!(name_for_prompt("总结 我的 邮件"), "总结-我的-邮件");
        assert_eq!(name_for_prompt("?? !!"), "prompt");
        let (_dir, schedules) = schedules();
        let now = Utc::now();
        let first = schedules
            .add_prompt(
                None,
                "0 8 * * *",
                "Check the news",
                None,
                Missed::RunOnce,
                now,
            )
            .unwrap();
        let second = schedules
            .add_prompt(
                Some("  "),
                "0 9 * * *",
                "check the news",
                None,
                Missed::Skip,
                now,
            )
            .unwrap();
        assert_eq!(
            (first.name.as_str(), second.name.as_str()),
            ("check-the-news", "check-the-news-2")
        );
        assert!(second.granted.is_empty(), "a prompt is granted nothing");
        assert!(matches!(
            schedules.add_prompt(None, "0 8 * * *", "   ", None, Missed::Skip, now),
            Err(ScheduleError::EmptyPrompt)
        ));
    }
}
