// The batch the example programs give llama_decode: fixed token ids at
// consecutive positions of sequence 0, each asking for its logits.
#pragma once

#include <llama.h>

#include <cstddef>
#include <vector>

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
