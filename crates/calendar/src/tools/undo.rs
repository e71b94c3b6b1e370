//! Taking calendar changes back: `calendar_changes` lists what Cowork changed, `calendar_undo`
//! puts the earlier version back — locally, and on a CalDAV server as a new version of the
//! object (a new ETag), so every client sees it.

use super::write::{Saved, attendees_in, bump, save};
use super::*;
use crate::history::Change;

/// How many changes a listing shows at most.
const MAX_LISTED: usize = 200;

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct ChangesInput {
    /// Calendar ids or names (default: all).
    pub calendars: Option<Vec<String>>,
    /// How many, newest first (default 20, at most 200).
    pub limit: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
pub struct ChangeView {
    pub id: i64,
    /// When, in UTC (RFC 3339).
    pub at: String,
    pub action: Action,
    pub calendar: String,
    pub uid: String,
    pub title: String,
    /// The conversation that asked for it.
    pub conversation: String,
    /// For an undo: the change it took back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<i64>,
    /// The change that took this one back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone_by: Option<i64>,
}

#[derive(Serialize, JsonSchema)]
pub struct ChangeList {
    pub changes: Vec<ChangeView>,
}

fn changes_text(list: &ChangeList) -> String {
    if list.changes.is_empty() {
        return "No calendar changes yet.".into();
    }
    let lines: Vec<String> = list
        .changes
        .iter()
        .map(|c| {
            let state = match (c.undoes, c.undone_by) {
                (_, Some(by)) => format!(" — taken back by #{by}"),
                (Some(of), None) => format!(" — took back #{of}"),
                (None, None) => String::new(),
            };
            format!(
                "#{} {} {} \"{}\" in {}{state}",
                c.id,
                c.at,
                c.action.as_str(),
                c.title,
                c.calendar
            )
        })
        .collect();
    lines.join("\n")
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoInput {
    /// The change to take back: its number from calendar_changes, or `change` from a create,
    /// update or delete.
    pub change: i64,
}

#[derive(Serialize, JsonSchema)]
pub struct Undone {
    /// The change taken back, and what it had done.
    pub undid: i64,
    pub undid_action: Action,
    #[serde(flatten)]
    pub saved: Saved,
}

fn undo_text(out: &Undone) -> String {
    let what = match out.undid_action {
        Action::Created => "it is removed again",
        Action::Deleted => "it is back",
        Action::Updated | Action::Undid => "the earlier version is back",
    };
    out.saved.said(&format!(
        "Took back change #{} to \"{}\" in {}: {what}",
        out.undid, out.saved.title, out.saved.calendar
    ))
}

/// Revision stamps an undo renews; two texts that differ only in them are the same event.
const STAMPS: [&str; 3] = ["SEQUENCE", "DTSTAMP", "LAST-MODIFIED"];

fn same_event(a: &str, b: &str) -> bool {
    let content = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| {
                !STAMPS
                    .iter()
                    .any(|s| l.strip_prefix(s).is_some_and(|r| r.starts_with([':', ';'])))
            })
            .map(str::to_string)
            .collect()
    };
    content(a) == content(b)
}

/// Refuses to undo change `id` unless the event is still as that change left it (`current`):
/// a later edit — Cowork's or one a sync brought — would otherwise be lost without a word.
pub(super) fn still_as_left(
    conn: &rusqlite::Connection,
    id: i64,
    current: Option<&str>,
) -> Result<(), ToolError> {
    let change = find(conn, id)?;
    if let Some(by) = change.undone_by {
        return Err(ToolError::invalid(format!(
            "change #{id} was already taken back by #{by}: take back #{by} to do it again"
        )));
    }
    let unchanged = match (change.after.as_deref(), current) {
        (None, None) => true,
        (Some(left), Some(now)) => same_event(left, now),
        _ => false,
    };
    if unchanged {
        return Ok(());
    }
    let later = history::later_changes(conn, &change).map_err(db_error)?;
    Err(ToolError::invalid(if later.is_empty() {
        format!(
            "\"{}\" was changed after change #{id} (a sync or an import brought another version): taking #{id} back would lose that edit; change the event with calendar_update instead",
            change.title
        )
    } else {
        let ids: Vec<String> = later.iter().map(|l| format!("#{l}")).collect();
        format!(
            "\"{}\" was changed again after change #{id}: take back {} first (newest first)",
            change.title,
            ids.join(", ")
        )
    }))
}

