/*
 * verify.c — the pieces of gguf-run --verify that eval.c does not have: the
 * greedy continuation both models make and the thresholds. main.c runs the
 * two models in turn (see verify.h).
 */
#include <stdio.h>
#include <string.h>

#include <ggufkit/arch.h>

#include "verify.h"

static int32_t argmax(const float *l, int n)
{
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (l[i] > l[best])
            best = i;
    return best;
}

void run_greedy(run_state *s, const run_model *m, const int32_t *prompt, int n_prompt, int n,
                float *logits, int32_t *out)
{
    run_forward(s, m, prompt, n_prompt, 0, n_prompt - 1, logits);
    for (int i = 0; i < n; i++) {
        out[i] = argmax(logits, m->hp.n_vocab);
        if (i + 1 < n)
            run_forward(s, m, &out[i], 1, n_prompt + i, 0, logits);
    }
}

int run_leading_agreement(const int32_t *a, const int32_t *b, int n)
{
    int k = 0;
    while (k < n && a[k] == b[k])
        k++;
    return k;
}

bool run_verify_within(const run_eval_result *res, const run_verify_limits *lim, char *why,
                       size_t why_size)
{
    const double ratio = res->ppl / res->ppl_base;
    if (lim->max_kld >= 0 && !(res->mean_kld <= lim->max_kld)) {
        snprintf(why, why_size, "mean KLD %.6f is above --max-kld %g", res->mean_kld,
                 lim->max_kld);
        return false;
    }
    if (lim->min_top1 >= 0 && !(res->same_top >= lim->min_top1)) {
        snprintf(why, why_size, "top-1 agreement %.4f is below --min-top1 %g", res->same_top,
                 lim->min_top1);
        return false;
    }
    if (lim->max_ppl_ratio >= 0 && !(ratio <= lim->max_ppl_ratio)) {
        snprintf(why, why_size, "perplexity ratio %.6f is above --max-ppl-ratio %g", ratio,
                 lim->max_ppl_ratio);
        return false;
    }
    return true;
}

/* s[0..len) quoted for a message: control bytes, '"' and '\\' as \xNN,
 * the rest as it is; the first 40 bytes or so (cut between characters). */
static void quote(const char *s, uint64_t len, char *out, size_t size)
{
    size_t k = 0;
    out[k++] = '"';
    for (uint64_t i = 0; i < len && k + 8 < size; i++) {
        const unsigned char c = (unsigned char)s[i];
        if (i >= 40 && (c & 0xc0) != 0x80) {
            k += (size_t)snprintf(out + k, size - k, "...");
            break;
        }
        if ((c >= 0x20 && c != 0x7f && c != '"' && c != '\\'))
            out[k++] = (char)c;
        else
            k += (size_t)snprintf(out + k, size - k, "\\x%02x", c);
    }
    snprintf(out + k, size - k, "\"");
}

/* llama.cpp's token types, for messages. */
static const char *type_name(int32_t t)
{
    static const char *const names[] = { "undefined", "normal", "unknown", "control",
                                         "user-defined", "unused", "byte" };
    return t >= 0 && t < 7 ? names[t] : "?";
}

/* The string array or string at key, or NULL. */
static const gguf_kv *str_kv(const gguf_file *f, const char *key, bool array)
{
    const gguf_kv *kv = gguf_lookup_kv(f, key);
    if (!kv || kv->elem_type != GGUF_VT_STR || (kv->type == GGUF_VT_ARR) != array)
        return NULL;
    return kv;
}

/* Token i's type (tokenizer.ggml.token_type), or 0 (undefined) without one. */
static int32_t token_type(const gguf_kv *types, uint64_t i)
{
    int32_t t = 0;
    if (types && i < types->n)
        memcpy(&t, (const uint8_t *)types->data + 4 * i, 4);
    return t;
}

int run_verify_same_vocab(const gguf_file *model, const char *model_name, const gguf_file *ref,
                          gguf_error *err)
{
    char a[200], b[200];
    const gguf_kv *ma = str_kv(model, GGUF_KEY_TOK_MODEL, false);
    const gguf_kv *mb = str_kv(ref, GGUF_KEY_TOK_MODEL, false);
    const gguf_str none = { "", 0 };
    const gguf_str *sa = ma ? ma->strs : &none, *sb = mb ? mb->strs : &none;
    if (sa->len != sb->len || memcmp(sa->ptr, sb->ptr, sa->len)) {
        quote(sb->ptr, sb->len, b, sizeof b);
        quote(sa->ptr, sa->len, a, sizeof a);
        return gguf_error_set(err, "tokenizer.ggml.model is %s, %s's is %s: not the same "
                              "vocabulary", b, model_name, a);
    }
    const gguf_kv *ta = str_kv(model, GGUF_KEY_TOK_TOKENS, true);
    const gguf_kv *tb = str_kv(ref, GGUF_KEY_TOK_TOKENS, true);
    const uint64_t na = ta ? ta->n : 0, nb = tb ? tb->n : 0;
    if (na != nb)
        return gguf_error_set(err, "has %llu tokens, %s has %llu: not the same vocabulary",
                              (unsigned long long)nb, model_name, (unsigned long long)na);
    const gguf_kv *ya = gguf_lookup_kv(model, GGUF_KEY_TOK_TYPES);
    const gguf_kv *yb = gguf_lookup_kv(ref, GGUF_KEY_TOK_TYPES);
    if (ya && (ya->type != GGUF_VT_ARR || ya->elem_type != GGUF_VT_I32))
        ya = NULL;
    if (yb && (yb->type != GGUF_VT_ARR || yb->elem_type != GGUF_VT_I32))
        yb = NULL;
    for (uint64_t i = 0; i < na; i++) {
        const gguf_str *x = &ta->strs[i], *y = &tb->strs[i];
        if (x->len != y->len || memcmp(x->ptr, y->ptr, x->len)) {
            quote(y->ptr, y->len, b, sizeof b);
            quote(x->ptr, x->len, a, sizeof a);
            return gguf_error_set(err, "token %llu is %s, %s's token %llu is %s: not the same "
                                  "vocabulary", (unsigned long long)i, b, model_name,
                                  (unsigned long long)i, a);
        }
        const int32_t u = token_type(ya, i), v = token_type(yb, i);
        if (u != v) {
            quote(x->ptr, x->len, a, sizeof a);
            return gguf_error_set(err, "token %llu %s is of type %d (%s), in %s of type %d (%s): "
                                  "not the same vocabulary", (unsigned long long)i, a, v,
                                  type_name(v), model_name, u, type_name(u));
        }
    }
    return 0;
}
