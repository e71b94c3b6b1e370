// Which conversation the chat shows, and loading its stored branch.
import type { RefObject } from "preact";
import { type Dispatch, useEffect, useRef, useState } from "preact/hooks";
import { api, type ConversationSettings } from "../api";
import { toItems } from "./items";
import type { Action } from "./state";

export type Conversation = {
  /** The conversation shown, read by the event listeners (another's events are dropped). */
  current: RefObject<string | null>;
  /** This chat's id, made now for a new chat. */
  ensureId: () => string;
  /** Tells the app of a new chat once something of it is stored. */
  announce: (id: string) => void;
  /** The stored branch of `id`, shown (or, `merge`, its ids brought onto what is shown). */
  reload: (id?: string | null, merge?: boolean) => void;
  settings: ConversationSettings;
  setSettings: (settings: ConversationSettings) => void;
};

const NO_SETTINGS: ConversationSettings = { allTools: false };

/// The conversation shown: its id (made here for a new chat), its stored branch and its
/// settings, loaded when another is opened (unless a turn still runs).
export function useConversation(
  conversation: string | null,
  onConversation: (id: string) => void,
  running: boolean,
  dispatch: Dispatch<Action>,
  setError: (e: string | null) => void,
): Conversation {
  const current = useRef<string | null>(conversation);
  const [settings, setSettings] = useState<ConversationSettings>(NO_SETTINGS);
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
  const reload = (id = current.current, merge = false) => {
    if (!id) return;
    api
      .getThread(id)
      .then((th) => {
        if (id !== current.current) return;
        const items = toItems(th.messages, th.compactions);
        dispatch(merge ? { type: "stored", items } : { type: "show", items });
        setSettings(th.settings);
      })
      .catch((e) => setError(String(e)));
  };
  useEffect(() => {
    current.current = conversation;
    announced.current = conversation;
    dispatch({ type: "opened", conversation });
    if (conversation && !running) reload(conversation);
    if (!conversation) setSettings(NO_SETTINGS);
  }, [conversation]);
  return { current, ensureId, announce, reload, settings, setSettings };
}
