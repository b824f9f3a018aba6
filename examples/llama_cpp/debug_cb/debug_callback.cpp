// Decode token ids through llama.cpp with its own tensor printer, common/debug.cpp's
// common_debug_cb_eval (the callback of llama-eval-callback and llama-debug), printing every
// graph tensor as those tools do; then write the last token's logits and the token ids as
// llama-debug's --save-logits does: DIR/llamacpp-NAME.bin (raw f32) and DIR/llamacpp-NAME-tokens.bin
// (raw int32).
//
//   debug_callback MODEL.gguf --prompt 0,17,42 --save-logits DIR --name NAME
#include <llama.h>

#include "debug.h"
#include "log.h"
#include "token_batch.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

template <typename T>
bool write_raw(const std::string& path, const T* data, size_t n) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * sizeof(T)));
  return static_cast<bool>(out);
}

}  // namespace

// common/log.cpp asks common/common.cpp whether the terminal takes colours; the rest of common.cpp
// (argument parsing, sampling, chat templates) is not built here, and the printout is a file: no colours.
bool tty_can_use_colors() { return false; }

int main(int argc, char** argv) {
  std::string model_path, dir, name = "model";
  std::vector<llama_token> prompt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--prompt" && i + 1 < argc) {
      if (!parse_tokens(argv[++i], prompt)) return 2;
    } else if (arg == "--save-logits" && i + 1 < argc) {
      dir = argv[++i];
    } else if (arg == "--name" && i + 1 < argc) {
      name = argv[++i];
    } else if (model_path.empty() && arg[0] != '-') {
      model_path = arg;
    } else {
      std::fprintf(stderr, "usage: %s MODEL.gguf --prompt IDS [--save-logits DIR --name NAME]\n", argv[0]);
      return 2;
    }
  }
  if (model_path.empty() || prompt.empty()) return 2;
  common_log_set_verbosity_thold(0);
  llama_backend_init();
  llama_model_params mparams = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(model_path.c_str(), mparams);
  if (!model) return 1;
  common_debug_cb_user_data printer;  // no filter: every tensor is printed
  llama_context_params cparams = llama_context_default_params();
  cparams.n_ctx = 64;
  cparams.n_batch = cparams.n_ubatch = static_cast<uint32_t>(prompt.size());
  cparams.n_threads = cparams.n_threads_batch = 2;
  cparams.cb_eval = common_debug_cb_eval;
  cparams.cb_eval_user_data = &printer;
  llama_context* ctx = llama_init_from_model(model, cparams);
  if (!ctx) return 1;
  llama_batch batch = token_batch(prompt, 0);
  const bool ok = llama_decode(ctx, batch) == 0;
  llama_batch_free(batch);
  common_log_pause(common_log_main());  // flush the printer's lines before ours
  std::fflush(stdout);
  if (ok && !dir.empty()) {
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    const float* last = llama_get_logits_ith(ctx, static_cast<int32_t>(prompt.size() - 1));
    if (!last || !write_raw(dir + "/llamacpp-" + name + ".bin", last, static_cast<size_t>(n_vocab)) ||
        !write_raw(dir + "/llamacpp-" + name + "-tokens.bin", prompt.data(), prompt.size()))
      return 1;
  }
  llama_free(ctx);
  llama_model_free(model);
  return ok ? 0 : 1;
}
