// Speed of the C++ emitter, each figure next to a baseline measured in the
// same run. Built and run by benchmarks/cpp_emitter.py; prints one JSON object.
//
//   disabled: ns per ORCH_LOG call with logging off at run time, and per
//             iteration of the same loop without it
//   modes:    records/s and GB/s of orchlog::log in summary and full mode
//   write:    the full-mode write path alone (frame prefix + tensor by writev)
//             against fwrite of the same bytes to the same directory
//   blake3:   GB/s of each kernel path on the largest tensor
//
// Times are CPU time of the measuring thread (user + system): the machines
// these run on are shared, and wall time would mostly measure the neighbours.
// Logging is synchronous on the calling thread, so nothing is missed.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <orchlog/orchlog.hpp>

namespace {

double cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double seconds_since(double t0) { return cpu_now() - t0; }

// Keeps the optimiser from deleting a loop body without adding any work.
inline void keep(const void* p) { __asm__ volatile("" : : "r"(p) : "memory"); }

std::vector<float> activations(std::size_t n) {
  std::vector<float> v(n);
  std::uint64_t s = 0x9E3779B97F4A7C15ull;
  for (auto& x : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x = static_cast<float>(static_cast<std::int64_t>(s % 2000001) - 1000000) * 1e-6f;
  }
  return v;
}

orchlog::Options options(const std::string& path, orchlog::Mode mode) {
  orchlog::Options o;
  o.path = path;
  o.team = "bench";
  o.values = 10;
  o.mode = mode;
  o.select = "";
  return o;
}

// Best of `reps` timings of `body`, each run `inner` times; seconds per inner run.
template <class F>
double best_time(int reps, long inner, F body) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = cpu_now();
    for (long i = 0; i < inner; ++i) body(i);
    best = std::min(best, seconds_since(t0) / static_cast<double>(inner));
  }
  return best;
}

void disabled_calls(std::string& json) {
  orchlog::configure(options("", orchlog::Mode::summary));  // compiled in, off at run time
  const float x[4] = {1, 2, 3, 4};
  const long n = 200000000;
  const double empty = best_time(3, 1, [&](long) {
    for (long i = 0; i < n; ++i) keep(x);
  }) / static_cast<double>(n);
  const double off = best_time(3, 1, [&](long) {
    for (long i = 0; i < n; ++i) {
      keep(x);
      ORCH_LOG_TOKEN("attn_norm", i, x, "f32", 4);
    }
  }) / static_cast<double>(n);
  json += "\"disabled\":{\"empty_loop_ns\":" + std::to_string(empty * 1e9) + ",\"disabled_call_ns\":" +
          std::to_string(off * 1e9) + "},";
}

void modes(std::string& json, const std::string& dir, const std::vector<float>& big) {
  json += "\"modes\":[";
  bool first = true;
  for (std::size_t bytes : {std::size_t{4} << 10, std::size_t{1} << 20, big.size() * sizeof(float)}) {
    const std::int64_t n = static_cast<std::int64_t>(bytes / sizeof(float));
    const long count = bytes <= (4u << 10) ? 20000 : bytes <= (1u << 20) ? 100 : 1;
    for (orchlog::Mode mode : {orchlog::Mode::summary, orchlog::Mode::full}) {
      const std::string path = dir + "/bench-" + std::string(orchlog::detail::mode_name(mode));
      double best = 1e30;
      for (int rep = 0; rep < 3; ++rep) {
        orchlog::configure(options(path, mode));  // truncates: every repetition writes the same amount
        const double t0 = cpu_now();
        for (long i = 0; i < count; ++i) orchlog::log("hidden", {big.data(), orchlog::DType::f32, {n}}, {i});
        best = std::min(best, seconds_since(t0) / static_cast<double>(count));
        orchlog::close();
      }
      std::remove(path.c_str());
      json += std::string(first ? "" : ",") + "{\"bytes\":" + std::to_string(bytes) + ",\"mode\":\"" +
              std::string(orchlog::detail::mode_name(mode)) + "\",\"records_per_s\":" + std::to_string(1.0 / best) +
              ",\"gb_per_s\":" + std::to_string(static_cast<double>(bytes) / best / 1e9) + "}";
      first = false;
    }
  }
  json += "],";
}

void write_path(std::string& json, const std::string& dir, const std::vector<float>& big) {
  const std::size_t bytes = big.size() * sizeof(float);
  const std::string path = dir + "/bench-write";
  // The record a full-mode log writes, minus the hashing: its prefix and the tensor.
  orchlog::RecordInput in;
  in.checkpoint = "hidden";
  in.tensor = {big.data(), orchlog::DType::f32, {static_cast<std::int64_t>(big.size())}};
  std::string why;
  orchlog::detail::TensorSize size = *orchlog::detail::measure(in.tensor, why);
  orchlog::detail::RecordParts parts;
  parts.checkpoint = in.checkpoint;
  parts.tensor = &in.tensor;
  parts.size = size;
  parts.summary = orchlog::detail::summarize(in.tensor, size);
  const orchlog::schema::RecordView view = orchlog::detail::record_view(parts, {});
  std::string prefix;
  const orchlog::schema::BytesView data = orchlog::detail::append_frame_prefix(prefix, view);

  double writev_best = 1e30, fwrite_best = 1e30;
  for (int rep = 0; rep < 4; ++rep) {  // alternate, so both see the same disk and cache state
    {
      orchlog::detail::FileSink sink;
      sink.open(path, why);
      const double t0 = cpu_now();
      sink.write(prefix.data(), prefix.size(), data.data, data.size, why);
      writev_best = std::min(writev_best, seconds_since(t0));
    }
    std::remove(path.c_str());
    {
      std::FILE* f = std::fopen(path.c_str(), "wb");
      const double t0 = cpu_now();
      std::fwrite(prefix.data(), 1, prefix.size(), f);
      std::fwrite(data.data, 1, data.size, f);
      std::fflush(f);
      fwrite_best = std::min(fwrite_best, seconds_since(t0));
      std::fclose(f);
    }
    std::remove(path.c_str());
  }
  json += "\"write\":{\"bytes\":" + std::to_string(bytes) + ",\"writev_gb_per_s\":" +
          std::to_string(static_cast<double>(bytes) / writev_best / 1e9) + ",\"fwrite_gb_per_s\":" +
          std::to_string(static_cast<double>(bytes) / fwrite_best / 1e9) + "},";
}

void blake3_paths(std::string& json, const std::vector<float>& big) {
  json += "\"blake3\":{";
  bool first = true;
  for (auto path : orchlog::kAllBlake3Paths) {
    if (!orchlog::blake3_path_supported(path)) continue;
    std::uint8_t out[32];
    const double t = best_time(3, 1, [&](long) {
      orchlog::blake3_hash(path, big.data(), big.size() * sizeof(float), out);
      keep(out);
    });
    json += std::string(first ? "" : ",") + "\"" + std::string(orchlog::blake3_path_name(path)) +
            "\":" + std::to_string(static_cast<double>(big.size() * sizeof(float)) / t / 1e9);
    first = false;
  }
  json += "}";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  const std::size_t big_bytes = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256) << 20;
  const std::vector<float> big = activations(big_bytes / sizeof(float));
  std::string json = "{";
  disabled_calls(json);
  modes(json, dir, big);
  write_path(json, dir, big);
  blake3_paths(json, big);
  json += "}";
  std::puts(json.c_str());
  return 0;
}
