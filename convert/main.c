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
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "args.h"
#include "hf.h"
#include "llama2c.h"
#include "meta.h"
#include "outpath.h"
#include "override.h"
#include "signals.h"
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
        "  --tensor-order name|file   a safetensors file's tensors in name order (default,\n"
        "                             as llama.cpp e21cdc11) or as stored (as c392e50)\n"
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

/* Appends "-PART" to out with spaces (and '/') as '-', as gguf-py's
 * naming_convention does; upper-cased when upper. */
static void name_part(char *out, size_t cap, const char *part, bool dash, bool upper)
{
    if (!part)
        return;
    while (*part == ' ' || *part == '\t' || *part == '\n')
        part++;
    size_t len = strlen(part), n = strlen(out);
    while (len && (part[len - 1] == ' ' || part[len - 1] == '\t' || part[len - 1] == '\n'))
        len--;
    if (dash && n + 1 < cap)
        out[n++] = '-';
    for (size_t i = 0; i < len && n + 1 < cap; i++) {
        char c = part[i] == ' ' || part[i] == '/' ? '-' : part[i];
        out[n++] = upper ? (char)toupper((unsigned char)c) : c;
    }
    out[n] = 0;
}

/* The default output file name of convert_hf_to_gguf.py (gguf-py's
 * naming_convention): {basename or name}-{size label}-{finetune}-{version}-
 * {OUTTYPE}.gguf, or {…}-vocab.gguf for --vocab-only; general.* values
 * given with --metadata take part. */
static void default_file_name(const src_model *m, const convert_options *o, char *out, size_t cap)
{
    const json_value *md = o->metadata;
    const char *base = json_str(json_get(md, "general.basename"));
    const char *label = json_str(json_get(md, "general.size_label"));
    char computed[32];
    if (!label) {
        convert_size_label(convert_param_count(m), computed, sizeof computed);
        label = computed;
    }
    out[0] = 0;
    name_part(out, cap, base ? base : m->name ? m->name : "ggml-model", false, false);
    if (!o->vocab_only)
        name_part(out, cap, label, true, false);
    name_part(out, cap, json_str(json_get(md, "general.finetune")), true, false);
    name_part(out, cap, json_str(json_get(md, "general.version")), true, false);
    if (o->vocab_only)
        name_part(out, cap, "vocab", true, false);
    else
        name_part(out, cap, convert_outtype_name(convert_resolve_outtype(m, o->outtype)), true, true);
    size_t n = strlen(out);
    snprintf(out + n, cap - n, ".gguf");
}

int main(int argc, char **argv)
{
    cli_cleanup_on_signals();
    convert_options o = { .outtype = OUT_F16 };
    const char *input = NULL, *tokenizer = NULL, *metadata_path = NULL;
    bool file_order = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return cli_close_stdout(TOOL, 0);
        } else if (!strcmp(a, "--version")) {
            cli_print_version(TOOL);
            return cli_close_stdout(TOOL, 0);
        } else if (!strcmp(a, "-o") || !strcmp(a, "--outfile")) {
            if (!v)
                goto missing;
            o.out_path = v, i++;
        } else if (!strcmp(a, "--outtype")) {
            if (!v)
                goto missing;
            if ((o.outtype = parse_outtype(v)) < 0)
                return cli_usage_error(TOOL, "unknown --outtype '%s' (f32, f16, bf16, q8_0, auto)", v);
            i++;
        } else if (!strcmp(a, "--tokenizer")) {
            if (!v)
                goto missing;
            tokenizer = v, i++;
        } else if (!strcmp(a, "--tensor-order")) {
            if (!v)
                goto missing;
            if (strcmp(v, "name") && strcmp(v, "file"))
                return cli_usage_error(TOOL, "unknown --tensor-order '%s' (name, file)", v);
            file_order = !strcmp(v, "file"), i++;
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
        } else if (!strcmp(a, "--split-max-tensors")) {
            long n;
            if (!v)
                goto missing;
            if (!cli_parse_long(v, 1, INT32_MAX, &n))
                return cli_usage_error(TOOL, "bad value '%s' for %s (a whole number from 1 to %d)",
                                       v, a, INT32_MAX);
            o.split_max_tensors = (uint64_t)n, i++;
        } else if (!strcmp(a, "--split-max-size")) {
            if (!v)
                goto missing;
            if (!cli_parse_size(v, &o.split_max_bytes))
                return cli_usage_error(TOOL, "bad value '%s' for %s (N, NK, NM or NG, N ≥ 1)", v, a);
            i++;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(TOOL, "unknown option '%s'", a);
        } else if (!input) {
            input = a;
        } else {
            return cli_usage_error(TOOL, "more than one input ('%s', '%s')", input, a);
        }
        continue;
    missing:
        return cli_usage_error(TOOL, "%s needs a value", a);
    }
    if (!input)
        return cli_usage_error(TOOL, "missing INPUT (a model folder or a llama2.c checkpoint)");
    if (o.split_max_tensors && o.split_max_bytes)
        return cli_usage_error(TOOL, "--split-max-tensors and --split-max-size cannot be used together");
    struct stat in_st;
    if (stat(input, &in_st) != 0) {
        fprintf(stderr, TOOL ": error: %s: %s\n", input, strerror(errno));
        return 1;
    }

    gguf_error err = { 0 };
    json_value *metadata = NULL;
    if (metadata_path && !(metadata = override_load(metadata_path, &err))) {
        fprintf(stderr, TOOL ": error: %s: %s\n", metadata_path, err.msg);
        return 1;
    }
    o.metadata = metadata;
    src_model m = { 0 };
    int rc0 = llama2c_detect(input) ? llama2c_open(input, tokenizer, &m, &err)
            : meta_detect(input)    ? meta_open(input, &m, &err)
                                    : hf_open(input, o.vocab_only, file_order, &m, &err);
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
        /* next to a checkpoint file, inside a model folder */
        char dir[2048], file[1024];
        snprintf(dir, sizeof dir, "%s", input);
        if (llama2c_detect(input)) {
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = 0;
            else
                strcpy(dir, ".");
        }
        default_file_name(&m, &o, file, sizeof file);
        snprintf(def, sizeof def, "%s/%s", dir, file);
        o.out_path = def;
    }
    /* the output may replace nothing the run reads: the checkpoint (every
     * file of its folder), the tokenizer, the metadata file */
    const char *inputs[] = { input, tokenizer, metadata_path };
    o.inputs = inputs;
    o.n_inputs = sizeof inputs / sizeof *inputs;
    int rc = 0;
    if (!o.dry_run && outpath_check(o.out_path, inputs, o.n_inputs, &err)) {
        fprintf(stderr, TOOL ": error: %s: %s\n", o.out_path, err.msg);
        rc = -1;
    } else if ((rc = convert_write(&m, &o, &err)) != 0) {
        fprintf(stderr, TOOL ": error: %s: %s\n", rc == CONVERT_ERR_OUTPUT ? o.out_path : input,
                err.msg);
    }
    src_model_free(&m);
    json_free(metadata);
    return cli_close_stdout(TOOL, rc ? 1 : 0);
}
