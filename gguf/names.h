/*
 * names.h — the GGUF metadata keys and tensor-name scheme, in one place.
 *
 * Keys with an architecture part are written with "%s" for the architecture
 * name ("llama", "qwen2"), to be formatted with snprintf. Tensor names follow
 * llama.cpp: "token_embd.weight", "blk.%d.attn_q.weight", ...
 * Not for: per-architecture mapping tables (those live with the converter).
 */
#ifndef GGUF_NAMES_H
#define GGUF_NAMES_H

/* general.* */
#define GGUF_KEY_ARCHITECTURE       "general.architecture"
#define GGUF_KEY_NAME               "general.name"
#define GGUF_KEY_ALIGNMENT          "general.alignment"
#define GGUF_KEY_FILE_TYPE          "general.file_type"
#define GGUF_KEY_QUANT_VERSION      "general.quantization_version"
#define GGUF_KEY_SIZE_LABEL         "general.size_label"

/* split.* (llama.cpp gguf-split) */
#define GGUF_KEY_SPLIT_NO           "split.no"
#define GGUF_KEY_SPLIT_COUNT        "split.count"
#define GGUF_KEY_SPLIT_TENSORS      "split.tensors.count"

/* {arch}.* — format with the architecture name */
#define GGUF_KEY_CONTEXT_LENGTH     "%s.context_length"
#define GGUF_KEY_EMBEDDING_LENGTH   "%s.embedding_length"
#define GGUF_KEY_BLOCK_COUNT        "%s.block_count"
#define GGUF_KEY_FFN_LENGTH         "%s.feed_forward_length"
#define GGUF_KEY_HEAD_COUNT         "%s.attention.head_count"
#define GGUF_KEY_HEAD_COUNT_KV      "%s.attention.head_count_kv"
#define GGUF_KEY_RMS_EPS            "%s.attention.layer_norm_rms_epsilon"
#define GGUF_KEY_ROPE_FREQ_BASE     "%s.rope.freq_base"
#define GGUF_KEY_ROPE_DIM_COUNT     "%s.rope.dimension_count"
#define GGUF_KEY_VOCAB_SIZE         "%s.vocab_size"
#define GGUF_KEY_EXPERT_COUNT       "%s.expert_count"

/* tokenizer.ggml.* */
#define GGUF_KEY_TOK_MODEL          "tokenizer.ggml.model"
#define GGUF_KEY_TOK_PRE            "tokenizer.ggml.pre"
#define GGUF_KEY_TOK_TOKENS         "tokenizer.ggml.tokens"
#define GGUF_KEY_TOK_SCORES         "tokenizer.ggml.scores"
#define GGUF_KEY_TOK_TYPES          "tokenizer.ggml.token_type"
#define GGUF_KEY_TOK_MERGES         "tokenizer.ggml.merges"
#define GGUF_KEY_TOK_BOS            "tokenizer.ggml.bos_token_id"
#define GGUF_KEY_TOK_EOS            "tokenizer.ggml.eos_token_id"
#define GGUF_KEY_TOK_UNK            "tokenizer.ggml.unknown_token_id"
#define GGUF_KEY_TOK_PAD            "tokenizer.ggml.padding_token_id"
#define GGUF_KEY_TOK_ADD_BOS        "tokenizer.ggml.add_bos_token"
#define GGUF_KEY_TOK_ADD_EOS        "tokenizer.ggml.add_eos_token"
#define GGUF_KEY_CHAT_TEMPLATE      "tokenizer.chat_template"

/* Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type). */
enum gguf_token_type {
    GGUF_TOKEN_UNDEFINED = 0, GGUF_TOKEN_NORMAL = 1, GGUF_TOKEN_UNKNOWN = 2,
    GGUF_TOKEN_CONTROL = 3, GGUF_TOKEN_USER_DEFINED = 4, GGUF_TOKEN_UNUSED = 5,
    GGUF_TOKEN_BYTE = 6
};

/* Tensor names: global and per block ("%d" = block index). */
#define GGUF_T_TOKEN_EMBD           "token_embd.weight"
#define GGUF_T_OUTPUT_NORM          "output_norm.weight"
#define GGUF_T_OUTPUT               "output.weight"
#define GGUF_T_ROPE_FREQS           "rope_freqs.weight"
#define GGUF_T_ATTN_NORM            "blk.%d.attn_norm.weight"
#define GGUF_T_ATTN_Q               "blk.%d.attn_q.weight"
#define GGUF_T_ATTN_K               "blk.%d.attn_k.weight"
#define GGUF_T_ATTN_V               "blk.%d.attn_v.weight"
#define GGUF_T_ATTN_Q_BIAS          "blk.%d.attn_q.bias"
#define GGUF_T_ATTN_K_BIAS          "blk.%d.attn_k.bias"
#define GGUF_T_ATTN_V_BIAS          "blk.%d.attn_v.bias"
#define GGUF_T_ATTN_OUT             "blk.%d.attn_output.weight"
#define GGUF_T_FFN_NORM             "blk.%d.ffn_norm.weight"
#define GGUF_T_FFN_GATE             "blk.%d.ffn_gate.weight"
#define GGUF_T_FFN_UP               "blk.%d.ffn_up.weight"
#define GGUF_T_FFN_DOWN             "blk.%d.ffn_down.weight"

#endif
