// `vigil silence add|ls|rm`: silences over the server's API (POST/GET
// /api/v1/silences, DELETE /api/v1/silence/<id>). add prints only the new
// id, for scripts: id=$(vigil silence add node=gpu-07 --duration 4h).
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "alert/silence.h"
#include "api/params.h"
#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/home.h"

namespace vigil::cli {
namespace {

using nlohmann::json;

std::string DefaultAuthor() {
  for (const char* var : {"USER", "LOGNAME"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return v;
  }
  return "vigil";
}

// The matchers of a silence from the API, as `vigil silence add` takes them.
std::string MatchersText(const json& matchers) {
  std::string out;
  if (!matchers.is_array()) return out;
  for (const json& m : matchers) {
    if (!m.is_object()) continue;
    alert::Matcher x;
    x.name = JsonString(m, "name");
    x.value = JsonString(m, "value");
    bool regex = m.value("isRegex", false), equal = m.value("isEqual", true);
    x.op = regex ? (equal ? alert::MatchOp::kRegex : alert::MatchOp::kNotRegex)
                 : (equal ? alert::MatchOp::kEqual : alert::MatchOp::kNotEqual);
    if (!out.empty()) out += ' ';
    out += alert::MatcherText(x);
  }
  return out;
}

std::string LocalTimeOf(const std::string& rfc3339) {
  auto ms = api::ParseTime(rfc3339);
  return ms.ok() ? LocalTime(*ms) : rfc3339;
}

int Add(const std::string& base, const std::string& body) {
  auto r = SendJson("POST", base + "/api/v1/silences", body, std::chrono::seconds(10));
  if (!r.ok()) {
    std::fprintf(stderr, "vigil silence add: %s\n", r.status().message().c_str());
    return r.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::printf("%s\n", JsonString(*r, "silenceID").c_str());
  return 0;
}

int List(const std::string& base, const SilenceFlags& flags) {
  auto r = GetJsonList(base + "/api/v1/silences", std::chrono::seconds(10));
  if (!r.ok()) {
    std::fprintf(stderr, "vigil silence ls: %s\n", r.status().message().c_str());
    return 1;
  }
  if (flags.json) {
    std::printf("%s\n", r->dump().c_str());
    return 0;
  }
  if (r->empty()) {
    std::printf("No silence. Add one: vigil silence add node=NODE --duration 2h\n");
    return 0;
  }
  std::printf("%-16s  %-7s  %-14s  %-12s  %-40s  %s\n", "ID", "STATE", "UNTIL", "CREATED BY",
              "MATCHERS", "COMMENT");
  for (const json& s : *r) {
    std::string state = JsonString(s.value("status", json::object()), "state");
    std::string until = LocalTimeOf(JsonString(s, "endsAt"));
    if (state == "pending") until = "from " + LocalTimeOf(JsonString(s, "startsAt"));
    std::printf("%-16s  %-7s  %-14s  %-12s  %-40s  %s\n",
                Printable(JsonString(s, "id"), 16).c_str(), state.c_str(), until.c_str(),
                Printable(JsonString(s, "createdBy"), 12).c_str(),
                Printable(MatchersText(s.value("matchers", json::array())), 200).c_str(),
                Printable(JsonString(s, "comment"), 200).c_str());
  }
  return 0;
}

int Remove(const std::string& base, const SilenceFlags& flags) {
  if (flags.id.empty() || flags.id.find_first_of("/?#% ") != std::string::npos) {
    std::fprintf(stderr, "vigil silence rm: \"%s\" is not a silence id (vigil silence ls)\n",
                 flags.id.c_str());
    return 2;
  }
  auto r = SendJson("DELETE", base + "/api/v1/silence/" + flags.id, "", std::chrono::seconds(10));
  if (!r.ok()) {
    std::fprintf(stderr, "vigil silence rm: %s\n", r.status().message().c_str());
    return 1;
  }
  std::printf("Silence %s expired.\n", flags.id.c_str());
  return 0;
}

}  // namespace

Result<std::string> SilenceAddBody(const SilenceFlags& flags) {
  if (flags.matchers.empty()) {
    return InvalidArgument("give at least one matcher, such as node=gpu-07");
  }
  std::vector<alert::Matcher> parsed;
  for (const std::string& text : flags.matchers) {
    VIGIL_ASSIGN_OR_RETURN(alert::Matcher m, alert::ParseMatcher(text));
    parsed.push_back(std::move(m));
  }
  VIGIL_RETURN_IF_ERROR(alert::ValidateMatchers(parsed));
  auto d = alert::ParseSilenceDuration(flags.duration);
  if (!d.ok()) return d.status().WithContext("--duration");
  json matchers = json::array();
  for (const alert::Matcher& m : parsed) {
    bool regex = m.op == alert::MatchOp::kRegex || m.op == alert::MatchOp::kNotRegex;
    bool equal = m.op == alert::MatchOp::kEqual || m.op == alert::MatchOp::kRegex;
    matchers.push_back(
        {{"name", m.name}, {"value", m.value}, {"isRegex", regex}, {"isEqual", equal}});
  }
  json body = {{"matchers", std::move(matchers)},
               {"duration", flags.duration},
               {"createdBy", flags.author.empty() ? DefaultAuthor() : flags.author},
               {"comment", flags.comment}};
  return body.dump();
}

int RunSilence(const SilenceFlags& flags) {
  // A bad matcher is refused before looking for a server.
  Result<std::string> body = std::string();
  if (flags.action == "add") body = SilenceAddBody(flags);
  if (!body.ok()) {
    std::fprintf(stderr, "vigil silence add: %s\n", body.status().message().c_str());
    return 2;
  }
  auto base = ResolveServerUrl(flags.server, flags.home);
  if (!base.ok()) {
    std::fprintf(stderr, "%s\n", base.status().message().c_str());
    return 3;
  }
  if (flags.action == "add") return Add(*base, *body);
  if (flags.action == "rm") return Remove(*base, flags);
  return List(*base, flags);
}

}  // namespace vigil::cli
