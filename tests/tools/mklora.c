/*
 * mklora.c — a PEFT LoRA adapter for a Hugging Face checkpoint folder, with
 * deterministic pseudo-random A and B (B non-zero, as after training), for
 * adapter conversions and run-time application tests.
 *
 *   mklora SRC OUT [--rank R] [--alpha A] [--dtype F32|F16|BF16]
 *                  [--targets q_proj,k_proj,...] [--experts] [--seed S]
 *
 * SRC holds config.json (a text_config's keys override the top level's);
 * OUT is created (its parent must exist) and gets adapter_config.json and
 * adapter_model.safetensors. Targets (default all seven) are q_proj, k_proj,
 * v_proj, o_proj (self_attn) and gate_proj, up_proj, down_proj (mlp). With
 * --experts the mlp targets are the routed experts' projections,
 * mlp.experts.E.gate_proj ... for every E < num_experts, sized by
 * moe_intermediate_size (Qwen3-MoE's naming). Tensors are written layer by
 * layer, target by target, lora_A then lora_B, as PEFT names them:
 * base_model.model.model.layers.L.self_attn.q_proj.lora_A.weight [r, in],
 * ...lora_B.weight [out, r]. Values are uniform in [-0.1, 0.1) from an
 * xorshift64 stream seeded by --seed (default 1), rounded to the dtype.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ggufkit/quants.h>

#define TOOL_NAME "mklora"
#include "tool_util.h"

#include "json.h"



typedef struct {
    char     name[256];
    int64_t  rows, cols; /* safetensors shape [rows, cols] */
    uint8_t *data;
    size_t   bytes;
} tensor;

static tensor  *T;
static size_t   n_t, cap_t;
static uint64_t rng;
static char     dtype[8] = "F32";

static float next_value(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((float)(rng >> 40) / (float)(1 << 24) - 0.5f) * 0.2f;
}

static void add(const char *prefix, const char *ab, int64_t rows, int64_t cols)
{
    if (n_t == cap_t) {
        cap_t = cap_t ? 2 * cap_t : 64;
        tensor *nt = realloc(T, cap_t * sizeof *T);
        if (!nt)
            die("out of memory");
        T = nt;
    }
    tensor *t = &T[n_t++];
    snprintf(t->name, sizeof t->name, "%s.lora_%s.weight", prefix, ab);
    t->rows = rows;
    t->cols = cols;
    const size_t n = (size_t)(rows * cols), w = strcmp(dtype, "F32") ? 2 : 4;
    t->bytes = n * w;
    t->data = xmalloc(t->bytes);
    for (size_t i = 0; i < n; i++) {
        float v = next_value();
        if (w == 4) {
            memcpy(t->data + 4 * i, &v, 4);
        } else {
            uint16_t h = strcmp(dtype, "F16") ? gguf_f32_to_bf16(v) : gguf_f32_to_f16(v);
            memcpy(t->data + 2 * i, &h, 2);
        }
    }
}

static int64_t cfg_int(const json_value *cfg, const json_value *text, const char *key, int64_t dflt)
{
    int64_t v;
    if ((text && json_int(json_get(text, key), &v)) || json_int(json_get(cfg, key), &v)) {
        if (v < 0 || v > (1 << 20))
            die("config.json: a dimension out of range");
        return v;
    }
    if (dflt < 0) {
        fprintf(stderr, "mklora: config.json: no %s\n", key);
        exit(1);
    }
    return dflt;
}

