// The record ring of captured CUDA graphs.
//
// A log call met during stream capture records into the graph the work that
// fills one slot of this ring (its summary, and the leading values or, in
// full mode, the whole tensor), then a host node that calls Ring::notify.
// Each replay of the graph fills a slot again; the writer thread writes the
// filled slots as records and frees them.
//
// The ring lives in memory both sides reach: mapped pinned memory on a GPU,
// plain memory in the CPU tests, whose threads stand in for the replays.
// Slot protocol (claim_slot / publish_slot, run by the device):
//   1. claims += 1 gives the claim number t; the slot is t % slots;
//   2. the slot goes Free -> Filling by compare-and-swap; when it is not
//      Free (the writer is behind by a whole ring) the record is dropped and
//      counted (`dropped`): a replay never waits and the ring never grows;
//   3. the filler writes the payload, then Filling -> Filled with release
//      order (after a system-wide fence on the device);
//   4. the writer takes Filled slots in claim order, writes each and stores
//      Free with release order.
// `claims` is therefore the number of records expected; the trace's last
// record (checkpoint `orchlog.graph_records`) says how many were expected,
// written and dropped, so a partial dump is never silent.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "orchlog/detail/device/summary_math.hpp"
#include "orchlog/detail/device/summary_twin.hpp"
#include "orchlog/detail/hd.hpp"
#include "orchlog/detail/logger/core.hpp"

