// Hands the ggml adapter's eval callback hand-made tensors, as llama.cpp's
// scheduler would (ask, then the computed tensor), and prints what each
// tensor holds afterwards:
//   <name>\t<1 if the callback asked for the data, else 0>\t<values, space-separated>
// Element i of every tensor is OFFSET + i, OFFSET the program's argument, so
// that a run with another offset is a reference whose values differ
// everywhere. With a second argument `device` the tensors live in a buffer
// that is not host memory (ggml_device_buffer.hpp), as on a GPU backend.
// Logging and grafting follow the ORCH_LOG_* / ORCH_GRAFT_* knobs.
#include <ggml-alloc.h>
#include <ggml.h>
#include <orchlog/ggml.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ggml_device_buffer.hpp"

namespace {

orchlog::ggml::GraphLogger graph_logger;

// A tensor's elements as floats, read through ggml-backend (the only way into a device buffer).
std::vector<float> values_of(const ggml_tensor* t) {
  std::vector<unsigned char> bytes(ggml_nbytes(t));
  if (t->buffer) {
    ggml_backend_tensor_get(t, bytes.data(), 0, bytes.size());
  } else {
    std::memcpy(bytes.data(), t->data, bytes.size());
  }
  std::vector<float> out(static_cast<std::size_t>(ggml_nelements(t)));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (t->type == GGML_TYPE_F16) {
      ggml_fp16_t h;
      std::memcpy(&h, bytes.data() + i * sizeof h, sizeof h);
      out[i] = ggml_fp16_to_fp32(h);
    } else {
      std::memcpy(&out[i], bytes.data() + i * sizeof(float), sizeof(float));
    }
  }
  return out;
}

void offer(ggml_tensor* t) {
  const bool wanted = orchlog::ggml::eval_callback(t, true, &graph_logger);
  if (wanted) orchlog::ggml::eval_callback(t, false, &graph_logger);
  std::printf("%s\t%d\t", t->name, wanted ? 1 : 0);
  const std::vector<float> values = values_of(t->view_src ? t->view_src : t);
  for (std::size_t i = 0; i < values.size(); ++i) std::printf("%s%g", i ? " " : "", values[i]);
  std::printf("\n");
}

void number(ggml_tensor* t, float offset) {
  std::vector<unsigned char> bytes(ggml_nbytes(t));
  for (std::int64_t i = 0; i < ggml_nelements(t); ++i) {
    const float v = offset + static_cast<float>(i);
    if (t->type == GGML_TYPE_F16) {
      const ggml_fp16_t h = ggml_fp32_to_fp16(v);
      std::memcpy(bytes.data() + static_cast<std::size_t>(i) * sizeof h, &h, sizeof h);
    } else {
      std::memcpy(bytes.data() + static_cast<std::size_t>(i) * sizeof v, &v, sizeof v);
    }
  }
  if (t->buffer) {
    ggml_backend_tensor_set(t, bytes.data(), 0, bytes.size());
  } else {
    std::memcpy(t->data, bytes.data(), bytes.size());
  }
}

ggml_tensor* named(ggml_tensor* t, const char* name) {
  ggml_set_name(t, name);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const float offset = argc > 1 ? std::strtof(argv[1], nullptr) : 0.0f;
  const bool device = argc > 2 && std::strcmp(argv[2], "device") == 0;
  ggml_init_params params = {16u << 20, nullptr, device};  // on the device: allocated below, in the fake buffer
  ggml_context* ctx = ggml_init(params);

  // Three tokens at positions 0-2: one row per token.
  ggml_tensor* x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
  ggml_tensor* norm = named(ggml_scale(ctx, x, 1.0f), "attn_norm-0");
  ggml_tensor* half = named(ggml_cast(ctx, norm, GGML_TYPE_F16), "half-0");
  // A view that transposes each token row: not contiguous in memory.
  ggml_tensor* heads = named(ggml_scale(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 2, 2, 3), 1.0f),
                             "Qcur-0");                                          // [head_dim 2, heads 2, tokens 3]
  ggml_tensor* swapped = named(ggml_permute(ctx, heads, 1, 0, 2, 3), "Qcur-0");  // [heads 2, head_dim 2, tokens 3]
  ggml_tensor* ffn_out = named(ggml_scale(ctx, x, 1.0f), "ffn_out-0");
  ggml_backend_buffer_t buffer =
      device ? ggml_backend_alloc_ctx_tensors_from_buft(ctx, fake_device::buffer_type()) : nullptr;
  if (device && !buffer) return 3;
  for (ggml_tensor* t : {norm, half, heads, ffn_out}) number(t, offset);

  graph_logger.begin_step(0, 0, 3);
  for (ggml_tensor* t : {norm, half, heads, swapped, ffn_out}) offer(t);

  if (buffer) ggml_backend_buffer_free(buffer);
  ggml_free(ctx);
  return orchlog::status().errors == 0 ? 0 : 1;
}
