// The logger never harms its host: a full disk, an unwritable path, a closed
// descriptor, bad arguments or bad knobs give one warning and an error count,
// and failed output switches logging off, with no exception and no abort.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

#include "orchlog/orchlog.hpp"
#include "support/logger_setup.hpp"
#include "support/scratch.hpp"

namespace t = orchlog_test;

namespace {

const float kValues[4] = {1, 2, 3, 4};
const orchlog::Tensor kTensor{kValues, orchlog::DType::f32, {4}};

// The descriptor this process has open on `path` (via /proc/self/fd), or -1.
int fd_open_on(const std::string& path) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (dirent* e = readdir(dir)) {
    char target[PATH_MAX] = {};
    const std::string link = std::string("/proc/self/fd/") + e->d_name;
    if (readlink(link.c_str(), target, sizeof target - 1) > 0 && path == target) found = std::atoi(e->d_name);
  }
  closedir(dir);
  return found;
}

}  // namespace

TEST(NeverHarm, AFullDiskGivesOneWarningAndSwitchesLoggingOff) {
  t::CapturedStderr err;
  const std::uint64_t errors_before = orchlog::status().errors;
  EXPECT_FALSE(orchlog::configure(t::options_for("/dev/full")));  // the header write already fails
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(orchlog::log("x", kTensor));
  const auto warnings = err.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("/dev/full"), std::string::npos);
  EXPECT_NE(warnings[0].find("No space left on device"), std::string::npos);
  EXPECT_FALSE(orchlog::enabled());
  EXPECT_EQ(orchlog::status().errors, errors_before + 1);
}

TEST(NeverHarm, AnUnwritablePathGivesOneWarning) {
  t::CapturedStderr err;
  EXPECT_FALSE(orchlog::configure(t::options_for("/nonexistent-dir/trace.jsonl")));
  EXPECT_FALSE(orchlog::log("x", kTensor));
  const auto warnings = err.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cannot open /nonexistent-dir/trace.jsonl"), std::string::npos);
}

TEST(NeverHarm, ADescriptorClosedUnderneathGivesOneWarningAndLoggingStops) {
  t::ScratchDir dir;
  t::CapturedStderr err;
  const std::string path = dir.file("run.jsonl");
  ASSERT_TRUE(orchlog::configure(t::options_for(path)));
  EXPECT_TRUE(orchlog::log("before", kTensor));
  const int fd = fd_open_on(path);
  ASSERT_GE(fd, 0);
  ::close(fd);  // what a host that closes every descriptor it does not know would do
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(orchlog::log("after", kTensor));
  EXPECT_FALSE(orchlog::enabled());
  const auto warnings = err.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("Bad file descriptor"), std::string::npos);
  EXPECT_NE(warnings[0].find("1 records had been written"), std::string::npos);
  // The record written before the failure is intact.
  EXPECT_EQ(t::lines_of(t::read_file(path)).size(), 2u);
}

TEST(NeverHarm, AnInvalidSelectorTurnsLoggingOffWithOneWarning) {
  t::ScratchDir dir;
  t::CapturedStderr err;
  auto options = t::options_for(dir.file("run.jsonl"));
  options.select = "layer=3-1";
  EXPECT_FALSE(orchlog::configure(options));
  EXPECT_FALSE(orchlog::log("x", kTensor, {0, 3}));
  const auto warnings = err.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("layer=3-1"), std::string::npos);
}

TEST(NeverHarm, AMalformedKnobFallsBackToItsDefaultWithOneWarning) {
  t::ScratchDir dir;
  t::ScopedEnv values("ORCH_LOG_VALUES", "lots");
  t::CapturedStderr err;
  auto options = t::options_for(dir.file("run.jsonl"));
  options.values.reset();  // from the env knob
  ASSERT_TRUE(orchlog::configure(options));
  orchlog::close();
  const auto warnings = err.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("ORCH_LOG_VALUES='lots'"), std::string::npos);
  EXPECT_NE(t::read_file(dir.file("run.jsonl")).find("\"values\":10"), std::string::npos);
}

TEST(NeverHarm, BadArgumentsAreCountedEachTimeAndPrintedOnce) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.jsonl"))));
  t::CapturedStderr err;
  const std::uint64_t before = orchlog::status().errors;
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(orchlog::log("null", {nullptr, orchlog::DType::f32, {8}}));
    EXPECT_FALSE(orchlog::log("negative", {kValues, orchlog::DType::f32, {-2, 2}}));
  }
  EXPECT_EQ(orchlog::status().errors, before + 6);
  EXPECT_EQ(err.warnings().size(), 1u);
  EXPECT_TRUE(orchlog::log("fine", kTensor));  // bad calls do not stop logging
  orchlog::close();
}
