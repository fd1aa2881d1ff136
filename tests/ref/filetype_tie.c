/*
 * filetype_tie.c — the input of test_types' test_file_type_guess as a model
 * llama-quantize loads: build/sample.gguf's keys and tensors (general.file_type
 * dropped), 8 matrices q8_0 and 8 f16 (zero data), in the file's order. Counted
 * in file order q8_0 reaches 8 first; in llama.cpp's loader order f16 does.
 * Not built by the Makefile:
 *
 *   cc -std=c11 -Iinclude -o /tmp/filetype_tie tests/ref/filetype_tie.c build/libgguf.a -lm -lpthread
 *   /tmp/filetype_tie build/sample.gguf /tmp/tie.gguf
 *   $N/build/bin/llama-quantize /tmp/tie.gguf /tmp/theirs.gguf COPY   # N: llama.cpp e21cdc11
 *   build/gguf-quantize /tmp/tie.gguf /tmp/ours.gguf COPY
 *   cmp /tmp/theirs.gguf /tmp/ours.gguf   # general.file_type 1025 in both (gguf-quantize wrote 1031 before)
 */
#include <ggufkit/gguf.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: filetype_tie SAMPLE.gguf OUT.gguf\n"); return 2; }
    gguf_error err = {0};
    gguf_file *f = gguf_open(argv[1], 0, &err);
    if (!f) { fprintf(stderr, "%s\n", err.msg); return 1; }
    gguf_writer *w = gguf_writer_new();
    for (uint64_t i = 0; i < gguf_n_kv(f); i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        if (strcmp(kv->key, "general.file_type")) gguf_writer_copy_kv(w, kv);
    }
    const char *h[] = { "blk.0.ffn_down.weight", "blk.1.attn_q.weight", "blk.1.attn_k.weight", "blk.1.attn_v.weight", "blk.1.attn_output.weight",
                        "blk.1.ffn_gate.weight", "blk.1.ffn_down.weight", "output.weight", NULL };
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        uint32_t ty = t->n_dims == 1 ? GGUF_DT_F32 : GGUF_DT_Q8_0;
        for (int k = 0; h[k] && t->n_dims > 1; k++) if (!strcmp(t->name, h[k])) ty = GGUF_DT_F16;
        if (gguf_writer_add_tensor(w, t->name, ty, t->n_dims, t->ne, &err) < 0) { fprintf(stderr, "%s\n", err.msg); return 1; }
        printf("%s %s\n", t->name, gguf_dtype_name(ty));
    }
    if (gguf_writer_begin(w, argv[2], &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    static char z[1 << 20];
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++)
        if (gguf_writer_write_tensor(w, z, gguf_writer_tensor_nbytes(w, i), &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
    if (gguf_writer_finish(w, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    return 0;
}
