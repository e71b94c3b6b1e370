// Settings → Accounts: CalDAV calendars and IMAP/SMTP mail. A mail account is added by its
// address: the shell finds its servers, the person sees them in words and either signs in in
// their browser (OAuth) or gives a password. Passwords and tokens go straight to the OS keyring
// through the shell and never come back. "Test" is an audited call (calendar_sync or
// email_check) like any other.
import { useEffect, useState } from "preact/hooks";
import { type Account, type AccountConfig, api, type FoundMailSetup, on, type Security } from "./api";
import { t } from "./i18n";

function hostPort(text: string, port: number): [string, number] {
  const i = text.lastIndexOf(":");
  return i > 0 ? [text.slice(0, i), Number(text.slice(i + 1)) || port] : [text, port];
}

type Form = {
  name: string;
  url: string;
  username: string;
  email: string;
  imap: string;
  smtp: string;
  security: Security;
  password: string;
};
const BLANK: Form = {
  name: "",
  url: "",
  username: "",
  email: "",
  imap: "",
  smtp: "",
  security: "tls",
  password: "",
};
type Kind = "caldav" | "mail";

/// The account the form describes (a server typed without a port gets its security's default).
function toAccount(kind: Kind, form: Form): Account {
  const defaults: Record<Security, [number, number]> = { tls: [993, 465], starttls: [143, 587], plain: [143, 25] };
  const [imapHost, imapPort] = hostPort(form.imap, defaults[form.security][0]);
  const [smtpHost, smtpPort] = hostPort(form.smtp, defaults[form.security][1]);
  return kind === "caldav"
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
}

/// The accounts, which OAuth ones are signed in, and a status per account (`""`: the page's own).
function useAccounts() {
  const [accounts, setAccounts] = useState<Account[]>([]);
  const [signedIn, setSignedIn] = useState<string[]>([]);
  const [status, setStatus] = useState<Record<string, string>>({});
  const load = () =>
    Promise.all([api.listAccounts(), api.signedInAccounts()])
      .then(([all, signed]) => {
        setAccounts(all);
        setSignedIn(signed);
      })
      .catch((e) => setStatus({ "": String(e) }));
  useEffect(() => {
    load();
  }, []);
  const test = async (name: string) => {
    setStatus({ ...status, [name]: "…" });
    const r = await api.testAccount(name).catch((e) => ({ ok: false, text: String(e) }));
    setStatus({ ...status, [name]: `${r.ok ? "✓" : "✗"} ${r.text.split("\n")[0]}` });
  };
  // The person's browser opens at the provider's page; the shell waits for it to come back.
  const signIn = async (name: string) => {
    try {
      const url = await api.beginSignIn(name);
      setStatus({ ...status, [name]: `${t("signInWaiting")} ${url}` });
      await api.finishSignIn(name);
      setStatus({ ...status, [name]: t("signedInNow") });
    } catch (e) {
      setStatus({ ...status, [name]: String(e) });
    }
    load();
  };
  const signOut = async (name: string) => {
    try {
      const notRevoked = await api.signOut(name);
      setStatus({ ...status, [name]: notRevoked ? `${t("notRevoked")} (${notRevoked})` : t("signedOutNow") });
    } catch (e) {
      setStatus({ ...status, [name]: String(e) });
    }
    load();
  };
  return { accounts, signedIn, status, setStatus, load, test, signIn, signOut };
}

const isOauth = (a: AccountConfig) => a.auth?.method === "oauth";

/// The account's servers and sign-in, in words (what the person confirms before adding it).
function describe(a: AccountConfig): [string, string][] {
  const security = (s: Security) => (s === "plain" ? t("unencrypted") : s === "tls" ? "TLS" : "STARTTLS");
  const signIn =
    a.auth?.method === "oauth" ? `${t("signInBrowser")} ${a.auth.issuer}` : `${t("signInPassword")} ${a.username}`;
  if (a.kind !== "mail") {
    const where = a.kind === "caldav" ? `CalDAV ${a.url}` : `${t("m365Via")} (${a.url})`;
    return [
      [t("calendarsAt"), where],
      [t("signInHow"), signIn],
    ];
  }
  return [
    [t("readMail"), `IMAP ${a.imap_host}:${a.imap_port} (${security(a.imap_security)})`],
    [t("sendMail"), `SMTP ${a.smtp_host}:${a.smtp_port} (${security(a.smtp_security)})`],
    [t("signInHow"), signIn],
  ];
}

