//! Time zones a file defines itself. Outlook, Lotus Notes and others write TZIDs no zone
//! database knows ("Western/Central Europe", "(UTC-03:00) Brasília", "custom_America/New_York")
//! next to a VTIMEZONE giving the zone's rules. Each such zone is read here and matched to the
//! IANA zone with the same UTC offsets over the years the file's events use, and the events are
//! rewritten to that IANA name — so recurrence, daylight saving and every later reader (index,
//! tools, CalDAV, export) work from one zone database. Hand-written: no Rust crate evaluates a
//! VTIMEZONE (icalendar only parses it).

use chrono::{Datelike, NaiveDateTime, TimeZone};
use chrono_tz::{OffsetComponents, Tz};
use icalendar::{Calendar, CalendarComponent, Component};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

/// `+0100`, `-0330`, `+053000` → seconds east of UTC.
fn offset(text: &str) -> Option<i64> {
    let (sign, digits) = match text.trim().split_at_checked(1)? {
        ("+", d) => (1, d),
        ("-", d) => (-1, d),
        _ => return None,
    };
    if ![4, 6].contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| digits.get(r).map_or(Some(0), |d| d.parse::<i64>().ok());
    let (hours, minutes, seconds) = (n(0..2)?, n(2..4)?, n(4..6)?);
    // RFC 5545 §3.3.14: under a day. Expansion relies on it (it widens a range by a day).
    if hours > 23 || minutes > 59 || seconds > 59 {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60 + seconds))
}

/// A local date-time, or a date (its midnight), as observances write them.
fn local_time(text: &str) -> Option<NaiveDateTime> {
    let text = text.trim().trim_end_matches('Z');
    NaiveDateTime::parse_from_str(text, "%Y%m%dT%H%M%S")
        .ok()
        .or_else(|| {
            Some(
                chrono::NaiveDate::parse_from_str(text, "%Y%m%d")
                    .ok()?
                    .and_time(chrono::NaiveTime::MIN),
            )
        })
}

/// One STANDARD or DAYLIGHT part of a VTIMEZONE, as written: its offsets, its first onset
/// (local time) and when it recurs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Observance {
    from: i64,
    to: i64,
    start: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rrule: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    rdates: Vec<String>,
}

/// A VTIMEZONE's observances; `None` when one cannot be read.
fn observances(zone: &impl Component) -> Option<Vec<Observance>> {
    // Real zones have a few hundred observances at most (one per historical change).
    if zone.components().len() > 1_000 {
        return None;
    }
    zone.components()
        .iter()
        .map(|observance| {
            let start = observance.property_value("DTSTART")?;
            local_time(start)?;
            let rdates = observance
                .multi_properties()
                .get("RDATE")
                .into_iter()
                .flatten()
                .flat_map(|p| p.value().split(',').map(str::to_string).collect::<Vec<_>>())
                .take(MAX_ONSETS + 1)
                .collect();
            Some(Observance {
                from: offset(observance.property_value("TZOFFSETFROM")?)?,
                to: offset(observance.property_value("TZOFFSETTO")?)?,
                start: start.trim().to_string(),
                rrule: observance.property_value("RRULE").map(str::to_string),
                rdates,
            })
        })
        .collect::<Option<Vec<_>>>()
        .filter(|o| !o.is_empty())
}

/// Every change of offset the observances define up to `until_year`: (UTC instant, offset
/// after). None when they cannot be read.
fn onsets_of(observances: &[Observance], until_year: i32) -> Option<Vec<(i64, i64)>> {
    let mut out = Vec::new();
    for observance in observances {
        // A zone's whole history is a few hundred changes: a file's zone (or a self-describing
        // name) listing more is refused, not worked through.
        if out.len() > MAX_ONSETS {
            return None;
        }
        let start = local_time(&observance.start)?;
        let mut locals = vec![start];
        if let Some(rule) = &observance.rrule {
            // Local wall time, expanded as if UTC (no zone applies to it yet).
            let text = format!("DTSTART:{}Z\nRRULE:{rule}", start.format("%Y%m%dT%H%M%S"));
            let set: rrule::RRuleSet = text.parse().ok()?;
            locals.extend(
                set.into_iter()
                    .take(5_000)
                    .map(|d| d.naive_utc())
                    .take_while(|d| d.year() <= until_year),
            );
        }
        let rdates = observance.rdates.iter().take(MAX_ONSETS);
        locals.extend(rdates.filter_map(|d| local_time(d)));
        out.extend(
            locals
                .into_iter()
                .map(|l| (l.and_utc().timestamp() - observance.from, observance.to)),
        );
    }
    if out.len() > MAX_ONSETS {
        return None;
    }
    out.sort();
    out.dedup();
    (!out.is_empty()).then_some(out)
}

