//! What a shell command line does, read from its syntax tree (tree-sitter-bash), not matched as
//! text: `ls` is not `rm -rf`, `sudo nice rm x` still deletes x, `curl … | sh` runs downloaded
//! code, and a line bash would not parse is "not understood" (scored as any program).
//!
//! Which program does what is a table ([`PROGRAMS`]): what `rm` does is a fact about rm, not
//! about the line's shape, so no structure can replace it. It is kept safe by direction: a
//! program missing from it counts as "runs a program" (the score any command had before), so a
//! missing name never lowers a score. Only [`Role::Reads`] lowers one, and each reader names the
//! options that would make it write or start something (`find -exec`, `sort -o`).

use tree_sitter::{Node, Parser};

/// What one command line would do, as far as its syntax says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandFacts {
    /// The programs it starts, in order, each once (wrappers such as `sudo` included).
    pub programs: Vec<String>,
    /// What it deletes: paths as written, or what a program removes (`untracked files`).
    pub deletes: Vec<String>,
    /// Whether a deletion takes folders with everything in them.
    pub recursive: bool,
    /// Files it writes through a redirection (`> out.txt`).
    pub writes: Vec<String>,
    /// Programs that reach the network.
    pub network: Vec<String>,
    /// Programs that ask for administrator rights.
    pub privileged: Vec<String>,
    /// It runs code it reads from a pipe, a download or a string it builds (`| sh`, `eval`).
    pub runs_piped_code: bool,
    /// Every program only reads, and nothing is redirected into a file.
    pub reads_only: bool,
    /// bash would parse it, and every program's name is written out (not `$CMD`).
    pub understood: bool,
}

/// What a program is known to do.
#[derive(Clone, Copy)]
enum Role {
    /// Only reads, unless given one of these options (or, for `git`, any subcommand but these).
    Reads(&'static [&'static str]),
    /// Deletes its operands.
    Deletes,
    /// Reaches the network (with any of these subcommands; none listed: always).
    Network(&'static [&'static str]),
    /// Runs another program: options taking a value, then this many positionals to skip.
    Wrapper(&'static str, usize),
    /// Runs administrator-side: a [`Role::Wrapper`] that raises rights.
    Privilege(&'static str),
    /// A shell or interpreter: runs `-c TEXT`, a script, or what it reads on standard input.
    Shell,
}

const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];
const GIT_READS: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "blame",
    "grep",
    "describe",
    "shortlog",
    "cat-file",
    "ls-tree",
    "--version",
];
/// Options of git's reading subcommands that write a file or start a program.
const GIT_WRITING_OPTIONS: &[&str] = &[
    "--output",
    "-O",
    "--open-files-in-pager",
    "--ext-diff",
    "--exec-path",
];
const INSTALLS: &[&str] = &[
    "install",
    "i",
    "add",
    "ci",
    "update",
    "upgrade",
    "publish",
    "fetch",
    "download",
    "get",
    "clone",
    "pull",
    "push",
    "sync",
    "lock",
    "dlx",
    "create",
    "login",
    "ls-remote",
    "submodule",
];

