#!/usr/bin/env bash
# bench/edit.sh — gguf-edit against cp: a metadata edit of a ~1.3 GB model
# (written to a new file, tensors copied) beside `cp` of the same file, and
# both followed by `sync` (gguf-edit fsyncs its output; cp does not).
#
#   bench/edit.sh [RUNS]            (BUILD=build by default; RUNS 5)
#
# Runs alternate (edit, cp, edit, ...) and the medians are printed with
# their ratio (above 1: the edit is slower than cp). With COMPETE=1 a busy
# loop runs on one core throughout. A benchmark, not a test.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BIN=$BUILD ;; *) BIN=$ROOT/$BUILD ;; esac
RUNS=${1:-5}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/edit-bench.XXXXXX")
trap 'kill "${busy:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$BIN/tests/tools/mkmodel" "$WORK/in.gguf" --dim 2048 --layers 12 --ffn 5632 --heads 16 \
    --kv-heads 4 --vocab 32000 --type f16 >/dev/null
echo "input: $(stat -c %s "$WORK/in.gguf") bytes; filesystem $(df -T "$WORK" | awk 'NR == 2 {print $2}')"
if [ "${COMPETE:-0}" = 1 ]; then (while :; do :; done) & busy=$!; echo "with one busy competitor"; fi
sync
now() { date +%s.%N; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
edit_times=() cp_times=()
for ((i = 0; i < RUNS; i++)); do
    rm -f "$WORK/out.gguf"; sync
    t0=$(now); "$BIN/gguf-edit" -q "$WORK/in.gguf" -o "$WORK/out.gguf" --set general.name=bench; sync; t1=$(now)
    edit_times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
    rm -f "$WORK/out.gguf"; sync
    t0=$(now); cp "$WORK/in.gguf" "$WORK/out.gguf"; sync; t1=$(now)
    cp_times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
done
e=$(printf '%s\n' "${edit_times[@]}" | median)
c=$(printf '%s\n' "${cp_times[@]}" | median)
printf 'gguf-edit (metadata edit, new file) median %.3f s\ncp + sync median               %.3f s\nratio edit / cp: %.2f\n' \
    "$e" "$c" "$(awk -v e="$e" -v c="$c" 'BEGIN { print e / c }')"
