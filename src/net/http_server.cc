#include "net/http_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <ctime>
#include <exception>
#include <thread>

#include "core/thread_name.h"
#include "net/http_internal.h"

namespace vigil::net {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

std::string Str(beast::string_view s) { return std::string(s.data(), s.size()); }

std::string EndpointString(const tcp::endpoint& ep) {
  const auto addr = ep.address();
  std::string host = addr.to_string();
  if (addr.is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(ep.port());
}

bool IsHttpParseError(const error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_target).category();
}

Status BindError(const error_code& ec, const std::string& listen) {
  if (ec == net::error::address_in_use) {
    return Unavailable("address " + listen +
                       " is already in use; is another Vigil running? stop it with `vigil down` "
                       "or pick another --listen");
  }
  if (ec == net::error::access_denied) {
    return FailedPrecondition("permission denied to listen on " + listen +
                              "; ports below 1024 need root, pick another --listen");
  }
  if (ec == boost::system::errc::address_not_available) {
    return InvalidArgument(listen + " is not an address of this machine; pick another --listen");
  }
  return IoError("cannot listen on " + listen + ": " + ec.message());
}

constexpr std::string_view kBusyResponse =
    "HTTP/1.1 503 Service Unavailable\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 39\r\n"
    "Retry-After: 1\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Connection: close\r\n"
    "\r\n"
    "server busy: too many open connections\n";

}  // namespace

namespace http_detail {

// What sessions share with the server. Lives in the Impl, which outlives
// every session (Stop() destroys the io_context, and the sessions with it,
// before the Impl goes).
struct ServerState {
  ServerState(HttpServer::Options o, Router r) : opts(std::move(o)), router(std::move(r)) {
    max_body_any = router.MaxBodyBytes(opts.max_body_bytes);
  }
  void LogError(const std::string& message) const {
    if (opts.error_log) opts.error_log(message);
  }
  HttpResponse CallHandler(const Router::Route& route, const HttpRequest& req);

  const HttpServer::Options opts;
  const Router router;
  size_t max_body_any = 0;
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> accepted{0}, rejected{0}, open{0}, requests{0}, r4xx{0}, r5xx{0},
      exceptions{0};
};

}  // namespace http_detail

struct HttpServer::Impl : http_detail::ServerState {
  using ServerState::ServerState;
  void Accept();
  void Reject(tcp::socket socket);

  bool started = false;
  uint16_t port = 0;
  std::string address;
  std::unique_ptr<net::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<net::steady_timer> accept_backoff;
  std::vector<std::thread> threads;
};

namespace {

// One connection. shared_ptr because an Asio session lives exactly as long as
// some pending operation holds it; all of its handlers run on its strand, so
// the members need no lock.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, http_detail::ServerState* server)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), server_(server) {}
  ~Session() { server_->open.fetch_sub(1); }

  tcp::socket::executor_type executor() { return socket_.get_executor(); }

  void Start() {
    error_code ec;
    auto ep = socket_.remote_endpoint(ec);
    if (!ec) remote_ = EndpointString(ep);
    WaitForRequest();
  }

 private:
  const HttpServer::Options& opts() const { return server_->opts; }

  // Every wait is tagged so that a timer that fired just before it was re-armed
  // cannot cancel the next operation.
  void Arm(std::chrono::milliseconds d) {
    timed_out_ = false;
    timer_.expires_after(d);
    timer_.async_wait([self = shared_from_this(), gen = ++timer_gen_](error_code ec) {
      if (ec || gen != self->timer_gen_) return;
      self->timed_out_ = true;
      error_code ignored;
      self->socket_.cancel(ignored);  // the pending operation ends with operation_aborted
    });
  }
  void Disarm() {
    ++timer_gen_;
    timer_.cancel();
  }

