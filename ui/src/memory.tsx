// The memory panel: browse, search, edit and forget what the vault holds, and see where each
// entry came from. Searching, editing, deleting and restoring are the vault's tools called
// through the scheduler (reviewed and audited like any call); browsing and the index status are
// read-only views. Ctrl+Shift+M opens it.
import { useEffect, useState } from "preact/hooks";
import {
  type AgentSettings,
  api,
  type Embedder,
  on,
  type Value,
  type VaultEntry,
  type VaultHit,
  type VaultSettings,
  type VaultStatus,
} from "./api";
import { formatDate, t } from "./i18n";
import { renderMarkdown } from "./markdown";
import { SaveBar, useDraft } from "./savebar";

const MEMORY_CONVERSATION = "memory";
const KINDS = ["", "memory", "note", "fact", "preference", "decision", "learning"] as const;

async function call<T>(name: string, args: Value): Promise<T> {
  const out = await api.callTool(name, args, MEMORY_CONVERSATION, `memory-${Date.now()}`);
  if (!out.ok) throw new Error(out.text);
  return out.structured as T;
}

type Row = {
  id: string;
  title: string;
  kind: string;
  scope: string;
  tags: string[];
  path: string;
  updated: string;
  text: string;
  source?: VaultEntry["source"];
  score?: number;
};

function fromEntry(e: VaultEntry): Row {
  return { ...e, text: e.body.length > 400 ? `${e.body.slice(0, 400)}…` : e.body };
}

function fromHit(h: VaultHit): Row {
  return { ...h, text: h.snippet };
}

function Source({ row }: { row: Row }) {
  const s = row.source;
  if (!s || (!s.tool && !s.conversation)) return <span class="muted">{t("editedByYou")}</span>;
  return (
    <span class="muted" data-testid="memory-source">
      {t("from")} {s.tool ?? "?"}
      {s.conversation ? ` · ${t("conversationShort")} ${s.conversation.slice(0, 8)}` : ""}
      {s.promoted_from ? ` · ${t("promotedFrom")} ${s.promoted_from.slice(0, 8)}` : ""}
    </span>
  );
}

/// An entry: its title, kind, scope and tags, its text (edited in place; Ctrl+Enter saves, Esc
/// leaves), where it came from, and save or forget (which can be undone).
function MemoryCard({ row, onChanged }: { row: Row; onChanged: (note: string, undo?: () => Promise<void>) => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState("");
  const act = async (f: () => Promise<void>) => {
    setError("");
    try {
      await f();
    } catch (e) {
      setError(String(e instanceof Error ? e.message : e));
    }
  };
  // The whole text, as it is in the file now (a search shows only a snippet).
  const edit = () =>
    act(async () => {
      const entry = await api.vaultEntry(row.id);
      if (entry) setEditing(entry.body);
    });
  const save = (content: string) =>
    act(async () => {
      await call("update_vault_entry", { id: row.id, content });
      setEditing(null);
      onChanged(t("saved"));
    });
  const forget = () =>
    act(async () => {
      await call("delete_vault_entry", { id: row.id });
      onChanged(`${t("movedToTrash")}: ${row.title}`, async () => {
        await call("restore_vault_entry", { id: row.id });
      });
    });
  return (
    <article class="memory" data-testid="memory" data-id={row.id}>
      <MemoryHeader row={row} />
      {editing === null ? (
        <div class="memory-text" dangerouslySetInnerHTML={{ __html: renderMarkdown(row.text) }} />
      ) : (
        <textarea
          data-testid="memory-editor"
          value={editing}
          rows={5}
          onInput={(e) => setEditing(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") setEditing(null);
            const content = e.currentTarget.value;
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) save(content);
          }}
        />
      )}
      <footer>
        <Source row={row} />{" "}
        <span class="muted">
          · {formatDate(row.updated, "date")} · <code>{row.path}</code>
        </span>
        <span class="actions">
          {editing === null ? (
            <button type="button" onClick={edit}>
              {t("edit")}
            </button>
          ) : (
            <button type="button" class="primary" onClick={() => save(editing)}>
              {t("save")}
            </button>
          )}
          <button type="button" data-testid="memory-delete" onClick={forget}>
            {t("forget")}
          </button>
        </span>
      </footer>
      {error && <p class="error">{error}</p>}
    </article>
  );
}

function MemoryHeader({ row }: { row: Row }) {
  return (
    <header>
      <strong>{row.title}</strong>{" "}
      <span class={`badge kind-${row.kind}`}>{t(`kind_${row.kind}` as never) ?? row.kind}</span>
      {row.scope !== "global" && <span class="badge">{row.scope}</span>}
      {row.tags.map((tag) => (
        <span key={tag} class="tag">
          #{tag}
        </span>
      ))}
    </header>
  );
}