/// Programs by name (see the module comment for why this is a table).
const PROGRAMS: &[(&str, Role)] = &[
    ("ls", Role::Reads(&[])),
    ("cd", Role::Reads(&[])),
    ("cat", Role::Reads(&[])),
    ("head", Role::Reads(&[])),
    ("tail", Role::Reads(&[])),
    ("wc", Role::Reads(&[])),
    ("grep", Role::Reads(&[])),
    ("egrep", Role::Reads(&[])),
    ("rg", Role::Reads(&["--pre"])),
    ("find", Role::Reads(FIND_ACTIONS)),
    ("pwd", Role::Reads(&[])),
    ("echo", Role::Reads(&[])),
    ("printf", Role::Reads(&["-v"])),
    ("which", Role::Reads(&[])),
    ("file", Role::Reads(&[])),
    ("stat", Role::Reads(&[])),
    ("du", Role::Reads(&[])),
    ("df", Role::Reads(&[])),
    ("tree", Role::Reads(&["-o"])),
    (
        "sort",
        Role::Reads(&["-o", "--output", "--compress-program"]),
    ),
    ("cut", Role::Reads(&[])),
    ("tr", Role::Reads(&[])),
    ("diff", Role::Reads(&[])),
    ("cmp", Role::Reads(&[])),
    ("basename", Role::Reads(&[])),
    ("dirname", Role::Reads(&[])),
    ("realpath", Role::Reads(&[])),
    ("readlink", Role::Reads(&[])),
    ("date", Role::Reads(&["-s", "--set"])),
    ("whoami", Role::Reads(&[])),
    ("uname", Role::Reads(&[])),
    ("true", Role::Reads(&[])),
    ("test", Role::Reads(&[])),
    ("[", Role::Reads(&[])),
    ("nl", Role::Reads(&[])),
    ("od", Role::Reads(&[])),
    ("md5sum", Role::Reads(&[])),
    ("sha256sum", Role::Reads(&[])),
    ("jq", Role::Reads(&[])),
    ("git", Role::Reads(GIT_READS)),
    ("rm", Role::Deletes),
    ("rmdir", Role::Deletes),
    ("unlink", Role::Deletes),
    ("shred", Role::Deletes),
    ("curl", Role::Network(&[])),
    ("wget", Role::Network(&[])),
    ("ssh", Role::Network(&[])),
    ("scp", Role::Network(&[])),
    ("sftp", Role::Network(&[])),
    ("rsync", Role::Network(&[])),
    ("nc", Role::Network(&[])),
    ("ncat", Role::Network(&[])),
    ("telnet", Role::Network(&[])),
    ("npm", Role::Network(INSTALLS)),
    ("pnpm", Role::Network(INSTALLS)),
    ("yarn", Role::Network(INSTALLS)),
    ("bun", Role::Network(INSTALLS)),
    ("npx", Role::Network(&[])),
    ("pip", Role::Network(INSTALLS)),
    ("pip3", Role::Network(INSTALLS)),
    ("uv", Role::Network(INSTALLS)),
    ("cargo", Role::Network(INSTALLS)),
    ("go", Role::Network(INSTALLS)),
    ("apt", Role::Network(INSTALLS)),
    ("apt-get", Role::Network(INSTALLS)),
    ("brew", Role::Network(INSTALLS)),
    (
        "docker",
        Role::Network(&["pull", "push", "run", "build", "login"]),
    ),
    ("sudo", Role::Privilege("ugCDhprtU")),
    ("doas", Role::Privilege("uC")),
    ("pkexec", Role::Privilege("")),
    ("su", Role::Privilege("cs")),
    ("env", Role::Wrapper("uCS", 0)),
    ("nice", Role::Wrapper("n", 0)),
    ("nohup", Role::Wrapper("", 0)),
    ("time", Role::Wrapper("fo", 0)),
    ("timeout", Role::Wrapper("sk", 1)),
    ("stdbuf", Role::Wrapper("ioe", 0)),
    ("ionice", Role::Wrapper("cnp", 0)),
    ("setsid", Role::Wrapper("", 0)),
    ("command", Role::Wrapper("", 0)),
    ("exec", Role::Wrapper("a", 0)),
    ("xargs", Role::Wrapper("IdEaLnPs", 0)),
    ("sh", Role::Shell),
    ("bash", Role::Shell),
    ("zsh", Role::Shell),
    ("dash", Role::Shell),
    ("ksh", Role::Shell),
    ("python", Role::Shell),
    ("python3", Role::Shell),
    ("perl", Role::Shell),
    ("ruby", Role::Shell),
    ("node", Role::Shell),
    ("eval", Role::Shell),
    ("source", Role::Shell),
    (".", Role::Shell),
];

