/*
 * main.c — gguf-run: the command line, text generation and perplexity.
 *
 *   gguf-run -m MODEL.gguf -p PROMPT [-n N] [--ids] [--temp T --top-k K --top-p P --seed S]
 *   gguf-run -m MODEL.gguf --prompt-ids 1,364,638 [-n N] [--ids]
 *   gguf-run -m MODEL.gguf --perplexity TEXT.txt [--ctx-size 256] [--kl-divergence-base OUT]
 *   gguf-run -m MODEL.gguf --kl-divergence --kl-divergence-base OUT
 *   gguf-run -m MODEL.gguf --imatrix OUT -f TEXT [--ctx-size N] [--chunks N] [--process-output]
 *   gguf-run -m MODEL.gguf --verify REF.gguf -f TEXT [--max-kld X] [--min-top1 P] [--max-ppl-ratio R]
 *
 * Opens the model, tokenizes the prompt, runs it as one batch, then decodes
 * one token at a time until -n tokens, an end-of-generation token or the end
 * of the context. The last line on stderr is the timing summary.
 * Not for: the model's arithmetic (forward.c) or checks (model.c).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "eval.h"
#include "forward.h"
#include "gguf.h"
#include "importance.h"
#include "model.h"
#include "names.h"
#include "sampler.h"
#include "tokenizer.h"
#include "verify.h"

#define TOOL "gguf-run"

typedef struct options {
    const char *model, *prompt, *prompt_ids, *perplexity, *dump_logits, *kld_base;
    const char *imatrix, *text, *verify; /* --imatrix OUT, -f TEXT, --verify REF */
    run_verify_limits limits;            /* --max-kld, --min-top1, --max-ppl-ratio */
    int   n_predict, n_ctx, n_batch, n_threads, dump_steps, top_k, chunks;
    float temp, top_p;
    uint64_t seed;
    bool  ids, kld, process_output;
} options;

/* ---------------------------------------------------------------------------
 * Command line
 */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " TOOL " -m MODEL.gguf (-p PROMPT | --prompt-ids ID,ID,...) [options]\n"
            "       " TOOL " -m MODEL.gguf --perplexity TEXT [--ctx-size N] [--kl-divergence-base OUT]\n"
            "       " TOOL " -m MODEL.gguf --kl-divergence --kl-divergence-base OUT\n"
            "       " TOOL " -m MODEL.gguf --imatrix OUT -f TEXT [--ctx-size N] [--chunks N]\n"
            "       " TOOL " -m MODEL.gguf --verify REF.gguf -f TEXT [--chunks N] [limits]\n"
            "\n"
            "  -m, --model FILE      the GGUF model (llama, mistral, qwen2)\n"
            "  -p, --prompt TEXT     the prompt (BOS added as the vocabulary says)\n"
            "  --prompt-ids LIST     the prompt as token ids, comma-separated, used as given\n"
            "  -n, --n-predict N     tokens to generate (default 128)\n"
            "  --ids                 print token ids instead of text\n"
            "  --temp T              sampling temperature (default 0: greedy)\n"
            "  --top-k K             keep the K most likely tokens (default 40; 0: all)\n"
            "  --top-p P             keep the smallest set reaching probability P (default 0.95)\n"
            "  --seed S              sampling seed (default 0)\n"
            "  -c, --ctx-size N      context length (default: the model's, at most 4096)\n"
            "  -b, --batch-size N    prompt tokens per forward batch (default 512)\n"
            "  -t, --threads N       OpenMP threads\n"
            "  --perplexity FILE     perplexity of a text, llama-perplexity's method\n"
            "  --kl-divergence-base F  with --perplexity: save the log-probabilities to F;\n"
            "                        with --kl-divergence: compare this model with them\n"
            "  --kl-divergence       mean KL divergence, same top token, perplexities vs F\n"
            "  --chunks N            with --perplexity or --imatrix: only the first N chunks\n"
            "  --imatrix OUT         collect an importance matrix over -f TEXT, as llama-imatrix\n"
            "  -f, --file TEXT       the text for --imatrix and --verify\n"
            "  --verify REF.gguf     compare the model with REF on -f TEXT: mean KLD, top-1\n"
            "                        agreement, perplexities, greedy continuation; exit 1\n"
            "                        when past a limit:\n"
            "  --max-kld X           mean KL(REF || model) at most X nats\n"
            "  --min-top1 P          same top token at P (0..1) of the positions or more\n"
            "  --max-ppl-ratio R     perplexity of the model / of REF at most R\n"
            "  --process-output      with --imatrix: collect output.weight too\n"
            "  -h, --help            this text\n");
}

