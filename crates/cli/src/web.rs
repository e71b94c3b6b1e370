//! The web: `cowork web …` — settings and keys, and the four web tools (each reviewed and
//! audited like any call).

use super::*;

#[derive(Subcommand)]
pub(crate) enum WebCmd {
    /// Choose the search provider (searxng, brave, tavily) and, optionally, its address.
    Provider {
        /// searxng, brave or tavily.
        provider: String,
        #[arg(long)]
        url: Option<String>,
    },
    /// Store the current search provider's key (read from stdin) in the OS keyring.
    Key,
    /// Print the web settings (search, weather, feeds, proxy).
    Settings,
    /// Search the web with the chosen provider (web_search).
    Search {
        query: String,
        #[arg(long)]
        count: Option<u8>,
    },
    /// Read a page as Markdown, or a PDF as text (web_fetch).
    Fetch {
        url: String,
        #[arg(long)]
        selector: Option<String>,
    },
    /// The weather for a place, in any language (get_weather).
    Weather {
        place: String,
        #[arg(long)]
        days: Option<u8>,
    },
    /// The latest headlines from the news feeds (get_news).
    News {
        /// Only items mentioning these words.
        query: Option<String>,
        /// 2026-11-20, 12h, 3d.
        #[arg(long)]
        since: Option<String>,
        #[arg(long)]
        language: Option<String>,
    },
}

pub(crate) async fn web(
    app: &App,
    cmd: WebCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let path = app.home().settings_path();
    let (tool, args) = match cmd {
        WebCmd::Provider { provider, url } => {
            let provider: cowork_app::SearchProvider =
                serde_json::from_value(serde_json::Value::String(provider.to_lowercase()))
                    .map_err(|_| format!("{provider:?}: choose searxng, brave or tavily"))?;
            let mut settings = cowork_app::WebSettings::load(&path)?;
            settings.search.provider = Some(provider);
            if let Some(url) = url {
                let (_, origin) =
                    cowork_contract::address::web_origin(&url).map_err(|e| e.to_string())?;
                let slot = match provider {
                    cowork_app::SearchProvider::Searxng => &mut settings.search.searxng_url,
                    cowork_app::SearchProvider::Brave => &mut settings.search.brave_url,
                    cowork_app::SearchProvider::Tavily => &mut settings.search.tavily_url,
                };
                *slot = url.trim_end_matches('/').to_string();
                say!(
                    "each search asks before it reaches {origin} until you allow it (`cowork policy allow \"web_search({origin})\"`)"
                );
            }
            settings.save(&path)?;
            say!("web search: {provider:?} (saved to {})", path.display());
            if provider.needs_key() && !cowork_app::has_web_key(provider)? {
                say!("store its key: `cowork web key` (reads it from stdin)");
            }
            return Ok(ExitCode::SUCCESS);
        }
        WebCmd::Key => {
            let provider = cowork_app::WebSettings::load(&path)?
                .search
                .provider
                .ok_or("choose a provider first: `cowork web provider brave`")?;
            let mut key = String::new();
            std::io::stdin()
                .read_line(&mut key)
                .map_err(|e| e.to_string())?;
            cowork_app::set_web_key(provider, &key)?;
            say!(
                "key stored in the OS keyring ({})",
                provider.keyring_account()
            );
            return Ok(ExitCode::SUCCESS);
        }
        WebCmd::Settings => {
            let settings = cowork_app::WebSettings::load(&path)?;
            say!(
                "{}",
                serde_json::to_string_pretty(&settings).map_err(|e| e.to_string())?
            );
            return Ok(ExitCode::SUCCESS);
        }
        WebCmd::Search { query, count } => (
            "web_search",
            serde_json::json!({ "query": query, "count": count }),
        ),
        WebCmd::Fetch { url, selector } => (
            "web_fetch",
            serde_json::json!({ "url": url, "selector": selector }),
        ),
        WebCmd::Weather { place, days } => (
            "get_weather",
            serde_json::json!({ "place": place, "days": days }),
        ),
        WebCmd::News {
            query,
            since,
            language,
        } => (
            "get_news",
            serde_json::json!({ "query": query, "since": since, "language": language }),
        ),
    };
    call_and_print(app.scheduler(), tool, args, conversation, json).await
}
