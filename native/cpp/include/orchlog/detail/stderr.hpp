// Warnings go straight to file descriptor 2 with one write(2): no iostreams,
// no locale, no exceptions, and a line never interleaves with another thread's.
#pragma once

#include <initializer_list>
#include <string_view>

#include <cerrno>
#include <unistd.h>

namespace orchlog {
namespace detail {

// Prints "orchlog: warning: " + the parts + newline; allocates nothing, so it
// is safe where memory has run out. Long lines are cut at 1 KiB.
inline void print_warning(std::initializer_list<std::string_view> parts) noexcept {
  char line[1024];
  std::size_t n = 0;
  std::initializer_list<std::string_view> framed[] = {{"orchlog: warning: "}, parts};
  for (const auto& group : framed)
    for (std::string_view part : group) {
      const std::size_t room = sizeof line - 1 - n;
      const std::size_t take = part.size() < room ? part.size() : room;
      for (std::size_t i = 0; i < take; ++i) line[n++] = part[i];
    }
  line[n++] = '\n';
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

inline void print_warning(std::string_view message) noexcept { print_warning({message}); }

}  // namespace detail
}  // namespace orchlog
