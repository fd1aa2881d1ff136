/*
 * tokenizer.c — loading and validating a vocabulary, special tokens,
 * encoding's outer loop and token pieces (see tokenizer.h).
 *
 * Encoding follows llama.cpp's llama_vocab::tokenize: the input is first cut
 * at every occurrence of a special token's text (longest texts first; with
 * parse_special false only user-defined tokens), then each remaining text
 * fragment goes through the SPM (tokenizer_spm.c) or BPE (tokenizer_bpe.c)
 * tokenizer on its own, and BOS/EOS are added around the result.
 *
 * Not for: the merge algorithms and the pre-tokenizer (tokenizer_spm.c,
 * tokenizer_bpe.c), UTF-8 and character classes (unicode.c).
 */
#define _GNU_SOURCE /* memmem */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit/arch.h>
#include "special_tokens.h"
#include "tokenizer_impl.h"
#include "unicode.h"

/* ---- small containers ---------------------------------------------------- */

int gguf_id_list_push(id_list *l, int32_t id)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        int32_t *ids = realloc(l->ids, cap * sizeof *ids);
        if (!ids)
            return -1;
        l->ids = ids;
        l->cap = cap;
    }
    l->ids[l->n++] = id;
    return 0;
}

/* a is served before b: higher priority, then the leftmost pair. */
static bool bigram_before(const bigram *a, const bigram *b)
{
    return a->priority > b->priority || (a->priority == b->priority && a->left < b->left);
}

int gguf_bigram_push(bigram_queue *q, bigram b)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        bigram *items = realloc(q->items, cap * sizeof *items);
        if (!items)
            return -1;
        q->items = items;
        q->cap = cap;
    }
    size_t i = q->n++;
    while (i > 0 && bigram_before(&b, &q->items[(i - 1) / 2])) {
        q->items[i] = q->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->items[i] = b;
    return 0;
}

bool gguf_bigram_pop(bigram_queue *q, bigram *out)
{
    if (q->n == 0)
        return false;
    *out = q->items[0];
    bigram last = q->items[--q->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && bigram_before(&q->items[c + 1], &q->items[c]))
            c++;
        if (!bigram_before(&q->items[c], &last))
            break;
        q->items[i] = q->items[c];
        i = c;
    }
    if (q->n)
        q->items[i] = last;
    return true;
}

/* ---- token text hash ------------------------------------------------------ */

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

int32_t gguf_vocab_find(const gguf_vocab *v, const char *s, size_t len)
{
    uint32_t i = (uint32_t)hash_bytes(s, len) & v->slot_mask;
    for (;; i = (i + 1) & v->slot_mask) {
        int32_t id = v->slots[i];
        if (id < 0)
            return -1;
        if (v->tokens[id].len == len && memcmp(tok_text(v, id), s, len) == 0)
            return id;
    }
}

/* Inserts id; returns the id already holding the same text, or -1. */
static int32_t slot_insert(gguf_vocab *v, int32_t id)
{
    const char *s = tok_text(v, id);
    size_t len = v->tokens[id].len;
    uint32_t i = (uint32_t)hash_bytes(s, len) & v->slot_mask;
    for (;; i = (i + 1) & v->slot_mask) {
        int32_t other = v->slots[i];
        if (other < 0) {
            v->slots[i] = id;
            return -1;
        }
        if (v->tokens[other].len == len && memcmp(tok_text(v, other), s, len) == 0)
            return other;
    }
}

static uint64_t merge_key(int32_t left, int32_t right)
{
    return (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
}

static uint32_t merge_slot(uint64_t key, uint32_t mask)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (uint32_t)key & mask;
}

int32_t gguf_vocab_merge_rank(const gguf_vocab *v, int32_t left, int32_t right)
{
    if (!v->merge_keys || left < 0 || right < 0)
        return -1;
    uint64_t key = merge_key(left, right);
    for (uint32_t i = merge_slot(key, v->merge_mask);; i = (i + 1) & v->merge_mask) {
        if (v->merge_keys[i] == key)
            return v->merge_ranks[i];
        if (v->merge_keys[i] == UINT64_MAX)
            return -1;
    }
}

/* ---- loading -------------------------------------------------------------- */


