// Not a stable API: the argument adapters behind the ORCH_LOG* macros.
//
// They let a macro take what instrumented code naturally has at hand: a
// dtype as text ("f32", "float16") or as DType, key fields as any integer
// (negative meaning "none", as engines use -1 for embeddings and logits),
// orchlog::none, or std::optional, and a stage as a C string or nullptr.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "orchlog/api_gen.hpp"
#include "orchlog/detail/logger/entry.hpp"
#include "orchlog/logger.hpp"
#include "orchlog/types.hpp"
#if ORCHLOG_DEFINE_API
#include "orchlog/detail/logger/core.hpp"
#endif

namespace orchlog {
namespace detail {

struct DTypeArg {
  std::optional<DType> dtype;
  std::string_view name;
  DTypeArg(DType d) : dtype(d), name(schema::dtype_name(d)) {}  // NOLINT: implicit on purpose
  DTypeArg(const char* s) : DTypeArg(std::string_view(s ? s : "")) {}
  DTypeArg(const std::string& s) : DTypeArg(std::string_view(s)) {}
  DTypeArg(std::string_view s) : dtype(schema::dtype_from_name(s)), name(s) {}
};

inline std::string_view text_arg(const char* s) { return s ? std::string_view(s) : std::string_view(); }
inline std::string_view text_arg(std::string_view s) { return s; }
inline std::string_view text_arg(const std::string& s) { return s; }

#if defined(ORCHLOG_COMPILED_LIB)
// Whether the dtype is one the schema has (else the record is reported, not written).
bool dtype_known(const DTypeArg& dtype, std::string_view checkpoint) noexcept;
ORCHLOG_NOINLINE bool macro_log(std::string_view checkpoint, const Key& key, const void* data, DTypeArg dtype,
                                const Shape& shape) noexcept;
Shape legacy_shape(std::string_view checkpoint, std::int64_t count, std::string_view shape_text) noexcept;
#endif

#if ORCHLOG_DEFINE_API
ORCHLOG_API bool dtype_known(const DTypeArg& dtype, std::string_view checkpoint) noexcept {
  if (dtype.dtype) return true;
  try {
    if (enabled())
      logger().report(kBadCall, "record '" + std::string(checkpoint) + "' not written: unknown dtype '" +
                                    std::string(dtype.name) + "'");
  } catch (...) {
  }
  return false;
}

ORCHLOG_NOINLINE ORCHLOG_API bool macro_log(std::string_view checkpoint, const Key& key, const void* data,
                                            DTypeArg dtype, const Shape& shape) noexcept {
  if (!dtype_known(dtype, checkpoint)) return false;
  return write_record(checkpoint, Tensor{data, *dtype.dtype, shape}, key, {});
}

// The shape text of ORCH_LOG_JSON_TOKEN ("[896]", "[1, 896]"), or none when
// it is not a bracketed list of non-negative integers.
inline std::optional<std::vector<std::int64_t>> parse_shape_text(std::string_view text) {
  text = trim(text);
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  text = trim(text.substr(1, text.size() - 2));
  std::vector<std::int64_t> dims;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const auto d = parse_decimal(trim(text.substr(0, comma)), std::numeric_limits<std::int64_t>::max());
    if (!d) return std::nullopt;
    dims.push_back(*d);
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return dims;
}

// The shape of ORCH_LOG_JSON_TOKEN(name, values, count, dtype, shape_text,
// token_idx), the form already instrumented code uses: `shape_text` when it
// holds exactly `count` elements, else [count] (with a warning).
ORCHLOG_API Shape legacy_shape(std::string_view checkpoint, std::int64_t count, std::string_view shape_text) noexcept {
  try {
    if (const auto dims = parse_shape_text(shape_text)) {
      std::int64_t numel = 1;
      for (std::int64_t d : *dims)
        numel = d != 0 && numel > std::numeric_limits<std::int64_t>::max() / d ? -1 : numel * d;
      if (numel == count) return Shape(*dims);
    }
    if (enabled())
      logger().warn_once(kLegacyShape, "ORCH_LOG_JSON_TOKEN('" + std::string(checkpoint) + "'): shape '" +
                                           std::string(shape_text) + "' does not hold " + std::to_string(count) +
                                           " values; recorded as [" + std::to_string(count) + "]");
  } catch (...) {
  }
  return Shape{count};
}
#endif  // ORCHLOG_DEFINE_API

}  // namespace detail
}  // namespace orchlog
