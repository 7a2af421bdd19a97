#include "diagnose/diagnosis.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/temp_dir.h"
#include "store/logs/log_store_test_util.h"
#include "store/tsdb/db.h"

namespace vigil::diagnose {
namespace {

using nlohmann::json;
constexpr int64_t kT0 = 1'764'460'800'000;  // 2025-11-30 00:00 UTC

class DiagnosisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = tmp_.path() + "/tsdb";
    o.retention_ms = 100LL * 365 * 86'400'000;
    db_ = std::move(tsdb::Db::Open(o)).value();
    query_ = std::make_unique<query::Engine>(db_.get());
  }

  // One sample a second for `seconds`, from kT0; value(i) gives the i-th.
  void Series(wire::Labels labels, int seconds, const std::function<double(int)>& value) {
    wire::NormalizeLabels(&labels);
    wire::MetricBatch b;
    b.source = "n1";
    wire::Series s{labels, {}};
    for (int i = 0; i < seconds; ++i) s.samples.push_back({kT0 + i * 1000LL, value(i)});
    b.series.push_back(std::move(s));
    ASSERT_TRUE(db_->Append(b).ok());
  }

  // A 4-core node whose CPUs are `busy` (0..1) busy, one GPU with `fb_used`
  // of 80 GiB used, over the last `seconds` of 5 minutes.
  void Node(double busy, double fb_used_gib, int seconds = 300) {
    const int from = 300 - seconds;
    auto counter = [&](wire::Labels labels, double rate) {
      wire::NormalizeLabels(&labels);
      wire::MetricBatch b;
      b.source = "n1";
      wire::Series s{labels, {}};
      for (int i = from; i < 300; ++i) s.samples.push_back({kT0 + i * 1000LL, (i - from) * rate});
      b.series.push_back(std::move(s));
      ASSERT_TRUE(db_->Append(b).ok());
    };
    for (int cpu = 0; cpu < 4; ++cpu) {
      for (const char* mode : {"idle", "user", "iowait"}) {
        const std::string m = mode;
        counter({{"__name__", "node_cpu_seconds_total"},
                 {"node", "n1"},
                 {"cpu", std::to_string(cpu)},
                 {"mode", mode}},
                m == "idle"   ? 1 - busy
                : m == "user" ? busy
                              : 0);
      }
    }
    Series({{"__name__", "DCGM_FI_DEV_GPU_UTIL"}, {"node", "n1"}, {"gpu", "0"}}, 300,
           [](int) { return 30; });
    Series({{"__name__", "DCGM_FI_DEV_FB_USED"}, {"node", "n1"}, {"gpu", "0"}}, 300,
           [=](int) { return fb_used_gib * 1024; });
    Series({{"__name__", "DCGM_FI_DEV_FB_FREE"}, {"node", "n1"}, {"gpu", "0"}}, 300,
           [=](int) { return (80 - fb_used_gib) * 1024; });
  }

  // A job on n1 whose one process has `cmdline`.
  static JobReport JobWithCommand(const std::string& id, const std::string& cmdline) {
    JobReport job;
    job.node = "n1";
    job.job.id = id;
    wire::JobProcessRecord p;
    p.cmdline = cmdline;
    job.job.processes.push_back(p);
    return job;
  }

