/*
 * lora.c — PEFT LoRA adapters (see lora.h).
 */
#include "lora.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "arch.h"
#include "hf.h"
#include "safetensors.h"

#define CONFIG "adapter_config.json"
#define WEIGHTS "adapter_model.safetensors"

static bool exists(const char *dir, const char *file)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, file);
    return stat(p, &st) == 0;
}

bool lora_detect(const char *dir)
{
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
           (exists(dir, CONFIG) || exists(dir, WEIGHTS) || exists(dir, "adapter_model.bin"));
}

/* ------------------------------------------------------------------------
 * adapter_config.json
 * ------------------------------------------------------------------------ */

static bool truthy(const json_value *v)
{
    return v && ((v->type == JSON_BOOL && v->b) || (v->type == JSON_NUMBER && v->num != 0));
}

static bool empty(const json_value *v)
{
    return !v || v->type == JSON_NULL ||
           ((v->type == JSON_ARRAY || v->type == JSON_OBJECT) && v->n == 0) ||
           (v->type == JSON_STRING && v->len == 0);
}

int lora_config_read(const json_value *cfg, lora_config *c, gguf_error *err)
{
    memset(c, 0, sizeof *c);
    if (!cfg || cfg->type != JSON_OBJECT)
        return gguf_error_set(err, "not a JSON object");
    const json_value *v = json_get(cfg, "peft_type");
    if (v && v->type != JSON_NULL && (!json_str(v) || strcmp(json_str(v), "LORA")))
        return gguf_error_set(err, "line %zu: peft_type is %s%s%s: only LoRA adapters (\"LORA\") "
                              "convert", v->line, json_str(v) ? "'" : "",
                              json_str(v) ? json_str(v) : "not a string", json_str(v) ? "'" : "");
    v = json_get(cfg, "lora_alpha");
    double a;
    if (!v)
        return gguf_error_set(err, "no lora_alpha");
    if (!json_num(v, &a) || !isfinite(a) || fabs(a) > 3.4028234663852886e38)
        return gguf_error_set(err, "line %zu: lora_alpha is not a finite number", v->line);
    c->alpha = (float)a;
    if (truthy(v = json_get(cfg, "use_dora")))
        return gguf_error_set(err, "line %zu: use_dora is set: DoRA adapters (a magnitude "
                              "vector per module) are not supported", v->line);
    if (truthy(v = json_get(cfg, "use_rslora")))
        return gguf_error_set(err, "line %zu: use_rslora is set: rank-stabilized LoRA scales by "
                              "alpha/sqrt(rank), and a GGUF adapter holds one alpha applied as "
                              "alpha/rank (llama.cpp e21cdc11's converter ignores the option "
                              "and writes an adapter of the wrong scale)", v->line);
    if (!empty(v = json_get(cfg, "alpha_pattern")))
        return gguf_error_set(err, "line %zu: alpha_pattern is set: a GGUF adapter holds one "
                              "alpha for every module", v->line);
    v = json_get(cfg, "bias");
    if (v && v->type != JSON_NULL && (!json_str(v) || strcmp(json_str(v), "none")))
        return gguf_error_set(err, "line %zu: bias is %s%s%s: adapters that train biases are not "
                              "supported (only \"none\")", v->line, json_str(v) ? "'" : "",
                              json_str(v) ? json_str(v) : "not a string", json_str(v) ? "'" : "");
    if (!empty(v = json_get(cfg, "modules_to_save")))
        return gguf_error_set(err, "line %zu: modules_to_save is set: modules saved whole "
                              "(new embeddings, a new head) are not supported", v->line);
    const json_value *tok = json_get(cfg, "alora_invocation_tokens");
    if (!empty(tok)) {
        if (tok->type != JSON_ARRAY)
            return gguf_error_set(err, "line %zu: alora_invocation_tokens is not an array",
                                  tok->line);
        if (!(c->alora_tokens = malloc(tok->n * sizeof *c->alora_tokens)))
            return gguf_error_set(err, "out of memory");
        for (size_t i = 0; i < tok->n; i++) {
            int64_t id;
            if (!json_int(tok->items[i], &id) || id < 0 || id > UINT32_MAX) {
                lora_config_free(c);
                return gguf_error_set(err, "line %zu: alora_invocation_tokens[%zu] is not a "
                                      "token id (0 to 4294967295)", tok->items[i]->line, i);
            }
            c->alora_tokens[i] = (uint32_t)id;
        }
        c->n_alora = tok->n;
    } else if (!empty(v = json_get(cfg, "invocation_string"))) {
        return gguf_error_set(err, "line %zu: invocation_string without "
                              "alora_invocation_tokens: tokenize it with the base model's "
                              "tokenizer and give the ids as alora_invocation_tokens", v->line);
    }
    return 0;
}

void lora_config_free(lora_config *c)
{
    free(c->alora_tokens);
    memset(c, 0, sizeof *c);
}

/* ------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------ */

