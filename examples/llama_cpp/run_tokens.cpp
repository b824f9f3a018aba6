// Run token ids through llama.cpp: one prompt pass, then one decode call per
// decode token (fixed tokens, not sampled), and write the logits of every
// position as a .npy file of float32, shape (n_positions, n_vocab).
//
//   run_tokens MODEL.gguf --prompt 0,17,42 --decode 3,64 --logits out.npy [--threads N] [--verbose]
//
// Settings are chosen for a numerical reference, not for speed: f32 KV cache,
// flash attention off, the whole prompt in one micro-batch (so that step 0 is
// one graph evaluation), logits for every position.
//
// Graph tensors are logged through orchlog's ggml adapter (orchlog/ggml.hpp)
// when ORCH_LOG_FILE is set: see graph_logger.install() and the begin_step()
// call before each llama_decode, which hands the adapter the batch's token ids.
#include <llama.h>
#include <orchlog/ggml.hpp>

#include "token_batch.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string model;
  std::vector<llama_token> prompt;
  std::vector<llama_token> decode;
  std::string logits_path;
  int threads = 2;
  bool verbose = false;
};

bool parse_tokens(const std::string& text, std::vector<llama_token>& out) {
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    char* end = nullptr;
    long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || value < 0) return false;
    out.push_back(static_cast<llama_token>(value));
  }
  return !out.empty();
}

bool parse_options(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (arg == "--verbose") {
      opt.verbose = true;
    } else if (arg == "--prompt" || arg == "--decode" || arg == "--logits" || arg == "--threads") {
      if (!(v = value())) return false;
      if (arg == "--prompt" && !parse_tokens(v, opt.prompt)) return false;
      if (arg == "--decode" && !parse_tokens(v, opt.decode)) return false;
      if (arg == "--logits") opt.logits_path = v;
      if (arg == "--threads") opt.threads = std::atoi(v);
    } else if (opt.model.empty() && arg[0] != '-') {
      opt.model = arg;
    } else {
      return false;
    }
  }
  return !opt.model.empty() && !opt.prompt.empty() && !opt.logits_path.empty() && opt.threads > 0;
}

bool write_npy(const std::string& path, const std::vector<float>& data, size_t rows, size_t cols) {
  // NPY format 1.0: magic, version, little-endian header length, a Python
  // dict literal padded with spaces to a multiple of 64 bytes, then the data.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  size_t unpadded = 10 + header.size() + 1;
  header += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  std::ofstream out(path, std::ios::binary);
  const uint16_t header_len = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.put(static_cast<char>(header_len & 0xff));
  out.put(static_cast<char>(header_len >> 8));
  out << header;
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
  return static_cast<bool>(out);
}

void quiet_log(enum ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

// Decodes `tokens` at positions first_pos.. as sequence 0 (graph step `step`)
// and appends the logits of every token to `logits`.
bool decode(llama_context* ctx, orchlog::ggml::GraphLogger& graph_logger, int step,
            const std::vector<llama_token>& tokens, int first_pos, int n_vocab, std::vector<float>& logits) {
  llama_batch batch = token_batch(tokens, first_pos);
  graph_logger.begin_step(step, first_pos, batch.n_tokens, batch.token);  // the ids become token_id
  bool ok = llama_decode(ctx, batch) == 0;
  for (size_t i = 0; ok && i < tokens.size(); ++i) {
    const float* row = llama_get_logits_ith(ctx, static_cast<int32_t>(i));
    ok = row != nullptr;
    if (ok) logits.insert(logits.end(), row, row + n_vocab);
  }
  llama_batch_free(batch);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse_options(argc, argv, opt)) {
    std::fprintf(stderr,
                 "usage: %s MODEL.gguf --prompt IDS --logits OUT.npy [--decode IDS] [--threads N] [--verbose]\n"
                 "  IDS: comma-separated token ids, e.g. 0,17,42\n"
                 "  ORCH_LOG_FILE=trace.jsonl (and the other ORCH_LOG_* knobs) logs the graph tensors\n",
                 argv[0]);
    return 2;
  }
  if (!opt.verbose) llama_log_set(quiet_log, nullptr);
  llama_backend_init();

  llama_model_params model_params = llama_model_default_params();
  model_params.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(opt.model.c_str(), model_params);
  if (!model) {
    std::fprintf(stderr, "run_tokens: cannot load %s\n", opt.model.c_str());
    return 1;
  }

  const uint32_t n_positions = static_cast<uint32_t>(opt.prompt.size() + opt.decode.size());
  orchlog::ggml::GraphLogger graph_logger;
  llama_context_params ctx_params = llama_context_default_params();
  ctx_params.n_ctx = n_positions;
  ctx_params.n_batch = n_positions;
  ctx_params.n_ubatch = n_positions;
  ctx_params.n_seq_max = 1;
  ctx_params.n_threads = opt.threads;
  ctx_params.n_threads_batch = opt.threads;
  ctx_params.type_k = GGML_TYPE_F32;
  ctx_params.type_v = GGML_TYPE_F32;
  ctx_params.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  ctx_params.no_perf = true;
  // The hook point: every graph tensor goes past the orchlog ggml adapter,
  // which copies only what ORCH_LOG_SELECT asks for (nothing without ORCH_LOG_FILE).
  graph_logger.install(ctx_params);

  llama_context* ctx = llama_init_from_model(model, ctx_params);
  if (!ctx) {
    std::fprintf(stderr, "run_tokens: cannot create a context\n");
    return 1;
  }
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

  std::vector<float> logits;
  int step = 0;
  bool ok = decode(ctx, graph_logger, step, opt.prompt, 0, n_vocab, logits);
  for (size_t i = 0; ok && i < opt.decode.size(); ++i) {
    step = static_cast<int>(i) + 1;
    ok = decode(ctx, graph_logger, step, {opt.decode[i]}, static_cast<int>(opt.prompt.size() + i), n_vocab, logits);
  }
  if (!ok) std::fprintf(stderr, "run_tokens: llama_decode failed at step %d\n", step);
  if (ok && !write_npy(opt.logits_path, logits, n_positions, static_cast<size_t>(n_vocab))) {
    std::fprintf(stderr, "run_tokens: cannot write %s\n", opt.logits_path.c_str());
    ok = false;
  }

  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return ok ? 0 : 1;
}
