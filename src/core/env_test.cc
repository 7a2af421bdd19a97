#include "core/env.h"

#include <gtest/gtest.h>

#include "core/temp_dir.h"

namespace vigil {
namespace {

class EnvTest : public ::testing::Test {
 protected:
  Env* env_ = Env::Default();
  TempDir tmp_;
  std::string dir_ = tmp_.path();
};

TEST_F(EnvTest, AtomicWriteThenBoundedRead) {
  std::string p = JoinPath(dir_, "a.txt");
  ASSERT_TRUE(env_->WriteFileAtomic(p, "hello world").ok());
  EXPECT_EQ(*env_->ReadFile(p, 100), "hello world");
  EXPECT_EQ(*env_->ReadFile(p, 5), "hello");
  EXPECT_FALSE(env_->FileExists(p + ".tmp"));
  EXPECT_EQ(*env_->FileSize(p), 11u);
}

TEST_F(EnvTest, ReadsProcFilesWhoseStatSizeIsZero) {
  auto r = env_->ReadFile("/proc/self/status", 1 << 16);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->find("Pid:"), std::string::npos);
}

TEST_F(EnvTest, AppendableFileKeepsSizeAndAppends) {
  std::string p = JoinPath(dir_, "wal");
  {
    auto f = env_->OpenAppendable(p);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("abc").ok());
    ASSERT_TRUE((*f)->Sync().ok());
    EXPECT_EQ((*f)->Size(), 3u);
  }
  auto f = env_->OpenAppendable(p);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->Size(), 3u);
  ASSERT_TRUE((*f)->Append("def").ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(*env_->ReadFile(p, 100), "abcdef");
}

TEST_F(EnvTest, DirsListingSizeAndErrors) {
  ASSERT_TRUE(env_->CreateDirs(JoinPath(dir_, "x/y/z")).ok());
  ASSERT_TRUE(env_->WriteFileAtomic(JoinPath(dir_, "x/y/z/f"), std::string(1000, 'a')).ok());
  ASSERT_TRUE(env_->WriteFileAtomic(JoinPath(dir_, "x/g"), std::string(24, 'a')).ok());
  EXPECT_EQ(*env_->DirSize(JoinPath(dir_, "x")), 1024u);
  auto names = env_->ListDir(JoinPath(dir_, "x"));
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"g", "y"}));
  EXPECT_EQ(env_->ReadFile(JoinPath(dir_, "missing"), 10).status().code(), StatusCode::kNotFound);
  // A file where a directory is wanted is a clear error.
  EXPECT_FALSE(env_->CreateDirs(JoinPath(dir_, "x/g")).ok());
  EXPECT_TRUE(env_->GetFsUsage(dir_)->total_bytes > 0);
}

TEST(JoinPathTest, OneSlashBetween) {
  EXPECT_EQ(JoinPath("/a/", "/b"), "/a/b");
  EXPECT_EQ(JoinPath("/a", "b"), "/a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
}

}  // namespace
}  // namespace vigil
