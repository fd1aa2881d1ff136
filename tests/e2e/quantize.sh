#!/usr/bin/env bash
# tests/e2e/quantize.sh — gguf-quantize against llama-quantize.
#
# For every manifest in reference/quantize/ (llama-quantize's output for
# wp-llama-5m with a preset, optionally with the reference imatrix), our
# output must have the same tensor names, types, shapes and sha256 of data,
# and the same general.file_type. Also: every output passes --check, bad
# input fails cleanly, and stories260K (which llama-quantize refuses)
# quantizes with every preset.
source "$(dirname "$0")/lib.sh"
QUANT=$BIN/gguf-quantize
REF=$FIX/reference

# "name type shape sha256" lines, sorted, for a manifest and for a GGUF.
manifest_rows() {
    jq -r '.tensors[] | "\(.name) \(.type | ascii_downcase) \(.shape | map(tostring) | join(",")) \(.sha256)"' "$1" | sort
}
gguf_rows() {
    join <("$INSPECT" --json "$1" | jq -r '.tensors[] | "\(.name) \(.type | ascii_downcase) \(.shape | map(tostring) | join(","))"' | sort) \
         <("$INSPECT" --hash --json "$1" | jq -r '.tensors[] | "\(.name) \(.sha256)"' | sort)
}
file_type() {
    if [[ $1 == *.json ]]; then jq -r '.metadata["general.file_type"].value' "$1"
    else "$INSPECT" --json "$1" | jq -r '.metadata["general.file_type"].value'; fi
}

