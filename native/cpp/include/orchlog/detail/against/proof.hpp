// Whether a record is proven within tolerance of the reference's record of
// its key (ORCH_LOG_AGAINST): rel_l2 = |ours - reference| / |reference| at
// most the tolerance. Proven by equal bytes (BLAKE3 and dtype), by the whole
// tensors when the reference holds them, else by the bound the two sketches
// give (FORMAT.md, "Sketch"), computed as orchlog compare's bounds.py does
// and never looser: what the emitter passes, compare passes. Anything else
// (another shape, NaN or Inf on either side, no sketch) is not proven.
//
// Every sum is sequential in f64, in the same order as the Rust crate's
// (src/against/proof.rs), so that both decide alike and write the same bytes;
// every product is rounded before it is added (no fused multiply-add, as in
// stats.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "orchlog/detail/encode/digest.hpp"
#include "orchlog/detail/encode/stats.hpp"
#include "orchlog/detail/fields_gen.hpp"
#include "orchlog/detail/graft/convert.hpp"
#include "orchlog/detail/graft/reference.hpp"

namespace orchlog {
namespace detail {

// The lower end of the sketch's estimate band, rounded down from
// orchlog/encoding/sketch.py's ESTIMATE_BAND[0] (0.35892307...): the upper
// bound on |a - b| it gives is never below compare's.
inline constexpr double kSketchBandLow = 0.3589;
// A margin for the rounding of the two implementations' sums: the emitter
// proves a bound this much below the tolerance.
inline constexpr double kProofMargin = 1.0 + 1.0 / 1048576.0;

inline bool is_float(DType d) { return is_float_dtype(d); }

// |a - b|^2 <= t^2 |a|^2 over whole tensors of float dtypes (a: the reference).
inline bool within_by_tensors(DType ref_dtype, const unsigned char* ref, DType dtype, const unsigned char* ours,
                              std::int64_t numel, double tolerance) {
  ORCHLOG_NO_CONTRACT
  double diff2 = 0, norm2 = 0;
  for (std::int64_t i = 0; i < numel; ++i) {
    const double a = float_at(ref_dtype, ref, i);
    const double b = float_at(dtype, ours, i);
    const double d = a - b;
    double dd = d * d, aa = a * a;
    ORCHLOG_MATERIALIZE(dd);
    ORCHLOG_MATERIALIZE(aa);
    diff2 += dd;
    norm2 += aa;
  }
  if (!std::isfinite(diff2) || !std::isfinite(norm2)) return false;
  return diff2 * kProofMargin <= tolerance * tolerance * norm2;
}

// The sketch bound (bounds.py, sketch_l2 and row_slack): |a - b| <= (D + slack) / sqrt(band_low),
// with D the rows' root mean square difference and slack the rounding the stored f32 rows allow.
inline bool within_by_sketch(const ReferenceSummary& ref, const TensorDigest& ours, std::int64_t numel,
                             double tolerance) {
  ORCHLOG_NO_CONTRACT
  if (!ref.sketched || !ref.rms || !ours.stats.rms) return false;
  const std::size_t rows = ours.sketch.size();
  double d2 = 0, u_sum = 0, u2 = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const double a = ref.sketch[r], b = ours.sketch[r];
    const double d = a - b;
    const double u = std::fabs(a) + std::fabs(b);
    double dd = d * d, uu = u * u;
    ORCHLOG_MATERIALIZE(dd);
    ORCHLOG_MATERIALIZE(uu);
    d2 += dd;
    u_sum += u;
    u2 += uu;
  }
  const double n = static_cast<double>(numel);
  const double rms_a = *ref.rms, rms_b = *ours.stats.rms;
  const double chunks = std::ceil(n / 512.0);
  double growth = (chunks + 10) * std::ldexp(1.0, -53) * n * (rms_a + rms_b);
  ORCHLOG_MATERIALIZE(growth);
  const double v = std::ldexp(1.0, -148) + growth;
  const double c = std::ldexp(1.0, -23);
  const double count = static_cast<double>(rows);
  double t1 = c * c * u2 / count, t2 = 2 * c * v * u_sum / count, t3 = v * v;
  ORCHLOG_MATERIALIZE(t1);
  ORCHLOG_MATERIALIZE(t2);
  ORCHLOG_MATERIALIZE(t3);
  const double slack = std::sqrt(t1 + t2 + t3);
  const double hi = (std::sqrt(d2 / count) + slack) / std::sqrt(kSketchBandLow);
  const double norm = std::sqrt(n) * rms_a;
  if (!std::isfinite(hi) || !std::isfinite(norm)) return false;
  return hi * kProofMargin <= tolerance * norm;
}

}  // namespace detail
}  // namespace orchlog
