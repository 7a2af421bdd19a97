// HttpServer end to end over loopback, with the client and with raw sockets
// for what a well-behaved client never sends. No test asserts on timing:
// timeouts are short only so that the tests finish quickly.
#include "net/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "net/http_client.h"

namespace vigil::net {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kTimeout{10'000};

// A blocking loopback connection. The receive timeout only keeps a broken
// server from hanging the test run; no assertion depends on it.
class RawConn {
 public:
  explicit RawConn(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{30, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConn() { ::close(fd_); }
  bool connected() const { return connected_; }

  void Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      data.remove_prefix(static_cast<size_t>(n));
    }
  }
  // Everything until the server closes the connection.
  std::string ReadAll() {
    std::string out;
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  // One response with a Content-Length body (what our server sends).
  std::string ReadResponse() {
    for (;;) {
      size_t end = pending_.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t len = 0;
        size_t cl = pending_.find("Content-Length: ");
        if (cl != std::string::npos && cl < end) len = std::stoul(pending_.substr(cl + 16));
        if (pending_.size() >= end + 4 + len) {
          std::string res = pending_.substr(0, end + 4 + len);
          pending_.erase(0, end + 4 + len);
          return res;
        }
      }
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return std::exchange(pending_, "");
      pending_.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

bool StartsWith(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpServer::Options opts = {}) {
    opts.listen = "127.0.0.1:0";
    opts.error_log = [this](std::string_view m) {
      std::lock_guard lock(log_mu_);
      log_.emplace_back(m);
    };
    Router router;
    router.Handle("GET", "/hello",
                  [](const HttpRequest&) { return HttpResponse::Text(200, "hi"); });
    router.Handle("GET", "/echo", [](const HttpRequest& r) {
      std::string out = r.path;
      for (auto v : r.QueryAll("a")) out += "|" + std::string(v);
      out += "|ua=" + std::string(r.Header("USER-AGENT").value_or(""));
      return HttpResponse::Text(200, out);
    });
    router.Handle("POST", "/small", [](const HttpRequest& r) {
      return HttpResponse::Text(200, std::to_string(r.body.size()));
    });
    router.Handle(
        "POST", "/big",
        [](const HttpRequest& r) { return HttpResponse::Text(200, std::to_string(r.body.size())); },
        RouteOptions{.max_body_bytes = 64 * 1024});
    router.Handle("GET", "/throw",
                  [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
    router.Handle("GET", "/count", [this](const HttpRequest&) {
      handled_.fetch_add(1);
      return HttpResponse::Text(200, "ok");
    });
    server_ = std::make_unique<HttpServer>(std::move(opts), std::move(router));
    Status st = server_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_NE(server_->bound_port(), 0);
    base_ = "http://127.0.0.1:" + std::to_string(server_->bound_port());
  }
  uint16_t port() const { return server_->bound_port(); }

  std::unique_ptr<HttpServer> server_;
  std::string base_;
  std::atomic<int> handled_{0};
  std::mutex log_mu_;
  std::vector<std::string> log_;
};

TEST_F(HttpServerTest, GetAndHead) {
  StartServer();
  auto res = HttpGet(base_ + "/hello", kTimeout);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "hi");
  EXPECT_EQ(res->content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(res->headers.Get("x-content-type-options").value_or(""), "nosniff");
  EXPECT_EQ(res->headers.Get("content-length").value_or(""), "2");
  EXPECT_TRUE(res->headers.Has("Date"));

  HttpClientRequest head;
  head.method = "HEAD";
  head.url = base_ + "/hello";
  res = HttpFetch(head);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "");
  EXPECT_EQ(res->headers.Get("Content-Length").value_or(""), "2");
}

TEST_F(HttpServerTest, QueryAndHeadersReachTheHandler) {
  StartServer();
  auto res = HttpGet(base_ + "/echo?a=1&b=2&a=x%20y+z", kTimeout);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->body, "/echo|1|x y z|ua=vigil/0.1.0");
}

TEST_F(HttpServerTest, UnknownPathIs404AndWrongMethodIs405) {
  StartServer();
  auto res = HttpGet(base_ + "/nope", kTimeout);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 404);
  EXPECT_NE(res->body.find("/nope"), std::string::npos);
  res = HttpPost(base_ + "/hello", "x", "text/plain", kTimeout);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->headers.Get("Allow").value_or(""), "GET, HEAD");
}

TEST_F(HttpServerTest, BodyLimitsPerRoute) {
  HttpServer::Options opts;
  opts.max_body_bytes = 1024;
  StartServer(opts);
  auto res = HttpPost(base_ + "/small", std::string(1024, 'x'), "text/plain", kTimeout);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "1024");
  res = HttpPost(base_ + "/small", std::string(2048, 'x'), "text/plain", kTimeout);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 413);
  res = HttpPost(base_ + "/big", std::string(60 * 1024, 'x'), "text/plain", kTimeout);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, std::to_string(60 * 1024));
  res = HttpPost(base_ + "/big", std::string(65 * 1024, 'x'), "text/plain", kTimeout);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 413);

  // A chunked body has no Content-Length; the limit applies while reading.
  RawConn c(port());
  c.Send("POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  c.Send("800\r\n" + std::string(2048, 'y') + "\r\n0\r\n\r\n");
  EXPECT_TRUE(StartsWith(c.ReadResponse(), "HTTP/1.1 413"));
}

