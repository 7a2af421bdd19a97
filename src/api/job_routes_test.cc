#include "api/job_routes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "api/gpu_evidence.h"
#include "core/manual_clock_env.h"
#include "core/temp_dir.h"

namespace vigil::api {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1'764'460'800'000;  // ms
constexpr int64_t kMs = 1'000'000;           // ns

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

  void Sample(wire::Labels labels, const std::vector<std::pair<int64_t, double>>& points) {
    wire::MetricBatch mb;
    mb.source = "gpu-1";
    wire::Series s;
    s.labels = std::move(labels);
    s.labels.push_back({"node", "gpu-1"});
    std::sort(s.labels.begin(), s.labels.end());
    for (auto [t, v] : points) s.samples.push_back({t, v});
    mb.series.push_back(s);
    ASSERT_TRUE(db_->Append(mb).ok());
  }

  json Get(collect::jobs::JobTracker* tracker, const std::string& path = "/api/v1/jobs",
           std::vector<std::pair<std::string, std::string>> query = {}, int status = 200) {
    net::Router router;
    JobRouteDeps deps;
    deps.tracker = tracker;
    deps.logs = logs_.get();
    deps.db = db_.get();
    deps.env = &env_;
    deps.node = "gpu-1";
    AddJobRoutes(&router, deps);
    auto m = router.Find("GET", path);
    EXPECT_NE(m.route, nullptr);
    if (m.route == nullptr) return json();
    net::HttpRequest req;
    req.query = std::move(query);
    net::HttpResponse res = m.route->handler(req);
    EXPECT_EQ(res.status, status) << res.body;
    EXPECT_EQ(res.content_type, "application/json");
    return json::parse(res.body, nullptr, false);
  }

  TempDir tmp_;
  ManualClockEnv env_{kNow};
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
  EXPECT_EQ(crashy["log_query"], "{job=\"crashy\", node=\"gpu-1\"}");

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
  net::Router router;
  JobRouteDeps deps;
  deps.tracker = &tracker;
  deps.env = &env_;
  AddJobRoutes(&router, deps);
  net::HttpResponse res = router.Find("GET", "/api/v1/jobs").route->handler(net::HttpRequest{});
  json j = json::parse(res.body);
  ASSERT_EQ(j["data"]["jobs"].size(), 1u);
  EXPECT_EQ(j["data"]["jobs"][0]["state"], "running");
  EXPECT_TRUE(j["data"]["jobs"][0]["last_step"].is_null());
}

