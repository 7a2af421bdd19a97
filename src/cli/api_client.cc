#include "cli/api_client.h"

#include "net/http_client.h"

namespace vigil::cli {

using nlohmann::json;

Result<json> GetJson(const std::string& url, std::chrono::milliseconds timeout) {
  auto r = net::HttpGet(url, timeout);
  if (!r.ok()) return r.status();
  json j = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  if (r->status != 200) {
    std::string msg = j.is_object() && j.contains("error") && j["error"].is_string()
                          ? j["error"].get<std::string>()
                          : r->body.substr(0, 500);
    return r->status == 400 ? InvalidArgument(msg) : Unavailable(msg);
  }
  if (j.is_discarded()) return Internal("the server sent a response that is not JSON");
  return j;
}

std::string JsonString(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

double JsonNumber(const json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : 0;
}

}  // namespace vigil::cli
