// A sub-agent's work, folded under its `task` card: what it was asked, what it said and the
// calls it made, read from its own conversation when the person opens it.
import { useState } from "preact/hooks";
import { api } from "../api";
import { t } from "../i18n";
import { MarkdownBlocks } from "./blocks";
import { Card } from "./card";
import { type Item, toItems } from "./items";

type TaskResult = { name?: string; conversation?: string; profile?: string; calls?: unknown[] };

/// The task's result as the card shows it; null for anything else.
export function subAgentOf(name: string, structured: unknown): Required<TaskResult> | null {
  const r = structured as TaskResult | null | undefined;
  if (name !== "task" || typeof r?.conversation !== "string") return null;
  return {
    name: String(r.name ?? ""),
    conversation: r.conversation,
    profile: String(r.profile ?? ""),
    calls: Array.isArray(r.calls) ? r.calls : [],
  };
}

export function SubAgentWork({ task }: { task: Required<TaskResult> }) {
  const [items, setItems] = useState<Item[] | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const open = () =>
    api
      .getThread(task.conversation)
      .then((th) => setItems(toItems(th.messages, th.compactions)))
      .catch((e) => setFailed(String(e)));
  return (
    <div class="sub-agent" data-testid="sub-agent">
      <button
        type="button"
        class="details-toggle"
        aria-expanded={items !== null}
        onClick={() => (items ? setItems(null) : open())}
        data-testid="sub-agent-toggle"
      >
        {items ? "▾" : "▸"} {t("subAgentWork")} <q>{task.name}</q> · {task.calls.length} {t("subAgentCalls")} ·{" "}
        {t("subAgentProfile")} <q>{task.profile}</q>
      </button>
      {failed && <p class="card-result refused">{failed}</p>}
      {items && (
        <div class="sub-agent-thread" data-testid="sub-agent-thread">
          {items.map((it, i) => (
            <SubAgentItem key={it.key ?? i} it={it} />
          ))}
        </div>
      )}
    </div>
  );
}

function SubAgentItem({ it }: { it: Item }) {
  if (it.kind === "tool") return <Card card={it.card} />;
  if (it.kind === "user")
    return (
      <p class="sub-agent-task">
        <strong>{t("subAgentTask")}</strong> {it.text}
      </p>
    );
  if (it.kind === "assistant")
    return (
      <div class="msg assistant">
        <MarkdownBlocks text={it.text} />
      </div>
    );
  return null;
}
