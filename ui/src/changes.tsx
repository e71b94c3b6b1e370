// The review panel of the shadow filesystem: what the assistant staged, file by file and hunk by
// hunk; apply all or some hunks, reject, and roll back what was applied. Every action is a tool
// call through the scheduler (changes_apply asks, like any destructive call, and is audited).
import { useEffect, useState } from "preact/hooks";
import { api, type ChangeDiff, type ChangeStatus, on, type Value } from "./api";
import { t } from "./i18n";

const REVIEW_CONVERSATION = "review";

async function call<T>(name: string, args: Value, conversation: string | null): Promise<T> {
  const out = await api.callTool(name, args, conversation ?? REVIEW_CONVERSATION, `review-${Date.now()}`);
  if (!out.ok) throw new Error(out.text);
  return out.structured as T;
}

function DiffLines({ text }: { text: string }) {
  return (
    <pre class="diff">
      {text
        .split("\n")
        .filter((l, i, all) => l !== "" || i < all.length - 1)
        .map((line, i) => (
          <span key={i} class={line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx"}>
            {line}
            {"\n"}
          </span>
        ))}
    </pre>
  );
}

type Act = (name: string, args: { [key: string]: Value }, done: string) => void;

/// One change of a file: its diff hunk by hunk (a staged one's hunks chosen to apply, all at
/// first), then apply, reject or roll back.
function ChangeCard({
  diff,
  conversation,
  onChanged,
}: {
  diff: ChangeDiff;
  conversation: string | null;
  onChanged: (message: string) => void;
}) {
  const c = diff.change;
  const [chosen, setChosen] = useState<Set<number>>(new Set(diff.hunks.map((h) => h.number)));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const act: Act = async (name, args, done) => {
    setBusy(true);
    setError("");
    try {
      await call(name, args, conversation);
      onChanged(done);
    } catch (e) {
      setError(String(e instanceof Error ? e.message : e));
    } finally {
      setBusy(false);
    }
  };
  const toggle = (n: number) => {
    const next = new Set(chosen);
    next.has(n) ? next.delete(n) : next.add(n);
    setChosen(next);
  };
  return (
    <section class="change" data-testid="change" data-change={c.id} data-status={c.status}>
      <header class="change-head">
        <code class="path">{c.path}</code>
        <span class={`badge kind-${c.kind}`}>{t(c.kind)}</span>
        <span class="add">+{c.added}</span> <span class="del">−{c.removed}</span>
        <span class="muted">
          #{c.id} · {t(c.status)}
        </span>
      </header>
      {diff.conflict && (
        <p class="taint" data-testid="conflict">
          ⚠ {t("conflict")}
        </p>
      )}
      {diff.summary && <p class="muted">{diff.summary}</p>}
      {diff.hunks.map((h) => (
        <div class="hunk" key={h.number} data-testid="hunk">
          {/* biome-ignore lint/a11y/noLabelWithoutControl: the control is inside, behind a condition the linter cannot follow */}
          <label class="hunk-head">
            {c.status === "staged" && (
              <input
                type="checkbox"
                data-hunk={h.number}
                checked={chosen.has(h.number)}
                onChange={() => toggle(h.number)}
              />
            )}
            <code>{h.header}</code>
          </label>
          <DiffLines text={h.text} />
        </div>
      ))}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <ChangeActions diff={diff} chosen={chosen} busy={busy} act={act} />
    </section>
  );
}

/// A staged change's apply (all its hunks or those chosen) and reject; an applied one's roll back.
function ChangeActions({
  diff,
  chosen,
  busy,
  act,
}: {
  diff: ChangeDiff;
  chosen: Set<number>;
  busy: boolean;
  act: Act;
}) {
  const c = diff.change;
  const all = chosen.size === diff.hunks.length;
  return (
    <div class="row">
      {c.status === "staged" && (
        <>
          <button
            type="button"
            class="primary"
            data-action="apply"
            disabled={busy || chosen.size === 0 || diff.conflict}
            onClick={() =>
              act(
                "changes_apply",
                all ? { id: c.id } : { id: c.id, hunks: [...chosen].sort((a, b) => a - b) },
                t("appliedNote"),
              )
            }
          >
            {all ? t("applyAll") : `${t("applySelected")} (${chosen.size}/${diff.hunks.length})`}
          </button>
          <button
            type="button"
            data-action="reject"
            disabled={busy}
            onClick={() => act("changes_reject", { id: c.id }, t("rejectedNote"))}
          >
            {t("reject")}
          </button>
        </>
      )}
      {c.status === "applied" && (
        <button
          type="button"
          data-action="rollback"
          disabled={busy}
          onClick={() => act("changes_rollback", { id: c.id }, t("rolledBackNote"))}
        >
          {t("rollback")}
        </button>
      )}
      {busy && <span class="spinner" />}
    </div>
  );
}

/// The changes with one status, each with its diff; listed again when the status changes and
/// as the assistant stages new writes.
function useChanges(conversation: string | null, status: ChangeStatus) {
  const [diffs, setDiffs] = useState<ChangeDiff[]>([]);
  const [error, setError] = useState("");
  const load = async () => {
    try {
      const list = await call<{ changes: { id: number }[] }>("changes_list", { status }, conversation);
      setDiffs(
        await Promise.all(list.changes.map((c) => call<ChangeDiff>("changes_diff", { id: c.id }, conversation))),
      );
      setError("");
    } catch (e) {
      setError(String(e instanceof Error ? e.message : e));
    }
  };
  useEffect(() => {
    load();
  }, [status]);
  useEffect(() => {
    const un = on("tool-event", (e) => {
      if (e.type === "completed" && ["write_file", "edit_file"].includes(e.tool)) load();
    });
    return () => {
      un.then((f) => f());
    };
  }, [status]);
  return { diffs, error, load };
}

const STATUSES: ChangeStatus[] = ["staged", "applied", "rejected", "rolled_back"];

export function ChangesView({ conversation }: { conversation: string | null }) {
  const [status, setStatus] = useState<ChangeStatus>("staged");
  const { diffs, error, load } = useChanges(conversation, status);
  const [note, setNote] = useState("");
  return (
    <div class="page changes" data-testid="changes">
      <h1>{t("reviewChanges")}</h1>
      <p class="muted">{t("changesHint")}</p>
      <div class="row">
        <div class="row" role="tablist">
          {STATUSES.map((s) => (
            <button
              type="button"
              key={s}
              role="tab"
              aria-selected={s === status}
              class={s === status ? "nav active" : "nav"}
              data-filter={s}
              onClick={() => setStatus(s)}
            >
              {t(s)}
            </button>
          ))}
        </div>
        <button type="button" onClick={load} title="F5" aria-label={t("refresh")}>
          ↻
        </button>
      </div>
      {note && (
        <p class="ok" role="status">
          {note}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {diffs.length === 0 && !error && (
        <p class="muted" data-testid="no-changes">
          {t("noChanges")}
        </p>
      )}
      {diffs.map((d) => (
        <ChangeCard
          key={`${d.change.id}-${d.change.status}`}
          diff={d}
          conversation={conversation}
          onChanged={(m) => {
            setNote(m);
            load();
          }}
        />
      ))}
    </div>
  );
}
