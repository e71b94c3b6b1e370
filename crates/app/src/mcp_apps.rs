//! MCP Apps in the window: a tool result that names its server's `ui://` view is rendered under
//! the call, in a frame with no origin of its own (sandboxed, no same-origin) and a CSP of its
//! own. Everything the view asks of Cowork passes here:
//! - its page is read from its own server (`mcp_read_resource`) when the person asks to see
//!   it (their click: `Caller::Person`), and only a view a current tool of that server declares
//!   (an old conversation's record cannot make a same-named newer pack read and be told what
//!   was sent to the old one);
//! - its tool calls reach its server's tools only, one at a time, each a `Scheduler::call` with caller
//!   `mcp-app:<server>` in the view's own conversation, which holds untrusted content from the
//!   start: the view is the server's code, so a click inside it is not, as far as Cowork can
//!   tell, the person's act (the view could click for itself);
//! - a message it asks to add reaches the composer as the server's words (an attachment the
//!   person may send or drop, which taints the conversation it is sent in), never as theirs;
//! - its page may reach the network only when its server's sandbox has the network, and then
//!   only the origins its resource names.

use crate::App;
use cowork_agent::Part;
use cowork_core::{CallRequest, Caller};
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};

/// A view's page as the frame loads it: its HTML and the CSP it is served with.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewPage {
    pub html: String,
    pub csp: String,
}

/// Why a view could not be shown or could not call.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ViewError {
    #[error("{0} is not an MCP App view (a ui:// resource)")]
    NotAView(String),
    #[error("the toolpack {0} is not running: start it on the Toolpacks page")]
    NoServer(String),
    #[error("{server}'s view asked for {tool}, which is not a tool of {server}")]
    NotItsTool { server: String, tool: String },
    #[error("no tool of {server} offers the view {resource} now (was the toolpack replaced?)")]
    NotDeclared { server: String, resource: String },
    #[error("the view of {0} already has a call running: one at a time")]
    Busy(String),
    #[error("{0} holds no HTML page (text/html)")]
    NotHtml(String),
    #[error("{uri} is {size} bytes; a view's page is at most {VIEW_MAX} bytes")]
    TooLarge { uri: String, size: usize },
    #[error("{0}")]
    Read(String),
}

/// The largest page a view may have.
pub const VIEW_MAX: usize = 4 << 20;
/// How many pages are kept for frames that are shown (a frame may reload its page).
const PAGES_KEPT: usize = 32;

/// The pages of views shown in the window, by token (oldest first), and the servers whose view
/// has a call running.
#[derive(Default)]
pub struct ViewPages {
    pages: Mutex<VecDeque<(String, Arc<ViewPage>)>>,
    calling: Arc<Mutex<HashSet<String>>>,
}

/// A view's call running: its server is free again once it ends, however it ends.
struct Calling {
    calling: Arc<Mutex<HashSet<String>>>,
    server: String,
}

impl Drop for Calling {
    fn drop(&mut self) {
        self.calling.lock().unwrap().remove(&self.server);
    }
}

/// The conversation a view's calls belong to: its grants and its taint.
pub fn conversation_of(server: &str) -> String {
    format!("mcp-app:{server}")
}

impl App {
    /// Reads `resource` of `server` as its view's page, shown in `conversation`, and keeps it
    /// for the frame: the token its address names (see [`App::app_view_page`]).
    pub async fn open_app_view(
        &self,
        conversation: &str,
        server: &str,
        resource: &str,
    ) -> Result<String, ViewError> {
        if !resource.starts_with("ui://") {
            return Err(ViewError::NotAView(resource.to_string()));
        }
        let reach = self
            .gateway
            .view_reach(server)
            .ok_or_else(|| ViewError::NoServer(server.to_string()))?;
        if !reach.views.iter().any(|v| v == resource) {
            return Err(ViewError::NotDeclared {
                server: server.to_string(),
                resource: resource.to_string(),
            });
        }
        let args = json!({"server": server, "uri": resource});
        let request = CallRequest::new("mcp_read_resource", args, Caller::Person, conversation);
        let read = self.scheduler.call(request).await.result;
        let read = read.map_err(|e| ViewError::Read(e.to_string()))?;
        let page = page_of(resource, read.structured.as_ref(), reach.network)?;
        let token = uuid::Uuid::new_v4().simple().to_string();
        let mut pages = self.view_pages.pages.lock().unwrap();
        if pages.len() == PAGES_KEPT {
            pages.pop_front();
        }
        pages.push_back((token.clone(), Arc::new(page)));
        Ok(token)
    }

    /// The page a frame's address names.
    pub fn app_view_page(&self, token: &str) -> Option<Arc<ViewPage>> {
        let pages = self.view_pages.pages.lock().unwrap();
        pages
            .iter()
            .find(|(t, _)| t == token)
            .map(|(_, p)| p.clone())
    }