  Diagnosis Run(const std::string& rule, wire::Labels labels, const JobReport* job = nullptr) {
    Diagnoser d({query_.get(), nullptr});
    return d.Diagnose({rule, std::move(labels), 0, kT0 + 299'000}, job);
  }

  TempDir tmp_;
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<query::Engine> query_;
};

TEST_F(DiagnosisTest, AnUnderUsedGpuOnASaturatedNodeIsTheInputPipeline) {
  Node(/*busy=*/0.97, /*fb_used_gib=*/20);
  Diagnosis d = Run("gpu_underutilized", {{"node", "n1"}, {"gpu", "0"}});
  ASSERT_FALSE(d.causes.empty());
  EXPECT_EQ(d.causes[0].id, "input_pipeline_cpu");
  ASSERT_EQ(d.suggestions.size(), 1u);
  EXPECT_EQ(d.suggestions[0].parameter, "num_workers");
  EXPECT_FALSE(d.suggestions[0].current.has_value());  // not known without the job's settings
  EXPECT_EQ(d.suggestions[0].suggested, "3");          // 4 cores, 1 GPU: 3 workers
  json j = json::parse(DiagnosisJson(d));
  EXPECT_EQ(j["causes"][0]["id"], "input_pipeline_cpu");
  EXPECT_NE(j["summary"].get<std::string>().find("host CPU 97% busy"), std::string::npos) << j;
  EXPECT_NE(j["summary_zh"].get<std::string>().find("可能原因"), std::string::npos);
  EXPECT_EQ(j["suggestions"][0]["current"], nullptr);
}

// A job that already runs as many DataLoader workers as the node's cores
// allow is not told to raise them (2 cores a GPU here, 1 worker, it runs 2).
TEST_F(DiagnosisTest, NoMoreWorkersThanTheCoresAllow) {
  Node(/*busy=*/0.97, /*fb_used_gib=*/20);
  Series({{"__name__", "DCGM_FI_DEV_GPU_UTIL"}, {"node", "n1"}, {"gpu", "1"}}, 300,
         [](int) { return 30; });
  JobReport job =
      JobWithCommand("r4", "/usr/bin/python3 main.py -a resnet50 --num-workers 2 /data/imagenet");
  Diagnosis d = Run("gpu_underutilized", {{"node", "n1"}, {"gpu", "0"}}, &job);
  ASSERT_EQ(d.causes[0].id, "input_pipeline_cpu");
  ASSERT_EQ(d.suggestions.size(), 1u);
  EXPECT_EQ(d.suggestions[0].parameter, "num_workers");
  EXPECT_EQ(d.suggestions[0].current, "2");
  EXPECT_FALSE(d.suggestions[0].suggested.has_value());
  EXPECT_NE(d.suggestions[0].text.find("more workers cannot help"), std::string::npos)
      << d.suggestions[0].text;
  EXPECT_NE(d.suggestions[0].text.find("`--num-workers 2`"), std::string::npos);
  // With fewer workers than that, the number to go to.
  job.job.processes[0].cmdline = "/usr/bin/python3 main.py --num-workers 0";
  d = Run("gpu_underutilized", {{"node", "n1"}, {"gpu", "0"}}, &job);
  EXPECT_EQ(d.suggestions[0].current, "0");
  EXPECT_EQ(d.suggestions[0].suggested, "1");
}

TEST_F(DiagnosisTest, AnIdleNodeWithFreeMemoryIsABatchTooSmall) {
  Node(/*busy=*/0.1, /*fb_used_gib=*/8);
  Diagnosis d = Run("gpu_underutilized", {{"node", "n1"}, {"gpu", "0"}});
  EXPECT_EQ(d.causes[0].id, "batch_too_small");
  EXPECT_EQ(d.suggestions[0].parameter, "batch_size");
}

// A node whose CPU series began 30 s ago (a fresh node or Vigil) is read
// as busy as it is: rate() over the 2-minute window divides by the whole
// window (reading a 10 % busy node as 77 % busy), the share of CPU time
// does not.
// An under-used GPU that moves 11 GB/s over PCIe while the host is neither
// saturated nor idle: the copies, and pinned memory with its current value.
TEST_F(DiagnosisTest, HeavyPcieTrafficIsHostToDeviceCopies) {
  Node(/*busy=*/0.5, /*fb_used_gib=*/60);
  for (const char* dir : {"TX", "RX"}) {
    Series({{"__name__", std::string("DCGM_FI_DEV_PCIE_") + dir + "_THROUGHPUT"},
            {"node", "n1"},
            {"gpu", "0"}},
           300, [&](int i) { return std::string(dir) == "TX" ? 1e6 : 9e6 + (i % 2) * 2e6; });
  }
  JobReport job = JobWithCommand("r7", "python train.py --pin-mem False --workers 8");
  Diagnosis d = Run("gpu_underutilized", {{"node", "n1"}, {"gpu", "0"}}, &job);
  ASSERT_FALSE(d.causes.empty());
  EXPECT_EQ(d.causes[0].id, "host_device_transfer");
  ASSERT_FALSE(d.causes[0].evidence.empty());
  EXPECT_NE(DiagnosisJson(d).find("PCIe traffic to and from the GPU 11.0 GB/s"), std::string::npos)
      << DiagnosisJson(d);
  ASSERT_EQ(d.suggestions.size(), 1u);
  EXPECT_EQ(d.suggestions[0].parameter, "pin_memory");
  EXPECT_EQ(d.suggestions[0].current, "False");  // as the job wrote it
  EXPECT_EQ(d.suggestions[0].suggested, "True");
  // A third of that is a compute-bound step's traffic: no such cause.
  Diagnoser quiet({query_.get(), nullptr}, {.pcie_busy_kbs = 33e6});
  Diagnosis q =
      quiet.Diagnose({"gpu_underutilized", {{"node", "n1"}, {"gpu", "0"}}, 0, kT0 + 299'000}, &job);
  ASSERT_FALSE(q.causes.empty());
  EXPECT_NE(q.causes[0].id, "host_device_transfer");
}

TEST_F(DiagnosisTest, AFreshNodesCpuIsReadAsItIs) {
  Node(/*busy=*/0.1, /*fb_used_gib=*/8, /*seconds=*/30);
  Diagnosis d = Run("gpu_underutilized", {{"node", "n1"}, {"gpu", "0"}});
  ASSERT_EQ(d.causes[0].id, "batch_too_small");
  bool idle = false;
  for (const Signal& s : d.causes[0].evidence) {
    if (s.id == "host_cpu_idle") {
      idle = true;
      EXPECT_EQ(s.evidence, "host CPU only 10% busy");
    }
  }
  EXPECT_TRUE(idle);
}

TEST_F(DiagnosisTest, NanAfterALearningRateRiseNamesTheRateWithItsValue) {
  Series({{"__name__", "training_learning_rate"}, {"node", "n1"}, {"job", "train"}, {"run", "r1"}},
         300, [](int i) { return i < 200 ? 1e-4 : 3e-3; });
  JobReport job;
  job.node = "n1";
  job.job.id = "r1";
  job.job.name = "train";
  job.by_run = true;
  job.progress.last_step = 500;
  TimedEvent nan;
  nan.time_ms = kT0 + 290'000;
  nan.event.kind = parse::training::EventKind::kNanLoss;
  job.events.push_back(nan);
  Diagnosis d = Run("training_loss_nan", {{"node", "n1"}, {"job", "train"}, {"run", "r1"}}, &job);
  EXPECT_EQ(d.causes[0].id, "learning_rate_too_high");
  ASSERT_FALSE(d.suggestions.empty());
  EXPECT_EQ(d.suggestions[0].parameter, "learning_rate");
  EXPECT_EQ(d.suggestions[0].current, "0.003");
  EXPECT_EQ(d.suggestions[0].suggested, "0.001");
  // The same NaN at step 3 is the data.
  job.progress.last_step = 3;
  EXPECT_EQ(Run("training_loss_nan", {{"node", "n1"}, {"run", "r1"}}, &job).causes[0].id,
            "bad_input_data");
}

TEST_F(DiagnosisTest, ACrashIsItsFailureKindAndOldEventsDoNotCount) {
  JobReport job;
  job.node = "n1";
  job.job.id = "r2";
  TimedEvent oom, old;
  oom.time_ms = kT0 + 298'000;
  oom.event.kind = parse::training::EventKind::kCudaOom;
  old.time_ms = kT0 - 3'600'000;  // an hour before: outside the window
  old.event.kind = parse::training::EventKind::kXid;
  job.events = {old, oom};
  Diagnosis d = Run("job_crashed", {{"node", "n1"}, {"run", "r2"}}, &job);
  EXPECT_EQ(d.causes[0].id, "cuda_oom");
  for (const RankedCause& c : d.causes) EXPECT_NE(c.id, "gpu_hardware_fault");
}

// A crash whose log has an NCCL error is the collective that failed, not
// the traceback around it; the same NCCL line while the job runs (a slow
// socket's warning under an under-used GPU) is no hang.
TEST_F(DiagnosisTest, ACrashWithAnNcclErrorIsTheCollective) {
  JobReport job = JobWithCommand("r6", "/usr/bin/python3 train.py --lr 1e-4");
  job.job.world_size = 2;
  TimedEvent traceback, nccl;
  traceback.time_ms = nccl.time_ms = kT0 + 298'000;
  traceback.event.kind = parse::training::EventKind::kTraceback;
  nccl.event.kind = parse::training::EventKind::kNcclError;
  job.events = {traceback, nccl};
  Diagnosis d = Run("job_crashed", {{"node", "n1"}, {"run", "r6"}}, &job);
  ASSERT_EQ(d.causes[0].id, "nccl_hang");
  ASSERT_EQ(d.suggestions.size(), 1u);
  EXPECT_EQ(d.suggestions[0].parameter, "NCCL_DEBUG");
  job.events = {nccl};
  Node(/*busy=*/0.5, /*fb_used_gib=*/60);
  d = Run("gpu_underutilized", {{"node", "n1"}, {"gpu", "0"}}, &job);
  EXPECT_EQ(d.causes[0].id, "communication_bound");
}

// The job's own settings, from the command line its node reported, give
// the suggestion's current value and the suggested one follows from it.
TEST_F(DiagnosisTest, SuggestionsQuoteTheJobsOwnSettings) {
  JobReport job =
      JobWithCommand("r3", "/usr/bin/python3 train.py --batch-size 16 --lr 3e-3 --num-workers 2");
  TimedEvent oom;
  oom.time_ms = kT0 + 298'000;
  oom.event.kind = parse::training::EventKind::kCudaOom;
  job.events = {oom};
  Diagnosis d = Run("job_crashed", {{"node", "n1"}, {"run", "r3"}}, &job);
  ASSERT_EQ(d.causes[0].id, "cuda_oom");
  ASSERT_EQ(d.suggestions.size(), 1u);
  EXPECT_EQ(d.suggestions[0].parameter, "batch_size");
  EXPECT_EQ(d.suggestions[0].current, "16");
  EXPECT_EQ(d.suggestions[0].suggested, "8");
  EXPECT_NE(d.suggestions[0].text.find("--batch-size 16"), std::string::npos)
      << d.suggestions[0].text;

  TimedEvent nan;
  nan.time_ms = kT0 + 298'000;
  nan.event.kind = parse::training::EventKind::kNanLoss;
  job.events = {nan};
  job.progress.last_step = 900;
  d = Run("training_loss_nan", {{"node", "n1"}, {"run", "r3"}}, &job);
  ASSERT_EQ(d.causes[0].id, "learning_rate_too_high");
  EXPECT_EQ(d.suggestions[0].current, "3e-3");
  EXPECT_EQ(d.suggestions[0].suggested, "0.001");
}

// Settings the trainer dumped in the job's log (Hugging Face's
// TrainingArguments) fill `current` where the command line has none; an
// older run of the same name, before this one was seen, is not read.
TEST_F(DiagnosisTest, SuggestionsQuoteTheSettingsDumpedInTheJobsLog) {
  logstore::Options o;
  o.dir = tmp_.path() + "/logs";
  o.background_maintenance = false;
  o.retention_days = 0;
  auto opened = logstore::LogStore::Open(o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<logstore::LogStore> logs = std::move(opened).value();
  using logstore::testing::Rec;
  constexpr int64_t kMs = 1'000'000;
  const int64_t seen = kT0 + 200'000;
  std::vector<Rec> recs = {
      {(seen - 3'600'000) * kMs, wire::LogLevel::kInfo, "per_device_train_batch_size=64,"},
      {(seen - 3'600'000) * kMs, wire::LogLevel::kInfo,
       "TrainingArguments(\n_n_gpu=1,\n"
       "per_device_train_batch_size=64,\n)"},
      {(seen - 1'000) * kMs, wire::LogLevel::kInfo,
       "TrainingArguments(\n_n_gpu=1,\nbf16=True,\ngradient_accumulation_steps=4,\n"
       "learning_rate=2e-05,\nper_device_train_batch_size=16,\n)"},
      {(seen + 90'000) * kMs, wire::LogLevel::kInfo, "{'loss': 1.52, 'learning_rate': 2e-05}"},
  };
  auto stream = logstore::testing::MakeStream(
      "file:train", {{"job", "sft"}, {"node", "n1"}, {"stream", "stdout"}}, 0, recs);
  ASSERT_TRUE(logs->Append("n1", logstore::testing::MakeBatch({stream})).ok());

  JobReport job = JobWithCommand("r5", "/usr/bin/python3 sft.py config.yaml");
  job.job.name = "sft";
  job.job.first_seen_ms = seen;
  TimedEvent oom;
  oom.time_ms = kT0 + 298'000;
  oom.event.kind = parse::training::EventKind::kCudaOom;
  job.events = {oom};
  Diagnoser d({query_.get(), logs.get()});
  Diagnosis got =
      d.Diagnose({"job_crashed", {{"node", "n1"}, {"job", "sft"}}, 0, kT0 + 299'000}, &job);
  ASSERT_EQ(got.causes[0].id, "cuda_oom");
  ASSERT_EQ(got.suggestions.size(), 1u);
  EXPECT_EQ(got.suggestions[0].current, "16");
  EXPECT_EQ(got.suggestions[0].suggested, "8");
  EXPECT_NE(got.suggestions[0].text.find("`per_device_train_batch_size=16` in the job's log"),
            std::string::npos)
      << got.suggestions[0].text;
  ASSERT_TRUE(logs->Close().ok());
}

TEST_F(DiagnosisTest, HostileLabelsNeitherBreakQueriesNorCrash) {
  Node(0.97, 20);
  Diagnosis d = Run("gpu_underutilized", {{"node", "n1\"} or vector(1) #"}, {"gpu", "0|.*"}});
  EXPECT_EQ(d.causes[0].id, "unknown");
  EXPECT_NO_THROW(json::parse(DiagnosisJson(d)));
}

}  // namespace
}  // namespace vigil::diagnose
