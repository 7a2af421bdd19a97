// HttpConnection (keep-alive client) over loopback: against the real
// HttpServer, and against a raw-socket server for what the real one never does
// (close after every response, answer halfway, never answer). Connections are
// counted on the server side. No test asserts on timing: timeouts are short
// only so that the tests finish quickly.
#include "net/http_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <thread>

#include "net/http_server.h"

namespace vigil::net {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kTimeout{10'000};

// Reads one request (header and Content-Length body); "" when the peer
// closed first.
std::string ReadRequest(int fd) {
  std::string in;
  char buf[4096];
  for (;;) {
    size_t end = in.find("\r\n\r\n");
    if (end != std::string::npos) {
      size_t len = 0;
      size_t cl = in.find("Content-Length: ");
      if (cl != std::string::npos && cl < end) len = std::stoul(in.substr(cl + 16));
      if (in.size() >= end + 4 + len) return in;
    }
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return "";
    in.append(buf, static_cast<size_t>(n));
  }
}

void SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

// A loopback server on one thread: `serve(fd, index)` handles the index-th
// accepted connection, which is closed when it returns.
class RawServer {
 public:
  using Serve = std::function<void(int fd, int index, const std::atomic<bool>& stopping)>;
  explicit RawServer(Serve serve) : serve_(std::move(serve)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listen_fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      for (int i = 0;; ++i) {
        int fd = ::accept(listen_fd_, nullptr, nullptr);
        if (fd < 0) return;  // shut down
        accepted_.fetch_add(1);
        // Only keeps a broken client from hanging the test run.
        timeval tv{30, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        serve_(fd, i, stopping_);
        ::close(fd);
      }
    });
  }
  ~RawServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(listen_fd_);
  }
  std::string url(std::string_view path = "/") const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }
  int accepted() const { return accepted_.load(); }

 private:
  Serve serve_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<int> accepted_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

HttpClientRequest Get(std::string url, milliseconds timeout = kTimeout) {
  HttpClientRequest r;
  r.url = std::move(url);
  r.timeout = timeout;
  return r;
}

class HttpConnectionTest : public ::testing::Test {
 protected:
  void StartServer(HttpServer::Options opts = {}, uint16_t port = 0) {
    opts.listen = "127.0.0.1:" + std::to_string(port);
    Router router;
    // Answers with the client's address: the same port means the same connection.
    router.Handle("GET", "/peer", [this](const HttpRequest& r) {
      handled_.fetch_add(1);
      return HttpResponse::Text(200, r.remote_address);
    });
    router.Handle("POST", "/echo", [this](const HttpRequest& r) {
      handled_.fetch_add(1);
      return HttpResponse::Text(200, r.body);
    });
    router.Handle("GET", "/status", [this](const HttpRequest& r) {
      handled_.fetch_add(1);
      return HttpResponse::Text(std::stoi(std::string(r.Query("code").value_or("200"))), "");
    });
    server_ = std::make_unique<HttpServer>(std::move(opts), std::move(router));
    Status st = server_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
    base_ = "http://127.0.0.1:" + std::to_string(server_->bound_port());
  }
  // Waits (bounded) until the server has closed every connection.
  bool WaitForNoOpenConnections() {
    for (int i = 0; i < 1000; ++i) {
      if (server_->stats().connections_open == 0) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }

  std::unique_ptr<HttpServer> server_;
  std::string base_;
  std::atomic<int> handled_{0};
};

TEST_F(HttpConnectionTest, RequestsShareOneConnection) {
  StartServer();
  HttpConnection conn;
  EXPECT_FALSE(conn.is_open());
  std::string first_peer;
  for (int i = 0; i < 10; ++i) {
    auto res = conn.Fetch(Get(base_ + "/peer"));
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    EXPECT_EQ(res->status, 200);
    if (i == 0) first_peer = res->body;
    EXPECT_EQ(res->body, first_peer);
    EXPECT_TRUE(conn.is_open());
  }
  // POST bodies, an error status and HEAD keep the connection too.
  HttpClientRequest post = Get(base_ + "/echo");
  post.method = "POST";
  post.body = std::string(100000, 'b');
  auto res = conn.Fetch(post);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->body, post.body);
  res = conn.Fetch(Get(base_ + "/status?code=400"));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 400);
  HttpClientRequest head = Get(base_ + "/peer");
  head.method = "HEAD";
  res = conn.Fetch(head);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->body, "");
  res = conn.Fetch(Get(base_ + "/peer"));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->body, first_peer);
  EXPECT_EQ(server_->stats().connections_accepted, 1u);
  EXPECT_EQ(handled_.load(), 14);
}

TEST_F(HttpConnectionTest, HttpFetchUsesAConnectionPerRequest) {
  StartServer();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(HttpGet(base_ + "/peer", kTimeout).ok());
  EXPECT_EQ(server_->stats().connections_accepted, 3u);
}

TEST_F(HttpConnectionTest, ConnectionCloseClosesIt) {
  StartServer();
  HttpConnection conn;
  HttpClientRequest r = Get(base_ + "/peer");
  r.headers.Add("Connection", "close");
  ASSERT_TRUE(conn.Fetch(r).ok());
  EXPECT_FALSE(conn.is_open());
  ASSERT_TRUE(conn.Fetch(Get(base_ + "/peer")).ok());
  EXPECT_TRUE(conn.is_open());
  EXPECT_EQ(server_->stats().connections_accepted, 2u);
  conn.Close();
  EXPECT_FALSE(conn.is_open());
}

