// What the chat shows, as data: the display items of a conversation (messages, tool cards, marks)
// and how a stored branch becomes them.
import type { AppView, Compaction, Content, Part, Progress, ThreadMessage, TurnUsage } from "../api";

export interface ToolCard {
  id: string;
  name: string;
  input: unknown;
  status: "running" | "ok" | "error" | "waiting";
  suspended?: string | null;
  result?: string;
  structured?: unknown;
  images?: Content[];
  /** The toolpack's interactive view of the result (an MCP App), shown under it. */
  app?: AppView | null;
  duration_ms?: number;
  progress?: Progress;
  /** How it failed (the scheduler's typed error kind): said in the person's language above the
   * tool's own words. `denied` (the person or a rule said no) keeps its reason in the details. */
  failure?: string;
}

/// A finished call's card status: a suspended call waits for the person (the banner above).
export function finished(ok: boolean, suspended: string | null | undefined): ToolCard["status"] {
  return ok ? "ok" : suspended ? "waiting" : "error";
}

/// What a finished call brings to its card (from the turn's event, a resumed task, or a call
/// of the palette). A field left out keeps the card's own.
export type Outcome = {
  ok: boolean;
  suspended: string | null | undefined;
  result: string;
  images: Content[];
  duration_ms: number;
  structured?: unknown;
  app?: AppView | null;
};

/// The card once its call finished.
export function withOutcome(card: ToolCard, { ok, ...outcome }: Outcome): ToolCard {
  return { ...card, status: finished(ok, outcome.suspended), ...outcome };
}

export type Recalled = { id: string; title: string; kind: string; snippet: string };
/// Where a displayed message lives in the store: its id and its siblings (other branches).
export type Meta = { mid?: number; siblings?: number[]; attachments?: Part[] };
/// `key`: the item's identity for the list, kept when a turn's end brings the stored ids, so the
/// page keeps its nodes (and its scroll, selection, focus) instead of building them again.
export type Item = (
  | ({ kind: "user"; text: string } & Meta)
  | ({ kind: "assistant"; text: string } & Meta)
  | { kind: "tool"; card: ToolCard }
  | { kind: "recalled"; memories: Recalled[] }
  | { kind: "resumed"; tool: string }
  | { kind: "compacted"; compaction: Compaction }
  | { kind: "usage"; usage: TurnUsage }
) & { key?: string };
let lastKey = 0;
export const newKey = () => `live-${++lastKey}`;

const isMessage = (it: Item) => it.kind === "user" || it.kind === "assistant";
const followsMessage = (it: Item) => it.kind === "usage" || it.kind === "compacted";

/// The stored branch's ids, siblings and usage brought onto what the page shows after a turn
/// (its own items, recalled memories and resume marks included, stay as they are). When the
/// two differ in their messages (an edit, a regeneration), the stored branch is shown.
export function withStoredMeta(shown: Item[], stored: Item[]): Item[] {
  const a = shown.filter(isMessage);
  const b = stored.filter(isMessage);
  if (a.length !== b.length || a.some((it, i) => it.kind !== b[i].kind)) return stored;
  const pair = new Map<Item, Item>(a.map((it, i) => [it, b[i]]));
  const after = trailingItems(stored);
  const out: Item[] = [];
  for (const it of shown) {
    if (followsMessage(it)) continue;
    const s = pair.get(it);
    if (s && (s.kind === "user" || s.kind === "assistant") && (it.kind === "user" || it.kind === "assistant")) {
      out.push({ ...it, mid: s.mid, siblings: s.siblings, attachments: s.attachments ?? it.attachments } as Item);
      out.push(...(after.get(s) ?? []));
    } else out.push(it);
  }
  return out;
}

/// Each stored message's usage lines and compaction marks, the items that follow it.
function trailingItems(stored: Item[]): Map<Item, Item[]> {
  const after = new Map<Item, Item[]>();
  let previous: Item | null = null;
  for (const it of stored) {
    if (isMessage(it)) previous = it;
    else if (followsMessage(it) && previous) after.set(previous, [...(after.get(previous) ?? []), it]);
  }
  return after;
}

/// The branch shown → display items (tool uses paired with their results, compactions where
/// they cut, each turn's usage summed under its answer).
export function toItems(messages: ThreadMessage[], compactions: Compaction[] = []): Item[] {
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
    if (isPerson) {
      closeTurn();
      items.push(personItem(m, parts));
    }
    lastMid = m.id;
    placeParts(items, cards, m, parts, isPerson);
    if (m.usage) turn = addUsage(turn, m.usage);
    const cut = compactions.filter((c) => c.upto === m.id).pop();
    if (cut) {
      closeTurn();
      items.push({ kind: "compacted", compaction: cut, key: `c${cut.id}` });
    }
  }
  closeTurn();
  return items;
}

/// A message the person wrote: its text and what they attached.
function personItem(m: ThreadMessage, parts: Part[]): Item {
  const text = parts
    .filter((p) => p.type === "text")
    .map((p) => (p as { text: string }).text)
    .join("\n");
  return {
    kind: "user",
    text,
    mid: m.id,
    siblings: m.siblings,
    attachments: parts.filter((p) => p.type === "image" || p.type === "file"),
    key: `m${m.id}`,
  };
}

/// A message's answers, tool calls and results as items; the message's id and siblings go to
/// its first item (`placed`: the person's message already took them).
function placeParts(items: Item[], cards: Map<string, ToolCard>, m: ThreadMessage, parts: Part[], placed: boolean) {
  const meta: Meta = { mid: m.id, siblings: m.siblings };
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
        c.app = p.app;
      }
    }
  });
}

/// A turn's usage so far plus one model call's.
function addUsage(turn: TurnUsage | null, usage: TurnUsage): TurnUsage {
  const t: TurnUsage = turn ?? { input_tokens: 0, output_tokens: 0, cost_usd: null };
  return {
    input_tokens: t.input_tokens + usage.input_tokens,
    output_tokens: t.output_tokens + usage.output_tokens,
    cost_usd: usage.cost_usd != null || t.cost_usd != null ? (t.cost_usd ?? 0) + (usage.cost_usd ?? 0) : null,
  };
}

/// The conversation's last answer (its index; -1 when there is none): it carries the actions
/// (the first answer of each turn carries them too, with the branches).
export function lastAnswer(items: Item[]): number {
  for (let i = items.length - 1; i >= 0; i--) if (items[i].kind === "assistant") return i;
  return -1;
}

/// The stored id of the first answer to the person's message before item `i` (what
/// regenerating that turn replaces).
export function firstAnswerOf(items: Item[], i: number): number | undefined {
  for (let j = i; j >= 0; j--) {
    const it = items[j];
    if (it.kind === "user") {
      const a = items.slice(j + 1).find((n) => n.kind === "assistant" && n.mid !== undefined);
      return a?.kind === "assistant" ? a.mid : undefined;
    }
  }
  return undefined;
}
