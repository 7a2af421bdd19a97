#include "cli/demo_log.h"

#include <signal.h>

#include <cmath>
#include <cstdio>
#include <thread>

#include "core/env.h"

namespace vigil::cli {
namespace {

void WriteLoop(std::FILE* f) {
  // The demo's main thread takes SIGINT/SIGTERM with sigwait(); this thread
  // must not be the one they are delivered to.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
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

Status StartDemoTrainingLog(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "ae");
  if (f == nullptr) return IoError("cannot open " + path + " for the demo's training log");
  std::thread(WriteLoop, f).detach();
  return Status::Ok();
}

}  // namespace vigil::cli
