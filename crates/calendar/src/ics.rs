//! iCalendar (RFC 5545) in and out: parsing with `icalendar`, recurrence with `rrule`, and the
//! derived index rows range queries need. The object's iCalendar text stays the source of truth;
//! everything here is recomputed from it.

use crate::zone::EventZone;
use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use icalendar::{
    Calendar, CalendarComponent, CalendarDateTime, Component, DatePerhapsTime, Event, EventLike,
    Property,
};
use std::collections::BTreeMap;

/// What a range query needs of one VEVENT (a master or an override of one instance).
#[derive(Clone, Debug, PartialEq)]
pub struct IndexRow {
    pub recurrence_id: Option<i64>,
    pub start: i64,
    pub end: i64,
    /// Last instant any instance can end; `None` for a series without end.
    pub series_end: Option<i64>,
    /// The recurrence set in `rrule`'s text form (DTSTART, RRULE, RDATE, EXDATE), for a master.
    pub rrule: Option<String>,
    pub all_day: bool,
    /// A date (all day) or a floating date-time: local wherever the person is. Its `start`,
    /// `end`, `series_end` and `recurrence_id` are then wall-clock seconds (the naive time read
    /// as if UTC), placed in a zone only when a query names one.
    pub floating: bool,
    pub summary: String,
    pub location: String,
    pub busy: bool,
    /// STATUS:CANCELLED: shown as called off, and never busy.
    pub cancelled: bool,
    /// The event's reminders (VALARM triggers) as JSON, `None` without any.
    pub alarms: Option<String>,
    /// A zoned DTSTART as written, its zone and wall-clock value (not stored): a time a clock
    /// change skips is placed after the gap, yet a THISANDFUTURE change moves later instances
    /// by the time as written.
    pub written_start: Option<(EventZone, i64)>,
}

/// When a reminder (a VALARM's TRIGGER) is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlarmTrigger {
    /// Seconds from the instance's start (negative: before it).
    FromStart(i64),
    /// Seconds from the instance's end (`RELATED=END`).
    FromEnd(i64),
    /// At this instant (UTC seconds), whichever instance.
    At(i64),
}

impl AlarmTrigger {
    /// When it is due for an instance running from `start` to `end`.
    pub fn due(self, start: i64, end: i64) -> i64 {
        match self {
            AlarmTrigger::FromStart(s) => start + s,
            AlarmTrigger::FromEnd(s) => end + s,
            AlarmTrigger::At(t) => t,
        }
    }
}

/// The reminders an event asks for. EMAIL alarms are the server's to send; DISPLAY and AUDIO
/// ones (and any other kind) are shown. Read here rather than with `icalendar::Trigger`, whose
/// duration parser refuses the minus sign every "before the start" trigger has.
pub(crate) fn alarms_of(event: &Event) -> Vec<AlarmTrigger> {
    event
        .components()
        .iter()
        .filter(|c| c.component_kind().eq_ignore_ascii_case("VALARM"))
        .filter(|c| {
            !c.property_value("ACTION")
                .is_some_and(|a| a.trim().eq_ignore_ascii_case("EMAIL"))
        })
        .filter_map(|c| trigger_of(c.properties().get("TRIGGER")?))
        .collect()
}

fn trigger_of(prop: &Property) -> Option<AlarmTrigger> {
    let value = prop.value().trim();
    let param = |key: &str| {
        prop.params()
            .get(key)
            .map(|p| p.value().to_ascii_uppercase())
    };
    if param("VALUE").as_deref() == Some("DATE-TIME") {
        // RFC 5545 3.8.6.3: an absolute trigger is in UTC.
        let at =
            NaiveDateTime::parse_from_str(value.trim_end_matches('Z'), "%Y%m%dT%H%M%S").ok()?;
        return Some(AlarmTrigger::At(at.and_utc().timestamp()));
    }
    let seconds = parse_duration(value).ok()?;
    Some(if param("RELATED").as_deref() == Some("END") {
        AlarmTrigger::FromEnd(seconds)
    } else {
        AlarmTrigger::FromStart(seconds)
    })
}

pub fn parse(text: &str) -> Result<Calendar, String> {
    // A byte-order mark (Windows tools write one) is not part of the data.
    let text = text.trim_start_matches('\u{feff}');
    if !text.trim_start().starts_with("BEGIN:VCALENDAR") {
        return Err("not iCalendar data: it must start with BEGIN:VCALENDAR".into());
    }
    text.parse::<Calendar>().map_err(|e| {
        // The parser's message names its combinator ("in Many0"); the person needs the line.
        let line = e
            .split("at line ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<usize>().ok());
        let content = line.and_then(|n| text.lines().nth(n.saturating_sub(1)));
        match (line, content) {
            (Some(n), Some(content)) if !content.trim().is_empty() => {
                format!("not valid iCalendar at line {n}: {content:?}")
            }
            (Some(_), _) if !text.contains("END:VCALENDAR") => {
                "not valid iCalendar: the file ends before END:VCALENDAR (cut off?)".into()
            }
            _ => format!(
                "not valid iCalendar: {}",
                e.lines().next().unwrap_or("parse error")
            ),
        }
    })
}

/// A file of one or more VCALENDAR objects (RFC 5545 §3.4 allows several in a stream; some
/// exports concatenate calendars).
pub fn parse_all(text: &str) -> Result<Vec<Calendar>, String> {
    let text = text.trim_start_matches('\u{feff}');
    let mut starts: Vec<usize> = text
        .match_indices("BEGIN:VCALENDAR")
        .map(|(i, _)| i)
        .filter(|i| *i == 0 || text[..*i].ends_with('\n'))
        .collect();
    if starts.len() <= 1 {
        return parse(text).map(|c| vec![c]);
    }
    starts.push(text.len());
    starts
        .windows(2)
        .enumerate()
        .map(|(n, w)| {
            parse(&text[w[0]..w[1]])
                .map_err(|e| format!("calendar {} of {}: {e}", n + 1, starts.len() - 1))
        })
        .collect()
}

/// Splits a calendar file into one calendar object per UID (RFC 4791 §4.1: a master and its
/// overrides travel together), each with the file's VTIMEZONEs. Events without a UID get one.
pub fn split_by_uid(cal: Calendar) -> Vec<(String, Calendar)> {
    let timezones: Vec<CalendarComponent> = cal
        .components
        .iter()
        .filter(|c| matches!(c, CalendarComponent::Other(o) if o.component_kind() == "VTIMEZONE"))
        .cloned()
        .collect();
    let mut by_uid: BTreeMap<String, Vec<Event>> = BTreeMap::new();
    for component in cal.components {
        let CalendarComponent::Event(mut event) = component else {
            continue;
        };
        let uid = match event.get_uid() {
            Some(uid) => uid.to_string(),
            None => {
                let uid = uuid::Uuid::new_v4().to_string();
                event.uid(&uid);
                uid
            }
        };
        by_uid.entry(uid).or_default().push(event);
    }
    // Each object carries the zones its events name (RFC 4791 §4.1), not the whole file's.
    by_uid
        .into_iter()
        .map(|(uid, events)| {
            let named: std::collections::BTreeSet<String> =
                events.iter().flat_map(tzids_of).collect();
            let mut object = Calendar::new();
            object.components.extend(timezones.iter().filter(|c| {
                matches!(c, CalendarComponent::Other(o)
                    if o.property_value("TZID").is_some_and(|t| named.contains(t.trim_matches('"'))))
            }).cloned());
            for event in events {
                object.push(event);
            }
            (uid, object)
        })
        .collect()
}

/// The TZIDs an event's properties name.
fn tzids_of(event: &Event) -> Vec<String> {
    event
        .properties()
        .values()
        .chain(event.multi_properties().values().flatten())
        .filter_map(|p| p.params().get("TZID"))
        .map(|t| t.value().trim_matches('"').to_string())
        .collect()
}

/// A calendar as iCalendar text that RFC 5545 accepts. The `icalendar` crate writes a DTSTAMP
/// and a fresh random UID into *every* component it serializes — VTIMEZONE, STANDARD, DAYLIGHT
/// and VALARM too, where RFC 5545 forbids them (and where a new UID on every write would change
/// the text each time). No maintained crate writes components without that, so the text is
/// filtered here.
pub fn to_text(cal: &Calendar) -> String {
    let text = without_stray_controls(&cal.to_string());
    if !text.contains(crate::vtimezone::DEFINED_PREFIX) {
        return clean_text(&text);
    }
    let mut stored = cal.clone();
    crate::vtimezone::undefine(&mut stored);
    clean_text(&stored.to_string())
}

/// The text with no control character but line ends (CRLF) and tabs. RFC 5545 §3.3.11 allows
/// none in a value, and the writer escapes only LF: a CR left in a title (the model's, a
/// server's) would end the line for a reader that splits there, starting a property of the
/// title's choosing. Every calendar text Cowork writes passes here.
fn without_stray_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let line_end = c == '\r' && chars.peek() == Some(&'\n');
        if !c.is_control() || matches!(c, '\n' | '\t') || line_end {
            out.push(c);
        }
    }
    out
}

