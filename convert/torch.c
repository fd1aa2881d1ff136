/*
 * torch.c — see torch.h.
 */
#include "torch.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zip.h"

/* ========================================================================
 * Pickle values
 * ======================================================================== */

typedef enum {
    PV_MARK, PV_NONE, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_TUPLE, PV_LIST, PV_DICT,
    PV_GLOBAL, PV_STORAGE, PV_TENSOR
} pv_type;

typedef struct pv pv;
struct pv {
    pv_type  type;
    int64_t  i;           /* INT, BOOL; STORAGE: numel; TENSOR: storage offset */
    double   f;
    char    *s;           /* STR (NUL-terminated copy), GLOBAL "module.name", STORAGE key */
    size_t   len;
    pv     **items;       /* TUPLE, LIST, DICT (keys and values interleaved); TENSOR: size, stride */
    size_t   n, cap;
    int      dtype_size;  /* STORAGE */
    char     dtype[8];    /* STORAGE, TENSOR: "F32", ... */
    pv      *storage;     /* TENSOR */
    pv      *next;        /* allocation list */
};

/* Every value lives on one list, freed together: values are shared freely
 * (memo, dict entries) without reference counts. */
typedef struct machine {
    pv       *all;
    pv      **stack;
    size_t    sp, stack_cap;
    pv      **memo;
    size_t    memo_cap, memo_count;
    size_t    n_values;
    gguf_error *err;
} machine;

#define MAX_VALUES (8u << 20)  /* far above any state dict; bounds memory on hostile input */
#define MAX_MEMO   (1u << 20)

static pv *new_pv(machine *m, pv_type t)
{
    if (m->n_values >= MAX_VALUES)
        return NULL;
    pv *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->type = t;
    v->next = m->all;
    m->all = v;
    m->n_values++;
    return v;
}

static void free_machine(machine *m)
{
    for (pv *v = m->all, *next; v; v = next) {
        next = v->next;
        free(v->s);
        free(v->items);
        free(v);
    }
    free(m->stack);
    free(m->memo);
}

static int add_item(pv *c, pv *item)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4;
        pv **items = realloc(c->items, cap * sizeof *items);
        if (!items)
            return -1;
        c->items = items;
        c->cap = cap;
    }
    c->items[c->n++] = item;
    return 0;
}

static int push(machine *m, pv *v)
{
    if (!v)
        return gguf_error_set(m->err, "out of memory");
    if (m->sp == m->stack_cap) {
        size_t cap = m->stack_cap ? 2 * m->stack_cap : 64;
        pv **s = realloc(m->stack, cap * sizeof *s);
        if (!s)
            return gguf_error_set(m->err, "out of memory");
        m->stack = s;
        m->stack_cap = cap;
    }
    m->stack[m->sp++] = v;
    return 0;
}

static pv *pop(machine *m)
{
    return m->sp > 0 && m->stack[m->sp - 1]->type != PV_MARK ? m->stack[--m->sp] : NULL;
}

/* Index of the topmost mark, or -1. */
static long find_mark(const machine *m)
{
    for (size_t i = m->sp; i-- > 0;)
        if (m->stack[i]->type == PV_MARK)
            return (long)i;
    return -1;
}

/* Pops everything above the topmost mark (and the mark) into container c. */
static int pop_to_mark(machine *m, pv *c)
{
    long mk = find_mark(m);
    if (mk < 0)
        return gguf_error_set(m->err, "pickle: no mark");
    if (!c)
        return gguf_error_set(m->err, "out of memory");
    for (size_t i = (size_t)mk + 1; i < m->sp; i++)
        if (add_item(c, m->stack[i]))
            return gguf_error_set(m->err, "out of memory");
    m->sp = (size_t)mk;
    return 0;
}

