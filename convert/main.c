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
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "args.h"
#include "hf.h"
#include "llama2c.h"
#include "lora.h"
#include "meta.h"
#include "mmproj.h"
#include "opts.h"
#include "outpath.h"
#include "override.h"
#include "preset.h"
#include "signals.h"
#include "write.h"

#define TOOL "gguf-convert"

/* What the command line gives. */
typedef struct args {
    convert_options o;
    const char *input, *tokenizer, *metadata_path, *base;
    int         tensor_order; /* 0 name, 1 file */
    bool        mmproj;
} args;

static const char *const outtypes[] = { "f32", "f16", "bf16", "q8_0", "auto", NULL }; /* enum outtype */
static const char *const tensor_orders[] = { "name", "file", NULL };

/* --outtype: one of outtypes, else a gguf-quantize preset (one pass: the
 * bf16 conversion quantized as gguf-quantize would, without the file). */
static int opt_outtype(opts_call *c)
{
    args *g = c->user;
    for (int i = 0; outtypes[i]; i++)
        if (!strcasecmp(c->value, outtypes[i])) {
            g->o.outtype = i;
            g->o.preset = NULL;
            return OPTS_OK;
        }
    const preset *p = preset_find(c->value);
    if (!p || p->copy)
        return cli_usage_error(TOOL, "unknown --outtype '%s' (f32, f16, bf16, q8_0, auto or a "
                               "gguf-quantize preset such as Q4_K_M)", c->value);
    g->o.outtype = OUT_BF16;
    g->o.preset = p;
    return OPTS_OK;
}

static void usage(FILE *fp);

static const opt options[] = {
    { OPT_STRING, "--outfile", "-o", "FILE", offsetof(args, o.out_path),
      .help = "output path (default: NAME-SIZE-OUTTYPE.gguf in INPUT)" },
    { OPT_CALL, "--outtype", .arg = "T", .call = opt_outtype,
      .what = "f32, f16, bf16, q8_0, auto or a gguf-quantize preset such as Q4_K_M",
      .help = "f32, f16, bf16, q8_0 or auto (default: f16; auto as\n"
              "llama.cpp: f16 if the checkpoint is f16, else bf16),\n"
              "or a gguf-quantize preset (Q4_K_M, Q6_K, ...): the bf16\n"
              "conversion quantized in the same pass, as gguf-quantize\n"
              "PRESET would quantize it" },
    { OPT_STRING, "--imatrix", .arg = "FILE", .off = offsetof(args, o.imatrix_path),
      .help = "with a preset --outtype: importance matrix, as\n"
              "gguf-quantize --imatrix" },
    { OPT_STRING, "--base", .arg = "BASE", .off = offsetof(args, base),
      .help = "with an adapter folder as INPUT: the base model's\n"
              "Hugging Face folder or GGUF" },
    { OPT_STRING, "--tokenizer", .arg = "FILE", .off = offsetof(args, tokenizer),
      .help = "vocabulary of a llama2.c checkpoint (tokenizer.bin\n"
              "or a SentencePiece tokenizer.model)" },
    { OPT_FLAG, "--vocab-only", .off = offsetof(args, o.vocab_only),
      .help = "write only the vocabulary and metadata" },
    { OPT_CHOICE, "--tensor-order", .arg = "name|file", .off = offsetof(args, tensor_order),
      .choices = tensor_orders, .what = "name, file",
      .help = "a safetensors file's tensors in name order (default,\n"
              "as llama.cpp e21cdc11) or as stored (as c392e50)" },
    { OPT_FLAG, "--mmproj", .off = offsetof(args, mmproj),
      .help = "write the vision tower and projector of a multimodal\n"
              "folder (a clip GGUF for llama.cpp's --mmproj)" },
    { OPT_FLAG, "--dry-run", .off = offsetof(args, o.dry_run),
      .help = "print the tensor plan and write nothing" },
    { OPT_STRING, "--metadata", .arg = "FILE", .off = offsetof(args, metadata_path),
      .help = "JSON overrides of general.* keys (name, author,\n"
              "version, license, tags, base_models, ...)" },
    { OPT_U64, "--split-max-tensors", .arg = "N", .off = offsetof(args, o.split_max_tensors),
      .lo = 1, .hi = INT32_MAX, .what = "a whole number from 1 to 2147483647",
      .help = "at most N tensors per shard" },
    { OPT_SIZE, "--split-max-size", .arg = "N[K|M|G]", .off = offsetof(args, o.split_max_bytes),
      .what = "N, NK, NM or NG, N ≥ 1", .help = "at most N bytes per shard" },
    { OPT_FLAG, "--quiet", "-q", .off = offsetof(args, o.quiet),
      .help = "no progress bar and no summary" },
    { OPT_HELP, "--help", "-h", .help = "this text" },
    { OPT_VERSION, .name = "--version" },
    OPTS_END
};

/* The one input. */
static int operand(void *user, const char *a, bool last)
{
    args *g = user;
    (void)last;
    if (g->input)
        return cli_usage_error(TOOL, "more than one input ('%s', '%s')", g->input, a);
    g->input = a;
    return 0;
}

static int bad_value(const opt *r, const char *name, const char *v)
{
    if (r->kind == OPT_CHOICE)
        return cli_usage_error(TOOL, "unknown %s '%s' (%s)", name, v, r->what);
    return cli_usage_error(TOOL, "bad value '%s' for %s (%s)", v, name, r->what);
}

