//! Calendar and mail figures (with their targets):
//! - `calendar_check` of one week through the full gate (scheduler, policy, audit) over 10k
//!   events of which 1k are recurring series: p50 and p95 (target p50 ≤ 10 ms), and the same
//!   query on the family's index alone, to show what the gate adds;
//! - `email_check` listing 1,000 headers from a local Dovecot through the gate (target ≤ 1 s),
//!   next to Python's imaplib fetching the same headers (a plain client as the yardstick).
//!
//!     cargo bench -p cowork-tests --bench personal   (CAL_BENCH_EVENTS=10000, MAIL_BENCH_MESSAGES=1000, BENCH_RUNS=50)

use cowork_core::{CallRequest, Caller, DenyApprover};
use cowork_tests::Harness;
use cowork_tests::bench::{env, ms, percentile};
use cowork_tests::peers::MailServer;
use serde_json::json;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `events` events over two years around 2026-11: every tenth a weekly or daily series.
fn calendar_file(events: usize) -> String {
    let mut ics = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n");
    let base = chrono::NaiveDate::from_ymd_opt(2025, 11, 1).unwrap();
    for i in 0..events {
        let day = base + chrono::Duration::days((i * 7919 % 730) as i64);
        let hour = 8 + i % 10;
        let start = format!("{}T{hour:02}0000Z", day.format("%Y%m%d"));
        let end = format!("{}T{hour:02}4500Z", day.format("%Y%m%d"));
        let rule = match i % 10 {
            0 if i % 20 == 0 => "RRULE:FREQ=WEEKLY;BYDAY=MO,WE\r\n",
            0 => "RRULE:FREQ=DAILY;COUNT=200\r\n",
            _ => "",
        };
        let _ = write!(
            ics,
            "BEGIN:VEVENT\r\nUID:ev-{i}\r\nDTSTAMP:20251101T000000Z\r\nDTSTART:{start}\r\nDTEND:{end}\r\n{rule}SUMMARY:Event {i}\r\nEND:VEVENT\r\n"
        );
    }
    ics.push_str("END:VCALENDAR\r\n");
    ics
}

fn main() {
    let events = env("CAL_BENCH_EVENTS", 10_000);
    let messages = env("MAIL_BENCH_MESSAGES", 1_000);
    let runs = env("BENCH_RUNS", 50).max(3);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let h = Harness::new(Arc::new(DenyApprover));
    let call = |tool: &str, args: serde_json::Value| {
        let out = rt.block_on(
            h.scheduler
                .call(CallRequest::new(tool, args, Caller::Cli, "bench")),
        );
        out.result
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
            .structured
            .unwrap()
    };

    // Calendar: import, then query one week (the one starting 2026-11-23) repeatedly.
    std::fs::write(h.workspace.join("bench.ics"), calendar_file(events)).unwrap();
    let t = Instant::now();
    let imported = call("calendar_import", json!({"path": "bench.ics"}));
    println!(
        "calendar: imported {} events ({} recurring) in {:.2} s",
        imported["imported"],
        events / 10,
        t.elapsed().as_secs_f64()
    );
    let week =
        json!({"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC", "limit": 2000});
    let mut gate = Vec::new();
    let mut found = 0;
    for run in 0..=runs {
        let t = Instant::now();
        let out = call("calendar_check", week.clone());
        if run > 0 {
            gate.push(t.elapsed());
        }
        found = out["events"].as_array().unwrap().len();
    }
    let (p50, p95) = (percentile(&mut gate, 0.5), percentile(&mut gate, 0.95));
    println!(
        "calendar_check, one week of {events} events ({found} instances), through the gate: p50 {:.2} ms, p95 {:.2} ms (target p50 ≤ 10 ms)",
        ms(p50),
        ms(p95)
    );
    // The same range with a filter that matches nothing: the index and expansion without the
    // cost of returning (serializing, validating, auditing) a thousand events.
    let mut quiet = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        call(
            "calendar_check",
            json!({"start": "2026-11-23", "end": "2026-11-30", "timezone": "UTC", "query": "no such title"}),
        );
        quiet.push(t.elapsed());
    }
    println!(
        "  the same week, nothing returned (index + expansion + gate): p50 {:.2} ms",
        ms(percentile(&mut quiet, 0.5))
    );

    // Mail: deliver the messages, then list all their headers.
    let server = MailServer::start(&[("bench", "bench-pw")]);
    h.add_account("bench", server.account("bench"), "bench-pw");
    let deliver = format!(
        "import smtplib\ns=smtplib.SMTP('127.0.0.1',{});s.login('bench','bench-pw')\n\
for i in range({messages}):\n  s.sendmail('a@example.test',['bench@example.test'],('Subject: message %d\\r\\nFrom: Sender <a@example.test>\\r\\nDate: Mon, 23 Nov 2026 10:00:00 +0000\\r\\n\\r\\nbody %d\\r\\n' % (i,i)).encode())\ns.quit()",
        server.smtp_port
    );
    assert!(
        std::process::Command::new("python3")
            .args(["-c", &deliver])
            .status()
            .unwrap()
            .success()
    );
    let yardstick = format!(
        "import imaplib,time\nm=imaplib.IMAP4('127.0.0.1',{});m.login('bench','bench-pw');m.select('INBOX',readonly=True)\n\
t=time.perf_counter();u=m.uid('search',None,'ALL')[1][0].split();r=m.uid('fetch',','.join(x.decode() for x in u),'(UID FLAGS RFC822.SIZE BODY.PEEK[HEADER.FIELDS (FROM SUBJECT DATE)])');print((time.perf_counter()-t)*1000)",
        server.imap_port
    );
    let mut ours = Vec::new();
    let mut python = Vec::new();
    let mail_runs = runs.min(10);
    for run in 0..=mail_runs {
        let t = Instant::now();
        let out = call("email_check", json!({"account": "bench", "limit": 1000}));
        let took = t.elapsed();
        assert_eq!(
            out["messages"].as_array().unwrap().len(),
            messages.min(1000)
        );
        let py = std::process::Command::new("python3")
            .args(["-c", &yardstick])
            .output()
            .unwrap();
        let py_ms: f64 = String::from_utf8_lossy(&py.stdout)
            .trim()
            .parse()
            .unwrap_or_else(|_| {
                panic!(
                    "the imaplib yardstick failed: {}",
                    String::from_utf8_lossy(&py.stderr)
                )
            });
        if run > 0 {
            ours.push(took);
            python.push(Duration::from_secs_f64(py_ms / 1e3));
        }
    }
    let (ours50, py50) = (percentile(&mut ours, 0.5), percentile(&mut python, 0.5));
    println!(
        "email_check, {} headers from Dovecot, through the gate (connect + login + search + fetch + decode): median {:.1} ms (target ≤ 1000 ms); imaplib search + fetch alone: {:.1} ms",
        messages.min(1000),
        ms(ours50),
        ms(py50)
    );
}
