#!/usr/bin/env bash
# tests/e2e/memory.sh — gguf-inspect --memory: the KV cache and recurrent
# state it reports for the fixture models equal what llama.cpp e21cdc11
# allocates (tests/data/memory/llama-e21.tsv, its load log's lines at three
# contexts and three cache-type pairs; README.md there has the commands);
# its compute-buffer estimate stays within a factor 2 of llama.cpp's;
# weights per type add up to the file's tensor data, experts apart; the
# options' ranges and errors.
source "$(dirname "$0")/lib.sh"

REC=$ROOT/tests/data/memory/llama-e21.tsv
HAVE_JQ=$(command -v jq >/dev/null && echo 1 || echo 0)
export LC_ALL=C

# --- options (no fixture) -----------------------------------------------------
usage_error "$INSPECT" "-c 0" "-c: '0' is not a context of 1 to 16777216 tokens" --memory -c 0 x.gguf
usage_error "$INSPECT" "--ctx-size past 2^24" "--ctx-size: '16777217' is not a context of 1 to 16777216 tokens" \
    --memory --ctx-size 16777217 x.gguf
usage_error "$INSPECT" "-c not a number" "-c: '4k' is not a context" x.gguf -c 4k --memory
usage_error "$INSPECT" "--ctk q4_K" "--ctk: 'q4_K' is not a KV cache type llama.cpp takes (f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)" \
    --memory --ctk q4_K x.gguf
usage_error "$INSPECT" "--cache-type-v bogus" "--cache-type-v: 'bogus' is not a KV cache type" \
    --memory --cache-type-v bogus x.gguf
usage_error "$INSPECT" "--ctv without --memory" "--ctv needs --memory" --ctv q8_0 x.gguf
usage_error "$INSPECT" "--ctx-size without --memory" "--ctx-size needs --memory" --ctx-size 10 x.gguf
usage_error "$INSPECT" "--hash-check with --memory" "--hash-check does not go with --memory" \
    --memory --hash-check m.txt x.gguf
usage_error "$INSPECT" "-c and --ctx-size" "-c and --ctx-size both give the context; give one" \
    --memory -c 5 --ctx-size 6 x.gguf
usage_error "$INSPECT" "--memory with --vocab" "--vocab and --memory cannot be combined" \
    --vocab --memory x.gguf
usage_error "$INSPECT" "diff --memory" "diff does not take --memory" diff --memory a b

# a model the registry does not have: named, exit 1, nothing on stdout
"$BIN/gguf-edit" "$BIN/sample.gguf" -o "$TMP/mem-unknown.gguf" --force \
    --set general.architecture=nosucharch >/dev/null 2>&1
out=$("$INSPECT" --memory "$TMP/mem-unknown.gguf" 2>"$TMP/mem.err"); rc=$?
if [ $rc -eq 1 ] && [ -z "$out" ] &&
   grep -qx "gguf-inspect: error: $TMP/mem-unknown.gguf: architecture \"nosucharch\" is not registered" "$TMP/mem.err"; then
    pass "--memory of an unregistered architecture: exit 1, the file and the name"
else
    fail "--memory of an unregistered architecture: exit 1, the file and the name" "exit $rc: $(cat "$TMP/mem.err")"
fi
# a K row that is not whole blocks of the type: 4 heads of 12, one KV head
"$BIN/tests/tools/mkmodel" "$TMP/mem-12.gguf" --dim 48 --layers 1 --ffn 64 --heads 4 --kv-heads 1 \
    --vocab 320 >/dev/null 2>&1
out=$("$INSPECT" --memory --ctk q8_0 "$TMP/mem-12.gguf" 2>"$TMP/mem.err"); rc=$?
want="gguf-inspect: error: $TMP/mem-12.gguf: block 0: a K cache row of 12 elements is not whole blocks of q8_0 (32 elements): choose another cache type"
if [ $rc -eq 1 ] && [ -z "$out" ] && [ "$(cat "$TMP/mem.err")" = "$want" ]; then
    pass "--memory --ctk q8_0 on 12-wide K rows: refused, the block and the row"
else
    fail "--memory --ctk q8_0 on 12-wide K rows: refused" "exit $rc: $(cat "$TMP/mem.err")"
fi
# the same file with f16 caches: 2048 cells (its context), 12 × 2 bytes a row
got=$("$INSPECT" --memory --json "$TMP/mem-12.gguf" 2>&1 | jq -c '.caches.kv | [.cells, .k_bytes, .v_bytes]' 2>&1)
[ "$got" = "[2048,49152,49152]" ] && pass "--memory of a 12-wide f16 cache: 2048 cells × 24 bytes" ||
    fail "--memory of a 12-wide f16 cache" "$got"

