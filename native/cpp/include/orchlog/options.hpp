// What configure() takes and status() returns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "orchlog/types.hpp"

namespace orchlog {

// What a run writes: JSONL summaries, the binary stream with full tensors, or both.
enum class Mode : std::uint8_t { summary, full, both };

// Settings for configure(); every field left unset comes from its env knob.
struct Options {
  std::optional<std::string> path;         // ORCH_LOG_FILE ({rank}, {pid} substituted); "" turns logging off
  std::optional<std::string> team;         // ORCH_LOG_TEAM
  std::optional<std::int64_t> values;      // ORCH_LOG_VALUES; kAllValues keeps every element
  std::optional<Mode> mode;                // ORCH_LOG_MODE
  std::optional<std::string> select;       // ORCH_LOG_SELECT; "" selects everything
  std::optional<std::int32_t> rank;        // ORCH_LOG_RANK
  std::optional<std::int32_t> world_size;  // ORCH_LOG_WORLD_SIZE
  std::optional<std::string> model;        // ORCH_LOG_MODEL
  std::optional<std::string> git_commit;   // ORCH_LOG_GIT_COMMIT
  std::vector<MetaItem> config;            // the header's `config` (copied)
  std::string producer = "cpp";            // the header's producer.language; bindings set "c" or "python"
};

// Where logging stands, for tests, tools and the Python emitter's stats().
struct Status {
  bool enabled = false;
  std::int64_t records = 0;  // written in the current run
  std::uint64_t errors =
      0;  // problems warned about since the process started: bad knobs, records not written, failed writes
  std::string path;
  std::string binary_path;
};

}  // namespace orchlog
