//! The microphone and the speaker, through the real stack: cpal opens ALSA devices that are
//! files (a fake microphone playing espeak-ng's sentences, a speaker writing to disk), `listen`
//! and `speak` run as `cowork voice …` processes, through the gate.

use cowork_tests::speech::{wer, whisper_dir, words};
use serde_json::json;
use std::path::Path;
use std::process::Command;

/// A person with a microphone and a speaker. The microphone is a private PulseAudio daemon's
/// null sink `room` (what is played into it with paplay, in real time, is what the microphone
/// hears through its monitor, at 44.1 kHz stereo — not Whisper's 16 kHz mono, so capture's
/// resampling and mixing are exercised); cpal reaches it through ALSA's pulse plugin, as on a
/// desktop (its ALSA hook makes PulseAudio the default device while the daemon runs). The
/// speaker is ALSA's `file` plugin writing `speaker.raw` (22.05 kHz mono), chosen by name in
/// the settings (`voice.outputDevice`).
struct FakeAudio {
    dir: tempfile::TempDir,
    pulse: std::process::Child,
}

const SPEAKER_RATE: usize = 22_050;

impl Drop for FakeAudio {
    fn drop(&mut self) {
        let _ = self.pulse.kill();
        let _ = self.pulse.wait();
    }
}

