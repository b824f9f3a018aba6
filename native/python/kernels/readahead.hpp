// orchlog._kernels: a command's binary traces read and decoded ahead, on a thread of its own.
// Included once, by module.cpp: the kernels build as one translation unit.
//
// A compare spends its first 0.1 s importing NumPy and its own modules on one core while the other
// has nothing to do; reading and decoding the first windows of both traces is work the readers would
// do later with both cores busy (docs/compare.md). ReadAhead does it in that time: one thread (so
// the imports keep a core to themselves) reads up to `windows_each` windows of each file, in turn,
// and decodes each with decode_window, without the GIL or any Python object. The reader of a trace
// (orchlog/read/formats/orchlog_frames.py) asks `take(file, pos, trail)` for the window it is about
// to read: it gets that window's bytes and columns when the read-ahead read exactly there, and
// reads for itself otherwise, so what it reads never depends on what was read ahead. The first
// `take` stops the thread after the window it has in hand: from then on the readers' own threads
// have the cores. Windows of `map_from` bytes or more are mapped from the page cache, as the reader
// maps its own (no copy, and no fresh memory for the kernel to clear); smaller ones are copied.
#pragma once

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "frames.hpp"
#include "mapping.hpp"

namespace orchlog_kernels {

class ReadAhead {
 public:
  ReadAhead(const std::vector<std::string>& paths, size_t window, size_t windows_each, uint32_t inline_max,
            size_t map_from)
      : window_(window),
        windows_each_(windows_each),
        inline_max_(inline_max),
        map_from_(map_from),
        files_(paths.size()) {
    for (size_t i = 0; i < paths.size(); ++i) open_file(files_[i], paths[i]);
    try {
      thread_ = std::make_unique<std::thread>([this] { run(); });
    } catch (const std::system_error&) {  // no thread to be had: nothing is read ahead
    }
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;
  ~ReadAhead() {
    if (forked()) {
      (void)thread_.release();  // the parent's thread: this process has none to stop or wait for
    } else {
      finish();
    }
    for (File& f : files_) {
      if (f.fd >= 0) ::close(f.fd);
    }
  }

  // (st_dev, st_ino) of the file opened as `file`, or None when it could not be (missing, unreadable,
  // not a regular file): a reader matches its own open file by them. A file that is not a binary
  // trace has one too; nothing is read ahead of it (find_start).
  py::object identity(size_t file) const {
    const File& f = files_.at(file);
    if (f.fd < 0) return py::none();
    return py::make_tuple(uint64_t(f.dev), uint64_t(f.ino));
  }

  // The window read ahead at `pos` (with `trail` key-value pairs to skip first) as (buffer, bytes,
  // columns), or None. Windows read ahead of an earlier position are dropped: the reader has gone past.
  py::object take(size_t file, int64_t pos, uint32_t trail) {
    Window w;
    {
      std::lock_guard<std::mutex> hold(mu_);
      stopping_ = true;
      std::deque<Window>& ready = files_.at(file).ready;
      while (!ready.empty() && ready.front().pos < pos) ready.pop_front();
      if (ready.empty() || ready.front().pos != pos || ready.front().trail != trail) return py::none();
      w = std::move(ready.front());
      ready.pop_front();
      ++files_[file].taken;
    }
    const size_t capacity = w.capacity;
    unsigned char* bytes = w.bytes.data;
    const bool mapped = w.bytes.mapped != 0;
    py::capsule owner(new Bytes(std::move(w.bytes)), [](void* p) { delete static_cast<Bytes*>(p); });
    py::array_t<uint8_t> buffer({py::ssize_t(capacity)}, {py::ssize_t(1)}, bytes, owner);
    // Read-only as map_window's are: the pages are mapped read-only, and a write would crash the process.
    if (mapped) buffer.attr("setflags")(py::arg("write") = false);
    return py::make_tuple(buffer, w.got, frame_window_dict(std::move(w.decoded)));
  }

  // How many windows of `file` were handed to its reader (the tests check the read-ahead is used).
  size_t taken(size_t file) {
    std::lock_guard<std::mutex> hold(mu_);
    return files_.at(file).taken;
  }

  // How many windows of `file` wait to be taken.
  size_t ready(size_t file) {
    std::lock_guard<std::mutex> hold(mu_);
    return files_.at(file).ready.size();
  }

  // Wait until the thread has read all it will. It takes no Python object, so waiting with or without
  // the GIL is safe.
  void wait() {
    if (thread_ && thread_->joinable() && !forked()) thread_->join();
  }

  // Stop reading ahead (after the window in hand) and wait for the thread.
  void finish() {
    if (forked()) return;
    {
      std::lock_guard<std::mutex> hold(mu_);
      stopping_ = true;
    }
    wait();
  }

 private:
  // A window's bytes: a mapping of the file (`mapped` bytes from `base`) or a copy (`base` from malloc).
  struct Bytes {
    unsigned char* data = nullptr;
    void* base = nullptr;
    size_t mapped = 0;
    Bytes() = default;
    Bytes(Bytes&& o) noexcept : data(o.data), base(o.base), mapped(o.mapped) { o.data = nullptr, o.base = nullptr; }
    Bytes& operator=(Bytes&& o) noexcept {
      std::swap(data, o.data), std::swap(base, o.base), std::swap(mapped, o.mapped);
      return *this;
    }
    Bytes(const Bytes&) = delete;
    Bytes& operator=(const Bytes&) = delete;
    ~Bytes() {
      if (base != nullptr && mapped != 0) {
        Unmapper::later(base, mapped);
      } else {
        std::free(base);
      }
    }
  };
  struct Window {
    int64_t pos = 0;
    uint32_t trail = 0;
    Bytes bytes;
    size_t capacity = 0, got = 0;
    FrameWindow decoded;
  };
  struct File {
    int fd = -1;
    dev_t dev = 0;
    ino_t ino = 0;
    bool started = false, done = false;
    int64_t pos = 0;
    uint32_t trail = 0;
    size_t made = 0, taken = 0;
    std::deque<Window> ready;
  };

  static void open_file(File& f, const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO must not block
    struct stat st;
    if (fd < 0) return;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return;
    }
    f.fd = fd, f.dev = st.st_dev, f.ino = st.st_ino;
  }

