/*
 * test_modelcheck.c — the model validation (modelcheck.h): every fixture
 * GGUF and synthetic models of each described architecture pass, and one
 * broken variant per rule fails with that rule's message.
 *
 * Each synthetic model is built on a writer and checked twice: on the writer
 * (gguf_model_validate_writer, as gguf-convert checks before it writes) and,
 * written out with zero-filled tensors and opened again, on the file
 * (gguf_model_validate). Both must give the same verdict and message.
 *
 * Not for: the container's own rules (test_validate.c).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <math.h>
#include <unistd.h>

#include <ggufkit/gguf.h>
#include <ggufkit/arch.h>
#include "testutil.h"

/* ------------------------------------------------------------------------
 * Synthetic models
 * ------------------------------------------------------------------------ */

typedef struct spec spec;

/* A key replaced (or removed) after the model's metadata is set. */
typedef struct key_edit {
    const char *key;
    char        kind; /* 'u' u32, 'i' i32, 'q' u64, 'f' f32, 'd' f64, 's' str, 'b' u8, 'x' remove */
    double      num;
    const char *str;
} key_edit;

struct spec {
    const char *arch;     /* general.architecture ("llama" when NULL) */
    const char *type;     /* general.type (none when NULL) */
    const char *tok;      /* tokenizer.ggml.model: "llama" (SPM, default), "gpt2", "-" none */
    int         dim, layers, ffn, heads, kv_heads, vocab;
    int         head_dim; /* 0: dim / heads; else key_length = value_length = head_dim */
    bool        tied;     /* no output.weight */
    bool        bias;     /* q/k/v biases */
    bool        fused;    /* phi3: attn_qkv and a gate-up ffn_up, no q/k/v or gate */
    bool        gemma;    /* post_attention_norm and post_ffw_norm per block (gemma3: and
                           * q/k norms) */
    bool        qwen35;   /* Qwen 3.5 dense: gated delta net blocks, every 4th gated attention
                           * (ssm sizes: conv 4, state 16, 2 groups, 4 value heads) */
    bool        no_tensors;
    const char *skip;     /* a tensor left out */
    const char *reshape;  /* a tensor given the shape re0 × re1 (re1 0: a vector, */
    int64_t     re0, re1; /* unless re_dims says 2) */
    uint32_t    re_dims;
    const char *extra;    /* a tensor added at the end, ex0 × ex1 */
    int64_t     ex0, ex1;
    key_edit    edits[4];
    void (*hook)(gguf_writer *w, const spec *s); /* edits arrays */
};

/* Key edits, every field given (-Wmissing-field-initializers). */
#define KU(k, v) { k, 'u', v, NULL }
#define KI(k, v) { k, 'i', v, NULL }
#define KQ(k, v) { k, 'q', v, NULL } /* v < 0: UINT64_MAX */
#define KF(k, v) { k, 'f', v, NULL }
#define KD(k, v) { k, 'd', v, NULL }
#define KB(k, v) { k, 'b', v, NULL }
#define KS(k, v) { k, 's', 0, v }
#define KX(k)    { k, 'x', 0, NULL }

/* The passing model the variants start from (fields left 0): LLaMA-shaped
 * like build/sample.gguf, dim 64, 2 blocks, ffn 96, 4 heads of 16, 2 kv
 * heads, 270 tokens. */
static spec with_defaults(const spec *in)
{
    spec s = *in;
    s.dim = s.dim ? s.dim : 64;
    s.layers = s.layers ? s.layers : 2;
    s.ffn = s.ffn ? s.ffn : 96;
    s.heads = s.heads ? s.heads : 4;
    s.kv_heads = s.kv_heads ? s.kv_heads : 2;
    s.vocab = s.vocab ? s.vocab : 270;
    return s;
}

static const char *arch_of(const spec *s) { return s->arch ? s->arch : "llama"; }

static void set_arch_key(gguf_writer *w, const spec *s, const char *suffix, uint32_t v)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch_of(s), suffix);
    ck_assert_int_eq(gguf_writer_set_u32(w, key, v), 0);
}

/* Text of token i: SPM (<unk> <s> </s>, 256 byte tokens, then pieces) or
 * BPE (pieces, then "a", "b", "ab", merged by "a b"). */
