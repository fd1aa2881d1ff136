#!/usr/bin/env bash
# tests/e2e/inspect.sh — gguf-inspect end to end: every fixture GGUF parses,
# checks clean and gives valid JSON/YAML; known facts of the reference files;
# tensor hashes against the llama.cpp manifests; NaN/Inf detection in all four
# float types; diff; vocabulary; escaping of hostile strings; split models;
# errors and exit codes; the default report never reads tensor data.
#
# Files that the fixtures do not provide (odd strings, NaNs in bf16/f64, a
# split model, a large sparse model) are written byte by byte by the gguf_*
# shell functions below, so the test does not depend on our own writer.
source "$(dirname "$0")/lib.sh"

REF=$FIX/reference
HAVE_JQ=$(command -v jq >/dev/null && echo 1 || echo 0)
HAVE_PYYAML=$(python3 -c 'import yaml' >/dev/null 2>&1 && echo 1 || echo 0)

# need_jq NAME: returns 1 (after printing SKIP) when jq is not installed.
need_jq() {
    [ "$HAVE_JQ" = 1 ] && return 0
    skip "$1" "jq not installed"
    return 1
}

js() { "$INSPECT" --json "$@" 2>/dev/null; }

# ---------------------------------------------------------------------------
# Writing GGUF by hand (little-endian; version 3; alignment 32)
# ---------------------------------------------------------------------------
export LC_ALL=C

le() { # le NBYTES VALUE
    local i b out=''
    for ((i = 0; i < $1; i++)); do printf -v b '\\x%02x' $((($2 >> (8 * i)) & 255)); out+=$b; done
    printf "$out"
}
u16() { le 2 "$1"; }
u32() { le 4 "$1"; }
u64() { le 8 "$1"; }
gstr() { u64 "$(printf "$1" | wc -c)"; printf "$1"; } # gstr PRINTF-FORMAT
kv_str() { gstr "$1"; u32 8; gstr "$2"; }
kv_u16() { gstr "$1"; u32 2; u16 "$2"; }
kv_u32() { gstr "$1"; u32 4; u32 "$2"; }
kv_i32() { gstr "$1"; u32 5; u32 "$2"; }
kv_str_array() { # kv_str_array KEY FMT...
    local k=$1; shift
    gstr "$k"; u32 9; u32 8; u64 $#
    for s in "$@"; do gstr "$s"; done
}
tensor_info() { # tensor_info NAME TYPE OFFSET NE...
    local name=$1 type=$2 off=$3; shift 3
    gstr "$name"; u32 $#
    for d in "$@"; do u64 "$d"; done
    u32 "$type"; u64 "$off"
}
pad32() { # pads FILE with zeros to a multiple of 32 bytes
    local size; size=$(stat -c %s "$1")
    truncate -s $(((size + 31) / 32 * 32)) "$1"
}
header() { printf 'GGUF'; u32 3; u64 "$1"; u64 "$2"; } # header N_TENSORS N_KV

# A file with one tensor of each float type holding NaN/Inf bit patterns, a
# clean f32 tensor, and a q8_0 block of 0xff bytes (its f16 scale is a NaN).
make_floats() {
    local f=$TMP/floats.gguf
    {
        header 6 1
        kv_str general.architecture llama
        tensor_info t.f32 0 0 4
        tensor_info t.f16 1 32 4
        tensor_info t.bf16 30 64 4
        tensor_info t.f64 28 96 4
        tensor_info t.clean 0 128 4
        tensor_info t.q8 8 160 32
    } >"$f"
    pad32 "$f"
    {
        u32 0x3f800000; u32 0x7fc00000; u32 0x7f800000; u32 0xff800000; u64 0; u64 0
        u16 0x3c00; u16 0x7c00; u16 0x7e00; u16 0xfc01; u64 0; u64 0; u64 0
        u16 0x3f80; u16 0x3f80; u16 0x7f80; u16 0x7fc0; u64 0; u64 0; u64 0
        u64 0x3ff0000000000000; u64 0x7ff8000000000000; u64 0; u64 0
        u32 0x3f800000; u32 0x3f800000; u32 0x3f800000; u32 0x3f800000; u64 0; u64 0
        for ((i = 0; i < 34; i++)); do printf '\xff'; done
    } >>"$f"
    echo "$f"
}

# A file whose strings hold control characters, quotes, backslashes, bytes
# that are not UTF-8, Unicode line separators and Markdown specials.
make_strings() {
    local f=$TMP/strings.gguf
    {
        header 0 4
        kv_str test.ctl 'a\001b\nc\td"e\\f\177'
        kv_str test.invalid '\377\376 ok \303('
        kv_str test.utf8 '\303\251\342\226\201\342\200\250'
        kv_str_array tokenizer.ggml.tokens '<s>' '\000' 'x|y`z' ' sp '
    } >"$f"
    echo "$f"
}

# A model split in two shards, one tensor each (llama.cpp's split.* keys).
make_split() {
    local p=$TMP/split
    {
        header 1 4
        kv_str general.architecture llama
        kv_u16 split.no 0; kv_u16 split.count 2; kv_i32 split.tensors.count 2
        tensor_info a 0 0 4
    } >"$p-00001-of-00002.gguf"
    pad32 "$p-00001-of-00002.gguf"
    { u32 0x3f800000; u32 0; u32 0; u32 0; } >>"$p-00001-of-00002.gguf"
    {
        header 1 3
        kv_u16 split.no 1; kv_u16 split.count 2; kv_i32 split.tensors.count 2
        tensor_info b 0 0 4
    } >"$p-00002-of-00002.gguf"
    pad32 "$p-00002-of-00002.gguf"
    { u32 0x40000000; u32 0; u32 0; u32 0; } >>"$p-00002-of-00002.gguf"
    echo "$p-00001-of-00002.gguf"
}

# make_sparse FILE KIB...: a GGUF that is almost all hole, with one f32
# tensor per KIB argument (t0, t1, ...: [256, KIB], KIB KiB each), back to
# back from the start of the data section. Prints FILE.
make_sparse() {
    local f=$1 off=0 i=0 k; shift
    { header $# 1; kv_str general.architecture llama
      for k in "$@"; do tensor_info t$i 0 $off 256 "$k"; off=$((off + k * 1024)); i=$((i + 1)); done
    } >"$f"
    pad32 "$f"
    truncate -s $(($(stat -c %s "$f") + off)) "$f"
    echo "$f"
}

# The data section's offset in FILE, as the summary gives it.
data_offset() { "$INSPECT" --no-metadata --no-tensors "$1" | sed -n 's/^data offset: *//p'; }

# poke FILE OFFSET HEX...: writes the bytes (e.g. 00 00 c0 7f) at OFFSET.
poke() {
    local f=$1 at=$2 b bytes=''; shift 2
    for b in "$@"; do bytes+="\\x$b"; done
    printf "$bytes" | dd of="$f" bs=1 seek="$at" conv=notrunc status=none
}

# ---------------------------------------------------------------------------
# Command line and errors (no fixtures needed)
# ---------------------------------------------------------------------------

exit_is() { # exit_is CODE CMD...: CMD exits with CODE
    local want=$1; shift
    "$@" >/dev/null 2>&1
    [ $? -eq "$want" ]
}
check "--help exits 0 with usage" bash -c '"$1" --help | grep -q "^usage: gguf-inspect"' _ "$INSPECT"
check "no arguments: usage error, exit 2" exit_is 2 "$INSPECT"
check "unknown option: exit 2" exit_is 2 "$INSPECT" --frobnicate x.gguf
check "--check with --hash: exit 2" exit_is 2 "$INSPECT" --check --hash x.gguf
check "two files without diff: exit 2" exit_is 2 "$INSPECT" a.gguf b.gguf
check "diff with one file: exit 2" exit_is 2 "$INSPECT" diff a.gguf

