//! Our expansion checked against a reference by generation: random series (frequencies, BYxxx
//! parts, COUNT/UNTIL, EXDATE, RDATE dates and periods, moved and cancelled instances, a
//! THISANDFUTURE change) in zones with every kind of daylight-saving rule, starting anywhere in
//! 2020–2030 and often on a clock change's hour, are imported through the import tool's own
//! path, queried as the tools query them, and compared instance by instance with Python's
//! `recurring-ical-events` (tests/peers/expand_reference.py).
//!
//! `COWORK_CALENDAR_CASES` (default 400) and `COWORK_CALENDAR_SEED` (default fixed, so CI is
//! repeatable) widen or move the search; a failure prints the seed, the case's text and both
//! answers.

use crate::db::{self, CalendarInfo};
use crate::zone::Zone;
use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::BTreeMap;

/// Zones chosen for their rules, not their size: both hemispheres, half-hour and 45-minute
/// offsets and changes, a change at midnight, a negative DST, rules that ended or moved in the
/// decade, a two-hour DST, and zones without DST as controls.
const ZONES: &[&str] = &[
    "Europe/Berlin",
    "Europe/London",
    "Europe/Dublin",
    "Europe/Moscow",
    "America/New_York",
    "America/Los_Angeles",
    "America/St_Johns",
    "America/Havana",
    "America/Santiago",
    "America/Asuncion",
    "America/Mexico_City",
    "America/Sao_Paulo",
    "America/Nuuk",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Pacific/Auckland",
    "Pacific/Chatham",
    "Asia/Beirut",
    "Asia/Tehran",
    "Asia/Gaza",
    "Africa/Casablanca",
    "Antarctica/Troll",
    "Asia/Kathmandu",
    "Asia/Shanghai",
    "UTC",
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    Zoned,
    Utc,
    Floating,
    AllDay,
}

#[derive(Clone, Copy, Debug)]
enum Freq {
    Daily,
    Weekly,
    Monthly,
    Yearly,
}

/// Daylight-saving rules of a zone a file defines itself (a VTIMEZONE under a made-up TZID),
/// drawn so that mostly no IANA zone has them: the standard offset and the shift (minutes), and
/// the month, week (-1: the last) and hour of the change to and from daylight time.
#[derive(Clone, Debug)]
struct Defined {
    standard: i64,
    shift: i64,
    begins: (u32, i32, u32),
    ends: (u32, i32, u32),
}

impl Defined {
    fn tzid(&self) -> String {
        let (b, e) = (self.begins, self.ends);
        format!(
            "Custom {} {} {}.{}.{} {}.{}.{}",
            self.standard, self.shift, b.0, b.1, b.2, e.0, e.1, e.2
        )
    }

    fn vtimezone(&self) -> Vec<String> {
        let offset = |minutes: i64| {
            let sign = if minutes < 0 { '-' } else { '+' };
            format!("{sign}{:02}{:02}", minutes.abs() / 60, minutes.abs() % 60)
        };
        let (standard, daylight) = (offset(self.standard), offset(self.standard + self.shift));
        let observance =
            |kind: &str, (month, week, hour): (u32, i32, u32), from: &str, to: &str| {
                [
                    format!("BEGIN:{kind}"),
                    format!("DTSTART:19700101T{hour:02}0000"),
                    format!("TZOFFSETFROM:{from}"),
                    format!("TZOFFSETTO:{to}"),
                    format!("RRULE:FREQ=YEARLY;BYMONTH={month};BYDAY={week}SU"),
                    format!("END:{kind}"),
                ]
            };
        let mut lines = vec![
            "BEGIN:VTIMEZONE".to_string(),
            format!("TZID:{}", self.tzid()),
        ];
        lines.extend(observance("DAYLIGHT", self.begins, &standard, &daylight));
        lines.extend(observance("STANDARD", self.ends, &daylight, &standard));
        lines.push("END:VTIMEZONE".into());
        lines
    }
}