static void token_text(const spec *s, bool bpe, int i, char buf[32])
{
    const int n = s->vocab;
    if (bpe)
        snprintf(buf, 32, "%s", i == n - 3 ? "a" : i == n - 2 ? "b" : i == n - 1 ? "ab" : "");
    if (bpe && i < n - 3)
        snprintf(buf, 32, "t%d", i);
    else if (!bpe && i < 3)
        snprintf(buf, 32, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
    else if (!bpe && i < 259)
        snprintf(buf, 32, "<0x%02X>", i - 3);
    else if (!bpe)
        snprintf(buf, 32, "\xe2\x96\x81p%d", i);
}

static int32_t token_type(bool bpe, int i)
{
    return bpe ? 1 : i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1;
}

/* tokenizer.ggml.tokens, with up to two texts replaced (at < 0: none). */
static void set_tokens(gguf_writer *w, const spec *s, bool bpe, int at1, const char *t1, int at2,
                       const char *t2)
{
    char **tok = calloc((size_t)s->vocab, sizeof *tok);
    ck_assert_ptr_nonnull(tok);
    for (int i = 0; i < s->vocab; i++) {
        char buf[32];
        token_text(s, bpe, i, buf);
        tok[i] = strdup(i == at1 ? t1 : i == at2 ? t2 : buf);
    }
    ck_assert_int_eq(gguf_writer_set_str_array(w, GGUF_KEY_TOK_TOKENS, (const char *const *)tok, NULL,
                                               (uint64_t)s->vocab), 0);
    for (int i = 0; i < s->vocab; i++)
        free(tok[i]);
    free(tok);
}

static void set_vocab(gguf_writer *w, const spec *s)
{
    bool bpe = s->tok && !strcmp(s->tok, "gpt2");
    int n = s->vocab;
    float *scores = calloc((size_t)n, sizeof *scores);
    int32_t *types = calloc((size_t)n, sizeof *types);
    ck_assert(scores && types);
    for (int i = 0; i < n; i++) {
        types[i] = token_type(bpe, i);
        scores[i] = -(float)i;
    }
    ck_assert_int_eq(gguf_writer_set_str(w, GGUF_KEY_TOK_MODEL, bpe ? "gpt2" : "llama"), 0);
    set_tokens(w, s, bpe, -1, NULL, -1, NULL);
    ck_assert_int_eq(gguf_writer_set_array(w, GGUF_KEY_TOK_SCORES, GGUF_VT_F32, scores, (uint64_t)n), 0);
    ck_assert_int_eq(gguf_writer_set_array(w, GGUF_KEY_TOK_TYPES, GGUF_VT_I32, types, (uint64_t)n), 0);
    if (bpe) {
        const char *merges[] = { "a b" };
        ck_assert_int_eq(gguf_writer_set_str_array(w, GGUF_KEY_TOK_MERGES, merges, NULL, 1), 0);
    }
    ck_assert_int_eq(gguf_writer_set_u32(w, GGUF_KEY_TOK_BOS, 1), 0);
    ck_assert_int_eq(gguf_writer_set_u32(w, GGUF_KEY_TOK_EOS, 2), 0);
    ck_assert_int_eq(gguf_writer_set_u32(w, GGUF_KEY_TOK_PAD, UINT32_MAX), 0); /* none */
    ck_assert_int_eq(gguf_writer_set_i32(w, "tokenizer.ggml.eot_token_id", -1), 0); /* none */
    ck_assert_int_eq(gguf_writer_set_bool(w, GGUF_KEY_TOK_ADD_BOS, true), 0);
    free(scores);
    free(types);
}

static void set_metadata(gguf_writer *w, const spec *s)
{
    const char *a = arch_of(s);
    ck_assert_int_eq(gguf_writer_set_str(w, GGUF_KEY_ARCHITECTURE, a), 0);
    if (s->type)
        ck_assert_int_eq(gguf_writer_set_str(w, "general.type", s->type), 0);
    set_arch_key(w, s, "context_length", 2048);
    set_arch_key(w, s, "embedding_length", (uint32_t)s->dim);
    set_arch_key(w, s, "block_count", (uint32_t)s->layers);
    set_arch_key(w, s, "feed_forward_length", (uint32_t)s->ffn);
    set_arch_key(w, s, "attention.head_count", (uint32_t)s->heads);
    set_arch_key(w, s, "attention.head_count_kv", (uint32_t)s->kv_heads);
    int hd = s->head_dim ? s->head_dim : s->dim / s->heads;
    if (s->head_dim) {
        set_arch_key(w, s, "attention.key_length", (uint32_t)hd);
        set_arch_key(w, s, "attention.value_length", (uint32_t)hd);
    }
    set_arch_key(w, s, "rope.dimension_count", (uint32_t)hd);
    set_arch_key(w, s, "vocab_size", (uint32_t)s->vocab);
    char key[128];
    snprintf(key, sizeof key, "%s.rope.freq_base", a);
    ck_assert_int_eq(gguf_writer_set_f32(w, key, 10000.0f), 0);
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", a);
    ck_assert_int_eq(gguf_writer_set_f32(w, key, 1e-5f), 0);
    if (s->qwen35) {
        set_arch_key(w, s, "ssm.conv_kernel", 4);
        set_arch_key(w, s, "ssm.state_size", 16);
        set_arch_key(w, s, "ssm.group_count", 2);
        set_arch_key(w, s, "ssm.time_step_rank", 4);
        set_arch_key(w, s, "ssm.inner_size", 64);
        set_arch_key(w, s, "full_attention_interval", 4);
        const int32_t sections[4] = { 2, 1, 1, 0 };
        snprintf(key, sizeof key, "%s.rope.dimension_sections", a);
        ck_assert_int_eq(gguf_writer_set_array(w, key, GGUF_VT_I32, sections, 4), 0);
    }
    if (!s->tok || strcmp(s->tok, "-"))
        set_vocab(w, s);
}

static void apply_edits(gguf_writer *w, const spec *s)
{
    for (size_t i = 0; i < sizeof s->edits / sizeof *s->edits && s->edits[i].key; i++) {
        const key_edit *e = &s->edits[i];
        int rc = 0;
        switch (e->kind) {
        case 'u': rc = gguf_writer_set_u32(w, e->key, (uint32_t)e->num); break;
        case 'i': rc = gguf_writer_set_i32(w, e->key, (int32_t)e->num); break;
        case 'q': rc = gguf_writer_set_u64(w, e->key, e->num < 0 ? UINT64_MAX : (uint64_t)e->num); break;
        case 'f': rc = gguf_writer_set_f32(w, e->key, (float)e->num); break;
        case 'd': rc = gguf_writer_set_f64(w, e->key, e->num); break;
        case 's': rc = gguf_writer_set_str(w, e->key, e->str); break;
        case 'b': rc = gguf_writer_set_u8(w, e->key, (uint8_t)e->num); break;
        case 'x': gguf_writer_remove_kv(w, e->key); break;
        default: ck_abort_msg("bad edit kind %c", e->kind);
        }
        ck_assert_int_eq(rc, 0);
    }
}

static void add(gguf_writer *w, const spec *s, const char *fmt, int layer, int64_t a, int64_t b)
{
    char name[96];
    snprintf(name, sizeof name, fmt, layer);
    if (s->skip && !strcmp(s->skip, name))
        return;
    uint32_t n_dims = b ? 2 : 1;
    if (s->reshape && !strcmp(s->reshape, name)) {
        a = s->re0;
        b = s->re1;
        n_dims = s->re_dims ? s->re_dims : b ? 2 : 1;
    }
    int64_t ne[2] = { a, b };
    gguf_error err = { 0 };
    ck_assert_msg(gguf_writer_add_tensor(w, name, GGUF_DT_F32, n_dims, ne, &err) >= 0, "%s", err.msg);
}

static void add_tensors(gguf_writer *w, const spec *s)
{
    if (s->no_tensors)
        return;
    const int64_t d = s->dim, hd = s->head_dim ? s->head_dim : s->dim / s->heads;
    const int64_t q = hd * s->heads, kv = hd * s->kv_heads, v = s->vocab;
    add(w, s, GGUF_T_TOKEN_EMBD, 0, d, v);
    for (int l = 0; s->qwen35 && l < s->layers; l++) {
        add(w, s, GGUF_T_ATTN_NORM, l, d, 0);
        if ((l + 1) % 4) { /* recurrent: 4 value heads of 16, 2 key heads */
            add(w, s, GGUF_T_SSM_A, l, 4, 0);
            add(w, s, GGUF_T_SSM_CONV1D, l, 4, 2 * 2 * 16 + 64);
            add(w, s, GGUF_T_SSM_DT_BIAS, l, 4, 0);
            add(w, s, GGUF_T_SSM_ALPHA, l, d, 4);
            add(w, s, GGUF_T_SSM_BETA, l, d, 4);
            add(w, s, GGUF_T_ATTN_QKV, l, d, 2 * 2 * 16 + 64);
            add(w, s, GGUF_T_ATTN_GATE, l, d, 64);
            add(w, s, GGUF_T_SSM_NORM, l, 16, 0);
            add(w, s, GGUF_T_SSM_OUT, l, 64, d);
        } else {
            add(w, s, GGUF_T_ATTN_Q, l, d, 2 * q);
            add(w, s, GGUF_T_ATTN_K, l, d, kv);
            add(w, s, GGUF_T_ATTN_V, l, d, kv);
            add(w, s, GGUF_T_ATTN_OUT, l, q, d);
            add(w, s, GGUF_T_ATTN_Q_NORM, l, hd, 0);
            add(w, s, GGUF_T_ATTN_K_NORM, l, hd, 0);
        }
        add(w, s, GGUF_T_ATTN_POST_NORM, l, d, 0);
        add(w, s, GGUF_T_FFN_GATE, l, d, s->ffn);
        add(w, s, GGUF_T_FFN_UP, l, d, s->ffn);
        add(w, s, GGUF_T_FFN_DOWN, l, s->ffn, d);
    }
    for (int l = 0; !s->qwen35 && l < s->layers; l++) {
        add(w, s, GGUF_T_ATTN_NORM, l, d, 0);
        if (s->fused) {
            add(w, s, GGUF_T_ATTN_QKV, l, d, q + 2 * kv);
        } else {
            add(w, s, GGUF_T_ATTN_Q, l, d, q);
            add(w, s, GGUF_T_ATTN_K, l, d, kv);
            add(w, s, GGUF_T_ATTN_V, l, d, kv);
        }
        if (s->bias) {
            add(w, s, GGUF_T_ATTN_Q_BIAS, l, q, 0);
            add(w, s, GGUF_T_ATTN_K_BIAS, l, kv, 0);
            add(w, s, GGUF_T_ATTN_V_BIAS, l, kv, 0);
        }
        add(w, s, GGUF_T_ATTN_OUT, l, q, d);
        if (s->gemma) {
            add(w, s, GGUF_T_ATTN_POST_NORM, l, d, 0);
            add(w, s, GGUF_T_FFN_POST_NORM, l, d, 0);
            if (!strcmp(arch_of(s), "gemma3")) {
                add(w, s, GGUF_T_ATTN_Q_NORM, l, hd, 0);
                add(w, s, GGUF_T_ATTN_K_NORM, l, hd, 0);
            }
        }
        add(w, s, GGUF_T_FFN_NORM, l, d, 0);
        if (s->fused) {
            add(w, s, GGUF_T_FFN_UP, l, d, 2 * s->ffn);
        } else {
            add(w, s, GGUF_T_FFN_GATE, l, d, s->ffn);
            add(w, s, GGUF_T_FFN_UP, l, d, s->ffn);
        }
        add(w, s, GGUF_T_FFN_DOWN, l, s->ffn, d);
    }
    add(w, s, GGUF_T_OUTPUT_NORM, 0, d, 0);
    if (!s->tied)
        add(w, s, GGUF_T_OUTPUT, 0, d, v);
    if (s->extra)
        add(w, s, s->extra, 0, s->ex0, s->ex1);
}

static gguf_writer *build(const spec *in)
{
    const spec sd = with_defaults(in), *s = &sd;
    gguf_writer *w = gguf_writer_new();
    ck_assert_ptr_nonnull(w);
    set_metadata(w, s);
    apply_edits(w, s);
    if (s->hook)
        s->hook(w, s);
    add_tensors(w, s);
    return w;
}

/* Writes w's model with zero-filled tensors to path. */
static void write_out(gguf_writer *w, const char *path)
{
    static const uint8_t zeros[1 << 16];
    gguf_error err = { 0 };
    ck_assert_msg(gguf_writer_begin(w, path, &err) == 0, "%s", err.msg);
    for (uint64_t i = 0; i < gguf_writer_n_tensors(w); i++)
        for (uint64_t left = gguf_writer_tensor_nbytes(w, i); left > 0;) {
            size_t k = left < sizeof zeros ? (size_t)left : sizeof zeros;
            ck_assert_msg(gguf_writer_write_tensor(w, zeros, k, &err) == 0, "%s", err.msg);
            left -= k;
        }
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
}

/* Validates s through the writer and through the file; want "" means valid,
 * else the exact message both must give. */
static void expect(const spec *s, const char *want, int line)
{
    gguf_writer *w = build(s);
    gguf_error werr = { 0 }, ferr = { 0 };
    int wrc = gguf_model_validate_writer(w, &werr);

    char path[1024];
    snprintf(path, sizeof path, "%s/modelcheck-%ld.gguf", test_tmpdir(), (long)getpid());
    write_out(w, path);
    gguf_writer_free(w);
    gguf_error oerr = { 0 };
    gguf_file *f = gguf_open(path, GGUF_OPEN_NO_SPLIT, &oerr);
    ck_assert_msg(f != NULL, "%s", oerr.msg);
    int frc = gguf_model_validate(f, &ferr);
    gguf_close(f);
    unlink(path);

    if (!*want) {
        ck_assert_msg(wrc == 0, "line %d: writer: unexpected error: %s", line, werr.msg);
        ck_assert_msg(frc == 0, "line %d: file: unexpected error: %s", line, ferr.msg);
        return;
    }
    ck_assert_msg(wrc == -1, "line %d: writer: accepted, expected \"%s\"", line, want);
    ck_assert_msg(frc == -1, "line %d: file: accepted, expected \"%s\"", line, want);
    ck_assert_msg(!strcmp(werr.msg, want), "line %d: writer: \"%s\", expected \"%s\"", line, werr.msg, want);
    ck_assert_msg(!strcmp(ferr.msg, want), "line %d: file: \"%s\", expected \"%s\"", line, ferr.msg, want);
}

#define EXPECT(want, ...)                      \
    do {                                       \
        const spec s_ = { __VA_ARGS__ };       \
        expect(&s_, want, __LINE__);           \
    } while (0)

/* ------------------------------------------------------------------------
 * Valid models
 * ------------------------------------------------------------------------ */

static int n_fixtures_seen;

/* nftw callback: every .gguf opens and validates. */
static int visit_fixture(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t n = strlen(path);
    if (flag != FTW_F || n < 5 || strcmp(path + n - 5, ".gguf") != 0)
        return 0;
    gguf_error err = { 0 };
    gguf_file *f = gguf_open(path, GGUF_OPEN_NO_SPLIT, &err);
    ck_assert_msg(f != NULL, "%s: %s", path, err.msg);
    int rc = gguf_model_validate(f, &err);
    gguf_close(f);
    ck_assert_msg(rc == 0, "%s: %s", path, err.msg);
    n_fixtures_seen++;
    return 0;
}

START_TEST(test_fixtures_pass)
{
    /* every GGUF under the fixture folders, whatever is there today */
    static const char *const dirs[] = { "reference", "vocab", "models", "upstream" };
    n_fixtures_seen = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
        char dir[1024];
        if (fixture_path(dir, sizeof dir, dirs[d]))
            ck_assert_int_eq(nftw(dir, visit_fixture, 16, FTW_PHYS), 0);
    }
    ck_assert_int_ge(n_fixtures_seen, (int)N_FIXTURE_GGUFS);
}
END_TEST

