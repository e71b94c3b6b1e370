//! Reminders: the events' VALARMs that are due. The app asks ([`Reminders::due`]) and tells the
//! person; each reminder is handed out once (`calendar_reminders_shown` remembers it across
//! restarts), so a reminder is never shown twice nor lost to a restart.

use crate::db;
use crate::ics::AlarmTrigger;
use crate::zone::Zone;
use chrono::{DateTime, Utc};
use cowork_store::{Store, StoreError};
use rusqlite::{Connection, params};
use std::sync::Mutex;

/// A reminder is found this long before its event starts (an earlier trigger is not seen).
const LOOK_AHEAD: i64 = 8 * 86_400;
/// …and this long after (triggers after the start or relative to the end).
const LOOK_BEHIND: i64 = 86_400;
/// A reminder that fell due while Cowork was not running is still shown this late, or as long
/// as its event has not started.
const LATE: i64 = 15 * 60;
/// Shown reminders are remembered this long (longer than any reminder can be pending).
const REMEMBER: i64 = 30 * 86_400;

/// An event instance whose reminder is due.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reminder {
    pub calendar: String,
    pub uid: String,
    pub title: String,
    pub location: String,
    pub starts: DateTime<Utc>,
    pub all_day: bool,
    /// When the reminder was due.
    pub due: DateTime<Utc>,
}

pub struct Reminders {
    conn: Mutex<Connection>,
}

impl Reminders {
    /// Its own connection: the reminder loop never waits behind a calendar tool.
    pub fn new(store: &Store) -> Result<Self, StoreError> {
        Ok(Reminders {
            conn: Mutex::new(store.connect()?),
        })
    }

    /// The reminders due at `now` not handed out before; each is marked as handed out in the
    /// same transaction.
    pub fn due(&self, now: DateTime<Utc>) -> Result<Vec<Reminder>, String> {
        let now = now.timestamp();
        let mut conn = self.conn.lock().unwrap();
        let pending: Vec<(Reminder, i64)> = pending(&conn, now)?
            .into_iter()
            .filter(|(r, _)| {
                let due = r.due.timestamp();
                due <= now && (due >= now - LATE || r.starts.timestamp() > now)
            })
            .collect();
        let sql_error = |e: rusqlite::Error| format!("database error: {e}");
        let tx = conn.transaction().map_err(sql_error)?;
        let mut fresh = Vec::new();
        for (reminder, instance) in pending {
            let added = tx
                .execute(
                    "INSERT OR IGNORE INTO calendar_reminders_shown (calendar, uid, start_utc, fire_at) VALUES (?1, ?2, ?3, ?4)",
                    params![reminder.calendar, reminder.uid, instance, reminder.due.timestamp()],
                )
                .map_err(sql_error)?;
            if added == 1 {
                fresh.push(reminder);
            }
        }
        tx.execute(
            "DELETE FROM calendar_reminders_shown WHERE fire_at < ?1",
            [now - REMEMBER],
        )
        .map_err(sql_error)?;
        tx.commit().map_err(sql_error)?;
        Ok(fresh)
    }

