// Settings: a list of pages on the left and one page at a time, each saved through the same
// save bar (savebar.tsx). The last page opened is remembered. Leaving a page with unsaved
// changes asks first (Keep editing · Discard · Save and leave): pages are not kept mounted
// behind the one shown, since their drafts would go stale as settings change elsewhere.
import { useEffect, useRef, useState } from "preact/hooks";
import { AccountsSettings } from "./accounts";
import {
  type Action,
  type AgentSettings,
  api,
  type Grant,
  type Managed,
  type Mode,
  type Persona,
  type PolicyProblem,
  type RuleEntry,
  type RuleScope,
  type Words,
} from "./api";
import { SchedulesPanel } from "./chains";
import { DesktopSettingsPanel } from "./desktop";
import { ComputerPage } from "./doctor";
import { getLang, type Lang, phrase, said, setLang, sourceLabel, t } from "./i18n";
import { MemorySettings } from "./memory";
import { modeLabel, ProfileSelect, Profiles } from "./profiles";
import { guardLeaving, LeaveConfirm, leaveThen, SaveBar, SaveSlot, type Unsaved, useDraft } from "./savebar";
import { applyTheme } from "./views";
import { VoiceSettingsPanel } from "./voice";
import { WebSettingsPanel } from "./web";

type Key = Parameters<typeof t>[0];
export const PAGES = [
  "model",
  "permissions",
  "accounts",
  "memory",
  "voice",
  "web",
  "desktop",
  "schedules",
  "appearance",
  "computer",
] as const;
export type SettingsPage = (typeof PAGES)[number];
/** Each page's title, its one line on what it is for, and whether it is one panel (its frame
 * and legend would only repeat the page's title). */
const PAGE_TEXT: Record<SettingsPage, [Key, Key, "single"?]> = {
  model: ["pageModel", "pageModelHint"],
  permissions: ["pagePermissions", "pagePermissionsHint"],
  accounts: ["accounts", "pageAccountsHint", "single"],
  memory: ["memory", "pageMemoryHint", "single"],
  voice: ["voice", "pageVoiceHint", "single"],
  web: ["web", "pageWebHint", "single"],
  desktop: ["desktop", "pageDesktopHint", "single"],
  schedules: ["schedules", "pageSchedulesHint", "single"],
  appearance: ["pageAppearance", "pageAppearanceHint", "single"],
  computer: ["pageComputer", "pageComputerHint", "single"],
};
const PAGE_KEY = "settingsPage";

function remembered(): SettingsPage {
  const page = localStorage.getItem(PAGE_KEY);
  return (PAGES as readonly string[]).includes(page ?? "") ? (page as SettingsPage) : "model";
}

/** Settings opens next on `page` (the chat's "Add a provider" opens it on Model). */
export function showSettingsPage(page: SettingsPage) {
  localStorage.setItem(PAGE_KEY, page);
}

/** Below this width the page list becomes a scrolling row above the page. */
const NARROW = "(max-width: 900px)";
function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => matchMedia(NARROW).matches);
  useEffect(() => {
    const query = matchMedia(NARROW);
    const change = () => setNarrow(query.matches);
    query.addEventListener("change", change);
    return () => query.removeEventListener("change", change);
  }, []);
  return narrow;
}

