import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { OutboxBar } from "./accounts";
import { type ApprovalRequest, api, type ConversationSummary, type ElicitationRequest, type FirstRun, on } from "./api";
import { ApprovalModal, ElicitationModal } from "./approval";
import { ChainProgress } from "./chains";
import { ChangesView } from "./changes";
import { Chat } from "./chat";
import { Icon } from "./chat/icon";
import { PauseSwitch, ReminderBar } from "./desktop";
import { getLang, learnTools, t } from "./i18n";
import { MemoryView } from "./memory";
import { QuickAsk } from "./quick";
import { leaveThen } from "./savebar";
import { SettingsView, showSettingsPage } from "./settings";
import { ShortcutSheet } from "./shortcuts";
import { SuspendedBar } from "./suspended";
import { ToolpacksView } from "./toolpacks";
import { TrustDialog } from "./trust";
import { AuditView, applyTheme, ToolsView } from "./views";
import { MicIndicator } from "./voice";
import "./style.css";

type View = "chat" | "tools" | "toolpacks" | "audit" | "settings" | "changes" | "memory";

/** The sidebar's groups: pinned first, then by when a conversation last changed (today,
 * yesterday, the past week and month, then by month in the person's language). */
function byDate(conversations: ConversationSummary[], now = new Date()): [string, ConversationSummary[]][] {
  const day = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const today = day(now);
  const month = new Intl.DateTimeFormat(getLang(), { year: "numeric", month: "long" });
  const groups = new Map<string, ConversationSummary[]>();
  for (const c of conversations) {
    const changed = new Date(c.updated_at);
    const days = Math.round((today - day(changed)) / 86_400_000);
    const group = c.pinned
      ? t("groupPinned")
      : days <= 0
        ? t("groupToday")
        : days === 1
          ? t("groupYesterday")
          : days <= 7
            ? t("groupWeek")
            : days <= 30
              ? t("groupMonth")
              : month.format(changed);
    groups.set(group, [...(groups.get(group) ?? []), c]);
  }
  return [...groups];
}

