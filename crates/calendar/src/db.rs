//! The calendar tables: objects (iCalendar text + sync state), their derived index, calendars and
//! conflicts. Every write of an object rewrites its index rows in the same transaction, so a
//! crash never leaves the index describing other text than the object holds.

use crate::ics::{self, IndexRow};
use cowork_store::{all_rows, each_row, one_row};
use rusqlite::{Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CalendarInfo {
    pub id: String,
    pub name: String,
    /// The CalDAV account, when the calendar mirrors a server.
    pub account: Option<String>,
    pub last_sync: Option<String>,
    pub last_error: Option<String>,
}

pub fn calendars(conn: &Connection) -> rusqlite::Result<Vec<CalendarInfo>> {
    all_rows(
        conn,
        "SELECT id, name, account, last_sync, last_error FROM calendars ORDER BY account IS NOT NULL, id",
        [],
    )
}

/// A stored object: its text and sync state.
#[derive(Clone, Debug, Deserialize)]
pub struct Object {
    pub calendar: String,
    pub uid: String,
    pub ics: String,
    pub href: Option<String>,
    pub etag: Option<String>,
    pub dirty: bool,
    pub deleted: bool,
}

const OBJECT_COLUMNS: &str = "calendar, uid, ics, href, etag, dirty, deleted";

pub fn object(conn: &Connection, calendar: &str, uid: &str) -> rusqlite::Result<Option<Object>> {
    one_row(
        conn,
        &format!("SELECT {OBJECT_COLUMNS} FROM calendar_objects WHERE calendar = ?1 AND uid = ?2"),
        params![calendar, uid],
    )
}

/// Objects of a calendar; `dirty_only` for the push queue.
pub fn objects(
    conn: &Connection,
    calendar: &str,
    dirty_only: bool,
) -> rusqlite::Result<Vec<Object>> {
    all_rows(
        conn,
        &format!(
            "SELECT {OBJECT_COLUMNS} FROM calendar_objects WHERE calendar = ?1 AND (dirty = 1 OR ?2 = 0) ORDER BY uid"
        ),
        params![calendar, dirty_only],
    )
}

/// Stores an object and its index rows. `ics_text` must already have been validated by
/// [`ics::index`], which produced `rows`.
pub fn put_object(
    tx: &Transaction<'_>,
    object: &Object,
    rows: &[IndexRow],
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO calendar_objects (calendar, uid, ics, href, etag, dirty, deleted, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, strftime('%Y-%m-%dT%H:%M:%SZ','now'))
         ON CONFLICT(calendar, uid) DO UPDATE SET ics = excluded.ics, href = excluded.href, etag = excluded.etag,
           dirty = excluded.dirty, deleted = excluded.deleted, updated_at = excluded.updated_at",
        params![object.calendar, object.uid, object.ics, object.href, object.etag, object.dirty, object.deleted],
    )?;
    tx.execute(
        "DELETE FROM calendar_index WHERE calendar = ?1 AND uid = ?2",
        params![object.calendar, object.uid],
    )?;
    if object.deleted {
        return Ok(());
    }
    let mut insert = tx.prepare_cached(
        "INSERT INTO calendar_index (calendar, uid, recurrence_id, start_utc, end_utc, series_end, rrule, all_day, summary, location, busy, floating, alarms, cancelled)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?;
    for row in rows {
        insert.execute(params![
            object.calendar,
            object.uid,
            row.recurrence_id,
            row.start,
            row.end,
            row.series_end,
            row.rrule,
            row.all_day,
            row.summary,
            row.location,
            row.busy,
            row.floating,
            row.alarms,
            row.cancelled
        ])?;
    }
    Ok(())
}

/// Rewrites every stored object's text valid and its index rows from it, in one transaction,
/// when a migration asked for it (`calendar_rebuild`). An object that no longer indexes keeps
/// its text and gets no rows (it is logged), so nothing is lost.
pub fn rebuild_if_asked(conn: &mut Connection) -> rusqlite::Result<usize> {
    let asked: i64 = conn.query_row("SELECT count(*) FROM calendar_rebuild", [], |r| r.get(0))?;
    if asked == 0 {
        return Ok(0);
    }
    let tx = conn.transaction()?;
    let stored: Vec<Object> = all_rows(
        &tx,
        &format!("SELECT {OBJECT_COLUMNS} FROM calendar_objects"),
        [],
    )?;
    for mut object in stored {
        object.ics = ics::clean_text(&object.ics);
        let rows = match ics::parse(&object.ics).and_then(|c| ics::index(&c)) {
            Ok((_, rows)) => rows,
            Err(e) => {
                tracing::warn!(calendar = %object.calendar, uid = %object.uid, "calendar: not indexed after the rebuild: {e}");
                Vec::new()
            }
        };
        put_object(&tx, &object, &rows)?;
    }
    tx.execute("DELETE FROM calendar_rebuild", [])?;
    tx.commit()?;
    Ok(asked as usize)
}

pub fn remove_object(tx: &Transaction<'_>, calendar: &str, uid: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM calendar_objects WHERE calendar = ?1 AND uid = ?2",
        params![calendar, uid],
    )?;
    tx.execute(
        "DELETE FROM calendar_index WHERE calendar = ?1 AND uid = ?2",
        params![calendar, uid],
    )?;
    Ok(())
}