impl FakeAudio {
    fn new() -> FakeAudio {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "data", "run"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let root = dir.path().display();
        std::fs::write(
            dir.path().join("home/.asoundrc"),
            format!(
                r#"pcm.microphone {{ type pulse }}
pcm.speaker_file {{ type file; slave.pcm "null"; file "{root}/speaker.raw"; format raw }}
pcm.speaker {{ type plug; slave {{ pcm "speaker_file"; format S16_LE; rate 22050; channels 1 }} }}
"#
            ),
        )
        .unwrap();
        let socket = dir.path().join("run/native");
        let pulse = Command::new("pulseaudio")
            .args([
                "-n",
                "--daemonize=no",
                "--exit-idle-time=-1",
                "--use-pid-file=no",
            ])
            .args(["--disable-shm=yes", "--log-target=stderr", "-L"])
            .arg(format!(
                "module-native-protocol-unix socket={} auth-anonymous=1",
                socket.display()
            ))
            .args(["-L", "module-null-sink sink_name=room"])
            .env("HOME", dir.path().join("home"))
            .env("XDG_RUNTIME_DIR", dir.path().join("run"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("pulseaudio (tests/setup.sh installs it)");
        let audio = FakeAudio { dir, pulse };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !audio.pactl(&["set-default-source", "room.monitor"]) {
            assert!(
                std::time::Instant::now() < deadline,
                "pulseaudio did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        audio
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    /// No sound server any more: ALSA's own default applies.
    fn stop_pulse(&mut self) {
        let _ = self.pulse.kill();
        let _ = self.pulse.wait();
    }

    fn pulse_env(&self, cmd: &mut Command) {
        cmd.env("HOME", self.path("home"))
            .env("XDG_RUNTIME_DIR", self.path("run"))
            .env(
                "PULSE_SERVER",
                format!("unix:{}", self.path("run/native").display()),
            );
    }

    fn pactl(&self, args: &[&str]) -> bool {
        let mut cmd = Command::new("pactl");
        self.pulse_env(&mut cmd);
        cmd.args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Whether something records from the microphone now.
    fn recording(&self) -> bool {
        let mut cmd = Command::new("pactl");
        self.pulse_env(&mut cmd);
        let out = cmd
            .args(["list", "short", "source-outputs"])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    }

    /// espeak-ng's rendering of `text`, as a WAV file.
    fn speech(&self, text: &str) -> std::path::PathBuf {
        let wav = self.path("said.wav");
        let spoken = Command::new("espeak-ng")
            .args(["-v", "en-us", "-s", "150", "-w"])
            .arg(&wav)
            .arg(text)
            .status()
            .expect("espeak-ng (tests/setup.sh installs it)");
        assert!(spoken.success());
        wav
    }

    fn settings(&self, json: serde_json::Value) {
        std::fs::write(self.path("data/settings.json"), json.to_string()).unwrap();
    }

    fn command(&self, args: &[&str], answers: Option<&str>) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cowork"));
        self.pulse_env(&mut cmd);
        cmd.arg("--json")
            .args(args)
            .env("COWORK_HOME", self.path("data"))
            .env("COWORK_WHISPER_DIR", whisper_dir())
            .env_remove("COWORK_APPROVE_FROM_STDIN")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if answers.is_some() {
            cmd.env("COWORK_APPROVE_FROM_STDIN", "1");
        }
        cmd
    }

    fn finish(child: std::process::Child) -> (serde_json::Value, String) {
        let out = child.wait_with_output().unwrap();
        let text = cowork_tests::output_text(&out);
        let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        (json, text)
    }

    fn start(&self, args: &[&str], answers: Option<&str>) -> std::process::Child {
        use std::io::Write;
        let mut child = self.command(args, answers).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        if let Some(answers) = answers {
            stdin.write_all(answers.as_bytes()).unwrap();
        }
        drop(stdin);
        child
    }

    /// `cowork --json ARGS` as this person; `answers` go to the approval prompt.
    fn cowork(&self, args: &[&str], answers: Option<&str>) -> (serde_json::Value, String) {
        FakeAudio::finish(self.start(args, answers))
    }

    /// `cowork voice listen` while `wav` is said into the microphone once it is open; `during`
    /// runs `after` into the speech.
    fn listen_to(
        &self,
        wav: &Path,
        answers: Option<&str>,
        during: Option<(std::time::Duration, &dyn Fn())>,
    ) -> (serde_json::Value, String) {
        let mut child = self.start(&["voice", "listen"], answers);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !self.recording() {
            if std::time::Instant::now() > deadline || child.try_wait().unwrap().is_some() {
                let _ = child.kill();
                return FakeAudio::finish(child);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let mut paplay = Command::new("paplay");
        self.pulse_env(&mut paplay);
        let mut player = paplay.arg("--device=room").arg(wav).spawn().unwrap();
        if let Some((after, what)) = during {
            std::thread::sleep(after);
            what();
        }
        let _ = player.wait();
        FakeAudio::finish(child)
    }

    /// Seconds of sound (first to last non-zero sample) the speaker file holds.
    fn speaker_seconds(&self) -> f64 {
        let bytes = std::fs::read(self.path("speaker.raw")).unwrap_or_default();
        let samples: Vec<i16> = bytes
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect();
        let first = samples.iter().position(|s| s.abs() > 64);
        let last = samples.iter().rposition(|s| s.abs() > 64);
        match (first, last) {
            (Some(first), Some(last)) => (last - first) as f64 / SPEAKER_RATE as f64,
            _ => 0.0,
        }
    }
}

/// Twenty sentences a person might say to an assistant, spoken into the microphone in real time
/// one recording at a time: `listen` opens the device, hears the speech start and end, and
/// whisper writes it down. The first recording is asked (the microphone is a risk the person
/// grants); "always" answers it for the rest.
#[test]
fn listen_hears_what_is_said_into_the_microphone() {
    let audio = FakeAudio::new();
    let sentences = [
        "schedule a meeting with Alice tomorrow morning",
        "remind me to call the dentist on Friday",
        "what is the weather like in Shanghai this weekend",
        "add milk and bread to my shopping list",
        "send an email to Bob about the quarterly report",
        "read me my unread messages",
        "move the design review to next Tuesday afternoon",
        "create a new note called travel plans",
        "how long will it take to drive to the airport",
        "find the contract I signed last month",
        "turn off notifications until lunch",
        "what did I write about the garden project",
        "book a table for four people on Saturday evening",
        "summarize the document on my desktop",
        "cancel my appointment with the doctor",
        "play some quiet music while I work",
        "tell me the latest news about electric cars",
        "what time is my flight to London",
        "mark the report task as done",
        "write down that the printer needs new paper",
    ];
    audio.settings(json!({}));
    let (mut said, mut heard, mut from_files) = (Vec::new(), Vec::new(), Vec::new());
    for (i, sentence) in sentences.iter().enumerate() {
        let wav = audio.speech(sentence);
        let answers = (i == 0).then_some("always\n");
        let (out, text) = audio.listen_to(&wav, answers, None);
        assert_eq!(out["ok"], true, "{sentence}: {text}");
        assert_eq!(out["score"], 5, "{text}");
        if i == 0 {
            assert_eq!(
                out["decision"], "ask",
                "the first recording is asked: {text}"
            );
        } else {
            assert_eq!(out["decision"], "allow", "{text}");
        }
        let structured = &out["output"]["structured"];
        assert_eq!(structured["stopped"]["reason"], "silence", "{structured}");
        // All the speech is kept, and little of the quiet around it: nothing clipped or lost.
        let kept = structured["speech_seconds"].as_f64().unwrap();
        let spoken = wav_seconds(&wav);
        assert!(
            kept >= spoken - 0.1 && kept <= spoken + 1.3,
            "{sentence:?}: {spoken:.2} s said, {kept:.2} s kept"
        );
        said.extend(words(sentence));
        heard.extend(words(structured["text"].as_str().unwrap()));
        // The same sentence from its file, never through a device: what the model alone makes
        // of espeak-ng's voice.
        let dir = audio.path("");
        let (file, text) = audio.cowork(
            &[
                "--workspace",
                dir.to_str().unwrap(),
                "voice",
                "transcribe",
                "said.wav",
            ],
            None,
        );
        assert_eq!(file["ok"], true, "{text}");
        let from_file = file["output"]["structured"]["text"].as_str().unwrap();
        from_files.extend(words(from_file));
        eprintln!(
            "said {sentence:?}: heard {:?}, from the file {from_file:?}",
            structured["text"]
        );
    }
    let (through_capture, model_alone) = (wer(&said, &heard), wer(&said, &from_files));
    eprintln!(
        "word error rate {through_capture:.3} through the microphone, {model_alone:.3} from files"
    );
    // tiny.en on espeak-ng's voice is fragile: the same file shifted by 8 ms turns "shopping
    // list" into "sharpened list" (measured), so the microphone's rate varies around the files'
    // (0.19 vs 0.12 measured, on audio that lines up with the file sample for sample). Capture
    // damage (clipped words, lost blocks) is checked above by the kept speech's length; this
    // bound catches a broken pipeline (a wrong rate or channel mix reads as gibberish, > 0.5).
    assert!(model_alone <= 0.2, "the model itself: {model_alone:.3}");
    assert!(
        through_capture <= 0.3,
        "through the microphone: {through_capture:.3}"
    );
}

/// Quiet: no speech heard, said plainly, nothing made up.
#[test]
fn listen_to_silence_hears_nothing() {
    let audio = FakeAudio::new();
    audio.settings(json!({"permissions": {"allow": ["listen"]}}));
    let (out, text) = audio.cowork(&["voice", "listen", "--seconds", "3"], None);
    assert_eq!(out["ok"], true, "{text}");
    assert_eq!(out["output"]["structured"]["text"], "", "{text}");
    assert_eq!(
        out["output"]["structured"]["stopped"]["reason"],
        "no_speech"
    );
    assert_eq!(out["output"]["content"][0]["text"], "No speech heard.");
}

/// No microphone, or not the one the settings name: the error says which setting to change.
#[test]
fn a_missing_microphone_names_the_setting() {
    let mut audio = FakeAudio::new();
    audio.settings(json!({
        "permissions": {"allow": ["listen"]},
        "voice": {"inputDevice": "USB headset that is not here"}
    }));
    let (out, text) = audio.cowork(&["voice", "listen"], None);
    assert_eq!(out["ok"], false, "{text}");
    let message = out["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("USB headset that is not here"),
        "{message}"
    );
    assert!(message.contains("voice.inputDevice"), "{message}");

    // No sound card at all: the default device cannot open.
    audio.stop_pulse();
    std::fs::write(
        audio.path("home/.asoundrc"),
        "pcm.!default { type hw; card 7 }\n",
    )
    .unwrap();
    audio.settings(json!({"permissions": {"allow": ["listen"]}}));
    let (out, text) = audio.cowork(&["voice", "listen"], None);
    assert_eq!(out["ok"], false, "{text}");
    let message = out["error"]["message"].as_str().unwrap();
    assert!(message.contains("voice.inputDevice"), "{message}");
}

/// The microphone is unplugged mid-sentence (its PulseAudio device removed): the recording ends
/// with what came before, transcribed, and says the device was lost.
#[test]
fn a_microphone_lost_mid_recording_keeps_what_it_heard() {
    let audio = FakeAudio::new();
    audio.settings(json!({"permissions": {"allow": ["listen"]}}));
    let wav = audio.speech("please water the plants on the balcony and then feed the cat");
    let unplug = || assert!(audio.pactl(&["unload-module", "module-null-sink"]));
    let (out, text) = audio.listen_to(
        &wav,
        None,
        Some((std::time::Duration::from_millis(2200), &unplug)),
    );
    assert_eq!(out["ok"], true, "{text}");
    let structured = &out["output"]["structured"];
    assert_eq!(
        structured["stopped"]["reason"], "device_lost",
        "{structured}"
    );
    let heard = structured["text"].as_str().unwrap().to_lowercase();
    assert!(
        heard.contains("please"),
        "what came before is kept: {heard}"
    );
    assert!(!heard.contains("cat"), "nothing after: {heard}");
    let content = out["output"]["content"][0]["text"].as_str().unwrap();
    assert!(content.contains("microphone stopped"), "{content}");
}

/// `speak` plays through the speaker (here a file): English and Chinese, as long as the speech
/// is, and the text is never read as options.
#[test]
fn speak_plays_english_and_chinese_on_the_speaker() {
    let audio = FakeAudio::new();
    audio.settings(json!({"voice": {"outputDevice": "speaker"}}));
    let (out, text) = audio.cowork(
        &[
            "voice",
            "say",
            "Your meeting with Alice starts in ten minutes.",
        ],
        None,
    );
    assert_eq!(out["ok"], true, "{text}");
    assert_eq!(
        out["decision"], "allow",
        "playing sound is low risk: {text}"
    );
    let spoken = out["output"]["structured"]["seconds"].as_f64().unwrap();
    let played = audio.speaker_seconds();
    assert!((1.5..6.0).contains(&played), "{played} s on the speaker");
    assert!(
        (spoken - played).abs() < 0.5,
        "said {spoken} s, played {played} s"
    );
    assert_eq!(out["output"]["structured"]["voice"], "en-us");

    std::fs::remove_file(audio.path("speaker.raw")).unwrap();
    let (out, text) = audio.cowork(&["voice", "say", "明天上午十点和王芳开会。"], None);
    assert_eq!(out["ok"], true, "{text}");
    assert_eq!(out["output"]["structured"]["voice"], "cmn");
    assert!(audio.speaker_seconds() > 1.0);

    // A text that looks like espeak-ng's options is spoken, not obeyed.
    let planted = audio.path("planted.wav");
    let hostile = format!("-w {} --stdout", planted.display());
    let (out, text) = audio.cowork(&["voice", "say", "--", &hostile], None);
    assert_eq!(out["ok"], true, "{text}");
    assert!(!planted.exists());
}

/// A WAV file's length, from its header.
fn wav_seconds(wav: &Path) -> f64 {
    let bytes = std::fs::read(wav).unwrap();
    let rate = u32::from_le_bytes(bytes[24..28].try_into().unwrap()) as f64;
    let block = u16::from_le_bytes(bytes[32..34].try_into().unwrap()) as f64;
    (bytes.len() - 44) as f64 / block / rate
}
