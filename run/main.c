/*
 * main.c — gguf-run: the command line, text generation and perplexity.
 *
 *   gguf-run -m MODEL.gguf -p PROMPT [-n N] [--ids] [--temp T --top-k K --top-p P --seed S]
 *   gguf-run -m MODEL.gguf --prompt-ids 1,364,638 [-n N] [--ids]
 *   gguf-run -m MODEL.gguf --perplexity TEXT.txt [--ctx-size 256] [--kl-divergence-base OUT]
 *   gguf-run -m MODEL.gguf --kl-divergence --kl-divergence-base OUT
 *   gguf-run -m MODEL.gguf --imatrix OUT -f TEXT [--ctx-size N] [--chunks N] [--process-output]
 *   gguf-run -m MODEL.gguf --verify REF.gguf -f TEXT [--max-kld X] [--min-top1 P] [--max-ppl-ratio R]
 *   any of them with --lora ADAPTER.gguf / --lora-scaled ADAPTER.gguf S (repeatable)
 *
 * Opens the model, tokenizes the prompt, runs it as one batch, then decodes
 * one token at a time until -n tokens, an end-of-generation token or the end
 * of the context. The last line on stderr is the timing summary.
 * Not for: the model's arithmetic (forward.c) or checks (model.c).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "eval.h"
#include "forward.h"
#include <ggufkit/gguf.h>
#include "importance.h"
#include "lora.h"
#include "model.h"
#include "opts.h"
#include <ggufkit/arch.h>
#include "outfile.h"
#include "outpath.h"
#include "pool.h"
#include "progress.h"
#include "readfile.h"
#include "sampler.h"
#include "signals.h"
#include <ggufkit/vocab.h>
#include "sensitivity.h"
#include "verify.h"

#define TOOL "gguf-run"

typedef struct options {
    const char *model, *prompt, *prompt_ids, *perplexity, *dump_logits, *kld_base;
    const char *imatrix, *text, *verify; /* --imatrix OUT, -f TEXT, --verify REF */
    run_verify_limits limits;            /* --max-kld, --min-top1, --max-ppl-ratio */
    int   n_predict, n_ctx, n_batch, n_threads, dump_steps, top_k, chunks;
    float temp, top_p;
    uint64_t seed;
    bool  ids, kld, process_output, no_repack;
    int   imatrix_dat;                   /* --output-format dat (1): the legacy file */
    /* --lora FILE, --lora-scaled FILE S in their order: the files and the
     * scales as given (NULL: 1), checked when the model is loaded */
    cli_lora_item *lora; /* --lora, --lora-scaled in their order */
    int   n_lora;
    char **in_files; /* --in-file: importance matrices to start from (copies) */
    int   n_in;
    const char *sensitivity, *sens_types, *sens_imatrix; /* --sensitivity OUT and its options */
} options;

/* ---------------------------------------------------------------------------
 * Command line
 */

static void usage(FILE *out);

/* A finite number in [lo, hi] into a float. */
static bool parse_float(const char *s, double lo, double hi, float *out)
{
    double v;
    if (!cli_parse_double(s, lo, hi, &v))
        return false;
    *out = (float)v;
    return true;
}

/* --max-kld, --min-top1, --max-ppl-ratio: read as a float, kept as a double. */
static int opt_limit(opts_call *c)
{
    const opt *r = c->row;
    float lim;
    if (!parse_float(c->value, r->min, r->max, &lim) || ((r->flags & OPT_ABOVE_MIN) && !(lim > r->min)))
        return OPTS_BAD_VALUE;
    *(double *)((char *)c->user + r->off) = lim;
    return OPTS_OK;
}

/* Testing: --dump-logits FILE N writes the logits of the first N decode steps. */
static int opt_dump_logits(opts_call *c)
{
    options *o = c->user;
    long n;
    if (c->n_rest < 1)
        return cli_usage_error(TOOL, "--dump-logits needs FILE N");
    o->dump_logits = c->value;
    if (!cli_parse_long(c->rest[0], 1, INT_MAX, &n))
        return OPTS_BAD_VALUE; /* named by FILE, as it always was */
    o->dump_steps = (int)n;
    c->took = 1;
    return OPTS_OK;
}

/* --lora FILE[,FILE...], --lora-scaled FILE:S[,FILE:S...] or FILE S: more
 * adapters (cli_lora_items). */
static int opt_lora(opts_call *c)
{
    options *o = c->user;
    return cli_lora_items(TOOL, c->row->name, !strcmp(c->row->name, "--lora-scaled"), c->value,
                          c->n_rest ? c->rest[0] : NULL, &c->took, &o->lora, &o->n_lora);
}

/* --in-file FILE[,FILE...]: more importance matrices (repeatable; a list
 * as llama-imatrix e21cdc11 reads its one --in-file: cli_csv_fields). */
static int opt_in_file(opts_call *c)
{
    options *o = c->user;
    char **f;
    int n;
    if (!cli_csv_fields(c->value, &f, &n))
        return cli_usage_error(TOOL, "out of memory");
    for (int i = 0; i < n; i++)
        if (!f[i][0]) {
            cli_csv_free(f, n);
            return cli_usage_error(TOOL, "--in-file: an empty file name in '%s'", c->value);
        }
    char **v = realloc(o->in_files, (size_t)(o->n_in + n) * sizeof *v);
    if (!v) {
        cli_csv_free(f, n);
        return cli_usage_error(TOOL, "out of memory");
    }
    o->in_files = v;
    memcpy(v + o->n_in, f, (size_t)n * sizeof *f); /* the strings move over */
    o->n_in += n;
    free(f);
    return OPTS_OK;
}

static const char *const output_formats[] = { "gguf", "dat", NULL };

