#include "cli/api_client.h"

#include <ctime>

#include "net/http_client.h"

namespace vigil::cli {

using nlohmann::json;

namespace {

Result<json> Answer(const Result<net::HttpResponse>& r) {
  if (!r.ok()) return r.status();
  json j = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  if (r->status != 200) {
    std::string msg = j.is_object() && j.contains("error") && j["error"].is_string()
                          ? j["error"].get<std::string>()
                          : r->body.substr(0, 500);
    if (r->status == 404) return NotFound(msg);
    return r->status == 400 ? InvalidArgument(msg) : Unavailable(msg);
  }
  if (j.is_discarded()) return Internal("the server sent a response that is not JSON");
  return j;
}

}  // namespace

Result<json> GetJson(const std::string& url, std::chrono::milliseconds timeout) {
  return Answer(net::HttpGet(url, timeout));
}

Result<json> GetJsonList(const std::string& url, std::chrono::milliseconds timeout) {
  auto r = GetJson(url, timeout);
  if (r.ok() && !r->is_array()) return Internal("unexpected answer (not a list) from " + url);
  return r;
}

Result<json> SendJson(const std::string& method, const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout) {
  net::HttpClientRequest req;
  req.method = method;
  req.url = url;
  req.body = body;
  if (!body.empty()) req.headers.Add("Content-Type", "application/json");
  req.timeout = timeout;
  return Answer(net::HttpFetch(req));
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

std::string LocalTime(int64_t ms) {
  if (ms <= 0) return "-";
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string Printable(std::string s, size_t max) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

}  // namespace vigil::cli
