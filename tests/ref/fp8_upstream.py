#!/usr/bin/env python3
"""fp8_upstream.py CONVERT_UPSTREAM.PY CONVERT_HF_TO_GGUF.PY [converter args...]

Runs llama.cpp e21cdc11's converter (through the fixtures' convert_upstream.py) on an FP8
checkpoint under a torch without float8 dtypes (Debian's 1.13), so that its
ModelBase.dequant_model computes what it computes under a torch that has them.

There, the eager loader views a F8_E4M3 tensor's bytes as torch.float8_e4m3fn and
dequant_simple takes weight.float() (each E4M3 code's exact value) times the float32 block
scale. The reference pyshim aliases torch.float8_e4m3fn to torch.uint8 (so the converter
imports), which makes weight.float() the code byte itself (0..255): wrong values. Here
torch.float8_e4m3fn stands for torch.float32 and each F8_E4M3 tensor's mapped bytes are
replaced by the float32 bytes of its decoded codes (exact: every E4M3 value is a float32),
so .view(dtype) gives weight.float()'s values and the converter's own arithmetic does the
rest unchanged (scale repeated per block, cropped, one float32 product, outtype rounding)."""
import runpy, sys

import numpy as np
import torch

torch.float8_e4m3fn = torch.float32  # before the converter builds its dtype maps

import gguf.utility as U  # noqa: E402


def e4m3_table():
    t = np.zeros(256, np.float32)
    for b in range(256):
        s = -1.0 if b & 0x80 else 1.0
        e, m = (b >> 3) & 15, b & 7
        t[b] = np.nan if (e == 15 and m == 7) else s * ((m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    return t


TABLE = e4m3_table()
_mmap_bytes = U.LocalTensor.mmap_bytes


def mmap_bytes(self):
    raw = _mmap_bytes(self)
    if self.dtype == "F8_E4M3":
        return TABLE[np.asarray(raw, dtype=np.uint8)].view(np.uint8)
    return raw


U.LocalTensor.mmap_bytes = mmap_bytes
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