static int memo_put(machine *m, uint64_t idx)
{
    if (m->sp == 0 || idx >= MAX_MEMO)
        return gguf_error_set(m->err, "pickle: bad memo put %" PRIu64, idx);
    if (idx >= m->memo_cap) {
        size_t cap = m->memo_cap ? m->memo_cap : 64;
        while (cap <= idx)
            cap *= 2;
        pv **memo = realloc(m->memo, cap * sizeof *memo);
        if (!memo)
            return gguf_error_set(m->err, "out of memory");
        memset(memo + m->memo_cap, 0, (cap - m->memo_cap) * sizeof *memo);
        m->memo = memo;
        m->memo_cap = cap;
    }
    if (!m->memo[idx])
        m->memo_count++;
    m->memo[idx] = m->stack[m->sp - 1];
    return 0;
}

static int memo_get(machine *m, uint64_t idx)
{
    if (idx >= m->memo_cap || !m->memo[idx])
        return gguf_error_set(m->err, "pickle: memo %" PRIu64 " read before it was set", idx);
    return push(m, m->memo[idx]);
}

/* ========================================================================
 * Globals: the whitelist
 * ======================================================================== */

static const struct {
    const char *name, *dtype;
    int         size;
} storages[] = {
    { "torch.FloatStorage", "F32", 4 },    { "torch.HalfStorage", "F16", 2 },
    { "torch.BFloat16Storage", "BF16", 2 }, { "torch.DoubleStorage", "F64", 8 },
    { "torch.LongStorage", "I64", 8 },     { "torch.IntStorage", "I32", 4 },
    { "torch.ShortStorage", "I16", 2 },    { "torch.CharStorage", "I8", 1 },
    { "torch.ByteStorage", "U8", 1 },      { "torch.BoolStorage", "BOOL", 1 },
};
#define N_STORAGES (sizeof storages / sizeof *storages)

static const char *const callables[] = {
    "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
    "collections.OrderedDict",
};

static int make_global(machine *m, const char *module, size_t mlen, const char *name, size_t nlen)
{
    char full[256];
    if (mlen + nlen + 2 > sizeof full)
        return gguf_error_set(m->err, "pickle: global name too long");
    memcpy(full, module, mlen);
    full[mlen] = '.';
    memcpy(full + mlen + 1, name, nlen);
    full[mlen + 1 + nlen] = 0;
    if (strlen(full) != mlen + 1 + nlen)
        return gguf_error_set(m->err, "pickle: NUL in a global name");
    bool ok = false;
    for (size_t i = 0; i < N_STORAGES; i++)
        ok |= !strcmp(full, storages[i].name);
    for (size_t i = 0; i < sizeof callables / sizeof *callables; i++)
        ok |= !strcmp(full, callables[i]);
    if (!ok)
        return gguf_error_set(m->err, "pickle: refusing global %s (not a tensor checkpoint "
                              "construct; nothing is executed)", full);
    pv *g = new_pv(m, PV_GLOBAL);
    if (!g || !(g->s = strdup(full)))
        return gguf_error_set(m->err, "out of memory");
    return push(m, g);
}

/* BINPERSID: ('storage', StorageClass, key, location, numel). */
static int persistent_load(machine *m)
{
    pv *t = pop(m);
    if (!t || t->type != PV_TUPLE || t->n < 5 || t->items[0]->type != PV_STR ||
        strcmp(t->items[0]->s, "storage") || t->items[1]->type != PV_GLOBAL ||
        t->items[2]->type != PV_STR || t->items[4]->type != PV_INT || t->items[4]->i < 0)
        return gguf_error_set(m->err, "pickle: unsupported persistent id (expected a torch storage)");
    const char *cls = t->items[1]->s;
    pv *s = new_pv(m, PV_STORAGE);
    if (!s || !(s->s = strdup(t->items[2]->s)))
        return gguf_error_set(m->err, "out of memory");
    for (size_t i = 0; i < N_STORAGES; i++)
        if (!strcmp(cls, storages[i].name)) {
            strcpy(s->dtype, storages[i].dtype);
            s->dtype_size = storages[i].size;
        }
    if (!s->dtype_size)
        return gguf_error_set(m->err, "pickle: %s is not a storage class", cls);
    s->i = t->items[4]->i;
    return push(m, s);
}

