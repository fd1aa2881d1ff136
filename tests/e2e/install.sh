#!/usr/bin/env bash
# tests/e2e/install.sh — libgguf as a public library, used the way an
# adopter uses it: from a staged `make install`, with pkg-config and only the
# installed headers.
#
#  - a C++ program (C++11, -pedantic-errors) writes a GGUF with the writer,
#    reads it back and prints a key and a tensor's bytes;
#  - a C program includes ggml.h, ggml-common.h-style macros and ggml's
#    gguf.h next to all four libgguf headers in one translation unit, and
#    links a mock libggml defining every function of ggml's gguf.h together
#    with libgguf (shared, and the whole static archive): no declaration
#    conflicts and no duplicate symbols;
#  - every exported symbol (libgguf.so and libgguf.a) starts with gguf_;
#  - the exported symbols of libgguf.so are those recorded for its major
#    version in tests/data/libgguf.symbols (docs/libgguf.md, "Versions and
#    ABI": one missing is a removal, which needs a new major version; one
#    more is an addition to record);
#  - SONAME libgguf.so.MAJOR (the Makefile's VERSION), programs record
#    NEEDED libgguf.so.MAJOR; exactly the
#    four public headers, each compiling alone as C11 and as C++11;
#  - docs/examples/gguf-info.c (the example of docs/libgguf.md, which must
#    hold it verbatim) builds against the install and prints what a
#    different route (the raw header bytes, gguf-inspect, sha256sum) says.
#
# TEST_CC / TEST_SANFLAGS (set by `make test` / `make san`) choose the C
# compiler and sanitizer flags; C++ uses TEST_CXX, else clang++ when TEST_CC
# is clang, else g++.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
export LC_ALL=C

CC=${TEST_CC:-cc}
SAN=${TEST_SANFLAGS:-}
if [ -n "${TEST_CXX:-}" ]; then
    CXX=$TEST_CXX
elif [[ $CC == *clang* ]]; then
    CXX=clang++
else
    CXX=g++
fi
command -v "$CXX" >/dev/null 2>&1 || CXX=''

W=$TMP/install-e2e
rm -rf "$W"
mkdir -p "$W"
dest=$TMP/i
rm -rf "$dest"
lib=$dest/usr/lib
inc=$dest/usr/include
pc="env PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$lib/pkgconfig pkg-config"
run() { LD_LIBRARY_PATH=$lib "$@"; }
WFLAGS="-Wall -Wextra -Werror"

# cmp_out NAME WANT-FILE CMD...: PASS when CMD exits 0 and prints exactly WANT.
cmp_out() {
    local name=$1 want=$2 out rc
    shift 2
    out=$("$@" 2>"$W/stderr"); rc=$?
    if [ $rc -eq 0 ] && [ "$out" = "$(cat "$want")" ]; then
        pass "$name"
    else
        fail "$name" "exit $rc; got: $(printf '%s' "$out" | head -c 600); stderr: $(head -c 300 "$W/stderr")"
    fi
}

# compile NAME LOG CMD...: PASS when CMD succeeds, else FAIL with the log's head.
compile() {
    local name=$1 log=$2
    shift 2
    if "$@" >"$log" 2>&1; then pass "$name"; return 0; fi
    fail "$name" "$(head -c 800 "$log")"
    return 1
}

# --- the staged install -------------------------------------------------------
if make -s BUILD="$BUILD" install DESTDIR="$dest" PREFIX=/usr >"$W/install.log" 2>&1; then
    pass "make install DESTDIR=\$TMP/i PREFIX=/usr"
else
    fail "make install DESTDIR=\$TMP/i PREFIX=/usr" "$(tail -3 "$W/install.log")"
    skip_block "everything built against the install" "make install failed" 35
    exit 0
fi
cflags=$(echo $($pc --cflags libgguf 2>&1))
libs=$(echo $($pc --libs libgguf 2>&1))
if [ "$cflags" = "-I$inc" ] && [ "$libs" = "-L$lib -lgguf" ] &&
   [ "$($pc --modversion libgguf 2>&1)" = "$(sed -n 's/^VERSION *:= *//p' Makefile)" ]; then
    pass "pkg-config: -I\${includedir}, -L\${libdir} -lgguf, the Makefile's version"
else
    fail "pkg-config: -I\${includedir}, -L\${libdir} -lgguf, the Makefile's version" "cflags '$cflags' libs '$libs'"
fi