# standard output that cannot be written: an error, exit 1
err=$("$INSPECT" --memory "$BIN/sample.gguf" 2>&1 >/dev/full); rc=$?
[ $rc -eq 1 ] && [ "$err" = "gguf-inspect: error: standard output: No space left on device" ] &&
    pass "--memory to /dev/full: exit 1, the reason" || fail "--memory to /dev/full: exit 1" "exit $rc: $err"

# --- the recorded models --------------------------------------------------------
# model file -> how the test makes it (the names llama-e21.tsv uses)
make_model() {
    case $1 in
    stories260K-f32.gguf) ln -sf "$FIX/reference/$1" "$TMP/mem/$1" ;;
    wp-llama-5m-Q8_0.gguf) ln -sf "$FIX/reference/$1" "$TMP/mem/$1" ;;
    *-rand-f16.gguf) "$BIN/gguf-convert" "$FIX/models/${1%-f16.gguf}" --outtype f16 \
                         -o "$TMP/mem/$1" >/dev/null 2>&1 ;;
    esac
}

# ours FILE CTX CTK CTV: the cache lines as the record has them: cache,
# cells, layers (llama.cpp's recurrent line says block_count), size, K and V
# in MiB to two places.
ours() {
    "$INSPECT" --memory --json -c "$2" --ctk "$3" --ctv "$4" "$TMP/mem/$1" |
        jq -r '(.layers | length) as $n | .caches | to_entries[] |
               [.key, .value.cells, (if .key == "recurrent" then $n else .value.layers end),
                .value.bytes, .value.k_bytes, .value.v_bytes] | @tsv' |
        awk -F'\t' -v OFS='\t' '{ printf "%s\t%s\t%s\t%.2f\t%.2f\t%.2f\n", $1, $2, $3,
                                   $4 / 1048576, $5 / 1048576, $6 / 1048576 }'
}

models=$(awk -F'\t' 'NR > 1 { print $1 }' "$REC" | uniq)
n_runs=$(awk -F'\t' 'NR > 1 { print $1, $2, $3, $4 }' "$REC" | sort -u | wc -l)
n_models=$(wc -w <<<"$models")
if [ "$HAVE_JQ" != 1 ]; then
    skip_block "--memory against llama.cpp's allocations" "jq not installed" $((n_runs + n_models + 6))
