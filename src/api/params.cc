#include "api/params.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>

#include "core/json_writer.h"
#include "core/strings.h"
#include "query/parser.h"

namespace vigil::api {
namespace {

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "host:port" in lower case with `default_port` where "host" has none;
// "" when it is not a host (an empty one, or a bracket left open).
std::string HostAndPort(std::string_view authority, std::string_view default_port) {
  authority = TrimSpace(authority);
  if (authority.empty()) return "";
  std::string_view host = authority, port;
  if (authority.front() == '[') {  // [::1]:9300
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return "";
    host = authority.substr(0, close + 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return "";
    if (!rest.empty()) port = rest.substr(1);
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return "";
  return AsciiLower(host) + ":" + std::string(port.empty() ? default_port : port);
}

}  // namespace

std::optional<net::HttpResponse> RefuseCrossSite(const net::HttpRequest& req,
                                                 std::string_view what) {
  if (auto origin = req.Header("Origin")) {
    std::string o = AsciiLower(TrimSpace(*origin));
    std::string from;
    for (std::string_view scheme : {"http://", "https://"}) {
      if (!StartsWith(o, scheme) || o.find('/', scheme.size()) != std::string::npos) continue;
      from = HostAndPort(std::string_view(o).substr(scheme.size()),
                         scheme == "http://" ? "80" : "443");
    }
    bool same = false;
    for (const char* field : {"Host", "X-Forwarded-Host"}) {
      auto host = req.Header(field);
      if (!host || from.empty()) continue;
      std::string_view first = host->substr(0, host->find(','));  // a proxy's list: the first
      same |= HostAndPort(first, from.substr(from.rfind(':') + 1)) == from;
    }
    if (!same) {
      return Error(403, "forbidden",
                   "a page from another origin (\"" + std::string(CutUtf8(*origin, 100)) +
                       "\") may not " + std::string(what) +
                       ": the Origin must be this server's own (" +
                       std::string(CutUtf8(req.Header("Host").value_or("no Host"), 100)) + ")");
    }
  }
  auto type = req.Header("Content-Type");
  if (type || req.method != "DELETE") {
    std::string_view media = type.value_or("");
    media = TrimSpace(media.substr(0, media.find(';')));
    if (AsciiLower(media) != "application/json") {
      return Error(415, "bad_data",
                   "send the body as JSON, with Content-Type: application/json (" +
                       (type ? "this request's is \"" + std::string(CutUtf8(*type, 100)) + "\")"
                             : std::string("this request has no Content-Type)")));
    }
  }
  return std::nullopt;
}

Result<Params> GetParams(const net::HttpRequest& req) {
  Params p = req.query;
  if (req.method == "POST") {
    auto ct = req.Header("Content-Type");
    if (ct.has_value() && ct->find("application/x-www-form-urlencoded") != std::string_view::npos) {
      Status st = net::ParseQueryString(req.body, &p);
      if (!st.ok()) return InvalidArgument("cannot parse form body: " + st.message());
    }
  }
  return p;
}

std::optional<std::string> Param(const Params& p, std::string_view key) {
  for (const auto& [k, v] : p) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::vector<std::string> ParamAll(const Params& p, std::string_view key) {
  std::vector<std::string> out;
  for (const auto& [k, v] : p) {
    if (k == key) out.push_back(v);
  }
  return out;
}

net::HttpResponse JsonOk(std::string body) {
  net::HttpResponse res;
  res.content_type = "application/json";
  res.body = std::move(body);
  return res;
}

net::HttpResponse Error(int status, std::string_view type, std::string_view msg) {
  std::string body = "{\"status\":\"error\",\"errorType\":";
  AppendJsonString(&body, type);
  body += ",\"error\":";
  AppendJsonString(&body, msg);
  body += "}";
  return net::HttpResponse::Json(status, std::move(body));
}

net::HttpResponse FromStatus(const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kUnimplemented:
      return Error(400, "bad_data", st.message());
    case StatusCode::kDeadlineExceeded:
      return Error(503, "timeout", st.message());
    case StatusCode::kFailedPrecondition:
    case StatusCode::kResourceExhausted:
      return Error(422, "execution", st.message());
    default:
      return Error(500, "internal", st.message());
  }
}

// Unix seconds ("1435781451.781") or RFC3339 ("2015-07-01T20:10:51.781Z").
Result<int64_t> ParseTime(std::string_view s) {
  std::string str(s);
  char* end = nullptr;
  double secs = std::strtod(str.c_str(), &end);
  if (!str.empty() && end != nullptr && *end == '\0' && std::isfinite(secs)) {
    return static_cast<int64_t>(std::llround(secs * 1000));
  }
  // Clients send Prometheus' own "all time" bounds, years like -292273086 and
  // 292277025, which no struct tm holds.
  size_t dash = str.find('-', 1);
  if (dash != std::string::npos && dash >= 6 && str.find('T') != std::string::npos) {
    return str[0] == '-' ? kMinTimeMs : kMaxTimeMs;
  }
  struct tm tm {};
  const char* rest = strptime(str.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest != nullptr) {
    int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
    if (*rest == '.') {
      ++rest;
      int64_t frac = 0, digits = 0;
      while (*rest >= '0' && *rest <= '9') {
        if (digits < 3) frac = frac * 10 + (*rest - '0'), ++digits;
        ++rest;
      }
      while (digits < 3) frac *= 10, ++digits;
      ms += frac;
    }
    if ((*rest == 'Z' || *rest == 'z') && rest[1] == '\0') return ms;
    if ((*rest == '+' || *rest == '-') && std::strlen(rest) == 6 && rest[3] == ':') {
      int64_t off =
          (std::atoi(std::string(rest + 1, 2).c_str()) * 60 + std::atoi(rest + 4)) * 60'000;
      return *rest == '+' ? ms - off : ms + off;
    }
  }
  return InvalidArgument("cannot parse \"" + str + "\" to a valid timestamp");
}

Result<int64_t> UintParam(const Params& p, std::string_view key, int64_t fallback, uint64_t max) {
  auto v = Param(p, key);
  if (!v || v->empty()) return fallback;
  auto n = ParseUint64(*v);
  if (!n || *n > max) {
    return InvalidArgument(std::string(key) + " must be an integer from 0 to " +
                           std::to_string(max));
  }
  return static_cast<int64_t>(*n);
}

Result<int64_t> TimeParam(const Params& p, std::string_view key, int64_t fallback) {
  auto v = Param(p, key);
  if (!v.has_value() || v->empty()) return fallback;
  auto t = ParseTime(*v);
  if (!t.ok())
    return InvalidArgument("invalid parameter \"" + std::string(key) +
                           "\": " + t.status().message());
  return t;
}

// Float seconds ("15", "0.5") or a Prometheus duration ("15s", "1m").
Result<int64_t> ParseDurationParam(std::string_view s) {
  std::string str(s);
  char* end = nullptr;
  double secs = std::strtod(str.c_str(), &end);
  if (!str.empty() && end != nullptr && *end == '\0') {
    if (!std::isfinite(secs) || std::fabs(secs) > 9e15) {
      return InvalidArgument("cannot parse \"" + str +
                             "\" to a valid duration. It overflows int64");
    }
    return static_cast<int64_t>(std::llround(secs * 1000));
  }
  auto d = query::ParseDurationMs(s);
  if (!d.ok()) return InvalidArgument("cannot parse \"" + str + "\" to a valid duration");
  return d;
}

}  // namespace vigil::api
