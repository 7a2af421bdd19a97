#include "core/coding.h"

#include <gtest/gtest.h>

#include <limits>

namespace vigil {
namespace {

TEST(CodingTest, VarintsRoundTripAtBoundaries) {
  std::string buf;
  std::vector<uint64_t> values = {0,     1,     127,        128,
                                  16383, 16384, 1ull << 35, std::numeric_limits<uint64_t>::max()};
  for (uint64_t v : values) PutVarint64(&buf, v);
  std::string_view in = buf;
  for (uint64_t v : values) {
    uint64_t got;
    ASSERT_TRUE(GetVarint64(&in, &got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, ZigZagSignedValues) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, int64_t{-1000000},
                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(ZigZagDecode(ZigZagEncode(v)), v);
  }
  EXPECT_EQ(ZigZagEncode(-1), 1u);
  EXPECT_EQ(ZigZagEncode(1), 2u);
}

TEST(CodingTest, TruncatedInputIsRejectedNotCrashed) {
  std::string buf;
  PutVarint64(&buf, 1ull << 40);
  std::string_view in(buf.data(), buf.size() - 1);
  uint64_t v;
  EXPECT_FALSE(GetVarint64(&in, &v));
  std::string_view lp(
      "\x05"
      "abc",
      4);
  std::string_view out;
  EXPECT_FALSE(GetLengthPrefixed(&lp, &out));
  std::string_view eleven(std::string(11, '\xff'));
  std::string over(11, '\xff');
  std::string_view overv = over;
  EXPECT_FALSE(GetVarint64(&overv, &v));
}

TEST(CodingTest, Crc32cKnownVectors) {
  // Test vectors from RFC 3720 (iSCSI) appendix B.4.
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  // Incremental use equals one-shot.
  EXPECT_EQ(Crc32c("6789", Crc32c("12345")), Crc32c("123456789"));
}

// The hardware path (where the CPU has one) and the tables agree on every
// length and alignment.
TEST(CodingTest, Crc32cHardwareMatchesPortable) {
  std::string data;
  for (int i = 0; i < 300; ++i) data.push_back(static_cast<char>(i * 131 + 7));
  EXPECT_EQ(Crc32cPortable("123456789"), 0xE3069283u);
  for (size_t start = 0; start < 9; ++start) {
    for (size_t len = 0; start + len <= data.size(); len += 7) {
      std::string_view v = std::string_view(data).substr(start, len);
      ASSERT_EQ(Crc32c(v), Crc32cPortable(v)) << start << "+" << len;
      ASSERT_EQ(Crc32c(v, 0x1234), Crc32cPortable(v, 0x1234));
    }
  }
}

}  // namespace
}  // namespace vigil
