// ORCH_LOG_SELECT semantics reproduce selector.json.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "orchlog/detail/logger/selector.hpp"
#include "support/json.hpp"
#include "support/vectors.hpp"

namespace t = orchlog_test;
namespace d = orchlog::detail;

TEST(Selector, EveryValidSelectorMatchesExactlyTheExpectedKeys) {
  const t::Json doc = t::load_vectors("selector.json");
  for (const t::Json& c : doc["valid"].items) {
    const std::string text = c["selector"].str();
    SCOPED_TRACE(text);
    std::string error;
    const auto sel = d::Selector::parse(text, error);
    const bool select_all = d::trim(text).empty();  // blank: no selector at all
    ASSERT_TRUE(select_all || sel.has_value()) << error;
    for (std::size_t i = 0; i < doc["keys"].size(); ++i) {
      const t::Json& k = doc["keys"][i];
      const d::SelectorCandidate cand{k["checkpoint"].str(), t::key_from(k)};
      EXPECT_EQ(select_all || sel->matches(cand), c["matches"][i].b) << "key " << i;
    }
  }
}

TEST(Selector, EveryInvalidSelectorIsRejectedWithTheClauseNamed) {
  const t::Json doc = t::load_vectors("selector.json");
  for (const t::Json& c : doc["invalid"].items) {
    std::string error;
    EXPECT_FALSE(d::Selector::parse(c.str(), error).has_value()) << c.str();
    EXPECT_NE(error.find("clause"), std::string::npos) << c.str();
  }
}

TEST(Selector, QuestionMarkMatchesOneCodePointNotOneByte) {
  EXPECT_TRUE(d::glob_matches("?", "\xC3\xBC"));
  EXPECT_FALSE(d::glob_matches("??", "\xC3\xBC"));
  EXPECT_TRUE(d::glob_matches("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(d::glob_matches("a*b*c", "aXXbYY"));
}

TEST(Selector, ATokenCountMatchesWhenAnyTokenOfTheSpanIsSelected) {
  std::string error;
  const auto sel = d::Selector::parse("token=5,token=9-", error);
  ASSERT_TRUE(sel.has_value()) << error;
  d::SelectorCandidate span;
  span.checkpoint = "attn_norm";
  span.token_count = 3;
  const auto matches_from = [&](std::int64_t first) {
    span.key.token_idx = first;
    return sel->matches(span);
  };
  EXPECT_FALSE(matches_from(0));  // 0..2
  EXPECT_TRUE(matches_from(3));   // 3..5
  EXPECT_TRUE(matches_from(5));   // 5..7
  EXPECT_FALSE(matches_from(6));  // 6..8
  EXPECT_TRUE(matches_from(7));   // 7..9, and 9- is open-ended
}
