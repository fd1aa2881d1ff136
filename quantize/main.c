/*
 * main.c — gguf-quantize: GGUF → GGUF with llama-quantize's presets.
 *
 *   gguf-quantize [options] IN.gguf [OUT.gguf] TYPE [THREADS]
 *
 * Stages: parse the command line (llama-quantize's form), open the input,
 * plan every tensor's target type (policy.c, recipes), then stream: each
 * tensor in pieces of whole rows (64 MiB at most), converted to f32 a row
 * at a time, checked finite and quantized on the worker pool while the
 * piece before is written. Memory holds a few pieces, whatever the size of
 * a tensor or of the model.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
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
#include "finite.h"
#include <ggufkit/gguf.h>
#include <ggufkit/quants.h>
#include <ggufkit/arch.h>
#include "opts.h"
#include "outpath.h"
#include "pool.h"
#include "progress.h"
#include "qplan.h"
#include "readfile.h"
#include "signals.h"
#include "outfile.h"
#include "target.h"

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
    const char   *pos[4];  /* the words that are not options: IN [OUT] TYPE [THREADS] */
    int           npos;
    const char   *sens_path, *write_recipe; /* --sensitivity TABLE, --write-recipe FILE */
    const char   *like_name, *write_costs;  /* --like PRESET, --write-costs FILE */
    const preset *like;
    float         target_bpw;               /* --target-bpw (0: none) */
    uint64_t      target_size;              /* --target-size (0: none) */
} options;

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

/* --include-weights, --exclude-weights: one more name (val 0, 1). */
static int opt_weights(opts_call *c)
{
    options *o = c->user;
    int rc = c->row->val ? push_str(&o->exclude, &o->n_exclude, c->value)
                         : push_str(&o->include, &o->n_include, c->value);
    return rc ? 1 : 0; /* out of memory */
}

/* --output-tensor-type, --token-embedding-type: a type name into the int. */
static int opt_type(opts_call *c)
{
    gguf_error err;
    int *t = (int *)((char *)c->user + c->row->off);
    if ((*t = recipe_parse_type(c->value, &err)) < 0)
        return cli_usage_error(TOOL, "%s: %s", c->name, err.msg);
    return 0;
}

static int opt_tensor_type(opts_call *c)
{
    gguf_error err;
    options *o = c->user;
    return recipe_add_rule_arg(&o->rec, c->value, &err) ? die_usage("%s", err.msg) : 0;
}

