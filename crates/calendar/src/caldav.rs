//! A CalDAV client (RFC 4791) over reqwest: discovery, listing ETags, GET, conditional PUT and
//! DELETE. Small and hand-written because the protocol surface we need is five requests; the XML
//! is read with roxmltree.

use cowork_contract::Credential;
use std::time::Duration;
use url::Url;

#[derive(Debug, thiserror::Error)]
pub enum DavError {
    /// The server's copy changed since we last saw it (HTTP 412).
    #[error("the server's copy changed since the last sync")]
    Changed,
    #[error("not found on the server")]
    NotFound,
    #[error(
        "the server refused the account's password or sign-in (HTTP {0}) — check it with `cowork account test {1}`; an account that signs in with OAuth may need `cowork account signin {1}`"
    )]
    Unauthorized(u16, String),
    /// Network errors and 5xx: worth retrying at the next sync.
    #[error("{0}")]
    Transient(String),
    #[error("{0}")]
    Other(String),
}

pub struct Client {
    http: reqwest::Client,
    account: String,
    username: String,
    credential: Credential,
    /// The account's server: the credential goes there and nowhere else.
    origin: url::Origin,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RemoteCalendar {
    pub url: Url,
    pub name: String,
    pub ctag: Option<String>,
}

const DAV: &str = "DAV:";
const CALDAV: &str = "urn:ietf:params:xml:ns:caldav";
const CS: &str = "http://calendarserver.org/ns/";

impl Client {
    /// A client for the account at `base` (its configured URL).
    pub fn new(
        account: &str,
        username: &str,
        credential: Credential,
        base: &Url,
    ) -> Result<Self, DavError> {
        let origin = base.origin();
        let http = same_origin_http(&origin)?;
        Ok(Client {
            http,
            account: account.into(),
            username: username.into(),
            credential,
            origin,
        })
    }

    async fn send(
        &self,
        method: &str,
        url: &Url,
        headers: &[(&str, &str)],
        body: Option<String>,
    ) -> Result<reqwest::Response, DavError> {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("valid method");
        // Links in a server's answers (principal, home, calendars) are followed only on the
        // account's own server: another one never sees the password or the token.
        if url.origin() != self.origin {
            return Err(DavError::Other(format!(
                "account {:?}: the server points to {url}, on another server: refused",
                self.account
            )));
        }
        let request = self.http.request(method.clone(), url.clone());
        let mut request = match &self.credential {
            Credential::Password(password) => request.basic_auth(&self.username, Some(password)),
            Credential::Bearer(token) => request.bearer_auth(token),
        };
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| DavError::Transient(format!("{method} {url}: {}", root_cause(&e))))?;
        check_status(response, &method, url, &self.account)
    }

    async fn propfind(&self, url: &Url, depth: &str, props: &str) -> Result<String, DavError> {
        let body = format!(
            r#"<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:c="{CALDAV}" xmlns:cs="{CS}"><d:prop>{props}</d:prop></d:propfind>"#
        );
        let response = self
            .send(
                "PROPFIND",
                url,
                &[
                    ("Depth", depth),
                    ("Content-Type", "application/xml; charset=utf-8"),
                ],
                Some(body),
            )
            .await?;
        response
            .text()
            .await
            .map_err(|e| DavError::Transient(format!("PROPFIND {url}: {e}")))
    }

    /// The calendars under `url`: `url` may be the server root, a principal, a calendar home or
    /// a calendar itself. For a server given by its root, its `/.well-known/caldav` (RFC 6764
    /// §5: a redirect to where CalDAV lives, followed on the same server only) is asked first.
    pub async fn discover(&self, url: &Url) -> Result<Vec<RemoteCalendar>, DavError> {
        let start = "<d:current-user-principal/><c:calendar-home-set/><d:resourcetype/>";
        let well_known = (url.path() == "/").then(|| url.join("/.well-known/caldav"));
        let from_well_known = match well_known {
            Some(Ok(at)) => self.propfind(&at, "0", start).await.ok(),
            _ => None,
        };
        let xml = match from_well_known {
            Some(xml) => xml,
            None => self.propfind(url, "0", start).await?,
        };
        let first = responses(&xml, url)?.into_iter().next();
        let mut home = None;
        if let Some(r) = &first {
            if r.is_calendar {
                return Ok(vec![RemoteCalendar {
                    url: r.href.clone(),
                    name: r.name.clone().unwrap_or_default(),
                    ctag: r.ctag.clone(),
                }]);
            }
            home = r.home.clone();
            if home.is_none()
                && let Some(principal) = &r.principal
            {
                let xml = self
                    .propfind(principal, "0", "<c:calendar-home-set/>")
                    .await?;
                home = responses(&xml, principal)?
                    .into_iter()
                    .next()
                    .and_then(|r| r.home);
            }
        }
        let home = home.unwrap_or_else(|| url.clone());
        let xml = self
            .propfind(&home, "1", "<d:resourcetype/><d:displayname/><cs:getctag/>")
            .await?;
        Ok(responses(&xml, &home)?
            .into_iter()
            .filter(|r| r.is_calendar)
            .map(|r| {
                let fallback = last_segment(&r.href);
                RemoteCalendar {
                    name: r.name.filter(|n| !n.is_empty()).unwrap_or(fallback),
                    url: r.href,
                    ctag: r.ctag,
                }
            })
            .collect())
    }

    /// `href → etag` of every event resource in a calendar.
    pub async fn etags(&self, calendar: &Url) -> Result<Vec<(Url, String)>, DavError> {
        let xml = self
            .propfind(calendar, "1", "<d:getetag/><d:resourcetype/>")
            .await?;
        Ok(responses(&xml, calendar)?
            .into_iter()
            .filter(|r| !r.is_collection)
            .filter_map(|r| Some((r.href, r.etag?)))
            .collect())
    }