  void WaitForRequest() {
    if (buffer_.size() > 0) {  // a pipelined request is already here
      ReadHeader();
      return;
    }
    // Waiting for the first byte is separate so that an idle keep-alive
    // connection gets the idle deadline and a request in progress the read one.
    Arm(first_request_ ? opts().read_timeout : opts().idle_timeout);
    socket_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](error_code ec, size_t n) {
                              if (ec) return self->Close();  // idle, peer gone, or stopping
                              self->buffer_.commit(n);
                              self->ReadHeader();
                            });
  }

  void ReadHeader() {
    first_request_ = false;
    request_ = HttpRequest{};  // an error before OnHeader must not see the last request
    match_ = {};
    http10_ = false;
    Arm(opts().read_timeout);
    parser_.emplace();
    parser_->header_limit(
        static_cast<uint32_t>(std::min<size_t>(opts().max_header_bytes, UINT32_MAX)));
    // Beast checks Content-Length against this while parsing the header; the
    // route's own limit is checked in OnHeader (which also covers Beast 1.74
    // losing this error when the body arrives in the same read).
    parser_->body_limit(server_->max_body_any);
    http::async_read_header(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(error_code ec) {
    if (ec) return FailRead(ec);
    const auto& msg = parser_->get();
    request_.method = Str(msg.method_string());
    request_.remote_address = remote_;
    http10_ = msg.version() < 11;
    if (Status st = ParseTarget(Str(msg.target()), &request_); !st.ok()) {
      return Respond(HttpResponse::Text(400, "400 bad request: " + st.message() + "\n"), true);
    }
    // Route before reading the body, so that a body nobody wants is never read.
    match_ = server_->router.Find(request_.method, request_.path);
    const bool has_body = !parser_->is_done();
    if (match_.route == nullptr) return Respond(NoRouteResponse(request_, match_), has_body);
    size_t limit = match_.route->options.max_body_bytes;
    if (limit == 0) limit = opts().max_body_bytes;
    auto length = ParseContentLength(Str(msg[http::field::content_length]));
    if (length && *length > limit) return Respond(TooLarge(limit), true);
    parser_->body_limit(limit);
    if (!has_body) return Dispatch();
    if (beast::iequals(msg[http::field::expect], "100-continue")) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      net::async_write(socket_, net::buffer(kContinue.data(), kContinue.size()),
                       [self = shared_from_this()](error_code ec, size_t) {
                         if (ec) return self->FailRead(ec);
                         self->ReadBody();
                       });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, size_t) {
                       if (ec) return self->FailRead(ec);
                       self->Dispatch();
                     });
  }

  static HttpResponse TooLarge(size_t limit) {
    return HttpResponse::Text(413, "413 request body too large: this route accepts at most " +
                                       std::to_string(limit) + " bytes\n");
  }

  void FailRead(const error_code& ec) {
    if (timed_out_) {
      return Respond(
          HttpResponse::Text(408, "408 request timeout: the request did not arrive within " +
                                      std::to_string(opts().read_timeout.count()) + " ms\n"),
          true);
    }
    if (ec == http::error::header_limit) {
      return Respond(
          HttpResponse::Text(431, "431 request header fields too large: at most " +
                                      std::to_string(opts().max_header_bytes) + " bytes\n"),
          true);
    }
    if (ec == http::error::body_limit) {
      const size_t limit = match_.route && match_.route->options.max_body_bytes
                               ? match_.route->options.max_body_bytes
                           : parser_ && parser_->is_header_done() ? opts().max_body_bytes
                                                                  : server_->max_body_any;
      return Respond(TooLarge(limit), true);
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
        !IsHttpParseError(ec)) {
      return Close();  // the peer went away (or the server is stopping)
    }
    Respond(
        HttpResponse::Text(400, "400 bad request: malformed HTTP request (" + ec.message() + ")\n"),
        true);
  }

  void Dispatch() {
    Disarm();
    auto& msg = parser_->get();
    for (const auto& field : msg)
      request_.headers.Add(Str(field.name_string()), Str(field.value()));
    request_.body = std::move(msg.body());
    const bool close = !msg.keep_alive();
    Respond(server_->CallHandler(*match_.route, request_), close);
  }

  void Respond(HttpResponse res, bool close) {
    Disarm();
    server_->requests.fetch_add(1);
    if (res.status >= 500) server_->r5xx.fetch_add(1);
    if (res.status >= 400 && res.status < 500) server_->r4xx.fetch_add(1);
    keep_alive_ = !close && !server_->stopping.load();
    out_head_ = SerializeResponseHead(res, keep_alive_, http10_, HttpDate(std::time(nullptr)));
    out_body_.clear();
    if (request_.method != "HEAD" && StatusAllowsBody(res.status)) out_body_ = std::move(res.body);
    Arm(opts().write_timeout);
    std::array<net::const_buffer, 2> bufs{net::buffer(out_head_), net::buffer(out_body_)};
    net::async_write(socket_, bufs, [self = shared_from_this()](error_code ec, size_t) {
      self->Disarm();
      if (ec) return self->Close();
      if (!self->keep_alive_) return self->LingerThenClose();
      self->parser_.reset();
      self->match_ = {};
      self->WaitForRequest();
    });
  }

  // Closing at once while the client is still sending (say, a body we refused)
  // makes the kernel send RST, and the client may lose our response. So stop
  // sending, read and discard for a bounded time and size, then close.
  void LingerThenClose() {
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    linger_left_ = 256 * 1024;
    Arm(std::min<std::chrono::milliseconds>(opts().read_timeout, std::chrono::seconds(2)));
    Drain();
  }
  void Drain() {
    socket_.async_read_some(net::buffer(drain_),
                            [self = shared_from_this()](error_code ec, size_t n) {
                              if (ec || n >= self->linger_left_) return self->Close();
                              self->linger_left_ -= n;
                              self->Drain();
                            });
  }

  void Close() {
    Disarm();
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  tcp::socket socket_;
  net::steady_timer timer_;
  http_detail::ServerState* server_;
  uint64_t timer_gen_ = 0;
  bool timed_out_ = false;
  bool first_request_ = true;
  bool keep_alive_ = false;
  bool http10_ = false;
  std::string remote_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpRequest request_;
  Router::Match match_;
  std::string out_head_;
  std::string out_body_;
  size_t linger_left_ = 0;
  std::array<char, 4096> drain_;
};

}  // namespace

