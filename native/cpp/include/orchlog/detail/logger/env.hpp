// Parsing the ORCH_LOG_* knobs as every emitter must (schema/vectors/env.json):
// a malformed value falls back to its default and yields one warning.
#pragma once

#include <cstdint>
#include <ctime>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "orchlog/options.hpp"
#include "orchlog/schema_gen.hpp"
#include "orchlog/types.hpp"

namespace orchlog {
namespace detail {

template <class T>
struct Parsed {
  T value;
  std::string warning;  // empty when the raw value was fine
};

// Knob values and selector parts ignore surrounding spaces and tabs, and only
// those: every emitter applies this one ASCII rule (schema/FORMAT.md).
inline std::string_view trim(std::string_view s) {
  const char* ws = " \t";
  const auto first = s.find_first_not_of(ws);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(ws) - first + 1);
}

// A plain run of ASCII digits no larger than `max`.
inline std::optional<std::int64_t> parse_decimal(std::string_view s, std::int64_t max) {
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    if (v > (max - (c - '0')) / 10) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

inline constexpr std::int64_t kI32Max = 2147483647;

inline std::string quoted(const char* raw) { return std::string("'") + raw + "'"; }

// ORCH_LOG_VALUES: a count or `all` (kAllValues).
inline Parsed<std::int64_t> parse_values(const char* raw) {
  const std::int64_t fallback = *parse_decimal(schema::kOrchLogValuesDefault, kI32Max);
  if (raw == nullptr || trim(raw).empty()) return {fallback, {}};
  const std::string_view text = trim(raw);
  if (text == "all") return {kAllValues, {}};
  if (auto v = parse_decimal(text, kI32Max)) return {*v, {}};
  return {fallback, std::string(schema::kOrchLogValues) + "=" + quoted(raw) + " is not a count or 'all'; using " +
                        std::string(schema::kOrchLogValuesDefault)};
}

constexpr std::string_view mode_name(Mode m) { return schema::kModes[static_cast<int>(m)]; }

inline Parsed<Mode> parse_mode(const char* raw) {
  Mode fallback = Mode::summary;
  for (int i = 0; i < 3; ++i)
    if (schema::kModes[i] == schema::kOrchLogModeDefault) fallback = static_cast<Mode>(i);
  if (raw == nullptr || trim(raw).empty()) return {fallback, {}};
  for (int i = 0; i < 3; ++i)
    if (schema::kModes[i] == trim(raw)) return {static_cast<Mode>(i), {}};
  return {fallback, std::string(schema::kOrchLogMode) + "=" + quoted(raw) +
                        " is not one of summary, full, both; using " + std::string(schema::kOrchLogModeDefault)};
}

// ORCH_LOG_RANK (minimum 0) and ORCH_LOG_WORLD_SIZE (minimum 1).
inline Parsed<std::int32_t> parse_int(const char* name, std::string_view default_text, const char* raw,
                                      std::int32_t minimum) {
  const auto fallback = static_cast<std::int32_t>(*parse_decimal(default_text, kI32Max));
  if (raw == nullptr || trim(raw).empty()) return {fallback, {}};
  const auto v = parse_decimal(trim(raw), kI32Max);
  if (v && *v >= minimum) return {static_cast<std::int32_t>(*v), {}};
  return {fallback, std::string(name) + "=" + quoted(raw) + " is not an integer >= " + std::to_string(minimum) +
                        "; using " + std::string(default_text)};
}

// Replaces `{rank}` and `{pid}`; every other character is kept as is.
inline std::string expand_path(std::string_view templ, std::int64_t rank, std::int64_t pid) {
  std::string out;
  for (std::size_t i = 0; i < templ.size();) {
    if (templ.compare(i, 6, "{rank}") == 0) {
      out += std::to_string(rank);
      i += 6;
    } else if (templ.compare(i, 5, "{pid}") == 0) {
      out += std::to_string(pid);
      i += 5;
    } else {
      out.push_back(templ[i++]);
    }
  }
  return out;
}

// RFC 3339 UTC with seconds: the header's `created`.
inline std::string format_utc(std::int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "1970-01-01T00:00:00Z";
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The largest SOURCE_DATE_EPOCH, 9999-12-31T23:59:59Z: `created` has a four-digit year.
inline constexpr std::int64_t kMaxSourceDateEpoch = 253402300799;

// `created` from SOURCE_DATE_EPOCH when it is set (reproducible files), else now.
inline Parsed<std::string> created_timestamp(const char* source_date_epoch) {
  if (source_date_epoch != nullptr && !trim(source_date_epoch).empty()) {
    if (auto v = parse_decimal(trim(source_date_epoch), kMaxSourceDateEpoch)) return {format_utc(*v), {}};
    return {format_utc(std::time(nullptr)), "SOURCE_DATE_EPOCH=" + quoted(source_date_epoch) +
                                                " is not a number of seconds up to " +
                                                std::to_string(kMaxSourceDateEpoch) + "; using the current time"};
  }
  return {format_utc(std::time(nullptr)), {}};
}

}  // namespace detail
}  // namespace orchlog