/// Components that carry DTSTAMP and UID (RFC 5545 §3.6); in any other one they are dropped.
const STAMPED: &[&str] = &["VEVENT", "VTODO", "VJOURNAL", "VFREEBUSY"];

/// Date and date-time properties: one with an empty value (`EXDATE;VALUE=DATE:`) is invalid
/// and dropped.
const DATED: &[&str] = &[
    "DTSTART",
    "DTEND",
    "DUE",
    "EXDATE",
    "RDATE",
    "RECURRENCE-ID",
    "DTSTAMP",
    "CREATED",
    "LAST-MODIFIED",
    "COMPLETED",
];

/// iCalendar text as RFC 5545 allows it, whatever was read or written: no DTSTAMP/UID lines in
/// components that must not have them, no date property with an empty value, no parameter
/// without a name (`DTSTART;;VALUE=…` from a broken file). Folded continuation lines go with
/// their property.
pub fn clean_text(text: &str) -> String {
    let mut stack: Vec<String> = Vec::new();
    let mut out = String::with_capacity(text.len());
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut dropping = false;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with([' ', '\t']) {
            if !dropping {
                out.push_str(line);
            }
            continue;
        }
        let content = line.trim_end_matches(['\r', '\n']);
        let upper = content.to_ascii_uppercase();
        if let Some(kind) = upper.strip_prefix("BEGIN:") {
            stack.push(kind.to_string());
        } else if upper.starts_with("END:") {
            stack.pop();
        }
        let (head, value) = split_content_line(content);
        let name = head
            .split(';')
            .next()
            .unwrap_or_default()
            .to_ascii_uppercase();
        let misplaced = matches!(name.as_str(), "DTSTAMP" | "UID")
            && stack
                .last()
                .is_some_and(|top| top != "VCALENDAR" && !STAMPED.contains(&top.as_str()));
        let folded = lines.get(i + 1).is_some_and(|l| l.starts_with([' ', '\t']));
        let empty = DATED.contains(&name.as_str()) && value.trim().is_empty() && !folded;
        let upper_head = head.to_ascii_uppercase();
        // RDATE/EXDATE take dates, date-times or periods; a bare time (`VALUE=TIME`) is none.
        let timeless =
            matches!(name.as_str(), "RDATE" | "EXDATE") && upper_head.contains(";VALUE=TIME");
        dropping = misplaced || empty || timeless;
        if dropping {
            continue;
        }
        // An observance starts at a local date-time (RFC 5545 §3.6.5), never a bare date.
        if name == "DTSTART"
            && stack
                .last()
                .is_some_and(|top| top == "STANDARD" || top == "DAYLIGHT")
            && upper_head.contains(";VALUE=DATE")
            && value.trim().len() == 8
        {
            out.push_str(&format!("DTSTART:{}T000000", value.trim()));
            out.push_str(&line[content.len()..]);
            continue;
        }
        // A rule written with spaces (`BYDAY=MO, TU`) is read by us but by few others.
        if matches!(name.as_str(), "RRULE" | "EXRULE") && value.contains(' ') {
            out.push_str(head);
            out.push(':');
            out.push_str(&value.replace(' ', ""));
            out.push_str(&line[content.len()..]);
            continue;
        }
        if head
            .split(';')
            .skip(1)
            .any(|p| p.split('=').next().is_none_or(str::is_empty))
        {
            let params: Vec<&str> = head
                .split(';')
                .filter(|p| !p.split('=').next().is_none_or(str::is_empty))
                .collect();
            out.push_str(&params.join(";"));
            out.push(':');
            out.push_str(value);
            out.push_str(&line[content.len()..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// A content line's name and parameters, and its value: split at the first ':' outside quotes.
fn split_content_line(line: &str) -> (&str, &str) {
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ':' if !quoted => return (&line[..i], &line[i + 1..]),
            _ => {}
        }
    }
    (line, "")
}

pub fn events(cal: &Calendar) -> impl Iterator<Item = &Event> {
    cal.components
        .iter()
        .filter_map(CalendarComponent::as_event)
}

/// The UID of a calendar object, and its index rows. Zones the object defines itself under a
/// name no zone database knows are read as their matching IANA zone (`vtimezone`).
pub fn index(cal: &Calendar) -> Result<(String, Vec<IndexRow>), String> {
    index_as_is(&evaluable(cal))
}

/// A calendar as it is evaluated: zones it defines under names no zone database knows are
/// read as their IANA match, or else from their own rules (`vtimezone`). [`to_text`] writes the
/// file's own TZIDs back for the zones read from their rules.
pub fn evaluable(cal: &Calendar) -> std::borrow::Cow<'_, Calendar> {
    let defines_zones = cal
        .components
        .iter()
        .any(|c| matches!(c, CalendarComponent::Other(o) if o.component_kind() == "VTIMEZONE"));
    if !defines_zones {
        return std::borrow::Cow::Borrowed(cal);
    }
    let mut evaluated = cal.clone();
    let adoptable = crate::vtimezone::adoptable(&evaluated);
    crate::vtimezone::adopt_with(&mut evaluated, &adoptable);
    crate::vtimezone::define(&mut evaluated);
    std::borrow::Cow::Owned(evaluated)
}

fn index_as_is(cal: &Calendar) -> Result<(String, Vec<IndexRow>), String> {
    let mut uid = None;
    let (mut rows, mut periods, mut excluded) = (Vec::new(), Vec::new(), Vec::new());
    let mut overrides = Vec::new();
    for event in events(cal) {
        let this = event.get_uid().ok_or("an event has no UID")?;
        if *uid.get_or_insert_with(|| this.to_string()) != this {
            return Err("a calendar object holds events with different UIDs".into());
        }
        let named = |e: String| format!("event {this:?}: {e}");
        let row = index_event(event).map_err(named)?;
        if row.recurrence_id.is_some() {
            let sequence = event
                .property_value("SEQUENCE")
                .and_then(|s| s.trim().parse().ok());
            overrides.push((sequence.unwrap_or(0i64), this_and_future(event), row));
            continue;
        }
        periods = period_instances(event, &row).map_err(named)?;
        excluded = listed_values(event, "EXDATE", None).map_err(named)?;
        rows.push(row);
    }
    let overrides = standing_overrides(overrides, &excluded);
    let futures: Vec<&IndexRow> = overrides.iter().filter(|o| o.0).map(|o| &o.1).collect();
    if let Some(master) = rows.iter_mut().find(|r| r.rrule.is_some()) {
        let parts = split_at(master, &futures, &mut periods)?;
        rows.extend(parts);
    }
    rows.extend(overrides.into_iter().map(|(_, row)| row));
    // An override of a period's instance stands in its place.
    periods.retain(|p| !rows.iter().any(|r| r.recurrence_id == p.recurrence_id));
    rows.extend(periods);
    Ok((uid.ok_or("no VEVENT in the calendar data")?, rows))
}

/// Whether an override's RECURRENCE-ID has RANGE=THISANDFUTURE (RFC 5545 §3.2.13).
fn this_and_future(event: &Event) -> bool {
    event
        .properties()
        .get("RECURRENCE-ID")
        .and_then(|p| {
            p.params()
                .get("RANGE")
                .map(|r| r.value().trim().to_string())
        })
        .is_some_and(|range| range.eq_ignore_ascii_case("THISANDFUTURE"))
}

/// A series split where RANGE=THISANDFUTURE overrides change it (RFC 5545 §3.8.4.4), as
/// clients split it: the master keeps its instances before the first such override; after
/// each, the series is that override's (its title, length, status…) moved by its shift from
/// the instance it replaces, up to the next. Each part is a series row of its own over the
/// master's rule behind a [`WINDOW_PREFIX`] line; the overrides stay as the instances they replace. RDATE
/// periods after a split move with it.
fn split_at(
    master: &mut IndexRow,
    futures: &[&IndexRow],
    periods: &mut [IndexRow],
) -> Result<Vec<IndexRow>, String> {
    let Some(text) = master.rrule.clone() else {
        return Ok(Vec::new());
    };
    let mut futures = futures.to_vec();
    futures.sort_by_key(|f| f.recurrence_id);
    let Some(first) = futures.first().and_then(|f| f.recurrence_id) else {
        return Ok(Vec::new());
    };
    // A series in wall-clock time is cut and moved in wall-clock time (a change from 09:00 to
    // 10:00 stays at 10:00 across a clock change), inside its `ZONE:` line.
    let (zone, rules) = split_zone(&text)?;
    let wall = |t: i64| wall_value(zone.as_ref(), t);
    let rule_wall = |instant: i64| rule_wall(zone.as_ref(), rules, instant);
    let head = zone
        .as_ref()
        .map_or(String::new(), |tz| format!("{ZONE_PREFIX}{}\n", tz.name()));
    let part = |after: i64, before: i64, shift: i64| {
        format!("{head}{WINDOW_PREFIX}{after},{before},{shift}\n{rules}")
    };
    let whole_end = master.series_end;
    master.rrule = Some(part(i64::MIN, rule_wall(first), 0));
    master.series_end = Some(
        whole_end
            .unwrap_or(i64::MAX)
            .min(first + (master.end - master.start)),
    );
    let mut parts = Vec::new();
    for (i, future) in futures.iter().enumerate() {
        let split = future.recurrence_id.unwrap_or(first);
        let next = futures.get(i + 1).and_then(|n| n.recurrence_id);
        let moved_to = match &future.written_start {
            Some((written_in, at)) if Some(written_in) == zone.as_ref() => *at,
            _ => wall(future.start),
        };
        let shift = moved_to - rule_wall(split);
        for period in periods.iter_mut() {
            if period
                .recurrence_id
                .is_some_and(|id| id > split && next.is_none_or(|n| id < n))
            {
                period.start += future.start - split;
                period.end += future.start - split;
                period.series_end = Some(period.end);
                period.summary = future.summary.clone();
            }
        }
        parts.push(IndexRow {
            recurrence_id: None,
            rrule: Some(part(
                rule_wall(split),
                next.map_or(i64::MAX, rule_wall),
                shift,
            )),
            series_end: whole_end
                .map(|end| end + shift.max(0) + 86_400 + (future.end - future.start)),
            ..(*future).clone()
        });
    }
    Ok(parts)
}

/// Where a split series cuts and from what its later instances move: the wall time the rule
/// gives the instance at `instant`. A time a clock change skips is placed after the gap, so the
/// instant's own wall reading is an hour off (00:45 on a midnight spring-forward reads 01:45).
fn rule_wall(zone: Option<&EventZone>, rules: &str, instant: i64) -> i64 {
    let own = wall_value(zone, instant);
    zone.and_then(|z| {
        let near = instances(rules, 0, own - 172_800, own + 172_800, usize::MAX).ok()?;
        near.into_iter()
            .map(|i| i.start)
            .find(|w| z.instant_of_wall(*w) == instant)
    })
    .unwrap_or(own)
}

/// The first line of a part of a split series (after a `ZONE:` line, in its wall-clock time):
/// the instances the rest gives after the first value and before the second, moved by the
/// third.
const WINDOW_PREFIX: &str = "WINDOW:";

/// One override per instance, as clients read a series: the highest SEQUENCE (RFC 5545
/// §3.8.7.4), the first on a tie; none for an instance the master's EXDATE removed (the
/// instance is gone, and its edit with it).
fn standing_overrides(
    overrides: Vec<(i64, bool, IndexRow)>,
    excluded: &[i64],
) -> Vec<(bool, IndexRow)> {
    let mut chosen: Vec<(i64, (bool, IndexRow))> = Vec::new();
    for (sequence, future, row) in overrides {
        if row.recurrence_id.is_some_and(|id| excluded.contains(&id)) {
            continue;
        }
        match chosen
            .iter_mut()
            .find(|(_, (_, r))| r.recurrence_id == row.recurrence_id)
        {
            Some(slot) if sequence > slot.0 => *slot = (sequence, (future, row)),
            Some(_) => {}
            None => chosen.push((sequence, (future, row))),
        }
    }
    chosen.into_iter().map(|(_, kept)| kept).collect()
}

/// The master's RDATE periods (`VALUE=PERIOD`: start/end or start/duration): instances with
/// their own length, which `rrule` cannot give (its RDATEs are instants, its series has one
/// duration). Each is indexed as an instance of its own, named by its start as an override is.
fn period_instances(event: &Event, master: &IndexRow) -> Result<Vec<IndexRow>, String> {
    let Some(props) = event.multi_properties().get("RDATE") else {
        return Ok(Vec::new());
    };
    let excluded = listed_values(event, "EXDATE", None)?;
    let mut out = Vec::new();
    for prop in props {
        for value in prop.value().split(',') {
            let Some((start, end)) = value.split_once('/') else {
                continue;
            };
            let at = |text: &str| -> Result<(i64, bool), String> {
                let mut single = Property::new("RDATE", text);
                for (name, param) in prop.params().iter().filter(|(n, _)| *n != "VALUE") {
                    single.add_parameter(name, param.value());
                }
                let when = DatePerhapsTime::from_property(&single).ok_or_else(|| {
                    format!("RDATE period {value:?} is not start/end or start/duration")
                })?;
                Ok((to_index(&when)?, is_floating(&when)))
            };
            let (start, floating) = at(start)?;
            if excluded.contains(&start) {
                continue;
            }
            let end = match end.trim_start_matches('+').starts_with('P') {
                true => start + parse_duration(end)?,
                false => at(end)?.0,
            };
            out.push(IndexRow {
                recurrence_id: Some(start),
                start,
                end: end.max(start),
                series_end: Some(end.max(start)),
                rrule: None,
                all_day: false,
                floating,
                summary: master.summary.clone(),
                location: master.location.clone(),
                busy: master.busy,
                cancelled: master.cancelled,
                alarms: master.alarms.clone(),
                written_start: None,
            });
        }
    }
    Ok(out)
}

/// Whether a property holds this value (as RFC 5545 compares them, ignoring case).
fn is(event: &Event, property: &str, value: &str) -> bool {
    event
        .property_value(property)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(value))
}

