/*
 * chat_template.h — a model's chat templates from every place a Hugging
 * Face folder ships them, read as llama.cpp e21cdc11's gguf-py reads them
 * (SpecialVocab._load) and written as its GGUFWriter.add_chat_template
 * writes them; gguf-convert and gguf-edit --chat-template share it.
 *
 * Where they come from, first found wins: tokenizer_config.json's
 * "chat_template" (also when it is null: then none); else chat_template.jinja
 * (with additional_chat_templates/NAME.jinja as named ones beside it, the
 * folder's own called "default"); else chat_template.json's "chat_template".
 * No tokenizer_config.json (or an empty one): no template, as gguf-py. A
 * value is a string (the template) or a list of {"name", "template"}: each
 * named one becomes tokenizer.chat_template.NAME (NAME with every character
 * but [A-Za-z0-9] turned into '_'), their names the array
 * tokenizer.chat_templates, and "default" tokenizer.chat_template, in that
 * key order. Files are read as Python reads text: UTF-8, "\r\n" and "\r"
 * become "\n".
 */
#ifndef COMMON_CHAT_TEMPLATE_H
#define COMMON_CHAT_TEMPLATE_H

#include <stddef.h>

#include <ggufkit/gguf.h>

#include "json.h"

typedef struct chat_templates {
    char  *deflt;  /* tokenizer.chat_template, or NULL */
    char **names;  /* tokenizer.chat_template.NAME, in the order given */
    char **texts;
    size_t n;
} chat_templates;

/* The templates of the model folder dir, whose tokenizer_config.json is
 * tok_config (NULL: the folder has none). 0, or -1 with err naming the file. */
int chat_templates_from_folder(chat_templates *ct, const char *dir, const json_value *tok_config,
                               gguf_error *err);

/* From one JSON value: a string, a list of {"name", "template"}, or null
 * (none). 0, or -1 with err (another type, a malformed entry, a name given
 * twice). */
int chat_templates_from_json(chat_templates *ct, const json_value *v, gguf_error *err);

/* From a text file (a .jinja): its text as the default template. */
int chat_templates_from_text_file(chat_templates *ct, const char *path, gguf_error *err);

/* Writes the keys (nothing for none). 0, or -1 with err (out of memory). */
int chat_templates_write(const chat_templates *ct, gguf_writer *w, gguf_error *err);

void chat_templates_free(chat_templates *ct);

#endif