static int reduce(machine *m)
{
    pv *args = pop(m), *fn = pop(m);
    if (!args || !fn || args->type != PV_TUPLE || fn->type != PV_GLOBAL)
        return gguf_error_set(m->err, "pickle: REDUCE needs a global and an argument tuple");
    if (!strcmp(fn->s, "collections.OrderedDict"))
        return push(m, new_pv(m, PV_DICT));
    if (!strcmp(fn->s, "torch._utils._rebuild_parameter")) {
        if (args->n < 1)
            return gguf_error_set(m->err, "pickle: _rebuild_parameter without data");
        return push(m, args->items[0]);
    }
    if (!strcmp(fn->s, "torch._utils._rebuild_tensor_v2")) {
        /* (storage, storage_offset, size, stride, requires_grad, hooks[, metadata]) */
        if (args->n < 4 || args->items[0]->type != PV_STORAGE || args->items[1]->type != PV_INT ||
            args->items[2]->type != PV_TUPLE || args->items[3]->type != PV_TUPLE ||
            args->items[2]->n != args->items[3]->n || args->items[2]->n > ST_MAX_DIMS)
            return gguf_error_set(m->err, "pickle: malformed _rebuild_tensor_v2 arguments");
        pv *t = new_pv(m, PV_TENSOR);
        if (!t)
            return gguf_error_set(m->err, "out of memory");
        t->storage = args->items[0];
        t->i = args->items[1]->i;
        strcpy(t->dtype, t->storage->dtype);
        for (size_t d = 0; d < 2 * args->items[2]->n; d++) {
            pv *x = d < args->items[2]->n ? args->items[2]->items[d]
                                          : args->items[3]->items[d - args->items[2]->n];
            if (x->type != PV_INT || x->i < 0)
                return gguf_error_set(m->err, "pickle: bad tensor size or stride");
            if (add_item(t, x))
                return gguf_error_set(m->err, "out of memory");
        }
        return push(m, t);
    }
    return gguf_error_set(m->err, "pickle: %s cannot be called here", fn->s);
}

static int set_items(machine *m, long mk)
{
    if (mk < 1 || (m->sp - (size_t)mk - 1) % 2)
        return gguf_error_set(m->err, "pickle: SETITEMS without a dict");
    pv *d = m->stack[mk - 1];
    if (d->type != PV_DICT)
        return gguf_error_set(m->err, "pickle: SETITEMS on a non-dict");
    for (size_t i = (size_t)mk + 1; i < m->sp; i++)
        if (add_item(d, m->stack[i]))
            return gguf_error_set(m->err, "out of memory");
    m->sp = (size_t)mk;
    return 0;
}

/* ========================================================================
 * The machine
 * ======================================================================== */

/* The bytes of the pickle being run: the current position, the end, and
 * the start (for "pickle byte N" in messages). */
typedef struct cursor_pk {
    const uint8_t *p, *end, *start;
} cursor_pk;

/* n more bytes are there, else a "truncated" error. */
static int need(machine *m, const cursor_pk *c, size_t n)
{
    if ((size_t)(c->end - c->p) < n)
        return gguf_error_set(m->err, "pickle byte %zu: truncated", (size_t)(c->p - c->start));
    return 0;
}

/* A little-endian unsigned number of w bytes (w <= 8, checked by need). */
static uint64_t read_le(cursor_pk *c, int w)
{
    uint64_t n = 0;
    for (int i = 0; i < w; i++)
        n |= (uint64_t)c->p[i] << (8 * i);
    c->p += w;
    return n;
}

static int push_int(machine *m, uint64_t n)
{
    pv *v = new_pv(m, PV_INT);
    if (!v)
        return gguf_error_set(m->err, "out of memory");
    v->i = (int64_t)n;
    return push(m, v);
}