/// One instance of an event in a range.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Occurrence {
    pub calendar: String,
    pub uid: String,
    pub title: String,
    pub location: String,
    /// Instants in the zone the range was asked in (a floating event placed there).
    #[serde(skip)]
    pub start_utc: i64,
    #[serde(skip)]
    pub end_utc: i64,
    pub all_day: bool,
    /// Part of a recurring series.
    pub recurring: bool,
    /// Which instance of the series this is (its original start), for updates and deletes of
    /// one instance: RFC 3339 for a series in a zone, a local date-time or a date for a
    /// floating or all-day one (it has no instant until a zone is named).
    pub instance: Option<String>,
    #[serde(skip)]
    pub busy: bool,
    /// Called off (STATUS:CANCELLED): shown so, never busy.
    #[serde(skip)]
    pub cancelled: bool,
    /// Its reminders' triggers (JSON of [`ics::AlarmTrigger`]s).
    #[serde(skip)]
    pub alarms: Option<String>,
}

/// An instance's `instance` text from its index value.
fn instance_text(value: i64, floating: bool, all_day: bool) -> String {
    let utc = ics::utc_of(value);
    match (floating, all_day) {
        (false, _) => utc.to_rfc3339(),
        (true, true) => utc.format("%Y-%m-%d").to_string(),
        (true, false) => utc.format("%Y-%m-%dT%H:%M:%S").to_string(),
    }
}

/// Every instance overlapping `[from, to)` in the given calendars (all when `None`), sorted by
/// start. Recurring masters are expanded; instances replaced by an override are left out (the
/// override is listed in their place). Dates and floating times are placed in `zone`: an
/// all-day event covers its dates there, a floating 08:30 is 08:30 there.
pub fn occurrences(
    conn: &Connection,
    calendars: Option<&[String]>,
    from: i64,
    to: i64,
    cap: usize,
    zone: crate::zone::Zone,
) -> Result<Found, String> {
    let range = Range {
        calendars,
        // Instants are compared with the range; floating rows with its wall-clock reading here.
        windows: [
            Window {
                floating: false,
                from,
                to,
            },
            Window {
                floating: true,
                from: zone.wall(from),
                to: zone.wall(to),
            },
        ],
        zone,
    };
    let mut found = Found {
        occurrences: single_occurrences(conn, &range)?,
        problems: Vec::new(),
    };
    let overridden = overridden_instances(conn, &range)?;
    series_occurrences(conn, &range, &overridden, cap, &mut found)?;
    let out = &mut found.occurrences;
    out.sort_by(|a, b| (a.start_utc, &a.title).cmp(&(b.start_utc, &b.title)));
    out.truncate(cap);
    Ok(found)
}

