// Run token ids through llama.cpp: one prompt pass, then one decode call per
// decode token (fixed tokens, not sampled), and write the logits of every
// position as a .npy file of float32, shape (n_positions, n_vocab).
//
//   run_tokens MODEL.gguf --prompt 0,17,42 --decode 3,64 --logits out.npy
//              [--threads N] [--graph-names names.tsv] [--verbose]
//
// Settings are chosen for a numerical reference, not for speed: f32 KV cache,
// flash attention off, the whole prompt in one micro-batch (so that step 0 is
// one graph evaluation), logits for every position.
//
// --graph-names lists, per step, every tensor of the evaluated graphs (name,
// op, type, shape) through the eval callback, without copying any data. The
// orchlog ggml adapter plugs into the same two fields, cb_eval and
// cb_eval_user_data: see install_eval_callback() below.
#include <llama.h>

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
    std::string graph_names_path;
    int threads = 2;
    bool verbose = false;
};

// What the eval callback sees: the step being evaluated (0 = the prompt pass,
// then one per decode call), the position of the step's first token (token i
// of a graph tensor is at first_position + i), and where to list the tensors.
struct EvalState {
    int step = 0;
    int first_position = 0;
    FILE *graph_names = nullptr;
};

bool parse_tokens(const std::string &text, std::vector<llama_token> &out) {
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) {
        char *end = nullptr;
        long value = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || value < 0) return false;
        out.push_back(static_cast<llama_token>(value));
    }
    return !out.empty();
}

bool parse_options(int argc, char **argv, Options &opt) {
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
        const char *v = nullptr;
        if (arg == "--verbose") {
            opt.verbose = true;
        } else if (arg == "--prompt" || arg == "--decode" || arg == "--logits" || arg == "--threads" ||
                   arg == "--graph-names") {
            if (!(v = value())) return false;
            if (arg == "--prompt" && !parse_tokens(v, opt.prompt)) return false;
            if (arg == "--decode" && !parse_tokens(v, opt.decode)) return false;
            if (arg == "--logits") opt.logits_path = v;
            if (arg == "--graph-names") opt.graph_names_path = v;
            if (arg == "--threads") opt.threads = std::atoi(v);
        } else if (opt.model.empty() && arg[0] != '-') {
            opt.model = arg;
        } else {
            return false;
        }
    }
    return !opt.model.empty() && !opt.prompt.empty() && !opt.logits_path.empty() && opt.threads > 0;
}

// Lists each graph tensor once per step; asks for no data (returns false), so
// the scheduler never stops to copy anything.
bool list_graph_tensors(struct ggml_tensor *t, bool ask, void *user_data) {
    auto *state = static_cast<EvalState *>(user_data);
    if (ask && state->graph_names) {
        std::fprintf(state->graph_names, "%d\t%s\t%s\t%s\t%lld,%lld,%lld,%lld\n", state->step, t->name,
                     ggml_op_desc(t), ggml_type_name(t->type), (long long)t->ne[0], (long long)t->ne[1],
                     (long long)t->ne[2], (long long)t->ne[3]);
    }
    return false;
}

// The hook point: the orchlog ggml adapter replaces list_graph_tensors here.
void install_eval_callback(llama_context_params &params, EvalState &state) {
    if (state.graph_names) {
        params.cb_eval = list_graph_tensors;
        params.cb_eval_user_data = &state;
    }
}

bool write_npy(const std::string &path, const std::vector<float> &data, size_t rows, size_t cols) {
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
    out.write(reinterpret_cast<const char *>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
    return static_cast<bool>(out);
}

void quiet_log(enum ggml_log_level level, const char *text, void *) {
    if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

// Decodes `tokens` at positions first_pos.. as sequence 0 and appends the
// logits of every token to `logits`.
bool decode(llama_context *ctx, const std::vector<llama_token> &tokens, int first_pos, int n_vocab,
            std::vector<float> &logits) {
    llama_batch batch = llama_batch_init(static_cast<int32_t>(tokens.size()), 0, 1);
    for (size_t i = 0; i < tokens.size(); ++i) {
        batch.token[i] = tokens[i];
        batch.pos[i] = first_pos + static_cast<llama_pos>(i);
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = static_cast<int32_t>(tokens.size());
    bool ok = llama_decode(ctx, batch) == 0;
    for (size_t i = 0; ok && i < tokens.size(); ++i) {
        const float *row = llama_get_logits_ith(ctx, static_cast<int32_t>(i));
        ok = row != nullptr;
        if (ok) logits.insert(logits.end(), row, row + n_vocab);
    }
    llama_batch_free(batch);
    return ok;
}

}  // namespace

int main(int argc, char **argv) {
    Options opt;
    if (!parse_options(argc, argv, opt)) {
        std::fprintf(stderr,
                     "usage: %s MODEL.gguf --prompt IDS --logits OUT.npy [--decode IDS] [--threads N] "
                     "[--graph-names OUT.tsv] [--verbose]\n  IDS: comma-separated token ids, e.g. 0,17,42\n",
                     argv[0]);
        return 2;
    }
    if (!opt.verbose) llama_log_set(quiet_log, nullptr);
    llama_backend_init();

    llama_model_params model_params = llama_model_default_params();
    model_params.n_gpu_layers = 0;
    llama_model *model = llama_model_load_from_file(opt.model.c_str(), model_params);
    if (!model) {
        std::fprintf(stderr, "run_tokens: cannot load %s\n", opt.model.c_str());
        return 1;
    }

    const uint32_t n_positions = static_cast<uint32_t>(opt.prompt.size() + opt.decode.size());
    EvalState state;
    if (!opt.graph_names_path.empty() && !(state.graph_names = std::fopen(opt.graph_names_path.c_str(), "w"))) {
        std::fprintf(stderr, "run_tokens: cannot write %s\n", opt.graph_names_path.c_str());
        return 1;
    }
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
    install_eval_callback(ctx_params, state);

    llama_context *ctx = llama_init_from_model(model, ctx_params);
    if (!ctx) {
        std::fprintf(stderr, "run_tokens: cannot create a context\n");
        return 1;
    }
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

    std::vector<float> logits;
    bool ok = decode(ctx, opt.prompt, 0, n_vocab, logits);
    for (size_t i = 0; ok && i < opt.decode.size(); ++i) {
        state.step = static_cast<int>(i) + 1;
        state.first_position = static_cast<int>(opt.prompt.size() + i);
        ok = decode(ctx, {opt.decode[i]}, state.first_position, n_vocab, logits);
    }
    if (!ok) std::fprintf(stderr, "run_tokens: llama_decode failed at step %d\n", state.step);
    if (ok && !write_npy(opt.logits_path, logits, n_positions, static_cast<size_t>(n_vocab))) {
        std::fprintf(stderr, "run_tokens: cannot write %s\n", opt.logits_path.c_str());
        ok = false;
    }

    if (state.graph_names) std::fclose(state.graph_names);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return ok ? 0 : 1;
}
