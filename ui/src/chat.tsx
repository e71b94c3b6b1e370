import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import {
  api,
  type Compaction,
  type Content,
  type ConversationSettings,
  type FirstRun,
  type ImageBlock,
  type LocalServer,
  on,
  type Part,
  type Progress,
  type Remedy,
  type ThreadMessage,
  type TurnUsage,
  type Value,
} from "./api";
import { WorkspaceBar } from "./desktop";
import { said, t, tookTime, toolTitle } from "./i18n";
import { renderMarkdown } from "./markdown";
import { listenOnce, readAloud } from "./voice";
import { webCard } from "./web";

interface ToolCard {
  id: string;
  name: string;
  input: unknown;
  status: "running" | "ok" | "error" | "waiting";
  suspended?: string | null;
  result?: string;
  structured?: unknown;
  images?: Content[];
  duration_ms?: number;
  progress?: Progress;
  /** How it failed (the scheduler's typed error kind): said in the person's language above the
   * tool's own words. `denied` (the person or a rule said no) keeps its reason in the details. */
  failure?: string;
}

/// Raster images only, as data URLs (no SVG: it can carry script and links).
const SHOWN_IMAGES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// A finished call's card status: a suspended call waits for the person (the banner above).
function finished(ok: boolean, suspended: string | null | undefined): ToolCard["status"] {
  return ok ? "ok" : suspended ? "waiting" : "error";
}
type Recalled = { id: string; title: string; kind: string; snippet: string };
/// Where a displayed message lives in the store: its id and its siblings (other branches).
type Meta = { mid?: number; siblings?: number[]; attachments?: Part[] };
/// `key`: the item's identity for the list, kept when a turn's end brings the stored ids, so the
/// page keeps its nodes (and its scroll, selection, focus) instead of building them again.
type Item = (
  | ({ kind: "user"; text: string } & Meta)
  | ({ kind: "assistant"; text: string } & Meta)
  | { kind: "tool"; card: ToolCard }
  | { kind: "recalled"; memories: Recalled[] }
  | { kind: "resumed"; tool: string }
  | { kind: "compacted"; compaction: Compaction }
  | { kind: "usage"; usage: TurnUsage }
) & { key?: string };
let lastKey = 0;
const newKey = () => `live-${++lastKey}`;

/// The stored branch's ids, siblings and usage brought onto what the page shows after a turn
/// (its own items, recalled memories and resume marks included, stay as they are). When the
/// two differ in their messages (an edit, a regeneration), the stored branch is shown.
function withStoredMeta(shown: Item[], stored: Item[]): Item[] {
  const messages = (l: Item[]) => l.filter((it) => it.kind === "user" || it.kind === "assistant");
  const a = messages(shown);
  const b = messages(stored);
  if (a.length !== b.length || a.some((it, i) => it.kind !== b[i].kind)) return stored;
  const pair = new Map<Item, Item>(a.map((it, i) => [it, b[i]]));
  const after = new Map<Item, Item[]>();
  let previous: Item | null = null;
  for (const it of stored) {
    if (it.kind === "user" || it.kind === "assistant") previous = it;
    else if ((it.kind === "usage" || it.kind === "compacted") && previous)
      after.set(previous, [...(after.get(previous) ?? []), it]);
  }
  const out: Item[] = [];
  for (const it of shown) {
    if (it.kind === "usage" || it.kind === "compacted") continue;
    const s = pair.get(it);
    if (s && (s.kind === "user" || s.kind === "assistant") && (it.kind === "user" || it.kind === "assistant")) {
      out.push({ ...it, mid: s.mid, siblings: s.siblings, attachments: s.attachments ?? it.attachments } as Item);
      out.push(...(after.get(s) ?? []));
    } else out.push(it);
  }
  return out;
}

/// The branch shown → display items (tool uses paired with their results, compactions where
/// they cut, each turn's usage summed under its answer).
function toItems(messages: ThreadMessage[], compactions: Compaction[] = []): Item[] {
  const items: Item[] = [];
  const cards = new Map<string, ToolCard>();
  let turn: TurnUsage | null = null;
  let lastMid = 0;
  const closeTurn = () => {
    if (turn) items.push({ kind: "usage", usage: turn, key: `u${lastMid}` });
    turn = null;
  };
  for (const m of messages) {
    const parts = m.parts as Part[];
    const isPerson = m.role === "user" && !parts.some((p) => p.type === "tool_result");
    if (isPerson) closeTurn();
    const meta: Meta = { mid: m.id, siblings: m.siblings };
    lastMid = m.id;
    let placed = false;
    if (isPerson) {
      const text = parts
        .filter((p) => p.type === "text")
        .map((p) => (p as { text: string }).text)
        .join("\n");
      items.push({
        kind: "user",
        text,
        ...meta,
        attachments: parts.filter((p) => p.type === "image" || p.type === "file"),
        key: `m${m.id}`,
      });
      placed = true;
    }
    parts.forEach((p, n) => {
      if (p.type === "text" && p.text && m.role === "assistant") {
        items.push({ kind: "assistant", text: p.text, ...(placed ? {} : meta), key: `m${m.id}-${n}` });
        placed = true;
      }
      // A call that waited for the person and went on: the mark the live turn showed.
      if (p.type === "tool_use" && p.id.startsWith("resume-")) {
        items.push({ kind: "resumed", tool: p.name, key: `r${p.id}` });
        return;
      }
      if (p.type === "tool_use") {
        const card: ToolCard = { id: p.id, name: p.name, input: p.input, status: "running" };
        cards.set(p.id, card);
        items.push({ kind: "tool", card });
      }
      if (p.type === "tool_result") {
        const c = cards.get(p.tool_use_id);
        if (c) {
          c.status = finished(!p.is_error, p.suspended);
          c.suspended = p.suspended;
          c.result = p.content;
          c.structured = p.structured;
        }
      }
    });
    if (m.usage) {
      const t: TurnUsage = turn ?? { input_tokens: 0, output_tokens: 0, cost_usd: null };
      turn = {
        input_tokens: t.input_tokens + m.usage.input_tokens,
        output_tokens: t.output_tokens + m.usage.output_tokens,
        cost_usd: m.usage.cost_usd != null || t.cost_usd != null ? (t.cost_usd ?? 0) + (m.usage.cost_usd ?? 0) : null,
      };
    }
    const cut = compactions.filter((c) => c.upto === m.id).pop();
    if (cut) {
      closeTurn();
      items.push({ kind: "compacted", compaction: cut, key: `c${cut.id}` });
    }
  }
  closeTurn();
  return items;
}

