//! The calendar: `cowork calendar …` — each subcommand is one calendar tool, reviewed and
//! audited like any call.

use super::*;

#[derive(Subcommand)]
pub(crate) enum CalendarCmd {
    /// Events in a range, repeating ones expanded (calendar_check).
    List {
        /// Start: today (default), tomorrow, 2026-11-23, 2026-11-23T14:00 or RFC 3339.
        #[arg(long, default_value = "today")]
        from: String,
        /// End (exclusive); default one day after the start.
        #[arg(long)]
        to: Option<String>,
        /// Only events whose title or location contains this.
        #[arg(long)]
        query: Option<String>,
        /// A calendar's id or name (repeatable); default all.
        #[arg(long = "calendar")]
        calendars: Vec<String>,
        /// IANA zone for the answer (default the computer's).
        #[arg(long)]
        timezone: Option<String>,
    },
    /// A new event (calendar_create).
    Add {
        title: String,
        /// `2026-11-23` (all day), `2026-11-23T14:00` or RFC 3339.
        start: String,
        /// Default: an hour after the start (the next day for an all-day event).
        #[arg(long)]
        end: Option<String>,
        #[arg(long)]
        timezone: Option<String>,
        #[arg(long)]
        location: Option<String>,
        #[arg(long)]
        description: Option<String>,
        /// An address to invite (repeatable): the event then asks before it is saved.
        #[arg(long = "invite")]
        attendees: Vec<String>,
        /// An RFC 5545 rule, e.g. `FREQ=WEEKLY;BYDAY=TU;COUNT=8`.
        #[arg(long)]
        repeat: Option<String>,
        /// A reminder, minutes before the start (repeatable).
        #[arg(long = "remind")]
        reminders: Vec<u32>,
        /// The calendar's id or name (default `local`).
        #[arg(long)]
        calendar: Option<String>,
    },
    /// Events from an .ics file (calendar_import).
    Import {
        path: std::path::PathBuf,
        #[arg(long)]
        calendar: Option<String>,
    },
    /// A calendar into an .ics file (calendar_export).
    Export {
        path: std::path::PathBuf,
        #[arg(long)]
        calendar: Option<String>,
    },
    /// Free time inside working hours (calendar_find_free_time).
    Free {
        /// today (default), tomorrow, a date or a date-time.
        #[arg(long, default_value = "today")]
        from: String,
        /// End (exclusive); default a week after a `--from` day.
        #[arg(long)]
        to: Option<String>,
        /// How long a slot must be.
        #[arg(long, default_value_t = 30)]
        minutes: u32,
        /// Working hours, HH:MM (default 09:00–17:00).
        #[arg(long)]
        day_start: Option<String>,
        #[arg(long)]
        day_end: Option<String>,
        /// Offer Saturdays and Sundays too.
        #[arg(long)]
        weekends: bool,
        #[arg(long = "calendar")]
        calendars: Vec<String>,
        #[arg(long)]
        timezone: Option<String>,
    },
    /// The calendars, the accounts they mirror, sync state and conflicts (calendar_list).
    Accounts,
    /// Sync CalDAV accounts now (calendar_sync).
    Sync {
        /// One account; default all.
        account: Option<String>,
    },
    /// What Cowork changed in calendars, newest first, with their numbers (calendar_changes).
    Changes {
        #[arg(long = "calendar")]
        calendars: Vec<String>,
        /// How many (default 20).
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Take back one change: the earlier version is put back, on the server too (calendar_undo).
    Undo {
        /// The change's number (`cowork calendar changes`, or what an add printed).
        change: i64,
    },
}

pub(crate) async fn calendar(
    app: &App,
    cmd: CalendarCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let (tool, args) = tool_call(cmd)?;
    call_and_print(app.scheduler(), tool, args, conversation, json).await
}

/// The tool a subcommand calls, and its arguments.
fn tool_call(cmd: CalendarCmd) -> Result<(&'static str, serde_json::Value), String> {
    use serde_json::json;
    let some = |list: Vec<String>| (!list.is_empty()).then_some(list);
    Ok(match cmd {
        CalendarCmd::List {
            from,
            to,
            query,
            calendars,
            timezone,
        } => (
            "calendar_check",
            json!({"start": from, "end": to, "query": query, "calendars": some(calendars), "timezone": timezone}),
        ),
        CalendarCmd::Add {
            title,
            start,
            end,
            timezone,
            location,
            description,
            attendees,
            repeat,
            reminders,
            calendar,
        } => (
            "calendar_create",
            json!({"title": title, "start": start, "end": end, "timezone": timezone, "location": location,
                   "description": description, "attendees": attendees, "recurrence": repeat,
                   "reminders_minutes": reminders, "calendar": calendar}),
        ),
        CalendarCmd::Import { path, calendar } => (
            "calendar_import",
            json!({"path": absolute(&path)?, "calendar": calendar}),
        ),
        CalendarCmd::Export { path, calendar } => (
            "calendar_export",
            json!({"path": absolute(&path)?, "calendar": calendar}),
        ),
        CalendarCmd::Free {
            from,
            to,
            minutes,
            day_start,
            day_end,
            weekends,
            calendars,
            timezone,
        } => {
            let to = match to {
                Some(to) => to,
                None => week_after(&from)?,
            };
            (
                "calendar_find_free_time",
                json!({"start": from, "end": to, "duration_minutes": minutes, "day_start": day_start,
                       "day_end": day_end, "include_weekends": weekends, "calendars": some(calendars),
                       "timezone": timezone}),
            )
        }
        CalendarCmd::Accounts => ("calendar_list", json!({})),
        CalendarCmd::Sync { account } => ("calendar_sync", json!({"account": account})),
        CalendarCmd::Changes { calendars, limit } => (
            "calendar_changes",
            json!({"calendars": some(calendars), "limit": limit}),
        ),
        CalendarCmd::Undo { change } => ("calendar_undo", json!({"change": change})),
    })
}

/// A file the tools read or write, named from where the command runs.
fn absolute(path: &std::path::Path) -> Result<String, String> {
    std::path::absolute(path)
        .map(|p| p.display().to_string())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The day a week after `from` (`today`, `tomorrow` or a date), as a date.
fn week_after(from: &str) -> Result<String, String> {
    let today = chrono::Local::now().date_naive();
    let day = match from.trim().to_ascii_lowercase().as_str() {
        "today" => today,
        "tomorrow" => today + chrono::Days::new(1),
        other => chrono::NaiveDate::parse_from_str(other, "%Y-%m-%d").map_err(|_| {
            format!("--from {from:?} is not a day: give --to as well (e.g. --to 2026-12-01)")
        })?,
    };
    Ok((day + chrono::Days::new(7)).format("%Y-%m-%d").to_string())
}
