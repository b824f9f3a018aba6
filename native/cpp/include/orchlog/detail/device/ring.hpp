// The record ring of captured CUDA graphs.
//
// A log call met during stream capture records into the graph the work that
// fills one slot of this ring (its summary, and the leading values or, in
// full mode, the whole tensor), then a host node that calls Ring::notify.
// Each replay of the graph fills a slot again; the writer thread writes the
// filled slots as records and frees them.
//
// Two blocks of memory. The shared block (mapped pinned memory on a GPU)
// holds the slots and what the writer must see; in it every word has one
// writer, the device or the host, never both, and nobody does an atomic
// operation on it: a GPU's atomics on host memory are atomic only among its
// own threads, and system-wide ones need hardware most PCIe machines lack
// (compute-sanitizer reports them). The device block (device memory) holds
// the claim counter and the slots' busy flags, the only words fills race
// for, with device-wide atomics. The CPU tests use plain memory for both,
// with threads standing in for the replays.
//
// A log call's replays never overlap (a graph's launches are serialized), so
// its counters (SiteCounts) have one writer at a time. Slot protocol, run by
// the device (claim_slot, publish_slot):
//   1. replay r = the site's replays, then replays = r + 1;
//   2. claims += 1 gives the claim number t; the slot is t % slots; the fill
//      takes the slot's busy flag (0 -> 1) and finds it consumed (published
//      == consumed: the writer is done with what it held), else the record
//      is dropped and counted in the site's `dropped`: a replay never waits
//      and the ring never grows;
//   3. the filler writes the header and payload, then published = t + 1
//      (after a system-wide fence), then the site's resolved = r + 1 (also
//      after a drop), then clears the busy flag;
//   4. the writer reads every site's resolved, then takes each slot whose
//      published differs from its consumed and whose replay is below its
//      site's resolved (every earlier replay of that site is then published
//      and visible, or dropped), writes them in claim order and sets
//      consumed = published.
// The sites' resolved replays are the records expected; the trace's last
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

// One recorded log call's counters, written only by its own fills.
struct SiteCounts {
  std::uint64_t replays;   // fills begun
  std::uint64_t resolved;  // fills published or dropped: the records expected
  std::uint64_t dropped;   // fills that found their slot taken
  std::uint64_t unused;
};

struct SlotHeader {
  std::uint32_t site;  // the recorded log call (Ring::register_site)
  std::uint32_t unused;
  std::uint64_t claim;   // claim number: the order records are written in
  std::uint64_t replay;  // how many times this log call's node had run before
  std::uint64_t payload_bytes;
  Summary summary;
  // then the payload: the leading values the run keeps, or the whole tensor
};

// Where a fill finds everything, as the filler addresses it.
struct RingView {
  SiteCounts* sites;
  std::uint64_t* published;       // per slot: claim + 1 of the record it holds (device-written)
  const std::uint64_t* consumed;  // per slot: published as the writer last took it (host-written)
  unsigned char* slots;
  std::uint64_t slot_bytes;
  std::uint64_t slot_count;
  std::uint64_t* claims;  // device block
  std::uint32_t* busy;    // device block, per slot
};

// Byte layout of the shared block: site counts, published, consumed, slots (64-byte aligned).
inline std::uint64_t published_offset(std::uint32_t max_sites) { return sizeof(SiteCounts) * max_sites; }
inline std::uint64_t consumed_offset(std::uint32_t max_sites, std::uint64_t slots) {
  return published_offset(max_sites) + 8 * slots;
}
inline std::uint64_t slots_offset(std::uint32_t max_sites, std::uint64_t slots) {
  return (consumed_offset(max_sites, slots) + 8 * slots + 63) / 64 * 64;
}

// The view of a shared block at `shared` and a device block at `device` (the filler's addresses).
inline RingView ring_view(void* shared, void* device, std::uint64_t slots, std::uint64_t slot_bytes,
                          std::uint32_t max_sites) {
  auto* base = static_cast<unsigned char*>(shared);
  auto* claims = static_cast<std::uint64_t*>(device);
  return {reinterpret_cast<SiteCounts*>(base),
          reinterpret_cast<std::uint64_t*>(base + published_offset(max_sites)),
          reinterpret_cast<const std::uint64_t*>(base + consumed_offset(max_sites, slots)),
          base + slots_offset(max_sites, slots),
          slot_bytes,
          slots,
          claims,
          reinterpret_cast<std::uint32_t*>(claims + 1)};
}

// Bytes of the device block for `slots` slots.
inline std::uint64_t device_block_bytes(std::uint64_t slots) { return 8 + 4 * slots; }

