// liborchlog_c: the C ABI (orchlog/orchlog.h) over the header-only C++ logger.
// Nothing here may throw across the C boundary: every entry point is noexcept
// and the C++ calls it makes never throw.
#define ORCHLOG_C_BUILDING 1
#include "orchlog/orchlog.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "abi_gen.hpp"
#include "c_args.hpp"
#include "orchlog/detail/logger/macro_support.hpp"  // DTypeArg: dtype names as the macros take them
#include "orchlog/orchlog.hpp"

namespace {

using orchlog_c::meta_of;
using orchlog_c::shape_of;

bool copy_out(const std::string& s, orchlog_bytes* out) {
  if (out == nullptr) return true;
  out->data = static_cast<char*>(std::malloc(s.size() + 1));
  if (out->data == nullptr) return false;
  std::memcpy(out->data, s.data(), s.size());
  out->data[s.size()] = '\0';
  out->size = s.size();
  return true;
}

}  // namespace

extern "C" {

int orchlog_configure(const orchlog_options* o) {
  try {
    std::vector<std::string> warnings;
    orchlog::Options options = o != nullptr ? orchlog_c::options_of(*o, warnings) : orchlog::Options();
    for (const std::string& w : warnings) {  // warned and counted like a malformed env knob
      orchlog::detail::logger().count_error();
      orchlog::detail::print_warning(w);
    }
    options.producer = "c";
    if (o != nullptr)
      options.config = meta_of(o->config, o->n_config);  // copied by configure: the caller's strings may go
    return orchlog::configure(options) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

int orchlog_log_named(const char* checkpoint, const void* data, const char* dtype, const int64_t* shape, size_t ndim,
                      const orchlog_key* key, const orchlog_named_parts* parts, const orchlog_meta* meta,
                      size_t n_meta) {
  if (!orchlog::detail::may_log()) return 0;
  try {
    orchlog::detail::settle_state("c");  // a C program's first record: the header says "c"
    const orchlog::detail::DTypeArg dt(dtype);
    const std::string_view name = checkpoint ? checkpoint : "";
    if (!orchlog::detail::dtype_known(dt, name)) return 0;
    const std::vector<orchlog::MetaItem> items = meta_of(meta, n_meta);
    return orchlog::log(name, {data, *dt.dtype, shape_of(shape, ndim)}, orchlog_c::key_of(key, parts), items) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

int orchlog_graft_named(const char* checkpoint, void* data, const char* dtype, const int64_t* shape, size_t ndim,
                        const orchlog_key* key, const orchlog_named_parts* parts, const orchlog_meta* meta,
                        size_t n_meta) {
  if (!orchlog::detail::may_log()) return 0;
  try {
    orchlog::detail::settle_state("c");
    const orchlog::detail::DTypeArg dt(dtype);
    const std::string_view name = checkpoint ? checkpoint : "";
    if (!orchlog::detail::dtype_known(dt, name)) return 0;
    const std::vector<orchlog::MetaItem> items = meta_of(meta, n_meta);
    return orchlog::graft(name, data, *dt.dtype, shape_of(shape, ndim), orchlog_c::key_of(key, parts), items) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

int orchlog_graft(const char* checkpoint, void* data, const char* dtype, const int64_t* shape, size_t ndim,
                  const orchlog_key* key) {
  return orchlog_graft_named(checkpoint, data, dtype, shape, ndim, key, nullptr, nullptr, 0);
}

int orchlog_log_meta(const char* checkpoint, const void* data, const char* dtype, const int64_t* shape, size_t ndim,
                     const orchlog_key* key, const orchlog_meta* meta, size_t n_meta) {
  return orchlog_log_named(checkpoint, data, dtype, shape, ndim, key, nullptr, meta, n_meta);
}

int orchlog_log(const char* checkpoint, const void* data, const char* dtype, const int64_t* shape, size_t ndim,
                const orchlog_key* key) {
  return orchlog_log_named(checkpoint, data, dtype, shape, ndim, key, nullptr, nullptr, 0);
}

int orchlog_enabled(void) {
  orchlog::detail::settle_state("c");
  return orchlog::enabled() ? 1 : 0;
}
int orchlog_flush(void) { return orchlog::flush() ? 1 : 0; }
void orchlog_close(void) { orchlog::close(); }
uint64_t orchlog_error_count(void) { return orchlog::status().errors; }
int64_t orchlog_record_count(void) { return orchlog::status().records; }
const char* orchlog_version(void) { return orchlog::schema::kLibraryVersion.data(); }

int orchlog_encode_record(const orchlog_record_input* in, orchlog_bytes* jsonl, orchlog_bytes* frame) {
  if (in == nullptr) return 0;
  try {
    const auto dtype = orchlog::schema::dtype_from_name(in->dtype ? in->dtype : "");
    if (!dtype) return 0;
    orchlog::RecordInput r;
    orchlog_c::fill_record_input(r, *in);
    r.tensor = {in->data, *dtype, shape_of(in->shape, in->ndim)};
    r.values = in->values;
    r.meta = meta_of(in->meta, in->n_meta);
    const auto encoded = orchlog::encode_record(r);
    return encoded && copy_out(encoded->jsonl, jsonl) && copy_out(encoded->frame, frame) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

int orchlog_encode_header(const orchlog_header_input* in, orchlog_bytes* jsonl, orchlog_bytes* frame) {
  if (in == nullptr) return 0;
  try {
    orchlog::HeaderInput h;
    orchlog_c::fill_header_input(h, *in);
    h.config = meta_of(in->config, in->n_config);
    const auto encoded = orchlog::encode_header(h);
    return copy_out(encoded.jsonl, jsonl) && copy_out(encoded.frame, frame) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

void orchlog_bytes_free(orchlog_bytes* bytes) {
  if (bytes == nullptr) return;
  std::free(bytes->data);
  bytes->data = nullptr;
  bytes->size = 0;
}

void orchlog_blake3_hex(const void* data, size_t len, char out[65]) { orchlog::blake3_hex(data, len, out); }

}  // extern "C"
