/*
 * hf.c — Hugging Face model folders (see hf.h).
 *
 * What llama.cpp's convert_hf_to_gguf.py (c392e50) does, in C: the weight
 * files are every model*.safetensors in the folder in name order (an index
 * file only checks that each tensor it names is present), tensors come in
 * name order within each file (e21cdc11; torch files: pickle order) after
 * any generated ones, and the vocabulary and special
 * tokens come from tokenizer.model, added_tokens.json, tokenizer_config.json
 * and config.json by its rules.
 */
#include "hf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "chat_template.h"
#include "fp8.h"
#include "qpack.h"
#include "json.h"
#include "tiktoken.h"
#include <ggufkit/arch.h>
#include "arch_recipe.h"
#include "special_tokens.h"
#include "safetensors.h"
#include "spm.h"
#include "tokjson.h"
#include "torch.h"
#include "vocab.h"

typedef struct hf_state {
    char       *dir;
    json_value *config, *tok_config, *tokenizer_json;
    size_t      config_top; /* config.json's own members: config's first ones (text_config's
                             * follow, json_object_absorb) */
    st_file    *shards;
    char      **shard_names; /* their file names, for messages */
    int         n_shards;
    bool        vocab_only;  /* no weights are written: their values are not checked */
    bool        file_order; /* safetensors tensors in header order, not sorted */
    vocab       voc;        /* as llama.cpp builds it */
    bool        spm;        /* voc came from tokenizer.model */
    bool        glm_vocab;  /* the class reads its vocabulary as _set_vocab_glm */
    bool        has_attn_factor; /* Phi-3 LongRoPE: rope.scaling.attn_factor to write */
    float       attn_factor;
    fp8_plan    fp8;        /* FP8 block-scaled weights (fp8.h) */
    qpack_plan  qp;         /* integer-packed weights (qpack.h) */
} hf_state;

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void join(char *out, size_t size, const char *dir, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

/* Loads DIR/name as JSON; NULL (no error) when absent, unless required. */
static int load_json(hf_state *s, const char *name, bool required, json_value **out,
                     gguf_error *err)
{
    char path[4096];
    join(path, sizeof path, s->dir, name);
    *out = NULL;
    if (!file_exists(path))
        return required ? gguf_error_set(err, "%s: not found", name) : 0;
    if (!(*out = json_load_file(path, err))) {
        gguf_error_prefix(err, "%s: ", name);
        return -1;
    }
    return 0;
}

/* The file name of the shard that holds st (for messages). */
static const char *shard_of(const hf_state *s, const st_tensor *st)
{
    for (int k = 0; k < s->n_shards; k++)
        if (st >= s->shards[k].tensors && st < s->shards[k].tensors + s->shards[k].n)
            return s->shard_names[k];
    return NULL;
}

/* config.json's value at "a.b.c": member c of object b of member a, or
 * NULL when a part is absent or not an object. */
static const json_value *config_path(const hf_state *s, const char *path)
{
    const json_value *v = s->config;
    char part[128];
    for (const char *p = path; v;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len >= sizeof part)
            return NULL;
        memcpy(part, p, len);
        part[len] = 0;
        if (v->type != JSON_OBJECT)
            return NULL;
        v = json_get(v, part);
        if (!dot)
            return v;
        p = dot + 1;
    }
    return NULL;
}

/* The first of keys config.json has ("a.b": a path, config_path). */
static const json_value *hparam(const hf_state *s, const char *const *keys)
{
    for (int i = 0; keys[i]; i++) {
        const json_value *v = strchr(keys[i], '.') ? config_path(s, keys[i])
                                                   : json_get(s->config, keys[i]);
        if (v)
            return v;
    }
    return NULL;
}

/* The names llama.cpp's converter tries for the number of blocks. */
static const char *const layer_keys[] = { "n_layers", "num_hidden_layers", "n_layer",
                                          "num_layers", NULL };

static int cfg_count(const json_value *v, const char *key, int64_t lo, int64_t hi, int64_t *out,
                     gguf_error *err);

/* The blocks a family's file has: num_hidden_layers, plus the
 * next-token-prediction layers where the converter keeps them
 * (GGUF_FACT_NEXTN_BLOCKS: Glm4MoeModel). */
static int hf_blocks(const hf_state *s, const gguf_arch *a, int64_t *n, gguf_error *err)
{
    if (cfg_count(hparam(s, layer_keys), "num_hidden_layers", 1, 100000, n, err))
        return -1;
    if (!a || !gguf_recipe_has(gguf_recipe_of(a), GGUF_FACT_NEXTN_BLOCKS))
        return 0;
    const json_value *v = json_get(s->config, "num_nextn_predict_layers");
    int64_t x = 0;
    if (v && v->type != JSON_NULL &&
        cfg_count(v, "num_nextn_predict_layers", 0, 100000, &x, err))
        return -1;
    *n += x;
    return 0;
}

/* The last of config's members [from, to) named key, or NULL. */
static const json_value *config_member(const hf_state *s, size_t from, size_t to, const char *key)
{
    for (size_t i = to; i-- > from;)
        if (!strcmp(s->config->keys[i], key))
            return s->config->items[i];
    return NULL;
}

/* What gguf-py's SpecialVocab reads from config.json: the top level's
 * member of that name, or when it is absent or null text_config's (a list,
 * as Gemma 3's eos_token_id [1, 106], is not looked past). */
static const json_value *config_special_get(const hf_state *s, const char *key)
{
    if (!s->config)
        return NULL;
    const json_value *v = config_member(s, 0, s->config_top, key);
    return v && v->type != JSON_NULL ? v : config_member(s, s->config_top, s->config->n, key);
}

/* json_count for config.json, which says what a NaN or an Infinity is
 * (Python's json writes them) rather than calling it fractional. */
static int cfg_count(const json_value *v, const char *key, int64_t lo, int64_t hi, int64_t *out,
                     gguf_error *err)
{
    if (v && v->type == JSON_NUMBER && !isfinite(v->num))
        return gguf_error_set(err, "config.json line %zu: '%s' is %s, not a whole number", v->line,
                              key, v->str);
    return json_count(v, "config.json", key, lo, hi, out, err);
}

