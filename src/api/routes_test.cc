#include "api/routes.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "core/temp_dir.h"
#include "ingest/exposition.h"
#include "net/http_client.h"
#include "wire/frame.h"

namespace vigil::api {
namespace {

using std::chrono::seconds;

class RoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = dir_ + "/tsdb";
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    logstore::Options lo;
    lo.dir = dir_ + "/logs";
    lo.background_maintenance = false;
    auto logs = logstore::LogStore::Open(lo);
    ASSERT_TRUE(logs.ok()) << logs.status().ToString();
    logs_ = std::move(logs).value();
    ingester_ = std::make_unique<ingest::Ingester>(db_.get(), logs_.get());
    CoreRouteDeps deps;
    deps.info = {"9.9.9", Env::Default()->NowMillis() - 5000, dir_, "127.0.0.1:0", "node-a", dir_};
    deps.db = db_.get();
    deps.logs = logs_.get();
    deps.ingester = ingester_.get();
    net::Router router;
    AddCoreRoutes(&router, deps);
    net::HttpServer::Options so;
    so.listen = "127.0.0.1:0";
    server_ = std::make_unique<net::HttpServer>(so, std::move(router));
    ASSERT_TRUE(server_->Start().ok());
    base_ = "http://127.0.0.1:" + std::to_string(server_->bound_port());
  }
  void TearDown() override {
    server_->Stop();
    (void)logs_->Close();
    (void)db_->Close();
  }

  std::string Frame(uint64_t seq, int64_t t) {
    wire::MetricBatchBuilder b("node-a", t);
    b.Family("DCGM_FI_DEV_GPU_UTIL", wire::MetricType::kGauge, "GPU utilization (in %).");
    b.Add("DCGM_FI_DEV_GPU_UTIL", {{"gpu", "0"}, {"UUID", "GPU-1"}}, 87);
    b.Family("vigil_gpu_driver_info", wire::MetricType::kGauge, "Driver.");
    b.Add("vigil_gpu_driver_info",
          {{"state", "ok"}, {"driver_version", "550.54.15"}, {"cuda_version", "12.4"}}, 1);
    b.Add("vigil_gpu_info", {{"gpu", "0"}, {"UUID", "GPU-1"}, {"modelName", "NVIDIA H100"}}, 1);
    b.Add("vigil_collector_success", {{"collector", "gpu"}}, 1);
    wire::MetricBatch batch = b.Release();
    batch.sequence = seq;
    return wire::EncodeFrame(wire::FrameKind::kMetrics, wire::EncodeMetricBatch(batch), true);
  }

  TempDir tmp_;
  std::string dir_ = tmp_.path(), base_;
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<logstore::LogStore> logs_;
  std::unique_ptr<ingest::Ingester> ingester_;
  std::unique_ptr<net::HttpServer> server_;
};

TEST_F(RoutesTest, IngestedFramesAppearOnMetricsAndStatus) {
  auto r = net::HttpPost(base_ + "/api/v1/ingest", Frame(1, Env::Default()->NowMillis()),
                         "application/x-vigil-wire", seconds(5));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 204) << r->body;

  auto m = net::HttpGet(base_ + "/metrics", seconds(5));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->status, 200);
  std::vector<ingest::ParsedFamily> fams;
  auto samples = ingest::ParseExposition(m->body, &fams);
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  bool found = false;
  for (const auto& s : *samples) {
    if (wire::MetricName(s.labels) == "DCGM_FI_DEV_GPU_UTIL") {
      found = true;
      EXPECT_EQ(s.value, 87);
      EXPECT_EQ(wire::LabelsToString(s.labels),
                R"({UUID="GPU-1",__name__="DCGM_FI_DEV_GPU_UTIL",gpu="0",node="node-a"})");
    }
  }
  EXPECT_TRUE(found) << m->body;
  EXPECT_NE(m->body.find("# TYPE vigil_tsdb_series gauge"), std::string::npos);

  auto st = net::HttpGet(base_ + "/api/v1/status", seconds(5));
  ASSERT_TRUE(st.ok());
  auto j = nlohmann::json::parse(st->body);
  EXPECT_EQ(j["version"], "9.9.9");
  EXPECT_EQ(j["node"], "node-a");
  EXPECT_GE(j["uptime_seconds"].get<int>(), 4);
  EXPECT_EQ(j["gpu"]["state"], "ok");
  EXPECT_EQ(j["gpu"]["driver_version"], "550.54.15");
  ASSERT_EQ(j["gpu"]["gpus"].size(), 1u);
  EXPECT_EQ(j["gpu"]["gpus"][0]["modelName"], "NVIDIA H100");
  EXPECT_EQ(j["collectors"][0]["name"], "gpu");
  EXPECT_EQ(j["ingest"]["batches"], 1);
  EXPECT_GE(j["tsdb"]["series"].get<int>(), 4);
}

