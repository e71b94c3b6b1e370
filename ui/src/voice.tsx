// Voice in the window: the microphone indicator (shown whenever the microphone is open, whoever
// opened it — pushed by the shell, never polled), listening from the composer, reading replies
// aloud, and Settings → Voice. Recording and speaking are tool calls through the gate (`listen`
// asks the first time; the person can answer "always").
import { useEffect, useState } from "preact/hooks";
import { api, type MicState, on, type VoiceDevices, type VoiceSettings } from "./api";
import { t } from "./i18n";
import { SaveBar, useDraft } from "./savebar";

/** The latest microphone state. */
export function useMic(): MicState {
  const [mic, setMic] = useState<MicState>({ open: false, level: 0, partial: "" });
  useEffect(() => {
    const un = on("mic-state", setMic);
    return () => {
      un.then((f) => f());
    };
  }, []);
  return mic;
}

/** Always on top while the microphone is open: a level meter and the words heard so far. */
export function MicIndicator() {
  const mic = useMic();
  if (!mic.open) return null;
  return (
    <div class="mic-indicator" role="status" data-testid="mic-indicator">
      <span class="mic-dot" aria-hidden="true" />
      <strong>{t("micOn")}</strong>
      <meter min={0} max={1} value={mic.level ?? 0} aria-label={t("micOn")} data-testid="mic-level" />
      <span class="partial" data-testid="mic-partial">
        {mic.partial || t("listening")}
      </span>
      <button type="button" onClick={() => api.voiceStop()}>
        {t("stopListening")}
      </button>
    </div>
  );
}

interface Heard {
  text: string;
  stopped: { reason: string };
}

/**
 * Records until the person stops (the button again, or letting go of Ctrl+Space) or goes quiet;
 * resolves to the words heard ("" when none), or rejects with the error to show.
 */
export async function listenOnce(conversation: string): Promise<string> {
  const view = await api.callTool("listen", {}, conversation, null);
  if (!view.ok) throw new Error(view.text);
  return ((view.structured as unknown as Heard | null)?.text ?? "").trim();
}

/** Markdown → the words to say: code blocks and link targets left out, marks dropped. */
export function speakable(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*_#>~|]+/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 10000);
}

export function readAloud(text: string, conversation: string) {
  const words = speakable(text);
  if (words) api.callTool("speak", { text: words }, conversation, null).catch(() => {});
}

/** A device list: the system's default, the devices found, and the one set (found or not). */
function DevicePick({
  label,
  value,
  names,
  onPick,
  testid,
}: {
  label: string;
  value: string | null | undefined;
  names: string[];
  onPick: (v: string | null) => void;
  testid: string;
}) {
  return (
    <label>
      {label}
      <select data-testid={testid} value={value ?? ""} onChange={(e) => onPick(e.currentTarget.value || null)}>
        <option value="">{t("systemDefault")}</option>
        {[...new Set([...names, ...(value ? [value] : [])])].map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Settings → Voice. */
export function VoiceSettingsPanel() {
  const draft = useDraft<VoiceSettings>();
  const [devices, setDevices] = useState<VoiceDevices>({ inputs: [], outputs: [] });
  const [status, setStatus] = useState("");
  useEffect(() => {
    api
      .getVoiceSettings()
      .then(draft.load)
      .catch((e) => setStatus(String(e)));
    api
      .voiceDevices()
      .then(setDevices)
      .catch(() => {});
  }, []);
  const settings = draft.value;
  if (!settings) return status ? <p class="status">{status}</p> : null;
  const set = (change: Partial<VoiceSettings>) => draft.set({ ...settings, ...change });
  return (
    <fieldset data-testid="voice-settings">
      <legend>{t("voice")}</legend>
      <DevicePick
        label={t("microphone")}
        value={settings.inputDevice}
        names={devices.inputs}
        onPick={(v) => set({ inputDevice: v })}
        testid="voice-input"
      />
      <DevicePick
        label={t("speaker")}
        value={settings.outputDevice}
        names={devices.outputs}
        onPick={(v) => set({ outputDevice: v })}
        testid="voice-output"
      />
      <label>
        {t("speechModel")}
        <input
          type="text"
          value={settings.model ?? ""}
          placeholder={t("speechModelDefault")}
          onInput={(e) => set({ model: e.currentTarget.value || null })}
        />
      </label>
      <label>
        {t("spokenLanguage")}
        <select value={settings.language ?? ""} onChange={(e) => set({ language: e.currentTarget.value || null })}>
          <option value="">{t("autoDetect")}</option>
          <option value="en">{t("english")}</option>
          <option value="zh">{t("chinese")}</option>
        </select>
      </label>
      <VoiceChecks settings={settings} set={set} />
      <p class="hint">{t("voiceHint")}</p>
      <SaveBar draft={draft} save={(s) => api.saveVoiceSettings(s)} />
    </fieldset>
  );
}

/** Send what was heard at once; read answers aloud. */
function VoiceChecks({ settings, set }: { settings: VoiceSettings; set: (change: Partial<VoiceSettings>) => void }) {
  return (
    <>
      <label class="check">
        <input
          type="checkbox"
          data-testid="voice-auto-send"
          checked={!!settings.autoSend}
          onChange={(e) => set({ autoSend: e.currentTarget.checked })}
        />
        {t("autoSend")}
      </label>
      <label class="check">
        <input
          type="checkbox"
          data-testid="voice-read-aloud"
          checked={!!settings.readAloud}
          onChange={(e) => set({ readAloud: e.currentTarget.checked })}
        />
        {t("readAloud")}
      </label>
    </>
  );
}