/* Parses a whole decimal integer in [lo, hi]. */
static bool parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

static bool parse_float(const char *s, float *out)
{
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* Returns 0, 1 after printing help, or 2 on a usage error (already reported). */
static int parse_args(options *o, int argc, char **argv)
{
    *o = (options){ .n_predict = 128, .n_batch = 512, .top_k = 40, .top_p = 0.95f,
                    .limits = { -1, -1, -1 } };
    float lim;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true, takes = true;
        int seed;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(a, "--ids")) {
            o->ids = true;
            takes = false;
        } else if (!strcmp(a, "--process-output")) {
            o->process_output = true;
            takes = false;
        } else if (!strcmp(a, "--kl-divergence")) {
            o->kld = true;
            takes = false;
        } else if (!v) {
            fprintf(stderr, TOOL ": error: %s needs a value (or is unknown)\n", a);
            return 2;
        } else if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            o->model = v;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) {
            o->prompt = v;
        } else if (!strcmp(a, "--prompt-ids")) {
            o->prompt_ids = v;
        } else if (!strcmp(a, "--perplexity")) {
            o->perplexity = v;
        } else if (!strcmp(a, "--verify")) {
            o->verify = v;
        } else if (!strcmp(a, "--max-kld")) {
            ok = parse_float(v, &lim) && lim >= 0;
            o->limits.max_kld = lim;
        } else if (!strcmp(a, "--min-top1")) {
            ok = parse_float(v, &lim) && lim >= 0 && lim <= 1;
            o->limits.min_top1 = lim;
        } else if (!strcmp(a, "--max-ppl-ratio")) {
            ok = parse_float(v, &lim) && lim > 0;
            o->limits.max_ppl_ratio = lim;
        } else if (!strcmp(a, "--imatrix")) {
            o->imatrix = v;
        } else if (!strcmp(a, "-f") || !strcmp(a, "--file")) {
            o->text = v;
        } else if (!strcmp(a, "--kl-divergence-base")) {
            o->kld_base = v;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) {
            ok = parse_int(v, 0, INT_MAX, &o->n_predict);
        } else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) {
            ok = parse_int(v, 1, 1 << 24, &o->n_ctx);
        } else if (!strcmp(a, "-b") || !strcmp(a, "--batch-size")) {
            ok = parse_int(v, 1, 1 << 16, &o->n_batch);
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            ok = parse_int(v, 1, 1024, &o->n_threads);
        } else if (!strcmp(a, "--chunks")) {
            ok = parse_int(v, 1, INT_MAX, &o->chunks);
        } else if (!strcmp(a, "--top-k")) {
            ok = parse_int(v, 0, INT_MAX, &o->top_k);
        } else if (!strcmp(a, "--temp")) {
            ok = parse_float(v, &o->temp);
        } else if (!strcmp(a, "--top-p")) {
            ok = parse_float(v, &o->top_p);
        } else if (!strcmp(a, "--seed")) {
            ok = parse_int(v, 0, INT_MAX, &seed);
            o->seed = (uint64_t)seed;
        } else if (!strcmp(a, "--dump-logits") && i + 2 < argc) {
            // testing: --dump-logits FILE N writes the logits of the first N decode steps
            o->dump_logits = v;
            ok = parse_int(argv[i + 2], 1, INT_MAX, &o->dump_steps);
            i++;
        } else {
            fprintf(stderr, TOOL ": error: unknown option %s\n", a);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, TOOL ": error: bad value for %s: %s\n", a, v);
            return 2;
        }
        i += takes;
    }
    if (o->kld && !o->kld_base) {
        fprintf(stderr, TOOL ": error: --kl-divergence needs --kl-divergence-base FILE\n");
        return 2;
    }
    if ((o->imatrix || o->verify) && !o->text) {
        fprintf(stderr, TOOL ": error: %s needs the text: -f TEXT\n",
                o->imatrix ? "--imatrix" : "--verify");
        return 2;
    }
    if (o->text && !o->imatrix && !o->verify) {
        fprintf(stderr, TOOL ": error: -f TEXT goes with --imatrix or --verify\n");
        return 2;
    }
    if (o->imatrix && o->verify) {
        fprintf(stderr, TOOL ": error: --imatrix and --verify are separate runs\n");
        return 2;
    }
    if (!o->model ||
        (!o->prompt && !o->prompt_ids && !o->perplexity && !o->kld && !o->imatrix && !o->verify)) {
        usage(stderr);
        return 2;
    }
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
    float         *logits;
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
    FILE *dump = NULL;
    if (o->dump_logits && !(dump = fopen(o->dump_logits, "wb")))
        return gguf_error_set(err, "%s: %s", o->dump_logits, strerror(errno));
    run_sampler smp;
    if (run_sampler_init(&smp, n_vocab, o->temp, o->top_k, o->top_p, o->seed)) {
        if (dump)
            fclose(dump);
        return gguf_error_set(err, "out of memory");
    }
    if (o->prompt && !o->ids) {
        fputs(o->prompt, stdout);
        fflush(stdout);
    }
    double t0 = now();
    run_forward(&r->state, &r->model, prompt, n_prompt, 0, n_prompt - 1, r->logits);
    double t1 = now();
    int pos = n_prompt, n_gen = 0;
    while (n_gen < o->n_predict) {
        if (dump && n_gen < o->dump_steps)
            fwrite(r->logits, sizeof(float), (size_t)n_vocab, dump);
        int32_t id = run_sample(&smp, r->logits);
        if (gguf_vocab_is_eog(r->vocab, id))
            break;
        print_token(r->vocab, id, o->ids, n_gen == 0);
        if (++n_gen == o->n_predict || pos == r->state.n_ctx)
            break;
        run_forward(&r->state, &r->model, &id, 1, pos++, 0, r->logits);
    }
    double t2 = now();
    printf("\n");
    run_sampler_free(&smp);
    if (dump && fclose(dump))
        return gguf_error_set(err, "%s: %s", o->dump_logits, strerror(errno));
    fprintf(stderr, "timing: prompt %d tokens %.2f tok/s, generation %d tokens %.2f tok/s\n",
            n_prompt, n_prompt / (t1 - t0), n_gen, n_gen > 0 ? n_gen / (t2 - t1) : 0.0);
    return 0;
}

