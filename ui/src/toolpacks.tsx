// Toolpacks: install (fetch → review modal → install with progress), per-server state, logs,
// enable/disable/remove. The review modal, like the approval modal, never accepts by accident:
// no backdrop click, Escape cancels, Install arms after a short look.
import { useEffect, useRef, useState } from "preact/hooks";
import {
  api,
  type CatalogEntry,
  type CatalogPage,
  on,
  type ServerStatus,
  type StagedView,
  type ToolpackRecord,
  type ToolpackReview,
  type ToolpackSetting,
  type Value,
} from "./api";
import { said, t } from "./i18n";

const ARM_DELAY_MS = 400;

/// Escape cancels (unless installing), Cancel has the focus, and Install arms only after a
/// short look at each review.
function useArmed(review: ToolpackReview, busy: boolean, onCancel: () => void) {
  const [armed, setArmed] = useState(false);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    cancelRef.current?.focus();
    const timer = setTimeout(() => setArmed(true), ARM_DELAY_MS);
    const keys = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !busy) {
        e.preventDefault();
        onCancel();
      }
    };
    window.addEventListener("keydown", keys);
    return () => {
      clearTimeout(timer);
      window.removeEventListener("keydown", keys);
    };
  }, [review.sha256, busy]);
  return { armed, cancelRef };
}

/// The settings typed in the review, as typed (the pack's manifest gives each its type: a
/// secret of digits stays the same digits); empty ones left out.
function parseConfig(config: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(config).filter(([, v]) => v));
}

function ReviewModal({
  staged,
  busy,
  onInstall,
  onCancel,
}: {
  staged: StagedView;
  busy: boolean;
  onInstall: (config: Record<string, unknown>) => void;
  onCancel: () => void;
}) {
  const { review } = staged;
  const { armed, cancelRef } = useArmed(review, busy, onCancel);
  const [config, setConfig] = useState<Record<string, string>>({});
  const missing = review.user_config.filter((c) => c.required && !c.has_default && !config[c.key]);
  return (
    <div class="modal-backdrop">
      <div
        class="modal"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="review-title"
        data-testid="toolpack-review"
      >
        <h2 id="review-title">{t(staged.repair ? "repairTitle" : staged.update ? "updateTitle" : "reviewTitle")}</h2>
        {staged.repair && <p class="warn">{t("repairWhy")}</p>}
        <PackIdentity review={review} />
        <PackTools review={review} />
        {review.changes.length > 0 && (
          <>
            <h3>{t("changes")}</h3>
            <ul class="effects">
              {review.changes.map((c) => (
                <li key={c}>{c}</li>
              ))}
            </ul>
          </>
        )}
        {review.user_config.length > 0 && <PackConfig review={review} config={config} setConfig={setConfig} />}
        <div class="choices">
          <button
            type="button"
            class="allow"
            disabled={!armed || busy || missing.length > 0}
            onClick={() => onInstall(parseConfig(config))}
            data-choice="install"
          >
            {busy ? (
              <>
                <span class="spinner" /> {t("installing")}
              </>
            ) : (
              t(staged.update ? "update" : "install")
            )}
          </button>
          <button type="button" ref={cancelRef} class="deny" disabled={busy} onClick={onCancel} data-choice="cancel">
            {t("cancel")} <kbd>Esc</kbd>
          </button>
        </div>
      </div>
    </div>
  );
}

/// What the pack is, in its own words, pinned to which source and hash; what it runs and in
/// which sandbox.
function PackIdentity({ review }: { review: ToolpackReview }) {
  return (
    <>
      <p class="tool-line">
        <strong>{review.display_name}</strong> {review.version}
      </p>
      {review.description && (
        <blockquote class="quoted" data-testid="pack-words">
          <span class="caller">{t("packSays")}</span> {review.description}
        </blockquote>
      )}
      <p class="rule">
        {t("pinned")}:{" "}
        <code>
          {review.source}
          {review.commit ? ` @ ${review.commit.slice(0, 12)}` : ""}
        </code>{" "}
        · sha256 <code>{review.sha256.slice(0, 16)}…</code>
      </p>
      <h3>{t("runs")}</h3>
      <pre class="args">{review.command}</pre>
      {review.acts_as && (
        <p class="warn" data-testid="acts-as">
          {review.acts_as}
        </p>
      )}
      <h3>{t("sandbox")}</h3>
      <ul class="effects" data-testid="sandbox">
        {review.sandbox.map((line) => (
          <li key={line} class={line.startsWith("NOT") ? "warn" : undefined}>
            {line}
          </li>
        ))}
      </ul>
    </>
  );
}

