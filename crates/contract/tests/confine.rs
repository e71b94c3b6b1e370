//! The one confinement every program Cowork starts runs in, tried with a real bubblewrap on
//! generated layouts: whatever the names and wherever the workspace lies, nothing of the home
//! folder shows that was not granted, configuration in a writable grant stays read-only,
//! credentials inside a grant do not show, and nothing set for the program reaches the launcher.

use cowork_contract::confine::{self, Confinement};
use proptest::prelude::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn require_bubblewrap() {
    assert!(
        confine::available(),
        "bubblewrap must be able to run here (tests/setup.sh installs it)"
    );
}

/// Runs a shell script confined; (succeeded, stdout + stderr).
fn run(jail: &Confinement, script: &str) -> (bool, String) {
    said(&mut jail.command("/bin/sh", &["-c", script]).command)
}

/// Runs a shell script in `dir` with no sandbox, as a run does where bubblewrap is missing: what
/// the check after a run must still catch.
fn run_unconfined(dir: &Path, script: &str) -> (bool, String) {
    said(
        std::process::Command::new("/bin/sh")
            .args(["-c", script])
            .current_dir(dir),
    )
}

/// Whether a program succeeded, and what it printed (stdout, then stderr).
fn said(command: &mut std::process::Command) -> (bool, String) {
    let out = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[derive(Clone, Copy, Debug)]
enum Place {
    /// The workspace is a folder in the home folder.
    InHome,
    /// The workspace is the home folder itself.
    IsHome,
    /// The workspace lies outside the home folder.
    Outside,
    /// As InHome, but the home folder is named through a symlink.
    ViaSymlink,
}

struct Layout {
    _root: tempfile::TempDir,
    home: PathBuf,
    /// The home folder as the caller names it (maybe a symlink).
    home_arg: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
}

fn layout(place: Place) -> Layout {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let home = base.join("home/u");
    let outside = base.join("elsewhere");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let ws = match place {
        Place::InHome | Place::ViaSymlink => home.join("projects/app"),
        Place::IsHome => home.clone(),
        Place::Outside => base.join("work/app"),
    };
    std::fs::create_dir_all(&ws).unwrap();
    let home_arg = match place {
        Place::ViaSymlink => {
            let link = base.join("home-link");
            std::os::unix::fs::symlink(&home, &link).unwrap();
            link
        }
        _ => home.clone(),
    };
    Layout {
        _root: root,
        home,
        home_arg,
        ws,
        outside,
    }
}

/// A file or a folder holding one file, with `marker` as content.
fn plant(path: &Path, as_dir: bool, marker: &str) -> PathBuf {
    if as_dir {
        std::fs::create_dir_all(path).unwrap();
        let file = path.join("inside");
        std::fs::write(&file, marker).unwrap();
        file
    } else {
        std::fs::write(path, marker).unwrap();
        path.to_path_buf()
    }
}

fn jail_for(l: &Layout) -> Confinement {
    Confinement::new(&l.ws).write(&l.ws).home(&l.home_arg)
}

/// Runs git in `dir` as the person would outside the sandbox (with an identity for commits);
/// it must succeed.
fn git_ok(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@x")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@x")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// What the home folder holds under any dot name never shows; what lies outside the grants
    /// never shows; the workspace's own dot entries cannot be changed; ordinary files can.
    #[test]
    fn only_grants_show_and_configuration_stays_read_only(
        // A map: one name is one entry (a name drawn twice, once a folder and once a file,
        // cannot be planted both ways).
        home_dots in prop::collection::btree_map("\\.[a-zA-Z0-9_-]{1,10}", any::<bool>(), 1..4),
        ws_dot in ("\\.[a-zA-Z0-9_-]{1,10}", any::<bool>()),
        place in prop::sample::select(vec![Place::InHome, Place::IsHome, Place::Outside, Place::ViaSymlink]),
    ) {
        require_bubblewrap();
        let l = layout(place);
        let marker = "SECRET-4d1f";
        let mut hidden = Vec::new();
        for (name, as_dir) in &home_dots {
            hidden.push(plant(&l.home.join(name), *as_dir, marker));
        }
        hidden.push(plant(&l.outside.join("notes"), false, marker));
        if !matches!(place, Place::IsHome) {
            hidden.push(plant(&l.home.join("Documents"), true, marker));
        }
        let (ws_name, ws_as_dir) = &ws_dot;
        // Where the workspace is the home, its dot entry must not be one of the home's.
        prop_assume!(!(l.ws == l.home && home_dots.contains_key(ws_name)));
        let protected = plant(&l.ws.join(ws_name), *ws_as_dir, "config");
        let jail = jail_for(&l);

        for path in &hidden {
            let (_, out) = run(&jail, &format!("cat {} 2>/dev/null", sh_quote(path)));
            prop_assert!(!out.contains(marker), "{} showed inside: {out}", path.display());
        }
        let target = if *ws_as_dir { protected.parent().unwrap().join("planted") } else { protected.clone() };
        let (wrote, out) = run(&jail, &format!("echo planted >> {}", sh_quote(&target)));
        prop_assert!(!wrote, "{} could be changed: {out}", target.display());
        prop_assert_eq!(std::fs::read_to_string(&protected).unwrap(), "config");
        prop_assert!(!target.exists() || !*ws_as_dir);

        let ordinary = l.ws.join("notes.txt");
        let (wrote, out) = run(&jail, &format!("echo done > {}", sh_quote(&ordinary)));
        prop_assert!(wrote, "an ordinary workspace file could not be written: {out}");
        prop_assert_eq!(std::fs::read_to_string(&ordinary).unwrap(), "done\n");
    }

    /// Whatever the caller sets for the program — PATH, the loader's variables, anything — is
    /// set inside the sandbox only: the launcher is bubblewrap by absolute path with nothing set.
    #[test]
    fn nothing_set_for_the_program_reaches_the_launcher(
        vars in prop::collection::vec((
            prop::sample::select(vec!["PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "BWRAP", "HOME", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"]),
            "[a-zA-Z0-9/._-]{0,20}",
        ), 1..5),
    ) {
        require_bubblewrap();
        let l = layout(Place::InHome);
        let jail = jail_for(&l).envs(vars.clone());
        let launch = jail.command("/bin/true", &[] as &[&str]);
        prop_assert!(launch.confined);
        prop_assert!(Path::new(launch.command.get_program()).is_absolute());
        prop_assert_eq!(launch.command.get_envs().count(), 0, "the launcher's environment is empty");
        let args: Vec<String> = launch.command.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        let clear = args.iter().position(|a| a == "--clearenv").unwrap();
        for (key, _) in &vars {
            let set = args.windows(2).position(|w| w[0] == "--setenv" && w[1] == *key);
            prop_assert!(set.is_some_and(|i| i > clear), "{key} is set inside, after --clearenv");
        }
    }
}

