//! Text → speech: espeak-ng synthesizes (English and Mandarin, offline), cpal plays it on the
//! output device while synthesis is still running, so the first sound comes in tens of ms.
//!
//! The espeak-ng program, not its library: Debian's libespeak-ng crashes the one Rust binding,
//! and a child process is also what makes "stop" immediate — it is killed.

use crate::audio::Resample;
use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use serde::Serialize;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Spoken {
    /// Seconds of speech played.
    pub seconds: f32,
    /// The espeak-ng voice used.
    pub voice: String,
    /// From the call to the first sound handed to the device.
    pub first_audio_ms: Option<u64>,
    /// Stopped before the end (Esc, the stop button, a cancelled call).
    pub stopped: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SpeakError {
    #[error("espeak-ng is not installed: `sudo apt-get install espeak-ng`")]
    NoSynthesizer,
    #[error("espeak-ng failed: {0}")]
    Synthesizer(String),
    #[error("no speaker{}: connect one, or choose another in Settings → Voice (voice.outputDevice)", .0.as_deref().map(|d| format!(" named {d:?}")).unwrap_or_default())]
    NoDevice(Option<String>),
    #[error(
        "the speaker could not be opened ({0}): choose another in Settings → Voice (voice.outputDevice)"
    )]
    Open(String),
    #[error("{0:?} is not a voice name: use letters, digits and - (e.g. en-us, cmn)")]
    BadVoice(String),
}

/// The voice for a text: Mandarin when it has more Han characters than words in other scripts
/// (a Han character is about a word), else English.
pub fn voice_for(text: &str) -> &'static str {
    let is_han =
        |c: char| matches!(c as u32, 0x3400..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F);
    let (mut han, mut words, mut in_word) = (0usize, 0usize, false);
    for c in text.chars() {
        let letter = c.is_alphabetic() && !is_han(c);
        if is_han(c) {
            han += 1;
        } else if letter && !in_word {
            words += 1;
        }
        in_word = letter;
    }
    if han > words { "cmn" } else { "en-us" }
}

/// Speaks one text at a time; `stop` ends it at once.
#[derive(Default)]
pub struct Speaker {
    current: Mutex<Option<Arc<AtomicBool>>>,
}

/// Samples waiting for the device, and when the first one left.
#[derive(Default)]
struct Queue {
    samples: VecDeque<f32>,
    first_played: Option<Instant>,
    done: bool,
}

impl Speaker {
    /// Stops the speech in progress; false when nothing was speaking.
    pub fn stop(&self) -> bool {
        crate::audio::raise_stop(&self.current)
    }

