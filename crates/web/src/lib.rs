//! The web family: `web_fetch`, `web_search` (`search`), `get_weather` (`weather`), `get_news`
//! (`news`), all through one HTTP client.
//!
//! - which addresses a fetch may reach (`cowork_contract::address`, shared with the policy). Loopback, private, link-local, cloud-metadata
//!   and other non-public addresses are refused after DNS resolution, at connect time (so a name
//!   that resolves to 127.0.0.1, or re-resolves there later, is refused too), unless the caller
//!   asks for `Reach::Any` — which only a rule the person wrote may justify.
//! - `client`: timeouts, compression, a truthful user agent, proxies from the environment, a size
//!   cap with a note when cut, redirects followed only within one origin (a redirect elsewhere is
//!   handed back, to be reviewed as its own fetch).
//! - `cache`: an on-disk HTTP cache honouring Cache-Control, ETag and Last-Modified; offline, the
//!   cached answer with its age.

pub mod cache;
pub mod client;
mod news;
pub mod page;
mod search;
pub mod settings;
mod tools;
mod weather;

pub use cache::Cache;
pub use client::{ApiRequest, Blocked, FetchError, Fetched, Reach, Source, WebClient};
pub use news::{News, NewsItem};
pub use search::{SearchResult, SearchResults};
pub use settings::{Feed, SearchProvider, Units, WebSettings};
pub use tools::WebPage;
pub use weather::{Forecast, Weather};

use cowork_contract::{DynTool, SecretSource, ToolError, ToolProvider};
use std::path::PathBuf;
use std::sync::Arc;

/// The most bytes one fetch downloads.
pub const MAX_BYTES: usize = 5 << 20;

/// What the family's tools share: the one client, the settings file, the keyring.
pub struct Shared {
    pub client: WebClient,
    read_pages: tools::ReadPages,
    settings_path: Option<PathBuf>,
    secrets: Arc<dyn SecretSource>,
}

impl Shared {
    /// The settings now (the person may change them while the app runs).
    fn settings(&self) -> Result<WebSettings, ToolError> {
        settings::read_settings(self.settings_path.as_deref()).map_err(ToolError::failed)
    }
}

#[derive(Clone)]
pub struct WebTools {
    shared: Arc<Shared>,
}

impl WebTools {
    /// The family: answers cached in `cache_dir`, settings (the `web` key) read from
    /// `settings_path` at each call (defaults when None), provider keys from `secrets`.
    pub fn new(
        cache_dir: PathBuf,
        settings_path: Option<PathBuf>,
        secrets: Arc<dyn SecretSource>,
    ) -> Self {
        let proxy_from = settings_path.clone();
        let client = WebClient::new(Some(Cache::new(cache_dir)), MAX_BYTES).with_proxy(move || {
            settings::read_settings(proxy_from.as_deref())
                .ok()
                .map(|s| s.proxy)
        });
        WebTools {
            shared: Arc::new(Shared {
                client,
                read_pages: Default::default(),
                settings_path,
                secrets,
            }),
        }
    }
}

impl ToolProvider for WebTools {
    fn name(&self) -> &str {
        "web"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        [
            self.fetch_tools(),
            self.search_tools(),
            self.weather_tools(),
            self.news_tools(),
        ]
        .concat()
    }
}
