#!/usr/bin/env bash
# bench/edit.sh — gguf-edit's speed, two ways:
#
#   bench/edit.sh copy [RUNS]   a metadata edit of a ~1.3 GB model (written
#                               to a new file, tensors copied) beside `cp` of
#                               the same file, both followed by `sync`
#                               (gguf-edit fsyncs its output; cp does not)
#   bench/edit.sh keys [RUNS]   metadata edits of many keys on a small model:
#                               --from-json of 5,000, 20,000 and 200,000 keys
#                               (the last ~9 MB, under the 16 MiB limit) and
#                               2,000 --set options; goal: 200,000 keys in
#                               under 2 s (edits are O(n): hashed lookups)
#   bench/edit.sh [RUNS]        both
#
# (BUILD=build by default; RUNS 5.) Runs alternate where two things are
# compared, and medians are printed (copy: with their ratio, above 1 the
# edit is slower than cp). With COMPETE=1 a busy loop runs on one core
# throughout. A benchmark, not a test.
. "$(dirname "$0")/lib.sh"
MODE=all
case "${1:-}" in copy | keys) MODE=$1; shift ;; esac
RUNS=${1:-5}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/edit-bench.XXXXXX")
trap 'kill "${busy:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
if [ "${COMPETE:-0}" = 1 ]; then (while :; do :; done) & busy=$!; echo "with one busy competitor"; fi
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }

if [ "$MODE" != keys ]; then
    "$BIN/tests/tools/mkmodel" "$WORK/in.gguf" --dim 2048 --layers 12 --ffn 5632 --heads 16 \
        --kv-heads 4 --vocab 32000 --type f16 >/dev/null
    echo "input: $(stat -c %s "$WORK/in.gguf") bytes; filesystem $(df -T "$WORK" | awk 'NR == 2 {print $2}')"
    sync
    edit_times=() cp_times=()
    for ((i = 0; i < RUNS; i++)); do
        rm -f "$WORK/out.gguf"; sync
        t0=$(now); "$BIN/gguf-edit" -q "$WORK/in.gguf" -o "$WORK/out.gguf" --set general.name=bench; sync; t1=$(now)
        edit_times+=("$(elapsed "$t0" "$t1")")
        rm -f "$WORK/out.gguf"; sync
        t0=$(now); cp "$WORK/in.gguf" "$WORK/out.gguf"; sync; t1=$(now)
        cp_times+=("$(elapsed "$t0" "$t1")")
    done
    e=$(printf '%s\n' "${edit_times[@]}" | median)
    c=$(printf '%s\n' "${cp_times[@]}" | median)
    printf 'gguf-edit (metadata edit, new file) median %.3f s\ncp + sync median               %.3f s\nratio edit / cp: %.2f\n' \
        "$e" "$c" "$(awk -v e="$e" -v c="$c" 'BEGIN { print e / c }')"
    rm -f "$WORK/in.gguf" "$WORK/out.gguf"
fi

if [ "$MODE" != copy ]; then
    "$BIN/tests/tools/mkmodel" "$WORK/small.gguf" --dim 64 --layers 2 --ffn 192 --heads 4 --kv-heads 2 \
        --vocab 320 >/dev/null
    keys_json() { awk -v n="$1" 'BEGIN { printf "{"; for (i = 0; i < n; i++) printf "%s\"k.x%d\": {\"type\": \"u32\", \"value\": %d}", i ? ",\n" : "", i, i; print "}" }'; }
    time_runs() { # LABEL CMD...: the median of RUNS runs of CMD (output to $WORK/out.gguf)
        local label=$1 t=() t0 t1
        shift
        for ((i = 0; i < RUNS; i++)); do
            rm -f "$WORK/out.gguf"
            t0=$(now); "$@" >/dev/null; t1=$(now)
            t+=("$(elapsed "$t0" "$t1")")
        done
        printf '%-34s median %.3f s (of %s: %s)\n' "$label" "$(printf '%s\n' "${t[@]}" | median)" "$RUNS" "${t[*]}"
    }
    for n in 5000 20000 200000; do
        keys_json "$n" >"$WORK/k$n.json"
        time_runs "--from-json $n keys ($(($(stat -c %s "$WORK/k$n.json") / 1024)) KiB)" \
            "$BIN/gguf-edit" -q "$WORK/small.gguf" -o "$WORK/out.gguf" --from-json "$WORK/k$n.json"
    done
    sets=()
    for ((k = 0; k < 2000; k++)); do sets+=(--set "s.x$k:u32=$k"); done
    time_runs "2000 --set" "$BIN/gguf-edit" -q "$WORK/small.gguf" -o "$WORK/out.gguf" "${sets[@]}"
fi
