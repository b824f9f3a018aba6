// The process-wide logger behind orchlog::log and the ORCH_LOG macros.
//
// Hot path when logging is off: one relaxed atomic load and a branch
// (may_log). Everything else is out of line and never lets an exception, a
// failed write or a bad argument reach the host: it warns on stderr, counts
// the error and, when the output itself failed, switches logging off.
#pragma once

#include <array>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include "orchlog/detail/encode/record_parts.hpp"
#include "orchlog/detail/logger/entry.hpp"
#include "orchlog/detail/logger/session.hpp"
#include "orchlog/detail/stderr.hpp"
#include "orchlog/encode.hpp"
#include "orchlog/options.hpp"

namespace orchlog {

namespace detail {

// Problems worth one line on stderr the first time they happen.
enum Warning : std::uint32_t {
  kBadCall = 1u << 0,
  kInternal = 1u << 1,
  kCuda = 1u << 2,
  kLegacyShape = 1u << 3,
  kGraftReference = 1u << 4,  // the reference trace could not be read
  kGraftMissing = 1u << 5,    // a selected graft call found no reference record
  kGraftMismatch = 1u << 6,   // ... found one of another shape or dtype
  kGraftDevice = 1u << 7,     // ... on a tensor the host cannot write (an adapter's)
  kGraftDamaged = 1u << 11,   // ... whose reference record failed its checks
  kCudaCapture = 1u << 8,     // a device tensor logged on a stream that is capturing a CUDA graph
  kCudaPending = 1u << 9,     // ... while a CUDA error of the engine's was waiting to be read
  kCudaRingFull = 1u << 10,   // a replay of a captured graph found the record ring full
};

class Logger {
 public:
  std::shared_ptr<Session> session() const { return std::atomic_load(&session_); }

