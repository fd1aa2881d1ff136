/*
 * mkmeta.c — splits a Meta folder's consolidated.00.pth into N model-parallel
 * shards (consolidated.00.pth … .0{N-1}.pth) the way Meta's checkpoints are
 * sharded, for the converter's merge test.
 *
 *   mkmeta IN_DIR OUT_DIR N
 *
 * Vectors are copied into every shard; tok_embeddings, attention.wo and
 * feed_forward.w2 are split by columns, every other matrix by rows. Each
 * shard is a torch.save archive: stored zip entries, a protocol-2 pickle of
 * an OrderedDict of _rebuild_tensor_v2 calls, one storage per tensor.
 * params.json and tokenizer.model are copied. Test tool: errors exit 1.
 *
 *   mkmeta IN_DIR OUT_DIR N [K:NAME[INDEX]=VALUE ...]
 *
 * Each K:NAME[INDEX]=VALUE writes VALUE (a number, nan, inf or -inf, as
 * strtod reads them) at element INDEX of tensor NAME in shard K, in its
 * dtype: the converter's tests of values that are not finite.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ggufkit/quants.h>

#define TOOL_NAME "mkmeta"
#include "tool_util.h"
#include "torch.h"


/* --- growing byte buffer --------------------------------------------------- */

typedef struct buf {
    uint8_t *p;
    size_t   n, cap;
} buf;

static void put(buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        if (!(b->p = realloc(b->p, b->cap)))
            die("out of memory");
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void put8(buf *b, unsigned v) { uint8_t c = (uint8_t)v; put(b, &c, 1); }
static void put16(buf *b, unsigned v) { put8(b, v & 0xff); put8(b, v >> 8 & 0xff); }
static void put32(buf *b, uint32_t v) { put16(b, v & 0xffff); put16(b, v >> 16); }
static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }
static void pstr(buf *b, const char *s) { put8(b, 'X'); put32(b, (uint32_t)strlen(s)); puts_(b, s); }
static void pint(buf *b, int64_t v) { put8(b, 'J'); put32(b, (uint32_t)v); }

/* CRC-32 (zip's polynomial), bitwise: shards are small. */
static uint32_t crc32_of(const uint8_t *d, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= d[i];
        for (int k = 0; k < 8; k++)
            c = c >> 1 ^ (0xedb88320u & (0u - (c & 1)));
    }
    return ~c;
}

/* --- one shard ------------------------------------------------------------ */

typedef struct entry {
    char name[64];
    buf  data;
} entry;

static void write_zip(const char *path, entry *e, int n)
{
    buf z = { 0 };
    uint32_t *offs = calloc((size_t)n, sizeof *offs), *crcs = calloc((size_t)n, sizeof *crcs);
    for (int i = 0; i < n; i++) {
        crcs[i] = crc32_of(e[i].data.p, e[i].data.n);
        offs[i] = (uint32_t)z.n;
        put32(&z, 0x04034b50); put16(&z, 20); put16(&z, 0); put16(&z, 0);
        put32(&z, 0); put32(&z, crcs[i]); put32(&z, (uint32_t)e[i].data.n);
        put32(&z, (uint32_t)e[i].data.n); put16(&z, (unsigned)strlen(e[i].name)); put16(&z, 0);
        puts_(&z, e[i].name);
        put(&z, e[i].data.p, e[i].data.n);
    }
    size_t cd = z.n;
    for (int i = 0; i < n; i++) {
        put32(&z, 0x02014b50); put16(&z, 20); put16(&z, 20); put16(&z, 0); put16(&z, 0);
        put32(&z, 0); put32(&z, crcs[i]); put32(&z, (uint32_t)e[i].data.n);
        put32(&z, (uint32_t)e[i].data.n); put16(&z, (unsigned)strlen(e[i].name)); put16(&z, 0);
        put16(&z, 0); put16(&z, 0); put16(&z, 0); put32(&z, 0); put32(&z, offs[i]);
        puts_(&z, e[i].name);
    }
    size_t cd_size = z.n - cd;
    put32(&z, 0x06054b50); put16(&z, 0); put16(&z, 0); put16(&z, (unsigned)n); put16(&z, (unsigned)n);
    put32(&z, (uint32_t)cd_size); put32(&z, (uint32_t)cd); put16(&z, 0);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(z.p, 1, z.n, fp) != z.n || fclose(fp))
        die("cannot write a shard");
    free(z.p);
    free(offs);
    free(crcs);
}

