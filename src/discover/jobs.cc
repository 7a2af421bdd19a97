// Job detection from /proc (docs/discovery.md "Jobs").
//
// Three passes over one snapshot of the process table, then one read per job:
//   1. read every process's stat, cmdline, comm and (for all but shells and
//      daemons) maps: what it is (launcher, framework, trainer);
//   2. read environ of the processes with evidence: ranks and rendezvous;
//   3. group: a member's nearest member ancestor makes it a helper (or a rank,
//      when its rank environment differs); otherwise its outermost launcher
//      ancestor (up to an interactive shell) and its rendezvous
//      (MASTER_ADDR:PORT) say which job it is, merged with a union-find;
//   4. each job's owner: the real uid in its anchor's status (users.h).
// Every read is bounded, every walk up the tree is bounded (a ppid loop in a
// fake or racing /proc ends there), and a process that vanishes mid-scan is
// simply missing.
#include "discover/jobs.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/strings.h"
#include "discover/job_name.h"

namespace vigil::discover {
namespace {

constexpr size_t kMaxPids = 65536;
constexpr size_t kMaxProcStatBytes = 1 << 20;  // /proc/stat: the intr line is long on big nodes
constexpr size_t kMaxCmdlineDisplay = 4096;
constexpr size_t kMaxWords = 256;
constexpr int kMaxDepth = 64;

// ---- Small text helpers ----------------------------------------------------

std::string_view Basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "python3.11" -> "python".
std::string_view Stem(std::string_view base) {
  while (!base.empty() && ((base.back() >= '0' && base.back() <= '9') || base.back() == '.')) {
    base.remove_suffix(1);
  }
  return base;
}

bool ContainsIgnoreCase(std::string_view s, std::string_view needle) {
  auto it = std::search(s.begin(), s.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
  return it != s.end();
}

template <size_t N>
bool OneOf(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

template <size_t N>
bool StartsWithAny(std::string_view s, const std::array<std::string_view, N>& prefixes) {
  for (std::string_view p : prefixes) {
    if (StartsWith(s, p)) return true;
  }
  return false;
}

std::optional<int> ParseSmallInt(std::string_view s) {
  auto v = ParseInt64(TrimSpace(s));
  if (!v || *v < 0 || *v > INT_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

bool IsHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Arguments joined by spaces, at most kMaxCmdlineDisplay bytes, control
// characters replaced, never half a UTF-8 sequence at the cut.
std::string DisplayCmdline(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out.push_back(' ');
    out += a;
    if (out.size() >= kMaxCmdlineDisplay) break;
  }
  out.resize(CutUtf8(out, kMaxCmdlineDisplay).size());
  for (char& c : out) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '_';
  }
  return out;
}

// All arguments as whitespace-separated words (a setproctitle'd cmdline is one
// argument), at most kMaxWords.
std::vector<std::string_view> Words(const std::vector<std::string>& argv) {
  std::vector<std::string_view> out;
  for (const std::string& a : argv) {
    for (std::string_view w : SplitFields(a)) {
      if (out.size() >= kMaxWords) return out;
      out.push_back(w);
    }
  }
  return out;
}

// ---- What a command line says ----------------------------------------------

// The program a command line runs: the script after a Python interpreter (its
// basename), or the module of "-m", else the basename of argv[0].
struct Program {
  std::string_view name;    // basename: "torchrun", "train.py", "mpirun", "ray::IDLE"
  std::string_view module;  // "torch.distributed.run" for "python -m torch.distributed.run"
  size_t next = 0;          // index in words of the first argument after it
};

bool IsPython(std::string_view base) {
  std::string_view s = Stem(base);
  return s == "python" || s == "pypy" || s == "python-dbg";
}

Program ParseProgram(const std::vector<std::string_view>& w) {
  Program p;
  if (w.empty()) return p;
  p.name = Basename(w[0]);
  p.next = 1;
  if (!IsPython(p.name)) return p;
  for (size_t i = 1; i < w.size(); ++i) {
    std::string_view a = w[i];
    if (a == "-m" && i + 1 < w.size()) {
      p.module = w[i + 1];
      p.next = i + 2;
      return p;
    }
    if (StartsWith(a, "-m") && a.size() > 2 && a[2] != '-') {
      p.module = a.substr(2);
      p.next = i + 1;
      return p;
    }
    if (a == "-c") return p;  // inline code: the interpreter is the program
    if (a == "-X" || a == "-W") {
      ++i;
      continue;
    }
    if (StartsWith(a, "-")) continue;
    p.name = Basename(a);
    p.next = i + 1;
    return p;
  }
  return p;
}

std::string_view WordAt(const std::vector<std::string_view>& w, size_t i) {
  return i < w.size() ? w[i] : std::string_view();
}

struct Launcher {
  std::string_view name;  // "" when the process is no launcher
  bool torch = false;     // starts PyTorch ranks: its direct children are ranks
  bool shared = false;    // raylet: runs many jobs' workers; not listed in a job
};

constexpr std::array<std::string_view, 8> kMpiLaunchers = {
    "mpirun",        "mpiexec",        "orterun",      "prterun",
    "mpiexec.hydra", "mpirun.openmpi", "mpirun.mpich", "mpiexec.openmpi"};
// Per-node daemons of MPI launchers: their children are the ranks on this node.
constexpr std::array<std::string_view, 4> kMpiDaemons = {"orted", "prted", "hydra_pmi_proxy",
                                                         "pmi_proxy"};

// "slurmstepd: [1234.0]" is the step daemon whose children are srun's tasks;
// the ".batch", ".extern" and ".interactive" steps are not launches.
bool IsSlurmStep(const std::vector<std::string_view>& w) {
  if (w.size() < 2 || w[0] != "slurmstepd:") return false;
  std::string_view s = w[1];
  if (s.size() < 4 || s.front() != '[' || s.back() != ']') return false;
  s = s.substr(1, s.size() - 2);
  size_t dot = s.find('.');
  if (dot == std::string_view::npos) return false;
  return ParseSmallInt(s.substr(0, dot)).has_value() && ParseSmallInt(s.substr(dot + 1));
}

Launcher DetectLauncher(const Program& p, const std::vector<std::string_view>& w) {
  std::string_view m = p.module;
  if (p.name == "torchrun" || m == "torch.distributed.run" || m == "torch.distributed.launch") {
    return {"torchrun", true, false};
  }
  if (p.name == "deepspeed" || m == "deepspeed" || m == "deepspeed.launcher.runner" ||
      m == "deepspeed.launcher.launch") {
    return {"deepspeed", true, false};
  }
  if ((p.name == "accelerate" && WordAt(w, p.next) == "launch") ||
      m == "accelerate.commands.launch" ||
      (m == "accelerate.commands.accelerate_cli" && WordAt(w, p.next) == "launch")) {
    return {"accelerate", true, false};
  }
  if (m.empty() && (OneOf(p.name, kMpiLaunchers) || OneOf(p.name, kMpiDaemons))) {
    return {"mpirun", false, false};
  }
  if (m.empty() && p.name == "srun") return {"srun", false, false};
  if (IsSlurmStep(w)) return {"srun", false, false};
  if (m.empty() && p.name == "raylet") return {"ray", false, true};
  return {};
}

// The first word that names a Python script, and its position.
std::optional<size_t> FindScript(const std::vector<std::string_view>& w) {
  for (size_t i = 0; i < w.size(); ++i) {
    if (!StartsWith(w[i], "-") && w[i].find('=') == std::string_view::npos &&
        EndsWith(w[i], ".py") && w[i].size() > 3) {
      return i;
    }
  }
  return std::nullopt;
}

bool LaterWordMatches(const std::vector<std::string_view>& w, size_t from,
                      std::string_view contains) {
  for (size_t i = from; i < w.size(); ++i) {
    if (EndsWith(w[i], ".py") && w[i].find(contains) != std::string_view::npos) return true;
  }
  return false;
}

constexpr std::array<std::string_view, 7> kMegatronScripts = {
    "pretrain_gpt.py", "pretrain_bert.py",  "pretrain_t5.py", "pretrain_mamba.py",
    "pretrain_vlm.py", "pretrain_retro.py", "pretrain_ict.py"};
constexpr std::array<std::string_view, 8> kTrlCommands = {"sft",  "dpo", "grpo",   "kto",
                                                          "orpo", "ppo", "reward", "rloo"};

std::string_view TrainerFromModule(std::string_view m) {
  auto is = [&](std::string_view pkg) {
    return m == pkg || (StartsWith(m, pkg) && m.size() > pkg.size() && m[pkg.size()] == '.');
  };
  if (is("vllm")) return "vllm";
  if (is("sglang")) return "sglang";
  if (is("text_generation_server")) return "tgi";
  if (is("ultralytics")) return "ultralytics";
  if (is("trl") || is("transformers")) return "transformers";
  if (is("megatron")) return "megatron";
  return "";
}

std::string_view TrainerFromProgram(std::string_view prog, std::string_view next) {
  if (prog == "vllm" && next == "serve") return "vllm";
  if (prog == "tritonserver") return "triton";
  if (prog == "text-generation-launcher" || prog == "text-generation-server") return "tgi";
  if (prog == "ollama" && (next == "serve" || next == "runner")) return "ollama";
  if (prog == "yolo") return "ultralytics";
  if (prog == "trl" && OneOf(next, kTrlCommands)) return "transformers";
  if (prog == "mim" && next == "train") return "mmengine";
  if ((prog == "lightning" || prog == "fabric") && next == "run") return "lightning";
  return "";
}

std::string_view TrainerFromScript(const std::vector<std::string_view>& w, size_t at) {
  std::string_view script = w[at];
  std::string_view base = Basename(script);
  if (OneOf(base, kMegatronScripts) || ContainsIgnoreCase(script, "megatron")) return "megatron";
  // nanoGPT: "train.py config/train_shakespeare_char.py" (its configurator).
  if (ContainsIgnoreCase(script, "nanogpt") ||
      (base == "train.py" && LaterWordMatches(w, at + 1, "config/"))) {
    return "nanogpt-style";
  }
  // OpenMMLab: "tools/train.py configs/<model>/<cfg>.py".
  if (EndsWith(script, "tools/train.py") && LaterWordMatches(w, at + 1, "configs/")) {
    return "mmengine";
  }
  // Hugging Face example scripts: examples/pytorch/*/run_*.py.
  if (StartsWith(base, "run_") && (script.find("transformers/") != std::string_view::npos ||
                                   script.find("examples/pytorch/") != std::string_view::npos)) {
    return "transformers";
  }
  return "";
}

std::string_view DetectTrainer(const Program& p, const std::vector<std::string_view>& w) {
  if (!p.module.empty()) {
    std::string_view t = TrainerFromModule(p.module);
    if (!t.empty()) return t;
  }
  std::string_view t = TrainerFromProgram(p.name, WordAt(w, p.next));
  if (!t.empty()) return t;
  if (auto at = FindScript(w)) return TrainerFromScript(w, *at);
  return "";
}

bool IsInferenceServer(std::string_view trainer) {
  return trainer == "vllm" || trainer == "sglang" || trainer == "triton" || trainer == "tgi" ||
         trainer == "ollama";
}

// Trainers that imply PyTorch when the maps cannot be read.
bool TrainerImpliesPyTorch(std::string_view trainer) {
  return !trainer.empty() && trainer != "triton" && trainer != "ollama";
}

// Programs that map a framework but are never a job of their own.
bool NeverAJob(const Program& p, std::string_view comm) {
  return p.name == "tensorboard" || StartsWith(p.module, "tensorboard") ||
         StartsWith(p.module, "torch._inductor") || comm == "pt_data_worker";
}

// Whose maps are not worth reading: shells and daemons never map a framework.
constexpr std::array<std::string_view, 22> kNoMaps = {
    "bash",   "sh",      "dash", "zsh",     "fish",       "sshd",      "sleep", "tmux",
    "screen", "systemd", "init", "dockerd", "containerd", "kubelet",   "vigil", "tail",
    "tee",    "cat",     "less", "top",     "htop",       "nvidia-smi"};

// "bash", "-bash", "zsh -i": a person's shell. What runs under it was started
// by hand, not by the launcher above it ("srun --pty bash", then two runs).
bool IsInteractiveShell(const std::vector<std::string_view>& w) {
  if (w.empty()) return false;
  std::string_view b = Basename(w[0]);
  if (!b.empty() && b.front() == '-') b.remove_prefix(1);
  if (b != "bash" && b != "sh" && b != "zsh" && b != "fish" && b != "dash") return false;
  return std::all_of(w.begin() + 1, w.end(), [](std::string_view a) {
    bool long_option = StartsWith(a, "--");
    return StartsWith(a, "-") && (long_option || a.find('c') == std::string_view::npos);
  });
}

bool SkipMaps(std::string_view argv0_base) {
  std::string_view b = argv0_base;
  if (!b.empty() && b.front() == '-') b.remove_prefix(1);  // login shell
  return OneOf(b, kNoMaps) || StartsWith(b, "containerd-shim");
}

// ---- What the environment says ---------------------------------------------

struct EnvFacts {
  bool read = false;
  int rank = -1, local_rank = -1, world_size = 0;
  std::string master_addr;
  int master_port = 0;
  std::string run_id;  // TORCHELASTIC_RUN_ID
  std::string slurm_job;
  std::string ray_job;
  bool lightning = false;
  bool distributed = false;  // RANK, LOCAL_RANK or an MPI rank: started as one of many
  // Who started the process, as its environment says: "accelerate",
  // "torchrun", "mpirun", "srun" or "". For a rank whose launcher is not in
  // the process table.
  std::string_view launched_by;
  bool has_rank() const { return rank >= 0 || local_rank >= 0; }
};

// The first of `keys` (in order of preference) that holds a number.
int FirstInt(const std::unordered_map<std::string_view, std::string_view>& vars,
             std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) {
    auto it = vars.find(k);
    if (it == vars.end()) continue;
    if (auto v = ParseSmallInt(it->second)) return *v;
  }
  return -1;
}

std::string Var(const std::unordered_map<std::string_view, std::string_view>& vars,
                std::string_view key) {
  auto it = vars.find(key);
  return it == vars.end() ? std::string() : std::string(it->second.substr(0, 256));
}

std::string_view LaunchedBy(const std::unordered_map<std::string_view, std::string_view>& vars) {
  for (const auto& [key, value] : vars) {
    if (StartsWith(key, "ACCELERATE_")) return "accelerate";
  }
  if (vars.contains("TORCHELASTIC_RUN_ID")) return "torchrun";
  if (FirstInt(vars, {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) >= 0) return "mpirun";
  if (FirstInt(vars, {"SLURM_STEP_ID"}) >= 0 && FirstInt(vars, {"SLURM_PROCID"}) >= 0) {
    return "srun";
  }
  return "";
}

EnvFacts ParseEnviron(std::string_view raw) {
  std::unordered_map<std::string_view, std::string_view> vars;
  EnvFacts f;
  f.read = true;
  for (std::string_view kv : Split(raw, '\0')) {
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string_view key = kv.substr(0, eq);
    vars.emplace(key, kv.substr(eq + 1));
    if (key == "PL_GLOBAL_SEED" || StartsWith(key, "PL_TRAINER_")) f.lightning = true;
  }
  f.rank =
      FirstInt(vars, {"RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"});
  f.local_rank = FirstInt(
      vars, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
  f.world_size = std::max(
      0, FirstInt(vars, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}));
  f.master_addr = Var(vars, "MASTER_ADDR");
  int port = FirstInt(vars, {"MASTER_PORT"});
  f.master_port = port > 0 && port <= 65535 ? port : 0;
  f.run_id = Var(vars, "TORCHELASTIC_RUN_ID");
  f.distributed =
      FirstInt(vars, {"RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) >= 0;
  f.launched_by = LaunchedBy(vars);
  f.slurm_job = Var(vars, "SLURM_JOB_ID");
  f.ray_job = Var(vars, "RAY_JOB_ID");
  return f;
}

// "--local_rank=3" / "--local-rank 3": torch.distributed.launch without --use_env.
int LocalRankFromArgs(const std::vector<std::string_view>& w) {
  for (size_t i = 0; i < w.size(); ++i) {
    for (std::string_view flag : {"--local_rank", "--local-rank"}) {
      if (!StartsWith(w[i], flag)) continue;
      std::string_view rest = w[i].substr(flag.size());
      std::optional<int> v;
      if (StartsWith(rest, "=")) v = ParseSmallInt(rest.substr(1));
      if (rest.empty() && i + 1 < w.size()) v = ParseSmallInt(w[i + 1]);
      if (v) return *v;
    }
  }
  return -1;
}

// ---- One process -----------------------------------------------------------

struct Proc {
  int pid = 0, ppid = 0;
  int64_t start_ms = 0;      // for display: moves with btime
  uint64_t start_ticks = 0;  // for identity and order: never moves
  bool departed = false;     // read from a snapshot: it has exited
  std::vector<std::string> argv;
  std::string comm;
  Program program;                      // views into `words`
  std::vector<std::string_view> words;  // views into `argv`
  Launcher launcher;
  std::string trainer;
  Framework framework = Framework::kUnknown;
  bool maps_unreadable = false;  // tried and failed (another user's); shells are not tried
  bool gpu_runtime = false;
  bool on_gpu = false;  // NVML lists it running CUDA work
  bool never_root = false;
  int arg_local_rank = -1;
  bool interactive_shell = false;
  EnvFacts env;
  // Set by grouping.
  bool candidate = false;
  bool member = false;
  JobProcessRole role = JobProcessRole::kRank;
  int depth = 0;

  Proc() = default;
  Proc(const Proc&) = delete;  // `words` point into `argv`
  Proc& operator=(const Proc&) = delete;
};

int64_t ReadBootTimeSeconds(Env* env, const std::string& proc_root) {
  auto text = env->ReadFile(JoinPath(proc_root, "stat"), kMaxProcStatBytes);
  if (!text.ok()) return 0;
  for (std::string_view line : Split(*text, '\n')) {
    if (!StartsWith(line, "btime ")) continue;
    auto v = ParseInt64(TrimSpace(line.substr(6)));
    return v && *v > 0 ? *v : 0;
  }
  return 0;
}

int64_t TicksToMs(uint64_t ticks) {
  static const long hz = [] {
    long v = ::sysconf(_SC_CLK_TCK);
    return v > 0 ? v : 100;
  }();
  uint64_t capped = std::min<uint64_t>(ticks, uint64_t{1} << 40);
  return static_cast<int64_t>(capped / hz * 1000 + capped % hz * 1000 / hz);
}

class Scanner {
 public:
  // `departed`: snapshots of processes that have exited, read instead of
  // /proc for their pids.
  Scanner(Env* env, std::string proc_root, const std::vector<ProcSnapshot>& departed,
          JobDetectionCache* cache)
      : env_(env), root_(std::move(proc_root)), cache_(cache) {
    for (const ProcSnapshot& s : departed) departed_.emplace(s.pid, &s);
    if (cache_ != nullptr) ++cache_->pass;
  }

  bool IsDeparted(int pid) const { return departed_.contains(pid); }

  std::string PidPath(int pid, std::string_view file) const {
    return JoinPath(JoinPath(root_, std::to_string(pid)), file);
  }

  // One file of a process, from its snapshot when it has departed.
  Result<std::string> Read(int pid, std::string_view file, size_t max) {
    auto it = departed_.find(pid);
    if (it == departed_.end()) return env_->ReadFile(PidPath(pid, file), max);
    const ProcSnapshot& s = *it->second;
    const std::string* text = file == "stat"                  ? &s.stat
                              : file == "cmdline"             ? &s.cmdline
                              : file == "comm"                ? &s.comm
                              : file == "environ"             ? &s.environ
                              : file == "cgroup"              ? &s.cgroup
                              : file == "maps" && s.maps_read ? &s.maps
                                                              : nullptr;
    if (text == nullptr) return NotFound("no " + std::string(file) + " in the snapshot");
    return text->substr(0, max);
  }

  // Stat, cmdline, comm and maps. Null for kernel threads, zombies, vanished
  // pids and unparsable stat.
  std::unique_ptr<Proc> ReadProc(int pid, int64_t boot_ms) {
    auto stat = Read(pid, "stat", kMaxStatBytes);
    if (!stat.ok()) return nullptr;
    auto fields = ParseProcStat(*stat);
    if (!fields || fields->state == 'Z' || fields->state == 'X') return nullptr;
    auto raw = Read(pid, "cmdline", kMaxCmdlineBytes);
    if (!raw.ok()) return nullptr;
    auto p = std::make_unique<Proc>();
    p->argv = SplitCmdline(*raw);
    if (p->argv.empty()) return nullptr;  // kernel thread (or a zombie just now)
    p->pid = pid;
    p->ppid = fields->ppid;
    p->start_ms = boot_ms + TicksToMs(fields->start_ticks);
    p->start_ticks = fields->start_ticks;
    p->departed = IsDeparted(pid);
    auto comm = Read(pid, "comm", kMaxCommBytes);
    if (comm.ok()) p->comm = std::string(TrimSpace(*comm));
    p->words = Words(p->argv);
    p->program = ParseProgram(p->words);
    p->launcher = DetectLauncher(p->program, p->words);
    p->trainer = std::string(DetectTrainer(p->program, p->words));
    p->never_root = NeverAJob(p->program, p->comm);
    p->arg_local_rank = LocalRankFromArgs(p->words);
    p->interactive_shell = IsInteractiveShell(p->words);
    if (p->launcher.name.empty() && !SkipMaps(Basename(p->argv[0]))) ReadMaps(p.get());
    ApplyFallbacks(p.get());
    return p;
  }

  void ReadMaps(Proc* p) {
    JobDetectionCache::Entry* kept = p->departed ? nullptr : CachedMaps(p);
    if (kept == nullptr || MapsDue(*p, *kept)) {
      auto maps = Read(p->pid, "maps", kMaxMapsBytes);
      MapsEvidence read = maps.ok() ? EvidenceFromMaps(*maps) : MapsEvidence{};
      if (kept == nullptr) return ApplyMaps(p, read, !maps.ok());
      *kept = {p->start_ticks, std::move(read), !maps.ok(), env_->NowMillis(), cache_->pass};
      ++cache_->reads;
    }
    ApplyMaps(p, kept->evidence, kept->unreadable);
  }

  static void ApplyMaps(Proc* p, const MapsEvidence& e, bool unreadable) {
    if (unreadable) {
      p->maps_unreadable = true;
      return;
    }
    p->framework = e.framework;
    p->gpu_runtime = e.gpu_runtime;
    if (p->trainer.empty()) p->trainer = e.trainer;
  }

  // The cache's entry for a live process, marked seen by this pass; a fresh
  // one (read_ms 0: due) for a new process or a reused pid. Null without a cache.
  JobDetectionCache::Entry* CachedMaps(const Proc* p) {
    if (cache_ == nullptr) return nullptr;
    JobDetectionCache::Entry& e = cache_->maps[p->pid];
    if (e.start_ticks != p->start_ticks || e.read_ms == 0) e = {p->start_ticks};
    e.pass = cache_->pass;
    return &e;
  }

  bool MapsDue(const Proc& p, const JobDetectionCache::Entry& e) const {
    if (e.read_ms == 0) return true;
    int64_t now = env_->NowMillis();
    if (now - p.start_ms < JobDetectionCache::kSettleMs) return true;
    bool settled = e.evidence.gpu_runtime && e.evidence.framework != Framework::kUnknown;
    return !settled && now - e.read_ms >= JobDetectionCache::kRecheckMs;
  }

  // Forgets the processes this pass did not see (exited, or pids reused).
  void EndPass() {
    if (cache_ == nullptr) return;
    std::erase_if(cache_->maps, [&](const auto& kv) { return kv.second.pass != cache_->pass; });
  }

  // What the command line implies when the maps said nothing (or were unreadable).
  static void ApplyFallbacks(Proc* p) {
    if (p->framework != Framework::kUnknown) return;
    if (p->launcher.torch || TrainerImpliesPyTorch(p->trainer) ||
        StartsWith(p->comm, "pt_main_thread") || p->comm == "pt_data_worker") {
      p->framework = Framework::kPyTorch;
    }
  }

  void ReadEnviron(Proc* p) {
    auto raw = Read(p->pid, "environ", kMaxEnvironBytes);
    if (!raw.ok()) return;
    p->env = ParseEnviron(*raw);
    if (p->env.lightning && p->trainer.empty()) p->trainer = "lightning";
  }

  std::string ContainerId(int pid) {
    auto raw = Read(pid, "cgroup", kMaxCgroupBytes);
    return raw.ok() ? ContainerIdFromCgroup(*raw) : std::string();
  }

  // The real uid: read for a job's anchor only, not every process of a pass;
  // a departed process's from its snapshot (its status is gone).
  int64_t Uid(int pid) {
    auto it = departed_.find(pid);
    if (it != departed_.end()) return it->second->uid;
    return ReadRealUid(env_, root_, pid);
  }

 private:
  Env* env_;
  std::string root_;
  JobDetectionCache* cache_;  // may be null
  std::unordered_map<int, const ProcSnapshot*> departed_;
};

// The job name a process gives: JobNameFromCmdline, except that a console
// script run by Python ("python3 /usr/local/bin/vllm serve ...") is named
// after the script rather than the interpreter.
JobName NameOf(const Proc& p) {
  JobName n = JobNameFromCmdline(p.argv, p.comm);
  std::string_view prog = p.program.name;
  if (n.kind == JobNameKind::kFallback && p.launcher.name.empty() && p.program.module.empty() &&
      !prog.empty() && !IsPython(prog) && prog.size() <= 128 &&
      prog.find_first_of(": \t") == std::string_view::npos) {
    return {std::string(prog), JobNameKind::kBinary};
  }
  return n;
}

// ---- Grouping ----------------------------------------------------------------

class UnionFind {
 public:
  int Add() {
    parent_.push_back(static_cast<int>(parent_.size()));
    return parent_.back();
  }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

class Grouper {
 public:
  Grouper(std::vector<std::unique_ptr<Proc>>* procs, Scanner* scanner, std::string boot_id,
          UserNames* users)
      : procs_(*procs), scanner_(scanner), boot_id_(std::move(boot_id)), users_(users) {
    for (size_t i = 0; i < procs_.size(); ++i) by_pid_[procs_[i]->pid] = static_cast<int>(i);
    for (size_t i = 0; i < procs_.size(); ++i) uf_.Add();
  }

  std::vector<DetectedJob> Run() {
    for (auto& p : procs_) p->depth = Depth(*p);
    MarkCandidates();
    std::vector<int> order(procs_.size());
    std::iota(order.begin(), order.end(), 0);
    // Ancestors first, so a helper's member ancestor is decided before it.
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return procs_[a]->depth < procs_[b]->depth; });
    for (int i : order) {
      if (procs_[i]->candidate) Place(i);
    }
    for (int i : order) {
      if (procs_[i]->launcher.torch && !procs_[i]->member) PlaceLoneLauncher(i);
    }
    return Assemble();
  }

 private:
  int Parent(const Proc& p) const {
    if (p.ppid == p.pid) return -1;
    auto it = by_pid_.find(p.ppid);
    return it == by_pid_.end() ? -1 : it->second;
  }

  int Depth(const Proc& p) const {
    int d = 0;
    for (int a = Parent(p); a >= 0 && d < kMaxDepth; a = Parent(*procs_[a])) ++d;
    return d;
  }

  bool HasLauncherAncestor(const Proc& p) const {
    int d = 0;
    for (int a = Parent(p); a >= 0 && d < kMaxDepth; a = Parent(*procs_[a]), ++d) {
      if (!procs_[a]->launcher.name.empty()) return true;
    }
    return false;
  }

  // Evidence: a framework or trainer; running CUDA work (NVML); or a GPU
  // runtime plus a rank or a launcher above; or, when its maps are unreadable,
  // a PyTorch launcher as its parent (torchrun's children are its ranks).
  void MarkCandidates() {
    for (auto& p : procs_) {
      if (!p->launcher.name.empty()) continue;
      int parent = Parent(*p);
      bool torch_child = parent >= 0 && procs_[parent]->launcher.torch;
      bool strong = p->framework != Framework::kUnknown || !p->trainer.empty();
      const bool on_gpu = p->on_gpu && !p->never_root;
      if (strong || p->gpu_runtime || on_gpu || (p->maps_unreadable && torch_child)) {
        scanner_->ReadEnviron(p.get());
      }
      if (p->env.lightning && p->framework == Framework::kUnknown) {
        p->framework = Framework::kPyTorch;
      }
      p->candidate = strong || on_gpu ||
                     (p->gpu_runtime && (p->env.has_rank() || HasLauncherAncestor(*p))) ||
                     (p->maps_unreadable && torch_child);
    }
  }

  // Walks up from candidate `i`: the nearest member ancestor makes it a helper
  // (or a rank, when its rank environment is its own); otherwise it is a rank
  // of the job of its outermost launcher ancestor, or of its rendezvous.
  void Place(int i) {
    Proc& p = *procs_[i];
    std::vector<int> chain;  // launchers above p, nearest first
    int member_parent = -1;
    int d = 0;
    for (int a = Parent(p); a >= 0 && d < kMaxDepth; a = Parent(*procs_[a]), ++d) {
      if (!procs_[a]->launcher.name.empty()) {
        chain.push_back(a);
      } else if (procs_[a]->member) {
        if (chain.empty()) member_parent = a;
        break;
      } else if (procs_[a]->interactive_shell) {
        break;
      }
    }
    if (member_parent >= 0) {
      const Proc& r = *procs_[member_parent];
      bool own_rank =
          p.env.has_rank() && (p.env.rank != r.env.rank || p.env.local_rank != r.env.local_rank);
      p.member = true;
      p.role = own_rank ? JobProcessRole::kRank : JobProcessRole::kHelper;
      uf_.Union(i, member_parent);
      return;
    }
    if (p.never_root) return;
    p.member = true;
    p.role = JobProcessRole::kRank;
    if (!chain.empty()) {
      AddLaunchers(i, chain);
      int anchor = chain.back();
      std::string key = "L:" + std::to_string(procs_[anchor]->pid);
      if (procs_[anchor]->launcher.shared) key += ":" + p.env.ray_job;
      uf_.Union(i, KeyNode(key));
    }
    if (!p.env.master_addr.empty() && p.env.master_port > 0) {
      uf_.Union(i, KeyNode("M:" + p.env.master_addr + ":" + std::to_string(p.env.master_port) +
                           "|" + p.env.run_id + "|" + p.env.slurm_job));
    }
  }

  // A PyTorch launcher with no rank yet (just started, or ranks unreadable):
  // a job of its own, under its outermost launcher.
  void PlaceLoneLauncher(int i) {
    std::vector<int> chain = {i};
    int d = 0;
    for (int a = Parent(*procs_[i]); a >= 0 && d < kMaxDepth; a = Parent(*procs_[a]), ++d) {
      if (!procs_[a]->launcher.name.empty()) {
        chain.push_back(a);
      } else if (procs_[a]->member) {
        return;  // started by a job (a notebook's "!torchrun"): leave it
      } else if (procs_[a]->interactive_shell) {
        break;
      }
    }
    AddLaunchers(i, chain);
    uf_.Union(i, KeyNode("L:" + std::to_string(procs_[chain.back()]->pid)));
  }

  void AddLaunchers(int member, const std::vector<int>& chain) {
    for (int l : chain) {
      if (procs_[l]->launcher.shared) continue;
      procs_[l]->member = true;
      procs_[l]->role = JobProcessRole::kLauncher;
      uf_.Union(member, l);
    }
    anchors_[member] = chain.back();
  }

  int KeyNode(const std::string& key) {
    auto [it, inserted] = keys_.try_emplace(key, 0);
    if (inserted) it->second = uf_.Add();
    return it->second;
  }

  std::vector<DetectedJob> Assemble();
  DetectedJob BuildJob(const std::vector<int>& members);
  std::string VigilRunName(int from) const;
  void SetOwner(int anchor, const std::vector<int>& sorted, DetectedJob* job);

  std::vector<std::unique_ptr<Proc>>& procs_;
  Scanner* scanner_;
  std::string boot_id_;  // ReadBootId: part of every job id
  UserNames* users_;
  std::unordered_map<int, int> by_pid_;
  UnionFind uf_;
  std::unordered_map<std::string, int> keys_;
  std::unordered_map<int, int> anchors_;  // root member -> its outermost launcher
};

// `vigil run --name NAME -- CMD` at or above `from`: the name the user gave.
std::string Grouper::VigilRunName(int from) const {
  int d = 0;
  for (int a = from; a >= 0 && d < kMaxDepth; a = Parent(*procs_[a]), ++d) {
    const std::vector<std::string>& argv = procs_[a]->argv;
    if (argv.size() < 2 || Basename(argv[0]) != "vigil" || argv[1] != "run") continue;
    for (size_t k = 2; k < argv.size(); ++k) {
      std::string_view x = argv[k];
      if (x == "--name" && k + 1 < argv.size()) return argv[k + 1].substr(0, 128);
      if (StartsWith(x, "--name=")) return std::string(x.substr(7, 128));
      if (x == "--home") {
        ++k;
        continue;
      }
      if (!StartsWith(x, "--home=")) break;
    }
    return "";
  }
  return "";
}

// The job's owner: its anchor's uid (the process its id names, so the owner
// is as stable as the id), else, when that status cannot be read, the first
// process's that can (launchers first, then ranks).
void Grouper::SetOwner(int anchor, const std::vector<int>& sorted, DetectedJob* job) {
  job->uid = scanner_->Uid(procs_[anchor]->pid);
  for (size_t k = 0; k < sorted.size() && job->uid == kUnknownUid; ++k) {
    if (sorted[k] != anchor) job->uid = scanner_->Uid(procs_[sorted[k]]->pid);
  }
  job->user = users_->NameOf(job->uid);
}

std::vector<DetectedJob> Grouper::Assemble() {
  std::map<int, std::vector<int>> components;
  for (size_t i = 0; i < procs_.size(); ++i) {
    if (procs_[i]->member) components[uf_.Find(static_cast<int>(i))].push_back(static_cast<int>(i));
  }
  std::vector<DetectedJob> jobs;
  for (auto& [root, members] : components) jobs.push_back(BuildJob(members));
  std::sort(jobs.begin(), jobs.end(), [](const DetectedJob& a, const DetectedJob& b) {
    return a.start_time_ms != b.start_time_ms ? a.start_time_ms < b.start_time_ms : a.id < b.id;
  });
  return jobs;
}

DetectedJob Grouper::BuildJob(const std::vector<int>& members) {
  auto role_order = [](JobProcessRole r) {
    return r == JobProcessRole::kLauncher ? 0 : r == JobProcessRole::kRank ? 1 : 2;
  };
  std::vector<int> sorted = members;
  std::sort(sorted.begin(), sorted.end(), [&](int a, int b) {
    const Proc& x = *procs_[a];
    const Proc& y = *procs_[b];
    if (x.role != y.role) return role_order(x.role) < role_order(y.role);
    if (x.role == JobProcessRole::kLauncher && x.depth != y.depth) return x.depth < y.depth;
    if (x.role == JobProcessRole::kRank && x.env.rank != y.env.rank) return x.env.rank < y.env.rank;
    return x.pid < y.pid;
  });

  DetectedJob job;
  int anchor = -1;  // the outermost launcher of the earliest root member, else that member
  std::string anchor_suffix;
  for (int i : sorted) {
    const Proc& p = *procs_[i];
    JobProcess jp{.pid = p.pid,
                  .ppid = p.ppid,
                  .role = p.role,
                  .start_time_ms = p.start_ms,
                  .cmdline = DisplayCmdline(p.argv),
                  .start_ticks = p.start_ticks,
                  .departed = p.departed};
    if (p.role != JobProcessRole::kLauncher) {
      jp.rank = p.role == JobProcessRole::kRank ? p.env.rank : -1;
      jp.local_rank = p.role == JobProcessRole::kRank
                          ? (p.env.local_rank >= 0 ? p.env.local_rank : p.arg_local_rank)
                          : -1;
    }
    job.processes.push_back(std::move(jp));
    if (job.start_time_ms == 0 || p.start_ms < job.start_time_ms) job.start_time_ms = p.start_ms;
    auto it = anchors_.find(i);
    int candidate_anchor = it != anchors_.end() ? it->second : -1;
    if (candidate_anchor < 0 && p.role == JobProcessRole::kRank) candidate_anchor = i;
    if (candidate_anchor >= 0) {
      const Proc& c = *procs_[candidate_anchor];
      // By start ticks, not the wall-clock start: that moves with btime,
      // and the anchor (so the id) must not.
      bool better =
          anchor < 0 || (!c.launcher.name.empty() && procs_[anchor]->launcher.name.empty()) ||
          (c.launcher.name.empty() == procs_[anchor]->launcher.name.empty() &&
           (c.start_ticks < procs_[anchor]->start_ticks ||
            (c.start_ticks == procs_[anchor]->start_ticks && c.pid < procs_[anchor]->pid)));
      if (better) {
        anchor = candidate_anchor;
        anchor_suffix = c.launcher.shared && !p.env.ray_job.empty() ? "-" + p.env.ray_job : "";
      }
    }
  }
  if (anchor < 0) anchor = sorted.front();
  const Proc& a = *procs_[anchor];
  job.id = FormatJobId(a.pid, a.start_ticks, boot_id_) + anchor_suffix;
  job.launcher = std::string(a.launcher.name);
  SetOwner(anchor, sorted, &job);

  int ranks = 0;
  JobName best{"", JobNameKind::kFallback};
  bool has_rank_env = false;
  for (int i : sorted) {
    const Proc& p = *procs_[i];
    bool rank = p.role == JobProcessRole::kRank;
    if (rank) ++ranks;
    if (rank) job.world_size = std::max(job.world_size, p.env.world_size);
    if (rank && p.env.distributed) has_rank_env = true;
    if (rank && job.launcher.empty()) job.launcher = std::string(p.env.launched_by);
    if (rank && job.master_addr.empty() && !p.env.master_addr.empty()) {
      job.master_addr = p.env.master_addr;
      job.master_port = p.env.master_port;
    }
    if (p.role != JobProcessRole::kHelper) {
      JobName n = NameOf(p);
      if (best.name.empty() || n.kind > best.kind) best = n;
    }
  }
  // Ranks say it best, then launchers ("torchrun ... pretrain_gpt.py"); helpers
  // only when nobody else did (a wrapper script as the rank).
  for (JobProcessRole role :
       {JobProcessRole::kRank, JobProcessRole::kLauncher, JobProcessRole::kHelper}) {
    for (int i : sorted) {
      if (procs_[i]->role != role) continue;
      if (job.framework == Framework::kUnknown) job.framework = procs_[i]->framework;
      if (job.trainer.empty()) job.trainer = procs_[i]->trainer;
    }
  }
  if (job.world_size == 0) job.world_size = ranks;

  job.name = VigilRunName(anchor);
  if (job.name.empty()) job.name = best.name.empty() ? "unknown" : best.name;

  for (int i : sorted) {
    job.container_id = scanner_->ContainerId(procs_[i]->pid);
    if (!job.container_id.empty()) break;
  }

  if (IsInferenceServer(job.trainer)) {
    job.kind = JobKind::kInference;
  } else if ((!job.trainer.empty() && (job.trainer != "ultralytics" || best.name == "train" ||
                                       std::any_of(sorted.begin(), sorted.end(),
                                                   [&](int i) {
                                                     const auto& w = procs_[i]->words;
                                                     return std::find(w.begin(), w.end(),
                                                                      "train") != w.end();
                                                   }))) ||
             (!job.launcher.empty() && job.launcher != "ray") || has_rank_env) {
    job.kind = JobKind::kTraining;
  } else {
    std::string lower = best.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("train") != std::string::npos || lower.find("finetune") != std::string::npos ||
        lower.find("fine_tune") != std::string::npos || lower.find("sft") != std::string::npos) {
      job.kind = JobKind::kTraining;
    } else if (lower.find("serve") != std::string::npos ||
               lower.find("infer") != std::string::npos) {
      job.kind = JobKind::kInference;
    }
  }
  return job;
}

}  // namespace

const char* FrameworkName(Framework f) {
  switch (f) {
    case Framework::kPyTorch:
      return "pytorch";
    case Framework::kTensorFlow:
      return "tensorflow";
    case Framework::kJax:
      return "jax";
    case Framework::kPaddle:
      return "paddle";
    case Framework::kMindSpore:
      return "mindspore";
    case Framework::kUnknown:
      break;
  }
  return "";
}

const char* JobKindName(JobKind k) {
  switch (k) {
    case JobKind::kTraining:
      return "training";
    case JobKind::kInference:
      return "inference";
    case JobKind::kUnknown:
      break;
  }
  return "unknown";
}

const char* JobProcessRoleName(JobProcessRole r) {
  switch (r) {
    case JobProcessRole::kLauncher:
      return "launcher";
    case JobProcessRole::kRank:
      return "rank";
    case JobProcessRole::kHelper:
      return "helper";
  }
  return "rank";
}

std::string ContainerIdFromCgroup(std::string_view cgroup) {
  static constexpr std::array<std::string_view, 5> kPrefixes = {"docker-", "cri-containerd-",
                                                                "crio-", "libpod-", "containerd-"};
  for (std::string_view line : Split(cgroup, '\n')) {
    // "hierarchy-id:controllers:path"; the path may itself hold ':'.
    size_t first = line.find(':');
    if (first == std::string_view::npos) continue;
    size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string id;
    for (std::string_view seg : Split(line.substr(second + 1), '/')) {
      if (seg.find("conmon") != std::string_view::npos) continue;  // podman's monitor
      if (EndsWith(seg, ".scope")) seg.remove_suffix(6);
      for (std::string_view pre : kPrefixes) {
        if (StartsWith(seg, pre)) {
          seg.remove_prefix(pre.size());
          break;
        }
      }
      if (IsHex64(seg)) id = std::string(seg);
    }
    if (!id.empty()) {
      for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return id;
    }
  }
  return "";
}

MapsEvidence EvidenceFromMaps(std::string_view maps) {
  static constexpr std::array<std::string_view, 6> kTorch = {
      "libtorch_cpu.so", "libtorch_cuda.so", "libtorch.so",
      "libc10.so",       "libc10_cuda.so",   "libtorch_python.so"};
  static constexpr std::array<std::string_view, 4> kTf = {
      "libtensorflow_framework.so", "_pywrap_tensorflow_internal.so", "libtensorflow_cc.so",
      "libtensorflow.so"};
  static constexpr std::array<std::string_view, 5> kGpu = {"libcudart", "libcuda.so", "libnccl",
                                                           "libamdhip64", "librccl"};
  bool torch = false, tf = false, jax = false, paddle = false, mindspore = false;
  MapsEvidence e;
  std::string_view last;
  for (std::string_view line : Split(maps, '\n')) {
    size_t slash = line.find('/');
    if (slash == std::string_view::npos) continue;
    std::string_view path = line.substr(slash);
    if (path == last) continue;  // a library maps several segments in a row
    last = path;
    std::string_view base = Basename(path);
    if (base.find(".so") == std::string_view::npos) continue;
    torch = torch || StartsWithAny(base, kTorch);
    tf = tf || StartsWithAny(base, kTf);
    jax =
        jax || StartsWith(base, "xla_extension") || path.find("/jaxlib/") != std::string_view::npos;
    paddle = paddle || StartsWith(base, "libpaddle") ||
             path.find("/paddle/fluid/core_") != std::string_view::npos;
    mindspore =
        mindspore || StartsWith(base, "libmindspore") ||
        (path.find("/mindspore/") != std::string_view::npos && StartsWith(base, "_c_expression"));
    e.gpu_runtime = e.gpu_runtime || StartsWithAny(base, kGpu);
    if (e.trainer.empty()) {
      if (path.find("/vllm/") != std::string_view::npos && StartsWith(base, "_C"))
        e.trainer = "vllm";
      if (StartsWith(base, "libtritonserver")) e.trainer = "triton";
      if (path.find("/mmcv/_ext") != std::string_view::npos) e.trainer = "mmengine";
    }
  }
  // TensorFlow comes last: PyTorch and JAX scripts import it for TensorBoard
  // and tf.data, never the other way round.
  e.framework = torch       ? Framework::kPyTorch
                : jax       ? Framework::kJax
                : paddle    ? Framework::kPaddle
                : mindspore ? Framework::kMindSpore
                : tf        ? Framework::kTensorFlow
                            : Framework::kUnknown;
  return e;
}

Result<std::vector<DetectedJob>> DetectJobs(const JobDetectionOptions& options) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  auto names = env->ListDir(options.proc_root);
  if (!names.ok()) return names.status().WithContext("detecting jobs");
  int self = options.self_pid;
  if (self == 0 && options.proc_root == "/proc") self = static_cast<int>(::getpid());
  int64_t boot_ms = ReadBootTimeSeconds(env, options.proc_root) * 1000;

  Scanner scanner(env, options.proc_root, options.departed, options.cache);
  std::vector<int> pids;
  for (const std::string& name : *names) {
    auto pid = ParseSmallInt(name);
    if (!pid || *pid == 0 || *pid == self || name.front() == '+' || name.front() == '-') continue;
    // A departed pid is read from its snapshot (below), once.
    if (!scanner.IsDeparted(*pid)) pids.push_back(*pid);
  }
  for (const ProcSnapshot& s : options.departed) {
    if (s.pid > 0 && s.pid != self) pids.push_back(s.pid);
  }
  std::vector<std::unique_ptr<Proc>> procs;
  size_t seen = 0;
  for (int pid : pids) {
    if (++seen > kMaxPids) break;
    if (auto p = scanner.ReadProc(pid, boot_ms)) {
      p->on_gpu = std::binary_search(options.gpu_pids.begin(), options.gpu_pids.end(), pid);
      procs.push_back(std::move(p));
    }
  }
  scanner.EndPass();
  Grouper grouper(&procs, &scanner, ReadBootId(env, options.proc_root),
                  options.users != nullptr ? options.users : UserNames::Default());
  return grouper.Run();
}

}  // namespace vigil::discover

namespace vigil::discover {

bool NeverAJobProgram(std::string_view raw_cmdline) {
  // The tools a build or a shell script execs by the thousand: none holds
  // evidence of a job at exec (a pass would find one only by NVML, which a
  // process that short never reaches).
  static constexpr std::array<std::string_view, 44> kShortLivedTools = {
      "true", "false", "ls",      "grep",  "egrep", "sed",      "awk",      "gawk",    "mawk",
      "cut",  "sort",  "uniq",    "wc",    "head",  "tr",       "xargs",    "find",    "git",
      "make", "cc1",   "cc1plus", "as",    "ld",    "collect2", "gcc",      "g++",     "c++",
      "cc",   "clang", "clang++", "ninja", "cmake", "ccache",   "ps",       "id",      "uname",
      "date", "mkdir", "rm",      "cp",    "mv",    "dirname",  "basename", "readlink"};
  std::vector<std::string> argv = SplitCmdline(raw_cmdline.substr(0, 4096));
  if (argv.empty()) return true;  // a kernel thread
  std::string_view base = Basename(argv[0]);
  // Shells, daemons and tools: never a member, launcher or rank (their maps
  // are not even read by a pass).
  return SkipMaps(base) || OneOf(base, kShortLivedTools);
}

bool HasJobEvidence(const ProcSnapshot& snapshot) {
  std::vector<ProcSnapshot> one = {snapshot};
  Scanner scanner(Env::Default(), "", one, /*cache=*/nullptr);
  std::unique_ptr<Proc> p = scanner.ReadProc(snapshot.pid, 0);
  if (!p) return false;
  if (!p->launcher.name.empty() || p->framework != Framework::kUnknown || !p->trainer.empty()) {
    return !p->never_root;
  }
  scanner.ReadEnviron(p.get());
  return p->gpu_runtime || p->env.has_rank() || p->env.lightning || p->maps_unreadable;
}

}  // namespace vigil::discover