  // Up to `want` bytes at `pos`, of those the page cache holds: fewer where it stops holding them, at
  // the end of the file or on an error (the reader reads and reports for itself). Read from disk, the
  // traces' first windows cost the command more than they saved: on this project's machine the
  // 50,000-row pair, evicted, compared in 0.397 s with a read-ahead that waited for the disk and 0.353 s
  // without (16 runs each, in turn), while the imports beside it slowed by 10 ms.
  static size_t read_at(int fd, unsigned char* into, size_t want, int64_t pos) {
    size_t done = 0;
    while (done < want) {
      iovec piece{into + done, want - done};
      const ssize_t got = ::preadv2(fd, &piece, 1, off_t(pos + int64_t(done)), RWF_NOWAIT);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;  // EAGAIN: not cached; EOPNOTSUPP: a file system that cannot tell
      done += size_t(got);
    }
    return done;
  }

  // A window's buffer, huge pages asked for as NumPy asks for them for arrays this large, its pages
  // touched before the read. Left to the read, they are faulted in while the kernel copies the file,
  // and while the command's imports map memory on the other core a 16 MiB read then took 35-40 ms
  // instead of 2.5 (the thread's CPU for the 50,000-row pair's 12 windows: 130-240 ms; touched, 70 ms).
  static unsigned char* allocate(size_t capacity) {
    constexpr size_t kHuge = 2u << 20, kPage = 4u << 10;
    const size_t rounded = (capacity + kHuge - 1) / kHuge * kHuge;
    auto* p = static_cast<unsigned char*>(std::aligned_alloc(kHuge, rounded));
    if (p == nullptr) return nullptr;
#ifdef MADV_HUGEPAGE
    if (capacity >= (4u << 20)) ::madvise(p, rounded, MADV_HUGEPAGE);
#endif
    for (size_t at = 0; at < capacity; at += kPage) p[at] = 0;
    return p;
  }

