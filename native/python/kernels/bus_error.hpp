// orchlog._kernels: what the `orchlog` command does when a file it has mapped is cut shorter under it.
// Included once, by module.cpp.
//
// A read of a mapped page past the new end of its file raises SIGBUS, whose default action ends the
// process with "Bus error (core dumped)" and no word of which file or why: a compare of a trace that an
// engine run rewrites meanwhile dies that way. A handler prints the command's own one-line error, naming
// the file, and exits with status 2, as for any other input error. It is for the command's own process
// only (the CLI installs it); a library caller's signals are its own.
#pragma once

#include <fcntl.h>
#include <pybind11/pybind11.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

namespace py = pybind11;

namespace orchlog_kernels {

namespace bus_error {

// A line cut to 1 KiB, with its newline: written before the handler is installed, read only by it.
struct Line {
  char text[1024];
  size_t len = 0;

  void set(const std::string& s, bool newline) {
    len = std::min(s.size(), sizeof text - 1);
    std::memcpy(text, s.data(), len);
    if (newline) text[len++] = '\n';
  }
};

inline Line unnamed;                  // when the file cannot be named
inline Line before_path, after_path;  // the line around the file's path, when it can
inline bool naming = false;           // whether the line has a place for the path
inline std::atomic<bool> reporting{false};

inline void write_all(const char* p, size_t n) {
  while (n > 0) {
    const ssize_t k = ::write(2, p, n);
    if (k <= 0) return;
    p += k;
    n -= size_t(k);
  }
}

inline bool hex(const char*& p, const char* end, uintptr_t& out) {
  const char* start = p;
  out = 0;
  for (; p < end; ++p) {
    const char c = *p;
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) break;
    out = out << 4 | uintptr_t(d);
  }
  return p > start;
}

// The path of a /proc/self/maps line ("start-end perms offset dev inode   path") whose range holds addr.
inline bool path_in_line(const char* p, const char* end, uintptr_t addr, const char*& path, size_t& len) {
  uintptr_t lo = 0, hi = 0;
  if (!hex(p, end, lo) || p == end || *p++ != '-' || !hex(p, end, hi) || addr < lo || addr >= hi) return false;
  for (int field = 0; field < 4; ++field) {  // the range's end is read: perms, offset, dev, inode are left
    while (p < end && *p == ' ') ++p;
    while (p < end && *p != ' ') ++p;
  }
  while (p < end && *p == ' ') ++p;
  if (p == end || *p != '/') return false;  // an anonymous mapping, [heap], [stack]: no file to name
  path = p;
  len = size_t(end - p);
  return true;
}

// Only open(), read(), write() and _exit() here: all async-signal-safe. The file is named from
// /proc/self/maps, which lists every mapping of the process (the readers', BLAKE3's, Python's mmap), so
// no mapping has to be registered anywhere. A bus error of another kind (BUS_ADRALN, a machine check)
// keeps its default action: returning runs the faulting access again, which then ends the process.
inline void handler(int sig, siginfo_t* info, void*) {
  if (info == nullptr || info->si_code != BUS_ADRERR) {
    ::signal(sig, SIG_DFL);
    return;
  }
  if (reporting.exchange(true)) {  // another thread is reporting one: it ends the process
    for (;;) ::pause();
  }
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  char chunk[4096], line[4096];
  size_t held = 0;
  bool overlong = false;
  const int fd = naming ? ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC) : -1;
  for (ssize_t n; fd >= 0 && (n = ::read(fd, chunk, sizeof chunk)) > 0;) {
    for (ssize_t i = 0; i < n; ++i) {
      if (chunk[i] != '\n') {
        if (held < sizeof line)
          line[held++] = chunk[i];
        else
          overlong = true;  // a path past 4 KiB: its range is still read, its name is not written
        continue;
      }
      const char* path = nullptr;
      size_t len = 0;
      if (!overlong && path_in_line(line, line + held, addr, path, len)) {
        write_all(before_path.text, before_path.len);
        write_all(path, len);
        write_all(after_path.text, after_path.len);
        ::_exit(2);
      }
      held = 0;
      overlong = false;
    }
  }
  write_all(unnamed.text, unnamed.len);
  ::_exit(2);
}

}  // namespace bus_error

// From now on, a read of a mapped page past its file's end writes a line to standard error and exits
// with status 2: `named` with its "{path}" replaced by the mapped file's path where /proc/self/maps
// names it, else `line`. A newline is added; each part is cut to 1 KiB.
inline void exit_on_bus_error(const std::string& line, const std::string& named) {
  bus_error::unnamed.set(line, true);
  const size_t at = named.find("{path}");
  bus_error::naming = at != std::string::npos;
  if (bus_error::naming) {
    bus_error::before_path.set(named.substr(0, at), false);
    bus_error::after_path.set(named.substr(at + 6), true);
  }
  struct sigaction action{};
  action.sa_sigaction = bus_error::handler;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (::sigaction(SIGBUS, &action, nullptr) != 0) {
    PyErr_SetFromErrno(PyExc_OSError);
    throw py::error_already_set();
  }
}

}  // namespace orchlog_kernels