fn a_defined_zone() -> impl Strategy<Value = Defined> {
    let standard = proptest::sample::select(&[-300i64, -210, -180, 0, 60, 120, 330, 345, 630][..]);
    let shift = proptest::sample::select(&[60i64, 30, 120][..]);
    let week = prop_oneof![1..=4i32, Just(-1)];
    let change = (1..=12u32, week, 0..=3u32);
    (
        standard,
        shift,
        change,
        2..=10u32,
        prop_oneof![1..=4i32, Just(-1)],
        0..=3u32,
    )
        .prop_map(|(standard, shift, begins, apart, week, hour)| Defined {
            standard,
            shift,
            begins,
            ends: ((begins.0 + apart - 1) % 12 + 1, week, hour),
        })
}

#[derive(Clone, Debug)]
struct Series {
    zone: &'static str,
    /// A zoned series' own zone, when the file defines it (else `zone`, by its IANA name).
    defined: Option<Defined>,
    form: Form,
    start: NaiveDateTime,
    /// Minutes (days for an all-day event), written as DTEND or as DURATION.
    length: i64,
    use_duration: bool,
    freq: Freq,
    interval: u32,
    by: String,
    /// `None`, COUNT, or UNTIL this many days after the start.
    end: Option<(bool, i64)>,
    /// Steps of the series' period from its start (often instances, not always: BYxxx moves them).
    exdates: Vec<u32>,
    /// Extra starts: days after the start, minutes shifted, and a period length when it is one.
    rdates: Vec<(i64, i64, Option<i64>)>,
    /// Moved instances: step, hours moved, cancelled.
    overrides: Vec<(u32, i64, bool)>,
    /// A RANGE=THISANDFUTURE override after every other change: step, hours moved, new length
    /// in minutes (days for an all-day event).
    future: Option<(u32, i64, i64)>,
    /// The range asked for: days before the start, then its length in days.
    window: (i64, i64),
}

const WEEKDAYS: [&str; 7] = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];

fn by_parts(freq: Freq, form: Form) -> BoxedStrategy<String> {
    let weekday = proptest::sample::select(&WEEKDAYS[..]);
    let days = proptest::sample::subsequence(&WEEKDAYS[..], 1..=3).prop_map(|d| d.join(","));
    let nth = (prop_oneof![1..=4i32, Just(-1)], weekday).prop_map(|(n, d)| format!("{n}{d}"));
    match freq {
        // RFC 5545 §3.3.10 forbids BYHOUR with a DATE start (what a file that has it means is
        // undefined; `rule_for_expansion` reads it as the dates).
        Freq::Daily if form == Form::AllDay => prop_oneof![
            Just(String::new()),
            Just(";BYDAY=MO,TU,WE,TH,FR".to_string()),
            Just(";BYMONTH=3,4,10,11".to_string()),
        ]
        .boxed(),
        Freq::Daily => prop_oneof![
            3 => Just(String::new()),
            1 => Just(";BYDAY=MO,TU,WE,TH,FR".to_string()),
            1 => Just(";BYMONTH=3,4,10,11".to_string()),
            1 => proptest::sample::subsequence(&[0u32, 1, 2, 3, 9, 18][..], 1..=2)
                .prop_map(|h| format!(";BYHOUR={}", h.iter().map(u32::to_string).collect::<Vec<_>>().join(","))),
        ]
        .boxed(),
        Freq::Weekly => prop_oneof![Just(String::new()), days.prop_map(|d| format!(";BYDAY={d}"))].boxed(),
        Freq::Monthly => prop_oneof![
            Just(String::new()),
            prop_oneof![1..=28i32, Just(-1)].prop_map(|d| format!(";BYMONTHDAY={d}")),
            nth.clone().prop_map(|d| format!(";BYDAY={d}")),
            prop_oneof![Just(1), Just(-1)].prop_map(|p| format!(";BYDAY=MO,TU,WE,TH,FR;BYSETPOS={p}")),
        ]
        .boxed(),
        Freq::Yearly => prop_oneof![
            Just(String::new()),
            (1..=12u32).prop_map(|m| format!(";BYMONTH={m}")),
            // The clock-change Sundays of most zones, and their neighbours.
            (prop_oneof![Just(3u32), Just(4), Just(9), Just(10), Just(11)], nth)
                .prop_map(|(m, d)| format!(";BYMONTH={m};BYDAY={d}")),
        ]
        .boxed(),
    }
}

