#!/usr/bin/env bash
# tests/e2e/target_llama.sh — a target-size file that llama.cpp e21cdc11
# loads and runs: wp-llama-5m at Q4_K_M's size, made by gguf-quantize from the
# mix --sensitivity chose (kept as a recipe in tests/data/target-llama) and an
# importance matrix gguf-run collects here. The file is the one the recorded
# llama-perplexity run loaded (same sha256), and gguf-run --perplexity on the
# same text and context agrees with llama-perplexity's running estimates
# chunk by chunk (measured: within 0.06%; held to 0.2%).
source "$(dirname "$0")/lib.sh"
RUN=$BIN/gguf-run
QUANTIZE=$BIN/gguf-quantize
D=$ROOT/tests/data/target-llama
W=$TMP/target_llama
mkdir -p "$W"

texts=1
for f in corpora/botchan.txt corpora/war-and-peace-heldout.txt; do [ -e "$FIX/$f" ] || texts=0; done
if [ "$texts" = 0 ]; then
    skip_block "target-size file for llama.cpp" "fixture texts botchan.txt, war-and-peace-heldout.txt not found" 5
elif need_fixture reference/wp-llama-5m-f16.gguf "target-size file for llama.cpp" 5; then
    # names as the recorded run had them: the output's metadata holds the
    # importance matrix's file name and its text's
    ln -sf "$FIX/reference/wp-llama-5m-f16.gguf" "$W/wp-llama-5m-f16.gguf"
    ln -sf "$FIX/corpora/botchan.txt" "$W/botchan.txt"
    H=$FIX/corpora/war-and-peace-heldout.txt
    (cd "$W" && "$RUN" -m wp-llama-5m-f16.gguf --imatrix botchan.imatrix -f botchan.txt -c 128 --chunks 16 -t 2 &&
                "$RUN" -m wp-llama-5m-f16.gguf --imatrix again.imatrix -f botchan.txt -c 128 --chunks 16 -t 1) \
        >"$W/im.log" 2>&1
    if [ -s "$W/botchan.imatrix" ] &&
       cmp -s "$W/botchan.imatrix" "$W/again.imatrix"; then
        pass "target-llama: the importance matrix is the same on 1 and 2 threads"
    else fail "target-llama: the importance matrix" "$(tail -1 "$W/im.log")"; fi
    (cd "$W" && "$QUANTIZE" -q --imatrix botchan.imatrix --recipe "$D/wp-llama-5m-target-Q4_K_M.recipe" \
         wp-llama-5m-f16.gguf wp-llama-5m-target-Q4_K_M.gguf Q4_K_M &&
     "$QUANTIZE" -q --imatrix botchan.imatrix wp-llama-5m-f16.gguf stock.gguf Q4_K_M) >"$W/q.log" 2>&1
    want=$(cut -d' ' -f1 "$D/wp-llama-5m-target-Q4_K_M.sha256")
    got=$(sha256sum "$W/wp-llama-5m-target-Q4_K_M.gguf" 2>/dev/null | cut -d' ' -f1)
    if [ -n "$got" ] && [ "$got" = "$want" ]; then
        pass "target-llama: the recipe remakes the file llama-perplexity loaded (sha256 $got)"
    else fail "target-llama: sha256" "${got:-no file: $(tail -1 "$W/q.log")} vs recorded $want"; fi
    s1=$(stat -c %s "$W/stock.gguf" 2>/dev/null || echo 0) s2=$(stat -c %s "$W/wp-llama-5m-target-Q4_K_M.gguf" 2>/dev/null || echo 0)
    if [ "$s2" -gt 0 ] && awk -v a="$s1" -v b="$s2" 'BEGIN { exit !(b <= a && b >= a * 0.99) }'; then
        pass "target-llama: $s2 bytes, stock Q4_K_M $s1 (at most, within 1%)"
    else fail "target-llama: size" "$s2 vs stock $s1"; fi
    # llama-perplexity's running estimate after k chunks = gguf-run --perplexity --chunks k
    rec=$(grep '^\[1\]' "$D/llama-perplexity.txt")
    worst=0 bad=
    for k in 1 2 3 4 5 6 7 8; do
        r=$(printf '%s\n' "$rec" | tr ',' '\n' | sed -n "s/^\[$k\]//p")
        g=$("$RUN" -m "$W/wp-llama-5m-target-Q4_K_M.gguf" --perplexity "$H" -c 128 --chunks "$k" -t 2 2>/dev/null |
            sed -n 's/^perplexity: \([0-9.]*\) (.*/\1/p')
        d=$(awk -v r="$r" -v g="$g" 'BEGIN { if (r <= 0 || g <= 0) print "x"; else { d = (g - r) / r; printf "%.6f", d < 0 ? -d : d } }')
        if [ "$d" = x ] || awk -v d="$d" 'BEGIN { exit !(d > 0.002) }'; then bad="$bad [$k] $g vs $r"; fi
        [ "$d" = x ] || worst=$(awk -v a="$worst" -v b="$d" 'BEGIN { print (b > a ? b : a) }')
        [ "$k" = 8 ] && final=$g
    done
    if [ -z "$bad" ]; then
        pass "target-llama: gguf-run --perplexity within 0.2% of llama-perplexity's 8 running estimates (largest $(awk -v w="$worst" 'BEGIN { printf "%.3f%%", 100 * w }'))"
    else fail "target-llama: per-chunk perplexity" "$bad"; fi
    want=$(sed -n 's/^Final estimate: PPL = \([0-9.]*\) .*/\1/p' "$D/llama-perplexity.txt")
    if awk -v r="$want" -v g="${final:-0}" 'BEGIN { d = (g - r) / r; exit !(r > 0 && d < 0.002 && d > -0.002) }'; then
        pass "target-llama: final estimate $final, llama-perplexity's $want"
    else fail "target-llama: final estimate" "${final:-none} vs $want"; fi
    fixture_block_end
fi
exit 0
