#include "ingest/ingester.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <tuple>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "store/tsdb/stale.h"
#include "wire/frame.h"

namespace vigil::ingest {
namespace {

class IngesterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = tmp_.path();
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ingester_ = std::make_unique<Ingester>(db_.get());
  }
  void TearDown() override {
    ingester_.reset();
    if (db_) (void)db_->Close();
    db_.reset();
  }

  static std::string Frame(uint64_t seq, int64_t t, double v, bool compress = false) {
    wire::MetricBatchBuilder b("gpu-node-7", t);
    b.Family("node_load1", wire::MetricType::kGauge, "1m load average.");
    b.Add("node_load1", v);
    wire::MetricBatch batch = b.Release();
    batch.sequence = seq;
    return wire::EncodeFrame(wire::FrameKind::kMetrics, wire::EncodeMetricBatch(batch), compress);
  }

  std::vector<wire::Series> All() {
    auto r = db_->Select({{tsdb::MatchType::kEqual, "__name__", "node_load1"}}, 0, INT64_MAX);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::vector<wire::Series>{};
  }

  TempDir tmp_;
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<Ingester> ingester_;
};

// `vigil up` hands its batches over without a frame: stored, tagged and
// deduplicated exactly as the same batch in a frame, and frames and batches
// of one source share one sequence.
TEST_F(IngesterTest, ABatchHandedOverInProcessIsAFrameWithoutTheBytes) {
  wire::MetricBatchBuilder b("gpu-node-7", 1000);
  b.Family("node_load1", wire::MetricType::kGauge, "1m load average.");
  b.Add("node_load1", {{"zone", "a"}, {"node", "spoofed"}}, 0.5);
  wire::MetricBatch batch = b.Release();
  batch.sequence = 1;
  ASSERT_TRUE(ingester_->ReceiveMetricBatch(&batch).ok());
  wire::MetricBatch again = batch;
  ASSERT_TRUE(ingester_->ReceiveMetricBatch(&again).ok());     // a retry
  ASSERT_TRUE(ingester_->Receive(Frame(1, 1500, 0.75)).ok());  // same sequence: a duplicate
  ASSERT_TRUE(ingester_->Receive(Frame(2, 2000, 1.0)).ok());
  auto series = All();
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(wire::LabelsToString(series[1].labels),
            "{__name__=\"node_load1\",node=\"gpu-node-7\",zone=\"a\"}");
  EXPECT_EQ(series[1].samples.size(), 1u);
  EXPECT_EQ(ingester_->Stats().duplicate_batches, 2u);

  wire::MetricBatchBuilder big("gpu-node-7", 3000);
  big.Add("node_load1", {{"zone", std::string(wire::kMaxLabelBytes + 1, 'x')}}, 1);
  wire::MetricBatch too_long = big.Release();
  too_long.sequence = 3;
  EXPECT_EQ(ingester_->ReceiveMetricBatch(&too_long).code(), StatusCode::kInvalidArgument);
}

TEST_F(IngesterTest, StoresSamplesTaggedWithTheirNode) {
  ASSERT_TRUE(ingester_->Receive(Frame(1, 1000, 0.5)).ok());
  ASSERT_TRUE(ingester_->Receive(Frame(2, 2000, 0.75, /*compress=*/true)).ok());
  auto series = All();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(wire::LabelsToString(series[0].labels),
            "{__name__=\"node_load1\",node=\"gpu-node-7\"}");
  ASSERT_EQ(series[0].samples.size(), 2u);
  EXPECT_EQ(series[0].samples[1].value, 0.75);
  EXPECT_EQ(ingester_->Stats().samples, 2u);
}