#define O(f) offsetof(options, f)
static const opt option_rows[] = {
    { OPT_STRING, "--model", "-m", "FILE", O(model),
      .help = "the GGUF model (gguf-inspect --arches lists what runs)" },
    { OPT_STRING, "--prompt", "-p", "TEXT", O(prompt),
      .help = "the prompt (BOS added as the vocabulary says)" },
    { OPT_STRING, "--prompt-ids", .arg = "LIST", .off = O(prompt_ids),
      .help = "the prompt as token ids, comma-separated, used as given" },
    { OPT_INT, "--n-predict", "-n", "N", O(n_predict), .lo = 0, .hi = INT_MAX,
      .help = "tokens to generate (default 128)" },
    { OPT_FLAG, "--ids", .off = O(ids), .help = "print token ids instead of text" },
    { OPT_FLOAT, "--temp", .arg = "T", .off = O(temp), .min = 0, .max = HUGE_VAL,
      .what = " (a number >= 0; 0 is greedy)", .help = "sampling temperature (default 0: greedy)" },
    { OPT_INT, "--top-k", .arg = "K", .off = O(top_k), .lo = 0, .hi = INT_MAX,
      .help = "keep the K most likely tokens (default 40; 0: all)" },
    { OPT_FLOAT, "--top-p", .arg = "P", .off = O(top_p), .min = 0, .max = 1, .flags = OPT_ABOVE_MIN,
      .what = " (a number in (0, 1])",
      .help = "keep the smallest set reaching probability P (default 0.95)" },
    { OPT_U64, "--seed", .arg = "S", .off = O(seed), .lo = 0, .hi = INT_MAX,
      .help = "sampling seed (default 0)" },
    { OPT_INT, "--ctx-size", "-c", "N", O(n_ctx), .lo = 1, .hi = 1 << 24,
      .help = "context length (default: the model's, at most 4096)" },
    { OPT_INT, "--batch-size", "-b", "N", O(n_batch), .lo = 1, .hi = 1 << 16,
      .help = "prompt tokens per forward batch (default 512)" },
    { OPT_THREADS, "--threads", "-t", "N", O(n_threads),
      .help = "threads (default: the cores this process may use)" },
    { OPT_FLAG, "--no-repack", .off = O(no_repack),
      .help = "leave the weights in the file's mapping (no packed copy\n"
              "at load: slower products, the same results; memory\n"
              "then holds only the pages the tokens read)" },
    { OPT_STRING, "--perplexity", .arg = "FILE", .off = O(perplexity),
      .help = "perplexity of a text, llama-perplexity's method" },
    { OPT_STRING, "--kl-divergence-base", .arg = "F", .off = O(kld_base),
      .help = "with --perplexity: save the log-probabilities to F;\n"
              "with --kl-divergence: compare this model with them" },
    { OPT_FLAG, "--kl-divergence", .off = O(kld),
      .help = "mean KL divergence, same top token, perplexities vs F" },
    { OPT_INT, "--chunks", .arg = "N", .off = O(chunks), .lo = 1, .hi = INT_MAX,
      .help = "with --perplexity or --imatrix: only the first N chunks" },
    { OPT_STRING, "--imatrix", .arg = "OUT", .off = O(imatrix),
      .help = "collect an importance matrix over -f TEXT, as llama-imatrix" },
    { OPT_STRING, "--file", "-f", "TEXT", O(text), .help = "the text for --imatrix and --verify" },
    { OPT_STRING, "--verify", .arg = "REF.gguf", .off = O(verify),
      .help = "compare the model with REF on -f TEXT: mean KLD, top-1\n"
              "agreement, perplexities, greedy continuation; exit 1\n"
              "when past a limit:" },
    { OPT_CALL, "--max-kld", .arg = "X", .off = O(limits.max_kld), .call = opt_limit,
      .min = 0, .max = HUGE_VAL, .what = " (a number >= 0)",
      .help = "mean KL(REF || model) at most X nats" },
    { OPT_CALL, "--min-top1", .arg = "P", .off = O(limits.min_top1), .call = opt_limit,
      .min = 0, .max = 1, .what = " (a number in [0, 1])",
      .help = "same top token at P (0..1) of the positions or more" },
    { OPT_CALL, "--max-ppl-ratio", .arg = "R", .off = O(limits.max_ppl_ratio), .call = opt_limit,
      .min = 0, .max = HUGE_VAL, .flags = OPT_ABOVE_MIN, .what = " (a number >= 0)",
      .help = "perplexity of the model / of REF at most R" },
    { OPT_FLAG, "--process-output", .off = O(process_output),
      .help = "with --imatrix: collect output.weight too" },
    { OPT_CHOICE, "--output-format", .arg = "F", .off = O(imatrix_dat), .choices = output_formats,
      .what = "neither gguf nor dat",
      .help = "with --imatrix: gguf (default, llama-imatrix's format\n"
              "now) or dat (the legacy one)" },
    { OPT_CALL, "--in-file", .arg = "FILE", .call = opt_in_file,
      .help = "with --imatrix: start from this importance matrix\n"
              "(repeatable, or FILE,FILE...); without -m: combine\n"
              "them alone (-c: their chunk size, default 512)" },
    { OPT_STRING, "--sensitivity", .arg = "OUT", .off = O(sensitivity),
      .help = "measure over -f TEXT how much quantizing each tensor\n"
              "alone moves the output: a table of mean KLD per\n"
              "tensor and type" },
    { OPT_STRING, "--sensitivity-types", .arg = "LIST", .off = O(sens_types),
      .help = "with --sensitivity: the types to measure (default:\n"
              "q4_K, or q4_0 where q4_K does not fit)" },
    { OPT_STRING, "--sensitivity-imatrix", .arg = "FILE", .off = O(sens_imatrix),
      .help = "with --sensitivity: quantize with this importance\n"
              "matrix, as gguf-quantize --imatrix" },
    { OPT_CALL, "--lora", .arg = "FILE[,FILE...]", .call = opt_lora,
      .help = "apply LoRA adapter GGUFs at scale 1; repeatable" },
    { OPT_CALL, "--lora-scaled", .arg = "FILE:S[,...]", .call = opt_lora,
      .help = "the same at scale S (-10000..10000; 0: checked,\n"
              "not applied); repeatable; also FILE S" },
    { OPT_CALL, "--dump-logits", .arg = "FILE N", .call = opt_dump_logits },
    { OPT_HELP, "--help", "-h", .help = "this text" },
    { OPT_VERSION, .name = "--version" },
    OPTS_END
};
#undef O

