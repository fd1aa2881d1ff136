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

if need_fixture reference/quantize "quantize manifests" 42; then
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
    fixture_block_end
fi

# same_as_e21 NAME MANIFEST OUT [keys]: OUT has the manifest's tensors
# (names, types, shapes, sha256) and general.file_type (1 check); with
# "keys" also its quantize.* keys, types and values (1 more).
quantize_keys() { jq -c '[.metadata | to_entries[] | select(.key | startswith("quantize.")) | [.key, .value.type, .value.value]]'; }
same_as_e21() {
    local name=$1 m=$2 out=$3 d want got
    d=$(diff <(manifest_rows "$m") <(gguf_rows "$out") | head -4 | tr '\n' ' ')
    if [ -z "$d" ] && [ "$(file_type "$m")" = "$(file_type "$out")" ]; then
        pass "$name: tensors, types, shapes, sha256 and file_type as llama-quantize e21cdc11"
    else
        fail "$name" "${d:-general.file_type differs}"
    fi
    [ "${4:-}" = keys ] || return 0
    want=$(quantize_keys <"$m")
    got=$("$INSPECT" --json "$out" | quantize_keys)
    [ "$want" = "$got" ] && pass "$name: quantize.imatrix.* keys, types and values as e21cdc11" ||
        fail "$name: quantize.imatrix.* keys, types and values as e21cdc11" "want $want got $got"
}

# e21cdc11 (upstream/iquant/): every preset of every manifest, and the GGUF
# imatrix (llama-imatrix's new format, detected by content): same tensors as
# llama-quantize, and quantize.imatrix.* with e21cdc11's u32 counts. The
# imatrix is named as llama-quantize was given it (the manifest records it).
UP=$FIX/upstream
IQUANT_DONE=$(ls "$UP"/iquant/wp-llama-5m-*.json 2>/dev/null | sed 's|.*/||; s|\.json$||' | tr '\n' ' ')
[ -n "$IQUANT_DONE" ] || IQUANT_DONE="wp-llama-5m-IQ4_XS" # counted as skipped below
n_done=$(wc -w <<<"$IQUANT_DONE")
if need_fixture upstream/iquant "e21cdc11 manifests" $((2 * n_done)); then
    for name in $IQUANT_DONE; do
        m=$UP/iquant/$name.json
        preset=${name##*-}
        case $name in
            *-gimatrix-*) imdir=$UP/imatrix; im=wp-llama-5m.imatrix.gguf ;;
            *-imatrix-*) imdir=$REF; im=wp-llama-5m.imatrix ;;
            *) imdir=; im= ;;
        esac
        out=$TMP/$name.gguf
        if ! (cd "${imdir:-.}" && "$QUANT" -q ${im:+--imatrix "$im"} "$REF/wp-llama-5m-f16.gguf" "$out" "$preset" 2) \
                >"$TMP/q.log" 2>&1; then
            fail "$name" "gguf-quantize failed: $(tail -1 "$TMP/q.log")"; fail "$name: metadata"; continue
        fi
        same_as_e21 "$name" "$m" "$out" keys
        rm -f "$out"
    done
    fixture_block_end
fi

# e21cdc11 on the architecture fixtures (upstream/quantize/), one set for
# each architecture in --arches that has one (lib.sh's upstream_sets):
# Q4_K_M, Q6_K and Q4_0, and IQ4_XS with the set's GGUF imatrix (whose
# quantize.* keys are compared too), each from our F16 conversion of the
# set's checkpoint. An architecture whose checkpoints store the experts as
# MXFP4 (--arches feature convert:mxfp4-experts) adds MXFP4_MOE, and every
# preset of it runs with --allow-requantize: its F16 conversion keeps the
# experts MXFP4, and e21cdc11 needed that option. The last check: no
# manifest there is left out.
UP_PRESETS="Q4_K_M Q6_K Q4_0 imatrix-IQ4_XS"
up_manifests=() n_up=1
for a in $(arch_families); do
    fam=$(upstream_set "$a")
    [ -n "$fam" ] || continue
    presets=$UP_PRESETS req=
    if arch_has "$a" convert:mxfp4-experts; then presets="$presets MXFP4_MOE" req=--allow-requantize; fi
    for p in $presets; do
        up_manifests+=("$fam $(upstream_root "$fam")/quantize/$fam-$p.json $req")
        n_up=$((n_up + 1))
        [[ $p == imatrix-* ]] && n_up=$((n_up + 1))
    done
