// Logs every tensor of a cross-language tensor file (tests/crosslang/) through
// the C++ logger's public API (a graft for a tensor marked "graft": true), so that its output can be compared byte for
// byte with the other emitters'. The env knobs (ORCH_LOG_FILE, ORCH_LOG_MODE,
// ...) decide where and how; the file's `config` becomes the run header's.
// Exits 1 when the logger counted an error (a malformed knob, an invalid
// selector, a record not written), as the Rust producer does.
//
//   cross_language tests/crosslang/tensors.json
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <orchlog/orchlog.hpp>

#include "support/json.hpp"
#include "support/vectors.hpp"

namespace {

namespace t = orchlog_test;

// A key number as an engine would hold it: signed when negative, else
// unsigned (so that 2^63 reaches the logger intact), or none.
template <class F>
auto with_number(const t::Json& v, F use) {
  if (v.is_null()) return use(orchlog::none);
  if (v.text[0] == '-') return use(static_cast<std::int64_t>(std::stoll(v.text)));
  return use(static_cast<std::uint64_t>(std::stoull(v.text)));
}

// The record key: every part the file names, each number converted by
// orchlog::Key's own rule (negative or beyond the part's type: none).
orchlog::Key key_of(const t::Json& tensor) {
  orchlog::Key key;
  orchlog::detail::for_each_key_part(key, [&tensor](std::string_view name, auto& part) {
    using Part = typename std::decay_t<decltype(part)>::value_type;
    const std::string field(name);
    if (!tensor.has(field)) return;
    const t::Json& v = tensor[field];
    if constexpr (std::is_same_v<Part, std::string_view>) {
      if (!v.is_null()) part = std::string_view(v.str());
    } else if constexpr (std::is_same_v<Part, bool>) {
      if (!v.is_null()) part = v.b;
    } else {
      part = with_number(v, [](auto n) { return orchlog::detail::index_arg<Part>(n); });
    }
  });
  return key;
}

void log_tensor(const t::Json& tensor) {
  const std::string bytes = t::from_hex(tensor["data_hex"].str());
  std::vector<std::uint64_t> aligned((bytes.size() + 7) / 8);  // element-aligned, as an engine's buffer is
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(aligned.data()));
  std::vector<std::int64_t> shape;
  for (const t::Json& d : tensor["shape"].items) shape.push_back(d.i64());
  std::vector<orchlog::MetaItem> meta;  // [key, value] pairs in call order; a repeated key is passed twice
  for (const t::Json& pair : tensor["meta"].items) meta.push_back(t::meta_item(pair[0].str(), pair[1]));
  const orchlog::DType dtype = *orchlog::schema::dtype_from_name(tensor["dtype"].str());
  if (tensor.has("graft") && tensor["graft"].b) {
    orchlog::graft(tensor["checkpoint"].str(), aligned.data(), dtype, orchlog::Shape(shape), key_of(tensor), meta);
    return;
  }
  const orchlog::Tensor view{aligned.data(), dtype, orchlog::Shape(shape)};
  orchlog::log(tensor["checkpoint"].str(), view, key_of(tensor), meta);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cross_language TENSORS.json\n");
    return 2;
  }
  try {
    const t::Json doc = t::parse_json(t::read_file(argv[1]));
    orchlog::Options options;  // every knob from the env, the header's config from the file
    options.config = t::meta_items(doc["config"]);
    orchlog::configure(options);
    for (const t::Json& tensor : doc["tensors"].items) log_tensor(tensor);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cross_language: %s\n", e.what());
    return 2;
  }
  orchlog::close();
  return orchlog::status().errors == 0 ? 0 : 1;
}
