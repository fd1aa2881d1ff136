/*
 * test_llama2c.c — llama2.c checkpoints built here: a v2 file (int8 groups)
 * converts to the dequantized values q * scale, tensors come in llama.cpp's
 * order with the right shapes, damaged headers are refused, and so are
 * values that are not finite (a NaN weight or scale, a product beyond
 * f16's range, a NaN token score), naming the tensor and the element.
 */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <unistd.h>

#include <ggufkit/gguf.h>
#include "llama2c.h"
#include "testutil.h"
#include "write.h"

enum { DIM = 8, HID = 16, LAYERS = 1, HEADS = 2, KVH = 1, VOCAB = 4, SEQ = 4, GROUP = 8 };

static void w32(FILE *fp, int32_t v) { fwrite(&v, 4, 1, fp); }

/* What write_v2 plants (the tests of non-finite values). */
enum poison { CLEAN, NAN_NORM, NAN_SCALE, HUGE_SCALE, NAN_SCORE };

/* v2: header, f32 norms (att, ffn, final), then int8 + scales matrices;
 * with a poison: element 2 of blk.0.ffn_norm NaN, wq's group 3 scale NaN,
 * wq's group 0 scale 1e6 (its products, up to 1.27e8, overflow f16), or
 * token 2's score NaN. */
static void write_v2_poisoned(const char *path, const char *tok, enum poison poison)
{
    FILE *fp = fopen(path, "wb");
    uint8_t hdr[256] = { 0 };
    int32_t h[] = { 0x616b3432, 2, DIM, HID, LAYERS, HEADS, KVH, VOCAB, SEQ };
    memcpy(hdr, h, sizeof h);
    hdr[36] = 1; /* shared classifier */
    int32_t g = GROUP;
    memcpy(hdr + 37, &g, 4);
    fwrite(hdr, 1, 256, fp);
    for (int i = 0; i < 3 * DIM; i++) { /* norms: att, ffn, final */
        float one = poison == NAN_NORM && i == DIM + 2 ? NAN : 1.0f + (float)i;
        fwrite(&one, 4, 1, fp);
    }
    const int kv = DIM / HEADS * KVH;
    const int sizes[][2] = { { VOCAB, DIM }, { DIM, DIM }, { kv, DIM }, { kv, DIM }, { DIM, DIM },
                             { HID, DIM }, { DIM, HID }, { HID, DIM } };
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        int n = sizes[t][0] * sizes[t][1];
        for (int i = 0; i < n; i++) {
            int8_t q = (int8_t)((i * 7 + (int)t) % 255 - 127);
            fwrite(&q, 1, 1, fp);
        }
        for (int i = 0; i < n / GROUP; i++) {
            float s = 0.5f + 0.25f * (float)i + (float)t;
            if (t == 1 && i == 3 && poison == NAN_SCALE)
                s = NAN;
            if (t == 1 && i == 0 && poison == HUGE_SCALE)
                s = 1e6f;
            fwrite(&s, 4, 1, fp);
        }
    }
    fclose(fp);
    /* tokenizer.bin: max length, then score, length, bytes */
    fp = fopen(tok, "wb");
    w32(fp, 8);
    const char *words[VOCAB] = { "", "", "", "a b" };
    for (int i = 0; i < VOCAB; i++) {
        float sc = poison == NAN_SCORE && i == 2 ? NAN : -(float)i;
        fwrite(&sc, 4, 1, fp);
        w32(fp, (int32_t)strlen(words[i]));
        fwrite(words[i], 1, strlen(words[i]), fp);
    }
    fclose(fp);
}

static void write_v2(const char *path, const char *tok)
{
    write_v2_poisoned(path, tok, CLEAN);
}