/* Every occurrence of from in s replaced by to (Python's str.replace). */
static int replace_all(char *s, size_t cap, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to);
    char *p = s;
    while ((p = strstr(p, from))) {
        size_t rest = strlen(p + fl);
        if ((size_t)(p - s) + tl + rest + 1 > cap)
            return -1;
        memmove(p + tl, p + fl, rest + 1);
        memcpy(p, to, tl);
        p += tl;
    }
    return 0;
}

int lora_base_name(const char *peft, char *out, size_t cap, enum lora_kind *kind)
{
    if (strlen(peft) + 1 > cap)
        return -1;
    strcpy(out, peft);
    static const char *const from[] = { "base_model.model.", ".lora_A.weight", ".lora_B.weight",
                                        ".lora_embedding_A", ".lora_embedding_B" };
    static const char *const to[] = { "", ".weight", ".weight", ".weight", ".weight" };
    for (size_t i = 0; i < sizeof from / sizeof *from; i++)
        if (replace_all(out, cap, from[i], to[i]))
            return -1;
    if (strstr(peft, ".lora_A.weight") || strstr(peft, ".lora_embedding_A"))
        *kind = LORA_A;
    else if (strstr(peft, ".lora_B.weight") || strstr(peft, ".lora_embedding_B"))
        *kind = LORA_B;
    else if (strstr(peft, ".base_layer.weight"))
        *kind = LORA_SKIP;
    else if (strstr(peft, "_layernorm") || strstr(peft, ".norm"))
        *kind = LORA_NORM;
    else
        *kind = LORA_OTHER;
    return 0;
}

static bool is_lower_ascii(char c) { return c >= 'a' && c <= 'z'; }
static bool is_upper_ascii(char c) { return c >= 'A' && c <= 'Z'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* re.match(r'^(v\d+(?:\.\d+)*|\d.*)$', w) */
static bool version_or_number(const char *w, size_t n)
{
    if (n && is_digit(w[0]))
        return true;
    if (n < 2 || w[0] != 'v' || !is_digit(w[1]))
        return false;
    size_t i = 1;
    for (;;) {
        while (i < n && is_digit(w[i]))
            i++;
        if (i == n)
            return true;
        if (w[i] != '.' || i + 1 >= n || !is_digit(w[i + 1]))
            return false;
        i++;
    }
}

char *lora_title(const char *dir)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    const char *base = dir;
    for (size_t i = 0; i + 1 < len; i++)
        if (dir[i] == '/')
            base = dir + i + 1;
    size_t n = len - (size_t)(base - dir);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && (base[i] == '-' || base[i] == ' ' || (base[i] >= '\t' && base[i] <= '\r')))
            i++;
        size_t s = i;
        while (i < n && !(base[i] == '-' || base[i] == ' ' || (base[i] >= '\t' && base[i] <= '\r')))
            i++;
        if (i == s)
            break;
        bool lower = false, upper = false;
        for (size_t k = s; k < i; k++) {
            lower |= is_lower_ascii(base[k]);
            upper |= is_upper_ascii(base[k]);
        }
        bool title = lower && !upper && !version_or_number(base + s, i - s);
        if (o)
            out[o++] = ' ';
        for (size_t k = s; k < i; k++) {
            char c = base[k];
            bool after_letter = k > s && (is_lower_ascii(base[k - 1]) || is_upper_ascii(base[k - 1]));
            out[o++] = title && !after_letter && is_lower_ascii(c) ? (char)(c - 'a' + 'A') : c;
        }
    }
    out[o] = 0;
    return out;
}

/* ------------------------------------------------------------------------
 * The base model: its family, head counts and tensor shapes
 * ------------------------------------------------------------------------ */

typedef struct base_tensor {
    char   *name;
    int     n_dims;
    int64_t ne[4];
} base_tensor;

typedef struct base_model {
    const gguf_arch *arch;
    uint32_t         n_head, n_head_kv;
    base_tensor     *t;
    size_t           n;
    bool             shapes;  /* t lists the base's tensors (else: config.json alone) */
    int              n_blocks, n_expert; /* config.json's, when !shapes */
    json_value      *config; /* a folder's config.json (Qwen 3.5's linear heads) */
} base_model;

static void base_free(base_model *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->t[i].name);
    free(b->t);
    json_free(b->config);
    memset(b, 0, sizeof *b);
}

static int base_add(base_model *b, const char *name, int n_dims, const int64_t *ne)
{
    base_tensor *t = realloc(b->t, (b->n + 1) * sizeof *t);
    if (!t)
        return -1;
    b->t = t;
    t = &b->t[b->n];
    if (!(t->name = strdup(name)))
        return -1;
    t->n_dims = n_dims;
    for (int d = 0; d < 4; d++)
        t->ne[d] = d < n_dims ? ne[d] : 1;
    b->n++;
    return 0;
}

static const base_tensor *base_find(const base_model *b, const char *name)
{
    for (size_t i = 0; i < b->n; i++)
        if (!strcmp(b->t[i].name, name))
            return &b->t[i];
    return NULL;
}

/* Whether a Hugging Face folder has weights (else only its config.json is
 * read). */
