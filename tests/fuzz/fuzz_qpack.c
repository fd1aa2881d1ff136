/*
 * fuzz_qpack.c — libFuzzer harness for the packed-integer source kernels
 * (convert/qpack.c). The first bytes choose a format (compressed-tensors,
 * GPTQ or, with h[13] odd, BitNet), a bit width, the shapes of every part and whether a zero point
 * is present; the rest is the parts' bytes. Shapes that the checks accept
 * and that the bytes cover are unpacked row by row (GPTQ also by blocks of
 * rows, and through a source's qpack_rows in an order the bytes choose,
 * which must give the same bits).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static float fscale(const void *ctx, int64_t grp, int64_t n)
{
    (void)ctx;
    return (float)(grp + 1) * 0.5f - (float)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    const uint8_t *h = data;
    const uint8_t *body = data + 16;
    const size_t nb = size - 16;
    gguf_error err;
    if (h[13] & 1) {
        const int64_t wsh[2] = {h[2] % 17, h[3] % 65}, ssh[2] = {1 + h[4] % 2, 1 + h[5] % 2};
        bitnet_pack b;
        if (bitnet_check(&b, "w", wsh, h[6] & 1 ? 2 : 1, ssh, h[7] % 3, &err))
            return 0;
        float scale;
        memcpy(&scale, h + 8, 4);
        if (bitnet_check_scale("s", scale, &err) || (size_t)(b.prows * b.cols) > nb)
            return 0;
        float *row = malloc((size_t)b.cols * 4);
        for (int64_t r = 0; r < b.rows; r++)
            bitnet_row(&b, r, body, scale, row);
        free(row);
    } else if (h[0] & 1) {
        const int64_t shape[2] = {h[2] % 17, h[3] % 65}, wsh[2] = {h[4] % 17, h[5] % 17},
                      ssh[2] = {h[6] % 17, h[7] % 17}, zsh[2] = {h[8] % 9, h[9] % 17};
        const int zd = h[10] & 1 ? 2 : 0;
        ct_pack p;
        if (ct_pack_check(&p, "w", h[1] % 10, h[11] % 33, shape, (h[12] & 3) ? 2 : 1, wsh, 2, ssh, 2, zsh, zd,
                          &err))
            return 0;
        const size_t need = (size_t)(p.rows * p.words + (p.zero ? p.zrows * p.groups : 0)) * 4;
        if (need > nb)
            return 0;
        float *row = malloc((size_t)p.cols * 4), *sc = calloc((size_t)p.groups + 1, 4);
        for (int64_t r = 0; r < p.rows; r++)
            ct_pack_row(&p, r, body + (size_t)(r * p.words) * 4, sc, p.zero ? body + (size_t)(p.rows * p.words) * 4 : NULL,
                        row);
        free(row);
        free(sc);
    } else {
        const int64_t qw[2] = {h[2] % 9, h[3] % 33}, qz[2] = {h[4] % 9, h[5] % 9}, ss[2] = {h[6] % 9, h[7] % 33},
                      gi[1] = {h[8] % 129};
        gptq_pack g;
        if (gptq_check(&g, "m", h[1] % 10, h[9] & 1, qw, 2, qz, 2, ss, 2, gi, 1, &err))
            return 0;
        const size_t nqw = (size_t)(qw[0] * qw[1]), nqz = (size_t)(qz[0] * qz[1]);
        if ((nqw + nqz + (size_t)g.in) * 4 > nb)
            return 0;
        const uint8_t *gidx = body + (nqw + nqz) * 4;
        if (gptq_check_gidx(&g, "m", gidx, &err))
            return 0;
        float *row = malloc((size_t)g.in * 4 + 4), *blk = malloc((size_t)(g.in * GPTQ_BLOCK) * 4 + 4),
              *stab = malloc(GPTQ_TAB_GROUPS * GPTQ_BLOCK * 4);
        int32_t *ztab = malloc(GPTQ_TAB_GROUPS * GPTQ_BLOCK * 4);
        float *all = malloc((size_t)(g.in * g.out) * 4 + 4), *got = malloc((size_t)(g.in * g.out) * 4 + 4),
              *sc = malloc((size_t)(g.groups * g.out) * 4 + 4);
        int64_t *from = malloc((size_t)g.out * sizeof *from + 8);
        for (int64_t n = 0; n < g.out; n++) {
            gptq_row(&g, n, body, body + nqw * 4, gidx, fscale, NULL, row);
            memcpy(all + n * g.in, row, (size_t)g.in * 4);
            if (n % GPTQ_BLOCK == 0) { /* the block path gives the same bits */
                const int bn = g.out - n < GPTQ_BLOCK ? (int)(g.out - n) : GPTQ_BLOCK;
                gptq_block(&g, n, bn, body, body + nqw * 4, gidx, fscale, NULL, stab, ztab, blk);
            }
            if (memcmp(row, blk + (n % GPTQ_BLOCK) * g.in, (size_t)g.in * 4))
                abort();
        }
        /* a source of F32 scales fscale's values: rows in the order the
         * bytes after g_idx give (any row, repeats too) */
        for (int64_t i = 0; i < g.groups * g.out; i++)
            sc[i] = fscale(NULL, i / g.out, i % g.out);
        const uint8_t *ord = gidx + g.in * 4, *end = body + nb;
        for (int64_t i = 0; i < g.out; i++)
            from[i] = ord + i < end ? ord[i] % g.out : (i * 5) % g.out;
        const qpack_src q = { .kind = QPACK_GPTQ, .gq = g, .rows = g.out, .cols = g.in, .packed = body,
                              .scale = (const uint8_t *)sc, .zero = body + nqw * 4, .gidx = gidx, .sdtype = SRC_F32 };
        qpack_rows(&q, from, g.out, got);
        for (int64_t i = 0; i < g.out; i++)
            if (memcmp(got + i * g.in, all + from[i] * g.in, (size_t)g.in * 4))
                abort();
        free(row);
        free(blk);
        free(stab);
        free(ztab);
        free(all);
        free(got);
        free(sc);
        free(from);
    }
    return 0;
}
