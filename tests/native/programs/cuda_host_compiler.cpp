// ORCHLOG_CUDA with a plain host compiler (no nvcc): the CUDA path is built
// against the runtime API headers; with no GPU every pointer is a host pointer.
#include <cstdio>
#include <vector>

#include <orchlog/orchlog.hpp>

int main() {
  std::vector<float> host(256, 1.25f);
  const bool written = orchlog::cuda::log("tensor", {host.data(), orchlog::DType::f32, {256}}, nullptr, {0});
  std::printf("%s\n", written ? "written" : "not written");
  return 0;
}
