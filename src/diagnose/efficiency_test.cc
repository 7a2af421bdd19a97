// The efficiency report on a real store read through the query engine: jobs
// whose GPUs and node were written sample by sample, shares checked against
// what the samples say.
#include "diagnose/efficiency.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "core/temp_dir.h"
#include "store/tsdb/db.h"

namespace vigil::diagnose {
namespace {

using nlohmann::json;
constexpr int64_t kT0 = 1'764'460'800'000;  // 2025-11-30 00:00 UTC
constexpr int kRunS = 600;                  // the jobs run 10 minutes
constexpr int kHalfS = kRunS / 2;

TEST(SplitIntervalTest, TheIdleRestGoesToTheReasonTheNodeShows) {
  const EfficiencyThresholds t;
  // Busy 62 % on a saturated host: the rest waited on input.
  EfficiencyShares s = SplitInterval({0.62, std::nullopt, 0.97, 0.0, std::nullopt}, false, t);
  EXPECT_DOUBLE_EQ(s.gpu_busy, 0.62);
  EXPECT_DOUBLE_EQ(s.input_bound, 0.38);
  EXPECT_DOUBLE_EQ(s.idle, 0);
  // Disk waits count as input too.
  s = SplitInterval({0.2, std::nullopt, 0.4, 0.35, std::nullopt}, false, t);
  EXPECT_DOUBLE_EQ(s.input_bound, 0.8);
  // A calm host and no other rank: idle.
  s = SplitInterval({0.2, std::nullopt, 0.3, 0.0, 0.9}, false, t);
  EXPECT_DOUBLE_EQ(s.idle, 0.8);
  EXPECT_DOUBLE_EQ(s.communication, 0);
  // The same busy NIC between ranks: communication.
  s = SplitInterval({0.2, std::nullopt, 0.3, 0.0, 0.9}, true, t);
  EXPECT_DOUBLE_EQ(s.communication, 0.8);
  // A kernel resident on almost empty SMs in a multi-rank job: a collective
  // spinning, not work.
  s = SplitInterval({1.0, 0.03, 0.3, 0.0, std::nullopt}, true, t);
  EXPECT_DOUBLE_EQ(s.gpu_busy, 0);
  EXPECT_DOUBLE_EQ(s.communication, 1.0);
  // ...but real work in a single-rank job.
  s = SplitInterval({1.0, 0.03, 0.3, 0.0, std::nullopt}, false, t);
  EXPECT_DOUBLE_EQ(s.gpu_busy, 1.0);
  // No utilisation sample: nothing to split.
  s = SplitInterval({std::nullopt, 0.5, 0.99, 0.0, 1.0}, true, t);
  EXPECT_DOUBLE_EQ(s.gpu_busy + s.input_bound + s.communication + s.idle, 0);
}

class EfficiencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = tmp_.path() + "/tsdb";
    o.retention_ms = 100LL * 365 * 86'400'000;
    db_ = std::move(tsdb::Db::Open(o)).value();
    query_ = std::make_unique<query::Engine>(db_.get());
  }

  // One sample a second for the run, from kT0; value(i) gives the i-th.
  void Series(wire::Labels labels, const std::function<double(int)>& value) {
    wire::NormalizeLabels(&labels);
    wire::MetricBatch b;
    b.source = "n1";
    wire::Series s{labels, {}};
    for (int i = 0; i <= kRunS; ++i) s.samples.push_back({kT0 + i * 1000LL, value(i)});
    b.series.push_back(std::move(s));
    ASSERT_TRUE(db_->Append(b).ok());
  }

  void Gpu(const char* metric, const char* gpu, const std::function<double(int)>& value) {
    Series({{"__name__", metric}, {"node", "n1"}, {"gpu", gpu}}, value);
  }

  // A 4-core node whose CPUs are busy(i) (0..1) in second i.
  void Cpu(const std::function<double(int)>& busy) {
    std::vector<double> idle(kRunS + 1, 0);
    for (int i = 1; i <= kRunS; ++i) idle[i] = idle[i - 1] + 1 - busy(i);
    for (int cpu = 0; cpu < 4; ++cpu) {
      Series({{"__name__", "node_cpu_seconds_total"},
              {"node", "n1"},
              {"cpu", std::to_string(cpu)},
              {"mode", "idle"}},
             [&](int i) { return idle[i]; });
      Series({{"__name__", "node_cpu_seconds_total"},
              {"node", "n1"},
              {"cpu", std::to_string(cpu)},
              {"mode", "iowait"}},
             [](int) { return 0; });
    }
  }

