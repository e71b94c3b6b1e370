//! Notifications through a real notification server on a private session bus: what an ask's
//! notice says (and never says), escaping for servers that read markup, the click coming back
//! as the ask's place, do-not-disturb, and a clear error when no server is there.

use cowork_app::notify::{Notice, NoticeTarget, Notifier, NotifyError};
use cowork_core::{ApprovalChoice, CallRequest, Caller, ChannelApprover};
use cowork_tests::Harness;
use cowork_tests::desktop::{NotificationServer, SessionBus};
use cowork_tests::wait::patience;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_is_notified_without_its_arguments_and_the_click_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let bus = SessionBus::start(dir.path());
    let server = NotificationServer::start(&bus).await;

    // A real ask from the gate, with a secret and markup in its arguments.
    let (approver, mut asks) = ChannelApprover::new("window", 4);
    let h = Harness::new(Arc::new(approver));
    let scheduler = h.scheduler.clone();
    let call = tokio::spawn(async move {
        scheduler
            .call(CallRequest::new(
                "exec_probe",
                json!({"target": "deploy --token sk-live-0123456789 <b>now</b>"}),
                Caller::Chat,
                "c1",
            ))
            .await
    });
    let (mut request, answer) = asks.recv().await.unwrap();
    // A toolpack names its own tools: a hostile title with markup and a terminal escape.
    request.title = "<a href=\"https://evil.example\">Update</a> & \u{1b}[2Jrestart".into();

    let (notifier, mut clicks) = Notifier::on_bus(&bus.address);
    notifier.show(&Notice::approval(&request)).await.unwrap();
    let shown = server.wait_for("waiting for your answer").await;
    assert_eq!(shown.app_name, "Cowork");
    assert!(shown.actions.contains(&"default".to_string()));
    for leaked in ["sk-live", "deploy", "<b>", "<a ", "\u{1b}"] {
        assert!(
            !shown.body.contains(leaked) && !shown.summary.contains(leaked),
            "the notice carries {leaked:?}: {shown:?}"
        );
    }
    assert!(
        shown.body.contains("&lt;a href=") && shown.body.contains("&amp;"),
        "markup is escaped for a server that reads it: {}",
        shown.body
    );

    // The person clicks it: the window learns which ask to open.
    server.click(shown.id).await;
    let target = tokio::time::timeout(patience(), clicks.recv())
        .await
        .expect("the click arrives")
        .unwrap();
    assert_eq!(
        target,
        NoticeTarget::Approval {
            id: request.call_id.clone()
        }
    );

    // Do not disturb: nothing is shown, and the caller is told so (the ask then waits).
    notifier.set_quiet(true);
    assert!(matches!(
        notifier.show(&Notice::approval(&request)).await,
        Err(NotifyError::Quiet)
    ));
    assert_eq!(server.shown().len(), 1);

    answer.send(ApprovalChoice::Deny).unwrap();
    assert!(call.await.unwrap().result.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_notification_server_is_a_clear_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let bus = SessionBus::start(dir.path());
    let (notifier, _clicks) = Notifier::on_bus(&bus.address);
    let started = std::time::Instant::now();
    let err = notifier
        .show(&Notice::finished("c1", "Weekly report"))
        .await
        .unwrap_err();
    assert!(matches!(err, NotifyError::NoService(_)), "{err}");
    assert!(err.to_string().contains("notification daemon"), "{err}");
    // Said at once, not after D-Bus's own 25 s call timeout, which a hang would wait out.
    assert!(started.elapsed() < Duration::from_secs(25));

    let (nowhere, _clicks) = Notifier::on_bus("unix:path=/nonexistent/bus");
    let err = nowhere
        .show(&Notice::finished("c1", "x"))
        .await
        .unwrap_err();
    assert!(matches!(err, NotifyError::NoSessionBus(_)), "{err}");
}

