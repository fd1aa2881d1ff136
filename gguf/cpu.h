/*
 * cpu.h — libgguf's x86 instruction-set switches, defined once: the target
 * attributes its vector paths are compiled with, and the CPU probes that
 * pick them at run time (asked once; cpuid traps to the hypervisor in a VM).
 *
 * GGUF_X86 is 1 where the vector paths exist (x86-64 with GCC or clang);
 * elsewhere the probes say no and only the scalar code runs.
 * Private to the library (gguf-run's kernels have their own, run/kernels_simd.h).
 */
#ifndef GGUF_CPU_H
#define GGUF_CPU_H

#include <stdbool.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define GGUF_X86 1
#define GGUF_TARGET_AVX2      __attribute__((target("avx2")))
#define GGUF_TARGET_AVX2_F16C __attribute__((target("avx2,f16c")))
#else
#define GGUF_X86 0
#define GGUF_TARGET_AVX2
#define GGUF_TARGET_AVX2_F16C
#endif

/* AVX2 (and, for the second, F16C) usable on this CPU. */
bool gguf_cpu_avx2(void);
bool gguf_cpu_avx2_f16c(void);

#endif
