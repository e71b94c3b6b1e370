// The conversation as the page shows it: the person's messages (editable), the answers, tool
// cards, marks (recalled memories, a resumed task, a compaction, a turn's usage), and the state
// of the turn (thinking, compacting, its error).
import type { RefObject } from "preact";
import type { Dispatch } from "preact/hooks";
import type { Compaction, Remedy, TurnUsage } from "../api";
import { t } from "../i18n";
import { AttachmentChip } from "./attachments";
import { copyText } from "./bar";
import { MarkdownBlocks } from "./blocks";
import { Card } from "./card";
import { Icon } from "./icon";
import { firstAnswerOf, type Item, lastAnswer, type Recalled } from "./items";
import { type Action, type ChatState, type Editing, type Failure, isWaiting } from "./state";
import type { Turns } from "./turns";

type Props = { state: ChatState; dispatch: Dispatch<Action>; turns: Turns };

export function MessageList({
  state,
  dispatch,
  turns,
  onPick,
  onSettings,
  bottom,
}: Props & { onPick: (text: string) => void; onSettings: () => void; bottom: RefObject<HTMLDivElement | null> }) {
  const { items, shownFrom, compacting, failure } = state;
  const last = lastAnswer(items);
  const showEarlier = () => dispatch({ type: "showEarlier" });
  return (
    <div
      class="messages"
      aria-live="polite"
      onScroll={(e) => {
        if (e.currentTarget.scrollTop < 200 && shownFrom > 0) showEarlier();
      }}
      data-testid="messages"
    >
      {items.length === 0 && <EmptyChat onPick={onPick} />}
      {shownFrom > 0 && (
        <button type="button" class="earlier" data-testid="show-earlier" onClick={showEarlier}>
          {t("showEarlier")} ({shownFrom})
        </button>
      )}
      {items.slice(shownFrom).map((it, k) => {
        const i = k + shownFrom;
        const key = it.kind === "tool" ? it.card.id : (it.key ?? i);
        return (
          <ChatItem key={key} it={it} i={i} isLastAnswer={i === last} state={state} dispatch={dispatch} turns={turns} />
        );
      })}
      {compacting && (
        <div class="msg assistant thinking" data-testid="compacting">
          <span class="spinner" /> {t("compacting")}
        </div>
      )}
      {isWaiting(state) && !compacting && (
        <div class="msg assistant thinking">
          <span class="spinner" /> {t("thinking")}
        </div>
      )}
      {failure && <TurnFailure failure={failure} running={state.running} retry={turns.retry} onSettings={onSettings} />}
      <div ref={bottom} />
    </div>
  );
}

/// One item of the list, `i` in the conversation.
function ChatItem({
  it,
  i,
  isLastAnswer,
  state,
  dispatch,
  turns,
}: Props & { it: Item; i: number; isLastAnswer: boolean }) {
  switch (it.kind) {
    case "tool":
      return <Card card={it.card} act={turns.act} views={turns.views} />;
    case "user":
      return state.editing && state.editing.mid === it.mid ? (
        <EditingMessage editing={state.editing} dispatch={dispatch} saveEdit={turns.saveEdit} />
      ) : (
        <UserMessage it={it} running={state.running} dispatch={dispatch} turns={turns} />
      );
    case "resumed":
      return (
        <div class="resumed-mark" data-testid="resumed-mark">
          ↻ {t("wentOn")} ({it.tool})
        </div>
      );
    case "recalled":
      return <RecalledLine memories={it.memories} />;
    case "usage":
      return <UsageLine usage={it.usage} />;
    case "compacted":
      return <CompactedNote compaction={it.compaction} />;
    default:
      return <AssistantMessage it={it} i={i} isLastAnswer={isLastAnswer} state={state} turns={turns} />;
  }
}

type UserItem = Extract<Item, { kind: "user" }>;
type AssistantItem = Extract<Item, { kind: "assistant" }>;

/// The person's message: what they attached, the words, and (once stored) its branches, copy
/// and edit.
function UserMessage({ it, running, dispatch, turns }: Omit<Props, "state"> & { it: UserItem; running: boolean }) {
  return (
    <div class="msg user" data-testid="user-message" data-mid={it.mid}>
      {it.attachments && it.attachments.length > 0 && (
        <div class="attachments">
          {it.attachments.map((p, n) => (
            <AttachmentChip key={n} part={p} />
          ))}
        </div>
      )}
      {it.text}
      {it.mid !== undefined && (
        <div class="msg-actions">
          <BranchSwitch mid={it.mid} siblings={it.siblings ?? []} onSwitch={turns.switchTo} />
          <CopyButton text={it.text} />
          <button
            type="button"
            class="icon"
            data-testid="edit"
            title={t("editResend")}
            aria-label={t("editResend")}
            disabled={running}
            onClick={() => dispatch({ type: "edit", editing: { mid: it.mid!, text: it.text } })}
          >
            <Icon name="edit" />
          </button>
        </div>
      )}
    </div>
  );
}

/// The person's message being edited: Enter sends it again (a new branch), Esc leaves it.
function EditingMessage({
  editing,
  dispatch,
  saveEdit,
}: {
  editing: Editing;
  dispatch: Dispatch<Action>;
  saveEdit: (mid: number, text: string) => void;
}) {
  const cancel = () => dispatch({ type: "edit", editing: null });
  return (
    <div class="msg user editing">
      <textarea
        data-testid="edit-input"
        value={editing.text}
        rows={3}
        onInput={(e) => dispatch({ type: "edit", editing: { mid: editing.mid, text: e.currentTarget.value } })}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            saveEdit(editing.mid, e.currentTarget.value);
          }
          if (e.key === "Escape") cancel();
        }}
      />
      <div class="msg-actions">
        <button
          type="button"
          class="primary"
          data-testid="edit-send"
          onClick={() => saveEdit(editing.mid, editing.text)}
        >
          {t("send")}
        </button>
        <button type="button" onClick={cancel}>
          {t("cancel")}
        </button>
      </div>
    </div>
  );
}

