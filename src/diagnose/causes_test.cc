#include "diagnose/causes.h"

#include <gtest/gtest.h>

#include <set>

namespace vigil::diagnose {
namespace {

std::vector<Signal> Sig(std::initializer_list<const char*> ids) {
  std::vector<Signal> out;
  for (const char* id : ids) out.push_back({id, std::string("seen: ") + id, id});
  return out;
}

TEST(CausesTest, EveryIdTheIssueNamesIsInTheTable) {
  std::set<std::string> ids;
  for (const CauseRule& r : CauseRules()) {
    EXPECT_TRUE(ids.insert(std::string(r.id)).second) << "duplicate " << r.id;
    EXPECT_FALSE(r.source.empty()) << r.id;
    EXPECT_FALSE(r.title_zh.empty()) << r.id;
    EXPECT_GT(r.prior, 0) << r.id;
    EXPECT_LE(r.prior, 1) << r.id;
  }
  for (const char* id :
       {"input_pipeline_cpu", "input_pipeline_io", "communication_bound", "batch_too_small",
        "host_device_transfer", "thermal_throttle", "power_throttle", "host_memory_pressure",
        "gpu_memory_pressure", "learning_rate_too_high", "bad_input_data", "nccl_hang",
        "gpu_hardware_fault", "cuda_oom", "host_oom_killed", "code_error", "preempted",
        "environment_mismatch"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
}

TEST(CausesTest, NothingKnownIsUnknown) {
  auto c = RankCauses(Sig({"alert:gpu_underutilized"}));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].id, "unknown");
  EXPECT_EQ(c[0].confidence, 0);
  EXPECT_TRUE(c[0].evidence.empty());
  // What was seen is its evidence, though no cause fits it.
  c = RankCauses(Sig({"alert:gpu_idle_allocated", "gpu_memory_mostly_free", "host_cpu_saturated"}));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].id, "unknown");
  ASSERT_EQ(c[0].evidence.size(), 2u);
  EXPECT_EQ(c[0].evidence[0].id, "gpu_memory_mostly_free");
  EXPECT_EQ(c[0].evidence[1].id, "host_cpu_saturated");
}

TEST(CausesTest, AnUnderUsedGpuWithASaturatedCpuIsTheInputPipeline) {
  auto c = RankCauses(Sig({"alert:gpu_underutilized", "host_cpu_saturated"}));
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c[0].id, "input_pipeline_cpu");
  // Needed signals come first in the evidence.
  ASSERT_GE(c[0].evidence.size(), 2u);
  EXPECT_EQ(c[0].evidence[0].id, "host_cpu_saturated");
  // The same CPU without an under-used GPU explains nothing.
  EXPECT_EQ(RankCauses(Sig({"alert:gpu_temperature_high", "host_cpu_saturated"}))[0].id, "unknown");
}

TEST(CausesTest, TheJobsOwnNcclWarningsOutrankABusyHostCpu) {
  // A 2-rank job whose log has NCCL warnings, on a host whose CPU another
  // job keeps busy: the communication.
  auto c =
      RankCauses(Sig({"alert:gpu_underutilized", "host_cpu_saturated", "multi_rank", "log:nccl"}));
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c[0].id, "communication_bound");
  EXPECT_EQ(c[1].id, "input_pipeline_cpu");
  // Without NCCL in its log, or with the GPU's memory mostly free too, the
  // input pipeline stays first.
  EXPECT_EQ(RankCauses(Sig({"alert:gpu_underutilized", "host_cpu_saturated", "multi_rank"}))[0].id,
            "input_pipeline_cpu");
  EXPECT_EQ(RankCauses(Sig({"alert:gpu_underutilized", "host_cpu_saturated", "multi_rank",
                            "log:nccl", "gpu_memory_mostly_free"}))[0]
                .id,
            "input_pipeline_cpu");
}

TEST(CausesTest, ASpecificFailureOutranksTheTracebackAroundIt) {
  // A CUDA OOM is reported inside a traceback: the OOM is the cause.
  auto c = RankCauses(Sig({"alert:job_crashed", "event:traceback", "event:cuda_oom"}));
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c[0].id, "cuda_oom");
  EXPECT_EQ(c[1].id, "code_error");
  EXPECT_GT(c[0].confidence, c[1].confidence);
  // A traceback alone is the code.
  EXPECT_EQ(RankCauses(Sig({"alert:job_crashed", "event:traceback"}))[0].id, "code_error");
}

TEST(CausesTest, SupportingSignalsRaiseConfidence) {
  auto bare = RankCauses(Sig({"alert:training_loss_nan", "event:nan_loss"}));
  auto raised =
      RankCauses(Sig({"alert:training_loss_nan", "event:nan_loss", "lr_recently_raised"}));
  ASSERT_EQ(bare[0].id, "learning_rate_too_high");
  ASSERT_EQ(raised[0].id, "learning_rate_too_high");
  EXPECT_GT(raised[0].confidence, bare[0].confidence);
  // NaN from the first steps is the data, not the learning rate.
  EXPECT_EQ(RankCauses(Sig({"alert:training_loss_nan", "event:nan_loss", "nan_early"}))[0].id,
            "bad_input_data");
}

TEST(CausesTest, HangsThrottlesAndPreemption) {
  EXPECT_EQ(RankCauses(Sig({"alert:job_stalled", "stalled_with_nccl", "multi_rank"}))[0].id,
            "nccl_hang");
  // A crash with an NCCL error: the collective, not the traceback around it.
  auto nccl = RankCauses(Sig({"alert:job_crashed", "event:traceback", "event:nccl_error",
                              "crashed_with_nccl_error", "multi_rank"}));
  ASSERT_GE(nccl.size(), 2u);
  EXPECT_EQ(nccl[0].id, "nccl_hang");
  EXPECT_EQ(nccl[1].id, "code_error");
  EXPECT_EQ(RankCauses(Sig({"alert:gpu_temperature_high", "gpu_thermal_throttle"}))[0].id,
            "thermal_throttle");
  EXPECT_EQ(RankCauses(Sig({"alert:job_crashed", "verdict:sigterm"}))[0].id, "preempted");
  EXPECT_EQ(RankCauses(Sig({"alert:gpu_xid", "event:xid"}))[0].id, "gpu_hardware_fault");
  EXPECT_EQ(RankCauses(Sig({"alert:job_crashed", "event:no_kernel_image"}))[0].id,
            "environment_mismatch");
  EXPECT_EQ(RankCauses(Sig({"alert:job_crashed", "event:oom_killed", "host_memory_low"}))[0].id,
            "host_oom_killed");
  EXPECT_EQ(
      RankCauses(Sig({"alert:gpu_underutilized", "gpu_memory_mostly_free", "host_cpu_idle"}))[0].id,
      "batch_too_small");
}

}  // namespace
}  // namespace vigil::diagnose