/// The pack's tools with what each says it can do (or that it does not say), the ones withheld,
/// and the shipped tools it would replace.
function PackTools({ review }: { review: ToolpackReview }) {
  return (
    <>
      <h3>{t("tools")}</h3>
      <ul class="effects">
        {review.tools.map((tool) => (
          <li key={tool.name}>
            <code>{tool.name}</code> —{" "}
            {tool.effects === null ? (
              <em class="warn">{t("undeclared")}</em>
            ) : tool.effects.length ? (
              tool.effects.map((k) => said("effect", k)).join(t("listSeparator"))
            ) : (
              t("noEffects")
            )}
            {tool.withheld && (
              <em class="warn" data-testid="withheld">
                {" "}
                — {t("withheld")}: {tool.withheld}
              </em>
            )}
          </li>
        ))}
      </ul>
      <p class="why">{t("otherTools")}</p>
      {Object.entries(review.overrides).map(([builtin, tool]) => (
        <p class="taint" key={builtin}>
          ⚠ {tool} {t("overrides")} {builtin}
        </p>
      ))}
    </>
  );
}

/// The settings the pack needs (a secret typed as a password).
function PackConfig({
  review,
  config,
  setConfig,
}: {
  review: ToolpackReview;
  config: Record<string, string>;
  setConfig: (config: Record<string, string>) => void;
}) {
  return (
    <>
      <h3>{t("needs")}</h3>
      {review.user_config.map((c) => (
        // biome-ignore lint/a11y/noLabelWithoutControl: the control is inside, behind a condition the linter cannot follow
        <label class="field" key={c.key}>
          {c.title || c.key}
          {c.required && !c.has_default ? " *" : ""}
          {c.sensitive ? ` (${t("sensitiveNote")})` : ""}
          {c.sensitive ? (
            <input
              type="password"
              value={config[c.key] ?? ""}
              onInput={(e) => setConfig({ ...config, [c.key]: e.currentTarget.value })}
            />
          ) : (
            <input
              type="text"
              value={config[c.key] ?? ""}
              onInput={(e) => setConfig({ ...config, [c.key]: e.currentTarget.value })}
            />
          )}
        </label>
      ))}
    </>
  );
}

/// The installed packs and their servers' states, listed again when the shell says they changed
/// (start, crash, restart); `act` runs a command and shows its error.
function useToolpacks() {
  const [records, setRecords] = useState<Record<string, ToolpackRecord>>({});
  const [servers, setServers] = useState<ServerStatus[]>([]);
  const [error, setError] = useState("");
  const load = () =>
    api
      .listToolpacks()
      .then((v) => {
        setRecords(v.records);
        setServers(v.servers);
      })
      .catch((e) => setError(String(e)));
  useEffect(() => {
    load();
    const un = on("toolpacks-changed", load);
    return () => {
      un.then((f) => f());
    };
  }, []);
  const act = async (f: () => Promise<unknown>) => {
    setError("");
    try {
      await f();
    } catch (e) {
      setError(String(e));
    }
    load();
  };
  const serverOf = (name: string) => servers.find((s) => s.name === name.replace(/-/g, "_"));
  return { records, serverOf, error, act };
}

type Act = (f: () => Promise<unknown>) => Promise<void>;

