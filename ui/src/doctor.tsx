// Settings → This computer: what works here, what is missing, and the fix for each — the same
// checks as `cowork doctor`, run when the page opens and again on request.
import { useEffect, useState } from "preact/hooks";
import { api } from "./api";
import type { Finding } from "./bindings";
import { said, t } from "./i18n";

export function ComputerPage() {
  const [findings, setFindings] = useState<Finding[] | null>(null);
  const [error, setError] = useState("");
  const check = () => {
    setFindings(null);
    setError("");
    api
      .doctor()
      .then(setFindings)
      .catch((e) => setError(String(e)));
  };
  useEffect(check, []);
  return (
    <section data-testid="doctor">
      <div class="row">
        <button type="button" onClick={check} disabled={findings === null && !error}>
          {findings === null && !error ? t("checking") : t("checkAgain")}
        </button>
        {error && <span class="error">{error}</span>}
      </div>
      <ul class="doctor">
        {(findings ?? []).map((f) => (
          <li key={f.capability} data-capability={f.capability} data-health={f.health}>
            <span class={`badge health-${f.health}`}>{said("health", f.health)}</span>{" "}
            <strong>{said("capability", f.capability)}</strong>
            {f.needed && f.health !== "works" && f.health !== "not_set_up" && (
              <span class="error"> · {t("youRelyOnThis")}</span>
            )}
            <div class="hint">{f.detail}</div>
            {f.fix && (
              <div class="fix">
                {t("howToFix")}: {f.fix}
              </div>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
