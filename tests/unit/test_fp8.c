/*
 * test_fp8.c — gguf-convert's FP8 source decoding (convert/fp8.c):
 *
 * - every E4M3 code decodes to the float32 bits of tests/data/fp8/e4m3.txt,
 *   a table made apart from this code (tests/tools/e4m3_table.py, exact
 *   fractions; README there), NaN codes to a NaN of their sign;
 * - a block's factor reaches exactly the elements of its block, also in the
 *   partial blocks of the right and bottom edges (the scale repeated and
 *   cropped), across stacked matrices (one scale grid each, in one tensor
 *   or one tensor per part), with F32, F16 and BF16 scales;
 * - fp8_dequant_span gives each element code × factor as one f32 product,
 *   for spans starting and ending anywhere (runs of a block, row ends),
 *   the codes E4M3 or int8 (compressed-tensors int-quantized);
 * - the scale shapes taken and refused, with and without a block size;
 * - config.json's quantization_config refusals.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <ggufkit/quants.h>
#include "fp8.h"
#include "testutil.h"

START_TEST(test_e4m3_table)
{
    FILE *f = fopen("tests/data/fp8/e4m3.txt", "r");
    ck_assert_msg(f != NULL, "tests/data/fp8/e4m3.txt (run from the repository root)");
    unsigned code, bits;
    int n = 0;
    while (fscanf(f, "%x %x", &code, &bits) == 2) {
        ck_assert_uint_eq(code, (unsigned)n);
        const float got = fp8_e4m3_to_f32((uint8_t)code);
        uint32_t gb;
        memcpy(&gb, &got, 4);
        if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu)) { /* NaN: sign kept */
            ck_assert_msg(isnan(got), "code %02x: want NaN", code);
            ck_assert_uint_eq(gb >> 31, bits >> 31);
        } else {
            ck_assert_msg(gb == bits, "code %02x: %08x, want %08x", code, gb, bits);
        }
        n++;
    }
    fclose(f);
    ck_assert_int_eq(n, 256);
    /* landmarks: the largest, the smallest normal and subnormal, -0 */
    ck_assert(fp8_e4m3_to_f32(0x7e) == 448.0f && fp8_e4m3_to_f32(0xfe) == -448.0f);
    ck_assert(fp8_e4m3_to_f32(0x08) == ldexpf(1, -6) && fp8_e4m3_to_f32(0x01) == ldexpf(1, -9));
    ck_assert(fp8_e4m3_to_f32(0x80) == 0 && signbit(fp8_e4m3_to_f32(0x80)));
}
END_TEST

/* 2 matrices of 5 × 7 in blocks of 2 × 3: a 3 × 3 grid each, the last
 * block row 1 high and the last block column 1 wide. */
#define M 2
#define R 5
#define C 7
#define BR 2
#define BC 3
#define SR 3
#define SC 3

static float grid_value(int m, int i, int j) { return (float)(m * 100 + i * 10 + j + 1) / 64.0f; }

static void fill_scales(uint8_t *out, int sdtype)
{
    for (int m = 0; m < M; m++)
        for (int i = 0; i < SR; i++)
            for (int j = 0; j < SC; j++) {
                const int k = (m * SR + i) * SC + j;
                const float v = grid_value(m, i, j);
                if (sdtype == SRC_F32) {
                    memcpy(out + k * 4, &v, 4);
                } else {
                    const uint16_t h = sdtype == SRC_F16 ? gguf_f32_to_f16(v) : gguf_f32_to_bf16(v);
                    memcpy(out + k * 2, &h, 2);
                }
            }
}

static void check_grid(const fp8_scale *s)
{
    for (int m = 0; m < M; m++)
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++) {
                const int64_t i = ((int64_t)m * R + r) * C + c;
                ck_assert_msg(fp8_scale_at(s, i) == grid_value(m, r / BR, c / BC),
                              "matrix %d [%d, %d]", m, r, c);
            }
}

