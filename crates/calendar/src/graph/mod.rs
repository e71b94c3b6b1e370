//! Microsoft 365 calendars through Microsoft Graph v1.0 (REST), for accounts whose calendars
//! have no CalDAV: list calendars, list their events' ETags, read, create, update (conditional
//! on the ETag, `If-Match`) and delete. Events travel as iCalendar inside Cowork and as Graph
//! JSON on the wire (`event.rs`), so the sync (`sync.rs`) is the same as CalDAV's.
//!
//! The request and response shapes follow Graph's v1.0 reference
//! (<https://learn.microsoft.com/graph/api/resources/event>); the tests replay those shapes
//! from a loopback server (`tests/peers/graph_calendar.py`), as docs/accounts.md records.

pub(crate) mod event;
pub(crate) mod recurrence;

use crate::caldav::{DavError, RemoteCalendar, check_status, root_cause, same_origin_http};
use serde::Deserialize;
use serde_json::Value;
use url::Url;

pub struct Client {
    http: reqwest::Client,
    account: String,
    token: String,
    /// The service root (`https://graph.microsoft.com/v1.0/`): the token goes there only.
    base: Url,
}

/// One page of a Graph collection.
#[derive(Deserialize)]
struct Page<T> {
    value: Vec<T>,
    #[serde(rename = "@odata.nextLink")]
    next: Option<String>,
}

#[derive(Deserialize)]
struct CalendarEntry {
    id: String,
    #[serde(default)]
    name: String,
    #[serde(rename = "changeKey")]
    change_key: Option<String>,
}

#[derive(Deserialize)]
struct EventEntry {
    id: String,
    #[serde(rename = "@odata.etag")]
    etag: Option<String>,
}

/// A calendar with this many events' pages is more than anyone keeps: stop rather than loop on a
/// server that always says there is more.
const MAX_PAGES: usize = 500;

/// Bodies as plain text (the calendar stores text), times in UTC (placed in the event's own zone
/// on the way in).
const PREFER: &str = "outlook.body-content-type=\"text\", outlook.timezone=\"UTC\"";

impl Client {
    /// A client for the account whose service root is `base` (its configured URL).
    pub fn new(account: &str, token: String, base: &Url) -> Result<Self, DavError> {
        let mut base = base.clone();
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        Ok(Client {
            http: same_origin_http(&base.origin())?,
            account: account.into(),
            token,
            base,
        })
    }

    fn under_base(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("an http URL")
            .pop_if_empty()
            .extend(segments);
        url
    }

    async fn send(
        &self,
        method: reqwest::Method,
        url: &Url,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<reqwest::Response, DavError> {
        // Links in answers (the next page) are followed only on the account's own service.
        if url.origin() != self.base.origin() || !url.path().starts_with(self.base.path()) {
            return Err(DavError::Other(format!(
                "account {:?}: the server points to {url}, outside {}: refused",
                self.account, self.base
            )));
        }
        let mut request = self
            .http
            .request(method.clone(), url.clone())
            .bearer_auth(&self.token)
            .header("Prefer", PREFER);
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| DavError::Transient(format!("{method} {url}: {}", root_cause(&e))))?;
        // Graph answers a change key that no longer matches with 409 on some writes and 412
        // on others (`ErrorIrresolvableConflict`): either means the server's copy changed.
        if response.status() == reqwest::StatusCode::CONFLICT {
            return Err(DavError::Changed);
        }
        check_status(response, &method, url, &self.account)
    }

