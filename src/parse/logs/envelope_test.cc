#include "parse/logs/envelope.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::parse::logs {
namespace {

constexpr int64_t kT0 = 1704164645123456789;  // 2024-01-02T03:04:05.123456789Z

std::string Docker(std::string_view log_json, std::string_view stream = "stdout") {
  return std::string("{\"log\":\"") + std::string(log_json) + "\",\"stream\":\"" +
         std::string(stream) + "\",\"time\":\"2024-01-02T03:04:05.123456789Z\"}";
}

TEST(Rfc3339Test, ParsesNanosAndOffsets) {
  EXPECT_EQ(ParseRfc3339Nano("2024-01-02T03:04:05.123456789Z"), kT0);
  EXPECT_EQ(ParseRfc3339Nano("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339Nano("1970-01-01T00:00:01.5Z"), 1500000000);
  // The same instant written in UTC+8 and UTC-05:30.
  EXPECT_EQ(ParseRfc3339Nano("2024-01-02T11:04:05.123456789+08:00"), kT0);
  EXPECT_EQ(ParseRfc3339Nano("2024-01-01T21:34:05.123456789-05:30"), kT0);
  // More than 9 fraction digits are cut, not rounded.
  EXPECT_EQ(ParseRfc3339Nano("2024-01-02T03:04:05.1234567899Z"), kT0);
  EXPECT_EQ(ParseRfc3339Nano("2024-02-29T00:00:00Z"), int64_t{1709164800} * 1000000000);
}

TEST(Rfc3339Test, RejectsMalformed) {
  for (std::string_view bad :
       {"", "2024-01-02", "2024-01-02T03:04:05", "2024-13-02T03:04:05Z", "2023-02-29T00:00:00Z",
        "2024-01-02T24:00:00Z", "2024-01-02T03:04:05.Z", "2024-01-02T03:04:05Zjunk",
        "2024-01-02T03:04:05+0", "9999-01-01T00:00:00Z", "abcd-01-02T03:04:05Z"}) {
    EXPECT_FALSE(ParseRfc3339Nano(bad).has_value()) << bad;
  }
}

TEST(DockerLineTest, UnescapesEverything) {
  std::string log;
  DockerLine d;
  ASSERT_TRUE(ParseDockerLine(
      R"({"log":"a\"b\\c\/d\te\u0041\u00e9\u8bad\ud83d\ude00\u001b[0m\n","stream":"stderr","time":"2024-01-02T03:04:05.123456789Z"})",
      &log, &d));
  EXPECT_EQ(log, "a\"b\\c/d\teA\xC3\xA9\xE8\xAE\xAD\xF0\x9F\x98\x80\x1b[0m");
  EXPECT_EQ(d.stream, "stderr");
  EXPECT_EQ(d.time_ns, kT0);
  EXPECT_TRUE(d.complete);
}

TEST(DockerLineTest, LoneSurrogateBecomesReplacement) {
  std::string log;
  DockerLine d;
  ASSERT_TRUE(ParseDockerLine(R"({"log":"x\ud800y\udc00z"})", &log, &d));
  EXPECT_EQ(log, "x\xEF\xBF\xBDy\xEF\xBF\xBDz");
  EXPECT_FALSE(d.complete);
}

TEST(DockerLineTest, SkipsUnknownKeysInAnyOrder) {
  std::string log;
  DockerLine d;
  ASSERT_TRUE(ParseDockerLine(
      R"( { "attrs" : {"a":[1,{"b":"}"}]}, "time":"2024-01-02T03:04:05.123456789Z", "n":-1.5e3, "ok":true, "stream":"stdout", "log":"hi\n" } )",
      &log, &d));
  EXPECT_EQ(log, "hi");
  EXPECT_EQ(d.stream, "stdout");
}

