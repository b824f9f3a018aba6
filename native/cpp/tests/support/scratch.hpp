// Test helpers: a scratch directory, stderr capture, env knobs, file lines.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "support/json.hpp"

namespace orchlog_test {

// A fresh directory under $TMPDIR, removed with its files at the end.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/orchlog-test-XXXXXX";
    path_ = mkdtemp(templ.data()) ? templ : "";
  }
  ~ScratchDir() {
    if (!path_.empty()) (void)std::system(("rm -rf '" + path_ + "'").c_str());
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Everything written to file descriptor 2 while it lives.
class CapturedStderr {
 public:
  CapturedStderr() {
    std::fflush(stderr);
    saved_ = dup(2);
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/orchlog-stderr-XXXXXX";
    fd_ = mkstemp(templ.data());
    path_ = templ;
    dup2(fd_, 2);
  }
  // The capture file goes with the object: a test run leaves nothing behind in $TMPDIR.
  ~CapturedStderr() {
    restore();
    ::unlink(path_.c_str());
  }
  std::string text() {
    restore();
    return read_file(path_);
  }
  // Lines that are orchlog warnings.
  std::vector<std::string> warnings() {
    std::vector<std::string> out;
    const std::string all = text();
    std::size_t start = 0;
    while (start < all.size()) {
      const std::size_t end = all.find('\n', start);
      const std::string line = all.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (line.rfind("orchlog: warning: ", 0) == 0) out.push_back(line);
      if (end == std::string::npos) break;
      start = end + 1;
    }
    return out;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, 2);
    ::close(saved_);
    ::close(fd_);
    saved_ = -1;
  }
  int saved_ = -1, fd_ = -1;
  std::string path_;
};

// Sets (or, with nullptr, unsets) an env knob for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { had_ ? setenv(name_.c_str(), old_.c_str(), 1) : unsetenv(name_.c_str()); }

 private:
  std::string name_, old_;
  bool had_ = false;
};

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      out.push_back(text.substr(start));
      break;
    }
    out.push_back(text.substr(start, end - start + 1));  // newline kept
    start = end + 1;
  }
  return out;
}

}  // namespace orchlog_test