static int hparam_u32(const hf_state *s, const char *key, uint32_t *out, gguf_error *err)
{
    int64_t v;
    if (cfg_count(json_get(s->config, key), key, 0, UINT32_MAX, &v, err))
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Whether x is finite as the f32 it is written as (beyond FLT_MAX it
 * would be Inf; a double-to-float conversion out of range is undefined). */
static bool f32_finite(double x)
{
    return isfinite(x) && fabs(x) <= FLT_MAX;
}

/* A float of config.json (key names it in the message): a number an f32
 * holds finite — Python's json reads NaN and Infinity, and a double such as
 * 1e39 overflows the f32 it is written as — and with positive, > 0. 0, or
 * -1 with err. */
static int cfg_float(const json_value *v, const char *key, bool positive, double *out,
                     gguf_error *err)
{
    if (!json_num(v, out))
        return gguf_error_set(err, "config.json line %zu: '%s' is not a number", v->line, key);
    if (!f32_finite(*out) || (positive && !(*out > 0)))
        return gguf_error_set(err, "config.json line %zu: '%s' is %s, expected a finite number%s",
                              v->line, key, v->str, positive ? " > 0" : "");
    return 0;
}

/* cfg_float for a key that may be absent (or null): *out keeps its default. */
static int cfg_float_opt(const json_value *obj, const char *key, const char *name, double *out,
                         gguf_error *err)
{
    const json_value *v = json_get(obj, key);
    return v && v->type != JSON_NULL ? cfg_float(v, name, true, out, err) : 0;
}

/* The rotary part of a head (Phi3MiniModel): int(partial_rotary_factor ×
 * hidden_size) // num_attention_heads, the factor 1 when absent. */
static int rotary_dims(const hf_state *s, int64_t *rot, gguf_error *err)
{
    static const char *const hidden_keys[] = { "hidden_size", "n_embd", NULL };
    static const char *const head_keys[] = { "num_attention_heads", "n_head", NULL };
    const json_value *hv = hparam(s, hidden_keys), *nv = hparam(s, head_keys);
    const json_value *factor = json_get(s->config, "partial_rotary_factor");
    int64_t hidden, heads;
    double f = 1.0;
    if (cfg_count(hv, "hidden_size", 1, UINT32_MAX, &hidden, err) ||
        cfg_count(nv, "num_attention_heads", 1, UINT32_MAX, &heads, err))
        return -1;
    if (factor && factor->type != JSON_NULL && (!json_num(factor, &f) || !(f > 0 && f <= 1)))
        return gguf_error_set(err, "config.json line %zu: 'partial_rotary_factor' is not a "
                              "number in (0, 1]", factor->line);
    *rot = (int64_t)(f * (double)hidden) / heads;
    return 0;
}

/* ------------------------------------------------------------------------
 * Weights
 * ------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_st_name(const void *a, const void *b)
{
    return strcmp(((const st_tensor *)a)->name, ((const st_tensor *)b)->name);
}

int hf_list_parts(const char *dir, const char *prefix, const char *suffix, char ***names,
                      int *n, gguf_error *err)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return gguf_error_set(err, "cannot read the folder");
    struct dirent *e;
    int cap = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name), pl = strlen(prefix), sl = strlen(suffix);
        if (strncmp(e->d_name, prefix, pl) || len < pl + sl || strcmp(e->d_name + len - sl, suffix))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **p = realloc(*names, (size_t)cap * sizeof *p);
            if (!p)
                break;
            *names = p;
        }
        if (!((*names)[*n] = strdup(e->d_name)))
            break;
        (*n)++;
    }
    closedir(d);
    if (*n > 0)
        qsort(*names, (size_t)*n, sizeof **names, cmp_str);
    return 0;
}

/* With an index: every tensor of its weight_map must be in some shard. */
static int check_index(hf_state *s, const char *index_name, gguf_error *err)
{
    json_value *index;
    if (load_json(s, index_name, false, &index, err))
        return -1;
    if (!index)
        return 0;
    const json_value *map = json_get(index, "weight_map");
    int rc = 0;
    if (!map || map->type != JSON_OBJECT) {
        rc = gguf_error_set(err, "%s: no weight_map object", index_name);
    } else {
        for (size_t i = 0; i < map->n && rc == 0; i++) {
            bool found = false;
            for (int k = 0; k < s->n_shards && !found; k++)
                for (size_t t = 0; t < s->shards[k].n && !found; t++)
                    found = !strcmp(s->shards[k].tensors[t].name, map->keys[i]);
            if (!found) {
                const char *file = json_str(map->items[i]);
                char path[4096];
                join(path, sizeof path, s->dir, file ? file : "?");
                rc = gguf_error_set(err, "%s: tensor '%s' is in %s, %s", index_name, map->keys[i], file ? file : "(no file)",
                                    file && !file_exists(path) ? "which is missing"
                                                               : "which does not hold it");
            }
        }
    }
    json_free(index);
    return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* llama3 rope scaling: one factor per rotary frequency (llama.cpp's
 * generate_extra_tensors, in float). */
static int add_rope_freqs(src_model *m, hf_state *s, const json_value *rs, gguf_error *err)
{
    double base = 10000.0, factor = 8.0, lo = 1.0, hi = 4.0, old = 8192.0;
    int64_t hidden, heads, dim;
    /* each one given must be a finite number > 0. llama.cpp reads the
     * original context from config.json's top level only (default 8192),
     * never from rope_scaling, where Llama 3.1 keeps it: the factors it
     * writes are the ones to match. */
    if (cfg_float_opt(s->config, "rope_theta", "rope_theta", &base, err) ||
        cfg_float_opt(rs, "factor", "rope_scaling.factor", &factor, err) ||
        cfg_float_opt(rs, "low_freq_factor", "rope_scaling.low_freq_factor", &lo, err) ||
        cfg_float_opt(rs, "high_freq_factor", "rope_scaling.high_freq_factor", &hi, err) ||
        cfg_float_opt(s->config, "original_max_position_embeddings",
                      "original_max_position_embeddings", &old, err))
        return -1;
    if (!json_int(json_get(s->config, "head_dim"), &dim)) {
        if (!json_int(json_get(s->config, "hidden_size"), &hidden) ||
            !json_int(json_get(s->config, "num_attention_heads"), &heads) || heads <= 0)
            return gguf_error_set(err, "config.json: rope_scaling needs hidden_size and "
                                  "num_attention_heads");
        dim = hidden / heads;
    }
    if (dim <= 0 || dim > 65536 || dim % 2 || lo == hi)
        return gguf_error_set(err, "config.json: bad llama3 rope_scaling parameters");
    float *f = malloc((size_t)(dim / 2) * sizeof *f);
    if (!f)
        return gguf_error_set(err, "out of memory");
    const float lo_wl = (float)(old / lo), hi_wl = (float)(old / hi);
    for (int64_t i = 0; i < dim / 2; i++) {
        /* PyTorch float32 semantics: `scalar / tensor` is reciprocal times
         * the scalar rounded to float. */
        float freq = 1.0f / powf((float)base, (float)(2 * i) / (float)dim);
        float wavelen = (1.0f / freq) * (float)(2 * M_PI);
        if (wavelen < hi_wl) {
            f[i] = 1.0f;
        } else if (wavelen > lo_wl) {
            f[i] = (float)factor;
        } else {
            float smooth = ((1.0f / wavelen) * (float)old - (float)lo) / (float)(hi - lo);
            f[i] = 1.0f / ((1.0f - smooth) / (float)factor + smooth);
        }
    }
    int64_t ne = dim / 2;
    src_tensor *t = src_add_tensor(m, GGUF_T_ROPE_FREQS, SRC_F32, 1, &ne, f);
    if (!t) {
        free(f);
        return gguf_error_set(err, "out of memory");
    }
    t->owned = f;
    t->from = (src_origin){ "config.json", NULL };
    return 0;
}

/* Gemma 4's "proportional" rope of the full layers (Gemma4Model's
 * generate_extra_tensors): global_head_dim / 2 frequency factors, 1 for
 * the int(global_head_dim × partial_rotary_factor / 2) rotated pairs and
 * 1e30 (no rotation) for the rest; its rope_type must be "proportional". */
static int add_rope_proportional(src_model *m, hf_state *s, gguf_error *err)
{
    static const char *const full[] = { "rope_parameters.full_attention", NULL };
    const json_value *rp = hparam(s, full);
    const char *type = json_str(json_get(rp, "rope_type"));
    if (!rp || rp->type != JSON_OBJECT || !type || strcmp(type, "proportional"))
        return gguf_error_set(err, "config.json: rope_parameters.full_attention.rope_type is "
                              "not \"proportional\" (the only rope of %s full layers)",
                              gguf_arch_name(m->arch));
    int64_t dim;
    double f;
    const json_value *fv = json_get(rp, "partial_rotary_factor");
    if (cfg_count(json_get(s->config, "global_head_dim"), "global_head_dim", 2, 65536, &dim, err))
        return -1;
    if (!fv || !json_num(fv, &f) || !(f > 0 && f <= 1))
        return gguf_error_set(err, "config.json: rope_parameters.full_attention."
                              "partial_rotary_factor is not a number in (0, 1]");
    const int64_t n = dim / 2, rot = (int64_t)((double)dim * f / 2);
    float *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return gguf_error_set(err, "out of memory");
    for (int64_t i = 0; i < n; i++)
        v[i] = i < rot ? 1.0f : 1e30f;
    src_tensor *t = src_add_tensor(m, GGUF_T_ROPE_FREQS, SRC_F32, 1, &n, v);
    if (!t) {
        free(v);
        return gguf_error_set(err, "out of memory");
    }
    t->owned = v;
    t->from = (src_origin){ "config.json", NULL };
    return 0;
}

/* Phi-3's LongRoPE (Phi3MiniModel.generate_extra_tensors, the 128k models
 * and Phi-4-mini): rope_scaling's long and short frequency factors as F32
 * tensors of n_rot/2, and the attention factor written as
 * rope.scaling.attn_factor, from scale = max_position_embeddings /
 * original_max_position_embeddings: sqrt(1 + ln scale / ln original) for
 * "longrope" (earlier "su"), 0.1 ln scale + 1 for "yarn", 1 when the
 * context is not extended. */
static int add_longrope(src_model *m, hf_state *s, const json_value *rs, gguf_error *err)
{
    static const char *const ctx_keys[] = { "n_positions", "max_position_embeddings", NULL };
    const char *type = json_str(json_get(rs, "rope_type"));
    if (!type)
        type = json_str(json_get(rs, "type"));
    int64_t ctx, orig, rot;
    if (rs->type != JSON_OBJECT || !type || !*type)
        return gguf_error_set(err, "config.json line %zu: rope_scaling has no type", rs->line);
    if (cfg_count(hparam(s, ctx_keys), "max_position_embeddings", 1, UINT32_MAX, &ctx, err) ||
        cfg_count(json_get(s->config, "original_max_position_embeddings"),
                  "original_max_position_embeddings", 1, UINT32_MAX, &orig, err) ||
        rotary_dims(s, &rot, err))
        return -1;
    const double scale = (double)ctx / (double)orig;
    double attn = 1.0;
    if (!strcasecmp(type, "longrope") || !strcasecmp(type, "su")) {
        if (scale > 1.0)
            attn = sqrt(1.0 + log(scale) / log((double)orig));
    } else if (!strcasecmp(type, "yarn")) {
        if (scale > 1.0)
            attn = 0.1 * log(scale) + 1.0;
    } else {
        return gguf_error_set(err, "config.json line %zu: rope_scaling type \"%s\" of a %s model "
                              "is not supported (longrope, su or yarn)", rs->line, type,
                              gguf_arch_name(m->arch));
    }
    if (!isfinite(attn))
        return gguf_error_set(err, "config.json: original_max_position_embeddings %" PRId64
                              " gives no LongRoPE attention factor", orig);
    static const struct { const char *hf, *name; } lists[] = {
        { "long_factor", GGUF_T_ROPE_FACTORS_LONG },
        { "short_factor", GGUF_T_ROPE_FACTORS_SHORT },
    };
    for (size_t k = 0; k < sizeof lists / sizeof *lists; k++) {
        const json_value *v = json_get(rs, lists[k].hf);
        if (!v || v->type != JSON_ARRAY)
            return gguf_error_set(err, "config.json line %zu: rope_scaling.%s is missing or not "
                                  "a list", v ? v->line : rs->line, lists[k].hf);
        if (rot % 2 || (int64_t)v->n != rot / 2)
            return gguf_error_set(err, "config.json line %zu: rope_scaling.%s has %zu factors; "
                                  "the rotary part of a head (%" PRId64 ") needs %" PRId64,
                                  v->line, lists[k].hf, v->n, rot, rot / 2);
        float *f = malloc(v->n * sizeof *f);
        if (!f)
            return gguf_error_set(err, "out of memory");
        for (size_t i = 0; i < v->n; i++) {
            double x;
            if (!json_num(v->items[i], &x) || !f32_finite(x)) {
                free(f);
                return gguf_error_set(err, "config.json line %zu: rope_scaling.%s[%zu] is not a "
                                      "finite number", v->items[i]->line, lists[k].hf, i);
            }
            f[i] = (float)x;
        }
        const int64_t ne = (int64_t)v->n;
        src_tensor *t = src_add_tensor(m, lists[k].name, SRC_F32, 1, &ne, f);
        if (!t) {
            free(f);
            return gguf_error_set(err, "out of memory");
        }
        t->owned = f;
        t->from = (src_origin){ "config.json", NULL };
    }
    s->has_attn_factor = true;
    s->attn_factor = (float)attn;
    return 0;
}

/* ------------------------------------------------------------------------
 * Experts: llama.cpp's converter collects every expert's projections of a
 * block and, when the block's last one arrives, writes each projection of
 * all experts as one tensor [.., .., n_expert] (torch.stack in expert
 * order), in the order of the family's expert rows. Here the stacked
 * tensor is a src_tensor of n_expert row-split parts, one per expert,
 * read from the mapped checkpoint like any other.
 * ------------------------------------------------------------------------ */

/* Whether the family's recipe has a converter fact (enum gguf_fact). */
static bool fact(const gguf_arch *a, int f)
{
    return gguf_recipe_has(gguf_recipe_of(a), f);
}

#define MAX_EXPERT_ROWS 4

typedef struct experts {
    int                     n_expert; /* config's num_local_experts / num_experts; 0: none */
    int                     n_rows;   /* the architecture's stacked rows, in emit order */
    const gguf_arch_tensor *rows[MAX_EXPERT_ROWS];
    int                     n_blocks;
    const st_tensor       **got;      /* [block][row][expert], NULL until seen */
    qpack_src             **qp;       /* [block][row][expert]: a packed expert's source
                                       * (got its weight_packed), until stacked */
    int                    *count;    /* [block]: projections seen */
} experts;

static int experts_init(experts *ex, const gguf_arch *a, const hf_state *s, gguf_error *err)
{
    const gguf_arch_tensor *t;
    for (size_t i = 0; (t = gguf_arch_tensor_at(a, i)); i++)
        if (gguf_arch_tensor_dim(t, 2) != GGUF_DIM_1 && arch_per_expert(a, t) &&
            ex->n_rows < MAX_EXPERT_ROWS)
            ex->rows[ex->n_rows++] = t;
    if (!ex->n_rows)
        return 0;
    /* Glm4MoeModel counts its routed experts by n_routed_experts */
    static const char *const count_keys[] = { "num_local_experts", "num_experts",
                                               "n_routed_experts", NULL };
    const json_value *v = hparam(s, count_keys);
    int64_t n = 0, blocks = 0;
    if (v && cfg_count(v, "num_local_experts", 0, 4096, &n, err))
        return -1;
    if (hf_blocks(s, a, &blocks, err))
        return -1;
    ex->n_expert = (int)n;
    ex->n_blocks = (int)blocks;
    if (n > 0 && (!(ex->got = calloc((size_t)blocks * (size_t)ex->n_rows * (size_t)n,
                                     sizeof *ex->got)) ||
                  !(ex->qp = calloc((size_t)blocks * (size_t)ex->n_rows * (size_t)n,
                                    sizeof *ex->qp)) ||
                  !(ex->count = calloc((size_t)blocks, sizeof *ex->count))))
        return gguf_error_set(err, "out of memory");
    return 0;
}

static void experts_free(experts *ex)
{
    const size_t n = (size_t)ex->n_blocks * (size_t)ex->n_rows * (size_t)ex->n_expert;
    for (size_t i = 0; ex->qp && i < n; i++)
        qpack_src_free(ex->qp[i]);
    free(ex->qp);
    free(ex->got);
    free(ex->count);
}

static size_t expert_at(const experts *ex, int block, int row, int expert)
{
    return ((size_t)block * (size_t)ex->n_rows + (size_t)row) * (size_t)ex->n_expert + (size_t)expert;
}

static const st_tensor **expert_slot(experts *ex, int block, int row, int expert)
{
    return &ex->got[expert_at(ex, block, row, expert)];
}

/* Row r of block `block` stacked from packed experts (qpack.h): one
 * SRC_QPACK tensor [experts, rows, cols] over every expert's packed parts,
 * dequantized slice by slice as the writer streams it. 0, or -1 with err. */
static int experts_stack_packed(experts *ex, src_model *m, const hf_state *s, int block, int r,
                                gguf_error *err)
{
    qpack_src **slices = &ex->qp[expert_at(ex, block, r, 0)];
    for (int e = 0; e < ex->n_expert; e++) {
        const st_tensor *p = *expert_slot(ex, block, r, e);
        if (!slices[e])
            return gguf_error_set(err, "%s: tensor '%s': not packed, but expert 0's is ('%s'): "
                                  "the experts of a block are packed alike or not at all",
                                  shard_of(s, p), p->name, (*expert_slot(ex, block, r, 0))->name);
    }
    char name[256];
    snprintf(name, sizeof name, gguf_arch_tensor_name(ex->rows[r]), block);
    const void **parts = malloc((size_t)ex->n_expert * sizeof *parts);
    src_origin *from = malloc((size_t)ex->n_expert * sizeof *from);
    qpack_src *q = NULL;
    if (!parts || !from) {
        free(parts);
        free(from);
        return gguf_error_set(err, "out of memory");
    }
    for (int e = 0; e < ex->n_expert; e++) {
        const st_tensor *p = *expert_slot(ex, block, r, e);
        parts[e] = slices[e]->packed;
        from[e] = (src_origin){ shard_of(s, p), p->name };
    }
    if (qpack_stack(slices, ex->n_expert, name, &q, err)) {
        gguf_error_prefix(err, "%s: ", from[0].file);
        free(parts);
        free(from);
        return -1;
    }
    const int64_t ne[3] = { q->cols, q->rows, ex->n_expert };
    src_tensor *t = src_add_tensor(m, name, SRC_QPACK, 3, ne, q->packed);
    if (!t) {
        qpack_src_free(q);
        free(parts);
        free(from);
        return gguf_error_set(err, "out of memory");
    }
    t->qp = q;
    t->from = from[0];
    t->part_from = from;
    t->parts = parts;
    t->n_parts = ex->n_expert;
    t->split_rows = true;
    t->mapped = q->mapped;
    return 0;
}

/* Expert `expert`'s projection of row `row` in block `block`: kept, and
 * the block's stacked tensors added once all have arrived. q: the packed
 * source of st (its weight_packed), or NULL; taken over (freed on error). */
static int experts_add(experts *ex, src_model *m, const hf_state *s, const gguf_arch_tensor *row,
                       int block, int expert, const st_tensor *st, qpack_src *q, gguf_error *err)
{
    if (ex->n_expert && block >= 0 && block < ex->n_blocks && expert >= 0 && expert < ex->n_expert) {
        int r = 0;
        while (ex->rows[r] != row)
            r++;
        if (!*expert_slot(ex, block, r, expert)) {
            ex->qp[expert_at(ex, block, r, expert)] = q;
            q = NULL;
        }
    }
    qpack_src_free(q); /* not kept: the checks below refuse it */

    if (!ex->n_expert)
        return gguf_error_set(err, "tensor '%s': an expert, but config.json has no "
                              "num_local_experts / num_experts / n_routed_experts", st->name);
    if (block < 0 || block >= ex->n_blocks || expert >= ex->n_expert)
        return gguf_error_set(err, "tensor '%s': block %d, expert %d is beyond the %d blocks "
                              "and %d experts of config.json", st->name, block, expert,
                              ex->n_blocks, ex->n_expert);
    int r = 0;
    while (ex->rows[r] != row)
        r++;
    const st_tensor **slot = expert_slot(ex, block, r, expert);
    if (*slot)
        return gguf_error_set(err, "tensor '%s' appears twice", st->name);
    *slot = st;
    if (++ex->count[block] < ex->n_rows * ex->n_expert)
        return 0;
    for (r = 0; r < ex->n_rows; r++) {
        const st_tensor *first = *expert_slot(ex, block, r, 0);
        if (ex->qp[expert_at(ex, block, r, 0)]) {
            if (experts_stack_packed(ex, m, s, block, r, err))
                return -1;
            continue;
        }
        int64_t ne[4] = { 0 };
        for (int d = 0; d < first->n_dims; d++)
            ne[d] = first->shape[first->n_dims - 1 - d];
        ne[first->n_dims] = ex->n_expert;
        const void **parts = malloc((size_t)ex->n_expert * sizeof *parts);
        src_origin *from = malloc((size_t)ex->n_expert * sizeof *from);
        if (!parts || !from) {
            free(parts);
            free(from);
            return gguf_error_set(err, "out of memory");
        }
        bool mapped = true;
        for (int e = 0; e < ex->n_expert; e++) {
            const st_tensor *p = *expert_slot(ex, block, r, e);
            if (ex->qp[expert_at(ex, block, r, e)])
                return gguf_error_set(err, "%s: tensor '%s': packed, but expert 0's is not ('%s'): "
                                      "the experts of a block are packed alike or not at all",
                                      shard_of(s, p), p->name, first->name);
            if (strcmp(p->dtype, first->dtype) || p->n_dims != first->n_dims ||
                memcmp(p->shape, first->shape, sizeof p->shape)) {
                free(parts);
                free(from);
                return gguf_error_set(err, "tensor '%s': dtype or shape differs from expert 0's "
                                      "(%s)", p->name, first->name);
            }
            parts[e] = p->data;
            from[e] = (src_origin){ shard_of(s, p), p->name };
            mapped &= p->mapped;
        }
        char name[256];
        snprintf(name, sizeof name, gguf_arch_tensor_name(ex->rows[r]), block);
        src_tensor *t = src_add_tensor(m, name, src_dtype_of(first->dtype), first->n_dims + 1, ne,
                                       first->data);
        if (!t) {
            free(parts);
            free(from);
            return gguf_error_set(err, "out of memory");
        }
        t->from = from[0];
        t->part_from = from;
        t->parts = parts;
        t->n_parts = ex->n_expert;
        t->split_rows = true;
        t->mapped = mapped;
    }
    return 0;
}

/* Every block whose experts began has all of them (llama.cpp: "Unprocessed
 * experts"). */
static int experts_check_done(const experts *ex, gguf_error *err)
{
    for (int b = 0; ex->count && b < ex->n_blocks; b++)
        if (ex->count[b] && ex->count[b] < ex->n_rows * ex->n_expert)
            return gguf_error_set(err, "block %d has %d of its %d expert tensors", b,
                                  ex->count[b], ex->n_rows * ex->n_expert);
    return 0;
}

/* ------------------------------------------------------------------------
 * MXFP4 experts (gpt-oss, GGUF_ARCH_MXFP4_EXPERTS): each block's experts
 * come stacked and quantized, `mlp.experts.X_blocks` U8 [expert, row,
 * block, 16] with `X_scales` U8 (E8M0) [expert, row, block], gate and up
 * rows interleaved in gate_up_proj. llama.cpp's GptOssModel writes them
 * unchanged as GGML MXFP4 before every other tensor (its
 * generate_extra_tensors, in name order: down, then gate and up, once the
 * scales arrive); the gate_up bias splits the same way.
 * ------------------------------------------------------------------------ */

#define MXFP4_BLOCK 32 /* elements per block */
#define MXFP4_BYTES 17 /* the E8M0 scale, then 16 bytes of nibbles */

/* Rows first, first + step, ... of each expert as GGML MXFP4 blocks: the
 * scale byte, then element j in the low and element j + 16 in the high
 * nibble of byte j, where the checkpoint has elements 2i and 2i + 1 in the
 * low and high nibble of byte i (transform_nibble_layout). */
static int mxfp4_repack(src_model *m, const hf_state *s, const gguf_arch_tensor *row, int block,
                        const st_tensor *b, const st_tensor *sc, int first, int step, gguf_error *err)
{
    if (!b || strcmp(b->dtype, "U8") || b->n_dims != 4 || b->shape[3] != 16 ||
        strcmp(sc->dtype, "U8") || sc->n_dims != 3 || memcmp(b->shape, sc->shape, 3 * sizeof *b->shape) ||
        b->shape[1] % step)
        return gguf_error_set(err, "tensor '%s': expected U8 [experts, rows, blocks] after its "
                              "U8 [experts, rows, blocks, 16] _blocks tensor", sc->name);
    const int64_t n_exp = b->shape[0], rows = b->shape[1] / step, nb = b->shape[2];
    uint8_t *out = malloc((size_t)(n_exp * rows * nb) * MXFP4_BYTES);
    if (!out)
        return gguf_error_set(err, "out of memory");
    char name[256];
    snprintf(name, sizeof name, gguf_arch_tensor_name(row), block);
    uint8_t *o = out;
    for (int64_t e = 0; e < n_exp; e++)
        for (int64_t r = 0; r < rows; r++) {
            const int64_t src_row = e * b->shape[1] + first + r * step;
            for (int64_t k = 0; k < nb; k++, o += MXFP4_BYTES) {
                const uint8_t *q = b->data + (size_t)((src_row * nb + k) * 16);
                uint8_t v[MXFP4_BLOCK];
                for (int i = 0; i < 16; i++) {
                    v[2 * i] = q[i] & 15;
                    v[2 * i + 1] = q[i] >> 4;
                }
                /* E8M0 has no Inf; 0xff is its NaN (the E2M1 codes are all finite) */
                o[0] = sc->data[src_row * nb + k];
                if (o[0] == 0xff && !s->vocab_only) {
                    free(out);
                    return gguf_error_set(err, "%s: tensor '%s' has a non-finite value (NaN: the "
                                          "E8M0 scale 0xff) at expert %" PRId64 ", row %" PRId64
                                          ", block %" PRId64 " (output tensor %s): nothing written",
                                          shard_of(s, sc), sc->name, e, first + r * step, k, name);
                }
                for (int j = 0; j < 16; j++)
                    o[1 + j] = (uint8_t)(v[j] | v[j + 16] << 4);
            }
        }
    int64_t ne[3] = { nb * MXFP4_BLOCK, rows, n_exp };
    src_tensor *t = src_add_tensor(m, name, SRC_MXFP4, 3, ne, out);
    if (!t) {
        free(out);
        return gguf_error_set(err, "out of memory");
    }
    t->owned = out;
    t->from = (src_origin){ shard_of(s, sc), sc->name };
    return 0;
}

/* "model.layers.N.mlp.experts.PROJ_KIND": N and whether PROJ_KIND matches. */
static bool expert_tensor(const char *name, const char *proj_kind, int *block)
{
    int n, end = 0;
    char rest[64];
    if (sscanf(name, "model.layers.%d.mlp.experts.%63s%n", &n, rest, &end) != 2 ||
        name[end] || strcmp(rest, proj_kind))
        return false;
    *block = n;
    return true;
}

/* The repacked expert tensors, in GptOssModel's order. */
static int mxfp4_experts(src_model *m, hf_state *s, gguf_error *err)
{
    const gguf_arch_tensor *down = gguf_arch_tensor_of(m->arch, GGUF_ROLE_FFN_DOWN_EXPS),
                           *gate = gguf_arch_tensor_of(m->arch, GGUF_ROLE_FFN_GATE_EXPS),
                           *up = gguf_arch_tensor_of(m->arch, GGUF_ROLE_FFN_UP_EXPS);
    /* the last _blocks seen, kept only for the _scales of the same block
     * and projection (llama.cpp assumes that order without checking) */
    const st_tensor *down_b = NULL, *gate_up_b = NULL;
    int block, down_at = -1, gate_up_at = -1;
    for (int k = 0; k < s->n_shards; k++)
        for (size_t i = 0; i < s->shards[k].n; i++) {
            const st_tensor *st = &s->shards[k].tensors[i];
            if (expert_tensor(st->name, "down_proj_blocks", &block)) {
                down_b = st;
                down_at = block;
            } else if (expert_tensor(st->name, "gate_up_proj_blocks", &block)) {
                gate_up_b = st;
                gate_up_at = block;
            } else if (expert_tensor(st->name, "down_proj_scales", &block)) {
                if (mxfp4_repack(m, s, down, block, down_at == block ? down_b : NULL, st, 0, 1, err))
                    return -1;
            } else if (expert_tensor(st->name, "gate_up_proj_scales", &block)) {
                const st_tensor *b = gate_up_at == block ? gate_up_b : NULL;
                if (mxfp4_repack(m, s, gate, block, b, st, 0, 2, err) ||
                    mxfp4_repack(m, s, up, block, b, st, 1, 2, err))
                    return -1;
            }
        }
    return 0;
}

/* gate_up_proj_bias [experts, 2 × ff]: the even columns are the gate's
 * bias, the odd ones the up projection's (in the checkpoint's dtype). */
static int split_gate_up_bias(src_model *m, const hf_state *s, const st_tensor *st, int block,
                              gguf_error *err)
{
    const int roles[2] = { GGUF_ROLE_FFN_GATE_EXPS_BIAS, GGUF_ROLE_FFN_UP_EXPS_BIAS };
    const int dt = src_dtype_of(st->dtype);
    if (dt < 0 || st->n_dims != 2 || st->shape[1] % 2)
        return gguf_error_set(err, "tensor '%s': expected F32, F16 or BF16 [experts, 2 × ff]",
                              st->name);
    const size_t es = (size_t)st_dtype_size(st->dtype);
    const int64_t half = st->shape[1] / 2, n = st->shape[0] * half;
    for (int p = 0; p < 2; p++) {
        uint8_t *out = malloc((size_t)n * es);
        if (!out)
            return gguf_error_set(err, "out of memory");
        for (int64_t i = 0; i < n; i++)
            memcpy(out + (size_t)i * es, st->data + (size_t)(2 * i + p) * es, es);
        char name[256];
        snprintf(name, sizeof name, gguf_arch_tensor_name(gguf_arch_tensor_of(m->arch, roles[p])),
                 block);
        int64_t ne[2] = { half, st->shape[0] };
        src_tensor *t = src_add_tensor(m, name, dt, 2, ne, out);
        if (!t) {
            free(out);
            return gguf_error_set(err, "out of memory");
        }
        t->owned = out;
        t->from = (src_origin){ shard_of(s, st), st->name };
        t->col_step = 2;
        t->col_first = (uint8_t)p;
    }
    return 0;
}

/* A gpt-oss expert tensor the MXFP4 pass took or the bias split handles:
 * 1 when done with it (rc set on error), 0 for any other tensor. */
static int mxfp4_take(src_model *m, const hf_state *s, const st_tensor *st, int *rc, gguf_error *err)
{
    int block;
    if (!fact(m->arch, GGUF_FACT_MXFP4_EXPERTS))
        return 0;
    if (expert_tensor(st->name, "gate_up_proj_bias", &block)) {
        *rc = split_gate_up_bias(m, s, st, block, err);
        return 1;
    }
    static const char *const packed[] = { "down_proj_blocks", "down_proj_scales",
                                          "gate_up_proj_blocks", "gate_up_proj_scales" };
    for (size_t i = 0; i < sizeof packed / sizeof *packed; i++)
        if (expert_tensor(st->name, packed[i], &block))
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------
 * Qwen 3.5 (Qwen3_5TextModel ← _LinearAttentionVReorderBase ←
 * Qwen3NextModel ← Qwen2MoeModel)
 * ------------------------------------------------------------------------ */

/* The linear attention's heads (config.json's linear_*): the V-head
 * reorder applies when there are both kinds and their counts differ. */
typedef struct lin_heads {
    int64_t k, v, hk, hv;
    bool    reorder;
} lin_heads;

static int lin_heads_read(const json_value *config, lin_heads *lh, gguf_error *err)
{
    *lh = (lin_heads){ 0 };
    if (cfg_count(json_get(config, "linear_num_key_heads"), "linear_num_key_heads", 1,
                  1 << 20, &lh->k, err) ||
        cfg_count(json_get(config, "linear_num_value_heads"), "linear_num_value_heads", 1,
                  1 << 20, &lh->v, err) ||
        cfg_count(json_get(config, "linear_key_head_dim"), "linear_key_head_dim", 1, 1 << 20,
                  &lh->hk, err) ||
        cfg_count(json_get(config, "linear_value_head_dim"), "linear_value_head_dim", 1,
                  1 << 20, &lh->hv, err))
        return -1;
    if (lh->v % lh->k)
        return gguf_error_set(err, "config.json: linear_num_value_heads = %" PRId64 " is not a "
                              "multiple of linear_num_key_heads = %" PRId64, lh->v, lh->k);
    lh->reorder = lh->k != lh->v;
    return 0;
}

/* Output rows [first, first + k × v/k × dim) of t (its columns with cols)
 * reordered from grouped by key head to tiled; the tensor must have exactly
 * that many. */
static int vh_reorder(src_tensor *t, const lin_heads *lh, int64_t first, int64_t dim, bool cols,
                      gguf_error *err)
{
    if (!lh->reorder)
        return 0;
    const int64_t n = cols ? t->ne[0] : t->n_dims == 1 ? t->ne[0] : t->ne[1] * t->ne[2] * t->ne[3];
    if (n != first + lh->v * dim)
        return gguf_error_set(err, "tensor '%s': %" PRId64 " %s, expected %" PRId64 " (%" PRId64
                              " value heads of %" PRId64 "%s)", t->from.name ? t->from.name : t->name,
                              n, cols ? "columns" : "rows", first + lh->v * dim, lh->v, dim,
                              first ? " after the q and k channels" : "");
    t->vh_first = (int32_t)first;
    t->vh_k = (int32_t)lh->k;
    t->vh_per_k = (int32_t)(lh->v / lh->k);
    t->vh_dim = (int32_t)dim;
    t->vh_cols = cols;
    return 0;
}

/* What Qwen3NextModel and the V-head reorder do to a linear-attention
 * tensor of the row's role: ssm_a = −exp(A_log), the conv1d weight
 * squeezed, the value heads of the qkv and z projections, a and b, A_log,
 * dt_bias, the conv's v channels and out_proj's columns tiled. */
static int linear_attn(src_tensor *t, int role, const lin_heads *lh, gguf_error *err)
{
    const int64_t qk = 2 * lh->k * lh->hk;
    switch (role) {
    case GGUF_ROLE_SSM_A:
        t->neg_exp = true;
        return vh_reorder(t, lh, 0, 1, false, err);
    case GGUF_ROLE_SSM_DT_BIAS:
    case GGUF_ROLE_SSM_ALPHA:
    case GGUF_ROLE_SSM_BETA:
        return vh_reorder(t, lh, 0, 1, false, err);
    case GGUF_ROLE_ATTN_QKV:
        return vh_reorder(t, lh, qk, lh->hv, false, err);
    case GGUF_ROLE_ATTN_GATE:
        return vh_reorder(t, lh, 0, lh->hv, false, err);
    case GGUF_ROLE_SSM_OUT:
        return vh_reorder(t, lh, 0, lh->hv, true, err);
    case GGUF_ROLE_SSM_CONV1D: { /* torch's squeeze(): every axis of 1 out */
        int n = 0;
        for (int d = 0; d < t->n_dims; d++)
            if (t->ne[d] != 1)
                t->ne[n++] = t->ne[d];
        for (int d = n; d < 4; d++)
            t->ne[d] = 1;
        t->n_dims = n ? n : 1;
        return vh_reorder(t, lh, qk, lh->hv, false, err);
    }
    }
    return 0;
}

int hf_lora_linear_attn(const json_value *config, src_tensor *lora_b, int role,
                        gguf_error *err)
{
    if (role != GGUF_ROLE_ATTN_QKV && role != GGUF_ROLE_ATTN_GATE &&
        role != GGUF_ROLE_SSM_ALPHA && role != GGUF_ROLE_SSM_BETA)
        return 0;
    lin_heads lh;
    if (lin_heads_read(config, &lh, err))
        return -1;
    return linear_attn(lora_b, role, &lh, err);
}

/* Block N of "[model.][language_model.]layers.N.mlp.experts.REST". */
static bool fused_expert(const char *name, const char *rest, int *block)
{
    const char *p = strstr(name, "layers.");
    if (!p || (p != name && strncmp(name, "model.", 6)))
        return false;
    char tail[64];
    int n, end = 0;
    if (sscanf(p, "layers.%d.mlp.experts.%63s%n", &n, tail, &end) != 2 || p[end] || n < 0)
        return false;
    size_t rl = strlen(rest);
    if (strncmp(tail, rest, rl) || (tail[rl] && strcmp(tail + rl, ".weight")))
        return false;
    *block = n;
    return true;
}

/* Qwen2MoeModel's stacked experts: down_proj [experts, embd, ff] as it is,
 * gate_up_proj [experts, 2 × ff, embd] split into its gate and up halves.
 * 1 when the tensor is one of them (rc set on error), 0 otherwise. */
static int qwen35_experts(src_model *m, const hf_state *s, const st_tensor *st, int n_blocks,
                          int *rc, gguf_error *err)
{
    int block;
    const bool down = fused_expert(st->name, "down_proj", &block);
    if (!down && !fused_expert(st->name, "gate_up_proj", &block))
        return 0;
    if (src_dtype_of(st->dtype) < 0 || st->n_dims != 3 || (!down && st->shape[1] % 2) ||
        block >= n_blocks) {
        *rc = gguf_error_set(err, "tensor '%s': expected F32, F16 or BF16 [experts, %s] of one of "
                             "the %d blocks", st->name, down ? "embd, ff" : "2 × ff, embd",
                             n_blocks);
        return 1;
    }
    for (int half = 0; half < (down ? 1 : 2); half++) {
        const int role = down ? GGUF_ROLE_FFN_DOWN_EXPS
                              : half ? GGUF_ROLE_FFN_UP_EXPS : GGUF_ROLE_FFN_GATE_EXPS;
        char name[256];
        snprintf(name, sizeof name, gguf_arch_tensor_name(gguf_arch_tensor_of(m->arch, role)), block);
        int64_t ne[3] = { st->shape[2], st->shape[1], st->shape[0] };
        if (!down)
            ne[1] /= 2;
        src_tensor *t = src_add_tensor(m, name, src_dtype_of(st->dtype), 3, ne, st->data);
        if (!t) {
            *rc = gguf_error_set(err, "out of memory");
            return 1;
        }
        t->mapped = st->mapped;
        t->from = (src_origin){ shard_of(s, st), st->name };
        if (!down) {
            t->ex_block = st->shape[1];
            t->ex_skip = half * ne[1];
        }
    }
    return 1;
}

/* ------------------------------------------------------------------------
 * DeepSeek-V2/V3 (DeepseekV2Model)
 * ------------------------------------------------------------------------ */

/* kv_b_proj's heads: num_key_value_heads of qk_nope_head_dim key rows then
 * v_head_dim value rows (read when the family splits it). */
typedef struct kv_b_heads {
    int64_t heads, nope, v, blocks;
} kv_b_heads;

static int kv_b_heads_read(const hf_state *s, kv_b_heads *kh, gguf_error *err)
{
    return cfg_count(json_get(s->config, "num_key_value_heads"), "num_key_value_heads", 1,
                     1 << 20, &kh->heads, err) ||
           cfg_count(json_get(s->config, "qk_nope_head_dim"), "qk_nope_head_dim", 1, 1 << 20,
                     &kh->nope, err) ||
           cfg_count(json_get(s->config, "v_head_dim"), "v_head_dim", 1, 1 << 20, &kh->v, err) ||
           cfg_count(hparam(s, layer_keys), "num_hidden_layers", 1, 100000, &kh->blocks, err)
               ? -1 : 0;
}

/* Whether name is of a layer past num_hidden_layers (the multi-token
 * prediction layers DeepseekV2Model drops: "model.layers.N" with N ≥ it). */
static bool mtp_layer(const char *name, int64_t blocks)
{
    if (strncmp(name, "model.layers.", 13) || !isdigit((unsigned char)name[13]))
        return false;
    errno = 0;
    char *end;
    const unsigned long long n = strtoull(name + 13, &end, 10);
    return errno == ERANGE || n >= (unsigned long long)blocks;
}

/* kv_b_proj [heads × (nope + v), kv_lora] split per head into attn_k_b
 * (the nope rows, transposed: {nope, kv_lora, heads}) and attn_v_b ({kv_lora,
 * v, heads}), both read from the one source: the mapped tensor, or (qp,
 * one source per half, owned by the tensors from then on) a packed one's
 * values as dequant_model gives them. name: the checkpoint's weight name;
 * rows × cols its shape. 0, or -1 with err. */
static int kv_b_make(src_model *m, const hf_state *s, const st_tensor *st, const char *name,
                     int block, int64_t rows, int64_t cols, qpack_src *qp[2],
                     const kv_b_heads *kh, gguf_error *err)
{
    const int64_t per = kh->nope + kh->v;
    if ((!qp && src_dtype_of(st->dtype) < 0) || (!qp && st->n_dims != 2) ||
        rows != kh->heads * per || block >= kh->blocks) {
        if (qp) {
            qpack_src_free(qp[0]);
            qpack_src_free(qp[1]);
        }
        return gguf_error_set(err, "%s: tensor '%s': expected %s[%" PRId64 " × (%" PRId64 " + %"
                              PRId64 "), kv_lora_rank] (num_key_value_heads × "
                              "(qk_nope_head_dim + v_head_dim)) of one of the %" PRId64 " blocks",
                              shard_of(s, st), name, qp ? "" : "F32, F16 or BF16 ", kh->heads,
                              kh->nope, kh->v, kh->blocks);
    }
    for (int half = 0; half < 2; half++) {
        const int role = half ? GGUF_ROLE_ATTN_V_B : GGUF_ROLE_ATTN_K_B;
        char gname[256];
        snprintf(gname, sizeof gname, gguf_arch_tensor_name(gguf_arch_tensor_of(m->arch, role)), block);
        const int64_t ne[3] = { half ? cols : kh->nope, half ? kh->v : cols, kh->heads };
        src_tensor *t = src_add_tensor(m, gname, qp ? SRC_QPACK : src_dtype_of(st->dtype), 3, ne,
                                       qp ? qp[half]->packed : st->data);
        if (!t) {
            for (int h = half; qp && h < 2; h++)
                qpack_src_free(qp[h]);
            return gguf_error_set(err, "out of memory");
        }
        if (qp)
            t->qp = qp[half];
        t->mapped = st->mapped;
        t->from = (src_origin){ shard_of(s, st), name };
        t->ex_block = per;
        t->ex_skip = half ? kh->nope : 0;
        t->ex_transposed = !half;
    }
    return 0;
}

/* The block of a kv_b_proj weight name
 * ("model.layers.N.self_attn.kv_b_proj.weight"), or -1 for any other name. */
static int kv_b_block(const char *name)
{
    int block, end = 0;
    if (sscanf(name, "model.layers.%d.self_attn.kv_b_proj.weight%n", &block, &end) != 1 || name[end] ||
        block < 0)
        return -1;
    return block;
}

/* An unpacked kv_b_proj st split (kv_b_make): 1 when st is one (rc set on
 * error), 0 otherwise. */
static int kv_b_split(src_model *m, const hf_state *s, const st_tensor *st, const kv_b_heads *kh,
                      int *rc, gguf_error *err)
{
    const int block = kv_b_block(st->name);
    if (block < 0)
        return 0;
    *rc = kv_b_make(m, s, st, st->name, block, st->n_dims == 2 ? st->shape[0] : 0,
                    st->n_dims == 2 ? st->shape[1] : 0, NULL, kh, err);
    return 1;
}

/* A packed kv_b_proj (wname its weight's name, st its packed tensor): its
 * dequantized values split as an unpacked one's (DeepseekV2Model splits the
 * tensor dequant_model made). 1 when wname is one (rc set on error), 0
 * otherwise. */
static int kv_b_split_packed(src_model *m, hf_state *s, const st_tensor *st, const char *wname,
                             const kv_b_heads *kh, int *rc, gguf_error *err)
{
    const int block = kv_b_block(wname);
    if (block < 0)
        return 0;
    qpack_src *qp[2] = { NULL, NULL };
    if (qpack_take(&s->qp, &s->fp8, st->name, &qp[0], err) ||
        qpack_take(&s->qp, &s->fp8, st->name, &qp[1], err)) {
        qpack_src_free(qp[0]);
        *rc = -1;
        return 1;
    }
    *rc = kv_b_make(m, s, st, st->name, block, qp[0]->rows, qp[0]->cols, qp, kh, err);
    return 1;
}

/* The packed source of st (its packed tensor, or a BitNet weight) taken
 * (qpack_take) and added as `name` (perm, block, expert, row: its mapping): a
 * tensor of its own, or an expert's slice of a stack (ex). 0, or -1 with
 * err. */
static int qpack_place(src_model *m, hf_state *s, experts *ex, const lin_heads *lh, const st_tensor *st,
                       const char *name, uint8_t perm, int block, int expert, const gguf_arch_tensor *row,
                       gguf_error *err)
{
    qpack_src *q;
    if (qpack_take(&s->qp, &s->fp8, st->name, &q, err))
        return -1;
    if (expert >= 0)
        return experts_add(ex, m, s, row, block, expert, st, q, err);
    const int64_t ne[2] = { q->cols, q->rows };
    src_tensor *t = src_add_tensor(m, name, SRC_QPACK, 2, ne, q->packed);
    if (!t) {
        free(q);
        return gguf_error_set(err, "out of memory");
    }
    t->qp = q;
    t->permute = perm;
    t->from = (src_origin){ shard_of(s, st), st->name };
    if (lh && linear_attn(t, gguf_arch_tensor_role(row), lh, err)) {
        gguf_error_prefix(err, "%s: ", shard_of(s, st));
        return -1;
    }
    return 0;
}

/* An integer-packed weight (qpack.h) of st, when st is its packed tensor: a
 * tensor of its own, or an expert's slice of a stack (ex). kh: DeepSeek's
 * heads (its multi-token prediction layers dropped), or NULL; lh: Qwen 3.5's
 * linear-attention heads (the V-head reorder of the dequantized values), or
 * NULL. 0, or -1 with err. */
static int qpack_add(src_model *m, hf_state *s, experts *ex, const kv_b_heads *kh,
                     const lin_heads *lh, const st_tensor *st, gguf_error *err)
{
    char wname[512], name[256];
    uint8_t perm;
    int block, expert;
    const gguf_arch_tensor *row;
    if (!qpack_is_main(&s->qp, st->name, wname, sizeof wname) || (kh && mtp_layer(wname, kh->blocks)))
        return 0;
    int rc = 0;
    if (kh && kv_b_split_packed(m, s, st, wname, kh, &rc, err))
        return rc;
    int r = arch_map_name(m->arch, wname, name, sizeof name, &perm, &block, &expert, &row);
    if (r == 0)
        return 0;
    if (r < 0)
        return gguf_error_set(err, "%s: tensor '%s': no %s tensor of that name (cannot map it)",
                              shard_of(s, st), wname, gguf_arch_name(m->arch));
    return qpack_place(m, s, ex, lh, st, name, perm, block, expert, row, err);
}

static int load_weights(src_model *m, hf_state *s, gguf_error *err)
{
    char **parts = NULL;
    int n_parts = 0;
    bool torch = false;
    if (hf_list_parts(s->dir, "model", ".safetensors", &parts, &n_parts, err))
        return -1;
    if (n_parts == 0) {
        torch = true;
        if (hf_list_parts(s->dir, "pytorch_model", ".bin", &parts, &n_parts, err))
            return -1;
    }
    int rc = 0;
    if (n_parts == 0)
        rc = gguf_error_set(err, "no weights (model*.safetensors or pytorch_model*.bin)");
    if (!rc && (!(s->shards = calloc((size_t)n_parts, sizeof *s->shards)) ||
                !(s->shard_names = calloc((size_t)n_parts, sizeof *s->shard_names))))
        rc = gguf_error_set(err, "out of memory");
    for (int i = 0; i < n_parts && !rc; i++) {
        char path[4096];
        join(path, sizeof path, s->dir, parts[i]);
        if ((torch ? torch_open : st_open)(path, &s->shards[i], err)) {
            gguf_error_prefix(err, "%s: ", parts[i]);
            rc = -1;
        } else {
            /* llama.cpp e21cdc11 reads a safetensors file's tensors in name
             * order (gguf-py's SafetensorsLocal sorts them), not header
             * order; a torch file's stay in pickle order */
            if (!torch && !s->file_order)
                qsort(s->shards[i].tensors, s->shards[i].n, sizeof *s->shards[i].tensors,
                      cmp_st_name);
            s->shard_names[i] = parts[i]; /* kept, for messages */
            parts[i] = NULL;
            s->n_shards++;
        }
    }
    for (int i = 0; i < n_parts; i++)
        free(parts[i]);
    free(parts);
    if (rc || check_index(s, torch ? "pytorch_model.bin.index.json" : "model.safetensors.index.json", err))
        return -1;
    if (fp8_plan_read(&s->fp8, s->config, s->shards, (const char *const *)s->shard_names,
                      s->n_shards, err) ||
        qpack_plan_read(&s->qp, s->config, err) || qpack_plan_check(&s->qp, &s->fp8, err))
        return -1;
    const json_value *rs = json_get(s->config, "rope_scaling");
    const char *rope_type = json_str(json_get(rs, "rope_type"));
    if (rs && rs->type != JSON_NULL && gguf_arch_tensor_of(m->arch, GGUF_ROLE_ROPE_FACTORS_LONG) &&
        add_longrope(m, s, rs, err))
        return -1;
    if (gguf_arch_has(m->arch, GGUF_FEAT_ROPE_LLAMA3) && rope_type && !strcasecmp(rope_type, "llama3") &&
        add_rope_freqs(m, s, rs, err))
        return -1;

    if (fact(m->arch, GGUF_FACT_ROPE_PROPORTIONAL) && add_rope_proportional(m, s, err))
        return -1;
    if (fact(m->arch, GGUF_FACT_MXFP4_EXPERTS) && mxfp4_experts(m, s, err))
        return -1;

    experts ex = { 0 };
    int rc2 = experts_init(&ex, m->arch, s, err);
    lin_heads lh = { 0 };
    int64_t n_blocks = 0;
    const bool qwen35 = gguf_arch_has(m->arch, GGUF_FEAT_DELTA_NET);
    kv_b_heads kh = { 0 };
    const bool kv_b = fact(m->arch, GGUF_FACT_KV_B_SPLIT);
    if (!rc2 && kv_b && kv_b_heads_read(s, &kh, err))
        rc2 = -1;
    if (!rc2 && qwen35 &&
        (lin_heads_read(s->config, &lh, err) ||
         cfg_count(hparam(s, layer_keys), "num_hidden_layers", 1, 100000, &n_blocks, err)))
        rc2 = -1;
    for (int k = 0; k < s->n_shards && !rc2; k++) {
        for (size_t i = 0; i < s->shards[k].n && !rc2; i++) {
            const st_tensor *st = &s->shards[k].tensors[i];
            char name[256];
            uint8_t perm;
            int block, expert;
            const gguf_arch_tensor *row;
            if (fp8_consumed(&s->fp8, st) || qpack_consumed(&s->qp, st->name) ||
                mxfp4_take(m, s, st, &rc2, err))
                continue;
            /* a BitNet kv_b_proj is split where it stands, as the others */
            if (kv_b && (mtp_layer(st->name, kh.blocks) ||
                         (qpack_in_place(&s->qp, &s->fp8, st->name)
                              ? kv_b_split_packed(m, s, st, st->name, &kh, &rc2, err)
                              : kv_b_split(m, s, st, &kh, &rc2, err))))
                continue;
            if (qwen35 && gguf_arch_has(m->arch, GGUF_FEAT_EXPERTS) &&
                qwen35_experts(m, s, st, (int)n_blocks, &rc2, err))
                continue;
            int r = arch_map_name(m->arch, st->name, name, sizeof name, &perm, &block, &expert, &row);
            if (r == 0)
                continue;
            if (r < 0) {
                rc2 = gguf_error_set(err, "tensor '%s': no %s tensor of that name (cannot map it)",
                                     st->name, gguf_arch_name(m->arch));
            } else if (qpack_in_place(&s->qp, &s->fp8, st->name)) {
                /* a BitNet weight: dequant_model replaces it where it stands
                 * (Qwen 3.5's V heads reordered after, as the others') */
                rc2 = qpack_place(m, s, &ex, qwen35 ? &lh : NULL, st, name, perm, block, expert, row, err);
            } else if (src_dtype_of(st->dtype) < 0) {
                rc2 = gguf_error_set(err, "tensor '%s': unsupported dtype %s (F32, F16, BF16)",
                                     st->name, st->dtype);
            } else if (st->n_dims < 1 || st->n_dims > 4 - (expert >= 0)) {
                rc2 = gguf_error_set(err, "tensor '%s': %d dimensions (1 to %d supported)",
                                     st->name, st->n_dims, 4 - (expert >= 0));
            } else if (expert >= 0) {
                rc2 = experts_add(&ex, m, s, row, block, expert, st, NULL, err);
            } else {
                int64_t ne[4];
                for (int d = 0; d < st->n_dims; d++)
                    ne[d] = st->shape[st->n_dims - 1 - d];
                src_tensor *t = src_add_tensor(m, name, src_dtype_of(st->dtype), st->n_dims, ne, st->data);
                if (!t) {
                    rc2 = gguf_error_set(err, "out of memory");
                } else {
                    t->permute = (uint8_t)perm;
                    t->mapped = st->mapped;
                    t->from = (src_origin){ shard_of(s, st), st->name };
                    /* Gemma's and Qwen 3.5's x·(1 + w) norms: every *norm.weight
                     * + 1 (but Qwen 3.5's gated norm) */
                    const float offset = gguf_recipe_of(m->arch)->norm_offset;
                    if (offset != 0 && ends_with(st->name, "norm.weight") &&
                        !ends_with(st->name, "linear_attn.norm.weight"))
                        t->add = offset;
                    if (qwen35)
                        rc2 = linear_attn(t, gguf_arch_tensor_role(row), &lh, err);
                }
            }
        }
    }
    /* the packed weights, as dequant_model adds them: after the rest */
    for (int k = 0; k < s->n_shards && !rc2; k++)
        for (size_t i = 0; i < s->shards[k].n && !rc2; i++)
            rc2 = qpack_add(m, s, &ex, kv_b ? &kh : NULL, qwen35 ? &lh : NULL,
                            &s->shards[k].tensors[i], err);
    if (!rc2)
        rc2 = experts_check_done(&ex, err);
    if (!rc2)
        rc2 = fp8_attach(&s->fp8, m, err);
    experts_free(&ex);
    return rc2;
}

/* ------------------------------------------------------------------------
 * Vocabulary
 * ------------------------------------------------------------------------ */

/* Replaces every U+2581 (the SentencePiece space) by ' '. */
static size_t unescape_spaces(char *t)
{
    char *w = t;
    for (const char *r = t; *r;) {
        if (!strncmp(r, "\xe2\x96\x81", 3)) {
            *w++ = ' ';
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
    return (size_t)(w - t);
}

/* Without tokenizer.model: tokenizer.json, as byte-level BPE or (for the
 * llama family, when it has byte fallback) as SentencePiece pieces. */
static int load_vocab_json(hf_state *s, const gguf_arch *arch, int64_t n, gguf_error *err)
{
    if (!s->tokenizer_json) {
        /* Kimi K2 / K2.5: tiktoken.model (DeepseekV2Model.set_vocab's "kimi-k2") */
        char path[4096];
        join(path, sizeof path, s->dir, "tiktoken.model");
        if (!strcmp(gguf_arch_name(arch), "deepseek2") && file_exists(path))
            return vocab_from_tiktoken(&s->voc, path, s->tok_config, n, err);
        return gguf_error_set(err, "no tokenizer.model or tokenizer.json in the folder");
    }
    if (!strcmp(gguf_arch_name(arch), "gemma4")) /* Gemma4Model.set_vocab */
        return vocab_from_gemma4_json(&s->voc, s->tokenizer_json, s->tok_config, err);
    if (fact(arch, GGUF_FACT_LLAMA_VOCAB) && tokjson_kind(s->tokenizer_json) == TOKJSON_SPM_BPE)
        return vocab_from_spm_json(&s->voc, s->tokenizer_json, s->tok_config, err);
    if (vocab_from_bpe_json(&s->voc, s->tokenizer_json, n, err))
        return -1;
    /* GLM-4.5/4.6/4.7 split as Llama 3 does; e21cdc11 knows their
     * tokenizers (by hash) as "glm4", which llama.cpp loads without a
     * default BOS */
    if (s->glm_vocab && !strcmp(s->voc.pre, "llama-bpe"))
        s->voc.pre = "glm4";
    return 0;
}

/* The classes whose set_vocab is e21cdc11's _set_vocab_glm: Glm4MoeModel
 * and Glm4MoeLiteModel (GLM-4.7-Flash, a deepseek2). */
static bool glm_vocab_class(const char *hf_arch)
{
    return !strcmp(hf_arch, "Glm4MoeForCausalLM") || !strcmp(hf_arch, "Glm4MoeLiteForCausalLM");
}

/* Phi3MiniModel: tokenizer.json's added_tokens [{"id", "content",
 * "special"}] over the vocabulary, as user-defined or (special) control
 * tokens of score -1000. */
static int add_json_tokens(hf_state *s, int64_t n, gguf_error *err)
{
    const json_value *added = json_get(s->tokenizer_json, "added_tokens");
    for (size_t i = 0; added && added->type == JSON_ARRAY && i < added->n; i++) {
        const json_value *t = added->items[i];
        const char *content = json_str(json_get(t, "content"));
        const json_value *special = json_get(t, "special");
        int64_t id;
        if (!json_int(json_get(t, "id"), &id) || id < 0 || id >= n || !content)
            return gguf_error_set(err, "tokenizer.json line %zu: added token without content or "
                                  "with an id outside the vocabulary of %" PRId64, t->line, n);
        if (vocab_set(&s->voc, id, content, strlen(content)))
            return gguf_error_set(err, "out of memory");
        s->voc.scores[id] = -1000.0f;
        s->voc.types[id] = special && special->type == JSON_BOOL && special->b
                         ? GGUF_TOKEN_CONTROL : GGUF_TOKEN_USER_DEFINED;
    }
    return 0;
}

static int load_vocab(hf_state *s, const gguf_arch *arch, gguf_error *err)
{
    char path[4096];
    int64_t n = -1;
    if (json_get(s->config, "vocab_size") && !json_int(json_get(s->config, "vocab_size"), &n))
        return gguf_error_set(err, "config.json: vocab_size is not a count");
    join(path, sizeof path, s->dir, "tokenizer.model");
    const bool phi3 = fact(arch, GGUF_FACT_PHI3_VOCAB);
    if (phi3) { /* Phi-4's GPT2Tokenizer is BPE; any other needs tokenizer.model */
        const char *cls = json_str(json_get(s->tok_config, "tokenizer_class"));
        if (cls && !strcmp(cls, "GPT2Tokenizer"))
            return load_vocab_json(s, arch, n, err);
        if (!file_exists(path))
            return gguf_error_set(err, "tokenizer.model: not found (a %s vocabulary other than a "
                                  "GPT2Tokenizer is SentencePiece)", gguf_arch_name(arch));
    }
    if (!file_exists(path))
        return load_vocab_json(s, arch, n, err);
    if (vocab_from_spm(&s->voc, path, n, err)) {
        gguf_error_prefix(err, "tokenizer.model: ");
        return -1;
    }
    s->spm = true;
    n = s->voc.n;
    int rc;

    /* added_tokens.json: {"text": id} */
    json_value *added;
    if (load_json(s, "added_tokens.json", false, &added, err))
        return -1;
    for (size_t i = 0; added && added->type == JSON_OBJECT && i < added->n; i++) {
        int64_t id;
        if (!json_int(added->items[i], &id) || id < 0 || id >= n)
            continue; /* llama.cpp skips ids out of range */
        if (vocab_set(&s->voc, id, added->keys[i], strlen(added->keys[i]))) {
            json_free(added);
            return gguf_error_set(err, "out of memory");
        }
        s->voc.scores[id] = -1000.0f;
        s->voc.types[id] = GGUF_TOKEN_USER_DEFINED;
    }
    json_free(added);

    /* tokenizer_config.json added_tokens_decoder: {"id": {"content", "special"}} */
    const json_value *dec = json_get(s->tok_config, "added_tokens_decoder");
    for (size_t i = 0; dec && dec->type == JSON_OBJECT && i < dec->n; i++) {
        char *end;
        long long id = strtoll(dec->keys[i], &end, 10);
        const json_value *d = dec->items[i];
        const char *content = json_str(json_get(d, "content"));
        if (*end || id < 0 || id >= n)
            return gguf_error_set(err, "tokenizer_config.json line %zu: added token id '%s' is "
                                  "outside the vocabulary of %" PRId64, d->line, dec->keys[i], n);
        if (!content)
            return gguf_error_set(err, "tokenizer_config.json line %zu: added token %lld has no "
                                  "content", d->line, id);
        const json_value *special = json_get(d, "special");
        char *text = strdup(content);
        if (!text)
            return gguf_error_set(err, "out of memory");
        size_t len = strlen(text);
        const bool is_special = special && special->type == JSON_BOOL && special->b;
        if (phi3) { /* typed by "special" alone, the text kept as it is */
            s->voc.types[id] = is_special ? GGUF_TOKEN_CONTROL : GGUF_TOKEN_USER_DEFINED;
        } else if (is_special || tokjson_looks_special(text)) {
            s->voc.types[id] = GGUF_TOKEN_CONTROL;
        } else {
            len = unescape_spaces(text);
            s->voc.types[id] = GGUF_TOKEN_USER_DEFINED;
        }
        s->voc.scores[id] = -1000.0f;
        rc = vocab_set(&s->voc, id, text, len);
        free(text);
        if (rc)
            return gguf_error_set(err, "out of memory");
    }
    return phi3 ? add_json_tokens(s, n, err) : 0;
}

/* Gemma3Model keeps token_embd's first rows, as many as the vocabulary
 * has tokens (the checkpoint pads it for the image tokens). */
static void trim_embd(src_model *m, const hf_state *s)
{
    if (!fact(m->arch, GGUF_FACT_TRIM_EMBD))
        return;
    for (int i = 0; i < m->n_tensors; i++) {
        src_tensor *t = &m->tensors[i];
        if (!strcmp(t->name, GGUF_T_TOKEN_EMBD) && t->n_dims == 2 && !t->parts &&
            t->ne[1] > s->voc.n && s->voc.n > 0)
            t->ne[1] = s->voc.n;
    }
}

/* ------------------------------------------------------------------------
 * Metadata
 * ------------------------------------------------------------------------ */

static int put_hparam(gguf_writer *w, const char *arch, const gguf_recipe_hf_hparam *r,
                      const json_value *v, gguf_error *err)
{
    char key[128];
    snprintf(key, sizeof key, gguf_hp_key(r->id), arch);
    if (!r->is_float) {
        int64_t x;
        if (cfg_count(v, r->hf[0], 0, UINT32_MAX, &x, err))
            return -1;
        return gguf_writer_set_u32(w, key, (uint32_t)x) ? gguf_error_set(err, "out of memory") : 0;
    }
    /* eps, rope bases, soft-caps: all positive */
    double x;
    if (cfg_float(v, r->hf[0], true, &x, err))
        return -1;
    return gguf_writer_set_f32(w, key, (float)x) ? gguf_error_set(err, "out of memory") : 0;
}

/* SpecialVocab: ids from tokenizer_config.json's *_token strings looked up
 * in tokenizer.json's added_tokens, then config.json's *_token_id; the
 * first source to give a valid id wins. */
static const struct {
    const char *typ;
    int         id; /* enum gguf_special: its key */
} special_tokens[] = {
    { "bos", GGUF_SPECIAL_BOS }, { "eos", GGUF_SPECIAL_EOS }, { "unk", GGUF_SPECIAL_UNK },
    { "sep", GGUF_SPECIAL_SEP }, { "pad", GGUF_SPECIAL_PAD }, { "cls", GGUF_SPECIAL_CLS },
    { "mask", GGUF_SPECIAL_MASK },
    /* set only by _set_vocab_glm */
    { "eot", GGUF_SPECIAL_EOT }, { "eom", GGUF_SPECIAL_EOM },
};
#define N_SPECIAL (sizeof special_tokens / sizeof *special_tokens)
#define N_SPECIAL_READ 7 /* SpecialVocab's types: bos .. mask */

/* _set_vocab_glm's tokens, after SpecialVocab's (each only when still
 * unset): its index in special_tokens and the added token's text. */
static const struct {
    int         t;
    const char *text;
} glm_special[] = { { 0, "[gMASK]" }, { 7, "<|user|>" }, { 2, "<|endoftext|>" }, { 8, "<|observation|>" } };

/* get_added_vocab()[text]: the id of the added token with that content
 * (the last one, as a dict keeps it); -1 when none. */
static int64_t added_id(const json_value *added, const char *text)
{
    int64_t id = -1, x;
    for (size_t a = 0; added && added->type == JSON_ARRAY && a < added->n; a++) {
        const char *c = json_str(json_get(added->items[a], "content"));
        if (c && !strcmp(c, text) && json_int(json_get(added->items[a], "id"), &x))
            id = x;
    }
    return id;
}

static int write_special(hf_state *s, gguf_writer *w, gguf_error *err)
{
    int64_t ids[N_SPECIAL];
    int order[2 * N_SPECIAL], n_order = 0;
    for (size_t t = 0; t < N_SPECIAL; t++)
        ids[t] = -1;
    const json_value *added = json_get(s->tokenizer_json, "added_tokens");
    /* pass 0: tokenizer_config + tokenizer.json; pass 1: config.json */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t t = 0; t < N_SPECIAL_READ; t++) {
            char key[32];
            int64_t id = -1;
            bool have = false;
            if (pass == 0) {
                snprintf(key, sizeof key, "%s_token", special_tokens[t].typ);
                const json_value *e = json_get(s->tok_config, key);
                const char *content = json_str(e) ? json_str(e) : json_str(json_get(e, "content"));
                for (size_t a = 0; content && added && added->type == JSON_ARRAY && a < added->n; a++)
                    if (json_str(json_get(added->items[a], "content")) &&
                        !strcmp(json_str(json_get(added->items[a], "content")), content)) {
                        have = json_int(json_get(added->items[a], "id"), &id);
                        break;
                    }
            } else {
                snprintf(key, sizeof key, "%s_token_id", special_tokens[t].typ);
                have = json_int(config_special_get(s, key), &id);
            }
            if (!have)
                continue;
            if (id < 0)
                return gguf_error_set(err, "invalid id %" PRId64 " for special token %s", id,
                                      special_tokens[t].typ);
            if (id < s->voc.n && ids[t] < 0) {
                ids[t] = id;
                order[n_order++] = (int)t;
            }
        }
    }
    for (size_t g = 0; s->glm_vocab && !s->spm && g < sizeof glm_special / sizeof *glm_special; g++) {
        int64_t id = added_id(added, glm_special[g].text);
        if (id < 0) /* get_added_vocab()[...] raises */
            return gguf_error_set(err, "tokenizer.json: no added token \"%s\" (a GLM vocabulary "
                                  "names it as its %s token)", glm_special[g].text,
                                  special_tokens[glm_special[g].t].typ);
        if (ids[glm_special[g].t] < 0) {
            ids[glm_special[g].t] = id;
            order[n_order++] = glm_special[g].t;
        }
    }
    for (int i = 0; i < n_order; i++)
        if (gguf_writer_set_u32(w, gguf_special_keys[special_tokens[order[i]].id],
                                (uint32_t)ids[order[i]]))
            return gguf_error_set(err, "out of memory");
    static const struct { const char *cfg, *key; } add[] = {
        { "add_bos_token", GGUF_KEY_TOK_ADD_BOS }, { "add_eos_token", GGUF_KEY_TOK_ADD_EOS },
    };
    for (size_t i = 0; i < 2; i++) {
        const json_value *v = json_get(s->tok_config, add[i].cfg);
        if (v && v->type == JSON_BOOL && gguf_writer_set_bool(w, add[i].key, v->b))
            return gguf_error_set(err, "out of memory");
    }
    chat_templates ct;
    if (chat_templates_from_folder(&ct, s->dir, s->tok_config, err))
        return -1;
    int rc = chat_templates_write(&ct, w, err);
    chat_templates_free(&ct);
    return rc;
}

/* tokenizer.ggml.*: the vocabulary, special tokens, add_space_prefix. */
static int write_vocab_keys(src_model *m, hf_state *s, gguf_writer *w, gguf_error *err)
{
    if (vocab_write(&s->voc, w, err))
        return -1;
    if (write_special(s, w, err))
        return -1;
    const json_value *aps = json_get(s->tok_config, "add_prefix_space");
    if (fact(m->arch, GGUF_FACT_LLAMA_VOCAB) && aps && aps->type == JSON_BOOL &&
        gguf_writer_set_bool(w, "tokenizer.ggml.add_space_prefix", aps->b))
        return gguf_error_set(err, "out of memory");
    /* Gemma 4 from tokenizer.json: no leading space, BOS always */
    if (s->voc.model && !strcmp(s->voc.model, "gemma4") &&
        (gguf_writer_set_bool(w, "tokenizer.ggml.add_space_prefix", false) ||
         gguf_writer_set_bool(w, GGUF_KEY_TOK_ADD_BOS, true)))
        return gguf_error_set(err, "out of memory");
    /* Gemma: a SentencePiece vocabulary without the leading space */
    if (fact(m->arch, GGUF_FACT_NO_SPACE_PREFIX) && s->spm &&
        gguf_writer_set_bool(w, "tokenizer.ggml.add_space_prefix", false))
        return gguf_error_set(err, "out of memory");
    return 0;
}

/* Whether a row is left out, as its when column says (arch_recipe.h): a
 * sliding window when config.json's sliding_window_pattern is 1 (no local
 * layers), an optional value of 0 (a required one of 0 is written, and
 * refused as a model). */
static bool hparam_skipped(const hf_state *s, const gguf_recipe_hf_hparam *r, const json_value *hv)
{
    int64_t pattern;
    double x;
    switch (r->when) {
    case GGUF_WHEN_NOT_PATTERN_1:
        return json_int(json_get(s->config, "sliding_window_pattern"), &pattern) && pattern == 1;
    case GGUF_WHEN_NONZERO:
        return !r->required && hv && json_num(hv, &x) && x == 0;
    }
    return false;
}

/* rope scaling as e21cdc11's base converter writes it for every
 * architecture: config.json's "rope_parameters" or "rope_scaling" (its
 * "rope_type", or the older "type"); "linear" gives the type and factor,
 * "yarn" also the original context and the YaRN parameters config.json
 * gives. Other types write nothing here ("llama3" is the generated
 * rope_freqs tensor). Phi3MiniModel and Gemma2Model write none of these
 * (GGUF_ARCH_OWN_ROPE_KEYS): Phi-3's LongRoPE is add_longrope's. */
static int put_rope_scaling_type(gguf_writer *w, const json_value *rs, const char *arch,
                                 gguf_error *err);

/* The M-RoPE sections (rope_parameters' mrope_section), padded with 0 to
 * four, as the base converter writes them after the rope scaling keys. */
static int put_rope_sections(gguf_writer *w, const json_value *rs, const char *arch,
                             gguf_error *err)
{
    const json_value *ms = rs && rs->type == JSON_OBJECT ? json_get(rs, "mrope_section") : NULL;
    if (!ms)
        return 0;
    if (ms->type != JSON_ARRAY || ms->n > 4)
        return gguf_error_set(err, "config.json line %zu: rope_parameters.mrope_section is not a "
                              "list of up to 4 whole numbers", ms->line);
    int32_t v[4] = { 0 };
    for (size_t i = 0; i < ms->n; i++) {
        int64_t x;
        if (cfg_count(ms->items[i], "rope_parameters.mrope_section", 0, INT32_MAX, &x, err))
            return -1;
        v[i] = (int32_t)x;
    }
    char key[128];
    snprintf(key, sizeof key, GGUF_KEY_ROPE_DIM_SECTIONS, arch);
    return gguf_writer_set_array(w, key, GGUF_VT_I32, v, 4) ? gguf_error_set(err, "out of memory")
                                                            : 0;
}

static int put_rope_scaling(gguf_writer *w, const hf_state *s, const char *arch, gguf_error *err)
{
    const json_value *rs = json_get(s->config, "rope_parameters");
    if (!rs || rs->type != JSON_OBJECT)
        rs = json_get(s->config, "rope_scaling");
    /* e21cdc11 takes the type from rope_parameters' full_attention part
     * when it has one (Gemma 4), the M-RoPE sections from the whole */
    const json_value *full = json_get(rs, "full_attention");
    if (put_rope_scaling_type(w, full && full->type == JSON_OBJECT ? full : rs, arch, err))
        return -1;
    return put_rope_sections(w, rs, arch, err);
}

static int put_rope_scaling_type(gguf_writer *w, const json_value *rs, const char *arch,
                                 gguf_error *err)
{
    const char *type = json_str(json_get(rs, "rope_type"));
    if (!type)
        type = json_str(json_get(rs, "type"));
    double factor, x;
    if (!type || (strcmp(type, "yarn") && strcmp(type, "linear")))
        return 0;
    const json_value *fv = json_get(rs, "factor");
    if (!fv)
        return 0; /* the base converter writes nothing without a factor */
    if (!json_num(fv, &factor) || !f32_finite(factor) || factor <= 0)
        return gguf_error_set(err, "config.json line %zu: rope_scaling.factor is not a positive "
                              "number", fv->line);
    char key[128];
    snprintf(key, sizeof key, GGUF_KEY_ROPE_SCALING_TYPE, arch);
    int bad = gguf_writer_set_str(w, key, type);
    snprintf(key, sizeof key, GGUF_KEY_ROPE_SCALING_FACTOR, arch);
    bad |= gguf_writer_set_f32(w, key, (float)factor);
    if (!strcmp(type, "linear"))
        return bad ? gguf_error_set(err, "out of memory") : 0;
    int64_t orig;
    if (cfg_count(json_get(rs, "original_max_position_embeddings"),
                  "rope_scaling.original_max_position_embeddings", 0, UINT32_MAX, &orig, err))
        return -1;
    snprintf(key, sizeof key, GGUF_KEY_ROPE_SCALING_ORIG_CTX, arch);
    bad |= gguf_writer_set_u32(w, key, (uint32_t)orig);
    static const struct { const char *hf[2], *key; } opt[] = {
        { { "extrapolation_factor" }, GGUF_KEY_ROPE_YARN_EXT_FACTOR },
        { { "attention_factor", "attn_factor" }, GGUF_KEY_ROPE_YARN_ATTN_FACTOR },
        { { "beta_fast" }, GGUF_KEY_ROPE_YARN_BETA_FAST },
        { { "beta_slow" }, GGUF_KEY_ROPE_YARN_BETA_SLOW },
    };
    for (size_t i = 0; i < sizeof opt / sizeof *opt; i++) {
        const json_value *v = json_get(rs, opt[i].hf[0]);
        if (!v && opt[i].hf[1])
            v = json_get(rs, opt[i].hf[1]);
        if (!v)
            continue;
        if (!json_num(v, &x) || !f32_finite(x))
            return gguf_error_set(err, "config.json line %zu: rope_scaling.%s is not a finite "
                                  "number", v->line, opt[i].hf[0]);
        snprintf(key, sizeof key, opt[i].key, arch);
        bad |= gguf_writer_set_f32(w, key, (float)x);
    }
    return bad ? gguf_error_set(err, "out of memory") : 0;
}

/* {arch}.block_count from the first of the names llama.cpp's converter
 * tries (its block_count). */
static int put_block_count(gguf_writer *w, const hf_state *s, const char *arch, gguf_error *err)
{
    char key[128];
    int64_t x;
    if (hf_blocks(s, gguf_arch_find(arch), &x, err))
        return -1;
    snprintf(key, sizeof key, GGUF_KEY_BLOCK_COUNT, arch);
    return gguf_writer_set_u32(w, key, (uint32_t)x) ? gguf_error_set(err, "out of memory") : 0;
}

/* layer_types as one bool per layer, true for "sliding_attention"
 * (check_layers has checked its entries); NULL with the error set when it
 * is missing. */
static bool *swa_layers(const hf_state *s, int64_t *n, gguf_error *err)
{
    const json_value *types = json_get(s->config, "layer_types");
    if (!types || types->type != JSON_ARRAY || !types->n) {
        gguf_error_set(err, "config.json: required 'layer_types' is missing");
        return NULL;
    }
    bool *swa = malloc(types->n * sizeof *swa);
    if (!swa) {
        gguf_error_set(err, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < types->n; i++) {
        const char *t = json_str(types->items[i]);
        swa[i] = t && !strcmp(t, "sliding_attention");
    }
    *n = (int64_t)types->n;
    return swa;
}

/* The per-layer values of Gemma 4 (GGUF_MAKE_SWA_LAYERS,
 * GGUF_MAKE_FF_DOUBLE_WIDE, GGUF_MAKE_KV_HEADS_SWA_FULL): an array of one
 * entry per layer under the row's key, or nothing as the make says. */
static int put_per_layer(gguf_writer *w, const hf_state *s, const char *key,
                         const gguf_recipe_hf_hparam *r, const json_value *hv, gguf_error *err)
{
    int64_t n = 0, value = 0, other = 0, first = 0;
    const json_value *dw = json_get(s->config, "use_double_wide_mlp");
    const json_value *kv = json_get(s->config, "num_key_value_heads");
    if (r->make == GGUF_MAKE_FF_DOUBLE_WIDE) {
        static const char *const shared[] = { "num_kv_shared_layers", NULL };
        if (!dw || dw->type != JSON_BOOL || !dw->b)
            return 0;
        if (cfg_count(hv, r->hf[0], 0, INT32_MAX / 2, &value, err) ||
            cfg_count(hparam(s, layer_keys), "num_hidden_layers", 1, 100000, &n, err) ||
            cfg_count(hparam(s, shared), "num_kv_shared_layers", 0, 100000, &first, err))
            return -1;
        first = n - first;
        int32_t *ff = malloc((size_t)n * sizeof *ff);
        if (!ff)
            return gguf_error_set(err, "out of memory");
        for (int64_t il = 0; il < n; il++)
            ff[il] = (int32_t)(il < first ? value : 2 * value);
        const int bad = gguf_writer_set_array(w, key, GGUF_VT_I32, ff, (uint64_t)n);
        free(ff);
        return bad ? gguf_error_set(err, "out of memory") : 0;
    }
    if (r->make == GGUF_MAKE_KV_HEADS_SWA_FULL &&
        (!hv || !kv || kv->type == JSON_NULL))
        return 0;
    bool *swa = swa_layers(s, &n, err);
    if (!swa)
        return -1;
    int bad = 0;
    if (r->make == GGUF_MAKE_SWA_LAYERS) {
        uint8_t *b = malloc((size_t)n);
        if (!b) {
            free(swa);
            return gguf_error_set(err, "out of memory");
        }
        for (int64_t il = 0; il < n; il++)
            b[il] = swa[il];
        bad = gguf_writer_set_array(w, key, GGUF_VT_BOOL, b, (uint64_t)n);
        free(b);
    } else {
        int32_t *h = malloc((size_t)n * sizeof *h);
        if (!h || cfg_count(hv, r->hf[0], 0, INT32_MAX, &value, err) ||
            cfg_count(kv, "num_key_value_heads", 0, INT32_MAX, &other, err)) {
            free(h);
            free(swa);
            return h ? -1 : gguf_error_set(err, "out of memory");
        }
        for (int64_t il = 0; il < n; il++)
            h[il] = (int32_t)(swa[il] ? other : value);
        bad = gguf_writer_set_array(w, key, GGUF_VT_I32, h, (uint64_t)n);
        free(h);
    }
    free(swa);
    return bad ? gguf_error_set(err, "out of memory") : 0;
}

/* One row of a config.json table, from its first present name (a null
 * value counts as absent). */
static int put_hparam_row(gguf_writer *w, const hf_state *s, const char *arch,
                          const gguf_recipe_hf_hparam *r, gguf_error *err)
{
    char key[128];
    const json_value *hv = hparam(s, r->hf);
    if (hv && hv->type == JSON_NULL)
        hv = NULL;
    snprintf(key, sizeof key, gguf_hp_key(r->id), arch);
    if (r->make == GGUF_MAKE_BLOCK_COUNT)
        return put_block_count(w, s, arch, err);
    if (r->make == GGUF_MAKE_ROTARY) {
        int64_t rot;
        if (rotary_dims(s, &rot, err))
            return -1;
        return gguf_writer_set_u32(w, key, (uint32_t)rot) ? gguf_error_set(err, "out of memory") : 0;
    }
    if (r->make == GGUF_MAKE_ROPE_THETA) {
        const json_value *rs = json_get(s->config, "rope_parameters");
        if (!rs || rs->type != JSON_OBJECT)
            rs = json_get(s->config, "rope_scaling");
        const json_value *theta = rs && rs->type == JSON_OBJECT ? json_get(rs, "rope_theta") : NULL;
        if (theta && theta->type != JSON_NULL)
            hv = theta;
    }
    if (r->make == GGUF_MAKE_PRODUCT) {
        int64_t a, b;
        if (cfg_count(json_get(s->config, r->hf[0]), r->hf[0], 1, UINT32_MAX, &a, err) ||
            cfg_count(json_get(s->config, r->hf[1]), r->hf[1], 1, UINT32_MAX, &b, err))
            return -1;
        if (a * b > UINT32_MAX)
            return gguf_error_set(err, "config.json: %s × %s = %" PRId64 " is too large", r->hf[0],
                                  r->hf[1], a * b);
        return gguf_writer_set_u32(w, key, (uint32_t)(a * b)) ? gguf_error_set(err, "out of memory")
                                                               : 0;
    }
    if (r->make == GGUF_MAKE_ROTARY_HEAD) {
        static const char *const hidden_keys[] = { "hidden_size", NULL };
        static const char *const head_keys[] = { "num_attention_heads", NULL };
        int64_t hd, hidden, heads;
        double f = r->def;
        const json_value *hdv = json_get(s->config, "head_dim");
        if (hdv && hdv->type != JSON_NULL) {
            if (cfg_count(hdv, "head_dim", 1, UINT32_MAX, &hd, err))
                return -1;
        } else {
            if (cfg_count(hparam(s, hidden_keys), "hidden_size", 1, UINT32_MAX, &hidden, err) ||
                cfg_count(hparam(s, head_keys), "num_attention_heads", 1, UINT32_MAX, &heads, err))
                return -1;
            hd = hidden / heads;
        }
        if (hv && (!json_num(hv, &f) || !(f > 0 && f <= 1)))
            return gguf_error_set(err, "config.json line %zu: '%s' is not a number in (0, 1]",
                                  hv->line, r->hf[0]);
        const int64_t rot = (int64_t)((double)hd * f);
        return gguf_writer_set_u32(w, key, (uint32_t)rot) ? gguf_error_set(err, "out of memory") : 0;
    }
    if (r->make == GGUF_MAKE_SUM) {
        int64_t a, b;
        if (cfg_count(json_get(s->config, r->hf[0]), r->hf[0], 0, UINT32_MAX, &a, err) ||
            cfg_count(json_get(s->config, r->hf[1]), r->hf[1], 0, UINT32_MAX, &b, err))
            return -1;
        if (a + b > UINT32_MAX)
            return gguf_error_set(err, "config.json: %s + %s = %" PRId64 " is too large", r->hf[0],
                                  r->hf[1], a + b);
        return gguf_writer_set_u32(w, key, (uint32_t)(a + b)) ? gguf_error_set(err, "out of memory")
                                                               : 0;
    }
    if (r->make == GGUF_MAKE_GATING_FUNC) {
        if (!hv)
            return 0;
        const char *f = json_str(hv);
        if (!f || (strcmp(f, "sigmoid") && strcmp(f, "softmax")))
            return gguf_error_set(err, "config.json line %zu: the experts' scoring function "
                                  "(scoring_func) is not \"sigmoid\" or \"softmax\"", hv->line);
        return gguf_writer_set_u32(w, key, strcmp(f, "sigmoid") ? 1 : 2)
                   ? gguf_error_set(err, "out of memory") : 0;
    }
    if (r->make == GGUF_MAKE_YARN_LOG_MUL) {
        const json_value *rs = json_get(s->config, "rope_parameters");
        if (!rs || rs->type != JSON_OBJECT)
            rs = json_get(s->config, "rope_scaling");
        const json_value *v = rs && rs->type == JSON_OBJECT ? json_get(rs, r->hf[0]) : NULL;
        double x;
        if (!v || v->type == JSON_NULL)
            return 0;
        if (!json_num(v, &x) || !f32_finite(0.1 * x))
            return gguf_error_set(err, "config.json line %zu: rope_scaling.%s is not a finite "
                                  "number", v->line, r->hf[0]);
        return gguf_writer_set_f32(w, key, (float)(0.1 * x)) ? gguf_error_set(err, "out of memory")
                                                               : 0;
    }
    if (r->make == GGUF_MAKE_SWA_LAYERS || r->make == GGUF_MAKE_FF_DOUBLE_WIDE ||
        r->make == GGUF_MAKE_KV_HEADS_SWA_FULL)
        return put_per_layer(w, s, key, r, hv, err);
    if (r->make == GGUF_MAKE_CONST)
        return gguf_writer_set_u32(w, key, (uint32_t)r->def) ? gguf_error_set(err, "out of memory")
                                                             : 0;
    if (r->make == GGUF_MAKE_BOOL) {
        if (!hv)
            return 0;
        if (hv->type != JSON_BOOL)
            return gguf_error_set(err, "config.json line %zu: '%s' is not true or false",
                                  hv->line, r->hf[0]);
        if (r->when == GGUF_WHEN_NONZERO && !hv->b)
            return 0;
        return gguf_writer_set_bool(w, key, hv->b) ? gguf_error_set(err, "out of memory") : 0;
    }
    if (hparam_skipped(s, r, hv))
        return 0;
    if (r->make == GGUF_MAKE_ZERO_ABSENT && !hv && !r->required)
        return gguf_writer_set_u32(w, key, 0) ? gguf_error_set(err, "out of memory") : 0;
    if (!hv && r->def != 0) {
        if (r->is_float ? gguf_writer_set_f32(w, key, (float)r->def)
                        : gguf_writer_set_u32(w, key, (uint32_t)r->def))
            return gguf_error_set(err, "out of memory");
        return 0;
    }
    if (!hv)
        return r->required ? gguf_error_set(err, "config.json: required '%s' is missing", r->hf[0]) : 0;
    return put_hparam(w, arch, r, hv, err);
}

/* The rows of a table in order; with rope, the base converter's rope
 * scaling keys where it writes them, right after head_count_kv (at the end
 * of a table without that row). */
static int put_hparams(gguf_writer *w, const hf_state *s, const char *arch,
                       const gguf_recipe_hf_hparam *table, bool rope, gguf_error *err)
{
    for (const gguf_recipe_hf_hparam *r = table; r->hf[0]; r++) {
        if (put_hparam_row(w, s, arch, r, err))
            return -1;
        if (rope && r->id == GGUF_HP_HEAD_COUNT_KV) {
            if (put_rope_scaling(w, s, arch, err))
                return -1;
            rope = false;
        }
    }
    return rope ? put_rope_scaling(w, s, arch, err) : 0;
}

/* The key llama.cpp's converter adds while it makes the LongRoPE tensors,
 * before any other but general.architecture. */
static int hf_write_tensor_keys(src_model *m, gguf_writer *w, gguf_error *err)
{
    const hf_state *s = m->reader;
    char key[128];
    if (!s || !s->has_attn_factor)
        return 0;
    snprintf(key, sizeof key, GGUF_KEY_ROPE_SCALING_ATTN_FACTOR, gguf_arch_name(m->arch));
    return gguf_writer_set_f32(w, key, s->attn_factor) ? gguf_error_set(err, "out of memory") : 0;
}

static int hf_write_metadata(src_model *m, gguf_writer *w, uint32_t file_type, gguf_error *err)
{
    hf_state *s = m->reader;
    if (!s->config) { /* a tokenizer folder, --vocab-only: no hyperparameters */
        if (gguf_writer_set_u32(w, GGUF_KEY_FILE_TYPE, file_type))
            return gguf_error_set(err, "out of memory");
        return write_vocab_keys(m, s, w, err);
    }
    const char *arch = gguf_arch_name(m->arch);
    char key[128];
    /* block_count first, unless the family's converter writes it later
     * (its table has the row) */
    bool row = false;
    const gguf_recipe *rc = gguf_recipe_of(m->arch);
    for (const gguf_recipe_hf_hparam *r = rc->hf_hparams; r->hf[0]; r++)
        row |= r->make == GGUF_MAKE_BLOCK_COUNT;
    if (!row && put_block_count(w, s, arch, err))
        return -1;
    if (put_hparams(w, s, arch, rc->hf_hparams, !gguf_recipe_has(rc, GGUF_FACT_OWN_ROPE_KEYS),
                    err))
        return -1;
    if (gguf_writer_set_u32(w, GGUF_KEY_FILE_TYPE, file_type))
        return gguf_error_set(err, "out of memory");
    if (gguf_recipe_has(rc, GGUF_FACT_WRITES_ROPE_DIM)) {
        uint32_t n_vocab, hidden, heads, rope_dim;
        if (hparam_u32(s, "vocab_size", &n_vocab, err))
            return -1;
        snprintf(key, sizeof key, GGUF_KEY_VOCAB_SIZE, arch);
        if (gguf_writer_set_u32(w, key, n_vocab))
            return gguf_error_set(err, "out of memory");
        if (json_get(s->config, "head_dim")) {
            if (hparam_u32(s, "head_dim", &rope_dim, err))
                return -1;
        } else {
            if (hparam_u32(s, "hidden_size", &hidden, err) ||
                hparam_u32(s, "num_attention_heads", &heads, err))
                return -1;
            if (!heads)
                return gguf_error_set(err, "config.json: num_attention_heads is 0");
            rope_dim = hidden / heads;
        }
        snprintf(key, sizeof key, GGUF_KEY_ROPE_DIM_COUNT, arch);
        if (gguf_writer_set_u32(w, key, rope_dim))
            return gguf_error_set(err, "out of memory");
    }
    if (rc->hf_hparams_late && put_hparams(w, s, arch, rc->hf_hparams_late, false, err))
        return -1;
    /* e21cdc11 adds the quantization version after the model's keys, before
     * the vocabulary's (c392e50: last) */
    if (gguf_writer_set_u32(w, GGUF_KEY_QUANT_VERSION, CONVERT_QUANT_VERSION))
        return gguf_error_set(err, "out of memory");
    return write_vocab_keys(m, s, w, err);
}

/* ------------------------------------------------------------------------
 * Open / close
 * ------------------------------------------------------------------------ */

static int hf_verify(const src_model *m, gguf_error *err)
{
    const hf_state *s = m->reader;
    for (int i = 0; s && i < s->n_shards; i++)
        if (st_verify(&s->shards[i], err))
            return -1;
    return 0;
}

static void hf_close(src_model *m)
{
    hf_state *s = m->reader;
    if (!s)
        return;
    for (int i = 0; i < s->n_shards; i++)
        st_close(&s->shards[i]);
    free(s->shards);
    for (int i = 0; s->shard_names && i < s->n_shards; i++)
        free(s->shard_names[i]);
    free(s->shard_names);
    fp8_plan_free(&s->fp8);
    vocab_free(&s->voc);
    json_free(s->config);
    json_free(s->tok_config);
    json_free(s->tokenizer_json);
    free(s->dir);
    free(s);
    m->reader = NULL;
}

/* The period of a family's local layers as a GGUF file gives it (its
 * sliding_window_pattern row's default: no converter writes the key), 0
 * for a family without local layers (no such row). */
static int64_t gguf_swa_period(const gguf_arch *a, bool *has)
{
    const gguf_arch_hparam *r = gguf_arch_hparam_of(a, GGUF_HP_SWA_PATTERN);
    *has = r != NULL;
    return r ? (int64_t)gguf_arch_hparam_default(r) : 0;
}

/* What config.json says of the layers that llama.cpp's converter does not
 * read, checked against the file it writes, in which the runtime fixes
 * them: layer_types (one "sliding_attention" or "full_attention" per
 * layer, Hugging Face's description of which layers attend within the
 * sliding window; else, in a family with local layers, Gemma 3's
 * sliding_window_pattern, every p-th layer global), which must be the
 * layout the GGUF makes (the family's fixed period, none without a sliding
 * window); gpt-oss's swiglu_limit, which must be the 7 llama.cpp and
 * gguf-run clamp at (no key holds another). sliding_window_pattern is a
 * whole number 1 … 100000 wherever given (hparam_skipped reads it). */
static int check_layers(const src_model *m, const hf_state *s, gguf_error *err)
{
    const json_value *lim = json_get(s->config, "swiglu_limit");
    if (gguf_arch_activation(m->arch) == GGUF_ACT_SWIGLU_OAI && lim && lim->type != JSON_NULL) {
        double x;
        if (cfg_float(lim, "swiglu_limit", true, &x, err))
            return -1;
        if (x != 7.0)
            return gguf_error_set(err, "config.json line %zu: 'swiglu_limit' is %s, but a %s GGUF "
                                  "has no key for it: llama.cpp (and gguf-run) clamp at 7",
                                  lim->line, lim->str, gguf_arch_name(m->arch));
    }
    const json_value *types = json_get(s->config, "layer_types");
    const json_value *pat = json_get(s->config, "sliding_window_pattern");
    if (types && types->type == JSON_NULL)
        types = NULL;
    if (pat && pat->type == JSON_NULL)
        pat = NULL;
    int64_t n, p = 0, window = 0;
    bool has;
    const int64_t period = gguf_swa_period(m->arch, &has);
    if (pat && cfg_count(pat, "sliding_window_pattern", 1, 100000, &p, err))
        return -1;
    if (!has)
        pat = NULL; /* a layout from it only where local layers exist (Gemma 3's key) */
    if (!types && !pat)
        return 0;
    bool per_layer = false; /* a family that writes layer_types as they are (Gemma 4) */
    for (const gguf_recipe_hf_hparam *r = gguf_recipe_of(m->arch)->hf_hparams_late;
         r && r->hf[0]; r++)
        per_layer |= r->make == GGUF_MAKE_SWA_LAYERS;
    if (cfg_count(hparam(s, layer_keys), "num_hidden_layers", 1, 100000, &n, err))
        return -1;
    if (types && types->type != JSON_ARRAY)
        return gguf_error_set(err, "config.json line %zu: 'layer_types' is not a list",
                              types->line);
    if (types && (int64_t)types->n != n)
        return gguf_error_set(err, "config.json line %zu: 'layer_types' has %zu entr%s for %" PRId64
                              " layers (num_hidden_layers)", types->line, types->n,
                              types->n == 1 ? "y" : "ies", n);
    if (types && gguf_arch_hparam_of(m->arch, GGUF_HP_FULL_ATTN_INTERVAL)) {
        /* Qwen 3.5: llama.cpp takes the kinds of blocks from
         * full_attention_interval alone; layer_types must agree */
        int64_t every = 4;
        const json_value *iv = json_get(s->config, "full_attention_interval");
        if (iv && iv->type != JSON_NULL &&
            cfg_count(iv, "full_attention_interval", 1, UINT32_MAX, &every, err))
            return -1;
        for (size_t i = 0; i < types->n; i++) {
            const char *t = json_str(types->items[i]);
            const char *want = ((int64_t)i + 1) % every ? "linear_attention" : "full_attention";
            if (!t || strcmp(t, want))
                return gguf_error_set(err, "config.json line %zu: layer_types[%zu] is %s%s%s, but "
                                      "with full_attention_interval %" PRId64 " layer %zu is "
                                      "\"%s\" in a %s GGUF", types->items[i]->line, i,
                                      t ? "\"" : "", t ? t : "not a string", t ? "\"" : "", every,
                                      i, want, gguf_arch_name(m->arch));
        }
        return 0;
    }
    for (size_t i = 0; types && i < types->n; i++) {
        const char *t = json_str(types->items[i]);
        if (!t)
            return gguf_error_set(err, "config.json line %zu: layer_types[%zu] is not a string",
                                  types->items[i]->line, i);
        if (strcmp(t, "sliding_attention") && strcmp(t, "full_attention"))
            return gguf_error_set(err, "config.json line %zu: layer_types[%zu] is \"%s\", not "
                                  "\"sliding_attention\" or \"full_attention\"",
                                  types->items[i]->line, i, t);
    }
    if (per_layer)
        return types ? 0 : gguf_error_set(err, "config.json: required 'layer_types' is missing");
    /* the layout of the GGUF: local layers when the family has a period
     * and a sliding window is written (Gemma 3: not at pattern 1) */
    const json_value *wv = json_get(s->config, "sliding_window");
    if (has && !(pat && p == 1) && (!wv || wv->type == JSON_NULL))
        return 0; /* a required window that is missing: put_hparams says so */
    if (has && wv && wv->type != JSON_NULL &&
        cfg_count(wv, "sliding_window", 0, UINT32_MAX, &window, err))
        return -1;
    const bool local = has && !(pat && p == 1) && window > 0;
    for (int64_t il = 0; il < n; il++) {
        const bool want = local && (period == 0 || il % period < period - 1);
        const bool hf = types ? !strcmp(json_str(types->items[il]), "sliding_attention")
                              : (il + 1) % p != 0;
        if (hf == want)
            continue;
        char gguf[160];
        if (!local)
            snprintf(gguf, sizeof gguf, "a %s GGUF has no local layers%s", gguf_arch_name(m->arch),
                     has ? " (no sliding window is written)" : "");
        else
            snprintf(gguf, sizeof gguf, "in a %s GGUF layer %" PRId64 " is %s (llama.cpp's fixed "
                     "pattern: the last layer of every %" PRId64 " global, the others local)",
                     gguf_arch_name(m->arch), il, want ? "local" : "global", period);
        if (types)
            return gguf_error_set(err, "config.json line %zu: layer_types[%" PRId64 "] is \"%s\", "
                                  "but %s", types->items[il]->line, il,
                                  json_str(types->items[il]), gguf);
        return gguf_error_set(err, "config.json line %zu: 'sliding_window_pattern' is %" PRId64
                              " (layer %" PRId64 " %s), but %s", pat->line, p, il,
                              hf ? "local" : "global", gguf);
    }
    return 0;
}

/* "hf" → "Hf": llama.cpp names a model after its folder when nothing else
 * names it. */
char *hf_default_name(const char *dir)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    const char *base = dir;
    for (size_t i = 0; i < len; i++)
        if (dir[i] == '/' && i + 1 < len)
            base = dir + i + 1;
    char *name = strndup(base, len - (size_t)(base - dir));
    if (name && name[0] >= 'a' && name[0] <= 'z')
        name[0] = (char)(name[0] - 'a' + 'A');
    return name;
}

int hf_open(const char *dir, bool vocab_only, bool file_order, src_model *m, gguf_error *err)
{
    memset(m, 0, sizeof *m);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gguf_error_set(err, "not a model folder (expected a directory with config.json)");
    hf_state *s = calloc(1, sizeof *s);
    if (!s || !(s->dir = strdup(dir))) {
        free(s);
        return gguf_error_set(err, "out of memory");
    }
    s->file_order = file_order;
    s->vocab_only = vocab_only;
    m->reader = s;
    m->close = hf_close;
    m->verify = hf_verify;
    m->write_metadata = hf_write_metadata;
    m->write_tensor_keys = hf_write_tensor_keys;
    m->path = dir;
    char pth[4096], cfg[4096];
    join(pth, sizeof pth, dir, "consolidated.00.pth");
    join(cfg, sizeof cfg, dir, "config.json");
    if (!vocab_only && !file_exists(cfg) && file_exists(pth)) {
        gguf_error_set(err, "params.json: not found (a Meta checkpoint folder needs params.json "
                       "beside consolidated.00.pth)");
        goto fail;
    }
    if (load_json(s, "config.json", !vocab_only, &s->config, err) ||
        load_json(s, "tokenizer_config.json", false, &s->tok_config, err) ||
        load_json(s, "tokenizer.json", false, &s->tokenizer_json, err))
        goto fail;
    if (!s->config) {
        /* --vocab-only on a folder of tokenizer files: written as llama */
        m->arch = arch_find("LlamaForCausalLM");
        if (!(m->name = hf_default_name(dir))) {
            gguf_error_set(err, "out of memory");
            goto fail;
        }
        if (load_vocab(s, m->arch, err))
            goto fail;
        return 0;
    }
    if (s->config->type != JSON_OBJECT) {
        gguf_error_set(err, "config.json: not a JSON object");
        goto fail;
    }
    /* a multimodal config keeps the language model's hyperparameters in
     * text_config: TextModel reads them over the top level's. The class is
     * text_config's "architectures" when it has one (get_model_architecture),
     * else the top level's. */
    s->config_top = s->config->n;
    json_value *text = (json_value *)json_get(s->config, "text_config");
    const json_value *archs = json_get(text, "architectures");
    if (!archs || archs->type == JSON_NULL)
        archs = json_get(s->config, "architectures");
    if (text && text->type != JSON_OBJECT) { /* Python's {**config, **text_config} raises */
        gguf_error_set(err, "config.json line %zu: 'text_config' is not an object", text->line);
        goto fail;
    }
    if (text && json_object_absorb(s->config, text)) {
        gguf_error_set(err, "out of memory");
        goto fail;
    }
    const char *hf_arch = archs && archs->type == JSON_ARRAY && archs->n ? json_str(archs->items[0]) : NULL;
    if (!hf_arch) {
        gguf_error_set(err, "config.json: no \"architectures\" entry (supported: %s)",
                       arch_supported_list());
        goto fail;
    }
    if (!(m->arch = arch_find(hf_arch))) {
        gguf_error_set(err, "config.json: architecture %s is not supported (supported: %s)",
                       hf_arch, arch_supported_list());
        goto fail;
    }
    const gguf_recipe *rc = gguf_recipe_of(m->arch);
    if (rc->hf_model_types) {
        const char *mt = json_str(json_get(s->config, "model_type"));
        const char *const *t = rc->hf_model_types;
        while (*t && (!mt || strcmp(*t, mt)))
            t++;
        if (!*t) {
            char list[256] = "";
            for (t = rc->hf_model_types; *t; t++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         t == rc->hf_model_types ? "" : ", ", *t);
            gguf_error_set(err, "config.json: %s with a text model_type \"%s\" is not supported "
                           "(supported: %s)", hf_arch, mt ? mt : "(none)", list);
            goto fail;
        }
    }
    /* the head counts are for the q/k permutation; Gemma3Model, for one,
     * has a default for a config without them */
    if ((fact(m->arch, GGUF_FACT_PERMUTE_QK) || json_get(s->config, "num_attention_heads")) &&
        hparam_u32(s, "num_attention_heads", &m->n_head, err))
        goto fail;
    if (json_get(s->config, "num_key_value_heads") &&
        hparam_u32(s, "num_key_value_heads", &m->n_head_kv, err))
        goto fail;
    if (!(m->name = hf_default_name(dir))) {
        gguf_error_set(err, "out of memory");
        goto fail;
    }
    s->glm_vocab = glm_vocab_class(hf_arch);
    if (check_layers(m, s, err) || load_weights(m, s, err) || load_vocab(s, m->arch, err))
        goto fail;
    trim_embd(m, s);
    return 0;
fail:
    src_model_free(m);
    return -1;
}
