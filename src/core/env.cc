#include "core/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

namespace vigil {
namespace {

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = NoEintr([&] { return ::write(fd, data.data(), data.size()); });
    if (n < 0) return ErrnoStatus("write", path, errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status SyncDir(const std::string& dir) {
  int fd = NoEintr([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd < 0) return ErrnoStatus("open directory", dir, errno);
  int r = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (r < 0) return ErrnoStatus("fsync directory", dir, err);
  return Status::Ok();
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

class PosixAppendableFile final : public AppendableFile {
 public:
  PosixAppendableFile(int fd, std::string path, uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size) {}
  ~PosixAppendableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Append(std::string_view data) override {
    if (fd_ < 0) return FailedPrecondition("append to closed file " + path_);
    VIGIL_RETURN_IF_ERROR(WriteAll(fd_, data, path_));
    size_ += data.size();
    return Status::Ok();
  }
  Status Sync() override {
    if (fd_ < 0) return FailedPrecondition("sync of closed file " + path_);
    if (::fdatasync(fd_) < 0) return ErrnoStatus("fdatasync", path_, errno);
    return Status::Ok();
  }
  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    int r = ::close(fd_);
    fd_ = -1;
    if (r < 0) return ErrnoStatus("close", path_, errno);
    return Status::Ok();
  }
  uint64_t Size() const override { return size_; }

 private:
  int fd_;
  std::string path_;
  uint64_t size_;
};

class PosixEnv final : public Env {
 public:
  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    int fd = NoEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); });
    if (fd < 0) return ErrnoStatus("open", path, errno);
    std::string out;
    char buf[16384];
    while (out.size() < max_bytes) {
      size_t want = std::min(sizeof(buf), max_bytes - out.size());
      ssize_t n = NoEintr([&] { return ::read(fd, buf, want); });
      if (n < 0) {
        int err = errno;
        ::close(fd);
        return ErrnoStatus("read", path, err);
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
  }

  Status WriteFileAtomic(const std::string& path, std::string_view data) override {
    std::string tmp = path + ".tmp";
    int fd = NoEintr(
        [&] { return ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); });
    if (fd < 0) return ErrnoStatus("create", tmp, errno);
    Status st = WriteAll(fd, data, tmp);
    if (st.ok() && ::fsync(fd) < 0) st = ErrnoStatus("fsync", tmp, errno);
    ::close(fd);
    if (!st.ok()) {
      ::unlink(tmp.c_str());
      return st;
    }
    if (::rename(tmp.c_str(), path.c_str()) < 0) return ErrnoStatus("rename", tmp, errno);
    return SyncDir(DirName(path));
  }

  Result<std::unique_ptr<AppendableFile>> OpenAppendable(const std::string& path) override {
    int fd = NoEintr(
        [&] { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644); });
    if (fd < 0) return ErrnoStatus("open for append", path, errno);
    struct stat st {};
    if (::fstat(fd, &st) < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus("stat", path, err);
    }
    return std::unique_ptr<AppendableFile>(
        new PosixAppendableFile(fd, path, static_cast<uint64_t>(st.st_size)));
  }

  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) return ErrnoStatus("open directory", path, errno);
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      std::string_view n(e->d_name);
      if (n == "." || n == "..") continue;
      names.emplace_back(n);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }

  Status CreateDirs(const std::string& path) override {
    if (path.empty()) return InvalidArgument("empty directory path");
    std::string cur;
    size_t pos = 0;
    while (pos != std::string::npos) {
      size_t next = path.find('/', pos + 1);
      cur = path.substr(0, next);
      pos = next;
      if (cur.empty() || cur == "/") continue;
      if (::mkdir(cur.c_str(), 0755) < 0 && errno != EEXIST) {
        return ErrnoStatus("create directory", cur, errno);
      }
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) < 0) return ErrnoStatus("stat", path, errno);
    if (!S_ISDIR(st.st_mode)) return FailedPrecondition(path + " exists and is not a directory");
    return Status::Ok();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) < 0) return ErrnoStatus("remove", path, errno);
    return Status::Ok();
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) < 0) return ErrnoStatus("rename", from, errno);
    return Status::Ok();
  }

  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  Result<uint64_t> FileSize(const std::string& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) < 0) return ErrnoStatus("stat", path, errno);
    return static_cast<uint64_t>(st.st_size);
  }

  Result<uint64_t> DirSize(const std::string& path) override {
    struct stat st {};
    if (::lstat(path.c_str(), &st) < 0) return ErrnoStatus("stat", path, errno);
    if (S_ISREG(st.st_mode)) return static_cast<uint64_t>(st.st_size);
    if (!S_ISDIR(st.st_mode)) return uint64_t{0};
    auto names = ListDir(path);
    if (!names.ok()) return names.status();
    uint64_t total = 0;
    for (const auto& n : *names) {
      auto sub = DirSize(JoinPath(path, n));
      if (sub.ok()) total += *sub;  // a file removed meanwhile is not an error
    }
    return total;
  }

  Result<FsUsage> GetFsUsage(const std::string& path) override {
    struct statvfs vfs {};
    if (::statvfs(path.c_str(), &vfs) < 0) return ErrnoStatus("statvfs", path, errno);
    FsUsage u;
    u.total_bytes = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
    u.avail_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    return u;
  }

  int64_t NowMillis() override {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  }
  int64_t MonotonicMillis() override {
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
  }
  void SleepMillis(int64_t ms) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
};

}  // namespace

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv();  // intentionally leaked: used until exit
  return env;
}

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string out(a);
  if (out.back() == '/') out.pop_back();
  if (b.front() == '/') b.remove_prefix(1);
  out += '/';
  out += b;
  return out;
}

}  // namespace vigil
