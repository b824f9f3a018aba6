// The generated schema tables: dtype lookups and the canonical field order.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "orchlog/schema_gen.hpp"

namespace s = orchlog::schema;

namespace {

// Records the keys a visit produces, top level only.
struct KeyRecorder {
  std::vector<std::string> keys;
  int depth = 0;
  void begin_object(std::size_t) { ++depth; }
  void end_object() { --depth; }
  void key(std::string_view k) {
    if (depth == 1) keys.emplace_back(k);
  }
  template <class T>
  void str(T) {}
  template <class T>
  void opt_str(T) {}
  template <class T>
  void i32(T) {}
  template <class T>
  void opt_i32(T) {}
  template <class T>
  void i64(T) {}
  template <class T>
  void opt_i64(T) {}
  template <class T>
  void opt_boolean(T) {}
  template <class T>
  void opt_f64(T) {}
  template <class T>
  void boolean(T) {}
  template <class T>
  void dtype(T) {}
  template <class T>
  void shape(T) {}
  template <class T>
  void values(T) {}
  template <class T>
  void hex256(T) {}
  template <class T>
  void meta(T) {}
  template <class T>
  void floats_f32(T) {}
  template <class T>
  void floats_f32_hex(T) {}
  template <class T>
  void bytes(T) {}
  void frame_crc32c() { key("crc32c"); }  // the binary writer writes the checksum's key itself
};

// Top-level keys of the first expected JSONL line in records.json, in order.
std::vector<std::string> vector_line_keys() {
  std::ifstream in(std::string(ORCHLOG_VECTORS_DIR) + "/records.json");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  const std::string marker = "\"jsonl\": \"";
  const auto start = text.find(marker);
  EXPECT_NE(start, std::string::npos);
  // The line is a JSON string inside JSON: keys appear as \"key\": at depth 1.
  std::vector<std::string> keys;
  int depth = 0;
  for (std::size_t i = start + marker.size(); i < text.size() && text[i] != '\n'; ++i) {
    if (text[i] == '{' || text[i] == '[') ++depth;
    if (text[i] == '}' || text[i] == ']') --depth;
    if (depth == 1 && text.compare(i, 2, "\\\"") == 0 && (text[i - 1] == '{' || text[i - 1] == ',')) {
      const auto end = text.find("\\\"", i + 2);
      keys.push_back(text.substr(i + 2, end - i - 2));
      i = end + 1;
    }
  }
  return keys;
}

}  // namespace

TEST(SchemaGen, DtypeNamesAndAliasesResolve) {
  EXPECT_EQ(s::dtype_from_name("f32"), s::DType::f32);
  EXPECT_EQ(s::dtype_from_name("bfloat16"), s::DType::bf16);
  EXPECT_EQ(s::dtype_from_name("F16"), s::DType::f16);
  EXPECT_FALSE(s::dtype_from_name("q4_0").has_value());
  for (auto d : s::kAllDTypes) EXPECT_EQ(s::dtype_from_name(s::dtype_name(d)), d);
}

TEST(SchemaGen, DtypeSizesMatchTheirNames) {
  EXPECT_EQ(s::dtype_size(s::DType::bf16), 2u);
  EXPECT_EQ(s::dtype_size(s::DType::i64), 8u);
  EXPECT_EQ(s::dtype_kind(s::DType::u8), s::DTypeKind::unsigned_int);
}

TEST(SchemaGen, RecordVisitOrderMatchesTheVectors) {
  KeyRecorder rec;
  s::visit_record<s::Encoding::jsonl>(rec, s::RecordView{});
  EXPECT_EQ(rec.keys, vector_line_keys());
  EXPECT_EQ(rec.keys.size(), s::kRecordFieldCount<s::Encoding::jsonl>);
}

TEST(SchemaGen, MsgpackRecordsCarryDataThenTheChecksumLast) {
  KeyRecorder rec;
  s::visit_record<s::Encoding::msgpack>(rec, s::RecordView{});
  ASSERT_EQ(rec.keys.size(), s::kRecordFieldCount<s::Encoding::msgpack>);
  EXPECT_EQ(rec.keys[rec.keys.size() - 2], "data");
  EXPECT_EQ(rec.keys.back(), "crc32c");
}
