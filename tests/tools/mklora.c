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
 *
 * --match LIST instead takes the pairs from SRC/model.safetensors: one for
 * every 2-D NAME.weight of its header (in header order) with ".M." in NAME
 * for an M of the comma-separated LIST (linear_attn.in_proj_qkv,
 * shared_expert.gate_proj, mlp.router, ...), shaped as that tensor: for
 * families whose modules are not the seven above (Qwen 3.5's linear
 * attention, gpt-oss's router).
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

/* --match: the pairs of SRC/model.safetensors's 2-D tensors NAME.weight
 * with ".M." in NAME for an M of list. */
static void match_pairs(const char *src, const char *list, long rank)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors", src);
    FILE *f = fopen(path, "rb");
    uint64_t hl = 0;
    if (!f || fread(&hl, 8, 1, f) != 1 || hl > (64u << 20))
        die("--match: cannot read model.safetensors's header");
    char *h = xmalloc(hl + 1);
    if (fread(h, 1, hl, f) != hl)
        die("--match: model.safetensors: short header");
    fclose(f);
    gguf_error err = { .code = 0 };
    json_value *j = json_parse(h, hl, &err);
    if (!j || j->type != JSON_OBJECT)
        die("--match: model.safetensors: bad header");
    char ml[1024];
    if (strlen(list) >= sizeof ml)
        die("--match too long");
    for (size_t i = 0; i < j->n; i++) {
        const char *name = j->keys[i];
        const json_value *shape = json_get(j->items[i], "shape");
        size_t nl = strlen(name);
        int64_t o, in;
        if (!shape || shape->type != JSON_ARRAY || shape->n != 2 || nl < 8 || nl > 200 ||
            strcmp(name + nl - 7, ".weight") || !json_int(shape->items[0], &o) ||
            !json_int(shape->items[1], &in))
            continue;
        strcpy(ml, list);
        bool hit = false;
        for (char *tok = strtok(ml, ","); tok && !hit; tok = strtok(NULL, ",")) {
            char pat[300];
            snprintf(pat, sizeof pat, ".%s.", tok);
            char nm[256];
            snprintf(nm, sizeof nm, "%.*s.", (int)(nl - 7), name);
            hit = strstr(nm, pat) != NULL;
        }
        if (!hit)
            continue;
        char pre[256];
        snprintf(pre, sizeof pre, "base_model.model.%.*s", (int)(nl - 7), name);
        add(pre, "A", rank, in);
        add(pre, "B", o, rank);
    }
    json_free(j);
    free(h);
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
                        "[--targets LIST | --match LIST] [--experts] [--seed S]\n");
        return 2;
    }
    const char *src = argv[1], *out = argv[2], *targets = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";
    const char *match = NULL;
    long rank = 8, alpha = 16, seed = 1;
    bool experts = false;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--match") && v) {
            match = v;
            i++;
            continue;
        }
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
    if (match) {
        match_pairs(src, match, rank);
        targets = "q_proj";  /* parsed, then cleared */
    }
    const json_value *text = json_get(cfg, "text_config");
    const int64_t d = cfg_int(cfg, text, "hidden_size", -1), L = cfg_int(cfg, text, "num_hidden_layers", -1);
    const int64_t h = cfg_int(cfg, text, "num_attention_heads", -1);
    const int64_t kv = cfg_int(cfg, text, "num_key_value_heads", h);
    const int64_t hd = cfg_int(cfg, text, "head_dim", h ? d / h : 0);
    const int64_t ff = experts ? cfg_int(cfg, text, "moe_intermediate_size", -1)
                               : cfg_int(cfg, text, "intermediate_size", match ? 1 : -1);
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
    if (match)
        memset(on, 0, sizeof on);
    for (int64_t l = 0; l < (match ? 0 : L); l++)
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
    if (match) {
        char ml[1024];
        snprintf(ml, sizeof ml, "%s", match);
        for (char *tok = strtok(ml, ","); tok; tok = strtok(NULL, ",")) {
            fprintf(fp, "%s\n    \"%s\"", first ? "" : ",", tok);
            first = false;
        }
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
