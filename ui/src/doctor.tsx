// Settings → This computer: what works here, what is missing, and the fix for each — the same
// checks as `cowork doctor`, run when the page opens and again on request — and what Cowork
// downloads (models, the browser driver): what each costs before it is fetched, its progress while.
import { useEffect, useState } from "preact/hooks";
import { api, on } from "./api";
import type { AssetSettings, AssetStatus, FetchStep, Finding } from "./bindings";
import { fill, getLang, said, t } from "./i18n";
import { SaveBar, useDraft } from "./savebar";

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
      <Downloads onChange={check} />
    </section>
  );
}

const mb = (bytes: number) => Math.ceil(bytes / 1_000_000);

/** Where a fetch is, in words and as a fraction (null: no bar to show). */
function stepWords(step: FetchStep): { text: string; fraction: number | null } {
  switch (step.kind) {
    case "downloading":
      return { text: fill("assetDownloading", { file: step.file }), fraction: (step.done ?? 0) / (step.total || 1) };
    case "checking":
      return { text: fill("assetChecking", { file: step.file }), fraction: null };
    case "making":
      return { text: fill("assetMaking", { file: step.file }), fraction: null };
    case "retrying":
      return { text: fill("assetRetrying", { attempt: step.attempt, why: step.why }), fraction: null };
    default:
      return { text: "", fraction: null };
  }
}

function Downloads({ onChange }: { onChange: () => void }) {
  const [assets, setAssets] = useState<AssetStatus[]>([]);
  const [steps, setSteps] = useState<Record<string, FetchStep>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const refresh = () => {
    api.listAssets().then(setAssets, (e) => setErrors({ "": String(e) }));
  };
  useEffect(() => {
    refresh();
    const unlisten = on("asset-progress", (p) => setSteps((s) => ({ ...s, [p.asset]: p.step })));
    return () => {
      unlisten.then((f) => f());
    };
  }, []);
  const fetchOne = (id: string) => {
    setErrors((e) => ({ ...e, [id]: "" }));
    setSteps((s) => ({ ...s, [id]: { kind: "checking", file: "" } }));
    api
      .fetchAsset(id)
      .catch((e) => setErrors((all) => ({ ...all, [id]: String(e) })))
      .finally(() => {
        setSteps(({ [id]: _, ...rest }) => rest);
        refresh();
        onChange();
      });
  };
  const zh = getLang() === "zh-CN";
  return (
    <div class="downloads" data-testid="downloads">
      <h3>{t("downloads")}</h3>
      <p class="hint">{t("downloadsHint")}</p>
      {errors[""] && <p class="error">{errors[""]}</p>}
      <ul class="doctor">
        {assets.map((a) => {
          const step = steps[a.id];
          const progress = step && stepWords(step);
          return (
            <li key={a.id} data-asset={a.id} data-present={a.present}>
              <span class={`badge health-${a.present ? "works" : "not_set_up"}`}>
                {a.present ? t("assetHere") : t("assetMissing")}
              </span>{" "}
              <strong>{zh ? a.title_zh : a.title}</strong>
              {a.optional && !a.present && <span class="hint"> · {t("assetOptional")}</span>}
              <div class="hint">{zh ? a.purpose_zh : a.purpose}</div>
              <div class="hint">
                {a.present
                  ? fill("assetDiskOnly", { disk: mb(a.disk_bytes) })
                  : fill("assetCost", { download: mb(a.download_bytes), disk: mb(a.disk_bytes) })}
              </div>
              {progress ? (
                <div class="asset-progress" aria-live="polite">
                  {progress.fraction !== null && <progress value={progress.fraction} max={1} />}
                  <span class="hint">{progress.text}</span>
                </div>
              ) : (
                !a.present && (
                  <button type="button" onClick={() => fetchOne(a.id)}>
                    {fill("downloadAsset", { download: mb(a.download_bytes) })}
                  </button>
                )
              )}
              {errors[a.id] && <div class="error">{errors[a.id]}</div>}
            </li>
          );
        })}
      </ul>
      <Mirror />
    </div>
  );
}

function Mirror() {
  const draft = useDraft<AssetSettings>();
  useEffect(() => {
    api.getAssetSettings().then(draft.load, () => {});
  }, []);
  const value = draft.value;
  if (!value) return null;
  return (
    <label class="field">
      {t("mirror")}
      <input
        type="text"
        data-testid="asset-mirror"
        value={value.mirror}
        placeholder="https://…"
        onInput={(e) => draft.set({ ...value, mirror: e.currentTarget.value })}
      />
      <span class="hint">{t("mirrorHint")}</span>
      <SaveBar draft={draft} save={(s) => api.saveAssetSettings(s)} />
    </label>
  );
}
