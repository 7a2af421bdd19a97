// Settings from a command line: `--key value`, `--key=value` (fire,
// nanoGPT's configurator), bare flags (`--fp16`), short options (`-b 64`,
// `-j 8`), Hydra/OmegaConf overrides (`a.b=c`, `+a=b`, `++a=b`) and the
// key=value arguments of Ultralytics and torchtune, LightningCLI's dotted
// options (`--trainer.precision bf16-mixed`). A launcher's own options
// (torchrun, `python -m torch.distributed.launch`, deepspeed, accelerate
// launch, tune run) are read apart from the program's: torchrun's
// --nproc_per_node is the launcher's, and its --master_port is no setting.
// ConfigReferencesFromArgv finds, by the same layout, the config files a
// command line names.
#include <algorithm>
#include <optional>

#include "core/strings.h"
#include "parse/settings/settings_internal.h"

namespace vigil::parse::settings {
namespace {

using internal::AliasKind;
using internal::Dialect;

bool IsDigitChar(char c) { return c >= '0' && c <= '9'; }
bool IsAlphaChar(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool IsPython(std::string_view arg0) { return StartsWith(Basename(arg0), "python"); }

bool OneOf(std::string_view s, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// "-1", "-0.5", "-1e-3": a value, not an option.
bool NegativeNumber(std::string_view s) {
  return s.size() >= 2 && s[0] == '-' && (IsDigitChar(s[1]) || s[1] == '.');
}

bool IsOption(std::string_view s) { return s.size() >= 2 && s[0] == '-' && !NegativeNumber(s); }

// `key=value` where key is a name (Hydra's a.b.c, +a, ++a; Ultralytics'
// batch): not a path or a URL that happens to hold '='.
bool OverrideKey(std::string_view key) {
  while (!key.empty() && key.front() == '+') key.remove_prefix(1);
  if (key.empty() || !(IsAlphaChar(key[0]) || key[0] == '_')) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return IsAlphaChar(c) || IsDigitChar(c) || c == '_' || c == '.' || c == '-';
  });
}

// Where the parts of a command line begin: the launcher's options
// [launcher_begin, launcher_end), then the program's [program_begin, end).
struct Layout {
  std::string_view launcher;  // "" when none
  size_t launcher_begin = 0, launcher_end = 0;
  size_t program_begin = 0;
};

// Launcher options that take no value; any other option takes one. A
// flag missing here makes the script look like its value, so the program
// would start one word late.
constexpr std::string_view kLauncherFlags[] = {
    // torchrun, torch.distributed.launch
    "--standalone", "--use_env", "--use-env", "--no_python", "--no-python", "--run_path",
    "--run-path", "--module", "-m", "--virtual-local-rank",
    // accelerate launch
    "--multi_gpu", "--cpu", "--tpu", "--use_deepspeed", "--use_fsdp", "--use_megatron_lm",
    "--same_network", "--downcast_bf16", "--quiet", "-q", "--debug",
    // deepspeed
    "--no_local_rank", "--no_ssh_check", "--force_multi", "--elastic_training",
    "--bind_cores_to_rank"};

bool LauncherFlag(std::string_view opt) {
  return std::find(std::begin(kLauncherFlags), std::end(kLauncherFlags), opt) !=
         std::end(kLauncherFlags);
}

// Reads a launcher's options from `i` to its program; returns the index of
// the program (the script, the module after -m, tune's recipe).
size_t SkipLauncherOptions(const std::vector<std::string>& a, size_t i, size_t n) {
  while (i < n) {
    std::string_view t = a[i];
    if (t == "--") return i + 1;
    if (!IsOption(t)) return i;
    if (t == "-m" || t == "--module") return i + 1;  // the module is the program
    if (t.find('=') != std::string_view::npos || LauncherFlag(t)) {
      ++i;
    } else {
      i += 2;
    }
  }
  return n;
}

Layout Locate(const std::vector<std::string>& a, size_t n, size_t start, int depth) {
  Layout l;
  l.program_begin = n;
  if (start >= n || depth > 4) return l;
  std::string_view base = Basename(a[start]);
  auto launcher = [&](std::string_view name, size_t first) {
    l.launcher = name;
    l.launcher_begin = first;
    l.launcher_end = SkipLauncherOptions(a, first, n);
    // The program: a script (its arguments follow) or a module name.
    l.program_begin = std::min(n, l.launcher_end + 1);
    if (l.launcher_end < n && IsPython(a[l.launcher_end])) {
      Layout inner = Locate(a, n, l.launcher_end, depth + 1);
      l.program_begin = inner.program_begin;
    }
    return l;
  };
  if (IsPython(base)) {
    size_t i = start + 1;
    while (i < n && IsOption(a[i])) {
      std::string_view t = a[i];
      if (t == "-c") return l;  // inline code: no arguments of ours
      if (t == "-m" && i + 1 < n) {
        std::string_view module = a[i + 1];
        if (module == "torch.distributed.run" || module == "torch.distributed.launch") {
          return launcher("torchrun", i + 2);
        }
        if (module == "deepspeed.launcher.runner") return launcher("deepspeed", i + 2);
        if (module == "accelerate.commands.launch") return launcher("accelerate", i + 2);
        l.program_begin = i + 2;
        return l;
      }
      i += (t == "-X" || t == "-W") ? 2 : 1;
    }
    // A console script run by its interpreter, as /proc shows one:
    // "/usr/bin/python3 /usr/local/bin/torchrun --nproc_per_node=8 ...".
    if (i < n && OneOf(Basename(a[i]), {"torchrun", "deepspeed", "accelerate", "tune"})) {
      return Locate(a, n, i, depth + 1);
    }
    l.program_begin = std::min(n, i + 1);
    return l;
  }
  if (base == "torchrun") return launcher("torchrun", start + 1);
  if (base == "deepspeed") return launcher("deepspeed", start + 1);
  if (base == "accelerate" && start + 1 < n && a[start + 1] == "launch") {
    return launcher("accelerate", start + 2);
  }
  if (base == "tune" && start + 1 < n && a[start + 1] == "run") return launcher("tune", start + 2);
  // Wrappers whose options we do not read: the job starts at the first
  // word that is a Python or a launcher.
  if (OneOf(base, {"srun", "mpirun", "mpiexec", "env", "nohup", "numactl", "taskset", "nice"})) {
    for (size_t i = start + 1; i < n; ++i) {
      std::string_view b = Basename(a[i]);
      if (IsPython(b) || OneOf(b, {"torchrun", "deepspeed", "accelerate", "tune"})) {
        return Locate(a, n, i, depth + 1);
      }
    }
    return l;
  }
  l.program_begin = start + 1;  // yolo, fairseq-train, an executable train.py
  return l;
}

// Whether the option's value is the next argument: not another option nor
// an override, and for a bare flag of the boolean kinds only a boolean
// (`--bf16 True`), so `--fp16 data-bin` leaves the positional alone.
bool TakesNext(std::string_view opt, std::string_view next, Dialect dialect) {
  if (IsOption(next)) return false;
  // `--multirun trainer.devices=8`: an override is its own argument.
  if (size_t eq = next.find('=');
      eq != std::string_view::npos && eq > 0 && OverrideKey(next.substr(0, eq))) {
    return false;
  }
  const internal::Alias* alias = internal::LookupAlias(internal::NormaliseKey(opt), dialect);
  if (alias != nullptr && alias->kind != AliasKind::kValue) {
    return internal::ParseBool(next).has_value();
  }
  return true;
}

void ReadOptions(const std::vector<std::string>& a, size_t begin, size_t end, Dialect dialect,
                 std::string_view launcher, const JobSettingsLimits& limits, JobSettings* out) {
  for (size_t i = begin; i < end; ++i) {
    std::string_view t = a[i];
    if (IsOption(t)) {
      size_t eq = t.find('=');
      if (eq != std::string_view::npos) {
        internal::AddSetting(t.substr(0, eq), t.substr(eq + 1), true, "argv", dialect, limits, out,
                             launcher);
        continue;
      }
      // -j8: a short option with its value attached.
      if (t.size() > 2 && t[1] != '-' && IsDigitChar(t[2])) {
        internal::AddSetting(t.substr(0, 2), t.substr(2), true, "argv", dialect, limits, out,
                             launcher);
        continue;
      }
      if (i + 1 < end && TakesNext(t, a[i + 1], dialect)) {
        internal::AddSetting(t, a[i + 1], true, "argv", dialect, limits, out, launcher);
        ++i;
      } else {
        internal::AddSetting(t, "", false, "argv", dialect, limits, out, launcher);
      }
      continue;
    }
    size_t eq = t.find('=');
    if (dialect != Dialect::kLauncher && eq != std::string_view::npos && eq > 0 &&
        OverrideKey(t.substr(0, eq))) {
      internal::AddSetting(t.substr(0, eq), t.substr(eq + 1), true, "argv", dialect, limits, out);
    }
  }
}

size_t CappedSize(const std::vector<std::string>& argv, const JobSettingsLimits& limits,
                  JobSettings* notes) {
  size_t n = std::min(argv.size(), limits.max_args);
  if (n < argv.size() && notes != nullptr) {
    notes->AddNote("argv: " + std::to_string(argv.size()) + " arguments, read the first " +
                   std::to_string(n));
  }
  return n;
}

constexpr size_t kMaxConfigReferences = 64;

bool ConfigExtension(std::string_view p) {
  for (std::string_view e : {".yaml", ".yml", ".json", ".toml"}) {
    if (EndsWith(p, e)) return true;
  }
  return false;
}

}  // namespace

JobSettings SettingsFromArgv(const std::vector<std::string>& argv,
                             const JobSettingsLimits& limits) {
  JobSettings out;
  size_t n = CappedSize(argv, limits, &out);
  Layout l = Locate(argv, n, 0, 0);
  if (!l.launcher.empty()) {
    ReadOptions(argv, l.launcher_begin, l.launcher_end, Dialect::kLauncher, l.launcher, limits,
                &out);
  }
  ReadOptions(argv, l.program_begin, n, Dialect::kGeneric, "", limits, &out);
  out.Finish();
  return out;
}

std::vector<ConfigReference> ConfigReferencesFromArgv(const std::vector<std::string>& argv,
                                                      const JobSettingsLimits& limits) {
  std::vector<ConfigReference> out;
  auto add = [&](std::string_view path, std::string_view key) {
    if (path.empty() || path.size() > 4096 || out.size() >= kMaxConfigReferences) return;
    for (const ConfigReference& r : out) {
      if (r.path == path) return;
    }
    out.push_back({std::string(path), std::string(key)});
  };
  size_t n = std::min(argv.size(), limits.max_args);
  Layout l = Locate(argv, n, 0, 0);
  std::string hydra_path, hydra_name;
  for (size_t i = 1; i < n; ++i) {
    // The launcher's options and the program's: not Python's own (-c code).
    bool launcher = i >= l.launcher_begin && i < l.launcher_end;
    if (!launcher && i < l.program_begin) continue;
    std::string_view t = argv[i];
    std::string_view key = t, value;
    bool has_value = false, consumed = false;
    if (size_t eq = t.find('='); eq != std::string_view::npos) {
      key = t.substr(0, eq);
      value = t.substr(eq + 1);
      has_value = true;
    } else if (IsOption(t) && i + 1 < n && !IsOption(argv[i + 1])) {
      value = argv[i + 1];
      has_value = true;
      consumed = true;
    }
    std::string k = internal::NormaliseKey(key);
    bool option = IsOption(key);
    if (has_value && (option || OverrideKey(key))) {
      if (OneOf(k, {"config", "config_file", "configs", "cfg", "hyp", "hparams", "hparams_file",
                    "deepspeed_config", "ds_config"}) ||
          (k == "c" && option)) {
        add(value, key);
      } else if (k == "deepspeed" && EndsWith(value, ".json")) {
        add(value, key);
      } else if (k == "config_path" || (k == "cp" && option)) {
        hydra_path = std::string(value);
      } else if (k == "config_name" || (k == "cn" && option)) {
        hydra_name = std::string(value);
      }
      if (consumed) ++i;  // --data_path x.json: the value is the option's
      continue;
    }
    // A positional config after the program: axolotl's config.yml,
    // nanoGPT's config/train_gpt2.py, MMEngine's configs/x.py.
    if (!option && i >= l.program_begin && t.find('=') == std::string_view::npos &&
        (ConfigExtension(t) || EndsWith(t, ".py"))) {
      add(t, "");
    }
  }
  if (!hydra_name.empty()) {
    std::string p = hydra_path.empty() ? hydra_name : hydra_path + "/" + hydra_name;
    if (!ConfigExtension(p)) p += ".yaml";
    add(p, "--config-name");
  }
  return out;
}

}  // namespace vigil::parse::settings
