/*
 * sum16.h — sixteen float lanes added as ggml's AVX-512 reductions add them
 * (_mm512_reduce_add_ps): lane i with i + 8, then i with i + 4, then
 * (0 + 2) + (1 + 3). The order of every 16-lane sum of gguf-run's f32/f16
 * products and of its softmax and attention rows, and of gguf-edit's LoRA
 * merge (tinyBLAS's sums in llama-export-lora).
 */
#ifndef GGUFKIT_SUM16_H
#define GGUFKIT_SUM16_H

static inline float sum16_reduce(const float e[16])
{
    float t[8], q[4];
    for (int i = 0; i < 8; i++)
        t[i] = e[i + 8] + e[i];
    for (int i = 0; i < 4; i++)
        q[i] = t[i + 4] + t[i];
    return (q[0] + q[2]) + (q[1] + q[3]);
}

#endif
