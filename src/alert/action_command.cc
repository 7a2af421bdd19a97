// RunCommand (actions.h): fork/exec without a shell, output through one
// pipe, a deadline, and the process group killed at it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "alert/actions.h"

extern char** environ;

namespace vigil::alert {
namespace {

using Clock = std::chrono::steady_clock;

// The child's environment: the process's, less what `extra` sets, then
// `extra`. Built before fork: the child may only make async-signal-safe
// calls.
std::vector<std::string> ChildEnv(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    bool replaced = false;
    for (const auto& [k, v] : extra) replaced |= kv.substr(0, kv.find('=')) == k;
    if (!replaced) out.emplace_back(kv);
  }
  for (const auto& [k, v] : extra) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

[[noreturn]] void ExecChild(int out_fd, int err_fd, char** argv, char** envp) {
  // Its own process group, so the deadline kills what it started too.
  ::setpgid(0, 0);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(out_fd, STDERR_FILENO);
  // Vigil's sockets and databases are not the command's business.
  for (int fd = 3; fd < 1024; ++fd) {
    if (fd != err_fd) ::close(fd);
  }
  ::execve(argv[0], argv, envp);
  int e = errno;
  (void)!::write(err_fd, &e, sizeof(e));
  ::_exit(127);
}

void KillGroup(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "ended with status " + std::to_string(status);
}

// Reads the child's output until EOF and its exit, or the deadline, or a
// stop; returns the wait status, or nullopt when it was killed for either.
std::optional<int> Collect(pid_t pid, int fd, Clock::time_point deadline,
                           const std::atomic<bool>* stop, size_t max_output, CommandResult* r) {
  bool open = true;
  char buf[4096];
  while (true) {
    int status = 0;
    if (!open && ::waitpid(pid, &status, WNOHANG) == pid) return status;
    const auto now = Clock::now();
    if (now >= deadline || (stop != nullptr && stop->load())) return std::nullopt;
    const int wait_ms = static_cast<int>(std::min<int64_t>(
        100, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1));
    if (!open) {
      ::usleep(static_cast<useconds_t>(std::min(wait_ms, 20)) * 1000);
      continue;
    }
    pollfd p{fd, POLLIN, 0};
    if (NoEintr([&] { return ::poll(&p, 1, wait_ms); }) <= 0) continue;
    ssize_t n = NoEintr([&] { return ::read(fd, buf, sizeof(buf)); });
    if (n <= 0) {
      open = false;
      continue;
    }
    const size_t room = max_output - std::min(max_output, r->output.size());
    r->output.append(buf, std::min(room, static_cast<size_t>(n)));
    if (static_cast<size_t>(n) > room) r->output_truncated = true;
  }
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv_in,
                         const std::vector<std::pair<std::string, std::string>>& extra_env,
                         int64_t timeout_ms, size_t max_output, const std::atomic<bool>* stop) {
  CommandResult r;
  if (argv_in.empty()) {
    r.error = "no command";
    return r;
  }
  std::vector<std::string> args = argv_in;
  std::vector<std::string> env = ChildEnv(extra_env);
  std::vector<char*> argv = Pointers(args), envp = Pointers(env);
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    r.error = std::string("cannot make a pipe: ") + std::strerror(errno);
    return r;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    r.error = std::string("cannot make a pipe: ") + std::strerror(errno);
    ::close(out[0]);
    ::close(out[1]);
    return r;
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  pid_t pid = ::fork();
  if (pid == 0) ExecChild(out[1], err[1], argv.data(), envp.data());
  ::close(out[1]);
  ::close(err[1]);
  if (pid < 0) {
    r.error = std::string("cannot start it: fork: ") + std::strerror(errno);
    ::close(out[0]);
    ::close(err[0]);
    return r;
  }
  ::setpgid(pid, pid);  // also from here: the kill may come before the child's own call
  int exec_errno = 0;
  // EOF at once when execve succeeded (the pipe is close-on-exec).
  const bool exec_failed = NoEintr([&] {
                             return ::read(err[0], &exec_errno, sizeof(exec_errno));
                           }) == static_cast<ssize_t>(sizeof(exec_errno));
  ::close(err[0]);
  std::optional<int> status = Collect(pid, out[0], deadline, stop, max_output, &r);
  ::close(out[0]);
  if (!status) {
    KillGroup(pid);
    int ignored = 0;
    NoEintr([&] { return ::waitpid(pid, &ignored, 0); });
    r.error = stop != nullptr && stop->load()
                  ? "killed: Vigil stopped while it ran"
                  : "killed after its timeout of " + FormatDuration(timeout_ms);
    return r;
  }
  if (exec_failed) {
    r.error = "cannot start " + args[0] + ": " + std::strerror(exec_errno);
    return r;
  }
  if (WIFEXITED(*status)) r.exit_code = WEXITSTATUS(*status);
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) r.error = DescribeStatus(*status);
  return r;
}

}  // namespace vigil::alert