/* gguf-run takes no operands: a word that is not an option is unknown, or,
 * as the last word, taken for an option's missing value. */
static int operand(void *user, const char *a, bool last)
{
    (void)user;
    return cli_usage_error(TOOL, last && a[0] != '-' ? "%s needs a value" : "unknown option '%s'", a);
}

static int bad_value(const opt *r, const char *name, const char *v)
{
    if (r->kind == OPT_THREADS)
        return cli_usage_error(TOOL, "bad value for %s: '%s' (1 to %d: 4 x the available "
                               "cores, at most %d)", name, v, cli_max_threads(), POOL_MAX_THREADS);
    if (r->kind == OPT_CHOICE)
        return cli_usage_error(TOOL, "%s: '%s' is %s", name, v, r->what);
    return cli_usage_error(TOOL, "bad value for %s: '%s'%s", name, v,
                           r->what ? r->what : " (a whole number in range)");
}

static const opts_spec spec = { TOOL, option_rows, 22, false, usage, operand, bad_value };

/* llama-imatrix's context, hence chunk size, when combining files alone. */
#define COMBINE_CHUNK 512

static void usage(FILE *out)
{
    fputs("usage: " TOOL " -m MODEL.gguf (-p PROMPT | --prompt-ids ID,ID,...) [options]\n"
          "       " TOOL " -m MODEL.gguf --perplexity TEXT [--ctx-size N] [--kl-divergence-base OUT]\n"
          "       " TOOL " -m MODEL.gguf --kl-divergence --kl-divergence-base OUT\n"
          "       " TOOL " -m MODEL.gguf --imatrix OUT -f TEXT [--ctx-size N] [--chunks N]\n"
          "                [--in-file IMATRIX ...]\n"
          "       " TOOL " --imatrix OUT --in-file IMATRIX --in-file IMATRIX ... [-c N]\n"
          "       " TOOL " -m MODEL.gguf --verify REF.gguf -f TEXT [--chunks N] [limits]\n"
          "\n", out);
    opts_help(&spec, out);
}

/* Returns 0, 1 after printing help, or 2 on a usage error (already reported). */
static int parse_args(options *o, int argc, char **argv)
{
    *o = (options){ .n_predict = 128, .n_batch = 512, .top_k = 40, .top_p = 0.95f,
                    .limits = { -1, -1, -1 } };
    int rc = opts_parse(&spec, 0, argc, argv, 1, o);
    if (rc)
        return rc == OPTS_STOP ? 1 : 2;
    if (o->kld && !o->kld_base)
        return cli_usage_error(TOOL, "--kl-divergence needs --kl-divergence-base FILE");
    if (o->n_in && !o->imatrix)
        return cli_usage_error(TOOL, "--in-file goes with --imatrix OUT");
    const bool combine = o->imatrix && o->n_in && !o->model;
    if (combine && (o->text || o->verify || o->prompt || o->prompt_ids || o->perplexity || o->kld ||
                    o->n_lora || o->chunks || o->process_output))
        return cli_usage_error(TOOL, "without -m MODEL, --imatrix OUT --in-file FILE ... only "
                               "combines the files (-c N and --output-format go with it)");
    if (combine)
        return 0;
    if ((o->imatrix || o->verify || o->sensitivity) && !o->text)
        return cli_usage_error(TOOL, "%s needs the text: -f TEXT", o->imatrix ? "--imatrix"
                               : o->verify ? "--verify" : "--sensitivity");
    if (o->text && !o->imatrix && !o->verify && !o->sensitivity)
        return cli_usage_error(TOOL, "-f TEXT goes with --imatrix, --verify or --sensitivity");
    if (!!o->imatrix + !!o->verify + !!o->sensitivity > 1)
        return cli_usage_error(TOOL, "--imatrix, --verify and --sensitivity are separate runs");
    if ((o->sens_types || o->sens_imatrix) && !o->sensitivity)
        return cli_usage_error(TOOL, "--sensitivity-types and --sensitivity-imatrix go with "
                               "--sensitivity OUT");
    if (o->prompt && o->prompt_ids)
        return cli_usage_error(TOOL, "-p and --prompt-ids are two prompts: give one");
    if (!o->model)
        return cli_usage_error(TOOL, "missing -m MODEL.gguf, the model to run");
    if (!o->prompt && !o->prompt_ids && !o->perplexity && !o->kld && !o->imatrix && !o->verify &&
        !o->sensitivity)
        return cli_usage_error(TOOL, "nothing to do: give a prompt (-p TEXT or --prompt-ids "
                               "LIST) or a mode (--perplexity, --kl-divergence, --imatrix, "
                               "--verify)");
    return 0;
}

/* ---------------------------------------------------------------------------
 * Tokens
 */

/* Parses "1,364,638" into ids (each < n_vocab). */
static int parse_ids(const char *s, int n_vocab, int32_t **ids, int *n, gguf_error *err)
{
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    int32_t *v = malloc(cap * sizeof *v);
    if (!v)
        return gguf_error_set(err, "out of memory");
    int k = 0;
    for (const char *p = s;;) {
        char *end;
        errno = 0;
        long id = strtol(p, &end, 10);
        if (errno || end == p || id < 0 || id >= n_vocab || (*end && *end != ',')) {
            free(v);
            return gguf_error_set(err, "--prompt-ids: \"%s\" is not a list of token ids below %d",
                                  s, n_vocab);
        }
        v[k++] = (int32_t)id;
        if (!*end)
            break;
        p = end + 1;
    }
    *ids = v;
    *n = k;
    return 0;
}

