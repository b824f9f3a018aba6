// Hands the ggml adapter's eval callback hand-made tensors, as llama.cpp's
// scheduler would (ask, then the computed tensor), and prints each answer:
//   <name>\t<1 if the callback asked for the data, else 0>
// Data is written by hand instead of computed: only what the adapter reads
// matters. Logging follows the ORCH_LOG_* knobs of the caller.
#include <ggml.h>
#include <orchlog/ggml.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

orchlog::ggml::GraphLogger graph_logger;

void offer(ggml_tensor* t) {
  const bool wanted = orchlog::ggml::eval_callback(t, true, &graph_logger);
  if (wanted) orchlog::ggml::eval_callback(t, false, &graph_logger);
  std::printf("%s\t%d\n", t->name, wanted ? 1 : 0);
}

// Element i of a contiguous f32 tensor holds base + i.
ggml_tensor* numbered(ggml_tensor* t, const char* name, float base) {
  ggml_set_name(t, name);
  auto* data = static_cast<float*>(t->data);
  for (int64_t i = 0; i < ggml_nelements(t); ++i) data[i] = base + static_cast<float>(i);
  return t;
}

}  // namespace

int main() {
  ggml_init_params params = {16u << 20, nullptr, false};
  ggml_context* ctx = ggml_init(params);

  // Step 2 of a run: tokens 11, 22, 33 at positions 5, 6, 7.
  const std::int32_t prompt_ids[3] = {11, 22, 33};
  graph_logger.begin_step(2, 5, 3, prompt_ids);
  ggml_tensor* table = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 10);
  ggml_tensor* ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
  ggml_tensor* embd = numbered(ggml_get_rows(ctx, table, ids), "embd", 0);
  offer(embd);
  ggml_tensor* norm = numbered(ggml_mul(ctx, embd, embd), "attn_norm-0", 100);
  offer(norm);

  // One name after four ops: MUL_MAT, ADD, RESHAPE, then a permuted view.
  ggml_tensor* wq = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 8);  // loaded weights: their type is noted
  ggml_tensor* q = numbered(ggml_mul_mat(ctx, wq, norm), "Qcur-0", 200);
  offer(q);
  ggml_tensor* q_bias = numbered(ggml_add(ctx, q, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8)), "Qcur-0", 300);
  offer(q_bias);
  ggml_tensor* q_heads = ggml_reshape_3d(ctx, q_bias, 4, 2, 3);  // [head_dim 4, heads 2, tokens 3]
  ggml_set_name(q_heads, "Qcur-0");
  offer(q_heads);
  ggml_tensor* q_permuted = ggml_permute(ctx, q_heads, 0, 2, 1, 3);  // [4, tokens 3, heads 2], a view
  offer(q_permuted);

  // Attention scores over a KV cache padded to 16 cells, [n_kv 16, tokens 3, heads 2]: each token's row is
  // cut to the cells it attends to (positions 5, 6, 7: 6, 7 and 8 cells). Element (cell c, token t, head h)
  // holds 3000 + 100 h + 20 t + c, so a row tells which cells it kept.
  ggml_tensor* kq = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 16, 3, 2);
  ggml_set_name(kq, "kq-0");
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t c = 0; c < 16; ++c)
        static_cast<float*>(kq->data)[(h * 3 + t) * 16 + c] = static_cast<float>(3000 + 100 * h + 20 * t + c);
  kq->op = GGML_OP_MUL_MAT;
  kq->src[1] = q_permuted;  // the scheduler's view: tokens follow the query's token dimension
  offer(kq);

  // llama.cpp leaves the attention output projection unnamed.
  ggml_tensor* kqv_out = numbered(ggml_cont(ctx, q_bias), "kqv_out-1", 400);
  offer(kqv_out);
  ggml_tensor* wo = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 8);
  ggml_tensor* attn_out = numbered(ggml_mul_mat(ctx, wo, kqv_out), "node_17", 500);
  offer(attn_out);
  offer(numbered(ggml_scale(ctx, attn_out, 2.0f), "node_18", 600));
  // Some models name a later op attn_out themselves: the op then tells it apart.
  offer(numbered(ggml_add(ctx, attn_out, attn_out), "attn_out-1", 650));

  // Half precision types are logged as they are.
  ggml_tensor* half = ggml_cast(ctx, norm, GGML_TYPE_F16);
  ggml_set_name(half, "half-0");
  ggml_tensor* brain = ggml_cast(ctx, norm, GGML_TYPE_BF16);
  ggml_set_name(brain, "brain-0");
  for (int64_t i = 0; i < ggml_nelements(norm); ++i) {
    static_cast<ggml_fp16_t*>(half->data)[i] = ggml_fp32_to_fp16(0.5f * static_cast<float>(i));
    static_cast<ggml_bf16_t*>(brain->data)[i] = ggml_fp32_to_bf16(0.25f * static_cast<float>(i));
  }
  offer(half);
  offer(brain);

  // A quantized type is dequantized to f32; a type orchlog lacks is skipped.
  ggml_tensor* wide = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 3);
  auto* wide_data = static_cast<float*>(wide->data);
  for (int64_t i = 0; i < ggml_nelements(wide); ++i) wide_data[i] = 0.125f * static_cast<float>(i % 17);
  ggml_tensor* quant = ggml_cast(ctx, wide, GGML_TYPE_Q8_0);
  ggml_set_name(quant, "quant-0");
  ggml_quantize_chunk(GGML_TYPE_Q8_0, wide_data, quant->data, 0, 3, 32, nullptr);
  offer(quant);
  ggml_tensor* shorts = ggml_new_tensor_2d(ctx, GGML_TYPE_I16, 4, 3);
  ggml_set_name(shorts, "shorts-0");
  offer(shorts);
  offer(shorts);  // warned about once

  // Logits kept for the last token only (llama.cpp's inp_out_ids).
  ggml_tensor* out_ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
  offer(numbered(ggml_get_rows(ctx, q_bias, out_ids), "result_output", 700));

  // A tensor without a token dimension is one record without a token.
  offer(numbered(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2), "cache_k_l0", 800));

  // The graph's first node again, without begin_step(): a second graph in one step.
  offer(embd);

  // Step 3: one token (id 44) at position 8. Every tensor has a dimension of one element, so the
  // shape cannot tell the KV cache (8 cells of 8 here) from a token row: the cache's name does.
  const std::int32_t decode_id = 44;
  graph_logger.begin_step(3, 8, 1, &decode_id);
  offer(numbered(ggml_scale(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 1), 1.0f), "attn_norm-0", 900));
  ggml_tensor* cache = numbered(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 8), "cache_k_l0", 1000);  // a leaf
  ggml_tensor* cells = ggml_view_2d(ctx, cache, 8, 4, cache->nb[1], 0);  // the 4 cells used so far
  ggml_set_name(cells, "cache_k_l0 (view)");
  offer(cells);
  ggml_tensor* heads = ggml_view_3d(ctx, cache, 4, 2, 4, 4 * sizeof(float), cache->nb[1], 0);  // [4, heads 2, 4]
  ggml_tensor* by_head = ggml_permute(ctx, heads, 0, 2, 1, 3);                                 // [4, 4, heads 2]
  ggml_set_name(by_head, "cache_k_l0 (view) (permuted)");
  offer(by_head);
  offer(numbered(ggml_cont(ctx, by_head), "k_cached-0", 1100));  // made from the cache: no tokens either

  // Step 4: one token at position 2 (the cache had later tokens, removed since): 3 cells in use of a cache
  // of 16. Views over all 16 cells are cut to the 3 in use: K as llama.cpp keeps it ([channels 4, cells
  // 16], a cell's channels side by side), whole and by head; V stored transposed (channel c of cell k at
  // c * 16 + k), viewed as llama.cpp's attention reads it, and reshaped into the one column ggml_set_rows
  // writes. K reshaped into a column interleaves cells and channels: logged whole.
  const std::int32_t again_id = 55;
  graph_logger.begin_step(4, 2, 1, &again_id);
  ggml_tensor* k_cache = numbered(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 16), "cache_k_l1", 2000);
  ggml_tensor* k_cells = ggml_view_2d(ctx, k_cache, 4, 16, k_cache->nb[1], 0);
  ggml_set_name(k_cells, "cache_k_l1 (view)");
  offer(k_cells);
  ggml_tensor* k_heads = ggml_view_3d(ctx, k_cache, 2, 2, 16, 2 * sizeof(float), k_cache->nb[1], 0);
  ggml_tensor* k_by_head = ggml_permute(ctx, k_heads, 0, 2, 1, 3);  // [head_dim 2, cells 16, heads 2]
  ggml_set_name(k_by_head, "cache_k_l1 (view) (permuted)");
  offer(k_by_head);
  ggml_tensor* v_cache = numbered(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 16), "cache_v_l1", 3000);
  ggml_tensor* v_cells = ggml_view_3d(ctx, v_cache, 16, 2, 2, 16 * 2 * sizeof(float), 16 * sizeof(float), 0);
  ggml_set_name(v_cells, "cache_v_l1 (view)");  // [cells 16, heads 2, head_dim 2]
  offer(v_cells);
  ggml_tensor* v_column = ggml_reshape_2d(ctx, v_cache, 1, 64);
  ggml_set_name(v_column, "cache_v_l1 (reshaped)");
  offer(v_column);
  ggml_tensor* k_column = ggml_reshape_2d(ctx, k_cache, 1, 64);
  ggml_set_name(k_column, "cache_k_l1 (reshaped)");
  offer(k_column);

  ggml_free(ctx);
  return 0;
}
