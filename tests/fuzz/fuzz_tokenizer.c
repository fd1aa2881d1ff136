/*
 * fuzz_tokenizer.c — libFuzzer harness for the vocabulary (<ggufkit/vocab.h>, gguf/tokenizer*.c).
 *
 * The first input byte chooses what the rest is:
 *   0..63    a GGUF image: gguf_open_memory + gguf_vocab_load; an accepted
 *            vocabulary then encodes a few texts with every flag and gives
 *            the piece of its first tokens, so that a bound the validator
 *            failed to enforce shows up as an ASan report;
 *   64..255  text for one of the built-in vocabularies (an SPM one, a
 *            byte-level BPE one per pre-tokenizer, and a Gemma 4 one, chosen
 *            by the byte): it is encoded with each flag combination; for BPE
 *            and valid UTF-8 the pieces must give the text back (abort
 *            otherwise; not for jina-v2-de, whose <mask> strips the
 *            whitespace before it, nor for gemma4 text holding U+2581, which
 *            decodes as a space).
 * The built-in vocabularies are GGUF images written here, so the harness
 * needs no fixtures. Build: make fuzz; run: build-fuzz/fuzz_tokenizer DIR.
 */
#define _GNU_SOURCE /* memmem */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/gguf.h>
#include <ggufkit/vocab.h>

#include "unicode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- a minimal GGUF image writer ------------------------------------------ */

typedef struct image {
    uint8_t *p;
    size_t   n, cap;
    uint64_t n_kv;
} image;

static void put(image *im, const void *src, size_t n)
{
    if (im->n + n > im->cap) {
        im->cap = (im->n + n) * 2;
        im->p = realloc(im->p, im->cap);
        if (!im->p)
            abort();
    }
    memcpy(im->p + im->n, src, n);
    im->n += n;
}
static void put_u32(image *im, uint32_t v) { put(im, &v, 4); }
static void put_u64(image *im, uint64_t v) { put(im, &v, 8); }
static void put_str(image *im, const char *s)
{
    put_u64(im, strlen(s));
    put(im, s, strlen(s));
}
static void kv_str(image *im, const char *k, const char *v)
{
    put_str(im, k);
    put_u32(im, 8);
    put_str(im, v);
    im->n_kv++;
}
static void kv_strs(image *im, const char *k, const char *const *v, size_t n)
{
    put_str(im, k);
    put_u32(im, 9);
    put_u32(im, 8);
    put_u64(im, n);
    for (size_t i = 0; i < n; i++)
        put_str(im, v[i]);
    im->n_kv++;
}
static void kv_arr32(image *im, const char *k, uint32_t type, const void *v, size_t n)
{
    put_str(im, k);
    put_u32(im, 9);
    put_u32(im, type);
    put_u64(im, n);
    put(im, v, 4 * n);
    im->n_kv++;
}

/* Header with the kv count patched in at the end. */
static gguf_vocab *finish(image *im)
{
    memcpy(im->p + 16, &im->n_kv, 8);
    gguf_error err;
    gguf_file *f = gguf_open_memory(im->p, im->n, &err);
    gguf_vocab *v = f ? gguf_vocab_load(f, &err) : NULL;
    gguf_close(f);
    free(im->p);
    if (!v)
        abort(); /* the built-in vocabularies must load */
    return v;
}

static void begin(image *im)
{
    memset(im, 0, sizeof *im);
    put(im, "GGUF", 4);
    put_u32(im, 3);
    put_u64(im, 0); /* tensors */
    put_u64(im, 0); /* kvs, patched by finish */
}

/* ---- the built-in vocabularies ----------------------------------------------- */

