// Living on the desktop: the tools-paused bar (the tray's "Pause all tools", mirrored here),
// and Settings → Desktop (tray, notifications, do not disturb, autostart).
import { useEffect, useState } from "preact/hooks";
import { api, type DesktopSettings, type NoticeTarget, on, type Status, type WorkspaceState } from "./api";
import { formatDate, t } from "./i18n";
import { SaveBar, useDraft } from "./savebar";
import { reviewTrust } from "./trust";

/** The status the tray shows, pushed as it changes; the window offers the same pause switch. */
export function PauseSwitch() {
  const [status, setStatus] = useState<Status>("idle");
  useEffect(() => {
    api
      .desktopStatus()
      .then(setStatus)
      .catch(() => {});
    const un = on("desktop-status", setStatus);
    return () => {
      un.then((f) => f());
    };
  }, []);
  const paused = status === "paused";
  return (
    <>
      <button
        type="button"
        class={paused ? "nav paused" : "nav"}
        data-testid="pause-tools"
        aria-pressed={paused}
        onClick={() => api.setToolsPaused(!paused)}
      >
        <svg class="glyph" viewBox="0 0 10 10" aria-hidden="true">
          {paused ? <path d="M2 1 L9 5 L2 9 Z" /> : <path d="M2 1 h2 v8 h-2 Z M6 1 h2 v8 h-2 Z" />}
        </svg>
        {paused ? t("resumeTools") : t("pauseTools")}
      </button>
      {paused && (
        <div class="paused-banner" role="status" data-testid="paused-banner">
          {t("toolsPaused")}
          <button type="button" onClick={() => api.setToolsPaused(false)}>
            {t("resumeTools")}
          </button>
        </div>
      )}
    </>
  );
}

type EventTarget = Extract<NoticeTarget, { kind: "event" }>;

