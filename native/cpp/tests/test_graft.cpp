// orchlog::graft and ORCH_GRAFT: the selected records are overwritten from a
// full-mode reference trace and marked grafted; everything else is a log call.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#define ORCH_LOGGING 1
#include "orchlog/orchlog.hpp"
#include "support/logger_setup.hpp"
#include "support/scratch.hpp"

namespace t = orchlog_test;

namespace {

using orchlog::DType;

std::vector<float> filled(std::size_t n, float start) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + 0.125f * static_cast<float>(i);
  return v;
}

// A reference run in full mode: attn_norm at layers 0-2, ffn_out at layer 1, `wide` of 5 elements twice.
std::string write_reference(const t::ScratchDir& dir) {
  const std::string path = dir.file("ref.bin");
  EXPECT_TRUE(orchlog::configure(t::options_for(path, orchlog::Mode::full)));
  for (int layer = 0; layer < 3; ++layer) {
    const auto x = filled(6, 10.0f * static_cast<float>(layer + 1));
    orchlog::log("attn_norm", {x.data(), DType::f32, {2, 3}}, {0, layer});
  }
  const auto f = filled(6, 100.0f);
  orchlog::log("ffn_out", {f.data(), DType::f32, {2, 3}}, {0, 1});
  const auto w = filled(5, 7.0f);
  orchlog::log("wide", {w.data(), DType::f32, {5}}, {0, 1});
  orchlog::log("wide", {w.data(), DType::f32, {5}}, {0, 1});
  orchlog::close();
  return path;
}

orchlog::Options grafting(const std::string& out, const std::string& ref, const std::string& select) {
  orchlog::Options o = t::options_for(out);
  o.graft_from = ref;
  o.graft_select = select;
  return o;
}

orchlog::EncodedRecord expected(std::string_view checkpoint, const orchlog::Tensor& tensor, const orchlog::Key& key,
                                std::int64_t seq, bool grafted) {
  orchlog::RecordInput in;
  in.checkpoint = checkpoint;
  in.team = "test";
  in.key = key;
  in.seq = seq;
  in.tensor = tensor;
  in.call.grafted = grafted;
  return *orchlog::encode_record(in);
}

}  // namespace

TEST(Graft, OverwritesExactlyTheSelectedRecordsAndMarksThem) {
  t::ScratchDir dir;
  const std::string ref = write_reference(dir);
  ASSERT_TRUE(orchlog::configure(grafting(dir.file("run.jsonl"), ref, "checkpoint=attn_norm,layer=1-2")));
  std::vector<std::vector<float>> ours;
  std::vector<bool> grafted;
  for (int layer = 0; layer < 3; ++layer) {
    ours.push_back(filled(6, -1.0f));
    grafted.push_back(orchlog::graft("attn_norm", ours.back().data(), DType::f32, {2, 3}, {0, layer}));
  }
  auto ffn = filled(6, -2.0f);
  const bool ffn_grafted = orchlog::graft("ffn_out", ffn.data(), DType::f32, {2, 3}, {0, 1});
  orchlog::close();

  EXPECT_EQ(grafted, (std::vector<bool>{false, true, true}));
  EXPECT_FALSE(ffn_grafted);
  EXPECT_EQ(ours[0], filled(6, -1.0f));  // layer 0 not selected: untouched
  EXPECT_EQ(ours[1], filled(6, 20.0f));
  EXPECT_EQ(ours[2], filled(6, 30.0f));
  EXPECT_EQ(ffn, filled(6, -2.0f));

  const auto lines = t::lines_of(t::read_file(dir.file("run.jsonl")));
  ASSERT_EQ(lines.size(), 5u);
  for (int layer = 0; layer < 3; ++layer)
    EXPECT_EQ(lines[layer + 1],
              expected("attn_norm", {ours[layer].data(), DType::f32, {2, 3}}, {0, layer}, layer, layer > 0).jsonl);
  EXPECT_EQ(lines[4], expected("ffn_out", {ffn.data(), DType::f32, {2, 3}}, {0, 1}, 3, false).jsonl);
}

