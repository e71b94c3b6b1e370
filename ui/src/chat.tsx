import { useEffect, useRef, useState } from "preact/hooks";
import { WorkspaceBar } from "./desktop";
import { api, on, type FirstRun, type Message, type Part, type ImageBlock, type Content, type Value, type Progress } from "./api";
import { t } from "./i18n";
import { renderMarkdown } from "./markdown";
import { listenOnce, readAloud } from "./voice";
import { webCard } from "./web";

interface ToolCard { id: string; name: string; input: unknown; status: "running" | "ok" | "error" | "waiting"; suspended?: string | null; result?: string; structured?: unknown; images?: Content[]; duration_ms?: number; progress?: Progress }

/// Raster images only, as data URLs (no SVG: it can carry script and links).
const SHOWN_IMAGES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// A finished call's card status: a suspended call waits for the person (the banner above).
function finished(ok: boolean, suspended: string | null | undefined): ToolCard["status"] {
  return ok ? "ok" : suspended ? "waiting" : "error";
}
type Recalled = { id: string; title: string; kind: string; snippet: string };
type Item = { kind: "user"; text: string } | { kind: "assistant"; text: string } | { kind: "tool"; card: ToolCard } | { kind: "recalled"; memories: Recalled[] } | { kind: "resumed"; tool: string };

/// Persisted messages → display items (tool uses paired with their results).
function toItems(messages: Message[]): Item[] {
  const items: Item[] = [];
  const cards = new Map<string, ToolCard>();
  for (const m of messages) {
    for (const p of m.parts as Part[]) {
      if (p.type === "text" && p.text) items.push({ kind: m.role, text: p.text });
      if (p.type === "tool_use") { const card: ToolCard = { id: p.id, name: p.name, input: p.input, status: "running" }; cards.set(p.id, card); items.push({ kind: "tool", card }); }
      if (p.type === "tool_result") { const c = cards.get(p.tool_use_id); if (c) { c.status = finished(!p.is_error, p.suspended); c.suspended = p.suspended; c.result = p.content; c.structured = p.structured; } }
    }
  }
  return items;
}

/// `/create_task title="Buy milk" due=2026-11-23` or `/create_task {"title": "x"}`.
export function parseSlash(text: string): { name: string; args: Record<string, unknown> } | null {
  const m = text.trim().match(/^\/([\w.-]+)\s*(.*)$/s);
  if (!m) return null;
  const rest = m[2].trim();
  if (rest.startsWith("{")) return { name: m[1], args: JSON.parse(rest) };
  const args: Record<string, unknown> = {};
  for (const pair of rest.matchAll(/([\w-]+)=("(?:[^"\\]|\\.)*"|\S+)/g)) {
    const raw = pair[2];
    try { args[pair[1]] = JSON.parse(raw); } catch { args[pair[1]] = raw; }
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
      <button class="card-head" onClick={() => setOpen(!open)} aria-expanded={open}>
        <span class="status-dot" />{card.name}
        <span class="meta">{card.status === "running" ? <span class="spinner" aria-label={t("running")} /> : `${card.duration_ms ?? ""}${card.duration_ms !== undefined ? " ms" : ""}`}</span>
      </button>
      {card.status === "running" && card.progress && <ProgressLine progress={card.progress} />}
      {open && <pre class="card-body">{JSON.stringify(card.input, null, 2)}</pre>}
      {(card.status === "ok" && webCard(card.name, card.structured)) || (card.result !== undefined && <pre class="card-result">{card.result}</pre>)}
      {card.images?.filter((i): i is ImageBlock => i.type === "image" && SHOWN_IMAGES.includes(i.mime_type)).map((i, n) => (
        <img key={n} class="card-image" alt={`${card.name} ${n + 1}`} src={`data:${i.mime_type};base64,${i.data_base64}`} />
      ))}
    </div>
  );
}