# usage_says NAME WANT ARGS...: exit 2 and exactly one line on stderr,
# "gguf-inspect: error: WANT (see 'gguf-inspect --help')", nothing on stdout.
usage_says() {
    local n=$1 want=$2 out err rc; shift 2
    out=$("$INSPECT" "$@" 2>"$TMP/usage.err" </dev/null); rc=$?
    err=$(cat "$TMP/usage.err")
    if [ $rc -eq 2 ] && [ -z "$out" ] && [ "$err" = "gguf-inspect: error: $want (see 'gguf-inspect --help')" ]; then
        pass "$n"
    else
        fail "$n" "rc=$rc: $err"
    fi
}
usage_says "unknown option: one line naming it" "unknown option '--frobnicate'" --frobnicate x.gguf
usage_says "no FILE: says what is missing, no usage dump" "missing FILE, the GGUF file to inspect"
usage_says "diff without files: says what is missing" "diff: missing A and B, the two GGUF files to compare" diff
usage_says "diff with one file: says B is missing" "diff: missing B, the file to compare 'a.gguf' with" diff a.gguf
usage_says "--tokenize without text: says what is missing" "--tokenize: missing TEXT, the text to tokenize" x.gguf --tokenize
usage_says "two modes: one line" "--vocab and --hash cannot be combined; choose one of --vocab, --merges, --check, --hash, --tokenize, --memory, --imatrix-stats" --vocab --hash x.gguf
usage_says "diff --special: refused" "diff does not take --special" diff --special a b
check "--version: 'gguf-inspect (ggufkit) VERSION', exit 0" bash -c '"$1" --version | grep -qx "gguf-inspect (ggufkit) [0-9][0-9.]*"' _ "$INSPECT"

# Output that cannot be written is an error in every mode (diff: 2, its
# error status), with the reason, and says so once.
full=$TMP/full.gguf
{ header 1 2; kv_str general.architecture llama; kv_str_array tokenizer.ggml.tokens a b
  tensor_info t 0 0 4; } >"$full"
