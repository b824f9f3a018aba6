// Compiling a region of a header for an instruction set the build does not
// enable globally (runtime dispatch picks it only where the CPU has it).
//
//   ORCHLOG_TARGET_BEGIN("avx2") ... ORCHLOG_TARGET_END
//
// Every function defined in between is compiled for that target, including
// the kernel templates, so the kernel can be written once and included per ISA.
#pragma once

#if (defined(__x86_64__) || defined(_M_X64) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(ORCHLOG_NO_SIMD) && !defined(__CUDA_ARCH__)
#define ORCHLOG_X86_SIMD 1
#include <immintrin.h>
#else
#define ORCHLOG_X86_SIMD 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ORCHLOG_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ORCHLOG_ALWAYS_INLINE inline
#endif

#define ORCHLOG_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define ORCHLOG_TARGET_BEGIN(isa) \
  ORCHLOG_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define ORCHLOG_TARGET_END ORCHLOG_PRAGMA(clang attribute pop)
#else
#define ORCHLOG_TARGET_BEGIN(isa) ORCHLOG_PRAGMA(GCC push_options) ORCHLOG_PRAGMA(GCC target(isa))
#define ORCHLOG_TARGET_END ORCHLOG_PRAGMA(GCC pop_options)
#endif
