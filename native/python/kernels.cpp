// orchlog._kernels: the comparer's hot loops, with NumPy fallbacks in orchlog/kernels.py.
//
//   pair_metrics(a, b)          one fused pass over two f32/f64 arrays: every
//                               one-pass difference metric at once
//   abs_diff_select(a, b, k)    the k-th smallest |a-b| exactly, by radix select
//                               on the float bits (two passes for f32)
//   prefix_diffs(...)           the same metrics over the leading values of many
//                               pairs of summary records at once
//   parse_orchlog_jsonl(buf, first_line)
//                               canonical orchlog JSONL lines -> columns; lines
//                               it does not recognise are handed back to Python
//
// The Python side checks every result against its NumPy twin in the tests.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <deque>
#include <unordered_map>
#include <vector>

namespace py = pybind11;

namespace {

// ------------------------------------------------------------------ metrics

struct Sums {
  double sum_abs = 0, sum_d2 = 0, sum_a2 = 0, sum_b2 = 0;
  double max_abs = 0, max_rel = 0;
  double min_a = INFINITY, max_a = -INFINITY, min_b = INFINITY, max_b = -INFINITY;
  double nonfinite = 0;  // blocks whose sums of squares are not finite: 0 when every element is finite

  void merge(const Sums& o) {
    sum_abs += o.sum_abs, sum_d2 += o.sum_d2, sum_a2 += o.sum_a2, sum_b2 += o.sum_b2;
    max_abs = std::max(max_abs, o.max_abs), max_rel = std::max(max_rel, o.max_rel);
    min_a = std::min(min_a, o.min_a), max_a = std::max(max_a, o.max_a);
    min_b = std::min(min_b, o.min_b), max_b = std::max(max_b, o.max_b);
    nonfinite += o.nonfinite;
  }
};

// Sums run in the input's own precision over blocks short enough that the
// rounding error stays near one ulp of the block sum, and blocks add up in
// f64. That keeps the loop at SIMD width (converting every element to f64
// halves it) while the cosine, taken from the difference formula below,
// stays accurate to a few parts in 1e4 of 1-cos even when 1-cos is 1e-7.
constexpr size_t kBlock = 1024;

template <typename T>
inline void block_sums(const T* __restrict a, const T* __restrict b, size_t n, Sums& s) {
  T sum_abs = 0, sum_d2 = 0, sum_a2 = 0, sum_b2 = 0, max_abs = 0, max_rel = 0;
  T min_a = T(s.min_a), max_a = T(s.max_a), min_b = T(s.min_b), max_b = T(s.max_b);
  const T tiny = T(1e-8);
#pragma omp simd reduction(+ : sum_abs, sum_d2, sum_a2, sum_b2) reduction(max : max_abs, max_rel, max_a, max_b) \
    reduction(min : min_a, min_b)
  for (size_t i = 0; i < n; ++i) {
    const T x = a[i], y = b[i];
    const T d = x - y, ad = std::fabs(d);
    T ax = std::fabs(x);
    ax = ax > tiny ? ax : tiny;
    const T rel = ad / ax;
    max_abs = max_abs > ad ? max_abs : ad;
    max_rel = max_rel > rel ? max_rel : rel;
    sum_abs += ad, sum_d2 += d * d, sum_a2 += x * x, sum_b2 += y * y;
    min_a = min_a < x ? min_a : x, max_a = max_a > x ? max_a : x;
    min_b = min_b < y ? min_b : y, max_b = max_b > y ? max_b : y;
  }
  s.sum_abs += sum_abs, s.sum_d2 += sum_d2, s.sum_a2 += sum_a2, s.sum_b2 += sum_b2;
  s.max_abs = std::max<double>(s.max_abs, max_abs), s.max_rel = std::max<double>(s.max_rel, max_rel);
  s.min_a = min_a, s.max_a = max_a, s.min_b = min_b, s.max_b = max_b;
  // A NaN or Inf on either side makes its sum of squares NaN or Inf. (So does a square
  // too large for T; the caller then takes the careful path, which is merely slower.)
  s.nonfinite += std::isfinite(sum_a2) && std::isfinite(sum_b2) ? 0.0 : 1.0;
}

// One build runs at the widest vector width the machine has (resolved at load time).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ORCHLOG_WIDEST __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ORCHLOG_WIDEST
#endif

template <typename T>
ORCHLOG_WIDEST void sums_range(const T* a, const T* b, size_t n,
                                                                              Sums* out) {
  for (size_t s = 0; s < n; s += kBlock) block_sums<T>(a + s, b + s, std::min(kBlock, n - s), *out);
}

// Large arrays are split across the cores: the loop is compute-bound, not
// memory-bound, so a second core nearly halves the time.
constexpr size_t kPerThread = size_t(1) << 21;

unsigned worker_count(size_t n) {
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return unsigned(std::min<size_t>(hw, std::max<size_t>(1, n / kPerThread)));
}

template <typename T>
Sums sums_parallel(const T* a, const T* b, size_t n) {
  unsigned workers = worker_count(n);
  std::vector<Sums> parts(workers);
  std::vector<std::thread> threads;
  size_t chunk = (n / workers + kBlock - 1) / kBlock * kBlock;
  for (unsigned w = 1; w < workers; ++w) {
    size_t lo = std::min(n, w * chunk), hi = std::min(n, (w + 1) * chunk);
    if (w + 1 == workers) hi = n;
    threads.emplace_back([=, &parts] { sums_range<T>(a + lo, b + lo, hi - lo, &parts[w]); });
  }
  sums_range<T>(a, b, std::min(n, chunk), &parts[0]);
  for (auto& t : threads) t.join();
  for (unsigned w = 1; w < workers; ++w) parts[0].merge(parts[w]);
  return parts[0];
}

template <typename T>
py::dict pair_metrics_t(py::array_t<T, py::array::c_style> a, py::array_t<T, py::array::c_style> b) {
  size_t n = size_t(std::min(a.size(), b.size()));
  Sums s;
  {
    py::gil_scoped_release nogil;
    s = sums_parallel<T>(a.data(), b.data(), n);
  }
  py::dict d;
  d["n"] = n;
  d["all_finite"] = s.nonfinite == 0;
  d["sum_abs"] = s.sum_abs, d["sum_d2"] = s.sum_d2, d["sum_a2"] = s.sum_a2, d["sum_b2"] = s.sum_b2;
  d["max_abs"] = s.max_abs, d["max_rel"] = s.max_rel;
  d["min_a"] = s.min_a, d["max_a"] = s.max_a, d["min_b"] = s.min_b, d["max_b"] = s.max_b;
  return d;
}

// ------------------------------------------------------------ radix select
//
// |a-b| is non-negative, so the bits of the float read as an unsigned
// integer sort like the value. Each pass counts the next kDigit bits of the
// elements whose higher bits match what earlier passes fixed, and keeps the
// bucket that holds rank k. As soon as that bucket is small, its elements
// are gathered and the rank is selected among them; a bucket that stays
// large (many equal differences) just takes another counting pass, so
// memory never grows with n. Passes split across the cores.

template <typename T>
struct Bits;
template <>
struct Bits<float> {
  using U = uint32_t;
};
template <>
struct Bits<double> {
  using U = uint64_t;
};

constexpr int kDigit = 14;
constexpr size_t kGatherLimit = size_t(1) << 20;

template <typename T>
inline typename Bits<T>::U abs_diff_bits(T x, T y) {
  T d = std::fabs(x - y);
  typename Bits<T>::U u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

// Run fn(lo, hi, worker) over [0, n) split across the cores.
template <typename F>
void split(size_t n, unsigned workers, F fn) {
  std::vector<std::thread> threads;
  size_t chunk = n / workers;
  for (unsigned w = 1; w < workers; ++w) {
    size_t lo = w * chunk, hi = (w + 1 == workers) ? n : (w + 1) * chunk;
    threads.emplace_back([=] { fn(lo, hi, w); });
  }
  fn(0, workers > 1 ? chunk : n, 0);
  for (auto& t : threads) t.join();
}

template <typename T>
T radix_select(const T* a, const T* b, size_t n, uint64_t k) {
  using U = typename Bits<T>::U;
  constexpr int kValueBits = int(sizeof(U) * 8) - 1;  // the sign bit of |a-b| is always 0
  unsigned workers = worker_count(n);
  U prefix = 0;  // the top `known` value bits of the answer
  int known = 0;
  uint64_t in_bucket = n;
  while (known < kValueBits && in_bucket > kGatherLimit) {
    const int digit = std::min(kDigit, kValueBits - known), shift = kValueBits - known - digit;
    const size_t buckets = size_t(1) << digit;
    std::vector<std::vector<uint64_t>> hists(workers, std::vector<uint64_t>(buckets, 0));
    split(n, workers, [&](size_t lo, size_t hi, unsigned w) {
      std::vector<uint32_t> h(buckets, 0);
      uint64_t* out = hists[w].data();
      for (size_t base = lo; base < hi; base += size_t(1) << 31) {  // flush before a 32-bit count could overflow
        size_t top = std::min(hi, base + (size_t(1) << 31));
        if (known == 0) {
          for (size_t i = base; i < top; ++i) ++h[abs_diff_bits(a[i], b[i]) >> shift];
        } else {
          for (size_t i = base; i < top; ++i) {
            U u = abs_diff_bits(a[i], b[i]);
            if ((u >> (shift + digit)) == prefix) ++h[(u >> shift) & (buckets - 1)];
          }
        }
        for (size_t j = 0; j < buckets; ++j) out[j] += h[j], h[j] = 0;
      }
    });
    uint64_t seen = 0;
    size_t bucket = 0;
    for (; bucket < buckets; ++bucket) {
      in_bucket = 0;
      for (auto& h : hists) in_bucket += h[bucket];
      if (seen + in_bucket > k) break;
      seen += in_bucket;
    }
    k -= seen;
    prefix = (prefix << digit) | U(bucket);
    known += digit;
  }
  if (known == kValueBits) {  // every bit fixed: the answer is the prefix itself
    T out;
    std::memcpy(&out, &prefix, sizeof out);
    return out;
  }
  const int rest = kValueBits - known;
  std::vector<std::vector<T>> parts(workers);
  split(n, workers, [&](size_t lo, size_t hi, unsigned w) {
    parts[w].reserve(size_t(in_bucket / workers + 16));
    for (size_t i = lo; i < hi; ++i) {
      U u = abs_diff_bits(a[i], b[i]);
      if ((u >> rest) == prefix) parts[w].push_back(std::fabs(a[i] - b[i]));
    }
  });
  std::vector<T>& all = parts[0];
  for (unsigned w = 1; w < workers; ++w) all.insert(all.end(), parts[w].begin(), parts[w].end());
  auto nth = all.begin() + std::ptrdiff_t(k);
  std::nth_element(all.begin(), nth, all.end());
  return *nth;
}

// Count the elements of |a-b| below lo and within [lo, hi], keeping (up to
// `cap` of) the latter. Blocks of 64 are counted with vector compares and
// walked one by one only when something in them falls inside the bracket.
template <typename T>
ORCHLOG_WIDEST void bracket_pass(const T* a, const T* b, size_t n, T lo, T hi, size_t cap, uint64_t* below,
                                 uint64_t* inside, std::vector<T>* kept) {
  constexpr size_t kStep = 64;
  uint64_t under = 0, in = 0;
  for (size_t base = 0; base < n; base += kStep) {
    const size_t top = std::min(n, base + kStep);
    unsigned under_here = 0, hits = 0;
    for (size_t i = base; i < top; ++i) {
      const T v = std::fabs(a[i] - b[i]);
      under_here += v < lo;
      hits += (v >= lo) & (v <= hi);
    }
    under += under_here;
    if (!hits) continue;
    in += hits;
    if (kept->size() >= cap) continue;
    for (size_t i = base; i < top; ++i) {
      const T v = std::fabs(a[i] - b[i]);
      if (v >= lo && v <= hi) kept->push_back(v);
    }
  }
  *below = under, *inside = in;
}

// The usual way in: bracket rank k between two values read off a sorted
// sample, then one streaming pass counts the elements below the bracket and
// gathers those inside it, and the rank is selected among those few. The
// count is exact, so a bracket that misses (an unlucky sample) only costs
// a fall back to the radix passes above, never a wrong answer.
template <typename T>
T select_t(const T* a, const T* b, size_t n, uint64_t k) {
  constexpr size_t kSample = size_t(1) << 16;
  if (n <= 4 * kSample) {
    std::vector<T> all(n);
    for (size_t i = 0; i < n; ++i) all[i] = std::fabs(a[i] - b[i]);
    std::nth_element(all.begin(), all.begin() + std::ptrdiff_t(k), all.end());
    return all[k];
  }
  std::vector<T> sample(kSample);
  const size_t stride = n / kSample;
  for (size_t j = 0; j < kSample; ++j) sample[j] = std::fabs(a[j * stride] - b[j * stride]);
  std::sort(sample.begin(), sample.end());
  const double q = double(k) / double(n), margin = 4.0 * std::sqrt(std::max(q * (1 - q), 1e-6) / double(kSample));
  const T lo = sample[size_t(std::max(0.0, q - margin) * double(kSample - 1))];
  const T hi = sample[size_t(std::min(1.0, q + margin) * double(kSample - 1))];
  unsigned workers = worker_count(n);
  std::vector<uint64_t> below(workers, 0), inside(workers, 0);
  std::vector<std::vector<T>> parts(workers);
  const size_t cap = kGatherLimit / workers;  // past this, counting goes on but gathering stops
  split(n, workers, [&](size_t start, size_t stop, unsigned w) {
    bracket_pass<T>(a + start, b + start, stop - start, lo, hi, lo == hi ? 0 : cap, &below[w], &inside[w], &parts[w]);
  });
  uint64_t n_below = 0, n_inside = 0;
  for (unsigned w = 0; w < workers; ++w) n_below += below[w], n_inside += inside[w];
  if (k < n_below || k >= n_below + n_inside) return radix_select(a, b, n, k);
  if (lo == hi) return lo;
  std::vector<T>& all = parts[0];
  for (unsigned w = 1; w < workers; ++w) all.insert(all.end(), parts[w].begin(), parts[w].end());
  if (all.size() != n_inside) return radix_select(a, b, n, k);  // the bracket held more than the cap
  auto nth = all.begin() + std::ptrdiff_t(k - n_below);
  std::nth_element(all.begin(), nth, all.end());
  return *nth;
}

template <typename T>
double abs_diff_select_t(py::array_t<T, py::array::c_style> a, py::array_t<T, py::array::c_style> b, uint64_t k) {
  size_t n = size_t(std::min(a.size(), b.size()));
  if (k >= n) throw py::value_error("rank k is out of range");
  py::gil_scoped_release nogil;
  return double(select_t<T>(a.data(), b.data(), n, k));
}

// ------------------------------------------------------------ leading values
//
// Summary records carry their first N values; comparing a million pairs of
// them is a million short loops, done here in one call. Row p of the result
// holds PREFIX_COLUMNS (orchlog/kernels.py) for values ia[p] of a and ib[p]
// of b over their common length: both NaN, or the same infinity, agree; any
// other non-finite position is a mismatch (max_abs becomes infinite); the
// metrics cover the positions where both sides are finite.

constexpr int kPrefixColumns = 15;

void prefix_row(const double* x, const double* y, int64_t m, std::vector<double>& scratch, double* out) {
  double sum_abs = 0, sum_a2 = 0, sum_b2 = 0, sum_d2 = 0, max_abs = 0, max_rel = 0;
  double min_a = INFINITY, max_a = -INFINITY, min_b = INFINITY, max_b = -INFINITY;
  int64_t count = 0, mismatch = 0;
  const bool rank = m >= 100;  // below 100 values the nearest-rank 99th percentile is the largest
  scratch.clear();
  for (int64_t k = 0; k < m; ++k) {
    const double a = x[k], b = y[k];
    if (std::isfinite(a) && std::isfinite(b)) {
      const double d = a - b, ad = std::fabs(d);
      ++count;
      sum_abs += ad, sum_a2 += a * a, sum_b2 += b * b, sum_d2 += d * d;
      max_abs = std::max(max_abs, ad);
      max_rel = std::max(max_rel, ad / std::max(std::fabs(a), 1e-8));
      min_a = std::min(min_a, a), max_a = std::max(max_a, a), min_b = std::min(min_b, b), max_b = std::max(max_b, b);
      if (rank) scratch.push_back(ad);
    } else if (!((std::isnan(a) && std::isnan(b)) || a == b)) {
      ++mismatch;
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out[0] = double(m), out[14] = double(mismatch);
  if (count == 0) {
    for (int c = 1; c < 14; ++c) out[c] = nan;
    out[1] = mismatch ? INFINITY : nan;
    return;
  }
  double p99 = max_abs;
  if (rank) {
    auto nth = scratch.begin() + std::ptrdiff_t(std::ceil(0.99 * double(count)) - 1);
    std::nth_element(scratch.begin(), nth, scratch.end());
    p99 = *nth;
  }
  double cosine;
  if (sum_a2 == 0 || sum_b2 == 0) {
    cosine = sum_a2 == sum_b2 ? 1.0 : 0.0;
  } else {
    cosine = (sum_a2 + sum_b2 - sum_d2) / (2.0 * std::sqrt(sum_a2) * std::sqrt(sum_b2));
    cosine = std::min(1.0, std::max(-1.0, cosine));
  }
  const double n = double(count);
  double row[kPrefixColumns] = {double(m), mismatch ? INFINITY : max_abs, sum_abs / n, max_rel, p99,
                                std::sqrt(sum_a2 / n), std::sqrt(sum_b2 / n), std::sqrt(sum_d2 / n), cosine,
                                std::sqrt(sum_d2), min_a, max_a, min_b, max_b, double(mismatch)};
  std::memcpy(out, row, sizeof row);
}

py::array_t<double> prefix_diffs(py::array_t<double, py::array::c_style> va, py::array_t<int64_t, py::array::c_style> oa,
                                 py::array_t<int64_t, py::array::c_style> ia, py::array_t<double, py::array::c_style> vb,
                                 py::array_t<int64_t, py::array::c_style> ob, py::array_t<int64_t, py::array::c_style> ib) {
  const int64_t pairs = ia.size();
  if (ib.size() != pairs) throw py::value_error("ia and ib differ in length");
  const int64_t rows_a = oa.size() - 1, rows_b = ob.size() - 1;
  const int64_t *pa = ia.data(), *pb = ib.data(), *fa = oa.data(), *fb = ob.data();
  for (int64_t p = 0; p < pairs; ++p) {
    if (pa[p] < 0 || pa[p] >= rows_a || pb[p] < 0 || pb[p] >= rows_b) throw py::index_error("row index out of range");
  }
  py::array_t<double> out({pairs, int64_t(kPrefixColumns)});
  double* o = out.mutable_data();
  const double *xa = va.data(), *xb = vb.data();
  {
    py::gil_scoped_release nogil;
    std::vector<double> scratch;
    for (int64_t p = 0; p < pairs; ++p) {
      const int64_t i = pa[p], j = pb[p];
      const int64_t m = std::min(fa[i + 1] - fa[i], fb[j + 1] - fb[j]);
      prefix_row(xa + fa[i], xb + fb[j], m, scratch, o + p * kPrefixColumns);
    }
  }
  return out;
}

// ------------------------------------------------------------ JSONL lines
//
// Emitters write every record with the same fields in the same order and no
// spaces (FORMAT.md), so a parser that expects exactly that layout reads
// almost every line of a real trace without a general JSON parser. Any line
// it does not recognise (a header, a hand-edited or foreign line, a broken
// one) is returned untouched for the Python reader to parse or report.

// Names repeat on every line; look them up by view, without building a string.
struct Interner {
  std::deque<std::string> names;
  std::unordered_map<std::string_view, int32_t> ids;
  int32_t id(std::string_view s) {
    auto it = ids.find(s);
    if (it != ids.end()) return it->second;
    names.emplace_back(s);
    int32_t i = int32_t(names.size()) - 1;
    ids.emplace(std::string_view(names.back()), i);
    return i;
  }
  py::list to_list() const {
    py::list out;
    for (auto& s : names) out.append(py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), Py_ssize_t(s.size()), "replace")));
    return out;
  }
};

struct Columns {
  std::vector<int64_t> line, token_idx, layer, step, seq, rank, world_size, numel, shape_off{0}, shape, val_off{0};
  std::vector<int32_t> checkpoint, team, stage, dtype;
  std::vector<double> values, stats;  // stats: 5 per row (min max mean rms abs_max), NaN for null
  std::vector<int64_t> counts;        // 2 per row (nan_count inf_count)
  std::vector<char> blake3;           // 64 per row
  std::vector<std::pair<int64_t, std::string>> meta;  // rows with a non-empty meta: (row, JSON text)
  Interner checkpoints, teams, stages, dtypes;

