// The summary kernels against their CPU twin, on a GPU: for every record
// vector's tensor and random tensors of every dtype, the Summary the device
// computes must equal the twin's bit for bit (the twin equals the host
// emitters', test_device_summary_twin.cpp); and the logger's records of
// device tensors in summary mode must be byte-identical with device summaries
// and with copy-then-hash. Prints "ok NAME" / "FAIL NAME: why" lines, then
// "summaries: OK"; without a GPU, "no CUDA device".
//
// Usage: cuda_summary DIR   (writes DIR/device.jsonl and DIR/host.jsonl)
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <orchlog/detail/device/kernels.hpp>
#include <orchlog/orchlog.hpp>

#include "support/vectors.hpp"

namespace dev = orchlog::detail::device;
using orchlog::DType;

namespace {

int failures = 0;

void check(bool ok, const std::string& name, const std::string& why = "") {
  std::printf(ok ? "ok %s\n" : "FAIL %s: %s\n", name.c_str(), why.c_str());
  if (!ok) ++failures;
}

// The device's Summary of `bytes` (copied onto the device first).
bool device_summary(const std::vector<unsigned char>& bytes, DType dtype, std::int64_t numel, dev::Summary& out) {
  void* data = nullptr;
  void* scratch = nullptr;
  dev::Summary* summary = nullptr;
  const std::size_t size = bytes.empty() ? 1 : bytes.size();
  bool ok = cudaMalloc(&data, size) == cudaSuccess &&
            cudaMalloc(&scratch, dev::scratch_bytes(numel, bytes.size())) == cudaSuccess &&
            cudaMalloc(reinterpret_cast<void**>(&summary), sizeof(dev::Summary)) == cudaSuccess;
  ok = ok && cudaMemcpy(data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice) == cudaSuccess;
  const dev::Elements e{static_cast<const std::uint8_t*>(data), dtype, numel};
  ok = ok && dev::enqueue_summary(e, bytes.size(), summary, scratch, nullptr) == cudaSuccess;
  ok = ok && cudaMemcpy(&out, summary, sizeof out, cudaMemcpyDeviceToHost) == cudaSuccess;
  cudaFree(summary);
  cudaFree(scratch);
  cudaFree(data);
  return ok;
}

void compare(const std::string& name, const std::vector<unsigned char>& bytes, DType dtype, std::int64_t numel) {
  dev::Summary on_device{};
  if (!device_summary(bytes, dtype, numel, on_device)) {
    check(false, name, cudaGetErrorString(cudaGetLastError()));
    return;
  }
  const dev::Elements e{bytes.data(), dtype, numel};
  const dev::Summary twin = dev::summarize_twin(e, bytes.size());
  check(std::memcmp(&on_device, &twin, sizeof twin) == 0, name, "the device's Summary differs from the twin's");
}

std::vector<unsigned char> random_tensor(DType dtype, std::int64_t numel, std::mt19937_64& rng) {
  const auto size = orchlog::schema::dtype_size(dtype);
  std::vector<unsigned char> bytes(size * static_cast<std::size_t>(numel));
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    const std::uint64_t bits = rng();
    std::memcpy(bytes.data() + i, &bits, std::min<std::size_t>(8, bytes.size() - i));
  }
  return bytes;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    std::puts("no CUDA device");
    return 0;
  }
  const orchlog_test::Json doc = orchlog_test::load_vectors("records.json");
  for (const auto& c : orchlog_test::record_cases(doc)) {
    std::vector<unsigned char> bytes(c->data.begin(), c->data.end());
    std::int64_t numel = 1;
    for (std::int64_t d : c->shape) numel *= d;
    compare("vector " + c->name, bytes, c->input.tensor.dtype, numel);
  }
  std::mt19937_64 rng(31);
  const DType dtypes[] = {DType::f32, DType::f16, DType::bf16, DType::f64,
                          DType::i8,  DType::u8,  DType::i32,  DType::i64};
  const std::int64_t sizes[] = {0,   1,   7,    8,    9,     511,
                                512, 513, 1025, 4611, 70001, 2 * dev::kSketchSlab * dev::kChunk + 5};
  std::vector<std::vector<unsigned char>> logged;
  for (DType dtype : dtypes)
    for (std::int64_t numel : sizes) {
      logged.push_back(random_tensor(dtype, numel, rng));
      compare(std::string("random ") + std::string(orchlog::schema::dtype_name(dtype)) + " x " + std::to_string(numel),
              logged.back(), dtype, numel);
    }
  const std::int64_t big = 4096 * 4096;
  logged.push_back(random_tensor(DType::f16, big, rng));
  compare("random f16 4096 x 4096", logged.back(), DType::f16, big);

  // The logger's records: device summaries, then copy-then-hash, of the same device tensors.
  const std::string dir = argv[1];
  for (const bool on_device : {true, false}) {
    orchlog::Options o;
    o.path = dir + (on_device ? "/device.jsonl" : "/host.jsonl");
    o.mode = orchlog::Mode::summary;
    orchlog::configure(o);
    orchlog::cuda::use_device_summaries(on_device);
    std::size_t k = 0;
    for (DType dtype : dtypes)
      for (std::int64_t numel : sizes) {
        const std::vector<unsigned char>& bytes = logged[k++];
        void* data = nullptr;
        cudaMalloc(&data, bytes.empty() ? 1 : bytes.size());
        cudaMemcpy(data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
        orchlog::cuda::log("t", {data, dtype, {numel}}, nullptr, orchlog::Key{static_cast<std::int64_t>(k)});
        cudaFree(data);
      }
    orchlog::close();
  }
  const std::string device = read(dir + "/device.jsonl"), host = read(dir + "/host.jsonl");
  check(!device.empty() && device == host,
        "records of device tensors: device summaries == copy-then-hash, byte for byte");
  check(cudaGetLastError() == cudaSuccess, "no CUDA error is left");
  std::puts(failures == 0 ? "summaries: OK" : "summaries: FAILED");
  return failures == 0 ? 0 : 1;
}
