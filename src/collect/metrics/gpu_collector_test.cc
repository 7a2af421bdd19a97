// GpuCollector against tests/fake_nvml, loaded through the production dlopen
// path. Scenario time is pinned with the fake's vigil_fake_nvml_set_time(), so
// values are checked against the scenario files, not against the clock.
#include "collect/metrics/gpu_collector.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

namespace vigil::collect {
namespace {

using wire::MetricBatch;

constexpr double kMiB = 1024.0 * 1024.0;

// Loads the fake (the collector's dlopen then shares this handle) and exposes
// its clock control.
class FakeNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(VIGIL_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    set_time_ = reinterpret_cast<void (*)(double)>(dlsym(handle_, "vigil_fake_nvml_set_time"));
    real_time_ = reinterpret_cast<void (*)()>(dlsym(handle_, "vigil_fake_nvml_use_real_time"));
    hanging_ = reinterpret_cast<int (*)()>(dlsym(handle_, "vigil_fake_nvml_hanging"));
    sessions_ = reinterpret_cast<int (*)()>(dlsym(handle_, "vigil_fake_nvml_open_sessions"));
    ASSERT_NE(sessions_, nullptr);
    ASSERT_NE(set_time_, nullptr);
    ASSERT_NE(real_time_, nullptr);
    ASSERT_NE(hanging_, nullptr);
    SetTime(0);
  }
  // The clock stays pinned: a detached thread still in a scripted hang must
  // not be kept there by real time.
  void TearDown() override {
    WaitIdle();
    if (handle_ != nullptr) dlclose(handle_);
    unsetenv("VIGIL_FAKE_NVML_SCENARIO");
  }

