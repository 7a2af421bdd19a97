// Queries on the built-in matrix, with the failures users meet (each case's
// comment quotes the error text they see).
#include "env/matrix_query.h"

#include <gtest/gtest.h>

namespace vigil::env {
namespace {

Version V(std::string_view s) { return ParseVersion(s).value(); }
TorchBuild T(std::string_view s) { return ParseTorchVersion(s).value(); }
const Matrix& M() { return Matrix::Builtin(); }

TEST(DriverQueryTest, MinDriverForCudaReleases) {
  auto need = MinDriverFor(M(), V("12.4"));
  ASSERT_TRUE(need.ok()) << need.status().ToString();
  EXPECT_EQ(need->full, V("550.54.14"));  // 12.4 GA
  EXPECT_EQ(need->minor_compat, V("525.60.13"));
  EXPECT_EQ(MinDriverFor(M(), V("12.4.1"))->full, V("550.54.15"));
  EXPECT_EQ(MinDriverFor(M(), V("11.8"))->minor_compat, V("450.80.02"));
  EXPECT_EQ(MinDriverFor(M(), V("13.0"))->minor_compat, V("580"));
  EXPECT_EQ(MinDriverFor(M(), V("12.7")).status().code(), StatusCode::kNotFound);
}

TEST(DriverQueryTest, Driver470IsTooOldForACu121Wheel) {
  // "RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."
  auto row = FindTorch(M(), T("2.3.1+cu121"));
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  auto v = CheckDriverForCuda(M(), V("470.182.03"), row->cuda);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->fit, DriverFit::kTooOld);
  EXPECT_EQ(v->need.minor_compat, V("525.60.13"));
}

TEST(DriverQueryTest, Driver535RunsCu124ThroughMinorVersionCompatibility) {
  auto v = CheckDriverForCuda(M(), V("535.104.05"), V("12.4"));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->fit, DriverFit::kMinorCompat);
  EXPECT_EQ(CheckDriverForCuda(M(), V("550.54.15"), V("12.4"))->fit, DriverFit::kFull);
  // 12.x's floor does not carry into 13.x: a 575 driver cannot run CUDA 13.
  EXPECT_EQ(CheckDriverForCuda(M(), V("575.57.08"), V("13.0"))->fit, DriverFit::kTooOld);
}

TEST(DriverQueryTest, CudaSupportedByDriver) {
  DriverSupport s = CudaSupportedByDriver(M(), V("550.54.15"));
  ASSERT_TRUE(s.newest_full.has_value());
  EXPECT_EQ(*s.newest_full, V("12.4.1"));
  EXPECT_EQ(s.minor_compat_majors, (std::vector<int>{11, 12}));
  DriverSupport old = CudaSupportedByDriver(M(), V("418.39"));
  EXPECT_FALSE(old.newest_full.has_value());
  EXPECT_TRUE(old.minor_compat_majors.empty());
  EXPECT_EQ(CudaSupportedByDriver(M(), V("580.65.06")).minor_compat_majors,
            (std::vector<int>{11, 12, 13}));
}

TEST(GpuQueryTest, ComputeCapabilityOfNvmlNames) {
  struct Case {
    const char* nvml_name;
    const char* cc;
  };
  for (const Case& c : std::vector<Case>{{"NVIDIA H100 80GB HBM3", "9.0"},
                                         {"NVIDIA H200", "9.0"},
                                         {"NVIDIA A100-SXM4-80GB", "8.0"},
                                         {"NVIDIA A10", "8.6"},
                                         {"Tesla V100-SXM2-16GB", "7.0"},
                                         {"Tesla T4", "7.5"},
                                         {"NVIDIA L4", "8.9"},
                                         {"NVIDIA L40S", "8.9"},
                                         {"NVIDIA B200", "10.0"},
                                         {"NVIDIA GeForce RTX 2080 Ti", "7.5"},
                                         {"NVIDIA GeForce RTX 3090", "8.6"},
                                         {"NVIDIA GeForce RTX 4090", "8.9"},
                                         {"NVIDIA GeForce RTX 5090", "12.0"},
                                         {"NVIDIA RTX 6000 Ada Generation", "8.9"},
                                         {"NVIDIA RTX A6000", "8.6"}}) {
    auto cc = ComputeCapabilityOf(M(), c.nvml_name);
    ASSERT_TRUE(cc.ok()) << c.nvml_name << ": " << cc.status().ToString();
    EXPECT_EQ(cc->ToString(), c.cc) << c.nvml_name;
  }
}

