// Grafts one plan of calls from each of many references, in one process: what
// tests/fuzz/test_graft_mutants.py runs, built with AddressSanitizer and
// UndefinedBehaviorSanitizer, against a corpus of damaged references.
//
//   graft_mutants PLAN REFERENCES
//
// PLAN has one graft call a line: checkpoint, token_idx, layer (-1: none),
// dtype and the dimensions joined by commas, separated by tabs. REFERENCES
// names one reference a line. For each reference the run is configured anew
// (logging to /dev/null, every call selected), each call's tensor starts as
// bytes 0xA5 (GRAFT_MUTANTS_LOG, when set, names the log file instead of
// /dev/null, written in full mode), and one line is printed: a 0 or 1 per call (what graft returned),
// a tab, and each tensor's bytes after the call in hex, joined by commas. Last,
// on stderr, the process's peak resident memory (VmHWM), where Linux tells it.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "orchlog/orchlog.hpp"

namespace {

struct Call {
  std::string checkpoint;
  std::int64_t token = -1, layer = -1;
  orchlog::DType dtype = orchlog::DType::f32;
  std::vector<std::int64_t> dims;
  std::size_t nbytes = 0;
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) out.push_back(part);
  if (!text.empty() && text.back() == sep) out.emplace_back();
  return out;
}

std::vector<Call> read_plan(const char* path) {
  std::vector<Call> calls;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto f = split(line, '\t');
    if (f.size() != 5) continue;
    Call c;
    c.checkpoint = f[0];
    c.token = std::stoll(f[1]);
    c.layer = std::stoll(f[2]);
    c.dtype = *orchlog::schema::dtype_from_name(f[3]);
    std::size_t numel = 1;
    if (!f[4].empty())
      for (const auto& d : split(f[4], ',')) c.dims.push_back(std::stoll(d)), numel *= std::stoull(d);
    c.nbytes = numel * orchlog::schema::dtype_size(c.dtype);
    calls.push_back(std::move(c));
  }
  return calls;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: graft_mutants PLAN REFERENCES\n");
    return 2;
  }
  const std::vector<Call> calls = read_plan(argv[1]);
  std::ifstream list(argv[2]);
  std::string reference;
  static const char* hex = "0123456789abcdef";
  while (std::getline(list, reference)) {
    orchlog::Options o;
    const char* log = std::getenv("GRAFT_MUTANTS_LOG");
    o.path = log ? log : "/dev/null";
    o.mode = orchlog::Mode::full;
    o.team = "mutants";
    o.graft_from = reference;
    o.graft_select = "checkpoint=*";
    orchlog::configure(o);
    std::string flags, tensors;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const Call& c = calls[i];
      std::vector<unsigned char> buffer(c.nbytes, 0xA5);
      orchlog::Key key;
      if (c.token >= 0) key.token_idx = c.token;
      if (c.layer >= 0) key.layer = static_cast<std::int32_t>(c.layer);
      const bool grafted =
          orchlog::graft(c.checkpoint, buffer.data(), c.dtype, orchlog::Shape(c.dims.data(), c.dims.size()), key);
      flags += grafted ? '1' : '0';
      if (i > 0) tensors += ',';
      for (const unsigned char b : buffer) tensors += hex[b >> 4], tensors += hex[b & 15];
    }
    std::cout << flags << '\t' << tensors << '\n';
  }
  orchlog::close();
  // This process's own peak (VmHWM starts afresh at exec, unlike getrusage's maxrss).
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) std::cerr << "graft_mutants: peak " << line << '\n';
  return 0;
}
