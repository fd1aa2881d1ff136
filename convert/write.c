/*
 * write.c — the GGUF side of gguf-convert (see write.h).
 */
#include "write.h"

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ggufkit/quants.h>
#include <ggufkit/arch.h>
#include "finite.h"
#include "fp8.h"
#include "qpack.h"
#include "outpath.h"
#include "override.h"
#include "pool.h"
#include "progress.h"
#include "onepass.h"
#include "preset.h"
#include "qplan.h"
#include "readback.h"

int convert_resolve_outtype(const src_model *m, int outtype)
{
    if (outtype != OUT_AUTO)
        return outtype;
    /* llama.cpp looks at the first checkpoint tensor, not at generated ones */
    for (int i = 0; i < m->n_tensors; i++)
        if (!m->tensors[i].owned)
            return m->tensors[i].dtype == SRC_F16 ? OUT_F16 : OUT_BF16;
    return OUT_BF16;
}

/* The tensor type an outtype stands for. */
static uint32_t outtype_dtype(int outtype)
{
    switch (outtype) {
    case OUT_F32: return GGUF_DT_F32;
    case OUT_F16: return GGUF_DT_F16;
    case OUT_Q8_0: return GGUF_DT_Q8_0;
    default: return GGUF_DT_BF16;
    }
}

uint32_t convert_file_type(int outtype)
{
    return (uint32_t)gguf_dtype_file_type(outtype_dtype(outtype));
}

const char *convert_outtype_name(int outtype)
{
    static const char *const names[] = { "F32", "F16", "BF16", "Q8_0", "auto" };
    return names[outtype];
}

static int64_t n_elements(const src_tensor *t)
{
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}

uint64_t convert_param_count(const src_model *m)
{
    uint64_t n = 0;
    for (int i = 0; i < m->n_tensors; i++)
        n += (uint64_t)n_elements(&m->tensors[i]);
    return n;
}

void convert_count_notation(uint64_t params, char *out, size_t size)
{
    /* llama.cpp: scale to K/M/B/T, then as many decimals as make at least
     * two significant digits in front of the suffix. */
    double p = (double)params;
    const char *suffix = "K";
    double scaled = p * 1e-3;
    if (p > 1e12) {
        scaled = p * 1e-12;
        suffix = "T";
    } else if (p > 1e9) {
        scaled = p * 1e-9;
        suffix = "B";
    } else if (p > 1e6) {
        scaled = p * 1e-6;
        suffix = "M";
    }
    char whole[32];
    snprintf(whole, sizeof whole, "%.0f", scaled);
    const char *digits = whole;
    while (*digits == '0')
        digits++;
    int fix = 2 - (int)strlen(digits);
    snprintf(out, size, "%.*f%s", fix > 0 ? fix : 0, scaled, suffix);
}

void convert_size_label(const src_model *m, char *out, size_t size)
{
    /* gguf-py's get_total_parameter_count and size_label: a tensor named
     * "…_exps.…" of 3 or more dimensions holds ne[2] experts (a bias:
     * ne[1]) and counts one expert's share; with any such tensor the label
     * is "{mean expert count}x{shared + one expert's parameters}". */
    uint64_t total = 0, shared = 0, expert = 0, expert_sum = 0, n_expert_tensors = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const src_tensor *t = &m->tensors[i];
        const uint64_t n = (uint64_t)n_elements(t);
        total += n;
        int64_t count = 0;
        if (strstr(t->name, "_exps.") && t->n_dims >= 3)
            count = strstr(t->name, ".bias") ? t->ne[1] : t->ne[2];
        if (count > 0) {
            expert += n / (uint64_t)count;
            expert_sum += (uint64_t)count;
            n_expert_tensors++;
        } else {
            shared += n;
        }
    }
    const uint64_t experts = n_expert_tensors ? expert_sum / n_expert_tensors : 0;
    if (!experts) {
        convert_count_notation(total, out, size);
        return;
    }
    char each[32];
    convert_count_notation(shared + expert, each, sizeof each);
    snprintf(out, size, "%" PRIu64 "x%s", experts, each);
}

/* general.file_type of this model: llama.cpp's gpt-oss conversions with
 * their experts kept MXFP4 say MOSTLY_MXFP4_MOE for the float outtypes. */