/** The page list: tabs, one focus stop; arrows, Home and End move between pages. */
function PageTabs({
  page,
  dirty,
  onOpen,
}: {
  page: SettingsPage;
  dirty: boolean;
  onOpen: (page: SettingsPage) => void;
}) {
  const narrow = useNarrow();
  const list = useRef<HTMLDivElement>(null);
  // The chosen tab takes the focus when the arrows chose it (not when the page opened).
  useEffect(() => {
    const tab = list.current?.querySelector<HTMLElement>(`[data-page="${page}"]`);
    if (tab && list.current?.contains(document.activeElement)) tab.focus();
    tab?.scrollIntoView?.({ block: "nearest", inline: "nearest" });
  }, [page]);
  const keys = (e: KeyboardEvent) => {
    const i = PAGES.indexOf(page),
      n = PAGES.length;
    const moves: Record<string, number> = {
      ArrowDown: i + 1,
      ArrowRight: i + 1,
      ArrowUp: i - 1 + n,
      ArrowLeft: i - 1 + n,
      Home: 0,
      End: n - 1,
    };
    if (!(e.key in moves)) return;
    e.preventDefault();
    onOpen(PAGES[moves[e.key] % n]);
  };
  return (
    <div
      class="settings-tabs"
      role="tablist"
      ref={list}
      aria-label={t("settingsPages")}
      aria-orientation={narrow ? "horizontal" : "vertical"}
      onKeyDown={keys}
    >
      {PAGES.map((p) => (
        <button
          type="button"
          key={p}
          role="tab"
          id={`settings-tab-${p}`}
          data-page={p}
          aria-selected={p === page}
          aria-controls={p === page ? `settings-panel-${p}` : undefined}
          tabIndex={p === page ? 0 : -1}
          data-dirty={p === page && dirty ? "true" : undefined}
          onClick={() => onOpen(p)}
        >
          {t(PAGE_TEXT[p][0])}
        </button>
      ))}
    </div>
  );
}

function PageBody({
  page,
  conversation,
  onChange,
}: {
  page: SettingsPage;
  conversation: string | null;
  onChange: () => void;
}) {
  switch (page) {
    case "model":
      return <ModelPage onChange={onChange} />;
    case "permissions":
      return <PermissionsPage conversation={conversation} />;
    case "accounts":
      return <AccountsSettings />;
    case "memory":
      return <MemorySettings />;
    case "voice":
      return <VoiceSettingsPanel />;
    case "web":
      return <WebSettingsPanel />;
    case "desktop":
      return <DesktopSettingsPanel />;
    case "schedules":
      return <SchedulesPanel />;
    case "appearance":
      return <AppearancePage onChange={onChange} />;
    case "computer":
      return <ComputerPage />;
  }
}

export function SettingsView({ conversation, onChange }: { conversation: string | null; onChange: () => void }) {
  const [page, setPage] = useState<SettingsPage>(remembered);
  // The shown page's unsaved changes (its save bar reports them), and a leave waiting on the person.
  const [unsaved, setUnsaved] = useState<{ save: Unsaved }>({ save: null });
  const [asking, setAsking] = useState<{ proceed: () => void } | null>(null);
  const pending = useRef(unsaved);
  pending.current = unsaved;
  // The ref is written at once: a state update re-renders later, and a leave in between would
  // still see the changes just saved as unsaved.
  const report = useRef((save: Unsaved) => {
    const next = { save };
    pending.current = next;
    setUnsaved(next);
  }).current;
  useEffect(
    () =>
      guardLeaving((proceed) => {
        if (!pending.current.save) return false;
        setAsking({ proceed });
        return true;
      }),
    [],
  );
  const open = (next: SettingsPage) => {
    if (next !== page)
      leaveThen(() => {
        setPage(next);
        localStorage.setItem(PAGE_KEY, next);
      });
  };
  const saveAndLeave = async () => {
    const ok = await pending.current.save?.();
    const proceed = asking?.proceed;
    setAsking(null);
    // A failed save stays on the page, its error in the bar.
    if (ok && proceed) proceed();
  };
  const [title, hint] = PAGE_TEXT[page];
  return (
    <section class="page settings">
      <h1>{t("settings")}</h1>
      <div class="settings-layout">
        <PageTabs page={page} dirty={!!unsaved.save} onOpen={open} />
        <div
          class="settings-page"
          role="tabpanel"
          id={`settings-panel-${page}`}
          aria-labelledby={`settings-tab-${page}`}
          data-testid={`settings-page-${page}`}
          data-dirty={unsaved.save ? "true" : "false"}
          data-single={PAGE_TEXT[page][2] ? "" : undefined}
        >
          <h2>{t(title)}</h2>
          <p class="hint page-hint">{t(hint)}</p>
          <SaveSlot.Provider value={report}>
            <PageBody key={page} page={page} conversation={conversation} onChange={onChange} />
          </SaveSlot.Provider>
        </div>
      </div>
      {asking && (
        <LeaveConfirm
          onStay={() => setAsking(null)}
          onDiscard={() => {
            setAsking(null);
            asking.proceed();
          }}
          onSave={saveAndLeave}
        />
      )}
    </section>
  );
}