/// The most changes of offset a zone may define (to [`HORIZON_YEAR`]).
const MAX_ONSETS: usize = 20_000;

/// The offset a VTIMEZONE gives at `t`: that of the last change at or before it (before the
/// first, the first one's own).
fn offset_at(onsets: &[(i64, i64)], t: i64) -> i64 {
    match onsets.partition_point(|(at, _)| *at <= t) {
        0 => onsets[0].1,
        i => onsets[i - 1].1,
    }
}

/// Zones people mean most often, tried first (the Windows names' usual targets), so a match
/// lands on `Europe/Berlin` rather than on another zone with the same rules.
const PREFERRED: &[&str] = &[
    "Europe/Berlin",
    "Europe/London",
    "Europe/Paris",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "America/Sao_Paulo",
    "Asia/Shanghai",
    "Asia/Tokyo",
    "Asia/Kolkata",
    "Asia/Singapore",
    "Australia/Sydney",
    "Pacific/Auckland",
    "UTC",
];

/// `compute()`, remembered in `cache` under `key` — worked out outside the lock, and the cache
/// started afresh when it holds `cap` entries (few files define zones of their own: a full
/// cache is an unusual one).
fn remembered<K: Eq + std::hash::Hash, V: Clone>(
    cache: &Mutex<HashMap<K, V>>,
    key: K,
    cap: usize,
    compute: impl FnOnce() -> V,
) -> V {
    let known = cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .cloned();
    if let Some(value) = known {
        return value;
    }
    let value = compute();
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= cap {
        cache.clear();
    }
    cache.insert(key, value.clone());
    value
}

/// The IANA zone with exactly this VTIMEZONE's offsets at noon UTC of every day of `years` and
/// around each of its changes: first a zone the TZID names inside it (`custom_America/New_York`),
/// then the preferred ones, then every zone (a fixed offset finds its `Etc/GMT±n`).
fn matching_zone(tzid: &str, zone: &impl Component, years: (i32, i32)) -> Option<Tz> {
    type Matches = HashMap<(String, i32, i32), Option<Tz>>;
    // Every object of a file, and every later index of it, asks again: sampling every zone
    // over the years is done once per zone and years.
    static MATCHED: LazyLock<Mutex<Matches>> = LazyLock::new(Default::default);
    let observances = observances(zone)?;
    let asked = (key_of(tzid, &observances), years.0, years.1);
    remembered(&MATCHED, asked, 256, || {
        sampled_match(tzid, &observances, years)
    })
}

/// [`matching_zone`], worked out.
fn sampled_match(tzid: &str, observances: &[Observance], years: (i32, i32)) -> Option<Tz> {
    let onsets = onsets_of(observances, years.1)?;
    let first = chrono::NaiveDate::from_ymd_opt(years.0, 1, 1)?;
    let days = (chrono::NaiveDate::from_ymd_opt(years.1, 12, 31)? - first).num_days();
    let noon = |d: i64| {
        (first + chrono::Duration::days(d))
            .and_hms_opt(12, 0, 0)
            .unwrap()
            .and_utc()
            .timestamp()
    };
    // Around each change too: a zone changing on the same days at another hour is another zone.
    let (from, to) = (noon(0) - 86_400, noon(days) + 86_400);
    let changes = onsets
        .iter()
        .filter(|(at, _)| (from..to).contains(at))
        .flat_map(|(at, _)| [at - 1, *at]);
    let samples: Vec<i64> = changes.chain((0..=days).map(noon)).collect();
    let same = |tz: &Tz| {
        samples.iter().all(|t| {
            let o = tz.offset_from_utc_datetime(&crate::ics::utc_of(*t).naive_utc());
            (o.base_utc_offset() + o.dst_offset()).num_seconds() == offset_at(&onsets, *t)
        })
    };
    let named = chrono_tz::TZ_VARIANTS
        .iter()
        .filter(|tz| tz.name().contains('/') && tzid.contains(tz.name()));
    let preferred = PREFERRED.iter().filter_map(|n| n.parse::<Tz>().ok());
    let fixed = chrono_tz::TZ_VARIANTS
        .iter()
        .filter(|tz| tz.name().starts_with("Etc/"));
    named
        .copied()
        .chain(preferred)
        .chain(fixed.copied())
        .chain(chrono_tz::TZ_VARIANTS.iter().copied())
        .find(same)
}

