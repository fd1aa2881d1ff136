/*
 * mktokjson.c — small Hugging Face tokenizer folders shaped like the ones
 * the 2026 families ship, trained here by plain BPE on a fixed multilingual
 * text (no randomness: the same files on every run).
 *
 *   mktokjson qwen35 DIR   Qwen 3.5: byte-level BPE (GPT-2 byte alphabet),
 *                          the Qwen 3.5 Split regex + ByteLevel without its
 *                          own regex, NFC normalizer, "a b" merges, added
 *                          tokens <|endoftext|> <|im_start|> <|im_end|> ...
 *   mktokjson gemma4 DIR   Gemma 4: SentencePiece-style BPE (spaces as U+2581,
 *                          byte_fallback with <0x00>..<0xFF>, Sequence
 *                          decoder, ["a", "b"] merges), <pad> <eos> <bos>
 *                          <unk> <mask> <|turn> <turn|> <|tool_response> ...
 *                          in model.vocab and in added_tokens.
 *   mktokjson glm4 DIR     GLM-4.5/4.6/4.7: byte-level BPE as qwen35's, with
 *                          Llama 3's Split regex (+ ByteLevel without its
 *                          regex), no normalizer, GLM's added tokens
 *                          <|endoftext|> [MASK] [gMASK] ... <|user|> ...
 *   mktokjson deepseek-v3 DIR / deepseek-llm DIR
 *                          DeepSeek-V3's / deepseek-llm's (DeepSeek-V2's)
 *                          pre_tokenizer (its Splits, Digits, ByteLevel),
 *                          DeepSeek's added tokens and tokenizer_config.json
 *                          (tokenizer files only: the tests add the
 *                          fixtures' deepseek2-rand config.json)
 *   mktokjson kimi DIR     Kimi K2: the same trained vocabulary as
 *                          tiktoken.model (base64 bytes and rank per line)
 *                          and Kimi's tokenizer_config.json (added_tokens_
 *                          decoder from the first id past the ranks on)
 *
 * Writes DIR/tokenizer.json and DIR/tokenizer_config.json (DIR must
 * exist); with --model-folder also a small model's config.json and a
 * model.safetensors without tensors, which gguf-convert --vocab-only reads
 * as a model folder. What llama.cpp e21cdc11 makes of them is in tests/data/tok/
 * (see tests/data/tok/README.md for how it was made).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_NAME "mktokjson"
#include "tool_util.h"

/* The training text. Every line is one paragraph; characters that occur
 * only once never become tokens of their own (gemma4: byte fallback). */
static const char *const corpus[] = {
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away.",
    "Hello world! Hello there, world. It's a small world, isn't it? They'll say we're here.",
    "def tokenize(text):\n    return [t for t in text.split(' ') if t]\n",
    "for (int i = 0; i < n; i++) {\n\tsum += values[i] * 2;\n}\n",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 1234 2026 3.14159 1,000,000",
    "Über die Brücke gehen wir später. Größe, Straße, schön.",
    "Le café est très bon à Paris; l'été, c'est génial.",
    "Привет, мир! Как дела? Всё хорошо.",
    "Καλημέρα κόσμε, τι κάνεις;",
    "日本語のテキストです。中文文本也在这里。한국어 문장입니다.",
    "e\xcc\x81te\xcc\x81 nai\xcc\x88ve cafe\xcc\x81",  /* combining marks */
    "Emoji: \xf0\x9f\x98\x80 \xf0\x9f\x9a\x80 \xf0\x9f\x98\x80 \xe2\x9c\x85",
    "    indented line\n\n\nafter three newlines\n\nafter two\n",
    "tabs\tand\t\tspaces   mixed  \t here",
    "The the THE tHe; don't DON'T won't; I'M you'RE we'VE she'LL he'D",
    "<html><body>hello</body></html> a+b=c x^2 ~y |z| $5 100%",
};
#define N_LINES (sizeof corpus / sizeof *corpus)

/* ---- a growing token table ------------------------------------------------ */

typedef struct tok {
    char  *s;
    size_t n;
} tok;

static tok   *toks;
static size_t n_toks, cap_toks;


static int find_tok(const char *s, size_t n)
{
    for (size_t i = 0; i < n_toks; i++)
        if (toks[i].n == n && !memcmp(toks[i].s, s, n))
            return (int)i;
    return -1;
}

static int add_tok(const char *s, size_t n)
{
    int id = find_tok(s, n);
    if (id >= 0)
        return id;
    if (n_toks == cap_toks) {
        cap_toks = cap_toks ? 2 * cap_toks : 256;
        toks = xrealloc(toks, cap_toks * sizeof *toks);
    }
    toks[n_toks].s = xrealloc(NULL, n + 1);
    memcpy(toks[n_toks].s, s, n);
    toks[n_toks].s[n] = 0;
    toks[n_toks].n = n;
    return (int)n_toks++;
}