  // Size every column for the lines in the buffer (values: as many per line as the first line has),
  // so that growing them never copies.
  void reserve_for(const char* data, size_t size) {
    size_t lines = size_t(std::count(data, data + size, '\n')) + 1;
    const char* first_end = static_cast<const char*>(std::memchr(data, '\n', size));
    size_t first_len = first_end ? size_t(first_end - data) : size;
    size_t per_line = size_t(std::count(data, data + first_len, ',')) + 1;
    for (auto* col : {&line, &token_idx, &layer, &step, &seq, &rank, &world_size, &numel}) col->reserve(lines);
    for (auto* col : {&checkpoint, &team, &stage, &dtype}) col->reserve(lines);
    shape_off.reserve(lines + 1), val_off.reserve(lines + 1), shape.reserve(lines * 2);
    values.reserve(lines * std::min<size_t>(per_line, 4096)), stats.reserve(lines * 5), counts.reserve(lines * 2);
    blake3.reserve(lines * 64);
  }
};

struct Cursor {
  const char* p;
  const char* end;

  // A literal of known length, so that the comparison compiles to a few loads instead of a call.
  template <size_t N>
  bool lit(const char (&s)[N]) {
    constexpr size_t n = N - 1;
    if (size_t(end - p) < n || std::memcmp(p, s, n) != 0) return false;
    p += n;
    return true;
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool u4(uint32_t& cp) {
    if (end - p < 4) return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      int h = hex(p[i]);
      if (h < 0) return false;
      cp = cp * 16 + uint32_t(h);
    }
    p += 4;
    return true;
  }