# --- a. a C++ program, installed headers only ---------------------------------
cat >"$W/use.cpp" <<'CPP'
#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include <ggufkit/vocab.h>
#include <ggufkit/arch.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    gguf_error err = gguf_error();
    const float x[4] = { 1.5f, -2.0f, 0.25f, 1024.0f };
    const int64_t ne[2] = { 2, 2 };
    gguf_writer *w = gguf_writer_new();
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, "cxx-test");
    gguf_writer_set_u32(w, "test.answer", 42);
    if (gguf_writer_error(w)) {
        std::fprintf(stderr, "setter: %s\n", gguf_writer_error(w)->msg);
        return 1;
    }
    if (gguf_writer_add_tensor(w, "t.weight", GGUF_DT_F32, 2, ne, &err) != 0 ||
        gguf_writer_begin(w, argv[1], &err) != 0 ||
        gguf_writer_write_tensor(w, x, sizeof x, &err) != 0 ||
        gguf_writer_finish(w, &err) != 0) {
        std::fprintf(stderr, "write: %s (%s)\n", err.msg, gguf_errcode_name(err.code));
        return 1;
    }
    gguf_writer_free(w);

    gguf_file *f = gguf_open(argv[1], 0, &err);
    if (!f) {
        std::fprintf(stderr, "open: %s\n", err.msg);
        return 1;
    }
    uint32_t answer = 0;
    gguf_str arch;
    if (gguf_get_u32(f, "test.answer", &answer, &err) != 0 ||
        gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &arch, &err) != 0) {
        std::fprintf(stderr, "get: %s\n", err.msg);
        return 1;
    }
    const gguf_tensor *t = gguf_lookup_tensor(f, "t.weight");
    if (!t || gguf_lookup_tensor(f, "t.bias")) {
        std::fprintf(stderr, "lookup failed\n");
        return 1;
    }
    std::string line = "arch=" + std::string(arch.ptr, (size_t)arch.len);
    std::printf("%s answer=%" PRIu32 " gguf=%" PRIu32 " lib=%s\n", line.c_str(), answer,
                gguf_file_version(f), gguf_version());
    std::printf("%s %s [%" PRId64 ", %" PRId64 "] %" PRIu64 " bytes:", t->name,
                gguf_dtype_name(t->type), t->ne[0], t->ne[1], t->nbytes);
    for (uint64_t i = 0; i < t->nbytes; i++)
        std::printf("%s%02x", i % 4 ? "" : " ", t->data[i]);
    std::printf("\nvalues:");
    for (int64_t i = 0; i < t->n_elements; i++) {
        float v;
        std::memcpy(&v, t->data + 4 * i, 4);
        std::printf(" %g", v);
    }
    std::printf("\nf16(1.5)=%04x QK_K=%d\n", (unsigned)gguf_f32_to_f16(1.5f), GGUF_QK_K);
    gguf_close(f);
    return 0;
}
CPP
cat >"$W/use.want" <<'OUT'
arch=cxx-test answer=42 gguf=3 lib=@VERSION@
t.weight f32 [2, 2] 16 bytes: 0000c03f 000000c0 0000803e 00008044
values: 1.5 -2 0.25 1024
f16(1.5)=3e00 QK_K=256
OUT
version=$(sed -n 's/^VERSION *:= *//p' Makefile)
sed -i "s/@VERSION@/$version/" "$W/use.want"

if [ -z "$CXX" ]; then
    skip_block "C++11 program against the installed headers" "no C++ compiler (g++/clang++)" 3
else
    if compile "C++11 -pedantic-errors program builds with pkg-config ($CXX)" "$W/cxx.log" \
        $CXX -std=c++11 $WFLAGS -pedantic-errors $SAN $cflags -o "$W/use-cxx" "$W/use.cpp" $libs; then
        cmp_out "C++ program: writes, opens, reads a key and a tensor's bytes" "$W/use.want" \
            run "$W/use-cxx" "$W/cxx.gguf"
        # the file is GGUF whoever reads it: magic and version from the bytes
        check "C++ program's file starts GGUF v3" \
            test "$(od -An -tx1 -N8 "$W/cxx.gguf" | tr -d ' \n')" = 4747554603000000
    else
        skip_block "C++ program run" "it did not build" 2
    fi
fi

# --- b. next to ggml: one translation unit, one program ---------------------------
# A real ggml.h with ggml's gguf.h beside it, if the machine has one (or
# GGML_INCLUDE names its directory); else headers of ggml's shape written here.
ggml_dir=''
for d in ${GGML_INCLUDE:-} /usr/include /usr/local/include /usr/include/ggml /usr/local/include/ggml; do
    if [ -f "$d/ggml.h" ] && [ -f "$d/gguf.h" ]; then ggml_dir=$d; break; fi
done
mock=$W/ggml
mkdir -p "$mock"
if [ -n "$ggml_dir" ]; then
    echo "# using the real ggml headers in $ggml_dir"
    ggml_inc="-I$ggml_dir -I$mock"
    have_common=$([ -f "$ggml_dir/ggml-common.h" ] && echo 1 || echo 0)
else
    echo "# no ggml.h on this machine: using ggml-shaped headers"
    ggml_inc="-I$mock"
    have_common=1
    cat >"$mock/ggml.h" <<'H'
