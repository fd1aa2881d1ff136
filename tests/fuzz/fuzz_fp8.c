/*
 * fuzz_fp8.c — libFuzzer harness for quantized sources as gguf-convert's
 * Hugging Face reader takes them: FP8 block-scaled (convert/fp8.c) and
 * integer-packed (compressed-tensors, GPTQ: convert/qpack.c). The input is
 * a config.json, a NUL byte, then a .safetensors file. Its
 * quantization_config and tensors go through fp8_plan_read; every F8_E4M3
 * tensor the plan does not consume is then taken as the reader takes it
 * (fp8_attach) and, when its scale is accepted, every element is
 * dequantized. Then qpack_plan_read and qpack_plan_check; every packed
 * tensor (X.weight_packed, X.qweight, a BitNet X.weight: qpack_in_place)
 * is taken with its parts (qpack_take)
 * and, when accepted, every element of its weight produced (qpack_span, in
 * odd-sized pieces and whole); the accepted ones (up to 8) are then
 * stacked as experts are (qpack_stack: refused unless alike) and a stack's
 * every element produced the same ways.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fp8.h"
#include "json.h"
#include "qpack.h"
#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every one of the n values of q, in odd-sized pieces and whole. */
static void every_value(const qpack_src *q, int64_t n)
{
    float *out = n <= (1 << 16) ? malloc((size_t)n * sizeof *out + 4) : NULL;
    for (int64_t at = 0; out && at < n; at += 7)
        qpack_span(q, out + at, n - at < 7 ? n - at : 7, at);
    if (out && n) {
        qpack_span(q, out, n, 0);
        (void)qpack_value(q, n - 1);
    }
    free(out);
}

/* The integer-packed weights of f (index: the plan fp8_plan_read made). */
static void qpack_packed(const fp8_plan *index, const json_value *cfg, const st_file *f)
{
    gguf_error err;
    qpack_plan p;
    if (qpack_plan_read(&p, cfg, &err) || qpack_plan_check(&p, index, &err))
        return;
    qpack_src *taken[8];
    int n_taken = 0;
    for (size_t i = 0; i < f->n; i++) {
        char w[512];
        qpack_src *q;
        (void)qpack_consumed(&p, f->tensors[i].name);
        if ((!qpack_is_main(&p, f->tensors[i].name, w, sizeof w) &&
             !qpack_in_place(&p, index, f->tensors[i].name)) ||
            qpack_take(&p, index, f->tensors[i].name, &q, &err))
            continue;
        every_value(q, q->rows * q->cols);
        if (n_taken < 8)
            taken[n_taken++] = q;
        else
            qpack_src_free(q);
    }
    qpack_src *stack;
    if (n_taken && qpack_stack(taken, n_taken, "stack", &stack, &err) == 0) {
        every_value(stack, stack->rows * stack->cols * stack->n_slice);
        qpack_src_free(stack);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    if (!nul)
        return 0;
    gguf_error err;
    json_value *cfg = json_parse((const char *)data, (size_t)(nul - data), &err);
    st_file f;
    if (!cfg)
        return 0;
    if (st_parse(nul + 1, size - (size_t)(nul + 1 - data), &f, &err)) {
        json_free(cfg);
        return 0;
    }
    const char *names[1] = { "model.safetensors" };
    fp8_plan p;
    if (fp8_plan_read(&p, cfg, &f, names, 1, &err) == 0) {
        for (size_t i = 0; i < f.n; i++) {
            const st_tensor *st = &f.tensors[i];
            if (strcmp(st->dtype, "F8_E4M3") || fp8_consumed(&p, st) || st->n_dims < 1 ||
                st->n_dims > 4 || st->nbytes > (1u << 20))
                continue;
            src_model m = { 0 };
            int64_t ne[4];
            for (int d = 0; d < st->n_dims; d++)
                ne[d] = st->shape[st->n_dims - 1 - d];
            src_tensor *t = src_add_tensor(&m, st->name, SRC_F8_E4M3, st->n_dims, ne, st->data);
            if (t) {
                t->from = (src_origin){ names[0], st->name };
                if (fp8_attach(&p, &m, &err) == 0) {
                    float out[256];
                    for (uint64_t at = 0; at < st->nbytes; at += 256) {
                        const int64_t n = st->nbytes - at < 256 ? (int64_t)(st->nbytes - at) : 256;
                        fp8_dequant_span(t->fp8, st->data + at, out, n, (int64_t)at);
                    }
                }
            }
            src_model_free(&m);
        }
        qpack_packed(&p, cfg, &f);
    }
    fp8_plan_free(&p);
    st_close(&f);
    json_free(cfg);
    return 0;
}