namespace orchlog {
namespace detail {
namespace device {

enum SlotState : std::uint32_t { kSlotFree = 0, kSlotFilling = 1, kSlotFilled = 2 };

// What the device and the writer share. Sizes are multiples of 8 bytes.
struct RingControl {
  std::uint64_t claims;   // fills attempted: the records expected
  std::uint64_t dropped;  // fills that found their slot taken
};

struct SlotHeader {
  std::uint32_t state;
  std::uint32_t site;    // the recorded log call (Ring::register_site)
  std::uint64_t claim;   // claim number: the order records are written in
  std::uint64_t replay;  // how many times this log call's node had run before
  std::uint64_t payload_bytes;
  Summary summary;
  // then the payload: the leading values the run keeps, or the whole tensor
};

ORCHLOG_HD inline std::uint64_t ring_fetch_add(std::uint64_t* p, std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  return atomicAdd_system(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
#else
  return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
#endif
}

ORCHLOG_HD inline bool ring_swap_state(std::uint32_t* p, std::uint32_t from, std::uint32_t to) {
#if defined(__CUDA_ARCH__)
  return atomicCAS_system(reinterpret_cast<unsigned int*>(p), from, to) == from;
#else
  return __atomic_compare_exchange_n(p, &from, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#endif
}

ORCHLOG_HD inline void ring_release_state(std::uint32_t* p, std::uint32_t to) {
#if defined(__CUDA_ARCH__)
  __threadfence_system();
  atomicExch_system(reinterpret_cast<unsigned int*>(p), to);
#else
  __atomic_store_n(p, to, __ATOMIC_RELEASE);
#endif
}

ORCHLOG_HD inline SlotHeader* ring_slot(unsigned char* slots, std::uint64_t slot_bytes, std::uint64_t i) {
  return reinterpret_cast<SlotHeader*>(slots + i * slot_bytes);
}

ORCHLOG_HD inline unsigned char* slot_payload(SlotHeader* slot) { return reinterpret_cast<unsigned char*>(slot + 1); }

// Steps 1 and 2: the slot to fill for one record of `site`, or nullptr when the
// ring is full (the drop is counted). `replays` holds one counter per site.
ORCHLOG_HD inline SlotHeader* claim_slot(RingControl* control, std::uint64_t* replays, unsigned char* slots,
                                         std::uint64_t slot_bytes, std::uint64_t slot_count, std::uint32_t site) {
  const std::uint64_t replay = ring_fetch_add(&replays[site], 1);
  const std::uint64_t t = ring_fetch_add(&control->claims, 1);
  SlotHeader* slot = ring_slot(slots, slot_bytes, t % slot_count);
  if (!ring_swap_state(&slot->state, kSlotFree, kSlotFilling)) {
    ring_fetch_add(&control->dropped, 1);
    return nullptr;
  }
  slot->site = site;
  slot->claim = t;
  slot->replay = replay;
  return slot;
}

// Step 3.
ORCHLOG_HD inline void publish_slot(SlotHeader* slot) { ring_release_state(&slot->state, kSlotFilled); }

// Bytes of one slot holding `payload` bytes of payload.
inline std::uint64_t slot_bytes_for(std::uint64_t payload) { return (sizeof(SlotHeader) + payload + 63) / 64 * 64; }

// The host side: the recorded log calls, the writer, the counts.
class Ring {
 public:
  // One log call recorded into a graph: everything its records share.
  struct Site {
    std::string checkpoint;
    Key key;  // text parts point into `texts`
    std::vector<std::string> texts;
    DType dtype = DType::f32;
    Shape shape;
    std::uint64_t payload_bytes = 0;
    bool full = false;  // the payload is the whole tensor (full mode), else its leading values
  };

  // A site whose text key parts are copied (the caller's may go).
  static Site site(std::string_view checkpoint, const Key& key, DType dtype, const Shape& shape,
                   std::uint64_t payload_bytes, bool full) {
    Site s;
    s.checkpoint = std::string(checkpoint);
    s.key = key;
    for_each_key_part(s.key, [&s](std::string_view, auto& part) {
      if constexpr (std::is_same_v<std::decay_t<decltype(part)>, std::optional<std::string_view>>)
        s.texts.push_back(part ? std::string(*part) : std::string());
    });
    s.dtype = dtype;
    s.shape = shape;
    s.payload_bytes = payload_bytes;
    s.full = full;
    return s;
  }

  struct Tally {
    std::uint64_t expected = 0, written = 0, dropped = 0;
  };

  static std::uint64_t memory_bytes(std::uint64_t slots, std::uint64_t slot_bytes, std::uint32_t max_sites) {
    return sizeof(RingControl) + 8 * static_cast<std::uint64_t>(max_sites) + slots * slot_bytes;
  }

  // `memory` (memory_bytes, zeroed, 64-byte aligned) is shared with whoever fills the slots;
  // with `writer_thread` the ring writes on its own thread after each notify(), else on drain().
  Ring(void* memory, std::uint64_t slots, std::uint64_t slot_bytes, std::uint32_t max_sites, bool writer_thread)
      : control_(static_cast<RingControl*>(memory)),
        replays_(reinterpret_cast<std::uint64_t*>(control_ + 1)),
        slots_(reinterpret_cast<unsigned char*>(replays_ + max_sites)),
        slot_count_(slots),
        slot_bytes_(slot_bytes),
        max_sites_(max_sites) {
    if (writer_thread) writer_ = std::thread([this] { run(); });
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() { close(); }

  RingControl* control() const { return control_; }
  std::uint64_t* replays() const { return replays_; }
  unsigned char* slots() const { return slots_; }
  std::uint64_t slot_count() const { return slot_count_; }
  std::uint64_t slot_bytes() const { return slot_bytes_; }

  // A new log call recorded into a graph (at capture time); its index, or -1
  // when the ring has no room for another site or the payload for its tensor.
  std::int64_t register_site(Site site) {
    std::lock_guard<std::mutex> lock(sites_mutex_);
    if (sites_.size() >= max_sites_ || slot_bytes_for(site.payload_bytes) > slot_bytes_) return -1;
    sites_.push_back(std::move(site));
    return static_cast<std::int64_t>(sites_.size() - 1);
  }

  // What the graph's host node calls after each replay: wakes the writer.
  // Takes a mutex that the writer holds only to read a counter.
  void notify() noexcept {
    {
      std::lock_guard<std::mutex> lock(wake_mutex_);
      ++notified_;
    }
    wake_.notify_one();
  }

  // Writes every filled slot claimed before the drain began, in claim order, and frees it; reports new
  // drops. A site's next replay claims its slot only after the last one is published, so every earlier
  // replay of a site whose slot is taken here is filled by now; a slot claimed during the scan waits for
  // the next drain, else a site's replay could be written before an earlier one that the scan had
  // passed while it was still being filled.
  void drain() noexcept {
    std::lock_guard<std::mutex> lock(drain_mutex_);
    const std::uint64_t claimed = __atomic_load_n(&control_->claims, __ATOMIC_ACQUIRE);
    std::vector<SlotHeader*> filled;
    for (std::uint64_t i = 0; i < slot_count_; ++i) {
      SlotHeader* slot = ring_slot(slots_, slot_bytes_, i);
      if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == kSlotFilled && slot->claim < claimed)
        filled.push_back(slot);
    }
    std::sort(filled.begin(), filled.end(),
              [](const SlotHeader* a, const SlotHeader* b) { return a->claim < b->claim; });
    for (SlotHeader* slot : filled) {
      if (write(*slot)) written_.fetch_add(1, std::memory_order_relaxed);
      ring_release_state(&slot->state, kSlotFree);
    }
    const std::uint64_t dropped = __atomic_load_n(&control_->dropped, __ATOMIC_ACQUIRE);
    const std::uint64_t reported = reported_drops_.exchange(dropped, std::memory_order_relaxed);
    if (dropped > reported) {
      Logger& lg = logger();
      for (std::uint64_t k = reported; k < dropped; ++k) lg.count_error();
      lg.warn_once(kCudaRingFull, "records of a captured CUDA graph were dropped: the record ring (" +
                                      std::to_string(slot_count_) +
                                      " slots) was full when a replay logged; the trace's orchlog.graph_records "
                                      "record says how many");
    }
  }

  Tally tally() const {
    return {__atomic_load_n(&control_->claims, __ATOMIC_ACQUIRE), written_.load(std::memory_order_relaxed),
            __atomic_load_n(&control_->dropped, __ATOMIC_ACQUIRE)};
  }

  // Stops the writer after a last drain and writes the tally record (once).
  void close() noexcept {
    if (closed_.exchange(true)) return;
    if (writer_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(wake_mutex_);
        stopping_ = true;
      }
      wake_.notify_one();
      writer_.join();
    }
    drain();
    const Tally t = tally();
    const std::int64_t counts[3] = {static_cast<std::int64_t>(t.expected), static_cast<std::int64_t>(t.written),
                                    static_cast<std::int64_t>(t.dropped)};
    const MetaItem meta[3] = {{"dropped", counts[2]}, {"expected", counts[0]}, {"written", counts[1]}};
    write_record("orchlog.graph_records", Tensor{counts, DType::i64, {3}}, Key{}, {meta, 3});
  }

 private:
  void run() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(wake_mutex_);
        wake_.wait(lock, [&] { return stopping_ || notified_ != seen; });
        if (stopping_) return;
        seen = notified_;
      }
      drain();
    }
  }