static uint32_t model_file_type(const src_model *m, int outtype)
{
    if (gguf_recipe_has(gguf_recipe_of(m->arch), GGUF_FACT_MXFP4_EXPERTS) && outtype != OUT_Q8_0)
        return (uint32_t)gguf_dtype_file_type(GGUF_DT_MXFP4);
    return convert_file_type(outtype);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* The output type of one tensor, and why it is not the outtype. */
static uint32_t tensor_type(const src_tensor *t, int outtype, const char **why)
{
    *why = NULL;
    if (t->forced)
        return t->force_type;
    if (t->half_or_f32)
        return outtype == OUT_F16 ? GGUF_DT_F16 : GGUF_DT_F32;
    if (t->dtype == SRC_MXFP4)
        return GGUF_DT_MXFP4;
    /* an adapter's pairs: only the 1-D rule (prepare_tensors matches the
     * F32 names with ".weight" only) */
    if ((ends_with(t->name, ".lora_a") || ends_with(t->name, ".lora_b")) && t->n_dims > 1) {
        const uint32_t want = outtype_dtype(outtype), type = gguf_dtype_fit(want, t->ne[0]);
        if (type != want)
            *why = "rows are not a multiple of 32: f16";
        return type;
    }
    if (t->n_dims <= 1 || ends_with(t->name, "_norm.weight") || !ends_with(t->name, ".weight") ||
        strstr(t->name, ".ffn_gate_inp.") || strstr(t->name, ".ffn_gate_inp_shexp.") ||
        strstr(t->name, ".ssm_conv1d.") || !strcmp(t->name, "position_embd.weight") ||
        !strcmp(t->name, "token_types.weight"))
        return GGUF_DT_F32;
    const uint32_t want = outtype_dtype(outtype), type = gguf_dtype_fit(want, t->ne[0]);
    if (type != want) /* only q8_0 has blocks: its rows fall back to f16 */
        *why = "rows are not a multiple of 32: f16";
    return type;
}

/* Rows of the tensor as the permutation reorders them: llama.cpp's
 * reshape(heads, 2, half, ...).swapaxes(1, 2) — within each head, the two
 * halves of the rotary pairs become interleaved rows. A 1-D tensor (a bias)
 * is a column of rows of one element. */
static int permuted_row(const src_tensor *t, uint32_t heads, int64_t r)
{
    int64_t rows = t->n_dims == 1 ? t->ne[0] : t->ne[1];
    int64_t half = rows / heads / 2;
    int64_t h = r / (2 * half), rem = r % (2 * half);
    int64_t i = rem / 2, j = rem % 2;
    return (int)(h * 2 * half + j * half + i);
}

/* exp(d) as the converter's torch.exp computes it on an f32 tensor (its
 * vectorized path: SLEEF's expf_u10 with fused multiply-adds), which is not
 * always the correctly rounded value expf gives: one of the reference
 * models' twelve A_log values of a block comes out 1 ulp lower. */
static float torch_expf(float d)
{
    if (d < -104.0f)
        return 0.0f;
    if (d > 100.0f)
        return INFINITY;
    const float q = rintf(d * 1.442695040888963407359924681001892137426645954152985934135449406931f);
    float s = fmaf(q, -0.693145751953125f, d);
    s = fmaf(q, -1.428606765330187045e-06f, s);
    float u = 0.000198527617612853646278381f;
    u = fmaf(u, s, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    const float ss = s * s;
    u = 1.0f + fmaf(ss, u, s);
    /* SLEEF's ldexp2k: two powers of two, so that 2^q past f32's exponent
     * range still scales what it can */
    const int e = (int)q;
    return ldexpf(ldexpf(u, e >> 1), e - (e >> 1));
}

/* Index i of the V-head reorder's tiled order → the grouped one. */
static int64_t vh_source(const src_tensor *t, int64_t i)
{
    const int64_t o = i - t->vh_first, h = o / t->vh_dim, d = o % t->vh_dim;
    const int64_t vi = h / t->vh_k, kh = h % t->vh_k;
    return t->vh_first + (kh * t->vh_per_k + vi) * t->vh_dim + d;
}

/* The source row of output row r (heads: the rotary permutation's). */
static int64_t source_row(const src_tensor *t, uint32_t heads, int64_t r)
{
    if (t->permute != GGUF_PERMUTE_NONE)
        return permuted_row(t, heads, r);
    if (t->ex_block)
        return r / t->ne[1] * t->ex_block + t->ex_skip + r % t->ne[1];
    if (t->vh_k && !t->vh_cols && r >= t->vh_first)
        return vh_source(t, r);
    return r;
}

/* Element (r, col) of a transposed head block (ex_transposed): its index
 * in the source. */
static int64_t transposed_index(const src_tensor *t, int64_t r, int64_t col)
{
    const int64_t h = r / t->ne[1], j = r % t->ne[1];
    return (h * t->ex_block + t->ex_skip + col) * t->ne[1] + j;
}

/* Rows of a tensor for loading: ne[0] elements, or single elements for a
 * 1-D tensor (so a bias permutes like the rows of its matrix). */
static int64_t row_len(const src_tensor *t) { return t->n_dims == 1 ? 1 : t->ne[0]; }

static uint32_t rotary_heads(const src_model *m, const src_tensor *t)
{
    return t->permute == GGUF_PERMUTE_Q ? m->n_head : m->n_head_kv ? m->n_head_kv : m->n_head;
}

static int check_permute(const src_model *m, const src_tensor *t, gguf_error *err)
{
    int64_t rows = n_elements(t) / row_len(t);
    uint32_t heads = rotary_heads(m, t);
    if (t->permute != GGUF_PERMUTE_NONE &&
        (t->n_dims > 2 || heads == 0 || rows % (2 * (int64_t)heads) != 0))
        return gguf_error_set(err, "tensor '%s': %" PRId64 " rows do not split into %u "
                              "rotary heads", t->name, rows, heads);
    return 0;
}

/* A packed source's shape is made from its parts: when the model's check
 * names such a tensor, the message names the checkpoint's tensor too. */
static void name_packed_source(const src_model *m, gguf_error *err)
{
    for (int i = 0; i < m->n_tensors; i++) {
        const src_tensor *t = &m->tensors[i];
        char pat[300], how[200];
        snprintf(pat, sizeof pat, "tensor %s ", t->name);
        if (t->dtype != SRC_QPACK || !t->from.file || !t->from.name || !strstr(err->msg, pat))
            continue;
        qpack_origin(t->qp, how, sizeof how);
        const size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, " (from %s: tensor '%s'%s)", t->from.file, t->from.name, how);
        return;
    }
}

static size_t src_esize(const src_tensor *t)
{
    return t->dtype == SRC_F32 ? 4
         : t->dtype == SRC_I8_GROUPS || t->dtype == SRC_F8_E4M3 || t->dtype == SRC_QPACK ||
           t->dtype == SRC_I8_SCALED ? 1 : 2;
}

/* n source elements at src → f32; at is the first one's index in the
 * tensor (for the int8 groups' scales). */
static void convert_span(const src_tensor *t, const uint8_t *src, float *out, int64_t n, int64_t at)
{
    /* f16/bf16 data need not be 2-byte aligned in an archive (zip entries
     * start anywhere): copy such spans through an aligned buffer */
    if ((t->dtype == SRC_F16 || t->dtype == SRC_BF16) && ((uintptr_t)src & 1)) {
        uint16_t buf[2048];
        for (int64_t i = 0; i < n; i += 2048) {
            int64_t k = n - i < 2048 ? n - i : 2048;
            memcpy(buf, src + i * 2, (size_t)k * 2);
            if (t->dtype == SRC_F16)
                gguf_f16_to_f32_row((const gguf_half *)buf, out + i, k);
            else
                gguf_bf16_to_f32_row(buf, out + i, k);
        }
        return;
    }
    switch (t->dtype) {
    case SRC_F32: memcpy(out, src, (size_t)n * 4); break;
    case SRC_F16: gguf_f16_to_f32_row((const gguf_half *)src, out, n); break;
    case SRC_I8_GROUPS:
        for (int64_t i = 0; i < n; i++) {
            float scale;
            memcpy(&scale, t->scales + (size_t)((at + i) / t->group) * 4, 4);
            out[i] = (float)(int8_t)src[i] * scale;
        }
        break;
    case SRC_F8_E4M3:
    case SRC_I8_SCALED: fp8_dequant_span(t->fp8, src, out, n, at); break;
    case SRC_QPACK: qpack_span(t->qp, out, n, at); break;
    default: gguf_bf16_to_f32_row((const uint16_t *)src, out, n); break;
    }
}

/* t->add added to n converted values as llama.cpp's converter adds it:
 * bf16 tensors are f32 by then, an f16 one stays f16 (the sum rounded). */
static void add_offset(const src_tensor *t, float *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        const float v = out[i] + t->add;
        out[i] = t->dtype == SRC_F16 ? gguf_f16_to_f32(gguf_f32_to_f16(v)) : v;
    }
}

