// A chain's progress, pushed as it runs (its six events): each step waiting, running, done,
// skipped or failed, and how the run ended. One card per run, dismissed by the person.
import { useEffect, useState } from "preact/hooks";
import { api, type ChainEvent, type CronPreview, on, type Schedule, type ScheduleRun } from "./api";
import { describeCron, formatDate, t, weekdayName } from "./i18n";
import { ProfileSelect, useProfileNames } from "./profiles";

type StepState = "waiting" | "running" | "done" | "skipped" | "failed";
interface Run {
  chain: string;
  steps: { id: string; state: StepState; note?: string }[];
  state: "running" | "completed" | "failed";
  error?: string;
}

function apply(runs: Record<string, Run>, e: ChainEvent): Record<string, Run> {
  if (e.type === "chain_started") {
    return {
      ...runs,
      [e.run]: {
        chain: e.chain,
        state: "running",
        steps: e.steps.map((id) => ({ id, state: "waiting" as StepState })),
      },
    };
  }
  const run = runs[e.run];
  if (!run) return runs;
  const step = (id: string, state: StepState, note?: string) => ({
    ...run,
    steps: run.steps.map((s) => (s.id === id ? { ...s, state, note } : s)),
  });
  switch (e.type) {
    case "step_started":
      return { ...runs, [e.run]: step(e.step, "running", e.attempt > 1 ? `${t("chainTry")} ${e.attempt}` : undefined) };
    case "step_completed":
      return { ...runs, [e.run]: step(e.step, e.skipped ? "skipped" : "done") };
    case "step_failed":
      return { ...runs, [e.run]: step(e.step, e.retrying ? "running" : "failed", e.error) };
    case "chain_completed":
      return { ...runs, [e.run]: { ...run, state: "completed" } };
    case "chain_failed":
      return { ...runs, [e.run]: { ...run, state: "failed", error: e.error } };
  }
  return runs;
}

const mark: Record<StepState, string> = { waiting: "○", running: "◐", done: "✓", skipped: "–", failed: "✗" };

export function ChainProgress() {
  const [runs, setRuns] = useState<Record<string, Run>>({});
  useEffect(() => {
    const un = on("chain-event", (e) => setRuns((r) => apply(r, e)));
    return () => {
      un.then((f) => f());
    };
  }, []);
  const shown = Object.entries(runs);
  if (shown.length === 0) return null;
  return (
    <div class="chain-cards">
      {shown.map(([id, run]) => (
        <div key={id} class={`chain-card ${run.state}`} role="status" data-testid="chain-card" data-state={run.state}>
          <div class="row">
            <strong>
              {t("chain")}: {run.chain}
            </strong>
            <span class="muted">
              {run.state === "running"
                ? t("chainRunning")
                : run.state === "completed"
                  ? t("chainDone")
                  : t("chainStopped")}
            </span>
            {run.state !== "running" && (
              <button
                type="button"
                aria-label={t("dismiss")}
                onClick={() =>
                  setRuns((r) => {
                    const { [id]: _, ...rest } = r;
                    return rest;
                  })
                }
              >
                ×
              </button>
            )}
          </div>
          <ol>
            {run.steps.map((s) => (
              <li key={s.id} data-step={s.id} data-state={s.state}>
                <span class="mark">{mark[s.state]}</span> {s.id}
                {s.note && <span class="muted"> — {s.note}</span>}
              </li>
            ))}
          </ol>
          {run.error && <div class="error">{run.error}</div>}
        </div>
      ))}
    </div>
  );
}

type Repeat = "daily" | "weekdays" | "weekends" | "weekly" | "custom";
const REPEAT_DAYS: Record<Exclude<Repeat, "weekly" | "custom">, string> = {
  daily: "*",
  weekdays: "1-5",
  weekends: "0,6",
};

/** The cron pattern the form's choices make; the custom field as typed. */
function cronOf(repeat: Repeat, time: string, weekday: number, custom: string): string {
  if (repeat === "custom") return custom;
  const [h, m] = time.split(":").map(Number);
  return `${m || 0} ${h || 0} * * ${repeat === "weekly" ? weekday : REPEAT_DAYS[repeat]}`;
}

