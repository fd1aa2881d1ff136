/*
 * onepass.c — see onepass.h.
 */
#include "onepass.h"

#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>
#include "hparams_writer.h"
#include "qplan.h"

static int cmp_llama_order(const void *a, const void *b)
{
    return gguf_tensor_name_order(((const src_tensor *)a)->name, ((const src_tensor *)b)->name);
}

int onepass_order(onepass *op, const src_model *m, gguf_error *err)
{
    memset(op, 0, sizeof *op);
    op->view = *m;
    op->view.tensors = malloc(((size_t)m->n_tensors + 1) * sizeof *m->tensors);
    op->imw = calloc((size_t)m->n_tensors + 1, sizeof *op->imw);
    if (!op->view.tensors || !op->imw)
        return gguf_error_set(err, "out of memory");
    memcpy(op->view.tensors, m->tensors, (size_t)m->n_tensors * sizeof *m->tensors);
    qsort(op->view.tensors, (size_t)m->n_tensors, sizeof *m->tensors, cmp_llama_order);
    return 0;
}

static const char *view_name(const void *ctx, uint64_t i)
{
    return ((const src_model *)ctx)->tensors[i].name;
}

int onepass_plan(onepass *op, const convert_options *o, gguf_writer *w, uint32_t *types,
                 gguf_error *err)
{
    const src_model *m = &op->view;
    const preset *pr = o->preset;
    policy_model facts = { 0 };
    policy_state st = { 0 };
    const policy_opts pol = { .output_type = -1, .token_embedding_type = -1 };
    recipe rec;
    gguf_hparams *hp;
    if (gguf_hparams_read_writer(w, &hp, err))
        return -1;
    qplan_facts_hparams(&facts, hp);
    gguf_hparams_free(hp);
    qplan_facts_names(&facts, gguf_arch_name(m->arch), view_name, m, (uint64_t)m->n_tensors);
    if (o->imatrix_path) {
        if (gguf_imatrix_load(o->imatrix_path, &op->im, err)) {
            gguf_error_prefix(err, "%s: ", o->imatrix_path);
            return -1;
        }
        op->im_entries = op->im.n;
        st.has_imatrix = op->im_entries > 0;
    }
    recipe_init(&rec);
    bool needs = false;
    char why[128];
    int rc = 0;
    for (int i = 0; i < m->n_tensors && !rc; i++) {
        const src_tensor *t = &m->tensors[i];
        uint32_t type;
        rc = qplan_tensor_type(&facts, &st, &pol, &rec, pr, t->name, (uint32_t)t->n_dims, t->ne,
                               types[i], &type, why, sizeof why, err);
        /* gguf-quantize refuses to requantize without --allow-requantize
         * (gpt-oss's MXFP4 experts), which one pass does not offer */
        if (!rc && type != types[i] && gguf_dtype_get(types[i])->blck_size > 1)
            rc = gguf_error_set(err, "tensor '%s' is already %s: one pass does not requantize it "
                                "(convert to bf16, then gguf-quantize --allow-requantize)", t->name,
                                gguf_dtype_name(types[i]));
        if (!rc && type != types[i])
            rc = qplan_require_imatrix(o->imatrix_path != NULL, t->name, type, pr->ftype,
                                       o->dry_run, &needs, err) ||
                 qplan_imatrix(&op->im, true, t->name, t->ne, type, o->dry_run, &op->imw[i],
                               &needs, err) ? -1 : 0;
        types[i] = type;
    }
    recipe_free(&rec);
    if (rc)
        return -1;
    if (qplan_set_type_keys(w, (uint32_t)pr->ftype) ||
        (op->im_entries > 0 && qplan_set_imatrix_keys(w, o->imatrix_path, &op->im, op->im_entries)))
        return gguf_error_set(err, "out of memory");
    return 0;
}

void onepass_free(onepass *op)
{
    free(op->view.tensors);
    free(op->imw);
    gguf_imatrix_free(&op->im);
    memset(op, 0, sizeof *op);
}