    /// Says `text` on `device` (the default output when None), blocking until it is played or
    /// stopped. A new text stops the one before.
    pub fn say(
        &self,
        text: &str,
        voice: Option<&str>,
        device: Option<&str>,
        cancel: &AtomicBool,
    ) -> Result<Spoken, SpeakError> {
        let started = Instant::now();
        let voice = match voice {
            Some(v)
                if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') =>
            {
                return Err(SpeakError::BadVoice(v.to_string()));
            }
            Some(v) => v.to_string(),
            None => voice_for(text).to_string(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        if let Some(before) = self.current.lock().unwrap().replace(stop.clone()) {
            before.store(true, Ordering::SeqCst);
        }
        let result = speak(text, &voice, device, &stop, cancel, started);
        let mut current = self.current.lock().unwrap();
        if current.as_ref().is_some_and(|c| Arc::ptr_eq(c, &stop)) {
            *current = None;
        }
        result
    }
}

fn stopped(stop: &AtomicBool, cancel: &AtomicBool) -> bool {
    stop.load(Ordering::SeqCst) || cancel.load(Ordering::SeqCst)
}

/// Kills the synthesizer however speaking ends.
struct Synthesizer(Child);

impl Drop for Synthesizer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn speak(
    text: &str,
    voice: &str,
    device: Option<&str>,
    stop: &AtomicBool,
    cancel: &AtomicBool,
    started: Instant,
) -> Result<Spoken, SpeakError> {
    let (_synthesizer, mut wav, rate) = synthesize(text, voice)?;
    let (stream, queue, device_rate) = start_playing(device)?;
    let mut resample = Resample::new(rate, device_rate).map_err(SpeakError::Synthesizer)?;
    let played = feed(&mut wav, &mut resample, &queue, stop, cancel)?;
    let interrupted = play_out(&queue, stop, cancel);
    drop(stream);
    let queue = queue.0.lock().unwrap();
    let first_audio_ms = queue
        .first_played
        .map(|at| at.duration_since(started).as_millis() as u64);
    let left = queue.samples.len();
    Ok(Spoken {
        seconds: (played - left) as f32 / device_rate as f32,
        voice: voice.to_string(),
        first_audio_ms,
        stopped: interrupted,
    })
}

/// The queue the output stream plays from, and the signal that more has arrived.
type Shared = Arc<(Mutex<Queue>, Condvar)>;

/// Starts espeak-ng on `text`: the running synthesizer, its WAV output past the header, and the
/// output's sample rate.
fn synthesize(text: &str, voice: &str) -> Result<(Synthesizer, ChildStdout, u32), SpeakError> {
    // The text goes in on stdin: as an argument, a text starting with "-" would be an option.
    let mut child = Command::new("espeak-ng")
        .args(["-v", voice, "--stdin", "--stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map(Synthesizer)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SpeakError::NoSynthesizer,
            _ => SpeakError::Synthesizer(e.to_string()),
        })?;
    let mut stdin = child.0.stdin.take().expect("piped");
    let text = text.to_string();
    // Written from a thread: a long text must not wait on a full pipe.
    std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let mut stdout = child.0.stdout.take().expect("piped");
    let rate = wav_rate(&mut stdout, &mut child)?;
    Ok((child, stdout, rate))
}

/// Reads the WAV header off the synthesizer's output; its sample rate. A synthesizer that fails
/// before writing one says why on stderr.
fn wav_rate(stdout: &mut ChildStdout, child: &mut Synthesizer) -> Result<u32, SpeakError> {
    let mut header = [0u8; 44];
    if let Err(e) = stdout.read_exact(&mut header) {
        let mut why = String::new();
        if let Some(mut err) = child.0.stderr.take() {
            let _ = err.read_to_string(&mut why);
        }
        let why = why.trim();
        return Err(SpeakError::Synthesizer(if why.is_empty() {
            e.to_string()
        } else {
            cowork_contract::text::printable_text(why).into_owned()
        }));
    }
    if &header[0..4] != b"RIFF" || &header[8..12] != b"WAVE" {
        return Err(SpeakError::Synthesizer("its output is not WAV".into()));
    }
    Ok(u32::from_le_bytes(header[24..28].try_into().unwrap()))
}

/// Opens the output device and starts its stream on an empty queue; the stream, the queue and
/// the device's sample rate.
fn start_playing(device: Option<&str>) -> Result<(cpal::Stream, Shared, u32), SpeakError> {
    let (device, config) = output_device(device)?;
    let channels = config.channels() as usize;
    let queue = Arc::new((Mutex::new(Queue::default()), Condvar::new()));
    let stream = match config.sample_format() {
        cpal::SampleFormat::F32 => play::<f32>(&device, &config, channels, queue.clone()),
        cpal::SampleFormat::I16 => play::<i16>(&device, &config, channels, queue.clone()),
        cpal::SampleFormat::I32 => play::<i32>(&device, &config, channels, queue.clone()),
        cpal::SampleFormat::U16 => play::<u16>(&device, &config, channels, queue.clone()),
        cpal::SampleFormat::U8 => play::<u8>(&device, &config, channels, queue.clone()),
        other => {
            return Err(SpeakError::Open(format!(
                "sample format {other} is not written"
            )));
        }
    }?;
    stream.play().map_err(|e| SpeakError::Open(e.to_string()))?;
    Ok((stream, queue, config.sample_rate()))
}

/// Moves the synthesizer's 16-bit samples, resampled, onto the queue until its output ends or
/// speaking is stopped; how many samples were queued.
fn feed(
    wav: &mut ChildStdout,
    resample: &mut Resample,
    queue: &Shared,
    stop: &AtomicBool,
    cancel: &AtomicBool,
) -> Result<usize, SpeakError> {
    let (mut bytes, mut carry) = (vec![0u8; 4096], None::<u8>);
    let (mut pcm, mut out, mut played) = (Vec::new(), Vec::new(), 0usize);
    loop {
        if stopped(stop, cancel) {
            break;
        }
        let n = wav
            .read(&mut bytes)
            .map_err(|e| SpeakError::Synthesizer(e.to_string()))?;
        if n == 0 {
            resample.finish(&mut out).map_err(SpeakError::Synthesizer)?;
        }
        pcm.clear();
        let mut chunk = &bytes[..n];
        // A sample split across two reads: its low byte waited in `carry`.
        if let (Some(low), Some((&high, rest))) = (carry.take(), chunk.split_first()) {
            pcm.push(i16::from_le_bytes([low, high]) as f32 / 32768.0);
            chunk = rest;
        }
        let pairs = chunk.chunks_exact(2);
        carry = pairs.remainder().first().copied();
        pcm.extend(pairs.map(|p| i16::from_le_bytes([p[0], p[1]]) as f32 / 32768.0));
        resample
            .push(&pcm, &mut out)
            .map_err(SpeakError::Synthesizer)?;
        played += out.len();
        queue.0.lock().unwrap().samples.extend(out.drain(..));
        queue.1.notify_all();
        if n == 0 {
            break;
        }
    }
    queue.0.lock().unwrap().done = true;
    queue.1.notify_all();
    Ok(played)
}

/// Waits while the device plays what is queued; true when speaking was stopped instead.
fn play_out(queue: &Shared, stop: &AtomicBool, cancel: &AtomicBool) -> bool {
    // Let the device play what is queued (a file sink takes it at once, a speaker in real time).
    while !stopped(stop, cancel) && !queue.0.lock().unwrap().samples.is_empty() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let interrupted = stopped(stop, cancel);
    if !interrupted {
        // The device's own buffer still holds the last ~0.1 s.
        std::thread::sleep(Duration::from_millis(120));
    }
    interrupted
}

fn output_device(
    name: Option<&str>,
) -> Result<(cpal::Device, cpal::SupportedStreamConfig), SpeakError> {
    let host = cpal::default_host();
    let device = match name {
        None => host
            .default_output_device()
            .ok_or(SpeakError::NoDevice(None))?,
        Some(name) => host
            .output_devices()
            .map_err(|e| SpeakError::Open(e.to_string()))?
            .find(|d| d.to_string() == name)
            .ok_or_else(|| SpeakError::NoDevice(Some(name.to_string())))?,
    };
    let config = device.default_output_config().map_err(|e| match e.kind() {
        cpal::ErrorKind::DeviceNotAvailable | cpal::ErrorKind::HostUnavailable => {
            SpeakError::NoDevice(name.map(str::to_string))
        }
        _ => SpeakError::Open(e.to_string()),
    })?;
    Ok((device, config))
}

fn play<T>(
    device: &cpal::Device,
    config: &cpal::SupportedStreamConfig,
    channels: usize,
    queue: Shared,
) -> Result<cpal::Stream, SpeakError>
where
    T: cpal::SizedSample + cpal::FromSample<f32>,
{
    device
        .build_output_stream::<T, _, _>(
            crate::audio::short_blocks(config),
            move |data: &mut [T], _| {
                let (queue, arrived) = &*queue;
                let mut queue = queue.lock().unwrap();
                // The synthesizer runs ~80× faster than speech, so running dry mid-speech is a
                // moment's wait: waiting briefly keeps the words together where writing silence
                // would cut a gap into them.
                if queue.samples.is_empty() && !queue.done {
                    queue = arrived
                        .wait_timeout(queue, Duration::from_millis(20))
                        .unwrap()
                        .0;
                }
                if !queue.samples.is_empty() && queue.first_played.is_none() {
                    queue.first_played = Some(Instant::now());
                }
                for frame in data.chunks_mut(channels.max(1)) {
                    let Some(sample) = queue.samples.pop_front() else {
                        break;
                    };
                    frame.fill(T::from_sample(sample));
                }
            },
            |e| tracing::warn!(error = %e, "speaker stream"),
            None,
        )
        .map_err(|e| SpeakError::Open(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn han_text_is_read_in_mandarin_and_the_rest_in_english() {
        assert_eq!(voice_for("明天上午十点和王芳开会"), "cmn");
        assert_eq!(voice_for("Meet Alice at 10"), "en-us");
        assert_eq!(voice_for("周五 review the PR 吧 然后发布"), "cmn");
    }

    #[test]
    fn a_voice_name_cannot_carry_options() {
        let err = Speaker::default()
            .say(
                "hi",
                Some("en --stdout -w x"),
                None,
                &AtomicBool::new(false),
            )
            .unwrap_err();
        assert!(matches!(err, SpeakError::BadVoice(_)), "{err}");
    }
}
