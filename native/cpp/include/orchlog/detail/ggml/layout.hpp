// Where the tokens are in a ggml tensor, and how one token's row is copied
// out of it, for the ggml adapter (orchlog/ggml.hpp). Pure arithmetic on
// ggml's ne/nb arrays: no ggml header needed, so it is tested on its own.
//
// ggml lists dimensions innermost first (ne[0] is the row length) and gives
// byte strides nb[]; orchlog shapes are outermost first, C-contiguous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace orchlog {
namespace detail {

inline constexpr int kGgmlDims = 4;

// How an op places the token dimension of its result, relative to a source.
enum class TokenFlow : std::uint8_t {
  same_as_first_source,  // element-wise ops, norms, RoPE, softmax, scaling: src[0]'s layout
  from_second_source,    // MUL_MAT: the result's dimensions 1-3 are src[1]'s
  permuted,              // PERMUTE: source dimension i becomes dimension axes[i]
  transposed,            // TRANSPOSE: dimensions 0 and 1 swap
  gathered_rows,         // GET_ROWS: one result row (dimension 1) per id
  shape_only,            // RESHAPE, VIEW, CONT, CPY, graph inputs: only the shape tells
};

// What token_dim() is told about the source whose layout an op follows, besides its token dimension.
inline constexpr int kSourceUnknown = -1;        // no node of this graph (an input, a weight): the shape decides
inline constexpr int kSourceWithoutTokens = -2;  // a node known to hold no token dimension (a KV-cache view)

// The token dimension judged from the shape alone: the outermost dimension
// of n_tokens elements (llama.cpp's reshapes split or merge inner dimensions
// and keep tokens outside them). A one-token step has no such evidence; its
// tokens are taken to sit just outside the last dimension longer than one,
// where a longer batch would have them. -1: no token dimension.
inline int token_dim_from_shape(const std::int64_t ne[kGgmlDims], std::int64_t n_tokens) {
  if (n_tokens <= 0) return -1;
  if (n_tokens == 1) {
    int outside = 1;
    for (int i = 1; i < kGgmlDims; ++i)
      if (ne[i] > 1) outside = i + 1;
    return outside < kGgmlDims ? outside : -1;
  }
  for (int i = kGgmlDims - 1; i >= 1; --i)
    if (ne[i] == n_tokens) return i;
  return -1;
}

// The token dimension of a tensor (1 to 3), or -1 when it has none. The
// source's token dimension is followed through the op where the op says
// where it goes (a PERMUTE moves it, a MUL_MAT keeps src[1]'s), so that
// attention scores [n_kv, n_tokens, n_head] are read right even when
// n_tokens equals n_head. A result is trusted only if that dimension holds
// between 1 and n_tokens rows (fewer: llama.cpp kept only the rows whose
// logits were asked for); otherwise the shape decides. A source known to hold
// no tokens (kSourceWithoutTokens) gives none to what is made from it, however
// its shape looks: in a one-token step every tensor has a dimension of one
// element, so the shape alone would give a KV-cache view the token's position.
inline int token_dim(TokenFlow flow, const std::int64_t ne[kGgmlDims], std::int64_t n_tokens, int source_dim,
                     const std::int32_t* permute_axes = nullptr) {
  if (source_dim == kSourceWithoutTokens && flow != TokenFlow::gathered_rows) return -1;
  int d = -1;
  switch (flow) {
    case TokenFlow::same_as_first_source:
    case TokenFlow::from_second_source:
      d = source_dim;
      break;
    case TokenFlow::permuted:
      d = source_dim >= 0 && source_dim < kGgmlDims && permute_axes ? permute_axes[source_dim] : -1;
      break;
    case TokenFlow::transposed:
      d = source_dim == 0 ? 1 : source_dim == 1 ? 0 : source_dim;
      break;
    case TokenFlow::gathered_rows:
      d = 1;
      break;
    case TokenFlow::shape_only:
      break;
  }
  if (d >= 1 && d < kGgmlDims && ne[d] >= 1 && ne[d] <= n_tokens) return d;
  return token_dim_from_shape(ne, n_tokens);
}

// What one record of a tensor holds: with a token dimension, one row per
// token (that dimension removed); without one, the whole tensor. Dimensions
// of one element outside the last longer one are dropped, so a row has the
// same shape in a prompt pass and in a decode step.
struct RowLayout {
  int token_dim = -1;
  std::int64_t rows = 1;
  std::int64_t shape[kGgmlDims] = {};  // outermost first
  std::size_t n_dims = 0;
};

inline RowLayout row_layout(const std::int64_t ne[kGgmlDims], int token_dim) {
  RowLayout layout;
  layout.token_dim = token_dim;
  layout.rows = token_dim >= 0 ? ne[token_dim] : 1;
  std::int64_t kept[kGgmlDims];
  std::size_t n = 0;
  for (int i = 0; i < kGgmlDims; ++i)
    if (i != token_dim) kept[n++] = ne[i];
  while (n > 1 && kept[n - 1] == 1) --n;
  for (std::size_t i = 0; i < n; ++i) layout.shape[i] = kept[n - 1 - i];
  layout.n_dims = n;
  return layout;
}

// Whether the bytes of each row (or of the whole tensor, token_dim -1) lie
// one after another, so a record can point into the tensor without a copy.
inline bool rows_are_contiguous(const std::int64_t ne[kGgmlDims], const std::size_t nb[kGgmlDims],
                                std::size_t element_bytes, int token_dim) {
  std::size_t expected = element_bytes;
  for (int i = 0; i < kGgmlDims; ++i) {
    if (ne[i] != 1 && nb[i] != expected) return false;
    expected *= static_cast<std::size_t>(ne[i]);
  }
  // Rows are whole slabs of the outermost dimension that is longer than one.
  for (int i = token_dim + 1; token_dim >= 0 && i < kGgmlDims; ++i)
    if (ne[i] != 1) return false;
  return true;
}

// The dimension along which a view of llama.cpp's KV cache runs over its cells, or -1 when the strides do
// not say. The cache is [channels, cells] (`cell_bytes` its nb[1], `element_bytes` its nb[0], `cells` its
// ne[1]): a cell's channels side by side (K, and V under flash attention), so the dimension whose stride is
// a cell's bytes; or V stored transposed (llama.cpp without flash attention: a channel's cells side by side,
// channels `cells` elements apart), so the dimension whose stride is one element. A view that fits
// neither, or both, is not cut.
inline int kv_cells_dim(const std::int64_t ne[kGgmlDims], const std::size_t nb[kGgmlDims], std::size_t cell_bytes,
                        std::size_t element_bytes, std::int64_t cells) {
  int by_cell = -1, by_element = -1, n_by_cell = 0, n_by_element = 0;
  bool channels_apart = false;
  for (int d = 0; d < kGgmlDims; ++d) {
    if (ne[d] <= 1) continue;
    if (nb[d] == cell_bytes) by_cell = d, ++n_by_cell;
    if (nb[d] == element_bytes) by_element = d, ++n_by_element;
    if (nb[d] == element_bytes * static_cast<std::size_t>(cells)) channels_apart = true;
  }
  if (n_by_cell == 1 && !channels_apart) return by_cell;
  if (n_by_cell == 0 && channels_apart && n_by_element == 1) return by_element;
  return -1;
}

// Visits the runs along dimension 0 that make up row `row` of dimension
// `token_dim` (every run when token_dim is -1), outermost first: what C
// order wants. `visit(pointer to the run's first element)` does the copy.
template <class Visit>
void for_each_run(const unsigned char* base, const std::int64_t ne[kGgmlDims], const std::size_t nb[kGgmlDims],
                  int token_dim, std::int64_t row, Visit&& visit) {
  std::int64_t lo[kGgmlDims] = {0, 0, 0, 0};
  std::int64_t hi[kGgmlDims] = {ne[0], ne[1], ne[2], ne[3]};
  if (token_dim >= 0) {
    lo[token_dim] = row;
    hi[token_dim] = row + 1;
  }
  for (std::int64_t i3 = lo[3]; i3 < hi[3]; ++i3)
    for (std::int64_t i2 = lo[2]; i2 < hi[2]; ++i2)
      for (std::int64_t i1 = lo[1]; i1 < hi[1]; ++i1)
        visit(base + static_cast<std::size_t>(i1) * nb[1] + static_cast<std::size_t>(i2) * nb[2] +
              static_cast<std::size_t>(i3) * nb[3]);
}

// Copies one run of n elements of element_bytes each, `stride` bytes apart.
inline unsigned char* copy_run(const unsigned char* src, std::int64_t n, std::size_t stride, std::size_t element_bytes,
                               unsigned char* out) {
  if (stride == element_bytes) {
    const std::size_t bytes = static_cast<std::size_t>(n) * element_bytes;
    std::memcpy(out, src, bytes);
    return out + bytes;
  }
  for (std::int64_t i = 0; i < n; ++i, out += element_bytes)
    std::memcpy(out, src + static_cast<std::size_t>(i) * stride, element_bytes);
  return out;
}

}  // namespace detail
}  // namespace orchlog
