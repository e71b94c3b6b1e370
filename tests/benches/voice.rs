//! Voice figures (with their targets), with the model setup installs (Whisper tiny.en, ggml):
//! - speech-to-text real-time factor: transcription time / audio length, on a 5-s utterance and
//!   on an 11-s real recording (target ≤ 0.2);
//! - end of speech → text for a 5-s utterance: the recording ends once the detector has heard
//!   `Endpoints::silence` of quiet after the last word, then the kept speech is transcribed; both
//!   parts are reported (target ≤ 1 s for the part after the recording ends);
//! - text-to-speech time to first audio: `Speaker::say` from the call to the first samples handed
//!   to the output device (ALSA's file plugin here; target ≤ 150 ms);
//! - memory with voice unused: no model resident, and the process's RSS before and after a use.
//!
//!     cargo bench -p cowork-tests --bench voice   (BENCH_RUNS=20)

use cowork_tests::bench::{env, ms, percentile};
use cowork_tests::speech::whisper_dir;
use cowork_voice::{Endpointer, Endpoints, Speaker, Speech, Stopped, load_audio};
use std::process::Command;
use std::time::{Duration, Instant};

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb / 1024.0
}

fn median(v: &mut [Duration]) -> Duration {
    percentile(v, 0.5)
}

fn main() {
    let runs = env("BENCH_RUNS", 20);
    let dir = tempfile::tempdir().unwrap();
    // A speaker that is a file, for cpal (set before any audio library reads the environment).
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".asoundrc"),
        format!(
            "pcm.speaker_file {{ type file; slave.pcm \"null\"; file \"{}/speaker.raw\"; format raw }}\n\
             pcm.!default {{ type plug; slave {{ pcm \"speaker_file\"; format S16_LE; rate 22050; channels 1 }} }}\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let model = whisper_dir().join("ggml-tiny.en.bin");
    // The real recording setup fetched (tests/setup.sh), found before HOME changes.
    let jfk = std::path::PathBuf::from(std::env::var("HOME").unwrap())
        .join(".cache/cowork/corpora/jfk/jfk.wav");
    // SAFETY: no other thread exists yet.
    unsafe {
        std::env::set_var("HOME", &home);
        std::env::remove_var("PULSE_SERVER");
    }

    let speech = Speech::new(model);
    let rss_unused = rss_mb();
    assert!(!speech.is_loaded(), "nothing loaded before use");

    // A 5-s utterance (espeak-ng), and quiet after it as a microphone would hear.
    let wav = dir.path().join("five.wav");
    let made = Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "150", "-w"])
        .arg(&wav)
        .arg("please move my meeting with the design team from Tuesday afternoon to Thursday morning and tell them why")
        .status()
        .unwrap();
    assert!(made.success());
    let utterance = load_audio(&wav).unwrap();
    let utterance_s = utterance.len() as f64 / 16_000.0;

    let recording = load_audio(&jfk).unwrap();
    let recording_s = recording.len() as f64 / 16_000.0;

    let started = Instant::now();
    speech.transcribe(&utterance).unwrap();
    let first_use = started.elapsed();
    let rss_loaded = rss_mb();

    let (mut short, mut long, mut after_end) = (Vec::new(), Vec::new(), Vec::new());
    let mut heard_at_end = 0.0;
    for _ in 0..runs {
        let t = Instant::now();
        speech.transcribe(&utterance).unwrap();
        short.push(t.elapsed());
        let t = Instant::now();
        speech.transcribe(&recording).unwrap();
        long.push(t.elapsed());
        // The microphone's path: the detector ends the recording after the quiet, then the
        // kept speech is transcribed.
        let mut endpoints = Endpointer::new(Endpoints::default());
        let mut stream = utterance.clone();
        stream.extend(std::iter::repeat_n(0.0, 16_000 * 3));
        let mut stopped = None;
        for block in stream.chunks(320) {
            if let Some(s) = endpoints.push(block) {
                stopped = Some(s);
                break;
            }
        }
        assert_eq!(stopped, Some(Stopped::Silence));
        heard_at_end = endpoints.seen_seconds() as f64;
        let t = Instant::now();
        speech.transcribe(endpoints.speech()).unwrap();
        after_end.push(t.elapsed());
    }
    let (short_m, long_m, end_m) = (
        median(&mut short),
        median(&mut long),
        median(&mut after_end),
    );

    let speaker = Speaker::default();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let mut first_audio = Vec::new();
    for _ in 0..runs {
        let spoken = speaker
            .say(
                "Your meeting with Alice starts in ten minutes.",
                None,
                None,
                &cancel,
            )
            .unwrap();
        first_audio.push(Duration::from_millis(spoken.first_audio_ms.unwrap()));
    }
    let first_audio_m = median(&mut first_audio);

    println!("voice bench ({runs} runs, medians; Whisper tiny.en, 1 thread)");
    println!("  memory, voice unused:        RSS {rss_unused:.0} MB, model resident: no");
    println!(
        "  first use (loads the model): {:.0} ms; RSS after {rss_loaded:.0} MB (+{:.0} MB)",
        ms(first_use),
        rss_loaded - rss_unused
    );
    println!(
        "  STT {utterance_s:.1}-s utterance:       {:.0} ms  RTF {:.3}",
        ms(short_m),
        short_m.as_secs_f64() / utterance_s
    );
    println!(
        "  STT {recording_s:.1}-s real recording: {:.0} ms  RTF {:.3}",
        ms(long_m),
        long_m.as_secs_f64() / recording_s
    );
    println!(
        "  end of speech → text:        {:.0} ms after the recording ends ({:.1} s of quiet heard first; recording ended at {heard_at_end:.1} s)",
        ms(end_m),
        Endpoints::default().silence.as_secs_f64()
    );
    println!("  TTS time to first audio:     {:.0} ms", ms(first_audio_m));
}