/// Tokens and dollars of one turn.
function UsageLine({ usage }: { usage: TurnUsage }) {
  const n = (v: number) => v.toLocaleString();
  return (
    <div class="usage-line" data-testid="usage">
      {n(usage.input_tokens)} {t("tokensIn")} · {n(usage.output_tokens)} {t("tokensOut")}
      {usage.cost_usd != null ? ` · $${usage.cost_usd.toFixed(4)}` : ""}
    </div>
  );
}

/// Small stroke icons (inline SVG: no icon font, and no glyph a bare machine's fonts lack).
const ICONS: Record<string, string> = {
  copy: "M9 9h10v10H9zM5 15V5h10",
  edit: "M4 20h4L19 9l-4-4L4 16zM13 7l4 4",
  regenerate: "M20 12a8 8 0 1 1-3-6.2M20 4v5h-5",
  prev: "M15 5l-7 7 7 7",
  next: "M9 5l7 7-7 7",
  attach: "M21 11l-8.5 8.5a5 5 0 0 1-7-7L14 4a3.5 3.5 0 0 1 5 5l-8.5 8.5a2 2 0 0 1-3-3L15 7",
  file: "M6 3h8l4 4v14H6zM14 3v4h4",
  chat: "M4 5h16v11H9l-5 4z",
  tools: "M14 6a4 4 0 0 0 5 5l-9 9-3-3 9-9a4 4 0 0 0-2-2z",
  toolpacks: "M4 8l8-4 8 4v8l-8 4-8-4zM4 8l8 4 8-4M12 12v8",
  audit: "M6 3h12v18H6zM9 8h6M9 12h6M9 16h4",
  settings:
    "M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6zM12 3v3M12 18v3M3 12h3M18 12h3M5.6 5.6l2.1 2.1M16.3 16.3l2.1 2.1M5.6 18.4l2.1-2.1M16.3 7.7l2.1-2.1",
  changes: "M6 3v12M6 15a3 3 0 1 0 0 6 3 3 0 0 0 0-6zM18 9a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM18 9c0 6-12 3-12 6",
  memory: "M12 4a8 8 0 1 0 0 16 8 8 0 0 0 0-16zM12 8v4l3 2",
};
export function Icon({ name }: { name: keyof typeof ICONS }) {
  return (
    <svg
      viewBox="0 0 24 24"
      width="14"
      height="14"
      aria-hidden="true"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
    >
      <path d={ICONS[name]} />
    </svg>
  );
}

/// A new chat: what Cowork can do, as three things to try that use real tools. A pick fills the
/// field; the person still sends it.
const SUGGESTIONS = ["tryCalendar", "tryFolder", "tryReminder"] as const;
function EmptyChat({ onPick }: { onPick: (text: string) => void }) {
  return (
    <div class="empty-chat" data-testid="empty-chat">
      <h2>{t("emptyTitle")}</h2>
      <div class="suggestions">
        {SUGGESTIONS.map((key) => (
          <button type="button" key={key} class="suggestion" onClick={() => onPick(t(key))}>
            {t(key)}
          </button>
        ))}
      </div>
    </div>
  );
}

/// ‹ 2/3 › between the branches of a message.
function BranchSwitch({
  mid,
  siblings,
  onSwitch,
}: {
  mid: number;
  siblings: number[];
  onSwitch: (id: number) => void;
}) {
  if (siblings.length < 2) return null;
  const at = siblings.indexOf(mid);
  return (
    <span class="branches" data-testid="branches">
      <button
        type="button"
        class="icon"
        aria-label={t("previousBranch")}
        disabled={at <= 0}
        onClick={() => onSwitch(siblings[at - 1])}
      >
        <Icon name="prev" />
      </button>
      {at + 1}/{siblings.length}
      <button
        type="button"
        class="icon"
        aria-label={t("nextBranch")}
        disabled={at >= siblings.length - 1}
        onClick={() => onSwitch(siblings[at + 1])}
      >
        <Icon name="next" />
      </button>
    </span>
  );
}