fn find(conn: &rusqlite::Connection, id: i64) -> Result<Change, ToolError> {
    history::change(conn, id).map_err(db_error)?.ok_or_else(|| {
        ToolError::invalid(format!(
            "there is no calendar change #{id} (the oldest are forgotten): calendar_changes lists them"
        ))
    })
}

/// The earlier version as a new revision: its SEQUENCE above every one the event has had, so
/// servers and invited people's clients take it as the latest.
fn revived(text: &str, current: Option<&str>) -> Result<Calendar, ToolError> {
    let mut cal = ics::parse(text).map_err(ToolError::failed)?;
    let newest = [Some(text), current]
        .into_iter()
        .flatten()
        .filter_map(|t| ics::parse(t).ok())
        .flat_map(|c| {
            ics::events(&c)
                .filter_map(|e| e.get_sequence())
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap_or(0);
    for component in cal.components.iter_mut() {
        if let CalendarComponent::Event(event) = component {
            event.sequence(newest);
            bump(event);
        }
    }
    Ok(cal)
}

#[tools(list = history_tools)]
impl CalendarTools {
    #[tool(name = "calendar_changes", title = "Calendar changes", category = "calendar",
           read_only, effects = [CalendarRead], plan = Self::plan_changes, text = changes_text,
           description = "List what Cowork changed in calendars (created, updated, deleted, taken back), newest first, with the numbers calendar_undo takes.")]
    async fn changes(&self, input: &ChangesInput) -> ToolResult<ChangeList> {
        let calendars = match &input.calendars {
            Some(wanted) => Some(
                pick(&self.shared, Some(wanted))?
                    .into_iter()
                    .map(|c| c.id)
                    .collect::<Vec<_>>(),
            ),
            None => None,
        };
        let limit = input.limit.unwrap_or(20).clamp(1, MAX_LISTED);
        let rows = history::changes(&self.shared.db.lock().unwrap(), calendars.as_deref(), limit)
            .map_err(db_error)?;
        let changes = rows
            .into_iter()
            .map(|c| ChangeView {
                id: c.id,
                at: c.at,
                action: c.action,
                calendar: c.calendar,
                uid: c.uid,
                title: c.title,
                conversation: c.conversation,
                undoes: c.undoes,
                undone_by: c.undone_by,
            })
            .collect();
        Ok(ChangeList { changes })
    }

    fn plan_changes(&self, input: &ChangesInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        read_effects(&self.shared, input.calendars.as_deref())
    }

    #[tool(name = "calendar_undo", title = "Undo calendar change", category = "calendar",
           effects = [CalendarWrite], destructive, undoable, plan = Self::plan_undo, text = undo_text,
           description = "Take back one calendar change (from calendar_changes, or the `change` a create, update or delete returned): the earlier version is put back, on the server too.")]
    async fn undo(&self, _: &UndoInput, change: &Change, ctx: &ToolContext) -> ToolResult<Undone> {
        // The change as the review saw it (its calendar and whom it reaches); whether it still
        // stands is checked again inside the write's transaction (`still_as_left`).
        let change = change.clone();
        // By id, as the review named it: a name could match another account's calendar.
        let calendar = by_id(&self.shared, &change.calendar)?;
        let current = db::object(&self.shared.db.lock().unwrap(), &calendar.id, &change.uid)
            .map_err(db_error)?
            .filter(|o| !o.deleted)
            .map(|o| o.ics);
        let restored = change
            .before
            .as_deref()
            .map(|text| revived(text, current.as_deref()))
            .transpose()?;
        let record = history::Record {
            action: Action::Undid,
            conversation: &ctx.conversation_id,
            title: &change.title,
            undoes: Some(change.id),
        };
        let written = save(
            &self.shared,
            &calendar,
            &change.uid,
            restored.as_ref(),
            &record,
        )
        .await?;
        Ok(Undone {
            undid: change.id,
            undid_action: change.action,
            saved: Saved::new(calendar.id, change.uid, change.title, written),
        })
    }

    /// A write to the change's calendar, inviting (or un-inviting) everyone either version
    /// invites: a server with scheduling mails them when it changes.
    fn plan_undo(&self, input: &UndoInput, _: &EffectEnv) -> Result<CallPlan<Change>, ToolError> {
        let change = find(&self.shared.db.lock().unwrap(), input.change)?;
        let mut attendees: Vec<String> = [&change.before, &change.after]
            .into_iter()
            .flatten()
            .flat_map(|t| attendees_in(t))
            .collect();
        attendees.sort();
        attendees.dedup();
        let effects = vec![Effect::CalendarWrite {
            calendar: change.calendar.clone(),
            attendees,
        }];
        Ok(CallPlan::with(effects, change))
    }
}
