// config.json's `notify.actions` (docs/notify.md "Actions"): a list of
//   {"name": "stop-instance", "on": "job_finished" | "gpus_idle",
//    "idle_for": "2h", "match": {"job": "train-*"},
//    "command": ["/usr/local/bin/stop-instance", "--id", "i-123"],
//    "dry_run": true, "confirm_window": "10m", "timeout": "5m"}
// Every value is checked here, by name; alert::ValidateActions checks what
// concerns the list as a whole.
#include <nlohmann/json.hpp>

#include "cli/config.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

Status Refused(const std::string& at, const std::string& why) {
  return InvalidArgument("config.json: " + at + " " + why);
}

Result<int64_t> DurationOf(const json& v, const std::string& at) {
  std::optional<int64_t> ms;
  if (v.is_string()) ms = alert::ParseDuration(v.get<std::string>());
  if (!ms) return Refused(at, "must be a duration such as \"30s\", \"10m\" or \"2h\"");
  return *ms;
}

Result<std::vector<std::string>> CommandOf(const json& v, const std::string& at) {
  if (!v.is_array() || v.empty() || v.size() > 64) {
    return Refused(at, "must be a list of 1 to 64 strings, the program first (no shell)");
  }
  std::vector<std::string> argv;
  for (const json& a : v) {
    if (!a.is_string() || a.get<std::string>().size() > 4096) {
      return Refused(at, "must be a list of strings (each at most 4096 bytes)");
    }
    argv.push_back(a.get<std::string>());
  }
  return argv;
}

Status MatchOf(const json& v, const std::string& at, std::map<std::string, std::string>* out) {
  if (!v.is_object())
    return Refused(at, "must be an object of label globs, e.g. {\"job\": \"train-*\"}");
  for (const auto& [label, glob] : v.items()) {
    if (!glob.is_string() || glob.get<std::string>().size() > 256) {
      return Refused(at + "." + label, "must be a string ('*' matches any run of characters)");
    }
    (*out)[label] = glob.get<std::string>();
  }
  return Status::Ok();
}

Status ParseAction(const json& j, size_t i, alert::ActionSpec* a) {
  const std::string at = "notify.actions[" + std::to_string(i) + "]";
  if (!j.is_object()) return Refused(at, "must be an object");
  bool has_on = false;
  for (const auto& [key, v] : j.items()) {
    const std::string k = at + "." + key;
    if (key == "name") {
      if (!v.is_string()) return Refused(k, "must be a string");
      a->name = v.get<std::string>();
    } else if (key == "on") {
      const std::string on = v.is_string() ? v.get<std::string>() : "";
      if (on != "job_finished" && on != "gpus_idle") {
        return Refused(k, "must be \"job_finished\" or \"gpus_idle\"");
      }
      a->on =
          on == "gpus_idle" ? alert::ActionTrigger::kGpusIdle : alert::ActionTrigger::kJobFinished;
      has_on = true;
    } else if (key == "idle_for") {
      VIGIL_ASSIGN_OR_RETURN(a->idle_for_ms, DurationOf(v, k));
    } else if (key == "match") {
      VIGIL_RETURN_IF_ERROR(MatchOf(v, k, &a->match));
    } else if (key == "command") {
      VIGIL_ASSIGN_OR_RETURN(a->command, CommandOf(v, k));
    } else if (key == "dry_run") {
      if (!v.is_boolean()) return Refused(k, "must be true or false");
      a->dry_run = v.get<bool>();
    } else if (key == "confirm_window") {
      VIGIL_ASSIGN_OR_RETURN(a->confirm_window_ms, DurationOf(v, k));
    } else if (key == "timeout") {
      VIGIL_ASSIGN_OR_RETURN(a->timeout_ms, DurationOf(v, k));
    } else {
      return InvalidArgument("config.json: unknown key " + k);
    }
  }
  if (!has_on) return Refused(at, "needs \"on\": \"job_finished\" or \"gpus_idle\"");
  if (!j.contains("command")) return Refused(at, "needs \"command\" (a list: program, arguments)");
  return Status::Ok();
}

}  // namespace

Status ParseActions(const json& j, std::vector<alert::ActionSpec>* out) {
  if (!j.is_array()) return Refused("notify.actions", "must be a list");
  out->clear();
  for (size_t i = 0; i < j.size(); ++i) {
    VIGIL_RETURN_IF_ERROR(ParseAction(j[i], i, &out->emplace_back()));
  }
  Status st = alert::ValidateActions(*out);
  if (!st.ok()) return InvalidArgument("config.json: " + st.message());
  return Status::Ok();
}

}  // namespace vigil::cli
