import { useEffect, useState } from "preact/hooks";
import { type AuditEntry, api, type ToolInfo, type VerifyReport } from "./api";
import { formatDate, said, t, toolTitle } from "./i18n";

type Theme = "system" | "light" | "dark";
export function applyTheme() {
  const theme = (localStorage.getItem("theme") as Theme) || "system";
  const dark = theme === "dark" || (theme === "system" && matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}

export function ToolsView() {
  const [tools, setTools] = useState<ToolInfo[]>([]);
  const [query, setQuery] = useState("");
  const [category, setCategory] = useState("");
  useEffect(() => {
    api.listTools().then(setTools);
  }, []);
  const q = query.toLowerCase();
  const shown = tools.filter(
    (x) =>
      (!category || x.spec.category === category) &&
      (!q ||
        `${toolTitle(x.spec.name)} ${x.spec.title} ${x.spec.name} ${x.spec.description}`.toLowerCase().includes(q)),
  );
  const categories = [...new Set(tools.map((x) => x.spec.category))].sort();
  return (
    <section class="page">
      <h1>{t("tools")}</h1>
      <div class="row">
        <input
          type="search"
          placeholder={t("searchTools")}
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        <select value={category} aria-label={t("category")} onChange={(e) => setCategory(e.currentTarget.value)}>
          <option value="">{t("all")}</option>
          {categories.map((c) => (
            <option value={c} key={c}>
              {said("category", c)}
            </option>
          ))}
        </select>
      </div>
      <table class="catalog">
        <thead>
          <tr>
            <th>{t("toolColumn")}</th>
            <th>{t("category")}</th>
            <th>{t("layer")}</th>
            <th>{t("effects")}</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((x) => (
            <tr key={x.spec.name}>
              <td>
                <strong>{toolTitle(x.spec.name)}</strong> <code class="tool-id">{x.spec.name}</code>
                <div class="desc">{x.spec.description}</div>
              </td>
              <td>{said("category", x.spec.category)}</td>
              <td>
                <span class={`badge ${x.layer}`}>{said("layer", x.layer)}</span>
                {x.overrides.length > 0 && ` ${t("overrides")} ${x.overrides.join(", ")}`}
              </td>
              <td>{x.spec.effects.map((k) => said("effect", k)).join(t("listSeparator"))}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function AuditView() {
  const [rows, setRows] = useState<AuditEntry[]>([]);
  const [tool, setTool] = useState("");
  const [decision, setDecision] = useState("");
  const [report, setReport] = useState<VerifyReport | null>(null);
  useEffect(() => {
    api
      .auditList({ tool: tool || null, decision: decision || null, call_id: null, conversation: null, limit: 200 })
      .then(setRows);
  }, [tool, decision]);
  return (
    <section class="page">
      <h1>{t("audit")}</h1>
      <div class="row">
        <input placeholder={t("filterTool")} value={tool} onInput={(e) => setTool(e.currentTarget.value)} />
        <select value={decision} aria-label={t("filterDecision")} onChange={(e) => setDecision(e.currentTarget.value)}>
          <option value="">{t("all")}</option>
          {(["allow", "ask", "deny", "rejected"] as const).map((d) => (
            <option value={d} key={d}>
              {said("decision", d)}
            </option>
          ))}
        </select>
        <button type="button" onClick={() => api.auditVerify().then(setReport)}>
          {t("verify")}
        </button>
        {report && (
          <span class={report.problems.length ? "error" : "ok"} data-testid="verify-result">
            {report.problems.length
              ? `${t("tampered")}: ${report.problems.map((p) => p.message).join("; ")}`
              : `${t("chainOk")} (${report.rows})`}
          </span>
        )}
      </div>
      <table class="audit" data-testid="audit-rows">
        <thead>
          <tr>
            <th>#</th>
            {(
              [
                "auditTime",
                "toolColumn",
                "auditCaller",
                "auditDecision",
                "auditScore",
                "auditApprovedBy",
                "auditOutcome",
              ] as const
            ).map((k) => (
              <th key={k}>{t(k)}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.seq} title={r.args}>
              <td>{r.seq}</td>
              <td>{formatDate(r.ts, "seconds")}</td>
              <td>
                {toolTitle(r.tool)} <code class="tool-id">{r.tool}</code>
                {r.phase === "intent" && <span class="hint"> · {t("auditIntent")}</span>}
              </td>
              <td>{said("caller", r.caller)}</td>
              <td class={`action ${r.decision}`}>{said("decision", r.decision)}</td>
              <td>{r.score ?? ""}</td>
              <td>{r.approved_by ?? ""}</td>
              <td>
                {r.outcome ? said("outcome", r.outcome) : ""}
                {r.error && <div class="hint">{r.error}</div>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