/* ggml.h as ggml (ggml/include/ggml.h) declares the names that could clash. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef GGML_SHARED
#  define GGML_API __attribute__((visibility("default"))) extern
#else
#  define GGML_API extern
#endif

#define GGML_FILE_MAGIC   0x67676d6c
#define GGML_FILE_VERSION 2
#define GGML_QNT_VERSION  2
#define GGML_QNT_VERSION_FACTOR 1000
#define GGML_MAX_DIMS     4
#define GGML_MAX_PARAMS   2048
#define GGML_MAX_SRC      10
#define GGML_MAX_N_THREADS 512
#define GGML_MAX_OP_PARAMS 64
#define GGML_MAX_NAME     64
#define GGML_DEFAULT_N_THREADS 4
#define GGML_DEFAULT_GRAPH_SIZE 2048
#define GGML_MEM_ALIGN    16
#define GGML_EXIT_SUCCESS 0
#define GGML_EXIT_ABORTED 1
#define GGML_PAD(x, n) (((x) + (n) - 1) & ~((n) - 1))

#ifdef __cplusplus
extern "C" {
#endif

typedef uint16_t ggml_fp16_t;
GGML_API float       ggml_fp16_to_fp32(ggml_fp16_t);
GGML_API ggml_fp16_t ggml_fp32_to_fp16(float);
GGML_API void        ggml_fp16_to_fp32_row(const ggml_fp16_t *, float *, int64_t);
GGML_API void        ggml_fp32_to_fp16_row(const float *, ggml_fp16_t *, int64_t);

typedef struct { uint16_t bits; } ggml_bf16_t;

struct ggml_object;
struct ggml_context;
struct ggml_cgraph;

enum ggml_type {
    GGML_TYPE_F32     = 0,
    GGML_TYPE_F16     = 1,
    GGML_TYPE_Q4_0    = 2,
    GGML_TYPE_Q4_1    = 3,
    GGML_TYPE_Q5_0    = 6,
    GGML_TYPE_Q5_1    = 7,
    GGML_TYPE_Q8_0    = 8,
    GGML_TYPE_Q8_1    = 9,
    GGML_TYPE_Q2_K    = 10,
    GGML_TYPE_Q3_K    = 11,
    GGML_TYPE_Q4_K    = 12,
    GGML_TYPE_Q5_K    = 13,
    GGML_TYPE_Q6_K    = 14,
    GGML_TYPE_Q8_K    = 15,
    GGML_TYPE_IQ2_XXS = 16,
    GGML_TYPE_IQ2_XS  = 17,
    GGML_TYPE_IQ3_XXS = 18,
    GGML_TYPE_IQ1_S   = 19,
    GGML_TYPE_IQ4_NL  = 20,
    GGML_TYPE_IQ3_S   = 21,
    GGML_TYPE_IQ2_S   = 22,
    GGML_TYPE_IQ4_XS  = 23,
    GGML_TYPE_I8      = 24,
    GGML_TYPE_I16     = 25,
    GGML_TYPE_I32     = 26,
    GGML_TYPE_I64     = 27,
    GGML_TYPE_F64     = 28,
    GGML_TYPE_IQ1_M   = 29,
    GGML_TYPE_BF16    = 30,
    GGML_TYPE_TQ1_0   = 34,
    GGML_TYPE_TQ2_0   = 35,
    GGML_TYPE_COUNT   = 39,
};

enum ggml_ftype {
    GGML_FTYPE_UNKNOWN     = -1,
    GGML_FTYPE_ALL_F32     = 0,
    GGML_FTYPE_MOSTLY_F16  = 1,
    GGML_FTYPE_MOSTLY_Q4_0 = 2,
};

struct ggml_tensor {
    enum ggml_type type;
    int64_t ne[GGML_MAX_DIMS];
    size_t  nb[GGML_MAX_DIMS];
    void  * data;
    char    name[GGML_MAX_NAME];
};

typedef void (*ggml_to_float_t)  (const void  * x, float * y, int64_t k);
typedef void (*ggml_from_float_t)(const float * x, void  * y, int64_t k);

struct ggml_type_traits {
    const char             * type_name;
    int64_t                  blck_size;
    int64_t                  blck_size_interleave;
    size_t                   type_size;
    bool                     is_quantized;
    ggml_to_float_t          to_float;
    ggml_from_float_t        from_float_ref;
};

GGML_API const struct ggml_type_traits * ggml_get_type_traits(enum ggml_type type);
GGML_API int64_t      ggml_blck_size(enum ggml_type type);
GGML_API size_t       ggml_type_size(enum ggml_type type);
GGML_API size_t       ggml_row_size (enum ggml_type type, int64_t ne);
GGML_API const char * ggml_type_name(enum ggml_type type);
GGML_API bool         ggml_is_quantized(enum ggml_type type);
GGML_API size_t       ggml_nbytes(const struct ggml_tensor * tensor);

#ifdef __cplusplus
}
#endif
H
    cat >"$mock/ggml-common.h" <<'H'
/* The block macros and types of ggml's ggml-common.h (C form). */
#pragma once
#include <stdint.h>
typedef uint16_t ggml_half;
typedef uint32_t ggml_half2;
#define QK_K 256
#define K_SCALE_SIZE 12
#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK8_1 32
#define QK4_NL 32
typedef struct { ggml_half d; uint8_t qs[QK4_0 / 2]; } block_q4_0;
typedef struct { ggml_half d; ggml_half m; uint8_t qs[QK4_1 / 2]; } block_q4_1;
typedef struct { ggml_half d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; } block_q5_0;
typedef struct { ggml_half d; int8_t qs[QK8_0]; } block_q8_0;
typedef struct { ggml_half d; ggml_half dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K/2]; } block_q4_K;
typedef struct { uint8_t ql[QK_K/2]; uint8_t qh[QK_K/4]; int8_t scales[QK_K/16]; ggml_half d; } block_q6_K;
typedef struct { float d; int8_t qs[QK_K]; int16_t bsums[QK_K/16]; } block_q8_K;
H
    cat >"$mock/gguf.h" <<'H'
/* ggml's gguf.h (ggml/include/gguf.h): its whole API, as ggml declares it. */
#pragma once

#include "ggml.h"

#include <stdbool.h>
#include <stdint.h>

#define GGUF_MAGIC   "GGUF"
#define GGUF_VERSION 3

#define GGUF_KEY_GENERAL_ALIGNMENT "general.alignment"

#define GGUF_DEFAULT_ALIGNMENT 32

