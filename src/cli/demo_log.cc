#include "cli/demo_log.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "cli/home.h"
#include "core/env.h"
#include "discover/run_records.h"

namespace vigil::cli {
namespace {

void WriteLoop(std::FILE* f) {
  Env* env = Env::Default();
  const int total = 20000;
  std::fprintf(f, "[INFO|trainer.py:2048] ***** Running training *****\n");
  std::fprintf(f, "[INFO|trainer.py:2049]   Num examples = 1,280,000\n");
  std::fprintf(f, "[INFO|trainer.py:2052]   Total train batch size = 512\n");
  for (int step = 1;; ++step) {
    double progress = static_cast<double>(step) / total;
    double loss = 2.1 * std::exp(-3.0 * progress) + 0.35 + 0.04 * std::sin(step * 0.7);
    double lr = step < 500 ? 3e-4 * step / 500 : 3e-4 * 0.5 * (1 + std::cos(M_PI * progress));
    double grad_norm = 0.8 + 0.3 * std::fabs(std::sin(step * 0.37));
    if (step % 10 == 0) {
      std::fprintf(f, "{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.3e, 'epoch': %.2f}\n",
                   loss, grad_norm, lr, 3.0 * progress);
    }
    if (step % 50 == 0) {
      std::fprintf(f, "%3d%%|%s| %d/%d [%02d:%02d<%02d:%02d, 2.05it/s]\n",
                   static_cast<int>(progress * 100), "##########", step, total, step / 120,
                   (step / 2) % 60, (total - step) / 120 % 60, (total - step) / 2 % 60);
    }
    if (step % 400 == 0) {
      std::fprintf(f,
                   "{'eval_loss': %.4f, 'eval_accuracy': %.4f, 'eval_runtime': 41.2, "
                   "'eval_samples_per_second': 310.6, 'epoch': %.2f}\n",
                   loss + 0.05, 0.62 + 0.3 * progress, 3.0 * progress);
    }
    // Early events, so a visitor sees some within a minute: an fp16 loss
    // scale settling during warm-up, a rank's transient NCCL warning.
    if (step == 24 || step == 60) {
      std::fprintf(f,
                   "[2026-12-01 10:00:%02d,123] [INFO] [stage_1_and_2.py:1806:step] [deepspeed] "
                   "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d\n",
                   step / 4, step == 24 ? 65536 : 32768, step == 24 ? 32768 : 16384);
    }
    if (step == 90) {
      std::fprintf(f,
                   "gpu-node-7:2231:2391 [3] NCCL WARN Call to ibv_poll_cq returned 1 "
                   "(retrying, step %d)\n",
                   step);
    }
    if (step % 700 == 0) {
      std::fprintf(f,
                   "WARNING:torch.distributed.elastic: GPU 3 is at 86C, close to its slowdown "
                   "temperature; clocks may drop\n");
    }
    if (step % 1900 == 0) {
      std::fprintf(f,
                   "gpu-node-7:2231:2391 [3] NCCL WARN Call to ibv_poll_cq returned 1 "
                   "(retrying, step %d)\n",
                   step);
    }
    std::fflush(f);
    env->SleepMillis(500);
  }
}

}  // namespace

int RunDemoTraining() {
  WriteLoop(stdout);
  return 0;
}

Result<int> StartDemoJob(const std::string& home) {
  // The binary's own path, not /proc/self/exe: discovery knows a `vigil
  // run` wrapper and names its job by the command's argv[0].
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return ErrnoStatus("cannot start the demo job", "/proc/self/exe", errno);
  std::string self(exe, static_cast<size_t>(n));
  std::vector<std::string> args = {self,    "run", "--home", home,          "--name",
                                   "train", "--",  self,     "__demo-train"};
  const int64_t started_ms = Env::Default()->NowMillis();
  pid_t wrapper = ::fork();
  if (wrapper < 0) return ErrnoStatus("cannot start the demo job", "fork", errno);
  if (wrapper == 0) {
    // The job ends with the demo: SIGTERM when this process dies, which
    // `vigil run` forwards to the trainer. Output goes to a file: the
    // terminal is the demo's.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(self.c_str(), argv.data());
    ::_exit(127);
  }
  // The trainer's pid is in its run record, written as it starts.
  Env* env = Env::Default();
  for (int waited = 0; waited < 5000; waited += 50) {
    for (const discover::RunRecord& r : discover::ReadRunRecords(HomePaths{home}.run_spool_dir())) {
      if (r.name == "train" && r.pid > 0 && !r.ended && r.started_ms >= started_ms - 1000) {
        return r.pid;
      }
    }
    int status;
    if (::waitpid(wrapper, &status, WNOHANG) == wrapper) break;
    env->SleepMillis(50);
  }
  return IoError("the demo job did not start (no run record in " + HomePaths{home}.run_spool_dir() +
                 ")");
}

}  // namespace vigil::cli
