// The C ABI's arguments as the C++ API takes them, for every file of liborchlog_c.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "orchlog/orchlog.h"
#include "orchlog/types.hpp"

namespace orchlog_c {

inline std::vector<orchlog::MetaItem> meta_of(const orchlog_meta* meta, size_t n) {
  std::vector<orchlog::MetaItem> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const orchlog_meta& m = meta[i];
    const std::string_view key = m.key ? m.key : "";
    switch (m.kind) {
      case ORCHLOG_META_BOOL:
        out.emplace_back(key, m.i != 0);
        break;
      case ORCHLOG_META_INT:
        out.emplace_back(key, m.i);
        break;
      case ORCHLOG_META_REAL:
        out.emplace_back(key, m.f);
        break;
      default:
        out.emplace_back(key, std::string_view(m.s ? m.s : ""));
        break;
    }
  }
  return out;
}

inline orchlog::Shape shape_of(const int64_t* shape, size_t ndim) {
  return ndim == 0 || shape == nullptr ? orchlog::Shape() : orchlog::Shape(shape, ndim);
}

}  // namespace orchlog_c
