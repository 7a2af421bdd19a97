#include "cli/config_edit.h"

#include "core/strings.h"

namespace vigil::cli::config_edit {

std::string Dump(const Json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

const Json& Member(const Json& j, std::string_view key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

bool IsString(const Json& j, std::string_view value) {
  return j.is_string() && j.get_ref<const std::string&>() == value;
}

std::string NameOf(const Json& object) {
  const Json& name = Member(object, "name");
  return name.is_string() ? name.get<std::string>() : std::string();
}

bool Holds(const Json& list, std::string_view value) {
  if (!list.is_array()) return false;
  for (const Json& v : list) {
    if (IsString(v, value)) return true;
  }
  return false;
}

Result<Json> ParseRoot(std::string_view text) {
  if (TrimSpace(text).empty()) return Json::object();
  auto now = ParseConfig(std::string(text));
  if (!now.ok()) {
    return FailedPrecondition(now.status().message() +
                              " (so the file is left as it is: fix it first)");
  }
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (j.is_discarded() || !j.is_object())
    return FailedPrecondition("config.json is not a JSON object");
  return j;
}

Json& NotifyList(Json& root, const char* key) {
  Json& notify = root["notify"];
  if (!notify.is_object()) notify = Json::object();
  Json& list = notify[key];
  if (!list.is_array()) list = Json::array();
  return list;
}

size_t IndexOf(const Json& list, std::string_view name) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (IsString(Member(list[i], "name"), name)) return i;
  }
  return kNone;
}

Status RefuseWhileRouted(const Json& root, const char* key, std::string_view name,
                         const char* what) {
  const Json& routes = Member(Member(root, "notify"), "routes");
  for (size_t i = 0; routes.is_array() && i < routes.size(); ++i) {
    if (!Holds(Member(routes[i], key), name)) continue;
    return FailedPrecondition("notify.routes[" + std::to_string(i) + "] sends alerts to \"" +
                              std::string(name) + "\": change or remove that route first, then " +
                              "delete the " + what);
  }
  return Status::Ok();
}

Result<Json> ParseBody(std::string_view body, const char* what) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument(std::string("the body must be ") + what);
  }
  return j;
}

Result<Json> NamedBody(std::string_view body, const std::string& name, const std::string& what,
                       const char* rename) {
  const std::string shape =
      "one " + what + ": a JSON object as in config.json's notify." + what + "s";
  VIGIL_ASSIGN_OR_RETURN(Json given, ParseBody(body, shape.c_str()));
  if (given.contains("name") && !IsString(Member(given, "name"), name)) {
    return InvalidArgument("the body names another " + what + " than the path (\"" + name +
                           "\"): to rename a " + what + ", " + rename);
  }
  Json named = Json::object();
  named["name"] = name;
  for (auto& [key, v] : given.items()) {
    if (key != "name") named[key] = std::move(v);
  }
  return named;
}

void PutAt(Json& list, size_t at, Json object) {
  if (at == kNone) {
    list.push_back(std::move(object));
  } else {
    list[at] = std::move(object);
  }
}

Result<ConfigEdit> Edited(const Json& root) {
  ConfigEdit e;
  e.text = Dump(root, 2) + "\n";
  auto parsed = ParseConfig(e.text);
  if (!parsed.ok()) return parsed.status();
  e.config = std::move(parsed).value();
  return e;
}

}  // namespace vigil::cli::config_edit