  void UseScenario(const std::string& name) {
    std::string path = std::string(VIGIL_FAKE_NVML_SCENARIOS) + "/" + name;
    setenv("VIGIL_FAKE_NVML_SCENARIO", path.c_str(), 1);
  }
  // Writes an ad-hoc scenario into the test's temp dir and selects it.
  void UseScenarioText(const std::string& text) {
    std::string path =
        ::testing::TempDir() + "/vigil_gpu_test." + std::to_string(getpid()) + ".scenario";
    std::ofstream(path) << text;
    setenv("VIGIL_FAKE_NVML_SCENARIO", path.c_str(), 1);
  }
  void SetTime(double s) { set_time_(s); }
  // Waits (without a deadline) until no thread is blocked in a scripted hang,
  // so a detached worker does not leak into the next test.
  void WaitHangsReleased() {
    while (hanging_() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Waits until every NVML session is shut down (a detached worker may still
  // be finishing one), so the next test's nvmlInit reads its own scenario.
  void WaitIdle() {
    if (sessions_ == nullptr) return;
    for (int i = 0; i < 6000 && sessions_() > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(sessions_(), 0) << "an NVML session outlived its test";
  }

  static GpuCollectorOptions Options() {
    GpuCollectorOptions o;
    o.hostname = "node-a";
    o.library_path = VIGIL_FAKE_NVML_PATH;
    o.call_timeout = std::chrono::milliseconds(5000);  // generous: sanitizer builds are slow
    return o;
  }

  static MetricBatch Pass(GpuCollector* c, Status* st = nullptr) {
    wire::MetricBatchBuilder b("node-a", 1000);
    Status s = c->Collect(&b);
    if (st != nullptr) *st = s;
    return b.Release();
  }

  void* handle_ = nullptr;
  void (*set_time_)(double) = nullptr;
  void (*real_time_)() = nullptr;
  int (*hanging_)() = nullptr;
  int (*sessions_)() = nullptr;
};

// The value of the one series named `name` whose labels include `match`.
std::optional<double> Value(const MetricBatch& b, const std::string& name,
                            const wire::Labels& match = {}) {
  std::optional<double> found;
  for (const auto& s : b.series) {
    if (wire::MetricName(s.labels) != name) continue;
    bool ok = true;
    for (const auto& m : match) {
      bool has = false;
      for (const auto& l : s.labels) has |= l == m;
      ok &= has;
    }
    if (!ok) continue;
    EXPECT_FALSE(found.has_value()) << "two series match " << name;
    found = s.samples.at(0).value;
  }
  return found;
}

std::string LabelOf(const MetricBatch& b, const std::string& name, const std::string& label) {
  for (const auto& s : b.series) {
    if (wire::MetricName(s.labels) != name) continue;
    for (const auto& l : s.labels) {
      if (l.name == label) return l.value;
    }
  }
  return "";
}

bool HasPrefix(const MetricBatch& b, const std::string& prefix) {
  for (const auto& s : b.series) {
    if (std::string(wire::MetricName(s.labels)).rfind(prefix, 0) == 0) return true;
  }
  return false;
}

wire::Labels Gpu(int i) { return {{"gpu", std::to_string(i)}}; }

// Collects until `name{match}` reads `want` (a bounded number of passes, no
// deadline): how tests wait for a worker that is finishing a stuck call.
MetricBatch PassUntil(GpuCollector* c, const std::string& name, double want,
                      const wire::Labels& match = {}) {
  MetricBatch b;
  for (int i = 0; i < 2000; ++i) {
    wire::MetricBatchBuilder builder("node-a", 1000);
    (void)c->Collect(&builder);
    b = builder.Release();
    if (Value(b, name, match) == want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return b;
}

TEST_F(FakeNvmlTest, H100ValuesMatchScenario) {
  UseScenario("h100x8.scenario");
  SetTime(10);
  GpuCollector c(Options());
  MetricBatch b = Pass(&c);

  EXPECT_EQ(Value(b, "vigil_gpu_devices"), 8);
  EXPECT_EQ(Value(b, "vigil_gpu_driver_responsive"), 1);
  EXPECT_EQ(Value(b, "vigil_gpu_driver_info",
                  {{"state", "ok"}, {"driver_version", "550.54.15"}, {"cuda_version", "12.4"}}),
            1);
  // dcgm-exporter's labels.
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_POWER_USAGE",
                  {{"gpu", "1"},
                   {"device", "nvidia1"},
                   {"modelName", "NVIDIA H100 80GB HBM3"},
                   {"Hostname", "node-a"}})
                .has_value(),
            true);
  EXPECT_EQ(LabelOf(b, "DCGM_FI_DEV_GPU_TEMP", "UUID").rfind("GPU-", 0), 0u);

  // Curves at t=10 (value ± noise amplitude).
  EXPECT_NEAR(*Value(b, "DCGM_FI_DEV_GPU_UTIL", Gpu(0)), 96, 2.5);
  EXPECT_NEAR(*Value(b, "DCGM_FI_DEV_MEM_COPY_UTIL", Gpu(0)), 55, 3.5);
  EXPECT_NEAR(*Value(b, "DCGM_FI_DEV_POWER_USAGE", Gpu(2)), 610, 25.5);
  EXPECT_NEAR(*Value(b, "DCGM_FI_DEV_GPU_TEMP", Gpu(3)), 80 + 7.0 * 10 / 120, 1.5);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_SM_CLOCK", Gpu(4)), 1980);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_MEM_CLOCK", Gpu(4)), 2619);
  EXPECT_EQ(Value(b, "vigil_gpu_sm_clock_max_mhz", Gpu(4)), 1980);

  // The GPU's own thresholds and limits.
  EXPECT_EQ(Value(b, "vigil_gpu_temp_slowdown_celsius", Gpu(3)), 90);
  EXPECT_EQ(Value(b, "vigil_gpu_temp_shutdown_celsius", Gpu(3)), 92);
  EXPECT_EQ(Value(b, "vigil_gpu_temp_max_operating_celsius", Gpu(3)), 87);
  EXPECT_EQ(Value(b, "vigil_gpu_power_limit_watts", Gpu(0)), 700);

  // Memory in dcgm-exporter's MiB, plus bytes.
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_FB_USED", Gpu(1)), 71234);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_FB_FREE", Gpu(1)), 81559 - 529 - 71234);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_FB_RESERVED", Gpu(1)), 529);
  EXPECT_EQ(Value(b, "vigil_gpu_memory_total_bytes", Gpu(1)), 81559 * kMiB);
  EXPECT_EQ(Value(b, "vigil_gpu_process_memory_bytes", {{"gpu", "1"}, {"pid", "4101"}}),
            71234 * kMiB);
  EXPECT_FALSE(Value(b, "vigil_gpu_process_memory_bytes", {{"pid", "5555"}}).has_value());
  // The compute processes, for job detection: one per GPU (pids 4100..4107).
  EXPECT_EQ(c.status().compute_pids,
            (std::vector<int>{4100, 4101, 4102, 4103, 4104, 4105, 4106, 4107}));

