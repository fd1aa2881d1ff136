/*
 * model.c — the source-model container (see model.h).
 */
#include "model.h"

#include "fp8.h"
#include "qpack.h"

#include <stdlib.h>
#include <string.h>

src_tensor *src_add_tensor(src_model *m, const char *name, int dtype, int n_dims,
                           const int64_t *ne, const void *data)
{
    if (m->n_tensors == m->cap_tensors) {
        int cap = m->cap_tensors ? 2 * m->cap_tensors : 64;
        src_tensor *t = realloc(m->tensors, (size_t)cap * sizeof *t);
        if (!t)
            return NULL;
        m->tensors = t;
        m->cap_tensors = cap;
    }
    src_tensor *t = &m->tensors[m->n_tensors];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name)))
        return NULL;
    t->dtype = (uint8_t)dtype;
    t->n_dims = n_dims;
    for (int d = 0; d < 4; d++)
        t->ne[d] = d < n_dims ? ne[d] : 1;
    t->data = data;
    m->n_tensors++;
    return t;
}

void src_model_free(src_model *m)
{
    if (!m)
        return;
    if (m->close)
        m->close(m);
    for (int i = 0; i < m->n_tensors; i++) {
        free(m->tensors[i].name);
        free(m->tensors[i].owned);
        free(m->tensors[i].parts);
        free(m->tensors[i].part_from);
        fp8_scale_free(m->tensors[i].fp8);
        qpack_src_free(m->tensors[i].qp);
    }
    free(m->tensors);
    free(m->name);
    memset(m, 0, sizeof *m);
}

int src_dtype_of(const char *dtype)
{
    return !strcmp(dtype, "F32") ? SRC_F32 : !strcmp(dtype, "F16") ? SRC_F16
         : !strcmp(dtype, "BF16") ? SRC_BF16 : !strcmp(dtype, "F8_E4M3") ? SRC_F8_E4M3
         : !strcmp(dtype, "I8") ? SRC_I8_SCALED : -1;
}