/* Writes token id's text (or the id with --ids) to stdout, right away. */
static void print_token(const gguf_vocab *vocab, int32_t id, bool ids, bool first)
{
    if (ids) {
        printf(first ? "%d" : " %d", id);
    } else {
        char buf[256];
        int n = gguf_vocab_piece(vocab, id, false, buf, sizeof buf);
        if (n > 0)
            fwrite(buf, 1, (size_t)(n < (int)sizeof buf ? n : (int)sizeof buf), stdout);
    }
    fflush(stdout);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------------------
 * Modes
 */

typedef struct runner {
    const options *o;
    gguf_file     *file;
    gguf_vocab    *vocab;
    run_model      model;
    run_state      state;
    run_lora_set   lora;
    float         *logits;
    uint32_t       types[GGUF_DT_COUNT]; /* --sensitivity-types */
    int            n_types;
    bool           failed; /* --verify: past a limit (exit 1, no error message) */
} runner;

/* Generates from the prompt: the prompt as one batch, then token by token. */
static int generate(runner *r, const int32_t *prompt, int n_prompt, gguf_error *err)
{
    const options *o = r->o;
    const int n_vocab = r->model.hp.n_vocab;
    if (n_prompt < 1 || n_prompt > r->state.n_ctx)
        return gguf_error_set(err, "the prompt has %d tokens; the context holds 1..%d", n_prompt,
                              r->state.n_ctx);
    gguf_outfile dump = { 0 };
    if (o->dump_logits && gguf_outfile_open(&dump, o->dump_logits, err))
        return -1;
    run_sampler smp;
    if (run_sampler_init(&smp, n_vocab, o->temp, o->top_k, o->top_p, o->seed)) {
        gguf_outfile_discard(&dump);
        return gguf_error_set(err, "out of memory");
    }
    if (o->prompt && !o->ids) {
        fputs(o->prompt, stdout);
        fflush(stdout);
    }
    double t0 = now();
    run_forward(&r->state, &r->model, prompt, n_prompt, 0, n_prompt - 1, r->logits);
    double t1 = now();
    int pos = n_prompt, n_gen = 0, rc = 0;
    bool full = false;
    while (n_gen < o->n_predict) {
        if (!run_all_finite(r->logits, n_vocab)) {
            rc = gguf_error_set(err, "non-finite logits after %d tokens (NaN or Inf: the weights "
                                "or activations are not finite)", pos);
            break;
        }
        if (o->dump_logits && n_gen < o->dump_steps &&
            gguf_outfile_write(&dump, r->logits, sizeof(float) * (size_t)n_vocab, err)) {
            rc = -1;
            break;
        }
        int32_t id = run_sample(&smp, r->logits);
        if (gguf_vocab_is_eog(r->vocab, id))
            break;
        print_token(r->vocab, id, o->ids, n_gen == 0);
        if (++n_gen == o->n_predict)
            break;
        if (pos == r->state.n_ctx) {
            full = true;
            break;
        }
        run_forward(&r->state, &r->model, &id, 1, pos++, 0, r->logits);
    }
    double t2 = now();
    printf("\n");
    fflush(stdout); /* before stderr: the two may share one file */
    run_sampler_free(&smp);
    if (rc == 0 && o->dump_logits && gguf_outfile_commit(&dump, err))
        rc = -1;
    gguf_outfile_discard(&dump);
    if (rc)
        return -1;
    if (full)
        fprintf(stderr, TOOL ": note: the context is full (%d tokens): generation stopped after "
                "%d of %d tokens (-c sets the context)\n", r->state.n_ctx, n_gen, o->n_predict);
    fprintf(stderr, "timing: prompt %d tokens %.2f tok/s, generation %d tokens %.2f tok/s, %d thread%s\n",
            n_prompt, n_prompt / (t1 - t0), n_gen, n_gen > 0 ? n_gen / (t2 - t1) : 0.0, pool_threads(),
            pool_threads() == 1 ? "" : "s");
    return 0;
}

/* Perplexity of the text file (and the base file for --kl-divergence), or
 * the comparison with a base file; one result line on stdout. */
static int evaluate(runner *r, const int32_t *tokens, int n_tokens, const char **what,
                    gguf_error *err)
{
    const options *o = r->o;
    run_eval_result res;
    double t0 = now();
    int rc;
    // BOS starts every chunk when the vocabulary adds one
    const int32_t bos = gguf_vocab_adds_bos(r->vocab) ? gguf_vocab_bos(r->vocab) : -1;
    if (!o->kld && run_perplexity_check_text(&r->state, n_tokens, err)) {
        *what = o->perplexity;
        return -1;
    }
    /* what goes wrong from here is the model's (non-finite logits), or a
     * base file's, whose messages begin with its name */
    *what = o->model;
    run_kld_stats stats = { 0 };
    if (o->kld) {
        rc = run_kl_divergence_stats(&r->state, &r->model, o->kld_base, bos, &res, &stats, err);
    } else {
        rc = run_perplexity(&r->state, &r->model, tokens, n_tokens, bos, o->chunks, o->kld_base,
                            &res, err);
    }
    if (rc || !isfinite(res.ppl) || (o->kld && !isfinite(res.mean_kld))) {
        run_kld_stats_free(&stats);
        return rc ? -1 : gguf_error_set(err, "%s: non-finite log-probabilities (NaN or Inf: the "
                                        "weights or activations are not finite)", o->model);
    }
    double t1 = now();
    if (o->kld) { /* then llama-perplexity's closing statistics */
        printf("kl-divergence: mean %.6f, same top %.3f%%, ppl %.6f, base ppl %.6f, ratio %.6f "
               "(%d chunks of %d, %ld scored)\n\n", res.mean_kld, 100.0 * res.same_top, res.ppl,
               res.ppl_base, res.ppl / res.ppl_base, res.n_chunk, r->state.n_ctx, res.n_scored);
        run_kld_report(stdout, &stats);
        run_kld_stats_free(&stats);
    } else {
        printf("perplexity: %.6f (%d chunks of %d, %ld scored)\n", res.ppl, res.n_chunk,
               r->state.n_ctx, res.n_scored);
    }
    const int n = res.n_chunk * r->state.n_ctx;
    fprintf(stderr, "timing: prompt %d tokens %.2f tok/s, generation 0 tokens 0.00 tok/s, %d thread%s\n", n,
            n / (t1 - t0), pool_threads(), pool_threads() == 1 ? "" : "s");
    return 0;
}

/* Collects the importance matrix over the text and writes it; one result
 * line on stdout. */
static int collect_imatrix(runner *r, const int32_t *tokens, int n_tokens, const char **what,
                           gguf_error *err)
{
    const options *o = r->o;
    run_importance im;
    const bool with_output = o->process_output && !r->model.tied;
    if (run_importance_init(&im, &r->model, with_output, err)) {
        *what = o->model;
        return -1;
    }
    for (int i = 0; i < o->n_in; i++)
        if (run_importance_load(&im, o->in_files[i], (uint32_t)r->state.n_ctx, err)) {
            *what = o->in_files[i];
            run_importance_free(&im);
            return -1;
        }
    /* what would stop the file from being written is found before the work */
    const char *experts = NULL;
    for (int i = 0; i < im.n && !experts; i++)
        experts = im.e[i].n_mat > 1 ? im.e[i].name : NULL;
    if (experts && o->imatrix_dat && !im.loaded) {
        *what = o->imatrix;
        gguf_error_set(err, "the legacy .dat format cannot hold an expert matrix (%s): use "
                       "--output-format gguf", experts);
        run_importance_free(&im); /* experts points into it */
        return -1;
    }
    if (!experts && r->state.n_batch < RUN_IMPORTANCE_MIN_BATCH) {
        *what = o->model;
        run_importance_free(&im);
        return gguf_error_set(err, "batches of %d tokens would feed no product of %d rows or "
                              "more (llama-imatrix's least): nothing to collect (-c and -b "
                              "%d or more)", r->state.n_batch, RUN_IMPORTANCE_MIN_BATCH,
                              RUN_IMPORTANCE_MIN_BATCH);
    }
    const int32_t bos = gguf_vocab_adds_bos(r->vocab) ? gguf_vocab_bos(r->vocab) : -1;
    int n_chunk = 0;
    double t0 = now();
    int rc = run_importance_collect(&im, &r->state, &r->model, tokens, n_tokens, bos, o->chunks,
                                    with_output, &n_chunk, err);
    double t1 = now();
    for (int i = 0; rc == 0 && i < im.n; i++)
        for (int j = 0; j < im.e[i].ncols; j++)
            if (!isfinite(im.e[i].sum[j])) {
                *what = o->model;
                rc = gguf_error_set(err, "non-finite activations into %s (NaN or Inf: the weights "
                                    "are not finite): no importance matrix written", im.e[i].name);
                break;
            }
    if (rc == 0) {
        *what = o->imatrix;
        rc = im.loaded ? run_importance_save_loaded(&im, o->imatrix, o->text, !o->imatrix_dat,
                                                    (uint32_t)r->state.n_ctx, err)
                       : run_importance_save(&im, o->imatrix, o->text, !o->imatrix_dat,
                                             r->state.n_ctx, err);
    }
    if (rc == 0) {
        int n_saved = 0;
        for (int i = 0; i < im.n; i++)
            n_saved += im.e[i].count > 0 || im.e[i].loaded;
        printf("imatrix: %d matrices over %d chunks of %d written to %s\n", n_saved, n_chunk,
               r->state.n_ctx, o->imatrix);
        const int n = n_chunk * r->state.n_ctx;
        fprintf(stderr, "timing: prompt %d tokens %.2f tok/s, generation 0 tokens 0.00 tok/s, %d thread%s\n",
                n, n / (t1 - t0), pool_threads(), pool_threads() == 1 ? "" : "s");
    }
    run_importance_free(&im);
    return rc;
}

/* --sensitivity-types LIST into r's types: each one gguf-quantize writes
 * without an importance matrix. */
static int sensitivity_types(runner *r, gguf_error *err)
{
    const options *o = r->o;
    const char *list = o->sens_types ? o->sens_types : RUN_SENSITIVITY_TYPES;
    r->n_types = 0;
    for (const char *p = list;;) {
        char name[32];
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        int t = -1;
        if (len > 0 && len < sizeof name) {
            memcpy(name, p, len);
            name[len] = '\0';
            t = gguf_dtype_from_name(name);
        }
        const gguf_codec *c = t >= 0 ? gguf_codec_get((uint32_t)t) : NULL;
        if (!c || !c->quantize || r->n_types == GGUF_DT_COUNT)
            return gguf_error_set(err, "--sensitivity-types: '%.*s' is not a type gguf-quantize "
                                  "can write without an importance matrix", (int)len, p);
        r->types[r->n_types++] = (uint32_t)t;
        if (!end)
            return 0;
        p = end + 1;
    }
}

/* --sensitivity OUT: the importance matrix read, the table written to a
 * temporary file and renamed into place. */
static int measure_sensitivity(runner *r, const int32_t *tokens, int n_tokens, const char **what,
                               gguf_error *err)
{
    const options *o = r->o;
    gguf_imatrix im = { 0 };
    if (o->sens_imatrix && gguf_imatrix_load(o->sens_imatrix, &im, err)) {
        *what = o->sens_imatrix;
        return -1;
    }
    /* the table in memory (small: a line per tensor and type), then
     * written whole: a failed run leaves no file */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        gguf_imatrix_free(&im);
        return gguf_error_set(err, "out of memory");
    }
    const int32_t bos = gguf_vocab_adds_bos(r->vocab) ? gguf_vocab_bos(r->vocab) : -1;
    *what = o->model;
    int rc = run_sensitivity(&r->state, &r->model, r->file, tokens, n_tokens, bos, o->chunks,
                             r->types, r->n_types, !o->sens_types,
                             o->sens_imatrix ? &im : NULL, f, err);
    fclose(f);
    gguf_imatrix_free(&im);
    if (rc == 0) {
        gguf_outfile out;
        *what = o->sensitivity;
        if (gguf_outfile_open(&out, o->sensitivity, err)) {
            rc = -1;
        } else if (gguf_outfile_write(&out, buf, len, err)) {
            gguf_outfile_discard(&out);
            rc = -1;
        } else {
            rc = gguf_outfile_commit(&out, err);
        }
        int n_rows = 0; /* the lines that are not comments */
        for (size_t i = 0; i < len; i++)
            n_rows += (i == 0 || buf[i - 1] == '\n') && buf[i] != '#';
        if (rc == 0)
            printf("sensitivity: %d measurements written to %s\n", n_rows, o->sensitivity);
    }
    free(buf);
    return rc;
}

