//! Comparing what was said with what was heard, and a person with a microphone and a speaker.

use std::path::Path;
use std::process::Command;

/// Words (lower case, no punctuation; digits as written) — what the comparison reads.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word error rate: edit distance over words / words said.
pub fn wer(said: &[String], heard: &[String]) -> f64 {
    error_rate(said, heard)
}

/// Character error rate (how Chinese is scored: it has no spaces between words): edit distance
/// over letters, digits and ideographs — punctuation and spaces left out — / characters said.
pub fn cer(said: &str, heard: &str) -> f64 {
    let chars = |t: &str| {
        t.chars()
            .filter(|c| c.is_alphanumeric())
            .collect::<Vec<_>>()
    };
    error_rate(&chars(said), &chars(heard))
}

/// Edit distance between what was said and heard, over the length of what was said.
fn error_rate<T: PartialEq>(said: &[T], heard: &[T]) -> f64 {
    let mut row: Vec<usize> = (0..=heard.len()).collect();
    for (i, s) in said.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, h) in heard.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(s != h)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[heard.len()] as f64 / said.len().max(1) as f64
}

/// The English Whisper model's folder (`COWORK_WHISPER_DIR`, else where `cowork assets fetch`
/// puts it): the tests' speech figures are tiny.en's, whichever models are downloaded.
pub fn whisper_dir() -> std::path::PathBuf {
    std::env::var_os("COWORK_WHISPER_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            cowork_assets::main_path("whisper-tiny-en")?
                .parent()
                .map(std::path::Path::to_path_buf)
        })
        .expect("HOME is set")
}

/// A person with a microphone and a speaker. The microphone is a private PulseAudio daemon's
/// null sink `room` (what is played into it with paplay, in real time, is what the microphone
/// hears through its monitor, at 44.1 kHz stereo — not Whisper's 16 kHz mono, so capture's
/// resampling and mixing are exercised); cpal reaches it through ALSA's pulse plugin, as on a
/// desktop (its ALSA hook makes PulseAudio the default device while the daemon runs). The
/// speaker is ALSA's `file` plugin writing `speaker.raw` (22.05 kHz mono), chosen by name in
/// the settings (`voice.outputDevice`).
pub struct FakeAudio {
    dir: tempfile::TempDir,
    pulse: std::process::Child,
    /// The `cowork` binary its commands run.
    bin: String,
}

pub const SPEAKER_RATE: usize = 22_050;

impl Drop for FakeAudio {
    fn drop(&mut self) {
        let _ = self.pulse.kill();
        let _ = self.pulse.wait();
    }
}

impl FakeAudio {
    pub fn new(bin: &str) -> FakeAudio {
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
        let audio = FakeAudio {
            dir,
            pulse,
            bin: bin.to_string(),
        };
        let deadline = std::time::Instant::now() + crate::wait::patience();
        while !audio.pactl(&["set-default-source", "room.monitor"]) {
            assert!(
                std::time::Instant::now() < deadline,
                "pulseaudio did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        audio
    }

    pub fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    /// No sound server any more: ALSA's own default applies.
    pub fn stop_pulse(&mut self) {
        let _ = self.pulse.kill();
        let _ = self.pulse.wait();
    }

    pub fn pulse_env(&self, cmd: &mut Command) {
        cmd.env("HOME", self.path("home"))
            .env("XDG_RUNTIME_DIR", self.path("run"))
            .env(
                "PULSE_SERVER",
                format!("unix:{}", self.path("run/native").display()),
            );
    }

    pub fn pactl(&self, args: &[&str]) -> bool {
        let mut cmd = Command::new("pactl");
        self.pulse_env(&mut cmd);
        cmd.args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Whether something records from the microphone now.
    pub fn recording(&self) -> bool {
        let mut cmd = Command::new("pactl");
        self.pulse_env(&mut cmd);
        let out = cmd
            .args(["list", "short", "source-outputs"])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    }

    /// espeak-ng's rendering of `text`, as a WAV file.
    pub fn speech(&self, text: &str) -> std::path::PathBuf {
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

    pub fn settings(&self, json: serde_json::Value) {
        std::fs::write(self.path("data/settings.json"), json.to_string()).unwrap();
    }

    pub fn command(&self, args: &[&str], answers: Option<&str>) -> Command {
        let mut cmd = Command::new(&self.bin);
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

    pub fn finish(child: std::process::Child) -> (serde_json::Value, String) {
        let out = child.wait_with_output().unwrap();
        let text = crate::output_text(&out);
        let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
        (json, text)
    }

    pub fn start(&self, args: &[&str], answers: Option<&str>) -> std::process::Child {
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
    pub fn cowork(&self, args: &[&str], answers: Option<&str>) -> (serde_json::Value, String) {
        FakeAudio::finish(self.start(args, answers))
    }

    /// `cowork voice listen` while `wav` is said into the microphone once it is open; `during`
    /// runs `after` into the speech.
    pub fn listen_to(
        &self,
        wav: &Path,
        answers: Option<&str>,
        during: Option<(std::time::Duration, &dyn Fn())>,
    ) -> (serde_json::Value, String) {
        let mut child = self.start(&["voice", "listen"], answers);
        let deadline = std::time::Instant::now() + crate::wait::patience();
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
    pub fn speaker_seconds(&self) -> f64 {
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

    /// The environment an app needs to use this microphone and speaker.
    pub fn app_env(&self) -> Vec<(&'static str, std::ffi::OsString)> {
        vec![
            ("HOME", self.path("home").into()),
            ("XDG_RUNTIME_DIR", self.path("run").into()),
            (
                "PULSE_SERVER",
                format!("unix:{}", self.path("run/native").display()).into(),
            ),
            ("COWORK_WHISPER_DIR", whisper_dir().into()),
        ]
    }

    /// Says `wav` into the microphone (blocking, real time).
    pub fn say_into_microphone(&self, wav: &Path) {
        let mut paplay = Command::new("paplay");
        self.pulse_env(&mut paplay);
        assert!(
            paplay
                .arg("--device=room")
                .arg(wav)
                .status()
                .unwrap()
                .success()
        );
    }
}
