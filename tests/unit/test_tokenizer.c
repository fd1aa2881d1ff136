/*
 * test_tokenizer.c — the vocabulary (<ggufkit/vocab.h>, gguf/tokenizer*.c): llama.cpp's own
 * tokenizer test vectors for every fixture vocabulary (SPM and each BPE
 * pre-tokenizer), llama-bpe and qwen2 through gguf-convert --vocab-only,
 * and small hand-built vocabularies for each validation error, special-token
 * parsing, BOS/EOS, byte fallback, merges and pieces.
 */
#define _GNU_SOURCE /* memmem */
#include <string.h>
#include <unistd.h>

#include <ggufkit/gguf.h>
#include "testutil.h"
#include <ggufkit/vocab.h>
#include "tokenizer_impl.h" /* gguf_vocab_bpe_words */

/* ---- helpers --------------------------------------------------------------- */

/* Ids in the hand-built SPM vocabulary (see spm_writer). */
enum { UNK = 0, BOS = 1, EOS = 2, BYTE0 = 3, P0 = 259 };

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = 0;
    fclose(f);
    return buf;
}

/* Writes w to a temporary file and loads its vocabulary (NULL with err). */
static gguf_vocab *load_writer(gguf_writer *w, gguf_error *err)
{
    char path[1024];
    static int seq;
    snprintf(path, sizeof path, "%s/tok-%d-%d.gguf", test_tmpdir(), (int)getpid(), seq++);
    ck_assert_msg(gguf_writer_begin(w, path, err) == 0, "%s", err->msg);
    ck_assert_msg(gguf_writer_finish(w, err) == 0, "%s", err->msg);
    gguf_writer_free(w);
    gguf_file *f = gguf_open(path, 0, err);
    ck_assert_msg(f != NULL, "%s", err->msg);
    gguf_vocab *v = gguf_vocab_load(f, err);
    gguf_close(f);
    unlink(path);
    return v;
}

/* A SentencePiece vocabulary: <unk> <s> </s>, the 256 byte tokens, then
 * pieces[] with descending scores and user-defined "<tool>". */
static gguf_writer *spm_writer(const char *const *pieces, size_t n_pieces)
{
    gguf_writer *w = gguf_writer_new();
    size_t n = 3 + 256 + n_pieces + 1;
    const char **toks = calloc(n, sizeof *toks);
    char (*bytes)[7] = calloc(256, sizeof *bytes);
    float *scores = calloc(n, sizeof *scores);
    int32_t *types = calloc(n, sizeof *types);
    toks[0] = "<unk>", toks[1] = "<s>", toks[2] = "</s>";
    types[0] = 2, types[1] = 3, types[2] = 3;
    for (int b = 0; b < 256; b++) {
        snprintf(bytes[b], 7, "<0x%02X>", b);
        toks[3 + b] = bytes[b];
        types[3 + b] = 6;
    }
    for (size_t i = 0; i < n_pieces; i++) {
        toks[259 + i] = pieces[i];
        types[259 + i] = 1;
        scores[259 + i] = -(float)i;
    }
    toks[n - 1] = "<tool>";
    types[n - 1] = 4;
    gguf_writer_set_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", toks, NULL, n);
    gguf_writer_set_array(w, "tokenizer.ggml.scores", GGUF_VT_F32, scores, n);
    gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_VT_I32, types, n);
    free(toks);
    free(bytes);
    free(scores);
    free(types);
    return w;
}

/* Scores fall with the index, so earlier pieces merge first. "▁hello" is
 * reachable only through "▁h" -> "▁he" and "ll" -> "llo". */
static const char *const spm_pieces[] = { "\xe2\x96\x81", "a", "b", "c", "h", "e", "l", "o",
                                          "\xe2\x96\x81h", "he", "ll", "llo", "\xe2\x96\x81he",
                                          "\xe2\x96\x81hello", "ab" };
#define N_SPM_PIECES (sizeof spm_pieces / sizeof *spm_pieces)

/* A byte-level BPE vocabulary over a few ASCII letters and the space (Ġ),
 * <|endoftext|> as control. */
static gguf_writer *bpe_writer(const char *pre)
{
    static const char *const toks[] = { "<|endoftext|>", "a", "b", "c", "\xc4\xa0", "ab", "abc",
                                        "\304\240a", "\304\240ab", "1", "2", "12" };
    static const char *const merges[] = { "a b", "ab c", "\xc4\xa0 a", "\304\240a b", "1 2" };
    int32_t types[sizeof toks / sizeof *toks];
    for (size_t i = 0; i < sizeof toks / sizeof *toks; i++)
        types[i] = i == 0 ? 3 : 1;
    gguf_writer *w = gguf_writer_new();
    gguf_writer_set_str(w, "tokenizer.ggml.model", "gpt2");
    if (pre)
        gguf_writer_set_str(w, "tokenizer.ggml.pre", pre);
    gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", toks, NULL, sizeof toks / sizeof *toks);
    gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_VT_I32, types, sizeof toks / sizeof *toks);
    gguf_writer_set_str_array(w, "tokenizer.ggml.merges", merges, NULL, sizeof merges / sizeof *merges);
    gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 0);
    gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 0);
    return w;
}

/* Encodes s and compares with the expected ids (terminated by -2). */
static void expect_ids(const gguf_vocab *v, const char *s, bool add_special, bool parse_special,
                       const int32_t *want)
{
    int32_t *ids;
    size_t n;
    gguf_error err;
    ck_assert_msg(gguf_vocab_encode(v, s, strlen(s), add_special, parse_special, &ids, &n, &err) == 0,
                  "%s", err.msg);
    size_t nw = 0;
    while (want[nw] != -2)
        nw++;
    char got[512] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), " %d", ids[i]);
    ck_assert_msg(n == nw, "\"%s\": %zu ids (%s), expected %zu", s, n, got, nw);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(ids[i] == want[i], "\"%s\": id %zu is %d, expected %d (%s)", s, i, ids[i],
                      want[i], got);
    free(ids);
}

/* Expects the vocabulary in w to be refused with a message containing part. */
static void expect_refused(gguf_writer *w, const char *part)
{
    gguf_error err = { 0 };
    gguf_vocab *v = load_writer(w, &err);
    ck_assert_msg(v == NULL, "loaded, expected refusal \"%s\"", part);
    ck_assert_msg(strstr(err.msg, part) != NULL, "message \"%s\" lacks \"%s\"", err.msg, part);
}