static long parse_long(const char *s, long lo, long hi, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "mklora: %s: expected an integer in [%ld, %ld], got '%s'\n", what, lo, hi, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mklora SRC OUT [--rank R] [--alpha A] [--dtype F32|F16|BF16] "
                        "[--targets LIST] [--experts] [--seed S]\n");
        return 2;
    }
    const char *src = argv[1], *out = argv[2], *targets = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";
    long rank = 8, alpha = 16, seed = 1;
    bool experts = false;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--experts")) {
            experts = true;
            continue;
        }
        if (!v)
            die("an option lacks its value");
        i++;
        if (!strcmp(a, "--rank"))
            rank = parse_long(v, 1, 4096, "--rank");
        else if (!strcmp(a, "--alpha"))
            alpha = parse_long(v, 1, 1 << 20, "--alpha");
        else if (!strcmp(a, "--seed"))
            seed = parse_long(v, 1, 1L << 30, "--seed");
        else if (!strcmp(a, "--targets"))
            targets = v;
        else if (!strcmp(a, "--dtype")) {
            if (strcmp(v, "F32") && strcmp(v, "F16") && strcmp(v, "BF16"))
                die("--dtype: F32, F16 or BF16");
            strcpy(dtype, v);
        } else {
            fprintf(stderr, "mklora: unknown option %s\n", a);
            return 2;
        }
    }
    rng = 0x9e3779b97f4a7c15ull * (uint64_t)seed;

    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", src);
    gguf_error err = { .code = 0 };
    json_value *cfg = json_load_file(path, &err);
    if (!cfg) {
        fprintf(stderr, "mklora: %s: %s\n", path, err.msg);
        return 1;
    }
    const json_value *text = json_get(cfg, "text_config");
    const int64_t d = cfg_int(cfg, text, "hidden_size", -1), L = cfg_int(cfg, text, "num_hidden_layers", -1);
    const int64_t h = cfg_int(cfg, text, "num_attention_heads", -1);
    const int64_t kv = cfg_int(cfg, text, "num_key_value_heads", h);
    const int64_t hd = cfg_int(cfg, text, "head_dim", h ? d / h : 0);
    const int64_t ff = experts ? cfg_int(cfg, text, "moe_intermediate_size", -1)
                               : cfg_int(cfg, text, "intermediate_size", -1);
    const int64_t n_exp = experts ? cfg_int(cfg, text, "num_experts", -1) : 1;
    if (!d || !L || !h || !hd || !ff || !n_exp)
        die("config.json: a zero dimension");

    static const char *const NAMES[7] = { "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj" };
    const int64_t rows[7] = { h * hd, kv * hd, kv * hd, d, ff, ff, d };
    const int64_t cols[7] = { d, d, d, h * hd, d, d, ff };
    bool on[7] = { false };
    char list[1024];
    if (strlen(targets) >= sizeof list)
        die("--targets too long");
    strcpy(list, targets);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int k = 0;
        while (k < 7 && strcmp(tok, NAMES[k]))
            k++;
        if (k == 7) {
            fprintf(stderr, "mklora: --targets: unknown module %s\n", tok);
            return 2;
        }
        on[k] = true;
    }
    for (int64_t l = 0; l < L; l++)
        for (int k = 0; k < 7; k++) {
            if (!on[k])
                continue;
            char pre[200];
            for (int64_t e = 0; e < (k >= 4 ? n_exp : 1); e++) {
                if (k < 4)
                    snprintf(pre, sizeof pre, "base_model.model.model.layers.%lld.self_attn.%s", (long long)l,
                             NAMES[k]);
                else if (experts)
                    snprintf(pre, sizeof pre, "base_model.model.model.layers.%lld.mlp.experts.%lld.%s",
                             (long long)l, (long long)e, NAMES[k]);
                else
                    snprintf(pre, sizeof pre, "base_model.model.model.layers.%lld.mlp.%s", (long long)l, NAMES[k]);
                add(pre, "A", rank, cols[k]);
                add(pre, "B", rows[k], rank);
            }
        }

    if (mkdir(out, 0755) && errno != EEXIST) {
        fprintf(stderr, "mklora: %s: %s\n", out, strerror(errno));
        return 1;
    }
    /* adapter_model.safetensors */
    size_t cap = 256 + n_t * 360, len = 0;
    char *hdr = xmalloc(cap);
    uint64_t off = 0;
    len += (size_t)snprintf(hdr, cap, "{");
    for (size_t i = 0; i < n_t; i++) {
        len += (size_t)snprintf(hdr + len, cap - len,
                                "\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld,%lld],\"data_offsets\":[%llu,%llu]},",
                                T[i].name, dtype, (long long)T[i].rows, (long long)T[i].cols,
                                (unsigned long long)off, (unsigned long long)(off + T[i].bytes));
        off += T[i].bytes;
    }
    len += (size_t)snprintf(hdr + len, cap - len, "\"__metadata__\":{\"format\":\"pt\"}}");
    while (len % 8)
        hdr[len++] = ' ';
    snprintf(path, sizeof path, "%s/adapter_model.safetensors", out);
    FILE *fp = fopen(path, "wb");
    if (!fp)
        die("cannot create adapter_model.safetensors");
    uint64_t hl = len;
    fwrite(&hl, 8, 1, fp);
    fwrite(hdr, 1, len, fp);
    for (size_t i = 0; i < n_t; i++)
        fwrite(T[i].data, 1, T[i].bytes, fp);
    if (ferror(fp) | fclose(fp))
        die("write error");
    free(hdr);

    /* adapter_config.json */
    snprintf(path, sizeof path, "%s/adapter_config.json", out);
    fp = fopen(path, "w");
    if (!fp)
        die("cannot create adapter_config.json");
    const char *base = strrchr(src, '/');
    base = base && base[1] ? base + 1 : src;
    fprintf(fp, "{\n  \"peft_type\": \"LORA\",\n  \"r\": %ld,\n  \"lora_alpha\": %ld,\n  \"target_modules\": [", rank,
            alpha);
    bool first = true;
    for (int k = 0; k < 7; k++)
        if (on[k]) {
            fprintf(fp, "%s\n    \"%s\"", first ? "" : ",", NAMES[k]);
            first = false;
        }
    fprintf(fp, "\n  ],\n  \"lora_dropout\": 0.0,\n  \"bias\": \"none\",\n  \"task_type\": \"CAUSAL_LM\",\n"
                "  \"base_model_name_or_path\": \"%s\",\n  \"fan_in_fan_out\": false,\n  \"use_rslora\": false\n}\n",
            base);
    if (ferror(fp) | fclose(fp))
        die("write error");
    for (size_t i = 0; i < n_t; i++)
        free(T[i].data);
    free(T);
    json_free(cfg);
    return 0;
}
