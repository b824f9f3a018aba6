// What a llama.cpp run was, for the run header's `config`: the model's
// architecture, sizes, file type, RoPE base and RMSNorm epsilon (read from
// the GGUF itself, exactly), and ggml's version. Keys as docs/trace.md lists
// them, the same `orchlog trace hf` writes, so that `orchlog compare` can
// say how two runs differ.
//
//   #include <orchlog/llama.hpp>   // needs llama.h and gguf.h on the include path
//
//   orchlog::llama::RunConfig run("model.gguf", model);   // after llama_model_load_from_file
//   run.add("run.n_ctx", n_ctx);                         // the host's own settings
//   orchlog::Options options;
//   options.config = run.items();
//   orchlog::configure(options);                          // before the first record
#pragma once

#include <gguf.h>
#include <llama.h>

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "orchlog/logger.hpp"

namespace orchlog {
namespace llama {

// The file type as llama-quantize names it, in lower case ("f32", "q8_0", "q4_k_m"); "other" for the rest.
inline const char* file_type_name(enum llama_ftype type) {
  switch (type) {
    case LLAMA_FTYPE_ALL_F32:
      return "f32";
    case LLAMA_FTYPE_MOSTLY_F16:
      return "f16";
    case LLAMA_FTYPE_MOSTLY_BF16:
      return "bf16";
    case LLAMA_FTYPE_MOSTLY_Q8_0:
      return "q8_0";
    case LLAMA_FTYPE_MOSTLY_Q6_K:
      return "q6_k";
    case LLAMA_FTYPE_MOSTLY_Q5_K_M:
      return "q5_k_m";
    case LLAMA_FTYPE_MOSTLY_Q5_K_S:
      return "q5_k_s";
    case LLAMA_FTYPE_MOSTLY_Q5_0:
      return "q5_0";
    case LLAMA_FTYPE_MOSTLY_Q5_1:
      return "q5_1";
    case LLAMA_FTYPE_MOSTLY_Q4_K_M:
      return "q4_k_m";
    case LLAMA_FTYPE_MOSTLY_Q4_K_S:
      return "q4_k_s";
    case LLAMA_FTYPE_MOSTLY_Q4_0:
      return "q4_0";
    case LLAMA_FTYPE_MOSTLY_Q4_1:
      return "q4_1";
    case LLAMA_FTYPE_MOSTLY_Q3_K_L:
      return "q3_k_l";
    case LLAMA_FTYPE_MOSTLY_Q3_K_M:
      return "q3_k_m";
    case LLAMA_FTYPE_MOSTLY_Q3_K_S:
      return "q3_k_s";
    case LLAMA_FTYPE_MOSTLY_Q2_K:
      return "q2_k";
    default:
      return "other";
  }
}

// The run header's account of a llama.cpp run; owns the text its items point to.
class RunConfig {
 public:
  // The model's facts: `path` is the GGUF file the model was loaded from (read again, metadata only,
  // with gguf's own reader: llama.cpp's metadata strings print floats with six decimals).
  RunConfig(const std::string& path, const llama_model* model) {
    add("engine", "llama.cpp");
    add("ggml.version", ggml_version());
    add("ggml.commit", ggml_commit());
    const auto slash = path.find_last_of('/');
    add("model.file", slash == std::string::npos ? path : path.substr(slash + 1));
    char desc[256] = {0};
    llama_model_desc(model, desc, sizeof desc);
    add("model.description", std::string(desc));
    add("model.weights", file_type_name(llama_model_ftype(model)));
    add("model.n_layer", llama_model_n_layer(model));
    add("model.n_embd", llama_model_n_embd(model));
    add("model.n_head", llama_model_n_head(model));
    add("model.n_head_kv", llama_model_n_head_kv(model));
    add("model.n_vocab", llama_vocab_n_tokens(llama_model_get_vocab(model)));
    read_gguf(path);
  }

  template <class V>
  void add(std::string_view key, V value) {
    const std::string_view k = texts_.emplace_back(key);
    if constexpr (std::is_convertible_v<V, std::string_view>) {
      items_.emplace_back(k, std::string_view(texts_.emplace_back(std::string_view(value))));
    } else {
      items_.emplace_back(k, value);
    }
  }

  const std::vector<MetaItem>& items() const { return items_; }

 private:
  void read_gguf(const std::string& path) {
    gguf_init_params params = {/*no_alloc*/ true, /*ctx*/ nullptr};
    gguf_context* ctx = gguf_init_from_file(path.c_str(), params);
    if (!ctx) return;
    std::string arch;
    const int64_t id = gguf_find_key(ctx, "general.architecture");
    if (id >= 0 && gguf_get_kv_type(ctx, id) == GGUF_TYPE_STRING) arch = gguf_get_val_str(ctx, id);
    add("model.arch", arch);
    const auto f32 = [&](const std::string& key, const char* name, bool always, double fallback) {
      const int64_t k = gguf_find_key(ctx, key.c_str());
      if (k >= 0 && gguf_get_kv_type(ctx, k) == GGUF_TYPE_FLOAT32) {
        add(name, static_cast<double>(gguf_get_val_f32(ctx, k)));
      } else if (always) {
        add(name, fallback);
      }
    };
    f32(arch + ".rope.freq_base", "model.rope_freq_base", true, 10000.0);  // llama.cpp's default
    f32(arch + ".attention.layer_norm_rms_epsilon", "model.rms_norm_eps", false, 0.0);
    gguf_free(ctx);
  }

  std::deque<std::string> texts_;  // stable: the items point into it
  std::vector<MetaItem> items_;
};

}  // namespace llama
}  // namespace orchlog