/// The VTIMEZONEs of `cal` under a TZID no zone database knows, with that TZID.
fn unknown_zones(cal: &Calendar) -> impl Iterator<Item = (String, &impl Component)> {
    cal.components.iter().filter_map(|c| {
        let CalendarComponent::Other(zone) = c else {
            return None;
        };
        let tzid = zone.property_value("TZID")?.trim_matches('"').to_string();
        (zone.component_kind() == "VTIMEZONE" && crate::ics::resolve_tz(&tzid).is_none())
            .then_some((tzid, zone))
    })
}

/// TZIDs that name no IANA zone, mapped to the IANA zone their VTIMEZONE matches over the
/// years of the calendar's events (unmatched ones are left out: their events are refused,
/// naming the zone).
pub fn adoptable(cal: &Calendar) -> BTreeMap<String, Tz> {
    let years: Vec<i32> = crate::ics::events(cal)
        .filter_map(|e| e.property_value("DTSTART"))
        .filter_map(|v| v.get(..4)?.parse().ok())
        .collect();
    let (Some(&min), Some(&max)) = (years.iter().min(), years.iter().max()) else {
        return BTreeMap::new();
    };
    unknown_zones(cal)
        .filter_map(|(tzid, zone)| {
            let tz = matching_zone(&tzid, zone, (min, max.saturating_add(1)))?;
            Some((tzid, tz))
        })
        .collect()
}

/// Rewrites every TZID the map names (in event properties and the VTIMEZONE itself) to its
/// IANA zone; what was done, for the import's report.
pub fn adopt(cal: &mut Calendar) -> Vec<String> {
    let map = adoptable(cal);
    adopt_with(cal, &map)
}

/// [`adopt`] with the map already made.
pub fn adopt_with(cal: &mut Calendar, map: &BTreeMap<String, Tz>) -> Vec<String> {
    if map.is_empty() {
        return Vec::new();
    }
    let mut notes: Vec<String> = map
        .iter()
        .map(|(from, to)| {
            format!(
                "time zone {from:?} read as {} (the same offsets and changes)",
                to.name()
            )
        })
        .collect();
    rename_tzids(cal, |tzid| map.get(tzid).map(|tz| tz.name().to_string()));
    for component in cal.components.iter_mut() {
        if let CalendarComponent::Other(zone) = component
            && zone.component_kind() == "VTIMEZONE"
            && let Some(tz) = zone
                .property_value("TZID")
                .and_then(|t| map.get(t.trim_matches('"')))
        {
            zone.add_property("TZID", tz.name());
        }
    }
    notes.sort();
    notes.dedup();
    notes
}

/// Renames the TZID parameter of every event property `rename` gives a new name for.
fn rename_tzids(cal: &mut Calendar, rename: impl Fn(&str) -> Option<String>) {
    let renamed = |p: &icalendar::Property| -> Option<icalendar::Property> {
        let tzid = p
            .params()
            .get("TZID")?
            .value()
            .trim_matches('"')
            .to_string();
        let name = rename(&tzid)?;
        let mut renamed = icalendar::Property::new(p.key(), p.value());
        for (key, param) in p.params() {
            let value = if key == "TZID" { &name } else { param.value() };
            renamed.add_parameter(key, value);
        }
        Some(renamed)
    };
    for component in cal.components.iter_mut() {
        let CalendarComponent::Event(event) = component else {
            continue;
        };
        let single: Vec<icalendar::Property> =
            event.properties().values().filter_map(renamed).collect();
        for p in single {
            event.append_property(p);
        }
        let multi: Vec<(String, Vec<icalendar::Property>)> = event
            .multi_properties()
            .iter()
            .filter(|(_, ps)| ps.iter().any(|p| renamed(p).is_some()))
            .map(|(k, ps)| {
                let props = ps.iter().map(|p| renamed(p).unwrap_or_else(|| p.clone()));
                (k.clone(), props.collect())
            })
            .collect();
        for (key, props) in multi {
            event.remove_multi_property(&key);
            for p in props {
                event.append_multi_property(p);
            }
        }
    }
}