/* ---- training words ----------------------------------------------------------- */

typedef struct word {
    int   *ids;
    size_t n;
} word;

static word  *words;
static size_t n_words, cap_words;

static void add_word(const int *ids, size_t n)
{
    if (!n)
        return;
    if (n_words == cap_words) {
        cap_words = cap_words ? 2 * cap_words : 256;
        words = xrealloc(words, cap_words * sizeof *words);
    }
    words[n_words].ids = xrealloc(NULL, n * sizeof(int));
    memcpy(words[n_words].ids, ids, n * sizeof(int));
    words[n_words++].n = n;
}

static size_t utf8_len(unsigned char c) { return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

/* GPT-2's byte alphabet: printable Latin-1 bytes as themselves, the rest
 * U+0100 onwards in byte order. */
static unsigned byte_cp(unsigned b)
{
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))
        return b;
    unsigned k = 0;
    for (unsigned x = 0; x < b; x++)
        if (!((x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF)))
            k++;
    return 0x100 + k;
}

static size_t put_utf8(unsigned cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    o[0] = (char)(0xC0 | cp >> 6);
    o[1] = (char)(0x80 | (cp & 0x3F));
    return 2; /* the alphabet stays below U+0800 */
}

/* Byte-level words: a letter run with its leading space, a digit, a run of
 * other non-space bytes, or a whitespace run (roughly Qwen's split; the
 * trainer only needs words, not the exact rule). */
static void words_byte_level(int byte_id[256])
{
    for (size_t l = 0; l < N_LINES; l++) {
        const unsigned char *s = (const unsigned char *)corpus[l];
        size_t n = strlen(corpus[l]), i = 0;
        while (i < n) {
            size_t j = i;
            int ids[256];
            if (s[j] == ' ' && j + 1 < n && s[j + 1] != ' ')
                j++;
            if (s[j] >= '0' && s[j] <= '9') {
                j++;
            } else if ((s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= 'a' && s[j] <= 'z') || s[j] >= 0x80) {
                while (j < n && ((s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= 'a' && s[j] <= 'z') || s[j] >= 0x80))
                    j++;
            } else if (s[j] == ' ' || s[j] == '\t' || s[j] == '\n') {
                while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n'))
                    j++;
            } else {
                while (j < n && s[j] != ' ' && s[j] != '\n' && !(s[j] >= '0' && s[j] <= '9') &&
                       !((s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= 'a' && s[j] <= 'z') || s[j] >= 0x80))
                    j++;
            }
            if (j - i > 256)
                j = i + 256;
            for (size_t k = i; k < j; k++)
                ids[k - i] = byte_id[s[k]];
            add_word(ids, j - i);
            i = j;
        }
    }
}

/* SentencePiece-style words: the text with spaces as U+2581, cut before
 * each U+2581 and around newline runs; symbols are UTF-8 characters. */
static void words_spm(void)
{
    for (size_t l = 0; l < N_LINES; l++) {
        const char *s = corpus[l];
        size_t n = strlen(s);
        int ids[512];
        size_t k = 0;
        for (size_t i = 0; i < n;) {
            size_t cl = utf8_len((unsigned char)s[i]);
            bool nl = s[i] == '\n', sp = s[i] == ' ';
            bool prev_nl = k && i > 0 && s[i - 1] == '\n';
            if (k && (sp || nl != prev_nl)) {
                add_word(ids, k);
                k = 0;
            }
            ids[k++] = sp ? add_tok("\xe2\x96\x81", 3) : add_tok(s + i, cl);
            i += cl;
        }
        add_word(ids, k);
    }
}

/* ---- BPE training -------------------------------------------------------------- */

typedef struct merge {
    int a, b;
} merge;

static merge *merges;
static size_t n_merges;

static int cmp_merge(const void *x, const void *y)
{
    const merge *a = x, *b = y;
    return a->a != b->a ? (a->a > b->a) - (a->a < b->a) : (a->b > b->b) - (a->b < b->b);
}

/* Merges the most frequent adjacent pair (ties: the lowest ids) n times;
 * pairs longer than max_len bytes are not
 * merged. */
