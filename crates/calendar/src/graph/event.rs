//! One event between iCalendar text (what the calendar stores and indexes) and a Microsoft Graph
//! `event` resource (<https://learn.microsoft.com/graph/api/resources/event>).
//!
//! Hand-written: the one Rust crate for Graph events (`io-msgraph`) converts through `ical-rs`
//! and `jiff`, a second iCalendar and time stack beside `icalendar` and `chrono`; the mapping
//! itself is these few fields. What Graph cannot hold (changed or skipped occurrences of a
//! series, rules beyond its six patterns) is refused by name, and the sync keeps such an event
//! here rather than send a different one.

use super::recurrence;
use crate::ics::{self, AlarmTrigger};
use chrono::{NaiveDate, NaiveDateTime, TimeZone, Utc};
use icalendar::{
    Alarm, Calendar, CalendarDateTime, Component, DatePerhapsTime, Event, EventLike, Property,
};
use serde::Deserialize;
use serde_json::{Value, json};

/// The fields of a Graph event Cowork reads.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GraphEvent {
    pub id: String,
    #[serde(rename = "@odata.etag")]
    pub etag: Option<String>,
    #[serde(rename = "iCalUId")]
    pub ical_uid: Option<String>,
    pub subject: Option<String>,
    pub body: Option<ItemBody>,
    pub start: Option<DateTimeTimeZone>,
    pub end: Option<DateTimeTimeZone>,
    pub original_start_time_zone: Option<String>,
    pub is_all_day: bool,
    pub location: Option<Location>,
    pub recurrence: Option<recurrence::Recurrence>,
    pub attendees: Vec<Attendee>,
    pub organizer: Option<Recipient>,
    pub is_cancelled: bool,
    pub is_reminder_on: bool,
    pub reminder_minutes_before_start: i64,
    pub show_as: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ItemBody {
    pub content_type: String,
    pub content: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DateTimeTimeZone {
    pub date_time: String,
    pub time_zone: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Location {
    pub display_name: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Recipient {
    pub email_address: EmailAddress,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EmailAddress {
    pub name: Option<String>,
    pub address: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Attendee {
    pub email_address: EmailAddress,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub status: Option<ResponseStatus>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResponseStatus {
    pub response: Option<String>,
}

/// Graph's answer to the RFC 5545 participation status of an attendee.
const RESPONSES: [(&str, &str); 4] = [
    ("accepted", "ACCEPTED"),
    ("declined", "DECLINED"),
    ("tentativelyAccepted", "TENTATIVE"),
    ("organizer", "ACCEPTED"),
];

/// Graph writes `2026-12-01T09:00:00.0000000`: seven fractional digits and no zone.
fn parse_graph_time(text: &str) -> Result<NaiveDateTime, String> {
    let whole = text.split('.').next().unwrap_or(text);
    NaiveDateTime::parse_from_str(whole, "%Y-%m-%dT%H:%M:%S")
        .map_err(|_| format!("the server's time {text:?} is not a date and time"))
}

fn graph_time_text(wall: &NaiveDateTime) -> String {
    wall.format("%Y-%m-%dT%H:%M:%S").to_string()
}

/// A Graph start or end, placed: the instant it names.
fn instant_of(value: &DateTimeTimeZone) -> Result<chrono::DateTime<Utc>, String> {
    let wall = parse_graph_time(&value.date_time)?;
    let zone = value.time_zone.as_deref().unwrap_or("UTC");
    let tz = ics::resolve_tz(zone).ok_or_else(|| format!("the server's time zone {zone:?}"))?;
    crate::zone::local_instant(&tz, &wall)
        .map(|t| t.with_timezone(&Utc))
        .ok_or_else(|| format!("{wall} does not exist in {zone}"))
}

/// The iCalendar date-time for an instant: in the zone the event was made in when it is one we
/// know (so a weekly 09:00 stays 09:00 across daylight saving), else in UTC.
fn ical_time(instant: chrono::DateTime<Utc>, zone: Option<chrono_tz::Tz>) -> DatePerhapsTime {
    match zone {
        Some(tz) => DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone {
            date_time: instant.with_timezone(&tz).naive_local(),
            tzid: tz.name().to_string(),
        }),
        None => DatePerhapsTime::DateTime(CalendarDateTime::Utc(instant)),
    }
}

/// A Graph event as iCalendar text (one VEVENT in a VCALENDAR).
pub fn to_ics(graph: &GraphEvent) -> Result<String, String> {
    let (Some(start), Some(end)) = (&graph.start, &graph.end) else {
        return Err(format!("event {} has no start or end", graph.id));
    };
    let mut event = Event::new();
    event.uid(&plain(graph.ical_uid.as_deref().unwrap_or(&graph.id)));
    event.summary(graph.subject.as_deref().unwrap_or_default());
    let zone = graph
        .original_start_time_zone
        .as_deref()
        .and_then(ics::resolve_tz)
        .filter(|tz| *tz != chrono_tz::UTC);
    let all_day = graph.is_all_day;
    if all_day {
        // All-day events are dates wherever one is: Graph writes them as midnights.
        event.starts(parse_graph_time(&start.date_time)?.date());
        event.ends(parse_graph_time(&end.date_time)?.date());
    } else {
        event.starts(ical_time(instant_of(start)?, zone));
        event.ends(ical_time(instant_of(end)?, zone));
    }
    if let Some(recurrence) = &graph.recurrence {
        let rule = recurrence::to_rrule(recurrence, |date| until_text(date, all_day, zone))?;
        event.add_property("RRULE", rule);
    }
    add_details(&mut event, graph);
    let mut calendar = Calendar::new();
    calendar.push(event.done());
    Ok(ics::to_text(&calendar))
}

/// UNTIL for a series ending on `date` (inclusive): a date for all-day events, else the end of
/// that day in the event's zone, in UTC as RFC 5545 §3.3.10 requires with a zoned start.
fn until_text(date: NaiveDate, all_day: bool, zone: Option<chrono_tz::Tz>) -> String {
    if all_day {
        return date.format("%Y%m%d").to_string();
    }
    let last = date.and_hms_opt(23, 59, 59).expect("a valid time");
    let instant = match zone {
        Some(tz) => crate::zone::local_instant(&tz, &last).map(|t| t.with_timezone(&Utc)),
        None => Some(last.and_utc()),
    };
    instant
        .unwrap_or_else(|| last.and_utc())
        .format("%Y%m%dT%H%M%SZ")
        .to_string()
}

fn add_details(event: &mut Event, graph: &GraphEvent) {
    if let Some(body) = graph.body.as_ref().filter(|b| !b.content.trim().is_empty()) {
        event.description(body.content.trim());
    }
    if let Some(place) = graph
        .location
        .as_ref()
        .filter(|l| !l.display_name.is_empty())
    {
        event.location(&place.display_name);
    }
    if let Some(organizer) = graph
        .organizer
        .as_ref()
        .and_then(|o| person("ORGANIZER", &o.email_address))
    {
        event.append_property(organizer);
    }
    for attendee in &graph.attendees {
        let Some(mut property) = person("ATTENDEE", &attendee.email_address) else {
            continue;
        };
        let optional = attendee.kind.as_deref() == Some("optional");
        property.add_parameter(
            "ROLE",
            if optional {
                "OPT-PARTICIPANT"
            } else {
                "REQ-PARTICIPANT"
            },
        );
        let answer = attendee.status.as_ref().and_then(|s| s.response.as_deref());
        let partstat = RESPONSES
            .iter()
            .find(|r| Some(r.0) == answer)
            .map_or("NEEDS-ACTION", |r| r.1);
        property.add_parameter("PARTSTAT", partstat);
        event.append_multi_property(property.done());
    }
    if graph.is_cancelled {
        event.add_property("STATUS", "CANCELLED");
    }
    if graph.show_as.as_deref() == Some("free") {
        event.add_property("TRANSP", "TRANSPARENT");
    }
    if graph.is_reminder_on {
        // Graph allows up to four weeks ahead; a larger number is not a reminder anyone set.
        let minutes = graph
            .reminder_minutes_before_start
            .clamp(0, 4 * 7 * 24 * 60);
        event.alarm(Alarm::display(
            "Reminder",
            -chrono::Duration::minutes(minutes),
        ));
    }
}

/// Server text for a place the writer does not escape (an address, a parameter): no control
/// character, and no `"`, which would let a value pass as already quoted. (Escaped values —
/// titles, places, descriptions — are cleaned where every calendar text is written,
/// `ics::to_text`.)
fn plain(value: &str) -> String {
    value
        .chars()
        .filter(|c| !c.is_control() && *c != '"')
        .collect()
}

/// An ORGANIZER or ATTENDEE; `None` for an address that is not one.
fn person(key: &str, who: &EmailAddress) -> Option<Property> {
    let address = plain(&who.address);
    let valid = address.contains('@') && !address.contains(char::is_whitespace);
    if !valid {
        return None;
    }
    let mut property = Property::new(key, format!("mailto:{address}"));
    if let Some(name) = who.name.as_deref().map(plain).filter(|n| !n.is_empty()) {
        property.add_parameter("CN", &name);
    }
    Some(property)
}

/// The Graph body (for a create or an update) of an event's iCalendar text. `Err` names what
/// Graph cannot hold.
pub fn to_graph(text: &str) -> Result<Value, String> {
    let calendar = ics::parse(text)?;
    let events: Vec<&Event> = ics::events(&calendar).collect();
    let [event] = events.as_slice() else {
        return Err(
            "changed single occurrences of a repeating event: Microsoft 365 keeps them apart, which Cowork does not send yet".into(),
        );
    };
    for (property, what) in [("EXDATE", "skipped occurrences"), ("RDATE", "extra dates")] {
        if event.properties().contains_key(property)
            || event.multi_properties().contains_key(property)
        {
            return Err(format!("{what} ({property}) of a repeating event"));
        }
    }
    let start = event.get_start().ok_or("an event without DTSTART")?;
    let end = end_of(event, &start)?;
    let all_day = matches!(start, DatePerhapsTime::Date(_));
    let (start_json, wall_start, zone) = graph_time(&start)?;
    let (end_json, _, _) = graph_time(&end)?;
    let recurrence = match event.property_value("RRULE") {
        Some(rule) => {
            let until = until_date(rule, zone, wall_start.time());
            recurrence::to_graph(rule, wall_start.date(), until)?
        }
        None => Value::Null,
    };
    let reminder = ics::alarms_of(event).into_iter().find_map(|a| match a {
        AlarmTrigger::FromStart(s) if s <= 0 => Some(-s / 60),
        _ => None,
    });
    Ok(json!({
        "subject": event.get_summary().unwrap_or_default(),
        "body": {"contentType": "text", "content": event.get_description().unwrap_or_default()},
        "start": start_json,
        "end": end_json,
        "isAllDay": all_day,
        "location": {"displayName": event.get_location().unwrap_or_default()},
        "attendees": attendees_of(event),
        "recurrence": recurrence,
        "isReminderOn": reminder.is_some(),
        "reminderMinutesBeforeStart": reminder.unwrap_or(0),
        "showAs": if event.property_value("TRANSP") == Some("TRANSPARENT") { "free" } else { "busy" },
    }))
}

/// The fields of `ours` (a body from [`to_graph`]) whose values differ from `theirs` (the server's
/// current event through the same conversion). An update sends only those: setting
/// `recurrence` makes Exchange drop a series' changed occurrences, and setting `body` replaces
/// formatted text with plain — neither should happen because a title changed.
pub fn changed_fields(ours: Value, theirs: &Value) -> Value {
    let Value::Object(fields) = ours else {
        return ours;
    };
    Value::Object(
        fields
            .into_iter()
            .filter(|(key, value)| theirs.get(key) != Some(value))
            .collect(),
    )
}

/// The UID of an event's iCalendar text (its first event's).
pub fn uid_of(text: &str) -> Option<String> {
    let calendar = ics::parse(text).ok()?;
    ics::events(&calendar).find_map(|e| e.get_uid().map(String::from))
}

/// DTEND, else DTSTART + DURATION, else DTSTART (a day later for a date).
fn end_of(event: &Event, start: &DatePerhapsTime) -> Result<DatePerhapsTime, String> {
    if let Some(end) = event.get_end() {
        return Ok(end);
    }
    let seconds = match event.property_value("DURATION") {
        Some(d) => ics::parse_duration(d)?,
        None if matches!(start, DatePerhapsTime::Date(_)) => 86_400,
        None => 0,
    };
    let too_far = || format!("DURATION {seconds} s is beyond any calendar");
    let later = chrono::Duration::try_seconds(seconds).ok_or_else(too_far)?;
    let add = |t: NaiveDateTime| t.checked_add_signed(later).ok_or_else(too_far);
    Ok(match start.clone() {
        DatePerhapsTime::Date(d) => {
            DatePerhapsTime::Date(d.checked_add_signed(later).ok_or_else(too_far)?)
        }
        DatePerhapsTime::DateTime(CalendarDateTime::Utc(t)) => add(t.naive_utc())?.and_utc().into(),
        DatePerhapsTime::DateTime(CalendarDateTime::Floating(t)) => add(t)?.into(),
        DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, tzid }) => {
            DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone {
                date_time: add(date_time)?,
                tzid,
            })
        }
    })
}

/// A Graph `dateTimeTimeZone`, the wall time it names, and its zone when not UTC.
fn graph_time(
    value: &DatePerhapsTime,
) -> Result<(Value, NaiveDateTime, Option<chrono_tz::Tz>), String> {
    let zoned = |wall: NaiveDateTime, tz: Option<chrono_tz::Tz>| {
        let name = tz.map_or("UTC".to_string(), |tz| tz.name().to_string());
        (
            json!({"dateTime": graph_time_text(&wall), "timeZone": name}),
            wall,
            tz,
        )
    };
    Ok(match value {
        DatePerhapsTime::Date(d) => zoned(d.and_hms_opt(0, 0, 0).expect("midnight"), None),
        DatePerhapsTime::DateTime(CalendarDateTime::Utc(t)) => zoned(t.naive_utc(), None),
        // A floating time is a wall time wherever the person is: theirs.
        DatePerhapsTime::DateTime(CalendarDateTime::Floating(t)) => {
            zoned(*t, crate::zone::Zone::Local.iana())
        }
        DatePerhapsTime::DateTime(CalendarDateTime::WithTimezone { date_time, tzid }) => {
            match ics::resolve_tz(tzid) {
                Some(tz) => zoned(*date_time, Some(tz)),
                // A zone only the event's own VTIMEZONE defines: sent as the instant, in UTC.
                None => zoned(utc_of(value)?, None),
            }
        }
    })
}

fn utc_of(value: &DatePerhapsTime) -> Result<NaiveDateTime, String> {
    Ok(ics::utc_of(ics::to_index(value)?).naive_utc())
}

/// UNTIL as the last wall date an instance falls on (Graph's `endDate`, inclusive): the date
/// UNTIL names, or the day before when UNTIL is earlier that day than the instances start.
fn until_date(
    rule: &str,
    zone: Option<chrono_tz::Tz>,
    starts_at: chrono::NaiveTime,
) -> Option<NaiveDate> {
    let until = rule.split(';').find_map(|p| p.strip_prefix("UNTIL="))?;
    if let Some(utc) = until.strip_suffix('Z') {
        let instant = NaiveDateTime::parse_from_str(utc, "%Y%m%dT%H%M%S").ok()?;
        let utc = Utc.from_utc_datetime(&instant);
        let wall = match zone {
            Some(tz) => utc.with_timezone(&tz).naive_local(),
            None => utc.naive_utc(),
        };
        let last = if wall.time() >= starts_at {
            wall.date()
        } else {
            wall.date().pred_opt()?
        };
        return Some(last);
    }
    let date_part = until.get(..8)?;
    NaiveDate::parse_from_str(date_part, "%Y%m%d").ok()
}

fn attendees_of(event: &Event) -> Vec<Value> {
    let Some(list) = event.multi_properties().get("ATTENDEE") else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|p| {
            let address = p.value().trim();
            let address = address
                .strip_prefix("mailto:")
                .or_else(|| address.strip_prefix("MAILTO:"))?;
            let param = |key: &str| p.params().get(key).map(|v| v.value().to_string());
            let optional = param("ROLE").as_deref() == Some("OPT-PARTICIPANT");
            Some(json!({
                "emailAddress": {"address": address, "name": param("CN").unwrap_or_default()},
                "type": if optional { "optional" } else { "required" },
            }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What Graph does with a body it is sent, as its reference describes: times kept in UTC with
    /// the zone they came in as the original zone, a server id and UID.
    fn served(body: &Value) -> GraphEvent {
        let mut event = body.clone();
        let all_day = body["isAllDay"].as_bool().unwrap_or(false);
        for (side, original) in [
            ("start", "originalStartTimeZone"),
            ("end", "originalEndTimeZone"),
        ] {
            let given: DateTimeTimeZone = serde_json::from_value(body[side].clone()).unwrap();
            let zone = given.time_zone.clone().unwrap();
            let utc = if all_day {
                parse_graph_time(&given.date_time).unwrap()
            } else {
                instant_of(&given).unwrap().naive_utc()
            };
            event[side] = json!({"dateTime": format!("{}.0000000", graph_time_text(&utc)), "timeZone": "UTC"});
            event[original] = json!(zone);
        }
        event["id"] = json!("AAMkAGI=");
        event["iCalUId"] = json!("040000008200E00074C5B7101A82E008");
        event["@odata.etag"] = json!("W/\"x\"");
        serde_json::from_value(event).unwrap()
    }

    fn instances_of(text: &str) -> Vec<(i64, i64)> {
        let calendar = ics::parse(text).unwrap();
        let (_, rows) = ics::index(&calendar).unwrap();
        let master = &rows[0];
        let from = master.start - 1;
        match &master.rrule {
            Some(rule) => ics::instances(
                rule,
                master.end - master.start,
                from,
                from + 3 * 366 * 86_400,
                40,
            )
            .unwrap()
            .into_iter()
            .map(|i| (i.start, i.start + master.end - master.start))
            .collect(),
            None => vec![(master.start, master.end)],
        }
    }

    const ZONES: [&str; 5] = [
        "Europe/Berlin",
        "America/New_York",
        "Asia/Shanghai",
        "Australia/Sydney",
        "UTC",
    ];
    const RULES: [&str; 8] = [
        "",
        "FREQ=DAILY;COUNT=5",
        "FREQ=WEEKLY;BYDAY=MO,TH;COUNT=9",
        "FREQ=WEEKLY;INTERVAL=2;UNTIL=20270601T000000Z",
        "FREQ=MONTHLY;BYMONTHDAY=28;COUNT=7",
        "FREQ=MONTHLY;BYDAY=-1FR;COUNT=6",
        "FREQ=YEARLY;COUNT=3",
        "FREQ=MONTHLY;BYDAY=2TU;COUNT=5",
    ];

    proptest! {
        /// An event Cowork writes, sent to Graph and read back as Graph serves it, has the same
        /// instances at the same instants (across clock changes, in every zone and pattern).
        #[test]
        fn an_event_sent_to_graph_comes_back_with_the_same_instances(
            zone in 0..ZONES.len(),
            rule in 0..RULES.len(),
            day in 0i64..400,
            minute in 0i64..(24 * 4),
            length in 1i64..(8 * 4),
            all_day in any::<bool>(),
        ) {
            let start = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap().and_hms_opt(0, 0, 0).unwrap()
                + chrono::Duration::days(day) + chrono::Duration::minutes(minute * 15);
            let (dtstart, dtend) = if all_day {
                (format!("DTSTART;VALUE=DATE:{}", start.format("%Y%m%d")),
                 format!("DTEND;VALUE=DATE:{}", (start + chrono::Duration::days(1 + length % 3)).format("%Y%m%d")))
            } else {
                let end = start + chrono::Duration::minutes(length * 15);
                (format!("DTSTART;TZID={}:{}", ZONES[zone], start.format("%Y%m%dT%H%M%S")),
                 format!("DTEND;TZID={}:{}", ZONES[zone], end.format("%Y%m%dT%H%M%S")))
            };
            let rrule = match RULES[rule] {
                "" => String::new(),
                r if all_day => format!("RRULE:{}\r\n", r.replace("T000000Z", "")),
                r => format!("RRULE:{r}\r\n"),
            };
            let text = format!(
                "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t\r\nBEGIN:VEVENT\r\nUID:u1\r\nDTSTAMP:20260101T000000Z\r\n{dtstart}\r\n{dtend}\r\n{rrule}SUMMARY:Meet\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
            );
            let Ok(body) = to_graph(&text) else {
                // A rule Graph cannot hold is refused, never sent changed.
                return Ok(());
            };
            let back = to_ics(&served(&body)).unwrap();
            prop_assert_eq!(instances_of(&back), instances_of(&text), "{}\n{}\n{}", text, body, back);
        }
    }

    fn hostile_event(text: &str, name: &str, address: &str) -> GraphEvent {
        serde_json::from_value(json!({
            "id": "AAMk=", "iCalUId": text, "subject": text,
            "body": {"contentType": "text", "content": text},
            "start": {"dateTime": "2026-12-01T09:00:00.0000000", "timeZone": "UTC"},
            "end": {"dateTime": "2026-12-01T10:00:00.0000000", "timeZone": "UTC"},
            "location": {"displayName": text},
            "organizer": {"emailAddress": {"name": name, "address": address}},
            "attendees": [{"type": "required", "emailAddress": {"name": name, "address": address}}],
            "isReminderOn": true, "reminderMinutesBeforeStart": i64::MAX,
        }))
        .unwrap()
    }

    /// What a server writes in an event's text can never become a property of its own: the
    /// text read back is one event, with no repeat rule and no attendee it did not list.
    #[test]
    fn a_servers_text_cannot_add_properties() {
        let inject = "x\r\nRRULE:FREQ=DAILY\rATTENDEE:mailto:exfil@evil.example\r\nEND:VEVENT\r\nBEGIN:VEVENT";
        let name =
            "\"x\":mailto:a@b\r\nATTENDEE:mailto:exfil@evil.example\r\nRRULE:FREQ=DAILY\r\nX-A:\"";
        for (text, who, address) in [
            (inject, "Bo", "bo@example.org"),
            ("Meet", name, "bo@example.org"),
            ("Meet", "Bo", "bo@example.org\r\nRRULE:FREQ=DAILY"),
        ] {
            let ics_text = to_ics(&hostile_event(text, who, address)).unwrap();
            let calendar = ics::parse(&ics_text).unwrap();
            let events: Vec<&Event> = ics::events(&calendar).collect();
            assert_eq!(events.len(), 1, "{ics_text}");
            assert_eq!(events[0].property_value("RRULE"), None, "{ics_text}");
            let attendees = events[0]
                .multi_properties()
                .get("ATTENDEE")
                .map_or(0, Vec::len);
            assert!(attendees <= 1, "{ics_text}");
            assert!(
                !ics_text.contains("\r\nRRULE") && !ics_text.contains("\r\nATTENDEE:mailto:exfil"),
                "{ics_text}"
            );
        }
    }

    proptest! {
        /// Any text in any field: the event reads back as one event with at most the attendees
        /// listed, and converting it never panics.
        #[test]
        fn any_server_text_reads_as_one_event(text in "\\PC{0,40}", name in "\\PC{0,20}", address in "\\PC{0,30}") {
            let ics_text = to_ics(&hostile_event(&text, &name, &address)).unwrap();
            let calendar = ics::parse(&ics_text).unwrap();
            let events: Vec<&Event> = ics::events(&calendar).collect();
            prop_assert_eq!(events.len(), 1);
            prop_assert_eq!(events[0].property_value("RRULE"), None);
            prop_assert!(events[0].multi_properties().get("ATTENDEE").map_or(0, Vec::len) <= 1);
            let _ = to_graph(&ics_text);
        }

        /// Durations past the calendar's end are refused, not a panic.
        #[test]
        fn any_duration_is_sent_or_refused(days in any::<i64>()) {
            let text = format!(
                "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t\r\nBEGIN:VEVENT\r\nUID:u\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20260101\r\nDURATION:P{}D\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
                days.unsigned_abs()
            );
            let _ = to_graph(&text);
        }
    }
}