/// An answer, in Markdown. The conversation's last answer, and the first of each turn (which
/// holds the branches), have copy and regenerate, once the turn is over.
function AssistantMessage({
  it,
  i,
  isLastAnswer,
  state,
  turns,
}: Omit<Props, "dispatch"> & { it: AssistantItem; i: number; isLastAnswer: boolean }) {
  const { items, running } = state;
  const answer = firstAnswerOf(items, i);
  const first = answer !== undefined && it.mid === answer;
  return (
    <div class="msg assistant" data-testid="assistant-message" data-mid={it.mid}>
      <div class="markdown">
        <MarkdownBlocks text={it.text} />
      </div>
      {(isLastAnswer || first) && !(running && i === items.length - 1) && (
        <div class="msg-actions">
          {first && <BranchSwitch mid={it.mid!} siblings={it.siblings ?? []} onSwitch={turns.switchTo} />}
          <CopyButton text={it.text} />
          {answer !== undefined && (
            <button
              type="button"
              class="icon"
              data-testid="regenerate"
              title={t("regenerate")}
              aria-label={t("regenerate")}
              disabled={running}
              onClick={() => turns.regenerate(answer)}
            >
              <Icon name="regenerate" />
            </button>
          )}
        </div>
      )}
    </div>
  );
}

function CopyButton({ text }: { text: string }) {
  return (
    <button type="button" class="icon" title={t("copy")} aria-label={t("copy")} onClick={() => copyText(text)}>
      <Icon name="copy" />
    </button>
  );
}

/// Which memories the model was given for the turn (their snippets on hover).
function RecalledLine({ memories }: { memories: Recalled[] }) {
  return (
    <div class="recalled" data-testid="recalled" title={memories.map((m) => m.snippet.replace(/\*\*/g, "")).join("\n")}>
      {t("recalled")}:{" "}
      {memories.map((m) => (
        <span key={m.id} class="tag" data-id={m.id}>
          {m.title}
        </span>
      ))}
    </div>
  );
}

/// Where older turns were summarized: how much, and the summary when opened.
function CompactedNote({ compaction }: { compaction: Compaction }) {
  return (
    <details class="compacted" data-testid="compacted">
      <summary>
        {t("compacted")}: {compaction.messages} {t("messagesSummarized")} · {compaction.tokens_before.toLocaleString()}{" "}
        → {compaction.tokens_after.toLocaleString()} {t("tokens")}
      </summary>
      <div class="markdown">
        <MarkdownBlocks text={compaction.summary} />
      </div>
    </details>
  );
}

/// The turn's error, with what the person can do about it.
function TurnFailure({
  failure,
  running,
  retry,
  onSettings,
}: {
  failure: Failure;
  running: boolean;
  retry: () => void;
  onSettings: () => void;
}) {
  const remedy: Remedy | null = failure.remedy;
  return (
    <div class="msg error" role="alert" data-testid="turn-error">
      {failure.text}
      {remedy && (
        <div class="error-actions">
          {remedy === "retry" && (
            <button type="button" data-testid="retry" onClick={retry} disabled={running}>
              {t("retry")}
            </button>
          )}
          {remedy === "open_settings" && (
            <button type="button" data-testid="open-settings" onClick={onSettings}>
              {t("openSettings")}
            </button>
          )}
        </div>
      )}
    </div>
  );
}

/// Tokens and dollars of one turn.
function UsageLine({ usage }: { usage: TurnUsage }) {
  const n = (v: number) => v.toLocaleString();
  return (
    <div class="usage-line" data-testid="usage">
      {n(usage.input_tokens)} {t("tokensIn")} · {n(usage.output_tokens)} {t("tokensOut")}
      {usage.cost_usd != null ? ` · $${usage.cost_usd.toFixed(4)}` : ""}
    </div>
  );
}

/// A new chat: what Cowork can do, as three things to try that use real tools. A pick fills the
/// field; the person still sends it.
const SUGGESTIONS = ["tryCalendar", "tryFolder", "tryReminder"] as const;
function EmptyChat({ onPick }: { onPick: (text: string) => void }) {
  return (
    <div class="empty-chat" data-testid="empty-chat">
      <h2>{t("emptyTitle")}</h2>
      <div class="suggestions">
        {SUGGESTIONS.map((key) => (
          <button type="button" key={key} class="suggestion" onClick={() => onPick(t(key))}>
            {t(key)}
          </button>
        ))}
      </div>
    </div>
  );
}

/// ‹ 2/3 › between the branches of a message.
function BranchSwitch({
  mid,
  siblings,
  onSwitch,
}: {
  mid: number;
  siblings: number[];
  onSwitch: (id: number) => void;
}) {
  if (siblings.length < 2) return null;
  const at = siblings.indexOf(mid);
  return (
    <span class="branches" data-testid="branches">
      <button
        type="button"
        class="icon"
        aria-label={t("previousBranch")}
        disabled={at <= 0}
        onClick={() => onSwitch(siblings[at - 1])}
      >
        <Icon name="prev" />
      </button>
      {at + 1}/{siblings.length}
      <button
        type="button"
        class="icon"
        aria-label={t("nextBranch")}
        disabled={at >= siblings.length - 1}
        onClick={() => onSwitch(siblings[at + 1])}
      >
        <Icon name="next" />
      </button>
    </span>
  );
}