TEST(Graft, AWrongShapeLeavesTheTensorAloneAndWarnsOnce) {
  t::ScratchDir dir;
  const std::string ref = write_reference(dir);
  ASSERT_TRUE(orchlog::configure(grafting(dir.file("run.jsonl"), ref, "checkpoint=wide,checkpoint=absent")));
  const std::uint64_t errors_before = orchlog::status().errors;
  t::CapturedStderr err;
  auto x = filled(6, -3.0f);
  EXPECT_FALSE(orchlog::graft("wide", x.data(), DType::f32, {2, 3}, {0, 1}));
  EXPECT_FALSE(orchlog::graft("wide", x.data(), DType::f32, {2, 3}, {0, 1}));
  EXPECT_FALSE(orchlog::graft("absent", x.data(), DType::f32, {2, 3}, {0, 1}));
  orchlog::close();
  EXPECT_EQ(x, filled(6, -3.0f));
  const auto warnings = err.warnings();
  ASSERT_EQ(warnings.size(), 2u);  // one for the shape, printed once; one for the missing record
  EXPECT_NE(warnings[0].find("the reference record is f32 [5], the tensor f32 [2,3]"), std::string::npos);
  EXPECT_NE(warnings[1].find("'absent' token_idx=0 layer=1 rank=0"), std::string::npos) << warnings[1];
  EXPECT_EQ(orchlog::status().errors - errors_before, 3u);  // every failed graft counted
  // The records are still written, as log calls.
  EXPECT_EQ(t::lines_of(t::read_file(dir.file("run.jsonl"))).size(), 4u);
}

TEST(Graft, NothingIsGraftedWithoutASelector) {
  t::ScratchDir dir;
  const std::string ref = write_reference(dir);
  ASSERT_TRUE(orchlog::configure(grafting(dir.file("run.jsonl"), ref, " ")));
  auto x = filled(6, -1.0f);
  EXPECT_FALSE(orchlog::graft("attn_norm", x.data(), DType::f32, {2, 3}, {0, 1}));
  orchlog::close();
  EXPECT_EQ(x, filled(6, -1.0f));
}

TEST(Graft, ConvertsF32ReferencesToF16AndBf16WithRoundToNearestEven) {
  t::ScratchDir dir;
  const std::string ref = dir.file("ref.bin");
  ASSERT_TRUE(orchlog::configure(t::options_for(ref, orchlog::Mode::full)));
  const std::vector<float> values = {0.1f, -2.5f, 65504.0f, 1e-7f, 3.0e38f, 0.0f};
  orchlog::log("x", {values.data(), DType::f32, {6}}, {0});
  orchlog::log("y", {values.data(), DType::f32, {6}}, {0});
  orchlog::close();
  ASSERT_TRUE(orchlog::configure(grafting(dir.file("run.jsonl"), ref, "checkpoint=x,checkpoint=y")));
  std::vector<std::uint16_t> half(6), brain(6);
  EXPECT_TRUE(orchlog::graft("x", half.data(), DType::f16, {6}, {0}));
  EXPECT_TRUE(orchlog::graft("y", brain.data(), DType::bf16, {6}, {0}));
  orchlog::close();
  // numpy: np.array(values, np.float32).astype(np.float16).view(np.uint16), and the bf16 rounding of the f32 bits
  EXPECT_EQ(half, (std::vector<std::uint16_t>{0x2E66, 0xC100, 0x7BFF, 0x0002, 0x7C00, 0x0000}));
  EXPECT_EQ(brain, (std::vector<std::uint16_t>{0x3DCD, 0xC020, 0x4780, 0x33D7, 0x7F62, 0x0000}));
}

TEST(Graft, ConvertsF16ReferencesToF32Exactly) {
  t::ScratchDir dir;
  const std::string ref = dir.file("ref.bin");
  ASSERT_TRUE(orchlog::configure(t::options_for(ref, orchlog::Mode::full)));
  const std::vector<std::uint16_t> half = {0x2E66, 0xC100, 0x0001, 0x7BFF};
  orchlog::log("x", {half.data(), DType::f16, {4}}, {0});
  orchlog::close();
  ASSERT_TRUE(orchlog::configure(grafting(dir.file("run.jsonl"), ref, "checkpoint=x")));
  std::vector<float> out(4);
  EXPECT_TRUE(orchlog::graft("x", out.data(), DType::f32, {4}, {0}));
  orchlog::close();
  EXPECT_EQ(out, (std::vector<float>{0.0999755859375f, -2.5f, 5.9604644775390625e-8f, 65504.0f}));
}

