/*
 * main.c — gguf-quantize: GGUF → GGUF with llama-quantize's presets.
 *
 *   gguf-quantize [options] IN.gguf [OUT.gguf] TYPE [THREADS]
 *
 * Stages: parse the command line (llama-quantize's form), open the input,
 * plan every tensor's target type (policy.c, recipes), then stream: one
 * tensor at a time is converted to f32 and quantized across rows with
 * OpenMP, and written. Memory is bounded by the largest tensor (its f32 form
 * plus its quantized form), never the model.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "args.h"
#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include <ggufkit/arch.h>
#include "outpath.h"
#include "policy.h"
#include "pool.h"
#include "preset.h"
#include "progress.h"
#include "readfile.h"
#include "recipe.h"
#include "signals.h"

#define TOOL "gguf-quantize"

/* ------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------ */

typedef struct kv_override {
    char *key;
    char  kind; /* 'i' int, 'f' float, 'b' bool, 's' str */
    char *value;
} kv_override;

typedef struct options {
    const char   *in, *out;
    const preset *preset;
    int           threads;
    bool          allow_requantize, keep_split, dry_run, verbose, quiet;
    policy_opts   pol;
    const char   *imatrix_path;
    char        **include, **exclude, **recipe_paths;
    int           n_include, n_exclude, n_recipe_paths;
    recipe        rec;
    kv_override  *overrides;
    int           n_overrides;
    int          *prune;   /* --prune-layers: sorted, unique block numbers */
    int           n_prune;
    char          default_out[PATH_MAX];
} options;

static void usage(FILE *out)
{
    fprintf(out,
        "usage: " TOOL " [options] IN.gguf [OUT.gguf] TYPE [THREADS]\n"
        "\n"
        "  --allow-requantize         requantize tensors that are already quantized\n"
        "  --leave-output-tensor      keep output.weight as it is\n"
        "  --pure                     no per-tensor mix: every quantizable tensor gets TYPE\n"
        "  --imatrix FILE             importance matrix (llama-imatrix format)\n"
        "  --include-weights NAME     use the imatrix only for tensors whose name contains NAME\n"
        "  --exclude-weights NAME     do not use the imatrix for tensors whose name contains NAME\n"
        "  --output-tensor-type T     type of output.weight\n"
        "  --token-embedding-type T   type of token_embd.weight\n"
        "  --tensor-type REGEX=T      type of tensors whose name matches REGEX (repeatable)\n"
        "  --tensor-type-file FILE    REGEX=T rules from FILE, separated by spaces or newlines\n"
        "  --recipe FILE.yaml         per-tensor types from a recipe (docs/gguf-quantize.md)\n"
        "  --prune-layers L0,L1,...   leave these blocks out (the rest are renumbered)\n"
        "  --override-kv K=TYPE:VAL   set metadata; TYPE is int, float, bool or str\n"
        "  --keep-split               write the output in the same shards as the input\n"
        "  --dry-run                  print the plan (types, fallbacks, size) and write nothing\n"
        "  -t, --threads N            threads (default: all cores)\n"
        "  -v, --verbose              one line per tensor while writing\n"
        "  -q, --quiet                no progress bar and no summary\n"
        "\n"
        "TYPE (name or llama.cpp ftype number):\n");
    preset_list(out);
}

static int die_usage(const char *fmt, const char *arg)
{
    return cli_usage_error(TOOL, fmt, arg);
}


static int push_str(char ***list, int *n, const char *s)
{
    char **p = realloc(*list, (size_t)(*n + 1) * sizeof *p);
    if (!p)
        return -1;
    p[(*n)++] = (char *)s;
    *list = p;
    return 0;
}

static int parse_override(options *o, const char *arg)
{
    const char *eq = strchr(arg, '='), *colon = eq ? strchr(eq, ':') : NULL;
    if (!eq || eq == arg || !colon || eq - arg > 65535)
        return -1; /* a GGUF key is 1..65535 bytes */
    size_t tl = (size_t)(colon - eq - 1);
    char kind;
    if (tl == 3 && strncmp(eq + 1, "int", 3) == 0) kind = 'i';
    else if (tl == 5 && strncmp(eq + 1, "float", 5) == 0) kind = 'f';
    else if (tl == 4 && strncmp(eq + 1, "bool", 4) == 0) kind = 'b';
    else if (tl == 3 && strncmp(eq + 1, "str", 3) == 0) kind = 's';
    else return -1;
    const char *v = colon + 1;
    if (kind == 'b' && strcmp(v, "true") && strcmp(v, "false"))
        return -1;
    long iv;
    double fv;
    if (kind == 'i' && !cli_parse_long(v, INT32_MIN, INT32_MAX, &iv))
        return -1; /* written as i32, as llama-quantize does */
    if (kind == 'f' && (!cli_parse_double(v, -HUGE_VAL, HUGE_VAL, &fv) || !isfinite((float)fv)))
        return -1;
    kv_override *p = realloc(o->overrides, (size_t)(o->n_overrides + 1) * sizeof *p);
    if (!p)
        return -1;
    o->overrides = p;
    p[o->n_overrides].key = strndup(arg, (size_t)(eq - arg));
    p[o->n_overrides].kind = kind;
    p[o->n_overrides].value = strdup(v);
    o->n_overrides++;
    return 0;
}

/* Returns 0 to go on, or an exit status. */
/* --tensor-type-file: whitespace-separated REGEX=T rules, as
 * llama-quantize e21cdc11 reads them (each one as --tensor-type). */
