#include "cli/home.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "core/env.h"
#include "core/strings.h"

namespace vigil::cli {

namespace {

std::string ChooseHome(const std::string& flag_value) {
  if (!flag_value.empty()) return flag_value;
  if (const char* env = std::getenv("VIGIL_HOME"); env != nullptr && *env != '\0') return env;
  if (::geteuid() == 0) return "/var/lib/vigil";
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/vigil";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.local/share/vigil";
}

}  // namespace

std::string ResolveHome(const std::string& flag_value) {
  std::string home = ChooseHome(flag_value);
  // Absolute, so the background process (which re-executes itself) and the
  // log discovery (which compares absolute paths) mean the same directory.
  if (!home.empty() && home.front() != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof(cwd)) != nullptr) home = JoinPath(cwd, home);
  }
  while (home.size() > 1 && home.back() == '/') home.pop_back();
  return home;
}

std::string FormatRunState(const RunState& s) {
  return "pid=" + std::to_string(s.pid) + "\nurl=" + s.url + "\nlisten=" + s.listen +
         "\nstarted_ms=" + std::to_string(s.started_ms) + "\nversion=" + s.version + "\n";
}

Result<RunState> ParseRunState(const std::string& text) {
  RunState s;
  for (std::string_view line : Split(text, '\n')) {
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "pid")
      s.pid = static_cast<int>(ParseInt64(value).value_or(0));
    else if (key == "url")
      s.url = value;
    else if (key == "listen")
      s.listen = value;
    else if (key == "started_ms")
      s.started_ms = ParseInt64(value).value_or(0);
    else if (key == "version")
      s.version = value;
  }
  if (s.pid <= 0 || s.url.empty()) return Corruption("run state file lacks pid or url");
  return s;
}

Result<std::unique_ptr<InstanceLock>> InstanceLock::Acquire(const HomePaths& paths) {
  VIGIL_RETURN_IF_ERROR(Env::Default()->CreateDirs(paths.run_dir()));
  int fd = ::open(paths.lock_file().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open", paths.lock_file(), errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) < 0) {
    ::close(fd);
    std::string who;
    if (auto running = FindRunningInstance(paths)) {
      who = " (pid " + std::to_string(running->pid) + ", " + running->url + ")";
    }
    return FailedPrecondition("another Vigil instance is running with home " + paths.home + who);
  }
  return std::unique_ptr<InstanceLock>(new InstanceLock(fd));
}

InstanceLock::~InstanceLock() { ::close(fd_); }

std::optional<RunState> FindRunningInstance(const HomePaths& paths) {
  int fd = ::open(paths.lock_file().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  bool held = ::flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases our shared lock if we got it
  if (!held) return std::nullopt;
  auto text = Env::Default()->ReadFile(paths.state_file(), 4096);
  if (!text.ok()) return std::nullopt;
  auto state = ParseRunState(*text);
  if (!state.ok()) return std::nullopt;
  return *state;
}

Result<std::string> ResolveServerUrl(const std::string& server_flag, const std::string& home_flag) {
  std::string base = server_flag;
  if (base.empty()) {
    if (const char* env = std::getenv("VIGIL_URL"); env != nullptr && *env != '\0') base = env;
  }
  if (base.empty()) {
    HomePaths paths{ResolveHome(home_flag)};
    auto running = FindRunningInstance(paths);
    if (!running) {
      return NotFound("Vigil is not running (home " + paths.home +
                      "). Start it with `vigil up`, or name a server with --server URL.");
    }
    base = running->url;
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

}  // namespace vigil::cli
