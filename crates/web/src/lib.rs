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

pub use cache::Cache;
pub use client::{Blocked, FetchError, Fetched, Reach, Source, WebClient};
