// What logging device tensors costs on a GPU, each case against its baseline
// in the same run (scripts/gpu-check.sh builds and runs it; docs/cpp.md keeps
// the figures). Prints a Markdown table.
//
// 1. One 4096 x 4096 f16 tensor in summary mode: a step that writes it, with
//    no logging, with the summary computed on the device, and with the
//    tensor copied to the host and summarized there (copy-then-hash).
//    Then each part of the device summary (stats, sketch, BLAKE3) alone.
// 2. A captured decode step of 32 layers, each writing a 4096-element f16
//    hidden state: replays of the graph with the 32 log calls recorded into
//    it (logging inside captured graphs) and without them; and, to show
//    where a recorded call's time goes, with only its parts: an empty host
//    node per layer, or the summary kernels alone.
// 3. The record ring's throughput: records written per second while the
//    step of case 2 is replayed back to back, and how many were dropped.
//
// Usage: cuda_overhead DIR (trace files go there; it needs a few hundred MB free)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <orchlog/orchlog.hpp>

namespace {

__global__ void produce(std::uint16_t* x, std::int64_t n, int salt) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    x[i] = static_cast<std::uint16_t>(0x3C00 + ((i * 31 + salt) & 0x3FF));  // f16 in [1, 2)
}

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void start(const std::string& path) {
  orchlog::Options o;
  o.path = path;
  o.mode = orchlog::Mode::summary;
  orchlog::configure(o);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device");
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("GPU: %s; CUDA driver API %d, runtime %d\n\n", prop.name, driver, runtime);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);

  // 1. One big tensor: median of 15 steps per variant, variants taking turns.
  const std::int64_t big = 4096LL * 4096;
  std::uint16_t* t = nullptr;
  cudaMalloc(&t, big * 2);
  const orchlog::Tensor tensor{t, orchlog::DType::f16, {4096, 4096}};
  std::vector<double> none, on_device, copied;
  start(dir + "/big.jsonl");
  for (int round = 0; round < 16; ++round) {
    for (int variant = 0; variant < 3; ++variant) {
      const auto t0 = Clock::now();
      produce<<<1024, 256, 0, stream>>>(t, big, round);
      if (variant > 0) {
        orchlog::cuda::use_device_summaries(variant == 1);
        orchlog::cuda::log("big", tensor, stream, orchlog::Key{round});
      }
      cudaStreamSynchronize(stream);
      if (round > 0) (variant == 0 ? none : variant == 1 ? on_device : copied).push_back(ms_since(t0));
    }
  }
  orchlog::cuda::use_device_summaries(true);
  orchlog::close();
  std::printf("| case | baseline | with logging | ratio |\n|---|---:|---:|---:|\n");
  std::printf("| 4096x4096 f16, summary on the device | %.2f ms (no logging) | %.2f ms | %.1fx |\n", median(none),
              median(on_device), median(on_device) / median(none));
  std::printf("| 4096x4096 f16, copy-then-hash | %.2f ms (no logging) | %.2f ms | %.1fx |\n", median(none),
              median(copied), median(copied) / median(none));
  std::printf("| 4096x4096 f16: device summary against copy-then-hash | %.2f ms | %.2f ms | %.2fx |\n", median(copied),
              median(on_device), median(on_device) / median(copied));

  // 1b. Where a device summary's time goes: each part alone on the same tensor, timed by events.
  {
    namespace dev = orchlog::detail::device;
    const dev::Elements e{reinterpret_cast<const std::uint8_t*>(t), decltype(dev::Elements::dtype)::f16, big};
    dev::Summary* out = nullptr;
    void* scratch = nullptr;
    cudaMalloc(&out, sizeof(dev::Summary));
    cudaMalloc(&scratch, dev::scratch_bytes(big, big * 2));
    cudaEvent_t from, to;
    cudaEventCreate(&from);
    cudaEventCreate(&to);
    const char* names[3] = {"stats (8 chains of 2M f64 additions)", "sketch", "BLAKE3"};
    for (int part = 0; part < 3; ++part) {
      std::vector<double> ms;
      for (int round = 0; round < 6; ++round) {
        cudaEventRecord(from, stream);
        if (part == 0) dev::enqueue_stats(e, out, stream);
        if (part == 1) dev::enqueue_sketch(e, out, scratch, stream);
        if (part == 2) dev::enqueue_blake3(e, big * 2, out, scratch, stream);
        cudaEventRecord(to, stream);
        cudaEventSynchronize(to);
        float elapsed = 0;
        cudaEventElapsedTime(&elapsed, from, to);
        if (round > 0) ms.push_back(elapsed);
      }
      std::printf("| 4096x4096 f16, device summary part: %s | | %.2f ms | |\n", names[part], median(ms));
    }
    cudaEventDestroy(from);
    cudaEventDestroy(to);
    cudaFree(scratch);
    cudaFree(out);
  }

  // 2. A captured step of 32 layers, with and without the log calls recorded into it.
  const int layers = 32, hidden = 4096, replays = 200;
  std::uint16_t* h = nullptr;
  cudaMalloc(&h, static_cast<std::size_t>(layers) * hidden * 2);
  // Variants: no log calls; what a log call records, alone: its host node, its summary kernels;
  // the log calls themselves. Replayed in turn.
  enum Variant { kPlain, kHostNodes, kSummaries, kLogged, kVariants };
  const char* variant_names[kVariants] = {"no log calls",
                                          "32 empty host nodes (what each log call's wakes the writer with)",
                                          "32 device summaries, no ring", "32 log calls in the graph"};
  cudaGraphExec_t execs[kVariants] = {};
  namespace dev = orchlog::detail::device;
  void* scratch = nullptr;
  const std::size_t summary_at = (dev::scratch_bytes(hidden, hidden * 2) + 255) / 256 * 256;
  cudaMalloc(&scratch, summary_at + sizeof(dev::Summary));
  auto* summary = reinterpret_cast<dev::Summary*>(static_cast<unsigned char*>(scratch) + summary_at);
  start(dir + "/graph.jsonl");
  orchlog::cuda::GraphRing ring;
  ring.slots = 4096;
  orchlog::cuda::start_graph_logging(ring);
  for (int v = 0; v < kVariants; ++v) {
    cudaGraph_t graph = nullptr;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    for (int l = 0; l < layers; ++l) {
      std::uint16_t* layer = h + static_cast<std::size_t>(l) * hidden;
      produce<<<16, 256, 0, stream>>>(layer, hidden, l);
      if (v == kHostNodes) cudaLaunchHostFunc(stream, [](void*) {}, nullptr);
      if (v == kSummaries)
        dev::enqueue_summary(
            {reinterpret_cast<const std::uint8_t*>(layer), decltype(dev::Elements::dtype)::f16, hidden}, hidden * 2,
            summary, scratch, stream);
      if (v == kLogged)
        orchlog::cuda::log("hidden", {layer, orchlog::DType::f16, {hidden}}, stream,
                           orchlog::Key(orchlog::none, l, orchlog::none, 0));
    }
    cudaStreamEndCapture(stream, &graph);
    cudaGraphInstantiate(&execs[v], graph, 0);
    cudaGraphDestroy(graph);
  }
  std::vector<double> step_ms[kVariants];
  for (int r = 0; r < replays; ++r) {
    for (int v = 0; v < kVariants; ++v) {
      const auto t0 = Clock::now();
      cudaGraphLaunch(execs[v], stream);
      cudaStreamSynchronize(stream);
      step_ms[v].push_back(ms_since(t0));
    }
  }
  for (int v = kHostNodes; v < kVariants; ++v)
    std::printf("| captured step, 32 layers x 4096 f16: %s | %.3f ms (no log calls) | %.3f ms | %.1fx |\n",
                variant_names[v], median(step_ms[kPlain]), median(step_ms[v]),
                median(step_ms[v]) / median(step_ms[kPlain]));
  const cudaGraphExec_t logged = execs[kLogged];

  // 3. Ring throughput: replays back to back, the writer draining behind them.
  const auto t0 = Clock::now();
  for (int r = 0; r < replays; ++r) cudaGraphLaunch(logged, stream);
  cudaStreamSynchronize(stream);
  orchlog::cuda::stop_graph_logging();  // waits for the writer to finish
  const double seconds = ms_since(t0) / 1000;
  const std::uint64_t records = static_cast<std::uint64_t>(replays) * (replays > 0 ? layers : 0);
  std::printf("| ring: %llu records from %d back-to-back replays | | %.0f records/s | |\n",
              static_cast<unsigned long long>(records), replays, static_cast<double>(records) / seconds);
  std::printf("\nerrors counted by orchlog (drops included): %llu\n",
              static_cast<unsigned long long>(orchlog::status().errors));
  orchlog::close();
  for (cudaGraphExec_t exec : execs) cudaGraphExecDestroy(exec);
  cudaFree(scratch);
  cudaFree(h);
  cudaFree(t);
  cudaStreamDestroy(stream);
  return 0;
}
