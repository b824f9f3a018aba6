// One output file written with plain system calls: each record goes out in
// a single write/writev (prefix and tensor bytes without copying the tensor),
// straight to the kernel, so a crash or kill -9 loses nothing already logged.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

namespace orchlog {
namespace detail {

class FileSink {
 public:
  FileSink() = default;
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;
  ~FileSink() { close(); }

  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

  // Creates or truncates `path`. Opened non-blocking so that a FIFO without a
  // reader fails instead of hanging the host, then switched back to blocking.
  bool open(const std::string& path, std::string& error) {
    close();
    path_ = path;
    int fd;
    do {
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      error = "cannot open " + path + ": " + std::strerror(errno);
      return false;
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    struct stat st{};
    // Pipes and sockets raise SIGPIPE when the reader goes away; that must not kill the host.
    guard_sigpipe_ = ::fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
    fd_ = fd;
    return true;
  }

  // Writes a then b, whole, retrying short writes and EINTR.
  bool write(const void* a, std::size_t na, const void* b, std::size_t nb, std::string& error) {
    if (fd_ < 0) {
      error = path_ + " is not open";
      return false;
    }
    struct iovec iov[2] = {{const_cast<void*>(a), na}, {const_cast<void*>(b), nb}};
    SigpipeGuard guard(guard_sigpipe_);
    int i = 0;
    while (i < 2) {
      if (iov[i].iov_len == 0) {
        ++i;
        continue;
      }
      const ssize_t w = ::writev(fd_, iov + i, 2 - i);
      if (w < 0) {
        if (errno == EINTR) continue;
        error = "writing " + path_ + " failed: " + std::strerror(errno);
        guard.note_error(errno);
        return false;
      }
      if (w == 0) {
        error = "writing " + path_ + " made no progress";
        return false;
      }
      auto done = static_cast<std::size_t>(w);
      while (i < 2 && done >= iov[i].iov_len) done -= iov[i++].iov_len;
      if (i < 2) {
        iov[i].iov_base = static_cast<char*>(iov[i].iov_base) + done;
        iov[i].iov_len -= done;
      }
    }
    return true;
  }

  bool sync() { return fd_ < 0 || ::fdatasync(fd_) == 0 || errno == EINVAL; }  // EINVAL: pipes, /dev/null

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  int fd() const { return fd_; }

 private:
  // Blocks SIGPIPE in this thread for one write and swallows the one that
  // write raised, leaving any SIGPIPE that was already pending alone.
  class SigpipeGuard {
   public:
    explicit SigpipeGuard(bool active) : active_(active) {
      if (!active_) return;
      sigemptyset(&pipe_);
      sigaddset(&pipe_, SIGPIPE);
      sigset_t pending;
      sigpending(&pending);
      was_pending_ = sigismember(&pending, SIGPIPE) == 1;
      pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    }
    void note_error(int err) { epipe_ = err == EPIPE; }
    ~SigpipeGuard() {
      if (!active_) return;
      if (epipe_ && !was_pending_) {
        const struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
        }
      }
      pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }

   private:
    bool active_, was_pending_ = false, epipe_ = false;
    sigset_t pipe_{}, old_{};
  };

  int fd_ = -1;
  bool guard_sigpipe_ = false;
  std::string path_;
};

}  // namespace detail
}  // namespace orchlog