type Kind = (typeof KINDS)[number];

/// The entries shown: the most recent, or what a search finds (through the vault's tool),
/// of one kind or all; listed again when the kind changes.
function useEntries() {
  const [query, setQuery] = useState("");
  const [kind, setKind] = useState<Kind>("");
  const [rows, setRows] = useState<Row[]>([]);
  const [error, setError] = useState("");
  const kinds = kind ? [kind] : [];
  const load = async (q = query) => {
    setError("");
    try {
      if (q.trim()) {
        const found = await call<{ hits: VaultHit[]; note?: string }>("search_vault", { query: q, k: 20, kinds });
        setRows(found.hits.map(fromHit));
        if (found.note) setError(found.note);
      } else {
        setRows((await api.vaultRecent({ kinds }, 100)).map(fromEntry));
      }
    } catch (e) {
      setError(String(e instanceof Error ? e.message : e));
    }
  };
  useEffect(() => {
    load();
  }, [kind]);
  return { query, setQuery, kind, setKind, rows, error, setError, load };
}

/// The vault's index: counts, model, progress. Indexing progress is pushed; a tool that wrote
/// memory ends with a tool event.
function useVaultStatus() {
  const [status, setStatus] = useState<VaultStatus | null>(null);
  const refreshStatus = () =>
    api
      .vaultStatus()
      .then(setStatus)
      .catch(() => {});
  useEffect(() => {
    refreshStatus();
    const unVault = on("vault-changed", refreshStatus);
    const unTools = on("tool-event", (e) => {
      if (e.type === "completed") refreshStatus();
    });
    return () => {
      unVault.then((f) => f());
      unTools.then((f) => f());
    };
  }, []);
  return { status, refreshStatus };
}

/// Whether the chat recalls memories (an agent setting; off without a provider).
function useRecall() {
  const [agent, setAgent] = useState<AgentSettings | null>(null);
  useEffect(() => {
    api
      .getAgentSettings()
      .then(setAgent)
      .catch(() => {});
  }, []);
  const recall = agent?.recall?.enabled ?? false;
  const setRecall = async (enabled: boolean) => {
    if (!agent) return;
    const next = { ...agent, recall: { enabled, k: agent.recall?.k ?? 3 } };
    await api.saveAgentSettings(next);
    setAgent(next);
  };
  return { available: agent !== null, recall, setRecall };
}

type Note = { text: string; undo?: () => Promise<void> };

export function MemoryView() {
  const entries = useEntries();
  const { rows, query, error, load } = entries;
  const { status, refreshStatus } = useVaultStatus();
  const [note, setNote] = useState<Note | null>(null);
  const s = status?.stats;
  const reindex = () =>
    api
      .vaultReindex()
      .then(() => {
        refreshStatus();
        load();
      })
      .catch((e) => entries.setError(String(e)));
  return (
    <section class="memory-view" data-testid="memory-view">
      <MemoryHead entries={entries} />
      {s && <VaultStatusLine stats={s} progress={status?.progress} reindex={reindex} />}
      {s && s.problems.length > 0 && (
        <details class="taint">
          <summary>
            {s.problems.length} {t("unreadableFiles")}
          </summary>
          <ul>
            {s.problems.map(([path, why]) => (
              <li key={path}>
                <code>{path}</code>: {why}
              </li>
            ))}
          </ul>
        </details>
      )}
      {note && (
        <p class="notice" data-testid="memory-notice">
          {note.text}{" "}
          {note.undo && (
            <button
              type="button"
              onClick={async () => {
                await note.undo?.();
                setNote(null);
                load();
              }}
            >
              {t("undo")}
            </button>
          )}
        </p>
      )}
      {error && <p class="error">{error}</p>}
      {rows.length === 0 && <p class="hint">{query ? t("nothingFound") : t("vaultEmpty")}</p>}
      {rows.map((row) => (
        <MemoryCard
          key={row.id}
          row={row}
          onChanged={(text, undo) => {
            setNote({ text, undo });
            load();
          }}
        />
      ))}
    </section>
  );
}

