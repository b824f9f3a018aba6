// ORCH_LOG_AGAINST in the C++ core: what proves a record within tolerance,
// which records are written whole, and the reference index over JSONL.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "orchlog/detail/against/against.hpp"
#include "orchlog/encode.hpp"

using namespace orchlog::detail;
using orchlog::DType;

namespace {

TensorDigest digest_of(const std::vector<float>& x) {
  const orchlog::Tensor t{x.data(), DType::f32, {static_cast<std::int64_t>(x.size())}};
  std::string error;
  return digest(t, *measure(t, error));
}

ReferenceSummary summary_of(const std::vector<float>& x) {
  const TensorDigest d = digest_of(x);
  ReferenceSummary s;
  s.numel = static_cast<std::int64_t>(x.size());
  s.rms = d.stats.rms;
  s.blake3 = std::string(digest_view(d.blake3));
  s.sketched = true;
  s.sketch = d.sketch;
  return s;
}

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = scale * static_cast<float>((i * 37) % 101) / 50.0f - scale;
  return x;
}

}  // namespace

TEST(AgainstProof, TheSketchProvesASmallDifferenceAndNeverALargeOne) {
  const std::vector<float> ref = ramp(5000, 1.0f);
  std::vector<float> near = ref, far = ref;
  for (auto& v : near) v *= 1.00002f;  // rel_l2 2e-5
  for (std::size_t i = 0; i < far.size(); i += 7) far[i] += 0.05f;
  EXPECT_TRUE(within_by_sketch(summary_of(ref), digest_of(near), 5000, 1e-3));
  EXPECT_FALSE(within_by_sketch(summary_of(ref), digest_of(far), 5000, 1e-3));
  // The bound is an upper bound: a difference just below the tolerance is not proven by a sketch.
  std::vector<float> edge = ref;
  for (auto& v : edge) v *= 1.0009f;
  EXPECT_FALSE(within_by_sketch(summary_of(ref), digest_of(edge), 5000, 1e-3));
}

TEST(AgainstProof, WholeTensorsDecideAtTheToleranceItself) {
  const std::vector<float> ref = ramp(300, 2.0f);
  std::vector<float> edge = ref;
  for (auto& v : edge) v *= 1.0009f;  // rel_l2 9e-4 < 1e-3
  const auto* a = reinterpret_cast<const unsigned char*>(ref.data());
  const auto* b = reinterpret_cast<const unsigned char*>(edge.data());
  EXPECT_TRUE(within_by_tensors(DType::f32, a, DType::f32, b, 300, 1e-3));
  EXPECT_FALSE(within_by_tensors(DType::f32, a, DType::f32, b, 300, 8e-4));
}

TEST(AgainstProof, NoSketchOrNoRmsProvesNothing) {
  const std::vector<float> ref = ramp(64, 1.0f);
  ReferenceSummary s = summary_of(ref);
  s.sketched = false;
  EXPECT_FALSE(within_by_sketch(s, digest_of(ref), 64, 1e-3));
  s = summary_of(ref);
  s.rms.reset();
  EXPECT_FALSE(within_by_sketch(s, digest_of(ref), 64, 1e-3));
}

TEST(WholeRecords, TheFirstFailureAtEachEarlierTokenAndItsContextAreWhole) {
  WholeRecords w;
  const auto fail = AgainstVerdict::not_within, pass = AgainstVerdict::within;
  std::vector<std::string> got;
  auto step = [&](AgainstVerdict v, std::optional<std::int64_t> token) {
    const auto why = whole_because(w, v, false, false, token, 2, false);
    got.push_back(why ? std::string(*why) : "-");
  };
  step(pass, 3);
  step(fail, 3);             // against
  step(fail, 3);             // context
  step(pass, 4);             // context
  step(fail, 4);             // a later token: summary
  step(fail, 2);             // an earlier token: against again
  step(pass, 5);             // context
  step(fail, std::nullopt);  // the first failure without a token
  step(fail, std::nullopt);  // context (the second without a token is not earlier)
  EXPECT_EQ(got, (std::vector<std::string>{"-", "against", "against_context", "against_context", "-", "against",
                                           "against_context", "against", "against_context"}));
}

