#include "store/tsdb/series_index.h"

#include <gtest/gtest.h>

namespace vigil::tsdb {
namespace {

wire::Labels L(std::initializer_list<std::pair<const char*, const char*>> kv) {
  wire::Labels out;
  for (const auto& [k, v] : kv) out.push_back({k, v});
  wire::NormalizeLabels(&out);
  return out;
}

class SeriesIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(index_.Add(1, L({{"__name__", "gpu_util"}, {"gpu", "0"}, {"job", "a"}})).ok());
    ASSERT_TRUE(index_.Add(2, L({{"__name__", "gpu_util"}, {"gpu", "1"}, {"job", "b"}})).ok());
    ASSERT_TRUE(index_.Add(3, L({{"__name__", "gpu_temp"}, {"gpu", "0"}})).ok());
  }
  std::vector<uint64_t> Match(std::vector<Matcher> ms) {
    auto r = index_.Match(ms);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<uint64_t>{};
  }
  SeriesIndex index_;
};

using V = std::vector<uint64_t>;

TEST_F(SeriesIndexTest, FindAndDuplicates) {
  EXPECT_EQ(index_.Find(L({{"__name__", "gpu_temp"}, {"gpu", "0"}})), 3u);
  EXPECT_FALSE(index_.Find(L({{"x", "y"}})).has_value());
  EXPECT_EQ(index_.Add(3, L({{"a", "b"}})).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(index_.Add(9, L({{"__name__", "gpu_temp"}, {"gpu", "0"}})).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(index_.size(), 3u);
}

// Series are found by a hash of their bytes: sets that spell the same bytes
// with different name/value or label boundaries, or that differ in one byte
// anywhere (tails of every length included), must stay distinct.
TEST(SeriesIndexLookupTest, NearlyEqualSetsAreDistinct) {
  std::vector<wire::Labels> sets = {
      L({{"a", "bcd"}}),
      L({{"ab", "cd"}}),
      L({{"abc", "d"}}),
      L({{"a", "b"}, {"c", "d"}}),
      L({{"a", "bc"}, {"d", "e"}}),
      L({{"a", "b"}, {"cd", "e"}}),
  };
  for (size_t len = 1; len <= 40; ++len) {
    std::string v(len, 'x');
    sets.push_back(L({{"__name__", "m"}, {"uuid", v.c_str()}}));
    for (size_t i = 0; i < len; ++i) {
      std::string w = v;
      w[i] = 'y';
      sets.push_back(L({{"__name__", "m"}, {"uuid", w.c_str()}}));
    }
  }
  SeriesIndex index;
  for (size_t i = 0; i < sets.size(); ++i) {
    ASSERT_TRUE(index.Add(i + 1, sets[i]).ok()) << wire::LabelsToString(sets[i]);
  }
  for (size_t i = 0; i < sets.size(); ++i) {
    EXPECT_EQ(index.Find(sets[i]), i + 1) << wire::LabelsToString(sets[i]);
  }
  EXPECT_FALSE(index.Find(L({{"a", "bcde"}})).has_value());
  EXPECT_FALSE(
      index.Find(L({{"__name__", "m"}, {"uuid", std::string(41, 'x').c_str()}})).has_value());
  EXPECT_EQ(index.size(), sets.size());
}

TEST_F(SeriesIndexTest, EqualAndNotEqual) {
  EXPECT_EQ(Match({{MatchType::kEqual, "__name__", "gpu_util"}}), (V{1, 2}));
  EXPECT_EQ(Match({{MatchType::kEqual, "__name__", "gpu_util"}, {MatchType::kEqual, "gpu", "1"}}),
            (V{2}));
  EXPECT_EQ(Match({{MatchType::kNotEqual, "gpu", "0"}}), (V{2}));
  EXPECT_EQ(Match({{MatchType::kEqual, "nope", "x"}}), V{});
  EXPECT_EQ(Match({}), (V{1, 2, 3}));
}

TEST_F(SeriesIndexTest, MissingLabelIsEmptyString) {
  EXPECT_EQ(Match({{MatchType::kEqual, "job", ""}}), (V{3}));
  EXPECT_EQ(Match({{MatchType::kNotEqual, "job", ""}}), (V{1, 2}));
  EXPECT_EQ(Match({{MatchType::kNotEqual, "job", "a"}}), (V{2, 3}));
}

TEST_F(SeriesIndexTest, RegexIsAnchored) {
  EXPECT_EQ(Match({{MatchType::kRegex, "__name__", "gpu_.*"}}), (V{1, 2, 3}));
  EXPECT_EQ(Match({{MatchType::kRegex, "__name__", "util"}}), V{});
  EXPECT_EQ(Match({{MatchType::kRegex, "__name__", "gpu_u.*|gpu_temp"}}), (V{1, 2, 3}));
  EXPECT_EQ(Match({{MatchType::kNotRegex, "gpu", "1|2"}}), (V{1, 3}));
  // "" matches, so series without the label match too.
  EXPECT_EQ(Match({{MatchType::kRegex, "job", "a|"}}), (V{1, 3}));
  EXPECT_EQ(Match({{MatchType::kRegex, "job", ".+"}}), (V{1, 2}));
  EXPECT_EQ(Match({{MatchType::kNotRegex, "job", ".*"}}), V{});
}

// After the first (selective) matcher, the others are checked on the
// candidates' labels: every kind, a label the candidate lacks reading "".
TEST_F(SeriesIndexTest, LaterMatchersFilterTheCandidates) {
  const Matcher temp{MatchType::kRegex, "__name__", "gpu_.*"};
  EXPECT_EQ(
      Match({{MatchType::kEqual, "__name__", "gpu_util"}, {MatchType::kNotEqual, "job", "a"}}),
      (V{2}));
  EXPECT_EQ(Match({temp, {MatchType::kNotRegex, "job", "a|b"}}), (V{3}));
  EXPECT_EQ(Match({temp, {MatchType::kRegex, "job", ""}}), (V{3}));
  EXPECT_EQ(Match({temp, {MatchType::kEqual, "job", ""}, {MatchType::kEqual, "gpu", "0"}}), (V{3}));
  EXPECT_EQ(Match({{MatchType::kEqual, "gpu", "0"}, {MatchType::kRegex, "job", ".+"}}), (V{1}));
  auto bad = index_.Match({{MatchType::kEqual, "gpu", "0"}, {MatchType::kRegex, "job", "(x"}});
  EXPECT_FALSE(bad.ok());
}

TEST_F(SeriesIndexTest, BadRegexIsAnError) {
  auto r = index_.Match({{MatchType::kRegex, "job", "(unclosed"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil::tsdb
