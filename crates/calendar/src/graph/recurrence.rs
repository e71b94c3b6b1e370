//! Repeat rules between iCalendar's RRULE and Microsoft Graph's `patternedRecurrence`
//! (<https://learn.microsoft.com/graph/api/resources/patternedrecurrence>). Graph has six
//! patterns; a rule that none of them holds exactly (BYHOUR, several month days, an ordinal
//! beyond the fourth…) is refused by name rather than approximated: an approximation would
//! move someone's meetings.

use chrono::{Datelike, NaiveDate, Weekday};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Pattern {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub interval: u32,
    #[serde(default)]
    pub days_of_week: Vec<String>,
    #[serde(default)]
    pub day_of_month: u32,
    #[serde(default)]
    pub month: u32,
    #[serde(default)]
    pub index: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Range {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub start_date: Option<String>,
    #[serde(default)]
    pub end_date: Option<String>,
    #[serde(default)]
    pub number_of_occurrences: u32,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Recurrence {
    pub pattern: Pattern,
    pub range: Range,
}

/// Graph's week ordinals, first to fifth ("last" is -1).
const INDEXES: [(&str, i32); 5] = [
    ("first", 1),
    ("second", 2),
    ("third", 3),
    ("fourth", 4),
    ("last", -1),
];

const DAYS: [(&str, &str, Weekday); 7] = [
    ("MO", "monday", Weekday::Mon),
    ("TU", "tuesday", Weekday::Tue),
    ("WE", "wednesday", Weekday::Wed),
    ("TH", "thursday", Weekday::Thu),
    ("FR", "friday", Weekday::Fri),
    ("SA", "saturday", Weekday::Sat),
    ("SU", "sunday", Weekday::Sun),
];

fn day_name(code: &str) -> Option<&'static str> {
    DAYS.iter().find(|d| d.0 == code).map(|d| d.1)
}

fn day_code(name: &str) -> Option<&'static str> {
    DAYS.iter()
        .find(|d| d.1.eq_ignore_ascii_case(name))
        .map(|d| d.0)
}

fn weekday_name(day: Weekday) -> &'static str {
    DAYS.iter().find(|d| d.2 == day).map_or("monday", |d| d.1)
}

/// A BYDAY entry: its ordinal (0 when none) and its day code.
fn split_byday(entry: &str) -> Result<(i32, &str), String> {
    let at = entry.len().saturating_sub(2);
    let (ordinal, code) = entry.split_at(at);
    if day_name(code).is_none() {
        return Err(format!("BYDAY={entry} is not a day"));
    }
    let ordinal = match ordinal {
        "" | "+" => 0,
        n => n
            .trim_start_matches('+')
            .parse()
            .map_err(|_| format!("BYDAY={entry}"))?,
    };
    Ok((ordinal, code))
}

fn index_name(ordinal: i32) -> Result<&'static str, String> {
    INDEXES
        .iter()
        .find(|i| i.1 == ordinal)
        .map(|i| i.0)
        .ok_or_else(|| format!("the {ordinal}th weekday of a month"))
}

/// The parts of an RRULE that Graph's patterns can express.
struct Rule {
    freq: String,
    interval: u32,
    days: Vec<(i32, String)>,
    position: Option<i32>,
    month_day: Option<u32>,
    month: Option<u32>,
    count: Option<u32>,
    week_start: Option<String>,
}

/// Takes `key` out of a rule's parts, as a number.
fn take_number<T: std::str::FromStr>(
    parts: &mut BTreeMap<String, String>,
    key: &str,
) -> Result<Option<T>, String> {
    parts
        .remove(key)
        .map(|v| v.parse().map_err(|_| format!("{key}={v}")))
        .transpose()
}

impl Rule {
    /// Each part Graph can express is taken out as it is read: one left over is one Graph
    /// cannot hold.
    fn parse(rule: &str) -> Result<Rule, String> {
        let mut parts = BTreeMap::new();
        for part in rule.trim_start_matches("RRULE:").split(';') {
            let (key, value) = part.split_once('=').ok_or_else(|| format!("{part:?}"))?;
            parts.insert(key.to_ascii_uppercase(), value.to_string());
        }
        let days = match parts.remove("BYDAY") {
            Some(list) => list
                .split(',')
                .map(|e| split_byday(e).map(|(n, c)| (n, c.to_string())))
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        let rule = Rule {
            freq: parts.remove("FREQ").ok_or("a repeat rule without FREQ")?,
            interval: take_number(&mut parts, "INTERVAL")?.unwrap_or(1),
            days,
            position: take_number(&mut parts, "BYSETPOS")?,
            month_day: take_number(&mut parts, "BYMONTHDAY")?,
            month: take_number(&mut parts, "BYMONTH")?,
            count: take_number(&mut parts, "COUNT")?,
            week_start: parts.remove("WKST"),
        };
        // UNTIL is read by the caller, as a date in the event's zone.
        parts.remove("UNTIL");
        match parts.keys().next() {
            Some(other) => Err(format!("{other} in a repeat rule")),
            None => Ok(rule),
        }
    }

    fn day_names(&self) -> Vec<&'static str> {
        self.days.iter().filter_map(|(_, c)| day_name(c)).collect()
    }

