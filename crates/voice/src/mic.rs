//! The microphone: cpal captures at the device's own rate and format; blocks are mixed to mono,
//! resampled to 16 kHz and cut into 16-ms frames for the voice activity detector (earshot),
//! which decides where speech starts and ends.
//!
//! Everything is counted in samples, not wall-clock time: a device that delivers faster than real
//! time (a file-backed test microphone) ends a recording at the same place a real one does.

use crate::audio::{Resample, WHISPER_RATE, mix_to_mono};
use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

/// What the window shows while the microphone is open — whoever opened it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MicState {
    pub open: bool,
    /// Loudness of the last ~50 ms, 0 (silence) to 1 (full scale), on a dB scale.
    pub level: f32,
    /// The words heard so far (transcribed in chunks while the person speaks).
    pub partial: String,
}

/// When a recording ends.
#[derive(Clone, Debug)]
pub struct Endpoints {
    /// The longest recording.
    pub max: Duration,
    /// Quiet after speech that ends it.
    pub silence: Duration,
    /// How long to wait for speech to begin.
    pub no_speech: Duration,
}

impl Default for Endpoints {
    fn default() -> Self {
        Endpoints {
            max: Duration::from_secs(60),
            silence: Duration::from_millis(900),
            no_speech: Duration::from_secs(8),
        }
    }
}

/// Why a recording ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "reason", content = "detail")]
pub enum Stopped {
    /// The person let go of the key or pressed stop.
    ByPerson,
    /// Quiet after speech.
    Silence,
    MaxLength,
    /// Nothing but quiet until the wait for speech ran out.
    NoSpeech,
    /// The device failed mid-recording; what came before is kept.
    DeviceLost(String),
}

#[derive(Debug, thiserror::Error)]
pub enum MicError {
    #[error("no microphone{}: connect one, or choose another in Settings → Voice (voice.inputDevice)", .0.as_deref().map(|d| format!(" named {d:?}")).unwrap_or_default())]
    NoDevice(Option<String>),
    #[error(
        "the microphone is busy ({0}): close the program using it, or choose another in Settings → Voice (voice.inputDevice)"
    )]
    Busy(String),
    #[error(
        "the microphone could not be opened ({0}): choose another in Settings → Voice (voice.inputDevice)"
    )]
    Open(String),
    #[error(
        "the microphone stopped before any sound came ({0}): choose another in Settings → Voice (voice.inputDevice)"
    )]
    Lost(String),
    #[error("the microphone is already listening: stop that recording first")]
    AlreadyListening,
}

/// One recording: the speech, trimmed, at 16 kHz.
pub struct Recording {
    pub samples: Vec<f32>,
    pub stopped: Stopped,
}

/// The input devices cpal sees, the default first.
pub fn input_devices() -> Vec<String> {
    let host = cpal::default_host();
    default_first(host.default_input_device(), host.input_devices())
}

/// The output devices cpal sees, the default first.
pub fn output_devices() -> Vec<String> {
    let host = cpal::default_host();
    default_first(host.default_output_device(), host.output_devices())
}

fn default_first(
    default: Option<cpal::Device>,
    devices: Result<impl Iterator<Item = cpal::Device>, cpal::Error>,
) -> Vec<String> {
    let mut names: Vec<String> = devices
        .map(|devices| devices.map(|d| d.to_string()).collect())
        .unwrap_or_default();
    if let Some(default) = default.map(|d| d.to_string()) {
        names.retain(|n| *n != default);
        names.insert(0, default);
    }
    names
}

fn input_device(name: Option<&str>) -> Result<cpal::Device, MicError> {
    let host = cpal::default_host();
    match name {
        None => host.default_input_device().ok_or(MicError::NoDevice(None)),
        Some(name) => host
            .input_devices()
            .map_err(|e| MicError::Open(e.to_string()))?
            .find(|d| d.to_string() == name)
            .ok_or_else(|| MicError::NoDevice(Some(name.to_string()))),
    }
}

enum Block {
    Audio(Vec<f32>),
    Failed(String),
}

/// An open input stream; blocks arrive mono at the device's rate.
struct Capture {
    // Dropped before the stream: a callback blocked on a full channel then returns, and the
    // stream's thread can be joined.
    blocks: Receiver<Block>,
    /// Samples sent and not yet taken.
    queued: Arc<AtomicUsize>,
    _stream: cpal::Stream,
    rate: u32,
}