/* Numbers: BININT, BININT1, BININT2, LONG1, BINFLOAT, NEWTRUE, NEWFALSE. */
static int op_number(machine *m, uint8_t op, cursor_pk *c, size_t at)
{
    pv *v;
    switch (op) {
    case 'J':
        if (need(m, c, 4))
            return -1;
        return push_int(m, (uint64_t)(int64_t)(int32_t)(uint32_t)read_le(c, 4));
    case 'K': return need(m, c, 1) ? -1 : push_int(m, read_le(c, 1));
    case 'M': return need(m, c, 2) ? -1 : push_int(m, read_le(c, 2));
    case 0x8a: { /* LONG1: a length byte, then that many bytes, two's complement */
        if (need(m, c, 1))
            return -1;
        uint8_t len = *c->p++;
        if (need(m, c, len))
            return -1;
        if (len > 8)
            return gguf_error_set(m->err, "pickle byte %zu: integer too large", at);
        const uint8_t last = len ? c->p[len - 1] : 0;
        uint64_t n = read_le(c, len);
        if (len && len < 8 && (last & 0x80))
            n |= ~0ull << (8 * len);
        return push_int(m, n);
    }
    case 'G': { /* BINFLOAT, big-endian */
        if (need(m, c, 8))
            return -1;
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++)
            bits = bits << 8 | c->p[i];
        c->p += 8;
        if (!(v = new_pv(m, PV_FLOAT)))
            return gguf_error_set(m->err, "out of memory");
        memcpy(&v->f, &bits, 8);
        return push(m, v);
    }
    default: /* NEWTRUE, NEWFALSE */
        if (!(v = new_pv(m, PV_BOOL)))
            return gguf_error_set(m->err, "out of memory");
        v->i = op == 0x88;
        return push(m, v);
    }
}

/* Strings and bytes with a 1-, 4- or 8-byte length. */
static int op_string(machine *m, uint8_t op, cursor_pk *c, size_t at)
{
    int w = op == 'X' || op == 'B' ? 4 : op == 0x8d || op == 0x8e ? 8 : 1;
    if (need(m, c, (size_t)w))
        return -1;
    uint64_t n = read_le(c, w);
    if (n > (uint64_t)(c->end - c->p))
        return gguf_error_set(m->err, "pickle byte %zu: string runs past the end", at);
    pv *v = new_pv(m, PV_STR);
    if (!v || !(v->s = malloc((size_t)n + 1)))
        return gguf_error_set(m->err, "out of memory");
    memcpy(v->s, c->p, (size_t)n);
    v->s[n] = 0;
    v->len = (size_t)n;
    c->p += n;
    return push(m, v);
}

/* TUPLE1..3: the top one to three items into a tuple. */
static int op_small_tuple(machine *m, uint8_t op, size_t at)
{
    int k = op - 0x84;
    pv *v = new_pv(m, PV_TUPLE);
    if (!v)
        return gguf_error_set(m->err, "out of memory");
    if (m->sp < (size_t)k)
        return gguf_error_set(m->err, "pickle byte %zu: stack underflow", at);
    for (int i = k; i > 0; i--) {
        pv *x = m->stack[m->sp - (size_t)i];
        if (x->type == PV_MARK || add_item(v, x))
            return gguf_error_set(m->err, "pickle byte %zu: bad tuple", at);
    }
    m->sp -= (size_t)k;
    return push(m, v);
}

/* Building containers: TUPLE, LIST, DICT from a mark; SETITEM(S),
 * APPEND(S); BUILD (its state is ignored: OrderedDict metadata). */
