// Conformance vector inputs turned into the C++ encoder's inputs (tests only).
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "orchlog/detail/fields_gen.hpp"
#include "orchlog/encode.hpp"
#include "support/json.hpp"

namespace orchlog_test {

inline double f64_from_tag(const std::string& text) {
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::stod(text);
}

// One meta/config item, floats tagged {"f64": text}; string_views point into the
// Json document, which must outlive them.
inline orchlog::MetaItem meta_item(const std::string& key, const Json& v) {
  switch (v.type) {
    case Json::Type::boolean:
      return {key, v.b};
    case Json::Type::number:
      return {key, v.i64()};
    case Json::Type::string:
      return {key, std::string_view(v.text)};
    case Json::Type::object:
      return {key, f64_from_tag(v["f64"].str())};
    default:
      throw std::runtime_error("unexpected meta value for " + key);
  }
}

inline std::vector<orchlog::MetaItem> meta_items(const Json& meta) {
  std::vector<orchlog::MetaItem> out;
  for (const auto& [key, v] : meta.members) out.push_back(meta_item(key, v));
  return out;
}

// A scalar field of a vector document as T (text points into the document).
template <class T>
T scalar_of(const Json& v) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return std::string_view(v.str());
  } else if constexpr (std::is_same_v<T, bool>) {
    return v.b;
  } else {
    return static_cast<T>(v.i64());
  }
}

// A key from a vector document's members of the same names (absent or null: none);
// text parts point into the document, which must outlive the key.
inline orchlog::Key key_from(const Json& doc) {
  orchlog::Key key;
  orchlog::detail::for_each_key_part(key, [&doc](std::string_view name, auto& part) {
    const std::string field(name);
    if (doc.has(field) && !doc[field].is_null())
      part = scalar_of<typename std::decay_t<decltype(part)>::value_type>(doc[field]);
  });
  return key;
}

// A vector case's input with the storage its views point into.
struct RecordCase {
  std::string name;
  std::string checkpoint;
  std::string data;
  std::vector<std::int64_t> shape;
  orchlog::RecordInput input;
  std::string expected_jsonl;  // without the newline
  std::string expected_frame;
  std::string expected_blake3;
};

inline std::vector<std::unique_ptr<RecordCase>> record_cases(const Json& doc) {
  std::vector<std::unique_ptr<RecordCase>> out;
  for (const Json& c : doc["cases"].items) {
    auto rc = std::make_unique<RecordCase>();
    const Json& in = c["input"];
    rc->name = c["name"].str();
    rc->checkpoint = in.has("checkpoint_hex") ? from_hex(in["checkpoint_hex"].str()) : in["checkpoint"].str();
    rc->data = from_hex(in["data_hex"].str());
    for (const Json& d : in["shape"].items) rc->shape.push_back(d.i64());
    orchlog::RecordInput& r = rc->input;
    r.checkpoint = rc->checkpoint;
    // The vector gives the record's fields: the run's fields and each key part as written.
    r.key = key_from(in);
    orchlog::detail::RunFields run;
    orchlog::detail::for_each_run_field(run, [&in](std::string_view name, auto& field) {
      field = scalar_of<std::decay_t<decltype(field)>>(in[std::string(name)]);
    });
    orchlog::detail::set_run_fields(r, run);
    r.seq = in["seq"].i64();
    orchlog::detail::for_each_call_field(r.call, [&in](std::string_view name, auto& field) {
      const Json& value = in[std::string(name)];
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, bool>) {
        field = scalar_of<bool>(value);
      } else if (!value.is_null()) {
        field = scalar_of<std::string_view>(value);  // a view into the document, like the key's text parts
      }
    });
    r.tensor.data = rc->data.data();
    r.tensor.dtype = *orchlog::schema::dtype_from_name(in["dtype"].str());
    r.tensor.shape = orchlog::Shape(rc->shape);
    r.values = in["values"].i64();
    r.meta = meta_items(in["meta"]);
    rc->expected_jsonl = c["expected"]["jsonl"].str();
    rc->expected_frame = from_hex(c["expected"]["frame_hex"].str());
    rc->expected_blake3 = c["expected"]["blake3"].str();
    out.push_back(std::move(rc));
  }
  return out;
}

inline orchlog::HeaderInput header_input(const Json& in) {
  orchlog::HeaderInput h;
  h.language = in["language"].str();
  h.created = in["created"].str();
  h.team = in["team"].str();
  if (!in["model"].is_null()) h.model = std::string_view(in["model"].str());
  if (!in["git_commit"].is_null()) h.git_commit = std::string_view(in["git_commit"].str());
  h.rank = static_cast<std::int32_t>(in["rank"].i64());
  h.world_size = static_cast<std::int32_t>(in["world_size"].i64());
  h.values = static_cast<std::int32_t>(in["values"].i64());
  if (!in["select"].is_null()) h.select = std::string_view(in["select"].str());
  h.config = meta_items(in["config"]);
  return h;
}

}  // namespace orchlog_test
