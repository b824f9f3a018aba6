// Env knob parsing reproduces env.json; `created` follows SOURCE_DATE_EPOCH.
#include <gtest/gtest.h>

#include <ctime>
#include <string>
#include <vector>

#include "orchlog/detail/logger/env.hpp"
#include "support/json.hpp"

namespace t = orchlog_test;
namespace d = orchlog::detail;

namespace {
const orchlog::schema::KnobSpec* knob_named(const std::string& name) {
  for (const auto* k : orchlog::schema::kKnobs)
    if (name == k->name) return k;
  return nullptr;
}
}  // namespace

TEST(Env, EveryKnobVectorParsesToItsValueAndWarnsWhenItShould) {
  const t::Json doc = t::load_vectors("env.json");
  ASSERT_GT(doc["knobs"].size(), 20u);
  for (const t::Json& c : doc["knobs"].items) {
    const std::string name = c["knob"].str();
    const char* raw = c["raw"].is_null() ? nullptr : c["raw"].str().c_str();
    SCOPED_TRACE(name + "=" + (raw ? raw : "(unset)"));
    const auto* k = knob_named(name);
    ASSERT_NE(k, nullptr) << "a knob the generated table does not have";
    std::vector<std::string> warnings;
    const std::int64_t v = d::parse_knob_number(*k, raw, warnings).value_or(d::knob_default_number(*k));
    if (k->type == d::KnobType::choice) {
      EXPECT_EQ(k->choices[v], c["value"].str());
    } else if (k->type == d::KnobType::boolean) {
      EXPECT_EQ(v != 0, c["value"].b);
    } else {
      EXPECT_EQ(v, c["value"].i64());
    }
    if (c["warning"].is_null()) {
      EXPECT_TRUE(warnings.empty());
    } else {
      EXPECT_EQ(warnings, std::vector<std::string>{c["warning"].str()});
    }
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
    std::vector<std::string> warnings;
    const auto seconds =
        d::parse_knob_number(orchlog::schema::kKnobCreated, c["SOURCE_DATE_EPOCH"].str().c_str(), warnings);
    if (c["created"].is_null()) {
      EXPECT_FALSE(seconds.has_value());  // the current time
    } else {
      EXPECT_EQ(d::format_utc(*seconds), c["created"].str());
    }
    EXPECT_EQ(!warnings.empty(), c["warning"].b);
  }
  std::vector<std::string> none;
  EXPECT_EQ(d::knob_epoch(std::int64_t{0}, orchlog::schema::kKnobCreated, none), "1970-01-01T00:00:00Z");
  EXPECT_EQ(d::knob_epoch(std::int64_t{-5}, orchlog::schema::kKnobCreated, none).substr(0, 13), now.substr(0, 13));
  EXPECT_EQ(none.size(), 1u);
}
