#include "net/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/span_body.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "core/strings.h"
#include "core/version.h"
#include "net/http_internal.h"

namespace vigil::net {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxResponseHeaderBytes = 64 * 1024;

std::string Str(beast::string_view s) { return std::string(s.data(), s.size()); }

bool IsTargetChar(char c) { return c > 0x20 && c < 0x7f; }

Status NoResponseInTime(const std::string& where, const HttpClientRequest& r) {
  return DeadlineExceeded("no response from " + where + " within " +
                          std::to_string(r.timeout.count()) + " ms");
}

// Turns a failed step of the exchange into a Status a user can act on.
Status ExchangeError(const error_code& ec, std::string_view step, const std::string& url,
                     const HttpClientRequest& r) {
  if (ec == beast::error::timeout) return NoResponseInTime(url, r);
  if (ec == http::error::body_limit) {
    return ResourceExhausted("the response from " + url + " is larger than " +
                             std::to_string(r.max_response_bytes) + " bytes");
  }
  if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return InvalidArgument("malformed HTTP response from " + url + ": " + ec.message());
  }
  return Unavailable("cannot " + std::string(step) + " " + url + ": " + ec.message());
}

// The connection closed before a byte of the response came: what a server
// that closed an idle keep-alive connection looks like to the next request.
bool ClosedByPeer(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == net::error::eof ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == net::error::connection_aborted;
}

}  // namespace

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  auto lower_prefix = [&](std::string_view p) {
    if (url.size() < p.size()) return false;
    for (size_t i = 0; i < p.size(); ++i) {
      char c = url[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != p[i]) return false;
    }
    return true;
  };
  if (lower_prefix("https://")) {
    return Unimplemented("https URLs are not supported yet; use http:// (got " +
                         std::string(url.substr(0, 200)) + ")");
  }
  if (!lower_prefix("http://")) {
    return InvalidArgument("not an http:// URL: " + std::string(url.substr(0, 200)));
  }
  std::string_view rest = url.substr(7);
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view target = end == std::string_view::npos ? "" : rest.substr(end);
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgument("user names in URLs are not supported: " +
                           std::string(url.substr(0, 200)));
  }
  std::string with_port(authority);
  if (with_port.empty())
    return InvalidArgument("the URL has no host: " + std::string(url.substr(0, 200)));
  // Reuse the listen-address parser; a missing port means 80.
  const bool has_port = with_port.front() == '[' ? with_port.find("]:") != std::string::npos
                                                 : with_port.find(':') != std::string::npos;
  if (!has_port) with_port += ":80";
  auto addr = ParseListenAddress(with_port);
  if (!addr.ok() || addr->host.empty()) {
    return InvalidArgument("invalid host or port in URL: " + std::string(url.substr(0, 200)));
  }
  HttpUrl out;
  out.host = addr->host;
  out.port = addr->port;
  target = target.substr(0, target.find('#'));
  if (target.empty()) {
    out.target = "/";
  } else if (target.front() == '?') {
    out.target = "/" + std::string(target);
  } else {
    out.target = std::string(target);
  }
  for (char c : out.target) {
    if (!IsTargetChar(c)) {
      return InvalidArgument("the URL has a space or control character (percent-encode it): " +
                             std::string(url.substr(0, 200)));
    }
  }
  return out;
}

struct HttpConnection::Link {
  // Declared in this order so that the io_context is destroyed last: pending
  // handlers are destroyed with it, never run.
  net::io_context ioc{1};
  tcp::resolver resolver{ioc};
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;  // bytes read past the last response
  std::string host_port;      // where the connection goes

  // Runs the operations started on `ioc` until they are all done or the
  // deadline (plus a margin for the timers that enforce it) passes.
  void Run(Clock::time_point deadline) {
    ioc.restart();
    ioc.run_until(deadline + std::chrono::milliseconds(50));
  }

  // Opens the connection; runs on `ioc` like the exchange.
  Status Connect(const HttpUrl& url, const std::string& where, const HttpClientRequest& r,
                 Clock::time_point deadline) {
    std::optional<Status> failure;
    bool done = false;
    auto on_connect = [&](error_code ec, const tcp::endpoint&) {
      if (ec) failure = ExchangeError(ec, "connect to", where, r);
      done = true;
    };
    error_code ec;
    auto literal = net::ip::make_address(url.host, ec);
    std::vector<tcp::endpoint> eps;
    if (!ec) {
      eps.emplace_back(literal, url.port);
      stream.expires_at(deadline);
      stream.async_connect(eps, on_connect);
    } else {
      resolver.async_resolve(
          url.host, std::to_string(url.port),
          [&](error_code rec, tcp::resolver::results_type results) {
            if (rec) {
              failure = Unavailable("cannot resolve " + url.host + ": " + rec.message());
              done = true;
              return;
            }
            stream.expires_at(deadline);
            stream.async_connect(results, on_connect);
          });
    }
    Run(deadline);
    if (!done) return NoResponseInTime(where, r);
    return failure ? *failure : Status::Ok();
  }
};

