// Run a prompt through llama.cpp: one prompt pass, then one decode call per
// decode token, logging every graph tensor through orchlog's ggml adapter
// when ORCH_LOG_FILE is set. What `orchlog trace llama` builds and runs; the
// examples drive it with fixed token ids.
//
//   run_tokens MODEL.gguf (--prompt IDS | --text TEXT) [--decode IDS | --n-predict N]
//              [--logits OUT.npy] [--info OUT.json] [--threads N] [--gpu-layers N]
//              [--config KEY=VALUE]... [--verbose]
//
// --text is tokenized with the model's own vocabulary (llama_tokenize, BOS as
// the model says); --prompt takes the ids as they are. --decode feeds fixed
// tokens; --n-predict N feeds N tokens, each the greedy choice (the largest
// logit, the lowest id of a tie) after the one before. --logits writes the
// logits of every position as a .npy of float32, (n_positions, n_vocab);
// --info the tokens as JSON (prompt, decode, and each token's text).
//
// Settings are chosen for a numerical reference, not for speed: f32 KV cache,
// flash attention off, the whole prompt in one micro-batch (so that step 0 is
// one graph evaluation), logits for every position.
//
// The run's header says what made it (docs/trace.md lists the keys): the
// model's architecture, sizes, file type, RoPE base and RMSNorm epsilon read
// from the GGUF, the context and sampling settings, ggml's version, the
// prompt's token ids, and every --config KEY=VALUE (the CLI adds the file's
// BLAKE3 and the llama.cpp commit).
#include <llama.h>
#include <orchlog/ggml.hpp>
#include <orchlog/llama.hpp>

#include "token_batch.hpp"

#include <algorithm>
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
  bool prompt_given = false;
  std::string text;
  bool text_given = false;
  std::vector<llama_token> decode;
  int n_predict = -1;  // -1: --decode (or nothing) instead
  std::string logits_path;
  std::string info_path;
  int threads = 2;
  int gpu_layers = 0;
  std::vector<std::pair<std::string, std::string>> config;
  bool verbose = false;
};

bool parse_tokens(const std::string& text, std::vector<llama_token>& out) {
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

bool parse_count(const char* text, int& out) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < 0 || value > 1000000) return false;
  out = static_cast<int>(value);
  return true;
}

bool parse_options(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (arg == "--verbose") {
      opt.verbose = true;
    } else if (arg == "--prompt" || arg == "--text" || arg == "--decode" || arg == "--n-predict" || arg == "--logits" ||
               arg == "--info" || arg == "--threads" || arg == "--gpu-layers" || arg == "--config") {
      if (!(v = value())) return false;
      if (arg == "--prompt" && !(opt.prompt_given = parse_tokens(v, opt.prompt))) return false;
      if (arg == "--text") opt.text = v, opt.text_given = true;
      if (arg == "--decode" && !parse_tokens(v, opt.decode)) return false;
      if (arg == "--n-predict" && !parse_count(v, opt.n_predict)) return false;
      if (arg == "--logits") opt.logits_path = v;
      if (arg == "--info") opt.info_path = v;
      if (arg == "--threads" && (!parse_count(v, opt.threads) || opt.threads == 0)) return false;
      if (arg == "--gpu-layers" && !parse_count(v, opt.gpu_layers)) return false;
      if (arg == "--config") {
        const char* eq = std::strchr(v, '=');
        if (!eq || eq == v) return false;
        opt.config.emplace_back(std::string(v, eq), std::string(eq + 1));
      }
    } else if (opt.model.empty() && !arg.empty() && arg[0] != '-') {
      opt.model = arg;
    } else {
      return false;
    }
  }
  const bool one_prompt = opt.prompt_given != opt.text_given;
  const bool one_decode = opt.decode.empty() || opt.n_predict < 0;
  return !opt.model.empty() && one_prompt && one_decode;
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