#ifdef  __cplusplus
extern "C" {
#endif

    enum gguf_type {
        GGUF_TYPE_UINT8   = 0,
        GGUF_TYPE_INT8    = 1,
        GGUF_TYPE_UINT16  = 2,
        GGUF_TYPE_INT16   = 3,
        GGUF_TYPE_UINT32  = 4,
        GGUF_TYPE_INT32   = 5,
        GGUF_TYPE_FLOAT32 = 6,
        GGUF_TYPE_BOOL    = 7,
        GGUF_TYPE_STRING  = 8,
        GGUF_TYPE_ARRAY   = 9,
        GGUF_TYPE_UINT64  = 10,
        GGUF_TYPE_INT64   = 11,
        GGUF_TYPE_FLOAT64 = 12,
        GGUF_TYPE_COUNT,       // marks the end of the enum
    };

    struct gguf_context;

    struct gguf_init_params {
        bool no_alloc;
        struct ggml_context ** ctx;
    };

    GGML_API struct gguf_context * gguf_init_empty(void);
    GGML_API struct gguf_context * gguf_init_from_file(const char * fname, struct gguf_init_params params);

    GGML_API void gguf_free(struct gguf_context * ctx);

    GGML_API const char * gguf_type_name(enum gguf_type type);

    GGML_API uint32_t gguf_get_version    (const struct gguf_context * ctx);
    GGML_API size_t   gguf_get_alignment  (const struct gguf_context * ctx);
    GGML_API size_t   gguf_get_data_offset(const struct gguf_context * ctx);

    GGML_API int64_t      gguf_get_n_kv(const struct gguf_context * ctx);
    GGML_API int64_t      gguf_find_key(const struct gguf_context * ctx, const char * key);
    GGML_API const char * gguf_get_key (const struct gguf_context * ctx, int64_t key_id);

    GGML_API enum gguf_type gguf_get_kv_type (const struct gguf_context * ctx, int64_t key_id);
    GGML_API enum gguf_type gguf_get_arr_type(const struct gguf_context * ctx, int64_t key_id);

    GGML_API uint8_t      gguf_get_val_u8  (const struct gguf_context * ctx, int64_t key_id);
    GGML_API int8_t       gguf_get_val_i8  (const struct gguf_context * ctx, int64_t key_id);
    GGML_API uint16_t     gguf_get_val_u16 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API int16_t      gguf_get_val_i16 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API uint32_t     gguf_get_val_u32 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API int32_t      gguf_get_val_i32 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API float        gguf_get_val_f32 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API uint64_t     gguf_get_val_u64 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API int64_t      gguf_get_val_i64 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API double       gguf_get_val_f64 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API bool         gguf_get_val_bool(const struct gguf_context * ctx, int64_t key_id);
    GGML_API const char * gguf_get_val_str (const struct gguf_context * ctx, int64_t key_id);
    GGML_API const void * gguf_get_val_data(const struct gguf_context * ctx, int64_t key_id);
    GGML_API size_t       gguf_get_arr_n   (const struct gguf_context * ctx, int64_t key_id);
    GGML_API const void * gguf_get_arr_data(const struct gguf_context * ctx, int64_t key_id);
    GGML_API const char * gguf_get_arr_str (const struct gguf_context * ctx, int64_t key_id, size_t i);

    GGML_API int64_t        gguf_get_n_tensors    (const struct gguf_context * ctx);
    GGML_API int64_t        gguf_find_tensor      (const struct gguf_context * ctx, const char * name);
    GGML_API size_t         gguf_get_tensor_offset(const struct gguf_context * ctx, int64_t tensor_id);
    GGML_API const char *   gguf_get_tensor_name  (const struct gguf_context * ctx, int64_t tensor_id);
    GGML_API enum ggml_type gguf_get_tensor_type  (const struct gguf_context * ctx, int64_t tensor_id);
    GGML_API size_t         gguf_get_tensor_size  (const struct gguf_context * ctx, int64_t tensor_id);

    GGML_API int64_t gguf_remove_key(struct gguf_context * ctx, const char * key);

    GGML_API void gguf_set_val_u8  (struct gguf_context * ctx, const char * key, uint8_t      val);
    GGML_API void gguf_set_val_i8  (struct gguf_context * ctx, const char * key, int8_t       val);
    GGML_API void gguf_set_val_u16 (struct gguf_context * ctx, const char * key, uint16_t     val);
    GGML_API void gguf_set_val_i16 (struct gguf_context * ctx, const char * key, int16_t      val);
    GGML_API void gguf_set_val_u32 (struct gguf_context * ctx, const char * key, uint32_t     val);
    GGML_API void gguf_set_val_i32 (struct gguf_context * ctx, const char * key, int32_t      val);
    GGML_API void gguf_set_val_f32 (struct gguf_context * ctx, const char * key, float        val);
    GGML_API void gguf_set_val_u64 (struct gguf_context * ctx, const char * key, uint64_t     val);
    GGML_API void gguf_set_val_i64 (struct gguf_context * ctx, const char * key, int64_t      val);
    GGML_API void gguf_set_val_f64 (struct gguf_context * ctx, const char * key, double       val);
    GGML_API void gguf_set_val_bool(struct gguf_context * ctx, const char * key, bool         val);
    GGML_API void gguf_set_val_str (struct gguf_context * ctx, const char * key, const char * val);

    GGML_API void gguf_set_arr_data(struct gguf_context * ctx, const char * key, enum gguf_type type, const void * data, size_t n);
    GGML_API void gguf_set_arr_str (struct gguf_context * ctx, const char * key, const char ** data, size_t n);

    GGML_API void gguf_set_kv(struct gguf_context * ctx, const struct gguf_context * src);
    GGML_API void gguf_add_tensor(struct gguf_context * ctx, const struct ggml_tensor * tensor);
    GGML_API void gguf_set_tensor_type(struct gguf_context * ctx, const char * name, enum ggml_type type);
    GGML_API void gguf_set_tensor_data(struct gguf_context * ctx, const char * name, const void * data);

    GGML_API bool gguf_write_to_file(const struct gguf_context * ctx, const char * fname, bool only_meta);
    GGML_API size_t gguf_get_meta_size(const struct gguf_context * ctx);
    GGML_API void   gguf_get_meta_data(const struct gguf_context * ctx, void * data);

#ifdef  __cplusplus
}
#endif
H
fi

