// ORCHLOG_HD marks a function that nvcc compiles for the host and the device
// alike (the summaries computed on the GPU and their CPU twin are one source);
// any other compiler sees a plain function.
#pragma once

#if defined(__CUDACC__)
#define ORCHLOG_HD __host__ __device__
#else
#define ORCHLOG_HD
#endif

// Unrolls the loop that follows in device code only (where an array indexed by
// the loop's counter then stays in registers); host compilers do not know the
// pragma.
#if defined(__CUDA_ARCH__)
#define ORCHLOG_DEVICE_UNROLL _Pragma("unroll")
#else
#define ORCHLOG_DEVICE_UNROLL
#endif
