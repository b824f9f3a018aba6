// ORCH_LOG_SELECT: which records a run writes (schema `selector`,
// schema/vectors/selector.json).
//
// Comma-separated `key=spec` clauses; numeric keys take N, A-B or A-; glob
// keys take `*` (any run) and `?` (one code point). Clauses on one key are
// OR-ed, different keys AND-ed; a null field matches no clause on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchlog/api_gen.hpp"
#include "orchlog/detail/encode/utf8.hpp"
#include "orchlog/detail/logger/env.hpp"
#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {

// What a selector tests: the checkpoint and the key as the record says it
// (its parts that fall back to the run filled in).
struct SelectorCandidate {
  std::string_view checkpoint;  // valid UTF-8
  Key key;
  // Tokens token_idx .. token_idx + token_count - 1 at once: an adapter asks
  // whether any row of a whole batch tensor is wanted before it copies it.
  std::int64_t token_count = 1;

  std::optional<std::int64_t> number(std::string_view field) const { return key_number(key, field); }
  std::optional<std::string_view> text(std::string_view field) const {
    return field == schema::kLabelField ? std::optional<std::string_view>(checkpoint) : key_text(key, field);
  }
};

// Glob match over code points: `*` any run, `?` exactly one, the rest
// literal. Walks both strings in place (no allocation: adapters ask once per
// graph node).
inline bool glob_matches(std::string_view pattern, std::string_view text) {
  constexpr std::size_t kNone = std::string_view::npos;
  std::size_t pi = 0, ti = 0, star = kNone, resume = 0;
  while (ti < text.size()) {
    if (pi < pattern.size()) {
      std::size_t p_next = pi, t_next = ti;
      const std::uint32_t pc = next_code_point(pattern, p_next);
      if (pc == '*') {
        star = pi;
        pi = p_next;
        resume = ti;
        continue;
      }
      const std::uint32_t tc = next_code_point(text, t_next);
      if (pc == '?' || pc == tc) {
        pi = p_next;
        ti = t_next;
        continue;
      }
    }
    if (star == kNone) return false;
    pi = star + 1;  // past the '*'
    next_code_point(text, resume);
    ti = resume;
  }
  while (pi < pattern.size() && pattern[pi] == '*') ++pi;
  return pi == pattern.size();
}

class Selector {
 public:
  // The selector, or nullopt with `error` naming the offending clause.
  static std::optional<Selector> parse(std::string_view raw, std::string& error) {
    std::string scratch;
    const std::string_view text = as_valid_utf8(raw, scratch);
    Selector s;
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = text.find(',', start);
      const std::string_view clause = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
      if (!s.add_clause(trim(clause), error)) return std::nullopt;
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return s;
  }

  bool matches(const SelectorCandidate& c) const {
    for (const NumericTest& test : numeric_) {
      const auto v = c.number(test.field);
      if (!v) return false;
      const std::int64_t last = test.field == "token_idx" && c.token_count > 1 ? *v + (c.token_count - 1) : *v;
      bool any = false;
      for (const Range& r : test.ranges) any = any || (last >= r.lo && (!r.hi || *v <= *r.hi));
      if (!any) return false;
    }
    for (const GlobTest& test : globs_) {
      const auto v = c.text(test.field);
      if (!v) return false;
      bool any = false;
      for (const std::string& g : test.patterns) any = any || glob_matches(g, *v);
      if (!any) return false;
    }
    return true;
  }

 private:
  struct Range {
    std::int64_t lo;
    std::optional<std::int64_t> hi;  // none: no upper bound
  };
  struct NumericTest {
    std::string_view field;
    std::vector<Range> ranges;
  };
  struct GlobTest {
    std::string_view field;
    std::vector<std::string> patterns;
  };

  // Digits that overflow i64 saturate: such a bound simply matches nothing larger.
  static std::int64_t saturating(std::string_view digits) {
    std::int64_t v = 0;
    for (char c : digits) {
      if (v > (std::numeric_limits<std::int64_t>::max() - (c - '0')) / 10)
        return std::numeric_limits<std::int64_t>::max();
      v = v * 10 + (c - '0');
    }
    return v;
  }
  static bool all_digits(std::string_view s) {
    for (char c : s)
      if (c < '0' || c > '9') return false;
    return !s.empty();
  }

  bool add_clause(std::string_view clause, std::string& error) {
    const std::string quoted = "clause '" + std::string(clause) + "'";
    const std::size_t eq = clause.find('=');
    const std::string_view key = eq == clause.npos ? clause : trim(clause.substr(0, eq));
    const std::string_view spec = eq == clause.npos ? std::string_view() : trim(clause.substr(eq + 1));
    if (eq == clause.npos || spec.empty()) {
      error = quoted + " is not key=value";
      return false;
    }
    for (const auto& k : schema::kSelectorNumericKeys) {
      if (k.key != key) continue;
      const std::size_t dash = spec.find('-');
      const std::string_view lo = spec.substr(0, dash);
      const std::string_view hi = dash == spec.npos ? lo : spec.substr(dash + 1);
      if (!all_digits(lo) || (dash != spec.npos && !hi.empty() && !all_digits(hi))) {
        error = quoted + ": want N, A-B or A- with non-negative integers";
        return false;
      }
      Range r{saturating(lo), hi.empty() ? std::nullopt : std::optional<std::int64_t>(saturating(hi))};
      if (r.hi && *r.hi < r.lo) {
        error = quoted + ": range end is below its start";
        return false;
      }
      numeric_test(k.field).ranges.push_back(r);
      return true;
    }
    for (const auto& k : schema::kSelectorGlobKeys) {
      if (k.key != key) continue;
      glob_test(k.field).patterns.emplace_back(spec);
      return true;
    }
    error = quoted + ": unknown key '" + std::string(key) + "'";
    return false;
  }
  NumericTest& numeric_test(std::string_view field) {
    for (auto& t : numeric_)
      if (t.field == field) return t;
    numeric_.push_back({field, {}});
    return numeric_.back();
  }
  GlobTest& glob_test(std::string_view field) {
    for (auto& t : globs_)
      if (t.field == field) return t;
    globs_.push_back({field, {}});
    return globs_.back();
  }

  std::vector<NumericTest> numeric_;
  std::vector<GlobTest> globs_;
};

}  // namespace detail
}  // namespace orchlog