START_TEST(test_block_grid)
{
    static const int dt[] = { SRC_F32, SRC_F16, SRC_BF16 };
    const int64_t w[3] = { M, R, C }, sh[3] = { M, SR, SC }, block[2] = { BR, BC };
    uint8_t scales[M * SR * SC * 4 + 1];
    gguf_error err;
    /* one tensor holding both grids, at an odd address (unaligned reads) */
    fill_scales(scales + 1, dt[_i]);
    fp8_scale s = { .data = scales + 1, .sdtype = (uint8_t)dt[_i] };
    ck_assert_int_eq(fp8_scale_shape(&s, w, 3, sh, 3, block, &err), 0);
    ck_assert(s.rows == R && s.cols == C && s.s_rows == SR && s.s_cols == SC);
    check_grid(&s);
    /* stacked experts: one grid per part */
    const size_t es = dt[_i] == SRC_F32 ? 4 : 2;
    const uint8_t *parts[M] = { scales + 1, scales + 1 + SR * SC * es };
    fp8_scale p = s;
    p.data = NULL;
    p.parts = parts;
    p.n_parts = M;
    check_grid(&p);
}
END_TEST

START_TEST(test_dequant_span)
{
    const int64_t w[3] = { M, R, C }, sh[3] = { M, SR, SC }, block[2] = { BR, BC };
    uint8_t scales[M * SR * SC * 4], codes[M * R * C];
    gguf_error err;
    fill_scales(scales, SRC_F32);
    fp8_scale s = { .data = scales, .sdtype = SRC_F32 };
    ck_assert_int_eq(fp8_scale_shape(&s, w, 3, sh, 3, block, &err), 0);
    s.int8 = _i == 1;
    for (int i = 0; i < M * R * C; i++)
        codes[i] = (uint8_t)(i * 37 + 11) == 0x7f ? 0x10 : (uint8_t)(i * 37 + 11);
    const int n = M * R * C;
    float out[M * R * C];
    for (int at = 0; at < n; at++)
        for (int len = 0; at + len <= n; len++) {
            for (int k = 0; k < n; k++)
                out[k] = -1234.5f;
            fp8_dequant_span(&s, codes + at, out + at, len, at);
            for (int k = 0; k < n; k++) {
                const int m = k / (R * C), r = k / C % R, c = k % C;
                const float want = k >= at && k < at + len
                                 ? (s.int8 ? (float)(int8_t)codes[k] : fp8_e4m3_to_f32(codes[k])) *
                                   grid_value(m, r / BR, c / BC) : -1234.5f;
                ck_assert_msg(memcmp(&out[k], &want, 4) == 0, "span %d+%d, element %d", at, len, k);
            }
        }
}
END_TEST

START_TEST(test_scale_shapes)
{
    gguf_error err;
    fp8_scale s = { 0 };
    const int64_t b128[2] = { 128, 128 }, none[2] = { 0, 0 };
    /* partial edge blocks: 300 × 129 needs 3 × 2 */
    const int64_t w[2] = { 300, 129 }, ok[2] = { 3, 2 }, bad[2] = { 2, 2 }, tr[2] = { 2, 3 };
    ck_assert_int_eq(fp8_scale_shape(&s, w, 2, ok, 2, b128, &err), 0);
    ck_assert(s.s_rows == 3 && s.s_cols == 2 && s.block[0] == 128);
    ck_assert_int_eq(fp8_scale_shape(&s, w, 2, bad, 2, b128, &err), -1);
    ck_assert_str_eq(err.msg, "scale of shape [2, 2], but a weight of 300 × 129 in 128 × 128 blocks needs [3, 2]");
    ck_assert_int_eq(fp8_scale_shape(&s, w, 2, tr, 2, b128, &err), -1);
    ck_assert_int_eq(fp8_scale_shape(&s, w, 2, ok, 1, b128, &err), -1);
    /* a vector is not an FP8 matrix */
    ck_assert_int_eq(fp8_scale_shape(&s, w, 1, ok, 2, b128, &err), -1);
    ck_assert_str_eq(err.msg, "an FP8 weight of 1 dimension (a matrix or a stack of them expected)");
    /* stacked: the leading dimension repeats */
    const int64_t w3[3] = { 4, 300, 129 }, s3[3] = { 4, 3, 2 }, s3b[3] = { 1, 3, 2 };
    ck_assert_int_eq(fp8_scale_shape(&s, w3, 3, s3, 3, b128, &err), 0);
    ck_assert_int_eq(fp8_scale_shape(&s, w3, 3, s3b, 3, b128, &err), -1);
    /* no block size: one factor, or one per row */
    const int64_t one[1] = { 1 }, rows[1] = { 300 }, rows1[2] = { 300, 1 }, cols[2] = { 1, 129 };
    ck_assert_int_eq(fp8_scale_shape(&s, w, 2, one, 1, none, &err), 0);
    ck_assert(s.s_rows == 1 && s.s_cols == 1 && s.block[0] == 300 && s.block[1] == 129);
    ck_assert_int_eq(fp8_scale_shape(&s, w, 2, one, 0, none, &err), 0); /* a scalar, shape [] */
    ck_assert_int_eq(fp8_scale_shape(&s, w, 2, rows, 1, none, &err), 0);
    ck_assert(s.s_rows == 300 && s.s_cols == 1 && s.block[0] == 1 && s.block[1] == 129);
    ck_assert_int_eq(fp8_scale_shape(&s, w, 2, rows1, 2, none, &err), 0);
    ck_assert_int_eq(fp8_scale_shape(&s, w, 2, cols, 2, none, &err), -1);
    ck_assert_int_eq(fp8_scale_shape(&s, w3, 3, one, 1, none, &err), -1);
}
END_TEST