START_TEST(test_v2_dequantizes)
{
    char path[512], tok[512], out[512];
    snprintf(path, sizeof path, "%s/l2c-%d.bin", test_tmpdir(), (int)getpid());
    snprintf(tok, sizeof tok, "%s/l2c-%d.tok", test_tmpdir(), (int)getpid());
    snprintf(out, sizeof out, "%s/l2c-%d.gguf", test_tmpdir(), (int)getpid());
    write_v2(path, tok);
    src_model m;
    gguf_error err;
    ck_assert_msg(llama2c_open(path, tok, &m, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.n_tensors, 3 + 9 * LAYERS);
    ck_assert_str_eq(m.tensors[0].name, "token_embd.weight");
    ck_assert_str_eq(m.tensors[1].name, "output_norm.weight");
    ck_assert_str_eq(m.tensors[2].name, "output.weight");
    ck_assert_str_eq(m.tensors[3].name, "blk.0.attn_q.weight");
    ck_assert_str_eq(m.tensors[4].name, "blk.0.attn_k.weight");
    ck_assert_int_eq(m.tensors[4].ne[0], DIM);
    ck_assert_int_eq(m.tensors[4].ne[1], DIM / HEADS * KVH);
    convert_options o = { .outtype = OUT_F32, .out_path = out, .quiet = true };
    ck_assert_msg(convert_write(&m, &o, &err) == 0, "%s", err.msg);
    src_model_free(&m);

    gguf_file *f = gguf_open(out, 0, &err);
    ck_assert_ptr_nonnull(f);
    /* blk.0.ffn_down (matrix 6, DIM x HID): element i = q(i) * scale(i / GROUP) */
    const gguf_tensor *t = gguf_lookup_tensor(f, "blk.0.ffn_down.weight");
    ck_assert_int_eq(t->ne[0], HID);
    ck_assert_int_eq(t->ne[1], DIM);
    const float *x = (const float *)t->data;
    for (int i = 0; i < DIM * HID; i++) {
        float want = (float)(int8_t)((i * 7 + 6) % 255 - 127) * (0.5f + 0.25f * (float)(i / GROUP) + 6.0f);
        ck_assert_msg(x[i] == want, "element %d: %g != %g", i, x[i], want);
    }
    /* the shared classifier is the embedding */
    const gguf_tensor *e = gguf_lookup_tensor(f, "token_embd.weight"), *c = gguf_lookup_tensor(f, "output.weight");
    ck_assert(memcmp(e->data, c->data, e->nbytes) == 0);
    /* the vocabulary: ids 0-2 named as llama.cpp does, spaces escaped */
    const gguf_kv *tk = gguf_lookup_kv(f, "tokenizer.ggml.tokens");
    ck_assert_int_eq((int)tk->strs[0].len, 5);
    ck_assert(!memcmp(tk->strs[3].ptr, "a\xe2\x96\x81" "b", 5));
    gguf_close(f);
    unlink(path), unlink(tok), unlink(out);
}
END_TEST

/* Whether the folder holds a file whose name contains part (an output or
 * its temporary file left behind). */
static bool left_behind(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    while (d && (e = readdir(d)))
        found |= strstr(e->d_name, part) != NULL;
    if (d)
        closedir(d);
    return found;
}

/* A value that is not finite, in the checkpoint or after its conversion,
 * fails convert_write with the tensor and the element named, and leaves
 * no output nor temporary file; a NaN token score fails the open. */
START_TEST(test_v2_nonfinite)
{
    static const struct {
        enum poison poison;
        int         outtype;
        const char *want;
    } cases[] = {
        { NAN_NORM, OUT_F32, "tensor 'blk.0.ffn_norm.weight' has a non-finite value (NaN) at "
                             "element 2: nothing written" },
        { NAN_NORM, OUT_Q8_0, "tensor 'blk.0.ffn_norm.weight' has a non-finite value (NaN) at "
                              "element 2: nothing written" },
        { NAN_SCALE, OUT_F32, "tensor 'blk.0.attn_q.weight' has a non-finite scale (NaN) for "
                              "group 3 (the 8 values from row 3, column 0): nothing written" },
        { NAN_SCALE, OUT_BF16, "tensor 'blk.0.attn_q.weight' has a non-finite scale (NaN) for "
                               "group 3 (the 8 values from row 3, column 0): nothing written" },
        /* q = (0·7 + 1) % 255 - 127 = -126, times 1e6 */
        { HUGE_SCALE, OUT_F16, "tensor 'blk.0.attn_q.weight' has -126000000 at row 0, column 0, "
                               "which overflows f16 (largest finite value 65504) to -Inf; "
                               "--outtype f32 or bf16 keeps it: nothing written" },
        /* rows of 8: q8_0 falls back to f16 */
        { HUGE_SCALE, OUT_Q8_0, "has -126000000 at row 0, column 0, which overflows f16" },
    };
    char path[512], tok[512], out[512], part[64];
    snprintf(part, sizeof part, "l2c-nf-%d", (int)getpid());
    snprintf(path, sizeof path, "%s/%s.bin", test_tmpdir(), part);
    snprintf(tok, sizeof tok, "%s/%s.tok", test_tmpdir(), part);
    snprintf(out, sizeof out, "%s/%s.gguf", test_tmpdir(), part);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_v2_poisoned(path, tok, cases[i].poison);
        src_model m;
        gguf_error err;
        ck_assert_msg(llama2c_open(path, tok, &m, &err) == 0, "%s", err.msg);
        convert_options o = { .outtype = cases[i].outtype, .out_path = out, .quiet = true };
        ck_assert_int_eq(convert_write(&m, &o, &err), -1);
        ck_assert_msg(strstr(err.msg, cases[i].want) != NULL, "case %zu: %s", i, err.msg);
        src_model_free(&m);
        unlink(path), unlink(tok);
        ck_assert_msg(!left_behind(test_tmpdir(), part), "case %zu left a file behind", i);
    }
    /* the same values converted where they fit: f32 holds 1.26e8 */
    write_v2_poisoned(path, tok, HUGE_SCALE);
    src_model m;
    gguf_error err;
    ck_assert_msg(llama2c_open(path, tok, &m, &err) == 0, "%s", err.msg);
    convert_options o = { .outtype = OUT_F32, .out_path = out, .quiet = true };
    ck_assert_msg(convert_write(&m, &o, &err) == 0, "%s", err.msg);
    src_model_free(&m);
    unlink(out);
    /* tokenizer.bin scores are written into the GGUF too */
    write_v2_poisoned(path, tok, NAN_SCORE);
    ck_assert_int_eq(llama2c_open(path, tok, &m, &err), -1);
    ck_assert_msg(strstr(err.msg, ": token 2 has a non-finite score (NaN)") != NULL, "%s", err.msg);
    unlink(path), unlink(tok);
}
END_TEST