    /// A single ordinal weekday (2TU), or plain weekdays picked by BYSETPOS (TU;BYSETPOS=2).
    fn relative(&self) -> Result<Option<(&'static str, Vec<&'static str>)>, String> {
        match (self.days.as_slice(), self.position) {
            ([(n, _)], None) if *n != 0 => Ok(Some((index_name(*n)?, self.day_names()))),
            (list, Some(p)) if !list.is_empty() && list.iter().all(|(n, _)| *n == 0) => {
                Ok(Some((index_name(p)?, self.day_names())))
            }
            ([], None) => Ok(None),
            (list, _) => Err(format!(
                "BYDAY={}",
                list.iter()
                    .map(|(n, c)| if *n == 0 {
                        c.clone()
                    } else {
                        format!("{n}{c}")
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            )),
        }
    }

    fn pattern(&self, start: NaiveDate) -> Result<Value, String> {
        let interval = self.interval;
        Ok(match self.freq.as_str() {
            "DAILY" if self.days.is_empty() && self.month_day.is_none() && self.month.is_none() => {
                json!({"type": "daily", "interval": interval})
            }
            "WEEKLY"
                if self.month_day.is_none() && self.month.is_none() && self.position.is_none() =>
            {
                if self.days.iter().any(|(n, _)| *n != 0) {
                    return Err("an ordinal weekday in a weekly rule".into());
                }
                let mut list = self.day_names();
                if list.is_empty() {
                    list.push(weekday_name(start.weekday()));
                }
                let first = self
                    .week_start
                    .as_deref()
                    .and_then(day_name)
                    .unwrap_or("monday");
                json!({"type": "weekly", "interval": interval, "daysOfWeek": list, "firstDayOfWeek": first})
            }
            "MONTHLY" if self.month.is_none() => match (self.month_day, self.relative()?) {
                (Some(d), None) if (1..=31).contains(&d) => {
                    json!({"type": "absoluteMonthly", "interval": interval, "dayOfMonth": d})
                }
                (None, None) => {
                    json!({"type": "absoluteMonthly", "interval": interval, "dayOfMonth": start.day()})
                }
                (None, Some((index, list))) => {
                    json!({"type": "relativeMonthly", "interval": interval, "daysOfWeek": list, "index": index})
                }
                _ => return Err("BYMONTHDAY with BYDAY".into()),
            },
            "YEARLY" => {
                let month = self.month.unwrap_or(start.month());
                match (self.month_day, self.relative()?) {
                    (day, None) => json!({"type": "absoluteYearly", "interval": interval,
                        "month": month, "dayOfMonth": day.unwrap_or(start.day())}),
                    (None, Some((index, list))) => json!({"type": "relativeYearly",
                        "interval": interval, "month": month, "daysOfWeek": list, "index": index}),
                    _ => return Err("BYMONTHDAY with BYDAY".into()),
                }
            }
            other => return Err(format!("FREQ={other} with these parts")),
        })
    }
}

/// The Graph recurrence for `rule` of a series starting on `start` (the event's wall date);
/// `until` is UNTIL already read as a wall date. `Err` names what Graph cannot hold.
pub fn to_graph(rule: &str, start: NaiveDate, until: Option<NaiveDate>) -> Result<Value, String> {
    let rule = Rule::parse(rule)?;
    let pattern = rule.pattern(start)?;
    let start_date = start.format("%Y-%m-%d").to_string();
    let range = match (rule.count, until) {
        (Some(count), _) => json!({"type": "numbered", "startDate": start_date,
            "numberOfOccurrences": count}),
        (None, Some(until)) => json!({"type": "endDate", "startDate": start_date,
            "endDate": until.format("%Y-%m-%d").to_string()}),
        (None, None) => json!({"type": "noEnd", "startDate": start_date}),
    };
    Ok(json!({"pattern": pattern, "range": range}))
}

/// The RRULE for a Graph recurrence (without the `RRULE:` prefix); `until` is the UNTIL value to
/// write for an end date (the caller knows the event's zone and form).
pub fn to_rrule(
    recurrence: &Recurrence,
    until: impl Fn(NaiveDate) -> String,
) -> Result<String, String> {
    let p = &recurrence.pattern;
    let codes: Vec<&str> = p.days_of_week.iter().filter_map(|d| day_code(d)).collect();
    let interval = p.interval.max(1);
    let ordinal = || {
        let index = p.index.as_deref().unwrap_or("first");
        INDEXES
            .iter()
            .find(|i| i.0.eq_ignore_ascii_case(index))
            .map(|i| i.1)
            .ok_or_else(|| format!("week index {index:?}"))
    };
    let mut rule = match p.kind.as_str() {
        "daily" => "FREQ=DAILY".to_string(),
        "weekly" => format!("FREQ=WEEKLY;BYDAY={}", codes.join(",")),
        "absoluteMonthly" => format!("FREQ=MONTHLY;BYMONTHDAY={}", p.day_of_month),
        "relativeMonthly" => format!(
            "FREQ=MONTHLY;BYDAY={};BYSETPOS={}",
            codes.join(","),
            ordinal()?
        ),
        "absoluteYearly" => format!(
            "FREQ=YEARLY;BYMONTH={};BYMONTHDAY={}",
            p.month, p.day_of_month
        ),
        "relativeYearly" => format!(
            "FREQ=YEARLY;BYMONTH={};BYDAY={};BYSETPOS={}",
            p.month,
            codes.join(","),
            ordinal()?
        ),
        other => return Err(format!("recurrence pattern {other:?}")),
    };
    if interval > 1 {
        rule.push_str(&format!(";INTERVAL={interval}"));
    }
    let r = &recurrence.range;
    match r.kind.as_str() {
        "numbered" => rule.push_str(&format!(";COUNT={}", r.number_of_occurrences)),
        "endDate" => {
            let end = r
                .end_date
                .as_deref()
                .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
                .ok_or("a recurrence range without its end date")?;
            rule.push_str(&format!(";UNTIL={}", until(end)));
        }
        _ => {}
    }
    Ok(rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    /// Every rule Graph can hold comes back as the same rule (in the normal form this module
    /// writes), so a pull after a push changes nothing.
    #[test]
    fn rules_graph_holds_go_there_and_back_unchanged() {
        let start = date("2026-12-01"); // a Tuesday
        for rule in [
            "FREQ=DAILY",
            "FREQ=DAILY;INTERVAL=3;COUNT=10",
            "FREQ=WEEKLY;BYDAY=MO,WE,FR",
            "FREQ=WEEKLY;BYDAY=TU;INTERVAL=2;UNTIL=20270301",
            "FREQ=MONTHLY;BYMONTHDAY=15",
            "FREQ=MONTHLY;BYDAY=TU;BYSETPOS=2",
            "FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1;COUNT=6",
            "FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=1",
            "FREQ=YEARLY;BYMONTH=11;BYDAY=TH;BYSETPOS=4",
        ] {
            let until = rule
                .split(';')
                .find_map(|p| p.strip_prefix("UNTIL="))
                .map(|u| NaiveDate::parse_from_str(u, "%Y%m%d").unwrap());
            let graph = to_graph(rule, start, until).unwrap_or_else(|e| panic!("{rule}: {e}"));
            let back: Recurrence = serde_json::from_value(graph).unwrap();
            let again = to_rrule(&back, |d| d.format("%Y%m%d").to_string()).unwrap();
            let sorted = |r: &str| {
                let mut parts: Vec<String> = r.split(';').map(String::from).collect();
                parts.sort();
                parts
            };
            assert_eq!(sorted(&again), sorted(rule), "{rule}");
        }
    }

    #[test]
    fn ordinal_weekdays_and_implied_days_are_read_as_graph_means_them() {
        let start = date("2026-12-01");
        let second_tuesday = to_graph("FREQ=MONTHLY;BYDAY=2TU", start, None).unwrap();
        assert_eq!(second_tuesday["pattern"]["type"], "relativeMonthly");
        assert_eq!(second_tuesday["pattern"]["index"], "second");
        let weekly = to_graph("FREQ=WEEKLY", start, None).unwrap();
        assert_eq!(weekly["pattern"]["daysOfWeek"], json!(["tuesday"]));
        assert_eq!(weekly["range"]["type"], "noEnd");
        assert_eq!(weekly["range"]["startDate"], "2026-12-01");
    }

    #[test]
    fn rules_graph_cannot_hold_are_refused_by_name() {
        let start = date("2026-12-01");
        for (rule, named) in [
            ("FREQ=DAILY;BYHOUR=9,17", "BYHOUR"),
            ("FREQ=HOURLY", "FREQ=HOURLY"),
            ("FREQ=MONTHLY;BYDAY=1MO,3MO", "BYDAY"),
            ("FREQ=MONTHLY;BYDAY=5FR", "5th"),
            ("FREQ=WEEKLY;BYDAY=2MO", "ordinal"),
            ("FREQ=MONTHLY;BYMONTHDAY=1,15", "BYMONTHDAY"),
        ] {
            let error = to_graph(rule, start, None).unwrap_err();
            assert!(error.contains(named), "{rule}: {error}");
        }
    }
}