/* Concatenated pieces of ids. */
static char *decode(const gguf_vocab *v, const int32_t *ids, size_t n, size_t *len)
{
    size_t cap = 64, o = 0;
    char *out = malloc(cap);
    for (size_t i = 0; i < n; i++) {
        int k = gguf_vocab_piece(v, ids[i], false, out + o, cap - o);
        ck_assert_int_ge(k, 0);
        if ((size_t)k > cap - o) {
            cap = 2 * (o + (size_t)k);
            out = realloc(out, cap);
            ck_assert_int_eq(gguf_vocab_piece(v, ids[i], false, out + o, cap - o), k);
        }
        o += (size_t)k;
    }
    *len = o;
    return out;
}

/* ---- llama.cpp's test vectors ----------------------------------------------- */

/* Checks every entry of NAME.inp/.out against vocabulary file gguf. Returns
 * the number of entries matched; fails on the first mismatch. */
static int check_vectors(const char *gguf, const char *name)
{
    char p[1024], rel[256];
    gguf_error err;
    gguf_file *f = gguf_open(gguf, 0, &err);
    ck_assert_msg(f != NULL, "%s: %s", gguf, err.msg);
    gguf_vocab *v = gguf_vocab_load(f, &err);
    ck_assert_msg(v != NULL, "%s: %s", gguf, err.msg);
    size_t ni, no;
    snprintf(rel, sizeof rel, "vocab/%s.inp", name);
    char *inp = slurp(fixture_path(p, sizeof p, rel), &ni);
    snprintf(rel, sizeof rel, "vocab/%s.out", name);
    char *out = slurp(fixture_path(p, sizeof p, rel), &no);
    ck_assert(inp && out);
    static const char sep[] = "\n__ggml_vocab_test__\n";
    char *s = inp, *line = out;
    int matched = 0;
    while (s) {
        char *end = strstr(s, sep);
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (!end && len == 0)
            break;
        char *nl = strchr(line, '\n');
        ck_assert_msg(nl != NULL, "%s: more inputs than outputs", name);
        *nl = 0;
        int32_t *ids;
        size_t n;
        ck_assert_int_eq(gguf_vocab_encode(v, s, len, false, false, &ids, &n, &err), 0);
        char *q = line;
        for (size_t i = 0; i < n; i++) {
            char *e;
            long want = strtol(q, &e, 10);
            ck_assert_msg(e != q, "%s entry %d: more ids than expected", name, matched);
            ck_assert_msg(want == ids[i], "%s entry %d \"%.*s\": id %zu is %d, expected %ld", name,
                          matched, (int)(len > 60 ? 60 : len), s, i, ids[i], want);
            q = e;
        }
        while (*q == ' ')
            q++;
        ck_assert_msg(*q == 0, "%s entry %d: fewer ids than expected", name, matched);
        free(ids);
        matched++;
        line = nl + 1;
        s = end ? end + sizeof sep - 1 : NULL;
    }
    printf("%s: %d/%d entries match\n", name, matched, matched);
    free(inp);
    free(out);
    gguf_vocab_free(v);
    gguf_close(f);
    return matched;
}

static const char *const vector_vocabs[] = { "llama-spm", "phi-3", "gpt-2", "deepseek-coder",
                                             "falcon", "starcoder", "mpt" };

START_TEST(test_vectors)
{
    char p[1024], rel[256], name[128];
    snprintf(name, sizeof name, "ggml-vocab-%s.gguf", vector_vocabs[_i]);
    snprintf(rel, sizeof rel, "vocab/%s", name);
    ck_assert_int_gt(check_vectors(fixture_path(p, sizeof p, rel), name), 40);
}
END_TEST

/* llama-bpe and qwen2 have vectors but no GGUF: gguf-convert --vocab-only
 * makes one from tokenizers/llama3 and tokenizers/qwen3. */
static const char *const converted[][2] = { { "llama3", "ggml-vocab-llama-bpe.gguf" },
                                            { "qwen3", "ggml-vocab-qwen2.gguf" } };

static const char *convert_tool(void)
{
    static char path[1024];
    const char *b = getenv("BUILD");
    snprintf(path, sizeof path, "%s/gguf-convert", b && *b ? b : "build");
    return access(path, X_OK) == 0 ? path : NULL;
}

START_TEST(test_vectors_converted)
{
    char src[1024], rel[256], out[1024], cmd[4096];
    snprintf(rel, sizeof rel, "tokenizers/%s", converted[_i][0]);
    ck_assert(fixture_path(src, sizeof src, rel));
    snprintf(out, sizeof out, "%s/tok-%d-%s.gguf", test_tmpdir(), (int)getpid(), converted[_i][0]);
    snprintf(cmd, sizeof cmd, "'%s' '%s' --vocab-only -o '%s' >/dev/null 2>&1", convert_tool(), src, out);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    ck_assert_int_gt(check_vectors(out, converted[_i][1]), 40);
    unlink(out);
}
END_TEST

/* ---- Qwen 3.5 and Gemma 4 (tests/data/tok) ---------------------------------------
 *
 * The vocabularies: the folders tests/tools/mktokjson makes (--model-folder)
 * through gguf-convert --vocab-only, whose tokenizer keys tests/e2e/tokenize.sh
 * holds to what llama.cpp e21cdc11's convert_hf_to_gguf.py wrote for the same
 * folders (NAME-vocab.json); NAME.out / NAME.special.out: llama-tokenize's
 * ids for every entry of vectors.inp, without and with BOS + special-token
 * parsing (see tests/data/tok/README.md). */

static const char *mktokjson_tool(void)
{
    static char path[1024];
    const char *b = getenv("BUILD");
    snprintf(path, sizeof path, "%s/tests/tools/mktokjson", b && *b ? b : "build");
    return access(path, X_OK) == 0 ? path : NULL;
}

static const char *const tok_vocabs[] = { "qwen35", "gemma4" };

