/*
 * tokjson.c — vocabularies from tokenizer.json (see tokjson.h).
 *
 * llama.cpp's converter asks transformers for these; here the same lists
 * are read from the file itself: the model's "vocab" object (text → id),
 * the "added_tokens" array (id, content, special, normalized) and
 * "model.merges" (either "a b" strings or ["a", "b"] pairs).
 */
#include "tokjson.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>

/* Ids past this are refused: a vocabulary is at most a few 100k tokens. */
#define MAX_VOCAB (16 * 1024 * 1024)

bool tokjson_looks_special(const char *t)
{
    size_t n = strlen(t);
    return !strcmp(t, "<pad>") || !strcmp(t, "<mask>") || !strcmp(t, "<2mass>") ||
           !strcmp(t, "[@BOS@]") ||
           (n >= 4 && !strncmp(t, "<|", 2) && !strcmp(t + n - 2, "|>")) ||
           (n >= 8 && !strncmp(t, "<\xef\xbd\x9c", 4) && !strcmp(t + n - 4, "\xef\xbd\x9c>")) ||
           (n >= 8 && !strncmp(t, "<unused", 7) && t[n - 1] == '>');
}

enum tokjson_kind tokjson_kind(const json_value *tj)
{
    const json_value *model = json_get(tj, "model");
    const char *type = json_str(json_get(model, "type"));
    const json_value *fb = json_get(model, "byte_fallback");
    const char *dec = json_str(json_get(json_get(tj, "decoder"), "type"));
    bool byte_fallback = fb && fb->type == JSON_BOOL && fb->b;
    if (type && !strcmp(type, "BPE") && byte_fallback && dec && !strcmp(dec, "Sequence"))
        return TOKJSON_SPM_BPE;
    return TOKJSON_BYTE_LEVEL;
}

/* ------------------------------------------------------------------------
 * Pre-tokenizer recognition
 *
 * llama.cpp names the pre-tokenizer by hashing what the Python tokenizer
 * makes of a test string; without Python we recognise the pre-tokenizer
 * description instead. Each row is one llama.cpp pre type as tokenizer.json
 * spells it: the Split regexes in order, then whether a ByteLevel step runs
 * GPT-2's own regex and whether a Digits step splits single digits.
 * ------------------------------------------------------------------------ */

#define MAX_SPLITS 8

typedef struct pre_signature {
    const char *name;
    const char *splits[MAX_SPLITS]; /* NULL-terminated */
    bool        byte_level_regex;
    bool        digits;
} pre_signature;

/* deepseek-llm's letter class, as its tokenizer.json spells it */
#define DEEPSEEK_LLM_LETTERS \
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+"