fn index_event(event: &Event) -> Result<IndexRow, String> {
    let start_prop = event.properties().get("DTSTART").ok_or("no DTSTART")?;
    let start =
        DatePerhapsTime::from_property(start_prop).ok_or("DTSTART is not a date or date-time")?;
    let all_day = matches!(start, DatePerhapsTime::Date(_));
    let floating = is_floating(&start);
    let start_utc = to_index(&start)?;
    let end_utc = match event
        .properties()
        .get("DTEND")
        .and_then(DatePerhapsTime::from_property)
    {
        Some(end) if is_floating(&end) != floating => {
            return Err(
                "DTEND must be of DTSTART's kind (both dates, both floating, or both with a zone)"
                    .into(),
            );
        }
        Some(end) => to_index(&end)?,
        None => match event.property_value("DURATION") {
            Some(d) => start_utc + parse_duration(d)?,
            None if all_day => start_utc + 86_400,
            None => start_utc,
        },
    }
    .max(start_utc);
    let duration = end_utc - start_utc;
    let recurrence_id = recurrence_id(event)?;
    // RDATEs without an RRULE make a series too: DTSTART and those dates (periods apart).
    let rdates_only = event
        .multi_properties()
        .get("RDATE")
        .is_some_and(|props| props.iter().any(|p| !p.value().contains('/')))
        .then_some("FREQ=DAILY;COUNT=1");
    let (rrule, series_end) = match (recurrence_id, event.property_value("RRULE").or(rdates_only)) {
        (None, Some(rule)) => {
            let text = recurrence_text(event, &start, rule)?;
            let (zone, rules) = split_zone(&text)?;
            let set: rrule::RRuleSet = rules.parse().map_err(|e| format!("RRULE {rule:?}: {e}"))?;
            let end = series_end(&set, duration)
                .map(|wall| placed(zone.as_ref(), wall - duration) + duration);
            let counted = rule.to_ascii_uppercase().contains("COUNT=");
            // Only a counted rule is walked: an endless one would be walked 100,000 steps.
            let text = match counted.then(|| last_of_rule(&text)).flatten() {
                Some(last) => count_to_until(&text, last),
                None => text,
            };
            (Some(text), end)
        }
        _ => (None, Some(end_utc)),
    };
    Ok(IndexRow {
        recurrence_id,
        start: start_utc,
        end: end_utc,
        series_end,
        rrule,
        all_day,
        floating,
        summary: event.get_summary().unwrap_or("").to_string(),
        location: event.get_location().unwrap_or("").to_string(),
        busy: !is(event, "TRANSP", "TRANSPARENT") && !is(event, "STATUS", "CANCELLED"),
        cancelled: is(event, "STATUS", "CANCELLED"),
        alarms: Some(alarms_of(event))
            .filter(|a| !a.is_empty())
            .map(|a| serde_json::to_string(&a).expect("triggers serialize")),
        written_start: match &start {
            DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, tzid }) => {
                resolve_zone(tzid).map(|zone| (zone, date_time.and_utc().timestamp()))
            }
            _ => None,
        },
    })
}

