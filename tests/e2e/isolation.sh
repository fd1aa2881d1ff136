#!/usr/bin/env bash
# tests/e2e/isolation.sh — tools depend on libgguf and common/ only, and no
# name of one tool is visible in another's objects (docs/design.md):
#
#   - each tool links from its own objects alone: main.o and every object
#     of its archive (--whole-archive, so an object the tool does not use
#     is checked too) with libcommon.a, libgguf.a and system libraries,
#     no other tool's archive; an undefined or duplicate symbol fails;
#   - no global symbol is defined by two tool archives, nor by a tool
#     archive and libgguf.a or libcommon.a.
#
# Both checks are first shown to fail on archives made to break them.
source "$(dirname "$0")/lib.sh"
CC=${TEST_CC:-cc}
TOOLS=(convert quantize run inspect edit)
LIBS="$(pkg-config --libs yaml-0.1 zlib libpcre2-8 libxxhash nettle 2>/dev/null) -lm -pthread ${TEST_SANFLAGS:-}"

for t in "${TOOLS[@]}" ; do
    [ -f "$BIN/libtool-$t.a" ] && [ -f "$BIN/obj/$t/main.o" ] ||
        { fail "isolation: $BIN/libtool-$t.a or obj/$t/main.o missing (run make first)"; exit 0; }
done

# links_alone MAIN.o ARCHIVE: the program links from MAIN.o, all of ARCHIVE,
# libcommon.a and libgguf.a; the linker's complaint on stdout otherwise.
links_alone() {
    # shellcheck disable=SC2086
    "$CC" -o "$TMP/isolated" "$1" -Wl,--whole-archive "$2" -Wl,--no-whole-archive \
        "$BIN/libcommon.a" "$BIN/libgguf.a" $LIBS 2>&1 |
        grep -E 'undefined reference|multiple definition|error' | head -3
}

# shared_globals ARCHIVE...: "SYMBOL A B" for each global symbol defined in
# more than one of the archives.
shared_globals() {
    local a
    for a in "$@"; do
        nm -g --defined-only "$a" 2>/dev/null | awk -v a="$(basename "$a")" 'NF == 3 { print $3, a }'
    done | sort | awk '{ n[$1]++; w[$1] = w[$1] " " $2 } END { for (s in n) if (n[s] > 1) print s w[s] }' | sort
}

# The checks can fail: an object that calls another tool's function does
# not link alone, and an archive that defines a name another one defines is
# found.
cat >"$TMP/iso-main.c" <<'EOF'
int report_write(void); /* gguf-inspect's */
int main(void) { return report_write(); }
EOF
cat >"$TMP/iso-dup.c" <<'EOF'
int diff_write(void) { return 0; } /* gguf-inspect's name */
EOF
if "$CC" -c -o "$TMP/iso-main.o" "$TMP/iso-main.c" && "$CC" -c -o "$TMP/iso-dup.o" "$TMP/iso-dup.c" &&
   rm -f "$TMP/iso-dup.a" && ar rcs "$TMP/iso-dup.a" "$TMP/iso-dup.o"; then
    why=$(links_alone "$TMP/iso-main.o" "$TMP/iso-dup.a")
    [[ $why == *"undefined reference"*report_write* ]] &&
        pass "isolation: a call into another tool's archive fails the link check" ||
        fail "isolation: a call into another tool's archive fails the link check" "$why"
    dup=$(shared_globals "$BIN/libtool-inspect.a" "$TMP/iso-dup.a")
    [ "$dup" = "diff_write iso-dup.a libtool-inspect.a" ] &&
        pass "isolation: a name two archives define is found" ||
        fail "isolation: a name two archives define is found" "$dup"
else
    fail "isolation: could not build the objects of the self-check"
fi

for t in "${TOOLS[@]}"; do
    why=$(links_alone "$BIN/obj/$t/main.o" "$BIN/libtool-$t.a")
    [ -z "$why" ] && pass "isolation: gguf-$t links from its own archive, libcommon.a and libgguf.a" ||
        fail "isolation: gguf-$t links from its own archive, libcommon.a and libgguf.a" "$why"
done

archives=()
for t in "${TOOLS[@]}"; do archives+=("$BIN/libtool-$t.a"); done
dup=$(shared_globals "${archives[@]}")
[ -z "$dup" ] && pass "isolation: no global name is defined by two tool archives" ||
    fail "isolation: no global name is defined by two tool archives" "$(tr '\n' ';' <<<"$dup")"
for lib in libgguf.a libcommon.a; do
    dup=$(for a in "${archives[@]}"; do shared_globals "$a" "$BIN/$lib"; done)
    [ -z "$dup" ] && pass "isolation: no tool archive defines a name $lib defines" ||
        fail "isolation: no tool archive defines a name $lib defines" "$(tr '\n' ';' <<<"$dup")"
done
rm -f "$TMP/isolated" "$TMP"/iso-*
