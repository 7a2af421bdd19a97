#include "query/logql.h"

#include <gtest/gtest.h>

namespace vigil::query {
namespace {

using logstore::FilterType;
using logstore::MatchType;

TEST(LogQlTest, SelectorAndFilters) {
  auto q = ParseLogQuery(
      R"({job="train", level=~"warn|error" ,container!="x", pod!~`a.*`} |= "loss" != "debug" |~ "step [0-9]+" !~ `(?i)nan`)");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_EQ(q->matchers.size(), 4u);
  EXPECT_EQ(q->matchers[0].name, "job");
  EXPECT_EQ(q->matchers[0].type, MatchType::kEqual);
  EXPECT_EQ(q->matchers[0].value, "train");
  EXPECT_EQ(q->matchers[1].type, MatchType::kRegex);
  EXPECT_EQ(q->matchers[1].value, "warn|error");
  EXPECT_EQ(q->matchers[2].type, MatchType::kNotEqual);
  EXPECT_EQ(q->matchers[3].type, MatchType::kNotRegex);
  EXPECT_EQ(q->matchers[3].value, "a.*");
  ASSERT_EQ(q->filters.size(), 4u);
  EXPECT_EQ(q->filters[0].type, FilterType::kContains);
  EXPECT_EQ(q->filters[0].pattern, "loss");
  EXPECT_EQ(q->filters[1].type, FilterType::kNotContains);
  EXPECT_EQ(q->filters[2].type, FilterType::kRegex);
  EXPECT_EQ(q->filters[2].pattern, "step [0-9]+");
  EXPECT_EQ(q->filters[3].type, FilterType::kNotRegex);
  EXPECT_EQ(q->filters[3].pattern, "(?i)nan");
}

TEST(LogQlTest, EmptySelectorAndEscapes) {
  auto q = ParseLogQuery(R"({} |= "say \"hi\"\t\u8bad")");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_TRUE(q->matchers.empty());
  ASSERT_EQ(q->filters.size(), 1u);
  EXPECT_EQ(q->filters[0].pattern, "say \"hi\"\t\xe8\xae\xad");  // 训
}

TEST(LogQlTest, ErrorsNameTheProblemAndPosition) {
  struct Case {
    const char* query;
    const char* expect;
  };
  const Case cases[] = {
      {"", "stream selector"},
      {"rate({job=\"x\"}[1m])", "metric queries"},
      {"{job=\"x\"", "expected ',' or '}'"},
      {"{job~\"x\"}", "expected =, !=, =~ or !~"},
      {"{job=x}", "quoted string"},
      {"{job=~\"(\"}", "invalid regular expression"},
      {"{} |~ \"a[\"", "invalid regular expression"},
      {"{} | json", "| json"},
      {"{} |= \"unterminated", "unterminated"},
      {"{} loss", "expected a line filter"},
      {"{=\"x\"}", "expected a label name"},
  };
  for (const Case& c : cases) {
    auto q = ParseLogQuery(c.query);
    ASSERT_FALSE(q.ok()) << c.query;
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument) << c.query;
    EXPECT_NE(q.status().message().find(c.expect), std::string::npos)
        << c.query << " -> " << q.status().message();
    EXPECT_NE(q.status().message().find("1:"), std::string::npos) << q.status().message();
  }
}

TEST(LogQlTest, SearchTreatsPlainTextAsKeyword) {
  auto q = ParseLogSearch("  CUDA out of memory ");
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->matchers.empty());
  ASSERT_EQ(q->filters.size(), 1u);
  EXPECT_EQ(q->filters[0].pattern, "CUDA out of memory");
  auto all = ParseLogSearch("");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->filters.empty());
  auto sel = ParseLogSearch("{job=\"a\"} |= \"b\"");
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->matchers.size(), 1u);
}

}  // namespace
}  // namespace vigil::query
