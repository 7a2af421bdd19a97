// Tests of the Boost-free parts: addresses, URLs, query strings, routing and
// response serialisation.
#include <gtest/gtest.h>

#include "net/http_client.h"
#include "net/http_internal.h"
#include "net/http_server.h"

namespace vigil::net {
namespace {

TEST(ListenAddressTest, AcceptsTheDocumentedForms) {
  auto a = ParseListenAddress("127.0.0.1:9300");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9300);
  a = ParseListenAddress("[::1]:9301");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 9301);
  a = ParseListenAddress(":0");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "");
  EXPECT_EQ(a->port, 0);
  a = ParseListenAddress("localhost:80");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "localhost");
}

TEST(ListenAddressTest, RejectsWithAHelpfulMessage) {
  for (const char* bad : {"", "9300", "host:", "host:65536", "::1:9300", "[::1]", "[::1]9300",
                          "[]:1", "h:-1", "h:12x"}) {
    auto a = ParseListenAddress(bad);
    EXPECT_FALSE(a.ok()) << bad;
    if (!a.ok()) {
      EXPECT_NE(a.status().message().find("want host:port"), std::string::npos);
    }
  }
}

TEST(PercentDecodeTest, DecodesAndRejectsBadEscapes) {
  EXPECT_EQ(*PercentDecode("a%20b%2Fc", false), "a b/c");
  EXPECT_EQ(*PercentDecode("a+b", false), "a+b");
  EXPECT_EQ(*PercentDecode("a+b", true), "a b");
  EXPECT_FALSE(PercentDecode("%", false).ok());
  EXPECT_FALSE(PercentDecode("%4", false).ok());
  EXPECT_FALSE(PercentDecode("%zz", false).ok());
}

TEST(QueryStringTest, KeepsOrderAndRepeats) {
  std::vector<std::pair<std::string, std::string>> q;
  ASSERT_TRUE(ParseQueryString("match%5B%5D=up&x=&&flag&match[]=a%3Db", &q).ok());
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[0], (std::pair<std::string, std::string>{"match[]", "up"}));
  EXPECT_EQ(q[1], (std::pair<std::string, std::string>{"x", ""}));
  EXPECT_EQ(q[2], (std::pair<std::string, std::string>{"flag", ""}));
  EXPECT_EQ(q[3], (std::pair<std::string, std::string>{"match[]", "a=b"}));
}

TEST(ParseTargetTest, SplitsPathAndQuery) {
  HttpRequest r;
  ASSERT_TRUE(ParseTarget("/api/v1/query?query=rate(x%5B5m%5D)&time=1", &r).ok());
  EXPECT_EQ(r.path, "/api/v1/query");
  EXPECT_EQ(r.Query("query").value_or(""), "rate(x[5m])");
  EXPECT_EQ(r.Query("time").value_or(""), "1");
  EXPECT_FALSE(r.Query("nope").has_value());
  ASSERT_TRUE(ParseTarget("http://example.com:9300/metrics", &r).ok());
  EXPECT_EQ(r.path, "/metrics");
  EXPECT_FALSE(ParseTarget("metrics", &r).ok());
  EXPECT_FALSE(ParseTarget("/a%00b", &r).ok());
  EXPECT_FALSE(ParseTarget("/a?x=%g", &r).ok());
}

TEST(HeadersTest, LookupIgnoresCase) {
  HttpHeaders h;
  h.Add("Content-Type", "text/plain");
  h.Add("X-A", "1");
  h.Add("x-a", "2");
  EXPECT_EQ(h.Get("content-type").value_or(""), "text/plain");
  EXPECT_EQ(h.Get("X-A").value_or(""), "1");
  h.Set("X-a", "3");
  EXPECT_EQ(h.Get("x-A").value_or(""), "3");
  EXPECT_EQ(h.fields().size(), 2u);
  EXPECT_FALSE(h.Has("missing"));
}

HttpHandler Named(std::string name) {
  return [name](const HttpRequest&) { return HttpResponse::Text(200, name); };
}