// ---------------------------------------------------------------- zones evaluated directly

/// How a [`DefinedZone`]'s name starts: a TZID no zone database or file uses.
pub const DEFINED_PREFIX: &str = "~VTZ:";

/// Up to when a defined zone's recurring changes are worked out.
const HORIZON_YEAR: i32 = 2200;

/// A zone calendar data defines (VTIMEZONE) with rules no IANA zone has — rules a country has
/// since changed, a zone made up by a client — read from its own observances, as RFC 5545
/// §3.6.5 says a VTIMEZONE is to be read. While an object is evaluated its events name the zone
/// by [`DefinedZone::key`], which carries the rules, so the index's series text (and a query
/// years later) needs nothing else; stored text keeps the file's own TZID.
#[derive(Debug, PartialEq, Eq)]
pub struct DefinedZone {
    /// The TZID the data uses.
    pub tzid: String,
    observances: Vec<Observance>,
    /// Every change of offset up to [`HORIZON_YEAR`]: (UTC instant, offset after).
    onsets: Vec<(i64, i64)>,
    /// The offset before the first change.
    initial: i64,
}

#[derive(Serialize, Deserialize)]
struct Definition {
    tzid: String,
    observances: Vec<Observance>,
}

impl DefinedZone {
    fn new(tzid: String, observances: Vec<Observance>) -> Option<DefinedZone> {
        let onsets = onsets_of(&observances, HORIZON_YEAR)?;
        let first = onsets[0].0;
        let initial = observances
            .iter()
            .find(|o| {
                local_time(&o.start).is_some_and(|l| l.and_utc().timestamp() - o.from == first)
            })
            .map_or(onsets[0].1, |o| o.from);
        Some(DefinedZone {
            tzid,
            observances,
            onsets,
            initial,
        })
    }

    /// The self-describing name: the prefix and the zone's definition as one line of JSON.
    pub fn key(&self) -> String {
        key_of(&self.tzid, &self.observances)
    }

    fn offset_at(&self, utc: i64) -> i64 {
        match self.onsets.partition_point(|(at, _)| *at <= utc) {
            0 => self.initial,
            i => self.onsets[i - 1].1,
        }
    }

    /// An instant's wall-clock value here (the naive time read as UTC).
    pub fn wall(&self, utc: i64) -> i64 {
        utc + self.offset_at(utc)
    }

    /// The instant a wall-clock value names, read as `zone::local_instant` reads one: the first
    /// of two (a change repeats it), or moved forward by the gap (a change skips it).
    pub fn instant_of_wall(&self, wall: i64) -> i64 {
        // Offsets are under a day: every candidate lies within a day and a half.
        let near = self.offset_at(wall - 129_600);
        let first = self.onsets.partition_point(|(at, _)| *at < wall - 129_600);
        let around = self.onsets[first..]
            .iter()
            .take_while(|(at, _)| *at <= wall + 129_600)
            .map(|(_, to)| *to);
        std::iter::once(near)
            .chain(around)
            .map(|offset| wall - offset)
            .filter(|t| self.wall(*t) == wall)
            .min()
            .unwrap_or_else(|| wall - self.offset_at(wall - 86_400))
    }
}

fn key_of(tzid: &str, observances: &[Observance]) -> String {
    let definition = Definition {
        tzid: tzid.to_string(),
        observances: observances.to_vec(),
    };
    let json = serde_json::to_string(&definition).expect("a definition serializes");
    format!("{DEFINED_PREFIX}{json}")
}