/// A calendar reminder (VALARM) falls due while the app runs: the app's reminder worker hands it
/// over at its time and once, its notice says what, when and where (never the description),
/// and clicking it names the event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calendar_reminder_is_notified_at_its_time_once_and_the_click_names_the_event() {
    use cowork_app::{App, AppOptions};
    let dir = tempfile::tempdir().unwrap();
    let bus = SessionBus::start(dir.path());
    let server = NotificationServer::start(&bus).await;
    let (approver, mut asks) = ChannelApprover::new("window", 4);
    tokio::spawn(async move {
        while let Some((_, answer)) = asks.recv().await {
            let _ = answer.send(ApprovalChoice::Once);
        }
    });
    let app = App::open(AppOptions {
        home: Some(dir.path().join("home")),
        workspace_roots: vec![],
        approver: Arc::new(approver),
        scheduler: cowork_core::SchedulerConfig::default(),
    })
    .unwrap();
    // Starts in 64 s with a reminder a minute before: due in about 4 s.
    let start = (chrono::Utc::now() + chrono::Duration::seconds(64))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let created = app
        .scheduler()
        .call(CallRequest::new(
            "calendar_create",
            json!({"title": "Dentist \u{1b}[2J", "start": start, "location": "Main St 4",
                   "description": "insurance number 0099-1234", "reminders_minutes": [1]}),
            Caller::Chat,
            "c1",
        ))
        .await;
    assert!(created.result.is_ok(), "{:?}", created.result);

    let (tx, mut due) = tokio::sync::mpsc::unbounded_channel();
    let worker = tokio::spawn(app.reminder_worker(move |r| {
        let _ = tx.send(r);
    }));
    let reminder = tokio::time::timeout(patience(), due.recv())
        .await
        .expect("the reminder falls due")
        .unwrap();
    let late = chrono::Utc::now() - reminder.due;
    assert!(
        late >= chrono::Duration::zero() && late < chrono::Duration::seconds(3),
        "shown at its time, not {late} late"
    );
    assert!(reminder.title.starts_with("Dentist"));

    let (notifier, mut clicks) = Notifier::on_bus(&bus.address);
    notifier.show(&Notice::reminder(&reminder)).await.unwrap();
    let shown = server.wait_for("Dentist").await;
    assert!(shown.body.contains("Main St 4"), "{shown:?}");
    for leaked in ["insurance", "0099", "\u{1b}"] {
        assert!(
            !shown.body.contains(leaked) && !shown.summary.contains(leaked),
            "the notice carries {leaked:?}: {shown:?}"
        );
    }
    server.click(shown.id).await;
    let target = tokio::time::timeout(patience(), clicks.recv())
        .await
        .expect("the click arrives")
        .unwrap();
    assert!(
        matches!(&target, NoticeTarget::Event { uid, starts, .. } if *uid == reminder.uid && *starts == reminder.starts.to_rfc3339()),
        "{target:?}"
    );

    // Once: neither this worker nor a new one (a restart) hands it out again.
    worker.abort();
    let (tx, mut again) = tokio::sync::mpsc::unbounded_channel();
    let restarted = tokio::spawn(app.reminder_worker(move |r| {
        let _ = tx.send(r);
    }));
    assert!(
        tokio::time::timeout(Duration::from_secs(2), again.recv())
            .await
            .is_err(),
        "a reminder is shown once"
    );
    restarted.abort();
}

