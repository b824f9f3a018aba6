// The one translation unit of orchlog's compiled library
// (-DORCHLOG_COMPILED_LIB=ON, target orchlog::orchlog_compiled): it compiles
// the functions that the headers only declare in compiled-library mode (the
// logger core, the encoders, BLAKE3; see orchlog/detail/compiled.hpp).
#ifndef ORCHLOG_COMPILED_LIB
#define ORCHLOG_COMPILED_LIB
#endif
#define ORCHLOG_COMPILED_LIB_SOURCE

#include "orchlog/blake3.hpp"
#include "orchlog/detail/logger/core.hpp"
#include "orchlog/detail/logger/macro_support.hpp"
#include "orchlog/encode.hpp"
#include "orchlog/logger.hpp"
