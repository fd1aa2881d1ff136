/*
 * mkhf.c — writes a synthetic Hugging Face LLaMA folder (config.json,
 * tokenizer_config.json, model.safetensors with random weights) for the
 * converter benchmark.
 *
 *   mkhf OUTDIR --tokenizer tokenizer.model [--dim N] [--layers N] [--ffn N]
 *               [--heads N] [--kv-heads N] [--vocab N] [--dtype f16|bf16|f32]
 *
 * The tokenizer.model is copied; vocab (default 32000) may exceed its
 * pieces (the converter pads, as llama.cpp's does). Weights stream to disk
 * in chunks, so a multi-gigabyte model needs no memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "float16.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static float randw(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((float)(rng >> 40) / (float)(1 << 24) - 0.5f) * 0.04f;
}

typedef struct tensor {
    char    name[96];
    int64_t rows, cols; /* cols 0: a vector */
    int     norm;
} tensor;

int main(int argc, char **argv)
{
    int64_t dim = 2048, layers = 16, ffn = 5632, heads = 16, kv = 16, vocab = 32000;
    const char *dtype = "bf16", *out = NULL, *tok = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t *num = !strcmp(a, "--dim") ? &dim : !strcmp(a, "--layers") ? &layers
                     : !strcmp(a, "--ffn") ? &ffn : !strcmp(a, "--heads") ? &heads
                     : !strcmp(a, "--kv-heads") ? &kv : !strcmp(a, "--vocab") ? &vocab : NULL;
        if (num && v) {
            *num = atoll(v), i++;
        } else if (!strcmp(a, "--dtype") && v) {
            dtype = v, i++;
        } else if (!strcmp(a, "--tokenizer") && v) {
            tok = v, i++;
        } else if (!out && a[0] != '-') {
            out = a;
        } else {
            fprintf(stderr, "usage: mkhf OUTDIR --tokenizer tokenizer.model [--dim N] [--layers N] "
                            "[--ffn N] [--heads N] [--kv-heads N] [--vocab N] [--dtype f16|bf16|f32]\n");
            return 2;
        }
    }
    int esize = !strcmp(dtype, "f32") ? 4 : 2;
    const char *st_dtype = !strcmp(dtype, "f32") ? "F32" : !strcmp(dtype, "f16") ? "F16" : "BF16";
    if (!out || !tok || dim <= 0 || heads <= 0 || kv <= 0 || dim % heads) {
        fprintf(stderr, "mkhf: need OUTDIR, --tokenizer and consistent dimensions\n");
        return 2;
    }
    if (mkdir(out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "mkhf: %s: %s\n", out, strerror(errno));
        return 1;
    }
    char path[4096];
    /* config.json, tokenizer_config.json, tokenizer.model */
    snprintf(path, sizeof path, "%s/config.json", out);
    FILE *fp = fopen(path, "w");
    if (!fp)
        return 1;
    fprintf(fp, "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
                "\"hidden_size\": %lld, \"intermediate_size\": %lld, \"num_hidden_layers\": %lld, "
                "\"num_attention_heads\": %lld, \"num_key_value_heads\": %lld, \"vocab_size\": %lld, "
                "\"max_position_embeddings\": 4096, \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, "
                "\"tie_word_embeddings\": false, \"bos_token_id\": 1, \"eos_token_id\": 2}\n",
            (long long)dim, (long long)ffn, (long long)layers, (long long)heads, (long long)kv,
            (long long)vocab);
    fclose(fp);
    snprintf(path, sizeof path, "%s/tokenizer_config.json", out);
    if (!(fp = fopen(path, "w")))
        return 1;
    fprintf(fp, "{\"add_bos_token\": true, \"add_eos_token\": false}\n");
    fclose(fp);
    FILE *in = fopen(tok, "rb");
    snprintf(path, sizeof path, "%s/tokenizer.model", out);
    FILE *o = fopen(path, "wb");
    if (!in || !o) {
        fprintf(stderr, "mkhf: cannot copy %s\n", tok);
        return 1;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, o);
    fclose(in);
    fclose(o);

    /* the tensor list in Hugging Face's module order */
    int64_t kvd = dim / heads * kv, nt = 3 + 9 * layers;
    tensor *t = calloc((size_t)nt, sizeof *t);
    int k = 0;
    snprintf(t[k].name, sizeof t[k].name, "model.embed_tokens.weight"), t[k].rows = vocab, t[k++].cols = dim;
    for (int64_t l = 0; l < layers; l++) {
        static const char *const names[] = { "input_layernorm", "self_attn.q_proj", "self_attn.k_proj",
                                             "self_attn.v_proj", "self_attn.o_proj",
                                             "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj",
                                             "mlp.down_proj" };
        int64_t rows[] = { dim, dim, kvd, kvd, dim, dim, ffn, ffn, dim };
        int64_t cols[] = { 0, dim, dim, dim, dim, 0, dim, dim, ffn };
        for (int j = 0; j < 9; j++) {
            snprintf(t[k].name, sizeof t[k].name, "model.layers.%lld.%s.weight", (long long)l, names[j]);
            t[k].rows = rows[j], t[k].cols = cols[j], t[k++].norm = cols[j] == 0;
        }
    }
    snprintf(t[k].name, sizeof t[k].name, "model.norm.weight"), t[k].rows = dim, t[k++].norm = 1;
    snprintf(t[k].name, sizeof t[k].name, "lm_head.weight"), t[k].rows = vocab, t[k++].cols = dim;

    /* header: JSON padded with spaces to a multiple of 8 */
    size_t cap = (size_t)nt * 160 + 64, len = 0;
    char *hdr = malloc(cap);
    uint64_t off = 0;
    len += (size_t)snprintf(hdr + len, cap - len, "{");
    for (int i = 0; i < nt; i++) {
        uint64_t bytes = (uint64_t)t[i].rows * (uint64_t)(t[i].cols ? t[i].cols : 1) * (uint64_t)esize;
        if (t[i].cols)
            len += (size_t)snprintf(hdr + len, cap - len, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld,%lld],"
                                    "\"data_offsets\":[%llu,%llu]}", i ? "," : "", t[i].name, st_dtype,
                                    (long long)t[i].rows, (long long)t[i].cols,
                                    (unsigned long long)off, (unsigned long long)(off + bytes));
        else
            len += (size_t)snprintf(hdr + len, cap - len, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld],"
                                    "\"data_offsets\":[%llu,%llu]}", i ? "," : "", t[i].name, st_dtype,
                                    (long long)t[i].rows, (unsigned long long)off,
                                    (unsigned long long)(off + bytes));
        off += bytes;
    }
    len += (size_t)snprintf(hdr + len, cap - len, "}");
    while (len % 8)
        hdr[len++] = ' ';
    snprintf(path, sizeof path, "%s/model.safetensors", out);
    if (!(fp = fopen(path, "wb")))
        return 1;
    uint64_t hl = len;
    fwrite(&hl, 8, 1, fp);
    fwrite(hdr, 1, len, fp);
    enum { CHUNK = 1 << 16 };
    static uint16_t h[CHUNK];
    static float f[CHUNK];
    for (int i = 0; i < nt; i++) {
        uint64_t count = (uint64_t)t[i].rows * (uint64_t)(t[i].cols ? t[i].cols : 1);
        for (uint64_t done = 0; done < count; done += CHUNK) {
            size_t c = count - done < CHUNK ? (size_t)(count - done) : CHUNK;
            for (size_t j = 0; j < c; j++)
                f[j] = t[i].norm ? 1.0f : randw();
            if (esize == 4) {
                fwrite(f, 4, c, fp);
            } else {
                for (size_t j = 0; j < c; j++)
                    h[j] = esize == 2 && st_dtype[0] == 'F' ? gguf_f32_to_f16(f[j]) : gguf_f32_to_bf16(f[j]);
                fwrite(h, 2, c, fp);
            }
        }
    }
    if (fclose(fp) != 0) {
        fprintf(stderr, "mkhf: write error\n");
        return 1;
    }
    free(hdr);
    free(t);
    return 0;
}
