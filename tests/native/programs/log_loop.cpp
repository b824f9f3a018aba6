// A host program for the crash and full-disk tests: logs `count` records
// (forever without an argument) of a 4 x 1024 f32 tensor whose values depend
// on the record number, then prints "done" and exits 0.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <orchlog/orchlog.hpp>

int main(int argc, char** argv) {
  const long count = argc > 1 ? std::atol(argv[1]) : -1;
  std::vector<float> x(4 * 1024);
  for (long i = 0; count < 0 || i < count; ++i) {
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(i) + static_cast<float>(k) * 0.001f;
    ORCH_LOG_AT("hidden", i, static_cast<int>(i % 24), "out", 0, x.data(), "f32", 4, 1024);
  }
  std::puts("done");
  return 0;
}