TEST(DockerLineTest, RejectsMalformed) {
  std::string log;
  DockerLine d;
  for (std::string_view bad :
       {"", "{", "{}", "not json", R"({"log":"x)", R"({"log":"x\q"})", R"({"log":"\u12"})",
        R"({"log":"x"} trailing)", R"({"stream":"stdout"})", R"({"log":"x","time":"yesterday"})",
        R"({"log":"x",})", R"({"log":5})"}) {
    EXPECT_FALSE(ParseDockerLine(bad, &log, &d)) << bad;
  }
}

TEST(CriLineTest, Parses) {
  CriLine c;
  ASSERT_TRUE(ParseCriLine("2024-01-02T03:04:05.123456789Z stdout F hello world", &c));
  EXPECT_EQ(c.text, "hello world");
  EXPECT_EQ(c.stream, "stdout");
  EXPECT_EQ(c.time_ns, kT0);
  EXPECT_TRUE(c.complete);
  ASSERT_TRUE(ParseCriLine("2024-01-02T11:04:05.123456789+08:00 stderr P part", &c));
  EXPECT_FALSE(c.complete);
  EXPECT_EQ(c.time_ns, kT0);
  ASSERT_TRUE(ParseCriLine("2024-01-02T03:04:05Z stdout F", &c));
  EXPECT_EQ(c.text, "");
  ASSERT_TRUE(ParseCriLine("2024-01-02T03:04:05Z stdout F:x  two spaces", &c));
  EXPECT_EQ(c.text, " two spaces");
  EXPECT_FALSE(ParseCriLine("2024-01-02T03:04:05Z stdout X text", &c));
  EXPECT_FALSE(ParseCriLine("2024-01-02 stdout F text", &c));
  EXPECT_FALSE(ParseCriLine("2024-01-02T03:04:05Z stdout", &c));
}

TEST(EnvelopeParserTest, PlainPassesThroughWithoutCopy) {
  EnvelopeParser p;
  std::string line = "plain text line";
  const EnvelopeRecord* r = p.Push(line, 42);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "plain text line");
  EXPECT_EQ(r->text.data(), line.data());
  EXPECT_EQ(r->offset, 42u);
  EXPECT_EQ(r->time_ns, 0);
  EXPECT_EQ(r->stream, "");
  EXPECT_EQ(p.malformed_lines(), 0u);
}

TEST(EnvelopeParserTest, JsonApplicationLogIsPlainInAutoMode) {
  EnvelopeParser p;
  const EnvelopeRecord* r = p.Push(R"({"level":"info","msg":"x"})", 0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, R"({"level":"info","msg":"x"})");
  EXPECT_EQ(p.malformed_lines(), 0u);
}

TEST(EnvelopeParserTest, DockerCompleteLine) {
  EnvelopeParser p({.format = EnvelopeFormat::kDocker});
  const EnvelopeRecord* r = p.Push(Docker("epoch 1 loss 0.5\\n", "stderr"), 100);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "epoch 1 loss 0.5");
  EXPECT_EQ(r->stream, "stderr");
  EXPECT_EQ(r->time_ns, kT0);
  EXPECT_EQ(r->offset, 100u);
  EXPECT_EQ(r->flags, 0);
  EXPECT_FALSE(p.PendingStartOffset().has_value());
}

TEST(EnvelopeParserTest, DockerJoinsSplitLinesPerStream) {
  EnvelopeParser p;
  EXPECT_EQ(p.Push(Docker("aaaa"), 0), nullptr);
  EXPECT_EQ(p.PendingStartOffset(), 0u);
  // A stderr line in between is its own record and does not disturb stdout.
  const EnvelopeRecord* r = p.Push(Docker("err\\n", "stderr"), 10);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "err");
  EXPECT_EQ(r->offset, 10u);
  EXPECT_EQ(p.PendingStartOffset(), 0u);
  EXPECT_EQ(p.Push(Docker("bbbb"), 20), nullptr);
  r = p.Push(Docker("cc\\n"), 30);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "aaaabbbbcc");
  EXPECT_EQ(r->stream, "stdout");
  EXPECT_EQ(r->offset, 0u);
  EXPECT_EQ(r->flags, 0);
  EXPECT_FALSE(p.PendingStartOffset().has_value());
}