/// Which instance an override replaces (its RECURRENCE-ID as an index value: UTC seconds, or
/// wall-clock seconds for a floating series); `None` for a master.
pub fn recurrence_id(event: &Event) -> Result<Option<i64>, String> {
    event
        .properties()
        .get("RECURRENCE-ID")
        .and_then(DatePerhapsTime::from_property)
        .map(|d| to_index(&d))
        .transpose()
}

/// How an event's DTSTART is written; RECURRENCE-IDs, EXDATEs and overrides follow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Date,
    Floating,
    Instant,
}

pub fn form_of(event: &Event) -> Form {
    match event
        .properties()
        .get("DTSTART")
        .and_then(DatePerhapsTime::from_property)
    {
        Some(DatePerhapsTime::Date(_)) => Form::Date,
        Some(DatePerhapsTime::DateTime(CalendarDateTime::Floating(_))) => Form::Floating,
        _ => Form::Instant,
    }
}

/// An index value written back in an event's form.
pub fn in_form(form: Form, value: i64) -> DatePerhapsTime {
    let wall = utc_of(value).naive_utc();
    match form {
        Form::Date => DatePerhapsTime::Date(wall.date()),
        Form::Floating => DatePerhapsTime::DateTime(CalendarDateTime::Floating(wall)),
        Form::Instant => utc_of(value).into(),
    }
}

/// The recurrence set as `rrule` reads it. Written here rather than taken from `icalendar`
/// because the TZID must first be mapped to an IANA zone (Outlook writes Windows names) and
/// EXDATE/RDATE values must use DTSTART's form.
///
/// A zoned series stepping by days or more repeats a wall-clock time in its zone, also on the
/// days a clock change skips or repeats it, where `rrule` places nothing (every instance on
/// the day of a change at midnight, as in Havana or Santiago, was lost). Such a series is
/// expanded in wall-clock time written as UTC, after a `ZONE:` line, and [`instances`] places
/// each instance in the zone as RFC 5545 reads a local time (`zone::local_instant`). A
/// sub-daily series steps in absolute time ([`zoned_start`]).
fn recurrence_text(event: &Event, start: &DatePerhapsTime, rule: &str) -> Result<String, String> {
    let zone = wall_zone(start, rule)?;
    let rule = rule_for_expansion(rule, start, zone.as_ref());
    let stamp = |at: &NaiveDateTime| format!("{}Z", at.format("%Y%m%dT%H%M%S"));
    let mut text = match (start, &zone) {
        (DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, .. }), Some(tz)) => {
            format!("{ZONE_PREFIX}{}\nDTSTART:{}\n", tz.name(), stamp(date_time))
        }
        (DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, tzid }), None) => {
            match resolve_zone(tzid).ok_or_else(|| unknown_zone(tzid))? {
                EventZone::Iana(tz) => zoned_start(tz, date_time)?,
                // `rrule` knows no such zone: the series steps from the instant it starts.
                EventZone::Defined(_) => {
                    format!("DTSTART:{}\n", stamp(&utc_of(to_index(start)?).naive_utc()))
                }
            }
        }
        (DatePerhapsTime::DateTime(CalendarDateTime::Utc(utc)), _) => {
            format!("DTSTART:{}\n", stamp(&utc.naive_utc()))
        }
        // Floating series are expanded in wall-clock time, written as UTC so `rrule` applies
        // no zone (and no daylight saving) of the machine's.
        (DatePerhapsTime::DateTime(CalendarDateTime::Floating(naive)), _) => {
            format!("DTSTART:{}\n", stamp(naive))
        }
        (DatePerhapsTime::Date(date), _) => format!("DTSTART:{}T000000Z\n", date.format("%Y%m%d")),
    };
    text.push_str(&format!("RRULE:{rule}\n"));
    // DTSTART is always the first instance (RFC 5545 §3.3.10, COUNT), even where the rule
    // would not give it (a Monday start of a Tuesdays-only rule), as every client shows it;
    // `rrule`, like dateutil, leaves it out. [`instances`] drops the twin where the rule gives it.
    let first = match (start, &zone) {
        (DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, .. }), Some(_)) => {
            stamp(date_time)
        }
        _ => stamp(&utc_of(to_index(start)?).naive_utc()),
    };
    text.push_str(&format!("RDATE:{first}\n"));
    for key in ["EXDATE", "RDATE"] {
        // One line a value: UTC instants, or wall-clock times in a wall-time series.
        for at in listed_values(event, key, zone.as_ref())? {
            text.push_str(&format!("{key}:{}\n", utc_of(at).format("%Y%m%dT%H%M%SZ")));
        }
    }
    Ok(text)
}

/// The first line of a series expanded in wall-clock time, naming its zone.
const ZONE_PREFIX: &str = "ZONE:";

/// The zone a series is expanded in wall-clock time in ([`recurrence_text`]): a zoned DTSTART
/// and a rule stepping by days or more.
fn wall_zone(start: &DatePerhapsTime, rule: &str) -> Result<Option<EventZone>, String> {
    let DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { tzid, .. }) = start else {
        return Ok(None);
    };
    let tz = resolve_zone(tzid).ok_or_else(|| unknown_zone(tzid))?;
    let sub_daily = rule.split(';').any(|p| {
        p.split_once('=').is_some_and(|(k, v)| {
            k.eq_ignore_ascii_case("FREQ")
                && ["HOURLY", "MINUTELY", "SECONDLY"]
                    .iter()
                    .any(|f| v.eq_ignore_ascii_case(f))
        })
    });
    Ok((!sub_daily).then_some(tz))
}

/// A series' text without its `ZONE:` line, and the zone it names.
fn split_zone(text: &str) -> Result<(Option<EventZone>, &str), String> {
    let Some(rest) = text.strip_prefix(ZONE_PREFIX) else {
        return Ok((None, text));
    };
    let (name, rules) = rest.split_once('\n').unwrap_or((rest, ""));
    let tz = resolve_zone(name).ok_or_else(|| unknown_zone(name))?;
    Ok((Some(tz), rules))
}

/// A wall-clock value (naive time read as UTC) of a wall-time series, as the instant it names.
fn placed(zone: Option<&EventZone>, value: i64) -> i64 {
    zone.map_or(value, |tz| tz.instant_of_wall(value))
}

/// An instant's wall-clock value (naive time read as UTC) in a wall-time series' zone.
fn wall_value(zone: Option<&EventZone>, instant: i64) -> i64 {
    zone.map_or(instant, |tz| tz.wall(instant))
}

