#!/usr/bin/env bash
# bench/inspect_header.sh — gguf-inspect reads only the header.
#
#   bench/inspect_header.sh [--scan]        (BUILD=build by default)
#
# Writes a LLaMA-7B-shaped GGUF (291 tensors, f16 matrices, f32 norms, a
# 32000-token vocabulary: 13.5 GB) as a sparse file — the header is real, the
# tensor data is a hole, so it costs a few hundred KB of disk — and times
# `gguf-inspect --no-tensors` and the full default report on it with
# hyperfine (or /usr/bin/time when hyperfine is missing). Page faults and peak
# memory show that no tensor data is touched. With --scan it also times
# `--check`, which does read every float tensor: that maps 13.5 GB of zero
# pages into the page cache, so it is off by default.
#
# A benchmark, not a test: it asserts nothing and is never run by `make test`.
. "$(dirname "$0")/lib.sh"
INSPECT=$BIN/gguf-inspect
SCAN=0
[ "${1:-}" = --scan ] && SCAN=1
[ -x "$INSPECT" ] || { echo "build first: make (no $INSPECT)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/inspect-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FILE=$WORK/llama-7b-shaped.gguf

# --- a GGUF header from the shell (little-endian, version 3) ---------------
le() { local i b out=''; for ((i = 0; i < $1; i++)); do printf -v b '\\x%02x' $((($2 >> (8 * i)) & 255)); out+=$b; done; printf "$out"; }
u32() { le 4 "$1"; }
u64() { le 8 "$1"; }
gstr() { u64 ${#1}; printf '%s' "$1"; }
kv_str() { gstr "$1"; u32 8; gstr "$2"; }
kv_u32() { gstr "$1"; u32 4; u32 "$2"; }

OFFSET=0 N_TENSORS=0
tensor() { # tensor NAME TYPE BYTES_PER_ELEMENT NE0 [NE1]: info record, next offset
    local n=$(($4 * ${5:-1}))
    gstr "$1"; u32 $(($# - 3)); u64 "$4"; [ $# -eq 5 ] && u64 "$5"; u32 "$2"; u64 "$OFFSET"
    OFFSET=$(((OFFSET + n * $3 + 31) / 32 * 32))
    N_TENSORS=$((N_TENSORS + 1))
}

infos() {
    local d=4096 ff=11008 v=32000
    tensor token_embd.weight 1 2 $d $v
    for ((l = 0; l < 32; l++)); do
        tensor blk.$l.attn_norm.weight 0 4 $d
        for w in attn_q attn_k attn_v attn_output; do tensor blk.$l.$w.weight 1 2 $d $d; done
        tensor blk.$l.ffn_norm.weight 0 4 $d
        tensor blk.$l.ffn_gate.weight 1 2 $d $ff
        tensor blk.$l.ffn_up.weight 1 2 $d $ff
        tensor blk.$l.ffn_down.weight 1 2 $ff $d
    done
    tensor output_norm.weight 0 4 $d
    tensor output.weight 1 2 $d $v
}

metadata() {
    kv_str general.architecture llama
    kv_str general.name "llama-7b-shaped (sparse benchmark file)"
    kv_u32 llama.embedding_length 4096
    kv_u32 llama.block_count 32
    kv_u32 llama.feed_forward_length 11008
    kv_u32 llama.attention.head_count 32
    kv_u32 general.file_type 1
    gstr tokenizer.ggml.tokens; u32 9; u32 8; u64 32000
    for ((i = 0; i < 32000; i++)); do gstr "tok$i"; done
    gstr tokenizer.ggml.scores; u32 9; u32 6; u64 32000; head -c $((4 * 32000)) /dev/zero
}

echo "writing $FILE ..."
infos >"$WORK/infos.bin"
{ printf 'GGUF'; u32 3; u64 "$N_TENSORS"; u64 9; metadata; cat "$WORK/infos.bin"; } >"$FILE"
header=$(stat -c %s "$FILE")
truncate -s $(((header + 31) / 32 * 32 + OFFSET)) "$FILE"
printf 'file: %s bytes apparent, %s KB on disk, header %s bytes, %s tensors\n\n' \
    "$(stat -c %s "$FILE")" "$(du -k "$FILE" | cut -f1)" "$header" "$N_TENSORS"
"$INSPECT" --no-metadata --no-tensors "$FILE"
echo

cmds=("$INSPECT --no-tensors $FILE" "$INSPECT $FILE")
[ $SCAN = 1 ] && cmds+=("$INSPECT --check $FILE")
if command -v hyperfine >/dev/null; then
    hyperfine -N --warmup 5 --ignore-failure "${cmds[@]}"
fi
echo
for c in "${cmds[@]}"; do
    /usr/bin/time -f "%e s, %R minor faults, %M KB max RSS: $c" $c >/dev/null 2>"$WORK/time.txt" || true
    tail -1 "$WORK/time.txt"
done
