//! The calendar family through the scheduler, against a real Radicale on loopback: the local
//! calendar, .ics round trips, two-way CalDAV sync (a recurring event with an exception, edits
//! and deletes both ways), an edit conflict that keeps both versions, a server failing mid-sync
//! (nothing lost, retried), offline edits queued, and the review of invitations.

use cowork_contract::Effect;
use cowork_store::accounts::AccountConfig;
use cowork_tests::peers::Radicale;
use cowork_tests::{Harness, Recorder};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const PASSWORD: &str = "radicale-pw-7f3a";

/// A harness with a CalDAV account `dav` pointing at `url` (a Radicale or a proxy in front).
fn with_account(url: &str) -> (Harness, Arc<Recorder>) {
    let yes = Arc::new(Recorder::default());
    let h = Harness::new(yes.clone());
    h.add_account(
        "dav",
        AccountConfig::Caldav {
            url: url.into(),
            username: "alice".into(),
            auth: Default::default(),
        },
        PASSWORD,
    );
    (h, yes)
}

struct Dav {
    http: reqwest::Client,
    base: String,
}

impl Dav {
    fn new(server: &Radicale) -> Dav {
        Dav {
            http: reqwest::Client::new(),
            base: server.url(),
        }
    }
    async fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
        headers: &[(&str, &str)],
    ) -> (u16, String) {
        let mut r = self
            .http
            .request(
                reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
                format!("{}{path}", self.base),
            )
            .basic_auth("alice", Some(PASSWORD));
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        if let Some(b) = body {
            r = r.body(b);
        }
        let resp = r.send().await.unwrap();
        (resp.status().as_u16(), resp.text().await.unwrap())
    }
    async fn mkcalendar(&self, path: &str) {
        assert_eq!(self.request("MKCALENDAR", path, None, &[]).await.0, 201);
    }
    async fn put(&self, path: &str, ics: &str) {
        let status = self
            .request(
                "PUT",
                path,
                Some(ics.into()),
                &[("Content-Type", "text/calendar")],
            )
            .await
            .0;
        assert!(status == 201 || status == 204, "PUT {path}: {status}");
    }
    /// The event resources of a collection (hrefs).
    async fn list(&self, path: &str) -> Vec<String> {
        let (_, xml) = self
            .request(
                "PROPFIND",
                path,
                Some(
                    r#"<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>"#
                        .into(),
                ),
                &[("Depth", "1")],
            )
            .await;
        xml.split("<href>")
            .skip(1)
            .filter_map(|s| s.split("</href>").next())
            .filter(|h| h.ends_with(".ics"))
            .map(String::from)
            .collect()
    }
}