    /// A tool call the view of `server` makes (MCP `tools/call`), answered as MCP's
    /// `CallToolResult`: a refusal or failure is a result with `isError`, its reason in words.
    /// One at a time per view: a view cannot queue asks faster than the person answers them.
    pub async fn call_from_view(&self, server: &str, tool: &str, arguments: Value) -> Value {
        let calling = &self.view_pages.calling;
        let _calling = calling
            .lock()
            .unwrap()
            .insert(server.to_string())
            .then(|| Calling {
                calling: calling.clone(),
                server: server.to_string(),
            });
        let outcome = match self.gateway.view_reach(server) {
            _ if _calling.is_none() => Err(ViewError::Busy(server.to_string())),
            None => Err(ViewError::NoServer(server.to_string())),
            Some(reach) if !reach.tools.iter().any(|t| t == tool) => Err(ViewError::NotItsTool {
                server: server.to_string(),
                tool: tool.to_string(),
            }),
            Some(_) => {
                let name = cowork_mcp::tool_name(server, tool);
                self.view_call(server, &name, arguments).await
            }
        };
        let result = outcome.map_err(|e| cowork_contract::ToolError::failed(e.to_string()));
        serde_json::to_value(crate::mcp_serve::mcp_result(result)).unwrap_or_default()
    }

    /// A message the view of `server` asks to add (MCP Apps' `ui/message`): an attachment named
    /// by its server, which the person may send or drop; sent, it taints the conversation it is
    /// sent in, as anything a server wrote does.
    pub fn message_from_view(&self, server: &str, text: &str) -> Part {
        let cap = cowork_files::attach::ATTACH_TEXT_MAX;
        let total = text.chars().count();
        Part::File {
            name: format!("{server}: a message from its view"),
            media_type: "text/plain".into(),
            text: text.chars().take(cap).collect(),
            truncated_from: (total > cap).then_some(total as u64),
            untrusted_from: Some(format!("the view of the toolpack {server}")),
        }
    }

    /// One call of the view of `server`, in its own conversation (untrusted from the start).
    async fn view_call(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Result<cowork_contract::ToolOutput, ViewError> {
        let conversation = conversation_of(server);
        let policy = self.scheduler.policy();
        if policy.tainted_by(&conversation).is_none() {
            let source = format!("the view of the toolpack {server} (its server's own page)");
            policy
                .mark_tainted(&conversation, &source)
                .map_err(|e| ViewError::Read(e.to_string()))?;
        }
        let request = CallRequest::new(tool, arguments, Caller::mcp_app(server), &conversation);
        self.scheduler
            .call(request)
            .await
            .result
            .map_err(|e| ViewError::Read(e.to_string()))
    }
}

/// The page in a resource read's answer: its first HTML content, served with the CSP its
/// `_meta.ui.csp` asks for within what the server may reach.
fn page_of(uri: &str, read: Option<&Value>, network: bool) -> Result<ViewPage, ViewError> {
    let contents = read.and_then(|r| r["contents"].as_array());
    let html = contents
        .into_iter()
        .flatten()
        .find(|c| {
            c["mimeType"]
                .as_str()
                .is_some_and(|m| m.to_ascii_lowercase().starts_with("text/html"))
        })
        .ok_or_else(|| ViewError::NotHtml(uri.to_string()))?;
    // Sized before anything is copied or decoded.
    let size = html["text"]
        .as_str()
        .map(str::len)
        .or_else(|| html["blob"].as_str().map(|b| b.len() / 4 * 3))
        .unwrap_or_default();
    if size > VIEW_MAX {
        return Err(ViewError::TooLarge {
            uri: uri.to_string(),
            size,
        });
    }
    let text = match (html["text"].as_str(), html["blob"].as_str()) {
        (Some(text), _) => text.to_string(),
        (None, Some(blob)) => {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|_| ViewError::NotHtml(uri.to_string()))?;
            String::from_utf8(bytes).map_err(|_| ViewError::NotHtml(uri.to_string()))?
        }
        _ => return Err(ViewError::NotHtml(uri.to_string())),
    };
    Ok(ViewPage {
        html: text,
        csp: csp(&html["_meta"]["ui"]["csp"], network),
    })
}

/// The view's CSP: its own inline script and style, images and fonts inline; nothing from
/// elsewhere unless its server has the network, and then only the origins it names (each
/// parsed and written back by us, so no text of the server's reaches the policy).
fn csp(asked: &Value, network: bool) -> String {
    let origins = |key: &str| -> String {
        if !network {
            return String::new();
        }
        let named = asked[key].as_array().into_iter().flatten();
        named
            .filter_map(|o| o.as_str().and_then(origin_source))
            .map(|o| format!(" {o}"))
            .collect()
    };
    let (connect, resources) = (origins("connectDomains"), origins("resourceDomains"));
    let connect = if connect.is_empty() {
        " 'none'".to_string()
    } else {
        connect
    };
    format!(
        "default-src 'none'; script-src 'unsafe-inline'{resources}; \
         style-src 'unsafe-inline'{resources}; img-src data: blob:{resources}; \
         font-src data:{resources}; media-src data: blob:{resources}; connect-src{connect}; \
         frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"
    )
}