/// The search (Enter searches), the kind, and whether the chat recalls memories.
function MemoryHead({ entries }: { entries: ReturnType<typeof useEntries> }) {
  const { available, recall, setRecall } = useRecall();
  return (
    <header class="memory-head">
      <h2>{t("memory")}</h2>
      <input
        id="memory-search"
        type="search"
        placeholder={t("memorySearch")}
        value={entries.query}
        autofocus
        onInput={(e) => entries.setQuery(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") entries.load(e.currentTarget.value);
        }}
      />
      <select
        value={entries.kind}
        onChange={(e) => entries.setKind(e.currentTarget.value as Kind)}
        aria-label={t("category")}
      >
        {KINDS.map((k) => (
          <option key={k} value={k}>
            {k ? (t(`kind_${k}` as never) ?? k) : t("all")}
          </option>
        ))}
      </select>
      <label class="inline" title={available ? "" : t("noProvider")}>
        <input
          type="checkbox"
          data-testid="recall-toggle"
          disabled={!available}
          checked={recall}
          onChange={(e) => setRecall(e.currentTarget.checked)}
        />
        {t("recallInChat")}
      </label>
    </header>
  );
}

/// How many entries, searched by meaning or by words only, the indexing under way, the folder,
/// and reindex.
function VaultStatusLine({
  stats: s,
  progress: p,
  reindex,
}: {
  stats: NonNullable<VaultStatus["stats"]>;
  progress: VaultStatus["progress"] | undefined;
  reindex: () => void;
}) {
  return (
    <p class="muted" data-testid="vault-status">
      {s.entries} {t("entries")} ·{" "}
      {s.model ? (
        <span title={`${t("model")}: ${s.model.split("#")[0]}`}>{t("byMeaning")}</span>
      ) : (
        <span title={s.semantic_off ?? ""}>{t("wordsOnly")}</span>
      )}
      {p && p.phase !== "idle" && (
        <>
          {" "}
          ·{" "}
          <strong>
            {t(`phase_${p.phase}` as never)} {p.total > 0 ? `${p.done}/${p.total}` : ""}
          </strong>
        </>
      )}
      {` · ${t("keptIn")} `}
      <code>{s.folder}</code>{" "}
      <button type="button" onClick={reindex}>
        {t("reindex")}
      </button>
    </p>
  );
}

/// Settings → Memory: the vault folder (takes effect at the next start) and the embedding model.
/// A new model re-embeds every entry in the background; the Memory page shows the progress.
export function MemorySettings() {
  const draft = useDraft<VaultSettings>();
  const [status, setStatus] = useState("");
  useEffect(() => {
    api
      .getVaultSettings()
      .then(draft.load)
      .catch((e) => setStatus(String(e)));
  }, []);
  const settings = draft.value,
    setSettings = draft.set;
  if (!settings) return status ? <p class="status">{status}</p> : null;
  const e = settings.embedder ?? { kind: "e5" };
  const setEmbedder = (embedder: Embedder) => setSettings({ ...settings, embedder });
  return (
    <fieldset data-testid="memory-settings">
      <legend>{t("memory")}</legend>
      <label>
        {t("vaultFolder")}
        <input
          type="text"
          value={settings.folder ?? ""}
          placeholder={t("vaultFolderDefault")}
          onInput={(ev) => setSettings({ ...settings, folder: ev.currentTarget.value || null })}
        />
      </label>
      <label>
        {t("embeddingModel")}
        <select
          value={e.kind}
          onChange={(ev) => {
            const kind = ev.currentTarget.value;
            setEmbedder(
              kind === "openai"
                ? { kind, baseUrl: "http://127.0.0.1:11434/v1", model: "bge-m3", apiKeyEnv: "" }
                : kind === "none"
                  ? { kind }
                  : { kind: "e5" },
            );
          }}
        >
          <option value="e5">multilingual-e5-small ({t("onDevice")})</option>
          <option value="openai">{t("openaiEmbeddings")}</option>
          <option value="none">{t("wordsOnly")}</option>
        </select>
      </label>
      {e.kind === "openai" && (
        <>
          <label>
            {t("baseUrl")}
            <input
              type="text"
              value={e.baseUrl}
              onInput={(ev) => setEmbedder({ ...e, baseUrl: ev.currentTarget.value })}
            />
          </label>
          <label>
            {t("model")}
            <input type="text" value={e.model} onInput={(ev) => setEmbedder({ ...e, model: ev.currentTarget.value })} />
          </label>
          <label>
            {t("apiKeyEnv")}
            <input
              type="text"
              value={e.apiKeyEnv ?? ""}
              onInput={(ev) => setEmbedder({ ...e, apiKeyEnv: ev.currentTarget.value })}
            />
          </label>
        </>
      )}
      <p class="hint">{t("embedderHint")}</p>
      <SaveBar draft={draft} save={(s) => api.saveVaultSettings(s)} />
    </fieldset>
  );
}
