// The web family in the window: search results and headlines as cards whose links open in the
// system browser (never in this webview), weather as a compact card, fetched pages folded, and
// Settings → Web. Everything shown here came from outside: it is rendered as text nodes only.
import { useEffect, useState } from "preact/hooks";
import {
  api,
  type NewsSettings,
  type SearchProvider,
  type SearchSettings,
  type WeatherSettings,
  type WebSettings as WebSettingsOnWire,
} from "./api";
import { formatDate, t } from "./i18n";
import { SaveBar, useDraft } from "./savebar";

// Tool outputs (the web tools' output schemas).
interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  date: string | null;
}
interface SearchResults {
  query: string;
  provider: string;
  results: SearchResult[];
}
interface NewsItem {
  title: string;
  url: string | null;
  published: string | null;
  summary: string;
  source: string;
}
interface News {
  items: NewsItem[];
  failed: { feed: string; error: string }[];
}
interface Place {
  name: string;
  region: string | null;
  country: string | null;
  latitude: number;
  longitude: number;
}
interface Forecast {
  kind: "forecast";
  place: Place;
  units: { temperature: string; wind: string; precipitation: string };
  current: {
    time: string;
    temperature: number;
    feels_like: number | null;
    humidity: number | null;
    wind_speed: number | null;
    code: number;
    condition: string;
    is_day: boolean;
  };
  daily: { date: string; max: number; min: number; precipitation_probability: number | null; code: number }[];
}
type Weather = Forecast | { kind: "ambiguous"; query: string; candidates: Place[] };
interface WebPage {
  url: string;
  title: string | null;
  site: string | null;
  markdown: string;
  truncated: boolean;
  moved_to: string | null;
  source: string;
}

/** A link to the system browser; http(s) only (the shell checks again). */
function Link({ href, children }: { href: string; children: preact.ComponentChildren }) {
  return (
    <a
      href={href}
      rel="noreferrer noopener"
      title={href}
      onClick={(e) => {
        e.preventDefault();
        api.openLink(href).catch(() => {});
      }}
    >
      {children}
    </a>
  );
}

/** A feed date in the person's own time zone and language. */
const when = (iso: string) => formatDate(iso);
const host = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};
const placeLabel = (p: Place) => [p.name, p.region, p.country].filter(Boolean).join(", ");

/** WMO weather code → a small drawn icon (no emoji font is assumed). */
function WeatherIcon({ code, day = true }: { code: number; day?: boolean }) {
  const kind =
    code === 0 || code === 1
      ? day
        ? "sun"
        : "moon"
      : code <= 3
        ? "cloud"
        : code <= 48
          ? "fog"
          : code >= 95
            ? "storm"
            : (code >= 71 && code <= 77) || code === 85 || code === 86
              ? "snow"
              : "rain";
  const cloud = <path d="M7 18h10a4 4 0 0 0 0-8 6 6 0 0 0-11.3 2A3 3 0 0 0 7 18z" fill="currentColor" opacity="0.35" />;
  return (
    <svg class={`wx wx-${kind}`} viewBox="0 0 24 24" width="28" height="28" aria-label={kind} role="img">
      {kind === "sun" && <circle cx="12" cy="12" r="5" fill="#f5b400" />}
      {kind === "moon" && <path d="M15 3a8 8 0 1 0 6 13A7 7 0 0 1 15 3z" fill="#c9c36a" />}
      {kind !== "sun" && kind !== "moon" && cloud}
      {kind === "rain" && <path d="M8 20l-1 2M12 20l-1 2M16 20l-1 2" stroke="#3b82f6" stroke-width="1.6" />}
      {kind === "snow" && (
        <path d="M8 21h.01M12 21h.01M16 21h.01" stroke="#8ab4f8" stroke-width="2.4" stroke-linecap="round" />
      )}
      {kind === "storm" && <path d="M12 17l-2 4h3l-1 3" stroke="#f59e0b" stroke-width="1.6" fill="none" />}
      {kind === "fog" && <path d="M5 20h14M7 22h10" stroke="currentColor" stroke-width="1.4" opacity="0.6" />}
    </svg>
  );
}

