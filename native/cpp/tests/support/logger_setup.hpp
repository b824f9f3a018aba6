// Starting a run that does not depend on the ORCH_LOG_* variables of
// whoever runs the tests, and what such a run must write.
#pragma once

#include <string>
#include <string_view>

#include "orchlog/encode.hpp"
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

// The canonical bytes of a record written in an options_for() run.
inline orchlog::EncodedRecord expected_record(std::string_view checkpoint, const orchlog::Tensor& tensor,
                                              const orchlog::Key& key, std::int64_t seq, std::int64_t values = 10) {
  orchlog::RecordInput in;
  in.checkpoint = checkpoint;
  in.team = "test";
  in.key = key;
  in.seq = seq;
  in.tensor = tensor;
  in.values = values;
  return *orchlog::encode_record(in);
}

}  // namespace orchlog_test
