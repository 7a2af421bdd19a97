// `vigil run [--name NAME] -- CMD ARGS...`: runs a command whose output goes
// to a terminal or a pipe (which Vigil cannot read passively), passes that
// output through unchanged, and records it in the home's run spool, where log
// discovery picks it up like any other log file (docs/discovery.md): stdout
// in <name>.<id>.log, stderr apart in <name>.<id>.stderr.log (made when the
// command first writes to it), so a line on one stream never lands inside a
// multiline record (a traceback) of the other.
//
// Faithful pass-through: when our stdout/stderr is a terminal, the command
// gets a pseudo-terminal of the same size for each, so it still sees a TTY
// (colours, `\r` progress bars, line buffering) and its bytes reach the real
// terminal as written (output processing is off, so "\n" is not turned into
// "\r\n" in the recording). Otherwise it gets pipes. Signals sent to the
// wrapper (kill, a scheduler's SIGTERM) are forwarded; signals from the
// terminal (Ctrl-C) reach the command directly through its process group and
// are not forwarded twice. The wrapper exits as the command did, and records
// the exit code or signal next to the output. When stderr is a terminal and
// an instance recorded the run, one line after it says how it used its GPUs
// (run_efficiency.h).
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/home.h"
#include "cli/run_efficiency.h"
#include "core/env.h"
#include "core/json_writer.h"
#include "discover/job_name.h"

extern char** environ;

namespace vigil::cli {
namespace {

volatile sig_atomic_t g_child_pid = 0;
int g_signal_pipe[2] = {-1, -1};
// Sent to us, passed on to the command (SIGWINCH: resizes its terminal).
constexpr int kForwardedSignals[] = {SIGINT,  SIGTERM, SIGHUP,   SIGQUIT,
                                     SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};
// The efficiency line after the command: for runs of at least this long,
// waiting at most this long for the server to see the run end.
constexpr int64_t kEfficiencyMinRunMs = 10'000;
constexpr int64_t kEfficiencyWaitMs = 6'000;

// Forwards signals that were sent to us (kill, sigqueue); the terminal's own
// SIGINT/SIGQUIT already reach the command, which shares our process group.
void OnSignal(int sig, siginfo_t* info, void*) {
  int saved = errno;
  bool from_terminal = info != nullptr && info->si_code == SI_KERNEL;
  if (sig == SIGWINCH) {
    char c = 'w';
    (void)!::write(g_signal_pipe[1], &c, 1);
  } else if (g_child_pid > 0 && !from_terminal) {
    ::kill(g_child_pid, sig);
  }
  errno = saved;
}

void InstallSignalForwarding() {
  struct sigaction sa {};
  sa.sa_sigaction = OnSignal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwardedSignals) ::sigaction(sig, &sa, nullptr);
}

// Once the command has ended there is no one to forward to: Ctrl-C and kill
// stop the wrapper itself again.
void RestoreSignals() {
  for (int sig : kForwardedSignals) ::signal(sig, SIG_DFL);
}

// A pseudo-terminal whose slave looks like our terminal (size, modes) but
// passes bytes through unprocessed.
bool OpenPtyLike(int like_fd, int* master, int* slave) {
  struct winsize ws {};
  bool have_ws = ::ioctl(like_fd, TIOCGWINSZ, &ws) == 0;
  if (::openpty(master, slave, nullptr, nullptr, have_ws ? &ws : nullptr) != 0) return false;
  struct termios t {};
  if (::tcgetattr(*slave, &t) == 0) {
    t.c_oflag &= ~static_cast<tcflag_t>(OPOST);
    ::tcsetattr(*slave, TCSANOW, &t);
  }
  ::fcntl(*master, F_SETFD, FD_CLOEXEC);
  return true;
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

std::string SafeName(std::string name) {
  for (char& c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) c = '_';
  }
  if (name.empty()) name = "run";
  return name.substr(0, 64);
}

struct RunRecord {
  std::string name;
  std::vector<std::string> cmd;
  int pid = 0;
  int64_t started_ms = 0;
  bool ended = false;
  int exit_code = 0;
  int signal = 0;
  int64_t ended_ms = 0;
};

std::string RecordJson(const RunRecord& r) {
  JsonWriter w;
  // "streams": stdout and stderr are recorded apart (older records held
  // both in one file).
  w.BeginObject().Key("name").String(r.name).Key("streams").String("split");
  w.Key("cmd").BeginArray();
  for (const auto& a : r.cmd) w.String(a);
  w.EndArray().Key("pid").Int(r.pid).Key("started_ms").Int(r.started_ms);
  if (r.ended) {
    w.Key("ended_ms").Int(r.ended_ms);
    if (r.signal != 0) {
      w.Key("signal").Int(r.signal).Key("signal_name").String(sigabbrev_np(r.signal) ?: "");
    } else {
      w.Key("exit_code").Int(r.exit_code);
    }
  }
  w.EndObject();
  return w.Release() + "\n";
}

}  // namespace

