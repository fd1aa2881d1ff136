# tests/e2e/hostile.sh — every tool × every output option against things it
# must never write over, and interrupted runs that must leave nothing behind.
#
# Targets: a character device (made with mknod in a temp dir, never /dev
# itself; root only, else skipped visibly), a FIFO, a directory, each input
# of the same run, and a symlink (one, or a chain of two) and a hard link to
# an input. Each must be refused with exit 1 and a message saying why,
# before any work, with the target unchanged and no temporary file left.
#
# Outputs that replace a file: through a symbolic link (relative, absolute,
# a chain of two, dangling) the link stays a link and the file it ends at is
# replaced; the replaced file's mode and owner are kept (never widened when
# they cannot be). A file-size limit (ulimit -f) makes every writing tool
# fail with "File too large" naming the output, exit 1, nothing left.
#
# Then SIGINT and SIGTERM during a long quantize and a long convert, each
# tool started with the signal at its default action (env
# --default-signal, whatever this shell's own dispositions): exit 130 /
# 143, no output and no .NAME.tmp.XXXXXX file; and started with it ignored
# (env --ignore-signal): the tool goes on and its output is whole. No
# check depends on timing: signals go when the temporary file exists.
source "$(dirname "$0")/lib.sh"

CONVERT=$BIN/gguf-convert
QUANTIZE=$BIN/gguf-quantize
RUN=$BIN/gguf-run
EDIT=$BIN/gguf-edit
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
ln -s model-link.gguf "$W/t/model-chain.gguf" # two links, the second relative
ln "$W/model.gguf" "$W/t/model-hard.gguf"
ln -s "$W/text.txt" "$W/t/text-link.txt"

# tool-option NAME and command; OUT marks the output
declare -A CMD=(
    ["gguf-convert -o"]="$CONVERT -q $W/hf -o OUT"
    ["gguf-quantize OUT"]="$QUANTIZE $W/model.gguf OUT Q8_0"
    ["gguf-run --imatrix"]="$RUN -m $W/model.gguf --imatrix OUT -f $W/text.txt -c 64 --chunks 1"
    ["gguf-run --kl-divergence-base"]="$RUN -m $W/model.gguf --perplexity $W/text.txt -c 64 --chunks 1 --kl-divergence-base OUT"
    ["gguf-run --dump-logits"]="$RUN -m $W/model.gguf -p hello -n 1 --dump-logits OUT 1"
    ["gguf-edit -o"]="$EDIT $W/model.gguf -o OUT --set hostile.mark=1"
)
# each option's own inputs (beyond the common targets)
declare -A INPUTS=(
    ["gguf-convert -o"]="$W/hf/config.json $W/hf/model.safetensors $W/hf/tokenizer.model"
    ["gguf-quantize OUT"]="$W/model.gguf $W/t/model-link.gguf $W/t/model-chain.gguf $W/t/model-hard.gguf"
    ["gguf-run --imatrix"]="$W/model.gguf $W/t/model-link.gguf $W/t/model-hard.gguf $W/text.txt $W/t/text-link.txt"
    ["gguf-run --kl-divergence-base"]="$W/model.gguf $W/t/model-link.gguf $W/t/model-hard.gguf $W/text.txt $W/t/text-link.txt"
    ["gguf-run --dump-logits"]="$W/model.gguf $W/t/model-link.gguf $W/t/model-hard.gguf"
    ["gguf-edit -o"]="$W/model.gguf $W/t/model-link.gguf $W/t/model-chain.gguf $W/t/model-hard.gguf"
)

for opt in "gguf-convert -o" "gguf-quantize OUT" "gguf-run --imatrix" "gguf-run --kl-divergence-base" \
           "gguf-run --dump-logits" "gguf-edit -o"; do
    read -r -a cmd <<<"${CMD[$opt]}"
    if [ "$HAVE_DEV" = 1 ]; then refuse "$opt: a character device" "$DEV" "${cmd[@]}"
    else skip "$opt: a character device" "mknod needs root"; fi
    refuse "$opt: a FIFO" "$W/t/fifo" "${cmd[@]}"
    refuse "$opt: a directory" "$W/t/dir" "${cmd[@]}"
    for inp in ${INPUTS[$opt]}; do
        refuse "$opt: its input ${inp#$W/}" "$inp" "${cmd[@]}"
    done
done

