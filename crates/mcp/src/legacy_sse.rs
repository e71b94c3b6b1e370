//! The 2024-11-05 HTTP+SSE transport, client side: a GET of the server's URL opens an event
//! stream whose first `endpoint` event names where to POST messages; the server's messages come
//! back as `message` events on that stream.
//!
//! Hand-written because rmcp dropped this transport (rust-sdk PR #562) and no maintained crate
//! offers it, while many deployed servers still speak only it. The event parsing is the
//! `sse-stream` crate's (rmcp's own); this file only joins the two halves.

use futures::{Stream, StreamExt};
use reqwest013::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use std::collections::HashMap;
use std::pin::Pin;
use std::time::Duration;

type Events = Pin<Box<dyn Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send>>;

/// How long the server has to name its message endpoint once the stream is open.
const ENDPOINT_WAIT: Duration = Duration::from_secs(30);
/// How long one message may take to be accepted (the answer comes on the stream).
const POST_WAIT: Duration = Duration::from_secs(30);
/// The most one event may hold: a server streaming an endless event must not fill memory
/// (sse-stream buffers an event whole).
const EVENT_LIMIT: usize = 8 << 20;

#[derive(Debug, thiserror::Error)]
pub enum LegacySseError {
    #[error("{0}")]
    Http(#[from] reqwest013::Error),
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error(
        "{0} is not an event stream (is it a streamable HTTP server? then its type is \"http\")"
    )]
    NotAStream(String),
    #[error("{0} closed its event stream before naming where to send messages")]
    NoEndpoint(String),
    #[error("{url} did not name where to send messages within {ENDPOINT_WAIT:?}")]
    EndpointTimeout { url: String },
    /// Messages would carry the conversation's arguments to a host the person never named.
    #[error("{url} asked for messages to go to {endpoint}, another origin: refused")]
    ForeignEndpoint { url: String, endpoint: String },
    #[error("{0}: not a valid endpoint address")]
    BadEndpoint(String),
    #[error("the message could not be encoded: {0}")]
    Encode(#[from] serde_json::Error),
}

/// A connected legacy SSE server: the open event stream and where messages go.
pub struct LegacySse {
    http: reqwest013::Client,
    headers: HeaderMap,
    endpoint: reqwest013::Url,
    events: Events,
}

impl LegacySse {
    /// Opens the event stream at `url` and waits for the server to name its message endpoint,
    /// which must be on the same origin.
    pub async fn connect(
        url: &str,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<LegacySse, LegacySseError> {
        let base = reqwest013::Url::parse(url)
            .map_err(|_| LegacySseError::BadEndpoint(url.to_string()))?;
        let headers: HeaderMap = headers.into_iter().collect();
        // rustls needs one process-wide crypto provider; a second install is a no-op.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // No redirects: a 307 would carry a message (and the manifest's headers) to wherever
        // the server pointed, past the same-origin check below.
        let http = reqwest013::Client::builder()
            .redirect(reqwest013::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .build()?;
        let response = http
            .get(base.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await?;
        if !response.status().is_success() {
            return Err(LegacySseError::Status {
                url: url.to_string(),
                status: response.status().as_u16(),
            });
        }
        let is_stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_stream {
            return Err(LegacySseError::NotAStream(url.to_string()));
        }
        let mut events: Events = Box::pin(sse_stream::SseStream::from_bytes_stream(bounded(
            response.bytes_stream(),
        )));
        let named = tokio::time::timeout(ENDPOINT_WAIT, endpoint_event(&mut events))
            .await
            .map_err(|_| LegacySseError::EndpointTimeout {
                url: url.to_string(),
            })?
            .ok_or_else(|| LegacySseError::NoEndpoint(url.to_string()))?;
        let endpoint = message_endpoint(&base, &named)?;
        Ok(LegacySse {
            http,
            headers,
            endpoint,
            events,
        })
    }
}

/// Where messages go: `named` resolved against the stream's address, on its origin only.
fn message_endpoint(
    base: &reqwest013::Url,
    named: &str,
) -> Result<reqwest013::Url, LegacySseError> {
    let endpoint = base
        .join(named.trim())
        .map_err(|_| LegacySseError::BadEndpoint(named.to_string()))?;
    match endpoint.origin() == base.origin() {
        true => Ok(endpoint),
        false => Err(LegacySseError::ForeignEndpoint {
            url: base.to_string(),
            endpoint: endpoint.to_string(),
        }),
    }
}

/// The byte stream, ending in an error once an event grows past [`EVENT_LIMIT`]: counts the
/// bytes since the last blank line (`\n\n`, `\r` aside), across chunks.
fn bounded(
    bytes: impl Stream<Item = Result<bytes::Bytes, reqwest013::Error>> + Send + 'static,
) -> impl Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + 'static {
    let (mut pending, mut after_newline) = (0usize, false);
    bytes.map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        for &b in chunk.iter() {
            match b {
                b'\n' if after_newline => pending = 0,
                b'\n' => after_newline = true,
                b'\r' => {}
                _ => {
                    after_newline = false;
                    pending += 1;
                }
            }
        }
        match pending > EVENT_LIMIT {
            true => Err(std::io::Error::other(format!(
                "an event longer than {} MB",
                EVENT_LIMIT >> 20
            ))),
            false => Ok(chunk),
        }
    })
}

/// The data of the first `endpoint` event; None when the stream ends first.
async fn endpoint_event(events: &mut Events) -> Option<String> {
    loop {
        let event = next_event(events).await?;
        if event.event.as_deref() == Some("endpoint") {
            return event.data;
        }
    }
}

/// The next event; None once the stream ends or breaks: the connection, an event past
/// [`EVENT_LIMIT`], or a field sse-stream does not know (the SSE spec would ignore it; the
/// parser ends the stream there, and the supervisor reconnects).
async fn next_event(events: &mut Events) -> Option<sse_stream::Sse> {
    match events.next().await? {
        Ok(event) => Some(event),
        Err(e) => {
            tracing::warn!("legacy SSE stream ended: {e}");
            None
        }
    }
}

impl rmcp::transport::Transport<RoleClient> for LegacySse {
    type Error = LegacySseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), LegacySseError>> + Send + 'static {
        let request = serde_json::to_vec(&item).map(|body| {
            self.http
                .post(self.endpoint.clone())
                .headers(self.headers.clone())
                .header(CONTENT_TYPE, "application/json")
                .timeout(POST_WAIT)
                .body(body)
        });
        let url = self.endpoint.to_string();
        async move {
            let response = request?.send().await?;
            match response.status().is_success() {
                true => Ok(()),
                false => Err(LegacySseError::Status {
                    url,
                    status: response.status().as_u16(),
                }),
            }
        }
    }

    /// The next message; None when the stream ends or breaks (the service then stops, and the
    /// supervisor reconnects). An event that is not a JSON-RPC message is skipped.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let event = next_event(&mut self.events).await?;
            if !matches!(event.event.as_deref(), None | Some("message")) {
                continue;
            }
            let Some(data) = event.data else { continue };
            match serde_json::from_str(&data) {
                Ok(message) => return Some(message),
                Err(e) => {
                    tracing::warn!("legacy SSE server sent a message that is not JSON-RPC: {e}")
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), LegacySseError> {
        self.events = Box::pin(futures::stream::empty());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A one-shot server on loopback that answers the first request with `response`.
    async fn answering(response: &'static str) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/sse", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await;
            socket.write_all(response.as_bytes()).await.unwrap();
            // The stream ends after what it sent.
            let _ = socket.shutdown().await;
        });
        url
    }

    const STREAM: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";

    async fn connect_to(body: &'static str) -> Result<LegacySse, LegacySseError> {
        let response: &'static str = Box::leak(format!("{STREAM}{body}").into_boxed_str());
        LegacySse::connect(&answering(response).await, HashMap::new()).await
    }

    #[tokio::test]
    async fn messages_go_only_to_the_streams_own_origin() {
        // Every way of naming another place: another host, scheme-relative, another port, scheme.
        for endpoint in [
            "http://127.0.0.2:9/messages",
            "//evil.example/messages",
            "http://127.0.0.1:1/messages",
            "https://127.0.0.1/messages",
        ] {
            let body: &'static str =
                Box::leak(format!("event: endpoint\ndata: {endpoint}\n\n").into_boxed_str());
            match connect_to(body).await {
                Err(LegacySseError::ForeignEndpoint { .. }) => {}
                Err(other) => panic!("{endpoint}: {other}"),
                Ok(_) => panic!("{endpoint}: accepted"),
            }
        }
    }

    proptest::proptest! {
        /// Generated endpoints: whatever the spelling (scheme-relative, absolute, dot segments,
        /// userinfo, case, backslashes, default ports), one is accepted exactly when the URL it
        /// resolves to has the stream's scheme, host and port.
        #[test]
        fn an_endpoint_is_accepted_only_on_the_streams_origin(
            scheme in proptest::sample::select(vec!["", "http:", "https:", "HTTP:", "ftp:", "data:"]),
            slashes in proptest::sample::select(vec!["", "/", "//", "\\\\", "/\\"]),
            user in proptest::sample::select(vec!["", "127.0.0.1@", "u:p@"]),
            host in proptest::sample::select(vec!["127.0.0.1", "127.0.0.2", "LOCALHOST", "evil.example", "0x7f.1", "[::1]", ""]),
            port in proptest::sample::select(vec!["", ":8000", ":80", ":8001"]),
            path in "[a-z./?=]{0,12}",
        ) {
            let base = reqwest013::Url::parse("http://127.0.0.1:8000/sse").unwrap();
            let named = format!("{scheme}{slashes}{user}{host}{port}/{path}");
            match (message_endpoint(&base, &named), base.join(named.trim())) {
                (Ok(endpoint), _) => {
                    proptest::prop_assert_eq!(endpoint.scheme(), "http");
                    proptest::prop_assert_eq!(endpoint.host_str(), Some("127.0.0.1"));
                    proptest::prop_assert_eq!(endpoint.port_or_known_default(), Some(8000));
                }
                (Err(_), Ok(resolved)) => proptest::prop_assert!(
                    (resolved.scheme(), resolved.host_str(), resolved.port_or_known_default())
                        != ("http", Some("127.0.0.1"), Some(8000)),
                    "{named} refused though it resolves to {resolved}"
                ),
                (Err(_), Err(_)) => {}
            }
        }
    }

    #[tokio::test]
    async fn a_redirected_message_is_not_followed() {
        use rmcp::transport::Transport;
        // Where the redirect points: it must never hear from Cowork.
        let thief = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let stolen = format!("http://{}/steal", thief.local_addr().unwrap());
        let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/sse", server.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut stream, _) = server.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf).await;
            let head = format!("{STREAM}event: endpoint\ndata: /messages\n\n");
            stream.write_all(head.as_bytes()).await.unwrap();
            let (mut post, _) = server.accept().await.unwrap();
            let _ = post.read(&mut buf).await;
            let redirect = format!(
                "HTTP/1.1 307 Temporary Redirect\r\nlocation: {stolen}\r\ncontent-length: 0\r\n\r\n"
            );
            post.write_all(redirect.as_bytes()).await.unwrap();
            let _ = stream.read(&mut buf).await;
        });
        let mut sse = LegacySse::connect(&url, HashMap::new()).await.unwrap();
        let message: TxJsonRpcMessage<RoleClient> = serde_json::from_value(
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .unwrap();
        let err = sse.send(message).await.unwrap_err();
        assert!(
            matches!(err, LegacySseError::Status { status: 307, .. }),
            "{err}"
        );
        let heard = tokio::time::timeout(Duration::from_millis(300), thief.accept()).await;
        assert!(heard.is_err(), "the redirect was followed");
    }

    #[tokio::test]
    async fn a_relative_endpoint_resolves_against_the_stream() {
        // A comment first: ignored.
        let sse = connect_to(": note\n\nevent: endpoint\ndata: /messages?sessionId=abc\n\n")
            .await
            .unwrap();
        assert_eq!(sse.endpoint.path(), "/messages");
        assert_eq!(sse.endpoint.query(), Some("sessionId=abc"));
    }

    #[tokio::test]
    async fn a_stream_that_ends_unnamed_or_is_not_a_stream_says_so() {
        let err = connect_to("event: message\ndata: {}\n\n")
            .await
            .err()
            .unwrap();
        assert!(matches!(err, LegacySseError::NoEndpoint(_)), "{err}");
        let url = answering(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
        )
        .await;
        let err = LegacySse::connect(&url, HashMap::new())
            .await
            .err()
            .unwrap();
        assert!(matches!(err, LegacySseError::NotAStream(_)), "{err}");
        let url = answering("HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n").await;
        let err = LegacySse::connect(&url, HashMap::new())
            .await
            .err()
            .unwrap();
        assert!(
            matches!(err, LegacySseError::Status { status: 405, .. }),
            "{err}"
        );
    }
}
