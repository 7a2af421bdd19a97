#include "parse/training/tfevents.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "parse/training/tfevents_test_util.h"

namespace vigil::parse::training {
namespace {

using namespace testing;  // NOLINT: the test file builders

std::string SampleFile() {
  std::string histogram;  // a histogram value: skipped
  Len(&histogram, 1, "weights");
  Len(&histogram, 5, "\x09\x00\x00\x00\x00\x00\x00\xf0\x3f");
  return FileVersionRecord() +
         Record(Event(1764460801.0, 100,
                      {SimpleValue("train/loss", 0.5f), SimpleValue("train/lr", 0.001f)})) +
         Record(Event(1764460802.0, 200, {TensorValue("train/loss", 0.25f, false), histogram})) +
         Record(Event(
             1764460803.0, 300,
             {TensorValue("eval/acc", 0.75f, true), TensorValue("embedding", 1.0f, false, true)}));
}

TEST(TfEvents, TheMaskedCrcOfARealFilesFirstHeader) {
  // Every event file starts with "18 00 00 00 00 00 00 00 a3 7f 4b 22": a
  // 24-byte record (the file_version event) and its length's masked CRC.
  const char header[8] = {0x18, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(MaskedCrc32c(std::string_view(header, 8)), 0x224b7fa3u);
  std::string first = FileVersionRecord();
  EXPECT_EQ(first.size(), 12u + 24u + 4u);
  EXPECT_EQ(first.substr(8, 4), std::string("\xa3\x7f\x4b\x22", 4));
  EXPECT_TRUE(LooksLikeTfRecord(first));
  EXPECT_FALSE(LooksLikeTfRecord("{'loss': 0.5, 'step': 1}\n"));
  EXPECT_FALSE(LooksLikeTfRecord("short"));
}

TEST(TfEvents, ReadsSimpleValuesAndRankZeroTensors) {
  TfEventsReader r;
  std::vector<TfScalar> got;
  std::string file = SampleFile();
  ASSERT_TRUE(r.Feed(file, &got).ok());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].tag, "train/loss");
  EXPECT_EQ(got[0].value, 0.5);
  EXPECT_EQ(got[0].step, 100);
  EXPECT_EQ(got[0].record, 2u);
  EXPECT_EQ(got[0].wall_time, 1764460801.0);
  EXPECT_EQ(got[1].tag, "train/lr");
  EXPECT_FLOAT_EQ(static_cast<float>(got[1].value), 0.001f);
  EXPECT_EQ(got[2].tag, "train/loss");  // tensor_content
  EXPECT_EQ(got[2].value, 0.25);
  EXPECT_EQ(got[2].step, 200);
  EXPECT_EQ(got[3].tag, "eval/acc");  // packed float_val; the rank-1 tensor is left out
  EXPECT_EQ(got[3].value, 0.75);
  EXPECT_EQ(r.records(), 4u);
  EXPECT_EQ(r.consumed(), file.size());
}

TEST(TfEvents, AFileGrowingByteByByteGivesTheSameScalars) {
  std::string file = SampleFile();
  TfEventsReader r;
  std::vector<TfScalar> got;
  for (char c : file) ASSERT_TRUE(r.Feed(std::string_view(&c, 1), &got).ok());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[3].tag, "eval/acc");
  // Half a record is waited for, not consumed.
  TfEventsReader half;
  got.clear();
  ASSERT_TRUE(half.Feed(file.substr(0, file.size() - 3), &got).ok());
  EXPECT_EQ(got.size(), 3u);
  EXPECT_LT(half.consumed(), file.size());
}

TEST(TfEvents, CorruptionIsAnErrorNeverACrash) {
  std::string file = SampleFile();
  std::string bad = file;
  bad[60] ^= 0x40;  // inside the second record's data
  TfEventsReader r;
  std::vector<TfScalar> got;
  Status st = r.Feed(bad, &got);
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  EXPECT_NE(st.message().find("byte 40"), std::string::npos) << st.message();
  EXPECT_FALSE(r.Feed(file, &got).ok());  // refuses more once failed

  // A record that frames correctly but holds a malformed Event.
  TfEventsReader r2;
  EXPECT_FALSE(r2.Feed(Record("\x0a\xff\xff\xff\xff\x0f"), &got).ok());

  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(rng() % 200, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    TfEventsReader any;
    std::vector<TfScalar> out;
    (void)any.Feed(i % 2 ? Record(junk) : junk, &out);
  }
}

}  // namespace
}  // namespace vigil::parse::training