// A server lists the jobs its agents report with its own; a node whose agent
// went quiet keeps its jobs listed, but a job it last saw running is no longer
// known to run.
TEST_F(JobRoutesTest, OtherNodesJobsFromTheirAgents) {
  std::vector<discover::DetectedJob> running = {Job("1-1", "local", 100, kNow - 1000)};
  collect::jobs::JobTrackerOptions o;
  o.env = &env_;
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  collect::jobs::JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());

  ingest::RemoteJobsOptions ro;
  ro.env = &env_;
  ingest::RemoteJobs remote(ro);
  auto snapshot = [&](const std::string& node, const std::string& id, const std::string& name) {
    collect::jobs::JobsSnapshot s;
    s.node = node;
    s.time_ms = kNow;
    collect::jobs::TrackedJob t;
    t.job = Job(id, name, 7, kNow - 5000);
    s.jobs.push_back(t);
    return collect::jobs::EncodeSnapshot(s);
  };
  ASSERT_TRUE(remote.Receive(snapshot("gpu-2", "2-2", "remote")).ok());
  ASSERT_TRUE(remote.Receive(snapshot("gpu-1", "9-9", "stale-self")).ok());  // ours: the tracker's
  Log("remote", kNow - 2000, {"Traceback (most recent call last):\nValueError: caught"});

  net::Router router;
  JobRouteDeps deps;
  deps.tracker = &tracker;
  deps.remote = &remote;
  deps.logs = logs_.get();
  deps.db = db_.get();
  deps.env = &env_;
  deps.node = "gpu-1";
  deps.node_silent_ms = 60'000;
  AddJobRoutes(&router, deps);
  auto get = [&](std::vector<std::pair<std::string, std::string>> query) {
    net::HttpRequest req;
    req.query = std::move(query);
    return json::parse(router.Find("GET", "/api/v1/jobs").route->handler(req).body);
  };
  json j = get({});
  std::map<std::string, std::string> nodes, states;
  for (const json& job : j["data"]["jobs"]) {
    nodes[job["name"]] = job["node"];
    states[job["name"]] = job["state"];
  }
  EXPECT_EQ(nodes, (std::map<std::string, std::string>{{"local", "gpu-1"}, {"remote", "gpu-2"}}));
  EXPECT_EQ(states["remote"], "running");
  // The log lines of job="remote" are gpu-1's (see Log), not gpu-2's.
  for (const json& job : j["data"]["jobs"]) {
    if (job["name"] == "remote") {
      EXPECT_TRUE(job["events"].empty()) << job.dump();
    }
  }
  EXPECT_EQ(get({{"node", "gpu-2"}})["data"]["jobs"].size(), 1u);

  // Two minutes without a report from gpu-2.
  ManualClockEnv later{kNow + 120'000};
  deps.env = &later;
  net::Router later_router;
  AddJobRoutes(&later_router, deps);
  net::HttpRequest req;
  req.query = {{"node", "gpu-2"}};
  json quiet = json::parse(later_router.Find("GET", "/api/v1/jobs").route->handler(req).body);
  ASSERT_EQ(quiet["data"]["jobs"].size(), 1u);
  EXPECT_EQ(quiet["data"]["jobs"][0]["state"], "unknown");
  EXPECT_EQ(quiet["data"]["jobs"][0]["reason"], "node_silent");
}

TEST(GpuEvidenceTest, PciAddressesOfTheKernelAndOfNvmlMeetInOneKey) {
  EXPECT_EQ(PciKey("0000:3b:00"), "0:3b:00");
  EXPECT_EQ(PciKey("00000000:3B:00.0"), "0:3b:00");
  EXPECT_EQ(PciKey("00000001:3B:00.0"), "1:3b:00");
  EXPECT_EQ(PciKey("3b:00"), "");
  EXPECT_EQ(PciKey("zz:3b:00"), "");
  EXPECT_EQ(PciKey(""), "");
}