/* --tensor-type-file (val 0), --recipe (val 1): rules from a file, read now. */
static int opt_rule_file(opts_call *c)
{
    gguf_error err;
    options *o = c->user;
    if (push_str(&o->recipe_paths, &o->n_recipe_paths, c->value))
        return 1;
    if (c->row->val ? recipe_load_yaml(&o->rec, c->value, &err)
                    : load_tensor_type_file(o, c->value, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", c->value, err.msg);
        return 1;
    }
    return 0;
}

static int opt_prune(opts_call *c)
{
    if (!parse_prune(c->user, c->value))
        return die_usage("--prune-layers: '%s' is not a list of block numbers (0 to 511, "
                         "comma-separated)", c->value);
    return 0;
}

static int opt_override(opts_call *c)
{
    const char *val = c->value;
    if (parse_override(c->user, val))
        return cli_usage_error(TOOL, "malformed --override-kv '%.80s%s' (want KEY=TYPE:VALUE: "
                               "a key of 1 to 65535 bytes, TYPE int (32-bit), float "
                               "(finite), bool or str)", val, strlen(val) > 80 ? "..." : "");
    return 0;
}

static void usage(FILE *out);

#define O(f) offsetof(options, f)
static const opt option_rows[] = {
    { OPT_FLAG, "--allow-requantize", .off = O(allow_requantize),
      .help = "requantize tensors that are already quantized" },
    { OPT_FLAG, "--leave-output-tensor", .off = O(pol.leave_output),
      .help = "keep output.weight as it is" },
    { OPT_FLAG, "--pure", .off = O(pol.pure),
      .help = "no per-tensor mix: every quantizable tensor gets TYPE" },
    { OPT_STRING, "--imatrix", .arg = "FILE", .off = O(imatrix_path),
      .help = "importance matrix (llama-imatrix format)" },
    { OPT_CALL, "--include-weights", .arg = "NAME", .call = opt_weights, .val = 0,
      .help = "use the imatrix only for tensors whose name contains NAME" },
    { OPT_CALL, "--exclude-weights", .arg = "NAME", .call = opt_weights, .val = 1,
      .help = "do not use the imatrix for tensors whose name contains NAME" },
    { OPT_CALL, "--output-tensor-type", .arg = "T", .off = O(pol.output_type), .call = opt_type,
      .help = "type of output.weight" },
    { OPT_CALL, "--token-embedding-type", .arg = "T", .off = O(pol.token_embedding_type),
      .call = opt_type, .help = "type of token_embd.weight" },
    { OPT_CALL, "--tensor-type", .arg = "REGEX=T", .call = opt_tensor_type,
      .help = "type of tensors whose name matches REGEX (repeatable)" },
    { OPT_CALL, "--tensor-type-file", .arg = "FILE", .call = opt_rule_file, .val = 0,
      .help = "REGEX=T rules from FILE, separated by spaces or newlines" },
    { OPT_CALL, "--recipe", .arg = "FILE.yaml", .call = opt_rule_file, .val = 1,
      .help = "per-tensor types from a recipe (docs/gguf-quantize.md)" },
    { OPT_CALL, "--prune-layers", .arg = "L0,L1,...", .call = opt_prune,
      .help = "leave these blocks out (the rest are renumbered)" },
    { OPT_CALL, "--override-kv", .arg = "K=TYPE:VAL", .call = opt_override,
      .help = "set metadata; TYPE is int, float, bool or str" },
    { OPT_STRING, "--sensitivity", .arg = "TABLE", .off = O(sens_path),
      .help = "choose each tensor's type for the size from gguf-run\n"
              "--sensitivity's table (default size: TYPE's own)" },
    { OPT_FLOAT, "--target-bpw", .arg = "B", .off = O(target_bpw), .min = 1, .max = 32,
      .what = " (a number from 1 to 32)", .help = "with --sensitivity: a file of B bits per weight" },
    { OPT_SIZE, "--target-size", .arg = "BYTES", .off = O(target_size),
      .help = "with --sensitivity: tensor data of at most BYTES (K, M, G)" },
    { OPT_STRING, "--like", .arg = "PRESET", .off = O(like_name),
      .help = "with --sensitivity: the size PRESET gives this model" },
    { OPT_STRING, "--write-costs", .arg = "FILE", .off = O(write_costs),
      .help = "with --sensitivity: write the table completed with\n"
              "the importance matrix's estimates" },
    { OPT_STRING, "--write-recipe", .arg = "FILE", .off = O(write_recipe),
      .help = "with --sensitivity: write the mix chosen as a recipe" },
    { OPT_FLAG, "--keep-split", .off = O(keep_split),
      .help = "write the output in the same shards as the input" },
    { OPT_FLAG, "--dry-run", .off = O(dry_run),
      .help = "print the plan (types, fallbacks, size) and write nothing" },
    { OPT_THREADS, "--threads", "-t", "N", O(threads), .help = "threads (default: all cores)" },
    { OPT_FLAG, "--verbose", "-v", .off = O(verbose), .help = "one line per tensor while writing" },
    { OPT_FLAG, "--quiet", "-q", .off = O(quiet), .help = "no progress bar and no summary" },
    { OPT_HELP, "--help", .short_ = "-h" },
    { OPT_VERSION, .name = "--version" },
    OPTS_END
};
#undef O

/* IN [OUT] TYPE [THREADS]: sorted out after the options. */
static int operand(void *user, const char *a, bool last)
{
    options *o = user;
    (void)last;
    if (o->npos == 4)
        return die_usage("too many arguments ('%s')", a);
    o->pos[o->npos++] = a;
    return 0;
}

static int bad_option(const opt *r, const char *name, const char *v)
{
    if (r->kind == OPT_THREADS)
        return cli_usage_error(TOOL, "bad thread count '%s' (1 to %d)", v, cli_max_threads());
    return cli_usage_error(TOOL, "bad value for %s: '%s'%s", name, v,
                           r->what ? r->what : " (a size: N, NK, NM or NG)");
}

static const opts_spec spec = { TOOL, option_rows, 27, false, usage, operand, bad_option };

static void usage(FILE *out)
{
    fputs("usage: " TOOL " [options] IN.gguf [OUT.gguf] TYPE [THREADS]\n\n", out);
    opts_help(&spec, out);
    fputs("\nTYPE (name or llama.cpp ftype number):\n", out);
    preset_list(out);
}

static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->pol.output_type = o->pol.token_embedding_type = -1;
    recipe_init(&o->rec);
    int rc = opts_parse(&spec, 0, argc, argv, 1, o);
    if (rc)
        return rc;
    const char **pos = o->pos;
    int npos = o->npos;
    if (o->n_include && o->n_exclude)
        return die_usage("%s", "--include-weights and --exclude-weights cannot be used together");
    if ((o->target_bpw > 0) + (o->target_size > 0) + (o->like_name != NULL) > 1)
        return die_usage("%s", "--target-bpw, --target-size and --like are three sizes: give one");
    if (o->like_name && !(o->like = preset_find(o->like_name)))
        return die_usage("--like: unknown quantization type '%s'", o->like_name);
    if ((o->target_bpw > 0 || o->target_size || o->like_name || o->write_recipe ||
         o->write_costs) && !o->sens_path)
        return die_usage("%s", "--target-bpw, --target-size, --like, --write-recipe and "
                         "--write-costs go with --sensitivity TABLE");
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

static int apply_target(const gguf_file *f, const options *o, plan *p, gguf_error *err);
static void free_plan(plan *p);
static int check_output(const gguf_file *f, const options *o, const char *out, gguf_error *err);

/* llama.cpp visits tensors sorted by (layer, name), non-layer tensors first;
 * with --keep-split by (shard, offset). */
static int cmp_llama_order(const void *a, const void *b)
{
    return gguf_tensor_name_order(((const plan_item *)a)->t->name, ((const plan_item *)b)->t->name);
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
static const char *file_tensor_name(const void *f, uint64_t i)
{
    return gguf_tensor_at(f, i)->name;
}

static int model_facts(const gguf_file *f, policy_model *m, gguf_error *err)
{
    memset(m, 0, sizeof *m);
    gguf_str s;
    char arch[64];
    if (gguf_get_str(f, GGUF_KEY_ARCHITECTURE, &s, err))
        return -1;
    snprintf(arch, sizeof arch, "%.*s", (int)(s.len < 63 ? s.len : 63), s.ptr);
    const gguf_arch *a = gguf_arch_find(arch);
    gguf_hparams *hp;
    if (a && kv_fmt(f, GGUF_KEY_BLOCK_COUNT, arch) && gguf_hparams_read(f, &hp, err) == 0) {
        qplan_facts_hparams(m, hp);
        gguf_hparams_free(hp);
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
    qplan_facts_names(m, arch, file_tensor_name, f, gguf_n_tensors(f));
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
    for (uint64_t i = 0; i < p->n; i++)
        n += qplan_is_attention_wv(a, p->items[i].name);
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

    p->file_type = (uint32_t)o->preset->ftype;
    if (o->preset->copy && gguf_file_type_of(f, &p->file_type, err))
        return -1;
    for (uint64_t i = 0; i < p->n; i++) {
        plan_item *it = &p->items[i];
        const gguf_tensor *t = it->t;
        it->type = t->type;
        /* COPY: every tensor as it is */
        if (qplan_tensor_type(&m, &st, &o->pol, &o->rec, o->preset, it->name, t->n_dims, t->ne,
                              t->type, &it->type, it->why, sizeof it->why, err))
            return -1;
        it->convert = it->type != t->type;
        if (it->convert && qplan_require_imatrix(o->imatrix_path != NULL, it->name, it->type,
                                                 o->preset->ftype, o->dry_run, &p->needs_imatrix, err))
            return -1;
        if (it->convert) {
            const gguf_dtype_traits *src = gguf_dtype_get(t->type);
            if (!gguf_codec_get(t->type))
                return gguf_error_set(err, "tensor '%s': cannot convert from type %s", t->name,
                                      src->name);
            if (src->blck_size > 1 && !o->allow_requantize)
                return gguf_error_set(err, "tensor '%s' is already %s: requantizing needs "
                                      "--allow-requantize", t->name, src->name);
            if (qplan_imatrix(&p->im, imatrix_selected(o, t->name), t->name, t->ne, it->type,
                              o->dry_run, &it->imatrix, &p->needs_imatrix, err))
                return -1;
            p->n_imatrix += it->imatrix != NULL;
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
    return o->sens_path ? apply_target(f, o, p, err) : 0;
}

/* YAML single-quoted: a quote doubled. The tensor name as a regular
 * expression matching it alone: ^NAME$ with its metacharacters escaped. */
static void put_pattern(FILE *out, const char *name)
{
    fputs("'^", out);
    for (const char *c = name; *c; c++) {
        if (strchr(".^$*+?()[]{}|\\", *c))
            fputc('\\', out);
        if (*c == '\'')
            fputc('\'', out);
        fputc(*c, out);
    }
    fputs("$'", out);
}

/* Writes buf (len bytes, freed) to path as a whole: a temporary file
 * renamed into place. */
static int write_whole(const char *path, char *buf, size_t len, gguf_error *err)
{
    gguf_outfile out;
    int rc = gguf_outfile_open(&out, path, err);
    if (rc == 0 && gguf_outfile_write(&out, buf, len, err)) {
        gguf_outfile_discard(&out);
        rc = -1;
    } else if (rc == 0) {
        rc = gguf_outfile_commit(&out, err);
    }
    free(buf);
    return rc;
}

/* --write-recipe: every retyped tensor's type, as a recipe gguf-quantize
 * reads back (with the same TYPE, the same file). Written whole. */
static int write_recipe(const options *o, const plan *p, const bool *target, gguf_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return gguf_error_set(err, "out of memory");
    fprintf(m, "# the mix gguf-quantize --sensitivity %s chose for %s: %.2f MiB of tensor data\n"
               "preset: %s\ntensors:\n", o->sens_path, o->in, p->size_out / 1048576.0,
            o->preset->name);
    for (uint64_t i = 0; i < p->n; i++)
        if (target[i]) {
            fputs("  - match: ", m);
            put_pattern(m, p->items[i].name);
            fprintf(m, "\n    type: %s\n", gguf_dtype_name(p->items[i].type));
        }
    fclose(m);
    return write_whole(o->write_recipe, buf, len, err);
}

/* The types the estimate tries for every tensor (and its stock type). */
static const uint32_t estimate_types[] = {
    GGUF_DT_Q2_K, GGUF_DT_Q3_K, GGUF_DT_Q4_K, GGUF_DT_Q5_K, GGUF_DT_Q6_K, GGUF_DT_Q8_0,
    /* for rows the K-quants do not fit (what the presets fall back to) */
    GGUF_DT_Q4_0, GGUF_DT_Q4_1, GGUF_DT_Q5_0, GGUF_DT_Q5_1, GGUF_DT_IQ4_NL,
};

/* --write-costs: the table completed, in gguf-run --sensitivity's format
 * (--sensitivity reads it back). Written whole. */
static int write_costs(const options *o, const target_table *t, gguf_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return gguf_error_set(err, "out of memory");
    fprintf(m, "# %s completed by gguf-quantize for %s: the types it has not measured at the "
               "importance matrix's estimate (%s), scaled by the measured\n"
               "# tensor\ttype\tbytes\tmean_kld\n",
            o->sens_path, o->in, o->imatrix_path ? o->imatrix_path : "none");
    for (size_t i = 0; i < t->n; i++)
        fprintf(m, "%s\t%s\t%llu\t%.9g\n", t->rows[i].name, gguf_dtype_name(t->rows[i].type),
                (unsigned long long)t->rows[i].bytes, t->rows[i].kld);
    fclose(m);
    return write_whole(o->write_costs, buf, len, err);
}

/* --like: the tensor data PRESET's own mix takes for this model. */
static int like_size(const gguf_file *f, const options *o, uint64_t *size, gguf_error *err)
{
    options o2 = *o;
    o2.preset = o->like;
    o2.like_name = o2.sens_path = o2.write_recipe = o2.write_costs = NULL;
    o2.target_bpw = 0;
    o2.target_size = 0;
    plan p2 = { 0 };
    const int rc = make_plan(f, &o2, &p2, err);
    *size = p2.size_out;
    free_plan(&p2);
    if (rc)
        gguf_error_prefix(err, "--like %s: ", o->like->name);
    return rc;
}

static int apply_target(const gguf_file *f, const options *o, plan *p, gguf_error *err)
{
    target_table t = { 0 };
    target_item *items = calloc(p->n ? p->n : 1, sizeof *items);
    bool *is_item = calloc(p->n ? p->n : 1, sizeof *is_item);
    int rc = -1;
    if (!items || !is_item) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    /* the tensors the preset quantizes are chosen for; the rest keep their bytes */
    uint64_t fixed = 0, n_elements = 0;
    size_t n = 0;
    for (uint64_t i = 0; i < p->n; i++) {
        const plan_item *it = &p->items[i];
        n_elements += (uint64_t)it->t->n_elements;
        if (!it->convert || gguf_dtype_get(it->type)->blck_size < 2) {
            fixed += it->nbytes;
            continue;
        }
        is_item[i] = true;
        items[n++] = (target_item){ it->t->name, it->t->ne[0],
                                    (uint64_t)(it->t->n_elements / it->t->ne[0]), it->type, 0,
                                    it->t, it->imatrix,
                                    it->t->n_dims > 2 ? (int)it->t->ne[2] : 1 };
    }
    uint64_t target = o->target_size ? o->target_size
                    : o->target_bpw > 0 ? (uint64_t)((double)o->target_bpw *
                                                     (double)n_elements / 8.0)
                    : p->size_out;
    if (o->like && like_size(f, o, &target, err))
        goto done;
    if (target <= fixed) {
        gguf_error_set(err, "a target of %llu bytes leaves nothing for the quantized tensors "
                       "(the others take %llu)", (unsigned long long)target,
                       (unsigned long long)fixed);
        goto done;
    }
    if (target_table_load(o->sens_path, &t, err)) {
        gguf_error_prefix(err, "%s: ", o->sens_path);
        goto done;
    }
    /* the types the table has not measured, from the importance matrix's estimate */
    target_table est;
    if (target_estimate(items, n, estimate_types,
                        (int)(sizeof estimate_types / sizeof *estimate_types), &est, err))
        goto done;
    rc = target_table_fill(&t, &est, err);
    target_table_free(&est);
    if (rc)
        goto done;
    rc = -1;
    if (o->write_costs && (check_output(f, o, o->write_costs, err) || write_costs(o, &t, err))) {
        if (!strstr(err->msg, o->write_costs))
            gguf_error_prefix(err, "%s: ", o->write_costs);
        goto done;
    }
    target_result res;
    if (target_allocate(items, n, &t, target - fixed, &res, err)) {
        gguf_error_prefix(err, "%s: ", o->sens_path);
        goto done;
    }
    p->size_out = fixed;
    for (uint64_t i = 0, k = 0; i < p->n; i++) {
        plan_item *it = &p->items[i];
        if (is_item[i]) {
            const uint32_t ty = items[k++].chosen;
            if (ty != it->type && !it->imatrix && !gguf_codec_get(ty)->quantize) {
                gguf_error_set(err, "tensor '%s': type %s needs an importance matrix "
                               "(--imatrix, with data for this tensor)", it->name,
                               gguf_dtype_name(ty));
                goto done;
            }
            if (ty != it->type)
                it->why[0] = '\0'; /* the preset's fallback note no longer applies */
            it->type = ty;
            uint64_t row;
            if (gguf_row_size(ty, it->t->ne[0], &row, err))
                goto done;
            it->nbytes = row * (uint64_t)(it->t->n_elements / it->t->ne[0]);
            p->size_out += it->nbytes;
        }
    }
    if (!o->quiet) {
        if (res.kept_stock)
            printf("target: %s's own mix kept: its summed measured KLD %.6g is the least found "
                   "for %.2f MiB\n", o->preset->name, res.stock_kld, target / 1048576.0);
        else
            printf("target: %d of %zu tensors retyped by measured KLD: summed %.6g (%s's mix: "
                   "%.6g), %.2f MiB of tensor data for a target of %.2f MiB\n", res.n_changed, n,
                   res.kld, o->preset->name, res.stock_kld, p->size_out / 1048576.0,
                   target / 1048576.0);
    }
    rc = o->write_recipe && (check_output(f, o, o->write_recipe, err) ||
                             write_recipe(o, p, is_item, err)) ? -1 : 0;
    if (rc && !strstr(err->msg, o->write_recipe))
        gguf_error_prefix(err, "%s: ", o->write_recipe);
done:
    free(items);
    free(is_item);
    target_table_free(&t);
    return rc;
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
        printf("%-4" PRIu64 " %-36s %-18s %-7s -> %-7s %10" PRIu64 "  %s%s%s%s\n", i + 1,
               it->name, shape, gguf_dtype_name(it->t->type), gguf_dtype_name(it->type),
               it->nbytes, it->convert ? "" : "copy", !it->convert && it->why[0] ? "; " : "",
               it->why[0] ? "fallback: " : "", it->why[0] ? it->why : (it->imatrix ? "imatrix" : ""));
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
    rc |= qplan_set_type_keys(w, p->file_type);
    for (int i = 0; i < o->n_overrides && !rc; i++)
        rc = set_override(w, &o->overrides[i]);
    if (p->im_entries > 0 && !rc)
        rc |= qplan_set_imatrix_keys(w, o->imatrix_path, &p->im, p->im_entries);
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

/* Tensors go through in pieces of whole rows, each at most PIECE_MAX bytes
 * of input and of output (one row at least), so that memory holds a few
 * pieces whatever the size of a tensor: a piece is quantized into one of
 * two buffers while the piece before is written from the other, and its
 * input pages are released once it is quantized (once it is written, for a
 * piece copied as it is). */
#define PIECE_MAX ((uint64_t)64 << 20)
#define PIECE_ENV "GGUFKIT_QUANTIZE_PIECE"

/* The piece size: PIECE_MAX, or smaller from GGUFKIT_QUANTIZE_PIECE (bytes,
 * 1 to PIECE_MAX: for tests, to send a small tensor through many pieces).
 * 0 when the variable holds anything else. */
static uint64_t piece_max(void)
{
    const char *e = getenv(PIECE_ENV);
    long v;
    if (!e)
        return PIECE_MAX;
    return cli_parse_long(e, 1, (long)PIECE_MAX, &v) ? (uint64_t)v : 0;
}

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



/* Where a piece found a value it refuses (row -1: none): a non-finite
 * input value, or (out) an output value that is not finite although the
 * input was (too large for the type: f16 tops at 65504, and so do the f16
 * scales of the block types). */
typedef struct bad_value {
    int64_t row, col;
    float   v;    /* the value at (row, col): the input's, or the output's when out */
    bool    out;
    float   amax; /* out: the row's largest input magnitude */
} bad_value;

/* Whether a copied tensor of this type can hold a non-finite value that a
 * check can find: floats, and block types the codecs read. */
static bool checkable(uint32_t type)
{
    return type == GGUF_DT_F64 || gguf_codec_get(type) != NULL;
}

/* A piece whose bytes are ready, written while the next one is computed. */
typedef struct pending {
    const void *data;
    uint64_t    n;
    const void *release;  /* input to release once written (a copied piece), or NULL */
    uint64_t    in_bytes; /* the input it stands for (the progress bar) */
} pending;

typedef struct stream {
    gguf_writer     *w;
    const gguf_file *f;
    progress        *bar;
    pending          prev;
    bool             have; /* prev is waiting to be written */
    int              rc;
    gguf_error       err;
} stream;

static void write_pending(stream *s)
{
    if (!s->have)
        return;
    s->have = false;
    if (gguf_writer_write_tensor(s->w, s->prev.data, s->prev.n, &s->err)) {
        s->rc = -1;
        return;
    }
    progress_add(s->bar, s->prev.in_bytes);
    if (s->prev.release) /* done with these input pages */
        gguf_release_range(s->f, s->prev.release, s->prev.n);
}

/* One piece's job: rows [row0, row0 + rows) of a tensor, a unit a chunk of
 * them. */
typedef struct {
    const plan_item *it;
    const uint8_t   *src;    /* the piece's first row */
    uint8_t         *out;    /* its quantized rows; NULL: a copied piece, checked only */
    int64_t          n0, row0, rows, chunk;
    uint64_t         row, src_row;
    bool             check_out; /* dequantize each output row and check it */
    bool             fused;     /* f16 → q8_0 in one pass (gguf_quantize_q8_0_f16) */
    float           *tmp;    /* 2 × n0 floats per thread */
    _Atomic int      failed;
    pthread_mutex_t  lock;   /* guards bad */
    bad_value       *bad;
    stream          *write;  /* writes its pending piece as unit 0; NULL: none */
} piece_job;

static void found_bad(piece_job *j, bad_value b)
{
    pthread_mutex_lock(&j->lock);
    if (j->bad->row < 0 || b.row < j->bad->row)
        *j->bad = b;
    pthread_mutex_unlock(&j->lock);
}

/* The first non-finite double of n, or -1 (its value as a float in *v). */
static int64_t first_nonfinite_f64(const uint8_t *x, int64_t n, float *v)
{
    for (int64_t i = 0; i < n; i++) {
        double d;
        memcpy(&d, x + 8 * i, 8);
        if (!isfinite(d)) {
            *v = (float)d;
            return i;
        }
    }
    return -1;
}

static void piece_unit(void *ctx, int64_t u, int thread)
{
    piece_job *j = ctx;
    if (j->write && u-- == 0) {
        write_pending(j->write);
        return;
    }
    const gguf_tensor *t = j->it->t;
    const int64_t n0 = j->n0, r0 = u * j->chunk;
    const int64_t nr = j->rows - r0 < j->chunk ? j->rows - r0 : j->chunk;
    float *tmp = j->tmp ? j->tmp + (size_t)thread * 2 * (size_t)n0 : NULL, *back = tmp ? tmp + n0 : NULL;
    if (!tmp && (t->type != GGUF_DT_F32 || j->check_out)) {
        atomic_store(&j->failed, 1);
        return;
    }
    /* row by row, so a row's f32 form stays in the first-level cache from
     * its conversion through the checks to its quantization */
    for (int64_t r = r0; r < r0 + nr; r++) {
        const int64_t row = j->row0 + r;
        const uint8_t *xs = j->src + (uint64_t)r * j->src_row;
        const float *f = (const float *)xs;
        int64_t at;
        float v = 0, amax = 0;
        if (j->fused) {
            /* f16 → q8_0 in one pass; a non-finite value is then found
             * and reported the ordinary way below */
            uint8_t *y = j->out + (uint64_t)r * j->row;
            if (gguf_quantize_q8_0_f16((const gguf_half *)xs, y, n0, &amax))
                continue;
        }
        if (t->type == GGUF_DT_F64) {
            at = first_nonfinite_f64(xs, n0, &v);
        } else {
            if (t->type != GGUF_DT_F32) {
                gguf_dequantize_row(t->type, xs, tmp, n0, NULL);
                f = tmp;
            }
            /* llama.cpp copies it, or quantizes it into finite garbage */
            at = nonfinite_amax_f32(f, n0, &amax);
            v = at >= 0 ? f[at] : 0;
        }
        if (at >= 0) {
            found_bad(j, (bad_value){ row, at, v, false, 0 });
            return;
        }
        if (!j->out)
            continue;
        /* experts: each slice of ne[1] rows has its own importance weights */
        const float *w = j->it->imatrix ? j->it->imatrix + (row / t->ne[1] % t->ne[2]) * n0 : NULL;
        uint8_t *y = j->out + (uint64_t)r * j->row;
        if (!gguf_quantize_rows(j->it->type, f, y, 1, n0, w, NULL)) {
            atomic_store(&j->failed, 1); /* the plan checked codec and weights: not expected */
            return;
        }
        if (j->check_out && amax >= QPLAN_CHECK_OUT_FROM) {
            float amax_out;
            gguf_dequantize_row(j->it->type, y, back, n0, NULL);
            if ((at = nonfinite_amax_f32(back, n0, &amax_out)) >= 0) {
                found_bad(j, (bad_value){ row, at, back[at], true, amax });
                return;
            }
        }
    }
}

/* Rows [row0, row0 + rows) of a tensor, on the pool's threads: converted
 * to f32 a row at a time in a small buffer of each thread's own (the f32
 * form of a tensor never exists whole and the data crosses memory once),
 * checked finite, and quantized into out — or, with out NULL (a piece copied
 * as it is), only checked. Work goes out in chunks of rows (llama.cpp's
 * 32×512-element units); the piece before (write, if not NULL) is written
 * meanwhile, as unit 0. -1: out of memory. */
static int piece_run(const plan_item *it, int64_t row0, int64_t rows, uint8_t *out, float *tmp,
                     bad_value *bad, stream *write)
{
    const gguf_tensor *t = it->t;
    piece_job j = { .it = it, .out = out, .n0 = t->ne[0], .row0 = row0, .rows = rows, .tmp = tmp,
                    .bad = bad, .write = write };
    gguf_row_size(it->type, j.n0, &j.row, NULL);
    gguf_row_size(t->type, j.n0, &j.src_row, NULL);
    j.src = t->data + (uint64_t)row0 * j.src_row;
    /* an f32 output is the checked input; every other may overflow */
    j.check_out = out && it->type != GGUF_DT_F32;
    /* q8_0 of f16 (an importance matrix changes nothing for q8_0): its
     * largest scale, 65504/127, needs no check of the output */
    j.fused = out && t->type == GGUF_DT_F16 && it->type == GGUF_DT_Q8_0 && ((uintptr_t)j.src & 1) == 0;
    j.chunk = j.n0 >= 16384 ? 1 : (16384 + j.n0 - 1) / j.n0;
    atomic_init(&j.failed, 0);
    pthread_mutex_init(&j.lock, NULL);
    bad->row = -1;
    pool_for((write ? 1 : 0) + (rows + j.chunk - 1) / j.chunk, piece_unit, &j);
    pthread_mutex_destroy(&j.lock);
    return atomic_load(&j.failed) ? -1 : 0;
}

/* Prints why a tensor is refused; "nothing written": the output is dropped. */
static void report_bad(const options *o, const plan_item *it, const bad_value *b)
{
    const char *what = isnan(b->v) ? "NaN" : b->v > 0 ? "+Inf" : "-Inf";
    if (!b->out)
        fprintf(stderr, TOOL ": error: %s: tensor '%s' row %" PRId64 " has a non-finite value (%s) "
                "at column %" PRId64 ": nothing written\n", o->in, it->t->name, b->row, what, b->col);
    else
        fprintf(stderr, TOOL ": error: %s: tensor '%s' row %" PRId64 " is too large for %s: column %"
                PRId64 " comes out %s (the row's largest magnitude is %g; f16 values and scales hold "
                "at most 65504): nothing written\n", o->in, it->t->name, b->row,
                gguf_dtype_name(it->type), b->col, what, (double)b->amax);
}

/* Checks, quantizes and writes every tensor of the plan, in pieces
 * (PIECE_MAX): 0, or -1 after saying why. */
static int stream_tensors(const gguf_file *f, gguf_writer *w, const options *o, const plan *p)
{
    const uint64_t piece = piece_max();
    uint8_t *buf[2] = { NULL, NULL };
    size_t cap[2] = { 0, 0 }, tmp_cap = 0;
    float *tmp = NULL;
    int cur = 0, rc = -1;
    const char *oom_name = "";
    progress bar;
    progress_start(&bar, "quantizing", p->size_in, !o->quiet && !o->verbose);
    stream s = { .w = w, .f = f, .bar = &bar };
    for (uint64_t i = 0; i < p->n; i++) {
        const plan_item *it = &p->items[i];
        const gguf_tensor *t = it->t;
        const int64_t n0 = t->ne[0], rows = n0 ? t->n_elements / n0 : 0;
        uint64_t src_row = 0, row = 0;
        gguf_row_size(t->type, n0, &src_row, NULL);
        gguf_row_size(it->type, n0, &row, NULL);
        const uint64_t widest = src_row > row ? src_row : row;
        const int64_t per = widest && piece / widest > 1 ? (int64_t)(piece / widest) : 1;
        const int64_t n_pieces = (rows + per - 1) / per;
        if (o->verbose) {
            char pieces[48] = "";
            if (n_pieces > 1)
                snprintf(pieces, sizeof pieces, "  in %" PRId64 " pieces", n_pieces);
            printf("[%4" PRIu64 "/%4" PRIu64 "] %-36s %-7s -> %-7s %10.3f MiB -> %10.3f MiB%s%s%s\n",
                   i + 1, p->n, t->name, gguf_dtype_name(t->type), gguf_dtype_name(it->type),
                   t->nbytes / 1048576.0, it->nbytes / 1048576.0, pieces,
                   it->why[0] ? "  fallback: " : "", it->why);
        }
        /* copied tensors are checked too, where their type can hold a NaN */
        const bool check = it->convert || checkable(t->type);
        oom_name = t->name;
        if (check && reserve((void **)&tmp, &tmp_cap, (size_t)pool_threads() * 2 * (size_t)n0 * sizeof(float)))
            goto oom;
        for (int64_t r0 = 0; r0 < rows; r0 += per) {
            const int64_t nr = rows - r0 < per ? rows - r0 : per;
            const uint8_t *src = t->data + (uint64_t)r0 * src_row;
            uint8_t *out = NULL;
            bad_value bad = { .row = -1 };
            if (it->convert && reserve((void **)&buf[cur], &cap[cur], (size_t)nr * row))
                goto oom;
            if (it->convert)
                out = buf[cur];
            int fail = 0;
            if (check)
                fail = piece_run(it, r0, nr, out, tmp, &bad, s.have ? &s : NULL);
            else
                write_pending(&s);
            if (s.rc)
                goto write_failed;
            if (fail)
                goto oom;
            if (bad.row >= 0) {
                progress_end(&bar);
                report_bad(o, it, &bad);
                goto done;
            }
            if (out) { /* quantized: its input is no longer needed */
                gguf_release_range(f, src, (uint64_t)nr * src_row);
                s.prev = (pending){ out, (uint64_t)nr * row, NULL, (uint64_t)nr * src_row };
                cur ^= 1;
            } else {   /* written from the mapping, released after */
                s.prev = (pending){ src, (uint64_t)nr * src_row, src, (uint64_t)nr * src_row };
            }
            s.have = true;
        }
    }
    write_pending(&s);
    if (s.rc)
        goto write_failed;
    progress_end(&bar);
    rc = 0;
    goto done;
oom:
    progress_end(&bar);
    fprintf(stderr, TOOL ": error: %s: out of memory converting '%s'\n", o->in, oom_name);
    goto done;
write_failed:
    progress_end(&bar);
    fprintf(stderr, TOOL ": error: %s: %s\n", o->out, s.err.msg);
done:
    free(buf[0]);
    free(buf[1]);
    free(tmp);
    return rc;
}

/* ------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------ */

/* The output path (and every shard it will be split into) may replace
 * nothing of the run's inputs: any shard of the model, the imatrix, the
 * recipes; nor a device, a FIFO or a directory (outpath_check). */
static int check_output(const gguf_file *f, const options *o, const char *out, gguf_error *err)
{
    size_t n = 0, cap = gguf_n_shards(f) + 2 + (size_t)o->n_recipe_paths;
    const char **ins = malloc(cap * sizeof *ins);
    if (!ins)
        return gguf_error_set(err, "out of memory");
    for (uint32_t s = 0; s < gguf_n_shards(f); s++)
        ins[n++] = gguf_shard_path(f, s);
    ins[n++] = o->imatrix_path;
    ins[n++] = o->sens_path;
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
        /* llama-quantize's writer stores ggml_n_dims: trailing axes of 1
         * dropped (Qwen 3.5's ffn_gate_inp_shexp [n, 1] comes out [n]) */
        uint32_t n_dims = t->n_dims;
        while (n_dims > 1 && t->ne[n_dims - 1] == 1)
            n_dims--;
        int64_t idx = gguf_writer_add_tensor(w, p.items[i].name, p.items[i].type, n_dims, t->ne,
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
    if (stream_tensors(f, w, o, &p))
        goto done;
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
done:
    gguf_writer_free(w);
    free_plan(&p);
    gguf_close(f);
    return status;
}

int main(int argc, char **argv)
{
    cli_cleanup_on_signals();
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc == 0 && piece_max() == 0)
        rc = cli_usage_error(TOOL, PIECE_ENV "='%s' is not a byte count from 1 to %d",
                             getenv(PIECE_ENV), (int)PIECE_MAX);
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
