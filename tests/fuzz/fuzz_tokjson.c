/*
 * fuzz_tokjson.c — libFuzzer harness for tokenizer.json vocabularies: any
 * bytes that parse as JSON go through pre-tokenizer recognition and both
 * vocabulary builders (byte-level BPE, with and without a config vocab
 * size, SentencePiece-style and Gemma 4's with the document as its own
 * config).
 */
#include <stddef.h>
#include <stdint.h>

#include "tokjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_error err;
    json_value *tj = json_parse((const char *)data, size, &err);
    if (!tj)
        return 0;
    vocab v;
    (void)tokjson_kind(tj);
    if (vocab_from_bpe_json(&v, tj, -1, &err) == 0)
        vocab_free(&v);
    if (vocab_from_bpe_json(&v, tj, 1000, &err) == 0)
        vocab_free(&v);
    if (vocab_from_spm_json(&v, tj, tj, &err) == 0)
        vocab_free(&v);
    if (vocab_from_gemma4_json(&v, tj, tj, &err) == 0)
        vocab_free(&v);
    json_free(tj);
    return 0;
}
