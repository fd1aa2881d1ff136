#!/usr/bin/env bash
# tests/e2e/build.sh — the build system: install layout, pkg-config file, a
# program built against the installed library, and the missing-dependency
# message.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

dest=$TMP/install
if make -s BUILD="$BUILD" install DESTDIR="$dest" PREFIX=/usr >"$TMP/install.log" 2>&1; then
    pass "make install"
else
    fail "make install" "$(tail -1 "$TMP/install.log")"
fi
for f in usr/bin/gguf-inspect usr/lib/libgguf.a usr/lib/libgguf.so usr/lib/libgguf.so.1 \
         usr/include/ggufkit/gguf.h usr/include/ggufkit/quants.h usr/include/ggufkit/vocab.h \
         usr/include/ggufkit/arch.h usr/lib/pkgconfig/libgguf.pc; do
    check "installed $f" test -e "$dest/$f"
done
# only the public headers: nothing private on the include path
check "installed headers are exactly gguf.h quants.h vocab.h arch.h" \
    test "$(ls "$dest/usr/include/ggufkit" | tr '\n' ' ')" = "arch.h gguf.h quants.h vocab.h "

# A program built with the installed pkg-config file opens a file we write.
pc="env PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$dest/usr/lib/pkgconfig pkg-config"
cat >"$TMP/use.c" <<'C'
#include <ggufkit/gguf.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    (void)argc;
    gguf_error err;
    gguf_writer *w = gguf_writer_new();
    gguf_writer_set_str(w, "general.architecture", "llama");
    if (gguf_writer_begin(w, argv[1], &err) || gguf_writer_finish(w, &err)) return 1;
    gguf_writer_free(w);
    gguf_file *f = gguf_open(argv[1], 0, &err);
    if (!f) { fprintf(stderr, "%s\n", err.msg); return 1; }
    printf("%llu\n", (unsigned long long)gguf_n_kv(f));
    gguf_close(f);
    return 0;
}
C
if ${TEST_CC:-cc} ${TEST_SANFLAGS:-} $($pc --cflags libgguf) -o "$TMP/use" "$TMP/use.c" $($pc --libs libgguf) 2>"$TMP/cc.log" &&
   [ "$(LD_LIBRARY_PATH=$dest/usr/lib "$TMP/use" "$TMP/use.gguf")" = 1 ]; then
    pass "link against installed libgguf via pkg-config"
else
    fail "link against installed libgguf via pkg-config" "$(head -3 "$TMP/cc.log")"
fi

# Missing dependencies: one line naming every missing package, before any
# compiler output (a fresh machine once saw "pcre2.h: No such file" first).
printf '#!/bin/sh\nexit 1\n' >"$TMP/no-pkg-config"; chmod +x "$TMP/no-pkg-config"
out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s BUILD="$TMP/nodeps" all PKG_CONFIG="$TMP/no-pkg-config" 2>&1)
if grep -q "missing dependencies: run 'apt-get install libpcre2-dev libyaml-dev zlib1g-dev libxxhash-dev nettle-dev check'" <<<"$out" &&
   [ "$(wc -l <<<"$out")" -eq 1 ]; then
    pass "missing dependencies: one apt-get install line naming them all, nothing before it"
else
    fail "missing dependencies: one apt-get install line naming them all, nothing before it" "$out"
fi
printf '#!/bin/sh\ncase "$*" in *yaml*) exit 1;; esac\nexec pkg-config "$@"\n' >"$TMP/no-yaml"; chmod +x "$TMP/no-yaml"
out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s BUILD="$TMP/nodeps" all PKG_CONFIG="$TMP/no-yaml" 2>&1)
if grep -q "run 'apt-get install libyaml-dev'" <<<"$out" && [ "$(wc -l <<<"$out")" -eq 1 ]; then
    pass "one missing dependency: its apt-get install line"
else
    fail "one missing dependency: its apt-get install line" "$out"
fi