    async fn json<T: serde::de::DeserializeOwned>(
        &self,
        method: reqwest::Method,
        url: &Url,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<T, DavError> {
        let response = self.send(method.clone(), url, headers, body).await?;
        let text = response
            .text()
            .await
            .map_err(|e| DavError::Transient(format!("{method} {url}: {e}")))?;
        serde_json::from_str(&text).map_err(|e| {
            DavError::Other(format!("{method} {url}: not the answer Graph gives ({e})"))
        })
    }

    /// Every item of a collection, page after page.
    async fn all<T: serde::de::DeserializeOwned>(&self, first: Url) -> Result<Vec<T>, DavError> {
        let mut items = Vec::new();
        let mut next = Some(first);
        for _ in 0..MAX_PAGES {
            let Some(url) = next.take() else {
                return Ok(items);
            };
            let page: Page<T> = self.json(reqwest::Method::GET, &url, &[], None).await?;
            items.extend(page.value);
            next = page
                .next
                .map(|n| Url::parse(&n).map_err(|e| DavError::Other(format!("next page {n}: {e}"))))
                .transpose()?;
        }
        Err(DavError::Other(format!(
            "account {:?}: more than {MAX_PAGES} pages: stopped",
            self.account
        )))
    }

    /// The person's calendars (`GET /me/calendars`).
    pub async fn discover(&self) -> Result<Vec<RemoteCalendar>, DavError> {
        let mut url = self.under_base(&["me", "calendars"]);
        url.query_pairs_mut()
            .append_pair("$select", "id,name,changeKey");
        let calendars: Vec<CalendarEntry> = self.all(url).await?;
        Ok(calendars
            .into_iter()
            .filter(|c| usable_id(&c.id))
            .map(|c| RemoteCalendar {
                url: self.under_base(&["me", "calendars", &c.id]),
                name: c.name,
                ctag: c.change_key,
            })
            .collect())
    }

    fn event_url(&self, id: &str) -> Url {
        self.under_base(&["me", "events", id])
    }

    /// `href → etag` of a calendar's single events and series masters.
    pub async fn etags(&self, calendar: &Url) -> Result<Vec<(Url, String)>, DavError> {
        let mut url = calendar.clone();
        url.path_segments_mut().expect("an http URL").push("events");
        url.query_pairs_mut()
            .append_pair("$select", "id")
            .append_pair("$top", "100");
        let events: Vec<EventEntry> = self.all(url).await?;
        Ok(events
            .into_iter()
            .filter(|e| usable_id(&e.id))
            .filter_map(|e| Some((self.event_url(&e.id), e.etag?)))
            .collect())
    }

    fn read_event(
        &self,
        graph: event::GraphEvent,
    ) -> Result<(Url, String, Option<String>), DavError> {
        if !usable_id(&graph.id) {
            return Err(DavError::Other(format!("an event id {:?}", graph.id)));
        }
        let text = event::to_ics(&graph)
            .map_err(|e| DavError::Other(format!("event {}: {e}", graph.id)))?;
        Ok((self.event_url(&graph.id), text, graph.etag))
    }

    pub async fn get(&self, href: &Url) -> Result<(String, Option<String>), DavError> {
        let graph = self.json(reqwest::Method::GET, href, &[], None).await?;
        let (_, text, etag) = self.read_event(graph)?;
        Ok((text, etag))
    }

    /// Creates an event in `calendar`; Graph names it: its URL and ETag come back. Its UID is
    /// the request's `transactionId`, Graph's guard against a create sent twice (an answer lost
    /// on the way, the create sent again at the next sync): the same event comes back.
    pub async fn create(
        &self,
        calendar: &Url,
        ics: &str,
    ) -> Result<(Url, Option<String>), DavError> {
        let mut body = event::to_graph(ics).map_err(not_for_graph)?;
        if let Some(uid) = event::uid_of(ics) {
            body["transactionId"] = Value::String(uid);
        }
        let mut url = calendar.clone();
        url.path_segments_mut().expect("an http URL").push("events");
        let created = self
            .json(reqwest::Method::POST, &url, &[], Some(body))
            .await?;
        let (href, _, etag) = self.read_event(created)?;
        Ok((href, etag))
    }

    /// Changes what changed of an event ([`event::changed_fields`]), only if it is still at
    /// `etag`.
    pub async fn update(
        &self,
        href: &Url,
        ics: &str,
        etag: Option<&str>,
    ) -> Result<Option<String>, DavError> {
        let ours = event::to_graph(ics).map_err(not_for_graph)?;
        let current: event::GraphEvent = self.json(reqwest::Method::GET, href, &[], None).await?;
        if etag.is_some() && current.etag.as_deref() != etag {
            return Err(DavError::Changed);
        }
        let theirs = event::to_ics(&current).and_then(|text| event::to_graph(&text));
        let body = match theirs {
            Ok(theirs) => event::changed_fields(ours, &theirs),
            Err(_) => ours,
        };
        if body.as_object().is_some_and(|fields| fields.is_empty()) {
            return Ok(current.etag);
        }
        let condition: Vec<(&str, &str)> = etag.map(|e| ("If-Match", e)).into_iter().collect();
        let updated = self
            .json(reqwest::Method::PATCH, href, &condition, Some(body))
            .await?;
        Ok(self.read_event(updated)?.2)
    }

    pub async fn delete(&self, href: &Url, etag: Option<&str>) -> Result<(), DavError> {
        let condition: Vec<(&str, &str)> = etag.map(|e| ("If-Match", e)).into_iter().collect();
        self.send(reqwest::Method::DELETE, href, &condition, None)
            .await
            .map(|_| ())
    }
}

/// An id from the server as one path segment: `.`, `..` and control characters (which a URL
/// drops, turning the id into a dot segment) would name another resource than the id's.
fn usable_id(id: &str) -> bool {
    !matches!(id, "" | "." | "..") && !id.chars().any(char::is_control)
}

fn not_for_graph(why: String) -> DavError {
    DavError::Other(format!("Microsoft 365 cannot hold {why}"))
}
