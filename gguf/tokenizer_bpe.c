/*
 * tokenizer_bpe.c — byte-level BPE tokenization of one text fragment, as
 * llama.cpp's llm_tokenizer_bpe does it, with every pre-tokenizer that
 * tokenizer.ggml.pre can name.
 *
 * 1. Pre-tokenizing: the fragment (as code points; bad UTF-8 bytes become
 *    U+FFFD) starts as one word. Each regex of the pre-tokenizer, in order,
 *    splits every current word into its matches AND the unmatched text
 *    between them (nothing is dropped). Matching follows llama.cpp's
 *    unicode_regex_split:
 *    - the GPT-2 and Llama-3 patterns are hand-written scanners (llama.cpp
 *      runs its own code for them, with real Unicode classes);
 *    - a pattern using \p{L} \p{N} \p{P} \p{M} \p{S} runs on a "collapsed"
 *      copy of the text with one byte per code point: ASCII as itself,
 *      White_Space as \v, otherwise a byte per category (0xD1 number, 0xD2
 *      letter, 0xD3 punctuation, 0xD4 mark, 0xD5 symbol, 0xD0 other); each
 *      \p{X} becomes a class of its byte plus its ASCII members. PCRE2 runs
 *      it in byte mode (ASCII \s);
 *    - any other pattern runs on the code points themselves (PCRE2 UTF mode
 *      without UCP, so \s is ASCII), non-ASCII White_Space replaced by \v.
 *    Patterns are not JIT-compiled: the interpreter keeps its backtracking
 *    state on the heap (no stack limit on long words) and is clean under
 *    valgrind, which JIT code is not.
 * 2. Each word's UTF-8 bytes are spelled in GPT-2's byte alphabet and split
 *    into characters; adjacent pairs merge by lowest merge rank (leftmost on
 *    ties) until no ranked pair is left. A word that is a token as a whole
 *    is taken as is when the pre-tokenizer ignores merges (llama3, tekken).
 * 3. A final symbol that is not a token falls back to tokens of its single
 *    bytes, where they exist.
 * Gemma 4 ("gemma4": tokenizer.ggml.model or pre) is SentencePiece-style
 * BPE: tokenizer.c has turned spaces into U+2581, the only split is at runs
 * of newlines (a run that is a token is taken whole), words merge as raw
 * UTF-8, and the byte fallback tokens are <0xNN>.
 *
 * Not for: special tokens (tokenizer.c), the class data (unicode.c).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer_impl.h"
#include "unicode.h"

/* ---- the pre-tokenizers --------------------------------------------------- */

enum split_kind { SPLIT_REGEX, SPLIT_GPT2, SPLIT_LLAMA3, SPLIT_NEWLINES, SPLIT_KIMI };

typedef struct split_rule {
    enum split_kind kind;
    const char     *pattern; /* for SPLIT_GPT2/LLAMA3: what the scanner implements */
} split_rule;

#define GPT2_RULE { SPLIT_GPT2, "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)" }
#define LLAMA3_RULE { SPLIT_LLAMA3, "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }
/* Gemma 4: runs of '\n' and runs of anything else (llama.cpp's own scanner) */
#define NEWLINES_RULE { SPLIT_NEWLINES, "[^\\n]+|[\\n]+" }
/* Kimi K2 (tokenization_kimi.py's pat_str; llama.cpp runs its own scanner) */
#define KIMI_RULE { SPLIT_KIMI, "[\\p{Han}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|...|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }
#define RX(p) { SPLIT_REGEX, p }
#define END { SPLIT_REGEX, NULL }

