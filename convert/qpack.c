/*
 * qpack.c — compressed-tensors pack-quantized and GPTQ unpacking (qpack.h).
 */
#include "qpack.h"

#include <string.h>

static uint32_t word_at(const uint8_t *p, int64_t k)
{
    const uint8_t *b = p + (size_t)k * 4;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int qpack_per_word(int bits)
{
    return bits >= 1 && bits <= 32 ? (32 - bits) / bits + 1 : 0;
}

int ct_pack_check(ct_pack *p, const char *name, int bits, int64_t group_size,
                  const int64_t *shape, int shape_dims, const int64_t *wshape, int wdims,
                  const int64_t *sshape, int sdims, const int64_t *zshape, int zdims,
                  gguf_error *err)
{
    memset(p, 0, sizeof *p);
    if (bits < 1 || bits > 8)
        return gguf_error_set(err, "%s: compressed-tensors num_bits %d is not supported (1..8)", name, bits);
    if (shape_dims != 2 || shape[0] <= 0 || shape[1] <= 0)
        return gguf_error_set(err, "%s: weight_shape is not two positive dimensions", name);
    if (group_size <= 0 || shape[1] % group_size)
        return gguf_error_set(err, "%s: %lld columns are not a whole number of groups of %lld", name,
                              (long long)shape[1], (long long)group_size);
    p->bits = bits;
    p->per_word = qpack_per_word(bits);
    p->rows = shape[0];
    p->cols = shape[1];
    p->group = group_size;
    p->groups = shape[1] / group_size;
    if (wdims != 2 || wshape[0] != p->rows || wshape[1] <= 0 || wshape[1] > INT64_MAX / p->per_word ||
        wshape[1] * p->per_word < p->cols)
        return gguf_error_set(err, "%s: weight_packed is not [%lld, >= %lld words] (weight_shape [%lld, %lld], "
                              "%d bits)", name, (long long)p->rows,
                              (long long)((p->cols + p->per_word - 1) / p->per_word),
                              (long long)p->rows, (long long)p->cols, bits);
    p->words = wshape[1];
    if (sdims != 2 || sshape[0] != p->rows || sshape[1] != p->groups)
        return gguf_error_set(err, "%s: weight_scale is not [%lld, %lld] (one factor per row and group)", name,
                              (long long)p->rows, (long long)p->groups);
    if (zdims) {
        if (zdims != 2 || zshape[1] != p->groups || zshape[0] <= 0 ||
            zshape[0] > INT64_MAX / p->per_word || zshape[0] * p->per_word < p->rows)
            return gguf_error_set(err, "%s: weight_zero_point is not [%lld, %lld] (packed along rows)", name,
                                  (long long)((p->rows + p->per_word - 1) / p->per_word), (long long)p->groups);
        p->zero = true;
        p->zrows = zshape[0];
    }
    return 0;
}

void ct_pack_row(const ct_pack *p, int64_t r, const uint8_t *words, const float *scales,
                 const uint8_t *zp, float *out)
{
    const uint32_t mask = (1u << p->bits) - 1;
    int32_t zsym = 1 << (p->bits - 1);
    for (int64_t g = 0; g < p->groups; g++) {
        int32_t z = zsym;
        if (p->zero)
            z = (int32_t)(word_at(zp, (r / p->per_word) * p->groups + g) >> ((r % p->per_word) * p->bits) & mask);
        const float s = scales[g];
        for (int64_t j = g * p->group; j < (g + 1) * p->group; j++) {
            const int32_t q = (int32_t)(word_at(words, j / p->per_word) >> ((j % p->per_word) * p->bits) & mask);
            out[j] = (float)(q - z) * s;
        }
    }
}

int gptq_check(gptq_pack *g, const char *name, int bits, bool v2,
               const int64_t *qwshape, int qwdims, const int64_t *qzshape, int qzdims,
               const int64_t *sshape, int sdims, const int64_t *gshape, int gdims,
               gguf_error *err)
{
    memset(g, 0, sizeof *g);
    if (bits != 2 && bits != 4 && bits != 8)
        return gguf_error_set(err, "%s: GPTQ bits %d is not supported (2, 4 or 8)", name, bits);
    g->bits = bits;
    g->per_word = 32 / bits;
    g->zero_add = v2 ? 0 : 1;
    if (qwdims != 2 || qwshape[0] <= 0 || qwshape[1] <= 0 || qwshape[0] > INT64_MAX / g->per_word)
        return gguf_error_set(err, "%s: qweight is not 2-D", name);
    g->in = qwshape[0] * g->per_word;
    g->out = qwshape[1];
    if (sdims != 2 || sshape[1] != g->out || sshape[0] <= 0)
        return gguf_error_set(err, "%s: scales is not [groups, %lld]", name, (long long)g->out);
    g->groups = sshape[0];
    if (g->out % g->per_word || qzdims != 2 || qzshape[0] != g->groups || qzshape[1] != g->out / g->per_word)
        return gguf_error_set(err, "%s: qzeros is not [%lld, %lld/%d]", name, (long long)g->groups,
                              (long long)g->out, g->per_word);
    if (gdims != 1 || gshape[0] != g->in)
        return gguf_error_set(err, "%s: g_idx is not [%lld] (one group per input column)", name, (long long)g->in);
    return 0;
}

int gptq_check_gidx(const gptq_pack *g, const char *name, const uint8_t *gidx, gguf_error *err)
{
    for (int64_t k = 0; k < g->in; k++) {
        const int32_t v = (int32_t)word_at(gidx, k);
        if (v < 0 || v >= g->groups)
            return gguf_error_set(err, "%s: g_idx[%lld] = %d is outside [0, %lld)", name, (long long)k, v,
                                  (long long)g->groups);
    }
    return 0;
}

void gptq_row(const gptq_pack *g, int64_t n, const uint8_t *qweight, const uint8_t *qzeros,
              const uint8_t *gidx, float (*scale)(const void *ctx, int64_t grp, int64_t n),
              const void *ctx, float *out)
{
    const uint32_t mask = (1u << g->bits) - 1;
    const int64_t zcols = g->out / g->per_word;
    const int zshift = (int)(n % g->per_word) * g->bits;
    for (int64_t k = 0; k < g->in; k++) {
        const int64_t grp = (int32_t)word_at(gidx, k);
        const int32_t w = (int32_t)(word_at(qweight, (k / g->per_word) * g->out + n) >>
                                    ((k % g->per_word) * g->bits) & mask);
        const int32_t z = (int32_t)(word_at(qzeros, grp * zcols + n / g->per_word) >> zshift & mask) + g->zero_add;
        out[k] = scale(ctx, grp, n) * (float)(w - z);
    }
}
