// A small blocking HTTP/1.1 client for the CLI and tests: one request per
// connection, http:// only (HTTPS for fleets will come through libcurl).
//
// Every call is bounded: the whole exchange (connect, send, receive) must fit
// in `timeout`, and the response body in `max_response_bytes`. Name
// resolution of a host name (not an IP literal) runs through getaddrinfo,
// which the deadline cannot interrupt; "localhost" and literals are immediate.
//
// A response with any status is a success (check HttpResponse::status); a
// failed Result means no response: bad URL, connection refused, deadline,
// too large, or malformed.
//
// Thread safety: the functions are safe to call from several threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "api/http_server.h"
#include "core/status.h"

namespace vigil::api {

inline constexpr size_t kDefaultMaxResponseBytes = 64 * 1024 * 1024;

struct HttpClientRequest {
  std::string method = "GET";
  std::string url;  // http://host[:port]/path?query
  HttpHeaders headers;
  std::string body;  // sent with Content-Length when non-empty or for POST/PUT
  std::chrono::milliseconds timeout{10'000};
  size_t max_response_bytes = kDefaultMaxResponseBytes;
};

// The response's Content-Type is in content_type and also in headers.
Result<HttpResponse> HttpFetch(const HttpClientRequest& request);

Result<HttpResponse> HttpGet(const std::string& url, std::chrono::milliseconds timeout);
Result<HttpResponse> HttpPost(const std::string& url, std::string body,
                              std::string_view content_type, std::chrono::milliseconds timeout);

struct HttpUrl {
  std::string host;  // without brackets
  uint16_t port = 80;
  std::string target = "/";  // path and query
};
// Parses "http://host[:port][/path][?query]"; https:// is Unimplemented.
Result<HttpUrl> ParseHttpUrl(std::string_view url);

}  // namespace vigil::api
