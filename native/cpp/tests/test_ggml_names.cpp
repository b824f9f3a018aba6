// llama.cpp graph names become a checkpoint and a layer; ggml's own names for
// unnamed nodes are recognised as saying nothing.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "orchlog/detail/ggml/names.hpp"

namespace d = orchlog::detail;

namespace {
std::pair<std::string, std::optional<std::int32_t>> parsed(std::string_view name) {
  std::string checkpoint = "left over from an earlier call";
  std::optional<std::int32_t> layer = 99;
  d::parse_graph_name(name, checkpoint, layer);
  return {checkpoint, layer};
}
}  // namespace

TEST(GgmlNames, ABlockTensorsSuffixIsItsLayer) {
  EXPECT_EQ(parsed("attn_norm-3"), std::make_pair(std::string("attn_norm"), std::optional<std::int32_t>(3)));
  EXPECT_EQ(parsed("ffn_moe_gate-27"), std::make_pair(std::string("ffn_moe_gate"), std::optional<std::int32_t>(27)));
}

TEST(GgmlNames, NamesOutsideTheBlocksHaveNoLayer) {
  EXPECT_EQ(parsed("result_norm"), std::make_pair(std::string("result_norm"), std::optional<std::int32_t>()));
  EXPECT_EQ(parsed("cache_k_l0"), std::make_pair(std::string("cache_k_l0"), std::optional<std::int32_t>()));
}

TEST(GgmlNames, DerivedTensorsKeepGgmlsSuffixAfterTheCheckpoint) {
  EXPECT_EQ(parsed("Kcur-0 (view)"), std::make_pair(std::string("Kcur (view)"), std::optional<std::int32_t>(0)));
  EXPECT_EQ(parsed("kqv-1 (permuted)"), std::make_pair(std::string("kqv (permuted)"), std::optional<std::int32_t>(1)));
  EXPECT_EQ(parsed("cache_v_l1 (view) (permuted)"),
            std::make_pair(std::string("cache_v_l1 (view) (permuted)"), std::optional<std::int32_t>()));
}

TEST(GgmlNames, ADashWithoutDigitsOrWithoutANameIsNoLayer) {
  EXPECT_EQ(parsed("attn-norm"), std::make_pair(std::string("attn-norm"), std::optional<std::int32_t>()));
  EXPECT_EQ(parsed("-3"), std::make_pair(std::string("-3"), std::optional<std::int32_t>()));
  EXPECT_EQ(parsed("x-12345678901"), std::make_pair(std::string("x-12345678901"), std::optional<std::int32_t>()));
}

TEST(GgmlNames, GgmlsNumberedPlaceholdersAreUnnamed) {
  EXPECT_TRUE(d::is_unnamed_graph_tensor("node_12"));
  EXPECT_TRUE(d::is_unnamed_graph_tensor("leaf_0"));
  EXPECT_TRUE(d::is_unnamed_graph_tensor(""));
  EXPECT_FALSE(d::is_unnamed_graph_tensor("node_"));
  EXPECT_FALSE(d::is_unnamed_graph_tensor("node_norm"));
  EXPECT_FALSE(d::is_unnamed_graph_tensor("attn_norm-0"));
}

TEST(GgmlNames, TheKvCacheIsKnownByItsNameAndSoIsWhatGgmlDerivesFromIt) {
  for (const char* name : {"cache_k_l0", "cache_v_l27", "cache_k_l3 (view)", "cache_v_l0 (view) (permuted)"})
    EXPECT_TRUE(d::is_kv_cache_name(name)) << name;
  for (const char* name : {"cache_k_l", "cache_k_lx", "cache_q_l0", "Kcur-0 (view)", "my_cache_k_l0", "", "k_cache"})
    EXPECT_FALSE(d::is_kv_cache_name(name)) << name;
  EXPECT_EQ(d::kv_cache_kind("cache_k_l3 (view)"), 'k');
  EXPECT_EQ(d::kv_cache_kind("cache_v_l0 (reshaped)"), 'v');
  EXPECT_EQ(d::kv_cache_kind("cache_v_lx"), 0);
}
