/*
 * test_torch.c — torch.save archives: zip directory (stored and deflated
 * entries, CRC checks), the pickle machine (state dicts, nested under a
 * key, the global whitelist), tensor views, and the fixture checkpoint.
 */
#include <zlib.h>

#include "torch.h"
#include "zip.h"
#include "testutil.h"

/* --- building archives --------------------------------------------------- */

typedef struct buf {
    uint8_t data[1 << 16];
    size_t  n;
} buf;

static void put(buf *b, const void *p, size_t n) { memcpy(b->data + b->n, p, n); b->n += n; }
static void put8(buf *b, unsigned v) { b->data[b->n++] = (uint8_t)v; }
static void put16(buf *b, unsigned v) { put8(b, v & 0xff); put8(b, v >> 8 & 0xff); }
static void put32(buf *b, uint32_t v) { put16(b, v & 0xffff); put16(b, v >> 16); }
static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

/* pickle BINUNICODE */
static void pstr(buf *b, const char *s) { put8(b, 'X'); put32(b, (uint32_t)strlen(s)); puts_(b, s); }

/* A tensor: _rebuild_tensor_v2(storage(key, numel), offset, size, stride, False, OrderedDict()) */
static void ptensor(buf *b, const char *cls, const char *key, int numel, int offset, int rows,
                    int cols, int stride0)
{
    puts_(b, "ctorch._utils\n_rebuild_tensor_v2\n(");
    put8(b, '(');
    pstr(b, "storage");
    puts_(b, "ctorch\n");
    puts_(b, cls);
    put8(b, '\n');
    pstr(b, key);
    pstr(b, "cpu");
    put8(b, 'K'); put8(b, (unsigned)numel);
    put8(b, 't'); put8(b, 'Q');
    put8(b, 'K'); put8(b, (unsigned)offset);
    put8(b, 'K'); put8(b, (unsigned)rows); put8(b, 'K'); put8(b, (unsigned)cols); put8(b, 0x86);
    put8(b, 'K'); put8(b, (unsigned)stride0); put8(b, 'K'); put8(b, 1); put8(b, 0x86);
    put8(b, 0x89);
    puts_(b, "ccollections\nOrderedDict\n)R");
    put8(b, 't'); put8(b, 'R');
}

typedef struct entry {
    const char    *name;
    const uint8_t *data;
    size_t         n;
    int            deflate;
} entry;

