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
out=$("$EDIT" "$TMP/inplace.gguf" --dry-run --set general.name=x --delete 'test.*' --rename general.alignment=general.align2 --set new.key=2.5)
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
    "$EDIT" -q "$SAMPLE" -o "$TMP/fj.gguf" --force --delete '*' --from-json "$TMP/full.json" &&
        cmp -s "$SAMPLE" "$TMP/fj.gguf" && pass "--from-json of gguf-inspect --json --full: the file back byte for byte" ||
        fail "--from-json of gguf-inspect --json --full: the file back byte for byte"
    "$INSPECT" --json "$SAMPLE" >"$TMP/short.json"
    out=$("$EDIT" "$SAMPLE" -o "$TMP/x.gguf" --force --from-json "$TMP/short.json" 2>&1); rc=$?
    [ $rc -eq 2 ] && [[ $out == *"shortened output: use gguf-inspect --json --full"* ]] &&
        pass "--from-json refuses shortened arrays" || fail "--from-json refuses shortened arrays" "$rc: $out"
fi
printf '{"a.big": {"type": "u64", "value": 18446744073709551615}}' >"$TMP/big.json"
usage_error "$EDIT" "--from-json u64 past 2^53" "expected a whole number within 2^53" "$SAMPLE" --from-json "$TMP/big.json"
printf '{"a.t": {"type": "u128", "value": 1}}' >"$TMP/badtype.json"
usage_error "$EDIT" "--from-json unknown type" "want {\"type\"" "$SAMPLE" --from-json "$TMP/badtype.json"
printf '{"a.n": {"type": "u8", "value": 300}}' >"$TMP/range.json"
usage_error "$EDIT" "--from-json u8 out of range" "\"300\" is not a u8" "$SAMPLE" --from-json "$TMP/range.json"
printf '{"a": ' >"$TMP/broken.json"
usage_error "$EDIT" "--from-json broken JSON" "--from-json $TMP/broken.json: line" "$SAMPLE" --from-json "$TMP/broken.json"

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