Result<RunFlags> ParseRunArgs(int argc, char** argv) {
  RunFlags flags;
  int i = 0;
  for (; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    std::string* target = a == "--name" ? &flags.name : a == "--home" ? &flags.home : nullptr;
    if (target != nullptr) {
      if (i + 1 >= argc) return InvalidArgument(std::string(a) + " needs a value");
      *target = argv[++i];
      continue;
    }
    if (a.starts_with("--name=")) {
      flags.name = a.substr(7);
    } else if (a.starts_with("--home=")) {
      flags.home = a.substr(7);
    } else if (a.starts_with("-")) {
      return InvalidArgument("unknown option " + std::string(a) +
                             " (put the command after --: vigil run -- CMD ARGS...)");
    } else {
      break;
    }
  }
  for (; i < argc; ++i) flags.command.emplace_back(argv[i]);
  if (flags.command.empty()) {
    return InvalidArgument("no command given. Usage: vigil run [--name NAME] -- CMD ARGS...");
  }
  return flags;
}

namespace {

// Where the command's output is recorded: <base>.log (stdout) and
// <base>.stderr.log (stderr, opened on its first byte: most runs write none),
// with the run record in <base>.json. Recording is a bonus; running the
// command is the promise: a recording that fails stops, the command goes on.
class Recording {
 public:
  Recording(Env* env, const HomePaths& paths, const RunRecord& rec) : env_(env) {
    base_ =
        JoinPath(paths.run_spool_dir(), SafeName(rec.name) + "." + std::to_string(rec.started_ms) +
                                            "-" + std::to_string(::getpid()));
    path_[0] = base_ + ".log";
    path_[1] = base_ + ".stderr.log";
    if (env->CreateDirs(paths.run_spool_dir()).ok()) Open(0);
    active_ = ok_ = fd_[0] >= 0;
    if (!active_) {
      std::fprintf(stderr,
                   "vigil run: cannot record output under %s (%s); running without recording\n",
                   paths.run_spool_dir().c_str(), std::strerror(errno));
    }
  }
  // Whether this run is recorded at all (its record is kept even when writing
  // its output stopped half way).
  bool active() const { return active_; }

  // Stream i's bytes (0: stdout, 1: stderr).
  void Write(int i, const char* p, size_t n) {
    if (!ok_) return;
    if ((fd_[i] >= 0 || Open(i)) && WriteAll(fd_[i], p, n)) return;
    std::fprintf(stderr, "vigil run: recording stopped: %s\n", std::strerror(errno));
    ok_ = false;
  }
  void SaveRecord(const RunRecord& rec) {
    if (active()) (void)env_->WriteFileAtomic(base_ + ".json", RecordJson(rec));
  }
  // The command never started: nothing to keep.
  void Discard() {
    if (!active_) return;
    ::close(fd_[0]);
    ::unlink(path_[0].c_str());
    fd_[0] = -1;
    active_ = false;
  }
  void Close() {
    for (int& fd : fd_) {
      if (fd < 0) continue;
      ::fsync(fd);
      ::close(fd);
      fd = -1;
    }
  }

 private:
  bool Open(int i) {
    fd_[i] = ::open(path_[i].c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return fd_[i] >= 0;
  }

  Env* env_;
  std::string base_;
  std::string path_[2];
  int fd_[2] = {-1, -1};
  bool active_ = false;
  bool ok_ = false;  // still writing the output
};

// What the command writes to and what we read: a pseudo-terminal for each of
// stdout/stderr that is a terminal here, a pipe otherwise. [0] is our end.
struct Outputs {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  bool out_tty = false;
  bool err_tty = false;
};

bool OpenOutputs(Outputs* o) {
  o->out_tty = ::isatty(STDOUT_FILENO) && OpenPtyLike(STDOUT_FILENO, &o->out[0], &o->out[1]);
  if (!o->out_tty && ::pipe2(o->out, O_CLOEXEC) != 0) o->out[0] = o->out[1] = -1;
  o->err_tty = ::isatty(STDERR_FILENO) && OpenPtyLike(STDERR_FILENO, &o->err[0], &o->err[1]);
  if (!o->err_tty && ::pipe2(o->err, O_CLOEXEC) != 0) o->err[0] = o->err[1] = -1;
  return o->out[0] >= 0 && o->err[0] >= 0;
}

// Starts the command on the outputs' far ends with the default dispositions
// of the signals we forward. Signals are blocked until its pid is known (in
// g_child_pid), so none sent meanwhile is lost. posix_spawnp's error, or 0.
int Spawn(const std::vector<std::string>& command, const Outputs& o, pid_t* pid) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, o.out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, o.err[1], STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  sigset_t all, old;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, &old);
  InstallSignalForwarding();
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &old);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : kForwardedSignals) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  int rc = ::posix_spawnp(pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc == 0) g_child_pid = *pid;
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  return rc;
}

