/*
 * tokenizer_spm.c — SentencePiece tokenization of one text fragment, as
 * llama.cpp's llm_tokenizer_spm does it.
 *
 * The fragment's spaces become U+2581 ("▁"); the text is split into UTF-8
 * characters (symbols); then, repeatedly, the adjacent pair whose
 * concatenation is the highest-scoring token (leftmost on ties) is merged.
 * Each final symbol is its token, or when no token spells it, one <0xNN>
 * byte token per byte (byte fallback; unk when the vocabulary has none).
 *
 * Not for: special tokens and the leading space (tokenizer.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tokenizer_impl.h"
#include "unicode.h"

typedef struct spm_state {
    const gguf_vocab *v;
    const char       *text;
    symbol           *sym;
    bigram_queue      queue;
} spm_state;

/* Queues the merge of symbols left and right if a token spells it. */
static int try_pair(spm_state *st, int32_t left, int32_t right)
{
    if (left < 0 || right < 0)
        return 0;
    size_t size = st->sym[left].n + st->sym[right].n;
    int32_t id = gguf_vocab_find(st->v, st->text + st->sym[left].off, size);
    if (id < 0)
        return 0;
    return gguf_bigram_push(&st->queue, (bigram){ st->v->tokens[id].score, left, right, size });
}

int gguf_vocab_encode_spm(const gguf_vocab *v, const char *text, size_t len, id_list *out)
{
    /* Escape: each space becomes the three bytes of U+2581. */
    size_t n_spaces = 0;
    for (size_t i = 0; i < len; i++)
        n_spaces += text[i] == ' ';
    size_t elen = len + 2 * n_spaces;
    char *esc = malloc(elen ? elen : 1);
    symbol *sym = malloc((elen ? elen : 1) * sizeof *sym);
    spm_state st = { v, esc, sym, { 0 } };
    int rc = -1;
    if (!esc || !sym)
        goto done;
    for (size_t i = 0, o = 0; i < len; i++) {
        if (text[i] == ' ') {
            memcpy(esc + o, "\xe2\x96\x81", 3);
            o += 3;
        } else {
            esc[o++] = text[i];
        }
    }

    int32_t n_sym = 0;
    for (size_t off = 0; off < elen; n_sym++) {
        size_t n = gguf_utf8_seq_len((unsigned char)esc[off]);
        if (n > elen - off)
            n = elen - off;
        sym[n_sym] = (symbol){ n_sym - 1, off + n == elen ? -1 : n_sym + 1, off, n, -1 };
        off += n;
    }
    for (int32_t i = 1; i < n_sym; i++)
        if (try_pair(&st, i - 1, i))
            goto done;

    bigram b;
    while (gguf_bigram_pop(&st.queue, &b)) {
        symbol *l = &sym[b.left], *r = &sym[b.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != b.size)
            continue; /* one side already merged elsewhere */
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0)
            sym[r->next].prev = b.left;
        if (try_pair(&st, l->prev, b.left) || try_pair(&st, b.left, l->next))
            goto done;
    }

    for (int32_t i = n_sym ? 0 : -1; i >= 0; i = sym[i].next) {
        int32_t id = gguf_vocab_find(v, esc + sym[i].off, sym[i].n);
        if (id >= 0) {
            if (gguf_id_list_push(out, id))
                goto done;
            continue;
        }
        for (size_t k = 0; k < sym[i].n; k++) {
            int32_t bt = v->byte_tok[(unsigned char)esc[sym[i].off + k]];
            if (bt >= 0 && gguf_id_list_push(out, bt))
                goto done;
        }
    }
    rc = 0;
done:
    free(st.queue.items);
    free(esc);
    free(sym);
    return rc;
}
