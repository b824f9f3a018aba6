/* orchlog C ABI: record tensors from C engines (liborchlog_c).
 *
 *   #include <orchlog/orchlog.h>
 *   int64_t shape[2] = {n_tokens, 896};
 *   orchlog_key key = {token_idx, ORCHLOG_NONE, ORCHLOG_NONE, NULL};
 *   orchlog_log("attn_norm", x, "f32", shape, 2, &key);
 *
 * Configured by the same ORCH_LOG_* env knobs as every orchlog emitter (or
 * orchlog_configure). No function ever aborts the host: failures print one
 * warning on stderr, count an error and, for failed writes, turn logging off.
 * Strings are UTF-8 (invalid bytes are written as U+FFFD).
 */
#ifndef ORCHLOG_H
#define ORCHLOG_H

/* FFI generators (cffi, bindgen) read this header through the preprocessor
   with ORCHLOG_CDEF_ONLY defined, which leaves plain declarations. */
#ifndef ORCHLOG_CDEF_ONLY
#include <stddef.h>
#include <stdint.h>
#endif

#if defined(ORCHLOG_C_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#define ORCHLOG_C_API __attribute__((visibility("default")))
#else
#define ORCHLOG_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A key field or count that means "none" / "all values". */
#define ORCHLOG_NONE (-1)
#define ORCHLOG_ALL_VALUES (-1)

/* Where a record was taken. Negative numbers and a NULL stage mean none. */
typedef struct orchlog_key {
  int64_t token_idx;
  int32_t layer;
  int32_t step;
  const char* stage;
} orchlog_key;

enum { ORCHLOG_META_BOOL = 0, ORCHLOG_META_INT = 1, ORCHLOG_META_REAL = 2, ORCHLOG_META_TEXT = 3 };

/* One free-form scalar: `kind` says which of i (BOOL: 0 or 1, INT), f, s holds it. */
typedef struct orchlog_meta {
  const char* key;
  int32_t kind;
  int64_t i;
  double f;
  const char* s;
} orchlog_meta;

/* orchlog_configure settings, as text parsed exactly like the env knob of
   the same name; a NULL field is taken from that knob. */
typedef struct orchlog_options {
  const char* path;           /* ORCH_LOG_FILE; "" turns logging off */
  const char* team;           /* ORCH_LOG_TEAM */
  const char* values;         /* ORCH_LOG_VALUES: a count or "all" */
  const char* mode;           /* ORCH_LOG_MODE: summary, full or both */
  const char* select;         /* ORCH_LOG_SELECT */
  const char* rank;           /* ORCH_LOG_RANK */
  const char* world_size;     /* ORCH_LOG_WORLD_SIZE */
  const char* model;          /* ORCH_LOG_MODEL */
  const char* git_commit;     /* ORCH_LOG_GIT_COMMIT */
  const orchlog_meta* config; /* the run header's `config`, n_config entries (no knob: NULL is none) */
  size_t n_config;
} orchlog_options;

/* Starts a new run (options may be NULL: env knobs only). Returns 1 when logging is on. */
ORCHLOG_C_API int orchlog_configure(const orchlog_options* options);

/* Records `ndim` dims of `dtype` ("f32", "f16", "bf16", "f64", "i8", "u8",
   "i32", "i64" or an alias) at `data`, C-contiguous little-endian host
   memory. `key` may be NULL. Returns 1 when the record was written. */
ORCHLOG_C_API int orchlog_log(const char* checkpoint, const void* data, const char* dtype, const int64_t* shape,
                              size_t ndim, const orchlog_key* key);
ORCHLOG_C_API int orchlog_log_meta(const char* checkpoint, const void* data, const char* dtype, const int64_t* shape,
                                   size_t ndim, const orchlog_key* key, const orchlog_meta* meta, size_t n_meta);

ORCHLOG_C_API int orchlog_enabled(void);
ORCHLOG_C_API int orchlog_flush(void); /* 1 when the records are on disk */
ORCHLOG_C_API void orchlog_close(void);
ORCHLOG_C_API uint64_t orchlog_error_count(void);
ORCHLOG_C_API int64_t orchlog_record_count(void);
ORCHLOG_C_API const char* orchlog_version(void);

/* ---- the canonical encoder (conformance tests, tools) ---- */

typedef struct orchlog_bytes {
  char* data;
  size_t size;
} orchlog_bytes;

typedef struct orchlog_record_input {
  const char* checkpoint; /* raw bytes, checkpoint_len of them */
  size_t checkpoint_len;
  const char* team;
  orchlog_key key;
  int32_t rank;
  int32_t world_size;
  int64_t seq;
  const void* data;
  const char* dtype;
  const int64_t* shape;
  size_t ndim;
  int64_t values; /* leading values kept; ORCHLOG_ALL_VALUES keeps all */
  const orchlog_meta* meta;
  size_t n_meta;
} orchlog_record_input;

typedef struct orchlog_header_input {
  const char* language; /* producer.language: "c", "cpp", "rust", "python" */
  const char* created;
  const char* team;
  const char* model;      /* NULL: null */
  const char* git_commit; /* NULL: null */
  int32_t rank;
  int32_t world_size;
  int32_t values;
  const char* select; /* NULL: null */
  const orchlog_meta* config;
  size_t n_config;
} orchlog_header_input;

/* Fill *jsonl (one line with its newline) and *frame (one msgpack map); free
   both with orchlog_bytes_free. Return 1, or 0 for a malformed input. */
ORCHLOG_C_API int orchlog_encode_record(const orchlog_record_input* in, orchlog_bytes* jsonl, orchlog_bytes* frame);
ORCHLOG_C_API int orchlog_encode_header(const orchlog_header_input* in, orchlog_bytes* jsonl, orchlog_bytes* frame);
ORCHLOG_C_API void orchlog_bytes_free(orchlog_bytes* bytes);

/* The 64 hex digits of BLAKE3(data), NUL-terminated. */
ORCHLOG_C_API void orchlog_blake3_hex(const void* data, size_t len, char out[65]);

#ifdef __cplusplus
}
#endif

#endif /* ORCHLOG_H */
