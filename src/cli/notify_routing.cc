// The recipients and routes of config.json as the UI edits them
// (notify_settings.h): recipients one at a time by name, routes as the
// whole list in the order given (every route that matches adds its
// channels; the order is the one people read and reorder them in, so the
// file keeps it), both validated by the parser as the channels are.
#include "cli/config_edit.h"
#include "cli/notify_settings.h"

namespace vigil::cli {
namespace {

using config_edit::Edited;
using config_edit::IndexOf;
using config_edit::IsString;
using config_edit::Json;
using config_edit::kNone;
using config_edit::Member;
using config_edit::NameOf;
using config_edit::ParseBody;
using config_edit::ParseRoot;

// {"path": `path`, `key`: notify.<key> as in the file}.
Result<std::string> ListView(std::string_view config_text, const std::string& path,
                             const char* key) {
  VIGIL_ASSIGN_OR_RETURN(Json root, ParseRoot(config_text));
  Json data = Json::object();
  data["path"] = path;
  const Json& list = Member(Member(root, "notify"), key);
  data[key] = list.is_array() ? list : Json::array();
  return config_edit::Dump(data, -1);
}

// FailedPrecondition while another recipient needs `name`: a team whose
// lead it is, or a person in it (the team). The parser would refuse the
// file after the delete too, but by the other recipient's name.
Status RefuseWhileNeeded(const Json& recipients, const std::string& name) {
  for (const Json& r : recipients) {
    const std::string other = NameOf(r);
    if (IsString(Member(r, "lead"), name)) {
      return FailedPrecondition("notify.recipients \"" + other + "\" has \"" + name +
                                "\" as its lead: give the team another lead (or none) first, "
                                "then delete the person");
    }
    if (IsString(Member(r, "team"), name) && other != name) {
      return FailedPrecondition("notify.recipients \"" + other + "\" is in the team \"" + name +
                                "\": move them to another team (or none) first, then delete "
                                "the team");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> RecipientsView(std::string_view config_text, const std::string& path) {
  return ListView(config_text, path, "recipients");
}

Result<std::string> RoutesView(std::string_view config_text, const std::string& path) {
  return ListView(config_text, path, "routes");
}

Result<ConfigEdit> WithRecipient(std::string_view config_text, const std::string& name,
                                 std::string_view body) {
  VIGIL_ASSIGN_OR_RETURN(Json root, ParseRoot(config_text));
  VIGIL_ASSIGN_OR_RETURN(
      Json recipient,
      config_edit::NamedBody(body, name, "recipient",
                             "add it under the new name, move what names the old one, and "
                             "delete it"));
  Json& recipients = config_edit::NotifyList(root, "recipients");
  config_edit::PutAt(recipients, IndexOf(recipients, name), std::move(recipient));
  return Edited(root);
}

Result<ConfigEdit> WithoutRecipient(std::string_view config_text, const std::string& name) {
  VIGIL_ASSIGN_OR_RETURN(Json root, ParseRoot(config_text));
  Json& recipients = config_edit::NotifyList(root, "recipients");
  const size_t at = IndexOf(recipients, name);
  if (at == kNone) return NotFound("config.json has no recipient \"" + name + "\"");
  VIGIL_RETURN_IF_ERROR(config_edit::RefuseWhileRouted(root, "recipients", name, "recipient"));
  VIGIL_RETURN_IF_ERROR(RefuseWhileNeeded(recipients, name));
  recipients.erase(at);
  return Edited(root);
}

Result<ConfigEdit> WithRoutes(std::string_view config_text, std::string_view body) {
  VIGIL_ASSIGN_OR_RETURN(Json root, ParseRoot(config_text));
  constexpr const char* kShape = R"({"routes": [...]}, the whole list in its order)";
  VIGIL_ASSIGN_OR_RETURN(Json given, ParseBody(body, kShape));
  Json& routes = given["routes"];
  if (given.size() != 1 || !routes.is_array()) {
    return InvalidArgument(std::string("the body must be ") + kShape);
  }
  // A route has no secret to keep and nothing to merge: the list goes in as
  // given, and the parser checks the channels and recipients it names.
  config_edit::NotifyList(root, "routes") = std::move(routes);
  return Edited(root);
}

}  // namespace vigil::cli