/* A packed source of whole source rows (a stack's parts, one per expert,
 * only name them: its values come by index): rows loaded QPACK_LOAD_ROWS
 * at a time (the others' one by one: a row encoded while it is in the
 * cache). */
static bool packed_rows(const src_tensor *t)
{
    return t->dtype == SRC_QPACK && t->n_dims >= 2 && (!t->parts || t->split_rows) && !t->ex_transposed &&
           !t->vh_cols;
}

static int64_t load_group(const src_tensor *t) { return packed_rows(t) ? QPACK_LOAD_ROWS : 1; }

/* A loaded row's offset and −exp, as the converter applies them. */
static void finish_row(const src_tensor *t, float *out, int64_t row)
{
    if (t->add != 0)
        add_offset(t, out, row);
    if (t->neg_exp)
        for (int64_t i = 0; i < row; i++)
            out[i] = -torch_expf(out[i]);
}

/* load_rows for a packed source of whole source rows (packed_rows): the
 * rows asked together (qpack_rows), so that GPTQ's are decoded by blocks
 * whatever the row map. */
static void load_packed_rows(const src_model *m, const src_tensor *t, int64_t r0, int64_t nr, float *dst)
{
    const int64_t row = row_len(t);
    const uint32_t heads = rotary_heads(m, t);
    int64_t from[256];
    for (int64_t r = r0; r < r0 + nr; r += 256) {
        const int64_t k = r0 + nr - r < 256 ? r0 + nr - r : 256;
        for (int64_t i = 0; i < k; i++)
            from[i] = source_row(t, heads, r + i);
        qpack_rows(t->qp, from, k, dst + (r - r0) * row);
    }
    for (int64_t r = 0; r < nr; r++)
        finish_row(t, dst + r * row, row);
}

/* Source rows [r0, r0 + nr) → f32, with the q/k permutation applied. A
 * sharded tensor's row comes from one part (rows split) or from a slice of
 * every part (columns split). */
static void load_rows(const src_model *m, const src_tensor *t, int64_t r0, int64_t nr, float *dst)
{
    const int64_t row = row_len(t), rows = n_elements(t) / row;
    const uint32_t heads = rotary_heads(m, t);
    const size_t esize = src_esize(t);
    if (packed_rows(t)) {
        load_packed_rows(m, t, r0, nr, dst);
        return;
    }
    for (int64_t r = r0; r < r0 + nr; r++) {
        int64_t from = source_row(t, heads, r);
        float *out = dst + (r - r0) * row;
        if (t->ex_transposed) { /* one source column, strided (no parts) */
            for (int64_t c = 0; c < row; c++) {
                const int64_t at = transposed_index(t, r, c);
                convert_span(t, (const uint8_t *)t->data + (size_t)at * esize, out + c, 1, at);
            }
        } else if (t->vh_cols) { /* one source row, its columns reordered (no parts) */
            const uint8_t *src = (const uint8_t *)t->data + (size_t)(from * row) * esize;
            for (int64_t c = 0; c < row; c++) {
                const int64_t sc = vh_source(t, c);
                convert_span(t, src + (size_t)sc * esize, out + c, 1, from * row + sc);
            }
        } else if (!t->parts) {
            convert_span(t, (const uint8_t *)t->data + (size_t)(from * row) * esize, out, row,
                         from * row);
        } else if (t->split_rows) {
            int64_t per = rows / t->n_parts;
            const uint8_t *part = t->parts[from / per];
            convert_span(t, part + (size_t)((from % per) * row) * esize, out, row, from * row);
        } else {
            int64_t cols = row / t->n_parts;
            for (int p = 0; p < t->n_parts; p++)
                convert_span(t, (const uint8_t *)t->parts[p] + (size_t)(from * cols) * esize,
                             out + p * cols, cols, from * row + p * cols);
        }
        finish_row(t, out, row);
    }
}

