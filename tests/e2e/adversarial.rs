//! The adversarial suite: what a hostile repository, page, pack or model would try, run against
//! the real `cowork` binary on real files. Cases are data (`tests/adversarial/cases.toml`): a new
//! attack is a few lines there, not code here. See that file's header for the format.
//!
//! Every case that does not expect `allow` also asserts that nothing risky happened: the canary
//! file outside the workspace was not created and no output carries the secret's text.
//!
//! One command: `cargo test -p cowork-cli --test adversarial -- --nocapture` (prints counts).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

const SECRET_TEXT: &str = "TOPSECRET-d41d8cd9";

#[derive(Deserialize)]
struct Suite {
    case: Vec<Case>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Case {
    id: String,
    class: String,
    /// What the attacker tries (for the person reading a failure).
    attack: String,
    #[serde(default)]
    steps: Vec<String>,
    /// The call under test: `tools call TOOL --json --args ARGS`.
    tool: Option<String>,
    args: Option<String>,
    /// Or any command: `cowork: …` or `sh: …`.
    run: Option<String>,
    /// allow | ask | deny | rejected | refused | exit:N
    expect: String,
    #[serde(default)]
    contains: Vec<String>,
    #[serde(default)]
    lacks: Vec<String>,
    /// Even an allowed call must leave the canary alone (e.g. git with a planted fsmonitor).
    #[serde(default)]
    no_canary: bool,
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// Run without `--workspace`.
    #[serde(default)]
    no_workspace: bool,
}

struct Scene {
    _tmp: tempfile::TempDir,
    vars: Vec<(String, String)>,
    home: PathBuf,
    ws: PathBuf,
    user_home: PathBuf,
    /// Commands under test touch this: inside the workspace, so a sandboxed command's write is
    /// visible here (the sandbox hides the rest of the filesystem's writes).
    canary: PathBuf,
    /// File tools under test aim here, outside the workspace.
    canary_out: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (home, ws, outside, user_home) = (
            root.join("data"),
            root.join("ws"),
            root.join("outside"),
            root.join("userhome"),
        );
        for d in [&ws, &outside, &user_home.join(".ssh")] {
            std::fs::create_dir_all(d).unwrap();
        }
        let secret = outside.join("secret.txt");
        std::fs::write(&secret, format!("{SECRET_TEXT}\n")).unwrap();
        std::fs::write(user_home.join(".ssh/id_rsa"), format!("{SECRET_TEXT}\n")).unwrap();
        std::fs::write(ws.join("a.txt"), "hello\n").unwrap();
        let canary = ws.join("canary-ran");
        let canary_out = outside.join("canary");
        let s = |p: &Path| p.display().to_string();
        let vars = vec![
            ("$WS".into(), s(&ws)),
            ("$OUTSIDE".into(), s(&outside)),
            ("$SECRET".into(), s(&secret)),
            ("$CANARY_OUT".into(), s(&canary_out)),
            ("$CANARY".into(), s(&canary)),
            ("$DATA".into(), s(&home)),
            ("$DB".into(), s(&home.join("cowork.db"))),
            ("$HOME_DIR".into(), s(&user_home)),
            ("$COWORK".into(), env!("CARGO_BIN_EXE_cowork").to_string()),
            (
                "$REPO".into(),
                s(&Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../..")
                    .canonicalize()
                    .unwrap()),
            ),
        ];
        Scene {
            _tmp: tmp,
            vars,
            home,
            ws,
            user_home,
            canary,
            canary_out,
        }
    }

    fn expand(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (k, v) in &self.vars {
            out = out.replace(k.as_str(), v);
        }
        out
    }

    fn cowork(&self, case: &Case, args: &[String]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cowork"));
        if !case.no_workspace {
            cmd.arg("--workspace").arg(&self.ws);
        }
        cmd.args(args)
            .env("COWORK_HOME", &self.home)
            .env("HOME", &self.user_home)
            .env_remove("COWORK_APPROVE_FROM_STDIN")
            .env_remove("COWORK_LOG")
            .envs(&case.env)
            .stdin(Stdio::null());
        cmd.output().unwrap()
    }