// The model's text for a token, as bytes (a piece may be part of a UTF-8 character).
std::string piece(const llama_vocab* vocab, llama_token token) {
  if (llama_vocab_type(vocab) == LLAMA_VOCAB_TYPE_NONE) return "";  // token ids only: no text
  std::string out(64, '\0');
  int n = llama_token_to_piece(vocab, token, out.data(), static_cast<int32_t>(out.size()), 0, true);
  if (n < 0) {
    out.resize(static_cast<std::size_t>(-n));
    n = llama_token_to_piece(vocab, token, out.data(), static_cast<int32_t>(out.size()), 0, true);
  }
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

bool tokenize(const llama_vocab* vocab, const std::string& text, std::vector<llama_token>& out) {
  out.resize(text.size() + 8);
  int n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), out.data(),
                         static_cast<int32_t>(out.size()), /*add_special*/ true, /*parse_special*/ false);
  if (n < 0) {
    out.resize(static_cast<std::size_t>(-n));
    n = llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), out.data(),
                       static_cast<int32_t>(out.size()), true, false);
  }
  if (n < 0) return false;
  out.resize(static_cast<std::size_t>(n));
  return true;
}

std::string ids_text(const std::vector<llama_token>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

// A JSON string of bytes that may not be UTF-8: every byte outside printable ASCII as \u00XX, so the
// reader gets the bytes back as code points below 256 (latin-1).
std::string json_bytes(const std::string& bytes) {
  std::string out = "\"";
  for (const unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    }
  }
  return out + "\"";
}