/* Tensors stream in chunks of about this many elements (4 MB as f32):
 * whole rows, so that a quantized row is never split. */
#define CHUNK_ELEMS ((int64_t)1 << 20)

static int64_t chunk_rows(const src_tensor *t)
{
    int64_t row = row_len(t), rows = n_elements(t) / row;
    if (t->n_dims == 1)
        return rows; /* a vector goes in one piece */
    int64_t per = CHUNK_ELEMS / row;
    return per < 1 ? 1 : per > rows ? rows : per;
}

/* The source's pages are not needed again: dropped from memory. */
static void release_range(const void *data, uint64_t bytes)
{
    st_drop_pages(data, bytes);
}

static void release_source(const src_tensor *t)
{
    if (t->qp) { /* its packed parts (every expert's, stacked) */
        if (t->qp->mapped)
            qpack_parts(t->qp, release_range);
        return;
    }
    if (!t->mapped)
        return; /* heap bytes: dropping their pages would zero live memory */
    uint64_t bytes = (uint64_t)n_elements(t) * src_esize(t);
    if (!t->parts)
        release_range(t->data, bytes);
    for (int p = 0; t->parts && p < t->n_parts; p++)
        release_range(t->parts[p], bytes / (uint64_t)t->n_parts);
    const fp8_scale *f = t->fp8; /* its scales: one matrix's per part, or all of them */
    if (f && f->mapped) {
        const uint64_t per = (uint64_t)(f->s_rows * f->s_cols) * (f->sdtype == SRC_F32 ? 4 : 2);
        for (int p = 0; p < f->n_parts; p++)
            release_range(f->parts[p], per);
        if (!f->parts)
            release_range(f->data, per * (bytes / (uint64_t)(f->rows * f->cols)));
    }
}


/* Encodes n f32 values (whole rows of ne[0]) as type (w: a quantization
 * type's importance weights, ne[0] of them, or NULL). */
static int encode(uint32_t type, const src_tensor *t, const float *x, int64_t n, void *out,
                  const float *w)
{
    switch (type) {
    case GGUF_DT_F32: memcpy(out, x, (size_t)n * 4); return 0;
    case GGUF_DT_F16: gguf_f32_to_f16_row(x, out, n); return 0;
    case GGUF_DT_BF16: gguf_f32_to_bf16_row(x, out, n); return 0;
    default:
        return gguf_quantize_rows(type, x, out, n / t->ne[0], t->ne[0], w, NULL) ? 0 : -1;
    }
}

/* The first of n values (whole rows) that is not finite once encoded, or
 * -1: x the values as f32, out as encoded. An f16 or bf16 output holds
 * Inf or NaN where x does and where a finite f32 overflows the type; a
 * q8_0 block's f16 scale (its largest magnitude / 127) may overflow too:
 * then the index of that largest magnitude. */
static int64_t first_bad(uint32_t type, const float *x, const void *out, int64_t n, float *tmp)
{
    int64_t at, b;
    float amax;
    switch (type) {
    case GGUF_DT_F32: return nonfinite_f32(x, n);
    case GGUF_DT_F16: return nonfinite_f16(out, n);
    case GGUF_DT_BF16: return nonfinite_bf16(out, n);
    case GGUF_DT_Q8_0:
        if ((at = nonfinite_f32(x, n)) >= 0 || (b = nonfinite_q8_0(out, n / GGUF_QK8_0)) < 0)
            return at;
        at = b * GGUF_QK8_0;
        for (int64_t i = at + 1; i < (b + 1) * GGUF_QK8_0; i++)
            if (fabsf(x[i]) > fabsf(x[at]))
                at = i;
        return at;
    default: /* a preset's types (one row): the output read back where it may
              * overflow, as gguf-quantize checks it */
        if ((at = nonfinite_amax_f32(x, n, &amax)) >= 0 || amax < QPLAN_CHECK_OUT_FROM)
            return at;
        gguf_dequantize_row(type, out, tmp, n, NULL);
        return nonfinite_f32(tmp, n);
    }
}

/* The source of one value of the output — element [r, col] of t (r its
 * row over all of ne[1..3]; for a vector r is the element, col 0): the
 * origin, the row and column there (the permutation undone, a part's
 * own), and the source bytes with its index in the tensor (for the int8
 * groups' scales). Mirrors load_rows. */
typedef struct src_where {
    src_origin     origin;
    int64_t        row, col;
    const uint8_t *at;
    int64_t        index;
} src_where;

static src_where locate(const src_model *m, const src_tensor *t, int64_t r, int64_t col)
{
    const int64_t row = row_len(t), rows = n_elements(t) / row;
    const size_t esize = src_esize(t);
    src_where w = { t->from, 0, col, NULL, 0 };
    int64_t from = source_row(t, rotary_heads(m, t), r);
    int part = -1;
    if (t->vh_cols)
        w.col = col = vh_source(t, col);
    w.row = from;
    w.index = from * row + col;
    if (t->ex_transposed) {
        w.index = transposed_index(t, r, col);
        w.row = w.index / t->ne[1];
        w.col = w.index % t->ne[1];
    }
    if (!t->parts) {
        w.at = (const uint8_t *)t->data + (size_t)w.index * esize;
    } else if (t->split_rows) {
        int64_t per = rows / t->n_parts;
        part = (int)(from / per);
        w.row = from % per;
        w.at = (const uint8_t *)t->parts[part] + (size_t)(w.row * row + col) * esize;
    } else {
        int64_t cols = row / t->n_parts;
        part = (int)(col / cols);
        w.col = col % cols;
        w.at = (const uint8_t *)t->parts[part] + (size_t)(from * cols + w.col) * esize;
    }
    if (part >= 0 && t->part_from)
        w.origin = t->part_from[part];
    w.col = w.col * (t->col_step ? t->col_step : 1) + t->col_first;
    return w;
}