  void count_error() noexcept { errors_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t errors() const noexcept { return errors_.load(std::memory_order_relaxed); }

  // Prints the warning only the first time its kind occurs.
  void warn_once(Warning kind, std::string_view message) noexcept {
    if ((warned_.fetch_or(kind, std::memory_order_relaxed) & kind) == 0) print_warning({message, " (printed once)"});
  }

  // A record that could not be written: counted every time, printed once per kind.
  void report(Warning kind, std::string_view message) noexcept {
    count_error();
    warn_once(kind, message);
  }

  // The output failed (caller holds s->mutex): one warning, and logging is
  // off until configure().
  void fail(const std::shared_ptr<Session>& s, std::string_view why) noexcept {
    count_error();
    s->closed = true;
    s->jsonl.close();
    s->frames.close();
    if (session() == s) g_state.store(kOff, std::memory_order_relaxed);
    char count[24];
    const auto end = std::to_chars(count, count + sizeof count, s->seq).ptr;
    print_warning({why, "; logging is off from now on (",
                   std::string_view(count, static_cast<std::size_t>(end - count)), " records had been written)"});
  }

  // In a forked child: the parent's run, taken out of reach without touching
  // it. Its files are the parent's and its mutex may have been held by a
  // thread that does not exist here, so it is never locked, closed or
  // destroyed: the caller keeps it alive for the life of the process.
  std::shared_ptr<Session> abandon() noexcept {
    g_state.store(kOff, std::memory_order_relaxed);
    return std::atomic_exchange(&session_, std::shared_ptr<Session>());
  }

  // Replaces the current run (closing its files) with `next`, or with none.
  void install(std::shared_ptr<Session> next) noexcept {
    const std::shared_ptr<Session> previous = std::atomic_exchange(&session_, next);
    g_state.store(next ? kOn : kOff, std::memory_order_relaxed);
    if (previous) {
      std::lock_guard<std::mutex> lock(previous->mutex);
      previous->closed = true;
      previous->jsonl.close();
      previous->frames.close();
    }
  }

  std::mutex configure_mutex;

 private:
  std::shared_ptr<Session> session_;
  std::atomic<std::uint64_t> errors_{0};
  std::atomic<std::uint32_t> warned_{0};
};

// Never destroyed: records may be logged from atexit handlers or from threads
// that outlive main(), and a half-destroyed logger must not be reachable.
inline Logger& logger() noexcept {
  alignas(Logger) static unsigned char storage[sizeof(Logger)];
  static Logger* instance = new (storage) Logger();  // placement: no allocation that could fail
  return *instance;
}

inline void expand_paths(Settings& s, std::int64_t pid);

// Options + env knobs -> checked settings; `warnings` collects one line per bad value,
// `select_error` the complaint about an invalid selector (empty when it is fine).
inline Settings resolve(const Options& o, std::vector<std::string>& warnings, std::string& select_error) {
  Settings s;
  s.knobs = resolve_knobs(o, warnings);
  if (s.knobs.select) {
    std::string error;
    s.selector = Selector::parse(*s.knobs.select, error);
    if (!s.selector) select_error = "selector '" + *s.knobs.select + "' is invalid (" + error + "); logging is off";
  }
  // Grafting is opt-in: an unset or blank selector grafts nothing (a blank
  // ORCH_LOG_SELECT selects everything, but grafting everything by accident
  // would hide every difference). An invalid one grafts nothing, with a warning;
  // a reference named with no selector grafts nothing too, and says so.
  if (!s.knobs.path.empty() && s.knobs.graft_from && !s.knobs.graft_select)
    warnings.push_back(
        "ORCH_GRAFT_FROM names a reference but ORCH_GRAFT_SELECT selects nothing to graft; grafting "
        "nothing (e.g. ORCH_GRAFT_SELECT=checkpoint=attn_norm,layer=3)");
  if (!s.knobs.path.empty() && s.knobs.graft_select && !trim(*s.knobs.graft_select).empty()) {
    std::string error;
    s.graft_selector = Selector::parse(*s.knobs.graft_select, error);
    if (!s.graft_selector)
      warnings.push_back("graft selector '" + *s.knobs.graft_select + "' is invalid (" + error + "); grafting nothing");
  }
  for (const MetaItem& item : o.config) {
    OwnedMetaItem owned{std::string(item.key), item.value, std::string(item.value.s)};
    s.config.push_back(std::move(owned));
  }
  s.producer = o.producer;
  expand_paths(s, static_cast<std::int64_t>(::getpid()));
  return s;
}

// The output paths of a run of process `pid`.
inline void expand_paths(Settings& s, std::int64_t pid) {
  s.pid = pid;
  if (s.knobs.path.empty()) return;
  s.path = expand_path(s.knobs.path, s.knobs.rank, pid);
  if (s.knobs.mode == Mode::both) s.binary_path = s.path + std::string(schema::kBothModeSuffix);
}

inline EncodedHeader header_of(const Settings& s) {
  HeaderInput h = header_input(s.knobs);
  h.language = s.producer;
  for (const OwnedMetaItem& item : s.config) {
    MetaItem m(item.key, false);
    m.value = item.value;
    if (m.value.kind == schema::MetaValue::Kind::text) m.value.s = item.text;
    h.config.push_back(m);
  }
  return encode_header(h);
}

// A run's output file that is one of its references, and which reference.
struct OutputThatIsAReference {
  const std::string* output;
  const char* reference;  // "graft reference" or "ORCH_LOG_AGAINST reference"
};

// The run's output file that is its graft reference or its ORCH_LOG_AGAINST
// reference (the same file, by device and inode, however it is named), if
// any. Checked before an output is opened: opening claims and empties it.
inline std::optional<OutputThatIsAReference> output_that_is_a_reference(const Settings& st) {
  const std::pair<const std::optional<std::string>*, const char*> references[] = {
      {st.graft_selector ? &st.knobs.graft_from : nullptr, "graft reference"},
      {&st.knobs.against, "ORCH_LOG_AGAINST reference"}};
  for (const auto& [path, what] : references) {
    struct stat ref{};
    if (!path || !*path || ::stat((*path)->c_str(), &ref) != 0) continue;
    for (const std::string* out : {&st.path, &st.binary_path}) {
      struct stat o{};
      if (!out->empty() && ::stat(out->c_str(), &o) == 0 && o.st_dev == ref.st_dev && o.st_ino == ref.st_ino)
        return OutputThatIsAReference{out, what};
    }
  }
  return std::nullopt;
}

// Opens the run's files and writes their headers; false (with `error`) when that fails.
inline bool open_session(Session& s, std::string& error) {
  const Settings& st = s.settings;
  const EncodedHeader header = header_of(st);
  if (st.writes_jsonl()) {
    if (!s.jsonl.open(st.path, error) || !s.jsonl.write(header.jsonl.data(), header.jsonl.size(), error)) return false;
  }
  if (st.writes_frames()) {
    const std::string& path = st.knobs.mode == Mode::both ? st.binary_path : st.path;
    if (!s.frames.open(path, error) || !s.frames.write(header.frame.data(), header.frame.size(), error)) return false;
  }
  return true;
}

// The functions entry.hpp declares, and what only they use, are compiled in
// every translation unit header-only, and once, in the library, in
// compiled-library mode.
#if ORCHLOG_DEFINE_API

// ---- fork: a child of a process that logs must not write into its files.
//
// A pthread_atfork handler marks the child (kForked); its first call settles
// it: with {pid} in ORCH_LOG_FILE the child starts a run of its own at its own
// path, else logging is off in the child with one warning. The parent's run is
// never touched in the child (its mutex may have been held by a thread that
// does not exist there); the locks the child needs to start a run are held
// across fork() so that it finds them free.

inline void before_fork() noexcept {
  try {
    logger().configure_mutex.lock();
    FileSink::lock_claims();
  } catch (...) {  // std::system_error: not reached in practice; then the child settles as it can
  }
}

inline void after_fork_in_parent() noexcept {
  FileSink::unlock_claims();
  logger().configure_mutex.unlock();
}

inline void after_fork_in_child() noexcept {
  FileSink::unlock_claims();
  logger().configure_mutex.unlock();
  std::uint8_t on = kOn;
  g_state.compare_exchange_strong(on, kForked, std::memory_order_relaxed);
}

// Registers the handlers once per process (per copy of orchlog in it).
inline void watch_forks() {
  static const bool registered = ::pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child) == 0;
  static_cast<void>(registered);
}

// In a forked child (configure_mutex held): the parent's run is set aside
// unread, then the child gets a run of its own when the path has {pid}, else
// logging stays off with one warning.
inline void settle_fork_locked() noexcept {
  if (g_state.load(std::memory_order_relaxed) != kForked) return;
  Logger& lg = logger();
  try {
    const std::shared_ptr<Session> parent = lg.abandon();
    new std::shared_ptr<Session>(parent);  // kept for the life of the process: see Logger::abandon
    if (!parent) return;
    const Settings& st = parent->settings;
    const auto pid = static_cast<std::int64_t>(::getpid());
    if (st.knobs.path.find("{pid}") == std::string::npos) {
      lg.count_error();
      print_warning({"this process (pid ", std::to_string(pid), ") was forked from pid ", std::to_string(st.pid),
                     ", which writes ", st.path,
                     "; it writes nothing there (put {pid} in ORCH_LOG_FILE to give each process its own file); "
                     "logging is off"});
      return;
    }
    Settings mine = st;
    expand_paths(mine, pid);
    auto session = std::make_shared<Session>(std::move(mine));
    std::string error;
    if (!open_session(*session, error)) {
      lg.count_error();
      print_warning({error, "; logging is off"});
      return;
    }
    lg.install(std::move(session));
  } catch (...) {
    g_state.store(kOff, std::memory_order_relaxed);
    lg.report(kInternal, "logging is off in a forked process: out of memory");
  }
}

// Must hold logger().configure_mutex.
inline bool configure_locked(const Options& options) noexcept {
  Logger& lg = logger();
  settle_fork_locked();  // a child's configure must not close the parent's files
  try {
    std::vector<std::string> warnings;
    std::string select_error;
    Settings settings = resolve(options, warnings, select_error);
    // The selector matters only to a run that writes: without a file it is not reported (as in Rust).
    if (!settings.path.empty() && !select_error.empty()) warnings.push_back(select_error);
    for (const std::string& w : warnings) {
      lg.count_error();
      print_warning(w);
    }
    if (settings.path.empty() || !select_error.empty()) {
      lg.install(nullptr);
      return false;
    }
    if (const auto same = output_that_is_a_reference(settings)) {
      lg.install(nullptr);
      lg.count_error();
      print_warning({"ORCH_LOG_FILE names the ", same->reference, " (", *same->output,
                     "): writing the run would empty it; logging is off and the file is left as it is"});
      return false;
    }
    auto session = std::make_shared<Session>(std::move(settings));
    std::string error;
    if (!open_session(*session, error)) {
      lg.install(nullptr);
      lg.count_error();
      print_warning({error, "; logging is off"});
      return false;
    }
    lg.install(std::move(session));
    watch_forks();
    return true;
  } catch (...) {
    lg.install(nullptr);
    lg.report(kInternal, "could not start logging: out of memory");
    return false;
  }
}

ORCHLOG_API bool configure(const Options& options) noexcept {
  try {
    std::lock_guard<std::mutex> lock(logger().configure_mutex);
    return configure_locked(options);
  } catch (...) {  // std::system_error from the mutex
    return false;
  }
}

// First use without configure(): settings come from the env knobs alone.
// `producer` is the language the bindings (C, Python) write in the header.
ORCHLOG_API void configure_from_env_once(std::string_view producer ORCHLOG_DEFAULT_ARG("cpp")) noexcept {
  try {
    std::lock_guard<std::mutex> lock(logger().configure_mutex);
    if (g_state.load(std::memory_order_relaxed) != kUnconfigured) return;
    Options options;
    options.producer = std::string(producer);
    configure_locked(options);
  } catch (...) {
  }
}

ORCHLOG_API void settle_state(std::string_view producer ORCHLOG_DEFAULT_ARG("cpp")) noexcept {
  const std::uint8_t state = g_state.load(std::memory_order_relaxed);
  if (state == kUnconfigured) {
    configure_from_env_once(producer);
  } else if (state == kForked) {
    try {
      std::lock_guard<std::mutex> lock(logger().configure_mutex);
      settle_fork_locked();
    } catch (...) {
    }
  }
}

// Whether the run's selector accepts the key (checkpoint and stage valid UTF-8,
// key normalized) for any of `token_count` tokens from key.token_idx.
inline bool selected(const Settings& st, std::string_view checkpoint, const Key& key, std::int64_t token_count = 1) {
  if (!st.selector) return true;
  return st.selector->matches({checkpoint, resolved(key, run_fields(st.knobs)), token_count});
}

// Room for the repaired text of each text key part (allocated only when one is repaired).
using KeyTexts = std::array<std::string, kTextKeyParts>;

// The key as written: parts normalized, text parts as valid UTF-8 (repaired
// into `texts` when they are not).
inline Key valid_key(const Key& given, KeyTexts& texts) {
  Key key = normalized(given);
  std::size_t next = 0;
  for_each_key_part(key, [&texts, &next](std::string_view, auto& part) {
    if constexpr (std::is_same_v<std::decay_t<decltype(part)>, std::optional<std::string_view>>) {
      std::string& room = texts[next++];
      if (part) part = as_valid_utf8(*part, room);
    }
  });
  return key;
}

// The out-of-line part of orchlog::selects().
ORCHLOG_NOINLINE ORCHLOG_API bool would_write(std::string_view checkpoint, const Key& given_key,
                                              std::int64_t token_count) noexcept {
  try {
    settle_state();
    const std::shared_ptr<Session> session = logger().session();
    if (!session || g_state.load(std::memory_order_relaxed) != kOn) return false;
    KeyTexts texts;
    const Key key = valid_key(given_key, texts);
    std::string checkpoint_text;
    checkpoint = as_valid_utf8(checkpoint, checkpoint_text);
    return selected(session->settings, checkpoint, key, token_count);
  } catch (...) {
    return false;
  }
}

// The record's verdict against ORCH_LOG_AGAINST's reference (not compared without one).
inline AgainstVerdict compare_with_reference(Session& session, std::string_view checkpoint, const Key& key,
                                             const Tensor& tensor, const TensorSize& size, const TensorDigest& digest) {
  const Settings& st = session.settings;
  if (!st.knobs.against) return AgainstVerdict::not_compared;
  const double tolerance = static_cast<double>(st.knobs.against_ppm) * 1e-6;
  return against_verdict(session.against, *st.knobs.against, tolerance, checkpoint, key, tensor, size, digest,
                         [](const std::string& message, bool counted) {
                           if (counted) logger().count_error();
                           print_warning(message);  // once a run: the reference is read once, and
                         });                        // the first missing key is the one named
}

// No record is written from now on (the caller holds s->mutex); the engine runs on, each later call
// costing one relaxed load, as when logging is off.
inline void stop_writing(const std::shared_ptr<Session>& s) noexcept {
  s->stopped = true;
  s->jsonl.sync();
  s->frames.sync();
  if (logger().session() == s) g_state.store(kOff, std::memory_order_relaxed);
  try {
    print_warning("logging stopped after " + std::to_string(s->seq) +
                  " records, as ORCH_LOG_STOP or ORCH_LOG_ON_NONFINITE=stop asked; the engine runs on");
  } catch (...) {  // std::bad_alloc: stopped all the same, unsaid
  }
}

// The out-of-line part of every log call.
// With `given_digest` (a summary computed on the GPU), `tensor.data` holds only the
// leading values the run keeps, so a run that writes the tensor itself (full or
// both mode) refuses the record.
ORCHLOG_NOINLINE ORCHLOG_API bool write_record(std::string_view checkpoint, const Tensor& tensor, const Key& given_key,
                                               MetaSpan meta, CallFields call ORCHLOG_DEFAULT_ARG({}),
                                               const TensorDigest* given_digest ORCHLOG_DEFAULT_ARG(nullptr)) noexcept {
  Logger& lg = logger();
  try {
    settle_state();
    const std::shared_ptr<Session> session = lg.session();
    if (!session || g_state.load(std::memory_order_relaxed) != kOn) return false;
    const Settings& st = session->settings;

    KeyTexts texts;
    const Key key = valid_key(given_key, texts);
    std::string checkpoint_text;
    checkpoint = as_valid_utf8(checkpoint, checkpoint_text);
    if (!selected(st, checkpoint, key)) return false;

    std::string error;
    const auto size = measure(tensor, error);
    if (!size) {
      lg.report(kBadCall, "record '" + std::string(checkpoint) + "' not written: " + error);
      return false;
    }
    if (st.writes_frames() && size->nbytes > kMaxFrameDataBytes) {
      lg.report(kBadCall, "record '" + std::string(checkpoint) + "' not written: its " + std::to_string(size->nbytes) +
                              " bytes exceed the 4 GiB a binary-stream frame holds");
      return false;
    }
    if (given_digest != nullptr && st.writes_frames()) {
      lg.report(kCuda, "record '" + std::string(checkpoint) +
                           "' not written: its summary was computed on the GPU, but this run writes whole tensors");
      return false;
    }
    const SortedMeta sorted_meta(meta);
    // Built in place, the digest (the expensive part, outside the lock) included: a default-built one
    // zeroed its 600 bytes to be overwritten by a copy.
    RecordParts parts{checkpoint,  key,   call,
                      &tensor,     *size, given_digest != nullptr ? *given_digest : digest(tensor, *size),
                      &sorted_meta};
    const Key resolved_key = resolved(key, run_fields(st.knobs));
    const AgainstVerdict verdict =
        compare_with_reference(*session, checkpoint, resolved_key, tensor, *size, parts.digest);
    const bool nonfinite = parts.digest.stats.nan_count != 0 || parts.digest.stats.inf_count != 0;

    std::lock_guard<std::mutex> lock(session->mutex);
    if (session->closed || session->stopped) return false;
    const bool first_nonfinite =
        nonfinite && !session->whole.nonfinite_seen && st.knobs.on_nonfinite != OnNonfinite::off;
    if (first_nonfinite) {
      session->whole.nonfinite_seen = true;
      print_warning("the first tensor holding NaN or Inf: " + key_description(checkpoint, resolved_key) + " (" +
                    std::to_string(parts.digest.stats.nan_count) + " NaN, " +
                    std::to_string(parts.digest.stats.inf_count) + " Inf; ORCH_LOG_ON_NONFINITE)");
    }
    const bool nonfinite_whole =
        st.knobs.on_nonfinite == OnNonfinite::full || st.knobs.on_nonfinite == OnNonfinite::stop;
    parts.call.full_reason =
        whole_because(session->whole, verdict, first_nonfinite, nonfinite_whole, resolved_key.token_idx,
                      st.knobs.against_context, st.knobs.stop == Stop::first_fail);
    // A record written whole keeps every value in JSONL (the binary stream holds the tensor anyway).
    const std::int64_t values = parts.call.full_reason ? kAllValues : st.knobs.values;
    const schema::RecordView view = record_view(parts, run_fields(st.knobs), session->seq, values);
    std::string& buf = session->buffer;
    if (st.writes_jsonl()) {
      buf.clear();
      append_jsonl(buf, view);
      if (!session->jsonl.write(buf.data(), buf.size(), error)) {
        lg.fail(session, error);
        return false;
      }
    }
    if (st.writes_frames()) {
      buf.clear();
      const FrameSplit frame = append_frame(buf, view);
      if (!session->frames.write({{buf.data(), frame.data_at},
                                  {frame.data.data, frame.data.size},
                                  {buf.data() + frame.data_at, buf.size() - frame.data_at}},
                                 error)) {
        lg.fail(session, error);
        return false;
      }
    }
    ++session->seq;
    if (buf.capacity() > (std::size_t{16} << 20)) std::string().swap(buf);  // values=all on a huge tensor
    const bool stop_now = (first_nonfinite && st.knobs.on_nonfinite == OnNonfinite::stop) ||
                          (session->whole.stop_after_context && session->whole.context_left == 0);
    if (stop_now) stop_writing(session);
    return true;
  } catch (...) {
    lg.report(kInternal, "a record was not written: out of memory");
    return false;
  }
}

ORCHLOG_API bool flush_run() noexcept {
  if (g_state.load(std::memory_order_relaxed) == kForked) settle_state();
  const auto session = logger().session();
  if (!session) return true;
  try {
    std::lock_guard<std::mutex> lock(session->mutex);
    return session->jsonl.sync() && session->frames.sync();
  } catch (...) {
    return false;
  }
}

ORCHLOG_API void close_run() noexcept {
  try {
    std::lock_guard<std::mutex> lock(logger().configure_mutex);
    settle_fork_locked();
    logger().install(nullptr);
  } catch (...) {
  }
}

ORCHLOG_API Status run_status() noexcept {
  Status s;
  try {
    if (g_state.load(std::memory_order_relaxed) == kForked) settle_state();
    Logger& lg = logger();
    s.errors = lg.errors();
    s.enabled = g_state.load(std::memory_order_relaxed) == kOn;
    if (const auto session = lg.session()) {
      std::lock_guard<std::mutex> lock(session->mutex);
      s.records = session->seq;
      s.path = session->settings.path;
      s.binary_path = session->settings.binary_path;
    }
  } catch (...) {
  }
  return s;
}

#endif  // ORCHLOG_DEFINE_API

}  // namespace detail
}  // namespace orchlog
