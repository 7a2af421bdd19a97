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

// SampleLogBatch with a third stream that reports bytes lost unread (what
// the agent sends for a truncation no copy holds).
LogBatch SampleWithLoss() {
  LogBatch b = SampleLogBatch();
  LogStream lost;
  lost.source_id = "file:2049:1234:abcd:0#lost";
  lost.labels = {{"job", "train"}, {"source", "/runs/a/train.log"}};
  lost.start_offset = 180;
  lost.end_offset = 180 + 4096;
  lost.counters.lost_bytes = 4096;
  b.streams.push_back(lost);
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

TEST(LogBatchTest, LostBytesRoundTripInVersion2) {
  LogBatch in = SampleWithLoss();
  std::string payload = EncodeLogBatch(in);
  EXPECT_EQ(payload[0], 2) << "lost bytes need payload version 2";
  auto out = DecodeLogBatch(payload);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->streams, in.streams);
  EXPECT_EQ(out->streams[2].counters.lost_bytes, 4096u);
  EXPECT_EQ(out->streams[0].counters, (LogSourceCounters{3, 2, 1, 0}));
}

TEST(LogBatchTest, WithoutLossesTheOldVersionIsWritten) {
  // A server that reads only version 1 keeps taking an upgraded agent's
  // batches until one has a loss to report.
  std::string payload = EncodeLogBatch(SampleLogBatch());
  EXPECT_EQ(payload[0], 1);
  auto out = DecodeLogBatch(payload);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  for (const auto& s : out->streams) EXPECT_EQ(s.counters.lost_bytes, 0u);
}

TEST(LogBatchTest, VersionsDifferOnlyByTheLostBytesField) {
  // The same batch in both versions: version 2 is version 1 with one varint
  // more per stream (here 0, 0 and 4096 = two bytes), nothing else moved.
  LogBatch v2 = SampleWithLoss();
  LogBatch v1 = v2;
  v1.streams[2].counters.lost_bytes = 0;
  std::string a = EncodeLogBatch(v1), b = EncodeLogBatch(v2);
  ASSERT_EQ(a[0], 1);
  ASSERT_EQ(b[0], 2);
  EXPECT_EQ(b.size(), a.size() + 1 + 1 + 2);
}

TEST(LogBatchTest, TravelsInAFrame) {
  std::string payload = EncodeLogBatch(SampleLogBatch());
  auto frame = DecodeFrame(EncodeFrame(FrameKind::kLogs, payload, true));
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->kind, FrameKind::kLogs);
  EXPECT_EQ(frame->payload, payload);
}

TEST(LogBatchTest, RejectsEveryTruncation) {
  for (const LogBatch& b : {SampleLogBatch(), SampleWithLoss()}) {
    std::string payload = EncodeLogBatch(b);
    for (size_t n = 0; n < payload.size(); ++n) {
      auto r = DecodeLogBatch(std::string_view(payload).substr(0, n));
      EXPECT_FALSE(r.ok()) << "prefix of " << n << " bytes decoded";
    }
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
  std::string payload = EncodeLogBatch(SampleWithLoss());
  payload[0] = 3;
  auto r = DecodeLogBatch(payload);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("upgrade the server"), std::string::npos);
  EXPECT_NE(r.status().message().find("supports 1 to 2"), std::string::npos);
  payload[0] = 0;
  EXPECT_FALSE(DecodeLogBatch(payload).ok());
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

// The payload of a log frame fuzz/make_wire_seeds.py wrote from docs/wire.md
// alone (corpus/wire_fuzz/<name>); empty, with a failure, when it is not one.
std::string SeedLogPayload(const std::string& name) {
  const char* src = std::getenv("VIGIL_SOURCE_DIR");
  EXPECT_NE(src, nullptr) << "run through ctest (sets VIGIL_SOURCE_DIR)";
  if (src == nullptr) return "";
  std::ifstream f(std::string(src) + "/fuzz/corpus/wire_fuzz/" + name, std::ios::binary);
  std::string frame((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto decoded = DecodeFrame(frame);
  EXPECT_TRUE(decoded.ok()) << name << ": " << decoded.status().ToString();
  if (!decoded.ok()) return "";
  EXPECT_EQ(decoded->kind, FrameKind::kLogs);
  return decoded->payload;
}

TEST(LogBatchSpecTest, IndependentEncoderFromTheDocsDecodes) {
  std::string payload = SeedLogPayload("log_frame.bin");
  ASSERT_FALSE(payload.empty());
  auto batch = DecodeLogBatch(payload);
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
  // A version-1 frame (what agents before lost_bytes send) reads with no
  // lost bytes, and this build writes that batch exactly as they did.
  EXPECT_EQ(payload[0], 1);
  for (const auto& st : batch->streams) EXPECT_EQ(st.counters.lost_bytes, 0u);
  EXPECT_EQ(EncodeLogBatch(*batch), payload);
}

// The same, version 2: a third stream with lost bytes and no records.
TEST(LogBatchSpecTest, IndependentVersion2EncoderFromTheDocsDecodes) {
  std::string payload = SeedLogPayload("log_frame_v2.bin");
  ASSERT_FALSE(payload.empty());
  EXPECT_EQ(payload[0], 2);
  auto batch = DecodeLogBatch(payload);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_EQ(batch->streams.size(), 3u);
  EXPECT_EQ(batch->streams[0].records.size(), 2u);
  EXPECT_EQ(batch->streams[0].counters.lost_bytes, 0u);
  EXPECT_EQ(batch->streams[1].counters.sampled_lines, 5u);
  const LogStream& lost = batch->streams[2];
  EXPECT_EQ(lost.source_id, "file:1:2:ab:0#lost");
  EXPECT_EQ(lost.start_offset, 60u);
  EXPECT_EQ(lost.end_offset, 60u + 300u);
  EXPECT_EQ(lost.counters.lost_bytes, 300u);
  EXPECT_TRUE(lost.records.empty());
  EXPECT_EQ(EncodeLogBatch(*batch), payload);
}

}  // namespace
}  // namespace vigil::wire