export function AccountsSettings() {
  const list = useAccounts();
  const { accounts, status } = list;
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
                  : a.kind === "microsoft_graph"
                    ? `${t("m365Calendar")} · ${a.username}`
                    : `${t("mailAccount")} · ${a.email}`}
              </td>
              <td>
                {isOauth(a) && (
                  <>
                    <span class="hint">{list.signedIn.includes(a.name) ? t("signedIn") : t("signedOut")}</span>{" "}
                    {list.signedIn.includes(a.name) ? (
                      <button type="button" onClick={() => list.signOut(a.name)}>
                        {t("signOut")}
                      </button>
                    ) : (
                      <button type="button" data-testid={`sign-in-${a.name}`} onClick={() => list.signIn(a.name)}>
                        {t("signIn")}
                      </button>
                    )}{" "}
                  </>
                )}
                <button type="button" data-testid={`test-account-${a.name}`} onClick={() => list.test(a.name)}>
                  {t("testAccount")}
                </button>{" "}
                <button
                  type="button"
                  onClick={async () => {
                    await api.removeAccount(a.name);
                    list.load();
                  }}
                >
                  {t("remove")}
                </button>
              </td>
              <td class="status" data-testid={`account-status-${a.name}`}>
                {status[a.name]}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <NewAccount list={list} />
    </fieldset>
  );
}

/// What the lookup noted (a server outside the domain…), and the provider's calendars to add
/// with the mail.
function CalendarOffer({
  found,
  withCalendar,
  setWithCalendar,
}: {
  found: FoundMailSetup;
  withCalendar: boolean;
  setWithCalendar: (yes: boolean) => void;
}) {
  return (
    <>
      {found.steps
        .filter((step) => step.trim().startsWith("note:"))
        .map((step) => (
          <p class="hint" key={step}>
            {step.trim()}
          </p>
        ))}
      {found.calendar && (
        <label class="inline">
          <input
            type="checkbox"
            checked={withCalendar}
            onChange={(e) => setWithCalendar(e.currentTarget.checked)}
            data-field="with-calendar"
          />
          {isOauth(found.calendar) ? t("alsoCalendars") : t("alsoCalendarsPassword")} — {describe(found.calendar)[0][1]}
        </label>
      )}
    </>
  );
}

/// The accounts a confirmed lookup makes: the mail account, and its calendars as `NAME-calendar`
/// when the person keeps them ticked. An error names one that exists already (never replaced).
function accountsToAdd(found: FoundMailSetup, name: string, withCalendar: boolean, existing: Account[]) {
  const accounts: Account[] = [{ name, ...found.account }];
  if (withCalendar && found.calendar) accounts.push({ name: `${name}-calendar`, ...found.calendar });
  const taken = accounts.find((a) => existing.some((e) => e.name === a.name));
  if (taken) throw new Error(`${t("nameTaken")} ${taken.name}`);
  return accounts;
}