static bool has_weights(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        found = (n > 12 && !strcmp(e->d_name + n - 12, ".safetensors")) ||
                (!strncmp(e->d_name, "pytorch_model", 13) && n > 4 && !strcmp(e->d_name + n - 4, ".bin")) ||
                !strcmp(e->d_name, "consolidated.00.pth");
    }
    closedir(d);
    return found;
}

static int base_from_gguf(const char *path, base_model *b, gguf_error *err)
{
    gguf_file *f = gguf_open(path, 0, err);
    if (!f)
        return -1;
    int rc = -1;
    gguf_hparams *hp = NULL;
    gguf_str arch, type;
    if (gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &arch, err))
        goto done;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(arch.len < 63 ? arch.len : 63), arch.ptr);
    if (!(b->arch = gguf_arch_find(name)) || !gguf_recipe_of(b->arch)) {
        gguf_error_set(err, "architecture '%s' has no conversion recipe", name);
        goto done;
    }
    const gguf_kv *kv = gguf_lookup_kv(f, "general.type");
    if (kv && gguf_kv_str(kv, &type) && !gguf_str_eq(type, "model")) {
        gguf_error_set(err, "general.type is '%.*s': the base must be a model", (int)type.len,
                       type.ptr);
        goto done;
    }
    if (gguf_hparams_read(f, &hp, err))
        goto done;
    double v;
    if (gguf_hparams_get(hp, GGUF_HP_HEAD_COUNT, &v))
        b->n_head = (uint32_t)v;
    if (gguf_hparams_get(hp, GGUF_HP_HEAD_COUNT_KV, &v))
        b->n_head_kv = (uint32_t)v;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (base_add(b, t->name, (int)t->n_dims, t->ne)) {
            gguf_error_set(err, "out of memory");
            goto done;
        }
    }
    rc = 0;
done:
    gguf_hparams_free(hp);
    gguf_close(f);
    return rc;
}

/* A config.json as the weights' stand-in (convert_lora_to_gguf.py needs
 * no more): the family, head counts, block and expert counts. */
static int base_from_config(const char *dir, base_model *b, gguf_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_value *cfg = json_load_file(path, err);
    if (!cfg) {
        gguf_error_prefix(err, "config.json: ");
        return -1;
    }
    int rc = -1;
    const json_value *text = json_get(cfg, "text_config"), *archs = json_get(text, "architectures");
    if (!archs || archs->type != JSON_ARRAY)
        archs = json_get(cfg, "architectures");
    const char *hf = archs && archs->type == JSON_ARRAY && archs->n ? json_str(archs->items[0]) : NULL;
    if (!hf || !(b->arch = arch_find(hf))) {
        gguf_error_set(err, "config.json: architectures[0] is %s%s%s (supported: %s)", hf ? "'" : "",
                       hf ? hf : "missing", hf ? "'" : "", arch_supported_list());
        goto done;
    }
    static const struct {
        const char *key;
        int64_t     lo, hi;
    } keys[] = { { "num_attention_heads", 1, 65536 }, { "num_key_value_heads", 1, 65536 },
                 { "num_hidden_layers", 1, 100000 }, { "num_local_experts", 0, 65536 },
                 { "num_experts", 0, 65536 } };
    int64_t v[5] = { 0 };
    for (int i = 0; i < 5; i++) {
        const json_value *x = json_get(text, keys[i].key);
        if (!x)
            x = json_get(cfg, keys[i].key);
        if (x && x->type != JSON_NULL &&
            json_count(x, "config.json", keys[i].key, keys[i].lo, keys[i].hi, &v[i], err))
            goto done;
    }
    b->n_head = (uint32_t)v[0];
    b->n_head_kv = (uint32_t)(v[1] ? v[1] : v[0]);
    b->n_blocks = (int)v[2];
    b->n_expert = (int)(v[3] ? v[3] : v[4]);
    rc = 0;
done:
    json_free(cfg);
    return rc;
}

static int base_open(const char *path, base_model *b, gguf_error *err)
{
    memset(b, 0, sizeof *b);
    struct stat st;
    if (stat(path, &st) != 0)
        return gguf_error_set(err, "not found");
    b->shapes = true;
    if (!S_ISDIR(st.st_mode))
        return base_from_gguf(path, b, err);
    char cp[4096];
    snprintf(cp, sizeof cp, "%s/config.json", path);
    if (stat(cp, &st) == 0 && !(b->config = json_load_file(cp, err))) {
        gguf_error_prefix(err, "config.json: ");
        return -1;
    }
    if (!has_weights(path)) {
        b->shapes = false;
        return base_from_config(path, b, err);
    }
    src_model m;
    if (hf_open(path, false, false, &m, err))
        return -1;
    b->arch = m.arch;
    b->n_head = m.n_head;
    b->n_head_kv = m.n_head_kv;
    int rc = 0;
    for (int i = 0; i < m.n_tensors && !rc; i++)
        if (base_add(b, m.tensors[i].name, m.tensors[i].n_dims, m.tensors[i].ne))
            rc = gguf_error_set(err, "out of memory");
    src_model_free(&m);
    return rc;
}

