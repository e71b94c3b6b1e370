// A chain's progress, pushed as it runs (its six events): each step waiting, running, done,
// skipped or failed, and how the run ended. One card per run, dismissed by the person.
import { useEffect, useState } from "preact/hooks";
import { on, type ChainEvent } from "./api";
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
