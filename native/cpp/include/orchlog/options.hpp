// What configure() takes and status() returns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "orchlog/api_gen.hpp"

namespace orchlog {

// Options (one setting per env knob) and Mode are generated from the schema: api_gen.hpp.

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
