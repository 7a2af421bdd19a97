#include "parse/logs/encoding.h"

#include <gtest/gtest.h>

#include <string>

#include "wire/log_batch.h"

namespace vigil::parse::logs {
namespace {

// "训练开始" (training started) in GB18030/GBK.
constexpr char kGbkTrainingStarted[] = "\xD1\xB5\xC1\xB7\xBF\xAA\xCA\xBC";
constexpr char kUtf8TrainingStarted[] = "训练开始";

TEST(Utf8Test, Validates) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii line that is longer than eight bytes"));
  EXPECT_TRUE(IsValidUtf8("训练开始 epoch 1 😀 é"));
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_FALSE(IsValidUtf8("abc\xC3"));           // cut off
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("12345678\x80"));
}

// ASCII is skipped in 64-, 16- and 8-byte steps: a sequence must be checked
// wherever it falls, at every step's edges, in lines of every length.
TEST(Utf8Test, ValidatesAtEveryPositionAndLength) {
  const std::string valid[] = {"\xC3\xA9", "\xE2\x96\x88", "\xF0\x9F\x98\x80"};
  const std::string invalid[] = {"\xFF", "\xC3", "\xE2\x96", "\xED\xA0\x80"};
  for (size_t len = 0; len <= 140; ++len) {
    for (size_t at = 0; at <= len; ++at) {
      std::string line(len, 'a');
      for (const std::string& piece : valid) {
        EXPECT_TRUE(IsValidUtf8(std::string(line).insert(at, piece))) << len << " " << at;
      }
      for (const std::string& piece : invalid) {
        EXPECT_FALSE(IsValidUtf8(std::string(line).insert(at, piece))) << len << " " << at;
      }
    }
  }
}

TEST(Utf8Test, SanitizeReplacesMaximalSubparts) {
  std::string out;
  AppendSanitizedUtf8(
      "a\xFF"
      "b\xE8\xAE"
      "c\xE8\xAE\xAD",
      &out);
  EXPECT_EQ(out,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD"
            "c训");
  out.clear();
  AppendSanitizedUtf8("\xF0\x9F\x98", &out);  // one truncated sequence, one U+FFFD
  EXPECT_EQ(out, "\xEF\xBF\xBD");
}

TEST(EncodingNormalizerTest, ValidUtf8IsUntouched) {
  EncodingNormalizer n;
  uint8_t flags = 0;
  std::string line = "训练开始 step 10 loss 2.3";
  std::string_view out = n.Normalize(line, &flags);
  EXPECT_EQ(out.data(), line.data());  // no copy
  EXPECT_EQ(flags, 0);
  EXPECT_EQ(n.converted_lines(), 0u);
}

TEST(EncodingNormalizerTest, ShortGbkLineComesOutAsChinese) {
  EncodingNormalizer n;
  uint8_t flags = 0;
  std::string_view out = n.Normalize(kGbkTrainingStarted, &flags);
  EXPECT_EQ(out, kUtf8TrainingStarted);
  EXPECT_EQ(flags, wire::kLogFlagInvalidUtf8);
  EXPECT_EQ(n.charset(), "GB18030");
}

TEST(EncodingNormalizerTest, GbkSourceIsDetectedAndRemembered) {
  EncodingNormalizer n;
  std::string gbk_line = std::string("2024-01-01 10:00:00 ") + kGbkTrainingStarted +
                         " epoch 1 \xCB\xF0\xCA\xA7 0.5";  // 损失 (loss)
  for (int i = 0; i < 200; ++i) {
    uint8_t flags = 0;
    std::string_view out = n.Normalize(gbk_line, &flags);
    ASSERT_EQ(out, "2024-01-01 10:00:00 训练开始 epoch 1 损失 0.5") << i;
    EXPECT_EQ(flags, wire::kLogFlagInvalidUtf8);
  }
  EXPECT_TRUE(n.decided());
  EXPECT_EQ(n.charset(), "GB18030");
  // ASCII lines of the same source are still untouched.
  uint8_t flags = 0;
  EXPECT_EQ(n.Normalize("step 2", &flags), "step 2");
  EXPECT_EQ(flags, 0);
}

