// Job detection: which processes on this node are a training or inference
// job, and which processes belong together, read passively from /proc with
// no SDK and no flag (docs/discovery.md "Jobs").
//
// A researcher asks "is my training going well?"; before any metric or exit
// reason can answer that, the node's process table has to be seen the way a
// colleague would see it: "that torchrun and its 8 workers are one run of
// train.py, on PyTorch, in container 3f2a...". This module is that first,
// pure step. It takes one snapshot and keeps no state: lifecycle (running,
// stalled, crashed), GPUs and metrics are layered on top by callers, keyed by
// DetectedJob::id.
//
// Evidence, never guesses: a process is part of a job only when its mapped
// libraries (/proc/<pid>/maps: libtorch, libtensorflow, jaxlib, ...), its
// command line (torchrun, deepspeed, vllm serve, ...), its distributed
// environment (RANK, OMPI_COMM_WORLD_RANK, ... with a GPU runtime mapped) or
// NVML's list of processes running CUDA work (JobDetectionOptions::gpu_pids)
// say so. `python manage.py runserver` is not a job.
//
// Thread safety: DetectJobs is a pure function over the files it reads; safe
// from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "discover/proc_snapshot.h"
#include "discover/users.h"

namespace vigil::discover {

enum class Framework { kUnknown, kPyTorch, kTensorFlow, kJax, kPaddle, kMindSpore };
enum class JobKind { kTraining, kInference, kUnknown };
// What a process is to its job.
enum class JobProcessRole {
  kLauncher,  // torchrun, deepspeed, mpirun, slurmstepd, ...: starts the ranks
  kRank,      // a worker of the job (rank is -1 where its environment is unreadable)
  kHelper,    // a child of a rank: DataLoader worker, compile worker; never a rank
};

const char* FrameworkName(Framework f);  // "pytorch", "tensorflow", "jax", ..., "" for kUnknown
const char* JobKindName(JobKind k);      // "training", "inference", "unknown"
const char* JobProcessRoleName(JobProcessRole r);  // "launcher", "rank", "helper"

struct JobProcess {
  int pid = 0;
  int ppid = 0;
  JobProcessRole role = JobProcessRole::kRank;
  int rank = -1;        // RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID
  int local_rank = -1;  // LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, --local_rank=N
  // Unix epoch ms (since boot when /proc/stat has no btime): btime plus
  // start_ticks, so it moves when the clock is stepped; for display.
  int64_t start_time_ms = 0;
  std::string cmdline;       // arguments joined by spaces, at most 4 KiB
  uint64_t start_ticks = 0;  // field 22 of /proc/<pid>/stat; 0 when not known (history)
  // Read from a snapshot (JobDetectionOptions::departed): it has exited.
  bool departed = false;
  bool operator==(const JobProcess&) const = default;
};

struct DetectedJob {
  // Stable for the job's life: "<anchor pid>-<anchor start ticks>-<boot>",
  // where the anchor is the outermost launcher, else the earliest-started
  // rank, its start is field 22 of /proc/<pid>/stat (clock ticks after boot:
  // it never moves, unlike a wall-clock time) and <boot> the first 8 hex
  // digits of the boot id (FormatJobId). A Ray job appends "-<RAY_JOB_ID>" to
  // its raylet's. Label-safe: [0-9a-zA-Z-]. See docs/jobs.md "Job ids".
  std::string id;
  // `vigil run --name NAME` above the job, else the surest JobNameFromCmdline
  // of its launchers and ranks ("torchrun ... train.py" -> "train").
  std::string name;
  JobKind kind = JobKind::kUnknown;
  Framework framework = Framework::kUnknown;
  // "torchrun", "deepspeed", "accelerate", "mpirun", "srun", "ray" or "".
  std::string launcher;
  // "transformers", "lightning", "mmengine", "ultralytics", "megatron",
  // "nanogpt-style", "vllm", "sglang", "triton", "tgi", "ollama" or "".
  std::string trainer;
  int world_size = 0;  // WORLD_SIZE (or the MPI/Slurm equivalent) when readable, else ranks seen
  // Launchers (outermost first), then ranks by rank (unknown first, then by
  // pid), then helpers by pid.
  std::vector<JobProcess> processes;
  std::string container_id;  // 64 hex digits from /proc/<pid>/cgroup, "" on the host
  std::string master_addr;
  int master_port = 0;
  int64_t start_time_ms = 0;  // earliest start among `processes`
  // Who runs it: the real uid of its anchor (the process its id names; when
  // that cannot be read, of its first process that can), kUnknownUid when
  // none can; and that uid's name on this node (UserNames: its digits when
  // it has none, "" when the uid is unknown). docs/jobs.md "Owner".
  int64_t uid = kUnknownUid;
  std::string user;
  bool operator==(const DetectedJob&) const = default;
};

struct JobDetectionOptions {
  std::string proc_root = "/proc";
  Env* env = nullptr;  // nullptr: Env::Default()
  // A pid never looked at (Vigil itself). 0: this process when proc_root is "/proc".
  int self_pid = 0;
  // Processes NVML lists as running CUDA work (sorted): a job even when its
  // libraries and command line say nothing (a C++ or Julia trainer, a
  // statically linked binary), unless it is never one (tensorboard, ...).
  std::vector<int> gpu_pids;
  // Processes that have exited since the last pass, as they were when they
  // started (ProcSnapshot, taken on the kernel's exec event): judged by the
  // same rules as live ones, their pids read from here rather than /proc,
  // and listed with JobProcess::departed. A job that crashed at start-up
  // between two passes is found this way.
  std::vector<ProcSnapshot> departed;
  // Names jobs' owners (DetectedJob::user); not owned. nullptr: UserNames::Default().
  UserNames* users = nullptr;
  // Memory between passes (JobDetectionCache below); nullptr: every pass
  // reads every process's maps. Not owned; one thread at a time.
  struct JobDetectionCache* cache = nullptr;
};

// One snapshot of the jobs on this node, ordered by start time then id.
// Fails only when proc_root cannot be listed; a process that vanishes or holds
// odd content mid-scan is skipped or read as far as it makes sense.
Result<std::vector<DetectedJob>> DetectJobs(const JobDetectionOptions& options);

// The cheap first looks of the process watcher (collect/jobs/process_watch.h),
// by the rules of DetectJobs, so the kernel's stream of exec events on a busy
// node costs little:
//
// True for a command line that is never a job's member, launcher or rank (a
// shell, a daemon, `tail`, Vigil: those whose maps a pass does not read; and
// the tools a build or a script execs by the thousand: `true`, `ls`, `grep`,
// `git`, `make`, `cc1plus`, `ld`, ...): not worth a snapshot.
bool NeverAJobProgram(std::string_view raw_cmdline);
// True when a snapshot holds evidence of its own that it may be a job member
// or launcher (a launcher or trainer on its command line, a framework or GPU
// runtime mapped, a rank in its environment, or maps it could not read);
// DetectJobs, which also sees its parents, decides.
bool HasJobEvidence(const ProcSnapshot& snapshot);

// Pieces of DetectJobs, exposed for tests and for callers that already hold
// the text (all bounded, none throws).
//
// The container id (64 hex digits) in the text of /proc/<pid>/cgroup, v1 or v2:
// ".../docker-<id>.scope", "/docker/<id>", "cri-containerd-<id>.scope",
// "crio-<id>.scope", "libpod-<id>.scope", "/kubepods/.../pod<uid>/<id>". The
// innermost one wins; "" when there is none (a host process).
std::string ContainerIdFromCgroup(std::string_view cgroup);

// What the mapped libraries in the text of /proc/<pid>/maps say.
struct MapsEvidence {
  Framework framework = Framework::kUnknown;
  bool gpu_runtime = false;  // libcudart, libcuda, libnccl, libamdhip64, librccl
  std::string trainer;       // "vllm", "triton" or "mmengine" when their own libraries show
  bool operator==(const MapsEvidence&) const = default;
};
MapsEvidence EvidenceFromMaps(std::string_view maps);

// What earlier DetectJobs passes read of each live process's
// /proc/<pid>/maps: the costliest file of a pass (hundreds of lines for a
// Python trainer, each path rendered by the kernel), and one that settles
// soon after start, when the framework and the GPU runtime are loaded. A
// pass with a cache reads a process's maps again only while it may still
// change what detection concludes: at every pass while the process is
// younger than kSettleMs (20 s), then at most every kRecheckMs until both a
// framework and a GPU runtime show (a trainer that imports torch late, a
// worker that loads CUDA on its first batch). Entries are keyed by pid and
// checked against the start ticks (a reused pid is a new process), and
// those of processes a pass no longer saw are dropped.
//
// Thread safety: none; the one thread that runs the passes owns it.
struct JobDetectionCache {
  static constexpr int64_t kSettleMs = 20'000;
  static constexpr int64_t kRecheckMs = 60'000;
  struct Entry {
    uint64_t start_ticks = 0;
    MapsEvidence evidence;
    bool unreadable = false;
    int64_t read_ms = 0;  // Env::NowMillis of the read
    uint64_t pass = 0;    // the last pass that saw the process
  };
  std::unordered_map<int, Entry> maps;
  uint64_t pass = 0;
  uint64_t reads = 0;  // maps files read, over all passes (tests, `vigil status`)
};

}  // namespace vigil::discover
