/* A C host that forks after it started logging (ORCH_LOG_FILE from the env): the parent logs token 0,
   forks, the child logs tokens 1 and 2 and exits 0 when neither was written (with "{pid}" in the path:
   when both were), the parent logs token 3 once the child is done. Prints the child's pid and its own. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <orchlog/orchlog.h>

static int log_token(int64_t token) {
  static const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  const int64_t shape[1] = {4};
  orchlog_key key = {0, ORCHLOG_NONE, ORCHLOG_NONE, NULL};
  key.token_idx = token;
  return orchlog_log("x", x, "f32", shape, 1, &key);
}

int main(void) {
  const char* path = getenv("ORCH_LOG_FILE");
  const int own_file = path != NULL && strstr(path, "{pid}") != NULL;
  pid_t child;
  int status = 0;
  log_token(0);
  fflush(NULL);
  child = fork();
  if (child == 0) {
    const int wrote = log_token(1) + log_token(2);
    _exit(wrote == (own_file ? 2 : 0) ? 0 : 1);
  }
  waitpid(child, &status, 0);
  log_token(3);
  orchlog_close();
  printf("%ld %ld\n", (long)child, (long)getpid());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
