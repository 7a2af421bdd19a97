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

// Why a request from a browser may not change state here (403 or 415), or
// nothing. A page on another origin can make a browser send a request
// without asking first (no CORS preflight) only with a "simple" body:
// text/plain, a form's encoding, or no Content-Type at all. So routes that
// change something take application/json only (415 otherwise; a DELETE may
// have no body and no Content-Type), which a foreign page cannot send
// without a preflight this server never grants. Browsers also name the
// page's origin (Origin) on every POST, PUT and DELETE: one that is not
// this server's own (the request's Host, or X-Forwarded-Host behind a
// proxy) gets 403. The CLI (net/http_client) sends application/json and no
// Origin. `what` completes "may not ...", e.g. "change silences".
std::optional<net::HttpResponse> RefuseCrossSite(const net::HttpRequest& req,
                                                 std::string_view what);

// The parameter `key` as an integer from 0 to `max`, or `fallback` when
// absent or empty; InvalidArgument names it otherwise.
Result<int64_t> UintParam(const Params& p, std::string_view key, int64_t fallback, uint64_t max);

// Unix seconds ("1435781451.781") or RFC3339 ("2015-07-01T20:10:51.781Z"), in ms.
Result<int64_t> ParseTime(std::string_view s);
// The parameter `key` as a time, or `fallback` when absent or empty.
Result<int64_t> TimeParam(const Params& p, std::string_view key, int64_t fallback);
// Float seconds ("15", "0.5") or a Prometheus duration ("15s", "1m"), in ms.
Result<int64_t> ParseDurationParam(std::string_view s);

}  // namespace vigil::api
