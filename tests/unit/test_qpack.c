/*
 * test_qpack.c — compressed-tensors pack-quantized and GPTQ unpacking
 * (convert/qpack.c):
 *
 * - every output float of tests/data/qpack/cases.txt, made by llama.cpp
 *   e21cdc11's own ModelBase.dequant_model on seeded tensors
 *   (tests/ref/qpack_upstream.py; README there), to the bit: 4- and 8-bit
 *   compressed-tensors with and without zero points (partial zero-point
 *   words), F32/F16/BF16 scales; 2-, 4-, 8-bit GPTQ, gptq and gptq_v2;
 *   BitNet with BF16, F16 and 0-d F32 scales (bitnet_row and qpack_span);
 * - the shape and bit-width refusals with their messages;
 * - stacked experts (qpack_stack): the stack's values are its slices' in
 *   expert order, in spans of every size across the experts' boundaries;
 *   its parts are every slice's; slices of other shapes are refused;
 * - BitNet ternary weights (quant_method bitnet): output row s × prows + r
 *   from bits 2s..2s+1 of byte row r, (code − 1) / scale as one float32
 *   division (code 3 too), in spans of every size; the shape and scale
 *   refusals; the plan. (Their conversions are held to e21cdc11's by
 *   tests/e2e/convert.sh.)
 * - GPTQ decoded by blocks of rows (gptq_block, qpack_span's whole rows,
 *   qpack_rows in any order) against gptq_row to the bit, for odd shapes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include "json.h"
#include "qpack.h"
#include "testutil.h"

static uint32_t *read_words(FILE *f, int64_t n)
{
    uint32_t *w = malloc((size_t)(n ? n : 1) * 4);
    ck_assert_ptr_nonnull(w);
    for (int64_t i = 0; i < n; i++) {
        unsigned v;
        ck_assert_int_eq(fscanf(f, "%x", &v), 1);
        w[i] = v;
    }
    return w;
}

static float bits_f(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

typedef struct { const uint32_t *s; int64_t out; } gscale;

static float gptq_scale(const void *ctx, int64_t grp, int64_t n)
{
    const gscale *g = ctx;
    return bits_f(g->s[grp * g->out + n]);
}

static int check_out(const float *got, const uint32_t *want, int64_t n, const char *what, int64_t row)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t gb;
        memcpy(&gb, &got[i], 4);
        ck_assert_msg(gb == want[i], "%s row %lld col %lld: %08x, want %08x", what, (long long)row,
                      (long long)i, gb, want[i]);
    }
    return 0;
}

START_TEST(test_reference_cases)
{
    FILE *f = fopen("tests/data/qpack/cases.txt", "r");
    ck_assert_msg(f != NULL, "tests/data/qpack/cases.txt (run from the repository root)");
    char kind[8];
    int n_ct = 0, n_gptq = 0, n_bitnet = 0;
    gguf_error err = {0};
    while (fscanf(f, "%7s", kind) == 1) {
        if (!strcmp(kind, "ct")) {
            int bits, zero;
            long long gs, rows, cols, nw;
            ck_assert_int_eq(fscanf(f, "%d %lld %lld %lld %lld %d", &bits, &gs, &rows, &cols, &nw, &zero), 6);
            const int per = qpack_per_word(bits);
            const int64_t groups = cols / gs, zr = (rows + per - 1) / per;
            uint32_t *w = read_words(f, rows * nw), *s = read_words(f, rows * groups), *z = NULL;
            if (zero) {
                z = read_words(f, zr * groups);
            } else {
                char dash[2];
                ck_assert_int_eq(fscanf(f, "%1s", dash), 1);
            }
            uint32_t *want = read_words(f, rows * cols);
            const int64_t shape[2] = {rows, cols}, wsh[2] = {rows, nw}, ssh[2] = {rows, groups}, zsh[2] = {zr, groups};
            ct_pack p;
            ck_assert_int_eq(ct_pack_check(&p, "m.weight", bits, gs, shape, 2, wsh, 2, ssh, 2, zsh, zero ? 2 : 0, &err), 0);
            float *row = malloc((size_t)cols * 4), *sc = malloc((size_t)groups * 4);
            for (int64_t r = 0; r < rows; r++) {
                for (int64_t g = 0; g < groups; g++)
                    sc[g] = bits_f(s[r * groups + g]);
                ct_pack_row(&p, r, (const uint8_t *)(w + r * nw), sc, (const uint8_t *)z, row);
                check_out(row, want + r * cols, cols, "ct", r);
            }
            free(row), free(sc), free(w), free(s), free(z), free(want);
            n_ct++;
        } else if (!strcmp(kind, "bitnet")) {
            long long prows, cols;
            ck_assert_int_eq(fscanf(f, "%lld %lld", &prows, &cols), 2);
            uint32_t *w = read_words(f, prows * cols), *s = read_words(f, 1), *want = read_words(f, 4 * prows * cols);
            uint8_t *bytes = malloc((size_t)(prows * cols));
            for (int64_t i = 0; i < prows * cols; i++)
                bytes[i] = (uint8_t)w[i];
            const int64_t wsh[2] = {prows, cols}, ssh[1] = {1};
            bitnet_pack b;
            ck_assert_int_eq(bitnet_check(&b, "m.weight", wsh, 2, ssh, 1, &err), 0);
            float *row = malloc((size_t)cols * 4);
            for (int64_t r = 0; r < b.rows; r++) {
                bitnet_row(&b, r, bytes, bits_f(s[0]), row);
                check_out(row, want + r * cols, cols, "bitnet", r);
            }
            qpack_src q = { .kind = QPACK_BITNET, .bn = b, .rows = b.rows, .cols = b.cols, .packed = bytes,
                            .inv = bits_f(s[0]) };
            float *all = malloc((size_t)(b.rows * cols) * 4);
            qpack_span(&q, all, b.rows * cols, 0);
            check_out(all, want, b.rows * cols, "bitnet span", 0);
            free(all), free(row), free(bytes), free(w), free(s), free(want);
            n_bitnet++;
        } else {
            ck_assert_str_eq(kind, "gptq");
            int bits, v2;
            long long in, out, groups;
            ck_assert_int_eq(fscanf(f, "%d %lld %lld %lld %d", &bits, &in, &out, &groups, &v2), 5);
            const int per = 32 / bits;
            uint32_t *qw = read_words(f, in / per * out), *qz = read_words(f, groups * out / per),
                     *s = read_words(f, groups * out), *gi = read_words(f, in), *want = read_words(f, out * in);
            const int64_t qws[2] = {in / per, out}, qzs[2] = {groups, out / per}, ss[2] = {groups, out}, gs[1] = {in};
            gptq_pack g;
            ck_assert_int_eq(gptq_check(&g, "m", bits, v2, qws, 2, qzs, 2, ss, 2, gs, 1, &err), 0);
            ck_assert_int_eq(gptq_check_gidx(&g, "m", (const uint8_t *)gi, &err), 0);
            gscale ctx = {s, out};
            float *row = malloc((size_t)in * 4);
            for (int64_t n = 0; n < out; n++) {
                gptq_row(&g, n, (const uint8_t *)qw, (const uint8_t *)qz, (const uint8_t *)gi, gptq_scale, &ctx, row);
                check_out(row, want + n * in, in, "gptq", n);
            }
            free(row), free(qw), free(qz), free(s), free(gi), free(want);
            n_gptq++;
        }
    }
    fclose(f);
    ck_assert_int_eq(n_ct, 5);
    ck_assert_int_eq(n_gptq, 4);
    ck_assert_int_eq(n_bitnet, 3);
}
END_TEST

START_TEST(test_refusals)
{
    gguf_error err = {0};
    ct_pack p;
    const int64_t shape[2] = {4, 16}, wsh[2] = {4, 2}, ssh[2] = {4, 2}, zsh[2] = {1, 2};
    ck_assert_int_eq(qpack_per_word(4), 8);
    ck_assert_int_eq(qpack_per_word(8), 4);
    ck_assert_int_eq(qpack_per_word(3), 10);
    ck_assert_int_eq(ct_pack_check(&p, "w", 4, 8, shape, 2, wsh, 2, ssh, 2, zsh, 2, &err), 0);
    ck_assert_int_eq(ct_pack_check(&p, "w", 9, 8, shape, 2, wsh, 2, ssh, 2, NULL, 0, &err), -1);
    ck_assert_str_eq(err.msg, "w: compressed-tensors num_bits 9 is not supported (1..8)");
    ck_assert_int_eq(ct_pack_check(&p, "w", 4, 5, shape, 2, wsh, 2, ssh, 2, NULL, 0, &err), -1);
    ck_assert_str_eq(err.msg, "w: 16 columns are not a whole number of groups of 5");
    ck_assert_int_eq(ct_pack_check(&p, "w", 4, 8, shape, 1, wsh, 2, ssh, 2, NULL, 0, &err), -1);
    ck_assert_str_eq(err.msg, "w: weight_shape is not two positive dimensions");
    const int64_t wshort[2] = {4, 1};
    ck_assert_int_eq(ct_pack_check(&p, "w", 4, 8, shape, 2, wshort, 2, ssh, 2, NULL, 0, &err), -1);
    ck_assert_str_eq(err.msg, "w: weight_packed is not [4, >= 2 words] (weight_shape [4, 16], 4 bits)");
    const int64_t sbad[2] = {4, 1};
    ck_assert_int_eq(ct_pack_check(&p, "w", 4, 8, shape, 2, wsh, 2, sbad, 2, NULL, 0, &err), -1);
    ck_assert_str_eq(err.msg, "w: weight_scale is not [4, 2] (one factor per row and group)");
    const int64_t zbad[2] = {1, 3};
    ck_assert_int_eq(ct_pack_check(&p, "w", 4, 8, shape, 2, wsh, 2, ssh, 2, zbad, 2, &err), -1);
    ck_assert_str_eq(err.msg, "w: weight_zero_point is not [1, 2] (packed along rows)");

    gptq_pack g;
    const int64_t qw[2] = {2, 16}, qz[2] = {2, 2}, sc[2] = {2, 16}, gi[1] = {16};
    ck_assert_int_eq(gptq_check(&g, "m", 4, false, qw, 2, qz, 2, sc, 2, gi, 1, &err), 0);
    ck_assert_int_eq(g.in, 16);
    ck_assert_int_eq(gptq_check(&g, "m", 3, false, qw, 2, qz, 2, sc, 2, gi, 1, &err), -1);
    ck_assert_str_eq(err.msg, "m: GPTQ bits 3 is not supported (2, 4 or 8)");
    const int64_t qzbad[2] = {2, 3};
    ck_assert_int_eq(gptq_check(&g, "m", 4, false, qw, 2, qzbad, 2, sc, 2, gi, 1, &err), -1);
    ck_assert_str_eq(err.msg, "m: qzeros is not [2, 16/8]");
    const int64_t gibad[1] = {15};
    ck_assert_int_eq(gptq_check(&g, "m", 4, false, qw, 2, qz, 2, sc, 2, gibad, 1, &err), -1);
    ck_assert_str_eq(err.msg, "m: g_idx is not [16] (one group per input column)");
    ck_assert_int_eq(gptq_check(&g, "m", 4, false, qw, 2, qz, 2, sc, 2, gi, 1, &err), 0);
    int32_t idx[16] = {0};
    idx[7] = 2;
    ck_assert_int_eq(gptq_check_gidx(&g, "m", (const uint8_t *)idx, &err), -1);
    ck_assert_str_eq(err.msg, "m: g_idx[7] = 2 is outside [0, 2)");
    idx[7] = -1;
    ck_assert_int_eq(gptq_check_gidx(&g, "m", (const uint8_t *)idx, &err), -1);
}
END_TEST

/* qpack_plan_read on config.json text: its return value, err.msg in msg. */
static int plan_of(const char *json, qpack_plan *p, gguf_error *err)
{
    json_value *cfg = json_parse(json, strlen(json), err);
    ck_assert_ptr_nonnull(cfg);
    int rc = qpack_plan_read(p, cfg, err);
    json_free(cfg);
    return rc;
}