/* Every entry of tests/data/tok/vectors.inp against the lines of out. */
static int check_tok_vectors(const gguf_vocab *v, const char *out_path, bool special)
{
    size_t ni, no;
    char *inp = slurp("tests/data/tok/vectors.inp", &ni);
    char *out = slurp(out_path, &no);
    ck_assert_msg(inp && out, "tests/data/tok: vectors.inp or %s missing", out_path);
    static const char sep[] = "\n__ggml_vocab_test__\n";
    char *s = inp, *line = out;
    int matched = 0;
    gguf_error err;
    for (char *end; (end = strstr(s, sep)); s = end + sizeof sep - 1) {
        size_t len = (size_t)(end - s);
        char *nl = strchr(line, '\n');
        ck_assert_msg(nl != NULL, "%s: more inputs than outputs", out_path);
        *nl = 0;
        int32_t *ids;
        size_t n;
        ck_assert_int_eq(gguf_vocab_encode(v, s, len, special, special, &ids, &n, &err), 0);
        char *q = line;
        for (size_t i = 0; i < n; i++) {
            char *e;
            long want = strtol(q, &e, 10);
            ck_assert_msg(e != q, "%s entry %d \"%.*s\": more ids than expected", out_path, matched,
                          (int)(len > 60 ? 60 : len), s);
            ck_assert_msg(want == ids[i], "%s entry %d \"%.*s\": id %zu is %d, expected %ld", out_path,
                          matched, (int)(len > 60 ? 60 : len), s, i, ids[i], want);
            q = e;
        }
        while (*q == ' ')
            q++;
        ck_assert_msg(*q == 0, "%s entry %d \"%.*s\": fewer ids than expected", out_path, matched,
                      (int)(len > 60 ? 60 : len), s);
        if (!special && !memmem(s, len, "\xe2\x96\x81", 3)) { /* the pieces give the text back
                                                                  (gemma4: but U+2581 as a space) */
            size_t dl;
            char *d = decode(v, ids, n, &dl);
            ck_assert_msg(dl == len && !memcmp(d, s, len), "%s entry %d \"%.*s\": decodes to \"%.*s\"",
                          out_path, matched, (int)(len > 60 ? 60 : len), s, (int)(dl > 60 ? 60 : dl), d);
            free(d);
        }
        free(ids);
        matched++;
        line = nl + 1;
    }
    ck_assert_msg(*line == 0, "%s: more outputs than inputs", out_path);
    free(inp);
    free(out);
    return matched;
}

/* NAME's vocabulary made as above (the file is gone once it is open) */
static gguf_vocab *load_tok_vocab(const char *name, gguf_file **f)
{
    char dir[1024], path[1100], cmd[4096];
    gguf_error err;
    snprintf(dir, sizeof dir, "%s/tokdata-%d-%s", test_tmpdir(), (int)getpid(), name);
    snprintf(path, sizeof path, "%s.gguf", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && '%s' %s '%s' --model-folder && "
             "'%s' '%s' --vocab-only -o '%s' >/dev/null 2>&1; r=$?; rm -rf '%s'; exit $r",
             dir, mktokjson_tool(), name, dir, convert_tool(), dir, path, dir);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    *f = gguf_open(path, 0, &err);
    ck_assert_msg(*f != NULL, "%s: %s", path, err.msg);
    unlink(path);
    gguf_vocab *v = gguf_vocab_load(*f, &err);
    ck_assert_msg(v != NULL, "%s: %s", path, err.msg);
    return v;
}

/* _i: vocabulary * 2 + (with BOS and special tokens) */
START_TEST(test_tok_vectors)
{
    const char *name = tok_vocabs[_i / 2];
    bool special = _i % 2;
    gguf_file *f;
    gguf_vocab *v = load_tok_vocab(name, &f);
    char out[256];
    snprintf(out, sizeof out, "tests/data/tok/%s%s.out", name, special ? ".special" : "");
    int n = check_tok_vectors(v, out, special);
    printf("%s: %d/%d entries match\n", out, n, n);
    ck_assert_int_ge(n, 120);
    gguf_vocab_free(v);
    gguf_close(f);
}
END_TEST

/* Gemma 4's rules beyond the ids: model "gemma4" is BPE with pre
 * "gemma4", BOS always added, <eos> <turn|> <|tool_response> end
 * generation and </s> becomes a normal token that does not. */
START_TEST(test_gemma4_vocab)
{
    gguf_file *f;
    gguf_vocab *v = load_tok_vocab("gemma4", &f);
    ck_assert_int_eq(gguf_vocab_type(v), GGUF_VOCAB_BPE);
    ck_assert_str_eq(gguf_vocab_pre(v), "gemma4");
    ck_assert(gguf_vocab_adds_bos(v));
    ck_assert(!gguf_vocab_adds_eos(v));
    ck_assert_int_eq(gguf_vocab_bos(v), 2);
    ck_assert_int_eq(gguf_vocab_eos(v), 1);
    int32_t turn_end = -1, tool_resp = -1, s_end = -1, turn = -1;
    for (int32_t id = 0; id < gguf_vocab_n_tokens(v); id++) {
        size_t len;
        const char *t = gguf_vocab_text(v, id, &len);
        if (len == 7 && !memcmp(t, "<turn|>", 7))
            turn_end = id;
        if (len == 16 && !memcmp(t, "<|tool_response>", 16))
            tool_resp = id;
        if (len == 4 && !memcmp(t, "</s>", 4))
            s_end = id;
        if (len == 7 && !memcmp(t, "<|turn>", 7))
            turn = id;
    }
    ck_assert(turn_end >= 0 && tool_resp >= 0 && s_end >= 0 && turn >= 0);
    ck_assert(gguf_vocab_is_eog(v, 1));
    ck_assert(gguf_vocab_is_eog(v, turn_end));
    ck_assert(gguf_vocab_is_eog(v, tool_resp));
    ck_assert(!gguf_vocab_is_eog(v, turn));
    ck_assert(!gguf_vocab_is_eog(v, s_end));
    ck_assert(!gguf_vocab_is_control(v, s_end)); /* CONTROL in the file, normal now */
    /* not a special token any more: "</s>" is spelled by merges (llama.cpp: 494 302 424) */
    expect_ids(v, "</s>", false, true, (int32_t[]){ 494, 302, 424, -2 });
    /* pieces: U+2581 is a space, <0xNN> its byte; control tokens only with special */
    char buf[16];
    int32_t *ids;
    size_t n;
    gguf_error err;
    ck_assert_int_eq(gguf_vocab_encode(v, " a \xf0\x9f\xa6\x99", 7, false, false, &ids, &n, &err), 0);
    size_t dl;
    char *d = decode(v, ids, n, &dl);
    ck_assert_uint_eq(dl, 7);
    ck_assert(!memcmp(d, " a \xf0\x9f\xa6\x99", 7));
    free(d);
    free(ids);
    ck_assert_int_eq(gguf_vocab_piece(v, 2, false, buf, sizeof buf), 0);
    ck_assert_int_eq(gguf_vocab_piece(v, 2, true, buf, sizeof buf), 5);
    ck_assert(!memcmp(buf, "<bos>", 5));
    gguf_vocab_free(v);
    gguf_close(f);
}
END_TEST

/* The gemma4 model in a hand-built file: BOS forced on over add_bos_token
 * false, no default BOS/EOS ids, tokenizer.ggml.pre ignored, merges
 * required, a newline run that is a token taken whole even when no merge
 * makes it. */