/* Perplexity of the text file (and the base file for --kl-divergence), or
 * the comparison with a base file; one result line on stdout. */
static int evaluate(runner *r, const int32_t *tokens, int n_tokens, gguf_error *err)
{
    const options *o = r->o;
    run_eval_result res;
    double t0 = now();
    int rc;
    // BOS starts every chunk when the vocabulary adds one
    const int32_t bos = gguf_vocab_adds_bos(r->vocab) ? gguf_vocab_bos(r->vocab) : -1;
    if (o->kld) {
        rc = run_kl_divergence(&r->state, &r->model, o->kld_base, bos, &res, err);
    } else {
        rc = run_perplexity(&r->state, &r->model, tokens, n_tokens, bos, o->chunks, o->kld_base,
                            &res, err);
    }
    if (rc)
        return -1;
    double t1 = now();
    if (o->kld)
        printf("kl-divergence: mean %.6f, same top %.3f%%, ppl %.6f, base ppl %.6f, ratio %.6f "
               "(%d chunks of %d, %ld scored)\n", res.mean_kld, 100.0 * res.same_top, res.ppl,
               res.ppl_base, res.ppl / res.ppl_base, res.n_chunk, r->state.n_ctx, res.n_scored);
    else
        printf("perplexity: %.6f (%d chunks of %d, %ld scored)\n", res.ppl, res.n_chunk,
               r->state.n_ctx, res.n_scored);
    const int n = res.n_chunk * r->state.n_ctx;
    fprintf(stderr, "timing: prompt %d tokens %.2f tok/s, generation 0 tokens 0.00 tok/s\n", n,
            n / (t1 - t0));
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
    if (run_importance_init(&im, &r->model, with_output, err))
        return -1;
    const int32_t bos = gguf_vocab_adds_bos(r->vocab) ? gguf_vocab_bos(r->vocab) : -1;
    int n_chunk = 0;
    double t0 = now();
    int rc = run_importance_collect(&im, &r->state, &r->model, tokens, n_tokens, bos, o->chunks,
                                    with_output, &n_chunk, err);
    double t1 = now();
    if (rc == 0) {
        *what = o->imatrix;
        rc = run_importance_save(&im, o->imatrix, o->text, err);
    }
    if (rc == 0) {
        int n_saved = 0;
        for (int i = 0; i < im.n; i++)
            n_saved += im.e[i].count > 0;
        printf("imatrix: %d matrices over %d chunks of %d written to %s\n", n_saved, n_chunk,
               r->state.n_ctx, o->imatrix);
        const int n = n_chunk * r->state.n_ctx;
        fprintf(stderr, "timing: prompt %d tokens %.2f tok/s, generation 0 tokens 0.00 tok/s\n",
                n, n / (t1 - t0));
    }
    run_importance_free(&im);
    return rc;
}

