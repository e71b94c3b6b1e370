// The quick-ask window (the global shortcut, or the tray's "Quick ask…"): one question, its
// answer streamed, and "Open in chat" to go on in the full window. Asks the turn raises appear in
// the main window's modal (or as a notification), never here.
import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, on } from "./api";
import { t } from "./i18n";
import { renderMarkdown } from "./markdown";

/** The question's turn: its answer as it streams, its error, and the conversation it started
 * (the same one for the next question). Escape closes the window. */
function useQuickTurn(input: RefObject<HTMLTextAreaElement | null>) {
  const [answer, setAnswer] = useState("");
  const [conversation, setConversation] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState("");
  const current = useRef<string | null>(null);
  useEffect(() => {
    input.current?.focus();
    const a = on("agent-event", ({ conversation: c, event }) => {
      if (c === current.current && event.type === "text_delta") setAnswer((s) => s + event.text);
    });
    const d = on("agent-done", ({ conversation: c, error: e }) => {
      if (c !== current.current) return;
      setRunning(false);
      if (e) setError(e);
    });
    const keys = (e: KeyboardEvent) => {
      if (e.key === "Escape") api.closeQuickAsk();
    };
    window.addEventListener("keydown", keys);
    return () => {
      a.then((f) => f());
      d.then((f) => f());
      window.removeEventListener("keydown", keys);
    };
  }, []);
  /** Sends the question; true once it is sent. */
  const send = async (text: string) => {
    setAnswer("");
    setError("");
    setRunning(true);
    // The id is known before sending: the answer's first events can arrive before the call
    // returns, and would be dropped as another conversation's.
    const id = current.current ?? crypto.randomUUID();
    current.current = id;
    try {
      await api.sendMessage(id, text, []);
      setConversation(id);
      return true;
    } catch (e) {
      setRunning(false);
      setError(String(e));
      return false;
    }
  };
  return { answer, conversation, running, error, send };
}

export function QuickAsk() {
  const [question, setQuestion] = useState("");
  const input = useRef<HTMLTextAreaElement>(null);
  const { answer, conversation, running, error, send } = useQuickTurn(input);
  const ask = async (given = question) => {
    const text = given.trim();
    if (!text || running) return;
    if (await send(text)) setQuestion("");
  };
  return (
    <section class="quick" data-testid="quick-ask">
      <textarea
        ref={input}
        data-testid="quick-input"
        rows={2}
        placeholder={t("quickPlaceholder")}
        value={question}
        onInput={(e) => setQuestion(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            ask(e.currentTarget.value);
          }
        }}
      />
      {(answer || running) && (
        <div
          class="quick-answer markdown"
          data-testid="quick-answer"
          aria-live="polite"
          dangerouslySetInnerHTML={{ __html: answer ? renderMarkdown(answer) : "…" }}
        />
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="row">
        {conversation && (
          <button type="button" data-testid="open-in-chat" onClick={() => api.openInChat(conversation)}>
            {t("openInChat")}
          </button>
        )}
        <span class="hint">{t("quickHint")}</span>
      </div>
    </section>
  );
}