/// Defined zones already read, by key: a query places every instance of a series through one.
type Defined = HashMap<String, Option<Arc<DefinedZone>>>;
static DEFINED: LazyLock<Mutex<Defined>> = LazyLock::new(Default::default);

/// The defined zone a name made by [`DefinedZone::key`] describes.
pub fn defined(name: &str) -> Option<Arc<DefinedZone>> {
    let json = name.strip_prefix(DEFINED_PREFIX)?;
    remembered(&DEFINED, name.to_string(), 64, || {
        let definition: Definition = serde_json::from_str(json).ok()?;
        DefinedZone::new(definition.tzid, definition.observances).map(Arc::new)
    })
}

/// The zones calendar data defines itself that no IANA zone has (see [`adopt`], which runs
/// first), by TZID, with their [`DefinedZone::key`].
fn definitions(cal: &Calendar) -> BTreeMap<String, String> {
    unknown_zones(cal)
        .filter_map(|(tzid, zone)| {
            let key = key_of(&tzid, &observances(zone)?);
            // Read once per process (cached): a zone whose changes cannot be worked out is left
            // undefined, and its events are refused naming it.
            defined(&key)?;
            Some((tzid, key))
        })
        .collect()
}

/// For evaluation: events whose TZID names a zone of [`definitions`] name it by its key.
pub fn define(cal: &mut Calendar) {
    let map = definitions(cal);
    if !map.is_empty() {
        rename_tzids(cal, |tzid| map.get(tzid).cloned());
    }
}

/// What [`define`] will do, for an import's report.
pub fn defined_notes(cal: &Calendar) -> Vec<String> {
    definitions(cal)
        .keys()
        .map(|tzid| format!("time zone {tzid:?} read from its own definition (no IANA zone has its offsets and changes)"))
        .collect()
}

