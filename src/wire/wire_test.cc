#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "wire/frame.h"
#include "wire/metric_batch.h"

namespace vigil::wire {
namespace {

MetricBatch SampleBatch() {
  MetricBatchBuilder b("node-1", 1700000000000);
  b.Family("DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge, "GPU utilization (in %).");
  b.Add("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}, {"UUID", "GPU-abc"}}, 97);
  b.Add("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "1"}, {"UUID", "GPU-def"}}, NAN);
  b.Family("node_load1", MetricType::kGauge, "1m load average.");
  b.Add("node_load1", 0.25);
  MetricBatch batch = b.Release();
  batch.sequence = 7;
  batch.series[0].samples.push_back({1700000001000, 98.5});
  return batch;
}

TEST(MetricBatchTest, RoundTripsEverything) {
  MetricBatch in = SampleBatch();
  auto out = DecodeMetricBatch(EncodeMetricBatch(in));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->source, "node-1");
  EXPECT_EQ(out->sequence, 7u);
  EXPECT_EQ(out->families, in.families);
  ASSERT_EQ(out->series.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(out->series[i].labels, in.series[i].labels);
  EXPECT_EQ(out->series[0].samples, in.series[0].samples);
  EXPECT_TRUE(std::isnan(out->series[1].samples[0].value));
  EXPECT_EQ(LabelsToString(out->series[2].labels), "{__name__=\"node_load1\"}");
  EXPECT_EQ(out->SampleCount(), 4u);
}

// The pass time travels as base_time_ms, so the server tells a pass's
// series from values with times of their own even when one of those comes
// first; a batch without one (pass_time_ms 0) is based on its first sample.
TEST(MetricBatchTest, PassTimeTravelsAsTheBaseTime) {
  MetricBatchBuilder b("n", 1700000000000);
  b.AddAt("training_loss", {}, 0.5, 1699999999400);
  b.Add("util", 97);
  MetricBatch in = b.Release();
  EXPECT_EQ(in.pass_time_ms, 1700000000000);
  auto out = DecodeMetricBatch(EncodeMetricBatch(in));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->pass_time_ms, 1700000000000);
  EXPECT_EQ(out->series[0].samples, in.series[0].samples);
  EXPECT_EQ(out->series[1].samples, in.series[1].samples);

  in.pass_time_ms = 0;
  out = DecodeMetricBatch(EncodeMetricBatch(in));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->pass_time_ms, 1699999999400);
  EXPECT_EQ(out->series[1].samples, in.series[1].samples);
}

TEST(MetricBatchTest, BuilderSortsLabelsAndDropsEmptyValues) {
  MetricBatchBuilder b("n", 1);
  b.Add("m", {{"z", "1"}, {"a", "2"}, {"empty", ""}}, 1);
  const Labels& l = b.batch().series[0].labels;
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0].name, "__name__");
  EXPECT_EQ(l[1].name, "a");
  EXPECT_EQ(l[2].name, "z");
  EXPECT_EQ(MetricName(l), "m");
}

TEST(MetricBatchTest, EveryTruncationIsAnErrorNotACrash) {
  std::string enc = EncodeMetricBatch(SampleBatch());
  for (size_t n = 0; n < enc.size(); ++n) {
    EXPECT_FALSE(DecodeMetricBatch(std::string_view(enc.data(), n)).ok()) << n;
  }
}

TEST(MetricBatchTest, HostileCountsAreRejected) {
  std::string evil;
  evil.push_back(1);               // version
  evil.push_back(0);               // source ""
  evil.push_back(0);               // sequence
  evil.push_back(0);               // base
  evil += "\xff\xff\xff\xff\x0f";  // 4 billion symbols
  EXPECT_EQ(DecodeMetricBatch(evil).status().code(), StatusCode::kInvalidArgument);
  std::string future = EncodeMetricBatch(SampleBatch());
  future[0] = 9;
  EXPECT_NE(DecodeMetricBatch(future).status().message().find("upgrade"), std::string::npos);
}

TEST(FrameTest, RoundTripCompressedAndPlain) {
  std::string payload = EncodeMetricBatch(SampleBatch());
  std::string big(10000, 'x');
  for (bool compress : {false, true}) {
    for (const std::string& p : {payload, big}) {
      auto f = DecodeFrame(EncodeFrame(FrameKind::kMetrics, p, compress));
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      EXPECT_EQ(f->payload, p);
    }
  }
  EXPECT_LT(EncodeFrame(FrameKind::kMetrics, big, true).size(), 200u);
}

TEST(FrameTest, CorruptionAndGarbageAreDetected) {
  std::string frame = EncodeFrame(FrameKind::kMetrics, "hello metrics", false);
  std::string flipped = frame;
  flipped[10] ^= 1;
  EXPECT_EQ(DecodeFrame(flipped).status().code(), StatusCode::kCorruption);
  EXPECT_FALSE(DecodeFrame("GET / HTTP/1.1").ok());
  EXPECT_FALSE(DecodeFrame(frame + "x").ok());
  for (size_t n = 0; n < frame.size(); ++n) {
    EXPECT_FALSE(DecodeFrame(std::string_view(frame.data(), n)).ok());
  }
}

}  // namespace
}  // namespace vigil::wire

namespace vigil::wire {
namespace {

// fuzz/make_wire_seeds.py encodes from docs/wire.md alone; the decoder must
// accept its output, which keeps the spec and the code in agreement.
TEST(WireSpecTest, IndependentEncoderFromTheDocsDecodes) {
  const char* src = std::getenv("VIGIL_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  std::ifstream f(std::string(src) + "/fuzz/corpus/wire_fuzz/frame.bin", std::ios::binary);
  std::string frame((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(frame.empty());
  auto decoded = DecodeFrame(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  auto batch = DecodeMetricBatch(decoded->payload);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->source, "node-a");
  EXPECT_EQ(batch->sequence, 7u);
  ASSERT_EQ(batch->series.size(), 2u);
  EXPECT_EQ(batch->series[0].samples[1], (Sample{1700000001000, 0.5}));
  EXPECT_EQ(LabelsToString(batch->series[1].labels),
            R"({UUID="GPU-1",__name__="DCGM_FI_DEV_GPU_UTIL",gpu="0"})");
  EXPECT_EQ(batch->families[0].help, "1m load average.");
}

}  // namespace
}  // namespace vigil::wire