static int op_container(machine *m, uint8_t op, size_t at)
{
    pv *v, *a, *b;
    long mk;
    switch (op) {
    case 't': return pop_to_mark(m, v = new_pv(m, PV_TUPLE)) || push(m, v) ? -1 : 0;
    case 'l': return pop_to_mark(m, v = new_pv(m, PV_LIST)) || push(m, v) ? -1 : 0;
    case 'd':
        if (pop_to_mark(m, v = new_pv(m, PV_DICT)))
            return -1;
        if (v->n % 2)
            return gguf_error_set(m->err, "pickle byte %zu: DICT with an odd item count", at);
        return push(m, v);
    case 's': /* SETITEM */
        b = pop(m), a = pop(m);
        if (!a || !b || m->sp == 0 || m->stack[m->sp - 1]->type != PV_DICT)
            return gguf_error_set(m->err, "pickle byte %zu: bad SETITEM", at);
        if (add_item(m->stack[m->sp - 1], a) || add_item(m->stack[m->sp - 1], b))
            return gguf_error_set(m->err, "out of memory");
        return 0;
    case 'u':
        if ((mk = find_mark(m)) < 0)
            return gguf_error_set(m->err, "pickle byte %zu: SETITEMS without a mark", at);
        return set_items(m, mk);
    case 'a': /* APPEND */
        a = pop(m);
        if (!a || m->sp == 0 || m->stack[m->sp - 1]->type != PV_LIST || add_item(m->stack[m->sp - 1], a))
            return gguf_error_set(m->err, "pickle byte %zu: bad APPEND", at);
        return 0;
    case 'e': /* APPENDS */
        if ((mk = find_mark(m)) < 1 || m->stack[mk - 1]->type != PV_LIST)
            return gguf_error_set(m->err, "pickle byte %zu: bad APPENDS", at);
        for (size_t i = (size_t)mk + 1; i < m->sp; i++)
            if (add_item(m->stack[mk - 1], m->stack[i]))
                return gguf_error_set(m->err, "out of memory");
        m->sp = (size_t)mk;
        return 0;
    default: /* BUILD */
        if (!pop(m) || m->sp == 0)
            return gguf_error_set(m->err, "pickle byte %zu: bad BUILD", at);
        return 0;
    }
}

/* The memo: BINPUT, LONG_BINPUT, MEMOIZE, BINGET, LONG_BINGET. */
static int op_memo(machine *m, uint8_t op, cursor_pk *c)
{
    switch (op) {
    case 'q': return need(m, c, 1) || memo_put(m, read_le(c, 1)) ? -1 : 0;
    case 'r': return need(m, c, 4) || memo_put(m, read_le(c, 4)) ? -1 : 0;
    case 0x94: return memo_put(m, m->memo_count) ? -1 : 0; /* MEMOIZE: len(memo) */
    case 'h': return need(m, c, 1) || memo_get(m, read_le(c, 1)) ? -1 : 0;
    default: return need(m, c, 4) || memo_get(m, read_le(c, 4)) ? -1 : 0;
    }
}

/* Names and calls: GLOBAL, STACK_GLOBAL (only the allowed names of
 * make_global), BINPERSID (storage references) and REDUCE. Nothing is
 * ever executed: a call is interpreted only for the callables make_global
 * accepts. */
static int op_callable(machine *m, uint8_t op, cursor_pk *c, size_t at)
{
    pv *a, *b;
    switch (op) {
    case 'c': { /* GLOBAL "module\nname\n" */
        const uint8_t *nl1 = memchr(c->p, '\n', (size_t)(c->end - c->p));
        const uint8_t *nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)(c->end - nl1 - 1)) : NULL;
        if (!nl2)
            return gguf_error_set(m->err, "pickle byte %zu: truncated GLOBAL", at);
        if (make_global(m, (const char *)c->p, (size_t)(nl1 - c->p), (const char *)nl1 + 1,
                        (size_t)(nl2 - nl1 - 1)))
            return -1;
        c->p = nl2 + 1;
        return 0;
    }
    case 0x93: /* STACK_GLOBAL */
        b = pop(m), a = pop(m);
        if (!a || !b || a->type != PV_STR || b->type != PV_STR)
            return gguf_error_set(m->err, "pickle byte %zu: bad STACK_GLOBAL", at);
        return make_global(m, a->s, a->len, b->s, b->len);
    case 'Q': return persistent_load(m);
    default: return reduce(m); /* 'R' */
    }
}