static void train(size_t n, size_t max_len)
{
    merges = xrealloc(NULL, n * sizeof *merges);
    size_t total = 0;
    for (size_t w = 0; w < n_words; w++)
        total += words[w].n;
    merge *pairs = xrealloc(NULL, (total + 1) * sizeof *pairs);
    for (size_t m = 0; m < n; m++) {
        size_t np = 0;
        for (size_t w = 0; w < n_words; w++)
            for (size_t i = 0; i + 1 < words[w].n; i++) {
                int a = words[w].ids[i], b = words[w].ids[i + 1];
                if (toks[a].n + toks[b].n <= max_len)
                    pairs[np++] = (merge){ a, b };
            }
        qsort(pairs, np, sizeof *pairs, cmp_merge);
        int best_a = -1, best_b = -1, best = 0;
        for (size_t i = 0; i < np;) {
            size_t j = i;
            while (j < np && !cmp_merge(&pairs[i], &pairs[j]))
                j++;
            if ((int)(j - i) > best) {
                best = (int)(j - i);
                best_a = pairs[i].a;
                best_b = pairs[i].b;
            }
            i = j;
        }
        if (best_a < 0)
            break;
        char buf[256];
        memcpy(buf, toks[best_a].s, toks[best_a].n);
        memcpy(buf + toks[best_a].n, toks[best_b].s, toks[best_b].n);
        int id = add_tok(buf, toks[best_a].n + toks[best_b].n);
        merges[n_merges++] = (merge){ best_a, best_b };
        for (size_t w = 0; w < n_words; w++) {
            size_t o = 0;
            for (size_t i = 0; i < words[w].n; i++) {
                if (i + 1 < words[w].n && words[w].ids[i] == best_a && words[w].ids[i + 1] == best_b) {
                    words[w].ids[o++] = id;
                    i++;
                } else {
                    words[w].ids[o++] = words[w].ids[i];
                }
            }
            words[w].n = o;
        }
    }
    free(pairs);
}

/* ---- JSON output ------------------------------------------------------------------ */


typedef struct special {
    const char *text;
    bool        special; /* added_tokens "special" */
} special;

static void write_added(FILE *f, const special *sp, size_t n, int first_id, bool first_in_vocab)
{
    fputs("  \"added_tokens\": [\n", f);
    for (size_t i = 0; i < n; i++) {
        int id = first_in_vocab ? find_tok(sp[i].text, strlen(sp[i].text)) : first_id + (int)i;
        fprintf(f, "    {\"id\": %d, \"content\": ", id);
        json_put_str(f, sp[i].text, strlen(sp[i].text));
        fprintf(f, ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, "
                   "\"normalized\": false, \"special\": %s}%s\n",
                sp[i].special ? "true" : "false", i + 1 < n ? "," : "");
    }
    fputs("  ],\n", f);
}

static void write_vocab(FILE *f, bool pairs)
{
    fputs("    \"vocab\": {\n", f);
    for (size_t i = 0; i < n_toks; i++) {
        fputs("      ", f);
        json_put_str(f, toks[i].s, toks[i].n);
        fprintf(f, ": %zu%s\n", i, i + 1 < n_toks ? "," : "");
    }
    fputs("    },\n    \"merges\": [\n", f);
    for (size_t m = 0; m < n_merges; m++) {
        const tok *a = &toks[merges[m].a], *b = &toks[merges[m].b];
        fputs("      ", f);
        if (pairs) {
            fputc('[', f);
            json_put_str(f, a->s, a->n);
            fputs(", ", f);
            json_put_str(f, b->s, b->n);
            fputc(']', f);
        } else {
            char buf[512];
            memcpy(buf, a->s, a->n);
            buf[a->n] = ' ';
            memcpy(buf + a->n + 1, b->s, b->n);
            json_put_str(f, buf, a->n + b->n + 1);
        }
        fprintf(f, "%s\n", m + 1 < n_merges ? "," : "");
    }
    fputs("    ]\n", f);
}

static FILE *open_out(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "mktokjson: %s: cannot write\n", path);
        exit(1);
    }
    return f;
}

static void close_out(FILE *f)
{
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "mktokjson: write error\n");
        exit(1);
    }
}

static const special qwen_added[] = {
    { "<|endoftext|>", true }, { "<|im_start|>", true }, { "<|im_end|>", true },
    { "<|object_ref_start|>", true }, { "<|object_ref_end|>", true }, { "<|box_start|>", true },
    { "<|box_end|>", true }, { "<|quad_start|>", true }, { "<|quad_end|>", true },
    { "<|vision_start|>", true }, { "<|vision_end|>", true }, { "<|vision_pad|>", true },
    { "<|image_pad|>", true }, { "<|video_pad|>", true }, { "<tool_call>", false },
    { "</tool_call>", false }, { "<|fim_prefix|>", false }, { "<|fim_middle|>", false },
    { "<|fim_suffix|>", false }, { "<|fim_pad|>", false }, { "<|repo_name|>", false },
    { "<|file_sep|>", false }, { "<tool_response>", false }, { "</tool_response>", false },
    { "<think>", false }, { "</think>", false },
};