static gguf_writer *gemma4_writer(bool with_merges, bool add_bos)
{
    static const char *const toks[] = { "<pad>", "<eos>", "<bos>", "<0x0A>", "<0x61>", "\n", "\n\n\n",
                                        "a", "\xe2\x96\x81", "\342\226\201a", "b" };
    static const char *const merges[] = { "\xe2\x96\x81 a" };
    int32_t types[sizeof toks / sizeof *toks];
    for (size_t i = 0; i < sizeof toks / sizeof *toks; i++)
        types[i] = i < 3 ? 3 : i < 5 ? 6 : 1;
    gguf_writer *w = gguf_writer_new();
    gguf_writer_set_str(w, "tokenizer.ggml.model", "gemma4");
    gguf_writer_set_str(w, "tokenizer.ggml.pre", "no-such-pre");
    gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", toks, NULL, sizeof toks / sizeof *toks);
    gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_VT_I32, types, sizeof toks / sizeof *toks);
    if (with_merges)
        gguf_writer_set_str_array(w, "tokenizer.ggml.merges", merges, NULL, 1);
    gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", add_bos);
    return w;
}

START_TEST(test_gemma4_model)
{
    gguf_error err;
    gguf_vocab *v = load_writer(gemma4_writer(true, false), &err);
    ck_assert_msg(v, "%s", err.msg);
    ck_assert_str_eq(gguf_vocab_pre(v), "gemma4");
    ck_assert(gguf_vocab_adds_bos(v)); /* llama.cpp overrides false */
    ck_assert_int_eq(gguf_vocab_bos(v), -1);
    ck_assert_int_eq(gguf_vocab_eos(v), -1);
    ck_assert(gguf_vocab_is_eog(v, 1)); /* <eos> by its text */
    /* no BOS id: asking for it is an error, as llama.cpp asserts */
    int32_t *ids;
    size_t n;
    ck_assert_int_ne(gguf_vocab_encode(v, "a", 1, true, false, &ids, &n, &err), 0);
    ck_assert(strstr(err.msg, "BOS") != NULL);
    /* " a" merges; "\n\n\n" is a token; "\n\n" is not: two "\n";
     * 'b' is a token, 'c' falls back to nothing (no <0x63>), "\n" alone */
    expect_ids(v, " a\n\n\nab\n\nc a", false, false, (int32_t[]){ 9, 6, 7, 10, 5, 5, 9, -2 });
    expect_ids(v, "a a", false, false, (int32_t[]){ 7, 9, -2 });
    gguf_vocab_free(v);
    expect_refused(gemma4_writer(false, true), "tokenizer.ggml.merges");
}
END_TEST

