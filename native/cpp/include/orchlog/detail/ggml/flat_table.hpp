// A small hash table from 64-bit keys to one byte, cleared in O(1) and
// allocation-free once it has grown to its working size: the ggml adapter's
// per-graph bookkeeping, consulted once for every graph node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace orchlog {
namespace detail {

class FlatTable {
 public:
  // The value stored under `key`, inserted as `fresh` when absent; `inserted`
  // says which happened.
  std::int8_t& find_or_insert(std::uint64_t key, std::int8_t fresh, bool& inserted) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    Slot* slot = &slots_[slot_of(key)];
    inserted = slot->generation != generation_;
    if (inserted) {
      *slot = Slot{key, generation_, fresh};
      ++size_;
    }
    return slot->value;
  }

  const std::int8_t* find(std::uint64_t key) const {
    if (slots_.empty()) return nullptr;
    const Slot& slot = slots_[slot_of(key)];
    return slot.generation == generation_ ? &slot.value : nullptr;
  }

  void clear() {
    size_ = 0;
    if (++generation_ == 0) {  // after 2^32 clears: really empty the slots once
      for (Slot& s : slots_) s.generation = 0;
      generation_ = 1;
    }
  }

  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t generation = 0;  // the slot is in use when it equals generation_
    std::int8_t value = 0;
  };

  static std::uint64_t mix(std::uint64_t k) {  // splitmix64's finaliser: pointers differ in few bits
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebull;
    return k ^ (k >> 31);
  }

  // The slot holding `key`, or the empty one where it would go (linear probing).
  std::size_t slot_of(std::uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(mix(key)) & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.generation != generation_ || slot.key == key) return i;
    }
  }

  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 256 : old.size() * 2, Slot{});
    const std::uint32_t live = generation_;
    generation_ = 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.generation != live) continue;
      slots_[slot_of(s.key)] = Slot{s.key, generation_, s.value};
      ++size_;
    }
  }

  std::vector<Slot> slots_;
  std::uint32_t generation_ = 1;
  std::size_t size_ = 0;
};

}  // namespace detail
}  // namespace orchlog