/// An origin a view names, as a CSP source: `https://host[:port]` (or `wss://`), nothing more.
fn origin_source(asked: &str) -> Option<String> {
    let url = url::Url::parse(asked).ok()?;
    if !matches!(url.scheme(), "https" | "wss")
        || !url.username().is_empty()
        || url.password().is_some()
        || url.query().is_some()
        || url.fragment().is_some()
        || url.path() != "/"
    {
        return None;
    }
    let host = match url.host()? {
        // The URL standard admits more in a host than CSP's grammar (`,` for one).
        url::Host::Domain(d)
            if d.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.') =>
        {
            d.to_string()
        }
        url::Host::Domain(_) => return None,
        url::Host::Ipv4(ip) => ip.to_string(),
        url::Host::Ipv6(ip) => format!("[{ip}]"),
    };
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    Some(format!("{}://{host}{port}", url.scheme()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn page(meta: Value, network: bool) -> ViewPage {
        let read = json!({"contents": [
            {"uri": "ui://t/app.html", "mimeType": "text/html;profile=mcp-app",
             "text": "<p>hi</p>", "_meta": meta}
        ]});
        page_of("ui://t/app.html", Some(&read), network).unwrap()
    }

    #[test]
    fn a_view_reaches_the_network_only_when_its_server_does() {
        let asked = json!({"ui": {"csp": {"connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://cdn.example.com:8443"]}}});
        let closed = page(asked.clone(), false);
        assert!(closed.csp.contains("connect-src 'none'"), "{}", closed.csp);
        assert!(!closed.csp.contains("example.com"), "{}", closed.csp);
        let open = page(asked, true);
        assert!(
            open.csp.contains("connect-src https://api.example.com;"),
            "{}",
            open.csp
        );
        assert!(
            open.csp
                .contains("script-src 'unsafe-inline' https://cdn.example.com:8443;")
        );
        assert!(
            open.csp.contains("frame-src 'none'") && open.csp.starts_with("default-src 'none'")
        );
    }

    #[test]
    fn only_origins_are_written_back() {
        for refused in [
            "http://plain.example.com",
            "https://a.example.com/path",
            "https://user@a.example.com",
            "https://a.example.com?x=1",
            "javascript:alert(1)",
            "*",
            "'unsafe-eval'",
            "data:",
            "https://a,b.example.com",
        ] {
            assert_eq!(origin_source(refused), None, "{refused}");
        }
        assert_eq!(
            origin_source("HTTPS://A.Example.com:443/").as_deref(),
            Some("https://a.example.com")
        );
    }

    #[test]
    fn a_page_must_be_html_and_bounded() {
        let read = json!({"contents": [{"uri": "ui://t", "mimeType": "text/plain", "text": "x"}]});
        assert_eq!(
            page_of("ui://t", Some(&read), false),
            Err(ViewError::NotHtml("ui://t".into()))
        );
        let big = "x".repeat(VIEW_MAX + 1);
        let read = json!({"contents": [{"uri": "ui://t", "mimeType": "text/html", "text": big}]});
        assert!(matches!(
            page_of("ui://t", Some(&read), false),
            Err(ViewError::TooLarge { .. })
        ));
        use base64::Engine;
        let blob = base64::engine::general_purpose::STANDARD.encode("<b>x</b>");
        let read = json!({"contents": [{"uri": "ui://t", "mimeType": "text/html", "blob": blob}]});
        assert_eq!(
            page_of("ui://t", Some(&read), false).unwrap().html,
            "<b>x</b>"
        );
    }

    proptest! {
        /// Whatever a server names as its origins, the policy holds only our directives: no
        /// `;` or `,` it wrote, no keyword, and every source an https/wss origin.
        #[test]
        fn no_server_text_reaches_the_policy(
            names in proptest::collection::vec("[ -~]{0,40}", 0..6),
            prefix in prop_oneof![Just(""), Just("https://"), Just("wss://"), Just("https://a.b")],
        ) {
            let names: Vec<String> = names.iter().map(|n| format!("{prefix}{n}")).collect();
            let asked = json!({"connectDomains": names, "resourceDomains": names});
            let policy = csp(&asked, true);
            let directives: Vec<&str> = policy.split("; ").collect();
            prop_assert_eq!(directives.len(), 11, "{}", policy);
            prop_assert!(!policy.contains(','));
            for directive in directives {
                for source in directive.split(' ').skip(1) {
                    prop_assert!(
                        source.starts_with('\'') && ["'none'", "'unsafe-inline'"].contains(&source)
                            || ["data:", "blob:"].contains(&source)
                            || source.starts_with("https://") || source.starts_with("wss://"),
                        "{} in {}", source, policy
                    );
                }
            }
        }
    }
}
