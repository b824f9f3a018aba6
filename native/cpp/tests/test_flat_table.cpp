// The adapter's per-graph table: finds what was inserted, forgets everything
// on clear(), and keeps its entries when it grows.
#include <gtest/gtest.h>

#include <cstdint>

#include "orchlog/detail/ggml/flat_table.hpp"

using orchlog::detail::FlatTable;

TEST(FlatTable, AKeyIsInsertedOnceAndFoundAfterwards) {
  FlatTable table;
  bool inserted = false;
  table.find_or_insert(42, 7, inserted);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(table.find_or_insert(42, 9, inserted), 7);
  EXPECT_FALSE(inserted);
  ASSERT_NE(table.find(42), nullptr);
  EXPECT_EQ(*table.find(42), 7);
  EXPECT_EQ(table.find(43), nullptr);
}

TEST(FlatTable, ClearForgetsEveryKey) {
  FlatTable table;
  bool inserted = false;
  for (std::uint64_t k = 0; k < 50; ++k) table.find_or_insert(k, 1, inserted);
  table.clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(10), nullptr);
  table.find_or_insert(10, 2, inserted);
  EXPECT_TRUE(inserted);
}

TEST(FlatTable, EntriesSurviveGrowth) {
  FlatTable table;
  bool inserted = false;
  for (std::uint64_t k = 1; k <= 5000; ++k) table.find_or_insert(k * 4096, static_cast<std::int8_t>(k % 100), inserted);
  EXPECT_EQ(table.size(), 5000u);
  for (std::uint64_t k = 1; k <= 5000; ++k) {
    ASSERT_NE(table.find(k * 4096), nullptr) << k;
    EXPECT_EQ(*table.find(k * 4096), static_cast<std::int8_t>(k % 100));
  }
}
