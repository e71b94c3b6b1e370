//! Reading the calendar: `calendar_check` and `calendar_find_free_time`.

use super::*;

// ---------------------------------------------------------------- calendar_check

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckInput {
    /// Start of the range: `today`, `tomorrow`, `2026-11-23`, `2026-11-23T14:00` or RFC 3339.
    pub start: String,
    /// End of the range (exclusive); default one day after `start`.
    pub end: Option<String>,
    /// Calendar ids or names; default all.
    pub calendars: Option<Vec<String>>,
    /// Only events whose title or location contains this text.
    pub query: Option<String>,
    /// IANA time zone for the answer (e.g. `Asia/Shanghai`); default the computer's.
    pub timezone: Option<String>,
    /// At most this many events (default 200).
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

pub(super) fn range(zone: Zone, start: &str, end: Option<&str>) -> Result<(i64, i64), ToolError> {
    let from = zone
        .parse_bound("start", start)
        .map_err(ToolError::invalid)?;
    let to = match end {
        Some(end) => zone.parse_bound("end", end).map_err(ToolError::invalid)?,
        None => from + 86_400,
    };
    if to <= from {
        return Err(ToolError::invalid("`end` must be after `start`"));
    }
    if to - from > 366 * 86_400 * 5 {
        return Err(ToolError::invalid(
            "the range is longer than five years: ask for a shorter one",
        ));
    }
    Ok((from, to))
}

/// What the read tools compute first: the zone, the range, fresh mirrors, and the instances in it.
pub(super) struct Window {
    zone: Zone,
    from: i64,
    to: i64,
    notes: Vec<String>,
    found: Vec<db::Occurrence>,
}

pub(super) async fn read_window(
    shared: &Shared,
    timezone: Option<&str>,
    start: &str,
    end: Option<&str>,
    calendars: Option<&[String]>,
) -> Result<Window, ToolError> {
    let zone = Zone::parse(timezone).map_err(ToolError::invalid)?;
    let (from, to) = range(zone, start, end)?;
    let (mut notes, calendars) = refresh_then_pick(shared, calendars).await?;
    let ids: Vec<String> = calendars.into_iter().map(|c| c.id).collect();
    let db::Found {
        occurrences: found,
        problems,
    } = db::occurrences(
        &shared.db.lock().unwrap(),
        Some(&ids),
        from,
        to,
        usize::MAX,
        zone,
    )
    .map_err(ToolError::failed)?;
    notes.extend(problems);
    Ok(Window {
        zone,
        from,
        to,
        notes,
        found,
    })
}

// ---------------------------------------------------------------- calendar_find_free_time

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FreeTimeInput {
    pub start: String,
    pub end: String,
    /// How long the slot must be.
    pub duration_minutes: u32,
    /// Working hours, `HH:MM` (default 09:00–17:00). Slots outside them are not offered.
    pub day_start: Option<String>,
    pub day_end: Option<String>,
    /// Offer Saturdays and Sundays too (default false).
    #[serde(default)]
    pub include_weekends: bool,
    pub calendars: Option<Vec<String>>,
    pub timezone: Option<String>,
    /// At most this many slots (default 10).
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

pub(super) fn hhmm(
    field: &str,
    text: Option<&str>,
    default: (u32, u32),
) -> Result<chrono::NaiveTime, ToolError> {
    let text = text.unwrap_or("");
    if text.is_empty() {
        return Ok(chrono::NaiveTime::from_hms_opt(default.0, default.1, 0).expect("valid"));
    }
    chrono::NaiveTime::parse_from_str(text, "%H:%M")
        .map_err(|_| ToolError::invalid(format!("`{field}` {text:?}: use HH:MM like 09:00")))
}

/// Free windows inside working hours: working windows per day minus busy intervals (sorted).
pub(super) fn free_slots(
    windows: &[(i64, i64)],
    busy: &mut [(i64, i64)],
    min_len: i64,
) -> Vec<(i64, i64)> {
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

fn check_text(out: &CheckOutput) -> String {
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
            let called_off = if e.cancelled { " (cancelled)" } else { "" };
            format!("{when}  {}{called_off}{place}  [{}]", e.title, e.calendar)
        })
        .collect();
    text.extend(out.notes.iter().map(|n| format!("note: {n}")));
    text.join("\n")
}

fn find_free_time_text(out: &FreeTimeOutput) -> String {
    if out.slots.is_empty() {
        return "No free slot of that length in working hours.".into();
    }
    out.slots
        .iter()
        .map(|s| format!("{} – {} ({} min)", s.start, s.end, s.minutes))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tools(list = read_tools)]
impl CalendarTools {
    #[tool(name = "calendar_check", title = "Check calendar", category = "calendar",
           effects = [CalendarRead], read_only, idempotent, text = check_text,
           plan = Self::plan_check, description = "List events in a time range across calendars (recurring events expanded), e.g. \"what's on tomorrow\".")]
    async fn check(&self, input: &CheckInput) -> ToolResult<CheckOutput> {
        let Window {
            zone, notes, found, ..
        } = read_window(
            &self.shared,
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

    fn plan_check(&self, input: &CheckInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        read_effects(&self.shared, input.calendars.as_deref())
    }

    #[tool(name = "calendar_find_free_time", title = "Find free time", category = "calendar",
           effects = [CalendarRead], read_only, idempotent, text = find_free_time_text,
           plan = Self::plan_find_free_time, description = "Find free slots of at least a given length in a range, within working hours, across calendars.")]
    async fn find_free_time(&self, input: &FreeTimeInput) -> ToolResult<FreeTimeOutput> {
        if input.duration_minutes == 0 {
            return Err(ToolError::invalid("`duration_minutes` must be at least 1"));
        }
        let (day_start, day_end) = (
            hhmm("day_start", input.day_start.as_deref(), (9, 0))?,
            hhmm("day_end", input.day_end.as_deref(), (17, 0))?,
        );
        if day_end <= day_start {
            return Err(ToolError::invalid("`day_end` must be after `day_start`"));
        }
        let Window {
            zone,
            from,
            to,
            notes,
            found,
        } = read_window(
            &self.shared,
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

    fn plan_find_free_time(
        &self,
        input: &FreeTimeInput,
        _: &EffectEnv,
    ) -> Result<CallPlan, ToolError> {
        read_effects(&self.shared, input.calendars.as_deref())
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