if need_fixture reference/quantize "quantize manifests"; then
    for m in "$REF"/quantize/*.json; do
        name=$(basename "$m" .json)
        preset=${name##*-}
        args=()
        input=$REF/wp-llama-5m-f16.gguf
        case $name in
            *-imatrix-*) args=(--imatrix "$REF/wp-llama-5m.imatrix") ;;
            *-fromf32-*)
                # needs the F32 conversion of hf/, made by gguf-convert
                if [ ! -x "$BIN/gguf-convert" ]; then skip "$name" "needs gguf-convert for the F32 input"; continue; fi
                input=$TMP/wp-llama-5m-f32.gguf
                if [ ! -f "$input" ] && ! "$BIN/gguf-convert" -q "$FIX/models/wp-llama-5m/hf" --outtype f32 -o "$input" >"$TMP/c.log" 2>&1; then
                    fail "$name" "gguf-convert failed on models/wp-llama-5m/hf: $(tail -1 "$TMP/c.log")"; continue
                fi
                ;;
        esac
        out=$TMP/$name.gguf
        if ! "$QUANT" -q "${args[@]}" "$input" "$out" "$preset" 2 >"$TMP/q.log" 2>&1; then
            fail "$name" "gguf-quantize failed: $(tail -1 "$TMP/q.log")"; continue
        fi
        d=$(diff <(manifest_rows "$m") <(gguf_rows "$out") | head -4 | tr '\n' ' ')
        if [ -z "$d" ] && [ "$(file_type "$m")" = "$(file_type "$out")" ]; then
            pass "$name: tensors, types, shapes, sha256 and file_type as llama-quantize"
        else
            fail "$name" "${d:-general.file_type differs}"
        fi
        check "$name: output passes --check" "$INSPECT" --check "$out"
        rm -f "$out"
    done
fi

# llama-quantize gives up on stories260K (rows of 172); we keep such tensors in f16.
if need_fixture reference/stories260K-f32.gguf "stories260K with every preset"; then
    for p in Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K F16 BF16; do
        out=$TMP/stories-$p.gguf
        if "$QUANT" "$REF/stories260K-f32.gguf" "$out" "$p" 2 >"$TMP/s.log" 2>&1 &&
           "$INSPECT" --check "$out" >/dev/null 2>&1; then
            pass "stories260K $p quantizes and passes --check"
        else
            fail "stories260K $p" "$(tail -1 "$TMP/s.log")"
        fi
        rm -f "$out"
    done
    # the 172-wide ffn_down rows fit no block: reported, kept in f16
    "$QUANT" "$REF/stories260K-f32.gguf" "$TMP/s.gguf" Q4_0 >/dev/null 2>"$TMP/s.err"
    if grep -q "fallback: blk.0.ffn_down.weight: rows of 172" "$TMP/s.err" &&
       [ "$("$INSPECT" --json "$TMP/s.gguf" | jq -r '.tensors[] | select(.name=="blk.0.ffn_down.weight") | .type')" = f16 ]; then
        pass "stories260K: 172-wide rows reported and kept in f16"
    else
        fail "stories260K: 172-wide rows reported and kept in f16" "$(head -2 "$TMP/s.err")"
    fi
    rm -f "$TMP/s.gguf"

    # --dry-run writes nothing and shows the plan
    out=$TMP/dry.gguf
    if "$QUANT" --dry-run "$REF/stories260K-f32.gguf" "$out" Q4_K_M >"$TMP/dry.txt" 2>&1 &&
       [ ! -e "$out" ] && grep -q "fallback" "$TMP/dry.txt" && grep -q "bpw" "$TMP/dry.txt"; then
        pass "--dry-run prints the plan and writes nothing"
    else
        fail "--dry-run prints the plan and writes nothing"
    fi
fi

# Bad input: clear error naming the file, exit 1, no output left behind.
printf 'GGUF\003\000\000\000' >"$TMP/trunc.gguf"
out=$TMP/never.gguf
"$QUANT" "$TMP/trunc.gguf" "$out" Q4_0 >/dev/null 2>"$TMP/e.txt"; rc=$?
if [ $rc -eq 1 ] && grep -q "gguf-quantize: error: $TMP/trunc.gguf" "$TMP/e.txt" && [ ! -e "$out" ] &&
   [ -z "$(ls -A "$TMP" | grep '\.tmp\.')" ]; then
    pass "truncated input: error, exit 1, no output"
else
    fail "truncated input: error, exit 1, no output" "rc=$rc $(cat "$TMP/e.txt")"
fi
"$QUANT" "$TMP/trunc.gguf" Q9_9 >/dev/null 2>&1; rc=$?
check "unknown preset is a usage error (exit 2)" test $rc -eq 2
if need_fixture reference/wp-llama-5m-Q8_0.gguf "requantize needs --allow-requantize"; then
    "$QUANT" "$REF/wp-llama-5m-Q8_0.gguf" "$TMP/rq.gguf" Q4_0 >/dev/null 2>"$TMP/e.txt"; rc=$?
    if [ $rc -eq 1 ] && grep -q -- "--allow-requantize" "$TMP/e.txt" && [ ! -e "$TMP/rq.gguf" ]; then
        pass "requantizing needs --allow-requantize"
    else
        fail "requantizing needs --allow-requantize" "rc=$rc"
    fi
    if "$QUANT" -q --allow-requantize "$REF/wp-llama-5m-Q8_0.gguf" "$TMP/rq.gguf" Q4_0 &&
       "$INSPECT" --check "$TMP/rq.gguf" >/dev/null; then
        pass "--allow-requantize Q8_0 -> Q4_0"
    else
        fail "--allow-requantize Q8_0 -> Q4_0"
    fi
    cp "$REF/wp-llama-5m-Q8_0.gguf" "$TMP/self.gguf"
    "$QUANT" --allow-requantize "$TMP/self.gguf" "$TMP/self.gguf" Q4_0 >/dev/null 2>"$TMP/e.txt"; rc=$?
    if [ $rc -eq 1 ] && grep -q "refusing to overwrite the input" "$TMP/e.txt" && cmp -s "$TMP/self.gguf" "$REF/wp-llama-5m-Q8_0.gguf"; then
        pass "refuses to overwrite its input"
    else
        fail "refuses to overwrite its input" "rc=$rc"
    fi
fi