START_TEST(test_fixture_list_passes)
{
    /* the list testutil.h names, so a missing fixture is noticed */
    for (size_t i = 0; i < N_FIXTURE_GGUFS; i++) {
        char path[1024];
        ck_assert_msg(fixture_path(path, sizeof path, fixture_ggufs[i]) != NULL, "missing fixture %s",
                      fixture_ggufs[i]);
        n_fixtures_seen = 0;
        ck_assert_int_eq(visit_fixture(path, NULL, FTW_F, NULL), 0);
        ck_assert_int_eq(n_fixtures_seen, 1);
    }
}
END_TEST

START_TEST(test_synthetic_models_pass)
{
    EXPECT("", .arch = "llama");
    EXPECT("", .arch = "mistral");
    EXPECT("", .arch = "qwen2", .bias = true, .tied = true);
    EXPECT("", .arch = "qwen2", .bias = true);
    EXPECT("", .tied = true);                      /* llama may tie its output too */
    EXPECT("", .bias = true);                      /* llama's biases are optional */
    EXPECT("", .tok = "gpt2");                     /* a BPE vocabulary with merges */
    EXPECT("", .head_dim = 8);                     /* key_length: q is 4 × 8 = 32 wide */
    EXPECT("", .heads = 4, .kv_heads = 4);
    EXPECT("", .heads = 4, .kv_heads = 1);
    EXPECT("", .layers = 1);
    EXPECT("", .extra = GGUF_T_ROPE_FREQS, .ex0 = 8); /* llama3 rope factors: head size / 2 */
    EXPECT("", .extra = "blk.1.ffn_down.bias", .ex0 = 64);
    EXPECT("", .kv_heads = 4, .edits = { KX("llama.attention.head_count_kv") }); /* default: head_count */
    EXPECT("", .edits = { KX("llama.rope.dimension_count") });    /* default: head size */
    EXPECT("", .edits = { KX("llama.rope.freq_base") });
    EXPECT("", .edits = { KX("llama.vocab_size") });
    EXPECT("", .edits = { KD("llama.attention.layer_norm_rms_epsilon", 1e-6) }); /* f64 */
    EXPECT("", .edits = { KI("llama.block_count", 2) });   /* any integer type */
    EXPECT("", .edits = { KQ("llama.block_count", 2) });
    EXPECT("", .edits = { KU("qwen2.rope.dimension_count", 8) }, .arch = "qwen2", .bias = true);
    EXPECT("", .arch = "phi3", .fused = true);
    EXPECT("", .arch = "phi3", .fused = true, .tied = true);
    EXPECT("", .arch = "phi3", .fused = true, .edits = { KU("phi3.rope.dimension_count", 12) });
    EXPECT("", .arch = "gemma2", .gemma = true, .tied = true, .head_dim = 32);
    EXPECT("", .arch = "gemma3", .gemma = true, .tied = true, .head_dim = 32);
    EXPECT("", .arch = "gemma3", .gemma = true); /* gemma3 may have an output matrix */
    EXPECT("", .arch = "gemma3", .gemma = true, .tied = true,
           .edits = { KU("gemma3.attention.sliding_window", 0) }); /* no local layers */
}
END_TEST

/* Qwen 3.5: tensors by the kind of their block (full_attention_interval),
 * the gated delta net's sizes against each other and the shapes, the M-RoPE
 * sections array. */
static void hook_sections(gguf_writer *w, const spec *s, const int32_t *v, uint64_t n)
{
    char key[128];
    snprintf(key, sizeof key, "%s.rope.dimension_sections", arch_of(s));
    ck_assert_int_eq(gguf_writer_set_array(w, key, GGUF_VT_I32, v, n), 0);
}
static void hook_sections_3(gguf_writer *w, const spec *s)
{
    const int32_t v[3] = { 2, 1, 1 };
    hook_sections(w, s, v, 3);
}
static void hook_sections_big(gguf_writer *w, const spec *s)
{
    const int32_t v[4] = { 4, 4, 1, 0 }; /* 9 pairs, the rotation has 8 */
    hook_sections(w, s, v, 4);
}
static void hook_sections_neg(gguf_writer *w, const spec *s)
{
    const int32_t v[4] = { 2, -1, 1, 0 };
    hook_sections(w, s, v, 4);
}
static void hook_sections_str(gguf_writer *w, const spec *s)
{
    char key[128];
    const char *v[4] = { "2", "1", "1", "0" };
    snprintf(key, sizeof key, "%s.rope.dimension_sections", arch_of(s));
    ck_assert_int_eq(gguf_writer_set_str_array(w, key, v, NULL, 4), 0);
}