TEST(WholeRecords, StopFirstFailIsDueOnceTheContextIsWritten) {
  WholeRecords w;
  whole_because(w, AgainstVerdict::not_within, false, false, 0, 1, true);
  EXPECT_FALSE(w.stop_after_context && w.context_left == 0);
  whole_because(w, AgainstVerdict::within, false, false, 1, 1, true);
  EXPECT_TRUE(w.stop_after_context && w.context_left == 0);
}

TEST(ReferenceIndex, AJsonlTraceIsIndexedByKeyAndOccurrenceWithItsSummaries) {
  const std::string path = ::testing::TempDir() + "orchlog_against_ref.jsonl";
  {
    std::ofstream out(path);
    out << R"({"orchlog":2,"producer":{"language":"cpp","name":"orchlog","version":"0.1.0"}})" << "\n";
    out << R"({"checkpoint":"x","token_idx":1,"layer":null,"stage":"add","dtype":"f32","shape":[2],"numel":2,)"
        << R"("stats":{"rms":1.5,"nan_count":0,"inf_count":0},"sketch":[)";
    for (int i = 0; i < 64; ++i) out << (i ? "," : "") << (i == 0 ? "0.1" : "0");
    out << R"(],"blake3":"ab"})" << "\n";
    out << R"({"checkpoint":"x","token_idx":1,"layer":null,"stage":"add","dtype":"f16","shape":[2],"numel":2})"
        << "\n";
  }
  ReferenceIndex index;
  std::string error;
  ASSERT_TRUE(index.build(path, error, ReferenceUse::against)) << error;
  EXPECT_EQ(error, "");
  orchlog::Key key;
  key.token_idx = 1;
  key.stage = "add";
  const std::string text = graft_key_text("x", key);
  const ReferenceTensor* first = index.find(text, 0);
  ASSERT_NE(first, nullptr);
  EXPECT_FALSE(first->has_data);
  EXPECT_EQ(first->summary.rms, 1.5);
  EXPECT_TRUE(first->summary.sketched);
  EXPECT_EQ(first->summary.sketch[0], static_cast<double>(0.1f));  // the f32 the text stands for
  EXPECT_EQ(first->summary.blake3, "ab");
  ASSERT_NE(index.find(text, 1), nullptr);
  EXPECT_EQ(index.find(text, 1)->dtype, DType::f16);
  EXPECT_EQ(index.find(text, 2), nullptr);
  // A graft needs the tensors: the same file is refused for it.
  ReferenceIndex graft;
  EXPECT_FALSE(graft.build(path, error, ReferenceUse::graft));
  EXPECT_NE(error.find("is JSONL; a graft needs a full-mode binary stream"), std::string::npos) << error;
  std::remove(path.c_str());
}

TEST(ReferenceIndex, AJsonlLineThatIsNoRecordEndsTheIndexWithANote) {
  const std::string path = ::testing::TempDir() + "orchlog_against_bad.jsonl";
  {
    std::ofstream out(path);
    out << R"({"checkpoint":"x","dtype":"f32","shape":[1]})" << "\n";
    out << "{\"checkpoint\":\"\xff\",\"dtype\":\"f32\",\"shape\":[1]}\n";  // not UTF-8
    out << R"({"checkpoint":"y","dtype":"f32","shape":[1]})" << "\n";
  }
  ReferenceIndex index;
  std::string error;
  ASSERT_TRUE(index.build(path, error, ReferenceUse::against));
  EXPECT_NE(error.find("has no orchlog record at line 2"), std::string::npos) << error;
  EXPECT_EQ(index.records(), 1u);
  std::remove(path.c_str());
}

