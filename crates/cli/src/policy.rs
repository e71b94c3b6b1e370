//! The policy: `cowork policy explain | rules list | rules add | rules remove | grants | mode`.

use super::*;
use cowork_core::{Action, Mode, PolicyBridge, RuleSource};

#[derive(Subcommand)]
pub(crate) enum PolicyCmd {
    /// The decision a call would get, its score and reasons — without running it.
    Explain {
        name: String,
        #[arg(long, default_value = "{}")]
        args: String,
    },
    #[command(subcommand)]
    Rules(RulesCmd),
    /// Every standing permission you gave ("always" rules and "this conversation" grants), or
    /// `grants revoke RULE [--conversation ID]` to take one back.
    Grants {
        #[command(subcommand)]
        revoke: Option<GrantsCmd>,
    },
    /// Show or set the mode (normal, plan, accept-edits).
    Mode { mode: Option<String> },
}

#[derive(Subcommand)]
pub(crate) enum GrantsCmd {
    /// Take a grant back: from your settings, and from the conversation `--conversation ID`.
    Revoke { rule: String },
}

#[derive(Subcommand)]
pub(crate) enum RulesCmd {
    List,
    /// Add a rule, e.g. `cowork policy rules add allow 'run_command(git status:*)'`.
    Add {
        action: String,
        rule: String,
        /// Store it in the first workspace's .cowork/settings.json instead of user settings.
        #[arg(long)]
        in_workspace: bool,
        /// Add an allow rule even though it is broad (`*`, a bare `run_command`, `read_file(//**)`).
        #[arg(long)]
        force: bool,
    },
    Remove {
        rule: String,
    },
}

pub(crate) fn policy(
    app: &App,
    cmd: PolicyCmd,
    conversation: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let policy = app.scheduler().policy();
    match cmd {
        PolicyCmd::Explain { name, args } => explain(app, &name, &args, conversation, json)?,
        PolicyCmd::Rules(RulesCmd::List) => {
            print::rules(&policy.rules(Some(conversation)), &policy.problems(), json)
        }
        PolicyCmd::Rules(RulesCmd::Add {
            action,
            rule,
            in_workspace,
            force,
        }) => {
            let source = if in_workspace {
                RuleSource::Workspace
            } else {
                RuleSource::User
            };
            add_rule(policy, action.parse()?, &rule, source, force, json)?
        }
        PolicyCmd::Rules(RulesCmd::Remove { rule }) => {
            remove_rule(policy, &rule, conversation, json)?
        }
        PolicyCmd::Grants { revoke: None } => {
            print::grants(&policy.grants().map_err(|e| e.to_string())?, json)
        }
        PolicyCmd::Grants {
            revoke: Some(GrantsCmd::Revoke { rule }),
        } => remove_rule(policy, &rule, conversation, json)?,
        PolicyCmd::Mode { mode } => show_or_set_mode(policy, mode.as_deref(), json)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn explain(
    app: &App,
    name: &str,
    args: &str,
    conversation: &str,
    json: bool,
) -> Result<(), String> {
    let args = parse_args(args)?;
    let explanation = app
        .scheduler()
        .explain(name, &args, conversation, None)
        .map_err(|e| e.to_string())?;
    print::explanation(&explanation, json);
    if !json {
        print::managed(&app.scheduler().policy().managed());
    }
    Ok(())
}

fn add_rule(
    policy: &PolicyBridge,
    action: Action,
    rule: &str,
    source: RuleSource,
    force: bool,
    json: bool,
) -> Result<(), String> {
    let broad = policy.add_rule_checked(action, rule, source, force).map_err(|e| match e {
        cowork_core::PolicyError::RuleTooBroad { why, .. } => {
            format!("{} — that is broader than one tool's use; add --force if you mean it, or name what it covers (e.g. `run_command(git status:*)`, `read_file(~/Documents/**)`)", why.text)
        }
        other => other.to_string(),
    })?;
    if let Some(why) = broad {
        esay!("warning: {}", why.text);
    }
    if !json {
        say!(
            "added {} rule `{}` to {}",
            action.as_str(),
            cowork_contract::text::printable_field(rule),
            source.as_str()
        );
    }
    Ok(())
}

fn remove_rule(
    policy: &PolicyBridge,
    rule: &str,
    conversation: &str,
    json: bool,
) -> Result<(), String> {
    let removed = policy
        .remove_rule(rule, Some(conversation))
        .map_err(|e| e.to_string())?;
    if removed == 0 {
        return Err(format!(
            "no rule `{rule}` found; `cowork policy rules list` shows them"
        ));
    }
    if !json {
        say!(
            "removed `{rule}` ({removed} entr{})",
            if removed == 1 { "y" } else { "ies" }
        );
    }
    Ok(())
}

fn show_or_set_mode(policy: &PolicyBridge, mode: Option<&str>, json: bool) -> Result<(), String> {
    if let Some(mode) = mode {
        policy
            .set_mode(Mode::parse(mode)?, true)
            .map_err(|e| e.to_string())?;
    }
    let managed = policy.managed();
    if json {
        say!(
            "{}",
            serde_json::json!({"mode": policy.mode(), "managed": managed})
        );
    } else {
        say!("mode: {}", policy.mode().as_str());
        print::managed(&managed);
    }
    Ok(())
}
