/*
 * gguf-convert — checkpoints to GGUF, as llama.cpp's converter writes them.
 *
 *   gguf-convert [options] INPUT [-o OUT.gguf]
 *
 * INPUT is a Hugging Face model folder (config.json with *.safetensors or
 * pytorch_model*.bin) or a Meta folder (params.json, consolidated.00.pth). The
 * tensors stream one at a time from the mapped checkpoint to the output,
 * which appears only when complete. Reference: docs/gguf-convert.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "hf.h"
#include "llama2c.h"
#include "meta.h"
#include "override.h"
#include "write.h"

#define TOOL "gguf-convert"

static void usage(FILE *fp)
{
    fprintf(fp,
        "usage: " TOOL " [options] INPUT [-o OUT.gguf]\n"
        "\n"
        "INPUT: a Hugging Face model folder (config.json; model*.safetensors or\n"
        "       pytorch_model*.bin, with their index; tokenizer.model, tokenizer_config.json)\n"
        "       or a Meta folder (params.json, consolidated.00.pth, tokenizer.model)\n"
        "       or a llama2.c checkpoint file (v0, v1, v2; with --tokenizer)\n"
        "\n"
        "  -o, --outfile FILE         output path (default: NAME-SIZE-OUTTYPE.gguf in INPUT)\n"
        "  --outtype T                f32, f16, bf16, q8_0 or auto (default: f16; auto as\n"
        "                             llama.cpp: f16 if the checkpoint is f16, else bf16)\n"
        "  --tokenizer FILE           vocabulary of a llama2.c checkpoint (tokenizer.bin\n"
        "                             or a SentencePiece tokenizer.model)\n"
        "  --vocab-only               write only the vocabulary and metadata\n"
        "  --dry-run                  print the tensor plan and write nothing\n"
        "  --metadata FILE            JSON overrides of general.* keys (name, author,\n"
        "                             version, license, tags, base_models, ...)\n"
        "  --split-max-tensors N      at most N tensors per shard\n"
        "  --split-max-size N[K|M|G]  at most N bytes per shard\n"
        "  -q, --quiet                no progress bar and no summary\n"
        "  -h, --help                 this text\n");
}

static int parse_outtype(const char *s)
{
    static const char *const names[] = { "f32", "f16", "bf16", "q8_0", "auto" };
    for (int i = 0; i < 5; i++)
        if (!strcasecmp(s, names[i]))
            return i;
    return -1;
}

/* "123", "10K", "500M", "2G" → bytes (powers of 1000, as llama.cpp). */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    uint64_t mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1000, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1000 * 1000, end++;
    else if (*end == 'G' || *end == 'g')
        mul = 1000 * 1000 * 1000, end++;
    if (*end || v == 0 || v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

int main(int argc, char **argv)
{
    convert_options o = { .outtype = OUT_F16 };
    const char *input = NULL, *tokenizer = NULL, *metadata_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--outfile")) {
            if (!v)
                goto missing;
            o.out_path = v, i++;
        } else if (!strcmp(a, "--outtype")) {
            if (!v)
                goto missing;
            if ((o.outtype = parse_outtype(v)) < 0) {
                fprintf(stderr, TOOL ": error: unknown --outtype '%s' (f32, f16, bf16, q8_0, auto)\n", v);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--tokenizer")) {
            if (!v)
                goto missing;
            tokenizer = v, i++;
        } else if (!strcmp(a, "--vocab-only")) {
            o.vocab_only = true;
        } else if (!strcmp(a, "--metadata")) {
            if (!v)
                goto missing;
            metadata_path = v, i++;
        } else if (!strcmp(a, "--dry-run")) {
            o.dry_run = true;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o.quiet = true;
        } else if (!strcmp(a, "--split-max-tensors") || !strcmp(a, "--split-max-size")) {
            if (!v)
                goto missing;
            bool tensors = !strcmp(a, "--split-max-tensors");
            uint64_t n;
            char *end;
            if (tensors ? (n = strtoull(v, &end, 10)) == 0 || *end : parse_size(v, &n) != 0) {
                fprintf(stderr, TOOL ": error: bad value '%s' for %s\n", v, a);
                return 2;
            }
            if (tensors)
                o.split_max_tensors = n;
            else
                o.split_max_bytes = n;
            i++;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, TOOL ": error: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (!input) {
            input = a;
        } else {
            fprintf(stderr, TOOL ": error: more than one input ('%s', '%s')\n", input, a);
            return 2;
        }
        continue;
    missing:
        fprintf(stderr, TOOL ": error: %s needs a value\n", a);
        return 2;
    }
    if (!input) {
        usage(stderr);
        return 2;
    }

    gguf_error err = { { 0 } };
    json_value *metadata = NULL;
    if (metadata_path && !(metadata = override_load(metadata_path, &err))) {
        fprintf(stderr, TOOL ": error: %s: %s\n", metadata_path, err.msg);
        return 1;
    }
    o.metadata = metadata;
    src_model m = { 0 };
    int rc0 = llama2c_detect(input) ? llama2c_open(input, tokenizer, &m, &err)
            : meta_detect(input)    ? meta_open(input, &m, &err)
                                    : hf_open(input, o.vocab_only, &m, &err);
    if (rc0) {
        fprintf(stderr, TOOL ": error: %s: %s\n", input, err.msg);
        json_free(metadata);
        return 1;
    }
    if (override_name(metadata)) { /* names the default output too */
        free(m.name);
        m.name = strdup(override_name(metadata));
    }
    char def[4096];
    if (!o.out_path) {
        char label[32];
        convert_size_label(convert_param_count(&m), label, sizeof label);
        int outtype = convert_resolve_outtype(&m, o.outtype);
        /* next to a checkpoint file, inside a model folder */
        char dir[2048];
        snprintf(dir, sizeof dir, "%s", input);
        if (llama2c_detect(input)) {
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = 0;
            else
                strcpy(dir, ".");
        }
        if (o.vocab_only)
            snprintf(def, sizeof def, "%s/%s-vocab.gguf", dir, m.name);
        else
            snprintf(def, sizeof def, "%s/%s-%s-%s.gguf", dir, m.name, label,
                     convert_outtype_name(outtype));
        o.out_path = def;
    }
    int rc = convert_write(&m, &o, &err);
    if (rc)
        fprintf(stderr, TOOL ": error: %s: %s\n", rc && err.msg[0] ? o.out_path : input, err.msg);
    src_model_free(&m);
    json_free(metadata);
    return rc ? 1 : 0;
}
