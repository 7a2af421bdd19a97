#include "api/job_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/env_wrapper.h"
#include "core/temp_dir.h"

namespace vigil::api {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1'764'460'800'000;  // ms
constexpr int64_t kMs = 1'000'000;           // ns

class ClockEnv final : public EnvWrapper {
 public:
  ClockEnv() : EnvWrapper(Env::Default()) {}
  int64_t NowMillis() override { return kNow; }
};

discover::DetectedJob Job(const std::string& id, const std::string& name, int pid, int64_t start) {
  discover::DetectedJob j;
  j.id = id;
  j.name = name;
  j.kind = discover::JobKind::kTraining;
  j.framework = discover::Framework::kPyTorch;
  j.launcher = "torchrun";
  j.world_size = 2;
  j.start_time_ms = start;
  discover::JobProcess p;
  p.pid = pid;
  p.start_time_ms = start;
  p.role = discover::JobProcessRole::kLauncher;
  p.cmdline = "torchrun --nproc-per-node 2 " + name + ".py";
  j.processes.push_back(p);
  return j;
}

class JobRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logstore::Options lo;
    lo.dir = tmp_.path() + "/logs";
    lo.env = &env_;
    lo.background_maintenance = false;
    lo.retention_days = 0;
    auto logs = logstore::LogStore::Open(lo);
    ASSERT_TRUE(logs.ok()) << logs.status().ToString();
    logs_ = std::move(*logs);
    tsdb::Options to;
    to.dir = tmp_.path() + "/tsdb";
    to.env = &env_;
    auto db = tsdb::Db::Open(to);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }
  void TearDown() override {
    ASSERT_TRUE(logs_->Close().ok());
    ASSERT_TRUE(db_->Close().ok());
  }

  void Log(const std::string& job, int64_t t_ms, const std::vector<std::string>& lines) {
    wire::LogBatch b;
    b.source = "gpu-1";
    wire::LogStream s;
    s.source_id = "file:" + job;
    s.labels = {{"job", job}, {"node", "gpu-1"}};
    s.start_offset = offsets_[job];
    uint64_t off = s.start_offset;
    for (const auto& l : lines) {
      wire::LogRecord r;
      r.time_ns = t_ms * kMs;
      r.offset = off;
      r.line = l;
      off += l.size() + 1;
      s.records.push_back(r);
    }
    s.end_offset = offsets_[job] = off;
    b.streams.push_back(s);
    ASSERT_TRUE(logs_->Append("gpu-1", b).ok());
  }

  json Get(collect::jobs::JobTracker* tracker) {
    Router router;
    JobRouteDeps deps;
    deps.tracker = tracker;
    deps.logs = logs_.get();
    deps.db = db_.get();
    deps.env = &env_;
    deps.node = "gpu-1";
    AddJobRoutes(&router, deps);
    auto m = router.Find("GET", "/api/v1/jobs");
    EXPECT_NE(m.route, nullptr);
    if (m.route == nullptr) return json();
    HttpRequest req;
    HttpResponse res = m.route->handler(req);
    EXPECT_EQ(res.status, 200);
    EXPECT_EQ(res.content_type, "application/json");
    return json::parse(res.body, nullptr, false);
  }

  TempDir tmp_;
  ClockEnv env_;
  std::unique_ptr<logstore::LogStore> logs_;
  std::unique_ptr<tsdb::Db> db_;
  std::map<std::string, uint64_t> offsets_;
};

TEST_F(JobRoutesTest, StatesAndReasonsFromLogsMetricsAndExitStatus) {
  const int64_t t0 = kNow - 3'600'000;
  std::vector<discover::DetectedJob> running = {
      Job("1-1", "crashy", 100, t0), Job("2-2", "hung", 200, t0), Job("3-3", "fine", 300, t0)};
  collect::jobs::JobTrackerOptions o;
  o.env = &env_;
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  collect::jobs::JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());

  // crashy: out of memory, then gone.
  Log("crashy", kNow - 2000,
      {"Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
       "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."});
  // hung: its step advanced every 10 s until 5 minutes ago.
  wire::MetricBatch mb;
  mb.source = "gpu-1";
  wire::Series step;
  step.labels = {{"__name__", "training_step"}, {"job", "hung"}, {"node", "gpu-1"}};
  for (int i = 0; i < 30; ++i) {
    step.samples.push_back({kNow - 600'000 + i * 10'000, static_cast<double>(i)});
  }
  mb.series.push_back(step);
  ASSERT_TRUE(db_->Append(mb).ok());
  // fine: an old, caught traceback; still running.
  Log("fine", t0 + 1000, {"Traceback (most recent call last):\nValueError: retrying"});

  running = {Job("2-2", "hung", 200, t0), Job("3-3", "fine", 300, t0)};
  ASSERT_TRUE(tracker.Poll().ok());

  json j = Get(&tracker);
  ASSERT_TRUE(j.is_object()) << j.dump();
  EXPECT_EQ(j["status"], "success");
  const json& jobs = j["data"]["jobs"];
  ASSERT_EQ(jobs.size(), 3u);
  std::map<std::string, json> by_name;
  for (const auto& job : jobs) by_name[job["name"]] = job;

  const json& crashy = by_name["crashy"];
  EXPECT_EQ(crashy["state"], "crashed");
  EXPECT_EQ(crashy["reason"], "cuda_oom");
  EXPECT_NE(crashy["reason_text"].get<std::string>().find("CUDA out of memory"), std::string::npos);
  EXPECT_EQ(crashy["framework"], "pytorch");
  EXPECT_EQ(crashy["launcher"], "torchrun");
  EXPECT_EQ(crashy["processes"][0]["role"], "launcher");
  EXPECT_FALSE(crashy["end_time_ms"].is_null());
  ASSERT_EQ(crashy["events"].size(), 1u);
  EXPECT_EQ(crashy["events"][0]["event"], "cuda_oom");
  EXPECT_EQ(crashy["log_query"], "{job=\"crashy\"}");

  const json& hung = by_name["hung"];
  EXPECT_EQ(hung["state"], "stalled");
  EXPECT_EQ(hung["last_step"], 29);
  EXPECT_TRUE(hung["end_time_ms"].is_null());

  const json& fine = by_name["fine"];
  EXPECT_EQ(fine["state"], "running");
  EXPECT_EQ(fine["events"].size(), 1u);  // shown, but it does not decide
  EXPECT_EQ(fine["node"], "gpu-1");
}

TEST_F(JobRoutesTest, WithoutStoresTheTrackerAloneAnswers) {
  std::vector<discover::DetectedJob> running = {Job("1-1", "train", 100, kNow - 1000)};
  collect::jobs::JobTrackerOptions o;
  o.env = &env_;
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  collect::jobs::JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());
  Router router;
  JobRouteDeps deps;
  deps.tracker = &tracker;
  deps.env = &env_;
  AddJobRoutes(&router, deps);
  HttpResponse res = router.Find("GET", "/api/v1/jobs").route->handler(HttpRequest{});
  json j = json::parse(res.body);
  ASSERT_EQ(j["data"]["jobs"].size(), 1u);
  EXPECT_EQ(j["data"]["jobs"][0]["state"], "running");
  EXPECT_TRUE(j["data"]["jobs"][0]["last_step"].is_null());
}

}  // namespace
}  // namespace vigil::api
