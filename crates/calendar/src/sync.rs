//! Two-way sync of one account (CalDAV or Microsoft Graph, `remote.rs`): discover its calendars, push local changes (conditional on
//! the ETag we last saw), then pull what changed on the server. Every object is committed on its
//! own, so an error mid-sync (a 500, a dropped connection) loses nothing: what was done stays
//! done, what was not stays queued (`dirty`) for the next sync.
//!
//! Conflicts never lose a version: when both sides changed, the calendar shows the server's
//! version and the local one is kept as a separate event "… (conflict copy)"; when one side
//! deleted and the other changed, the changed version wins. Each is recorded in
//! `calendar_conflicts` and reported.

use crate::caldav::DavError;
use crate::db::{self, Object};
use crate::remote::{Remote, Target};
use crate::{Db, ics};
use icalendar::Component;
use rusqlite::params;
use serde::Serialize;
use url::Url;

#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct SyncReport {
    pub calendar: String,
    pub pushed: usize,
    pub pulled: usize,
    pub removed_here: usize,
    pub removed_there: usize,
    /// What conflicted and how it was resolved.
    pub conflicts: Vec<String>,
    /// Objects skipped: the server's data was unreadable, or the server refused ours.
    pub skipped: Vec<String>,
    /// Set when the sync stopped early; queued changes stay queued and are retried.
    pub error: Option<String>,
}

fn db_err(e: rusqlite::Error) -> String {
    format!("database error: {e}")
}

/// Finds the account's calendars and records them (`<account>/<collection>`).
pub async fn discover(
    db: &Db,
    client: &Remote,
    account: &str,
    url: &Url,
) -> Result<Vec<(String, Url)>, DavError> {
    let remote = client.discover(url).await?;
    let conn = db.lock().unwrap();
    let mut out = Vec::new();
    for cal in remote {
        let slug = client.calendar_slug(&cal);
        let id = format!("{account}/{slug}");
        conn.execute(
            "INSERT INTO calendars (id, name, account, url, ctag) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(id) DO UPDATE SET name = excluded.name, url = excluded.url",
            params![id, cal.name, account, cal.url.as_str(), cal.ctag],
        )
        .map_err(|e| DavError::Other(db_err(e)))?;
        out.push((id, cal.url));
    }
    Ok(out)
}

pub async fn sync_calendar(db: &Db, client: &Remote, calendar: &str, url: &Url) -> SyncReport {
    let mut report = SyncReport {
        calendar: calendar.into(),
        ..Default::default()
    };
    let result = async {
        // Two passes: conflict copies made in the first are pushed in the second.
        let mut offered = std::collections::HashSet::new();
        for _ in 0..2 {
            let dirty = db::objects(&db.lock().unwrap(), calendar, true).map_err(db_err)?;
            // An object the server refused this time stays queued; it is not offered twice.
            let fresh: Vec<_> = dirty
                .into_iter()
                .filter(|o| offered.insert(o.uid.clone()))
                .collect();
            if fresh.is_empty() {
                break;
            }
            for object in fresh {
                push(db, client, url, object, &mut report).await?;
            }
        }
        pull(db, client, calendar, url, &mut report).await
    }
    .await;
    let error = result.err();
    let conn = db.lock().unwrap();
    let _ = conn.execute(
        "UPDATE calendars SET last_sync = CASE WHEN ?2 IS NULL THEN strftime('%Y-%m-%dT%H:%M:%SZ','now') ELSE last_sync END, last_error = ?2 WHERE id = ?1",
        params![calendar, error],
    );
    report.error = error;
    report
}

/// Stores an object after computing its index; `Err` names what is wrong with the text.
fn store(db: &Db, object: &Object) -> Result<(), String> {
    let rows = if object.deleted {
        Vec::new()
    } else {
        ics::index(&ics::parse(&object.ics)?)?.1
    };
    let mut conn = db.lock().unwrap();
    let tx = conn.transaction().map_err(db_err)?;
    db::put_object(&tx, object, &rows).map_err(db_err)?;
    tx.commit().map_err(db_err)
}

