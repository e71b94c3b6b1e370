//! API keys live in a real Secret Service (gnome-keyring inside a private D-Bus session) and
//! nowhere else: the provider receives the key, and the data dir (database, WAL, settings, logs)
//! never contains it.

use cowork_tests::llm_server::{ScriptedLlm, Turn};
use cowork_tests::output_text;
use cowork_tests::peers::in_private_keyring;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_key_goes_to_the_keyring_and_nowhere_else() {
    let server = ScriptedLlm::start().await;
    server.push(Turn::text("pong"));
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("cowork");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(&user).unwrap();
    let key = "sk-test-f00d-CAFE-1234567890";
    let script = format!(
        r#"set -e
"$COWORK" provider set --provider openai --base-url {base} --model scripted
printf '%s\n' "$KEY" | "$COWORK" provider key
"$COWORK" provider check
"#,
        base = server.openai_base()
    );
    let bin = env!("CARGO_BIN_EXE_cowork");
    // Run the blocking child off the runtime so the scripted server keeps answering.
    let out = tokio::task::spawn_blocking({
        let (home, user) = (home.clone(), user.clone());
        move || {
            in_private_keyring(&script, &home, &user)
                .env("COWORK", bin)
                .env("KEY", key)
                .output()
                .expect("dbus-run-session is not installed: run tests/setup.sh")
        }
    })
    .await
    .unwrap();
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("key stored in the OS keyring") && stdout.trim_end().ends_with("pong"),
        "{text}"
    );

    // The provider got the key from the keyring…
    let requests = server.requests();
    assert_eq!(requests[0].1["authorization"], format!("Bearer {key}"));
    // …and it is nowhere in the data dir (settings, database, WAL, logs, notes).
    let holding = cowork_tests::files_holding(&home, &[key]);
    assert!(holding.is_empty(), "the key reached {holding:?}");
    let settings = std::fs::read_to_string(home.join("settings.json")).unwrap();
    assert!(settings.contains("\"apiKeyEnv\": \"\""), "{settings}");
}

/// A pack's sensitive setting, set after the install with `toolpack configure`, goes to the
/// keyring and from there into its server's environment — and into no file of the data dir.
#[test]
fn a_toolpack_secret_configured_later_reaches_its_server_from_the_keyring() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, user, pack) = (
        tmp.path().join("cowork"),
        tmp.path().join("user"),
        tmp.path().join("pack"),
    );
    std::fs::create_dir_all(&user).unwrap();
    std::fs::create_dir_all(&pack).unwrap();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::copy(
        repo.join("tests/adversarial/hostile-server.js"),
        pack.join("s.js"),
    )
    .unwrap();
    let manifest = serde_json::json!({"manifest_version": "0.3", "name": "envpack", "version": "1.0.0",
        "server": {"type": "node", "entry_point": "s.js", "mcp_config": {"command": "node", "args": ["${__dirname}/s.js"],
            "env": {"TOKEN": "${user_config.token}", "GREETING": "${user_config.greeting}"}}},
        "user_config": {"token": {"type": "string", "title": "Token", "sensitive": true},
                        "greeting": {"type": "string", "title": "Greeting"}},
        "_meta": {"app.cowork": {"effects": {"env": []}}}});
    std::fs::write(pack.join("manifest.json"), manifest.to_string()).unwrap();
    let secret = "tok-5ecret-BEEF-424242";
    let script = format!(
        r#"set -e
"$COWORK" toolpack install {pack} --yes --no-deps --config greeting=8.10
"$COWORK" toolpack configure envpack "token=$SECRET"
! "$COWORK" toolpack configure envpack tokne=x 2>&1
"$COWORK" tools call mcp__envpack__env
"#,
        pack = pack.display()
    );
    let out = in_private_keyring(&script, &home, &user)
        .env("COWORK", env!("CARGO_BIN_EXE_cowork"))
        .env("SECRET", secret)
        .output()
        .expect("dbus-run-session is not installed: run tests/setup.sh");
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    // Both values reached the server: the secret from the keyring, the string exactly as typed.
    assert!(text.contains(&format!("TOKEN={secret}")), "{text}");
    assert!(text.contains("GREETING=8.10"), "{text}");
    // A misspelt setting is refused, naming the real ones.
    assert!(text.contains("its settings: greeting, token"), "{text}");
    let index = std::fs::read_to_string(home.join("toolpacks.json")).unwrap();
    assert!(!index.contains(secret), "{index}");
}