START_TEST(test_layer_kinds)
{
#define Q35 .arch = "qwen35", .qwen35 = true, .layers = 4
    EXPECT("", Q35);
    EXPECT("", Q35, .tied = true);
    EXPECT("", Q35, .edits = { KU("qwen35.rope.dimension_sections", 1) }); /* one for all four */
    EXPECT("", Q35, .edits = { KX("qwen35.full_attention_interval") });     /* default 4 */
    EXPECT("", .arch = "qwen35", .qwen35 = true, .layers = 8);            /* blocks 3 and 7 */
    /* a tensor of one kind of block in a block of the other */
    EXPECT("tensor blk.3.ssm_a: block 3 is an attention block (qwen35.full_attention_interval = 4),"
           " ssm_a is only in recurrent blocks", Q35, .extra = "blk.3.ssm_a", .ex0 = 4);
    EXPECT("tensor blk.1.attn_q.weight: block 1 is a recurrent block (qwen35.full_attention_interval"
           " = 4), attn_q is only in attention blocks", Q35, .extra = "blk.1.attn_q.weight",
           .ex0 = 64, .ex1 = 128);
    /* the interval moves the kinds: with 2, block 1 is attention */
    EXPECT("tensor blk.1.ssm_a: block 1 is an attention block (qwen35.full_attention_interval = 2),"
           " ssm_a is only in recurrent blocks", Q35,
           .edits = { KU("qwen35.full_attention_interval", 2) });
    EXPECT("missing tensor blk.2.ssm_conv1d.weight", Q35, .skip = "blk.2.ssm_conv1d.weight");
    EXPECT("missing tensor blk.3.attn_q_norm.weight", Q35, .skip = "blk.3.attn_q_norm.weight");
    EXPECT("qwen35.full_attention_interval = 0, expected 1..512", Q35,
           .edits = { KU("qwen35.full_attention_interval", 0) });
    EXPECT("qwen35.full_attention_interval = 5, expected 1 to qwen35.block_count = 4 (no block would"
           " be full attention)", Q35, .edits = { KU("qwen35.full_attention_interval", 5) });
    /* the recurrent sizes against each other and the shapes */
    EXPECT("tensor blk.0.ssm_conv1d.weight has shape [3, 128], expected [4, 128] (ssm.conv_kernel,"
           " (2 × ssm.group_count + ssm.time_step_rank) × ssm.state_size)", Q35,
           .reshape = "blk.0.ssm_conv1d.weight", .re0 = 3, .re1 = 128);
    EXPECT("tensor blk.0.ssm_conv1d.weight has shape [4, 128], expected [5, 128] (ssm.conv_kernel,"
           " (2 × ssm.group_count + ssm.time_step_rank) × ssm.state_size)", Q35,
           .edits = { KU("qwen35.ssm.conv_kernel", 5) });
    EXPECT("qwen35.ssm.group_count = 3 does not divide qwen35.ssm.time_step_rank = 4 (value heads"
           " per key head)", Q35, .edits = { KU("qwen35.ssm.group_count", 3) });
    EXPECT("qwen35.ssm.inner_size = 48, expected qwen35.ssm.state_size × qwen35.ssm.time_step_rank"
           " = 64", Q35, .edits = { KU("qwen35.ssm.inner_size", 48) });
    EXPECT("tensor blk.0.ssm_a has shape [4], expected [2] (ssm.time_step_rank)", Q35,
           .edits = { KU("qwen35.ssm.time_step_rank", 2), KU("qwen35.ssm.inner_size", 32) });
    EXPECT("qwen35.ssm.state_size = 0, expected 1..16777216", Q35,
           .edits = { KU("qwen35.ssm.state_size", 0) });
    EXPECT("missing key qwen35.ssm.conv_kernel", Q35, .edits = { KX("qwen35.ssm.conv_kernel") });
    EXPECT("tensor blk.3.attn_q.weight has shape [64, 64], expected [64, 128] (embedding_length,"
           " 2 × head_count × head_dim)", Q35, .reshape = "blk.3.attn_q.weight", .re0 = 64,
           .re1 = 64);
    /* rope.dimension_sections: four integers sharing the rotary pairs */
    EXPECT("missing key qwen35.rope.dimension_sections", Q35,
           .edits = { KX("qwen35.rope.dimension_sections") });
    EXPECT("qwen35.rope.dimension_sections has 3 elements, expected 4", Q35,
           .hook = hook_sections_3);
    EXPECT("qwen35.rope.dimension_sections adds up to 9, expected 1 to qwen35.rope.dimension_count"
           " / 2 = 8", Q35, .hook = hook_sections_big);
    EXPECT("qwen35.rope.dimension_sections[1] = -1, expected 0..16777216", Q35,
           .hook = hook_sections_neg);
    EXPECT("qwen35.rope.dimension_sections is arr[str], expected an integer array", Q35,
           .hook = hook_sections_str);
    EXPECT("qwen35.rope.dimension_sections is f32, expected an integer array", Q35,
           .edits = { KF("qwen35.rope.dimension_sections", 2) });
#undef Q35
}
END_TEST

/* The layer functions over a Qwen 3.5 model's hyper-parameters. */
START_TEST(test_layer_functions)
{
    const spec s = { .arch = "qwen35", .qwen35 = true, .layers = 8 };
    gguf_writer *w = build(&s);
    char path[1024];
    snprintf(path, sizeof path, "%s/modelcheck-layers-%ld.gguf", test_tmpdir(), (long)getpid());
    write_out(w, path);
    gguf_writer_free(w);
    gguf_error err = { 0 };
    gguf_file *f = gguf_open(path, GGUF_OPEN_NO_SPLIT, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    gguf_hparams *hp = NULL;
    ck_assert_msg(gguf_hparams_read(f, &hp, &err) == 0, "%s", err.msg);
    for (int64_t il = 0; il < 8; il++) {
        const bool att = il == 3 || il == 7;
        ck_assert(gguf_hparams_layer_in(hp, GGUF_LAYERS_ALL, il));
        ck_assert_int_eq(gguf_hparams_layer_in(hp, GGUF_LAYERS_ATTENTION, il), att);
        ck_assert_int_eq(gguf_hparams_layer_in(hp, GGUF_LAYERS_RECURRENT, il), !att);
        for (int d = 0; d < GGUF_DIM_COUNT; d++)
            ck_assert_int_eq(gguf_hparams_layer_dim(hp, d, il), gguf_hparams_dim(hp, d));
    }
    ck_assert(!gguf_hparams_layer_in(hp, GGUF_LAYERS_ALL, 8));
    ck_assert(!gguf_hparams_layer_in(hp, GGUF_LAYERS_ALL, -1));
    ck_assert(!gguf_hparams_layer_in(hp, GGUF_LAYERS_COUNT, 0));
    ck_assert_int_eq(gguf_hparams_layer_dim(hp, GGUF_DIM_EMBD, 8), -1);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_SSM_CHANNELS), 128);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_SSM_VALUE), 64);
    ck_assert_int_eq(gguf_hparams_dim(hp, GGUF_DIM_Q_GATED), 128);
    int64_t sec[8] = { 0 }, v;
    ck_assert_int_eq(gguf_hparams_array(hp, GGUF_HP_ROPE_DIM_SECTIONS, sec, 8), 4);
    ck_assert(sec[0] == 2 && sec[1] == 1 && sec[2] == 1 && sec[3] == 0 && sec[4] == 0);
    ck_assert_int_eq(gguf_hparams_array(hp, GGUF_HP_ROPE_DIM_SECTIONS, NULL, 0), 4);
    ck_assert_int_eq(gguf_hparams_array(hp, GGUF_HP_BLOCK_COUNT, sec, 8), 0); /* a scalar */
    ck_assert(gguf_hparams_get_int(hp, GGUF_HP_ROPE_DIM_SECTIONS, &v) && v == 2); /* the largest */
    ck_assert(gguf_hparams_get_layer(hp, GGUF_HP_SSM_STATE_SIZE, 5, &v) && v == 16);
    ck_assert(!gguf_hparams_get_layer(hp, GGUF_HP_SSM_STATE_SIZE, 8, &v) && v == 0);
    ck_assert(gguf_hparams_get_int(hp, GGUF_HP_FULL_ATTN_INTERVAL, &v) && v == 4);
    gguf_hparams_free(hp);
    gguf_close(f);
    unlink(path);
}
END_TEST

/* ------------------------------------------------------------------------
 * Hyper-parameters: one broken variant per rule
 * ------------------------------------------------------------------------ */

START_TEST(test_hparam_ranges)
{
    EXPECT("llama.block_count = 0, expected 1..512", .edits = { KU("llama.block_count", 0) });
    EXPECT("llama.block_count = 1000000000, expected 1..512",
           .edits = { KU("llama.block_count", 1e9) });
    EXPECT("llama.block_count = -4, expected 1..512", .edits = { KI("llama.block_count", -4) });
    EXPECT("llama.block_count = 18446744073709551615, expected 1..512",
           .edits = { KQ("llama.block_count", -1) });
    EXPECT("llama.embedding_length = 0, expected 1..16777216",
           .edits = { KU("llama.embedding_length", 0) });
    EXPECT("llama.embedding_length = -64, expected 1..16777216",
           .edits = { KI("llama.embedding_length", -64) });
    EXPECT("llama.feed_forward_length = 0, expected 1..16777216",
           .edits = { KU("llama.feed_forward_length", 0) });
    EXPECT("llama.attention.head_count = 0, expected 1..16777216",
           .edits = { KU("llama.attention.head_count", 0) });
    EXPECT("llama.attention.head_count_kv = 0, expected 1..16777216",
           .edits = { KU("llama.attention.head_count_kv", 0) });
    EXPECT("llama.attention.head_count_kv = -2, expected 1..16777216",
           .edits = { KI("llama.attention.head_count_kv", -2) });
    EXPECT("llama.context_length = 0, expected 1..2147483647",
           .edits = { KU("llama.context_length", 0) });
    EXPECT("llama.attention.key_length = 0, expected 1..16777216",
           .edits = { KU("llama.attention.key_length", 0) });
    EXPECT("gemma2.attention.sliding_window = 0, expected 1..2147483647", .arch = "gemma2",
           .gemma = true, .tied = true, .edits = { KU("gemma2.attention.sliding_window", 0) });
    EXPECT("gemma3.attention.sliding_window_pattern = 1000, expected 0..512", .arch = "gemma3",
           .gemma = true, .tied = true,
           .edits = { KU("gemma3.attention.sliding_window_pattern", 1000) });
}
END_TEST