START_TEST(test_plan_read)
{
    qpack_plan p;
    gguf_error err;
    ck_assert_int_eq(plan_of("{}", &p, &err), 0);
    ck_assert_int_eq(p.kind, QPACK_NONE);
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"fp8\"}}", &p, &err), 0);
    ck_assert_int_eq(p.kind, QPACK_NONE);
    /* type defaults to int, as dequant_model's .get("type", "int") */
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", "
                             "\"format\": \"pack-quantized\", \"config_groups\": {\"g\": {\"weights\": "
                             "{\"num_bits\": 4, \"group_size\": 128, \"strategy\": \"group\"}}}}}", &p, &err), 0);
    ck_assert_int_eq(p.kind, QPACK_CT);
    ck_assert_int_eq(p.bits, 4);
    ck_assert_int_eq(p.group, 128);
    /* checkpoint_format defaults to gptq */
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 8}}", &p, &err), 0);
    ck_assert_int_eq(p.kind, QPACK_GPTQ);
    ck_assert_int_eq(p.bits, 8);
    ck_assert(!p.v2);
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 2, "
                             "\"checkpoint_format\": \"gptq_v2\"}}", &p, &err), 0);
    ck_assert(p.v2);
    static const struct { const char *json, *msg; } bad[] = {
        { "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\"}}",
          "config.json: quantization_config (compressed-tensors) has no format" },
        { "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"format\": 3}}",
          "config.json: quantization_config (compressed-tensors) format is not a string" },
        { "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"format\": \"marlin-24\"}}",
          "config.json: quantization_config compressed-tensors format 'marlin-24' is unknown (pack-quantized, float-quantized, int-quantized and naive-quantized are supported)" },
        { "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\"}}",
          "config.json: quantization_config config_groups is not an object with a group" },
        { "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\", "
          "\"config_groups\": {\"g\": {}}}}",
          "config.json: quantization_config config_groups.g has no weights object" },
        { "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\", "
          "\"config_groups\": {\"g\": {\"weights\": {\"strategy\": \"group\", \"type\": \"float\"}}}}}",
          "config.json: quantization_config weights type 'float' is not supported with pack-quantized (only int)" },
        { "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\", "
          "\"config_groups\": {\"g\": {\"weights\": {\"strategy\": \"group\", \"num_bits\": 4}}}}}",
          "config.json: quantization_config weights has no group_size" },
        { "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\", "
          "\"config_groups\": {\"g\": {\"weights\": {\"strategy\": \"group\", \"num_bits\": 4.5, \"group_size\": 8}}}}}",
          "config.json: quantization_config weights num_bits is not a whole number from 1 to 8" },
        { "{\"quantization_config\": {\"quant_method\": \"gptq\"}}",
          "config.json: quantization_config (gptq) has no bits" },
        { "{\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 3}}",
          "config.json: quantization_config gptq bits 3 is not supported (2, 4 or 8)" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(plan_of(bad[i].json, &p, &err), -1);
        ck_assert_str_eq(err.msg, bad[i].msg);
    }
}
END_TEST