  // A NIC moving `bytes_per_s` in each direction, on a link of `speed` B/s.
  void Nic(const char* device, double bytes_per_s, double speed) {
    for (const char* dir : {"receive", "transmit"}) {
      Series({{"__name__", std::string("node_network_") + dir + "_bytes_total"},
              {"node", "n1"},
              {"device", device}},
             [=](int i) { return i * bytes_per_s; });
    }
    Series({{"__name__", "node_network_speed_bytes"}, {"node", "n1"}, {"device", device}},
           [=](int) { return speed; });
  }

  JobReport Job(std::vector<std::string> gpus, int world_size) {
    JobReport r;
    r.node = "n1";
    r.job.id = "4242-1-b";
    r.job.name = "train";
    r.job.start_time_ms = kT0;
    r.job.last_seen_ms = kT0 + kRunS * 1000LL;
    r.job.ended = true;
    r.job.world_size = world_size;
    r.state = "completed";
    for (const std::string& g : gpus) r.gpus.push_back({g, "GPU-" + g, std::nullopt});
    return r;
  }

  JobEfficiency Compute(const JobReport& r, EfficiencyOptions o = {}) {
    auto e = ComputeEfficiency(*query_, r, o, kT0 + kRunS * 1000LL + 5000);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? *e : JobEfficiency{};
  }

  TempDir tmp_;
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<query::Engine> query_;
};

