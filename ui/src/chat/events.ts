// What the shell pushes while a turn runs (its steps, its end, the scheduler's progress of a
// call, a waiting task that went on), turned into the chat's actions.
import type { RefObject } from "preact";
import { type Dispatch, useEffect, useLayoutEffect, useRef } from "preact/hooks";
import { type AgentDone, api, on, type ToolEvent } from "../api";
import { readAloud } from "../voice";
import type { Action, ChatState } from "./state";

/// Streamed text waits here and lands once per frame: one render per frame, not per chunk.
/// `flushed`: an update of streamed text is on its way to the page (the time it takes is measured).
function useStreamBatch(dispatch: Dispatch<Action>) {
  const pending = useRef("");
  const frame = useRef(0);
  const flushed = useRef(false);
  const flush = () => {
    frame.current = 0;
    const text = pending.current;
    pending.current = "";
    if (!text) return;
    performance.mark("cowork:flush");
    flushed.current = true;
    dispatch({ type: "streamed", text });
  };
  const add = (text: string) => {
    pending.current += text;
    if (!frame.current) frame.current = requestAnimationFrame(flush);
  };
  return { add, flush, flushed };
}

/// The turn's events of the conversation shown, as actions; at its end, the answer read aloud
/// (when the settings say so) and the stored branch's ids brought onto the page.
export function useAgentEvents(
  current: RefObject<string | null>,
  dispatch: Dispatch<Action>,
  reload: (id: string, merge: boolean) => void,
  latest: RefObject<ChatState>,
): RefObject<boolean> {
  const stream = useStreamBatch(dispatch);
  useEffect(() => {
    const a = on("agent-event", ({ conversation: c, event }) => {
      if (c !== current.current) return;
      if (event.type === "text_delta") {
        stream.add(event.text);
        return;
      }
      stream.flush();
      dispatch({ type: "agent", event });
    });
    const d = on("agent-done", (done) => {
      if (done.conversation !== current.current) return;
      stream.flush();
      turnDone(done, dispatch, latest.current);
      // The stored branch: ids for edit/regenerate, siblings, usage.
      reload(done.conversation, true);
    });
    const p = on("tool-event", toolEvents(dispatch));
    // A waiting card whose task went on by itself shows what the resumed call returned.
    const r = on("task-resumed", ({ id, call }) => {
      const { ok, suspended, text: result, images, duration_ms } = call;
      dispatch({ type: "taskResumed", suspension: id, outcome: { ok, suspended, result, images, duration_ms } });
    });
    return () => {
      for (const unlisten of [a, d, p, r]) unlisten.then((f) => f());
    };
  }, []);
  return stream.flushed;
}

/// The turn ended: its error shown, or its last answer read aloud when the settings say so.
function turnDone({ conversation, error, remedy }: AgentDone, dispatch: Dispatch<Action>, shown: ChatState) {
  dispatch({ type: "done", error, remedy });
  const last = shown.items[shown.items.length - 1];
  if (!error && last?.kind === "assistant") {
    api
      .getVoiceSettings()
      .then((v) => {
        if (v.readAloud) readAloud(last.text, conversation);
      })
      .catch(() => {});
  }
}

/// The scheduler's events carry its own call ids; `started` ties one to our card id.
function toolEvents(dispatch: Dispatch<Action>): (event: ToolEvent) => void {
  const cardOf = new Map<string, string>();
  return (event) => {
    if (event.type === "started" && event.caller_ref) cardOf.set(event.call_id, event.caller_ref);
    else if (event.type === "progress") {
      const card = cardOf.get(event.call_id);
      if (card) dispatch({ type: "progress", card, progress: event.progress });
    } else if (event.type === "completed" || event.type === "failed") {
      // A call its review stopped never started: its failure names the card itself.
      const card = cardOf.get(event.call_id) ?? (event.type === "failed" ? event.caller_ref : undefined);
      if (card && event.type === "failed") dispatch({ type: "cardFailed", card, failure: event.error_kind });
      cardOf.delete(event.call_id);
    }
  };
}

/// Follows the end as items come, and times each streamed update up to its layout (the
/// scroll forces it): `cowork:stream-update` entries, read by the rendering benchmark.
export function useFollowEnd(items: unknown, flushed: RefObject<boolean>): RefObject<HTMLDivElement | null> {
  const bottom = useRef<HTMLDivElement>(null);
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
  return bottom;
}