START_TEST(test_gpt_neox_loads)
{
    char p[1024];
    gguf_error err;
    gguf_file *f = gguf_open(fixture_path(p, sizeof p, "vocab/ggml-vocab-gpt-neox.gguf"), 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    gguf_vocab *v = gguf_vocab_load(f, &err);
    ck_assert_msg(v != NULL, "%s", err.msg);
    ck_assert_int_eq(gguf_vocab_n_tokens(v), 50432);
    ck_assert_str_eq(gguf_vocab_pre(v), "default");
    ck_assert_int_eq(gguf_vocab_bos(v), 0);
    ck_assert(gguf_vocab_is_eog(v, 0));
    gguf_vocab_free(v);
    gguf_close(f);
}
END_TEST

/* decode(encode(s)) gives s back, after SPM's leading space. */
START_TEST(test_round_trip)
{
    static const char *const files[] = { "llama-spm", "gpt-2" };
    char p[1024], rel[256];
    gguf_error err;
    snprintf(rel, sizeof rel, "vocab/ggml-vocab-%s.gguf", files[_i]);
    gguf_file *f = gguf_open(fixture_path(p, sizeof p, rel), 0, &err);
    ck_assert(f);
    gguf_vocab *v = gguf_vocab_load(f, &err);
    ck_assert_msg(v, "%s", err.msg);
    bool spm = gguf_vocab_type(v) == GGUF_VOCAB_SPM;
    strcat(rel, ".inp");
    size_t ni;
    char *inp = slurp(fixture_path(p, sizeof p, rel), &ni);
    static const char sep[] = "\n__ggml_vocab_test__\n";
    int n_checked = 0;
    for (char *s = inp; s;) {
        char *end = strstr(s, sep);
        size_t len = end ? (size_t)(end - s) : strlen(s);
        int32_t *ids;
        size_t n, dl;
        ck_assert_int_eq(gguf_vocab_encode(v, s, len, false, false, &ids, &n, &err), 0);
        char *d = decode(v, ids, n, &dl);
        size_t skip = spm && len > 0; /* the added leading space */
        ck_assert_msg(dl == len + skip && memcmp(d + skip, s, len) == 0 && (!skip || d[0] == ' '),
                      "round trip of \"%.*s\" gave \"%.*s\"", (int)len, s, (int)dl, d);
        free(d);
        free(ids);
        n_checked++;
        s = end ? end + sizeof sep - 1 : NULL;
    }
    ck_assert_int_gt(n_checked, 40);
    free(inp);
    gguf_vocab_free(v);
    gguf_close(f);
}
END_TEST

/* ---- hand-built SPM vocabulary ------------------------------------------------ */

#define PIECE(k) (P0 + (k)) /* id of spm_pieces[k] */
#define TOOL ((int32_t)(P0 + N_SPM_PIECES))

START_TEST(test_spm_merges_and_space_prefix)
{
    gguf_error err;
    gguf_vocab *v = load_writer(spm_writer(spm_pieces, N_SPM_PIECES), &err);
    ck_assert_msg(v, "%s", err.msg);
    ck_assert_int_eq(gguf_vocab_type(v), GGUF_VOCAB_SPM);
    /* " hello" is one token: "▁hello" */
    expect_ids(v, "hello", false, false, (int32_t[]){ PIECE(13), -2 });
    /* "▁hello" + "▁" + "ab" */
    expect_ids(v, "hello ab", false, false, (int32_t[]){ PIECE(13), PIECE(0), PIECE(14), -2 });
    /* the empty text is no tokens, BOS with add_special */
    expect_ids(v, "", false, false, (int32_t[]){ -2 });
    expect_ids(v, "", true, false, (int32_t[]){ BOS, -2 });
    gguf_vocab_free(v);

    /* add_space_prefix false: no leading ▁ */
    gguf_writer *w = spm_writer(spm_pieces, N_SPM_PIECES);
    gguf_writer_set_bool(w, "tokenizer.ggml.add_space_prefix", false);
    v = load_writer(w, &err);
    ck_assert_msg(v, "%s", err.msg);
    expect_ids(v, "hello", false, false, (int32_t[]){ PIECE(9), PIECE(11), -2 });
    gguf_vocab_free(v);
}
END_TEST

START_TEST(test_spm_byte_fallback)
{
    gguf_error err;
    gguf_vocab *v = load_writer(spm_writer(spm_pieces, N_SPM_PIECES), &err);
    ck_assert_msg(v, "%s", err.msg);
    /* "é" (c3 a9) has no token: its two bytes */
    expect_ids(v, "\xc3\xa9", false, false, (int32_t[]){ PIECE(0), BYTE0 + 0xc3, BYTE0 + 0xa9, -2 });
    /* invalid UTF-8 goes through as bytes too */
    expect_ids(v, "a\xff", false, false, (int32_t[]){ PIECE(0), PIECE(1), BYTE0 + 0xff, -2 });
    char buf[8];
    ck_assert_int_eq(gguf_vocab_piece(v, BYTE0 + 0xc3, false, buf, sizeof buf), 1);
    ck_assert_int_eq((unsigned char)buf[0], 0xc3);
    gguf_vocab_free(v);
}
END_TEST

START_TEST(test_spm_special_tokens)
{
    gguf_error err;
    gguf_vocab *v = load_writer(spm_writer(spm_pieces, N_SPM_PIECES), &err);
    ck_assert_msg(v, "%s", err.msg);
    /* parse_special false: user-defined tokens still split, control ones not */
    expect_ids(v, "a<tool>b", false, false,
               (int32_t[]){ PIECE(0), PIECE(1), TOOL, PIECE(0), PIECE(2), -2 });
    int32_t *ids;
    size_t n;
    ck_assert_int_eq(gguf_vocab_encode(v, "a</s>", 5, false, false, &ids, &n, &err), 0);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_ne(ids[i], EOS);
    free(ids);
    /* parse_special true: </s> is EOS; the text after a special token gets
     * the leading space again */
    expect_ids(v, "a</s>b", false, true, (int32_t[]){ PIECE(0), PIECE(1), EOS, PIECE(0), PIECE(2), -2 });
    expect_ids(v, "<s>a", true, true, (int32_t[]){ BOS, BOS, PIECE(0), PIECE(1), -2 });
    gguf_vocab_free(v);
}
END_TEST

START_TEST(test_spm_bos_eos)
{
    gguf_error err;
    gguf_vocab *v = load_writer(spm_writer(spm_pieces, N_SPM_PIECES), &err);
    ck_assert_msg(v, "%s", err.msg);
    ck_assert(gguf_vocab_adds_bos(v));
    ck_assert(!gguf_vocab_adds_eos(v));
    ck_assert_int_eq(gguf_vocab_bos(v), BOS);
    ck_assert_int_eq(gguf_vocab_eos(v), EOS);
    ck_assert(gguf_vocab_is_eog(v, EOS));
    ck_assert(!gguf_vocab_is_eog(v, BOS));
    expect_ids(v, "a", true, false, (int32_t[]){ BOS, PIECE(0), PIECE(1), -2 });
    gguf_vocab_free(v);

    gguf_writer *w = spm_writer(spm_pieces, N_SPM_PIECES);
    gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", false);
    gguf_writer_set_bool(w, "tokenizer.ggml.add_eos_token", true);
    v = load_writer(w, &err);
    ck_assert_msg(v, "%s", err.msg);
    expect_ids(v, "a", true, false, (int32_t[]){ PIECE(0), PIECE(1), EOS, -2 });
    expect_ids(v, "a", false, false, (int32_t[]){ PIECE(0), PIECE(1), -2 });
    gguf_vocab_free(v);
}
END_TEST

START_TEST(test_spm_pieces)
{
    gguf_error err;
    gguf_vocab *v = load_writer(spm_writer(spm_pieces, N_SPM_PIECES), &err);
    ck_assert_msg(v, "%s", err.msg);
    char buf[32];
    ck_assert_int_eq(gguf_vocab_piece(v, PIECE(13), false, buf, sizeof buf), 6);
    ck_assert(memcmp(buf, " hello", 6) == 0);
    /* too small a buffer: the length needed */
    ck_assert_int_eq(gguf_vocab_piece(v, PIECE(13), false, buf, 2), 6);
    /* control: nothing unless special */
    ck_assert_int_eq(gguf_vocab_piece(v, BOS, false, buf, sizeof buf), 0);
    ck_assert_int_eq(gguf_vocab_piece(v, BOS, true, buf, sizeof buf), 3);
    ck_assert(memcmp(buf, "<s>", 3) == 0);
    /* user-defined: always its text */
    ck_assert_int_eq(gguf_vocab_piece(v, TOOL, false, buf, sizeof buf), 6);
    ck_assert_int_eq(gguf_vocab_piece(v, -1, false, buf, sizeof buf), -1);
    ck_assert_int_eq(gguf_vocab_piece(v, TOOL + 1, false, buf, sizeof buf), -1);
    size_t len;
    ck_assert_ptr_nonnull(gguf_vocab_text(v, PIECE(0), &len));
    ck_assert_uint_eq(len, 3);
    ck_assert_ptr_null(gguf_vocab_text(v, TOOL + 1, &len));
    gguf_vocab_free(v);
}
END_TEST

/* ---- hand-built BPE vocabulary ------------------------------------------------- */

START_TEST(test_bpe_merges)
{
    gguf_error err;
    gguf_vocab *v = load_writer(bpe_writer("gpt-2"), &err);
    ck_assert_msg(v, "%s", err.msg);
    ck_assert_int_eq(gguf_vocab_type(v), GGUF_VOCAB_BPE);
    /* words "abc", " ab", " c": in " ab" the lowest rank "a b" merges first
     * and leaves no merge for "Ġ ab"; "Ġc" is no token: Ġ and c */
    expect_ids(v, "abc ab c", false, false, (int32_t[]){ 6, 4, 5, 4, 3, -2 });
    /* " a": "Ġ a" merges */
    expect_ids(v, " a", false, false, (int32_t[]){ 7, -2 });
    expect_ids(v, "12", false, false, (int32_t[]){ 11, -2 });
    /* 'x' is not in the byte alphabet's tokens: dropped as llama.cpp drops it */
    expect_ids(v, "axb", false, false, (int32_t[]){ 1, 2, -2 });
    /* the special token: only with parse_special; no BOS by default for BPE */
    expect_ids(v, "a<|endoftext|>", true, true, (int32_t[]){ 1, 0, -2 });
    ck_assert(gguf_vocab_is_eog(v, 0));
    char buf[16];
    ck_assert_int_eq(gguf_vocab_piece(v, 8, false, buf, sizeof buf), 3);
    ck_assert(memcmp(buf, " ab", 3) == 0);
    gguf_vocab_free(v);
}
END_TEST

/* Every pre-tokenizer llama.cpp knows loads (its regexes compile) and
 * encodes mixed text (controls, non-ASCII spaces, CJK, emoji, bad UTF-8,
 * an encoded surrogate); llama3 adds BOS and takes whole-word tokens. */
START_TEST(test_bpe_every_pre_tokenizer)
{
    static const char *const pres[] = {
        "default", "llama3", "llama-v3", "llama-bpe", "falcon3", "deepseek-llm", "deepseek-coder",
        "deepseek-v3", "falcon", "mpt", "starcoder", "gpt-2", "phi-2", "jina-es", "jina-de",
        "gigachat", "jina-v1-en", "jina-v2-es", "jina-v2-de", "jina-v2-code", "roberta-bpe",
        "refact", "command-r", "qwen2", "deepseek-r1-qwen", "stablelm2", "olmo", "dbrx",
        "smaug-bpe", "poro-chat", "chatglm-bpe", "viking", "jais", "tekken", "smollm", "codeshell",
        "bloom", "gpt3-finnish", "exaone", "chameleon", "minerva-7b", "megrez", "gpt-4o",
        "llama4", "kanana2", "minimax-m2", "qwen35", "gemma4"
    };
    static const char text[] = "ab abc 12 c\r\n\n  x\xe2\x80\x83y \xe4\xb8\x80\xf0\x9f\x98\x80 'll \xff\xed\xa0\x80!";
    for (size_t i = 0; i < sizeof pres / sizeof *pres; i++) {
        gguf_error err;
        gguf_vocab *v = load_writer(bpe_writer(pres[i]), &err);
        ck_assert_msg(v, "%s: %s", pres[i], err.msg);
        int32_t *ids;
        size_t n;
        ck_assert_msg(gguf_vocab_encode(v, text, sizeof text - 1, true, true, &ids, &n, &err) == 0,
                      "%s: %s", pres[i], err.msg);
        ck_assert_msg(n > 3, "%s", pres[i]);
        free(ids);
        gguf_vocab_free(v);
    }
    gguf_error err;
    gguf_vocab *v = load_writer(bpe_writer("llama-bpe"), &err);
    ck_assert(gguf_vocab_adds_bos(v));
    expect_ids(v, "abc", true, false, (int32_t[]){ 0, 6, -2 });
    gguf_vocab_free(v);
    v = load_writer(bpe_writer(NULL), &err);
    ck_assert_str_eq(gguf_vocab_pre(v), "default");
    gguf_vocab_free(v);
}
END_TEST

/* The pre-tokenizer's words of text, joined by '|', are want. */
static void expect_words(const gguf_vocab *v, const char *text, const char *want)
{
    size_t *lens, n, off = 0;
    ck_assert_int_eq(gguf_vocab_bpe_words(v, text, strlen(text), &lens, &n), 0);
    char got[512] = "";
    for (size_t i = 0; i < n; i++) {
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%.*s", i ? "|" : "", (int)lens[i], text + off);
        off += lens[i];
    }
    free(lens);
    ck_assert_uint_eq(off, strlen(text));
    ck_assert_msg(!strcmp(got, want), "\"%s\": words \"%s\", expected \"%s\"", text, got, want);
}

/* gpt-4o (o200k) words, each list as llama.cpp e21cdc11's unicode_regex_split
 * gives it. Its regex runs on the collapsed text, so a non-ASCII letter is
 * both upper and lower case ("aÉ" one word, "ÉCOLE" two) and a combining
 * mark is not a letter (it leaves the word it follows). */
START_TEST(test_bpe_gpt4o_words)
{
    static const char *const cases[][2] = {
        { "HelloWorld", "Hello|World" },
        { "XMLHttpRequest", "XMLHttp|Request" },
        { "\xc3\x89" "COLE \xc3\xa9" "cole", "\xc3\x89|COLE| \xc3\xa9" "cole" },
        { "a\xc3\x89 \xc3\x89" "a \xc3\x89" "A", "a\xc3\x89| \xc3\x89" "a| \xc3\x89|A" },
        { "don't DON'T", "don't| DON'T" },
        { "x'sY 's 'S 'Re", "x's|Y| '|s| '|S| '|Re" },
        { "1234567 12", "123|456|7| |12" },
        { "a/b\r\n/", "a|/b|\r\n|/" },
        { "x/\n/y", "x|/\n/|y" },
        { "a  \n  b", "a|  \n| | b" },
        { "   spaces   x  ", "  | spaces|  | x|  " },
        { " \xc2\xa0nbsp\xe3\x80\x80wide", " |\xc2\xa0nbsp|\xe3\x80\x80wide" },
        /* e + U+0301 COMBINING ACUTE */
        { "e\xcc\x81 Cafe\xcc\x81S", "e|\xcc\x81| Cafe|\xcc\x81S" },
        /* titlecase Dž, modifier ʰ */
        { "\xc7\x85" "emal \xc7\x85 \xca\xb0" "A", "\xc7\x85" "emal| \xc7\x85| \xca\xb0|A" },
        { "\xce\x95\xce\xbb\xce\xbb\xce\xac\xce\xb4\xce\xb1 \xd0\xa2\xd0\x95\xd0\x9a\xd0\xa1\xd0\xa2 \xe4\xb8\xad\xe6\x96\x87",
          "\xce\x95\xce\xbb\xce\xbb\xce\xac\xce\xb4\xce\xb1| \xd0\xa2\xd0\x95\xd0\x9a\xd0\xa1\xd0\xa2| \xe4\xb8\xad\xe6\x96\x87" },
        { "emoji \xf0\x9f\x98\x80\xf0\x9f\x98\x80 \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",
          "emoji| \xf0\x9f\x98\x80\xf0\x9f\x98\x80| \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd" },
        /* bad UTF-8: each bad byte is U+FFFD, a symbol that may lead a word */
        { "ab\xff" "CD\xc3(x", "ab|\xff" "CD|\xc3(|x" },
    };
    static const char *const names[] = { "gpt-4o", "llama4", "kanana2", "minimax-m2" };
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        gguf_error err;
        gguf_vocab *v = load_writer(bpe_writer(names[k]), &err);
        ck_assert_msg(v, "%s: %s", names[k], err.msg);
        ck_assert(!gguf_vocab_adds_bos(v)); /* no ignore_merges, no BOS: BPE defaults */
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
            expect_words(v, cases[i][0], cases[i][1]);
        /* merges by rank, whole words not looked up first: " ab" is Ġ ab */
        expect_ids(v, "abc ab", false, false, (int32_t[]){ 6, 4, 5, -2 });
        gguf_vocab_free(v);
    }
}
END_TEST