// The node label goes to its sorted place among the other labels, and a
// client-sent node label is replaced, not kept alongside.
TEST_F(IngesterTest, NodeLabelIsInsertedInOrderAndReplacesAClientValue) {
  wire::MetricBatchBuilder b("gpu-node-7", 1000);
  b.Add("node_load1", {{"gpu", "0"}, {"zone", "a"}}, 1);
  b.Add("node_load1", {{"gpu", "1"}, {"node", "spoofed"}, {"zone", "b"}}, 2);
  b.Add("node_load1", {{"a", "x"}}, 3);
  b.Add("node_load1", {{"zz", "y"}}, 4);
  b.Add("node_load1", {{"node", "spoofed"}}, 5);
  std::string frame =
      wire::EncodeFrame(wire::FrameKind::kMetrics, wire::EncodeMetricBatch(b.batch()), false);
  ASSERT_TRUE(ingester_->Receive(frame).ok());
  std::vector<std::string> got;
  for (const auto& s : All()) got.push_back(wire::LabelsToString(s.labels));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "{__name__=\"node_load1\",a=\"x\",node=\"gpu-node-7\"}",
                     "{__name__=\"node_load1\",gpu=\"0\",node=\"gpu-node-7\",zone=\"a\"}",
                     "{__name__=\"node_load1\",gpu=\"1\",node=\"gpu-node-7\",zone=\"b\"}",
                     "{__name__=\"node_load1\",node=\"gpu-node-7\"}",
                     "{__name__=\"node_load1\",node=\"gpu-node-7\",zz=\"y\"}",
                 }));
}

TEST_F(IngesterTest, RetriedBatchIsAcknowledgedButNotStoredTwice) {
  ASSERT_TRUE(ingester_->Receive(Frame(5, 1000, 1)).ok());
  ASSERT_TRUE(ingester_->Receive(Frame(5, 1000, 1)).ok());
  ASSERT_TRUE(ingester_->Receive(Frame(4, 500, 1)).ok());
  EXPECT_EQ(All()[0].samples.size(), 1u);
  EXPECT_EQ(ingester_->Stats().duplicate_batches, 2u);
}

TEST_F(IngesterTest, BadInputIsRejectedWithAReason) {
  EXPECT_EQ(ingester_->Receive("garbage").code(), StatusCode::kInvalidArgument);
  std::string f = Frame(1, 1000, 1);
  f[f.size() - 6] ^= 0x40;
  EXPECT_FALSE(ingester_->Receive(f).ok());

  wire::MetricBatchBuilder b("n", 1000);
  b.Add("bad-name", 1);
  std::string bad =
      wire::EncodeFrame(wire::FrameKind::kMetrics, wire::EncodeMetricBatch(b.batch()), false);
  Status st = ingester_->Receive(bad);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("bad-name"), std::string::npos);
  EXPECT_EQ(ingester_->Stats().rejected_batches, 3u);
  EXPECT_EQ(ingester_->Stats().batches, 0u);
}

// Names are checked byte by byte: a digit may not lead, a colon only belongs
// in metric names, and non-ASCII bytes are rejected.
TEST_F(IngesterTest, NamesFollowThePrometheusDataModel) {
  Status st;
  for (auto [metric, label, bad_name] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"1load", "gpu", "1load"},
           {"load", "9gpu", "9gpu"},
           {"load", "g:pu", "g:pu"},
           {"l\xc3\xa9oad", "gpu", "l\xc3\xa9oad"},
           {"load", "gp\x80u", "gp\x80u"}}) {
    wire::MetricBatchBuilder bb("n", 1000);
    bb.Add(metric, {{label, "v"}}, 1);
    st = ingester_->Receive(
        wire::EncodeFrame(wire::FrameKind::kMetrics, wire::EncodeMetricBatch(bb.batch()), false));
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad_name;
    EXPECT_NE(st.message().find("'" + bad_name + "'"), std::string::npos) << st.message();
  }
  wire::MetricBatchBuilder good("n", 1000);
  good.Add("ns:load_1", {{"_gpu9", "v"}, {"Zone", "w"}}, 1);
  EXPECT_TRUE(ingester_
                  ->Receive(wire::EncodeFrame(wire::FrameKind::kMetrics,
                                              wire::EncodeMetricBatch(good.batch()), false))
                  .ok());
  EXPECT_EQ(ingester_->Stats().rejected_batches, 5u);
  EXPECT_EQ(ingester_->Stats().batches, 1u);
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

