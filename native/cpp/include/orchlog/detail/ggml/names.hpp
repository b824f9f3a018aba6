// llama.cpp's graph tensor names as orchlog checkpoints and layers, for the
// ggml adapter (orchlog/ggml.hpp). Pure string work: no ggml header needed.
//
// llama.cpp names a graph tensor "<name>-<layer>" inside a block and
// "<name>" outside (llm_graph_context::cb); ggml appends " (view)",
// " (permuted)", " (reshaped)", " (copy of ...)" to derived tensors, and
// names what nobody named "node_<n>" (graph nodes) or "leaf_<n>" (inputs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace orchlog {
namespace detail {

// "node_12", "leaf_3" or "": names that say nothing about what a tensor is
// and change whenever the graph does.
inline bool is_unnamed_graph_tensor(std::string_view name) {
  const auto numbered = [&](std::string_view prefix) {
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return false;
    for (char c : name.substr(prefix.size()))
      if (c < '0' || c > '9') return false;
    return true;
  };
  return name.empty() || numbered("node_") || numbered("leaf_");
}

// "cache_k_l3", "cache_v_l0 (view)": llama.cpp's KV cache tensors (llama_kv_cache names them
// cache_k_l<layer> and cache_v_l<layer>) and what ggml derives from them. Their cells are the
// positions cached so far, never the tokens of the batch being evaluated.
// kv_cache_kind says which: 'k', 'v', or 0 for any other name.
inline char kv_cache_kind(std::string_view name) {
  const std::string_view core = name.substr(0, name.find(" ("));
  if (core.size() <= 9 || (core.substr(0, 9) != "cache_k_l" && core.substr(0, 9) != "cache_v_l")) return 0;
  for (char c : core.substr(9))
    if (c < '0' || c > '9') return 0;
  return core[6];
}

inline bool is_kv_cache_name(std::string_view name) { return kv_cache_kind(name) != 0; }

// "kq", "kq_scaled", "kq_soft_max", ...: llama.cpp's attention scores and probabilities (build_attn_mha),
// [n_kv, n_tokens, n_head] with the KV cells innermost. Not "kqv" or "kqv_out", which are outputs.
inline bool is_attention_score_name(std::string_view checkpoint) {
  return checkpoint.size() >= 2 && checkpoint.substr(0, 2) == "kq" && !(checkpoint.size() >= 3 && checkpoint[2] == 'v');
}

// "attn_norm-3" -> ("attn_norm", 3); "Kcur-0 (view)" -> ("Kcur (view)", 0);
// "result_norm" -> ("result_norm", none). `checkpoint` is assigned, not
// appended to, so a caller can reuse one string for every tensor.
inline void parse_graph_name(std::string_view name, std::string& checkpoint, std::optional<std::int32_t>& layer) {
  const std::size_t suffix_at = name.find(" (");
  const std::string_view core = name.substr(0, suffix_at);
  const std::string_view suffix = suffix_at == std::string_view::npos ? std::string_view() : name.substr(suffix_at);
  layer.reset();
  std::size_t digits = core.size();
  while (digits > 0 && core[digits - 1] >= '0' && core[digits - 1] <= '9') --digits;
  const std::size_t n_digits = core.size() - digits;
  // "-<digits>" after a non-empty name, small enough for a layer index.
  if (n_digits > 0 && n_digits <= 9 && digits >= 2 && core[digits - 1] == '-') {
    std::int32_t value = 0;
    for (char c : core.substr(digits)) value = value * 10 + (c - '0');
    layer = value;
    checkpoint.assign(core.substr(0, digits - 1));
  } else {
    checkpoint.assign(core);
  }
  checkpoint.append(suffix);
}

}  // namespace detail
}  // namespace orchlog
