//! The one HTTP client of the web family.

use crate::cache::{Cache, Entry, freshness, now};
use bytes::Bytes;
use cowork_contract::address::{Kind, classify};
use reqwest::header::{
    CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, LOCATION,
};
use std::net::SocketAddr;
use std::time::Duration;
use url::{Host, Url};

/// A fetch refused because of where its name led.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{host} leads to {} ({address}): web tools reach public addresses only — to reach it, write the address itself in the URL and allow that origin with a rule", .kind.describe())]
pub struct Blocked {
    pub host: String,
    pub address: std::net::IpAddr,
    pub kind: Kind,
}

/// Which addresses a fetch may reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Public addresses only: the default for anything a model or a page asks for.
    PublicOnly,
    /// Any address: only when a rule the person wrote names the origin.
    Any,
}

/// Where a fetched answer came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Network,
    /// Still fresh in the cache; its age in seconds.
    Cache {
        age: u64,
    },
    /// The server said the cached copy is current (304).
    Revalidated,
    /// The network failed; the cached copy, `age` seconds old.
    Offline {
        age: u64,
        why: String,
    },
}

impl Source {
    /// For the model and the window: where the answer came from, with its age.
    pub fn describe(&self) -> String {
        match self {
            Source::Network => "network".to_string(),
            Source::Cache { age } => format!("cache ({age} s old)"),
            Source::Revalidated => "cache (confirmed by the site)".to_string(),
            Source::Offline { age, why } => format!("cache, {age} s old — offline: {why}"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Fetched {
    /// The address the answer came from (after same-origin redirects).
    pub url: String,
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Bytes,
    /// The body was longer than the cap and was cut.
    pub truncated: bool,
    /// A redirect to another origin, not followed: fetching it is a call of its own, reviewed
    /// for that origin.
    pub redirect_elsewhere: Option<String>,
    pub source: Source,
}

impl Fetched {
    fn network(
        url: &Url,
        status: reqwest::StatusCode,
        content_type: Option<String>,
        body: Bytes,
        truncated: bool,
    ) -> Fetched {
        Fetched {
            url: url.to_string(),
            status: status.as_u16(),
            content_type,
            body,
            truncated,
            redirect_elsewhere: None,
            source: Source::Network,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{0:?} is not a web address: give a full http(s) URL")]
    Url(String),
    #[error("{0:?}: only http and https addresses are fetched")]
    Scheme(String),
    #[error(transparent)]
    Blocked(Blocked),
    #[error("{url}: no answer within {secs} s")]
    Timeout { url: String, secs: f64 },
    #[error("{url}: {why}")]
    Network { url: String, why: String },
    #[error("{0}: more than {MAX_REDIRECTS} redirects")]
    TooManyRedirects(String),
}

const MAX_REDIRECTS: usize = 5;
const TIMEOUT: Duration = Duration::from_secs(20);

pub struct WebClient {
    // Built at the first fetch (loading TLS roots is not free): opening the app pays nothing.
    // One per reach and proxy: a changed proxy setting takes effect at the next fetch.
    clients: std::sync::Mutex<Vec<(Reach, Option<String>, reqwest::Client)>>,
    /// The proxy from settings (`None`: the environment's `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`).
    proxy: Box<dyn Fn() -> Option<String> + Send + Sync>,
    /// How long one request may take, from connecting to the last byte.
    timeout: Duration,
    cache: Option<Cache>,
    max_bytes: usize,
}

/// A call to a web API (a search provider): a GET or a JSON POST with its own headers, never
/// cached (keys ride in its headers), never redirected.
#[derive(Clone, Debug)]
pub struct ApiRequest {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    /// A JSON body: sent as a POST.
    pub json: Option<serde_json::Value>,
}

/// Refuses names that resolve to anything but public addresses — at connect time, so the
/// address checked is the address used.
struct PublicResolver;

impl reqwest::dns::Resolve for PublicResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some(inside) = addresses.iter().find(|a| classify(a.ip()) != Kind::Public) {
                return Err(Box::new(Blocked {
                    host,
                    address: inside.ip(),
                    kind: classify(inside.ip()),
                })
                    as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

fn builder(timeout: Duration) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .user_agent(concat!(
            "Cowork/",
            env!("CARGO_PKG_VERSION"),
            " (desktop assistant; fetches on its user's request)"
        ))
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .timeout(timeout)
}

impl WebClient {
    /// A client caching in `cache` (none when None), cutting bodies at `max_bytes`.
    pub fn new(cache: Option<Cache>, max_bytes: usize) -> WebClient {
        WebClient {
            clients: Default::default(),
            proxy: Box::new(|| None),
            timeout: TIMEOUT,
            cache,
            max_bytes,
        }
    }

    /// The same, with the proxy read from `proxy` at each fetch (settings the person may change).
    pub fn with_proxy(
        mut self,
        proxy: impl Fn() -> Option<String> + Send + Sync + 'static,
    ) -> WebClient {
        self.proxy = Box::new(proxy);
        self
    }

    /// The same, giving each request at most `timeout` (20 s by default).
    pub fn with_timeout(mut self, timeout: Duration) -> WebClient {
        self.timeout = timeout;
        self
    }

    fn http(&self, reach: Reach) -> Result<reqwest::Client, FetchError> {
        let proxy = (self.proxy)().filter(|p| !p.trim().is_empty());
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, client)) = clients.iter().find(|(r, p, _)| *r == reach && *p == proxy) {
            return Ok(client.clone());
        }
        let failed = |why: String| FetchError::Network {
            url: String::new(),
            why: format!("the HTTP client could not start: {why}"),
        };
        let mut builder = match reach {
            Reach::PublicOnly => {
                builder(self.timeout).dns_resolver(std::sync::Arc::new(PublicResolver))
            }
            Reach::Any => builder(self.timeout),
        };
        if let Some(proxy) = &proxy {
            let proxy = reqwest::Proxy::all(proxy.trim()).map_err(|e| {
                failed(format!(
                    "the proxy {proxy:?} is not a proxy address ({e}) — fix it in Settings → Web"
                ))
            })?;
            builder = builder.proxy(proxy);
        }
        let client = builder.build().map_err(|e| failed(e.to_string()))?;
        clients.push((reach, proxy, client.clone()));
        Ok(client)
    }

    /// Sends an API request (see [`ApiRequest`]) under the same address checks as a fetch.
    pub async fn api(&self, request: &ApiRequest, reach: Reach) -> Result<Fetched, FetchError> {
        let url = parse(&request.url)?;
        if reach == Reach::PublicOnly {
            check_literal(&url)?;
            check_resolved(&url).await?;
        }
        let client = self.http(reach)?;
        let mut builder = match &request.json {
            Some(body) => client.post(url.clone()).json(body),
            None => client.get(url.clone()),
        };
        for (name, value) in &request.headers {
            builder = builder.header(*name, value);
        }
        let response = builder
            .send()
            .await
            .map_err(|e| classify_error(&url, e, self.timeout))?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let (body, truncated) = self.read_capped(&url, response).await?;
        Ok(Fetched::network(
            &url,
            status,
            content_type,
            body,
            truncated,
        ))
    }

    /// GETs `raw`: the cache first, then the network; same-origin redirects followed.
    pub async fn fetch(&self, raw: &str, reach: Reach) -> Result<Fetched, FetchError> {
        let mut url = parse(raw)?;
        for _ in 0..=MAX_REDIRECTS {
            let fetched = self.fetch_one(&url, reach).await?;
            let Some(next) = fetched.redirect_elsewhere.as_deref() else {
                return Ok(fetched);
            };
            let next = url
                .join(next)
                .map_err(|_| FetchError::Url(next.to_string()))?;
            if next.origin() != url.origin() {
                return Ok(Fetched {
                    redirect_elsewhere: Some(next.to_string()),
                    ..fetched
                });
            }
            url = next;
        }
        Err(FetchError::TooManyRedirects(raw.to_string()))
    }

    async fn fetch_one(&self, url: &Url, reach: Reach) -> Result<Fetched, FetchError> {
        if reach == Reach::PublicOnly {
            check_literal(url)?;
        }
        let cached = self.cache.as_ref().and_then(|c| c.get(url.as_str()));
        if let Some((entry, body)) = &cached
            && entry.is_fresh()
        {
            return Ok(from_cache(
                entry,
                body.clone(),
                Source::Cache { age: entry.age() },
            ));
        }
        // Only answers fetched under the same checks are stored (a name that leads inside never
        // got one), so a fresh hit needs no DNS lookup; the network path does.
        if reach == Reach::PublicOnly {
            check_resolved(url).await?;
        }
        let client = self.http(reach)?;
        let request = conditional(client.get(url.clone()), cached.as_ref().map(|(e, _)| e));
        match request.send().await {
            Ok(response) => self.answer(url, response, cached).await,
            Err(e) => offline(classify_error(url, e, self.timeout), cached),
        }
    }

    /// What the server answered: the cached copy it confirmed (304), a redirect to follow or
    /// not, or a new body (stored when the server lets it be cached).
    async fn answer(
        &self,
        url: &Url,
        response: reqwest::Response,
        cached: Option<(Entry, Bytes)>,
    ) -> Result<Fetched, FetchError> {
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let status = response.status();
        let policy = freshness(header(CACHE_CONTROL).as_deref());
        if status == reqwest::StatusCode::NOT_MODIFIED
            && let (Some((entry, body)), Some(cache)) = (cached, &self.cache)
        {
            let entry = cache.confirm(&entry, policy.flatten()).unwrap_or(entry);
            return Ok(from_cache(&entry, body, Source::Revalidated));
        }
        if status.is_redirection()
            && let Some(location) = header(LOCATION)
        {
            return Ok(Fetched {
                url: url.to_string(),
                status: status.as_u16(),
                content_type: None,
                body: Bytes::new(),
                truncated: false,
                redirect_elsewhere: Some(location),
                source: Source::Network,
            });
        }
        let (content_type, etag, last_modified) =
            (header(CONTENT_TYPE), header(ETAG), header(LAST_MODIFIED));
        let (body, truncated) = self.read_capped(url, response).await?;
        if let (Some(cache), Some(max_age), true, false) =
            (&self.cache, policy, status.is_success(), truncated)
        {
            let entry = Entry {
                url: url.to_string(),
                status: status.as_u16(),
                content_type: content_type.clone(),
                etag,
                last_modified,
                stored_at: now(),
                max_age,
            };
            if let Err(e) = cache.put(&entry, &body) {
                tracing::warn!(url = %url, "web cache: {e}");
            }
        }
        Ok(Fetched::network(url, status, content_type, body, truncated))
    }

    async fn read_capped(
        &self,
        url: &Url,
        mut response: reqwest::Response,
    ) -> Result<(Bytes, bool), FetchError> {
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| classify_error(url, e, self.timeout))?
        {
            if body.len() + chunk.len() > self.max_bytes {
                body.extend_from_slice(&chunk[..self.max_bytes - body.len()]);
                return Ok((body.into(), true));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((body.into(), false))
    }
}

fn parse(raw: &str) -> Result<Url, FetchError> {
    let url = Url::parse(raw.trim()).map_err(|_| FetchError::Url(raw.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::Scheme(raw.to_string()));
    }
    if url.host().is_none() {
        return Err(FetchError::Url(raw.to_string()));
    }
    Ok(url)
}

/// An address written as numbers never reaches the resolver: it is checked here.
fn check_literal(url: &Url) -> Result<(), FetchError> {
    let ip: std::net::IpAddr = match url.host() {
        Some(Host::Ipv4(ip)) => ip.into(),
        Some(Host::Ipv6(ip)) => ip.into(),
        _ => return Ok(()),
    };
    refuse_inside(url, [ip])
}

/// A name checked before the request: through a proxy (from the environment) the resolver is the
/// proxy's. The connect-time resolver checks again, so a name re-pointed in between is refused
/// too.
async fn check_resolved(url: &Url) -> Result<(), FetchError> {
    let Some(Host::Domain(name)) = url.host() else {
        return Ok(());
    };
    match tokio::net::lookup_host((name, 0)).await {
        Ok(found) => refuse_inside(url, found.map(|a| a.ip())),
        // Unknown names fail at the request, with the network's own words.
        Err(_) => Ok(()),
    }
}

fn refuse_inside(
    url: &Url,
    addresses: impl IntoIterator<Item = std::net::IpAddr>,
) -> Result<(), FetchError> {
    match addresses
        .into_iter()
        .find(|ip| classify(*ip) != Kind::Public)
    {
        None => Ok(()),
        Some(address) => Err(FetchError::Blocked(Blocked {
            host: url.host_str().unwrap_or_default().to_string(),
            address,
            kind: classify(address),
        })),
    }
}

fn classify_error(url: &Url, e: reqwest::Error, timeout: Duration) -> FetchError {
    // The resolver's refusal comes back wrapped in the connector's errors.
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(error) = source {
        if let Some(blocked) = error.downcast_ref::<Blocked>() {
            return FetchError::Blocked(blocked.clone());
        }
        source = error.source();
    }
    if e.is_timeout() {
        return FetchError::Timeout {
            url: url.to_string(),
            secs: timeout.as_secs_f64(),
        };
    }
    let mut why = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(error) = source {
        why = format!("{why}: {error}");
        source = error.source();
    }
    FetchError::Network {
        url: url.to_string(),
        why,
    }
}

/// Asks the server to answer 304 when the cached copy is still current.
fn conditional(
    mut request: reqwest::RequestBuilder,
    cached: Option<&Entry>,
) -> reqwest::RequestBuilder {
    if let Some(entry) = cached {
        if let Some(etag) = &entry.etag {
            request = request.header(IF_NONE_MATCH, etag);
        }
        if let Some(date) = &entry.last_modified {
            request = request.header(IF_MODIFIED_SINCE, date);
        }
    }
    request
}

/// A request that failed: the cached copy, marked offline, when there is one.
fn offline(error: FetchError, cached: Option<(Entry, Bytes)>) -> Result<Fetched, FetchError> {
    match (cached, &error) {
        // Refusals are never papered over with an old copy.
        (_, FetchError::Blocked(_)) | (None, _) => Err(error),
        (Some((entry, body)), _) => Ok(from_cache(
            &entry,
            body,
            Source::Offline {
                age: entry.age(),
                why: error.to_string(),
            },
        )),
    }
}

fn from_cache(entry: &Entry, body: Bytes, source: Source) -> Fetched {
    Fetched {
        url: entry.url.clone(),
        status: entry.status,
        content_type: entry.content_type.clone(),
        body,
        truncated: false,
        redirect_elsewhere: None,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::http::{HeaderMap, StatusCode, header};
    use axum::response::IntoResponse;
    use axum::routing::get;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A loopback site: `/page` (ETag, max-age 1), `/hop` (same-origin redirect), `/away` (a
    /// redirect to another origin), `/big` (2 MB), `/private` (no-store). Counts requests.
    async fn site() -> (String, Arc<AtomicUsize>) {
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        let app = Router::new()
            .route(
                "/page",
                get(|headers: HeaderMap| async move {
                    if headers
                        .get(header::IF_NONE_MATCH)
                        .is_some_and(|v| v == "\"v1\"")
                    {
                        return StatusCode::NOT_MODIFIED.into_response();
                    }
                    (
                        [
                            (header::ETAG, "\"v1\""),
                            (header::CACHE_CONTROL, "max-age=1"),
                            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                        ],
                        "<h1>Hello</h1>",
                    )
                        .into_response()
                }),
            )
            .route(
                "/hop",
                get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/page")]) }),
            )
            .route(
                "/away",
                get(|| async {
                    (
                        StatusCode::MOVED_PERMANENTLY,
                        [(header::LOCATION, "http://localhost:9/elsewhere")],
                    )
                }),
            )
            .route("/big", get(|| async { vec![b'x'; 2_000_000] }))
            .route(
                "/private",
                get(|| async { ([(header::CACHE_CONTROL, "no-store")], "secret") }),
            )
            .layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    async move { next.run(request).await }
                },
            ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (base, hits)
    }

    #[tokio::test]
    async fn addresses_inside_are_refused_unless_allowed() {
        let (base, hits) = site().await;
        let client = WebClient::new(None, 1 << 20);
        let port = base.rsplit(':').next().unwrap();
        for url in [
            format!("{base}/page"),
            format!("http://localhost:{port}/page"),
            format!("http://[::ffff:127.0.0.1]:{port}/page"),
            "http://169.254.169.254/latest/meta-data/".to_string(),
            "http://10.0.0.1/".to_string(),
        ] {
            match client.fetch(&url, Reach::PublicOnly).await {
                Err(FetchError::Blocked(blocked)) => {
                    assert!(
                        blocked
                            .to_string()
                            .contains("allow that origin with a rule"),
                        "{blocked}"
                    )
                }
                other => panic!("{url}: {other:?}"),
            }
        }
        assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing reached the server");
        for url in ["file:///etc/passwd", "ftp://example.org/x", "gopher://x/"] {
            assert!(matches!(
                client.fetch(url, Reach::PublicOnly).await,
                Err(FetchError::Scheme(_))
            ));
        }
        let allowed = client
            .fetch(&format!("{base}/page"), Reach::Any)
            .await
            .unwrap();
        assert_eq!(&allowed.body[..], b"<h1>Hello</h1>");
    }

    #[tokio::test]
    async fn redirects_are_followed_within_the_origin_only() {
        let (base, _) = site().await;
        let client = WebClient::new(None, 1 << 20);
        let hop = client
            .fetch(&format!("{base}/hop"), Reach::Any)
            .await
            .unwrap();
        assert_eq!(hop.url, format!("{base}/page"));
        assert_eq!(&hop.body[..], b"<h1>Hello</h1>");
        let away = client
            .fetch(&format!("{base}/away"), Reach::Any)
            .await
            .unwrap();
        assert_eq!(
            away.redirect_elsewhere.as_deref(),
            Some("http://localhost:9/elsewhere")
        );
        assert!(away.body.is_empty());
    }

    #[tokio::test]
    async fn bodies_are_cut_at_the_cap_and_say_so() {
        let (base, _) = site().await;
        let client = WebClient::new(None, 100_000);
        let big = client
            .fetch(&format!("{base}/big"), Reach::Any)
            .await
            .unwrap();
        assert!(big.truncated);
        assert_eq!(big.body.len(), 100_000);
    }

    #[tokio::test]
    async fn the_cache_answers_fresh_revalidates_stale_and_stands_in_offline() {
        let dir = tempfile::tempdir().unwrap();
        let (base, hits) = site().await;
        let client = WebClient::new(Some(Cache::new(dir.path())), 1 << 20);
        let url = format!("{base}/page");
        let first = client.fetch(&url, Reach::Any).await.unwrap();
        assert_eq!(first.source, Source::Network);
        let again = client.fetch(&url, Reach::Any).await.unwrap();
        assert!(
            matches!(again.source, Source::Cache { .. }),
            "{:?}",
            again.source
        );
        assert_eq!(
            hits.load(Ordering::SeqCst),
            1,
            "a fresh answer costs no request"
        );
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let revalidated = client.fetch(&url, Reach::Any).await.unwrap();
        assert_eq!(revalidated.source, Source::Revalidated);
        assert_eq!(&revalidated.body[..], b"<h1>Hello</h1>");
        // no-store is never written down.
        client
            .fetch(&format!("{base}/private"), Reach::Any)
            .await
            .unwrap();
        assert!(
            Cache::new(dir.path())
                .get(&format!("{base}/private"))
                .is_none()
        );

        // The server is gone: the stale copy, with its age and why.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let offline = WebClient::new(Some(Cache::new(dir.path())), 1 << 20);
        let entry = Cache::new(dir.path()).get(&url).unwrap().0;
        let stale_elsewhere = Entry {
            url: "http://127.0.0.1:9/page".into(),
            stored_at: now() - 3600,
            max_age: Some(60),
            ..entry
        };
        Cache::new(dir.path())
            .put(&stale_elsewhere, b"old")
            .unwrap();
        let answer = offline
            .fetch("http://127.0.0.1:9/page", Reach::Any)
            .await
            .unwrap();
        match answer.source {
            Source::Offline { age, .. } => assert!(age >= 3600),
            other => panic!("{other:?}"),
        }
        assert_eq!(&answer.body[..], b"old");
        // A refusal is not answered from the cache.
        assert!(matches!(
            offline
                .fetch("http://127.0.0.1:9/page", Reach::PublicOnly)
                .await,
            Err(FetchError::Blocked(_))
        ));
    }

    #[tokio::test]
    async fn a_slow_site_times_out_and_says_how_long_it_waited() {
        let app = Router::new().route(
            "/slow",
            get(|| async {
                tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                "late"
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let client =
            WebClient::new(None, 1 << 20).with_timeout(std::time::Duration::from_millis(300));
        let started = std::time::Instant::now();
        let error = client
            .fetch(&format!("{base}/slow"), Reach::Any)
            .await
            .unwrap_err();
        assert!(matches!(error, FetchError::Timeout { .. }), "{error:?}");
        assert!(
            error.to_string().contains("no answer within 0.3 s"),
            "{error}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(3));
    }
}