/* qpack_span in pieces of every size gives the whole rows' values. */
START_TEST(test_spans)
{
    /* compressed-tensors: 3 rows of 12 columns, 4 bits, groups of 4 */
    int32_t words[3 * 2], zp[1 * 3] = { 0x123, 0x456, 0x789 };
    uint16_t scales[3 * 3];
    for (int i = 0; i < 6; i++)
        words[i] = (int32_t)(0x9e3779b9u * (uint32_t)(i + 1));
    for (int i = 0; i < 9; i++)
        scales[i] = (uint16_t)(0x3c00 + 0x100 * i); /* F16 1, 2, ... */
    qpack_src q = { .kind = QPACK_CT, .rows = 3, .cols = 12, .packed = (const uint8_t *)words,
                    .scale = (const uint8_t *)scales, .zero = (const uint8_t *)zp, .sdtype = SRC_F16 };
    const int64_t shape[2] = { 3, 12 }, ws[2] = { 3, 2 }, ss[2] = { 3, 3 }, zs[2] = { 1, 3 };
    gguf_error err;
    ck_assert_int_eq(ct_pack_check(&q.ct, "m", 4, 4, shape, 2, ws, 2, ss, 2, zs, 2, &err), 0);
    float whole[36], piece[36];
    qpack_span(&q, whole, 36, 0);
    for (int k = 1; k <= 36; k++) {
        for (int at = 0; at < 36; at += k)
            qpack_span(&q, piece + at, 36 - at < k ? 36 - at : k, at);
        ck_assert_mem_eq(piece, whole, sizeof whole);
    }
    for (int i = 0; i < 36; i++)
        ck_assert_float_eq(qpack_value(&q, i), whole[i]);
    /* the zero point of row 1, group 2: 0x789 >> 4 & 15 = 8; scale 1 + 5 */
    const int32_t code = (int32_t)((uint32_t)words[2 + 1] >> 0 & 15);
    ck_assert_float_eq(whole[12 + 8], (float)(code - 8) * gguf_f16_to_f32(scales[5]));
}
END_TEST