# --- outputs through symbolic links ------------------------------------------
# A Hugging Face snapshot is a folder of relative links into blobs/: an
# output through a link replaces the file the chain ends at, beside it, and
# the link stays as it was.
L=$W/links
mkdir -p "$L/blobs" "$L/snap/sub" "$L/abs"

# mark FILE: the value of hostile.mark in FILE (empty when absent)
mark() { "$INSPECT" "$1" 2>/dev/null | sed -n 's/^ *hostile\.mark  *str  *"\(.*\)"$/\1/p'; }

# linked NAME RC LINK WAS TARGET WANT: the command exited 0, LINK is still
# a link reading WAS, TARGET's state is WANT (sha256sum output, or "mark
# TEXT" for gguf-edit), no temporary file anywhere
linked() {
    local name=$1 rc=$2 link=$3 was=$4 target=$5 want=$6 got
    if [ "${want%% *}" = mark ]; then got="mark $(mark "$target")"; else got=$(state "$target"); fi
    if [ "$rc" -ne 0 ]; then fail "$name" "exit $rc: $(tail -1 "$W/err")"
    elif [ ! -L "$link" ] || [ "$(readlink "$link")" != "$was" ]; then
        fail "$name" "the link was replaced: $(state "$link")"
    elif [ "$got" != "$want" ]; then fail "$name" "$target holds $got, expected $want"
    elif ! no_temps; then fail "$name" "temporary file left: $(find "$W" -name '.*.tmp.*' | head -1)"
    else pass "$name"; fi
}

