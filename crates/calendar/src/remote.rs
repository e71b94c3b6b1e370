//! The server behind a synced calendar: CalDAV (`caldav.rs`) or Microsoft Graph (`graph/`). The
//! sync speaks to either through this one face; where the two differ (Graph names new events
//! itself, CalDAV lets the client choose where they go) it is said here.

use crate::caldav::{self, DavError, RemoteCalendar};
use crate::graph;
use url::Url;

pub enum Remote {
    Dav(caldav::Client),
    Graph(graph::Client),
}

/// Where a changed event goes.
pub enum Target<'a> {
    /// Where the server keeps it now.
    Existing(&'a Url),
    /// Not on the server (yet, or any more): into `calendar`. A CalDAV server takes it at `at`
    /// when given (where it was), else at a name made from its UID; Graph names it itself.
    New {
        calendar: &'a Url,
        uid: &'a str,
        at: Option<&'a Url>,
    },
}

impl Remote {
    /// The calendars under the account's URL.
    pub async fn discover(&self, url: &Url) -> Result<Vec<RemoteCalendar>, DavError> {
        match self {
            Remote::Dav(c) => c.discover(url).await,
            Remote::Graph(g) => g.discover().await,
        }
    }

    pub async fn etags(&self, calendar: &Url) -> Result<Vec<(Url, String)>, DavError> {
        match self {
            Remote::Dav(c) => c.etags(calendar).await,
            Remote::Graph(g) => g.etags(calendar).await,
        }
    }

    pub async fn get(&self, href: &Url) -> Result<(String, Option<String>), DavError> {
        match self {
            Remote::Dav(c) => c.get(href).await,
            Remote::Graph(g) => g.get(href).await,
        }
    }

    /// Stores `ics` at `target` (an existing one only if still at `etag`); says where it is now
    /// and its new ETag when the server tells it.
    pub async fn put(
        &self,
        target: Target<'_>,
        ics: &str,
        etag: Option<&str>,
    ) -> Result<(Url, Option<String>), DavError> {
        match (self, target) {
            (Remote::Dav(c), Target::Existing(href)) => {
                Ok((href.clone(), c.put(href, ics, etag).await?))
            }
            (Remote::Dav(c), Target::New { calendar, uid, at }) => {
                let href = at.cloned().unwrap_or_else(|| href_for(calendar, uid));
                let etag = c.put(&href, ics, None).await?;
                Ok((href, etag))
            }
            (Remote::Graph(g), Target::Existing(href)) => {
                Ok((href.clone(), g.update(href, ics, etag).await?))
            }
            (Remote::Graph(g), Target::New { calendar, .. }) => g.create(calendar, ics).await,
        }
    }

    /// The short, stable name of a calendar within its account (`<account>/<this>`): the last
    /// part of a CalDAV calendar's path; for Graph, whose calendar ids are ~150 opaque
    /// characters, a name-based UUID of the id, shortened.
    pub fn calendar_slug(&self, calendar: &RemoteCalendar) -> String {
        match self {
            Remote::Dav(_) => caldav::last_segment(&calendar.url),
            Remote::Graph(_) => {
                let id = uuid::Uuid::new_v5(
                    &uuid::Uuid::NAMESPACE_URL,
                    calendar.url.as_str().as_bytes(),
                );
                format!("m365-{}", &id.simple().to_string()[..10])
            }
        }
    }

    /// Where a new event goes before the server says, when the client chooses (CalDAV).
    pub fn new_href(&self, calendar: &Url, uid: &str) -> Option<Url> {
        match self {
            Remote::Dav(_) => Some(href_for(calendar, uid)),
            Remote::Graph(_) => None,
        }
    }

    pub async fn delete(&self, href: &Url, etag: Option<&str>) -> Result<(), DavError> {
        match self {
            Remote::Dav(c) => c.delete(href, etag).await,
            Remote::Graph(g) => g.delete(href, etag).await,
        }
    }
}

/// A CalDAV resource name for a new event: its UID, with what a path cannot hold replaced.
fn href_for(url: &Url, uid: &str) -> Url {
    let name: String = uid
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let base = if url.path().ends_with('/') {
        url.clone()
    } else {
        Url::parse(&format!("{url}/")).unwrap_or_else(|_| url.clone())
    };
    base.join(&format!("{name}.ics")).unwrap_or(base)
}