static uint64_t parts_seen, parts_bytes;
static void count_part(const void *data, uint64_t bytes)
{
    (void)data;
    parts_seen++;
    parts_bytes += bytes;
}

/* One 4-bit symmetric slice of rows × 16 columns (groups of 8) on the heap,
 * its words and F32 scales seeded by k. */
static qpack_src *slice(int64_t rows, int k, int32_t *words, float *scales)
{
    qpack_src *q = calloc(1, sizeof *q);
    ck_assert_ptr_nonnull(q);
    for (int64_t i = 0; i < rows * 2; i++)
        words[i] = (int32_t)(0x9e3779b9u * (uint32_t)(i + 1 + 100 * k));
    for (int64_t i = 0; i < rows * 2; i++)
        scales[i] = 0.25f * (float)(i + 1) + (float)k;
    const int64_t shape[2] = { rows, 16 }, ws[2] = { rows, 2 }, ss[2] = { rows, 2 };
    gguf_error err;
    ck_assert_int_eq(ct_pack_check(&q->ct, "e", 4, 8, shape, 2, ws, 2, ss, 2, NULL, 0, &err), 0);
    *q = (qpack_src){ .kind = QPACK_CT, .ct = q->ct, .rows = rows, .cols = 16,
                      .packed = (const uint8_t *)words, .scale = (const uint8_t *)scales,
                      .sdtype = SRC_F32, .mapped = true, .n_part = 2,
                      .part = { (const uint8_t *)words, (const uint8_t *)scales },
                      .part_bytes = { (uint64_t)rows * 8, (uint64_t)rows * 8 } };
    return q;
}