START_TEST(test_hparam_floats)
{
    EXPECT("llama.attention.layer_norm_rms_epsilon = 0, expected a finite number > 0",
           .edits = { KF("llama.attention.layer_norm_rms_epsilon", 0) });
    EXPECT("llama.attention.layer_norm_rms_epsilon = -1e-05, expected a finite number > 0",
           .edits = { KD("llama.attention.layer_norm_rms_epsilon", -1e-5) });
    EXPECT("llama.attention.layer_norm_rms_epsilon = nan, expected a finite number > 0",
           .edits = { KF("llama.attention.layer_norm_rms_epsilon", NAN) });
    EXPECT("llama.rope.freq_base = 0, expected a finite number > 0",
           .edits = { KF("llama.rope.freq_base", 0) });
    EXPECT("llama.rope.freq_base = -10000, expected a finite number > 0",
           .edits = { KF("llama.rope.freq_base", -10000) });
    EXPECT("llama.rope.freq_base = inf, expected a finite number > 0",
           .edits = { KF("llama.rope.freq_base", INFINITY) });
    EXPECT("gemma2.attn_logit_softcapping = 0, expected a finite number > 0", .arch = "gemma2",
           .gemma = true, .tied = true, .edits = { KF("gemma2.attn_logit_softcapping", 0) });
    EXPECT("gemma3.rope.freq_base_swa is u32, expected f32", .arch = "gemma3", .gemma = true,
           .tied = true, .edits = { KU("gemma3.rope.freq_base_swa", 10000) });
}
END_TEST

/* Rope scaling is registry rows of every architecture: a factor or a YaRN
 * parameter may be 0 (llama.cpp: none) but not negative, the LongRoPE
 * attention factor neither, the original context is a positive count. */
START_TEST(test_rope_scaling_keys)
{
    EXPECT("", .edits = { KF("llama.rope.scaling.factor", 8), KS("llama.rope.scaling.type", "linear") });
    EXPECT("", .edits = { KF("llama.rope.scaling.factor", 0) });
    EXPECT("", .edits = { KF("llama.rope.scale_linear", 2) });
    EXPECT("", .edits = { KF("llama.rope.scaling.attn_factor", 0) }); /* gguf-run refuses it */
    EXPECT("", .edits = { KU("llama.rope.scaling.original_context_length", 4096),
                          KD("llama.rope.scaling.yarn_beta_fast", 32) });
    EXPECT("llama.rope.scaling.factor = -4, expected a finite number >= 0",
           .edits = { KF("llama.rope.scaling.factor", -4) });
    EXPECT("qwen2.rope.scale_linear = nan, expected a finite number >= 0", .arch = "qwen2",
           .bias = true, .edits = { KF("qwen2.rope.scale_linear", NAN) });
    EXPECT("phi3.rope.scaling.attn_factor = -1, expected a finite number >= 0", .arch = "phi3",
           .fused = true, .edits = { KF("phi3.rope.scaling.attn_factor", -1) });
    EXPECT("gemma2.rope.scaling.yarn_beta_slow = inf, expected a finite number >= 0",
           .arch = "gemma2", .gemma = true, .tied = true,
           .edits = { KF("gemma2.rope.scaling.yarn_beta_slow", INFINITY) });
    EXPECT("llama.rope.scaling.original_context_length = 0, expected 1..2147483647",
           .edits = { KU("llama.rope.scaling.original_context_length", 0) });
    EXPECT("llama.rope.scaling.yarn_ext_factor is str, expected f32",
           .edits = { KS("llama.rope.scaling.yarn_ext_factor", "1") });
}
END_TEST

START_TEST(test_hparam_presence_and_types)
{
    EXPECT("missing key llama.embedding_length", .edits = { KX("llama.embedding_length") });
    EXPECT("missing key llama.block_count", .edits = { KX("llama.block_count") });
    EXPECT("missing key llama.context_length", .edits = { KX("llama.context_length") });
    EXPECT("missing key llama.feed_forward_length", .edits = { KX("llama.feed_forward_length") });
    EXPECT("missing key llama.attention.head_count", .edits = { KX("llama.attention.head_count") });
    EXPECT("missing key llama.attention.layer_norm_rms_epsilon",
           .edits = { KX("llama.attention.layer_norm_rms_epsilon") });
    EXPECT("llama.block_count is str, expected an integer",
           .edits = { KS("llama.block_count", "4") });
    EXPECT("llama.embedding_length is f32, expected an integer",
           .edits = { KF("llama.embedding_length", 64) });
    EXPECT("llama.attention.layer_norm_rms_epsilon is u32, expected f32",
           .edits = { KU("llama.attention.layer_norm_rms_epsilon", 1) });
    EXPECT("general.architecture is u8, expected str", .edits = { KB("general.architecture", 1) });
    EXPECT("general.type is u8, expected str", .edits = { KB("general.type", 1) });
    EXPECT("llama.expert_count is str, expected an integer",
           .edits = { KS("llama.expert_count", "8") });
}
END_TEST

START_TEST(test_hparam_relations)
{
    EXPECT("llama.attention.head_count_kv = 3 does not divide llama.attention.head_count = 4",
           .edits = { KU("llama.attention.head_count_kv", 3) });
    EXPECT("llama.attention.head_count_kv = 8 does not divide llama.attention.head_count = 4",
           .edits = { KU("llama.attention.head_count_kv", 8) });
    EXPECT("llama.attention.head_count = 5 does not divide llama.embedding_length = 64",
           .edits = { KU("llama.attention.head_count", 5), KU("llama.attention.head_count_kv", 1) });
    EXPECT("llama.attention.head_count = 5 does not divide llama.embedding_length = 64",
           .edits = { KU("llama.attention.head_count", 5), KX("llama.attention.head_count_kv") });
    /* llama rotates whole heads (llama.cpp: "invalid n_rot") */
    EXPECT("llama.rope.dimension_count = 0, expected 16 (the head size: llama rotates whole heads)",
           .edits = { KU("llama.rope.dimension_count", 0) });
    EXPECT("llama.rope.dimension_count = 8, expected 16 (the head size: llama rotates whole heads)",
           .edits = { KU("llama.rope.dimension_count", 8) });
    /* qwen2: any even count up to the head size */
    EXPECT("qwen2.rope.dimension_count = 0, expected an even number from 2 to 16 (the head size)",
           .arch = "qwen2", .bias = true, .edits = { KU("qwen2.rope.dimension_count", 0) });
    EXPECT("qwen2.rope.dimension_count = 7, expected an even number from 2 to 16 (the head size)",
           .arch = "qwen2", .bias = true, .edits = { KU("qwen2.rope.dimension_count", 7) });
    EXPECT("qwen2.rope.dimension_count = 18, expected an even number from 2 to 16 (the head size)",
           .arch = "qwen2", .bias = true, .edits = { KU("qwen2.rope.dimension_count", 18) });
    EXPECT("qwen2.rope.dimension_count = -2, expected an even number from 2 to 16 (the head size)",
           .arch = "qwen2", .bias = true, .edits = { KI("qwen2.rope.dimension_count", -2) });
}
END_TEST

/* ------------------------------------------------------------------------
 * Tensors
 * ------------------------------------------------------------------------ */

START_TEST(test_tensor_blocks)
{
    EXPECT("tensor blk.2.attn_q.weight: block 2 is beyond llama.block_count = 2",
           .extra = "blk.2.attn_q.weight", .ex0 = 64, .ex1 = 64);
    EXPECT("tensor blk.7.foo: block 7 is beyond llama.block_count = 2", .extra = "blk.7.foo", .ex0 = 1);
    /* fewer blocks declared than stored */
    EXPECT("tensor blk.1.attn_norm.weight: block 1 is beyond llama.block_count = 1",
           .edits = { KU("llama.block_count", 1) });
    /* more declared than stored */
    EXPECT("missing tensor blk.2.attn_norm.weight", .edits = { KU("llama.block_count", 3) });
}
END_TEST

