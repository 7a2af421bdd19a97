// Test helpers for the tsdb tests: an Env whose wall clock the test sets (so
// window cutting and retention do not depend on the real time) and a fresh
// temporary directory per test.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/env.h"

namespace vigil::tsdb::testing {

// Forwards everything to Env::Default() except NowMillis().
class FakeClockEnv final : public Env {
 public:
  explicit FakeClockEnv(int64_t now_ms) : now_(now_ms) {}
  void SetNow(int64_t ms) { now_ = ms; }

  Result<std::string> ReadFile(const std::string& p, size_t n) override {
    return base_->ReadFile(p, n);
  }
  Status WriteFileAtomic(const std::string& p, std::string_view d) override {
    return base_->WriteFileAtomic(p, d);
  }
  Result<std::unique_ptr<AppendableFile>> OpenAppendable(const std::string& p) override {
    return base_->OpenAppendable(p);
  }
  Result<std::vector<std::string>> ListDir(const std::string& p) override {
    return base_->ListDir(p);
  }
  Status CreateDirs(const std::string& p) override { return base_->CreateDirs(p); }
  Status RemoveFile(const std::string& p) override { return base_->RemoveFile(p); }
  Status RenameFile(const std::string& a, const std::string& b) override {
    return base_->RenameFile(a, b);
  }
  bool FileExists(const std::string& p) override { return base_->FileExists(p); }
  Result<uint64_t> FileSize(const std::string& p) override { return base_->FileSize(p); }
  Result<uint64_t> DirSize(const std::string& p) override { return base_->DirSize(p); }
  Result<FsUsage> GetFsUsage(const std::string& p) override { return base_->GetFsUsage(p); }
  int64_t NowMillis() override { return now_.load(); }
  int64_t MonotonicMillis() override { return base_->MonotonicMillis(); }
  void SleepMillis(int64_t ms) override { base_->SleepMillis(ms); }

 private:
  Env* base_ = Env::Default();
  std::atomic<int64_t> now_;
};

// A directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/vigil-tsdb-XXXXXX";
    char* made = ::mkdtemp(tmpl.data());
    path_ = made != nullptr ? made : tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace vigil::tsdb::testing
