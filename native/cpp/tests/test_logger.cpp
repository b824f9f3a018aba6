// The logger writes a header and then exactly the canonical bytes of each
// record, in seq order, whole, from any number of threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "orchlog/encode.hpp"
#include "orchlog/logger.hpp"
#include "support/logger_setup.hpp"
#include "support/scratch.hpp"

namespace t = orchlog_test;

namespace {

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i) - 3.0f;
  return v;
}

}  // namespace

TEST(Logger, WritesAHeaderThenTheCanonicalLineOfEachRecord) {
  t::ScratchDir dir;
  t::ScopedEnv epoch("SOURCE_DATE_EPOCH", "1767323045");
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.jsonl"))));
  const auto x = ramp(896, 0.01f);
  const orchlog::Tensor tensor{x.data(), orchlog::DType::f32, {1, 896}};
  EXPECT_TRUE(orchlog::log("attn_norm", tensor, {5, 3, "rope", 0}));
  EXPECT_TRUE(orchlog::log("logits", tensor, {6}));
  orchlog::close();

  const auto lines = t::lines_of(t::read_file(dir.file("run.jsonl")));
  ASSERT_EQ(lines.size(), 3u);
  orchlog::HeaderInput h;
  h.created = "2026-01-02T03:04:05Z";
  h.team = "test";
  h.select = std::nullopt;
  EXPECT_EQ(lines[0], orchlog::encode_header(h).jsonl);
  EXPECT_EQ(lines[1], t::expected_record("attn_norm", tensor, {5, 3, "rope", 0}, 0).jsonl);
  EXPECT_EQ(lines[2], t::expected_record("logits", tensor, {6}, 1).jsonl);
}

TEST(Logger, FullModeWritesTheHeaderFrameThenWholeRecordFrames) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.bin"), orchlog::Mode::full)));
  const auto x = ramp(70000, 0.001f);  // > 64 KiB of tensor bytes
  const orchlog::Tensor tensor{x.data(), orchlog::DType::f32, {70000}};
  EXPECT_TRUE(orchlog::log("ffn_out", tensor, {1, 0}));
  orchlog::close();

  const std::string file = t::read_file(dir.file("run.bin"));
  const std::string frame = t::expected_record("ffn_out", tensor, {1, 0}, 0).frame;
  ASSERT_GT(file.size(), frame.size());
  EXPECT_EQ(file.substr(file.size() - frame.size()), frame);
  EXPECT_EQ(static_cast<unsigned char>(file[0]), 0x8C);  // the header: a map of 11 fields and its checksum
}

TEST(Logger, BothModeWritesJsonlAndTheBinaryStreamBesideIt) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.jsonl"), orchlog::Mode::both)));
  const auto x = ramp(16, 1.0f);
  const orchlog::Tensor tensor{x.data(), orchlog::DType::f32, {16}};
  EXPECT_TRUE(orchlog::log("embedding", tensor));
  const orchlog::Status status = orchlog::status();
  EXPECT_EQ(status.binary_path, dir.file("run.jsonl.bin"));
  orchlog::close();
  const auto want = t::expected_record("embedding", tensor, {}, 0);
  EXPECT_EQ(t::lines_of(t::read_file(dir.file("run.jsonl"))).at(1), want.jsonl);
  const std::string frames = t::read_file(dir.file("run.jsonl.bin"));
  EXPECT_EQ(frames.substr(frames.size() - want.frame.size()), want.frame);
}

TEST(Logger, TheSelectorSkipsRecordsAndSeqCountsOnlyWrittenOnes) {
  t::ScratchDir dir;
  auto options = t::options_for(dir.file("run.jsonl"));
  options.select = "layer=1-2,checkpoint=attn_*";
  ASSERT_TRUE(orchlog::configure(options));
  const auto x = ramp(8, 1.0f);
  const orchlog::Tensor tensor{x.data(), orchlog::DType::f32, {8}};
  int written = 0;
  for (int layer = 0; layer < 4; ++layer) {
    written += orchlog::log("attn_norm", tensor, {std::nullopt, layer});
    written += orchlog::log("ffn_out", tensor, {std::nullopt, layer});
  }
  EXPECT_FALSE(orchlog::log("attn_norm", tensor));  // null layer never matches a layer clause
  orchlog::close();
  EXPECT_EQ(written, 2);
  const auto lines = t::lines_of(t::read_file(dir.file("run.jsonl")));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("\"select\":\"layer=1-2,checkpoint=attn_*\""), std::string::npos);
  EXPECT_EQ(lines[1], t::expected_record("attn_norm", tensor, {std::nullopt, 1}, 0).jsonl);
  EXPECT_EQ(lines[2], t::expected_record("attn_norm", tensor, {std::nullopt, 2}, 1).jsonl);
}