// A word of the shared block, read or written by its one writer's rules.
ORCHLOG_HD inline std::uint64_t shared_load(const std::uint64_t* p) {
#if defined(__CUDA_ARCH__)
  const std::uint64_t v = *static_cast<const volatile std::uint64_t*>(p);
  __threadfence_system();  // what follows is read after it
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

ORCHLOG_HD inline void shared_store(std::uint64_t* p, std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  __threadfence_system();  // what came before is seen first
  *static_cast<volatile std::uint64_t*>(p) = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

// The device block's words: device-wide atomics.
ORCHLOG_HD inline std::uint64_t next_claim(std::uint64_t* claims) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(reinterpret_cast<unsigned long long*>(claims), 1ull);
#else
  return __atomic_fetch_add(claims, 1, __ATOMIC_ACQ_REL);
#endif
}

ORCHLOG_HD inline bool take_busy(std::uint32_t* flag) {
#if defined(__CUDA_ARCH__)
  return atomicCAS(reinterpret_cast<unsigned int*>(flag), 0u, 1u) == 0u;
#else
  std::uint32_t expected = 0;
  return __atomic_compare_exchange_n(flag, &expected, 1u, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#endif
}

ORCHLOG_HD inline void clear_busy(std::uint32_t* flag) {
#if defined(__CUDA_ARCH__)
  __threadfence();
  atomicExch(reinterpret_cast<unsigned int*>(flag), 0u);
#else
  __atomic_store_n(flag, 0u, __ATOMIC_RELEASE);
#endif
}

ORCHLOG_HD inline SlotHeader* ring_slot(unsigned char* slots, std::uint64_t slot_bytes, std::uint64_t i) {
  return reinterpret_cast<SlotHeader*>(slots + i * slot_bytes);
}

ORCHLOG_HD inline unsigned char* slot_payload(SlotHeader* slot) { return reinterpret_cast<unsigned char*>(slot + 1); }

// Steps 1 and 2: the slot to fill for one record of `site`, or nullptr when the
// ring is full (the drop is counted and the replay resolved).
ORCHLOG_HD inline SlotHeader* claim_slot(const RingView& v, std::uint32_t site) {
  SiteCounts& counts = v.sites[site];
  const std::uint64_t replay = shared_load(&counts.replays);
  shared_store(&counts.replays, replay + 1);
  const std::uint64_t t = next_claim(v.claims);
  const std::uint64_t i = t % v.slot_count;
  if (take_busy(&v.busy[i])) {
    if (shared_load(&v.published[i]) == shared_load(&v.consumed[i])) {
      SlotHeader* slot = ring_slot(v.slots, v.slot_bytes, i);
      slot->site = site;
      slot->claim = t;
      slot->replay = replay;
      return slot;
    }
    clear_busy(&v.busy[i]);
  }
  shared_store(&counts.dropped, shared_load(&counts.dropped) + 1);
  shared_store(&counts.resolved, replay + 1);
  return nullptr;
}

// Step 3, once the header's payload_bytes, summary and payload are written.
ORCHLOG_HD inline void publish_slot(const RingView& v, SlotHeader* slot) {
  const std::uint64_t i = slot->claim % v.slot_count;
  shared_store(&v.published[i], slot->claim + 1);
  shared_store(&v.sites[slot->site].resolved, slot->replay + 1);
  clear_busy(&v.busy[i]);
}

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

  // Bytes of the shared block.
  static std::uint64_t memory_bytes(std::uint64_t slots, std::uint64_t slot_bytes, std::uint32_t max_sites) {
    return slots_offset(max_sites, slots) + slots * slot_bytes;
  }

  // `memory` (memory_bytes, zeroed, 64-byte aligned) is the shared block; with
  // `writer_thread` the ring writes on its own thread after each notify(), else on drain().
  Ring(void* memory, std::uint64_t slots, std::uint64_t slot_bytes, std::uint32_t max_sites, bool writer_thread)
      : view_(ring_view(memory, nullptr, slots, slot_bytes, max_sites)), taken_(slots, 0), max_sites_(max_sites) {
    if (writer_thread) writer_ = std::thread([this] { run(); });
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() { close(); }

  // What a filler uses: the shared block at `shared` as the filler addresses it (the device's
  // address of mapped memory; nullptr: the host's) and the zeroed device block at `device_block`.
  RingView view(void* device_block, void* shared = nullptr) const {
    return ring_view(shared ? shared : static_cast<void*>(view_.sites), device_block, view_.slot_count,
                     view_.slot_bytes, max_sites_);
  }

  // A new log call recorded into a graph (at capture time); its index, or -1
  // when the ring has no room for another site or the payload for its tensor.
  std::int64_t register_site(Site site) {
    std::lock_guard<std::mutex> lock(sites_mutex_);
    if (sites_.size() >= max_sites_ || slot_bytes_for(site.payload_bytes) > view_.slot_bytes) return -1;
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

  // Writes, in claim order, every published slot whose replay its site has resolved (every earlier
  // replay of the site is then published, and seen here, or dropped), frees them, reports new drops.
  // A slot published during the scan can hold a later replay than one the scan passed while it was
  // still being filled: its site's resolved, read first, leaves it for the next drain.
  void drain() noexcept {
    std::lock_guard<std::mutex> lock(drain_mutex_);
    const std::size_t sites = site_count();
    std::vector<std::uint64_t> resolved(sites);
    for (std::size_t s = 0; s < sites; ++s) resolved[s] = shared_load(&view_.sites[s].resolved);
    std::vector<std::pair<SlotHeader*, std::uint64_t>> taken;  // slot, its published
    for (std::uint64_t i = 0; i < view_.slot_count; ++i) {
      const std::uint64_t published = shared_load(&view_.published[i]);
      if (published == taken_[i]) continue;
      SlotHeader* slot = ring_slot(view_.slots, view_.slot_bytes, i);
      if (slot->site < sites && slot->replay < resolved[slot->site]) taken.emplace_back(slot, published);
    }
    std::sort(taken.begin(), taken.end(), [](const auto& a, const auto& b) { return a.first->claim < b.first->claim; });
    for (const auto& [slot, published] : taken) {
      if (write(*slot)) written_.fetch_add(1, std::memory_order_relaxed);
      const std::uint64_t i = slot->claim % view_.slot_count;
      taken_[i] = published;
      shared_store(const_cast<std::uint64_t*>(&view_.consumed[i]), published);
    }
    const std::uint64_t dropped = tally().dropped;
    const std::uint64_t reported = reported_drops_.exchange(dropped, std::memory_order_relaxed);
    if (dropped > reported) {
      Logger& lg = logger();
      for (std::uint64_t k = reported; k < dropped; ++k) lg.count_error();
      lg.warn_once(kCudaRingFull, "records of a captured CUDA graph were dropped: the record ring (" +
                                      std::to_string(view_.slot_count) +
                                      " slots) was full when a replay logged; the trace's orchlog.graph_records "
                                      "record says how many");
    }
  }

  Tally tally() const {
    Tally t;
    for (std::size_t s = 0, n = site_count(); s < n; ++s) {
      t.expected += shared_load(&view_.sites[s].resolved);  // read first: its drops are then seen
      t.dropped += shared_load(&view_.sites[s].dropped);
    }
    t.written = written_.load(std::memory_order_relaxed);
    return t;
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

  std::size_t site_count() const {
    std::lock_guard<std::mutex> lock(sites_mutex_);
    return sites_.size();
  }

  RingView view_;                     // the host's addresses of the shared block (no device block)
  std::vector<std::uint64_t> taken_;  // per slot: the published value the writer last took (its consumed)
  std::uint32_t max_sites_;
  mutable std::mutex sites_mutex_;
  std::mutex drain_mutex_, wake_mutex_;
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
__global__ void ring_fill_kernel(RingView ring, std::uint32_t site, const Summary* summary, const unsigned char* tensor,
                                 std::uint64_t payload) {
  __shared__ SlotHeader* slot;
  if (threadIdx.x == 0) slot = claim_slot(ring, site);
  __syncthreads();
  if (slot == nullptr) return;
  const auto* from = reinterpret_cast<const std::uint64_t*>(summary);
  auto* to = reinterpret_cast<std::uint64_t*>(&slot->summary);
  for (std::uint64_t i = threadIdx.x; i < sizeof(Summary) / 8; i += blockDim.x) to[i] = from[i];
  unsigned char* out = slot_payload(slot);
  for (std::uint64_t i = threadIdx.x; i < payload; i += blockDim.x) out[i] = tensor[i];
  __threadfence_system();  // each thread's writes reach the host before the slot is published
  __syncthreads();
  if (threadIdx.x == 0) {
    slot->payload_bytes = payload;
    publish_slot(ring, slot);
  }
}

// The host node after it: what the graph calls on the host after each replay (no CUDA call in it).
inline void CUDART_CB ring_notify(void* ring) { static_cast<Ring*>(ring)->notify(); }
#endif

}  // namespace device
}  // namespace detail
}  // namespace orchlog
