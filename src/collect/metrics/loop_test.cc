#include "collect/metrics/loop.h"

#include <gtest/gtest.h>

#include "wire/frame.h"

namespace vigil::collect {
namespace {

class FixedCollector : public MetricCollector {
 public:
  explicit FixedCollector(bool fail) : fail_(fail) {}
  std::string_view name() const override { return fail_ ? "broken" : "fixed"; }
  Status Collect(wire::MetricBatchBuilder* out) override {
    out->Family("test_value", wire::MetricType::kGauge, "A test value.");
    out->Add("test_value", {{"from", std::string(name())}}, 42);
    if (fail_) return Unavailable("source is away");
    return Status::Ok();
  }

 private:
  bool fail_;
};

struct Captured {
  std::vector<wire::MetricBatch> batches;
};

CollectionLoop MakeLoop(Captured* cap, Status sink_status = Status::Ok()) {
  std::vector<std::unique_ptr<MetricCollector>> cs;
  cs.push_back(std::make_unique<FixedCollector>(false));
  cs.push_back(std::make_unique<FixedCollector>(true));
  LoopOptions o;
  o.source = "node-a";
  return CollectionLoop(o, std::move(cs), [cap, sink_status](std::string frame) {
    auto f = wire::DecodeFrame(frame);
    EXPECT_TRUE(f.ok());
    auto b = wire::DecodeMetricBatch(f->payload);
    EXPECT_TRUE(b.ok());
    cap->batches.push_back(std::move(b).value());
    return sink_status;
  });
}

const wire::Series* Find(const wire::MetricBatch& b, std::string_view name,
                         std::string_view collector = "") {
  for (const auto& s : b.series) {
    if (wire::MetricName(s.labels) != name) continue;
    if (collector.empty()) return &s;
    for (const auto& l : s.labels) {
      if (l.name == "collector" && l.value == collector) return &s;
    }
  }
  return nullptr;
}

// In process (`vigil up`) the sink gets the batch itself: the same batch a
// frame sink would have decoded, sequence included.
TEST(CollectionLoopTest, ABatchSinkGetsWhatAFrameSinkDecodes) {
  Captured framed;
  CollectionLoop by_frame = MakeLoop(&framed);
  std::vector<wire::MetricBatch> handed;
  std::vector<std::unique_ptr<MetricCollector>> cs;
  cs.push_back(std::make_unique<FixedCollector>(false));
  cs.push_back(std::make_unique<FixedCollector>(true));
  LoopOptions o;
  o.source = "node-a";
  CollectionLoop by_batch(o, std::move(cs), [&handed](wire::MetricBatch* b) {
    handed.push_back(std::move(*b));
    return Status::Ok();
  });
  by_frame.RunPass(5000);
  by_batch.RunPass(5000);
  by_batch.RunPass(6000);
  ASSERT_EQ(framed.batches.size(), 1u);
  ASSERT_EQ(handed.size(), 2u);
  EXPECT_EQ(handed[0].source, "node-a");
  EXPECT_EQ(handed[1].sequence, handed[0].sequence + 1);
  const wire::Series* v = Find(handed[0], "test_value");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->samples[0].t_ms, 5000);
  // Same series, same labels, same families (process metrics aside, which move).
  EXPECT_EQ(handed[0].families.size(), framed.batches[0].families.size());
  EXPECT_EQ(handed[0].series.size(), framed.batches[0].series.size());
  EXPECT_EQ(
      wire::LabelsToString(Find(handed[0], "vigil_collector_success", "broken")->labels),
      wire::LabelsToString(Find(framed.batches[0], "vigil_collector_success", "broken")->labels));
}

TEST(CollectionLoopTest, PassStampsTimeAndReportsCollectorHealth) {
  Captured cap;
  CollectionLoop loop = MakeLoop(&cap);
  loop.RunPass(5000);
  loop.RunPass(6000);
  ASSERT_EQ(cap.batches.size(), 2u);
  const auto& b = cap.batches[0];
  EXPECT_EQ(b.source, "node-a");
  EXPECT_LT(cap.batches[0].sequence, cap.batches[1].sequence);
  for (const auto& s : b.series) EXPECT_EQ(s.samples[0].t_ms, 5000);
  // A failing collector's samples are kept, and its failure is visible.
  EXPECT_EQ(Find(b, "vigil_collector_success", "fixed")->samples[0].value, 1);
  EXPECT_EQ(Find(b, "vigil_collector_success", "broken")->samples[0].value, 0);
  ASSERT_NE(Find(b, "test_value"), nullptr);
  ASSERT_NE(Find(b, "process_resident_memory_bytes"), nullptr);
  EXPECT_GT(Find(b, "process_resident_memory_bytes")->samples[0].value, 1e5);
  // Boot time + the process's start ticks: after 2020, not in the future.
  double started = Find(b, "process_start_time_seconds")->samples[0].value;
  EXPECT_GT(started, 1.6e9);
  EXPECT_LE(started, Env::Default()->NowMillis() / 1000.0 + 1);
  EXPECT_EQ(Find(cap.batches[1], "process_start_time_seconds")->samples[0].value, started);
  EXPECT_EQ(loop.Stats().passes, 2u);
}

TEST(CollectionLoopTest, SinkFailuresAreCounted) {
  Captured cap;
  CollectionLoop loop = MakeLoop(&cap, Unavailable("server away"));
  loop.RunPass(1000);
  EXPECT_EQ(loop.Stats().sink_errors, 1u);
}

TEST(CollectionLoopTest, RunningLoopProducesAlignedPassesAndStops) {
  Captured cap;
  std::mutex mu;
  std::vector<int64_t> times;
  std::vector<std::unique_ptr<MetricCollector>> cs;
  cs.push_back(std::make_unique<FixedCollector>(false));
  LoopOptions o;
  o.source = "n";
  o.interval_ms = 50;
  CollectionLoop loop(o, std::move(cs), [&](std::string frame) {
    auto b = wire::DecodeMetricBatch(wire::DecodeFrame(frame)->payload);
    std::lock_guard<std::mutex> lock(mu);
    times.push_back(b->series[0].samples[0].t_ms);
    return Status::Ok();
  });
  loop.Start();
  for (int i = 0; i < 400; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (times.size() >= 3) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  loop.Stop();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_GE(times.size(), 3u);
  for (int64_t t : times) EXPECT_EQ(t % 50, 0);
  for (size_t i = 1; i < times.size(); ++i) EXPECT_GT(times[i], times[i - 1]);
}

}  // namespace
}  // namespace vigil::collect
