// The microphone: the words land in the input for review (or are sent, as the settings say).
import type { RefObject } from "preact";
import { type Dispatch, useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api";
import { t } from "../i18n";
import { listenOnce } from "../voice";
import type { Action, ChatState } from "./state";

/// The mic button's listening (`busy`) and `listen`, which starts or stops it; Ctrl+Space held
/// does the same.
export function useMicrophone(
  current: RefObject<string | null>,
  latest: RefObject<ChatState>,
  dispatch: Dispatch<Action>,
  submit: (text: string) => Promise<void>,
  inputRef: RefObject<HTMLTextAreaElement | null>,
) {
  const [busy, setBusy] = useState(false);
  const listening = useRef(false);
  const setError = (text: string | null) => dispatch({ type: "error", text });
  const listen = async () => {
    if (listening.current) {
      api.voiceStop();
      return;
    }
    listening.current = true;
    setBusy(true);
    setError(null);
    try {
      const heard = await listenOnce(current.current ?? "voice");
      if (!heard) {
        setError(t("noSpeech"));
        return;
      }
      const text = [latest.current.input.trim(), heard].filter(Boolean).join(" ");
      const settings = await api.getVoiceSettings().catch(() => null);
      if (settings?.autoSend) await submit(text);
      else {
        dispatch({ type: "input", text });
        inputRef.current?.focus();
      }
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      listening.current = false;
      setBusy(false);
    }
  };
  useTalkKey(listening, listen);
  return { busy, listen };
}

/// Hold Ctrl+Space to talk; letting go ends the recording. Esc stops listening and speech.
function useTalkKey(listening: RefObject<boolean>, listen: () => void) {
  useEffect(() => {
    const down = (e: KeyboardEvent) => {
      if (e.key === "Escape") api.voiceStop().catch(() => {});
      if (e.ctrlKey && e.code === "Space" && !e.repeat && !listening.current) {
        e.preventDefault();
        listen();
      }
    };
    const up = (e: KeyboardEvent) => {
      if (listening.current && (e.code === "Space" || e.key === "Control")) api.voiceStop().catch(() => {});
    };
    window.addEventListener("keydown", down);
    window.addEventListener("keyup", up);
    return () => {
      window.removeEventListener("keydown", down);
      window.removeEventListener("keyup", up);
    };
  }, []);
}