fn role(program: &str) -> Option<Role> {
    let name = program.rsplit('/').next().unwrap_or(program);
    PROGRAMS.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

/// Reads what `command` would do. Nested lines (`bash -c '…'`, `$(…)`) are read too, to a
/// bounded depth.
pub fn analyze(command: &str) -> CommandFacts {
    let mut facts = CommandFacts {
        understood: true,
        reads_only: true,
        ..CommandFacts::default()
    };
    read_line(command, 0, &mut facts);
    facts.reads_only &= facts.understood
        && facts.deletes.is_empty()
        && facts.writes.is_empty()
        && facts.network.is_empty()
        && facts.privileged.is_empty()
        && !facts.runs_piped_code;
    facts
}

const MAX_DEPTH: usize = 4;

fn read_line(command: &str, depth: usize, facts: &mut CommandFacts) {
    let mut parser = Parser::new();
    let parsed = parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()
        .and_then(|()| parser.parse(ascii_shadow(command), None));
    let Some(tree) = parsed.filter(|_| depth <= MAX_DEPTH) else {
        facts.understood = false;
        return;
    };
    if tree.root_node().has_error() {
        facts.understood = false;
    }
    walk(tree.root_node(), command, depth, facts);
}

/// `command` with every non-ASCII character replaced by as many ASCII letters as it has bytes.
/// The bash grammar's C code reads past its input on some of them — `{` then a 4-byte character
/// kills the process (tree-sitter-bash issue 337) — so the parser never sees one: every shell
/// metacharacter is ASCII, a non-ASCII character can only be part of a word, and a letter keeps
/// it one. Byte offsets are unchanged, so the nodes' ranges still index `command`.
fn ascii_shadow(command: &str) -> Vec<u8> {
    command
        .bytes()
        .map(|b| if b.is_ascii() { b } else { b'a' })
        .collect()
}

/// The text of `node`, widened to whole characters should a range ever end inside one (the
/// parser read letters where `src` has a longer character).
fn text_of<'a>(node: Node, src: &'a str) -> &'a str {
    let range = node.byte_range();
    &src[src.floor_char_boundary(range.start)..src.ceil_char_boundary(range.end)]
}

/// Every node below `node`: commands, redirections and pipelines are read where they stand.
fn walk(node: Node, src: &str, depth: usize, facts: &mut CommandFacts) {
    match node.kind() {
        "command" => read_command(node, src, depth, false, facts),
        "file_redirect" => read_redirect(node, src, facts),
        "pipeline" => {
            let mut cursor = node.walk();
            for (i, stage) in node.named_children(&mut cursor).enumerate() {
                match stage.kind() {
                    "command" => read_command(stage, src, depth, i > 0, facts),
                    _ => walk(stage, src, depth, facts),
                }
            }
            return;
        }
        "function_definition" => facts.reads_only = false,
        _ => {}
    }
    if node.kind() == "command" {
        return;
    }
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        walk(child, src, depth, facts);
    }
}

/// `> file`, `>> file`, `&> file`: a write unless it goes nowhere (`/dev/null`) or to a stream.
fn read_redirect(node: Node, src: &str, facts: &mut CommandFacts) {
    let Some(dest) = node.child_by_field_name("destination") else {
        return;
    };
    let operator = node
        .children(&mut node.walk())
        .find(|c| !c.is_named())
        .map_or("", |c| text_of(c, src));
    if operator.starts_with('<') || operator.ends_with('&') {
        // Input, or a descriptor copied (`2>&1`).
        return;
    }
    match word(dest, src) {
        Some(path) if path.starts_with("/dev/") => {}
        Some(path) => facts.writes.push(path),
        None => facts.writes.push(text_of(dest, src).to_string()),
    }
}

/// A word's text as bash would see it, when it is fixed (quotes removed); `None` when it
/// depends on an expansion.
fn word(node: Node, src: &str) -> Option<String> {
    let text = text_of(node, src);
    match node.kind() {
        "word" | "number" => Some(text.replace('\\', "")),
        "raw_string" => Some(text.trim_matches('\'').to_string()),
        "string"
            if node.named_child_count() == 0
                || node
                    .named_children(&mut node.walk())
                    .all(|c| c.kind() == "string_content") =>
        {
            Some(text.trim_matches('"').to_string())
        }
        "concatenation" => node
            .named_children(&mut node.walk())
            .map(|c| word(c, src))
            .collect(),
        _ => None,
    }
}

/// A simple command: its words, with any expansions inside read too.
fn read_command(node: Node, src: &str, depth: usize, piped: bool, facts: &mut CommandFacts) {
    let mut words: Vec<Option<String>> = Vec::new();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "variable_assignment" => walk(child, src, depth, facts),
            "file_redirect" | "herestring_redirect" => walk(child, src, depth, facts),
            "command_name" => {
                let inner = child.named_child(0).unwrap_or(child);
                words.push(word(inner, src));
                walk(inner, src, depth, facts);
            }
            _ => {
                words.push(word(child, src));
                walk(child, src, depth, facts);
            }
        }
    }
    run_words(&words, depth, piped, facts);
}

