// The approval modal. Never dismissable into "allow" by accident: no backdrop click, Escape
// denies, allow buttons arm only after a short delay, shortcuts need Alt, Deny has the focus.
import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { type ApprovalRequest, api, type Choice } from "./api";
import { argLabel, argOrder, formatDate, phrase, sourceLabel, t } from "./i18n";

const ARM_DELAY_MS = 400;

function describe(effect: { kind: string; [k: string]: unknown }): string {
  const args = Object.entries(effect)
    .filter(([k]) => k !== "kind")
    .map(([, v]) => (Array.isArray(v) ? v.join(", ") : String(v)));
  return args.length ? `${effect.kind}(${args.join(" → ")})` : effect.kind;
}

/// The call's short text arguments as the person reads them ("Title: Buy milk"), not JSON: what
/// exactly will be made or changed. Long texts, lists and objects stay in the details.
function argLines(tool: string, args: unknown): [string, string][] {
  if (!args || typeof args !== "object" || Array.isArray(args)) return [];
  const record = args as Record<string, unknown>;
  return (
    argOrder(tool, Object.keys(record))
      .map((k): [string, unknown] => [k, record[k]])
      .filter(
        ([k, v]) =>
          k !== "description" &&
          (typeof v === "string" || typeof v === "number") &&
          String(v).length > 0 &&
          String(v).length <= 200,
      )
      .slice(0, 4)
      // A time reads as a time in the person's zone and language, not as RFC 3339.
      .map(([k, v]) => [
        argLabel(k),
        typeof v === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(v) ? formatDate(v) : String(v),
      ])
  );
}

/// A toolpack's question to the person's model (MCP sampling): its words, quoted as its own, so
/// the person reads exactly what the model would be asked.
function samplingPreview(request: ApprovalRequest) {
  if (request.tool !== "mcp_sampling") return null;
  const args = (request.args ?? {}) as Record<string, unknown>;
  const messages = Array.isArray(args.messages) ? (args.messages as Record<string, unknown>[]) : [];
  return (
    <div class="sampling-preview" data-testid="sampling-preview">
      {typeof args.system === "string" && args.system && (
        <blockquote class="quoted">
          <span class="caller">{t("samplingSystem")}</span> {args.system}
        </blockquote>
      )}
      {messages.map((m) => (
        <blockquote class="quoted">
          <span class="caller">{t(m.from === "model" ? "samplingModelSaid" : "samplingServerSays")}</span>{" "}
          {String(m.text ?? "")}
        </blockquote>
      ))}
    </div>
  );
}

/// Sending mail is the riskiest thing the assistant does: show it as the person would read it.
function mailPreview(request: ApprovalRequest) {
  if (request.tool !== "email_send" && request.tool !== "email_reply") return null;
  const args = (request.args ?? {}) as Record<string, unknown>;
  const send = request.effects.find((e) => e.kind === "mail.send");
  const recipients = (send?.recipients as string[] | undefined) ?? [];
  const list = (v: unknown) => (Array.isArray(v) ? v.join(", ") : "");
  return (
    <div class="mail-preview" data-testid="mail-preview">
      <h3>{t("mailPreview")}</h3>
      <dl>
        <dt>{t("mailFrom")}</dt>
        <dd>{String(send?.account ?? "")}</dd>
        <dt>{t("mailTo")}</dt>
        <dd data-testid="mail-to">{recipients.join(", ")}</dd>
        {list(args.cc) && (
          <>
            <dt>Cc</dt>
            <dd>{list(args.cc)}</dd>
          </>
        )}
        {list(args.bcc) && (
          <>
            <dt>Bcc</dt>
            <dd>{list(args.bcc)}</dd>
          </>
        )}
        <dt>{t("mailSubject")}</dt>
        <dd data-testid="mail-subject">{String(args.subject ?? `Re: …`)}</dd>
        {list(args.attachments) && (
          <>
            <dt>{t("mailAttachments")}</dt>
            <dd>{list(args.attachments)}</dd>
          </>
        )}
      </dl>
      <pre class="mail-body" data-testid="mail-body">
        {String(args.body ?? "")}
      </pre>
    </div>
  );
}

