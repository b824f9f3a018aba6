/* Logs every tensor of a cross-language tensor file through the C ABI
 * (orchlog/orchlog.h, liborchlog_c), so that its output can be compared byte
 * for byte with the other emitters'. tests/crosslang/c_producer.py turns the
 * JSON file into the token stream this reads on stdin (its docstring has the
 * grammar); a `graft` entry is grafted (orchlog_graft_named) rather than
 * logged. The env knobs decide where and how; the stream's config becomes
 * the run header's. Exits 1 when the logger counted an error, as the other
 * producers do.
 *
 * Key numbers arrive as decimal text. A C engine holds them in the key's own
 * types (int64_t token_idx and token_id, int32_t for the others), where a value
 * beyond them cannot exist; such a value is passed as ORCHLOG_NONE, which is
 * what the other emitters write for it. */
#include <errno.h>
#include <orchlog/orchlog.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char* why) {
  fprintf(stderr, "cross_language.c: %s\n", why);
  exit(2);
}

/* The next whitespace-separated token of stdin (malloc'd), or NULL at the end. */
static char* next_token(void) {
  size_t cap = 64, n = 0;
  char* out;
  int c;
  do {
    c = getchar();
  } while (c == ' ' || c == '\n');
  if (c == EOF) return NULL;
  out = malloc(cap);
  if (out == NULL) die("out of memory");
  while (c != EOF && c != ' ' && c != '\n') {
    if (n + 1 == cap) {
      cap *= 2;
      out = realloc(out, cap);
      if (out == NULL) die("out of memory");
    }
    out[n++] = (char)c;
    c = getchar();
  }
  out[n] = '\0';
  return out;
}

static char* expect_token(void) {
  char* tok = next_token();
  if (tok == NULL) die("the stream ends early");
  return tok;
}

static void expect_word(const char* word) {
  char* tok = expect_token();
  if (strcmp(tok, word) != 0) die("unexpected token");
  free(tok);
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  die("bad hex digit");
  return 0;
}

/* `x` + hex: the bytes, NUL-terminated, at memory aligned for any element type. */
static char* bytes_of(const char* tok, size_t* len) {
  size_t i, n;
  char* out;
  if (tok[0] != 'x') die("text must start with x");
  n = strlen(tok + 1) / 2;
  out = malloc(n + 1);
  if (out == NULL) die("out of memory");
  for (i = 0; i < n; ++i) out[i] = (char)(hex_digit(tok[1 + 2 * i]) * 16 + hex_digit(tok[2 + 2 * i]));
  out[n] = '\0';
  if (len != NULL) *len = n;
  return out;
}

static char* text_token(void) {
  char* tok = expect_token();
  char* text = bytes_of(tok, NULL);
  free(tok);
  return text;
}

/* A key number, or ORCHLOG_NONE when absent, negative or beyond `max`. */
static int64_t key_number(int64_t max) {
  char* tok = expect_token();
  long long v;
  char* end;
  if (strcmp(tok, "-") == 0) {
    free(tok);
    return ORCHLOG_NONE;
  }
  errno = 0;
  v = strtoll(tok, &end, 10);
  if (*end != '\0') die("bad number");
  free(tok);
  return errno == ERANGE || v < 0 || v > max ? ORCHLOG_NONE : (int64_t)v;
}

static int64_t int_token(void) {
  char* tok = expect_token();
  int64_t v = (int64_t)strtoll(tok, NULL, 10);
  free(tok);
  return v;
}

static void read_meta(orchlog_meta* m) {
  char* kind;
  char* value;
  expect_word("m");
  memset(m, 0, sizeof *m);
  m->key = text_token();
  kind = expect_token();
  value = expect_token();
  if (strcmp(kind, "b") == 0) {
    m->kind = ORCHLOG_META_BOOL;
    m->i = strcmp(value, "1") == 0;
  } else if (strcmp(kind, "i") == 0) {
    m->kind = ORCHLOG_META_INT;
    m->i = (int64_t)strtoll(value, NULL, 10);
  } else if (strcmp(kind, "f") == 0) {
    uint64_t bits = strtoull(value, NULL, 16);
    m->kind = ORCHLOG_META_REAL;
    memcpy(&m->f, &bits, sizeof bits);
  } else {
    m->kind = ORCHLOG_META_TEXT;
    m->s = bytes_of(value, NULL);
  }
  free(kind);
  free(value);
}

