// The ggml / llama.cpp adapter: an eval callback that logs graph tensors
// through orchlog, with no change to llama.cpp.
//
//   #include <orchlog/ggml.hpp>        // needs ggml.h and ggml-backend.h on the include path
//
//   orchlog::ggml::GraphLogger graph_logger;    // one per llama_context
//   llama_context_params params = llama_context_default_params();
//   graph_logger.install(params);               // sets cb_eval and cb_eval_user_data
//   llama_context* ctx = llama_init_from_model(model, params);
//   graph_logger.begin_step(0, 0, batch.n_tokens, batch.token);  // before each llama_decode: step, first
//                                                                  // position, tokens and their ids
//   llama_decode(ctx, batch);
//
// Run with ORCH_LOG_FILE=llama.jsonl (and the other ORCH_LOG_* knobs). What
// a record holds (docs/llama-cpp.md has the details):
//
// - checkpoint and layer from the tensor's name: "attn_norm-3" is
//   attn_norm at layer 3, "result_norm" has no layer. Tensors ggml named
//   "node_<n>" are skipped, except the MUL_MAT right after "kqv_out-<L>"
//   (the attention output projection, unnamed in llama.cpp), logged as
//   "attn_out" at layer L.
// - stage: the op, in lower case, when the same checkpoint and layer were
//   met before in the same graph: "Qcur-3" is MUL_MAT (no stage), then
//   "add", "reshape", "rope". The first tensor under a name has no stage.
// - one record per token row, token_idx = first_position + row, token_id
//   the batch's id of that token when begin_step() was given the ids;
//   tensors without a token dimension (the KV cache and its views among
//   them) are one record with no token_idx. Rows of
//   fewer than all tokens (llama.cpp computes the last layer only for tokens
//   whose logits were asked for) are taken to be the batch's last tokens.
// - attention scores and probabilities ("kq", "kq_soft_max" and the other
//   "kq*" but "kqv*"), whose innermost dimension is llama.cpp's KV cache
//   padded to 256 cells: each token's row is cut to the cells it may attend
//   to, positions 0 to its own (a causal model, one sequence from cell 0),
//   so that it lines up with an engine that computes only those, and
//   summaries compare without a window; meta "kv_cells" says "<kept> of
//   <n_kv>".
// - the KV cache (cache_k_l<N>, cache_v_l<N>) and its views, which span all
//   its cells (padded to 256 and more, cells of removed tokens included):
//   cut to the cells in use, positions 0 to the batch's last (the same one
//   sequence from cell 0), along the dimension their strides say runs over
//   cells; meta "kv_cells" as above. The V cache stored transposed and
//   reshaped into one column (ggml_set_rows' target) is recorded as the
//   [channels, cells] it holds. A tensor whose strides do not say (a column
//   of K) is logged whole.
// - meta "weight_type": on the result of a matrix product or embedding
//   lookup, the type of the loaded weights it read (q8_0, q4_K, f16, f32).
// - step as given to begin_step().
// - data: f32, f16, bf16, f64, i8, i32, i64 as they are; quantized types
//   dequantized to f32 with meta "dequantized_from" naming the type; other
//   types are skipped with one warning. Tensors on any backend are copied to
//   the host; non-contiguous views are gathered into C order.
//
// - grafting (ORCH_GRAFT_FROM, ORCH_GRAFT_SELECT; docs/cpp.md "Grafting"): a
//   selected token row is overwritten in the tensor itself from the reference
//   run before the graph goes on, and logged marked grafted. Only contiguous
//   rows of a plain type can be; for any other (a non-contiguous view, a
//   quantized type, an attention row cut to its causal window) one warning
//   says so, the row is logged as it is, and each is counted. A row in a
//   device buffer (CUDA, or any backend whose buffer is not host memory) is
//   grafted in the host copy and written back with ggml_backend_tensor_set,
//   the row's bytes only: the scheduler has synchronized the backend before
//   it hands the tensor over, and computes the next node after the callback.
//
// The callback answers the scheduler's "do you want this tensor?" with the
// selectors (ORCH_LOG_SELECT, ORCH_GRAFT_SELECT), so unwanted tensors are
// never copied, and with no at once when logging is off. It never throws and never stops a graph.
// Not thread-safe: llama.cpp calls it from the thread running llama_decode.
#pragma once