/* ------------------------------------------------------------------------
 * The adapter
 * ------------------------------------------------------------------------ */

typedef struct pair {
    char            *base;   /* the base tensor's checkpoint name */
    const st_tensor *a, *b;  /* lora_A, lora_B; for a norm: a alone */
    bool             norm;
} pair;

typedef struct lora_state {
    st_file     st;
    lora_config cfg;
    pair       *pairs;
    size_t      n_pairs;
    /* name → pair index + 1, open addressing */
    size_t     *slots;
    size_t      n_slots;
} lora_state;

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

static pair *pair_of(lora_state *s, const char *base, gguf_error *err)
{
    size_t i = (size_t)(hash(base) & (s->n_slots - 1));
    while (s->slots[i]) {
        pair *p = &s->pairs[s->slots[i] - 1];
        if (!strcmp(p->base, base))
            return p;
        i = (i + 1) & (s->n_slots - 1);
    }
    pair *p = &s->pairs[s->n_pairs];
    memset(p, 0, sizeof *p);
    if (!(p->base = strdup(base))) {
        gguf_error_set(err, "out of memory");
        return NULL;
    }
    s->slots[i] = ++s->n_pairs;
    return p;
}

static void lora_close(src_model *m)
{
    lora_state *s = m->reader;
    if (!s)
        return;
    for (size_t i = 0; i < s->n_pairs; i++)
        free(s->pairs[i].base);
    free(s->pairs);
    free(s->slots);
    lora_config_free(&s->cfg);
    st_close(&s->st);
    free(s);
    m->reader = NULL;
}

static int lora_verify(const src_model *m, gguf_error *err)
{
    const lora_state *s = m->reader;
    return st_verify(&s->st, err);
}

/* convert_lora_to_gguf.py's set_gguf_parameters: the alpha, and an aLoRA's
 * invocation tokens. */
static int lora_write_metadata(src_model *m, gguf_writer *w, uint32_t file_type, gguf_error *err)
{
    (void)file_type;
    const lora_state *s = m->reader;
    if (gguf_writer_set_f32(w, "adapter.lora.alpha", s->cfg.alpha) ||
        (s->cfg.n_alora && gguf_writer_set_array(w, "adapter.alora.invocation_tokens",
                                                 GGUF_VT_U32, s->cfg.alora_tokens,
                                                 s->cfg.n_alora)))
        return gguf_error_set(err, "out of memory");
    return 0;
}

/* Splits the safetensors' tensors into pairs by base name, in the order of
 * each pair's first tensor. */
static int collect_pairs(lora_state *s, gguf_error *err)
{
    size_t n = s->st.n;
    s->n_slots = 16;
    while (s->n_slots < 2 * n + 2)
        s->n_slots *= 2;
    if (!(s->pairs = calloc(n ? n : 1, sizeof *s->pairs)) ||
        !(s->slots = calloc(s->n_slots, sizeof *s->slots)))
        return gguf_error_set(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const st_tensor *t = &s->st.tensors[i];
        char base[1024];
        enum lora_kind kind;
        if (lora_base_name(t->name, base, sizeof base, &kind))
            return gguf_error_set(err, WEIGHTS ": tensor name '%.64s...' is too long", t->name);
        if (kind == LORA_SKIP)
            continue;
        if (kind == LORA_OTHER) {
            const char *why = strstr(t->name, "lora_magnitude_vector")
                ? " (a DoRA magnitude vector: DoRA adapters are not supported)"
                : strstr(t->name, ".embed_tokens.weight") || strstr(t->name, ".lm_head.weight")
                ? " (embeddings saved whole, as when tokens were added in fine-tuning: not "
                  "supported)"
                : strstr(t->name, ".bias") ? " (a trained bias: not supported)" : "";
            return gguf_error_set(err, WEIGHTS ": tensor '%s' is not a lora_A or lora_B "
                                  "tensor%s", t->name, why);
        }
        pair *p = pair_of(s, base, err);
        if (!p)
            return -1;
        if (kind == LORA_NORM) {
            if (p->a)
                return gguf_error_set(err, WEIGHTS ": tensor '%s' appears twice", base);
            p->a = t;
            p->norm = true;
            continue;
        }
        const st_tensor **slot = kind == LORA_A ? &p->a : &p->b;
        if (*slot || p->norm)
            return gguf_error_set(err, WEIGHTS ": tensor '%s' appears twice", t->name);
        *slot = t;
    }
    for (size_t i = 0; i < s->n_pairs; i++) {
        const pair *p = &s->pairs[i];
        if (p->norm)
            continue;
        if (!p->a || !p->b)
            return gguf_error_set(err, WEIGHTS ": '%s' has a lora_%c but no lora_%c tensor",
                                  p->base, p->a ? 'A' : 'B', p->a ? 'B' : 'A');
        const st_tensor *a = p->a, *b = p->b;
        if (a->n_dims != 2 || b->n_dims != 2)
            return gguf_error_set(err, WEIGHTS ": '%s': lora_A and lora_B must have 2 dimensions "
                                  "(they have %d and %d)", p->base, a->n_dims, b->n_dims);
        if (a->shape[0] != b->shape[1])
            return gguf_error_set(err, WEIGHTS ": '%s': rank mismatch: lora_A has %" PRId64
                                  " rows, lora_B %" PRId64 " columns", p->base, a->shape[0],
                                  b->shape[1]);
        if (a->shape[0] < 1 || a->shape[1] < 1 || b->shape[0] < 1)
            return gguf_error_set(err, WEIGHTS ": '%s': empty lora_A or lora_B", p->base);
        if (src_dtype_of(a->dtype) < 0 || src_dtype_of(b->dtype) < 0)
            return gguf_error_set(err, WEIGHTS ": '%s': unsupported dtype %s (F32, F16, BF16)",
                                  p->base, src_dtype_of(a->dtype) < 0 ? a->dtype : b->dtype);
    }
    return 0;
}

