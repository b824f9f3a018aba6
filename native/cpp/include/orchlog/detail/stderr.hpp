// Warnings go straight to file descriptor 2 with one write(2): no iostreams,
// no locale, no exceptions, and a line never interleaves with another thread's.
#pragma once

#include <string>
#include <string_view>

#include <cerrno>
#include <unistd.h>

namespace orchlog {
namespace detail {

inline void print_warning(std::string_view message) noexcept {
  char line[1024];
  const std::string_view prefix = "orchlog: warning: ";
  std::size_t n = 0;
  for (std::string_view part : {prefix, message, std::string_view("\n")}) {
    const std::size_t room = sizeof line - 1 - n;
    const std::size_t take = part.size() < room ? part.size() : room;
    for (std::size_t i = 0; i < take; ++i) line[n++] = part[i];
  }
  if (line[n - 1] != '\n') line[n++] = '\n';
  const int saved_errno = errno;  // the host may be about to look at errno
  std::size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(2, line + done, n - done);
    if (w > 0) {
      done += static_cast<std::size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  errno = saved_errno;
}

}  // namespace detail
}  // namespace orchlog
