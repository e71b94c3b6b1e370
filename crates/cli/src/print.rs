//! Human-readable and `--json` output.

use cowork_contract::text::printable_field as field;
use cowork_core::policy::RuleEntry;
use cowork_core::{AuditEntry, CallOutcome, Explanation, SearchHit, ToolInfo, VerifyReport};
use serde_json::json;
use std::io::Write;

pub(crate) fn print_json(value: &impl serde::Serialize) {
    println!("{}", json_text(value, true));
}

/// JSON for the terminal. What `say!` would escape there (bidi and C1 controls; serde already
/// escapes the C0 ones) is written as a JSON `\uXXXX` escape instead: `say!`'s Rust-style
/// `\u{202e}` is no JSON escape and broke the document a script reads, while this keeps the
/// data and nothing in it can reorder or rewrite the person's terminal.
pub(crate) fn json_text(value: &impl serde::Serialize, pretty: bool) -> String {
    let text = match pretty {
        true => serde_json::to_string_pretty(value),
        false => serde_json::to_string(value),
    }
    .unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    let mut one = [0u8; 4];
    for c in text.chars() {
        let unsafe_here = matches!(
            cowork_contract::text::printable_text(c.encode_utf8(&mut one)),
            std::borrow::Cow::Owned(_)
        );
        if unsafe_here {
            for unit in c.encode_utf16(&mut [0u16; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn layer_text(info: &ToolInfo) -> String {
    let mut text = info.layer.as_str().to_string();
    for overridden in &info.overrides {
        text.push_str(&format!(" (overrides {})", overridden.as_str()));
    }
    text
}

pub fn tools(tools: &[ToolInfo], json: bool) {
    if json {
        return print_json(&tools);
    }
    let width = tools.iter().map(|t| t.spec.name.len()).max().unwrap_or(4);
    say!(
        "{:width$}  {:10}  {:8}  EFFECTS",
        "NAME",
        "CATEGORY",
        "LAYER"
    );
    for t in tools {
        let effects: Vec<&str> = t.spec.effects.iter().map(|e| e.as_str()).collect();
        say!(
            "{:width$}  {:10}  {:8}  {}",
            field(&t.spec.name),
            field(&t.spec.category),
            layer_text(t),
            effects.join(", ")
        );
    }
    say!("\n{} tools", tools.len());
}

pub fn search(hits: &[SearchHit], json: bool) {
    if json {
        return print_json(&hits);
    }
    if hits.is_empty() {
        say!("no tool matches");
    }
    for h in hits {
        say!(
            "{:4}  {}  — {}",
            h.score,
            field(&h.name),
            field(&h.description)
        );
    }
}

pub fn tool(info: &ToolInfo, json: bool) {
    if json {
        return print_json(info);
    }
    let s = &info.spec;
    say!(
        "{} — {}\n{}\n",
        field(&s.name),
        field(&s.title),
        s.description
    );
    say!(
        "category: {}\nlayer: {}",
        field(&s.category),
        layer_text(info)
    );
    if !s.aliases.is_empty() {
        say!("aliases: {}", field(&s.aliases.join(", ")));
    }
    let effects: Vec<&str> = s.effects.iter().map(|e| e.as_str()).collect();
    say!(
        "effects: {}",
        if effects.is_empty() {
            "none".into()
        } else {
            effects.join(", ")
        }
    );
    let a = s.annotations;
    say!(
        "read-only: {}  destructive: {}  idempotent: {}  open-world: {}",
        a.read_only,
        a.destructive,
        a.idempotent,
        a.open_world
    );
    say!("timeout: {} ms", s.timeout_ms);
    say!(
        "input schema:\n{}",
        serde_json::to_string_pretty(&s.input_schema).unwrap_or_default()
    );
}

pub fn outcome(o: &CallOutcome, json: bool) {
    if json {
        let review = o.review.as_ref();
        let mut out = json!({
            "call_id": o.call_id,
            "tool": o.tool,
            "decision": review.map(|r| r.decision.as_str()),
            "score": review.map(|r| r.score),
            "approved_by": o.approved_by,
            "duration_us": o.duration.as_micros() as u64,
        });
        match &o.result {
            Ok(output) => {
                out["ok"] = json!(true);
                out["output"] = json!(output);
            }
            Err(e) => {
                out["ok"] = json!(false);
                out["error"] = json!({"kind": e.kind(), "message": e.to_string()});
            }
        }
        return print_json(&out);
    }
    match &o.result {
        Ok(output) => say!("{}", output.text_content()),
        Err(e) => esay!("{}: {e}", field(&o.tool)),
    }
}

pub fn explanation(e: &Explanation, json: bool) {
    if json {
        return print_json(e);
    }
    let r = &e.review;
    say!(
        "{} ({}): {}",
        field(&e.tool),
        e.layer.as_str(),
        r.decision.as_str().to_uppercase()
    );
    say!("why: {}", field(&r.why));
    say!("mode: {}", r.mode.as_str());
    match &r.matched {
        Some(m) => say!(
            "rule: {} {} (from {})",
            m.action.as_str(),
            field(&m.rule),
            m.source.as_str()
        ),
        None => say!("rule: none matched"),
    }
    if let Some(by) = &r.tainted_by {
        say!("tainted by: {}", field(by));
    }
    if let Some(value) = &r.unsaid {
        say!("not from you: {}", field(value));
    }
    for effect in &e.effects {
        say!("effect: {}", field(&effect.to_string()));
    }
    say!("risk {}/10:", r.score);
    for reason in &r.reasons {
        say!("  {:+} {}", reason.points, field(&reason.text));
    }
}

pub fn grants(grants: &[cowork_core::Grant], json: bool) {
    if json {
        return print_json(&json!({ "grants": grants }));
    }
    if grants.is_empty() {
        say!("no standing permissions: every ask is answered as it comes");
    }
    for g in grants {
        let scope = match (&g.conversation, &g.file) {
            (Some(conversation), _) => format!("this conversation: {}", field(conversation)),
            (None, Some(file)) => format!("always ({})", file.display()),
            (None, None) => "always".into(),
        };
        say!("{:40}  {scope}", field(&g.rule));
        say!("       {}", field(&g.meaning.text));
    }
}

/// What the organisation's managed settings impose, when there are any.
pub fn managed(managed: &cowork_core::Managed) {
    if !managed.files.is_empty() {
        let files: Vec<String> = managed
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        say!(
            "managed by your organisation: {} ({} rules)",
            files.join(", "),
            managed.rules
        );
    }
    if let Some((ceiling, file)) = &managed.ceiling {
        say!(
            "mode ceiling: {} (set in {}; you cannot choose a wider mode)",
            ceiling.as_str(),
            file.display()
        );
    }
}

pub fn rules(rules: &[RuleEntry], problems: &[cowork_core::policy::PolicyProblem], json: bool) {
    if json {
        return print_json(&json!({"rules": rules, "problems": problems}));
    }
    for p in problems {
        esay!("problem in {}: {}", p.file.display(), field(&p.message));
    }
    for r in rules {
        let file = r
            .file
            .as_ref()
            .map(|f| format!("  [{}]", f.display()))
            .unwrap_or_default();
        say!(
            "{:5}  {:40}  {}{file}",
            r.action.as_str(),
            field(&r.rule),
            r.source.as_str()
        );
        say!("       {}", field(&r.meaning.text));
        if let Some(why) = &r.broad {
            say!("       WARNING: {}", field(&why.text));
        }
    }
}

pub fn doctor(findings: &[cowork_app::doctor::Finding], json: bool) {
    use cowork_app::doctor::Health;
    if json {
        let ok = !findings.iter().any(|f| f.fails());
        return print_json(&json!({"ok": ok, "findings": findings}));
    }
    for f in findings {
        let mark = match f.health {
            Health::Works => "ok  ",
            Health::Degraded => "part",
            Health::Missing => "MISS",
            Health::NotSetUp => "--  ",
        };
        let needed = if f.fails() {
            "  (you rely on this)"
        } else {
            ""
        };
        say!(
            "{mark}  {}: {}{needed}",
            f.capability.title(),
            field(&f.detail)
        );
        if let Some(fix) = &f.fix {
            say!("      fix: {}", field(fix));
        }
    }
}

pub fn audit_rows(rows: &[AuditEntry], json: bool) {
    if json {
        return print_json(&rows);
    }
    for e in rows {
        let r = &e.record;
        let outcome = r.outcome.as_deref().unwrap_or("-");
        say!(
            "#{:<6} {}  {:7} {:24} {:6} {:8} score {:>2}  {}{}",
            e.seq,
            &r.ts[..r.ts.len().min(19)],
            field(&r.phase),
            field(&r.tool),
            field(&r.caller),
            field(&r.decision),
            r.score.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
            outcome,
            r.error
                .as_ref()
                .map(|e| format!(": {}", field(e)))
                .unwrap_or_default()
        );
    }
}

pub fn verify(report: &VerifyReport, json: bool) {
    if json {
        return print_json(
            &json!({"ok": report.ok(), "rows": report.rows, "head_seq": report.head_seq, "head_hash": report.head_hash, "problems": report.problems}),
        );
    }
    if report.ok() {
        say!(
            "audit log OK: {} rows, chain intact, head #{} {}",
            report.rows,
            report.head_seq,
            report.head_hash
        );
    } else {
        say!(
            "audit log TAMPERED: {} problem(s) in {} rows",
            report.problems.len(),
            report.rows
        );
        for p in &report.problems {
            say!("  {}", field(&p.message));
        }
    }
}

/// A server's state as its JSON names it (`running`, `failed`, …).
pub(crate) fn server_state(state: cowork_app::ServerState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

pub fn servers(servers: &[cowork_app::ServerStatus], json: bool) {
    if json {
        return print_json(&servers);
    }
    if servers.is_empty() {
        say!("no MCP servers (install a toolpack: `cowork toolpack install ./toolpacks/time`)");
    }
    for s in servers {
        let pid = s.pid.map(|p| format!(" pid {p}")).unwrap_or_default();
        say!(
            "{:16} {:10} {:3} tools  {} restarts{pid}  log {}",
            field(&s.name),
            server_state(s.state),
            s.tools,
            s.restarts,
            s.log_file.display()
        );
        if let Some(e) = &s.last_error {
            say!("{:16} last error: {}", "", field(e));
        }
    }
}

pub fn toolpacks(
    records: &std::collections::BTreeMap<String, cowork_app::ToolpackRecord>,
    json: bool,
) {
    if json {
        return print_json(&records);
    }
    if records.is_empty() {
        say!("no toolpacks installed");
    }
    for (name, r) in records {
        let pin = r
            .commit
            .as_deref()
            .map(|c| format!(" @{}", &c[..c.len().min(12)]))
            .unwrap_or_default();
        say!(
            "{:16} {:8} {:9} {}{pin}  sha256 {}…  last used {}",
            field(name),
            field(&r.version),
            if r.enabled { "enabled" } else { "disabled" },
            field(&r.source),
            &r.sha256[..16],
            r.last_used.as_deref().unwrap_or("never")
        );
    }
}

/// A page of the MCP Registry's catalog: each entry's name, what installing it runs, and
/// its description; the cursor of the next page; whether this is the cached answer.
pub fn catalog(page: &cowork_app::CatalogPage, json: bool) {
    use cowork_app::CatalogInstall as Install;
    if json {
        return print_json(&page);
    }
    if let Some(offline) = &page.offline {
        esay!(
            "offline: the MCP Registry's answer from {} ({})",
            offline.fetched_at,
            field(&offline.why)
        );
    }
    if page.entries.is_empty() {
        say!("nothing in the catalog matches");
    }
    for e in &page.entries {
        let runs = match &e.install {
            Install::Bundle { url } => format!("bundle {url}"),
            Install::Npm { package, version } => format!("npm {package} {version}"),
            Install::Pypi { package, version } => format!("PyPI {package} {version}"),
            Install::Remote { url } => format!("remote {url}"),
            Install::Unsupported { why } => format!("cannot install: {why}"),
        };
        say!(
            "{} {} — {}",
            field(&e.name),
            field(&e.version),
            field(&runs)
        );
        say!("    {}", field(&e.description));
    }
    if let Some(cursor) = &page.next_cursor {
        say!("more: --cursor {}", field(cursor));
    }
}

/// The install review: what will run, each tool's declared effects, what it needs.
pub fn toolpack_review(r: &cowork_app::ToolpackReview, json: bool) {
    if json {
        return print_json(&r);
    }
    let err = &mut std::io::stderr();
    let _ = ewrite!(
        err,
        "┌ toolpack {} {} — {}",
        field(&r.display_name),
        field(&r.version),
        field(&r.description)
    );
    let _ = ewrite!(
        err,
        "│ source:  {}{}",
        field(&r.source),
        r.commit
            .as_deref()
            .map(|c| format!(" (commit {c})"))
            .unwrap_or_default()
    );
    let _ = ewrite!(err, "│ sha256:  {}", r.sha256);
    let _ = ewrite!(err, "│ runs:    {}", field(&r.command));
    if let Some(acts_as) = &r.acts_as {
        let _ = ewrite!(err, "│ sign-in: {}", field(acts_as));
    }
    for line in &r.sandbox {
        let _ = ewrite!(err, "│ sandbox: {}", field(line));
    }
    review_tools(err, r);
    review_needs(err, r);
    let _ = ewrite!(err, "└");
}

/// Each tool with its declared effects (an undeclared one asks at every call), and the
/// builtins the pack overrides.
fn review_tools(err: &mut impl Write, r: &cowork_app::ToolpackReview) {
    let _ = ewrite!(err, "│ tools:");
    for t in &r.tools {
        let effects = match &t.effects {
            Some(e) if e.is_empty() => "no effects".to_string(),
            Some(e) => field(&e.join(", ")).into_owned(),
            None => "UNDECLARED — every call asks (risk 8)".to_string(),
        };
        let _ = ewrite!(err, "│   {:28} {effects}", field(&t.name));
        if let Some(why) = &t.withheld {
            let _ = ewrite!(
                err,
                "│   {:28} WARNING: its description is withheld from the assistant: {why}",
                ""
            );
        }
    }
    let _ = ewrite!(
        err,
        "│   {:28} UNDECLARED — every call asks (risk 8)",
        "(any other tool)"
    );
    for (builtin, tool) in &r.overrides {
        let _ = ewrite!(
            err,
            "│ overrides the builtin {} with {}",
            field(builtin),
            field(tool)
        );
    }
}

/// The settings the pack needs, and what changed since the installed version.
fn review_needs(err: &mut impl Write, r: &cowork_app::ToolpackReview) {
    for c in &r.user_config {
        let _ = writeln!(
            err,
            "│ needs {}{}{}: {}",
            field(&c.key),
            if c.required && !c.has_default {
                " (required)"
            } else {
                ""
            },
            if c.sensitive {
                " (kept in the OS keyring)"
            } else {
                ""
            },
            field(&c.title)
        );
    }
    if !r.changes.is_empty() {
        let _ = ewrite!(err, "│ changes since the installed version:");
        for c in &r.changes {
            let _ = ewrite!(err, "│   {}", field(c));
        }
    }
}

pub fn vault_reindex(r: &cowork_app::ReindexReport, json: bool) {
    if json {
        return print_json(r);
    }
    say!(
        "{} files: {} indexed, {} unchanged, {} removed from the index; {} embedded",
        r.files,
        r.indexed,
        r.unchanged,
        r.removed,
        r.embedded
    );
    for (path, why) in &r.problems {
        say!("skipped {}: {}", field(path), field(why));
    }
}

pub fn vault_stats(s: &cowork_app::VaultStats, json: bool) {
    if json {
        return print_json(s);
    }
    say!("folder   {}", s.folder);
    let kinds: Vec<String> = s.by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    say!("entries  {} ({})", s.entries, kinds.join(", "));
    match (&s.model, &s.semantic_off) {
        (Some(model), _) => say!(
            "model    {model}: {} vectors in memory, {:.1} MB",
            s.cached_vectors,
            s.cache_bytes as f64 / 1e6
        ),
        (None, Some(why)) => say!("model    none — searching by words only ({why})"),
        (None, None) => say!("model    none"),
    }
    for (model, n) in &s.vectors {
        say!("vectors  {n} of {model}");
    }
    for (path, why) in &s.problems {
        say!("problem  {}: {}", field(path), field(why));
    }
}

pub fn suspensions(rows: &[cowork_core::Suspension], json: bool) {
    if json {
        return print_json(&rows);
    }
    if rows.is_empty() {
        say!("no suspended tasks");
    }
    for s in rows {
        say!(
            "{}  {:10} {}  {}",
            s.id,
            field(&s.state),
            field(&s.tool),
            field(&s.reason)
        );
        say!(
            "{:38}since {} · until {} · conversation {}",
            "",
            s.created_at,
            s.deadline,
            s.conversation
        );
    }
}

/// What trusting a workspace would let happen.
pub fn workspace_reviews(reviews: &[cowork_app::WorkspaceReview], json: bool) {
    if json {
        return print_json(&reviews);
    }
    for r in reviews {
        let w = &r.status;
        let state = match w.state {
            cowork_core::policy::TrustState::Trusted => "TRUSTED",
            cowork_core::policy::TrustState::Untrusted => "not trusted: its settings only narrow",
            cowork_core::policy::TrustState::Changed => {
                "CHANGED since you trusted it: its settings only narrow again"
            }
        };
        say!(
            "┌ workspace {} — {state}",
            field(&w.root.display().to_string())
        );
        say!(
            "│ settings: {} ({})",
            w.settings.display(),
            if w.digest == "absent" {
                "none"
            } else {
                &w.digest[..16]
            }
        );
        let list = |label: &str, rules: &[String]| {
            for rule in rules {
                say!("│ {label} {}", field(rule));
            }
        };
        if w.allow.is_empty() {
            say!("│ trusting adds no allow rules");
        } else {
            say!("│ trusting would ALLOW without asking:");
            list("  allow", &w.allow);
        }
        for why in &w.broad {
            say!("│   WARNING: {}", field(&why.text));
        }
        if let Some(mode) = w.mode {
            say!(
                "│ asks for mode {} (it can only lower yours)",
                mode.as_str()
            );
        }
        if !w.hooks.is_empty() {
            say!("│ trusting would RUN these hooks of its own, at your calls (sandboxed):");
            list("  hook", &w.hooks);
        }
        list("already applies: ask ", &w.ask);
        list("already applies: deny", &w.deny);
        if r.repository_programs.is_empty() {
            say!("│ its repository configures no programs for git to run");
        } else {
            say!(
                "│ git will run what this repository configured (until trusted: switched off, or asked):"
            );
            for p in &r.repository_programs {
                say!("│   {}", field(p));
            }
        }
        say!("└");
    }
}

#[cfg(test)]
mod json_tests {
    #[test]
    fn json_for_the_terminal_stays_json_and_keeps_its_data() {
        let tricky = "a\u{202e}b\u{85}c\u{1b}[2Jd\n\u{2066}";
        let printed = super::json_text(&serde_json::json!({"text": tricky}), false);
        for c in ['\u{202e}', '\u{85}', '\u{1b}', '\u{2066}'] {
            assert!(!printed.contains(c), "{printed}");
        }
        let back: serde_json::Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(back["text"], tricky);
    }
}