static const char *type_name(uint32_t t)
{
    static const char *const names[] = { "u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                         "bool", "str", "arr", "u64", "i64", "f64" };
    return t < sizeof names / sizeof *names ? names[t] : "unknown";
}

/* Describes kv's type as "arr[i32]" / "u32" for messages. */
static const char *kv_type(const gguf_kv *kv, char buf[32])
{
    if (kv->type == GGUF_VT_ARR)
        snprintf(buf, 32, "arr[%s]", type_name(kv->elem_type));
    else
        snprintf(buf, 32, "%s", type_name(kv->type));
    return buf;
}

static bool is_hex(char c) { return isxdigit((unsigned char)c) != 0; }

/* An optional array that must run parallel to the tokens. */
static int parallel_array(const gguf_file *f, const char *key, uint32_t elem, uint64_t n,
                          const void **data, gguf_error *err)
{
    *data = NULL;
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    if (!kv)
        return 0;
    char tb[32];
    uint64_t count = 0;
    if (kv->type != GGUF_VT_ARR || kv->elem_type != elem ||
        !(*data = gguf_kv_array(kv, elem, &count)))
        return gguf_error_set(err, "%s is %s, expected arr[%s]", key, kv_type(kv, tb),
                              type_name(elem));
    if (count != n)
        return gguf_error_set(err, "%s has %llu elements but there are %llu tokens", key,
                              (unsigned long long)count, (unsigned long long)n);
    return 0;
}

/* Reads the token texts, scores and types into v. */
static int load_tokens(gguf_vocab *v, const gguf_file *f, gguf_error *err)
{
    const gguf_kv *kv = gguf_lookup_kv(f, GGUF_KEY_TOK_TOKENS);
    char tb[32];
    if (!kv)
        return gguf_error_set(err, "missing key %s", GGUF_KEY_TOK_TOKENS);
    if (kv->type != GGUF_VT_ARR || kv->elem_type != GGUF_VT_STR)
        return gguf_error_set(err, "%s is %s, expected arr[str]", GGUF_KEY_TOK_TOKENS,
                              kv_type(kv, tb));
    if (kv->n == 0)
        return gguf_error_set(err, "%s is empty", GGUF_KEY_TOK_TOKENS);
    if (kv->n > (uint64_t)INT32_MAX / 4)
        return gguf_error_setc(err, GGUF_ERR_LIMIT, "%s has %llu tokens, more than token ids can number",
                              GGUF_KEY_TOK_TOKENS, (unsigned long long)kv->n);
    uint64_t n = kv->n;
    const void *scores, *types;
    if (parallel_array(f, GGUF_KEY_TOK_SCORES, GGUF_VT_F32, n, &scores, err) ||
        parallel_array(f, GGUF_KEY_TOK_TYPES, GGUF_VT_I32, n, &types, err))
        return -1;

    /* Empty texts become "[EMPTY_<id>]" as llama.cpp renames them. */
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++)
        total += kv->strs[i].len ? kv->strs[i].len : 20;
    if (total > UINT32_MAX)
        return gguf_error_setc(err, GGUF_ERR_LIMIT, "%s: token texts total %llu bytes, too many", GGUF_KEY_TOK_TOKENS,
                              (unsigned long long)total);
    v->n_tokens = (int32_t)n;
    v->tokens = calloc(n, sizeof *v->tokens);
    v->text = malloc(total + 1);
    uint32_t n_slots = 1;
    while (n_slots < 2 * n)
        n_slots <<= 1;
    v->slots = malloc((size_t)n_slots * sizeof *v->slots);
    if (!v->tokens || !v->text || !v->slots)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory for %llu tokens", (unsigned long long)n);
    memset(v->slots, 0xff, (size_t)n_slots * sizeof *v->slots);
    v->slot_mask = n_slots - 1;

    uint32_t off = 0;
    for (uint64_t i = 0; i < n; i++) {
        vocab_token *t = &v->tokens[i];
        t->off = off;
        if (kv->strs[i].len) {
            memcpy(v->text + off, kv->strs[i].ptr, kv->strs[i].len);
            t->len = (uint32_t)kv->strs[i].len;
        } else {
            t->len = (uint32_t)snprintf(v->text + off, 21, "[EMPTY_%llu]", (unsigned long long)i);
        }
        off += t->len;
        if (scores)
            memcpy(&t->score, (const char *)scores + 4 * i, 4);
        int32_t type = GGUF_TOKEN_NORMAL;
        if (types)
            memcpy(&type, (const char *)types + 4 * i, 4);
        switch (type) {
        case GGUF_TOKEN_NORMAL:       t->attr = TOK_NORMAL; break;
        case GGUF_TOKEN_UNKNOWN:      t->attr = TOK_UNKNOWN; break;
        case GGUF_TOKEN_CONTROL:      t->attr = TOK_CONTROL; break;
        case GGUF_TOKEN_USER_DEFINED: t->attr = TOK_USER_DEFINED; break;
        case GGUF_TOKEN_UNUSED:       t->attr = TOK_UNUSED; break;
        case GGUF_TOKEN_BYTE:         t->attr = TOK_BYTE; break;
        default:                      t->attr = 0; break; /* undefined */
        }
        int32_t dup = slot_insert(v, (int32_t)i);
        if (dup >= 0) {
            char pb[48];
            return gguf_error_set(err, "%s: token %llu \"%s\" has the same text as token %d",
                                  GGUF_KEY_TOK_TOKENS, (unsigned long long)i,
                                  gguf_error_preview(tok_text(v, (int32_t)i), t->len, pb), dup);
        }
    }
    return 0;
}

static bool is_byte_name(const char *s, size_t len)
{
    return len == 6 && memcmp(s, "<0x", 3) == 0 && is_hex(s[3]) && is_hex(s[4]) && s[5] == '>';
}

/* SPM byte tokens must read <0xNN>; builds the byte -> token map. */
static int load_spm_bytes(gguf_vocab *v, gguf_error *err)
{
    for (int32_t id = 0; id < v->n_tokens; id++) {
        const vocab_token *t = &v->tokens[id];
        const char *s = tok_text(v, id);
        if ((t->attr & TOK_BYTE) &&
            !(t->len == 6 && memcmp(s, "<0x", 3) == 0 && is_hex(s[3]) && is_hex(s[4]) && s[5] == '>')) {
            char pb[48];
            return gguf_error_set(err, "byte token %d \"%s\" is not of the form <0xNN>", id,
                                  gguf_error_preview(s, t->len, pb));
        }
    }
    static const char hex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; b++) {
        char name[6] = { '<', '0', 'x', hex[b >> 4], hex[b & 15], '>' };
        char raw = (char)b;
        int32_t id = gguf_vocab_find(v, name, 6);
        if (id < 0)
            id = gguf_vocab_find(v, &raw, 1);
        v->byte_tok[b] = id >= 0 ? id : v->unk;
    }
    return 0;
}