/* A zip with stored (or raw-deflated) entries and a central directory. */
static size_t make_zip(uint8_t *out, const entry *e, int n)
{
    buf *b = calloc(1, sizeof *b);
    uint32_t offs[8], crcs[8], csz[8];
    uint8_t comp[8][4096];
    for (int i = 0; i < n; i++) {
        crcs[i] = (uint32_t)crc32(0, e[i].data, (uInt)e[i].n);
        const uint8_t *d = e[i].data;
        csz[i] = (uint32_t)e[i].n;
        if (e[i].deflate) {
            z_stream s = { 0 };
            deflateInit2(&s, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
            s.next_in = (Bytef *)e[i].data;
            s.avail_in = (uInt)e[i].n;
            s.next_out = comp[i];
            s.avail_out = sizeof comp[i];
            deflate(&s, Z_FINISH);
            csz[i] = (uint32_t)s.total_out;
            deflateEnd(&s);
            d = comp[i];
        }
        offs[i] = (uint32_t)b->n;
        put32(b, 0x04034b50); put16(b, 20); put16(b, 0); put16(b, e[i].deflate ? 8 : 0);
        put32(b, 0); put32(b, crcs[i]); put32(b, csz[i]); put32(b, (uint32_t)e[i].n);
        put16(b, (unsigned)strlen(e[i].name)); put16(b, 0); puts_(b, e[i].name);
        put(b, d, csz[i]);
    }
    size_t cd = b->n;
    for (int i = 0; i < n; i++) {
        put32(b, 0x02014b50); put16(b, 20); put16(b, 20); put16(b, 0);
        put16(b, e[i].deflate ? 8 : 0); put32(b, 0); put32(b, crcs[i]); put32(b, csz[i]);
        put32(b, (uint32_t)e[i].n); put16(b, (unsigned)strlen(e[i].name)); put16(b, 0); put16(b, 0);
        put16(b, 0); put16(b, 0); put32(b, 0); put32(b, offs[i]); puts_(b, e[i].name);
    }
    size_t cd_size = b->n - cd;
    put32(b, 0x06054b50); put16(b, 0); put16(b, 0); put16(b, (unsigned)n); put16(b, (unsigned)n);
    put32(b, (uint32_t)cd_size); put32(b, (uint32_t)cd); put16(b, 0);
    size_t total = b->n;
    memcpy(out, b->data, total);
    free(b);
    return total;
}

static const float values[6] = { 1, 2, 3, 4, 5, 6 };

/* An archive "a/" with a state dict {w: 2x3 f32 tensor}; variant selects a fault. */
static size_t checkpoint(uint8_t *out, int variant)
{
    buf pk = { .n = 0 };
    put8(&pk, 0x80); put8(&pk, 2);
    if (variant == 2) { /* {"model": state_dict, "epoch": 3} */
        put8(&pk, '}'); put8(&pk, '('); pstr(&pk, "epoch"); put8(&pk, 'K'); put8(&pk, 3); pstr(&pk, "model");
    }
    puts_(&pk, variant == 3 ? "cos\nsystem\n)R" : "ccollections\nOrderedDict\n)R");
    put8(&pk, '(');
    pstr(&pk, "w");
    ptensor(&pk, "FloatStorage", "0", 6, 0, 2, 3, variant == 4 ? 1 : 3);
    put8(&pk, 'u');
    if (variant == 2)
        put8(&pk, 'u');
    put8(&pk, '.');
    entry e[3] = {
        { "a/data.pkl", pk.data, variant == 6 ? pk.n - 2 : pk.n, variant == 1 },
        { variant == 5 ? "a/data/9" : "a/data/0", (const uint8_t *)values, sizeof values, 0 },
        { "a/version", (const uint8_t *)"3\n", 2, 0 },
    };
    return make_zip(out, e, 3);
}

START_TEST(test_state_dict)
{
    /* 0 stored, 1 deflated data.pkl, 2 nested under "model" */
    static uint8_t z[1 << 16];
    size_t n = checkpoint(z, _i);
    st_file f;
    gguf_error err;
    ck_assert_msg(torch_parse(z, n, &f, &err) == 0, "variant %d: %s", _i, err.msg);
    ck_assert_uint_eq(f.n, 1);
    ck_assert_str_eq(f.tensors[0].name, "w");
    ck_assert_str_eq(f.tensors[0].dtype, "F32");
    ck_assert_int_eq(f.tensors[0].n_dims, 2);
    ck_assert_int_eq(f.tensors[0].shape[0], 2);
    ck_assert_int_eq(f.tensors[0].shape[1], 3);
    ck_assert_uint_eq(f.tensors[0].nbytes, 24);
    ck_assert(memcmp(f.tensors[0].data, values, 24) == 0);
    st_close(&f);
}
END_TEST

static const char *const faults[] = {
    [3] = "refusing global os.system",
    [4] = "not contiguous",
    [5] = "storage a/data/0 is missing",
    [6] = "pickle",
    [7] = "CRC mismatch",
};

START_TEST(test_faults)
{
    static uint8_t z[1 << 16];
    size_t n = checkpoint(z, _i == 7 ? 0 : _i);
    if (_i == 7) { /* damage one byte of the tensor data */
        uint8_t *p = NULL;
        for (size_t i = 0; i + sizeof values <= n && !p; i++)
            if (!memcmp(z + i, values, sizeof values))
                p = z + i;
        ck_assert_ptr_nonnull(p);
        p[5] ^= 1;
    }
    st_file f;
    gguf_error err;
    ck_assert_int_eq(torch_parse(z, n, &f, &err), -1);
    ck_assert_msg(strstr(err.msg, faults[_i]) != NULL, "variant %d: got '%s'", _i, err.msg);
}
END_TEST

START_TEST(test_not_zip)
{
    static const uint8_t junk[64] = "PK\x05\x06 but not really";
    st_file f;
    gguf_error err;
    ck_assert_int_eq(torch_parse(junk, sizeof junk, &f, &err), -1);
    ck_assert_int_eq(torch_parse(junk, 3, &f, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a zip archive"));
}
END_TEST

START_TEST(test_fixture)
{
    char path[1024];
    st_file f;
    gguf_error err;
    ck_assert_ptr_nonnull(fixture_path(path, sizeof path, "models/wp-llama-5m/torch/pytorch_model.bin"));
    ck_assert_msg(torch_open(path, &f, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(f.n, 39);
    ck_assert_str_eq(f.tensors[0].name, "model.embed_tokens.weight");
    ck_assert_str_eq(f.tensors[0].dtype, "BF16");
    ck_assert_int_eq(f.tensors[0].shape[0], 4096);
    st_close(&f);
    ck_assert_ptr_nonnull(fixture_path(path, sizeof path, "models/wp-llama-5m/meta/consolidated.00.pth"));
    ck_assert_msg(torch_open(path, &f, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(f.n, 39);
    st_close(&f);
}
END_TEST

/* Inputs the fuzzer once broke the reader with: each must be rejected or
 * read without a sanitizer report or a huge allocation. */
START_TEST(test_fuzz_regressions)
{
    static const struct { const char *file, *want; } cases[] = {
        /* declared 4 GB from 10 deflated bytes: refused before allocating */
        { "tests/data/small/fuzz-torch/deflate-size-4gb.zip", "implausible size" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        st_file f;
        gguf_error err;
        ck_assert_int_eq(torch_open(cases[i].file, &f, &err), -1);
        ck_assert_msg(strstr(err.msg, cases[i].want) != NULL, "%s: %s", cases[i].file, err.msg);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("torch");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_state_dict, 0, 3);
    tcase_add_loop_test(tc, test_faults, 3, 8);
    tcase_add_test(tc, test_not_zip);
    tcase_add_test(tc, test_fuzz_regressions);
    int skipped = 0;
    if (fixtures_present())
        tcase_add_test(tc, test_fixture);
    else
        skipped++;
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
