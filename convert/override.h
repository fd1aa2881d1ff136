/*
 * override.h — `--metadata FILE`: authorship overrides of general.* keys,
 * as llama.cpp's converter reads them (gguf-py Metadata.load).
 *
 * FILE is a JSON object keyed by GGUF key names: the string keys
 * general.name, author, version, organization, finetune, basename,
 * description, quantized_by, size_label, license (a string, or a list
 * joined with ","), license.name, license.link, url, doi, uuid, repo_url,
 * source.url, source.doi, source.uuid, source.repo_url; the string lists
 * general.tags and general.languages; and general.base_models /
 * general.datasets, lists of objects (name, author, version, organization,
 * description, url, doi, uuid, repo_url) written as general.base_model.N.*
 * and general.dataset.N.* with their counts. Other keys are ignored, as
 * llama.cpp ignores them; a listed key of the wrong JSON type is an error.
 * Not for: {arch}.* or tokenizer keys, which only the checkpoint decides.
 */
#ifndef CONVERT_OVERRIDE_H
#define CONVERT_OVERRIDE_H

#include <ggufkit/gguf.h>
#include "json.h"

/* Reads and checks FILE. NULL with err (naming the key at fault). */
json_value *override_load(const char *path, gguf_error *err);

/* Checks a parsed document (override_load's second half). 0, or -1. */
int override_check(const json_value *doc, gguf_error *err);

/* general.name's override, or NULL (it also names the default output). */
const char *override_name(const json_value *doc);

/* Writes the overrides into w, replacing keys already set. 0, or -1. */
int override_apply(const json_value *doc, gguf_writer *w, gguf_error *err);

#endif
