#!/usr/bin/env python3
"""mkqpack.py KIND SRC DST: copy a Hugging Face checkpoint folder (tests use models/qwen3-rand),
storing every 2-D projection weight (*_proj.weight, and Qwen 3.5's linear_attn.in_proj_*) as an integer-packed quantized source, and add
config.json's quantization_config, as released INT4 checkpoints are laid out:

  ct     compressed-tensors "pack-quantized", 4 bits, groups of 32, asymmetric: X.weight_packed
         (I32 [rows, cols/8]), X.weight_scale (BF16 [rows, groups]), X.weight_zero_point (I32
         [rows/8, groups], packed along rows), X.weight_shape (I64 [2]); one module in `ignore`
         (layer 1's down_proj) stays BF16.
  ctsym  the same, symmetric (no zero points; the Kimi K2 layout).
  kimi   ctsym on the routed experts only (model.layers.N.mlp.experts.E.{gate,up,down}_proj),
         everything else BF16, config.json as Kimi K2's release (model_type kimi_k2, `ignore`:
         lm_head, self_attn, shared_experts and the dense layers' mlp): for models/deepseek2-rand.
  gptq   GPTQ 4 bits, groups of 32, desc_act (g_idx a shuffled group per input column),
         checkpoint_format "gptq": X.qweight (I32 [in/8, out]), X.qzeros (I32 [groups, out/8]),
         X.scales (F16 [groups, out]), X.g_idx (I32 [in]).
  gptq8  GPTQ 8 bits, gptq_v2, no desc_act.
  ctfp8  compressed-tensors "float-quantized", strategy channel: X.weight F8_E4M3 (random codes,
         never the NaN ones) with X.weight_scale (BF16 [rows, 1]), as FP8-dynamic releases.
  ctfp8b the same, strategy block with block_structure [48, 96] (partial blocks at the edges):
         X.weight_scale F32 [ceil(rows / 48), ceil(cols / 96)].
  ctint  compressed-tensors "int-quantized", strategy channel: X.weight I8 (random codes in
         [-128, 127]) with X.weight_scale (BF16 [rows, 1]), as W8A8 INT8 releases.
  ctnaive the same as "naive-quantized", strategy block with block_structure [48, 96]:
         X.weight_scale F16 [ceil(rows / 48), ceil(cols / 96)].
  bitnet quant_method "bitnet" (Falcon3-*-1.58bit's layout; tests use models/llama3rope-rand):
         X.weight U8 [rows / 4, cols], four 2-bit codes a byte (value = code - 1, code 3 too), the
         code of output row s × rows / 4 + r in bits 2s..2s+1 of byte row r, with X.weight_scale
         (the inverse factor: weight = value / scale) BF16 [1], but layer 1's v_proj F16 [1] and
         its down_proj F32 [1].

Experts stored fused (Qwen 3.5 MoE as transformers 5 writes it: mlp.experts.gate_up_proj
[experts, 2 × ff, n], gate rows then up rows, and mlp.experts.down_proj [experts, n, ff]) are
first split into mlp.experts.E.{gate,up,down}_proj.weight, as quantized releases name them, and
then packed as any projection. GPTQ leaves BF16 a weight whose rows are not a whole number of
int32 words of zero points (Qwen 3.5's in_proj_a / in_proj_b of 4 rows: GPTQ cannot pack them).

The codes, zero points and scales are seeded random numbers (the source weights are random too):
the same folder on every run. NumPy only."""
import json, os, re, shutil, struct, sys
import numpy as np


def read_st(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
        raw = f.read()
    meta = hdr.pop("__metadata__", None)
    return meta, [(k, v["dtype"], v["shape"], raw[v["data_offsets"][0]:v["data_offsets"][1]])
                  for k, v in hdr.items()]


def write_st(path, items, meta):
    hdr, off = {}, 0
    if meta is not None:
        hdr["__metadata__"] = meta
    for name, dt, shape, buf in items:
        hdr[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(buf)]}
        off += len(buf)
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for it in items:
            f.write(it[3])