/* One base tensor's lora_a and lora_b (n_expert > 0: stacked from the
 * pairs ps[0..n_expert)). */
static int add_pair(src_model *m, const char *name, const pair *const *ps, int n_expert,
                    uint8_t permute, gguf_error *err)
{
    const pair *p = ps[0];
    const int64_t rank = p->a->shape[0], in = p->a->shape[1], out = p->b->shape[0];
    for (int half = 0; half < 2; half++) {
        const st_tensor *st = half ? p->b : p->a;
        char full[300];
        snprintf(full, sizeof full, "%s.lora_%c", name, half ? 'b' : 'a');
        int64_t ne[3] = { half ? rank : in, half ? out : rank, n_expert };
        src_tensor *t = src_add_tensor(m, full, src_dtype_of(st->dtype), n_expert ? 3 : 2, ne,
                                       st->data);
        if (!t)
            return gguf_error_set(err, "out of memory");
        t->from = (src_origin){ WEIGHTS, st->name };
        t->mapped = st->mapped;
        t->permute = half ? permute : 0;
        if (!n_expert)
            continue;
        if (!(t->parts = malloc((size_t)n_expert * sizeof *t->parts)) ||
            !(t->part_from = malloc((size_t)n_expert * sizeof *t->part_from)))
            return gguf_error_set(err, "out of memory");
        t->n_parts = n_expert;
        t->split_rows = true;
        for (int e = 0; e < n_expert; e++) {
            const st_tensor *pe = half ? ps[e]->b : ps[e]->a;
            if (strcmp(pe->dtype, st->dtype) || pe->shape[0] != st->shape[0] ||
                pe->shape[1] != st->shape[1])
                return gguf_error_set(err, WEIGHTS ": tensor '%s': dtype or shape differs from "
                                      "expert 0's (%s)", pe->name, st->name);
            t->parts[e] = pe->data;
            t->part_from[e] = (src_origin){ WEIGHTS, pe->name };
            t->mapped &= pe->mapped;
        }
    }
    return 0;
}

/* The token embeddings' pair (lora_embedding_A [rank, vocab], _B [embd,
 * rank]): lora_a is A transposed ([rank, vocab] in GGUF order: vocab rows
 * of rank), lora_b is B, as convert_lora_to_gguf.py flips them for
 * llm_build_inp_embd. */
static int embd_pair(src_model *m, const pair *p, const base_model *b, const gguf_recipe *rc,
                     gguf_error *err)
{
    const st_tensor *a = p->a, *bt = p->b;
    const int64_t rank = a->shape[0], vocab = a->shape[1], embd = bt->shape[0];
    if (gguf_recipe_has(rc, GGUF_FACT_TRIM_EMBD))
        return gguf_error_set(err, WEIGHTS ": '%s': adapters of the token embeddings of %s "
                              "models are not supported (the converter trims the embeddings)",
                              p->base, gguf_arch_name(m->arch));
    const base_tensor *t = base_find(b, GGUF_T_TOKEN_EMBD);
    if (b->shapes && (!t || t->n_dims != 2 || t->ne[0] != embd || t->ne[1] != vocab))
        return gguf_error_set(err, WEIGHTS ": '%s': lora_A [%" PRId64 ", %" PRId64 "] and "
                              "lora_B [%" PRId64 ", %" PRId64 "] do not fit the base model's "
                              "token embeddings (an adapter of another model?)", p->base,
                              rank, vocab, embd, bt->shape[1]);
    const size_t es = (size_t)st_dtype_size(a->dtype);
    uint8_t *tr = malloc((size_t)(rank * vocab) * es);
    if (!tr)
        return gguf_error_set(err, "out of memory");
    for (int64_t v = 0; v < vocab; v++)
        for (int64_t k = 0; k < rank; k++)
            memcpy(tr + (size_t)(v * rank + k) * es, a->data + (size_t)(k * vocab + v) * es, es);
    const int64_t ne_a[2] = { rank, vocab }, ne_b[2] = { rank, embd };
    src_tensor *ta = src_add_tensor(m, GGUF_T_TOKEN_EMBD ".lora_a", src_dtype_of(a->dtype), 2,
                                    ne_a, tr);
    if (!ta) {
        free(tr);
        return gguf_error_set(err, "out of memory");
    }
    ta->owned = tr;
    ta->from = (src_origin){ WEIGHTS, a->name };
    src_tensor *tb = src_add_tensor(m, GGUF_T_TOKEN_EMBD ".lora_b", src_dtype_of(bt->dtype), 2,
                                    ne_b, bt->data);
    if (!tb)
        return gguf_error_set(err, "out of memory");
    tb->from = (src_origin){ WEIGHTS, bt->name };
    tb->mapped = bt->mapped;
    return 0;
}

