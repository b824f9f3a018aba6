// orchlog._kernels: the `orchlog` command keeps the heap memory it frees, for the next batch to reuse.
// Included once, by module.cpp.
//
// A compare frees and allocates the same few sizes over and over (a window's decoded columns, a round's
// sketch and metric columns, 1-16 MiB each). glibc's malloc maps such blocks afresh or trims its heap
// back to the kernel as soon as a little is free at its top, so each new block is fresh pages: the
// kernel zeroes them on their first touch, and on a VM whose host took the freed memory back the host
// backs each page again first. Fixed thresholds (blocks under `mmap_threshold` come from the heap, and
// up to `trim_threshold` free at its top stays there) turn that into reuse. It is for the command's own
// process only (the CLI asks for it); a library caller's allocator is its own.
#pragma once

#include <climits>
#include <cstdint>
#include <stdexcept>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace orchlog_kernels {

// True where the C library took both thresholds (glibc); false where it has no such knobs.
inline bool keep_freed_memory(int64_t mmap_threshold, int64_t trim_threshold) {
  if (mmap_threshold < 0 || mmap_threshold > INT_MAX || trim_threshold < 0 || trim_threshold > INT_MAX)
    throw std::invalid_argument("keep_freed_memory: thresholds are 0 to 2 GiB - 1 bytes");
#if defined(__GLIBC__)
  return ::mallopt(M_MMAP_THRESHOLD, int(mmap_threshold)) == 1 && ::mallopt(M_TRIM_THRESHOLD, int(trim_threshold)) == 1;
#else
  return false;
#endif
}

}  // namespace orchlog_kernels
