// The vocabulary of the C++ API: tensors, their shapes and meta, and the
// adapters that turn what callers have into key parts (Key: api_gen.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "orchlog/schema_gen.hpp"

namespace orchlog {

using schema::DType;

// "No value" for any optional key part: orchlog::none.
inline constexpr std::nullopt_t none = std::nullopt;

// ORCH_LOG_VALUES=all: every element goes into `values`.
inline constexpr std::int64_t kAllValues = -1;

// Dimensions, outermost first; no dimensions is a 0-d scalar. Up to 8 live
// inline (no allocation on the logging path).
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims) { assign(dims.begin(), dims.size()); }
  Shape(const std::int64_t* dims, std::size_t n) { assign(dims, n); }
  Shape(const std::vector<std::int64_t>& dims) { assign(dims.data(), dims.size()); }  // NOLINT: implicit on purpose
  Shape(const Shape& other) { assign(other.data(), other.size()); }
  Shape& operator=(const Shape& other) {
    if (this != &other) assign(other.data(), other.size());
    return *this;
  }

  const std::int64_t* data() const { return size_ <= kInline ? inline_ : heap_.data(); }
  std::size_t size() const { return size_; }
  std::int64_t operator[](std::size_t i) const { return data()[i]; }

 private:
  static constexpr std::size_t kInline = 8;
  void assign(const std::int64_t* dims, std::size_t n) {
    size_ = n;
    if (n <= kInline) {
      for (std::size_t i = 0; i < n; ++i) inline_[i] = dims[i];
    } else {
      heap_.assign(dims, dims + n);
    }
  }
  std::int64_t inline_[kInline] = {};
  std::vector<std::int64_t> heap_;
  std::size_t size_ = 0;
};

// Any integer dimension type (int, size_t, int64_t ...); a value that does
// not fit in i64 becomes -1 and the record is refused as malformed.
template <class I>
constexpr std::int64_t to_dim(I v) noexcept {
  static_assert(std::is_integral_v<I>, "dimensions are integers");
  if constexpr (std::is_unsigned_v<I>) {
    return v > static_cast<std::make_unsigned_t<std::int64_t>>(std::numeric_limits<std::int64_t>::max())
               ? -1
               : static_cast<std::int64_t>(v);
  } else {
    return static_cast<std::int64_t>(v);
  }
}

// orchlog::dims(n_tokens, n_embd) for dimensions of mixed integer types.
template <class... I>
Shape dims(I... d) {
  const std::int64_t list[] = {to_dim(d)..., 0};
  return Shape(list, sizeof...(I));
}

// A tensor in host (or, in CUDA builds, device) memory: C-contiguous,
// little-endian, `dtype` elements.
struct Tensor {
  const void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
};

namespace detail {
// Key parts as callers have them (orchlog::Key, api_gen.hpp). Numbers: any
// integer (negative, or beyond the part's type, means none, as in every
// emitter: engines use -1 for "no layer"), orchlog::none or a std::optional
// of an integer.
template <class T>
std::optional<T> index_arg(std::nullopt_t) {
  return std::nullopt;
}
template <class T, class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
std::optional<T> index_arg(I v) {
  const std::int64_t wide = to_dim(v);
  if (wide < 0 || wide > static_cast<std::int64_t>(std::numeric_limits<T>::max())) return std::nullopt;
  return static_cast<T>(wide);
}
template <class T, class U>
std::optional<T> index_arg(const std::optional<U>& v) {
  return v ? index_arg<T>(*v) : std::nullopt;
}

// Text: a string, nullptr or orchlog::none.
inline std::optional<std::string_view> optional_text_arg(std::nullopt_t) { return std::nullopt; }
inline std::optional<std::string_view> optional_text_arg(std::nullptr_t) { return std::nullopt; }
inline std::optional<std::string_view> optional_text_arg(const char* s) {
  return s ? std::optional<std::string_view>(s) : std::nullopt;
}
inline std::optional<std::string_view> optional_text_arg(std::string_view s) { return s; }
inline std::optional<std::string_view> optional_text_arg(const std::string& s) { return std::string_view(s); }
inline std::optional<std::string_view> optional_text_arg(const std::optional<std::string_view>& s) { return s; }

// A flag: a bool, orchlog::none or a std::optional<bool>.
inline std::optional<bool> flag_arg(std::nullopt_t) { return std::nullopt; }
inline std::optional<bool> flag_arg(bool b) { return b; }
inline std::optional<bool> flag_arg(const std::optional<bool>& b) { return b; }
}  // namespace detail

// One free-form scalar about a record (or, in Options::config, about a run).
struct MetaItem {
  std::string_view key;
  schema::MetaValue value;

  MetaItem(std::string_view k, bool b) : key(k) {
    value.kind = schema::MetaValue::Kind::boolean;
    value.b = b;
  }
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  MetaItem(std::string_view k, I i) : key(k) {
    value.kind = schema::MetaValue::Kind::integer;
    // Unsigned values beyond i64 saturate: meta integers are i64 in every encoding.
    value.i = to_dim(i) < 0 && std::is_unsigned_v<I> ? std::numeric_limits<std::int64_t>::max()
                                                     : static_cast<std::int64_t>(i);
  }
  template <class F, std::enable_if_t<std::is_floating_point_v<F>, int> = 0>
  MetaItem(std::string_view k, F f) : key(k) {
    value.kind = schema::MetaValue::Kind::real;
    value.f = static_cast<double>(f);
  }
  MetaItem(std::string_view k, std::string_view s) : key(k) {
    value.kind = schema::MetaValue::Kind::text;
    value.s = s;
  }
  MetaItem(std::string_view k, const char* s) : MetaItem(k, std::string_view(s)) {}
  MetaItem(std::string_view k, const std::string& s) : MetaItem(k, std::string_view(s)) {}
};

namespace detail {
// Meta items borrowed for the duration of one call.
struct MetaSpan {
  const MetaItem* data = nullptr;
  std::size_t size = 0;
};
inline MetaSpan span_of(std::initializer_list<MetaItem> items) { return {items.begin(), items.size()}; }
inline MetaSpan span_of(const std::vector<MetaItem>& items) { return {items.data(), items.size()}; }
}  // namespace detail

}  // namespace orchlog
