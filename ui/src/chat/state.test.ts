// The chat's state changes, checked without a page or a shell (plain assertions, no test
// framework): `npm test` in ui/ (the README's test command runs it).
import type { Part, ThreadMessage } from "../api";
import { firstAnswerOf, type Item, lastAnswer, type ToolCard, toItems } from "./items";
import { type Action, type ChatState, initialState, isWaiting, reduce, WINDOW } from "./state";

const cases: [string, () => void][] = [];
const test = (name: string, check: () => void) => cases.push([name, check]);

/// JSON with each object's keys in order, so equal values read the same.
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_, x) =>
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x,
  );
function equal(actual: unknown, expected: unknown, what = "value") {
  const [a, e] = [canonical(actual), canonical(expected)];
  if (a !== e) throw new Error(`${what}: got ${a}, expected ${e}`);
}

const after = (actions: Action[], from: ChatState = initialState) => actions.reduce(reduce, from);
/// The items without their page keys (made fresh for each live item).
const shown = (state: ChatState) => state.items.map(({ key: _, ...it }) => it);
const card = (id: string): ToolCard => ({ id, name: "create_task", input: {}, status: "running" });
const requested: Action = {
  type: "agent",
  event: { type: "tool_call_requested", id: "t1", name: "create_task", input: {} },
};
const finishedCall = (ok: boolean, suspended: string | null): Action => ({
  type: "agent",
  event: {
    type: "tool_call_finished",
    id: "t1",
    name: "create_task",
    call_id: "c1",
    ok,
    suspended,
    result: "done",
    images: [],
    structured: null,
    duration_ms: 5,
  },
});
const toolCard = (state: ChatState) => state.items.find((it) => it.kind === "tool")?.card;

test("streamed text goes on the answer being written, or starts one", () => {
  const s = after([
    { type: "streamed", text: "Hel" },
    { type: "streamed", text: "lo" },
  ]);
  equal(shown(s), [{ kind: "assistant", text: "Hello" }]);
  const t = after([requested, { type: "streamed", text: "next" }], s);
  equal(
    t.items.map((it) => it.kind),
    ["assistant", "tool", "assistant"],
  );
});

test("a tool call's card runs, then shows what it returned", () => {
  const s = after([requested]);
  equal(toolCard(s)?.status, "running");
  const done = after([finishedCall(true, null)], s);
  equal(toolCard(done), {
    ...card("t1"),
    status: "ok",
    suspended: null,
    result: "done",
    images: [],
    duration_ms: 5,
    structured: null,
  });
});

test("a suspended call waits, and its resumed task finishes it", () => {
  const s = after([requested, finishedCall(false, "s1")]);
  equal(toolCard(s)?.status, "waiting");
  const outcome = { ok: true, suspended: null, result: "went on", images: [], duration_ms: 9 };
  const resumed = after([{ type: "taskResumed", suspension: "s1", outcome }], s);
  equal([toolCard(resumed)?.status, toolCard(resumed)?.result], ["ok", "went on"]);
  // The structured output it had is kept (a resumed task brings none).
  equal(toolCard(resumed)?.structured, null);
});

test("the scheduler's progress and failure kind land on their card", () => {
  const progress = { progress: 2, total: 4, message: null };
  const s = after([
    requested,
    { type: "progress", card: "t1", progress },
    { type: "cardFailed", card: "t1", failure: "denied" },
  ]);
  equal([toolCard(s)?.progress, toolCard(s)?.failure], [progress, "denied"]);
  equal(
    after([{ type: "progress", card: "other", progress }], s).items,
    s.items.map((it) => it),
  );
});

test("a palette call shows the line and its card, then the card as sent with the result", () => {
  const sent = card("palette-1");
  const s = after([
    { type: "paletteCall", text: "/create_task", card: sent },
    { type: "cardFailed", card: "palette-1", failure: "denied" },
  ]);
  equal(
    s.items.map((it) => it.kind),
    ["user", "tool"],
  );
  const outcome = { ok: false, suspended: null, result: "no", images: [], duration_ms: 0, structured: null };
  const done = after([{ type: "paletteResult", card: sent, outcome }], s);
  equal(toolCard(done)?.failure, undefined, "the failure kind, which the card as sent has not");
  equal(toolCard(done)?.status, "error");
});

test("a message goes out with its attachments; the turn runs and waits for words", () => {
  const file: Part = { type: "file", name: "a.txt", text: "a", truncated_from: null } as Part;
  const s = after([
    { type: "attach", parts: [file] },
    { type: "sent", text: "hi", attachments: [file] },
  ]);
  equal([s.attachments, s.running, shown(s)], [[], true, [{ kind: "user", text: "hi", attachments: [file] }]]);
  equal(isWaiting(s), true);
  equal(isWaiting(after([{ type: "streamed", text: "…" }], s)), false);
});

test("the turn's end stops it and shows its error with the remedy", () => {
  const s = after([{ type: "started" }, { type: "agent", event: { type: "compacting" } }]);
  equal([s.running, s.compacting], [true, true]);
  const done = after([{ type: "done", error: "rate limited", remedy: "retry" }], s);
  equal([done.running, done.compacting, done.failure], [false, false, { text: "rate limited", remedy: "retry" }]);
  equal(after([{ type: "done", error: null, remedy: null }], s).failure, null);
});