const char *const gguf_special_keys[GGUF_SPECIAL_COUNT] = {
    [GGUF_SPECIAL_BOS] = GGUF_KEY_TOK_BOS, [GGUF_SPECIAL_EOS] = GGUF_KEY_TOK_EOS,
    [GGUF_SPECIAL_EOT] = "tokenizer.ggml.eot_token_id",
    [GGUF_SPECIAL_EOM] = "tokenizer.ggml.eom_token_id", [GGUF_SPECIAL_UNK] = GGUF_KEY_TOK_UNK,
    [GGUF_SPECIAL_SEP] = "tokenizer.ggml.seperator_token_id", [GGUF_SPECIAL_PAD] = GGUF_KEY_TOK_PAD,
    [GGUF_SPECIAL_MASK] = "tokenizer.ggml.mask_token_id",
    [GGUF_SPECIAL_CLS] = "tokenizer.ggml.cls_token_id",
    [GGUF_SPECIAL_FIM_PRE] = "tokenizer.ggml.fim_pre_token_id",
    [GGUF_SPECIAL_FIM_SUF] = "tokenizer.ggml.fim_suf_token_id",
    [GGUF_SPECIAL_FIM_MID] = "tokenizer.ggml.fim_mid_token_id",
    [GGUF_SPECIAL_FIM_PAD] = "tokenizer.ggml.fim_pad_token_id",
    [GGUF_SPECIAL_FIM_REP] = "tokenizer.ggml.fim_rep_token_id",
    [GGUF_SPECIAL_FIM_SEP] = "tokenizer.ggml.fim_sep_token_id",
    [GGUF_SPECIAL_PREFIX] = "tokenizer.ggml.prefix_token_id",
    [GGUF_SPECIAL_SUFFIX] = "tokenizer.ggml.suffix_token_id",
    [GGUF_SPECIAL_MIDDLE] = "tokenizer.ggml.middle_token_id",
};

/* The special-token keys. Out-of-vocabulary ids are refused (llama.cpp warns
 * and keeps its default), except -1, which means "none". */
static int load_special_ids(gguf_vocab *v, const gguf_file *f, int32_t *fim_pad, int32_t *fim_rep,
                            int32_t *fim_sep, gguf_error *err)
{
    int32_t sep = -1, pad = -1, mask = -1, cls = -1, fim_pre = -1, fim_suf = -1, fim_mid = -1;
    int32_t *const ids[GGUF_SPECIAL_COUNT] = {
        [GGUF_SPECIAL_BOS] = &v->bos, [GGUF_SPECIAL_EOS] = &v->eos, [GGUF_SPECIAL_EOT] = &v->eot,
        [GGUF_SPECIAL_EOM] = &v->eom, [GGUF_SPECIAL_UNK] = &v->unk, [GGUF_SPECIAL_SEP] = &sep,
        [GGUF_SPECIAL_PAD] = &pad, [GGUF_SPECIAL_MASK] = &mask, [GGUF_SPECIAL_CLS] = &cls,
        [GGUF_SPECIAL_FIM_PRE] = &fim_pre, [GGUF_SPECIAL_FIM_SUF] = &fim_suf,
        [GGUF_SPECIAL_FIM_MID] = &fim_mid, [GGUF_SPECIAL_FIM_PAD] = fim_pad,
        [GGUF_SPECIAL_FIM_REP] = fim_rep, [GGUF_SPECIAL_FIM_SEP] = fim_sep,
        [GGUF_SPECIAL_PREFIX] = &fim_pre, [GGUF_SPECIAL_SUFFIX] = &fim_suf,
        [GGUF_SPECIAL_MIDDLE] = &fim_mid,
    };
    for (size_t i = 0; i < GGUF_SPECIAL_COUNT; i++) {
        const char *key = gguf_special_keys[i];
        const gguf_kv *kv = gguf_lookup_kv(f, key);
        if (!kv)
            continue;
        int64_t id;
        char tb[32];
        if (kv->type == GGUF_VT_ARR || !gguf_kv_int(kv, &id))
            return gguf_error_set(err, "%s is %s, expected an integer", key, kv_type(kv, tb));
        /* -1 (0xFFFFFFFF in a u32) is how converters say "none", e.g.
         * llama.cpp's llama2c converter for the separator: the default stays. */
        if (id == -1 || (kv->type == GGUF_VT_U32 && id == UINT32_MAX))
            continue;
        if (id < 0 || id >= v->n_tokens)
            return gguf_error_set(err, "%s = %lld is outside the vocabulary of %d tokens",
                                  key, (long long)id, v->n_tokens);
        *ids[i] = (int32_t)id;
    }
    return 0;
}

static int load_bool(const gguf_file *f, const char *key, bool *out, gguf_error *err)
{
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    char tb[32];
    if (kv && !gguf_kv_bool(kv, out))
        return gguf_error_set(err, "%s is %s, expected bool", key, kv_type(kv, tb));
    return 0;
}

/* A token found by its text among texts[], lowest id first; -1 when none. */
static int32_t find_any(const gguf_vocab *v, const char *const *texts)
{
    int32_t best = -1;
    for (; *texts; texts++) {
        int32_t id = gguf_vocab_find(v, *texts, strlen(*texts));
        if (id >= 0 && (best < 0 || id < best))
            best = id;
    }
    return best;
}

static int add_eog(gguf_vocab *v, int32_t id)
{
    if (id < 0)
        return 0;
    for (size_t i = 0; i < v->n_eog; i++)
        if (v->eog[i] == id)
            return 0;
    int32_t *eog = realloc(v->eog, (v->n_eog + 1) * sizeof *eog);
    if (!eog)
        return -1;
    v->eog = eog;
    size_t i = v->n_eog++;
    while (i > 0 && eog[i - 1] > id) {
        eog[i] = eog[i - 1];
        i--;
    }
    eog[i] = id;
    return 0;
}

/* Takes id out of the end-of-generation set; its type becomes attr. */
static void drop_eog(gguf_vocab *v, int32_t id, uint16_t attr)
{
    for (size_t i = 0; i < v->n_eog; i++)
        if (v->eog[i] == id) {
            memmove(v->eog + i, v->eog + i + 1, (v->n_eog - i - 1) * sizeof *v->eog);
            v->n_eog--;
            break;
        }
    v->tokens[id].attr = attr;
}