// The raw samples of every series of `metric` (markers included), as
// "labels: v@t ..." with "stale" for a marker.
std::vector<std::string> Raw(tsdb::Db* db, const std::string& metric) {
  auto sel = db->SelectSeries({{tsdb::MatchType::kEqual, "__name__", metric}}, 0, INT64_MAX);
  EXPECT_TRUE(sel.ok());
  std::vector<std::string> out;
  std::vector<wire::Sample> buf;
  for (size_t i = 0; sel.ok() && i < (*sel)->size(); ++i) {
    EXPECT_TRUE((*sel)->Samples(i, &buf).ok());
    std::string line = wire::LabelsToString((*sel)->labels(i)) + ":";
    for (const auto& x : buf) {
      line += " " + (tsdb::IsStaleNaN(x.value) ? std::string("stale") : Num(x.value)) + "@" +
              std::to_string(x.t_ms);
    }
    out.push_back(line);
  }
  return out;
}

// One agent pass at t: GPU memory held by each pid in `pids`, plus a
// TensorBoard value recorded at a time of its own.
wire::MetricBatch GpuPass(uint64_t seq, int64_t t, std::vector<std::string> pids) {
  wire::MetricBatchBuilder b("gpu-node-7", t);
  for (const auto& pid : pids) b.Add("vigil_gpu_process_memory_bytes", {{"pid", pid}}, 100);
  b.AddAt("training_loss", {{"job", "j"}}, 0.5, t - 300);
  wire::MetricBatch batch = b.Release();
  batch.sequence = seq;
  return batch;
}

// A process that exits leaves the next pass: its series gets a staleness
// marker at that pass's time, in-process and through a frame alike, once,
// and a retried frame adds nothing. Values with times of their own are never
// marked.
TEST_F(IngesterTest, ASeriesThatLeavesAPassIsMarkedStale) {
  wire::MetricBatch p1 = GpuPass(1, 1000, {"10", "11"});
  ASSERT_TRUE(ingester_->ReceiveMetricBatch(&p1).ok());
  wire::MetricBatch p2 = GpuPass(2, 2000, {"10"});
  ASSERT_TRUE(ingester_->ReceiveMetricBatch(&p2).ok());
  EXPECT_EQ(p2.series.size(), 2u);  // the caller's batch keeps its own series
  std::string f3 = wire::EncodeFrame(wire::FrameKind::kMetrics,
                                     wire::EncodeMetricBatch(GpuPass(3, 3000, {})), true);
  ASSERT_TRUE(ingester_->Receive(f3).ok());
  ASSERT_TRUE(ingester_->Receive(f3).ok());         // a retry: a duplicate
  wire::MetricBatch p4 = GpuPass(4, 4000, {"11"});  // a pid reused: the series continues
  ASSERT_TRUE(ingester_->ReceiveMetricBatch(&p4).ok());

  EXPECT_EQ(Raw(db_.get(), "vigil_gpu_process_memory_bytes"),
            (std::vector<std::string>{
                "{__name__=\"vigil_gpu_process_memory_bytes\",node=\"gpu-node-7\",pid=\"10\"}:"
                " 100@1000 100@2000 stale@3000",
                "{__name__=\"vigil_gpu_process_memory_bytes\",node=\"gpu-node-7\",pid=\"11\"}:"
                " 100@1000 stale@2000 100@4000",
            }));
  EXPECT_EQ(Raw(db_.get(), "training_loss"),
            (std::vector<std::string>{"{__name__=\"training_loss\",job=\"j\",node=\"gpu-node-7\"}:"
                                      " 0.5@700 0.5@1700 0.5@2700 0.5@3700"}));
  IngestStats st = ingester_->Stats();
  EXPECT_EQ(st.staleness.markers, 2u);
  EXPECT_EQ(st.samples, 8u);  // markers are not counted as received samples
  EXPECT_EQ(st.duplicate_batches, 1u);
}

