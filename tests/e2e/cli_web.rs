//! The web through the `cowork` binary, with a real Secret Service (gnome-keyring in a private
//! D-Bus session) holding the search key: `cowork web provider/key`, then each web tool against
//! the loopback world — the recorded Brave answer, Open-Meteo, the real feeds and a Chromium PDF —
//! reviewed, audited, and the key nowhere in the data dir.

use cowork_app::Section;
use cowork_tests::output_text;
use cowork_tests::peers::in_private_keyring;
use cowork_tests::world;

#[test]
fn each_web_tool_from_the_command_line_with_the_key_in_the_keyring() {
    let w = world::start();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("cowork");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(&user).unwrap();
    // Services at the world, as the person would set them (Settings → Web or the settings file).
    std::fs::create_dir_all(&home).unwrap();
    let mut settings = w.settings(None);
    settings.news.feeds.retain(|f| f.name != "Gone");
    settings.save(&home.join("settings.json")).unwrap();
    let key = "BSA-cli-test-key-0451";
    let script = format!(
        r#"set -e
"$COWORK" web provider brave --url {base}
printf '%s\n' "$KEY" | "$COWORK" web key
for tool in web_search web_fetch get_weather get_news; do "$COWORK" policy rules add allow "$tool({base})"; done
echo "== search"; "$COWORK" web search "hello world" --count 3
echo "== weather"; "$COWORK" web weather "Springfield, Illinois" --days 2
echo "== news"; "$COWORK" web news --language zh
echo "== fetch"; "$COWORK" web fetch {base}/report.pdf
"#,
        base = w.base
    );
    // First a key the world does not know: stored, then refused by the service.
    let out = in_private_keyring(&script.replace("$KEY", key), &home, &user)
        .env("COWORK", env!("CARGO_BIN_EXE_cowork"))
        .output()
        .expect("dbus-run-session is not installed: run tests/setup.sh");
    let text = output_text(&out);
    assert!(
        text.contains("key stored in the OS keyring (web/brave)"),
        "{text}"
    );
    assert!(text.contains("refused the key"), "{text}");
    assert!(!out.status.success());

    // With the right key, every tool answers.
    let script = script
        .lines()
        .filter(|l| !l.contains("policy rules add") && !l.contains("web provider"))
        .collect::<Vec<_>>()
        .join("\n");
    let out = in_private_keyring(&script.replace("$KEY", world::BRAVE_KEY), &home, &user)
        .env("COWORK", env!("CARGO_BIN_EXE_cowork"))
        .output()
        .unwrap();
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    let section = |name: &str| {
        let start = text
            .find(&format!("== {name}"))
            .unwrap_or_else(|| panic!("{name}: {text}"));
        text[start..].split("\n== ").next().unwrap().to_string()
    };
    let search = section("search");
    assert!(
        search.contains("1. \"Hello, World!\" program - Wikipedia"),
        "{search}"
    );
    assert!(
        search.contains("(Brave Search)") && !search.contains("4. "),
        "{search}"
    );
    let weather = section("weather");
    assert!(
        weather.contains("Springfield, Illinois, United States"),
        "{weather}"
    );
    assert!(
        weather.contains("Weather data by Open-Meteo.com"),
        "{weather}"
    );
    let news = section("news");
    assert!(
        news.contains("北京今冬首场降雪") && news.contains("不归移民漫画系列"),
        "{news}"
    );
    assert!(
        !news.contains("Marcus Aurelius"),
        "English feeds left out: {news}"
    );
    let fetch = section("fetch");
    assert!(fetch.contains("Revenue grew by twelve percent"), "{fetch}");

    // The key is in the keyring only: nothing in the data dir holds it.
    for entry in walk(&home) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !bytes.windows(key.len()).any(|w| w == key.as_bytes())
                && !bytes
                    .windows(world::BRAVE_KEY.len())
                    .any(|w| w == world::BRAVE_KEY.as_bytes()),
            "{} holds the key",
            entry.display()
        );
    }
    // Each call was reviewed and audited.
    let audit = std::process::Command::new(env!("CARGO_BIN_EXE_cowork"))
        .args(["--home"])
        .arg(&home)
        .args(["--json", "audit", "list"])
        .output()
        .unwrap();
    let audit = String::from_utf8_lossy(&audit.stdout);
    for tool in ["web_search", "get_weather", "get_news", "web_fetch"] {
        assert!(audit.contains(tool), "{tool} not audited: {audit}");
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