fn a_start() -> impl Strategy<Value = NaiveDateTime> {
    let day = (2020..=2030i32, 1..=12u32, 1..=28u32)
        .prop_map(|(y, m, d)| NaiveDate::from_ymd_opt(y, m, d).unwrap());
    // Clock changes happen in the small hours (and at midnight in some zones): start there often.
    let hour = prop_oneof![2 => 0..=3u32, 1 => 0..24u32];
    let minute = proptest::sample::select(&[0u32, 15, 30, 45][..]);
    (day, hour, minute).prop_map(|(d, h, m)| d.and_time(NaiveTime::from_hms_opt(h, m, 0).unwrap()))
}

fn a_series() -> impl Strategy<Value = Series> {
    let freq = prop_oneof![
        Just(Freq::Daily),
        Just(Freq::Weekly),
        Just(Freq::Monthly),
        Just(Freq::Yearly)
    ];
    let form = prop_oneof![6 => Just(Form::Zoned), 1 => Just(Form::Utc), 1 => Just(Form::Floating), 1 => Just(Form::AllDay)];
    (freq, form).prop_flat_map(|(freq, form)| {
        let shape = (
            proptest::sample::select(ZONES),
            a_start(),
            proptest::sample::select(&[15i64, 30, 60, 90, 150, 24 * 60][..]),
            any::<bool>(),
            1..=3u32,
            by_parts(freq, form),
            prop_oneof![Just(None), (any::<bool>(), 1..=3650i64).prop_map(Some)],
            prop_oneof![3 => Just(None), 1 => a_defined_zone().prop_map(Some)],
        );
        let changes = (
            proptest::collection::vec(0..30u32, 0..3),
            proptest::collection::vec(
                (
                    0..400i64,
                    -90..90i64,
                    prop_oneof![Just(None), (30..180i64).prop_map(Some)],
                ),
                0..3,
            ),
            proptest::collection::vec((0..30u32, -3..5i64, any::<bool>()), 0..3),
            (0..60i64, 30..800i64),
            prop_oneof![2 => Just(None), 1 => (30..40u32, -3..5i64, 15..120i64).prop_map(Some)],
        );
        (shape, changes).prop_map(move |(s, c)| Series {
            zone: s.0,
            defined: s.7.filter(|_| form == Form::Zoned),
            form,
            start: s.1,
            length: if form == Form::AllDay {
                s.2 % 3 + 1
            } else {
                s.2
            },
            use_duration: s.3,
            freq,
            interval: s.4,
            by: s.5,
            end: s
                .6
                .map(|(count, n)| (count, if count { n % 40 + 1 } else { n })),
            exdates: c.0,
            rdates: c.1,
            overrides: c.2,
            window: c.3,
            future: c.4,
        })
    })
}

impl Series {
    /// The start `steps` periods after the series' start (an instance unless BYxxx moved it).
    fn step(&self, steps: u32) -> NaiveDateTime {
        let n = steps * self.interval;
        // BYHOUR moves every instance to its hours: take the first, so that EXDATEs and
        // RECURRENCE-IDs name instances (an id naming no instance is matched by date by the
        // reference, against RFC 5545 §3.8.4.4).
        let hour = self
            .by
            .split_once("BYHOUR=")
            .and_then(|(_, hours)| hours.split([',', ';']).next()?.parse().ok());
        let start = match hour {
            Some(h) => self
                .start
                .date()
                .and_hms_opt(h, self.start.minute(), 0)
                .unwrap(),
            None => self.start,
        };
        match self.freq {
            Freq::Daily => start + Duration::days(n.into()),
            Freq::Weekly => start + Duration::weeks(n.into()),
            Freq::Monthly => self
                .start
                .checked_add_months(chrono::Months::new(n))
                .unwrap(),
            Freq::Yearly => self
                .start
                .checked_add_months(chrono::Months::new(12 * n))
                .unwrap(),
        }
    }