#[test]
fn a_fake_bubblewrap_on_path_is_never_started() {
    require_bubblewrap();
    let l = layout(Place::InHome);
    let fake = l.outside.join("bin");
    std::fs::create_dir_all(&fake).unwrap();
    let canary = l.outside.join("fake-ran");
    let script = fake.join("bwrap");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", sh_quote(&canary))).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let jail = jail_for(&l).env("PATH", fake.as_os_str());
    let (ok, out) = run(&jail, "echo $PATH");
    assert!(ok, "{out}");
    assert_eq!(
        out.trim(),
        fake.display().to_string(),
        "PATH is the program's"
    );
    assert!(!canary.exists(), "the launcher was not looked up on PATH");
}

#[test]
fn no_network_and_no_sockets_unless_granted() {
    require_bubblewrap();
    let l = layout(Place::InHome);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let socket_dir = tempfile::tempdir().unwrap();
    let socket = socket_dir.path().join("agent.sock");
    let _unix = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port}");
    let probe = |jail: &Confinement, script: &str| {
        let out = jail
            .command("/bin/bash", &["-c", script])
            .command
            .output()
            .unwrap();
        out.status.success()
    };
    let closed = jail_for(&l);
    assert!(!probe(&closed, &connect), "loopback is out of reach");
    assert!(
        !probe(&closed, &format!("test -S {}", sh_quote(&socket))),
        "a socket of the machine does not show"
    );
    assert!(!probe(
        &closed,
        "ls /run/user /var/run/dbus 2>/dev/null | grep -q ."
    ));
    let open = jail_for(&l).network(true);
    assert!(probe(&open, &connect), "a network grant reaches loopback");
}