/// The settings found for an address, in words, and how to finish: the provider's sign-in, or
/// the password its note asks for.
function Found({
  found,
  ready,
  password,
  setPassword,
  add,
  withCalendar,
  setWithCalendar,
}: {
  found: FoundMailSetup;
  ready: boolean;
  password: string;
  setPassword: (password: string) => void;
  add: () => void;
  withCalendar: boolean;
  setWithCalendar: (yes: boolean) => void;
}) {
  return (
    <div class="found" data-testid="found-settings">
      <p>
        <strong>{found.provider}</strong> — {t("foundBy")} {found.found_by}
      </p>
      <table class="rules">
        <tbody>
          {describe(found.account).map(([what, how]) => (
            <tr key={what}>
              <td>{what}</td>
              <td>{how}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {found.password_note && (
        <p class="hint">
          {found.password_note}{" "}
          {found.password_page?.startsWith("https://") && (
            <a href={found.password_page} target="_blank" rel="noreferrer">
              {found.password_page}
            </a>
          )}
        </p>
      )}
      <CalendarOffer found={found} withCalendar={withCalendar} setWithCalendar={setWithCalendar} />
      {isOauth(found.account) ? (
        <button type="button" class="primary" disabled={!ready} onClick={add} data-testid="sign-in-new">
          {t("signInWith")} {found.provider}
        </button>
      ) : (
        <>
          <label>
            {t("password")}
            <input
              type="password"
              autocomplete="off"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
              data-field="password"
            />
          </label>
          <button type="button" class="primary" disabled={!ready || !password} onClick={add}>
            {t("addAccount")}
          </button>
        </>
      )}
    </div>
  );
}

/// A new mail account from its address: the settings found are shown in words, then the person
/// signs in in their browser, or gives the (app) password the provider's note names.
function FindMail({ list, byHand }: { list: ReturnType<typeof useAccounts>; byHand: () => void }) {
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [found, setFound] = useState<FoundMailSetup | null>(null);
  const [withCalendar, setWithCalendar] = useState(true);
  const [busy, setBusy] = useState(false);
  const find = async () => {
    setBusy(true);
    setFound(null);
    try {
      const setup = await api.findMailSetup(email.trim());
      // A second sign-in is the person's own act in their browser; a password going to one more
      // server is ticked only by the person.
      setWithCalendar(!!setup.calendar && isOauth(setup.calendar));
      setFound(setup);
      list.setStatus({});
    } catch (e) {
      list.setStatus({ "": String(e) });
    }
    setBusy(false);
  };
  const add = async () => {
    if (!found) return;
    try {
      const accounts = accountsToAdd(found, name, withCalendar, list.accounts);
      for (const account of accounts) await api.addAccount(account, isOauth(account) ? "" : password);
      setFound(null);
      setPassword("");
      setName("");
      setEmail("");
      list.load();
      for (const account of accounts) if (isOauth(account)) await list.signIn(account.name);
      if (!accounts.some(isOauth)) list.setStatus({ [name]: t("saved") });
    } catch (e) {
      list.setStatus({ "": e instanceof Error ? e.message : String(e) });
    }
  };
  return (
    <div data-testid="find-mail">
      <label>
        {t("accountName")}
        <input type="text" value={name} onInput={(e) => setName(e.currentTarget.value)} data-field="name" />
      </label>
      <label>
        {t("emailAddress")}
        <input
          type="email"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
          onKeyDown={(e) => e.key === "Enter" && find()}
          data-field="email"
        />
      </label>
      <button type="button" class="primary" disabled={!email.includes("@") || busy} onClick={find}>
        {t("findSettings")}
      </button>{" "}
      <button type="button" class="link" onClick={byHand}>
        {t("serversByHand")}
      </button>
      {found && (
        <Found
          found={found}
          ready={!!name}
          password={password}
          setPassword={setPassword}
          add={add}
          withCalendar={withCalendar}
          setWithCalendar={setWithCalendar}
        />
      )}{" "}
      <span class="status" data-testid="accounts-status">
        {list.status[""]}
      </span>
    </div>
  );
}

/// A new calendar or mail account; "Add account" stores it (its password in the keyring) at once.
function NewAccount({ list }: { list: ReturnType<typeof useAccounts> }) {
  const [kind, setKind] = useState<Kind>("mail");
  const [byHand, setByHand] = useState(false);
  const [form, setForm] = useState(BLANK);
  const add = async () => {
    const account = toAccount(kind, form);
    try {
      await api.addAccount(account, form.password);
      setForm(BLANK);
      list.setStatus({ [account.name]: t("saved") });
      list.load();
    } catch (e) {
      list.setStatus({ "": String(e) });
    }
  };
  const field = (key: Exclude<keyof Form, "security">, label: string, type: "text" | "password" = "text") => (
    <Field form={form} setForm={setForm} name={key} label={label} type={type} />
  );
  return (
    <>
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
      {kind === "mail" && !byHand ? (
        <FindMail list={list} byHand={() => setByHand(true)} />
      ) : (
        <>
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
          <span class="status">{list.status[""]}</span>
        </>
      )}
    </>
  );
}

function Field({
  form,
  setForm,
  name,
  label,
  type,
}: {
  form: Form;
  setForm: (form: Form) => void;
  name: Exclude<keyof Form, "security">;
  label: string;
  type: "text" | "password";
}) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is inside, behind a condition the linter cannot follow
    <label>
      {label}
      {type === "password" ? (
        <input
          type="password"
          autocomplete="off"
          value={form[name]}
          onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })}
          data-field={name}
        />
      ) : (
        <input
          type="text"
          value={form[name]}
          onInput={(e) => setForm({ ...form, [name]: e.currentTarget.value })}
          data-field={name}
        />
      )}
    </label>
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