// After a server restart (a new Ingester over the same store) the first pass
// of a node marks nothing, whatever the store holds.
TEST_F(IngesterTest, NoFalseMarkersAfterAServerRestart) {
  wire::MetricBatch p1 = GpuPass(1, 1000, {"10", "11"});
  ASSERT_TRUE(ingester_->ReceiveMetricBatch(&p1).ok());
  ingester_ = std::make_unique<Ingester>(db_.get());
  wire::MetricBatch p2 = GpuPass(2, 2000, {"10"});
  ASSERT_TRUE(ingester_->ReceiveMetricBatch(&p2).ok());
  EXPECT_EQ(ingester_->Stats().staleness.markers, 0u);
  wire::MetricBatch p3 = GpuPass(3, 3000, {});
  ASSERT_TRUE(ingester_->ReceiveMetricBatch(&p3).ok());
  EXPECT_EQ(ingester_->Stats().staleness.markers, 1u);
}

// The standard protocols' batches are not passes; a Pushgateway group's
// series end when a push replaces them (PUT: all, POST: the names pushed)
// or the group is deleted.
TEST_F(IngesterTest, PushGroupsEndTheSeriesTheyReplace) {
  auto push = [&](int64_t t, std::vector<std::pair<std::string, std::string>> series,
                  bool whole_group) {
    wire::MetricBatch b;
    b.source = "server";
    b.pass_time_ms = t;
    for (const auto& [name, gpu] : series)
      b.series.push_back({{{"__name__", name}, {"gpu", gpu}, {"job", "ft"}}, {{t, 1}}});
    return ingester_->PushGroup("{job=\"ft\"}", whole_group, &b);
  };
  ASSERT_TRUE(push(1000, {{"loss", "0"}, {"loss", "1"}, {"lr", "0"}}, true).ok());
  ASSERT_TRUE(push(2000, {{"loss", "0"}}, /*whole_group=*/false).ok());  // POST: lr stays
  ASSERT_TRUE(push(3000, {}, true).ok());                                // DELETE
  EXPECT_EQ(
      Raw(db_.get(), "loss"),
      (std::vector<std::string>{
          "{__name__=\"loss\",gpu=\"0\",job=\"ft\",node=\"server\"}: 1@1000 1@2000 stale@3000",
          "{__name__=\"loss\",gpu=\"1\",job=\"ft\",node=\"server\"}: 1@1000 stale@2000",
      }));
  EXPECT_EQ(Raw(db_.get(), "lr"),
            (std::vector<std::string>{
                "{__name__=\"lr\",gpu=\"0\",job=\"ft\",node=\"server\"}: 1@1000 stale@3000"}));
  EXPECT_EQ(ingester_->Stats().push_staleness.markers, 3u);
  EXPECT_EQ(ingester_->Stats().staleness.markers, 0u);
}