    pub async fn get(&self, href: &Url) -> Result<(String, Option<String>), DavError> {
        let response = self.send("GET", href, &[], None).await?;
        let etag = etag_of(&response);
        let text = response
            .text()
            .await
            .map_err(|e| DavError::Transient(format!("GET {href}: {e}")))?;
        Ok((text, etag))
    }

    /// Creates (`etag` None: only if absent) or replaces (only if still at `etag`). Returns the
    /// new ETag when the server tells it.
    pub async fn put(
        &self,
        href: &Url,
        ics: &str,
        etag: Option<&str>,
    ) -> Result<Option<String>, DavError> {
        let condition = match etag {
            Some(etag) => ("If-Match", etag),
            None => ("If-None-Match", "*"),
        };
        let response = self
            .send(
                "PUT",
                href,
                &[condition, ("Content-Type", "text/calendar; charset=utf-8")],
                Some(ics.to_string()),
            )
            .await?;
        Ok(etag_of(&response))
    }

    pub async fn delete(&self, href: &Url, etag: Option<&str>) -> Result<(), DavError> {
        let headers: Vec<(&str, &str)> = etag.map(|e| ("If-Match", e)).into_iter().collect();
        self.send("DELETE", href, &headers, None).await.map(|_| ())
    }
}

/// An HTTP client that follows redirects only within `origin`: a redirect to another server (or
/// from https to http) would carry the credential there.
pub(crate) fn same_origin_http(origin: &url::Origin) -> Result<reqwest::Client, DavError> {
    let same = origin.clone();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .connect_timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() < 5 && attempt.url().origin() == same {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }))
        .build()
        .map_err(|e| DavError::Other(format!("HTTP client: {e}")))
}

/// A calendar server's answer as what it means for a sync.
pub(crate) fn check_status(
    response: reqwest::Response,
    method: &reqwest::Method,
    url: &Url,
    account: &str,
) -> Result<reqwest::Response, DavError> {
    let status = response.status();
    match status.as_u16() {
        401 | 403 => Err(DavError::Unauthorized(status.as_u16(), account.into())),
        404 | 410 => Err(DavError::NotFound),
        412 => Err(DavError::Changed),
        s if status.is_server_error() || s == 429 => Err(DavError::Transient(format!(
            "{method} {url}: the server answered HTTP {s}"
        ))),
        _ if status.is_success() => Ok(response),
        s => Err(DavError::Other(format!(
            "{method} {url}: the server answered HTTP {s}"
        ))),
    }
}

pub(crate) fn root_cause(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    if e.is_timeout() {
        format!("timed out ({source})")
    } else {
        format!("cannot reach the server ({source})")
    }
}

/// The last named part of a URL's path (a calendar's name when the server gives none).
pub(crate) fn last_segment(url: &Url) -> String {
    url.path_segments()
        .and_then(|mut s| s.rfind(|p| !p.is_empty()))
        .unwrap_or("calendar")
        .to_string()
}

fn etag_of(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get("etag")
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

#[derive(Debug)]
struct DavResponse {
    href: Url,
    is_collection: bool,
    is_calendar: bool,
    name: Option<String>,
    etag: Option<String>,
    ctag: Option<String>,
    principal: Option<Url>,
    home: Option<Url>,
}

/// The `<d:response>` elements of a multistatus, with hrefs made absolute against `base`.
fn responses(xml: &str, base: &Url) -> Result<Vec<DavResponse>, DavError> {
    let doc = roxmltree::Document::parse(xml)
        .map_err(|e| DavError::Other(format!("the server sent malformed XML: {e}")))?;
    let href_in = |node: roxmltree::Node<'_, '_>| {
        node.descendants()
            .find(|n| n.has_tag_name((DAV, "href")))
            .and_then(|h| h.text())
            .and_then(|t| base.join(t.trim()).ok())
    };
    let mut out = Vec::new();
    for response in doc
        .descendants()
        .filter(|n| n.has_tag_name((DAV, "response")))
    {
        let Some(href) = response
            .children()
            .find(|n| n.has_tag_name((DAV, "href")))
            .and_then(|h| h.text())
            .and_then(|t| base.join(t.trim()).ok())
        else {
            continue;
        };
        let mut r = DavResponse {
            href,
            is_collection: false,
            is_calendar: false,
            name: None,
            etag: None,
            ctag: None,
            principal: None,
            home: None,
        };
        for propstat in response
            .children()
            .filter(|n| n.has_tag_name((DAV, "propstat")))
        {
            let ok = propstat
                .children()
                .find(|n| n.has_tag_name((DAV, "status")))
                .and_then(|s| s.text())
                .is_none_or(|s| s.contains(" 200"));
            if !ok {
                continue;
            }
            for prop in propstat.descendants() {
                match (prop.tag_name().namespace(), prop.tag_name().name()) {
                    (Some(DAV), "resourcetype") => {
                        r.is_collection =
                            prop.children().any(|c| c.has_tag_name((DAV, "collection")));
                        r.is_calendar = prop
                            .children()
                            .any(|c| c.has_tag_name((CALDAV, "calendar")));
                    }
                    (Some(DAV), "displayname") => {
                        r.name = prop.text().map(|t| t.trim().to_string())
                    }
                    (Some(DAV), "getetag") => r.etag = prop.text().map(|t| t.trim().to_string()),
                    (Some(CS), "getctag") => r.ctag = prop.text().map(|t| t.trim().to_string()),
                    (Some(DAV), "current-user-principal") => r.principal = href_in(prop),
                    (Some(CALDAV), "calendar-home-set") => r.home = href_in(prop),
                    _ => {}
                }
            }
        }
        out.push(r);
    }
    Ok(out)
}