// A log frame as an agent sends one after a truncation: the lines read
// (one cut at the size cap), and the bytes lost unread on a stream of their
// own with the file's labels (collect/logs/log_agent.cc).
std::string LogFrameWithLoss(uint64_t seq) {
  wire::LogBatch b;
  b.source = "node-a";
  b.sequence = seq;
  wire::Labels labels = {{"job", "train"}, {"source", "/runs/train.log"}};
  wire::LogStream lines;
  lines.source_id = "file:1:2:ab:0";
  lines.labels = labels;
  lines.start_offset = 0;
  lines.end_offset = 12;
  lines.counters.truncated_lines = 1;
  lines.records.push_back({Env::Default()->NowMillis() * 1'000'000, 0, wire::LogLevel::kInfo,
                           wire::kLogFlagTruncated, "step 1 lo"});
  wire::LogStream lost;
  lost.source_id = "file:1:2:ab:0#lost";
  lost.labels = labels;
  lost.start_offset = 12;
  lost.end_offset = 12 + 4096;
  lost.counters.lost_bytes = 4096;
  b.streams = {lines, lost};
  return wire::EncodeFrame(wire::FrameKind::kLogs, wire::EncodeLogBatch(b), true);
}

TEST_F(RoutesTest, LostLogBytesAppearOnMetricsPerSource) {
  // Twice: a retried frame (its acknowledgement lost) counts once.
  for (uint64_t seq : {1, 2}) {
    auto r = net::HttpPost(base_ + "/api/v1/ingest", LogFrameWithLoss(seq),
                           "application/x-vigil-wire", seconds(5));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 204) << r->body;
  }
  auto m = net::HttpGet(base_ + "/metrics", seconds(5));
  ASSERT_TRUE(m.ok());
  EXPECT_NE(m->body.find("# HELP vigil_log_lost_bytes_total Bytes of log text known lost before "
                         "they were read (truncated or rotated away unread), per source."),
            std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("# TYPE vigil_log_lost_bytes_total counter"), std::string::npos);
  std::vector<ingest::ParsedFamily> fams;
  auto samples = ingest::ParseExposition(m->body, &fams);
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  std::map<std::string, std::pair<std::string, double>> per_source;  // name -> labels, value
  for (const auto& s : *samples) {
    std::string name(wire::MetricName(s.labels));
    if (name.starts_with("vigil_log_") && name.ends_with("_total")) {
      EXPECT_EQ(per_source.count(name), 0u) << name << " twice: " << m->body;
      per_source[name] = {wire::LabelsToString(s.labels), s.value};
    }
  }
  ASSERT_EQ(per_source.count("vigil_log_lost_bytes_total"), 1u) << m->body;
  EXPECT_EQ(per_source["vigil_log_lost_bytes_total"].first,
            R"({__name__="vigil_log_lost_bytes_total",job="train",node="node-a",)"
            R"(source="/runs/train.log"})");
  EXPECT_EQ(per_source["vigil_log_lost_bytes_total"].second, 4096);
  // Next to the other per-source counters, on the same series labels.
  EXPECT_EQ(per_source["vigil_log_truncated_lines_total"].second, 1);
  EXPECT_EQ(per_source["vigil_log_lines_total"].second, 1);
}

TEST_F(RoutesTest, BadIngestIsA400AndHealthzAnswers) {
  auto r = net::HttpPost(base_ + "/api/v1/ingest", "not a frame", "application/octet-stream",
                         seconds(5));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("magic"), std::string::npos);
  auto h = net::HttpGet(base_ + "/healthz", seconds(5));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->body, "ok\n");
  auto nf = net::HttpGet(base_ + "/nope", seconds(5));
  ASSERT_TRUE(nf.ok());
  EXPECT_EQ(nf->status, 404);
}

}  // namespace
}  // namespace vigil::api
