//! Changing events: `calendar_create`, `calendar_update`, `calendar_delete`, and the iCalendar
//! editing they share (saving, instances, overrides).

use super::*;

// ---------------------------------------------------------------- writes

/// A write that was committed: its history entry, and the sync's note when there is one.
pub(super) struct Written {
    pub change: i64,
    pub note: Option<String>,
}

/// Saves an object (`None` removes it) and its history entry in one transaction, then for a
/// CalDAV calendar tries to push it now (an offline edit stays queued).
pub(super) async fn save(
    shared: &Shared,
    calendar: &CalendarInfo,
    uid: &str,
    cal: Option<&Calendar>,
    record: &history::Record<'_>,
) -> Result<Written, ToolError> {
    let change = commit(shared, calendar, uid, cal, record)?;
    let note = match calendar.account {
        None => None,
        Some(_) => push_now(shared, calendar).await,
    };
    Ok(Written { change, note })
}

fn commit(
    shared: &Shared,
    calendar: &CalendarInfo,
    uid: &str,
    cal: Option<&Calendar>,
    record: &history::Record<'_>,
) -> Result<i64, ToolError> {
    let mut conn = shared.db.lock().unwrap();
    let tx = conn.transaction().map_err(db_error)?;
    let existing = db::object(&tx, &calendar.id, uid).map_err(db_error)?;
    let before = existing
        .as_ref()
        .filter(|o| !o.deleted)
        .map(|o| o.ics.clone());
    if let Some(undone) = record.undoes {
        super::undo::still_as_left(&tx, undone, before.as_deref())?;
    }
    let after = match cal {
        Some(cal) => {
            let (_, rows) = ics::index(cal)
                .map_err(|m| ToolError::failed(format!("the event would be invalid: {m}")))?;
            let object = edited(calendar, uid.into(), ics::to_text(cal), existing.as_ref());
            db::put_object(&tx, &object, &rows).map_err(db_error)?;
            Some(object.ics)
        }
        None => {
            match existing {
                // A server copy must be deleted there first: keep a tombstone until it is.
                Some(o) if calendar.account.is_some() && o.href.is_some() => {
                    let tombstone = Object {
                        dirty: true,
                        deleted: true,
                        ..o
                    };
                    db::put_object(&tx, &tombstone, &[]).map_err(db_error)?
                }
                _ => db::remove_object(&tx, &calendar.id, uid).map_err(db_error)?,
            }
            None
        }
    };
    let texts = (before.as_deref(), after.as_deref());
    let change = history::record(&tx, record, &calendar.id, uid, texts).map_err(db_error)?;
    tx.commit().map_err(db_error)?;
    Ok(change)
}

/// Pushes a CalDAV calendar's queued changes; what the person should know when it did not.
async fn push_now(shared: &Shared, calendar: &CalendarInfo) -> Option<String> {
    match shared.sync_one(calendar).await {
        Ok(report) if report.error.is_none() => (!report.conflicts.is_empty())
            .then(|| format!("saved here; sync: {}", report.conflicts.join("; "))),
        Ok(report) => Some(format!(
            "saved here and queued: the sync stopped ({}); it is retried at the next sync",
            report.error.unwrap_or_default()
        )),
        Err(e) => Some(format!(
            "saved here and queued: the server is not reachable now ({e}); it syncs when it is"
        )),
    }
}

/// An object with new text, keeping what the server knows of the one stored (`existing`): in a
/// CalDAV calendar it is queued for the next push.
pub(super) fn edited(
    calendar: &CalendarInfo,
    uid: String,
    text: String,
    existing: Option<&Object>,
) -> Object {
    Object {
        calendar: calendar.id.clone(),
        uid,
        ics: text,
        href: existing.and_then(|o| o.href.clone()),
        etag: existing.and_then(|o| o.etag.clone()),
        dirty: calendar.account.is_some(),
        deleted: false,
    }
}

/// A write to one calendar (default `local`) that invites `attendees` (the call's, checked)
/// and, for an existing event (`uid`), everyone it already invites, as written: changing or
/// deleting it mails them too (a server with scheduling sends updates and cancellations).
fn write_plan(
    shared: &Shared,
    calendar: Option<&str>,
    uid: Option<&str>,
    attendees: &[String],
) -> Result<CallPlan, ToolError> {
    let calendar = pick_one(shared, calendar)?;
    let mut attendees = clean_attendees(attendees)?;
    if let Some(uid) = uid {
        let stored = db::object(&shared.db.lock().unwrap(), &calendar.id, uid).map_err(db_error)?;
        let stored = stored.filter(|o| !o.deleted);
        attendees.extend(stored.map(|o| attendees_in(&o.ics)).unwrap_or_default());
    }
    attendees.sort();
    attendees.dedup();
    Ok(CallPlan::new(vec![Effect::CalendarWrite {
        calendar: calendar.id,
        attendees,
    }]))
}

