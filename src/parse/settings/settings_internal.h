// Pieces shared by the readers of job_settings.h: the alias table and how a
// raw key and value become a JobSetting. Not a public header.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "parse/settings/job_settings.h"

namespace vigil::parse::settings::internal {

// How a key's value is read.
enum class AliasKind {
  kValue,          // the value as written
  kPrecisionFlag,  // a boolean flag naming a mode (--fp16, bf16=True): the mode when true
  kBool,           // a boolean setting (--gradient_checkpointing): number 1/0
};

struct Alias {
  std::string_view canonical;
  AliasKind kind = AliasKind::kValue;
  std::string_view mode;  // kPrecisionFlag: the value it gives ("fp16")
};

// Where a key was read, which changes what some names mean.
enum class Dialect {
  kGeneric,
  kDeepSpeed,  // a DeepSpeed config or engine dump: train_batch_size is the global batch
  kLauncher,   // a launcher's own options: only the launcher table applies
};

// The alias for a normalised key ("per_device_train_batch_size",
// "trainer.precision", "zero_optimization.stage"), nullptr when the key is
// not one of ours. A dotted key is looked up whole, then by its last part,
// unless a part names evaluation ("val_dataloader.batch_size").
const Alias* LookupAlias(std::string_view normalised, Dialect dialect);

// "--Per-Device_Batch" -> "per_device_batch"; "+trainer.devices" ->
// "trainer.devices". Leading dashes and Hydra's '+'/'++'/'~' go, '-'
// becomes '_', ASCII letters are lowered.
std::string NormaliseKey(std::string_view raw);

// "None", "null", "~", "" and the like: a value that says "not set".
bool IsUnset(std::string_view value);
// true/false in the spellings programs print (True, false, 1, 0, yes, no).
std::optional<bool> ParseBool(std::string_view value);
// Strips one level of matching quotes and surrounding spaces.
std::string_view Unquote(std::string_view value);

// Adds the setting `raw_key` = `value` to *out when the key has an alias;
// returns whether it did. `value_given` is false for a bare flag.
bool AddSetting(std::string_view raw_key, std::string_view value, bool value_given,
                std::string_view source, Dialect dialect, const JobSettingsLimits& limits,
                JobSettings* out, std::string_view launcher = {});

// Python keyword arguments as a repr or a config writes them ("a=1, b='x,
// y', c=dict(d=2)"), up to the ')' that closes them: each scalar is the
// setting `prefix + key`; a dict(...) value is read nested, to
// max_config_depth (MMEngine's optim_wrapper=dict(optimizer=dict(lr=0.1)));
// lists, tuples and other calls are skipped.
void ReadKwargs(std::string_view s, const std::string& prefix, std::string_view source,
                Dialect dialect, size_t depth, const JobSettingsLimits& limits, JobSettings* out);

// The readers behind SettingsFromConfig, one per format.
Status ReadJson(std::string_view text, std::string_view source, const JobSettingsLimits& limits,
                JobSettings* out);
void ReadYaml(std::string_view text, std::string_view source, const JobSettingsLimits& limits,
              JobSettings* out);
// TOML's `[table]` and `key = value`; with python_style, `name = value`
// lines of a Python config file (no tables).
void ReadKeyValueFile(std::string_view text, std::string_view source, bool python_style,
                      const JobSettingsLimits& limits, JobSettings* out);

}  // namespace vigil::parse::settings::internal
