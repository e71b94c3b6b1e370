import { useEffect, useState } from "preact/hooks";
import { AccountsSettings } from "./accounts";
import { MemorySettings } from "./memory";
import { VoiceSettingsPanel } from "./voice";
import { WebSettingsPanel } from "./web";
import { DesktopSettingsPanel } from "./desktop";
import { SchedulesPanel } from "./chains";
import { api, type Action, type AgentSettings, type AuditEntry, type Mode, type PolicyProblem, type RuleEntry, type RuleScope, type ToolInfo, type VerifyReport } from "./api";
import { t, getLang, setLang, sourceLabel, type Lang } from "./i18n";

type Theme = "system" | "light" | "dark";
export function applyTheme() {
  const theme = (localStorage.getItem("theme") as Theme) || "system";
  const dark = theme === "dark" || (theme === "system" && matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}

const DEFAULTS: Record<AgentSettings["provider"], { baseUrl: string; apiKeyEnv: string }> = {
  anthropic: { baseUrl: "https://api.anthropic.com", apiKeyEnv: "ANTHROPIC_API_KEY" },
  openai: { baseUrl: "http://127.0.0.1:11434/v1", apiKeyEnv: "" },
};

export function SettingsView({ conversation, onChange }: { conversation: string | null; onChange: () => void }) {
  const [settings, setSettings] = useState<AgentSettings>({ provider: "anthropic", model: "", ...DEFAULTS.anthropic });
  const [status, setStatus] = useState<string>("");
  const [rules, setRules] = useState<RuleEntry[]>([]);
  const [newRule, setNewRule] = useState("");
  const [newAction, setNewAction] = useState<Action>("allow");
  const [newScope, setNewScope] = useState<RuleScope>("user");
  const [hasWorkspace, setHasWorkspace] = useState(false);
  const [mode, setMode] = useState<Mode>("normal");
  const [key, setKey] = useState("");
  const [hasKey, setHasKey] = useState(false);
  const [problems, setProblems] = useState<PolicyProblem[]>([]);
  const [broad, setBroad] = useState("");
  const loadRules = () => { api.listRules(conversation).then(setRules); api.policyProblems().then(setProblems).catch(() => {}); };
  // A broad allow rule (`*`, a bare run_command, `read_file(//**)`) is added only after the
  // person sees why it is broad and confirms.
  const addRule = async (force: boolean) => {
    try {
      const warning = await api.addRule(newAction, newRule, newScope, force);
      setNewRule(""); setBroad(""); setStatus(warning ? `⚠ ${warning}` : ""); loadRules();
    } catch (e) {
      const text = String(e);
      if (text.startsWith("broad: ")) setBroad(text.slice(7)); else setStatus(text);
    }
  };
  useEffect(() => {
    api.getAgentSettings().then((s) => s && setSettings(s)).catch((e) => setStatus(String(e)));
    api.firstRun().then((f) => { setMode(f.mode); setHasWorkspace(f.workspace); });
    loadRules();
    api.hasApiKey().then(setHasKey).catch(() => {});
  }, []);
  const save = async () => {
    try { await api.saveAgentSettings(settings); setStatus(t("saved")); onChange(); } catch (e) { setStatus(String(e)); }
  };
  // The settings as typed, tried before they are saved: the models the server offers fill the
  // model field's choices (the first one if the field is empty).
  const [offered, setOffered] = useState<string[]>([]);
  const testConnection = async () => {
    setStatus("…");
    try {
      const models = await api.testProvider(settings);
      setOffered(models);
      if (!settings.model && models[0]) setSettings({ ...settings, model: models[0] });
      setStatus(`${t("connected")} · ${models.length} ${t("modelsOffered")}`);
    } catch (e) { setStatus(String(e)); }
  };
  return (
    <section class="page settings">
      <h1>{t("settings")}</h1>
      <fieldset>
        <legend>{t("provider")}</legend>
        <label>{t("provider")}
          <select value={settings.provider} onChange={(e) => { const p = e.currentTarget.value as AgentSettings["provider"]; setSettings({ ...settings, provider: p, ...DEFAULTS[p] }); }}>
            <option value="anthropic">Anthropic</option>
            <option value="openai">OpenAI-compatible (OpenAI, Ollama, DeepSeek, Qwen, LM Studio, llama.cpp)</option>
          </select>
        </label>
        <label>{t("baseUrl")}<input value={settings.baseUrl} onInput={(e) => setSettings({ ...settings, baseUrl: e.currentTarget.value })} /></label>
        <label>{t("model")}<input list="provider-models" data-testid="provider-model" value={settings.model} onInput={(e) => setSettings({ ...settings, model: e.currentTarget.value })} /></label>
        <datalist id="provider-models">{offered.map((m) => <option key={m} value={m} />)}</datalist>
        <label>{t("apiKeyEnv")}<input value={settings.apiKeyEnv} onInput={(e) => setSettings({ ...settings, apiKeyEnv: e.currentTarget.value })} /></label>
        <p class="hint">{t("keyNote")}</p>
        <label>{t("apiKey")}
          <span class="row">
            <input type="password" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
            <button disabled={!key} onClick={async () => { try { await api.setApiKey(key); setKey(""); setHasKey(true); setStatus(t("saved")); } catch (e) { setStatus(String(e)); } }}>{t("storeKey")}</button>
          </span>
          <span class="hint">{hasKey ? t("keyStored") : t("noKey")}</span>
        </label>
        <div class="row">
          <button data-testid="test-provider" onClick={testConnection}>{t("testConnection")}</button>
          <button class="primary" onClick={save}>{t("save")}</button> <span class="status" role="status">{status}</span>
        </div>
      </fieldset>
      <ChatSettings settings={settings} onChange={setSettings} onSave={save} />
      <fieldset data-testid="mode">
        <legend>{t("mode")}</legend>
        {(["normal", "plan", "accept-edits"] as Mode[]).map((m) => (
          <label class="inline" key={m}><input type="radio" name="mode" checked={mode === m} onChange={async () => { await api.setMode(m); setMode(m); }} />
            {m === "normal" ? t("normal") : m === "plan" ? t("plan") : t("acceptEdits")}</label>
        ))}
      </fieldset>
      <fieldset>
        <legend>{t("rules")}</legend>
        {problems.map((p) => <p class="error" key={p.file + p.message}>⚠ <code>{p.file}</code>: {p.message}</p>)}
        <table class="rules" data-testid="rules">
          <tbody>{rules.map((r) => (
            <tr key={r.rule + r.source}><td class={`action ${r.action}`}>{r.action}</td><td><code>{r.rule}</code>{r.broad && <span class="error" title={r.broad} data-testid="broad-warning"> ⚠ {r.broad}</span>}</td><td>{sourceLabel(r.source)}</td>
              <td>{r.source !== "builtin" && <button onClick={async () => { await api.removeRule(r.rule, conversation); loadRules(); }}>{t("revoke")}</button>}</td></tr>
          ))}</tbody>
        </table>
        <div class="row">
          <select value={newAction} onChange={(e) => setNewAction(e.currentTarget.value as Action)}><option>allow</option><option>ask</option><option>deny</option></select>
          <input placeholder="run_command(git status:*)" value={newRule} onInput={(e) => setNewRule(e.currentTarget.value)} />
          {hasWorkspace && <select value={newScope} onChange={(e) => setNewScope(e.currentTarget.value as RuleScope)} aria-label={t("ruleScope")}>
            <option value="user">{sourceLabel("user")}</option><option value="workspace">{sourceLabel("workspace")}</option></select>}
          <button onClick={() => addRule(false)}>{t("addRule")}</button>
        </div>
        {broad && <div class="row error" data-testid="broad-rule">⚠ {broad} <button class="danger" onClick={() => addRule(true)}>{t("addAnyway")}</button></div>}
      </fieldset>
      <AccountsSettings />
      <MemorySettings />
      <VoiceSettingsPanel />
      <WebSettingsPanel />
      <DesktopSettingsPanel />
      <SchedulesPanel />
      <fieldset>
        <legend>{t("language")} · {t("theme")}</legend>
        <select value={getLang()} onChange={(e) => { setLang(e.currentTarget.value as Lang); onChange(); }}><option value="en">English</option><option value="zh-CN">简体中文</option></select>
        <select value={localStorage.getItem("theme") || "system"} onChange={(e) => { localStorage.setItem("theme", e.currentTarget.value); applyTheme(); onChange(); }}>
          <option value="system">{t("system")}</option><option value="light">{t("light")}</option><option value="dark">{t("dark")}</option>
        </select>
      </fieldset>
    </section>
  );
}

export function ToolsView() {
  const [tools, setTools] = useState<ToolInfo[]>([]);
  const [query, setQuery] = useState("");
  const [category, setCategory] = useState("");
  useEffect(() => { api.listTools().then(setTools); }, []);
  const q = query.toLowerCase();
  const shown = tools.filter((x) => (!category || x.spec.category === category) && (!q || `${x.spec.title} ${x.spec.name} ${x.spec.description}`.toLowerCase().includes(q)));
  const categories = [...new Set(tools.map((x) => x.spec.category))].sort();
  return (
    <section class="page">
      <h1>{t("tools")}</h1>
      <div class="row">
        <input type="search" placeholder={t("searchTools")} value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        <select value={category} onChange={(e) => setCategory(e.currentTarget.value)}><option value="">{t("all")}</option>{categories.map((c) => <option>{c}</option>)}</select>
      </div>
      <table class="catalog">
        <thead><tr><th>{t("toolColumn")}</th><th>{t("category")}</th><th>{t("layer")}</th><th>{t("effects")}</th></tr></thead>
        <tbody>{shown.map((x) => (
          <tr key={x.spec.name}><td><strong>{x.spec.title || x.spec.name}</strong> <code class="tool-id">{x.spec.name}</code><div class="desc">{x.spec.description}</div></td><td>{x.spec.category}</td>
            <td><span class={`badge ${x.layer}`}>{x.layer}</span>{x.overrides.length > 0 && ` ${t("overrides")} ${x.overrides.join(", ")}`}</td>
            <td>{x.spec.effects.join(", ")}</td></tr>
        ))}</tbody>
      </table>
    </section>
  );
}

export function AuditView() {
  const [rows, setRows] = useState<AuditEntry[]>([]);
  const [tool, setTool] = useState("");
  const [decision, setDecision] = useState("");
  const [report, setReport] = useState<VerifyReport | null>(null);
  useEffect(() => { api.auditList({ tool: tool || null, decision: decision || null, call_id: null, conversation: null, limit: 200 }).then(setRows); }, [tool, decision]);
  return (
    <section class="page">
      <h1>{t("audit")}</h1>
      <div class="row">
        <input placeholder={t("filterTool")} value={tool} onInput={(e) => setTool(e.currentTarget.value)} />
        <select value={decision} onChange={(e) => setDecision(e.currentTarget.value)}>
          <option value="">{t("all")}</option><option>allow</option><option>ask</option><option>deny</option><option>rejected</option>
        </select>
        <button onClick={() => api.auditVerify().then(setReport)}>{t("verify")}</button>
        {report && <span class={report.problems.length ? "error" : "ok"} data-testid="verify-result">
          {report.problems.length ? `${t("tampered")}: ${report.problems.map((p) => p.message).join("; ")}` : `${t("chainOk")} (${report.rows})`}</span>}
      </div>
      <table class="audit" data-testid="audit-rows">
        <thead><tr><th>#</th>{(["auditTime", "toolColumn", "auditCaller", "auditDecision", "auditScore", "auditApprovedBy", "auditOutcome"] as const).map((k) => <th key={k}>{t(k)}</th>)}</tr></thead>
        <tbody>{rows.map((r) => (
          <tr key={r.seq} title={r.args}><td>{r.seq}</td><td>{r.ts.slice(0, 19).replace("T", " ")}</td><td><code>{r.tool}</code> {r.phase === "intent" ? "(intent)" : ""}</td>
            <td>{r.caller}</td><td class={`action ${r.decision}`}>{r.decision}</td><td>{r.score ?? ""}</td><td>{r.approved_by ?? ""}</td><td>{r.outcome ?? ""}{r.error ? `: ${r.error}` : ""}</td></tr>
        ))}</tbody>
      </table>
    </section>
  );
}

/// The model's window and vision, saved personas and prices (for the cost per turn).
function ChatSettings({ settings, onChange, onSave }: { settings: AgentSettings; onChange: (s: AgentSettings) => void; onSave: () => void }) {
  const personas = settings.personas ?? [];
  const prices = Object.entries(settings.prices ?? {});
  const setPersona = (i: number, name: string, system: string) => onChange({ ...settings, personas: personas.map((p, j) => j === i ? { name, system } : p) });
  const setPrices = (entries: [string, { inputPerMtok: number | null; outputPerMtok: number | null }][]) => onChange({ ...settings, prices: Object.fromEntries(entries) });
  return (
    <fieldset data-testid="chat-settings">
      <legend>{t("chatSettings")}</legend>
      <label>{t("contextWindow")}<input type="number" min={1024} step={1024} value={settings.contextWindow ?? 128000} onInput={(e) => onChange({ ...settings, contextWindow: Number(e.currentTarget.value) })} /></label>
      <label class="inline"><input type="checkbox" checked={settings.vision ?? true} onChange={(e) => onChange({ ...settings, vision: e.currentTarget.checked })} /> {t("vision")}</label>
      <h3>{t("personas")}</h3>
      {personas.map((p, i) => (
        <div class="persona" key={i}>
          <input placeholder={t("personaName")} value={p.name} onInput={(e) => setPersona(i, e.currentTarget.value, p.system)} />
          <textarea rows={2} placeholder={t("systemPrompt")} value={p.system} onInput={(e) => setPersona(i, p.name, e.currentTarget.value)} />
          <button class="icon" aria-label={t("remove")} onClick={() => onChange({ ...settings, personas: personas.filter((_, j) => j !== i) })}>×</button>
        </div>
      ))}
      <button onClick={() => onChange({ ...settings, personas: [...personas, { name: "", system: "" }] })}>+ {t("addPersona")}</button>
      <h3>{t("prices")}</h3>
      <table class="prices"><tbody>
        {prices.map(([model, price], i) => (
          <tr key={i}>
            <td><input placeholder={t("model")} value={model} onInput={(e) => setPrices(prices.map((p, j) => j === i ? [e.currentTarget.value, price] : p))} /></td>
            <td><input type="number" min={0} step={0.01} aria-label={t("inputPrice")} value={price.inputPerMtok ?? 0} onInput={(e) => setPrices(prices.map((p, j) => j === i ? [model, { ...price, inputPerMtok: Number(e.currentTarget.value) }] : p))} /></td>
            <td><input type="number" min={0} step={0.01} aria-label={t("outputPrice")} value={price.outputPerMtok ?? 0} onInput={(e) => setPrices(prices.map((p, j) => j === i ? [model, { ...price, outputPerMtok: Number(e.currentTarget.value) }] : p))} /></td>
            <td><button class="icon" aria-label={t("remove")} onClick={() => setPrices(prices.filter((_, j) => j !== i))}>×</button></td>
          </tr>
        ))}
      </tbody></table>
      <p class="hint">{t("pricesHint")}</p>
      <button onClick={() => setPrices([...prices, [settings.model, { inputPerMtok: 0, outputPerMtok: 0 }]])}>+ {t("addPrice")}</button>
      <div><button class="primary" onClick={onSave}>{t("save")}</button></div>
    </fieldset>
  );
}