#define TYPE_FILE_MAX ((size_t)1 << 20)
static int load_tensor_type_file(options *o, const char *path, gguf_error *err)
{
    uint8_t *buf;
    size_t len;
    if (gguf_read_file(path, TYPE_FILE_MAX, &buf, &len, err))
        return -1;
    int rc = memchr(buf, 0, len) ? gguf_error_set(err, "contains a NUL byte") : 0, n = 0;
    char *save = NULL;
    for (char *tok = rc ? NULL : strtok_r((char *)buf, " \t\r\n\v\f", &save); tok && !rc;
         tok = strtok_r(NULL, " \t\r\n\v\f", &save), n++)
        rc = recipe_add_rule_arg(&o->rec, tok, err);
    if (!rc && n == 0)
        rc = gguf_error_set(err, "no REGEX=TYPE rules");
    free(buf);
    return rc;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* --prune-layers L0,L1,...: block numbers, sorted and made unique. */
static bool parse_prune(options *o, const char *arg)
{
    char *copy = strdup(arg), *save = NULL;
    if (!copy)
        return false;
    bool ok = *arg != '\0' && arg[strlen(arg) - 1] != ',';
    for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
        long v;
        int *p = realloc(o->prune, (size_t)(o->n_prune + 1) * sizeof *p);
        ok = p && cli_parse_long(tok, 0, GGUF_MODEL_MAX_BLOCKS - 1, &v);
        if (p)
            o->prune = p;
        if (ok)
            o->prune[o->n_prune++] = (int)v;
    }
    free(copy);
    if (!ok)
        return false;
    qsort(o->prune, (size_t)o->n_prune, sizeof *o->prune, cmp_int);
    int k = 0;
    for (int i = 0; i < o->n_prune; i++)
        if (k == 0 || o->prune[k - 1] != o->prune[i])
            o->prune[k++] = o->prune[i];
    o->n_prune = k;
    return true;
}

static int parse_args(int argc, char **argv, options *o)
{
    gguf_error err;
    const char *pos[4];
    int npos = 0;
    memset(o, 0, sizeof *o);
    o->pol.output_type = o->pol.token_embedding_type = -1;
    recipe_init(&o->rec);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VAL() do { if (!val) return die_usage("%s needs a value", a); i++; } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(a, "--version")) {
            cli_print_version(TOOL);
            return -1;
        } else if (!strcmp(a, "--allow-requantize")) {
            o->allow_requantize = true;
        } else if (!strcmp(a, "--leave-output-tensor")) {
            o->pol.leave_output = true;
        } else if (!strcmp(a, "--pure")) {
            o->pol.pure = true;
        } else if (!strcmp(a, "--keep-split")) {
            o->keep_split = true;
        } else if (!strcmp(a, "--dry-run")) {
            o->dry_run = true;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            o->verbose = true;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = true;
        } else if (!strcmp(a, "--imatrix")) {
            NEED_VAL();
            o->imatrix_path = val;
        } else if (!strcmp(a, "--include-weights")) {
            NEED_VAL();
            if (push_str(&o->include, &o->n_include, val)) return 1;
        } else if (!strcmp(a, "--exclude-weights")) {
            NEED_VAL();
            if (push_str(&o->exclude, &o->n_exclude, val)) return 1;
        } else if (!strcmp(a, "--output-tensor-type")) {
            NEED_VAL();
            if ((o->pol.output_type = recipe_parse_type(val, &err)) < 0)
                return die_usage("--output-tensor-type: %s", err.msg);
        } else if (!strcmp(a, "--token-embedding-type")) {
            NEED_VAL();
            if ((o->pol.token_embedding_type = recipe_parse_type(val, &err)) < 0)
                return die_usage("--token-embedding-type: %s", err.msg);
        } else if (!strcmp(a, "--tensor-type")) {
            NEED_VAL();
            if (recipe_add_rule_arg(&o->rec, val, &err))
                return die_usage("%s", err.msg);
        } else if (!strcmp(a, "--tensor-type-file")) {
            NEED_VAL();
            if (push_str(&o->recipe_paths, &o->n_recipe_paths, val))
                return 1;
            if (load_tensor_type_file(o, val, &err)) {
                fprintf(stderr, TOOL ": error: %s: %s\n", val, err.msg);
                return 1;
            }
        } else if (!strcmp(a, "--prune-layers")) {
            NEED_VAL();
            if (!parse_prune(o, val))
                return die_usage("--prune-layers: '%s' is not a list of block numbers (0 to 511, "
                                 "comma-separated)", val);
        } else if (!strcmp(a, "--recipe")) {
            NEED_VAL();
            if (push_str(&o->recipe_paths, &o->n_recipe_paths, val))
                return 1;
            if (recipe_load_yaml(&o->rec, val, &err)) {
                fprintf(stderr, TOOL ": error: %s: %s\n", val, err.msg);
                return 1;
            }
        } else if (!strcmp(a, "--override-kv")) {
            NEED_VAL();
            if (parse_override(o, val))
                return cli_usage_error(TOOL, "malformed --override-kv '%.80s%s' (want KEY=TYPE:VALUE: "
                                       "a key of 1 to 65535 bytes, TYPE int (32-bit), float "
                                       "(finite), bool or str)", val, strlen(val) > 80 ? "..." : "");
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            NEED_VAL();
            if (!cli_parse_threads(TOOL, val, &o->threads))
                return cli_usage_error(TOOL, "bad thread count '%s' (1 to %d)", val, cli_max_threads());
        } else if (a[0] == '-' && a[1]) {
            return die_usage("unknown option '%s'", a);
        } else {
            if (npos == 4)
                return die_usage("too many arguments ('%s')", a);
            pos[npos++] = a;
        }
