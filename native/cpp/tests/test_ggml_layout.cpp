// Where the tokens are in llama.cpp's graph tensors, in a prompt pass and in
// a one-token decode step, and how one token's row is read out of a view.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "orchlog/detail/ggml/layout.hpp"

namespace d = orchlog::detail;
using Flow = d::TokenFlow;

namespace {
// ggml's byte strides of a contiguous f32 tensor.
std::vector<std::size_t> strides(const std::int64_t ne[4]) {
  std::vector<std::size_t> nb(4, sizeof(float));
  for (int i = 1; i < 4; ++i) nb[i] = nb[i - 1] * static_cast<std::size_t>(ne[i - 1]);
  return nb;
}
}  // namespace

TEST(GgmlLayout, HiddenStatesHaveTheirTokensInDimensionOne) {
  const std::int64_t prompt[4] = {64, 8, 1, 1}, decode[4] = {64, 1, 1, 1};
  EXPECT_EQ(d::token_dim_from_shape(prompt, 8), 1);
  EXPECT_EQ(d::token_dim_from_shape(decode, 1), 1);
}

TEST(GgmlLayout, HeadsSplitOffTheRowKeepTokensOutermost) {
  const std::int64_t heads_like_tokens[4] = {16, 4, 4, 1}, decode[4] = {16, 4, 1, 1};
  EXPECT_EQ(d::token_dim_from_shape(heads_like_tokens, 4), 2);
  EXPECT_EQ(d::token_dim_from_shape(decode, 1), 2);
}

TEST(GgmlLayout, AttentionScoresFollowThePermutedQueryEvenWhenTokensEqualHeads) {
  // Qcur [head_dim, n_head, n_tokens] -> permute(0, 2, 1, 3) -> [head_dim, n_tokens, n_head];
  // kq = mul_mat(k, q) is [n_kv, n_tokens, n_head]. Here n_tokens == n_head == 4.
  const std::int32_t axes[4] = {0, 2, 1, 3};
  const std::int64_t q[4] = {16, 4, 4, 1}, kq[4] = {256, 4, 4, 1};
  const int q_dim = d::token_dim(Flow::permuted, q, 4, /*Qcur*/ 2, axes);
  EXPECT_EQ(q_dim, 1);
  EXPECT_EQ(d::token_dim(Flow::from_second_source, kq, 4, q_dim), 1);
  EXPECT_EQ(d::token_dim_from_shape(kq, 4), 2);  // what the shape alone would wrongly say
}

TEST(GgmlLayout, AOneTokenStepFollowsTheSourceToo) {
  const std::int32_t axes[4] = {0, 2, 1, 3};
  const std::int64_t q[4] = {16, 1, 4, 1}, kq[4] = {256, 1, 4, 1};
  const int q_dim = d::token_dim(Flow::permuted, q, 1, /*Qcur [16, 4, 1]*/ 2, axes);
  EXPECT_EQ(d::token_dim(Flow::from_second_source, kq, 1, q_dim), 1);
}

TEST(GgmlLayout, GatheredRowsMayBeFewerThanTheTokens) {
  const std::int64_t last_logits[4] = {256, 1, 1, 1};
  EXPECT_EQ(d::token_dim(Flow::gathered_rows, last_logits, 8, -1), 1);
  EXPECT_EQ(d::token_dim(Flow::same_as_first_source, last_logits, 8, 1), 1);
  EXPECT_EQ(d::token_dim(Flow::shape_only, last_logits, 8, -1), -1);
}

TEST(GgmlLayout, ASourceDimensionThatDoesNotFitFallsBackToTheShape) {
  const std::int64_t ne[4] = {64, 8, 16, 1};
  EXPECT_EQ(d::token_dim(Flow::same_as_first_source, ne, 8, 2), 1);   // 16 rows: more than the tokens
  EXPECT_EQ(d::token_dim(Flow::same_as_first_source, ne, 8, -1), 1);  // the source was no node
  EXPECT_EQ(d::token_dim(Flow::from_second_source, ne, 8, 0), 1);     // never the row itself
}

TEST(GgmlLayout, TensorsWithoutATokenDimensionAreWhole) {
  const std::int64_t cache[4] = {16, 256, 2, 1}, full[4] = {2, 2, 2, 2};
  EXPECT_EQ(d::token_dim_from_shape(cache, 8), -1);
  EXPECT_EQ(d::token_dim_from_shape(full, 1), -1);
  EXPECT_EQ(d::token_dim_from_shape(cache, 0), -1);  // no begin_step(): no tokens known
}

TEST(GgmlLayout, ARowDropsTheTokenDimensionAndOuterOnesOutermostFirst) {
  const std::int64_t kq_prompt[4] = {256, 8, 4, 1}, kq_decode[4] = {256, 1, 4, 1};
  for (const auto* ne : {kq_prompt, kq_decode}) {
    const d::RowLayout row = d::row_layout(ne, 1);
    EXPECT_EQ(row.rows, ne[1]);
    ASSERT_EQ(row.n_dims, 2u);
    EXPECT_EQ(row.shape[0], 4);
    EXPECT_EQ(row.shape[1], 256);
  }
  const std::int64_t cache[4] = {16, 256, 2, 1};
  const d::RowLayout whole = d::row_layout(cache, -1);
  EXPECT_EQ(whole.rows, 1);
  ASSERT_EQ(whole.n_dims, 3u);
  EXPECT_EQ(whole.shape[0], 2);
  EXPECT_EQ(whole.shape[2], 16);
}