TEST(EncodingNormalizerTest, LongChineseSampleDetectedByUchardet) {
  EncodingNormalizer n;
  // 训练开始，第一轮，损失值为零点五，学习率为千分之一 in GB18030.
  std::string gbk =
      "\xD1\xB5\xC1\xB7\xBF\xAA\xCA\xBC\xA3\xAC\xB5\xDA\xD2\xBB\xC2\xD6\xA3\xAC\xCB\xF0\xCA\xA7"
      "\xD6\xB5\xCE\xAA\xC1\xE3\xB5\xE3\xCE\xE5\xA3\xAC\xD1\xA7\xCF\xB0\xC2\xCA\xCE\xAA\xC7\xA7"
      "\xB7\xD6\xD6\xAE\xD2\xBB";
  uint8_t flags = 0;
  EXPECT_EQ(n.Normalize(gbk, &flags), "训练开始，第一轮，损失值为零点五，学习率为千分之一");
}

TEST(EncodingNormalizerTest, Latin1) {
  EncodingNormalizer n;
  uint8_t flags = 0;
  EXPECT_EQ(n.Normalize("caf\xE9 r\xE9sum\xE9 na\xEFve d\xE9j\xE0 vu", &flags),
            "café résumé naïve déjà vu");
  EXPECT_EQ(flags, wire::kLogFlagInvalidUtf8);
}

TEST(EncodingNormalizerTest, ConfiguredShiftJis) {
  EncodingNormalizer n({.charset = "CP932"});
  uint8_t flags = 0;
  // ログ (log) in Shift_JIS.
  EXPECT_EQ(n.Normalize("\x83\x8D\x83\x4F ok", &flags), "ログ ok");
  EXPECT_EQ(n.charset(), "CP932");
}

TEST(EncodingNormalizerTest, ConfiguredBig5) {
  EncodingNormalizer n({.charset = "BIG5-HKSCS"});
  uint8_t flags = 0;
  // 訓練 (training, traditional) in Big5.
  EXPECT_EQ(n.Normalize("\xB0\x56\xBD\x6D", &flags), "訓練");
}

TEST(EncodingNormalizerTest, BytesThatDoNotConvertBecomeReplacement) {
  EncodingNormalizer n({.charset = "GB18030"});
  uint8_t flags = 0;
  // 0x80 alone and a lead byte cut off at the end are not GB18030.
  std::string_view out = n.Normalize(std::string("a\x80") + kGbkTrainingStarted + "\xD1", &flags);
  EXPECT_EQ(out, "a\xEF\xBF\xBD训练开始\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8(out));
}

TEST(EncodingNormalizerTest, TruncatedUtf8IsRepairedNotReinterpreted) {
  EncodingNormalizer n;
  uint8_t flags = 0;
  std::string_view out = n.Normalize("训练开始 \xE8\xAE", &flags);
  EXPECT_EQ(out, "训练开始 \xEF\xBF\xBD");
  EXPECT_EQ(flags, wire::kLogFlagInvalidUtf8);
  EXPECT_EQ(n.charset(), "");
}

TEST(EncodingNormalizerTest, BinaryGarbageIsAlwaysValidUtf8) {
  EncodingNormalizer n;
  std::string junk;
  for (int i = 0; i < 256; ++i) junk.push_back(static_cast<char>(255 - i));
  for (int round = 0; round < 20; ++round) {
    uint8_t flags = 0;
    std::string_view out = n.Normalize(junk, &flags);
    EXPECT_TRUE(IsValidUtf8(out));
    EXPECT_EQ(flags, wire::kLogFlagInvalidUtf8);
  }
}

TEST(EncodingNormalizerTest, UnknownConfiguredCharsetReplaces) {
  EncodingNormalizer n({.charset = "NO-SUCH-CHARSET"});
  uint8_t flags = 0;
  EXPECT_EQ(n.Normalize("a\xFF", &flags), "a\xEF\xBF\xBD");
}

TEST(GuessCharsetTest, ByShape) {
  EXPECT_EQ(GuessCharsetFromBytes(kGbkTrainingStarted), "GB18030");
  EXPECT_EQ(GuessCharsetFromBytes("caf\xE9 na\xEFve"), "WINDOWS-1252");
  EXPECT_EQ(GuessCharsetFromBytes("x\x81y\x82z"), "");
  EXPECT_EQ(GuessCharsetFromBytes("ascii"), "");
}

}  // namespace
}  // namespace vigil::parse::logs