#undef NEED_VAL
    }
    if (o->n_include && o->n_exclude)
        return die_usage("%s", "--include-weights and --exclude-weights cannot be used together");
    if (npos < 1)
        return die_usage("%s", "missing IN.gguf, the model to quantize");
    o->in = pos[0];
    int k = 1;
    /* IN TYPE [THREADS] or IN OUT TYPE [THREADS], as llama-quantize decides. */
    if (k < npos && (o->preset = preset_find(pos[k]))) {
        k++;
    } else if (k < npos) {
        o->out = pos[k++];
        if (k < npos && !(o->preset = preset_find(pos[k])))
            return die_usage("unknown quantization type '%s'", pos[k]);
        k += k < npos;
    }
    if (!o->preset && o->rec.preset && !(o->preset = preset_find(o->rec.preset)))
        return die_usage("recipe names unknown preset '%s'", o->rec.preset);
    if (!o->preset)
        return die_usage("%s", "missing quantization TYPE");
    if (k < npos) {
        if (!cli_parse_threads(TOOL, pos[k], &o->threads))
            return cli_usage_error(TOOL, "bad thread count '%s' (1 to %d)", pos[k], cli_max_threads());
        k++;
    }
    if (k < npos)
        return die_usage("unexpected argument '%s'", pos[k]);
    if (o->rec.output_type >= 0 && o->pol.output_type < 0)
        o->pol.output_type = o->rec.output_type;
    if (o->rec.token_embedding_type >= 0 && o->pol.token_embedding_type < 0)
        o->pol.token_embedding_type = o->rec.token_embedding_type;
    if (o->rec.pure > 0)
        o->pol.pure = true;
    if (!o->out) {
        /* llama-quantize's default: next to the input, ggml-model-TYPE.gguf */
        const char *slash = strrchr(o->in, '/');
        int dlen = slash ? (int)(slash - o->in + 1) : 0;
        snprintf(o->default_out, sizeof o->default_out, "%.*sggml-model-%s.gguf", dlen, o->in,
                 o->preset->name);
        o->out = o->default_out;
    }
    if (!o->threads)
        o->threads = cli_default_threads();
    return 0;
}

static void free_options(options *o)
{
    free(o->include);
    free(o->exclude);
    free(o->recipe_paths);
    for (int i = 0; i < o->n_overrides; i++) {
        free(o->overrides[i].key);
        free(o->overrides[i].value);
    }
    free(o->overrides);
    free(o->prune);
    recipe_free(&o->rec);
}

/* ------------------------------------------------------------------------
 * Plan
 * ------------------------------------------------------------------------ */

typedef struct plan_item {
    const gguf_tensor *t;
    char               name[GGUF_MAX_NAME + 16]; /* output name (renumbered by --prune-layers) */
    uint32_t           type;     /* target */
    bool               convert;  /* false: copy bytes as they are */
    const float       *imatrix;  /* weights (ne[0] * ne[2]) or NULL */
    uint64_t           nbytes;   /* output size */
    char               why[128]; /* fallback note */
} plan_item;

typedef struct plan {
    plan_item   *items;
    uint64_t     n;
    uint64_t     size_in, size_out, n_elements;
    int          n_fallback, n_imatrix;
    gguf_imatrix im;
    int          im_entries; /* entries left after include/exclude */
    int          n_layer_out; /* blocks written (fewer with --prune-layers) */
    uint32_t     file_type;   /* general.file_type to write */
    bool         needs_imatrix; /* --dry-run without one: the real run would refuse */
} plan;

static int layer_num(const char *name)
{
    int l = -1;
    sscanf(name, "blk.%d.", &l);
    return l;
}

/* llama.cpp visits tensors sorted by (layer, name), non-layer tensors first;
 * with --keep-split by (shard, offset). */
static int cmp_llama_order(const void *a, const void *b)
{
    const gguf_tensor *x = ((const plan_item *)a)->t, *y = ((const plan_item *)b)->t;
    int lx = layer_num(x->name), ly = layer_num(y->name);
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_file_order(const void *a, const void *b)
{
    const gguf_tensor *x = ((const plan_item *)a)->t, *y = ((const plan_item *)b)->t;
    if (x->shard != y->shard)
        return x->shard < y->shard ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The key fmt formatted with arch, or NULL. */
static const gguf_kv *kv_fmt(const gguf_file *f, const char *fmt, const char *arch)
{
    char key[256];
    snprintf(key, sizeof key, fmt, arch);
    return gguf_lookup_kv(f, key);
}

static bool kv_int(const gguf_file *f, const char *fmt, const char *arch, int *out)
{
    char key[256];
    int64_t v;
    snprintf(key, sizeof key, fmt, arch);
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    if (!kv || !gguf_kv_int(kv, &v) || v < 0 || v > INT32_MAX)
        return false;
    *out = (int)v;
    return true;
}

/* The model facts the per-tensor rules use. A registered architecture's
 * come from the registry (hyper-parameters as gguf_hparams_read derives
 * them, attn_v and attn_qkv tensors by role); any other architecture's
 * from its keys and tensor names as llama-quantize reads them. */
static int model_facts(const gguf_file *f, policy_model *m, gguf_error *err)
{
    memset(m, 0, sizeof *m);
    gguf_str s;
    char arch[64];
    if (gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &s, err))
        return -1;
    snprintf(arch, sizeof arch, "%.*s", (int)(s.len < 63 ? s.len : 63), s.ptr);
    m->falcon = strcmp(arch, "falcon") == 0;
    const gguf_arch *a = gguf_arch_find(arch);
    gguf_hparams hp;
    if (a && kv_fmt(f, GGUF_KEY_BLOCK_COUNT, arch) && gguf_hparams_read(f, &hp, err) == 0) {
        m->n_layer = (int)hp.v[GGUF_HP_BLOCK_COUNT];
        m->n_head = (int)hp.v[GGUF_HP_HEAD_COUNT];
        m->n_head_kv = (int)hp.n_head_kv;
        m->n_expert = (int)hp.v[GGUF_HP_EXPERT_COUNT];
    } else if (a && kv_fmt(f, GGUF_KEY_BLOCK_COUNT, arch)) {
        return -1;
    } else {
        if (!kv_int(f, GGUF_KEY_BLOCK_COUNT, arch, &m->n_layer))
            return gguf_error_set(err, "missing or invalid %s.block_count", arch);
        kv_int(f, GGUF_KEY_HEAD_COUNT, arch, &m->n_head);
        if (!kv_int(f, GGUF_KEY_HEAD_COUNT_KV, arch, &m->n_head_kv))
            m->n_head_kv = m->n_head;
        kv_int(f, GGUF_KEY_EXPERT_COUNT, arch, &m->n_expert);
    }
    m->is_70b = strcmp(arch, "llama") == 0 && m->n_layer == 80 && m->n_head != m->n_head_kv;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const char *n = gguf_tensor_at(f, i)->name;
        const gguf_arch_tensor *row = a ? gguf_arch_match(a, n, NULL) : NULL;
        if (row ? row->role == GGUF_ROLE_ATTN_V || row->role == GGUF_ROLE_ATTN_QKV
                : strstr(n, "attn_v.weight") || strstr(n, "attn_qkv.weight") ||
                  strstr(n, "attn_kv_b.weight"))
            m->n_attention_wv++;
        else if (strcmp(n, GGUF_T_OUTPUT) == 0)
            m->has_output = true;
    }
    return 0;
}