/* Runs the reference --verify names, then the model, on the same chunks of
 * the text; one result line on stdout, and r->failed when past a limit. The
 * reference's log-probabilities wait in a temporary file of $TMPDIR
 * (.gguf-run-verify-PID.tmp.XXXXXX, an outfile never committed: the signal
 * handler removes it like any other, and the run at its end). */
static int verify(runner *r, const int32_t *tokens, int n_tokens, const char **what,
                  gguf_error *err)
{
    const options *o = r->o;
    const int n_ctx = r->state.n_ctx;
    const int32_t bos = gguf_vocab_adds_bos(r->vocab) ? gguf_vocab_bos(r->vocab) : -1;
    const int n_prompt = RUN_VERIFY_PROMPT < n_ctx / 2 ? RUN_VERIFY_PROMPT : n_ctx / 2;
    const int n_gen = RUN_VERIFY_GREEDY < n_ctx - n_prompt ? RUN_VERIFY_GREEDY : n_ctx - n_prompt;
    int32_t prompt[RUN_VERIFY_PROMPT], ref_ids[RUN_VERIFY_GREEDY], ids[RUN_VERIFY_GREEDY];
    gguf_file *rf = NULL;
    gguf_outfile base = { .slot = -1 };
    FILE *in = NULL;
    run_model rm;
    run_state rs;
    memset(&rm, 0, sizeof rm);
    memset(&rs, 0, sizeof rs);
    run_eval_result res, ref;
    int rc = -1;
    *what = o->text;
    if (run_perplexity_check_text(&r->state, n_tokens, err))
        return -1;
    *what = o->verify;
    if (!(rf = gguf_open(o->verify, 0, err)) || gguf_model_validate(rf, err) ||
        run_verify_same_vocab(r->file, o->model, rf, err) || run_model_load(&rm, rf, err))
        goto done;
    if (rm.hp.n_vocab != r->model.hp.n_vocab) {
        gguf_error_set(err, "has %d tokens, %s has %d: not the same vocabulary", rm.hp.n_vocab,
                       o->model, r->model.hp.n_vocab);
        goto done;
    }
    if (run_state_init(&rs, &rm, n_ctx, r->state.n_batch, err))
        goto done;
    // the reference's log-probabilities, as a --kl-divergence-base file
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char name[4096];
    snprintf(name, sizeof name, "%s/gguf-run-verify-%ld", dir, (long)getpid());
    if (gguf_outfile_open(&base, name, err))
        goto done;
    if (run_perplexity_to(&rs, &rm, tokens, n_tokens, bos, o->chunks, base.fp, base.tmp_path, &ref,
                          err))
        goto done;
    memcpy(prompt, tokens, (size_t)n_prompt * sizeof *prompt);
    if (bos >= 0)
        prompt[0] = bos;
    run_greedy(&rs, &rm, prompt, n_prompt, n_gen, r->logits, ref_ids);
    run_state_free(&rs);
    *what = o->model;
    if (!(in = fopen(base.tmp_path, "rb"))) {
        gguf_error_set(err, "%s: %s", base.tmp_path, strerror(errno));
        goto done;
    }
    if (run_kl_divergence_from(&r->state, &r->model, in, base.tmp_path, bos, &res, err))
        goto done;
    res.ppl_base = ref.ppl; /* exact, not from the file's 16-bit levels */
    run_greedy(&r->state, &r->model, prompt, n_prompt, n_gen, r->logits, ids);
    const int same = run_leading_agreement(ref_ids, ids, n_gen);
    printf("verify: mean KLD %.6f, top-1 agreement %.3f%%, ppl %.6f, reference ppl %.6f, "
           "ratio %.6f, greedy %d/%d leading tokens agree (%d chunks of %d, %ld scored)\n",
           res.mean_kld, 100.0 * res.same_top, res.ppl, res.ppl_base, res.ppl / res.ppl_base,
           same, n_gen, res.n_chunk, n_ctx, res.n_scored);
    char why[160];
    if (!run_verify_within(&res, &o->limits, why, sizeof why)) {
        printf("verify: FAIL: %s\n", why);
        fprintf(stderr, TOOL ": %s: %s\n", o->model, why);
        r->failed = true;
    } else {
        printf("verify: PASS\n");
    }
    rc = 0;
done:
    if (in)
        fclose(in);
    gguf_outfile_discard(&base);
    run_state_free(&rs);
    run_model_free(&rm);
    gguf_close(rf);
    return rc;
}

