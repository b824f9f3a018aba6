// With ORCH_LOGGING each macro form writes the record the C++ API would; at
// run time without ORCH_LOG_FILE the macros still evaluate nothing.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#define ORCH_LOGGING 1
#include "orchlog/orchlog.hpp"
#include "support/logger_setup.hpp"
#include "support/scratch.hpp"

namespace t = orchlog_test;

namespace {

int evaluated = 0;
const float* would_fail() {
  ++evaluated;
  throw std::logic_error("a disabled ORCH_LOG evaluated its arguments");
}

float* would_fail_writable() {
  ++evaluated;
  throw std::logic_error("a disabled ORCH_GRAFT evaluated its arguments");
}

}  // namespace

TEST(MacrosOn, EachFormWritesTheRecordTheApiWould) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.jsonl"))));
  std::vector<float> x(2 * 896);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) / 7.0f;
  const std::size_t n_tokens = 2;
  const int token_idx = 4;
  ORCH_LOG("embedding", x.data(), "f32", n_tokens, 896);
  ORCH_LOG_TOKEN("attn_norm", token_idx, x.data(), orchlog::DType::f32, 896);
  ORCH_LOG_AT("Qcur", token_idx, 3, "rope", 0, x.data(), "float32", 896);
  ORCH_LOG_AT("logits", token_idx, -1, nullptr, orchlog::none, x.data(), "f32", 896);
  ORCH_LOG_CUDA("host_memory", token_idx, x.data(), nullptr, "f32", 896);
  ORCH_LOG_JSON_TOKEN("my_checkpoint", x.data(), 896, "f32", "[896]", token_idx);
  orchlog::close();

  const orchlog::Tensor two_rows{x.data(), orchlog::DType::f32, {2, 896}};
  const orchlog::Tensor row{x.data(), orchlog::DType::f32, {896}};
  const std::vector<std::string> want = {
      t::expected_record("embedding", two_rows, {}, 0).jsonl,
      t::expected_record("attn_norm", row, {4}, 1).jsonl,
      t::expected_record("Qcur", row, {4, 3, "rope", 0}, 2).jsonl,
      t::expected_record("logits", row, {4}, 3).jsonl,
      t::expected_record("host_memory", row, {4}, 4).jsonl,
      t::expected_record("my_checkpoint", row, {4}, 5).jsonl,
  };
  const auto lines = t::lines_of(t::read_file(dir.file("run.jsonl")));
  ASSERT_EQ(lines.size(), want.size() + 1);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(lines[i + 1], want[i]);
}

TEST(MacrosOn, TheLegacyFormFallsBackToTheCountWhenTheShapeTextDisagrees) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.jsonl"))));
  const float v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  t::CapturedStderr err;
  ORCH_LOG_JSON_TOKEN("legacy", v, 10, "f32", "[896]", 0);
  orchlog::close();
  EXPECT_EQ(err.warnings().size(), 1u);
  EXPECT_EQ(t::lines_of(t::read_file(dir.file("run.jsonl"))).at(1),
            t::expected_record("legacy", {v, orchlog::DType::f32, {10}}, {0}, 0).jsonl);
}

TEST(MacrosOn, OffAtRunTimeTheArgumentsAreNotEvaluated) {
  orchlog::configure(t::options_for(""));
  ASSERT_FALSE(orchlog::enabled());
  ORCH_LOG("x", would_fail(), "f32", 1);
  ORCH_LOG_AT("x", (++evaluated, 0), 1, "rope", 0, would_fail(), "f32", 1);
  ORCH_LOG_JSON_TOKEN("x", would_fail(), 1, "f32", "[1]", 0);
  ORCH_GRAFT("x", would_fail_writable(), "f32", 1);
  ORCH_GRAFT_AT("x", (++evaluated, 0), 1, "rope", 0, would_fail_writable(), "f32", 1);
  EXPECT_EQ(evaluated, 0);
}

// A graft call off at run time takes the same path as a log call: one relaxed load and a branch.
TEST(MacrosOn, OffAtRunTimeAGraftIsTheLogCallsLoadAndBranch) {
  orchlog::configure(t::options_for(""));
  float x = 1.0f;
  EXPECT_FALSE(orchlog::graft("x", &x, orchlog::DType::f32, {1}));
  EXPECT_EQ(x, 1.0f);
  EXPECT_EQ(orchlog::status().records, 0);
}
