// Quantize a GGUF with llama.cpp's own quantizer (llama_model_quantize, what
// the llama-quantize tool calls), so a reference run reads the same kind of
// file a user downloads: Q8_0, Q4_K_M, F16 and the rest, 1-D tensors kept f32,
// tensors whose rows do not fit a type's blocks given llama.cpp's fallback.
//
//   quantize IN.gguf OUT.gguf TYPE [--threads N]      TYPE: q8_0, q4_k_m, f16, ...
#include <llama.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct NamedType {
  const char* name;
  llama_ftype ftype;
};

// The file types worth a reference run; names as llama-quantize spells them, in lower case.
constexpr NamedType kTypes[] = {
    {"f16", LLAMA_FTYPE_MOSTLY_F16},       {"bf16", LLAMA_FTYPE_MOSTLY_BF16},     {"q8_0", LLAMA_FTYPE_MOSTLY_Q8_0},
    {"q6_k", LLAMA_FTYPE_MOSTLY_Q6_K},     {"q5_k_m", LLAMA_FTYPE_MOSTLY_Q5_K_M}, {"q5_0", LLAMA_FTYPE_MOSTLY_Q5_0},
    {"q4_k_m", LLAMA_FTYPE_MOSTLY_Q4_K_M}, {"q4_k_s", LLAMA_FTYPE_MOSTLY_Q4_K_S}, {"q4_0", LLAMA_FTYPE_MOSTLY_Q4_0},
    {"q3_k_m", LLAMA_FTYPE_MOSTLY_Q3_K_M}, {"q2_k", LLAMA_FTYPE_MOSTLY_Q2_K},
};

void quiet_log(enum ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  if (argc == 6 && std::strcmp(argv[4], "--threads") == 0) threads = std::atoi(argv[5]);
  if ((argc != 4 && argc != 6) || threads <= 0) {
    std::fprintf(stderr, "usage: %s IN.gguf OUT.gguf TYPE [--threads N]\n  TYPE:", argv[0]);
    for (const NamedType& t : kTypes) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  const NamedType* chosen = nullptr;
  for (const NamedType& t : kTypes) {
    if (std::strcmp(t.name, argv[3]) == 0) chosen = &t;
  }
  if (!chosen) {
    std::fprintf(stderr, "quantize: unknown type %s\n", argv[3]);
    return 2;
  }
  llama_log_set(quiet_log, nullptr);
  llama_backend_init();
  llama_model_quantize_params params = llama_model_quantize_default_params();
  params.ftype = chosen->ftype;
  params.nthread = threads;
  const uint32_t failed = llama_model_quantize(argv[1], argv[2], &params);
  llama_backend_free();
  if (failed != 0) {
    std::fprintf(stderr, "quantize: llama_model_quantize failed on %s\n", argv[1]);
    return 1;
  }
  return 0;
}
