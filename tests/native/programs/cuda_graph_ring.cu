// Logging inside a captured CUDA graph, on a GPU: a decode-like step (a
// kernel whose input changes every step) is run eagerly N times, logging its
// output at steps 0..N-1; then captured once with the log call inside
// (orchlog::cuda::start_graph_logging) and replayed N times on the same
// inputs. The graph's trace must hold N records byte-identical to the eager
// trace's, then the tally record (expected N, written N, dropped 0).
// Prints "ok NAME" / "FAIL NAME: why" lines, then "graph ring: OK"; without a
// GPU, "no CUDA device".
//
// Usage: cuda_graph_ring DIR   (writes DIR/eager.jsonl and DIR/graph.jsonl; set SOURCE_DATE_EPOCH)
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <orchlog/orchlog.hpp>

__global__ void step(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i] - 0.5f;
}

namespace {

int failures = 0;

void check(bool ok, const std::string& name, const std::string& why = "") {
  std::printf(ok ? "ok %s\n" : "FAIL %s: %s\n", name.c_str(), why.c_str());
  if (!ok) ++failures;
}

std::vector<std::string> lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
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
  const int n = 4096, steps = 64;
  float *x = nullptr, *y = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess) {
    (void)cudaGetLastError();
    std::puts("no CUDA device");
    return 0;
  }
  cudaMalloc(&y, n * sizeof(float));
  std::vector<std::vector<float>> inputs(steps, std::vector<float>(n));
  for (int k = 0; k < steps; ++k)
    for (int i = 0; i < n; ++i) inputs[k][i] = 0.001f * static_cast<float>((i * 7 + k * 13) % 1000) - 0.3f;
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  const std::string dir = argv[1];
  const orchlog::Tensor out{y, orchlog::DType::f32, {n}};

  start(dir + "/eager.jsonl");
  for (int k = 0; k < steps; ++k) {
    cudaMemcpyAsync(x, inputs[k].data(), n * sizeof(float), cudaMemcpyHostToDevice, stream);
    step<<<n / 256, 256, 0, stream>>>(x, y, n);
    orchlog::cuda::log("y", out, stream, orchlog::Key(orchlog::none, 0, orchlog::none, k));
  }
  cudaStreamSynchronize(stream);
  orchlog::close();

  start(dir + "/graph.jsonl");
  check(orchlog::cuda::start_graph_logging(), "graph logging starts");
  cudaGraph_t graph = nullptr;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  step<<<n / 256, 256, 0, stream>>>(x, y, n);
  orchlog::cuda::log("y", out, stream, orchlog::Key(orchlog::none, 0, orchlog::none, 0));
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  check(ended == cudaSuccess && graph != nullptr, "the capture with a recorded log call succeeds",
        cudaGetErrorName(ended));
  check(orchlog::cuda::capture_skips() == 0, "nothing was skipped");
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "the graph instantiates");
  for (int k = 0; k < steps; ++k) {
    cudaMemcpyAsync(x, inputs[k].data(), n * sizeof(float), cudaMemcpyHostToDevice, stream);
    cudaGraphLaunch(exec, stream);
  }
  cudaStreamSynchronize(stream);
  orchlog::cuda::stop_graph_logging();
  orchlog::close();
  check(cudaGetLastError() == cudaSuccess, "no CUDA error is left");

  const auto eager = lines(dir + "/eager.jsonl"), replayed = lines(dir + "/graph.jsonl");
  check(eager.size() == 1u + steps, "the eager trace holds every step", std::to_string(eager.size()));
  check(replayed.size() == 2u + steps, "the graph trace holds every replay and the tally",
        std::to_string(replayed.size()));
  bool same = eager.size() + 1 == replayed.size();
  for (std::size_t i = 0; same && i < eager.size(); ++i) same = eager[i] == replayed[i];
  check(same, "every replay's record is byte-identical to the eager step's");
  const std::string tally = replayed.empty() ? "" : replayed.back();
  check(tally.find("\"checkpoint\":\"orchlog.graph_records\"") != std::string::npos &&
            tally.find("\"meta\":{\"dropped\":0,\"expected\":" + std::to_string(steps) +
                       ",\"written\":" + std::to_string(steps) + "}") != std::string::npos,
        "the tally says every expected record was written", tally);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFree(y);
  cudaFree(x);
  std::puts(failures == 0 ? "graph ring: OK" : "graph ring: FAILED");
  return failures == 0 ? 0 : 1;
}
