/*
 * fp8.c — see fp8.h.
 */
#include "fp8.h"
#include "qpack.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/quants.h>


float fp8_e4m3_to_f32(uint8_t v)
{
    const uint32_t sign = (uint32_t)(v & 0x80) << 24, e = (v >> 3) & 0xf, m = v & 7;
    uint32_t bits;
    if (e == 0xf && m == 7) {
        bits = sign | 0x7fc00000u; /* NaN */
    } else if (e == 0) {
        if (m == 0) {
            bits = sign;
        } else { /* m/8 × 2^-6: normalize the mantissa into f32's */
            int shift = 0;
            uint32_t mm = m;
            while (!(mm & 8)) {
                mm <<= 1;
                shift++;
            }
            bits = sign | (uint32_t)(127 - 7 + 1 - shift) << 23 | (mm & 7) << 20;
        }
    } else {
        bits = sign | (e - 7 + 127) << 23 | m << 20;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static float scale_value(const fp8_scale *s, const uint8_t *base, int64_t k)
{
    uint16_t h;
    float f;
    switch (s->sdtype) {
    case SRC_F32: memcpy(&f, base + (size_t)k * 4, 4); return f;
    case SRC_F16: memcpy(&h, base + (size_t)k * 2, 2); return gguf_f16_to_f32(h);
    default: memcpy(&h, base + (size_t)k * 2, 2); return gguf_bf16_to_f32(h);
    }
}

static size_t scale_esize(const fp8_scale *s) { return s->sdtype == SRC_F32 ? 4 : 2; }

float fp8_scale_at(const fp8_scale *s, int64_t i)
{
    const int64_t per = s->rows * s->cols, mat = i / per, r = i / s->cols % s->rows,
                  c = i % s->cols;
    const uint8_t *base = s->parts ? s->parts[mat]
                        : s->data + (size_t)(mat * s->s_rows * s->s_cols) * scale_esize(s);
    return scale_value(s, base, r / s->block[0] * s->s_cols + c / s->block[1]);
}

/* The 256 values, for the stream (filled once, on first use). */
static float e4m3_table[256], int8_table[256];
static pthread_once_t e4m3_once = PTHREAD_ONCE_INIT;

static void e4m3_fill(void)
{
    for (int v = 0; v < 256; v++) {
        e4m3_table[v] = fp8_e4m3_to_f32((uint8_t)v);
        int8_table[v] = (float)(int8_t)v;
    }
}

void fp8_dequant_span(const fp8_scale *s, const uint8_t *src, float *out, int64_t n, int64_t at)
{
    pthread_once(&e4m3_once, e4m3_fill);
    const float *table = s->int8 ? int8_table : e4m3_table;
    for (int64_t i = 0; i < n;) {
        /* one run of values sharing a block: up to the block's right edge
         * or the row's end */
        const int64_t c = (at + i) % s->cols, left = s->block[1] - c % s->block[1],
                      end = s->cols - c;
        int64_t k = left < end ? left : end;
        if (k > n - i)
            k = n - i;
        const float f = fp8_scale_at(s, at + i);
        for (int64_t j = 0; j < k; j++)
            out[i + j] = table[src[i + j]] * f;
        i += k;
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void shape_text(char *out, size_t size, const int64_t *shape, int n)
{
    size_t at = 0;
    at += (size_t)snprintf(out, size, "[");
    for (int d = 0; d < n && at < size; d++)
        at += (size_t)snprintf(out + at, size - at, "%s%" PRId64, d ? ", " : "", shape[d]);
    if (at < size)
        snprintf(out + at, size - at, "]");
}

int fp8_scale_shape(fp8_scale *s, const int64_t *wshape, int wdims, const int64_t *sshape,
                    int sdims, const int64_t block[2], gguf_error *err)
{
    if (wdims < 2)
        return gguf_error_set(err, "an FP8 weight of %d dimension%s (a matrix or a stack of them "
                              "expected)", wdims, wdims == 1 ? "" : "s");
    const int64_t rows = wshape[wdims - 2], cols = wshape[wdims - 1];
    if (rows <= 0 || cols <= 0)
        return gguf_error_set(err, "an empty FP8 weight");
    int64_t lead = 1;
    for (int d = 0; d < wdims - 2; d++)
        lead *= wshape[d];
    int64_t want[ST_MAX_DIMS];
    int nwant = wdims;
    s->rows = rows;
    s->cols = cols;
    if (block[0] > 0) {
        memcpy(want, wshape, (size_t)(wdims - 2) * sizeof *want);
        want[wdims - 2] = s->s_rows = ceil_div(rows, block[0]);
        want[wdims - 1] = s->s_cols = ceil_div(cols, block[1]);
        s->block[0] = block[0];
        s->block[1] = block[1];
    } else {
        /* no block size: one factor for the tensor, or one per row ([rows]
         * or [rows, 1]), which is what torch's broadcast gives */
        int64_t n = 1;
        for (int d = 0; d < sdims; d++)
            n *= sshape[d];
        if (n == 1 && lead == 1) {
            s->s_rows = s->s_cols = 1;
            s->block[0] = rows;
            s->block[1] = cols;
            return 0;
        }
        if (lead == 1 && ((sdims == 1 && sshape[0] == rows) ||
                          (sdims == 2 && sshape[0] == rows && sshape[1] == 1))) {
            s->s_rows = rows;
            s->s_cols = 1;
            s->block[0] = 1;
            s->block[1] = cols;
            return 0;
        }
        char got[160];
        shape_text(got, sizeof got, sshape, sdims);
        return gguf_error_set(err, "scale of shape %s: without weight_block_size only one factor "
                              "or one per row (%" PRId64 ") is supported", got, rows);
    }
    if (sdims != nwant || memcmp(sshape, want, (size_t)nwant * sizeof *want)) {
        char got[160], exp[160];
        shape_text(got, sizeof got, sshape, sdims);
        shape_text(exp, sizeof exp, want, nwant);
        return gguf_error_set(err, "scale of shape %s, but a weight of %" PRId64 " × %" PRId64
                              " in %" PRId64 " × %" PRId64 " blocks needs %s", got, rows, cols,
                              block[0], block[1], exp);
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * The plan
 * ------------------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct fp8_entry *)a)->t->name, ((const struct fp8_entry *)b)->t->name);
}

const struct fp8_entry *fp8_find(const fp8_plan *p, const char *name)
{
    size_t lo = 0, hi = p->n_index;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(p->index[mid].t->name, name);
        if (!c)
            return &p->index[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* An activation scale: static quantization of the inputs, which a GGUF
 * cannot carry. */
static bool activation_scale(const char *name)
{
    return ends_with(name, ".input_scale") || ends_with(name, "activation_scale") ||
           ends_with(name, ".qscale_act");
}

static bool is_f8(const char *dtype) { return !strncmp(dtype, "F8_", 3); }

int fp8_plan_read(fp8_plan *p, const json_value *config, const st_file *shards,
                  const char *const *shard_names, int n_shards, gguf_error *err)
{
    memset(p, 0, sizeof *p);
    const json_value *qc = json_get(config, "quantization_config");
    const char *method = json_str(json_get(qc, "quant_method"));
    if (qc && qc->type != JSON_NULL && qc->type != JSON_OBJECT)
        return gguf_error_set(err, "config.json: quantization_config is not an object");
    if (qc && qc->type == JSON_OBJECT && !method)
        return gguf_error_set(err, "config.json: quantization_config has no quant_method");
    /* mxfp4 is gpt-oss's own (its experts are written as they are);
     * compressed-tensors, gptq and bitnet are qpack.h's */
    if (method && strcmp(method, "fp8") && strcmp(method, "mxfp4") &&
        strcmp(method, "compressed-tensors") && strcmp(method, "gptq") && strcmp(method, "bitnet"))
        return gguf_error_set(err, "config.json: quantization_config quant_method '%s' is not "
                              "supported (fp8, compressed-tensors, gptq or bitnet)", method);
    size_t n = 0;
    for (int k = 0; k < n_shards; k++)
        n += shards[k].n;
    if (n && !(p->index = malloc(n * sizeof *p->index)))
        return gguf_error_set(err, "out of memory");
    for (int k = 0; k < n_shards; k++)
        for (size_t i = 0; i < shards[k].n; i++)
            p->index[p->n_index++] = (struct fp8_entry){ &shards[k].tensors[i], shard_names[k] };
    if (p->n_index)
        qsort(p->index, p->n_index, sizeof *p->index, cmp_entry);

    p->on = method && !strcmp(method, "fp8");
    p->suffix = "_scale_inv";
    const char *fmt_ct = json_str(json_get(qc, "format"));
    if (method && !strcmp(method, "compressed-tensors") && fmt_ct &&
        (!strcmp(fmt_ct, "float-quantized") || !strcmp(fmt_ct, "int-quantized") ||
         !strcmp(fmt_ct, "naive-quantized"))) {
        /* dequant_simple for all three: weight.float() × scale, whatever
         * the weight's dtype (int8 codes, or FP8) */
        p->on = true;
        p->int8 = strcmp(fmt_ct, "float-quantized") != 0;
        p->suffix = "_scale";
        if (ct_float_plan(qc, p->block, err))
            return -1;
    } else if (p->on) {
        const char *fmt = json_str(json_get(qc, "fmt"));
        const json_value *fv = json_get(qc, "fmt"), *as = json_get(qc, "activation_scheme"),
                         *bs = json_get(qc, "weight_block_size");
        if (fv && fv->type != JSON_NULL && (!fmt || strcmp(fmt, "e4m3")))
            return gguf_error_set(err, "config.json: quantization_config fmt %s%s%s is not "
                                  "supported (only e4m3)", fmt ? "'" : "", fmt ? fmt : "(not a string)",
                                  fmt ? "'" : "");
        const char *scheme = json_str(as);
        if (as && as->type != JSON_NULL && (!scheme || strcmp(scheme, "dynamic")))
            return gguf_error_set(err, "config.json: quantization_config activation_scheme %s%s%s "
                                  "is not supported (only dynamic: static activation scales have "
                                  "no place in a GGUF)", scheme ? "'" : "",
                                  scheme ? scheme : "(not a string)", scheme ? "'" : "");
        if (bs && bs->type != JSON_NULL) {
            if (bs->type != JSON_ARRAY || bs->n != 2)
                return gguf_error_set(err, "config.json: quantization_config weight_block_size "
                                      "is not a list of two sizes");
            for (int d = 0; d < 2; d++)
                if (!json_int(bs->items[d], &p->block[d]) || p->block[d] < 1 ||
                    p->block[d] > (1 << 20))
                    return gguf_error_set(err, "config.json: quantization_config "
                                          "weight_block_size[%d] is not a size from 1 to %d", d,
                                          1 << 20);
        }
    }
    for (size_t i = 0; i < p->n_index; i++) {
        const st_tensor *t = p->index[i].t;
        const char *file = p->index[i].file;
        if (is_f8(t->dtype) && strcmp(t->dtype, "F8_E4M3"))
            return gguf_error_set(err, "%s: tensor '%s' is %s: only F8_E4M3 is supported", file,
                                  t->name, t->dtype);
        if (is_f8(t->dtype) && !p->on)
            return gguf_error_set(err, "%s: tensor '%s' is F8_E4M3, but config.json has no "
                                  "quantization_config with quant_method fp8", file, t->name);
        /* int8 codes with a scale beside them (under bitnet: its weights) */
        if (!p->int8 && !strcmp(t->dtype, "I8") && strcmp(method ? method : "", "bitnet")) {
            char sname[512];
            snprintf(sname, sizeof sname, "%s_scale", t->name);
            if (fp8_find(p, sname))
                return gguf_error_set(err, "%s: tensor '%s' is I8 with a '%s', but config.json has "
                                      "no quantization_config with quant_method compressed-tensors "
                                      "(int-quantized or naive-quantized)", file, t->name, sname);
        }
        if (!p->on)
            continue;
        if (p->int8 && ends_with(t->name, ".weight_zero_point"))
            return gguf_error_set(err, "%s: tensor '%s': zero points (asymmetric int-quantized) are "
                                  "not supported (e21cdc11 applies the scale only)", file, t->name);
        if (activation_scale(t->name))
            return gguf_error_set(err, "%s: tensor '%s' is an activation scale: static activation "
                                  "quantization is not supported", file, t->name);
        if (ends_with(t->name, p->suffix)) {
            char w[512];
            snprintf(w, sizeof w, "%.*s", (int)(strlen(t->name) - strlen(p->suffix)), t->name);
            const struct fp8_entry *we = fp8_find(p, w);
            if (!we)
                return gguf_error_set(err, "%s: tensor '%s' scales '%s', which the checkpoint "
                                      "does not have", file, t->name, w);
            if (strcmp(we->t->dtype, "F8_E4M3") && (!p->int8 || strcmp(we->t->dtype, "I8")))
                return gguf_error_set(err, "%s: tensor '%s' scales '%s', which is %s, not "
                                      "%s", file, t->name, w, we->t->dtype,
                                      p->int8 ? "I8 or F8_E4M3" : "F8_E4M3");
        }
    }
    return 0;
}

bool fp8_consumed(const fp8_plan *p, const st_tensor *st)
{
    return p->on && ends_with(st->name, p->suffix);
}

/* The scale of the FP8 weight `name` (in `file`) into s (data or part k). */
static int take_scale(const fp8_plan *p, const char *name, const char *file, fp8_scale *s, int k,
                      gguf_error *err)
{
    const struct fp8_entry *w = fp8_find(p, name);
    char sname[512];
    if (!w)
        return gguf_error_set(err, "%s: tensor '%s': not found", file ? file : "checkpoint", name);
    snprintf(sname, sizeof sname, "%s%s", name, p->suffix);
    const struct fp8_entry *e = fp8_find(p, sname);
    if (!e)
        return gguf_error_set(err, "%s: tensor '%s' is %s but has no '%s' beside it", w->file,
                              name, w->t->dtype, sname);
    const st_tensor *st = e->t;
    const int sd = src_dtype_of(st->dtype);
    if (sd != SRC_F32 && sd != SRC_F16 && sd != SRC_BF16)
        return gguf_error_set(err, "%s: tensor '%s' is %s (F32, F16 or BF16 expected)", e->file,
                              sname, st->dtype);
    fp8_scale one = { .sdtype = (uint8_t)sd };
    if (fp8_scale_shape(&one, w->t->shape, w->t->n_dims, st->shape, st->n_dims, p->block, err))
    {
        gguf_error_prefix(err, "%s: tensor '%s': ", e->file, sname);
        return -1;
    }
    if (k == 0) {
        s->data = st->data;
        s->sdtype = one.sdtype;
        s->rows = one.rows;
        s->cols = one.cols;
        s->block[0] = one.block[0];
        s->block[1] = one.block[1];
        s->s_rows = one.s_rows;
        s->s_cols = one.s_cols;
        s->from = (src_origin){ e->file, st->name };
    } else if (one.sdtype != s->sdtype || one.s_rows != s->s_rows || one.s_cols != s->s_cols ||
               one.rows != s->rows || one.cols != s->cols) {
        return gguf_error_set(err, "%s: tensor '%s': dtype or shape differs from '%s'", e->file,
                              sname, s->from.name);
    }
    s->mapped = k == 0 ? st->mapped : s->mapped && st->mapped;
    if (s->parts)
        s->parts[k] = st->data;
    /* every factor finite (NaN × 0 would still be NaN, Inf × 0 too) */
    const uint64_t count = st->nbytes / scale_esize(&one);
    for (uint64_t i = 0; i < count; i++) {
        const float f = scale_value(&one, st->data, (int64_t)i);
        if (!isfinite(f)) {
            const int64_t per = one.s_rows * one.s_cols, at = (int64_t)i % per;
            return gguf_error_set(err, "%s: tensor '%s' has a non-finite factor (%s) for block "
                                  "[%" PRId64 ", %" PRId64 "]%s of '%s': nothing written",
                                  e->file, sname, isnan(f) ? "NaN" : f > 0 ? "+Inf" : "-Inf",
                                  at / one.s_cols, at % one.s_cols, per < (int64_t)count ?
                                  " (of a matrix)" : "", name);
        }
    }
    return 0;
}

int fp8_attach(const fp8_plan *p, src_model *m, gguf_error *err)
{
    for (int i = 0; i < m->n_tensors; i++) {
        src_tensor *t = &m->tensors[i];
        if ((t->dtype != SRC_F8_E4M3 && t->dtype != SRC_I8_SCALED) || t->fp8)
            continue;
        if (!p->on || (t->dtype == SRC_I8_SCALED && !p->int8))
            return gguf_error_set(err, "%s%stensor '%s' is %s, but config.json has no "
                                  "quantization_config with quant_method %s",
                                  t->from.file ? t->from.file : "", t->from.file ? ": " : "",
                                  t->from.name ? t->from.name : t->name,
                                  t->dtype == SRC_F8_E4M3 ? "F8_E4M3" : "I8",
                                  t->dtype == SRC_F8_E4M3 ? "fp8" : "compressed-tensors "
                                  "(int-quantized or naive-quantized)");
        fp8_scale *s = calloc(1, sizeof *s);
        if (!s || (t->parts && !(s->parts = calloc((size_t)t->n_parts, sizeof *s->parts)))) {
            free(s);
            return gguf_error_set(err, "out of memory");
        }
        t->fp8 = s;
        s->int8 = t->dtype == SRC_I8_SCALED;
        s->n_parts = t->parts ? t->n_parts : 0;
        if (t->parts && !t->split_rows)
            return gguf_error_set(err, "tensor '%s': FP8 weights split by columns are not "
                                  "supported", t->name);
        for (int k = 0; k < (t->parts ? t->n_parts : 1); k++) {
            const src_origin *o = t->parts && t->part_from ? &t->part_from[k] : &t->from;
            if (take_scale(p, o->name ? o->name : t->name, o->file, s, k, err))
                return -1;
        }
        /* the matrices the source holds must be what the writer reads */
        int64_t n = 1;
        for (int d = 0; d < t->n_dims; d++)
            n *= t->ne[d];
        if (t->parts && n / t->n_parts != s->rows * s->cols)
            return gguf_error_set(err, "tensor '%s': its parts are not one FP8 matrix each",
                                  t->name);
    }
    return 0;
}

void fp8_plan_free(fp8_plan *p)
{
    free(p->index);
    memset(p, 0, sizeof *p);
}

void fp8_scale_free(fp8_scale *s)
{
    if (s)
        free(s->parts);
    free(s);
}