/* --prune-layers: every block named exists, and one is left. */
static int check_prune(const options *o, const policy_model *m, gguf_error *err)
{
    if (o->n_prune && o->prune[o->n_prune - 1] >= m->n_layer)
        return gguf_error_setc(err, GGUF_ERR_ARG, "--prune-layers: block %d does not exist (the "
                               "model has %d)", o->prune[o->n_prune - 1], m->n_layer);
    if (o->n_prune && o->n_prune >= m->n_layer)
        return gguf_error_setc(err, GGUF_ERR_ARG, "--prune-layers: all %d blocks pruned",
                               m->n_layer);
    return 0;
}

/* The output name of an input tensor into out: as it is, or with its block
 * renumbered past the pruned ones (llama.cpp's remap_layer, in numeric
 * order: llama-quantize e21cdc11 numbers blocks in the order of their
 * names, so with 10 or more blocks "blk.10" takes the number "blk.2" then
 * gets again). Returns 0 for a tensor of a pruned block. */
static int out_name(const options *o, const char *name, char *out, size_t size)
{
    int64_t b;
    const char *rest;
    snprintf(out, size, "%s", name);
    if (!o->n_prune || !gguf_parse_block_name(name, &b, &rest))
        return 1;
    int below = 0;
    for (int i = 0; i < o->n_prune; i++) {
        if (o->prune[i] == b)
            return 0;
        below += o->prune[i] < b;
    }
    snprintf(out, size, "blk.%" PRId64 ".%s", b - below, rest);
    return 1;
}

/* The attn_v (or fused qkv) tensors left after pruning: llama.cpp counts
 * them over the tensors it writes. */
static int count_attention_wv(const plan *p, const policy_model *m, const gguf_file *f)
{
    (void)m;
    const gguf_str *arch_s = NULL;
    const gguf_kv *kv = gguf_lookup_kv(f, GGUF_KEY_ARCHITECTURE);
    char arch[64] = "";
    if (kv && kv->type == GGUF_VT_STR && (arch_s = kv->strs) && arch_s->len < sizeof arch)
        snprintf(arch, sizeof arch, "%.*s", (int)arch_s->len, arch_s->ptr);
    const gguf_arch *a = gguf_arch_find(arch);
    int n = 0;
    for (uint64_t i = 0; i < p->n; i++) {
        const char *nm = p->items[i].name;
        const gguf_arch_tensor *row = a ? gguf_arch_match(a, nm, NULL) : NULL;
        n += row ? row->role == GGUF_ROLE_ATTN_V || row->role == GGUF_ROLE_ATTN_QKV
                 : strstr(nm, "attn_v.weight") || strstr(nm, "attn_qkv.weight") ||
                   strstr(nm, "attn_kv_b.weight");
    }
    return n;
}

/* Keeps the imatrix entries selected by --include/--exclude-weights. */
static bool imatrix_selected(const options *o, const char *name)
{
    for (int i = 0; i < o->n_exclude; i++)
        if (strstr(name, o->exclude[i]))
            return false;
    if (!o->n_include)
        return true;
    for (int i = 0; i < o->n_include; i++)
        if (strstr(name, o->include[i]))
            return true;
    return false;
}

/* llama.cpp's model loader's file type of an input (what COPY writes):
 * general.file_type when present, else guessed from the most frequent
 * tensor type, marked as a guess (LLAMA_FTYPE_GUESSED, 1024). */
static uint32_t input_file_type(const gguf_file *f)
{
    static const struct { uint32_t type, ftype; } guess[] = {
        { GGUF_DT_F32, 0 }, { GGUF_DT_F16, 1 }, { GGUF_DT_Q4_0, 2 }, { GGUF_DT_Q4_1, 3 },
        { GGUF_DT_Q8_0, 7 }, { GGUF_DT_Q5_0, 8 }, { GGUF_DT_Q5_1, 9 }, { GGUF_DT_Q2_K, 10 },
        { GGUF_DT_Q3_K, 12 }, { GGUF_DT_Q4_K, 15 }, { GGUF_DT_Q5_K, 17 }, { GGUF_DT_Q6_K, 18 },
        { GGUF_DT_IQ2_XXS, 19 }, { GGUF_DT_IQ2_XS, 20 }, { GGUF_DT_IQ3_XXS, 23 },
        { GGUF_DT_IQ1_S, 24 }, { GGUF_DT_IQ4_NL, 25 }, { GGUF_DT_IQ3_S, 26 }, { GGUF_DT_IQ2_S, 28 },
        { GGUF_DT_IQ4_XS, 30 }, { GGUF_DT_IQ1_M, 31 }, { GGUF_DT_BF16, 32 }, { GGUF_DT_TQ1_0, 36 },
        { GGUF_DT_TQ2_0, 37 }, { GGUF_DT_MXFP4, 38 },
    };
    uint32_t v;
    if (gguf_get_u32(f, GGUF_KEY_FILE_TYPE, &v, NULL) == 0)
        return v;
    uint64_t count[GGUF_DT_COUNT] = { 0 };
    uint32_t best = GGUF_DT_F32;
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        uint32_t t = gguf_tensor_at(f, i)->type;
        if (t < GGUF_DT_COUNT && ++count[t] > count[best])
            best = t;
    }
    uint32_t ft = 0;
    for (size_t i = 0; i < sizeof guess / sizeof *guess; i++)
        if (guess[i].type == best)
            ft = guess[i].ftype;
    return ft | 1024;
}

