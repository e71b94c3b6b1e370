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
use std::collections::BTreeMap;

/// `+0100`, `-0330`, `+053000` → seconds east of UTC.
fn offset(text: &str) -> Option<i64> {
    let (sign, digits) = match text.trim().split_at_checked(1)? {
        ("+", d) => (1, d),
        ("-", d) => (-1, d),
        _ => return None,
    };
    if !(4..=6).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| digits.get(r).map_or(Some(0), |d| d.parse::<i64>().ok());
    Some(sign * (n(0..2)? * 3600 + n(2..4)? * 60 + n(4..6)?))
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

/// Every change of offset a VTIMEZONE defines up to `until_year`: (UTC instant, offset after).
/// None when it cannot be read.
fn onsets(zone: &impl Component, until_year: i32) -> Option<Vec<(i64, i64)>> {
    let mut out = Vec::new();
    for observance in zone.components() {
        let from = offset(observance.property_value("TZOFFSETFROM")?)?;
        let to = offset(observance.property_value("TZOFFSETTO")?)?;
        let start = local_time(observance.property_value("DTSTART")?)?;
        let mut locals = vec![start];
        if let Some(rule) = observance.property_value("RRULE") {
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
        for rdate in observance
            .multi_properties()
            .get("RDATE")
            .into_iter()
            .flatten()
        {
            for value in rdate.value().split(',') {
                if let Some(d) = local_time(value) {
                    locals.push(d);
                }
            }
        }
        out.extend(
            locals
                .into_iter()
                .map(|l| (l.and_utc().timestamp() - from, to)),
        );
    }
    out.sort();
    out.dedup();
    (!out.is_empty()).then_some(out)
}

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

/// The IANA zone with exactly this VTIMEZONE's offsets at noon UTC of every day of `years`:
/// first a zone the TZID names inside it (`custom_America/New_York`), then the preferred ones,
/// then every zone (a fixed offset finds its `Etc/GMT±n`).
fn matching_zone(tzid: &str, zone: &impl Component, years: (i32, i32)) -> Option<Tz> {
    let onsets = onsets(zone, years.1)?;
    let first = chrono::NaiveDate::from_ymd_opt(years.0, 1, 1)?;
    let days = (chrono::NaiveDate::from_ymd_opt(years.1, 12, 31)? - first).num_days();
    let samples: Vec<i64> = (0..=days)
        .map(|d| {
            (first + chrono::Duration::days(d))
                .and_hms_opt(12, 0, 0)
                .unwrap()
                .and_utc()
                .timestamp()
        })
        .collect();
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
    cal.components
        .iter()
        .filter_map(|c| match c {
            CalendarComponent::Other(o) if o.component_kind() == "VTIMEZONE" => Some(o),
            _ => None,
        })
        .filter_map(|zone| {
            let tzid = zone.property_value("TZID")?.trim_matches('"').to_string();
            if crate::ics::resolve_tz(&tzid).is_some() {
                return None;
            }
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
    let rename = |p: &icalendar::Property| -> Option<icalendar::Property> {
        let tzid = p
            .params()
            .get("TZID")?
            .value()
            .trim_matches('"')
            .to_string();
        let tz = map.get(&tzid)?;
        let mut renamed = icalendar::Property::new(p.key(), p.value());
        for (name, param) in p.params() {
            let value = if name == "TZID" {
                tz.name()
            } else {
                param.value()
            };
            renamed.add_parameter(name, value);
        }
        Some(renamed)
    };
    for component in cal.components.iter_mut() {
        match component {
            CalendarComponent::Event(event) => {
                let single: Vec<icalendar::Property> =
                    event.properties().values().filter_map(rename).collect();
                for p in single {
                    event.append_property(p);
                }
                let multi: Vec<(String, Vec<icalendar::Property>)> = event
                    .multi_properties()
                    .iter()
                    .filter(|(_, ps)| ps.iter().any(|p| rename(p).is_some()))
                    .map(|(k, ps)| {
                        (
                            k.clone(),
                            ps.iter()
                                .map(|p| rename(p).unwrap_or_else(|| p.clone()))
                                .collect(),
                        )
                    })
                    .collect();
                for (key, props) in multi {
                    event.remove_multi_property(&key);
                    for p in props {
                        event.append_multi_property(p);
                    }
                }
            }
            CalendarComponent::Other(zone) if zone.component_kind() == "VTIMEZONE" => {
                if let Some(tz) = zone
                    .property_value("TZID")
                    .and_then(|t| map.get(t.trim_matches('"')))
                {
                    zone.add_property("TZID", tz.name());
                }
            }
            _ => {}
        }
    }
    notes.sort();
    notes.dedup();
    notes
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
    }
}