static const pre_signature pre_signatures[] = {
    { "llama-bpe",
      { "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
        "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
      false, false },
    { "qwen2",
      { "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
        "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
      false, false },
    /* o200k: Xenova/gpt-4o, gpt-oss, Phi-4-mini (Llama 4, MiniMax-M2 and
     * Kanana-2 are the same rules under other names) */
    { "gpt-4o",
      { "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
        "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
        "[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
      false, false },
    /* Qwen 3.5: qwen2's with marks counted as letters */
    { "qwen35",
      { "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}"
        "\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
      false, false },
    /* DeepSeek-V3/R1 (and V3.1/V3.2): digit triples, Han and kana runs, then
     * words, punctuation and spaces */
    { "deepseek-v3",
      { "\\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?"
        "[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+" },
      false, false },
    /* deepseek-llm-7b, DeepSeek-V2/V2-Lite: newlines, Latin/Greek/Cyrillic...
     * letter runs, ASCII and full-width punctuation, trailing spaces, CJK and
     * Hangul runs, then Digits without individual_digits (\p{N}+) */
    { "deepseek-llm",
      { "[\r\n]", DEEPSEEK_LLM_LETTERS, "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+",
        "\\s+$", "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+", "\\p{N}+" },
      false, false },
    { "gpt-2", { NULL }, true, false },
    /* SmolLM's (StarCoder's, Refact's: the same pre-tokenization in llama.cpp) */
    { "smollm", { NULL }, true, true },
};
#define N_PRE (sizeof pre_signatures / sizeof *pre_signatures)

/* Whether a Split step keeps its matches and what lies between them as
 * words: "Isolated" (transformers' TikTokenConverter, gpt-oss), or
 * "Removed" with invert (Xenova's conversions: keep the matches, drop the
 * rest). The two differ only on text the regex does not match, and every
 * row's regex matches every character (its last branches are \s+ and
 * [^\s\p{L}\p{N}]+). */
static bool split_keeps_words(const char *behavior, const json_value *invert)
{
    if (invert && invert->type != JSON_BOOL)
        return false;
    bool inverted = invert && invert->b;
    if (!behavior || !strcmp(behavior, "Isolated"))
        return !inverted;
    return !strcmp(behavior, "Removed") && inverted;
}

/* Adds one pre-tokenizer step to sig; false for a step no row describes. */
static bool add_step(const json_value *p, pre_signature *sig, int *n_splits)
{
    const char *type = json_str(json_get(p, "type"));
    if (!type)
        return false;
    if (!strcmp(type, "Split")) {
        const char *re = json_str(json_get(json_get(p, "pattern"), "Regex"));
        const char *behavior = json_str(json_get(p, "behavior"));
        const json_value *invert = json_get(p, "invert");
        if (!re || *n_splits >= MAX_SPLITS - 1 || !split_keeps_words(behavior, invert))
            return false;
        sig->splits[(*n_splits)++] = re;
        return true;
    }
    if (!strcmp(type, "ByteLevel")) {
        const json_value *ur = json_get(p, "use_regex");
        sig->byte_level_regex = !ur || (ur->type == JSON_BOOL && ur->b);
        return true;
    }
    if (!strcmp(type, "Digits")) {
        const json_value *ind = json_get(p, "individual_digits");
        if (ind && ind->type == JSON_BOOL && !ind->b) { /* runs of digits: llama.cpp's \p{N}+ */
            if (*n_splits >= MAX_SPLITS - 1)
                return false;
            sig->splits[(*n_splits)++] = "\\p{N}+";
            return true;
        }
        sig->digits = ind && ind->type == JSON_BOOL && ind->b;
        return sig->digits;
    }
    return false;
}

static bool same_signature(const pre_signature *a, const pre_signature *b)
{
    if (a->byte_level_regex != b->byte_level_regex || a->digits != b->digits)
        return false;
    for (int i = 0; i < MAX_SPLITS; i++) {
        if (!a->splits[i] || !b->splits[i])
            return !a->splits[i] && !b->splits[i];
        if (strcmp(a->splits[i], b->splits[i]))
            return false;
    }
    return true;
}

const char *tokjson_pre(const json_value *tj, gguf_error *err)
{
    const json_value *pre = json_get(tj, "pre_tokenizer");
    pre_signature sig = { 0 };
    int n_splits = 0;
    bool known = pre && pre->type == JSON_OBJECT;
    const char *type = json_str(json_get(pre, "type"));
    if (known && type && !strcmp(type, "Sequence")) {
        const json_value *steps = json_get(pre, "pretokenizers");
        known = steps && steps->type == JSON_ARRAY;
        for (size_t i = 0; known && i < steps->n; i++)
            known = add_step(steps->items[i], &sig, &n_splits);
    } else if (known) {
        known = add_step(pre, &sig, &n_splits);
    }
    for (size_t i = 0; known && i < N_PRE; i++)
        if (same_signature(&sig, &pre_signatures[i]))
            return pre_signatures[i].name;
    gguf_error_set(err, "tokenizer.json: the BPE pre-tokenizer%s%s is not one llama.cpp knows "
                   "here (recognised: llama-bpe, qwen2, qwen35, gpt-4o, deepseek-v3, deepseek-llm, "
                   "gpt-2, smollm)",
                   type ? " of type " : "", type ? type : "");
    return NULL;
}

/* ------------------------------------------------------------------------
 * Shared: the id → text table of model.vocab plus added_tokens
 * ------------------------------------------------------------------------ */

typedef struct id_table {
    const char **text;  /* by id; NULL where no token has that id */
    size_t      *len;
    const json_value **added; /* the added_tokens entry of an id, or NULL */
    int64_t      n;     /* one past the largest id */
    int64_t      n_model; /* model.vocab entries */
} id_table;

static void id_table_free(id_table *t)
{
    free(t->text);
    free(t->len);
    free(t->added);
}

static int id_table_build(id_table *t, const json_value *tj, gguf_error *err)
{
    memset(t, 0, sizeof *t);
    const json_value *mv = json_get(json_get(tj, "model"), "vocab");
    const json_value *added = json_get(tj, "added_tokens");
    if (!mv || mv->type != JSON_OBJECT)
        return gguf_error_set(err, "tokenizer.json: model.vocab is missing or not an object");
    if (added && added->type != JSON_ARRAY)
        return gguf_error_set(err, "tokenizer.json line %zu: added_tokens is not an array",
                              added->line);
    int64_t n = 0, id;
    for (size_t i = 0; i < mv->n; i++) {
        if (!json_int(mv->items[i], &id) || id < 0 || id >= MAX_VOCAB)
            return gguf_error_set(err, "tokenizer.json line %zu: token '%s' has a bad id",
                                  mv->items[i]->line, mv->keys[i]);
        n = id + 1 > n ? id + 1 : n;
    }
    for (size_t i = 0; added && i < added->n; i++) {
        const json_value *a = added->items[i];
        if (!json_int(json_get(a, "id"), &id) || id < 0 || id >= MAX_VOCAB ||
            !json_str(json_get(a, "content")))
            return gguf_error_set(err, "tokenizer.json line %zu: added token without a valid id "
                                  "and content", a->line);
        n = id + 1 > n ? id + 1 : n;
    }
    t->n = n;
    t->n_model = (int64_t)mv->n;
    t->text = calloc((size_t)n + 1, sizeof *t->text);
    t->len = calloc((size_t)n + 1, sizeof *t->len);
    t->added = calloc((size_t)n + 1, sizeof *t->added);
    if (!t->text || !t->len || !t->added) {
        id_table_free(t);
        return gguf_error_set(err, "out of memory");
    }
    for (size_t i = 0; i < mv->n; i++) {
        json_int(mv->items[i], &id);
        if (t->text[id]) { /* Python keeps one of them: a piece would vanish */
            gguf_error_set(err, "tokenizer.json line %zu: tokens '%s' and '%s' both have id %" PRId64,
                           mv->items[i]->line, t->text[id], mv->keys[i], id);
            id_table_free(t);
            return -1;
        }
        t->text[id] = mv->keys[i];
        t->len[id] = strlen(mv->keys[i]);
    }
    /* transformers' get_vocab(): an added token's content names its id */
    for (size_t i = 0; added && i < added->n; i++) {
        const json_value *a = added->items[i], *c = json_get(a, "content");
        json_int(json_get(a, "id"), &id);
        t->text[id] = c->str;
        t->len[id] = c->len;
        t->added[id] = a;
    }
    return 0;
}

static int vocab_alloc(vocab *v, int64_t n, bool scores)
{
    memset(v, 0, sizeof *v);
    v->n = n;
    v->unk_id = v->bos_id = v->eos_id = v->pad_id = -1;
    v->tokens = calloc((size_t)n + 1, sizeof *v->tokens);
    v->lens = calloc((size_t)n + 1, sizeof *v->lens);
    v->types = calloc((size_t)n + 1, sizeof *v->types);
    v->scores = scores ? calloc((size_t)n + 1, sizeof *v->scores) : NULL;
    return !v->tokens || !v->lens || !v->types || (scores && !v->scores) ? -1 : 0;
}

static bool json_true(const json_value *v)
{
    return v && v->type == JSON_BOOL && v->b;
}

/* ------------------------------------------------------------------------
 * Byte-level BPE (_set_vocab_gpt2)
 * ------------------------------------------------------------------------ */

/* Replaces every U+2581 (the SentencePiece space) by ' ' in place. */
static size_t unescape_spaces(char *t, size_t len)
{
    size_t w = 0;
    for (size_t r = 0; r < len;) {
        if (r + 3 <= len && !memcmp(t + r, "\xe2\x96\x81", 3)) {
            t[w++] = ' ';
            r += 3;
        } else {
            t[w++] = t[r++];
        }
    }
    t[w] = 0;
    return w;
}

/* A merge pair as one "a b" string; spaces inside a part become U+0120
 * (llama.cpp's encoding of the list form). */
static char *merge_from_pair(const json_value *pair, size_t *len)
{
    size_t cap = 1;
    for (int p = 0; p < 2; p++)
        cap += pair->items[p]->len * 2 + 1;
    char *out = malloc(cap), *w = out;
    if (!out)
        return NULL;
    for (int p = 0; p < 2; p++) {
        const json_value *s = pair->items[p];
        if (p)
            *w++ = ' ';
        for (size_t i = 0; i < s->len; i++) {
            if (s->str[i] == ' ') { /* U+0120 in UTF-8 */
                *w++ = (char)0xc4;
                *w++ = (char)0xa0;
            } else {
                *w++ = s->str[i];
            }
        }
    }
    *w = 0;
    *len = (size_t)(w - out);
    return out;
}

static int load_merges(vocab *v, const json_value *tj, gguf_error *err)
{
    const json_value *merges = json_get(json_get(tj, "model"), "merges");
    if (!merges || merges->type != JSON_ARRAY || !merges->n)
        return 0; /* llama.cpp warns and writes none */
    v->merges = calloc(merges->n, sizeof *v->merges);
    v->merge_lens = calloc(merges->n, sizeof *v->merge_lens);
    if (!v->merges || !v->merge_lens)
        return gguf_error_set(err, "out of memory");
    bool strings = merges->items[0]->type == JSON_STRING;
    for (size_t i = 0; i < merges->n; i++) {
        const json_value *m = merges->items[i];
        if (strings && m->type == JSON_STRING) {
            v->merges[i] = malloc(m->len + 1);
            if (v->merges[i]) {
                memcpy(v->merges[i], m->str, m->len + 1);
                v->merge_lens[i] = m->len;
            }
        } else if (!strings && m->type == JSON_ARRAY && m->n == 2 &&
                   m->items[0]->type == JSON_STRING && m->items[1]->type == JSON_STRING) {
            v->merges[i] = merge_from_pair(m, &v->merge_lens[i]);
        } else {
            return gguf_error_set(err, "tokenizer.json line %zu: merge %zu is neither \"a b\" nor "
                                  "[\"a\", \"b\"] like the first", m->line, i);
        }
        if (!v->merges[i])
            return gguf_error_set(err, "out of memory");
        v->n_merges = (int64_t)i + 1;
    }
    return 0;
}

/* Every merge "LEFT RIGHT" (split at the first space after the first byte,
 * as the runtime splits it) must name two tokens of v: gguf-run refuses a
 * vocabulary whose merges name unknown pieces, so it is never written. */
typedef struct piece_ref {
    const char *s;
    size_t      len;
} piece_ref;

static int piece_cmp(const void *a, const void *b)
{
    const piece_ref *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int check_merges(const vocab *v, gguf_error *err)
{
    piece_ref *idx = malloc(((size_t)v->n + 1) * sizeof *idx);
    if (!idx)
        return gguf_error_set(err, "out of memory");
    for (int64_t i = 0; i < v->n; i++)
        idx[i] = (piece_ref){ v->tokens[i], v->lens[i] };
    qsort(idx, (size_t)v->n, sizeof *idx, piece_cmp);
    int rc = 0;
    for (int64_t r = 0; r < v->n_merges && !rc; r++) {
        const char *s = v->merges[r];
        size_t len = v->merge_lens[r];
        const char *sp = len > 1 ? memchr(s + 1, ' ', len - 1) : NULL;
        if (!sp) {
            rc = gguf_error_set(err, "tokenizer.json: merge %" PRId64 " \"%.64s\" is not two pieces",
                                r, s);
            break;
        }
        piece_ref parts[2] = { { s, (size_t)(sp - s) }, { sp + 1, len - (size_t)(sp - s) - 1 } };
        for (int k = 0; k < 2 && !rc; k++)
            if (!bsearch(&parts[k], idx, (size_t)v->n, sizeof *idx, piece_cmp))
                rc = gguf_error_set(err, "tokenizer.json: merge %" PRId64 " \"%.64s\" names "
                                    "\"%.*s\", which is not a token", r, s,
                                    (int)(parts[k].len > 64 ? 64 : parts[k].len), parts[k].s);
    }
    free(idx);
    return rc;
}

int vocab_from_bpe_json(vocab *v, const json_value *tj, int64_t n_vocab, gguf_error *err)
{
    id_table t;
    const char *pre = tokjson_pre(tj, err);
    if (!pre || id_table_build(&t, tj, err))
        return -1;
    if (n_vocab < 0)
        n_vocab = t.n;
    int rc = -1;
    if (n_vocab < t.n || n_vocab > MAX_VOCAB) {
        gguf_error_set(err, "tokenizer.json has token id %" PRId64 " but the vocabulary size is %"
                       PRId64, t.n - 1, n_vocab);
        goto done;
    }
    if (vocab_alloc(v, n_vocab, false)) {
        gguf_error_set(err, "out of memory");
        goto done;
    }
    v->bpe = true;
    v->pre = pre;
    for (int64_t i = 0; i < n_vocab; i++) {
        char pad[32];
        if (i >= t.n || !t.text[i]) {
            int len = snprintf(pad, sizeof pad, "[PAD%" PRId64 "]", i);
            v->types[i] = GGUF_TOKEN_UNUSED;
            if (vocab_set(v, i, pad, (size_t)len))
                goto oom;
            continue;
        }
        if (vocab_set(v, i, t.text[i], t.len[i]))
            goto oom;
        v->types[i] = GGUF_TOKEN_NORMAL;
        if (!t.added[i])
            continue;
        /* An added token: control when special or when it looks special,
         * else user-defined with SentencePiece spaces made plain. */
        if (json_true(json_get(t.added[i], "special")) || tokjson_looks_special(v->tokens[i]))
            v->types[i] = GGUF_TOKEN_CONTROL;
        else {
            v->types[i] = GGUF_TOKEN_USER_DEFINED;
            v->lens[i] = unescape_spaces(v->tokens[i], v->lens[i]);
        }
    }
    rc = load_merges(v, tj, err) || check_merges(v, err) ? -1 : 0;
    goto done;
oom:
    gguf_error_set(err, "out of memory");
done:
    if (rc)
        vocab_free(v);
    id_table_free(&t);
    return rc;
}

/* ------------------------------------------------------------------------
 * SentencePiece-style BPE (LlamaHfVocab)
 * ------------------------------------------------------------------------ */

static bool is_byte_piece(const char *t, size_t len)
{
    static const char hex[] = "0123456789abcdefABCDEF";
    return len == 6 && !strncmp(t, "<0x", 3) && t[5] == '>' && t[3] && t[4] &&
           strchr(hex, t[3]) && strchr(hex, t[4]);
}

/* The id of the token whose text is s (NULL: none), or -1. */
static int64_t find_text(const id_table *t, const char *s)
{
    for (int64_t i = 0; s && i < t->n; i++)
        if (t->text[i] && !strcmp(t->text[i], s))
            return i;
    return -1;
}

static const char *entry_text(const json_value *e)
{
    return json_str(e) ? json_str(e) : json_str(json_get(e, "content"));
}

/* transformers' all_special_ids: the *_token entries of tokenizer_config
 * and its additional_special_tokens, as ids. */
static int special_ids(const id_table *t, const json_value *tok_config, bool *special)
{
    static const char *const keys[] = { "bos_token", "eos_token", "unk_token", "sep_token",
                                        "pad_token", "cls_token", "mask_token" };
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        int64_t id = find_text(t, entry_text(json_get(tok_config, keys[k])));
        if (id >= 0)
            special[id] = true;
    }
    const json_value *extra = json_get(tok_config, "additional_special_tokens");
    for (size_t i = 0; extra && extra->type == JSON_ARRAY && i < extra->n; i++) {
        int64_t id = find_text(t, entry_text(extra->items[i]));
        if (id >= 0)
            special[id] = true;
    }
    return 0;
}

int vocab_from_spm_json(vocab *v, const json_value *tj, const json_value *tok_config,
                        gguf_error *err)
{
    id_table t;
    if (id_table_build(&t, tj, err))
        return -1;
    int rc = -1;
    int64_t base = t.n_model, n_added = 0;
    bool *special = calloc((size_t)t.n + 1, sizeof *special);
    if (!special)
        goto oom;
    special_ids(&t, tok_config, special);
    for (int64_t i = base; i < t.n; i++)
        n_added += t.added[i] != NULL;
    if (vocab_alloc(v, base + n_added, true))
        goto oom;
    /* base pieces by id, then the added tokens past them in id order */
    int64_t out = 0;
    for (int64_t i = 0; i < t.n; i++) {
        if (i < base && !t.text[i]) {
            gguf_error_set(err, "tokenizer.json: no token has id %" PRId64 " (of %" PRId64 ")",
                           i, base);
            goto done;
        }
        if (i >= base && !t.added[i])
            continue;
        if (vocab_set(v, out, t.text[i], t.len[i]))
            goto oom;
        v->scores[out] = -1000.0f;
        if (i < base && is_byte_piece(t.text[i], t.len[i]))
            v->types[out] = GGUF_TOKEN_BYTE;
        else if (special[i])
            v->types[out] = GGUF_TOKEN_CONTROL;
        else
            v->types[out] = i < base ? GGUF_TOKEN_NORMAL : GGUF_TOKEN_USER_DEFINED;
        out++;
    }
    rc = 0;
    goto done;
oom:
    gguf_error_set(err, "out of memory");
done:
    if (rc)
        vocab_free(v);
    free(special);
    id_table_free(&t);
    return rc;
}

/* ------------------------------------------------------------------------
 * Gemma 4 (Gemma4Model.set_vocab)
 * ------------------------------------------------------------------------ */

int vocab_from_gemma4_json(vocab *v, const json_value *tj, const json_value *tok_config,
                           gguf_error *err)
{
    if (tokjson_kind(tj) != TOKJSON_SPM_BPE)
        return gguf_error_set(err, "tokenizer.json: a Gemma 4 vocabulary is read as BPE with "
                              "byte_fallback and a Sequence decoder (llama.cpp's LlamaHfVocab); "
                              "this one is not");
    if (vocab_from_spm_json(v, tj, tok_config, err))
        return -1;
    /* rendered as text always, so that a chat parser sees them */
    static const char *const visible[] = { "<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>",
                                           "<|tool_response>", "<tool_response|>", "<|\"|>" };
    for (int64_t i = 0; i < v->n; i++)
        for (size_t k = 0; k < sizeof visible / sizeof *visible; k++)
            if (!strcmp(v->tokens[i], visible[k]))
                v->types[i] = GGUF_TOKEN_USER_DEFINED;
    v->bpe = true;
    v->model = "gemma4";
    v->no_pre = true;
    if (load_merges(v, tj, err) || check_merges(v, err)) {
        vocab_free(v);
        return -1;
    }
    return 0;
}