/// `cowork doctor`'s checks against real peers on a private bus: a model server that does not
/// answer and desktop services nobody runs are failures (the person set them up or left them
/// on); with a notification server, a tray host and a model server that answer, they work; on
/// a machine with no display the desktop's rows are not set up, never failures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doctor_fails_on_what_the_person_relies_on_and_names_each_fix() {
    use cowork_app::doctor::{Capability, Display, Finding, Health, Place, examine};
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let bus = SessionBus::start(dir.path());
    let mut place = Place {
        bus: Some(bus.address.clone()),
        display: Display::X11,
    };
    let model_at = |base: &str| {
        let agent = json!({"agent": {"provider": "openai", "baseUrl": base, "model": "m", "apiKeyEnv": ""}});
        std::fs::write(home.path().join("settings.json"), agent.to_string()).unwrap();
    };
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    model_at(&format!("http://127.0.0.1:{closed_port}/v1"));
    let row = |findings: &[Finding], capability: Capability| {
        findings
            .iter()
            .find(|f| f.capability == capability)
            .cloned()
            .unwrap()
    };

    let findings = examine(Some(home.path().into()), &place).await.unwrap();
    for capability in [
        Capability::Model,
        Capability::Notifications,
        Capability::Tray,
    ] {
        let finding = row(&findings, capability);
        assert!(
            finding.health == Health::Missing && finding.fails() && finding.fix.is_some(),
            "{finding:?}"
        );
    }

    let _notifications = NotificationServer::start(&bus).await;
    let _tray = cowork_tests::desktop::TrayHost::start(&bus).await;
    let llm = cowork_tests::llm_server::ScriptedLlm::start().await;
    model_at(&llm.openai_base());
    let findings = examine(Some(home.path().into()), &place).await.unwrap();
    for capability in [
        Capability::Model,
        Capability::Notifications,
        Capability::Tray,
    ] {
        let finding = row(&findings, capability);
        assert!(
            finding.health == Health::Works && !finding.fails(),
            "{finding:?}"
        );
    }

    place.display = Display::None;
    let findings = examine(Some(home.path().into()), &place).await.unwrap();
    for capability in [
        Capability::Tray,
        Capability::Shortcut,
        Capability::Notifications,
    ] {
        let finding = row(&findings, capability);
        assert!(
            finding.health == Health::NotSetUp && !finding.fails(),
            "{finding:?}"
        );
    }
}

/// Quick ask bound in GNOME's own custom shortcuts (what a Wayland session offers instead of a
/// global grab), through the real `gsettings` and GNOME's real schemas, in a private settings
/// file: the person's own custom shortcut stays, Cowork's is added once and updated in place.
#[test]
fn quick_ask_is_bound_in_gnomes_own_shortcuts_and_the_persons_others_stay() {
    use cowork_app::gnome_shortcut::Gsettings;
    let dir = tempfile::tempdir().unwrap();
    let env: Vec<(String, String)> = [
        ("GSETTINGS_BACKEND", "keyfile"),
        ("XDG_CONFIG_HOME", dir.path().to_str().unwrap()),
        ("HOME", dir.path().to_str().unwrap()),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .to_vec();
    let gsettings = |args: &[&str]| {
        let out = std::process::Command::new("gsettings")
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("gsettings (tests/setup.sh installs libglib2.0-bin)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let keys = "org.gnome.settings-daemon.plugins.media-keys";
    let own = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/custom0/";
    gsettings(&["set", keys, "custom-keybindings", &format!("['{own}']")]);

    let g = Gsettings { env: env.clone() };
    let program = std::path::Path::new("/usr/bin/cowork-desktop");
    let said = g.bind_quick_ask("Ctrl+Alt+Space", program).unwrap();
    assert!(said.contains("<Control><Alt>space"), "{said}");
    g.bind_quick_ask("Super+K", program).unwrap();

    let listed = gsettings(&["get", keys, "custom-keybindings"]);
    assert!(
        listed.contains(own),
        "the person's own shortcut stays: {listed}"
    );
    assert_eq!(listed.matches("cowork-quick-ask").count(), 1, "{listed}");
    let ours = format!(
        "{keys}.custom-keybinding:/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/cowork-quick-ask/"
    );
    assert_eq!(gsettings(&["get", &ours, "binding"]), "'<Super>k'");
    assert_eq!(
        gsettings(&["get", &ours, "command"]),
        "\"'/usr/bin/cowork-desktop' --quick-ask\""
    );
    let refused = g.bind_quick_ask("Hyper+K", program);
    assert!(refused.is_err(), "{refused:?}");
}