TEST(RouterTest, ExactBeatsPrefixAndLongerPrefixBeatsShorter) {
  Router r;
  r.Handle("GET", "/api/v1/query", Named("exact"));
  r.HandlePrefix("GET", "/api/", Named("api"));
  r.HandlePrefix("GET", "/api/v1/", Named("v1"));
  r.HandlePrefix("POST", "/api/", Named("post"));
  auto body = [&](std::string_view m, std::string_view p) {
    auto match = r.Find(m, p);
    return match.route ? match.route->handler(HttpRequest{}).body : "none:" + match.allow;
  };
  EXPECT_EQ(body("GET", "/api/v1/query"), "exact");
  EXPECT_EQ(body("GET", "/api/v1/labels"), "v1");
  EXPECT_EQ(body("GET", "/api/x"), "api");
  EXPECT_EQ(body("HEAD", "/api/x"), "api");
  EXPECT_EQ(body("POST", "/api/v1/query"), "post");  // falls through to the prefix
  EXPECT_EQ(body("DELETE", "/api/v1/query"), "none:GET, HEAD, POST");
  EXPECT_EQ(body("GET", "/other"), "none:");
}

TEST(RouterTest, ReRegisteringReplacesAndMaxBodyIsTheLargest) {
  Router r;
  r.Handle("POST", "/ingest", Named("old"));
  r.Handle("POST", "/ingest", Named("new"), RouteOptions{.max_body_bytes = 64 << 20});
  EXPECT_EQ(r.Find("POST", "/ingest").route->handler(HttpRequest{}).body, "new");
  EXPECT_EQ(r.MaxBodyBytes(1 << 20), size_t{64} << 20);
}

TEST(SerializeTest, WritesDefaultsAndDropsUnsafeFields) {
  HttpResponse res = HttpResponse::Json(200, "{}");
  res.headers.Add("Cache-Control", "no-store");
  res.headers.Add("X-Evil", "a\r\nSet-Cookie: x=1");
  res.headers.Add("Content-Length", "999");
  res.headers.Add("X-Frame-Options", "SAMEORIGIN");
  std::string head = SerializeResponseHead(res, true, false, "DATE");
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_NE(head.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_NE(head.find("Content-Length: 2\r\n"), std::string::npos);
  EXPECT_EQ(head.find("999"), std::string::npos);
  EXPECT_EQ(head.find("Set-Cookie"), std::string::npos);
  EXPECT_NE(head.find("X-Content-Type-Options: nosniff\r\n"), std::string::npos);
  EXPECT_NE(head.find("X-Frame-Options: SAMEORIGIN\r\n"), std::string::npos);
  EXPECT_EQ(head.find("DENY"), std::string::npos);
  EXPECT_NE(head.find("Cache-Control: no-store\r\n"), std::string::npos);
  EXPECT_EQ(head.find("Connection:"), std::string::npos);
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");
  EXPECT_NE(SerializeResponseHead(res, false, false, "D").find("Connection: close\r\n"),
            std::string::npos);
  EXPECT_NE(SerializeResponseHead(res, true, true, "D").find("Connection: keep-alive\r\n"),
            std::string::npos);
}

TEST(SerializeTest, NoContentHasNoLength) {
  std::string head = SerializeResponseHead(HttpResponse::Text(204, "ignored"), true, false, "D");
  EXPECT_EQ(head.rfind("HTTP/1.1 204 No Content\r\n", 0), 0u);
  EXPECT_EQ(head.find("Content-Length"), std::string::npos);
  EXPECT_EQ(HttpDate(0), "Thu, 01 Jan 1970 00:00:00 GMT");
}

TEST(ContentLengthTest, ReadsValidatedFields) {
  EXPECT_EQ(ParseContentLength("42").value_or(0), 42u);
  EXPECT_EQ(ParseContentLength(" 7 , 7").value_or(0), 7u);
  EXPECT_FALSE(ParseContentLength("").has_value());
  EXPECT_FALSE(ParseContentLength("x").has_value());
}

TEST(HttpUrlTest, ParsesHttpAndRefusesHttps) {
  auto u = ParseHttpUrl("http://127.0.0.1:9300/api/v1/query?query=up");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 9300);
  EXPECT_EQ(u->target, "/api/v1/query?query=up");
  u = ParseHttpUrl("HTTP://localhost");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->target, "/");
  u = ParseHttpUrl("http://[::1]:8080?x=1#frag");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->target, "/?x=1");
  u = ParseHttpUrl("http://[::1]/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(ParseHttpUrl("https://x/").status().code(), StatusCode::kUnimplemented);
  for (const char* bad : {"ftp://x/", "http://", "http://user@x/", "http://x:99999/",
                          "http://x/a b", "http://x/\r\n"}) {
    EXPECT_FALSE(ParseHttpUrl(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace vigil::net
