// Where the person writes: attach, the message, the microphone, send (or stop the turn).
import type { RefObject } from "preact";
import type { Dispatch } from "preact/hooks";
import { api } from "../api";
import { t } from "../i18n";
import { Icon } from "./icon";
import type { Action } from "./state";

export function Composer({
  input,
  running,
  inputRef,
  dispatch,
  submit,
  stop,
  attachPaths,
  attachBlobs,
  setError,
  mic,
  openContext,
}: {
  input: string;
  running: boolean;
  inputRef: RefObject<HTMLTextAreaElement | null>;
  dispatch: Dispatch<Action>;
  submit: (text?: string) => void;
  stop: () => void;
  attachPaths: (paths: string[]) => void;
  attachBlobs: (files: File[]) => void;
  setError: (e: string) => void;
  mic: { busy: boolean; listen: () => void };
  openContext: () => void;
}) {
  return (
    <div class="composer">
      <ComposerButton
        name="attach"
        label={t("attach")}
        onClick={() =>
          api
            .pickFiles()
            .then(attachPaths)
            .catch((e) => setError(String(e)))
        }
      />
      <ComposerButton name="toolpacks" label={t("fromToolpacks")} onClick={openContext} />
      <input
        type="file"
        multiple
        hidden
        data-testid="attach-input"
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          e.currentTarget.value = "";
          attachBlobs(files);
        }}
      />
      <textarea
        ref={inputRef}
        data-testid="chat-input"
        rows={2}
        placeholder={t("placeholder")}
        value={input}
        onInput={(e) => dispatch({ type: "input", text: e.currentTarget.value })}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            submit(e.currentTarget.value);
          }
        }}
      />
      <MicButton {...mic} />
      {running ? (
        <button type="button" class="stop" onClick={stop}>
          {t("stop")}
        </button>
      ) : (
        <button type="button" class="primary" data-testid="send" onClick={() => submit()}>
          {t("send")}
        </button>
      )}
    </div>
  );
}

/// An icon button beside the message box.
function ComposerButton({
  name,
  label,
  onClick,
}: {
  name: "attach" | "toolpacks";
  label: string;
  onClick: () => void;
}) {
  return (
    <button
      type="button"
      class="attach"
      data-testid={name === "attach" ? "attach" : "context"}
      title={label}
      aria-label={label}
      onClick={onClick}
    >
      <Icon name={name} />
    </button>
  );
}

/// Listens (or stops listening) on a click; pressed while it listens.
function MicButton({ busy, listen }: { busy: boolean; listen: () => void }) {
  return (
    <button
      type="button"
      class={busy ? "mic on" : "mic"}
      data-testid="mic"
      aria-pressed={busy}
      title={busy ? t("stopListening") : t("micButton")}
      aria-label={busy ? t("stopListening") : t("micButton")}
      onClick={listen}
    >
      <svg
        viewBox="0 0 24 24"
        width="18"
        height="18"
        aria-hidden="true"
        fill="none"
        stroke="currentColor"
        stroke-width="2"
        stroke-linecap="round"
      >
        <rect x="9" y="3" width="6" height="11" rx="3" />
        <path d="M5 11a7 7 0 0 0 14 0M12 18v3" />
      </svg>
    </button>
  );
}
