// HttpServer: Vigil's HTTP/1.1 server (UI, query API, /metrics, agent ingest).
//
// This header has no Boost types on purpose: Beast is expensive to compile, so
// it lives only in http_server.cc and http_client.cc (DESIGN.md
// "Dependencies"). Routes are plain std::function handlers that take an
// HttpRequest and return an HttpResponse.
//
// Limits (documented for users in docs/http-api.md): header bytes, body bytes
// (per route), a read deadline per request (a client that trickles bytes, as
// in slowloris, gets 408 and is closed), an idle deadline between keep-alive
// requests, a write deadline, and a cap on open connections (the excess gets a
// best-effort 503 and is closed).
//
// Thread safety: a Router is built on one thread before it is handed to the
// server and is read-only afterwards. Handlers run on the server's threads,
// possibly several at once, so they must be thread-safe; a handler blocks one
// server thread while it runs, so long work belongs elsewhere. Start() and
// Stop() are called from the owning thread only; stats() from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace vigil::net {

// Header fields in arrival order. Lookup ignores ASCII case (RFC 9110).
class HttpHeaders {
 public:
  void Add(std::string name, std::string value);
  // Replaces every field called `name` with one field.
  void Set(std::string_view name, std::string value);
  // The first field called `name`, if any.
  std::optional<std::string_view> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Get(name).has_value(); }
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

struct HttpRequest {
  std::string method;  // "GET", as sent (methods are case-sensitive)
  std::string target;  // raw request target: "/api/v1/query?query=up"
  std::string path;    // percent-decoded path: "/api/v1/query"
  // Percent-decoded query parameters in order; a key may repeat ("match[]").
  std::vector<std::pair<std::string, std::string>> query;
  HttpHeaders headers;
  std::string body;
  std::string remote_address;  // "127.0.0.1:51234"

  // The first value of a query parameter.
  std::optional<std::string_view> Query(std::string_view key) const;
  std::vector<std::string_view> QueryAll(std::string_view key) const;
  std::optional<std::string_view> Header(std::string_view name) const { return headers.Get(name); }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Extra fields. The server sets Content-Type (from content_type),
  // Content-Length, Connection, Date and Transfer-Encoding itself and ignores
  // them here; a field here replaces a default security header of the same name.
  HttpHeaders headers;

  static HttpResponse Text(int status, std::string body);
  static HttpResponse Json(int status, std::string body);
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct RouteOptions {
  // Largest request body this route accepts; 0 means the server's default.
  // Ingest routes raise it (e.g. 64 MiB); the cost is memory per request.
  size_t max_body_bytes = 0;
};

// Maps (method, path) to a handler. An exact route wins over a prefix route,
// and a longer prefix over a shorter one. A GET route also answers HEAD (the
// server drops the body). A path that matches routes of other methods only
// gets 405 with an Allow header; a path that matches nothing gets 404.
//
// Room to grow: a streaming kind of handler (server-sent events) will be a
// second registration call with its own handler type, and Route will gain a
// kind field so the server can tell them apart; existing routes stay as they are.
class Router {
 public:
  struct Route {
    std::string method;
    std::string path;  // exact path, or prefix when `prefix` is set
    bool prefix = false;
    HttpHandler handler;
    RouteOptions options;
  };

  // Registering the same method and path twice replaces the earlier handler.
  Router& Handle(std::string method, std::string path, HttpHandler handler,
                 RouteOptions options = {});
  Router& HandlePrefix(std::string method, std::string prefix, HttpHandler handler,
                       RouteOptions options = {});

  struct Match {
    const Route* route = nullptr;  // null: 404 or 405
    std::string allow;             // for 405: "GET, HEAD, POST"; empty means 404
  };
  Match Find(std::string_view method, std::string_view path) const;

  // The largest body any route accepts, with 0 meaning `server_default`.
  size_t MaxBodyBytes(size_t server_default) const;
  bool empty() const { return routes_.empty(); }

 private:
  std::vector<Route> routes_;
};

// "127.0.0.1:9300", "[::1]:9300", ":9300" (all interfaces), "localhost:9300".
struct ListenAddress {
  std::string host;  // empty: all interfaces
  uint16_t port = 0;
};
Result<ListenAddress> ParseListenAddress(std::string_view text);

// Decodes %XX escapes; with `plus_is_space`, '+' becomes ' ' (form encoding).
// InvalidArgument on a truncated or non-hex escape.
Result<std::string> PercentDecode(std::string_view s, bool plus_is_space);
// Parses "a=1&b=x%20y" (also application/x-www-form-urlencoded bodies).
Status ParseQueryString(std::string_view s, std::vector<std::pair<std::string, std::string>>* out);

struct HttpServerStats {
  uint64_t connections_accepted = 0;
  uint64_t connections_rejected = 0;  // over max_connections
  uint64_t connections_open = 0;
  uint64_t requests = 0;
  uint64_t responses_4xx = 0;
  uint64_t responses_5xx = 0;
  uint64_t handler_exceptions = 0;
};

class HttpServer {
 public:
  struct Options {
    std::string listen = "127.0.0.1:9300";
    int threads = 2;
    size_t max_header_bytes = 8 * 1024;
    size_t max_body_bytes = 1024 * 1024;  // default; routes may raise it
    // From the first byte of a request to its last; slowloris-safe because it
    // bounds the whole request, not the gap between bytes. A new connection
    // must also send its first byte within this time.
    std::chrono::milliseconds read_timeout{10'000};
    // How long a keep-alive connection may sit between requests.
    std::chrono::milliseconds idle_timeout{60'000};
    // To write one response; a client that does not read is closed.
    std::chrono::milliseconds write_timeout{30'000};
    size_t max_connections = 1024;
    // Called (from server threads) for events an operator may want in a log,
    // such as a handler that threw. Optional.
    std::function<void(std::string_view)> error_log;
  };

  HttpServer(Options options, Router router);
  ~HttpServer();  // Stop()s if running
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds, listens and starts the threads. A server starts at most once.
  Status Start();
  // Closes the listener and every connection, waits for handlers that are
  // running to return, and joins the threads. Idempotent.
  void Stop();

  // The port actually bound (useful with port 0); 0 before Start().
  uint16_t bound_port() const;
  // "127.0.0.1:41234" or "[::]:9300"; empty before Start().
  std::string bound_address() const;
  HttpServerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil::net