static const char qwen35_regex[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* GLM-4.5/4.6/4.7 (zai-org): the added tokens in their released order,
 * from <|endoftext|> (151329 there) on; the bracketed ones special, the
 * tags not, so that both token types occur. */
static const special glm_added[] = {
    { "<|endoftext|>", true }, { "[MASK]", true }, { "[gMASK]", true }, { "[sMASK]", true },
    { "<sop>", true }, { "<eop>", true }, { "<|system|>", true }, { "<|user|>", true },
    { "<|assistant|>", true }, { "<|observation|>", true }, { "<|begin_of_image|>", true },
    { "<|end_of_image|>", true }, { "<|begin_of_video|>", true }, { "<|end_of_video|>", true },
    { "<|begin_of_audio|>", true }, { "<|end_of_audio|>", true },
    { "<|begin_of_transcription|>", true }, { "<|end_of_transcription|>", true },
    { "<|code_prefix|>", true }, { "<|code_middle|>", true }, { "<|code_suffix|>", true },
    { "<think>", false }, { "</think>", false }, { "<tool_call>", false }, { "</tool_call>", false },
    { "<tool_response>", false }, { "</tool_response>", false }, { "<arg_key>", false },
    { "</arg_key>", false }, { "<arg_value>", false }, { "</arg_value>", false },
    { "/nothink", false }, { "<|begin_of_box|>", true }, { "<|end_of_box|>", true },
    { "<|image|>", true }, { "<|video|>", true },
};

/* Llama 3's split, as GLM-4.5's tokenizer.json spells it */
static const char glm_regex[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* DeepSeek-V3's Splits, as its tokenizer.json has them (llama.cpp's
 * regex_exprs for "deepseek-v3" are copies) */
static const char *const deepseek_v3_regexes[] = {
    "\\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+"
    "[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
    NULL
};
/* deepseek-llm-7b's and DeepSeek-V2's (then Digits, individual_digits false) */
static const char *const deepseek_llm_regexes[] = {
    "[\r\n]",
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
    "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+",
    "\\s+$",
    "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+",
    NULL
};
static const char *const glm_regexes[] = { glm_regex, NULL };
static const char *const qwen35_regexes[] = { qwen35_regex, NULL };

/* DeepSeek's added tokens (U+FF5C and U+2581 in their names) */
static const special deepseek_added[] = {
    { "<\uff5cbegin\u2581of\u2581sentence\uff5c>", true }, { "<\uff5cend\u2581of\u2581sentence\uff5c>", true },
    { "<\uff5c\u2581pad\u2581\uff5c>", true }, { "<\uff5cfim\u2581hole\uff5c>", false },
    { "<\uff5cfim\u2581begin\uff5c>", false }, { "<\uff5cfim\u2581end\uff5c>", false },
    { "<\uff5cUser\uff5c>", false }, { "<\uff5cAssistant\uff5c>", false },
    { "<think>", false }, { "</think>", false },
};

enum family { FAM_QWEN35, FAM_GEMMA4, FAM_GLM4, FAM_DEEPSEEK_V3, FAM_DEEPSEEK_LLM, FAM_KIMI };

/* Kimi K2's named specials: offset from the first id past the ranks (163584
 * there) and text, as its tokenizer_config.json's added_tokens_decoder */
static const struct {
    int         off;
    const char *text;
} kimi_specials[] = {
    { 0, "[BOS]" }, { 1, "[EOS]" }, { 2, "<|im_end|>" }, { 3, "<|im_user|>" }, { 4, "<|im_assistant|>" },
    { 6, "<|start_header_id|>" }, { 7, "<|end_header_id|>" }, { 9, "[EOT]" }, { 10, "<|im_system|>" },
    { 17, "<|im_middle|>" }, { 254, "[UNK]" }, { 255, "[PAD]" },
};

/* GPT-2's byte alphabet back to bytes: the token's bytes into out, their count */
static size_t token_bytes(const tok *t, unsigned char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < t->n;) {
        unsigned char c = (unsigned char)t->s[i];
        unsigned cp = c < 0x80 ? c : (unsigned)(c & 0x1F) << 6 | ((unsigned char)t->s[i + 1] & 0x3F);
        i += c < 0x80 ? 1 : 2;
        for (unsigned b = 0; b < 256; b++)
            if (byte_cp(b) == cp) {
                out[w++] = (unsigned char)b;
                break;
            }
    }
    return w;
}

/* Kimi K2: tiktoken.model (base64 bytes, rank = the trained id), its
 * tokenizer_config.json and (--model-folder) deepseek2's config.json */