    /// A date-time property's name-and-value in the series' form.
    fn when(&self, name: &str, at: NaiveDateTime) -> String {
        match self.form {
            Form::Zoned => {
                let zone = self
                    .defined
                    .as_ref()
                    .map_or(self.zone.to_string(), Defined::tzid);
                format!("{name};TZID={zone}:{}", at.format("%Y%m%dT%H%M%S"))
            }
            Form::Utc => format!("{name}:{}", at.format("%Y%m%dT%H%M%SZ")),
            Form::Floating => format!("{name}:{}", at.format("%Y%m%dT%H%M%S")),
            Form::AllDay => format!("{name};VALUE=DATE:{}", at.format("%Y%m%d")),
        }
    }

    fn rule(&self) -> String {
        let freq = format!("{:?}", self.freq).to_uppercase();
        let mut rule = format!("RRULE:FREQ={freq};INTERVAL={}{}", self.interval, self.by);
        match self.end {
            Some((true, count)) => rule.push_str(&format!(";COUNT={count}")),
            Some((false, days)) => {
                let until = self.start + Duration::days(days);
                rule.push_str(&match self.form {
                    Form::AllDay => format!(";UNTIL={}", until.format("%Y%m%d")),
                    Form::Floating => format!(";UNTIL={}", until.format("%Y%m%dT%H%M%S")),
                    // UNTIL in UTC for a zoned start (RFC 5545): the local reading at UTC.
                    Form::Zoned | Form::Utc => format!(";UNTIL={}", until.format("%Y%m%dT%H%M%SZ")),
                });
            }
            None => {}
        }
        rule
    }

    fn end_line(&self, start: NaiveDateTime) -> String {
        match (self.form, self.use_duration) {
            (Form::AllDay, true) => format!("DURATION:P{}D", self.length),
            (Form::AllDay, false) => self.when("DTEND", start + Duration::days(self.length)),
            (_, true) => format!("DURATION:PT{}M", self.length),
            (_, false) => self.when("DTEND", start + Duration::minutes(self.length)),
        }
    }

    fn ics(&self, uid: &str) -> String {
        let mut lines = vec![
            "BEGIN:VCALENDAR".to_string(),
            "VERSION:2.0".into(),
            "PRODID:-//cowork//reference//EN".into(),
        ];
        lines.extend(self.defined.iter().flat_map(Defined::vtimezone));
        lines.extend([
            "BEGIN:VEVENT".into(),
            format!("UID:{uid}"),
            "DTSTAMP:20260101T000000Z".into(),
            self.when("DTSTART", self.start),
            self.end_line(self.start),
            self.rule(),
            "SUMMARY:series".into(),
        ]);
        for step in &self.exdates {
            lines.push(self.when("EXDATE", self.step(*step)));
        }
        for (days, minutes, period) in &self.rdates {
            let at = self.start + Duration::days(*days) + Duration::minutes(*minutes);
            lines.push(match (self.form, period) {
                (Form::AllDay, _) => self.when("RDATE", at),
                // Whether a THISANDFUTURE change's length applies to a later period is not
                // defined by RFC 5545 (ours keeps the period's own): periods only where none is.
                (_, Some(length)) if self.future.is_none() => {
                    let value = self.when("RDATE", at);
                    let (name, start) = value.split_once(':').unwrap();
                    format!("{name};VALUE=PERIOD:{start}/PT{length}M")
                }
                (_, _) => self.when("RDATE", at),
            });
        }
        lines.push("END:VEVENT".into());
        for (step, hours, cancelled) in &self.overrides {
            let moved = self.step(*step) + Duration::hours(*hours);
            let status = cancelled.then(|| "STATUS:CANCELLED".to_string());
            let own = [self.end_line(moved), "SUMMARY:moved".into()];
            lines.extend(self.override_lines(uid, "RECURRENCE-ID", *step, *hours, own, status));
        }
        if let Some((step, hours, length)) = self.future {
            let length = match self.form {
                Form::AllDay => format!("DURATION:P{}D", length % 3 + 1),
                _ => format!("DURATION:PT{length}M"),
            };
            let own = [length, "SUMMARY:from here on".into()];
            let id = "RECURRENCE-ID;RANGE=THISANDFUTURE";
            lines.extend(self.override_lines(uid, id, step, hours, own, None));
        }
        lines.push("END:VCALENDAR".into());
        lines.join("\r\n") + "\r\n"
    }