static gguf_vocab *make_spm(void)
{
    static const char *const pieces[] = { "\xe2\x96\x81", "\xe2\x96\x81t", "h", "e", "he",
                                          "\xe2\x96\x81the", "a", "b", "ab", "\342\226\201ab", "<tool>" };
    enum { NP = sizeof pieces / sizeof *pieces, N = 3 + 256 + NP };
    const char *toks[N];
    char bytes[256][7];
    float scores[N];
    int32_t types[N];
    toks[0] = "<unk>", toks[1] = "<s>", toks[2] = "</s>";
    types[0] = 2, types[1] = 3, types[2] = 3;
    for (int b = 0; b < 256; b++) {
        static const char hex[] = "0123456789ABCDEF";
        memcpy(bytes[b], (char[7]){ '<', '0', 'x', hex[b >> 4], hex[b & 15], '>', 0 }, 7);
        toks[3 + b] = bytes[b];
        types[3 + b] = 6;
    }
    for (int i = 0; i < NP; i++) {
        toks[259 + i] = pieces[i];
        types[259 + i] = i == NP - 1 ? 4 : 1;
    }
    for (int i = 0; i < N; i++)
        scores[i] = -(float)i;
    image im;
    begin(&im);
    kv_str(&im, "tokenizer.ggml.model", "llama");
    kv_strs(&im, "tokenizer.ggml.tokens", toks, N);
    kv_arr32(&im, "tokenizer.ggml.scores", 6, scores, N);
    kv_arr32(&im, "tokenizer.ggml.token_type", 5, types, N);
    return finish(&im);
}

/* The byte alphabet's character for byte b, as UTF-8. */
static void byte_char(unsigned b, char out[3])
{
    unsigned cp = b;
    if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))) {
        cp = 256;
        for (unsigned c = 0; c < b; c++)
            cp += !((c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF));
    }
    if (cp < 0x80) {
        out[0] = (char)cp, out[1] = 0;
    } else {
        out[0] = (char)(0xC0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3F)), out[2] = 0;
    }
}

static const char *const pre_names[] = {
    "default", "llama3", "deepseek-llm", "deepseek-coder", "deepseek-v3", "falcon", "starcoder",
    "gpt-2", "qwen2", "bloom", "viking", "tekken", "chameleon", "chatglm-bpe", "smollm", "jina-v2-de",
    "gpt-4o", "qwen35", "glm4", "kimi-k2", "gemma4" /* the last: make_gemma4 */
};
#define N_PRE (sizeof pre_names / sizeof *pre_names)

static gguf_vocab *make_bpe(const char *pre)
{
    static const char *const extra[] = { "\xc4\xa0t", "he", "\xc4\xa0the", "in", "\304\240a", "12",
                                         "123", "<|endoftext|>", "<|im_end|>", "<tool>", "<mask>" };
    static const char *const merges[] = { "\xc4\xa0 t", "h e", "\xc4\xa0t he", "i n", "\xc4\xa0 a",
                                          "1 2", "12 3" };
    enum { NE = sizeof extra / sizeof *extra, N = 256 + NE };
    const char *toks[N];
    char chars[256][3];
    int32_t types[N];
    for (int b = 0; b < 256; b++) {
        byte_char((unsigned)b, chars[b]);
        toks[b] = chars[b];
        types[b] = 1;
    }
    for (int i = 0; i < NE; i++) {
        toks[256 + i] = extra[i];
        types[256 + i] = i >= 7 && i <= 8 ? 3 : i >= 9 ? 4 : 1;
    }
    image im;
    begin(&im);
    kv_str(&im, "tokenizer.ggml.model", "gpt2");
    kv_str(&im, "tokenizer.ggml.pre", pre);
    kv_strs(&im, "tokenizer.ggml.tokens", toks, N);
    kv_arr32(&im, "tokenizer.ggml.token_type", 5, types, N);
    kv_strs(&im, "tokenizer.ggml.merges", merges, sizeof merges / sizeof *merges);
    uint32_t eos = 256 + 7;
    put_str(&im, "tokenizer.ggml.eos_token_id");
    put_u32(&im, 4);
    put_u32(&im, eos);
    im.n_kv++;
    return finish(&im);
}

/* Gemma 4 (tokenizer.ggml.model "gemma4"): <pad> <eos> <bos> <unk>, the
 * <0xNN> byte tokens, a few U+2581-escaped pieces and their merges, newline
 * runs, and Gemma 4's special tokens (<|tool_call> user-defined, the rest
 * control; </s> becomes normal). */
