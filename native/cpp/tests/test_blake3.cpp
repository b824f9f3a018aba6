// BLAKE3 against the official test vectors, on every kernel path the CPU runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "orchlog/blake3.hpp"
#include "support/json.hpp"

namespace t = orchlog_test;

namespace {

// The official vectors' input: bytes 0, 1, ..., 250, 0, 1, ...
std::vector<std::uint8_t> official_input(std::size_t n) {
  std::vector<std::uint8_t> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<std::uint8_t>(i % 251);
  return in;
}

std::string hex(const std::uint8_t* p, std::size_t n) {
  return t::to_hex(std::string(reinterpret_cast<const char*>(p), n));
}

class Blake3Path : public ::testing::TestWithParam<orchlog::Blake3Path> {
 protected:
  void SetUp() override {
    if (!orchlog::blake3_path_supported(GetParam()))
      GTEST_SKIP() << "this CPU cannot run the " << orchlog::blake3_path_name(GetParam()) << " kernel";
  }
};

}  // namespace

TEST_P(Blake3Path, ReproducesEveryOfficialHashAndExtendedOutput) {
  const t::Json doc = t::load_vectors("blake3_official.json");
  ASSERT_GE(doc["cases"].size(), 20u);
  for (const t::Json& c : doc["cases"].items) {
    const auto n = static_cast<std::size_t>(c["input_len"].i64());
    SCOPED_TRACE(n);
    const auto in = official_input(n);
    std::uint8_t out[131];
    orchlog::blake3_hash(GetParam(), in.data(), n, out, 32);
    EXPECT_EQ(hex(out, 32), c["hash"].str());
    orchlog::blake3_hash(GetParam(), in.data(), n, out, sizeof out);
    EXPECT_EQ(hex(out, sizeof out), c["extended_hash"].str());
  }
}

// Inputs long enough for several 64 KiB segments and a ragged tail exercise
// the segment stack, which the official lengths (at most 100 KiB) barely
// reach; 3, 19 and 23 chunks leave partial SIMD batches behind.
TEST_P(Blake3Path, AgreesWithThePortableKernelOnLongRaggedInputs) {
  for (std::size_t n : {std::size_t{3 * 1024}, std::size_t{19 * 1024}, std::size_t{23 * 1024 + 1}, std::size_t{65536},
                        std::size_t{65537}, std::size_t{3 * 65536 + 1024}, std::size_t{7 * 65536 + 4095},
                        std::size_t{(1u << 20) + 17}}) {
    SCOPED_TRACE(n);
    const auto in = official_input(n);
    std::uint8_t want[32], got[32];
    orchlog::blake3_hash(orchlog::Blake3Path::portable, in.data(), n, want);
    orchlog::blake3_hash(GetParam(), in.data(), n, got);
    EXPECT_EQ(hex(got, 32), hex(want, 32));
  }
}

// Every length up to five chunks: the last few chunks of a hash are hashed together with the partial
// one, each lane its own number of blocks, and the last block of any length (a hidden-state row of 896
// f32 is three chunks and eight blocks).
TEST_P(Blake3Path, AgreesWithThePortableKernelOnEveryLengthUpToFiveChunks) {
  const auto in = official_input(5 * 1024);
  for (std::size_t n = 0; n <= in.size(); ++n) {
    std::uint8_t want[32], got[32];
    orchlog::blake3_hash(orchlog::Blake3Path::portable, in.data(), n, want);
    orchlog::blake3_hash(GetParam(), in.data(), n, got);
    ASSERT_EQ(hex(got, 32), hex(want, 32)) << n << " bytes";
  }
}

// Every whole number of chunks up to 40, and a byte either side: what the widest kernel's batches leave
// over (1 to 15 whole chunks, with or without a partial one) goes through the narrowest kernel that
// holds it, rows or transposed, each with its own last-chunk length.
TEST_P(Blake3Path, AgreesWithThePortableKernelAroundEveryWholeNumberOfChunks) {
  const auto in = official_input(40 * 1024 + 1);
  for (std::size_t chunks = 1; chunks <= 40; ++chunks) {
    for (std::size_t n : {chunks * 1024 - 1, chunks * 1024, chunks * 1024 + 1}) {
      std::uint8_t want[32], got[32];
      orchlog::blake3_hash(orchlog::Blake3Path::portable, in.data(), n, want);
      orchlog::blake3_hash(GetParam(), in.data(), n, got);
      ASSERT_EQ(hex(got, 32), hex(want, 32)) << n << " bytes";
    }
  }
}

