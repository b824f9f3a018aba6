// One output file written with plain system calls: each record goes out in
// a single writev (the frame around the tensor bytes, without copying them),
// straight to the kernel, so a crash or kill -9 loses nothing already logged.
#pragma once

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
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
  // A regular file is claimed with an exclusive flock before it is emptied: a
  // second process given the same path (no {pid} or {rank} in it) gets an
  // error and writes nothing, instead of truncating and overwriting the
  // first one's records. The lock lives as long as the descriptor.
  bool open(const std::string& path, std::string& error) {
    close();
    path_ = path;
    int fd;
    do {
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      error = "cannot open " + path + ": " + std::strerror(errno);
      return false;
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    struct stat st{};
    const bool known = ::fstat(fd, &st) == 0;
    if (known && S_ISREG(st.st_mode) && !claim(fd, st, path, error)) {
      ::close(fd);
      return false;
    }
    // Pipes and sockets raise SIGPIPE when the reader goes away; that must not kill the host.
    guard_sigpipe_ = known && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
    fd_ = fd;
    return true;
  }

  // A run of bytes to write.
  struct Piece {
    const void* data;
    std::size_t size;
  };

  // Writes the pieces in order, whole, in one writev, retrying short writes and EINTR.
  bool write(std::initializer_list<Piece> pieces, std::string& error) {
    if (fd_ < 0) {
      error = path_ + " is not open";
      return false;
    }
    struct iovec iov[3];
    int n = 0;
    for (const Piece& p : pieces) {
      if (n == 3) break;
      if (p.size) iov[n++] = {const_cast<void*>(p.data), p.size};
    }
    SigpipeGuard guard(guard_sigpipe_);
    int i = 0;
    while (i < n) {
      const ssize_t w = ::writev(fd_, iov + i, n - i);
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
      while (i < n && done >= iov[i].iov_len) done -= iov[i++].iov_len;
      if (i < n) {
        iov[i].iov_base = static_cast<char*>(iov[i].iov_base) + done;
        iov[i].iov_len -= done;
      }
    }
    return true;
  }

  bool write(const void* data, std::size_t size, std::string& error) { return write({{data, size}}, error); }

  bool sync() { return fd_ < 0 || ::fdatasync(fd_) == 0 || errno == EINVAL; }  // EINVAL: pipes, /dev/null

  void close() {
    if (fd_ >= 0) {
      forget(fd_);
      ::close(fd_);
    }
    fd_ = -1;
  }

  int fd() const { return fd_; }

  // Held across fork() (pthread_atfork, core.hpp): a child must find the
  // claims unlocked, whatever another thread of its parent was doing.
  static void lock_claims() { claims_mutex().lock(); }
  static void unlock_claims() { claims_mutex().unlock(); }

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

  // The regular files this process has claimed: (device, inode, a descriptor holding the lock).
  struct Claim {
    dev_t dev;
    ino_t ino;
    int fd;
  };
  static std::mutex& claims_mutex() {
    static std::mutex m;
    return m;
  }
  static std::vector<Claim>& claims() {
    static std::vector<Claim> c;
    return c;
  }

  // Takes the file for this process (an exclusive, non-blocking flock) and empties it. A flock
  // belongs to an open file description, so a new run of this same process on a path the
  // previous run still holds (configure called again) shares that description through dup
  // instead of locking itself out. On success `fd` is the descriptor to write through.
  static bool claim(int& fd, const struct stat& st, const std::string& path, std::string& error) {
    std::lock_guard<std::mutex> guard(claims_mutex());
    int held = -1;
    for (const Claim& c : claims())
      if (c.dev == st.st_dev && c.ino == st.st_ino) held = c.fd;
    if (held >= 0) {
      const int shared = ::fcntl(held, F_DUPFD_CLOEXEC, 0);
      if (shared < 0) {
        error = "cannot open " + path + ": " + std::strerror(errno);
        return false;
      }
      ::close(fd);
      fd = shared;
    } else {
      int rc;
      do {
        rc = ::flock(fd, LOCK_EX | LOCK_NB);
      } while (rc < 0 && errno == EINTR);
      if (rc < 0 && errno == EWOULDBLOCK) {
        error = path + " is being written by another process; not writing to it (put {pid} or {rank} in " +
                "ORCH_LOG_FILE to give each process its own file)";
        return false;
      }
      // Other errors (a file system without locks) leave the file unclaimed but usable, as before.
    }
    if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) < 0) {
      error = "cannot truncate " + path + ": " + std::strerror(errno);
      return false;
    }
    claims().push_back({st.st_dev, st.st_ino, fd});
    return true;
  }

  static void forget(int fd) {
    std::lock_guard<std::mutex> guard(claims_mutex());
    auto& c = claims();
    for (auto it = c.begin(); it != c.end(); ++it)
      if (it->fd == fd) {
        c.erase(it);
        return;
      }
  }

  int fd_ = -1;
  bool guard_sigpipe_ = false;
  std::string path_;
};

}  // namespace detail
}  // namespace orchlog
