//! Audio files → 16 kHz mono f32, what Whisper reads. Decoding is symphonia's (WAV, FLAC, Ogg
//! Vorbis, MP3); resampling is rubato's.

use rubato::{FftFixedIn, Resampler};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::DecoderOptions;
use symphonia::core::errors::Error as Decode;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

pub const WHISPER_RATE: u32 = 16_000;

/// Raises the stop flag of the recording or speech in progress; false when nothing runs.
pub(crate) fn raise_stop(current: &Mutex<Option<Arc<AtomicBool>>>) -> bool {
    match current.lock().unwrap().as_ref() {
        Some(flag) => {
            flag.store(true, Ordering::SeqCst);
            true
        }
        None => false,
    }
}

/// The file's audio, mixed to mono and resampled to 16 kHz. The error says what was wrong in
/// words a person can act on.
pub fn load(path: &Path) -> Result<Vec<f32>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stream = MediaSourceStream::new(Box::new(file), Default::default());
    let mut hint = Hint::new();
    if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
        hint.with_extension(ext);
    }
    let unreadable = |e: Decode| {
        format!(
            "{}: not audio this can read ({e}) — give a WAV, FLAC, Ogg Vorbis or MP3 file",
            path.display()
        )
    };
    let probed = symphonia::default::get_probe()
        .format(
            &hint,
            stream,
            &FormatOptions::default(),
            &MetadataOptions::default(),
        )
        .map_err(unreadable)?;
    let mut format = probed.format;
    let track = format
        .default_track()
        .ok_or_else(|| format!("{}: the file has no audio track", path.display()))?;
    let track_id = track.id;
    let rate = track
        .codec_params
        .sample_rate
        .ok_or_else(|| format!("{}: the audio has no sample rate", path.display()))?;
    let mut decoder = symphonia::default::get_codecs()
        .make(&track.codec_params, &DecoderOptions::default())
        .map_err(unreadable)?;
    let mut mono = Vec::new();
    loop {
        let packet = match format.next_packet() {
            Ok(packet) => packet,
            Err(Decode::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(Decode::ResetRequired) => break,
            Err(e) => return Err(unreadable(e)),
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = match decoder.decode(&packet) {
            Ok(decoded) => decoded,
            // A damaged packet is skipped, as players do; the rest is still speech.
            Err(Decode::DecodeError(_)) => continue,
            Err(e) => return Err(unreadable(e)),
        };
        let channels = decoded.spec().channels.count().max(1);
        let mut samples = SampleBuffer::<f32>::new(decoded.capacity() as u64, *decoded.spec());
        samples.copy_interleaved_ref(decoded);
        mix_to_mono(samples.samples(), channels, &mut mono);
    }
    if mono.is_empty() {
        return Err(format!("{}: the file holds no audio", path.display()));
    }
    resample(&mono, rate)
}

/// Interleaved frames of `channels` → their mean, appended to `out`.
pub fn mix_to_mono(interleaved: &[f32], channels: usize, out: &mut Vec<f32>) {
    out.extend(
        interleaved
            .chunks(channels)
            .map(|frame| frame.iter().sum::<f32>() / channels as f32),
    );
}

/// `samples` at `rate` → 16 kHz.
pub fn resample(samples: &[f32], rate: u32) -> Result<Vec<f32>, String> {
    let mut resampler = Resample::new(rate, WHISPER_RATE)?;
    let mut out = Vec::with_capacity(samples.len() * WHISPER_RATE as usize / rate as usize + 1024);
    resampler.push(samples, &mut out)?;
    resampler.finish(&mut out)?;
    Ok(out)
}

/// A streaming rate converter for mono audio: the microphone's blocks in, 16 kHz out; speech at
/// the synthesizer's rate in, the speaker's rate out.
pub struct Resample {
    fft: Option<FftFixedIn<f32>>,
    pending: Vec<f32>,
}

const CHUNK: usize = 1024;

impl Resample {
    pub fn new(from: u32, to: u32) -> Result<Self, String> {
        let fft = if from == to {
            None
        } else {
            Some(
                FftFixedIn::<f32>::new(from as usize, to as usize, CHUNK, 2, 1)
                    .map_err(|e| format!("resampling from {from} Hz to {to} Hz: {e}"))?,
            )
        };
        Ok(Resample {
            fft,
            pending: Vec::new(),
        })
    }

    /// Converts what whole chunks `samples` completes and appends them to `out`.
    pub fn push(&mut self, samples: &[f32], out: &mut Vec<f32>) -> Result<(), String> {
        let Some(fft) = self.fft.as_mut() else {
            out.extend_from_slice(samples);
            return Ok(());
        };
        self.pending.extend_from_slice(samples);
        let mut used = 0;
        for chunk in self.pending.chunks_exact(CHUNK) {
            let frames = fft
                .process(&[chunk], None)
                .map_err(|e| format!("resampling: {e}"))?;
            out.extend_from_slice(&frames[0]);
            used += CHUNK;
        }
        self.pending.drain(..used);
        Ok(())
    }

    /// Converts the last partial chunk.
    pub fn finish(&mut self, out: &mut Vec<f32>) -> Result<(), String> {
        let Some(fft) = self.fft.as_mut() else {
            return Ok(());
        };
        let rest = std::mem::take(&mut self.pending);
        let frames = fft
            .process_partial(Some(&[rest.as_slice()]), None)
            .map_err(|e| format!("resampling: {e}"))?;
        out.extend_from_slice(&frames[0]);
        Ok(())
    }
}

/// The stream settings for `config` with ~20-ms device blocks: the host's default can be
/// seconds long (PulseAudio's ALSA plugin), which would hold back the level meter, partial
/// transcripts and the end of speech by as much.
pub fn short_blocks(config: &cpal::SupportedStreamConfig) -> cpal::StreamConfig {
    let mut stream = config.config();
    let want = config.sample_rate() / 50;
    if let cpal::SupportedBufferSize::Range { min, max } = config.buffer_size() {
        stream.buffer_size = cpal::BufferSize::Fixed(want.clamp(*min, *max));
    }
    stream
}