/* llama.cpp e21cdc11's tensor_requires_imatrix: without any imatrix these
 * types are refused (token_embd and output excepted), and q2_K in a
 * Q2_K_S file. */
static bool requires_imatrix(const char *name, uint32_t type, int ftype)
{
    if (!strcmp(name, GGUF_T_TOKEN_EMBD) || !strcmp(name, "output.weight"))
        return false;
    switch (type) {
    case GGUF_DT_IQ3_XXS: case GGUF_DT_IQ2_XXS: case GGUF_DT_IQ2_XS: case GGUF_DT_IQ2_S:
    case GGUF_DT_IQ1_M: case GGUF_DT_IQ1_S:
        return true;
    case GGUF_DT_Q2_K:
        return ftype == FT_Q2_K_S;
    default:
        return false;
    }
}

static int make_plan(const gguf_file *f, const options *o, plan *p, gguf_error *err)
{
    policy_model m;
    policy_state st = { 0 };
    if (model_facts(f, &m, err))
        return -1;
    if (o->imatrix_path) {
        if (gguf_imatrix_load(o->imatrix_path, &p->im, err)) {
            gguf_error_prefix(err, "%s: ", o->imatrix_path);
            return -1;
        }
        for (int32_t i = 0; i < p->im.n; i++)
            p->im_entries += imatrix_selected(o, p->im.entries[i].name);
        st.has_imatrix = p->im_entries > 0;
    }
    if (check_prune(o, &m, err))
        return -1;
    p->items = calloc(gguf_n_tensors(f) ? gguf_n_tensors(f) : 1, sizeof *p->items);
    if (!p->items)
        return gguf_error_set(err, "out of memory");
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        plan_item *it = &p->items[p->n];
        it->t = gguf_tensor_at(f, i);
        p->n += out_name(o, it->t->name, it->name, sizeof it->name);
    }
    if (o->n_prune) { /* llama.cpp counts over the tensors it writes */
        m.n_attention_wv = count_attention_wv(p, &m, f);
        m.n_layer -= o->n_prune;
    }
    p->n_layer_out = m.n_layer;
    qsort(p->items, p->n, sizeof *p->items, o->keep_split ? cmp_file_order : cmp_llama_order);

    p->file_type = o->preset->copy ? input_file_type(f) : (uint32_t)o->preset->ftype;
    for (uint64_t i = 0; i < p->n; i++) {
        plan_item *it = &p->items[i];
        const gguf_tensor *t = it->t;
        it->type = t->type;
        /* COPY: every tensor as it is */
        if (!o->preset->copy && policy_is_quantizable(it->name, t->n_dims, &o->pol)) {
            int forced;
            if (recipe_find(&o->rec, it->name, &forced, err))
                return -1;
            it->type = policy_tensor_type_3d(&m, &st, &o->pol, o->preset->ftype,
                                             o->preset->default_type, it->name, t->ne[0],
                                             t->ne[2], forced, it->why, sizeof it->why);
            it->convert = it->type != t->type;
            if (it->convert && !o->imatrix_path && requires_imatrix(it->name, it->type, o->preset->ftype)) {
                if (!o->dry_run)
                    return gguf_error_set(err, "this quantization requires an importance matrix "
                                          "(--imatrix): tensor '%s' would be %s", it->name,
                                          gguf_dtype_name(it->type));
                p->needs_imatrix = true;
            }
        }
        if (it->convert) {
            const gguf_dtype_traits *src = gguf_dtype_get(t->type);
            if (!gguf_codec_get(t->type))
                return gguf_error_set(err, "tensor '%s': cannot convert from type %s", t->name,
                                      src->name);
            if (src->blck_size > 1 && !o->allow_requantize)
                return gguf_error_set(err, "tensor '%s' is already %s: requantizing needs "
                                      "--allow-requantize", t->name, src->name);
            int32_t nw;
            const float *w = p->im.n && imatrix_selected(o, t->name)
                           ? gguf_imatrix_find(&p->im, t->name, &nw) : NULL;
            if (w && (int64_t)nw != t->ne[0] * t->ne[2]) {
                if (strcmp(t->name, GGUF_T_TOKEN_EMBD) != 0)
                    return gguf_error_set(err, "imatrix has %d values for tensor '%s', which "
                                          "needs %" PRId64, nw, t->name, t->ne[0] * t->ne[2]);
                w = NULL;
            }
            it->imatrix = w;
            p->n_imatrix += w != NULL;
            /* iq2_xxs, iq2_xs, iq1_s: ggml quantizes them only with importance
             * weights (llama-quantize: "this quantization requires an
             * importance matrix") */
            if (!w && !gguf_codec_get(it->type)->quantize) {
                if (!o->dry_run)
                    return gguf_error_set(err, "tensor '%s': type %s needs an importance matrix "
                                          "(--imatrix, with data for this tensor)", t->name,
                                          gguf_dtype_name(it->type));
                p->needs_imatrix = true;
            }
        }
        uint64_t row;
        if (gguf_row_size(it->type, t->ne[0], &row, NULL))
            return gguf_error_set(err, "tensor '%s': internal error: no row size", t->name);
        it->nbytes = row * (uint64_t)(t->ne[0] ? t->n_elements / t->ne[0] : 0);
        p->size_in += t->nbytes;
        p->size_out += it->nbytes;
        p->n_elements += (uint64_t)t->n_elements;
    }
    p->n_fallback = st.n_fallback;
    return 0;
}

static void free_plan(plan *p)
{
    free(p->items);
    gguf_imatrix_free(&p->im);
}

static double bpw(uint64_t bytes, uint64_t elements)
{
    return elements ? 8.0 * (double)bytes / (double)elements : 0;
}

static void shape_str(const gguf_tensor *t, char *buf, size_t size)
{
    int n = snprintf(buf, size, "[");
    for (uint32_t j = 0; j < t->n_dims && n < (int)size; j++)
        n += snprintf(buf + n, size - (size_t)n, "%s%" PRId64, j ? ", " : "", t->ne[j]);
    if (n < (int)size)
        snprintf(buf + n, size - (size_t)n, "]");
}

