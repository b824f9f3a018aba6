/* The C host of the crash and full-disk tests: log_loop.cpp through the C ABI. Logs `count`
   records (forever without an argument) of a 4 x 1024 f32 tensor whose values depend on the
   record number, then prints "done" and exits 0. */
#include <stdio.h>
#include <stdlib.h>

#include <orchlog/orchlog.h>

int main(int argc, char** argv) {
  const long count = argc > 1 ? atol(argv[1]) : -1;
  static float x[4 * 1024];
  const int64_t shape[2] = {4, 1024};
  long i;
  size_t k;
  for (i = 0; count < 0 || i < count; ++i) {
    orchlog_key key;
    key.token_idx = i;
    key.layer = (int32_t)(i % 24);
    key.step = 0;
    key.stage = "out";
    for (k = 0; k < 4 * 1024; ++k) x[k] = (float)i + (float)k * 0.001f;
    orchlog_log("hidden", x, "f32", shape, 2, &key);
  }
  puts("done");
  return 0;
}
