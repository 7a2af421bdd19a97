// Job names: the short, human name of what a process runs, taken from its
// command line ("python train.py --lr 3e-4" -> "train"). Used as the `job`
// label of the logs a process writes, and by training awareness to group the
// processes of one run (a torchrun launcher and its workers all say "train").
//
// The rules, in order (docs/discovery.md "Job names"):
//   1. the first script among the arguments (".py", ".sh", ".jar", ... with the
//      extension stripped), also inside a "sh -c '...'" string;
//   2. the module of "-m mod" (launcher modules such as torch.distributed.run
//      are skipped, so "python -m torch.distributed.run -m mymod" -> "mymod");
//   3. the basename of argv[0] when it is a plain binary (not an interpreter
//      or a launcher such as python, bash, torchrun, timeout);
//   4. otherwise comm (/proc/<pid>/comm), else the basename of argv[0].
//
// Thread safety: pure functions (ProcessJobName reads /proc), safe from any
// thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace vigil::discover {

// How sure a job name is; when several processes write one file, the surest
// name wins (a "timeout 3600 ./train.sh" parent loses to its child's "train").
enum class JobNameKind {
  kFallback = 0,  // comm or an interpreter/launcher name ("python3", "torchrun")
  kBinary = 1,    // the basename of a plain binary ("llama-server")
  kModule = 2,    // "-m mod"
  kScript = 3,    // a script file among the arguments
};

struct JobName {
  std::string name;  // never empty when returned by the functions below, at most 128 bytes
  JobNameKind kind = JobNameKind::kFallback;
  bool operator==(const JobName&) const = default;
};

// Splits the raw bytes of /proc/<pid>/cmdline (NUL-separated, usually with a
// trailing NUL) into arguments. Empty for a kernel thread or a zombie.
std::vector<std::string> SplitCmdline(std::string_view raw);

// The job name for a command line; `comm` is the fallback (may be empty).
// Returns {"unknown", kFallback} when there is nothing at all to go on.
JobName JobNameFromCmdline(const std::vector<std::string>& argv, std::string_view comm);

// Reads <proc_root>/<pid>/cmdline and comm. NotFound when the process is gone,
// is a kernel thread or a zombie (empty cmdline); IoError when unreadable.
Result<JobName> ProcessJobName(int pid, const std::string& proc_root = "/proc");

}  // namespace vigil::discover