static void print_plan(const plan *p, const options *o)
{
    printf("%-4s %-36s %-18s %-7s    %-7s %10s  %s\n", "#", "tensor", "shape", "from", "to",
           "bytes", "note");
    for (uint64_t i = 0; i < p->n; i++) {
        const plan_item *it = &p->items[i];
        char shape[64];
        shape_str(it->t, shape, sizeof shape);
        printf("%-4" PRIu64 " %-36s %-18s %-7s -> %-7s %10" PRIu64 "  %s%s%s\n", i + 1,
               it->name, shape, gguf_dtype_name(it->t->type), gguf_dtype_name(it->type),
               it->nbytes, it->convert ? "" : "copy", it->why[0] ? "fallback: " : "",
               it->why[0] ? it->why : (it->imatrix ? "imatrix" : ""));
    }
    printf("\npreset %s (ftype %d): %" PRIu64 " tensors, %.2f MiB -> %.2f MiB, %.2f -> %.2f bpw",
           o->preset->name, o->preset->ftype, p->n, p->size_in / 1048576.0,
           p->size_out / 1048576.0, bpw(p->size_in, p->n_elements), bpw(p->size_out, p->n_elements));
    printf(", %d fallback%s", p->n_fallback, p->n_fallback == 1 ? "" : "s");
    if (p->im.n)
        printf(", imatrix used for %d tensor%s", p->n_imatrix, p->n_imatrix == 1 ? "" : "s");
    printf("\n");
    /* llama-quantize e21cdc11's --dry-run totals, in its words */
    printf("model size  = %8.2f MiB (%.2f BPW)\n", p->size_in / 1048576.0,
           bpw(p->size_in, p->n_elements));
    printf("quant size  = %8.2f MiB (%.2f BPW)\n", p->size_out / 1048576.0,
           bpw(p->size_out, p->n_elements));
}

/* ------------------------------------------------------------------------
 * Output metadata
 * ------------------------------------------------------------------------ */

static int set_override(gguf_writer *w, const kv_override *ov)
{
    gguf_writer_remove_kv(w, ov->key);
    switch (ov->kind) {
    case 'i': { /* llama.cpp e21cdc11 writes every int override as u32 of its magnitude */
        long long v = strtoll(ov->value, NULL, 10);
        return gguf_writer_set_u32(w, ov->key, (uint32_t)(v < 0 ? -v : v));
    }
    case 'f': return gguf_writer_set_f32(w, ov->key, (float)strtod(ov->value, NULL));
    case 'b': return gguf_writer_set_bool(w, ov->key, strcmp(ov->value, "true") == 0);
    default: return gguf_writer_set_str(w, ov->key, ov->value);
    }
}

/* llama.cpp's gguf_set_val removes a key and appends it; we do the same so
 * the key order matches llama-quantize's output. */
static int write_metadata(gguf_writer *w, const gguf_file *f, const options *o, const plan *p)
{
    int rc = 0;
    for (uint64_t i = 0; i < gguf_n_kv(f) && !rc; i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        if (strncmp(kv->key, "split.", 6) != 0)
            rc = gguf_writer_copy_kv(w, kv);
    }
    gguf_writer_remove_kv(w, GGUF_KEY_QUANT_VERSION);
    rc |= gguf_writer_set_u32(w, GGUF_KEY_QUANT_VERSION, 2);
    gguf_writer_remove_kv(w, GGUF_KEY_FILE_TYPE);
    rc |= gguf_writer_set_u32(w, GGUF_KEY_FILE_TYPE, p->file_type);
    for (int i = 0; i < o->n_overrides && !rc; i++)
        rc = set_override(w, &o->overrides[i]);
    if (p->im_entries > 0 && !rc) {
        kv_override im[4] = {
            { "quantize.imatrix.file", 's', (char *)o->imatrix_path },
            { "quantize.imatrix.dataset", 's', p->im.dataset },
            { "quantize.imatrix.entries_count", 'i', NULL },
            { "quantize.imatrix.chunks_count", 'i', NULL },
        };
        char n1[32], n2[32];
        snprintf(n1, sizeof n1, "%d", p->im_entries);
        snprintf(n2, sizeof n2, "%d", p->im.chunks);
        im[2].value = n1;
        im[3].value = n2;
        rc |= set_override(w, &im[0]);
        if (p->im.dataset && p->im.dataset[0])
            rc |= set_override(w, &im[1]);
        rc |= set_override(w, &im[2]);
        if (p->im.chunks > 0)
            rc |= set_override(w, &im[3]);
    }
    if (o->n_prune && !rc) { /* set last, as llama-quantize e21cdc11 does */
        gguf_str a;
        char key[128];
        if (gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &a, NULL) || a.len > 64)
            return -1;
        snprintf(key, sizeof key, "%.*s.block_count", (int)a.len, a.ptr);
        gguf_writer_remove_kv(w, key);
        rc = gguf_writer_set_u32(w, key, (uint32_t)p->n_layer_out);
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Conversion
 * ------------------------------------------------------------------------ */

typedef struct buffers {
    uint8_t *out;
    size_t   out_cap;
} buffers;

static int reserve(void **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    void *q = realloc(*p, need);
    if (!q)
        return -1;
    *p = q;
    *cap = need;
    return 0;
}

/* The first non-finite value of n floats, or -1. Sixteen at a time, the
 * largest exponent field of each group (all ones: Inf or NaN) — a loop the
 * compiler turns into vector code — then the exact index one by one. */
static int64_t first_nonfinite(const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint32_t m = 0;
        for (int k = 0; k < 16; k++) {
            uint32_t u;
            memcpy(&u, x + i + k, 4);
            u &= 0x7f800000u;
            m = u > m ? u : m;
        }
        if (m == 0x7f800000u)
            break;
    }
    for (; i < n; i++)
        if (!isfinite(x[i]))
            return i;
    return -1;
}

