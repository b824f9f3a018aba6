// The run's settings: what each type of env knob means (schema `env`,
// schema/vectors/env.json). The generated resolver (fields_gen.hpp) calls
// knob_<type> once per knob of the table; each takes the Options member when
// it is given, else the env knob, and a malformed value falls back to the
// knob's default with one warning.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "orchlog/schema_gen.hpp"

namespace orchlog {
namespace detail {

using schema::KnobSpec;
using schema::KnobType;

inline const char* env(const char* name) { return std::getenv(name); }

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

// What a malformed value of the knob is not: the middle of its warning.
inline std::string knob_expectation(const KnobSpec& k) {
  switch (k.type) {
    case KnobType::integer:
      return "an integer >= " + std::to_string(k.min);
    case KnobType::count_or_all:
      return "a count or 'all'";
    case KnobType::boolean:
      return "0 or 1";
    case KnobType::epoch:
      return "a number of seconds up to " + std::to_string(k.max);
    case KnobType::choice: {
      std::string out = "one of ";
      for (std::size_t i = 0; i < k.n_choices; ++i) out.append(i ? ", " : "").append(k.choices[i]);
      return out;
    }
    default:
      return "valid";
  }
}

// "NAME='raw' is not <expectation>; using <default>" (the current time for an epoch).
inline std::string knob_warning(const KnobSpec& k, std::string_view raw) {
  const std::string fallback =
      k.type == KnobType::epoch ? "the current time" : std::string(k.default_text.value_or(""));
  return std::string(k.name) + "='" + std::string(raw) + "' is not " + knob_expectation(k) + "; using " + fallback;
}

inline constexpr std::int64_t kAllValuesCount = -1;  // count_or_all: `all`

// A number, boolean or choice knob's text, trimmed, as the index or number it
// stands for; nullopt when it is malformed.
inline std::optional<std::int64_t> knob_number(const KnobSpec& k, std::string_view text) {
  switch (k.type) {
    case KnobType::count_or_all:
      if (text == "all") return kAllValuesCount;
      [[fallthrough]];
    case KnobType::integer:
    case KnobType::epoch: {
      const auto v = parse_decimal(text, k.max);
      return v && *v >= k.min ? v : std::nullopt;
    }
    case KnobType::boolean:
      if (text == "0" || text == "1") return text == "1";
      return std::nullopt;
    case KnobType::choice:
      for (std::size_t i = 0; i < k.n_choices; ++i)
        if (k.choices[i] == text) return static_cast<std::int64_t>(i);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// The knob's value from raw text (an env variable, or a C ABI option):
// nullopt when unset or blank, else the number it stands for, or the default
// (with a warning) when it is malformed. Epochs have no default: nullopt.
inline std::optional<std::int64_t> parse_knob_number(const KnobSpec& k, const char* raw,
                                                     std::vector<std::string>& warnings) {
  if (raw == nullptr || trim(raw).empty()) return std::nullopt;
  if (const auto v = knob_number(k, trim(raw))) return v;
  warnings.push_back(knob_warning(k, raw));
  return k.default_text ? knob_number(k, *k.default_text) : std::nullopt;
}

inline std::int64_t knob_default_number(const KnobSpec& k) {
  return k.default_text ? knob_number(k, *k.default_text).value_or(0) : 0;
}

// A number given in code is checked against the knob's bounds like env text.
inline std::int64_t given_number(const KnobSpec& k, std::int64_t v, std::vector<std::string>& warnings) {
  const bool ok = (k.type == KnobType::count_or_all && v == kAllValuesCount) || (v >= k.min && v <= k.max);
  if (ok) return v;
  warnings.push_back(std::string(k.setting) + " " + std::to_string(v) + " is not " + knob_expectation(k) + "; using " +
                     std::string(k.default_text.value_or("")));
  return knob_default_number(k);
}

template <class T>
T number_knob(const std::optional<T>& given, const KnobSpec& k, std::vector<std::string>& warnings) {
  if (given) return static_cast<T>(given_number(k, static_cast<std::int64_t>(*given), warnings));
  return static_cast<T>(parse_knob_number(k, env(k.name), warnings).value_or(knob_default_number(k)));
}

// ---- one function per knob type (the generated resolver's vocabulary)

inline std::string knob_path(const std::optional<std::string>& given, const KnobSpec& k, std::vector<std::string>&) {
  if (given) return *given;
  const char* raw = env(k.name);
  return raw ? raw : "";
}

inline std::string knob_str(const std::optional<std::string>& given, const KnobSpec& k, std::vector<std::string>&) {
  if (given) return *given;
  const char* raw = env(k.name);
  return raw ? std::string(raw) : std::string(k.default_text.value_or(""));
}

// Empty is unset.
inline std::optional<std::string> knob_opt_str(const std::optional<std::string>& given, const KnobSpec& k,
                                               std::vector<std::string>&) {
  const char* raw = given ? given->c_str() : env(k.name);
  return raw && *raw ? std::optional<std::string>(raw) : std::nullopt;
}

// Spaces and tabs only select everything: no selector.
inline std::optional<std::string> knob_selector(const std::optional<std::string>& given, const KnobSpec& k,
                                                std::vector<std::string>&) {
  const char* raw = given ? given->c_str() : env(k.name);
  return raw && !trim(raw).empty() ? std::optional<std::string>(raw) : std::nullopt;
}

inline std::int32_t knob_int(const std::optional<std::int32_t>& given, const KnobSpec& k,
                             std::vector<std::string>& warnings) {
  return number_knob(given, k, warnings);
}

inline std::int64_t knob_count_or_all(const std::optional<std::int64_t>& given, const KnobSpec& k,
                                      std::vector<std::string>& warnings) {
  return number_knob(given, k, warnings);
}

inline bool knob_bool(const std::optional<bool>& given, const KnobSpec& k, std::vector<std::string>& warnings) {
  if (given) return *given;
  return parse_knob_number(k, env(k.name), warnings).value_or(knob_default_number(k)) != 0;
}

template <class Choice>
Choice knob_enum(const std::optional<Choice>& given, const KnobSpec& k, std::vector<std::string>& warnings) {
  if (given) return *given;
  return static_cast<Choice>(parse_knob_number(k, env(k.name), warnings).value_or(knob_default_number(k)));
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

// The time the knob gives (SOURCE_DATE_EPOCH: reproducible files), else now, formatted.
inline std::string knob_epoch(const std::optional<std::int64_t>& given, const KnobSpec& k,
                              std::vector<std::string>& warnings) {
  std::optional<std::int64_t> seconds = given;
  if (seconds && (*seconds < k.min || *seconds > k.max)) {
    warnings.push_back(std::string(k.setting) + " " + std::to_string(*seconds) + " is not " + knob_expectation(k) +
                       "; using the current time");
    seconds.reset();
  }
  if (!given) seconds = parse_knob_number(k, env(k.name), warnings);
  return format_utc(seconds ? *seconds : static_cast<std::int64_t>(std::time(nullptr)));
}

// ---- settings given as text (the C ABI): parsed exactly like the env knob

template <class T>
std::optional<T> knob_from_text(const KnobSpec& k, const char* text, std::vector<std::string>& warnings) {
  if (text == nullptr) return std::nullopt;
  if constexpr (std::is_same_v<T, std::string>) {
    return std::string(text);
  } else {
    const auto v = parse_knob_number(k, text, warnings);
    if (!v) return k.type == KnobType::epoch ? std::nullopt : std::optional<T>(static_cast<T>(knob_default_number(k)));
    return static_cast<T>(*v);
  }
}

// A resolved setting as the header's view holds it.
template <class To, class From>
To header_arg(const From& v) {
  if constexpr (std::is_same_v<From, std::optional<std::string>>) {
    return v ? To(std::string_view(*v)) : To();
  } else if constexpr (std::is_same_v<From, std::string>) {
    return std::string_view(v);
  } else {
    return static_cast<To>(v);
  }
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

}  // namespace detail
}  // namespace orchlog