elif need_fixture models/gemma4-rand "--memory against llama.cpp's allocations" $((n_runs + n_models + 6)); then
    mkdir -p "$TMP/mem"
    for m in $models; do
        make_model "$m"
        runs=$(awk -F'\t' -v m="$m" '$1 == m { print $2, $3, $4 }' "$REC" | uniq)
        while read -r c tk tv; do
            want=$(awk -F'\t' -v OFS='\t' -v m="$m" -v c="$c" -v tk="$tk" -v tv="$tv" \
                   '$1 == m && $2 == c && $3 == tk && $4 == tv && $5 != "compute" {
                        print $5, $6, $7, $8, $9, $10 }' "$REC")
            got=$(ours "$m" "$c" "$tk" "$tv")
            if [ -n "$want" ] && [ "$got" = "$want" ]; then
                pass "--memory $m -c $c --ctk $tk --ctv $tv: caches as llama.cpp allocates"
            else
                fail "--memory $m -c $c --ctk $tk --ctv $tv: caches as llama.cpp allocates" \
                     "want $(tr '\n\t' '| ' <<<"$want") got $(tr '\n\t' '| ' <<<"$got")"
            fi
        done <<<"$runs"
        # the compute estimate: within a factor 2 of llama.cpp's at every run
        bad=$(awk -F'\t' -v m="$m" '$1 == m && $5 == "compute" { print $2, $3, $4, $8 }' "$REC" |
              while read -r c tk tv mib; do
                  est=$("$INSPECT" --memory --json -c "$c" --ctk "$tk" --ctv "$tv" "$TMP/mem/$m" |
                        jq '.memory.compute_estimate')
                  awk -v e="$est" -v w="$mib" -v c="$c" 'BEGIN { r = e / 1048576 / w
                      if (!(r >= 0.5 && r <= 2)) printf "-c %s: %.2f MiB vs %s ", c, e / 1048576, w }'
              done)
        if [ -z "$bad" ]; then
            pass "--memory $m: compute estimate within a factor 2 of llama.cpp's"
        else
            fail "--memory $m: compute estimate within a factor 2 of llama.cpp's" "$bad"
        fi
    done

    # weights: per type, they add up to the file's tensor data; experts only
    # in the MoE families
    ok=1 why=''
    for m in $models; do
        t=$("$INSPECT" --json --no-metadata --no-tensors "$TMP/mem/$m" | jq '.summary.tensor_bytes')
        w=$("$INSPECT" --memory --json "$TMP/mem/$m" |
            jq '[.memory.weights, ([.weights[].bytes] | add), ([.weights[] | .dense + .experts] | add),
                 .memory.weights_experts // 0] | map(tostring) | join(" ")' -r)
        read -r total types sums exp <<<"$w"
        [ "$total" = "$t" ] && [ "$types" = "$t" ] && [ "$sums" = "$t" ] || { ok=0; why+="$m: $w vs $t; "; }
        case $m in
        mixtral* | qwen3moe* | qwen35moe* | gptoss* | gemma4* | glm4moe* | deepseek2*) [ "$exp" -gt 0 ] || { ok=0; why+="$m: no experts; "; } ;;
        *) [ "$exp" = 0 ] || { ok=0; why+="$m: experts $exp; "; } ;;
        esac
    done
    [ $ok = 1 ] && pass "--memory weights: per type they add up to the tensor data, experts in the MoE files" ||
        fail "--memory weights add up, experts in the MoE files" "$why"

    # Gemma 4: the three KV-sharing blocks own nothing and read blocks 1, 1, 2
    got=$("$INSPECT" --memory --json -c 4096 "$TMP/mem/gemma4-rand-f16.gguf" |
          jq -c '[.layers[] | [.kind, .kv_from, .bytes]]')
    want='[["sliding",null,98304],["sliding",null,98304],["full",null,1048576],["shared",1,0],["shared",1,0],["shared",2,0]]'
    [ "$got" = "$want" ] && pass "--memory gemma4: shared-KV blocks own no cache, read blocks 1, 1, 2" ||
        fail "--memory gemma4: shared-KV blocks own no cache" "$got"

    # qwen35: three recurrent blocks (conv state 768 and delta-rule state
    # 4096 wide, f32) and one full-attention block
    got=$("$INSPECT" --memory --json -c 4096 "$TMP/mem/qwen35-rand-f16.gguf" |
          jq -c '[.layers[] | [.kind, .k_width, .v_width]], .caches.recurrent.type_k, .memory.recurrent_state')
    want=$'[["recurrent",768,4096],["recurrent",768,4096],["recurrent",768,4096],["full",32,32]]\n"f32"\n58368'
    [ "$got" = "$want" ] && pass "--memory qwen35: recurrent blocks' conv and delta-rule state, f32" ||
        fail "--memory qwen35: recurrent blocks' state" "$got"

    # the default context is the model's context_length (stories260K: 128,
    # 256 cells, a ubatch of 128)
    got=$("$INSPECT" --memory --json "$TMP/mem/stories260K-f32.gguf" |
          jq -c '[.memory.context, .memory.n_ctx, .memory.n_ubatch]')
    [ "$got" = "[128,256,128]" ] && pass "--memory: default context the model's, padded to 256 cells" ||
        fail "--memory: default context the model's" "$got"

    # text: the caches table names the sliding cache; the same numbers as JSON
    txt=$("$INSPECT" --memory -c 4096 "$TMP/mem/gemma3-rand-f16.gguf")
    if grep -Eq '^  kv-swa +5 +768 +f16 +491520 +f16 +491520 +983040 +0\.94$' <<<"$txt" &&
       grep -Eq '^  kv +1 +4096 +f16' <<<"$txt" && grep -q '^KV cache: *2031616 ' <<<"$txt"; then
        pass "--memory text: the caches table and the summary"
    else
        fail "--memory text: the caches table and the summary" "$(head -30 <<<"$txt" | tr '\n' '|')"
    fi

    # YAML and Markdown come from the same report
    if "$INSPECT" --memory --yaml "$TMP/mem/mixtral-rand-f16.gguf" | grep -q '^  "kv": {layers: 2, cells: 2048,' &&
       "$INSPECT" --memory --markdown "$TMP/mem/mixtral-rand-f16.gguf" | grep -q '^| `kv` | 2 | 2048 |'; then
        pass "--memory --yaml and --markdown"
    else
        fail "--memory --yaml and --markdown"
    fi
    fixture_block_end
fi