static void make_kimi(const char *dir)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    FILE *f = open_out(dir, "tiktoken.model");
    for (size_t i = 0; i < n_toks; i++) {
        unsigned char b[64];
        size_t n = token_bytes(&toks[i], b);
        for (size_t k = 0; k < n; k += 3) {
            unsigned x = (unsigned)b[k] << 16 | (k + 1 < n ? (unsigned)b[k + 1] << 8 : 0) |
                         (k + 2 < n ? b[k + 2] : 0);
            fputc(b64[x >> 18], f);
            fputc(b64[(x >> 12) & 63], f);
            fputc(k + 1 < n ? b64[(x >> 6) & 63] : '=', f);
            fputc(k + 2 < n ? b64[x & 63] : '=', f);
        }
        fprintf(f, " %zu\n", i);
    }
    close_out(f);
    f = open_out(dir, "tokenizer_config.json");
    fputs("{\n  \"added_tokens_decoder\": {\n", f);
    size_t n_sp = sizeof kimi_specials / sizeof *kimi_specials;
    for (size_t i = 0; i < n_sp; i++)
        fprintf(f, "    \"%zu\": {\"content\": \"%s\", \"lstrip\": false, \"normalized\": false, "
                   "\"rstrip\": false, \"single_word\": false, \"special\": true}%s\n",
                n_toks + (size_t)kimi_specials[i].off, kimi_specials[i].text, i + 1 < n_sp ? "," : "");
    fputs("  },\n  \"additional_special_tokens\": [\"<|im_end|>\", \"<|im_user|>\", \"<|im_assistant|>\", "
          "\"<|start_header_id|>\", \"<|end_header_id|>\", \"[EOT]\", \"<|im_system|>\", \"<|im_middle|>\"],\n"
          "  \"bos_token\": \"[BOS]\",\n  \"clean_up_tokenization_spaces\": false,\n"
          "  \"eos_token\": \"[EOS]\",\n  \"extra_special_tokens\": {},\n  \"model_max_length\": 1000000000000000019884624838656,\n"
          "  \"pad_token\": \"[PAD]\",\n  \"tokenizer_class\": \"TikTokenTokenizer\",\n  \"unk_token\": \"[UNK]\",\n"
          "  \"auto_map\": {\"AutoTokenizer\": [\"tokenization_kimi.TikTokenTokenizer\", null]}\n}\n", f);
    close_out(f);
}

static size_t family_added(enum family fam)
{
    return fam == FAM_QWEN35 ? sizeof qwen_added / sizeof *qwen_added
         : fam == FAM_GLM4   ? sizeof glm_added / sizeof *glm_added
         : fam == FAM_GEMMA4 || fam == FAM_KIMI ? 0 : sizeof deepseek_added / sizeof *deepseek_added;
}

