// A chain's progress, pushed as it runs (its six events): each step waiting, running, done,
// skipped or failed, and how the run ended. One card per run, dismissed by the person.
import { useEffect, useState } from "preact/hooks";
import { api, on, type ChainEvent, type Schedule, type ScheduleRun } from "./api";
import { t } from "./i18n";

type StepState = "waiting" | "running" | "done" | "skipped" | "failed";
interface Run { chain: string; steps: { id: string; state: StepState; note?: string }[]; state: "running" | "completed" | "failed"; error?: string }

function apply(runs: Record<string, Run>, e: ChainEvent): Record<string, Run> {
  if (e.type === "chain_started") {
    return { ...runs, [e.run]: { chain: e.chain, state: "running", steps: e.steps.map((id) => ({ id, state: "waiting" as StepState })) } };
  }
  const run = runs[e.run];
  if (!run) return runs;
  const step = (id: string, state: StepState, note?: string) =>
    ({ ...run, steps: run.steps.map((s) => (s.id === id ? { ...s, state, note } : s)) });
  switch (e.type) {
    case "step_started": return { ...runs, [e.run]: step(e.step, "running", e.attempt > 1 ? `${t("chainTry")} ${e.attempt}` : undefined) };
    case "step_completed": return { ...runs, [e.run]: step(e.step, e.skipped ? "skipped" : "done") };
    case "step_failed": return { ...runs, [e.run]: step(e.step, e.retrying ? "running" : "failed", e.error) };
    case "chain_completed": return { ...runs, [e.run]: { ...run, state: "completed" } };
    case "chain_failed": return { ...runs, [e.run]: { ...run, state: "failed", error: e.error } };
  }
  return runs;
}

const mark: Record<StepState, string> = { waiting: "○", running: "◐", done: "✓", skipped: "–", failed: "✗" };

export function ChainProgress() {
  const [runs, setRuns] = useState<Record<string, Run>>({});
  useEffect(() => {
    const un = on("chain-event", (e) => setRuns((r) => apply(r, e)));
    return () => { un.then((f) => f()); };
  }, []);
  const shown = Object.entries(runs);
  if (shown.length === 0) return null;
  return (
    <div class="chain-cards">
      {shown.map(([id, run]) => (
        <div key={id} class={`chain-card ${run.state}`} role="status" data-testid="chain-card" data-state={run.state}>
          <div class="row"><strong>{t("chain")}: {run.chain}</strong>
            <span class="muted">{run.state === "running" ? t("chainRunning") : run.state === "completed" ? t("chainDone") : t("chainStopped")}</span>
            {run.state !== "running" && <button aria-label={t("dismiss")} onClick={() => setRuns((r) => { const { [id]: _, ...rest } = r; return rest; })}>×</button>}</div>
          <ol>{run.steps.map((s) => <li key={s.id} data-step={s.id} data-state={s.state}><span class="mark">{mark[s.state]}</span> {s.id}{s.note && <span class="muted"> — {s.note}</span>}</li>)}</ol>
          {run.error && <div class="error">{run.error}</div>}
        </div>
      ))}
    </div>
  );
}

/** Settings → Schedules: each schedule, its next time and what it may do unattended, and the run history. */
export function SchedulesPanel() {
  const [schedules, setSchedules] = useState<Schedule[]>([]);
  const [runs, setRuns] = useState<ScheduleRun[]>([]);
  const [status, setStatus] = useState("");
  const load = () => {
    api.listSchedules().then(setSchedules).catch((e) => setStatus(String(e)));
    api.scheduleRuns(null).then(setRuns).catch((e) => setStatus(String(e)));
  };
  useEffect(() => {
    load();
    // A run's end shows up as its tool calls finish.
    const un = on("chain-event", (e) => { if (e.type === "chain_completed" || e.type === "chain_failed") load(); });
    return () => { un.then((f) => f()); };
  }, []);
  const what = (s: Schedule) => (s.target.kind === "chain" ? `${t("chain")}: ${s.target.chain}` : `“${s.target.prompt}”`);
  return (
    <fieldset data-testid="schedules">
      <legend>{t("schedules")}</legend>
      {schedules.length === 0 && <p class="muted">{t("noSchedules")} <code>cowork schedule add "0 8 * * 1-5" --prompt "…"</code></p>}
      <ul class="schedules">
        {schedules.map((s) => (
          <li key={s.id} data-name={s.name}>
            <strong>{s.name}</strong> — {s.when} · {what(s)} · {t("nextRun")} {new Date(s.next_due).toLocaleString()} ·{" "}
            <span class="muted">{s.granted.length} {t("effectsGranted")}</span>{" "}
            <button class="link" onClick={() => api.removeSchedule(s.name).then(load).catch((e) => setStatus(String(e)))}>{t("remove")}</button>
          </li>
        ))}
      </ul>
      {runs.length > 0 && (
        <table class="runs" data-testid="schedule-runs">
          <thead><tr><th>{t("schedule")}</th><th>{t("due")}</th><th>{t("state")}</th><th /></tr></thead>
          <tbody>{runs.map((r) => (
            <tr key={r.id} data-state={r.state}><td>{r.schedule}</td><td>{new Date(r.due_at).toLocaleString()}{r.missed ? ` (${t("missed")})` : ""}</td>
              <td>{t(`run_${r.state}` as Parameters<typeof t>[0])}</td><td class="muted">{r.detail ?? ""}</td></tr>))}</tbody>
        </table>
      )}
      {status && <p class="status">{status}</p>}
    </fieldset>
  );
}
