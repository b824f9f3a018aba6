// A session is one configured run: its resolved settings, its open files and
// its record counter. configure() replaces the session; records in flight
// finish against the session they started with.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "orchlog/detail/against/against.hpp"
#include "orchlog/detail/fields_gen.hpp"
#include "orchlog/detail/graft/reference.hpp"
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
  std::int64_t pid = 0;     // the process whose run this is ({pid} in the path)
  std::optional<Selector> selector;
  std::optional<Selector> graft_selector;  // none: graft calls overwrite nothing
  std::vector<OwnedMetaItem> config;
  std::string producer = "cpp";

  bool writes_jsonl() const { return knobs.mode != Mode::full; }
  bool writes_frames() const { return knobs.mode != Mode::summary; }
};

// The reference a run's graft calls read from: indexed on the first graft
// call that its selector accepts, then read from under its own mutex.
struct GraftState {
  std::mutex mutex;
  bool loaded = false;
  std::optional<ReferenceIndex> reference;              // none: it could not be read
  std::unordered_map<std::string, std::size_t> counts;  // graft calls so far per key (occurrence matching)
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
  std::string buffer;    // reused encoding buffer
  WholeRecords whole;    // what ORCH_LOG_AGAINST and ORCH_LOG_ON_NONFINITE have written whole
  bool stopped = false;  // ORCH_LOG_STOP or ORCH_LOG_ON_NONFINITE=stop: no record is written any more
  // Not guarded by `mutex`:
  GraftState graft;
  AgainstReference against;
};

}  // namespace detail
}  // namespace orchlog
