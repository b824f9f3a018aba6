// ORCH_LOG_AGAINST and ORCH_LOG_ON_NONFINITE: which records a run writes
// whole, and when it stops writing.
//
// Each record is compared on arrival with the reference's record of its key
// (proof.hpp). The first record not proven within tolerance at its token, or
// at an earlier one, is written whole (full_reason "against"), and so are the
// ORCH_LOG_AGAINST_CONTEXT records after it: one run leaves whole tensors at
// the first divergence orchlog compare will name, whatever order the engine
// logs its tokens in, and a bounded number of them. The first record holding
// NaN or Inf is said once on stderr and, asked, written whole.
//
// Nothing here harms the host: a reference that cannot be read is a warning
// (counted) and the run logs as without it.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "orchlog/detail/against/proof.hpp"
#include "orchlog/detail/graft/reference.hpp"

namespace orchlog {
namespace detail {

// The reference, indexed on the first record, and how many records each key has had.
struct AgainstReference {
  std::mutex mutex;
  bool loaded = false;
  std::optional<ReferenceIndex> index;
  std::unordered_map<std::string, std::size_t> counts;
  bool warned_missing = false;
  bool warned_damaged = false;
};

// What a run has written whole so far (guarded by the session's mutex).
struct WholeRecords {
  std::optional<std::int64_t> first_failed_token;  // the smallest token of an "against" record
  bool tokenless_failed = false;                   // an "against" record without a token was written
  std::int64_t context_left = 0;
  bool stop_after_context = false;  // ORCH_LOG_STOP=first_fail, once the first "against" record is written
  bool nonfinite_seen = false;
};

inline constexpr std::string_view kFullAgainst = "against";
inline constexpr std::string_view kFullContext = "against_context";
inline constexpr std::string_view kFullNonfinite = "nonfinite";

// The verdict on one record: not compared (no reference, or no record of its key there), or
// whether it is proven within tolerance.
enum class AgainstVerdict : std::uint8_t { not_compared, within, not_within };

// Compares the record (resolved key, its tensor and digest) with the reference's record of the same key
// and occurrence. `report(message, counted)` hears of an unreadable reference (counted) and, once, of
// records the reference lacks (not counted: an engine may log more than the reference did).
template <class Report>
AgainstVerdict against_verdict(AgainstReference& ref, const std::string& path, double tolerance,
                               std::string_view checkpoint, const Key& key, const Tensor& tensor,
                               const TensorSize& size, const TensorDigest& digest, Report&& report) {
  const ReferenceTensor* found = nullptr;
  std::size_t occurrence = 0;
  std::string key_text = graft_key_text(checkpoint, key);
  {
    std::lock_guard<std::mutex> lock(ref.mutex);
    if (!ref.loaded) {
      ref.loaded = true;
      std::string error;
      ReferenceIndex index;
      const bool usable = index.build(path, error, ReferenceUse::against);
      if (!error.empty()) report(usable ? error : error + "; records are written as without it", true);
      if (usable) ref.index.emplace(std::move(index));
    }
    if (!ref.index) return AgainstVerdict::not_compared;
    occurrence = ref.counts[key_text]++;
    found = ref.index->find(key_text, occurrence);
    if (!found && !ref.warned_missing) {
      ref.warned_missing = true;
      report("ORCH_LOG_AGAINST: the reference holds no record " + key_description(checkpoint, key) + " (call " +
                 std::to_string(occurrence + 1) +
                 " under its key); records it lacks are written as summaries (said for the first only)",
             false);
    }
  }
  if (!found) return AgainstVerdict::not_compared;
  const ReferenceSummary& s = found->summary;
  const bool same_shape = found->shape.size() == tensor.shape.size() &&
                          std::equal(found->shape.begin(), found->shape.end(), tensor.shape.data());
  if (!same_shape) return AgainstVerdict::not_within;
  if (found->dtype == tensor.dtype && !s.blake3.empty() && s.blake3 == digest_view(digest.blake3))
    return AgainstVerdict::within;  // the same bytes
  if (s.nan_count != 0 || s.inf_count != 0 || digest.stats.nan_count != 0 || digest.stats.inf_count != 0)
    return AgainstVerdict::not_within;
  const std::uint64_t ref_bytes = static_cast<std::uint64_t>(size.numel) * schema::dtype_size(found->dtype);
  if (found->has_data && found->nbytes == ref_bytes && is_float(found->dtype) && is_float(tensor.dtype)) {
    // Checked whole (checksum, key, BLAKE3) as a graft's is; a frame that fails its checks now (the
    // file changed since it was indexed) leaves the summary read then, which passed them.
    std::vector<unsigned char> bytes;
    std::string why;
    if (ref.index->read(*found, key_text, bytes, why)) {
      return within_by_tensors(found->dtype, bytes.data(), tensor.dtype, static_cast<const unsigned char*>(tensor.data),
                               size.numel, tolerance)
                 ? AgainstVerdict::within
                 : AgainstVerdict::not_within;
    }
    std::lock_guard<std::mutex> lock(ref.mutex);
    if (!ref.warned_damaged) {
      ref.warned_damaged = true;
      report("ORCH_LOG_AGAINST: the reference record " + key_description(checkpoint, key) + " at byte " +
                 std::to_string(found->frame) + " of '" + path + "' is refused: " + why +
                 "; it is compared by its summary (said for the first only)",
             true);
    }
  }
  return within_by_sketch(s, digest, size.numel, tolerance) ? AgainstVerdict::within : AgainstVerdict::not_within;
}

// Why this record is written whole (none: as the mode says), given its verdict, whether it holds NaN or
// Inf and its token; updates what the run has written whole. Call under the session's lock, in the order
// records are written. `on_nonfinite_full` is ORCH_LOG_ON_NONFINITE full or stop.
inline std::optional<std::string_view> whole_because(WholeRecords& w, AgainstVerdict verdict, bool first_nonfinite,
                                                     bool on_nonfinite_full, const std::optional<std::int64_t>& token,
                                                     std::int64_t context, bool stop_first_fail) {
  std::optional<std::string_view> why;
  if (verdict == AgainstVerdict::not_within) {
    const bool earliest = token ? (!w.first_failed_token || *token < *w.first_failed_token) : !w.tokenless_failed;
    if (earliest) {
      if (token) {
        w.first_failed_token = *token;
      } else {
        w.tokenless_failed = true;
      }
      why = kFullAgainst;
      w.context_left = context;
      w.stop_after_context = w.stop_after_context || stop_first_fail;
    }
  }
  if (!why && w.context_left > 0) {
    why = kFullContext;
    --w.context_left;
  }
  if (first_nonfinite && on_nonfinite_full) why = kFullNonfinite;
  return why;
}

}  // namespace detail
}  // namespace orchlog