/* qwen35 words, each list as llama.cpp e21cdc11's unicode_regex_split gives
 * it: a combining mark belongs to the letters around it (qwen2 splits it
 * off) and is never punctuation; digits one by one. */
START_TEST(test_bpe_qwen35_words)
{
    static const char *const cases[][2] = {
        { "e\xcc\x81t\xc3\xa9 na\xc3\xafve cafe\xcc\x81 \xcc\x81x",
          "e\xcc\x81t\xc3\xa9| na\xc3\xafve| cafe\xcc\x81| \xcc\x81x" },
        { "don't DON'T 'Ll", "don|'t| DON|'T| '|Ll" },
        { "1234 x2y", "1|2|3|4| x|2|y" },
        { "a  \n  b\r\n", "a|  \n| | b|\r\n" },
        { "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87 \xe0\xb8\x81\xe0\xb8\xb1",
          "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87| \xe0\xb8\x81\xe0\xb8\xb1" },
        { "  spaces  x ", " | spaces| | x| " },
        { "!?\xcc\x81 ...\n\n", "!?|\xcc\x81| ...\n\n" },
        { "\xf0\x9f\x98\x80\xe2\x80\x8d\xef\xb8\x8f x", "\xf0\x9f\x98\x80\xe2\x80\x8d|\xef\xb8\x8f| x" },
    };
    gguf_error err;
    gguf_vocab *v = load_writer(bpe_writer("qwen35"), &err);
    ck_assert_msg(v, "%s", err.msg);
    ck_assert(!gguf_vocab_adds_bos(v));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_words(v, cases[i][0], cases[i][1]);
    gguf_vocab_free(v);
}
END_TEST