HttpConnection::HttpConnection(bool keep_alive) : keep_alive_(keep_alive) {}
HttpConnection::~HttpConnection() = default;

void HttpConnection::Close() { link_.reset(); }

Result<HttpResponse> HttpConnection::Fetch(const HttpClientRequest& r) {
  VIGIL_ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(r.url));
  if (!IsHeaderToken(r.method)) return InvalidArgument("invalid HTTP method: " + r.method);
  const bool v6 = url.host.find(':') != std::string::npos;
  const std::string host_port =
      (v6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port);
  const std::string where = "http://" + host_port;

  // span_body: the body is sent from the caller's string, not a copy of it.
  http::request<http::span_body<const char>> req;
  req.method_string(r.method);
  req.target(url.target);
  req.version(11);
  req.set(http::field::host, host_port);
  req.set(http::field::user_agent, std::string("vigil/") + kVersion);
  for (const auto& [name, value] : r.headers.fields()) {
    if (!IsHeaderToken(name) || !IsHeaderValue(value)) {
      return InvalidArgument("invalid HTTP header field: " + name);
    }
    req.set(name, value);
  }
  if (!keep_alive_) req.set(http::field::connection, "close");
  req.body() = {r.body.data(), r.body.size()};
  if (!r.body.empty() || r.method == "POST" || r.method == "PUT") req.prepare_payload();
  const bool want_keep_alive = req.keep_alive();
  const auto deadline = Clock::now() + r.timeout;

  if (link_ != nullptr && link_->host_port != host_port) link_.reset();
  for (;;) {
    const bool reused = link_ != nullptr;
    if (!reused) {
      link_ = std::make_unique<Link>();
      link_->host_port = host_port;
      if (Status st = link_->Connect(url, where, r, deadline); !st.ok()) {
        link_.reset();
        return st;
      }
    }
    Link& link = *link_;
    http::response_parser<http::string_body> parser;
    parser.header_limit(kMaxResponseHeaderBytes);
    parser.body_limit(r.max_response_bytes);
    if (r.method == "HEAD") parser.skip(true);

    std::optional<Status> failure;
    bool done = false;
    bool unanswered = false;  // failed before any byte of the response
    // The exchange as a chain of steps; each runs on this thread inside Run.
    auto on_read = [&](error_code ec, size_t) {
      if (ec) {
        unanswered = ClosedByPeer(ec) && !parser.got_some() && link.buffer.size() == 0;
        failure = ExchangeError(ec, "read the response from", where, r);
      }
      done = true;
    };
    // The header first: Beast 1.74 can lose a Content-Length over body_limit
    // when the body arrives in the same read, so the length is checked here.
    auto on_header = [&](error_code ec, size_t) {
      if (ec) return on_read(ec, 0);
      if (parser.is_done()) return on_read({}, 0);  // HEAD, 204, 304, or an empty body
      auto length = ParseContentLength(Str(parser.get()[http::field::content_length]));
      if (length && *length > r.max_response_bytes) return on_read(http::error::body_limit, 0);
      http::async_read(link.stream, link.buffer, parser, on_read);
    };
    auto on_write = [&](error_code ec, size_t) {
      if (ec) {
        unanswered = ClosedByPeer(ec);
        failure = ExchangeError(ec, "send the request to", where, r);
        done = true;
        return;
      }
      link.stream.expires_at(deadline);
      http::async_read_header(link.stream, link.buffer, parser, on_header);
    };
    link.stream.expires_at(deadline);
    http::async_write(link.stream, req, on_write);
    link.Run(deadline);

    if (!done || failure) {
      link_.reset();  // never reused after an error; destroys what is pending
      // The server closed the idle connection before it read this request.
      if (done && reused && unanswered) continue;
      return done ? *failure : NoResponseInTime(where, r);
    }
    auto& msg = parser.get();
    // Bytes after the response were never asked for: do not read them as the
    // next response.
    if (!want_keep_alive || !msg.keep_alive() || parser.need_eof() || link.buffer.size() > 0) {
      link_.reset();
    }
    HttpResponse out;
    out.status = static_cast<int>(msg.result_int());
    out.content_type.clear();
    for (const auto& field : msg) out.headers.Add(Str(field.name_string()), Str(field.value()));
    if (auto ct = out.headers.Get("Content-Type")) out.content_type = std::string(*ct);
    out.body = std::move(msg.body());
    return out;
  }
}

Result<HttpResponse> HttpFetch(const HttpClientRequest& r) {
  return HttpConnection(/*keep_alive=*/false).Fetch(r);
}

Result<HttpResponse> HttpGet(const std::string& url, std::chrono::milliseconds timeout) {
  HttpClientRequest r;
  r.url = url;
  r.timeout = timeout;
  return HttpFetch(r);
}

Result<HttpResponse> HttpPost(const std::string& url, std::string body,
                              std::string_view content_type, std::chrono::milliseconds timeout) {
  HttpClientRequest r;
  r.method = "POST";
  r.url = url;
  r.body = std::move(body);
  r.timeout = timeout;
  r.headers.Add("Content-Type", std::string(content_type));
  return HttpFetch(r);
}

}  // namespace vigil::net