fn open(device: Option<&str>) -> Result<Capture, MicError> {
    let device = input_device(device)?;
    let config = device.default_input_config().map_err(classify)?;
    let channels = config.channels() as usize;
    let rate = config.sample_rate();
    // Never blocks the device's thread: a blocked capture callback overruns the device, and
    // the sound in between is lost. Memory is bounded instead (see `build`).
    let (tx, blocks) = channel();
    let queued = Arc::new(AtomicUsize::new(0));
    let stream = match config.sample_format() {
        cpal::SampleFormat::F32 => build::<f32>(&device, &config, channels, tx, queued.clone()),
        cpal::SampleFormat::I16 => build::<i16>(&device, &config, channels, tx, queued.clone()),
        cpal::SampleFormat::I32 => build::<i32>(&device, &config, channels, tx, queued.clone()),
        cpal::SampleFormat::U16 => build::<u16>(&device, &config, channels, tx, queued.clone()),
        cpal::SampleFormat::U8 => build::<u8>(&device, &config, channels, tx, queued.clone()),
        other => return Err(MicError::Open(format!("sample format {other} is not read"))),
    }?;
    stream.play().map_err(classify)?;
    Ok(Capture {
        blocks,
        queued,
        _stream: stream,
        rate,
    })
}

fn build<T>(
    device: &cpal::Device,
    config: &cpal::SupportedStreamConfig,
    channels: usize,
    tx: Sender<Block>,
    queued: Arc<AtomicUsize>,
) -> Result<cpal::Stream, MicError>
where
    T: cpal::SizedSample,
    f32: cpal::FromSample<T>,
{
    let errors = tx.clone();
    let mut interleaved = Vec::new();
    // A minute of sound waiting at most; past it, blocks are dropped (a detector that fell that
    // far behind has stopped).
    let limit = config.sample_rate() as usize * 60;
    device
        .build_input_stream::<T, _, _>(
            crate::audio::short_blocks(config),
            move |data: &[T], _| {
                interleaved.clear();
                interleaved.extend(data.iter().map(|s| cpal::Sample::to_sample::<f32>(*s)));
                let mut mono = Vec::with_capacity(data.len() / channels.max(1));
                mix_to_mono(&interleaved, channels.max(1), &mut mono);
                if queued.fetch_add(mono.len(), Ordering::SeqCst) > limit {
                    queued.fetch_sub(mono.len(), Ordering::SeqCst);
                    return;
                }
                // A closed receiver means the recording is over; the stream is dropped next.
                let _ = tx.send(Block::Audio(mono));
            },
            move |e: cpal::Error| match e.kind() {
                // A missed block (the host recovers by itself): a click, not the end.
                cpal::ErrorKind::Xrun | cpal::ErrorKind::DeviceChanged => {
                    tracing::debug!(error = %e, "microphone");
                }
                _ => {
                    let _ = errors.send(Block::Failed(e.to_string()));
                }
            },
            None,
        )
        .map_err(classify)
}

fn classify(e: cpal::Error) -> MicError {
    match e.kind() {
        cpal::ErrorKind::DeviceBusy => MicError::Busy(e.to_string()),
        cpal::ErrorKind::DeviceNotAvailable | cpal::ErrorKind::HostUnavailable => {
            MicError::NoDevice(None)
        }
        _ => MicError::Open(e.to_string()),
    }
}

/// 16 ms at 16 kHz: the detector's frame.
const FRAME: usize = 256;
/// Kept before the first voiced frame, so a soft first syllable ("sch…") is not cut.
const PRE_ROLL: usize = WHISPER_RATE as usize / 2;
/// Kept after the last voiced frame: closing consonants ("…st") do not count as voice, and a
/// 250-ms tail cut them ("shopping list" heard as "sharpened loose").
const TAIL: usize = WHISPER_RATE as usize * 7 / 10;
const VOICED: f32 = 0.5;

/// Finds speech in a stream of 16-kHz samples: where it starts, where it has ended.
pub struct Endpointer {
    detector: Box<earshot::Detector>,
    limits: Endpoints,
    frame: Vec<f32>,
    audio: Vec<f32>,
    /// Samples seen (speech and quiet).
    seen: usize,
    /// Where kept speech begins in `audio` (pre-roll included), once voiced frames came.
    speech_from: Option<usize>,
    /// `seen` at the end of the last voiced frame.
    last_voiced: usize,
    voiced_run: usize,
    level_sum: f32,
    level_frames: usize,
    pub level: f32,
}

impl Endpointer {
    pub fn new(limits: Endpoints) -> Self {
        Endpointer {
            detector: earshot::Detector::default_boxed(),
            limits,
            frame: Vec::with_capacity(FRAME),
            audio: Vec::new(),
            seen: 0,
            speech_from: None,
            last_voiced: 0,
            voiced_run: 0,
            level_sum: 0.0,
            level_frames: 0,
            level: 0.0,
        }
    }

    fn samples(duration: Duration) -> usize {
        (duration.as_secs_f64() * WHISPER_RATE as f64) as usize
    }

