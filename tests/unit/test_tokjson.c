/*
 * test_tokjson.c — vocabularies from tokenizer.json: pre-tokenizer
 * recognition, token types of added tokens, [PAD] filling, both merge
 * forms, the SentencePiece-style (byte fallback) reading, bad files; and the
 * fixture tokenizers (Llama 3, Qwen3, Mistral v1) against their known shape.
 */
#include <unistd.h>

#include <ggufkit/arch.h>
#include "tokjson.h"
#include "testutil.h"

#define LLAMA3_RE "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| " \
                  "?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"
#define QWEN2_RE  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| " \
                  "?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"
/* Qwen 3.5: qwen2's with \p{M} beside \p{L} */
#define QWEN35_RE "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?[\\\\p{L}\\\\p{M}]+|\\\\p{N}| " \
                  "?[^\\\\s\\\\p{L}\\\\p{M}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"
/* o200k as gpt-oss, Phi-4-mini and Xenova/gpt-4o write it */
#define GPT4O_RE  "[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?[\\\\p{Lu}\\\\p{Lt}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]*" \
                  "[\\\\p{Ll}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|" \
                  "[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?[\\\\p{Lu}\\\\p{Lt}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]+" \
                  "[\\\\p{Ll}\\\\p{Lm}\\\\p{Lo}\\\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\\\p{N}{1,3}| " \
                  "?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n/]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"
#define SPLIT_AS(re, behavior, invert) "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"" re "\"}, " \
                  "\"behavior\": \"" behavior "\", \"invert\": " invert "}"
#define SPLIT(re) SPLIT_AS(re, "Isolated", "false")
#define BYTELEVEL(r) "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": " r "}"

static const struct {
    const char *pre, *want; /* want NULL: not recognised */
} pre_cases[] = {
    { "{\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT(LLAMA3_RE) ", " BYTELEVEL("false") "]}",
      "llama-bpe" },
    { "{\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT(QWEN2_RE) ", " BYTELEVEL("false") "]}",
      "qwen2" },
    { "{\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT(QWEN35_RE) ", " BYTELEVEL("false") "]}",
      "qwen35" },
    /* with GPT-2's own regex after it: another tokenizer */
    { "{\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT(QWEN35_RE) ", " BYTELEVEL("true") "]}", NULL },
    { BYTELEVEL("true"), "gpt-2" },
    { "{\"type\": \"ByteLevel\", \"add_prefix_space\": false}", "gpt-2" }, /* use_regex defaults on */
    { "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\", \"individual_digits\": true}, "
      BYTELEVEL("true") "]}", "smollm" },
    /* TikTokenConverter's form (gpt-oss), and Xenova's: matches kept, the
     * rest removed, which is the same for a regex that matches everything */
    { "{\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT(GPT4O_RE) ", " BYTELEVEL("false") "]}",
      "gpt-4o" },
    { "{\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT_AS(GPT4O_RE, "Removed", "true") ", "
      BYTELEVEL("false") "]}", "gpt-4o" },
    { "{\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT_AS(GPT4O_RE, "Isolated", "true") ", "
      BYTELEVEL("false") "]}", NULL },
    { "{\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT(GPT4O_RE) ", " BYTELEVEL("true") "]}", NULL },
    /* the llama3 regex with GPT-2's own regex on top is another tokenizer */
    { "{\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT(LLAMA3_RE) ", " BYTELEVEL("true") "]}", NULL },
    { "{\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT("\\\\p{N}") ", " BYTELEVEL("false") "]}", NULL },
    { "{\"type\": \"Metaspace\", \"replacement\": \"x\"}", NULL },
    { "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \"a\"}, "
      "\"behavior\": \"Removed\", \"invert\": false}, " BYTELEVEL("false") "]}", NULL },
    /* deepseek-llm's Digits without individual_digits is a \p{N}+ split: alone it is no row */
    { "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\", \"individual_digits\": false}, "
      BYTELEVEL("false") "]}", NULL },
    { "null", NULL },
};

START_TEST(test_pre)
{
    char doc[2048];
    snprintf(doc, sizeof doc, "{\"pre_tokenizer\": %s}", pre_cases[_i].pre);
    json_value *tj = json_of_text(doc);
    gguf_error err = { 0 };
    const char *pre = tokjson_pre(tj, &err);
    if (pre_cases[_i].want) {
        ck_assert_msg(pre != NULL, "%s", err.msg);
        ck_assert_str_eq(pre, pre_cases[_i].want);
    } else {
        ck_assert_ptr_null(pre);
        ck_assert_ptr_nonnull(strstr(err.msg, "pre-tokenizer"));
        ck_assert_ptr_nonnull(strstr(err.msg, "recognised: llama-bpe, qwen2, qwen35, gpt-4o, deepseek-v3, deepseek-llm, gpt-2, smollm"));
    }
    json_free(tj);
}
END_TEST

