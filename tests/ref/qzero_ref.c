/*
 * qzero_ref.c — writes tests/data/qzero.tsv: ggml's bytes for the rows and
 * zero-importance vectors of tests/unit/qzero_rows.h, for every type with an
 * importance-weighted quantizer (what llama-quantize runs for an imatrix
 * whose sums are 0 for a tensor or some columns). One line per type,
 * pattern and row: TYPE PATTERN ROW SHA256 (of the row's quantized bytes,
 * first 16 hex digits) FINITE (1 when every dequantized value is finite). Not built by the Makefile: it needs a reference
 * ggml (llama.cpp e21cdc11, built as ../shared/tools/ref/README.md says):
 *
 *   N=<llama.cpp tree>; cc -O2 -o /tmp/qzero_ref tests/ref/qzero_ref.c gguf/sha256.c \
 *      -Iinclude -Itests/unit -I$N/ggml/include $N/build/ggml/src/libggml-base.a -lstdc++ -lm -lpthread
 *   /tmp/qzero_ref > tests/data/qzero.tsv
 */
#include "ggml.h"
#include <ggufkit/gguf.h>
#include "qzero_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    static const enum ggml_type types[] = {
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
        GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
        GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0, GGML_TYPE_MXFP4,
        GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S,
        GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M,
    };
    struct ggml_init_params ip = { 1 << 20, NULL, false };
    ggml_free(ggml_init(ip));
    static float x[QZ_ROWS * QZ_NPR], w[QZ_NPR];
    qz_make_rows(x);
    printf("# type\tpattern\trow\tsha256[:16] of ggml's bytes\tfinite (tests/ref/qzero_ref.c)\n");
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        const size_t rs = ggml_row_size(types[t], QZ_NPR);
        uint8_t *q = malloc(rs);
        float y[QZ_NPR];
        for (int p = 0; p < QZ_PATTERNS; p++) {
            qz_make_weights(p, w);
            for (int r = 0; r < QZ_ROWS; r++) {
                ggml_quantize_chunk(types[t], x + r * QZ_NPR, q, 0, 1, QZ_NPR, w);
                char hex[65];
                gguf_sha256_hex(q, rs, hex);
                ggml_get_type_traits(types[t])->to_float(q, y, QZ_NPR);
                int finite = 1;
                for (int i = 0; i < QZ_NPR; i++)
                    finite &= isfinite(y[i]) != 0;
                printf("%s\t%s\t%d\t%.16s\t%d\n", ggml_type_name(types[t]), qz_pattern_names[p], r,
                       hex, finite);
            }
        }
        free(q);
    }
    return 0;
}
