#include "cli/config.h"

#include <nlohmann/json.hpp>

#include "core/env.h"
#include "discover/log_sources.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

constexpr size_t kMaxConfigBytes = 1 << 20;

Status Bad(const std::string& what) { return InvalidArgument("config.json: " + what); }

Result<std::vector<std::string>> Strings(const json& v, const char* key) {
  if (!v.is_array()) return Bad(std::string("logs.") + key + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.is_string()) return Bad(std::string("logs.") + key + " must be a list of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

Result<uint32_t> Count(const json& v, const char* key) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() > 10'000'000) {
    return Bad(std::string("logs.") + key + " must be a whole number from 0 to 10000000");
  }
  return static_cast<uint32_t>(v.get<uint64_t>());
}

Status ParseLogs(const json& j, LogsConfig* out) {
  if (!j.is_object()) return Bad("\"logs\" must be an object");
  for (const auto& [key, v] : j.items()) {
    if (key == "collect") {
      if (!v.is_boolean()) return Bad("logs.collect must be true or false");
      out->collect = v.get<bool>();
    } else if (key == "paths") {
      VIGIL_ASSIGN_OR_RETURN(out->paths, Strings(v, "paths"));
    } else if (key == "exclude") {
      VIGIL_ASSIGN_OR_RETURN(out->exclude, Strings(v, "exclude"));
    } else if (key == "level_floor") {
      if (!v.is_string() || !wire::ParseLogLevelName(v.get<std::string>(), &out->level_floor)) {
        return Bad("logs.level_floor must be one of trace, debug, info, warn, error, fatal");
      }
    } else if (key == "lines_per_second") {
      VIGIL_ASSIGN_OR_RETURN(out->lines_per_second, Count(v, "lines_per_second"));
    } else if (key == "burst") {
      VIGIL_ASSIGN_OR_RETURN(out->burst, Count(v, "burst"));
    } else {
      return Bad("unknown key logs." + key);
    }
  }
  // Bad globs are reported now, not at the first discovery round.
  discover::DiscoveryOptions probe;
  probe.extra_globs = out->paths;
  probe.exclude_globs = out->exclude;
  Status st = discover::ValidateDiscoveryOptions(probe);
  if (!st.ok()) return Bad(st.message());
  return Status::Ok();
}

}  // namespace

Result<Config> ParseConfig(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (j.is_discarded()) return Bad("not valid JSON");
  if (!j.is_object()) return Bad("the top level must be an object");
  Config c;
  for (const auto& [key, v] : j.items()) {
    if (key == "logs") {
      VIGIL_RETURN_IF_ERROR(ParseLogs(v, &c.logs));
    } else if (key == "alerts") {
      VIGIL_RETURN_IF_ERROR(ParseAlertsSection(v, &c.alerts));
    } else if (key == "notify") {
      VIGIL_RETURN_IF_ERROR(ParseNotifySection(v, &c.notify));
    } else {
      return Bad("unknown key " + key);
    }
  }
  // Unknown rule ids and routes to unknown channels are refused now.
  auto rules = alert::EffectiveRules(c.alerts);
  if (!rules.ok()) return Bad(rules.status().message());
  return c;
}

Result<Config> LoadConfig(const std::string& home) {
  Env* env = Env::Default();
  std::string path = JoinPath(home, "config.json");
  if (!env->FileExists(path)) return Config{};
  auto text = env->ReadFile(path, kMaxConfigBytes);
  if (!text.ok()) return text.status().WithContext("reading " + path);
  auto c = ParseConfig(*text);
  if (!c.ok()) return c.status().WithContext(path);
  return c;
}

}  // namespace vigil::cli
