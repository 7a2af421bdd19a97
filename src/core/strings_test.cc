#include "core/strings.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vigil {
namespace {

TEST(StringsTest, SplitAndTrim) {
  EXPECT_EQ(TrimSpace("  a b \n"), "a b");
  auto f = SplitFields("cpu  1 2\t3\n");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[3], "3");
  auto s = Split("a,,b", ',');
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[1], "");
}

TEST(StringsTest, ParseRejectsGarbage) {
  EXPECT_EQ(*ParseInt64("-42"), -42);
  EXPECT_FALSE(ParseInt64("42x").has_value());
  EXPECT_FALSE(ParseInt64("").has_value());
  EXPECT_FALSE(ParseUint64("-1").has_value());
  EXPECT_DOUBLE_EQ(*ParseDouble("1.5e3"), 1500);
  EXPECT_TRUE(std::isinf(*ParseDouble("+Inf")));
  EXPECT_TRUE(std::isnan(*ParseDouble("NaN")));
  EXPECT_FALSE(ParseDouble("1.5 ").has_value());
  EXPECT_FALSE(ParseDouble(std::string(100, '1')).has_value());
}

TEST(StringsTest, Rfc3339AsGoPrintsIt) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(1764641139000), "2025-12-02T02:05:39Z");
  EXPECT_EQ(FormatRfc3339(1764641139250), "2025-12-02T02:05:39.25Z");
  EXPECT_EQ(FormatRfc3339(1764641139007), "2025-12-02T02:05:39.007Z");
  EXPECT_EQ(FormatRfc3339(-1), "1969-12-31T23:59:59.999Z");
}

TEST(StringsTest, HumanReadable) {
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanDuration(59), "59s");
  EXPECT_EQ(HumanDuration(3 * 86400 + 4 * 3600 + 5), "3d 4h");
}

}  // namespace
}  // namespace vigil
