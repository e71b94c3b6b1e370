//! The web family's foundation (issue 22): one HTTP client every web tool uses.
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
pub mod page;
mod tools;

pub use cache::Cache;
pub use client::{Blocked, FetchError, Fetched, Reach, Source, WebClient};

pub use tools::{WebFetch, WebPage};

use cowork_contract::{DynTool, ToolProvider, typed};
use std::sync::Arc;

/// The most bytes one fetch downloads.
pub const MAX_BYTES: usize = 5 << 20;

pub struct WebTools {
    client: Arc<WebClient>,
}

impl WebTools {
    /// The family, caching in `cache_dir`.
    pub fn new(cache_dir: std::path::PathBuf) -> Self {
        WebTools {
            client: Arc::new(WebClient::new(Some(Cache::new(cache_dir)), MAX_BYTES)),
        }
    }
}

impl ToolProvider for WebTools {
    fn name(&self) -> &str {
        "web"
    }

    fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        vec![typed(tools::WebFetch(self.client.clone()))]
    }
}