/* Reads a whole text file into a NUL-terminated buffer; err does not name
 * the file (the caller does). A text for perplexity, --imatrix or --verify:
 * 1 GiB is ~250M tokens. */
static char *read_text(const char *path, size_t *len, gguf_error *err)
{
    uint8_t *buf;
    if (gguf_read_file(path, (size_t)1 << 30, &buf, len, err))
        return NULL;
    return (char *)buf;
}

/* Tokens of the run: --prompt-ids as given, else the prompt or the text file
 * through the tokenizer (with BOS as the vocabulary says). */
static int input_tokens(runner *r, int32_t **ids, int *n, gguf_error *err)
{
    const options *o = r->o;
    if (o->kld)
        return 0; // the tokens are in the base file
    const char *path = o->perplexity ? o->perplexity : o->text;
    if (o->prompt_ids && !path)
        return parse_ids(o->prompt_ids, r->model.hp.n_vocab, ids, n, err);
    size_t len = path ? 0 : strlen(o->prompt), n_ids = 0;
    char *text = path ? read_text(path, &len, err) : NULL;
    if (path && !text)
        return -1;
    int rc = gguf_vocab_encode(r->vocab, text ? text : o->prompt, len, true, false, ids, &n_ids,
                               err);
    free(text);
    if (rc)
        return -1;
    if (n_ids > INT_MAX / 2) {
        free(*ids);
        return gguf_error_set(err, "too many tokens (%zu)", n_ids);
    }
    *n = (int)n_ids;
    return 0;
}