static orchlog_meta* read_metas(size_t n) {
  size_t i;
  orchlog_meta* metas = calloc(n ? n : 1, sizeof *metas);
  if (metas == NULL) die("out of memory");
  for (i = 0; i < n; ++i) read_meta(&metas[i]);
  return metas;
}

static void free_metas(orchlog_meta* metas, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) {
    free((char*)metas[i].key);
    free((char*)metas[i].s);
  }
  free(metas);
}

/* One `tensor ...` (or `graft ...`) entry, its first word already read: logged (or grafted). */
static void log_tensor(int graft) {
  char* checkpoint = text_token();
  char* dtype = expect_token();
  size_t i, ndim = (size_t)int_token(), n_meta;
  int64_t* shape = malloc((ndim ? ndim : 1) * sizeof *shape);
  orchlog_key key;
  orchlog_named_parts parts;
  orchlog_meta* meta;
  char* stage;
  char* data;
  if (shape == NULL) die("out of memory");
  for (i = 0; i < ndim; ++i) shape[i] = int_token();
  key.token_idx = key_number(INT64_MAX);
  key.layer = (int32_t)key_number(INT32_MAX);
  stage = expect_token();
  key.stage = strcmp(stage, "-") == 0 ? NULL : bytes_of(stage, NULL);
  key.step = (int32_t)key_number(INT32_MAX);
  memset(&parts, 0, sizeof parts);
  parts.rank = (int32_t)key_number(INT32_MAX);
  if (parts.rank != ORCHLOG_NONE) parts.given |= ORCHLOG_PART_RANK; /* a rank named for this record; else the run's */
  parts.token_id = key_number(INT64_MAX);
  if (parts.token_id != ORCHLOG_NONE) parts.given |= ORCHLOG_PART_TOKEN_ID;
  parts.shard_axis = (int32_t)key_number(INT32_MAX);
  if (parts.shard_axis != ORCHLOG_NONE) parts.given |= ORCHLOG_PART_SHARD_AXIS;
  parts.shard_index = (int32_t)key_number(INT32_MAX);
  if (parts.shard_index != ORCHLOG_NONE) parts.given |= ORCHLOG_PART_SHARD_INDEX;
  parts.num_shards = (int32_t)key_number(INT32_MAX); /* 0 is passed on: below the part's least value, none */
  if (parts.num_shards != ORCHLOG_NONE) parts.given |= ORCHLOG_PART_NUM_SHARDS;
  {
    char* partial = expect_token();
    if (strcmp(partial, "-") != 0) {
      parts.shard_partial = strcmp(partial, "1") == 0;
      parts.given |= ORCHLOG_PART_SHARD_PARTIAL;
    }
    free(partial);
  }
  n_meta = (size_t)int_token();
  meta = read_metas(n_meta);
  expect_word("data");
  {
    char* hex = expect_token();
    data = bytes_of(hex, NULL);
    free(hex);
  }
  if (graft)
    orchlog_graft_named(checkpoint, data, dtype, shape, ndim, &key, &parts, meta, n_meta);
  else
    orchlog_log_named(checkpoint, data, dtype, shape, ndim, &key, &parts, meta, n_meta);
  free(data);
  free_metas(meta, n_meta);
  free((char*)key.stage);
  free(stage);
  free(shape);
  free(dtype);
  free(checkpoint);
}

int main(void) {
  orchlog_options options;
  orchlog_meta* config;
  size_t n_config;
  char* tok;
  int failed;
  memset(&options, 0, sizeof options); /* NULL fields: every setting from its env knob */
  expect_word("config");
  n_config = (size_t)int_token();
  config = read_metas(n_config);
  options.config = config;
  options.n_config = n_config;
  orchlog_configure(&options);
  free_metas(config, n_config);
  while ((tok = next_token()) != NULL) {
    int graft = strcmp(tok, "graft") == 0;
    if (!graft && strcmp(tok, "tensor") != 0) die("expected a tensor");
    free(tok);
    log_tensor(graft);
  }
  orchlog_close();
  failed = orchlog_error_count() != 0;
  return failed ? 1 : 0;
}