#define MAX_EXPERT_ROWS 4

/* The expert rows of a family and, per block, which pairs have arrived. */
typedef struct expert_sets {
    const gguf_arch_tensor *rows[MAX_EXPERT_ROWS];
    int                     n_rows, n_expert, n_blocks;
    const pair            **got;   /* [block][row][expert] */
    int                    *count; /* [block] */
} expert_sets;

static int check_shape(const base_model *b, const char *name, const pair *p, int expert,
                       const base_tensor **bt, gguf_error *err)
{
    *bt = base_find(b, name);
    if (!b->shapes) { /* config.json alone: the pair's own shapes */
        if (expert >= 0 && expert >= b->n_expert)
            return gguf_error_set(err, WEIGHTS ": '%s': expert %d, config.json has %d", p->base,
                                  expert, b->n_expert);
        return 0;
    }
    if (!*bt)
        return gguf_error_set(err, WEIGHTS ": '%s': the base model has no tensor '%s'", p->base,
                              name);
    const base_tensor *t = *bt;
    int dims = expert >= 0 ? 3 : 2;
    if (t->n_dims != dims || t->ne[0] != p->a->shape[1] || t->ne[1] != p->b->shape[0] ||
        (expert >= 0 && expert >= t->ne[2]))
        return gguf_error_set(err, WEIGHTS ": '%s': lora_A [%" PRId64 ", %" PRId64 "] and lora_B "
                              "[%" PRId64 ", %" PRId64 "] do not fit the base model's '%s' "
                              "[%" PRId64 ", %" PRId64 ", %" PRId64 "]%s (an adapter of another "
                              "model?)", p->base, p->a->shape[0], p->a->shape[1], p->b->shape[0],
                              p->b->shape[1], name, t->ne[0], t->ne[1], t->ne[2],
                              expert >= t->ne[2] ? ": no such expert" : "");
    return 0;
}

/* Qwen 3.5 (qwen35, qwen35moe): _LinearAttentionVReorderBase reorders the
 * linear attention's value heads. Along output rows (in_proj_qkv's v rows,
 * in_proj_z, in_proj_a, in_proj_b) lora_B's rows follow (hf_lora_linear_attn);
 * along out_proj's input columns LoraTorchTensor cannot follow (e21cdc11's
 * convert_lora_to_gguf.py fails, NotImplementedError in reshape), so that
 * pair is refused, as are the row-reordered pairs when the base is a GGUF
 * (the head counts are config.json's). */
static int delta_net_pair(const src_model *m, const base_model *b, const pair *p,
                          const gguf_arch_tensor *row, const char *name, gguf_error *err)
{
    const int role = gguf_arch_tensor_role(row);
    if (role == GGUF_ROLE_SSM_OUT)
        return gguf_error_set(err, WEIGHTS ": '%s': adapters of %s's linear-attention output "
                              "projection (linear_attn.out_proj, %s) are not supported: the "
                              "converter reorders its input columns by value head, which a "
                              "LoRA pair's lora_A would have to follow (llama.cpp e21cdc11's "
                              "convert_lora_to_gguf.py fails on it)", p->base,
                              gguf_arch_name(m->arch), name);
    if (!b->config && (role == GGUF_ROLE_ATTN_QKV || role == GGUF_ROLE_ATTN_GATE ||
                       role == GGUF_ROLE_SSM_ALPHA || role == GGUF_ROLE_SSM_BETA))
        return gguf_error_set(err, WEIGHTS ": '%s': its lora_B rows are reordered by value "
                              "head as the base tensor's, from config.json's linear_* keys: "
                              "give --base the model's Hugging Face folder", p->base);
    return 0;
}

