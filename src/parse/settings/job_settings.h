// A job's actual settings — batch size, DataLoader workers, learning rate,
// precision, gradient accumulation, NCCL environment, ... — read passively
// from what the job already shows: its command lines, its environment, the
// config files it opened, and the settings its trainer dumps into its log
// (docs/job-settings.md).
//
// Why: a suggestion that helps names the job's own numbers ("num_workers=2
// from --num-workers 2 on the command line; try 8"), and a suggestion that
// invents one is worse than none. So every value here was seen, with where
// (JobSetting::source and raw_key); a key that was not seen is absent.
//
// Keys are canonical (kCanonicalKeys, the alias table in settings_aliases.cc):
// `--per_device_train_batch_size 8`, `batch=16` (Ultralytics) and
// `micro_batch_size ..... 4` (Megatron's dump) are all `batch_size`, and the
// raw key says which it was.
//
// Everything read here comes from programs Vigil does not control: every
// input is bounded (JobSettingsLimits), nothing throws, and malformed text is
// read as far as it makes sense.
//
// Thread safety: the functions are pure; a JobSettings is a plain value
// (const methods may be called from several threads at once).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/json_writer.h"
#include "core/status.h"

namespace vigil::parse::settings {

struct JobSetting {
  std::string key;    // canonical: "batch_size", "learning_rate", "env.NCCL_DEBUG", ...
  std::string value;  // as written, unquoted and cut to JobSettingsLimits::max_value_bytes;
                      // a precision flag (`--bf16`, `fp16=True`) gives its mode ("bf16")
  std::optional<double> number;  // the value as a number when it is one (true/false: 1/0)
  std::string source;            // "argv", "env", "config:<path>" or "log"
  std::string raw_key;           // as written: "--per_device_train_batch_size", "batch",
                                 // "zero_optimization.stage", "NCCL_DEBUG"
  // For a launcher's own option (torchrun's --nproc_per_node), the launcher:
  // "torchrun", "deepspeed", "accelerate", "tune"; "" for the program's own.
  std::string launcher;
  bool operator==(const JobSetting&) const = default;
};

// Where a value came from, most trusted first (docs/job-settings.md
// "Precedence"): a trainer's own dump of its resolved settings, then the
// command line, then config files, then the environment.
enum class SettingSource { kLog = 0, kArgv = 1, kConfig = 2, kEnv = 3 };
SettingSource SourceOf(const JobSetting& s);

class JobSettings {
 public:
  // The value in effect for a canonical key: the most trusted source's
  // first; nullptr when the key was not seen.
  const JobSetting* Find(std::string_view key) const;
  // Every value seen for the key, the one in effect first (a suggestion may
  // quote "--lr 3e-3 on the command line, lr: 1e-3 in config.yaml").
  std::vector<const JobSetting*> FindAll(std::string_view key) const;
  // Find(key)'s number, when it has one.
  std::optional<double> Number(std::string_view key) const;
  // All settings, by key, then precedence.
  const std::vector<JobSetting>& all() const { return all_; }
  // What could not be read, for a person: "config:ds.json: not valid JSON
  // (parse error at byte 31)", "argv: 5000 arguments, read the first 4096".
  const std::vector<std::string>& notes() const { return notes_; }
  bool empty() const { return all_.empty(); }

  // For the parsers: append a setting (identical ones are kept once; past
  // max_settings nothing is added and a note says so) or a note, then
  // Finish() once to order them.
  void Add(JobSetting s, size_t max_settings);
  void AddNote(std::string note);
  void Finish();
  // The settings of `other` after this one's, as if added here.
  void Merge(const JobSettings& other, size_t max_settings);