  EXPECT_NEAR(*Value(b, "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", Gpu(0)), 950000, 200001);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", Gpu(6)), 0);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", Gpu(6)), 12);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_XID_ERRORS", Gpu(5)), 0);
  EXPECT_EQ(Value(b, "vigil_gpu_gpm_supported", Gpu(0)), 1);
  // GPM ratios need two samples: none on the first pass.
  EXPECT_FALSE(HasPrefix(b, "DCGM_FI_PROF_"));

  // Every series belongs to a declared family with a type and help.
  for (const auto& s : b.series) {
    std::string_view name = wire::MetricName(s.labels);
    bool declared = false;
    for (const auto& f : b.families) {
      if (f.name != name) continue;
      declared = true;
      EXPECT_NE(f.type, wire::MetricType::kUnknown) << name;
      EXPECT_FALSE(f.help.empty()) << name;
    }
    EXPECT_TRUE(declared) << name;
  }
  const double energy0 = *Value(b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Gpu(0));
  EXPECT_GT(energy0, 86400000.0 * 1000);

  SetTime(70);
  b = Pass(&c);
  EXPECT_NEAR(*Value(b, "DCGM_FI_PROF_SM_ACTIVE", Gpu(0)), 0.81, 0.025);
  EXPECT_NEAR(*Value(b, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", Gpu(0)), 0.46, 0.025);
  EXPECT_NEAR(*Value(b, "DCGM_FI_PROF_SM_OCCUPANCY", Gpu(0)), 0.38, 0.015);
  EXPECT_NEAR(*Value(b, "DCGM_FI_PROF_DRAM_ACTIVE", Gpu(0)), 0.52, 0.035);
  EXPECT_NEAR(*Value(b, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", Gpu(0)), 0.96, 0.025);
  // The notebook on GPU 0 has started; energy went up by ~60 s × ~610 W.
  EXPECT_EQ(Value(b, "vigil_gpu_process_memory_bytes", {{"gpu", "0"}, {"pid", "5555"}}),
            1024 * kMiB);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_FB_USED", Gpu(0)), 71234 + 1024);
  EXPECT_NEAR(*Value(b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Gpu(0)) - energy0, 60 * 610 * 1000,
              60 * 30 * 1000);

  // GPU 3 throttles from 180 s; GPU 5's Xids at 120 and 125; ECC on GPU 6.
  SetTime(200);
  b = Pass(&c);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", Gpu(3)), 32);
  EXPECT_EQ(Value(b, "vigil_gpu_clock_event_reason_active",
                  {{"gpu", "3"}, {"reason", "sw_thermal_slowdown"}}),
            1);
  EXPECT_EQ(Value(b, "vigil_gpu_clock_event_reason_active",
                  {{"gpu", "2"}, {"reason", "sw_thermal_slowdown"}}),
            0);
  EXPECT_NEAR(*Value(b, "DCGM_FI_DEV_SM_CLOCK", Gpu(3)), 1755, 15.5);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_XID_ERRORS", Gpu(5)), 31);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_XID_ERRORS", Gpu(4)), 0);
  EXPECT_EQ(Value(b, "vigil_gpu_xid_errors_total", {{"gpu", "5"}, {"xid", "13"}}), 1);
  EXPECT_EQ(Value(b, "vigil_gpu_xid_errors_total", {{"gpu", "5"}, {"xid", "31"}}), 1);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", Gpu(6)), 3);

  // Xids are counted once, not again on the next pass.
  SetTime(201);
  b = Pass(&c);
  EXPECT_EQ(Value(b, "vigil_gpu_xid_errors_total", {{"gpu", "5"}, {"xid", "31"}}), 1);

  GpuStatus st = c.status();
  EXPECT_EQ(st.state, NvmlState::kOk);
  EXPECT_TRUE(st.responsive);
  EXPECT_EQ(st.gpu_count, 8u);
  EXPECT_EQ(st.driver_version, "550.54.15");
  EXPECT_NE(st.message.find("NVIDIA H100 80GB HBM3"), std::string::npos) << st.message;
}

TEST_F(FakeNvmlTest, AmpereHasNoGpmMetrics) {
  UseScenario("a100x2.scenario");
  SetTime(30);
  GpuCollector c(Options());
  (void)Pass(&c);
  SetTime(31);
  MetricBatch b = Pass(&c);
  EXPECT_EQ(Value(b, "vigil_gpu_devices"), 2);
  EXPECT_EQ(Value(b, "vigil_gpu_gpm_supported", Gpu(0)), 0);
  EXPECT_FALSE(HasPrefix(b, "DCGM_FI_PROF_"));
  EXPECT_EQ(Value(b, "vigil_gpu_driver_info",
                  {{"driver_version", "535.161.08"}, {"cuda_version", "12.2"}}),
            1);
  EXPECT_NEAR(*Value(b, "DCGM_FI_DEV_GPU_UTIL", Gpu(0)), 100, 1.5);
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_GPU_UTIL", Gpu(1)), 0);
  EXPECT_EQ(Value(b, "vigil_gpu_clock_event_reason_active", {{"gpu", "1"}, {"reason", "gpu_idle"}}),
            1);
  EXPECT_EQ(Value(b, "vigil_gpu_temp_slowdown_celsius", Gpu(1)), 89);
  EXPECT_EQ(LabelOf(b, "DCGM_FI_DEV_GPU_UTIL", "modelName"), "NVIDIA A100-SXM4-80GB");
}

TEST_F(FakeNvmlTest, ComputeCapabilityIsAnInfoLabel) {
  // By model (A100 -> 8.0, RTX 5090 -> 12.0), set by the scenario, or left
  // out when NVML does not say (the fake answers NOT_SUPPORTED for a model it
  // does not know).
  UseScenarioText(
      "gpus 4\n"
      "gpu 0 model \"NVIDIA A100-SXM4-80GB\"\n"
      "gpu 1 model \"NVIDIA GeForce RTX 5090\"\n"
      "gpu 2 model \"NVIDIA A10G\"\n"
      "gpu 2 compute_capability 8.6\n"
      "gpu 3 model \"NVIDIA Mystery 1\"\n");
  GpuCollector c(Options());
  MetricBatch b = Pass(&c);
  EXPECT_EQ(Value(b, "vigil_gpu_info", {{"gpu", "0"}, {"compute_capability", "8.0"}}), 1);
  EXPECT_EQ(Value(b, "vigil_gpu_info", {{"gpu", "1"}, {"compute_capability", "12.0"}}), 1);
  EXPECT_EQ(Value(b, "vigil_gpu_info", {{"gpu", "2"}, {"compute_capability", "8.6"}}), 1);
  ASSERT_EQ(Value(b, "vigil_gpu_info", Gpu(3)), 1);
  for (const auto& series : b.series) {
    if (wire::MetricName(series.labels) != "vigil_gpu_info") continue;
    bool gpu3 = false;
    for (const auto& l : series.labels) gpu3 |= l.name == "gpu" && l.value == "3";
    for (const auto& l : series.labels) {
      if (gpu3 && l.name == "compute_capability") {
        EXPECT_EQ(l.value, "");
      }
    }
  }

  ProbeOptions po;
  po.library_path = VIGIL_FAKE_NVML_PATH;
  auto inv = ProbeNvml(po);
  ASSERT_TRUE(inv.ok());
  ASSERT_EQ(inv->gpus.size(), 4u);
  EXPECT_EQ(inv->gpus[1].compute_capability, "12.0");
  EXPECT_EQ(inv->gpus[3].compute_capability, "");
}

TEST_F(FakeNvmlTest, NoDriverIsANormalState) {
  GpuCollectorOptions o = Options();
  o.library_path = "/nonexistent/libnvidia-ml.so.1";
  GpuCollector c(o);
  Status st;
  MetricBatch b = Pass(&c, &st);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Value(b, "vigil_gpu_driver_info", {{"state", "no_driver"}}), 1);
  EXPECT_FALSE(Value(b, "vigil_gpu_driver_responsive").has_value());
  EXPECT_FALSE(Value(b, "vigil_gpu_devices").has_value());
  EXPECT_EQ(c.status().state, NvmlState::kNoDriver);
  EXPECT_NE(c.status().message.find("no NVIDIA driver found"), std::string::npos);
  // Until the retry interval passes, later passes do not touch the disk again.
  b = Pass(&c, &st);
  EXPECT_EQ(Value(b, "vigil_gpu_driver_info", {{"state", "no_driver"}}), 1);
}

