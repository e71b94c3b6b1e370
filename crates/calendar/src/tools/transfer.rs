//! `.ics` files in and out: `calendar_import`, `calendar_export`.

use super::write::edited;
use super::*;

// ---------------------------------------------------------------- import / export

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportInput {
    /// An `.ics` file.
    pub path: String,
    /// Calendar id or name (default `local`).
    pub calendar: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct ImportOutput {
    pub calendar: String,
    pub imported: usize,
    /// Events that could not be read, each with why.
    pub skipped: Vec<String>,
    /// How the file was read where it needed interpreting (a zone it defines under a name no
    /// zone database knows, read as its IANA match).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportInput {
    /// Where to write the `.ics` file.
    pub path: String,
    /// Calendar id or name (default `local`).
    pub calendar: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct ExportOutput {
    pub path: String,
    pub events: usize,
}

fn import_text(out: &ImportOutput) -> String {
    let mut text = format!("Imported {} event(s) into {}", out.imported, out.calendar);
    for s in &out.skipped {
        text.push_str(&format!("\nskipped {s}"));
    }
    // How the file's own zones were read is part of what was imported.
    for z in &out.zones {
        text.push_str(&format!("\n{z}"));
    }
    text
}

fn export_text(out: &ExportOutput) -> String {
    format!("Wrote {} event(s) to {}", out.events, out.path)
}

/// What [`store_calendars`] stored and how it read the text.
pub(crate) struct Stored {
    pub imported: usize,
    pub skipped: Vec<String>,
    pub zones: Vec<String>,
}

/// Stores every event of parsed calendars in `calendar`, one object per UID (an existing UID is
/// replaced). Zones a file defines under names no zone database knows become their IANA match;
/// an event that does not index is skipped with why, and the rest is stored.
pub(crate) fn store_calendars(
    tx: &rusqlite::Transaction<'_>,
    calendar: &CalendarInfo,
    parsed: Vec<Calendar>,
) -> rusqlite::Result<Stored> {
    let mut stored = Stored {
        imported: 0,
        skipped: Vec::new(),
        zones: Vec::new(),
    };
    for mut cal in parsed {
        stored.zones.extend(crate::vtimezone::adopt(&mut cal));
        stored.zones.extend(crate::vtimezone::defined_notes(&cal));
        for (uid, object) in ics::split_by_uid(cal) {
            match ics::index(&object) {
                Ok((_, rows)) => {
                    let existing = db::object(tx, &calendar.id, &uid)?;
                    let text = ics::to_text(&object);
                    db::put_object(tx, &edited(calendar, uid, text, existing.as_ref()), &rows)?;
                    stored.imported += 1;
                }
                Err(why) => stored.skipped.push(format!("{uid}: {why}")),
            }
        }
    }
    stored.zones.sort();
    stored.zones.dedup();
    Ok(stored)
}

#[tools(list = transfer_tools)]
impl CalendarTools {
    #[tool(name = "calendar_import", title = "Import .ics", category = "calendar",
           effects = [FsRead, CalendarWrite], plan = Self::plan_import, text = import_text,
           description = "Import the events of an iCalendar (.ics) file into a calendar; existing UIDs are replaced.")]
    async fn import(&self, input: &ImportInput, ctx: &ToolContext) -> ToolResult<ImportOutput> {
        let calendar = pick_one(&self.shared, input.calendar.as_deref())?;
        let path = ctx.env.resolve_path(&input.path);
        let bytes = std::fs::read(&path)
            .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
        let text = String::from_utf8_lossy(&bytes);
        let parsed = ics::parse_all(&text)
            .map_err(|m| ToolError::invalid(format!("{}: {m}", path.display())))?;
        let stored = {
            let mut conn = self.shared.db.lock().unwrap();
            let tx = conn.transaction().map_err(db_error)?;
            let stored = store_calendars(&tx, &calendar, parsed).map_err(db_error)?;
            tx.commit().map_err(db_error)?;
            stored
        };
        let note = match &calendar.account {
            Some(account) => match self.shared.sync_account(account).await {
                Ok(_) => None,
                Err(e) => Some(format!("imported here and queued for the server ({e})")),
            },
            None => None,
        };
        Ok(ImportOutput {
            calendar: calendar.id,
            imported: stored.imported,
            skipped: stored.skipped,
            zones: stored.zones,
            note,
        })
    }

    /// The file's attendees are part of the write: a server that schedules (Microsoft Graph
    /// always) mails every attendee of an event it is given, so the review names them.
    fn plan_import(&self, input: &ImportInput, env: &EffectEnv) -> Result<CallPlan, ToolError> {
        let calendar = pick_one(&self.shared, input.calendar.as_deref())?;
        let path = env.resolve_path(&input.path);
        let attendees = std::fs::read(&path)
            .map(|bytes| super::write::attendees_in(&String::from_utf8_lossy(&bytes)))
            .unwrap_or_default();
        Ok(CallPlan::new(vec![
            Effect::FsRead {
                path: path.to_string_lossy().into_owned(),
            },
            Effect::CalendarWrite {
                calendar: calendar.id,
                attendees,
            },
        ]))
    }

    #[tool(name = "calendar_export", title = "Export .ics", category = "calendar",
           effects = [CalendarRead, FsWrite], plan = Self::plan_export, text = export_text,
           description = "Write a calendar's events (with their time zones) to an iCalendar (.ics) file.")]
    async fn export(&self, input: &ExportInput, ctx: &ToolContext) -> ToolResult<ExportOutput> {
        let calendar = pick_one(&self.shared, input.calendar.as_deref())?;
        let objects =
            db::objects(&self.shared.db.lock().unwrap(), &calendar.id, false).map_err(db_error)?;
        let mut out = Calendar::new();
        out.name(&calendar.name);
        let mut zones = std::collections::BTreeSet::new();
        let mut count = 0;
        for object in objects.iter().filter(|o| !o.deleted) {
            let Ok(cal) = ics::parse(&object.ics) else {
                continue;
            };
            for component in cal.components {
                match component {
                    CalendarComponent::Other(o)
                        if o.component_kind() == "VTIMEZONE"
                            && zones.insert(
                                o.property_value("TZID").unwrap_or_default().to_string(),
                            ) =>
                    {
                        out.push(CalendarComponent::Other(o));
                    }
                    CalendarComponent::Event(e) => {
                        count += 1;
                        out.push(e);
                    }
                    _ => {}
                }
            }
        }
        let path = ctx.env.resolve_path(&input.path);
        cowork_store::write_atomically(&path, ics::to_text(&out).as_bytes())
            .map_err(|e| ToolError::failed(format!("cannot write {}: {e}", path.display())))?;
        Ok(ExportOutput {
            path: path.display().to_string(),
            events: count,
        })
    }

    fn plan_export(&self, input: &ExportInput, env: &EffectEnv) -> Result<CallPlan, ToolError> {
        let calendar = pick_one(&self.shared, input.calendar.as_deref())?;
        Ok(CallPlan::new(vec![
            Effect::CalendarRead {
                calendar: calendar.id,
            },
            Effect::FsWrite {
                path: env.resolve_path(&input.path).to_string_lossy().into_owned(),
            },
        ]))
    }
}
