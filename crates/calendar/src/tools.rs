//! The calendar tools. Reads go through the index (`db::occurrences`); writes change the
//! object's iCalendar text, re-index it in one transaction, and for a CalDAV calendar mark it
//! for the next push, which is attempted at once (offline edits stay queued).

use crate::db::{self, CalendarInfo, Object};
use crate::zone::Zone;
use crate::{Shared, db_error, ics};
use chrono::Duration;
use cowork_contract::{
    Annotations, Effect, EffectEnv, EffectKind, Tool, ToolContext, ToolError, ToolMeta,
};
use icalendar::{
    Alarm, Attendee, Calendar, CalendarComponent, CalendarDateTime, Component, DatePerhapsTime,
    Event, EventLike,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

fn invalid(tool: &str, message: impl Into<String>) -> ToolError {
    ToolError::InvalidArguments {
        tool: tool.into(),
        message: message.into(),
    }
}

/// Resolves calendar ids or names (case-insensitive) to calendars; `None` = all of them.
fn pick(
    shared: &Shared,
    tool: &str,
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
                    invalid(
                        tool,
                        format!(
                            "no calendar {w:?}; there are: {}",
                            all.iter()
                                .map(|c| format!("{} ({})", c.id, c.name))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })
        })
        .collect()
}

fn pick_one(shared: &Shared, tool: &str, wanted: Option<&str>) -> Result<CalendarInfo, ToolError> {
    let name = wanted.unwrap_or("local").to_string();
    Ok(pick(shared, tool, Some(&[name]))?.remove(0))
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
}

fn view(o: &db::Occurrence, zone: Zone) -> EventView {
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
    }
}

/// Refreshes stale CalDAV mirrors first (discovering new calendars), then resolves the names, so
/// "all calendars" includes one found just now.
async fn refresh_then_pick(
    shared: &Shared,
    tool: &str,
    wanted: Option<&[String]>,
) -> Result<(Vec<String>, Vec<CalendarInfo>), ToolError> {
    let notes = match wanted {
        Some(_) => shared.refresh(Some(&pick(shared, tool, wanted)?)).await,
        None => shared.refresh(None).await,
    };
    Ok((notes, pick(shared, tool, wanted)?))
}

fn read_effects(
    shared: &Shared,
    tool: &str,
    calendars: Option<&[String]>,
) -> Result<Vec<Effect>, ToolError> {
    Ok(pick(shared, tool, calendars)?
        .into_iter()
        .map(|c| Effect::CalendarRead { calendar: c.id })
        .collect())
}

const MAX_EVENTS: usize = 2000;

// ---------------------------------------------------------------- calendar_check