  bool write(SlotHeader& slot) noexcept {
    try {
      Site site;
      {
        std::lock_guard<std::mutex> lock(sites_mutex_);
        if (slot.site >= sites_.size()) return false;
        site = sites_[slot.site];
      }
      Key key = site.key;
      std::size_t next = 0;
      for_each_key_part(key, [&site, &next](std::string_view, auto& part) {
        if constexpr (std::is_same_v<std::decay_t<decltype(part)>, std::optional<std::string_view>>) {
          if (part) part = site.texts[next];
          ++next;
        }
      });
      // The replay count goes into the step: the capture's step (0 when it gave none) is the first
      // replay's, each replay is the next, so replays pair with an eager run's steps byte for byte.
      key.step = static_cast<std::int32_t>(key.step.value_or(0) + static_cast<std::int64_t>(slot.replay));
      const Tensor tensor{slot_payload(&slot), site.dtype, site.shape};
      if (site.full) return write_record(site.checkpoint, tensor, key, {});
      const TensorDigest digest = finish(slot.summary);
      return write_record(site.checkpoint, tensor, key, {}, {}, &digest);
    } catch (...) {
      return false;
    }
  }

  RingControl* control_;
  std::uint64_t* replays_;
  unsigned char* slots_;
  std::uint64_t slot_count_, slot_bytes_;
  std::uint32_t max_sites_;
  std::mutex sites_mutex_, drain_mutex_, wake_mutex_;
  std::vector<Site> sites_;
  std::condition_variable wake_;
  std::uint64_t notified_ = 0;
  bool stopping_ = false;
  std::atomic<std::uint64_t> written_{0}, reported_drops_{0};
  std::atomic<bool> closed_{false};
  std::thread writer_;
};

#if defined(__CUDACC__)
// The node a captured log call records after its summary kernels: one block
// claims a slot, copies the Summary and the payload (the leading values or the
// whole tensor) into it and publishes it. Replayed with the graph.
template <class = void>
__global__ void ring_fill_kernel(RingControl* control, std::uint64_t* replays, unsigned char* slots,
                                 std::uint64_t slot_bytes, std::uint64_t slot_count, std::uint32_t site,
                                 const Summary* summary, const unsigned char* tensor, std::uint64_t payload) {
  __shared__ SlotHeader* slot;
  if (threadIdx.x == 0) slot = claim_slot(control, replays, slots, slot_bytes, slot_count, site);
  __syncthreads();
  if (slot == nullptr) return;
  const auto* from = reinterpret_cast<const std::uint64_t*>(summary);
  auto* to = reinterpret_cast<std::uint64_t*>(&slot->summary);
  for (std::uint64_t i = threadIdx.x; i < sizeof(Summary) / 8; i += blockDim.x) to[i] = from[i];
  unsigned char* out = slot_payload(slot);
  for (std::uint64_t i = threadIdx.x; i < payload; i += blockDim.x) out[i] = tensor[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    slot->payload_bytes = payload;
    publish_slot(slot);
  }
}

// The host node after it: what the graph calls on the host after each replay (no CUDA call in it).
inline void CUDART_CB ring_notify(void* ring) { static_cast<Ring*>(ring)->notify(); }
#endif

}  // namespace device
}  // namespace detail
}  // namespace orchlog
