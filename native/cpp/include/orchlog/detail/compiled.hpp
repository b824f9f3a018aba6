// Header-only (the default) or compiled-library mode (ORCHLOG_COMPILED_LIB).
//
// The heavy functions (the logger core, the encoders, BLAKE3) are declared
// with ORCHLOG_API and their definitions sit inside `#if ORCHLOG_DEFINE_API`.
// Header-only, they are inline and every translation unit that uses them
// compiles them. With ORCHLOG_COMPILED_LIB (CMake: -DORCHLOG_COMPILED_LIB=ON,
// link orchlog::orchlog_compiled), the headers only declare them and one
// translation unit of the library, which also defines
// ORCHLOG_COMPILED_LIB_SOURCE, compiles them once: the same code, so the
// same records (docs/cpp.md, "Compiled-library mode").
#pragma once

// A default argument goes on the one declaration the mode has: the
// definition's header-only, the declaration's in compiled-library mode.
#if defined(ORCHLOG_COMPILED_LIB)
#define ORCHLOG_API
#define ORCHLOG_DEFAULT_ARG(value)
#if defined(ORCHLOG_COMPILED_LIB_SOURCE)
#define ORCHLOG_DEFINE_API 1
#else
#define ORCHLOG_DEFINE_API 0
#endif
#else
#define ORCHLOG_API inline
#define ORCHLOG_DEFAULT_ARG(value) = value
#define ORCHLOG_DEFINE_API 1
#endif