/// An attachment as a chip: its name (a thumbnail for an image) and, before sending, a remove button.
function AttachmentChip({ part, onRemove }: { part: Part; onRemove?: () => void }) {
  const name = part.type === "file" ? part.name : part.type === "image" ? (part.name ?? t("pastedImage")) : "";
  return (
    <span
      class="attachment"
      data-testid="attachment"
      title={part.type === "file" && part.truncated_from ? t("attachmentCut") : name}
    >
      {part.type === "image" && SHOWN_IMAGES.includes(part.media_type) && (
        <img alt="" src={`data:${part.media_type};base64,${part.data_base64}`} />
      )}
      {part.type === "file" && <Icon name="file" />}
      {name}
      {part.type === "file" && part.truncated_from ? " ✂" : ""}
      {onRemove && (
        <button type="button" class="icon" aria-label={t("remove")} onClick={onRemove}>
          ×
        </button>
      )}
    </span>
  );
}

/// Markdown rendered block by block: a finished block (before a blank line outside a code
/// fence) is rendered once and kept; only the block being written is rendered again as text
/// streams in, so a long answer costs the same per chunk as a short one.
const blockCache = new Map<string, string>();
function renderBlock(block: string): string {
  let html = blockCache.get(block);
  if (html === undefined) {
    html = renderMarkdown(block);
    if (blockCache.size > 2000) blockCache.clear();
    blockCache.set(block, html);
  }
  return html;
}
export function splitBlocks(text: string): string[] {
  const blocks: string[] = [];
  let fence = false;
  let start = 0;
  const lines = text.split("\n");
  let offset = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    offset += line.length + 1;
    if (!fence && line.trim() === "" && i < lines.length - 1) {
      const block = text.slice(start, offset);
      if (block.trim()) blocks.push(block);
      start = offset;
    }
  }
  if (start < text.length) blocks.push(text.slice(start));
  return blocks;
}
function MarkdownBlocks({ text }: { text: string }) {
  return (
    <>
      {splitBlocks(text).map((b, i) => (
        <div key={i} class="md-block" dangerouslySetInnerHTML={{ __html: renderBlock(b) }} />
      ))}
    </>
  );
}

/// How many items are rendered at first; scrolling to the top renders more.
const WINDOW = 80;

/// `/create_task title="Buy milk" due=2026-11-23` or `/create_task {"title": "x"}`.
export function parseSlash(text: string): { name: string; args: Record<string, unknown> } | null {
  const m = text.trim().match(/^\/([\w.-]+)\s*(.*)$/s);
  if (!m) return null;
  const rest = m[2].trim();
  if (rest.startsWith("{")) return { name: m[1], args: JSON.parse(rest) };
  const args: Record<string, unknown> = {};
  for (const pair of rest.matchAll(/([\w-]+)=("(?:[^"\\]|\\.)*"|\S+)/g)) {
    const raw = pair[2];
    try {
      args[pair[1]] = JSON.parse(raw);
    } catch {
      args[pair[1]] = raw;
    }
  }
  return { name: m[1], args };
}

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

function Card({ card }: { card: ToolCard }) {
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
      {card.failure === "denied" && card.status === "error" ? (
        <p class="card-result refused" data-testid="card-refused">
          {t("notAllowed")}
        </p>
      ) : (
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
        ))
      )}
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

