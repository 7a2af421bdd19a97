// What the notification settings' edits of config.json share
// (notify_settings.cc: channels; notify_routing.cc: recipients and routes):
// the file as an ordered JSON tree, refused when it does not parse as it is
// now, and a changed tree as the new file's text, validated by the parser
// config.json is read with (ParseConfig). Internal to those two files.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cli/notify_settings.h"
#include "core/status.h"

namespace vigil::cli::config_edit {

// Ordered, so the file keeps its keys in the order its author wrote them.
using Json = nlohmann::ordered_json;

inline constexpr size_t kNone = static_cast<size_t>(-1);

std::string Dump(const Json& j, int indent);
// The member `key` of `j`; null when `j` is not an object or has none (the
// const lookup: operator[] would add it).
const Json& Member(const Json& j, std::string_view key);
bool IsString(const Json& j, std::string_view value);
// An object's "name" ("" when it has none).
std::string NameOf(const Json& object);
// Whether `list` is an array holding the string `value`.
bool Holds(const Json& list, std::string_view value);

// config.json as it is now, refused (409) when it does not parse: editing a
// broken file would only add to what is wrong with it.
Result<Json> ParseRoot(std::string_view text);
// notify.<key> ("channels", "recipients", "routes"), made when absent
// (ParseRoot saw that both are of their types when present).
Json& NotifyList(Json& root, const char* key);
// The index of the object named `name` in `list`, or kNone.
size_t IndexOf(const Json& list, std::string_view name);
// FailedPrecondition while a route's `key` list ("channels", "recipients")
// names `name`, the `what` ("channel", "recipient") about to be deleted.
Status RefuseWhileRouted(const Json& root, const char* key, std::string_view name,
                         const char* what);
// A request's body, a JSON object, or InvalidArgument saying it must be `what`.
Result<Json> ParseBody(std::string_view body, const char* what);
// A PUT's body (a JSON object) as the `what` ("channel", "recipient")
// named `name`, its "name" first as people write it; InvalidArgument when
// it is no object or names another (`rename` says how to rename one).
Result<Json> NamedBody(std::string_view body, const std::string& name, const std::string& what,
                       const char* rename);
// `object` in `list` at `at` (replacing the one there), or at the end when
// `at` is kNone.
void PutAt(Json& list, size_t at, Json object);
// `root` as the new file's text, if the parser takes it (else its message).
Result<ConfigEdit> Edited(const Json& root);

}  // namespace vigil::cli::config_edit