/// The dates and date-times an EXDATE or RDATE property lists (a property may list several),
/// as index values, or for a wall-time series in `zone` as wall-clock values there (a value
/// written in that zone by its own reading, so that 02:30 on a skipped night names the
/// instance the rule gives at 02:30); periods are not among them ([`period_instances`]).
fn listed_values(event: &Event, key: &str, zone: Option<&EventZone>) -> Result<Vec<i64>, String> {
    let mut out = Vec::new();
    for prop in event.multi_properties().get(key).into_iter().flatten() {
        for value in prop.value().split(',') {
            let mut single = Property::new(key, value);
            for (name, param) in prop.params() {
                single.add_parameter(name, param.value());
            }
            let Some(d) = DatePerhapsTime::from_property(&single) else {
                continue;
            };
            out.push(match (zone, &d) {
                (
                    Some(tz),
                    DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, tzid }),
                ) if resolve_zone(tzid).as_ref() == Some(tz) => date_time.and_utc().timestamp(),
                (Some(_), _) => wall_value(zone, to_index(&d)?),
                (None, _) => to_index(&d)?,
            });
        }
    }
    Ok(out)
}

/// The DTSTART line of a sub-daily series in a zone, which steps in absolute time: `rrule`
/// refuses a local time that a clock change skips or repeats, so such a DTSTART is written as
/// the instant RFC 5545 reads (`zone::local_instant`).
fn zoned_start(tz: chrono_tz::Tz, wall: &NaiveDateTime) -> Result<String, String> {
    if tz.from_local_datetime(wall).single().is_some() {
        return Ok(format!(
            "DTSTART;TZID={}:{}\n",
            tz.name(),
            wall.format("%Y%m%dT%H%M%S")
        ));
    }
    let instant = crate::zone::local_instant(&tz, wall)
        .ok_or_else(|| format!("{wall} cannot be placed in {}", tz.name()))?;
    Ok(format!(
        "DTSTART:{}\n",
        instant.naive_utc().format("%Y%m%dT%H%M%SZ")
    ))
}

/// The RRULE as `rrule` must read it to give RFC 5545's instances (checked against libical's
/// test vectors):
/// - a floating or all-day series, and a zoned one in wall-clock time, is expanded in
///   wall-clock time written as UTC, so its UNTIL is read the same way (a zoned series' UTC
///   UNTIL as its wall-clock reading in the zone);
/// - an all-day series has no time-of-day parts;
/// - BYWEEKNO without BYDAY means DTSTART's weekday in those weeks (RFC 5545 §3.3.10: what the
///   rule leaves out comes from DTSTART), where `rrule` (like dateutil) takes every day.
fn rule_for_expansion(rule: &str, start: &DatePerhapsTime, zone: Option<&EventZone>) -> String {
    use chrono::Datelike;
    let has = |key: &str| {
        rule.split(';').any(|p| {
            p.split('=')
                .next()
                .is_some_and(|k| k.eq_ignore_ascii_case(key))
        })
    };
    let dated = matches!(start, DatePerhapsTime::Date(_));
    let mut parts: Vec<String> = rule
        .split(';')
        // RFC 5545 §3.3.10: BYSECOND, BYMINUTE and BYHOUR MUST NOT be given with a DATE
        // DTSTART; a file that does anyway is read as its dates, as other clients read it.
        .filter(|part| {
            let key = part.split('=').next().unwrap_or("").to_ascii_uppercase();
            !(dated && matches!(key.as_str(), "BYHOUR" | "BYMINUTE" | "BYSECOND"))
        })
        .map(|part| match part.split_once('=') {
            Some((key, value)) if key.eq_ignore_ascii_case("UNTIL") && zone.is_some() => {
                let until =
                    NaiveDateTime::parse_from_str(value.trim_end_matches('Z'), "%Y%m%dT%H%M%S");
                match (until, zone) {
                    (Ok(at), Some(tz)) if value.ends_with('Z') => format!(
                        "UNTIL={}",
                        utc_of(tz.wall(at.and_utc().timestamp())).format("%Y%m%dT%H%M%SZ")
                    ),
                    _ if value.len() == 8 => format!("UNTIL={value}T235959Z"),
                    _ => format!("UNTIL={}Z", value.trim_end_matches('Z')),
                }
            }
            Some((key, value)) if key.eq_ignore_ascii_case("UNTIL") && is_floating(start) => {
                match value.len() {
                    8 => format!("UNTIL={value}T000000Z"),
                    _ if !value.ends_with('Z') => format!("UNTIL={value}Z"),
                    _ => part.to_string(),
                }
            }
            _ => part.to_string(),
        })
        .collect();
    if has("BYWEEKNO") && !has("BYDAY") && !has("BYMONTHDAY") && !has("BYYEARDAY") {
        let weekday = match start {
            DatePerhapsTime::Date(d) => d.weekday(),
            DatePerhapsTime::DateTime(CalendarDateTime::Floating(n))
            | DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time: n, .. }) => {
                n.weekday()
            }
            DatePerhapsTime::DateTime(CalendarDateTime::Utc(u)) => u.weekday(),
        };
        let day =
            ["MO", "TU", "WE", "TH", "FR", "SA", "SU"][weekday.num_days_from_monday() as usize];
        parts.push(format!("BYDAY={day}"));
    }
    parts.join(";")
}

/// The last instant any instance ends, when the series is bounded (UNTIL or COUNT).
fn series_end(set: &rrule::RRuleSet, duration: i64) -> Option<i64> {
    let rule = set.get_rrule().first()?;
    if let Some(until) = rule.get_until() {
        return Some(until.timestamp() + duration);
    }
    rule.get_count()?;
    // COUNT: walk the (bounded) series once, here at write time, so queries never do.
    let last = set.into_iter().take(100_000).last()?;
    Some(last.timestamp() + duration)
}

/// The last instance the RRULE alone gives (RDATEs may come later; EXDATEs apply after COUNT).
fn last_of_rule(text: &str) -> Option<i64> {
    let own: String = text
        .lines()
        .filter(|l| l.starts_with("DTSTART") || l.starts_with("RRULE:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let set: rrule::RRuleSet = own.parse().ok()?;
    Some(set.into_iter().take(100_000).last()?.timestamp())
}

/// The same series with COUNT=n replaced by UNTIL=its last instance: an equal set (EXDATE
/// removes instances after COUNT is applied, either way) that [`fast_forward`] can start
/// mid-series, since nothing counts from the first instance any more.
fn count_to_until(text: &str, last: i64) -> String {
    // Every DTSTART here is UTC or zoned (floating ones are written as UTC wall time).
    let until = utc_of(last).format("%Y%m%dT%H%M%SZ").to_string();
    text.lines()
        .map(|line| match line.strip_prefix("RRULE:") {
            Some(rule) => {
                let parts: Vec<String> = rule
                    .split(';')
                    .map(|p| {
                        if p.to_ascii_uppercase().starts_with("COUNT=") {
                            format!("UNTIL={until}")
                        } else {
                            p.to_string()
                        }
                    })
                    .collect();
                format!("RRULE:{}\n", parts.join(";"))
            }
            None => format!("{line}\n"),
        })
        .collect()
}

pub fn utc_of(ts: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(ts, 0).single().unwrap_or_default()
}

/// Maps a TZID to an IANA zone: IANA names as is, prefixed ones (`/mozilla.org/…/Europe/Berlin`)
/// by their tail, and the Windows names Outlook and Exchange write.
pub fn resolve_tz(tzid: &str) -> Option<chrono_tz::Tz> {
    let tzid = tzid.trim_matches('"');
    if let Ok(tz) = tzid.parse() {
        return Some(tz);
    }
    let parts: Vec<&str> = tzid.split('/').collect();
    for i in 1..parts.len() {
        if let Ok(tz) = parts[i..].join("/").parse() {
            return Some(tz);
        }
    }
    let iana = match tzid {
        "China Standard Time" => "Asia/Shanghai",
        "Tokyo Standard Time" => "Asia/Tokyo",
        "Taipei Standard Time" => "Asia/Taipei",
        "Singapore Standard Time" => "Asia/Singapore",
        "India Standard Time" => "Asia/Kolkata",
        "W. Europe Standard Time" => "Europe/Berlin",
        "Romance Standard Time" => "Europe/Paris",
        "GMT Standard Time" => "Europe/London",
        "Eastern Standard Time" => "America/New_York",
        "Central Standard Time" => "America/Chicago",
        "Mountain Standard Time" => "America/Denver",
        "Pacific Standard Time" => "America/Los_Angeles",
        "UTC" | "Coordinated Universal Time" => "UTC",
        _ => return None,
    };
    iana.parse().ok()
}

/// The zone a TZID names while calendar data is evaluated: a zone it defines itself
/// (`vtimezone::define`), or an IANA zone ([`resolve_tz`]).
pub fn resolve_zone(tzid: &str) -> Option<EventZone> {
    match crate::vtimezone::defined(tzid) {
        Some(zone) => Some(EventZone::Defined(zone)),
        None => resolve_tz(tzid).map(EventZone::Iana),
    }
}

fn unknown_zone(tzid: &str) -> String {
    format!(
        "unknown time zone {tzid:?} (no VTIMEZONE defines it): use an IANA name like Europe/Berlin"
    )
}

/// Dates and floating date-times: local wherever the person is, so no zone is applied here.
pub fn is_floating(value: &DatePerhapsTime) -> bool {
    matches!(
        value,
        DatePerhapsTime::Date(_) | DatePerhapsTime::DateTime(CalendarDateTime::Floating(_))
    )
}

/// A date or date-time as an index value: UTC seconds for an instant (UTC or with a zone);
/// for a date or a floating time, its wall-clock seconds (the naive time read as UTC), which a
/// query places in the zone it is asked in. Never the machine's zone: that would freeze a
/// floating 08:30 to wherever the import ran.
pub fn to_index(value: &DatePerhapsTime) -> Result<i64, String> {
    match value {
        DatePerhapsTime::DateTime(CalendarDateTime::Utc(utc)) => Ok(utc.timestamp()),
        DatePerhapsTime::DateTime(CalendarDateTime::Floating(naive)) => {
            Ok(naive.and_utc().timestamp())
        }
        DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, tzid }) => {
            let tz = resolve_zone(tzid).ok_or_else(|| unknown_zone(tzid))?;
            tz.instant_of(date_time)
                .ok_or_else(|| format!("{date_time} cannot be placed in {tzid}"))
        }
        DatePerhapsTime::Date(date) => Ok(date
            .and_hms_opt(0, 0, 0)
            .expect("midnight exists")
            .and_utc()
            .timestamp()),
    }
}

