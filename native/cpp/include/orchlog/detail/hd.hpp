// ORCHLOG_HD marks a function that nvcc compiles for the host and the device
// alike (the summaries computed on the GPU and their CPU twin are one source);
// any other compiler sees a plain function.
#pragma once

#if defined(__CUDACC__)
#define ORCHLOG_HD __host__ __device__
#else
#define ORCHLOG_HD
#endif
