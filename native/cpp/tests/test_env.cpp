// Env knob parsing reproduces env.json; `created` follows SOURCE_DATE_EPOCH.
#include <gtest/gtest.h>

#include <ctime>
#include <string>

#include "orchlog/detail/logger/env.hpp"
#include "support/json.hpp"

namespace t = orchlog_test;
namespace d = orchlog::detail;

TEST(Env, EveryKnobVectorParsesToItsValueAndWarnsWhenItShould) {
  const t::Json doc = t::load_vectors("env.json");
  for (const t::Json& c : doc["knobs"].items) {
    const std::string knob = c["knob"].str();
    const char* raw = c["raw"].is_null() ? nullptr : c["raw"].str().c_str();
    SCOPED_TRACE(knob + "=" + (raw ? raw : "(unset)"));
    bool warned = false;
    if (knob == "ORCH_LOG_VALUES") {
      const auto p = d::parse_values(raw);
      EXPECT_EQ(p.value, c["value"].i64());
      warned = !p.warning.empty();
    } else if (knob == "ORCH_LOG_MODE") {
      const auto p = d::parse_mode(raw);
      EXPECT_EQ(d::mode_name(p.value), c["value"].str());
      warned = !p.warning.empty();
    } else if (knob == "ORCH_LOG_RANK") {
      const auto p = d::parse_int("ORCH_LOG_RANK", "0", raw, 0);
      EXPECT_EQ(p.value, c["value"].i64());
      warned = !p.warning.empty();
    } else if (knob == "ORCH_LOG_WORLD_SIZE") {
      const auto p = d::parse_int("ORCH_LOG_WORLD_SIZE", "1", raw, 1);
      EXPECT_EQ(p.value, c["value"].i64());
      warned = !p.warning.empty();
    } else {
      ADD_FAILURE() << "a knob this test does not know: " << knob;
    }
    EXPECT_EQ(warned, c["warning"].b);
  }
}

TEST(Env, EveryPathTemplateExpandsRankAndPidOnly) {
  const t::Json doc = t::load_vectors("env.json");
  for (const t::Json& c : doc["paths"].items)
    EXPECT_EQ(d::expand_path(c["template"].str(), c["rank"].i64(), c["pid"].i64()), c["path"].str());
}

TEST(Env, CreatedComesFromSourceDateEpochOrElseNow) {
  const t::Json doc = t::load_vectors("headers.json");
  const std::string now = d::format_utc(std::time(nullptr));
  for (const t::Json& c : doc["created_from_source_date_epoch"].items) {
    SCOPED_TRACE("SOURCE_DATE_EPOCH=" + c["SOURCE_DATE_EPOCH"].str());
    const auto p = d::created_timestamp(c["SOURCE_DATE_EPOCH"].str().c_str());
    if (c["created"].is_null()) {
      EXPECT_EQ(p.value.substr(0, 13), now.substr(0, 13));  // the current time (to the hour, to stay off the clock)
    } else {
      EXPECT_EQ(p.value, c["created"].str());
    }
    EXPECT_EQ(!p.warning.empty(), c["warning"].b);
  }
  EXPECT_EQ(d::created_timestamp(nullptr).value.size(), std::string("2026-01-02T03:04:05Z").size());
}
