#!/usr/bin/env bash
# bench/kernels.sh — kern_matmul speed per weight type (bench/kernels.c):
# 4096 x 4096, nb = 1 and 32, scalar vs SIMD, GFLOP/s per core (CPU time).
#
#   bench/kernels.sh [TYPE]     (BUILD=build, THREADS=1, MIN_TIME=0.3 s; one type
#                               when named, e.g. q6_K)
#
# THREADS: common/pool.c's threads for each product (kern_matmul spreads its
# rows over them). Needs gguf-run's objects and libgguf: make build/tests/test_kernels
# first. A benchmark, never part of make test.
. "$(dirname "$0")/lib.sh"
B=$BIN
# gguf-run's kernel objects: one for each run/kernels*.c (so a new kernel
# file needs no edit here)
OBJS=
for c in "$ROOT"/run/kernels*.c; do
    OBJS+=" $B/obj/run/$(basename "$c" .c).o"
done
for f in $OBJS "$B/libcommon.a" "$B/libgguf.a"; do
    [ -f "$f" ] || { echo "build first: make build/tests/test_kernels (no $f)" >&2; exit 1; }
done
OUT=$(mktemp "${TMPDIR:-/tmp}/bench-kernels.XXXXXX")
trap 'rm -f "$OUT"' EXIT
# shellcheck disable=SC2086 # $OBJS is a list of paths without spaces
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -I"$ROOT/include" -I"$ROOT/gguf" -I"$ROOT/common" \
    -I"$ROOT/run" -o "$OUT" "$ROOT/bench/kernels.c" $OBJS "$B/libcommon.a" "$B/libgguf.a" -pthread \
    $(pkg-config --libs libpcre2-8 2>/dev/null) -lm
THREADS=${THREADS:-1}
echo "threads: $THREADS; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
"$OUT" "${MIN_TIME:-0.3}" "$THREADS" "$@"