TEST(EnvelopeParserTest, CriJoinsPartials) {
  EnvelopeParser p({.format = EnvelopeFormat::kCri});
  EXPECT_EQ(p.Push("2024-01-02T03:04:05.123456789Z stdout P Traceback (most ", 0), nullptr);
  EXPECT_EQ(p.Push("2024-01-02T03:04:06Z stdout P recent ", 60), nullptr);
  const EnvelopeRecord* r = p.Push("2024-01-02T03:04:07Z stdout F call last):", 90);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "Traceback (most recent call last):");
  EXPECT_EQ(r->time_ns, kT0);  // the first piece's time
  EXPECT_EQ(r->offset, 0u);
}

TEST(EnvelopeParserTest, OversizeJoinIsTruncatedAndTailSkipped) {
  EnvelopeParser p({.format = EnvelopeFormat::kCri, .max_bytes = 10});
  EXPECT_EQ(p.Push("2024-01-02T03:04:05Z stdout P 123456", 0), nullptr);
  const EnvelopeRecord* r = p.Push("2024-01-02T03:04:05Z stdout P 789abc", 50);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "123456789a");
  EXPECT_EQ(r->flags, wire::kLogFlagTruncated);
  EXPECT_EQ(r->offset, 0u);
  // The rest of that line is skipped, and nothing is held meanwhile.
  EXPECT_FALSE(p.PendingStartOffset().has_value());
  EXPECT_EQ(p.Push("2024-01-02T03:04:05Z stdout P more", 100), nullptr);
  EXPECT_EQ(p.Push("2024-01-02T03:04:05Z stdout F end", 150), nullptr);
  r = p.Push("2024-01-02T03:04:05Z stdout F next", 200);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "next");
  EXPECT_EQ(r->flags, 0);
  EXPECT_EQ(p.truncated_lines(), 1u);
}

TEST(EnvelopeParserTest, TruncationKeepsUtf8Whole) {
  EnvelopeParser p({.format = EnvelopeFormat::kPlain, .max_bytes = 4});
  const EnvelopeRecord* r = p.Push("ab\xE8\xAE\xAD", 0);  // "ab训"
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "ab");
  EXPECT_EQ(r->flags, wire::kLogFlagTruncated);
}

TEST(EnvelopeParserTest, MalformedEnvelopeIsPassedThroughAndCounted) {
  EnvelopeParser docker({.format = EnvelopeFormat::kDocker});
  const EnvelopeRecord* r = docker.Push(R"({"log":"cut off)", 0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, R"({"log":"cut off)");
  EXPECT_EQ(docker.malformed_lines(), 1u);

  EnvelopeParser cri({.format = EnvelopeFormat::kCri});
  r = cri.Push("not a cri line", 7);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "not a cri line");
  EXPECT_EQ(r->offset, 7u);
  EXPECT_EQ(cri.malformed_lines(), 1u);
}

TEST(EnvelopeParserTest, FlushEmitsHeldPartialsInOffsetOrder) {
  EnvelopeParser p;
  EXPECT_EQ(p.Push(Docker("err part", "stderr"), 5), nullptr);
  EXPECT_EQ(p.Push(Docker("out part"), 50), nullptr);
  EXPECT_EQ(p.PendingStartOffset(), 5u);
  const EnvelopeRecord* r = p.Flush();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "err part");
  EXPECT_EQ(r->stream, "stderr");
  EXPECT_EQ(r->flags, wire::kLogFlagPartial);
  EXPECT_EQ(p.PendingStartOffset(), 50u);
  r = p.Flush();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "out part");
  EXPECT_EQ(p.Flush(), nullptr);
  EXPECT_FALSE(p.PendingStartOffset().has_value());
}

TEST(EnvelopeParserTest, StripsCarriageReturn) {
  EnvelopeParser p;
  const EnvelopeRecord* r = p.Push("dos line\r", 0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "dos line");
  r = p.Push(Docker("windows tool\\r\\n"), 10);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->text, "windows tool");
}

}  // namespace
}  // namespace vigil::parse::logs