 private:
  std::vector<JobSetting> all_;
  std::vector<std::string> notes_;
  // Every setting of all_, as one string, so that Add drops a repeat (the
  // same argv from 8 ranks) in constant time.
  std::unordered_set<std::string> seen_;
  bool full_ = false;
};

// Bounds on untrusted input. Past a bound, the rest is skipped and a note
// says so; nothing fails.
struct JobSettingsLimits {
  size_t max_processes = 64;          // argv vectors read
  size_t max_args = 4096;             // arguments read per process
  size_t max_value_bytes = 512;       // a longer value is cut (UTF-8 safe)
  size_t max_config_bytes = 1 << 20;  // a longer config file is not read
  size_t max_configs = 16;            // config files read
  size_t max_config_depth = 16;       // nesting read in YAML/JSON/TOML
  size_t max_env_bytes = 256 << 10;   // environ text read
  size_t max_log_lines = 20000;       // log lines read
  size_t max_line_bytes = 64 << 10;   // a longer log line is cut
  size_t max_settings = 4096;         // settings kept in all
};

struct ConfigFile {
  std::string path;     // as the job names it; becomes "config:<path>"
  std::string content;  // the file's bytes
};

struct JobSettingsInput {
  // One vector per process (launcher and ranks): argv[0] first.
  std::vector<std::vector<std::string>> argv;
  // The environment as pairs, and/or as environ text: /proc/<pid>/environ
  // (NUL-separated) or `env` output (newline-separated).
  std::vector<std::pair<std::string, std::string>> env;
  std::string environ_text;
  std::vector<ConfigFile> configs;
  std::vector<std::string> log_lines;  // physical lines, without '\n'
};

// Every setting the input shows, canonical keys only, ordered by key and
// precedence. Never fails: what cannot be read is left out, with a note.
JobSettings ParseJobSettings(const JobSettingsInput& input, const JobSettingsLimits& limits = {});

// The parts of ParseJobSettings, for callers that hold one kind of input.
JobSettings SettingsFromArgv(const std::vector<std::string>& argv,
                             const JobSettingsLimits& limits = {});
JobSettings SettingsFromEnv(const std::vector<std::pair<std::string, std::string>>& env,
                            std::string_view environ_text, const JobSettingsLimits& limits = {});
JobSettings SettingsFromLogLines(const std::vector<std::string>& lines,
                                 const JobSettingsLimits& limits = {});
// One config file: YAML, JSON, TOML or a Python file of `name = value` lines
// (nanoGPT's configurator), by extension, else by content. Fails when the
// file is over max_config_bytes or not valid in its format (JSON only: the
// YAML and TOML readers read what they can).
Result<JobSettings> SettingsFromConfig(const ConfigFile& file,
                                       const JobSettingsLimits& limits = {});

// Which arguments of a command line name a config file — `--config x.yaml`,
// `--deepspeed ds_config.json`, `-c cfg.yml`, Hydra's `--config-path` with
// `--config-name`, a positional `*.yaml` — so a caller can find its content
// among the process's open files. Paths as written (maybe relative to the
// process's cwd), in order, each once.
struct ConfigReference {
  std::string path;
  std::string raw_key;  // "--deepspeed", "" for a positional
};
std::vector<ConfigReference> ConfigReferencesFromArgv(const std::vector<std::string>& argv,
                                                      const JobSettingsLimits& limits = {});

// How a suggestion quotes where the current value came from:
// "`--num-workers 2` on the command line", "torchrun's `--nproc_per_node 8`",
// "`--bf16` on the command line", "`workers=8` in /x/default.yaml",
// "`NCCL_DEBUG=INFO` in the environment", "`per_device_train_batch_size=8`
// in the job's log".
std::string SettingProvenance(const JobSetting& s);

// The settings as JSON, for the API and diagnosis:
// {"settings": {"batch_size": [{"value": "8", "number": 8, "source": "argv",
// "raw_key": "--per_device_train_batch_size"}, ...], ...}, "notes": [...]}:
// each key's values, the one in effect first; "number" and "launcher" only
// when there is one.
void WriteJobSettingsJson(const JobSettings& s, JsonWriter* w);

// The canonical keys the alias table maps to (docs/job-settings.md), and
// the environment variables kept (besides every NCCL_* and TORCH_NCCL_*).
extern const std::vector<std::string_view> kCanonicalKeys;
extern const std::vector<std::string_view> kEnvKeys;

}  // namespace vigil::parse::settings