fn conflict(
    db: &Db,
    object: &Object,
    kept: &str,
    copy: Option<&str>,
    detail: String,
    report: &mut SyncReport,
) -> Result<(), String> {
    let mut conn = db.lock().unwrap();
    let tx = conn.transaction().map_err(db_err)?;
    db::record_conflict(&tx, &object.calendar, &object.uid, kept, copy, &detail).map_err(db_err)?;
    tx.commit().map_err(db_err)?;
    tracing::warn!(calendar = %object.calendar, uid = %object.uid, "calendar sync conflict: {detail}");
    report.conflicts.push(detail);
    Ok(())
}

async fn push(
    db: &Db,
    client: &Remote,
    url: &Url,
    object: Object,
    report: &mut SyncReport,
) -> Result<(), String> {
    let existing = match &object.href {
        Some(h) => Some(Url::parse(h).map_err(|e| format!("stored href {h:?}: {e}"))?),
        None => None,
    };
    if object.deleted {
        return match existing {
            Some(href) => push_deletion(db, client, &href, &object, report).await,
            // Never reached the server: nothing to delete there.
            None => remove(db, &object.calendar, &object.uid),
        };
    }
    let (href, etag, sent) =
        match push_change(db, client, url, existing.as_ref(), &object, report).await? {
            Put::Stored { href, etag, sent } => (href, etag, sent),
            Put::Settled => return Ok(()),
        };
    let etag = match etag {
        Some(etag) => Some(etag),
        // Servers may omit the ETag when they rewrote the data: read it back.
        None => client.get(&href).await.map_err(|e| e.to_string())?.1,
    };
    store(
        db,
        &Object {
            href: Some(href.to_string()),
            etag,
            dirty: false,
            ics: sent.unwrap_or(object.ics),
            ..object
        },
    )?;
    report.pushed += 1;
    Ok(())
}

/// What became of a changed object put to the server.
enum Put {
    /// The server holds it now, there, with this ETag when it said one; `sent` is what was sent
    /// when it is not the object's text.
    Stored {
        href: Url,
        etag: Option<String>,
        sent: Option<String>,
    },
    /// It is not there, and rightly so for now (refused, or the server's version won).
    Settled,
}

/// A local deletion, sent (conditional on the ETag we last saw).
async fn push_deletion(
    db: &Db,
    client: &Remote,
    href: &Url,
    object: &Object,
    report: &mut SyncReport,
) -> Result<(), String> {
    match client.delete(href, object.etag.as_deref()).await {
        Ok(()) | Err(DavError::NotFound) => {
            remove(db, &object.calendar, &object.uid)?;
            report.removed_there += 1;
            Ok(())
        }
        Err(DavError::Changed) => {
            keep_servers_version(db, client, href, object).await?;
            let title = title_of(&object.ics);
            conflict(
                db,
                object,
                "server",
                None,
                format!(
                    "{title:?} was deleted here but changed on the server: kept the server's version"
                ),
                report,
            )
        }
        Err(e) => Err(e.to_string()),
    }
}

/// A local change, put to the server (conditional on the ETag we last saw, unless it is new).
async fn push_change(
    db: &Db,
    client: &Remote,
    calendar: &Url,
    existing: Option<&Url>,
    object: &Object,
    report: &mut SyncReport,
) -> Result<Put, String> {
    let uid = object.uid.as_str();
    let attempt = match existing {
        Some(href) => {
            client
                .put(Target::Existing(href), &object.ics, object.etag.as_deref())
                .await
        }
        None => {
            let new = Target::New {
                calendar,
                uid,
                at: None,
            };
            client.put(new, &object.ics, None).await
        }
    };
    match attempt {
        Ok((href, etag)) => Ok(Put::Stored {
            href,
            etag,
            sent: None,
        }),
        // The server refuses this object for good (HTTP 400/415…: data it cannot store, like
        // Radicale with RDATE periods, or a rule Microsoft 365 cannot hold): say so and go on
        // with the others — one such event must not hold every later change back. It stays
        // here, queued, and is offered again.
        Err(DavError::Other(why)) => {
            report.skipped.push(format!(
                "{:?} ({}): {why} — kept here, not on the server",
                title_of(&object.ics),
                object.uid
            ));
            Ok(Put::Settled)
        }
        Err(DavError::Changed) => {
            // A new one refused as existing (CalDAV's If-None-Match) is there already.
            let href = existing
                .cloned()
                .or_else(|| client.new_href(calendar, uid))
                .ok_or("the server said a new event had changed")?;
            keep_both_changes(db, client, &href, object, report).await?;
            Ok(Put::Settled)
        }
        Err(DavError::NotFound) => recreate(db, client, calendar, existing, object, report).await,
        Err(e) => Err(e.to_string()),
    }
}