TEST(Graft, RepeatedKeysAreMatchedByOccurrence) {
  t::ScratchDir dir;
  const std::string ref = dir.file("ref.bin");
  ASSERT_TRUE(orchlog::configure(t::options_for(ref, orchlog::Mode::full)));
  const float a = 1.0f, b = 2.0f;
  orchlog::log("logits", {&a, DType::f32, {1}});
  orchlog::log("logits", {&b, DType::f32, {1}});
  orchlog::close();
  ASSERT_TRUE(orchlog::configure(grafting(dir.file("run.jsonl"), ref, "checkpoint=logits")));
  float x = 0.0f, y = 0.0f, z = 5.0f;
  EXPECT_TRUE(orchlog::graft("logits", &x, DType::f32, {1}));
  EXPECT_TRUE(orchlog::graft("logits", &y, DType::f32, {1}));
  t::CapturedStderr err;
  EXPECT_FALSE(orchlog::graft("logits", &z, DType::f32, {1}));  // a third call: the reference has two
  orchlog::close();
  EXPECT_EQ((std::vector<float>{x, y, z}), (std::vector<float>{1.0f, 2.0f, 5.0f}));
}

TEST(Graft, AnUnreadableReferenceWarnsOnceAndGraftsNothing) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(grafting(dir.file("run.jsonl"), dir.file("nope.bin"), "checkpoint=*")));
  t::CapturedStderr err;
  float x = 3.0f;
  EXPECT_FALSE(orchlog::graft("a", &x, DType::f32, {1}));
  EXPECT_FALSE(orchlog::graft("b", &x, DType::f32, {1}));
  orchlog::close();
  EXPECT_EQ(x, 3.0f);
  EXPECT_EQ(err.warnings().size(), 1u);
}

TEST(Graft, TheMacrosGraftAsTheApiDoes) {
  t::ScratchDir dir;
  const std::string ref = write_reference(dir);
  ASSERT_TRUE(orchlog::configure(grafting(dir.file("run.jsonl"), ref, "checkpoint=attn_norm")));
  auto x = filled(6, 0.0f), y = filled(6, 0.0f);
  ORCH_GRAFT_AT("attn_norm", 0, 2, nullptr, -1, x.data(), "f32", 2, 3);
  ORCH_GRAFT_KEY("attn_norm", orchlog::Key(0, 1), y.data(), DType::f32, 2, 3);
  orchlog::close();
  EXPECT_EQ(x, filled(6, 30.0f));
  EXPECT_EQ(y, filled(6, 20.0f));
}

TEST(Graft, AReferenceDamagedAfterItWasIndexedIsRefusedAtTheGraft) {
  t::ScratchDir dir;
  const std::string ref = write_reference(dir);
  ASSERT_TRUE(orchlog::configure(grafting(dir.file("run.jsonl"), ref, "checkpoint=attn_norm")));
  auto first = filled(6, 0.0f);
  EXPECT_TRUE(orchlog::graft("attn_norm", first.data(), DType::f32, {2, 3}, {0, 0}));  // indexed: every frame sound
  // Layer 2's tensor starts with 30.0f; one bit of it flipped in place, under the run's feet.
  std::string bytes = t::read_file(ref);
  const float thirty = 30.0f;
  const std::size_t at = bytes.find(std::string(reinterpret_cast<const char*>(&thirty), sizeof thirty));
  ASSERT_NE(at, std::string::npos);
  bytes[at] = static_cast<char>(bytes[at] ^ 0x04);
  t::write_file(ref, bytes);
  t::CapturedStderr err;
  auto x = filled(6, -1.0f);
  EXPECT_FALSE(orchlog::graft("attn_norm", x.data(), DType::f32, {2, 3}, {0, 2}));
  orchlog::close();
  EXPECT_EQ(x, filled(6, -1.0f));
  const auto warnings = err.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("is refused: it fails its checksum (CRC-32C); the tensor is left alone"),
            std::string::npos)
      << warnings[0];
}

TEST(Graft, AReferenceThatIsTheLogFileIsLeftAsItIsAndNothingIsLogged) {
  t::ScratchDir dir;
  const std::string ref = write_reference(dir);
  const std::string before = t::read_file(ref);
  t::CapturedStderr err;
  orchlog::Options o = grafting(ref, ref, "checkpoint=*");
  o.mode = orchlog::Mode::full;
  EXPECT_FALSE(orchlog::configure(o));
  auto x = filled(6, -1.0f);
  EXPECT_FALSE(orchlog::graft("attn_norm", x.data(), DType::f32, {2, 3}, {0, 1}));
  EXPECT_EQ(t::read_file(ref), before);
  EXPECT_EQ(x, filled(6, -1.0f));
  const auto warnings = err.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "orchlog: warning: ORCH_LOG_FILE names the graft reference (" + ref +
                             "): writing the run would empty it; logging is off and the file is left as it is");
}