START_TEST(test_stack)
{
    enum { E = 3, R = 3, N = E * R * 16 };
    int32_t words[E][R * 2];
    float scales[E][R * 2], want[N], got[N];
    qpack_src *s[E];
    for (int e = 0; e < E; e++) {
        s[e] = slice(R, e, words[e], scales[e]);
        qpack_span(s[e], want + e * R * 16, R * 16, 0);
    }
    qpack_src *q;
    gguf_error err;
    ck_assert_int_eq(qpack_stack(s, E, "blk.1.ffn_gate_exps.weight", &q, &err), 0);
    for (int e = 0; e < E; e++)
        ck_assert_ptr_null(s[e]);
    ck_assert_int_eq(q->n_slice, E);
    ck_assert(q->mapped);
    for (int k = 1; k <= N; k++) { /* spans of every size, across the slices */
        memset(got, 0, sizeof got);
        for (int at = 0; at < N; at += k)
            qpack_span(q, got + at, N - at < k ? N - at : k, at);
        ck_assert_mem_eq(got, want, sizeof want);
    }
    for (int i = 0; i < N; i++)
        ck_assert_float_eq(qpack_value(q, i), want[i]);
    parts_seen = parts_bytes = 0;
    qpack_parts(q, count_part);
    ck_assert_uint_eq(parts_seen, 2 * E);
    ck_assert_uint_eq(parts_bytes, (uint64_t)E * 2 * R * 8);
    qpack_src_free(q);

    /* expert 2 of other rows: refused, every slice freed */
    int32_t w2[4 * 2];
    float s2[4 * 2];
    for (int e = 0; e < 2; e++)
        s[e] = slice(R, e, words[e], scales[e]);
    s[2] = slice(4, 2, w2, s2);
    s[1]->mapped = false;
    ck_assert_int_eq(qpack_stack(s, E, "blk.1.ffn_gate_exps.weight", &q, &err), -1);
    ck_assert_ptr_null(q);
    for (int e = 0; e < E; e++)
        ck_assert_ptr_null(s[e]);
    ck_assert_str_eq(err.msg, "tensor 'blk.1.ffn_gate_exps.weight': expert 2's weight is [4, 16], "
                              "expert 0's [3, 16] (experts stack only when they are alike)");
    /* a slice not in a mapping: the stack's pages are not dropped */
    for (int e = 0; e < E; e++)
        s[e] = slice(R, e, words[e], scales[e]);
    s[1]->mapped = false;
    ck_assert_int_eq(qpack_stack(s, E, "x", &q, &err), 0);
    ck_assert(!q->mapped);
    qpack_src_free(q);
}
END_TEST

