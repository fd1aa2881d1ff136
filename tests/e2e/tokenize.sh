#!/usr/bin/env bash
# tests/e2e/tokenize.sh — gguf-inspect --tokenize end to end: ids and pieces
# on the fixture vocabularies, --special (BOS, special-token parsing),
# escaping of pieces, errors; the chain gguf-convert --vocab-only ->
# tokenizer on llama.cpp's llama-bpe and qwen2 test vectors (every entry),
# and on ids llama.cpp gave for the gpt-4o pre-tokenizer; Qwen 3.5 (qwen35)
# and Gemma 4 (gemma4) vocabularies against llama-tokenize's ids
# (tests/data/tok: the folders tests/tools/mktokjson makes, through
# gguf-convert, against llama.cpp's tokenizer keys and ids).
source "$(dirname "$0")/lib.sh"
export LC_ALL=C

CONVERT=$BIN/gguf-convert
V=$FIX/vocab

# tok_first FILE TEXT [--special]: the ids line.
tok_first() { "$INSPECT" "$1" --tokenize "$2" ${3:-} 2>/dev/null | head -1; }

# expect NAME GOT WANT
expect() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }

if need_fixture vocab/ggml-vocab-llama-spm.gguf "tokenize spm" 6; then
    expect "tokenize spm ids" "$(tok_first "$V/ggml-vocab-llama-spm.gguf" "Hello world")" "15043 3186"
    expect "tokenize spm --special adds BOS" \
        "$(tok_first "$V/ggml-vocab-llama-spm.gguf" "Hello world" --special)" "1 15043 3186"
    expect "tokenize spm --special parses </s>" \
        "$(tok_first "$V/ggml-vocab-llama-spm.gguf" "Hi</s>" --special)" "1 6324 2"
    out=$("$INSPECT" "$V/ggml-vocab-llama-spm.gguf" --tokenize "Hello world")
    expect "tokenize spm piece lines" "$(printf '%s\n' "$out" | sed -n 2,3p)" "$(printf '15043\t Hello\n3186\t world')"
    out=$("$INSPECT" "$V/ggml-vocab-llama-spm.gguf" --tokenize $'a\n\\\xff')
    expect "tokenize spm escaped pieces" "$(printf '%s\n' "$out" | cut -f2 | tail -3 | tr '\n' '|')" '\n|\\|\xff|'
    out=$("$INSPECT" "$V/ggml-vocab-llama-spm.gguf" --tokenize "")
    expect "tokenize empty text" "$out" ""
    fixture_block_end
fi

if need_fixture vocab/ggml-vocab-gpt-2.gguf "tokenize bpe" 2; then
    expect "tokenize gpt-2 ids" "$(tok_first "$V/ggml-vocab-gpt-2.gguf" "Hello world")" "15496 995"
    out=$("$INSPECT" "$V/ggml-vocab-gpt-2.gguf" --tokenize " world")
    expect "tokenize gpt-2 piece" "$(printf '%s\n' "$out" | sed -n 2p)" "$(printf '995\t world')"
    fixture_block_end
fi

# --- errors ----------------------------------------------------------------
# A valid GGUF without a vocabulary: header, 0 tensors, 1 kv (general.name).
novocab=$TMP/novocab.gguf
{ printf 'GGUF\x03\x00\x00\x00'; printf '\x00\x00\x00\x00\x00\x00\x00\x00'; printf '\x01\x00\x00\x00\x00\x00\x00\x00'
  printf '\x0c\x00\x00\x00\x00\x00\x00\x00general.name'; printf '\x08\x00\x00\x00'
  printf '\x01\x00\x00\x00\x00\x00\x00\x00x'; } > "$novocab"
out=$("$INSPECT" "$novocab" --tokenize hi 2>"$TMP/err"); rc=$?
expect "tokenize no vocabulary: exit 1" "$rc" 1
expect "tokenize no vocabulary: message" "$(cat "$TMP/err")" \
    "gguf-inspect: error: $novocab: no vocabulary: missing key tokenizer.ggml.model"
