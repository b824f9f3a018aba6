// Starting a run that does not depend on the ORCH_LOG_* variables of
// whoever runs the tests.
#pragma once

#include <string>

#include "orchlog/logger.hpp"

namespace orchlog_test {

inline orchlog::Options options_for(const std::string& path, orchlog::Mode mode = orchlog::Mode::summary) {
  orchlog::Options o;
  o.path = path;
  o.team = "test";
  o.values = 10;
  o.mode = mode;
  o.select = "";
  o.rank = 0;
  o.world_size = 1;
  o.model = "";
  o.git_commit = "";
  return o;
}

}  // namespace orchlog_test
