#!/usr/bin/env bash
# tests/tools/mktokvectors.sh — the expected ids of tests/data/tok/vectors.inp
# for one vocabulary GGUF, from llama.cpp's llama-tokenize (e21cdc11 for the
# files in tests/data/tok; see tests/data/tok/README.md):
#
#   mktokvectors.sh LLAMA_TOKENIZE VOCAB.gguf INP OUT_PLAIN OUT_SPECIAL
#
# OUT_PLAIN: one line of ids per entry, without BOS/EOS and without parsing
# special tokens (llama-tokenize --no-bos --no-parse-special); OUT_SPECIAL:
# with the vocabulary's BOS/EOS and special tokens parsed (the defaults).
# Entries of INP are separated by "\n__ggml_vocab_test__\n" (llama.cpp's
# vocab test format); the input is passed unescaped (--no-escape).
set -euo pipefail
[ $# = 5 ] || { echo "usage: mktokvectors.sh LLAMA_TOKENIZE VOCAB.gguf INP OUT_PLAIN OUT_SPECIAL" >&2; exit 2; }
tok=$1 gguf=$2 inp=$3 out_plain=$4 out_special=$5
sep=$'\n__ggml_vocab_test__\n'
data=$(cat "$inp"; printf x)
data=${data%x}
: > "$out_plain.tmp"
: > "$out_special.tmp"
while [ -n "$data" ]; do
    entry=${data%%"$sep"*}
    [ "$entry" != "$data" ] || { echo "mktokvectors: $inp does not end with the separator" >&2; exit 1; }
    data=${data#*"$sep"}
    for mode in plain special; do
        if [ $mode = plain ]; then flags=(--no-bos --no-parse-special); out=$out_plain.tmp
        else flags=(); out=$out_special.tmp; fi
        ids=$(printf '%s' "$entry" | "$tok" -m "$gguf" --stdin --ids --no-escape --log-disable "${flags[@]}" 2>/dev/null | tail -1)
        case $ids in \[*\]) ;; *) echo "mktokvectors: llama-tokenize gave '$ids'" >&2; exit 1 ;; esac
        ids=${ids#[}; ids=${ids%]}
        printf '%s\n' "${ids//,/}" >> "$out"
    done
done
mv "$out_plain.tmp" "$out_plain"
mv "$out_special.tmp" "$out_special"