/// The answer: once (not before the buttons arm, not twice), then the next request.
/// Escape denies; Alt+O/C/A/W/D choose, Alt+I opens the details.
function useApprovalAnswer(request: ApprovalRequest, onDone: () => void) {
  const [armed, setArmed] = useState(false);
  const [busy, setBusy] = useState(false);
  const [details, setDetails] = useState(false);
  const denyRef = useRef<HTMLButtonElement>(null);
  const answer = async (choice: Choice) => {
    if (busy || (choice !== "deny" && !armed)) return;
    setBusy(true);
    try {
      await api.answerApproval(request.call_id, choice);
    } catch {
      /* timed out meanwhile: the call was denied */
    }
    onDone();
  };
  // Arm once per request: the allow buttons work only after a short look at the request.
  useEffect(() => {
    setArmed(false);
    setBusy(false);
    setDetails(false);
    denyRef.current?.focus();
    const timer = setTimeout(() => setArmed(true), ARM_DELAY_MS);
    return () => clearTimeout(timer);
  }, [request.call_id]);
  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        answer("deny");
        return;
      }
      if (!e.altKey) return;
      if (e.key.toLowerCase() === "i") {
        e.preventDefault();
        setDetails((open) => !open);
        return;
      }
      const choice = CHOICE_KEYS[e.key.toLowerCase()];
      if (choice && request.choices.includes(choice)) {
        e.preventDefault();
        answer(choice);
      }
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, [request.call_id, armed, busy]);
  return { armed, busy, details, setDetails, denyRef, answer };
}

const CHOICE_KEYS: Record<string, Choice> = {
  o: "once",
  c: "conversation",
  a: "always",
  w: "always_workspace",
  d: "deny",
};

export function ApprovalModal({ request, onDone }: { request: ApprovalRequest; onDone: () => void }) {
  const a = useApprovalAnswer(request, onDone);
  const { details, setDetails } = a;
  return (
    <div class="modal-backdrop">
      <div
        class="modal"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="approval-title"
        data-testid="approval-modal"
      >
        <h2 id="approval-title">{t("approvalTitle")}</h2>
        {request.asker && (
          <p class="asker" data-testid="approval-asker">
            {t("askedByApp")} <q>{request.asker}</q>
          </p>
        )}
        {request.view_of && (
          <p class="asker" data-testid="approval-asker">
            {t("askedByView")} <q>{request.view_of}</q>
          </p>
        )}
        {request.sub_agent && (
          <p class="asker" data-testid="approval-asker">
            {t("askedBySubAgent")} <q>{request.sub_agent}</q>
          </p>
        )}
        <PlainRequest request={request} />
        {mailPreview(request)}
        {samplingPreview(request)}
        <button
          type="button"
          class="details-toggle"
          aria-expanded={details}
          onClick={() => setDetails(!details)}
          data-testid="approval-details-toggle"
        >
          {details ? "▾" : "▸"} {t("details")} <kbd>Alt+I</kbd>
        </button>
        {details && <ApprovalDetails request={request} />}
        <Choices request={request} {...a} />
      </div>
    </div>
  );
}

/// What the call does, where, and what it writes, in the person's words; whether it can be
/// undone; what the assistant said; the risk and its first reason.
function PlainRequest({ request }: { request: ApprovalRequest }) {
  const { review: r, plain } = request;
  const level = r.score >= 7 ? "high" : r.score >= 4 ? "medium" : "low";
  return (
    <>
      <ul class="plain-what" data-testid="plain-what">
        {plain.what.map((w) => (
          <li>{phrase(w)}</li>
        ))}
      </ul>
      {plain.place && (
        <p class="plain-place" data-testid="plain-place">
          {phrase(plain.place)}
        </p>
      )}
      {!mailPreview(request) && !samplingPreview(request) && argLines(request.tool, request.args).length > 0 && (
        <dl class="plain-args" data-testid="plain-args">
          {argLines(request.tool, request.args).map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </>
          ))}
        </dl>
      )}
      <p class={`plain-undo ${plain.undo}`} data-testid="plain-undo">
        {t(`undo_${plain.undo}` as "undo_undoable")}
      </p>
      {plain.reason && (
        <blockquote class="quoted" data-testid="plain-reason">
          <span class="caller">{t("assistantSays")}</span> {plain.reason}
        </blockquote>
      )}
      <p class="risk-line">
        <span class={`risk ${level}`} data-testid="risk-score">
          {t(level === "high" ? "riskHigh" : level === "medium" ? "riskMedium" : "riskLow")} · {r.score}/10
        </span>{" "}
        <span class="why">{r.reasons[0] && phrase(r.reasons[0])}</span>
      </p>
      {r.tainted_by && (
        <p class="taint">
          ⚠ {t("tainted")} {r.tainted_by}
        </p>
      )}
      {r.unsaid && (
        <p class="taint" data-testid="unsaid">
          {t("unsaid")} <q>{r.unsaid}</q>
        </p>
      )}
    </>
  );
}