pub(crate) fn parse_duration(text: &str) -> Result<i64, String> {
    let negative = text.starts_with('-');
    let body = text.trim_start_matches(['+', '-']);
    let duration = iso8601::duration(body)
        .map_err(|_| format!("DURATION {text:?} is not an RFC 5545 duration like PT1H30M"))?;
    let seconds = std::time::Duration::from(duration).as_secs() as i64;
    Ok(if negative { -seconds } else { seconds })
}

/// The starts of [`instances`] (what the tests compare).
#[cfg(test)]
pub fn expand(
    rrule_text: &str,
    duration: i64,
    from: i64,
    to: i64,
    cap: usize,
) -> Result<Vec<i64>, String> {
    let found = instances(rrule_text, duration, from, to, cap)?;
    Ok(found.into_iter().map(|i| i.start).collect())
}

/// An instance of a series: when it starts, and the start the series gave it before a
/// THISANDFUTURE change moved it (what its RECURRENCE-ID names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Instance {
    pub start: i64,
    pub original: i64,
}

/// Expands a recurring master into the instances that overlap `[from, to)`, at most `cap`.
pub fn instances(
    rrule_text: &str,
    duration: i64,
    from: i64,
    to: i64,
    cap: usize,
) -> Result<Vec<Instance>, String> {
    if let Some(rest) = rrule_text.strip_prefix(WINDOW_PREFIX) {
        let (bounds, rules) = rest.split_once('\n').unwrap_or((rest, ""));
        let bounds: Vec<i64> = bounds.split(',').filter_map(|b| b.parse().ok()).collect();
        let [after, before, shift] = bounds[..] else {
            return Err(format!(
                "a split series' window {bounds:?} is not after,before,shift"
            ));
        };
        let found = instances(rules, duration, from - shift, to - shift, usize::MAX)?;
        return Ok(found
            .into_iter()
            .filter(|i| i.start > after && i.start < before)
            .map(|i| Instance {
                start: i.start + shift,
                original: i.original,
            })
            .take(cap)
            .collect());
    }
    let (Some(tz), rules) = split_zone(rrule_text)? else {
        let starts = expand_as_written(rrule_text, duration, from, to, cap)?;
        return Ok(starts
            .into_iter()
            .map(|start| Instance {
                start,
                original: start,
            })
            .collect());
    };
    // Offsets are under a day: the range read as wall-clock time, a day wider on each side,
    // holds every instance that lands in it once placed.
    let wall = |t: i64| wall_value(Some(&tz), t);
    let walls = instances(
        rules,
        duration,
        wall(from) - 86_400,
        wall(to) + 86_400,
        usize::MAX,
    )?;
    let mut out: Vec<Instance> = walls
        .into_iter()
        .map(|w| Instance {
            start: placed(Some(&tz), w.start),
            original: placed(Some(&tz), w.original),
        })
        .filter(|i| i.start < to && i.start + duration.max(1) > from)
        .collect();
    // Two wall times can name one instant (a time a clock change skips reads as the next).
    out.dedup_by_key(|i| i.start);
    out.truncate(cap);
    Ok(out)
}

/// [`instances`] of a series as `rrule` reads it (instants, or wall-clock values as UTC).
fn expand_as_written(
    rrule_text: &str,
    duration: i64,
    from: i64,
    to: i64,
    cap: usize,
) -> Result<Vec<i64>, String> {
    let shifted = fast_forward(rrule_text, from - duration);
    let set: rrule::RRuleSet = shifted
        .as_deref()
        .unwrap_or(rrule_text)
        .parse()
        .map_err(|e| format!("{e}"))?;
    let mut out = Vec::new();
    // The iterator is bounded: a series of a million past instances still ends here.
    for dt in set.into_iter().take(1_000_000) {
        let start = dt.timestamp();
        if start >= to {
            break;
        }
        // A set lists an instant once: an RDATE may repeat one the rule gives.
        if start + duration.max(1) > from && out.last() != Some(&start) {
            out.push(start);
            if out.len() >= cap {
                break;
            }
        }
    }
    Ok(out)
}

/// A DAILY or WEEKLY series without COUNT, moved to start shortly before `before`: its
/// DTSTART advanced by whole periods (INTERVAL days or weeks, in its own zone's wall time, so
/// daylight saving is kept), which leaves the instances from there on unchanged. Expanding a
/// years-old daily series for next week then walks a few steps instead of a thousand. `rrule`
/// has no way to start iterating mid-series, hence this. `None` when the rule does not qualify.
fn fast_forward(text: &str, before: i64) -> Option<String> {
    let (first, rest) = text.split_once('\n')?;
    let rule = rest.lines().find_map(|l| l.strip_prefix("RRULE:"))?;
    let parts: Vec<(&str, &str)> = rule.split(';').filter_map(|p| p.split_once('=')).collect();
    let get = |key: &str| {
        parts
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| *v)
    };
    if get("COUNT").is_some()
        || get("BYSETPOS").is_some()
        || get("BYWEEKNO").is_some()
        || get("BYYEARDAY").is_some()
    {
        return None;
    }
    let days_per_period: i64 = match get("FREQ")? {
        "DAILY" => 1,
        "WEEKLY" => 7,
        _ => return None,
    };
    let step = days_per_period
        * get("INTERVAL")
            .map_or(Some(1), |i| i.parse::<i64>().ok())?
            .max(1);
    let (head, stamp) = first.rsplit_once(':')?;
    let utc = stamp.ends_with('Z');
    let naive = NaiveDateTime::parse_from_str(stamp.trim_end_matches('Z'), "%Y%m%dT%H%M%S").ok()?;
    let tz = head.strip_prefix("DTSTART;TZID=").and_then(resolve_tz);
    let start = match tz {
        Some(tz) if !utc => crate::zone::local_instant(&tz, &naive)?.timestamp(),
        _ => naive.and_utc().timestamp(),
    };
    // One period of margin: an instance starting before `before` may still overlap.
    let periods = (before - start).div_euclid(step * 86_400) - 1;
    if periods <= 0 {
        return None;
    }
    // `rrule` refuses a DTSTART a clock change skips or repeats: the period before it serves
    // as well (it is an instance too, and such days are far apart).
    let moved = (0..3)
        .map(|back| naive + chrono::Duration::days((periods - back) * step))
        .find(|moved| tz.is_none_or(|tz| utc || tz.from_local_datetime(moved).single().is_some()))
        .filter(|moved| *moved > naive)?;
    Some(format!(
        "{head}:{}{}\n{rest}",
        moved.format("%Y%m%dT%H%M%S"),
        if utc { "Z" } else { "" }
    ))
}