START_TEST(test_bitnet)
{
    gguf_error err;
    bitnet_pack b;
    /* 2 packed rows of 3 bytes: 8 output rows */
    const uint8_t packed[6] = { 0xe4, 0x1b, 0x00, 0xff, 0x55, 0xaa };
    const int64_t wsh[2] = { 2, 3 }, one[1] = { 1 }, one2[2] = { 1, 1 }, two[1] = { 2 };
    ck_assert_int_eq(bitnet_check(&b, "w", wsh, 2, one, 1, &err), 0);
    ck_assert_int_eq(b.rows, 8);
    ck_assert_int_eq(b.cols, 3);
    ck_assert_int_eq(bitnet_check(&b, "w", wsh, 2, one2, 2, &err), 0);
    ck_assert_int_eq(bitnet_check(&b, "w", wsh, 2, NULL, 0, &err), 0); /* a 0-d scale */
    ck_assert_int_eq(bitnet_check(&b, "w", wsh, 2, two, 1, &err), -1);
    ck_assert_str_eq(err.msg, "w: weight_scale of shape [2] (BitNet weights take one factor)");
    ck_assert_int_eq(bitnet_check(&b, "w", wsh, 1, one, 1, &err), -1);
    ck_assert_str_eq(err.msg, "w: a BitNet weight is not two positive dimensions");
    ck_assert_int_eq(bitnet_check_scale("s", 0.0f, &err), -1);
    ck_assert_str_eq(err.msg, "tensor 's' is 0 (the weight is divided by it: a finite factor other than 0 expected)");
    ck_assert_int_eq(bitnet_check_scale("s", (float)NAN, &err), -1);
    ck_assert_int_eq(bitnet_check_scale("s", -2.5f, &err), 0);

    ck_assert_int_eq(bitnet_check(&b, "w", wsh, 2, one, 1, &err), 0);
    const float scale = 3.0f;
    qpack_src q = { .kind = QPACK_BITNET, .bn = b, .rows = 8, .cols = 3, .packed = packed, .inv = scale };
    float whole[24], piece[24], row[3];
    qpack_span(&q, whole, 24, 0);
    for (int r = 0; r < 8; r++) {
        bitnet_row(&b, r, packed, scale, row);
        for (int c = 0; c < 3; c++) {
            const int code = packed[(r % 2) * 3 + c] >> (r / 2 * 2) & 3;
            volatile float v = (float)(code - 1), s = scale;
            ck_assert_float_eq(whole[r * 3 + c], v / s);
            ck_assert_float_eq(row[c], v / s);
        }
    }
    /* byte 0xe4 holds codes 0 1 2 3 in rows 0, 2, 4, 6: -1, 0, 1, 2 over 3 */
    ck_assert_float_eq(whole[0], -1.0f / 3.0f);
    ck_assert_float_eq(whole[6], 0.0f);
    ck_assert_float_eq(whole[12], 1.0f / 3.0f);
    ck_assert_float_eq(whole[18], 2.0f / 3.0f);
    for (int k = 1; k <= 24; k++) {
        for (int at = 0; at < 24; at += k)
            qpack_span(&q, piece + at, 24 - at < k ? 24 - at : k, at);
        ck_assert_mem_eq(piece, whole, sizeof whole);
    }
    char how[160];
    qpack_origin(&q, how, sizeof how);
    ck_assert_str_eq(how, ", BitNet-packed [2, 3]: 8 rows of four values a byte");

    qpack_plan p;
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"bitnet\", "
                             "\"modules_to_not_convert\": null}}", &p, &err), 0);
    ck_assert_int_eq(p.kind, QPACK_BITNET);
    ck_assert(!qpack_is_main(&p, "m.weight", how, sizeof how));
    ck_assert(qpack_consumed(&p, "model.layers.0.mlp.up_proj.weight_scale"));
    ck_assert(!qpack_consumed(&p, "model.layers.0.mlp.up_proj.weight"));
}
END_TEST

/* GPTQ by blocks of rows (gptq_block, qpack_span's whole rows, qpack_rows)
 * against gptq_row element by element, to the bit: 2-, 4- and 8-bit
 * (per_word 16, 8, 4), out not a multiple of GPTQ_BLOCK, desc_act g_idx
 * (groups in no order), more groups than GPTQ_TAB_GROUPS (looked up where
 * the group changes), gptq and gptq_v2, rows asked in and out of order,
 * spans from odd rows, two sources interleaved. */
typedef struct { const float *s; int64_t out; } fscale;

static float fscale_at(const void *ctx, int64_t grp, int64_t n)
{
    const fscale *f = ctx;
    return f->s[grp * f->out + n];
}