/* ---- validation ------------------------------------------------------------------ */

START_TEST(test_refuses_bad_vocabularies)
{
    static const char *const one[] = { "a" };
    gguf_writer *w;

    w = gguf_writer_new();
    gguf_writer_set_str(w, "tokenizer.ggml.model", "llama");
    expect_refused(w, "missing key tokenizer.ggml.tokens");

    w = gguf_writer_new();
    gguf_writer_set_u32(w, "general.x", 1);
    expect_refused(w, "missing key tokenizer.ggml.model");

    w = gguf_writer_new();
    gguf_writer_set_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_set_array(w, "tokenizer.ggml.tokens", GGUF_VT_I32, (int32_t[]){ 1, 2 }, 2);
    expect_refused(w, "tokenizer.ggml.tokens is arr[i32], expected arr[str]");

    static const char *const models[][2] = { { "bert", "\"bert\"" }, { "t5", "\"t5\"" },
                                             { "rwkv", "\"rwkv\"" }, { "foo", "unknown tokenizer model \"foo\"" } };
    for (size_t i = 0; i < 4; i++) {
        w = gguf_writer_new();
        gguf_writer_set_str(w, "tokenizer.ggml.model", models[i][0]);
        gguf_writer_set_str_array(w, "tokenizer.ggml.tokens", one, NULL, 1);
        expect_refused(w, models[i][1]);
    }

    w = spm_writer(spm_pieces, N_SPM_PIECES);
    gguf_writer_set_array(w, "tokenizer.ggml.scores", GGUF_VT_F32, (float[]){ 0, 1 }, 2);
    expect_refused(w, "tokenizer.ggml.scores has 2 elements but there are 275 tokens");

    w = spm_writer(spm_pieces, N_SPM_PIECES);
    gguf_writer_set_array(w, "tokenizer.ggml.scores", GGUF_VT_I32, (int32_t[]){ 0, 1 }, 2);
    expect_refused(w, "tokenizer.ggml.scores is arr[i32], expected arr[f32]");

    w = spm_writer(spm_pieces, N_SPM_PIECES);
    gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_VT_I32, (int32_t[]){ 1 }, 1);
    expect_refused(w, "tokenizer.ggml.token_type has 1 elements");

    w = spm_writer(spm_pieces, N_SPM_PIECES);
    gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_VT_F32, (float[]){ 1 }, 1);
    expect_refused(w, "tokenizer.ggml.token_type is arr[f32], expected arr[i32]");

    static const char *const id_keys[] = { "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                                           "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.seperator_token_id",
                                           "tokenizer.ggml.padding_token_id", "tokenizer.ggml.eot_token_id" };
    for (size_t i = 0; i < sizeof id_keys / sizeof *id_keys; i++) {
        char want[128];
        w = spm_writer(spm_pieces, N_SPM_PIECES);
        gguf_writer_set_u32(w, id_keys[i], 275);
        snprintf(want, sizeof want, "%s = 275 is outside the vocabulary of 275 tokens", id_keys[i]);
        expect_refused(w, want);
    }
    /* -1 as u32 means "none" (llama.cpp's own llama2c converter writes it):
     * accepted, the default stays */
    {
        gguf_error err;
        w = spm_writer(spm_pieces, N_SPM_PIECES);
        gguf_writer_set_u32(w, "tokenizer.ggml.seperator_token_id", UINT32_MAX);
        gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", UINT32_MAX);
        gguf_writer_set_i32(w, "tokenizer.ggml.eos_token_id", -1);
        gguf_vocab *v = load_writer(w, &err);
        ck_assert_msg(v, "%s", err.msg);
        ck_assert_int_eq(gguf_vocab_bos(v), BOS);
        ck_assert_int_eq(gguf_vocab_eos(v), EOS);
        gguf_vocab_free(v);
    }
    w = spm_writer(spm_pieces, N_SPM_PIECES);
    gguf_writer_set_i32(w, "tokenizer.ggml.eos_token_id", -2);
    expect_refused(w, "tokenizer.ggml.eos_token_id = -2 is outside the vocabulary");
    w = spm_writer(spm_pieces, N_SPM_PIECES);
    gguf_writer_set_str(w, "tokenizer.ggml.bos_token_id", "1");
    expect_refused(w, "tokenizer.ggml.bos_token_id is str, expected an integer");

    /* malformed byte tokens */
    static const char *const bad_bytes[] = { "<0xZZ>", "<0x4>", "<0x41", "0x41>>" };
    for (size_t i = 0; i < 4; i++) {
        const char *pieces[] = { "a", bad_bytes[i] };
        w = spm_writer(pieces, 2);
        int32_t types[275];
        for (int k = 0; k < 262; k++)
            types[k] = k < 3 ? 3 : k < 259 ? 6 : 1;
        types[260] = 6;
        types[261] = 4;
        gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_VT_I32, types, 262);
        expect_refused(w, "is not of the form <0xNN>");
    }

    /* duplicate token texts */
    {
        const char *pieces[] = { "a", "a" };
        expect_refused(spm_writer(pieces, 2), "has the same text as token 259");
    }

    /* merges */
    w = bpe_writer("gpt-2");
    gguf_writer_set_str_array(w, "tokenizer.ggml.merges", (const char *[]){ "a b", "abc" }, NULL, 2);
    expect_refused(w, "tokenizer.ggml.merges[1] \"abc\" is not two pieces separated by a space");
    w = bpe_writer("gpt-2");
    gguf_writer_set_str_array(w, "tokenizer.ggml.merges", (const char *[]){ "a q" }, NULL, 1);
    expect_refused(w, "piece \"q\" is not a token");
    w = bpe_writer("gpt-2");
    gguf_writer_remove_kv(w, "tokenizer.ggml.merges");
    expect_refused(w, "missing key tokenizer.ggml.merges");
    w = bpe_writer("gpt-2");
    gguf_writer_set_array(w, "tokenizer.ggml.merges", GGUF_VT_U8, (uint8_t[]){ 1 }, 1);
    expect_refused(w, "tokenizer.ggml.merges is arr[u8], expected arr[str]");
    expect_refused(bpe_writer("no-such-pre"), "unknown pre-tokenizer \"no-such-pre\"");
}
END_TEST