START_TEST(test_tensor_presence)
{
    EXPECT("missing tensor blk.1.ffn_up.weight", .skip = "blk.1.ffn_up.weight");
    EXPECT("missing tensor blk.0.attn_norm.weight", .skip = "blk.0.attn_norm.weight");
    EXPECT("missing tensor token_embd.weight", .skip = GGUF_T_TOKEN_EMBD);
    EXPECT("missing tensor output_norm.weight", .skip = GGUF_T_OUTPUT_NORM);
    EXPECT("missing tensor blk.0.attn_q.bias", .arch = "qwen2", .bias = true, .skip = "blk.0.attn_q.bias");
    EXPECT("missing tensor blk.1.attn_v.bias", .arch = "qwen2", .bias = true, .skip = "blk.1.attn_v.bias");
    EXPECT("tensor blk.0.attn_qkv.weight is not a llama tensor", .extra = "blk.0.attn_qkv.weight",
           .ex0 = 64, .ex1 = 128);
    EXPECT("tensor foo.weight is not a llama tensor", .extra = "foo.weight", .ex0 = 64);
    EXPECT("tensor blk.01.attn_q.weight is not a llama tensor", .extra = "blk.01.attn_q.weight", .ex0 = 64);
    EXPECT("tensor rope_freqs.weight is not a qwen2 tensor", .arch = "qwen2", .bias = true,
           .extra = GGUF_T_ROPE_FREQS, .ex0 = 8);
    EXPECT("tensor blk.0.ffn_up.bias is not a qwen2 tensor", .arch = "qwen2", .bias = true,
           .extra = "blk.0.ffn_up.bias", .ex0 = 96);
    EXPECT("missing tensor blk.1.post_ffw_norm.weight", .arch = "gemma2", .gemma = true,
           .tied = true, .skip = "blk.1.post_ffw_norm.weight");
    EXPECT("missing tensor blk.0.attn_k_norm.weight", .arch = "gemma3", .gemma = true,
           .tied = true, .skip = "blk.0.attn_k_norm.weight");
    EXPECT("tensor output.weight is not a gemma2 tensor", .arch = "gemma2", .gemma = true);
}
END_TEST

START_TEST(test_tensor_shapes)
{
    EXPECT("tensor blk.0.attn_k.weight has shape [64, 48], expected [64, 32] "
           "(embedding_length, head_count_kv × head_dim)",
           .reshape = "blk.0.attn_k.weight", .re0 = 64, .re1 = 48);
    EXPECT("tensor blk.1.attn_q.weight has shape [64, 32], expected [64, 64] "
           "(embedding_length, head_count × head_dim)",
           .reshape = "blk.1.attn_q.weight", .re0 = 64, .re1 = 32);
    EXPECT("tensor blk.0.attn_v.weight has shape [32, 32], expected [64, 32] "
           "(embedding_length, head_count_kv × value_length)",
           .reshape = "blk.0.attn_v.weight", .re0 = 32, .re1 = 32);
    EXPECT("tensor blk.0.attn_output.weight has shape [64, 32], expected [64, 64] "
           "(head_count × head_dim, embedding_length)",
           .reshape = "blk.0.attn_output.weight", .re0 = 64, .re1 = 32);
    EXPECT("tensor blk.1.ffn_down.weight has shape [64, 96], expected [96, 64] "
           "(feed_forward_length, embedding_length)",
           .reshape = "blk.1.ffn_down.weight", .re0 = 64, .re1 = 96);
    EXPECT("tensor blk.0.ffn_gate.weight has shape [64, 95], expected [64, 96] "
           "(embedding_length, feed_forward_length)",
           .reshape = "blk.0.ffn_gate.weight", .re0 = 64, .re1 = 95);
    EXPECT("tensor blk.1.ffn_norm.weight has shape [63], expected [64] (embedding_length)",
           .reshape = "blk.1.ffn_norm.weight", .re0 = 63);
    EXPECT("tensor output_norm.weight has shape [64, 2], expected [64] (embedding_length)",
           .reshape = GGUF_T_OUTPUT_NORM, .re0 = 64, .re1 = 2);
    EXPECT("tensor blk.0.attn_k.bias has shape [64], expected [32] (head_count_kv × head_dim)",
           .arch = "qwen2", .bias = true, .reshape = "blk.0.attn_k.bias", .re0 = 64);
    EXPECT("tensor rope_freqs.weight has shape [9], expected [8] (rope.dimension_count / 2)",
           .extra = GGUF_T_ROPE_FREQS, .ex0 = 9);
    EXPECT("tensor token_embd.weight has shape [32, 270], expected [64, 270] (embedding_length, n_vocab)",
           .reshape = GGUF_T_TOKEN_EMBD, .re0 = 32, .re1 = 270);
    /* phi3's fused widths (llama.cpp's: q as wide as the model) */
    EXPECT("tensor blk.0.attn_qkv.weight has shape [64, 96], expected [64, 128] "
           "(embedding_length, embedding_length + 2 × head_count_kv × value_length)",
           .arch = "phi3", .fused = true, .reshape = "blk.0.attn_qkv.weight", .re0 = 64, .re1 = 96);
    EXPECT("tensor blk.1.ffn_up.weight has shape [64, 96], expected [64, 192] "
           "(embedding_length, 2 × feed_forward_length)",
           .arch = "phi3", .fused = true, .reshape = "blk.1.ffn_up.weight", .re0 = 64, .re1 = 96);
    EXPECT("tensor blk.0.attn_q.weight is not a phi3 tensor", .arch = "phi3");
    EXPECT("tensor rope_factors_short.weight has shape [16], expected [8] (rope.dimension_count / 2)",
           .arch = "phi3", .fused = true, .extra = GGUF_T_ROPE_FACTORS_SHORT, .ex0 = 16);
    /* a key_length that does not match the stored heads */
    EXPECT("tensor blk.0.attn_q.weight has shape [64, 64], expected [64, 128] "
           "(embedding_length, head_count × head_dim)",
           .edits = { KU("llama.attention.key_length", 32), KU("llama.rope.dimension_count", 32) });
}
END_TEST

START_TEST(test_vocab_rows)
{
    EXPECT("token_embd.weight has 300 rows but the vocabulary has 270 tokens",
           .reshape = GGUF_T_TOKEN_EMBD, .re0 = 64, .re1 = 300);
    EXPECT("output.weight has 260 rows but the vocabulary has 270 tokens",
           .reshape = GGUF_T_OUTPUT, .re0 = 64, .re1 = 260);
    /* without a vocabulary: the declared size, else token_embd's rows */
    EXPECT("output.weight has 260 rows but llama.vocab_size = 270", .tok = "-", .type = "model",
           .reshape = GGUF_T_OUTPUT, .re0 = 64, .re1 = 260,
           .edits = { KS(GGUF_KEY_TOK_MODEL, "none") });
    EXPECT("output.weight has 260 rows but token_embd.weight has 270 rows", .tok = "-",
           .reshape = GGUF_T_OUTPUT, .re0 = 64, .re1 = 260,
           .edits = { KS(GGUF_KEY_TOK_MODEL, "no_vocab"), KX("llama.vocab_size") });
    EXPECT("llama.vocab_size = 0: expected at least one token", .tok = "-",
           .edits = { KS(GGUF_KEY_TOK_MODEL, "none"), KU("llama.vocab_size", 0) });
    EXPECT("token_embd.weight has 0 rows: expected at least one token", .tok = "-", .tied = true,
           .reshape = GGUF_T_TOKEN_EMBD, .re0 = 64, .re1 = 0, .re_dims = 2,
           .edits = { KS(GGUF_KEY_TOK_MODEL, "none"), KX("llama.vocab_size") });
}
END_TEST

/* ------------------------------------------------------------------------
 * Vocabulary
 * ------------------------------------------------------------------------ */

/* The SPM token types of set_vocab, one changed. */
static int32_t *types_of(const spec *s)
{
    int32_t *t = malloc((size_t)s->vocab * sizeof *t);
    ck_assert_ptr_nonnull(t);
    for (int i = 0; i < s->vocab; i++)
        t[i] = token_type(false, i);
    return t;
}

static void set_types(gguf_writer *w, const spec *s, int at, int32_t v)
{
    int32_t *t = types_of(s);
    t[at] = v;
    ck_assert_int_eq(gguf_writer_set_array(w, GGUF_KEY_TOK_TYPES, GGUF_VT_I32, t, (uint64_t)s->vocab), 0);
    free(t);
}

static void hook_type_99(gguf_writer *w, const spec *s) { set_types(w, s, 7, 99); }
static void hook_type_neg(gguf_writer *w, const spec *s) { set_types(w, s, 269, -5); }
static void hook_type_0(gguf_writer *w, const spec *s) { set_types(w, s, 262, 0); }
static void hook_byte_type(gguf_writer *w, const spec *s) { set_types(w, s, 265, 6); }

static void hook_types_u32(gguf_writer *w, const spec *s)
{
    int32_t *t = types_of(s);
    ck_assert_int_eq(gguf_writer_set_array(w, GGUF_KEY_TOK_TYPES, GGUF_VT_U32, t, (uint64_t)s->vocab), 0);
    free(t);
}