bool write_info(const std::string& path, const llama_vocab* vocab, const std::vector<llama_token>& prompt,
                const std::vector<llama_token>& decode) {
  std::ofstream out(path);
  auto list = [&](const char* name, const std::vector<llama_token>& ids) {
    out << "\"" << name << "\":[" << ids_text(ids) << "],\"" << name << "_pieces\":[";
    for (std::size_t i = 0; i < ids.size(); ++i) out << (i ? "," : "") << json_bytes(piece(vocab, ids[i]));
    out << "]";
  };
  out << "{";
  list("prompt", prompt);
  out << ",";
  list("decode", decode);
  out << ",\"n_vocab\":" << llama_vocab_n_tokens(vocab) << "}\n";
  return static_cast<bool>(out);
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

// The largest logit of the last row, the lowest id of a tie.
llama_token greedy(const std::vector<float>& logits, int n_vocab) {
  const float* row = logits.data() + logits.size() - static_cast<std::size_t>(n_vocab);
  return static_cast<llama_token>(std::max_element(row, row + n_vocab) - row);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse_options(argc, argv, opt)) {
    std::fprintf(stderr,
                 "usage: %s MODEL.gguf (--prompt IDS | --text TEXT) [--decode IDS | --n-predict N]\n"
                 "       [--logits OUT.npy] [--info OUT.json] [--threads N] [--gpu-layers N] [--config KEY=VALUE]...\n"
                 "  IDS: comma-separated token ids, e.g. 0,17,42\n"
                 "  ORCH_LOG_FILE=trace.bin (and the other ORCH_LOG_* knobs) logs the graph tensors\n",
                 argv[0]);
    return 2;
  }
  if (!opt.verbose) llama_log_set(quiet_log, nullptr);
  llama_backend_init();

  llama_model_params model_params = llama_model_default_params();
  model_params.n_gpu_layers = opt.gpu_layers;
  llama_model* model = llama_model_load_from_file(opt.model.c_str(), model_params);
  if (!model) {
    std::fprintf(stderr, "run_tokens: cannot load %s\n", opt.model.c_str());
    return 1;
  }
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);
  if (opt.text_given) {
    if (llama_vocab_type(vocab) == LLAMA_VOCAB_TYPE_NONE) {
      std::fprintf(stderr, "run_tokens: %s has no vocabulary to tokenize a text with; give token ids\n",
                   opt.model.c_str());
      return 1;
    }
    if (!tokenize(vocab, opt.text, opt.prompt) || opt.prompt.empty()) {
      std::fprintf(stderr, "run_tokens: the prompt gives no tokens\n");
      return 1;
    }
  }
  for (const llama_token t : opt.prompt) {
    if (t >= n_vocab) {
      std::fprintf(stderr, "run_tokens: token id %d is beyond the vocabulary (%d ids)\n", t, n_vocab);
      return 1;
    }
  }
  const std::size_t n_decode = opt.n_predict >= 0 ? static_cast<std::size_t>(opt.n_predict) : opt.decode.size();
  const uint32_t n_positions = static_cast<uint32_t>(opt.prompt.size() + n_decode);

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

  // The header: what made this run (orchlog/llama.hpp: the model's facts), then this run's settings.
  // Set before the first record, with every other setting from the ORCH_LOG_* knobs (nothing is
  // logged without ORCH_LOG_FILE).
  orchlog::llama::RunConfig run(opt.model, model);
  run.add("run.n_ctx", n_positions);
  run.add("run.n_batch", n_positions);
  run.add("run.kv_type", "f32");
  run.add("run.flash_attention", false);
  run.add("run.threads", opt.threads);
  run.add("run.gpu_layers", opt.gpu_layers);
  run.add("run.sampling", opt.n_predict >= 0 ? "greedy" : "fixed tokens");
  run.add("run.n_predict", static_cast<std::int64_t>(n_decode));
  run.add("prompt.tokens", ids_text(opt.prompt));
  run.add("prompt.add_bos", llama_vocab_get_add_bos(vocab));
  if (opt.text_given) run.add("prompt.text", opt.text);
  for (const auto& kv : opt.config) run.add(kv.first, kv.second);
  orchlog::Options log_options;
  log_options.config = run.items();
  const auto slash = opt.model.find_last_of('/');
  if (!std::getenv("ORCH_LOG_MODEL"))
    log_options.model = slash == std::string::npos ? opt.model : opt.model.substr(slash + 1);
  orchlog::configure(log_options);

  // The hook point: every graph tensor goes past the orchlog ggml adapter,
  // which copies only what ORCH_LOG_SELECT asks for (nothing without ORCH_LOG_FILE).
  orchlog::ggml::GraphLogger graph_logger;
  graph_logger.install(ctx_params);

  llama_context* ctx = llama_init_from_model(model, ctx_params);
  if (!ctx) {
    std::fprintf(stderr, "run_tokens: cannot create a context\n");
    return 1;
  }

  std::vector<float> logits;
  std::vector<llama_token> fed;
  int step = 0;
  bool ok = decode(ctx, graph_logger, step, opt.prompt, 0, n_vocab, logits);
  for (std::size_t i = 0; ok && i < n_decode; ++i) {
    step = static_cast<int>(i) + 1;
    const llama_token next = opt.n_predict >= 0 ? greedy(logits, n_vocab) : opt.decode[i];
    fed.push_back(next);
    ok = decode(ctx, graph_logger, step, {next}, static_cast<int>(opt.prompt.size() + i), n_vocab, logits);
  }
  if (!ok) std::fprintf(stderr, "run_tokens: llama_decode failed at step %d\n", step);
  if (ok && !opt.logits_path.empty() &&
      !write_npy(opt.logits_path, logits, n_positions, static_cast<size_t>(n_vocab))) {
    std::fprintf(stderr, "run_tokens: cannot write %s\n", opt.logits_path.c_str());
    ok = false;
  }
  if (ok && !opt.info_path.empty() && !write_info(opt.info_path, vocab, opt.prompt, fed)) {
    std::fprintf(stderr, "run_tokens: cannot write %s\n", opt.info_path.c_str());
    ok = false;
  }

  orchlog::close();
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return ok ? 0 : 1;
}