#include <ggml-backend.h>
#include <ggml.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "orchlog/detail/ggml/flat_table.hpp"
#include "orchlog/detail/ggml/layout.hpp"
#include "orchlog/detail/ggml/names.hpp"
#include "orchlog/detail/stderr.hpp"
#include "orchlog/graft.hpp"
#include "orchlog/logger.hpp"

namespace orchlog {
namespace ggml {

inline bool eval_callback(struct ggml_tensor* t, bool ask, void* user_data);

class GraphLogger {
 public:
  // Call before each graph evaluation (each llama_decode): `step` 0 for the
  // prompt pass, then one per decode call; the position of the batch's first
  // token; how many tokens it holds. The batch must be evaluated as one
  // graph (llama.cpp: n_ubatch at least the batch size), since the callback
  // cannot see where one micro-batch ends and the next begins.
  // `token_ids` (n_tokens of them, or null) are the batch's token ids, written
  // as each token row's `token_id`: llama.cpp's llama_batch holds them in
  // `token` (begin_step(step, batch.pos[0], batch.n_tokens, batch.token)).
  void begin_step(int step, std::int64_t first_position, std::int64_t n_tokens,
                  const std::int32_t* token_ids = nullptr) noexcept {
    step_ = step;
    first_position_ = first_position;
    n_tokens_ = n_tokens;
    graph_first_ = nullptr;
    try {
      token_ids_.assign(token_ids, token_ids && n_tokens > 0 ? token_ids + n_tokens : token_ids);
    } catch (...) {  // std::bad_alloc: the records go without their token ids
      token_ids_.clear();
    }
  }

  // Points a llama_context_params (or anything with cb_eval and
  // cb_eval_user_data) at this logger.
  template <class Params>
  void install(Params& params) noexcept {
    params.cb_eval = &eval_callback;
    params.cb_eval_user_data = this;
  }

  // The eval callback's work: `ask` true is the scheduler asking whether the
  // tensor is wanted; then, once it is computed, `ask` false hands it over.
  bool observe(struct ggml_tensor* t, bool ask) noexcept {
    if (!ask) {
      if (t == pending_) write(t);
      pending_ = nullptr;
      return true;  // false would stop the graph
    }
    pending_ = nullptr;
    if (!orchlog::enabled()) return false;
    try {
      if (!describe(t)) return false;
      const Key first = key_for_row(0);
      if (!orchlog::selects(checkpoint_, first, layout_.rows) &&
          !orchlog::graft_selects(checkpoint_, first, layout_.rows))
        return false;
      pending_ = t;
      return true;
    } catch (...) {  // std::bad_alloc from the per-graph tables: skip the tensor
      return false;
    }
  }