    /// Feeds 16-kHz samples; `Some` once the recording should end.
    pub fn push(&mut self, samples: &[f32]) -> Option<Stopped> {
        for &sample in samples {
            // Resampling can overshoot full scale a little; the detector takes [-1, 1] only.
            self.frame.push(sample.clamp(-1.0, 1.0));
            if self.frame.len() < FRAME {
                continue;
            }
            self.seen += FRAME;
            let score = self.detector.predict_f32(&self.frame);
            self.meter();
            self.audio.extend_from_slice(&self.frame);
            self.frame.clear();
            if score >= VOICED {
                self.voiced_run += 1;
                self.last_voiced = self.seen;
                // Three voiced frames in a row (48 ms) start speech: a click does not.
                if self.speech_from.is_none() && self.voiced_run >= 3 {
                    self.speech_from = Some(self.audio.len().saturating_sub(3 * FRAME + PRE_ROLL));
                }
            } else {
                self.voiced_run = 0;
            }
            if let Some(stop) = self.ended() {
                return Some(stop);
            }
        }
        None
    }

    fn meter(&mut self) {
        let power = self.frame.iter().map(|s| s * s).sum::<f32>() / FRAME as f32;
        self.level_sum += power;
        self.level_frames += 1;
        if self.level_frames == 3 {
            let db = 10.0 * (self.level_sum / 3.0).max(1e-10).log10();
            // -60 dBFS reads as silence, 0 dBFS as full.
            self.level = ((db + 60.0) / 60.0).clamp(0.0, 1.0);
            self.level_sum = 0.0;
            self.level_frames = 0;
        }
    }

    fn ended(&self) -> Option<Stopped> {
        if self.seen >= Self::samples(self.limits.max) {
            return Some(Stopped::MaxLength);
        }
        match self.speech_from {
            None if self.seen >= Self::samples(self.limits.no_speech) => Some(Stopped::NoSpeech),
            Some(_) if self.seen - self.last_voiced >= Self::samples(self.limits.silence) => {
                Some(Stopped::Silence)
            }
            _ => None,
        }
    }

    pub fn heard_speech(&self) -> bool {
        self.speech_from.is_some()
    }

    pub fn seen_seconds(&self) -> f32 {
        self.seen as f32 / WHISPER_RATE as f32
    }

    /// The speech so far: from just before it began to just after the last voiced frame.
    pub fn speech(&self) -> &[f32] {
        let Some(from) = self.speech_from else {
            return &[];
        };
        let quiet_since = self.seen - self.last_voiced;
        let end = self
            .audio
            .len()
            .saturating_sub(quiet_since.saturating_sub(TAIL));
        &self.audio[from..end.max(from)]
    }
}

/// The microphone, shared by every path that opens it (a tool call, the window's button), so the
/// window always knows when it is open and one recording runs at a time.
pub struct Microphone {
    state: tokio::sync::watch::Sender<MicState>,
    stop: std::sync::Mutex<Option<Arc<AtomicBool>>>,
}

impl Default for Microphone {
    fn default() -> Self {
        Microphone {
            state: tokio::sync::watch::Sender::new(MicState::default()),
            stop: Default::default(),
        }
    }
}

/// Calls for partial transcripts while a recording runs.
pub type OnPartial<'a> = &'a (dyn Fn(&[f32]) -> Option<String> + Sync);

impl Microphone {
    pub fn state(&self) -> tokio::sync::watch::Receiver<MicState> {
        self.state.subscribe()
    }

    /// Ends the recording in progress, keeping what it heard (the person let go).
    pub fn stop(&self) -> bool {
        crate::audio::raise_stop(&self.stop)
    }

    /// Records until the person stops, goes quiet, or a limit is reached (blocking).
    /// `partial` is asked about the speech so far about once a second, off this thread, while
    /// anyone watches [`Microphone::state`].
    pub fn record(
        &self,
        device: Option<&str>,
        limits: Endpoints,
        cancel: &AtomicBool,
        partial: OnPartial<'_>,
    ) -> Result<Recording, MicError> {
        let stop = Arc::new(AtomicBool::new(false));
        {
            let mut current = self.stop.lock().unwrap();
            if current.is_some() {
                return Err(MicError::AlreadyListening);
            }
            *current = Some(stop.clone());
        }
        let _release = Release(self);
        let capture = open(device)?;
        self.state.send_replace(MicState {
            open: true,
            ..MicState::default()
        });
        std::thread::scope(|scope| self.run(capture, limits, &stop, cancel, partial, scope))
    }

