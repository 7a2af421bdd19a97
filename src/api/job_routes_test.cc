#include "api/job_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "diagnose/gpu_evidence.h"
#include "parse/training/wire_events.h"
#include "query/engine.h"

namespace vigil::api {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1'764'460'800'000;  // ms
constexpr int64_t kMs = 1'000'000;           // ns

// A job as a node's tracker reports it (wire/jobs.h).
wire::JobRecord Job(const std::string& id, const std::string& name, int pid, int64_t start) {
  wire::JobRecord j;
  j.id = id;
  j.name = name;
  j.kind = "training";
  j.framework = "pytorch";
  j.launcher = "torchrun";
  j.world_size = 2;
  j.start_time_ms = start;
  j.first_seen_ms = start;
  j.last_seen_ms = kNow;
  wire::JobProcessRecord p;
  p.pid = pid;
  p.start_time_ms = start;
  p.role = "launcher";
  p.cmdline = "torchrun --nproc-per-node 2 " + name + ".py";
  j.processes.push_back(p);
  return j;
}

wire::JobRecord Ended(wire::JobRecord j, int64_t last_seen_ms) {
  j.ended = true;
  j.last_seen_ms = last_seen_ms;
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

  // `run`: the job run's id as the agent labels its lines (empty: none).
  void Log(const std::string& job, int64_t t_ms, const std::vector<std::string>& lines,
           const std::string& run = "") {
    wire::LogBatch b;
    b.source = "gpu-1";
    wire::LogStream s;
    s.source_id = "file:" + job + run;
    s.labels = {{"job", job}, {"node", "gpu-1"}};
    if (!run.empty()) s.labels.push_back({"run", run});
    s.start_offset = offsets_[job + run];
    uint64_t off = s.start_offset;
    for (const auto& l : lines) {
      wire::LogRecord r;
      r.time_ns = t_ms * kMs;
      r.offset = off;
      r.line = l;
      off += l.size() + 1;
      s.records.push_back(r);
    }
    s.end_offset = offsets_[job + run] = off;
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

  // `node`'s snapshot arrives in the job store, as from its agent (or, for
  // this server's own node, from its tracker in-process).
  void Report(const std::string& node, std::vector<wire::JobRecord> jobs,
              std::vector<wire::NodeKernelEventRecord> node_events = {}) {
    wire::JobsSnapshot s;
    s.node = node;
    s.time_ms = env_.NowMillis();
    s.jobs = std::move(jobs);
    s.node_events = std::move(node_events);
    ASSERT_TRUE(store_.Receive(wire::EncodeJobsSnapshot(s)).ok());
  }

  json Get(const std::string& path = "/api/v1/jobs",
           std::vector<std::pair<std::string, std::string>> query = {}, int status = 200,
           bool with_stores = true) {
    net::Router router;
    diagnose::JobReportSources sources;
    sources.jobs = &store_;
    if (with_stores) {
      sources.logs = logs_.get();
      sources.db = db_.get();
    }
    sources.env = &env_;
    diagnose::JobReporter reporter(sources);
    query::Engine engine(db_.get());
    diagnose::EfficiencyOptions eo;
    eo.price_per_gpu_hour = 3;
    eo.currency = "CNY";
    diagnose::EfficiencyReporter efficiency(&engine, eo);
    AddJobRoutes(&router, {&reporter, with_stores ? &efficiency : nullptr});
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
  ingest::JobStore store_{{.env = &env_}};
  std::unique_ptr<logstore::LogStore> logs_;
  std::unique_ptr<tsdb::Db> db_;
  std::map<std::string, uint64_t> offsets_;
};

TEST_F(JobRoutesTest, StatesAndReasonsFromLogsMetricsAndExitStatus) {
  const int64_t t0 = kNow - 3'600'000;
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

  Report("gpu-1", {Ended(Job("1-1", "crashy", 100, t0), kNow), Job("2-2", "hung", 200, t0),
                   Job("3-3", "fine", 300, t0)});

  json j = Get();
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
  // The OOM and the traceback it came in, with where in the user's code.
  ASSERT_EQ(crashy["events"].size(), 2u);
  EXPECT_EQ(crashy["events"][0]["event"], "cuda_oom");
  EXPECT_EQ(crashy["events"][1]["event"], "traceback");
  EXPECT_NE(crashy["events"][1].dump().find("\"frame\":\"train.py:3 in <module>\""),
            std::string::npos)
      << crashy["events"][1].dump();
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

// A sweep: two runs of one script, both "train", on one node. Each run's
// lines and series carry its id (`run`), so each is judged on its own.
TEST_F(JobRoutesTest, TwoRunsOfOneScriptStayApart) {
  const int64_t t0 = kNow - 3'600'000;
  Log("train", kNow - 2000,
      {"Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."},
      "100-5-ab");
  Log("train", kNow - 2000, {"step 10 loss=1.5"}, "200-6-ab");
  Sample({{"__name__", "training_step"}, {"job", "train"}, {"run", "200-6-ab"}},
         {{kNow - 30'000, 9}, {kNow - 20'000, 10}, {kNow - 10'000, 11}, {kNow - 1000, 12}});
  Report("gpu-1",
         {Ended(Job("100-5-ab", "train", 100, t0), kNow), Job("200-6-ab", "train", 200, t0)});

  json j = Get();
  ASSERT_TRUE(j.is_object()) << j.dump();
  std::map<std::string, json> by_id;
  for (const auto& job : j["data"]["jobs"]) by_id[job["id"]] = job;
  const json& oom = by_id["100-5-ab"];
  EXPECT_EQ(oom["state"], "crashed");
  EXPECT_EQ(oom["reason"], "cuda_oom");
  EXPECT_EQ(oom["log_query"], "{run=\"100-5-ab\", node=\"gpu-1\"}");
  EXPECT_EQ(oom["series_selector"], "{run=\"100-5-ab\", node=\"gpu-1\"}");
  EXPECT_TRUE(oom["last_step"].is_null());  // the sibling's steps are not its own
  const json& fine = by_id["200-6-ab"];
  EXPECT_EQ(fine["state"], "running");
  EXPECT_TRUE(fine["events"].empty()) << fine["events"].dump();  // not its sibling's OOM
  EXPECT_EQ(fine["last_step"], 12);
}

TEST_F(JobRoutesTest, WithoutStoresTheSnapshotAloneAnswers) {
  Report("gpu-1", {Job("1-1", "train", 100, kNow - 1000)});
  json j = Get("/api/v1/jobs", {}, 200, /*with_stores=*/false);
  ASSERT_EQ(j["data"]["jobs"].size(), 1u);
  EXPECT_EQ(j["data"]["jobs"][0]["state"], "running");
  EXPECT_TRUE(j["data"]["jobs"][0]["last_step"].is_null());
}

// Issue 15: whose job it is, as the node named its owner; unknown for a job
// an older agent reported.
TEST_F(JobRoutesTest, AJobsOwner) {
  wire::JobRecord mine = Job("1-1", "train", 100, kNow - 1000);
  mine.user = "alice";
  mine.uid = 1000;
  Report("gpu-1", {mine, Job("2-2", "old-agent", 200, kNow - 2000)});
  json j = Get();
  ASSERT_EQ(j["data"]["jobs"].size(), 2u);
  std::map<std::string, std::string> owners;  // name -> "user/uid"
  for (const json& job : j["data"]["jobs"]) {
    owners[job["name"]] =
        job["user"].get<std::string>() + "/" + std::to_string(job["uid"].get<int64_t>());
  }
  EXPECT_EQ(owners["train"], "alice/1000");
  EXPECT_EQ(owners["old-agent"], "/-1");
}

// A server lists the jobs its agents report with its own; a node whose agent
// went quiet keeps its jobs listed, but a job it last saw running is no longer
// known to run.
TEST_F(JobRoutesTest, OtherNodesJobsFromTheirAgents) {
  Report("gpu-1", {Job("1-1", "local", 100, kNow - 1000)});
  Report("gpu-2", {Job("2-2", "remote", 7, kNow - 5000)});
  Log("remote", kNow - 2000, {"Traceback (most recent call last):\nValueError: caught"});

  json j = Get();
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
  EXPECT_EQ(Get("/api/v1/jobs", {{"node", "gpu-2"}})["data"]["jobs"].size(), 1u);

  // Two minutes without a report from gpu-2 (gpu-1 keeps reporting).
  env_.now += 120'000;
  Report("gpu-1", {Job("1-1", "local", 100, kNow - 1000)});
  json quiet = Get("/api/v1/jobs", {{"node", "gpu-2"}});
  ASSERT_EQ(quiet["data"]["jobs"].size(), 1u);
  EXPECT_EQ(quiet["data"]["jobs"][0]["state"], "unknown");
  EXPECT_EQ(quiet["data"]["jobs"][0]["reason"], "node_silent");
  EXPECT_EQ(Get("/api/v1/jobs", {{"node", "gpu-1"}})["data"]["jobs"][0]["state"], "running");
}

TEST(GpuEvidenceTest, PciAddressesOfTheKernelAndOfNvmlMeetInOneKey) {
  EXPECT_EQ(diagnose::PciKey("0000:3b:00"), "0:3b:00");
  EXPECT_EQ(diagnose::PciKey("00000000:3B:00.0"), "0:3b:00");
  EXPECT_EQ(diagnose::PciKey("00000001:3B:00.0"), "1:3b:00");
  EXPECT_EQ(diagnose::PciKey("3b:00"), "");
  EXPECT_EQ(diagnose::PciKey("zz:3b:00"), "");
  EXPECT_EQ(diagnose::PciKey(""), "");
}

// A job's GPUs come from NVML's process list; GPU faults on them during its
// life are its events, wherever they were read: the kernel's Xid line that
// names no process (placed by its PCI address) and the Xids NVML counted,
// the same fault told once. The node's events list them all.
TEST_F(JobRoutesTest, TheJobsGpusAndTheFaultsOnThem) {
  // The kernel's line, as the node's tracker read it from /dev/kmsg: an Xid
  // that names no process.
  parse::training::LogEventDetector detector;
  auto xid = detector.Detect(
      "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
      "bus.",
      1);
  ASSERT_EQ(xid.size(), 1u);
  wire::NodeKernelEventRecord kernel;
  kernel.kernel = {kNow - 10'000, 0, parse::training::ToWireEvent(xid[0])};
  Report("gpu-1", {Job("1-1", "train", 100, kNow - 3'600'000)}, {kernel});

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

  json j = Get();
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

  json node = Get("/api/v1/events");
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
  node = Get("/api/v1/events", {{"end_ms", std::to_string(kNow - 150'000)}});
  EXPECT_TRUE(node["data"]["events"].empty()) << node.dump();
  Get("/api/v1/events", {{"start_ms", "yesterday"}}, 400);
}

// The efficiency report: in the list when asked, and alone by job id.
TEST_F(JobRoutesTest, AJobsEfficiency) {
  const int64_t start = kNow - 600'000;
  Report("gpu-1", {Job("1-1", "train", 100, start), Job("2-2", "eval", 200, start)});
  Sample({{"__name__", "vigil_gpu_process_memory_bytes"}, {"gpu", "1"}, {"pid", "100"}},
         {{kNow - 30'000, 1e9}});
  std::vector<std::pair<int64_t, double>> util;
  for (int64_t t = start; t <= kNow; t += 1000) util.push_back({t, 75});
  Sample({{"__name__", "DCGM_FI_DEV_GPU_UTIL"}, {"gpu", "1"}}, util);

  json plain = Get();
  ASSERT_EQ(plain["data"]["jobs"].size(), 2u) << plain.dump();
  EXPECT_FALSE(plain["data"]["jobs"][0].contains("efficiency"));  // not asked for

  json listed = Get("/api/v1/jobs", {{"efficiency", "1"}});
  std::map<std::string, json> by_name;
  for (const json& j : listed["data"]["jobs"]) by_name[j["name"].get<std::string>()] = j;
  const json& e = by_name["train"]["efficiency"];
  EXPECT_EQ(e["gpus"], 1);
  // No host series: the quarter the GPU waited has no reason seen.
  EXPECT_NEAR(e["shares"]["gpu_busy"].get<double>(), 0.75, 1e-6) << e.dump();
  EXPECT_NEAR(e["shares"]["idle"].get<double>(), 0.25, 1e-6);
  EXPECT_NEAR(e["gpu_hours"].get<double>(), 600.0 / 3600, 1e-9);
  EXPECT_NEAR(e["cost"]["idle"].get<double>(), 0.25 * 600.0 / 3600 * 3, 1e-9);
  EXPECT_EQ(e["cost"]["currency"], "CNY");
  EXPECT_FALSE(e["final"].get<bool>());                            // still running
  EXPECT_TRUE(by_name["eval"]["efficiency"]["shares"].is_null());  // no GPU of its own

  json one = Get("/api/v1/jobs/efficiency", {{"id", "1-1"}, {"node", "gpu-1"}});
  EXPECT_EQ(one["data"]["job_id"], "1-1");
  EXPECT_EQ(one["data"]["node"], "gpu-1");
  EXPECT_EQ(one["data"]["efficiency"]["summary"],
            "GPU busy 75%, idle 25% (0.04 GPU-h idle, about 0.12 CNY)")
      << one.dump();
  Get("/api/v1/jobs/efficiency", {}, 400);
  Get("/api/v1/jobs/efficiency", {{"id", "9-9"}}, 404);
  Get("/api/v1/jobs/efficiency", {{"id", "1-1"}, {"node", "gpu-2"}}, 404);
  // A server without a metrics store has no reports to give.
  json bare = Get("/api/v1/jobs", {{"efficiency", "1"}}, 200, false);
  EXPECT_TRUE(bare["data"]["jobs"][0]["efficiency"].is_null()) << bare.dump();
  Get("/api/v1/jobs/efficiency", {{"id", "1-1"}}, 503, false);
}

// A long history does not cost a report per job in one request: the first
// 50 (running, then newest) have theirs, the rest null.
TEST_F(JobRoutesTest, TheListGivesTheFirst50JobsEfficiency) {
  std::vector<wire::JobRecord> jobs;
  for (int i = 0; i < 52; ++i) {
    jobs.push_back(Ended(Job(std::to_string(i) + "-1", "j" + std::to_string(i), 1000 + i,
                             kNow - 100'000'000 + i * 60'000),
                         kNow - 100'000'000 + i * 60'000 + 30'000));
  }
  Report("gpu-1", jobs);
  json listed = Get("/api/v1/jobs", {{"efficiency", "1"}});
  ASSERT_EQ(listed["data"]["jobs"].size(), 52u);
  int with = 0;
  for (const json& j : listed["data"]["jobs"]) with += j["efficiency"].is_object();
  EXPECT_EQ(with, 50);
  EXPECT_TRUE(listed["data"]["jobs"][0]["efficiency"].is_object());  // the newest
  EXPECT_TRUE(listed["data"]["jobs"][51]["efficiency"].is_null());   // the oldest
}

TEST_F(JobRoutesTest, AnNvmlCounterThatRestartsCountsFromZero) {
  Sample({{"__name__", "vigil_gpu_xid_errors_total"}, {"gpu", "3"}, {"xid", "94"}},
         {{kNow - 40'000, 2}, {kNow - 30'000, 2}, {kNow - 20'000, 1}, {kNow - 10'000, 4}});
  auto x = diagnose::NvmlXids(db_.get(), "gpu-1", {"3"}, kNow - 35'000, kNow);
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0].time_ms, kNow - 20'000);  // the agent restarted: 1 new since
  EXPECT_EQ(x[0].count, 1);
  EXPECT_EQ(x[1].count, 3);
  EXPECT_TRUE(diagnose::NvmlXids(db_.get(), "gpu-1", {"4"}, kNow - 35'000, kNow).empty());
  EXPECT_TRUE(diagnose::NvmlXids(db_.get(), "other", {}, kNow - 35'000, kNow).empty());
}

}  // namespace
}  // namespace vigil::api