// A finished job's training series (times of their own, so no pass ends
// them) end at the job's end once the grace after the snapshot that said so
// has passed; a job still running, or rerun under the same name, keeps its.
TEST_F(IngesterTest, TrainingSeriesOfAnEndedJobEnd) {
  ManualClockEnv env(100'000);
  JobStore jobs({});
  IngesterOptions o;
  o.job_store = &jobs;
  o.env = &env;
  ingester_ = std::make_unique<Ingester>(db_.get(), nullptr, o);
  wire::MetricBatch values;
  values.source = "n1";
  for (const char* job : {"train", "other"}) {
    values.series.push_back({{{"__name__", "training_loss"}, {"job", job}}, {{90'000, 1}}});
    values.series.push_back({{{"__name__", "training_loss"}, {"job", job}}, {{95'000, 0.5}}});
  }
  values.series.push_back({{{"__name__", "node_load1"}, {"job", "train"}}, {{95'000, 3}}});
  ASSERT_TRUE(ingester_->AppendMetrics(&values).ok());

  auto snapshot = [&](std::vector<wire::JobRecord> recs) {
    wire::JobsSnapshot s;
    s.node = "n1";
    s.time_ms = env.now;
    s.jobs = std::move(recs);
    return ingester_->Receive(
        wire::EncodeFrame(wire::FrameKind::kJobs, wire::EncodeJobsSnapshot(s), false));
  };
  wire::JobRecord train;
  train.id = "1";
  train.name = "train";
  train.ended = true;
  train.last_seen_ms = 97'000;
  train.run_exit = wire::RunExitRecord{98'000, 0, 0, ""};
  wire::JobRecord other;
  other.id = "2";
  other.name = "other";
  ASSERT_TRUE(snapshot({train, other}).ok());
  EXPECT_EQ(ingester_->Stats().job_end_markers, 0u);  // the grace: late values may be coming

  env.now += 30'000;
  wire::MetricBatchBuilder b("n1", env.now);
  b.Add("vigil_gpu_up", {{"gpu", "0"}}, 1);
  wire::MetricBatch pass = b.Release();
  pass.sequence = 1;
  ASSERT_TRUE(ingester_->ReceiveMetricBatch(&pass).ok());
  EXPECT_EQ(Raw(db_.get(), "training_loss"),
            (std::vector<std::string>{
                "{__name__=\"training_loss\",job=\"other\",node=\"n1\"}: 1@90000 0.5@95000",
                "{__name__=\"training_loss\",job=\"train\",node=\"n1\"}: 1@90000 0.5@95000 "
                "stale@98000",
            }));
  EXPECT_EQ(Raw(db_.get(), "node_load1").size(), 1u);
  EXPECT_EQ(Raw(db_.get(), "node_load1")[0].find("stale"), std::string::npos);
  ASSERT_TRUE(snapshot({train, other}).ok());  // marked once
  EXPECT_EQ(ingester_->Stats().job_end_markers, 1u);
}

// A sweep: two runs of "train", their series apart by `run`. The run that
// ends ends its own series; its sibling's go on.
TEST_F(IngesterTest, AnEndedRunEndsItsOwnSeriesNotItsSiblings) {
  ManualClockEnv env(100'000);
  JobStore jobs({});
  IngesterOptions o;
  o.job_store = &jobs;
  o.env = &env;
  ingester_ = std::make_unique<Ingester>(db_.get(), nullptr, o);
  wire::MetricBatch values;
  values.source = "n1";
  for (const char* run : {"1-5-ab", "2-6-ab"}) {
    values.series.push_back(
        {{{"__name__", "training_loss"}, {"job", "train"}, {"run", run}}, {{95'000, 0.5}}});
  }
  ASSERT_TRUE(ingester_->AppendMetrics(&values).ok());
  wire::JobRecord done, running;
  done.id = "1-5-ab";
  done.name = "train";
  done.ended = true;
  done.last_seen_ms = 97'000;
  running.id = "2-6-ab";
  running.name = "train";
  wire::JobsSnapshot snap;
  snap.node = "n1";
  snap.time_ms = env.now;
  snap.jobs = {done, running};
  ASSERT_TRUE(ingester_
                  ->Receive(wire::EncodeFrame(wire::FrameKind::kJobs,
                                              wire::EncodeJobsSnapshot(snap), false))
                  .ok());
  env.now += 30'000;
  wire::MetricBatchBuilder b("n1", env.now);
  b.Add("vigil_gpu_up", {{"gpu", "0"}}, 1);
  wire::MetricBatch pass = b.Release();
  pass.sequence = 1;
  ASSERT_TRUE(ingester_->ReceiveMetricBatch(&pass).ok());
  EXPECT_EQ(Raw(db_.get(), "training_loss"),
            (std::vector<std::string>{
                "{__name__=\"training_loss\",job=\"train\",node=\"n1\",run=\"1-5-ab\"}: "
                "0.5@95000 stale@97000",
                "{__name__=\"training_loss\",job=\"train\",node=\"n1\",run=\"2-6-ab\"}: 0.5@95000",
            }));
}

}  // namespace
}  // namespace vigil::ingest