static bool split_by_columns(const char *name)
{
    size_t n = strlen(name);
    return !strncmp(name, "tok_embeddings.", 15) ||
           (n > 20 && !strcmp(name + n - 20, ".attention.wo.weight")) ||
           (n > 23 && !strcmp(name + n - 23, ".feed_forward.w2.weight"));
}

static const char *storage_class(const char *dtype)
{
    return !strcmp(dtype, "F32") ? "FloatStorage" : !strcmp(dtype, "F16") ? "HalfStorage"
         : !strcmp(dtype, "BF16") ? "BFloat16Storage" : NULL;
}

/* K:NAME[INDEX]=VALUE: a value to plant in shard K. */
typedef struct poke {
    int      shard;
    char     name[96];
    uint64_t index;
    double   value;
} poke;

static poke *pokes;
static int n_pokes;

static void parse_poke(const char *arg)
{
    poke p;
    char *end;
    const char *colon = strchr(arg, ':'), *open = colon ? strchr(colon, '[') : NULL;
    const char *close = open ? strchr(open, ']') : NULL;
    if (!colon || !open || !close || close[1] != '=' || (size_t)(open - colon - 1) >= sizeof p.name)
        die("bad K:NAME[INDEX]=VALUE");
    p.shard = atoi(arg);
    memcpy(p.name, colon + 1, (size_t)(open - colon - 1));
    p.name[open - colon - 1] = 0;
    p.index = strtoull(open + 1, &end, 10);
    if (end != close)
        die("bad K:NAME[INDEX]=VALUE");
    p.value = strtod(close + 2, &end);
    if (end == close + 2 || *end)
        die("bad K:NAME[INDEX]=VALUE");
    if (!(pokes = realloc(pokes, (size_t)(n_pokes + 1) * sizeof *pokes)))
        die("out of memory");
    pokes[n_pokes++] = p;
}

/* The pokes of shard k into tensor name's bytes d (esize bytes each). */
static void apply_pokes(buf *d, int k, const char *name, const char *dtype, size_t esize)
{
    for (int i = 0; i < n_pokes; i++) {
        if (pokes[i].shard != k || strcmp(pokes[i].name, name))
            continue;
        if (pokes[i].index >= d->n / esize)
            die("a K:NAME[INDEX] past the tensor's end");
        uint8_t *at = d->p + pokes[i].index * esize;
        float v = (float)pokes[i].value;
        uint16_t h = !strcmp(dtype, "F16") ? gguf_f32_to_f16(v) : gguf_f32_to_bf16(v);
        memcpy(at, esize == 4 ? (const void *)&v : (const void *)&h, esize);
    }
}

