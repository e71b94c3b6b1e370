// The chat's state and every change to it, as one pure function: `reduce(state, action)`. The
// hooks turn events and clicks into actions; nothing here touches the page or the shell.
import type { AgentEvent, Part, Progress, Remedy } from "../api";
import { type Item, newKey, type Outcome, type ToolCard, withOutcome, withStoredMeta } from "./items";

/// How many items are rendered at first; scrolling to the top renders more.
export const WINDOW = 80;

/// The last failure, with what the person can do about it (a button under the error).
export type Failure = { text: string; remedy: Remedy | null };
/// A message of the person's being edited (to send again as a new branch).
export type Editing = { mid: number; text: string };

export interface ChatState {
  items: Item[];
  /** The first item rendered (the earlier ones wait for a scroll to the top). */
  shownFrom: number;
  input: string;
  attachments: Part[];
  editing: Editing | null;
  /** A turn (or a command that starts one) is under way. */
  running: boolean;
  /** Older turns are being summarized. */
  compacting: boolean;
  failure: Failure | null;
}

export const initialState: ChatState = {
  items: [],
  shownFrom: 0,
  input: "",
  attachments: [],
  editing: null,
  running: false,
  compacting: false,
  failure: null,
};

export type Action =
  /** Another conversation (or a new chat, `null`) is opened. */
  | { type: "opened"; conversation: string | null }
  /** A stored branch replaces what is shown; the window of rendered items moves to its end. */
  | { type: "show"; items: Item[] }
  /** A turn's end: the stored ids, siblings and usage brought onto what is shown. */
  | { type: "stored"; items: Item[] }
  | { type: "showEarlier" }
  | { type: "input"; text: string }
  /** An error to show (`null`: none any more). */
  | { type: "error"; text: string | null }
  /** Streamed text, gathered over a frame. */
  | { type: "streamed"; text: string }
  /** A step of the turn other than streamed text. */
  | { type: "agent"; event: Exclude<AgentEvent, { type: "text_delta" }> }
  | { type: "done"; error: string | null; remedy: Remedy | null }
  | { type: "progress"; card: string; progress: Progress }
  /** The scheduler's typed reason a card's call failed. */
  | { type: "cardFailed"; card: string; failure: string }
  /** A waiting card's task went on by itself and finished. */
  | { type: "taskResumed"; suspension: string; outcome: Outcome }
  /** A `/tool` typed in the input: the line as the person's message and the call's card. */
  /** A tool called from the input (`text`, shown as the person's line) or a card's button (`null`). */
  | { type: "paletteCall"; text: string | null; card: ToolCard }
  | { type: "paletteResult"; card: ToolCard; outcome: Outcome }
  /** The person's message went out, with what was attached. */
  | { type: "sent"; text: string; attachments: Part[] }
  /** A command that starts a turn was called, or failed to start one. */
  | { type: "started" }
  | { type: "notStarted"; error: string }
  | { type: "edit"; editing: Editing | null }
  /** An edited message replaces the one at `mid` and everything after it. */
  | { type: "edited"; mid: number; text: string }
  /** The answer at `mid` and everything after it make way for a new one. */
  | { type: "regenerating"; mid: number }
  | { type: "attach"; parts: Part[] }
  /** An attached resource read again (it changed on its server): the part of that name. */
  | { type: "reattach"; name: string; part: Part }
  | { type: "detach"; index: number };

/// At most this many attachments go with one message.
const MAX_ATTACHMENTS = 10;

export function reduce(state: ChatState, action: Action): ChatState {
  switch (action.type) {
    case "opened":
      return opened(state, action.conversation);
    case "show":
      return { ...state, items: action.items, shownFrom: Math.max(0, action.items.length - WINDOW) };
    case "stored":
      return { ...state, items: withStoredMeta(state.items, action.items) };
    case "showEarlier":
      return { ...state, shownFrom: Math.max(0, state.shownFrom - WINDOW) };
    case "input":
      return { ...state, input: action.text };
    case "error":
      return { ...state, failure: action.text === null ? null : { text: action.text, remedy: null } };
    case "streamed":
      return { ...state, items: withStreamed(state.items, action.text) };
    case "agent":
      return onAgentEvent(state, action.event);
    case "done":
      return done(state, action.error, action.remedy);
    case "progress":
      return { ...state, items: mapCard(state.items, action.card, (c) => ({ ...c, progress: action.progress })) };
    case "cardFailed":
      return { ...state, items: mapCard(state.items, action.card, (c) => ({ ...c, failure: action.failure })) };
    case "taskResumed":
      return { ...state, items: resumeTask(state.items, action.suspension, action.outcome) };
    default:
      return reduceAsked(state, action);
  }
}