/// Installing: a source fetched into a staged review (at once for a handed-over `request`), then
/// installed with the settings the person typed, or discarded.
function useInstall(act: Act, request?: { source: string; n: number }) {
  const [source, setSource] = useState("");
  // Reviews waiting for the person, one at a time (an import brings several).
  const [queue, setQueue] = useState<StagedView[]>([]);
  const staged = queue[0] ?? null;
  const next = () => setQueue((q) => q.slice(1));
  const [busy, setBusy] = useState<"" | "fetch" | "install">("");
  const [note, setNote] = useState("");
  /** Runs `get` as a fetch: its reviews join the queue. */
  const fetching = (get: () => Promise<StagedView[]>) =>
    act(async () => {
      setBusy("fetch");
      setNote("");
      try {
        const views = await get();
        setQueue((q) => [...q, ...views]);
        return views;
      } finally {
        setBusy("");
      }
    });
  const fetchReview = (from = source) => fetching(async () => [await api.stageToolpack(from)]);
  const checkUpdate = (name: string) =>
    fetching(async () => {
      const view = await api.checkToolpackUpdate(name);
      if (!view) setNote(`${name}: ${t("upToDate")}`);
      return view ? [view] : [];
    });
  const importClaude = (path: string) =>
    fetching(async () => {
      const views = await api.importClaudeDesktop(path.trim() || null);
      if (!views.length) setNote(t("nothingToImport"));
      return views;
    });
  useEffect(() => {
    if (request) {
      setSource(request.source);
      fetchReview(request.source);
    }
  }, [request?.n]);
  const install = (config: Record<string, unknown>) =>
    act(async () => {
      if (!staged) return;
      setBusy("install");
      try {
        await api.installToolpack(staged.token, config as { [key: string]: Value });
        next();
        setSource("");
      } finally {
        setBusy("");
      }
    });
  const discard = () => {
    if (staged) api.discardToolpack(staged.token).catch(() => {});
    next();
  };
  return { source, setSource, staged, busy, note, fetchReview, checkUpdate, importClaude, install, discard };
}

/** `request`: a source handed over by a `cowork://toolpack/install` link or an opened .mcpb; its
 * review opens at once (installing still takes the person's click in the review). */
export function ToolpacksView({ request }: { request?: { source: string; n: number } }) {
  const { records, serverOf, error, act } = useToolpacks();
  const inst = useInstall(act, request);
  const [log, setLog] = useState<{ server: string; text: string } | null>(null);
  return (
    <section class="page toolpacks">
      <h1>{t("toolpacks")}</h1>
      <SourceRow inst={inst} act={act} />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {inst.note && (
        <p class="muted" role="status" data-testid="toolpack-note">
          {inst.note}
        </p>
      )}
      {Object.keys(records).length === 0 && <p class="muted">{t("noToolpacks")}</p>}
      <table class="catalog" data-testid="toolpacks">
        <thead>
          <tr>
            <th>{t("toolpacks")}</th>
            <th>{t("state")}</th>
            <th>{t("tools")}</th>
            <th>{t("pinned")}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {Object.entries(records).map(([name, r]) => (
            <ToolpackRow
              key={name}
              name={name}
              r={r}
              s={serverOf(name)}
              act={act}
              showLog={setLog}
              checkUpdate={inst.checkUpdate}
            />
          ))}
        </tbody>
      </table>
      {log && (
        <>
          <h3>
            {t("logs")}: {log.server}{" "}
            <button type="button" class="icon" aria-label="close" onClick={() => setLog(null)}>
              ×
            </button>
          </h3>
          <pre class="log">{log.text || "—"}</pre>
        </>
      )}
      <Catalog
        onInstall={(name) => inst.fetchReview(`registry:${name}`)}
        busy={inst.busy !== ""}
        installed={installedFromRegistry(records)}
      />
      <ImportRow inst={inst} />
      {inst.staged && (
        <ReviewModal
          key={inst.staged.token}
          staged={inst.staged}
          busy={inst.busy === "install"}
          onInstall={inst.install}
          onCancel={inst.discard}
        />
      )}
    </section>
  );
}