/* The source value at w, exactly (an int8 group's: value × scale). */
static double source_value(const src_tensor *t, const src_where *w)
{
    uint16_t h;
    float f;
    switch (t->dtype) {
    case SRC_F32: memcpy(&f, w->at, 4); return f;
    case SRC_F16: memcpy(&h, w->at, 2); return gguf_f16_to_f32(h);
    case SRC_BF16: memcpy(&h, w->at, 2); return gguf_bf16_to_f32(h);
    case SRC_F8_E4M3:
        return (double)fp8_e4m3_to_f32(w->at[0]) * (double)fp8_scale_at(t->fp8, w->index);
    case SRC_I8_SCALED: return (double)(int8_t)w->at[0] * (double)fp8_scale_at(t->fp8, w->index);
    case SRC_QPACK: return qpack_value(t->qp, w->index);
    default:
        memcpy(&f, t->scales + (size_t)(w->index / t->group) * 4, 4);
        return (double)(int8_t)w->at[0] * (double)f;
    }
}

static const char *nonfinite_name(double v)
{
    return isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
}

/* The message for a value of t the output cannot hold: element [r, col]
 * (as for locate), whose f32 form was f, encoded as type. */
static void describe_bad(const src_model *m, const src_tensor *t, uint32_t type, int64_t r,
                         int64_t col, float f, gguf_error *err)
{
    const src_where w = locate(m, t, r, col);
    const char *name = w.origin.name ? w.origin.name : t->name;
    char file[512] = "", out[160] = "", at[96];
    if (w.origin.file)
        snprintf(file, sizeof file, "%s: ", w.origin.file);
    if (strcmp(name, t->name))
        snprintf(out, sizeof out, " (output tensor %s)", t->name);
    if (t->n_dims == 1)
        snprintf(at, sizeof at, "element %" PRId64, w.row);
    else
        snprintf(at, sizeof at, "row %" PRId64 ", column %" PRId64, w.row, w.col);
    if (t->dtype == SRC_I8_GROUPS) {
        float scale;
        memcpy(&scale, t->scales + (size_t)(w.index / t->group) * 4, 4);
        if (!isfinite(scale)) { /* the group's first value (groups split no row) */
            const int64_t first = w.index / t->group * t->group, row = row_len(t);
            gguf_error_set(err, "%stensor '%s' has a non-finite scale (%s) for group %" PRId64
                           " (the %d values from row %" PRId64 ", column %" PRId64 ")%s: nothing "
                           "written", file, name, nonfinite_name(scale), w.index / t->group,
                           t->group, first / row, first % row, out);
            return;
        }
    }
    const double v = source_value(t, &w);
    if (!isfinite(v)) {
        gguf_error_set(err, "%stensor '%s' has a non-finite value (%s) at %s%s: nothing written",
                       file, name, nonfinite_name(v), at, out);
        return;
    }
    /* a finite value that conversion made Inf: in the f32 form (an int8
     * product, an f16 norm's + 1 rounded), or in the output type */
    if (type == GGUF_DT_Q8_0 && isfinite(f)) {
        gguf_error_set(err, "%stensor '%s' has %.9g at %s%s, too large for q8_0: its block's scale "
                       "(%.9g / 127) overflows f16's largest finite value 65504; --outtype f32 or "
                       "bf16 keeps it: nothing written", file, name, v, at, out, fabs(v));
        return;
    }
    const char *to = gguf_dtype_name(type), *hint = "";
    double largest = 3.4028234663852886e38;
    if (!isfinite(f)) {
        to = t->dtype == SRC_F16 ? "f16" : "f32";
        largest = t->dtype == SRC_F16 ? 65504 : largest;
    } else if (type == GGUF_DT_F16) {
        largest = 65504, hint = "; --outtype f32 or bf16 keeps it";
    } else if (type == GGUF_DT_BF16) {
        largest = 3.3895313892515355e38, hint = "; --outtype f32 keeps it";
    }
    gguf_error_set(err, "%stensor '%s' has %.9g at %s%s, which overflows %s (largest finite value "
                   "%.9g) to %s%s: nothing written", file, name, v, at, out, to, largest,
                   v > 0 ? "+Inf" : "-Inf", hint);
}

/* ---------------------------------------------------------------------------
 * The conversion pipeline. Tensors go out in chunks of whole rows, K at a
 * time (a batch). Each step is one loop on the worker pool: unit 0 writes
 * the previous batch in order (and sums it for the read-back check), units
 * 1..K convert this batch's chunks, each into its own buffer, with the
 * thread's own f32 scratch. So the conversion of one batch runs beside the
 * write of the one before, on every core, and the output's bytes and order
 * are those of a single thread.
 */
enum { CHUNK_OK, CHUNK_CODEC /* the codec refused it */, CHUNK_VALUE /* a value is not finite */ };

typedef struct {
    int      tensor;
    int64_t  r0, nr;  /* rows [r0, r0 + nr) */
    uint8_t *enc;     /* the encoded bytes (a raw MXFP4 tensor: its data) */
    size_t   bytes;
    int      bad;     /* CHUNK_* */
    int64_t  bad_row, bad_col; /* CHUNK_VALUE: the first (as for locate) */
    float    bad_f32; /* and its f32 form */
} chunk;