  static void utf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6)), out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12)), out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18)), out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
    }
  }

  // A JSON string (the opening quote not yet consumed): a view of the line when it
  // holds no escape, else decoded to UTF-8 in `scratch`.
  bool str(std::string_view& out, std::string& scratch) {
    if (p >= end || *p != '"') return false;
    const char* start = ++p;
    while (p < end && *p != '"' && *p != '\\' && *p != '\n') ++p;
    if (p < end && *p == '"') {
      out = std::string_view(start, size_t(p - start));
      ++p;
      return true;
    }
    scratch.assign(start, p);
    while (p < end) {
      char c = *p++;
      if (c == '"') {
        out = scratch;
        return true;
      }
      if (c == '\n') return false;
      if (c != '\\') {
        scratch += c;
        continue;
      }
      if (p >= end) return false;
      char e = *p++;
      switch (e) {
        case '"': scratch += '"'; break;
        case '\\': scratch += '\\'; break;
        case '/': scratch += '/'; break;
        case 'b': scratch += '\b'; break;
        case 'f': scratch += '\f'; break;
        case 'n': scratch += '\n'; break;
        case 'r': scratch += '\r'; break;
        case 't': scratch += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!u4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair, or a lone one (kept as U+FFFD)
            uint32_t lo;
            const char* save = p;
            if (lit("\\u") && u4(lo) && lo >= 0xDC00 && lo < 0xE000) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              p = save;
              cp = 0xFFFD;
            }
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            cp = 0xFFFD;
          }
          utf8(cp, scratch);
          break;
        }
        default: return false;
      }
    }
    return false;
  }

  bool null() { return lit("null"); }

  bool int64(int64_t& v) {
    auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc() || r.ptr == p) return false;
    p = r.ptr;
    return true;
  }

  bool opt_int(int64_t& v) {
    if (null()) {
      v = -1;  // every key field is >= 0 in the schema, so -1 cannot be a value
      return true;
    }
    return int64(v) && v >= 0;
  }

  // A number, or one of the strings the format writes for non-finite values.
  bool number(double& v) {
    if (p < end && *p == '"') {
      if (lit("\"NaN\"")) return v = std::numeric_limits<double>::quiet_NaN(), true;
      if (lit("\"Infinity\"")) return v = INFINITY, true;
      if (lit("\"-Infinity\"")) return v = -INFINITY, true;
      return false;
    }
    if (p >= end || !(*p == '-' || (*p >= '0' && *p <= '9'))) return false;  // from_chars also takes "inf"
    if (fast_number(v)) return true;
    auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc() || r.ptr == p) return false;
    p = r.ptr;
    return true;
  }

  // Clinger's fast path: a decimal with at most 15 significant digits and a
  // power of ten within 10^+-22 is exactly m * 10^e or m / 10^e in doubles,
  // each a single correctly rounded operation on exact operands. Every f32
  // value in the canonical text (at most 9 digits) takes this path; anything
  // else is left to from_chars.
  bool fast_number(double& v) {
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* q = p;
    bool neg = q < end && *q == '-';
    q += neg;
    uint64_t m = 0;
    int sig = 0, e10 = 0;
    const char* digits = q;
    for (; q < end && unsigned(*q - '0') < 10; ++q) {
      if (m || *q != '0') m = m * 10 + unsigned(*q - '0'), ++sig;
    }
    if (q == digits || sig > 15) return false;
    if (q < end && *q == '.') {
      const char* frac = ++q;
      for (; q < end && unsigned(*q - '0') < 10; ++q) {
        if (m || *q != '0') m = m * 10 + unsigned(*q - '0'), ++sig;
        --e10;
      }
      if (q == frac || sig > 15) return false;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
      ++q;
      bool eneg = q < end && *q == '-';
      q += (q < end && (*q == '-' || *q == '+'));
      int e = 0;
      const char* exp = q;
      for (; q < end && unsigned(*q - '0') < 10 && e < 1000; ++q) e = e * 10 + (*q - '0');
      if (q == exp) return false;
      e10 += eneg ? -e : e;
    }
    if (e10 < -22 || e10 > 22) return false;
    double x = double(m);
    x = e10 < 0 ? x / kPow10[-e10] : x * kPow10[e10];
    v = neg ? -x : x;
    p = q;
    return true;
  }

  bool opt_number(double& v) {
    if (null()) return v = std::numeric_limits<double>::quiet_NaN(), true;
    return number(v);
  }

  // The raw text of a JSON object (strings may hold braces).
  bool object_text(std::string_view& out) {
    const char* start = p;
    if (p >= end || *p != '{') return false;
    int depth = 0;
    bool in_str = false;
    for (; p < end && *p != '\n'; ++p) {
      char c = *p;
      if (in_str) {
        if (c == '\\') ++p;
        else if (c == '"') in_str = false;
      } else if (c == '"') {
        in_str = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}' && --depth == 0) {
        ++p;
        out = std::string_view(start, size_t(p - start));
        return true;
      }
    }
    return false;
  }
};