TEST_F(HttpConnectionTest, ReconnectsAfterTheServerClosedTheIdleConnection) {
  HttpServer::Options opts;
  opts.idle_timeout = milliseconds(100);
  StartServer(opts);
  HttpConnection conn;
  ASSERT_TRUE(conn.Fetch(Get(base_ + "/peer")).ok());
  ASSERT_TRUE(WaitForNoOpenConnections());
  EXPECT_TRUE(conn.is_open());  // the client has not noticed yet
  auto res = conn.Fetch(Get(base_ + "/peer"));
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(server_->stats().connections_accepted, 2u);
  EXPECT_EQ(handled_.load(), 2);  // sent twice, handled once each
}

TEST_F(HttpConnectionTest, ReconnectsAfterTheServerRestarts) {
  StartServer();
  const uint16_t port = server_->bound_port();
  HttpConnection conn;
  ASSERT_TRUE(conn.Fetch(Get(base_ + "/peer")).ok());
  server_->Stop();
  StartServer({}, port);
  auto res = conn.Fetch(Get(base_ + "/peer"));  // on the dead connection, then a new one
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(handled_.load(), 2);
  // Down: the reconnect is refused, and that is the error.
  server_->Stop();
  res = conn.Fetch(Get(base_ + "/peer", milliseconds(2000)));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(res.status().message().find("cannot connect to"), std::string::npos)
      << res.status().ToString();
  EXPECT_FALSE(conn.is_open());
}

TEST_F(HttpConnectionTest, ReconnectsWhenTheHostChanges) {
  StartServer();
  auto first = std::move(server_);
  const std::string first_base = base_;
  StartServer();
  HttpConnection conn;
  ASSERT_TRUE(conn.Fetch(Get(first_base + "/peer")).ok());
  ASSERT_TRUE(conn.Fetch(Get(base_ + "/peer")).ok());
  ASSERT_TRUE(conn.Fetch(Get(base_ + "/peer")).ok());
  EXPECT_EQ(first->stats().connections_accepted, 1u);
  EXPECT_EQ(server_->stats().connections_accepted, 1u);
}

TEST(HttpConnectionRawTest, ServerThatClosesAfterEveryResponse) {
  // Says nothing about closing (as a proxy that drops idle connections at
  // once): every reuse fails before a byte of response, and is resent once.
  std::atomic<int> requests{0};
  RawServer server([&](int fd, int, const std::atomic<bool>&) {
    if (ReadRequest(fd).empty()) return;
    requests.fetch_add(1);
    SendAll(fd, kOk);
  });
  HttpConnection conn;
  for (int i = 0; i < 5; ++i) {
    auto res = conn.Fetch(Get(server.url()));
    ASSERT_TRUE(res.ok()) << i << ": " << res.status().ToString();
    EXPECT_EQ(res->body, "ok");
  }
  EXPECT_EQ(requests.load(), 5);
  EXPECT_EQ(server.accepted(), 5);
}

TEST(HttpConnectionRawTest, APartialResponseIsNotResent) {
  std::atomic<int> requests{0};
  RawServer server([&](int fd, int, const std::atomic<bool>&) {
    if (ReadRequest(fd).empty()) return;
    requests.fetch_add(1);
    SendAll(fd, kOk);
    if (ReadRequest(fd).empty()) return;
    requests.fetch_add(1);
    SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok");  // then closes
  });
  HttpConnection conn;
  ASSERT_TRUE(conn.Fetch(Get(server.url())).ok());
  auto res = conn.Fetch(Get(server.url()));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kUnavailable) << res.status().ToString();
  EXPECT_FALSE(conn.is_open());
  EXPECT_EQ(requests.load(), 2);
  EXPECT_EQ(server.accepted(), 1);
}

TEST(HttpConnectionRawTest, DeadlineBoundsAStuckServerOnAReusedConnection) {
  std::atomic<int> requests{0};
  RawServer server([&](int fd, int, const std::atomic<bool>& stopping) {
    if (ReadRequest(fd).empty()) return;
    requests.fetch_add(1);
    SendAll(fd, kOk);
    if (ReadRequest(fd).empty()) return;
    requests.fetch_add(1);
    while (!stopping.load()) std::this_thread::sleep_for(milliseconds(5));  // never answers
  });
  HttpConnection conn;
  ASSERT_TRUE(conn.Fetch(Get(server.url())).ok());
  auto res = conn.Fetch(Get(server.url(), milliseconds(200)));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kDeadlineExceeded) << res.status().ToString();
  EXPECT_FALSE(conn.is_open());
  EXPECT_EQ(requests.load(), 2);  // not resent
  EXPECT_EQ(server.accepted(), 1);
}

TEST(HttpConnectionRawTest, ResponseLimitsHoldOnAReusedConnection) {
  RawServer server([](int fd, int, const std::atomic<bool>&) {
    while (!ReadRequest(fd).empty()) SendAll(fd, kOk);
  });
  HttpConnection conn;
  HttpClientRequest r = Get(server.url());
  ASSERT_TRUE(conn.Fetch(r).ok());
  r.max_response_bytes = 1;
  auto res = conn.Fetch(r);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE(conn.is_open());
  r.max_response_bytes = kDefaultMaxResponseBytes;
  ASSERT_TRUE(conn.Fetch(r).ok());
  EXPECT_EQ(server.accepted(), 2);
}

}  // namespace
}  // namespace vigil::net
