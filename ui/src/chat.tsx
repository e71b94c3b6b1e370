// The chat view. Its state changes in one pure function (chat/state.ts); hooks turn the shell's
// events and the person's actions into those changes (chat/events.ts, turns.ts, conversation.ts,
// attachments.tsx, microphone.ts); the pieces of the page are small components (chat/bar.tsx,
// messages.tsx, composer.tsx).
import type { RefObject } from "preact";
import { useEffect, useReducer, useRef } from "preact/hooks";
import { api, type FirstRun } from "./api";
import { PendingAttachments, useAttachments } from "./chat/attachments";
import { ChatBar, FirstRunBanner, SystemPrompt, useChatOptions } from "./chat/bar";
import { Composer } from "./chat/composer";
import { useContextPanel, useWatchedResources } from "./chat/context";
import { useConversation } from "./chat/conversation";
import { useAgentEvents, useFollowEnd } from "./chat/events";
import { MessageList } from "./chat/messages";
import { useMicrophone } from "./chat/microphone";
import { initialState, reduce } from "./chat/state";
import { useTurns } from "./chat/turns";
import { WorkspaceBar } from "./desktop";

export function Chat({
  conversation,
  firstRun,
  onConversation,
  onSettings,
  onProviderSaved,
}: {
  conversation: string | null;
  firstRun: FirstRun | null;
  onConversation: (id: string) => void;
  onSettings: () => void;
  onProviderSaved: () => void;
}) {
  const [state, dispatch] = useReducer(reduce, initialState);
  const latest = useRef(state);
  latest.current = state;
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const setError = (text: string | null) => dispatch({ type: "error", text });
  const conv = useConversation(conversation, onConversation, state.running, dispatch, setError);
  useInputFocus(inputRef, conversation);
  const options = useChatOptions(conv, setError);
  const bottom = useFollowEnd(state.items, useAgentEvents(conv.current, dispatch, conv.reload, latest));
  const turns = useTurns(state, dispatch, conv, setError, onProviderSaved);
  const { attachPaths, attachBlobs } = useAttachments(conv.ensureId, dispatch, setError);
  const context = useContextPanel(conv.ensureId, dispatch, setError, inputRef);
  useWatchedResources(latest, conv.ensureId, dispatch);
  const mic = useMicrophone(conv.current, latest, dispatch, turns.submit, inputRef);
  const pick = (text: string) => {
    dispatch({ type: "input", text });
    inputRef.current?.focus();
  };
  return (
    <section
      class="chat"
      onPaste={(e) => {
        const files = [...(e.clipboardData?.files ?? [])];
        if (files.length) {
          e.preventDefault();
          attachBlobs(files);
        }
      }}
    >
      <WorkspaceBar conversation={conversation} />
      <ChatBar
        options={options}
        conversation={conversation}
        running={state.running}
        run={turns.run}
        setError={setError}
      />
      {options.systemOpen && <SystemPrompt options={options} />}
      {firstRun && !firstRun.provider_configured && (
        <FirstRunBanner firstRun={firstRun} useLocal={turns.useLocal} onSettings={onSettings} />
      )}
      <MessageList
        state={state}
        dispatch={dispatch}
        turns={turns}
        onPick={pick}
        onSettings={onSettings}
        bottom={bottom}
      />
      <PendingAttachments parts={state.attachments} dispatch={dispatch} />
      {context.panel}
      <Composer
        input={state.input}
        running={state.running}
        inputRef={inputRef}
        dispatch={dispatch}
        submit={turns.submit}
        stop={turns.stop}
        attachPaths={attachPaths}
        attachBlobs={attachBlobs}
        setError={setError}
        mic={mic}
        openContext={context.toggle}
      />
    </section>
  );
}

/// The input has the focus when a conversation opens. At launch, that is the benchmark's finish
/// line: the input exists and has the focus.
function useInputFocus(inputRef: RefObject<HTMLTextAreaElement | null>, conversation: string | null) {
  useEffect(() => {
    inputRef.current?.focus();
  }, [conversation]);
  useEffect(() => {
    inputRef.current?.focus();
    api.uiReady().catch(() => {});
  }, []);
}