/// What the program named by `words[0]` does with the rest (wrappers unwrapped).
fn run_words(words: &[Option<String>], depth: usize, piped: bool, facts: &mut CommandFacts) {
    let Some(first) = words.first() else { return };
    let Some(program) = first.clone() else {
        // `$CMD args`: which program runs is decided when it runs.
        facts.understood = false;
        return;
    };
    let name = program.rsplit('/').next().unwrap_or(&program).to_string();
    if !facts.programs.contains(&name) {
        facts.programs.push(name.clone());
    }
    let args = &words[1..];
    match role(&program) {
        None => facts.reads_only = false,
        Some(Role::Reads(blocked)) => read_only_unless(&name, args, blocked, facts),
        Some(Role::Deletes) => {
            facts.recursive |= args.iter().flatten().any(|a| is_recursive_flag(a));
            let targets = operands(args);
            if targets.is_empty() {
                // `… | xargs rm`: what it is given on its input.
                facts.deletes.push("the files it is given".into());
            }
            facts.deletes.extend(targets);
        }
        Some(Role::Network(subcommands)) => {
            let sub = operands(args).into_iter().next().unwrap_or_default();
            if subcommands.is_empty() || subcommands.contains(&sub.as_str()) {
                facts.network.push(name);
            } else {
                facts.reads_only = false;
            }
        }
        Some(Role::Privilege(valued)) => {
            facts.privileged.push(name);
            run_words(&unwrap(args, valued, 0), depth, piped, facts);
        }
        Some(Role::Wrapper(valued, skip)) => {
            run_words(&unwrap(args, valued, skip), depth, piped, facts)
        }
        Some(Role::Shell) => run_shell(&name, args, depth, piped, facts),
    }
}

fn is_recursive_flag(arg: &str) -> bool {
    arg == "--recursive"
        || (arg.starts_with('-') && !arg.starts_with("--") && arg.contains(['r', 'R']))
}

/// The words that are not options (after `--`, everything).
fn operands(args: &[Option<String>]) -> Vec<String> {
    let mut out = Vec::new();
    let mut options = true;
    for arg in args {
        let Some(arg) = arg else {
            out.push("(a name decided when it runs)".into());
            continue;
        };
        if options && arg == "--" {
            options = false;
        } else if !(options && arg.starts_with('-') && arg.len() > 1) {
            out.push(arg.clone());
        }
    }
    out
}

/// A reader stays one unless an option (or, for git, the subcommand) says otherwise; `git
/// clean` deletes untracked files.
fn read_only_unless(
    name: &str,
    args: &[Option<String>],
    blocked: &[&str],
    facts: &mut CommandFacts,
) {
    let texts: Vec<&str> = args.iter().flatten().map(String::as_str).collect();
    if name == "git" {
        let sub = texts.iter().find(|a| !a.starts_with('-')).copied();
        match sub {
            Some("clean") => {
                facts.deletes.push("untracked files".into());
                facts.recursive |= texts.iter().any(|a| a.starts_with('-') && a.contains('d'));
            }
            Some("push" | "pull" | "fetch" | "clone" | "ls-remote" | "submodule") => {
                facts.network.push("git".into())
            }
            Some(sub) if blocked.contains(&sub) => {}
            _ => facts.reads_only = false,
        }
        if args.iter().any(Option::is_none)
            || texts
                .iter()
                .any(|a| GIT_WRITING_OPTIONS.iter().any(|o| gives_option(a, o)))
        {
            facts.reads_only = false;
        }
        return;
    }
    let blocked_given = texts
        .iter()
        .any(|a| blocked.iter().any(|o| gives_option(a, o)));
    // A word decided when it runs could be one of the blocked options.
    let dynamic = !blocked.is_empty() && args.iter().any(Option::is_none);
    if blocked_given || dynamic {
        facts.reads_only = false;
    }
}

/// Whether `arg` gives option `option`: itself, `--opt=value`, `-ovalue`, or a cluster of
/// one-letter options holding it (`-uo`).
fn gives_option(arg: &str, option: &str) -> bool {
    if arg == option || arg.starts_with(&format!("{option}=")) {
        return true;
    }
    match option.strip_prefix('-').filter(|o| o.len() == 1) {
        Some(letter) => arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(letter),
        None => false,
    }
}

