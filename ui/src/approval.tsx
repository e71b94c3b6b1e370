// The approval modal. Never dismissable into "allow" by accident: no backdrop click, Escape
// denies, allow buttons arm only after a short delay, shortcuts need Alt, Deny has the focus.
import { useEffect, useRef, useState } from "preact/hooks";
import {
  type ApprovalRequest,
  api,
  type Choice,
  type ElicitationAnswer,
  type ElicitationRequest,
  type Value,
} from "./api";
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

export function ApprovalModal({ request, onDone }: { request: ApprovalRequest; onDone: () => void }) {
  const [armed, setArmed] = useState(false);
  const [busy, setBusy] = useState(false);
  const [details, setDetails] = useState(false);
  const denyRef = useRef<HTMLButtonElement>(null);
  const r = request.review;
  const plain = request.plain;

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
      const map: Record<string, Choice> = {
        o: "once",
        c: "conversation",
        a: "always",
        w: "always_workspace",
        d: "deny",
      };
      const choice = map[e.key.toLowerCase()];
      if (choice && request.choices.includes(choice)) {
        e.preventDefault();
        answer(choice);
      }
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, [request.call_id, armed, busy]);

  const level = r.score >= 7 ? "high" : r.score >= 4 ? "medium" : "low";
  const label: Record<Choice, string> = {
    once: t("once"),
    conversation: t("conversation"),
    always: t("always"),
    always_workspace: t("alwaysWorkspace"),
    deny: t("deny"),
  };
  const key: Record<Choice, string> = {
    once: "Alt+O",
    conversation: "Alt+C",
    always: "Alt+A",
    always_workspace: "Alt+W",
    deny: "Esc",
  };
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
        {!mailPreview(request) && argLines(request.tool, request.args).length > 0 && (
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
        {mailPreview(request)}
        <button
          type="button"
          class="details-toggle"
          aria-expanded={details}
          onClick={() => setDetails(!details)}
          data-testid="approval-details-toggle"
        >
          {details ? "▾" : "▸"} {t("details")} <kbd>Alt+I</kbd>
        </button>
        {details && (
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
        )}
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
                {label[c]} <kbd>{key[c]}</kbd>
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
            {label.deny} <kbd>{key.deny}</kbd>
          </button>
        </div>
      </div>
    </div>
  );
}

/// The part of an elicitation's JSON Schema the form renders (MCP allows flat objects only).
interface FormSchema {
  properties?: Record<
    string,
    { type?: string; title?: string; description?: string; enum?: string[]; items?: { enum?: string[] } }
  >;
  required?: string[];
}

/// An MCP server's form (elicitation). Nothing is sent unless the person presses Send; Escape
/// declines. Values are typed per the schema (numbers, booleans, enums).
export function ElicitationModal({ request, onDone }: { request: ElicitationRequest; onDone: () => void }) {
  const schema = (request.schema ?? {}) as FormSchema;
  const fields = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const [values, setValues] = useState<Record<string, unknown>>({});
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  const reply = async (answer: ElicitationAnswer) => {
    if (busy) return;
    setBusy(true);
    try {
      await api.answerElicitation(request.id, answer);
    } catch {
      /* timed out meanwhile: declined */
    }
    onDone();
  };
  useEffect(() => {
    setValues({});
    setBusy(false);
    first.current?.focus();
    const keys = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        reply({ action: "decline" });
      }
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, [request.id]);
  const missing = [...required].some((k) => values[k] === undefined || values[k] === "");
  return (
    <div class="modal-backdrop">
      <div class="modal" role="dialog" aria-modal="true" aria-labelledby="form-title" data-testid="elicitation-modal">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!missing) reply({ action: "accept", content: values as { [key: string]: Value } });
          }}
        >
          <h2 id="form-title">{t("formTitle")}</h2>
          <blockquote class="quoted" data-testid="form-words">
            <span class="caller">
              {t("formFrom")} {request.from}:
            </span>{" "}
            {request.message}
          </blockquote>
          {fields.map(([key, f], i) => (
            // biome-ignore lint/a11y/noLabelWithoutControl: the control is inside, behind a condition the linter cannot follow
            <label class="field" key={key}>
              {f.title ?? key}
              {required.has(key) ? " *" : ""}
              {f.description && <span class="desc"> — {f.description}</span>}
              {f.type === "array" && f.items?.enum ? (
                <span class="options" data-field={key}>
                  {f.items.enum.map((o) => (
                    <label class="check" key={o}>
                      <input
                        type="checkbox"
                        value={o}
                        onChange={(e) => {
                          const picked = new Set((values[key] as string[] | undefined) ?? []);
                          if (e.currentTarget.checked) picked.add(o);
                          else picked.delete(o);
                          setValues({ ...values, [key]: f.items!.enum!.filter((x) => picked.has(x)) });
                        }}
                      />{" "}
                      {o}
                    </label>
                  ))}
                </span>
              ) : f.enum && f.enum.length <= 4 ? (
                <span class="options" data-field={key}>
                  {f.enum.map((o) => (
                    <label class="check" key={o}>
                      <input
                        type="radio"
                        name={`${request.id}-${key}`}
                        value={o}
                        onChange={() => setValues({ ...values, [key]: o })}
                      />{" "}
                      {o}
                    </label>
                  ))}
                </span>
              ) : f.enum ? (
                <select onChange={(e) => setValues({ ...values, [key]: e.currentTarget.value })}>
                  <option value="" />
                  {f.enum.map((o) => (
                    <option value={o}>{o}</option>
                  ))}
                </select>
              ) : f.type === "boolean" ? (
                <input type="checkbox" onChange={(e) => setValues({ ...values, [key]: e.currentTarget.checked })} />
              ) : f.type === "number" || f.type === "integer" ? (
                <input
                  ref={i === 0 ? first : undefined}
                  type="number"
                  data-field={key}
                  onInput={(e) => {
                    const v = e.currentTarget.value;
                    setValues({ ...values, [key]: v === "" ? "" : Number(v) });
                  }}
                />
              ) : (
                <input
                  ref={i === 0 ? first : undefined}
                  type="text"
                  data-field={key}
                  onInput={(e) => setValues({ ...values, [key]: e.currentTarget.value })}
                />
              )}
            </label>
          ))}
          <div class="choices">
            <button type="submit" class="allow" disabled={busy || missing} data-choice="accept">
              {t("submit")}
            </button>
            <button type="button" disabled={busy} onClick={() => reply({ action: "cancel" })} data-choice="cancel">
              {t("cancel")}
            </button>
            <button
              type="button"
              class="deny"
              disabled={busy}
              onClick={() => reply({ action: "decline" })}
              data-choice="decline"
            >
              {t("decline")} <kbd>Esc</kbd>
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}
