//! The calendars and their servers: `calendar_list`, `calendar_sync`.

use super::*;

// ---------------------------------------------------------------- calendar_list / calendar_sync

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct ListInput {}

#[derive(Serialize, JsonSchema)]
pub struct ListOutput {
    pub calendars: Vec<CalendarInfo>,
    /// Recent sync conflicts and how they were resolved (both versions are kept).
    pub conflicts: Vec<db::Conflict>,
    /// Local changes waiting to be pushed to a server.
    pub queued_changes: i64,
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct SyncInput {
    /// A calendar account name; default all of them.
    pub account: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct SyncOutput {
    pub reports: Vec<crate::SyncReport>,
}

pub(super) fn synced_accounts(
    shared: &Shared,
    only: Option<&str>,
) -> Result<Vec<String>, ToolError> {
    let all = crate::calendar_accounts(&shared.db.lock().unwrap());
    Ok(all
        .into_iter()
        .map(|a| a.name)
        .filter(|n| only.is_none_or(|o| o == n))
        .collect())
}

fn list_text(out: &ListOutput) -> String {
    let mut lines: Vec<String> = out
        .calendars
        .iter()
        .map(|c| {
            let sync = match (&c.account, &c.last_error, &c.last_sync) {
                (None, _, _) => "local".to_string(),
                (Some(a), Some(e), _) => format!("{a}: last sync failed: {e}"),
                (Some(a), None, Some(t)) => format!("{a}: synced {t}"),
                (Some(a), None, None) => format!("{a}: never synced"),
            };
            format!("{}  {}  ({sync})", c.id, c.name)
        })
        .collect();
    if out.queued_changes > 0 {
        lines.push(format!(
            "{} change(s) queued for the server",
            out.queued_changes
        ));
    }
    lines.extend(
        out.conflicts
            .iter()
            .map(|c| format!("conflict {}: {}", c.created_at, c.detail)),
    );
    lines.join("\n")
}

fn sync_text(out: &SyncOutput) -> String {
    out.reports
        .iter()
        .map(|r| {
            let mut line = format!(
                "{}: pushed {}, pulled {}, removed {} here and {} there",
                r.calendar, r.pushed, r.pulled, r.removed_here, r.removed_there
            );
            for c in &r.conflicts {
                line.push_str(&format!("\n  conflict: {c}"));
            }
            for s in &r.skipped {
                line.push_str(&format!("\n  skipped: {s}"));
            }
            if let Some(e) = &r.error {
                line.push_str(&format!(
                    "\n  stopped: {e} (queued changes are kept and retried)"
                ));
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tools(list = account_tools)]
impl CalendarTools {
    #[tool(name = "calendar_list", title = "List calendars", category = "calendar",
           effects = [CalendarRead], read_only, idempotent, text = list_text,
           plan = Self::plan_list, description = "List calendars (local and CalDAV), their last sync, queued changes and sync conflicts.")]
    async fn list(&self, _input: &ListInput) -> ToolResult<ListOutput> {
        let conn = self.shared.db.lock().unwrap();
        let queued_changes = conn
            .query_row(
                "SELECT count(*) FROM calendar_objects WHERE dirty = 1",
                [],
                |r| r.get(0),
            )
            .map_err(db_error)?;
        Ok(ListOutput {
            calendars: db::calendars(&conn).map_err(db_error)?,
            conflicts: db::conflicts(&conn).map_err(db_error)?,
            queued_changes,
        })
    }

    fn plan_list(&self, _input: &ListInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        read_effects(&self.shared, None)
    }

    // A sync makes no change of its own: it pushes local changes each reviewed when it was made and
    // mirrors the server's. So it reads the accounts' calendars, and untrusted content asking for a
    // sync steers nothing (a calendar *write* after untrusted content asks past allow rules).
    #[tool(name = "calendar_sync", title = "Sync calendars", category = "calendar",
           effects = [CalendarRead], idempotent, plan = Self::plan_sync, text = sync_text,
           description = "Two-way sync of CalDAV calendars now: push queued local changes, pull the server's.")]
    async fn sync(&self, input: &SyncInput) -> ToolResult<SyncOutput> {
        let accounts = synced_accounts(&self.shared, input.account.as_deref())?;
        if accounts.is_empty() {
            return Err(ToolError::not_configured(
                match &input.account {
                    Some(a) => format!("no CalDAV account {a:?}"),
                    None => "no CalDAV account".into(),
                },
                "add one in Settings → Accounts, or `cowork account add NAME --caldav URL --user NAME`",
            ));
        }
        let mut reports = Vec::new();
        for account in accounts {
            reports.extend(self.shared.sync_account(&account).await?);
        }
        Ok(SyncOutput { reports })
    }

    fn plan_sync(&self, input: &SyncInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        let effects = synced_accounts(&self.shared, input.account.as_deref())?
            .into_iter()
            .map(|calendar| Effect::CalendarRead { calendar })
            .collect();
        Ok(CallPlan::new(effects))
    }
}
