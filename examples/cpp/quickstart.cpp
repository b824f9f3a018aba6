// orchlog C++ quick start: a toy forward pass that logs its checkpoints.
#include <orchlog/orchlog.hpp>

#include <vector>

int main() {
  const int n_embd = 896;
  std::vector<float> hidden(n_embd);
  for (int token = 0; token < 4; ++token) {
    for (int i = 0; i < n_embd; ++i) hidden[i] = 0.01f * (i % 17) - 0.05f * token;
    ORCH_LOG_TOKEN("embedding", token, hidden.data(), "f32", n_embd);
    for (int layer = 0; layer < 2; ++layer) {
      // token, layer, stage, step (0 = the prompt pass), then the tensor
      ORCH_LOG_AT("attn_out", token, layer, "add", 0, hidden.data(), "f32", n_embd);
    }
  }
  return 0;
}
