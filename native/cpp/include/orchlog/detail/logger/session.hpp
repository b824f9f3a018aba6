// A session is one configured run: its resolved settings, its open files and
// its record counter. configure() replaces the session; records in flight
// finish against the session they started with.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

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
  std::string path;         // JSONL in summary/both mode, the binary stream in full mode
  std::string binary_path;  // both mode only
  std::string team;
  std::int64_t values = 10;
  Mode mode = Mode::summary;
  std::optional<std::string> select_text;
  std::optional<Selector> selector;
  std::int32_t rank = 0;
  std::int32_t world_size = 1;
  std::optional<std::string> model;
  std::optional<std::string> git_commit;
  std::vector<OwnedMetaItem> config;
  std::string producer = "cpp";
  std::string created;

  bool writes_jsonl() const { return mode != Mode::full; }
  bool writes_frames() const { return mode != Mode::summary; }
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