TEST(ReferenceIndex, ABinaryStreamIsIndexedWithTheSummariesItsJsonlTwinHolds) {
  // The same records encoded both ways: the frames' summaries (read through frame_reader.hpp, each frame
  // checked) must be the JSONL lines' to the bit, and the frames also say where each tensor lies.
  const std::vector<float> ramp_values = ramp(300, 1.5f);
  std::vector<float> nonfinite = ramp(40, 1.0f);
  nonfinite[3] = std::numeric_limits<float>::quiet_NaN();
  nonfinite[7] = std::numeric_limits<float>::infinity();
  const std::vector<std::int32_t> ids{5, 7, 11, 13};
  const orchlog::Tensor tensors[] = {
      {ramp_values.data(), DType::f32, {3, 100}}, {nonfinite.data(), DType::f32, {40}}, {ids.data(), DType::i32, {4}}};
  const orchlog::EncodedHeader header = orchlog::encode_header(orchlog::HeaderInput{});
  std::string frames = header.frame, lines = header.jsonl;
  for (std::int64_t seq = 0; seq < 3; ++seq) {
    orchlog::RecordInput in;
    in.checkpoint = "x";
    in.key.token_idx = seq;
    in.seq = seq;
    in.tensor = tensors[seq];
    const auto encoded = orchlog::encode_record(in);
    ASSERT_TRUE(encoded);
    frames += encoded->frame;
    lines += encoded->jsonl;
  }
  const std::string bin_path = ::testing::TempDir() + "orchlog_against_twin.bin";
  const std::string jsonl_path = ::testing::TempDir() + "orchlog_against_twin.jsonl";
  std::ofstream(bin_path, std::ios::binary) << frames;
  std::ofstream(jsonl_path, std::ios::binary) << lines;
  ReferenceIndex from_frames, from_lines;
  std::string error;
  ASSERT_TRUE(from_frames.build(bin_path, error, ReferenceUse::against)) << error;
  ASSERT_TRUE(from_lines.build(jsonl_path, error, ReferenceUse::against)) << error;
  EXPECT_EQ(error, "");
  for (std::int64_t seq = 0; seq < 3; ++seq) {
    orchlog::Key key;  // as the encoder resolves it
    key.token_idx = seq;
    key.rank = 0;
    key.num_shards = 1;
    const ReferenceTensor* f = from_frames.find(graft_key_text("x", key), 0);
    const ReferenceTensor* l = from_lines.find(graft_key_text("x", key), 0);
    ASSERT_NE(f, nullptr);
    ASSERT_NE(l, nullptr);
    const TensorDigest d = digest(tensors[seq], *measure(tensors[seq], error));
    EXPECT_TRUE(f->has_data);
    EXPECT_FALSE(l->has_data);
    EXPECT_EQ(f->nbytes, measure(tensors[seq], error)->nbytes);
    EXPECT_EQ(f->summary.blake3, std::string(digest_view(d.blake3)));
    EXPECT_EQ(l->summary.blake3, f->summary.blake3);
    EXPECT_EQ(f->summary.rms, d.stats.rms);
    EXPECT_EQ(l->summary.rms, f->summary.rms);
    EXPECT_EQ(f->summary.nan_count, d.stats.nan_count);
    EXPECT_EQ(f->summary.inf_count, d.stats.inf_count);
    EXPECT_EQ(l->summary.nan_count, f->summary.nan_count);
    EXPECT_EQ(l->summary.inf_count, f->summary.inf_count);
    EXPECT_TRUE(f->summary.sketched);
    EXPECT_EQ(l->summary.sketched, f->summary.sketched);
    EXPECT_EQ(l->summary.sketch, f->summary.sketch);
    for (std::size_t i = 0; i < f->summary.sketch.size(); ++i)
      EXPECT_EQ(f->summary.sketch[i], static_cast<double>(static_cast<float>(d.sketch[i]))) << i;
  }
  EXPECT_EQ(from_frames.records(), 3u);
  std::remove(bin_path.c_str());
  std::remove(jsonl_path.c_str());
}