TEST_F(FakeNvmlTest, FailingDriverIsAnError) {
  UseScenarioText("gpus 1\nthis is not a scenario line\n");  // the fake's nvmlInit fails
  GpuCollector c(Options());
  MetricBatch b = Pass(&c);
  EXPECT_EQ(Value(b, "vigil_gpu_driver_info", {{"state", "error"}}), 1);
  EXPECT_EQ(c.status().state, NvmlState::kError);
  EXPECT_NE(c.status().message.find("nvmlInit_v2"), std::string::npos) << c.status().message;
}

TEST_F(FakeNvmlTest, LostGpuStopsItsValuesOnly) {
  UseScenarioText(
      "gpus 2\n"
      "curve all gpu_util 0:50\n"
      "fail 1 all GPU_IS_LOST at 5\n");
  SetTime(1);
  GpuCollector c(Options());
  MetricBatch b = Pass(&c);
  EXPECT_EQ(Value(b, "vigil_gpu_up", Gpu(1)), 1);
  SetTime(6);
  b = Pass(&c);
  EXPECT_EQ(Value(b, "vigil_gpu_up", Gpu(1)), 0);
  EXPECT_FALSE(Value(b, "DCGM_FI_DEV_GPU_UTIL", Gpu(1)).has_value());
  EXPECT_EQ(Value(b, "DCGM_FI_DEV_GPU_UTIL", Gpu(0)), 50);
  EXPECT_NE(c.status().message.find("GPU is lost"), std::string::npos) << c.status().message;
}