typedef struct {
    src_model       *m;
    const uint32_t  *types;
    /* one pass to a preset: each tensor's type in the bf16 conversion (its
     * values rounded through it first) and importance weights (or NULL) */
    const uint32_t  *src_types;
    const float    **imw;
    float           *f32;       /* per thread: f32_elems (the rows loaded together, a vector whole)
                                 * for the values, then tmp_elems (a row) of scratch */
    size_t           f32_elems, tmp_elems;
    chunk           *batch[2];  /* the batch being converted, the one being written */
    int              n[2], cur;
    gguf_writer     *w;
    progress        *bar;
    data_sum         sum;
    const char     **names;
    uint64_t        *sums;
    gguf_error      *err;
    _Atomic int      rc;        /* 0, -1 (a codec refused a chunk, a value not finite) or
                                 * CONVERT_ERR_OUTPUT */
} pipeline;

/* Row by row (a vector in one piece): to f32, encoded, and the encoded
 * row checked for non-finite values while it is in the cache. */
static void convert_chunk(pipeline *p, chunk *c, int thread)
{
    const src_tensor *t = &p->m->tensors[c->tensor];
    if (t->dtype == SRC_MXFP4 || c->nr == 0)
        return; /* already in its output type (checked when read), or empty */
    float *loaded = p->f32 + (size_t)thread * (p->f32_elems + p->tmp_elems), *tmp = loaded + p->f32_elems;
    const uint32_t type = p->types[c->tensor];
    const float *imw = p->imw ? p->imw[c->tensor] : NULL;
    const bool vec = t->n_dims == 1;
    const int64_t len = vec ? c->nr : t->ne[0], steps = vec ? 1 : c->nr, group = vec ? 1 : load_group(t);
    uint64_t row_bytes;
    gguf_row_size(type, len, &row_bytes, NULL);
    for (int64_t r = 0; r < steps; r++) {
        uint8_t *out = c->enc + (size_t)(r * (int64_t)row_bytes);
        if (r % group == 0)
            load_rows(p->m, t, c->r0 + r, vec ? c->nr : steps - r < group ? steps - r : group, loaded);
        float *f32 = loaded + r % group * len;
        if (p->src_types && p->src_types[c->tensor] == GGUF_DT_BF16) { /* as the bf16 file holds it */
            gguf_f32_to_bf16_row(f32, (uint16_t *)(void *)tmp, len);
            gguf_bf16_to_f32_row((const uint16_t *)(void *)tmp, f32, len);
        }
        /* experts: each matrix of ne[1] rows has its own weights */
        const float *w = imw && !vec ? imw + (c->r0 + r) / t->ne[1] % t->ne[2] * t->ne[0] : NULL;
        if (encode(type, t, f32, len, out, w)) {
            c->bad = CHUNK_CODEC;
            return;
        }
        const int64_t at = first_bad(type, f32, out, len, tmp);
        if (at >= 0) {
            c->bad = CHUNK_VALUE;
            c->bad_row = vec ? c->r0 + at : c->r0 + r;
            c->bad_col = vec ? 0 : at;
            c->bad_f32 = f32[at];
            return;
        }
    }
}

static void write_chunk(pipeline *p, const chunk *c)
{
    const src_tensor *t = &p->m->tensors[c->tensor];
    const int64_t row = row_len(t), rows = n_elements(t) / row;
    if (c->bad == CHUNK_CODEC) {
        gguf_error_set(p->err, "tensor '%s': cannot encode as %s", t->name, gguf_dtype_name(p->types[c->tensor]));
        p->rc = -1;
        return;
    }
    if (c->bad == CHUNK_VALUE) {
        describe_bad(p->m, t, p->types[c->tensor], c->bad_row, c->bad_col, c->bad_f32, p->err);
        p->rc = -1;
        return;
    }
    if (c->r0 == 0)
        data_sum_init(&p->sum);
    if (gguf_writer_write_tensor(p->w, c->enc, c->bytes, p->err)) {
        p->rc = CONVERT_ERR_OUTPUT;
        return;
    }
    data_sum_add(&p->sum, c->enc, c->bytes);
    progress_add(p->bar, (uint64_t)(c->nr * row));
    if (c->r0 + c->nr >= rows) {
        p->names[c->tensor] = t->name;
        p->sums[c->tensor] = data_sum_final(&p->sum);
        release_source(t);
    }
}

static void pipeline_unit(void *ctx, int64_t u, int thread)
{
    pipeline *p = ctx;
    if (u == 0) {
        const int wb = p->cur ^ 1;
        for (int k = 0; k < p->n[wb] && p->rc == 0; k++)
            write_chunk(p, &p->batch[wb][k]);
    } else if (p->rc == 0) {
        convert_chunk(p, &p->batch[p->cur][u - 1], thread);
    }
}

/* Fills batch b with up to k chunks from tensor *ti, row *r0 on; 0 when
 * every tensor is taken. An empty tensor is one chunk of no rows. */
static int next_batch(pipeline *p, int b, int k, int n, int *ti, int64_t *r0, uint8_t *const *bufs)
{
    int c = 0;
    while (c < k && *ti < n) {
        const src_tensor *t = &p->m->tensors[*ti];
        const int64_t row = row_len(t), rows = n_elements(t) / row, per = chunk_rows(t);
        chunk *ch = &p->batch[b][c];
        *ch = (chunk){ .tensor = *ti, .r0 = *r0, .enc = bufs[c] };
        uint64_t bytes;
        if (t->dtype == SRC_MXFP4) { /* the whole tensor, as stored */
            gguf_row_size(p->types[*ti], t->ne[0], &bytes, NULL);
            bytes *= (uint64_t)(n_elements(t) / t->ne[0]);
            ch->nr = rows;
            ch->enc = (uint8_t *)t->data;
        } else {
            ch->nr = rows - *r0 < per ? rows - *r0 : per;
            gguf_row_size(p->types[*ti], t->n_dims > 1 ? t->ne[0] : ch->nr, &bytes, NULL);
            if (t->n_dims > 1)
                bytes *= (uint64_t)ch->nr; /* nr rows of ne[0], or the whole vector */
        }
        ch->bytes = (size_t)bytes;
        c++;
        if ((*r0 += ch->nr) >= rows) {
            (*ti)++;
            *r0 = 0;
        }
    }
    p->n[b] = c;
    return c;
}

