// One rank of a tensor-parallel MLP block in C++, logging what the rank holds
// with the shard layout given per call: which rank of how many comes from
// ORCH_LOG_RANK and ORCH_LOG_WORLD_SIZE (the knobs the logger reads too), how
// each tensor is split from the call (ORCH_LOG_KEY with an orchlog::Key).
//
//   ORCH_LOG_FILE=tp2/rank{rank}.bin ORCH_LOG_MODE=full ORCH_LOG_RANK=1 ORCH_LOG_WORLD_SIZE=2 ./mlp_rank
//   ORCH_LOG_FILE=whole.bin ORCH_LOG_MODE=full ./mlp_rank          # world size 1: the unsharded reference
//   orchlog compare whole.bin tp2/                                  # gathered by the records' fields
//
// Per token t and layer 0:
//   ffn_inp   x[t]                                  every rank holds it; rank 0 logs it
//   ffn_up    W_up[rows of this rank] x[t]          column-parallel: split along axis 0
//   ffn_act   relu(ffn_up)                          the same slice
//   ffn_out   W_down[:, columns of this rank] act   row-parallel: a partial sum (all-reduced after)
//
// `--bug` makes rank 1 read rank 0's rows of W_up (an off-by-one shard
// offset): its slice of ffn_up is wrong, and everything after it.
#include <orchlog/orchlog.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kEmbd = 16, kFF = 32, kTokens = 3;

// Deterministic weights and inputs: every rank and the unsharded run compute from the same numbers.
float weight(int matrix, int row, int col) {
  return 0.25f * std::sin(0.37f * static_cast<float>(matrix * 1009 + row * 31 + col));
}
float input(int token, int i) { return std::cos(0.11f * static_cast<float>(token * kEmbd + i)); }

int env_int(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text && *text ? std::atoi(text) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const bool bug = argc > 1 && std::strcmp(argv[1], "--bug") == 0;
  const int rank = env_int("ORCH_LOG_RANK", 0), ways = env_int("ORCH_LOG_WORLD_SIZE", 1);
  if (ways < 1 || kFF % ways != 0 || rank < 0 || rank >= ways) {
    std::fprintf(stderr, "mlp_rank: rank %d of %d does not split n_ff %d\n", rank, ways, kFF);
    return 2;
  }
  const int k = kFF / ways;
  const int up_rows = bug && rank == 1 ? 0 : rank;  // the bug: rank 0's rows
  std::vector<float> x(kEmbd), up(k), act(k), partial(kEmbd);
  for (int t = 0; t < kTokens; ++t) {
    for (int i = 0; i < kEmbd; ++i) x[i] = input(t, i);
    if (rank == 0) ORCH_LOG_KEY("ffn_inp", (orchlog::Key{t, 0, orchlog::none, 0}), x.data(), "f32", kEmbd);
    for (int j = 0; j < k; ++j) {
      float sum = 0.0f;
      for (int i = 0; i < kEmbd; ++i) sum += weight(0, up_rows * k + j, i) * x[i];
      up[j] = sum;
      act[j] = sum > 0.0f ? sum : 0.0f;
    }
    const orchlog::Key column = orchlog::Key{t, 0, orchlog::none, 0}.with_shard_axis(0);
    ORCH_LOG_KEY("ffn_up", column, up.data(), "f32", k);
    ORCH_LOG_KEY("ffn_act", column, act.data(), "f32", k);
    for (int i = 0; i < kEmbd; ++i) {
      float sum = 0.0f;
      for (int j = 0; j < k; ++j) sum += weight(1, i, rank * k + j) * act[j];
      partial[i] = sum;
    }
    ORCH_LOG_KEY("ffn_out", (orchlog::Key{t, 0, orchlog::none, 0}.with_shard_partial(true)), partial.data(), "f32",
                 kEmbd);
  }
  orchlog::close();
  return orchlog::status().errors == 0 ? 0 : 1;
}
