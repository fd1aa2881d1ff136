#!/usr/bin/env bash
# tests/e2e/options.sh — every tool's command line: the command lines of
# tests/data/options.cmds (help, version, every option with a missing, bad
# and good value, unknown options, operands, "--", "-") give exactly the
# output and exit status recorded in tests/data/options.expected. The
# record was made with the tools before their parsers became one option
# table (common/opts.c); a change to it is a change users see.
#
# To record again after a deliberate change: GGUFKIT_RECORD=1 bash tests/e2e/options.sh
source "$(dirname "$0")/lib.sh"
CMDS=$ROOT/tests/data/options.cmds
WANT=$ROOT/tests/data/options.expected

# record: runs every command line, in a directory of its own (nothing there:
# NOFILE and friends are missing), standard input /dev/null.
record() {
    local dir=$TMP/options-cwd line tool
    mkdir -p "$dir"
    while IFS= read -r line; do
        case "$line" in '#'* | '') continue ;; esac
        eval "set -- $line"
        tool=$1; shift
        echo "\$ gguf-$line"
        (cd "$dir" && "$BIN/gguf-$tool" "$@" </dev/null >"$TMP/o.out" 2>"$TMP/o.err")
        echo "exit $?"
        sed 's/^/out: /' "$TMP/o.out"
        sed 's/^/err: /' "$TMP/o.err"
    done <"$CMDS" |
    # the thread-count limit and the warning depend on the machine's cores
    sed -E '/^err: /{s/\((1 to )[0-9]+/(\1MAX/; s/at most [0-9]+\)/at most MAX)/; s/on [0-9]+ available cores?/on N available cores/}'
    [ -z "$(ls -A "$dir")" ] || echo "left files behind: $(ls -A "$dir")"
}

if [ -n "${GGUFKIT_RECORD:-}" ]; then
    record >"$WANT"
    echo "recorded $(grep -c '^\$ ' "$WANT") command lines into $WANT"
    exit 0
fi
record >"$TMP/options.got"
n=$(grep -c '^\$ ' "$TMP/options.got")
if diff -u "$WANT" "$TMP/options.got" >"$TMP/options.diff"; then
    pass "options: $n command lines, output and exit status as recorded"
else
    fail "options: output differs from tests/data/options.expected" "$(head -40 "$TMP/options.diff" | tr '\n' '|')"
fi
# the record is not empty and holds usage errors, help and success paths
if [ "$n" -ge 200 ] && grep -q '^exit 2$' "$WANT" && grep -q '^exit 0$' "$WANT" && grep -q '^exit 1$' "$WANT"; then
    pass "options: the record covers exit statuses 0, 1 and 2 ($n command lines)"
else
    fail "options: the record is too small or lacks an exit status" "$n lines"
fi
