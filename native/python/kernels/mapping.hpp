// orchlog._kernels: read-only windows of a file mapped from the page cache, unmapped on a thread of
// their own. Included once, by module.cpp: the kernels build as one translation unit.
//
// A compare maps every window of both traces (orchlog_frames._map, the read-ahead's windows) and drops
// each when its round is done. munmap clears one page-table entry per 4 KiB page: about 0.1 s for the
// 200,000-row pair's 1.75 GB, all of it on the thread that dropped the last reference, which is the
// walk's own (the one every other step waits for). Handing the unmapping to a thread that waits for
// nothing else takes it off that path; what it costs the machine stays the same.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace orchlog_kernels {

// Mappings waiting to be unmapped, and the one thread that unmaps them (started on first use).
class Unmapper {
 public:
  // Unmap [at, at + length) soon, from any thread, with or without the GIL. Unmapped at once in a
  // forked child (the parent's thread is not there, and its lock may have been held at the fork), when
  // no thread can be had, and when the thread has fallen behind: more than kMaxPending mappings or
  // kMaxOwed bytes not yet unmapped. A mapping's pages count in the process's memory until it goes:
  // on a loaded 2-core machine the thread fell 80 MB behind a compare of 8 MiB tensors, by count alone
  // it could fall 256 windows behind. The walk keeps both cores busy, so the thread lags there too:
  // a bound of one window (48 MiB) made the main thread unmap for it and cost the 50,000-row compare
  // 5%; two windows cost nothing measurable.
  static void later(void* at, size_t length) {
    Unmapper& u = instance();
    if (u.born_ == ::getpid() && u.running()) {
      std::lock_guard<std::mutex> hold(u.mu_);
      if (u.pending_.size() < kMaxPending && u.owed_ + length <= kMaxOwed) {
        u.pending_.emplace_back(at, length);
        u.owed_ += length;
        u.wake_.notify_one();
        return;
      }
    }
    ::munmap(at, length);
  }

  // Hold the thread, or let it go on (the tests' way to see what waits for it): mappings handed over
  // while it is held wait, up to the bounds, and the callers unmap the rest. Let it go before drain().
  static void hold(bool on) {
    Unmapper& u = instance();
    if (u.born_ != ::getpid() || !u.running()) return;
    const std::lock_guard<std::mutex> guard(u.mu_);
    u.held_ = on;
    if (!on) u.wake_.notify_one();
  }

  // Wait until every mapping handed over so far is unmapped (the tests' way to see the thread work).
  static void drain() {
    Unmapper& u = instance();
    if (u.born_ != ::getpid() || !u.running()) return;
    std::unique_lock<std::mutex> hold(u.mu_);
    u.idle_.wait(hold, [&u] { return u.pending_.empty() && !u.busy_; });
  }

 private:
  static constexpr size_t kMaxPending = 256;
  static constexpr size_t kMaxOwed = size_t(72) << 20;  // two of a reader's windows (32 MiB) and some

  // Never destroyed: the thread may still wait on it while the process's static objects go.
  static Unmapper& instance() {
    static Unmapper* u = new Unmapper;
    return *u;
  }

  bool running() {
    std::call_once(start_, [this] {
      try {
        std::thread([this] { run(); }).detach();
        running_ = true;
      } catch (const std::system_error&) {  // no thread to be had: every caller unmaps for itself
      }
    });
    return running_;
  }

  void run() {
    pthread_setname_np(pthread_self(), "orchlog-unmap");
    std::vector<std::pair<void*, size_t>> batch;
    std::unique_lock<std::mutex> hold(mu_);
    for (;;) {
      wake_.wait(hold, [this] { return !pending_.empty() && !held_; });
      batch.swap(pending_);
      busy_ = true;
      hold.unlock();
      for (const auto& m : batch) ::munmap(m.first, m.second), owed_ -= m.second;
      batch.clear();
      hold.lock();
      busy_ = false;
      idle_.notify_all();
    }
  }

  const pid_t born_ = ::getpid();  // a forked child has a copy of this object but not its thread
  std::once_flag start_;
  bool running_ = false;
  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::vector<std::pair<void*, size_t>> pending_;
  std::atomic<size_t> owed_{0};  // bytes queued or being unmapped (each paid off once it is)
  bool busy_ = false, held_ = false;
};

// [offset, offset + length) of an open file mapped read-only: the mapping (`base`, `mapped` bytes from
// the page boundary at or before offset) and where the range starts in it (`data`, `lead` bytes on).
struct FileSpan {
  void* base = nullptr;  // nullptr: the file could not be mapped (errno says why)
  size_t mapped = 0, lead = 0;
  unsigned char* data = nullptr;
};

inline FileSpan map_span(int fd, int64_t offset, size_t length) {
  const auto page = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  const int64_t start = offset - offset % page;
  FileSpan s;
  s.lead = size_t(offset - start), s.mapped = s.lead + length;
  void* at = ::mmap(nullptr, s.mapped, PROT_READ, MAP_SHARED, fd, off_t(start));
  if (at == MAP_FAILED) return FileSpan{};
  s.base = at, s.data = static_cast<unsigned char*>(at) + s.lead;
  return s;
}

// [offset, offset + length) of the open file `fd`, mapped read-only, as a read-only uint8 array; the
// mapping goes (through the Unmapper) when the array and every view of it are gone. OSError when the
// file cannot be mapped, ValueError for an empty range.
inline py::array map_window(int fd, int64_t offset, int64_t length) {
  if (length <= 0 || offset < 0) throw py::value_error("a mapped window needs a positive length from offset >= 0");
  FileSpan span;
  {
    py::gil_scoped_release nogil;
    span = map_span(fd, offset, size_t(length));
  }
  if (span.base == nullptr) {
    PyErr_SetFromErrno(PyExc_OSError);
    throw py::error_already_set();
  }
  py::capsule owner(new FileSpan(span), [](void* p) {
    const auto* m = static_cast<FileSpan*>(p);
    Unmapper::later(m->base, m->mapped);
    delete m;
  });
  py::array_t<uint8_t> out({py::ssize_t(length)}, {py::ssize_t(1)}, span.data, owner);
  out.attr("setflags")(py::arg("write") = false);  // the pages are mapped read-only: a write would crash
  return out;
}

}  // namespace orchlog_kernels