const DEFAULTS: Record<AgentSettings["provider"], { baseUrl: string; apiKeyEnv: string }> = {
  anthropic: { baseUrl: "https://api.anthropic.com", apiKeyEnv: "ANTHROPIC_API_KEY" },
  openai: { baseUrl: "http://127.0.0.1:11434/v1", apiKeyEnv: "" },
};

/** Settings → Model: the provider and the conversations' settings, one draft and one save. */
function ModelPage({ onChange }: { onChange: () => void }) {
  const draft = useDraft<AgentSettings>();
  const [status, setStatus] = useState("");
  useEffect(() => {
    const blank: AgentSettings = { provider: "anthropic", model: "", ...DEFAULTS.anthropic };
    api
      .getAgentSettings()
      .then((s) => draft.load(s ?? blank))
      .catch((e) => {
        draft.load(blank);
        setStatus(String(e));
      });
  }, []);
  const settings = draft.value;
  if (!settings) return null;
  return (
    <>
      <ProviderFields settings={settings} onChange={draft.set} status={status} setStatus={setStatus} />
      <ChatSettings settings={settings} onChange={draft.set} />
      <SaveBar
        draft={draft}
        save={async (s) => {
          await api.saveAgentSettings(s);
          onChange();
        }}
      />
    </>
  );
}

/// Storing the key is an act, not an edit: it goes to the keyring at once, never to the draft.
function useApiKey(setStatus: (s: string) => void) {
  const [key, setKey] = useState("");
  const [hasKey, setHasKey] = useState(false);
  useEffect(() => {
    api
      .hasApiKey()
      .then(setHasKey)
      .catch(() => {});
  }, []);
  const storeKey = async () => {
    try {
      await api.setApiKey(key);
      setKey("");
      setHasKey(true);
      setStatus(t("keyStored"));
    } catch (e) {
      setStatus(String(e));
    }
  };
  return { key, setKey, hasKey, storeKey };
}

function ProviderFields({
  settings,
  onChange,
  status,
  setStatus,
}: {
  settings: AgentSettings;
  onChange: (s: AgentSettings) => void;
  status: string;
  setStatus: (s: string) => void;
}) {
  // The settings as typed, tried before they are saved: the models the server offers fill the
  // model field's choices (the first one if the field is empty).
  const [offered, setOffered] = useState<string[]>([]);
  const testConnection = async () => {
    setStatus("…");
    try {
      const models = await api.testProvider(settings);
      setOffered(models);
      if (!settings.model && models[0]) onChange({ ...settings, model: models[0] });
      setStatus(`${t("connected")} · ${models.length} ${t("modelsOffered")}`);
    } catch (e) {
      setStatus(String(e));
    }
  };
  return (
    <fieldset>
      <legend>{t("provider")}</legend>
      <ServerFields settings={settings} onChange={onChange} offered={offered} />
      <ApiKeyField setStatus={setStatus} />
      <div class="row">
        <button type="button" data-testid="test-provider" onClick={testConnection}>
          {t("testConnection")}
        </button>
        <span class="status" role="status">
          {status}
        </span>
      </div>
    </fieldset>
  );
}