    /// When the next reminder after `now` is due, if one is within the look-ahead.
    pub fn next(&self, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, String> {
        let now = now.timestamp();
        let conn = self.conn.lock().unwrap();
        Ok(pending(&conn, now)?
            .into_iter()
            .map(|(r, _)| r.due)
            .filter(|due| due.timestamp() > now)
            .min())
    }
}

/// Every reminder of the instances near `now`, due or not, with the instance it is remembered
/// by: its start, or 0 for an absolute trigger (due once, whichever instance it is shown with).
fn pending(conn: &Connection, now: i64) -> Result<Vec<(Reminder, i64)>, String> {
    let found = db::occurrences(
        conn,
        None,
        now - LOOK_BEHIND,
        now + LOOK_AHEAD,
        10_000,
        Zone::Local,
    )?;
    for problem in &found.problems {
        tracing::warn!("calendar reminders: {problem}");
    }
    let instances = found.occurrences;
    let mut out = Vec::new();
    for instance in instances {
        let Some(alarms) = &instance.alarms else {
            continue;
        };
        let Ok(triggers) = serde_json::from_str::<Vec<AlarmTrigger>>(alarms) else {
            continue;
        };
        for trigger in triggers {
            let due = trigger.due(instance.start_utc, instance.end_utc);
            let remembered_by = match trigger {
                AlarmTrigger::At(_) => 0,
                _ => instance.start_utc,
            };
            out.push((
                Reminder {
                    calendar: instance.calendar.clone(),
                    uid: instance.uid.clone(),
                    title: instance.title.clone(),
                    location: instance.location.clone(),
                    starts: crate::ics::utc_of(instance.start_utc),
                    all_day: instance.all_day,
                    due: crate::ics::utc_of(due),
                },
                remembered_by,
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(dir: &std::path::Path, ics: &str) -> Store {
        let store = Store::open(cowork_store::DataDir::at(dir), &[&crate::SCHEMA]).unwrap();
        let mut conn = store.connect().unwrap();
        let cal = crate::ics::parse(ics).unwrap();
        let (uid, rows) = crate::ics::index(&cal).unwrap();
        let tx = conn.transaction().unwrap();
        let object = db::Object {
            calendar: "local".into(),
            uid,
            ics: ics.into(),
            href: None,
            etag: None,
            dirty: false,
            deleted: false,
        };
        db::put_object(&tx, &object, &rows).unwrap();
        tx.commit().unwrap();
        store
    }

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().to_utc()
    }

    fn event(uid: &str, lines: &str) -> String {
        format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20261101T000000Z\r\n{lines}END:VEVENT\r\nEND:VCALENDAR\r\n"
        )
    }

    /// A weekly meeting with a reminder 15 minutes before, one at its end and an absolute one;
    /// an EMAIL alarm is the server's and never shown.
    #[test]
    fn reminders_fall_due_at_their_triggers_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with(
            dir.path(),
            &event(
                "standup",
                "DTSTART:20261130T090000Z\r\nDTEND:20261130T093000Z\r\nRRULE:FREQ=WEEKLY\r\nSUMMARY:Standup\r\n\
BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n\
BEGIN:VALARM\r\nACTION:AUDIO\r\nTRIGGER;RELATED=END:PT0S\r\nEND:VALARM\r\n\
BEGIN:VALARM\r\nACTION:EMAIL\r\nDESCRIPTION:x\r\nSUMMARY:x\r\nATTENDEE:mailto:a@example.com\r\nTRIGGER:-PT1H\r\nEND:VALARM\r\n\
BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\nTRIGGER;VALUE=DATE-TIME:20261129T200000Z\r\nEND:VALARM\r\n",
            ),
        );
        let reminders = Reminders::new(&store).unwrap();
        let evening = at("2026-11-29T19:59:00Z");
        assert!(reminders.due(evening).unwrap().is_empty());
        assert_eq!(
            reminders.next(evening).unwrap(),
            Some(at("2026-11-29T20:00:00Z"))
        );
        let absolute = reminders.due(at("2026-11-29T20:00:01Z")).unwrap();
        assert_eq!(absolute.len(), 1, "{absolute:?}");
        assert_eq!(absolute[0].starts, at("2026-11-30T09:00:00Z"));
        let morning = at("2026-11-30T08:00:00Z");
        assert!(
            reminders.due(morning).unwrap().is_empty(),
            "the email one is not ours"
        );
        assert_eq!(
            reminders.next(morning).unwrap(),
            Some(at("2026-11-30T08:45:00Z"))
        );
        let due = reminders.due(at("2026-11-30T08:45:01Z")).unwrap();
        assert_eq!(due.len(), 1, "{due:?}");
        assert_eq!(
            (due[0].title.as_str(), due[0].starts),
            ("Standup", at("2026-11-30T09:00:00Z"))
        );
        assert!(
            reminders
                .due(at("2026-11-30T08:46:00Z"))
                .unwrap()
                .is_empty(),
            "once"
        );
        assert_eq!(
            reminders.due(at("2026-11-30T09:30:00Z")).unwrap().len(),
            1,
            "at its end"
        );
        // A new handle (a restart) shows none again, not even the absolute one with next
        // week's meeting; next week's own comes at its time.
        let again = Reminders::new(&store).unwrap();
        assert!(again.due(at("2026-12-06T09:31:00Z")).unwrap().is_empty());
        assert_eq!(
            again.next(at("2026-12-06T09:31:00Z")).unwrap(),
            Some(at("2026-12-07T08:45:00Z"))
        );
    }

    /// Cowork was not running when a reminder fell due: shown late while its event is ahead,
    /// dropped once the event has begun.
    #[test]
    fn a_reminder_missed_while_away_is_shown_late_only_while_it_still_helps() {
        let dentist = event(
            "dentist",
            "DTSTART:20261201T150000Z\r\nDTEND:20261201T160000Z\r\nSUMMARY:Dentist\r\n\
BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\nTRIGGER:-P1D\r\nEND:VALARM\r\n\
BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:x\r\nTRIGGER:-PT2H\r\nEND:VALARM\r\n",
        );
        let dir = tempfile::tempdir().unwrap();
        let ahead = Reminders::new(&store_with(dir.path(), &dentist)).unwrap();
        assert_eq!(ahead.due(at("2026-12-01T14:30:00Z")).unwrap().len(), 2);
        let dir = tempfile::tempdir().unwrap();
        let begun = Reminders::new(&store_with(dir.path(), &dentist)).unwrap();
        assert!(begun.due(at("2026-12-01T15:20:00Z")).unwrap().is_empty());
    }
}