static void print_plan(const src_model *m, const uint32_t *types, const char **why)
{
    printf("%-4s %-32s %-22s %-6s    %s\n", "#", "tensor", "shape", "from", "to");
    for (int i = 0; i < m->n_tensors; i++) {
        const src_tensor *t = &m->tensors[i];
        char shape[64];
        int len = snprintf(shape, sizeof shape, "[");
        for (int d = 0; d < t->n_dims; d++)
            len += snprintf(shape + len, sizeof shape - (size_t)len, "%s%" PRId64, d ? ", " : "",
                            t->ne[d]);
        snprintf(shape + len, sizeof shape - (size_t)len, "]");
        static const char *const dt[] = { "f32", "f16", "bf16", "i8x", "mxfp4", "f8e4m3", "packed" };
        printf("%-4d %-32s %-22s %-6s -> %-6s%s%s%s\n", i + 1, t->name, shape,
               t->owned ? "gen" : dt[t->dtype], gguf_dtype_name(types[i]),
               t->permute ? "  (rotary permute)" : "", why[i] ? "  fallback: " : "",
               why[i] ? why[i] : "");
    }
}

int convert_write(src_model *m, const convert_options *o, gguf_error *err)
{
    err->msg[0] = 0;
    onepass op = { 0 };
    uint32_t *src_types = NULL;
    if (o->preset) { /* gguf-quantize's order; the bf16 conversion's types kept */
        if (onepass_order(&op, m, err)) {
            onepass_free(&op);
            return -1;
        }
        m = &op.view;
        src_types = calloc((size_t)m->n_tensors + 1, sizeof *src_types);
    }
    int outtype = convert_resolve_outtype(m, o->outtype);
    const char *out_name = o->preset ? o->preset->name : convert_outtype_name(outtype);
    int n = o->vocab_only ? 0 : m->n_tensors;
    uint32_t *types = calloc((size_t)m->n_tensors + 1, sizeof *types);
    const char **why = calloc((size_t)m->n_tensors + 1, sizeof *why);
    const char **names = calloc((size_t)m->n_tensors + 1, sizeof *names);
    uint64_t *sums = calloc((size_t)m->n_tensors + 1, sizeof *sums);
    gguf_writer *w = gguf_writer_new();
    float *f32 = NULL;
    uint8_t *enc = NULL, **bufs = NULL;
    chunk *chunks = NULL;
    int rc = -1;
    if (!types || !why || !names || !sums || !w || (o->preset && !src_types)) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    for (int i = 0; i < m->n_tensors; i++)
        types[i] = tensor_type(&m->tensors[i], outtype, &why[i]);

    /* general.* identity, then the reader's keys, then the version */
    char label[32];
    uint64_t params = convert_param_count(m);
    convert_size_label(m, label, sizeof label);
    if (gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE,
                            m->arch_name ? m->arch_name : gguf_arch_name(m->arch))) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    if (m->write_tensor_keys && m->write_tensor_keys(m, w, err))
        goto done;
    int bad = gguf_writer_set_str(w, "general.type", m->general_type ? m->general_type
                                                     : m->adapter ? "adapter" : o->vocab_only ? "vocab" : "model");
    if (m->adapter)
        bad |= gguf_writer_set_str(w, "adapter.type", "lora");
    bad |= gguf_writer_set_str(w, GGUF_KEY_NAME, m->name ? m->name : "model");
    if (!o->vocab_only && !m->adapter && params > 0)
        bad |= gguf_writer_set_str(w, GGUF_KEY_SIZE_LABEL, label);
    if (bad) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    if (o->metadata && override_apply(o->metadata, w, err))
        goto done;
    if (m->write_metadata(m, w, model_file_type(m, outtype), err))
        goto done;
    /* last, unless the reader wrote it where its converter does */
    if (!gguf_writer_has_kv(w, GGUF_KEY_QUANT_VERSION) &&
        gguf_writer_set_u32(w, GGUF_KEY_QUANT_VERSION, CONVERT_QUANT_VERSION)) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    if (o->preset) { /* the bf16 file's keys are all in: gguf-quantize's plan and keys */
        memcpy(src_types, types, (size_t)m->n_tensors * sizeof *types);
        if (onepass_plan(&op, o, w, types, err))
            goto done;
    }

    size_t max_f32 = 0, max_tmp = 0, max_enc = 0;
    for (int i = 0; i < n; i++) {
        const src_tensor *t = &m->tensors[i];
        /* one pass writes what gguf-quantize would: ggml_n_dims, trailing
         * axes of 1 dropped (Qwen 3.5 MoE's ffn_gate_inp_shexp [n, 1]) */
        uint32_t n_dims = (uint32_t)t->n_dims;
        while (o->preset && n_dims > 1 && t->ne[n_dims - 1] == 1)
            n_dims--;
        if (gguf_writer_add_tensor(w, t->name, types[i], n_dims, t->ne, err) < 0)
            goto done;
        if (check_permute(m, t, err))
            goto done;
        if ((t->dtype == SRC_F8_E4M3 || t->dtype == SRC_I8_SCALED) && !t->fp8) {
            /* a reader that took FP8 or int8 without its scale */
            gguf_error_set(err, "tensor '%s' is %s without a scale (only checkpoints with "
                           "quantization_config quant_method fp8 or compressed-tensors "
                           "float-, int- or naive-quantized convert)", t->name,
                           t->dtype == SRC_F8_E4M3 ? "F8_E4M3" : "I8");
            goto done;
        }
        int64_t elems = chunk_rows(t) * row_len(t);
        uint64_t rowb;
        gguf_row_size(types[i], t->n_dims == 1 ? elems : t->ne[0], &rowb, NULL);
        /* f32: the rows loaded together (a vector whole), a row of scratch;
         * encoded: the chunk */
        size_t a = (size_t)(t->n_dims == 1 ? elems : t->ne[0]) * 4,
               b = (size_t)(rowb * (uint64_t)(t->n_dims == 1 ? 1 : chunk_rows(t)));
        max_tmp = a > max_tmp ? a : max_tmp;
        a *= (size_t)(t->n_dims == 1 ? 1 : load_group(t));
        max_f32 = a > max_f32 ? a : max_f32;
        max_enc = b > max_enc ? b : max_enc;
    }
    /* the model as it will be written, against itself: hyper-parameters,
     * tensor shapes, vocabulary (what gguf-run checks at load) */
    if (m->validate ? m->validate(m, w, err) : !m->adapter && gguf_model_validate_writer(w, err)) {
        gguf_error_prefix(err, "the model would be invalid: ");
        name_packed_source(m, err);
        goto done;
    }
    if (o->dry_run) {
        if (m->adapter)
            printf("output type: %s (a LoRA adapter: no general.file_type), %d tensors\n",
                   convert_outtype_name(outtype), n);
        else
            printf("output type: %s (general.file_type %u), %d tensors, %" PRIu64 " parameters (%s)\n",
                   out_name, o->preset ? (uint32_t)o->preset->ftype : model_file_type(m, outtype), n,
                   params, label);
        if (!o->vocab_only)
            print_plan(m, types, why);
        rc = 0;
        goto done;
    }
    if (o->split_max_tensors || o->split_max_bytes)
        gguf_writer_set_split(w, o->split_max_tensors, o->split_max_bytes);
    /* K chunks a batch, two batches: one converted while the other is written */
    const int threads = pool_threads(), k = 4 * threads;
    max_f32 = max_f32 ? max_f32 : 4;
    max_tmp = max_tmp ? max_tmp : 4;
    if (n > 0 && (!(f32 = malloc((max_f32 + max_tmp) * (size_t)threads)) ||
                  !(enc = malloc((max_enc ? max_enc : 1) * 2 * (size_t)k)) ||
                  !(chunks = malloc(2 * (size_t)k * sizeof *chunks)) ||
                  !(bufs = malloc(2 * (size_t)k * sizeof *bufs)))) {
        gguf_error_set(err, "out of memory (%zu bytes for conversion buffers)",
                       (max_f32 + max_tmp) * (size_t)threads + max_enc * 2 * (size_t)k);
        goto done;
    }
    for (int c = 0; n > 0 && c < 2 * k; c++)
        bufs[c] = enc + (size_t)c * (max_enc ? max_enc : 1);
    if (gguf_writer_begin(w, o->out_path, err))
        goto output_failed;
    for (uint32_t s = 0; s < gguf_writer_n_shards(w); s++) /* split names are outputs too */
        if (outpath_check(gguf_writer_shard_path(w, s), o->inputs, o->n_inputs, err)) {
            gguf_error_prefix(err, "%s: ", gguf_writer_shard_path(w, s));
            goto output_failed;
        }
    progress bar;
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += (uint64_t)n_elements(&m->tensors[i]);
    progress_start(&bar, "converting", total, !o->quiet);
    pipeline p = { .m = m, .types = types, .src_types = src_types, .imw = op.imw, .f32 = f32,
                   .f32_elems = max_f32 / 4, .tmp_elems = max_tmp / 4, .w = w, .bar = &bar, .names = names,
                   .sums = sums, .err = err };
    int ti = 0;
    int64_t r0 = 0;
    if (n > 0) {
        p.batch[0] = chunks;
        p.batch[1] = chunks + k;
        next_batch(&p, 0, k, n, &ti, &r0, bufs);
    }
    while (p.rc == 0 && (p.n[0] || p.n[1])) {
        /* convert batch cur, write the other; then swap */
        pool_for(1 + p.n[p.cur], pipeline_unit, &p);
        p.cur ^= 1;
        if (p.rc == 0)
            next_batch(&p, p.cur, k, n, &ti, &r0, bufs + (size_t)p.cur * (size_t)k);
    }
    if (p.rc) {
        progress_end(&bar);
        if (p.rc == CONVERT_ERR_OUTPUT)
            goto output_failed;
        goto done;
    }
    progress_end(&bar);
    /* Nothing is renamed into place before the output, read back through
     * the validating reader, holds what was encoded, and the source bytes
     * held in memory are still what was read. */
    if (m->verify && m->verify(m, err))
        goto done;
    if (gguf_writer_complete(w, err) || readback_verify(w, names, sums, (uint64_t)n, err) ||
        gguf_writer_finish(w, err))
        goto output_failed;
    if (!o->quiet) {
        for (int i = 0; i < n; i++)
            if (why[i])
                fprintf(stderr, "gguf-convert: fallback: %s: %s\n", m->tensors[i].name, why[i]);
        printf("gguf-convert: %s -> %s: %s, %d tensors, %" PRIu64 " parameters (%s)\n", m->path,
               gguf_writer_shard_path(w, 0), out_name, n, params, label);
    }
    rc = 0;
    goto done;
output_failed:
    rc = CONVERT_ERR_OUTPUT;
done:
    gguf_writer_free(w);
    free(f32);
    free(enc);
    free(bufs);
    free(chunks);
    free(types);
    free(why);
    free(names);
    free(sums);
    free(src_types);
    onepass_free(&op);
    return rc;
}
