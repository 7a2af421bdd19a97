// Request parameters shared by Vigil's JSON APIs (Prometheus query API, log
// API): query string plus form body, times, durations, and the Prometheus
// error JSON that every API route answers with.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "net/http_server.h"

namespace vigil::api {

// "All time" bounds for start/end defaults, in ms (far from overflow).
inline constexpr int64_t kMinTimeMs = -9'000'000'000'000'000LL;
inline constexpr int64_t kMaxTimeMs = 9'000'000'000'000'000LL;

// Query-string parameters plus, for POST, form-encoded body parameters.
using Params = std::vector<std::pair<std::string, std::string>>;

Result<Params> GetParams(const net::HttpRequest& req);
std::optional<std::string> Param(const Params& p, std::string_view key);
std::vector<std::string> ParamAll(const Params& p, std::string_view key);

// 200 with a JSON body.
net::HttpResponse JsonOk(std::string body);
// {"status":"error","errorType":type,"error":msg}
net::HttpResponse Error(int status, std::string_view type, std::string_view msg);
// 400 bad_data for bad input, 503 timeout, 422 execution, 500 otherwise.
net::HttpResponse FromStatus(const Status& st);

// Whether a request may change state (POST, PUT, DELETE) from a browser:
// 403 when it comes from a page of another origin, 415 when its body is not
// JSON (which a foreign page cannot send without a CORS preflight this
// server never grants); nothing when it may. `what` ("change silences")
// goes into the answer. params.cc explains the reasoning.
std::optional<net::HttpResponse> RefuseForeign(const net::HttpRequest& req, std::string_view what);

// Unix seconds ("1435781451.781") or RFC3339 ("2015-07-01T20:10:51.781Z"), in ms.
Result<int64_t> ParseTime(std::string_view s);
// The parameter `key` as a time, or `fallback` when absent or empty.
Result<int64_t> TimeParam(const Params& p, std::string_view key, int64_t fallback);
// Float seconds ("15", "0.5") or a Prometheus duration ("15s", "1m"), in ms.
Result<int64_t> ParseDurationParam(std::string_view s);

}  // namespace vigil::api