TEST(GgmlLayout, RowsOfAContiguousTensorCanBeReadInPlace) {
  const std::int64_t hidden[4] = {64, 8, 1, 1}, heads[4] = {16, 8, 4, 1};
  EXPECT_TRUE(d::rows_are_contiguous(hidden, strides(hidden).data(), sizeof(float), 1));
  EXPECT_TRUE(d::rows_are_contiguous(hidden, strides(hidden).data(), sizeof(float), -1));
  EXPECT_FALSE(d::rows_are_contiguous(heads, strides(heads).data(), sizeof(float), 1));  // token rows interleave
  std::vector<std::size_t> transposed = strides(hidden);
  std::swap(transposed[0], transposed[1]);
  EXPECT_FALSE(d::rows_are_contiguous(hidden, transposed.data(), sizeof(float), 1));
}

TEST(GgmlLayout, ARowOfAPermutedViewIsGatheredInCOrder) {
  // A [4, 3, 2] tensor (ne innermost first) viewed with dimensions 1 and 2 swapped.
  std::vector<float> data(24);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  const std::int64_t base_ne[4] = {4, 3, 2, 1};
  const auto base_nb = strides(base_ne);
  const std::int64_t ne[4] = {4, 2, 3, 1};
  const std::size_t nb[4] = {base_nb[0], base_nb[2], base_nb[1], base_nb[3]};
  std::vector<float> row(8);
  auto* out = reinterpret_cast<unsigned char*>(row.data());
  d::for_each_run(reinterpret_cast<const unsigned char*>(data.data()), ne, nb, /*token_dim*/ 2, /*row*/ 1,
                  [&](const unsigned char* run) { out = d::copy_run(run, ne[0], nb[0], sizeof(float), out); });
  // Row 1 of view dimension 2 is base dimension 1 = 1: elements 4..7 and 16..19.
  EXPECT_EQ(row, (std::vector<float>{4, 5, 6, 7, 16, 17, 18, 19}));
}

TEST(GgmlLayout, AStridedRunIsCopiedElementByElement) {
  const float column[6] = {1, 9, 2, 9, 3, 9};
  float out[3];
  d::copy_run(reinterpret_cast<const unsigned char*>(column), 3, 2 * sizeof(float), sizeof(float),
              reinterpret_cast<unsigned char*>(out));
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 2);
  EXPECT_EQ(out[2], 3);
}

TEST(GgmlLayout, WhatIsMadeOfASourceWithoutTokensHasNoneInAOneTokenStep) {
  // A KV-cache view [head_dim 16, cells 4, heads 2], permuted to [16, 2, 4], then made contiguous:
  // in a one-token step the shape would take the outermost dimension for the token.
  const std::int32_t axes[4] = {0, 2, 1, 3};
  const std::int64_t permuted[4] = {16, 2, 4, 1};
  EXPECT_EQ(d::token_dim_from_shape(permuted, 1), 3);  // what the shape alone would say
  for (const Flow flow :
       {Flow::permuted, Flow::transposed, Flow::shape_only, Flow::same_as_first_source, Flow::from_second_source})
    EXPECT_EQ(d::token_dim(flow, permuted, 1, d::kSourceWithoutTokens, axes), -1);
  EXPECT_EQ(d::token_dim(Flow::shape_only, permuted, 1, d::kSourceUnknown), 3);  // no node: the shape decides
  const std::int64_t rows[4] = {64, 1, 1, 1};
  EXPECT_EQ(d::token_dim(Flow::gathered_rows, rows, 1, d::kSourceWithoutTokens), 1);  // rows picked by token ids
}

TEST(GgmlLayout, TheCellsOfAKvCacheViewAreFoundByTheirStride) {
  // A cache of 16 cells of 4 f16 channels: nb = {2, 8}; K keeps a cell's channels side by side.
  constexpr std::size_t cell = 8, element = 2;
  const std::int64_t k_ne[4] = {2, 16, 2, 1};  // [head_dim 2, cells 16, heads 2]: by head, permuted
  const std::size_t k_nb[4] = {2, cell, 4, 64};
  EXPECT_EQ(d::kv_cells_dim(k_ne, k_nb, cell, element, 16), 1);
  // V stored transposed: a channel's 16 cells side by side, channels 16 elements apart.
  const std::int64_t v_ne[4] = {16, 2, 2, 1};  // [cells 16, heads 2, head_dim 2]
  const std::size_t v_nb[4] = {element, 64, 32, 128};
  EXPECT_EQ(d::kv_cells_dim(v_ne, v_nb, cell, element, 16), 0);
  // A reshape into one column interleaves cells and channels: no dimension is the cells.
  const std::int64_t column_ne[4] = {1, 64, 1, 1};
  const std::size_t column_nb[4] = {element, element, 128, 128};
  EXPECT_EQ(d::kv_cells_dim(column_ne, column_nb, cell, element, 16), -1);
  // Strides that fit both layouts say nothing.
  const std::size_t both_nb[4] = {element, cell, 16 * element, 128};
  const std::int64_t both_ne[4] = {4, 16, 2, 1};
  EXPECT_EQ(d::kv_cells_dim(both_ne, both_nb, cell, element, 16), -1);
}