static void make_qwen35(const char *dir, enum family fam)
{
    int byte_id[256];
    /* GPT-2's order: the printable bytes first, then the others */
    for (int pass = 0; pass < 2; pass++)
        for (unsigned b = 0; b < 256; b++) {
            unsigned cp = byte_cp(b);
            if ((cp < 0x100) != (pass == 0))
                continue;
            char u[2];
            byte_id[b] = add_tok(u, put_utf8(cp, u));
        }
    words_byte_level(byte_id);
    train(420, 24);
    if (fam == FAM_KIMI) {
        make_kimi(dir);
        return;
    }
    const bool glm = fam == FAM_GLM4, ds = fam == FAM_DEEPSEEK_V3 || fam == FAM_DEEPSEEK_LLM;
    const special *added = glm ? glm_added : ds ? deepseek_added : qwen_added;
    size_t n_added = family_added(fam);
    const char *const *regexes = glm ? glm_regexes : fam == FAM_DEEPSEEK_V3 ? deepseek_v3_regexes
                               : fam == FAM_DEEPSEEK_LLM ? deepseek_llm_regexes : qwen35_regexes;

    FILE *f = open_out(dir, "tokenizer.json");
    fputs("{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n", f);
    write_added(f, added, n_added, (int)n_toks, false);
    fputs(fam == FAM_QWEN35 ? "  \"normalizer\": {\"type\": \"NFC\"},\n" : "  \"normalizer\": null,\n", f);
    fputs("  \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [\n", f);
    for (const char *const *r = regexes; *r; r++) {
        fputs("    {\"type\": \"Split\", \"pattern\": {\"Regex\": ", f);
        json_put_str(f, *r, strlen(*r));
        fputs("}, \"behavior\": \"Isolated\", \"invert\": false},\n", f);
    }
    if (fam == FAM_DEEPSEEK_LLM)
        fputs("    {\"type\": \"Digits\", \"individual_digits\": false},\n", f);
    fprintf(f, "    {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": %s, "
            "\"use_regex\": false}\n  ]},\n", fam == FAM_QWEN35 ? "false" : "true");
    fputs("  \"post_processor\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
          "\"trim_offsets\": false, \"use_regex\": false},\n", f);
    fputs("  \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
          "\"trim_offsets\": false, \"use_regex\": false},\n", f);
    fputs("  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n    \"unk_token\": null,\n"
          "    \"continuing_subword_prefix\": \"\",\n    \"end_of_word_suffix\": \"\",\n"
          "    \"fuse_unk\": false,\n    \"byte_fallback\": false,\n    \"ignore_merges\": false,\n", f);
    write_vocab(f, false);
    fputs("  }\n}\n", f);
    close_out(f);

    if (ds) { /* DeepSeek-V3's: BOS added, EOS also the padding */
        f = open_out(dir, "tokenizer_config.json");
        fputs("{\n  \"add_bos_token\": true,\n  \"add_eos_token\": false,\n"
              "  \"bos_token\": {\"__type\": \"AddedToken\", \"content\": \"<\uff5cbegin\u2581of\u2581sentence\uff5c>\", "
              "\"lstrip\": false, \"normalized\": true, \"rstrip\": false, \"single_word\": false},\n"
              "  \"clean_up_tokenization_spaces\": false,\n"
              "  \"eos_token\": {\"__type\": \"AddedToken\", \"content\": \"<\uff5cend\u2581of\u2581sentence\uff5c>\", "
              "\"lstrip\": false, \"normalized\": true, \"rstrip\": false, \"single_word\": false},\n"
              "  \"legacy\": true,\n  \"model_max_length\": 131072,\n"
              "  \"pad_token\": {\"__type\": \"AddedToken\", \"content\": \"<\uff5cend\u2581of\u2581sentence\uff5c>\", "
              "\"lstrip\": false, \"normalized\": true, \"rstrip\": false, \"single_word\": false},\n"
              "  \"sp_model_kwargs\": {},\n  \"unk_token\": null,\n"
              "  \"tokenizer_class\": \"LlamaTokenizerFast\"\n}\n", f);
        close_out(f);
        return;
    }
    if (glm) { /* GLM-4.5's, without the added_tokens_decoder it repeats */
        f = open_out(dir, "tokenizer_config.json");
        fputs("{\n  \"clean_up_tokenization_spaces\": false,\n  \"do_lower_case\": false,\n"
              "  \"eos_token\": \"<|endoftext|>\",\n  \"extra_special_tokens\": {},\n"
              "  \"model_max_length\": 128000,\n  \"pad_token\": \"<|endoftext|>\",\n"
              "  \"padding_side\": \"left\",\n  \"remove_space\": false,\n"
              "  \"tokenizer_class\": \"PreTrainedTokenizer\"\n}\n", f);
        close_out(f);
        return;
    }
    f = open_out(dir, "tokenizer_config.json");
    fputs("{\n  \"add_bos_token\": false,\n  \"add_prefix_space\": false,\n"
          "  \"bos_token\": null,\n  \"eos_token\": \"<|im_end|>\",\n  \"pad_token\": \"<|endoftext|>\",\n"
          "  \"unk_token\": null,\n  \"errors\": \"replace\",\n  \"model_max_length\": 262144,\n"
          "  \"split_special_tokens\": false,\n  \"tokenizer_class\": \"Qwen2Tokenizer\",\n"
          "  \"additional_special_tokens\": [\"<|im_start|>\", \"<|im_end|>\", \"<|object_ref_start|>\", "
          "\"<|object_ref_end|>\", \"<|box_start|>\", \"<|box_end|>\", \"<|quad_start|>\", \"<|quad_end|>\", "
          "\"<|vision_start|>\", \"<|vision_end|>\", \"<|vision_pad|>\", \"<|image_pad|>\", \"<|video_pad|>\"],\n"
          "  \"chat_template\": \"{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
          "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
          "{{'<|im_start|>assistant\\n'}}{% endif %}\"\n}\n", f);
    close_out(f);
}

/* Gemma 4's specials sit at the start of model.vocab (and in added_tokens,
 * special). */
static const special gemma_specials[] = {
    { "<pad>", true }, { "<eos>", true }, { "<bos>", true }, { "<unk>", true }, { "<mask>", true },
    { "[multimodal]", true }, { "<|turn>", true }, { "<turn|>", true }, { "<|tool>", true },
    { "<tool|>", true }, { "<|tool_call>", true }, { "<tool_call|>", true },
    { "<|tool_response>", true }, { "<tool_response|>", true }, { "<|channel>", true },
    { "<channel|>", true }, { "<|\"|>", true }, { "<|think|>", true }, { "<|image|>", true },
    { "<|audio|>", true }, { "<|video|>", true }, { "</s>", true }, { "<unused0>", true },
    { "<unused1>", true },
};