/* Every file this run writes is checked before any work: never a device, a
 * FIFO, a directory or one of the run's inputs (every shard of the model, the
 * texts, the reference model, a base file it reads); and its directory takes
 * the temporary file it will be written to (one is made and removed: a
 * missing or read-only directory, a read-only file system are found now, not
 * after the work). */
static int check_outputs(runner *r, const char **what, gguf_error *err)
{
    const options *o = r->o;
    const char *outs[] = { o->imatrix, o->kld ? NULL : o->kld_base, o->dump_logits, o->sensitivity };
    const size_t cap = 5 + gguf_n_shards(r->file) + (size_t)o->n_lora + (size_t)o->n_in;
    const char **ins = malloc(cap * sizeof *ins);
    size_t n = 0;
    if (!ins)
        return gguf_error_set(err, "out of memory");
    ins[n++] = o->perplexity, ins[n++] = o->text, ins[n++] = o->verify;
    ins[n++] = o->kld ? o->kld_base : NULL;
    ins[n++] = o->sens_imatrix;
    for (uint32_t s = 0; s < gguf_n_shards(r->file); s++)
        ins[n++] = gguf_shard_path(r->file, s);
    for (int i = 0; i < o->n_lora; i++)
        ins[n++] = o->lora[i].file;
    for (int i = 0; i < o->n_in; i++)
        ins[n++] = o->in_files[i];
    int rc = 0;
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) {
        gguf_outfile probe;
        if (!outs[i])
            continue;
        *what = outs[i];
        if (outpath_check(outs[i], ins, n, err) || gguf_outfile_open(&probe, outs[i], err)) {
            rc = -1;
            break;
        }
        gguf_outfile_discard(&probe);
    }
    free(ins);
    return rc;
}

/* The adapters of --lora and --lora-scaled, checked against the model and
 * applied to it; a bad scale or adapter is named by its file. */
static int attach_lora(runner *r, const char **what, gguf_error *err)
{
    const options *o = r->o;
    if (!o->n_lora)
        return 0;
    float *scales = malloc((size_t)o->n_lora * sizeof *scales);
    const char **paths = malloc((size_t)o->n_lora * sizeof *paths);
    if (!scales || !paths) {
        free(scales);
        free(paths);
        return gguf_error_set(err, "out of memory");
    }
    for (int i = 0; i < o->n_lora; i++) {
        const char *sc = o->lora[i].scale;
        double v = 1.0;
        paths[i] = o->lora[i].file;
        if (sc && !cli_parse_double(sc, -RUN_LORA_MAX_SCALE, RUN_LORA_MAX_SCALE, &v)) {
            *what = o->lora[i].file;
            free(scales);
            free(paths);
            return gguf_error_set(err, "--lora-scaled: the scale '%s' is not a number in "
                                  "[-%g, %g]", sc, RUN_LORA_MAX_SCALE, RUN_LORA_MAX_SCALE);
        }
        /* to float from the decimal directly, as llama.cpp's std::stof (not
         * through a double: two roundings could differ in the last bit) */
        scales[i] = sc ? strtof(sc, NULL) : 1.0f;
    }
    int rc = run_lora_attach(&r->lora, &r->model, r->file, paths, scales, o->n_lora, err);
    free(paths);
    free(scales);
    return rc;
}