 private:
  // Fills checkpoint_, layer_, stage_ and layout_ for t; false when t is not logged.
  bool describe(struct ggml_tensor* t) {
    note_graph_start(t);
    const int token_dim = remember_token_dim(t);
    const std::string_view name = t->name;
    if (detail::is_unnamed_graph_tensor(name)) {
      if (!is_attention_output(t)) return false;
      checkpoint_ = "attn_out";
    } else {
      detail::parse_graph_name(name, checkpoint_, layer_);
    }
    // A (checkpoint, layer) met before in this graph: the op tells this tensor apart.
    bool first_use = false;
    names_seen_.find_or_insert(std::hash<std::string>()(checkpoint_) * 1000003u + (layer_ ? *layer_ + 1u : 0u), 0,
                               first_use);
    stage_.clear();
    if (!first_use) {
      for (const char* c = ggml_op_desc(t); *c; ++c) stage_.push_back(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    }
    read_as(t);
    layout_ = detail::row_layout(ne_, token_dim);
    // Attention rows over the padded KV cache: cut to the causal window in write().
    causal_cut_ = token_dim > 0 && detail::is_attention_score_name(checkpoint_) &&
                  t->ne[0] >= first_position_ + n_tokens_ && layout_.n_dims >= 1;
    // The KV cache and its views over all its cells: cut to the cells in use in write().
    cache_cut_dim_ = token_dim < 0 ? kv_cache_cut_dim(t) : -1;
    return loggable_type(t->type);
  }

  // How t's elements are read (ne_, nb_): as ggml lays them out, but for llama.cpp's V cache stored
  // transposed and reshaped into one column (ggml_set_rows' target without flash attention), as the
  // [cells, channels] it holds (a channel's cells side by side), so that it is cut to the cells in use like
  // the cache's other views, and recorded as [channels, cells].
  void read_as(const struct ggml_tensor* t) {
    for (int i = 0; i < detail::kGgmlDims; ++i) ne_[i] = t->ne[i], nb_[i] = t->nb[i];
    const struct ggml_tensor* cache = t->view_src;
    if (!cache || detail::kv_cache_kind(cache->name) != 'v') return;
    const bool whole_column = t->ne[0] == 1 && t->view_offs == 0 && ggml_nelements(t) == ggml_nelements(cache) &&
                              t->nb[1] == t->nb[0] && cache->ne[2] == 1 && cache->ne[3] == 1;
    if (!whole_column) return;
    const std::int64_t cells = cache->ne[1], channels = cache->ne[0];
    ne_[0] = cells, ne_[1] = channels, ne_[2] = ne_[3] = 1;
    nb_[0] = t->nb[0], nb_[1] = t->nb[0] * static_cast<std::size_t>(cells);
    nb_[2] = nb_[3] = nb_[1] * static_cast<std::size_t>(channels);
  }

  // The dimension along which a tensor of the KV cache (llama.cpp's cache_k_l<N> or cache_v_l<N>, or a
  // view of one) is cut to the cells in use, or -1. In use are positions 0 to the batch's last (one
  // sequence from cell 0, as for attention rows): the cells past them (llama.cpp pads the cache to 256 and
  // more, and keeps cells of removed tokens) are what no attention of this step reads, and hashing them
  // at every step was most of what the adapter cost a decode step. -1 also where the strides do not say
  // which dimension the cells are (a reshape that interleaves them with channels: logged whole).
  int kv_cache_cut_dim(const struct ggml_tensor* t) {
    const struct ggml_tensor* cache = t->view_src ? t->view_src : t;
    if (!detail::is_kv_cache_name(cache->name)) return -1;
    const int d = detail::kv_cells_dim(ne_, nb_, cache->nb[1], cache->nb[0], cache->ne[1]);
    return d >= 0 && cells_in_use() > 0 && ne_[d] > cells_in_use() ? d : -1;
  }
  std::int64_t cells_in_use() const { return first_position_ + n_tokens_; }

  // How one record of the pending tensor is cut: along which ggml dimension (-1: whole), to how many cells.
  struct Cut {
    int dim = -1;
    std::int64_t cells = 0;
  };
  Cut cut_for_row(std::int64_t row) const {
    if (causal_cut_) return {0, kv_cells_for(row, ne_[0])};
    if (cache_cut_dim_ >= 0) return {cache_cut_dim_, cells_in_use()};
    return {};
  }

  // The MUL_MAT that projects "kqv_out-<L>" (llama.cpp leaves it unnamed);
  // sets layer_ to L.
  bool is_attention_output(const struct ggml_tensor* t) {
    if (t->op != GGML_OP_MUL_MAT || !t->src[1]) return false;
    detail::parse_graph_name(t->src[1]->name, checkpoint_, layer_);
    return checkpoint_ == "kqv_out" && layer_.has_value();
  }

  // A graph starts with begin_step(), or when its first node comes round
  // again (a second micro-batch, or a host that never calls begin_step).
  void note_graph_start(const struct ggml_tensor* t) {
    const bool again =
        graph_first_ && (t == graph_first_ || (t->op == graph_first_op_ && graph_first_name_ == t->name));
    if (graph_first_ && !again) return;
    if (again && !warned_several_graphs_) {
      warned_several_graphs_ = true;
      detail::print_warning(
          {"ggml adapter: a step evaluated more than one graph; its records share one step and "
           "the same token positions. Call begin_step() before each evaluation and evaluate each "
           "batch as one graph (llama.cpp: n_ubatch >= the batch size). (printed once)"});
    }
    graph_first_ = t;
    graph_first_op_ = t->op;
    graph_first_name_ = t->name;
    names_seen_.clear();
    token_dims_.clear();
  }

  // Every node's token dimension is kept for the nodes that use it: the
  // scheduler asks about nodes in order, so sources come first. The KV cache
  // (a tensor llama.cpp names cache_k_l<N> or cache_v_l<N>, or a view of one)
  // holds cached positions, not the batch's tokens: no token dimension, and
  // none for what is made from it.
  int remember_token_dim(const struct ggml_tensor* t) {
    if (detail::is_kv_cache_name(t->name) || (t->view_src && detail::is_kv_cache_name(t->view_src->name))) {
      bool inserted = false;
      token_dims_.find_or_insert(key_of(t), 0, inserted) = static_cast<std::int8_t>(-1);
      return -1;
    }
    detail::TokenFlow flow = detail::TokenFlow::same_as_first_source;
    const struct ggml_tensor* source = t->src[0];
    switch (t->op) {
      case GGML_OP_MUL_MAT:
        flow = detail::TokenFlow::from_second_source;
        source = t->src[1];
        break;
      case GGML_OP_PERMUTE:
        flow = detail::TokenFlow::permuted;
        break;
      case GGML_OP_TRANSPOSE:
        flow = detail::TokenFlow::transposed;
        break;
      case GGML_OP_GET_ROWS:
        flow = detail::TokenFlow::gathered_rows;
        break;
      case GGML_OP_RESHAPE:
      case GGML_OP_VIEW:
      case GGML_OP_CONT:
      case GGML_OP_CPY:
      case GGML_OP_NONE:
        flow = detail::TokenFlow::shape_only;
        break;
      default:
        break;
    }
    // A source that is no node of this graph (an input, a weight) has no known token dimension.
    const std::int8_t* known = source ? token_dims_.find(key_of(source)) : nullptr;
    const int source_dim = !known ? detail::kSourceUnknown : *known < 0 ? detail::kSourceWithoutTokens : *known;
    const int dim = detail::token_dim(flow, t->ne, n_tokens_, source_dim, t->op_params);
    bool inserted = false;
    token_dims_.find_or_insert(key_of(t), 0, inserted) = static_cast<std::int8_t>(dim);
    return dim;
  }
  static std::uint64_t key_of(const struct ggml_tensor* t) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(t));
  }