expect "tokenize no vocabulary: no output" "$out" ""
printf 'GGUF\x03' > "$TMP/trunc.gguf"
"$INSPECT" "$TMP/trunc.gguf" --tokenize hi >/dev/null 2>"$TMP/err"; rc=$?
if [ "$rc" = 1 ] && grep -q "^gguf-inspect: error: $TMP/trunc.gguf: " "$TMP/err"; then
    pass "tokenize bad file"; else fail "tokenize bad file" "exit $rc: $(cat "$TMP/err")"; fi
"$INSPECT" "$novocab" --tokenize >/dev/null 2>&1; expect "tokenize without text: usage" "$?" 2
"$INSPECT" "$novocab" --special >/dev/null 2>&1; expect "--special without --tokenize: usage" "$?" 2
"$INSPECT" "$novocab" --vocab --tokenize x >/dev/null 2>&1; expect "--tokenize with --vocab: usage" "$?" 2

# --- gguf-convert --vocab-only, then every llama.cpp vector -------------------
# check_vectors NAME GGUF: every entry of vocab/NAME.inp gives its .out line.
check_vectors() {
    local name=$1 gguf=$2 dir=$TMP/vec-$1 i=0 bad=0 n
    mkdir -p "$dir"
    # split the .inp on "\n__ggml_vocab_test__\n" into one file per entry
    python3 - "$V/$name.inp" "$dir" <<'PY' || return 1
import sys
data = open(sys.argv[1], 'rb').read()
parts = data.split(b"\n__ggml_vocab_test__\n")
if parts and parts[-1] == b"":
    parts.pop()
for i, p in enumerate(parts):
    open("%s/%04d" % (sys.argv[2], i), 'wb').write(p)
PY
    n=$(ls "$dir" | wc -l)
    while IFS= read -r want; do
        f=$(printf '%s/%04d' "$dir" "$i")
        text=$(cat "$f"; printf x) # keep trailing newlines
        got=$("$INSPECT" "$gguf" --tokenize "${text%x}" 2>&1 | head -1)
        want=$(printf '%s' "$want" | sed 's/^ *//; s/ *$//')
        [ "$got" = "$want" ] || { bad=$((bad + 1)); [ $bad -le 3 ] && echo "  $name entry $i: got '$got', want '$want'"; }
        i=$((i + 1))
    done < "$V/$name.out"
    [ "$i" = "$n" ] && [ "$bad" = 0 ]
}