static int add_pairs(src_model *m, lora_state *s, const base_model *b, gguf_error *err)
{
    const gguf_arch *a = m->arch;
    const gguf_recipe *rc = gguf_recipe_of(a);
    expert_sets ex = { 0 };
    const gguf_arch_tensor *row;
    for (size_t i = 0; (row = gguf_arch_tensor_at(a, i)); i++)
        if (gguf_arch_tensor_dim(row, 2) != GGUF_DIM_1 && arch_per_expert(a, row) &&
            ex.n_rows < MAX_EXPERT_ROWS)
            ex.rows[ex.n_rows++] = row;
    int rcode = 0;
    /* mergekit's norms first, as get_tensors yields them while it gathers
     * the pairs; then the pairs */
    for (size_t pass = 0; pass < 2 * s->n_pairs && !rcode; pass++) {
        const pair *p = &s->pairs[pass % s->n_pairs];
        if (p->norm != (pass < s->n_pairs))
            continue;
        char name[256];
        uint8_t perm;
        int block, expert;
        int r = arch_map_name(a, p->base, name, sizeof name, &perm, &block, &expert, &row);
        if (r == 0) {
            if (!strcmp(p->base, "lm_head.weight"))
                rcode = gguf_error_set(err, WEIGHTS ": an adapter of lm_head, but the base model "
                                       "ties the output to the token embeddings (it has no "
                                       "lm_head)");
            continue; /* dropped, as the converter drops it */
        }
        if (r < 0) {
            rcode = gguf_error_set(err, WEIGHTS ": '%s' is no tensor of a %s model (a target "
                                   "module the base does not have)", p->base, gguf_arch_name(a));
            break;
        }
        if (p->norm) {
            const base_tensor *bt = base_find(b, name);
            if (p->a->n_dims != 1 ||
                (b->shapes && (!bt || bt->n_dims != 1 || bt->ne[0] != p->a->shape[0]))) {
                rcode = gguf_error_set(err, WEIGHTS ": tensor '%s' does not fit the base model's "
                                       "1-dimensional '%s'", p->a->name, name);
                break;
            }
            if (src_dtype_of(p->a->dtype) < 0) {
                rcode = gguf_error_set(err, WEIGHTS ": tensor '%s': unsupported dtype %s (F32, "
                                       "F16, BF16)", p->a->name, p->a->dtype);
                break;
            }
            src_tensor *t = src_add_tensor(m, name, src_dtype_of(p->a->dtype), 1, p->a->shape,
                                           p->a->data);
            if (!t) {
                rcode = gguf_error_set(err, "out of memory");
                break;
            }
            t->from = (src_origin){ WEIGHTS, p->a->name };
            t->mapped = p->a->mapped;
            t->add = rc->norm_offset;
            continue;
        }
        if (!strcmp(name, GGUF_T_TOKEN_EMBD)) {
            rcode = embd_pair(m, p, b, rc, err);
            continue;
        }
        const base_tensor *bt;
        if ((rcode = check_shape(b, name, p, expert, &bt, err)))
            break;
        if (expert < 0) {
            if (gguf_arch_has(a, GGUF_FEAT_DELTA_NET) && (rcode = delta_net_pair(m, b, p, row, name, err)))
                break;
            if (!(rcode = add_pair(m, name, &p, 0, perm, err)) &&
                gguf_arch_has(a, GGUF_FEAT_DELTA_NET) && b->config)
                rcode = hf_lora_linear_attn(b->config, &m->tensors[m->n_tensors - 1],
                                            gguf_arch_tensor_role(row), err);
            continue;
        }
        if (!ex.got) {
            ex.n_expert = bt ? (int)bt->ne[2] : b->n_expert;
            ex.n_blocks = b->n_blocks;
            for (size_t k = 0; k < b->n; k++)
                if (!strncmp(b->t[k].name, "blk.", 4))
                    ex.n_blocks = (int)(atoi(b->t[k].name + 4) + 1 > ex.n_blocks
                                        ? atoi(b->t[k].name + 4) + 1 : ex.n_blocks);
            if (!(ex.got = calloc((size_t)ex.n_blocks * (size_t)ex.n_rows * (size_t)ex.n_expert,
                                  sizeof *ex.got)) ||
                !(ex.count = calloc((size_t)ex.n_blocks, sizeof *ex.count))) {
                rcode = gguf_error_set(err, "out of memory");
                break;
            }
        }
        int rr = 0;
        while (rr < ex.n_rows && ex.rows[rr] != row)
            rr++;
        if (rr == ex.n_rows || block < 0 || block >= ex.n_blocks || expert >= ex.n_expert) {
            rcode = gguf_error_set(err, WEIGHTS ": '%s': block %d, expert %d is not in the base "
                                   "model", p->base, block, expert);
            break;
        }
        const pair **blk = ex.got + (size_t)block * (size_t)ex.n_rows * (size_t)ex.n_expert;
        blk[rr * ex.n_expert + expert] = p;
        if (++ex.count[block] < ex.n_rows * ex.n_expert)
            continue;
        /* the block's experts are all here: its stacked pairs, in the
         * family's row order */
        for (rr = 0; rr < ex.n_rows && !rcode; rr++) {
            snprintf(name, sizeof name, gguf_arch_tensor_name(ex.rows[rr]), block);
            rcode = add_pair(m, name, blk + rr * ex.n_expert, ex.n_expert, 0, err);
        }
    }
    for (int blk = 0; !rcode && ex.count && blk < ex.n_blocks; blk++)
        if (ex.count[blk] && ex.count[blk] < ex.n_rows * ex.n_expert)
            rcode = gguf_error_set(err, WEIGHTS ": block %d has adapters of %d of its %d expert "
                                   "projections (every expert's %d projections must be targeted, "
                                   "as the converter stacks them)", blk, ex.count[blk],
                                   ex.n_rows * ex.n_expert, ex.n_rows);
    free(ex.got);
    free(ex.count);
    return rcode;
}

