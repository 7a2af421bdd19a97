#include "cli/preflight.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/temp_dir.h"

namespace vigil::cli {
namespace {

using Level = CheckResult::Level;

class PreflightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    in_.paths.home = tmp_.path();
    in_.listen = "127.0.0.1:0";
  }

  const CheckResult* Find(const std::vector<CheckResult>& rs, std::string_view word) {
    for (const auto& r : rs) {
      if (r.what.find(word) != std::string::npos) return &r;
    }
    return nullptr;
  }
  TempDir tmp_;
  PreflightInput in_;
};

TEST_F(PreflightTest, HealthyMachinePasses) {
  in_.nvml_check = [] { return CheckResult{Level::kInfo, "no NVIDIA driver found", "x"}; };
  auto rs = RunPreflight(in_);
  EXPECT_FALSE(AnyFailed(rs)) << FormatChecks(rs);
  EXPECT_EQ(rs.size(), 4u);
  EXPECT_NE(FormatChecks(rs).find("info  no NVIDIA driver found"), std::string::npos);
}

TEST_F(PreflightTest, PortInUseFailsWithAdvice) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  in_.listen = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  auto rs = RunPreflight(in_);
  close(fd);
  ASSERT_TRUE(AnyFailed(rs));
  const CheckResult* port = Find(rs, "already in use");
  ASSERT_NE(port, nullptr) << FormatChecks(rs);
  EXPECT_NE(port->advice.find("--listen"), std::string::npos);
}

TEST_F(PreflightTest, UnwritableHomeAndBadAddressFail) {
  in_.paths.home = "/proc/vigil-cannot-live-here";
  in_.listen = "127.0.0.1";
  auto rs = RunPreflight(in_);
  EXPECT_TRUE(AnyFailed(rs));
  EXPECT_NE(Find(rs, "not writable"), nullptr) << FormatChecks(rs);
  EXPECT_NE(Find(rs, "invalid listen address"), nullptr) << FormatChecks(rs);
}

TEST_F(PreflightTest, LowDiskFails) {
  in_.min_free_bytes = ~0ull;  // more than any disk has
  auto rs = RunPreflight(in_);
  const CheckResult* disk = Find(rs, "free on the disk");
  ASSERT_NE(disk, nullptr);
  EXPECT_EQ(disk->level, Level::kFail);
}

}  // namespace
}  // namespace vigil::cli
