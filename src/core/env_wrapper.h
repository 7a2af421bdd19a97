// EnvWrapper: an Env that forwards every call to another Env. Subclass it and
// override only what a test fakes (the clock, one failing file), as leveldb's
// EnvWrapper does, instead of re-implementing the whole interface.
#pragma once

#include "core/env.h"

namespace vigil {

class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* base) : base_(base) {}
  Env* base() const { return base_; }

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
  int64_t NowMillis() override { return base_->NowMillis(); }
  int64_t MonotonicMillis() override { return base_->MonotonicMillis(); }
  void SleepMillis(int64_t ms) override { base_->SleepMillis(ms); }

 private:
  Env* base_;
};

}  // namespace vigil