    /// An override of the instance `step` periods in, moved by `hours`, with its own end and
    /// title (`own`) and perhaps a status.
    fn override_lines(
        &self,
        uid: &str,
        id: &str,
        step: u32,
        hours: i64,
        own: [String; 2],
        status: Option<String>,
    ) -> Vec<String> {
        let original = self.step(step);
        let moved = original + Duration::hours(hours);
        let mut lines = vec![
            "BEGIN:VEVENT".to_string(),
            format!("UID:{uid}"),
            "DTSTAMP:20260101T000000Z".into(),
            self.when(id, original),
            self.when("DTSTART", moved),
        ];
        lines.extend(own);
        lines.extend(status);
        lines.push("END:VEVENT".into());
        lines
    }

    /// The range asked for, as instants (its ends read in the series' zone).
    fn range(&self) -> (i64, i64) {
        let tz: chrono_tz::Tz = self.zone.parse().unwrap();
        let from = self.start.date() - Duration::days(self.window.0);
        let from = crate::zone::local_instant(&tz, &from.and_time(NaiveTime::MIN)).unwrap();
        (
            from.timestamp(),
            (from + Duration::days(self.window.1)).timestamp(),
        )
    }
}

/// Generated cases: (id, zone, text, range).
fn cases(count: usize, seed: u64) -> Vec<(String, Series)> {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = a_series();
    (0..count)
        .map(|i| {
            let series = strategy.new_tree(&mut runner).unwrap().current();
            (format!("c{i}"), series)
        })
        .collect()
}

type Spans = Vec<(i64, i64)>;

/// Ours: every case imported into its own calendar through the import tool's path, then each
/// calendar queried over its range in its zone, as `calendar_check` queries.
fn ours(cases: &[(String, Series)]) -> BTreeMap<String, Result<Spans, String>> {
    let dir = tempfile::tempdir().unwrap();
    let store = cowork_store::Store::open(cowork_store::DataDir::at(dir.path()), &[&crate::SCHEMA])
        .unwrap();
    let mut conn = store.connect().unwrap();
    let tx = conn.transaction().unwrap();
    let mut out = BTreeMap::new();
    for (id, series) in cases {
        tx.execute("INSERT INTO calendars (id, name) VALUES (?1, ?1)", [id])
            .unwrap();
        let calendar = CalendarInfo {
            id: id.clone(),
            name: id.clone(),
            account: None,
            last_sync: None,
            last_error: None,
        };
        let parsed = crate::ics::parse_all(&series.ics(id)).unwrap();
        let stored = crate::tools::store_calendars(&tx, &calendar, parsed).unwrap();
        if let Some(why) = stored.skipped.first() {
            out.insert(id.clone(), Err(why.clone()));
        }
    }
    tx.commit().unwrap();
    for (id, series) in cases {
        if out.contains_key(id) {
            continue;
        }
        let (from, to) = series.range();
        let zone = Zone::Named(series.zone.parse().unwrap());
        let found = db::occurrences(
            &conn,
            Some(std::slice::from_ref(id)),
            from,
            to,
            1_000_000,
            zone,
        );
        let answer = found.and_then(|f| match f.problems.first() {
            Some(problem) => Err(problem.clone()),
            None => {
                let mut spans: Spans = f
                    .occurrences
                    .iter()
                    .map(|o| (o.start_utc, o.end_utc))
                    .collect();
                spans.sort();
                Ok(spans)
            }
        });
        out.insert(id.clone(), answer);
    }
    out
}

/// Where the reference's own answer departs from RFC 5545 and expand_reference.py corrects it
/// (each reason is there, with its section).
#[derive(Default)]
struct Corrected {
    /// Instance ends it computed as wall-clock time.
    wall_clock_ends: usize,
    /// Instances it listed twice.
    repeated: usize,
    /// Times a defined zone skips that it read with the offset after the gap.
    gaps: usize,
}

