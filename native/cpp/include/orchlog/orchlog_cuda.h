/* orchlog C ABI for tensors in CUDA device memory (liborchlog_c built with
 * -DORCHLOG_C_CUDA=ON). C engines log device tensors with orchlog_cuda_log;
 * engines with an emitter of their own (the Rust crate's feature `cuda`) read
 * them with orchlog_cuda_read and write the record themselves.
 *
 *   int64_t shape[2] = {n_tokens, 896};
 *   orchlog_key key = {token_idx, 3, ORCHLOG_NONE, NULL};
 *   orchlog_cuda_log("attn_out", d_x, "f16", shape, 2, &key, stream);  // stream: a cudaStream_t
 *
 * The rules of ORCH_LOG_CUDA (docs/cpp.md, "CUDA"): the tensor is read after
 * the work queued on `stream` (NULL: the legacy default stream; pass
 * cudaStreamPerThread, (void*)2, for the per-thread one); a capturing stream
 * is never touched (the record is skipped, warned once and counted); an
 * error the engine has not read is left for it; host pointers are read as
 * they are. A library built without CUDA refuses device tensors: its
 * orchlog_cuda_log logs nothing (one warning, counted) and orchlog_cuda_read
 * returns ORCHLOG_CUDA_REFUSED.
 */
#ifndef ORCHLOG_CUDA_H
#define ORCHLOG_CUDA_H

#include "orchlog/orchlog.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when liborchlog_c was built with CUDA. */
ORCHLOG_C_API int orchlog_cuda_available(void);

/* orchlog_log and orchlog_log_named for a tensor that may be in device memory: 1 when written. */
ORCHLOG_C_API int orchlog_cuda_log(const char* checkpoint, const void* data, const char* dtype, const int64_t* shape,
                                   size_t ndim, const orchlog_key* key, void* stream);
ORCHLOG_C_API int orchlog_cuda_log_named(const char* checkpoint, const void* data, const char* dtype,
                                         const int64_t* shape, size_t ndim, const orchlog_key* key,
                                         const orchlog_named_parts* parts, const orchlog_meta* meta, size_t n_meta,
                                         void* stream);

/* orchlog_cuda_read's answers. */
#define ORCHLOG_CUDA_HOST 0       /* `data` is host memory: read it there; nothing was copied */
#define ORCHLOG_CUDA_COPIED 1     /* `data` is device memory; its `nbytes` are now in `out` */
#define ORCHLOG_CUDA_REFUSED (-1) /* not read: `why` (NUL-terminated, cut to why_len) says why */

/* The `nbytes` at `data`, after the work queued on `stream`, into `out` (room
   for nbytes) when they are in device memory. */
ORCHLOG_C_API int orchlog_cuda_read(const void* data, size_t nbytes, void* stream, void* out, char* why,
                                    size_t why_len);

/* Device tensors not logged (or read) because their stream was capturing a CUDA graph. */
ORCHLOG_C_API uint64_t orchlog_cuda_capture_skips(void);

#ifdef __cplusplus
}
#endif

#endif /* ORCHLOG_CUDA_H */
