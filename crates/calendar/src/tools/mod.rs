//! The calendar tools. Reads go through the index (`db::occurrences`); writes change the
//! object's iCalendar text, re-index it in one transaction, and for a CalDAV calendar mark it
//! for the next push, which is attempted at once (offline edits stay queued).
//!
//! - `read.rs`: `calendar_check`, `calendar_find_free_time`.
//! - `write.rs`: `calendar_create`, `calendar_update`, `calendar_delete` and the iCalendar editing
//!   they share.
//! - `transfer.rs`: `calendar_import`, `calendar_export`.
//! - `accounts.rs`: `calendar_list`, `calendar_sync`.
//! - `undo.rs`: `calendar_changes`, `calendar_undo`.

use crate::db::{self, CalendarInfo, Object};
use crate::history::{self, Action};
use crate::zone::Zone;
use crate::{CalendarTools, Shared, db_error, ics};
use chrono::Duration;
use cowork_contract::{CallPlan, Effect, EffectEnv, ToolContext, ToolError, ToolResult, tools};
use icalendar::{
    Alarm, Attendee, Calendar, CalendarComponent, CalendarDateTime, Component, DatePerhapsTime,
    Event, EventLike,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Resolves calendar ids or names (case-insensitive) to calendars; `None` = all of them.
pub(super) fn pick(
    shared: &Shared,
    wanted: Option<&[String]>,
) -> Result<Vec<CalendarInfo>, ToolError> {
    let all = db::calendars(&shared.db.lock().unwrap()).map_err(db_error)?;
    let Some(wanted) = wanted.filter(|w| !w.is_empty()) else {
        return Ok(all);
    };
    wanted
        .iter()
        .map(|w| {
            all.iter()
                .find(|c| c.id.eq_ignore_ascii_case(w) || c.name.eq_ignore_ascii_case(w))
                .or_else(|| {
                    // `work` for `account/work`, when only one account has it.
                    let mut short = all.iter().filter(|c| {
                        c.id.rsplit('/')
                            .next()
                            .is_some_and(|s| s.eq_ignore_ascii_case(w))
                    });
                    short.next().filter(|_| short.next().is_none())
                })
                .cloned()
                .ok_or_else(|| {
                    ToolError::invalid(format!(
                        "no calendar {w:?}; there are: {}",
                        all.iter()
                            .map(|c| format!("{} ({})", c.id, c.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })
        })
        .collect()
}

/// The calendar with exactly this id (never a name): what a recorded change names.
pub(super) fn by_id(shared: &Shared, id: &str) -> Result<CalendarInfo, ToolError> {
    let all = db::calendars(&shared.db.lock().unwrap()).map_err(db_error)?;
    all.into_iter().find(|c| c.id == id).ok_or_else(|| {
        ToolError::invalid(format!(
            "calendar {id:?} is no longer here (its account was removed?): its changes cannot be taken back"
        ))
    })
}

pub(super) fn pick_one(shared: &Shared, wanted: Option<&str>) -> Result<CalendarInfo, ToolError> {
    let name = wanted.unwrap_or("local").to_string();
    Ok(pick(shared, Some(&[name]))?.remove(0))
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct EventView {
    pub calendar: String,
    pub uid: String,
    pub title: String,
    /// RFC 3339 in the answer's time zone; a date for all-day events.
    pub start: String,
    pub end: String,
    pub all_day: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub location: String,
    pub recurring: bool,
    /// The original start of this instance of a series: pass it to update or delete one instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Called off: it keeps no time busy.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
}

pub(super) fn view(o: &db::Occurrence, zone: Zone) -> EventView {
    let (start, end) = if o.all_day {
        // All-day ends are exclusive: a one-day event on the 23rd ends on the 23rd for a reader.
        (
            zone.date_of(o.start_utc).to_string(),
            zone.date_of((o.end_utc - 1).max(o.start_utc)).to_string(),
        )
    } else {
        (zone.format(o.start_utc), zone.format(o.end_utc))
    };
    EventView {
        calendar: o.calendar.clone(),
        uid: o.uid.clone(),
        title: o.title.clone(),
        start,
        end,
        all_day: o.all_day,
        location: o.location.clone(),
        recurring: o.recurring,
        instance: o.instance.clone(),
        cancelled: o.cancelled,
    }
}

/// Refreshes stale CalDAV mirrors first (discovering new calendars), then resolves the names, so
/// "all calendars" includes one found just now.
pub(super) async fn refresh_then_pick(
    shared: &Shared,
    wanted: Option<&[String]>,
) -> Result<(Vec<String>, Vec<CalendarInfo>), ToolError> {
    let notes = match wanted {
        Some(_) => shared.refresh(Some(&pick(shared, wanted)?)).await,
        None => shared.refresh(None).await,
    };
    Ok((notes, pick(shared, wanted)?))
}

pub(super) fn read_effects(
    shared: &Shared,
    calendars: Option<&[String]>,
) -> Result<CallPlan, ToolError> {
    let effects = pick(shared, calendars)?
        .into_iter()
        .map(|c| Effect::CalendarRead { calendar: c.id })
        .collect();
    Ok(CallPlan::new(effects))
}

const MAX_EVENTS: usize = 2000;

mod accounts;
mod read;
mod transfer;
mod undo;
mod write;

#[cfg(test)]
pub(crate) use transfer::store_calendars;
