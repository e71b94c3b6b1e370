// Settings → Accounts: CalDAV calendars and IMAP/SMTP mail. Passwords go straight to the OS
// keyring through the shell and never come back. "Test" is an audited call (calendar_sync or
// email_check) like any other.
import { useEffect, useState } from "preact/hooks";
import { type Account, api, on, type Security } from "./api";
import { t } from "./i18n";

function hostPort(text: string, port: number): [string, number] {
  const i = text.lastIndexOf(":");
  return i > 0 ? [text.slice(0, i), Number(text.slice(i + 1)) || port] : [text, port];
}

export function AccountsSettings() {
  const [accounts, setAccounts] = useState<Account[]>([]);
  const [kind, setKind] = useState<"caldav" | "mail">("caldav");
  const blank = {
    name: "",
    url: "",
    username: "",
    email: "",
    imap: "",
    smtp: "",
    security: "tls" as Security,
    password: "",
  };
  const [form, setForm] = useState(blank);
  const [status, setStatus] = useState<Record<string, string>>({});
  const load = () =>
    api
      .listAccounts()
      .then(setAccounts)
      .catch((e) => setStatus({ "": String(e) }));
  useEffect(() => {
    load();
  }, []);
  const field = (key: keyof typeof form, label: string, type: "text" | "password" = "text") => (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is inside, behind a condition the linter cannot follow
    <label>
      {label}
      {type === "password" ? (
        <input
          type="password"
          autocomplete="off"
          value={form[key]}
          onInput={(e) => setForm({ ...form, [key]: e.currentTarget.value })}
          data-field={key}
        />
      ) : (
        <input
          type="text"
          value={form[key]}
          onInput={(e) => setForm({ ...form, [key]: e.currentTarget.value })}
          data-field={key}
        />
      )}
    </label>
  );
  const add = async () => {
    const defaults: Record<Security, [number, number]> = { tls: [993, 465], starttls: [143, 587], plain: [143, 25] };
    const [imapHost, imapPort] = hostPort(form.imap, defaults[form.security][0]);
    const [smtpHost, smtpPort] = hostPort(form.smtp, defaults[form.security][1]);
    const account: Account =
      kind === "caldav"
        ? { name: form.name, kind, url: form.url, username: form.username }
        : {
            name: form.name,
            kind,
            email: form.email,
            username: form.username || form.email,
            imap_host: imapHost,
            imap_port: imapPort,
            imap_security: form.security,
            smtp_host: smtpHost,
            smtp_port: smtpPort,
            smtp_security: form.security,
          };
    try {
      await api.addAccount(account, form.password);
      setForm(blank);
      setStatus({ [account.name]: t("saved") });
      load();
    } catch (e) {
      setStatus({ "": String(e) });
    }
  };
  const test = async (name: string) => {
    setStatus({ ...status, [name]: "…" });
    const r = await api.testAccount(name).catch((e) => ({ ok: false, text: String(e) }));
    setStatus({ ...status, [name]: `${r.ok ? "✓" : "✗"} ${r.text.split("\n")[0]}` });
  };
  return (
    <fieldset data-testid="accounts">
      <legend>{t("accounts")}</legend>
      <p class="hint">{t("accountsHint")}</p>
      {accounts.length === 0 && <p class="hint">{t("noAccounts")}</p>}
      <table class="rules">
        <tbody>
          {accounts.map((a) => (
            <tr key={a.name}>
              <td>
                <strong>{a.name}</strong>
              </td>
              <td>
                {a.kind === "caldav"
                  ? `${t("calendarAccount")} · ${a.username} @ ${a.url}`
                  : `${t("mailAccount")} · ${a.email}`}
              </td>
              <td>
                <button type="button" onClick={() => test(a.name)}>
                  {t("testAccount")}
                </button>{" "}
                <button
                  type="button"
                  onClick={async () => {
                    await api.removeAccount(a.name);
                    load();
                  }}
                >
                  {t("remove")}
                </button>
              </td>
              <td class="status">{status[a.name]}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="row">
        <label class="inline">
          <input type="radio" name="kind" checked={kind === "caldav"} onChange={() => setKind("caldav")} />
          {t("calendarAccount")}
        </label>
        <label class="inline">
          <input type="radio" name="kind" checked={kind === "mail"} onChange={() => setKind("mail")} />
          {t("mailAccount")}
        </label>
      </div>
      {field("name", t("accountName"))}
      {kind === "caldav" ? (
        <>
          {field("url", t("serverUrl"))}
          {field("username", t("userName"))}
        </>
      ) : (
        <>
          {field("email", t("emailAddress"))}
          {field("imap", t("imapServer"))}
          {field("smtp", t("smtpServer"))}
          {field("username", t("userName"))}
          <label>
            {t("security")}
            <select
              value={form.security}
              onChange={(e) => setForm({ ...form, security: e.currentTarget.value as Security })}
            >
              <option value="tls">TLS</option>
              <option value="starttls">STARTTLS</option>
              <option value="plain">plain (127.0.0.1 only)</option>
            </select>
          </label>
        </>
      )}
      {field("password", t("password"), "password")}
      <button type="button" class="primary" disabled={!form.name || !form.password} onClick={add}>
        {t("addAccount")}
      </button>{" "}
      <span class="status">{status[""]}</span>
    </fieldset>
  );
}

/// The Undo bar: while a sent message waits out its undo delay, it shows with a countdown and an
/// Undo button (the `email_undo` tool, reviewed and audited).
export function OutboxBar({ conversation }: { conversation: string | null }) {
  const [queued, setQueued] = useState<{ id: number; subject: string; recipients: string[]; at: number }[]>([]);
  const [note, setNote] = useState("");
  const [now, setNow] = useState(Date.now());
  const refresh = () =>
    api
      .outbox()
      .then((rows) =>
        setQueued(
          rows
            .filter((r) => r.state === "queued")
            .map((r) => ({ id: r.id, subject: r.subject, recipients: r.recipients, at: Date.parse(r.send_after) })),
        ),
      )
      .catch(() => {});
  // Queued mail appears with the send's tool event and leaves when its time comes (read again
  // then); the one-second tick only moves the countdown on screen.
  useEffect(() => {
    refresh();
    const un = on("tool-event", (e) => {
      if (e.type === "completed" || e.type === "failed") refresh();
    });
    return () => {
      un.then((f) => f());
    };
  }, []);
  useEffect(() => {
    if (queued.length === 0) return;
    const tick = setInterval(() => setNow(Date.now()), 1000);
    const due = Math.max(0, Math.min(...queued.map((q) => q.at)) - Date.now()) + 1500;
    const leave = setTimeout(refresh, due);
    return () => {
      clearInterval(tick);
      clearTimeout(leave);
    };
  }, [queued]);
  if (queued.length === 0)
    return note ? (
      <div class="outbox-bar" role="status">
        {note}
      </div>
    ) : null;
  return (
    <div class="outbox-bar" role="status" data-testid="outbox-bar">
      {queued.map((q) => (
        <div key={q.id} class="row">
          <span>
            {t("mailQueued")} “{q.subject}” → {q.recipients.join(", ")} — {t("sendsIn")}{" "}
            {Math.max(0, Math.ceil((q.at - now) / 1000))} s
          </span>
          <button
            type="button"
            data-testid="undo-send"
            onClick={async () => {
              const r = await api.callTool("email_undo", { id: q.id }, conversation ?? "outbox", `undo-${q.id}`);
              setNote(r.ok ? t("undone") : r.text);
              setTimeout(() => setNote(""), 5000);
              refresh();
            }}
          >
            {t("undo")}
          </button>
        </div>
      ))}
    </div>
  );
}