TEST_F(FakeNvmlTest, HungDriverIsBoundedAndRecovers) {
  UseScenario("hang.scenario");  // nvmlDeviceGetPowerUsage blocks for 30 s <= t < 50 s
  GpuCollectorOptions o = Options();
  o.call_timeout = std::chrono::milliseconds(300);
  SetTime(10);
  GpuCollector c(o);
  // On a loaded machine the first pass (dlopen + nvmlInit) may overrun the
  // short bound; wait for a healthy pass before scripting the hang.
  MetricBatch b = PassUntil(&c, "vigil_gpu_driver_responsive", 1);
  ASSERT_EQ(Value(b, "vigil_gpu_driver_responsive"), 1);
  EXPECT_NEAR(*Value(b, "DCGM_FI_DEV_POWER_USAGE", Gpu(0)), 500, 20.5);

  SetTime(35);
  Status st;
  b = Pass(&c, &st);  // returns after the bound although the fake is blocked
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(Value(b, "vigil_gpu_driver_responsive"), 0);
  EXPECT_EQ(Value(b, "vigil_gpu_driver_info", {{"state", "ok"}}), 1);
  EXPECT_FALSE(HasPrefix(b, "DCGM_"));  // nothing stale
  GpuStatus s = c.status();
  EXPECT_FALSE(s.responsive);
  EXPECT_NE(s.message.find("nvmlDeviceGetPowerUsage (GPU 0)"), std::string::npos) << s.message;

  b = Pass(&c, &st);  // still stuck: refused at once, reported again, logged once
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(Value(b, "vigil_gpu_driver_responsive"), 0);

  SetTime(55);  // the hang ends; the stuck call returns on the worker
  b = PassUntil(&c, "vigil_gpu_driver_responsive", 1);
  ASSERT_EQ(Value(b, "vigil_gpu_driver_responsive"), 1);
  EXPECT_EQ(hanging_(), 0);
  EXPECT_TRUE(Value(b, "DCGM_FI_DEV_POWER_USAGE", Gpu(1)).has_value());
  EXPECT_TRUE(c.status().responsive);
}

