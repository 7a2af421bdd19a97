// A small blocking HTTP/1.1 client for the CLI, the agent and tests, http://
// only (HTTPS for fleets will come through libcurl).
//
// HttpFetch (and HttpGet, HttpPost) makes one request on a connection of its
// own and closes it. HttpConnection keeps one keep-alive connection open and
// sends request after request on it; HttpFetch is a one-shot HttpConnection,
// so both run the same exchange code.
//
// Every call is bounded: the whole exchange (connect, send, receive) must fit
// in `timeout`, the response header in 64 KiB and the body in
// `max_response_bytes`. Name resolution of a host name (not an IP literal)
// runs through getaddrinfo, which the deadline cannot interrupt; "localhost"
// and literals are immediate.
//
// A response with any status is a success (check HttpResponse::status); a
// failed Result means no response: bad URL, connection refused, deadline,
// too large, or malformed.
//
// Thread safety: the functions are safe to call from several threads at once.
// An HttpConnection is used by one thread at a time (callers that share one
// hold a lock around Fetch).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "net/http_server.h"

namespace vigil::net {

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

// A persistent HTTP/1.1 connection: Fetch sends each request on the
// connection the previous response left open (it connects when none is open,
// or when the request's URL names another host:port than the open one).
//
// The connection is closed after any failed exchange, after a response that
// says `Connection: close` (or whose end is the end of the connection), and
// after a request that itself carries `Connection: close`.
//
// A server may close a keep-alive connection while it is idle (Vigil's server
// does after 60 s). So when sending on a REUSED connection fails, or it is
// closed before the first byte of the response arrives, Fetch reconnects once
// and sends the request again, within the same deadline. A request that got
// no byte of response was normally not processed, but that cannot be known for
// sure (the server may have processed it and died before answering): use
// HttpConnection only for requests that are safe to send twice, such as
// POST /api/v1/ingest, which the server deduplicates (metrics by batch
// sequence, logs by source byte offsets). A request that ran into its
// deadline, or got part of a response, is never resent.
class HttpConnection {
 public:
  // With `keep_alive` false every request says `Connection: close` and the
  // connection closes after each response (that is HttpFetch).
  explicit HttpConnection(bool keep_alive = true);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  Result<HttpResponse> Fetch(const HttpClientRequest& request);

  // Whether a connection is open for the next Fetch to reuse.
  bool is_open() const { return link_ != nullptr; }
  void Close();

 private:
  struct Link;  // one TCP connection and the io_context that drives it

  const bool keep_alive_;
  std::unique_ptr<Link> link_;
};

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

}  // namespace vigil::net
