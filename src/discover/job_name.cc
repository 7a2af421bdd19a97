#include "discover/job_name.h"

#include <array>
#include <cctype>
#include <string_view>

#include "core/env.h"
#include "core/strings.h"

namespace vigil::discover {
namespace {

constexpr size_t kMaxJobNameBytes = 128;
// torchrun command lines with hundreds of overrides run to a few KiB; the
// script is near the front, so a bound costs nothing.
constexpr size_t kMaxCmdlineBytes = 64 * 1024;
constexpr size_t kMaxTokens = 4096;

constexpr std::array<std::string_view, 22> kScriptExtensions = {
    ".py", ".pyw", ".sh", ".bash", ".zsh", ".ksh", ".pl",  ".rb",    ".js",  ".mjs",   ".cjs",
    ".ts", ".r",   ".R",  ".jl",   ".lua", ".php", ".jar", ".scala", ".kts", ".ipynb", ".tcl"};

// Compared after stripping a trailing version ("python3.11" -> "python").
constexpr std::array<std::string_view, 24> kInterpreters = {
    "python", "pypy",    "ipython", "bash",  "sh",   "dash",   "zsh",    "ksh",
    "fish",   "csh",     "tcsh",    "perl",  "ruby", "node",   "nodejs", "deno",
    "bun",    "Rscript", "R",       "julia", "lua",  "luajit", "php",    "java"};

// Programs that run another program: their own name says nothing about the job.
// The pipe sinks (tee, cat, ...) are here too: "python train.py | tee log.txt"
// makes tee the writer of log.txt (discover takes the name across the pipe).
constexpr std::array<std::string_view, 52> kLaunchers = {
    "torchrun",   "deepspeed", "accelerate", "mpirun",   "mpiexec", "orterun",   "prterun",
    "horovodrun", "srun",      "salloc",     "timeout",  "time",    "sudo",      "su",
    "runuser",    "nohup",     "env",        "nice",     "ionice",  "stdbuf",    "setsid",
    "taskset",    "numactl",   "chrt",       "xargs",    "tini",    "dumb-init", "catatonit",
    "uv",         "uvx",       "poetry",     "pipenv",   "conda",   "mamba",     "micromamba",
    "pixi",       "nsys",      "ncu",        "strace",   "ltrace",  "gdb",       "valgrind",
    "perf",       "flock",     "unbuffer",   "parallel", "tee",     "cat",       "rotatelogs",
    "cronolog",   "ts",        "s6-log"};

// Programs whose "-m <name>" names a Python module.
constexpr std::array<std::string_view, 6> kModuleRunners = {"python",   "pypy",      "ipython",
                                                            "torchrun", "deepspeed", "accelerate"};

// "-m <module>" values that are launchers themselves.
constexpr std::array<std::string_view, 8> kLauncherModules = {"torch.distributed.run",
                                                              "torch.distributed.launch",
                                                              "accelerate.commands.launch",
                                                              "deepspeed.launcher.runner",
                                                              "deepspeed",
                                                              "runpy",
                                                              "pdb",
                                                              "cProfile"};

std::string_view Basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "python3.11" -> "python", "-bash" (a login shell) -> "bash".
std::string_view ProgramStem(std::string_view base) {
  if (!base.empty() && base.front() == '-') base.remove_prefix(1);
  while (!base.empty() && ((base.back() >= '0' && base.back() <= '9') || base.back() == '.')) {
    base.remove_suffix(1);
  }
  return base;
}

template <size_t N>
bool Contains(const std::array<std::string_view, N>& set, std::string_view s) {
  for (std::string_view x : set) {
    if (x == s) return true;
  }
  return false;
}

bool IsInterpreter(std::string_view base) { return Contains(kInterpreters, ProgramStem(base)); }
bool IsLauncher(std::string_view base) {
  return Contains(kLaunchers, base) || Contains(kLaunchers, ProgramStem(base));
}

// The script name without its extension, or "" when `token` is no script.
std::string_view ScriptStem(std::string_view token) {
  if (token.empty() || token.front() == '-' || token.find('=') != std::string_view::npos) {
    return {};
  }
  std::string_view base = Basename(token);
  for (std::string_view ext : kScriptExtensions) {
    if (base.size() > ext.size() && EndsWith(base, ext)) {
      return base.substr(0, base.size() - ext.size());
    }
  }
  return {};
}

bool IsModuleName(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  }
  return s.back() != '.';
}

// Arguments as a flat list of words: a "sh -c 'python train.py'" argument, or
// a command line rewritten by setproctitle into one string, is split on
// whitespace, with quotes stripped from the ends of each word.
std::vector<std::string_view> Tokens(const std::vector<std::string>& argv) {
  std::vector<std::string_view> out;
  for (const std::string& arg : argv) {
    for (std::string_view w : SplitFields(arg)) {
      while (!w.empty() && (w.front() == '\'' || w.front() == '"' || w.front() == '(')) {
        w.remove_prefix(1);
      }
      while (!w.empty() &&
             (w.back() == '\'' || w.back() == '"' || w.back() == ';' || w.back() == ')')) {
        w.remove_suffix(1);
      }
      if (!w.empty()) out.push_back(w);
      if (out.size() >= kMaxTokens) return out;
    }
  }
  return out;
}

// Printable, bounded: a job name becomes a label value and a UI string.
std::string Clean(std::string_view s) {
  std::string out(CutUtf8(s, kMaxJobNameBytes));
  for (char& c : out) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '_';
  }
  return out;
}