function App() {
  const [view, setView] = useState<View>("chat");
  const [conversation, setConversation] = useState<string | null>(null);
  const [conversations, setConversations] = useState<ConversationSummary[]>([]);
  const [renaming, setRenaming] = useState<{ id: string; title: string } | null>(null);
  const [search, setSearch] = useState("");
  const [approvals, setApprovals] = useState<ApprovalRequest[]>([]);
  const [forms, setForms] = useState<ElicitationRequest[]>([]);
  const [firstRun, setFirstRun] = useState<FirstRun | null>(null);
  const [, setLangTick] = useState(0);
  const [install, setInstall] = useState<{ source: string; n: number } | undefined>();

  const refresh = () =>
    api
      .listConversations(search)
      .then(setConversations)
      .catch(() => {});
  // Away from Settings only once its unsaved changes are saved or let go (the page asks).
  const go = (next: View, also?: () => void) =>
    leaveThen(() => {
      also?.();
      setView(next);
    });
  useEffect(() => {
    refresh();
  }, [search]);
  // Tools are named by their titles (cards, approvals): learnt at start and when packs change.
  useEffect(() => {
    const load = () =>
      api
        .listTools()
        .then(learnTools)
        .catch(() => {});
    load();
    const un = on("toolpacks-changed", load);
    return () => {
      un.then((f) => f());
    };
  }, []);
  // A turn's end moves its conversation up (and a new one into) the list.
  useEffect(() => {
    const done = on("agent-done", () => refresh());
    return () => {
      done.then((f) => f());
    };
  }, [search]);
  useEffect(() => {
    applyTheme();
    document.documentElement.lang = getLang();
    api
      .firstRun()
      .then(setFirstRun)
      .catch(() => {});
    // Once each, whether it came as an event or was waiting before this window opened.
    const addApproval = (r: ApprovalRequest) =>
      setApprovals((q) => (q.some((a) => a.call_id === r.call_id) ? q : [...q, r]));
    const addForm = (r: ElicitationRequest) => setForms((q) => (q.some((f) => f.id === r.id) ? q : [...q, r]));
    const un = on("approval-request", addApproval);
    const unForms = on("elicitation-request", addForm);
    // A window opened from the tray shows what waited while it was closed.
    api
      .pendingAsks()
      .then((p) => {
        p.approvals.forEach(addApproval);
        p.elicitations.forEach(addForm);
      })
      .catch(() => {});
    // Links and files handed over by the desktop open the install review (never an install).
    const takeRequests = () =>
      api
        .takeDesktopRequests()
        .then((rs) =>
          rs.forEach((r) => {
            if (r.kind === "install_toolpack")
              go("toolpacks", () => setInstall((p) => ({ source: r.source, n: (p?.n ?? 0) + 1 })));
          }),
        )
        .catch(() => {});
    takeRequests();
    const unRequests = on("desktop-request", takeRequests);
    // A clicked notification opens its place (an approval's modal is already up).
    const unTargets = on("open-target", (target) => {
      if (target.kind === "conversation") go("chat", () => setConversation(target.id));
      if (target.kind === "suspension" || target.kind === "outbox") go("chat");
    });
    return () => {
      un.then((f) => f());
      unForms.then((f) => f());
      unRequests.then((f) => f());
      unTargets.then((f) => f());
    };
  }, []);
  // Keyboard-first: Ctrl+N new chat, Ctrl+K search, Ctrl+, settings.
  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || approvals.length) return;
      if (e.key === "n") {
        e.preventDefault();
        go("chat", () => setConversation(null));
      }
      if (e.key === "k") {
        e.preventDefault();
        document.getElementById("conv-search")?.focus();
      }
      if (e.key === ",") {
        e.preventDefault();
        setView("settings");
      }
      // Ctrl+W closes the window (Cowork stays in the tray, Settings → Desktop).
      if (e.key === "w") {
        e.preventDefault();
        api.closeWindow();
      }
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, [approvals.length]);

  // Ctrl+Shift+D opens the file changes (D for diff), Ctrl+Shift+M the memory panel.
  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || !e.shiftKey) return;
      const key = e.key.toLowerCase();
      if (key === "d") {
        e.preventDefault();
        go("changes");
      }
      // M for memory.
      if (key === "m") {
        e.preventDefault();
        go("memory");
      }
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, []);
  const nav: [View, string][] = [
    ["chat", t("chat")],
    ["tools", t("tools")],
    ["toolpacks", t("toolpacks")],
    ["audit", t("audit")],
    ["settings", t("settings")],
    ["changes", t("reviewChanges")],
    ["memory", t("memory")],
  ];
  return (
    <div class="app">
      <aside class="sidebar">
        <button type="button" class="primary" onClick={() => go("chat", () => setConversation(null))} title="Ctrl+N">
          + {t("newChat")}
        </button>
        <input
          id="conv-search"
          type="search"
          placeholder={t("search")}
          value={search}
          onInput={(e) => setSearch(e.currentTarget.value)}
        />
        <ul class="conversations">
          {byDate(conversations).map(([group, members]) => [
            <li key={group} class="group-head">
              {group}
            </li>,
            ...members.map((c) => (
              <li
                key={c.id}
                class={`${c.id === conversation ? "active" : ""}${c.pinned ? " pinned" : ""}`}
                data-testid="conversation"
                data-pinned={c.pinned}
              >
                {renaming?.id === c.id ? (
                  <input
                    class="rename"
                    data-testid="rename-input"
                    value={renaming.title}
                    ref={(el) => el?.focus()}
                    onInput={(e) => setRenaming({ id: c.id, title: e.currentTarget.value })}
                    onKeyDown={async (e) => {
                      const title = e.currentTarget.value.trim();
                      if (e.key === "Enter" && title) {
                        await api.renameConversation(c.id, title);
                        setRenaming(null);
                        refresh();
                      }
                      if (e.key === "Escape") setRenaming(null);
                    }}
                    onBlur={() => setRenaming(null)}
                  />
                ) : (
                  <button
                    type="button"
                    class="link"
                    title={t("rename")}
                    onDblClick={() => setRenaming({ id: c.id, title: c.title })}
                    onClick={() => go("chat", () => setConversation(c.id))}
                  >
                    {c.title || "…"}
                  </button>
                )}
                <button
                  type="button"
                  class="icon pin"
                  data-testid="pin"
                  aria-pressed={c.pinned}
                  aria-label={c.pinned ? t("unpin") : t("pin")}
                  title={c.pinned ? t("unpin") : t("pin")}
                  onClick={async () => {
                    await api.setPinned(c.id, !c.pinned);
                    refresh();
                  }}
                >
                  {c.pinned ? "★" : "☆"}
                </button>
                <button
                  type="button"
                  class="icon"
                  aria-label={t("remove")}
                  title={t("remove")}
                  onClick={async () => {
                    await api.deleteConversation(c.id);
                    if (c.id === conversation) setConversation(null);
                    refresh();
                  }}
                >
                  ×
                </button>
              </li>
            )),
          ])}
        </ul>
        <nav>
          {nav.map(([v, label]) => (
            <button
              type="button"
              key={v}
              data-view={v}
              class={view === v ? "nav active" : "nav"}
              onClick={() => (v === view ? undefined : go(v))}
            >
              <Icon name={v} />
              {label}
              {v === "chat" && approvals.length > 0 && (
                <span class="count-badge" data-testid="waiting-badge" title={t("waiting")}>
                  {approvals.length}
                </span>
              )}
            </button>
          ))}
          <PauseSwitch />
        </nav>
      </aside>
      <main>
        {view === "chat" && (
          <Chat
            conversation={conversation}
            firstRun={firstRun}
            onConversation={(id) => {
              setConversation(id);
              refresh();
            }}
            onSettings={() => {
              showSettingsPage("model");
              setView("settings");
            }}
            onProviderSaved={() => api.firstRun().then(setFirstRun)}
          />
        )}
        {view === "tools" && <ToolsView />}
        {view === "toolpacks" && <ToolpacksView request={install} />}
        {view === "audit" && <AuditView />}
        {view === "changes" && <ChangesView conversation={conversation} />}
        {view === "memory" && <MemoryView />}
        {view === "settings" && (
          <SettingsView
            conversation={conversation}
            onChange={() => {
              setLangTick((n) => n + 1);
              api.firstRun().then(setFirstRun);
            }}
          />
        )}
      </main>
      <MicIndicator />
      <OutboxBar conversation={conversation} />
      <SuspendedBar />
      <ReminderBar />
      <ChainProgress />
      <ShortcutSheet />
      <TrustDialog hidden={approvals.length > 0} />
      {approvals.length > 0 && <ApprovalModal request={approvals[0]} onDone={() => setApprovals((q) => q.slice(1))} />}
      {approvals.length === 0 && forms.length > 0 && (
        <ElicitationModal request={forms[0]} onDone={() => setForms((q) => q.slice(1))} />
      )}
    </div>
  );
}

// One bundle, two windows: the quick-ask window loads it with #quick.
if (location.hash === "#quick") {
  applyTheme();
  document.documentElement.lang = getLang();
}
render(location.hash === "#quick" ? <QuickAsk /> : <App />, document.getElementById("app")!);
