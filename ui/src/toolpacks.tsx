// Toolpacks: install (fetch → review modal → install with progress), per-server state, logs,
// enable/disable/remove. The review modal, like the approval modal, never accepts by accident:
// no backdrop click, Escape cancels, Install arms after a short look.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, on, type ServerStatus, type ToolpackRecord, type ToolpackReview, type Value } from "./api";
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

/// The settings typed in the review: JSON where they parse as JSON, text otherwise; empty ones
/// left out.
function parseConfig(config: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config)
      .filter(([, v]) => v)
      .map(([k, v]) => {
        try {
          return [k, JSON.parse(v)];
        } catch {
          return [k, v];
        }
      }),
  );
}

function ReviewModal({
  review,
  busy,
  onInstall,
  onCancel,
}: {
  review: ToolpackReview;
  busy: boolean;
  onInstall: (config: Record<string, unknown>) => void;
  onCancel: () => void;
}) {
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
        <h2 id="review-title">{t("reviewTitle")}</h2>
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
              t("install")
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
  const [staged, setStaged] = useState<{ token: string; review: ToolpackReview } | null>(null);
  const [busy, setBusy] = useState<"" | "fetch" | "install">("");
  const fetchReview = (from = source) =>
    act(async () => {
      setBusy("fetch");
      try {
        setStaged(await api.stageToolpack(from));
      } finally {
        setBusy("");
      }
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
        setStaged(null);
        setSource("");
      } finally {
        setBusy("");
      }
    });
  const discard = () => {
    if (staged) api.discardToolpack(staged.token).catch(() => {});
    setStaged(null);
  };
  return { source, setSource, staged, busy, fetchReview, install, discard };
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
            <ToolpackRow key={name} name={name} r={r} s={serverOf(name)} act={act} showLog={setLog} />
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
      {inst.staged && (
        <ReviewModal
          review={inst.staged.review}
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
      <button type="button" onClick={() => act(() => api.reloadToolpacks())}>
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
}: {
  name: string;
  r: ToolpackRecord;
  s: ServerStatus | undefined;
  act: Act;
  showLog: (log: { server: string; text: string }) => void;
}) {
  const state = r.enabled ? (s?.state ?? "starting") : "stopped";
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
        {s?.state === "needs_sign_in" && (
          <button
            type="button"
            class="primary"
            data-testid="toolpack-sign-in"
            onClick={() =>
              act(async () => {
                const url = await api.beginToolpackSignIn(name);
                showLog({ server: s.name, text: `${t("signInWaiting")}\n${url}` });
                await api.finishToolpackSignIn(name);
                showLog({ server: s.name, text: t("signedInNow") });
              })
            }
          >
            {t("signIn")}
          </button>
        )}
        <button type="button" onClick={() => act(() => api.removeToolpack(name))}>
          {t("remove")}
        </button>
      </td>
    </tr>
  );
}