/* A token llama.cpp expects to be control becomes control, whatever its type. */
static void force_control(gguf_vocab *v, int32_t id)
{
    if (!(v->tokens[id].attr & TOK_CONTROL))
        v->tokens[id].attr = TOK_CONTROL;
}

/* End-of-generation tokens and the control tokens llama.cpp recognises by
 * text when no key names them (their type is forced to control). */
static int load_eog(gguf_vocab *v, int32_t fim_pad, int32_t fim_rep, int32_t fim_sep)
{
    /* llama.cpp e21cdc11's lists (llama-vocab.cpp), in its order */
#define DS_(word) "<\xef\xbd\x9c" word "\xef\xbd\x9c>" /* DeepSeek's <｜…｜> */
#define SP_ "\xe2\x96\x81"                              /* ▁ */
    static const char *const eot_texts[] = { "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
                                             "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>",
                                             "[EOT]", DS_("end" SP_ "of" SP_ "sentence"),
                                             "<end_of_utterance>", NULL };
    static const char *const eom_texts[] = { "<|eom_id|>", NULL };
    static const char *const fim_pre_texts[] = { "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
                                                 DS_("fim" SP_ "begin"), "<PRE>", SP_ "<PRE>",
                                                 "<|code_prefix|>", "<|prefix|>", NULL };
    static const char *const fim_suf_texts[] = { "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
                                                 DS_("fim" SP_ "hole"), "<SUF>", SP_ "<SUF>",
                                                 "<|code_suffix|>", "<|suffix|>", NULL };
    static const char *const fim_mid_texts[] = { "<|fim_middle|>", "<fim-middle>", "<fim_middle>",
                                                 DS_("fim" SP_ "end"), "<MID>", SP_ "<MID>",
                                                 "<|code_middle|>", "<|middle|>", NULL };
    static const char *const fim_pad_texts[] = { "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
                                                 NULL };
    static const char *const fim_rep_texts[] = { "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
                                                 "<reponame>", NULL };
    static const char *const fim_sep_texts[] = { "<|file_sep|>", NULL };
    static const char *const eog_texts[] = { "<|eot_id|>", "<|im_end|>", "<|end|>",
                                             "<|return|>", "<|call|>",  /* o200k_harmony */
                                             "<|flush|>", "<|calls|>",  /* solar-open */
                                             "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>",
                                             "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
                                             "<end_of_utterance>",
                                             "<eos>", "<turn|>", "<|tool_response>", /* gemma4 */
                                             DS_("end" SP_ "of" SP_ "sentence"), NULL };
    /* gpt-oss's message structure tokens: always rendered (user-defined) */
    static const char *const harmony_texts[] = { "<|channel|>", "<|message|>", "<|start|>",
                                                 "<|constrain|>", NULL };
#undef DS_
#undef SP_
    struct {
        int32_t           *id;
        const char *const *texts;
    } detect[] = {
        { &v->eot, eot_texts }, { &v->eom, eom_texts }, { NULL, fim_pre_texts }, { NULL, fim_suf_texts },
        { NULL, fim_mid_texts }, { &fim_pad, fim_pad_texts }, { &fim_rep, fim_rep_texts },
        { &fim_sep, fim_sep_texts },
    };
    for (size_t i = 0; i < sizeof detect / sizeof *detect; i++) {
        if (detect[i].id && *detect[i].id >= 0)
            continue;
        int32_t id = find_any(v, detect[i].texts);
        if (id < 0)
            continue;
        force_control(v, id);
        if (detect[i].id)
            *detect[i].id = id;
    }
    if (add_eog(v, fim_pad) || add_eog(v, fim_rep) || add_eog(v, fim_sep))
        return -1;
    for (const char *const *t = eog_texts; *t; t++) {
        int32_t id = gguf_vocab_find(v, *t, strlen(*t));
        if (id >= 0) {
            force_control(v, id);
            if (add_eog(v, id))
                return -1;
        }
    }
    for (const char *const *t = harmony_texts; *t; t++) {
        int32_t id = gguf_vocab_find(v, *t, strlen(*t));
        if (id >= 0)
            v->tokens[id].attr = TOK_USER_DEFINED;
    }
    if (add_eog(v, v->eos) || add_eog(v, v->eot) || add_eog(v, v->eom))
        return -1;
    /* o200k_harmony (<|return|> and <|call|>) and solar-open (<|calls|> and
     * <|flush|>): <|end|> ends a message, not the generation; it becomes a
     * user-defined token */
    bool has_return = false, has_call = false, has_flush = false;
    int32_t end_id = -1;
    for (size_t i = 0; i < v->n_eog; i++) {
        const int32_t id = v->eog[i];
        const char *text = tok_text(v, id);
        const size_t len = v->tokens[id].len;
#define IS_(lit) (len == sizeof lit - 1 && !memcmp(text, lit, len))
        has_return |= IS_("<|return|>");
        has_call |= IS_("<|call|>") || IS_("<|calls|>");
        has_flush |= IS_("<|flush|>");
        if (IS_("<|end|>"))
            end_id = id;
#undef IS_
    }
    if (end_id >= 0 && ((has_return && has_call) || (has_call && has_flush)))
        drop_eog(v, end_id, TOK_USER_DEFINED);
    /* Gemma 4: with <|tool_response> ending generation, </s> does not and
     * becomes a normal token (llama.cpp e21cdc11 first makes every </s> an
     * end-of-generation control token, then takes it back here) */
    int32_t tool = gguf_vocab_find(v, "<|tool_response>", 16), s_id = gguf_vocab_find(v, "</s>", 4);
    if (tool >= 0 && s_id >= 0)
        drop_eog(v, s_id, TOK_NORMAL);
    return 0;
}

