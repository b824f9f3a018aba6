/* A C host of liborchlog_c's CUDA entry points (orchlog/orchlog_cuda.h) with
   a host tensor: prints what each returned and the error count. */
#include <orchlog/orchlog_cuda.h>
#include <stdio.h>

int main(void) {
  const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  const int64_t shape[1] = {4};
  const orchlog_key key = {0, 2, ORCHLOG_NONE, NULL};
  const int logged = orchlog_cuda_log("host", x, "f32", shape, 1, &key, NULL);
  float out[4] = {0};
  char why[256] = "";
  const int read = orchlog_cuda_read(x, sizeof x, NULL, out, why, sizeof why);
  printf("available=%d logged=%d read=%d skips=%llu errors=%llu why=%s\n", orchlog_cuda_available(), logged, read,
         (unsigned long long)orchlog_cuda_capture_skips(), (unsigned long long)orchlog_error_count(), why);
  orchlog_close();
  return 0;
}
