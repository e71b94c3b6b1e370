import { useEffect, useState } from "preact/hooks";
import { api, type WorkspaceReview } from "./api";
import { phrase, t } from "./i18n";

/** Whether trusting would change anything: allow rules, a mode, programs its repository runs. */
function wantsSomething(r: WorkspaceReview): boolean {
  return (
    r.state !== "trusted" &&
    (r.allow.length > 0 || r.mode !== null || r.repository_programs.length > 0 || r.hooks.length > 0)
  );
}

// "Keep untrusted" is remembered for the folder as it is now (its settings' digest): the dialog
// asks again only when what trusting would allow changes.
const KEPT = "trust-kept";
function keptDigests(): Record<string, string> {
  try {
    return JSON.parse(localStorage.getItem(KEPT) ?? "{}") as Record<string, string>;
  } catch {
    return {};
  }
}
function rememberKept(r: WorkspaceReview) {
  localStorage.setItem(KEPT, JSON.stringify({ ...keptDigests(), [r.root]: r.digest }));
}

/** The person asks to see a folder's trust dialog again (the workspace menu). */
export function reviewTrust(root: string) {
  const kept = keptDigests();
  delete kept[root];
  localStorage.setItem(KEPT, JSON.stringify(kept));
  window.dispatchEvent(new Event("trust-review"));
}

/** The folders whose trust the person has not answered (nor kept untrusted as they are now),
 * the first one shown; keep it untrusted or trust it. */
function useTrustQueue() {
  const [reviews, setReviews] = useState<WorkspaceReview[]>([]);
  const [error, setError] = useState("");
  const load = () =>
    api
      .workspaceReviews()
      .then((all) => {
        const kept = keptDigests();
        setReviews(all.filter((r) => wantsSomething(r) && kept[r.root] !== r.digest));
      })
      .catch(() => {});
  useEffect(() => {
    load();
    window.addEventListener("trust-review", load);
    return () => window.removeEventListener("trust-review", load);
  }, []);
  const review = reviews[0];
  const next = () => setReviews((q) => q.slice(1));
  const keep = () => {
    rememberKept(review);
    next();
  };
  const trust = async () => {
    try {
      await api.trustWorkspace(review.root, review.digest);
      setError("");
      next();
    } catch (e) {
      setError(String(e));
      load();
    }
  };
  return { review, error, keep, trust };
}

/**
 * A folder's own settings only narrow until the person trusts it. This dialog shows exactly
 * what trusting would allow — every rule and program as the folder wrote it, framed as the
 * folder's words — and trusts only on an explicit choice (Alt+T); Escape keeps it untrusted.
 */
export function TrustDialog({ hidden }: { hidden: boolean }) {
  const { review, error, keep, trust } = useTrustQueue();
  useEffect(() => {
    if (!review || hidden) return;
    const keys = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        keep();
      }
      if (e.altKey && e.key.toLowerCase() === "t") {
        e.preventDefault();
        trust();
      }
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, [review, hidden]);
  if (!review || hidden) return null;
  return (
    <div class="modal-backdrop">
      <div class="modal" role="dialog" aria-modal="true" aria-labelledby="trust-title" data-testid="trust-dialog">
        <h2 id="trust-title">{review.state === "changed" ? t("trustChangedTitle") : t("trustTitle")}</h2>
        <p>
          <code>{review.root}</code>
        </p>
        <p class="hint">{t("trustExplain")}</p>
        <WhatTrustAllows review={review} />
        {error && <p class="error">{error}</p>}
        <div class="row">
          {/* biome-ignore lint/a11y/noAutofocus: the safe choice has the focus, so Enter never trusts by accident */}
          <button type="button" onClick={keep} autoFocus>
            {t("trustKeep")} (Esc)
          </button>
          {/* biome-ignore lint/a11y/noAccessKey: Alt+T is the shown keyboard way to trust; Esc keeps the folder untrusted */}
          <button type="button" class="danger" onClick={trust} accessKey="t">
            {t("trustYes")} (Alt+T)
          </button>
        </div>
      </div>
    </div>
  );
}

/** The programs the repository would run, the allow rules (and why a broad one is broad), the
 * mode, and the rules that only narrow. */
function WhatTrustAllows({ review }: { review: WorkspaceReview }) {
  return (
    <>
      {review.repository_programs.length > 0 && (
        <div class="trust-programs" data-testid="trust-programs">
          <h3>⚠ {t("trustPrograms")}</h3>
          <ul class="quoted">
            {review.repository_programs.map((p) => (
              <li key={p}>
                <code>{p}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
      {review.hooks.length > 0 && (
        <div class="trust-programs" data-testid="trust-hooks">
          <h3>⚠ {t("trustHooks")}</h3>
          <ul class="quoted">
            {review.hooks.map((h) => (
              <li key={h}>
                <code>{h}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
      <h3>{t("trustWouldAllow")}</h3>
      {review.allow.length === 0 ? (
        <p class="hint">{t("trustNoAllow")}</p>
      ) : (
        <ul class="quoted" data-testid="trust-allow">
          {review.allow.map((r) => (
            <li key={r}>
              <code>{r}</code>
            </li>
          ))}
        </ul>
      )}
      {review.broad.map((w) => (
        <p key={w.text} class="error">
          ⚠ {phrase(w)}
        </p>
      ))}
      {review.mode && (
        <p>
          {t("trustMode")} <code>{review.mode}</code>
        </p>
      )}
      {(review.ask.length > 0 || review.deny.length > 0) && (
        <p class="hint">
          {t("trustNarrowing")}:{" "}
          {[...review.deny, ...review.ask].map((r) => (
            <code key={r}>{r} </code>
          ))}
        </p>
      )}
    </>
  );
}