/// The provider, its address and model (the models it offered to pick from), and where its key
/// is read from.
function ServerFields({
  settings,
  onChange,
  offered,
}: {
  settings: AgentSettings;
  onChange: (s: AgentSettings) => void;
  offered: string[];
}) {
  return (
    <>
      <label>
        {t("provider")}
        <select
          value={settings.provider}
          onChange={(e) => {
            const p = e.currentTarget.value as AgentSettings["provider"];
            onChange({ ...settings, provider: p, ...DEFAULTS[p] });
          }}
        >
          <option value="anthropic">Anthropic</option>
          <option value="openai">OpenAI-compatible (OpenAI, Ollama, DeepSeek, Qwen, LM Studio, llama.cpp)</option>
        </select>
      </label>
      <label>
        {t("baseUrl")}
        <input value={settings.baseUrl} onInput={(e) => onChange({ ...settings, baseUrl: e.currentTarget.value })} />
      </label>
      <label>
        {t("model")}
        <input
          list="provider-models"
          data-testid="provider-model"
          value={settings.model}
          onInput={(e) => onChange({ ...settings, model: e.currentTarget.value })}
        />
      </label>
      <datalist id="provider-models">
        {offered.map((m) => (
          <option key={m} value={m} />
        ))}
      </datalist>
      <label>
        {t("apiKeyEnv")}
        <input
          value={settings.apiKeyEnv}
          onInput={(e) => onChange({ ...settings, apiKeyEnv: e.currentTarget.value })}
        />
      </label>
      <p class="hint">{t("keyNote")}</p>
    </>
  );
}

function ApiKeyField({ setStatus }: { setStatus: (s: string) => void }) {
  const { key, setKey, hasKey, storeKey } = useApiKey(setStatus);
  return (
    <label>
      {t("apiKey")}
      <span class="row">
        <input type="password" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <button type="button" disabled={!key} onClick={storeKey}>
          {t("storeKey")}
        </button>
      </span>
      <span class="hint">{hasKey ? t("keyStored") : t("noKey")}</span>
    </label>
  );
}

/// The model's window and vision, saved personas and prices (for the cost per turn).
function ChatSettings({ settings, onChange }: { settings: AgentSettings; onChange: (s: AgentSettings) => void }) {
  return (
    <fieldset data-testid="chat-settings">
      <legend>{t("chatSettings")}</legend>
      <label>
        {t("contextWindow")}
        <input
          type="number"
          min={1024}
          step={1024}
          value={settings.contextWindow ?? 128000}
          onInput={(e) => onChange({ ...settings, contextWindow: Number(e.currentTarget.value) })}
        />
      </label>
      <label class="inline">
        <input
          type="checkbox"
          checked={settings.vision ?? true}
          onChange={(e) => onChange({ ...settings, vision: e.currentTarget.checked })}
        />{" "}
        {t("vision")}
      </label>
      <label class="inline">
        <input
          type="checkbox"
          data-testid="local-model-sees-secrets"
          checked={settings.localModelSeesSecrets ?? false}
          onChange={(e) => onChange({ ...settings, localModelSeesSecrets: e.currentTarget.checked })}
        />{" "}
        {t("localModelSeesSecrets")}
        <span class="hint">{t("localModelSeesSecretsHint")}</span>
      </label>
      <Personas settings={settings} onChange={onChange} />
      <Prices settings={settings} onChange={onChange} />
      <Profiles settings={settings} onChange={onChange} />
    </fieldset>
  );
}

function Personas({ settings, onChange }: { settings: AgentSettings; onChange: (s: AgentSettings) => void }) {
  const personas = settings.personas ?? [];
  const setPersona = (i: number, next: Persona) =>
    onChange({ ...settings, personas: personas.map((p, j) => (j === i ? next : p)) });
  const profiles = (settings.profiles ?? []).map((p) => p.name).filter(Boolean);
  return (
    <>
      <h3>{t("personas")}</h3>
      {personas.map((p, i) => (
        <div class="persona" key={i}>
          <input
            placeholder={t("personaName")}
            value={p.name}
            onInput={(e) => setPersona(i, { ...p, name: e.currentTarget.value })}
          />
          <textarea
            rows={2}
            placeholder={t("systemPrompt")}
            value={p.system}
            onInput={(e) => setPersona(i, { ...p, system: e.currentTarget.value })}
          />
          <ProfileSelect
            testid="persona-profile"
            profiles={profiles}
            value={p.profile}
            onChange={(profile) => setPersona(i, { ...p, profile })}
          />
          <button
            type="button"
            class="icon"
            aria-label={t("remove")}
            onClick={() => onChange({ ...settings, personas: personas.filter((_, j) => j !== i) })}
          >
            ×
          </button>
        </div>
      ))}
      <button
        type="button"
        onClick={() => onChange({ ...settings, personas: [...personas, { name: "", system: "" }] })}
      >
        + {t("addPersona")}
      </button>
    </>
  );
}