export function Chat({ conversation, firstRun, onConversation, onSettings }: { conversation: string | null; firstRun: FirstRun | null; onConversation: (id: string) => void; onSettings: () => void }) {
  const [items, setItems] = useState<Item[]>([]);
  const [input, setInput] = useState("");
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const current = useRef<string | null>(conversation);
  const bottom = useRef<HTMLDivElement>(null);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const [micBusy, setMicBusy] = useState(false);
  const listening = useRef(false);
  const latest = useRef<{ items: Item[]; input: string }>({ items: [], input: "" });
  latest.current = { items, input };

  useEffect(() => {
    current.current = conversation;
    setError(null);
    if (conversation && !running) api.getMessages(conversation).then((m) => setItems(toItems(m))).catch((e) => setError(String(e)));
    if (!conversation) setItems([]);
    inputRef.current?.focus();
  }, [conversation]);
  // The launch benchmark's finish line: the input exists and has the focus.
  useEffect(() => { inputRef.current?.focus(); api.uiReady().catch(() => {}); }, []);
  useEffect(() => { bottom.current?.scrollIntoView({ block: "end" }); }, [items]);
  useEffect(() => {
    const a = on("agent-event", ({ conversation: c, event }) => {
      if (c !== current.current) return;
      // A turn the app started (going on after a login) shows its spinner too.
      if (event.type === "resumed") setRunning(true);
      setItems((list) => {
        const next = [...list];
        const last = next[next.length - 1];
        if (event.type === "text_delta") {
          if (last?.kind === "assistant") next[next.length - 1] = { kind: "assistant", text: last.text + event.text };
          else next.push({ kind: "assistant", text: event.text });
        } else if (event.type === "tool_call_requested") {
          next.push({ kind: "tool", card: { id: event.id, name: event.name, input: event.input, status: "running" } });
        } else if (event.type === "resumed") {
          // The turn goes on after a task that waited for the person: a new stretch, not more
          // of the message before it.
          next.push({ kind: "resumed", tool: event.tool });
        } else if (event.type === "recalled") {
          // Which memories the model was given for this turn, under the person's message.
          next.push({ kind: "recalled", memories: event.memories });
        } else if (event.type === "tool_call_finished") {
          return next.map((it) => it.kind === "tool" && it.card.id === event.id ? { kind: "tool", card: { ...it.card, status: finished(event.ok, event.suspended), suspended: event.suspended, result: event.result, structured: event.structured, images: event.images, duration_ms: event.duration_ms } } : it);
        }
        return next;
      });
    });
    const d = on("agent-done", ({ conversation: c, error: e }) => {
      if (c !== current.current) return;
      setRunning(false);
      if (e) setError(e);
      const last = latest.current.items[latest.current.items.length - 1];
      if (!e && last?.kind === "assistant") {
        api.getVoiceSettings().then((v) => { if (v.readAloud) readAloud(last.text, c); }).catch(() => {});
      }
    });
    // The scheduler's events carry its own call ids; `started` ties one to our card id.
    const cardOf = new Map<string, string>();
    const p = on("tool-event", (event) => {
      if (event.type === "started" && event.caller_ref) cardOf.set(event.call_id, event.caller_ref);
      else if (event.type === "progress") {
        const id = cardOf.get(event.call_id);
        if (id) setItems((list) => list.map((it) => it.kind === "tool" && it.card.id === id ? { kind: "tool", card: { ...it.card, progress: event.progress } } : it));
      } else if (event.type === "completed" || event.type === "failed") cardOf.delete(event.call_id);
    });
    // A waiting card whose task went on by itself shows what the resumed call returned.
    const r = on("task-resumed", ({ id, call }) => {
      setItems((list) => list.map((it) => it.kind === "tool" && it.card.status === "waiting" && it.card.suspended === id
        ? { kind: "tool", card: { ...it.card, status: finished(call.ok, call.suspended), suspended: call.suspended, result: call.text, images: call.images, duration_ms: call.duration_ms } } : it));
    });
    return () => { a.then((f) => f()); d.then((f) => f()); p.then((f) => f()); r.then((f) => f()); };
  }, []);

  const submit = async (given?: string) => {
    const text = (given ?? input).trim();
    if (!text || running) return;
    setInput("");
    setError(null);
    const slash = text.startsWith("/") ? (() => { try { return parseSlash(text); } catch (e) { setError(String(e)); return undefined; } })() : null;
    if (slash === undefined) return;
    if (slash) {
      const card: ToolCard = { id: `palette-${Date.now()}`, name: slash.name, input: slash.args, status: "running" };
      setItems((l) => [...l, { kind: "user", text }, { kind: "tool", card }]);
      const view = await api.callTool(slash.name, slash.args as Value, current.current ?? "palette", card.id).catch((e) => ({ ok: false, suspended: null, text: String(e), structured: null, images: [], duration_ms: 0 }));
      setItems((l) => l.map((it) => it.kind === "tool" && it.card.id === card.id ? { kind: "tool", card: { ...card, status: finished(view.ok, view.suspended), suspended: view.suspended, result: view.text, structured: view.structured, images: view.images, duration_ms: view.duration_ms } } : it));
      return;
    }
    setItems((l) => [...l, { kind: "user", text }]);
    setRunning(true);
    // A new chat gets its id here, before sending: the turn's first events can arrive before
    // send_message returns, and events of an unknown conversation are dropped.
    const isNew = !current.current;
    const id = current.current ?? (crypto.randomUUID?.() ?? `c-${Date.now()}-${Math.random().toString(36).slice(2)}`);
    current.current = id;
    try {
      await api.sendMessage(id, text, []);
      if (isNew) onConversation(id);
    } catch (e) { setRunning(false); setError(String(e)); }
  };

  // The microphone: the words land in the input for review (or are sent, as the settings say).
  const listen = async () => {
    if (listening.current) { api.voiceStop(); return; }
    listening.current = true;
    setMicBusy(true);
    setError(null);
    try {
      const heard = await listenOnce(current.current ?? "voice");
      if (!heard) { setError(t("noSpeech")); return; }
      const text = [latest.current.input.trim(), heard].filter(Boolean).join(" ");
      const settings = await api.getVoiceSettings().catch(() => null);
      if (settings?.autoSend) await submit(text);
      else { setInput(text); inputRef.current?.focus(); }
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
      if (e.ctrlKey && e.code === "Space" && !e.repeat && !listening.current) { e.preventDefault(); listen(); }
    };
    const up = (e: KeyboardEvent) => {
      if (listening.current && (e.code === "Space" || e.key === "Control")) api.voiceStop().catch(() => {});
    };
    window.addEventListener("keydown", down);
    window.addEventListener("keyup", up);
    return () => { window.removeEventListener("keydown", down); window.removeEventListener("keyup", up); };
  }, []);

  const waiting = running && ["user", "recalled", "resumed"].includes(items[items.length - 1]?.kind ?? "");
  return (
    <section class="chat">
      <WorkspaceBar conversation={conversation} />
      {firstRun && !firstRun.provider_configured && (
        <div class="banner" data-testid="first-run">
          <p>{t("noProvider")}</p>
          {firstRun.provider_error && <p class="error">{firstRun.provider_error}</p>}
          {firstRun.ollama_detected && <p>{t("ollamaFound")}</p>}
          <button onClick={onSettings}>{t("addProvider")}</button>
        </div>
      )}
      <div class="messages" aria-live="polite">
        {items.map((it, i) => it.kind === "tool" ? <Card key={it.card.id} card={it.card} /> :
          it.kind === "user" ? <div key={i} class="msg user">{it.text}</div> :
          it.kind === "resumed" ? <div key={i} class="resumed-mark" data-testid="resumed-mark">↻ {t("wentOn")} ({it.tool})</div> :
          it.kind === "recalled" ? <div key={i} class="recalled" data-testid="recalled" title={it.memories.map((m) => m.snippet.replace(/\*\*/g, "")).join("\n")}>
            {t("recalled")}: {it.memories.map((m) => <span key={m.id} class="tag" data-id={m.id}>{m.title}</span>)}</div> :
          <div key={i} class="msg assistant markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(it.text) }} />)}
        {waiting && <div class="msg assistant thinking"><span class="spinner" /> {t("thinking")}</div>}
        {error && <div class="msg error" role="alert">{error}</div>}
        <div ref={bottom} />
      </div>
      <div class="composer">
        <textarea ref={inputRef} data-testid="chat-input" rows={2} placeholder={t("placeholder")} value={input}
          onInput={(e) => setInput(e.currentTarget.value)}
          onKeyDown={(e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); submit(); } }} />
        <button class={micBusy ? "mic on" : "mic"} data-testid="mic" aria-pressed={micBusy} title={micBusy ? t("stopListening") : t("micButton")}
          aria-label={micBusy ? t("stopListening") : t("micButton")} onClick={listen}>
          <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round">
            <rect x="9" y="3" width="6" height="11" rx="3" /><path d="M5 11a7 7 0 0 0 14 0M12 18v3" /></svg></button>
        {running
          ? <button class="stop" onClick={() => current.current && api.stopRun(current.current)}>{t("stop")}</button>
          : <button class="primary" data-testid="send" onClick={() => submit()}>{t("send")}</button>}
      </div>
    </section>
  );
}