START_TEST(test_gptq_block)
{
    static const struct { int bits; int64_t in, out, groups; int desc, v2; } cs[] = {
        { 4, 72, 40, 3, 0, 0 },   { 4, 64, 40, 4, 1, 1 },    { 2, 96, 48, 6, 1, 0 },
        { 8, 20, 36, 5, 1, 0 },   { 8, 12, 4, 2, 0, 1 },     { 4, 1112, 24, 1112, 1, 0 },
        { 2, 1056, 16, 1100, 1, 1 },
    };
    uint32_t seed = 12345;
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        const int per = 32 / cs[c].bits;
        const int64_t in = cs[c].in, out = cs[c].out, groups = cs[c].groups;
        uint32_t *qw = malloc((size_t)(in / per * out) * 4), *qz = malloc((size_t)(groups * out / per) * 4);
        int32_t *gi = malloc((size_t)in * 4);
        float *s = malloc((size_t)(groups * out) * 4), *want = malloc((size_t)(in * out) * 4),
              *got = malloc((size_t)(in * out) * 4), *stab = malloc(GPTQ_TAB_GROUPS * GPTQ_BLOCK * 4);
        int32_t *ztab = malloc(GPTQ_TAB_GROUPS * GPTQ_BLOCK * 4);
        ck_assert(qw && qz && gi && s && want && got && stab && ztab);
        for (int64_t i = 0; i < in / per * out; i++)
            qw[i] = seed = seed * 1664525u + 1013904223u;
        for (int64_t i = 0; i < groups * out / per; i++)
            qz[i] = seed = seed * 1664525u + 1013904223u;
        for (int64_t i = 0; i < groups * out; i++) {
            seed = seed * 1664525u + 1013904223u;
            s[i] = (float)(seed >> 8) / 16777216.0f * 0.03f + 1e-4f;
        }
        for (int64_t k = 0; k < in; k++) {
            seed = seed * 1664525u + 1013904223u;
            gi[k] = cs[c].desc ? (int32_t)(k < groups ? k : seed % groups) : (int32_t)(k * groups / in);
        }
        for (int64_t k = in - 1; cs[c].desc && k > 0; k--) { /* shuffled: no order */
            seed = seed * 1664525u + 1013904223u;
            const int64_t j = seed % (k + 1);
            const int32_t t = gi[k];
            gi[k] = gi[j], gi[j] = t;
        }
        const int64_t qws[2] = {in / per, out}, qzs[2] = {groups, out / per}, ss[2] = {groups, out}, gs[1] = {in};
        gguf_error err;
        gptq_pack g;
        ck_assert_int_eq(gptq_check(&g, "m", cs[c].bits, cs[c].v2, qws, 2, qzs, 2, ss, 2, gs, 1, &err), 0);
        ck_assert_int_eq(gptq_check_gidx(&g, "m", (const uint8_t *)gi, &err), 0);
        fscale ctx = {s, out};
        for (int64_t n = 0; n < out; n++)
            gptq_row(&g, n, (const uint8_t *)qw, (const uint8_t *)qz, (const uint8_t *)gi, fscale_at, &ctx,
                     want + n * in);
        for (int64_t n0 = 0; n0 < out; n0 += GPTQ_BLOCK) {
            const int nb = out - n0 < GPTQ_BLOCK ? (int)(out - n0) : GPTQ_BLOCK;
            gptq_block(&g, n0, nb, (const uint8_t *)qw, (const uint8_t *)qz, (const uint8_t *)gi, fscale_at, &ctx,
                       stab, ztab, got + n0 * in);
        }
        ck_assert_mem_eq(got, want, (size_t)(in * out) * 4);
        /* odd first rows and short blocks */
        memset(got, 0, (size_t)(in * out) * 4);
        gptq_block(&g, 3, out - 3 < 5 ? (int)(out - 3) : 5, (const uint8_t *)qw, (const uint8_t *)qz,
                   (const uint8_t *)gi, fscale_at, &ctx, stab, ztab, got);
        ck_assert_mem_eq(got, want + 3 * in, (size_t)((out - 3 < 5 ? out - 3 : 5) * in) * 4);
        /* through qpack_span: F32 scales; the whole weight, row by row in
         * reverse, rows interleaved with a second source's, and spans of
         * several rows from odd rows */
        qpack_src q = { .kind = QPACK_GPTQ, .gq = g, .rows = out, .cols = in, .packed = (const uint8_t *)qw,
                        .scale = (const uint8_t *)s, .zero = (const uint8_t *)qz, .gidx = (const uint8_t *)gi,
                        .sdtype = SRC_F32 };
        qpack_src q2 = q;
        q2.zero = (const uint8_t *)qw; /* other values: qweight's words as zeros (groups × out / per fit) */
        memset(got, 0, (size_t)(in * out) * 4);
        qpack_span(&q, got, in * out, 0);
        ck_assert_mem_eq(got, want, (size_t)(in * out) * 4);
        float *row2 = malloc((size_t)in * 4), *want2 = malloc((size_t)in * 4);
        ck_assert(row2 && want2);
        const bool fits = groups * out / per <= in / per * out;
        memset(got, 0, (size_t)(in * out) * 4);
        for (int64_t n = out - 1; n >= 0; n--) {
            qpack_span(&q, got + n * in, in, n * in);
            if (fits) {
                qpack_span(&q2, row2, in, n * in);
                gptq_row(&g, n, (const uint8_t *)qw, (const uint8_t *)qw, (const uint8_t *)gi, fscale_at, &ctx,
                         want2);
                ck_assert_mem_eq(row2, want2, (size_t)in * 4);
            }
        }
        ck_assert_mem_eq(got, want, (size_t)(in * out) * 4);
        for (int64_t n0 = 1; n0 < out; n0 += 7) {
            const int64_t k = out - n0 < 19 ? out - n0 : 19;
            memset(got, 0, (size_t)(k * in) * 4);
            qpack_span(&q, got, k * in, n0 * in);
            ck_assert_mem_eq(got, want + n0 * in, (size_t)(k * in) * 4);
        }
        /* qpack_rows: in order, reversed, a rotary permutation's order
         * (two interleaved runs), every third row, a row twice, and more
         * rows than a window */
        int64_t *from = malloc((size_t)(3 * out) * sizeof *from);
        float *rows = malloc((size_t)(3 * out * in) * 4);
        ck_assert(from && rows);
        for (int order = 0; order < 5; order++) {
            int64_t nr = out;
            for (int64_t i = 0; i < out; i++)
                from[i] = order == 0 ? i : order == 1 ? out - 1 - i
                        : order == 2 ? i / 2 + (i % 2) * (out / 2)
                        : order == 3 ? i * 3 % out : i % 5;
            if (order == 2 && out % 2)
                from[out - 1] = out - 1;
            if (order == 4) /* 300 rows: the window's 256 and more */
                for (nr = out; nr < 300 && nr < 3 * out; nr++)
                    from[nr] = (nr * 7) % out;
            qpack_rows(&q, from, nr, rows);
            for (int64_t i = 0; i < nr; i++)
                ck_assert_mem_eq(rows + i * in, want + from[i] * in, (size_t)in * 4);
        }
        /* a stack of the two sources: rows asked across its slices */
        if (fits) {
            qpack_src **sl = malloc(2 * sizeof *sl), *st = NULL;
            float *both = malloc((size_t)(2 * out * in) * 4);
            ck_assert(sl && both);
            sl[0] = malloc(sizeof **sl), sl[1] = malloc(sizeof **sl);
            ck_assert(sl[0] && sl[1]);
            *sl[0] = q, *sl[1] = q2;
            gguf_error err2;
            ck_assert_int_eq(qpack_stack(sl, 2, "m", &st, &err2), 0);
            qpack_span(st, both, 2 * out * in, 0);
            ck_assert_mem_eq(both, want, (size_t)(in * out) * 4);
            for (int64_t i = 0; i < 2 * out && i < 3 * out; i++)
                from[i] = (out - 3 + i * 5) % (2 * out);
            qpack_rows(st, from, 2 * out, rows);
            for (int64_t i = 0; i < 2 * out; i++)
                ck_assert_mem_eq(rows + i * in, both + from[i] * in, (size_t)in * 4);
            qpack_src_free(st);
            free(sl), free(both);
        }
        free(from), free(rows);
        free(row2), free(want2);
        free(qw), free(qz), free(gi), free(s), free(want), free(got), free(stab), free(ztab);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("qpack");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_reference_cases);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_plan_read);
    tcase_add_test(tc, test_spans);
    tcase_add_test(tc, test_stack);
    tcase_add_test(tc, test_bitnet);
    tcase_add_test(tc, test_gptq_block);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