/* A byte-level tokenizer.json with three added tokens (special, looking
 * special, plain with a SentencePiece space) and a gap at id 5. */
static const char bpe_doc[] =
    "{\"added_tokens\": ["
    "  {\"id\": 6, \"content\": \"<s>\", \"special\": true, \"normalized\": false},"
    "  {\"id\": 7, \"content\": \"<|im|>\", \"special\": false, \"normalized\": false},"
    "  {\"id\": 8, \"content\": \"\\u2581x\\u2581\", \"special\": false, \"normalized\": false}],"
    " \"pre_tokenizer\": " BYTELEVEL("true") ","
    " \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, \"\\u0120\": 3, \"\\u0120a\": 4},"
    "   \"merges\": %s}}";

static json_value *bpe_json(const char *merges)
{
    char doc[2048];
    snprintf(doc, sizeof doc, bpe_doc, merges);
    return json_of_text(doc);
}

START_TEST(test_bpe_vocab)
{
    json_value *tj = bpe_json("[\"a b\", \"\\u0120 a\"]");
    vocab v;
    gguf_error err;
    ck_assert_msg(vocab_from_bpe_json(&v, tj, -1, &err) == 0, "%s", err.msg);
    ck_assert(v.bpe);
    ck_assert_str_eq(v.pre, "gpt-2");
    ck_assert_int_eq(v.n, 9);
    ck_assert_ptr_null(v.scores);
    ck_assert_str_eq(v.tokens[2], "ab");
    ck_assert_int_eq(v.types[2], GGUF_TOKEN_NORMAL);
    ck_assert_str_eq(v.tokens[5], "[PAD5]");
    ck_assert_int_eq(v.types[5], GGUF_TOKEN_UNUSED);
    ck_assert_int_eq(v.types[6], GGUF_TOKEN_CONTROL);
    ck_assert_int_eq(v.types[7], GGUF_TOKEN_CONTROL); /* looks special */
    ck_assert_int_eq(v.types[8], GGUF_TOKEN_USER_DEFINED);
    ck_assert_str_eq(v.tokens[8], " x ");
    ck_assert_uint_eq(v.lens[8], 3);
    ck_assert_int_eq(v.n_merges, 2);
    ck_assert_str_eq(v.merges[1], "\xc4\xa0 a");
    vocab_free(&v);

    /* config.json's larger vocab_size pads; a smaller one is an error */
    ck_assert_msg(vocab_from_bpe_json(&v, tj, 12, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(v.n, 12);
    ck_assert_str_eq(v.tokens[11], "[PAD11]");
    vocab_free(&v);
    ck_assert_int_eq(vocab_from_bpe_json(&v, tj, 8, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "vocabulary size is 8"));
    json_free(tj);
}
END_TEST

START_TEST(test_merge_pairs)
{
    /* the list form */
    json_value *tj = bpe_json("[[\"a\", \"b\"], [\"\\u0120\", \"a\"]]");
    vocab v;
    gguf_error err;
    ck_assert_msg(vocab_from_bpe_json(&v, tj, -1, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(v.n_merges, 2);
    ck_assert_str_eq(v.merges[0], "a b");
    ck_assert_str_eq(v.merges[1], "\xc4\xa0 a");
    vocab_free(&v);
    json_free(tj);
    /* a space inside a part is written as U+0120: "a b" becomes "aĠb",
     * which is no token here, so the merge is refused (gguf-run would
     * refuse the file), naming the piece */
    tj = bpe_json("[[\"a\", \"b\"], [\" \", \"a b\"]]");
    ck_assert_int_eq(vocab_from_bpe_json(&v, tj, -1, &err), -1);
    ck_assert_msg(strstr(err.msg, "merge 1 \"\xc4\xa0 a\xc4\xa0" "b\" names \"a\xc4\xa0" "b\", which is not a token"),
                  "%s", err.msg);
    json_free(tj);
}
END_TEST

static const struct {
    const char *merges_or_doc, *want;
    bool whole; /* a whole document rather than merges for bpe_doc */
} bad[] = {
    { "[\"a b\", [\"a\", \"b\"]]", "merge 1 is neither", false },
    { "[[\"a\", \"b\"], \"a b\"]", "merge 1 is neither", false },
    { "[[\"a\"]]", "merge 0 is neither", false },
    { "{\"pre_tokenizer\": " BYTELEVEL("true") ", \"model\": {\"vocab\": [1]}}", "model.vocab", true },
    { "{\"pre_tokenizer\": " BYTELEVEL("true") ", \"model\": {\"vocab\": {\"a\": -1}}}", "bad id", true },
    { "{\"pre_tokenizer\": " BYTELEVEL("true") ", \"model\": {\"vocab\": {\"a\": 99999999999}}}", "bad id", true },
    { "{\"pre_tokenizer\": " BYTELEVEL("true") ", \"model\": {\"vocab\": {\"a\": 0}}, "
      "\"added_tokens\": [{\"id\": \"x\", \"content\": \"y\"}]}", "added token without", true },
    { "{\"pre_tokenizer\": " BYTELEVEL("true") ", \"model\": {\"vocab\": {\"a\": 0}}, "
      "\"added_tokens\": {}}", "added_tokens is not an array", true },
};

START_TEST(test_bad)
{
    json_value *tj = bad[_i].whole ? json_of_text(bad[_i].merges_or_doc) : bpe_json(bad[_i].merges_or_doc);
    vocab v;
    gguf_error err = { 0 };
    ck_assert_int_eq(vocab_from_bpe_json(&v, tj, -1, &err), -1);
    ck_assert_msg(strstr(err.msg, bad[_i].want), "'%s' lacks '%s'", err.msg, bad[_i].want);
    json_free(tj);
}
END_TEST

START_TEST(test_spm_json)
{
    json_value *tj = json_of_text(
        "{\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true},"
        "  {\"id\": 1, \"content\": \"<s>\", \"special\": true},"
        "  {\"id\": 6, \"content\": \"[INST]\", \"special\": false}],"
        " \"decoder\": {\"type\": \"Sequence\"},"
        " \"model\": {\"type\": \"BPE\", \"byte_fallback\": true,"
        "   \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"<0x0A>\": 2, \"\\u2581a\": 3, \"<0xZZ>\": 4}}}");
    json_value *cfg = json_of_text("{\"bos_token\": \"<s>\", \"unk_token\": {\"content\": \"<unk>\"}}");
    ck_assert_int_eq(tokjson_kind(tj), TOKJSON_SPM_BPE);
    vocab v;
    gguf_error err;
    ck_assert_msg(vocab_from_spm_json(&v, tj, cfg, &err) == 0, "%s", err.msg);
    ck_assert(!v.bpe);
    ck_assert_int_eq(v.n, 6); /* 5 pieces, then the added token past them */
    ck_assert_int_eq(v.types[0], GGUF_TOKEN_CONTROL);
    ck_assert_int_eq(v.types[1], GGUF_TOKEN_CONTROL);
    ck_assert_int_eq(v.types[2], GGUF_TOKEN_BYTE);
    ck_assert_int_eq(v.types[3], GGUF_TOKEN_NORMAL);
    ck_assert_int_eq(v.types[4], GGUF_TOKEN_NORMAL); /* not a byte: ZZ is not hex */
    ck_assert_str_eq(v.tokens[5], "[INST]");
    ck_assert_int_eq(v.types[5], GGUF_TOKEN_USER_DEFINED);
    for (int i = 0; i < 6; i++)
        ck_assert(v.scores[i] == -1000.0f);
    vocab_free(&v);
    json_free(tj);
    /* a gap among the base ids cannot be written as a list */
    tj = json_of_text("{\"model\": {\"type\": \"BPE\", \"byte_fallback\": true, \"vocab\": {\"a\": 0, \"b\": 2}}}");
    ck_assert_int_eq(vocab_from_spm_json(&v, tj, cfg, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no token has id 1"));
    json_free(tj);
    json_free(cfg);
}
END_TEST

START_TEST(test_looks_special)
{
    ck_assert(tokjson_looks_special("<|im_start|>"));
    ck_assert(tokjson_looks_special("<pad>"));
    ck_assert(tokjson_looks_special("<unused12>"));
    ck_assert(tokjson_looks_special("<\xef\xbd\x9c" "begin\xef\xbd\x9c>"));
    ck_assert(!tokjson_looks_special("<|"));
    ck_assert(!tokjson_looks_special("<think>"));
}
END_TEST

/* The fixture tokenizers: what llama.cpp's converter is known to make of them. */
START_TEST(test_fixtures)
{
    static const struct {
        const char *dir, *pre;
        int64_t n, n_merges, control_id, user_id;
        int kind;
    } fx[] = {
        { "tokenizers/llama3", "llama-bpe", 128256, 280147, 128000, -1, TOKJSON_BYTE_LEVEL },
        { "tokenizers/qwen3", "qwen2", 151669, 151387, 151643, 151667, TOKJSON_BYTE_LEVEL },
        { "tokenizers/mistral-v1", NULL, 32000, 0, 1, -1, TOKJSON_SPM_BPE },
    };
    for (size_t i = 0; i < sizeof fx / sizeof *fx; i++) {
        char rel[256], path[1024], cpath[1024];
        snprintf(rel, sizeof rel, "%s/tokenizer.json", fx[i].dir);
        ck_assert_ptr_nonnull(fixture_path(path, sizeof path, rel));
        snprintf(rel, sizeof rel, "%s/tokenizer_config.json", fx[i].dir);
        ck_assert_ptr_nonnull(fixture_path(cpath, sizeof cpath, rel));
        gguf_error err;
        json_value *tj = json_load_file(path, &err), *cfg = json_load_file(cpath, &err);
        ck_assert_msg(tj && cfg, "%s", err.msg);
        ck_assert_int_eq(tokjson_kind(tj), fx[i].kind);
        vocab v;
        int rc = fx[i].kind == TOKJSON_BYTE_LEVEL ? vocab_from_bpe_json(&v, tj, -1, &err)
                                                  : vocab_from_spm_json(&v, tj, cfg, &err);
        ck_assert_msg(rc == 0, "%s: %s", fx[i].dir, err.msg);
        ck_assert_int_eq(v.n, fx[i].n);
        ck_assert_int_eq(v.n_merges, fx[i].n_merges);
        if (fx[i].pre)
            ck_assert_str_eq(v.pre, fx[i].pre);
        ck_assert_int_eq(v.types[fx[i].control_id], GGUF_TOKEN_CONTROL);
        if (fx[i].user_id >= 0)
            ck_assert_int_eq(v.types[fx[i].user_id], GGUF_TOKEN_USER_DEFINED);
        vocab_free(&v);
        json_free(tj);
        json_free(cfg);
    }
}
END_TEST

/* ---- Qwen 3.5 and Gemma 4: tests/tools/mktokjson's folders, their
 * vocabulary keys against what llama.cpp e21cdc11's converter wrote for the
 * same folders (tests/data/tok/NAME-vocab.json: its manifest's tokenizer
 * keys, arrays as count and sha256 of their bytes in the file) ------------ */

static void expect_manifest_kv(const gguf_file *f, const json_value *manifest, const char *key)
{
    const gguf_kv *x = gguf_lookup_kv(f, key);
    const json_value *want = json_get(json_get(manifest, "metadata"), key);
    ck_assert_msg(x && want, "%s: %s in ours, %s in llama.cpp's", key, x ? "present" : "absent",
                  want ? "present" : "absent");
    char type[32];
    const char *wt = json_str(json_get(want, "type"));
    if (x->type == GGUF_VT_STR) {
        gguf_str v;
        ck_assert(gguf_kv_str(x, &v));
        const char *wv = json_str(json_get(want, "value"));
        ck_assert_msg(wt && !strcmp(wt, "str") && wv && strlen(wv) == v.len && !memcmp(wv, v.ptr, v.len),
                      "%s: \"%.*s\", llama.cpp's %s \"%s\"", key, (int)v.len, v.ptr, wt ? wt : "?",
                      wv ? wv : "?");
        return;
    }
    ck_assert_int_eq(x->type, GGUF_VT_ARR);
    snprintf(type, sizeof type, "arr[%s]", x->elem_type == GGUF_VT_STR ? "str"
                                        : x->elem_type == GGUF_VT_F32 ? "f32" : "i32");
    double count;
    ck_assert_msg(wt && !strcmp(wt, type) && json_num(json_get(want, "count"), &count) &&
                      count == (double)x->n,
                  "%s: %s of %llu, llama.cpp's %s", key, type, (unsigned long long)x->n, wt ? wt : "?");
    gguf_sha256_ctx c;
    gguf_sha256_init(&c);
    if (x->strs) {
        for (uint64_t i = 0; i < x->n; i++) {
            uint8_t len[8];
            for (int k = 0; k < 8; k++)
                len[k] = (uint8_t)((uint64_t)x->strs[i].len >> (8 * k));
            gguf_sha256_update(&c, len, 8);
            gguf_sha256_update(&c, x->strs[i].ptr, x->strs[i].len);
        }
    } else {
        uint64_t n;
        const void *d = gguf_kv_array(x, x->elem_type, &n);
        ck_assert(d && n == x->n);
        gguf_sha256_update(&c, d, 4 * n);
    }
    uint8_t digest[32];
    gguf_sha256_final(&c, digest);
    char hex[65];
    for (int k = 0; k < 32; k++)
        snprintf(hex + 2 * k, 3, "%02x", digest[k]);
    const char *wsha = json_str(json_get(want, "sha256"));
    ck_assert_msg(wsha && !strcmp(wsha, hex), "%s: sha256 %s, llama.cpp's %s", key, hex, wsha ? wsha : "?");
}

START_TEST(test_upstream_vocabs)
{
    static const char *const names[] = { "qwen35", "gemma4" };
    const char *name = names[_i];
    const char *b = getenv("BUILD");
    char dir[1024], cmd[2048], path[1100], cpath[1100], out[1100];
    snprintf(dir, sizeof dir, "%s/tokjson-%d-%s", test_tmpdir(), (int)getpid(), name);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && '%s/tests/tools/mktokjson' %s '%s'", dir,
             b && *b ? b : "build", name, dir);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    snprintf(cpath, sizeof cpath, "%s/tokenizer_config.json", dir);
    gguf_error err;
    json_value *tj = json_load_file(path, &err), *cfg = json_load_file(cpath, &err);
    ck_assert_msg(tj && cfg, "%s", err.msg);
    vocab v;
    int rc = _i == 0 ? vocab_from_bpe_json(&v, tj, -1, &err) : vocab_from_gemma4_json(&v, tj, cfg, &err);
    ck_assert_msg(rc == 0, "%s: %s", name, err.msg);
    snprintf(out, sizeof out, "%s/vocab.gguf", dir);
    gguf_writer *w = gguf_writer_new();
    ck_assert_int_eq(vocab_write(&v, w, &err), 0);
    ck_assert_msg(gguf_writer_begin(w, out, &err) == 0 && gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_writer_free(w);
    vocab_free(&v);
    json_free(tj);
    json_free(cfg);
    char ref[256];
    snprintf(ref, sizeof ref, "tests/data/tok/%s-vocab.json", name);
    json_value *manifest = json_load_file(ref, &err);
    ck_assert_msg(manifest, "%s", err.msg);
    gguf_file *ours = gguf_open(out, 0, &err);
    ck_assert_msg(ours, "%s", err.msg);
    static const char *const keys[] = { "tokenizer.ggml.model", "tokenizer.ggml.tokens",
                                        "tokenizer.ggml.token_type", "tokenizer.ggml.merges" };
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        expect_manifest_kv(ours, manifest, keys[k]);
    const json_value *md = json_get(manifest, "metadata");
    if (_i == 0) { /* gpt2 with pre qwen35, no scores */
        expect_manifest_kv(ours, manifest, "tokenizer.ggml.pre");
        ck_assert_ptr_null(gguf_lookup_kv(ours, "tokenizer.ggml.scores"));
        ck_assert_ptr_null(json_get(md, "tokenizer.ggml.scores"));
    } else { /* gemma4: scores, no pre */
        expect_manifest_kv(ours, manifest, "tokenizer.ggml.scores");
        ck_assert_ptr_null(gguf_lookup_kv(ours, "tokenizer.ggml.pre"));
        ck_assert_ptr_null(json_get(md, "tokenizer.ggml.pre"));
    }
    gguf_close(ours);
    json_free(manifest);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Gemma 4 needs LlamaHfVocab's kind of tokenizer.json */
START_TEST(test_gemma4_refuses_byte_level)
{
    json_value *tj = json_of_text("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}");
    vocab v;
    gguf_error err;
    ck_assert_int_ne(vocab_from_gemma4_json(&v, tj, NULL, &err), 0);
    ck_assert_msg(strstr(err.msg, "byte_fallback") != NULL, "%s", err.msg);
    json_free(tj);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tokjson");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_pre, 0, (int)(sizeof pre_cases / sizeof *pre_cases));
    tcase_add_test(tc, test_bpe_vocab);
    tcase_add_test(tc, test_merge_pairs);
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_spm_json);
    tcase_add_test(tc, test_looks_special);
    tcase_add_loop_test(tc, test_upstream_vocabs, 0, 2);
    tcase_add_test(tc, test_gemma4_refuses_byte_level);
    int skipped = 0;
    if (fixtures_present())
        tcase_add_test(tc, test_fixtures);
    else
        skipped++;
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
