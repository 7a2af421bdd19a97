#include "api/web_routes.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace vigil::api {
namespace {

constexpr WebAsset kAssets[] = {
    {"/index.html", "<!doctype html><script type=module src=/assets/app-ABC123.js></script>"},
    {"/assets/app-ABC123.js", "console.log(1)"},
    {"/assets/app-DEF456.css", "body{}"},
    {"/assets/logo.svg", "<svg/>"},
};

net::HttpResponse Get(const net::Router& router, std::string path, std::string if_none_match = "") {
  net::HttpRequest req;
  req.method = "GET";
  req.target = path;
  req.path = std::move(path);
  if (!if_none_match.empty()) req.headers.Add("If-None-Match", if_none_match);
  net::Router::Match m = router.Find(req.method, req.path);
  if (m.route == nullptr) return net::HttpResponse::Text(m.allow.empty() ? 404 : 405, "");
  return m.route->handler(req);
}

std::string Header(const net::HttpResponse& r, std::string_view name) {
  return std::string(r.headers.Get(name).value_or(""));
}

TEST(WebRoutes, IndexAtRootWithStrictPolicyAndRevalidation) {
  net::Router router;
  AddWebRoutes(&router, kAssets);
  for (std::string path : {"/", "/index.html"}) {
    net::HttpResponse r = Get(router, path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
    EXPECT_EQ(r.body, kAssets[0].body);
    EXPECT_EQ(Header(r, "Content-Security-Policy"), kWebContentSecurityPolicy);
    EXPECT_NE(Header(r, "Content-Security-Policy").find("script-src 'self'"), std::string::npos);
    // index.html names the hashed bundle, so it must never be served stale.
    EXPECT_EQ(Header(r, "Cache-Control"), "no-cache");
    EXPECT_FALSE(Header(r, "ETag").empty());
  }
}

TEST(WebRoutes, AssetsHaveTypesAndHashedOnesAreImmutable) {
  net::Router router;
  AddWebRoutes(&router, kAssets);
  net::HttpResponse js = Get(router, "/assets/app-ABC123.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(js.body, "console.log(1)");
  EXPECT_EQ(Header(js, "Cache-Control"), "public, max-age=31536000, immutable");
  net::HttpResponse css = Get(router, "/assets/app-DEF456.css");
  EXPECT_EQ(css.content_type, "text/css; charset=utf-8");
  net::HttpResponse svg = Get(router, "/assets/logo.svg");
  EXPECT_EQ(svg.content_type, "image/svg+xml");
  EXPECT_EQ(Header(svg, "Cache-Control"), "no-cache");  // no hash in the name
}

TEST(WebRoutes, MatchingEtagGives304WithoutBody) {
  net::Router router;
  AddWebRoutes(&router, kAssets);
  std::string etag = Header(Get(router, "/"), "ETag");
  ASSERT_FALSE(etag.empty());
  net::HttpResponse r = Get(router, "/", etag);
  EXPECT_EQ(r.status, 304);
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(Header(r, "ETag"), etag);
  EXPECT_EQ(Get(router, "/", "\"other\"").status, 200);
  EXPECT_EQ(Get(router, "/", "W/" + etag).status, 304);
  // Different content, different tag.
  EXPECT_NE(Header(Get(router, "/assets/app-ABC123.js"), "ETag"), etag);
}

TEST(WebRoutes, UnknownAssetIs404AndOtherPathsAreLeftAlone) {
  net::Router router;
  AddWebRoutes(&router, kAssets);
  net::HttpResponse r = Get(router, "/assets/nope.js");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Header(r, "Content-Security-Policy"), kWebContentSecurityPolicy);
  EXPECT_EQ(Get(router, "/assets/../index.html").status, 404);
  EXPECT_EQ(Get(router, "/api/v1/status").status, 404);  // not the UI's
}

TEST(WebRoutes, WithoutABuiltUiRootSaysHowToBuildIt) {
  net::Router router;
  AddWebRoutes(&router, {});
  net::HttpResponse r = Get(router, "/");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("scripts/web.sh"), std::string::npos);
  EXPECT_EQ(Header(r, "Content-Security-Policy"), kWebContentSecurityPolicy);
}

// The generated table: whatever index.html references is embedded too.
TEST(WebRoutes, EmbeddedIndexReferencesEmbeddedAssets) {
  auto assets = EmbeddedWebAssets();
  if (assets.empty()) GTEST_SKIP() << "web UI not built (scripts/web.sh)";
  net::Router router;
  AddWebRoutes(&router, assets);
  net::HttpResponse index = Get(router, "/");
  ASSERT_EQ(index.status, 200);
  std::regex ref(R"re((?:src|href)="(/assets/[^"]+)")re");
  int refs = 0;
  for (auto it = std::sregex_iterator(index.body.begin(), index.body.end(), ref);
       it != std::sregex_iterator(); ++it) {
    std::string path = (*it)[1];
    net::HttpResponse r = Get(router, path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_FALSE(r.body.empty()) << path;
    ++refs;
  }
  EXPECT_GE(refs, 2);  // one script, one stylesheet
  // No inline script: the policy would block it.
  EXPECT_EQ(index.body.find("<script>"), std::string::npos);
}

}  // namespace
}  // namespace vigil::api
