// Settings → Tool profiles: least privilege the person names (tools, kinds of effect, the
// widest mode), chosen per conversation, persona, schedule or sub-agent. A profile only narrows.
import { useEffect, useState } from "preact/hooks";
import { type AgentSettings, api, type EffectKind, type Mode, type ToolProfile } from "./api";
import { effectKinds, said, t } from "./i18n";

export function modeLabel(m: Mode): string {
  return m === "normal" ? t("normal") : m === "plan" ? t("plan") : t("acceptEdits");
}

const KINDS = effectKinds() as EffectKind[];

type Change = (s: AgentSettings) => void;

export function Profiles({ settings, onChange }: { settings: AgentSettings; onChange: Change }) {
  const profiles = settings.profiles ?? [];
  const setProfile = (i: number, p: ToolProfile) =>
    onChange({ ...settings, profiles: profiles.map((q, j) => (j === i ? p : q)) });
  return (
    <fieldset data-testid="profiles">
      <legend>{t("profiles")}</legend>
      <p class="hint">{t("profilesHint")}</p>
      {profiles.map((p, i) => (
        <ProfileRow
          key={i}
          profile={p}
          set={(next) => setProfile(i, next)}
          remove={() => onChange({ ...settings, profiles: profiles.filter((_, j) => j !== i) })}
        />
      ))}
      <button
        type="button"
        data-testid="add-profile"
        onClick={() => onChange({ ...settings, profiles: [...profiles, { name: "", tools: null, effects: null }] })}
      >
        + {t("addProfile")}
      </button>
    </fieldset>
  );
}

function ProfileRow({
  profile: p,
  set,
  remove,
}: {
  profile: ToolProfile;
  set: (p: ToolProfile) => void;
  remove: () => void;
}) {
  const tools = (p.tools ?? []).join(", ");
  const toggle = (k: EffectKind, on: boolean) => {
    const next = new Set(p.effects ?? []);
    if (on) next.add(k);
    else next.delete(k);
    set({ ...p, effects: next.size ? KINDS.filter((x) => next.has(x)) : null });
  };
  return (
    <div class="profile" data-testid="profile">
      <input
        placeholder={t("profileName")}
        value={p.name}
        onInput={(e) => set({ ...p, name: e.currentTarget.value })}
      />
      <label>
        {t("profileTools")}
        <input
          value={tools}
          onChange={(e) => {
            const names = e.currentTarget.value
              .split(",")
              .map((s) => s.trim())
              .filter(Boolean);
            set({ ...p, tools: names.length ? names : null });
          }}
        />
      </label>
      <details>
        <summary>
          {t("profileEffects")}
          {p.effects?.length ? ` (${p.effects.length})` : ""}
        </summary>
        <div class="kinds">
          {KINDS.map((k) => (
            <label class="check" key={k} title={k}>
              <input
                type="checkbox"
                checked={p.effects?.includes(k) ?? false}
                onChange={(e) => toggle(k, e.currentTarget.checked)}
              />{" "}
              {said("effect", k)}
            </label>
          ))}
        </div>
      </details>
      <label>
        {t("profileMode")}
        <select
          value={p.mode ?? ""}
          onChange={(e) => set({ ...p, mode: (e.currentTarget.value || null) as Mode | null })}
        >
          <option value="">{t("anyMode")}</option>
          {(["plan", "normal", "accept-edits"] as Mode[]).map((m) => (
            <option key={m} value={m}>
              {modeLabel(m)}
            </option>
          ))}
        </select>
      </label>
      <button type="button" class="icon" aria-label={t("remove")} onClick={remove}>
        ×
      </button>
    </div>
  );
}

/// The names of the profiles in Settings, read once.
export function useProfileNames(): string[] {
  const [names, setNames] = useState<string[]>([]);
  useEffect(() => {
    api
      .getAgentSettings()
      .then((a) => setNames((a?.profiles ?? []).map((p) => p.name).filter(Boolean)))
      .catch(() => {});
  }, []);
  return names;
}

/// A choice among the named profiles ("" is the default).
export function ProfileSelect({
  profiles,
  value,
  onChange,
  testid,
}: {
  profiles: string[];
  value: string | null | undefined;
  onChange: (name: string | null) => void;
  testid: string;
}) {
  if (!profiles.length && !value) return null;
  return (
    <select
      data-testid={testid}
      aria-label={t("profile")}
      value={value ?? ""}
      onChange={(e) => onChange(e.currentTarget.value || null)}
    >
      <option value="">{t("defaultProfile")}</option>
      {[...new Set([...(value ? [value] : []), ...profiles])].map((p) => (
        <option key={p} value={p}>
          {p}
        </option>
      ))}
    </select>
  );
}
