//! The time zone answers are given in: an IANA zone the caller names, else the person's own.

use chrono::{DateTime, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeZone};

/// The instant a local time names in `tz`, as RFC 5545 §3.3.5 reads it: a time a clock change
/// repeats is its first occurrence; a time it skips is read with the offset before the gap,
/// which moves it forward by the gap (02:30 on a spring-forward night is 03:30). `None` only
/// for times chrono cannot place at all (out of its range).
pub fn local_instant<T: TimeZone>(tz: &T, naive: &NaiveDateTime) -> Option<DateTime<T>> {
    match tz.from_local_datetime(naive) {
        LocalResult::Single(at) | LocalResult::Ambiguous(at, _) => Some(at),
        LocalResult::None => {
            // Gaps last hours at most: the offset a day earlier is the one before this gap.
            let day_before = tz
                .from_local_datetime(&(*naive - chrono::Duration::days(1)))
                .earliest()?;
            let offset = day_before.offset().fix().local_minus_utc();
            let utc = *naive - chrono::Duration::seconds(offset.into());
            Some(tz.from_utc_datetime(&utc))
        }
    }
}

/// The zone an event's times are written in: an IANA zone, or one the calendar data defines
/// itself (a VTIMEZONE whose rules match no IANA zone), evaluated from its own rules.
// Eq lets `Arc` compare two handles on one cached zone by pointer first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventZone {
    Iana(chrono_tz::Tz),
    Defined(std::sync::Arc<crate::vtimezone::DefinedZone>),
}

impl EventZone {
    /// How the zone is named inside Cowork: the IANA name, or the defined zone's self-describing
    /// name ([`crate::vtimezone::DefinedZone::key`]).
    pub fn name(&self) -> String {
        match self {
            EventZone::Iana(tz) => tz.name().to_string(),
            EventZone::Defined(zone) => zone.key(),
        }
    }

    /// The instant a local time names here ([`local_instant`]'s reading of gaps and folds).
    pub fn instant_of(&self, naive: &NaiveDateTime) -> Option<i64> {
        match self {
            EventZone::Iana(tz) => local_instant(tz, naive).map(|d| d.timestamp()),
            EventZone::Defined(zone) => Some(zone.instant_of_wall(naive.and_utc().timestamp())),
        }
    }

    /// [`EventZone::instant_of`] for a wall-clock value (the naive time read as UTC).
    pub fn instant_of_wall(&self, wall: i64) -> i64 {
        match self {
            EventZone::Iana(tz) => Zone::Named(*tz).instant_of_wall(wall),
            EventZone::Defined(zone) => zone.instant_of_wall(wall),
        }
    }

    /// An instant's wall-clock value here (the naive time read as UTC).
    pub fn wall(&self, instant: i64) -> i64 {
        match self {
            EventZone::Iana(tz) => Zone::Named(*tz).wall(instant),
            EventZone::Defined(zone) => zone.wall(instant),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Zone {
    Local,
    Named(chrono_tz::Tz),
}

impl Zone {
    pub fn parse(name: Option<&str>) -> Result<Zone, String> {
        match name.map(str::trim).filter(|n| !n.is_empty()) {
            None => Ok(Zone::Local),
            Some(n) => crate::ics::resolve_tz(n).map(Zone::Named).ok_or_else(|| format!("`timezone` {n:?} is unknown: use an IANA name like Asia/Shanghai or Europe/Berlin")),
        }
    }

    /// The IANA zone to write into new events: the named one, else the system's (when known).
    pub fn iana(self) -> Option<chrono_tz::Tz> {
        match self {
            Zone::Named(tz) => Some(tz),
            Zone::Local => iana_time_zone::get_timezone()
                .ok()
                .and_then(|n| n.parse().ok()),
        }
    }

    pub fn name(self) -> String {
        match self {
            Zone::Named(tz) => tz.name().to_string(),
            Zone::Local => iana_time_zone::get_timezone().unwrap_or_else(|_| "local".into()),
        }
    }

    /// The instant a local time names here ([`local_instant`]).
    pub fn to_utc(self, naive: &NaiveDateTime) -> Option<i64> {
        match self {
            Zone::Named(tz) => local_instant(&tz, naive).map(|d| d.timestamp()),
            Zone::Local => local_instant(&chrono::Local, naive).map(|d| d.timestamp()),
        }
    }

    /// The wall-clock reading of an instant here, as seconds (the naive time read as UTC): how
    /// floating events are compared with a range asked in this zone.
    pub fn wall(self, ts: i64) -> i64 {
        self.naive(ts).and_utc().timestamp()
    }

    /// The instant a wall-clock time (see [`Zone::wall`]) has here ([`local_instant`]).
    pub fn instant_of_wall(self, wall: i64) -> i64 {
        let naive = crate::ics::utc_of(wall).naive_utc();
        self.to_utc(&naive).unwrap_or(wall)
    }

    pub fn date_of(self, ts: i64) -> NaiveDate {
        self.naive(ts).date()
    }

    pub fn naive(self, ts: i64) -> NaiveDateTime {
        let utc = crate::ics::utc_of(ts);
        match self {
            Zone::Named(tz) => utc.with_timezone(&tz).naive_local(),
            Zone::Local => utc.with_timezone(&chrono::Local).naive_local(),
        }
    }

    pub fn format(self, ts: i64) -> String {
        let utc = crate::ics::utc_of(ts);
        match self {
            Zone::Named(tz) => utc.with_timezone(&tz).to_rfc3339(),
            Zone::Local => utc.with_timezone(&chrono::Local).to_rfc3339(),
        }
    }

    /// A query bound: `today`, `tomorrow`, a date (its midnight here), a local date-time or RFC 3339.
    pub fn parse_bound(self, field: &str, text: &str) -> Result<i64, String> {
        let text = text.trim();
        let today = self.date_of(chrono::Utc::now().timestamp());
        let date = match text.to_ascii_lowercase().as_str() {
            "today" => Some(today),
            "tomorrow" => today.succ_opt(),
            "yesterday" => today.pred_opt(),
            _ => NaiveDate::parse_from_str(text, "%Y-%m-%d").ok(),
        };
        if let Some(date) = date {
            return self
                .to_utc(&date.and_hms_opt(0, 0, 0).expect("midnight"))
                .ok_or_else(|| format!("`{field}`: midnight of {date} does not exist here"));
        }
        if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(text) {
            return Ok(dt.timestamp());
        }
        for format in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"] {
            if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
                return self.to_utc(&naive).ok_or_else(|| {
                    format!("`{field}`: {naive} does not exist in {}", self.name())
                });
            }
        }
        Err(format!(
            "`{field}` {text:?} is not a time: use today, tomorrow, 2026-11-23, 2026-11-23T14:00 or 2026-11-23T14:00:00+08:00"
        ))
    }
}