/// The file's own TZIDs back in place of [`define`]'s keys, for storing.
pub fn undefine(cal: &mut Calendar) {
    rename_tzids(cal, |tzid| defined(tzid).map(|zone| zone.tzid.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_read() {
        assert_eq!(offset("+0100"), Some(3600));
        assert_eq!(offset("-0330"), Some(-12_600));
        assert_eq!(offset("+053000"), Some(19_800));
        assert_eq!(offset("0100"), None);
        assert_eq!(offset("+9999"), None);
        assert_eq!(offset("+01000"), None);
    }
}

#[cfg(test)]
mod defined_tests {
    use crate::ics;

    /// Brazil's rules before 2019 (DST from the third Sunday of October to the third Sunday of
    /// February, changing at midnight), as an old export writes them: no IANA zone has them in
    /// 2027, so they are evaluated from the file.
    const OLD_BRASILIA: &str = "BEGIN:VTIMEZONE\r\nTZID:(UTC-03:00) Brasilia\r\n\
        BEGIN:STANDARD\r\nDTSTART:19700215T000000\r\nTZOFFSETFROM:-0200\r\nTZOFFSETTO:-0300\r\nRRULE:FREQ=YEARLY;BYMONTH=2;BYDAY=3SU\r\nEND:STANDARD\r\n\
        BEGIN:DAYLIGHT\r\nDTSTART:19701018T000000\r\nTZOFFSETFROM:-0300\r\nTZOFFSETTO:-0200\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=3SU\r\nEND:DAYLIGHT\r\n\
        END:VTIMEZONE\r\n";

    fn calendar(events: &str) -> icalendar::Calendar {
        ics::parse(&format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n{OLD_BRASILIA}{events}END:VCALENDAR\r\n"
        ))
        .unwrap()
    }

    fn at(text: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(text)
            .unwrap()
            .timestamp()
    }

    #[test]
    fn a_zone_no_iana_zone_matches_is_evaluated_from_its_own_rules() {
        let cal = calendar(
            "BEGIN:VEVENT\r\nUID:daily\r\nDTSTAMP:20260101T000000Z\r\n\
             DTSTART;TZID=\"(UTC-03:00) Brasilia\":20271015T000000\r\nDURATION:PT1H\r\n\
             RRULE:FREQ=DAILY;COUNT=4\r\nEXDATE;TZID=\"(UTC-03:00) Brasilia\":20271016T000000\r\n\
             SUMMARY:daily\r\nEND:VEVENT\r\n",
        );
        assert_eq!(
            super::defined_notes(&cal),
            [
                "time zone \"(UTC-03:00) Brasilia\" read from its own definition (no IANA zone has its offsets and changes)"
            ]
        );
        let (_, rows) = ics::index(&cal).unwrap();
        let series = rows[0].rrule.as_deref().unwrap();
        let from = at("2027-10-14T00:00:00Z");
        let starts = ics::expand(series, 3600, from, from + 10 * 86_400, 100).unwrap();
        assert_eq!(
            starts,
            [
                at("2027-10-15T00:00:00-03:00"),
                // 00:00 on the 17th is skipped (midnight becomes 01:00): read with the offset
                // before the gap, RFC 5545 §3.3.5.
                at("2027-10-17T01:00:00-02:00"),
                at("2027-10-18T00:00:00-02:00"),
            ],
            "{series}"
        );
        // A single event at the time the change repeats is its first occurrence.
        let single = calendar(
            "BEGIN:VEVENT\r\nUID:once\r\nDTSTAMP:20260101T000000Z\r\n\
             DTSTART;TZID=\"(UTC-03:00) Brasilia\":20280219T233000\r\n\
             DTEND;TZID=\"(UTC-03:00) Brasilia\":20280220T003000\r\nSUMMARY:once\r\nEND:VEVENT\r\n",
        );
        let (_, rows) = ics::index(&single).unwrap();
        assert_eq!(rows[0].start, at("2028-02-19T23:30:00-02:00"));
        assert_eq!(rows[0].end, at("2028-02-20T00:30:00-03:00"));
        // Written back, the file's own TZID and VTIMEZONE are kept.
        let text = ics::to_text(&ics::evaluable(&single));
        assert!(
            text.contains("DTSTART;TZID=\"(UTC-03:00) Brasilia\":20280219T233000"),
            "{text}"
        );
        assert!(!text.contains(super::DEFINED_PREFIX), "{text}");
    }

    #[test]
    fn a_zone_defining_more_changes_than_any_real_zone_is_refused_not_worked_through() {
        let hourly: String = (0..10)
            .map(|i| format!("BEGIN:STANDARD\r\nDTSTART:19700101T0{i}0000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=HOURLY\r\nEND:STANDARD\r\n"))
            .collect();
        let cal = ics::parse(&format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VTIMEZONE\r\nTZID:Busy\r\n{hourly}END:VTIMEZONE\r\n\
             BEGIN:VEVENT\r\nUID:x\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;TZID=Busy:20270101T100000\r\nSUMMARY:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
        ))
        .unwrap();
        let refused = ics::index(&cal).unwrap_err();
        assert!(refused.contains("unknown time zone \"Busy\""), "{refused}");
    }

    #[test]
    fn a_defined_zone_reads_gaps_and_folds_as_an_iana_zone_does() {
        // Berlin's rules under another name are matched to Europe/Berlin; evaluated directly,
        // they must give the same instant for every quarter hour of the two change days.
        let berlin = "BEGIN:VTIMEZONE\r\nTZID:Mine\r\n\
            BEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\n\
            BEGIN:DAYLIGHT\r\nDTSTART:19700329T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n";
        let cal = ics::parse(&format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n{berlin}END:VCALENDAR\r\n"
        ))
        .unwrap();
        let zone = cal
            .components
            .iter()
            .find_map(|c| match c {
                icalendar::CalendarComponent::Other(o) => Some(o),
                _ => None,
            })
            .unwrap();
        let defined =
            super::DefinedZone::new("Mine".into(), super::observances(zone).unwrap()).unwrap();
        let iana = crate::zone::Zone::Named(chrono_tz::Europe::Berlin);
        for day in ["2026-03-29", "2026-10-25", "2031-03-30", "2031-10-26"] {
            let midnight = at(&format!("{day}T00:00:00Z"));
            for quarter in 0..(24 * 4) {
                let wall = midnight + quarter * 900;
                assert_eq!(
                    defined.instant_of_wall(wall),
                    iana.instant_of_wall(wall),
                    "{day} +{quarter} quarters"
                );
                assert_eq!(defined.wall(wall), iana.wall(wall), "{day} +{quarter}");
            }
        }
    }
}