static int run(runner *r, const char **what, gguf_error *err)
{
    const options *o = r->o;
    *what = o->model;
    if (!(r->file = gguf_open(o->model, 0, err)))
        return -1;
    if (check_outputs(r, what, err))
        return -1;
    *what = o->model;
    const gguf_kv *type = gguf_lookup_kv(r->file, "general.type");
    gguf_str ts = { 0 };
    if ((type && gguf_kv_str(type, &ts) && ts.len == 5 && !memcmp(ts.ptr, "vocab", 5)) ||
        gguf_n_tensors(r->file) == 0)
        return gguf_error_set(err, "vocab-only file (no weights): nothing to run");
    if (gguf_model_validate(r->file, err) || run_model_load(&r->model, r->file, err) ||
        !(r->vocab = gguf_vocab_load(r->file, err)) || attach_lora(r, what, err))
        return -1;
    const run_hparams *hp = &r->model.hp;
    const bool eval = o->perplexity || o->kld;
    if (o->n_ctx > hp->n_ctx_train)
        return gguf_error_set(err, "-c %d is beyond the model's context length of %d",
                              o->n_ctx, hp->n_ctx_train);
    int n_ctx = o->n_ctx ? o->n_ctx : hp->n_ctx_train < 4096 ? hp->n_ctx_train : 4096;
    if (o->kld) {
        *what = o->kld_base;
        if ((n_ctx = run_kld_file_ctx(o->kld_base, err)) < 0)
            return -1;
        *what = o->model;
    }
    /* llama.cpp's default context is the model's whole one: with LongRoPE
     * that takes the long factors where our default may take the short */
    const run_model *rm = &r->model;
    if (!o->n_ctx && !o->kld && run_rope_factors(rm, n_ctx) != run_rope_factors(rm, hp->n_ctx_train))
        fprintf(stderr, TOOL ": note: a context of %d rotates by the LongRoPE factors for contexts "
                "up to %d; llama.cpp's default (the model's %d) uses the long ones: -c %d or more "
                "to match it\n", n_ctx, hp->n_ctx_orig, hp->n_ctx_train, hp->n_ctx_orig + 1);
    int n_batch = o->n_batch < n_ctx ? o->n_batch : n_ctx;
    r->logits = malloc((size_t)hp->n_vocab * sizeof(float));
    if (!r->logits)
        return gguf_error_set(err, "out of memory");
    if (o->sensitivity) { /* the activations of every type tried fit the state */
        *what = o->sensitivity;
        if (sensitivity_types(r, err))
            return -1;
        *what = o->model;
        const size_t a = run_sensitivity_act_row(&r->model, r->file, r->types, r->n_types);
        r->model.extra_act_row = a > r->model.extra_act_row ? a : r->model.extra_act_row;
    }
    if (run_state_init(&r->state, &r->model, n_ctx, n_batch, err))
        return -1;
    int32_t *ids = NULL;
    int n_ids = 0;
    if (o->perplexity || o->text)
        *what = o->perplexity ? o->perplexity : o->text;
    if (input_tokens(r, &ids, &n_ids, err))
        return -1;
    int rc = o->sensitivity ? measure_sensitivity(r, ids, n_ids, what, err)
             : o->verify  ? verify(r, ids, n_ids, what, err)
             : o->imatrix ? collect_imatrix(r, ids, n_ids, what, err)
             : eval     ? evaluate(r, ids, n_ids, what, err)
                        : generate(r, ids, n_ids, err);
    free(ids);
    return rc;
}

/* --imatrix OUT --in-file FILE ... without a model: the files added up and
 * written as llama-imatrix e21cdc11 combines them; one result line. */
static int combine_imatrix(const options *o, const char **what, gguf_error *err)
{
    const uint32_t chunk = o->n_ctx ? (uint32_t)o->n_ctx : COMBINE_CHUNK;
    gguf_outfile probe;
    *what = o->imatrix;
    if (outpath_check(o->imatrix, (const char *const *)o->in_files, (size_t)o->n_in, err) ||
        gguf_outfile_open(&probe, o->imatrix, err))
        return -1;
    gguf_outfile_discard(&probe);
    run_importance im = { 0 };
    int rc = 0;
    for (int i = 0; rc == 0 && i < o->n_in; i++)
        if ((rc = run_importance_load(&im, o->in_files[i], chunk, err)))
            *what = o->in_files[i];
    if (rc == 0) {
        *what = o->imatrix;
        rc = run_importance_save_loaded(&im, o->imatrix, NULL, !o->imatrix_dat, chunk, err);
    }
    if (rc == 0) {
        int64_t mx = 0;
        for (int i = 0; i < im.n; i++)
            for (int k = 0; k < im.e[i].n_mat; k++) {
                const int64_t c = im.e[i].counts ? im.e[i].counts[k] : im.e[i].count;
                mx = c > mx ? c : mx;
            }
        printf("imatrix: %d matrices from %d file%s (%lld chunks of %u) written to %s\n", im.n,
               o->n_in, o->n_in == 1 ? "" : "s", (long long)(mx / chunk), chunk, o->imatrix);
    }
    run_importance_free(&im);
    return rc;
}

/* True when msg already starts with "PATH:" for one of the run's files:
 * printed as it is, so that no file is named twice. */
static bool names_a_file(const char *msg, const options *o)
{
    const char *files[] = { o->model, o->perplexity, o->text, o->verify, o->kld_base,
                            o->imatrix, o->dump_logits };
    const size_t n = sizeof files / sizeof *files;
    for (size_t i = 0; i < n + (size_t)o->n_lora + (size_t)o->n_in; i++) {
        const char *f = i < n ? files[i] : i < n + (size_t)o->n_lora ? o->lora[i - n].file
                                                                     : o->in_files[i - n - (size_t)o->n_lora];
        size_t k = f ? strlen(f) : 0;
        if (k && !strncmp(msg, f, k) && msg[k] == ':')
            return true;
    }
    return false;
}

int main(int argc, char **argv)
{
    cli_cleanup_on_signals();
    options o;
    int rc = parse_args(&o, argc, argv);
    if (rc) {
        cli_lora_free(o.lora, o.n_lora);
        for (int i = 0; i < o.n_in; i++)
            free(o.in_files[i]);
        free(o.in_files);
        return rc == 1 ? cli_close_stdout(TOOL, 0) : 2;
    }
    run_model_set_repack(!o.no_repack);
    if (o.n_threads && pool_set_threads(o.n_threads))
        fprintf(stderr, TOOL ": warning: could not start %d threads; running on %d\n", o.n_threads,
                pool_threads());
    runner r = { .o = &o };
    gguf_error err = { 0 };
    const char *what = o.model;
    rc = o.model ? run(&r, &what, &err) : combine_imatrix(&o, &what, &err);
    fflush(stdout); /* what was printed comes before the error */
    if (rc && names_a_file(err.msg, &o))
        fprintf(stderr, TOOL ": error: %s\n", err.msg);
    else if (rc)
        fprintf(stderr, TOOL ": error: %s: %s\n", what, err.msg);
    free(r.logits);
    run_state_free(&r.state);
    gguf_vocab_free(r.vocab);
    run_lora_free(&r.lora, &r.model);
    run_model_free(&r.model);
    cli_lora_free(o.lora, o.n_lora);
    for (int i = 0; i < o.n_in; i++)
        free(o.in_files[i]);
    free(o.in_files);
    gguf_close(r.file);
    return cli_close_stdout(TOOL, rc || r.failed ? 1 : 0);
}
