// The running toolpacks' resources and prompts, picked from the composer. Both become
// attachments: a resource read as the person's own action (audited; what the server says taints
// the conversation like any of its words), a prompt filled with the person's arguments. A
// prompt's text is the server's words, so it is never put in the message box: there it would
// pass for the person's own (and a leading "/" would run a tool as them). Browsing lists them
// outside the conversation: nothing reaches the model until the person sends.
import type { RefObject } from "preact";
import { type Dispatch, useEffect, useState } from "preact/hooks";
import { api, on, type Part, type ToolCallView } from "../api";
import { t } from "../i18n";
import type { Action, ChatState } from "./state";

/// The calls that only list run under this name, not the conversation's.
const BROWSING = "window:toolpack-context";

interface Resource {
  server: string;
  uri: string;
  name?: string;
  title?: string;
  description?: string;
}
interface Prompt {
  server: string;
  name: string;
  title?: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
}

async function listed<T>(tool: string): Promise<T[]> {
  const view: ToolCallView = await api.callTool(tool, {}, BROWSING, null);
  if (!view.ok) throw new Error(view.text);
  return Array.isArray(view.structured) ? (view.structured as unknown as T[]) : [];
}

/// A filled prompt as an attachment named by its server: its messages' texts.
function promptPart(p: Prompt, view: ToolCallView): Part {
  const messages = (view.structured as { messages?: { content?: { text?: string } }[] } | null)?.messages ?? [];
  const text = messages
    .map((m) => m.content?.text ?? "")
    .filter(Boolean)
    .join("\n\n");
  return {
    type: "file",
    name: `${p.server}: prompt ${p.name}`,
    media_type: "text/plain",
    text,
    truncated_from: null,
    untrusted_from: `the toolpack ${p.server}'s prompt ${p.name}`,
  };
}

/// A resource attached and not yet sent changed on its server (Cowork subscribed when it was
/// attached): it is read again, the person's pick kept current, so what is sent is what the
/// server holds now.
export function useWatchedResources(latest: RefObject<ChatState>, ensureId: () => string, dispatch: Dispatch<Action>) {
  useEffect(() => {
    const changed = on("resource-updated", ({ server, uri }) => {
      const name = `${server}: ${uri}`;
      if (!latest.current?.attachments.some((p) => p.type === "file" && p.name === name)) return;
      api.attachResource(ensureId(), server, uri).then(
        (part) => dispatch({ type: "reattach", name, part }),
        () => {},
      );
    });
    return () => {
      changed.then((un) => un());
    };
  }, []);
}

/// The panel's place under the conversation, opened and closed from the composer.
export function useContextPanel(
  ensureId: () => string,
  dispatch: Dispatch<Action>,
  setError: (e: string) => void,
  inputRef: RefObject<HTMLTextAreaElement | null>,
) {
  const [open, setOpen] = useState(false);
  const panel = open && (
    <ContextPanel
      ensureId={ensureId}
      dispatch={dispatch}
      setError={setError}
      inputRef={inputRef}
      onClose={() => setOpen(false)}
    />
  );
  return { panel, toggle: () => setOpen(!open) };
}

/// The running servers' resources and prompts, listed again when a server's lists change
/// (list_changed) or a server comes or goes; Escape closes the panel.
function useContextItems(setError: (e: string) => void, onClose: () => void) {
  const [items, setItems] = useState<{ resources: Resource[]; prompts: Prompt[] } | null>(null);
  useEffect(() => {
    const list = () =>
      Promise.all([listed<Resource>("mcp_list_resources"), listed<Prompt>("mcp_list_prompts")]).then(
        ([resources, prompts]) => setItems({ resources, prompts }),
        (e) => {
          setItems({ resources: [], prompts: [] });
          setError(String(e.message ?? e));
        },
      );
    list();
    // A server's lists changed (list_changed) or a server came or went: listed again.
    const changed = on("toolpacks-changed", () => list());
    const keys = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    window.addEventListener("keydown", keys);
    return () => {
      window.removeEventListener("keydown", keys);
      changed.then((un) => un());
    };
  }, []);
  return items;
}

function ContextPanel({
  ensureId,
  dispatch,
  setError,
  inputRef,
  onClose,
}: {
  ensureId: () => string;
  dispatch: Dispatch<Action>;
  setError: (e: string) => void;
  inputRef: RefObject<HTMLTextAreaElement | null>;
  onClose: () => void;
}) {
  const items = useContextItems(setError, onClose);

  const attach = (r: Resource) =>
    api.attachResource(ensureId(), r.server, r.uri).then(
      (part: Part) => {
        dispatch({ type: "attach", parts: [part] });
        onClose();
      },
      (e: unknown) => setError(String(e)),
    );
  const use = async (p: Prompt, args: Record<string, string>) => {
    const view = await api.callTool(
      "mcp_get_prompt",
      { server: p.server, name: p.name, arguments: args },
      ensureId(),
      null,
    );
    if (!view.ok) return setError(view.text);
    dispatch({ type: "attach", parts: [promptPart(p, view)] });
    onClose();
    inputRef.current?.focus();
  };
  return (
    <div class="context-panel" role="dialog" aria-label={t("fromToolpacks")} data-testid="context-panel">
      <h3>{t("resources")}</h3>
      {items === null && <span class="spinner" />}
      {items?.resources.length === 0 && <p class="muted">{t("noResources")}</p>}
      <ul>
        {items?.resources.map((r) => (
          <li key={`${r.server} ${r.uri}`} data-resource={r.uri}>
            <div class="grow">
              <strong>{r.title || r.name || r.uri}</strong> <span class="desc">· {r.server}</span>
              {r.description && <div class="desc">{r.description}</div>}
            </div>
            <button type="button" onClick={() => attach(r)}>
              {t("attachIt")}
            </button>
          </li>
        ))}
      </ul>
      <h3>{t("prompts")}</h3>
      {items?.prompts.length === 0 && <p class="muted">{t("noPrompts")}</p>}
      <ul>
        {items?.prompts.map((p) => (
          <PromptRow key={`${p.server} ${p.name}`} p={p} use={use} />
        ))}
      </ul>
    </div>
  );
}

/// A prompt with a field per argument; Use fills the message box.
function PromptRow({ p, use }: { p: Prompt; use: (p: Prompt, args: Record<string, string>) => void }) {
  const [args, setArgs] = useState<Record<string, string>>({});
  const missing = (p.arguments ?? []).some((a) => a.required && !args[a.name]);
  return (
    <li data-prompt={p.name}>
      <div class="grow">
        <strong>{p.title || p.name}</strong> <span class="desc">· {p.server}</span>
        {p.description && <div class="desc">{p.description}</div>}
        {(p.arguments ?? []).map((a) => (
          <input
            key={a.name}
            data-arg={a.name}
            placeholder={`${a.name}${a.required ? " *" : ""}${a.description ? ` — ${a.description}` : ""}`}
            value={args[a.name] ?? ""}
            onInput={(e) => setArgs({ ...args, [a.name]: e.currentTarget.value })}
          />
        ))}
      </div>
      <button type="button" disabled={missing} onClick={() => use(p, args)}>
        {t("usePrompt")}
      </button>
    </li>
  );
}