TEST_F(FakeNvmlTest, SlowInitIsStartingThenOk) {
  UseScenarioText("gpus 1\nhang nvmlInit_v2 at 0 for 100\n");
  GpuCollectorOptions o = Options();
  o.call_timeout = std::chrono::milliseconds(200);
  SetTime(1);
  GpuCollector c(o);
  Status st;
  MetricBatch b = Pass(&c, &st);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Value(b, "vigil_gpu_driver_info", {{"state", "starting"}}), 1);
  EXPECT_FALSE(Value(b, "vigil_gpu_driver_responsive").has_value());
  EXPECT_EQ(c.status().state, NvmlState::kStarting);
  EXPECT_NE(c.status().message.find("nvmlInit_v2"), std::string::npos) << c.status().message;

  SetTime(101);
  b = PassUntil(&c, "vigil_gpu_driver_info", 1, {{"state", "ok"}});
  ASSERT_EQ(Value(b, "vigil_gpu_driver_info", {{"state", "ok"}}), 1);
  EXPECT_EQ(Value(b, "vigil_gpu_devices"), 1);
}

TEST_F(FakeNvmlTest, DestroyWhileHungDoesNotBlock) {
  UseScenario("hang.scenario");
  GpuCollectorOptions o = Options();
  o.call_timeout = std::chrono::milliseconds(200);
  SetTime(35);
  {
    GpuCollector c(o);
    MetricBatch b = Pass(&c);
    EXPECT_EQ(Value(b, "vigil_gpu_driver_responsive"), 0);
  }             // the destructor must return although NVML is blocked
  SetTime(60);  // let the detached worker finish and shut NVML down
  WaitHangsReleased();
}

TEST_F(FakeNvmlTest, ProbeReportsInventory) {
  UseScenario("h100x8.scenario");
  ProbeOptions po;
  po.library_path = VIGIL_FAKE_NVML_PATH;
  auto inv = ProbeNvml(po);
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->state, NvmlState::kOk);
  EXPECT_EQ(inv->driver_version, "550.54.15");
  EXPECT_EQ(inv->cuda_driver_version, "12.4");
  EXPECT_EQ(inv->nvml_version, "12.550.54.15");
  ASSERT_EQ(inv->gpus.size(), 8u);
  EXPECT_EQ(inv->gpus[7].minor, 7);
  EXPECT_TRUE(inv->gpus[0].gpm_supported);
  EXPECT_EQ(inv->gpus[0].memory_total_bytes, 81559ULL * 1024 * 1024);
  EXPECT_EQ(inv->gpus[0].pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(inv->gpus[0].compute_capability, "9.0");  // H100, by model
  EXPECT_NE(inv->Summary().find("8\u00d7 NVIDIA H100 80GB HBM3, driver 550.54.15, CUDA 12.4"),
            std::string::npos)
      << inv->Summary();

  po.library_path = "/nonexistent/libnvidia-ml.so.1";
  inv = ProbeNvml(po);
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(inv->state, NvmlState::kNoDriver);
}

TEST_F(FakeNvmlTest, ProbeIsBoundedWhenInitHangs) {
  UseScenarioText("gpus 1\nhang nvmlInit_v2 at 0 for 100\n");
  SetTime(1);
  ProbeOptions po;
  po.library_path = VIGIL_FAKE_NVML_PATH;
  po.timeout = std::chrono::milliseconds(200);
  auto inv = ProbeNvml(po);
  EXPECT_EQ(inv.status().code(), StatusCode::kDeadlineExceeded);
  SetTime(200);  // release the detached probe thread
  WaitHangsReleased();
}

}  // namespace
}  // namespace vigil::collect