/// What a range query found: the instances, and the series it could not expand (each named
/// with why), so that one bad series never hides the rest.
#[derive(Debug, Default)]
pub struct Found {
    pub occurrences: Vec<Occurrence>,
    pub problems: Vec<String>,
}

fn sql_error(e: rusqlite::Error) -> String {
    format!("database error: {e}")
}

/// What [`occurrences`] asks for.
struct Range<'a> {
    calendars: Option<&'a [String]>,
    /// The range for rows in instants, then for floating rows.
    windows: [Window; 2],
    zone: crate::zone::Zone,
}

/// The range as one kind of index row (floating or not) reads it.
#[derive(Clone, Copy)]
struct Window {
    floating: bool,
    from: i64,
    to: i64,
}

/// A range query's calendar filter, on parameter 4: every calendar when it is NULL, else those
/// of its JSON list (filtered in SQL, so a query reads only the calendars it asks for).
const IN_CALENDARS: &str = "(?4 IS NULL OR calendar IN (SELECT value FROM json_each(?4)))";

impl Range<'_> {
    /// The calendars asked for, as the JSON list [`IN_CALENDARS`] reads.
    fn calendars_json(&self) -> Option<String> {
        self.calendars
            .map(|list| serde_json::to_string(list).expect("names serialize"))
    }

    /// An index value as an instant: a floating one placed in the zone.
    fn place(&self, value: i64, floating: bool) -> i64 {
        if floating {
            self.zone.instant_of_wall(value)
        } else {
            value
        }
    }
}

/// The columns an [`Indexed`] is read from, first in a range query.
const INDEXED_COLUMNS: &str =
    "calendar, uid, start_utc, end_utc, all_day, summary, location, busy, cancelled, alarms";

/// An event's index row as the range queries read it.
#[derive(Deserialize)]
struct Indexed {
    calendar: String,
    uid: String,
    #[serde(rename = "start_utc")]
    start: i64,
    #[serde(rename = "end_utc")]
    end: i64,
    all_day: bool,
    #[serde(rename = "summary")]
    title: String,
    location: String,
    busy: bool,
    cancelled: bool,
    alarms: Option<String>,
    /// An override's: the original start of the instance it replaces.
    #[serde(default)]
    recurrence_id: Option<i64>,
    /// A series': its recurrence rule.
    #[serde(default)]
    rrule: Option<String>,
}

impl Indexed {
    /// Its instance from `start` to `end` (index values in the window's form); `instance`, the
    /// original start of a recurring one.
    fn occurrence(
        &self,
        range: &Range<'_>,
        floating: bool,
        (start, end): (i64, i64),
        instance: Option<i64>,
    ) -> Occurrence {
        Occurrence {
            calendar: self.calendar.clone(),
            uid: self.uid.clone(),
            title: self.title.clone(),
            location: self.location.clone(),
            start_utc: range.place(start, floating),
            end_utc: range.place(end, floating),
            all_day: self.all_day,
            recurring: instance.is_some(),
            instance: instance.map(|id| instance_text(id, floating, self.all_day)),
            busy: self.busy,
            cancelled: self.cancelled,
            alarms: self.alarms.clone(),
        }
    }
}

/// Events that do not repeat, and overrides of one instance of a series.
fn single_occurrences(conn: &Connection, range: &Range<'_>) -> Result<Vec<Occurrence>, String> {
    let mut out = Vec::new();
    let mut singles = conn
        .prepare_cached(&format!(
            "SELECT {INDEXED_COLUMNS}, recurrence_id FROM calendar_index
             WHERE rrule IS NULL AND floating = ?3 AND start_utc < ?2 AND (end_utc > ?1 OR start_utc >= ?1)
               AND {IN_CALENDARS}",
        ))
        .map_err(sql_error)?;
    for Window { floating, from, to } in range.windows {
        let rows = singles
            .query(params![from, to, floating, range.calendars_json()])
            .map_err(sql_error)?;
        for row in each_row::<Indexed>(rows) {
            let event = row.map_err(sql_error)?;
            let span = (event.start, event.end);
            out.push(event.occurrence(range, floating, span, event.recurrence_id));
        }
    }
    Ok(out)
}