/* Shard k of n of every tensor of f, as OUT/consolidated.0k.pth. */
static void write_shard(const st_file *f, int k, int n, const char *out)
{
    entry *e = calloc(f->n + 2, sizeof *e);
    buf *pk = &e[0].data;
    snprintf(e[0].name, sizeof e[0].name, "consolidated/data.pkl");
    put8(pk, 0x80); put8(pk, 2);
    puts_(pk, "ccollections\nOrderedDict\n)R(");
    for (size_t i = 0; i < f->n; i++) {
        const st_tensor *t = &f->tensors[i];
        const char *cls = storage_class(t->dtype);
        if (!cls || t->n_dims > 2)
            die("unsupported tensor");
        size_t esize = !strcmp(t->dtype, "F32") ? 4 : 2;
        int64_t rows = t->shape[0], cols = t->n_dims == 2 ? t->shape[1] : 1;
        bool by_cols = split_by_columns(t->name);
        int64_t r = rows, c = cols;
        if (t->n_dims == 2) {
            if (by_cols ? cols % n : rows % n)
                die("a tensor does not split evenly");
            if (by_cols)
                c = cols / n;
            else
                r = rows / n;
        }
        buf *d = &e[i + 1].data;
        snprintf(e[i + 1].name, sizeof e[i + 1].name, "consolidated/data/%zu", i);
        for (int64_t y = 0; y < r; y++) {
            int64_t sy = t->n_dims == 2 && !by_cols ? k * r + y : y;
            int64_t sx = t->n_dims == 2 && by_cols ? k * c : 0;
            put(d, t->data + (size_t)(sy * cols + sx) * esize, (size_t)c * esize);
        }
        apply_pokes(d, k, t->name, t->dtype, esize);
        char key[32];
        snprintf(key, sizeof key, "%zu", i);
        pstr(pk, t->name);
        puts_(pk, "ctorch._utils\n_rebuild_tensor_v2\n((");
        pstr(pk, "storage");
        puts_(pk, "ctorch\n");
        puts_(pk, cls);
        put8(pk, '\n');
        pstr(pk, key);
        pstr(pk, "cpu");
        pint(pk, r * c);
        puts_(pk, "tQ");
        pint(pk, 0);
        put8(pk, '(');
        pint(pk, r);
        if (t->n_dims == 2)
            pint(pk, c);
        put8(pk, 't');
        put8(pk, '(');
        if (t->n_dims == 2)
            pint(pk, c);
        pint(pk, 1);
        put8(pk, 't');
        put8(pk, 0x89);
        puts_(pk, "ccollections\nOrderedDict\n)Rt");
        put8(pk, 'R');
    }
    puts_(pk, "u.");
    snprintf(e[f->n + 1].name, sizeof e[f->n + 1].name, "consolidated/version");
    put(&e[f->n + 1].data, "3\n", 2);
    char path[4096];
    snprintf(path, sizeof path, "%s/consolidated.%02d.pth", out, k);
    write_zip(path, e, (int)f->n + 2);
    for (size_t i = 0; i < f->n + 2; i++)
        free(e[i].data.p);
    free(e);
}

static void copy_file(const char *in_dir, const char *out_dir, const char *name)
{
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s/%s", in_dir, name);
    snprintf(b, sizeof b, "%s/%s", out_dir, name);
    FILE *in = fopen(a, "rb"), *out = fopen(b, "wb");
    if (!in || !out)
        die("cannot copy params.json / tokenizer.model");
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0)
        if (fwrite(chunk, 1, n, out) != n)
            die("write error");
    fclose(in);
    if (fclose(out))
        die("write error");
}

int main(int argc, char **argv)
{
    if (argc < 4 || atoi(argv[3]) < 1)
        die("usage: mkmeta IN_DIR OUT_DIR N [K:NAME[INDEX]=VALUE ...]");
    int n = atoi(argv[3]);
    for (int i = 4; i < argc; i++)
        parse_poke(argv[i]);
    char path[4096];
    snprintf(path, sizeof path, "%s/consolidated.00.pth", argv[1]);
    st_file f;
    gguf_error err;
    if (torch_open(path, &f, &err)) {
        fprintf(stderr, "mkmeta: %s: %s\n", path, err.msg);
        return 1;
    }
    mkdir(argv[2], 0755);
    for (int k = 0; k < n; k++)
        write_shard(&f, k, n, argv[2]);
    copy_file(argv[1], argv[2], "params.json");
    copy_file(argv[1], argv[2], "tokenizer.model");
    st_close(&f);
    free(pokes);
    return 0;
}
