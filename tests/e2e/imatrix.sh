#!/usr/bin/env bash
# tests/e2e/imatrix.sh — gguf-run --imatrix --in-file: importance matrices
# combined and continued as llama-imatrix e21cdc11 does.
#
# Without a model, `gguf-run --imatrix OUT --in-file A,B [-c N]
# [--output-format dat]` writes llama-imatrix's combination of the files
# byte for byte (tests/data/imatrix-combine/refs.tsv: GGUF and legacy
# inputs, experts, a union of names, chunk sizes, both output formats).
# With -m MODEL -f TEXT it continues collecting from the files: equal to
# llama-imatrix's file byte for byte on wp-llama-5m, within the bound
# run.sh holds collected sums to on qwen3moe-rand (its forward pass). Files
# that disagree, that are not importance matrices, or an output that is
# one of them are refused with exit 1 and nothing written.
source "$(dirname "$0")/lib.sh"
RUN=$BIN/gguf-run
CONVERT=$BIN/gguf-convert
DATA=$ROOT/tests/data/imatrix-combine
W=$TMP/imatrix
mkdir -p "$W"
U=$FIX/upstream/imatrix R=$FIX/reference

# --- the command line --------------------------------------------------------------

usage_error "$RUN" "--in-file without --imatrix" "--in-file goes with --imatrix OUT" \
    --in-file "$W/a.gguf"
usage_error "$RUN" "combining with a text" "without -m MODEL, --imatrix OUT --in-file FILE ... only combines" \
    --imatrix "$W/o.gguf" --in-file "$W/a.gguf" -f "$W/t.txt"
usage_error "$RUN" "--in-file with an empty name" "--in-file: an empty file name in 'a,,b'" \
    --imatrix "$W/o.gguf" --in-file a,,b
usage_error "$RUN" "--imatrix without a model or files" "--imatrix needs the text: -f TEXT" \
    --imatrix "$W/o.gguf"

# --- combining, against llama-imatrix ---------------------------------------------

N_REFS=$(wc -l <"$DATA/refs.tsv")
if need_fixture upstream/imatrix/qwen3moe-rand.imatrix.gguf "imatrix combinations" &&
   need_fixture reference/wp-llama-5m.imatrix "imatrix combinations" "$N_REFS"; then
    while IFS=$'\t' read -r name sha args; do
        eval "set -- $args"
        if [ "$1" = -m ]; then # continuing over a text: in corpora/, as recorded
            (cd "$FIX/corpora" && "$RUN" "$@" --imatrix "$W/$name" -t 2) >"$W/out" 2>"$W/err"
        else
            "$RUN" "$@" --imatrix "$W/$name" >"$W/out" 2>"$W/err"
        fi
        rc=$?
        got=$(sha256sum <"$W/$name" 2>/dev/null | cut -c1-64)
        if [ $rc -eq 0 ] && [ "$got" = "$sha" ]; then
            pass "imatrix $name: llama-imatrix e21cdc11's file byte for byte ($args)"
        else
            fail "imatrix $name ($args)" "exit $rc, sha256 $got: $(tail -1 "$W/err")"
        fi
    done <"$DATA/refs.tsv"
    fixture_block_end
fi

# --- continuing on an MoE model: the forward pass's sums, within run.sh's bound ------------

if need_fixture models/qwen3moe-rand "imatrix continued on qwen3moe-rand" 3; then
    if "$CONVERT" -q "$FIX/models/qwen3moe-rand" --outtype f16 -o "$W/moe-f16.gguf" 2>"$W/err" &&
       (cd "$FIX/corpora" && "$RUN" -m "$W/moe-f16.gguf" -f botchan.txt -c 128 --chunks 2 -t 2 \
            --in-file "$U/qwen3moe-rand.imatrix.gguf" --imatrix "$W/cont-moe.gguf") >"$W/out" 2>"$W/err"; then
        pass "imatrix continued on qwen3moe-rand: $(cat "$W/out")"
        imatrix_check "continued on qwen3moe-rand" "$W/cont-moe.gguf" "$DATA/cont-moe.imatrix.txt"
        # the datasets: the file's, then the text's; chunks counted from both
        meta=$("$INSPECT" --json --no-tensors "$W/cont-moe.gguf" |
               jq -c '[.metadata["imatrix.datasets"].value, .metadata["imatrix.chunk_count"].value]')
        want=$(sed -n 's/^# meta //p' "$DATA/cont-moe.imatrix.txt" | jq -c .)
        if [ "$meta" = "$want" ]; then pass "imatrix continued: datasets and chunk count $meta as llama-imatrix's"
        else fail "imatrix continued: datasets and chunk count" "$meta, want $want"; fi
    else
        fail "imatrix continued on qwen3moe-rand" "$(tail -1 "$W/err")"
        skip_block "imatrix continued" "no file" 2
    fi
    fixture_block_end
