/*
 * cpu.c — the CPU probes of cpu.h, each answered once.
 */
#include "cpu.h"

#if GGUF_X86
#include <cpuid.h>

/* -1 unknown, else the answer; a race only ever stores the same answer. */
static int probe(int *cached, int (*ask)(void))
{
    int v = __atomic_load_n(cached, __ATOMIC_RELAXED);
    if (v < 0) {
        v = ask();
        __atomic_store_n(cached, v, __ATOMIC_RELAXED);
    }
    return v;
}

static int ask_avx2(void) { return __builtin_cpu_supports("avx2") != 0; }

/* F16C is CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports does not
 * know the name). */
static int ask_avx2_f16c(void)
{
    unsigned a, b, c, d;
    return ask_avx2() && __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1);
}

bool gguf_cpu_avx2(void)
{
    static int cached = -1;
    return probe(&cached, ask_avx2);
}

bool gguf_cpu_avx2_f16c(void)
{
    static int cached = -1;
    return probe(&cached, ask_avx2_f16c);
}
#else
bool gguf_cpu_avx2(void) { return false; }
bool gguf_cpu_avx2_f16c(void) { return false; }
#endif
