// cos(a, b) from |a|², |b|² and |a-b|², as orchlog/compare/measuring/tensor_metrics.py's cosine_from_sums has it.
#pragma once

#include <algorithm>
#include <cmath>

namespace orchlog_kernels {

// a·b = (|a|² + |b|² - |a-b|²) / 2 loses nothing when a and b are close. Equal squared norms make
// the norms' product |a|² itself, not sqrt(|a|²)² rounded, so identical tensors read exactly 1
// whatever order their sums were added in.
inline double cosine_from_sums(double a2, double b2, double d2) {
  if (a2 == 0 || b2 == 0) return a2 == b2 ? 1.0 : 0.0;
  const double norms = a2 == b2 ? a2 : std::sqrt(a2) * std::sqrt(b2);
  return std::min(1.0, std::max(-1.0, (a2 + b2 - d2) / (2.0 * norms)));
}

}  // namespace orchlog_kernels
