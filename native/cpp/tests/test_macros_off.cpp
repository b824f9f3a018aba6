// Without ORCH_LOGGING the macros expand to nothing: no argument is
// evaluated and nothing is written, even with ORCH_LOG_FILE set.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>

#undef ORCH_LOGGING
#include "orchlog/orchlog.hpp"
#include "support/scratch.hpp"

namespace t = orchlog_test;

namespace {
int evaluated = 0;
[[maybe_unused]] const float* would_fail() {  // never called: the macros drop their arguments
  ++evaluated;
  throw std::logic_error("a compiled-out ORCH_LOG evaluated its arguments");
}
[[maybe_unused]] float* would_fail_writable() {
  ++evaluated;
  throw std::logic_error("a compiled-out ORCH_GRAFT evaluated its arguments");
}
}  // namespace

TEST(MacrosOff, NoArgumentIsEvaluatedAndNothingIsWritten) {
  t::ScratchDir dir;
  t::ScopedEnv file("ORCH_LOG_FILE", dir.file("never.jsonl").c_str());
  ORCH_LOG("x", would_fail(), "f32", 1);
  ORCH_LOG_TOKEN("x", (++evaluated, 0), would_fail(), "f32", 1);
  ORCH_LOG_AT("x", 0, 1, "rope", 0, would_fail(), "f32", 1);
  ORCH_LOG_CUDA("x", 0, would_fail(), nullptr, "f32", 1);
  ORCH_LOG_JSON_TOKEN("x", would_fail(), 1, "f32", "[1]", 0);
  ORCH_GRAFT("x", would_fail_writable(), "f32", 1);
  ORCH_GRAFT_AT("x", (++evaluated, 0), 1, "rope", 0, would_fail_writable(), "f32", 1);
  ORCH_GRAFT_KEY("x", (++evaluated, orchlog::Key{}), would_fail_writable(), "f32", 1);
  EXPECT_EQ(evaluated, 0);
  EXPECT_NE(access(dir.file("never.jsonl").c_str(), F_OK), 0);
}

TEST(MacrosOff, MacrosAreUsableAsSingleStatements) {
  const bool flag = true;
  if (flag)
    ORCH_LOG("x", would_fail(), "f32", 1);
  else
    ORCH_LOG("y", would_fail(), "f32", 1);
  EXPECT_EQ(evaluated, 0);
}