cp "$W/model.gguf" "$L/blobs/m"
ln -s ../blobs/m "$L/snap/rel.gguf"
ln -s "$L/blobs/m" "$L/abs/abs.gguf"
ln -s ../rel.gguf "$L/snap/sub/chain.gguf" # relative to snap/sub/, then to snap/
for kind in "relative:$L/snap/rel.gguf" "absolute:$L/abs/abs.gguf" "a chain of two:$L/snap/sub/chain.gguf"; do
    link=${kind#*:} was=$(readlink "${kind#*:}")
    "$EDIT" -q "$link" --set "hostile.mark:str=${kind%%:*}" >/dev/null 2>"$W/err"; rc=$?
    linked "gguf-edit in place through a link (${kind%%:*}): the target is edited" "$rc" "$link" "$was" \
        "$L/blobs/m" "mark ${kind%%:*}"
done

# the same outputs written directly, to compare with
"$QUANTIZE" "$W/model.gguf" "$W/direct-q.gguf" Q8_0 >/dev/null 2>&1
"$CONVERT" -q "$W/hf" -o "$W/direct-c.gguf" >/dev/null 2>&1
"$RUN" -m "$W/model.gguf" --imatrix "$W/direct-im.gguf" -f "$W/text.txt" -c 64 --chunks 1 >/dev/null 2>&1
for f in q c im; do echo old >"$L/blobs/$f"; ln -s "../blobs/$f" "$L/snap/$f.gguf"; done
"$QUANTIZE" "$W/model.gguf" "$L/snap/q.gguf" Q8_0 >/dev/null 2>"$W/err"; rc=$?
linked "gguf-quantize OUT through a link: the target is replaced" "$rc" "$L/snap/q.gguf" ../blobs/q \
    "$L/blobs/q" "$(state "$W/direct-q.gguf")"
"$CONVERT" -q "$W/hf" -o "$L/snap/c.gguf" >/dev/null 2>"$W/err"; rc=$?
linked "gguf-convert -o through a link: the target is replaced" "$rc" "$L/snap/c.gguf" ../blobs/c \
    "$L/blobs/c" "$(state "$W/direct-c.gguf")"
"$RUN" -m "$W/model.gguf" --imatrix "$L/snap/im.gguf" -f "$W/text.txt" -c 64 --chunks 1 >/dev/null 2>"$W/err"; rc=$?
linked "gguf-run --imatrix through a link: the target is replaced" "$rc" "$L/snap/im.gguf" ../blobs/im \
    "$L/blobs/im" "$(state "$W/direct-im.gguf")"
# a dangling link is written through: its target is created
ln -s ../blobs/new "$L/snap/new.gguf"
"$QUANTIZE" "$W/model.gguf" "$L/snap/new.gguf" Q8_0 >/dev/null 2>"$W/err"; rc=$?
linked "gguf-quantize OUT through a dangling link: its target is created" "$rc" "$L/snap/new.gguf" \
    ../blobs/new "$L/blobs/new" "$(state "$W/direct-q.gguf")"
# ... when its directory exists; else refused, naming both
ln -s ../nowhere/x "$L/snap/nowhere.gguf"
"$QUANTIZE" "$W/model.gguf" "$L/snap/nowhere.gguf" Q8_0 >/dev/null 2>"$W/err"; rc=$?
want="cannot create a temporary file next to $L/snap/../nowhere/x (where the link $L/snap/nowhere.gguf points): No such file or directory"
if [ "$rc" -ne 1 ]; then fail "gguf-quantize OUT through a link into a missing folder: refused" "exit $rc"
elif ! grep -qF "$want" "$W/err"; then
    fail "gguf-quantize OUT through a link into a missing folder: refused" "$(tail -1 "$W/err")"
elif [ ! -L "$L/snap/nowhere.gguf" ] || [ -e "$L/nowhere" ] || ! no_temps; then
    fail "gguf-quantize OUT through a link into a missing folder: refused" "something was written"
else pass "gguf-quantize OUT through a link into a missing folder: refused"; fi

# --- what an output keeps of the file it replaces ------------------------------
# perms FILE: mode and owner, numeric
perms() { stat -c '%a %u:%g' "$1"; }
cp "$W/model.gguf" "$W/keep.gguf"
for m in 600 444 640; do
    chmod "$m" "$W/keep.gguf"
    before=$(perms "$W/keep.gguf")
    "$EDIT" -q "$W/keep.gguf" --set "hostile.mark:str=$m" >/dev/null 2>"$W/err"; rc=$?
    if [ "$rc" -ne 0 ] || [ "$(mark "$W/keep.gguf")" != "$m" ]; then
        fail "gguf-edit in place keeps mode $m" "exit $rc: $(tail -1 "$W/err")"
    elif [ "$(perms "$W/keep.gguf")" != "$before" ]; then
        fail "gguf-edit in place keeps mode $m" "$before -> $(perms "$W/keep.gguf")"
    else pass "gguf-edit in place keeps mode $m"; fi
done
chmod 600 "$L/blobs/m"
"$EDIT" -q "$L/snap/rel.gguf" --set hostile.mark:str=mode >/dev/null 2>"$W/err"; rc=$?
if [ "$rc" -ne 0 ] || [ ! -L "$L/snap/rel.gguf" ] || [ "$(mark "$L/blobs/m")" != mode ] ||
   [ "$(perms "$L/blobs/m")" != "600 $(id -u):$(id -g)" ]; then
    fail "gguf-edit in place through a link keeps the target's mode" \
        "exit $rc, $(state "$L/snap/rel.gguf"), target $(perms "$L/blobs/m") mark '$(mark "$L/blobs/m")'"
else pass "gguf-edit in place through a link keeps the target's mode"; fi

if [ "$(id -u)" -eq 0 ]; then
    chown 1234:2345 "$W/keep.gguf" && chmod 600 "$W/keep.gguf"
    "$EDIT" -q "$W/keep.gguf" --set hostile.mark:str=owner >/dev/null 2>"$W/err"; rc=$?
    if [ "$rc" -ne 0 ] || [ "$(perms "$W/keep.gguf")" != "600 1234:2345" ]; then
        fail "gguf-edit in place keeps owner and group (as root)" "exit $rc, $(perms "$W/keep.gguf")"
    else pass "gguf-edit in place keeps owner and group (as root)"; fi
    echo old >"$W/keep.q" && chown 1234:2345 "$W/keep.q" && chmod 640 "$W/keep.q"
    "$QUANTIZE" "$W/model.gguf" "$W/keep.q" Q8_0 >/dev/null 2>"$W/err"; rc=$?
    if [ "$rc" -ne 0 ] || [ "$(perms "$W/keep.q")" != "640 1234:2345" ]; then
        fail "gguf-quantize OUT over a file keeps its owner, group and mode" "exit $rc, $(perms "$W/keep.q")"
    else pass "gguf-quantize OUT over a file keeps its owner, group and mode"; fi
    # a user that cannot give files away: the output is its own, and the
    # replaced file's group read (another group's) is not handed to its group
    U=$(mktemp -d "${TMPDIR:-/tmp}/ggufkit-hostile-user.XXXXXX")
    chmod 755 "$U" && cp "$W/model.gguf" "$U/model.gguf" && chmod 644 "$U/model.gguf" &&
        echo old >"$U/theirs.gguf" && chown 4321:4321 "$U/theirs.gguf" && chmod 640 "$U/theirs.gguf" &&
        chown 1234:1234 "$U"
    setpriv --reuid=1234 --regid=1234 --clear-groups "$QUANTIZE" "$U/model.gguf" "$U/theirs.gguf" Q8_0 \
        >/dev/null 2>"$W/err"; rc=$?
    if [ "$rc" -ne 0 ] || [ "$(perms "$U/theirs.gguf")" != "600 1234:1234" ]; then
        fail "gguf-quantize OUT over another user's 0640 file, as a user: 0600, never group-readable" \
            "exit $rc, $(perms "$U/theirs.gguf"): $(tail -1 "$W/err")"
    else pass "gguf-quantize OUT over another user's 0640 file, as a user: 0600, never group-readable"; fi
    rm -rf "$U"
else
    skip_block "owner and group kept" "chown needs root" 3
fi

# --- a file-size limit is an error --------------------------------------------
# fsize NAME OUT CMD...: under `ulimit -f 1` (1 KiB), CMD exits 1 saying
# "OUT...File too large", and neither OUT nor a temporary file is left
# (SIGXFSZ would have killed it silently with its temporary file)
fsize() {
    local name=$1 out=$2 rc; shift 2
    rm -f "$out"
    ( ulimit -f 1 && exec "$@" ) >/dev/null 2>"$W/err"; rc=$?
    if [ "$rc" -ne 1 ]; then fail "$name" "exit $rc, expected 1: $(tail -1 "$W/err")"
    elif ! grep -q "${out##*/}.*File too large" "$W/err"; then fail "$name" "message: $(tail -1 "$W/err")"
    elif [ -e "$out" ]; then fail "$name" "output $out exists"
    elif ! no_temps; then fail "$name" "temporary file left: $(find "$W" -name '.*.tmp.*' | head -1)"
    else pass "$name"; fi
}
fsize "ulimit -f: gguf-convert -o" "$W/f.gguf" "$CONVERT" -q "$W/hf" -o "$W/f.gguf"
fsize "ulimit -f: gguf-quantize OUT" "$W/f.gguf" "$QUANTIZE" "$W/model.gguf" "$W/f.gguf" Q8_0
fsize "ulimit -f: gguf-edit -o" "$W/f.gguf" "$EDIT" "$W/model.gguf" -o "$W/f.gguf" --set hostile.mark=1
fsize "ulimit -f: gguf-edit split" "$W/f-00001-of-00002.gguf" "$EDIT" split "$W/model.gguf" --max-tensors 12 "$W/f"
fsize "ulimit -f: gguf-run --imatrix" "$W/f.gguf" \
    "$RUN" -m "$W/model.gguf" --imatrix "$W/f.gguf" -f "$W/text.txt" -c 64 --chunks 1
fsize "ulimit -f: gguf-run --kl-divergence-base" "$W/f.gguf" \
    "$RUN" -m "$W/model.gguf" --perplexity "$W/text.txt" -c 64 --chunks 1 --kl-divergence-base "$W/f.gguf"
fsize "ulimit -f: gguf-run --dump-logits" "$W/f.gguf" \
    "$RUN" -m "$W/model.gguf" -p hello -n 1 --dump-logits "$W/f.gguf" 1
# in place: the input stays as it was
cp "$W/model.gguf" "$W/inplace.gguf"
before=$(state "$W/inplace.gguf")
( ulimit -f 1 && exec "$EDIT" "$W/inplace.gguf" --set hostile.mark=1 ) >/dev/null 2>"$W/err"; rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "inplace.gguf.*File too large" "$W/err"; then
    fail "ulimit -f: gguf-edit in place" "exit $rc: $(tail -1 "$W/err")"
elif [ "$(state "$W/inplace.gguf")" != "$before" ] || ! no_temps; then
    fail "ulimit -f: gguf-edit in place" "the input changed or a temporary file was left"
else pass "ulimit -f: gguf-edit in place"; fi
# standard output: an error, not a silent death
( ulimit -f 1 && exec "$INSPECT" --full "$W/model.gguf" ) >"$W/report.txt" 2>"$W/err"; rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "standard output: File too large" "$W/err"; then
    fail "ulimit -f: gguf-inspect >FILE" "exit $rc: $(tail -1 "$W/err")"
else pass "ulimit -f: gguf-inspect >FILE"; fi

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
# temp_of OUT: OUT's temporary file, if it exists
temp_of() { find "$(dirname "$1")" -maxdepth 1 -name ".$(basename "$1").tmp.*" | head -1; }

# interrupt NAME SIGNAL DISPOSITION OUT CMD...: starts CMD with SIGNAL at
# DISPOSITION ("default" or "ignore", set by env whatever this shell's own
# are: a shell started with SIGINT ignored, or a non-interactive shell's
# background job, passes SIG_IGN on), sends SIGNAL once OUT's temporary
# file exists, then checks:
#   default: status 128+n, no OUT, no temporary file;
#   ignore:  the temporary file was still there after the signal (so it came
#            mid-write), status 0, OUT whole (gguf-inspect --check), no
#            temporary file.
interrupt() {
    local name=$1 sig=$2 disp=$3 out=$4; shift 4
    local opt=--default-signal
    [ "$disp" = ignore ] && opt=--ignore-signal
    rm -f "$out"
    env "$opt=$sig" "$@" >/dev/null 2>"$W/err" &
    local pid=$! rc n=0 during left
    # until the temporary file exists or the tool has ended (bash reaps its
    # children as they end, so kill -0 then fails); the bound is only
    # against a hang
    while [ -z "$(temp_of "$out")" ] && kill -0 "$pid" 2>/dev/null && [ $((n += 1)) -lt 60000 ]; do
        sleep 0.01
    done
    kill -"$sig" "$pid" 2>/dev/null
    during=$(temp_of "$out")
    wait "$pid"; rc=$?
    left=$(temp_of "$out")
    if [ "$disp" = default ]; then
        local want=$((128 + $(kill -l "$sig")))
        if [ "$rc" -ne "$want" ]; then fail "$name" "exit $rc, expected $want (finished before the signal?)"
        elif [ -e "$out" ]; then fail "$name" "output $out exists"
        elif [ -n "$left" ]; then fail "$name" "temporary file left: $left"
        else pass "$name"; fi
    else
        if [ "$rc" -ne 0 ]; then fail "$name" "exit $rc, expected 0: $(tail -1 "$W/err")"
        elif [ -z "$during" ]; then fail "$name" "no temporary file after the signal: not sent mid-write"
        elif ! "$INSPECT" --check "$out" >/dev/null 2>&1; then fail "$name" "output $out is not whole"
        elif [ -n "$left" ]; then fail "$name" "temporary file left: $left"
        else pass "$name"; fi
    fi
}
interrupt "SIGINT during gguf-quantize: exit 130, nothing left" INT default "$W/q.gguf" \
    "$QUANTIZE" "$W/big.gguf" "$W/q.gguf" Q4_K_M 1
interrupt "SIGTERM during gguf-quantize: exit 143, nothing left" TERM default "$W/q.gguf" \
    "$QUANTIZE" "$W/big.gguf" "$W/q.gguf" Q4_K_M 1
interrupt "SIGINT during gguf-convert: exit 130, nothing left" INT default "$W/c.gguf" \
    "$CONVERT" -q "$W/bighf" --outtype q8_0 -o "$W/c.gguf"
interrupt "SIGTERM during gguf-convert: exit 143, nothing left" TERM default "$W/c.gguf" \
    "$CONVERT" -q "$W/bighf" --outtype q8_0 -o "$W/c.gguf"
interrupt "SIGINT ignored at start, during gguf-quantize: goes on, output whole" INT ignore "$W/q.gguf" \
    "$QUANTIZE" "$W/big.gguf" "$W/q.gguf" Q4_K_M 1
interrupt "SIGINT ignored at start, during gguf-convert: goes on, output whole" INT ignore "$W/c.gguf" \
    "$CONVERT" -q "$W/bighf" --outtype q8_0 -o "$W/c.gguf"
interrupt "SIGTERM ignored at start, during gguf-convert: goes on, output whole" TERM ignore "$W/c.gguf" \
    "$CONVERT" -q "$W/bighf" --outtype q8_0 -o "$W/c.gguf"
rm -rf "$W"