// Two GPUs for 10 minutes. GPU 0 at 60 % throughout; GPU 1 at 0 % for the
// first half, then 100 %. The host CPU is saturated (97 %) in the first half,
// then calm (20 %). So: GPU 0 busy 0.6 + input 0.4, then busy 0.6 + idle
// 0.4; GPU 1 input 1.0, then busy 1.0. GPU 2 is another job's.
TEST_F(EfficiencyTest, SharesFollowTheGpusAndTheHost) {
  Gpu("DCGM_FI_DEV_GPU_UTIL", "0", [](int) { return 60; });
  Gpu("DCGM_FI_DEV_GPU_UTIL", "1", [](int i) { return i < kHalfS ? 0 : 100; });
  Gpu("DCGM_FI_DEV_GPU_UTIL", "2", [](int) { return 100; });
  Gpu("DCGM_FI_PROF_SM_ACTIVE", "0", [](int) { return 0.4; });
  Gpu("DCGM_FI_PROF_SM_ACTIVE", "2", [](int) { return 0.9; });
  Cpu([](int i) { return i <= kHalfS ? 0.97 : 0.2; });
  EfficiencyOptions o;
  o.price_per_gpu_hour = 2;
  o.currency = "USD";
  JobEfficiency e = Compute(Job({"0", "1"}, 1), o);
  ASSERT_TRUE(e.shares);
  // Intervals straddling the change blend it (range selectors are closed).
  EXPECT_NEAR(e.shares->gpu_busy, 0.55, 0.02);
  EXPECT_NEAR(e.shares->input_bound, 0.35, 0.02);
  EXPECT_NEAR(e.shares->idle, 0.10, 0.02);
  EXPECT_DOUBLE_EQ(e.shares->communication, 0);  // no network series
  EXPECT_NEAR(e.shares->gpu_busy + e.shares->input_bound + e.shares->communication + e.shares->idle,
              1.0, 1e-9);
  EXPECT_EQ(e.gpus, 2u);
  EXPECT_NEAR(e.gpu_hours, 2.0 * kRunS / 3600, 1e-9);
  EXPECT_NEAR(*e.idle_gpu_hours, e.shares->idle * e.gpu_hours, 1e-12);
  EXPECT_DOUBLE_EQ(e.measured, 1.0);
  EXPECT_EQ(e.step_ms, 15'000);
  // GPU 0's SM activity only (GPU 2 is not the job's); no tensor series.
  ASSERT_TRUE(e.sm_active);
  EXPECT_NEAR(*e.sm_active, 0.4, 1e-9);
  EXPECT_FALSE(e.tensor_active);
  EXPECT_FALSE(e.final);  // 5 s after its end: late samples may still come

  JsonWriter w;
  WriteEfficiencyJson(e, &w);
  json j = json::parse(w.Release());
  EXPECT_TRUE(j["tensor_active"].is_null());
  EXPECT_NEAR(j["shares"]["input_bound"].get<double>(), 0.35, 0.02);
  EXPECT_EQ(j["cost"]["currency"], "USD");
  EXPECT_NEAR(j["cost"]["total"].get<double>(), 2 * e.gpu_hours, 1e-9);
  EXPECT_NEAR(j["cost"]["idle"].get<double>(), 2 * *e.idle_gpu_hours, 1e-9);
  EXPECT_EQ(j["summary"],
            "GPU busy 55%, input-bound 35%, idle 10% (0.03 GPU-h idle, about 0.07 USD)"
            "; SM active 40%")
      << j;
  EXPECT_NE(j["summary_zh"].get<std::string>().find("等待输入 35%"), std::string::npos) << j;
}

// Between ranks, a saturated NIC explains the GPU's waits; loopback and a
// NIC with no link speed (virtual) do not count.
TEST_F(EfficiencyTest, ABusyNetworkBetweenRanksIsCommunication) {
  Gpu("DCGM_FI_DEV_GPU_UTIL", "0", [](int) { return 30; });
  Cpu([](int) { return 0.2; });
  Nic("eth0", 1.0e9, 1.25e9);  // 80 % of 10 Gb/s
  Nic("lo", 5.0e9, 0);
  JobEfficiency e = Compute(Job({"0"}, 2));
  ASSERT_TRUE(e.shares);
  EXPECT_NEAR(e.shares->gpu_busy, 0.3, 1e-6);
  EXPECT_NEAR(e.shares->communication, 0.7, 1e-6);
  EXPECT_NEAR(e.shares->idle, 0, 1e-6);
  // The same job alone (one rank): nothing to wait for but work.
  e = Compute(Job({"0"}, 1));
  EXPECT_NEAR(e.shares->idle, 0.7, 1e-6);
  EXPECT_NEAR(e.shares->communication, 0, 1e-6);
}

// A hung collective: NVML says 100 % busy, the SMs are almost empty.
TEST_F(EfficiencyTest, ASpinningCollectiveIsCommunicationNotWork) {
  Gpu("DCGM_FI_DEV_GPU_UTIL", "0", [](int) { return 100; });
  Gpu("DCGM_FI_PROF_SM_ACTIVE", "0", [](int i) { return i < kHalfS ? 0.7 : 0.02; });
  Cpu([](int) { return 0.2; });
  JobEfficiency e = Compute(Job({"0"}, 8));
  ASSERT_TRUE(e.shares);
  EXPECT_NEAR(e.shares->gpu_busy, 0.5, 0.03);
  EXPECT_NEAR(e.shares->communication, 0.5, 0.03);
  EXPECT_NEAR(*e.sm_active, 0.36, 0.02);
}

TEST_F(EfficiencyTest, AQuietNicIsNotCommunication) {
  Gpu("DCGM_FI_DEV_GPU_UTIL", "0", [](int) { return 30; });
  Cpu([](int) { return 0.2; });
  Nic("eth0", 1.0e8, 1.25e9);  // 8 %
  JobEfficiency e = Compute(Job({"0"}, 2));
  ASSERT_TRUE(e.shares);
  EXPECT_NEAR(e.shares->idle, 0.7, 1e-6);
}

// Only the part of the run the GPUs reported is measured; the shares rest
// on it, and the tensor pipe's mean is what was reported.
TEST_F(EfficiencyTest, MissingSamplesAreNotCountedAsIdle) {
  wire::MetricBatch b;
  wire::Series s{{{"__name__", "DCGM_FI_DEV_GPU_UTIL"}, {"gpu", "0"}, {"node", "n1"}}, {}};
  wire::Series tensor{
      {{"__name__", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"}, {"gpu", "0"}, {"node", "n1"}}, {}};
  for (int i = 0; i < kHalfS; ++i) {
    s.samples.push_back({kT0 + i * 1000LL, 80});
    tensor.samples.push_back({kT0 + i * 1000LL, 0.25});
  }
  b.series = {s, tensor};
  ASSERT_TRUE(db_->Append(b).ok());
  JobEfficiency e = Compute(Job({"0"}, 1));
  ASSERT_TRUE(e.shares);
  EXPECT_NEAR(e.measured, 0.5, 0.03);
  EXPECT_NEAR(e.shares->gpu_busy, 0.8, 1e-6);
  EXPECT_NEAR(e.shares->idle, 0.2, 1e-6);  // no host series: no reason seen
  EXPECT_NEAR(*e.tensor_active, 0.25, 1e-9);
  EXPECT_FALSE(e.sm_active);
  // Not priced: idle GPU-hours only.
  JsonWriter w;
  WriteEfficiencyJson(e, &w);
  json j = json::parse(w.Release());
  EXPECT_TRUE(j["cost"].is_null());
  EXPECT_EQ(j["summary"], "GPU busy 80%, idle 20% (0.03 GPU-h idle)");
}

TEST_F(EfficiencyTest, ALineWithoutIdleTimeHasNoIdleCost) {
  Gpu("DCGM_FI_DEV_GPU_UTIL", "0", [](int) { return 100; });
  EfficiencyOptions o;
  o.price_per_gpu_hour = 2;
  o.currency = "USD";
  JobEfficiency e = Compute(Job({"0"}, 1), o);
  EXPECT_EQ(EfficiencyLine(e, false), "GPU busy 100%, idle 0%");
  EXPECT_EQ(EfficiencyLine(e, true), "GPU 忙碌 100%，空闲 0%");
}

TEST_F(EfficiencyTest, AJobWithoutGpusHasNoShares) {
  Gpu("DCGM_FI_DEV_GPU_UTIL", "0", [](int) { return 100; });
  JobEfficiency e = Compute(Job({}, 1));
  EXPECT_FALSE(e.shares);
  EXPECT_EQ(e.gpus, 0u);
  EXPECT_EQ(EfficiencyLine(e, false), "");
  JsonWriter w;
  WriteEfficiencyJson(e, &w);
  json j = json::parse(w.Release());
  EXPECT_TRUE(j["shares"].is_null());
  EXPECT_TRUE(j["sm_active"].is_null());
  EXPECT_EQ(j["gpu_hours"], 0);
}

// A running job is read again each time; an ended one, once settled, is kept.
TEST_F(EfficiencyTest, TheReporterKeepsSettledReportsOnly) {
  auto append = [&](int from, int to, double v) {
    wire::MetricBatch b;
    wire::Series s{{{"__name__", "DCGM_FI_DEV_GPU_UTIL"}, {"gpu", "0"}, {"node", "n1"}}, {}};
    for (int i = from; i < to; ++i) s.samples.push_back({kT0 + i * 1000LL, v});
    b.series.push_back(std::move(s));
    ASSERT_TRUE(db_->Append(b).ok());
  };
  append(0, kHalfS, 50);
  EfficiencyReporter reporter(query_.get(), {});
  JobReport running = Job({"0"}, 1);
  running.job.ended = false;
  running.job.id = "running";
  const int64_t end = kT0 + kRunS * 1000LL;
  auto settled = reporter.For(Job({"0"}, 1), end + 3 * 60'000);
  ASSERT_TRUE(settled.ok());
  EXPECT_TRUE(settled->final);
  // The second half's samples arrive late (a remote agent's outbox).
  append(kHalfS, kRunS + 1, 100);
  auto again = reporter.For(Job({"0"}, 1), end + 4 * 60'000);
  auto live = reporter.For(running, end);
  ASSERT_TRUE(again.ok() && live.ok());
  EXPECT_FALSE(live->final);
  EXPECT_DOUBLE_EQ(again->measured, settled->measured);  // kept as it was
  EXPECT_NEAR(settled->measured, 0.5, 0.03);
  EXPECT_NEAR(live->measured, 1.0, 1e-9);  // read again
  EXPECT_NEAR(live->shares->gpu_busy, 0.75, 0.02);
}

}  // namespace
}  // namespace vigil::diagnose