done
if [ -x "$BIN/gguf-convert" ] && need_fixture upstream/quantize "e21cdc11 architecture manifests" "$n_up"; then
    for row in "${up_manifests[@]}"; do
        read -r fam m req <<<"$row"
        name=$(basename "$m" .json)
        preset=${name##*-}
        im=
        [[ $name == *-imatrix-* ]] && im=$fam.imatrix.gguf
        if [ ! -f "$m" ]; then
            skip_block "$name" "no manifest $m" $((${im:+1} + 1))
            continue
        fi
        f16=$TMP/$fam-f16.gguf
        if [ ! -f "$f16" ] && ! "$BIN/gguf-convert" -q "$FIX/models/$fam" --outtype f16 -o "$f16" >"$TMP/c.log" 2>&1; then
            fail "$name" "gguf-convert failed: $(tail -1 "$TMP/c.log")"
            [ -n "$im" ] && fail "$name: metadata"
            continue
        fi
        out=$TMP/$name.gguf
        # shellcheck disable=SC2086 # $req is one option or none
        if ! (cd "${m%/quantize/*}/imatrix" && "$QUANT" -q $req ${im:+--imatrix "$im"} "$f16" "$out" "$preset" 2) >"$TMP/q.log" 2>&1; then
            fail "$name" "gguf-quantize failed: $(tail -1 "$TMP/q.log")"
            [ -n "$im" ] && fail "$name: metadata"
            continue
        fi
        same_as_e21 "$name" "$m" "$out" ${im:+keys}
        rm -f "$out"
    done
    left=$(comm -23 <(ls "$UP"/quantize/*-rand-*.json | sort) \
                    <(for row in "${up_manifests[@]}"; do read -r _ m _ <<<"$row"; echo "$m"; done | sort) | tr '\n' ' ')
    [ -z "$left" ] && pass "every manifest in upstream/quantize/ is checked above" ||
        fail "every manifest in upstream/quantize/ is checked above" "not checked: $left"
    fixture_block_end
fi

# Pieces: a tensor goes through in pieces of whole rows (64 MiB at most);
# GGUFKIT_QUANTIZE_PIECE=1000 (bytes) sends every tensor here through many
# (a few rows each, across the experts' slices with their own importance
# weights), and the bytes must still be llama-quantize's.
if [ -x "$BIN/gguf-convert" ] && need_fixture upstream/quantize/qwen3moe-rand-imatrix-IQ4_XS.json "quantize in small pieces" 3; then
    out=$TMP/pieces.gguf
    GGUFKIT_QUANTIZE_PIECE=1000 "$QUANT" -v --imatrix "$REF/wp-llama-5m.imatrix" "$REF/wp-llama-5m-f16.gguf" "$out" Q4_K_M 2 >"$TMP/q.log" 2>&1 &&
        same_as_e21 "wp-llama-5m-imatrix-Q4_K_M in 1000-byte pieces" "$REF/quantize/wp-llama-5m-imatrix-Q4_K_M.json" "$out" ||
        fail "wp-llama-5m-imatrix-Q4_K_M in 1000-byte pieces" "$(tail -1 "$TMP/q.log")"
    # token_embd: rows of 256 f16, 512 bytes (its q4_K rows are smaller: the
    # wider sets the rows per piece), so one row per 1000-byte piece
    n=$(grep -E '^\[ *[0-9]+/ *[0-9]+\] token_embd\.weight ' "$TMP/q.log" | grep -oE 'in [0-9]+ pieces')
    want="in $(( $("$INSPECT" --json "$REF/wp-llama-5m-f16.gguf" | jq '.tensors[] | select(.name == "token_embd.weight") | .shape[1]') )) pieces"
    [ "$n" = "$want" ] && pass "-v says how many pieces a tensor went through ($n)" ||
        fail "-v says how many pieces a tensor went through" "got '$n', want '$want'"
    f16=$TMP/qwen3moe-rand-f16.gguf
    if [ -f "$f16" ] || "$BIN/gguf-convert" -q "$FIX/models/qwen3moe-rand" --outtype f16 -o "$f16" >"$TMP/c.log" 2>&1; then
        (cd "$UP/imatrix" && GGUFKIT_QUANTIZE_PIECE=1000 "$QUANT" -q --imatrix qwen3moe-rand.imatrix.gguf "$f16" "$out" IQ4_XS 2) >"$TMP/q.log" 2>&1 &&
            same_as_e21 "qwen3moe-rand-imatrix-IQ4_XS in 1000-byte pieces (3-D experts)" "$UP/quantize/qwen3moe-rand-imatrix-IQ4_XS.json" "$out" ||
            fail "qwen3moe-rand-imatrix-IQ4_XS in 1000-byte pieces" "$(tail -1 "$TMP/q.log")"
    else
        fail "qwen3moe-rand-imatrix-IQ4_XS in 1000-byte pieces" "gguf-convert failed: $(tail -1 "$TMP/c.log")"
    fi
    rm -f "$out"
    fixture_block_end
fi

# Phi-3 LongRoPE (no fixture: a copy of phi3-rand made by phi3_longrope):
# the F16 conversion's Q4_K_M keeps the factor tensors F32, and its tensor
# data is the bytes llama-quantize e21cdc11 (1 thread) wrote from the same
# F16 file (data section SHA-256 measured with gguf-inspect --hash).
if [ -x "$BIN/gguf-convert" ] && command -v jq >/dev/null &&
   need_fixture models/phi3-rand "phi3 LongRoPE Q4_K_M" 1; then
    got=$(phi3_longrope "$TMP/phi3-lr" 0.75 &&
          "$BIN/gguf-convert" -q "$TMP/phi3-lr" --outtype f16 -o "$TMP/lr-f16.gguf" 2>&1 &&
          "$QUANT" -q "$TMP/lr-f16.gguf" "$TMP/lr-q4km.gguf" Q4_K_M 2>&1 &&
          "$INSPECT" --hash "$TMP/lr-q4km.gguf" | grep -F '(data section)')
    want="7a8a4a9f097621dc237de5048c5a7a415597379fbae69a62dbf2f4817a847ce1  (data section)"
    [ "$got" = "$want" ] && pass "phi3 LongRoPE Q4_K_M: llama-quantize e21cdc11's tensor data" ||
        fail "phi3 LongRoPE Q4_K_M" "got [$got]"
    rm -rf "$TMP/phi3-lr" "$TMP/lr-f16.gguf" "$TMP/lr-q4km.gguf"
    fixture_block_end
fi

# An importance matrix whose sums are 0 for a tensor (experts calibration
# never routed to) or for some of its columns: the weighted codecs gave 0/0
# scales (NaN blocks, exit 0) where ggml gives 0. A copy of wp-llama-5m's
# e21cdc11 imatrix with blk.0.ffn_down's sums all 0 and the first half of
# blk.0.attn_q's; the data sections below are llama-quantize e21cdc11's (2
# threads) from the same files: `llama-quantize --imatrix zero.imatrix.gguf
# wp-llama-5m-f16.gguf out.gguf PRESET 2`, hashed with gguf-inspect --hash.
if command -v jq >/dev/null &&
   need_fixture upstream/imatrix/wp-llama-5m.imatrix.gguf "imatrix with zero sums" 4; then
    im=$TMP/zero.imatrix.gguf
    cp "$UP/imatrix/wp-llama-5m.imatrix.gguf" "$im" && chmod u+w "$im"
    data=$("$INSPECT" --json "$im" | jq '.summary.data_offset')
    for t in "blk.0.ffn_down.weight.in_sum2 0" "blk.0.attn_q.weight.in_sum2 512"; do
        set -- $t
        off=$("$INSPECT" --json "$im" | jq --arg n "$1" '.tensors[] | select(.name == $n) | .offset')
        n=$("$INSPECT" --json "$im" | jq --arg n "$1" '.tensors[] | select(.name == $n) | .bytes')
        [ "$2" -gt 0 ] && n=$2
        head -c "$n" /dev/zero | dd of="$im" bs=1 seek=$((data + off)) conv=notrunc status=none
    done
    for pw in Q4_K_M:60ba7b750fb72ec5e0a2d0dfd6c82bb08f7b8fd35a548a005476ea1298c78442 \
              IQ2_XXS:1fe4a741c5f51cbc91e2849d535ff8d42e430abd048d190811b07d0a6159320d; do
        p=${pw%%:*} want="${pw#*:}  (data section)"
        got=$("$QUANT" -q --imatrix "$im" "$REF/wp-llama-5m-f16.gguf" "$TMP/z-$p.gguf" "$p" 2>&1 &&
              "$INSPECT" --hash "$TMP/z-$p.gguf" | grep -F '(data section)')
        [ "$got" = "$want" ] && pass "zero imatrix sums, $p: llama-quantize e21cdc11's tensor data" ||
            fail "zero imatrix sums, $p: llama-quantize e21cdc11's tensor data" "got [$got]"
        out=$("$INSPECT" --check "$TMP/z-$p.gguf" 2>&1) &&
            pass "zero imatrix sums, $p: --check finds no NaN/Inf" ||
            fail "zero imatrix sums, $p: --check finds no NaN/Inf" "$(head -c 400 <<<"$out")"
        rm -f "$TMP/z-$p.gguf"
    done
    rm -f "$im"
    fixture_block_end
fi

# Presets llama-quantize e21cdc11 refuses without an importance matrix (its
# tensor_requires_imatrix: iq1_*, iq2_*, iq3_xxs, and q2_K in Q2_K_S), and
# what --dry-run says instead; COPY copies every tensor and keeps the file type.
if need_fixture reference/wp-llama-5m-f16.gguf "imatrix-only presets and COPY" 7; then
    for p in IQ2_XXS IQ1_S IQ3_XXS Q2_K_S; do
        out=$("$QUANT" "$REF/wp-llama-5m-f16.gguf" "$TMP/no.gguf" "$p" 2>&1); rc=$?
        [ $rc -eq 1 ] && [[ $out == *"this quantization requires an importance matrix (--imatrix): tensor 'blk.0."* ]] &&
            [ ! -e "$TMP/no.gguf" ] && pass "$p without an imatrix: refused naming the first tensor, nothing written" ||
            fail "$p without an imatrix is refused" "$rc: $out"
    done
    out=$("$QUANT" --dry-run "$REF/wp-llama-5m-f16.gguf" IQ2_M 2>&1 >/dev/null); rc=$?
    [ $rc -eq 0 ] && [[ $out == *"dry run completed, but this quantization requires an importance matrix"* ]] &&
        pass "--dry-run of IQ2_M without an imatrix: a warning, exit 0" || fail "--dry-run of IQ2_M without an imatrix" "$rc: $out"
    "$QUANT" -q "$REF/wp-llama-5m-Q8_0.gguf" "$TMP/copy.gguf" COPY &&
        [ "$("$INSPECT" --hash --json "$REF/wp-llama-5m-Q8_0.gguf" | jq -c .tensors)" = "$("$INSPECT" --hash --json "$TMP/copy.gguf" | jq -c .tensors)" ] &&
        [ "$("$INSPECT" --json "$TMP/copy.gguf" | jq .metadata[\"general.file_type\"].value)" = 7 ] &&
        pass "COPY: every tensor byte for byte, general.file_type kept (7)" || fail "COPY: every tensor byte for byte"
    printf 'x' >"$TMP/x.txt"
    out=$("$QUANT" --imatrix "$REF/wp-llama-5m.imatrix" --exclude-weights attn_v "$REF/wp-llama-5m-f16.gguf" "$TMP/no.gguf" Q4_0 --tensor-type attn_v=iq2_xs 2>&1); rc=$?
    [ $rc -eq 1 ] && [[ $out == *"tensor 'blk.0.attn_v.weight': type iq2_xs needs an importance matrix (--imatrix, with data for this tensor)"* ]] &&
        pass "iq2_xs for a tensor the imatrix has no data for: refused (llama-quantize aborts in ggml)" ||
        fail "iq2_xs for a tensor without imatrix data is refused" "$rc: $out"
    rm -f "$TMP/copy.gguf" "$TMP/no.gguf"
    fixture_block_end
fi

# Requantizing from the new types dequantizes first (--allow-requantize).
if need_fixture reference/wp-llama-5m-f16.gguf "requantize from iq4_xs" 2; then
    "$QUANT" -q "$REF/wp-llama-5m-f16.gguf" "$TMP/iq.gguf" IQ4_XS 2
    out=$("$QUANT" -q "$TMP/iq.gguf" "$TMP/rq.gguf" Q8_0 2 2>&1); rc=$?
    [ $rc -eq 1 ] && [[ $out == *"is already "*": requantizing needs --allow-requantize"* ]] &&
        pass "requantizing an IQ4_XS file needs --allow-requantize" ||
        fail "requantizing an IQ4_XS file needs --allow-requantize" "$rc: $out"
    "$QUANT" -q --allow-requantize "$TMP/iq.gguf" "$TMP/rq.gguf" Q8_0 2 && "$INSPECT" --check "$TMP/rq.gguf" >/dev/null &&
        pass "IQ4_XS → Q8_0 with --allow-requantize: dequantized, requantized, --check passes" ||
        fail "IQ4_XS → Q8_0 with --allow-requantize"
    rm -f "$TMP/iq.gguf" "$TMP/rq.gguf"
    fixture_block_end
fi

# llama-quantize gives up on stories260K (rows of 172); we keep such tensors in f16.
if need_fixture reference/stories260K-f32.gguf "stories260K with every preset" 18; then
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
    fixture_block_end
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
if need_fixture reference/wp-llama-5m-Q8_0.gguf "requantize needs --allow-requantize" 3; then
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
    if [ $rc -eq 1 ] && grep -q "is an input of this run: refusing to overwrite it" "$TMP/e.txt" && cmp -s "$TMP/self.gguf" "$REF/wp-llama-5m-Q8_0.gguf"; then
        pass "refuses to overwrite its input"
    else
        fail "refuses to overwrite its input" "rc=$rc"
    fi
    fixture_block_end
fi

# --- issue 12: bounded resources, non-finite rows, honest command line --------
MKMODEL=$BIN/tests/tools/mkmodel
SYN=$TMP/syn.gguf
if "$MKMODEL" "$SYN" --dim 64 --layers 2 --ffn 128 --heads 4 --kv-heads 2 --vocab 300 --type f32 \
        >/dev/null 2>&1; then
    usage() { usage_error "$QUANT" "$@"; }
    usage "threads 100000" "bad thread count '100000'" "$SYN" "$TMP/o.gguf" Q4_0 100000
    usage "threads 1abc" "bad thread count '1abc'" "$SYN" "$TMP/o.gguf" Q4_0 1abc
    usage "-t 0" "bad thread count '0'" -t 0 "$SYN" "$TMP/o.gguf" Q4_0
    usage "unknown option" "unknown option '--bogus'" --bogus "$SYN" Q4_0
    usage "no input says so" "missing IN.gguf" --pure
    usage "no TYPE says so" "missing quantization TYPE" "$SYN"
    usage "--override-kv int out of i32" "malformed --override-kv" --override-kv a.b=int:3000000000 "$SYN" "$TMP/o.gguf" Q4_0
    usage "--override-kv key of 70,000 bytes" "a key of 1 to 65535 bytes" \
        --override-kv "$(head -c 70000 /dev/zero | tr '\0' k)=int:1" "$SYN" "$TMP/o.gguf" Q4_0
    usage "a pattern longer than 256 bytes" "pattern of 300 bytes is longer than 256" \
        --tensor-type "$(head -c 300 /dev/zero | tr '\0' a)=q8_0" "$SYN" "$TMP/o.gguf" Q4_0
    check "--version" bash -c '"$1" --version | grep -q "^gguf-quantize (ggufkit) "' _ "$QUANT"
    # a tensor copied because its fallback is its own type: the two notes apart
    if "$MKMODEL" "$TMP/odd.gguf" --dim 48 --layers 1 --ffn 96 --heads 4 --kv-heads 2 --vocab 300 \
           --type f16 >/dev/null 2>&1 &&
       "$QUANT" --dry-run "$TMP/odd.gguf" "$TMP/o.gguf" Q4_0 2>/dev/null |
           grep -q 'blk.0.attn_q.weight .* copy; fallback: rows of 48 do not fit q4_0 blocks of 32: f16$'; then
        pass "--dry-run: a copied tensor's fallback note reads 'copy; fallback: ...'"
    else
        fail "--dry-run: a copied tensor's fallback note" \
            "$("$QUANT" --dry-run "$TMP/odd.gguf" "$TMP/o.gguf" Q4_0 2>&1 | grep attn_q)"
    fi
    # issue 14: every type the user names is checked for a quantizer up front
    # (iq4_xs, i8, f64 and q8_K used to be written as garbage or unusable
    # files; every i-quant has its codec now, nvfp4 and q1_0 not)
    for t in nvfp4 q1_0 i8 f64; do
        why="tensor type '$t' cannot be written: gguf-quantize has no quantizer for it"
        usage "--tensor-type attn_v=$t refused" "$why" --tensor-type "attn_v=$t" "$SYN" "$TMP/o.gguf" Q4_0
        usage "--output-tensor-type $t refused" "--output-tensor-type: $why" --output-tensor-type "$t" "$SYN" "$TMP/o.gguf" Q4_0
        usage "--token-embedding-type $t refused" "--token-embedding-type: $why" --token-embedding-type "$t" "$SYN" "$TMP/o.gguf" Q4_0
        printf 'tensors:\n  - match: "ffn_down"\n    type: %s\n' "$t" >"$TMP/t.yaml"
        out=$("$QUANT" --dry-run --recipe "$TMP/t.yaml" "$SYN" Q4_0 2>&1 >/dev/null); rc=$?
        [ $rc -eq 1 ] && [[ $out == *"$why"* ]] && pass "a recipe naming $t is refused" ||
            fail "a recipe naming $t is refused" "exit $rc: $out"
    done
    # --tensor-type-file (llama-quantize e21cdc11): REGEX=T rules separated by spaces or newlines
    printf 'attn_v=q8_0   ffn_down=q5_0\n\nattn_k=q5_1\n' >"$TMP/types.txt"
    if "$QUANT" -q --tensor-type-file "$TMP/types.txt" "$SYN" "$TMP/tf.gguf" Q4_0 2>"$TMP/e.txt"; then
        got=$("$INSPECT" --json "$TMP/tf.gguf" | jq -r '[.tensors[] | select(.name | startswith("blk.1.")) | "\(.name)=\(.type)"] | sort | join(" ")')
        [[ $got == *"blk.1.attn_k.weight=q5_1"*"blk.1.attn_v.weight=q8_0"*"blk.1.ffn_down.weight=q5_0"* ]] &&
            pass "--tensor-type-file: every rule applied" || fail "--tensor-type-file: every rule applied" "$got"
    else
        fail "--tensor-type-file: every rule applied" "$(cat "$TMP/e.txt")"
    fi
    printf 'attn_v=nvfp4\n' >"$TMP/types.txt"
    out=$("$QUANT" --dry-run --tensor-type-file "$TMP/types.txt" "$SYN" Q4_0 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && [[ $out == *"types.txt: tensor type 'nvfp4' cannot be written"* ]] &&
        pass "--tensor-type-file naming nvfp4 is refused naming the file" ||
        fail "--tensor-type-file naming nvfp4 is refused naming the file" "exit $rc: $out"
    : >"$TMP/types.txt"
    out=$("$QUANT" --dry-run --tensor-type-file "$TMP/types.txt" "$SYN" Q4_0 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && [[ $out == *"types.txt: no REGEX=TYPE rules"* ]] &&
        pass "an empty --tensor-type-file is refused" || fail "an empty --tensor-type-file is refused" "exit $rc: $out"
    # --prune-layers: blocks 0 and 1 of 2 ... here 1 of 2: blk.1 dropped, block_count 1;
    # on a 4-block model 1,2: blk.3 becomes blk.1 with the same bytes
    "$MKMODEL" "$TMP/four.gguf" --dim 64 --layers 4 --ffn 128 --heads 4 --kv-heads 2 --vocab 300 --type f32 >/dev/null 2>&1
    if "$QUANT" -q --prune-layers 2,1,2 "$TMP/four.gguf" "$TMP/pruned.gguf" Q8_0 2>"$TMP/e.txt" &&
       "$QUANT" -q "$TMP/four.gguf" "$TMP/whole.gguf" Q8_0 2>>"$TMP/e.txt"; then
        got=$("$INSPECT" --json "$TMP/pruned.gguf" | jq -c '[.metadata["llama.block_count"] | .type, .value]')
        a=$("$INSPECT" --hash "$TMP/whole.gguf" | awk '$2 ~ /^blk\.3\./ {sub(/blk\.3\./, "blk.1.", $2); print $1, $2}' | sort)
        b=$("$INSPECT" --hash "$TMP/pruned.gguf" | awk '$2 ~ /^blk\.1\./ {print $1, $2}' | sort)
        c=$("$INSPECT" --hash "$TMP/pruned.gguf" | grep -c ' blk\.[23]\.')
        if [ "$got" = '["u32",2]' ] && [ -n "$a" ] && [ "$a" = "$b" ] && [ "$c" = 0 ] &&
           "$INSPECT" --check "$TMP/pruned.gguf" >/dev/null; then
            pass "--prune-layers 1,2: block_count 2, blk.3 renumbered blk.1 with its bytes, --check passes"
        else
            fail "--prune-layers 1,2" "$got, $c stray blocks"
        fi
    else
        fail "--prune-layers 1,2" "$(cat "$TMP/e.txt")"
    fi
    out=$("$QUANT" --dry-run "$SYN" Q8_0)
    if grep -Eq '^model size  = +[0-9]+\.[0-9]{2} MiB \(32\.00 BPW\)$' <<<"$out" &&
       grep -Eq '^quant size  = +[0-9]+\.[0-9]{2} MiB \([0-9]+\.[0-9]{2} BPW\)$' <<<"$out"; then
        pass "--dry-run ends with llama-quantize e21cdc11's model size / quant size lines"
    else
        fail "--dry-run ends with llama-quantize e21cdc11's model size / quant size lines" "$(tail -2 <<<"$out")"
    fi
    usage "--prune-layers 1,x" "--prune-layers: '1,x' is not a list of block numbers" --prune-layers 1,x "$SYN" "$TMP/o.gguf" Q4_0
    out=$("$QUANT" --dry-run --prune-layers 0,7 "$SYN" Q4_0 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && [[ $out == *"--prune-layers: block 7 does not exist (the model has 2)"* ]] &&
        pass "--prune-layers naming a missing block is refused" || fail "--prune-layers naming a missing block is refused" "exit $rc: $out"
    out=$("$QUANT" --dry-run --prune-layers 0,1 "$SYN" Q4_0 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && [[ $out == *"--prune-layers: all 2 blocks pruned"* ]] &&
        pass "--prune-layers of every block is refused" || fail "--prune-layers of every block is refused" "exit $rc: $out"
    rm -f "$TMP/four.gguf" "$TMP/pruned.gguf" "$TMP/whole.gguf" "$TMP/tf.gguf"
    usage "--tensor-type attn_v=q8_K refused" "tensor type 'q8_K' is ggml's activation format" \
        --tensor-type attn_v=q8_K "$SYN" "$TMP/o.gguf" Q4_0
    usage "--output-tensor-type q8_k refused" "tensor type 'q8_k' is ggml's activation format" \
        --output-tensor-type q8_k "$SYN" "$TMP/o.gguf" Q4_0
    # a pattern that would backtrack for ever stops at the match limit (glibc's
    # POSIX regex used 719 MB for a 21-byte pattern)
    out=$("$QUANT" --dry-run --tensor-type '^(.+)+(!|#)=q8_0' "$SYN" Q4_0 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 1 ] && [[ $out == *"match limit exceeded (a pattern this costly is refused)"* ]]; then
        pass "a catastrophic pattern is refused at the match limit"
    else
        fail "a catastrophic pattern is refused at the match limit" "exit $rc: $out"
    fi
    # a recipe nested 100,000 deep (1,000,000 ran past 2 minutes): refused at once
    { head -c 100000 /dev/zero | tr '\0' '['; head -c 100000 /dev/zero | tr '\0' ']'; } >"$TMP/deep.yaml"
    out=$(timeout 20 "$QUANT" --dry-run --recipe "$TMP/deep.yaml" "$SYN" Q4_0 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 1 ] && [[ $out == *"deep.yaml: line 1: nested more than 64 levels deep"* ]]; then
        pass "a recipe nested 100000 deep is refused at once"
    else
        fail "a recipe nested 100000 deep is refused at once" "exit $rc: $out"
    fi
    if "$QUANT" --dry-run "$SYN" Q4_0 >/dev/full 2>"$TMP/e.txt"; then
        fail "--dry-run to a full stdout exits 1"
    else
        grep -q "standard output: No space left on device" "$TMP/e.txt" && pass "--dry-run to a full stdout exits 1" ||
            fail "--dry-run to a full stdout exits 1" "$(cat "$TMP/e.txt")"
    fi
    # NaN in a weight: refused naming tensor, row and column, no output (llama.cpp
    # quantizes it into finite garbage that then passes --check)
    off=$("$INSPECT" --json "$SYN" | jq '.tensors[] | select(.name == "blk.1.ffn_down.weight") | .offset' 2>/dev/null)
    data=$("$INSPECT" --json "$SYN" | jq '.summary.data_offset' 2>/dev/null)
    if [ -n "$off" ] && [ -n "$data" ]; then
        cp "$SYN" "$TMP/nan.gguf"
        # row 3 (ffn 128 wide), column 5
        printf '\x00\x00\xc0\x7f' | dd of="$TMP/nan.gguf" bs=1 seek=$((data + off + (3 * 128 + 5) * 4)) conv=notrunc status=none
        rm -f "$TMP/nan-q.gguf"
        out=$("$QUANT" "$TMP/nan.gguf" "$TMP/nan-q.gguf" Q4_K_M 2>&1 >/dev/null); rc=$?
        if [ $rc -eq 1 ] && [[ $out == *"tensor 'blk.1.ffn_down.weight' row 3 has a non-finite value (NaN) at column 5"* ]] &&
           [ ! -e "$TMP/nan-q.gguf" ]; then
            pass "a NaN weight is refused naming tensor, row and column"
        else
            fail "a NaN weight is refused naming tensor, row and column" "exit $rc: $out"
        fi
    else
        skip "a NaN weight is refused naming tensor, row and column" "jq not installed"
    fi
    # Every tensor written is checked, not only the quantized ones: a NaN or
    # an Inf in a norm kept f32 (copied as it is, by every preset and COPY),
    # a NaN block scale in a q8_0 tensor copied as it is, and finite values
    # too large for the type they are written in (f16 tops at 65504, and so
    # do the f16 scales of q8_0 and the others). Each refused naming tensor,
    # row and column, exit 1, no output and no temporary file left.
    # patch_at IN OUT TENSOR OFFSET HEXBYTES: a copy of IN with the bytes at
    # OFFSET in TENSOR's data replaced.
    patch_at() {
        local off data
        off=$("$INSPECT" --json "$1" | jq ".tensors[] | select(.name == \"$3\") | .offset")
        data=$("$INSPECT" --json "$1" | jq '.summary.data_offset')
        cp "$1" "$2" &&
            printf "$(sed 's/../\\x&/g' <<<"$5")" | dd of="$2" bs=1 seek=$((data + off + $4)) conv=notrunc status=none
    }
    # refused_value NAME WANT IN TYPE [OPTIONS...]: gguf-quantize OPTIONS IN OUT
    # TYPE 2 exits 1 with "IN: WANT: nothing written", leaving neither OUT nor
    # a temporary file
    refused_value() {
        local name=$1 want=$2 in=$3 type=$4 out=$TMP/nf-out.gguf rc msg
        shift 4
        rm -f "$out"
        msg=$("$QUANT" "$@" "$in" "$out" "$type" 2 2>&1 >/dev/null); rc=$?
        if [ $rc -eq 1 ] && [ "$msg" = "gguf-quantize: error: $in: $want: nothing written" ] && [ ! -e "$out" ] &&
           [ -z "$(find "$TMP" -maxdepth 1 -name '.nf-out.gguf.tmp.*')" ]; then
            pass "$name"
        else
            fail "$name" "exit $rc: $msg"
        fi
    }
    if command -v jq >/dev/null; then
        patch_at "$SYN" "$TMP/nf1.gguf" blk.0.attn_norm.weight $((5 * 4)) 0000c07f
        refused_value "a NaN in a norm kept f32 is refused (Q4_K_M)" \
            "tensor 'blk.0.attn_norm.weight' row 0 has a non-finite value (NaN) at column 5" "$TMP/nf1.gguf" Q4_K_M
        refused_value "a NaN in a norm is refused by COPY" \
            "tensor 'blk.0.attn_norm.weight' row 0 has a non-finite value (NaN) at column 5" "$TMP/nf1.gguf" COPY
        patch_at "$SYN" "$TMP/nf2.gguf" output_norm.weight $((63 * 4)) 0000807f
        refused_value "+Inf in output_norm (f32, copied) is refused" \
            "tensor 'output_norm.weight' row 0 has a non-finite value (+Inf) at column 63" "$TMP/nf2.gguf" Q8_0
        patch_at "$SYN" "$TMP/nf2.gguf" blk.1.ffn_norm.weight 0 000080ff
        refused_value "-Inf in blk.1.ffn_norm (f32, copied) is refused" \
            "tensor 'blk.1.ffn_norm.weight' row 0 has a non-finite value (-Inf) at column 0" "$TMP/nf2.gguf" Q4_0
        # blk.1.ffn_down is [128, 64]: q8_0 rows of 4 blocks of 34 bytes; the
        # scale (f16 0x7e00, NaN) of row 1's block 1 stands for columns 32..63
        if "$QUANT" -q "$SYN" "$TMP/nf-q8.gguf" Q8_0 2; then
            patch_at "$TMP/nf-q8.gguf" "$TMP/nf3.gguf" blk.1.ffn_down.weight $((136 + 34)) 007e
            refused_value "a NaN block scale in a q8_0 tensor copied as it is is refused (Q8_0)" \
                "tensor 'blk.1.ffn_down.weight' row 1 has a non-finite value (NaN) at column 32" "$TMP/nf3.gguf" Q8_0
            refused_value "a NaN block scale is refused by COPY" \
                "tensor 'blk.1.ffn_down.weight' row 1 has a non-finite value (NaN) at column 32" "$TMP/nf3.gguf" COPY
        else
            fail "a NaN block scale in a q8_0 tensor copied as it is is refused" "could not quantize $SYN"
            fail "a NaN block scale is refused by COPY" "could not quantize $SYN"
        fi
        # 1e6 (f32 0x49742400) at row 1, column 3 of blk.0.ffn_up [64, 128]: Inf in f16
        patch_at "$SYN" "$TMP/nf4.gguf" blk.0.ffn_up.weight $(((64 + 3) * 4)) 00247449
        refused_value "1e6 written as f16 (+Inf) is refused" \
            "tensor 'blk.0.ffn_up.weight' row 1 is too large for f16: column 3 comes out +Inf (the row's largest magnitude is 1e+06; f16 values and scales hold at most 65504)" \
            "$TMP/nf4.gguf" Q8_0 --tensor-type ffn_up=f16
        # 1e9 at row 1, column 35: the q8_0 scale of columns 32..63 (1e9 / 127) is Inf
        patch_at "$SYN" "$TMP/nf4.gguf" blk.0.ffn_up.weight $(((64 + 35) * 4)) 286b6e4e
        refused_value "1e9 quantized to q8_0 (an Inf block scale) is refused" \
            "tensor 'blk.0.ffn_up.weight' row 1 is too large for q8_0: column 32 comes out NaN (the row's largest magnitude is 1e+09; f16 values and scales hold at most 65504)" \
            "$TMP/nf4.gguf" Q8_0
        rm -f "$TMP"/nf[0-9].gguf "$TMP/nf-q8.gguf"
    else
        skip_block "non-finite values in copied tensors" "jq not installed" 8
    fi
    # GGUFKIT_QUANTIZE_PIECE=1 (one row per piece): the same bytes as one piece
    # (token_embd's 300 rows went through 300 pieces)
    "$QUANT" -q "$SYN" "$TMP/p1.gguf" Q4_K_M 2 &&
        GGUFKIT_QUANTIZE_PIECE=1 "$QUANT" -v "$SYN" "$TMP/p2.gguf" Q4_K_M 2 >"$TMP/p.log" 2>&1 &&
        grep -Eq '\] token_embd\.weight .* in 300 pieces( |$)' "$TMP/p.log" && cmp -s "$TMP/p1.gguf" "$TMP/p2.gguf" &&
        pass "one row per piece (300 pieces of token_embd): the bytes of whole tensors" ||
        fail "one row per piece: the bytes of whole tensors" "$(grep token_embd "$TMP/p.log")"
    rm -f "$TMP/p1.gguf" "$TMP/p2.gguf"
    GGUFKIT_QUANTIZE_PIECE=0 usage "GGUFKIT_QUANTIZE_PIECE=0 refused" "GGUFKIT_QUANTIZE_PIECE='0' is not a byte count from 1 to 67108864" \
        "$SYN" "$TMP/o.gguf" Q4_0
else
    skip_block "quantize command line and bad rows" "mkmodel failed" 25
fi
# An FP8 source: qwen3fp8-rand converted to bf16 (its FP8 projections
# dequantized) and quantized as llama-quantize e21cdc11 quantizes the bf16
# conversion of llama.cpp's converter (tests/data/fp8/README.md)
if [ -x "$BIN/gguf-convert" ] && need_fixture models/qwen3fp8-rand "fp8 source quantized" 2; then
    "$BIN/gguf-convert" -q "$FIX/models/qwen3fp8-rand" --outtype bf16 -o "$TMP/fp8-bf16.gguf" >"$TMP/c.log" 2>&1 ||
        echo "gguf-convert failed: $(tail -1 "$TMP/c.log")"
    for p in Q4_K_M Q6_K; do
        out=$TMP/fp8-$p.gguf
        if "$QUANT" -q "$TMP/fp8-bf16.gguf" "$out" "$p" >"$TMP/q.log" 2>&1; then
            same_as_e21 "qwen3fp8-rand bf16 to $p" "$ROOT/tests/data/fp8/qwen3fp8-rand-onepass-$p.json" "$out"
        else
            fail "qwen3fp8-rand bf16 to $p" "gguf-quantize failed: $(tail -1 "$TMP/q.log")"
        fi
        rm -f "$out"
    done
    rm -f "$TMP/fp8-bf16.gguf"
    fixture_block_end
fi
# Packed sources (tests/tools/mkqpack.py's compressed-tensors and GPTQ
# copies of qwen3-rand, the packed experts of deepseek2-rand in Kimi K2's
# layout and of qwen3moe-rand, deepseek2-rand, glm4moe-rand, qwen35-rand and
# qwen35moe-rand packed whole, BitNet weights on llama3rope-rand, qwen35-rand,
# qwen35moe-rand and deepseek2-rand) converted
# to bf16 and quantized, as
# llama-quantize e21cdc11 quantizes the bf16 conversion of llama.cpp's
# converter (tests/data/qpack/README.md)
for pq in "qwen3ct ct qwen3-rand" "qwen3gptq gptq qwen3-rand" "deepseek2kimi kimi deepseek2-rand" \
          "qwen3moect ct qwen3moe-rand" "deepseek2gptq gptq deepseek2-rand" "deepseek2ct ct deepseek2-rand" \
          "glm4moect ct glm4moe-rand" "glm4moegptq gptq glm4moe-rand" "qwen35ct ct qwen35-rand" \
          "qwen35gptq gptq qwen35-rand" "qwen35moect ct qwen35moe-rand" "qwen35moegptq gptq qwen35moe-rand" \
          "llama3bitnet bitnet llama3rope-rand" "qwen35bitnet bitnet qwen35-rand" \
          "qwen35moebitnet bitnet qwen35moe-rand" "deepseek2bitnet bitnet deepseek2-rand"; do
    read -r pm pk pf <<<"$pq"
    if [ ! -x "$BIN/gguf-convert" ] || ! mkqpack "$pk" "$TMP/$pm-rand" "$pf"; then
        skip "$pm-rand bf16 to Q4_K_M" "no gguf-convert, python3 with NumPy or models/$pf"
    else
        out=$TMP/qp-Q4_K_M.gguf
        if "$BIN/gguf-convert" -q "$TMP/$pm-rand" --outtype bf16 -o "$TMP/qp-bf16.gguf" >"$TMP/c.log" 2>&1 &&
           "$QUANT" -q "$TMP/qp-bf16.gguf" "$out" Q4_K_M >"$TMP/q.log" 2>&1; then
            same_as_e21 "$pm-rand bf16 to Q4_K_M" "$ROOT/tests/data/qpack/$pm-rand-onepass-Q4_K_M.json" "$out"
        else
            fail "$pm-rand bf16 to Q4_K_M" "$(tail -1 "$TMP/c.log") $(tail -1 "$TMP/q.log" 2>/dev/null)"
        fi
        rm -f "$out" "$TMP/qp-bf16.gguf"
    fi
    rm -rf "$TMP/$pm-rand"
done
