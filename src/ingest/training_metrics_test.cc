#include "ingest/training_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/temp_dir.h"
#include "ingest/ingester.h"

namespace vigil::ingest {
namespace {

constexpr int64_t kMs = 1'000'000;  // ns
constexpr int64_t kT0 = int64_t{1764460800000} * kMs;

wire::LogStream Stream(const std::string& source_id, uint64_t start,
                       const std::vector<std::string>& lines, int64_t t0 = kT0) {
  wire::LogStream s;
  s.source_id = source_id;
  s.labels = {{"job", "train"}, {"node", "gpu-1"}};
  s.start_offset = start;
  uint64_t off = start;
  for (size_t i = 0; i < lines.size(); ++i) {
    wire::LogRecord r;
    r.time_ns = t0 + static_cast<int64_t>(i) * 1000 * kMs;
    r.offset = off;
    r.line = lines[i];
    off += lines[i].size() + 1;
    s.records.push_back(std::move(r));
  }
  s.end_offset = off;
  return s;
}

const wire::Series* Find(const wire::MetricBatch& b, std::string_view name) {
  for (const auto& s : b.series) {
    if (wire::MetricName(s.labels) == name) return &s;
  }
  return nullptr;
}

TEST(TrainingSeriesName, PrefixesAndSanitises) {
  EXPECT_EQ(TrainingSeriesName("loss"), "training_loss");
  EXPECT_EQ(TrainingSeriesName("eval/loss"), "training_eval_loss");
  EXPECT_EQ(TrainingSeriesName("lm loss"), "training_lm_loss");
  EXPECT_EQ(TrainingSeriesName("a / b"), "training_a_b");
  EXPECT_EQ(TrainingSeriesName("top-1 acc."), "training_top_1_acc");
  EXPECT_EQ(TrainingSeriesName("损失"), "training_");  // nothing usable: not stored
}

TEST(TrainingMetricsFromLogs, SeriesCarryTheStreamLabelsAndLineTimes) {
  TrainingMetricsFromLogs t;
  wire::LogBatch batch;
  batch.source = "gpu-1";
  batch.streams.push_back(
      Stream("file:1", 0,
             {"Loading checkpoint shards: 3 files",
              "{'loss': 0.5123, 'grad_norm': 1.25, 'learning_rate': 4.9e-05, 'epoch': 0.04}",
              "{'loss': 0.4987, 'grad_norm': 1.5, 'learning_rate': 4.8e-05, 'epoch': 0.08}"}));
  wire::MetricBatch out;
  t.Extract(batch, {0}, &out);
  const wire::Series* loss = Find(out, "training_loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(wire::LabelsToString(loss->labels),
            "{__name__=\"training_loss\",job=\"train\",node=\"gpu-1\"}");
  ASSERT_EQ(loss->samples.size(), 2u);
  EXPECT_EQ(loss->samples[0].t_ms, kT0 / kMs + 1000);
  EXPECT_EQ(loss->samples[0].value, 0.5123);
  EXPECT_EQ(loss->samples[1].value, 0.4987);
  const wire::Series* lr = Find(out, "training_learning_rate");
  ASSERT_NE(lr, nullptr);
  EXPECT_EQ(lr->samples[1].value, 4.8e-05);
  ASSERT_NE(Find(out, "training_grad_norm"), nullptr);
  ASSERT_NE(Find(out, "training_epoch"), nullptr);
  bool has_help = false;
  for (const auto& f : out.families) {
    if (f.name == "training_loss") has_help = f.help.starts_with("Training loss");
  }
  EXPECT_TRUE(has_help);
  EXPECT_EQ(t.Stats().samples, 8u);
}

TEST(TrainingMetricsFromLogs, OnlyRecordsAfterTheCommittedOffsetAreRead) {
  TrainingMetricsFromLogs t;
  wire::LogBatch batch;
  batch.source = "gpu-1";
  batch.streams.push_back(Stream("file:1", 0, {"{'loss': 1.0}", "{'loss': 2.0}", "{'loss': 3.0}"}));
  wire::MetricBatch out;
  // The first two lines (14 bytes each with the newline) were stored before.
  t.Extract(batch, {28}, &out);
  const wire::Series* loss = Find(out, "training_loss");
  ASSERT_NE(loss, nullptr);
  ASSERT_EQ(loss->samples.size(), 1u);
  EXPECT_EQ(loss->samples[0].value, 3.0);
}

TEST(TrainingMetricsFromLogs, LinesReadTogetherKeepEveryValueInOrder) {
  TrainingMetricsFromLogs t;
  wire::LogBatch batch;
  batch.source = "gpu-1";
  wire::LogStream s = Stream("file:1", 0,
                             {"{'loss': 1.0}", "{'loss': 2.0}", "{'loss': 3.0}",
                              "\r 10%|#  | 1/10 [00:01<00:09, 1.00it/s]"
                              "\r 20%|## | 2/10 [00:02<00:08, 1.00it/s]"});
  for (auto& r : s.records) r.time_ns = kT0;  // read in one go
  batch.streams.push_back(s);
  wire::MetricBatch out;
  t.Extract(batch, {0}, &out);
  const wire::Series* loss = Find(out, "training_loss");
  ASSERT_NE(loss, nullptr);
  ASSERT_EQ(loss->samples.size(), 3u);
  EXPECT_EQ(loss->samples[0].t_ms, kT0 / kMs);
  EXPECT_EQ(loss->samples[1].t_ms, kT0 / kMs + 1);
  EXPECT_EQ(loss->samples[2].t_ms, kT0 / kMs + 2);
  EXPECT_EQ(loss->samples[2].value, 3.0);
  const wire::Series* step = Find(out, "training_step");
  ASSERT_NE(step, nullptr);
  ASSERT_EQ(step->samples.size(), 1u);
  EXPECT_EQ(step->samples[0].value, 2);  // the last update of the bar
}

TEST(TrainingMetricsFromLogs, AFloodIsThinnedToTheSeriesRate) {
  TrainingMetricsFromLogs::Options o;
  o.rate_per_second = 10;
  o.burst = 5;
  TrainingMetricsFromLogs t(o);
  wire::LogBatch batch;
  batch.source = "gpu-1";
  std::vector<std::string> lines(100, "{'loss': 1.0}");
  wire::LogStream s = Stream("file:1", 0, lines);
  // 100 lines over one second: the burst of 5, then 10 per second.
  for (size_t i = 0; i < s.records.size(); ++i) s.records[i].time_ns = kT0 + i * 10 * kMs;
  batch.streams.push_back(s);
  wire::MetricBatch out;
  t.Extract(batch, {0}, &out);
  const wire::Series* loss = Find(out, "training_loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_GE(loss->samples.size(), 14u);
  EXPECT_LE(loss->samples.size(), 16u);
  EXPECT_EQ(t.Stats().thinned, 100 - loss->samples.size());
}

// Skipping the records whose template gave only saturated series changes
// nothing but the work: a flood of mixed templates (dicts, progress bars with
// '\r' updates, YOLO tables, a metric that appears mid-flood, NaN, joined
// tracebacks), then a quiet stretch, gives the same series and counts either
// way.
TEST(TrainingMetricsFromLogs, SkippingSaturatedTemplatesChangesNoValue) {
  std::mt19937 rng(5);
  auto num = [&](int digits) {
    std::string d = std::to_string(rng() % 10);
    d += '.';
    for (int i = 0; i < digits; ++i) d += static_cast<char>('0' + rng() % 10);
    return d;
  };
  std::vector<std::string> lines;
  for (int i = 0; i < 6000; ++i) {
    switch (rng() % 8) {
      case 0:
        lines.push_back("{'loss': " + num(4) + ", 'grad_norm': " + num(12) +
                        ", 'step': " + std::to_string(i) + "}");
        break;
      case 1:
        lines.push_back("Epoch 1/3:  " + std::to_string(i % 100) + "%|# | " + std::to_string(i) +
                        "/6000 [00:10<01:30, 9.8it/s, loss=" + num(3) + "]\rEpoch 1/3:  " +
                        std::to_string(i % 100) + "%|# | " + std::to_string(i + 1) +
                        "/6000 [00:10<01:30, 9.8it/s, loss=" + num(3) + "]");
        break;
      case 2:
        if (i % 50 == 2) {
          lines.push_back(
              "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size");
        } else {
          lines.push_back("        " + std::to_string(1 + i / 1000) + "/10      3.2G     " +
                          num(4) + "     " + num(4) + "      " + num(3) + "         12        640");
        }
        break;
      case 3:
        if (i > 3000) lines.push_back("eval step " + std::to_string(i) + " accuracy=" + num(3));
        break;
      case 4:
        lines.push_back(i % 7 ? "step " + std::to_string(i) + " loss=" + num(3)
                              : "step " + std::to_string(i) + " loss=nan");
        break;
      case 5:
        lines.push_back("Traceback (most recent call last):\n  File \"t.py\", line " +
                        std::to_string(i) + "\nValueError: lr=" + num(2));
        break;
      default:
        lines.push_back("2025-03-14 10:00:00,037 - INFO - tokens/s " + num(1) + " lr=" + num(6) +
                        "e-05");
    }
  }
  TrainingMetricsFromLogs::Options o;
  o.rate_per_second = 20;
  o.burst = 50;
  auto run = [&](bool skip, TrainingMetricsStats* stats) {
    o.skip_saturated_templates = skip;
    TrainingMetricsFromLogs t(o);
    wire::LogBatch batch;
    batch.source = "gpu-1";
    wire::LogStream s = Stream("file:1", 0, lines);
    // The first 5,000 records in one second (a flood), the rest 100 ms apart.
    for (size_t i = 0; i < s.records.size(); ++i) {
      s.records[i].time_ns = i < 5000 ? kT0 + static_cast<int64_t>(i) * kMs / 5
                                      : kT0 + (1000 + static_cast<int64_t>(i - 5000) * 100) * kMs;
    }
    batch.streams.push_back(s);
    wire::MetricBatch out;
    t.Extract(batch, {0}, &out);
    *stats = t.Stats();
    return out;
  };
  TrainingMetricsStats with_skips, without;
  wire::MetricBatch a = run(true, &with_skips), b = run(false, &without);
  ASSERT_EQ(a.series.size(), b.series.size());
  for (size_t i = 0; i < a.series.size(); ++i) {
    EXPECT_EQ(a.series[i].labels, b.series[i].labels);
    ASSERT_EQ(a.series[i].samples.size(), b.series[i].samples.size()) << i;
    for (size_t j = 0; j < a.series[i].samples.size(); ++j) {
      EXPECT_EQ(a.series[i].samples[j].t_ms, b.series[i].samples[j].t_ms);
      const double x = a.series[i].samples[j].value, y = b.series[i].samples[j].value;
      EXPECT_TRUE(x == y || (std::isnan(x) && std::isnan(y)));
    }
  }
  EXPECT_EQ(with_skips.samples, without.samples);
  EXPECT_EQ(with_skips.thinned, without.thinned);
  EXPECT_GT(with_skips.records_skipped, 3000u);  // the flood was mostly not parsed
  EXPECT_EQ(without.records_skipped, 0u);
  EXPECT_NE(Find(a, "training_accuracy"), nullptr);  // appeared mid-flood
  EXPECT_NE(Find(a, "training_box_loss"), nullptr);  // YOLO rows after their header
}

TEST(TrainingMetricsFromLogs, NamesPerSourceAndSourcesAreBounded) {
  TrainingMetricsFromLogs::Options o;
  o.max_names_per_source = 2;
  o.max_sources = 1;
  TrainingMetricsFromLogs t(o);
  wire::LogBatch batch;
  batch.source = "gpu-1";
  batch.streams.push_back(Stream("file:1", 0, {"{'loss': 1.0, 'grad_norm': 2.0, 'epoch': 3.0}"}));
  batch.streams.push_back(Stream("file:2", 0, {"{'loss': 1.0}"}));
  wire::MetricBatch out;
  t.Extract(batch, {0, 0}, &out);
  EXPECT_EQ(t.Stats().names_dropped, 1u);
  EXPECT_EQ(t.Stats().sources_evicted, 1u);
  EXPECT_EQ(out.SampleCount(), 3u);
}

// Through the ingester, with both stores: training metrics appear as series,
// and a retried batch adds nothing.
TEST(IngesterTrainingMetrics, LogLinesBecomeSeriesOnceEvenWhenRetried) {
  TempDir dir;
  tsdb::Options to;
  to.dir = dir.path() + "/tsdb";
  auto db = tsdb::Db::Open(to);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  logstore::Options lo;
  lo.dir = dir.path() + "/logs";
  lo.background_maintenance = false;
  auto logs = logstore::LogStore::Open(lo);
  ASSERT_TRUE(logs.ok()) << logs.status().ToString();
  Ingester ingester(db->get(), logs->get());

  wire::LogBatch batch;
  batch.source = "gpu-1";
  batch.streams.push_back(Stream("file:1", 0, {"iter 100: loss 2.5000, time 120.00ms", "plain"}));
  batch.streams[0].labels = {{"job", "train"}};
  wire::LogBatch retry = batch;
  ASSERT_TRUE(ingester.ReceiveLogBatch(&batch).ok());
  ASSERT_TRUE(ingester.ReceiveLogBatch(&retry).ok());

  auto series =
      (*db)->Select({{tsdb::MatchType::kEqual, "__name__", "training_loss"}}, 0, INT64_MAX);
  ASSERT_TRUE(series.ok());
  ASSERT_EQ(series->size(), 1u);
  EXPECT_EQ(wire::LabelsToString((*series)[0].labels),
            "{__name__=\"training_loss\",job=\"train\",node=\"gpu-1\"}");
  ASSERT_EQ((*series)[0].samples.size(), 1u);
  EXPECT_EQ((*series)[0].samples[0].value, 2.5);
  auto step = (*db)->Select({{tsdb::MatchType::kEqual, "__name__", "training_step"}}, 0, INT64_MAX);
  ASSERT_TRUE(step.ok());
  ASSERT_EQ(step->size(), 1u);
  EXPECT_EQ((*step)[0].samples[0].value, 100);
  IngestStats st = ingester.Stats();
  EXPECT_EQ(st.log_batches, 2u);
  EXPECT_GE(st.training.samples, 2u);
  EXPECT_EQ(st.training_append_errors, 0u);
  ASSERT_TRUE((*logs)->Close().ok());
  ASSERT_TRUE((*db)->Close().ok());
}

}  // namespace
}  // namespace vigil::ingest