# The mock libggml: every function the TU below calls, plus (with our own
# headers) every one of ggml's gguf.h, with trivial bodies that say "mock".
cat >"$W/mockggml.c" <<'C'
#include "ggml.h"
#include "gguf.h"
static struct gguf_context *mock_ctx(void) { static char c; return (struct gguf_context *)(void *)&c; }
float ggml_fp16_to_fp32(ggml_fp16_t h) { return (float)h; }
ggml_fp16_t ggml_fp32_to_fp16(float f) { return (ggml_fp16_t)f; }
size_t ggml_row_size(enum ggml_type type, int64_t ne) { (void)type; return (size_t)ne; }
const char *ggml_type_name(enum ggml_type type) { (void)type; return "mock"; }
const struct ggml_type_traits *ggml_get_type_traits(enum ggml_type type) { (void)type; return NULL; }
struct gguf_context *gguf_init_empty(void) { return mock_ctx(); }
struct gguf_context *gguf_init_from_file(const char *fname, struct gguf_init_params params) { (void)fname; (void)params; return mock_ctx(); }
void gguf_free(struct gguf_context *ctx) { (void)ctx; }
const char *gguf_type_name(enum gguf_type type) { (void)type; return "mock"; }
uint32_t gguf_get_version(const struct gguf_context *ctx) { (void)ctx; return 99; }
size_t gguf_get_alignment(const struct gguf_context *ctx) { (void)ctx; return 1; }
size_t gguf_get_data_offset(const struct gguf_context *ctx) { (void)ctx; return 0; }
int64_t gguf_get_n_kv(const struct gguf_context *ctx) { (void)ctx; return 0; }
int64_t gguf_find_key(const struct gguf_context *ctx, const char *key) { (void)ctx; (void)key; return -1; }
const char *gguf_get_key(const struct gguf_context *ctx, int64_t id) { (void)ctx; (void)id; return "mock"; }
int64_t gguf_get_n_tensors(const struct gguf_context *ctx) { (void)ctx; return 0; }
int64_t gguf_find_tensor(const struct gguf_context *ctx, const char *name) { (void)ctx; (void)name; return -7; }
const char *gguf_get_tensor_name(const struct gguf_context *ctx, int64_t id) { (void)ctx; (void)id; return "mock"; }
enum ggml_type gguf_get_tensor_type(const struct gguf_context *ctx, int64_t id) { (void)ctx; (void)id; return GGML_TYPE_F32; }
size_t gguf_get_tensor_size(const struct gguf_context *ctx, int64_t id) { (void)ctx; (void)id; return 0; }
bool gguf_write_to_file(const struct gguf_context *ctx, const char *fname, bool only_meta) { (void)ctx; (void)fname; (void)only_meta; return false; }
void gguf_set_val_u32(struct gguf_context *ctx, const char *key, uint32_t val) { (void)ctx; (void)key; (void)val; }
#ifdef MOCK_ALL
#define CTX const struct gguf_context *ctx
enum gguf_type gguf_get_kv_type(CTX, int64_t id) { (void)ctx; (void)id; return GGUF_TYPE_UINT8; }
enum gguf_type gguf_get_arr_type(CTX, int64_t id) { (void)ctx; (void)id; return GGUF_TYPE_UINT8; }
uint8_t gguf_get_val_u8(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
int8_t gguf_get_val_i8(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
uint16_t gguf_get_val_u16(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
int16_t gguf_get_val_i16(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
uint32_t gguf_get_val_u32(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
int32_t gguf_get_val_i32(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
float gguf_get_val_f32(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
uint64_t gguf_get_val_u64(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
int64_t gguf_get_val_i64(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
double gguf_get_val_f64(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
bool gguf_get_val_bool(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
const char *gguf_get_val_str(CTX, int64_t id) { (void)ctx; (void)id; return "mock"; }
const void *gguf_get_val_data(CTX, int64_t id) { (void)ctx; (void)id; return NULL; }
size_t gguf_get_arr_n(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
const void *gguf_get_arr_data(CTX, int64_t id) { (void)ctx; (void)id; return NULL; }
const char *gguf_get_arr_str(CTX, int64_t id, size_t i) { (void)ctx; (void)id; (void)i; return "mock"; }
size_t gguf_get_tensor_offset(CTX, int64_t id) { (void)ctx; (void)id; return 0; }
size_t gguf_get_meta_size(CTX) { (void)ctx; return 0; }
void gguf_get_meta_data(CTX, void *data) { (void)ctx; (void)data; }
#undef CTX
#define CTX struct gguf_context *ctx, const char *key
int64_t gguf_remove_key(CTX) { (void)ctx; (void)key; return -1; }
void gguf_set_val_u8(CTX, uint8_t v) { (void)ctx; (void)key; (void)v; }
void gguf_set_val_i8(CTX, int8_t v) { (void)ctx; (void)key; (void)v; }
void gguf_set_val_u16(CTX, uint16_t v) { (void)ctx; (void)key; (void)v; }
void gguf_set_val_i16(CTX, int16_t v) { (void)ctx; (void)key; (void)v; }
void gguf_set_val_i32(CTX, int32_t v) { (void)ctx; (void)key; (void)v; }
void gguf_set_val_f32(CTX, float v) { (void)ctx; (void)key; (void)v; }
void gguf_set_val_u64(CTX, uint64_t v) { (void)ctx; (void)key; (void)v; }
void gguf_set_val_i64(CTX, int64_t v) { (void)ctx; (void)key; (void)v; }
void gguf_set_val_f64(CTX, double v) { (void)ctx; (void)key; (void)v; }
void gguf_set_val_bool(CTX, bool v) { (void)ctx; (void)key; (void)v; }
void gguf_set_val_str(CTX, const char *v) { (void)ctx; (void)key; (void)v; }
void gguf_set_arr_data(CTX, enum gguf_type t, const void *d, size_t n) { (void)ctx; (void)key; (void)t; (void)d; (void)n; }
void gguf_set_arr_str(CTX, const char **d, size_t n) { (void)ctx; (void)key; (void)d; (void)n; }
#undef CTX
void gguf_set_kv(struct gguf_context *ctx, const struct gguf_context *src) { (void)ctx; (void)src; }
void gguf_add_tensor(struct gguf_context *ctx, const struct ggml_tensor *t) { (void)ctx; (void)t; }
void gguf_set_tensor_type(struct gguf_context *ctx, const char *name, enum ggml_type type) { (void)ctx; (void)name; (void)type; }
void gguf_set_tensor_data(struct gguf_context *ctx, const char *name, const void *data) { (void)ctx; (void)name; (void)data; }
#endif
C

# The program: ggml's headers first, then all of libgguf's; both APIs used.
cat >"$W/use_ggml.c" <<'C'
#include "ggml.h"
#if HAVE_GGML_COMMON
#include "ggml-common.h"
#endif
#include "gguf.h"

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include <ggufkit/vocab.h>
#include <ggufkit/arch.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#if HAVE_GGML_COMMON
_Static_assert(sizeof(block_q4_0) == sizeof(gguf_block_q4_0), "q4_0 blocks agree");
_Static_assert(sizeof(block_q8_0) == sizeof(gguf_block_q8_0), "q8_0 blocks agree");
_Static_assert(sizeof(block_q4_K) == sizeof(gguf_block_q4_K), "q4_K blocks agree");
_Static_assert(QK_K == GGUF_QK_K, "QK_K agrees");
#endif
_Static_assert((int)GGML_TYPE_Q4_K == (int)GGUF_DT_Q4_K, "type ids agree");
_Static_assert((int)GGUF_TYPE_FLOAT32 == (int)GGUF_VT_F32, "value type ids agree");
_Static_assert(GGML_MAX_DIMS == GGUF_MAX_DIMS, "GGML_MAX_DIMS agrees");
_Static_assert(sizeof(ggml_fp16_t) == sizeof(gguf_half), "half agrees");

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    /* ggml's gguf API (the mock library) */
    struct gguf_context *ctx = gguf_init_empty();
    gguf_set_val_u32(ctx, "x", 1);
    printf("ggml: %s %s v%" PRIu32 " find=%" PRId64 " %s GGUF_VERSION=%d\n",
           ggml_type_name(GGML_TYPE_Q4_K), gguf_type_name(GGUF_TYPE_UINT32),
           gguf_get_version(ctx), gguf_find_tensor(ctx, "t.weight"),
           gguf_write_to_file(ctx, argv[1], false) ? "wrote" : "no-write", GGUF_VERSION);
    gguf_free(ctx);

    /* libgguf */
    gguf_error err = { "", 0 };
    const float x[4] = { 1.5f, -2.0f, 0.25f, 1024.0f };
    const int64_t ne[2] = { 2, 2 };
    gguf_writer *w = gguf_writer_new();
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, "c-test");
    gguf_writer_set_u32(w, "test.answer", 42);
    if (gguf_writer_error(w) ||
        gguf_writer_add_tensor(w, "t.weight", GGUF_DT_F32, 2, ne, &err) != 0 ||
        gguf_writer_begin(w, argv[1], &err) != 0 ||
        gguf_writer_write_tensor(w, x, sizeof x, &err) != 0 ||
        gguf_writer_finish(w, &err) != 0) {
        fprintf(stderr, "write: %s\n", err.msg);
        return 1;
    }
    gguf_writer_free(w);
    gguf_file *f = gguf_open(argv[1], 0, &err);
    if (!f) {
        fprintf(stderr, "open: %s\n", err.msg);
        return 1;
    }
    uint32_t answer = 0;
    gguf_str arch = { NULL, 0 };
    const gguf_tensor *t = gguf_lookup_tensor(f, "t.weight");
    if (gguf_get_u32(f, "test.answer", &answer, &err) || gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &arch, &err) || !t) {
        fprintf(stderr, "read: %s\n", err.msg);
        return 1;
    }
    printf("libgguf: %s %s v%" PRIu32 " arch=%.*s answer=%" PRIu32 "\n", gguf_dtype_name(GGUF_DT_Q4_K),
           gguf_vtype_name(GGUF_VT_U32), gguf_file_version(f), (int)arch.len, arch.ptr, answer);
    printf("%s %s [%" PRId64 ", %" PRId64 "] %" PRIu64 " bytes:", t->name, gguf_dtype_name(t->type),
           t->ne[0], t->ne[1], t->nbytes);
    for (uint64_t i = 0; i < t->nbytes; i++)
        printf("%s%02x", i % 4 ? "" : " ", t->data[i]);
    printf("\n");
    gguf_close(f);
    return 0;
}
C
cat >"$W/use_ggml.want" <<'OUT'
ggml: mock mock v99 find=-7 no-write GGUF_VERSION=3
libgguf: q4_K u32 v3 arch=c-test answer=42
t.weight f32 [2, 2] 16 bytes: 0000c03f 000000c0 0000803e 00008044
OUT

CSTD="-std=c11 -D_POSIX_C_SOURCE=200809L"
b0=$CHECKS # this block reports 10 checks
mockdefs=$([ -z "$ggml_dir" ] && echo -DMOCK_ALL)
if compile "ggml.h + ggml's gguf.h + the four libgguf headers: one C11 translation unit" "$W/cc-ggml.log" \
       $CC $CSTD $WFLAGS $SAN -DHAVE_GGML_COMMON=$have_common $ggml_inc $cflags -c -o "$W/use_ggml.o" "$W/use_ggml.c" &&
   compile "mock libggml (ggml's gguf.h API) compiles" "$W/cc-mock.log" \
       $CC $CSTD $WFLAGS $SAN $mockdefs $ggml_inc -c -o "$W/mockggml.o" "$W/mockggml.c"; then
    # shared libgguf: the program's calls to ggml's gguf_* reach the mock
    if compile "program links mock libggml and libgguf.so" "$W/ld-ggml.log" \
           $CC $SAN -o "$W/use-ggml" "$W/use_ggml.o" "$W/mockggml.o" $libs; then
        cmp_out "program using ggml's and libgguf's APIs runs" "$W/use_ggml.want" run "$W/use-ggml" "$W/c.gguf"
    else
        skip_block "program using ggml's and libgguf's APIs runs" "it did not link" 1
    fi
    # every object of libgguf.a in one link with libggml: no duplicate symbol
    priv=$($pc --static --libs-only-l libgguf); priv=${priv//-lgguf/}
    if compile "mock libggml + every object of libgguf.a: no duplicate symbols" "$W/ld-static.log" \
           $CC $SAN -o "$W/use-ggml-static" "$W/use_ggml.o" "$W/mockggml.o" \
           -Wl,--whole-archive "$lib/libgguf.a" -Wl,--no-whole-archive $priv; then
        cmp_out "the static program runs the same" "$W/use_ggml.want" "$W/use-ggml-static" "$W/c-static.gguf"
    else
        skip_block "the static program runs the same" "it did not link" 1
    fi
    # control: the same link does catch a clash (a libggml that also defined gguf_open)
    printf '#include <stddef.h>\nvoid *gguf_open(const char *p, unsigned f, void *e);\nvoid *gguf_open(const char *p, unsigned f, void *e) { (void)p; (void)f; (void)e; return NULL; }\n' >"$W/clash.c"
    out=$($CC $CSTD $SAN -c -o "$W/clash.o" "$W/clash.c" 2>&1 &&
          $CC $SAN -o "$W/clash" "$W/use_ggml.o" "$W/mockggml.o" "$W/clash.o" \
              -Wl,--whole-archive "$lib/libgguf.a" -Wl,--no-whole-archive $priv 2>&1)
    if [[ $out == *"multiple definition of \`gguf_open'"* ]]; then
        pass "control: a clashing gguf_open in the other library fails that link"
    else
        fail "control: a clashing gguf_open in the other library fails that link" "$(head -c 400 <<<"$out")"
    fi
    # in ggml's words: none of its gguf.h functions is defined by libgguf.so
    nm --defined-only --extern-only "$W/mockggml.o" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort >"$W/ggml.syms"
    nm -D --defined-only "$lib/libgguf.so.$version" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort >"$W/so.syms"
    both=$(comm -12 "$W/ggml.syms" "$W/so.syms" | tr '\n' ' ')
    if [ "$(grep -c '^gguf_' "$W/ggml.syms")" -ge 20 ] && [ -z "$both" ]; then
        pass "libgguf.so defines none of ggml's $(grep -c '^gguf_' "$W/ggml.syms") gguf_* functions"
    else
        fail "libgguf.so defines none of ggml's gguf_* functions" "shared: ${both:-none}; mock has $(wc -l <"$W/ggml.syms")"
    fi
    # and the other include order, as C and as C++
    printf '#include <ggufkit/gguf.h>\n#include <ggufkit/quants.h>\n#include <ggufkit/vocab.h>\n#include <ggufkit/arch.h>\n#include "ggml.h"\n#include "gguf.h"\nint main(void) { return GGUF_VERSION == 3 && GGUF_DEFAULT_ALIGNMENT == 32 ? 0 : 1; }\n' >"$W/order.c"
    check "libgguf headers first, then ggml's: C11" $CC $CSTD $WFLAGS -fsyntax-only $cflags $ggml_inc "$W/order.c"
    if [ -n "$CXX" ]; then
        check "both header sets in one C++11 translation unit" \
            $CXX -std=c++11 $WFLAGS -fsyntax-only $cflags $ggml_inc -x c++ "$W/order.c"
    else
        skip "both header sets in one C++11 translation unit" "no C++ compiler"
    fi
else
    skip_block "ggml side by side" "the translation unit or the mock did not compile" $((b0 + 10 - CHECKS))
fi

# --- c. exported names ---------------------------------------------------------
so=$lib/libgguf.so.$version
syms=$(nm -D --defined-only "$so" 2>&1 | awk 'NF == 3 { print $3 }')
n=$(grep -c . <<<"$syms")
bad=$(grep -v '^gguf_' <<<"$syms" | tr '\n' ' ')
if [ "$n" -ge 100 ] && [ -z "$bad" ]; then
    pass "libgguf.so: all $n exported symbols start with gguf_"
else
    fail "libgguf.so: every exported symbol starts with gguf_" "$n symbols; not gguf_: ${bad:-none}"
fi
asyms=$(nm --defined-only --extern-only "$lib/libgguf.a" 2>&1 | awk 'NF == 3 { print $3 }')
n=$(grep -c . <<<"$asyms")
bad=$(grep -v '^gguf_' <<<"$asyms" | sort -u | tr '\n' ' ')
if [ "$n" -ge 100 ] && [ -z "$bad" ]; then
    pass "libgguf.a: all $n global symbols start with gguf_"
else
    fail "libgguf.a: every global symbol starts with gguf_" "$n symbols; not gguf_: ${bad:-none}"
fi
# the exported symbols are the recorded ones: the list's first line names
# the major version it is for
major=${version%%.*}
rec=tests/data/libgguf.symbols
recmajor=$(sed -n '1s/^# libgguf\.so\.\([0-9]*\)$/\1/p' "$rec")
gone=$(comm -23 <(grep -v '^#' "$rec" | sort) <(sort <<<"$syms") | tr '\n' ' ')
new=$(comm -13 <(grep -v '^#' "$rec" | sort) <(sort <<<"$syms") | tr '\n' ' ')
if [ "$recmajor" != "$major" ]; then
    fail "libgguf.so exports the symbols recorded for libgguf.so.$major" \
        "$rec is for libgguf.so.${recmajor:-?}: record the new major version's symbols"
elif [ -n "$gone" ]; then
    fail "libgguf.so exports the symbols recorded for libgguf.so.$major" \
        "removed without a major version bump: $gone"
elif [ -n "$new" ]; then
    fail "libgguf.so exports the symbols recorded for libgguf.so.$major" \
        "not recorded in $rec (an addition: record it, minor version): $new"
else
    pass "libgguf.so exports the $(grep -vc '^#' "$rec") symbols recorded for libgguf.so.$major"
fi
# what the shared library leaves undefined is the C library, libm and PCRE2
und=$(nm -D --undefined-only "$so" 2>&1 | awk '{ print $NF }' | grep '^gguf_' | tr '\n' ' ')
check "libgguf.so needs no gguf_ symbol from outside" test -z "$und"

# --- d. SONAME, NEEDED, installed files -----------------------------------------------
soname=$(readelf -d "$so" 2>&1 | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
check "SONAME is libgguf.so.$major (got '$soname')" test "$soname" = "libgguf.so.$major"
check "libgguf.so -> libgguf.so.$major -> libgguf.so.$version" \
    test "$(readlink "$lib/libgguf.so")" = "libgguf.so.$major" -a \
         "$(readlink "$lib/libgguf.so.$major")" = "libgguf.so.$version"
if [ -x "$W/use-ggml" ]; then
    needed=$(readelf -d "$W/use-ggml" 2>&1 | sed -n 's/.*(NEEDED).*\[\(libgguf[^]]*\)\]/\1/p' | tr '\n' ' ')
    check "a program linked with -lgguf records NEEDED libgguf.so.$major (got '$needed')" \
        test "$needed" = "libgguf.so.$major "
else
    skip "a program linked with -lgguf records NEEDED libgguf.so.$major" "the program did not link"
fi
headers=$(ls "$inc/ggufkit" 2>&1 | tr '\n' ' ')
check "installed headers are exactly arch.h gguf.h quants.h vocab.h (got '$headers')" \
    test "$headers" = "arch.h gguf.h quants.h vocab.h "
check "nothing else under include/" test "$(ls "$inc" | tr '\n' ' ')" = "ggufkit "

# --- e. each public header alone --------------------------------------------------
for h in arch gguf quants vocab; do
    printf '#include <ggufkit/%s.h>\n' "$h" >"$W/alone-$h.c"
    check "<ggufkit/$h.h> alone: C11 -Wall -Wextra -Werror -pedantic-errors" \
        $CC -std=c11 $WFLAGS -pedantic-errors -Wstrict-prototypes -Wshadow -fsyntax-only $cflags "$W/alone-$h.c"
    if [ -n "$CXX" ]; then
        check "<ggufkit/$h.h> alone: C++11 -Wall -Wextra -Werror -pedantic-errors" \
            $CXX -std=c++11 $WFLAGS -pedantic-errors -fsyntax-only $cflags -x c++ "$W/alone-$h.c"
    else
        skip "<ggufkit/$h.h> alone: C++11" "no C++ compiler"
    fi
done

# --- f. the documented example ---------------------------------------------------------
ex=docs/examples/gguf-info.c
# docs/libgguf.md holds the file verbatim, in the ```c block after the line
# "<!-- docs/examples/gguf-info.c -->"
awk '/^<!-- docs\/examples\/gguf-info.c -->$/ { m = 1; next }
     m == 1 && /^```c$/ { m = 2; next }
     m == 2 && /^```$/ { exit }
     m == 2 { print }' docs/libgguf.md >"$W/doc-example.c"
if [ -s "$W/doc-example.c" ] && cmp -s "$W/doc-example.c" "$ex"; then
    pass "docs/libgguf.md includes $ex verbatim"
else
    fail "docs/libgguf.md includes $ex verbatim" "$(diff "$ex" "$W/doc-example.c" 2>&1 | head -5)"
fi
sample=$BIN/sample.gguf
if compile "$ex builds against the install: C11 -pedantic-errors, pkg-config" "$W/ex.log" \
       $CC -std=c11 $WFLAGS -pedantic-errors $SAN $cflags -o "$W/gguf-info" "$ex" $libs; then
    if [ -f "$sample" ]; then
        # the expected facts by other routes: header bytes, gguf-inspect, sha256sum
        hdr=$(od -An -tu4 -j4 -N4 "$sample" | tr -d ' ')
        ntens=$(od -An -tu8 -j8 -N8 "$sample" | tr -d ' ')
        js=$("$INSPECT" --json --no-metadata "$sample")
        doff=$(sed -n 's/^ *"data_offset": \([0-9]*\),$/\1/p' <<<"$js")
        arch=$(sed -n 's/^ *"architecture": "\(.*\)",$/\1/p' <<<"$js")
        t0=$(grep -m1 '"index": 0,' <<<"$js")
        tname=$(sed -n 's/.*"name": "\([^"]*\)".*/\1/p' <<<"$t0")
        ttype=$(sed -n 's/.*"type": "\([^"]*\)".*/\1/p' <<<"$t0")
        tshape=$(sed -n 's/.*"shape": \(\[[^]]*\]\).*/\1/p' <<<"$t0")
        tbytes=$(sed -n 's/.*"bytes": \([0-9]*\).*/\1/p' <<<"$t0")
        toff=$(sed -n 's/.*"offset": \([0-9]*\).*/\1/p' <<<"$t0")
        sha=$(tail -c +$((doff + toff + 1)) "$sample" | head -c "$tbytes" | sha256sum | cut -d' ' -f1)
        {
            echo "GGUF version:    $hdr"
            echo "libgguf version: $version"
            echo "architecture:    $arch"
            echo "tensors:         $ntens"
            echo "first tensor:    $tname $ttype $tshape $tbytes bytes"
            echo "sha256:          $sha"
        } >"$W/info.want"
        if [ -n "$arch" ] && [ -n "$tname" ] && [ -n "$tbytes" ] && [ -n "$doff" ]; then
            cmp_out "gguf-info on $BUILD/sample.gguf: version, architecture, first tensor and its sha256" \
                "$W/info.want" run "$W/gguf-info" "$sample"
        else
            fail "gguf-info on $BUILD/sample.gguf" "could not read the expected facts: $(head -c 300 <<<"$js")"
        fi
    else
        skip "gguf-info on $BUILD/sample.gguf" "$sample not built (make all makes it)"
    fi
    # a failure: one line with the message and its code, exit 1
    out=$(run "$W/gguf-info" "$W/no-such.gguf" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq 1 ] && [ "$out" = "gguf-info: $W/no-such.gguf: cannot open: No such file or directory (io)" ]; then
        pass "gguf-info on a missing file: exit 1, the message and its code"
    else
        fail "gguf-info on a missing file: exit 1, the message and its code" "exit $rc: $out"
    fi
else
    skip_block "gguf-info runs" "it did not build" 2
fi