START_TEST(test_bad_headers)
{
    char path[512];
    snprintf(path, sizeof path, "%s/l2c-bad-%d.bin", test_tmpdir(), (int)getpid());
    static const struct { int32_t h[7]; const char *want; } cases[] = {
        { { 8, 16, 1, 3, 1, 4, 4 }, "implausible" },   /* dim not a multiple of heads */
        { { 8, 16, 1, 2, 1, 0, 4 }, "implausible" },   /* no vocabulary */
        { { 8, 16, 1, 2, 1, 4, 4 }, "truncated" },     /* header alone */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *fp = fopen(path, "wb");
        fwrite(cases[i].h, 4, 7, fp);
        fclose(fp);
        src_model m;
        gguf_error err;
        ck_assert_int_eq(llama2c_open(path, NULL, &m, &err), -1);
        ck_assert_msg(strstr(err.msg, cases[i].want) != NULL, "case %zu: %s", i, err.msg);
    }
    unlink(path);
}
END_TEST

/* Inputs the fuzzer once broke the reader with (fuzz_llama2c's format: the
 * first byte splits the rest into checkpoint and tokenizer): each must be
 * read or refused without a sanitizer report. */
START_TEST(test_fuzz_regressions)
{
    static const char *const files[] = {
        "tests/data/small/fuzz-llama2c/vocab-int-min.bin", /* vocab_size INT32_MIN */
        "tests/data/small/fuzz-llama2c/empty-unk-token.bin", /* "<unk>" into a 1-byte buffer */
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        static uint8_t data[1 << 16];
        FILE *fp = fopen(files[i], "rb");
        ck_assert_ptr_nonnull(fp);
        size_t size = fread(data, 1, sizeof data, fp);
        fclose(fp);
        ck_assert_uint_gt(size, 1);
        size_t split = 1 + (size - 1) * data[0] / 255;
        char ck[512], tok[512];
        snprintf(ck, sizeof ck, "%s/l2c-fz-%d.bin", test_tmpdir(), (int)getpid());
        snprintf(tok, sizeof tok, "%s/l2c-fz-%d.tok", test_tmpdir(), (int)getpid());
        fp = fopen(ck, "wb");
        fwrite(data + 1, 1, split - 1, fp);
        fclose(fp);
        fp = fopen(tok, "wb");
        fwrite(data + split, 1, size - split, fp);
        fclose(fp);
        src_model m;
        gguf_error err;
        if (llama2c_open(ck, tok, &m, &err) == 0)
            src_model_free(&m);
        unlink(ck), unlink(tok);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("llama2c");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_v2_dequantizes);
    tcase_add_test(tc, test_v2_nonfinite);
    tcase_add_test(tc, test_bad_headers);
    tcase_add_test(tc, test_fuzz_regressions);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