/* Where convert_tensor found a non-finite input value (row -1: none). */
typedef struct bad_value {
    int64_t row, col;
    float   v;
} bad_value;

/* A tensor whose bytes are ready, to be written while the next one is
 * quantized. */
typedef struct pending {
    const plan_item *it;
    const void      *data;
    gguf_writer     *w;
    const gguf_file *f;
    progress        *bar;
    gguf_error       err;
    int              rc;
} pending;

static void write_pending(pending *p)
{
    if (gguf_writer_write_tensor(p->w, p->data, p->it->nbytes, &p->err)) {
        p->rc = -1;
        return;
    }
    progress_add(p->bar, p->it->t->nbytes);
    /* done with this tensor: keep the footprint to the tensors in flight */
    gguf_release_range(p->f, p->it->t->data, p->it->t->nbytes);
}

/* One tensor's job: a unit is a chunk of rows of one slice. */
typedef struct {
    const plan_item *it;
    uint8_t         *out;
    int64_t          n0, rows_per_slice, chunk, nchunks;
    uint64_t         row, src_row;
    float           *tmp;    /* n0 floats per thread; NULL: out of memory or F32 input */
    _Atomic int      failed;
    pthread_mutex_t  lock;   /* guards bad */
    bad_value       *bad;
    pending         *write;  /* the tensor before, written by unit 0 meanwhile; NULL: none */
} convert_job;

static void convert_unit(void *ctx, int64_t u, int thread)
{
    convert_job *j = ctx;
    if (j->write && u-- == 0) {
        write_pending(j->write);
        return;
    }
    const gguf_tensor *t = j->it->t;
    const int64_t n0 = j->n0, s = u / j->nchunks, c = u % j->nchunks;
    const float *w = j->it->imatrix ? j->it->imatrix + (s % t->ne[2]) * n0 : NULL;
    const uint8_t *x = t->data + (uint64_t)(s * j->rows_per_slice) * j->src_row;
    uint8_t *y = j->out + (uint64_t)(s * j->rows_per_slice) * j->row;
    const int64_t r0 = c * j->chunk, nr = j->rows_per_slice - r0 < j->chunk ? j->rows_per_slice - r0 : j->chunk;
    float *tmp = NULL;
    if (t->type != GGUF_DT_F32) {
        if (!j->tmp) {
            atomic_store(&j->failed, 1);
            return;
        }
        tmp = j->tmp + (size_t)thread * (size_t)n0;
    }
    /* row by row, so a row's f32 form stays in the first-level cache from
     * its conversion through the check to its quantization */
    for (int64_t r = r0; r < r0 + nr; r++) {
        const uint8_t *xs = x + (uint64_t)r * j->src_row;
        const float *f = (const float *)xs;
        if (tmp) {
            gguf_dequantize_row(t->type, xs, tmp, n0, NULL);
            f = tmp;
        }
        /* llama.cpp quantizes NaN rows into finite garbage; refused here */
        const int64_t at = first_nonfinite(f, n0);
        if (at >= 0) {
            const int64_t row = s * j->rows_per_slice + r;
            pthread_mutex_lock(&j->lock);
            if (j->bad->row < 0 || row < j->bad->row)
                *j->bad = (bad_value){ row, at, f[at] };
            pthread_mutex_unlock(&j->lock);
            return;
        }
        if (!gguf_quantize_rows(j->it->type, f, y + (uint64_t)r * j->row, 1, n0, w, NULL))
            atomic_store(&j->failed, 1); /* the plan checked codec and weights: not expected */
    }
}

/* Quantizes all rows of one tensor (experts slice by slice, each with its
 * own importance weights) into b->out, on the pool's threads. Work goes out
 * in chunks of rows (llama.cpp's 32×512-element units); each thread turns
 * a row of the source at a time into f32 in a small buffer of its own, so
 * the f32 form of a tensor never exists whole and the data crosses memory
 * once. The tensor before (write, if not NULL) is written meanwhile, as
 * unit 0. */
static int convert_tensor(const plan_item *it, buffers *b, bad_value *bad, pending *write)
{
    const gguf_tensor *t = it->t;
    if (reserve((void **)&b->out, &b->out_cap, (size_t)it->nbytes))
        return -1;
    convert_job j = { .it = it, .out = b->out, .n0 = t->ne[0], .rows_per_slice = t->ne[1], .bad = bad,
                      .write = write };
    gguf_row_size(it->type, j.n0, &j.row, NULL);
    gguf_row_size(t->type, j.n0, &j.src_row, NULL);
    j.chunk = j.n0 >= 16384 ? 1 : (16384 + j.n0 - 1) / j.n0;
    j.nchunks = (j.rows_per_slice + j.chunk - 1) / j.chunk;
    if (t->type != GGUF_DT_F32)
        j.tmp = malloc((size_t)pool_threads() * (size_t)j.n0 * sizeof(float));
    atomic_init(&j.failed, 0);
    pthread_mutex_init(&j.lock, NULL);
    bad->row = -1;
    pool_for((write ? 1 : 0) + t->ne[2] * t->ne[3] * j.nchunks, convert_unit, &j);
    pthread_mutex_destroy(&j.lock);
    free(j.tmp);
    return atomic_load(&j.failed) ? -1 : 0;
}

/* ------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------ */

/* The output path (and every shard it will be split into) may replace
 * nothing of the run's inputs: any shard of the model, the imatrix, the
 * recipes; nor a device, a FIFO or a directory (outpath_check). */
