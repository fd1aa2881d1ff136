#!/usr/bin/env bash
# tests/e2e/sensitivity.sh — gguf-run --sensitivity: the mean KL divergence
# each tensor alone, quantized to each type, puts on the model's output.
#
# On wp-llama-5m F16 over 3 chunks of 64 tokens of botchan: a row per matrix
# (the token embedding and the output included) and type, bytes equal to
# what gguf-quantize writes for that tensor at that type, q8_0 below q4_K for
# every tensor; and a measurement is the real thing: the file gguf-quantize
# makes with that one tensor at that type (the rest F16) gives that mean KLD
# in gguf-run --kl-divergence over the same chunks. Bad types, a missing
# importance matrix or text, an output that is an input are refused.
source "$(dirname "$0")/lib.sh"
RUN=$BIN/gguf-run
QUANTIZE=$BIN/gguf-quantize
W=$TMP/sensitivity
mkdir -p "$W"
M=$FIX/reference/wp-llama-5m-f16.gguf
T=$FIX/corpora/botchan.txt

usage_error "$RUN" "--sensitivity without a text" "--sensitivity needs the text: -f TEXT" \
    -m "$M" --sensitivity "$W/s.tsv"
usage_error "$RUN" "--sensitivity-types without --sensitivity" \
    "--sensitivity-types and --sensitivity-imatrix go with --sensitivity OUT" \
    -m "$M" -p hi --sensitivity-types q4_K
usage_error "$RUN" "--sensitivity with --imatrix" "--imatrix, --verify and --sensitivity are separate runs" \
    -m "$M" -f "$T" --sensitivity "$W/s.tsv" --imatrix "$W/i.gguf"