  // Up to `want` bytes at `pos` mapped from the page cache, as far as it holds them from `pos` on (mincore:
  // the thread must not wait for a disk, as read_at does not); an empty result where nothing is cached
  // (`uncached` then says so: a copy would touch a window of fresh memory to learn the same) or the file
  // cannot be mapped. The pages are mapped as the decoder first reads them, as the reader's own windows
  // are (_map in orchlog_frames.py). The size is checked once mapped: a mapped page past the end of a
  // file raises SIGBUS, so a file already cut shorter is copied.
  static Bytes map_at(int fd, int64_t pos, size_t want, size_t& got, bool& uncached) {
    got = 0, uncached = false;
    const FileSpan span = map_span(fd, pos, want);
    if (span.base == nullptr) return {};
    Bytes b;
    b.base = span.base, b.mapped = span.mapped, b.data = span.data;
    const auto page = size_t(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> cached((span.mapped + page - 1) / page);
    if (::mincore(span.base, span.mapped, cached.data()) != 0) return {};
    const size_t held = std::min(span.mapped, cached_extent(cached) * page);
    if (held <= span.lead) return uncached = true, Bytes{};
    struct stat st;
    const int64_t start = pos - int64_t(span.lead);
    if (::fstat(fd, &st) != 0 || st.st_size < start + int64_t(held)) return {};
    ask_for_holes(fd, start, cached, held / page, page);
    got = held - span.lead;
    return b;
  }

  // How many pages of a window, from its first, are read ahead: as far as the page cache holds them, across
  // the odd page it has dropped. A VM's memory reclaim leaves such holes in a trace it has just read or
  // written (on this project's machine, one page in a few hundred within seconds), and stopping at the
  // first one stopped the read-ahead of the 50,000-row pair after 4 of its 218 MB. A hole of more than
  // kHoleRun pages, or more holes than one page in 16 of those so far, ends the window there: the rest of
  // the trace is not cached, and the thread must not read it from disk.
  static size_t cached_extent(const std::vector<unsigned char>& cached) {
    constexpr size_t kHoleRun = 8;
    size_t held = 0, missing = 0, run = 0;
    for (size_t i = 0; i < cached.size(); ++i) {
      if (cached[i] & 1) {
        held = i + 1, run = 0;
        continue;
      }
      ++missing, ++run;
      if (run > kHoleRun || missing > 1 + (i + 1) / 16) break;
    }
    return held;
  }

  // Ask the kernel to read the holes among the first `pages` of a window (from file offset `start`) without
  // waiting for them: by the time the decoder reaches one, it is usually there.
  static void ask_for_holes(int fd, int64_t start, const std::vector<unsigned char>& cached, size_t pages,
                            size_t page) {
    for (size_t i = 0; i < pages;) {
      if (cached[i] & 1) {
        ++i;
        continue;
      }
      size_t end = i;
      while (end < pages && !(cached[end] & 1)) ++end;
      (void)::posix_fadvise(fd, off_t(start + int64_t(i * page)), off_t((end - i) * page), POSIX_FADV_WILLNEED);
      i = end;
    }
  }

  // Whether the page cache holds the file's first page (true where that cannot be told: a file system
  // that cannot map). A read that does not wait still starts the kernel reading what it lacks from disk,
  // so a file whose first page is not cached is not even probed: nothing of it is read ahead, and the
  // read-ahead leaves the disk alone.
  static bool first_page_cached(int fd) {
    const auto page = size_t(::sysconf(_SC_PAGESIZE));
    void* at = ::mmap(nullptr, page, PROT_READ, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED) return true;
    unsigned char cached = 1;
    if (::mincore(at, page, &cached) != 0) cached = 1;
    ::munmap(at, page);
    return (cached & 1) != 0;
  }

  // Where the first record frame is: after the run header, or at 0 in a stream that starts with
  // records. Anything else is not read ahead (the reader sees it for itself).
  bool find_start(File& f) {
    constexpr size_t kProbe = 64u << 10;
    static constexpr char kHeader[] = "\247orchlog";     // the str `orchlog` (0xa7: 7 bytes), a header's first key
    static constexpr char kRecord[] = "\252checkpoint";  // `checkpoint` (0xaa: 10 bytes), a record's
    if (!first_page_cached(f.fd)) return false;
    std::vector<unsigned char> probe(kProbe);
    const size_t got = read_at(f.fd, probe.data(), kProbe, 0);
    if (got < 1) return false;
    const unsigned char t = probe[0];
    const size_t keys = (t >= 0x80 && t <= 0x8F) ? 1 : t == 0xDE ? 3 : t == 0xDF ? 5 : 0;
    const auto starts = [&](const char* mark, size_t n) {
      return keys && got >= keys + n && std::memcmp(probe.data() + keys, mark, n) == 0;
    };
    if (starts(kRecord, sizeof kRecord - 1)) return f.pos = 0, true;
    if (!starts(kHeader, sizeof kHeader - 1)) return false;
    MsgReader r(probe.data(), probe.data() + got);
    if (!r.skip()) return false;  // a header longer than the probe: rare enough to leave to the reader
    f.pos = int64_t(r.pos() - probe.data());
    return true;
  }

  // Read and decode the next window of `f`; false when there is nothing more to read ahead in it.
  bool step(File& f) {
    if (!f.started) {
      f.started = true;
      if (!find_start(f)) return false;
    }
    struct stat st;
    if (::fstat(f.fd, &st) != 0 || st.st_size <= f.pos) return false;
    Window w;
    w.pos = f.pos, w.trail = f.trail;
    w.capacity = std::min<size_t>(window_, size_t(st.st_size - f.pos));  // a small trace: no more than it holds
    bool uncached = false;
    if (w.capacity >= map_from_) w.bytes = map_at(f.fd, f.pos, w.capacity, w.got, uncached);
    if (uncached) return false;
    if (w.bytes.data == nullptr) {
      w.bytes.base = w.bytes.data = allocate(w.capacity);
      if (w.bytes.data == nullptr) return false;
      w.got = read_at(f.fd, w.bytes.data, w.capacity, f.pos);
    }
    if (w.got == 0) return false;
    w.decoded = decode_window(w.bytes.data, w.got, f.pos, inline_max_, f.trail);
    const int stop = w.decoded.stop;
    const bool goes_on = stop == kStopEnd || (stop == kStopMore && w.decoded.next > f.pos);
    f.pos = w.decoded.next, f.trail = w.decoded.trail;
    std::lock_guard<std::mutex> hold(mu_);
    f.ready.push_back(std::move(w));
    return goes_on && ++f.made < windows_each_;
  }

  void run() {
    pthread_setname_np(pthread_self(), "orchlog-ahead");  // what top and py-spy show
    for (;;) {
      File* next = nullptr;
      {
        std::lock_guard<std::mutex> hold(mu_);
        if (stopping_) return;
        for (File& f : files_) {  // the file with the fewest windows read ahead: both move on together
          if (f.fd >= 0 && !f.done && (next == nullptr || f.made < next->made)) next = &f;
        }
      }
      if (next == nullptr) return;
      if (!step(*next)) next->done = true;
    }
  }

  const size_t window_, windows_each_;
  const uint32_t inline_max_;
  const size_t map_from_;
  std::vector<File> files_;
  std::mutex mu_;
  bool stopping_ = false;           // a reader has taken over, or the command is done
  const pid_t owner_ = ::getpid();  // a forked child has a copy of this object but not its thread
  std::unique_ptr<std::thread> thread_;

  bool forked() const { return ::getpid() != owner_; }
};

}  // namespace orchlog_kernels