static const split_rule rules_default[] = {
    RX("[\\p{P}\\$\\+<=>\\^~\\|]+"), GPT2_RULE, RX("\\p{N}+"), RX("[0-9][0-9][0-9]"), END
};
static const split_rule rules_llama3[] = { LLAMA3_RULE, END };
static const split_rule rules_kimi_k2[] = { KIMI_RULE, END };
static const split_rule rules_deepseek_llm[] = {
    RX("[\r\n]"),
    RX("\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+"),
    RX("\\s?[!-/:-~！-／：-～‘-‟　-。]+"),
    RX("\\s+$"),
    RX("[一-龥ࠀ-一가-퟿]+"),
    RX("\\p{N}+"),
    END
};
static const split_rule rules_deepseek_v3[] = {
    RX("\\p{N}{1,3}"),
    RX("[一-龥぀-ゟ゠-ヿ]+"),
    RX("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"),
    END
};
static const split_rule rules_deepseek_coder[] = {
    RX("[\r\n]"), RX("\\s?\\p{L}+"), RX("\\s?\\p{P}+"), RX("[一-龥ࠀ-一가-퟿]+"), RX("\\p{N}"), END
};
static const split_rule rules_falcon[] = {
    RX("[\\p{P}\\$\\+<=>\\^~\\|`]+"), GPT2_RULE, RX("[0-9][0-9][0-9]"), END
};
static const split_rule rules_starcoder[] = { RX("\\p{N}"), GPT2_RULE, END };
static const split_rule rules_gpt2[] = { GPT2_RULE, END };
static const split_rule rules_qwen2[] = {
    RX("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    END
};
/* Qwen 3.5: qwen2's, with marks counted as letters ([\p{L}\p{M}]+, and
 * excluded from the punctuation branch); no scanner of llama.cpp's own, so
 * it runs on the collapsed text like any \p{} pattern. */
static const split_rule rules_qwen35[] = {
    RX("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    END
};
/* Gemma 4 (tokenizer.ggml.model "gemma4", whatever tokenizer.ggml.pre
 * says): SentencePiece-style BPE on the U+2581-escaped text, split only at
 * newline runs; words are merged as raw UTF-8, not in GPT-2's alphabet. */
static const split_rule rules_gemma4[] = { NEWLINES_RULE, END };
static const split_rule rules_bloom[] = { RX(" ?[^(\\s|.,!?…。，、।۔،)]+"), END };
static const split_rule rules_viking[] = { RX(" ?[^(\\s|.,!?…。，、।۔،)]+"), RX("\\p{N}"), END };
static const split_rule rules_tekken[] = {
    RX("[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    END
};
/* o200k (GPT-4o): llama.cpp's form of tokenizer.json's regex, with
 * [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}] written as "a
 * letter that is not a-z" and "a letter that is not A-Z" (tekken's, plus the
 * contractions and digit triples). On the collapsed text every non-ASCII
 * letter is one byte that is neither, so it counts as upper and lower case
 * at once ("aÉ" is one word, "ÉCOLE" two), and a mark is no letter at all:
 * what llama.cpp computes, not what tiktoken does. */
static const split_rule rules_gpt4o[] = {
    RX("[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    END
};
static const split_rule rules_chameleon[] = {
    RX("<sentinel:[0-9]+>"),                   /* sentinel tokens */
    RX("(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z"), /* image tokens */
    RX("([\\t\\n]|    |  )"),
    RX("\\p{N}"),
    RX("[\\p{P}!-/:-@\\[-`{-~]"),
    GPT2_RULE,
    END
};

/* tokenizer.ggml.pre names -> rules, as llama.cpp groups them. */
static const struct {
    const char       *name;
    const split_rule *rules;
} pre_tokenizers[] = {
    { "default", rules_default },
    { "llama3", rules_llama3 }, { "llama-v3", rules_llama3 }, { "llama-bpe", rules_llama3 },
    { "falcon3", rules_llama3 }, { "dbrx", rules_llama3 }, { "smaug-bpe", rules_llama3 },
    { "chatglm-bpe", rules_llama3 }, { "glm4", rules_llama3 },
    { "deepseek-llm", rules_deepseek_llm }, { "deepseek-coder", rules_deepseek_coder },
    { "deepseek-v3", rules_deepseek_v3 },
    { "falcon", rules_falcon },
    { "starcoder", rules_starcoder }, { "refact", rules_starcoder }, { "command-r", rules_starcoder },
    { "smollm", rules_starcoder }, { "codeshell", rules_starcoder }, { "exaone", rules_starcoder },
    { "minerva-7b", rules_starcoder },
    { "gpt-2", rules_gpt2 }, { "phi-2", rules_gpt2 }, { "jina-es", rules_gpt2 },
    { "jina-de", rules_gpt2 }, { "gigachat", rules_gpt2 }, { "jina-v1-en", rules_gpt2 },
    { "jina-v2-es", rules_gpt2 }, { "jina-v2-de", rules_gpt2 }, { "jina-v2-code", rules_gpt2 },
    { "roberta-bpe", rules_gpt2 }, { "mpt", rules_gpt2 }, { "olmo", rules_gpt2 }, { "jais", rules_gpt2 },
    { "qwen2", rules_qwen2 }, { "deepseek-r1-qwen", rules_qwen2 }, { "megrez", rules_qwen2 },
    { "stablelm2", rules_qwen2 },
    { "qwen35", rules_qwen35 },
    { "gemma4", rules_gemma4 },
    { "poro-chat", rules_bloom }, { "bloom", rules_bloom }, { "gpt3-finnish", rules_bloom },
    { "viking", rules_viking },
    { "tekken", rules_tekken },
    { "gpt-4o", rules_gpt4o }, { "llama4", rules_gpt4o }, { "kanana2", rules_gpt4o },
    { "minimax-m2", rules_gpt4o },
    { "chameleon", rules_chameleon },
    { "kimi-k2", rules_kimi_k2 },
};

/* A rule ready to run. */
typedef struct compiled_rule {
    enum split_kind kind;
    bool            collapsed; /* runs on the collapsed text */
    pcre2_code     *re;
} compiled_rule;

struct bpe_state {
    compiled_rule rules[8];
    size_t        n_rules;
    bool          any_collapsed, any_utf; /* which views of the text are needed */
    bool          byte_encode; /* words spelled in GPT-2's byte alphabet (all but gemma4) */
    char          byte_utf8[256][2]; /* GPT-2 alphabet spelling of each byte */
    uint8_t       byte_utf8_len[256];
};

/* ---- compiling -------------------------------------------------------------- */

static const char *const category_names = "NLPMS"; /* \p{X} handled by collapsing */
static const unsigned char category_byte[] = { 0xD1, 0xD2, 0xD3, 0xD4, 0xD5 };
/* The ASCII members of each category, as class contents. */
static const char *const category_ascii[] = {
    "0-9", "A-Za-z", "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}", "", "\\$\\+<->\\^`\\|"
};

static bool uses_categories(const char *p)
{
    for (const char *c = category_names; *c; c++) {
        char pat[6] = { '\\', 'p', '{', *c, '}', 0 };
        if (strstr(p, pat))
            return true;
    }
    return false;
}

/* Rewrites a pattern for the collapsed text: \p{X} becomes [<byte><ascii>]
 * (or just its contents inside a bracket expression). Brackets are tracked
 * as llama.cpp tracks them: '[' not preceded by '\' opens, ']' not preceded
 * by '\' closes. */
static char *collapse_pattern(const char *p)
{
    size_t n = strlen(p);
    char *out = malloc(n * 8 + 1), *o = out;
    if (!out)
        return NULL;
    bool inside = false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '[' && (i == 0 || p[i - 1] != '\\')) {
            *o++ = '[';
            inside = true;
            continue;
        }
        if (inside && p[i] == ']' && p[i - 1] != '\\') {
            *o++ = ']';
            inside = false;
            continue;
        }
        const char *cat = p[i] == '\\' && i + 4 < n && p[i + 1] == 'p' && p[i + 2] == '{' && p[i + 4] == '}'
                              ? strchr(category_names, p[i + 3]) : NULL;
        if (cat && *cat) {
            size_t k = (size_t)(cat - category_names);
            if (!inside)
                *o++ = '[';
            *o++ = (char)category_byte[k];
            o = stpcpy(o, category_ascii[k]);
            if (!inside)
                *o++ = ']';
            i += 4;
            continue;
        }
        *o++ = p[i];
    }
    *o = 0;
    return out;
}

int gguf_vocab_bpe_init(gguf_vocab *v, const char *pre, gguf_error *err)
{
    const split_rule *rules = NULL;
    for (size_t i = 0; i < sizeof pre_tokenizers / sizeof *pre_tokenizers; i++)
        if (!strcmp(pre, pre_tokenizers[i].name))
            rules = pre_tokenizers[i].rules;
    if (!rules)
        return gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "unknown pre-tokenizer \"%s\" (tokenizer.ggml.pre)", pre);
    struct bpe_state *st = calloc(1, sizeof *st);
    if (!st)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
    v->bpe = st;
    st->byte_encode = rules != rules_gemma4;
    for (int b = 0; b < 256; b++) {
        char u[4];
        size_t n = gguf_utf8_encode(gguf_byte_to_cp((uint8_t)b), u);
        memcpy(st->byte_utf8[b], u, n);
        st->byte_utf8_len[b] = (uint8_t)n;
    }
    for (const split_rule *r = rules; r->pattern; r++) {
        compiled_rule *c = &st->rules[st->n_rules++];
        c->kind = r->kind;
        if (r->kind != SPLIT_REGEX)
            continue;
        int errcode;
        PCRE2_SIZE erroff;
        c->collapsed = uses_categories(r->pattern);
        if (c->collapsed) {
            char *cp = collapse_pattern(r->pattern);
            if (!cp)
                return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
            c->re = pcre2_compile((PCRE2_SPTR)cp, PCRE2_ZERO_TERMINATED, PCRE2_DOLLAR_ENDONLY,
                                  &errcode, &erroff, NULL);
            free(cp);
            st->any_collapsed = true;
        } else {
            c->re = pcre2_compile((PCRE2_SPTR)r->pattern, PCRE2_ZERO_TERMINATED,
                                  PCRE2_UTF | PCRE2_DOLLAR_ENDONLY, &errcode, &erroff, NULL);
            st->any_utf = true;
        }
        if (!c->re) {
            PCRE2_UCHAR msg[120];
            pcre2_get_error_message(errcode, msg, sizeof msg);
            return gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "pre-tokenizer \"%s\": cannot compile its regex: %s", pre,
                                  (const char *)msg);
        }
    }
    return 0;
}

