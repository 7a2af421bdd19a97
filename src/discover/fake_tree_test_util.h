// Test helpers: fake /proc, docker and pod trees in a temp dir. A fake fd is a
// real symlink, so readlink and stat behave as they do on /proc for a file
// on the host; "pipe:[N]" and "socket:[N]" targets are dangling links, as
// readlink shows them.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace vigil::discover::testing {

inline void WriteFile(const std::string& path, const std::string& data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
  if (!f) std::abort();  // a test cannot go on without its fixture
}

inline void Symlink(const std::string& target, const std::string& link) {
  std::filesystem::create_directories(std::filesystem::path(link).parent_path());
  if (::symlink(target.c_str(), link.c_str()) != 0) std::abort();
}

// A fake /proc under `root`.
class FakeProc {
 public:
  explicit FakeProc(std::string root) : root_(std::move(root)) {
    std::filesystem::create_directories(root_);
  }
  const std::string& root() const { return root_; }
  std::string PidDir(int pid) const { return root_ + "/" + std::to_string(pid); }

  // argv joined with NULs, as the kernel writes cmdline; empty = kernel thread.
  void AddProcess(int pid, const std::vector<std::string>& argv, const std::string& comm,
                  uint64_t starttime = 1000) {
    std::string cmdline;
    for (const std::string& a : argv) cmdline += a + '\0';
    WriteFile(PidDir(pid) + "/cmdline", cmdline);
    WriteFile(PidDir(pid) + "/comm", comm + "\n");
    SetStartTime(pid, comm, starttime);
    std::filesystem::create_directories(PidDir(pid) + "/fd");
    std::filesystem::create_directories(PidDir(pid) + "/fdinfo");
  }

  // /proc/<pid>/stat with `starttime` as field 22; comm in parentheses may
  // hold spaces and ')' as in the kernel's.
  void SetStartTime(int pid, const std::string& comm, uint64_t starttime) {
    std::string stat = std::to_string(pid) + " (" + comm + ") S";
    for (int field = 4; field <= 52; ++field) {
      stat += " " + (field == 22 ? std::to_string(starttime) : std::to_string(field));
    }
    WriteFile(PidDir(pid) + "/stat", stat + "\n");
  }

  void RemoveFd(int pid, int fd) {
    std::filesystem::remove(PidDir(pid) + "/fd/" + std::to_string(fd));
  }

  // `flags` is the octal text of fdinfo's flags line; "" writes no fdinfo.
  void AddFd(int pid, int fd, const std::string& target, const std::string& flags = "0100001") {
    Symlink(target, PidDir(pid) + "/fd/" + std::to_string(fd));
    if (!flags.empty()) {
      WriteFile(PidDir(pid) + "/fdinfo/" + std::to_string(fd),
                "pos:\t0\nflags:\t" + flags + "\nmnt_id:\t25\nino:\t1234\n");
    }
  }

 private:
  std::string root_;
};

inline constexpr const char* kWriteAppend = "0102001";  // O_WRONLY|O_APPEND|O_LARGEFILE
inline constexpr const char* kReadOnly = "0100000";
inline constexpr const char* kReadWrite = "0100002";

}  // namespace vigil::discover::testing