// An input of a segment or less, its last chunks hashed a block at a time between a caller's own work
// (digest.hpp steps it between the sketch's runs): the same hash whether the caller steps it not at all,
// part of the way, to the end or past it; every length up to five chunks, and around every whole number
// of chunks up to a segment (row-wise tails of 1 to 4 chunks behind 0 to 48 batched ones, and none).
TEST_P(Blake3Path, SteppedHasherGivesTheSameHashHoweverOftenItIsStepped) {
  namespace b3 = orchlog::detail::blake3;
  const auto in = official_input(b3::SteppedHasher::kMaxLen);
  std::vector<std::size_t> lengths;
  for (std::size_t n = b3::SteppedHasher::kMinLen; n <= 5 * 1024; ++n) lengths.push_back(n);
  for (std::size_t chunks = 6; chunks <= b3::kSegmentChunks; ++chunks)
    for (std::size_t n : {chunks * 1024 - 1, chunks * 1024, chunks * 1024 + 1})
      if (n <= b3::SteppedHasher::kMaxLen) lengths.push_back(n);
  for (const std::size_t n : lengths) {
    std::uint8_t want[32];
    orchlog::blake3_hash(orchlog::Blake3Path::portable, in.data(), n, want);
    for (const int steps : {0, 1, 7, 16, 40}) {
      b3::SteppedHasher hasher(GetParam(), in.data(), n);
      for (int k = 0; k < steps; ++k) hasher.step();
      std::uint8_t got[32];
      hasher.finish(got, sizeof got);
      ASSERT_EQ(hex(got, 32), hex(want, 32)) << n << " bytes, " << steps << " steps";
    }
  }
}

// A step compresses one block of each chunk of a row-wise tail: as many steps as its longest chunk has
// blocks, then none; none where the path has no row-wise kernel or the input no such tail.
TEST_P(Blake3Path, SteppedHasherStepsOnceABlockOfARowWiseTail) {
  namespace b3 = orchlog::detail::blake3;
  const auto in = official_input(b3::SteppedHasher::kMaxLen);
  const bool rows = GetParam() == orchlog::Blake3Path::avx2 || GetParam() == orchlog::Blake3Path::avx512;
  const std::size_t widest = GetParam() == orchlog::Blake3Path::avx512 ? 16 : 8;
  for (const std::size_t n : {b3::SteppedHasher::kMinLen, std::size_t{3584}, std::size_t{4096}, std::size_t{19456},
                              widest * 1024, std::size_t{(widest + 5) * 1024}}) {
    b3::SteppedHasher hasher(GetParam(), in.data(), n);
    int steps = 0;
    while (hasher.step()) ++steps;
    const std::size_t tail = n / 1024 % widest + (n % 1024 != 0 ? 1 : 0);
    EXPECT_EQ(steps, rows && tail >= 1 && tail <= 4 ? 16 : 0) << n << " bytes";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKernel, Blake3Path, ::testing::ValuesIn(orchlog::kAllBlake3Paths),
                         [](const auto& test) { return std::string(orchlog::blake3_path_name(test.param)); });

TEST(Blake3, ForcingAPathTheCpuLacksIsRefused) {
  for (auto path : orchlog::kAllBlake3Paths) {
    if (!orchlog::blake3_path_supported(path)) {
      EXPECT_FALSE(orchlog::blake3_set_path(path));
    }
  }
  EXPECT_TRUE(orchlog::blake3_set_path(orchlog::Blake3Path::portable));
  EXPECT_EQ(orchlog::blake3_path(), orchlog::Blake3Path::portable);
  EXPECT_TRUE(orchlog::blake3_set_path(orchlog::blake3_best_path()));
}

TEST(Blake3, HexOfNoBytesIsTheEmptyHash) {
  char hex_out[65];
  orchlog::blake3_hex("", 0, hex_out);
  EXPECT_STREQ(hex_out, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
}