pad32 "$full"; { u32 0; u32 0; u32 0; u32 0; } >>"$full"
for args in "" --vocab --check --hash --json --help --version "diff $full"; do
    label=${args%% /*}; n="stdout /dev/full: ${label:-report}"
    if [ ! -w /dev/full ]; then skip "$n" "no /dev/full"; continue; fi
    # shellcheck disable=SC2086 # args is a list of words
    err=$("$INSPECT" $args "$full" 2>&1 >/dev/full); rc=$?
    want=1; [ "${args%% *}" = diff ] && want=2
    if [ $rc -eq $want ] && [ "$err" = "gguf-inspect: error: standard output: No space left on device" ]; then
        pass "$n"
    else
        fail "$n" "rc=$rc: $err"
    fi
done

# Error messages name the file at fault, once.
err=$("$INSPECT" "$TMP/nope.gguf" 2>&1 >/dev/null)
[ "$err" = "gguf-inspect: error: $TMP/nope.gguf: cannot open: No such file or directory" ] &&
    pass "missing file: named once" || fail "missing file: named once" "$err"
err=$(printf 'GGUF' | "$INSPECT" - 2>&1 >/dev/null); rc=$?
if [ $rc -eq 1 ] && [ "$err" = "gguf-inspect: error: -: not a regular file: standard input must come from a file (< FILE), since GGUF files are mapped, not read" ]; then
    pass "'-' from a pipe: says to redirect from a file"
else
    fail "'-' from a pipe: says to redirect from a file" "rc=$rc: $err"
fi

err=$("$INSPECT" "$TMP/does-not-exist.gguf" 2>&1 >/dev/null); rc=$?
if [ $rc -eq 1 ] && grep -q "^gguf-inspect: error: $TMP/does-not-exist.gguf: " <<<"$err"; then
    pass "non-existent file: exit 1, error names the file"
else
    fail "non-existent file: exit 1, error names the file" "rc=$rc: $err"
fi

strings=$(make_strings)
floats=$(make_floats)
split=$(make_split)

head -c 40 "$floats" >"$TMP/truncated.gguf"
err=$("$INSPECT" --json "$TMP/truncated.gguf" 2>&1 >"$TMP/truncated.out"); rc=$?
if [ $rc -eq 1 ] && grep -q "^gguf-inspect: error: $TMP/truncated.gguf: offset [0-9]*: " <<<"$err" &&
   [ ! -s "$TMP/truncated.out" ]; then
    pass "truncated file: exit 1, error names the file and offset, nothing on stdout"
else
    fail "truncated file: exit 1, error names the file and offset, nothing on stdout" "rc=$rc: $err"
fi
out=$("$INSPECT" --check "$TMP/truncated.gguf" 2>/dev/null); rc=$?
if [ $rc -eq 1 ] && grep -q '^structure: *offset' <<<"$out" && grep -q '^result: *FAILED' <<<"$out"; then
    pass "--check of a truncated file reports the structural error, exit 1"
else
    fail "--check of a truncated file reports the structural error, exit 1" "rc=$rc"
fi

# ---------------------------------------------------------------------------
# Hand-made files
# ---------------------------------------------------------------------------

out=$("$INSPECT" --check "$floats"); rc=$?
want=$'t.f32   f32     1    2      1\nt.f16   f16     2    1      1\nt.bf16  bf16    1    1      2\nt.f64   f64     1    0      1\nt.q8    q8_0    1    0      0'
if [ $rc -eq 1 ] && [ "$(grep '^  t\.' <<<"$out" | sed 's/^  //')" = "$want" ]; then
    pass "--check finds NaN/Inf in f32, f16, bf16, f64 (counts, first index) and in q8_0's block scale"
else
    fail "--check finds NaN/Inf in f32, f16, bf16, f64 (counts, first index) and in q8_0's block scale" "rc=$rc: $out"
fi

if need_jq "--check --json problems"; then
    # four NaN/Inf tensors, and the model rules (gguf/modelcheck.h): the
    # hand-made file says llama but has none of its hyper-parameters
    got=$(js --check "$floats" | jq -c '[.result, .n_problems, [.problems[].tensor], .model]')
    if [ "$got" = '["FAILED",6,["t.f32","t.f16","t.bf16","t.f64","t.q8"],"missing key llama.context_length"]' ]; then
        pass "--check --json problems"
    else
        fail "--check --json problems" "$got"
    fi
fi

if need_jq "JSON escapes control characters and invalid UTF-8"; then
    ok=1
    js "$strings" | jq -j '.metadata["test.ctl"].value' >"$TMP/ctl.out" || ok=0
    printf 'a\001b\nc\td"e\\f\177' | cmp -s - "$TMP/ctl.out" || ok=0
    [ "$(js "$strings" | jq -r '.metadata["test.invalid"].value')" = $'\xc3\xbf\xc3\xbe ok \xc3\x83(' ] || ok=0
    [ "$(js "$strings" | jq -c '.metadata["test.utf8"].value')" = $'"\xc3\xa9\xe2\x96\x81\xe2\x80\xa8"' ] || ok=0
    [ "$(js --vocab "$strings" | jq -c '[.tokens[].text]')" = '["<s>","\u0000","x|y`z"," sp "]' ] || ok=0
    [ $ok = 1 ] && pass "JSON escapes control characters and invalid UTF-8" ||
        fail "JSON escapes control characters and invalid UTF-8"
fi

if [ "$HAVE_PYYAML" = 1 ] && [ "$HAVE_JQ" = 1 ]; then
    if "$INSPECT" --yaml --full "$strings" | python3 -c '
import json, sys, yaml
y = yaml.safe_load(sys.stdin)
j = json.load(open(sys.argv[1]))
sys.exit(0 if y == j else 1)' <(js --full "$strings"); then
        pass "YAML of hostile strings parses to the same data as the JSON"
    else
        fail "YAML of hostile strings parses to the same data as the JSON"
    fi
else
    skip "YAML of hostile strings parses to the same data as the JSON" "needs python3-yaml and jq"
fi

out=$("$INSPECT" "$strings")
if grep -qF '"a\x01b\nc\td\"e\\f\x7f"' <<<"$out" && grep -qF '"\xff\xfe ok \xc3("' <<<"$out" &&
   grep -qF '"é▁\u2028"' <<<"$out"; then
    pass "text output escapes non-printables and shows invalid bytes as \\xNN"
else
    fail "text output escapes non-printables and shows invalid bytes as \\xNN" "$out"
fi

out=$("$INSPECT" --markdown --vocab "$strings")
if grep -qxF '| 2 |  |  | ``"x\|y`z"`` |' <<<"$out" && grep -qxF '| 3 |  |  | `" sp "` |' <<<"$out"; then
    pass "Markdown puts token texts in code spans and escapes |"
else
    fail "Markdown puts token texts in code spans and escapes |" "$out"
fi

if need_jq "split model opens as one (2 shards, 2 tensors)"; then
    got=$(js "$split" | jq -c '[.summary.n_shards, .summary.n_tensors, [.tensors[] | [.name, .shard]]]')
    [ "$got" = '[2,2,[["a",1],["b",2]]]' ] && pass "split model opens as one (2 shards, 2 tensors)" ||
        fail "split model opens as one (2 shards, 2 tensors)" "$got"
fi
if need_jq "--no-split opens only the first shard"; then
    got=$(js --no-split "$split" | jq -c '[.summary.n_shards, .summary.n_tensors]')
    [ "$got" = '[1,1]' ] && pass "--no-split opens only the first shard" ||
        fail "--no-split opens only the first shard" "$got"
fi
out=$("$INSPECT" --hash "$split")
if [ "$(wc -l <<<"$out")" -eq 4 ] && grep -q '  (data section, shard 2 of 2)  ' <<<"$out"; then
    pass "--hash of a split model hashes each shard's data section"
else
    fail "--hash of a split model hashes each shard's data section" "$out"
fi

# Options may follow the file; "-" is standard input.
check "options after the file name" bash -c '"$1" "$2" --no-tensors --json | grep -q "\"n_tensors\": 6"' _ "$INSPECT" "$floats"
check "'-' reads standard input" bash -c '"$1" --no-metadata - <"$2" | grep -q "^tensors: *6"' _ "$INSPECT" "$floats"
check "diff of a file with itself: identical, exit 0" exit_is 0 "$INSPECT" diff "$floats" "$floats"

# The default report reads no tensor data: on a 4 GiB sparse file, a page
# fault count far below the 65536+ that reading it would need (fault-around
# maps 16 pages per fault).
if [ -x /usr/bin/time ]; then
    sparse=$(make_sparse "$TMP/sparse.gguf" 4194304)
    faults=$(/usr/bin/time -f %R "$INSPECT" --no-tensors "$sparse" 2>&1 >/dev/null | tail -1)
    if [ "${faults:-999999}" -lt 20000 ]; then
        pass "the default report reads only the header ($faults minor faults on 4 GiB)"
    else
        fail "the default report reads only the header" "$faults minor faults on 4 GiB"
    fi
    rm -f "$sparse"
else
    skip "the default report reads only the header" "/usr/bin/time not installed"
fi

# ---------------------------------------------------------------------------
# Memory does not grow with the file
# ---------------------------------------------------------------------------
# --check, --hash and diff read tensor data in 64 MiB pieces whose pages are
# released after use, and --vocab streams its rows; before, every page read
# stayed resident (a 4 GiB tensor: 4.2 GB RSS) and text --vocab kept every
# cell (10M tokens: 3.8 GB). Each limit below is well under what the old
# code needed for that file and well over what streaming needs (~70 MB,
# diff ~135 MB; --vocab ~310 MB, nearly all of it gguf_open's index of the
# 10M strings and the pages it read to validate them). The tensors are 1 GiB
# and 256 MiB, not 4 GiB: the first read of a fresh sparse file fills the
# page cache at ~3 s per GiB of kernel time. Sanitizer builds scan 5-20x
# slower: they get half the tensor and a fifth of the tokens.

# peak_kb OUT CMD...: runs CMD (stdout passes through, stderr is dropped),
# writes its peak resident set size in kB to OUT; returns CMD's status.
peak_kb() {
    local out=$1 rc pid hwm=0 v; shift
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f %M -o "$out" "$@" 2>/dev/null; rc=$?
        v=$(tail -1 "$out"); echo "$v" >"$out" # a failed command's note comes first
        return $rc
    fi
    "$@" 2>/dev/null & pid=$!
    while v=$(sed -n 's/^VmHWM:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null) &&
          [ -n "$v" ]; do hwm=$v; sleep 0.02; done
    wait "$pid"; rc=$?
    echo "$hwm" >"$out"
    return $rc
}

# rss_below NAME LIMIT_MB: PASS when the last peak_kb measured less.
rss_below() {
    local kb; kb=$(cat "$TMP/peak")
    if [ "${kb:-0}" -gt 0 ] && [ "$kb" -lt $(($2 * 1024)) ]; then
        pass "$1 (peak RSS $((kb / 1024)) MB < $2 MB)"
    else
        fail "$1" "peak RSS ${kb:-?} kB, limit $2 MB"
    fi
}

if grep -qa __asan_init "$INSPECT"; then big_kib=524288 n_tok=2000000; else big_kib=1048576 n_tok=10000000; fi
CHUNK=$((64 << 20))

# --check: one f32 tensor of 1 GiB, a NaN in the second 64 MiB piece and an
# Inf as the last element of the third (the first index counts across pieces).
big=$(make_sparse "$TMP/big.gguf" $big_kib)
off=$(data_offset "$big")
poke "$big" $((off + CHUNK + 4 * 5)) 00 00 c0 7f
poke "$big" $((off + 3 * CHUNK - 4)) 00 00 80 ff
peak_kb "$TMP/peak" "$INSPECT" --check "$big" >"$TMP/check.out"; rc=$?
if [ $rc -eq 1 ] && grep -Eq "^  t0 +f32 +1 +1 +$((CHUNK / 4 + 5))\$" "$TMP/check.out"; then
    rss_below "--check of a $((big_kib >> 10)) MiB tensor: NaN/Inf found across pieces, memory bounded" 256
else
    fail "--check of a $((big_kib >> 10)) MiB tensor: NaN/Inf found across pieces, memory bounded" "rc=$rc: $(cat "$TMP/check.out")"
fi
rm -f "$big"

# --hash and diff: 256 MiB in four tensors that straddle the 64 MiB pieces
# (t1 is 2 KiB around the first boundary, t2 spans the second and third),
# bytes set on both sides of each boundary; every hash must equal
# sha256sum's of the same bytes.
sizes="65535 2 131072 65535"
mid=$(make_sparse "$TMP/mid.gguf" $sizes)
off=$(data_offset "$mid")
for at in 0 $((CHUNK - 1)) $CHUNK $((2 * CHUNK - 1)) $((2 * CHUNK)) $((3 * CHUNK)) $((4 * CHUNK - 1)); do
    poke "$mid" $((off + at)) 5a
done
name="--hash of 256 MiB in 4 tensors across 64 MiB pieces: sha256sum's hashes, memory bounded"
if ! command -v sha256sum >/dev/null; then
    skip "$name" "sha256sum not installed"
else
    want=$(start=0
           for k in $sizes; do
               tail -c +$((off + start + 1)) "$mid" | head -c $((k * 1024)) | sha256sum | cut -d' ' -f1
               start=$((start + k * 1024))
           done
           tail -c +$((off + 1)) "$mid" | sha256sum | cut -d' ' -f1)
    peak_kb "$TMP/peak" "$INSPECT" --hash "$mid" >"$TMP/hash.out"; rc=$?
    if [ $rc -eq 0 ] && [ "$(cut -d' ' -f1 "$TMP/hash.out")" = "$want" ]; then
        rss_below "$name" 192
    else
        fail "$name" "rc=$rc"
    fi
fi
cp --sparse=always "$mid" "$TMP/mid2.gguf"
poke "$TMP/mid2.gguf" $((off + 2 * CHUNK + 7)) 01
peak_kb "$TMP/peak" "$INSPECT" diff "$mid" "$TMP/mid2.gguf" >"$TMP/diff.out"; rc=$?
name="diff of two 256 MiB files: one byte in t2 found, memory bounded"
if [ $rc -eq 1 ] && grep -Eq '^  data +t2 ' "$TMP/diff.out" && grep -Eq '^tensors identical: +3$' "$TMP/diff.out"; then
    rss_below "$name" 256
else
    fail "$name" "rc=$rc: $(cat "$TMP/diff.out")"
fi
rm -f "$mid" "$TMP/mid2.gguf"

# --vocab: 10M tokens (8 texts repeated), with scores and types; text, the
# format that used to hold the table (the others streamed already).
name="--vocab of $n_tok tokens: every row, memory bounded"
if command -v python3 >/dev/null; then
    python3 - "$TMP/vocab.gguf" "$n_tok" <<'PY'
import struct, sys
path, n = sys.argv[1], int(sys.argv[2])
gstr = lambda b: struct.pack('<Q', len(b)) + b
texts = b''.join(gstr(b'tok%05d' % i) for i in range(8))
with open(path, 'wb') as f:
    f.write(b'GGUF' + struct.pack('<IQQ', 3, 0, 4))
    f.write(gstr(b'general.architecture') + struct.pack('<I', 8) + gstr(b'llama'))
    f.write(gstr(b'tokenizer.ggml.tokens') + struct.pack('<IIQ', 9, 8, n) + texts * (n // 8))
    f.write(gstr(b'tokenizer.ggml.scores') + struct.pack('<IIQ', 9, 6, n) + struct.pack('<f', -2.0) * n)
    f.write(gstr(b'tokenizer.ggml.token_type') + struct.pack('<IIQ', 9, 5, n) + struct.pack('<i', 1) * n)
PY
    got=$(peak_kb "$TMP/peak" "$INSPECT" --vocab "$TMP/vocab.gguf" |
          awk 'NR == 2 || NR == 9 { print } END { print NR }' | tr -s ' ')
    want=$(printf ' 0 normal -2.0 "tok00000"\n 7 normal -2.0 "tok00007"\n%d' $((n_tok + 1)))
    if [ "$got" = "$want" ]; then
        rss_below "$name" 600
    else
        fail "$name" "$got"
    fi
    rm -f "$TMP/vocab.gguf"
else
    skip "$name" "python3 not installed"
fi

# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------

if [ -d "$FIX" ]; then
    mapfile -t fixtures < <(find "$FIX" -name '*.gguf' | sort)
else
    fixtures=()
    skip "fixture GGUF files" "$FIX not found"
fi
for f in "${fixtures[@]}"; do
    rel=${f#"$FIX"/}
    check "parses: $rel" "$INSPECT" "$f"
    check "--check passes: $rel" "$INSPECT" --check "$f"
    if need_jq "--json parses: $rel"; then
        check "--json parses: $rel" bash -c '"$1" --json --full "$2" | jq -e .summary.n_tensors' _ "$INSPECT" "$f"
    fi
    if [ "$HAVE_PYYAML" = 1 ]; then
        check "--yaml parses: $rel" bash -c '"$1" --yaml --full "$2" | python3 -c "import sys, yaml; assert yaml.load(sys.stdin, getattr(yaml, \"CSafeLoader\", yaml.SafeLoader))[\"summary\"]"' _ "$INSPECT" "$f"
    else
        check "--yaml non-empty: $rel" bash -c '[ -n "$("$1" --yaml "$2")" ]' _ "$INSPECT" "$f"
    fi
done

s260=$REF/stories260K-f32.gguf
if need_fixture reference/stories260K-f32.gguf "stories260K: 48 tensors, 19 keys, 512 tokens" &&
   need_jq "stories260K: 48 tensors, 19 keys, 512 tokens"; then
    got=$(js "$s260" | jq -c '[.summary.n_tensors, .summary.n_kv, .metadata["tokenizer.ggml.tokens"].count]')
    [ "$got" = '[48,19,512]' ] && pass "stories260K: 48 tensors, 19 keys, 512 tokens" ||
        fail "stories260K: 48 tensors, 19 keys, 512 tokens" "$got"
fi
if need_fixture reference/stories260K-f32.gguf "--vocab of stories260K: header + 512 lines" 1; then
    out=$("$INSPECT" --vocab "$s260")
    if [ "$(wc -l <<<"$out")" -eq 513 ] && grep -q '^ *1  control  *0.0  "<s>"$' <<<"$out"; then
        pass "--vocab of stories260K: header + 512 lines"
    else
        fail "--vocab of stories260K: header + 512 lines" "$(wc -l <<<"$out") lines"
    fi
    fixture_block_end
fi

tiny=$FIX/models/llama-2-tiny-random/llama-2-tiny-random.gguf
if need_fixture models/llama-2-tiny-random/llama-2-tiny-random.gguf "llama-2-tiny-random: n_embd 8, 32000 tokens" &&
   need_jq "llama-2-tiny-random: n_embd 8, 32000 tokens"; then
    got=$(js "$tiny" | jq -c '[.metadata["llama.embedding_length"].value, .metadata["tokenizer.ggml.tokens"].count]')
    [ "$got" = '[8,32000]' ] && pass "llama-2-tiny-random: n_embd 8, 32000 tokens" ||
        fail "llama-2-tiny-random: n_embd 8, 32000 tokens" "$got"
fi

if need_fixture vocab/ggml-vocab-gpt-2.gguf "--merges of gpt-2: 50000 merges" 1; then
    n=$("$INSPECT" --merges "$FIX/vocab/ggml-vocab-gpt-2.gguf" | tail -n +2 | wc -l)
    [ "$n" -eq 50000 ] && pass "--merges of gpt-2: 50000 merges" || fail "--merges of gpt-2: 50000 merges" "$n"
    fixture_block_end
fi

# Tensor hashes and whole manifests against llama.cpp's reference files.
manifest_of() {
    case $1 in f16) echo "$REF/convert/wp-llama-5m-f16.json" ;;
               *) echo "$REF/quantize/wp-llama-5m-$1.json" ;; esac
}
# Header, tensor table and every metadata key (f32 values to float
# precision, arrays by count and first elements) equal the manifest's.
MANIFEST_JQ='
def close(x; y): if (x|type) == "number" and (y|type) == "number"
    then ((x - y) | fabs) <= 1e-6 * (y | fabs) + 1e-37 else x == y end;
def same_list(x; y): (x|length) == (y|length) and ([range(0; y|length) as $i | close(x[$i]; y[$i])] | all);
$m[0] as $m | $r[0] as $r
| ($m.summary | [.version, .alignment, .n_kv, .n_tensors]) == ($r | [.version, .alignment, .n_kv, .n_tensors])
  and ([$m.tensors[] | [.name, (.type | ascii_upcase), .shape, .offset, .bytes]]
       == [$r.tensors[] | [.name, (.type | ascii_upcase), .shape, .offset, .nbytes]])
  and ($m.metadata | keys) == ($r.metadata | keys)
  and ([$r.metadata | to_entries[] | $m.metadata[.key] as $x | .value as $v
        | $x.type == $v.type and
          (if $v.count then $x.count == $v.count and same_list($x.value; $v.head)
           else close($x.value; $v.value) end)] | all)'
for p in f16 Q4_K_M Q8_0 Q2_K; do
    g=$REF/wp-llama-5m-$p.gguf man=$(manifest_of $p)
    name="--hash of wp-llama-5m-$p (tensors and arrays) equals ${man#"$REF"/}"
    mname="wp-llama-5m-$p: header, tensors and metadata match ${man#"$REF"/}"
    for n in "$name" "$mname"; do
        need_fixture "reference/wp-llama-5m-$p.gguf" "$n" && need_fixture "${man#"$FIX"/}" "$n" &&
            need_jq "$n" || continue
        if [ "$n" = "$name" ]; then
            # tensors, then metadata arrays (element bytes as stored), then the data section
            if diff <("$INSPECT" --hash "$g" | sed '$d') \
                    <(jq -r '(.tensors[] | "\(.sha256)  \(.name)"),
                             (.metadata | to_entries[] | select(.value.sha256) | "\(.value.sha256)  \(.key)")' "$man") >"$TMP/hash.diff"; then
                pass "$n"
            else
                fail "$n" "$(head -2 "$TMP/hash.diff" | tr '\n' ' ')"
            fi
        elif [ "$(jq -n --slurpfile m <(js "$g") --slurpfile r "$man" "$MANIFEST_JQ")" = true ]; then
            pass "$n"
        else
            fail "$n"
        fi
    done
done

name="(data section) hash is the sha256 of the file after the data offset"
if ! command -v sha256sum >/dev/null; then
    skip "$name" "sha256sum not installed"
elif need_fixture reference/stories260K-f32.gguf "$name" && need_jq "$name"; then
    off=$(js --no-metadata --no-tensors "$s260" | jq .summary.data_offset)
    want=$(tail -c +$((off + 1)) "$s260" | sha256sum | cut -d' ' -f1)
    got=$("$INSPECT" --hash "$s260" | tail -1)
    [ "$got" = "$want  (data section)" ] && pass "$name" || fail "$name" "$got"
fi

# A NaN written into an f32 tensor of a real model fails --check.
if need_fixture reference/stories260K-f32.gguf "--check fails on a NaN patched into stories260K" &&
   need_jq "--check fails on a NaN patched into stories260K"; then
    cp "$s260" "$TMP/nan.gguf"; chmod u+w "$TMP/nan.gguf"
    info=$(js --no-metadata "$s260")
    pos=$(jq '.summary.data_offset + (.tensors[] | select(.name == "blk.1.ffn_up.weight") | .offset) + 4 * 100' <<<"$info")
    printf '\x00\x00\xc0\x7f' | dd of="$TMP/nan.gguf" bs=1 seek="$pos" conv=notrunc status=none
    out=$("$INSPECT" --check "$TMP/nan.gguf"); rc=$?
    if [ $rc -eq 1 ] && grep -Eq '^  blk\.1\.ffn_up\.weight +f32 +1 +0 +100$' <<<"$out"; then
        pass "--check fails on a NaN patched into stories260K"
    else
        fail "--check fails on a NaN patched into stories260K" "rc=$rc"
    fi
fi

# Gemma 4's model rules through the registry, on gguf-convert's gemma4-rand
# with one value patched in place (gguf-edit refuses to write such a file):
# the KV-shared blocks' reuse, a block with its own KV missing attn_k, the
# per-block widths (sliding vs full heads, feed_forward_length per block),
# the per-block pattern's length, K and V heads of one size. Each --check
# fails (exit 1) naming the rule; the file as converted passes.
G4IN=$FIX/models/gemma4-rand
if need_fixture models/gemma4-rand "gemma4 model rules" 9; then
    g4=$TMP/g4.gguf
    if ! "$BIN/gguf-convert" -q "$G4IN" --outtype f16 -o "$g4" >"$TMP/g4.log" 2>&1; then
        skip_block "gemma4 model rules" "gguf-convert failed: $(tail -1 "$TMP/g4.log")" 9
    else
        check "gemma4: gemma4-rand as converted passes --check" "$INSPECT" --check "$g4"
        # g4_patch KEY TYPE-BYTE INDEX BYTES: a copy of $g4 as $TMP/g4x.gguf with
        # BYTES (printf escapes) written over KEY's value (element INDEX of an
        # array: TYPE-BYTE 09, elements of ${#BYTES}/4 bytes)
        g4_patch() {
            local at skip=4
            cp "$g4" "$TMP/g4x.gguf"; chmod u+w "$TMP/g4x.gguf"
            at=$(LC_ALL=C grep -obUaP "${1//./\\.}\\x$2\\x00\\x00\\x00" "$g4" | head -1 | cut -d: -f1)
            [ -n "$at" ] || return 1
            [ "$2" = 09 ] && skip=$((16 + $3 * $5))
            printf "$4" | dd of="$TMP/g4x.gguf" bs=1 seek=$((at + ${#1} + skip)) conv=notrunc status=none
        }
        g4_case() { # name message-text patch-args...
            local name=$1 want=$2 out rc
            shift 2
            if ! g4_patch "$@"; then fail "gemma4 --check: $name" "key $1 not found"; return; fi
            out=$("$INSPECT" --check "$TMP/g4x.gguf" 2>&1); rc=$?
            if [ $rc -eq 1 ] && grep -qF -- "$want" <<<"$out"; then pass "gemma4 --check: $name"
            else fail "gemma4 --check: $name" "rc=$rc: $(grep -m1 -i 'expected\|missing\|reuse' <<<"$out")"; fi
        }
        g4_case "a shared sliding block reusing a full block's KV" \
            "gemma4.attention.shared_kv_layers = 2: block 4 (sliding) would reuse the KV of block 2, which is full" \
            gemma4.attention.shared_kv_layers 04 0 '\x02\x00\x00\x00'
        g4_case "every block shared" \
            "gemma4.attention.shared_kv_layers = 6, expected 0 to gemma4.block_count - 1 = 5" \
            gemma4.attention.shared_kv_layers 04 0 '\x06\x00\x00\x00'
        g4_case "a block with its own KV and no attn_k" "missing tensor blk.3.attn_k.weight" \
            gemma4.attention.shared_kv_layers 04 0 '\x00\x00\x00\x00'
        g4_case "a full block made sliding: its heads are not the sliding ones" \
            "block 5 (full) would reuse the KV of block 2, which is sliding" \
            gemma4.attention.sliding_window_pattern 09 2 '\x01' 1
        g4_case "a sliding block made full: its q is not the full width" \
            "tensor blk.0.attn_q.weight has shape [128, 128], expected [128, 256]" \
            gemma4.attention.sliding_window_pattern 09 0 '\x00' 1
        g4_case "feed_forward_length per block" \
            "tensor blk.3.ffn_gate.weight has shape [128, 256], expected [128, 128]" \
            gemma4.feed_forward_length 09 3 '\x80\x00\x00\x00' 4
        g4_case "the sliding V heads not the K heads' size" \
            "gemma4.attention.value_length_swa = 16, expected gemma4.attention.key_length_swa = 32" \
            gemma4.attention.value_length_swa 04 0 '\x10\x00\x00\x00'
        g4_case "the per-layer inputs' width" \
            "tensor per_layer_token_embd.weight has shape [192, 512], expected [96, 512]" \
            gemma4.embedding_length_per_layer_input 04 0 '\x10\x00\x00\x00'
    fi
    rm -f "$TMP/g4.gguf" "$TMP/g4x.gguf"
    fixture_block_end
fi

f16=$REF/wp-llama-5m-f16.gguf q8=$REF/wp-llama-5m-Q8_0.gguf
if need_fixture reference/wp-llama-5m-f16.gguf "diff of wp-llama-5m-f16 with itself: identical" 1; then
    out=$("$INSPECT" diff "$f16" "$f16"); rc=$?
    [ $rc -eq 0 ] && grep -q '^result: *identical$' <<<"$out" &&
        pass "diff of wp-llama-5m-f16 with itself: identical" ||
        fail "diff of wp-llama-5m-f16 with itself: identical" "rc=$rc"
    fixture_block_end
fi
if need_fixture reference/wp-llama-5m-f16.gguf "diff f16 vs Q8_0: file type and tensor types change" &&
   need_fixture reference/wp-llama-5m-Q8_0.gguf "diff f16 vs Q8_0: file type and tensor types change" &&
   need_jq "diff f16 vs Q8_0: file type and tensor types change"; then
    "$INSPECT" diff --json "$f16" "$q8" >"$TMP/diff.json"; rc=$?
    got=$(jq -c '[.result, ([.metadata[] | select(.change == "changed") | .key] | index("general.file_type") != null),
                  ([.tensors[] | select(.change == "type" and .type_a == "f16" and .type_b == "q8_0")] | length),
                  .tensors_identical, .tensors_added, .tensors_removed]' "$TMP/diff.json")
    # 39 tensors: the 30 matrices (incl. token_embd, output) change type, the 9 norms stay f32.
    [ $rc -eq 1 ] && [ "$got" = '["different",true,30,9,0,0]' ] &&
        pass "diff f16 vs Q8_0: file type and tensor types change" ||
        fail "diff f16 vs Q8_0: file type and tensor types change" "rc=$rc $got"
fi

# --check reads the block scales of quantized tensors: a NaN patched into
# the f16 scale of one q4_K block of a llama.cpp file is found
if need_fixture reference/wp-llama-5m-Q4_K_M.gguf "--check finds a NaN q4_K block scale" 1 &&
   need_jq "--check finds a NaN q4_K block scale"; then
    cp "$REF/wp-llama-5m-Q4_K_M.gguf" "$TMP/nanscale.gguf"
    info=$("$INSPECT" --json "$TMP/nanscale.gguf")
    name=$(jq -r '[.tensors[] | select(.type == "q4_K")][0].name' <<<"$info")
    pos=$(jq --arg n "$name" '.summary.data_offset + (.tensors[] | select(.name == $n) | .offset) + 144 * 3' <<<"$info")
    printf '\x00\x7e' | dd of="$TMP/nanscale.gguf" bs=1 seek="$pos" conv=notrunc status=none
    out=$("$INSPECT" --check "$TMP/nanscale.gguf"); rc=$?
    if [ $rc -eq 1 ] && grep -Eq "^  ${name//./\\.} +q4_K +1 +0 +768$" <<<"$out" &&
       grep -Eq '^quantized tensors: +30$' <<<"$out"; then
        pass "--check finds a NaN q4_K block scale (tensor, count, first element)"
    else
        fail "--check finds a NaN q4_K block scale" "rc=$rc $name: $(grep -A3 NaN <<<"$out")"
    fi
    fixture_block_end
fi

# --arches: the registry, as every tool uses it
out=$("$INSPECT" --arches); rc=$?
if [ $rc -eq 0 ] && grep -Eq '^  llama +norm +silu ' <<<"$out" && grep -Eq '^  qwen2 +neox +silu +qkv-bias' <<<"$out" &&
   grep -Eq '^  blk\.%d\.attn_q\.bias +attn_q_bias +\[head_count × head_dim\] +true +every +model\.layers\.%d\.self_attn\.q_proj\.bias$' <<<"$out" &&
   grep -Eq '^  blk\.%d\.ssm_a +ssm_a +\[ssm\.time_step_rank\] +true +recurrent +model\.layers\.%d\.linear_attn\.A_log$' <<<"$out" &&
   grep -Eq '^  qwen35\.rope\.dimension_sections +integer\[4\] +true' <<<"$out" &&
   grep -q '^qwen2: tensors$' <<<"$out"; then
    pass "--arches lists llama, mistral and qwen2 with their features and tensor tables, the kind of block of qwen35's rows and its array key"
else
    fail "--arches lists llama, mistral and qwen2 with their features and tensor tables, the kind of block of qwen35's rows and its array key" "rc=$rc"
fi
# --arches --json, held to what every listing must be rather than to a copy
# of it (a family added to the registry needs no edit here): each problem
# found is one line, and a check passes when there is none.
ARCHES_N=4
if ! command -v jq >/dev/null; then
    skip_block "--arches --json invariants" "jq not installed" $ARCHES_N
elif ! "$INSPECT" --arches --json >"$TMP/arches.json" || ! jq -e . "$TMP/arches.json" >/dev/null 2>&1; then
    skip_block "--arches --json invariants" "--arches --json failed or is not JSON" $((ARCHES_N - 1))
    fail "--arches --json parses"
else
    arches_case() { # name jq-program: passes when the program prints nothing
        local got
        got=$(jq -r "$2" "$TMP/arches.json" 2>&1 | head -4 | tr '\n' ';')
        [ -z "$got" ] && pass "$1" || fail "$1" "$got"
    }
    # every architecture: its five fields, strings, rope and activation named;
    # a keys and a tensors table; no table of an architecture not listed
    arches_case "--arches --json: each architecture has rope, activation, features, hf_classes, about, a keys and a tensors table" '
        if (.architectures | type) != "object" or (.architectures | length) == 0 then "no architectures" else
        (.architectures | to_entries[] |
            select((.value | keys) != ["about", "activation", "features", "hf_classes", "rope"] or
                   ([.value[] | type] | unique) != ["string"] or .value.rope == "" or .value.activation == "") |
            "\(.key): fields \(.value | keys)"),
        ((keys - ["architectures"]) - [.architectures | keys[] | "\(.)_keys", "\(.)_tensors"] | .[] | "table of no architecture: \(.)"),
        ([.architectures | keys[] | "\(.)_keys", "\(.)_tensors"] - keys | .[] | "missing table: \(.)")
        end'
    # key rows: key under "ARCH.", type, required, when_absent; tensor rows:
    # name, role, shape, required, blocks (global for a global, else the
    # word of its kind of block: every, attention, ...), hf (a name or
    # null); keys, tensor names,
    # roles and Hugging Face names once each per architecture; token_embd
    # required everywhere
    arches_case "--arches --json: key and tensor rows complete, each key, tensor, role and Hugging Face name once per architecture" '
        . as $all | .architectures | keys[] as $a | $all["\($a)_keys"] as $k | $all["\($a)_tensors"] as $t |
        (if ($k | type) != "array" or ($k | length) == 0 then "\($a): no keys" else empty end),
        (if ($t | type) != "array" or ($t | length) == 0 then "\($a): no tensors" else empty end),
        ($k[]? | select((keys) != ["key", "required", "type", "when_absent"] or (.key | startswith("\($a).") | not) or
                        (.required | type) != "boolean" or (.type | type) != "string" or .type == "") |
            "\($a): key row \(.)"),
        ($t[]? | select((keys) != ["blocks", "hf", "name", "required", "role", "shape"] or (.required | type) != "boolean" or
                        ((.name | startswith("blk.")) != (.blocks != "global")) or
                        (.blocks | type) != "string" or .blocks == "" or .blocks == "unknown" or
                        ([.name, .role, .shape] | map(type == "string" and . != "") | all | not) or
                        ((.hf | type) != "string" and .hf != null)) |
            "\($a): tensor row \(.)"),
        ([$k[]?.key], [$t[]?.name], [$t[]?.role], [$t[]?.hf | strings] | group_by(.)[] | select(length > 1) |
            "\($a): \(.[0]) twice"),
        (if [$t[]? | select(.name == "token_embd.weight" and .required)] | length == 1 then empty
         else "\($a): no required token_embd.weight" end)'
    # a Hugging Face class converts to one architecture
    arches_case "--arches --json: each Hugging Face class belongs to one architecture" '
        [.architectures | to_entries[] | .key as $a | .value.hf_classes | split(", ")[] | {c: ., a: $a}] |
        group_by(.c)[] | select(length > 1) | "\(.[0].c) in \(map(.a) | join(" and "))"'
    # the text listing: the same architectures in the same order, once
    # each, and for each a keys and a tensors table of as many rows
    "$INSPECT" --arches >"$TMP/arches.txt"
    d=$(diff <(jq -r '. as $all | .architectures | keys_unsorted[] | "\(.) \($all["\(.)_keys"] | length) \($all["\(.)_tensors"] | length)"' "$TMP/arches.json") \
             <(awk 'NR > 2 && !NF && !done { done = 1 } NR > 2 && !done { names[++n] = $1 }
                    /^[^ ].*: (keys|tensors)$/ { cur = $0; sub(/: /, ":", cur); rows[cur] = -1; next }
                    !NF { cur = "" } cur != "" { rows[cur]++ }
                    END { for (i = 1; i <= n; i++) print names[i], rows[names[i] ":keys"] + 0, rows[names[i] ":tensors"] + 0 }' "$TMP/arches.txt") |
        head -6 | tr '\n' ' ')
    dup=$(awk 'NR > 2 && !NF { exit } NR > 2 { print $1 }' "$TMP/arches.txt" | sort | uniq -d | tr '\n' ' ')
    [ -z "$d$dup" ] && pass "--arches: the text and JSON listings name the same architectures in order, once each, with as many key and tensor rows" ||
        fail "--arches: the text and JSON listings name the same architectures in order, once each, with as many key and tensor rows" "$d${dup:+twice: $dup}"
fi
# every architecture has its reference set from llama.cpp e21cdc11, whose
# F32 conversion is of that architecture, or is named in lib.sh's
# UPSTREAM_SET_EXCEPT; every set in upstream/convert/ is some architecture's
if need_fixture upstream/convert "every architecture has an upstream reference set" 1; then
    bad=
    for a in $(arch_families); do
        set_=$(upstream_set "$a")
        [ -n "$set_" ] || continue
        m=$(upstream_root "$set_")/convert/$set_-f32.json
        if [ ! -f "$m" ]; then
            bad+="$a: no $m (add the set, or '$a=' to UPSTREAM_SET_EXCEPT in tests/e2e/lib.sh); "
        elif command -v jq >/dev/null &&
            [ "$(jq -r '.metadata["general.architecture"].value' "$m")" != "$a" ]; then
            bad+="$a: $m converts to $(jq -r '.metadata["general.architecture"].value' "$m"); "
        fi
    done
    for m in "$FIX"/upstream/convert/*-f32.json; do
        set_=$(basename "$m" -f32.json)
        upstream_sets | grep -qx -- "$set_" || bad+="upstream/convert/$set_ is no architecture's set; "
    done
    [ -z "$bad" ] && pass "every architecture has an upstream reference set of its own, or says it has none" ||
        fail "every architecture has an upstream reference set of its own, or says it has none" "$bad"
    fixture_block_end
fi
usage_error "$INSPECT" "--arches takes no FILE" "--arches takes no FILE (got 'x.gguf')" --arches x.gguf

# --check lists every model problem, not just the first: two tensor names
# patched in a generated model give two unknown tensors and two missing ones
"$BUILD/tests/tools/mkmodel" "$TMP/two-bad.gguf" --dim 64 --layers 2 --ffn 96 --heads 4 --kv-heads 2 --vocab 300 >/dev/null
for pair in "blk.1.ffn_up.weight:blk.1.ffn_uq.weight" "blk.0.attn_k.weight:blk.0.attn_j.weight"; do
    at=$(grep -obaF "${pair%%:*}" "$TMP/two-bad.gguf" | head -1 | cut -d: -f1)
    printf '%s' "${pair##*:}" | dd of="$TMP/two-bad.gguf" bs=1 seek="$at" conv=notrunc status=none
done
out=$("$INSPECT" --check "$TMP/two-bad.gguf"); rc=$?
if [ $rc -eq 1 ] && grep -q '^model: *tensor blk.0.attn_j.weight is not a llama tensor$' <<<"$out" &&
   grep -q '^tensor blk.1.ffn_uq.weight is not a llama tensor$' <<<"$out" &&
   grep -q '^missing tensor blk.0.attn_k.weight$' <<<"$out" &&
   grep -q '^missing tensor blk.1.ffn_up.weight$' <<<"$out" && grep -Eq '^problems: +4$' <<<"$out"; then
    pass "--check lists every model problem (2 unknown, 2 missing tensors)"
else
    fail "--check lists every model problem (2 unknown, 2 missing tensors)" "rc=$rc $(head -c 600 <<<"$out")"
fi

# --- llama-gguf-hash's lines (--hash with --xxh64/--sha1/--sha256/--uuid/
# --all/--no-layer, -c/--hash-check MANIFEST): tests/data/hash holds
# llama-gguf-hash e21cdc11's output for fixture models opened as
# reference/NAME.gguf (see its README); the same names here, from a folder
# whose reference/ is the fixtures'.
H=$ROOT/tests/data/hash
if need_fixture reference/wp-llama-5m-Q4_K_M.gguf "llama-gguf-hash lines" 11; then
    mkdir -p "$TMP/hw" && ln -sfn "$FIX/reference" "$TMP/hw/reference"
    same_as() { # same_as NAME WANT_FILE WANT_RC ARGS...
        local n=$1 want=$2 wrc=$3 got rc; shift 3
        got=$(cd "$TMP/hw" && "$INSPECT" --hash "$@" 2>&1); rc=$?
        if [ "$rc" = "$wrc" ] && [ "$got" = "$(cat "$want")" ]; then pass "$n"
        else fail "$n" "rc=$rc (want $wrc): $(diff <(echo "$got") "$want" | head -3 | tr '\n' ' ')"; fi
    }
    same_as "hash --all --uuid: llama-gguf-hash's lines" "$H/stories260K-f32.all-uuid.txt" 0 \
        --all --uuid reference/stories260K-f32.gguf
    same_as "hash --all: a quantized model" "$H/wp-llama-5m-Q4_K_M.all.txt" 0 \
        --all reference/wp-llama-5m-Q4_K_M.gguf
    same_as "hash --sha256 --no-layer: the model's line" "$H/wp-llama-5m-Q4_K_M.sha256-model.txt" 0 \
        --sha256 --no-layer reference/wp-llama-5m-Q4_K_M.gguf
    cp "$H/wp-llama-5m-Q4_K_M.all.txt" "$TMP/hw/m.txt"
    same_as "hash -c: llama-gguf-hash's manifest, its strongest hash" "$H/wp-llama-5m-Q4_K_M.check.txt" 0 \
        -c m.txt reference/wp-llama-5m-Q4_K_M.gguf
    same_as "hash --xxh64 --hash-check: Ok lines, Success" "$H/wp-llama-5m-Q4_K_M.check-xxh64.txt" 0 \
        --xxh64 --hash-check m.txt reference/wp-llama-5m-Q4_K_M.gguf
    sed '1s/^\(xxh64 *\)[0-9a-f]/\10/' "$TMP/hw/m.txt" > "$TMP/hw/bad.txt"
    same_as "hash -c: one tensor's hash changed: Mismatch, exit 1" "$H/wp-llama-5m-Q4_K_M.check-bad.txt" 1 \
        --xxh64 -c bad.txt reference/wp-llama-5m-Q4_K_M.gguf
    same_as "hash -c: another model's manifest: Not Found, exit 3" "$H/stories260K-f32.check-other.txt" 3 \
        --sha1 -c m.txt reference/stories260K-f32.gguf
    # a UUID checks against the manifest's uuid line (llama-gguf-hash e21cdc11
    # compares it with the sha256 line and reports a mismatch)
    (cd "$TMP/hw" && "$INSPECT" --hash --uuid --sha256 reference/stories260K-f32.gguf > u.txt)
    out=$(cd "$TMP/hw" && "$INSPECT" --hash --uuid -c u.txt reference/stories260K-f32.gguf); rc=$?
    if [ $rc = 0 ] && grep -q '^uuid      4f5222ad-081f-54c4-83cc-f7ecccc3d7a5  reference/stories260K-f32.gguf  -  Ok$' <<<"$out"
    then pass "hash --uuid -c: the uuid line verifies"; else fail "hash --uuid -c: the uuid line verifies" "rc=$rc $out"; fi
    # a manifest that is not one: exit 1, the manifest named
    printf 'nothing here\n' > "$TMP/hw/none.txt"
    printf 'xxh64 \0 x\n' > "$TMP/hw/nul.txt"
    for c in "none.txt:no line of the manifest has a known hash type (xxh64, sha1, sha256, uuid)" \
             "nul.txt:not a hash manifest (it holds NUL bytes)" \
             "missing.txt:cannot open the manifest: No such file or directory"; do
        out=$(cd "$TMP/hw" && "$INSPECT" --hash -c "${c%%:*}" reference/stories260K-f32.gguf 2>&1 >/dev/null); rc=$?
        if [ $rc = 1 ] && [ "$out" = "gguf-inspect: error: ${c%%:*}: ${c#*:}" ]; then pass "hash -c ${c%%:*}: exit 1, says why"
        else fail "hash -c ${c%%:*}: exit 1, says why" "rc=$rc $out"; fi
    done
    fixture_block_end
fi
usage_says "--xxh64 with --json: text only" "--xxh64 prints llama-gguf-hash's lines: text only" --xxh64 --json x.gguf
usage_says "--sha1 with --vocab: refused" "--sha1 does not go with --vocab" --vocab --sha1 x.gguf

# A file that is not GGUF, handed to every tool that reads one: named for
# what it is (a Git LFS pointer: a clone without LFS), exit 1, the file named
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%064d\nsize 4683073248\n' 0 > "$TMP/lfs.gguf"
LFS_MSG="$TMP/lfs.gguf: not a GGUF file but a Git LFS pointer to a file of 4683073248 bytes: the repository was cloned without Git LFS (run 'git lfs pull' in it, or download the file itself)"
for cmd in "inspect" "quantize:$TMP/lfs-out.gguf Q4_0" "run:-p hi" "edit:--set a=1"; do
    tool=${cmd%%:*} args=; [ "$tool" = "$cmd" ] || args=${cmd#*:}
    if [ "$tool" = run ]; then out=$("$BIN/gguf-run" -m "$TMP/lfs.gguf" $args 2>&1 >/dev/null); rc=$?
    else out=$("$BIN/gguf-$tool" "$TMP/lfs.gguf" $args 2>&1 >/dev/null); rc=$?; fi
    if [ $rc = 1 ] && [ "$out" = "gguf-$tool: error: $LFS_MSG" ] && [ ! -e "$TMP/lfs-out.gguf" ]; then
        pass "gguf-$tool on a Git LFS pointer: says what it is"
    else fail "gguf-$tool on a Git LFS pointer: says what it is" "rc=$rc $out"; fi
done

# --imatrix-stats: llama-imatrix --show-statistics' tables line for line
# (tests/data/imatrix-stats, README there: e21cdc11's own binary dies of
# SIGFPE before printing them); a row whose reference "cosine" lies outside
# [-1, 1] (llama-imatrix read past a shorter tensor) without that column.
IMS=$ROOT/tests/data/imatrix-stats
n_ims=$(ls "$IMS"/*.txt | wc -l)
if need_fixture upstream/imatrix "imatrix statistics" "$n_ims"; then
    for want in "$IMS"/*.txt; do
        rel=$(sed -nE '1s/^Computing statistics for (.*) \([0-9]+ tensors\)$/\1/p' "$want")
        n="imatrix statistics: $rel"
        if [ ! -e "$FIX/$rel" ]; then skip "$n" "no $rel"; continue; fi
        if ! "$INSPECT" --imatrix-stats "$FIX/$rel" >"$TMP/ims.out" 2>"$TMP/ims.err"; then
            fail "$n" "exit $?: $(tail -1 "$TMP/ims.err")"; continue
        fi
        d=$(sed -n '/^Computing statistics for/,$p' "$TMP/ims.out" | sed "s|$FIX/||" | head -n "$(wc -l <"$want")" |
            paste -d '\n' "$want" - | awk -F '\t' '
                NR % 2 == 1 { w = $0; nw = NF; last = $NF + 0; split($0, wf, "\t"); next }
                { g = $0 }
                w == g { next }
                (last > 1 || last < -1) && nw == NF {
                    same = 1; for (i = 1; i < NF; i++) if (wf[i] != $i) same = 0
                    if (same) next
                }
                { print "want: " w " | got: " g; bad++ }
                END { exit bad > 0 }')
        [ -z "$d" ] && pass "$n: $(grep -c . "$want") lines as llama-imatrix" || fail "$n" "$(head -2 <<<"$d" | tr '\t' ' ')"
    done
    fixture_block_end
fi
if [ -e "$FIX/upstream/imatrix/qwen3moe-rand.imatrix.gguf" ]; then
    out=$("$INSPECT" --imatrix-stats "$FIX/upstream/imatrix/qwen3moe-rand.imatrix.gguf" | tail -1)
    [ "$out" = "coverage: 16 matrices, 16 with every expert reached, 0 partial, 0 without activations" ] &&
        pass "imatrix statistics: the coverage line" || fail "imatrix statistics: the coverage line" "got '$out'"
else
    skip "imatrix statistics: the coverage line" "no fixtures"
fi

# --check's llama.cpp line: e21cdc11's deepseek2 loader reads
# attention.q_lora_rank only for a file not "lite" (26 or 27 blocks, or 48
# with 128256 tokens), whatever the file says. tests/tools/mkhf's
# deepseek2lite (q_lora_rank null: one attn_q) and glm4moelite (attn_q_a /
# attn_q_b) converted at other block counts: the model rules pass them
# (gguf-run runs them), llama.cpp refuses them; with the key set to 0 by
# gguf-edit, llama.cpp loads the first (attn_q, as the key says).
MLA=(--dim 64 --heads 2 --head-dim 32 --ffn 64 --experts 4 --experts-used 2 --moe-ffn 16
     --kv-lora 32 --rope-dim 16 --vocab 512 --dtype bf16)
# mla NAME FAMILY LAYERS: $TMP/NAME.gguf converted from mkhf's checkpoint
mla() {
    rm -rf "${TMP:?}/$1" "$TMP/$1.gguf"
    "$BIN/tests/tools/mkhf" "$TMP/$1" --family "$2" --layers "$3" --q-lora 32 "${MLA[@]}" \
        --tokenizer "$FIX/models/deepseek2-rand/tokenizer.model" >"$TMP/mla.log" 2>&1 &&
        "$BIN/gguf-convert" -q "$TMP/$1" --outtype f16 -o "$TMP/$1.gguf" >>"$TMP/mla.log" 2>&1
    local rc=$?
    rm -rf "${TMP:?}/$1"
    return $rc
}
# check_ll NAME FILE EXIT LLAMA-LINE-REGEX: --check's exit, its model line ok
check_ll() {
    local out rc
    out=$("$INSPECT" --check "$2" 2>&1); rc=$?
    if [ $rc -eq "$3" ] && grep -q '^model: *ok$' <<<"$out" && grep -Eq "^llama.cpp: *$4" <<<"$out"; then
        pass "--check llama.cpp: $1"
    else
        fail "--check llama.cpp: $1" "exit $rc: $(grep -E '^(model|llama.cpp|problems)' <<<"$out" | tr '\n' ' ')"
    fi
}
if [ ! -x "$BIN/tests/tools/mkhf" ] || [ ! -x "$BIN/gguf-convert" ] || [ ! -x "$BIN/gguf-edit" ]; then
    skip_block "--check llama.cpp" "no mkhf, gguf-convert or gguf-edit" 5
elif need_fixture models/deepseek2-rand/tokenizer.model "--check llama.cpp" 5; then
    if mla ds26 deepseek2lite 26; then
        check_ll "deepseek2 without q_lora_rank at 26 blocks: loads" "$TMP/ds26.gguf" 0 "ok$"
    else fail "--check llama.cpp: deepseek2lite at 26 blocks" "$(tail -1 "$TMP/mla.log")"; fi
    if mla ds3 deepseek2lite 3; then
        check_ll "deepseek2 without q_lora_rank at 3 blocks: refused" "$TMP/ds3.gguf" 1 \
            "deepseek2.attention.q_lora_rank is missing: llama.cpp e21cdc11 loads a deepseek2 without it only at 26 or 27 blocks \(or 48 with 128256 tokens\), not at 3 blocks \(512 tokens\): it refuses this file$"
        if "$BIN/gguf-edit" -q "$TMP/ds3.gguf" -o "$TMP/ds3-q0.gguf" --set deepseek2.attention.q_lora_rank:u32=0 >"$TMP/mla.log" 2>&1; then
            check_ll "deepseek2 at 3 blocks with q_lora_rank 0 (gguf-edit): loads" "$TMP/ds3-q0.gguf" 0 "ok$"
        else fail "--check llama.cpp: gguf-edit --set q_lora_rank" "$(tail -1 "$TMP/mla.log")"; fi
    else fail "--check llama.cpp: deepseek2lite at 3 blocks" "$(tail -1 "$TMP/mla.log")"; fi
    if mla glm27 glm4moelite 27; then
        check_ll "deepseek2 with q_lora_rank at 27 blocks: refused" "$TMP/glm27.gguf" 1 \
            "deepseek2.attention.q_lora_rank = 32 at 27 blocks \(512 tokens\): llama.cpp e21cdc11 takes such a deepseek2 for a lite one, ignores the key and wants attn_q in place of attn_q_a / attn_q_b: it refuses this file$"
    else fail "--check llama.cpp: glm4moelite at 27 blocks" "$(tail -1 "$TMP/mla.log")"; fi
    if [ -e "$TMP/ds3.gguf" ] && need_jq "--check --json llama_cpp"; then
        got=$(js --check "$TMP/ds3.gguf" | jq -c '[.result, .n_problems, (.llama_cpp | startswith("deepseek2.attention.q_lora_rank is missing"))]')
        [ "$got" = '["FAILED",1,true]' ] && pass "--check --json: llama_cpp, one problem" || fail "--check --json: llama_cpp" "$got"
    else skip "--check --json: llama_cpp" "no jq or no file"; fi
    rm -f "$TMP/ds26.gguf" "$TMP/ds3.gguf" "$TMP/ds3-q0.gguf" "$TMP/glm27.gguf"
    fixture_block_end
fi
