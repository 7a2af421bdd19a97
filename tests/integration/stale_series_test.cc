// Issue 13, "Series that stop, stop", end to end in one process: the GPU
// collector over tests/fake_nvml, the collection loop, the server's ingester,
// the store and PromQL, as `vigil up` wires them. GPU 1 falls off the bus
// (Xid 79: NVML says GPU_IS_LOST) and a process on GPU 0 exits; from the
// first pass without them their series answer nothing, where before they read
// their last value for the five-minute lookback.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "collect/metrics/gpu_collector.h"
#include "collect/metrics/loop.h"
#include "core/temp_dir.h"
#include "ingest/ingester.h"
#include "query/engine.h"
#include "store/tsdb/db.h"

namespace vigil {
namespace {

constexpr int64_t kT0 = 1'764'460'800'000;  // pass times: kT0 + k seconds

class StaleSeriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string scenario = tmp_.path() + "/lost.scenario";
    std::ofstream(scenario) << "gpus 2\n"
                               "curve all gpu_util 0:98\n"
                               "process 0 pid 9001 mem_mib 1000 to 12\n"
                               "fail 1 all GPU_IS_LOST at 10\n";
    setenv("VIGIL_FAKE_NVML_SCENARIO", scenario.c_str(), 1);
    fake_ = dlopen(VIGIL_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(fake_, nullptr) << dlerror();
    set_time_ = reinterpret_cast<void (*)(double)>(dlsym(fake_, "vigil_fake_nvml_set_time"));
    ASSERT_NE(set_time_, nullptr);
    set_time_(0);

    tsdb::Options o;
    o.dir = tmp_.path() + "/tsdb";
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ingester_ = std::make_unique<ingest::Ingester>(db_.get());

    collect::GpuCollectorOptions g;
    g.hostname = "node-a";
    g.library_path = VIGIL_FAKE_NVML_PATH;
    g.call_timeout = std::chrono::milliseconds(5000);  // generous: sanitizer builds are slow
    std::vector<std::unique_ptr<collect::MetricCollector>> collectors;
    collectors.push_back(std::make_unique<collect::GpuCollector>(g));
    collect::LoopOptions lo;
    lo.source = "node-a";
    loop_ = std::make_unique<collect::CollectionLoop>(
        lo, std::move(collectors),
        [this](wire::MetricBatch* b) { return ingester_->ReceiveMetricBatch(b); });
    engine_ = std::make_unique<query::Engine>(db_.get());
  }
  void TearDown() override {
    loop_.reset();
    if (db_) (void)db_->Close();
    if (fake_ != nullptr) dlclose(fake_);
    unsetenv("VIGIL_FAKE_NVML_SCENARIO");
  }

  // The pass at scenario second s.
  void PassAt(int s) {
    set_time_(s);
    loop_->RunPass(kT0 + s * 1000);
  }
  // The values of an instant query at scenario second s, as "gpu=value;".
  std::string At(const std::string& q, int s) {
    auto r = engine_->Instant(q, kT0 + s * 1000);
    if (!r.ok()) return "ERROR " + r.status().ToString();
    std::string out;
    for (const auto& x : r->series) {
      out += std::string(wire::LabelValue(x.labels, "gpu")) + "=" +
             query::FormatValue(x.points[0].v) + ";";
    }
    return out;
  }

  TempDir tmp_;
  void* fake_ = nullptr;
  void (*set_time_)(double) = nullptr;
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<ingest::Ingester> ingester_;
  std::unique_ptr<collect::CollectionLoop> loop_;
  std::unique_ptr<query::Engine> engine_;
};

TEST_F(StaleSeriesTest, ALostGpuAndAnEndedProcessStopAnsweringAtTheNextPass) {
  for (int s = 1; s <= 9; ++s) PassAt(s);
  EXPECT_EQ(At("DCGM_FI_DEV_GPU_UTIL", 9), "0=98;1=98;");
  EXPECT_EQ(At("vigil_gpu_process_memory_bytes", 9), "0=1048576000;");

  PassAt(10);  // GPU 1 is lost
  EXPECT_EQ(At("vigil_gpu_up", 10), "0=1;1=0;");
  EXPECT_EQ(At("DCGM_FI_DEV_GPU_UTIL", 10), "0=98;");
  // What an alert would ask: a lost GPU is not a busy one.
  EXPECT_EQ(At("DCGM_FI_DEV_GPU_UTIL > 90 and on(gpu) vigil_gpu_up == 0", 10), "");
  EXPECT_EQ(At("count_over_time(DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"}[1m])", 10), "1=9;");

  PassAt(11);
  EXPECT_EQ(At("vigil_gpu_process_memory_bytes", 11), "0=1048576000;");
  PassAt(12);  // the process has exited
  EXPECT_EQ(At("vigil_gpu_process_memory_bytes", 12), "");
  EXPECT_EQ(At("sum(vigil_gpu_process_memory_bytes)", 12), "");
  // Between passes and later, still nothing (no lookback over the marker).
  EXPECT_EQ(At("vigil_gpu_process_memory_bytes", 100), "");
  EXPECT_EQ(At("DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"}", 100), "");

  ingest::IngestStats st = ingester_->Stats();
  EXPECT_GT(st.staleness.markers, 1u);
  EXPECT_EQ(st.duplicate_batches, 0u);
}

}  // namespace
}  // namespace vigil
