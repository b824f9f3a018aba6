// Hands the ggml adapter's eval callback hand-made tensors, as llama.cpp's
// scheduler would (ask, then the computed tensor), and prints what each
// tensor holds afterwards:
//   <name>\t<1 if the callback asked for the data, else 0>\t<values, space-separated>
// Element i of every tensor is OFFSET + i, OFFSET the program's argument, so
// that a run with another offset is a reference whose values differ
// everywhere. Logging and grafting follow the ORCH_LOG_* / ORCH_GRAFT_* knobs.
#include <ggml.h>
#include <orchlog/ggml.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

orchlog::ggml::GraphLogger graph_logger;

float value_at(const ggml_tensor* t, std::int64_t i) {
  if (t->type == GGML_TYPE_F16) return ggml_fp16_to_fp32(static_cast<const ggml_fp16_t*>(t->data)[i]);
  return static_cast<const float*>(t->data)[i];
}

void offer(ggml_tensor* t) {
  const bool wanted = orchlog::ggml::eval_callback(t, true, &graph_logger);
  if (wanted) orchlog::ggml::eval_callback(t, false, &graph_logger);
  std::printf("%s\t%d\t", t->name, wanted ? 1 : 0);
  const ggml_tensor* storage = t->view_src ? t->view_src : t;
  for (std::int64_t i = 0; i < ggml_nelements(storage); ++i) std::printf("%s%g", i ? " " : "", value_at(storage, i));
  std::printf("\n");
}

ggml_tensor* numbered(ggml_tensor* t, const char* name, float offset) {
  ggml_set_name(t, name);
  for (std::int64_t i = 0; i < ggml_nelements(t); ++i) {
    if (t->type == GGML_TYPE_F16) {
      static_cast<ggml_fp16_t*>(t->data)[i] = ggml_fp32_to_fp16(offset + static_cast<float>(i));
    } else {
      static_cast<float*>(t->data)[i] = offset + static_cast<float>(i);
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const float offset = argc > 1 ? std::strtof(argv[1], nullptr) : 0.0f;
  ggml_init_params params = {16u << 20, nullptr, false};
  ggml_context* ctx = ggml_init(params);

  // Three tokens at positions 0-2: one row per token.
  graph_logger.begin_step(0, 0, 3);
  ggml_tensor* x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
  ggml_tensor* norm = numbered(ggml_scale(ctx, x, 1.0f), "attn_norm-0", offset);
  offer(norm);
  ggml_tensor* half = numbered(ggml_cast(ctx, norm, GGML_TYPE_F16), "half-0", offset);
  offer(half);
  // A view that transposes each token row: not contiguous in memory.
  ggml_tensor* heads = numbered(ggml_scale(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 2, 2, 3), 1.0f), "Qcur-0",
                                offset);  // [head_dim 2, heads 2, tokens 3]
  offer(heads);
  ggml_tensor* swapped = ggml_permute(ctx, heads, 1, 0, 2, 3);  // [heads 2, head_dim 2, tokens 3]: rows transposed
  ggml_set_name(swapped, "Qcur-0");
  offer(swapped);
  offer(numbered(ggml_scale(ctx, x, 1.0f), "ffn_out-0", offset));

  ggml_free(ctx);
  return orchlog::status().errors == 0 ? 0 : 1;
}