  static bool plain_type(enum ggml_type type, DType& dtype) {
    switch (type) {
      case GGML_TYPE_F32:
        dtype = DType::f32;
        return true;
      case GGML_TYPE_F16:
        dtype = DType::f16;
        return true;
      case GGML_TYPE_BF16:
        dtype = DType::bf16;
        return true;
      case GGML_TYPE_F64:
        dtype = DType::f64;
        return true;
      case GGML_TYPE_I8:
        dtype = DType::i8;
        return true;
      case GGML_TYPE_I32:
        dtype = DType::i32;
        return true;
      case GGML_TYPE_I64:
        dtype = DType::i64;
        return true;
      default:
        return false;
    }
  }

  static bool dequantizable(enum ggml_type type) {
    const struct ggml_type_traits* traits = ggml_get_type_traits(type);
    return traits && traits->is_quantized && traits->to_float;
  }

  bool loggable_type(enum ggml_type type) {
    DType dtype;
    if (plain_type(type, dtype) || dequantizable(type)) return true;
    if (unsupported_types_warned_.insert(type).second) {
      detail::print_warning({"ggml adapter: tensors of type ", ggml_type_name(type),
                             " are not logged (orchlog has no such dtype and ggml no conversion to f32)"});
    }
    return false;
  }

  Key key_for_row(std::int64_t row) const {
    if (layout_.token_dim < 0) return Key{std::nullopt, layer_, stage_view(), step_};
    // Fewer rows than tokens: llama.cpp kept the rows of the last tokens (inp_out_ids).
    const std::int64_t token = (n_tokens_ - layout_.rows) + row;
    const bool known = token >= 0 && static_cast<std::size_t>(token) < token_ids_.size();
    return Key{first_position_ + token, layer_, stage_view(), step_}.with_token_id(
        known ? std::optional<std::int64_t>(token_ids_[static_cast<std::size_t>(token)]) : std::nullopt);
  }
  std::optional<std::string_view> stage_view() const {
    return stage_.empty() ? std::nullopt : std::optional<std::string_view>(stage_);
  }