fi

# --- refusals -------------------------------------------------------------------------

if need_fixture upstream/imatrix/qwen3-rand.imatrix.gguf "imatrix refusals" &&
   need_fixture reference/wp-llama-5m.imatrix "imatrix refusals" 8; then
    # llama-imatrix e21cdc11 refuses the GGUF pair; the .dat after a GGUF of
    # other sizes it adds past the end of its array (a crash: SIGSEGV)
    fails_cleanly "imatrix: files of one name and two sizes are refused naming the second" "$W/o.gguf" \
        "$U/qwen3-rand.imatrix.gguf: entry blk.0.attn_output.weight: 128 values where an earlier file has 256" \
        "$RUN" --imatrix "$W/o.gguf" --in-file "$U/wp-llama-5m.imatrix.gguf,$U/qwen3-rand.imatrix.gguf"
    fails_cleanly "imatrix: a .dat of other sizes is refused (llama-imatrix: SIGSEGV)" "$W/o.gguf" \
        "$R/wp-llama-5m.imatrix: entry blk\.[0-9]*\.[a-z_]*\.weight: [0-9]* values where an earlier file has" \
        "$RUN" --imatrix "$W/o.gguf" --in-file "$U/qwen3moe-rand.imatrix.gguf,$R/wp-llama-5m.imatrix"
    fails_cleanly "imatrix: a missing file is refused naming it" "$W/o.gguf" "$W/none.gguf: " \
        "$RUN" --imatrix "$W/o.gguf" --in-file "$U/qwen3-rand.imatrix.gguf,$W/none.gguf"
    "$CONVERT" -q "$FIX/models/qwen3-rand" --outtype f16 -o "$W/q3.gguf" 2>/dev/null
    fails_cleanly "imatrix: a model given as an importance matrix is refused" "$W/o.gguf" \
        "$W/q3.gguf: no imatrix data" "$RUN" --imatrix "$W/o.gguf" --in-file "$W/q3.gguf"
    fails_cleanly "imatrix: a truncated .dat is refused" "$W/o.gguf" "$W/cut.dat: " \
        bash -c "head -c 1000 '$R/wp-llama-5m.imatrix' >'$W/cut.dat' && exec '$RUN' --imatrix '$W/o.gguf' --in-file '$W/cut.dat'"
    # continuing: the file must fit the model
    fails_cleanly "imatrix: continuing from another model's file is refused naming it" "$W/o.gguf" \
        "$R/wp-llama-5m.imatrix: entry blk\.[0-9]*\.[a-z_]*\.weight: [0-9]* values where the model's matrix has" \
        "$RUN" -m "$W/q3.gguf" -f "$FIX/corpora/botchan.txt" -c 64 --chunks 1 --imatrix "$W/o.gguf" \
            --in-file "$R/wp-llama-5m.imatrix"
    # the output may not be an input; the inputs are left as they were
    cp "$U/qwen3-rand.imatrix.gguf" "$W/in.gguf"
    before=$(sha256sum <"$W/in.gguf")
    "$RUN" --imatrix "$W/in.gguf" --in-file "$W/in.gguf" >"$W/out" 2>&1; rc=$?
    if [ $rc -eq 1 ] && grep -q "$W/in.gguf: " "$W/out" && [ "$(sha256sum <"$W/in.gguf")" = "$before" ]; then
        pass "imatrix: OUT as one of the --in-file files is refused, the file unchanged"
    else fail "imatrix: OUT as an input" "exit $rc: $(tail -1 "$W/out")"; fi
    # a count no file of rows has (patched into a copy): refused, not rounded
    off=$("$INSPECT" --json "$W/in.gguf" | jq -r '(.summary.data_offset) + (.tensors[] | select(.name == "blk.0.attn_k.weight.counts") | .offset)')
    printf '\xca\xf2\x49\x71' | dd of="$W/in.gguf" bs=1 seek="$off" conv=notrunc status=none
    fails_cleanly "imatrix: a count of 1e30 is refused" "$W/o.gguf" \
        "$W/in.gguf: entry blk.0.attn_k.weight: count 1e+30 is too large" \
        "$RUN" --imatrix "$W/o.gguf" --in-file "$W/in.gguf"
    fixture_block_end
fi

exit 0