// Parse one canonical record line [p, end) into the columns; false leaves them untouched.
bool parse_line(const char* p, const char* end, int64_t lineno, Columns& c) {
  Cursor k{p, end};
  std::string_view checkpoint, team, stage, dtype, blake3, meta;
  std::string s1, s2, s3, s4, s5;  // only filled for strings with escapes
  bool has_stage;
  int64_t token_idx, layer, step, rank, world_size, seq, numel;
  size_t shape_mark = c.shape.size(), val_mark = c.values.size();
  auto undo = [&] {
    c.shape.resize(shape_mark);
    c.values.resize(val_mark);
    return false;
  };
  if (!(k.lit("{\"checkpoint\":") && k.str(checkpoint, s1) && k.lit(",\"team\":") && k.str(team, s2) &&
        k.lit(",\"token_idx\":") && k.opt_int(token_idx) && k.lit(",\"layer\":") && k.opt_int(layer) &&
        k.lit(",\"stage\":")))
    return false;
  has_stage = !k.null();
  if (has_stage && !k.str(stage, s3)) return false;
  if (!(k.lit(",\"step\":") && k.opt_int(step) && k.lit(",\"rank\":") && k.int64(rank) && rank >= 0 &&
        k.lit(",\"world_size\":") && k.int64(world_size) && world_size >= 1 && k.lit(",\"seq\":") &&
        k.int64(seq) && seq >= 0 && k.lit(",\"dtype\":") && k.str(dtype, s4) && k.lit(",\"shape\":[")))
    return false;
  if (!k.lit("]")) {
    do {
      int64_t d;
      if (!k.int64(d) || d < 0) return undo();
      c.shape.push_back(d);
    } while (k.lit(","));
    if (!k.lit("]")) return undo();
  }
  if (!(k.lit(",\"numel\":") && k.int64(numel) && numel >= 0 && k.lit(",\"values\":["))) return undo();
  if (!k.lit("]")) {
    do {
      double v;
      if (!k.number(v)) return undo();
      c.values.push_back(v);
    } while (k.lit(","));
    if (!k.lit("]")) return undo();
  }
  double st[5];
  int64_t nan_count, inf_count;
  if (!(k.lit(",\"stats\":{\"min\":") && k.opt_number(st[0]) && k.lit(",\"max\":") && k.opt_number(st[1]) &&
        k.lit(",\"mean\":") && k.opt_number(st[2]) && k.lit(",\"rms\":") && k.opt_number(st[3]) &&
        k.lit(",\"abs_max\":") && k.opt_number(st[4]) && k.lit(",\"nan_count\":") && k.int64(nan_count) &&
        k.lit(",\"inf_count\":") && k.int64(inf_count) && k.lit("},\"blake3\":") && k.str(blake3, s5) &&
        blake3.size() == 64 && k.lit(",\"meta\":") && k.object_text(meta) && k.lit("}") && k.p == end))
    return undo();
  c.line.push_back(lineno);
  c.checkpoint.push_back(c.checkpoints.id(checkpoint));
  c.team.push_back(c.teams.id(team));
  c.stage.push_back(has_stage ? c.stages.id(stage) : -1);
  c.dtype.push_back(c.dtypes.id(dtype));
  c.token_idx.push_back(token_idx), c.layer.push_back(layer), c.step.push_back(step);
  c.rank.push_back(rank), c.world_size.push_back(world_size), c.seq.push_back(seq), c.numel.push_back(numel);
  c.shape_off.push_back(int64_t(c.shape.size()));
  c.val_off.push_back(int64_t(c.values.size()));
  c.stats.insert(c.stats.end(), st, st + 5);
  c.counts.push_back(nan_count), c.counts.push_back(inf_count);
  c.blake3.insert(c.blake3.end(), blake3.begin(), blake3.end());
  if (meta != "{}") c.meta.emplace_back(int64_t(c.line.size()) - 1, std::string(meta));
  return true;
}