/* Runs the reference --verify names, then the model, on the same chunks of
 * the text; one result line on stdout, and r->failed when past a limit. */
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
    run_model rm;
    run_state rs;
    memset(&rm, 0, sizeof rm);
    memset(&rs, 0, sizeof rs);
    run_eval_result res, ref;
    int rc = -1;
    // the reference's log-probabilities go through a --kl-divergence-base file
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char base[4096];
    snprintf(base, sizeof base, "%s/gguf-run-verify-XXXXXX", dir);
    int fd = mkstemp(base);
    if (fd < 0)
        return gguf_error_set(err, "%s: %s", base, strerror(errno));
    close(fd);
    *what = o->verify;
    if (!(rf = gguf_open(o->verify, 0, err)) || run_model_load(&rm, rf, err))
        goto done;
    if (rm.hp.n_vocab != r->model.hp.n_vocab) {
        gguf_error_set(err, "has %d tokens, %s has %d: not the same vocabulary", rm.hp.n_vocab,
                       o->model, r->model.hp.n_vocab);
        goto done;
    }
    if (run_state_init(&rs, &rm, n_ctx, r->state.n_batch, err))
        goto done;
    *what = o->text;
    if (run_perplexity(&rs, &rm, tokens, n_tokens, bos, o->chunks, base, &ref, err))
        goto done;
    memcpy(prompt, tokens, (size_t)n_prompt * sizeof *prompt);
    if (bos >= 0)
        prompt[0] = bos;
    run_greedy(&rs, &rm, prompt, n_prompt, n_gen, r->logits, ref_ids);
    run_state_free(&rs);
    *what = o->model;
    if (run_kl_divergence(&r->state, &r->model, base, bos, &res, err))
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
    unlink(base);
    run_state_free(&rs);
    run_model_free(&rm);
    gguf_close(rf);
    return rc;
}

/* Reads a whole file into a NUL-terminated buffer. */
static char *read_text(const char *path, size_t *len, gguf_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        gguf_error_set(err, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *grown = realloc(buf, cap *= 2);
        if (!grown)
            free(buf);
        buf = grown;
    }
    if (!buf || ferror(f)) {
        gguf_error_set(err, "%s: %s", path, buf ? "read error" : "out of memory");
        free(buf);
        buf = NULL;
    } else {
        buf[n] = 0;
        *len = n;
    }
    fclose(f);
    return buf;
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

static int run(runner *r, const char **what, gguf_error *err)
{
    const options *o = r->o;
    *what = o->model;
    if (!(r->file = gguf_open(o->model, 0, err)) || run_model_load(&r->model, r->file, err) ||
        !(r->vocab = gguf_vocab_load(r->file, err)))
        return -1;
    const run_hparams *hp = &r->model.hp;
    const bool eval = o->perplexity || o->kld;
    int n_ctx = o->n_ctx ? o->n_ctx : hp->n_ctx_train < 4096 ? hp->n_ctx_train : 4096;
    if (o->kld) {
        *what = o->kld_base;
        if ((n_ctx = run_kld_file_ctx(o->kld_base, err)) < 0)
            return -1;
    }
    int n_batch = o->n_batch < n_ctx ? o->n_batch : n_ctx;
    r->logits = malloc((size_t)hp->n_vocab * sizeof(float));
    if (!r->logits)
        return gguf_error_set(err, "out of memory");
    if (run_state_init(&r->state, &r->model, n_ctx, n_batch, err))
        return -1;
    int32_t *ids = NULL;
    int n_ids = 0;
    if (o->perplexity || o->text)
        *what = o->perplexity ? o->perplexity : o->text;
    if (input_tokens(r, &ids, &n_ids, err))
        return -1;
    int rc = o->verify  ? verify(r, ids, n_ids, what, err)
             : o->imatrix ? collect_imatrix(r, ids, n_ids, what, err)
             : eval     ? evaluate(r, ids, n_ids, err)
                        : generate(r, ids, n_ids, err);
    free(ids);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_args(&o, argc, argv);
    if (rc)
        return rc == 1 ? 0 : 2;
#ifdef _OPENMP
    if (o.n_threads)
        omp_set_num_threads(o.n_threads);
#endif
    runner r = { .o = &o };
    gguf_error err = { { 0 } };
    const char *what = o.model;
    rc = run(&r, &what, &err);
    if (rc)
        fprintf(stderr, TOOL ": error: %s: %s\n", what, err.msg);
    free(r.logits);
    run_state_free(&r.state);
    gguf_vocab_free(r.vocab);
    run_model_free(&r.model);
    gguf_close(r.file);
    return rc || r.failed ? 1 : 0;
}