    fn sh(&self, case: &Case, script: &str) -> Output {
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(script)
            .current_dir(&self.ws)
            .env("HOME", &self.user_home)
            .envs(&case.env)
            .stdin(Stdio::null());
        for (k, v) in &self.vars {
            cmd.env(&k[1..], v);
        }
        cmd.output().unwrap()
    }

    /// Runs one `kind: rest` line; returns the output of commands.
    fn step(&mut self, case: &Case, line: &str) -> Result<Option<Output>, String> {
        let (kind, rest) = line
            .split_once(':')
            .map(|(k, r)| (k.trim(), r.trim()))
            .unwrap_or((line.trim(), ""));
        match kind {
            "file" => {
                let (path, content) = rest
                    .split_once(" = ")
                    .ok_or_else(|| format!("step {line:?}: write `file: PATH = CONTENT`"))?;
                let path = self.expand(path.trim());
                let path = if Path::new(&path).is_absolute() {
                    PathBuf::from(path)
                } else {
                    self.ws.join(path)
                };
                std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| e.to_string())?;
                std::fs::write(&path, self.expand(content).replace("\\n", "\n"))
                    .map_err(|e| e.to_string())?;
                Ok(None)
            }
            "sh" | "sh?" => {
                let out = self.sh(case, &self.expand(rest));
                if kind == "sh" && !out.status.success() {
                    return Err(format!("setup `{rest}` failed: {}", text(&out)));
                }
                Ok(Some(out))
            }
            "cowork" => {
                let words = shlex::split(&self.expand(rest))
                    .ok_or_else(|| format!("step {line:?}: unbalanced quotes"))?;
                Ok(Some(self.cowork(case, &words)))
            }
            "call" => {
                let (tool, args) = rest.split_once(' ').unwrap_or((rest, "{}"));
                Ok(Some(self.cowork(
                    case,
                    &[
                        "tools".into(),
                        "call".into(),
                        tool.into(),
                        "--args".into(),
                        self.expand(args),
                    ],
                )))
            }
            "anchor" => {
                let out = self.cowork(case, &["audit".into(), "head".into()]);
                let head = String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .replace(' ', ":");
                self.vars.push(("$ANCHOR".into(), head));
                Ok(None)
            }
            other => Err(format!(
                "step {line:?}: unknown kind {other:?} (file, sh, sh?, cowork, call, anchor)"
            )),
        }
    }
}

fn text(out: &Output) -> String {
    cowork_tests::output_text(out)
}

