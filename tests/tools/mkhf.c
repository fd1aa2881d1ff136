/*
 * mkhf.c — writes a synthetic Hugging Face folder (config.json,
 * tokenizer_config.json, model.safetensors with random weights) for the
 * converter and runner benchmarks.
 *
 *   mkhf OUTDIR [--tokenizer tokenizer.model] [--dim N] [--layers N] [--ffn N]
 *               [--heads N] [--kv-heads N] [--vocab N] [--dtype f16|bf16|f32]
 *               [--family llama|qwen3|mixtral|qwen3moe] [--head-dim N]
 *               [--experts N] [--experts-used N] [--moe-ffn N]
 *
 * Families: LlamaForCausalLM (default); Qwen3ForCausalLM (per-head q/k
 * norms, heads of --head-dim); MixtralForCausalLM (--experts of --ffn,
 * top --experts-used); Qwen3MoeForCausalLM (Qwen3 attention, --experts of
 * --moe-ffn). Tensors are written in name order within the layout a real
 * checkpoint has (the converter sorts them anyway).
 *
 * A given tokenizer.model is copied; vocab (default 32000) may exceed its
 * pieces (the converter pads, as llama.cpp's does). Without one, mkhf writes
 * its own SentencePiece BPE model of exactly vocab pieces (<unk>, <s>, </s>,
 * the 256 byte pieces, then characters, word starts and letter pairs), so
 * a model can be made from nothing. Weights stream to disk in chunks, so a
 * multi-gigabyte model needs no memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ggufkit/quants.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static float randw(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((float)(rng >> 40) / (float)(1 << 24) - 0.5f) * 0.04f;
}

/* --- a generated tokenizer.model (SentencePiece protobuf) ------------------ */

static void pb_varint(FILE *fp, uint64_t v)
{
    do {
        fputc((int)(v & 0x7f) | (v > 0x7f ? 0x80 : 0), fp);
        v >>= 7;
    } while (v);
}

/* One ModelProto.pieces entry: { piece = 1, score = 2, type = 3 }. */
static void pb_piece(FILE *fp, const char *text, float score, int type)
{
    size_t len = strlen(text);
    pb_varint(fp, 1 << 3 | 2);
    pb_varint(fp, 2 + len + 5 + 2);
    pb_varint(fp, 1 << 3 | 2);
    pb_varint(fp, len);
    fwrite(text, 1, len, fp);
    fputc(2 << 3 | 5, fp);
    fwrite(&score, 4, 1, fp); /* little-endian hosts */
    pb_varint(fp, 3 << 3);
    pb_varint(fp, (uint64_t)type);
}

/* n pieces: specials, bytes, then characters, "▁x" word starts and letter
 * pairs in that order, scores falling. 0, or -1 when n is too small. */
static int write_spm(const char *path, int64_t n)
{
    static const char chars[] = "etaoinshrdlcumwfgypbvkjxqzETAOINSHRDLCUMWFGYPBVKJXQZ0123456789.,;:!?'\"-()";
    static const char lower[] = "etaoinshrdlcumwfgypbvkjxqz";
    if (n < 259 + (int64_t)strlen(chars) + 1)
        return -1;
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    pb_piece(fp, "<unk>", 0, 2);
    pb_piece(fp, "<s>", 0, 3);
    pb_piece(fp, "</s>", 0, 3);
    char t[16];
    for (int b = 0; b < 256; b++) {
        snprintf(t, sizeof t, "<0x%02X>", b);
        pb_piece(fp, t, 0, 6);
    }
    int64_t k = 259;
    float score = -1;
    pb_piece(fp, "\xe2\x96\x81", score--, 1), k++;
    for (const char *c = chars; *c && k < n; c++, k++) {
        snprintf(t, sizeof t, "%c", *c);
        pb_piece(fp, t, score--, 1);
    }
    for (const char *c = chars; *c && k < n; c++, k++) {
        snprintf(t, sizeof t, "\xe2\x96\x81%c", *c);
        pb_piece(fp, t, score--, 1);
    }
    for (int round = 0; round < 2 && k < n; round++)
        for (const char *a = lower; *a && k < n; a++)
            for (const char *b = lower; *b && k < n; b++, k++) {
                snprintf(t, sizeof t, round ? "\xe2\x96\x81%c%c" : "%c%c", *a, *b);
                pb_piece(fp, t, score--, 1);
            }
    for (int64_t i = 0; k < n; i++, k++) { /* filler words past every pair */
        snprintf(t, sizeof t, "\xe2\x96\x81w%lld", (long long)i);
        pb_piece(fp, t, score--, 1);
    }
    /* trainer_spec = 2 { model_type = 3: BPE, byte_fallback = 35 } */
    fputc(2 << 3 | 2, fp);
    pb_varint(fp, 2 + 3);
    pb_varint(fp, 3 << 3);
    pb_varint(fp, 2);
    pb_varint(fp, 35 << 3);
    pb_varint(fp, 1);
    return fclose(fp) ? -1 : 0;
}