/** Calendar reminders that fell due (pushed as they do, or the clicked notification's), until dismissed. */
export function ReminderBar() {
  const [due, setDue] = useState<EventTarget[]>([]);
  useEffect(() => {
    const add = (target: NoticeTarget) => {
      if (target.kind !== "event") return;
      setDue((list) =>
        list.some((r) => r.uid === target.uid && r.starts === target.starts) ? list : [...list, target],
      );
    };
    const a = on("reminder", add);
    const b = on("open-target", add);
    return () => {
      a.then((f) => f());
      b.then((f) => f());
    };
  }, []);
  if (due.length === 0) return null;
  const when = (r: EventTarget) => formatDate(r.starts, r.all_day ? "date" : "weekdayTime");
  return (
    <div class="reminder-bar" role="status" data-testid="reminder-bar">
      {due.map((r) => (
        <div key={r.uid + r.starts} class="row">
          <span>
            <strong>{t("reminder")}</strong> {r.title}{" "}
            <span class="muted">
              {when(r)}
              {r.location ? ` · ${r.location}` : ""}
            </span>
          </span>
          <button type="button" aria-label={t("dismiss")} onClick={() => setDue((list) => list.filter((x) => x !== r))}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

export function DesktopSettingsPanel() {
  const draft = useDraft<DesktopSettings>();
  const [status, setStatus] = useState("");
  useEffect(() => {
    api
      .getDesktopSettings()
      .then(draft.load)
      .catch((e) => setStatus(String(e)));
  }, []);
  const settings = draft.value,
    setSettings = draft.set;
  if (!settings) return <p class="status">{status}</p>;
  const toggle = (key: "closeToTray" | "notifications" | "doNotDisturb" | "autostart", label: string) => (
    <label class="check">
      <input
        type="checkbox"
        data-testid={`desktop-${key}`}
        checked={settings[key]}
        onChange={(e) => setSettings({ ...settings, [key]: e.currentTarget.checked })}
      />{" "}
      {label}
    </label>
  );
  return (
    <fieldset data-testid="desktop-settings">
      <legend>{t("desktop")}</legend>
      {toggle("closeToTray", t("closeToTray"))}
      {toggle("notifications", t("notifications"))}
      {toggle("doNotDisturb", t("doNotDisturb"))}
      {toggle("autostart", t("autostart"))}
      <label>
        {t("quickAskShortcut")}
        <input
          type="text"
          data-testid="desktop-shortcut"
          value={settings.quickAskShortcut}
          onInput={(e) => setSettings({ ...settings, quickAskShortcut: e.currentTarget.value })}
        />
      </label>
      <GnomeShortcut shortcut={settings.quickAskShortcut ?? ""} />
      <label>
        {t("longRunSecs")}
        <input
          type="number"
          min={0}
          value={settings.longRunSecs}
          onInput={(e) => setSettings({ ...settings, longRunSecs: Math.max(0, Number(e.currentTarget.value) || 0) })}
        />
      </label>
      <p class="hint">{t("desktopHint")}</p>
      <SaveBar draft={draft} save={(s) => api.saveDesktopSettings(s)} />
    </fieldset>
  );
}

/** On Wayland no app may take a global key: GNOME runs quick ask on it from its own custom
 * shortcuts, added (or updated) there when the person asks. */
function GnomeShortcut({ shortcut }: { shortcut: string }) {
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  if (!shortcut.trim()) return null;
  const bind = () =>
    api.bindQuickAskInGnome(shortcut).then(
      (text) => setSaid({ ok: true, text }),
      (e) => setSaid({ ok: false, text: String(e) }),
    );
  return (
    <div class="row">
      <button type="button" data-testid="bind-in-gnome" onClick={bind}>
        {t("bindInGnome")}
      </button>
      <span class="hint">{t("bindInGnomeHint")}</span>
      {said && (
        <span class={said.ok ? "ok" : "error"} role="status">
          {said.text}
        </span>
      )}
    </div>
  );
}

/** The conversation's folder as the shell holds it (entered with the conversation), and
 * choosing another (`null` closes it). */
function useWorkspace(conversation: string | null) {
  const [state, setState] = useState<WorkspaceState | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    setError("");
    (conversation ? api.enterConversation(conversation) : api.workspaceState()).then(setState).catch((e) => {
      setError(String(e));
      api
        .workspaceState()
        .then(setState)
        .catch(() => {});
    });
  }, [conversation]);
  const choose = async (folder: string | null) => {
    setError("");
    try {
      setState(await api.chooseWorkspace(conversation, folder));
      return true;
    } catch (e) {
      setError(String(e));
      return false;
    }
  };
  return { state, error, choose };
}

/** The folder this conversation works in (run_command, relative paths, the folder's own rules):
 * open one with the desktop's chooser, a typed path or a recent folder; one per conversation. */
export function WorkspaceBar({ conversation }: { conversation: string | null }) {
  const { state, error, choose } = useWorkspace(conversation);
  const [open, setOpen] = useState(false);
  // Kept while the menu is closed, like a half-typed path in any field.
  const [typed, setTyped] = useState("");
  const name = state?.open ? state.open.split("/").filter(Boolean).pop() : null;
  return (
    <div class="workspace-bar" data-testid="workspace-bar">
      <button
        type="button"
        class="chip"
        data-testid="workspace-chip"
        aria-expanded={open}
        title={state?.open ?? t("noFolder")}
        onClick={() => setOpen(!open)}
      >
        <svg class="glyph" viewBox="0 0 10 10" aria-hidden="true">
          <path d="M0 2 h4 l1 1 h5 v6 h-10 Z" />
        </svg>
        {name ?? t("noFolder")}
      </button>
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
      {open && state && (
        <WorkspaceMenu state={state} choose={choose} close={() => setOpen(false)} typed={typed} setTyped={setTyped} />
      )}
    </div>
  );
}

/** Open a folder (the chooser or a typed path), a recent one, review its trust, or close it. */
function WorkspaceMenu({
  state,
  choose,
  close,
  typed,
  setTyped,
}: {
  state: WorkspaceState;
  choose: (folder: string | null) => Promise<boolean>;
  close: () => void;
  typed: string;
  setTyped: (path: string) => void;
}) {
  const pick = async (folder: string | null) => {
    if (await choose(folder)) {
      close();
      setTyped("");
    }
  };
  const browse = async () => {
    const folder = await api.pickFolder();
    if (folder) await pick(folder);
  };
  return (
    <div class="workspace-menu" role="menu">
      <button type="button" role="menuitem" onClick={browse}>
        {t("openFolder")}
      </button>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const folder = (e.currentTarget.elements[0] as HTMLInputElement).value.trim();
          if (folder) pick(folder);
        }}
      >
        <input
          data-testid="workspace-path"
          placeholder="/home/me/project"
          value={typed}
          onInput={(e) => setTyped(e.currentTarget.value)}
        />
      </form>
      {state.recent.length > 0 && <p class="hint">{t("recentFolders")}</p>}
      {state.recent.map((f) => (
        <button type="button" role="menuitem" key={f} class={f === state.open ? "active" : ""} onClick={() => pick(f)}>
          {f}
        </button>
      ))}
      {state.open && (
        <button
          type="button"
          role="menuitem"
          data-testid="review-trust"
          onClick={() => {
            reviewTrust(state.open!);
            close();
          }}
        >
          {t("reviewTrust")}
        </button>
      )}
      {state.open && (
        <button type="button" role="menuitem" onClick={() => pick(null)}>
          {t("closeFolder")}
        </button>
      )}
    </div>
  );
}