/// The wrapped command's words: the wrapper's options (and the values of `valued` ones) and
/// `skip` positionals dropped, and `VAR=value` settings (for `env`).
fn unwrap(args: &[Option<String>], valued: &str, skip: usize) -> Vec<Option<String>> {
    let mut i = 0;
    let mut skipped = 0;
    while let Some(Some(arg)) = args.get(i) {
        if arg == "--" {
            i += 1;
            break;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            let last = arg.chars().last().unwrap_or('-');
            let takes_value = !arg.starts_with("--") && arg.len() == 2 && valued.contains(last);
            i += if takes_value { 2 } else { 1 };
        } else if arg.contains('=') && !arg.starts_with('=') {
            i += 1;
        } else if skipped < skip {
            skipped += 1;
            i += 1;
        } else {
            break;
        }
    }
    args.get(i..).unwrap_or(&[]).to_vec()
}

/// A shell or interpreter: `-c TEXT` is read as a line of its own; reading a pipe, a process
/// substitution or `eval`'s built text runs code this line does not show.
fn run_shell(
    name: &str,
    args: &[Option<String>],
    depth: usize,
    piped: bool,
    facts: &mut CommandFacts,
) {
    facts.reads_only = false;
    if name == "eval" {
        match args.iter().map(Clone::clone).collect::<Option<Vec<_>>>() {
            Some(text) => read_line(&text.join(" "), depth + 1, facts),
            None => facts.runs_piped_code = true,
        }
        return;
    }
    if let Some(at) = args.iter().position(|a| a.as_deref() == Some("-c")) {
        match args.get(at + 1) {
            Some(Some(text)) if matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh") => {
                read_line(text, depth + 1, facts)
            }
            Some(Some(_)) => {}
            _ => facts.runs_piped_code = true,
        }
        return;
    }
    let script = operands(args).into_iter().next();
    let from_stdin = script
        .as_deref()
        .is_none_or(|s| s == "-" || s == "/dev/stdin");
    if (piped && from_stdin) || args.iter().any(Option::is_none) {
        facts.runs_piped_code = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_deletions_downloads_and_rights_from_the_tree() {
        let ls = analyze("ls -la && git status --short | head -5");
        assert!(ls.reads_only && ls.understood, "{ls:?}");
        let rm = analyze("rm -rf ./build ./node_modules/.cache && git clean -fdx");
        assert_eq!(
            rm.deletes,
            ["./build", "./node_modules/.cache", "untracked files"]
        );
        assert!(rm.recursive && !rm.reads_only);
        let wrapped = analyze("sudo -u root nice -n 5 timeout 10 rm 'my file.txt'");
        assert_eq!(wrapped.deletes, ["my file.txt"]);
        assert_eq!(wrapped.privileged, ["sudo"]);
        let piped = analyze("curl -fsSL https://x.example/install.sh | sh");
        assert!(
            piped.runs_piped_code && piped.network == ["curl"],
            "{piped:?}"
        );
        let nested = analyze("bash -c 'cd /tmp && rm -r old'");
        assert_eq!(nested.deletes, ["old"]);
        let substituted = analyze("bash -c \"$(curl -s x.example)\"");
        assert!(substituted.runs_piped_code && substituted.network == ["curl"]);
        let xargs = analyze("find . -name '*.o' | xargs rm -f");
        assert_eq!(xargs.deletes, ["the files it is given"]);
        assert!(!analyze("find . -name x -delete").reads_only);
        assert!(!analyze("sort -uo out.txt in.txt").reads_only);
        assert!(!analyze("sort --compress-program=./x big.txt").reads_only);
        assert!(!analyze("git --exec-path=./bin status").reads_only);
        assert!(!analyze("git -c core.pager=./x log").reads_only);
        assert!(!analyze("git log --output=.git/config").reads_only);
        assert_eq!(analyze("cat a > b.txt 2>&1").writes, ["b.txt"]);
        assert!(analyze("grep x a 2>/dev/null").reads_only);
        assert!(!analyze("$CMD -rf /").understood);
        assert!(!analyze("ls ((( ").understood);
        assert!(!analyze("make test").reads_only);
    }
}