TEST(GpuQueryTest, MatchesWholeTokensAndPrefersTheLongestModel) {
  // L40S is not an L40, an A100 not an A10, an RTX 3090 Ti not a plain 3090
  // (same capability here, but the row that decided must be the right one).
  EXPECT_EQ(FindGpu(M(), "NVIDIA L40S")->model, "L40S");
  EXPECT_EQ(FindGpu(M(), "NVIDIA A100 80GB PCIe")->model, "A100");
  EXPECT_EQ(FindGpu(M(), "NVIDIA GeForce RTX 3090 Ti")->model, "RTX 3090 Ti");
  EXPECT_EQ(FindGpu(M(), "NVIDIA A10G").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(FindGpu(M(), "Quadro RTX 6000").status().code(), StatusCode::kNotFound);
}

TEST(GpuQueryTest, ForwardCompatOnDataCentreGpusOnly) {
  EXPECT_EQ(ForwardCompatOf(M(), "NVIDIA H100 80GB HBM3").value(), ForwardCompat::kSupported);
  // cuda-compat on a GeForce: "CUDA error 804: forward compatibility was
  // attempted on non supported HW".
  EXPECT_EQ(ForwardCompatOf(M(), "NVIDIA GeForce RTX 4090").value(), ForwardCompat::kUnsupported);
  EXPECT_EQ(ForwardCompatOf(M(), "NVIDIA RTX A6000").value(), ForwardCompat::kSelectSkus);
}

TEST(TorchQueryTest, Rtx5090WithTorch25Cu124HasNoKernelImage) {
  // "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible
  // with the current PyTorch installation." then "CUDA error: no kernel image
  // is available for execution on the device".
  auto archs = ArchsOfTorchWheel(M(), T("2.5.1+cu124"));
  ASSERT_TRUE(archs.ok()) << archs.status().ToString();
  EXPECT_EQ(archs->back(), "sm_90a");
  auto cc = ComputeCapabilityOf(M(), "NVIDIA GeForce RTX 5090").value();
  EXPECT_EQ(KernelFitOf(*archs, cc), KernelFit::kNoKernelImage);
  // The cu128 wheels of 2.7 carry sm_120.
  EXPECT_EQ(KernelFitOf(ArchsOfTorchWheel(M(), T("2.7.0+cu128")).value(), cc), KernelFit::kNative);
  // And the cu124 wheel runs on an RTX 4090 through sm_86 code (8.9 >= 8.6).
  EXPECT_EQ(KernelFitOf(*archs, {8, 9}), KernelFit::kNative);
}

TEST(TorchQueryTest, KernelFitRules) {
  // sm_90a is Hopper-only: it does not run on a 9.x successor, nor on 10.0.
  EXPECT_EQ(KernelFitOf({"sm_90a"}, {9, 0}), KernelFit::kNative);
  EXPECT_EQ(KernelFitOf({"sm_90a"}, {10, 0}), KernelFit::kNoKernelImage);
  // SASS does not cross a major; PTX does, through JIT.
  EXPECT_EQ(KernelFitOf({"sm_80"}, {9, 0}), KernelFit::kNoKernelImage);
  EXPECT_EQ(KernelFitOf({"sm_80", "compute_80"}, {9, 0}), KernelFit::kPtxJit);
  EXPECT_EQ(KernelFitOf({"compute_90"}, {8, 6}), KernelFit::kNoKernelImage);
  // The 7.5-onward cu128 wheels dropped Volta.
  EXPECT_EQ(KernelFitOf(ArchsOfTorchWheel(M(), T("2.7.0+cu128")).value(), {7, 0}),
            KernelFit::kNoKernelImage);
}

TEST(TorchQueryTest, FindsWheelsByReleaseAndVariant) {
  auto t = FindTorch(M(), T("2.4.1+cu124"));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->cudnn, V("9.1.0.70"));
  EXPECT_EQ(FindTorch(M(), T("2.4.1+cu126")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ArchsOfTorchWheel(M(), T("2.3.1+cu121")).value().back(), "sm_90");
  // The matrix has no arch list for 2.8 yet: unknown, not "no kernel image".
  EXPECT_EQ(ArchsOfTorchWheel(M(), T("2.8.0+cu128")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(FindTorch(M(), T("2.10.0+cu130"))->nccl, V("2.28.9"));
}

TEST(TorchQueryTest, PythonTags) {
  EXPECT_TRUE(PythonSupported(M(), "torch", V("2.5.1"), V("3.12.3")).value());
  EXPECT_FALSE(PythonSupported(M(), "torch", V("2.3.1"), V("3.12")).value());
  EXPECT_FALSE(PythonSupported(M(), "torch", V("2.9.0"), V("3.9")).value());
  EXPECT_TRUE(PythonSupported(M(), "tensorflow", V("2.16.1"), V("3.12")).value());
  EXPECT_FALSE(PythonSupported(M(), "tensorflow", V("2.15.0"), V("3.12")).value());
  EXPECT_FALSE(PythonSupported(M(), "mxnet", V("1.9"), V("3.8")).ok());
}

TEST(CudnnQueryTest, CudnnAgainstCuda) {
  EXPECT_TRUE(CudnnCompatible(M(), V("9.1.0.70"), V("12.4")).value());
  EXPECT_TRUE(CudnnCompatible(M(), V("9.1.0"), V("11.8")).value());
  EXPECT_FALSE(CudnnCompatible(M(), V("9.1.0.70"), V("12.6")).value());
  EXPECT_FALSE(CudnnCompatible(M(), V("8.9.6"), V("12.4")).value());
  EXPECT_TRUE(CudnnCompatible(M(), V("9.17.0"), V("13.1")).value());
  EXPECT_EQ(CudnnCompatible(M(), V("7.6.5"), V("10.2")).status().code(), StatusCode::kNotFound);
}

TEST(TensorflowQueryTest, SameCudnnMajorEqualOrHigherMinor) {
  auto tf = FindTensorflow(M(), V("2.16.1"));
  ASSERT_TRUE(tf.ok());
  EXPECT_EQ(tf->cudnn, V("8.9"));
  EXPECT_EQ(tf->cuda, V("12.3"));
  EXPECT_TRUE(TensorflowCudnnFits(tf->cudnn, V("8.9.7")));
  EXPECT_FALSE(TensorflowCudnnFits(tf->cudnn, V("8.6.0")));
  EXPECT_FALSE(TensorflowCudnnFits(tf->cudnn, V("9.1.0")));
  EXPECT_EQ(FindTensorflow(M(), V("2.18"))->cudnn, V("9.3"));
}

TEST(JaxQueryTest, Cuda12PluginNeedsCuda121AndCudnn98) {
  auto j = FindJaxPlugin(M(), "jax-cuda12-plugin");
  ASSERT_TRUE(j.ok());
  EXPECT_TRUE(JaxFits(*j, V("12.4"), V("9.8.0")));
  EXPECT_FALSE(JaxFits(*j, V("12.0"), V("9.8.0")));
  EXPECT_FALSE(JaxFits(*j, V("12.4"), V("9.1.0")));
  EXPECT_FALSE(JaxFits(*j, V("13.0"), V("9.8.0")));
  EXPECT_FALSE(JaxFits(*j, V("12.4"), V("10.0")));
}

}  // namespace
}  // namespace vigil::env