export function Chat({
  conversation,
  firstRun,
  onConversation,
  onSettings,
  onProviderSaved,
}: {
  conversation: string | null;
  firstRun: FirstRun | null;
  onConversation: (id: string) => void;
  onSettings: () => void;
  onProviderSaved: () => void;
}) {
  const [items, setItems] = useState<Item[]>([]);
  const [input, setInput] = useState("");
  const [running, setRunning] = useState(false);
  // The last failure, with what the person can do about it (a button under the error).
  const [failure, setFailure] = useState<{ text: string; remedy: Remedy | null } | null>(null);
  const setError = (text: string | null, remedy: Remedy | null = null) =>
    setFailure(text === null ? null : { text, remedy });
  const [attachments, setAttachments] = useState<Part[]>([]);
  const [editing, setEditing] = useState<{ mid: number; text: string } | null>(null);
  const [settings, setSettings] = useState<ConversationSettings>({ allTools: false });
  const [models, setModels] = useState<string[]>([]);
  const [personas, setPersonas] = useState<string[]>([]);
  const [compacting, setCompacting] = useState(false);
  const [systemOpen, setSystemOpen] = useState(false);
  const [shownFrom, setShownFrom] = useState(0);
  const current = useRef<string | null>(conversation);
  const bottom = useRef<HTMLDivElement>(null);
  const list = useRef<HTMLDivElement>(null);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const [micBusy, setMicBusy] = useState(false);
  const listening = useRef(false);
  const latest = useRef<{ items: Item[]; input: string }>({ items: [], input: "" });
  latest.current = { items, input };
  // Streamed text waits here and lands once per frame: one render per frame, not per chunk.
  const pending = useRef("");
  const frame = useRef(0);

  const show = (next: Item[]) => {
    setItems(next);
    setShownFrom(Math.max(0, next.length - WINDOW));
  };
  const reload = (id = current.current, merge = false) => {
    if (!id) return;
    api
      .getThread(id)
      .then((th) => {
        if (id !== current.current) return;
        const stored = toItems(th.messages, th.compactions);
        if (merge) setItems((shown) => withStoredMeta(shown, stored));
        else show(stored);
        setSettings(th.settings);
      })
      .catch((e) => setError(String(e)));
  };
  useEffect(() => {
    current.current = conversation;
    announced.current = conversation;
    setError(null);
    setEditing(null);
    if (conversation && !running) reload(conversation);
    if (!conversation) {
      show([]);
      setSettings({ allTools: false });
    }
    inputRef.current?.focus();
  }, [conversation]);
  // The launch benchmark's finish line: the input exists and has the focus.
  useEffect(() => {
    inputRef.current?.focus();
    api.uiReady().catch(() => {});
  }, []);
  useEffect(() => {
    api
      .getAgentSettings()
      .then((a) => setPersonas((a?.personas ?? []).map((p) => p.name)))
      .catch(() => {});
  }, []);
  // Follows the end as items come, and times each streamed update up to its layout (the
  // scroll forces it): `cowork:stream-update` entries, read by the rendering benchmark.
  const flushed = useRef(false);
  useLayoutEffect(() => {
    bottom.current?.scrollIntoView({ block: "end" });
    if (flushed.current) {
      flushed.current = false;
      if (performance.getEntriesByName("cowork:stream-update").length > 5000)
        performance.clearMeasures("cowork:stream-update");
      performance.measure("cowork:stream-update", "cowork:flush");
      performance.clearMarks("cowork:flush");
    }
  }, [items]);
  const flush = () => {
    frame.current = 0;
    const text = pending.current;
    pending.current = "";
    if (!text) return;
    performance.mark("cowork:flush");
    flushed.current = true;
    setItems((list) => {
      const next = [...list];
      const last = next[next.length - 1];
      if (last?.kind === "assistant") next[next.length - 1] = { ...last, text: last.text + text };
      else next.push({ kind: "assistant", text, key: newKey() });
      return next;
    });
  };
  useEffect(() => {
    const a = on("agent-event", ({ conversation: c, event }) => {
      if (c !== current.current) return;
      if (event.type === "text_delta") {
        pending.current += event.text;
        if (!frame.current) frame.current = requestAnimationFrame(flush);
        return;
      }
      flush();
      // A turn the app started (going on after a login) shows its spinner too.
      if (event.type === "resumed") setRunning(true);
      if (event.type === "compacting") {
        setCompacting(true);
        return;
      }
      if (event.type === "compacted") setCompacting(false);
      setItems((list) => {
        const next = [...list];
        if (event.type === "tool_call_requested") {
          next.push({ kind: "tool", card: { id: event.id, name: event.name, input: event.input, status: "running" } });
        } else if (event.type === "resumed") {
          // The turn goes on after a task that waited for the person: a new stretch, not more
          // of the message before it.
          next.push({ kind: "resumed", tool: event.tool, key: newKey() });
        } else if (event.type === "recalled") {
          // Which memories the model was given for this turn, under the person's message.
          next.push({ kind: "recalled", memories: event.memories, key: newKey() });
        } else if (event.type === "compacted") {
          next.push({ kind: "compacted", compaction: event.compaction, key: `c${event.compaction.id}` });
        } else if (event.type === "tool_call_finished") {
          return next.map((it) =>
            it.kind === "tool" && it.card.id === event.id
              ? {
                  kind: "tool",
                  card: {
                    ...it.card,
                    status: finished(event.ok, event.suspended),
                    suspended: event.suspended,
                    result: event.result,
                    structured: event.structured,
                    images: event.images,
                    duration_ms: event.duration_ms,
                  },
                }
              : it,
          );
        }
        return next;
      });
    });
    const d = on("agent-done", ({ conversation: c, error: e, remedy: r }) => {
      if (c !== current.current) return;
      flush();
      setRunning(false);
      setCompacting(false);
      if (e) setError(e, r);
      const last = latest.current.items[latest.current.items.length - 1];
      if (!e && last?.kind === "assistant") {
        api
          .getVoiceSettings()
          .then((v) => {
            if (v.readAloud) readAloud(last.text, c);
          })
          .catch(() => {});
      }
      // The stored branch: ids for edit/regenerate, siblings, usage.
      reload(c, true);
    });
    // The scheduler's events carry its own call ids; `started` ties one to our card id.
    const cardOf = new Map<string, string>();
    const p = on("tool-event", (event) => {
      if (event.type === "started" && event.caller_ref) cardOf.set(event.call_id, event.caller_ref);
      else if (event.type === "progress") {
        const id = cardOf.get(event.call_id);
        if (id)
          setItems((list) =>
            list.map((it) =>
              it.kind === "tool" && it.card.id === id
                ? { kind: "tool", card: { ...it.card, progress: event.progress } }
                : it,
            ),
          );
      } else if (event.type === "completed" || event.type === "failed") {
        // A call its review stopped never started: its failure names the card itself.
        const id = cardOf.get(event.call_id) ?? (event.type === "failed" ? event.caller_ref : undefined);
        if (id && event.type === "failed") {
          const failure = event.error_kind;
          setItems((list) =>
            list.map((it) =>
              it.kind === "tool" && it.card.id === id ? { kind: "tool", card: { ...it.card, failure } } : it,
            ),
          );
        }
        cardOf.delete(event.call_id);
      }
    });
    // A waiting card whose task went on by itself shows what the resumed call returned.
    const r = on("task-resumed", ({ id, call }) => {
      setItems((list) =>
        list.map((it) =>
          it.kind === "tool" && it.card.status === "waiting" && it.card.suspended === id
            ? {
                kind: "tool",
                card: {
                  ...it.card,
                  status: finished(call.ok, call.suspended),
                  suspended: call.suspended,
                  result: call.text,
                  images: call.images,
                  duration_ms: call.duration_ms,
                },
              }
            : it,
        ),
      );
    });
    return () => {
      a.then((f) => f());
      d.then((f) => f());
      p.then((f) => f());
      r.then((f) => f());
    };
  }, []);

  /// A conversation's id, made here for a new chat: a turn's first events can arrive before
  /// the command returns, and events of an unknown conversation are dropped.
  const ensureId = () => {
    const id = current.current ?? crypto.randomUUID?.() ?? `c-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    current.current = id;
    return id;
  };
  /// The app learns of a new chat once something of it is stored (a message, its settings) —
  /// not when an attachment merely gave it an id.
  const announced = useRef<string | null>(conversation);
  const announce = (id: string) => {
    if (announced.current !== id) {
      announced.current = id;
      onConversation(id);
    }
  };

  const submit = async (given?: string) => {
    const text = (given ?? input).trim();
    if ((!text && attachments.length === 0) || running) return;
    setError(null);
    const slash =
      text.startsWith("/") && attachments.length === 0
        ? (() => {
            try {
              return parseSlash(text);
            } catch (e) {
              setError(String(e));
              return undefined;
            }
          })()
        : null;
    if (slash === undefined) return;
    setInput("");
    if (slash) {
      const card: ToolCard = { id: `palette-${Date.now()}`, name: slash.name, input: slash.args, status: "running" };
      setItems((l) => [...l, { kind: "user", text, key: newKey() }, { kind: "tool", card }]);
      const view = await api
        .callTool(slash.name, slash.args as Value, current.current ?? "palette", card.id)
        .catch((e) => ({ ok: false, suspended: null, text: String(e), structured: null, images: [], duration_ms: 0 }));
      setItems((l) =>
        l.map((it) =>
          it.kind === "tool" && it.card.id === card.id
            ? {
                kind: "tool",
                card: {
                  ...card,
                  status: finished(view.ok, view.suspended),
                  suspended: view.suspended,
                  result: view.text,
                  structured: view.structured,
                  images: view.images,
                  duration_ms: view.duration_ms,
                },
              }
            : it,
        ),
      );
      return;
    }
    const sent = attachments;
    setAttachments([]);
    setItems((l) => [...l, { kind: "user", text, attachments: sent, key: newKey() }]);
    setRunning(true);
    const id = ensureId();
    try {
      await api.sendMessage(id, text, sent);
      announce(id);
    } catch (e) {
      setRunning(false);
      setError(String(e));
    }
  };

  const run = async (what: () => Promise<unknown>) => {
    setError(null);
    setRunning(true);
    try {
      await what();
    } catch (e) {
      setRunning(false);
      setError(String(e));
    }
  };
  const saveEdit = (mid: number, text: string) => {
    const c = current.current;
    if (!c || running || !text.trim()) return;
    setEditing(null);
    setItems((l) => {
      const at = l.findIndex((it) => it.kind === "user" && it.mid === mid);
      return at < 0 ? l : [...l.slice(0, at), { kind: "user", text, key: newKey() }];
    });
    run(() => api.editMessage(c, mid, text, []));
  };
  const regenerate = (mid: number) => {
    const c = current.current;
    if (!c || running) return;
    setItems((l) => {
      const at = l.findIndex((it) => it.kind === "assistant" && it.mid === mid);
      return at < 0 ? l : l.slice(0, at);
    });
    run(() => api.regenerate(c, mid));
  };
  // A model server found on this computer, taken with its first model in one click.
  const useLocal = async (found: LocalServer) => {
    try {
      await api.saveAgentSettings({
        provider: "openai",
        baseUrl: found.baseUrl,
        model: found.models[0],
        apiKeyEnv: "",
      });
      onProviderSaved();
    } catch (e) {
      setError(String(e));
    }
  };
  // Asks again for the person's last message (its turn failed before an answer was stored).
  const retry = () => {
    const c = current.current;
    const asked = [...items].reverse().find((it) => it.kind === "user" && it.mid !== undefined);
    if (!c || running || !asked || asked.kind !== "user") return;
    run(() => api.regenerate(c, asked.mid!));
  };
  const switchTo = async (mid: number) => {
    const c = current.current;
    if (!c || running) return;
    await api.switchBranch(c, mid).catch((e) => setError(String(e)));
    reload(c);
  };
  const saveSettings = async (next: ConversationSettings) => {
    const id = ensureId();
    setSettings(next);
    await api.saveConversationSettings(id, next).catch((e) => setError(String(e)));
    announce(id);
  };

  // Attachments: picked (the desktop's chooser), dropped (paths), pasted (bytes).
  const addParts = (parts: Part[]) => setAttachments((a) => [...a, ...parts].slice(0, 10));
  const attachPaths = async (paths: string[]) => {
    const id = ensureId();
    for (const path of paths) {
      try {
        addParts([await api.attachPath(id, path)]);
      } catch (e) {
        setError(String(e));
      }
    }
  };
  const attachBlobs = async (files: File[]) => {
    for (const file of files) {
      const data = await new Promise<string>((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
        reader.onerror = () => reject(reader.error);
        reader.readAsDataURL(file);
      });
      const name = file.name || `pasted-${Date.now()}.${(file.type.split("/")[1] ?? "png").replace("jpeg", "jpg")}`;
      try {
        addParts([await api.attachPasted(name, data)]);
      } catch (e) {
        setError(String(e));
      }
    }
  };
  useEffect(() => {
    let unlisten: (() => void) | undefined;
    import("@tauri-apps/api/webview")
      .then(({ getCurrentWebview }) =>
        getCurrentWebview().onDragDropEvent((e) => {
          if (e.payload.type === "drop" && e.payload.paths.length) attachPaths(e.payload.paths);
        }),
      )
      .then((f) => {
        unlisten = f;
      })
      .catch(() => {});
    return () => unlisten?.();
  }, []);
  const openModels = () => {
    if (!models.length)
      api
        .listModels()
        .then(setModels)
        .catch((e) => setError(String(e)));
  };

  // The microphone: the words land in the input for review (or are sent, as the settings say).
  const listen = async () => {
    if (listening.current) {
      api.voiceStop();
      return;
    }
    listening.current = true;
    setMicBusy(true);
    setError(null);
    try {
      const heard = await listenOnce(current.current ?? "voice");
      if (!heard) {
        setError(t("noSpeech"));
        return;
      }
      const text = [latest.current.input.trim(), heard].filter(Boolean).join(" ");
      const settings = await api.getVoiceSettings().catch(() => null);
      if (settings?.autoSend) await submit(text);
      else {
        setInput(text);
        inputRef.current?.focus();
      }
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      listening.current = false;
      setMicBusy(false);
    }
  };
  // Hold Ctrl+Space to talk; letting go ends the recording. Esc stops listening and speech.
  useEffect(() => {
    const down = (e: KeyboardEvent) => {
      if (e.key === "Escape") api.voiceStop().catch(() => {});
      if (e.ctrlKey && e.code === "Space" && !e.repeat && !listening.current) {
        e.preventDefault();
        listen();
      }
    };
    const up = (e: KeyboardEvent) => {
      if (listening.current && (e.code === "Space" || e.key === "Control")) api.voiceStop().catch(() => {});
    };
    window.addEventListener("keydown", down);
    window.addEventListener("keyup", up);
    return () => {
      window.removeEventListener("keydown", down);
      window.removeEventListener("keyup", up);
    };
  }, []);

  const waiting = running && ["user", "recalled", "resumed"].includes(items[items.length - 1]?.kind ?? "");
  // The last answer of each turn carries the turn's actions.
  const lastOfTurn = new Set<number>();
  items.forEach((it, i) => {
    if (
      it.kind === "assistant" &&
      !items.slice(i + 1).some((n) => (n.kind === "assistant" || n.kind === "user" ? n.kind === "assistant" : false))
    )
      lastOfTurn.add(i);
  });
  const firstAnswerOf = (i: number): number | undefined => {
    for (let j = i; j >= 0; j--) {
      const it = items[j];
      if (it.kind === "user") {
        const a = items.slice(j + 1).find((n) => n.kind === "assistant" && n.mid !== undefined);
        return a?.kind === "assistant" ? a.mid : undefined;
      }
    }
    return undefined;
  };
  const copy = (text: string) => navigator.clipboard?.writeText(text).catch(() => {});
  const onScroll = () => {
    if (list.current && list.current.scrollTop < 200 && shownFrom > 0) setShownFrom((n) => Math.max(0, n - WINDOW));
  };
  return (
    <section
      class="chat"
      onPaste={(e) => {
        const files = [...(e.clipboardData?.files ?? [])];
        if (files.length) {
          e.preventDefault();
          attachBlobs(files);
        }
      }}
    >
      <WorkspaceBar conversation={conversation} />
      <div class="chat-bar" data-testid="chat-bar">
        <select
          data-testid="chat-model"
          aria-label={t("model")}
          value={settings.model ?? ""}
          onFocus={openModels}
          onMouseDown={openModels}
          onMouseEnter={openModels}
          onChange={(e) => saveSettings({ ...settings, model: e.currentTarget.value || null })}
        >
          <option value="">{t("defaultModel")}</option>
          {[...new Set([...(settings.model ? [settings.model] : []), ...models])].map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <select
          data-testid="chat-persona"
          aria-label={t("persona")}
          value={settings.persona ?? ""}
          onChange={(e) => saveSettings({ ...settings, persona: e.currentTarget.value || null })}
        >
          <option value="">{t("defaultPersona")}</option>
          {personas.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
        <button
          type="button"
          data-testid="system-prompt"
          aria-pressed={systemOpen}
          class={settings.system ? "set" : ""}
          onClick={() => setSystemOpen(!systemOpen)}
          title={t("systemPromptHint")}
        >
          {t("systemPrompt")}
        </button>
        <label class="check" title={t("allToolsHint")}>
          <input
            type="checkbox"
            checked={settings.allTools}
            onChange={(e) => saveSettings({ ...settings, allTools: e.currentTarget.checked })}
          />{" "}
          {t("allTools")}
        </label>
        <span class="spacer" />
        {conversation && (
          <button
            type="button"
            data-testid="compact"
            disabled={running}
            onClick={() => run(() => api.compactConversation(conversation))}
            title={t("compactHint")}
          >
            {t("compact")}
          </button>
        )}
        {conversation && (
          <button
            type="button"
            data-testid="export"
            onClick={() => api.saveExport(conversation).catch((e) => setError(String(e)))}
          >
            {t("export")}
          </button>
        )}
        {conversation && (
          <button
            type="button"
            data-testid="copy-markdown"
            onClick={() =>
              api
                .exportConversation(conversation)
                .then(copy)
                .catch((e) => setError(String(e)))
            }
          >
            {t("copyMarkdown")}
          </button>
        )}
      </div>
      {systemOpen && (
        <div class="chat-system">
          <textarea
            data-testid="system-input"
            rows={3}
            placeholder={t("systemPromptHint")}
            value={settings.system ?? ""}
            onInput={(e) => setSettings({ ...settings, system: e.currentTarget.value || null })}
            onBlur={(e) => saveSettings({ ...settings, system: e.currentTarget.value.trim() || null })}
          />
        </div>
      )}
      {firstRun && !firstRun.provider_configured && (
        <div class="banner" data-testid="first-run">
          <p>{t("noProvider")}</p>
          {firstRun.provider_error && <p class="error">{firstRun.provider_error}</p>}
          {firstRun.local_servers.map(
            (found) =>
              found.models.length > 0 && (
                <button
                  type="button"
                  key={found.baseUrl}
                  class="primary"
                  data-testid="use-local-server"
                  onClick={() => useLocal(found)}
                >
                  {t("useLocal")} {found.name} · {found.models[0]}
                </button>
              ),
          )}
          <button type="button" class={firstRun.local_servers.length ? "" : "primary"} onClick={onSettings}>
            {t("addProvider")}
          </button>
        </div>
      )}
      <div class="messages" aria-live="polite" ref={list} onScroll={onScroll} data-testid="messages">
        {items.length === 0 && (
          <EmptyChat
            onPick={(q) => {
              setInput(q);
              inputRef.current?.focus();
            }}
          />
        )}
        {shownFrom > 0 && (
          <button
            type="button"
            class="earlier"
            data-testid="show-earlier"
            onClick={() => setShownFrom((n) => Math.max(0, n - WINDOW))}
          >
            {t("showEarlier")} ({shownFrom})
          </button>
        )}
        {items.slice(shownFrom).map((it, k) => {
          const i = k + shownFrom;
          if (it.kind === "tool") return <Card key={it.card.id} card={it.card} />;
          if (it.kind === "user")
            return editing && editing.mid === it.mid ? (
              <div key={it.key ?? i} class="msg user editing">
                <textarea
                  data-testid="edit-input"
                  value={editing.text}
                  rows={3}
                  onInput={(e) => setEditing({ mid: editing.mid, text: e.currentTarget.value })}
                  onKeyDown={(e) => {
                    if (e.key === "Enter" && !e.shiftKey) {
                      e.preventDefault();
                      saveEdit(editing.mid, e.currentTarget.value);
                    }
                    if (e.key === "Escape") setEditing(null);
                  }}
                />
                <div class="msg-actions">
                  <button
                    type="button"
                    class="primary"
                    data-testid="edit-send"
                    onClick={() => saveEdit(editing.mid, editing.text)}
                  >
                    {t("send")}
                  </button>
                  <button type="button" onClick={() => setEditing(null)}>
                    {t("cancel")}
                  </button>
                </div>
              </div>
            ) : (
              <div key={it.key ?? i} class="msg user" data-testid="user-message" data-mid={it.mid}>
                {it.attachments && it.attachments.length > 0 && (
                  <div class="attachments">
                    {it.attachments.map((p, n) => (
                      <AttachmentChip key={n} part={p} />
                    ))}
                  </div>
                )}
                {it.text}
                {it.mid !== undefined && (
                  <div class="msg-actions">
                    <BranchSwitch mid={it.mid} siblings={it.siblings ?? []} onSwitch={switchTo} />
                    <button
                      type="button"
                      class="icon"
                      title={t("copy")}
                      aria-label={t("copy")}
                      onClick={() => copy(it.text)}
                    >
                      <Icon name="copy" />
                    </button>
                    <button
                      type="button"
                      class="icon"
                      data-testid="edit"
                      title={t("editResend")}
                      aria-label={t("editResend")}
                      disabled={running}
                      onClick={() => setEditing({ mid: it.mid!, text: it.text })}
                    >
                      <Icon name="edit" />
                    </button>
                  </div>
                )}
              </div>
            );
          if (it.kind === "resumed")
            return (
              <div key={it.key ?? i} class="resumed-mark" data-testid="resumed-mark">
                ↻ {t("wentOn")} ({it.tool})
              </div>
            );
          if (it.kind === "recalled")
            return (
              <div
                key={it.key ?? i}
                class="recalled"
                data-testid="recalled"
                title={it.memories.map((m) => m.snippet.replace(/\*\*/g, "")).join("\n")}
              >
                {t("recalled")}:{" "}
                {it.memories.map((m) => (
                  <span key={m.id} class="tag" data-id={m.id}>
                    {m.title}
                  </span>
                ))}
              </div>
            );
          if (it.kind === "usage") return <UsageLine key={it.key ?? i} usage={it.usage} />;
          if (it.kind === "compacted")
            return (
              <details key={it.key ?? i} class="compacted" data-testid="compacted">
                <summary>
                  {t("compacted")}: {it.compaction.messages} {t("messagesSummarized")} ·{" "}
                  {it.compaction.tokens_before.toLocaleString()} → {it.compaction.tokens_after.toLocaleString()}{" "}
                  {t("tokens")}
                </summary>
                <div class="markdown">
                  <MarkdownBlocks text={it.compaction.summary} />
                </div>
              </details>
            );
          const answer = firstAnswerOf(i);
          const first = answer !== undefined && it.mid === answer;
          return (
            <div key={it.key ?? i} class="msg assistant" data-testid="assistant-message" data-mid={it.mid}>
              <div class="markdown">
                <MarkdownBlocks text={it.text} />
              </div>
              {(lastOfTurn.has(i) || first) && !(running && i === items.length - 1) && (
                <div class="msg-actions">
                  {first && <BranchSwitch mid={it.mid!} siblings={it.siblings ?? []} onSwitch={switchTo} />}
                  <button
                    type="button"
                    class="icon"
                    title={t("copy")}
                    aria-label={t("copy")}
                    onClick={() => copy(it.text)}
                  >
                    <Icon name="copy" />
                  </button>
                  {answer !== undefined && (
                    <button
                      type="button"
                      class="icon"
                      data-testid="regenerate"
                      title={t("regenerate")}
                      aria-label={t("regenerate")}
                      disabled={running}
                      onClick={() => regenerate(answer)}
                    >
                      <Icon name="regenerate" />
                    </button>
                  )}
                </div>
              )}
            </div>
          );
        })}
        {compacting && (
          <div class="msg assistant thinking" data-testid="compacting">
            <span class="spinner" /> {t("compacting")}
          </div>
        )}
        {waiting && !compacting && (
          <div class="msg assistant thinking">
            <span class="spinner" /> {t("thinking")}
          </div>
        )}
        {failure && (
          <div class="msg error" role="alert" data-testid="turn-error">
            {failure.text}
            {failure.remedy && (
              <div class="error-actions">
                {failure.remedy === "retry" && (
                  <button type="button" data-testid="retry" onClick={retry} disabled={running}>
                    {t("retry")}
                  </button>
                )}
                {failure.remedy === "open_settings" && (
                  <button type="button" data-testid="open-settings" onClick={onSettings}>
                    {t("openSettings")}
                  </button>
                )}
              </div>
            )}
          </div>
        )}
        <div ref={bottom} />
      </div>
      {attachments.length > 0 && (
        <div class="attachments pending" data-testid="pending-attachments">
          {attachments.map((p, n) => (
            <AttachmentChip key={n} part={p} onRemove={() => setAttachments((a) => a.filter((_, m) => m !== n))} />
          ))}
        </div>
      )}
      <div class="composer">
        <button
          type="button"
          class="attach"
          data-testid="attach"
          title={t("attach")}
          aria-label={t("attach")}
          onClick={() =>
            api
              .pickFiles()
              .then(attachPaths)
              .catch((e) => setError(String(e)))
          }
        >
          <Icon name="attach" />
        </button>
        <input
          type="file"
          multiple
          hidden
          data-testid="attach-input"
          onChange={(e) => {
            const files = [...(e.currentTarget.files ?? [])];
            e.currentTarget.value = "";
            attachBlobs(files);
          }}
        />
        <textarea
          ref={inputRef}
          data-testid="chat-input"
          rows={2}
          placeholder={t("placeholder")}
          value={input}
          onInput={(e) => setInput(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              submit(e.currentTarget.value);
            }
          }}
        />
        <button
          type="button"
          class={micBusy ? "mic on" : "mic"}
          data-testid="mic"
          aria-pressed={micBusy}
          title={micBusy ? t("stopListening") : t("micButton")}
          aria-label={micBusy ? t("stopListening") : t("micButton")}
          onClick={listen}
        >
          <svg
            viewBox="0 0 24 24"
            width="18"
            height="18"
            aria-hidden="true"
            fill="none"
            stroke="currentColor"
            stroke-width="2"
            stroke-linecap="round"
          >
            <rect x="9" y="3" width="6" height="11" rx="3" />
            <path d="M5 11a7 7 0 0 0 14 0M12 18v3" />
          </svg>
        </button>
        {running ? (
          <button type="button" class="stop" onClick={() => current.current && api.stopRun(current.current)}>
            {t("stop")}
          </button>
        ) : (
          <button type="button" class="primary" data-testid="send" onClick={() => submit()}>
            {t("send")}
          </button>
        )}
      </div>
    </section>
  );
}
