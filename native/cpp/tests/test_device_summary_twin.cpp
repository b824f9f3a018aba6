// The device summary's arithmetic (detail/device/summary_math.hpp), run on
// the CPU by its twin in the kernels' decomposition, gives the host
// emitters' digests bit for bit: every record vector's bytes, and random
// tensors of every dtype at the sizes where chunks, lanes and tree levels
// start and end. A GPU runs the same source (scripts/gpu-check.sh).
#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "orchlog/detail/device/summary_twin.hpp"
#include "orchlog/detail/encode/record_parts.hpp"
#include "support/vectors.hpp"

namespace t = orchlog_test;
namespace dev = orchlog::detail::device;
using orchlog::DType;

namespace {

dev::Elements elements_of(const orchlog::Tensor& tensor, std::int64_t numel) {
  return {static_cast<const std::uint8_t*>(tensor.data), tensor.dtype, numel};
}

// encode_record (encode.hpp) with the digest given instead of computed.
std::string jsonl_with_digest(const orchlog::RecordInput& in, const orchlog::detail::TensorDigest& digest,
                              std::string* frame) {
  std::string why;
  const auto size = orchlog::detail::measure(in.tensor, why);
  EXPECT_TRUE(size.has_value()) << why;
  const orchlog::detail::SortedMeta meta(orchlog::detail::span_of(in.meta));
  orchlog::detail::RecordParts parts;
  parts.checkpoint = in.checkpoint;
  parts.key = orchlog::detail::normalized(in.key);
  parts.call = in.call;
  parts.tensor = &in.tensor;
  parts.size = *size;
  parts.digest = digest;
  parts.meta = &meta;
  const auto view = orchlog::detail::record_view(parts, orchlog::detail::run_fields(in), in.seq, in.values);
  std::string line;
  orchlog::detail::append_jsonl(line, view);
  const auto split = orchlog::detail::append_frame(*frame, view);
  frame->insert(split.data_at, reinterpret_cast<const char*>(split.data.data), split.data.size);
  return line;
}

std::string bits_of(const std::optional<double>& v) {
  if (!v) return "null";
  std::uint64_t b;
  std::memcpy(&b, &*v, sizeof b);
  return std::to_string(b);
}

void expect_same_digest(const orchlog::detail::TensorDigest& twin, const orchlog::detail::TensorDigest& host) {
  EXPECT_EQ(bits_of(twin.stats.min), bits_of(host.stats.min));
  EXPECT_EQ(bits_of(twin.stats.max), bits_of(host.stats.max));
  EXPECT_EQ(bits_of(twin.stats.mean), bits_of(host.stats.mean));
  EXPECT_EQ(bits_of(twin.stats.rms), bits_of(host.stats.rms));
  EXPECT_EQ(bits_of(twin.stats.abs_max), bits_of(host.stats.abs_max));
  EXPECT_EQ(twin.stats.nan_count, host.stats.nan_count);
  EXPECT_EQ(twin.stats.inf_count, host.stats.inf_count);
  for (std::size_t r = 0; r < twin.sketch.size(); ++r) EXPECT_EQ(bits_of(twin.sketch[r]), bits_of(host.sketch[r])) << r;
  EXPECT_STREQ(twin.blake3.text, host.blake3.text);
}

// `numel` elements of `dtype`: random bit patterns for the floats (so NaN, +-Inf,
// -0 and subnormals all occur), with a run of ordinary values mixed in; random
// integers over the whole range.
std::vector<unsigned char> random_tensor(DType dtype, std::int64_t numel, std::mt19937_64& rng) {
  const auto size = static_cast<std::size_t>(orchlog::schema::dtype_size(dtype));
  std::vector<unsigned char> bytes(size * static_cast<std::size_t>(numel));
  std::normal_distribution<double> normal(0.0, 3.0);
  for (std::int64_t i = 0; i < numel; ++i) {
    unsigned char* at = bytes.data() + size * static_cast<std::size_t>(i);
    std::uint64_t bits = rng();
    const bool ordinary = rng() % 8 != 0;  // most elements finite and of ordinary size
    if (ordinary && dtype == DType::f64) {
      const double v = normal(rng);
      std::memcpy(&bits, &v, 8);
    } else if (ordinary && dtype == DType::f32) {
      const auto v = static_cast<float>(normal(rng));
      std::uint32_t b;
      std::memcpy(&b, &v, 4);
      bits = b;
    } else if (ordinary && (dtype == DType::f16 || dtype == DType::bf16)) {
      bits &= 0xBFFFu;  // the exponent's top bit clear: finite and small
    }
    std::memcpy(at, &bits, size);  // little-endian host
  }
  return bytes;
}

}  // namespace

