// The bar above the conversation: its model, persona, system prompt and tools, and what can be
// done with it (compact, export, copy as Markdown); and the first run's banner.
import { useEffect, useState } from "preact/hooks";
import { api, type ConversationSettings, type FirstRun, type LocalServer } from "../api";
import { t } from "../i18n";
import { ProfileSelect, useProfileNames } from "../profiles";
import type { Conversation } from "./conversation";

export type ChatOptions = ReturnType<typeof useChatOptions>;

/// The conversation's settings as the bar edits them: saved at once (a new chat gets its id
/// and is announced); the models are listed when the person first opens the list.
export function useChatOptions(conv: Conversation, setError: (e: string) => void) {
  const [models, setModels] = useState<string[]>([]);
  const [personas, setPersonas] = useState<string[]>([]);
  const profiles = useProfileNames();
  const [systemOpen, setSystemOpen] = useState(false);
  useEffect(() => {
    api
      .getAgentSettings()
      .then((a) => setPersonas((a?.personas ?? []).map((p) => p.name)))
      .catch(() => {});
  }, []);
  const openModels = () => {
    if (!models.length)
      api
        .listModels()
        .then(setModels)
        .catch((e) => setError(String(e)));
  };
  const saveSettings = async (next: ConversationSettings) => {
    const id = conv.ensureId();
    conv.setSettings(next);
    await api.saveConversationSettings(id, next).catch((e) => setError(String(e)));
    conv.announce(id);
  };
  const { settings, setSettings } = conv;
  return { settings, setSettings, saveSettings, models, openModels, personas, profiles, systemOpen, setSystemOpen };
}

export function ChatBar({
  options: o,
  conversation,
  running,
  run,
  setError,
}: {
  options: ChatOptions;
  conversation: string | null;
  running: boolean;
  run: (what: () => Promise<unknown>) => void;
  setError: (e: string) => void;
}) {
  const { settings, saveSettings } = o;
  return (
    <div class="chat-bar" data-testid="chat-bar">
      <ModelSelect options={o} />
      <select
        data-testid="chat-persona"
        aria-label={t("persona")}
        value={settings.persona ?? ""}
        onChange={(e) => saveSettings({ ...settings, persona: e.currentTarget.value || null })}
      >
        <option value="">{t("defaultPersona")}</option>
        {o.personas.map((p) => (
          <option key={p} value={p}>
            {p}
          </option>
        ))}
      </select>
      <ProfileSelect
        testid="chat-profile"
        profiles={o.profiles}
        value={settings.profile}
        onChange={(profile) => saveSettings({ ...settings, profile })}
      />
      <button
        type="button"
        data-testid="system-prompt"
        aria-pressed={o.systemOpen}
        class={settings.system ? "set" : ""}
        onClick={() => o.setSystemOpen(!o.systemOpen)}
        title={t("systemPromptHint")}
      >
        {t("systemPrompt")}
      </button>
      <label class="check" title={t("allToolsHint")}>
        <input
          type="checkbox"
          checked={settings.allTools}
          onChange={(e) => saveSettings({ ...settings, allTools: e.currentTarget.checked })}
        />{" "}
        {t("allTools")}
      </label>
      <span class="spacer" />
      {conversation && (
        <ConversationActions conversation={conversation} running={running} run={run} setError={setError} />
      )}
    </div>
  );
}

/// The model list: the default, the one set, and the provider's (listed when first opened).
function ModelSelect({ options: o }: { options: ChatOptions }) {
  const { settings } = o;
  return (
    <select
      data-testid="chat-model"
      aria-label={t("model")}
      value={settings.model ?? ""}
      onFocus={o.openModels}
      onMouseDown={o.openModels}
      onMouseEnter={o.openModels}
      onChange={(e) => o.saveSettings({ ...settings, model: e.currentTarget.value || null })}
    >
      <option value="">{t("defaultModel")}</option>
      {[...new Set([...(settings.model ? [settings.model] : []), ...o.models])].map((m) => (
        <option key={m} value={m}>
          {m}
        </option>
      ))}
    </select>
  );
}

export const copyText = (text: string) => navigator.clipboard?.writeText(text).catch(() => {});

/// Compact, export to a file, copy as Markdown: for a conversation that exists.
function ConversationActions({
  conversation,
  running,
  run,
  setError,
}: {
  conversation: string;
  running: boolean;
  run: (what: () => Promise<unknown>) => void;
  setError: (e: string) => void;
}) {
  return (
    <>
      <button
        type="button"
        data-testid="compact"
        disabled={running}
        onClick={() => run(() => api.compactConversation(conversation))}
        title={t("compactHint")}
      >
        {t("compact")}
      </button>
      <button
        type="button"
        data-testid="export"
        onClick={() => api.saveExport(conversation).catch((e) => setError(String(e)))}
      >
        {t("export")}
      </button>
      <button
        type="button"
        data-testid="copy-markdown"
        onClick={() =>
          api
            .exportConversation(conversation)
            .then(copyText)
            .catch((e) => setError(String(e)))
        }
      >
        {t("copyMarkdown")}
      </button>
    </>
  );
}

/// The conversation's own system prompt, saved when the field is left.
export function SystemPrompt({ options: o }: { options: ChatOptions }) {
  const { settings } = o;
  return (
    <div class="chat-system">
      <textarea
        data-testid="system-input"
        rows={3}
        placeholder={t("systemPromptHint")}
        value={settings.system ?? ""}
        onInput={(e) => o.setSettings({ ...settings, system: e.currentTarget.value || null })}
        onBlur={(e) => o.saveSettings({ ...settings, system: e.currentTarget.value.trim() || null })}
      />
    </div>
  );
}

/// No provider yet: a model server found on this computer in one click, or the settings.
export function FirstRunBanner({
  firstRun,
  useLocal,
  onSettings,
}: {
  firstRun: FirstRun;
  useLocal: (found: LocalServer) => void;
  onSettings: () => void;
}) {
  return (
    <div class="banner" data-testid="first-run">
      <p>{t("noProvider")}</p>
      {firstRun.provider_error && <p class="error">{firstRun.provider_error}</p>}
      {firstRun.local_servers.map(
        (found) =>
          found.models.length > 0 && (
            <button
              type="button"
              key={found.baseUrl}
              class="primary"
              data-testid="use-local-server"
              onClick={() => useLocal(found)}
            >
              {t("useLocal")} {found.name} · {found.models[0]}
            </button>
          ),
      )}
      <button type="button" class={firstRun.local_servers.length ? "" : "primary"} onClick={onSettings}>
        {t("addProvider")}
      </button>
    </div>
  );
}