typedef struct special_key {
    uint32_t len;
    int32_t  id;
} special_key;

/* Longest text first; equal lengths by id. */
static int cmp_special(const void *a, const void *b)
{
    const special_key *x = a, *y = b;
    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static bool contains(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/* Special tokens (tried in partitioning) and llama.cpp's per-model strip
 * attributes, which it keys on the pre-tokenizer and general.name. */
static int load_special_list(gguf_vocab *v, const gguf_file *f)
{
    for (int32_t id = 0; id < v->n_tokens; id++)
        if (v->tokens[id].attr & (TOK_CONTROL | TOK_USER_DEFINED | TOK_UNKNOWN))
            v->n_special++;
    size_t n = v->n_special ? v->n_special : 1;
    v->special = malloc(n * sizeof *v->special);
    special_key *keys = malloc(n * sizeof *keys);
    if (!v->special || !keys) {
        free(keys);
        return -1;
    }
    size_t k = 0;
    for (int32_t id = 0; id < v->n_tokens; id++)
        if (v->tokens[id].attr & (TOK_CONTROL | TOK_USER_DEFINED | TOK_UNKNOWN))
            keys[k++] = (special_key){ v->tokens[id].len, id };
    qsort(keys, v->n_special, sizeof *keys, cmp_special);
    for (k = 0; k < v->n_special; k++)
        v->special[k] = keys[k].id;
    free(keys);

    char name[128] = "";
    gguf_str s;
    const gguf_kv *kv = gguf_lookup_kv(f, "general.name");
    if (kv && gguf_kv_str(kv, &s)) {
        size_t nl = s.len < sizeof name - 1 ? s.len : sizeof name - 1;
        for (size_t i = 0; i < nl; i++)
            name[i] = (char)tolower((unsigned char)s.ptr[i]);
        name[nl] = 0;
    }
    if (contains(v->pre_name, "jina-v2-de") || contains(v->pre_name, "jina-v2-es") ||
        contains(v->pre_name, "jina-v2-code")) {
        int32_t id = gguf_vocab_find(v, "<mask>", 6);
        if (id >= 0)
            v->tokens[id].attr |= TOK_LSTRIP;
    } else if (contains(name, "phi-3") || contains(name, "phi3")) {
        for (size_t i = 0; i < v->n_special; i++)
            v->tokens[v->special[i]].attr |= TOK_RSTRIP;
        int32_t id = gguf_vocab_find(v, "</s>", 4);
        if (id >= 0)
            v->tokens[id].attr |= TOK_RSTRIP;
        static const char *const keep[] = { "<unk>", "<s>", "<|endoftext|>" };
        for (size_t i = 0; i < 3; i++)
            if ((id = gguf_vocab_find(v, keep[i], strlen(keep[i]))) >= 0)
                v->tokens[id].attr &= (uint16_t)~TOK_RSTRIP;
    }
    return 0;
}

/* tokenizer.ggml.merges: "LEFT RIGHT" (split at the first space after the
 * first byte), both pieces tokens; rank = index, the first of duplicates. */
static int load_merges(gguf_vocab *v, const gguf_file *f, gguf_error *err)
{
    const gguf_kv *kv = gguf_lookup_kv(f, GGUF_KEY_TOK_MERGES);
    char tb[32], pa[48], pb[48];
    if (!kv)
        return gguf_error_set(err, "missing key %s (a gpt2 vocabulary needs its merges)",
                              GGUF_KEY_TOK_MERGES);
    if (kv->type != GGUF_VT_ARR || kv->elem_type != GGUF_VT_STR)
        return gguf_error_set(err, "%s is %s, expected arr[str]", GGUF_KEY_TOK_MERGES, kv_type(kv, tb));
    if (kv->n > (uint64_t)INT32_MAX / 4)
        return gguf_error_setc(err, GGUF_ERR_LIMIT, "%s has too many merges", GGUF_KEY_TOK_MERGES);
    uint32_t n_slots = 1;
    while (n_slots < 2 * kv->n + 2)
        n_slots <<= 1;
    v->merge_keys = malloc((size_t)n_slots * sizeof *v->merge_keys);
    v->merge_ranks = malloc((size_t)n_slots * sizeof *v->merge_ranks);
    if (!v->merge_keys || !v->merge_ranks)
        return gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory for %llu merges", (unsigned long long)kv->n);
    memset(v->merge_keys, 0xff, (size_t)n_slots * sizeof *v->merge_keys);
    v->merge_mask = n_slots - 1;
    for (uint64_t r = 0; r < kv->n; r++) {
        const char *s = kv->strs[r].ptr;
        size_t len = kv->strs[r].len;
        const char *sp = len > 1 ? memchr(s + 1, ' ', len - 1) : NULL;
        if (!sp)
            return gguf_error_set(err, "%s[%llu] \"%s\" is not two pieces separated by a space",
                                  GGUF_KEY_TOK_MERGES, (unsigned long long)r, gguf_error_preview(s, len, pa));
        size_t ll = (size_t)(sp - s), rl = len - ll - 1;
        int32_t left = gguf_vocab_find(v, s, ll), right = gguf_vocab_find(v, sp + 1, rl);
        if (left < 0 || right < 0) {
            const char *missing = left < 0 ? gguf_error_preview(s, ll, pa) : gguf_error_preview(sp + 1, rl, pa);
            return gguf_error_set(err, "%s[%llu] \"%s\": piece \"%s\" is not a token",
                                  GGUF_KEY_TOK_MERGES, (unsigned long long)r, gguf_error_preview(s, len, pb), missing);
        }
        uint64_t key = merge_key(left, right);
        uint32_t i = merge_slot(key, v->merge_mask);
        while (v->merge_keys[i] != UINT64_MAX && v->merge_keys[i] != key)
            i = (i + 1) & v->merge_mask;
        if (v->merge_keys[i] == UINT64_MAX) {
            v->merge_keys[i] = key;
            v->merge_ranks[i] = (int32_t)r;
        }
    }
    return 0;
}

/* Per pre-tokenizer defaults that are not about splitting (llama.cpp sets
 * them next to the pre-type). */
static void bpe_defaults(gguf_vocab *v)
{
    const char *p = v->pre_name;
    if (!strcmp(p, "llama3") || !strcmp(p, "llama-v3") || !strcmp(p, "llama-bpe") ||
        !strcmp(p, "falcon3") || !strcmp(p, "tekken")) {
        v->ignore_merges = true;
        v->add_bos = true;
    } else if (!strcmp(p, "chameleon")) {
        v->add_bos = true;
    } else if (!strcmp(p, "chatglm-bpe") || !strcmp(p, "glm4")) {
        v->bos = -1; /* none unless tokenizer.ggml.bos_token_id names one */
    } else if (!strcmp(p, "gemma4")) {
        v->escape_spaces = true;
    }
}

gguf_vocab *gguf_vocab_load(const gguf_file *f, gguf_error *err)
{
    gguf_str model = { 0 }, pre = { 0 };
    const gguf_kv *kv = gguf_lookup_kv(f, GGUF_KEY_TOK_MODEL);
    char tb[32];
    if (!kv) {
        gguf_error_set(err, "no vocabulary: missing key %s", GGUF_KEY_TOK_MODEL);
        return NULL;
    }
    if (!gguf_kv_str(kv, &model)) {
        gguf_error_set(err, "%s is %s, expected str", GGUF_KEY_TOK_MODEL, kv_type(kv, tb));
        return NULL;
    }
    enum gguf_vocab_type type;
    bool gemma4 = false; /* llama.cpp's "gemma4" model: BPE, pre-tokenizer "gemma4" */
    if (gguf_str_eq(model, "llama")) {
        type = GGUF_VOCAB_SPM;
    } else if (gguf_str_eq(model, "gpt2")) {
        type = GGUF_VOCAB_BPE;
    } else if (gguf_str_eq(model, "gemma4")) {
        type = GGUF_VOCAB_BPE;
        gemma4 = true;
    } else {
        char pb[48];
        static const char *const known[][2] = {
            { "bert", "WordPiece" }, { "t5", "Unigram" }, { "rwkv", "RWKV" },
            { "no_vocab", "no vocabulary" }, { "none", "no vocabulary" } };
        for (size_t i = 0; i < sizeof known / sizeof *known; i++)
            if (gguf_str_eq(model, known[i][0])) {
                gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "tokenizer model \"%s\" (%s) is not supported; only \"llama\" (SentencePiece), \"gpt2\" (byte-level BPE) and \"gemma4\" (SentencePiece-style BPE) are",
                               known[i][0], known[i][1]);
                return NULL;
            }
        gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "unknown tokenizer model \"%s\"", gguf_error_preview(model.ptr, model.len, pb));
        return NULL;
    }
    if (gguf_unicode_init() != 0) {
        gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "the PCRE2 library has no Unicode support");
        return NULL;
    }

    gguf_vocab *v = calloc(1, sizeof *v);
    if (!v) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        return NULL;
    }
    v->type = type;
    v->bos = v->eos = v->unk = v->eot = v->eom = -1;
    for (int b = 0; b < 256; b++)
        v->byte_tok[b] = -1;
    if (load_tokens(v, f, err))
        goto fail;

    kv = gguf_lookup_kv(f, GGUF_KEY_TOK_PRE);
    if (kv && !gguf_kv_str(kv, &pre)) {
        gguf_error_set(err, "%s is %s, expected str", GGUF_KEY_TOK_PRE, kv_type(kv, tb));
        goto fail;
    }
    if (pre.len >= sizeof v->pre_name || (pre.len && memchr(pre.ptr, 0, pre.len))) {
        char pb[48];
        gguf_error_setc(err, GGUF_ERR_UNSUPPORTED, "unknown pre-tokenizer \"%s\"", gguf_error_preview(pre.ptr, pre.len, pb));
        goto fail;
    }
    if (gemma4)
        strcpy(v->pre_name, "gemma4"); /* tokenizer.ggml.pre is not read */
    else if (pre.len)
        memcpy(v->pre_name, pre.ptr, pre.len);
    else
        strcpy(v->pre_name, "default");

    /* llama.cpp's defaults: SPM 1/2/0 and BOS added, a leading space; BPE
     * 11/11 (GPT-2 era), nothing added unless the pre-tokenizer says so. */
    int32_t bos = type == GGUF_VOCAB_SPM ? 1 : 11, eos = type == GGUF_VOCAB_SPM ? 2 : 11;
    v->bos = bos < v->n_tokens && !gemma4 ? bos : -1; /* gemma4: none unless a key names one */
    v->eos = eos < v->n_tokens && !gemma4 ? eos : -1;
    v->unk = type == GGUF_VOCAB_SPM ? 0 : -1;
    v->add_bos = type == GGUF_VOCAB_SPM;
    v->add_space_prefix = type == GGUF_VOCAB_SPM;
    if (type == GGUF_VOCAB_BPE)
        bpe_defaults(v);
    if (load_bool(f, "tokenizer.ggml.add_space_prefix", &v->add_space_prefix, err))
        goto fail;

    int32_t fim_pad = -1, fim_rep = -1, fim_sep = -1;
    if (load_special_ids(v, f, &fim_pad, &fim_rep, &fim_sep, err) ||
        load_bool(f, GGUF_KEY_TOK_ADD_BOS, &v->add_bos, err) ||
        load_bool(f, GGUF_KEY_TOK_ADD_EOS, &v->add_eos, err))
        goto fail;
    if (!strcmp(v->pre_name, "gemma4"))
        v->add_bos = true; /* llama.cpp overrides a false add_bos_token for Gemma 4 */
    if (load_eog(v, fim_pad, fim_rep, fim_sep) || load_special_list(v, f)) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (type == GGUF_VOCAB_SPM) {
        if (load_spm_bytes(v, err))
            goto fail;
    } else {
        if (load_merges(v, f, err) || gguf_vocab_bpe_init(v, v->pre_name, err))
            goto fail;
    }
    return v;
