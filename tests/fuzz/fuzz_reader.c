/*
 * fuzz_reader.c — libFuzzer harness for the GGUF reader.
 *
 * Feeds arbitrary bytes to gguf_open_memory(), strict and then with
 * GGUF_OPEN_REPAIR (keeping the last or, by the input's last byte, the first
 * of duplicates); on acceptance it touches every kv value, every string,
 * every repair sentence and every tensor byte, so that any bound the
 * validator failed to enforce shows up as an ASan report.
 * Build: make fuzz; run: build-fuzz/fuzz_reader CORPUS_DIR (seed it with the
 * fixture GGUFs and build/tests/tools/mkbad output).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ggufkit/gguf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void touch(gguf_file *f)
{
    volatile uint64_t sink = gguf_file_version(f) + gguf_alignment(f);
    for (uint64_t i = 0; i < gguf_n_repairs(f); i++)
        sink += strlen(gguf_repair_at(f, i));
    for (uint64_t i = 0; i < gguf_n_kv(f); i++) {
        const gguf_kv *kv = gguf_kv_at(f, i);
        sink += gguf_lookup_kv(f, kv->key) == kv;
        if (kv->elem_type == GGUF_VT_STR) {
            for (uint64_t j = 0; j < kv->n; j++)
                if (kv->strs[j].len)
                    sink += (uint8_t)kv->strs[j].ptr[kv->strs[j].len - 1];
        } else {
            for (uint64_t j = 0; j < kv->n; j++)
                sink += (uint64_t)gguf_kv_elem_as_int(kv, j) + (gguf_kv_elem_as_double(kv, j) != 0);
        }
    }
    for (uint64_t i = 0; i < gguf_n_tensors(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        sink += gguf_lookup_tensor(f, t->name) == t;
        if (t->nbytes)
            sink += t->data[0] + t->data[t->nbytes - 1];
    }
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_error err;
    gguf_file *f = gguf_open_memory(data, size, &err);
    if (f)
        touch(f);
    gguf_close(f);
    const unsigned keep = size && (data[size - 1] & 1) ? GGUF_OPEN_KEEP_FIRST : 0u;
    f = gguf_open_memory_flags(data, size, GGUF_OPEN_REPAIR | keep, &err);
    if (f)
        touch(f);
    gguf_close(f);
    return 0;
}