function WeatherCard({ w }: { w: Weather }) {
  if (w.kind === "ambiguous") {
    return (
      <div class="web-card" data-testid="weather-choices">
        <p>{t("whichPlace")}</p>
        <ul>
          {w.candidates.map((p, i) => (
            <li key={i}>{placeLabel(p)}</li>
          ))}
        </ul>
      </div>
    );
  }
  const u = w.units.temperature;
  return (
    <div class="web-card weather" data-testid="weather-card">
      <div class="wx-now">
        <WeatherIcon code={w.current.code} day={w.current.is_day} />
        <span class="wx-temp">
          {Math.round(w.current.temperature)}
          {u}
        </span>
        <span class="wx-place">
          <strong>{placeLabel(w.place)}</strong>
          <br />
          {w.current.condition}
          {w.current.feels_like !== null && ` · ${t("feelsLike")} ${Math.round(w.current.feels_like)}${u}`}
          {w.current.wind_speed !== null && ` · ${Math.round(w.current.wind_speed)} ${w.units.wind}`}
        </span>
      </div>
      <div class="wx-days">
        {w.daily.map((d) => (
          <div class="wx-day" key={d.date}>
            <span>{d.date.slice(5)}</span>
            <WeatherIcon code={d.code} />
            <span>
              {Math.round(d.max)}° / {Math.round(d.min)}°
            </span>
            {d.precipitation_probability !== null && <span class="meta">{d.precipitation_probability}%</span>}
          </div>
        ))}
      </div>
      <p class="meta attribution">Open-Meteo.com</p>
    </div>
  );
}

function SearchCard({ r }: { r: SearchResults }) {
  return (
    <ol class="web-card results" data-testid="search-results">
      {r.results.map((x, i) => (
        <li key={i}>
          <Link href={x.url}>{x.title || x.url}</Link>
          <span class="meta">
            {" "}
            {host(x.url)}
            {x.date ? ` · ${x.date.slice(0, 10)}` : ""}
          </span>
          {x.snippet && <p>{x.snippet}</p>}
        </li>
      ))}
      {r.results.length === 0 && <li>{t("noResults")}</li>}
      <p class="meta">{r.provider}</p>
    </ol>
  );
}

function NewsCard({ n }: { n: News }) {
  return (
    <ol class="web-card results" data-testid="news-items">
      {n.items.map((x, i) => (
        <li key={i}>
          {x.url ? <Link href={x.url}>{x.title}</Link> : <strong>{x.title}</strong>}
          <span class="meta">
            {" "}
            {x.source}
            {x.published ? ` · ${when(x.published)}` : ""}
          </span>
          {x.summary && <p>{x.summary}</p>}
        </li>
      ))}
      {n.failed.map((f) => (
        <li key={f.feed} class="meta">
          {t("feedNotRead")}: {f.feed}
        </li>
      ))}
    </ol>
  );
}

function PageCard({ p }: { p: WebPage }) {
  if (p.moved_to)
    return (
      <p class="web-card">
        {t("movedTo")} <Link href={p.moved_to}>{p.moved_to}</Link>
      </p>
    );
  return (
    <details class="web-card page" data-testid="fetched-page">
      <summary>
        <Link href={p.url}>{p.title || host(p.url)}</Link>{" "}
        <span class="meta">
          {p.site ?? host(p.url)} · {p.source}
          {p.truncated ? ` · ${t("cut")}` : ""}
        </span>
      </summary>
      <pre class="card-result">{p.markdown}</pre>
    </details>
  );
}

/** The card for a web tool's output, or null for other tools (they show their text). */
export function webCard(tool: string, structured: unknown): preact.JSX.Element | null {
  if (!structured || typeof structured !== "object") return null;
  switch (tool) {
    case "get_weather":
      return <WeatherCard w={structured as Weather} />;
    case "web_search":
      return <SearchCard r={structured as SearchResults} />;
    case "get_news":
      return <NewsCard n={structured as News} />;
    case "web_fetch":
      return <PageCard p={structured as WebPage} />;
    default:
      return null;
  }
}

const PROVIDERS: SearchProvider[] = ["searxng", "brave", "tavily"];

/** The settings as Rust sends them: every field present (optional on the wire only for input). */
type WebSettings = {
  search: Required<SearchSettings>;
  weather: Required<WeatherSettings>;
  news: Required<NewsSettings>;
  proxy: string;
};

/** The form: the settings, and a key typed to store (never read back, so "" once stored). */
type WebForm = { settings: WebSettings; key: string };

/// The form as saved (the key stored in the keyring, apart from the settings) and whether the
/// chosen provider's key is stored.
function useWebForm() {
  const draft = useDraft<WebForm>();
  const [hasKey, setHasKey] = useState(false);
  const [status, setStatus] = useState("");
  useEffect(() => {
    api
      .getWebSettings()
      .then((s: WebSettingsOnWire) => draft.load({ settings: s as WebSettings, key: "" }))
      .catch((e) => setStatus(String(e)));
  }, []);
  const provider = draft.value?.settings.search.provider ?? null;
  useEffect(() => {
    if (provider && provider !== "searxng")
      api
        .hasWebKey(provider)
        .then(setHasKey)
        .catch(() => setHasKey(false));
  }, [provider]);
  const save = async ({ settings: s, key: k }: WebForm) => {
    await api.saveWebSettings(s);
    const p = s.search.provider;
    if (p && p !== "searxng" && k.trim()) {
      await api.setWebKey(p, k);
      setHasKey(true);
    }
  };
  return { draft, hasKey, status, save };
}

