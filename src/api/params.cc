#include "api/params.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "core/json_writer.h"
#include "query/parser.h"

namespace vigil::api {

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