TEST_F(HttpServerTest, HugeHeaderIs431) {
  StartServer();
  HttpClientRequest r;
  r.url = base_ + "/hello";
  r.headers.Add("X-Big", std::string(16 * 1024, 'h'));
  auto res = HttpFetch(r);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 431);
}

TEST_F(HttpServerTest, MalformedRequestsGet400AndTheServerGoesOn) {
  StartServer();
  for (const std::string& bad : std::vector<std::string>{
           "GARBAGE\r\n\r\n", "GET /hello HTTP/9\r\n\r\n", "GET hello HTTP/1.1\r\n\r\n",
           "GET /%zz HTTP/1.1\r\n\r\n", "GET /hello HTTP/1.1\r\nBad Header\r\n\r\n",
           std::string("GET /a\0b HTTP/1.1\r\n\r\n", 22)}) {
    RawConn c(port());
    ASSERT_TRUE(c.connected());
    c.Send(bad);
    std::string res = c.ReadAll();
    EXPECT_TRUE(StartsWith(res, "HTTP/1.1 400")) << bad << " -> " << res;
  }
  auto res = HttpGet(base_ + "/hello", kTimeout);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 200);
}

TEST_F(HttpServerTest, SlowClientGets408WithoutBlockingOthers) {
  HttpServer::Options opts;
  opts.threads = 1;  // the slow client must not hold the only thread
  opts.read_timeout = milliseconds(300);
  StartServer(opts);
  RawConn slow(port());
  slow.Send("GET /hello HTTP/1.1\r\nHost: x\r\n");  // never finishes the header
  for (int i = 0; i < 5; ++i) {
    auto res = HttpGet(base_ + "/hello", kTimeout);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    EXPECT_EQ(res->status, 200);
  }
  std::string res = slow.ReadAll();
  EXPECT_TRUE(StartsWith(res, "HTTP/1.1 408")) << res;
  EXPECT_NE(res.find("Connection: close"), std::string::npos);
}

TEST_F(HttpServerTest, SilentConnectionIsClosed) {
  HttpServer::Options opts;
  opts.read_timeout = milliseconds(200);
  StartServer(opts);
  RawConn silent(port());
  EXPECT_EQ(silent.ReadAll(), "");  // closed without a response
}

TEST_F(HttpServerTest, KeepAliveReusesOneConnection) {
  StartServer();
  RawConn c(port());
  for (int i = 0; i < 3; ++i) {
    c.Send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string res = c.ReadResponse();
    EXPECT_TRUE(StartsWith(res, "HTTP/1.1 200")) << res;
    EXPECT_EQ(res.find("Connection: close"), std::string::npos);
  }
  // Pipelined: two requests in one write, two responses in order.
  c.Send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /echo?a=p HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(c.ReadResponse().find("\r\n\r\nhi"), std::string::npos);
  EXPECT_NE(c.ReadResponse().find("/echo|p"), std::string::npos);
  EXPECT_EQ(server_->stats().connections_accepted, 1u);
  // Connection: close is honoured.
  c.Send("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string last = c.ReadAll();
  EXPECT_NE(last.find("Connection: close"), std::string::npos);
}

TEST_F(HttpServerTest, Http10ClosesUnlessAskedToKeepAlive) {
  StartServer();
  RawConn c(port());
  c.Send("GET /hello HTTP/1.0\r\n\r\n");
  std::string res = c.ReadAll();
  EXPECT_TRUE(StartsWith(res, "HTTP/1.1 200")) << res;
  EXPECT_NE(res.find("Connection: close"), std::string::npos);
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionIsClosed) {
  HttpServer::Options opts;
  opts.idle_timeout = milliseconds(200);
  StartServer(opts);
  RawConn c(port());
  c.Send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(StartsWith(c.ReadResponse(), "HTTP/1.1 200"));
  EXPECT_EQ(c.ReadAll(), "");
}

TEST_F(HttpServerTest, ExpectContinue) {
  StartServer();
  RawConn c(port());
  c.Send("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_TRUE(StartsWith(c.ReadResponse(), "HTTP/1.1 100 Continue"));
  c.Send("hello");
  std::string res = c.ReadResponse();
  EXPECT_TRUE(StartsWith(res, "HTTP/1.1 200")) << res;
  EXPECT_NE(res.find("\r\n\r\n5"), std::string::npos);
}

TEST_F(HttpServerTest, ConcurrentClients) {
  StartServer();
  constexpr int kThreads = 8, kEach = 40;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        auto res = HttpGet(base_ + "/count", kTimeout);
        if (res.ok() && res->status == 200 && res->body == "ok") ok.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kEach);
  EXPECT_EQ(handled_.load(), kThreads * kEach);
}

TEST_F(HttpServerTest, ThrowingHandlerGives500AndTheServerGoesOn) {
  StartServer();
  auto res = HttpGet(base_ + "/throw", kTimeout);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 500);
  res = HttpGet(base_ + "/hello", kTimeout);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(server_->stats().handler_exceptions, 1u);
  std::lock_guard lock(log_mu_);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("boom"), std::string::npos);
}