static gguf_vocab *make_gemma4(void)
{
    static const char *const head[] = { "<pad>", "<eos>", "<bos>", "<unk>" };
    static const char *const tail[] = { "\xe2\x96\x81", "a", "t", "h", "e", "\xe2\x96\x81t", "he",
                                        "\xe2\x96\x81the", "\n", "\n\n\n", "\xe4\xb8\xad",
                                        "<|turn>", "<turn|>", "<|tool_response>", "</s>", "<|tool_call>" };
    static const char *const merges[] = { "\xe2\x96\x81 t", "h e", "\xe2\x96\x81t he" };
    enum { NH = 4, NT = sizeof tail / sizeof *tail, N = NH + 256 + NT };
    const char *toks[N];
    char bytes[256][7];
    int32_t types[N];
    for (int i = 0; i < NH; i++) {
        toks[i] = head[i];
        types[i] = 3;
    }
    for (int b = 0; b < 256; b++) {
        static const char hex[] = "0123456789ABCDEF";
        memcpy(bytes[b], (char[7]){ '<', '0', 'x', hex[b >> 4], hex[b & 15], '>', 0 }, 7);
        toks[NH + b] = bytes[b];
        types[NH + b] = 6;
    }
    for (int i = 0; i < NT; i++) {
        toks[NH + 256 + i] = tail[i];
        types[NH + 256 + i] = i == NT - 1 ? 4 : i >= NT - 5 ? 3 : 1;
    }
    image im;
    begin(&im);
    kv_str(&im, "tokenizer.ggml.model", "gemma4");
    kv_strs(&im, "tokenizer.ggml.tokens", toks, N);
    kv_arr32(&im, "tokenizer.ggml.token_type", 5, types, N);
    kv_strs(&im, "tokenizer.ggml.merges", merges, sizeof merges / sizeof *merges);
    uint32_t ids[2] = { 2, 1 };
    static const char *const keys[2] = { "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id" };
    for (int i = 0; i < 2; i++) {
        put_str(&im, keys[i]);
        put_u32(&im, 4);
        put_u32(&im, ids[i]);
        im.n_kv++;
    }
    return finish(&im);
}

/* ---- checks -------------------------------------------------------------------- */


/* Encodes text every way; with check_round_trip, the pieces of the plain
 * encoding must spell the text again. */
static void exercise(const gguf_vocab *v, const char *text, size_t len, bool check_round_trip)
{
    for (int flags = 0; flags < 4; flags++) {
        int32_t *ids;
        size_t n;
        gguf_error err;
        if (gguf_vocab_encode(v, text, len, flags & 1, flags & 2, &ids, &n, &err) != 0)
            continue;
        char *out = malloc(16 * n + 1);
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
            if (ids[i] < 0 || ids[i] >= gguf_vocab_n_tokens(v))
                abort();
            int k = gguf_vocab_piece(v, ids[i], false, out + o, 16);
            if (k < 0 || k > 16)
                abort(); /* the built-in tokens are short */
            o += (size_t)k;
        }
        if (flags == 0 && check_round_trip && (o != len || memcmp(out, text, len) != 0))
            abort();
        free(out);
        free(ids);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gguf_vocab *spm, *bpe[N_PRE];
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    data++, size--;
    if (sel < 64) {
        gguf_error err;
        gguf_file *f = gguf_open_memory(data, size, &err);
        gguf_vocab *v = f ? gguf_vocab_load(f, &err) : NULL;
        if (v) {
            static const char *const texts[] = { "Hello world", " \xe2\x96\x81<s></s>\n\n 123 \xff", "" };
            for (size_t i = 0; i < 3; i++)
                exercise(v, texts[i], strlen(texts[i]), false);
            char buf[64];
            for (int32_t id = 0; id < gguf_vocab_n_tokens(v) && id < 512; id++) {
                int k = gguf_vocab_piece(v, id, id & 1, buf, sizeof buf);
                size_t tl;
                if (k < 0 || !gguf_vocab_text(v, id, &tl) || gguf_vocab_find(v, gguf_vocab_text(v, id, &tl), tl) != id)
                    abort();
                (void)gguf_vocab_is_eog(v, id);
            }
            gguf_vocab_free(v);
        }
        gguf_close(f);
        return 0;
    }
    const char *text = (const char *)data;
    if (sel < 96) {
        if (!spm)
            spm = make_spm();
        exercise(spm, text, size, false);
        return 0;
    }
    size_t k = (size_t)(sel - 96) % N_PRE;
    bool gemma4 = k == N_PRE - 1;
    if (!bpe[k])
        bpe[k] = gemma4 ? make_gemma4() : make_bpe(pre_names[k]);
    /* jina-v2-de's <mask> swallows the whitespace before it, gemma4 gives
     * U+2581 back as a space: no round trip */
    exercise(bpe[k], text, size, gguf_utf8_valid(data, size) && strcmp(pre_names[k], "jina-v2-de") != 0 &&
                                     !(gemma4 && memmem(text, size, "\xe2\x96\x81", 3)));
    return 0;
}