/// Where a pack comes from (Enter fetches its review), and reloading every pack.
function SourceRow({ inst, act }: { inst: ReturnType<typeof useInstall>; act: Act }) {
  const { source, busy } = inst;
  return (
    <div class="row">
      <input
        class="grow"
        placeholder={t("sourcePlaceholder")}
        value={source}
        onInput={(e) => inst.setSource(e.currentTarget.value)}
        onKeyDown={(e) => {
          const typed = e.currentTarget.value.trim();
          if (e.key === "Enter" && typed) inst.fetchReview(typed);
        }}
        data-testid="toolpack-source"
      />
      <button type="button" class="primary" disabled={!source.trim() || busy !== ""} onClick={() => inst.fetchReview()}>
        {busy === "fetch" ? (
          <>
            <span class="spinner" /> {t("fetching")}
          </>
        ) : (
          t("install")
        )}
      </button>
      <button type="button" onClick={() => act(() => api.reloadToolpacks())} data-testid="toolpacks-reload">
        {t("reload")}
      </button>
    </div>
  );
}

/// An installed pack: its source, its server's state (restarts, last error), its tools, its
/// pin, and enable/disable, logs, remove.
function ToolpackRow({
  name,
  r,
  s,
  act,
  showLog,
  checkUpdate,
}: {
  name: string;
  r: ToolpackRecord;
  s: ServerStatus | undefined;
  act: Act;
  showLog: (log: { server: string; text: string }) => void;
  checkUpdate: (name: string) => void;
}) {
  const state = r.enabled ? (s?.state ?? "starting") : "stopped";
  const [editing, setEditing] = useState(false);
  return (
    <tr data-toolpack={name}>
      <td>
        <strong>{name}</strong> {r.version}
        <div class="desc">{r.source}</div>
      </td>
      <td>
        <span class={`badge state-${state}`} data-testid="server-state">
          {state === "needs_sign_in" ? t("needsSignIn") : state}
        </span>
        {s && s.restarts > 0 && (
          <span class="desc">
            {" "}
            {s.restarts} {t("restarts")}
          </span>
        )}
        {s?.last_error && <div class="desc error">{s.last_error}</div>}
      </td>
      <td>{s?.tools ?? 0}</td>
      <td>
        <code>{r.commit ? r.commit.slice(0, 10) : r.sha256.slice(0, 10)}</code>
      </td>
      <td class="actions">
        <button type="button" onClick={() => act(() => api.setToolpackEnabled(name, !r.enabled))}>
          {r.enabled ? t("disable") : t("enable")}
        </button>
        {s && (
          <button
            type="button"
            onClick={() => act(async () => showLog({ server: s.name, text: await api.toolpackLog(s.name) }))}
          >
            {t("logs")}
          </button>
        )}
        {s?.state === "needs_sign_in" && <SignIn name={name} server={s.name} act={act} showLog={showLog} />}
        <button type="button" onClick={() => checkUpdate(name)} data-testid="toolpack-update">
          {t("checkUpdate")}
        </button>
        <button type="button" onClick={() => setEditing(true)} data-testid="toolpack-settings">
          {t("packSettings")}
        </button>
        <button type="button" onClick={() => act(() => api.removeToolpack(name))}>
          {t("remove")}
        </button>
        <SandboxChoice name={name} off={r.sandboxOff ?? false} act={act} />
        {editing && <SettingsModal name={name} act={act} onClose={() => setEditing(false)} />}
      </td>
    </tr>
  );
}

/// Signing in to a pack's remote server: the browser opens; the address shows meanwhile.
function SignIn({
  name,
  server,
  act,
  showLog,
}: {
  name: string;
  server: string;
  act: Act;
  showLog: (log: { server: string; text: string }) => void;
}) {
  return (
    <button
      type="button"
      class="primary"
      data-testid="toolpack-sign-in"
      onClick={() =>
        act(async () => {
          const url = await api.beginToolpackSignIn(name);
          showLog({ server, text: `${t("signInWaiting")}\n${url}` });
          await api.finishToolpackSignIn(name);
          showLog({ server, text: t("signedInNow") });
        })
      }
    >
      {t("signIn")}
    </button>
  );
}