fail:
    gguf_vocab_free(v);
    return NULL;
}

void gguf_vocab_free(gguf_vocab *v)
{
    if (!v)
        return;
    if (v->type == GGUF_VOCAB_BPE)
        gguf_vocab_bpe_free(v);
    free(v->tokens);
    free(v->text);
    free(v->slots);
    free(v->merge_keys);
    free(v->merge_ranks);
    free(v->eog);
    free(v->special);
    free(v);
}

/* ---- queries --------------------------------------------------------------- */

int32_t gguf_vocab_n_tokens(const gguf_vocab *v) { return v->n_tokens; }
enum gguf_vocab_type gguf_vocab_type(const gguf_vocab *v) { return v->type; }
const char *gguf_vocab_pre(const gguf_vocab *v) { return v->pre_name; }
int32_t gguf_vocab_bos(const gguf_vocab *v) { return v->bos; }
int32_t gguf_vocab_eos(const gguf_vocab *v) { return v->eos; }
bool gguf_vocab_adds_bos(const gguf_vocab *v) { return v->add_bos; }
bool gguf_vocab_adds_eos(const gguf_vocab *v) { return v->add_eos; }

bool gguf_vocab_is_eog(const gguf_vocab *v, int32_t id)
{
    size_t lo = 0, hi = v->n_eog;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->eog[mid] == id)
            return true;
        if (v->eog[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

bool gguf_vocab_is_control(const gguf_vocab *v, int32_t id)
{
    return id >= 0 && id < v->n_tokens && (v->tokens[id].attr & (TOK_CONTROL | TOK_UNKNOWN));
}

const char *gguf_vocab_text(const gguf_vocab *v, int32_t id, size_t *len)
{
    if (id < 0 || id >= v->n_tokens)
        return NULL;
    if (len)
        *len = v->tokens[id].len;
    return tok_text(v, id);
}

/* ---- pieces ---------------------------------------------------------------- */

/* Appends n bytes to buf[0..size) at *o, counting what does not fit. */
static void put(char *buf, size_t size, size_t *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++, (*o)++)
        if (*o < size)
            buf[*o] = s[i];
}

int gguf_vocab_piece(const gguf_vocab *v, int32_t id, bool special, char *buf, size_t size)
{
    if (id < 0 || id >= v->n_tokens)
        return -1;
    const vocab_token *t = &v->tokens[id];
    const char *s = tok_text(v, id);
    size_t o = 0;
    if (t->attr & (TOK_CONTROL | TOK_UNKNOWN | TOK_USER_DEFINED)) {
        if ((t->attr & TOK_USER_DEFINED) || special)
            put(buf, size, &o, s, t->len);
        if (!special && (t->attr & (TOK_CONTROL | TOK_UNKNOWN)))
            o = 0;
        return (int)o;
    }
    if (v->type == GGUF_VOCAB_SPM || v->escape_spaces) {
        if (t->attr & TOK_NORMAL) {
            /* U+2581 (e2 96 81) stands for a space */
            for (size_t i = 0; i < t->len; i++) {
                if (i + 2 < t->len && memcmp(s + i, "\xe2\x96\x81", 3) == 0) {
                    put(buf, size, &o, " ", 1);
                    i += 2;
                } else {
                    put(buf, size, &o, s + i, 1);
                }
            }
        } else if ((t->attr & TOK_BYTE) && (v->type == GGUF_VOCAB_SPM || is_byte_name(s, t->len))) {
            char byte = (char)strtol((char[3]){ s[3], s[4], 0 }, NULL, 16);
            put(buf, size, &o, &byte, 1);
        }
        return (int)o;
    }
    if ((t->attr & TOK_BYTE) && is_byte_name(s, t->len)) {
        /* a <0xNN> byte token of a BPE vocabulary: its byte, as llama.cpp's
         * token_to_byte reads it */
        char byte = (char)strtol((char[3]){ s[3], s[4], 0 }, NULL, 16);
        put(buf, size, &o, &byte, 1);
        return (int)o;
    }
    if (t->attr & TOK_NORMAL) {
        /* Each code point is one byte of GPT-2's alphabet; one outside it is
         * spelled out as llama.cpp does: [UNK_BYTE_0x<its utf-8>TEXT]. */
        for (size_t pos = 0; pos < t->len;) {
            uint32_t cp = gguf_utf8_decode(s, t->len, &pos);
            int b = gguf_cp_to_byte(cp);
            if (b >= 0) {
                char c = (char)b;
                put(buf, size, &o, &c, 1);
                continue;
            }
            char u[4], hex[3];
            size_t n = gguf_utf8_encode(cp, u);
            put(buf, size, &o, "[UNK_BYTE_0x", 12);
            for (size_t i = 0; i < n; i++) {
                snprintf(hex, sizeof hex, "%02x", (unsigned char)u[i]);
                put(buf, size, &o, hex, 2);
            }
            put(buf, size, &o, s, t->len);
            put(buf, size, &o, "]", 1);
        }
    }
    /* That spelling is quadratic in the token's length: a hostile token could
     * need more than an int counts; the caller then gets INT_MAX bytes. */
    return o > INT_MAX ? INT_MAX : (int)o;
}

/* ---- encoding ---------------------------------------------------------------- */

/* A part of the input: raw text [off, off+len), or a special token. */
typedef struct fragment {
    int32_t id; /* -1 for text */
    size_t  off, len;
} fragment;

typedef struct fragment_list {
    fragment *items;
    size_t    n, cap;
} fragment_list;

static int frag_push(fragment_list *l, int32_t id, size_t off, size_t len)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        fragment *items = realloc(l->items, cap * sizeof *items);
        if (!items)
            return -1;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = (fragment){ id, off, len };
    return 0;
}