void gguf_vocab_bpe_free(gguf_vocab *v)
{
    if (!v->bpe)
        return;
    for (size_t i = 0; i < v->bpe->n_rules; i++)
        pcre2_code_free(v->bpe->rules[i].re);
    free(v->bpe);
    v->bpe = NULL;
}

/* ---- splitting ---------------------------------------------------------------- */

/* The fragment as code points with their classes. */
typedef struct text_cps {
    const uint32_t *cp;
    const unsigned *cls;
    size_t          n;
} text_cps;

/* A list of word lengths (in code points), covering the text in order. */
typedef struct word_list {
    size_t *len;
    size_t  n, cap;
} word_list;

static int word_push(word_list *w, size_t len)
{
    if (len == 0)
        return 0;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        size_t *l = realloc(w->len, cap * sizeof *l);
        if (!l)
            return -1;
        w->len = l;
        w->cap = cap;
    }
    w->len[w->n++] = len;
    return 0;
}

/* Class of position i within the word [lo, hi); 0 outside it. */
static unsigned cls_at(const text_cps *t, size_t i, size_t hi)
{
    return i < hi ? t->cls[i] : 0;
}

#define LNS (UCP_LETTER | UCP_NUMBER | UCP_SPACE)

/* Length of the GPT-2 regex's match at pos (always >= 1):
 * 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * with an unmatched code point taken alone. */