fn event(uid: &str, summary: &str, start: &str, end: &str, extra: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//other client//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:{start}\r\nDTEND:{end}\r\nSUMMARY:{summary}\r\n{extra}END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

/// A weekly series (Mondays 09:00 UTC, 6 times) without its second instance (EXDATE) and with
/// its third moved to 11:00 (a RECURRENCE-ID override), as another client would write it.
const SERIES: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//other client//EN\r\n\
BEGIN:VEVENT\r\nUID:weekly-1\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20261102T090000Z\r\nDTEND:20261102T093000Z\r\n\
RRULE:FREQ=WEEKLY;COUNT=6\r\nEXDATE:20261109T090000Z\r\nSUMMARY:Weekly sync\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:weekly-1\r\nDTSTAMP:20261101T000000Z\r\nRECURRENCE-ID:20261116T090000Z\r\nDTSTART:20261116T110000Z\r\n\
DTEND:20261116T113000Z\r\nSUMMARY:Weekly sync (moved)\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

fn titles_and_starts(out: &Value) -> Vec<(String, String)> {
    out["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["title"].as_str().unwrap().to_string(),
                e["start"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_calendar_creates_expands_finds_free_time_and_round_trips_ics() {
    let yes = Arc::new(Recorder::default());
    let h = Harness::new(yes.clone());
    let created = h.ok(
        "calendar_create",
        json!({"title": "Dentist", "start": "2026-12-01T10:00", "end": "2026-12-01T11:00", "timezone": "Asia/Shanghai", "location": "Main St", "reminders_minutes": [30]}),
    )
    .await;
    assert_eq!(created["calendar"], "local");
    h.ok("calendar_create", json!({"title": "Yoga", "start": "2026-12-01T07:30:00+08:00", "end": "2026-12-01T08:30:00+08:00", "recurrence": "FREQ=DAILY;COUNT=3", "timezone": "Asia/Shanghai"})).await;
    h.ok(
        "calendar_create",
        json!({"title": "Holiday", "start": "2026-12-02"}),
    )
    .await;

    let day = h
        .ok(
            "calendar_check",
            json!({"start": "2026-12-01", "end": "2026-12-03", "timezone": "Asia/Shanghai"}),
        )
        .await;
    let mut got = titles_and_starts(&day);
    got.sort();
    assert_eq!(
        got,
        vec![
            (
                "Dentist".to_string(),
                "2026-12-01T10:00:00+08:00".to_string()
            ),
            ("Holiday".into(), "2026-12-02".into()),
            ("Yoga".into(), "2026-12-01T07:30:00+08:00".into()),
            ("Yoga".into(), "2026-12-02T07:30:00+08:00".into()),
        ]
    );

    // Free time on Dec 1, 09:00–12:00 Shanghai: the dentist splits it.
    let free = h.ok(
        "calendar_find_free_time",
        json!({"start": "2026-12-01T09:00", "end": "2026-12-01T12:00", "duration_minutes": 45, "timezone": "Asia/Shanghai"}),
    )
    .await;
    let slots: Vec<(&str, &str)> = free["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["start"].as_str().unwrap(), s["end"].as_str().unwrap()))
        .collect();
    assert_eq!(
        slots,
        [
            ("2026-12-01T09:00:00+08:00", "2026-12-01T10:00:00+08:00"),
            ("2026-12-01T11:00:00+08:00", "2026-12-01T12:00:00+08:00")
        ]
    );

    // Delete one instance of the series, then export and import into a fresh data dir.
    let yoga = day["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["title"] == "Yoga" && e["start"] == "2026-12-02T07:30:00+08:00")
        .unwrap()
        .clone();
    h.ok(
        "calendar_delete",
        json!({"uid": yoga["uid"], "instance": yoga["instance"]}),
    )
    .await;
    let after = h.ok("calendar_check", json!({"start": "2026-12-01", "end": "2026-12-05", "timezone": "Asia/Shanghai", "query": "yoga"})).await;
    assert_eq!(
        after["events"].as_array().unwrap().len(),
        2,
        "3 instances minus the deleted one: {after}"
    );

    h.ok("calendar_export", json!({"path": "cal.ics"})).await;
    let text = std::fs::read_to_string(h.workspace.join("cal.ics")).unwrap();
    assert!(
        text.contains("EXDATE")
            && text.contains("RRULE:FREQ=DAILY;COUNT=3")
            && text.contains("VALARM"),
        "{text}"
    );
    let other = Harness::new(yes.clone());
    std::fs::copy(h.workspace.join("cal.ics"), other.workspace.join("in.ics")).unwrap();
    let imported = other.ok("calendar_import", json!({"path": "in.ics"})).await;
    assert_eq!(imported["imported"], 3);
    let again = other
        .ok(
            "calendar_check",
            json!({"start": "2026-12-01", "end": "2026-12-05", "timezone": "Asia/Shanghai"}),
        )
        .await;
    assert_eq!(
        again["events"],
        h.ok(
            "calendar_check",
            json!({"start": "2026-12-01", "end": "2026-12-05", "timezone": "Asia/Shanghai"})
        )
        .await["events"]
    );

    // Bad input names the fix; a private event needs no approval, invitations and deletes ask.
    let bad = h
        .call(
            "calendar_create",
            json!({"title": "x", "start": "next tuesday"}),
        )
        .await;
    assert!(
        bad.result
            .unwrap_err()
            .to_string()
            .contains("2026-11-23T14:00")
    );
    let bad = h
        .call(
            "calendar_create",
            json!({"title": "x", "start": "2026-12-01", "recurrence": "FREQ=SOMETIMES"}),
        )
        .await;
    assert!(bad.result.unwrap_err().to_string().contains("RRULE"));
    let asked: Vec<String> = yes
        .asked
        .lock()
        .unwrap()
        .iter()
        .map(|(t, _)| t.clone())
        .collect();
    assert_eq!(
        asked,
        ["calendar_delete"],
        "private events are allowed; a delete asks"
    );
    let invite = h.call("calendar_create", json!({"title": "Plan", "start": "2026-12-03T15:00", "attendees": ["alice@example.com"]})).await;
    assert!(invite.result.is_ok());
    let (tool, effects) = yes.asked.lock().unwrap().last().cloned().unwrap();
    assert_eq!(tool, "calendar_create", "an invitation asks");
    assert_eq!(
        effects,
        [Effect::CalendarWrite {
            calendar: "local".into(),
            attendees: vec!["alice@example.com".into()]
        }]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caldav_syncs_both_ways_with_a_recurring_exception_and_keeps_both_sides_of_a_conflict() {
    let server = tokio::task::spawn_blocking(|| Radicale::start(&[("alice", PASSWORD)]))
        .await
        .unwrap();
    let dav = Dav::new(&server);
    dav.mkcalendar("alice/work/").await;
    dav.put("alice/work/weekly-1.ics", SERIES).await;
    let (h, _) = with_account(&server.url());

    // Pull: discovery finds alice/work, the series expands with its exception and override.
    let sync = h.ok("calendar_sync", json!({})).await;
    assert_eq!(sync["reports"][0]["calendar"], "dav/work");
    assert_eq!(sync["reports"][0]["pulled"], 1, "{sync}");
    let nov = h.ok("calendar_check", json!({"start": "2026-11-01", "end": "2026-12-01", "timezone": "UTC", "calendars": ["dav/work"]})).await;
    assert_eq!(
        titles_and_starts(&nov),
        [
            (
                "Weekly sync".to_string(),
                "2026-11-02T09:00:00+00:00".to_string()
            ),
            (
                "Weekly sync (moved)".into(),
                "2026-11-16T11:00:00+00:00".into()
            ),
            ("Weekly sync".into(), "2026-11-23T09:00:00+00:00".into()),
            ("Weekly sync".into(), "2026-11-30T09:00:00+00:00".into()),
        ]
    );

    // Push: an event made here appears on the server, with a zone the server accepts.
    let made = h.ok("calendar_create", json!({"title": "Review", "start": "2026-11-25T14:00", "timezone": "Europe/Berlin", "calendar": "work"})).await;
    assert!(made.get("note").is_none(), "{made}");
    assert_eq!(dav.list("alice/work/").await.len(), 2);

    // Changes by another client come back: edit the series' title, delete nothing yet.
    dav.put(
        "alice/work/other.ics",
        &event(
            "other-1",
            "Lunch",
            "20261124T120000Z",
            "20261124T130000Z",
            "",
        ),
    )
    .await;
    dav.put(
        "alice/work/weekly-1.ics",
        &SERIES.replace("SUMMARY:Weekly sync\r\n", "SUMMARY:Weekly team sync\r\n"),
    )
    .await;
    let sync = h.ok("calendar_sync", json!({})).await;
    assert_eq!(sync["reports"][0]["pulled"], 2, "{sync}");
    let week = h
        .ok(
            "calendar_check",
            json!({"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC"}),
        )
        .await;
    let titles: Vec<String> = titles_and_starts(&week)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    assert_eq!(titles, ["Weekly team sync", "Lunch", "Review"]);

    // Delete both ways.
    assert_eq!(
        dav.request("DELETE", "alice/work/other.ics", None, &[])
            .await
            .0,
        200
    );
    let review_uid = made["uid"].as_str().unwrap();
    h.ok(
        "calendar_delete",
        json!({"uid": review_uid, "calendar": "work"}),
    )
    .await;
    // (the delete synced at once, which also pulled the server's delete)
    let week = h
        .ok(
            "calendar_check",
            json!({"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC"}),
        )
        .await;
    let titles: Vec<String> = titles_and_starts(&week)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    assert_eq!(titles, ["Weekly team sync"]);
    assert_eq!(dav.list("alice/work/").await, ["/alice/work/weekly-1.ics"]);

    // Conflict: the server's copy changes after our last sync, and we edit ours. The server's
    // version stays; ours becomes a visible copy on both sides; the conflict is recorded.
    dav.put(
        "alice/work/weekly-1.ics",
        &SERIES.replace(
            "SUMMARY:Weekly sync\r\n",
            "SUMMARY:Weekly sync (server edit)\r\n",
        ),
    )
    .await;
    let edit = h
        .ok(
            "calendar_update",
            json!({"uid": "weekly-1", "calendar": "work", "title": "Weekly sync (my edit)"}),
        )
        .await;
    assert!(
        edit["note"].as_str().unwrap().contains("conflict copy"),
        "{edit}"
    );
    let list = h.ok("calendar_list", json!({})).await;
    assert_eq!(list["conflicts"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list["conflicts"][0]["kept"], "server");
    let after = h
        .ok(
            "calendar_check",
            json!({"start": "2026-11-30", "end": "2026-12-01", "timezone": "UTC"}),
        )
        .await;
    let mut titles: Vec<String> = titles_and_starts(&after)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    titles.sort();
    assert_eq!(
        titles,
        [
            "Weekly sync (my edit) (conflict copy)",
            "Weekly sync (server edit)"
        ]
    );
    assert_eq!(
        dav.list("alice/work/").await.len(),
        2,
        "the copy was pushed too"
    );
    assert_eq!(list["queued_changes"], 0);
}

/// A proxy in front of Radicale that fails on demand: `fail_get_at` makes the Nth GET answer 500
/// once; `down` makes every request 503.
struct FlakyProxy {
    port: u16,
    gets: Arc<AtomicUsize>,
    fail_get_at: Arc<AtomicUsize>,
    down: Arc<std::sync::atomic::AtomicBool>,
}

async fn flaky_proxy(upstream: String) -> FlakyProxy {
    use axum::body::Bytes;
    use axum::http::{HeaderMap, Method, StatusCode, Uri};
    let gets = Arc::new(AtomicUsize::new(0));
    let fail_get_at = Arc::new(AtomicUsize::new(usize::MAX));
    let down = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let client = reqwest::Client::new();
    let (g, f, d) = (gets.clone(), fail_get_at.clone(), down.clone());
    let handler = move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
        let (client, upstream, g, f, d) = (
            client.clone(),
            upstream.clone(),
            g.clone(),
            f.clone(),
            d.clone(),
        );
        async move {
            if d.load(Ordering::SeqCst) {
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    HeaderMap::new(),
                    Bytes::new(),
                );
            }
            if method == Method::GET
                && g.fetch_add(1, Ordering::SeqCst) + 1 == f.load(Ordering::SeqCst)
            {
                return (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    HeaderMap::new(),
                    Bytes::from_static(b"boom"),
                );
            }
            let mut request = client.request(
                reqwest::Method::from_bytes(method.as_str().as_bytes()).unwrap(),
                format!("{upstream}{}", uri.path().trim_start_matches('/')),
            );
            for (k, v) in headers.iter().filter(|(k, _)| *k != "host") {
                request = request.header(k.as_str(), v.as_bytes());
            }
            let response = request.body(body.to_vec()).send().await.unwrap();
            let status = StatusCode::from_u16(response.status().as_u16()).unwrap();
            let mut out = HeaderMap::new();
            for (k, v) in response.headers() {
                if let (Ok(name), Ok(value)) = (
                    axum::http::HeaderName::from_bytes(k.as_str().as_bytes()),
                    axum::http::HeaderValue::from_bytes(v.as_bytes()),
                ) {
                    out.insert(name, value);
                }
            }
            out.remove("content-length");
            out.remove("transfer-encoding");
            (status, out, response.bytes().await.unwrap())
        }
    };
    let app = axum::Router::new().fallback(handler);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    FlakyProxy {
        port,
        gets,
        fail_get_at,
        down,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_failing_mid_sync_loses_nothing_and_offline_edits_are_queued() {
    let server = tokio::task::spawn_blocking(|| Radicale::start(&[("alice", PASSWORD)]))
        .await
        .unwrap();
    let dav = Dav::new(&server);
    dav.mkcalendar("alice/home/").await;
    for i in 1..=3 {
        dav.put(
            &format!("alice/home/e{i}.ics"),
            &event(
                &format!("e{i}"),
                &format!("Event {i}"),
                &format!("2026112{i}T100000Z"),
                &format!("2026112{i}T110000Z"),
                "",
            ),
        )
        .await;
    }
    let proxy = flaky_proxy(server.url()).await;
    let (h, _) = with_account(&format!("http://127.0.0.1:{}/", proxy.port));

    // The second GET fails: the sync stops with a clear error, keeping what it pulled.
    proxy.fail_get_at.store(2, Ordering::SeqCst);
    let first = h.ok("calendar_sync", json!({})).await;
    let report = &first["reports"][0];
    assert_eq!(report["pulled"], 1, "{first}");
    assert!(
        report["error"].as_str().unwrap().contains("HTTP 500"),
        "{first}"
    );
    let list = h.ok("calendar_list", json!({})).await;
    assert!(
        list["calendars"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["last_error"].as_str().is_some_and(|e| e.contains("500"))),
        "{list}"
    );

    // Offline: an edit is saved here and queued, never lost.
    proxy.down.store(true, Ordering::SeqCst);
    let offline = h.ok("calendar_create", json!({"title": "Written offline", "start": "2026-11-26T09:00:00Z", "calendar": "home"})).await;
    assert!(
        offline["note"].as_str().unwrap().contains("queued"),
        "{offline}"
    );
    let list = h.ok("calendar_list", json!({})).await;
    assert_eq!(list["queued_changes"], 1);
    let cached = h
        .ok(
            "calendar_check",
            json!({"start": "2026-11-20", "end": "2026-11-30", "timezone": "UTC"}),
        )
        .await;
    assert!(
        cached["notes"][0].as_str().unwrap().contains("last synced"),
        "{cached}"
    );

    // Back online: the retry pulls the rest and pushes the queued event.
    proxy.down.store(false, Ordering::SeqCst);
    let second = h.ok("calendar_sync", json!({})).await;
    let report = &second["reports"][0];
    assert!(report["error"].is_null(), "{second}");
    assert_eq!(
        (report["pulled"].as_u64(), report["pushed"].as_u64()),
        (Some(2), Some(1)),
        "{second}"
    );
    assert_eq!(dav.list("alice/home/").await.len(), 4);
    let all = h
        .ok(
            "calendar_check",
            json!({"start": "2026-11-20", "end": "2026-11-30", "timezone": "UTC"}),
        )
        .await;
    assert_eq!(all["events"].as_array().unwrap().len(), 4, "{all}");
    assert!(proxy.gets.load(Ordering::SeqCst) >= 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_names_the_account() {
    let server = tokio::task::spawn_blocking(|| Radicale::start(&[("alice", "the-real-one")]))
        .await
        .unwrap();
    let (h, _) = with_account(&server.url());
    let out = h.call("calendar_sync", json!({"account": "dav"})).await;
    let error = out.result.unwrap_err().to_string();
    assert!(
        error.contains("dav") && error.contains("password or sign-in"),
        "{error}"
    );
    let none = h.call("calendar_sync", json!({"account": "nope"})).await;
    assert!(
        none.result
            .unwrap_err()
            .to_string()
            .contains("cowork account add")
    );
}

/// What a Google or Outlook export holds beyond our own fixtures: all-day dates, floating
/// times, TRANSP, a VTIMEZONE and a VALARM. Dates stay dates in every zone, floating times are
/// local wherever the person is, an out-of-office blocks free time, and what we export is valid
/// for another parser (Python's `icalendar`, from tests/peers).
const REAL_WORLD: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\r\n\
BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\n\
BEGIN:DAYLIGHT\r\nDTSTART:19700329T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n\
BEGIN:VEVENT\r\nUID:urlaub\r\nDTSTAMP:20261101T000000Z\r\nDTSTART;VALUE=DATE:20261202\r\nDTEND;VALUE=DATE:20261205\r\nTRANSP:OPAQUE\r\nSUMMARY:Urlaub\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:birthday\r\nDTSTAMP:20261101T000000Z\r\nDTSTART;VALUE=DATE:20261201\r\nDTEND;VALUE=DATE:20261202\r\nTRANSP:TRANSPARENT\r\nSUMMARY:Ada's birthday\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:floating\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20261208T083000\r\nDTEND:20261208T090000\r\nSUMMARY:Morning run\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:floating-weekly\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20261207T070000\r\nDTEND:20261207T071500\r\nRRULE:FREQ=DAILY;COUNT=4\r\nSUMMARY:Stretch\r\nEND:VEVENT\r\n\
BEGIN:VEVENT\r\nUID:review\r\nDTSTAMP:20261101T000000Z\r\nDTSTART;TZID=Europe/Berlin:20261201T100000\r\nDTEND;TZID=Europe/Berlin:20261201T110000\r\nSUMMARY:Review\r\n\
BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT30M\r\nDESCRIPTION:Review\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dates_stay_dates_floating_stays_local_out_of_office_blocks_and_exports_are_valid() {
    let h = Harness::new(Arc::new(Recorder::default()));
    std::fs::write(h.workspace.join("google.ics"), REAL_WORLD).unwrap();
    let imported = h.ok("calendar_import", json!({"path": "google.ics"})).await;
    assert_eq!(imported["imported"], 5, "{imported}");
    let find = |out: &Value, title: &str| -> Vec<(String, String)> {
        out["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["title"] == title)
            .map(|e| {
                (
                    e["start"].as_str().unwrap().to_string(),
                    e["end"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // A 3-day all-day event is Dec 2–4 wherever it is viewed from (not 4 days, not a day early).
    for zone in [
        "Europe/Berlin",
        "America/New_York",
        "Asia/Tokyo",
        "Pacific/Auckland",
    ] {
        let week = h
            .ok(
                "calendar_check",
                json!({"start": "2026-11-30", "end": "2026-12-10", "timezone": zone}),
            )
            .await;
        assert_eq!(
            find(&week, "Urlaub"),
            [("2026-12-02".to_string(), "2026-12-04".to_string())],
            "{zone}"
        );
    }
    // A floating 08:30 is 08:30 in Tokyo and in Berlin: local wherever the person is.
    for (zone, start) in [
        ("Asia/Tokyo", "2026-12-08T08:30:00+09:00"),
        ("Europe/Berlin", "2026-12-08T08:30:00+01:00"),
    ] {
        let day = h
            .ok(
                "calendar_check",
                json!({"start": "2026-12-08", "end": "2026-12-09", "timezone": zone}),
            )
            .await;
        assert_eq!(
            find(&day, "Morning run").first().map(|(s, _)| s.as_str()),
            Some(start),
            "{zone}: {day}"
        );
    }
    // Free time: the opaque out-of-office blocks Dec 2–4; the transparent birthday blocks nothing.
    let free = h
        .ok(
            "calendar_find_free_time",
            json!({"start": "2026-12-01", "end": "2026-12-05", "duration_minutes": 60, "timezone": "Europe/Berlin"}),
        )
        .await;
    let days: Vec<&str> = free["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["start"].as_str().unwrap()[..10])
        .collect();
    assert!(days.contains(&"2026-12-01"), "{free}");
    assert!(
        !days
            .iter()
            .any(|d| ["2026-12-02", "2026-12-03", "2026-12-04"].contains(d)),
        "offered time on the out-of-office days: {free}"
    );
    // One instance of a floating series is deleted by its local `instance`, in the series' form.
    let stretch = h
        .ok(
            "calendar_check",
            json!({"start": "2026-12-07", "end": "2026-12-11", "timezone": "Asia/Tokyo", "query": "stretch"}),
        )
        .await;
    let second = stretch["events"][1].clone();
    assert_eq!(second["instance"], "2026-12-08T07:00:00", "{stretch}");
    h.ok(
        "calendar_delete",
        json!({"uid": second["uid"], "instance": second["instance"]}),
    )
    .await;
    let after = h
        .ok(
            "calendar_check",
            json!({"start": "2026-12-07", "end": "2026-12-11", "timezone": "Europe/Berlin", "query": "stretch"}),
        )
        .await;
    assert_eq!(
        find(&after, "Stretch")
            .iter()
            .map(|(s, _)| s.as_str())
            .collect::<Vec<_>>(),
        [
            "2026-12-07T07:00:00+01:00",
            "2026-12-09T07:00:00+01:00",
            "2026-12-10T07:00:00+01:00"
        ]
    );

    // The export: no DTSTAMP or UID where RFC 5545 forbids them, and Python's icalendar reads
    // every component, zones and alarms included.
    h.ok("calendar_export", json!({"path": "out.ics"})).await;
    let path = h.workspace.join("out.ics");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("EXDATE:20261208T070000\r\n"), "{text}");
    let (ok, said) = python_icalendar_verdict(&path);
    assert!(ok, "{said}\n{text}");
    assert_eq!(said.trim(), "valid 5", "{text}");
}

/// The iCalendar files Python's `icalendar` ships as its own test data (its wheel, installed in
/// tests/peers by tests/setup.sh): each one is imported or refused with a reason — never a
/// panic — and what we then export of them all is valid for that library.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_icalendar_test_calendars_import_or_are_refused_and_export_valid() {
    let site = cowork_tests::peers::peers_dir().join("../lib");
    let dir = std::fs::read_dir(&site)
        .expect("tests/peers/.venv exists (tests/setup.sh)")
        .map(|e| {
            e.unwrap()
                .path()
                .join("site-packages/icalendar/tests/calendars")
        })
        .find(|p| p.is_dir())
        .expect("the icalendar wheel's test calendars (tests/setup.sh installs icalendar)");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ics"))
        .collect();
    files.sort();
    let h = Arc::new(Harness::new(Arc::new(Recorder::default())));
    let (mut imported, mut empty, mut refused, mut crashed) = (0, 0, 0, Vec::new());
    let mut reasons = Vec::new();
    for file in &files {
        std::fs::copy(file, h.workspace.join("in.ics")).unwrap();
        // Its own task: a panic would surface as a failed join, counted, not fatal here.
        let call = tokio::spawn({
            let h = h.clone();
            async move { h.call("calendar_import", json!({"path": "in.ics"})).await }
        })
        .await;
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        match call {
            Err(_) => crashed.push(name),
            Ok(out) => match out.result {
                Ok(result) => {
                    let value = result.structured.clone().unwrap_or_default();
                    if value["imported"].as_u64().unwrap_or(0) > 0 {
                        imported += 1;
                    } else if value["skipped"].as_array().is_some_and(Vec::is_empty) {
                        // No VEVENT in it (to-dos, free/busy, zones only): nothing to import.
                        empty += 1;
                    } else {
                        refused += 1;
                        reasons.push(format!("{name}: {value}"));
                    }
                }
                Err(e) => {
                    let why = e.to_string();
                    assert!(
                        why.len() > 20 && !why.contains("panicked"),
                        "{name}: an unclear refusal: {why}"
                    );
                    refused += 1;
                    reasons.push(format!("{name}: {why}"));
                }
            },
        }
    }
    println!(
        "icalendar test calendars: {} files — {imported} imported, {empty} without events, {refused} refused, {} crashed",
        files.len(),
        crashed.len()
    );
    for reason in &reasons {
        println!("  refused {reason}");
    }
    assert!(files.len() >= 100, "{}", files.len());
    assert!(crashed.is_empty(), "crashed on {crashed:?}");
    h.ok("calendar_export", json!({"path": "all.ics"})).await;
    let (ok, said) = python_icalendar_verdict(&h.workspace.join("all.ics"));
    println!("export of them all: {said}");
    assert!(ok && said.starts_with("valid"), "{said}");

    // And through a real CalDAV server: the export imported into a Radicale calendar is pushed
    // object by object (Radicale validates each), and a second client pulls them all back.
    let server = tokio::task::spawn_blocking(|| Radicale::start(&[("alice", PASSWORD)]))
        .await
        .unwrap();
    Dav::new(&server).mkcalendar("alice/corpus/").await;
    let (one, _) = with_account(&server.url());
    one.ok("calendar_sync", json!({})).await;
    std::fs::copy(h.workspace.join("all.ics"), one.workspace.join("all.ics")).unwrap();
    let imported = one
        .ok(
            "calendar_import",
            json!({"path": "all.ics", "calendar": "corpus"}),
        )
        .await;
    let objects = imported["imported"].as_u64().unwrap();
    // The import pushed what it could; a sync offers the rest again and says why it stays.
    let sync = one.ok("calendar_sync", json!({})).await;
    let report = &sync["reports"][0];
    assert!(report["error"].is_null(), "{sync}");
    let refused: Vec<&str> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let on_server = Dav::new(&server).list("alice/corpus/").await.len() as u64;
    assert_eq!(on_server + refused.len() as u64, objects, "{sync}");
    println!(
        "round trip through Radicale: {objects} objects, {on_server} stored, {} refused by the server:",
        refused.len()
    );
    for r in &refused {
        println!("  {r}");
    }
    assert!(
        refused.iter().all(|r| r.contains("HTTP 400")),
        "{refused:#?}"
    );
    let (two, _) = with_account(&server.url());
    let pulled = two.ok("calendar_sync", json!({})).await;
    assert_eq!(
        pulled["reports"][0]["pulled"].as_u64(),
        Some(on_server),
        "{pulled}"
    );
}

/// Python's `icalendar` (tests/peers) on an exported file: "valid N" (N events), or each
/// problem — DTSTAMP/UID where RFC 5545 forbids or requires them, a component the library
/// flags, a zone or a start it cannot read.
fn python_icalendar_verdict(path: &std::path::Path) -> (bool, String) {
    let check = r#"
import sys, icalendar
cal = icalendar.Calendar.from_ical(open(sys.argv[1], 'rb').read())
stamped = {'VEVENT', 'VTODO', 'VJOURNAL', 'VFREEBUSY'}
bad = [f"{c.name} has {p}" for c in cal.walk() for p in ('DTSTAMP', 'UID')
       if c.name not in stamped and c.name != 'VCALENDAR' and p in c]
bad += [f"{c.name} lacks {p}" for c in cal.walk() if c.name in stamped for p in ('DTSTAMP', 'UID') if p not in c]
bad += [f"{c.name}: {e}" for c in cal.walk() for e in c.errors]
for tz in cal.walk('VTIMEZONE'):
    tz.to_tz()
for ev in cal.walk('VEVENT'):
    ev.decoded('DTSTART')
print('\n'.join(bad) or 'valid', len(cal.walk('VEVENT')))
"#;
    let out = std::process::Command::new(cowork_tests::peers::peers_dir().join("python"))
        .args(["-c", check])
        .arg(path)
        .output()
        .expect("tests/peers/.venv exists (tests/setup.sh)");
    (out.status.success(), cowork_tests::output_text(&out))
}

/// The text of a calendar change's error.
async fn refused(h: &Harness, tool: &str, args: Value) -> String {
    match h.call(tool, args).await.result {
        Ok(o) => panic!("{tool} should have been refused: {:?}", o.structured),
        Err(e) => e.to_string(),
    }
}

async fn titles_on(h: &Harness, day: &str, next: &str) -> Vec<String> {
    let out = h
        .ok(
            "calendar_check",
            json!({"start": day, "end": next, "timezone": "UTC"}),
        )
        .await;
    titles_and_starts(&out)
        .into_iter()
        .map(|(t, _)| t)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_changes_are_taken_back_newest_first_and_an_undo_can_be_undone() {
    let yes = Arc::new(Recorder::default());
    let h = Harness::new(yes.clone());
    let day = ("2026-12-07", "2026-12-08");
    let made = h
        .ok(
            "calendar_create",
            json!({"title": "Dentist", "start": "2026-12-07T09:00", "timezone": "UTC"}),
        )
        .await;
    let uid = made["uid"].as_str().unwrap();
    let created = made["change"].as_i64().unwrap();
    let updated = h
        .ok(
            "calendar_update",
            json!({"uid": uid, "title": "Dentist (moved room)"}),
        )
        .await["change"]
        .as_i64()
        .unwrap();
    let deleted = h.ok("calendar_delete", json!({"uid": uid})).await["change"]
        .as_i64()
        .unwrap();
    assert!(created < updated && updated < deleted);
    assert!(titles_on(&h, day.0, day.1).await.is_empty());

    let listed = h.ok("calendar_changes", json!({})).await;
    let actions: Vec<(i64, &str)> = listed["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_i64().unwrap(), c["action"].as_str().unwrap()))
        .collect();
    assert_eq!(
        actions,
        [
            (deleted, "deleted"),
            (updated, "updated"),
            (created, "created")
        ]
    );
    assert_eq!(listed["changes"][0]["conversation"], "conv");

    // The creation cannot be taken back past the later changes: they are named, newest first.
    let err = refused(&h, "calendar_undo", json!({"change": created})).await;
    assert!(
        err.contains(&format!("take back #{deleted}, #{updated} first")),
        "{err}"
    );

    // The delete, then the update, then the creation: each puts the earlier version back.
    let undone = h.ok("calendar_undo", json!({"change": deleted})).await;
    assert_eq!(undone["undid_action"], "deleted");
    assert_eq!(titles_on(&h, day.0, day.1).await, ["Dentist (moved room)"]);
    let err = refused(&h, "calendar_undo", json!({"change": deleted})).await;
    assert!(err.contains("already taken back"), "{err}");
    h.ok("calendar_undo", json!({"change": updated})).await;
    assert_eq!(titles_on(&h, day.0, day.1).await, ["Dentist"]);
    let removal = h.ok("calendar_undo", json!({"change": created})).await;
    assert!(titles_on(&h, day.0, day.1).await.is_empty());

    // An undo is a change like any other: taking it back creates the event again.
    h.ok("calendar_undo", json!({"change": removal["change"]}))
        .await;
    assert_eq!(titles_on(&h, day.0, day.1).await, ["Dentist"]);
    let err = refused(&h, "calendar_undo", json!({"change": 99_999})).await;
    assert!(err.contains("calendar_changes lists them"), "{err}");

    // Changing or deleting an event that invites people mails them: the review says so even
    // when the call does not name them.
    let plan = h.ok("calendar_create", json!({"title": "Plan", "start": "2026-12-08T15:00", "timezone": "UTC", "attendees": ["bob@example.com"]})).await;
    h.ok(
        "calendar_update",
        json!({"uid": plan["uid"], "title": "Plan v2"}),
    )
    .await;
    let (tool, effects) = yes.asked.lock().unwrap().last().cloned().unwrap();
    assert_eq!(tool, "calendar_update");
    assert_eq!(
        effects,
        [Effect::CalendarWrite {
            calendar: "local".into(),
            attendees: vec!["bob@example.com".into()]
        }]
    );
    // Written as another client may write it (names are case-insensitive, RFC 5545 §3.1), and
    // with a value that is no address: still named, and the event can still be changed.
    std::fs::write(
        h.workspace.join("odd.ics"),
        event(
            "odd-1",
            "Odd",
            "20261209T100000Z",
            "20261209T110000Z",
            "attendee:MAILTO:eve@example.com\r\nATTENDEE:room 4\r\n",
        ),
    )
    .unwrap();
    h.ok("calendar_import", json!({"path": "odd.ics"})).await;
    h.ok(
        "calendar_update",
        json!({"uid": "odd-1", "title": "Odd v2"}),
    )
    .await;
    let (_, effects) = yes.asked.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        effects,
        [Effect::CalendarWrite {
            calendar: "local".into(),
            attendees: vec!["eve@example.com".into(), "room 4".into()]
        }]
    );
}

impl Dav {
    /// A resource's ETag and text.
    async fn get(&self, path: &str) -> (u16, Option<String>, String) {
        let resp = self
            .http
            .get(format!("{}{path}", self.base))
            .basic_auth("alice", Some(PASSWORD))
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let etag = resp
            .headers()
            .get("etag")
            .map(|e| e.to_str().unwrap().to_string());
        (status, etag, resp.text().await.unwrap())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caldav_change_is_taken_back_on_the_server_as_a_new_version() {
    let server = tokio::task::spawn_blocking(|| Radicale::start(&[("alice", PASSWORD)]))
        .await
        .unwrap();
    let dav = Dav::new(&server);
    dav.mkcalendar("alice/work/").await;
    let (h, _) = with_account(&server.url());
    h.ok("calendar_sync", json!({})).await;

    let made = h.ok("calendar_create", json!({"title": "Review", "start": "2026-12-09T14:00", "timezone": "UTC", "calendar": "work"})).await;
    let uid = made["uid"].as_str().unwrap();
    let hrefs = dav.list("alice/work/").await;
    assert_eq!(hrefs.len(), 1);
    let path = hrefs[0].trim_start_matches('/').to_string();
    let (_, first_etag, _) = dav.get(&path).await;

    // An update taken back: the server holds the first title again, as a newer version.
    let edit = h
        .ok(
            "calendar_update",
            json!({"uid": uid, "calendar": "work", "title": "Review (draft)"}),
        )
        .await;
    let (_, edited_etag, text) = dav.get(&path).await;
    assert!(text.contains("SUMMARY:Review (draft)"), "{text}");
    let undone = h
        .ok("calendar_undo", json!({"change": edit["change"]}))
        .await;
    assert!(undone.get("note").is_none(), "pushed at once: {undone}");
    let (_, restored_etag, text) = dav.get(&path).await;
    assert!(
        text.contains("SUMMARY:Review\r\n") || text.contains("SUMMARY:Review\n"),
        "{text}"
    );
    assert!(text.contains("SEQUENCE:2"), "above the edit's 1: {text}");
    assert_ne!(restored_etag, first_etag);
    assert_ne!(restored_etag, edited_etag);

    // A delete taken back: the object is on the server again.
    let gone = h
        .ok("calendar_delete", json!({"uid": uid, "calendar": "work"}))
        .await;
    assert!(dav.list("alice/work/").await.is_empty());
    h.ok("calendar_undo", json!({"change": gone["change"]}))
        .await;
    let hrefs = dav.list("alice/work/").await;
    assert_eq!(hrefs.len(), 1, "put back on the server");
    let path = hrefs[0].trim_start_matches('/').to_string();
    let (status, _, text) = dav.get(&path).await;
    assert_eq!(status, 200);
    assert!(text.contains(&format!("UID:{uid}")), "{text}");

    // Another client edits it; after a sync, taking back our last change would lose that edit:
    // refused, and the other client's version stays on both sides.
    let mine = h
        .ok(
            "calendar_update",
            json!({"uid": uid, "calendar": "work", "location": "Room 4"}),
        )
        .await;
    let other = event(
        uid,
        "Review (moved by Bob)",
        "20261209T150000Z",
        "20261209T160000Z",
        "SEQUENCE:9\r\n",
    );
    dav.put(&path, &other).await;
    h.ok("calendar_sync", json!({})).await;
    let err = refused(&h, "calendar_undo", json!({"change": mine["change"]})).await;
    assert!(err.contains("would lose that edit"), "{err}");
    assert!(dav.get(&path).await.2.contains("Review (moved by Bob)"));
    assert_eq!(
        titles_on(&h, "2026-12-09", "2026-12-10").await,
        ["Review (moved by Bob)"]
    );

    // Taking back the creation is refused too while later changes stand; the creation of a
    // fresh event is taken back off the server.
    let fresh = h.ok("calendar_create", json!({"title": "Standup", "start": "2026-12-10T09:00", "timezone": "UTC", "calendar": "work"})).await;
    assert_eq!(dav.list("alice/work/").await.len(), 2);
    h.ok("calendar_undo", json!({"change": fresh["change"]}))
        .await;
    assert_eq!(dav.list("alice/work/").await.len(), 1);
}