static void hook_types_short(gguf_writer *w, const spec *s)
{
    int32_t *t = types_of(s);
    ck_assert_int_eq(gguf_writer_set_array(w, GGUF_KEY_TOK_TYPES, GGUF_VT_I32, t, 10), 0);
    free(t);
}

static void hook_scores_short(gguf_writer *w, const spec *s)
{
    (void)s;
    const float sc[10] = { 0 };
    ck_assert_int_eq(gguf_writer_set_array(w, GGUF_KEY_TOK_SCORES, GGUF_VT_F32, sc, 10), 0);
}

static void hook_scores_f64(gguf_writer *w, const spec *s)
{
    double *sc = calloc((size_t)s->vocab, sizeof *sc);
    ck_assert_ptr_nonnull(sc);
    ck_assert_int_eq(gguf_writer_set_array(w, GGUF_KEY_TOK_SCORES, GGUF_VT_F64, sc, (uint64_t)s->vocab), 0);
    free(sc);
}

static void hook_dup_token(gguf_writer *w, const spec *s) { set_tokens(w, s, false, 266, "</s>", -1, NULL); }
/* two empty texts are no duplicates: llama.cpp renames each "[EMPTY_<id>]" */
static void hook_two_empty(gguf_writer *w, const spec *s) { set_tokens(w, s, false, 266, "", 267, ""); }

static void hook_empty_tokens(gguf_writer *w, const spec *s)
{
    (void)s;
    ck_assert_int_eq(gguf_writer_set_str_array(w, GGUF_KEY_TOK_TOKENS, NULL, NULL, 0), 0);
}

static void hook_tokens_i32(gguf_writer *w, const spec *s)
{
    int32_t *t = types_of(s);
    ck_assert_int_eq(gguf_writer_set_array(w, GGUF_KEY_TOK_TOKENS, GGUF_VT_I32, t, (uint64_t)s->vocab), 0);
    free(t);
}

static void set_merges(gguf_writer *w, const char *m)
{
    const char *merges[] = { "a b", m };
    ck_assert_int_eq(gguf_writer_set_str_array(w, GGUF_KEY_TOK_MERGES, merges, NULL, 2), 0);
}
static void hook_merge_unknown(gguf_writer *w, const spec *s) { (void)s; set_merges(w, "ab zz"); }
static void hook_merge_nospace(gguf_writer *w, const spec *s) { (void)s; set_merges(w, "abc"); }
static void hook_merge_ok(gguf_writer *w, const spec *s) { (void)s; set_merges(w, "t1 ab"); }
static void hook_endoftext(gguf_writer *w, const spec *s)
{
    set_tokens(w, s, false, 266, "<|endoftext|>", -1, NULL);
}

START_TEST(test_vocab_token_types)
{
    EXPECT("tokenizer.ggml.token_type[7] = 99 is not a token type (0-6)", .hook = hook_type_99);
    EXPECT("tokenizer.ggml.token_type[269] = -5 is not a token type (0-6)", .hook = hook_type_neg);
    EXPECT("", .hook = hook_type_0); /* undefined: llama.cpp's LLAMA_TOKEN_TYPE_UNDEFINED */
    EXPECT("tokenizer.ggml.token_type is arr[u32], expected arr[i32]", .hook = hook_types_u32);
    EXPECT("tokenizer.ggml.token_type has 10 elements but there are 270 tokens", .hook = hook_types_short);
    EXPECT("tokenizer.ggml.tokens[265] \"\xe2\x96\x81p265\" is a byte token (type 6) but not of the form <0xNN>",
           .hook = hook_byte_type);
    /* unknown architectures and vocab-only files get the vocabulary rules too */
    EXPECT("tokenizer.ggml.token_type[7] = 99 is not a token type (0-6)", .arch = "gptx", .hook = hook_type_99);
    EXPECT("tokenizer.ggml.token_type[7] = 99 is not a token type (0-6)", .type = "vocab", .no_tensors = true,
           .hook = hook_type_99);
}
END_TEST

START_TEST(test_vocab_arrays)
{
    EXPECT("tokenizer.ggml.scores has 10 elements but there are 270 tokens", .hook = hook_scores_short);
    EXPECT("tokenizer.ggml.scores is arr[f64], expected arr[f32]", .hook = hook_scores_f64);
    EXPECT("tokenizer.ggml.tokens is empty", .hook = hook_empty_tokens);
    EXPECT("tokenizer.ggml.tokens is arr[i32], expected arr[str]", .hook = hook_tokens_i32);
    EXPECT("tokenizer.ggml.tokens[266] \"</s>\" has the same text as token 2", .hook = hook_dup_token);
    EXPECT("", .hook = hook_two_empty);
    EXPECT("llama.vocab_size = 300 but tokenizer.ggml.tokens has 270 tokens",
           .edits = { KU("llama.vocab_size", 300) });
    EXPECT("missing key tokenizer.ggml.model (a llama model needs a vocabulary)", .tok = "-");
    EXPECT("missing key tokenizer.ggml.tokens (tokenizer.ggml.model is \"llama\")",
           .edits = { KX(GGUF_KEY_TOK_TOKENS) });
    EXPECT("tokenizer.ggml.model is u8, expected str", .edits = { KB(GGUF_KEY_TOK_MODEL, 1) });
    EXPECT("tokenizer.ggml.add_bos_token is u8, expected bool", .edits = { KB(GGUF_KEY_TOK_ADD_BOS, 1) });
    EXPECT("tokenizer.ggml.pre is u8, expected str", .edits = { KB(GGUF_KEY_TOK_PRE, 1) });
}
END_TEST

START_TEST(test_vocab_special_ids)
{
    EXPECT("tokenizer.ggml.bos_token_id = 270 is outside the vocabulary of 270 tokens",
           .edits = { KU(GGUF_KEY_TOK_BOS, 270) });
    EXPECT("tokenizer.ggml.eos_token_id = -2 is outside the vocabulary of 270 tokens",
           .edits = { KI(GGUF_KEY_TOK_EOS, -2) });
    EXPECT("tokenizer.ggml.unknown_token_id = 18446744073709551615 is outside the vocabulary of 270 tokens",
           .edits = { KQ(GGUF_KEY_TOK_UNK, -1) });
    EXPECT("tokenizer.ggml.padding_token_id is str, expected an integer",
           .edits = { KS(GGUF_KEY_TOK_PAD, "0") });
    EXPECT("tokenizer.ggml.eot_token_id = 1000 is outside the vocabulary of 270 tokens",
           .edits = { KU("tokenizer.ggml.eot_token_id", 1000) });
    EXPECT("", .edits = { KU(GGUF_KEY_TOK_BOS, 269) });
}
END_TEST

/* llama.cpp looks four tokens up by text in a model it takes for Phi-3 by
 * general.name, and fails to load one without them */
START_TEST(test_vocab_phi3_names)
{
    EXPECT("general.name \"Phi3 Mini\" makes llama.cpp treat the vocabulary as Phi-3's, which "
           "needs the token <|endoftext|>", .edits = { KS(GGUF_KEY_NAME, "Phi3 Mini") });
    EXPECT("general.name \"my PHI-3\" makes llama.cpp treat the vocabulary as Phi-3's, which "
           "needs the token <|endoftext|>", .type = "vocab", .no_tensors = true,
           .edits = { KS(GGUF_KEY_NAME, "my PHI-3") });
    EXPECT("", .edits = { KS(GGUF_KEY_NAME, "Phi3 Mini") }, .hook = hook_endoftext);
    EXPECT("", .edits = { KS(GGUF_KEY_NAME, "Phi 3 Mini") });
    EXPECT("", .edits = { KS(GGUF_KEY_NAME, "phi3"), KS(GGUF_KEY_TOK_PRE, "jina-v2-code") });
}
END_TEST

START_TEST(test_vocab_merges)
{
    EXPECT("tokenizer.ggml.merges[1] \"ab zz\": piece \"zz\" is not a token", .tok = "gpt2",
           .hook = hook_merge_unknown);
    EXPECT("tokenizer.ggml.merges[1] \"abc\" is not two pieces separated by a space", .tok = "gpt2",
           .hook = hook_merge_nospace);
    EXPECT("", .tok = "gpt2", .hook = hook_merge_ok);
}
END_TEST

/* ------------------------------------------------------------------------
 * What is not described: only the rules of every file
 * ------------------------------------------------------------------------ */

