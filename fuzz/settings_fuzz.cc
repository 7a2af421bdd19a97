// Fuzz target: a job's settings (src/parse/settings/job_settings.h). Command
// lines, environments, config files and log lines are all written by
// programs Vigil does not control. The same bytes go through every reader,
// with small bounds so the bounds are hit all the time; every bound must
// hold and every value must stay within max_value_bytes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "parse/settings/job_settings.h"

namespace settings = vigil::parse::settings;

namespace {

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void Check(const settings::JobSettings& s, const settings::JobSettingsLimits& l) {
  if (s.all().size() > l.max_settings) std::abort();
  for (const settings::JobSetting& j : s.all()) {
    // A raw key is cut like a value, but for fixed phrases and env names (128).
    if (j.value.size() > l.max_value_bytes || j.raw_key.size() > 128) std::abort();
    if (j.key.empty() || j.source.empty()) std::abort();
    (void)s.Find(j.key);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  settings::JobSettingsLimits l;
  l.max_args = 64;
  l.max_value_bytes = 32;
  l.max_config_bytes = 8 << 10;
  l.max_config_depth = 6;
  l.max_log_lines = 64;
  l.max_line_bytes = 256;
  l.max_settings = 48;
  l.max_env_bytes = 1024;

  // Words split on spaces and newlines make the command lines: the whole
  // input, and each line as its own process.
  std::vector<std::string> words;
  for (const std::string& line : Split(in, '\n')) {
    for (std::string& w : Split(line, ' ')) words.push_back(std::move(w));
  }
  settings::JobSettingsInput input;
  input.argv.push_back(words);
  input.argv.push_back({"torchrun"});
  input.argv.back().insert(input.argv.back().end(), words.begin(), words.end());
  input.environ_text = std::string(in);
  for (const char* path : {"c.yaml", "c.json", "c.toml", "c.py", "c"}) {
    input.configs.push_back({path, std::string(in)});
  }
  input.log_lines = Split(in, '\n');
  Check(settings::ParseJobSettings(input, l), l);
  (void)settings::ConfigReferencesFromArgv(words, l);
  return 0;
}