/// A git directory is read-only inside: git reads (status, log, diff) work, git's writes fail
/// and are the `git` tool's, and nothing can be planted for git to run.
#[test]
fn a_git_directory_is_read_only_inside_and_reading_it_works() {
    require_bubblewrap();
    let l = layout(Place::InHome);
    git_ok(&l.ws, &["init", "-q"]);
    std::fs::write(l.ws.join("a.txt"), "a").unwrap();
    let jail = jail_for(&l)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@x")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@x");
    git_ok(&l.ws, &["add", "a.txt"]);
    git_ok(
        &l.ws,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "commit",
            "-q",
            "-m",
            "one",
        ],
    );
    std::fs::write(l.ws.join("a.txt"), "b").unwrap();
    let (ok, out) = run(
        &jail,
        "git status --short && git log --oneline && git diff --stat",
    );
    assert!(
        ok && out.contains("one") && out.contains("M a.txt"),
        "git reads inside: {out}"
    );
    let (ok, out) = run(&jail, "git add a.txt");
    assert!(!ok && out.contains("Read-only"), "git writes inside: {out}");
    for plant in [
        "git config core.fsmonitor 'touch /tmp/x'",
        "echo '[core] fsmonitor = touch x' >> .git/config",
        "echo 'touch x' > .git/hooks/pre-commit",
        "echo '* filter=x' > .git/info/attributes",
    ] {
        let (ok, out) = run(&jail, plant);
        assert!(!ok, "{plant} changed git's programs: {out}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// What is hidden stays hidden whatever the grants (above it, at it, inside it); only the
    /// program's own folders show from inside it.
    #[test]
    fn a_hidden_folder_wins_over_every_grant_but_the_programs_own(
        grant_depth in 0usize..3,
        writable in any::<bool>(),
    ) {
        require_bubblewrap();
        let l = layout(Place::InHome);
        let hidden = l.outside.join("cowork-data");
        let own = hidden.join("packs/p");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(hidden.join("cowork.db"), "SECRET-db").unwrap();
        std::fs::create_dir_all(hidden.join("packs/other")).unwrap();
        std::fs::write(hidden.join("packs/other/x"), "SECRET-other").unwrap();
        std::fs::write(own.join("server.js"), "own code").unwrap();
        let grant = match grant_depth {
            0 => l.outside.clone(),
            1 => hidden.clone(),
            _ => hidden.join("packs/other"),
        };
        let jail = Confinement::new(&own).hide(&hidden).own(&own, false);
        let jail = if writable { jail.write(&grant) } else { jail.read(&grant) };
        let (_, out) = run(&jail, &format!(
            "cat {} {} 2>/dev/null; cat {}",
            sh_quote(&hidden.join("cowork.db")),
            sh_quote(&hidden.join("packs/other/x")),
            sh_quote(&own.join("server.js")),
        ));
        prop_assert!(!out.contains("SECRET"), "hidden content showed: {out}");
        prop_assert!(out.contains("own code"), "the program's own folder shows: {out}");
    }
}

/// Every configuration key git itself lists (`git help --config`), placeholders named.
fn git_config_keys() -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["help", "--config"])
        .output()
        .expect("git is installed");
    let text = String::from_utf8_lossy(&out.stdout);
    let keys: Vec<String> = text
        .lines()
        .map(|k| k.trim().replace(['<', '>'], "").replace('*', "x"))
        .filter(|k| k.contains('.') && !k.contains(' '))
        .collect();
    assert!(keys.len() > 500, "git listed only {} keys", keys.len());
    keys
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A repository whose configuration sets any key git knows to a planted program: git run
    /// inside the confinement (trusted or not) may run it, but it reaches nothing outside the
    /// workspace and cannot change git's own configuration.
    #[test]
    fn a_planted_program_under_any_git_key_stays_inside(
        key in prop::sample::select(git_config_keys()),
        command in prop::sample::select(vec!["status", "diff", "log -1", "add -A", "commit -qm x"]),
    ) {
        require_bubblewrap();
        let l = layout(Place::InHome);
        let git = |args: &[&str]| {
            std::process::Command::new("git").args(args).current_dir(&l.ws).output().unwrap()
        };
        git(&["init", "-q"]);
        std::fs::write(l.ws.join("a.txt"), "a\n").unwrap();
        let escaped = l.outside.join("escaped");
        let planted = format!(
            "sh -c 'touch {}; echo \"[core] fsmonitor = x\" >> .git/config; touch ran' --",
            escaped.display()
        );
        let set = git(&["config", &key, &planted]);
        prop_assume!(set.status.success());
        let before = std::fs::read(l.ws.join(".git/config")).unwrap();
        let jail = jail_for(&l)
            .env("GIT_AUTHOR_NAME", "t").env("GIT_AUTHOR_EMAIL", "t@x")
            .env("GIT_COMMITTER_NAME", "t").env("GIT_COMMITTER_EMAIL", "t@x");
        let _ = run(&jail, &format!("timeout 10 git {command} </dev/null"));
        prop_assert!(!escaped.exists(), "{key}: a planted program reached outside the workspace");
        prop_assert_eq!(
            std::fs::read(l.ws.join(".git/config")).unwrap(), before,
            "{}: git's configuration changed", key
        );
    }
}

