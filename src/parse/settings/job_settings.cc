// ParseJobSettings: each kind of input through its reader, merged into one
// JobSettings ordered by key and precedence (job_settings.h); and the
// environment reader, which keeps only the variables a suggestion may name.
#include "parse/settings/job_settings.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/strings.h"
#include "parse/settings/settings_internal.h"

namespace vigil::parse::settings {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

enum class Format { kJson, kYaml, kToml, kPython };

Format FormatOf(const ConfigFile& f) {
  std::string p = Lower(f.path);
  if (EndsWith(p, ".json")) return Format::kJson;
  if (EndsWith(p, ".yaml") || EndsWith(p, ".yml")) return Format::kYaml;
  if (EndsWith(p, ".toml")) return Format::kToml;
  if (EndsWith(p, ".py")) return Format::kPython;
  std::string_view c = TrimSpace(f.content);
  if (!c.empty() && c[0] == '{') return Format::kJson;
  // TOML opens tables with [name]; YAML has no such line.
  for (std::string_view line : Split(c.substr(0, 64 << 10), '\n')) {
    line = TrimSpace(line);
    if (line.size() > 2 && line[0] == '[' && line.back() == ']') return Format::kToml;
  }
  return Format::kYaml;
}

}  // namespace

JobSettings SettingsFromEnv(const std::vector<std::pair<std::string, std::string>>& env,
                            std::string_view environ_text, const JobSettingsLimits& limits) {
  JobSettings out;
  auto add = [&](std::string_view name, std::string_view value) {
    bool keep = StartsWith(name, "NCCL_") || StartsWith(name, "TORCH_NCCL_") ||
                std::find(kEnvKeys.begin(), kEnvKeys.end(), name) != kEnvKeys.end();
    if (!keep || name.size() > 128) return;
    JobSetting s;
    s.key = "env." + std::string(name);
    s.value = std::string(CutUtf8(value, limits.max_value_bytes));
    if (std::optional<double> d = ParseDouble(s.value); d && std::isfinite(*d)) s.number = d;
    s.source = "env";
    s.raw_key = std::string(name);
    out.Add(std::move(s), limits.max_settings);
  };
  for (const auto& [k, v] : env) add(k, v);
  if (environ_text.size() > limits.max_env_bytes) {
    out.AddNote("env: " + std::to_string(environ_text.size()) + " bytes, read the first " +
                std::to_string(limits.max_env_bytes));
    environ_text = environ_text.substr(0, limits.max_env_bytes);
  }
  char sep = environ_text.find('\0') != std::string_view::npos ? '\0' : '\n';
  for (std::string_view entry : Split(environ_text, sep)) {
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    add(entry.substr(0, eq), entry.substr(eq + 1));
  }
  out.Finish();
  return out;
}

Result<JobSettings> SettingsFromConfig(const ConfigFile& file, const JobSettingsLimits& limits) {
  std::string source = "config:" + std::string(CutUtf8(file.path, 1024));
  if (file.content.size() > limits.max_config_bytes) {
    return ResourceExhausted(source + ": " + HumanBytes(file.content.size()) +
                             ", over the limit of " + HumanBytes(limits.max_config_bytes));
  }
  JobSettings out;
  switch (FormatOf(file)) {
    case Format::kJson:
      VIGIL_RETURN_IF_ERROR(internal::ReadJson(file.content, source, limits, &out));
      break;
    case Format::kYaml:
      internal::ReadYaml(file.content, source, limits, &out);
      break;
    case Format::kToml:
      internal::ReadKeyValueFile(file.content, source, false, limits, &out);
      break;
    case Format::kPython:
      internal::ReadKeyValueFile(file.content, source, true, limits, &out);
      break;
  }
  out.Finish();
  return out;
}

std::string SettingProvenance(const JobSetting& s) {
  std::string text;
  if (s.source == "argv" && StartsWith(s.raw_key, "-")) {
    // A precision flag's value is its mode: `--bf16`, not `--bf16 bf16`.
    bool flag = s.key == "precision" && internal::NormaliseKey(s.raw_key) == s.value;
    text = "`" + s.raw_key + (flag ? "" : " " + s.value) + "`";
  } else {
    text = "`" + s.raw_key + "=" + s.value + "`";
  }
  if (!s.launcher.empty()) return s.launcher + "'s " + text;
  if (s.source == "argv") return text + " on the command line";
  if (s.source == "env") return text + " in the environment";
  if (s.source == "log") return text + " in the job's log";
  return text + " in " + s.source.substr(s.source.find(':') + 1);
}

void WriteJobSettingsJson(const JobSettings& s, JsonWriter* w) {
  w->BeginObject().Key("settings").BeginObject();
  const std::string* open_key = nullptr;
  for (const JobSetting& j : s.all()) {  // by key, then precedence
    if (open_key == nullptr || *open_key != j.key) {
      if (open_key != nullptr) w->EndArray();
      w->Key(j.key).BeginArray();
      open_key = &j.key;
    }
    w->BeginObject().Key("value").String(j.value);
    if (j.number.has_value()) w->Key("number").Double(*j.number);
    w->Key("source").String(j.source).Key("raw_key").String(j.raw_key);
    if (!j.launcher.empty()) w->Key("launcher").String(j.launcher);
    w->EndObject();
  }
  if (open_key != nullptr) w->EndArray();
  w->EndObject();
  if (!s.notes().empty()) {
    w->Key("notes").BeginArray();
    for (const std::string& n : s.notes()) w->String(n);
    w->EndArray();
  }
  w->EndObject();
}

JobSettings ParseJobSettings(const JobSettingsInput& input, const JobSettingsLimits& limits) {
  JobSettings out;
  size_t procs = std::min(input.argv.size(), limits.max_processes);
  if (procs < input.argv.size()) {
    out.AddNote("argv: " + std::to_string(input.argv.size()) + " processes, read the first " +
                std::to_string(procs));
  }
  for (size_t i = 0; i < procs; ++i) {
    out.Merge(SettingsFromArgv(input.argv[i], limits), limits.max_settings);
  }
  size_t configs = std::min(input.configs.size(), limits.max_configs);
  if (configs < input.configs.size()) {
    out.AddNote("config: " + std::to_string(input.configs.size()) + " files, read the first " +
                std::to_string(configs));
  }
  for (size_t i = 0; i < configs; ++i) {
    Result<JobSettings> r = SettingsFromConfig(input.configs[i], limits);
    if (r.ok()) {
      out.Merge(*r, limits.max_settings);
    } else {
      out.AddNote(r.status().message());
    }
  }
  out.Merge(SettingsFromEnv(input.env, input.environ_text, limits), limits.max_settings);
  out.Merge(SettingsFromLogLines(input.log_lines, limits), limits.max_settings);
  out.Finish();
  return out;
}

}  // namespace vigil::parse::settings
