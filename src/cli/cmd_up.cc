// `vigil up`: preflight, then run the all-in-one instance in the foreground or
// as a background process of its own (re-executing this binary, so the
// background process starts clean rather than forking a threaded process).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/collectors.h"
#include "cli/commands.h"
#include "cli/config.h"
#include "cli/home.h"
#include "cli/instance.h"
#include "cli/preflight.h"
#include "core/env.h"
#include "core/log.h"
#include "net/http_client.h"

extern char** environ;

namespace vigil::cli {
namespace {

void PrintRunning(const RunState& s, const HomePaths& paths) {
  std::printf("Vigil is running at %s (pid %d)\n", s.url.c_str(), s.pid);
  std::printf("  data:  %s\n", paths.data_dir().c_str());
  std::printf("  logs:  %s\n", paths.log_file().c_str());
  std::printf("  stop:  vigil down%s\n",
              paths.home == ResolveHome("") ? "" : (" --home " + paths.home).c_str());
}

int RunForeground(const UpFlags& flags, const HomePaths& paths) {
  // Signals are taken synchronously by sigwait below, so block them before any
  // thread starts (threads inherit the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto config = LoadConfig(paths.home);
  if (!config.ok()) {
    Logf(LogLevel::kError, "vigil could not start: %s", config.status().message().c_str());
    if (!flags.daemon_child) std::fprintf(stderr, "vigil: %s\n", config.status().message().c_str());
    return 1;
  }
  InstanceOptions opts;
  opts.logs = config->logs;
  opts.alerts = config->alerts;
  opts.notify = config->notify;
  opts.role = flags.role == "server"  ? Role::kServer
              : flags.role == "agent" ? Role::kAgent
                                      : Role::kAll;
  opts.server_url = flags.server;
  opts.collect_logs = !flags.no_logs && config->logs.collect;
  opts.paths = paths;
  opts.listen = flags.listen;
  opts.node_name = flags.node.empty() ? DefaultNodeName() : flags.node;
  opts.interval_ms = flags.interval_ms;
  auto instance = Instance::Start(opts, BuildCollectors(opts.node_name));
  if (!instance.ok()) {
    Logf(LogLevel::kError, "vigil could not start: %s", instance.status().message().c_str());
    if (!flags.daemon_child) {
      std::fprintf(stderr, "vigil: %s\n", instance.status().message().c_str());
    }
    return 1;
  }
  if (!flags.daemon_child) {
    std::printf("Vigil is running at %s (Ctrl-C to stop)\n  data: %s\n", (*instance)->url().c_str(),
                paths.data_dir().c_str());
    std::fflush(stdout);
  }
  int sig = 0;
  sigwait(&signals, &sig);
  Logf(LogLevel::kInfo, "signal %d received: stopping", sig);
  (*instance)->Stop();
  Logf(LogLevel::kInfo, "stopped cleanly");
  return 0;
}

// What the log gained since offset `from`, at most its last `bytes`.
std::string LogSince(const std::string& path, uint64_t from, size_t bytes) {
  auto text = Env::Default()->ReadFile(path, 64 << 20);
  if (!text.ok() || text->size() <= from) return "";
  std::string_view fresh = std::string_view(*text).substr(from);
  if (fresh.size() > bytes) fresh = fresh.substr(fresh.size() - bytes);
  return std::string(fresh);
}

int StartBackground(const UpFlags& flags, const HomePaths& paths) {
  int log_fd = ::open(paths.log_file().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    std::fprintf(stderr, "vigil: cannot open %s: %s\n", paths.log_file().c_str(),
                 std::strerror(errno));
    return 1;
  }
  uint64_t log_start = Env::Default()->FileSize(paths.log_file()).value_or(0);
  std::vector<std::string> args = {"/proc/self/exe",
                                   "up",
                                   "--daemon-child",
                                   "--listen",
                                   flags.listen,
                                   "--home",
                                   paths.home,
                                   "--interval-ms",
                                   std::to_string(flags.interval_ms),
                                   "--role",
                                   flags.role};
  if (!flags.server.empty()) args.insert(args.end(), {"--server", flags.server});
  if (flags.no_logs) args.push_back("--no-logs");
  if (!flags.node.empty()) args.insert(args.end(), {"--node", flags.node});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, log_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, log_fd, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);  // survives the terminal closing
  pid_t pid = 0;
  int rc = posix_spawn(&pid, "/proc/self/exe", &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(log_fd);
  if (rc != 0) {
    std::fprintf(stderr, "vigil: cannot start the background process: %s\n", std::strerror(rc));
    return 1;
  }

  Env* env = Env::Default();
  int64_t deadline = env->MonotonicMillis() + 30'000;
  while (env->MonotonicMillis() < deadline) {
    int wstatus = 0;
    if (::waitpid(pid, &wstatus, WNOHANG) == pid) {
      std::string tail = LogSince(paths.log_file(), log_start, 4096);
      std::fprintf(stderr,
                   "vigil: the background process exited during start-up. Its log (%s):\n%s",
                   paths.log_file().c_str(), tail.c_str());
      return 1;
    }
    if (auto running = FindRunningInstance(paths)) {
      auto health = net::HttpGet(running->url + "/healthz", std::chrono::seconds(2));
      if (health.ok() && health->status == 200) {
        PrintRunning(*running, paths);
        return 0;
      }
    }
    env->SleepMillis(100);
  }
  std::fprintf(stderr, "vigil: started (pid %d) but it did not answer within 30 s; see %s\n", pid,
               paths.log_file().c_str());
  return 1;
}

}  // namespace

int RunUp(const UpFlags& flags) {
  HomePaths paths{ResolveHome(flags.home)};
  if (flags.daemon_child) return RunForeground(flags, paths);

  if (auto running = FindRunningInstance(paths)) {
    std::printf("Vigil is already running.\n");
    PrintRunning(*running, paths);
    return 0;
  }

  // A mistake in config.json is reported here, before anything starts.
  if (auto config = LoadConfig(paths.home); !config.ok()) {
    std::fprintf(stderr, "vigil: %s\n", config.status().message().c_str());
    return 1;
  }

  PreflightInput pre;
  pre.paths = paths;
  pre.listen = flags.listen;
  pre.nvml_check = NvmlPreflightCheck;
  std::printf("Preflight checks:\n");
  auto checks = RunPreflight(pre);
  std::printf("%s", FormatChecks(checks).c_str());
  std::fflush(stdout);
  if (AnyFailed(checks)) {
    std::fprintf(stderr,
                 "vigil: not started; fix the FAIL lines above and run `vigil up` again.\n");
    return 1;
  }
  if (flags.foreground) return RunForeground(flags, paths);
  return StartBackground(flags, paths);
}

}  // namespace vigil::cli
