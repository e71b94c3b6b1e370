import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { OutboxBar } from "./accounts";
import { type ApprovalRequest, api, type ElicitationRequest, type FirstRun, on } from "./api";
import { ApprovalModal } from "./approval";
import { ChainProgress } from "./chains";
import { ChangesView } from "./changes";
import { Chat } from "./chat";
import { ReminderBar } from "./desktop";
import { ElicitationModal } from "./elicitation";
import { getLang, learnTools } from "./i18n";
import { MemoryView } from "./memory";
import { QuickAsk } from "./quick";
import { leaveThen } from "./savebar";
import { SettingsView, showSettingsPage } from "./settings";
import { ShortcutSheet } from "./shortcuts";
import { Sidebar, useConversations, type View } from "./sidebar";
import { SuspendedBar } from "./suspended";
import { ToolpacksView } from "./toolpacks";
import { TrustDialog } from "./trust";
import { AuditView, applyTheme, ToolsView } from "./views";
import { MicIndicator } from "./voice";
import "./style.css";

/// The approvals and forms waiting for the person, each once, whether it came as an event or
/// was waiting before this window opened (a window opened from the tray shows what waited while
/// it was closed).
function useAsks() {
  const [approvals, setApprovals] = useState<ApprovalRequest[]>([]);
  const [forms, setForms] = useState<ElicitationRequest[]>([]);
  useEffect(() => {
    const addApproval = (r: ApprovalRequest) =>
      setApprovals((q) => (q.some((a) => a.call_id === r.call_id) ? q : [...q, r]));
    const addForm = (r: ElicitationRequest) => setForms((q) => (q.some((f) => f.id === r.id) ? q : [...q, r]));
    const un = on("approval-request", addApproval);
    const unForms = on("elicitation-request", addForm);
    api
      .pendingAsks()
      .then((p) => {
        p.approvals.forEach(addApproval);
        p.elicitations.forEach(addForm);
      })
      .catch(() => {});
    return () => {
      un.then((f) => f());
      unForms.then((f) => f());
    };
  }, []);
  const approvalDone = () => setApprovals((q) => q.slice(1));
  const formDone = () => setForms((q) => q.slice(1));
  return { approvals, forms, approvalDone, formDone };
}

/// Tools are named by their titles (cards, approvals): learnt at start and when packs change.
function useToolTitles() {
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
}

/// What the desktop hands over: links and files open the install review (never an install);
/// a clicked notification opens its place (an approval's modal is already up).
function useDesktopHandover(go: Go, open: (conversation: string | null) => void, review: (source: string) => void) {
  useEffect(() => {
    const takeRequests = () =>
      api
        .takeDesktopRequests()
        .then((rs) =>
          rs.forEach((r) => {
            if (r.kind === "install_toolpack") go("toolpacks", () => review(r.source));
          }),
        )
        .catch(() => {});
    takeRequests();
    const unRequests = on("desktop-request", takeRequests);
    const unTargets = on("open-target", (target) => {
      if (target.kind === "conversation") open(target.id);
      if (target.kind === "suspension" || target.kind === "outbox") go("chat");
    });
    return () => {
      unRequests.then((f) => f());
      unTargets.then((f) => f());
    };
  }, []);
}

/// Keyboard-first: Ctrl+N new chat, Ctrl+K search, Ctrl+, settings, Ctrl+W closes the window
/// (none while an approval waits); Ctrl+Shift+D the file changes, Ctrl+Shift+M the memory.
function useAppKeys(go: Go, open: (conversation: string | null) => void, setView: (v: View) => void, asking: boolean) {
  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || asking) return;
      if (e.key === "n") {
        e.preventDefault();
        open(null);
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
  }, [asking]);
  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || !e.shiftKey) return;
      const key = e.key.toLowerCase();
      // D for diff.
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
}

type Go = (next: View, also?: () => void) => void;

function App() {
  const [view, setView] = useState<View>("chat");
  const [conversation, setConversation] = useState<string | null>(null);
  const list = useConversations();
  const asks = useAsks();
  const [firstRun, setFirstRun] = useState<FirstRun | null>(null);
  const [, setLangTick] = useState(0);
  const [install, setInstall] = useState<{ source: string; n: number } | undefined>();
  // Away from Settings only once its unsaved changes are saved or let go (the page asks).
  const go: Go = (next, also) =>
    leaveThen(() => {
      also?.();
      setView(next);
    });
  const open = (id: string | null) => go("chat", () => setConversation(id));
  const reloadFirstRun = () => api.firstRun().then(setFirstRun);
  useToolTitles();
  useEffect(() => {
    applyTheme();
    document.documentElement.lang = getLang();
    reloadFirstRun().catch(() => {});
  }, []);
  useDesktopHandover(go, open, (source) => setInstall((p) => ({ source, n: (p?.n ?? 0) + 1 })));
  useAppKeys(go, open, setView, asks.approvals.length > 0);
  return (
    <div class="app">
      <Sidebar
        view={view}
        conversation={conversation}
        list={list}
        approvals={asks.approvals}
        go={go}
        open={open}
        clear={() => setConversation(null)}
      />
      <main>
        {view === "chat" && (
          <Chat
            conversation={conversation}
            firstRun={firstRun}
            onConversation={(id) => {
              setConversation(id);
              list.refresh();
            }}
            onSettings={() => {
              showSettingsPage("model");
              setView("settings");
            }}
            onProviderSaved={reloadFirstRun}
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
              reloadFirstRun();
            }}
          />
        )}
      </main>
      <Overlays conversation={conversation} asks={asks} />
    </div>
  );
}

/// The bars and dialogs over every view; an approval first, then a form.
function Overlays({ conversation, asks }: { conversation: string | null; asks: ReturnType<typeof useAsks> }) {
  const { approvals, forms } = asks;
  return (
    <>
      <MicIndicator />
      <OutboxBar conversation={conversation} />
      <SuspendedBar />
      <ReminderBar />
      <ChainProgress />
      <ShortcutSheet />
      <TrustDialog hidden={approvals.length > 0} />
      {approvals.length > 0 && <ApprovalModal request={approvals[0]} onDone={asks.approvalDone} />}
      {approvals.length === 0 && forms.length > 0 && <ElicitationModal request={forms[0]} onDone={asks.formDone} />}
    </>
  );
}

// One bundle, two windows: the quick-ask window loads it with #quick.
if (location.hash === "#quick") {
  applyTheme();
  document.documentElement.lang = getLang();
}
render(location.hash === "#quick" ? <QuickAsk /> : <App />, document.getElementById("app")!);