HttpResponse http_detail::ServerState::CallHandler(const Router::Route& route,
                                                   const HttpRequest& req) {
  // The one broad catch: this is the boundary between the server and handler
  // code, and a handler that throws must cost one request, not the process.
  try {
    return route.handler(req);
  } catch (const std::exception& e) {
    exceptions.fetch_add(1);
    LogError("http handler for " + req.method + " " + route.path + " threw: " + e.what());
  } catch (...) {
    exceptions.fetch_add(1);
    LogError("http handler for " + req.method + " " + route.path + " threw a non-std exception");
  }
  return HttpResponse::Text(500, "500 internal server error\n");
}

void HttpServer::Impl::Accept() {
  acceptor->async_accept(net::make_strand(*ioc), [this](error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || stopping.load()) return;
    if (ec) {
      // Typically EMFILE: back off instead of spinning on a failing accept.
      LogError("http accept failed: " + ec.message());
      accept_backoff->expires_after(std::chrono::milliseconds(100));
      accept_backoff->async_wait([this](error_code e) {
        if (!e) Accept();
      });
      return;
    }
    accepted.fetch_add(1);
    if (open.load() >= opts.max_connections) {
      Reject(std::move(socket));
    } else {
      open.fetch_add(1);
      auto session = std::make_shared<Session>(std::move(socket), this);
      net::dispatch(session->executor(), [session] { session->Start(); });
    }
    Accept();
  });
}