/// One setting's field: a secret typed as a password, its stored value never shown.
function SettingInput({
  f,
  typed,
  onInput,
}: {
  f: ToolpackSetting;
  typed: string | undefined;
  onInput: (value: string) => void;
}) {
  return f.sensitive ? (
    <input
      type="password"
      data-field={f.key}
      placeholder={t(f.set ? "secretKept" : "secretUnset")}
      value={typed ?? ""}
      onInput={(e) => onInput(e.currentTarget.value)}
    />
  ) : (
    <input
      type="text"
      data-field={f.key}
      value={typed ?? f.value ?? ""}
      onInput={(e) => onInput(e.currentTarget.value)}
    />
  );
}

/// A pack's settings, edited: plain ones shown as they are, secrets only as set or not (a
/// secret left empty keeps its value). Save restarts the server with them.
function SettingsModal({ name, act, onClose }: { name: string; act: Act; onClose: () => void }) {
  const [fields, setFields] = useState<ToolpackSetting[] | null>(null);
  const [typed, setTyped] = useState<Record<string, string>>({});
  useEffect(() => {
    api.toolpackSettings(name).then(setFields, (e) => {
      onClose();
      act(() => Promise.reject(e));
    });
    const keys = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, [name]);
  const save = () =>
    act(() => api.configureToolpack(name, parseConfig(typed) as { [key: string]: Value })).then(onClose);
  return (
    <div class="modal-backdrop">
      <div
        class="modal"
        role="dialog"
        aria-modal="true"
        aria-labelledby="pack-settings"
        data-testid="toolpack-settings-modal"
      >
        <h2 id="pack-settings">
          {t("packSettings")}: {name}
        </h2>
        {fields?.length === 0 && <p class="muted">{t("noPackSettings")}</p>}
        {fields?.map((f) => (
          // biome-ignore lint/a11y/noLabelWithoutControl: the input is the label's child
          <label class="field" key={f.key}>
            {f.title || f.key}
            {f.required ? " *" : ""}
            {f.description && <span class="desc"> — {f.description}</span>}
            <SettingInput f={f} typed={typed[f.key]} onInput={(v) => setTyped({ ...typed, [f.key]: v })} />
          </label>
        ))}
        <div class="choices">
          <button type="button" class="primary" disabled={!fields} onClick={save} data-choice="save">
            {t("save")}
          </button>
          <button type="button" onClick={onClose} data-choice="cancel">
            {t("cancel")} <kbd>Esc</kbd>
          </button>
        </div>
      </div>
    </div>
  );
}

/// The pack's sandbox: on again in one click; off — which widens what the pack can reach — only
/// after the window has said what that means.
function SandboxChoice({ name, off, act }: { name: string; off: boolean; act: Act }) {
  const [confirmOff, setConfirmOff] = useState(false);
  return (
    <>
      {off ? (
        <button type="button" onClick={() => act(() => api.setToolpackSandbox(name, true))}>
          {t("sandboxOn")}
        </button>
      ) : (
        <button type="button" onClick={() => setConfirmOff(true)} data-testid="toolpack-sandbox-off">
          {t("sandboxOff")}
        </button>
      )}
      {off && <div class="desc warn">{t("sandboxIsOff")}</div>}
      {confirmOff && (
        <div class="confirm" role="alertdialog" aria-label={t("sandboxOff")}>
          <p class="warn">{t("sandboxOffMeans")}</p>
          <button
            type="button"
            class="deny"
            data-testid="toolpack-sandbox-off-confirm"
            onClick={() => act(() => api.setToolpackSandbox(name, false)).then(() => setConfirmOff(false))}
          >
            {t("sandboxOff")}
          </button>
          <button type="button" onClick={() => setConfirmOff(false)}>
            {t("cancel")}
          </button>
        </div>
      )}
    </>
  );
}

/// The MCP Registry's catalog: search (Enter), what installing each entry runs, its install
/// through the same review; offline, the last answer and when it was fetched.
function Catalog({
  onInstall,
  busy,
  installed,
}: {
  onInstall: (name: string) => void;
  busy: boolean;
  installed: Set<string>;
}) {
  const [query, setQuery] = useState("");
  const [page, setPage] = useState<CatalogPage | null>(null);
  const [entries, setEntries] = useState<CatalogEntry[]>([]);
  const [error, setError] = useState("");
  const [loading, setLoading] = useState(false);
  const search = async (more = false) => {
    setLoading(true);
    setError("");
    try {
      const got = await api.searchCatalog(query, more ? (page?.next_cursor ?? null) : null);
      setEntries((old) => (more ? [...old, ...got.entries] : got.entries));
      setPage(got);
    } catch (e) {
      setError(String(e));
    } finally {
      setLoading(false);
    }
  };
  return (
    <section class="catalog-browse" data-testid="catalog">
      <h2>{t("catalog")}</h2>
      <div class="row">
        <input
          class="grow"
          placeholder={t("catalogPlaceholder")}
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
          onKeyDown={(e) => e.key === "Enter" && search()}
          data-testid="catalog-query"
        />
        <button type="button" disabled={loading} onClick={() => search()} data-testid="catalog-search">
          {loading ? <span class="spinner" /> : t("searchCatalog")}
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {page?.offline && (
        <p class="warn" data-testid="catalog-offline">
          {t("catalogOffline")} {new Date(page.offline.fetched_at).toLocaleString()}
        </p>
      )}
      {page && entries.length === 0 && <p class="muted">{t("catalogEmpty")}</p>}
      <ul class="catalog-entries">
        {entries.map((e) => (
          <CatalogItem key={e.name} e={e} busy={busy} onInstall={onInstall} installed={installed.has(e.name)} />
        ))}
      </ul>
      {page?.next_cursor && (
        <button type="button" disabled={loading} onClick={() => search(true)}>
          {t("more")}
        </button>
      )}
    </section>
  );
}

/// How installing an entry runs it, in words.
function installWords(e: CatalogEntry): string {
  const i = e.install;
  switch (i.kind) {
    case "bundle":
      return t("viaBundle");
    case "npm":
      return `${t("viaNpm")} ${i.package} ${i.version}`;
    case "pypi":
      return `${t("viaPypi")} ${i.package} ${i.version}`;
    case "remote":
      return `${t("viaRemote")} ${i.url}`;
    case "unsupported":
      return i.why;
  }
}

/// The registry names the installed packs come from (`registry:<name>[@version]`).
function installedFromRegistry(records: Record<string, ToolpackRecord>): Set<string> {
  return new Set(
    Object.values(records)
      .map((r) => r.source)
      .filter((s) => s.startsWith("registry:"))
      .map((s) => s.slice("registry:".length).split("@")[0]),
  );
}

function CatalogItem({
  e,
  busy,
  onInstall,
  installed,
}: {
  e: CatalogEntry;
  busy: boolean;
  onInstall: (name: string) => void;
  installed: boolean;
}) {
  return (
    <li data-entry={e.name}>
      <div class="grow">
        <strong>{e.title}</strong> <span class="desc">{e.version}</span>
        {installed && (
          <span class="badge state-running" data-testid="catalog-installed">
            {t("installedBadge")}
          </span>
        )}
        <div>{e.description}</div>
        <div class="desc">
          <code>{e.name}</code> · {installWords(e)}
        </div>
      </div>
      <button
        type="button"
        class="primary"
        disabled={busy || e.install.kind === "unsupported"}
        onClick={() => onInstall(e.name)}
      >
        {t(installed ? "update" : "install")}
      </button>
    </li>
  );
}

/// Claude Desktop's servers as toolpacks: its config file (or where Claude Desktop keeps it),
/// one review per server.
function ImportRow({ inst }: { inst: ReturnType<typeof useInstall> }) {
  const [path, setPath] = useState("");
  return (
    <details class="import">
      <summary>{t("importClaude")}</summary>
      <div class="row">
        <input
          class="grow"
          placeholder={t("importPlaceholder")}
          value={path}
          onInput={(e) => setPath(e.currentTarget.value)}
          data-testid="import-path"
        />
        <button type="button" disabled={inst.busy !== ""} onClick={() => inst.importClaude(path)} data-testid="import">
          {t("import")}
        </button>
      </div>
    </details>
  );
}
