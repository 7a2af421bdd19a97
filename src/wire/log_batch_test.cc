#include "wire/log_batch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "wire/frame.h"

namespace vigil::wire {
namespace {

LogBatch SampleLogBatch() {
  LogBatch b;
  b.source = "node-1";
  b.sequence = 42;
  LogStream s;
  s.source_id = "file:2049:1234:abcd:0";
  s.labels = {{"job", "train"}, {"source", "/runs/a/train.log"}};
  s.start_offset = 100;
  s.end_offset = 180;
  s.counters = {3, 2, 1};
  s.records.push_back({1700000000000000000, 100, LogLevel::kInfo, 0, "step 1 loss=2.5"});
  s.records.push_back(
      {1700000000000000500, 116, LogLevel::kError, kLogFlagTruncated, "Traceback\n  File x"});
  s.records.push_back({1699999999999999000, 150, LogLevel::kUnknown, 0, ""});
  b.streams.push_back(s);
  LogStream empty;  // counters only: volume control reports even without lines
  empty.source_id = "cri:ns_pod_uid/c/0.log";
  empty.labels = {{"container", "c"}, {"job", "train"}};
  empty.start_offset = 7;
  empty.end_offset = 7;
  empty.counters.sampled_lines = 1000;
  b.streams.push_back(empty);
  return b;
}

TEST(LogBatchTest, RoundTripsEverything) {
  LogBatch in = SampleLogBatch();
  auto out = DecodeLogBatch(EncodeLogBatch(in));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->source, "node-1");
  EXPECT_EQ(out->sequence, 42u);
  EXPECT_EQ(out->streams, in.streams);
  EXPECT_EQ(out->RecordCount(), 3u);
  EXPECT_EQ(out->ByteCount(), 15u + 18u);
}

TEST(LogBatchTest, TravelsInAFrame) {
  std::string payload = EncodeLogBatch(SampleLogBatch());
  auto frame = DecodeFrame(EncodeFrame(FrameKind::kLogs, payload, true));
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->kind, FrameKind::kLogs);
  EXPECT_EQ(frame->payload, payload);
}

TEST(LogBatchTest, RejectsEveryTruncation) {
  std::string payload = EncodeLogBatch(SampleLogBatch());
  for (size_t n = 0; n < payload.size(); ++n) {
    auto r = DecodeLogBatch(std::string_view(payload).substr(0, n));
    EXPECT_FALSE(r.ok()) << "prefix of " << n << " bytes decoded";
  }
}

TEST(LogBatchTest, RejectsInconsistentOffsetsAndLevels) {
  LogBatch b = SampleLogBatch();
  b.streams[0].end_offset = 120;  // a record starts at 150, past the end
  EXPECT_FALSE(DecodeLogBatch(EncodeLogBatch(b)).ok());

  b = SampleLogBatch();
  b.streams[0].records[0].level = static_cast<LogLevel>(9);
  auto r = DecodeLogBatch(EncodeLogBatch(b));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("level"), std::string::npos);

  b = SampleLogBatch();
  b.streams[0].labels = {{"source", "x"}, {"job", "y"}};  // unsorted
  EXPECT_FALSE(DecodeLogBatch(EncodeLogBatch(b)).ok());
}

TEST(LogBatchTest, RefusesNewerVersionsByName) {
  std::string payload = EncodeLogBatch(SampleLogBatch());
  payload[0] = 2;
  auto r = DecodeLogBatch(payload);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("upgrade the server"), std::string::npos);
}

TEST(LogLevelTest, NamesAndAliases) {
  for (int i = 0; i < kLogLevelCount; ++i) {
    LogLevel l;
    ASSERT_TRUE(ParseLogLevelName(LogLevelName(static_cast<LogLevel>(i)), &l));
    EXPECT_EQ(static_cast<int>(l), i);
  }
  LogLevel l = LogLevel::kUnknown;
  EXPECT_TRUE(ParseLogLevelName("WARNING", &l));
  EXPECT_EQ(l, LogLevel::kWarn);
  EXPECT_TRUE(ParseLogLevelName("Critical", &l));
  EXPECT_EQ(l, LogLevel::kFatal);
  EXPECT_FALSE(ParseLogLevelName("loss", &l));
}

}  // namespace
}  // namespace vigil::wire

namespace vigil::wire {
namespace {

// fuzz/make_wire_seeds.py encodes a log frame from docs/wire.md alone.
TEST(LogBatchSpecTest, IndependentEncoderFromTheDocsDecodes) {
  const char* src = std::getenv("VIGIL_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "run through ctest (sets VIGIL_SOURCE_DIR)";
  std::ifstream f(std::string(src) + "/fuzz/corpus/wire_fuzz/log_frame.bin", std::ios::binary);
  std::string frame((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(frame.empty());
  auto decoded = DecodeFrame(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->kind, FrameKind::kLogs);
  auto batch = DecodeLogBatch(decoded->payload);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->source, "node-a");
  EXPECT_EQ(batch->sequence, 9u);
  ASSERT_EQ(batch->streams.size(), 2u);
  const LogStream& s = batch->streams[0];
  EXPECT_EQ(LabelsToString(s.labels), R"({job="train",source="/r/train.log"})");
  ASSERT_EQ(s.records.size(), 2u);
  EXPECT_EQ(s.records[1].time_ns, 1700000000500000000);
  EXPECT_EQ(s.records[1].offset, 26u);
  EXPECT_EQ(s.records[1].level, LogLevel::kError);
  EXPECT_EQ(s.records[1].line, "Traceback (most recent call last):\n  File \"t.py\"");
  EXPECT_EQ(batch->streams[1].counters.sampled_lines, 5u);
  EXPECT_EQ(batch->streams[1].counters.filtered_lines, 1u);
}

}  // namespace
}  // namespace vigil::wire