/* One opcode other than STOP. */
static int step(machine *m, uint8_t op, cursor_pk *c, size_t at)
{
    switch (op) {
    case 0x80: return need(m, c, 1) ? -1 : (c->p++, 0); /* PROTO */
    case 0x95: return need(m, c, 8) ? -1 : (c->p += 8, 0); /* FRAME */
    case '(': return push(m, new_pv(m, PV_MARK));
    case '}': return push(m, new_pv(m, PV_DICT));
    case ']': return push(m, new_pv(m, PV_LIST));
    case ')': return push(m, new_pv(m, PV_TUPLE));
    case 'N': return push(m, new_pv(m, PV_NONE));
    case 0x88: case 0x89: case 'J': case 'K': case 'M': case 0x8a: case 'G':
        return op_number(m, op, c, at);
    case 'X': case 0x8c: case 0x8d: case 'B': case 'C': case 0x8e:
        return op_string(m, op, c, at);
    case 0x85: case 0x86: case 0x87:
        return op_small_tuple(m, op, at);
    case 't': case 'l': case 'd': case 's': case 'u': case 'a': case 'e': case 'b':
        return op_container(m, op, at);
    case 'q': case 'r': case 0x94: case 'h': case 'j':
        return op_memo(m, op, c);
    case 'c': case 0x93: case 'Q': case 'R':
        return op_callable(m, op, c, at);
    case '0':
        return pop(m) ? 0 : gguf_error_set(m->err, "pickle byte %zu: bad POP", at);
    case '2':
        if (m->sp == 0 || push(m, m->stack[m->sp - 1]))
            return gguf_error_set(m->err, "pickle byte %zu: bad DUP", at);
        return 0;
    default:
        return gguf_error_set(m->err, "pickle byte %zu: unsupported opcode 0x%02x", at, op);
    }
}

/* Runs the pickle p[0..size) on the machine up to STOP; the value left on
 * the stack is the result. */
static int run(machine *m, const uint8_t *p, size_t size, pv **result)
{
    cursor_pk c = { p, p + size, p };
    while (c.p < c.end) {
        size_t at = (size_t)(c.p - c.start);
        uint8_t op = *c.p++;
        if (op == '.') { /* STOP */
            if (!(*result = pop(m)))
                return gguf_error_set(m->err, "pickle: STOP with an empty stack");
            return 0;
        }
        if (step(m, op, &c, at))
            return -1;
    }
    return gguf_error_set(m->err, "pickle: no STOP");
}

/* ========================================================================
 * Archive → tensors
 * ======================================================================== */

typedef struct torch_state {
    zip_archive zip;
} torch_state;

static int verify_state(const void *p, gguf_error *err)
{
    const torch_state *s = p;
    return zip_recheck(&s->zip, err);
}

static void free_state(void *p)
{
    torch_state *s = p;
    if (s) {
        zip_free(&s->zip);
        free(s);
    }
}

static bool is_tensor_dict(const pv *d)
{
    if (d->type != PV_DICT || d->n == 0)
        return false;
    for (size_t i = 0; i < d->n; i += 2)
        if (d->items[i]->type != PV_STR || d->items[i + 1]->type != PV_TENSOR)
            return false;
    return true;
}

