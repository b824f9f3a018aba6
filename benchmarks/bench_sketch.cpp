// What the sketch costs a C++ emitter beside the BLAKE3 hash it sits next to
// in every record: both over the same f32 tensors (896 elements, a hidden
// state; 1 MiB), and the sketch with the stats gathered in its pass (what a
// record computes), batches of calls alternating so that all see the machine
// in the same state, each keeping its fastest batch (at least 20 ms, at least
// ten batches, more until BUDGET_MS). Each sketch path is set against the
// BLAKE3 kernel of the same instruction set (portable against SSE4.1, the
// x86-64 baseline's nearest), as a CPU with only that set would run them.
// The C and Python emitters run this same header code. Prints one JSON object
// per case and kernel path:
//
//   {"case": "sketch", "path": "avx512", "elements": 896, "sketch_s": ..., "sketch_stats_s": ...,
//    "blake3_s": ..., "sketch_cpu_s": ..., "sketch_stats_cpu_s": ..., "blake3_cpu_s": ...}
//
// Times are per call, in wall-clock seconds and in thread CPU seconds (the
// latter is steadier on a shared machine).
//
//   bench_sketch [BUDGET_MS]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <orchlog/blake3.hpp>
#include <orchlog/detail/encode/sketch.hpp>

namespace {

using Clock = std::chrono::steady_clock;

double wall() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

double cpu() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class T>
inline void keep(const T& value) {
  __asm__ volatile("" : : "r"(&value) : "memory");
}

struct Best {
  double wall = 1e30, cpu = 1e30;
};

template <class F>
void batch(F& call, Best& best) {
  const double w0 = wall(), c0 = cpu();
  long calls = 0;
  while (calls == 0 || wall() - w0 < 0.020) {
    call();
    ++calls;
  }
  best.wall = std::min(best.wall, (wall() - w0) / static_cast<double>(calls));
  best.cpu = std::min(best.cpu, (cpu() - c0) / static_cast<double>(calls));
}

}  // namespace

int main(int argc, char** argv) {
  const double budget = (argc > 1 ? std::atof(argv[1]) : 1500.0) / 1000.0;
  using orchlog::detail::SketchPath;
  for (std::int64_t n : {std::int64_t{896}, std::int64_t{1} << 18}) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = std::sin(0.001f * static_cast<float>(i));
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(x.data());
    for (SketchPath path : {SketchPath::portable, SketchPath::avx2, SketchPath::avx512}) {
      if (!orchlog::detail::sketch_path_supported(path)) continue;
      auto sketch = [&] { keep(orchlog::detail::compute_sketch(path, orchlog::schema::DType::f32, bytes, n)); };
      orchlog::schema::Stats stats;
      auto sketch_stats = [&] {
        keep(orchlog::detail::compute_sketch_and_stats(path, orchlog::schema::DType::f32, bytes, n, stats));
        keep(stats);
      };
      const orchlog::Blake3Path b3 = path == SketchPath::avx512 ? orchlog::Blake3Path::avx512
                                     : path == SketchPath::avx2 ? orchlog::Blake3Path::avx2
                                                                : orchlog::Blake3Path::sse41;
      if (!orchlog::blake3_path_supported(b3)) continue;
      auto hash = [&] {
        std::uint8_t out[32];
        orchlog::blake3_hash(b3, bytes, static_cast<std::size_t>(n) * 4, out);
        keep(out);
      };
      Best s, st, h;
      const double start = wall();
      for (int b = 0; b < 10 || wall() - start < budget; ++b) {
        batch(sketch, s);
        batch(sketch_stats, st);
        batch(hash, h);
      }
      static const char* names[] = {"portable", "avx2", "avx512"};
      std::printf(
          "{\"case\": \"sketch\", \"path\": \"%s\", \"blake3_path\": \"%s\", \"elements\": %lld, "
          "\"sketch_s\": %.9g, \"sketch_stats_s\": %.9g, \"blake3_s\": %.9g, \"sketch_cpu_s\": %.9g, "
          "\"sketch_stats_cpu_s\": %.9g, \"blake3_cpu_s\": %.9g}\n",
          names[static_cast<int>(path)], std::string(orchlog::blake3_path_name(b3)).c_str(), static_cast<long long>(n),
          s.wall, st.wall, h.wall, s.cpu, st.cpu, h.cpu);
    }
  }
  return 0;
}