/// Deleted there, changed here: the change wins, re-created on the server — with nobody
/// invited: a meeting its organizer removed must not come back as one this person organizes,
/// mailing everyone.
async fn recreate(
    db: &Db,
    client: &Remote,
    calendar: &Url,
    existing: Option<&Url>,
    object: &Object,
    report: &mut SyncReport,
) -> Result<Put, String> {
    let uid = object.uid.as_str();
    let new = Target::New {
        calendar,
        uid,
        at: existing,
    };
    let sent = without_invitations(&object.ics)?;
    let (href, etag) = client
        .put(new, &sent, None)
        .await
        .map_err(|e| e.to_string())?;
    let title = title_of(&object.ics);
    let uninvited = if sent == object.ics {
        ""
    } else {
        " (without its attendees: nobody was invited again)"
    };
    conflict(
        db,
        object,
        "local",
        None,
        format!("{title:?} was deleted on the server but changed here: kept yours{uninvited}"),
        report,
    )?;
    Ok(Put::Stored {
        href,
        etag,
        sent: Some(sent),
    })
}

/// Both sides changed: the server's version stays, ours becomes a copy.
async fn keep_both_changes(
    db: &Db,
    client: &Remote,
    href: &Url,
    object: &Object,
    report: &mut SyncReport,
) -> Result<(), String> {
    keep_servers_version(db, client, href, object).await?;
    let copy_uid = format!(
        "{}-conflict-{}",
        object.uid,
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    let copy_ics = as_copy(&object.ics, &copy_uid)?;
    store(
        db,
        &Object {
            uid: copy_uid.clone(),
            ics: copy_ics,
            href: None,
            etag: None,
            dirty: true,
            deleted: false,
            calendar: object.calendar.clone(),
        },
    )?;
    let title = title_of(&object.ics);
    conflict(
        db,
        object,
        "server",
        Some(&copy_uid),
        format!(
            "{title:?} was changed here and on the server: kept the server's version, yours is \"{title} (conflict copy)\""
        ),
        report,
    )
}

/// Removes an object and its index rows here.
fn remove(db: &Db, calendar: &str, uid: &str) -> Result<(), String> {
    let mut conn = db.lock().unwrap();
    let tx = conn.transaction().map_err(db_err)?;
    db::remove_object(&tx, calendar, uid).map_err(db_err)?;
    tx.commit().map_err(db_err)
}

async fn pull(
    db: &Db,
    client: &Remote,
    calendar: &str,
    url: &Url,
    report: &mut SyncReport,
) -> Result<(), String> {
    let remote = client.etags(url).await.map_err(|e| e.to_string())?;
    let local = db::objects(&db.lock().unwrap(), calendar, false).map_err(db_err)?;
    let by_href: std::collections::HashMap<&str, &Object> = local
        .iter()
        .filter_map(|o| Some((o.href.as_deref()?, o)))
        .collect();
    let remote_hrefs: std::collections::HashSet<String> =
        remote.iter().map(|(h, _)| h.to_string()).collect();
    for (href, etag) in &remote {
        let known = by_href.get(href.as_str());
        if known.is_some_and(|o| o.dirty || o.etag.as_deref() == Some(etag.as_str())) {
            continue;
        }
        let (text, fetched_etag) = client.get(href).await.map_err(|e| e.to_string())?;
        let parsed = ics::parse(&text).and_then(|cal| ics::index(&cal));
        let uid = match parsed {
            Ok((uid, _)) => uid,
            Err(e) => {
                report.skipped.push(format!("{href}: {e}"));
                continue;
            }
        };
        // The server's resource is the event's identity: one that carries another UID than
        // ours (Graph gives the events it creates its own) keeps ours, which tools were told.
        let (text, uid) = match known.filter(|o| o.uid != uid) {
            Some(ours) => (with_uid(&text, &ours.uid)?, ours.uid.clone()),
            None => (text, uid),
        };
        if known.is_none()
            && db::object(&db.lock().unwrap(), calendar, &uid)
                .map_err(db_err)?
                .is_some_and(|o| o.dirty)
        {
            continue; // a local change of the same UID is pushed (and reconciled) next sync
        }
        let object = Object {
            calendar: calendar.into(),
            uid,
            ics: text,
            href: Some(href.to_string()),
            etag: fetched_etag.or_else(|| Some(etag.clone())),
            dirty: false,
            deleted: false,
        };
        store(db, &object)?;
        report.pulled += 1;
    }
    for object in &local {
        if let Some(href) = &object.href
            && !object.dirty
            && !remote_hrefs.contains(href)
        {
            remove(db, calendar, &object.uid)?;
            report.removed_here += 1;
        }
    }
    Ok(())
}

/// Replaces our copy of `object` with the server's current version (a conflict it wins).
async fn keep_servers_version(
    db: &Db,
    client: &Remote,
    href: &Url,
    object: &Object,
) -> Result<(), String> {
    let (text, etag) = client.get(href).await.map_err(|e| e.to_string())?;
    store(
        db,
        &Object {
            ics: with_uid(&text, &object.uid)?,
            href: Some(href.to_string()),
            etag,
            dirty: false,
            deleted: false,
            ..object.clone()
        },
    )
}

fn title_of(ics_text: &str) -> String {
    ics::parse(ics_text)
        .ok()
        .and_then(|c| ics::events(&c).find_map(|e| e.get_summary().map(String::from)))
        .unwrap_or_else(|| "(untitled)".into())
}

/// `ics_text` with `edit` applied to each of its events; the text unchanged when no edit said
/// it changed something.
fn edit_events(
    ics_text: &str,
    mut edit: impl FnMut(&mut icalendar::Event) -> bool,
) -> Result<String, String> {
    let mut cal = ics::parse(ics_text)?;
    let mut changed = false;
    for component in cal.components.iter_mut() {
        if let icalendar::CalendarComponent::Event(event) = component {
            changed |= edit(event);
        }
    }
    Ok(if changed {
        ics::to_text(&cal)
    } else {
        ics_text.to_string()
    })
}

/// The same events under `uid`.
fn with_uid(ics_text: &str, uid: &str) -> Result<String, String> {
    edit_events(ics_text, |event| {
        let other = event.get_uid() != Some(uid);
        if other {
            event.uid(uid);
        }
        other
    })
}

/// The same events with nobody invited (no ATTENDEE, no ORGANIZER, in any letter case). What
/// the sync creates on a server by itself — a conflict copy, an event the server deleted —
/// must not send invitations the person never saw: creating an event with attendees mails
/// them (Microsoft Graph always; a CalDAV server with scheduling too).
fn without_invitations(ics_text: &str) -> Result<String, String> {
    edit_events(ics_text, |event| {
        let keys: Vec<String> = (event.properties().keys())
            .chain(event.multi_properties().keys())
            .filter(|k| k.eq_ignore_ascii_case("ATTENDEE") || k.eq_ignore_ascii_case("ORGANIZER"))
            .cloned()
            .collect();
        for key in &keys {
            event.remove_property(key);
            event.remove_multi_property(key);
        }
        !keys.is_empty()
    })
}

/// The same events under a new UID, titled as a conflict copy, inviting nobody.
fn as_copy(ics_text: &str, uid: &str) -> Result<String, String> {
    let renamed = edit_events(ics_text, |event| {
        let title = event.get_summary().unwrap_or("(untitled)").to_string();
        event.uid(uid);
        event.summary(&format!("{title} (conflict copy)"));
        true
    })?;
    without_invitations(&renamed)
}
