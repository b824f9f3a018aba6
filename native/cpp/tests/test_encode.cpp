// Conformance: the C++ encoder reproduces every record and header vector byte
// for byte. This file is also built with -O3 -march=native -ffp-contract=fast
// -std=gnu++17 (see CMakeLists.txt) to prove the stats survive FMA contraction.
#include <gtest/gtest.h>

#include "orchlog/encode.hpp"
#include "support/vectors.hpp"

namespace t = orchlog_test;

TEST(Encode, EveryRecordVectorIsReproducedByteForByte) {
  const t::Json doc = t::load_vectors("records.json");
  const auto cases = t::record_cases(doc);
  ASSERT_GT(cases.size(), 20u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c->name);
    const auto encoded = orchlog::encode_record(c->input);
    ASSERT_TRUE(encoded.has_value());
    EXPECT_EQ(encoded->jsonl, c->expected_jsonl + "\n");
    EXPECT_EQ(t::to_hex(encoded->frame), t::to_hex(c->expected_frame));
    EXPECT_EQ(encoded->blake3, c->expected_blake3);
  }
}

TEST(Encode, EveryHeaderVectorIsReproducedByteForByte) {
  const t::Json doc = t::load_vectors("headers.json");
  for (const t::Json& c : doc["cases"].items) {
    SCOPED_TRACE(c["name"].str());
    const auto encoded = orchlog::encode_header(t::header_input(c["input"]));
    EXPECT_EQ(encoded.jsonl, c["expected"]["jsonl"].str() + "\n");
    EXPECT_EQ(t::to_hex(encoded.frame), c["expected"]["frame_hex"].str());
  }
}

TEST(Encode, AMalformedTensorIsRefusedWithAReason) {
  orchlog::RecordInput in;
  in.checkpoint = "x";
  in.tensor = {nullptr, orchlog::DType::f32, {4}};
  std::string why;
  EXPECT_FALSE(orchlog::encode_record(in, &why).has_value());
  EXPECT_NE(why.find("null data"), std::string::npos);
  float v = 1;
  in.tensor = {&v, orchlog::DType::f32, {2, -1}};
  EXPECT_FALSE(orchlog::encode_record(in, &why).has_value());
  EXPECT_NE(why.find("negative"), std::string::npos);
}
