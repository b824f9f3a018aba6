// The host side of the record ring of captured CUDA graphs (detail/device/ring.hpp),
// with plain memory standing in for mapped and device memory and threads standing
// in for graph replays (one thread per site, as a graph's launches never overlap): each claims a slot, fills it with
// the summary the kernels would compute (their CPU twin), publishes it and calls notify() as the graph's host node
// does; the writer thread writes the records.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "orchlog/detail/device/ring.hpp"
#include "orchlog/logger.hpp"
#include "support/logger_setup.hpp"
#include "support/scratch.hpp"

namespace t = orchlog_test;
namespace dev = orchlog::detail::device;
using orchlog::DType;

namespace {

// Zeroed, 64-byte aligned memory for a ring.
struct RingMemory {
  explicit RingMemory(std::uint64_t bytes) : words((bytes + 63) / 8 + 8, 0) {}
  void* get() {
    auto at = reinterpret_cast<std::uintptr_t>(words.data());
    return reinterpret_cast<void*>((at + 63) / 64 * 64);
  }
  std::vector<std::uint64_t> words;
};

// The tensor replay r of a site logs: 96 f32 values that differ per replay.
std::vector<float> tensor_of(int site, std::uint64_t replay) {
  std::vector<float> v(96);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(site) * 100.0f + static_cast<float>(replay) + 0.125f * static_cast<float>(i);
  return v;
}

// What the recorded kernels do on each replay, on the CPU: one record of `site` into `ring`.
// True when a slot was had (else the drop was counted).
bool replay_once(const dev::RingView& ring, int site, std::uint64_t values) {
  dev::SlotHeader* slot = dev::claim_slot(ring, static_cast<std::uint32_t>(site));
  if (slot == nullptr) return false;
  const std::vector<float> x = tensor_of(site, slot->replay);
  const dev::Elements e{reinterpret_cast<const std::uint8_t*>(x.data()), DType::f32, 96};
  slot->summary = dev::summarize_twin(e, sizeof(float) * x.size());
  slot->payload_bytes = values * sizeof(float);
  std::memcpy(dev::slot_payload(slot), x.data(), slot->payload_bytes);
  dev::publish_slot(ring, slot);
  return true;
}

std::unique_ptr<dev::Ring> make_ring(RingMemory& memory, std::uint64_t slots, bool writer_thread, int sites) {
  auto ring =
      std::make_unique<dev::Ring>(memory.get(), slots, dev::slot_bytes_for(10 * sizeof(float)), 8, writer_thread);
  for (int s = 0; s < sites; ++s) {
    const auto key = orchlog::Key(orchlog::none, s, "attn", 7);
    EXPECT_EQ(
        ring->register_site(dev::Ring::site("h" + std::to_string(s), key, DType::f32, {96}, 10 * sizeof(float), false)),
        s);
  }
  return ring;
}

}  // namespace

TEST(DeviceRing, EveryReplayOfEverySiteIsWrittenAsTheNextStepInTheHostsBytes) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.jsonl"))));
  const int sites = 4, replays = 50;
  RingMemory memory(dev::Ring::memory_bytes(256, dev::slot_bytes_for(40), 8)), device(dev::device_block_bytes(256));
  auto ring = make_ring(memory, 256, true, sites);
  const dev::RingView view = ring->view(device.get());
  std::vector<std::thread> graphs;  // one thread per site: its graph node replayed `replays` times
  for (int s = 0; s < sites; ++s)
    graphs.emplace_back([&ring, &view, s] {
      for (int r = 0; r < replays; ++r) {
        EXPECT_TRUE(replay_once(view, s, 10));
        ring->notify();
      }
    });
  for (auto& g : graphs) g.join();
  ring->close();
  const dev::Ring::Tally tally = ring->tally();
  EXPECT_EQ(tally.expected, static_cast<std::uint64_t>(sites * replays));
  EXPECT_EQ(tally.written, tally.expected);
  EXPECT_EQ(tally.dropped, 0u);
  orchlog::close();

  const auto lines = t::lines_of(t::read_file(dir.file("run.jsonl")));
  ASSERT_EQ(lines.size(), 1u + sites * replays + 1u);  // header, records, the tally
  std::vector<int> next_replay(sites, 0);
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
    const t::Json record = t::parse_json(lines[i]);
    const int site = std::stoi(record["checkpoint"].str().substr(1));
    // The capture's step (7) is the first replay's; each site's replays come in order.
    const std::int64_t replay = record["step"].i64() - 7;
    EXPECT_EQ(replay, next_replay[static_cast<std::size_t>(site)]++);
    // The record is byte for byte what the host emitter writes for that replay's tensor (whose
    // values differ per replay, so a step that is not the slot's replay would not match).
    const std::vector<float> x = tensor_of(site, static_cast<std::uint64_t>(replay));
    const auto key = orchlog::Key(orchlog::none, site, "attn", static_cast<std::int32_t>(7 + replay));
    orchlog::RecordInput in;
    in.checkpoint = record["checkpoint"].str();
    in.team = "test";
    in.key = key;
    in.seq = static_cast<std::int64_t>(i - 1);
    in.tensor = {x.data(), DType::f32, {96}};
    in.values = 10;
    EXPECT_EQ(lines[i], orchlog::encode_record(in)->jsonl);
  }
  const t::Json last = t::parse_json(lines.back());
  EXPECT_EQ(last["checkpoint"].str(), "orchlog.graph_records");
  EXPECT_EQ(last["meta"]["expected"].i64(), sites * replays);
  EXPECT_EQ(last["meta"]["written"].i64(), sites * replays);
  EXPECT_EQ(last["meta"]["dropped"].i64(), 0);
}