START_TEST(test_undescribed_files)
{
    /* an unknown architecture: its hyper-parameters and tensors are its own */
    EXPECT("", .arch = "gptx", .edits = { KF("gptx.attention.layer_norm_rms_epsilon", 0),
                                          KU("gptx.attention.head_count_kv", 3) },
           .extra = "blk.0.whatever", .ex0 = 5);
    EXPECT("token_embd.weight has 300 rows but the vocabulary has 270 tokens", .arch = "gptx",
           .reshape = GGUF_T_TOKEN_EMBD, .re0 = 64, .re1 = 300);
    EXPECT("tensor blk.2.attn_q.weight: block 2 is beyond gptx.block_count = 2", .arch = "gptx",
           .extra = "blk.2.attn_q.weight", .ex0 = 64);
    /* vocab-only files: no hyper-parameter or tensor rules */
    EXPECT("", .type = "vocab", .no_tensors = true, .edits = { KU("llama.block_count", 0) });
    EXPECT("", .no_tensors = true, .edits = { KX("llama.embedding_length") });
    EXPECT("", .type = "vocab", .edits = { KU("llama.attention.head_count_kv", 3) });
    /* other file types (a LoRA adapter) */
    EXPECT("", .type = "adapter", .extra = "blk.0.attn_q.weight.lora_a", .ex0 = 64, .ex1 = 8,
           .edits = { KX("llama.feed_forward_length") });
    /* an expert model of an architecture the table describes without experts:
     * hyper-parameters checked, tensors only generically */
    EXPECT("", .arch = "qwen2", .bias = true, .extra = "blk.0.ffn_gate_exps.weight", .ex0 = 64,
           .ex1 = 96, .edits = { KU("qwen2.expert_count", 8) });
    EXPECT("qwen2.attention.head_count_kv = 3 does not divide qwen2.attention.head_count = 4",
           .arch = "qwen2", .bias = true,
           .edits = { KU("qwen2.expert_count", 8), KU("qwen2.attention.head_count_kv", 3) });
    /* llama describes experts (Mixtral): the router's count, then the
     * stacked expert tensors in place of the dense feed-forward */
    EXPECT("llama.expert_count = 8 but llama.expert_used_count is missing",
           .edits = { KU("llama.expert_count", 8) });
    EXPECT("llama.expert_used_count = 9, expected 1 to llama.expert_count = 8",
           .edits = { KU("llama.expert_count", 8), KU("llama.expert_used_count", 9) });
    EXPECT("missing tensor blk.0.ffn_gate_exps.weight",
           .edits = { KU("llama.expert_count", 4), KU("llama.expert_used_count", 2) });
    /* no architecture at all (an imatrix) */
    EXPECT("", .edits = { KX(GGUF_KEY_ARCHITECTURE), KS("general.type", "imatrix") },
           .extra = "blk.0.attn_q.weight.in_sum2", .ex0 = 64);
}
END_TEST

/* The writer accessors the validation reads through. */
START_TEST(test_writer_accessors)
{
    gguf_writer *w = gguf_writer_new();
    gguf_writer_value v;
    gguf_writer_tensor t;
    ck_assert(!gguf_writer_find_value(w, "a", &v));
    ck_assert_int_eq(gguf_writer_set_u32(w, "a", 7), 0);
    const char *strs[] = { "x", "yz" };
    ck_assert_int_eq(gguf_writer_set_str_array(w, "b", strs, NULL, 2), 0);
    ck_assert(gguf_writer_find_value(w, "a", &v));
    ck_assert_uint_eq(v.type, GGUF_VT_U32);
    ck_assert_uint_eq(v.elem_type, GGUF_VT_U32);
    ck_assert_uint_eq(v.n, 1);
    ck_assert_uint_eq(v.size, 4);
    uint32_t u;
    memcpy(&u, v.bytes, 4);
    ck_assert_uint_eq(u, 7);
    ck_assert(gguf_writer_find_value(w, "b", &v));
    ck_assert_uint_eq(v.type, GGUF_VT_ARR);
    ck_assert_uint_eq(v.elem_type, GGUF_VT_STR);
    ck_assert_uint_eq(v.n, 2);
    ck_assert_uint_eq(v.size, 8 + 1 + 8 + 2);
    ck_assert_int_eq(memcmp(v.bytes + 8, "x", 1), 0);
    ck_assert_int_eq(memcmp(v.bytes + 17, "yz", 2), 0);
    int64_t ne[2] = { 32, 3 };
    gguf_error err;
    ck_assert_int_eq(gguf_writer_add_tensor(w, "t0", GGUF_DT_Q8_0, 2, ne, &err), 0);
    ck_assert(gguf_writer_tensor_at(w, 0, &t));
    ck_assert_str_eq(t.name, "t0");
    ck_assert_uint_eq(t.type, GGUF_DT_Q8_0);
    ck_assert_uint_eq(t.n_dims, 2);
    ck_assert_int_eq(t.ne[0], 32);
    ck_assert_int_eq(t.ne[1], 3);
    ck_assert_int_eq(t.ne[2], 1);
    ck_assert_int_eq(t.ne[3], 1);
    ck_assert(!gguf_writer_tensor_at(w, 1, &t));
    gguf_writer_free(w);
}
END_TEST

/* gguf_model_check: every tensor problem, in order; a hyper-parameter
 * problem ends the check after being reported. */
typedef struct collected {
    int  n;
    char msg[8][GGUF_ERROR_MAX];
} collected;

static void collect(void *ctx, const gguf_error *p)
{
    collected *c = ctx;
    if (c->n < 8)
        snprintf(c->msg[c->n], sizeof c->msg[c->n], "%s", p->msg);
    c->n++;
}

static int check_all(const spec *s, collected *c)
{
    gguf_writer *w = build(s);
    char path[1024];
    snprintf(path, sizeof path, "%s/modelcheck-all-%ld.gguf", test_tmpdir(), (long)getpid());
    write_out(w, path);
    gguf_writer_free(w);
    gguf_error err = { 0 };
    gguf_file *f = gguf_open(path, GGUF_OPEN_NO_SPLIT, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    memset(c, 0, sizeof *c);
    int n = gguf_model_check(f, collect, c, &err);
    gguf_close(f);
    unlink(path);
    return n;
}

START_TEST(test_check_reports_all)
{
    collected c;
    const spec ok = { .arch = "llama" };
    ck_assert_int_eq(check_all(&ok, &c), 0);
    ck_assert_int_eq(c.n, 0);
    /* three tensor problems: an unknown name, a missing tensor, a wrong shape */
    const spec three = { .arch = "llama", .skip = "blk.1.ffn_up.weight",
                         .reshape = "blk.0.attn_norm.weight", .re0 = 32,
                         .extra = "blk.0.attn_qkv.weight", .ex0 = 64, .ex1 = 192 };
    ck_assert_int_eq(check_all(&three, &c), 3);
    ck_assert_int_eq(c.n, 3);
    ck_assert_str_eq(c.msg[0], "tensor blk.0.attn_qkv.weight is not a llama tensor");
    ck_assert_str_eq(c.msg[1], "tensor blk.0.attn_norm.weight has shape [32], expected [64] "
                               "(embedding_length)");
    ck_assert_str_eq(c.msg[2], "missing tensor blk.1.ffn_up.weight");
    /* a hyper-parameter problem stops the check: one problem */
    const spec hp = { .arch = "llama", .skip = "blk.1.ffn_up.weight",
                      .edits = { KX("llama.context_length") } };
    ck_assert_int_eq(check_all(&hp, &c), 1);
    ck_assert_str_eq(c.msg[0], "missing key llama.context_length");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("modelcheck");
    TCase *tc = tcase_create("modelcheck");
    tcase_set_timeout(tc, 120);
    int skipped = 0;
    if (fixtures_present()) {
        tcase_add_test(tc, test_fixtures_pass);
        tcase_add_test(tc, test_fixture_list_passes);
    } else {
        skipped += 2;
    }
    tcase_add_test(tc, test_synthetic_models_pass);
    tcase_add_test(tc, test_layer_kinds);
    tcase_add_test(tc, test_layer_functions);
    tcase_add_test(tc, test_hparam_ranges);
    tcase_add_test(tc, test_hparam_floats);
    tcase_add_test(tc, test_rope_scaling_keys);
    tcase_add_test(tc, test_hparam_presence_and_types);
    tcase_add_test(tc, test_hparam_relations);
    tcase_add_test(tc, test_tensor_blocks);
    tcase_add_test(tc, test_tensor_presence);
    tcase_add_test(tc, test_tensor_shapes);
    tcase_add_test(tc, test_vocab_rows);
    tcase_add_test(tc, test_vocab_token_types);
    tcase_add_test(tc, test_vocab_arrays);
    tcase_add_test(tc, test_vocab_special_ids);
    tcase_add_test(tc, test_vocab_merges);
    tcase_add_test(tc, test_vocab_phi3_names);
    tcase_add_test(tc, test_undescribed_files);
    tcase_add_test(tc, test_writer_accessors);
    tcase_add_test(tc, test_check_reports_all);
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