static const opts_spec spec = { TOOL, options, 27, false, usage, operand, bad_value };

static void usage(FILE *fp)
{
    fputs("usage: " TOOL " [options] INPUT [-o OUT.gguf]\n"
          "\n"
          "INPUT: a Hugging Face model folder (config.json; model*.safetensors or\n"
          "       pytorch_model*.bin, with their index; tokenizer.model, tokenizer_config.json)\n"
          "       or a Meta folder (params.json, consolidated.00.pth, tokenizer.model)\n"
          "       or a llama2.c checkpoint file (v0, v1, v2; with --tokenizer)\n"
          "       or a PEFT LoRA adapter folder (adapter_config.json,\n"
          "       adapter_model.safetensors; with --base; default --outtype f32)\n"
          "\n", fp);
    opts_help(&spec, fp);
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
        convert_size_label(m, computed, sizeof computed);
        label = computed;
    }
    snprintf(out, cap, "%s", m->general_type ? "mmproj-" : ""); /* MmprojModel's prefix */
    name_part(out, cap, base ? base : m->name ? m->name : "ggml-model", false, false);
    if (!o->vocab_only && !m->general_type) /* a projector's has none */
        name_part(out, cap, label, true, false);
    name_part(out, cap, json_str(json_get(md, "general.finetune")), true, false);
    name_part(out, cap, json_str(json_get(md, "general.version")), true, false);
    if (o->vocab_only)
        name_part(out, cap, "vocab", true, false);
    else
        name_part(out, cap, o->preset ? o->preset->name
                                      : convert_outtype_name(convert_resolve_outtype(m, o->outtype)),
                  true, true);
    size_t n = strlen(out);
    snprintf(out + n, cap - n, ".gguf");
}

/* convert_lora_to_gguf.py's default: {name}-{OUTTYPE}-LoRA.gguf in the
 * adapter folder. */
static void adapter_file_name(const src_model *m, int outtype, char *out, size_t cap)
{
    out[0] = 0;
    name_part(out, cap, m->name ? m->name : "ggml-model", false, false);
    name_part(out, cap, convert_outtype_name(convert_resolve_outtype(m, outtype)), true, true);
    name_part(out, cap, "LoRA", true, false);
    size_t n = strlen(out);
    snprintf(out + n, cap - n, ".gguf");
}

int main(int argc, char **argv)
{
    cli_cleanup_on_signals();
    args g = { .o = { .outtype = -1 } };
    int prc = opts_parse(&spec, 0, argc, argv, 1, &g);
    if (prc)
        return prc == OPTS_STOP ? cli_close_stdout(TOOL, 0) : prc;
    convert_options o = g.o;
    const char *input = g.input, *tokenizer = g.tokenizer, *metadata_path = g.metadata_path;
    bool file_order = g.tensor_order == 1;
    if (!input)
        return cli_usage_error(TOOL, "missing INPUT (a model folder or a llama2.c checkpoint)");
    if (o.split_max_tensors && o.split_max_bytes)
        return cli_usage_error(TOOL, "--split-max-tensors and --split-max-size cannot be used together");
    const bool adapter = !g.mmproj && lora_detect(input);
    if (o.imatrix_path && !o.preset)
        return cli_usage_error(TOOL, "--imatrix needs a gguf-quantize preset as --outtype (such as "
                               "Q4_K_M)");
    if (o.preset && (adapter || o.vocab_only || g.mmproj))
        return cli_usage_error(TOOL, "a preset --outtype (%s) does not apply to %s", o.preset->name,
                               adapter ? "a LoRA adapter" : g.mmproj ? "--mmproj" : "--vocab-only");
    if (o.outtype < 0)
        o.outtype = adapter ? OUT_F32 : OUT_F16; /* each converter's default */
    if (adapter) {
        if (!g.base)
            return cli_usage_error(TOOL, "%s is a LoRA adapter: give its base model with --base "
                                   "(a Hugging Face folder or a GGUF)", input);
        if (o.vocab_only || tokenizer || metadata_path || o.split_max_tensors ||
            o.split_max_bytes || file_order)
            return cli_usage_error(TOOL, "--vocab-only, --tokenizer, --metadata, --tensor-order "
                                   "and --split-* do not apply to an adapter");
    } else if (g.mmproj && (o.vocab_only || tokenizer || g.base)) {
        return cli_usage_error(TOOL, "--mmproj writes a projector: --vocab-only, --tokenizer and "
                               "--base do not apply");
    } else if (g.base) {
        return cli_usage_error(TOOL, "--base applies to a LoRA adapter folder only (%s has no "
                               "adapter_config.json)", input);
    }
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
    int rc0 = g.mmproj  ? mmproj_open(input, &m, &err)
            : adapter   ? lora_open(input, g.base, &m, &err)
            : llama2c_detect(input) ? llama2c_open(input, tokenizer, &m, &err)
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
        if (adapter)
            adapter_file_name(&m, o.outtype, file, sizeof file);
        else
            default_file_name(&m, &o, file, sizeof file);
        snprintf(def, sizeof def, "%s/%s", dir, file);
        o.out_path = def;
    }
    /* the output may replace nothing the run reads: the checkpoint (every
     * file of its folder), the tokenizer, the metadata file */
    const char *inputs[] = { input, tokenizer, metadata_path, g.base, o.imatrix_path };
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