void HttpServer::Impl::Reject(tcp::socket socket) {
  // Best effort and never blocking: the acceptor must not wait on a client.
  rejected.fetch_add(1);
  error_code ignored;
  socket.non_blocking(true, ignored);
  socket.write_some(net::buffer(kBusyResponse.data(), kBusyResponse.size()), ignored);
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

HttpServer::HttpServer(Options options, Router router)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(router))) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  Impl& s = *impl_;
  if (s.started) return FailedPrecondition("the HTTP server was already started");
  if (s.opts.threads < 1) return InvalidArgument("the HTTP server needs at least one thread");
  VIGIL_ASSIGN_OR_RETURN(ListenAddress listen, ParseListenAddress(s.opts.listen));
  s.ioc = std::make_unique<net::io_context>(s.opts.threads);
  s.acceptor = std::make_unique<tcp::acceptor>(*s.ioc);
  s.accept_backoff = std::make_unique<net::steady_timer>(*s.ioc);

  std::vector<tcp::endpoint> candidates;
  if (listen.host.empty()) {
    // Dual-stack "::" first; hosts without IPv6 fall back to 0.0.0.0.
    candidates = {tcp::endpoint(tcp::v6(), listen.port), tcp::endpoint(tcp::v4(), listen.port)};
  } else if (error_code ec; true) {
    auto addr = net::ip::make_address(listen.host, ec);
    if (!ec) {
      candidates.emplace_back(addr, listen.port);
    } else {
      tcp::resolver resolver(*s.ioc);
      auto results =
          resolver.resolve(listen.host, std::to_string(listen.port), tcp::resolver::passive, ec);
      if (ec || results.empty()) {
        return InvalidArgument("cannot resolve the host in --listen " + s.opts.listen + ": " +
                               ec.message());
      }
      candidates.push_back(results.begin()->endpoint());
    }
  }

  error_code ec;
  for (const auto& ep : candidates) {
    ec = {};
    s.acceptor->open(ep.protocol(), ec);
    if (ec) continue;  // e.g. IPv6 disabled in the kernel
    if (ep.address().is_v6() && ep.address().is_unspecified()) {
      s.acceptor->set_option(net::ip::v6_only(false), ec);
    }
    s.acceptor->set_option(net::socket_base::reuse_address(true), ec);
    s.acceptor->bind(ep, ec);
    if (!ec) s.acceptor->listen(net::socket_base::max_listen_connections, ec);
    if (!ec) break;
    error_code ignored;
    s.acceptor->close(ignored);
    if (ec == net::error::address_in_use || ec == net::error::access_denied) break;
  }
  if (ec) {
    s.acceptor.reset();
    return BindError(ec, s.opts.listen);
  }
  auto local = s.acceptor->local_endpoint(ec);
  s.port = local.port();
  s.address = EndpointString(local);
  s.started = true;

  s.Accept();
  for (int i = 0; i < s.opts.threads; ++i) {
    s.threads.emplace_back([&s] {
      auto guard = net::make_work_guard(*s.ioc);
      // Handlers catch their own errors; this only keeps a stray exception
      // (say bad_alloc inside Beast) from killing the thread and the process.
      for (;;) {
        try {
          s.ioc->run();
          return;
        } catch (const std::exception& e) {
          s.LogError(std::string("http server thread: unexpected exception: ") + e.what());
        }
      }
    });
    NameThread(s.threads.back(), "vigil-http");
  }
  return Status::Ok();
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (!s.started || s.stopping.exchange(true)) return;
  s.ioc->stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  s.accept_backoff.reset();
  s.acceptor.reset();
  // Destroying the io_context destroys every pending handler, and with them
  // the last references to the sessions: their sockets close here.
  s.ioc.reset();
}

uint16_t HttpServer::bound_port() const { return impl_->port; }
std::string HttpServer::bound_address() const { return impl_->address; }

HttpServerStats HttpServer::stats() const {
  const Impl& s = *impl_;
  HttpServerStats out;
  out.connections_accepted = s.accepted.load();
  out.connections_rejected = s.rejected.load();
  out.connections_open = s.open.load();
  out.requests = s.requests.load();
  out.responses_4xx = s.r4xx.load();
  out.responses_5xx = s.r5xx.load();
  out.handler_exceptions = s.exceptions.load();
  return out;
}

}  // namespace vigil::net
