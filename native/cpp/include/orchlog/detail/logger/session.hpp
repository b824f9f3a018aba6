// A session is one configured run: its resolved settings, its open files and
// its record counter. configure() replaces the session; records in flight
// finish against the session they started with.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "orchlog/detail/fields_gen.hpp"
#include "orchlog/detail/logger/env.hpp"
#include "orchlog/detail/logger/file_sink.hpp"
#include "orchlog/detail/logger/selector.hpp"
#include "orchlog/types.hpp"

namespace orchlog {
namespace detail {

// A meta item that owns its text (the run's `config` outlives the call that set it).
struct OwnedMetaItem {
  std::string key;
  schema::MetaValue value;
  std::string text;
};

// Settings after options and env knobs have been resolved and checked.
struct Settings {
  KnobValues knobs;         // every knob's setting (fields_gen.hpp)
  std::string path;         // knobs.path expanded: JSONL in summary/both mode, the binary stream in full mode
  std::string binary_path;  // both mode only
  std::optional<Selector> selector;
  std::vector<OwnedMetaItem> config;
  std::string producer = "cpp";

  bool writes_jsonl() const { return knobs.mode != Mode::full; }
  bool writes_frames() const { return knobs.mode != Mode::summary; }
};

class Session {
 public:
  explicit Session(Settings s) : settings(std::move(s)) {}

  const Settings settings;
  std::mutex mutex;
  // Guarded by `mutex`:
  FileSink jsonl;
  FileSink frames;
  std::int64_t seq = 0;
  bool closed = false;
  std::string buffer;  // reused encoding buffer
};

}  // namespace detail
}  // namespace orchlog