/** When a new schedule runs, as the form's choices, and the cron pattern they make. */
function useWhen() {
  const [repeat, setRepeat] = useState<Repeat>("weekdays");
  const [time, setTime] = useState("08:00");
  const [weekday, setWeekday] = useState(1);
  const [custom, setCustom] = useState("0 8 * * 1-5");
  const cron = cronOf(repeat, time, weekday, custom);
  return { repeat, setRepeat, time, setTime, weekday, setWeekday, custom, setCustom, cron };
}

/** The pattern's next times, in words, or why it does not parse (the form's error, which adding
 * sets too). */
function usePreview(cron: string) {
  const [preview, setPreview] = useState<CronPreview | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    let current = true;
    api
      .previewSchedule(cron)
      .then((p) => {
        if (current) {
          setPreview(p);
          setError("");
        }
      })
      .catch((e) => {
        if (current) {
          setPreview(null);
          setError(String(e));
        }
      });
    return () => {
      current = false;
    };
  }, [cron]);
  return { preview, error, setError };
}

/** A new scheduled prompt, made in the window: when (in words, with its next times before it is
 * added) and what to ask. It is granted nothing: what needs an approval waits for the person. */
function NewSchedule({ onAdded }: { onAdded: () => void }) {
  const [prompt, setPrompt] = useState("");
  const [name, setName] = useState("");
  const [runMissed, setRunMissed] = useState(true);
  const [profile, setProfile] = useState<string | null>(null);
  const profiles = useProfileNames();
  const when = useWhen();
  const { cron } = when;
  const { preview, error, setError } = usePreview(cron);
  const add = async () => {
    try {
      await api.addPromptSchedule(name.trim() || null, cron, prompt, profile, runMissed ? "run_once" : "skip");
      setPrompt("");
      setName("");
      setError("");
      onAdded();
    } catch (e) {
      setError(String(e));
    }
  };
  return (
    <form
      class="new-schedule"
      data-testid="new-schedule"
      onSubmit={(e) => {
        e.preventDefault();
        add();
      }}
    >
      <h3>{t("newSchedule")}</h3>
      <label>
        {t("scheduleWhat")}
        <textarea
          rows={2}
          data-testid="schedule-prompt"
          placeholder={t("schedulePromptHint")}
          value={prompt}
          onInput={(e) => setPrompt(e.currentTarget.value)}
        />
      </label>
      <WhenFields when={when} />
      <p class="muted" data-testid="schedule-preview" aria-live="polite">
        {preview && (
          <>
            {describeCron(cron, preview.when)} · {t("nextRuns")}{" "}
            {preview.next.map((n) => formatDate(n, "weekdayTime")).join(" · ")}
          </>
        )}
      </p>
      <label>
        {t("scheduleName")}
        <input data-testid="schedule-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <ProfileSelect testid="schedule-profile" profiles={profiles} value={profile} onChange={setProfile} />
      <label class="inline">
        <input type="checkbox" checked={runMissed} onChange={(e) => setRunMissed(e.currentTarget.checked)} />{" "}
        {t("runMissed")}
      </label>
      <p class="hint">{t("scheduleUnattended")}</p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="primary" data-testid="add-schedule" disabled={!prompt.trim() || !preview}>
        {t("addSchedule")}
      </button>
    </form>
  );
}

