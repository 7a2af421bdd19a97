#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "net/http_server.h"
#include "ship/backoff.h"
#include "ship/http_transport.h"

namespace vigil::ship {
namespace {

TEST(BackoffTest, GrowsWithJitterUpToTheCapAndResets) {
  Backoff b({.initial_ms = 100, .max_ms = 1000, .multiplier = 2.0, .jitter = 0.5}, 42);
  int64_t ceilings[] = {100, 200, 400, 800, 1000, 1000};
  for (int64_t ceiling : ceilings) {
    int64_t d = b.NextDelayMs();
    EXPECT_GE(d, ceiling / 2);
    EXPECT_LE(d, ceiling);
  }
  EXPECT_EQ(b.consecutive_failures(), 6u);
  b.Reset();
  EXPECT_LE(b.NextDelayMs(), 100);
  EXPECT_EQ(b.consecutive_failures(), 1u);
}

TEST(BackoffTest, AgentsDoNotRetryInLockstep) {
  Backoff a({}, 1), c({}, 2);
  int same = 0;
  for (int i = 0; i < 10; ++i) same += a.NextDelayMs() == c.NextDelayMs();
  EXPECT_LT(same, 3);
}

class HttpTransportTest : public ::testing::Test {
 protected:
  void Start(int status, uint16_t port = 0) {
    status_ = status;
    net::Router router;
    router.Handle("POST", "/api/v1/ingest", [this](const net::HttpRequest& req) {
      std::lock_guard lock(mu_);
      received_ = req.body;
      ++frames_;
      return net::HttpResponse::Text(status_.load(), "because\n");
    });
    net::HttpServer::Options o;
    o.listen = "127.0.0.1:" + std::to_string(port);
    server_ = std::make_unique<net::HttpServer>(o, std::move(router));
    ASSERT_TRUE(server_->Start().ok());
    url_ = "http://127.0.0.1:" + std::to_string(server_->bound_port()) + "/";
  }
  // What the handler (on a server thread) saw.
  std::string Received() {
    std::lock_guard lock(mu_);
    return received_;
  }
  int Frames() {
    std::lock_guard lock(mu_);
    return frames_;
  }

  std::unique_ptr<net::HttpServer> server_;
  std::string url_;
  std::atomic<int> status_{204};
  std::mutex mu_;
  std::string received_;
  int frames_ = 0;
};

TEST_F(HttpTransportTest, DeliversTheFrameBytes) {
  Start(204);
  HttpTransport t(url_);
  std::string frame("VGW1\x02\x00\x01x\0\0\0\0", 12);
  ASSERT_TRUE(t.Send(frame).ok());
  EXPECT_EQ(Received(), frame);
}

TEST_F(HttpTransportTest, RefusalIsPermanentAndOverloadIsRetryable) {
  Start(400);
  EXPECT_EQ(HttpTransport(url_).Send("x").code(), StatusCode::kInvalidArgument);
  server_->Stop();
  Start(503);
  EXPECT_EQ(HttpTransport(url_).Send("x").code(), StatusCode::kUnavailable);
}

TEST_F(HttpTransportTest, FramesShareOneKeepAliveConnection) {
  Start(204);
  HttpTransport t(url_);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(t.Send("frame" + std::to_string(i)).ok());
  // A refusal or an overload is an answer: the connection stays.
  status_ = 400;
  EXPECT_EQ(t.Send("x").code(), StatusCode::kInvalidArgument);
  status_ = 503;
  EXPECT_EQ(t.Send("x").code(), StatusCode::kUnavailable);
  status_ = 204;
  ASSERT_TRUE(t.Send("last").ok());
  EXPECT_EQ(Received(), "last");
  EXPECT_EQ(Frames(), 8);
  EXPECT_EQ(server_->stats().connections_accepted, 1u);
}

TEST_F(HttpTransportTest, ReconnectsWhenTheServerComesBack) {
  Start(204);
  const uint16_t port = server_->bound_port();
  HttpTransport t(url_, std::chrono::milliseconds(2000));
  ASSERT_TRUE(t.Send("a").ok());
  server_->Stop();
  Status st = t.Send("b");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("cannot reach"), std::string::npos) << st.ToString();
  Start(204, port);
  ASSERT_TRUE(t.Send("c").ok());
  EXPECT_EQ(Received(), "c");
}

TEST_F(HttpTransportTest, SeveralThreadsShareOneTransport) {
  // The metrics loop and the log agent send through the same transport.
  Start(204);
  HttpTransport t(url_);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 20; ++j) ok += t.Send(std::string(1000, 'f')).ok();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 80);
  EXPECT_EQ(Frames(), 80);
  EXPECT_EQ(server_->stats().connections_accepted, 1u);
}

TEST(HttpTransportDownTest, UnreachableServerIsRetryable) {
  // Port 1 on loopback: nothing listens there.
  Status st = HttpTransport("http://127.0.0.1:1", std::chrono::milliseconds(2000)).Send("x");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("cannot reach"), std::string::npos);
}

}  // namespace
}  // namespace vigil::ship
