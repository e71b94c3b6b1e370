//! Calendars, their objects, the range index and sync conflicts.
//! Migrations are appended, never edited once released (see `cowork_store::Schema`).

use cowork_store::{Schema, Step};

pub static SCHEMA: Schema = Schema {
    owner: "calendar",
    steps: &[
        Step::legacy(
            4,
            r#"
-- calendar: calendars (the local one always exists; CalDAV ones mirror a server collection).
CREATE TABLE calendars (
    id         TEXT PRIMARY KEY,     -- `local`, or `<account>/<collection>`
    name       TEXT NOT NULL,
    account    TEXT,                 -- NULL for local calendars
    url        TEXT,                 -- the collection URL on the server
    ctag       TEXT,
    last_sync  TEXT,
    last_error TEXT
);
INSERT INTO calendars (id, name) VALUES ('local', 'Local');
-- calendar: one row per calendar object resource (one UID: a master and its overrides), its
-- iCalendar text as the source of truth, and its sync state.
CREATE TABLE calendar_objects (
    calendar   TEXT NOT NULL,
    uid        TEXT NOT NULL,
    ics        TEXT NOT NULL,
    href       TEXT,                 -- on the server; NULL until first pushed
    etag       TEXT,                 -- the server's version we last saw
    dirty      INTEGER NOT NULL DEFAULT 0,   -- 1: a local change waits to be pushed
    deleted    INTEGER NOT NULL DEFAULT 0,   -- 1: deleted locally, the server delete is queued
    updated_at TEXT NOT NULL,
    PRIMARY KEY (calendar, uid)
);
-- calendar: what range queries need, derived from `ics` (rebuilt whenever it changes).
-- Times are UTC seconds; a recurring master's `series_end` is NULL when it never ends.
CREATE TABLE calendar_index (
    calendar      TEXT    NOT NULL,
    uid           TEXT    NOT NULL,
    recurrence_id INTEGER,           -- set on an override of one instance
    start_utc     INTEGER NOT NULL,
    end_utc       INTEGER NOT NULL,
    series_end    INTEGER,
    rrule         TEXT,              -- DTSTART/RRULE/RDATE/EXDATE lines of a recurring master
    all_day       INTEGER NOT NULL,
    summary       TEXT    NOT NULL,
    location      TEXT    NOT NULL,
    busy          INTEGER NOT NULL DEFAULT 1
);
-- (start, end): the range scan reads the index alone, never the rows it passes over.
CREATE INDEX calendar_index_single ON calendar_index (start_utc, end_utc) WHERE rrule IS NULL;
CREATE INDEX calendar_index_uid ON calendar_index (calendar, uid);
-- calendar: sync conflicts, kept until the person looks; both versions are preserved.
CREATE TABLE calendar_conflicts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    calendar    TEXT NOT NULL,
    uid         TEXT NOT NULL,
    kept        TEXT NOT NULL,       -- which version the calendar now shows: server | local
    copy_uid    TEXT,                -- the other version, saved as a separate event
    detail      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
"#,
        ),
        // calendar: dates and floating times are kept as wall-clock values, placed in a zone only when
        // a query names one (they were pinned to the importing machine's zone), and stored text is
        // rewritten without the DTSTAMP/UID lines RFC 5545 forbids in VTIMEZONE and VALARM. Both need
        // the iCalendar parser, so the calendar family rebuilds its index at its next open while
        // `calendar_rebuild` holds a row.
        Step::legacy(
            9,
            r#"
ALTER TABLE calendar_index ADD COLUMN floating INTEGER NOT NULL DEFAULT 0;
CREATE TABLE calendar_rebuild (reason TEXT NOT NULL);
INSERT INTO calendar_rebuild (reason)
    SELECT 'dates and floating times, valid text' WHERE EXISTS (SELECT 1 FROM calendar_objects);
"#,
        ),
        // calendar: reminders (VALARM). Each index row carries its alarms' triggers; the shown
        // table makes a reminder fire once, across restarts. Existing objects are re-indexed.
        Step::new(
            r#"
ALTER TABLE calendar_index ADD COLUMN alarms TEXT;
CREATE TABLE calendar_reminders_shown (
    calendar  TEXT    NOT NULL,
    uid       TEXT    NOT NULL,
    start_utc INTEGER NOT NULL,      -- the instance's start
    fire_at   INTEGER NOT NULL,      -- when its alarm was due (UTC seconds)
    PRIMARY KEY (calendar, uid, start_utc, fire_at)
);
INSERT INTO calendar_rebuild (reason)
    SELECT 'reminders' WHERE EXISTS (SELECT 1 FROM calendar_objects);
"#,
        ),
        // calendar: cancelled events and instances are marked (shown as cancelled, never busy);
        // RDATE periods and RDATE-only series are indexed, and series starting at a time a
        // clock change skips are expanded: existing objects are re-indexed.
        Step::new(
            r#"
ALTER TABLE calendar_index ADD COLUMN cancelled INTEGER NOT NULL DEFAULT 0;
INSERT INTO calendar_rebuild (reason)
    SELECT 'cancelled, RDATE periods, clock changes' WHERE EXISTS (SELECT 1 FROM calendar_objects);
"#,
        ),
        // calendar: a series' DTSTART is always an instance, an EXDATE removes an override of
        // its instance, zoned series are expanded in wall-clock time (instances on a clock
        // change's day were lost), and THISANDFUTURE overrides split their series: the stored
        // recurrence text changes, so objects are re-indexed.
        Step::new(
            r#"
INSERT INTO calendar_rebuild (reason)
    SELECT 'DTSTART as an instance, wall-clock expansion, THISANDFUTURE' WHERE EXISTS (SELECT 1 FROM calendar_objects);
"#,
        ),
        // calendar: every change Cowork makes to an event, with the object's text before and
        // after, so it can be taken back (`calendar_undo`), locally and on a CalDAV server.
        Step::new(
            r#"
CREATE TABLE calendar_changes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT    NOT NULL,
    conversation TEXT  NOT NULL,
    action     TEXT    NOT NULL,     -- created | updated | deleted | undid
    calendar   TEXT    NOT NULL,
    uid        TEXT    NOT NULL,
    title      TEXT    NOT NULL,
    before     TEXT,                 -- the object's text; NULL when it did not exist
    after      TEXT,                 -- NULL when the change removed it
    undoes     INTEGER,              -- for `undid`: the change it took back
    undone_by  INTEGER,              -- the change that took this one back
    bytes      INTEGER NOT NULL      -- the size of both texts, for pruning
);
CREATE INDEX calendar_changes_by_object ON calendar_changes (calendar, uid);
"#,
        ),
    ],
};