/// The generated test's plant is live: under `core.fsmonitor` git runs it (it leaves its mark
/// in the workspace), and still nothing outside and no configuration changes.
#[test]
fn a_planted_fsmonitor_runs_inside_and_nowhere_else() {
    require_bubblewrap();
    let l = layout(Place::InHome);
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(&l.ws)
            .output()
            .unwrap()
    };
    git(&["init", "-q"]);
    std::fs::write(l.ws.join("a.txt"), "a\n").unwrap();
    let escaped = l.outside.join("escaped");
    let planted = format!(
        "sh -c 'touch {}; echo x >> .git/config; touch ran' --",
        escaped.display()
    );
    assert!(
        git(&["config", "core.fsmonitor", &planted])
            .status
            .success()
    );
    let before = std::fs::read(l.ws.join(".git/config")).unwrap();
    let _ = run(&jail_for(&l), "git status");
    assert!(l.ws.join("ran").exists(), "the plant ran (inside)");
    assert!(!escaped.exists(), "nothing outside");
    assert_eq!(std::fs::read(l.ws.join(".git/config")).unwrap(), before);
}

/// A link planted among a git directory's protected parts must not make the sandbox mount what
/// it points at (the home folder, the machine's root): the git directory goes read-only whole.
#[test]
fn a_link_among_git_parts_is_never_bound_through() {
    require_bubblewrap();
    for (part, target) in [
        ("modules/x/hooks", "../../../.."),
        ("modules/y/info", "../../../../../../../../../../.."),
        ("config.worktree", "../../../.ssh/id_rsa"),
    ] {
        let l = layout(Place::InHome);
        std::fs::create_dir_all(l.home.join(".ssh")).unwrap();
        std::fs::write(l.home.join(".ssh/id_rsa"), "SECRET-key").unwrap();
        git_ok(&l.ws, &["init", "-q"]);
        let link = l.ws.join(".git").join(part);
        let holder = link.parent().unwrap();
        std::fs::create_dir_all(holder.join("objects")).unwrap();
        if !holder.join("HEAD").exists() {
            // A submodule's git directory, as git makes one.
            std::fs::write(holder.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        }
        std::os::unix::fs::symlink(target, &link).unwrap();
        let jail = jail_for(&l);
        let (_, shown) = run(
            &jail,
            &format!(
                "cat {} 2>/dev/null; ls /run /proc/1/root/etc 2>/dev/null | head -3",
                sh_quote(&l.home.join(".ssh/id_rsa"))
            ),
        );
        assert!(!shown.contains("SECRET"), "{part}: {shown}");
        let (wrote, _) = run(&jail, "touch .git/planted");
        assert!(!wrote, "{part}: the git directory is read-only whole");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// What a run could leave for git outside the sandbox to run later: the git directory
    /// cannot be renamed away and replaced; a program part that did not exist at launch
    /// (`commondir`, hooks, info, a worktree config) is held back when the run ends; a new
    /// top-level configuration entry is named. Generated over which parts exist at launch.
    #[test]
    fn nothing_planted_for_git_outlives_the_run(
        present in proptest::sample::subsequence(vec!["hooks", "info"], 0..=2),
        plant in proptest::sample::select(vec![
            ("commondir", "printf /tmp/evil > .git/commondir"),
            ("config.worktree", "printf '[core]\\n\\tfsmonitor = touch x\\n' > .git/config.worktree"),
            ("hooks", "mkdir -p .git/hooks && printf 'touch x' > .git/hooks/post-checkout"),
            ("info", "mkdir -p .git/info && printf '* filter=x' > .git/info/attributes"),
        ]),
        new_top in proptest::sample::select(vec![".envrc", ".vscode", ".husky", "lefthook.yml"]),
    ) {
        require_bubblewrap();
        let l = layout(Place::InHome);
        git_ok(&l.ws, &["init", "-q"]);
        for part in ["hooks", "info"] {
            let path = l.ws.join(".git").join(part);
            if present.contains(&part) {
                std::fs::create_dir_all(&path).unwrap();
            } else {
                let _ = std::fs::remove_dir_all(&path);
            }
        }
        let jail = jail_for(&l);
        let watch = jail.watch();
        let (renamed, out) = run(&jail, "mv .git .git-away && mkdir .git");
        prop_assert!(!renamed, "the git directory was renamed: {out}");
        let (planted, out) = run(&jail, plant.1);
        prop_assert!(!planted, "the git directory is read-only inside: {}", out);
        let (touched, _) = run(&jail, &format!("touch {new_top}"));
        prop_assert!(touched, "{new_top} can be made (it is named afterwards)");
        // Where bubblewrap is missing nothing is contained; the check after the run still
        // holds back a part git reads that was not there at launch.
        let (planted, _) = run_unconfined(&l.ws, plant.1);
        let after = watch.check();
        let (name, _) = plant;
        let at = l.ws.join(".git").join(name);
        if !present.contains(&name) {
            prop_assert!(planted);
            prop_assert!(std::fs::symlink_metadata(&at).is_err(), "{name} is still where git reads it");
            prop_assert_eq!(after.held.len(), 1, "{:?}", after);
            prop_assert_eq!(&after.held[0].0, &at);
            let confine::Held::Moved(aside) = &after.held[0].1 else {
                panic!("not moved aside: {after:?}");
            };
            prop_assert!(aside.exists(), "what was planted is kept, under another name");
        }
        prop_assert!(after.replaced.is_empty(), "{after:?}");
        prop_assert_eq!(after.created.clone(), vec![l.ws.join(new_top)]);
        let status = std::process::Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(&l.ws)
            .output()
            .unwrap();
        prop_assert!(status.status.success(), "git still works outside");
    }
}

/// What a review of the first version found, each closed by the structure rather than by name:
/// repositories below the top and submodules at any depth are guarded as the top one is; what a
/// repository's config names for git to run from (`core.hooksPath`, an included file) is
/// read-only; whatever git does not write itself in a git directory, and a rebase to-do that
/// runs a program, is held back.
#[test]
fn repositories_at_any_depth_and_what_their_config_names_are_guarded() {
    require_bubblewrap();
    let l = layout(Place::InHome);
    git_ok(&l.ws, &["init", "-q"]);
    std::fs::create_dir_all(l.ws.join("projA")).unwrap();
    git_ok(&l.ws.join("projA"), &["init", "-q"]);
    git_ok(&l.ws, &["init", "-q", "--bare", ".git/modules/libs/foo"]);
    std::fs::create_dir_all(l.ws.join("tools/hooks")).unwrap();
    std::fs::write(l.ws.join("team.gitconfig"), "[user]\n\tname = t\n").unwrap();
    git_ok(&l.ws, &["config", "core.hooksPath", "tools/hooks"]);
    git_ok(&l.ws, &["config", "include.path", "../team.gitconfig"]);
    let jail = jail_for(&l);
    for plant in [
        "git -C projA config core.fsmonitor 'touch x'",
        "printf '[core]\\n\\tfsmonitor = touch x\\n' >> .git/modules/libs/foo/config",
        "printf 'touch x' > tools/hooks/post-checkout",
        "printf '[core]\\n\\tfsmonitor = touch x\\n' >> team.gitconfig",
        "mv projA/.git projA/.git-away",
    ] {
        let (ok, out) = run(&jail, plant);
        assert!(!ok, "{plant} went through: {out}");
    }
    let watch = jail.watch();
    let (ok, out) = run_unconfined(
        &l.ws,
        "mkdir -p .git/rebase-merge && printf 'pick 1 a\\nexec touch x\\n' > .git/rebase-merge/git-rebase-todo \
         && mkdir .git/unknown && touch .git/index.lock",
    );
    assert!(ok, "{out}");
    let (ok, out) = run(&jail, "mkdir sub && git -C sub init -q");
    assert!(ok, "{out}");
    let after = watch.check();
    let held: Vec<_> = after.held.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(
        held,
        vec![l.ws.join(".git/unknown"), l.ws.join(".git/rebase-merge")],
        "{after:?}"
    );
    assert!(!l.ws.join(".git/rebase-merge").exists() && l.ws.join(".git/index.lock").exists());
    assert_eq!(
        after.created,
        vec![l.ws.join("sub/.git")],
        "a new repository is named"
    );
    assert!(
        l.ws.join("sub/.git/config").exists(),
        "what git init made stays"
    );

    // A repository made and configured by the run: what git did not write is held back.
    let watch = jail.watch();
    let (ok, out) = run(
        &jail,
        "mkdir -p v/x w && git -C v/x init -q && git -C v/x config core.fsmonitor 'touch x' \
         && printf 'touch x' > v/x/.git/hooks/post-checkout && printf 'gitdir: ../v/x/.git' > w/.git \
         && mkdir -p v/x/.git/logs && ln -s ../../../../outside-file v/x/.git/logs/HEAD",
    );
    assert!(ok, "{out}");
    let after = watch.check();
    let held: Vec<_> = after.held.iter().map(|(p, _)| p.clone()).collect();
    for planted in [
        "v/x/.git/config",
        "v/x/.git/hooks/post-checkout",
        "w/.git",
        "v/x/.git/logs/HEAD",
    ] {
        assert!(held.contains(&l.ws.join(planted)), "{planted}: {after:?}");
        assert!(
            !l.ws.join(planted).exists(),
            "{planted} is where git reads it"
        );
    }
}

/// The second review's cases: a linked worktree's folder is guarded though it holds no
/// objects; a HEAD git cannot read is put back (git would take another folder for the
/// repository); a config key on a header line is read as git reads it; a to-do with a byte that
/// is not UTF-8 still shows its `exec`.
#[test]
fn a_worktree_a_broken_head_a_header_key_and_a_binary_todo_are_caught() {
    require_bubblewrap();
    let l = layout(Place::InHome);
    git_ok(&l.ws, &["init", "-q", "-b", "main"]);
    git_ok(&l.ws, &["commit", "-q", "--allow-empty", "-m", "one"]);
    git_ok(&l.ws, &["worktree", "add", "-q", "wt"]);
    let head_before = std::fs::read(l.ws.join(".git/HEAD")).unwrap();
    let jail = jail_for(&l);
    let (ok, out) = run(&jail, "printf /elsewhere > .git/worktrees/wt/commondir");
    assert!(!ok, "a worktree's commondir changed: {out}");
    let watch = jail.watch();
    let (ok, out) = run_unconfined(
        &l.ws,
        "printf 'ref: xrefs/heads/main\\n' > .git/HEAD \
         && mkdir -p .git/rebase-merge && printf '# caf\\351\\nexec touch x\\n' > .git/rebase-merge/git-rebase-todo",
    );
    assert!(ok, "{out}");
    let (ok, out) = run(
        &jail,
        "mkdir n && git -C n init -q && printf '[core]fsmonitor = \"touch x\" #]\\n' >> n/.git/config",
    );
    assert!(ok, "{out}");
    let after = watch.check();
    assert_eq!(std::fs::read(l.ws.join(".git/HEAD")).unwrap(), head_before);
    let held: Vec<_> = after.held.iter().map(|(p, _)| p.clone()).collect();
    for planted in [".git/HEAD", ".git/rebase-merge", "n/.git/config"] {
        assert!(held.contains(&l.ws.join(planted)), "{planted}: {after:?}");
    }
}

/// The second review's other cases: a folder made into what git takes for a bare repository
/// loses its HEAD (git finds it from any folder below); a submodule's folder swapped for one
/// whose `.git` points elsewhere is judged as new; a replaced submodule git directory keeps
/// only what git makes.
#[test]
fn a_bare_repository_shape_a_swapped_pointer_and_a_replaced_module_are_held() {
    require_bubblewrap();
    let l = layout(Place::InHome);
    git_ok(&l.ws, &["init", "-q"]);
    std::fs::create_dir_all(l.ws.join("src/a")).unwrap();
    std::fs::write(l.ws.join("src/main.rs"), "fn main() {}").unwrap();
    std::fs::create_dir_all(l.ws.join("lib")).unwrap();
    std::fs::write(l.ws.join("lib/.git"), "gitdir: ../.git/modules/lib\n").unwrap();
    git_ok(&l.ws, &["init", "-q", "--bare", ".git/modules/lib"]);
    let jail = jail_for(&l);
    let watch = jail.watch();
    let (ok, out) = run(
        &jail,
        "cd src && mkdir objects refs && echo 'ref: refs/heads/main' > HEAD \
         && printf '[core]\\n\\tpager = touch x\\n' > config",
    );
    assert!(ok, "{out}");
    // A folder holding a repository can be moved (mounts move with it); the pointer put in
    // its place is judged as new after the run.
    let (ok, out) = run(
        &jail,
        "mv lib lib-moved && mkdir lib && printf 'gitdir: ../.git/modules/zz\\n' > lib/.git",
    );
    assert!(ok, "{out}");
    let (moved, _) = run(&jail, "mv .git/modules/lib .git/modules/lib-old");
    assert!(!moved, "the top git directory is read-only inside");
    let (ok, out) = run_unconfined(&l.ws, "mv .git/modules/lib .git/modules/lib-old");
    assert!(ok, "{out}");
    let after = watch.check();
    let held: Vec<_> = after.held.iter().map(|(p, _)| p.clone()).collect();
    for planted in ["src/HEAD", "lib/.git"] {
        assert!(held.contains(&l.ws.join(planted)), "{planted}: {after:?}");
    }
    assert!(
        l.ws.join("src/main.rs").exists(),
        "the folder's own files stay"
    );
}

/// The third review's cases: a bare repository kept in the workspace (a push runs its hooks)
/// and a git directory a `.git` file points to (`--separate-git-dir`) are read-only inside, as
/// a `.git` folder is.
#[test]
fn a_bare_repository_and_a_separate_git_directory_are_read_only_inside() {
    require_bubblewrap();
    let l = layout(Place::InHome);
    git_ok(&l.ws, &["init", "-q", "--bare", "remote.git"]);
    std::fs::create_dir_all(l.ws.join("proj")).unwrap();
    git_ok(
        &l.ws.join("proj"),
        &["init", "-q", "--separate-git-dir", "../proj-git"],
    );
    let jail = jail_for(&l);
    for plant in [
        "printf 'touch x' > remote.git/hooks/pre-receive",
        "git -C remote.git config core.fsmonitor 'touch x'",
        "git -C proj config core.fsmonitor 'touch x'",
        "printf 'touch x' > proj-git/hooks/post-checkout",
    ] {
        let (ok, out) = run(&jail, plant);
        assert!(!ok, "{plant} went through: {out}");
    }
    let (ok, out) = run(&jail, "git -C proj status --short && touch proj/file");
    assert!(ok, "the work tree stays writable and git reads: {out}");
}