TEST(Logger, SelectsAnswersWhatLogWouldWriteWithoutWritingIt) {
  t::ScratchDir dir;
  auto options = t::options_for(dir.file("run.jsonl"));
  options.select = "checkpoint=attn_*,token=4";
  ASSERT_TRUE(orchlog::configure(options));
  EXPECT_TRUE(orchlog::selects("attn_norm", {4}));
  EXPECT_FALSE(orchlog::selects("attn_norm", {3}));
  EXPECT_FALSE(orchlog::selects("ffn_out", {4}));
  EXPECT_TRUE(orchlog::selects("attn_norm", {2}, 3));   // tokens 2..4
  EXPECT_FALSE(orchlog::selects("attn_norm", {5}, 8));  // tokens 5..12
  EXPECT_EQ(orchlog::status().records, 0);
  orchlog::close();
  EXPECT_FALSE(orchlog::selects("attn_norm", {4}));  // logging is off
}

TEST(Logger, NegativeKeyValuesMeanNone) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.jsonl"))));
  const float v = 1.0f;
  const orchlog::Tensor tensor{&v, orchlog::DType::f32, {1}};
  EXPECT_TRUE(orchlog::log("logits", tensor, {-1, -1, std::nullopt, -1}));
  orchlog::close();
  EXPECT_EQ(t::lines_of(t::read_file(dir.file("run.jsonl"))).at(1), t::expected_record("logits", tensor, {}, 0).jsonl);
}

TEST(Logger, KeyValuesBeyondTheirFieldTypeMeanNoneRatherThanWrapping) {
  const std::int64_t layer_past_i32 = std::int64_t{1} << 32 | 5;  // would wrap to layer 5 if narrowed
  const orchlog::Key key{std::uint64_t{1} << 63, layer_past_i32, nullptr, std::optional<std::int64_t>(1ll << 31)};
  EXPECT_FALSE(key.token_idx || key.layer || key.stage || key.step);
  const orchlog::Key fits{std::numeric_limits<std::int64_t>::max(), std::int64_t{2147483647}, "rope", 0u};
  EXPECT_EQ(fits.token_idx, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(fits.layer, 2147483647);
  EXPECT_EQ(fits.stage, std::optional<std::string_view>("rope"));
  EXPECT_EQ(fits.step, 0);
}

TEST(Logger, RecordsFromManyThreadsNeverInterleaveAndSeqFollowsFileOrder) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.jsonl"))));
  constexpr int kThreads = 8, kPerThread = 150;
  std::vector<std::vector<float>> data;
  for (int i = 0; i < kThreads; ++i) data.push_back(ramp(300 + 37 * i, 0.5f + i));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      const orchlog::Tensor tensor{data[i].data(), orchlog::DType::f32, {static_cast<std::int64_t>(data[i].size())}};
      for (int k = 0; k < kPerThread; ++k) orchlog::log("thread_" + std::to_string(i), tensor, {k});
    });
  for (auto& th : threads) th.join();
  orchlog::close();

  const auto lines = t::lines_of(t::read_file(dir.file("run.jsonl")));
  ASSERT_EQ(lines.size(), 1u + kThreads * kPerThread);
  std::vector<int> next_token(kThreads, 0);
  for (std::size_t seq = 0; seq + 1 < lines.size(); ++seq) {
    const std::string& line = lines[seq + 1];
    const auto at = line.find("thread_") + 7;
    const int i = std::stoi(line.substr(at));
    const orchlog::Tensor tensor{data[i].data(), orchlog::DType::f32, {static_cast<std::int64_t>(data[i].size())}};
    // Each thread's records appear in its own order, each line exactly as encoded.
    ASSERT_EQ(line, t::expected_record("thread_" + std::to_string(i), tensor, {next_token[i]++},
                                       static_cast<std::int64_t>(seq))
                        .jsonl);
  }
}

TEST(Logger, ValuesAllKeepsEveryElementAndZeroKeepsNone) {
  t::ScratchDir dir;
  auto options = t::options_for(dir.file("run.jsonl"));
  const auto x = ramp(40, 0.25f);
  const orchlog::Tensor tensor{x.data(), orchlog::DType::f32, {40}};
  for (std::int64_t n : {orchlog::kAllValues, std::int64_t{0}}) {
    options.values = n;
    ASSERT_TRUE(orchlog::configure(options));
    EXPECT_TRUE(orchlog::log("x", tensor));
    orchlog::close();
    EXPECT_EQ(t::lines_of(t::read_file(dir.file("run.jsonl"))).at(1), t::expected_record("x", tensor, {}, 0, n).jsonl);
  }
}

TEST(Logger, RankAndPidAreSubstitutedInThePath) {
  t::ScratchDir dir;
  auto options = t::options_for(dir.file("r{rank}-p{pid}.jsonl"));
  options.rank = 3;
  options.world_size = 4;
  ASSERT_TRUE(orchlog::configure(options));
  EXPECT_EQ(orchlog::status().path, dir.file("r3-p" + std::to_string(getpid()) + ".jsonl"));
  orchlog::close();
}

TEST(Logger, WithoutAPathLoggingIsOffAndNothingIsWritten) {
  auto options = t::options_for("");
  EXPECT_FALSE(orchlog::configure(options));
  const float v = 1;
  EXPECT_FALSE(orchlog::log("x", {&v, orchlog::DType::f32, {1}}));
  EXPECT_FALSE(orchlog::enabled());
}