  void write(struct ggml_tensor* t) noexcept {
    try {
      const std::size_t span = ggml_nbytes(t);
      unsigned char* const data_in_place = static_cast<unsigned char*>(t->data);
      const unsigned char* base = data_in_place;
      if (span == 0 || !base) return;
      const bool on_device = t->buffer && !ggml_backend_buffer_is_host(t->buffer);
      if (on_device) {
        host_copy_.resize(span);  // the view's whole extent; strides still apply
        ggml_backend_tensor_get(t, host_copy_.data(), 0, span);
        base = host_copy_.data();
      }
      DType dtype = DType::f32;
      const bool plain = plain_type(t->type, dtype);
      const std::size_t element_bytes = plain ? ggml_type_size(t->type) : sizeof(float);
      const bool cut = causal_cut_ || cache_cut_dim_ >= 0;
      const bool zero_copy = plain && !cut && detail::rows_are_contiguous(ne_, nb_, element_bytes, layout_.token_dim);
      std::vector<MetaItem> meta;
      if (!plain) meta.emplace_back("dequantized_from", ggml_type_name(t->type));
      if (const char* weights = weight_type(t)) meta.emplace_back("weight_type", weights);
      const char* why_not_grafted =
          !plain        ? "the tensor is quantized (only plain types are grafted)"
          : causal_cut_ ? "the row is logged cut to its causal window (only whole rows are grafted)"
          : cut         ? "the KV cache is logged cut to the cells in use (only whole tensors are grafted)"
          : !zero_copy  ? "the tensor is a non-contiguous view (only contiguous rows are grafted)"
                        : nullptr;
      for (std::int64_t row = 0; row < layout_.rows; ++row) {
        const Key key = key_for_row(row);
        const bool graft = orchlog::graft_selects(checkpoint_, key);
        const Cut row_cut = cut_for_row(row);
        std::vector<MetaItem> row_meta = meta;
        std::int64_t dims[detail::kGgmlDims];
        for (std::size_t i = 0; i < layout_.n_dims; ++i) dims[i] = layout_.shape[i];
        if (row_cut.dim >= 0) {  // MetaItem views its text: the text lives in a member until the record is written
          kv_cells_text_ = std::to_string(row_cut.cells) + " of " + std::to_string(ne_[row_cut.dim]);
          row_meta.emplace_back("kv_cells", std::string_view(kv_cells_text_));
          // ggml's dimension d is orchlog's n_dims - 1 - d: reversed, the token dimension (if any) outside it.
          dims[layout_.n_dims - 1 - static_cast<std::size_t>(row_cut.dim)] = row_cut.cells;
        }
        const Shape shape(dims, layout_.n_dims);
        if (graft && !why_not_grafted) {
          // In device memory the host copy is grafted, then the row goes back to where the graph reads it.
          unsigned char* const row_data = (on_device ? host_copy_.data() : data_in_place) + row_offset(row);
          if (orchlog::graft(checkpoint_, row_data, dtype, shape, key, row_meta) && on_device)
            ggml_backend_tensor_set(t, row_data, row_offset(row), row_bytes(element_bytes));
          continue;
        }
        if (graft) orchlog::graft_refused(checkpoint_, key, why_not_grafted);
        if (!orchlog::selects(checkpoint_, key)) continue;
        const void* data =
            zero_copy ? base + row_offset(row) : gather(t->type, base, row, plain, element_bytes, row_cut);
        orchlog::log(checkpoint_, Tensor{data, dtype, shape}, key, row_meta);
      }
    } catch (...) {  // std::bad_alloc: the record is lost, the graph runs on
    }
  }

  // The type of the weights a matrix product or an embedding lookup read ("q8_0", "q4_K", "f16"): what
  // precision made the record, so that compare can say which quantization's noise to expect. Null for
  // other ops, and when the weights are a node of the graph rather than a loaded tensor.
  static const char* weight_type(const struct ggml_tensor* t) {
    if ((t->op != GGML_OP_MUL_MAT && t->op != GGML_OP_GET_ROWS) || !t->src[0]) return nullptr;
    const struct ggml_tensor* w = t->src[0];
    if (w->op != GGML_OP_NONE || w->view_src) return nullptr;
    return ggml_type_name(w->type);
  }