static int check_output(const gguf_file *f, const options *o, const char *out, gguf_error *err)
{
    size_t n = 0, cap = gguf_n_shards(f) + 1 + (size_t)o->n_recipe_paths;
    const char **ins = malloc(cap * sizeof *ins);
    if (!ins)
        return gguf_error_set(err, "out of memory");
    for (uint32_t s = 0; s < gguf_n_shards(f); s++)
        ins[n++] = gguf_shard_path(f, s);
    ins[n++] = o->imatrix_path;
    for (int i = 0; i < o->n_recipe_paths; i++)
        ins[n++] = o->recipe_paths[i];
    int rc = outpath_check(out, ins, n, err);
    free(ins);
    return rc;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run(const options *o)
{
    gguf_error err;
    plan p = { 0 };
    buffers b[2] = { { 0 }, { 0 } };
    gguf_writer *w = NULL;
    int status = 1;
    double t0 = now();
    gguf_file *f = gguf_open(o->in, 0, &err);
    if (!f) {
        fprintf(stderr, TOOL ": error: %s: %s\n", o->in, err.msg);
        return 1;
    }
    if (gguf_model_validate(f, &err) || make_plan(f, o, &p, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", o->in, err.msg);
        goto done;
    }
    if (o->dry_run) {
        print_plan(&p, o);
        if (p.needs_imatrix)
            fprintf(stderr, TOOL ": warning: dry run completed, but this quantization requires an "
                    "importance matrix (--imatrix)\n");
        status = 0;
        goto done;
    }
    if (check_output(f, o, o->out, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", o->out, err.msg);
        goto done;
    }
    if (!(w = gguf_writer_new()) || write_metadata(w, f, o, &p)) {
        fprintf(stderr, TOOL ": error: %s: out of memory\n", o->out);
        goto done;
    }
    gguf_writer_set_version(w, 3);
    for (uint64_t i = 0; i < p.n; i++) {
        const gguf_tensor *t = p.items[i].t;
        int64_t idx = gguf_writer_add_tensor(w, p.items[i].name, p.items[i].type, t->n_dims, t->ne,
                                             &err);
        if (idx < 0 || (o->keep_split && gguf_n_shards(f) > 1 &&
                        gguf_writer_set_tensor_shard(w, (uint64_t)idx, t->shard))) {
            fprintf(stderr, TOOL ": error: %s: %s\n", o->out, err.msg);
            goto done;
        }
    }
    if (gguf_writer_begin(w, o->out, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", o->out, err.msg);
        goto done;
    }
    for (uint32_t s = 0; s < gguf_writer_n_shards(w); s++) /* --keep-split names */
        if (check_output(f, o, gguf_writer_shard_path(w, s), &err)) {
            fprintf(stderr, TOOL ": error: %s: %s\n", gguf_writer_shard_path(w, s), err.msg);
            goto done;
        }
    progress bar;
    progress_start(&bar, "quantizing", p.size_in, !o->quiet && !o->verbose);
    /* tensor i is quantized into b[i % 2] while tensor i - 1 is written */
    pending prev = { .w = w, .f = f, .bar = &bar }, *ready = NULL;
    for (uint64_t i = 0; i < p.n; i++) {
        const plan_item *it = &p.items[i];
        const void *data = it->t->data;
        if (it->convert) {
            bad_value bad;
            const int rc = convert_tensor(it, &b[i % 2], &bad, ready);
            if (ready && prev.rc)
                goto write_failed;
            ready = NULL;
            if (rc) {
                progress_end(&bar);
                fprintf(stderr, TOOL ": error: %s: out of memory converting '%s'\n", o->in,
                        it->t->name);
                goto done;
            }
            if (bad.row >= 0) {
                progress_end(&bar);
                fprintf(stderr, TOOL ": error: %s: tensor '%s' row %" PRId64 " has a non-finite "
                        "value (%s) at column %" PRId64 ": nothing written\n", o->in, it->t->name,
                        bad.row, isnan(bad.v) ? "NaN" : bad.v > 0 ? "+Inf" : "-Inf", bad.col);
                goto done;
            }
            data = b[i % 2].out;
        }
        if (ready) { /* a tensor copied as it is follows one not yet written */
            write_pending(ready);
            if (prev.rc)
                goto write_failed;
        }
        if (o->verbose)
            printf("[%4" PRIu64 "/%4" PRIu64 "] %-36s %-7s -> %-7s %10.3f MiB -> %10.3f MiB%s%s\n",
                   i + 1, p.n, it->t->name, gguf_dtype_name(it->t->type), gguf_dtype_name(it->type),
                   it->t->nbytes / 1048576.0, it->nbytes / 1048576.0,
                   it->why[0] ? "  fallback: " : "", it->why);
        prev.it = it;
        prev.data = data;
        ready = &prev;
    }
    if (ready) {
        write_pending(ready);
        if (prev.rc)
            goto write_failed;
    }
    progress_end(&bar);
    if (gguf_writer_finish(w, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", o->out, err.msg);
        goto done;
    }
    if (!o->quiet) {
        for (uint64_t i = 0; i < p.n; i++)
            if (p.items[i].why[0])
                fprintf(stderr, TOOL ": fallback: %s: %s\n", p.items[i].t->name, p.items[i].why);
        printf("%s: %s -> %s as %s: %.2f MiB (%.2f bpw) -> %.2f MiB (%.2f bpw), %d fallback%s, "
               "%d thread%s, %.2f s\n",
               TOOL, o->in, gguf_writer_shard_path(w, 0), o->preset->name,
               p.size_in / 1048576.0, bpw(p.size_in, p.n_elements), p.size_out / 1048576.0,
               bpw(p.size_out, p.n_elements), p.n_fallback, p.n_fallback == 1 ? "" : "s",
               pool_threads(), pool_threads() == 1 ? "" : "s", now() - t0);
    }
    status = 0;
    goto done;
write_failed: /* writing a tensor (prev) failed */
    progress_end(&bar);
    fprintf(stderr, TOOL ": error: %s: %s\n", o->out, prev.err.msg);
done:
    gguf_writer_free(w);
    free(b[0].out);
    free(b[1].out);
    free_plan(&p);
    gguf_close(f);
    return status;
}

int main(int argc, char **argv)
{
    cli_cleanup_on_signals();
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc == 0 && pool_set_threads(o.threads))
        fprintf(stderr, TOOL ": warning: could not start %d threads; running on %d\n", o.threads,
                pool_threads());
    if (rc == 0)
        rc = run(&o);
    else if (rc < 0)
        rc = 0;
    free_options(&o);
    return rc == 2 ? rc : cli_close_stdout(TOOL, rc);
}