static int open_adapter(const char *dir, const char *base, src_model *m, gguf_error *err)
{
    memset(m, 0, sizeof *m);
    m->path = dir;
    m->adapter = true;
    m->close = lora_close;
    m->verify = lora_verify;
    m->write_metadata = lora_write_metadata;
    lora_state *s = calloc(1, sizeof *s);
    if (!s)
        return gguf_error_set(err, "out of memory");
    m->reader = s;
    char path[4096];
    snprintf(path, sizeof path, "%s/" CONFIG, dir);
    struct stat st;
    if (stat(path, &st) != 0)
        return gguf_error_set(err, CONFIG ": not found (a PEFT adapter folder holds "
                              CONFIG " and " WEIGHTS ")");
    json_value *cfg = json_load_file(path, err);
    if (!cfg) {
        gguf_error_prefix(err, CONFIG ": ");
        return -1;
    }
    int rc = lora_config_read(cfg, &s->cfg, err);
    json_free(cfg);
    if (rc) {
        gguf_error_prefix(err, CONFIG ": ");
        return -1;
    }
    snprintf(path, sizeof path, "%s/" WEIGHTS, dir);
    if (stat(path, &st) != 0) {
        snprintf(path, sizeof path, "%s/adapter_model.bin", dir);
        if (stat(path, &st) == 0)
            return gguf_error_set(err, "adapter_model.bin: adapters saved by torch.save are not "
                                  "supported (save with safetensors)");
        return gguf_error_set(err, WEIGHTS ": not found");
    }
    if (st_open(path, &s->st, err)) {
        gguf_error_prefix(err, WEIGHTS ": ");
        return -1;
    }
    if (collect_pairs(s, err))
        return -1;
    base_model b;
    if (base_open(base, &b, err)) {
        gguf_error_prefix(err, "--base %s: ", base);
        base_free(&b);
        return -1;
    }
    m->arch = b.arch;
    m->n_head = b.n_head;
    m->n_head_kv = b.n_head_kv;
    rc = 0;
    /* gpt-oss: attention and the router convert as any family's; the
     * experts are fused 3-D MXFP4 parameters (GptOssModel repacks them), no
     * Linear module a pair can target: llama.cpp e21cdc11 fails on per-expert
     * or dense feed-forward names ("Can not map tensor") */
    for (size_t i = 0; !rc && gguf_recipe_has(gguf_recipe_of(b.arch), GGUF_FACT_MXFP4_EXPERTS) &&
                       i < s->n_pairs; i++)
        if (strstr(s->pairs[i].base, ".mlp.") && !strstr(s->pairs[i].base, ".mlp.router."))
            rc = gguf_error_set(err, WEIGHTS ": '%s': adapters of %s's feed-forward experts are "
                                "not supported: they are fused MXFP4 parameters (gate_up_proj_blocks, "
                                "down_proj_blocks) the converter repacks, not modules a LoRA pair "
                                "targets (llama.cpp e21cdc11's converter cannot map the name); "
                                "mlp.router converts", s->pairs[i].base, gguf_arch_name(b.arch));
    /* DeepSeek-V2/V3: kv_b_proj is split per head into attn_k_b (transposed)
     * and attn_v_b; LoraTorchTensor has no torch.split (llama.cpp e21cdc11's
     * converter fails, NotImplementedError), and llama.cpp's runner multiplies
     * attn_k_b and attn_v_b with no adapter, so no file could carry the pair */
    for (size_t i = 0; !rc && gguf_recipe_has(gguf_recipe_of(b.arch), GGUF_FACT_KV_B_SPLIT) &&
                       i < s->n_pairs; i++)
        if (strstr(s->pairs[i].base, ".self_attn.kv_b_proj."))
            rc = gguf_error_set(err, WEIGHTS ": '%s': adapters of %s's kv_b_proj are not supported: "
                                "the converter splits it per head into attn_k_b (transposed) and "
                                "attn_v_b, which llama.cpp applies no adapter to (e21cdc11's "
                                "convert_lora_to_gguf.py fails on it); q_a_proj, q_b_proj, "
                                "kv_a_proj_with_mqa and o_proj convert", s->pairs[i].base,
                                gguf_arch_name(b.arch));
    if (!rc)
        rc = add_pairs(m, s, &b, err);
    base_free(&b);
    if (!rc && m->n_tensors == 0)
        rc = gguf_error_set(err, WEIGHTS ": no lora_A/lora_B pairs");
    if (!rc && !(m->name = lora_title(dir)))
        rc = gguf_error_set(err, "out of memory");
    return rc;
}

int lora_open(const char *dir, const char *base, src_model *m, gguf_error *err)
{
    int rc = open_adapter(dir, base, m, err);
    if (rc)
        src_model_free(m); /* as the other readers: nothing left on failure */
    return rc;
}