static int make_tensors(zip_archive *z, const char *prefix, const pv *d, st_file *f, gguf_error *err)
{
    if (!(f->tensors = calloc(d->n / 2 + 1, sizeof *f->tensors)))
        return gguf_error_set(err, "out of memory");
    for (size_t i = 0; i < d->n; i += 2) {
        const pv *name = d->items[i], *t = d->items[i + 1];
        const pv *st = t->storage;
        st_tensor *o = &f->tensors[f->n];
        size_t dims = t->n / 2;
        /* contiguous row-major: stride[d] = product of the sizes after d */
        uint64_t count = 1;
        for (size_t k = dims; k-- > 0;) {
            uint64_t sz = (uint64_t)t->items[k]->i, stride = (uint64_t)t->items[dims + k]->i;
            if (sz > 1 && stride != count)
                return gguf_error_set(err, "tensor '%s' is not contiguous in its storage", name->s);
            if (sz && count > UINT64_MAX / sz)
                return gguf_error_set(err, "tensor '%s' is too large", name->s);
            count *= sz;
            o->shape[k] = (int64_t)sz;
        }
        char entry[512];
        snprintf(entry, sizeof entry, "%s/data/%s", prefix, st->s);
        zip_entry *e = zip_find(z, entry);
        if (!e)
            return gguf_error_set(err, "tensor '%s': storage %s is missing from the archive",
                                  name->s, entry);
        uint64_t off = (uint64_t)t->i, esz = (uint64_t)st->dtype_size;
        if (off > e->size / esz || count > e->size / esz - off)
            return gguf_error_set(err, "tensor '%s' runs past the end of storage %s", name->s, entry);
        const uint8_t *data = zip_data(e, err);
        if (!data)
            return -1;
        if (!(o->name = strdup(name->s)))
            return gguf_error_set(err, "out of memory");
        strcpy(o->dtype, t->dtype);
        o->n_dims = (int)dims;
        o->data = data + off * esz;
        o->nbytes = count * esz;
        f->n++;
    }
    return 0;
}

int torch_parse(const uint8_t *data, size_t size, st_file *f, gguf_error *err)
{
    memset(f, 0, sizeof *f);
    torch_state *s = calloc(1, sizeof *s);
    if (!s)
        return gguf_error_set(err, "out of memory");
    machine m = { .err = err };
    int rc = -1;
    if (zip_parse(data, size, &s->zip, err))
        goto done;
    /* ".../data.pkl" at the top of the archive's one folder */
    zip_entry *pkl = NULL;
    for (size_t i = 0; i < s->zip.n && !pkl; i++) {
        const char *n = s->zip.entries[i].name, *slash = strchr(n, '/');
        if (slash && !strcmp(slash, "/data.pkl"))
            pkl = &s->zip.entries[i];
    }
    if (!pkl) {
        gguf_error_set(err, "no data.pkl: not a torch.save archive");
        goto done;
    }
    char prefix[256];
    size_t plen = strlen(pkl->name) - strlen("/data.pkl");
    if (plen >= sizeof prefix) {
        gguf_error_set(err, "archive folder name too long");
        goto done;
    }
    memcpy(prefix, pkl->name, plen);
    prefix[plen] = 0;
    const uint8_t *pk = zip_data(pkl, err);
    pv *root = NULL;
    if (!pk || run(&m, pk, (size_t)pkl->size, &root))
        goto done;
    const pv *dict = NULL;
    if (is_tensor_dict(root))
        dict = root;
    for (size_t i = 0; !dict && root->type == PV_DICT && i < root->n; i += 2)
        if (is_tensor_dict(root->items[i + 1]))
            dict = root->items[i + 1];
    if (!dict) {
        gguf_error_set(err, "no state dict (a dict of tensors) in data.pkl");
        goto done;
    }
    if (make_tensors(&s->zip, prefix, dict, f, err))
        goto done;
    f->owner = s;
    f->free_owner = free_state;
    f->verify_owner = verify_state;
    s = NULL;
    rc = 0;
done:
    free_machine(&m);
    if (rc) {
        st_close(f);
        free_state(s);
    }
    return rc;
}

int torch_open(const char *path, st_file *f, gguf_error *err)
{
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return gguf_error_set(err, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        return gguf_error_set(err, "not a regular, non-empty file");
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return gguf_error_set(err, "cannot map: %s", strerror(errno));
    if (torch_parse(map, size, f, err)) {
        char kb[256];
        const char *kind = gguf_foreign_kind(map, size, size, kb, sizeof kb);
        if (kind && strncmp(kind, "a zip archive", 13) && strncmp(kind, "a Python pickle", 15))
            gguf_error_set(err, "not a PyTorch checkpoint but %s", kind);
        munmap(map, size);
        return -1;
    }
    f->map = map;
    f->map_size = size;
    st_mark_mapped(f, map, size); /* stored entries only: deflated ones live in the heap */
    return 0;
}