def pack_last(codes, bits):  # codes [..., n] → int32 words along the last axis (LSB first)
    per = 32 // bits
    n = codes.shape[-1]
    pad = -n % per
    c = np.concatenate([codes, np.zeros(codes.shape[:-1] + (pad,), codes.dtype)], -1).astype(np.uint64)
    c = c.reshape(codes.shape[:-1] + ((n + pad) // per, per))
    w = np.zeros(c.shape[:-1], np.uint64)
    for i in range(per):
        w |= c[..., i] << np.uint64(i * bits)
    return w.astype(np.uint32).view(np.int32)


def bf16(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def scale_part(rng, rows, cols, channel, size, block_dtype):
    """A weight_scale (dtype, shape, bytes) of seeded factors in [size / 10, size * 1.1):
    one per row as BF16 [rows, 1] (strategy channel), or one per 48 × 96 block as
    block_dtype (strategy block, partial blocks at the edges)."""
    if channel:
        return "BF16", [rows, 1], bf16(rng.random((rows, 1)).astype(np.float32) * size + size / 10).tobytes()
    sh = [-(-rows // 48), -(-cols // 96)]
    return ({"<f4": "F32", "<f2": "F16"}[block_dtype], sh,
            (rng.random(sh) * size + size / 10).astype(block_dtype).tobytes())


def unfuse(items):
    """Fused experts (…mlp.experts.gate_up_proj / down_proj, 3-D) as one 2-D weight per expert."""
    out = []
    for name, dt, shape, buf in items:
        m = re.fullmatch(r"(.*\.mlp\.experts)\.(gate_up_proj|down_proj)", name)
        if not m or len(shape) != 3:
            out.append((name, dt, shape, buf))
            continue
        n, rows, cols = shape
        es = len(buf) // (n * rows * cols)
        per = rows * cols * es
        for e in range(n):
            part = buf[e * per:(e + 1) * per]
            if m.group(2) == "down_proj":
                out.append((f"{m.group(1)}.{e}.down_proj.weight", dt, [rows, cols], part))
            else:
                half = rows // 2 * cols * es
                out.append((f"{m.group(1)}.{e}.gate_proj.weight", dt, [rows // 2, cols], part[:half]))
                out.append((f"{m.group(1)}.{e}.up_proj.weight", dt, [rows // 2, cols], part[half:]))
    return out


def main():
    kind, src, dst = sys.argv[1:4]
    rng = np.random.default_rng(28)
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    for f in os.listdir(dst):
        os.chmod(os.path.join(dst, f), 0o644)
    kimi = kind == "kimi"
    ct = kind.startswith("ct") or kimi
    bits = 8 if kind == "gptq8" else 4
    gs = 32
    ignore = ["model.layers.1.mlp.down_proj"] if kind == "ct" else []
    meta, items = read_st(os.path.join(src, "model.safetensors"))
    items = unfuse(items)
    out = []
    for name, dt, shape, buf in items:
        base = name[:-len(".weight")]
        if not ((name.endswith("_proj.weight") or re.search(r"\.in_proj_\w+\.weight$", name)) and
                len(shape) == 2) or base in ignore or \
                (kimi and not re.fullmatch(r"model\.layers\.\d+\.mlp\.experts\.\d+\.(gate|up|down)_proj", base)) or \
                (kind.startswith("gptq") and shape[0] * bits % 32):
            out.append((name, dt, shape, buf))
            continue
        rows, cols = shape
        groups = cols // gs
        if kind == "bitnet":
            codes = rng.integers(0, 4, (rows, cols), dtype=np.int64)
            q = rows // 4
            packed = np.zeros((q, cols), np.int64)
            for k in range(4):
                packed |= codes[k * q:(k + 1) * q] << (2 * k)
            out.append((base + ".weight", "U8", [q, cols], packed.astype(np.uint8).tobytes()))
            inv = np.float32(rng.random() * 40 + 2)
            if base == "model.layers.1.self_attn.v_proj":
                out.append((base + ".weight_scale", "F16", [1], np.array([inv], "<f2").tobytes()))
            elif base == "model.layers.1.mlp.down_proj":
                out.append((base + ".weight_scale", "F32", [1], np.array([inv], "<f4").tobytes()))
            else:
                out.append((base + ".weight_scale", "BF16", [1], bf16([inv]).tobytes()))
        elif kind in ("ctint", "ctnaive"):
            codes = rng.integers(-128, 128, (rows, cols), dtype=np.int64).astype(np.int8)
            out.append((base + ".weight", "I8", [rows, cols], codes.tobytes()))
            out.append((base + ".weight_scale",) + scale_part(rng, rows, cols, kind == "ctint", 0.001, "<f2"))
        elif kind.startswith("ctfp8"):
            codes = rng.integers(0, 127, (rows, cols), dtype=np.int64)  # 0x7f, 0xff: NaN
            codes = (codes | (rng.integers(0, 2, (rows, cols), dtype=np.int64) << 7)).astype(np.uint8)
            out.append((base + ".weight", "F8_E4M3", [rows, cols], codes.tobytes()))
            out.append((base + ".weight_scale",) + scale_part(rng, rows, cols, kind == "ctfp8", 0.01, "<f4"))
        elif ct:
            codes = rng.integers(0, 1 << bits, (rows, cols), dtype=np.int64)
            scale = bf16(rng.standard_normal((rows, groups)).astype(np.float32) * 0.01)
            out.append((base + ".weight_packed", "I32", [rows, (cols + 7) // 8], pack_last(codes, bits).tobytes()))
            out.append((base + ".weight_scale", "BF16", [rows, groups], scale.tobytes()))
            out.append((base + ".weight_shape", "I64", [2], np.array([rows, cols], "<i8").tobytes()))
            if kind == "ct":
                zp = rng.integers(0, 1 << bits, (rows, groups), dtype=np.int64)
                zpw = pack_last(zp.T, bits).T.copy()  # packed along rows
                out.append((base + ".weight_zero_point", "I32", list(zpw.shape), zpw.tobytes()))
        else:  # GPTQ: qweight is [in, out] (the transpose), packed along in
            n_in, n_out = cols, rows
            codes = rng.integers(0, 1 << bits, (n_in, n_out), dtype=np.int64)
            zeros = rng.integers(0, (1 << bits) - 1, (groups, n_out), dtype=np.int64)  # stored minus one
            scales = (rng.standard_normal((groups, n_out)) * 0.01).astype("<f2")
            gidx = np.arange(n_in) // gs
            if kind == "gptq":
                rng.shuffle(gidx)
            out.append((base + ".qweight", "I32", [n_in * bits // 32, n_out], pack_last(codes.T, bits).T.copy().tobytes()))
            out.append((base + ".qzeros", "I32", [groups, n_out * bits // 32], pack_last(zeros, bits).tobytes()))
            out.append((base + ".scales", "F16", [groups, n_out], scales.tobytes()))
            out.append((base + ".g_idx", "I32", [n_in], gidx.astype("<i4").tobytes()))
    out.sort(key=lambda t: t[0])
    write_st(os.path.join(dst, "model.safetensors"), out, meta)
    cfg = json.load(open(os.path.join(src, "config.json")))
    if kind == "bitnet":  # Falcon3-*-1.58bit's
        cfg["quantization_config"] = {"modules_to_not_convert": None, "quant_method": "bitnet"}
    elif kind in ("ctint", "ctnaive"):
        w = {"num_bits": 8, "type": "int", "strategy": "channel", "group_size": None,
             "symmetric": True, "dynamic": False}
        if kind == "ctnaive":
            w.update(strategy="block", block_structure=[48, 96])
        cfg["quantization_config"] = {
            "quant_method": "compressed-tensors",
            "format": "int-quantized" if kind == "ctint" else "naive-quantized",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": w, "input_activations": {
                "num_bits": 8, "type": "int", "strategy": "token", "dynamic": True, "symmetric": True}}},
            "ignore": ["lm_head"], "quantization_status": "compressed"}
    elif kind.startswith("ctfp8"):
        w = {"num_bits": 8, "type": "float", "strategy": "channel", "group_size": None,
             "symmetric": True, "dynamic": False}
        if kind == "ctfp8b":
            w.update(strategy="block", block_structure=[48, 96])
        cfg["quantization_config"] = {
            "quant_method": "compressed-tensors", "format": "float-quantized",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": w, "input_activations": {
                "num_bits": 8, "type": "float", "strategy": "token", "dynamic": True}}},
            "ignore": ["lm_head"], "quantization_status": "compressed"}
    elif ct:
        cfg["quantization_config"] = {
            "quant_method": "compressed-tensors", "format": "pack-quantized",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                "num_bits": bits, "type": "int", "strategy": "group", "group_size": gs,
                "symmetric": kind != "ct", "dynamic": False, "actorder": None}}},
            "ignore": ["lm_head"] + ignore, "quantization_status": "compressed"}
        if kimi:  # Kimi K2's release: its ignore list, model_type
            cfg["model_type"] = "kimi_k2"
            cfg["quantization_config"]["ignore"] = [
                "lm_head", "re:.*self_attn.*", "re:.*shared_experts.*",
                "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"]
            cfg["quantization_config"]["format"] = "pack-quantized"
    else:
        cfg["quantization_config"] = {
            "quant_method": "gptq", "bits": bits, "group_size": gs, "desc_act": kind == "gptq",
            "sym": True, "checkpoint_format": "gptq" if kind == "gptq" else "gptq_v2"}
    json.dump(cfg, open(os.path.join(dst, "config.json"), "w"), indent=2)


main()
