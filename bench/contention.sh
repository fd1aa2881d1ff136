#!/usr/bin/env bash
# bench/contention.sh — speed with one CPU-bound competitor on the machine:
# gguf-run's decode (tg128) beside llama-bench's, each with 1 and 2 threads,
# each idle and with a busy loop this script starts and stops itself; then
# gguf-quantize (Q4_K_M) and gguf-convert (BF16 → F16) wall time, idle and
# with the competitor. Users' machines are never idle: a tool that spins at
# its barriers loses the core its working thread needs.
#
#   bench/contention.sh
#   LLAMA_BENCH=/path/to/llama-bench bench/contention.sh
#
# The model: a generated LLaMA of dim 1024, 16 layers, ffn 2816, GQA 16/4,
# vocabulary 32000 (≈ 250M weights), quantized to Q4_0 (TYPE= to change).
# Each repetition runs every configuration once, ours and theirs taking
# turns; medians of REPS (default 5). Ratios above 1: we are faster.
# A benchmark, never part of make test.
. "$(dirname "$0")/lib.sh"
REPS=${REPS:-5}
TYPE=${TYPE:-Q4_0}
for b in gguf-convert gguf-quantize gguf-run tests/tools/mkhf; do
    [ -x "$BIN/$b" ] || { echo "build first: make all build/tests/tools/mkhf (no $BIN/$b)" >&2; exit 1; }
done
have_llama() { [ -n "${LLAMA_BENCH:-}" ] && [ -x "$LLAMA_BENCH" ]; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/contention-bench.XXXXXX")
busy=
stop_busy() { if [ -n "$busy" ]; then kill "$busy" 2>/dev/null; wait "$busy" 2>/dev/null || true; busy=; fi; }
trap 'stop_busy; rm -rf "$WORK"' EXIT
start_busy() { ( while :; do :; done ) & busy=$!; sleep 0.2; }

"$BIN/tests/tools/mkhf" "$WORK/hf" --dim 1024 --layers 16 --ffn 2816 --heads 16 --kv-heads 4 \
    --vocab 32000 --dtype bf16 >/dev/null
"$BIN/gguf-convert" -q "$WORK/hf" --outtype f16 -o "$WORK/F16.gguf"
"$BIN/gguf-quantize" "$WORK/F16.gguf" "$WORK/model.gguf" "$TYPE" >/dev/null 2>&1

ours_tg() { # threads -> tok/s of 128 generated tokens
    "$BIN/gguf-run" -m "$WORK/model.gguf" --prompt-ids 1 -n 128 --ids -t "$1" 2>&1 >/dev/null |
        sed -nE 's/^timing: .*generation [0-9]+ tokens ([0-9.]+) tok\/s.*/\1/p'
}
theirs_tg() {
    "$LLAMA_BENCH" -m "$WORK/model.gguf" -p 0 -n 128 -t "$1" -r 1 -o json 2>/dev/null |
        jq -r 'map(select(.n_gen > 0))[0].avg_ts'
}
secs() { # command... -> wall seconds
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}

declare -A R
add() { R[$1]="${R[$1]:-} $2"; }
for _ in $(seq "$REPS"); do
    for load in idle busy; do
        [ "$load" = busy ] && start_busy
        for t in 1 2; do
            add "ours $load $t" "$(ours_tg "$t")"
            have_llama && add "theirs $load $t" "$(theirs_tg "$t")"
        done
        add "quantize $load" "$(secs "$BIN/gguf-quantize" "$WORK/F16.gguf" "$WORK/q.gguf" Q4_K_M)"
        add "convert $load" "$(secs "$BIN/gguf-convert" -q "$WORK/hf" --outtype f16 -o "$WORK/c.gguf")"
        stop_busy
    done
done
med() { tr ' ' '\n' <<<"${R[$1]:-}" | grep . | median; }

echo "model: $(($(stat -c %s "$WORK/model.gguf") / 1048576)) MiB $TYPE (dim 1024, 16 layers); median of $REPS; competitor: one busy loop"
printf '%-22s %10s %10s %10s %10s\n' "decode tok/s (tg128)" "idle -t1" "idle -t2" "busy -t1" "busy -t2"
for who in ours theirs; do
    [ "$who" = theirs ] && ! have_llama && continue
    printf '%-22s %10.1f %10.1f %10.1f %10.1f\n' "$who" "$(med "$who idle 1")" "$(med "$who idle 2")" \
        "$(med "$who busy 1")" "$(med "$who busy 2")"
done
printf 'ours busy: -t2 / -t1 = %.2f (goal >= 1)\n' "$(echo "$(med "ours busy 2") / $(med "ours busy 1")" | bc -l)"
if have_llama; then
    for t in 1 2; do
        printf 'ours / llama-bench, busy -t%d: %.2f; idle -t%d: %.2f\n' "$t" \
            "$(echo "$(med "ours busy $t") / $(med "theirs busy $t")" | bc -l)" "$t" \
            "$(echo "$(med "ours idle $t") / $(med "theirs idle $t")" | bc -l)"
    done
else
    echo "(llama-bench not run: set LLAMA_BENCH to its path)"
fi
printf 'gguf-quantize Q4_K_M: idle %.2f s, busy %.2f s (busy/idle %.2f)\n' "$(med "quantize idle")" \
    "$(med "quantize busy")" "$(echo "$(med "quantize busy") / $(med "quantize idle")" | bc -l)"
printf 'gguf-convert F16:     idle %.2f s, busy %.2f s (busy/idle %.2f)\n' "$(med "convert idle")" \
    "$(med "convert busy")" "$(echo "$(med "convert busy") / $(med "convert idle")" | bc -l)"
for k in "${!R[@]}"; do echo "  runs $k:${R[$k]}" >&2; done