pub struct Check {
    pub shared: Arc<Shared>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckInput {
    /// Start of the range: `today`, `tomorrow`, `2026-11-23`, `2026-11-23T14:00` or RFC 3339.
    pub start: String,
    /// End of the range (exclusive); default one day after `start`.
    #[serde(default)]
    pub end: Option<String>,
    /// Calendar ids or names; default all.
    #[serde(default)]
    pub calendars: Option<Vec<String>>,
    /// Only events whose title or location contains this text.
    #[serde(default)]
    pub query: Option<String>,
    /// IANA time zone for the answer (e.g. `Asia/Shanghai`); default the computer's.
    #[serde(default)]
    pub timezone: Option<String>,
    /// At most this many events (default 200).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
pub struct CheckOutput {
    pub timezone: String,
    pub events: Vec<EventView>,
    /// Sync problems or conflicts met while refreshing CalDAV calendars.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn range(zone: Zone, tool: &str, start: &str, end: Option<&str>) -> Result<(i64, i64), ToolError> {
    let from = zone
        .parse_bound("start", start)
        .map_err(|m| invalid(tool, m))?;
    let to = match end {
        Some(end) => zone.parse_bound("end", end).map_err(|m| invalid(tool, m))?,
        None => from + 86_400,
    };
    if to <= from {
        return Err(invalid(tool, "`end` must be after `start`"));
    }
    if to - from > 366 * 86_400 * 5 {
        return Err(invalid(
            tool,
            "the range is longer than five years: ask for a shorter one",
        ));
    }
    Ok((from, to))
}

/// What the read tools compute first: the zone, the range, fresh mirrors, and the instances in it.
struct Window {
    zone: Zone,
    from: i64,
    to: i64,
    notes: Vec<String>,
    found: Vec<db::Occurrence>,
}

async fn read_window(
    shared: &Shared,
    tool: &str,
    timezone: Option<&str>,
    start: &str,
    end: Option<&str>,
    calendars: Option<&[String]>,
) -> Result<Window, ToolError> {
    let zone = Zone::parse(timezone).map_err(|m| invalid(tool, m))?;
    let (from, to) = range(zone, tool, start, end)?;
    let (notes, calendars) = refresh_then_pick(shared, tool, calendars).await?;
    let ids: Vec<String> = calendars.into_iter().map(|c| c.id).collect();
    let found = db::occurrences(
        &shared.db.lock().unwrap(),
        Some(&ids),
        from,
        to,
        usize::MAX,
        zone,
    )
    .map_err(ToolError::failed)?;
    Ok(Window {
        zone,
        from,
        to,
        notes,
        found,
    })
}

fn read_meta(name: &str, title: &str, description: &str) -> ToolMeta {
    ToolMeta::new(name, title, description)
        .category("calendar")
        .effects(&[EffectKind::CalendarRead])
        .annotations(Annotations {
            read_only: true,
            idempotent: true,
            ..Default::default()
        })
}

#[async_trait::async_trait]
impl Tool for Check {
    type Input = CheckInput;
    type Output = CheckOutput;

    fn meta(&self) -> ToolMeta {
        read_meta(
            "calendar_check",
            "Check calendar",
            "List events in a time range across calendars (recurring events expanded), e.g. \"what's on tomorrow\".",
        )
    }

    fn effects(&self, input: &CheckInput, _env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        read_effects(&self.shared, "calendar_check", input.calendars.as_deref())
    }

    async fn call(&self, input: &CheckInput, _ctx: &ToolContext) -> Result<CheckOutput, ToolError> {
        let Window {
            zone, notes, found, ..
        } = read_window(
            &self.shared,
            "calendar_check",
            input.timezone.as_deref(),
            &input.start,
            input.end.as_deref(),
            input.calendars.as_deref(),
        )
        .await?;
        let limit = input.limit.unwrap_or(200).clamp(1, MAX_EVENTS);
        let query = input.query.as_deref().map(str::to_lowercase);
        let events = found
            .iter()
            .filter(|o| {
                query.as_ref().is_none_or(|q| {
                    o.title.to_lowercase().contains(q) || o.location.to_lowercase().contains(q)
                })
            })
            .take(limit)
            .map(|o| view(o, zone))
            .collect();
        Ok(CheckOutput {
            timezone: zone.name(),
            events,
            notes,
        })
    }

    fn to_text(&self, out: &CheckOutput) -> String {
        if out.events.is_empty() {
            return format!("No events ({}).", out.timezone);
        }
        let mut text: Vec<String> = out
            .events
            .iter()
            .map(|e| {
                let when = if e.all_day {
                    format!("{} (all day)", e.start)
                } else {
                    format!("{} – {}", e.start, e.end)
                };
                let place = if e.location.is_empty() {
                    String::new()
                } else {
                    format!(" @ {}", e.location)
                };
                format!("{when}  {}{place}  [{}]", e.title, e.calendar)
            })
            .collect();
        text.extend(out.notes.iter().map(|n| format!("note: {n}")));
        text.join("\n")
    }
}

// ---------------------------------------------------------------- calendar_find_free_time

pub struct FindFreeTime {
    pub shared: Arc<Shared>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FreeTimeInput {
    pub start: String,
    pub end: String,
    /// How long the slot must be.
    pub duration_minutes: u32,
    /// Working hours, `HH:MM` (default 09:00–17:00). Slots outside them are not offered.
    #[serde(default)]
    pub day_start: Option<String>,
    #[serde(default)]
    pub day_end: Option<String>,
    /// Offer Saturdays and Sundays too (default false).
    #[serde(default)]
    pub include_weekends: bool,
    #[serde(default)]
    pub calendars: Option<Vec<String>>,
    #[serde(default)]
    pub timezone: Option<String>,
    /// At most this many slots (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
pub struct Slot {
    pub start: String,
    pub end: String,
    pub minutes: i64,
}

#[derive(Serialize, JsonSchema)]
pub struct FreeTimeOutput {
    pub timezone: String,
    pub slots: Vec<Slot>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn hhmm(
    field: &str,
    text: Option<&str>,
    default: (u32, u32),
) -> Result<chrono::NaiveTime, ToolError> {
    let text = text.unwrap_or("");
    if text.is_empty() {
        return Ok(chrono::NaiveTime::from_hms_opt(default.0, default.1, 0).expect("valid"));
    }
    chrono::NaiveTime::parse_from_str(text, "%H:%M").map_err(|_| {
        invalid(
            "calendar_find_free_time",
            format!("`{field}` {text:?}: use HH:MM like 09:00"),
        )
    })
}

/// Free windows inside working hours: working windows per day minus busy intervals (sorted).
fn free_slots(windows: &[(i64, i64)], busy: &mut [(i64, i64)], min_len: i64) -> Vec<(i64, i64)> {
    busy.sort();
    let mut out = Vec::new();
    for &(ws, we) in windows {
        let mut cursor = ws;
        for &(bs, be) in busy.iter().filter(|(bs, be)| *be > ws && *bs < we) {
            if bs - cursor >= min_len {
                out.push((cursor, bs));
            }
            cursor = cursor.max(be);
        }
        if we - cursor >= min_len {
            out.push((cursor, we));
        }
    }
    out
}

#[async_trait::async_trait]
impl Tool for FindFreeTime {
    type Input = FreeTimeInput;
    type Output = FreeTimeOutput;

    fn meta(&self) -> ToolMeta {
        read_meta(
            "calendar_find_free_time",
            "Find free time",
            "Find free slots of at least a given length in a range, within working hours, across calendars.",
        )
    }

    fn effects(&self, input: &FreeTimeInput, _env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        read_effects(
            &self.shared,
            "calendar_find_free_time",
            input.calendars.as_deref(),
        )
    }

    async fn call(
        &self,
        input: &FreeTimeInput,
        _ctx: &ToolContext,
    ) -> Result<FreeTimeOutput, ToolError> {
        let tool = "calendar_find_free_time";
        if input.duration_minutes == 0 {
            return Err(invalid(tool, "`duration_minutes` must be at least 1"));
        }
        let (day_start, day_end) = (
            hhmm("day_start", input.day_start.as_deref(), (9, 0))?,
            hhmm("day_end", input.day_end.as_deref(), (17, 0))?,
        );
        if day_end <= day_start {
            return Err(invalid(tool, "`day_end` must be after `day_start`"));
        }
        let Window {
            zone,
            from,
            to,
            notes,
            found,
        } = read_window(
            &self.shared,
            tool,
            input.timezone.as_deref(),
            &input.start,
            Some(&input.end),
            input.calendars.as_deref(),
        )
        .await?;
        // All-day events count too (an out-of-office covers its days, placed in this zone);
        // TRANSP:TRANSPARENT and cancelled ones do not (`busy`).
        let mut busy: Vec<(i64, i64)> = found
            .iter()
            .filter(|o| o.busy)
            .map(|o| (o.start_utc, o.end_utc))
            .collect();
        let mut windows = Vec::new();
        let mut day = zone.date_of(from);
        while let Some(ws) = zone.to_utc(&day.and_time(day_start)) {
            if ws >= to {
                break;
            }
            use chrono::Datelike;
            let weekend = matches!(day.weekday(), chrono::Weekday::Sat | chrono::Weekday::Sun);
            if let Some(we) = zone.to_utc(&day.and_time(day_end))
                && (input.include_weekends || !weekend)
            {
                let (s, e) = (ws.max(from), we.min(to));
                if e > s {
                    windows.push((s, e));
                }
            }
            day = match day.succ_opt() {
                Some(d) => d,
                None => break,
            };
        }
        let slots = free_slots(&windows, &mut busy, i64::from(input.duration_minutes) * 60)
            .into_iter()
            .take(input.limit.unwrap_or(10).clamp(1, 200))
            .map(|(s, e)| Slot {
                start: zone.format(s),
                end: zone.format(e),
                minutes: (e - s) / 60,
            })
            .collect();
        Ok(FreeTimeOutput {
            timezone: zone.name(),
            slots,
            notes,
        })
    }

    fn to_text(&self, out: &FreeTimeOutput) -> String {
        if out.slots.is_empty() {
            return "No free slot of that length in working hours.".into();
        }
        out.slots
            .iter()
            .map(|s| format!("{} – {} ({} min)", s.start, s.end, s.minutes))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

// ---------------------------------------------------------------- writes

/// Saves an object: index, store, and for a CalDAV calendar queue it and try to push now.
async fn save(
    shared: &Shared,
    calendar: &CalendarInfo,
    uid: &str,
    cal: Option<&Calendar>,
) -> Result<Option<String>, ToolError> {
    let existing = db::object(&shared.db.lock().unwrap(), &calendar.id, uid).map_err(db_error)?;
    let remote = calendar.account.is_some();
    {
        let mut conn = shared.db.lock().unwrap();
        let tx = conn.transaction().map_err(db_error)?;
        match cal {
            Some(cal) => {
                let (_, rows) = ics::index(cal)
                    .map_err(|m| ToolError::failed(format!("the event would be invalid: {m}")))?;
                let object = Object {
                    calendar: calendar.id.clone(),
                    uid: uid.into(),
                    ics: ics::to_text(cal),
                    href: existing.as_ref().and_then(|o| o.href.clone()),
                    etag: existing.as_ref().and_then(|o| o.etag.clone()),
                    dirty: remote,
                    deleted: false,
                };
                db::put_object(&tx, &object, &rows).map_err(db_error)?;
            }
            None => match existing {
                // A server copy must be deleted there first: keep a tombstone until it is.
                Some(o) if remote && o.href.is_some() => db::put_object(
                    &tx,
                    &Object {
                        dirty: true,
                        deleted: true,
                        ..o
                    },
                    &[],
                )
                .map_err(db_error)?,
                _ => db::remove_object(&tx, &calendar.id, uid).map_err(db_error)?,
            },
        }
        tx.commit().map_err(db_error)?;
    }
    if calendar.account.is_none() {
        return Ok(None);
    }
    match shared.sync_one(calendar).await {
        Ok(report) if report.error.is_none() => Ok((!report.conflicts.is_empty())
            .then(|| format!("saved here; sync: {}", report.conflicts.join("; ")))),
        Ok(report) => Ok(Some(format!(
            "saved here and queued: the sync stopped ({}); it is retried at the next sync",
            report.error.unwrap_or_default()
        ))),
        Err(e) => Ok(Some(format!(
            "saved here and queued: the server is not reachable now ({e}); it syncs when it is"
        ))),
    }
}

fn load(
    shared: &Shared,
    tool: &str,
    calendar: &CalendarInfo,
    uid: &str,
) -> Result<Calendar, ToolError> {
    let object = db::object(&shared.db.lock().unwrap(), &calendar.id, uid)
        .map_err(db_error)?
        .filter(|o| !o.deleted)
        .ok_or_else(|| {
            invalid(
                tool,
                format!(
                    "no event {uid:?} in calendar {}: find its uid with calendar_check",
                    calendar.id
                ),
            )
        })?;
    ics::parse(&object.ics).map_err(ToolError::failed)
}

fn when(tool: &str, field: &str, text: &str, zone: Zone) -> Result<DatePerhapsTime, ToolError> {
    ics::parse_when(field, text, zone.iana()).map_err(|m| invalid(tool, m))
}

/// Single events are written in UTC (every server reads that); recurring ones keep their zone
/// so the series follows daylight saving time.
fn for_storage(value: DatePerhapsTime, recurring: bool) -> Result<DatePerhapsTime, String> {
    match value {
        DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { .. }) if !recurring => {
            Ok(ics::utc_of(ics::to_index(&value)?).into())
        }
        other => Ok(other),
    }
}

fn check_rrule(tool: &str, rule: &str) -> Result<String, ToolError> {
    let rule = rule.trim().trim_start_matches("RRULE:").to_string();
    format!("DTSTART:20260101T090000Z\nRRULE:{rule}")
        .parse::<rrule::RRuleSet>()
        .map_err(|e| invalid(tool, format!("`recurrence` {rule:?} is not an RFC 5545 RRULE ({e}); e.g. FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10")))?;
    Ok(rule)
}

fn clean_attendees(tool: &str, attendees: &[String]) -> Result<Vec<String>, ToolError> {
    attendees
        .iter()
        .map(|a| {
            let a = a.trim().trim_start_matches("mailto:").to_string();
            if a.contains('@') && !a.contains(char::is_whitespace) {
                Ok(a)
            } else {
                Err(invalid(
                    tool,
                    format!("attendee {a:?} is not an email address"),
                ))
            }
        })
        .collect()
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct CreateInput {
    pub title: String,
    /// `2026-11-23` for an all-day event, else `2026-11-23T14:00` (in `timezone`) or RFC 3339.
    pub start: String,
    /// Default: one hour after `start` (the next day for all-day events).
    #[serde(default)]
    pub end: Option<String>,
    /// IANA zone for times without an offset (default the computer's).
    #[serde(default)]
    pub timezone: Option<String>,
    #[serde(default)]
    pub location: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Email addresses to invite. A server with scheduling sends them invitations.
    #[serde(default)]
    pub attendees: Vec<String>,
    /// An RFC 5545 RRULE, e.g. `FREQ=WEEKLY;BYDAY=TU;COUNT=8`.
    #[serde(default)]
    pub recurrence: Option<String>,
    /// Reminders, in minutes before the start.
    #[serde(default)]
    pub reminders_minutes: Vec<u32>,
    /// Calendar id or name (default `local`).
    #[serde(default)]
    pub calendar: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Saved {
    pub calendar: String,
    pub uid: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Saved {
    /// `what` happened, plus the sync note when there is one.
    fn said(&self, what: &str) -> String {
        match &self.note {
            Some(note) => format!("{what} — {note}"),
            None => what.to_string(),
        }
    }
}

pub struct Create {
    pub shared: Arc<Shared>,
}

#[async_trait::async_trait]
impl Tool for Create {
    type Input = CreateInput;
    type Output = Saved;

    fn meta(&self) -> ToolMeta {
        ToolMeta::new(
            "calendar_create",
            "Create event",
            "Add an event (timed or all-day; location, description, attendees, recurrence, reminders) to a calendar.",
        )
        .category("calendar")
        .effects(&[EffectKind::CalendarWrite])
    }

    fn effects(&self, input: &CreateInput, _env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        let calendar = pick_one(&self.shared, "calendar_create", input.calendar.as_deref())?;
        Ok(vec![Effect::CalendarWrite {
            calendar: calendar.id,
            attendees: clean_attendees("calendar_create", &input.attendees)?,
        }])
    }

    async fn call(&self, input: &CreateInput, _ctx: &ToolContext) -> Result<Saved, ToolError> {
        let tool = "calendar_create";
        if input.title.trim().is_empty() {
            return Err(invalid(tool, "`title` is empty"));
        }
        let calendar = pick_one(&self.shared, tool, input.calendar.as_deref())?;
        let zone = Zone::parse(input.timezone.as_deref()).map_err(|m| invalid(tool, m))?;
        let recurrence = input
            .recurrence
            .as_deref()
            .map(|r| check_rrule(tool, r))
            .transpose()?;
        let start = when(tool, "start", &input.start, zone)?;
        let end = match &input.end {
            Some(end) => when(tool, "end", end, zone)?,
            None => match &start {
                DatePerhapsTime::Date(d) => DatePerhapsTime::Date(d.succ_opt().unwrap_or(*d)),
                timed => {
                    let utc = ics::to_index(timed).map_err(|m| invalid(tool, m))?;
                    shift(timed, utc, 3600)
                }
            },
        };
        if ics::to_index(&end).map_err(|m| invalid(tool, m))?
            < ics::to_index(&start).map_err(|m| invalid(tool, m))?
        {
            return Err(invalid(tool, "`end` is before `start`"));
        }
        let uid = format!("{}@cowork", uuid::Uuid::new_v4());
        let mut event = Event::new();
        event
            .uid(&uid)
            .summary(input.title.trim())
            .timestamp(chrono::Utc::now());
        let recurring = recurrence.is_some();
        event.starts(for_storage(start, recurring).map_err(|m| invalid(tool, m))?);
        event.ends(for_storage(end, recurring).map_err(|m| invalid(tool, m))?);
        apply_details(
            &mut event,
            input.location.as_deref(),
            input.description.as_deref(),
            Some(&clean_attendees(tool, &input.attendees)?),
        );
        if let Some(rule) = recurrence {
            event.add_property("RRULE", rule);
        }
        for minutes in &input.reminders_minutes {
            event.alarm(Alarm::display(
                input.title.trim(),
                -Duration::minutes(i64::from(*minutes)),
            ));
        }
        let mut cal = Calendar::new();
        cal.push(event);
        let note = save(&self.shared, &calendar, &uid, Some(&cal)).await?;
        Ok(Saved {
            calendar: calendar.id,
            uid,
            title: input.title.trim().into(),
            note,
        })
    }

    fn to_text(&self, out: &Saved) -> String {
        out.said(&format!(
            "Created \"{}\" in {} (uid {})",
            out.title, out.calendar, out.uid
        ))
    }
}

/// `value` moved by `seconds`, keeping its form (UTC, zoned or floating).
fn shift(value: &DatePerhapsTime, utc: i64, seconds: i64) -> DatePerhapsTime {
    match value {
        DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, tzid }) => {
            DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone {
                date_time: *date_time + Duration::seconds(seconds),
                tzid: tzid.clone(),
            })
        }
        DatePerhapsTime::DateTime(CalendarDateTime::Floating(naive)) => DatePerhapsTime::DateTime(
            CalendarDateTime::Floating(*naive + Duration::seconds(seconds)),
        ),
        DatePerhapsTime::Date(date) => {
            DatePerhapsTime::Date(*date + Duration::days(seconds / 86_400))
        }
        DatePerhapsTime::DateTime(CalendarDateTime::Utc(_)) => ics::utc_of(utc + seconds).into(),
    }
}

fn apply_details(
    event: &mut Event,
    location: Option<&str>,
    description: Option<&str>,
    attendees: Option<&[String]>,
) {
    if let Some(location) = location {
        event.location(location);
    }
    if let Some(description) = description {
        event.description(description);
    }
    if let Some(attendees) = attendees {
        event.remove_multi_property("ATTENDEE");
        for a in attendees {
            event.attendee(Attendee::new(format!("mailto:{a}")));
        }
    }
}

// ---------------------------------------------------------------- calendar_update

pub struct Update {
    pub shared: Arc<Shared>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateInput {
    /// The event's uid (from calendar_check).
    pub uid: String,
    #[serde(default)]
    pub calendar: Option<String>,
    /// Change only this instance of a recurring event (its `instance` from calendar_check).
    #[serde(default)]
    pub instance: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub start: Option<String>,
    #[serde(default)]
    pub end: Option<String>,
    #[serde(default)]
    pub timezone: Option<String>,
    #[serde(default)]
    pub location: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Replaces the attendee list.
    #[serde(default)]
    pub attendees: Option<Vec<String>>,
    /// Replaces the recurrence rule of the series (`""` makes it a single event).
    #[serde(default)]
    pub recurrence: Option<String>,
}

/// The master event, or the override of `instance` (made from the master when missing).
fn target<'a>(
    cal: &'a mut Calendar,
    tool: &str,
    instance: Option<i64>,
) -> Result<&'a mut Event, ToolError> {
    let position = |cal: &Calendar, want: Option<i64>| {
        cal.components.iter().position(|c| match c {
            CalendarComponent::Event(e) => ics::recurrence_id(e).ok().flatten() == want,
            _ => false,
        })
    };
    let index = match position(cal, instance) {
        Some(i) => i,
        None => {
            let Some(rid) = instance else {
                return Err(ToolError::failed("the event has no master component"));
            };
            let master_at = position(cal, None)
                .ok_or_else(|| ToolError::failed("the event has no master component"))?;
            let CalendarComponent::Event(master) = &cal.components[master_at] else {
                unreachable!()
            };
            if master.property_value("RRULE").is_none() {
                return Err(invalid(tool, "`instance` is only for recurring events"));
            }
            let duration = {
                let (_, rows) = ics::index(&{
                    let mut c = Calendar::new();
                    c.push(master.clone());
                    c
                })
                .map_err(ToolError::failed)?;
                rows[0].end - rows[0].start
            };
            // The override speaks of its instance in the series' own form (a date, a floating
            // time, or an instant), as RFC 5545 asks of RECURRENCE-ID.
            let form = ics::form_of(master);
            let mut one = master.clone();
            for key in ["RRULE", "DTSTART", "DTEND", "DURATION"] {
                one.remove_property(key);
            }
            one.remove_multi_property("EXDATE");
            one.remove_multi_property("RDATE");
            one.append_property(ics::in_form(form, rid).to_property("RECURRENCE-ID"));
            one.starts(ics::in_form(form, rid));
            one.ends(ics::in_form(form, rid + duration));
            cal.push(one);
            cal.components.len() - 1
        }
    };
    match &mut cal.components[index] {
        CalendarComponent::Event(e) => Ok(e),
        _ => unreachable!(),
    }
}

/// Marks an edited event as a new revision (RFC 5545 SEQUENCE, LAST-MODIFIED, DTSTAMP), so
/// servers and other clients see it superseding the old one.
fn bump(event: &mut Event) {
    let sequence = event.get_sequence().unwrap_or(0) + 1;
    let now = chrono::Utc::now();
    event.sequence(sequence).last_modified(now).timestamp(now);
}

/// An `instance` as calendar_check returned it, as an index value: RFC 3339 for a series in a
/// zone, a local date-time or a date (wall-clock seconds) for a floating or all-day series.
fn instance_of(tool: &str, instance: Option<&str>) -> Result<Option<i64>, ToolError> {
    let Some(text) = instance.map(str::trim) else {
        return Ok(None);
    };
    if let Ok(d) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(Some(d.timestamp()));
    }
    if let Ok(naive) = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S") {
        return Ok(Some(naive.and_utc().timestamp()));
    }
    if let Ok(date) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(Some(
            date.and_time(chrono::NaiveTime::MIN).and_utc().timestamp(),
        ));
    }
    Err(invalid(
        tool,
        format!("`instance` {text:?} must be the `instance` value calendar_check returned"),
    ))
}

#[async_trait::async_trait]
impl Tool for Update {
    type Input = UpdateInput;
    type Output = Saved;

    fn meta(&self) -> ToolMeta {
        ToolMeta::new("calendar_update", "Update event", "Change an event, or one instance of a recurring event: title, times, place, attendees, recurrence.")
            .category("calendar")
            .effects(&[EffectKind::CalendarWrite])
            .annotations(Annotations { idempotent: true, ..Default::default() })
    }

    fn effects(&self, input: &UpdateInput, _env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        let calendar = pick_one(&self.shared, "calendar_update", input.calendar.as_deref())?;
        let attendees = clean_attendees(
            "calendar_update",
            input.attendees.as_deref().unwrap_or_default(),
        )?;
        Ok(vec![Effect::CalendarWrite {
            calendar: calendar.id,
            attendees,
        }])
    }

    async fn call(&self, input: &UpdateInput, _ctx: &ToolContext) -> Result<Saved, ToolError> {
        let tool = "calendar_update";
        let calendar = pick_one(&self.shared, tool, input.calendar.as_deref())?;
        let zone = Zone::parse(input.timezone.as_deref()).map_err(|m| invalid(tool, m))?;
        let instance = instance_of(tool, input.instance.as_deref())?;
        let mut cal = load(&self.shared, tool, &calendar, &input.uid)?;
        let recurrence = match input.recurrence.as_deref() {
            Some("") => Some(None),
            Some(rule) => Some(Some(check_rrule(tool, rule)?)),
            None => None,
        };
        let event = target(&mut cal, tool, instance)?;
        let recurring =
            event.property_value("RRULE").is_some() || matches!(recurrence, Some(Some(_)));
        if let Some(title) = input.title.as_deref().filter(|t| !t.trim().is_empty()) {
            event.summary(title.trim());
        }
        if let Some(start) = &input.start {
            event.starts(
                for_storage(when(tool, "start", start, zone)?, recurring)
                    .map_err(|m| invalid(tool, m))?,
            );
        }
        if let Some(end) = &input.end {
            event.remove_property("DURATION");
            event.ends(
                for_storage(when(tool, "end", end, zone)?, recurring)
                    .map_err(|m| invalid(tool, m))?,
            );
        }
        let attendees = input
            .attendees
            .as_deref()
            .map(|a| clean_attendees(tool, a))
            .transpose()?;
        apply_details(
            event,
            input.location.as_deref(),
            input.description.as_deref(),
            attendees.as_deref(),
        );
        match recurrence {
            Some(None) => {
                event.remove_property("RRULE");
            }
            Some(Some(rule)) => {
                event.add_property("RRULE", rule);
            }
            None => {}
        }
        bump(event);
        let title = event.get_summary().unwrap_or_default().to_string();
        let note = save(&self.shared, &calendar, &input.uid, Some(&cal)).await?;
        Ok(Saved {
            calendar: calendar.id,
            uid: input.uid.clone(),
            title,
            note,
        })
    }

    fn to_text(&self, out: &Saved) -> String {
        out.said(&format!("Updated \"{}\" in {}", out.title, out.calendar))
    }
}

// ---------------------------------------------------------------- calendar_delete

pub struct Delete {
    pub shared: Arc<Shared>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteInput {
    pub uid: String,
    #[serde(default)]
    pub calendar: Option<String>,
    /// Delete only this instance of a recurring event (its `instance` from calendar_check).
    #[serde(default)]
    pub instance: Option<String>,
}

#[async_trait::async_trait]
impl Tool for Delete {
    type Input = DeleteInput;
    type Output = Saved;

    fn meta(&self) -> ToolMeta {
        ToolMeta::new(
            "calendar_delete",
            "Delete event",
            "Delete an event, or one instance of a recurring event.",
        )
        .category("calendar")
        .effects(&[EffectKind::CalendarWrite])
        .annotations(Annotations {
            destructive: true,
            idempotent: true,
            ..Default::default()
        })
    }

    fn effects(&self, input: &DeleteInput, _env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        let calendar = pick_one(&self.shared, "calendar_delete", input.calendar.as_deref())?;
        Ok(vec![Effect::CalendarWrite {
            calendar: calendar.id,
            attendees: vec![],
        }])
    }

    async fn call(&self, input: &DeleteInput, _ctx: &ToolContext) -> Result<Saved, ToolError> {
        let tool = "calendar_delete";
        let calendar = pick_one(&self.shared, tool, input.calendar.as_deref())?;
        let mut cal = load(&self.shared, tool, &calendar, &input.uid)?;
        let title = ics::events(&cal)
            .find_map(|e| e.get_summary().map(String::from))
            .unwrap_or_default();
        let note = match instance_of(tool, input.instance.as_deref())? {
            None => save(&self.shared, &calendar, &input.uid, None).await?,
            Some(rid) => {
                // One instance: drop its override, and exclude it from the series (EXDATE).
                cal.components.retain(|c| {
                    !matches!(c, CalendarComponent::Event(e) if ics::recurrence_id(e).ok().flatten() == Some(rid))
                });
                let master = target(&mut cal, tool, None)?;
                if master.property_value("RRULE").is_none() {
                    return Err(invalid(tool, "`instance` is only for recurring events"));
                }
                master.append_multi_property(
                    ics::in_form(ics::form_of(master), rid).to_property("EXDATE"),
                );
                bump(master);
                save(&self.shared, &calendar, &input.uid, Some(&cal)).await?
            }
        };
        Ok(Saved {
            calendar: calendar.id,
            uid: input.uid.clone(),
            title,
            note,
        })
    }

    fn to_text(&self, out: &Saved) -> String {
        out.said(&format!("Deleted \"{}\" from {}", out.title, out.calendar))
    }
}

// ---------------------------------------------------------------- import / export

pub struct Import {
    pub shared: Arc<Shared>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportInput {
    /// An `.ics` file.
    pub path: String,
    /// Calendar id or name (default `local`).
    #[serde(default)]
    pub calendar: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct ImportOutput {
    pub calendar: String,
    pub imported: usize,
    /// Events that could not be read, each with why.
    pub skipped: Vec<String>,
    /// How the file was read where it needed interpreting (a zone it defines under a name no
    /// zone database knows, read as its IANA match).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[async_trait::async_trait]
impl Tool for Import {
    type Input = ImportInput;
    type Output = ImportOutput;

    fn meta(&self) -> ToolMeta {
        ToolMeta::new("calendar_import", "Import .ics", "Import the events of an iCalendar (.ics) file into a calendar; existing UIDs are replaced.")
            .category("calendar")
            .effects(&[EffectKind::FsRead, EffectKind::CalendarWrite])
    }

    fn effects(&self, input: &ImportInput, env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        let calendar = pick_one(&self.shared, "calendar_import", input.calendar.as_deref())?;
        Ok(vec![
            Effect::FsRead {
                path: env.resolve_path(&input.path).to_string_lossy().into_owned(),
            },
            Effect::CalendarWrite {
                calendar: calendar.id,
                attendees: vec![],
            },
        ])
    }

    async fn call(
        &self,
        input: &ImportInput,
        ctx: &ToolContext,
    ) -> Result<ImportOutput, ToolError> {
        let tool = "calendar_import";
        let calendar = pick_one(&self.shared, tool, input.calendar.as_deref())?;
        let path = ctx.env.resolve_path(&input.path);
        let bytes = std::fs::read(&path)
            .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
        let text = String::from_utf8_lossy(&bytes);
        let parsed =
            ics::parse_all(&text).map_err(|m| invalid(tool, format!("{}: {m}", path.display())))?;
        let mut skipped = Vec::new();
        let mut notes = Vec::new();
        let mut imported = 0;
        {
            let mut conn = self.shared.db.lock().unwrap();
            let tx = conn.transaction().map_err(db_error)?;
            // Zones a file defines under names no zone database knows become their IANA match.
            let parsed: Vec<Calendar> = parsed
                .into_iter()
                .map(|mut cal| {
                    notes.extend(crate::vtimezone::adopt(&mut cal));
                    cal
                })
                .collect();
            for (uid, object) in parsed.into_iter().flat_map(ics::split_by_uid) {
                match ics::index(&object) {
                    Ok((_, rows)) => {
                        let existing = db::object(&tx, &calendar.id, &uid).map_err(db_error)?;
                        let stored = Object {
                            calendar: calendar.id.clone(),
                            uid,
                            ics: ics::to_text(&object),
                            href: existing.as_ref().and_then(|o| o.href.clone()),
                            etag: existing.and_then(|o| o.etag),
                            dirty: calendar.account.is_some(),
                            deleted: false,
                        };
                        db::put_object(&tx, &stored, &rows).map_err(db_error)?;
                        imported += 1;
                    }
                    Err(why) => skipped.push(format!("{uid}: {why}")),
                }
            }
            tx.commit().map_err(db_error)?;
        }
        let note = match &calendar.account {
            Some(account) => match self.shared.sync_account(account).await {
                Ok(_) => None,
                Err(e) => Some(format!("imported here and queued for the server ({e})")),
            },
            None => None,
        };
        notes.sort();
        notes.dedup();
        Ok(ImportOutput {
            calendar: calendar.id,
            imported,
            skipped,
            zones: notes,
            note,
        })
    }

    fn to_text(&self, out: &ImportOutput) -> String {
        let mut text = format!("Imported {} event(s) into {}", out.imported, out.calendar);
        for s in &out.skipped {
            text.push_str(&format!("\nskipped {s}"));
        }
        text
    }
}

pub struct Export {
    pub shared: Arc<Shared>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportInput {
    /// Where to write the `.ics` file.
    pub path: String,
    /// Calendar id or name (default `local`).
    #[serde(default)]
    pub calendar: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct ExportOutput {
    pub path: String,
    pub events: usize,
}

#[async_trait::async_trait]
impl Tool for Export {
    type Input = ExportInput;
    type Output = ExportOutput;

    fn meta(&self) -> ToolMeta {
        ToolMeta::new(
            "calendar_export",
            "Export .ics",
            "Write a calendar's events (with their time zones) to an iCalendar (.ics) file.",
        )
        .category("calendar")
        .effects(&[EffectKind::CalendarRead, EffectKind::FsWrite])
    }

    fn effects(&self, input: &ExportInput, env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        let calendar = pick_one(&self.shared, "calendar_export", input.calendar.as_deref())?;
        Ok(vec![
            Effect::CalendarRead {
                calendar: calendar.id,
            },
            Effect::FsWrite {
                path: env.resolve_path(&input.path).to_string_lossy().into_owned(),
            },
        ])
    }

    async fn call(
        &self,
        input: &ExportInput,
        ctx: &ToolContext,
    ) -> Result<ExportOutput, ToolError> {
        let calendar = pick_one(&self.shared, "calendar_export", input.calendar.as_deref())?;
        let objects =
            db::objects(&self.shared.db.lock().unwrap(), &calendar.id, false).map_err(db_error)?;
        let mut out = Calendar::new();
        out.name(&calendar.name);
        let mut zones = std::collections::BTreeSet::new();
        let mut count = 0;
        for object in objects.iter().filter(|o| !o.deleted) {
            let Ok(cal) = ics::parse(&object.ics) else {
                continue;
            };
            for component in cal.components {
                match component {
                    CalendarComponent::Other(o)
                        if o.component_kind() == "VTIMEZONE"
                            && zones.insert(
                                o.property_value("TZID").unwrap_or_default().to_string(),
                            ) =>
                    {
                        out.push(CalendarComponent::Other(o));
                    }
                    CalendarComponent::Event(e) => {
                        count += 1;
                        out.push(e);
                    }
                    _ => {}
                }
            }
        }
        let path = ctx.env.resolve_path(&input.path);
        cowork_store::write_atomically(&path, ics::to_text(&out).as_bytes())
            .map_err(|e| ToolError::failed(format!("cannot write {}: {e}", path.display())))?;
        Ok(ExportOutput {
            path: path.display().to_string(),
            events: count,
        })
    }

    fn to_text(&self, out: &ExportOutput) -> String {
        format!("Wrote {} event(s) to {}", out.events, out.path)
    }
}

// ---------------------------------------------------------------- calendar_list / calendar_sync

pub struct List {
    pub shared: Arc<Shared>,
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct ListInput {}

#[derive(Serialize, JsonSchema)]
pub struct ListOutput {
    pub calendars: Vec<CalendarInfo>,
    /// Recent sync conflicts and how they were resolved (both versions are kept).
    pub conflicts: Vec<db::Conflict>,
    /// Local changes waiting to be pushed to a server.
    pub queued_changes: i64,
}

#[async_trait::async_trait]
impl Tool for List {
    type Input = ListInput;
    type Output = ListOutput;

    fn meta(&self) -> ToolMeta {
        read_meta(
            "calendar_list",
            "List calendars",
            "List calendars (local and CalDAV), their last sync, queued changes and sync conflicts.",
        )
    }

    fn effects(&self, _input: &ListInput, _env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        read_effects(&self.shared, "calendar_list", None)
    }

    async fn call(&self, _input: &ListInput, _ctx: &ToolContext) -> Result<ListOutput, ToolError> {
        let conn = self.shared.db.lock().unwrap();
        let queued_changes = conn
            .query_row(
                "SELECT count(*) FROM calendar_objects WHERE dirty = 1",
                [],
                |r| r.get(0),
            )
            .map_err(db_error)?;
        Ok(ListOutput {
            calendars: db::calendars(&conn).map_err(db_error)?,
            conflicts: db::conflicts(&conn).map_err(db_error)?,
            queued_changes,
        })
    }

    fn to_text(&self, out: &ListOutput) -> String {
        let mut lines: Vec<String> = out
            .calendars
            .iter()
            .map(|c| {
                let sync = match (&c.account, &c.last_error, &c.last_sync) {
                    (None, _, _) => "local".to_string(),
                    (Some(a), Some(e), _) => format!("{a}: last sync failed: {e}"),
                    (Some(a), None, Some(t)) => format!("{a}: synced {t}"),
                    (Some(a), None, None) => format!("{a}: never synced"),
                };
                format!("{}  {}  ({sync})", c.id, c.name)
            })
            .collect();
        if out.queued_changes > 0 {
            lines.push(format!(
                "{} change(s) queued for the server",
                out.queued_changes
            ));
        }
        lines.extend(
            out.conflicts
                .iter()
                .map(|c| format!("conflict {}: {}", c.created_at, c.detail)),
        );
        lines.join("\n")
    }
}

pub struct SyncCalendars {
    pub shared: Arc<Shared>,
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct SyncInput {
    /// A CalDAV account name; default all of them.
    #[serde(default)]
    pub account: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct SyncOutput {
    pub reports: Vec<crate::SyncReport>,
}

fn caldav_accounts(shared: &Shared, only: Option<&str>) -> Result<Vec<String>, ToolError> {
    let all = cowork_store::accounts::list(&shared.db.lock().unwrap(), Some("caldav"))
        .map_err(db_error)?;
    Ok(all
        .into_iter()
        .map(|a| a.name)
        .filter(|n| only.is_none_or(|o| o == n))
        .collect())
}

#[async_trait::async_trait]
impl Tool for SyncCalendars {
    type Input = SyncInput;
    type Output = SyncOutput;

    fn meta(&self) -> ToolMeta {
        ToolMeta::new(
            "calendar_sync",
            "Sync calendars",
            "Two-way sync of CalDAV calendars now: push queued local changes, pull the server's.",
        )
        .category("calendar")
        .effects(&[EffectKind::CalendarRead, EffectKind::CalendarWrite])
        .annotations(Annotations {
            idempotent: true,
            ..Default::default()
        })
    }

    fn effects(&self, input: &SyncInput, _env: &EffectEnv) -> Result<Vec<Effect>, ToolError> {
        Ok(caldav_accounts(&self.shared, input.account.as_deref())?
            .into_iter()
            .flat_map(|a| {
                [
                    Effect::CalendarRead {
                        calendar: a.clone(),
                    },
                    Effect::CalendarWrite {
                        calendar: a,
                        attendees: vec![],
                    },
                ]
            })
            .collect())
    }

    async fn call(&self, input: &SyncInput, _ctx: &ToolContext) -> Result<SyncOutput, ToolError> {
        let accounts = caldav_accounts(&self.shared, input.account.as_deref())?;
        if accounts.is_empty() {
            return Err(ToolError::NotConfigured {
                tool: "calendar_sync".into(),
                what: match &input.account {
                    Some(a) => format!("no CalDAV account {a:?}"),
                    None => "no CalDAV account".into(),
                },
                how: "add one in Settings → Accounts, or `cowork account add NAME --caldav URL --user NAME`".into(),
            });
        }
        let mut reports = Vec::new();
        for account in accounts {
            reports.extend(self.shared.sync_account(&account).await?);
        }
        Ok(SyncOutput { reports })
    }

    fn to_text(&self, out: &SyncOutput) -> String {
        out.reports
            .iter()
            .map(|r| {
                let mut line = format!(
                    "{}: pushed {}, pulled {}, removed {} here and {} there",
                    r.calendar, r.pushed, r.pulled, r.removed_here, r.removed_there
                );
                for c in &r.conflicts {
                    line.push_str(&format!("\n  conflict: {c}"));
                }
                for s in &r.skipped {
                    line.push_str(&format!("\n  skipped: {s}"));
                }
                if let Some(e) = &r.error {
                    line.push_str(&format!(
                        "\n  stopped: {e} (queued changes are kept and retried)"
                    ));
                }
                line
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    #[test]
    fn free_slots_subtract_busy_time_from_working_windows() {
        let windows = [(0, 480), (1000, 1480)];
        let mut busy = vec![(60, 120), (100, 200), (400, 1100)];
        assert_eq!(
            free_slots(&windows, &mut busy, 60),
            vec![(0, 60), (200, 400), (1100, 1480)]
        );
        assert_eq!(free_slots(&windows, &mut busy, 250), vec![(1100, 1480)]);
    }

    #[test]
    fn a_date_is_an_all_day_start() {
        assert!(
            matches!(ics::parse_when("start", "2026-11-23", None).unwrap(), DatePerhapsTime::Date(d) if d == NaiveDate::from_ymd_opt(2026, 11, 23).unwrap())
        );
    }
}
