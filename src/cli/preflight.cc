#include "cli/preflight.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/env.h"
#include "core/strings.h"
#include "net/http_server.h"

namespace vigil::cli {
namespace {

using Level = CheckResult::Level;

CheckResult CheckHome(const HomePaths& paths) {
  Env* env = Env::Default();
  Status st = env->CreateDirs(paths.data_dir());
  if (st.ok()) st = env->CreateDirs(paths.logs_dir());
  if (st.ok()) st = env->CreateDirs(paths.run_dir());
  std::string probe = paths.run_dir() + "/.write-test";
  if (st.ok()) st = env->WriteFileAtomic(probe, "ok");
  if (st.ok()) st = env->RemoveFile(probe);
  if (!st.ok()) {
    return {Level::kFail, "home " + paths.home + " is not writable: " + st.message(),
            "choose another directory with --home DIR or VIGIL_HOME=DIR, or fix its permissions"};
  }
  return {Level::kOk, "home " + paths.home + " is writable", ""};
}

CheckResult CheckPort(const std::string& listen) {
  auto addr = net::ParseListenAddress(listen);
  if (!addr.ok()) {
    return {Level::kFail, addr.status().message(), "use --listen HOST:PORT, e.g. 127.0.0.1:9300"};
  }
  const std::string& host = addr->host;
  int port = addr->port;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port_str = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port_str.c_str(), &hints, &res);
  if (rc != 0) {
    return {Level::kFail, "cannot resolve listen address " + listen + ": " + gai_strerror(rc),
            "use an IP address, e.g. --listen 127.0.0.1:9300"};
  }
  int err = 0;
  int fd = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    err = errno;
  } else {
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, res->ai_addr, res->ai_addrlen) < 0) err = errno;
    ::close(fd);
  }
  ::freeaddrinfo(res);
  if (err == EADDRINUSE) {
    return {Level::kFail, "port " + listen + " is already in use",
            "stop what uses it (`ss -ltnp 'sport = :" + port_str +
                "'` shows it) or pick another port with --listen 127.0.0.1:PORT"};
  }
  if (err != 0) {
    return {Level::kFail, "cannot listen on " + listen + ": " + std::strerror(err),
            err == EACCES ? "ports below 1024 need root; pick a port above 1024"
                          : "pick another address with --listen HOST:PORT"};
  }
  return {Level::kOk, "port " + listen + " is free", ""};
}

CheckResult CheckDisk(const PreflightInput& in) {
  auto usage = Env::Default()->GetFsUsage(in.paths.home);
  if (!usage.ok())
    return {Level::kWarn, "cannot read free disk space: " + usage.status().message(), ""};
  std::string what = HumanBytes(usage->avail_bytes) + " free on the disk holding " + in.paths.home;
  if (usage->avail_bytes < in.min_free_bytes) {
    return {Level::kFail, "only " + what,
            "free some space or choose a home on a larger disk with --home DIR"};
  }
  if (usage->avail_bytes < in.warn_free_bytes) {
    return {Level::kWarn, "only " + what,
            "Vigil keeps 30 days of metrics; free some space or use --home on a larger disk"};
  }
  return {Level::kOk, what, ""};
}

}  // namespace

std::vector<CheckResult> RunPreflight(const PreflightInput& in) {
  std::vector<CheckResult> out;
  out.push_back(CheckHome(in.paths));
  out.push_back(CheckDisk(in));
  out.push_back(CheckPort(in.listen));
  if (in.nvml_check) out.push_back(in.nvml_check());
  return out;
}

bool AnyFailed(const std::vector<CheckResult>& results) {
  for (const auto& r : results) {
    if (r.level == Level::kFail) return true;
  }
  return false;
}

std::string FormatChecks(const std::vector<CheckResult>& results) {
  std::string out;
  for (const auto& r : results) {
    const char* tag = r.level == Level::kOk     ? "ok  "
                      : r.level == Level::kInfo ? "info"
                      : r.level == Level::kWarn ? "warn"
                                                : "FAIL";
    out += "  " + std::string(tag) + "  " + r.what + "\n";
    if (!r.advice.empty() && r.level != Level::kOk) out += "        -> " + r.advice + "\n";
  }
  return out;
}

}  // namespace vigil::cli
