// The sidebar: a new chat, the conversations (searched, grouped by date, pinned, renamed in
// place) and the views.
import { useEffect, useState } from "preact/hooks";
import { type ApprovalRequest, api, type ConversationSummary, on } from "./api";
import { Icon } from "./chat/icon";
import { PauseSwitch } from "./desktop";
import { getLang, t } from "./i18n";

export type View = "chat" | "tools" | "toolpacks" | "audit" | "settings" | "changes" | "memory";

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

export type Conversations = ReturnType<typeof useConversations>;

/// The conversations matching the search, listed again when the search changes and when a
/// turn ends (which moves its conversation up, and a new one into the list).
export function useConversations() {
  const [conversations, setConversations] = useState<ConversationSummary[]>([]);
  const [search, setSearch] = useState("");
  const refresh = () =>
    api
      .listConversations(search)
      .then(setConversations)
      .catch(() => {});
  useEffect(() => {
    refresh();
  }, [search]);
  useEffect(() => {
    const done = on("agent-done", () => refresh());
    return () => {
      done.then((f) => f());
    };
  }, [search]);
  return { conversations, search, setSearch, refresh };
}

export function Sidebar({
  view,
  conversation,
  list,
  approvals,
  go,
  open,
  clear,
}: {
  view: View;
  conversation: string | null;
  list: Conversations;
  approvals: ApprovalRequest[];
  /** Another view (once Settings' unsaved changes are dealt with). */
  go: (view: View) => void;
  /** The chat, on a conversation (`null`: a new one). */
  open: (conversation: string | null) => void;
  /** No conversation any more (the one shown was removed). */
  clear: () => void;
}) {
  return (
    <aside class="sidebar">
      <button type="button" class="primary" data-testid="new-chat" onClick={() => open(null)} title="Ctrl+N">
        + {t("newChat")}
      </button>
      <input
        id="conv-search"
        type="search"
        placeholder={t("search")}
        value={list.search}
        onInput={(e) => list.setSearch(e.currentTarget.value)}
      />
      <ConversationList conversation={conversation} list={list} open={open} clear={clear} />
      <Nav view={view} approvals={approvals} go={go} />
    </aside>
  );
}

type RowActions = {
  refresh: () => void;
  open: (conversation: string | null) => void;
  clear: () => void;
};

function ConversationList({
  conversation,
  list,
  open,
  clear,
}: Omit<RowActions, "refresh"> & { conversation: string | null; list: Conversations }) {
  const [renaming, setRenaming] = useState<Renaming | null>(null);
  return (
    <ul class="conversations">
      {byDate(list.conversations).map(([group, members]) => [
        <li key={group} class="group-head">
          {group}
        </li>,
        ...members.map((c) => (
          <ConversationRow
            key={c.id}
            c={c}
            active={c.id === conversation}
            renaming={renaming}
            setRenaming={setRenaming}
            refresh={list.refresh}
            open={open}
            clear={clear}
          />
        )),
      ])}
    </ul>
  );
}

type Renaming = { id: string; title: string };

/// A conversation: its title (opens it; a double click renames it in place), pin, remove.
function ConversationRow({
  c,
  active,
  renaming,
  setRenaming,
  refresh,
  open,
  clear,
}: RowActions & {
  c: ConversationSummary;
  active: boolean;
  renaming: Renaming | null;
  setRenaming: (r: Renaming | null) => void;
}) {
  return (
    <li
      class={`${active ? "active" : ""}${c.pinned ? " pinned" : ""}`}
      data-testid="conversation"
      data-pinned={c.pinned}
    >
      {renaming?.id === c.id ? (
        <RenameInput c={c} title={renaming.title} setRenaming={setRenaming} refresh={refresh} />
      ) : (
        <button
          type="button"
          class="link"
          title={t("rename")}
          onDblClick={() => setRenaming({ id: c.id, title: c.title })}
          onClick={() => open(c.id)}
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
          if (active) clear();
          refresh();
        }}
      >
        ×
      </button>
    </li>
  );
}

/// The title being edited: Enter saves it, Esc or leaving the field lets it go.
function RenameInput({
  c,
  title,
  setRenaming,
  refresh,
}: {
  c: ConversationSummary;
  title: string;
  setRenaming: (r: Renaming | null) => void;
  refresh: () => void;
}) {
  return (
    <input
      class="rename"
      data-testid="rename-input"
      value={title}
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
  );
}

/// The views, the chat's with how many approvals wait; and the pause switch.
function Nav({ view, approvals, go }: { view: View; approvals: ApprovalRequest[]; go: (view: View) => void }) {
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
  );
}