test("a resumed turn runs and marks where it went on", () => {
  const s = after([{ type: "agent", event: { type: "resumed", suspension: "s1", tool: "browser_open" } }]);
  equal([s.running, shown(s)], [true, [{ kind: "resumed", tool: "browser_open" }]]);
});

test("a command that fails to start a turn shows why", () => {
  const s = after([{ type: "started" }, { type: "notStarted", error: "no provider" }]);
  equal([s.running, s.failure], [false, { text: "no provider", remedy: null }]);
});

const branch: Item[] = [
  { kind: "user", text: "one", mid: 1, key: "m1" },
  { kind: "assistant", text: "first", mid: 2, key: "m2" },
  { kind: "user", text: "two", mid: 3, key: "m3" },
  { kind: "assistant", text: "second", mid: 4, key: "m4" },
];

test("an edit replaces the message and what followed; a regeneration cuts at the answer", () => {
  const s = after([
    { type: "show", items: branch },
    { type: "edit", editing: { mid: 3, text: "deux" } },
  ]);
  const edited = after([{ type: "edited", mid: 3, text: "deux" }], s);
  equal([edited.editing, shown(edited).map((it) => it.kind === "user" && it.text)], [null, ["one", false, "deux"]]);
  equal(after([{ type: "regenerating", mid: 2 }], s).items.length, 1);
  equal(after([{ type: "regenerating", mid: 99 }], s).items, s.items);
});

test("a long conversation renders its last items; scrolling up shows earlier ones", () => {
  const many: Item[] = Array.from({ length: WINDOW + 30 }, (_, i) => ({ kind: "user", text: `${i}`, key: `k${i}` }));
  const s = after([{ type: "show", items: many }]);
  equal(s.shownFrom, 30);
  equal(after([{ type: "showEarlier" }], s).shownFrom, 0);
});

test("at most ten attachments; one can be removed", () => {
  const part = (n: number) => ({ type: "file", name: `${n}` }) as Part;
  const s = after([{ type: "attach", parts: Array.from({ length: 12 }, (_, n) => part(n)) }]);
  equal(s.attachments.length, 10);
  equal(after([{ type: "detach", index: 0 }], s).attachments[0], part(1));
});

test("a new chat starts empty; another conversation keeps the items until its branch loads", () => {
  const s = after([
    { type: "show", items: branch },
    { type: "error", text: "x" },
  ]);
  equal(after([{ type: "opened", conversation: null }], s).items, []);
  const other = after([{ type: "opened", conversation: "c2" }], s);
  equal([other.items.length, other.failure], [4, null]);
});

test("the stored branch brings its ids onto the live items, keeping their keys", () => {
  const live: Item[] = [
    { kind: "user", text: "one", key: "live-a" },
    { kind: "assistant", text: "first", key: "live-b" },
  ];
  const stored: Item[] = [...branch.slice(0, 2), { kind: "usage", usage: { input_tokens: 1, output_tokens: 2 } }];
  const s = after([
    { type: "show", items: live },
    { type: "stored", items: stored },
  ]);
  equal(
    s.items.map((it) => [it.key, "mid" in it ? it.mid : it.kind]),
    [
      ["live-a", 1],
      ["live-b", 2],
      [undefined, "usage"],
    ],
  );
});

test("a stored branch becomes items: results on their calls, usage summed under the turn", () => {
  const messages = [
    { id: 1, role: "user", parts: [{ type: "text", text: "hi" }], siblings: [1] },
    {
      id: 2,
      role: "assistant",
      parts: [{ type: "tool_use", id: "t1", name: "create_task", input: {} }],
      siblings: [2],
      usage: { input_tokens: 10, output_tokens: 1, cost_usd: null },
    },
    {
      id: 3,
      role: "user",
      parts: [{ type: "tool_result", tool_use_id: "t1", content: "ok", is_error: false }],
      siblings: [3],
    },
    {
      id: 4,
      role: "assistant",
      parts: [{ type: "text", text: "Done." }],
      siblings: [4],
      usage: { input_tokens: 20, output_tokens: 2, cost_usd: 0.5 },
    },
  ] as unknown as ThreadMessage[];
  const items = toItems(messages);
  equal(
    items.map((it) => it.kind),
    ["user", "tool", "assistant", "usage"],
  );
  equal(items[1].kind === "tool" && items[1].card.status, "ok");
  equal(items[3].kind === "usage" && items[3].usage, { input_tokens: 30, output_tokens: 3, cost_usd: 0.5 });
});

test("the last answer and each turn's first carry the actions", () => {
  equal(lastAnswer(branch), 3);
  equal(lastAnswer([]), -1);
  equal([firstAnswerOf(branch, 1), firstAnswerOf(branch, 3)], [2, 4]);
});

let failed = 0;
for (const [name, check] of cases) {
  try {
    check();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e instanceof Error ? e.message : e}`);
  }
}
console.log(`${cases.length - failed} passed, ${failed} failed`);
if (failed) throw new Error(`${failed} of the chat's state tests failed`);
