// The BLAKE3 kernels hashing may use (blake3.hpp chooses one).
#pragma once

#include <cstdint>

namespace orchlog {

// Which hash_many kernels hashing may use: a path uses its own width and
// every narrower one for the remainders.
enum class Blake3Path : std::uint8_t { portable, sse41, avx2, avx512 };

}  // namespace orchlog
