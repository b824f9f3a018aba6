// Cost of orchlog's ggml adapter on llama.cpp's decode step. Built and run by
// benchmarks/ggml_adapter.py; prints one JSON object.
//
//   ggml_decode_step MODEL.gguf OUT_DIR [--steps N] [--repeats R] [--threads T]
//
// One process, three contexts on the same model: one without an eval callback
// (the uninstrumented baseline), one with the adapter installed, and one whose
// callback takes every tensor and does nothing with it (what llama.cpp's
// scheduler itself costs when it stops after every node). After a
// prompt pass, a "decode step" decodes one token at the next position and
// removes it from the KV cache again, so every step does the same work. Each
// configuration runs `steps` steps per repeat, configurations interleaved
// within a repeat (the machine is shared); the best repeat counts.
#include <llama.h>
#include <orchlog/ggml.hpp>
#include <token_batch.hpp>  // orchlog/llama/

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double now(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

enum class Context { plain, adapter, take_everything };

struct Config {
  const char* name;
  Context context;
  orchlog::Options options;  // the orchlog run it logs into
};

// Says yes to every tensor and ignores it.
bool take_everything(ggml_tensor*, bool, void*) { return true; }

orchlog::Options run_options(const std::string& path, orchlog::Mode mode, const std::string& select) {
  orchlog::Options o;
  o.path = path;
  o.mode = mode;
  o.select = select;
  o.team = "bench";
  o.values = 10;
  return o;
}

llama_context* make_context(llama_model* model, int threads, ggml_backend_sched_eval_callback callback,
                            void* user_data) {
  llama_context_params p = llama_context_default_params();
  p.n_ctx = 64;
  p.n_batch = p.n_ubatch = 64;
  p.n_seq_max = 1;
  p.n_threads = p.n_threads_batch = threads;
  p.type_k = p.type_v = GGML_TYPE_F32;
  p.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  p.no_perf = true;
  p.cb_eval = callback;
  p.cb_eval_user_data = user_data;
  return llama_init_from_model(model, p);
}

bool decode(llama_context* ctx, const std::vector<llama_token>& tokens, int first_position) {
  llama_batch batch = token_batch(tokens, first_position);
  const bool ok = llama_decode(ctx, batch) == 0;
  llama_batch_free(batch);
  return ok;
}

struct Timing {
  double wall = 1e30, cpu = 1e30;  // best seconds per step
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.gguf OUT_DIR [--steps N] [--repeats R] [--threads T]\n", argv[0]);
    return 2;
  }
  const std::string out_dir = argv[2];
  int steps = 200, repeats = 5, threads = 1;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (arg == "--steps") steps = value;
    if (arg == "--repeats") repeats = value;
    if (arg == "--threads") threads = value;
  }
  llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;

  orchlog::ggml::GraphLogger graph_logger;
  llama_context* contexts[] = {make_context(model, threads, nullptr, nullptr),
                               make_context(model, threads, orchlog::ggml::eval_callback, &graph_logger),
                               make_context(model, threads, take_everything, nullptr)};
  const std::vector<llama_token> prompt = {0, 17, 42, 99, 128, 200, 7, 255};
  const int position = static_cast<int>(prompt.size());

  std::vector<Config> configs = {
      {"uninstrumented", Context::plain, run_options("", orchlog::Mode::summary, "")},
      {"adapter, logging off", Context::adapter, run_options("", orchlog::Mode::summary, "")},
      {"selector matching nothing", Context::adapter,
       run_options(out_dir + "/none.jsonl", orchlog::Mode::summary, "checkpoint=no_such_tensor")},
      {"summary, every tensor", Context::adapter, run_options(out_dir + "/summary.jsonl", orchlog::Mode::summary, "")},
      {"full, every tensor", Context::adapter, run_options(out_dir + "/full.bin", orchlog::Mode::full, "")},
      {"(scheduler stopping at every tensor, no adapter)", Context::take_everything,
       run_options("", orchlog::Mode::summary, "")},
  };
  std::vector<Timing> best(configs.size());
  std::vector<long long> records(configs.size(), 0);
  for (llama_context* ctx : contexts) {
    orchlog::configure(run_options("", orchlog::Mode::summary, ""));
    graph_logger.begin_step(0, 0, static_cast<std::int64_t>(prompt.size()));
    if (!decode(ctx, prompt, 0)) return 1;
  }
  for (int r = 0; r < repeats; ++r) {
    for (size_t c = 0; c < configs.size(); ++c) {
      llama_context* ctx = contexts[static_cast<int>(configs[c].context)];
      orchlog::configure(configs[c].options);
      const long long before = orchlog::status().records;
      const double wall0 = now(CLOCK_MONOTONIC), cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
      for (int s = 0; s < steps; ++s) {
        graph_logger.begin_step(1 + s, position, 1);
        if (!decode(ctx, {3}, position)) return 1;
        llama_memory_seq_rm(llama_get_memory(ctx), 0, position, -1);
      }
      const double wall = (now(CLOCK_MONOTONIC) - wall0) / steps, cpu = (now(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / steps;
      records[c] = (orchlog::status().records - before) / steps;
      if (cpu < best[c].cpu) best[c] = {wall, cpu};
      orchlog::close();
    }
  }

  std::printf("{\"steps\": %d, \"repeats\": %d, \"threads\": %d, \"configs\": [", steps, repeats, threads);
  for (size_t c = 0; c < configs.size(); ++c) {
    std::printf("%s{\"name\": \"%s\", \"wall_us\": %.3f, \"cpu_us\": %.3f, \"records_per_step\": %lld}", c ? ", " : "",
                configs[c].name, best[c].wall * 1e6, best[c].cpu * 1e6, records[c]);
  }
  std::printf("]}\n");
  for (llama_context* ctx : contexts) llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
