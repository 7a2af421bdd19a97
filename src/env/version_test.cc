#include "env/version.h"

#include <gtest/gtest.h>

namespace vigil::env {
namespace {

Version V(std::string_view s) { return ParseVersion(s).value(); }

TEST(VersionTest, ParsesDriverCudaAndCudnnVersions) {
  EXPECT_EQ(V("550.54.15").parts(), (std::vector<int>{550, 54, 15}));
  // The "02" of a driver version is the number 2, not octal or text.
  EXPECT_EQ(V("450.80.02").parts(), (std::vector<int>{450, 80, 2}));
  EXPECT_EQ(V("9.1.0.70").parts().size(), 4u);
  EXPECT_EQ(V("12.4").ToString(), "12.4");
}

TEST(VersionTest, RejectsWhatIsNotAVersion) {
  for (std::string_view bad :
       {"", "12.", ".4", "12..4", "v12.4", "12.4 ", "12.4-rc1", "1.2.3.4.5.6", "1234567890.1"}) {
    EXPECT_FALSE(ParseVersion(bad).ok()) << bad;
  }
}

TEST(VersionTest, ComparesPartByPartWithMissingPartsAsZero) {
  EXPECT_LT(V("550.54.14"), V("550.54.15"));
  EXPECT_LT(V("535.104.05"), V("545.23.06"));
  // Numerically, not as text: 12.10 is after 12.9.
  EXPECT_LT(V("12.9"), V("12.10"));
  EXPECT_EQ(V("12.4"), V("12.4.0"));
  EXPECT_LT(V("580"), V("580.65.06"));
}

TEST(VersionTest, PrefixCoversLongerVersionsOnly) {
  EXPECT_TRUE(V("9.1").IsPrefixOf(V("9.1.0.70")));
  EXPECT_TRUE(V("2.5").IsPrefixOf(V("2.5.1")));
  EXPECT_FALSE(V("9.1.0").IsPrefixOf(V("9.10.2")));
  EXPECT_FALSE(V("2.5.1").IsPrefixOf(V("2.5")));
}

TEST(VersionTest, ParsesTorchVersionsWithTheirVariant) {
  auto t = ParseTorchVersion("2.3.1+cu121");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->version, V("2.3.1"));
  EXPECT_EQ(t->variant, "cu121");
  EXPECT_EQ(ParseTorchVersion("2.3.1+cpu")->variant, "cpu");
  EXPECT_EQ(ParseTorchVersion("2.3.1")->variant, "");
  EXPECT_FALSE(ParseTorchVersion("2.3.1+rocm6.0").ok());
  EXPECT_FALSE(ParseTorchVersion("2.x+cu121").ok());
}

TEST(VersionTest, VariantNamesItsCuda) {
  EXPECT_EQ(CudaOfVariant("cu121").value(), V("12.1"));
  EXPECT_EQ(CudaOfVariant("cu118").value(), V("11.8"));
  EXPECT_EQ(CudaOfVariant("cu130").value(), V("13.0"));
  EXPECT_FALSE(CudaOfVariant("cu1").ok());
  EXPECT_FALSE(CudaOfVariant("cpu").ok());
  EXPECT_FALSE(CudaOfVariant("cu12a").ok());
}

TEST(VersionTest, ParsesComputeCapability) {
  auto cc = ParseComputeCapability("8.9");
  ASSERT_TRUE(cc.ok());
  EXPECT_EQ(cc->major, 8);
  EXPECT_EQ(cc->minor, 9);
  EXPECT_EQ(ParseComputeCapability("12.0")->ToString(), "12.0");
  EXPECT_FALSE(ParseComputeCapability("8").ok());
  EXPECT_FALSE(ParseComputeCapability("8.9.1").ok());
  EXPECT_LT(ComputeCapability({8, 6}), ComputeCapability({8, 9}));
}

}  // namespace
}  // namespace vigil::env