static void make_gemma4(const char *dir)
{
    size_t n_sp = sizeof gemma_specials / sizeof *gemma_specials;
    for (size_t i = 0; i < n_sp; i++)
        add_tok(gemma_specials[i].text, strlen(gemma_specials[i].text));
    for (unsigned b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        add_tok(name, 6);
    }
    /* newline runs as tokens (a run that is a token is taken whole) */
    add_tok("\n", 1);
    add_tok("\n\n\n\n", 4);
    add_tok("\t", 1);
    words_spm(); /* every character of the text becomes a token */
    train(420, 32);

    FILE *f = open_out(dir, "tokenizer.json");
    fputs("{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n", f);
    write_added(f, gemma_specials, n_sp, 0, true);
    fputs("  \"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": "
          "\"\xe2\x96\x81\"},\n  \"pre_tokenizer\": null,\n  \"post_processor\": null,\n", f);
    fputs("  \"decoder\": {\"type\": \"Sequence\", \"decoders\": [\n"
          "    {\"type\": \"Replace\", \"pattern\": {\"String\": \"\xe2\x96\x81\"}, \"content\": \" \"},\n"
          "    {\"type\": \"ByteFallback\"},\n    {\"type\": \"Fuse\"}\n  ]},\n", f);
    fputs("  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n    \"unk_token\": \"<unk>\",\n"
          "    \"continuing_subword_prefix\": null,\n    \"end_of_word_suffix\": null,\n"
          "    \"fuse_unk\": true,\n    \"byte_fallback\": true,\n    \"ignore_merges\": false,\n", f);
    write_vocab(f, true);
    fputs("  }\n}\n", f);
    close_out(f);

    f = open_out(dir, "tokenizer_config.json");
    fputs("{\n  \"add_bos_token\": true,\n  \"add_eos_token\": false,\n"
          "  \"bos_token\": \"<bos>\",\n  \"eos_token\": \"<eos>\",\n  \"pad_token\": \"<pad>\",\n"
          "  \"unk_token\": \"<unk>\",\n  \"mask_token\": \"<mask>\",\n"
          "  \"additional_special_tokens\": [\"<|turn>\", \"<turn|>\", \"<|tool>\", \"<tool|>\", "
          "\"<|tool_call>\", \"<tool_call|>\", \"<|tool_response>\", \"<tool_response|>\", "
          "\"<|channel>\", \"<channel|>\", \"<|\\\"|>\", \"<|think|>\", \"<|image|>\", \"<|audio|>\", "
          "\"<|video|>\", \"</s>\"],\n"
          "  \"model_max_length\": 131072,\n  \"tokenizer_class\": \"GemmaTokenizer\",\n"
          "  \"chat_template\": \"{{ bos_token }}{% for message in messages %}{{ '<|turn>' + message['role'] "
          "+ '\\n' + message['content'] + '<turn|>\\n' }}{% endfor %}{% if add_generation_prompt %}"
          "{{ '<|turn>model\\n' }}{% endif %}\"\n}\n", f);
    close_out(f);
}

/* --model-folder: a config.json of a small model of the family whose
 * vocab_size is the tokenizer's, and a model.safetensors with no tensors,
 * so that a converter's --vocab-only takes DIR for a model folder (the
 * config's bos/eos ids are the ones tests/data/tok's references were made
 * with). */