TEST(DeviceRing, AFullRingDropsWithoutWaitingCountsEveryDropAndTheTraceSaysSo) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.jsonl"))));
  RingMemory memory(dev::Ring::memory_bytes(4, dev::slot_bytes_for(40), 8)), device(dev::device_block_bytes(4));
  auto ring = make_ring(memory, 4, false, 2);  // no writer thread: nothing is written until drain()
  const dev::RingView view = ring->view(device.get());
  const std::uint64_t errors = orchlog::status().errors;
  std::atomic<int> had{0};
  std::vector<std::thread> graphs;
  for (int s = 0; s < 2; ++s)
    graphs.emplace_back([&, s] {
      for (int r = 0; r < 20; ++r) had += replay_once(view, s, 10) ? 1 : 0;
    });
  for (auto& g : graphs) g.join();  // every replay returned although the writer never ran
  EXPECT_EQ(had.load(), 4);
  t::CapturedStderr err;
  ring->close();
  const auto warnings = err.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("record ring (4 slots) was full"), std::string::npos) << warnings[0];
  EXPECT_EQ(orchlog::status().errors, errors + 36);
  orchlog::close();

  const auto lines = t::lines_of(t::read_file(dir.file("run.jsonl")));
  ASSERT_EQ(lines.size(), 1u + 4u + 1u);
  const t::Json last = t::parse_json(lines.back());
  EXPECT_EQ(last["meta"]["expected"].i64(), 40);
  EXPECT_EQ(last["meta"]["written"].i64(), 4);
  EXPECT_EQ(last["meta"]["dropped"].i64(), 36);
}

TEST(DeviceRing, ASlotIsFreeAgainOnceWrittenSoALongRunNeedsNoMoreThanItsSlots) {
  t::ScratchDir dir;
  ASSERT_TRUE(orchlog::configure(t::options_for(dir.file("run.jsonl"))));
  RingMemory memory(dev::Ring::memory_bytes(2, dev::slot_bytes_for(40), 8)), device(dev::device_block_bytes(2));
  auto ring = make_ring(memory, 2, false, 1);
  const dev::RingView view = ring->view(device.get());
  for (int r = 0; r < 100; ++r) {  // a drain after every replay, as the host node makes the writer do
    ASSERT_TRUE(replay_once(view, 0, 10)) << r;
    ring->drain();
  }
  ring->close();
  EXPECT_EQ(ring->tally().written, 100u);
  EXPECT_EQ(ring->tally().dropped, 0u);
  orchlog::close();
}

TEST(DeviceRing, ASiteThatDoesNotFitTheSlotsOrTheSiteTableIsRefused) {
  RingMemory memory(dev::Ring::memory_bytes(2, dev::slot_bytes_for(40), 1));
  dev::Ring ring(memory.get(), 2, dev::slot_bytes_for(40), 1, false);
  EXPECT_EQ(ring.register_site(dev::Ring::site("big", {}, DType::f32, {4096}, 4 * 4096, true)), -1);
  EXPECT_EQ(ring.register_site(dev::Ring::site("a", {}, DType::f32, {10}, 40, false)), 0);
  EXPECT_EQ(ring.register_site(dev::Ring::site("b", {}, DType::f32, {10}, 40, false)), -1);
}