// A name fit to stand for a program: not a setproctitle sentence like
// "nginx: worker process".
bool IsCleanProgramName(std::string_view base) {
  if (base.empty() || base == "." || base == "..") return false;
  for (char c : base) {
    if (c == ' ' || c == '\t' || c == ':') return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> SplitCmdline(std::string_view raw) {
  std::vector<std::string> out;
  while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  if (raw.empty()) return out;
  for (std::string_view part : Split(raw, '\0')) out.emplace_back(part);
  return out;
}

JobName JobNameFromCmdline(const std::vector<std::string>& argv, std::string_view comm) {
  std::vector<std::string_view> tokens = Tokens(argv);
  // "-m" means "module" only to Python and the launchers that run Python;
  // to llama-server it is the model file.
  std::string_view program;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string_view t = tokens[i];
    std::string_view base = Basename(t);
    if (i == 0 && !ScriptStem(t).empty()) return {Clean(ScriptStem(t)), JobNameKind::kScript};
    if (i == 0 || IsInterpreter(base) || IsLauncher(base)) {
      program = ProgramStem(base);
      continue;
    }
    if (!Contains(kModuleRunners, program)) {
      std::string_view stem = ScriptStem(t);
      if (!stem.empty()) return {Clean(stem), JobNameKind::kScript};
      continue;
    }
    std::string_view module;
    if ((t == "-m" || t == "--module") && i + 1 < tokens.size()) {
      module = tokens[++i];
    } else if (StartsWith(t, "--module=")) {
      module = t.substr(9);
    }
    if (!module.empty()) {
      // "--module" is also torchrun's flag for "the script is a module": then
      // the next word is the module.
      if (module.front() == '-' && i + 1 < tokens.size()) continue;
      if (IsModuleName(module) && !Contains(kLauncherModules, module)) {
        return {Clean(module), JobNameKind::kModule};
      }
      continue;
    }
    std::string_view stem = ScriptStem(t);
    if (!stem.empty() && !IsLauncher(stem)) return {Clean(stem), JobNameKind::kScript};
  }

  std::string_view base = argv.empty() ? std::string_view() : Basename(argv[0]);
  if (!base.empty() && base.front() == '-') base.remove_prefix(1);
  bool clean_base = IsCleanProgramName(base);
  if (clean_base && !IsInterpreter(base) && !IsLauncher(base)) {
    return {Clean(base), JobNameKind::kBinary};
  }
  if (clean_base) return {Clean(base), JobNameKind::kFallback};
  std::string_view c = TrimSpace(comm);
  if (!c.empty()) return {Clean(c), JobNameKind::kFallback};
  if (!base.empty()) return {Clean(base), JobNameKind::kFallback};
  return {"unknown", JobNameKind::kFallback};
}

Result<JobName> ProcessJobName(int pid, const std::string& proc_root) {
  std::string dir = JoinPath(proc_root, std::to_string(pid));
  Env* env = Env::Default();
  auto raw = env->ReadFile(JoinPath(dir, "cmdline"), kMaxCmdlineBytes);
  if (!raw.ok()) {
    if (!env->FileExists(dir)) return NotFound("process " + std::to_string(pid) + " is gone");
    return raw.status();
  }
  std::vector<std::string> argv = SplitCmdline(*raw);
  if (argv.empty()) {
    return NotFound("process " + std::to_string(pid) + " is a kernel thread or a zombie");
  }
  auto comm = env->ReadFile(JoinPath(dir, "comm"), 64);
  return JobNameFromCmdline(argv, comm.ok() ? std::string_view(*comm) : std::string_view());
}

}  // namespace vigil::discover