for pair in llama3:ggml-vocab-llama-bpe.gguf qwen3:ggml-vocab-qwen2.gguf; do
    src=${pair%%:*} name=${pair#*:}
    need_fixture "tokenizers/$src" "tokenize $name vectors" || continue
    need_fixture "vocab/$name.inp" "tokenize $name vectors" || continue
    if ! command -v python3 >/dev/null; then skip "tokenize $name vectors" "python3 not installed"; continue; fi
    if [ ! -x "$CONVERT" ]; then skip "tokenize $name vectors" "gguf-convert not built"; continue; fi
    out=$TMP/$src-vocab.gguf
    if ! "$CONVERT" "$FIX/tokenizers/$src" --vocab-only -o "$out" >/dev/null 2>"$TMP/err"; then
        fail "tokenize $name vectors" "gguf-convert: $(head -1 "$TMP/err")"; continue
    fi
    if check_vectors "$name" "$out"; then pass "tokenize $name vectors"; else fail "tokenize $name vectors"; fi
done

# --- the gpt-4o (o200k) pre-tokenizer: qwen3's vocabulary with the
# pre_tokenizer of gpt-oss's tokenizer.json (Split Isolated, ByteLevel without
# its regex), converted in $TMP. The ids are llama.cpp e21cdc11's
# (llama_tokenize, no special tokens) for the same GGUF.
GPT4O_CASES=(
    # the first three split otherwise under qwen2's regex, and give other ids
    "getElementById XMLHttpRequest don't" "455 1691 1359 764 11874 2905 1900 1513 944"
    "iPhone McDonald JavaScript"          "72 6939 4483 18234 7943 5910"
    $'path/to/\n/file x/\n/y\r\n'         "2343 32429 5894 14 1192 856 5894 14 88 319"
    "ÉCOLE école aÉ"                      "26789 8281 867 3958 55645 264 26789"
    "Ελληνικά ΤΕΚΣΤ Привет 中文字符"      "144674 33486 33486 41424 33269 29762 67337 74134 7851 97 144674 144996 144624 145032 79484 26991 8178 72858 16744 48391"
    $'e\xcc\x81 Cafe\xcc\x81S \xc7\x85emal \xf0\x9f\x98\x80 1234567\t\n\n  x'
    "68 53839 42773 53839 50 220 131 227 336 278 90316 220 16 17 18 19 20 21 22 15799 220 856"
)
if need_fixture tokenizers/qwen3/tokenizer.json "tokenize gpt-4o" 7; then
    if ! command -v python3 >/dev/null || [ ! -x "$CONVERT" ]; then
        for i in 1 2 3 4 5 6 7; do skip "tokenize gpt-4o $i" "python3 or gguf-convert missing"; done
    else
        mkdir -p "$TMP/gpt4o"
        cp "$FIX/tokenizers/qwen3/tokenizer_config.json" "$TMP/gpt4o/"
        python3 - "$FIX/tokenizers/qwen3/tokenizer.json" "$TMP/gpt4o/tokenizer.json" <<'PY'
import json, sys
tj = json.load(open(sys.argv[1], encoding='utf-8'))
rx = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
      r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
      r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
tj['pre_tokenizer'] = {'type': 'Sequence', 'pretokenizers': [
    {'type': 'Split', 'pattern': {'Regex': rx}, 'behavior': 'Isolated', 'invert': False},
    {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': False}]}
json.dump(tj, open(sys.argv[2], 'w', encoding='utf-8'), ensure_ascii=False)
PY
        "$CONVERT" "$TMP/gpt4o" --vocab-only -o "$TMP/gpt4o.gguf" >/dev/null 2>"$TMP/err"
        expect "tokenize gpt-4o: gguf-convert names the pre-tokenizer" \
            "$("$INSPECT" "$TMP/gpt4o.gguf" 2>&1 | awk '$1 == "tokenizer.ggml.pre" { print $3 }')" '"gpt-4o"'
        for ((i = 0; i < ${#GPT4O_CASES[@]}; i += 2)); do
            expect "tokenize gpt-4o: ids of case $((i / 2 + 1))" \
                "$(tok_first "$TMP/gpt4o.gguf" "${GPT4O_CASES[i]}")" "${GPT4O_CASES[i + 1]}"
        done
    fi
    fixture_block_end
fi

# --- Qwen 3.5, Gemma 4 and GLM-4.5 (tests/data/tok) --------------------------
# tests/tools/mktokjson's folders (--model-folder: with a small model's
# config.json and a tensorless model.safetensors) through gguf-convert
# --vocab-only: every tokenizer.* key as llama.cpp e21cdc11's converter
# wrote it for the same folders (NAME-vocab.json: its manifest's tokenizer
# keys, values or count + sha256), and llama-tokenize's ids (NAME.out,
# NAME.special.out) for every entry of vectors.inp (see
# tests/data/tok/README.md). No python: the entries are split in bash.
D=$ROOT/tests/data/tok
MKTOK=$BIN/tests/tools/mktokjson
# tok_keys GGUF / json_keys MANIFEST: the tokenizer.* keys (lib.sh's
# gguf_meta/manifest_meta lines)
tok_keys() { gguf_meta "$1" '.key | startswith("tokenizer.")'; }
json_keys() { manifest_meta "$1"; }
# tok_vectors GGUF OUT [--special]: every entry of vectors.inp gives its OUT line.
tok_vectors() {
    local gguf=$1 out=$2 flag=${3:-} sep=$'\n__ggml_vocab_test__\n' data entry want got i=0 bad=0
    data=$(cat "$D/vectors.inp"; printf x); data=${data%x}
    exec 3<"$out"
    while [ -n "$data" ]; do
        entry=${data%%"$sep"*}
        data=${data#*"$sep"}
        IFS= read -r want <&3 || { echo "  $out: fewer lines than entries"; bad=$((bad + 1)); break; }
        got=$("$INSPECT" "$gguf" --tokenize "$entry" $flag 2>&1 | head -1)
        [ "$got" = "$want" ] || { bad=$((bad + 1)); [ $bad -le 3 ] && echo "  $out entry $i: got '$got', want '$want'"; }
        i=$((i + 1))
    done
    IFS= read -r want <&3 && { echo "  $out: more lines than entries"; bad=$((bad + 1)); }
    exec 3<&-
    echo "  $out: $((i - bad))/$i entries match"
    [ "$bad" = 0 ] && [ "$i" -ge 120 ]
}
for name in qwen35 gemma4 glm4; do
    if [ ! -x "$MKTOK" ] || [ ! -x "$CONVERT" ]; then
        skip_block "tokenize $name" "mktokjson or gguf-convert not built" 4; continue
    fi
    mkdir -p "$TMP/$name-mf"
    "$MKTOK" "$name" "$TMP/$name-mf" --model-folder
    g=$TMP/$name-vocab.gguf
    if ! "$CONVERT" "$TMP/$name-mf" --vocab-only -o "$g" >/dev/null 2>"$TMP/err"; then
        fail "tokenize $name: gguf-convert --vocab-only" "$(head -1 "$TMP/err")"
        skip_block "tokenize $name" "not converted" 3; continue
    fi
    if ! command -v jq >/dev/null; then skip "tokenize $name: llama.cpp's tokenizer keys" "jq not installed"
    else
        got=$(diff <(json_keys "$D/$name-vocab.json") <(tok_keys "$g") | head -4 | tr '\n' ' ')
        n=$(json_keys "$D/$name-vocab.json" | wc -l)
        if [ -z "$got" ] && [ "$n" -ge 9 ]; then pass "tokenize $name: llama.cpp's $n tokenizer keys"
        else fail "tokenize $name: llama.cpp's tokenizer keys" "$got"; fi
    fi
    if tok_vectors "$g" "$D/$name.out"; then pass "tokenize $name vectors"; else fail "tokenize $name vectors"; fi
    if tok_vectors "$g" "$D/$name.special.out" --special; then
        pass "tokenize $name vectors --special"; else fail "tokenize $name vectors --special"; fi
    if [ "$name" = gemma4 ]; then # a Gemma 4 piece: U+2581 is a space again
        out=$("$INSPECT" "$g" --tokenize " fox")
        expect "tokenize gemma4 piece" "$(printf '%s\n' "$out" | sed -n 2p | cut -f2)" " fox"
    elif [ "$name" = qwen35 ]; then # the tokenizer files alone (converted as llama): what config.json
         # adds (bos_token_id) missing, add_space_prefix added; the same ids
        mkdir -p "$TMP/q35tok"
        "$MKTOK" qwen35 "$TMP/q35tok"
        if "$CONVERT" "$TMP/q35tok" --vocab-only -o "$TMP/q35tok.gguf" >/dev/null 2>"$TMP/err" &&
            tok_vectors "$TMP/q35tok.gguf" "$D/qwen35.out" &&
            { ! command -v jq >/dev/null ||
              [ "$(diff <(json_keys "$D/qwen35-vocab.json") <(tok_keys "$TMP/q35tok.gguf") |
                   awk '/^[<>]/ { print $1, $2 }' | tr '\n' ';')" = \
                "< tokenizer.ggml.bos_token_id;> tokenizer.ggml.add_space_prefix;" ]; }; then
            pass "tokenize qwen35 tokenizer-only folder"
        else fail "tokenize qwen35 tokenizer-only folder" "$(head -1 "$TMP/err")"; fi
    fi
done

# GLM: _set_vocab_glm needs [gMASK], <|user|>, <|endoftext|> and
# <|observation|> among the added tokens; without one the conversion stops
# with the file and the token named
if [ -x "$MKTOK" ] && [ -x "$CONVERT" ]; then
    mkdir -p "$TMP/glm4-bad"
    "$MKTOK" glm4 "$TMP/glm4-bad" --model-folder
    sed -i 's/"\[gMASK\]"/"[gMASK2]"/' "$TMP/glm4-bad/tokenizer.json"
    "$CONVERT" "$TMP/glm4-bad" --vocab-only -o "$TMP/glm4-bad.gguf" >/dev/null 2>"$TMP/err"; rc=$?
    if [ "$rc" = 1 ] && grep -q 'tokenizer.json: no added token "\[gMASK\]"' "$TMP/err"; then
        pass "tokenize glm4 without [gMASK]: refused"
    else fail "tokenize glm4 without [gMASK]: refused" "exit $rc: $(head -1 "$TMP/err")"; fi
else
    skip "tokenize glm4 without [gMASK]: refused" "mktokjson or gguf-convert not built"
fi

# DeepSeek-V3/R1 ("deepseek-v3") and deepseek-llm / DeepSeek-V2 ("deepseek-llm"):
# mktokjson's tokenizer files with the released pre_tokenizer sections, in a
# folder with deepseek2-rand's config.json (vocab_size 686) and weights:
# gguf-convert must name the pre-tokenizer from the Splits alone and write
# every tokenizer key as e21cdc11's DeepseekV2Model.set_vocab did; the ids
# are llama-tokenize's (tests/data/tok/README.md)
for name in deepseek-v3 deepseek-llm; do
    need_fixture models/deepseek2-rand/config.json "tokenize $name" 3 || continue
    if [ ! -x "$MKTOK" ] || [ ! -x "$CONVERT" ] || ! command -v jq >/dev/null; then
        skip_block "tokenize $name" "mktokjson, gguf-convert or jq missing" 3
        fixture_block_end; continue
    fi
    mkdir -p "$TMP/$name"
    "$MKTOK" "$name" "$TMP/$name"
    sed 's/"vocab_size": 512,/"vocab_size": 686,/' "$FIX/models/deepseek2-rand/config.json" > "$TMP/$name/config.json"
    ln -sf "$FIX/models/deepseek2-rand/model.safetensors" "$TMP/$name/"
    g=$TMP/$name-vocab.gguf
    if "$CONVERT" "$TMP/$name" --vocab-only -o "$g" >/dev/null 2>"$TMP/err"; then
        got=$(diff <(json_keys "$D/$name-vocab.json") <(tok_keys "$g") | head -4 | tr '\n' ' ')
        expect "tokenize $name: llama.cpp's tokenizer keys" "$got" ""
        if tok_vectors "$g" "$D/$name.out"; then pass "tokenize $name vectors"; else fail "tokenize $name vectors"; fi
        if tok_vectors "$g" "$D/$name.special.out" --special; then
            pass "tokenize $name vectors --special"; else fail "tokenize $name vectors --special"; fi
    else
        fail "tokenize $name: llama.cpp's tokenizer keys" "$(head -1 "$TMP/err")"
        skip_block "tokenize $name" "not converted" 2
    fi
    fixture_block_end
done

# Kimi K2 / K2.5 (deepseek2 with tiktoken.model): mktokjson kimi's
# tiktoken.model and tokenizer_config.json in a folder with deepseek2-rand's
# config.json (vocab_size 932 = 676 ranks + 256, bos/eos the first two ids past
# the ranks, as Kimi's): every tokenizer key as e21cdc11's DeepseekV2Model.set_vocab
# ("kimi-k2": merges rebuilt by QwenModel.bpe) wrote it, llama-tokenize's ids
# on it (Kimi's own split: Han runs apart); a tiktoken.model
# line that is not "BASE64 RANK" is refused with its line number
if need_fixture models/deepseek2-rand/config.json "tokenize kimi-k2" 4; then
    if [ ! -x "$MKTOK" ] || [ ! -x "$CONVERT" ] || ! command -v jq >/dev/null; then
        skip_block "tokenize kimi-k2" "mktokjson, gguf-convert or jq missing" 4
    else
        mkdir -p "$TMP/kimi"
        "$MKTOK" kimi "$TMP/kimi"
        sed 's/"vocab_size": 512,/"vocab_size": 932,/; s/"bos_token_id": 1,/"bos_token_id": 676,/; s/"eos_token_id": 2,/"eos_token_id": 677,/' \
            "$FIX/models/deepseek2-rand/config.json" > "$TMP/kimi/config.json"
        ln -sf "$FIX/models/deepseek2-rand/model.safetensors" "$TMP/kimi/"
        if "$CONVERT" "$TMP/kimi" --vocab-only -o "$TMP/kimi.gguf" >/dev/null 2>"$TMP/err"; then
            got=$(diff <(json_keys "$D/kimi-k2-vocab.json") <(tok_keys "$TMP/kimi.gguf") | head -4 | tr '\n' ' ')
            expect "tokenize kimi-k2: llama.cpp's tokenizer keys" "$got" ""
            if tok_vectors "$TMP/kimi.gguf" "$D/kimi-k2.out"; then
                pass "tokenize kimi-k2 vectors"; else fail "tokenize kimi-k2 vectors"; fi
            if tok_vectors "$TMP/kimi.gguf" "$D/kimi-k2.special.out" --special; then
                pass "tokenize kimi-k2 vectors --special"; else fail "tokenize kimi-k2 vectors --special"; fi
        else
            fail "tokenize kimi-k2: llama.cpp's tokenizer keys" "$(head -1 "$TMP/err")"
            skip_block "tokenize kimi-k2" "not converted" 2
        fi
        printf 'IQ== 0\nnot-base64! 1\n' > "$TMP/kimi/tiktoken.model"
        "$CONVERT" "$TMP/kimi" --vocab-only -o "$TMP/kimi-bad.gguf" >/dev/null 2>"$TMP/err"; rc=$?
        if [ "$rc" = 1 ] && grep -q "tiktoken.model line 2: the token 'not-base64!' is not base64" "$TMP/err"; then
            pass "tokenize kimi-k2: a bad tiktoken.model line is refused"
        else fail "tokenize kimi-k2: a bad tiktoken.model line is refused" "exit $rc: $(head -1 "$TMP/err")"; fi
    fi
    fixture_block_end
fi

# The same folders with the fixture models' config.json (vocab_size set to the
# tokenizer's, as for the references) and weights: a real qwen35 / gemma4 conversion,
# every tokenizer key as llama.cpp wrote it. Needs the architecture in this
# build's registry.
for pair in qwen35:702 gemma4:851; do
    name=${pair%%:*} nv=${pair#*:}
    need_fixture "models/$name-rand/config.json" "tokenize $name folder through gguf-convert" 2 || continue
    if ! "$INSPECT" --arches 2>/dev/null | awk '{ print $1 }' | grep -qx "$name"; then
        skip_block "tokenize $name folder through gguf-convert" "architecture $name not in this build" 2
        fixture_block_end; continue
    fi
    if [ ! -x "$MKTOK" ] || [ ! -x "$CONVERT" ] || ! command -v jq >/dev/null; then
        skip_block "tokenize $name folder through gguf-convert" "mktokjson, gguf-convert or jq missing" 2
        fixture_block_end; continue
    fi
    mkdir -p "$TMP/$name-folder"
    "$MKTOK" "$name" "$TMP/$name-folder"
    sed "s/\"vocab_size\": 512,/\"vocab_size\": $nv,/" "$FIX/models/$name-rand/config.json" > "$TMP/$name-folder/config.json"
    ln -sf "$FIX/models/$name-rand/model.safetensors" "$TMP/$name-folder/" # a model folder needs its weights
    if "$CONVERT" "$TMP/$name-folder" --vocab-only -o "$TMP/$name-folder.gguf" >/dev/null 2>"$TMP/err"; then
        got=$(diff <(json_keys "$D/$name-vocab.json") <(tok_keys "$TMP/$name-folder.gguf") | head -4 | tr '\n' ' ')
        expect "tokenize $name folder through gguf-convert: tokenizer keys" "$got" ""
        if tok_vectors "$TMP/$name-folder.gguf" "$D/$name.special.out" --special; then
            pass "tokenize $name folder through gguf-convert: vectors"; else fail "tokenize $name folder through gguf-convert: vectors"; fi
    else
        fail "tokenize $name folder through gguf-convert: tokenizer keys" "$(head -1 "$TMP/err")"
        fail "tokenize $name folder through gguf-convert: vectors" "not converted"
    fi
    fixture_block_end
done

# --- llama.cpp's greedy-decode prompts: the prompt ids it fed each model ------
# (BOS added, as --special does). wp-llama-5m-* share one vocabulary, llama2xs
# uses stories260K's; qwen2-rand and llama3rope-rand are converted first.
if need_fixture reference/greedy "tokenize greedy prompts" 1; then
    if ! command -v python3 >/dev/null; then
        skip "tokenize greedy prompts" "python3 not installed"
    else
        for m in qwen2-rand llama3rope-rand; do
            [ -x "$CONVERT" ] && [ -d "$FIX/models/$m" ] &&
                "$CONVERT" "$FIX/models/$m" --vocab-only -o "$TMP/$m.gguf" >/dev/null 2>&1
        done
        if out=$(python3 - "$FIX" "$INSPECT" "$TMP" <<'PY' 2>&1
import json, glob, os, subprocess, sys
fix, inspect, tmp = sys.argv[1:4]
def vocab_for(model):
    name = model[:-5]
    if name.startswith('wp-llama-5m-'): return fix + '/reference/wp-llama-5m-f16.gguf'
    if name.startswith('llama2xs'): return fix + '/reference/stories260K-f32.gguf'
    for p in [fix + '/reference/' + model] + glob.glob(fix + '/models/*/' + model):
        if os.path.exists(p): return p
    for folder in ('qwen2-rand', 'llama3rope-rand'):
        if name.startswith(folder) and os.path.exists(tmp + '/' + folder + '.gguf'):
            return tmp + '/' + folder + '.gguf'
    return None
ok = bad = 0
for f in sorted(glob.glob(fix + '/reference/greedy/*.json')):
    d = json.load(open(f))
    v = vocab_for(d['model'])
    if not v:
        print('no vocabulary for', d['model']); bad += 1; continue
    out = subprocess.run([inspect, v, '--tokenize', d['prompt'], '--special'], capture_output=True).stdout
    ids = [int(x) for x in out.split(b'\n')[0].split()]
    if ids != d['prompt_ids']:
        bad += 1; print(os.path.basename(f), ids, d['prompt_ids'])
    else:
        ok += 1
print('%d prompts match' % ok)
sys.exit(1 if bad or not ok else 0)
PY
        ); then pass "tokenize greedy prompts ($(tail -1 <<<"$out"))"; else fail "tokenize greedy prompts" "$(head -3 <<<"$out" | tr '\n' ' ')"; fi
    fi
    fixture_block_end
fi