static bool is_c_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Cuts the text fragments of *frags at every occurrence of each special
 * token's text, the longest texts first (llama.cpp's
 * tokenizer_st_partition). A token with LSTRIP/RSTRIP also swallows the
 * whitespace before/after it. */
static int partition(const gguf_vocab *v, const char *text, bool parse_special, fragment_list *frags)
{
    fragment_list next = { 0 };
    for (size_t s = 0; s < v->n_special; s++) {
        int32_t id = v->special[s];
        const vocab_token *t = &v->tokens[id];
        if (!parse_special && (t->attr & (TOK_CONTROL | TOK_UNKNOWN)))
            continue;
        const char *tt = tok_text(v, id);
        next.n = 0;
        for (size_t i = 0; i < frags->n; i++) {
            fragment fr = frags->items[i];
            if (fr.id >= 0) {
                if (frag_push(&next, fr.id, 0, 0))
                    goto oom;
                continue;
            }
            size_t off = fr.off, len = fr.len;
            for (;;) {
                const char *m = len >= t->len ? memmem(text + off, len, tt, t->len) : NULL;
                if (!m) {
                    if (len > 0 && frag_push(&next, -1, off, len))
                        goto oom;
                    break;
                }
                size_t at = (size_t)(m - text);
                size_t left = at - off;
                if (t->attr & TOK_LSTRIP)
                    while (left > 0 && is_c_space(text[off + left - 1]))
                        left--;
                if (left > 0 && frag_push(&next, -1, off, left))
                    goto oom;
                if (frag_push(&next, id, 0, 0))
                    goto oom;
                size_t end = off + len, r = at + t->len;
                if (t->attr & TOK_RSTRIP)
                    while (r < end && is_c_space(text[r]))
                        r++;
                off = r;
                len = end - r;
            }
        }
        fragment_list swap = *frags;
        *frags = next;
        next = swap;
    }
    free(next.items);
    return 0;
oom:
    free(next.items);
    return -1;
}