/// The instances an override replaces: (calendar, uid, original start).
fn overridden_instances(
    conn: &Connection,
    range: &Range<'_>,
) -> Result<HashSet<(String, String, i64)>, String> {
    let mut overridden = HashSet::new();
    // Every override hides its original instance, even one moved out of the range (overrides
    // are rare: all of the asked calendars' are read). Both sides are in the series' own form.
    let mut moved = conn
        .prepare_cached(&format!(
            "SELECT calendar, uid, recurrence_id FROM calendar_index WHERE recurrence_id IS NOT NULL AND {IN_CALENDARS}"
        ))
        .map_err(sql_error)?;
    let calendars = range.calendars_json();
    for row in moved
        .query_map(
            params![None::<i64>, None::<i64>, None::<i64>, calendars],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(sql_error)?
    {
        overridden.insert(row.map_err(sql_error)?);
    }
    Ok(overridden)
}

/// The instances of recurring series in the range (at most `cap` of each), but those an
/// override replaces.
fn series_occurrences(
    conn: &Connection,
    range: &Range<'_>,
    overridden: &HashSet<(String, String, i64)>,
    cap: usize,
    found: &mut Found,
) -> Result<(), String> {
    let mut masters = conn
        .prepare_cached(&format!(
            "SELECT {INDEXED_COLUMNS}, rrule FROM calendar_index
             WHERE rrule IS NOT NULL AND floating = ?3 AND start_utc < ?2 AND (series_end IS NULL OR series_end > ?1)
               AND {IN_CALENDARS}",
        ))
        .map_err(sql_error)?;
    for Window { floating, from, to } in range.windows {
        let rows = masters
            .query(params![from, to, floating, range.calendars_json()])
            .map_err(sql_error)?;
        for row in each_row::<Indexed>(rows) {
            let series = row.map_err(sql_error)?;
            let Some(rrule) = series.rrule.as_deref() else {
                continue;
            };
            let duration = series.end - series.start;
            let found_instances = match ics::instances(rrule, duration, from, to, cap) {
                Ok(found) => found,
                Err(e) => {
                    found.problems.push(format!(
                        "the repeating event {:?} (uid {}) could not be expanded and is not shown: {e}",
                        series.title, series.uid
                    ));
                    continue;
                }
            };
            let mut placed = HashSet::new();
            for ics::Instance { start, original } in found_instances {
                // An override names an instance by the start the series gave it.
                if overridden.contains(&(series.calendar.clone(), series.uid.clone(), original)) {
                    continue;
                }
                let occurrence =
                    series.occurrence(range, floating, (start, start + duration), Some(original));
                // Two wall times of a floating series name one instant where the zone asked in
                // skips the first: a recurrence set holds it once (RFC 5545 §3.8.5.3).
                if placed.insert(occurrence.start_utc) {
                    found.occurrences.push(occurrence);
                }
            }
        }
    }
    Ok(())
}

pub fn record_conflict(
    tx: &Transaction<'_>,
    calendar: &str,
    uid: &str,
    kept: &str,
    copy_uid: Option<&str>,
    detail: &str,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO calendar_conflicts (calendar, uid, kept, copy_uid, detail, created_at) VALUES (?1, ?2, ?3, ?4, ?5, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
        params![calendar, uid, kept, copy_uid, detail],
    )?;
    Ok(())
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Conflict {
    pub calendar: String,
    pub uid: String,
    /// Which version the calendar shows now: `server` or `local`.
    pub kept: String,
    /// The other version, saved as its own event so nothing is lost.
    pub copy_uid: Option<String>,
    pub detail: String,
    pub created_at: String,
}

pub fn conflicts(conn: &Connection) -> rusqlite::Result<Vec<Conflict>> {
    all_rows(
        conn,
        "SELECT calendar, uid, kept, copy_uid, detail, created_at FROM calendar_conflicts ORDER BY id DESC LIMIT 50",
        [],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calendar_store() -> (tempfile::TempDir, cowork_store::Store) {
        let dir = tempfile::tempdir().unwrap();
        let at = cowork_store::DataDir::at(dir.path());
        let store = cowork_store::Store::open(at, &[&crate::SCHEMA]).unwrap();
        (dir, store)
    }

    /// A data dir from before the migration: text with DTSTAMP/UID in VTIMEZONE and VALARM,
    /// an all-day event indexed at the old machine's midnight. The next open rewrites both.
    #[test]
    fn the_rebuild_rewrites_old_text_valid_and_reindexes_dates_as_dates() {
        let (_dir, store) = calendar_store();
        let mut conn = store.connect().unwrap();
        let old = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VTIMEZONE\r\nDTSTAMP:20261101T000000Z\r\nTZID:Europe/Berlin\r\nUID:tz-1\r\n\
BEGIN:STANDARD\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nUID:std-1\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n\
BEGIN:VEVENT\r\nDTSTAMP:20261101T000000Z\r\nDTSTART;VALUE=DATE:20261202\r\nDTEND;VALUE=DATE:20261205\r\nSUMMARY:Urlaub\r\nUID:urlaub\r\n\
BEGIN:VALARM\r\nDTSTAMP:20261101T000000Z\r\nACTION:DISPLAY\r\nTRIGGER:-PT1H\r\nUID:alarm-1\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
        conn.execute_batch(&format!(
            "INSERT INTO calendar_objects (calendar, uid, ics, dirty, deleted, updated_at) VALUES ('local', 'urlaub', '{old}', 0, 0, 'x');
             INSERT INTO calendar_index (calendar, uid, start_utc, end_utc, series_end, all_day, summary, location, busy)
               VALUES ('local', 'urlaub', 1796166000, 1796425200, 1796425200, 1, 'Urlaub', '', 1);
             INSERT INTO calendar_rebuild (reason) VALUES ('test');"
        ))
        .unwrap();
        assert_eq!(rebuild_if_asked(&mut conn).unwrap(), 1);
        assert_eq!(rebuild_if_asked(&mut conn).unwrap(), 0, "once");
        let text = object(&conn, "local", "urlaub").unwrap().unwrap().ics;
        assert_eq!(text.matches("DTSTAMP").count(), 1, "{text}");
        assert_eq!(text.matches("UID").count(), 1, "{text}");
        let (start, floating): (i64, bool) = conn
            .query_row(
                "SELECT start_utc, floating FROM calendar_index WHERE uid = 'urlaub'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert!(floating);
        assert_eq!(ics::utc_of(start).to_rfc3339(), "2026-12-02T00:00:00+00:00");
    }

    /// A series the expansion cannot read (here: a rule `rrule` refuses, as a newer version's
    /// index row might hold) is named beside the answer; every other event is still shown.
    #[test]
    fn one_bad_series_is_reported_and_the_rest_is_shown() {
        let (_dir, store) = calendar_store();
        let conn = store.connect().unwrap();
        conn.execute_batch(
            "INSERT INTO calendar_index (calendar, uid, start_utc, end_utc, all_day, summary, location, busy, rrule)
               VALUES ('local', 'bad', 1796166000, 1796169600, 0, 'Broken', '', 1, 'DTSTART:20261101T000000Z\nRRULE:FREQ=FORTNIGHTLY\n'),
                      ('local', 'fine', 1796180000, 1796183600, 0, 'Lunch', '', 1, NULL);",
        )
        .unwrap();
        let from = 1796166000 - 86_400;
        let found = occurrences(
            &conn,
            None,
            from,
            from + 7 * 86_400,
            100,
            crate::zone::Zone::Local,
        )
        .unwrap();
        let titles: Vec<&str> = found.occurrences.iter().map(|o| o.title.as_str()).collect();
        assert_eq!(titles, ["Lunch"]);
        assert_eq!(found.problems.len(), 1, "{:?}", found.problems);
        assert!(
            found.problems[0].contains("\"Broken\" (uid bad)"),
            "{:?}",
            found.problems
        );
    }
}