type Price = { inputPerMtok: number | null; outputPerMtok: number | null };

/// Each model's price per million tokens in and out.
function Prices({ settings, onChange }: { settings: AgentSettings; onChange: (s: AgentSettings) => void }) {
  const prices = Object.entries(settings.prices ?? {});
  const setPrices = (entries: [string, Price][]) => onChange({ ...settings, prices: Object.fromEntries(entries) });
  const setRow = (i: number, row: [string, Price]) => setPrices(prices.map((p, j) => (j === i ? row : p)));
  return (
    <>
      <h3>{t("prices")}</h3>
      <table class="prices">
        <tbody>
          {prices.map(([model, price], i) => (
            <tr key={i}>
              <td>
                <input
                  placeholder={t("model")}
                  value={model}
                  onInput={(e) => setRow(i, [e.currentTarget.value, price])}
                />
              </td>
              <td>
                <PriceInput
                  label={t("inputPrice")}
                  value={price.inputPerMtok}
                  set={(v) => setRow(i, [model, { ...price, inputPerMtok: v }])}
                />
              </td>
              <td>
                <PriceInput
                  label={t("outputPrice")}
                  value={price.outputPerMtok}
                  set={(v) => setRow(i, [model, { ...price, outputPerMtok: v }])}
                />
              </td>
              <td>
                <button
                  type="button"
                  class="icon"
                  aria-label={t("remove")}
                  onClick={() => setPrices(prices.filter((_, j) => j !== i))}
                >
                  ×
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">{t("pricesHint")}</p>
      <button
        type="button"
        onClick={() => setPrices([...prices, [settings.model, { inputPerMtok: 0, outputPerMtok: 0 }]])}
      >
        + {t("addPrice")}
      </button>
    </>
  );
}

function PriceInput({ label, value, set }: { label: string; value: number | null; set: (v: number) => void }) {
  return (
    <input
      type="number"
      min={0}
      step={0.01}
      aria-label={label}
      value={value ?? 0}
      onInput={(e) => set(Number(e.currentTarget.value))}
    />
  );
}

/** Settings → Permissions: the mode (an edit, saved by the bar) and the rules (each added or
 * revoked at once: acts, not edits). */
function PermissionsPage({ conversation }: { conversation: string | null }) {
  const mode = useDraft<Mode>();
  const [hasWorkspace, setHasWorkspace] = useState(false);
  useEffect(() => {
    api
      .firstRun()
      .then((f) => {
        mode.load(f.mode);
        setHasWorkspace(f.workspace);
      })
      .catch(() => mode.load("normal"));
  }, []);
  return (
    <>
      <fieldset data-testid="mode">
        <legend>{t("mode")}</legend>
        {(["normal", "plan", "accept-edits"] as Mode[]).map((m) => (
          <label class="inline" key={m}>
            {/* Off until the saved mode is loaded: a choice made earlier would be undone by it. */}
            <input
              type="radio"
              name="mode"
              checked={mode.value === m}
              disabled={mode.value === null}
              onChange={() => mode.set(m)}
            />
            {modeLabel(m)}
          </label>
        ))}
      </fieldset>
      <ManagedNote />
      <RulesFields conversation={conversation} hasWorkspace={hasWorkspace} />
      <GrantsFields />
      <SaveBar draft={mode} save={(m) => api.setMode(m)} />
    </>
  );
}

/// What the organisation's managed settings impose: shown so the person knows why a mode or a
/// rule is not theirs to change.
function ManagedNote() {
  const [managed, setManaged] = useState<Managed | null>(null);
  useEffect(() => {
    api
      .managedPolicy()
      .then(setManaged)
      .catch(() => {});
  }, []);
  if (!managed || managed.files.length === 0) return null;
  return (
    <p class="hint" data-testid="managed">
      🏢 {t("managedBy")} <code>{managed.files.join(", ")}</code>
      {managed.ceiling && (
        <>
          {" "}
          · {t("modeCeiling")} <strong>{modeLabel(managed.ceiling[0])}</strong>
        </>
      )}
    </p>
  );
}

/// Every standing permission the person gave — "always" rules and every conversation's grants —
/// in one place, each revocable.
function GrantsFields() {
  const [grants, setGrants] = useState<Grant[]>([]);
  const load = () => {
    api
      .listGrants()
      .then(setGrants)
      .catch(() => {});
  };
  useEffect(load, []);
  return (
    <fieldset data-testid="grants">
      <legend>{t("grants")}</legend>
      <p class="hint">{grants.length === 0 ? t("noGrants") : t("grantsHint")}</p>
      <table class="rules">
        <tbody>
          {grants.map((g) => (
            <tr key={g.rule + (g.conversation ?? g.file ?? "")}>
              <td>
                <span class="rule-meaning">{phrase(g.meaning)}</span> <code class="rule-text">{g.rule}</code>
              </td>
              <td>{g.conversation ? `${t("thisConversation")}: ${g.conversation}` : sourceLabel(g.source)}</td>
              <td>
                <button
                  type="button"
                  onClick={async () => {
                    await api.removeRule(g.rule, g.conversation ?? null);
                    load();
                  }}
                >
                  {t("revoke")}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </fieldset>
  );
}

/// The rules in effect (for this conversation too) and the policy files' problems.
function useRules(conversation: string | null) {
  const [rules, setRules] = useState<RuleEntry[]>([]);
  const [problems, setProblems] = useState<PolicyProblem[]>([]);
  const loadRules = () => {
    api.listRules(conversation).then(setRules);
    api
      .policyProblems()
      .then(setProblems)
      .catch(() => {});
  };
  useEffect(loadRules, []);
  return { rules, problems, loadRules };
}

function RulesFields({ conversation, hasWorkspace }: { conversation: string | null; hasWorkspace: boolean }) {
  const { rules, problems, loadRules } = useRules(conversation);
  return (
    <fieldset>
      <legend>{t("rules")}</legend>
      {problems.map((p) => (
        <p class="error" key={p.file + p.message}>
          ⚠ <code>{p.file}</code>: {p.message}
        </p>
      ))}
      <p class="hint">{t("rulesHint")}</p>
      <table class="rules" data-testid="rules">
        <tbody>
          {rules.map((r) => (
            <RuleRow key={r.rule + r.source} r={r} conversation={conversation} loadRules={loadRules} />
          ))}
        </tbody>
      </table>
      <NewRule hasWorkspace={hasWorkspace} loadRules={loadRules} />
    </fieldset>
  );
}

/// A rule: its action, its meaning in words and its text (a warning when it is broad), where it
/// comes from, and revoke (not for the built-in ones).
function RuleRow({ r, conversation, loadRules }: { r: RuleEntry; conversation: string | null; loadRules: () => void }) {
  return (
    <tr>
      <td class={`action ${r.action}`}>{said("action", r.action)}</td>
      <td>
        <span class="rule-meaning">{phrase(r.meaning)}</span>{" "}
        <code class="rule-text" title={t("ruleText")}>
          {r.rule}
        </code>
        {r.broad && (
          <span class="error" title={phrase(r.broad)} data-testid="broad-warning">
            {" "}
            ⚠ {phrase(r.broad)}
          </span>
        )}
      </td>
      <td>{sourceLabel(r.source)}</td>
      <td>
        {r.source !== "builtin" && r.source !== "managed" && (
          <button
            type="button"
            onClick={async () => {
              await api.removeRule(r.rule, conversation);
              loadRules();
            }}
          >
            {t("revoke")}
          </button>
        )}
      </td>
    </tr>
  );
}

/// A new rule: its action, its text and (in a workspace) where it is kept. A broad allow rule
/// (`*`, a bare run_command, `read_file(//**)`) is added only after the person sees why it is
/// broad and confirms.
function NewRule({ hasWorkspace, loadRules }: { hasWorkspace: boolean; loadRules: () => void }) {
  const [newRule, setNewRule] = useState("");
  const [newAction, setNewAction] = useState<Action>("allow");
  const [newScope, setNewScope] = useState<RuleScope>("user");
  const [broad, setBroad] = useState<Words | null>(null);
  const [status, setStatus] = useState("");
  const addRule = async (force: boolean) => {
    try {
      const added = await api.addRule(newAction, newRule, newScope, force);
      if (added.outcome === "too_broad") {
        setBroad(added.why);
        return;
      }
      setNewRule("");
      setBroad(null);
      setStatus(added.broad ? `⚠ ${phrase(added.broad)}` : "");
      loadRules();
    } catch (e) {
      setStatus(String(e));
    }
  };
  return (
    <>
      <div class="row">
        <select
          value={newAction}
          onChange={(e) => setNewAction(e.currentTarget.value as Action)}
          aria-label={t("rule")}
        >
          {(["allow", "ask", "deny"] as const).map((a) => (
            <option value={a} key={a}>
              {said("action", a)}
            </option>
          ))}
        </select>
        <input
          aria-label={t("ruleText")}
          placeholder="run_command(git status:*)"
          value={newRule}
          onInput={(e) => setNewRule(e.currentTarget.value)}
        />
        {hasWorkspace && (
          <select
            value={newScope}
            onChange={(e) => setNewScope(e.currentTarget.value as RuleScope)}
            aria-label={t("ruleScope")}
          >
            <option value="user">{sourceLabel("user")}</option>
            <option value="workspace">{sourceLabel("workspace")}</option>
          </select>
        )}
        <button type="button" onClick={() => addRule(false)}>
          {t("addRule")}
        </button>
        {status && (
          <span class="status" role="status">
            {status}
          </span>
        )}
      </div>
      {broad && (
        <div class="row error" data-testid="broad-rule">
          ⚠ {phrase(broad)}{" "}
          <button type="button" class="danger" onClick={() => addRule(true)}>
            {t("addAnyway")}
          </button>
        </div>
      )}
    </>
  );
}

type Appearance = { lang: Lang; theme: string };

/** Settings → Appearance: the language and theme, applied when saved like every other page. */
function AppearancePage({ onChange }: { onChange: () => void }) {
  const draft = useDraft<Appearance>();
  useEffect(() => {
    draft.load({ lang: getLang(), theme: localStorage.getItem("theme") || "system" });
  }, []);
  const look = draft.value;
  if (!look) return null;
  const save = async (v: Appearance) => {
    setLang(v.lang);
    localStorage.setItem("theme", v.theme);
    applyTheme();
    onChange();
  };
  return (
    <>
      <fieldset data-testid="appearance">
        <legend>
          {t("language")} · {t("theme")}
        </legend>
        <label>
          {t("language")}
          <select value={look.lang} onChange={(e) => draft.set({ ...look, lang: e.currentTarget.value as Lang })}>
            <option value="en">English</option>
            <option value="zh-CN">简体中文</option>
          </select>
        </label>
        <label>
          {t("theme")}
          <select value={look.theme} onChange={(e) => draft.set({ ...look, theme: e.currentTarget.value })}>
            <option value="system">{t("system")}</option>
            <option value="light">{t("light")}</option>
            <option value="dark">{t("dark")}</option>
          </select>
        </label>
      </fieldset>
      <SaveBar draft={draft} save={save} />
    </>
  );
}