static void make_model_folder(const char *dir, enum family fam, size_t vocab_size)
{
    FILE *f = open_out(dir, "config.json");
    if (fam == FAM_GLM4) /* GLM-4.5's special ids: eos a list, pad <|endoftext|>, no bos */
        fprintf(f, "{\n  \"architectures\": [\"Glm4MoeForCausalLM\"],\n  \"model_type\": \"glm4_moe\",\n"
                   "  \"vocab_size\": %zu,\n  \"hidden_size\": 128,\n  \"intermediate_size\": 256,\n"
                   "  \"num_hidden_layers\": 3,\n  \"num_attention_heads\": 4,\n  \"num_key_value_heads\": 2,\n"
                   "  \"max_position_embeddings\": 2048,\n  \"rms_norm_eps\": 1e-05,\n  \"attention_bias\": true,\n"
                   "  \"eos_token_id\": [%zu, %zu, %zu],\n  \"pad_token_id\": %zu,\n"
                   "  \"tie_word_embeddings\": false,\n  \"head_dim\": 32,\n  \"hidden_act\": \"silu\",\n"
                   "  \"partial_rotary_factor\": 0.5,\n  \"use_qk_norm\": true,\n  \"moe_intermediate_size\": 32,\n"
                   "  \"n_routed_experts\": 8,\n  \"n_shared_experts\": 1,\n  \"num_experts_per_tok\": 2,\n"
                   "  \"n_group\": 1,\n  \"topk_group\": 1,\n  \"first_k_dense_replace\": 1,\n"
                   "  \"norm_topk_prob\": true,\n  \"routed_scaling_factor\": 1.0,\n"
                   "  \"num_nextn_predict_layers\": 1,\n  \"rope_theta\": 1000000.0,\n  \"rope_scaling\": null\n}\n",
                vocab_size, n_toks, n_toks + 7, n_toks + 9, n_toks);
    else if (fam == FAM_QWEN35)
        fprintf(f, "{\n  \"architectures\": [\"Qwen3_5ForCausalLM\"],\n  \"model_type\": \"qwen3_5_text\",\n"
                   "  \"vocab_size\": %zu,\n  \"hidden_size\": 64,\n  \"intermediate_size\": 128,\n"
                   "  \"num_hidden_layers\": 4,\n  \"num_attention_heads\": 2,\n  \"num_key_value_heads\": 1,\n"
                   "  \"head_dim\": 32,\n  \"max_position_embeddings\": 2048,\n  \"rms_norm_eps\": 1e-06,\n"
                   "  \"bos_token_id\": 1,\n  \"eos_token_id\": 2,\n  \"tie_word_embeddings\": true,\n"
                   "  \"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": 10000000.0, "
                   "\"partial_rotary_factor\": 0.25, \"mrope_interleaved\": true, \"mrope_section\": [2, 1, 1]},\n"
                   "  \"full_attention_interval\": 4,\n  \"linear_conv_kernel_dim\": 4,\n"
                   "  \"linear_key_head_dim\": 16,\n  \"linear_value_head_dim\": 16,\n"
                   "  \"linear_num_key_heads\": 2,\n  \"linear_num_value_heads\": 2\n}\n", vocab_size);
    else
        fprintf(f, "{\n  \"architectures\": [\"Gemma4ForConditionalGeneration\"],\n  \"model_type\": \"gemma4\",\n"
                   "  \"text_config\": {\"vocab_size\": %zu, \"hidden_size\": 64, \"intermediate_size\": 128, "
                   "\"num_hidden_layers\": 2, \"num_attention_heads\": 2, \"num_kv_shared_layers\": 0, \"num_key_value_heads\": 1, "
                   "\"head_dim\": 32, \"global_head_dim\": 32, \"max_position_embeddings\": 2048, "
                   "\"rms_norm_eps\": 1e-06, \"bos_token_id\": 1, \"eos_token_id\": 2, "
                   "\"hidden_activation\": \"gelu_pytorch_tanh\", \"sliding_window\": 8, "
                   "\"layer_types\": [\"sliding_attention\", \"full_attention\"], "
                   "\"rope_parameters\": {\"full_attention\": {\"rope_type\": \"proportional\", "
                   "\"partial_rotary_factor\": 0.25, \"rope_theta\": 1000000.0}, \"sliding_attention\": "
                   "{\"rope_type\": \"default\", \"rope_theta\": 10000.0}}, \"final_logit_softcapping\": 30.0},\n"
                   "  \"bos_token_id\": 1,\n  \"eos_token_id\": 2\n}\n", vocab_size);
    close_out(f);
    static const char header[] = "{\"__metadata__\":{\"format\":\"pt\"}}";
    const unsigned long long n = sizeof header - 1;
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(n >> (8 * i));
    f = open_out(dir, "model.safetensors");
    fwrite(len, 1, 8, f);
    fwrite(header, 1, n, f);
    close_out(f);
}

int main(int argc, char **argv)
{
    static const char *const names[] = { "qwen35", "gemma4", "glm4", "deepseek-v3", "deepseek-llm", "kimi" };
    const bool folder = argc == 4 && !strcmp(argv[3], "--model-folder");
    int fam = -1;
    for (int i = 0; argc >= 2 && i < 6; i++)
        if (!strcmp(argv[1], names[i]))
            fam = i;
    if ((argc != 3 && !folder) || fam < 0) {
        fprintf(stderr, "usage: mktokjson qwen35|gemma4|glm4|deepseek-v3|deepseek-llm|kimi DIR "
                        "[--model-folder]\n");
        return 2;
    }
    if (folder && (fam == FAM_DEEPSEEK_V3 || fam == FAM_DEEPSEEK_LLM || fam == FAM_KIMI)) {
        fprintf(stderr, "mktokjson: --model-folder is for qwen35, gemma4 and glm4\n");
        return 2;
    }
    size_t n_added = family_added((enum family)fam);
    if (fam == FAM_GEMMA4)
        make_gemma4(argv[2]);
    else
        make_qwen35(argv[2], (enum family)fam);
    if (folder)
        make_model_folder(argv[2], (enum family)fam, n_toks + n_added);
    for (size_t i = 0; i < n_toks; i++)
        free(toks[i].s);
    for (size_t w = 0; w < n_words; w++)
        free(words[w].ids);
    free(toks);
    free(words);
    free(merges);
    return 0;
}