TEST(DeviceSummaryTwin, EveryRecordVectorIsReproducedByteForByteFromTheTwinsDigest) {
  const t::Json doc = t::load_vectors("records.json");
  const auto cases = t::record_cases(doc);
  ASSERT_GT(cases.size(), 20u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c->name);
    std::string why;
    const auto size = orchlog::detail::measure(c->input.tensor, why);
    ASSERT_TRUE(size.has_value()) << why;
    const dev::Summary s = dev::summarize_twin(elements_of(c->input.tensor, size->numel), size->nbytes);
    std::string frame;
    EXPECT_EQ(jsonl_with_digest(c->input, dev::finish(s), &frame), c->expected_jsonl + "\n");
    EXPECT_EQ(t::to_hex(frame), t::to_hex(c->expected_frame));
  }
}

TEST(DeviceSummaryTwin, RandomTensorsOfEveryDtypeGiveTheHostDigestAtEveryBoundary) {
  const std::int64_t sizes[] = {0,   1,   7,    8,    9,    63,   64,   65,   127,  128,  129,  511,
                                512, 513, 1023, 1024, 1025, 1536, 2047, 2048, 2049, 4611, 9000, 70001};
  std::mt19937_64 rng(31);
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8, DType::u8, DType::i32, DType::i64}) {
    for (std::int64_t numel : sizes) {
      SCOPED_TRACE(std::string(orchlog::schema::dtype_name(dtype)) + " x " + std::to_string(numel));
      const auto bytes = random_tensor(dtype, numel, rng);
      const orchlog::Tensor tensor{bytes.data(), dtype, {numel}};
      const orchlog::detail::TensorSize size{numel, bytes.size()};
      // A slab of 3 chunks makes the twin carry the sketch accumulators across passes even here.
      const dev::Summary s = dev::summarize_twin(elements_of(tensor, numel), bytes.size(), 3);
      expect_same_digest(dev::finish(s), orchlog::detail::digest(tensor, size));
    }
  }
}

TEST(DeviceSummaryTwin, ALargeTensorSpanningSeveralSketchSlabsAndTreeLevelsGivesTheHostDigest) {
  std::mt19937_64 rng(3131);
  const std::int64_t numel = 2 * dev::kSketchSlab * dev::kChunk + 777;  // three slabs; 4 MiB of f16: 4097 chunks
  const auto bytes = random_tensor(DType::f16, numel, rng);
  const orchlog::Tensor tensor{bytes.data(), DType::f16, {numel}};
  const dev::Summary s = dev::summarize_twin(elements_of(tensor, numel), bytes.size());
  expect_same_digest(dev::finish(s), orchlog::detail::digest(tensor, {numel, bytes.size()}));
}

TEST(DeviceSummaryTwin, NonFiniteElementsAreCountedAndLeftOutOfTheSums) {
  const float values[] = {1.5f,
                          std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::infinity(),
                          -0.0f,
                          2.0f,
                          std::numeric_limits<float>::infinity(),
                          1e-45f,
                          -3.0f,
                          0.25f};
  const orchlog::Tensor tensor{values, DType::f32, {9}};
  const dev::Summary s = dev::summarize_twin(elements_of(tensor, 9), sizeof values);
  const auto digest = dev::finish(s);
  EXPECT_EQ(digest.stats.nan_count, 1);
  EXPECT_EQ(digest.stats.inf_count, 2);
  EXPECT_EQ(*digest.stats.min, -3.0);
  EXPECT_EQ(*digest.stats.max, 2.0);
  expect_same_digest(digest, orchlog::detail::digest(tensor, {9, sizeof values}));
}

