// The orchlog ggml adapter in ten lines: log every graph tensor of one prompt pass.
//   ORCH_LOG_FILE=graph.jsonl ./log_graph MODEL.gguf
#include <llama.h>
#include <orchlog/ggml.hpp>

#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  llama_backend_init();
  llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (!model) return 1;

  orchlog::ggml::GraphLogger graph_logger;  // reads the ORCH_LOG_* knobs
  llama_context_params params = llama_context_default_params();
  graph_logger.install(params);  // cb_eval + cb_eval_user_data
  llama_context* ctx = llama_init_from_model(model, params);
  std::vector<llama_token> prompt = {0, 17, 42, 99};
  graph_logger.begin_step(/*step*/ 0, /*first_position*/ 0, /*n_tokens*/ prompt.size(), /*token_ids*/ prompt.data());
  const int rc = llama_decode(ctx, llama_batch_get_one(prompt.data(), static_cast<int32_t>(prompt.size())));

  llama_free(ctx);
  llama_model_free(model);
  return rc == 0 ? 0 : 1;
}