/// The feeds as the person edits them: one `name | url | language` a line.
function formatFeeds(feeds: WebSettings["news"]["feeds"]): string {
  return feeds.map((f) => `${f.name} | ${f.url} | ${f.language}`).join("\n");
}
function parseFeeds(text: string): WebSettings["news"]["feeds"] {
  return text
    .split("\n")
    .map((line) => line.split("|").map((s) => s.trim()))
    .filter((p) => p[1])
    .map(([name, url, language]) => ({ name: name || url, url, language: language ?? "" }));
}

export function WebSettingsPanel() {
  const { draft, hasKey, status, save } = useWebForm();
  const settings = draft.value?.settings ?? null,
    key = draft.value?.key ?? "";
  if (!settings) return <p class="status">{status}</p>;
  const setSettings = (next: WebSettings) => draft.set({ settings: next, key });
  const setKey = (next: string) => draft.set({ settings, key: next });
  return (
    <fieldset data-testid="web-settings">
      <legend>{t("web")}</legend>
      <SearchFields settings={settings} setSettings={setSettings} keyTyped={key} setKey={setKey} hasKey={hasKey} />
      <label>
        {t("newsFeeds")}
        <textarea
          data-testid="web-feeds"
          rows={4}
          value={formatFeeds(settings.news.feeds)}
          onInput={(e) => setSettings({ ...settings, news: { feeds: parseFeeds(e.currentTarget.value) } })}
        />
      </label>
      <label>
        {t("units")}
        <select
          value={settings.weather.units}
          onChange={(e) =>
            setSettings({
              ...settings,
              weather: { ...settings.weather, units: e.currentTarget.value as WebSettings["weather"]["units"] },
            })
          }
        >
          <option value="auto">{t("byLocale")}</option>
          <option value="metric">°C, km/h</option>
          <option value="imperial">°F, mph</option>
        </select>
      </label>
      <label>
        {t("proxy")}
        <input
          type="text"
          value={settings.proxy}
          placeholder={t("proxyFromEnvironment")}
          onInput={(e) => setSettings({ ...settings, proxy: e.currentTarget.value })}
        />
      </label>
      <p class="hint">{t("webHint")}</p>
      <SaveBar draft={draft} save={save} reset={(saved) => ({ ...saved, key: "" })} />
    </fieldset>
  );
}

/// The search provider, its address, and its key (SearXNG needs none).
function SearchFields({
  settings,
  setSettings,
  keyTyped,
  setKey,
  hasKey,
}: {
  settings: WebSettings;
  setSettings: (next: WebSettings) => void;
  keyTyped: string;
  setKey: (key: string) => void;
  hasKey: boolean;
}) {
  const provider = settings.search.provider ?? null;
  const search = (change: Partial<WebSettings["search"]>) =>
    setSettings({ ...settings, search: { ...settings.search, ...change } });
  const urlKey = (provider === "brave" ? "braveUrl" : provider === "tavily" ? "tavilyUrl" : "searxngUrl") as
    | "braveUrl"
    | "tavilyUrl"
    | "searxngUrl";
  return (
    <>
      <label>
        {t("searchProvider")}
        <select
          data-testid="web-provider"
          value={provider ?? ""}
          onChange={(e) => search({ provider: (e.currentTarget.value || null) as SearchProvider | null })}
        >
          <option value="">{t("none")}</option>
          {PROVIDERS.map((p) => (
            <option key={p} value={p}>
              {p === "searxng" ? "SearXNG" : p === "brave" ? "Brave Search" : "Tavily"}
            </option>
          ))}
        </select>
      </label>
      {provider && (
        <label>
          {t("address")}
          <input
            type="url"
            value={settings.search[urlKey]}
            onInput={(e) => search({ [urlKey]: e.currentTarget.value } as Partial<WebSettings["search"]>)}
          />
        </label>
      )}
      {provider && provider !== "searxng" && (
        <label>
          {t("apiKey")}
          <input
            type="password"
            autocomplete="off"
            value={keyTyped}
            placeholder={hasKey ? t("keyStoredReplace") : ""}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        </label>
      )}
    </>
  );
}