TEST_F(HttpServerTest, ConnectionsOverTheCapGet503) {
  HttpServer::Options opts;
  opts.max_connections = 2;
  StartServer(opts);
  RawConn a(port()), b(port());
  for (RawConn* c : {&a, &b}) {  // a served request proves the connection is counted
    c->Send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_TRUE(StartsWith(c->ReadResponse(), "HTTP/1.1 200"));
  }
  RawConn over(port());
  std::string res = over.ReadAll();
  EXPECT_TRUE(StartsWith(res, "HTTP/1.1 503")) << res;
  EXPECT_EQ(server_->stats().connections_rejected, 1u);
}

TEST_F(HttpServerTest, PortInUseSaysWhatToDo) {
  StartServer();
  HttpServer::Options opts;
  opts.listen = "127.0.0.1:" + std::to_string(port());
  HttpServer second(opts, Router{});
  Status st = second.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "address " + opts.listen +
                              " is already in use; is another Vigil running? stop it with "
                              "`vigil down` or pick another --listen");
}

TEST_F(HttpServerTest, BadListenAddressIsAnError) {
  HttpServer::Options opts;
  opts.listen = "nonsense";
  HttpServer s(opts, Router{});
  EXPECT_EQ(s.Start().code(), StatusCode::kInvalidArgument);
}

TEST_F(HttpServerTest, AllInterfacesAndIpv6Forms) {
  for (const char* listen : {":0", "[::1]:0", "localhost:0"}) {
    HttpServer::Options opts;
    opts.listen = listen;
    Router router;
    router.Handle("GET", "/", [](const HttpRequest&) { return HttpResponse::Text(200, "root"); });
    HttpServer s(opts, std::move(router));
    Status st = s.Start();
    if (!st.ok() && std::string(listen) == "[::1]:0") continue;  // host without IPv6
    ASSERT_TRUE(st.ok()) << listen << ": " << st.ToString();
    EXPECT_FALSE(s.bound_address().empty());
    std::string host = std::string(listen) == "[::1]:0" ? "[::1]" : "127.0.0.1";
    if (std::string(listen) == "localhost:0") host = "localhost";
    auto res = HttpGet("http://" + host + ":" + std::to_string(s.bound_port()) + "/", kTimeout);
    ASSERT_TRUE(res.ok()) << listen << ": " << res.status().ToString();
    EXPECT_EQ(res->body, "root");
  }
}

TEST_F(HttpServerTest, StopWhileClientsAreConnected) {
  StartServer();
  RawConn idle(port()), mid(port()), kept(port());
  mid.Send("GET /hello HTTP/1.1\r\nHost: x\r\n");
  kept.Send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(StartsWith(kept.ReadResponse(), "HTTP/1.1 200"));
  server_->Stop();
  EXPECT_EQ(idle.ReadAll(), "");
  EXPECT_EQ(mid.ReadAll(), "");
  EXPECT_EQ(kept.ReadAll(), "");
  server_->Stop();  // idempotent
  auto res = HttpGet(base_ + "/hello", milliseconds(2000));
  EXPECT_FALSE(res.ok());
}

TEST(HttpClientTest, ConnectionRefusedAndBadUrls) {
  // Bind and close to find a port that is (almost certainly) not listening.
  HttpServer::Options opts;
  opts.listen = "127.0.0.1:0";
  uint16_t port;
  {
    HttpServer s(opts, Router{});
    ASSERT_TRUE(s.Start().ok());
    port = s.bound_port();
  }
  auto res = HttpGet("http://127.0.0.1:" + std::to_string(port) + "/", kTimeout);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(res.status().message().find("cannot connect to http://127.0.0.1:"), std::string::npos);
  EXPECT_EQ(HttpGet("https://127.0.0.1/", kTimeout).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(HttpGet("nonsense", kTimeout).status().code(), StatusCode::kInvalidArgument);
}

TEST(HttpClientTest, ResponseSizeIsBounded) {
  HttpServer::Options opts;
  opts.listen = "127.0.0.1:0";
  Router router;
  router.Handle("GET", "/big", [](const HttpRequest&) {
    return HttpResponse::Text(200, std::string(100000, 'z'));
  });
  HttpServer s(opts, std::move(router));
  ASSERT_TRUE(s.Start().ok());
  HttpClientRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(s.bound_port()) + "/big";
  r.max_response_bytes = 1000;
  auto res = HttpFetch(r);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kResourceExhausted);
  r.max_response_bytes = 100000;
  res = HttpFetch(r);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->body.size(), 100000u);
}

TEST(HttpClientTest, DeadlineWhenTheServerNeverAnswers) {
  // A listening socket that never accepts: connect succeeds (backlog), no reply.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  auto res =
      HttpGet("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/", milliseconds(200));
  ::close(fd);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace vigil::net
