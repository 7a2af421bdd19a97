#include "collect/env/rooted_fs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/temp_dir.h"

namespace vigil::collect {
namespace {

namespace fs = std::filesystem;

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

void Link(const std::string& target, const std::string& at) {
  fs::create_directories(fs::path(at).parent_path());
  ASSERT_EQ(::symlink(target.c_str(), at.c_str()), 0) << at;
}

class RootedFsTest : public ::testing::Test {
 protected:
  TempDir dir_{"vigil-rootedfs"};
  std::string root_ = dir_.Join("root");
  RootedFs fs_{Env::Default(), root_};
};

TEST_F(RootedFsTest, AbsoluteLinkStaysInsideTheRoot) {
  // /usr/lib -> /etc must read ROOT/etc, never the host's /etc.
  Write(root_ + "/etc/os-release", "ID=inside\n");
  Link("/etc", root_ + "/usr/lib");
  auto r = fs_.Resolve("/usr/lib/os-release");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "/etc/os-release");
  auto text = fs_.ReadFile("/usr/lib/os-release", 1024);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "ID=inside\n");
}

TEST_F(RootedFsTest, DotDotNeverClimbsAboveTheRoot) {
  Write(dir_.Join("secret"), "host file\n");  // beside the root, on the host
  Write(root_ + "/secret", "inside\n");
  Link("../../../../secret", root_ + "/a/b/up");
  auto r = fs_.Resolve("/a/b/up");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "/secret");
  EXPECT_EQ(fs_.ReadFile("/../../secret", 100).value_or(""), "inside\n");
  EXPECT_EQ(fs_.ReadFile("/a/b/up", 100).value_or(""), "inside\n");
}

TEST_F(RootedFsTest, RelativeLinksAndChainsResolve) {
  Write(root_ + "/usr/lib64/libc-2.28.so", "libc");
  Link("usr/lib64", root_ + "/lib64");
  Link("libc-2.28.so", root_ + "/usr/lib64/libc.so.6");
  Link("/lib64/libc.so.6", root_ + "/etc/alternatives/libc");
  auto r = fs_.Resolve("/etc/alternatives/libc");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "/usr/lib64/libc-2.28.so");
  EXPECT_TRUE(fs_.IsFile("/etc/alternatives/libc"));
  EXPECT_TRUE(fs_.IsLink("/lib64/libc.so.6"));
  EXPECT_FALSE(fs_.IsLink("/usr/lib64/libc-2.28.so"));
}

TEST_F(RootedFsTest, LinkLoopsEndWithAnError) {
  Link("b", root_ + "/a");
  Link("a", root_ + "/b");
  Link("self", root_ + "/self");
  Link("/loop/x", root_ + "/loop/x");
  for (const char* p : {"/a", "/self/x", "/loop/x"}) {
    auto r = fs_.Resolve(std::string(p) + "/file");
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_NE(r.status().message().find("too many levels"), std::string::npos)
        << r.status().message();
    EXPECT_FALSE(fs_.ReadFile(p, 10).ok());
    EXPECT_FALSE(fs_.IsDir(p));
  }
}

TEST_F(RootedFsTest, MissingPathsAreNotFoundWithoutHostPaths) {
  fs::create_directories(root_);
  EXPECT_EQ(fs_.Resolve("/nothing").value_or("?"), "/nothing");  // last part may be missing
  auto r = fs_.Resolve("/no/such/dir/file");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message().find(root_), std::string::npos);
  EXPECT_FALSE(fs_.ListDir("/no/such").ok());
}

TEST_F(RootedFsTest, ReadRangeReadsInsideTheFile) {
  Write(root_ + "/f", "0123456789");
  EXPECT_EQ(fs_.ReadRange("/f", 3, 4).value_or(""), "3456");
  EXPECT_EQ(fs_.ReadRange("/f", 8, 100).value_or(""), "89");
  EXPECT_EQ(fs_.ReadRange("/f", 100, 4).value_or("x"), "");
}

TEST(RootedFsLiveTest, TheLiveRootReadsTheMachine) {
  RootedFs live(Env::Default(), "/");
  EXPECT_TRUE(live.live());
  EXPECT_TRUE(live.IsDir("/proc"));
  EXPECT_EQ(live.HostPath("/etc"), "/etc");
}

TEST(NormalizePathTest, Cases) {
  EXPECT_EQ(NormalizePath("/a/b/../c/./d//"), "/a/c/d");
  EXPECT_EQ(NormalizePath("/../.."), "/");
  EXPECT_EQ(DirName("/a/b"), "/a");
  EXPECT_EQ(DirName("/a"), "/");
  EXPECT_EQ(BaseName("/a/b.so"), "b.so");
}

}  // namespace
}  // namespace vigil::collect
