// Token ids as the programs that drive llama.cpp take them (run_tokens, the
// examples' debug_callback), and the batch they give llama_decode: fixed
// token ids at consecutive positions of sequence 0, each asking for its logits.
#pragma once

#include <llama.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

// "0,17,42" -> {0, 17, 42}; false (and `out` partly filled) on an empty list, an
// empty item, anything but a decimal id, or one outside [0, INT32_MAX].
inline bool parse_tokens(const std::string& text, std::vector<llama_token>& out) {
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    char* end = nullptr;
    long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || value < 0 || value > INT32_MAX) return false;
    out.push_back(static_cast<llama_token>(value));
  }
  return !out.empty();
}

// Free with llama_batch_free.
inline llama_batch token_batch(const std::vector<llama_token>& tokens, int first_position) {
  llama_batch batch = llama_batch_init(static_cast<int32_t>(tokens.size()), 0, 1);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    batch.token[i] = tokens[i];
    batch.pos[i] = first_position + static_cast<llama_pos>(i);
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;
  }
  batch.n_tokens = static_cast<int32_t>(tokens.size());
  return batch;
}