int gguf_vocab_encode(const gguf_vocab *v, const char *text, size_t len, bool add_special,
                      bool parse_special, int32_t **ids, size_t *n_ids, gguf_error *err)
{
    *ids = NULL;
    *n_ids = 0;
    id_list out = { 0 };
    fragment_list frags = { 0 };
    char *buf = NULL;
    if (len && frag_push(&frags, -1, 0, len))
        goto oom;
    if (len && partition(v, text, parse_special, &frags))
        goto oom;
    if (add_special && v->add_bos) {
        if (v->bos < 0) {
            gguf_error_set(err, "the vocabulary asks for a BOS token but has none");
            goto fail;
        }
        if (gguf_id_list_push(&out, v->bos))
            goto oom;
    }
    /* SPM: a fragment after a special token (or the first one) gets the
     * leading space, so "Hello" and " Hello" both start with "▁Hello". */
    bool prev_special = true;
    for (size_t i = 0; i < frags.n; i++) {
        const fragment *fr = &frags.items[i];
        if (fr->id >= 0) {
            if (gguf_id_list_push(&out, fr->id))
                goto oom;
            prev_special = true;
            continue;
        }
        int rc;
        if (v->type == GGUF_VOCAB_SPM) {
            size_t pre = v->add_space_prefix && prev_special;
            char *nb = realloc(buf, fr->len + 1);
            if (!nb)
                goto oom;
            buf = nb;
            buf[0] = ' ';
            memcpy(buf + pre, text + fr->off, fr->len);
            rc = gguf_vocab_encode_spm(v, buf, fr->len + pre, &out);
        } else if (v->escape_spaces) {
            /* gemma4: each space becomes the three bytes of U+2581 */
            size_t n_sp = 0;
            for (size_t k = 0; k < fr->len; k++)
                n_sp += text[fr->off + k] == ' ';
            char *nb = realloc(buf, fr->len + 2 * n_sp + 1);
            if (!nb)
                goto oom;
            buf = nb;
            size_t o = 0;
            for (size_t k = 0; k < fr->len; k++) {
                if (text[fr->off + k] == ' ') {
                    memcpy(buf + o, "\xe2\x96\x81", 3);
                    o += 3;
                } else {
                    buf[o++] = text[fr->off + k];
                }
            }
            rc = gguf_vocab_encode_bpe(v, buf, o, &out);
        } else {
            rc = gguf_vocab_encode_bpe(v, text + fr->off, fr->len, &out);
        }
        if (rc)
            goto oom;
        prev_special = false;
    }
    if (add_special && v->add_eos) {
        if (v->eos < 0) {
            gguf_error_set(err, "the vocabulary asks for an EOS token but has none");
            goto fail;
        }
        if (gguf_id_list_push(&out, v->eos))
            goto oom;
    }
    free(frags.items);
    free(buf);
    *ids = out.ids ? out.ids : malloc(sizeof(int32_t));
    if (!*ids) {
        gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory");
        return -1;
    }
    *n_ids = out.n;
    return 0;
oom:
    gguf_error_setc(err, GGUF_ERR_NOMEM, "out of memory tokenizing %zu bytes", len);
fail:
    free(out.ids);
    free(frags.items);
    free(buf);
    return -1;
}
