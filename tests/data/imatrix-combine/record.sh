#!/usr/bin/env bash
# record.sh — the references of tests/e2e/imatrix.sh: llama-imatrix e21cdc11
# combining importance matrices (--in-file, no text) and continuing one over
# a text. Run from anywhere:
#   LLAMA=/path/to/llama.cpp/build/bin GGUFKIT_FIXTURES=../shared/fixtures \
#     CONVERT=build/gguf-convert bash tests/data/imatrix-combine/record.sh
# Writes refs.tsv (NAME, sha256 of llama-imatrix's output, the arguments,
# with $U for upstream/imatrix and $R for reference/ of the fixtures) and
# cont-moe.imatrix.txt (the one output compared within a bound: its sums
# come from a forward pass), a text dump of llama-imatrix's file: a "# meta"
# line with its imatrix.datasets and imatrix.chunk_count, then a line per
# tensor, its name and every f32 value as od prints it (INSPECT: gguf-inspect,
# default build/gguf-inspect).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
INSPECT=${INSPECT:-$here/../../../build/gguf-inspect}
# imatrix_text FILE: the text dump described above
imatrix_text() {
    local data
    echo "# llama-imatrix e21cdc11's continued importance matrix (record.sh): a line per tensor, its f32 values"
    "$INSPECT" --json --no-tensors "$1" |
        jq -r '"# meta " + ([.metadata["imatrix.datasets"].value, .metadata["imatrix.chunk_count"].value] | tojson)'
    data=$("$INSPECT" --json "$1" | jq -r .summary.data_offset)
    "$INSPECT" --json "$1" | jq -r '.tensors[] | "\(.name) \(.offset) \(.elements)"' |
        while read -r name off n; do
            od -An -v -tf4 -w4 -j $((data + off)) -N $((4 * n)) "$1" |
                awk -v t="$name" '{ v = v " " $1 } END { print t v }'
        done
}
if [ "${1:-}" = --text ]; then # the dump of an existing file
    imatrix_text "$2"
    exit 0
fi
FIX=$(cd "${GGUFKIT_FIXTURES:-../shared/fixtures}" && pwd)
IM=$LLAMA/llama-imatrix
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
U=$FIX/upstream/imatrix R=$FIX/reference
# NAME ARGS (a combination: llama-imatrix's -m is required, never read)
rows='gd.gguf|--in-file $U/wp-llama-5m.imatrix.gguf,$R/wp-llama-5m.imatrix
dg-c128.gguf|--in-file $R/wp-llama-5m.imatrix,$U/wp-llama-5m.imatrix.gguf -c 128
moe2.gguf|--in-file $U/qwen3moe-rand.imatrix.gguf,$U/qwen3moe-rand.imatrix.gguf
union.gguf|--in-file $U/qwen3moe-rand.imatrix.gguf,$U/qwen3-rand.imatrix.gguf
d-c256.gguf|--in-file $R/wp-llama-5m.imatrix -c 256
gd.dat|--in-file $U/wp-llama-5m.imatrix.gguf,$R/wp-llama-5m.imatrix --output-format dat
moe.dat|--in-file $U/qwen3moe-rand.imatrix.gguf --output-format dat
moe-c64.dat|--in-file $U/qwen3moe-rand.imatrix.gguf -c 64 --output-format dat'
: >"$here/refs.tsv"
while IFS='|' read -r name args; do
    eval "set -- $args"
    "$IM" -m /nonexistent.gguf "$@" -o "$tmp/$name" >"$tmp/log" 2>&1 || {
        echo "$name: llama-imatrix failed: $(tail -1 "$tmp/log")" >&2; exit 1; }
    printf '%s\t%s\t%s\n' "$name" "$(sha256sum <"$tmp/$name" | cut -c1-64)" "$args" >>"$here/refs.tsv"
done <<<"$rows"
# continuing over a text (run in corpora/: the dataset is the path as given),
# flash attention off as gguf-run computes attention
cd "$FIX/corpora"
"$IM" -m "$R/wp-llama-5m-f16.gguf" -f botchan.txt -c 128 --chunks 2 -t 2 -fa off \
    --in-file "$R/wp-llama-5m.imatrix" -o "$tmp/cont-wp.gguf" >"$tmp/log" 2>&1
printf '%s\t%s\t%s\n' cont-wp.gguf "$(sha256sum <"$tmp/cont-wp.gguf" | cut -c1-64)" \
    '-m $R/wp-llama-5m-f16.gguf -f botchan.txt -c 128 --chunks 2 --in-file $R/wp-llama-5m.imatrix' \
    >>"$here/refs.tsv"
"$CONVERT" -q "$FIX/models/qwen3moe-rand" --outtype f16 -o "$tmp/qwen3moe-f16.gguf"
"$IM" -m "$tmp/qwen3moe-f16.gguf" -f botchan.txt -c 128 --chunks 2 -t 2 -fa off \
    --in-file "$U/qwen3moe-rand.imatrix.gguf" -o "$tmp/cont-moe.gguf" >"$tmp/log" 2>&1
imatrix_text "$tmp/cont-moe.gguf" >"$here/cont-moe.imatrix.txt"