/// The reference's answers, from one run of the Python side over every case, and where it
/// was corrected.
fn reference(cases: &[(String, Series)]) -> (BTreeMap<String, Result<Spans, String>>, Corrected) {
    let peers = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers");
    let python = peers.join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing — run tests/setup.sh (it installs recurring-ical-events)",
        python.display()
    );
    let input: Vec<serde_json::Value> = cases
        .iter()
        .map(|(id, s)| {
            let (from, to) = s.range();
            serde_json::json!({"id": id, "zone": s.zone, "ics": s.ics(id), "from": from, "to": to})
        })
        .collect();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), serde_json::to_vec(&input).unwrap()).unwrap();
    let run = std::process::Command::new(&python)
        .arg(peers.join("expand_reference.py"))
        .arg(file.path())
        .env("PYTHONTZPATH", "")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let answers: BTreeMap<String, serde_json::Value> = serde_json::from_slice(&run.stdout).unwrap();
    let mut corrected = Corrected::default();
    let answers = answers
        .into_iter()
        .map(|(id, v)| {
            let answer = match v.get("error") {
                Some(e) => Err(e.to_string()),
                None => {
                    let triples: Vec<(i64, i64, i64)> =
                        serde_json::from_value(v["spans"].clone()).unwrap();
                    corrected.wall_clock_ends += triples.iter().filter(|t| t.1 != t.2).count();
                    corrected.repeated += v["repeated"].as_u64().unwrap() as usize;
                    corrected.gaps += v["gaps"].as_u64().unwrap() as usize;
                    Ok(triples.into_iter().map(|(s, e, _)| (s, e)).collect())
                }
            };
            (id, answer)
        })
        .collect();
    (answers, corrected)
}

fn readable(spans: &Result<Spans, String>, zone: &str) -> String {
    let tz: chrono_tz::Tz = zone.parse().unwrap();
    match spans {
        Err(e) => format!("error: {e}"),
        Ok(list) => list
            .iter()
            .map(|(s, e)| {
                let at = |t: i64| {
                    crate::ics::utc_of(t)
                        .with_timezone(&tz)
                        .format("%Y-%m-%dT%H:%M%:z")
                        .to_string()
                };
                format!("{}→{}", at(*s), at(*e))
            })
            .collect::<Vec<_>>()
            .join("\n    "),
    }
}

#[test]
fn generated_series_expand_as_the_reference_does() {
    let count = std::env::var("COWORK_CALENDAR_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let seed = std::env::var("COWORK_CALENDAR_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20261129);
    let cases = cases(count, seed);
    let clock = std::time::Instant::now();
    let (theirs, corrected) = reference(&cases);
    let reference_took = clock.elapsed();
    let ours = ours(&cases);
    let ours_took = clock.elapsed() - reference_took;
    let mut differences = Vec::new();
    let mut instances = 0;
    for (id, series) in &cases {
        let (a, b) = (&ours[id], &theirs[id]);
        instances += b.as_ref().map_or(0, Vec::len);
        if a != b {
            differences.push(format!(
                "{id} ({:?}, {}):\n{}\n  ours:\n    {}\n  reference:\n    {}",
                series.form,
                series.zone,
                series.ics(id),
                readable(a, series.zone),
                readable(b, series.zone)
            ));
        }
    }
    let zones: std::collections::BTreeSet<_> = cases.iter().map(|(_, s)| s.zone).collect();
    let years: std::collections::BTreeSet<_> = cases.iter().map(|(_, s)| s.start.year()).collect();
    let split = cases.iter().filter(|(_, s)| s.future.is_some()).count();
    let defined = cases.iter().filter(|(_, s)| s.defined.is_some()).count();
    println!(
        "recurring-ical-events reference: {} of {count} generated series agree ({instances} instances, {} zones and {defined} series in a zone their file defines, {} start years, {split} split by THISANDFUTURE, seed {seed}); \
         the reference's answer corrected to RFC 5545 where it departs: {} instance ends it computed as wall-clock time, {} instances it listed twice, {} times a zone its file defines skips read with the offset after the gap; \
         the reference took {reference_took:.1?}, ours {ours_took:.1?}",
        count - differences.len(),
        zones.len(),
        years.len(),
        corrected.wall_clock_ends,
        corrected.repeated,
        corrected.gaps
    );
    assert!(
        differences.is_empty(),
        "{} differ (seed {seed}):\n\n{}",
        differences.len(),
        differences.join("\n\n")
    );
}