// Hand a vector's storage to NumPy without copying it: the array owns the vector.
template <typename T>
py::array_t<T> to_array(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({py::ssize_t(owned->size())}, {py::ssize_t(sizeof(T))}, owned->data(), free_when_done);
}

py::dict parse_orchlog_jsonl(py::buffer buf, int64_t first_line) {
  py::buffer_info info = buf.request();
  const char* data = static_cast<const char*>(info.ptr);
  size_t size = size_t(info.size * info.itemsize);
  Columns c;
  c.reserve_for(data, size);
  std::vector<int64_t> other;  // (line, start, end) triples for Python
  int64_t lineno = first_line;
  {
    py::gil_scoped_release nogil;
    size_t pos = 0;
    while (pos < size) {
      const char* start = data + pos;
      const char* nl = static_cast<const char*>(std::memchr(start, '\n', size - pos));
      const char* stop = nl ? nl : data + size;
      bool blank = *start != '{' && std::all_of(start, stop, [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; });
      if (!blank && !parse_line(start, stop, lineno, c)) {
        other.push_back(lineno), other.push_back(int64_t(pos)), other.push_back(int64_t(stop - data));
      }
      pos = size_t(stop - data) + (nl ? 1 : 0);
      lineno += nl ? 1 : 0;
    }
  }
  py::dict d;
  d["n"] = c.line.size();
  d["lines"] = lineno - first_line;  // newlines seen: the next chunk's first line is first_line + lines
  d["line"] = to_array(std::move(c.line));
  d["checkpoint"] = to_array(std::move(c.checkpoint)), d["checkpoint_names"] = c.checkpoints.to_list();
  d["team"] = to_array(std::move(c.team)), d["team_names"] = c.teams.to_list();
  d["stage"] = to_array(std::move(c.stage)), d["stage_names"] = c.stages.to_list();
  d["dtype"] = to_array(std::move(c.dtype)), d["dtype_names"] = c.dtypes.to_list();
  d["token_idx"] = to_array(std::move(c.token_idx)), d["layer"] = to_array(std::move(c.layer)), d["step"] = to_array(std::move(c.step));
  d["rank"] = to_array(std::move(c.rank)), d["world_size"] = to_array(std::move(c.world_size)), d["seq"] = to_array(std::move(c.seq));
  d["numel"] = to_array(std::move(c.numel));
  d["shape_off"] = to_array(std::move(c.shape_off)), d["shape"] = to_array(std::move(c.shape));
  d["val_off"] = to_array(std::move(c.val_off)), d["values"] = to_array(std::move(c.values));
  d["stats"] = to_array(std::move(c.stats)), d["counts"] = to_array(std::move(c.counts));
  d["blake3"] = py::bytes(c.blake3.data(), c.blake3.size());
  py::list meta;
  for (auto& [row, text] : c.meta) meta.append(py::make_tuple(row, py::bytes(text)));
  d["meta"] = meta;
  d["other"] = to_array(std::move(other));
  return d;
}

}  // namespace

PYBIND11_MODULE(_kernels, m) {
  m.doc() = "orchlog comparer kernels (see orchlog/kernels.py for the NumPy twins)";
  m.def("pair_metrics", &pair_metrics_t<float>, py::arg("a"), py::arg("b"));
  m.def("pair_metrics", &pair_metrics_t<double>, py::arg("a"), py::arg("b"));
  m.def("abs_diff_select", &abs_diff_select_t<float>, py::arg("a"), py::arg("b"), py::arg("k"));
  m.def("abs_diff_select", &abs_diff_select_t<double>, py::arg("a"), py::arg("b"), py::arg("k"));
  m.def("parse_orchlog_jsonl", &parse_orchlog_jsonl, py::arg("buf"), py::arg("first_line"));
  m.def("prefix_diffs", &prefix_diffs, py::arg("values_a"), py::arg("offsets_a"), py::arg("rows_a"),
        py::arg("values_b"), py::arg("offsets_b"), py::arg("rows_b"));
}