fn run_case(case: &Case) -> Result<(), String> {
    let mut scene = Scene::new();
    for line in &case.steps {
        scene.step(case, line)?;
    }
    let (out, decision) = match (&case.tool, &case.run) {
        (Some(tool), None) => {
            let args = scene.expand(case.args.as_deref().unwrap_or("{}"));
            let out = scene.cowork(
                case,
                &[
                    "tools".into(),
                    "call".into(),
                    tool.clone(),
                    "--json".into(),
                    "--args".into(),
                    args,
                ],
            );
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let decision = json["decision"].as_str().unwrap_or("rejected").to_string();
            (out, Some(decision))
        }
        (None, Some(run)) => (
            scene
                .step(case, run)?
                .ok_or("`run` must be a cowork:, call: or sh: line")?,
            None,
        ),
        _ => return Err("give either `tool` (+ `args`) or `run`".into()),
    };
    let full = text(&out);
    let code = out.status.code();
    // Failures quote the output, shortened: one case's whole JSON would bury the rest.
    let all = if full.len() > 600 {
        format!("{}…", &full[..full.floor_char_boundary(600)])
    } else {
        full.clone()
    };
    match (case.expect.as_str(), &decision) {
        (want, Some(got)) if ["allow", "ask", "deny", "rejected", "refused"].contains(&want) => {
            let got = if got == "rejected" && code == Some(3) {
                "refused"
            } else {
                got.as_str()
            };
            if want != got {
                return Err(format!("expected {want}, got {got} (exit {code:?}): {all}"));
            }
            let want_code = match want {
                "ask" | "deny" | "refused" => Some(3),
                "rejected" => Some(2),
                _ => None,
            };
            if want_code.is_some() && code != want_code {
                return Err(format!("expected exit {want_code:?}, got {code:?}: {all}"));
            }
        }
        (want, _) if want.starts_with("exit:") => {
            let want_code: i32 = want[5..]
                .parse()
                .map_err(|_| format!("expect {want:?}: exit:N"))?;
            if code != Some(want_code) {
                return Err(format!("expected exit {want_code}, got {code:?}: {all}"));
            }
        }
        (want, _) => {
            return Err(format!(
                "expect {want:?} does not fit this case (allow|ask|deny|rejected with `tool`, exit:N with `run`)"
            ));
        }
    }
    for needle in &case.contains {
        let needle = scene.expand(needle);
        if !full.contains(&needle) {
            return Err(format!("output lacks {needle:?}: {all}"));
        }
    }
    for needle in &case.lacks {
        let needle = scene.expand(needle);
        if full.contains(&needle) {
            return Err(format!("output contains {needle:?}: {all}"));
        }
    }
    // Nothing risky happened without a review.
    if case.expect != "allow" || case.no_canary {
        for canary in [&scene.canary, &scene.canary_out] {
            if canary.exists() {
                return Err(format!(
                    "the canary {} was created: the attack ran. Output: {all}",
                    canary.display()
                ));
            }
        }
        if full.contains(SECRET_TEXT) {
            return Err(format!("the secret's text reached the output: {all}"));
        }
    }
    let _ = &scene.user_home;
    Ok(())
}

#[test]
fn adversarial_suite() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/adversarial/cases.toml");
    let suite: Suite = toml::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut ids = std::collections::HashSet::new();
    for c in &suite.case {
        assert!(ids.insert(c.id.clone()), "case id {} is used twice", c.id);
    }
    let only = std::env::var("ADVERSARIAL_ONLY").ok();
    let cases: Vec<Case> = suite
        .case
        .iter()
        .filter(|c| {
            only.as_ref()
                .is_none_or(|o| c.id.contains(o.as_str()) || c.class == *o)
        })
        .cloned()
        .collect();
    let queue = Mutex::new(cases.clone());
    let failures = Mutex::new(Vec::new());
    let took = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(2, 4);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                // The lock is taken and let go in its own statement: a guard made in the
                // `while let` would be held through the case and run the suite one case at a time.
                loop {
                    let next = queue.lock().unwrap().pop();
                    let Some(case) = next else { break };
                    let start = std::time::Instant::now();
                    let result = run_case(&case);
                    took.lock()
                        .unwrap()
                        .push((start.elapsed(), case.id.clone()));
                    if let Err(why) = result {
                        failures.lock().unwrap().push(format!(
                            "{} [{}] — {}\n    {why}",
                            case.id, case.class, case.attack
                        ));
                    }
                }
            });
        }
    });
    let mut by_class: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for c in &cases {
        let entry = by_class.entry(c.class.as_str()).or_default();
        entry.0 += 1;
        if c.expect == "ask" {
            entry.1 += 1;
        }
    }
    let failures = failures.into_inner().unwrap();
    println!(
        "adversarial suite: {} cases, {} passed, {} failed",
        cases.len(),
        cases.len() - failures.len(),
        failures.len()
    );
    for (class, (n, asks)) in &by_class {
        println!("  {class:12} {n:4} cases ({asks} end in an ask)");
    }
    // Where the suite's time goes, for whoever makes it faster.
    let mut took = took.into_inner().unwrap();
    took.sort_unstable_by(|a, b| b.cmp(a));
    for (elapsed, id) in took.iter().take(8) {
        println!("  slowest: {id} {elapsed:.1?}");
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