// The sketch rows are rounded to f32, which hides the last bits of its f64
// accumulators. Chunk 1 here is built to add exactly the negation of what
// chunk 0 adds to every accumulator (about 2^42), and chunk 2 holds values
// near 0.01: in the format's order each accumulator returns to exactly 0
// before chunk 2 arrives, while an accumulator that added chunk 2 first
// would lose its bits to the large ones, which the rows show.
TEST(DeviceSummaryTwin, AccumulatorsThatCancelExactlyShowTheChunkOrder) {
  std::mt19937_64 rng(7);
  std::vector<double> x(3 * dev::kChunk);
  for (std::int64_t i = 0; i < dev::kChunk; ++i)
    x[static_cast<std::size_t>(i)] = static_cast<double>(static_cast<std::int64_t>(rng() % (1ull << 37)) - (1ll << 36));
  for (std::int64_t i = 2 * dev::kChunk; i < 3 * dev::kChunk; ++i)
    x[static_cast<std::size_t>(i)] = static_cast<double>(rng() % 1000) / 65536;
  const dev::Elements first{reinterpret_cast<const std::uint8_t*>(x.data()), DType::f64, dev::kChunk};
  namespace sk = orchlog::detail::sketch;
  std::uint8_t pick[64];
  sk::permutation(sk::kSeedTable, sk::splitmix64(sk::kSeedPick, 1) >> 54, pick);
  for (int q = 0; q < dev::kLanes; ++q) {
    double out0[64], y[64];
    dev::sketch_group(first, 0, q, out0);
    const auto g = static_cast<std::uint64_t>(dev::kLanes + q);  // group (chunk 1, lane q)
    const std::uint64_t delta = sk::splitmix64(sk::kSeedSigns, 2 * g), tau = sk::splitmix64(sk::kSeedSigns, 2 * g + 1);
    for (int r = 0; r < 64; ++r)
      y[r] = ((tau >> r) & 1 ? 1.0 : -1.0) * out0[pick[r]];  // chunk 1's transform must give this
    for (int h = 1; h < 64; h <<= 1)  // the transform is its own inverse up to 1/64; exact below 2^53
      for (int p = 0; p < 64; ++p)
        if (!(p & h)) {
          const double sum = y[p] + y[p + h];
          y[p + h] = y[p] - y[p + h];
          y[p] = sum;
        }
    for (int p = 0; p < 64; ++p)
      x[static_cast<std::size_t>(dev::kChunk + 8 * p + q)] = ((delta >> p) & 1 ? -1.0 : 1.0) * y[p] / 64;
  }
  const std::int64_t numel = 3 * dev::kChunk;
  const orchlog::Tensor tensor{x.data(), DType::f64, {numel}};
  const std::uint64_t nbytes = 8 * static_cast<std::uint64_t>(numel);
  const dev::Elements all{reinterpret_cast<const std::uint8_t*>(x.data()), DType::f64, numel};
  const auto host = orchlog::detail::digest(tensor, {numel, nbytes});
  for (std::int64_t slab : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}}) {
    SCOPED_TRACE("slab " + std::to_string(slab));
    expect_same_digest(dev::finish(dev::summarize_twin(all, nbytes, slab)), host);
  }
  // The construction worked: chunks 0 and 1 alone sketch to exactly zero.
  const auto cancelled = dev::finish(dev::summarize_twin({all.data, DType::f64, 2 * dev::kChunk}, nbytes * 2 / 3));
  for (double row : cancelled.sketch) EXPECT_EQ(row, 0.0);
}

// stats_add8 must leave a lane exactly as eight stats_add calls would, also where the
// answer depends on order: -0.0 and +0.0 compare equal, so a lane's minimum or maximum
// is whichever zero came first; NaN and infinities are counted and left out.
TEST(DeviceSummaryTwin, EightElementsAtOnceLeaveALaneAsEightOneByOne) {
  const double pool[] = {0.0,
                         -0.0,
                         1.5,
                         -1.5,
                         1e300,
                         -1e300,
                         4e-320,
                         std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::infinity(),
                         -std::numeric_limits<double>::infinity()};
  std::mt19937_64 rng(2026);
  const auto bits = [](double d) {
    std::uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
  };
  for (int trial = 0; trial < 20000; ++trial) {
    dev::StatsLane one = dev::stats_start(), eight = dev::stats_start();
    for (int batch = 0; batch < 3; ++batch) {
      double x[8];
      for (double& v : x) v = pool[rng() % (trial % 2 ? 3 : std::size(pool))];  // odd trials: zeros and 1.5 only
      for (const double v : x) dev::stats_add(one, v);
      dev::stats_add8(eight, x);
    }
    ASSERT_EQ(bits(one.sum), bits(eight.sum)) << trial;
    ASSERT_EQ(bits(one.sq), bits(eight.sq)) << trial;
    ASSERT_EQ(bits(one.min), bits(eight.min)) << trial;
    ASSERT_EQ(bits(one.max), bits(eight.max)) << trial;
    ASSERT_EQ(one.finite, eight.finite) << trial;
    ASSERT_EQ(one.nan, eight.nan) << trial;
    ASSERT_EQ(one.inf, eight.inf) << trial;
  }
}