static size_t scan_gpt2(const text_cps *t, size_t pos, size_t hi)
{
    uint32_t c = t->cp[pos];
    if (c == '\'' && pos + 1 < hi) {
        uint32_t a = t->cp[pos + 1];
        if (a == 's' || a == 't' || a == 'm' || a == 'd')
            return 2;
        if (pos + 2 < hi) {
            uint32_t b = t->cp[pos + 2];
            if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
                return 3;
        }
    }
    size_t start = pos + (c == ' '); /* the optional leading space */
    unsigned f = cls_at(t, start, hi);
    size_t p = start;
    if (f & UCP_LETTER) {
        while (cls_at(t, p, hi) & UCP_LETTER)
            p++;
        return p - pos;
    }
    if (f & UCP_NUMBER) {
        while (cls_at(t, p, hi) & UCP_NUMBER)
            p++;
        return p - pos;
    }
    if (f && !(f & LNS)) {
        while (cls_at(t, p, hi) && !(cls_at(t, p, hi) & LNS))
            p++;
        return p - pos;
    }
    size_t ws = 0;
    while (cls_at(t, pos + ws, hi) & UCP_SPACE)
        ws++;
    if (ws > 1 && pos + ws < hi)
        return ws - 1; /* leave the last space to the word that follows */
    return ws ? ws : 1;
}

/* Length of the run at pos of '\n' or of anything but '\n' (always >= 1):
 * [^\n]+|[\n]+ */
static size_t scan_newlines(const text_cps *t, size_t pos, size_t hi)
{
    bool nl = t->cp[pos] == '\n';
    size_t p = pos + 1;
    while (p < hi && (t->cp[p] == '\n') == nl)
        p++;
    return p - pos;
}