/// The review in full: the tool, every reason with its points, what a grant covers, the rule
/// that matched, the effects and the arguments as JSON.
function ApprovalDetails({ request }: { request: ApprovalRequest }) {
  const r = request.review;
  return (
    <div class="approval-details" data-testid="approval-details">
      <p class="tool-line">
        <code>{request.tool}</code> — {request.title} <span class="caller">({request.caller})</span>
      </p>
      <ul class="reasons">
        {r.reasons.map((x) => (
          <li>
            {x.points > 0 ? "+" : ""}
            {x.points} {phrase(x)}
          </li>
        ))}
      </ul>
      <p class="why">{r.why}</p>
      {request.grants.length > 0 && (
        <p class="grant-scope" data-testid="grant-scope">
          {t("grantCovers")}{" "}
          {request.grants.map((g) => (
            <code key={g}>{g}</code>
          ))}
        </p>
      )}
      <p class="rule">
        {t("rule")}:{" "}
        {r.matched ? (
          <code>
            {r.matched.action} {r.matched.rule} ({sourceLabel(r.matched.source)})
          </code>
        ) : (
          <em>{t("noRule")}</em>
        )}
      </p>
      <p class="annotations" data-testid="annotations">
        {t("toolSays")}{" "}
        {(["read_only", "destructive", "idempotent", "open_world", "undoable"] as const)
          .filter((k) => request.annotations?.[k])
          .map((k) => t(`hint_${k}` as "hint_read_only"))
          .join(" · ") || t("hint_none")}
      </p>
      <h3>{t("effects")}</h3>
      <ul class="effects">
        {request.effects.length ? (
          request.effects.map((e) => (
            <li>
              <code>{describe(e)}</code>
            </li>
          ))
        ) : (
          <li>
            <em>—</em>
          </li>
        )}
      </ul>
      <h3>{t("arguments")}</h3>
      <pre class="args">{JSON.stringify(request.args, null, 2)}</pre>
    </div>
  );
}

const KEY: Record<Choice, string> = {
  once: "Alt+O",
  conversation: "Alt+C",
  always: "Alt+A",
  always_workspace: "Alt+W",
  deny: "Esc",
};

/// The allow buttons (armed after a short delay) and Deny, which has the focus.
function Choices({
  request,
  armed,
  busy,
  denyRef,
  answer,
}: {
  request: ApprovalRequest;
  armed: boolean;
  busy: boolean;
  denyRef: RefObject<HTMLButtonElement | null>;
  answer: (choice: Choice) => void;
}) {
  const label: Record<Choice, string> = {
    once: t("once"),
    // Another app's grant is that app's own, not this conversation's.
    conversation: request.asker
      ? t("forThisApp")
      : request.view_of
        ? t("forThisView")
        : request.sub_agent
          ? t("forThisSubAgent")
          : request.tool === "mcp_sampling"
            ? t("forThisToolpack")
            : t("conversation"),
    always: t("always"),
    always_workspace: t("alwaysWorkspace"),
    deny: t("deny"),
  };
  return (
    <div class="choices">
      {request.choices
        .filter((c) => c !== "deny")
        .map((c) => (
          <button
            type="button"
            key={c}
            class="allow"
            disabled={!armed || busy}
            onClick={() => answer(c)}
            data-choice={c}
            title={c === "once" ? undefined : request.grants.join(", ")}
          >
            {label[c]} <kbd>{KEY[c]}</kbd>
          </button>
        ))}
      <button
        type="button"
        ref={denyRef}
        class="deny"
        disabled={busy}
        onClick={() => answer("deny")}
        data-choice="deny"
      >
        {label.deny} <kbd>{KEY.deny}</kbd>
      </button>
    </div>
  );
}