typedef struct tensor {
    char    name[96];
    int64_t rows, cols; /* cols 0: a vector */
    int     norm;
} tensor;

int main(int argc, char **argv)
{
    int64_t dim = 2048, layers = 16, ffn = 5632, heads = 16, kv = 16, vocab = 32000;
    int64_t head_dim = 0, experts = 8, used = 2, moe_ffn = 768;
    const char *dtype = "bf16", *out = NULL, *tok = NULL, *family = "llama";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t *num = !strcmp(a, "--dim") ? &dim : !strcmp(a, "--layers") ? &layers
                     : !strcmp(a, "--ffn") ? &ffn : !strcmp(a, "--heads") ? &heads
                     : !strcmp(a, "--kv-heads") ? &kv : !strcmp(a, "--vocab") ? &vocab
                     : !strcmp(a, "--head-dim") ? &head_dim : !strcmp(a, "--experts") ? &experts
                     : !strcmp(a, "--experts-used") ? &used : !strcmp(a, "--moe-ffn") ? &moe_ffn
                     : NULL;
        if (num && v) {
            *num = atoll(v), i++;
        } else if (!strcmp(a, "--family") && v) {
            family = v, i++;
        } else if (!strcmp(a, "--dtype") && v) {
            dtype = v, i++;
        } else if (!strcmp(a, "--tokenizer") && v) {
            tok = v, i++;
        } else if (!out && a[0] != '-') {
            out = a;
        } else {
            fprintf(stderr, "usage: mkhf OUTDIR [--tokenizer tokenizer.model] [--dim N] [--layers N] "
                            "[--ffn N] [--heads N] [--kv-heads N] [--vocab N] [--dtype f16|bf16|f32]\n");
            return 2;
        }
    }
    int esize = !strcmp(dtype, "f32") ? 4 : 2;
    const char *st_dtype = !strcmp(dtype, "f32") ? "F32" : !strcmp(dtype, "f16") ? "F16" : "BF16";
    const bool qwen3 = !strcmp(family, "qwen3") || !strcmp(family, "qwen3moe");
    const bool moe = !strcmp(family, "mixtral") || !strcmp(family, "qwen3moe");
    if (!qwen3 && !moe && strcmp(family, "llama")) {
        fprintf(stderr, "mkhf: unknown --family %s (llama, qwen3, mixtral, qwen3moe)\n", family);
        return 2;
    }
    if (!head_dim || !qwen3) /* only Qwen3's heads are not hidden / heads wide */
        head_dim = heads > 0 ? dim / heads : 0;
    if (!out || dim <= 0 || heads <= 0 || kv <= 0 || head_dim <= 0 || (!qwen3 && dim % heads) ||
        (moe && (experts < 1 || used < 1 || used > experts || moe_ffn < 1))) {
        fprintf(stderr, "mkhf: need OUTDIR and consistent dimensions\n");
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
    const char *cls = !strcmp(family, "qwen3") ? "Qwen3ForCausalLM"
                     : !strcmp(family, "mixtral") ? "MixtralForCausalLM"
                     : !strcmp(family, "qwen3moe") ? "Qwen3MoeForCausalLM" : "LlamaForCausalLM";
    fprintf(fp, "{\"architectures\": [\"%s\"], \"model_type\": \"%s\", "
                "\"hidden_size\": %lld, \"intermediate_size\": %lld, \"num_hidden_layers\": %lld, "
                "\"num_attention_heads\": %lld, \"num_key_value_heads\": %lld, \"vocab_size\": %lld, "
                "\"max_position_embeddings\": 4096, \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, "
                "\"tie_word_embeddings\": false, \"bos_token_id\": 1, \"eos_token_id\": 2",
            cls, family, (long long)dim, (long long)ffn, (long long)layers, (long long)heads,
            (long long)kv, (long long)vocab);
    if (qwen3)
        fprintf(fp, ", \"head_dim\": %lld", (long long)head_dim);
    if (!strcmp(family, "mixtral"))
        fprintf(fp, ", \"num_local_experts\": %lld, \"num_experts_per_tok\": %lld",
                (long long)experts, (long long)used);
    else if (moe)
        fprintf(fp, ", \"num_experts\": %lld, \"num_experts_per_tok\": %lld, "
                    "\"moe_intermediate_size\": %lld, \"norm_topk_prob\": true",
                (long long)experts, (long long)used, (long long)moe_ffn);
    fprintf(fp, "}\n");
    fclose(fp);
    snprintf(path, sizeof path, "%s/tokenizer_config.json", out);
    if (!(fp = fopen(path, "w")))
        return 1;
    fprintf(fp, "{\"add_bos_token\": true, \"add_eos_token\": false}\n");
    fclose(fp);
    snprintf(path, sizeof path, "%s/tokenizer.model", out);
    if (!tok && write_spm(path, vocab)) {
        fprintf(stderr, "mkhf: cannot write %s (a generated vocabulary needs --vocab >= 350)\n", path);
        return 1;
    }
    FILE *in = tok ? fopen(tok, "rb") : NULL;
    FILE *o = tok ? fopen(path, "wb") : NULL;
    if (tok && (!in || !o)) {
        fprintf(stderr, "mkhf: cannot copy %s\n", tok);
        return 1;
    }
    char buf[65536];
    size_t n;
    while (in && (n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, o);
    if (in) {
        fclose(in);
        fclose(o);
    }

    /* the tensor list in Hugging Face's module order */
    const int64_t kvd = head_dim * kv, qd = head_dim * heads;
    const int64_t per_layer = 6 + (qwen3 ? 2 : 0) + (moe ? 1 + 3 * experts : 3);
    int64_t nt = 3 + per_layer * layers;
    tensor *t = calloc((size_t)nt, sizeof *t);
    int k = 0;
#define T(nm, r, c) (snprintf(t[k].name, sizeof t[k].name, "model.layers.%lld.%s.weight", \
                              (long long)l, nm), t[k].rows = (r), t[k].cols = (c), t[k].norm = (c) == 0, k++)
    snprintf(t[k].name, sizeof t[k].name, "model.embed_tokens.weight"), t[k].rows = vocab, t[k++].cols = dim;
    for (int64_t l = 0; l < layers; l++) {
        T("input_layernorm", dim, 0);
        T("self_attn.q_proj", qd, dim);
        T("self_attn.k_proj", kvd, dim);
        T("self_attn.v_proj", kvd, dim);
        T("self_attn.o_proj", dim, qd);
        if (qwen3) {
            T("self_attn.q_norm", head_dim, 0);
            T("self_attn.k_norm", head_dim, 0);
        }
        T("post_attention_layernorm", dim, 0);
        if (!moe) {
            T("mlp.gate_proj", ffn, dim);
            T("mlp.up_proj", ffn, dim);
            T("mlp.down_proj", dim, ffn);
        } else if (qwen3) {
            T("mlp.gate", experts, dim);
            for (int64_t e = 0; e < experts; e++) {
                char nm[96];
                snprintf(nm, sizeof nm, "mlp.experts.%lld.gate_proj", (long long)e), T(nm, moe_ffn, dim);
                snprintf(nm, sizeof nm, "mlp.experts.%lld.up_proj", (long long)e), T(nm, moe_ffn, dim);
                snprintf(nm, sizeof nm, "mlp.experts.%lld.down_proj", (long long)e), T(nm, dim, moe_ffn);
            }
        } else {
            T("block_sparse_moe.gate", experts, dim);
            for (int64_t e = 0; e < experts; e++) {
                char nm[96];
                snprintf(nm, sizeof nm, "block_sparse_moe.experts.%lld.w1", (long long)e), T(nm, ffn, dim);
                snprintf(nm, sizeof nm, "block_sparse_moe.experts.%lld.w2", (long long)e), T(nm, dim, ffn);
                snprintf(nm, sizeof nm, "block_sparse_moe.experts.%lld.w3", (long long)e), T(nm, ffn, dim);
            }
        }
    }
#undef T
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