/** How often (a day of the week for a weekly one) and at what time, or a cron pattern typed. */
function WhenFields({ when: w }: { when: ReturnType<typeof useWhen> }) {
  return (
    <div class="row">
      <label>
        {t("scheduleRepeat")}
        <select
          data-testid="schedule-repeat"
          value={w.repeat}
          onChange={(e) => w.setRepeat(e.currentTarget.value as Repeat)}
        >
          <option value="daily">{t("everyDay")}</option>
          <option value="weekdays">{t("weekdays")}</option>
          <option value="weekends">{t("weekends")}</option>
          <option value="weekly">{t("everyWeekOn")}…</option>
          <option value="custom">{t("customCron")}</option>
        </select>
      </label>
      {w.repeat === "weekly" && (
        <select
          aria-label={t("everyWeekOn")}
          value={w.weekday}
          onChange={(e) => w.setWeekday(Number(e.currentTarget.value))}
        >
          {[1, 2, 3, 4, 5, 6, 0].map((n) => (
            <option key={n} value={n}>
              {weekdayName(n)}
            </option>
          ))}
        </select>
      )}
      {w.repeat === "custom" ? (
        <input
          data-testid="schedule-cron"
          aria-label={t("customCron")}
          value={w.custom}
          onInput={(e) => w.setCustom(e.currentTarget.value)}
        />
      ) : (
        <label>
          {t("scheduleAt")}{" "}
          <input
            type="time"
            data-testid="schedule-time"
            value={w.time}
            onInput={(e) => w.setTime(e.currentTarget.value)}
          />
        </label>
      )}
    </div>
  );
}

/** The schedules and their runs, listed again as a run ends (it shows up as its tool calls
 * finish). */
function useSchedules() {
  const [schedules, setSchedules] = useState<Schedule[]>([]);
  const [runs, setRuns] = useState<ScheduleRun[]>([]);
  const [status, setStatus] = useState("");
  const load = () => {
    api
      .listSchedules()
      .then(setSchedules)
      .catch((e) => setStatus(String(e)));
    api
      .scheduleRuns(null)
      .then(setRuns)
      .catch((e) => setStatus(String(e)));
  };
  useEffect(() => {
    load();
    const un = on("chain-event", (e) => {
      if (e.type === "chain_completed" || e.type === "chain_failed") load();
    });
    return () => {
      un.then((f) => f());
    };
  }, []);
  return { schedules, runs, status, setStatus, load };
}

/** Settings → Schedules: each schedule, its next time and what it may do unattended, the run
 * history, and a form for a new one. */
export function SchedulesPanel() {
  const { schedules, runs, status, setStatus, load } = useSchedules();
  const what = (s: Schedule) =>
    s.target.kind === "chain"
      ? `${t("chain")}: ${s.target.chain}`
      : `“${s.target.prompt}”${s.target.profile ? ` · ${t("profile")} «${s.target.profile}»` : ""}`;
  return (
    <fieldset data-testid="schedules">
      <legend>{t("schedules")}</legend>
      {schedules.length === 0 && <p class="muted">{t("noSchedules")}</p>}
      <ul class="schedules">
        {schedules.map((s) => (
          <li key={s.id} data-name={s.name} class="schedule-card">
            <div>
              <strong>{what(s)}</strong>
              <div class="muted">
                {describeCron(s.cron, s.when)} · {t("nextRun")} {formatDate(s.next_due, "weekdayTime")}
                {s.granted.length > 0 && ` · ${s.granted.length} ${t("effectsGranted")}`} · <code>{s.name}</code>
              </div>
            </div>
            <button
              type="button"
              onClick={() =>
                api
                  .removeSchedule(s.name)
                  .then(load)
                  .catch((e) => setStatus(String(e)))
              }
            >
              {t("remove")}
            </button>
          </li>
        ))}
      </ul>
      <NewSchedule
        onAdded={() => {
          load();
          setStatus(t("scheduleAdded"));
        }}
      />
      {runs.length > 0 && <RunsTable runs={runs} />}
      {status && (
        <p class="status" role="status">
          {status}
        </p>
      )}
    </fieldset>
  );
}

function RunsTable({ runs }: { runs: ScheduleRun[] }) {
  return (
    <table class="runs" data-testid="schedule-runs">
      <thead>
        <tr>
          <th>{t("schedule")}</th>
          <th>{t("due")}</th>
          <th>{t("state")}</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {runs.map((r) => (
          <tr key={r.id} data-state={r.state}>
            <td>{r.schedule}</td>
            <td>
              {formatDate(r.due_at)}
              {r.missed ? ` (${t("missed")})` : ""}
            </td>
            <td>{t(`run_${r.state}` as Parameters<typeof t>[0])}</td>
            <td class="muted">{r.detail ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
