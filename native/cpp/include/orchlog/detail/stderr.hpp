// Warnings go straight to file descriptor 2 with one write(2): no iostreams,
// no locale, no exceptions, and a line never interleaves with another thread's.
#pragma once

#include <initializer_list>
#include <string_view>

#include <unistd.h>
#include <cerrno>

namespace orchlog {
namespace detail {

// Prints "orchlog: warning: " + the parts + newline; allocates nothing, so it
// is safe where memory has run out. Long lines are cut at 1 KiB. Control
// characters (a newline in a knob's value, say) are written as \xHH so that a
// warning stays one line.
inline void print_warning(std::initializer_list<std::string_view> parts) noexcept {
  char line[1024];
  std::size_t n = 0;
  const std::size_t end = sizeof line - 1;  // room for the newline
  std::initializer_list<std::string_view> framed[] = {{"orchlog: warning: "}, parts};
  for (const auto& group : framed)
    for (std::string_view part : group)
      for (const char ch : part) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c != 0x7f) {
          if (n == end) break;
          line[n++] = ch;
        } else {
          if (n + 4 > end) break;
          const char* hex = "0123456789abcdef";
          line[n++] = '\\';
          line[n++] = 'x';
          line[n++] = hex[c >> 4];
          line[n++] = hex[c & 15];
        }
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