// A job's GPUs come from NVML's process list; GPU faults on them during its
// life are its events, wherever they were read: the kernel's Xid line that
// names no process (placed by its PCI address) and the Xids NVML counted,
// the same fault told once. The node's events list them all.
TEST_F(JobRoutesTest, TheJobsGpusAndTheFaultsOnThem) {
  // The kernel's line: times in /dev/kmsg are since boot.
  const int64_t uptime_ms = Env::Default()->MonotonicMillis();
  std::ofstream(tmp_.path() + "/kmsg")
      << "3,7," << (uptime_ms - 10'000) * 1000
      << ",-;NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
         "off the bus.\n";
  std::vector<discover::DetectedJob> running = {Job("1-1", "train", 100, kNow - 3'600'000)};
  collect::jobs::JobTrackerOptions o;
  o.env = &env_;
  o.kernel_log = tmp_.path() + "/kmsg";
  o.detect_override = [&] { return Result<std::vector<discover::DetectedJob>>(running); };
  collect::jobs::JobTracker tracker(o);
  ASSERT_TRUE(tracker.Poll().ok());

  const std::string mem = "vigil_gpu_process_memory_bytes";
  Sample({{"__name__", mem}, {"gpu", "1"}, {"UUID", "GPU-b"}, {"pid", "100"}},
         {{kNow - 60'000, 1e9}, {kNow - 30'000, 2e9}});
  Sample({{"__name__", mem}, {"gpu", "0"}, {"UUID", "GPU-a"}, {"pid", "999"}},
         {{kNow - 30'000, 5e9}});
  Sample({{"__name__", mem}, {"gpu", "2"}, {"UUID", "GPU-c"}, {"pid", "100"}},
         {{kNow - 600'000, 1e9}});  // long ago: not one of its GPUs now
  Sample({{"__name__", "vigil_gpu_info"}, {"gpu", "0"}, {"pci_bus_id", "00000000:1A:00.0"}},
         {{kNow - 30'000, 1}});
  Sample({{"__name__", "vigil_gpu_info"}, {"gpu", "1"}, {"pci_bus_id", "00000000:3B:00.0"}},
         {{kNow - 30'000, 1}});
  const std::string xids = "vigil_gpu_xid_errors_total";
  // NVML's view of the kernel's Xid 79 (the same fault), two Xid 48 (double-bit
  // ECC) in one step, and an Xid 31 on another job's GPU.
  Sample({{"__name__", xids}, {"gpu", "1"}, {"xid", "79"}}, {{kNow - 9'000, 1}});
  Sample({{"__name__", xids}, {"gpu", "1"}, {"xid", "48"}},
         {{kNow - 300'000, 0}, {kNow - 200'000, 0}, {kNow - 100'000, 2}, {kNow - 5'000, 2}});
  Sample({{"__name__", xids}, {"gpu", "0"}, {"xid", "31"}}, {{kNow - 50'000, 1}});

  json j = Get(&tracker);
  ASSERT_EQ(j["data"]["jobs"].size(), 1u) << j.dump();
  const json& job = j["data"]["jobs"][0];
  EXPECT_EQ(job["gpus"], json::parse(R"([{"gpu":"1","uuid":"GPU-b","memory_bytes":2e9}])"));
  EXPECT_EQ(job["state"], "running");  // a live job is never "crashed"
  std::vector<std::string> got;
  for (const json& e : job["events"]) {
    got.push_back(e["event"].get<std::string>() + " " + e["details"]["xid"].dump() + " " +
                  e["details"].value("source", "kernel"));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"xid 48 nvml", "xid 79 kernel"})) << job.dump();
  const json& nvml48 = job["events"][0]["details"];
  EXPECT_EQ(nvml48["gpu"], "1");
  EXPECT_EQ(nvml48["count"], 2);
  EXPECT_FALSE(nvml48["meaning_zh"].get<std::string>().empty());
  EXPECT_FALSE(job["events"][1]["details"]["action_zh"].get<std::string>().empty());

  json node = Get(&tracker, "/api/v1/events");
  ASSERT_EQ(node["status"], "success") << node.dump();
  got.clear();
  for (const json& e : node["data"]["events"]) {
    got.push_back(e["source"].get<std::string>() + " gpu" + e["gpu"].get<std::string>() + " " +
                  e["details"]["xid"].dump() + " job=" + e["job_id"].get<std::string>());
    EXPECT_EQ(e["node"], "gpu-1");
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "nvml gpu1 48 job=", "nvml gpu0 31 job=", "kernel gpu1 79 job="}))
      << node.dump();

  // A window that ends before the faults; bad bounds.
  node = Get(&tracker, "/api/v1/events", {{"end_ms", std::to_string(kNow - 150'000)}});
  EXPECT_TRUE(node["data"]["events"].empty()) << node.dump();
  Get(&tracker, "/api/v1/events", {{"start_ms", "yesterday"}}, 400);
}

TEST_F(JobRoutesTest, AnNvmlCounterThatRestartsCountsFromZero) {
  Sample({{"__name__", "vigil_gpu_xid_errors_total"}, {"gpu", "3"}, {"xid", "94"}},
         {{kNow - 40'000, 2}, {kNow - 30'000, 2}, {kNow - 20'000, 1}, {kNow - 10'000, 4}});
  auto x = NvmlXids(db_.get(), "gpu-1", {"3"}, kNow - 35'000, kNow);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0].time_ms, kNow - 20'000);  // the agent restarted: 1 new since
  EXPECT_EQ(x[0].count, 1);
  EXPECT_EQ(x[1].count, 3);
  EXPECT_TRUE(NvmlXids(db_.get(), "gpu-1", {"4"}, kNow - 35'000, kNow).empty());
  EXPECT_TRUE(NvmlXids(db_.get(), "other", {}, kNow - 35'000, kNow).empty());
}

}  // namespace
}  // namespace vigil::api