/// What the person asked for: messages, palette calls, edits, attachments.
function reduceAsked(state: ChatState, action: Action): ChatState {
  switch (action.type) {
    case "paletteCall":
      return {
        ...state,
        items: [
          ...state.items,
          ...(action.text === null ? [] : [userItem(action.text)]),
          { kind: "tool", card: action.card },
        ],
      };
    case "paletteResult":
      // The card as it was sent, with what the call returned.
      return { ...state, items: mapCard(state.items, action.card.id, () => withOutcome(action.card, action.outcome)) };
    case "sent":
      return sent(state, action.text, action.attachments);
    case "started":
      return { ...state, failure: null, running: true };
    case "notStarted":
      return { ...state, running: false, failure: { text: action.error, remedy: null } };
    case "edit":
      return { ...state, editing: action.editing };
    case "edited":
      return { ...state, editing: null, items: cutAt(state.items, "user", action.mid, [userItem(action.text)]) };
    case "regenerating":
      return { ...state, items: cutAt(state.items, "assistant", action.mid, []) };
    case "attach":
      return { ...state, attachments: [...state.attachments, ...action.parts].slice(0, MAX_ATTACHMENTS) };
    case "reattach":
      return {
        ...state,
        attachments: state.attachments.map((p) => (p.type === "file" && p.name === action.name ? action.part : p)),
      };
    case "detach":
      return { ...state, attachments: state.attachments.filter((_, n) => n !== action.index) };
    default:
      return state;
  }
}

/// A new chat starts empty; an opened conversation keeps what is shown until its branch loads.
function opened(state: ChatState, conversation: string | null): ChatState {
  const next = { ...state, failure: null, editing: null };
  return conversation ? next : { ...next, items: [], shownFrom: 0 };
}

function userItem(text: string): Item {
  return { kind: "user", text, key: newKey() };
}

/// The person's message, with what was attached, went out: its turn runs.
function sent(state: ChatState, text: string, attachments: Part[]): ChatState {
  const items: Item[] = [...state.items, { kind: "user", text, attachments, key: newKey() }];
  return { ...state, attachments: [], items, running: true };
}

/// Streamed text goes on the answer being written, or starts one.
function withStreamed(items: Item[], text: string): Item[] {
  const next = [...items];
  const last = next[next.length - 1];
  if (last?.kind === "assistant") next[next.length - 1] = { ...last, text: last.text + text };
  else next.push({ kind: "assistant", text, key: newKey() });
  return next;
}

function onAgentEvent(state: ChatState, event: Exclude<AgentEvent, { type: "text_delta" }>): ChatState {
  switch (event.type) {
    // A turn the app started (going on after a login) shows its spinner too. The turn goes on
    // after a task that waited for the person: a new stretch, not more of the message before it.
    case "resumed":
      return {
        ...state,
        running: true,
        items: [...state.items, { kind: "resumed", tool: event.tool, key: newKey() }],
      };
    case "compacting":
      return { ...state, compacting: true };
    case "compacted": {
      const mark: Item = { kind: "compacted", compaction: event.compaction, key: `c${event.compaction.id}` };
      return { ...state, compacting: false, items: [...state.items, mark] };
    }
    case "tool_call_requested": {
      const card: ToolCard = { id: event.id, name: event.name, input: event.input, status: "running" };
      return { ...state, items: [...state.items, { kind: "tool", card }] };
    }
    // Which memories the model was given for this turn, under the person's message.
    case "recalled":
      return { ...state, items: [...state.items, { kind: "recalled", memories: event.memories, key: newKey() }] };
    case "tool_call_finished": {
      const { ok, suspended, result, structured, images, duration_ms, app } = event;
      const outcome: Outcome = { ok, suspended, result, structured, images, duration_ms, app };
      return { ...state, items: mapCard(state.items, event.id, (c) => withOutcome(c, outcome)) };
    }
    default:
      // Another step (usage, the end): the list renders again all the same, following the end.
      return { ...state, items: [...state.items] };
  }
}

/// The turn ended (with an error the person is shown, or none).
function done(state: ChatState, error: string | null, remedy: Remedy | null): ChatState {
  const next = { ...state, running: false, compacting: false };
  return error ? { ...next, failure: { text: error, remedy } } : next;
}

/// The tool card `id` changed by `change`; every other item as it is.
function mapCard(items: Item[], id: string, change: (card: ToolCard) => ToolCard): Item[] {
  return items.map((it) => (it.kind === "tool" && it.card.id === id ? { kind: "tool", card: change(it.card) } : it));
}

/// The cards waiting on suspension `id` finished with what the resumed call returned.
function resumeTask(items: Item[], id: string, outcome: Outcome): Item[] {
  return items.map((it) =>
    it.kind === "tool" && it.card.status === "waiting" && it.card.suspended === id
      ? { kind: "tool", card: withOutcome(it.card, outcome) }
      : it,
  );
}

/// The items before the `kind` message stored as `mid`, then `tail` (unchanged when not shown).
function cutAt(items: Item[], kind: "user" | "assistant", mid: number, tail: Item[]): Item[] {
  const at = items.findIndex((it) => it.kind === kind && it.mid === mid);
  return at < 0 ? items : [...items.slice(0, at), ...tail];
}

/// The turn waits for its first words (the person's message, recalled memories or a resume mark
/// are the last thing shown).
export function isWaiting(state: ChatState): boolean {
  return state.running && ["user", "recalled", "resumed"].includes(state.items[state.items.length - 1]?.kind ?? "");
}
