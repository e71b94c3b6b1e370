//! Properties of rule matching that must hold for every input, not just the table of tricky
//! cases in rules.rs.

use cowork_contract::{Effect, EffectEnv};
use cowork_core::policy::{Action, CallFacts, Rule};
use proptest::prelude::*;
use std::path::{Component, PathBuf};

fn env() -> EffectEnv {
    EffectEnv {
        workspace_roots: vec![PathBuf::from("/nonexistent-ws")],
        home: Some(PathBuf::from("/nonexistent-home/u")),
    }
}

fn matches(rule: &str, action: Action, tool: &str, effect: Effect) -> bool {
    let env = env();
    let effects = [effect];
    Rule::parse(rule).unwrap().matches(
        action,
        &CallFacts {
            tool,
            aliases: &[],
            effects: &effects,
            env: &env,
        },
    )
}

fn exec(command: String) -> Effect {
    Effect::ProcessExec {
        command,
        workspace_code: vec![],
    }
}

proptest! {
    /// No suffix containing a shell metacharacter can ride on an allowed prefix.
    #[test]
    fn an_allowed_prefix_never_admits_a_second_command(
        middle in "[ a-z0-9./-]{0,12}",
        meta in prop::sample::select(vec![";", "&&", "||", "|", "&", "$(", "`", ">", "<", "\n", "${"]),
        tail in "[ a-z0-9./~-]{0,16}",
    ) {
        let command = format!("git status{middle}{meta}{tail}");
        prop_assert!(!matches("run_command(git status:*)", Action::Allow, "run_command", exec(command)));
    }

    /// A denied program is found wherever it hides in a chain or behind a wrapper or a path.
    #[test]
    fn a_denied_program_is_found_anywhere(
        before in "[a-z]{1,8}( [a-z0-9-]{1,6}){0,2}",
        sep in prop::sample::select(vec!["; ", " && ", " || ", " | ", " & ", " $(", " `", "\n", " sudo ", " env ", " /usr/bin/"]),
        args in "( [a-z0-9/~.-]{1,8}){0,3}",
    ) {
        let command = format!("{before}{sep}rm{args}");
        prop_assert!(matches("run_command(rm:*)", Action::Deny, "run_command", exec(command)));
    }

    /// A path allow rule matches exactly the paths that, once `..` is resolved, lie under it.
    #[test]
    fn path_rules_follow_the_resolved_path(segments in prop::collection::vec(prop::sample::select(vec!["Documents", "..", "a", ".", "secret", ".ssh", "b.txt"]), 1..8)) {
        let raw = format!("~/{}", segments.join("/"));
        let resolved = env().resolve_path(&raw);
        let allowed = matches("read_file(~/Documents/**)", Action::Allow, "read_file", Effect::FsRead { path: resolved.display().to_string() });
        let under_documents = resolved.strip_prefix("/nonexistent-home/u/Documents").is_ok_and(|rest| rest.components().next().is_some());
        prop_assert_eq!(allowed, under_documents, "{} → {}", raw, resolved.display());
        prop_assert!(!resolved.components().any(|c| c == Component::ParentDir));
    }

    /// An allow rule for some recipients never covers a message that also goes elsewhere.
    #[test]
    fn mail_allow_covers_all_recipients_or_nothing(users in prop::collection::vec("[a-z]{1,6}", 1..4), outsider in "[a-z]{1,6}@[a-z]{1,6}\\.(com|net|io)") {
        let mut recipients: Vec<String> = users.iter().map(|u| format!("{u}@mycompany.com")).collect();
        let rule = "email_send(*@mycompany.com)";
        let send = |to: Vec<String>| Effect::MailSend { account: "work".into(), recipients: to };
        prop_assert!(matches(rule, Action::Allow, "email_send", send(recipients.clone())));
        prop_assume!(!outsider.ends_with("@mycompany.com"));
        recipients.push(outsider);
        prop_assert!(!matches(rule, Action::Allow, "email_send", send(recipients)));
    }
}