/* EOG: eos, eot by key, and tokens recognised by text (forced to control). */
START_TEST(test_eog)
{
    const char *pieces[] = { "<|im_end|>", "<|eot_id|>", "x" };
    gguf_writer *w = spm_writer(pieces, 3);
    gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", PIECE(2));
    gguf_error err;
    gguf_vocab *v = load_writer(w, &err);
    ck_assert_msg(v, "%s", err.msg);
    ck_assert(gguf_vocab_is_eog(v, PIECE(0)));
    ck_assert(gguf_vocab_is_eog(v, PIECE(1)));
    ck_assert(gguf_vocab_is_eog(v, PIECE(2)));
    /* </s> by its text too, though eos names another token (e21cdc11) */
    ck_assert(gguf_vocab_is_eog(v, EOS));
    ck_assert(!gguf_vocab_is_eog(v, BOS));
    ck_assert(gguf_vocab_is_control(v, PIECE(0)));
    /* forced control: only parsed with parse_special */
    expect_ids(v, "<|im_end|>", false, true, (int32_t[]){ PIECE(0), -2 });
    gguf_vocab_free(v);
}
END_TEST

/* llama.cpp e21cdc11's later texts: [EOS] and <|end_of_text|> end generation;
 * with <|return|> and <|call|> (o200k_harmony) <|end|> does not and becomes
 * user-defined, as do the message-structure tokens (always parsed). */
START_TEST(test_eog_harmony)
{
    const char *pieces[] = { "<|end|>", "<|return|>", "<|call|>", "<|channel|>", "[EOS]", "<|end_of_text|>",
                             "<fim_prefix>", "x" };
    gguf_error err;
    gguf_vocab *v = load_writer(spm_writer(pieces, 8), &err);
    ck_assert_msg(v, "%s", err.msg);
    ck_assert(!gguf_vocab_is_eog(v, PIECE(0)));
    ck_assert(!gguf_vocab_is_control(v, PIECE(0)));
    ck_assert(gguf_vocab_is_eog(v, PIECE(1)));
    ck_assert(gguf_vocab_is_eog(v, PIECE(2)));
    ck_assert(!gguf_vocab_is_eog(v, PIECE(3)));
    ck_assert(gguf_vocab_is_eog(v, PIECE(4)));
    ck_assert(gguf_vocab_is_eog(v, PIECE(5)));
    ck_assert(gguf_vocab_is_control(v, PIECE(6))); /* a FIM prefix by its text */
    ck_assert(!gguf_vocab_is_eog(v, PIECE(6)));
    /* user-defined: parsed even without parse_special */
    expect_ids(v, "<|end|>", false, false, (int32_t[]){ PIECE(0), -2 });
    expect_ids(v, "<|channel|>", false, false, (int32_t[]){ PIECE(3), -2 });
    gguf_vocab_free(v);
    /* without <|call|>, <|end|> still ends generation */
    const char *two[] = { "<|end|>", "<|return|>" };
    v = load_writer(spm_writer(two, 2), &err);
    ck_assert_msg(v, "%s", err.msg);
    ck_assert(gguf_vocab_is_eog(v, PIECE(0)));
    ck_assert(gguf_vocab_is_control(v, PIECE(0)));
    gguf_vocab_free(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tokenizer");
    TCase *tc = tcase_create("tokenizer");
    tcase_set_timeout(tc, 120);
    int skipped = 0;
    char p[1024], rel[256];
    for (size_t i = 0; i < sizeof vector_vocabs / sizeof *vector_vocabs; i++) {
        snprintf(rel, sizeof rel, "vocab/ggml-vocab-%s.gguf.inp", vector_vocabs[i]);
        if (fixture_path(p, sizeof p, rel))
            tcase_add_loop_test(tc, test_vectors, (int)i, (int)i + 1);
        else
            skipped++;
    }
    for (int i = 0; i < 2; i++) {
        snprintf(rel, sizeof rel, "tokenizers/%s", converted[i][0]);
        if (fixture_path(p, sizeof p, rel) && convert_tool())
            tcase_add_loop_test(tc, test_vectors_converted, i, i + 1);
        else
            skipped++;
    }
    if (fixture_path(p, sizeof p, "vocab/ggml-vocab-gpt-neox.gguf"))
        tcase_add_test(tc, test_gpt_neox_loads);
    else
        skipped++;
    if (fixture_path(p, sizeof p, "vocab/ggml-vocab-llama-spm.gguf.inp") &&
        fixture_path(p, sizeof p, "vocab/ggml-vocab-gpt-2.gguf.inp"))
        tcase_add_loop_test(tc, test_round_trip, 0, 2);
    else
        skipped += 2;
    if (convert_tool() && mktokjson_tool()) {
        tcase_add_loop_test(tc, test_tok_vectors, 0, 2 * (int)(sizeof tok_vocabs / sizeof *tok_vocabs));
        tcase_add_test(tc, test_gemma4_vocab);
    } else {
        skipped += 2 * (int)(sizeof tok_vocabs / sizeof *tok_vocabs) + 1;
    }
    tcase_add_test(tc, test_gemma4_model);
    tcase_add_test(tc, test_spm_merges_and_space_prefix);
    tcase_add_test(tc, test_spm_byte_fallback);
    tcase_add_test(tc, test_spm_special_tokens);
    tcase_add_test(tc, test_spm_bos_eos);
    tcase_add_test(tc, test_spm_pieces);
    tcase_add_test(tc, test_bpe_merges);
    tcase_add_test(tc, test_bpe_every_pre_tokenizer);
    tcase_add_test(tc, test_bpe_gpt4o_words);
    tcase_add_test(tc, test_bpe_qwen35_words);
    tcase_add_test(tc, test_refuses_bad_vocabularies);
    tcase_add_test(tc, test_eog);
    tcase_add_test(tc, test_eog_harmony);
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