/* quantization_config alone (no shards): what is refused, what passes */
static int plan_of(const char *config, gguf_error *err)
{
    json_value *j = json_parse(config, strlen(config), err);
    ck_assert_ptr_nonnull(j);
    fp8_plan p;
    int rc = fp8_plan_read(&p, j, NULL, NULL, 0, err);
    fp8_plan_free(&p);
    json_free(j);
    return rc;
}

START_TEST(test_plan_config)
{
    gguf_error err;
    ck_assert_int_eq(plan_of("{}", &err), 0);
    ck_assert_int_eq(plan_of("{\"quantization_config\": null}", &err), 0);
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"mxfp4\"}}", &err), 0);
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"fp8\", \"fmt\": \"e4m3\", "
                             "\"activation_scheme\": \"dynamic\", \"weight_block_size\": [128, 64]}}", &err), 0);
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"fp8\"}}", &err), 0);
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"awq\"}}", &err), -1);
    ck_assert_str_eq(err.msg, "config.json: quantization_config quant_method 'awq' is not supported "
                     "(fp8, compressed-tensors, gptq or bitnet)");
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"bits\": 4}}", &err), -1);
    ck_assert_int_eq(plan_of("{\"quantization_config\": 3}", &err), -1);
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"fp8\", \"fmt\": 1}}", &err), -1);
    ck_assert_str_eq(err.msg, "config.json: quantization_config fmt (not a string) is not supported (only e4m3)");
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"fp8\", \"weight_block_size\": [128]}}", &err), -1);
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"fp8\", \"weight_block_size\": [128, 2097152]}}", &err), -1);
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"fp8\", \"weight_block_size\": [128, 1.5]}}", &err), -1);
    ck_assert_int_eq(plan_of("{\"quantization_config\": {\"quant_method\": \"fp8\", \"activation_scheme\": \"static\"}}", &err), -1);
    /* compressed-tensors int-quantized / naive-quantized: int8 codes, dequant_simple's checks */
    const char *ct = "{\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"format\": \"%s\", "
                     "\"config_groups\": {\"g\": {\"weights\": {\"strategy\": \"%s\"%s}}}}}";
    char cfg[512];
    snprintf(cfg, sizeof cfg, ct, "int-quantized", "channel", "");
    ck_assert_int_eq(plan_of(cfg, &err), 0);
    snprintf(cfg, sizeof cfg, ct, "naive-quantized", "block", ", \"block_structure\": [48, 96]");
    ck_assert_int_eq(plan_of(cfg, &err), 0);
    snprintf(cfg, sizeof cfg, ct, "naive-quantized", "channel", ", \"group_size\": 32");
    ck_assert_int_eq(plan_of(cfg, &err), -1);
    ck_assert_str_eq(err.msg, "config.json: quantization_config weights group_size is not supported with "
                     "naive-quantized");
    snprintf(cfg, sizeof cfg, ct, "int-quantized", "tensor", "");
    ck_assert_int_eq(plan_of(cfg, &err), -1);
    ck_assert_str_eq(err.msg, "config.json: quantization_config weights strategy 'tensor' is not supported "
                     "with int-quantized (channel or block)");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fp8");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_e4m3_table);
    tcase_add_loop_test(tc, test_block_grid, 0, 3);
    tcase_add_loop_test(tc, test_dequant_span, 0, 2);
    tcase_add_test(tc, test_scale_shapes);
    tcase_add_test(tc, test_plan_config);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
