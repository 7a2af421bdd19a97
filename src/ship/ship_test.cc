#include <gtest/gtest.h>

#include "api/http_server.h"
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
  void Start(int status) {
    api::Router router;
    router.Handle("POST", "/api/v1/ingest", [this, status](const api::HttpRequest& req) {
      received_ = req.body;
      return api::HttpResponse::Text(status, "because\n");
    });
    api::HttpServer::Options o;
    o.listen = "127.0.0.1:0";
    server_ = std::make_unique<api::HttpServer>(o, std::move(router));
    ASSERT_TRUE(server_->Start().ok());
    url_ = "http://127.0.0.1:" + std::to_string(server_->bound_port()) + "/";
  }
  std::unique_ptr<api::HttpServer> server_;
  std::string url_;
  std::string received_;
};

TEST_F(HttpTransportTest, DeliversTheFrameBytes) {
  Start(204);
  HttpTransport t(url_);
  std::string frame("VGW1\x02\x00\x01x\0\0\0\0", 12);
  ASSERT_TRUE(t.Send(frame).ok());
  EXPECT_EQ(received_, frame);
}

TEST_F(HttpTransportTest, RefusalIsPermanentAndOverloadIsRetryable) {
  Start(400);
  EXPECT_EQ(HttpTransport(url_).Send("x").code(), StatusCode::kInvalidArgument);
  server_->Stop();
  Start(503);
  EXPECT_EQ(HttpTransport(url_).Send("x").code(), StatusCode::kUnavailable);
}

TEST(HttpTransportDownTest, UnreachableServerIsRetryable) {
  // Port 1 on loopback: nothing listens there.
  Status st = HttpTransport("http://127.0.0.1:1", std::chrono::milliseconds(2000)).Send("x");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("cannot reach"), std::string::npos);
}

}  // namespace
}  // namespace vigil::ship