if need_fixture reference/wp-llama-5m-f16.gguf "sensitivity on wp-llama-5m" &&
   need_fixture corpora/botchan.txt "sensitivity on wp-llama-5m" 10; then
    "$RUN" -m "$M" --imatrix "$W/cal.imatrix" -f "$T" -c 64 --chunks 8 >/dev/null 2>&1
    if "$RUN" -m "$M" --sensitivity "$W/s.tsv" -f "$T" -c 64 --chunks 3 --sensitivity-types q4_K,q8_0 \
           --sensitivity-imatrix "$W/cal.imatrix" -t 2 >"$W/out" 2>"$W/err"; then
        pass "sensitivity: $(cat "$W/out")"
    else
        fail "sensitivity" "$(tail -1 "$W/err")"
    fi
    # a row per matrix and type: 4 blocks × 7 + token_embd + output = 30 matrices
    rows=$(grep -vc '^#' "$W/s.tsv")
    if [ "$rows" = 60 ] && [ "$(grep -c '^# tensor' "$W/s.tsv")" = 1 ]; then
        pass "sensitivity: 60 rows (30 matrices × 2 types) under a header"
    else fail "sensitivity: rows" "$rows"; fi
    # (a KLD a hair below 0: the base log-probabilities are stored in 16 bits, as llama-perplexity's)
    bad=$(awk -F'\t' '!/^#/ && !($4 > -1e-4 && $4 < 10 && $3 > 0) { print }' "$W/s.tsv" | head -2)
    if [ -z "$bad" ]; then pass "sensitivity: every KLD finite and > -1e-4, every size > 0"
    else fail "sensitivity: values" "$bad"; fi
    worse=$(awk -F'\t' '!/^#/ { k[$1 " " $2] = $4; n[$1] = 1 }
                        END { for (t in n) if (!(k[t " q8_0"] < k[t " q4_K"])) print t }' "$W/s.tsv")
    if [ -z "$worse" ]; then pass "sensitivity: q8_0 moves the output less than q4_K, every tensor"
    else fail "sensitivity: q8_0 vs q4_K" "$worse"; fi
    # the bytes are gguf-quantize's for the tensor at that type
    "$QUANTIZE" --dry-run --pure "$M" "$W/x.gguf" Q8_0 2>/dev/null |
        awk '{ for (i = 3; i < NF; i++) if ($i == "->" && $(i + 1) == "q8_0") print $2, $(i + 2) }' |
        sort >"$W/q8.bytes"
    awk -F'\t' '$2 == "q8_0" { print $1, $3 }' "$W/s.tsv" | sort >"$W/s8.bytes"
    if [ -s "$W/q8.bytes" ] && diff -q "$W/q8.bytes" "$W/s8.bytes" >/dev/null; then
        pass "sensitivity: q8_0 sizes equal gguf-quantize --pure Q8_0's, tensor by tensor"
    else fail "sensitivity: sizes" "$(diff "$W/q8.bytes" "$W/s8.bytes" | head -3 | tr '\n' '|')"; fi
    # a measurement = the KLD of the file with that tensor alone quantized
    "$RUN" -m "$M" --perplexity "$T" -c 64 --chunks 3 --kl-divergence-base "$W/base.kld" >/dev/null 2>&1
    for tt in "blk.0.ffn_down.weight q4_K" "blk.2.attn_v.weight q4_K" "blk.3.ffn_gate.weight q4_K" \
              "output.weight q4_K" "token_embd.weight q4_K"; do
        set -- $tt
        re="^$(printf '%s' "$1" | sed 's/\./\\./g')\$"
        want=$(awk -F'\t' -v t="$1" -v q="$2" '$1 == t && $2 == q { printf "%.6f", $4 }' "$W/s.tsv")
        "$QUANTIZE" -q --imatrix "$W/cal.imatrix" --tensor-type "$re=$2" "$M" "$W/one.gguf" F16 >/dev/null 2>&1
        got=$("$RUN" -m "$W/one.gguf" --kl-divergence --kl-divergence-base "$W/base.kld" 2>/dev/null |
              sed -n 's/^kl-divergence: mean \([0-9.]*\),.*/\1/p')
        if [ -n "$want" ] && [ "$got" = "$want" ]; then
            pass "sensitivity: $1 at $2 = --kl-divergence of the file with it alone quantized ($got)"
        else fail "sensitivity: $1 at $2" "table $want, file $got"; fi
    done
    fixture_block_end
fi

if need_fixture reference/wp-llama-5m-f16.gguf "sensitivity refusals" 4; then
    fails_cleanly "sensitivity: an unknown type is refused" "$W/r.tsv" \
        "--sensitivity-types: 'q9_K' is not a type" \
        "$RUN" -m "$M" -f "$T" --sensitivity "$W/r.tsv" --sensitivity-types q4_K,q9_K --chunks 1
    fails_cleanly "sensitivity: a type that needs an importance matrix is refused" "$W/r.tsv" \
        "--sensitivity-types: 'iq2_xxs' is not a type gguf-quantize can write without" \
        "$RUN" -m "$M" -f "$T" --sensitivity "$W/r.tsv" --sensitivity-types iq2_xxs --chunks 1
    fails_cleanly "sensitivity: a missing importance matrix is refused naming it" "$W/r.tsv" \
        "$W/none.imatrix: " \
        "$RUN" -m "$M" -f "$T" --sensitivity "$W/r.tsv" --sensitivity-imatrix "$W/none.imatrix" --chunks 1
    cp "$T" "$W/t.txt"
    fails_cleanly "sensitivity: OUT as the text is refused" "$W/none" "is an input" \
        "$RUN" -m "$M" -f "$W/t.txt" --sensitivity "$W/t.txt" --chunks 1
    fixture_block_end
fi

# --- gguf-quantize --sensitivity: a mix for the size of each stock preset ------------------
# wp-llama-5m: calibrated on botchan (the importance matrix and the table),
# scored on the held-out War and Peace text, never seen in calibration
if need_fixture corpora/war-and-peace-heldout.txt "target-size mixes on wp-llama-5m" &&
   need_fixture reference/wp-llama-5m-f16.gguf "target-size mixes on wp-llama-5m" 15; then
    H=$FIX/corpora/war-and-peace-heldout.txt
    "$RUN" -m "$M" --imatrix "$W/c.imatrix" -f "$T" -c 128 --chunks 64 >/dev/null 2>&1
    "$RUN" -m "$M" --sensitivity "$W/t.tsv" -f "$T" -c 128 --chunks 6 \
        --sensitivity-imatrix "$W/c.imatrix" >/dev/null 2>"$W/err" || fail "target: the table" "$(tail -1 "$W/err")"
    "$RUN" -m "$M" --perplexity "$H" -c 128 --kl-divergence-base "$W/h.kld" >/dev/null 2>&1
    # kld FILE: "mean p99" of its KL divergence from F16 on the held-out text
    kld() { "$RUN" -m "$1" --kl-divergence --kl-divergence-base "$W/h.kld" 2>/dev/null |
            awk '/^Mean +KLD:/ { m = $3 } /^99.0% +KLD:/ { p = $3 } END { print m, p }'; }
    for p in Q3_K_M Q4_K_M Q5_K_M; do
        "$QUANTIZE" -q --imatrix "$W/c.imatrix" "$M" "$W/s-$p.gguf" $p >/dev/null 2>&1
        "$QUANTIZE" --imatrix "$W/c.imatrix" --sensitivity "$W/t.tsv" --write-recipe "$W/$p.yaml" \
            "$M" "$W/t-$p.gguf" $p >"$W/q.out" 2>&1
        s1=$(stat -c %s "$W/s-$p.gguf" 2>/dev/null || echo 0) s2=$(stat -c %s "$W/t-$p.gguf" 2>/dev/null || echo 0)
        read -r sm sp <<<"$(kld "$W/s-$p.gguf")"
        read -r tm tp <<<"$(kld "$W/t-$p.gguf")"
        if [ "$s2" -gt 0 ] && awk -v a="$s1" -v b="$s2" 'BEGIN { exit !(b <= a * 1.01 && b >= a * 0.99) }'; then
            pass "target $p: $s2 bytes, stock $s1 (within 1%)"
        else fail "target $p: size" "$s2 vs $s1: $(tail -1 "$W/q.out")"; fi
        if awk -v s="$sm" -v t="$tm" 'BEGIN { exit !(s > 0 && t > 0 && t <= 0.75 * s) }'; then
            pass "target $p: mean KLD $tm vs stock $sm on held-out text (25% lower at least)"
        else fail "target $p: mean KLD" "$tm vs stock $sm"; fi
        if awk -v s="$sp" -v t="$tp" 'BEGIN { exit !(s > 0 && t > 0 && t < s) }'; then
            pass "target $p: 99th-percentile KLD $tp vs stock $sp"
        else fail "target $p: p99 KLD" "$tp vs stock $sp"; fi
    done
    # the recipe written gives the same file
    "$QUANTIZE" -q --imatrix "$W/c.imatrix" --recipe "$W/Q4_K_M.yaml" "$M" "$W/r.gguf" Q4_K_M >/dev/null 2>&1
    if cmp -s "$W/r.gguf" "$W/t-Q4_K_M.gguf"; then
        pass "target: --write-recipe's recipe gives the same file byte for byte"
    else fail "target: the recipe" "$(head -3 "$W/Q4_K_M.yaml" | tr '\n' '|')"; fi
    # refusals: a target no mix fits, a table of another model
    fails_cleanly "target: a size no mix fits is refused" "$W/x.gguf" "the smallest mix the table allows" \
        "$QUANTIZE" --sensitivity "$W/t.tsv" --target-bpw 1.5 "$M" "$W/x.gguf" Q4_K_M
    awk -F'\t' 'BEGIN { OFS = "\t" } !/^#/ && $1 == "blk.0.ffn_up.weight" { $3 = $3 + 1 } { print }' \
        "$W/t.tsv" >"$W/other.tsv"
    fails_cleanly "target: a table of another model is refused naming it" "$W/x.gguf" \
        "$W/other.tsv: blk.0.ffn_up.weight at q4_K: 110593 bytes in the table, the tensor takes 110592" \
        "$QUANTIZE" --sensitivity "$W/other.tsv" "$M" "$W/x.gguf" Q4_K_M
    # one type measured (the default), the others estimated from the importance matrix
    if [ "$(awk -F'\t' '!/^#/ { print $2 }' "$W/t.tsv" | sort -u)" = q4_K ]; then
        pass "target: the default table measures q4_K alone ($(grep -vc '^#' "$W/t.tsv") rows)"
    else fail "target: default types" "$(awk -F'\t' '!/^#/ { print $2 }' "$W/t.tsv" | sort -u | tr '\n' ' ')"; fi
    "$QUANTIZE" -q --imatrix "$W/c.imatrix" --sensitivity "$W/t.tsv" --write-costs "$W/costs.tsv" \
        --dry-run "$M" "$W/x.gguf" Q4_K_M >/dev/null 2>&1
    # every matrix at the six types (q2_K..q8_0), the measured rows as they were
    n6=$(awk -F'\t' '!/^#/ { n[$1]++ } END { for (t in n) if (n[t] == 6) k++; print k + 0 }' "$W/costs.tsv")
    same=$(awk -F'\t' 'FNR == 1 { f++ } /^#/ { next } f == 1 { m[$1 $2] = $4 }
                        f == 2 && ($1 $2) in m { if (m[$1 $2] != $4) bad++; n++ }
                        END { print n + 0, bad + 0 }' "$W/t.tsv" "$W/costs.tsv")
    mono=$(awk -F'\t' '!/^#/ { k[$1 " " $2] = $4; n[$1] = 1 }
                       END { for (t in n) if (!(k[t " q2_K"] > k[t " q3_K"] && k[t " q3_K"] > k[t " q4_K"] &&
                                                k[t " q4_K"] > k[t " q5_K"] && k[t " q5_K"] > k[t " q6_K"] &&
                                                k[t " q6_K"] > k[t " q8_0"])) print t }' "$W/costs.tsv")
    if [ "$n6" = 30 ] && [ "$same" = "30 0" ] && [ -z "$mono" ]; then
        pass "target: --write-costs: 30 matrices × 6 types, the 30 measured rows kept, costs falling with bits"
    else fail "target: --write-costs" "$n6 matrices with 6 types; measured kept/changed: $same; not falling: $mono"; fi
    # --like: the size of another preset's mix
    "$QUANTIZE" -q --imatrix "$W/c.imatrix" --sensitivity "$W/t.tsv" --like Q3_K_M "$M" "$W/l.gguf" Q4_K_M \
        >/dev/null 2>&1
    s1=$(stat -c %s "$W/s-Q3_K_M.gguf" 2>/dev/null || echo 0) s2=$(stat -c %s "$W/l.gguf" 2>/dev/null || echo 0)
    if [ "$s2" -gt 0 ] && cmp -s "$W/l.gguf" "$W/t-Q3_K_M.gguf"; then
        pass "target: --like Q3_K_M with Q4_K_M's rules gives Q3_K_M's target file ($s2 bytes, stock $s1)"
    elif [ "$s2" -gt 0 ] && awk -v a="$s1" -v b="$s2" 'BEGIN { exit !(b <= a * 1.01 && b >= a * 0.99) }'; then
        pass "target: --like Q3_K_M: $s2 bytes, stock Q3_K_M $s1 (within 1%)"
    else fail "target: --like" "$s2 vs $s1"; fi
    fixture_block_end
fi
usage_error "$QUANTIZE" "--target-bpw without --sensitivity" \
    "--target-bpw, --target-size, --like, --write-recipe and --write-costs go with --sensitivity TABLE" \
    --target-bpw 4 "$W/a.gguf" Q4_K_M
usage_error "$QUANTIZE" "--like without --sensitivity" "go with --sensitivity TABLE" \
    --like Q4_K_M "$W/a.gguf" Q4_K_M
usage_error "$QUANTIZE" "--target-bpw and --target-size" "--target-bpw, --target-size and --like are three sizes" \
    --sensitivity "$W/t.tsv" --target-bpw 4 --target-size 1M "$W/a.gguf" Q4_K_M
usage_error "$QUANTIZE" "--like and --target-bpw" "are three sizes: give one" \
    --sensitivity "$W/t.tsv" --target-bpw 4 --like Q4_K_M "$W/a.gguf" Q4_K_M
usage_error "$QUANTIZE" "--like an unknown preset" "--like: unknown quantization type 'Q9_K'" \
    --sensitivity "$W/t.tsv" --like Q9_K "$W/a.gguf" Q4_K_M

exit 0