    /// Transcribes the speech so far off the recording thread, for the microphone's state.
    fn spawn_partial<'s>(
        &'s self,
        speech: Vec<f32>,
        partial: OnPartial<'s>,
        scope: &'s std::thread::Scope<'s, '_>,
    ) -> std::thread::ScopedJoinHandle<'s, ()> {
        scope.spawn(move || {
            if let Some(text) = partial(&speech) {
                self.state.send_modify(|s| {
                    if s.open {
                        s.partial = text;
                    }
                });
            }
        })
    }

    fn run<'s>(
        &'s self,
        capture: Capture,
        limits: Endpoints,
        stop: &AtomicBool,
        cancel: &AtomicBool,
        partial: OnPartial<'s>,
        scope: &'s std::thread::Scope<'s, '_>,
    ) -> Result<Recording, MicError> {
        let mut resample = Resample::new(capture.rate, WHISPER_RATE).map_err(MicError::Open)?;
        let mut endpoints = Endpointer::new(limits);
        let mut at16k = Vec::new();
        let mut partial_at = WHISPER_RATE as usize;
        let mut partial_job: Option<std::thread::ScopedJoinHandle<'s, ()>> = None;
        // A device that goes silent without an error (unplugged on some hosts) ends in time.
        const STALL: Duration = Duration::from_secs(3);
        let mut last_block = std::time::Instant::now();
        let stopped = loop {
            if stop.load(Ordering::SeqCst) || cancel.load(Ordering::SeqCst) {
                break Stopped::ByPerson;
            }
            let block = match capture.blocks.recv_timeout(Duration::from_millis(100)) {
                Ok(Block::Audio(block)) => {
                    capture.queued.fetch_sub(block.len(), Ordering::SeqCst);
                    block
                }
                Ok(Block::Failed(e)) => break Stopped::DeviceLost(e),
                Err(RecvTimeoutError::Timeout) if last_block.elapsed() < STALL => continue,
                Err(RecvTimeoutError::Timeout) => {
                    break Stopped::DeviceLost(format!("no sound for {} s", STALL.as_secs()));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    break Stopped::DeviceLost("the stream closed".into());
                }
            };
            last_block = std::time::Instant::now();
            at16k.clear();
            resample.push(&block, &mut at16k).map_err(MicError::Open)?;
            let end = endpoints.push(&at16k);
            self.state.send_modify(|s| s.level = endpoints.level);
            if let Some(end) = end {
                break end;
            }
            let speech = endpoints.speech();
            // Partials are for someone watching (the window's microphone bar); with nobody
            // subscribed (a `cowork voice listen`, a schedule) each would be a whole transcription
            // of the speech so far, thrown away: a core kept busy for the length of the recording.
            let watched = self.state.receiver_count() > 0;
            if watched
                && speech.len() >= partial_at
                && partial_job.as_ref().is_none_or(|j| j.is_finished())
            {
                partial_at = speech.len() + WHISPER_RATE as usize;
                partial_job = Some(self.spawn_partial(speech.to_vec(), partial, scope));
            }
        };
        drop(capture);
        if let Stopped::DeviceLost(why) = &stopped
            && endpoints.seen_seconds() == 0.0
        {
            return Err(MicError::Lost(why.clone()));
        }
        Ok(Recording {
            samples: endpoints.speech().to_vec(),
            stopped: match stopped {
                // Stopped by the person, but nothing was said.
                Stopped::ByPerson | Stopped::MaxLength if !endpoints.heard_speech() => {
                    Stopped::NoSpeech
                }
                other => other,
            },
        })
    }
}

/// Closes the microphone's state however a recording ends.
struct Release<'a>(&'a Microphone);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        *self.0.stop.lock().unwrap() = None;
        self.0.state.send_replace(MicState::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(seconds: f32, amplitude: f32) -> Vec<f32> {
        (0..(seconds * WHISPER_RATE as f32) as usize)
            .map(|i| amplitude * (i as f32 * 2.0 * std::f32::consts::PI * 220.0 / 16_000.0).sin())
            .collect()
    }

    #[test]
    fn silence_ends_as_no_speech_after_the_wait() {
        let mut endpoints = Endpointer::new(Endpoints {
            no_speech: Duration::from_secs(2),
            ..Endpoints::default()
        });
        assert_eq!(endpoints.push(&vec![0.0; 16_000]), None);
        assert_eq!(endpoints.push(&vec![0.0; 16_000]), Some(Stopped::NoSpeech));
        assert!(endpoints.speech().is_empty());
        assert!(endpoints.level < 0.01);
    }

    #[test]
    fn the_length_limit_ends_a_recording() {
        let mut endpoints = Endpointer::new(Endpoints {
            max: Duration::from_millis(500),
            ..Endpoints::default()
        });
        assert_eq!(endpoints.push(&tone(1.0, 0.3)), Some(Stopped::MaxLength));
        assert!(
            endpoints.level > 0.5,
            "a loud tone meters loud: {}",
            endpoints.level
        );
    }
}