  // The bytes of one whole token row of a contiguous plain tensor (the whole tensor without a token dimension).
  std::size_t row_bytes(std::size_t element_bytes) const {
    std::size_t bytes = element_bytes;
    for (std::size_t i = 0; i < layout_.n_dims; ++i) bytes *= static_cast<std::size_t>(layout_.shape[i]);
    return bytes;
  }

  // The KV cells token row `row` may attend to: positions 0 to its own, at most the n_kv there are.
  std::int64_t kv_cells_for(std::int64_t row, std::int64_t n_kv) const {
    const std::int64_t position = first_position_ + (n_tokens_ - layout_.rows) + row;
    return position + 1 < n_kv ? position + 1 : n_kv;
  }

  std::size_t row_offset(std::int64_t row) const {
    return layout_.token_dim < 0 ? 0 : static_cast<std::size_t>(row) * nb_[layout_.token_dim];
  }

  // One row in C order in row_, converted to f32 for a quantized type; cut along `cut.dim` to its first
  // `cut.cells` elements.
  const void* gather(enum ggml_type type, const unsigned char* base, std::int64_t row, bool plain,
                     std::size_t element_bytes, Cut cut) {
    std::int64_t ne[detail::kGgmlDims] = {ne_[0], ne_[1], ne_[2], ne_[3]};
    if (cut.dim >= 0) ne[cut.dim] = cut.cells;
    std::int64_t numel = 1;
    for (int i = 0; i < detail::kGgmlDims; ++i)
      if (i != layout_.token_dim) numel *= ne[i];
    row_.resize(static_cast<std::size_t>(numel) * element_bytes);
    unsigned char* out = row_.data();
    const ggml_to_float_t to_float = plain ? nullptr : ggml_get_type_traits(type)->to_float;
    const std::int64_t whole = ne_[0], cells = ne[0];
    detail::for_each_run(base, ne, nb_, layout_.token_dim, row, [&](const unsigned char* run) {
      if (plain) {
        out = detail::copy_run(run, cells, nb_[0], element_bytes, out);
      } else {  // quantized blocks along dimension 0 are contiguous: convert whole, keep the first cells
        quantized_run_.resize(static_cast<std::size_t>(whole));
        to_float(run, quantized_run_.data(), whole);
        std::memcpy(out, quantized_run_.data(), static_cast<std::size_t>(cells) * sizeof(float));
        out += static_cast<std::size_t>(cells) * sizeof(float);
      }
    });
    return row_.data();
  }

  int step_ = 0;
  std::int64_t first_position_ = 0;
  std::int64_t n_tokens_ = 0;
  std::vector<std::int32_t> token_ids_;  // of the batch's tokens, when begin_step() was given them

  // The current graph.
  const struct ggml_tensor* graph_first_ = nullptr;
  enum ggml_op graph_first_op_ = GGML_OP_NONE;
  std::string graph_first_name_;
  detail::FlatTable names_seen_;  // hashes of the (checkpoint, layer) met so far
  detail::FlatTable token_dims_;  // by node

  // The tensor the scheduler was last told yes about, and what it is.
  const struct ggml_tensor* pending_ = nullptr;
  std::string checkpoint_;
  std::optional<std::int32_t> layer_;
  std::string stage_;
  detail::RowLayout layout_;
  std::int64_t ne_[detail::kGgmlDims] = {};  // how its elements are read (read_as)
  std::size_t nb_[detail::kGgmlDims] = {};

  bool causal_cut_ = false;    // the pending tensor's rows are cut to their causal KV window
  int cache_cut_dim_ = -1;     // the pending KV-cache tensor is cut along this ggml dimension to the cells in use
  std::string kv_cells_text_;  // the meta "kv_cells" of the row being written

  std::vector<unsigned char> host_copy_;
  std::vector<unsigned char> row_;
  std::vector<float> quantized_run_;
  std::unordered_set<int> unsupported_types_warned_;
  bool warned_several_graphs_ = false;
};

// A ggml_backend_sched_eval_callback; user_data is the GraphLogger.
inline bool eval_callback(struct ggml_tensor* t, bool ask, void* user_data) {
  return static_cast<GraphLogger*>(user_data)->observe(t, ask);
}

}  // namespace ggml
}  // namespace orchlog
