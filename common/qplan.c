/*
 * qplan.c — see qplan.h.
 */
#include "qplan.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void qplan_facts_hparams(policy_model *m, const gguf_hparams *hp)
{
    int64_t v;
    gguf_hparams_get_int(hp, GGUF_HP_BLOCK_COUNT, &v);
    m->n_layer = (int)v;
    gguf_hparams_get_int(hp, GGUF_HP_HEAD_COUNT, &v);
    m->n_head = (int)v;
    gguf_hparams_get_int(hp, GGUF_HP_HEAD_COUNT_KV, &v);
    m->n_head_kv = (int)v;
    gguf_hparams_get_int(hp, GGUF_HP_EXPERT_COUNT, &v);
    m->n_expert = (int)v;
}

bool qplan_is_attention_wv(const gguf_arch *a, const char *name)
{
    const gguf_arch_tensor *row = a ? gguf_arch_match(a, name, NULL) : NULL;
    const int role = row ? gguf_arch_tensor_role(row) : -1;
    return row ? role == GGUF_ROLE_ATTN_V || role == GGUF_ROLE_ATTN_QKV
               : strstr(name, "attn_v.weight") || strstr(name, "attn_qkv.weight") ||
                 strstr(name, "attn_kv_b.weight");
}

void qplan_facts_names(policy_model *m, const char *arch,
                       const char *(*name)(const void *ctx, uint64_t i), const void *ctx, uint64_t n)
{
    const gguf_arch *a = gguf_arch_find(arch);
    m->falcon = strcmp(arch, "falcon") == 0;
    m->is_70b = strcmp(arch, "llama") == 0 && m->n_layer == 80 && m->n_head != m->n_head_kv;
    for (uint64_t i = 0; i < n; i++) {
        const char *nm = name(ctx, i);
        if (qplan_is_attention_wv(a, nm))
            m->n_attention_wv++;
        else if (strcmp(nm, GGUF_T_OUTPUT) == 0)
            m->has_output = true;
    }
}

int qplan_tensor_type(const policy_model *m, policy_state *st, const policy_opts *pol,
                      const recipe *rec, const preset *pr, const char *name, uint32_t n_dims,
                      const int64_t *ne, uint32_t type, uint32_t *out, char *why,
                      size_t why_size, gguf_error *err)
{
    *out = type;
    /* llama-quantize counts dimensions as ggml_n_dims does: trailing axes
     * of 1 are none (Qwen 3.5's ffn_gate_inp_shexp [n, 1] is 1-D) */
    while (n_dims > 1 && ne[n_dims - 1] == 1)
        n_dims--;
    if (pr->copy || !policy_is_quantizable(name, n_dims, pol))
        return 0;
    int forced;
    if (recipe_find(rec, name, &forced, err))
        return -1;
    *out = policy_tensor_type_3d(m, st, pol, pr->ftype, pr->default_type, name, ne[0], ne[2],
                                 forced, why, why_size);
    return 0;
}

/* llama.cpp e21cdc11's tensor_requires_imatrix: without any imatrix these
 * types are refused (token_embd and output excepted), and q2_K in a
 * Q2_K_S file. */
static bool requires_imatrix(const char *name, uint32_t type, int ftype)
{
    if (policy_is_token_embd(name) || !strcmp(name, "output.weight"))
        return false;
    switch (type) {
    case GGUF_DT_IQ3_XXS: case GGUF_DT_IQ2_XXS: case GGUF_DT_IQ2_XS: case GGUF_DT_IQ2_S:
    case GGUF_DT_IQ1_M: case GGUF_DT_IQ1_S:
        return true;
    case GGUF_DT_Q2_K:
        return ftype == GGUF_FT_Q2_K_S;
    default:
        return false;
    }
}

int qplan_require_imatrix(bool have_file, const char *name, uint32_t type, int ftype,
                          bool dry_run, bool *needs, gguf_error *err)
{
    if (!have_file && requires_imatrix(name, type, ftype)) {
        if (!dry_run)
            return gguf_error_set(err, "this quantization requires an importance matrix "
                                  "(--imatrix): tensor '%s' would be %s", name,
                                  gguf_dtype_name(type));
        *needs = true;
    }
    return 0;
}

int qplan_imatrix(const gguf_imatrix *im, bool selected, const char *name, const int64_t *ne,
                  uint32_t type, bool dry_run, const float **w, bool *needs, gguf_error *err)
{
    *w = NULL;
    int32_t nw;
    const float *found = im && im->n && selected ? gguf_imatrix_find(im, name, &nw) : NULL;
    if (found && (int64_t)nw != ne[0] * ne[2]) {
        if (!policy_is_token_embd(name))
            return gguf_error_set(err, "imatrix has %d values for tensor '%s', which needs %" PRId64,
                                  nw, name, ne[0] * ne[2]);
        found = NULL;
    }
    *w = found;
    /* iq2_xxs, iq2_xs, iq1_s: ggml quantizes them only with importance
     * weights (llama-quantize: "this quantization requires an importance
     * matrix") */
    if (!found && !gguf_codec_get(type)->quantize) {
        if (!dry_run)
            return gguf_error_set(err, "tensor '%s': type %s needs an importance matrix "
                                  "(--imatrix, with data for this tensor)", name,
                                  gguf_dtype_name(type));
        *needs = true;
    }
    return 0;
}

int qplan_set_type_keys(gguf_writer *w, uint32_t file_type)
{
    gguf_writer_remove_kv(w, GGUF_KEY_QUANT_VERSION);
    int rc = gguf_writer_set_u32(w, GGUF_KEY_QUANT_VERSION, 2);
    gguf_writer_remove_kv(w, GGUF_KEY_FILE_TYPE);
    return rc | gguf_writer_set_u32(w, GGUF_KEY_FILE_TYPE, file_type);
}

int qplan_set_imatrix_keys(gguf_writer *w, const char *path, const gguf_imatrix *im, int entries)
{
    /* each removed and set again, as llama-quantize's overrides are; the
     * counts as u32 (e21cdc11 writes int overrides as u32 of their
     * magnitude) */
    gguf_writer_remove_kv(w, "quantize.imatrix.file");
    int rc = gguf_writer_set_str(w, "quantize.imatrix.file", path);
    if (im->dataset && im->dataset[0]) {
        gguf_writer_remove_kv(w, "quantize.imatrix.dataset");
        rc |= gguf_writer_set_str(w, "quantize.imatrix.dataset", im->dataset);
    }
    gguf_writer_remove_kv(w, "quantize.imatrix.entries_count");
    rc |= gguf_writer_set_u32(w, "quantize.imatrix.entries_count",
                              (uint32_t)(entries < 0 ? -(int64_t)entries : entries));
    if (im->chunks > 0) {
        gguf_writer_remove_kv(w, "quantize.imatrix.chunks_count");
        rc |= gguf_writer_set_u32(w, "quantize.imatrix.chunks_count", (uint32_t)im->chunks);
    }
    return rc;
}
