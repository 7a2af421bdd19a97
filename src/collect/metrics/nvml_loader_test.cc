// NvmlLibrary and helpers; the collector tests cover the rest with the fake.
#include "collect/metrics/nvml_loader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace vigil::collect {
namespace {

TEST(NvmlLoaderTest, MissingLibraryIsNoDriver) {
  auto lib = NvmlLibrary::Load("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kNotFound);
  EXPECT_NE(lib.status().message().find("no NVIDIA driver found"), std::string::npos);
}

TEST(NvmlLoaderTest, LibraryWithoutNvmlIsAnError) {
  // libm is on every glibc system and lacks every NVML symbol.
  auto lib = NvmlLibrary::Load("libm.so.6");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(lib.status().message().find("nvmlInit_v2"), std::string::npos);
}

TEST(NvmlLoaderTest, FakeResolvesEveryFunction) {
  auto lib = NvmlLibrary::Load(VIGIL_FAKE_NVML_PATH);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  const nvml::NvmlApi& api = (*lib)->api();
#define VIGIL_EXPECT_RESOLVED(name, ret, params) EXPECT_NE(api.name, nullptr) << #name;
  VIGIL_NVML_REQUIRED_FUNCTIONS(VIGIL_EXPECT_RESOLVED)
  VIGIL_NVML_OPTIONAL_FUNCTIONS(VIGIL_EXPECT_RESOLVED)
#undef VIGIL_EXPECT_RESOLVED
  EXPECT_EQ((*lib)->ErrorText("nvmlDeviceGetPowerUsage", nvml::NVML_ERROR_GPU_IS_LOST),
            "nvmlDeviceGetPowerUsage: GPU is lost (15)");
}

TEST(NvmlLoaderTest, ResolvesPathFromOptionThenEnvThenSoname) {
  unsetenv(kNvmlLibraryEnv);
  EXPECT_EQ(ResolveNvmlLibraryPath(""), "libnvidia-ml.so.1");
  setenv(kNvmlLibraryEnv, "/opt/fake/libnvidia-ml.so", 1);
  EXPECT_EQ(ResolveNvmlLibraryPath(""), "/opt/fake/libnvidia-ml.so");
  EXPECT_EQ(ResolveNvmlLibraryPath("/x.so"), "/x.so");
  unsetenv(kNvmlLibraryEnv);
}

TEST(NvmlLoaderTest, FormatsCudaVersion) {
  EXPECT_EQ(FormatCudaVersion(12040), "12.4");
  EXPECT_EQ(FormatCudaVersion(11080), "11.8");
  EXPECT_EQ(FormatCudaVersion(0), "");
}

TEST(NvmlLoaderTest, SummaryGroupsModels) {
  GpuInventory inv;
  inv.state = NvmlState::kOk;
  inv.driver_version = "550.54.15";
  inv.gpus.resize(3);
  inv.gpus[0].name = inv.gpus[1].name = "NVIDIA H100 80GB HBM3";
  inv.gpus[2].name = "NVIDIA L4";
  EXPECT_EQ(inv.Summary(), "2\u00d7 NVIDIA H100 80GB HBM3, 1\u00d7 NVIDIA L4, driver 550.54.15");
  inv.state = NvmlState::kNoDriver;
  inv.message = "no NVIDIA driver found";
  EXPECT_EQ(inv.Summary(), "no NVIDIA driver found");
}

}  // namespace
}  // namespace vigil::collect
