# tests/e2e/hostile.sh — every tool × every output option against things it
# must never write over, and interrupted runs that must leave nothing behind.
#
# Targets: a character device (made with mknod in a temp dir, never /dev
# itself; root only, else skipped visibly), a FIFO, a directory, each input
# of the same run, and a symlink and a hard link to an input. Each must be
# refused with exit 1 and a message saying why, before any work, with the
# target unchanged and no temporary file left. Then SIGINT and SIGTERM
# during a long quantize and a long convert: exit 130 / 143, no output and
# no .NAME.tmp.XXXXXX file.
source "$(dirname "$0")/lib.sh"

CONVERT=$BIN/gguf-convert
QUANTIZE=$BIN/gguf-quantize
RUN=$BIN/gguf-run
MKMODEL=$BIN/tests/tools/mkmodel
MKHF=$BIN/tests/tools/mkhf
W=$TMP/hostile
rm -rf "$W"
mkdir -p "$W/t"

if ! "$MKMODEL" "$W/model.gguf" --dim 64 --layers 2 --ffn 192 --heads 4 --kv-heads 2 --vocab 320 \
        >/dev/null 2>&1 ||
   ! "$MKHF" "$W/hf" --dim 64 --layers 2 --ffn 192 --heads 4 --kv-heads 2 --vocab 400 \
        >/dev/null 2>&1; then
    skip "hostile outputs" "mkmodel or mkhf failed"
    exit 0
fi
for i in $(seq 1 40); do echo "The quick brown fox $i jumps over the lazy dog."; done >"$W/text.txt"

# state PATH: what a target is and holds, to prove it unchanged
state() {
    if [ -L "$1" ]; then printf 'link %s ' "$(readlink "$1")"; fi
    if [ -c "$1" ]; then stat -c 'chr %t:%T' "$1"
    elif [ -p "$1" ]; then echo fifo
    elif [ -d "$1" ]; then echo "dir $(ls -A "$1" | wc -l)"
    elif [ -f "$1" ]; then sha256sum <"$1"
    else echo missing; fi
}

# no_temps: no .NAME.tmp.XXXXXX left anywhere under $W
no_temps() { [ -z "$(find "$W" -name '.*.tmp.*' 2>/dev/null | head -1)" ]; }

