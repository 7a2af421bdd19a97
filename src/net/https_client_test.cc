// HttpsFetch (libcurl, loaded at run time) against the real HttpServer on
// loopback over plain HTTP: what it sends and what it hands back, its bounds
// and its errors. HTTPS itself is exercised by the notification channels'
// end-to-end test (a TLS receiver with a test CA).
#include "net/https_client.h"

#include <gtest/gtest.h>

#include "net/http_server.h"

namespace vigil::net {
namespace {

class HttpsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(HttpsAvailable().ok()) << HttpsAvailable().ToString();
    Router router;
    router.Handle("POST", "/echo", [](const HttpRequest& r) {
      HttpResponse out = HttpResponse::Json(
          201, std::string(r.headers.Get("X-Sign").value_or("-")) + " " + r.body);
      return out;
    });
    router.Handle("GET", "/big", [](const HttpRequest&) {
      return HttpResponse::Text(200, std::string(100'000, 'x'));
    });
    HttpServer::Options opts;
    opts.listen = "127.0.0.1:0";
    server_ = std::make_unique<HttpServer>(std::move(opts), std::move(router));
    ASSERT_TRUE(server_->Start().ok());
    base_ = "http://127.0.0.1:" + std::to_string(server_->bound_port());
  }
  std::unique_ptr<HttpServer> server_;
  std::string base_;
};

TEST_F(HttpsClientTest, SendsHeadersAndBodyAndReturnsTheAnswer) {
  HttpClientRequest req;
  req.method = "POST";
  req.url = base_ + "/echo";
  req.headers.Add("X-Sign", "abc");
  req.headers.Add("Content-Type", "application/json");
  req.body = R"({"msg": "你好"})";
  auto r = HttpsFetch(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->body, R"(abc {"msg": "你好"})");
  EXPECT_NE(r->content_type.find("application/json"), std::string::npos);
}

TEST_F(HttpsClientTest, BoundsAndErrors) {
  HttpClientRequest req;
  req.url = base_ + "/big";
  req.max_response_bytes = 1000;
  EXPECT_EQ(HttpsFetch(req).status().code(), StatusCode::kResourceExhausted);
  req.max_response_bytes = 1'000'000;
  auto big = HttpsFetch(req);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->body.size(), 100'000u);

  req.url = base_ + "/missing";
  auto missing = HttpsFetch(req);
  ASSERT_TRUE(missing.ok()) << "a 404 is an answer";
  EXPECT_EQ(missing->status, 404);

  req.url = "ftp://127.0.0.1/x";
  EXPECT_EQ(HttpsFetch(req).status().code(), StatusCode::kInvalidArgument);
  req.url = "file:///etc/passwd";
  EXPECT_EQ(HttpsFetch(req).status().code(), StatusCode::kInvalidArgument);
  // A port nothing listens on (the server's, once stopped).
  std::string gone = base_ + "/echo";
  server_->Stop();
  req.url = gone;
  EXPECT_EQ(HttpsFetch(req).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace vigil::net