/// A date (`2026-11-23`) for all-day events, else a date-time with offset or in `tz`.
pub fn parse_when(
    field: &str,
    text: &str,
    tz: Option<chrono_tz::Tz>,
) -> Result<DatePerhapsTime, String> {
    let text = text.trim();
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(DatePerhapsTime::Date(date));
    }
    if let Ok(dt) = DateTime::parse_from_rfc3339(text) {
        return Ok(match tz {
            Some(tz) => (dt.with_timezone(&tz).naive_local(), tz).into(),
            None => dt.with_timezone(&Utc).into(),
        });
    }
    for format in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(match tz {
                Some(tz) => (naive, tz).into(),
                None => DatePerhapsTime::DateTime(CalendarDateTime::Floating(naive)),
            });
        }
    }
    Err(format!(
        "`{field}` {text:?} is not a time: use 2026-11-23 (all day), 2026-11-23T14:00 (with `timezone`) or 2026-11-23T14:00:00+08:00"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECURRING: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\nBEGIN:VTIMEZONE\r\nTZID:W. Europe Standard Time\r\nEND:VTIMEZONE\r\n\
BEGIN:VEVENT\r\nUID:standup\r\nDTSTART;TZID=W. Europe Standard Time:20261102T090000\r\nDTEND;TZID=W. Europe Standard Time:20261102T091500\r\n\
RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10\r\nEXDATE;TZID=W. Europe Standard Time:20261109T090000\r\nSUMMARY:Standup\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:standup\r\nRECURRENCE-ID;TZID=W. Europe Standard Time:20261116T090000\r\nDTSTART;TZID=W. Europe Standard Time:20261116T100000\r\n\
DTEND;TZID=W. Europe Standard Time:20261116T101500\r\nSUMMARY:Standup (moved)\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

    #[test]
    fn a_recurring_master_with_an_exdate_and_an_override_indexes_and_expands() {
        let cal = parse(RECURRING).unwrap();
        let (uid, rows) = index(&cal).unwrap();
        assert_eq!(uid, "standup");
        let master = rows.iter().find(|r| r.recurrence_id.is_none()).unwrap();
        let moved = rows.iter().find(|r| r.recurrence_id.is_some()).unwrap();
        // 2026-11-02 09:00 Berlin (CET, UTC+1) = 08:00Z.
        assert_eq!(
            utc_of(master.start).to_rfc3339(),
            "2026-11-02T08:00:00+00:00"
        );
        assert_eq!(master.end - master.start, 900);
        assert!(master.series_end.is_some(), "COUNT bounds the series");
        let starts = expand(
            master.rrule.as_deref().unwrap(),
            900,
            master.start,
            master.start + 28 * 86_400,
            100,
        )
        .unwrap();
        let days: Vec<String> = starts
            .iter()
            .map(|s| utc_of(*s).format("%m-%d").to_string())
            .collect();
        assert_eq!(
            days,
            ["11-02", "11-16", "11-23"],
            "11-09 is excluded by EXDATE"
        );
        assert_eq!(
            utc_of(moved.recurrence_id.unwrap())
                .format("%m-%d %H:%M")
                .to_string(),
            "11-16 08:00"
        );
        assert_eq!(moved.summary, "Standup (moved)");
    }

    /// The UTC starts (`MM-DD HH:MM`) of a daily 02:30 series in `zone` from `start`, in the
    /// days `[from, from + days)`.
    fn daily_at_half_past_two(zone: &str, start: &str, from: &str, days: i64) -> Vec<String> {
        let ics = format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\nBEGIN:VEVENT\r\nUID:night\r\n\
             DTSTART;TZID={zone}:{start}\r\nDURATION:PT30M\r\nRRULE:FREQ=DAILY\r\nSUMMARY:Night\r\n\
             END:VEVENT\r\nEND:VCALENDAR\r\n"
        );
        let (_, rows) = index(&parse(&ics).unwrap()).unwrap();
        let from = chrono::NaiveDate::parse_from_str(from, "%Y-%m-%d").unwrap();
        let from = from.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp();
        let starts = expand(
            rows[0].rrule.as_deref().unwrap(),
            1800,
            from,
            from + days * 86_400,
            100,
        );
        let starts = starts.unwrap_or_else(|e| panic!("{zone} {start}: {e}"));
        starts
            .iter()
            .map(|s| utc_of(*s).format("%m-%d %H:%M").to_string())
            .collect()
    }

    #[test]
    fn local_times_a_clock_change_skips_or_repeats_are_read_as_rfc_5545_says() {
        // A skipped 02:30 is read with the offset before the gap (03:30 CEST = 01:30Z); a
        // repeated one is its first occurrence (02:30 CEST = 00:30Z) — as DTSTART, as an
        // instance, and where the expansion fast-forwards a long series.
        let berlin_spring = ["03-28 01:30", "03-29 01:30", "03-30 00:30"];
        let berlin_autumn = ["10-24 00:30", "10-25 00:30", "10-26 01:30"];
        for (start, from, want) in [
            ("20260320T023000", "2026-03-28", &berlin_spring[..]),
            (
                "20260329T023000",
                "2026-03-28",
                &["03-29 01:30", "03-30 00:30"],
            ),
            ("20260301T023000", "2026-10-24", &berlin_autumn[..]),
            (
                "20261025T023000",
                "2026-10-24",
                &["10-25 00:30", "10-26 01:30"],
            ),
            (
                "20200101T023000",
                "2027-03-27",
                &["03-27 01:30", "03-28 01:30", "03-29 00:30"],
            ),
            (
                "20200101T023000",
                "2027-10-30",
                &["10-30 00:30", "10-31 00:30", "11-01 01:30"],
            ),
        ] {
            assert_eq!(
                daily_at_half_past_two("Europe/Berlin", start, from, 3),
                want,
                "{start}"
            );
        }
        assert_eq!(
            daily_at_half_past_two("America/New_York", "20260308T023000", "2026-03-07", 3),
            ["03-08 07:30", "03-09 06:30"],
            "the first instance is 03:30 EDT; the day before it is no instance"
        );
        // A single event at a skipped time is kept, an hour later.
        let single = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\nBEGIN:VEVENT\r\nUID:one\r\n\
                      DTSTART;TZID=Europe/Berlin:20260329T023000\r\nDURATION:PT1H\r\nSUMMARY:One\r\n\
                      END:VEVENT\r\nEND:VCALENDAR\r\n";
        let (_, rows) = index(&parse(single).unwrap()).unwrap();
        assert_eq!(
            utc_of(rows[0].start).to_rfc3339(),
            "2026-03-29T01:30:00+00:00"
        );
    }

    #[test]
    fn rdate_periods_and_rdates_without_a_rule_are_instances() {
        let event = |props: &str| {
            let ics = format!(
                "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:test\r\nBEGIN:VEVENT\r\nUID:r\r\n\
                 DTSTART:20260105T090000Z\r\nDURATION:PT1H\r\n{props}SUMMARY:R\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
            );
            index(&parse(&ics).unwrap()).unwrap().1
        };
        let starts = |rows: &[IndexRow]| {
            let master = &rows[0];
            let from = master.start;
            let mut all: Vec<(String, i64)> = expand(
                master.rrule.as_deref().unwrap(),
                3600,
                from,
                from + 60 * 86_400,
                100,
            )
            .unwrap()
            .into_iter()
            .map(|s| (utc_of(s).format("%m-%d %H:%M").to_string(), 60))
            .collect();
            all.extend(rows[1..].iter().map(|r| {
                (
                    utc_of(r.start).format("%m-%d %H:%M").to_string(),
                    (r.end - r.start) / 60,
                )
            }));
            all.sort();
            all
        };
        // COUNT counts the rule's own instances: an RDATE after them neither stretches the rule
        // (COUNT is rewritten as the rule's last instance, not the set's) nor is lost; a period
        // is an instance of its own length, unless an EXDATE takes it out.
        let rows = event(
            "RRULE:FREQ=DAILY;COUNT=2\r\nRDATE:20260120T090000Z\r\nRDATE;VALUE=PERIOD:20260125T140000Z/PT3H,20260126T080000Z/20260126T083000Z\r\n\
             RDATE;VALUE=PERIOD:20260127T080000Z/PT1H\r\nEXDATE:20260127T080000Z\r\n",
        );
        let want = [
            ("01-05 09:00", 60),
            ("01-06 09:00", 60),
            ("01-20 09:00", 60),
            ("01-25 14:00", 180),
            ("01-26 08:00", 30),
        ];
        let want: Vec<(String, i64)> = want.iter().map(|(d, m)| (d.to_string(), *m)).collect();
        assert_eq!(starts(&rows), want);
        assert_eq!(
            rows[1].recurrence_id,
            Some(rows[1].start),
            "named by its start"
        );
        // RDATEs alone make a series of DTSTART and those dates.
        let rows = event("RDATE:20260110T090000Z,20260112T090000Z\r\n");
        let got: Vec<String> = starts(&rows).into_iter().map(|(d, _)| d).collect();
        assert_eq!(got, ["01-05 09:00", "01-10 09:00", "01-12 09:00"]);
    }

    #[test]
    fn fast_forward_keeps_the_instances_and_their_wall_time_across_daylight_saving() {
        // Daily at 09:00 Berlin since 2020; the week of 2026-11-23 (CET) after years of DST changes.
        let text = "DTSTART;TZID=Europe/Berlin:20200105T090000\nRRULE:FREQ=DAILY;INTERVAL=2\nEXDATE:20261125T080000Z\n";
        let from = chrono::DateTime::parse_from_rfc3339("2026-11-23T00:00:00Z")
            .unwrap()
            .timestamp();
        let to = from + 7 * 86_400;
        assert!(
            fast_forward(text, from - 1800)
                .unwrap()
                .starts_with("DTSTART;TZID=Europe/Berlin:2026")
        );
        let slow: Vec<i64> = {
            let set: rrule::RRuleSet = text.parse().unwrap();
            set.into_iter()
                .map(|d| d.timestamp())
                .skip_while(|s| *s + 1800 <= from)
                .take_while(|s| *s < to)
                .collect()
        };
        let fast = expand(text, 1800, from, to, 100).unwrap();
        assert_eq!(fast, slow);
        assert!(
            fast.iter()
                .all(|s| utc_of(*s).format("%H:%M").to_string() == "08:00"),
            "09:00 CET"
        );
        // COUNT series are left alone (the count runs from the real start)…
        let counted =
            "DTSTART:20200101T090000Z\nRRULE:FREQ=DAILY;COUNT=3000\nEXDATE:20261124T090000Z\n";
        assert!(fast_forward(counted, from).is_none());
        // …until the index rewrites COUNT as UNTIL, which gives the same instances.
        let set: rrule::RRuleSet = counted.parse().unwrap();
        let last = set.into_iter().last().unwrap().timestamp();
        let rewritten = count_to_until(counted, last);
        assert!(
            rewritten.contains("UNTIL=") && !rewritten.contains("COUNT"),
            "{rewritten}"
        );
        assert!(fast_forward(&rewritten, from).is_some());
        assert_eq!(
            expand(&rewritten, 1800, from, to, 100).unwrap(),
            expand(counted, 1800, from, to, 100).unwrap()
        );
    }

    #[test]
    fn files_are_split_per_uid_and_keep_their_timezones() {
        let two = RECURRING.replace("END:VCALENDAR\r\n", "BEGIN:VEVENT\r\nUID:other\r\nDTSTART;VALUE=DATE:20261124\r\nSUMMARY:Holiday\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n");
        let parts = split_by_uid(parse(&two).unwrap());
        assert_eq!(
            parts.iter().map(|(u, _)| u.as_str()).collect::<Vec<_>>(),
            ["other", "standup"]
        );
        let (_, rows) = index(&parts[0].1).unwrap();
        assert!(rows[0].all_day);
        assert_eq!(rows[0].end - rows[0].start, 86_400);
        assert!(parts[1].1.to_string().contains("VTIMEZONE"));
    }

    /// libical's recurrence test vectors (`icalrecur_test.out`, from Debian's libical3 source;
    /// tests/setup.sh fetches it): each RRULE and DTSTART with the instances libical expands,
    /// some from a later START-AT. Every vector goes through our own path — parsed as an event,
    /// indexed, expanded — and must give exactly libical's instances.
    #[test]
    fn libical_recurrence_vectors() {
        let path = std::env::var_os("XDG_CACHE_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache")))
            .unwrap()
            .join("cowork/corpora/libical-3.0.16/icalrecur_test.out");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} — run tests/setup.sh (it fetches the corpus)",
                path.display()
            )
        });
        let (mut total, mut failures) = (0, Vec::new());
        for block in text.split("\n\n").filter(|b| b.contains("RRULE:")) {
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|l| l.strip_prefix(name).map(str::to_string))
            };
            let (rule, start) = (field("RRULE:").unwrap(), field("DTSTART:").unwrap());
            // libical's vectors expand the rule alone; an event's set also holds its DTSTART
            // (RFC 5545 §3.3.10: "always counts as the first occurrence"), which a rule not
            // synchronized with it does not give.
            let expected = match field("INSTANCES:").unwrap_or_default() {
                given if field("START-AT:").is_none() && !given.starts_with(&start) => {
                    format!("{start},{given}").trim_end_matches(',').to_string()
                }
                given => given,
            };
            total += 1;
            let ics = format!(
                "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VEVENT\r\nUID:v\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{start}\r\nRRULE:{rule}\r\nSUMMARY:v\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
            );
            let got = parse(&ics)
                .and_then(|cal| index(&cal))
                .and_then(|(_, rows)| {
                    let master = &rows[0];
                    let from = match field("START-AT:") {
                        Some(at) => NaiveDateTime::parse_from_str(&at, "%Y%m%dT%H%M%S")
                            .map_err(|e| e.to_string())?
                            .and_utc()
                            .timestamp(),
                        None => master.start,
                    };
                    let far = master.start + 300 * 366 * 86_400;
                    let text = master.rrule.as_deref().ok_or("not recurring")?;
                    expand(text, 0, from, far, 100_000)
                });
            let zulu = if start.ends_with('Z') { "Z" } else { "" };
            let got = got.map(|starts| {
                starts
                    .iter()
                    .map(|s| format!("{}{zulu}", utc_of(*s).format("%Y%m%dT%H%M%S")))
                    .collect::<Vec<_>>()
                    .join(",")
            });
            if got.as_deref() != Ok(expected.as_str()) {
                failures.push(format!(
                    "RRULE:{rule} DTSTART:{start}\n  libical: {expected}\n  ours:    {got:?}"
                ));
            }
        }
        println!(
            "libical recurrence vectors: {} of {total} expanded exactly",
            total - failures.len()
        );
        assert_eq!(total, 70, "the corpus changed");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn a_control_character_in_a_value_never_reaches_the_text() {
        for title in [
            "a\r\nRRULE:FREQ=DAILY",
            "a\rRRULE:FREQ=DAILY",
            "a\u{b}\u{1b}[2Jb",
        ] {
            let mut event = Event::new();
            event.uid("u").summary(title);
            let mut cal = Calendar::new();
            cal.push(event.done());
            let text = to_text(&cal);
            let stray = text.replace("\r\n", "\n");
            assert!(
                !stray.contains(|c: char| c.is_control() && c != '\n'),
                "{text:?}"
            );
            let parsed = parse(&text).unwrap();
            let event = events(&parsed).next().unwrap();
            assert_eq!(event.property_value("RRULE"), None, "{text:?}");
        }
    }

    #[test]
    fn bad_input_names_the_problem() {
        assert!(parse("hello").unwrap_err().contains("BEGIN:VCALENDAR"));
        let bad = RECURRING.replace("TZID=W. Europe Standard Time", "TZID=Mars/Olympus");
        assert!(
            index(&parse(&bad).unwrap())
                .unwrap_err()
                .contains("Mars/Olympus")
        );
        assert!(
            parse_when("start", "tomorrow", None)
                .unwrap_err()
                .contains("2026-11-23")
        );
    }
}