/// Whom an object's events invite, as written (property names are case-insensitive, RFC 5545
/// §3.1; a value that is no address is still someone a server may try to reach, so it is kept).
pub(super) fn attendees_in(text: &str) -> Vec<String> {
    let Ok(calendars) = ics::parse_all(text) else {
        return Vec::new();
    };
    let mut out: Vec<String> = (calendars.iter())
        .flat_map(ics::events)
        .flat_map(|e| {
            let single = e.properties().values().cloned();
            single.chain(e.multi_properties().values().flatten().cloned())
        })
        .filter(|p| p.key().eq_ignore_ascii_case("ATTENDEE"))
        .map(|p| {
            let value = p.value().trim();
            match value.get(..7) {
                Some(scheme) if scheme.eq_ignore_ascii_case("mailto:") => value[7..].to_string(),
                _ => value.to_string(),
            }
        })
        .filter(|a| !a.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

pub(super) fn load(
    shared: &Shared,
    calendar: &CalendarInfo,
    uid: &str,
) -> Result<Calendar, ToolError> {
    let object = db::object(&shared.db.lock().unwrap(), &calendar.id, uid)
        .map_err(db_error)?
        .filter(|o| !o.deleted)
        .ok_or_else(|| {
            ToolError::invalid(format!(
                "no event {uid:?} in calendar {}: find its uid with calendar_check",
                calendar.id
            ))
        })?;
    // Evaluable, so instances of a series in a zone the object defines itself are found.
    let cal = ics::parse(&object.ics).map_err(ToolError::failed)?;
    Ok(ics::evaluable(&cal).into_owned())
}

pub(super) fn when(field: &str, text: &str, zone: Zone) -> Result<DatePerhapsTime, ToolError> {
    ics::parse_when(field, text, zone.iana()).map_err(ToolError::invalid)
}

/// Single events are written in UTC (every server reads that); recurring ones keep their zone
/// so the series follows daylight saving time.
pub(super) fn for_storage(
    value: DatePerhapsTime,
    recurring: bool,
) -> Result<DatePerhapsTime, String> {
    match value {
        DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { .. }) if !recurring => {
            Ok(ics::utc_of(ics::to_index(&value)?).into())
        }
        other => Ok(other),
    }
}

pub(super) fn check_rrule(rule: &str) -> Result<String, ToolError> {
    let rule = rule.trim().trim_start_matches("RRULE:").to_string();
    format!("DTSTART:20260101T090000Z\nRRULE:{rule}")
        .parse::<rrule::RRuleSet>()
        .map_err(|e| ToolError::invalid(format!("`recurrence` {rule:?} is not an RFC 5545 RRULE ({e}); e.g. FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10")))?;
    Ok(rule)
}

pub(super) fn clean_attendees(attendees: &[String]) -> Result<Vec<String>, ToolError> {
    attendees
        .iter()
        .map(|a| {
            let a = a.trim().trim_start_matches("mailto:").to_string();
            if a.contains('@') && !a.contains(char::is_whitespace) {
                Ok(a)
            } else {
                Err(ToolError::invalid(format!(
                    "attendee {a:?} is not an email address"
                )))
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
    pub end: Option<String>,
    /// IANA zone for times without an offset (default the computer's).
    pub timezone: Option<String>,
    pub location: Option<String>,
    pub description: Option<String>,
    /// Email addresses to invite. A server with scheduling sends them invitations.
    #[serde(default)]
    pub attendees: Vec<String>,
    /// An RFC 5545 RRULE, e.g. `FREQ=WEEKLY;BYDAY=TU;COUNT=8`.
    pub recurrence: Option<String>,
    /// Reminders, in minutes before the start.
    #[serde(default)]
    pub reminders_minutes: Vec<u32>,
    /// Calendar id or name (default `local`).
    pub calendar: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct Saved {
    pub calendar: String,
    pub uid: String,
    pub title: String,
    /// This change in the calendar's history: `calendar_undo` takes it back.
    pub change: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Saved {
    pub(super) fn new(calendar: String, uid: String, title: String, written: Written) -> Saved {
        Saved {
            calendar,
            uid,
            title,
            change: written.change,
            note: written.note,
        }
    }

    /// `what` happened, how to take it back, and the sync note when there is one.
    pub(super) fn said(&self, what: &str) -> String {
        let undo = format!("{what} (change #{}, can be undone)", self.change);
        match &self.note {
            Some(note) => format!("{undo} — {note}"),
            None => undo,
        }
    }
}

fn create_text(out: &Saved) -> String {
    out.said(&format!(
        "Created \"{}\" in {} (uid {})",
        out.title, out.calendar, out.uid
    ))
}

fn update_text(out: &Saved) -> String {
    out.said(&format!("Updated \"{}\" in {}", out.title, out.calendar))
}

fn delete_text(out: &Saved) -> String {
    out.said(&format!("Deleted \"{}\" from {}", out.title, out.calendar))
}

/// `value` moved by `seconds`, keeping its form (UTC, zoned or floating).
pub(super) fn shift(value: &DatePerhapsTime, utc: i64, seconds: i64) -> DatePerhapsTime {
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

/// The default end: an hour after the start as clocks show it — its wall time, except across a
/// clock change (a start at a skipped 02:30 is 03:30: its end is 04:30, not 03:30).
fn an_hour_later(start: &DatePerhapsTime, utc: i64) -> DatePerhapsTime {
    match start {
        DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { tzid, .. }) => {
            match ics::resolve_tz(tzid) {
                Some(tz) => {
                    let wall = ics::utc_of(utc + 3600).with_timezone(&tz).naive_local();
                    DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone {
                        date_time: wall,
                        tzid: tzid.clone(),
                    })
                }
                None => shift(start, utc, 3600),
            }
        }
        _ => shift(start, utc, 3600),
    }
}

pub(super) fn apply_details(
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

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateInput {
    /// The event's uid (from calendar_check).
    pub uid: String,
    pub calendar: Option<String>,
    /// Change only this instance of a recurring event (its `instance` from calendar_check).
    pub instance: Option<String>,
    pub title: Option<String>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub timezone: Option<String>,
    pub location: Option<String>,
    pub description: Option<String>,
    /// Replaces the attendee list.
    pub attendees: Option<Vec<String>>,
    /// Replaces the recurrence rule of the series (`""` makes it a single event).
    pub recurrence: Option<String>,
}

/// The master event, or the override of `instance` (made from the master when missing).
pub(super) fn target(cal: &mut Calendar, instance: Option<i64>) -> Result<&mut Event, ToolError> {
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
                return Err(ToolError::invalid(
                    "`instance` is only for recurring events",
                ));
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
pub(super) fn bump(event: &mut Event) {
    let sequence = event.get_sequence().unwrap_or(0).saturating_add(1);
    let now = chrono::Utc::now();
    event.sequence(sequence).last_modified(now).timestamp(now);
}

/// An `instance` as calendar_check returned it, as an index value: RFC 3339 for a series in a
/// zone, a local date-time or a date (wall-clock seconds) for a floating or all-day series.
pub(super) fn instance_of(instance: Option<&str>) -> Result<Option<i64>, ToolError> {
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
    Err(ToolError::invalid(format!(
        "`instance` {text:?} must be the `instance` value calendar_check returned"
    )))
}

// ---------------------------------------------------------------- calendar_delete

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteInput {
    pub uid: String,
    pub calendar: Option<String>,
    /// Delete only this instance of a recurring event (its `instance` from calendar_check).
    pub instance: Option<String>,
}

#[tools(list = write_tools)]
impl CalendarTools {
    #[tool(name = "calendar_create", title = "Create event", category = "calendar",
           effects = [CalendarWrite], undoable, plan = Self::plan_create, text = create_text,
           description = "Add an event (timed or all-day; location, description, attendees, recurrence, reminders) to a calendar.")]
    async fn create(&self, input: &CreateInput, ctx: &ToolContext) -> ToolResult<Saved> {
        if input.title.trim().is_empty() {
            return Err(ToolError::invalid("`title` is empty"));
        }
        let calendar = pick_one(&self.shared, input.calendar.as_deref())?;
        let zone = Zone::parse(input.timezone.as_deref()).map_err(ToolError::invalid)?;
        let recurrence = input.recurrence.as_deref().map(check_rrule).transpose()?;
        let start = when("start", &input.start, zone)?;
        let end = match &input.end {
            Some(end) => when("end", end, zone)?,
            None => match &start {
                DatePerhapsTime::Date(d) => DatePerhapsTime::Date(d.succ_opt().unwrap_or(*d)),
                timed => {
                    let utc = ics::to_index(timed).map_err(ToolError::invalid)?;
                    an_hour_later(timed, utc)
                }
            },
        };
        if ics::to_index(&end).map_err(ToolError::invalid)?
            < ics::to_index(&start).map_err(ToolError::invalid)?
        {
            return Err(ToolError::invalid("`end` is before `start`"));
        }
        let uid = format!("{}@cowork", uuid::Uuid::new_v4());
        let mut event = Event::new();
        event
            .uid(&uid)
            .summary(input.title.trim())
            .timestamp(chrono::Utc::now());
        let recurring = recurrence.is_some();
        event.starts(for_storage(start, recurring).map_err(ToolError::invalid)?);
        event.ends(for_storage(end, recurring).map_err(ToolError::invalid)?);
        apply_details(
            &mut event,
            input.location.as_deref(),
            input.description.as_deref(),
            Some(&clean_attendees(&input.attendees)?),
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
        let title = input.title.trim();
        let record = history::Record::new(Action::Created, ctx, title);
        let written = save(&self.shared, &calendar, &uid, Some(&cal), &record).await?;
        Ok(Saved::new(calendar.id, uid, title.into(), written))
    }

    fn plan_create(&self, input: &CreateInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        write_plan(
            &self.shared,
            input.calendar.as_deref(),
            None,
            &input.attendees,
        )
    }

    #[tool(name = "calendar_update", title = "Update event", category = "calendar",
           effects = [CalendarWrite], idempotent, undoable, plan = Self::plan_update, text = update_text,
           description = "Change an event, or one instance of a recurring event: title, times, place, attendees, recurrence.")]
    async fn update(&self, input: &UpdateInput, ctx: &ToolContext) -> ToolResult<Saved> {
        let calendar = pick_one(&self.shared, input.calendar.as_deref())?;
        let zone = Zone::parse(input.timezone.as_deref()).map_err(ToolError::invalid)?;
        let instance = instance_of(input.instance.as_deref())?;
        let mut cal = load(&self.shared, &calendar, &input.uid)?;
        let recurrence = match input.recurrence.as_deref() {
            Some("") => Some(None),
            Some(rule) => Some(Some(check_rrule(rule)?)),
            None => None,
        };
        let event = target(&mut cal, instance)?;
        let recurring =
            event.property_value("RRULE").is_some() || matches!(recurrence, Some(Some(_)));
        if let Some(title) = input.title.as_deref().filter(|t| !t.trim().is_empty()) {
            event.summary(title.trim());
        }
        if let Some(start) = &input.start {
            event.starts(
                for_storage(when("start", start, zone)?, recurring).map_err(ToolError::invalid)?,
            );
        }
        if let Some(end) = &input.end {
            event.remove_property("DURATION");
            event
                .ends(for_storage(when("end", end, zone)?, recurring).map_err(ToolError::invalid)?);
        }
        let attendees = input
            .attendees
            .as_deref()
            .map(clean_attendees)
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
        let record = history::Record::new(Action::Updated, ctx, &title);
        let written = save(&self.shared, &calendar, &input.uid, Some(&cal), &record).await?;
        Ok(Saved::new(calendar.id, input.uid.clone(), title, written))
    }

    fn plan_update(&self, input: &UpdateInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        let attendees = input.attendees.as_deref().unwrap_or_default();
        let calendar = input.calendar.as_deref();
        write_plan(&self.shared, calendar, Some(&input.uid), attendees)
    }

    #[tool(name = "calendar_delete", title = "Delete event", category = "calendar",
           effects = [CalendarWrite], destructive, idempotent, undoable, text = delete_text,
           plan = Self::plan_delete, description = "Delete an event, or one instance of a recurring event.")]
    async fn delete(&self, input: &DeleteInput, ctx: &ToolContext) -> ToolResult<Saved> {
        let calendar = pick_one(&self.shared, input.calendar.as_deref())?;
        let mut cal = load(&self.shared, &calendar, &input.uid)?;
        let title = ics::events(&cal)
            .find_map(|e| e.get_summary().map(String::from))
            .unwrap_or_default();
        let written = match instance_of(input.instance.as_deref())? {
            None => {
                let record = history::Record::new(Action::Deleted, ctx, &title);
                save(&self.shared, &calendar, &input.uid, None, &record).await?
            }
            Some(rid) => {
                // One instance: drop its override, and exclude it from the series (EXDATE).
                cal.components.retain(|c| {
                    !matches!(c, CalendarComponent::Event(e) if ics::recurrence_id(e).ok().flatten() == Some(rid))
                });
                let master = target(&mut cal, None)?;
                if master.property_value("RRULE").is_none() {
                    return Err(ToolError::invalid(
                        "`instance` is only for recurring events",
                    ));
                }
                master.append_multi_property(
                    ics::in_form(ics::form_of(master), rid).to_property("EXDATE"),
                );
                bump(master);
                let record = history::Record::new(Action::Updated, ctx, &title);
                save(&self.shared, &calendar, &input.uid, Some(&cal), &record).await?
            }
        };
        Ok(Saved::new(calendar.id, input.uid.clone(), title, written))
    }

    fn plan_delete(&self, input: &DeleteInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        write_plan(
            &self.shared,
            input.calendar.as_deref(),
            Some(&input.uid),
            &[],
        )
    }
}
