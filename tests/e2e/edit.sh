#!/usr/bin/env bash
# tests/e2e/edit.sh — gguf-edit: metadata edits change exactly the keys asked
# for, tensors are copied byte for byte, the input is replaced atomically or
# left untouched, and bad input is refused cleanly.
source "$(dirname "$0")/lib.sh"
EDIT=$BIN/gguf-edit
RUN=$BIN/gguf-run
need_jq() { command -v jq >/dev/null && return 0; skip "$1" "jq not installed"; return 1; }

# "sha256 name" of every tensor and of the data section
hashes() { "$INSPECT" --hash --json "$1" | jq -c '[.tensors, .data_sha256]'; }
# the metadata changes gguf-inspect diff reports, one "change key" per line
changes() { "$INSPECT" diff --json "$1" "$2" | jq -r '.metadata[] | select(.change != "same") | "\(.change) \(.key)"' | sort; }

SAMPLE=$BIN/sample.gguf
printf '{%% for m in messages %%}{{ m.content }}{%% endfor %%}' >"$TMP/tmpl.jinja"
printf 'alpha\nbeta gamma\n\ndelta\n' >"$TMP/strings.txt"

# Every fixture GGUF and the sample: set, delete, rename, chat template.
files=("$SAMPLE")
for f in "$FIX"/reference/*.gguf; do [ -f "$f" ] && files+=("$f"); done
if need_jq "edit every GGUF"; then
    for f in "${files[@]}"; do
        name=$(basename "$f")
        out=$TMP/edited-$name
        args=(--set general.name=edited --set test.added:u16=7 --set test.gone=1 --chat-template "$TMP/tmpl.jinja")
        # then, in place: a rename and a glob delete of keys the first edit added
        args2=(--rename test.added=test.renamed --delete 'test.go*')
        want="added test.renamed"$'\n'"changed general.name"
        "$INSPECT" --json "$f" | jq -e '.metadata["general.name"]' >/dev/null || want="added general.name"$'\n'"added test.renamed"
        "$INSPECT" --json "$f" | jq -e '.metadata["tokenizer.chat_template"]' >/dev/null &&
            want+=$'\n'"changed tokenizer.chat_template" || want+=$'\n'"added tokenizer.chat_template"
        if "$EDIT" -q "$f" -o "$out" "${args[@]}" 2>"$TMP/err" && "$EDIT" -q "$out" "${args2[@]}" 2>>"$TMP/err"; then
            got=$(changes "$f" "$out")
            if [ "$got" = "$(sort <<<"$want")" ] && [ "$(hashes "$f")" = "$(hashes "$out")" ]; then
                pass "edit $name: exactly the keys asked for change, every tensor byte for byte"
            else
                fail "edit $name" "changes: $(tr '\n' ';' <<<"$got") want: $(sort <<<"$want" | tr '\n' ';')"
            fi
        else
            fail "edit $name" "$(cat "$TMP/err")"
        fi
        rm -f "$out"
    done
fi

# The edited model runs and gives the same greedy ids.
if need_fixture reference/wp-llama-5m-f16.gguf "edited model: same greedy ids" 1; then
    f=$FIX/reference/wp-llama-5m-f16.gguf
    "$EDIT" -q "$f" -o "$TMP/e.gguf" --set general.name=renamed --delete 'general.source.*' --chat-template "$TMP/tmpl.jinja"
    a=$("$RUN" -m "$f" -p "The prince" -n 12 --ids 2>/dev/null)
    b=$("$RUN" -m "$TMP/e.gguf" -p "The prince" -n 12 --ids 2>/dev/null)
    [ -n "$a" ] && [ "$a" = "$b" ] && pass "edited wp-llama-5m-f16: same greedy ids in gguf-run" ||
        fail "edited wp-llama-5m-f16: same greedy ids in gguf-run" "$a / $b"
    fixture_block_end
fi

# In place: replaced atomically (a new inode), tensors unchanged.
cp "$SAMPLE" "$TMP/inplace.gguf"
before=$(stat -c %i "$TMP/inplace.gguf")
if "$EDIT" -q "$TMP/inplace.gguf" --set general.name=inplace --set-strings test.list=@"$TMP/strings.txt" &&
   [ "$(stat -c %i "$TMP/inplace.gguf")" != "$before" ] &&
   [ "$(hashes "$SAMPLE")" = "$(hashes "$TMP/inplace.gguf")" ] &&
   [ "$("$INSPECT" --json "$TMP/inplace.gguf" | jq -c '.metadata["test.list"] | [.type, .count, .value]')" = '["arr[str]",4,["alpha","beta gamma","","delta"]]' ]; then
    pass "in place: replaced by rename, tensors identical, --set-strings one string per line"
else
    fail "in place: replaced by rename, tensors identical, --set-strings one string per line"
fi
check "no temporary file left beside it" test -z "$(ls -A "$TMP" | grep '^\.inplace')"

# --dry-run prints the changes and writes nothing.
sum=$(sha256sum <"$TMP/inplace.gguf")
out=$("$EDIT" "$TMP/inplace.gguf" --dry-run --set general.name=x --delete 'test.*' --set new.key=2.5)
if [ "$(sha256sum <"$TMP/inplace.gguf")" = "$sum" ] && grep -qx '~ general.name = str "x"' <<<"$out" &&
   grep -qx -- '- test.list' <<<"$out" && grep -qx '+ new.key = f32 2.5' <<<"$out" &&
   grep -qx '3 changes, nothing written (--dry-run)' <<<"$out"; then
    pass "--dry-run: the key diff, nothing written"
else
    fail "--dry-run: the key diff, nothing written" "$out"
fi

# Types: inferred from the existing key, else from the value; explicit ones range-checked.
"$EDIT" -q "$TMP/inplace.gguf" -o "$TMP/t.gguf" --set llama.context_length=4096 --set a.b=true --set a.c=-5 \
    --set a.d=1.5 --set a.e=hello --set a.f:u64=1099511627776 --set-array a.g:i8=-128,127
got=$("$INSPECT" --json "$TMP/t.gguf" | jq -c '[.metadata["llama.context_length"].type, .metadata["a.b"].type,
      .metadata["a.c"].type, .metadata["a.d"].type, .metadata["a.e"].type, .metadata["a.f"].value, .metadata["a.g"].value]')
[ "$got" = '["u32","bool","i32","f32","str",1099511627776,[-128,127]]' ] &&
    pass "--set types: the existing key's, else bool/i32/f32/str; explicit types exact" ||
    fail "--set types" "$got"

# Protection: shape keys need --force, and a result that breaks the model is refused.
sum=$(sha256sum <"$SAMPLE")
out=$("$EDIT" "$SAMPLE" -o "$TMP/p.gguf" --set llama.block_count=3 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"llama.block_count decides what the tensors are: changing it needs --force"* ]] && [ ! -e "$TMP/p.gguf" ] &&
    pass "a shape key needs --force" || fail "a shape key needs --force" "$rc: $out"
out=$("$EDIT" "$SAMPLE" -o "$TMP/p.gguf" --force --set llama.block_count=3 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"the edit would break the model: missing tensor blk.2.attn_norm.weight; nothing written"* ]] && [ ! -e "$TMP/p.gguf" ] &&
    pass "--force, but a result the model rules refuse is not written" || fail "--force, but a broken result" "$rc: $out"
out=$("$EDIT" "$SAMPLE" -o "$TMP/p.gguf" --delete 'general.arch*' 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"general.architecture decides"* ]] && pass "a glob reaching general.architecture needs --force" ||
    fail "a glob reaching general.architecture needs --force" "$rc: $out"
check "the input is untouched by refused edits" test "$(sha256sum <"$SAMPLE")" = "$sum"

# Bad command lines and inputs.
usage_error "$EDIT" "no action" "no action" "$SAMPLE"
usage_error "$EDIT" "u8 out of range" "--set: \"300\" is not a u8" "$SAMPLE" --set a:u8=300
usage_error "$EDIT" "bool array" "--set-array: \"x\" is not a bool" "$SAMPLE" --set-array a:bool=1,x
usage_error "$EDIT" "unknown type" "unknown type 'u128'" "$SAMPLE" --set a:u128=1
usage_error "$EDIT" "not KEY=VALUE" "is not KEY=VALUE" "$SAMPLE" --set novalue
usage_error "$EDIT" "rename without =" "is not OLD=NEW" "$SAMPLE" --rename a
out=$("$EDIT" "$TMP/missing.gguf" --set a=1 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == "gguf-edit: error: $TMP/missing.gguf: cannot open"* ]] && pass "a missing file: exit 1, named" ||
    fail "a missing file: exit 1, named" "$rc: $out"
out=$("$EDIT" "$SAMPLE" -o /dev/null --set a=1 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"/dev/null"*"refusing"* ]] && pass "a device as output is refused" || fail "a device as output is refused" "$rc: $out"
out=$("$EDIT" "$SAMPLE" -o "$SAMPLE" --set a=1 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$(sha256sum <"$SAMPLE")" = "$sum" ] && pass "-o naming the input is refused (in place is without -o)" ||
    fail "-o naming the input is refused" "$rc: $out"
"$EDIT" -q "$TMP/inplace.gguf" --set x.one=1 --set x.two=2
sum2=$(sha256sum <"$TMP/inplace.gguf")
out=$("$EDIT" "$TMP/inplace.gguf" --rename x.one=x.two 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"two keys would be named x.two"* ]] && [ "$(sha256sum <"$TMP/inplace.gguf")" = "$sum2" ] &&
    pass "a rename onto an existing key is refused, the file untouched" ||
    fail "a rename onto an existing key is refused" "$rc: $out"
"$INSPECT" --check "$TMP/inplace.gguf" >/dev/null && pass "the file stays valid" || fail "the file stays valid"
printf 'a\0b' >"$TMP/nul.txt"
out=$("$EDIT" "$TMP/inplace.gguf" --chat-template "$TMP/nul.txt" 2>&1); rc=$?
[ $rc -eq 2 ] && [[ $out == *"contains a NUL byte"* ]] && pass "a template with a NUL byte is refused" ||
    fail "a template with a NUL byte is refused" "$rc: $out"
# --chat-template from a model folder or a JSON file: every template as
# gguf-convert reads them (tokenizer_config.json, chat_template.jinja with
# additional_chat_templates/, chat_template.json), the file's replaced;
# gguf-inspect's summary names them
if command -v jq >/dev/null; then
    CTD=$TMP/ctd
    mkdir -p "$CTD/additional_chat_templates"
    printf '{"bos_token": "<s>"}' > "$CTD/tokenizer_config.json"
    printf 'main\r\n' > "$CTD/chat_template.jinja"
    printf 'T' > "$CTD/additional_chat_templates/tool_use.jinja"
    cp "$SAMPLE" "$TMP/ct.gguf"
    ct_keys() { "$INSPECT" --json --full "$1" | jq -j '.metadata | to_entries[] | select(.key | startswith("tokenizer.chat_template")) | "\(.key)=\(.value.value | if type == "array" then join(",") else . end);"'; }
    "$EDIT" -q "$TMP/ct.gguf" --chat-template "$CTD" 2>"$TMP/err"
    got=$(ct_keys "$TMP/ct.gguf")
    [ "$got" = $'tokenizer.chat_template.tool_use=T;tokenizer.chat_templates=tool_use;tokenizer.chat_template=main\n;' ] &&
        pass "--chat-template FOLDER: the default and the named templates" ||
        fail "--chat-template FOLDER: the default and the named templates" "$got $(cat "$TMP/err")"
    got=$("$INSPECT" --no-metadata --no-tensors "$TMP/ct.gguf" | grep '^chat templates:')
    [ "$got" = "chat templates:  default, tool_use" ] && pass "gguf-inspect names the chat templates" ||
        fail "gguf-inspect names the chat templates" "$got"
    printf '{"chat_template": [{"name": "rag", "template": "R"}]}' > "$CTD/chat_template.json"
    "$EDIT" -q "$TMP/ct.gguf" --chat-template "$CTD/chat_template.json" 2>"$TMP/err"
    got=$(ct_keys "$TMP/ct.gguf")
    [ "$got" = "tokenizer.chat_templates=rag;tokenizer.chat_template.rag=R;" ] &&
        pass "--chat-template FILE.json: the file's templates replaced" ||
        fail "--chat-template FILE.json: the file's templates replaced" "$got $(cat "$TMP/err")"
    printf '{}' > "$CTD/empty.json"
    sum3=$(sha256sum <"$TMP/ct.gguf")
    out=$("$EDIT" "$TMP/ct.gguf" --chat-template "$CTD/empty.json" 2>&1); rc=$?
    [ $rc -eq 1 ] && [ "$out" = "gguf-edit: error: --chat-template $CTD/empty.json: no \"chat_template\" in the JSON object" ] &&
        [ "$(sha256sum <"$TMP/ct.gguf")" = "$sum3" ] && pass "--chat-template JSON without one: exit 1, file untouched" ||
        fail "--chat-template JSON without one: exit 1, file untouched" "$rc: $out"
else
    skip_block "--chat-template from folders" "jq not installed" 4
fi
check "--version" bash -c '"$1" --version | grep -q "^gguf-edit (ggufkit) "' _ "$EDIT"

# split and merge: every GGUF split (by tensor count, by size, and with a
# metadata-only first shard) merges back to its exact bytes.
for f in "${files[@]}"; do
    name=$(basename "$f" .gguf)
    d=$TMP/split-$name; mkdir -p "$d"; cp "$f" "$d/m.gguf"
    ok=1
    for how in "--max-tensors 7" "--max-size 1M" "--max-tensors 5 --no-tensor-first-split"; do
        rm -f "$d"/m-0*.gguf "$d/merged.gguf"
        # shellcheck disable=SC2086
        "$EDIT" split -q "$d/m.gguf" $how || { ok=0; break; }
        first=$(ls "$d"/m-00001-of-*.gguf)
        "$EDIT" merge -q "$first" "$d/merged.gguf" && cmp -s "$d/m.gguf" "$d/merged.gguf" || { ok=0; break; }
    done
    [ $ok = 1 ] && pass "split and merge $name: the merged file is the input byte for byte ($how)" ||
        fail "split and merge $name" "$how"
    rm -rf "$d"
done
if need_fixture reference/wp-llama-5m-f16.gguf "split model: same greedy ids" 2; then
    cp "$FIX/reference/wp-llama-5m-f16.gguf" "$TMP/w.gguf"
    "$EDIT" split -q "$TMP/w.gguf" --max-size 2M --no-tensor-first-split "$TMP/ws"
    n=$(ls "$TMP"/ws-*.gguf | wc -l)
    got=$("$INSPECT" --json --no-split "$TMP/ws-00001-of-0000$n.gguf" | jq -c '[.summary.n_tensors, .metadata["split.no"].value, .metadata["split.count"].value, .metadata["split.tensors.count"].value]')
    [ "$got" = "[0,0,$n,39]" ] && pass "--no-tensor-first-split: shard 1 holds the metadata and llama-gguf-split's split.* keys" ||
        fail "--no-tensor-first-split: shard 1" "$got"
    a=$("$RUN" -m "$TMP/w.gguf" -p "The prince" -n 12 --ids 2>/dev/null)
    b=$("$RUN" -m "$TMP/ws-00001-of-0000$n.gguf" -p "The prince" -n 12 --ids 2>/dev/null)
    [ -n "$a" ] && [ "$a" = "$b" ] && pass "a split made by gguf-edit runs in gguf-run with the same greedy ids" ||
        fail "a split made by gguf-edit runs in gguf-run with the same greedy ids" "$a / $b"
    fixture_block_end
fi
# actions apply while merging; bad command lines
cp "$SAMPLE" "$TMP/s.gguf"
"$EDIT" split -q "$TMP/s.gguf" --max-tensors 4
"$EDIT" merge -q "$TMP/s-00001-of-00006.gguf" "$TMP/s2.gguf" --set general.name=merged
[ "$(changes "$SAMPLE" "$TMP/s2.gguf")" = "changed general.name" ] && [ "$(hashes "$SAMPLE")" = "$(hashes "$TMP/s2.gguf")" ] &&
    pass "merge with --set: only that key changes" || fail "merge with --set: only that key changes"
# editing a split model in place: shard 1 is rewritten, the others stay as they are
sha256sum "$TMP"/s-0000[2-6]-of-00006.gguf >"$TMP/shards.sum"
"$EDIT" merge -q "$TMP/s-00001-of-00006.gguf" "$TMP/s-before.gguf"
if "$EDIT" -q "$TMP/s-00001-of-00006.gguf" --set general.name=split-edited --chat-template "$TMP/tmpl.jinja" 2>"$TMP/err" &&
   sha256sum -c --quiet "$TMP/shards.sum" >/dev/null 2>&1 &&
   "$EDIT" merge -q "$TMP/s-00001-of-00006.gguf" "$TMP/s-after.gguf" &&
   [ "$(changes "$TMP/s-before.gguf" "$TMP/s-after.gguf" | tr '\n' ';')" = "added tokenizer.chat_template;changed general.name;" ] &&
   [ "$(hashes "$TMP/s-before.gguf")" = "$(hashes "$TMP/s-after.gguf")" ]; then
    pass "a split model edited in place: shard 1 rewritten, shards 2-6 byte for byte, exactly the keys asked for change"
else
    fail "a split model edited in place" "$(cat "$TMP/err")"
fi
out=$("$EDIT" "$TMP/s-00001-of-00006.gguf" --delete split.count 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"split.count ties the 6 shards together"* ]] && pass "a split model's split.* keys are not edited" ||
    fail "a split model's split.* keys are not edited" "$rc: $out"
out=$("$EDIT" "$TMP/s-00001-of-00006.gguf" -o "$TMP/x.gguf" --set a=1 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"is edited in place"* ]] && [ ! -e "$TMP/x.gguf" ] && pass "a split model with -o is refused" ||
    fail "a split model with -o is refused" "$rc: $out"
out=$("$EDIT" "$TMP/s-00001-of-00006.gguf" --set llama.block_count=1 --force 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"the edit would break the model"* ]] && sha256sum -c --quiet "$TMP/shards.sum" >/dev/null 2>&1 &&
    pass "a split model: the model rules see every shard's tensors" || fail "a split model: the model rules see every shard's tensors" "$rc: $out"
"$EDIT" merge -q "$SAMPLE" "$TMP/x.gguf" && cmp -s "$SAMPLE" "$TMP/x.gguf" &&
    pass "merge of a whole file copies it" || fail "merge of a whole file copies it"
out=$("$EDIT" merge "$TMP/s-00001-of-00006.gguf" "$TMP/s-00002-of-00006.gguf" 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"is an input of this run"* ]] && pass "merge over one of its shards is refused" ||
    fail "merge over one of its shards is refused" "$rc: $out"
usage_error "$EDIT" "split without a size" "split: give one of --max-size and --max-tensors" split "$SAMPLE"
usage_error "$EDIT" "split --max-size 0" "--max-size: '0' is not a size" split "$SAMPLE" --max-size 0
usage_error "$EDIT" "merge without OUT" "merge: missing OUT" merge "$TMP/s-00001-of-00006.gguf"
# a malformed input: refused with the reader's message, nothing written
head -c 300 "$SAMPLE" >"$TMP/trunc.gguf"
out=$("$EDIT" "$TMP/trunc.gguf" -o "$TMP/never.gguf" --set a=1 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == "gguf-edit: error: $TMP/trunc.gguf: offset "* ]] && [ ! -e "$TMP/never.gguf" ] &&
    pass "a truncated input: exit 1, the reader's message with its offset, nothing written" ||
    fail "a truncated input" "$rc: $out"
# an output directory it cannot write (procfs: not even root): exit 1, the input untouched
sum=$(sha256sum <"$SAMPLE")
out=$("$EDIT" "$SAMPLE" -o /proc/ggufkit-edit-test.gguf --set a=1 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"cannot create a temporary file next to /proc/ggufkit-edit-test.gguf"* ]] &&
   [ "$(sha256sum <"$SAMPLE")" = "$sum" ] && pass "an unwritable output directory: exit 1, the input untouched" ||
    fail "an unwritable output directory: exit 1, the input untouched" "$rc: $out"
# --from-json: gguf-inspect --json --full's metadata, applied to a file with
# every key deleted, gives the file back byte for byte
if need_jq "--from-json round trip"; then
    "$INSPECT" --json --full "$SAMPLE" >"$TMP/full.json"
    "$EDIT" -q "$SAMPLE" -o "$TMP/fj.gguf" --delete '*' --from-json "$TMP/full.json" &&
        cmp -s "$SAMPLE" "$TMP/fj.gguf" && pass "--from-json of gguf-inspect --json --full: the file back byte for byte (no --force: every key gets its own value)" ||
        fail "--from-json of gguf-inspect --json --full: the file back byte for byte"
    "$INSPECT" --json "$SAMPLE" >"$TMP/short.json"
    out=$("$EDIT" "$SAMPLE" -o "$TMP/x.gguf" --force --from-json "$TMP/short.json" 2>&1); rc=$?
    [ $rc -eq 1 ] && [[ $out == *"shortened output: use gguf-inspect --json --full"* ]] &&
        pass "--from-json refuses shortened arrays" || fail "--from-json refuses shortened arrays" "$rc: $out"
fi
# --from-json: a file whose content is wrong is an error about that file (exit 1)
file_error() { # NAME WANT ARGS...: exit 1, one line naming WANT, nothing written to $TMP/never.gguf
    local name=$1 want=$2 out rc
    shift 2
    out=$("$EDIT" "$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 1 ] && [[ $out == "gguf-edit: error: "*"$want"* ]] && [ "$(wc -l <<<"$out")" = 1 ] && [ ! -e "$TMP/never.gguf" ]; then
        pass "$name"
    else
        fail "$name" "exit $rc: $out"
    fi
}
printf '{"a.t": {"type": "u128", "value": 1}}' >"$TMP/badtype.json"
file_error "--from-json unknown type" "--from-json $TMP/badtype.json: key 'a.t': line 1: want {\"type\"" "$SAMPLE" -o "$TMP/never.gguf" --from-json "$TMP/badtype.json"
printf '{"a.n": {"type": "u8", "value": 300}}' >"$TMP/range.json"
file_error "--from-json u8 out of range" "--from-json $TMP/range.json: key 'a.n': \"300\" is not a u8" "$SAMPLE" -o "$TMP/never.gguf" --from-json "$TMP/range.json"
printf '{"a": ' >"$TMP/broken.json"
file_error "--from-json broken JSON" "--from-json $TMP/broken.json: line 1: the document ends where a value should be" "$SAMPLE" -o "$TMP/never.gguf" --from-json "$TMP/broken.json"

# llama-gguf-split's layout (tests/tools/mkllsplit reproduces e21cdc11's
# gguf-split.cpp byte by byte): gguf-edit split writes the same shards, and
# gguf-edit merge turns its shards back into the input.
MKLL=$BIN/tests/tools/mkllsplit
for f in "${files[@]}"; do
    name=$(basename "$f" .gguf)
    [ "$("$INSPECT" --json "$f" | jq -r '[.summary.version, .summary.alignment] | @tsv' 2>/dev/null)" = $'3\t32' ] || continue
    d=$TMP/ll-$name; mkdir -p "$d"; cp "$f" "$d/m.gguf"
    ok=1 why=
    for how in "--max-tensors 7" "--max-size 3M" "--max-tensors 5 --no-tensor-first-split"; do
        rm -f "$d"/ll-*.gguf "$d"/m-*.gguf "$d/merged.gguf"
        llhow=${how/--max-/--split-max-}
        # shellcheck disable=SC2086
        "$MKLL" "$d/m.gguf" "$d/ll" $llhow >/dev/null 2>"$d/err" || { grep -q "0 tensors" "$d/err" && continue; ok=0; why="mkllsplit $how"; break; }
        # shellcheck disable=SC2086
        "$EDIT" split -q "$d/m.gguf" $how || { ok=0; why="split $how"; break; }
        for x in "$d"/ll-*.gguf; do
            cmp -s "$x" "$d/m-${x##*/ll-}" || { ok=0; why="$how: ${x##*/} differs"; }
        done
        "$EDIT" merge -q "$d"/ll-00001-of-*.gguf "$d/merged.gguf" && cmp -s "$d/m.gguf" "$d/merged.gguf" || { ok=0; why="merge $how"; }
        [ $ok = 1 ] || break
    done
    [ $ok = 1 ] && pass "llama-gguf-split's layout, $name: gguf-edit splits to the same bytes and merges its shards back to the input" ||
        fail "llama-gguf-split's layout, $name" "$why"
    rm -rf "$d"
done

# --repair: a duplicate key, a duplicate tensor name and a bad
# general.alignment, in a model that runs (tests/tools/mkbad's images have a
# duplicate each but are no model): the repaired file is accepted by
# gguf-inspect --check and gguf-run and gives the same greedy ids.
MKMETA_DUP=$TMP/dup.gguf
if need_fixture reference/wp-llama-5m-Q8_0.gguf "--repair of a model" 4; then
    m=$FIX/reference/wp-llama-5m-Q8_0.gguf
    # a copy with general.name written twice: a new key renamed onto it in the bytes
    "$EDIT" -q "$m" -o "$TMP/pre.gguf" --set general.nama=second
    LC_ALL=C sed '0,/general\.nama/s//general.name/' "$TMP/pre.gguf" >"$MKMETA_DUP"
    sum=$(sha256sum <"$MKMETA_DUP")
    out=$("$INSPECT" "$MKMETA_DUP" 2>&1); rc=$?
    out2=$("$EDIT" "$MKMETA_DUP" --set a=1 2>&1); rc2=$?
    [ $rc -eq 1 ] && [[ $out == *"duplicate key 'general.name'"* ]] && [ $rc2 -eq 1 ] && [[ $out2 == *"(--repair can fix this)"* ]] &&
        pass "a duplicate key: refused by the reader, and gguf-edit says --repair can fix it" ||
        fail "a duplicate key is refused" "$rc: $out / $rc2: $out2"
    out=$("$EDIT" "$MKMETA_DUP" -o "$TMP/fixed.gguf" --repair 2>&1); rc=$?
    [ $rc -eq 0 ] && [[ $out == *"repair: duplicate key 'general.name': kept the last ("*"str \"second\"), dropped the one at offset "*" (str \""* ]] &&
        [ "$(sha256sum <"$MKMETA_DUP")" = "$sum" ] &&
        pass "--repair says which duplicate it dropped (the first; the last stays), the input untouched" ||
        fail "--repair says which duplicate it dropped" "$rc: $out"
    a=$("$RUN" -m "$m" -p "The prince" -n 12 --ids 2>/dev/null)
    b=$("$RUN" -m "$TMP/fixed.gguf" -p "The prince" -n 12 --ids 2>/dev/null)
    "$INSPECT" --check "$TMP/fixed.gguf" >/dev/null 2>&1 && [ -n "$a" ] && [ "$a" = "$b" ] &&
        [ "$("$INSPECT" --json "$TMP/fixed.gguf" | jq -r '.metadata["general.name"].value')" = second ] &&
        [ "$(hashes "$m")" = "$(hashes "$TMP/fixed.gguf")" ] &&
        pass "the repaired file passes gguf-inspect --check and runs with the same greedy ids, every tensor byte for byte" ||
        fail "the repaired file is accepted" "$a / $b"
    "$EDIT" -q "$MKMETA_DUP" -o "$TMP/fixed1.gguf" --repair --keep first >/dev/null
    [ "$("$INSPECT" --json "$TMP/fixed1.gguf" | jq -r '.metadata["general.name"].value')" = "$("$INSPECT" --json "$m" | jq -r '.metadata["general.name"].value')" ] &&
        pass "--repair --keep first keeps the first value" || fail "--repair --keep first keeps the first value"
    fixture_block_end
fi
[ -x "$BIN/tests/tools/mkbad" ] && "$BIN/tests/tools/mkbad" "$TMP/bad" >/dev/null
for c in duplicate_tensor alignment_i32 alignment_48 alignment_str; do
    out=$("$EDIT" "$TMP/bad/$c.gguf" -o "$TMP/r-$c.gguf" --repair 2>/dev/null); rc=$?
    [ $rc -eq 0 ] && [[ $out == *": repair: "* ]] && "$INSPECT" "$TMP/r-$c.gguf" >/dev/null 2>&1 &&
        pass "--repair of $c: stated, and the result opens" || fail "--repair of $c" "$rc: $out"
done
for c in offset_unaligned_68 overlap_same_offset truncated_data; do
    [ -f "$TMP/bad/$c.gguf" ] || continue
    out=$("$EDIT" "$TMP/bad/$c.gguf" -o "$TMP/r-$c.gguf" --repair 2>&1); rc=$?
    [ $rc -eq 1 ] && [ ! -e "$TMP/r-$c.gguf" ] && pass "--repair leaves $c an error" || fail "--repair leaves $c an error" "$rc: $out"
done
cp "$SAMPLE" "$TMP/clean.gguf"
out=$("$EDIT" "$TMP/clean.gguf" --repair 2>&1); rc=$?
[ $rc -eq 0 ] && [[ $out == *"nothing to repair, nothing written"* ]] && cmp -s "$SAMPLE" "$TMP/clean.gguf" &&
    pass "--repair of a valid file: nothing to repair, nothing written" || fail "--repair of a valid file" "$rc: $out"
usage_error "$EDIT" "--keep without --repair" "--keep goes with --repair" "$SAMPLE" --keep first --set a=1
usage_error "$EDIT" "--keep other" "--keep: 'middle' is not first or last" "$SAMPLE" --repair --keep middle

# ---------------------------------------------------------------------------
# Values are exact and parsed in full; limits as documented.
meta() { "$INSPECT" --json "$1" | grep -F "\"$2\": "; } # the key's line, numbers as printed (no jq: exact)
printf '{"a.u": {"type": "u64", "value": 9007199254740993}, "a.m": {"type": "u64", "value": 18446744073709551615},\n "a.i": {"type": "arr[i64]", "value": [-9223372036854775808, 9007199254740995]}}' >"$TMP/exact.json"
if "$EDIT" -q "$SAMPLE" -o "$TMP/exact.gguf" --from-json "$TMP/exact.json" &&
   [[ $(meta "$TMP/exact.gguf" a.u) == *'"value": 9007199254740993}'* ]] &&
   [[ $(meta "$TMP/exact.gguf" a.m) == *'"value": 18446744073709551615}'* ]] &&
   [[ $(meta "$TMP/exact.gguf" a.i) == *'[-9223372036854775808, 9007199254740995]'* ]]; then
    pass "--from-json: integers beyond 2^53 stored exactly (2^53 + 1, 2^64 - 1, -2^63)"
else
    fail "--from-json: integers beyond 2^53 stored exactly" "$(meta "$TMP/exact.gguf" a.u)"
fi
printf '{"a.u": {"type": "u64", "value": 18446744073709551616}}' >"$TMP/over.json"
file_error "--from-json: 2^64 is not a u64" "key 'a.u': \"18446744073709551616\" is not a u64" "$SAMPLE" -o "$TMP/never.gguf" --from-json "$TMP/over.json"
usage_error "$EDIT" "a number with a leading space" "--set: \" 5\" is not a u32" "$SAMPLE" -o "$TMP/never.gguf" --set 'a.b:u32= 5'
usage_error "$EDIT" "a number with a trailing space" "--set: \"5 \" is not a u32" "$SAMPLE" -o "$TMP/never.gguf" --set 'a.b:u32=5 '
usage_error "$EDIT" "an array item with a space" "--set-array: \" 2\" is not a i32" "$SAMPLE" -o "$TMP/never.gguf" --set-array 'a.b:i32=1, 2'
file_error "a space before a number for an existing u32 key" "$SAMPLE: --set: \" 4096\" is not a u32" "$SAMPLE" -o "$TMP/never.gguf" --set 'llama.context_length= 4096'
# a 17 MiB --from-json file: the documented limit is 16 MiB (sparse: no disk used)
printf '{' >"$TMP/huge.json" && truncate -s 17M "$TMP/huge.json"
file_error "--from-json of 17 MiB: refused at the 16 MiB limit" "--from-json $TMP/huge.json: larger than 16 MiB" "$SAMPLE" -o "$TMP/never.gguf" --from-json "$TMP/huge.json"
rm -f "$TMP/huge.json"
# a key of 1 MiB: GGUF keys are at most 65535 bytes (it used to say "'' is not a JSON value")
{ printf '{"'; head -c 1048576 /dev/zero | tr '\0' k; printf '": {"type": "u8", "value": 1}}'; } >"$TMP/longkey.json"
file_error "--from-json: a 1 MiB key is named too long" "a key of 1048576 bytes (GGUF keys are 1 to 65535 bytes)" "$SAMPLE" -o "$TMP/never.gguf" --from-json "$TMP/longkey.json"
{ printf '{"'; head -c 65535 /dev/zero | tr '\0' k; printf '": {"type": "u8", "value": 1}}'; } >"$TMP/longkey.json"
"$EDIT" -q "$SAMPLE" -o "$TMP/lk65535.gguf" --from-json "$TMP/longkey.json" && "$INSPECT" --check "$TMP/lk65535.gguf" >/dev/null &&
    pass "--from-json: a key of 65535 bytes is written" || fail "--from-json: a key of 65535 bytes is written"
rm -f "$TMP/longkey.json" "$TMP/lk65535.gguf"
# a rename of a key that does not exist is an error, not "metadata edited"
cp "$SAMPLE" "$TMP/rn.gguf"
sum=$(sha256sum <"$TMP/rn.gguf")
file_error "--rename of a missing key" "$TMP/rn.gguf: --rename no.such=x.y: there is no such key to rename" "$TMP/rn.gguf" --rename no.such=x.y
file_error "--rename of a key deleted before" "--rename general.name=x.y: that key is deleted by an earlier action" "$TMP/rn.gguf" --delete 'general.*' --rename general.name=x.y
check "a refused rename leaves the file as it was" test "$(sha256sum <"$TMP/rn.gguf")" = "$sum"
# a protected key set to the value it has is no change: no --force needed
out=$("$EDIT" "$TMP/rn.gguf" --set llama.block_count=2 --set general.architecture=llama --set general.name=same 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$(changes "$SAMPLE" "$TMP/rn.gguf" | tr '\n' ';')" = "$("$INSPECT" --json "$SAMPLE" | jq -e '.metadata["general.name"]' >/dev/null && echo 'changed general.name;' || echo 'added general.name;')" ] &&
    pass "setting protected keys to the values they have needs no --force (only general.name changed)" ||
    fail "setting protected keys to the values they have needs no --force" "$rc: $out"
out=$("$EDIT" "$TMP/rn.gguf" --dry-run --set llama.block_count:u32=2)
[ "$out" = "0 changes, nothing written (--dry-run)" ] && pass "--dry-run: a set to the same value is no change" ||
    fail "--dry-run: a set to the same value is no change" "$out"
out=$("$EDIT" "$TMP/rn.gguf" --set llama.block_count:u64=2 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"llama.block_count decides what the tensors are: changing it needs --force"* ]] &&
    pass "the same number as another type is a change (needs --force)" || fail "the same number as another type is a change" "$rc: $out"

# ---------------------------------------------------------------------------
# split.* keys: never written on a whole file (every tool would refuse the
# result, --repair included), whatever the route.
printf '{"split.count": {"type": "u16", "value": 3}}' >"$TMP/split.json"
for route in "--set split.count:u16=3" "--set split.no:u16=0" "--set split.tensors.count:i32=21" "--set split.other=1" \
             "--set-array split.count:u16=3,4" "--rename general.architecture=split.count" "--from-json $TMP/split.json"; do
    # shellcheck disable=SC2086
    out=$("$EDIT" "$SAMPLE" -o "$TMP/never.gguf" --force $route 2>&1); rc=$?
    [ $rc -eq 1 ] && [[ $out == *": split.* keys tie the shards of a split model together (gguf-edit split writes them); a whole file cannot have one"* ]] &&
        [ ! -e "$TMP/never.gguf" ] && pass "a whole file: $route refused" || fail "a whole file: $route refused" "$rc: $out"
done
cp "$SAMPLE" "$TMP/sk.gguf"
sum=$(sha256sum <"$TMP/sk.gguf")
out=$("$EDIT" "$TMP/sk.gguf" --set split.count:u16=3 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$(sha256sum <"$TMP/sk.gguf")" = "$sum" ] && pass "in place: split.count refused, the file untouched" ||
    fail "in place: split.count refused, the file untouched" "$rc: $out"
# a whole file may lose a split.* key the reader ignores (written by hand, made here by bytes)
"$EDIT" -q "$SAMPLE" -o "$TMP/pre-sf.gguf" --set zplit.foo:u8=1 && LC_ALL=C sed 's/zplit\./split./' "$TMP/pre-sf.gguf" >"$TMP/sf.gguf"
out=$("$EDIT" -q "$TMP/sf.gguf" --delete split.foo 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$(changes "$SAMPLE" "$TMP/sf.gguf")" ] && pass "a whole file: deleting a stray split.foo is allowed (it only gets more whole)" ||
    fail "a whole file: deleting a stray split.foo is allowed" "$rc: $out"
out=$("$EDIT" merge "$SAMPLE" "$TMP/never.gguf" --set split.count:u16=2 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"the merged file is whole and cannot have one"* ]] && [ ! -e "$TMP/never.gguf" ] &&
    pass "merge: a split.* key refused" || fail "merge: a split.* key refused" "$rc: $out"
out=$("$EDIT" split "$SAMPLE" --max-tensors 8 "$TMP/nv" --set split.count:u16=2 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"split.count: split.* keys tie the shards"* ]] && [ -z "$(ls "$TMP" | grep '^nv-')" ] &&
    pass "split: a split.* key refused" || fail "split: a split.* key refused" "$rc: $out"
out=$("$EDIT" "$TMP/s-00001-of-00006.gguf" --set split.count:u16=6 --set general.name=same-split 2>&1); rc=$?
[ $rc -eq 0 ] && sha256sum -c --quiet "$TMP/shards.sum" >/dev/null 2>&1 &&
    pass "a split model: split.count set to the value it has is no change" || fail "a split model: split.count set to its value" "$rc: $out"

# --repair drops stray split keys from a whole file that has them (made by
# bytes: keys named zplit.* renamed in place, as an older gguf-edit wrote them).
stray() { # OUT ARGS...: the sample with the keys ARGS adds renamed from zplit.* to split.*
    local out=$1; shift
    "$EDIT" -q "$SAMPLE" -o "$TMP/pre-stray.gguf" "$@" && LC_ALL=C sed 's/zplit\./split./g' "$TMP/pre-stray.gguf" >"$out"
}
stray "$TMP/stray1.gguf" --set zplit.count:u16=3
stray "$TMP/stray3.gguf" --set zplit.no:u16=0 --set zplit.count:u16=3 --set zplit.tensors.count:i32=21
for f in stray1 stray3; do
    out=$("$INSPECT" "$TMP/$f.gguf" 2>&1); rc=$?
    out2=$("$EDIT" "$TMP/$f.gguf" --set a=1 2>&1); rc2=$?
    [ $rc -eq 1 ] && [[ $out == *split* ]] && [ $rc2 -eq 1 ] && [[ $out2 == *"(--repair can fix this)" ]] &&
        pass "$f: stray split keys are refused, and gguf-edit says --repair can fix it" ||
        fail "$f: stray split keys are refused" "$rc: $out / $rc2: $out2"
done
out=$("$EDIT" "$TMP/stray1.gguf" -o "$TMP/unstray1.gguf" --repair 2>&1); rc=$?
[ $rc -eq 0 ] && [[ $out == *"$TMP/stray1.gguf: repair: stray split key split.count (u16 3) dropped: a whole file, not a shard (not u16 split.no, u16 split.count and i32 split.tensors.count together)"* ]] &&
    "$INSPECT" --check "$TMP/unstray1.gguf" >/dev/null 2>&1 && [ "$(hashes "$SAMPLE")" = "$(hashes "$TMP/unstray1.gguf")" ] &&
    [ -z "$(changes "$SAMPLE" "$TMP/unstray1.gguf")" ] &&
    pass "--repair drops a stray split.count (said), the result passes --check with every tensor and key as before" ||
    fail "--repair drops a stray split.count" "$rc: $out"
out=$("$EDIT" "$TMP/stray3.gguf" --repair --set general.name=unstrayed 2>&1); rc=$?
n=$(grep -c "repair: stray split key split\.\(no\|count\|tensors\.count\) (.*) dropped: a whole file, not a shard (the file is not named as shard 1 of 3 (NAME-00001-of-00003.gguf))" <<<"$out")
[ $rc -eq 0 ] && [ "$n" = 3 ] && "$INSPECT" --check "$TMP/stray3.gguf" >/dev/null 2>&1 &&
    [ "$(changes "$SAMPLE" "$TMP/stray3.gguf")" = "$("$INSPECT" --json "$SAMPLE" | jq -e '.metadata["general.name"]' >/dev/null && echo 'changed general.name' || echo 'added general.name')" ] &&
    pass "--repair in place drops all three stray split keys (each said) and applies the actions" ||
    fail "--repair in place drops all three stray split keys" "$rc: $out"
# a real shard whose sibling is missing is no stray: not repaired
mkdir -p "$TMP/miss" && cp "$TMP"/s-0000[1-5]-of-00006.gguf "$TMP/miss/"
out=$("$EDIT" "$TMP/miss/s-00001-of-00006.gguf" -o "$TMP/never.gguf" --repair 2>&1); rc=$?
[ $rc -eq 1 ] && [[ $out == *"s-00006-of-00006.gguf"* ]] && [ ! -e "$TMP/never.gguf" ] &&
    pass "--repair leaves a split model with a missing shard an error" || fail "--repair leaves a split model with a missing shard an error" "$rc: $out"
rm -rf "$TMP/miss"

# ---------------------------------------------------------------------------
# 200,000 keys through --from-json (the speed is bench/edit.sh's; here: it
# completes and every key lands, which took minutes when lookups were linear).
if need_jq "200,000 keys"; then
    awk 'BEGIN { printf "{"; for (i = 0; i < 200000; i++) printf "%s\"k.x%d\": {\"type\": \"u32\", \"value\": %d}", i ? ",\n" : "", i, i; print "}" }' >"$TMP/many.json"
    if "$EDIT" -q "$SAMPLE" -o "$TMP/many.gguf" --from-json "$TMP/many.json" 2>"$TMP/err" &&
       [ "$("$INSPECT" --json --full "$TMP/many.gguf" | jq '[.metadata | to_entries[] | select(.key | startswith("k.x")) | select(.value.value == (.key[3:] | tonumber))] | length')" = 200000 ] &&
       [ "$(hashes "$SAMPLE")" = "$(hashes "$TMP/many.gguf")" ]; then
        pass "--from-json of 200,000 keys: every key with its value, tensors byte for byte"
    else
        fail "--from-json of 200,000 keys" "$(head -c 300 "$TMP/err")"
    fi
    rm -f "$TMP/many.json" "$TMP/many.gguf"
fi

# ---------------------------------------------------------------------------
# Concurrent in-place edits of one file are serialised by a lock on it: each
# waits for the one before and edits its result, so every edit lands; an -o
# edit of the same file meanwhile copies the tensors it read (the reader's
# descriptor), never the bytes of a file renamed over the path since.
CONC_SRC=$SAMPLE
[ -f "$FIX/reference/wp-llama-5m-Q8_0.gguf" ] && CONC_SRC=$FIX/reference/wp-llama-5m-Q8_0.gguf
if need_jq "concurrent in-place edits"; then
    cp "$CONC_SRC" "$TMP/conc.gguf" && chmod u+w "$TMP/conc.gguf"
    want_hashes=$(hashes "$CONC_SRC")
    W=8 R=20 bad=
    for ((r = 1; r <= R && !${#bad}; r++)); do
        pids=()
        for ((k = 0; k < W; k++)); do
            "$EDIT" -q "$TMP/conc.gguf" --set "c.k$k:u32=$((r * 100 + k))" 2>"$TMP/conc.err$k" & pids+=($!)
        done
        "$EDIT" -q "$TMP/conc.gguf" -o "$TMP/conc-out.gguf" --set c.out:u32=$r 2>"$TMP/conc.errout" & pids+=($!)
        for p in "${pids[@]}"; do wait "$p" || bad="round $r: an edit failed: $(grep -hv waiting "$TMP"/conc.err* | head -3)"; done
        [ -z "$bad" ] || break
        got=$("$INSPECT" --json "$TMP/conc.gguf" | jq -c "[range($W) as \$k | .metadata[\"c.k\\(\$k)\"].value]")
        want=$(jq -nc "[range($W) | . + $r * 100]")
        if [ "$got" != "$want" ]; then bad="round $r: keys $got, want $want"
        elif [ "$(hashes "$TMP/conc.gguf")" != "$want_hashes" ]; then bad="round $r: the edited file's tensors changed"
        elif ! "$INSPECT" --check "$TMP/conc.gguf" >"$TMP/conc.check" 2>&1; then bad="round $r: --check: $(tail -3 "$TMP/conc.check")"
        elif [ "$(hashes "$TMP/conc-out.gguf")" != "$want_hashes" ]; then bad="round $r: the -o edit's tensors changed"
        fi
    done
    [ -z "$bad" ] && pass "$W concurrent in-place edits, $R rounds: every edit landed, every tensor hash unchanged, --check clean, and a concurrent -o edit intact ($(basename "$CONC_SRC"))" ||
        fail "$W concurrent in-place edits" "$bad"
fi

# A split model edited in place concurrently: its first shard (the one
# rewritten) is locked; every edit lands, shards 2-6 stay byte for byte.
if need_jq "concurrent edits of a split model"; then
    bad=
    for ((r = 1; r <= 5 && !${#bad}; r++)); do
        pids=()
        for ((k = 0; k < 4; k++)); do
            "$EDIT" -q "$TMP/s-00001-of-00006.gguf" --set "c.k$k:u32=$((r * 100 + k))" 2>/dev/null & pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p" || bad="round $r: an edit failed"; done
        got=$("$INSPECT" --json "$TMP/s-00001-of-00006.gguf" | jq -c '[range(4) as $k | .metadata["c.k\($k)"].value]')
        [ -n "$bad" ] || [ "$got" = "$(jq -nc "[range(4) | . + $r * 100]")" ] || bad="round $r: keys $got"
        [ -n "$bad" ] || sha256sum -c --quiet "$TMP/shards.sum" >/dev/null 2>&1 || bad="round $r: shards 2-6 changed"
    done
    [ -z "$bad" ] && pass "4 concurrent in-place edits of a split model, 5 rounds: every edit landed, shards 2-6 byte for byte" ||
        fail "concurrent in-place edits of a split model" "$bad"
fi

# The lock, step by step (no timing: the test holds the lock itself): an
# edit of a locked file says once that it waits; when the lock goes, the
# path names a file another edit renamed over it meanwhile, and the edit
# applies to that one.
cp "$SAMPLE" "$TMP/lk.gguf"
exec {lkfd}<"$TMP/lk.gguf"
flock -x "$lkfd"
: >"$TMP/lk.err"
"$EDIT" -q "$TMP/lk.gguf" --set lk.a:u32=1 2>>"$TMP/lk.err" & lkpid=$!
i=0
while ((i++ < 1200)) && ! grep -q "waiting for another edit" "$TMP/lk.err"; do sleep 0.05; done
"$EDIT" -q "$SAMPLE" -o "$TMP/lk.new" --set lk.b:u32=2 && mv "$TMP/lk.new" "$TMP/lk.gguf"
flock -u "$lkfd"
exec {lkfd}<&-
wait "$lkpid"; rc=$?
got=$("$INSPECT" --json "$TMP/lk.gguf" | jq -c '[.metadata["lk.a"].value, .metadata["lk.b"].value]')
[ $rc -eq 0 ] && [ "$(cat "$TMP/lk.err")" = "gguf-edit: $TMP/lk.gguf: waiting for another edit of this file to finish" ] && [ "$got" = "[1,2]" ] &&
    pass "a locked file: the edit says once that it waits, then edits the file renamed over the path meanwhile" ||
    fail "a locked file: the edit waits, then edits the file renamed over the path" "$rc: $(cat "$TMP/lk.err") $got"
# an in-place edit of a FIFO is refused at once (the lock's open does not wait for a writer)
mkfifo "$TMP/fifo.gguf"
out=$(timeout 60 "$EDIT" "$TMP/fifo.gguf" --set a=1 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$out" = "gguf-edit: error: $TMP/fifo.gguf: not a regular file" ] && pass "in place: a FIFO is refused, not waited on" ||
    fail "in place: a FIFO is refused, not waited on" "$rc: $out"
rm -f "$TMP/fifo.gguf"
