/*
 * qpack.c — compressed-tensors pack-quantized and GPTQ unpacking (qpack.h).
 */
#include "qpack.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/quants.h>

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

/* The zero point of row r, group g. */
static int32_t ct_zero(const ct_pack *p, int64_t r, int64_t g, const uint8_t *zp)
{
    if (!p->zero)
        return 1 << (p->bits - 1);
    const uint32_t mask = (1u << p->bits) - 1;
    return (int32_t)(word_at(zp, (r / p->per_word) * p->groups + g) >> ((r % p->per_word) * p->bits) & mask);
}

/* The code of column j of a row's packed words. */
static int32_t ct_code(const ct_pack *p, const uint8_t *words, int64_t j)
{
    const uint32_t mask = (1u << p->bits) - 1;
    return (int32_t)(word_at(words, j / p->per_word) >> ((j % p->per_word) * p->bits) & mask);
}

void ct_pack_row(const ct_pack *p, int64_t r, const uint8_t *words, const float *scales,
                 const uint8_t *zp, float *out)
{
    /* word by word, the group's zero and factor kept until its end: the
     * values of ct_code's, (code − zero) × factor */
    const uint32_t mask = (1u << p->bits) - 1;
    int64_t g = 0, g_end = p->group;
    int32_t z = ct_zero(p, r, 0, zp);
    float s = scales[0];
    for (int64_t k = 0, j = 0; j < p->cols; k++) {
        uint32_t w = word_at(words, k);
        for (int i = 0; i < p->per_word && j < p->cols; i++, j++, w >>= p->bits) {
            if (j == g_end) {
                g++;
                g_end += p->group;
                z = ct_zero(p, r, g, zp);
                s = scales[g];
            }
            out[j] = (float)((int32_t)(w & mask) - z) * s;
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

/* Zero point of group grp, output row n (the stored one plus zero_add). */
static int32_t gptq_zero(const gptq_pack *g, const uint8_t *qzeros, int64_t grp, int64_t n)
{
    const uint32_t mask = (1u << g->bits) - 1;
    return (int32_t)(word_at(qzeros, grp * (g->out / g->per_word) + n / g->per_word) >>
                     ((n % g->per_word) * g->bits) & mask) + g->zero_add;
}

/* Output element [n, k]. */
static float gptq_value(const gptq_pack *g, int64_t n, int64_t k, const uint8_t *qweight, const uint8_t *qzeros,
                        const uint8_t *gidx, float (*scale)(const void *ctx, int64_t grp, int64_t n),
                        const void *ctx)
{
    const uint32_t mask = (1u << g->bits) - 1;
    const int64_t grp = (int32_t)word_at(gidx, k);
    const int32_t w = (int32_t)(word_at(qweight, (k / g->per_word) * g->out + n) >>
                                ((k % g->per_word) * g->bits) & mask);
    return scale(ctx, grp, n) * (float)(w - gptq_zero(g, qzeros, grp, n));
}

void gptq_row(const gptq_pack *g, int64_t n, const uint8_t *qweight, const uint8_t *qzeros,
              const uint8_t *gidx, float (*scale)(const void *ctx, int64_t grp, int64_t n),
              const void *ctx, float *out)
{
    for (int64_t k = 0; k < g->in; k++)
        out[k] = gptq_value(g, n, k, qweight, qzeros, gidx, scale, ctx);
}

/* The block's scales and zeros of group grp into s[0..nb), z[0..nb). */
static void gptq_group(const gptq_pack *g, int64_t grp, int64_t n0, int nb, const uint8_t *qzeros,
                       float (*scale)(const void *ctx, int64_t grp, int64_t n), const void *ctx, float *s,
                       int32_t *z)
{
    for (int j = 0; j < nb; j++) {
        s[j] = scale(ctx, grp, n0 + j);
        z[j] = gptq_zero(g, qzeros, grp, n0 + j);
    }
}

void gptq_block(const gptq_pack *g, int64_t n0, int nb, const uint8_t *qweight, const uint8_t *qzeros,
                const uint8_t *gidx, float (*scale)(const void *ctx, int64_t grp, int64_t n),
                const void *ctx, float *stab, int32_t *ztab, float *out)
{
    const uint32_t mask = (1u << g->bits) - 1;
    const bool tab = g->groups <= GPTQ_TAB_GROUPS;
    for (int64_t grp = 0; tab && grp < g->groups; grp++)
        gptq_group(g, grp, n0, nb, qzeros, scale, ctx, stab + grp * nb, ztab + grp * nb);
    int64_t last = -1;
    uint32_t words[GPTQ_BLOCK];
    for (int64_t kw = 0; kw < g->in / g->per_word; kw++) {
        const uint8_t *at = qweight + (size_t)(kw * g->out + n0) * 4;
        for (int j = 0; j < nb; j++)
            words[j] = word_at(at, j);
        for (int i = 0; i < g->per_word; i++) {
            const int64_t k = kw * g->per_word + i, grp = (int32_t)word_at(gidx, k);
            if (!tab && grp != last)
                gptq_group(g, grp, n0, nb, qzeros, scale, ctx, stab, ztab);
            last = grp;
            const float *s = tab ? stab + grp * nb : stab;
            const int32_t *z = tab ? ztab + grp * nb : ztab;
            const int shift = i * g->bits;
            for (int j = 0; j < nb; j++)
                out[j * g->in + k] = s[j] * (float)((int32_t)(words[j] >> shift & mask) - z[j]);
        }
    }
}

int bitnet_check(bitnet_pack *b, const char *name, const int64_t *wshape, int wdims,
                 const int64_t *sshape, int sdims, gguf_error *err)
{
    memset(b, 0, sizeof *b);
    if (wdims != 2 || wshape[0] <= 0 || wshape[1] <= 0 || wshape[0] > INT64_MAX / 4)
        return gguf_error_set(err, "%s: a BitNet weight is not two positive dimensions", name);
    int64_t n = 1;
    for (int d = 0; d < sdims; d++)
        n = sshape[d] == 1 ? n : 0;
    if (n != 1) {
        char got[160];
        shape_text(got, sizeof got, sshape, sdims);
        return gguf_error_set(err, "%s: weight_scale of shape %s (BitNet weights take one factor)", name, got);
    }
    b->prows = wshape[0];
    b->rows = wshape[0] * 4;
    b->cols = wshape[1];
    return 0;
}

int bitnet_check_scale(const char *name, float scale, gguf_error *err)
{
    if (!isfinite(scale) || scale == 0)
        return gguf_error_set(err, "tensor '%s' is %s (the weight is divided by it: a finite factor other "
                              "than 0 expected)", name,
                              isnan(scale) ? "NaN" : isinf(scale) ? (scale > 0 ? "+Inf" : "-Inf") : "0");
    return 0;
}

void bitnet_row(const bitnet_pack *b, int64_t r, const uint8_t *packed, float scale, float *out)
{
    static const float value[4] = { -1.0f, 0.0f, 1.0f, 2.0f };
    const int shift = (int)(r / b->prows) * 2;
    const uint8_t *row = packed + (size_t)((r % b->prows) * b->cols);
    for (int64_t c = 0; c < b->cols; c++)
        out[c] = value[row[c] >> shift & 3] / scale;
}

/* ------------------------------------------------------------------------
 * The wiring (hf.c)
 * ------------------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static const char *const CT_PARTS[] = { ".weight_scale", ".weight_shape", ".weight_zero_point" };
static const char *const GPTQ_PARTS[] = { ".qzeros", ".scales", ".g_idx" };
static const char *const BITNET_PARTS[] = { ".weight_scale" };
#define CT_MAIN ".weight_packed"
#define GPTQ_MAIN ".qweight"
#define BITNET_MAIN ".weight"

/* quantization_config's member key as an int (absent: dflt; dflt < 0: required). */
static int qc_int(const json_value *obj, const char *where, const char *key, int64_t dflt, int64_t lo,
                  int64_t hi, int64_t *out, gguf_error *err)
{
    const json_value *v = json_get(obj, key);
    if ((!v || v->type == JSON_NULL) && dflt >= 0) {
        *out = dflt;
        return 0;
    }
    if (!v || v->type == JSON_NULL)
        return gguf_error_set(err, "config.json: quantization_config %s has no %s", where, key);
    if (!json_int(v, out) || *out < lo || *out > hi)
        return gguf_error_set(err, "config.json: quantization_config %s %s is not a whole number "
                              "from %lld to %lld", where, key, (long long)lo, (long long)hi);
    return 0;
}

/* A string member (absent or null: dflt). NULL with err when not a string. */
static const char *qc_str(const json_value *obj, const char *where, const char *key, const char *dflt,
                          gguf_error *err)
{
    const json_value *v = json_get(obj, key);
    if (!v || v->type == JSON_NULL) {
        if (!dflt)
            gguf_error_set(err, "config.json: quantization_config %s has no %s", where, key);
        return dflt;
    }
    if (!json_str(v))
        gguf_error_set(err, "config.json: quantization_config %s %s is not a string", where, key);
    return json_str(v);
}

/* The weights object of compressed-tensors' one config group, or NULL
 * with err. */
static const json_value *ct_weights(const json_value *qc, gguf_error *err)
{
    const json_value *groups = json_get(qc, "config_groups");
    if (!groups || groups->type != JSON_OBJECT || groups->n == 0) {
        gguf_error_set(err, "config.json: quantization_config config_groups is not an object "
                       "with a group");
        return NULL;
    }
    if (groups->n > 1) {
        gguf_error_set(err, "config.json: quantization_config has %zu config_groups (only one "
                       "is supported)", groups->n);
        return NULL;
    }
    const json_value *w = json_get(groups->items[0], "weights");
    if (!w || w->type != JSON_OBJECT)
        gguf_error_set(err, "config.json: quantization_config config_groups.%s has no weights "
                       "object", groups->keys[0]);
    return w && w->type == JSON_OBJECT ? w : NULL;
}

int ct_float_plan(const json_value *qc, int64_t block[2], gguf_error *err)
{
    const char *fmt = json_str(json_get(qc, "format"));
    const json_value *w = ct_weights(qc, err);
    const char *strategy = w ? qc_str(w, "weights", "strategy", "", err) : NULL;
    if (!strategy)
        return -1;
    if (strcmp(strategy, "channel") && strcmp(strategy, "block"))
        return gguf_error_set(err, "config.json: quantization_config weights strategy '%s' is not "
                              "supported with %s (channel or block)", strategy, fmt ? fmt : "float-quantized");
    const json_value *gs = json_get(w, "group_size"), *bs = json_get(w, "block_structure");
    if (gs && gs->type != JSON_NULL)
        return gguf_error_set(err, "config.json: quantization_config weights group_size is not "
                              "supported with %s", fmt ? fmt : "float-quantized");
    block[0] = block[1] = 0;
    if (bs && bs->type != JSON_NULL) {
        if (bs->type != JSON_ARRAY || bs->n != 2)
            return gguf_error_set(err, "config.json: quantization_config weights block_structure "
                                  "is not a list of two sizes");
        for (int d = 0; d < 2; d++)
            if (!json_int(bs->items[d], &block[d]) || block[d] < 1 || block[d] > (1 << 20))
                return gguf_error_set(err, "config.json: quantization_config weights "
                                      "block_structure[%d] is not a size from 1 to %d", d, 1 << 20);
    }
    return 0;
}

static int read_ct(qpack_plan *p, const json_value *qc, gguf_error *err)
{
    const char *fmt = qc_str(qc, "(compressed-tensors)", "format", NULL, err);
    if (!fmt)
        return -1;
    if (!strcmp(fmt, "float-quantized") || !strcmp(fmt, "int-quantized") || !strcmp(fmt, "naive-quantized"))
        return 0; /* codes with channel or block scales: fp8.h's */
    if (strcmp(fmt, "pack-quantized"))
        return gguf_error_set(err, "config.json: quantization_config compressed-tensors format '%s' "
                              "is unknown (pack-quantized, float-quantized, int-quantized and "
                              "naive-quantized are supported)", fmt);
    const json_value *w = ct_weights(qc, err);
    if (!w)
        return -1;
    const char *where = "weights";
    const char *strategy = qc_str(w, where, "strategy", "", err);
    const char *type = qc_str(w, where, "type", "int", err);
    if (!strategy || !type)
        return -1;
    if (strcmp(strategy, "group"))
        return gguf_error_set(err, "config.json: quantization_config weights strategy '%s' is not "
                              "supported with pack-quantized (only group)", strategy);
    if (strcmp(type, "int"))
        return gguf_error_set(err, "config.json: quantization_config weights type '%s' is not "
                              "supported with pack-quantized (only int)", type);
    int64_t bits, group;
    if (qc_int(w, where, "num_bits", -1, 1, 8, &bits, err) ||
        qc_int(w, where, "group_size", -1, 1, 1 << 24, &group, err))
        return -1;
    p->kind = QPACK_CT;
    p->bits = (int)bits;
    p->group = group;
    return 0;
}

static int read_gptq(qpack_plan *p, const json_value *qc, gguf_error *err)
{
    int64_t bits;
    if (qc_int(qc, "(gptq)", "bits", -1, 1, 32, &bits, err))
        return -1;
    if (bits != 2 && bits != 4 && bits != 8)
        return gguf_error_set(err, "config.json: quantization_config gptq bits %lld is not supported "
                              "(2, 4 or 8)", (long long)bits);
    const char *cf = qc_str(qc, "(gptq)", "checkpoint_format", "gptq", err);
    if (!cf)
        return -1;
    if (strcmp(cf, "gptq") && strcmp(cf, "gptq_v2"))
        return gguf_error_set(err, "config.json: quantization_config gptq checkpoint_format '%s' is "
                              "not supported (gptq or gptq_v2)", cf);
    p->kind = QPACK_GPTQ;
    p->bits = (int)bits;
    p->v2 = !strcmp(cf, "gptq_v2");
    return 0;
}

int qpack_plan_read(qpack_plan *p, const json_value *config, gguf_error *err)
{
    memset(p, 0, sizeof *p);
    const json_value *qc = json_get(config, "quantization_config");
    const char *method = json_str(json_get(qc, "quant_method"));
    if (!qc || qc->type != JSON_OBJECT || !method)
        return 0; /* fp8_plan_read judges the rest */
    if (!strcmp(method, "compressed-tensors"))
        return read_ct(p, qc, err);
    if (!strcmp(method, "gptq"))
        return read_gptq(p, qc, err);
    if (!strcmp(method, "bitnet"))
        p->kind = QPACK_BITNET; /* dequant_bitnet reads nothing else of it */
    return 0;
}

/* The part suffixes of the plan's kind, and its packed tensor's. */
static const char *const *parts_of(const qpack_plan *p, const char **main)
{
    if (p->kind == QPACK_BITNET) {
        *main = BITNET_MAIN;
        return BITNET_PARTS;
    }
    *main = p->kind == QPACK_GPTQ ? GPTQ_MAIN : CT_MAIN;
    return p->kind == QPACK_GPTQ ? GPTQ_PARTS : CT_PARTS;
}

bool qpack_is_main(const qpack_plan *p, const char *name, char *weight, size_t size)
{
    const char *main;
    if (p->kind == QPACK_NONE || p->kind == QPACK_BITNET)
        return false;
    parts_of(p, &main);
    if (!ends_with(name, main))
        return false;
    snprintf(weight, size, "%.*s.weight", (int)(strlen(name) - strlen(main)), name);
    return true;
}

bool qpack_consumed(const qpack_plan *p, const char *name)
{
    const char *main;
    if (p->kind == QPACK_NONE)
        return false;
    if (p->kind == QPACK_BITNET) /* the weights stay where they are */
        return ends_with(name, BITNET_PARTS[0]);
    const char *const *parts = parts_of(p, &main);
    if (ends_with(name, main))
        return true;
    for (int i = 0; i < 3; i++)
        if (ends_with(name, parts[i]))
            return true;
    return false;
}

/* name with its suffix `from` replaced by `to` into buf. */
static const char *swap_suffix(char *buf, size_t size, const char *name, const char *from, const char *to)
{
    snprintf(buf, size, "%.*s%s", (int)(strlen(name) - strlen(from)), name, to);
    return buf;
}

/* A BitNet weight's scale, when name is a weight with one beside it. */
static const struct fp8_entry *bitnet_scale_of(const fp8_plan *index, const char *name)
{
    char buf[512];
    if (!ends_with(name, BITNET_MAIN) || strlen(name) + 7 > sizeof buf)
        return NULL;
    return fp8_find(index, swap_suffix(buf, sizeof buf, name, BITNET_MAIN, BITNET_PARTS[0]));
}

bool qpack_in_place(const qpack_plan *p, const fp8_plan *index, const char *name)
{
    return p->kind == QPACK_BITNET && bitnet_scale_of(index, name);
}

/* BitNet: every scale beside its weight; a byte weight with a scale and no
 * plan named. */
static int bitnet_plan_check(const qpack_plan *p, const st_tensor *t, const char *file,
                             const fp8_plan *index, gguf_error *err)
{
    char buf[512];
    if (p->kind == QPACK_NONE) {
        if (!strcmp(t->dtype, "U8") && bitnet_scale_of(index, t->name))
            return gguf_error_set(err, "%s: tensor '%s' is U8 with a '%s_scale' (a BitNet weight), but "
                                  "config.json has no quantization_config with quant_method bitnet",
                                  file, t->name, t->name);
        return 0;
    }
    if (!strcmp(t->dtype, "U8") && ends_with(t->name, BITNET_MAIN) && !bitnet_scale_of(index, t->name))
        return gguf_error_set(err, "%s: tensor '%s' is U8 but has no '%s_scale' beside it (a BitNet weight "
                              "without its factor)", file, t->name, t->name);
    if (ends_with(t->name, BITNET_PARTS[0]) &&
        !fp8_find(index, swap_suffix(buf, sizeof buf, t->name, BITNET_PARTS[0], BITNET_MAIN)))
        return gguf_error_set(err, "%s: tensor '%s' belongs to '%s', which the checkpoint "
                              "does not have", file, t->name, buf);
    return 0;
}

int qpack_plan_check(const qpack_plan *p, const fp8_plan *index, gguf_error *err)
{
    for (size_t i = 0; i < index->n_index; i++) {
        const st_tensor *t = index->index[i].t;
        const char *file = index->index[i].file;
        if ((p->kind == QPACK_NONE || p->kind == QPACK_BITNET) && bitnet_plan_check(p, t, file, index, err))
            return -1;
        if (p->kind == QPACK_BITNET)
            continue;
        if (p->kind == QPACK_NONE) {
            if (ends_with(t->name, CT_MAIN) || ends_with(t->name, GPTQ_MAIN))
                return gguf_error_set(err, "%s: tensor '%s' is a packed quantized weight, but "
                                      "config.json has no quantization_config with quant_method "
                                      "compressed-tensors or gptq", file, t->name);
            continue;
        }
        const char *main;
        const char *const *parts = parts_of(p, &main);
        char buf[512];
        if (ends_with(t->name, main)) {
            for (int k = 0; k < 3; k++) {
                if (p->kind == QPACK_CT && k == 2)
                    continue; /* the zero point is optional */
                const char *need = swap_suffix(buf, sizeof buf, t->name, main,
                                               p->kind == QPACK_CT ? parts[k] : parts[k]);
                if (p->kind == QPACK_CT) /* X.weight_packed → X.weight_scale */
                    need = swap_suffix(buf, sizeof buf, t->name, main, parts[k]);
                if (!fp8_find(index, need))
                    return gguf_error_set(err, "%s: tensor '%s' has no '%s' beside it", file, t->name,
                                          need);
            }
            continue;
        }
        for (int k = 0; k < 3; k++) {
            if (!ends_with(t->name, parts[k]))
                continue;
            const char *need = swap_suffix(buf, sizeof buf, t->name, parts[k], main);
            if (!fp8_find(index, need))
                return gguf_error_set(err, "%s: tensor '%s' belongs to '%s', which the checkpoint "
                                      "does not have", file, t->name, need);
        }
    }
    return 0;
}

static float scale_value(uint8_t sdtype, const uint8_t *data, int64_t i)
{
    uint16_t h;
    float f;
    if (sdtype == SRC_F32) {
        memcpy(&f, data + (size_t)i * 4, 4);
        return f;
    }
    memcpy(&h, data + (size_t)i * 2, 2);
    return sdtype == SRC_F16 ? gguf_f16_to_f32(h) : gguf_bf16_to_f32(h);
}

static float gptq_scale(const void *ctx, int64_t grp, int64_t n)
{
    const qpack_src *q = ctx;
    return scale_value(q->sdtype, q->scale, grp * q->gq.out + n);
}

/* The part of weight `name` with suffix `suffix` in place of `main`, of one
 * of the dtypes (a comma-separated list); NULL when absent and optional. */
static const st_tensor *part(const fp8_plan *index, const char *name, const char *main, const char *suffix,
                             const char *dtypes, bool optional, const char **file, gguf_error *err, int *rc)
{
    char buf[512];
    swap_suffix(buf, sizeof buf, name, main, suffix);
    const struct fp8_entry *e = fp8_find(index, buf);
    if (!e) {
        if (!optional)
            *rc = gguf_error_set(err, "tensor '%s' has no '%s' beside it", name, buf);
        return NULL;
    }
    char list[64];
    snprintf(list, sizeof list, ",%s,", dtypes);
    char want[16];
    snprintf(want, sizeof want, ",%s,", e->t->dtype);
    if (!strstr(list, want)) {
        *rc = gguf_error_set(err, "tensor '%s' is %s (%s expected)", buf, e->t->dtype, dtypes);
        *file = e->file;
        return NULL;
    }
    return e->t;
}

static int check_scales(const qpack_src *q, const st_tensor *s, gguf_error *err)
{
    const int64_t n = s->shape[0] * s->shape[1];
    for (int64_t i = 0; i < n; i++) {
        const float v = scale_value(q->sdtype, s->data, i);
        if (!isfinite(v))
            return gguf_error_set(err, "tensor '%s' has a non-finite factor (%s) at [%lld, %lld]", s->name,
                                  isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf", (long long)(i / s->shape[1]),
                                  (long long)(i % s->shape[1]));
    }
    return 0;
}

static void add_part(qpack_src *q, const st_tensor *t)
{
    if (!t)
        return;
    q->part[q->n_part] = t->data;
    q->part_bytes[q->n_part++] = t->nbytes;
    q->mapped = q->mapped && t->mapped;
}

static const char *file_of(const struct fp8_entry *e) { return e ? e->file : ""; }

int qpack_take(const qpack_plan *p, const fp8_plan *index, const char *name, qpack_src **out,
               gguf_error *err)
{
    *out = NULL;
    const struct fp8_entry *me = fp8_find(index, name);
    const char *file = me ? me->file : "checkpoint";
    qpack_src *q = calloc(1, sizeof *q);
    if (!q)
        return gguf_error_set(err, "out of memory");
    q->kind = p->kind;
    q->mapped = true;
    int rc = 0;
    const char *main;
    const char *const *sfx = parts_of(p, &main);
    const st_tensor *w = me ? me->t : NULL;
    const st_tensor *touched[4] = { NULL }; /* the parts the checks read */
    if (!w)
        rc = gguf_error_set(err, "tensor '%s': not found", name);
    else if (p->kind == QPACK_BITNET) {
        if (strcmp(w->dtype, "U8") && strcmp(w->dtype, "I8"))
            rc = gguf_error_set(err, "tensor '%s' is %s (U8 or I8 expected: a BitNet weight)", name, w->dtype);
    } else if (strcmp(w->dtype, "I32"))
        rc = gguf_error_set(err, "tensor '%s' is %s (I32 expected)", name, w->dtype);
    const st_tensor *sc = rc ? NULL : part(index, name, main, sfx[p->kind == QPACK_GPTQ ? 1 : 0], "F32,F16,BF16",
                                           false, &file, err, &rc);
    if (!rc) {
        q->sdtype = (uint8_t)src_dtype_of(sc->dtype);
        touched[0] = sc;
        q->scale = sc->data;
        q->packed = w->data;
        add_part(q, w);
        add_part(q, sc);
    }
    if (!rc && p->kind == QPACK_BITNET) {
        if (bitnet_check(&q->bn, name, w->shape, w->n_dims, sc->shape, sc->n_dims, err))
            rc = -1;
        if (!rc) {
            q->inv = scale_value(q->sdtype, sc->data, 0);
            q->rows = q->bn.rows;
            q->cols = q->bn.cols;
            if (bitnet_check_scale(sc->name, q->inv, err))
                rc = -1;
        }
    } else if (!rc && p->kind == QPACK_CT) {
        const st_tensor *sh = part(index, name, main, sfx[1], "I64,I32", false, &file, err, &rc);
        const st_tensor *zp = rc ? NULL : part(index, name, main, sfx[2], "I32", true, &file, err, &rc);
        int64_t shape[2] = { 0, 0 };
        touched[1] = sh;
        if (!rc && (sh->n_dims != 1 || sh->shape[0] != 2))
            rc = gguf_error_set(err, "tensor '%s' is not a shape of two dimensions", sh->name);
        for (int d = 0; !rc && d < 2; d++) {
            if (!strcmp(sh->dtype, "I64")) {
                uint64_t u = 0;
                for (int b = 7; b >= 0; b--)
                    u = u << 8 | sh->data[d * 8 + b];
                shape[d] = (int64_t)u;
            } else {
                shape[d] = (int32_t)((uint32_t)sh->data[d * 4] | (uint32_t)sh->data[d * 4 + 1] << 8 |
                                     (uint32_t)sh->data[d * 4 + 2] << 16 | (uint32_t)sh->data[d * 4 + 3] << 24);
            }
        }
        if (!rc && ct_pack_check(&q->ct, name, p->bits, p->group, shape, 2, w->shape, w->n_dims, sc->shape,
                                 sc->n_dims, zp ? zp->shape : NULL, zp ? zp->n_dims : 0, err))
            rc = -1;
        if (!rc) {
            q->rows = q->ct.rows;
            q->cols = q->ct.cols;
            q->zero = zp ? zp->data : NULL;
            add_part(q, zp);
        }
    } else if (!rc) {
        const st_tensor *qz = part(index, name, main, sfx[0], "I32", false, &file, err, &rc);
        const st_tensor *gi = rc ? NULL : part(index, name, main, sfx[2], "I32", false, &file, err, &rc);
        if (!rc && gptq_check(&q->gq, name, p->bits, p->v2, w->shape, w->n_dims, qz->shape, qz->n_dims,
                              sc->shape, sc->n_dims, gi->shape, gi->n_dims, err))
            rc = -1;
        if (!rc && gptq_check_gidx(&q->gq, gi->name, gi->data, err))
            rc = -1;
        if (!rc) {
            q->rows = q->gq.out;
            q->cols = q->gq.in;
            q->zero = qz->data;
            q->gidx = gi->data;
            touched[2] = gi;
            add_part(q, qz);
            add_part(q, gi);
        }
    }
    if (!rc && p->kind != QPACK_BITNET && check_scales(q, sc, err))
        rc = -1;
    /* the pages the checks read (scales, shape, g_idx) dropped again: the
     * writer reads each tensor's long after, and a model's worth of them
     * kept mapped would grow with the model. With every part in the packed
     * tensor's shard, the whole span from the first part to the last (the
     * pages the kernel mapped around the ones read lie there too) */
    const uint8_t *lo = w ? w->data : NULL, *hi = w ? w->data + w->nbytes : NULL;
    bool one_shard = true;
    for (int k = 0; !rc && k < 4; k++) {
        if (!touched[k])
            continue;
        const struct fp8_entry *e = fp8_find(index, touched[k]->name);
        one_shard = one_shard && e && !strcmp(e->file, file_of(me)) && touched[k]->mapped;
        lo = touched[k]->data < lo ? touched[k]->data : lo;
        hi = touched[k]->data + touched[k]->nbytes > hi ? touched[k]->data + touched[k]->nbytes : hi;
    }
    for (int k = 0; !rc && q->mapped && k < 4; k++)
        if (touched[k] && touched[k]->mapped && !one_shard)
            st_drop_pages(touched[k]->data, touched[k]->nbytes);
    if (!rc && q->mapped && one_shard)
        st_drop_pages(lo, (uint64_t)(hi - lo));
    if (rc) {
        gguf_error_prefix(err, "%s: ", file);
        free(q);
        return -1;
    }
    *out = q;
    return 0;
}

/* Element [r, c] of the output weight. */
static float qpack_elem(const qpack_src *q, int64_t r, int64_t c)
{
    if (q->kind == QPACK_GPTQ)
        return gptq_value(&q->gq, r, c, q->packed, q->zero, q->gidx, gptq_scale, q);
    if (q->kind == QPACK_BITNET) {
        const uint8_t byte = q->packed[(size_t)((r % q->bn.prows) * q->bn.cols + c)];
        return (float)((int32_t)(byte >> (r / q->bn.prows * 2) & 3) - 1) / q->inv;
    }
    const ct_pack *p = &q->ct;
    const int64_t g = c / p->group;
    return (float)(ct_code(p, q->packed + (size_t)(r * p->words) * 4, c) - ct_zero(p, r, g, q->zero)) *
           scale_value(q->sdtype, q->scale, r * p->groups + g);
}

/* Output rows [r0, r0 + nr) of a GPTQ source whole into out (nr × in):
 * GPTQ_BLOCK rows at a time (qweight's rows of words are [in / per_word,
 * out]: an output row reads one word from each, and consecutive rows share
 * their cache lines). stab / ztab: gptq_block's tables for blocks of nb
 * rows, or NULL (out of memory: row by row, the same values). */
static void gptq_rows(const qpack_src *q, int64_t r0, int64_t nr, float *out, float *stab, int32_t *ztab)
{
    const gptq_pack *g = &q->gq;
    for (int64_t n = r0; n < r0 + nr; n += GPTQ_BLOCK) {
        const int nb = r0 + nr - n < GPTQ_BLOCK ? (int)(r0 + nr - n) : GPTQ_BLOCK;
        float *at = out + (n - r0) * g->in;
        if (stab)
            gptq_block(g, n, nb, q->packed, q->zero, q->gidx, gptq_scale, q, stab, ztab, at);
        else
            for (int j = 0; j < nb; j++)
                gptq_row(g, n + j, q->packed, q->zero, q->gidx, gptq_scale, q, at + j * g->in);
    }
}

/* gptq_block's tables for blocks of up to nb rows of sources of up to
 * `groups` groups: one allocation (*tab, freed by the caller; NULL when out
 * of memory), split into stab / ztab. */
static void gptq_tables(int64_t groups, int64_t nb, void **tab, float **stab, int32_t **ztab)
{
    groups = groups < GPTQ_TAB_GROUPS ? groups : GPTQ_TAB_GROUPS;
    const size_t n = (size_t)(groups * (nb < GPTQ_BLOCK ? nb : GPTQ_BLOCK));
    *tab = malloc(n * (sizeof **stab + sizeof **ztab));
    *stab = *tab;
    *ztab = *tab ? (int32_t *)(*stab + n) : NULL;
}

/* Output rows [r0, r0 + nr) whole into out (nr × cols); stab / ztab: a
 * GPTQ source's tables (gptq_tables), or NULL. */
static void qpack_run(const qpack_src *q, int64_t r0, int64_t nr, float *out, float *stab, int32_t *ztab)
{
    float sbuf[4096]; /* a row's scales */
    if (q->kind == QPACK_GPTQ) {
        gptq_rows(q, r0, nr, out, stab, ztab);
        return;
    }
    for (int64_t r = r0; r < r0 + nr; r++, out += q->cols) {
        if (q->kind == QPACK_BITNET) {
            bitnet_row(&q->bn, r, q->packed, q->inv, out);
        } else if (q->ct.groups <= (int64_t)(sizeof sbuf / sizeof *sbuf)) {
            for (int64_t g = 0; g < q->ct.groups; g++)
                sbuf[g] = scale_value(q->sdtype, q->scale, r * q->ct.groups + g);
            ct_pack_row(&q->ct, r, q->packed + (size_t)(r * q->ct.words) * 4, sbuf, q->zero, out);
        } else {
            for (int64_t c = 0; c < q->cols; c++)
                out[c] = qpack_elem(q, r, c);
        }
    }
}

/* qpack_rows over at most ROWS_WINDOW rows. */
#define ROWS_WINDOW 256
static void rows_window(const qpack_src *q, const int64_t *from, int nr, float *out, float *blk, float *stab,
                        int32_t *ztab)
{
    bool done[ROWS_WINDOW] = { false };
    for (int i = 0; i < nr; i++) {
        if (done[i])
            continue;
        const int64_t e = q->slice ? from[i] / q->rows : 0, r = from[i] - e * q->rows;
        const qpack_src *s = q->slice ? &q->slice[e] : q;
        int k = 1; /* the run of consecutive rows from here */
        while (i + k < nr && !done[i + k] && from[i + k] == from[i] + k && r + k < q->rows)
            k++;
        if (s->kind != QPACK_GPTQ || k >= GPTQ_BLOCK || !blk) {
            qpack_run(s, r, k, out + i * q->cols, stab, ztab);
            i += k - 1;
            continue;
        }
        /* r's block decoded once, and every row of it this window asks
         * copied out */
        const int64_t b0 = r / GPTQ_BLOCK * GPTQ_BLOCK;
        const int bn = q->rows - b0 < GPTQ_BLOCK ? (int)(q->rows - b0) : GPTQ_BLOCK;
        gptq_rows(s, b0, bn, blk, stab, ztab);
        for (int m = i; m < nr; m++)
            if (!done[m] && from[m] >= e * q->rows + b0 && from[m] < e * q->rows + b0 + bn) {
                memcpy(out + m * q->cols, blk + (from[m] - e * q->rows - b0) * q->cols,
                       (size_t)q->cols * sizeof *out);
                done[m] = true;
            }
    }
}

void qpack_rows(const qpack_src *q, const int64_t *from, int64_t nr, float *out)
{
    void *tab = NULL;
    float *stab = NULL, *blk = NULL;
    int32_t *ztab = NULL;
    if (q->kind == QPACK_GPTQ) { /* a stack's slices may have other group counts */
        gptq_tables(q->slice ? GPTQ_TAB_GROUPS : q->gq.groups, GPTQ_BLOCK, &tab, &stab, &ztab);
        blk = tab ? malloc((size_t)(GPTQ_BLOCK * q->cols) * sizeof *blk) : NULL;
    }
    for (int64_t i = 0; i < nr; i += ROWS_WINDOW)
        rows_window(q, from + i, nr - i < ROWS_WINDOW ? (int)(nr - i) : ROWS_WINDOW, out + i * q->cols, blk,
                    stab, ztab);
    free(blk);
    free(tab);
}

int qpack_stack(qpack_src **slices, int n, const char *name, qpack_src **out, gguf_error *err)
{
    *out = NULL;
    qpack_src *q = calloc(1, sizeof *q), *s = calloc((size_t)(n > 0 ? n : 1), sizeof *s);
    int rc = !q || !s ? gguf_error_set(err, "out of memory") : 0;
    if (!rc && n < 1)
        rc = gguf_error_set(err, "tensor '%s': no experts to stack", name);
    for (int e = 0; e < n && !rc; e++)
        if (slices[e]->rows != slices[0]->rows || slices[e]->cols != slices[0]->cols ||
            slices[e]->kind != slices[0]->kind)
            rc = gguf_error_set(err, "tensor '%s': expert %d's weight is [%lld, %lld], expert 0's "
                                "[%lld, %lld] (experts stack only when they are alike)", name, e,
                                (long long)slices[e]->rows, (long long)slices[e]->cols,
                                (long long)slices[0]->rows, (long long)slices[0]->cols);
    for (int e = 0; e < n; e++) {
        if (!rc)
            s[e] = *slices[e];
        qpack_src_free(slices[e]);
        slices[e] = NULL;
    }
    if (rc) {
        free(q);
        free(s);
        return -1;
    }
    *q = s[0];
    q->n_part = 0; /* the slices hold the parts */
    q->slice = s;
    q->n_slice = n;
    q->mapped = true;
    for (int e = 0; e < n; e++)
        q->mapped = q->mapped && s[e].mapped;
    *out = q;
    return 0;
}

void qpack_src_free(qpack_src *q)
{
    if (q)
        free(q->slice);
    free(q);
}

void qpack_parts(const qpack_src *q, void (*drop)(const void *data, uint64_t bytes))
{
    for (int e = 0; e < q->n_slice; e++)
        qpack_parts(&q->slice[e], drop);
    for (int p = 0; p < q->n_part; p++)
        drop(q->part[p], q->part_bytes[p]);
}

void qpack_span(const qpack_src *q, float *out, int64_t n, int64_t at)
{
    if (q->slice) { /* expert by expert */
        const int64_t per = q->rows * q->cols;
        while (n > 0) {
            const int64_t e = at / per, c = at % per, k = per - c < n ? per - c : n;
            qpack_span(&q->slice[e], out, k, c);
            out += k;
            at += k;
            n -= k;
        }
        return;
    }
    void *tab = NULL;
    float *stab = NULL;
    int32_t *ztab = NULL;
    while (n > 0) {
        const int64_t r = at / q->cols, c = at % q->cols;
        int64_t k = q->cols - c < n ? q->cols - c : n;
        if (c == 0 && n >= q->cols) { /* whole rows */
            const int64_t nr = n / q->cols;
            if (q->kind == QPACK_GPTQ && !tab)
                gptq_tables(q->gq.groups, nr, &tab, &stab, &ztab);
            qpack_run(q, r, nr, out, stab, ztab);
            k = nr * q->cols;
        } else {
            for (int64_t i = 0; i < k; i++)
                out[i] = qpack_elem(q, r, c + i);
        }
        out += k;
        at += k;
        n -= k;
    }
    free(tab);
}

float qpack_value(const qpack_src *q, int64_t i)
{
    float v;
    qpack_span(q, &v, 1, i);
    return v;
}

void qpack_origin(const qpack_src *q, char *out, size_t size)
{
    if (q->kind == QPACK_BITNET)
        snprintf(out, size, ", BitNet-packed [%lld, %lld]: %lld rows of four values a byte", (long long)q->bn.prows,
                 (long long)q->bn.cols, (long long)q->bn.rows);
    else
        snprintf(out, size, ", packed: [%lld, %lld]", (long long)q->rows, (long long)q->cols);
}