# refuse NAME TARGET CMD... (CMD has the literal word OUT where the output goes)
refuse() {
    local name=$1 target=$2; shift 2
    local args=() a
    for a in "$@"; do [ "$a" = OUT ] && args+=("$target") || args+=("$a"); done
    local before after inputs_before inputs_after rc
    before=$(state "$target")
    inputs_before=$(for f in "$W/model.gguf" "$W/text.txt" "$W"/hf/*; do state "$f"; done)
    timeout 60 "${args[@]}" >"$W/out" 2>"$W/err"; rc=$?
    after=$(state "$target")
    inputs_after=$(for f in "$W/model.gguf" "$W/text.txt" "$W"/hf/*; do state "$f"; done)
    if [ "$rc" -ne 1 ]; then fail "$name" "exit $rc, expected 1: $(tail -1 "$W/err")"
    elif ! grep -q "refusing" "$W/err"; then fail "$name" "no refusal: $(tail -1 "$W/err")"
    elif [ "$before" != "$after" ]; then fail "$name" "target changed: $before -> $after"
    elif [ "$inputs_before" != "$inputs_after" ]; then fail "$name" "an input changed"
    elif ! no_temps; then fail "$name" "temporary file left: $(find "$W" -name '.*.tmp.*' | head -1)"
    else pass "$name"; fi
}

DEV=$W/t/dev
if [ "$(id -u)" -eq 0 ] && mknod "$DEV" c 1 3 2>/dev/null; then HAVE_DEV=1; else HAVE_DEV=0; fi
mkfifo "$W/t/fifo"
mkdir -p "$W/t/dir/sub"
ln -s "$W/model.gguf" "$W/t/model-link.gguf"
ln "$W/model.gguf" "$W/t/model-hard.gguf"
ln -s "$W/text.txt" "$W/t/text-link.txt"

# tool-option NAME and command; OUT marks the output
declare -A CMD=(
    ["gguf-convert -o"]="$CONVERT -q $W/hf -o OUT"
    ["gguf-quantize OUT"]="$QUANTIZE $W/model.gguf OUT Q8_0"
    ["gguf-run --imatrix"]="$RUN -m $W/model.gguf --imatrix OUT -f $W/text.txt -c 64 --chunks 1"
    ["gguf-run --kl-divergence-base"]="$RUN -m $W/model.gguf --perplexity $W/text.txt -c 64 --chunks 1 --kl-divergence-base OUT"
    ["gguf-run --dump-logits"]="$RUN -m $W/model.gguf -p hello -n 1 --dump-logits OUT 1"
)
# each option's own inputs (beyond the common targets)
declare -A INPUTS=(
    ["gguf-convert -o"]="$W/hf/config.json $W/hf/model.safetensors $W/hf/tokenizer.model"
    ["gguf-quantize OUT"]="$W/model.gguf $W/t/model-link.gguf $W/t/model-hard.gguf"
    ["gguf-run --imatrix"]="$W/model.gguf $W/t/model-link.gguf $W/t/model-hard.gguf $W/text.txt $W/t/text-link.txt"
    ["gguf-run --kl-divergence-base"]="$W/model.gguf $W/t/model-link.gguf $W/t/model-hard.gguf $W/text.txt $W/t/text-link.txt"
    ["gguf-run --dump-logits"]="$W/model.gguf $W/t/model-link.gguf $W/t/model-hard.gguf"
)

for opt in "gguf-convert -o" "gguf-quantize OUT" "gguf-run --imatrix" "gguf-run --kl-divergence-base" \
           "gguf-run --dump-logits"; do
    read -r -a cmd <<<"${CMD[$opt]}"
    if [ "$HAVE_DEV" = 1 ]; then refuse "$opt: a character device" "$DEV" "${cmd[@]}"
    else skip "$opt: a character device" "mknod needs root"; fi
    refuse "$opt: a FIFO" "$W/t/fifo" "${cmd[@]}"
    refuse "$opt: a directory" "$W/t/dir" "${cmd[@]}"
    for inp in ${INPUTS[$opt]}; do
        refuse "$opt: its input ${inp#$W/}" "$inp" "${cmd[@]}"
    done
done

# --- interrupted runs leave nothing behind ----------------------------------
# A model big enough that quantizing (one thread) and converting take
# seconds; the signal goes as soon as the temporary output exists.
if ! "$MKMODEL" "$W/big.gguf" --dim 1024 --layers 8 --ffn 2816 --heads 16 --kv-heads 4 \
        --vocab 32000 >/dev/null 2>&1 ||
   ! "$MKHF" "$W/bighf" --dim 1024 --layers 8 --ffn 2816 --heads 16 --kv-heads 4 --vocab 32000 \
        --dtype bf16 >/dev/null 2>&1; then
    skip "interrupted runs" "could not make the big models"
    exit 0
fi
# interrupt NAME SIGNAL STATUS OUT CMD...
interrupt() {
    local name=$1 sig=$2 want=$3 out=$4; shift 4
    rm -f "$out"
    # job control on: a background job of a non-interactive shell would
    # otherwise start with SIGINT ignored (and a tool leaves ignored signals
    # ignored, as nohup expects)
    set -m
    "$@" >/dev/null 2>&1 &
    local pid=$! i
    set +m
    for i in $(seq 1 1000); do
        [ -n "$(find "$(dirname "$out")" -maxdepth 1 -name ".$(basename "$out").tmp.*" | head -1)" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.01
    done
    kill -"$sig" "$pid" 2>/dev/null
    wait "$pid"; local rc=$?
    local left
    left=$(find "$(dirname "$out")" -maxdepth 1 -name ".$(basename "$out").tmp.*" | head -1)
    if [ "$rc" -ne "$want" ]; then fail "$name" "exit $rc, expected $want (finished before the signal?)"
    elif [ -e "$out" ]; then fail "$name" "output $out exists"
    elif [ -n "$left" ]; then fail "$name" "temporary file left: $left"
    else pass "$name"; fi
}
interrupt "SIGINT during gguf-quantize: exit 130, nothing left" INT 130 "$W/q.gguf" \
    "$QUANTIZE" "$W/big.gguf" "$W/q.gguf" Q4_K_M 1
interrupt "SIGTERM during gguf-quantize: exit 143, nothing left" TERM 143 "$W/q.gguf" \
    "$QUANTIZE" "$W/big.gguf" "$W/q.gguf" Q4_K_M 1
interrupt "SIGINT during gguf-convert: exit 130, nothing left" INT 130 "$W/c.gguf" \
    "$CONVERT" -q "$W/bighf" --outtype q8_0 -o "$W/c.gguf"
interrupt "SIGTERM during gguf-convert: exit 143, nothing left" TERM 143 "$W/c.gguf" \
    "$CONVERT" -q "$W/bighf" --outtype q8_0 -o "$W/c.gguf"
rm -rf "$W"
