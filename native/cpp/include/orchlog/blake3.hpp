// BLAKE3 hashing (hash mode, any output length), written for orchlog from the
// specification; SIMD kernels for SSE4.1, AVX2 and AVX-512 are chosen at run
// time from what the CPU has, with a portable fallback.
//
//   char hex[65];
//   orchlog::blake3_hex(data, size, hex);
//
// The kernel path can be forced, for tests and benchmarks, with
// orchlog::blake3_set_path() or the environment variable
// ORCHLOG_BLAKE3=portable|sse41|avx2|avx512 (read once, on first use); without
// it, ORCHLOG_ISA caps the path as it caps every kernel (detail/isa.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "orchlog/detail/blake3/path.hpp"
#include "orchlog/detail/compiled.hpp"

namespace orchlog {

// True when the kernel is compiled in and this CPU (and OS) can run it.
ORCHLOG_API bool blake3_path_supported(Blake3Path path) noexcept;
// The widest path this CPU runs.
ORCHLOG_API Blake3Path blake3_best_path() noexcept;
// The kernel path hashing uses now: ORCHLOG_BLAKE3's, else the best (chosen on first use).
ORCHLOG_API Blake3Path blake3_path() noexcept;
// Forces a kernel path for the whole process; false (and no change) when this
// CPU cannot run it.
ORCHLOG_API bool blake3_set_path(Blake3Path path) noexcept;
// BLAKE3 of `len` bytes into out[0 .. out_len) (32 is the standard hash;
// longer outputs are the extendable output), with an explicit kernel path.
ORCHLOG_API void blake3_hash(Blake3Path path, const void* data, std::size_t len, std::uint8_t* out,
                             std::size_t out_len = 32) noexcept;
ORCHLOG_API void blake3_hash(const void* data, std::size_t len, std::uint8_t* out, std::size_t out_len = 32) noexcept;
// The 64 lowercase hex digits of the 32-byte hash, NUL-terminated.
ORCHLOG_API void blake3_hex(Blake3Path path, const void* data, std::size_t len, char out[65]) noexcept;
ORCHLOG_API void blake3_hex(const void* data, std::size_t len, char out[65]) noexcept;

inline constexpr Blake3Path kAllBlake3Paths[] = {Blake3Path::portable, Blake3Path::sse41, Blake3Path::avx2,
                                                 Blake3Path::avx512};

constexpr std::string_view blake3_path_name(Blake3Path path) noexcept {
  switch (path) {
    case Blake3Path::portable:
      return "portable";
    case Blake3Path::sse41:
      return "sse41";
    case Blake3Path::avx2:
      return "avx2";
    case Blake3Path::avx512:
      return "avx512";
  }
  return "?";
}

constexpr std::optional<Blake3Path> blake3_path_from_name(std::string_view name) noexcept {
  for (Blake3Path p : kAllBlake3Paths)
    if (blake3_path_name(p) == name) return p;
  return std::nullopt;
}

}  // namespace orchlog

#if ORCHLOG_DEFINE_API
#include "orchlog/detail/blake3/tree.hpp"
#include "orchlog/detail/isa.hpp"
#include "orchlog/detail/stderr.hpp"

namespace orchlog {

ORCHLOG_API bool blake3_path_supported(Blake3Path path) noexcept {
#if ORCHLOG_X86_SIMD
  __builtin_cpu_init();
  switch (path) {
    case Blake3Path::portable:
      return true;
    case Blake3Path::sse41:
      return __builtin_cpu_supports("sse4.1");
    case Blake3Path::avx2:
      return __builtin_cpu_supports("avx2");
    case Blake3Path::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return path == Blake3Path::portable;
#endif
}

ORCHLOG_API Blake3Path blake3_best_path() noexcept {
  Blake3Path best = Blake3Path::portable;
  for (Blake3Path p : kAllBlake3Paths)
    if (blake3_path_supported(p)) best = p;
  return best;
}

namespace detail {
inline constexpr int kBlake3PathUnset = -1;
inline std::atomic<int> g_blake3_path{kBlake3PathUnset};

// The widest path this CPU runs within ORCHLOG_ISA (detail/isa.hpp).
inline Blake3Path blake3_capped_path() noexcept {
  Blake3Path best = Blake3Path::portable;
  const IsaCap needs[] = {IsaCap::baseline, IsaCap::sse4, IsaCap::avx2, IsaCap::avx512};
  for (Blake3Path p : kAllBlake3Paths)
    if (blake3_path_supported(p) && isa_allowed(needs[static_cast<int>(p)])) best = p;
  return best;
}

inline Blake3Path blake3_path_from_env() noexcept {
  const char* raw = std::getenv("ORCHLOG_BLAKE3");
  if (raw == nullptr || *raw == '\0') return blake3_capped_path();
  const auto path = blake3_path_from_name(raw);
  if (path && blake3_path_supported(*path)) return *path;
  print_warning(
      {"ORCHLOG_BLAKE3=", raw, " is not a kernel this CPU runs; using ", blake3_path_name(blake3_best_path())});
  return blake3_best_path();
}
}  // namespace detail

ORCHLOG_API Blake3Path blake3_path() noexcept {
  int p = detail::g_blake3_path.load(std::memory_order_relaxed);
  if (p == detail::kBlake3PathUnset) {
    int chosen = static_cast<int>(detail::blake3_path_from_env());
    // Another thread may have chosen first (or set a path): keep theirs.
    if (!detail::g_blake3_path.compare_exchange_strong(p, chosen, std::memory_order_relaxed)) return Blake3Path(p);
    p = chosen;
  }
  return Blake3Path(p);
}

ORCHLOG_API bool blake3_set_path(Blake3Path path) noexcept {
  if (!blake3_path_supported(path)) return false;
  detail::g_blake3_path.store(static_cast<int>(path), std::memory_order_relaxed);
  return true;
}

ORCHLOG_API void blake3_hash(Blake3Path path, const void* data, std::size_t len, std::uint8_t* out,
                             std::size_t out_len) noexcept {
  if (!blake3_path_supported(path)) path = Blake3Path::portable;
  detail::blake3::hash(path, static_cast<const std::uint8_t*>(data), len, out, out_len);
}

ORCHLOG_API void blake3_hash(const void* data, std::size_t len, std::uint8_t* out, std::size_t out_len) noexcept {
  detail::blake3::hash(blake3_path(), static_cast<const std::uint8_t*>(data), len, out, out_len);
}

ORCHLOG_API void blake3_hex(Blake3Path path, const void* data, std::size_t len, char out[65]) noexcept {
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint8_t digest[32];
  blake3_hash(path, data, len, digest);
  for (int i = 0; i < 32; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  out[64] = '\0';
}

ORCHLOG_API void blake3_hex(const void* data, std::size_t len, char out[65]) noexcept {
  blake3_hex(blake3_path(), data, len, out);
}

}  // namespace orchlog
#endif  // ORCHLOG_DEFINE_API
