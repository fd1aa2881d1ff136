#!/usr/bin/env bash
# bench/kernels.sh — kern_matmul speed per weight type (bench/kernels.c):
# 4096 x 4096, nb = 1 and 32, scalar vs SIMD, GFLOP/s per core (CPU time).
#
#   bench/kernels.sh [TYPE]     (BUILD=build, OMP_NUM_THREADS=1, MIN_TIME=0.3 s; one type
#                               when named, e.g. q6_K)
#
# Needs the kernel objects and libgguf: make build/tests/test_kernels first.
# A benchmark, never part of make test.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
OBJS="$B/obj/run/kernels.o $B/obj/run/kernels_float.o $B/obj/run/kernels_legacy.o $B/obj/run/kernels_k.o $B/obj/run/kernels_iq.o $B/obj/run/kernels_iq3s.o"
for f in $OBJS "$B/libcommon.a" "$B/libgguf.a"; do
    [ -f "$f" ] || { echo "build first: make build/tests/test_kernels (no $f)" >&2; exit 1; }
done
OUT=$(mktemp "${TMPDIR:-/tmp}/bench-kernels.XXXXXX")
trap 'rm -f "$OUT"' EXIT
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -I"$ROOT/include" -I"$ROOT/gguf" -I"$ROOT/run" -o "$OUT" \
    "$ROOT/bench/kernels.c" $OBJS "$B/libcommon.a" "$B/libgguf.a" -pthread \
    $(pkg-config --libs libpcre2-8 2>/dev/null) -lm
echo "threads: ${OMP_NUM_THREADS:=1}; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
export OMP_NUM_THREADS
"$OUT" "${MIN_TIME:-0.3}" "$@"
