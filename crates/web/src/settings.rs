//! The `web` key of the user settings: the search provider, the weather service, the news feeds
//! and the proxy. Keys for search providers are never here: they live in the OS keyring under
//! [`SearchProvider::keyring_account`].
//!
//! These are the person's settings (the user's settings file, never a workspace's): a source they
//! name here is still reviewed per origin at every call like any other request.

use cowork_store::settings::Section;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct WebSettings {
    pub search: SearchSettings,
    pub weather: WeatherSettings,
    pub news: NewsSettings,
    /// A proxy for every web request (`http://host:port`, `socks5://…`). Empty: the environment's
    /// `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY`.
    pub proxy: String,
}

impl Section for WebSettings {
    const KEY: &'static str = "web";
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum SearchProvider {
    /// A SearXNG instance's JSON API (self-hosted; no key).
    Searxng,
    /// Brave Search API (a key).
    Brave,
    /// Tavily (a key).
    Tavily,
}

impl SearchProvider {
    /// The keyring account holding the provider's key.
    pub fn keyring_account(self) -> &'static str {
        match self {
            SearchProvider::Searxng => "web/searxng",
            SearchProvider::Brave => "web/brave",
            SearchProvider::Tavily => "web/tavily",
        }
    }

    pub fn needs_key(self) -> bool {
        self != SearchProvider::Searxng
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct SearchSettings {
    /// None: no search until the person picks one in Settings → Web.
    pub provider: Option<SearchProvider>,
    /// The SearXNG instance (its JSON format must be enabled: `search.formats: [html, json]`).
    pub searxng_url: String,
    pub brave_url: String,
    pub tavily_url: String,
}

impl Default for SearchSettings {
    fn default() -> Self {
        SearchSettings {
            provider: None,
            searxng_url: "http://127.0.0.1:8888".into(),
            brave_url: "https://api.search.brave.com".into(),
            tavily_url: "https://api.tavily.com".into(),
        }
    }
}

#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Units {
    /// By the language asked in: °F and mph for US English, °C and km/h otherwise.
    #[default]
    Auto,
    Metric,
    Imperial,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct WeatherSettings {
    /// Open-Meteo's forecast API (or a self-hosted Open-Meteo).
    pub forecast_url: String,
    /// Open-Meteo's geocoding API.
    pub geocoding_url: String,
    pub units: Units,
}

impl Default for WeatherSettings {
    fn default() -> Self {
        WeatherSettings {
            forecast_url: "https://api.open-meteo.com".into(),
            geocoding_url: "https://geocoding-api.open-meteo.com".into(),
            units: Units::Auto,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Feed {
    pub name: String,
    pub url: String,
    /// `en`, `zh`, …: `get_news` may keep one language.
    #[serde(default)]
    pub language: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", default)]
pub struct NewsSettings {
    pub feeds: Vec<Feed>,
}

impl Default for NewsSettings {
    fn default() -> Self {
        let feed = |name: &str, url: &str, language: &str| Feed {
            name: name.into(),
            url: url.into(),
            language: language.into(),
        };
        NewsSettings {
            feeds: vec![
                feed("BBC News", "https://feeds.bbci.co.uk/news/rss.xml", "en"),
                feed("NPR News", "https://feeds.npr.org/1001/rss.xml", "en"),
                feed(
                    "BBC 中文",
                    "https://feeds.bbci.co.uk/zhongwen/simp/rss.xml",
                    "zh",
                ),
                feed(
                    "联合早报 中国",
                    "https://www.zaobao.com.sg/rss/realtime/china",
                    "zh",
                ),
            ],
        }
    }
}

/// The settings at `path` (defaults when None).
pub fn read_settings(path: Option<&Path>) -> Result<WebSettings, String> {
    match path {
        None => Ok(WebSettings::default()),
        Some(path) => WebSettings::load(path),
    }
}