static uint32_t ascii_lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* Length of the contraction (?i:'s|'t|'re|'ve|'m|'ll|'d) at pos, or 0. */
static size_t contraction_len(const text_cps *t, size_t pos, size_t hi)
{
    if (pos + 1 >= hi || t->cp[pos] != '\'')
        return 0;
    uint32_t a = ascii_lower(t->cp[pos + 1]);
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 2;
    if (pos + 2 < hi) {
        uint32_t b = ascii_lower(t->cp[pos + 2]);
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
            return 3;
    }
    return 0;
}

/* The Llama-3 scanner's last branches at pos, shared with Kimi K2's:
 * \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * (the punctuation branch's class test: classless ones too when
 * classless_punct, as Llama 3's scanner takes them; Kimi's leaves them to
 * the whitespace branch). */
static size_t scan_llama3_tail(const text_cps *t, size_t pos, size_t hi, bool classless_punct)
{
    uint32_t c = t->cp[pos];
    unsigned f = t->cls[pos];
    size_t p = pos;
    if (f & UCP_NUMBER) {
        while (p - pos < 3 && (cls_at(t, p, hi) & UCP_NUMBER))
            p++;
        return p - pos;
    }
    unsigned f2 = c == ' ' ? cls_at(t, pos + 1, hi) : f;
    if ((classless_punct || f2) && !(f2 & LNS)) {
        p = pos + (c == ' ');
        while (cls_at(t, p, hi) && !(cls_at(t, p, hi) & LNS))
            p++;
        while (p < hi && (t->cp[p] == '\r' || t->cp[p] == '\n'))
            p++;
        return p - pos;
    }
    size_t ws = 0, last_nl = 0;
    while (cls_at(t, pos + ws, hi) & UCP_SPACE) {
        if (t->cp[pos + ws] == '\r' || t->cp[pos + ws] == '\n')
            last_nl = ws + 1;
        ws++;
    }
    if (last_nl)
        return last_nl; /* \s*[\r\n]+ */
    if (ws > 1 && pos + ws < hi)
        return ws - 1;
    return ws ? ws : 1;
}

/* Length of the Llama-3 regex's match at pos (always >= 1):
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 *  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * following llama.cpp's scanner where it differs from the regex: a lone
 * space at the end of a word is taken by the punctuation branch. */
static size_t scan_llama3(const text_cps *t, size_t pos, size_t hi)
{
    uint32_t c = t->cp[pos];
    unsigned f = t->cls[pos];
    const size_t k = contraction_len(t, pos, hi);
    if (k)
        return k;
    if (c != '\r' && c != '\n' && !(f & UCP_NUMBER) &&
        ((f & UCP_LETTER) || (cls_at(t, pos + 1, hi) & UCP_LETTER))) {
        size_t p = pos + 1;
        while (cls_at(t, p, hi) & UCP_LETTER)
            p++;
        return p - pos;
    }
    return scan_llama3_tail(t, pos, hi, true);
}

/* llama.cpp's unicode_cpt_is_han: the CJK ideograph blocks */
static bool is_han(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2EBEF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* A letter that is not Han at i (within the word). */
static bool kimi_letter(const text_cps *t, size_t i, size_t hi)
{
    return (cls_at(t, i, hi) & UCP_LETTER) && !is_han(t->cp[i]);
}

/* Length of Kimi K2's match at pos (always >= 1), as llama.cpp's
 * unicode_regex_split_custom_kimi_k2 scans: a Han run; an optional
 * non-letter, non-digit lead (not \r \n) and a run of non-Han letters with
 * an optional contraction; up to 3 digits; punctuation as Llama 3's; then
 * whitespace as Llama 3's. */
static size_t scan_kimi(const text_cps *t, size_t pos, size_t hi)
{
    uint32_t c = t->cp[pos];
    unsigned f = t->cls[pos];
    size_t p = pos;
    if (is_han(c)) {
        while (p < hi && is_han(t->cp[p]))
            p++;
        return p - pos;
    }
    bool nl_or_ln = c == '\r' || c == '\n' || (f & (UCP_LETTER | UCP_NUMBER));
    if (kimi_letter(t, pos, hi) || (!nl_or_ln && kimi_letter(t, pos + 1, hi))) {
        bool lead = !nl_or_ln;
        p += lead;
        bool letters = false;
        while (kimi_letter(t, p, hi)) {
            letters = true;
            p++;
        }
        if (letters || (!lead && kimi_letter(t, p, hi))) {
            if (!letters)
                p++;
            while (kimi_letter(t, p, hi))
                p++;
            return p + contraction_len(t, p, hi) - pos;
        }
    }
    return scan_llama3_tail(t, pos, hi, false);
}

/* A PCRE2 subject: the bytes, and the code point <-> byte offset maps
 * (NULL for the collapsed text, where they are the identity). */
typedef struct subject {
    const char   *s;
    const size_t *cp_to_byte; /* n + 1 entries */
    const size_t *byte_to_cp; /* valid at code point starts */
} subject;

static size_t to_byte(const subject *sj, size_t cp) { return sj->cp_to_byte ? sj->cp_to_byte[cp] : cp; }
static size_t to_cp(const subject *sj, size_t b) { return sj->byte_to_cp ? sj->byte_to_cp[b] : b; }

/* Splits the word [lo, hi) into matches of re and the gaps between them,
 * stepping over empty matches as std::regex_iterator does. */
static int split_regex(const compiled_rule *r, const subject *sj, pcre2_match_data *md,
                       size_t lo, size_t hi, word_list *out)
{
    size_t base = to_byte(sj, lo), len = to_byte(sj, hi) - base;
    PCRE2_SPTR s = (PCRE2_SPTR)sj->s + base;
    size_t prev = 0, start = 0;
    uint32_t opts = 0;
    while (start <= len) {
        int rc = pcre2_match(r->re, s, len, start, opts | PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc < 0) {
            if (opts) { /* no non-empty match right here: search on from the next character */
                opts = 0;
                if (start >= len)
                    break;
                start = to_byte(sj, to_cp(sj, base + start) + 1) - base;
                continue;
            }
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t ms = ov[0], me = ov[1];
        if (ms > prev && word_push(out, to_cp(sj, base + ms) - to_cp(sj, base + prev)))
            return -1;
        if (me > ms && word_push(out, to_cp(sj, base + me) - to_cp(sj, base + ms)))
            return -1;
        if (ms > prev || me > ms)
            prev = me;
        start = me;
        opts = me == ms ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0;
    }
    if (prev < len && word_push(out, hi - to_cp(sj, base + prev)))
        return -1;
    return 0;
}

/* ---- merging ------------------------------------------------------------------- */

typedef struct bpe_word {
    const gguf_vocab *v;
    const char       *s;
    symbol           *sym;
    bigram_queue      queue;
} bpe_word;

static int try_merge(bpe_word *w, int32_t left, int32_t right)
{
    if (left < 0 || right < 0)
        return 0;
    int32_t rank = gguf_vocab_merge_rank(w->v, w->sym[left].id, w->sym[right].id);
    if (rank < 0)
        return 0;
    return gguf_bigram_push(&w->queue, (bigram){ -(double)rank, left, right,
                                            w->sym[left].n + w->sym[right].n });
}

/* Tokens of one word already spelled in the byte alphabet (gemma4: as raw
 * UTF-8). */
static int merge_word(const gguf_vocab *v, const char *s, size_t len, symbol *sym, id_list *out)
{
    if (v->ignore_merges) {
        int32_t id = gguf_vocab_find(v, s, len);
        if (id >= 0)
            return gguf_id_list_push(out, id);
    }
    size_t n_nl = 0;
    while (n_nl < len && s[n_nl] == '\n')
        n_nl++;
    if (!v->bpe->byte_encode && len && n_nl == len) {
        /* gemma4: a run of newlines that is a token is taken whole */
        int32_t id = gguf_vocab_find(v, s, len);
        if (id >= 0)
            return gguf_id_list_push(out, id);
    }
    bpe_word w = { v, s, sym, { 0 } };
    int32_t n_sym = 0;
    for (size_t off = 0; off < len; n_sym++) {
        size_t n = gguf_utf8_seq_len((unsigned char)s[off]);
        if (n > len - off)
            n = len - off;
        sym[n_sym] = (symbol){ n_sym - 1, off + n == len ? -1 : n_sym + 1, off, n,
                               gguf_vocab_find(v, s + off, n) };
        off += n;
    }
    int rc = -1;
    for (int32_t i = 1; i < n_sym; i++)
        if (try_merge(&w, i - 1, i))
            goto done;
    bigram b;
    while (gguf_bigram_pop(&w.queue, &b)) {
        symbol *l = &sym[b.left], *r = &sym[b.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != b.size)
            continue;
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0)
            sym[r->next].prev = b.left;
        l->id = gguf_vocab_find(v, s + l->off, l->n);
        if (try_merge(&w, l->prev, b.left) || try_merge(&w, b.left, l->next))
            goto done;
    }
    for (int32_t i = n_sym ? 0 : -1; i >= 0; i = sym[i].next) {
        if (sym[i].id >= 0) {
            if (gguf_id_list_push(out, sym[i].id))
                goto done;
            continue;
        }
        for (size_t k = 0; k < sym[i].n; k++) {
            /* byte fallback: the byte's own token, or (gemma4) <0xNN> */
            static const char hex[] = "0123456789ABCDEF";
            unsigned char byte = (unsigned char)s[sym[i].off + k];
            char name[6] = { '<', '0', 'x', hex[byte >> 4], hex[byte & 15], '>' };
            int32_t id = v->bpe->byte_encode ? gguf_vocab_find(v, s + sym[i].off + k, 1)
                                             : gguf_vocab_find(v, name, 6);
            if (id >= 0 && gguf_id_list_push(out, id))
                goto done;
        }
    }
    rc = 0;
done:
    free(w.queue.items);
    return rc;
}

/* ---- one fragment ------------------------------------------------------------------ */

/* The code point the UTF-mode regexes see: non-ASCII White_Space as \v
 * (llama.cpp's std::wregex knows only ASCII spaces), and U+FFFD for what
 * PCRE2 cannot take as UTF-8 (surrogates, beyond U+10FFFF; no pattern names
 * them). */
static uint32_t utf_subject_cp(uint32_t c, unsigned cls)
{
    if (c >= 0x80 && (cls & UCP_SPACE))
        return '\v';
    if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
        return UCP_REPLACEMENT;
    return c;
}

/* Splits text into words by the pre-tokenizer's rules. On success *cp_out
 * holds the text's code points (*n_out of them; the caller frees it) and
 * words their lengths in order. 0, or -1 when out of memory. */
static int pre_tokenize(const struct bpe_state *st, const char *text, size_t len, uint32_t **cp_out,
                        size_t *n_out, word_list *words)
{
    int rc = -1;
    size_t n = 0;
    uint32_t *cp = malloc((len + 1) * sizeof *cp);
    unsigned *cls = malloc((len + 1) * sizeof *cls);
    char *collapsed = NULL, *utf = NULL;
    size_t *cp_to_byte = NULL, *byte_to_cp = NULL;
    word_list next = { 0 };
    pcre2_match_data *md = pcre2_match_data_create(32, NULL);
    if (!cp || !cls || !md)
        goto done;
    for (size_t pos = 0; pos < len; n++) {
        cp[n] = gguf_utf8_decode(text, len, &pos);
        cls[n] = gguf_unicode_class(cp[n]);
    }
    text_cps t = { cp, cls, n };

    /* The two views of the text the regexes run on. */
    subject collapsed_sj = { 0 }, utf_sj = { 0 };
    if (st->any_collapsed) {
        if (!(collapsed = malloc(n + 1)))
            goto done;
        for (size_t i = 0; i < n; i++) {
            unsigned c = cls[i] & UCP_CATEGORY;
            collapsed[i] = cp[i] < 128 ? (char)cp[i]
                         : (cls[i] & UCP_SPACE) ? '\v'
                         : c == UCP_NUMBER ? (char)0xD1 : c == UCP_LETTER ? (char)0xD2
                         : c == UCP_PUNCT ? (char)0xD3 : c == UCP_MARK ? (char)0xD4
                         : c == UCP_SYMBOL ? (char)0xD5 : (char)0xD0;
        }
        collapsed_sj.s = collapsed;
    }
    if (st->any_utf) {
        /* Two passes: the UTF-8 length first, as bad bytes grow into U+FFFD. */
        size_t nb = 0;
        char u[4];
        for (size_t i = 0; i < n; i++)
            nb += gguf_utf8_encode(utf_subject_cp(cp[i], cls[i]), u);
        utf = malloc(nb + 1);
        cp_to_byte = malloc((n + 1) * sizeof *cp_to_byte);
        byte_to_cp = malloc((nb + 1) * sizeof *byte_to_cp);
        if (!utf || !cp_to_byte || !byte_to_cp)
            goto done;
        nb = 0;
        for (size_t i = 0; i < n; i++) {
            cp_to_byte[i] = nb;
            byte_to_cp[nb] = i;
            nb += gguf_utf8_encode(utf_subject_cp(cp[i], cls[i]), utf + nb);
        }
        cp_to_byte[n] = nb;
        byte_to_cp[nb] = n;
        utf_sj = (subject){ utf, cp_to_byte, byte_to_cp };
    }

    words->n = 0;
    if (word_push(words, n))
        goto done;
    for (size_t r = 0; r < st->n_rules; r++) {
        const compiled_rule *rule = &st->rules[r];
        next.n = 0;
        size_t lo = 0;
        for (size_t w = 0; w < words->n; w++) {
            size_t hi = lo + words->len[w];
            if (rule->kind == SPLIT_REGEX) {
                if (split_regex(rule, rule->collapsed ? &collapsed_sj : &utf_sj, md, lo, hi, &next))
                    goto done;
            } else {
                for (size_t p = lo; p < hi;) {
                    size_t k = rule->kind == SPLIT_GPT2     ? scan_gpt2(&t, p, hi)
                             : rule->kind == SPLIT_LLAMA3   ? scan_llama3(&t, p, hi)
                             : rule->kind == SPLIT_KIMI     ? scan_kimi(&t, p, hi)
                                                            : scan_newlines(&t, p, hi);
                    if (word_push(&next, k))
                        goto done;
                    p += k;
                }
            }
            lo = hi;
        }
        word_list swap = *words;
        *words = next;
        next = swap;
    }
    *cp_out = cp;
    *n_out = n;
    cp = NULL;
    rc = 0;
done:
    pcre2_match_data_free(md);
    free(cp);
    free(cls);
    free(collapsed);
    free(utf);
    free(cp_to_byte);
    free(byte_to_cp);
    free(next.len);
    return rc;
}

int gguf_vocab_bpe_words(const gguf_vocab *v, const char *text, size_t len, size_t **lens, size_t *n)
{
    uint32_t *cp = NULL;
    size_t n_cp = 0;
    word_list words = { 0 };
    if (pre_tokenize(v->bpe, text, len, &cp, &n_cp, &words)) {
        free(words.len);
        return -1;
    }
    free(cp);
    /* code points -> bytes of text, decoding as pre_tokenize did */
    size_t pos = 0;
    for (size_t w = 0; w < words.n; w++) {
        size_t start = pos;
        for (size_t k = 0; k < words.len[w]; k++)
            gguf_utf8_decode(text, len, &pos);
        words.len[w] = pos - start;
    }
    *lens = words.len;
    *n = words.n;
    return 0;
}

int gguf_vocab_encode_bpe(const gguf_vocab *v, const char *text, size_t len, id_list *out)
{
    const struct bpe_state *st = v->bpe;
    int rc = -1;
    size_t n = 0;
    uint32_t *cp = NULL;
    char *word = NULL;
    symbol *sym = NULL;
    word_list words = { 0 };
    if (pre_tokenize(st, text, len, &cp, &n, &words))
        goto done;

    /* Each word: its UTF-8 bytes (U+FFFD for bad input bytes) spelled in
     * the byte alphabet, at most 4 * 2 bytes per code point. */
    size_t longest = 0;
    for (size_t w = 0; w < words.n; w++)
        if (words.len[w] > longest)
            longest = words.len[w];
    word = malloc(8 * longest + 1);
    sym = malloc((8 * longest + 1) * sizeof *sym);
    if (!word || !sym)
        goto done;
    size_t lo = 0;
    for (size_t w = 0; w < words.n; w++) {
        size_t wl = 0;
        for (size_t i = lo; i < lo + words.len[w]; i++) {
            char u[4];
            size_t k = gguf_utf8_encode(cp[i], u);
            for (size_t j = 0; j < k; j++) {
                unsigned char b = (unsigned char)u[j];
                if (!st->byte_encode) { /* gemma4: raw UTF-8 */
                    word[wl++] = (char)b;
                    continue;
                }
                memcpy(word + wl, st->byte_utf8[b], st->byte_utf8_len[b]);
                wl += st->byte_utf8_len[b];
            }
        }
        if (merge_word(v, word, wl, sym, out))
            goto done;
        lo += words.len[w];
    }
    rc = 0;
done:
    free(cp);
    free(word);
    free(sym);
    free(words.len);
    return rc;
}
