// orchlog._kernels: what the `orchlog` command does when a file it has mapped is cut shorter under it.
// Included once, by module.cpp.
//
// A read of a mapped page past the new end of its file raises SIGBUS, whose default action ends the
// process with "Bus error (core dumped)" and no word of which file or why: a compare of a trace that an
// engine run rewrites meanwhile dies that way. A handler prints the command's own one-line error and
// exits with status 2, as for any other input error. It is for the command's own process only (the CLI
// installs it); a library caller's signals are its own.
#pragma once

#include <pybind11/pybind11.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace py = pybind11;

namespace orchlog_kernels {

namespace bus_error {

inline char message[1024];  // written before the handler is installed, read only by it
inline size_t message_len = 0;

// Only write() and _exit() here: both are async-signal-safe. A bus error of another kind (BUS_ADRALN,
// a machine check) keeps its default action: returning runs the faulting access again, which then ends
// the process as before.
inline void handler(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code == BUS_ADRERR) {
    for (size_t at = 0; at < message_len;) {
      const ssize_t n = ::write(2, message + at, message_len - at);
      if (n <= 0) break;
      at += size_t(n);
    }
    ::_exit(2);
  }
  ::signal(sig, SIG_DFL);
}

}  // namespace bus_error

// From now on, a read of a mapped page past its file's end writes `line` (a newline is added) to
// standard error and exits with status 2. The line is cut to 1 KiB.
inline void exit_on_bus_error(const std::string& line) {
  const size_t n = std::min(line.size(), sizeof bus_error::message - 1);
  std::memcpy(bus_error::message, line.data(), n);
  bus_error::message[n] = '\n';
  bus_error::message_len = n + 1;
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
