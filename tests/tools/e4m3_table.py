#!/usr/bin/env python3
"""Every FP8 E4M3 (float8_e4m3fn) code with its float32 bits, one "CODE BITS" line
each in hex: the value from the OCP 8-bit floating point definition, computed with
exact fractions (sign, 4 exponent bits of bias 7, 3 mantissa bits; exponent 0 is
subnormal; S.1111.111 is NaN; no infinities), then packed as float32. The table
test_fp8 holds gguf-convert's decoder to (tests/data/fp8/README.md)."""
import struct
from fractions import Fraction

for code in range(256):
    sign = -1 if code & 0x80 else 1
    e, m = (code >> 3) & 0xF, code & 7
    if e == 15 and m == 7:
        bits = 0xFFC00000 if sign < 0 else 0x7FC00000
    else:
        mant = Fraction(m, 8) if e == 0 else 1 + Fraction(m, 8)
        v = sign * mant * Fraction(2) ** ((1 if e == 0 else e) - 7)
        bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
        if v == 0 and sign < 0:
            bits = 0x80000000
    print("%02x %08x" % (code, bits))
