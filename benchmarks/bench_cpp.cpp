// What logging costs a C++ engine: the cases of the Rust crate's bench
// (native/rust/benches/emitter.rs), measured the same way, so that
// benchmarks/emitters.py can set the two emitters side by side. Prints one
// JSON object per line:
//
//   disabled      ns per ORCH_LOG_AT call with logging off at run time,
//                 against the same loop without it
//   summary/full  seconds per orchlog::log of 4 KiB, 1 MiB and LARGEST MiB
//                 f32 tensors; full mode against a plain write(2) of the same
//                 bytes to the same directory, batch by batch in turn
//   blake3        the header's BLAKE3 alone, and per kernel on the largest
//   row summary/full  one hidden-state row (896 f32, the record full mode
//                 writes most of) in summary and in full mode, each against a
//                 plain write(2) of the row's bytes, batch by batch in turn
//
// Times are wall clock; each case keeps its fastest batch of calls (at
// least 20 ms or one call, at least three batches, more until BUDGET_MS),
// the least disturbed one on a shared machine, as the Rust bench does.
//
//   bench_cpp DIR [LARGEST_MIB [BUDGET_MS]]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <orchlog/orchlog.hpp>

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Keeps the optimiser from deleting a loop body or proving a value constant (Rust's black_box).
template <class T>
inline void keep(const T& value) {
  __asm__ volatile("" : : "r"(&value) : "memory");
}

// Mean seconds per call of the fastest batch; a and b alternate batch by batch.
struct Pair {
  double a = 1e30, b = 1e30;
};

template <class A, class B>
Pair measure_pair(double budget, A a, B b) {
  const auto batch = [](auto& call) {
    const auto start = Clock::now();
    long calls = 0;
    while (calls == 0 || seconds(Clock::now() - start) < 0.020) call(calls++);
    return seconds(Clock::now() - start) / static_cast<double>(calls);
  };
  a(0);
  b(0);
  Pair best;
  const auto start = Clock::now();
  for (int batches = 0; batches < 3 || seconds(Clock::now() - start) < budget; ++batches) {
    best.a = std::min(best.a, batch(a));
    best.b = std::min(best.b, batch(b));
  }
  return best;
}

template <class A>
double measure(double budget, A a) {
  return measure_pair(budget, a, [](long) {}).a;
}

void row(const char* name, std::size_t bytes, double per_call, const char* baseline = nullptr,
         double baseline_per_call = 0) {
  std::printf("{\"case\":\"%s\",\"bytes\":%zu,\"seconds\":%.6e", name, bytes, per_call);
  if (baseline != nullptr) std::printf(",\"baseline\":\"%s\",\"baseline_seconds\":%.6e", baseline, baseline_per_call);
  std::printf("}\n");
  std::fflush(stdout);
}

void disabled_call() {
  orchlog::Options off;
  off.path = "";  // compiled in, off at run time
  orchlog::configure(off);
  const std::vector<float> values(896, 0.5f);
  constexpr long kCalls = 200000000;
  const auto time_loop = [](auto body) {
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
      const auto start = Clock::now();
      for (long i = 0; i < kCalls; ++i) body(i);
      best = std::min(best, seconds(Clock::now() - start));
    }
    return best / kCalls;
  };
  const double empty = time_loop([](long i) { keep(i); });
  const double disabled = time_loop([&](long i) {
    keep(i);
    ORCH_LOG_AT("disabled", i, 3, nullptr, orchlog::none, values.data(), "f32", 896);
  });
  row("disabled", values.size() * sizeof(float), disabled, "empty loop", empty);
}

orchlog::Options logging_to(const std::string& path, orchlog::Mode mode) {
  orchlog::Options o;
  o.path = path;
  o.mode = mode;
  o.select = "";
  return o;
}

void write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w <= 0) std::abort();
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void sizes(const std::string& dir, std::size_t largest, double budget) {
  for (std::size_t bytes : {std::size_t{4} << 10, std::size_t{1} << 20, largest}) {
    std::vector<float> values(bytes / sizeof(float));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i) * 0.001f);
    const orchlog::Tensor tensor{values.data(), orchlog::DType::f32, {static_cast<std::int64_t>(values.size())}};
    const std::string trace = dir + "/trace", plain = dir + "/plain";

    if (!orchlog::configure(logging_to(trace, orchlog::Mode::summary))) std::abort();
    row("summary", bytes, measure(budget, [&](long i) { orchlog::log("hidden", tensor, {i}); }));

    // Full mode and its baseline alternate, so that both see the same disk: the page
    // cache, write-back and the other users of the machine.
    if (!orchlog::configure(logging_to(trace, orchlog::Mode::full))) std::abort();
    const int fd = ::open(plain.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const Pair full = measure_pair(
        budget, [&](long i) { orchlog::log("hidden", tensor, {i}); },
        [&](long) { write_all(fd, values.data(), bytes); });
    ::close(fd);
    row("full", bytes, full.a, "plain write", full.b);
    if (orchlog::status().errors != 0) std::abort();
    orchlog::close();
    std::remove(trace.c_str());
    std::remove(plain.c_str());

    std::uint8_t out[32];
    row("blake3", bytes, measure(budget, [&](long) {
          orchlog::blake3_hash(orchlog::blake3_path(), values.data(), bytes, out);
          keep(out);
        }));
    if (bytes == largest) {
      for (auto path : orchlog::kAllBlake3Paths) {
        if (!orchlog::blake3_path_supported(path)) continue;
        const std::string name = "blake3 " + std::string(orchlog::blake3_path_name(path));
        row(name.c_str(), bytes, measure(0, [&](long) {
              orchlog::blake3_hash(path, values.data(), bytes, out);
              keep(out);
            }));
      }
    }
  }
}

// One hidden-state row of a 0.5B model, the record an engine logs most: what it costs beside writing it.
void hidden_row(const std::string& dir, double budget) {
  std::vector<float> values(896);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i) * 0.001f);
  const std::size_t bytes = values.size() * sizeof(float);
  const orchlog::Tensor tensor{values.data(), orchlog::DType::f32, {static_cast<std::int64_t>(values.size())}};
  const std::string trace = dir + "/trace", plain = dir + "/plain";
  for (auto [name, mode] :
       {std::pair{"row summary", orchlog::Mode::summary}, std::pair{"row full", orchlog::Mode::full}}) {
    if (!orchlog::configure(logging_to(trace, mode))) std::abort();
    const int fd = ::open(plain.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const Pair p = measure_pair(
        budget, [&](long i) { orchlog::log("hidden", tensor, {i}); },
        [&](long) { write_all(fd, values.data(), bytes); });
    ::close(fd);
    row(name, bytes, p.a, "plain write", p.b);
    orchlog::close();
    std::remove(trace.c_str());
    std::remove(plain.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_cpp DIR [LARGEST_MIB [BUDGET_MS]]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::size_t largest = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256) << 20;
  const double budget = (argc > 3 ? std::strtod(argv[3], nullptr) : 1500) / 1000;
  disabled_call();
  sizes(dir, largest, budget);
  hidden_row(dir, budget);
  return 0;
}
