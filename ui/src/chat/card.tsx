import { useState } from "preact/hooks";
import type { ImageBlock, Progress } from "../api";
import { said, t, tookTime, toolTitle } from "../i18n";
import { webCard } from "../web";
import { AppFrame, type Views } from "./appview";
import { SHOWN_IMAGES } from "./attachments";
import type { ToolCard } from "./items";
import { SubAgentWork, subAgentOf } from "./subagent";

/// What a running tool reported: a bar when it knows the total, otherwise the count.
function ProgressLine({ progress: p }: { progress: Progress }) {
  const known = typeof p.total === "number" && p.total > 0;
  return (
    <div class="card-progress" data-testid="tool-progress">
      {known ? <progress value={p.progress ?? 0} max={p.total ?? undefined} /> : <span>{p.progress}</span>}
      {p.message && <span class="progress-message">{p.message}</span>}
    </div>
  );
}

/// Builtin tools whose change a person can take back from its card, and the tool that does it
/// (reviewed and audited like any call). Keyed by the card's own tool: a result cannot name
/// another tool for the button to run.
const UNDO_BY_TOOL: Record<string, string> = {
  calendar_create: "calendar_undo",
  calendar_update: "calendar_undo",
  calendar_delete: "calendar_undo",
  calendar_undo: "calendar_undo",
};

type Act = (name: string, args: Record<string, unknown>) => void;

/// Undo under a change that can be taken back; pressed once.
function UndoButton({ card, act }: { card: ToolCard; act?: Act }) {
  const [pressed, setPressed] = useState(false);
  const undo = UNDO_BY_TOOL[card.name];
  const change = (card.structured as { change?: unknown } | null | undefined)?.change;
  if (!act || !undo || card.status !== "ok" || typeof change !== "number") return null;
  return (
    <button
      type="button"
      class="card-undo"
      data-testid="card-undo"
      disabled={pressed}
      onClick={() => {
        setPressed(true);
        act(undo, { change });
      }}
    >
      ↶ {t("undo")}
    </button>
  );
}

/// A tool call: its name and time, its progress while it runs, its input when opened, and what
/// it returned (a web card, its text, its images), with Undo when the change can be taken back.
export function Card({ card, act, views }: { card: ToolCard; act?: Act; views?: Views }) {
  const [open, setOpen] = useState(false);
  return (
    <div class={`tool-card ${card.status}`} data-testid="tool-card" data-tool={card.name} data-status={card.status}>
      <button type="button" class="card-head" onClick={() => setOpen(!open)} aria-expanded={open}>
        <span class="status-dot" />
        {toolTitle(card.name)}
        <span class="meta">
          {card.status === "running" ? (
            <span class="spinner" role="img" aria-label={t("running")} />
          ) : (
            tookTime(card.duration_ms)
          )}
        </span>
      </button>
      {card.status === "running" && card.progress && <ProgressLine progress={card.progress} />}
      {open && (
        <pre class="card-body">
          <code class="tool-id">{card.name}</code>
          {"\n"}
          {JSON.stringify(card.input, null, 2)}
          {card.failure === "denied" && card.result ? `\n\n${card.result}` : ""}
        </pre>
      )}
      <CardResult card={card} />
      {card.status === "ok" && <SubAgent card={card} />}
      {card.status === "ok" && card.app && views && <AppFrame card={card} view={card.app} views={views} />}
      <UndoButton card={card} act={act} />
      {card.images
        ?.filter((i): i is ImageBlock => i.type === "image" && SHOWN_IMAGES.includes(i.mime_type))
        .map((i, n) => (
          <img
            key={n}
            class="card-image"
            alt={`${toolTitle(card.name)} ${n + 1}`}
            src={`data:${i.mime_type};base64,${i.data_base64}`}
          />
        ))}
    </div>
  );
}

/// A sub-agent's work, folded, under its task's result.
function SubAgent({ card }: { card: ToolCard }) {
  const task = subAgentOf(card.name, card.structured);
  return task && <SubAgentWork task={task} />;
}

/// What the call returned: a refusal in the person's words, a web card, or the tool's text
/// under how it failed.
function CardResult({ card }: { card: ToolCard }) {
  if (card.failure === "denied" && card.status === "error")
    return (
      <p class="card-result refused" data-testid="card-refused">
        {t("notAllowed")}
      </p>
    );
  return (
    (card.status === "ok" && webCard(card.name, card.structured)) ||
    (card.result !== undefined && (
      <>
        {card.status === "error" && card.failure && (
          <p class="card-result refused" data-testid="card-failure">
            {said("outcome", card.failure)}
          </p>
        )}
        <pre class="card-result">{card.result}</pre>
      </>
    )) ||
    null
  );
}
