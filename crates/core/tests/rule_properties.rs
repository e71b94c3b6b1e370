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
        ..Default::default()
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

/// Rules judged by where they reach and what they run, not by how they are written.
mod by_meaning {
    use cowork_contract::{EffectEnv, EffectKind};
    use cowork_core::policy::Rule;
    use cowork_core::policy::rules::COMMAND_RUNNERS;
    use proptest::prelude::*;
    use std::path::PathBuf;

    fn env() -> EffectEnv {
        EffectEnv {
            workspace_roots: vec![PathBuf::from("/nonexistent-top/ws")],
            home: Some(PathBuf::from("/nonexistent-top/home/u")),
            ..Default::default()
        }
    }

    const FILES: &[EffectKind] = &[EffectKind::FsRead];
    const EXEC: &[EffectKind] = &[EffectKind::ProcessExec];

    fn broad(rule: &str, kinds: &[EffectKind]) -> bool {
        Rule::parse(rule).unwrap().breadth(kinds, &env()).is_some()
    }

    /// A way of writing "the root", "the home folder" or "above the workspace".
    fn wide_prefix() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("/".to_string()),
            Just("//".to_string()),
            "[a-z]{1,6}".prop_map(|d| format!("/{d}/../")),
            "[a-z]{1,6}".prop_map(|d| format!("/tmp/{d}/../../")),
            (1usize..5).prop_map(|n| "../".repeat(n)),
            Just("~/".to_string()),
            Just("~/../".to_string()),
            "[a-z]{1,6}".prop_map(|d| format!("~/{d}/../")),
            Just("/?*/".to_string()),
            Just("/[a-z]*/".to_string()),
            Just("./../".to_string()),
        ]
    }

    proptest! {
        #[test]
        fn a_path_rule_reaching_the_root_home_or_above_the_workspace_is_broad(
            prefix in wide_prefix(),
            tail in prop::sample::select(vec!["**", "**/*", "*", "**/*.md"]),
            tool in prop::sample::select(vec!["read_file", "write_file"]),
        ) {
            let rule = format!("{tool}({prefix}{tail})");
            prop_assert!(broad(&rule, FILES), "{rule} was judged narrow");
        }

        #[test]
        fn a_path_rule_inside_the_workspace_or_a_named_folder_is_not(
            folders in prop::collection::vec("[a-z]{1,6}", 1..3),
            tail in prop::sample::select(vec!["**", "*.rs", "**/*.md"]),
            anchor in prop::sample::select(vec!["", "./", "~/Documents/", "/etc/"]),
        ) {
            let rule = format!("read_file({anchor}{}/{tail})", folders.join("/"));
            prop_assert!(!broad(&rule, FILES), "{rule} was judged broad");
        }

        /// Any runner, named by path or not, with any fixed arguments: still any command.
        #[test]
        fn a_command_runner_prefix_is_broad(
            runner in prop::sample::select(COMMAND_RUNNERS.to_vec()),
            dir in prop::sample::select(vec!["", "/usr/bin/", "/bin/", "./"]),
            args in prop::collection::vec("-?[a-z]{1,5}", 0..3),
        ) {
            let rule = format!("run_command({dir}{runner} {}:*)", args.join(" "));
            prop_assert!(broad(&rule, EXEC), "{rule} was judged narrow");
        }

        /// A file tool with no specifier reaches every file; git's program-running subcommands
        /// and versioned interpreters, with any arguments, run any command.
        #[test]
        fn bare_file_rules_and_git_runner_subcommands_are_broad(
            tool in prop::sample::select(vec!["read_file", "write_file", "Read", "edit_file"]),
            sub in prop::sample::select(vec!["grep", "fetch", "pull", "clone", "ls-remote", "push"]),
            version in prop::sample::select(vec!["", "3", "3.12"]),
        ) {
            prop_assert!(broad(tool, FILES), "{tool}");
            let git = format!("run_command(git {sub}:*)");
            prop_assert!(broad(&git, EXEC), "{git}");
            let python = format!("run_command(python{version}:*)");
            prop_assert!(broad(&python, EXEC), "{python}");
        }

        #[test]
        fn git_without_a_subcommand_and_find_are_broad(
            options in prop::collection::vec("-[a-zC]{1,3}", 0..3),
            find_args in prop::collection::vec("[a-z.]{1,5}", 0..3),
        ) {
            let git = format!("run_command(git {}:*)", options.join(" "));
            prop_assert!(broad(&git, EXEC), "{git}");
            let find = format!("run_command(find {}:*)", find_args.join(" "));
            prop_assert!(broad(&find, EXEC), "{find}");
            let status = format!("run_command(git {} status:*)", options.join(" "));
            prop_assert!(!broad(&status, EXEC), "{status}: a fixed subcommand is narrow");
        }

        /// `:*` anywhere but the end, or a path ending in `/`, can match nothing: refused.
        #[test]
        fn rules_that_can_never_match_are_caught(
            program in "[a-z]{2,6}",
            after in prop::collection::vec("-?[a-z]{1,5}", 1..3),
            folder in "[a-z]{1,8}",
        ) {
            let misplaced = format!("run_command({program}:* {})", after.join(" "));
            prop_assert!(Rule::parse(&misplaced).unwrap().check(Some(EXEC)).is_err(), "{misplaced}");
            let slash = format!("read_file({folder}/**/)");
            prop_assert!(Rule::parse(&slash).unwrap().check(Some(FILES)).is_err(), "{slash}");
            let fine = format!("run_command({program} {}:*)", after.join(" "));
            prop_assert!(Rule::parse(&fine).unwrap().check(Some(EXEC)).is_ok(), "{fine}");
            let fine = format!("read_file({folder}/**)");
            prop_assert!(Rule::parse(&fine).unwrap().check(Some(FILES)).is_ok(), "{fine}");
        }
    }

    /// Every kind of breadth warning is said in Chinese too: the window shows it before a
    /// person grants the rule, so it must be read in their language (`ui/src/i18n.ts`).
    #[test]
    fn every_breadth_warning_has_a_chinese_phrase() {
        let i18n = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/i18n.ts"),
        )
        .unwrap();
        let cases: &[(&str, &[EffectKind])] = &[
            ("*", FILES),
            ("mcp__*", FILES),
            ("read_file", FILES),
            ("run_command", EXEC),
            ("read_file(//**)", FILES),
            ("read_file(~/**)", FILES),
            ("read_file(/nonexistent-home/**)", FILES),
            ("read_file(../**)", FILES),
            ("run_command(:*)", EXEC),
            ("run_command(bash:*)", EXEC),
            ("run_command(find:*)", EXEC),
            ("run_command(git:*)", EXEC),
            ("run_command(git fetch:*)", EXEC),
        ];
        // The workspace away from home, so that "above the workspace" is not above home too.
        let env = EffectEnv {
            workspace_roots: vec![PathBuf::from("/nonexistent-srv/team/ws")],
            home: Some(PathBuf::from("/nonexistent-home/u")),
            ..Default::default()
        };
        let mut keys = std::collections::BTreeSet::new();
        for (rule, kinds) in cases {
            let why = Rule::parse(rule).unwrap().breadth(kinds, &env);
            let why = why.unwrap_or_else(|| panic!("{rule} was judged narrow"));
            assert!(why.text.contains(rule), "{rule}: {}", why.text);
            keys.insert(why.key);
        }
        assert_eq!(
            keys.len(),
            cases.len(),
            "one case per kind of warning: {keys:?}"
        );
        for key in keys {
            assert!(
                i18n.contains(&format!("\"{key}\":")),
                "{key} has no Chinese phrase in ui/src/i18n.ts"
            );
        }
    }
}