// Passes the command's output through and records it, until both outputs
// reach EOF (a pty master reports EIO when the last writer closes it); a
// resized terminal resizes the command's.
void Relay(const Outputs& o, Recording* recording) {
  struct pollfd fds[3] = {
      {o.out[0], POLLIN, 0}, {o.err[0], POLLIN, 0}, {g_signal_pipe[0], POLLIN, 0}};
  const int dest[2] = {STDOUT_FILENO, STDERR_FILENO};
  char buf[65536];
  int open_outputs = 2;
  while (open_outputs > 0) {
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents & POLLIN) {
      while (::read(g_signal_pipe[0], buf, sizeof(buf)) > 0) {
      }
      struct winsize ws {};
      if (o.out_tty && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
        ::ioctl(o.out[0], TIOCSWINSZ, &ws);
      }
      if (o.err_tty && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0) {
        ::ioctl(o.err[0], TIOCSWINSZ, &ws);
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_outputs;
        continue;
      }
      (void)WriteAll(dest[i], buf, static_cast<size_t>(n));
      recording->Write(i, buf, static_cast<size_t>(n));
    }
  }
}

// Waits for the command and notes how it ended.
void WaitFor(pid_t pid, Env* env, RunRecord* rec) {
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  g_child_pid = 0;
  rec->ended = true;
  rec->ended_ms = env->NowMillis();
  if (WIFSIGNALED(wstatus)) {
    rec->signal = WTERMSIG(wstatus);
  } else {
    rec->exit_code = WEXITSTATUS(wstatus);
  }
}

}  // namespace

int RunRun(const RunFlags& flags) {
  if (flags.command.empty()) {
    std::fprintf(stderr,
                 "vigil run: no command given. Usage: vigil run [--name NAME] -- CMD ARGS...\n");
    return 2;
  }
  Env* env = Env::Default();
  RunRecord rec;
  rec.cmd = flags.command;
  rec.name = flags.name.empty() ? discover::JobNameFromCmdline(flags.command, "").name : flags.name;
  rec.started_ms = env->NowMillis();
  Recording recording(env, HomePaths{ResolveHome(flags.home)}, rec);

  Outputs outputs;
  if (!OpenOutputs(&outputs)) {
    std::fprintf(stderr, "vigil run: cannot create pipes: %s\n", std::strerror(errno));
    return 125;
  }
  if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return 125;
  pid_t pid = 0;
  if (int rc = Spawn(flags.command, outputs, &pid); rc != 0) {
    std::fprintf(stderr, "vigil run: cannot run %s: %s\n", flags.command[0].c_str(),
                 std::strerror(rc));
    recording.Discard();
    return rc == ENOENT ? 127 : 126;
  }
  rec.pid = pid;
  ::close(outputs.out[1]);
  ::close(outputs.err[1]);
  recording.SaveRecord(rec);

  Relay(outputs, &recording);
  WaitFor(pid, env, &rec);
  recording.Close();
  recording.SaveRecord(rec);
  // How the run used its GPUs, for the person at the terminal (a pipe or a
  // file gets the command's output alone); a short run has too few samples,
  // and one stopped with Ctrl-C wants to be gone.
  RestoreSignals();
  if (::isatty(STDERR_FILENO) && rec.signal != SIGINT &&
      rec.ended_ms - rec.started_ms >= kEfficiencyMinRunMs) {
    PrintRunEfficiency(flags.home, rec.pid, rec.started_ms, kEfficiencyWaitMs);
  }
  if (rec.signal != 0) {
    // Die the same way, so a shell or scheduler sees what the command did.
    ::signal(rec.signal, SIG_DFL);
    ::raise(rec.signal);
    return 128 + rec.signal;
  }
  return rec.exit_code;
}

}  // namespace vigil::cli
