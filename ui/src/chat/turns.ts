// What the person does to the conversation: send a message (or a `/tool` line), edit and send
// again, regenerate an answer, retry a failed turn, switch branches.
import type { Dispatch } from "preact/hooks";
import { api, type LocalServer, type Part, type Value } from "../api";
import type { Views } from "./appview";
import type { Conversation } from "./conversation";
import type { ToolCard } from "./items";
import { parseSlash } from "./slash";
import type { Action, ChatState } from "./state";

export type Turns = ReturnType<typeof useTurns>;

/// The chat's commands, for the state shown (`running`: a turn is under way, so none starts).
export function useTurns(
  state: ChatState,
  dispatch: Dispatch<Action>,
  conv: Conversation,
  setError: (e: string | null) => void,
  onProviderSaved: () => void,
) {
  const { current } = conv;
  const { running } = state;
  const submit = async (given?: string) => {
    const text = (given ?? state.input).trim();
    if ((!text && state.attachments.length === 0) || running) return;
    setError(null);
    const slash = readSlash(text, state.attachments, setError);
    if (slash === undefined) return;
    dispatch({ type: "input", text: "" });
    if (slash) await callPalette(text, slash, current.current, dispatch);
    else await send(text, state.attachments, dispatch, conv);
  };
  const run = async (what: () => Promise<unknown>) => {
    dispatch({ type: "started" });
    try {
      await what();
    } catch (e) {
      dispatch({ type: "notStarted", error: String(e) });
    }
  };
  const saveEdit = (mid: number, text: string) => {
    const c = current.current;
    if (!c || running || !text.trim()) return;
    dispatch({ type: "edited", mid, text });
    run(() => api.editMessage(c, mid, text, []));
  };
  const regenerate = (mid: number) => {
    const c = current.current;
    if (!c || running) return;
    dispatch({ type: "regenerating", mid });
    run(() => api.regenerate(c, mid));
  };
  // Asks again for the person's last message (its turn failed before an answer was stored).
  const retry = () => {
    const c = current.current;
    const asked = [...state.items].reverse().find((it) => it.kind === "user" && it.mid !== undefined);
    if (!c || running || !asked || asked.kind !== "user") return;
    run(() => api.regenerate(c, asked.mid!));
  };
  const switchTo = async (mid: number) => {
    const c = current.current;
    if (!c || running) return;
    await api.switchBranch(c, mid).catch((e) => setError(String(e)));
    conv.reload(c);
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
  const stop = () => current.current && api.stopRun(current.current);
  /** A tool a card's button calls (Undo): its card shows at the end, then what it returned. */
  const act = (name: string, args: Record<string, unknown>) =>
    callPalette(null, { name, args }, current.current, dispatch);
  const views: Views = {
    open: (server, resource) => api.openAppView(current.current ?? "palette", server, resource),
    // A message a view asks to add waits in the composer as the toolpack's words.
    message: async (server, text) => {
      const part = await api.appViewMessage(server, text);
      dispatch({ type: "attach", parts: [part] });
    },
  };
  return { submit, run, saveEdit, regenerate, retry, switchTo, useLocal, stop, act, views };
}

/// A `/tool` line (with nothing attached) as its call; `null` for a message, `undefined` when
/// its arguments do not parse (the error is shown).
function readSlash(text: string, attachments: Part[], setError: (e: string) => void) {
  if (!text.startsWith("/") || attachments.length > 0) return null;
  try {
    return parseSlash(text);
  } catch (e) {
    setError(String(e));
    return undefined;
  }
}

/// A tool called from the input: its card shows under the line, then what it returned.
async function callPalette(
  text: string | null,
  slash: { name: string; args: Record<string, unknown> },
  conversation: string | null,
  dispatch: Dispatch<Action>,
) {
  const card: ToolCard = { id: `palette-${Date.now()}`, name: slash.name, input: slash.args, status: "running" };
  dispatch({ type: "paletteCall", text, card });
  const view = await api.callTool(slash.name, slash.args as Value, conversation ?? "palette", card.id).catch((e) => ({
    ok: false,
    suspended: null,
    text: String(e),
    structured: null,
    images: [],
    app: null,
    duration_ms: 0,
  }));
  const { ok, suspended, text: result, structured, images, app, duration_ms } = view;
  dispatch({ type: "paletteResult", card, outcome: { ok, suspended, result, structured, images, app, duration_ms } });
}

/// The person's message and attachments, sent in this conversation (its id made now for a new
/// chat, which the app learns of once the message is stored).
async function send(text: string, attachments: Part[], dispatch: Dispatch<Action>, conv: Conversation) {
  dispatch({ type: "sent", text, attachments });
  const id = conv.ensureId();
  try {
    await api.sendMessage(id, text, attachments);
    conv.announce(id);
  } catch (e) {
    dispatch({ type: "notStarted", error: String(e) });
  }
}
