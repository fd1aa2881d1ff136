/*
 * mkmodel.c — writes a synthetic LLaMA-shaped GGUF with random weights.
 *
 *   mkmodel OUT.gguf [--dim N] [--layers N] [--ffn N] [--heads N]
 *                    [--kv-heads N] [--vocab N] [--type f32|f16] [--seed N]
 *
 * For benchmarks and tests that need a model of a given size (the real
 * models live in ../shared/fixtures). Weights are normal-ish with a 0.02
 * standard deviation, norms are 1; the vocabulary is SentencePiece-style
 * (<unk>, <s>, </s>, 256 byte tokens, then filler pieces).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/gguf.h>
#include <ggufkit/arch.h>
#include <ggufkit/quants.h>

static uint64_t rng = 88172645463325252ull;

static float randn(void)
{
    /* sum of uniforms: close enough to normal for weights */
    float s = 0;
    for (int i = 0; i < 4; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        s += (float)(rng >> 40) / (float)(1 << 24);
    }
    return (s - 2.0f) * 1.7320508f;
}

typedef struct dims {
    int dim, layers, ffn, heads, kv_heads, vocab;
    uint32_t type;
} dims;

static int add(gguf_writer *w, const char *name, uint32_t type, int64_t a, int64_t b)
{
    gguf_error err;
    int64_t ne[2] = { a, b };
    if (gguf_writer_add_tensor(w, name, type, b ? 2 : 1, ne, &err) < 0) {
        fprintf(stderr, "mkmodel: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int write_tensor(gguf_writer *w, uint64_t i, uint32_t type, int norm)
{
    gguf_error err;
    uint64_t nbytes = gguf_writer_tensor_nbytes(w, i);
    uint64_t n = nbytes / (type == GGUF_DT_F32 ? 4 : 2);
    enum { CHUNK = 1 << 16 };
    static float f[CHUNK];
    static uint16_t h[CHUNK];
    for (uint64_t done = 0; done < n; done += CHUNK) {
        uint64_t k = n - done < CHUNK ? n - done : CHUNK;
        for (uint64_t j = 0; j < k; j++)
            f[j] = norm ? 1.0f : 0.02f * randn();
        int rc;
        if (type == GGUF_DT_F32) {
            rc = gguf_writer_write_tensor(w, f, k * 4, &err);
        } else {
            for (uint64_t j = 0; j < k; j++)
                h[j] = gguf_f32_to_f16(f[j]);
            rc = gguf_writer_write_tensor(w, h, k * 2, &err);
        }
        if (rc) {
            fprintf(stderr, "mkmodel: %s\n", err.msg);
            return -1;
        }
    }
    return 0;
}

static int metadata(gguf_writer *w, const dims *d)
{
    gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, "llama");
    gguf_writer_set_str(w, GGUF_KEY_NAME, "synthetic");
    gguf_writer_set_u32(w, "llama.context_length", 2048);
    gguf_writer_set_u32(w, "llama.embedding_length", (uint32_t)d->dim);
    gguf_writer_set_u32(w, "llama.block_count", (uint32_t)d->layers);
    gguf_writer_set_u32(w, "llama.feed_forward_length", (uint32_t)d->ffn);
    gguf_writer_set_u32(w, "llama.attention.head_count", (uint32_t)d->heads);
    gguf_writer_set_u32(w, "llama.attention.head_count_kv", (uint32_t)d->kv_heads);
    gguf_writer_set_f32(w, "llama.rope.freq_base", 10000.0f);
    gguf_writer_set_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    gguf_writer_set_u32(w, "general.file_type", d->type == GGUF_DT_F32 ? 0 : 1);
    gguf_writer_set_u32(w, "llama.vocab_size", (uint32_t)d->vocab);
    gguf_writer_set_u32(w, "llama.rope.dimension_count", (uint32_t)(d->dim / d->heads));
    gguf_writer_set_str(w, GGUF_KEY_TOK_MODEL, "llama");
    gguf_writer_set_str(w, GGUF_KEY_TOK_PRE, "default");
    char **tok = calloc((size_t)d->vocab, sizeof *tok);
    float *scores = calloc((size_t)d->vocab, sizeof *scores);
    int32_t *types = calloc((size_t)d->vocab, sizeof *types);
    if (!tok || !scores || !types)
        return -1;
    for (int i = 0; i < d->vocab; i++) {
        char buf[32];
        if (i < 3) {
            snprintf(buf, sizeof buf, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
            types[i] = i == 0 ? 2 : 3;
        } else if (i < 259) {
            snprintf(buf, sizeof buf, "<0x%02X>", i - 3);
            types[i] = 6;
        } else {
            snprintf(buf, sizeof buf, "\xe2\x96\x81piece%d", i);
            types[i] = 1;
            scores[i] = -(float)i;
        }
        tok[i] = strdup(buf);
    }
    int rc = gguf_writer_set_str_array(w, GGUF_KEY_TOK_TOKENS, (const char *const *)tok, NULL,
                                       (uint64_t)d->vocab) |
             gguf_writer_set_array(w, GGUF_KEY_TOK_SCORES, GGUF_VT_F32, scores, (uint64_t)d->vocab) |
             gguf_writer_set_array(w, GGUF_KEY_TOK_TYPES, GGUF_VT_I32, types, (uint64_t)d->vocab);
    gguf_writer_set_u32(w, GGUF_KEY_TOK_BOS, 1);
    gguf_writer_set_u32(w, GGUF_KEY_TOK_EOS, 2);
    gguf_writer_set_bool(w, GGUF_KEY_TOK_ADD_BOS, true);
    gguf_writer_set_bool(w, GGUF_KEY_TOK_ADD_EOS, false);
    gguf_writer_set_u32(w, GGUF_KEY_QUANT_VERSION, 2);
    for (int i = 0; i < d->vocab; i++)
        free(tok[i]);
    free(tok);
    free(scores);
    free(types);
    return rc;
}

int main(int argc, char **argv)
{
    dims d = { 1024, 16, 2816, 16, 8, 32000, GGUF_DT_F16 };
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int *field = !strcmp(a, "--dim") ? &d.dim : !strcmp(a, "--layers") ? &d.layers
                   : !strcmp(a, "--ffn") ? &d.ffn : !strcmp(a, "--heads") ? &d.heads
                   : !strcmp(a, "--kv-heads") ? &d.kv_heads : !strcmp(a, "--vocab") ? &d.vocab : NULL;
        if (field && v) {
            *field = atoi(v);
            i++;
        } else if (!strcmp(a, "--type") && v) {
            d.type = !strcmp(v, "f32") ? GGUF_DT_F32 : GGUF_DT_F16;
            i++;
        } else if (!strcmp(a, "--seed") && v) {
            rng ^= strtoull(v, NULL, 10) * 0x9E3779B97F4A7C15ull;
            i++;
        } else if (a[0] != '-' && !out) {
            out = a;
        } else {
            fprintf(stderr, "usage: mkmodel OUT.gguf [--dim N] [--layers N] [--ffn N] [--heads N] "
                            "[--kv-heads N] [--vocab N] [--type f32|f16] [--seed N]\n");
            return 2;
        }
    }
    if (!out || d.dim <= 0 || d.layers <= 0 || d.ffn <= 0 || d.heads <= 0 || d.kv_heads <= 0 ||
        d.vocab < 260 || d.dim % d.heads || d.heads % d.kv_heads) {
        fprintf(stderr, "mkmodel: bad or missing arguments\n");
        return 2;
    }
    gguf_writer *w = gguf_writer_new();
    if (!w || metadata(w, &d))
        return 1;
    int kv = d.dim / d.heads * d.kv_heads;
    int rc = add(w, GGUF_T_TOKEN_EMBD, d.type, d.dim, d.vocab);
    for (int l = 0; l < d.layers && !rc; l++) {
        char n[64];
#define T(fmt, a, b, t) (snprintf(n, sizeof n, fmt, l), add(w, n, t, a, b))
        rc |= T(GGUF_T_ATTN_NORM, d.dim, 0, GGUF_DT_F32);
        rc |= T(GGUF_T_ATTN_Q, d.dim, d.dim, d.type);
        rc |= T(GGUF_T_ATTN_K, d.dim, kv, d.type);
        rc |= T(GGUF_T_ATTN_V, d.dim, kv, d.type);
        rc |= T(GGUF_T_ATTN_OUT, d.dim, d.dim, d.type);
        rc |= T(GGUF_T_FFN_NORM, d.dim, 0, GGUF_DT_F32);
        rc |= T(GGUF_T_FFN_GATE, d.dim, d.ffn, d.type);
        rc |= T(GGUF_T_FFN_UP, d.dim, d.ffn, d.type);
        rc |= T(GGUF_T_FFN_DOWN, d.ffn, d.dim, d.type);
#undef T
    }
    rc |= add(w, GGUF_T_OUTPUT_NORM, GGUF_DT_F32, d.dim, 0);
    rc |= add(w, GGUF_T_OUTPUT, d.type, d.dim, d.vocab);
    gguf_error err;
    if (rc || gguf_writer_begin(w, out, &err)) {
        fprintf(stderr, "mkmodel: %s: %s\n", out, rc ? "bad tensor" : err.msg);
        return 1;
    }
    for (uint64_t i = 0; i < gguf_writer_n_tensors(w) && !rc; i++) {
        /* norms are the 1-D tensors: token_embd, then 9 per layer with
         * norms at positions 0 and 5, then output_norm and output */
        uint64_t in_layer = (i - 1) % 9;
        int is_norm = i == gguf_writer_n_tensors(w) - 2 ||
                      (i > 0 && i < gguf_writer_n_tensors(w) - 2 && (in_layer == 0 || in_layer == 5));
        rc = write_tensor(w, i, is_norm ? GGUF_DT_F32 : d.type, is_norm);
    }
    if (rc || gguf_writer_finish(w, &err)) {
        fprintf(stderr, "mkmodel: %s: %s\n", out, rc ? "write failed" : err.msg);
        gguf_writer_free(w);
        return 1;
    }
    gguf_writer_free(w);
    return 0;
}
