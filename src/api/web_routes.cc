#include "api/web_routes.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace vigil::api {
namespace {

struct Served {
  std::string content_type;
  std::string_view body;
  std::string etag;
  bool immutable = false;
};

// Path -> response parts, built once. Shared by the route handlers, which
// std::function requires to be copyable; it is immutable after construction.
using Table = std::map<std::string, Served, std::less<>>;

std::string_view Extension(std::string_view path) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return {};
  return path.substr(dot);
}

std::string ContentTypeFor(std::string_view path) {
  static const std::map<std::string_view, std::string_view> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},
      {".txt", "text/plain; charset=utf-8"},
  };
  auto it = kTypes.find(Extension(path));
  return std::string(it == kTypes.end() ? "application/octet-stream" : it->second);
}

// A strong validator from the content: FNV-1a is enough to tell versions of
// our own files apart, and needs no crypto library.
std::string EtagFor(std::string_view body) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : body) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[24];
  std::snprintf(buf, sizeof(buf), "\"%016llx\"", static_cast<unsigned long long>(h));
  return buf;
}

// esbuild names bundle files "<name>-<HASH>.<ext>", so a changed file gets a
// new name and the old one can be cached forever.
bool HasContentHash(std::string_view path) {
  return path.starts_with("/assets/") && path.find('-') != std::string_view::npos;
}

// True when If-None-Match lists our tag (or "*"). Weak tags ("W/...") match
// too: RFC 9110 compares them weakly for GET.
bool NotModified(const net::HttpRequest& req, std::string_view etag) {
  auto inm = req.Header("If-None-Match");
  if (!inm) return false;
  std::string_view v = *inm;
  if (v.find('*') != std::string_view::npos) return true;
  return v.find(etag) != std::string_view::npos;
}

constexpr std::string_view kNotBuiltPage =
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Vigil</title></head>"
    "<body><h1>Vigil</h1><p>This binary was built without its web UI. Build it with "
    "<code>scripts/web.sh</code> (needs Node.js and npm), then rebuild Vigil.</p>"
    "<p>The API works without it: <a href=\"/api/v1/status\">/api/v1/status</a>, "
    "<a href=\"/metrics\">/metrics</a>.</p></body></html>\n";

net::HttpResponse Serve(const Served& s, const net::HttpRequest& req) {
  net::HttpResponse res;
  res.headers.Set("Content-Security-Policy", std::string(kWebContentSecurityPolicy));
  res.headers.Set("ETag", s.etag);
  res.headers.Set("Cache-Control",
                  s.immutable ? "public, max-age=31536000, immutable" : "no-cache");
  if (NotModified(req, s.etag)) {
    res.status = 304;
    return res;
  }
  res.content_type = s.content_type;
  res.body = std::string(s.body);
  return res;
}

net::HttpResponse NotFound(const net::HttpRequest& req) {
  net::HttpResponse res =
      net::HttpResponse::Text(404, "404 not found: no UI asset " + req.path + "\n");
  res.headers.Set("Content-Security-Policy", std::string(kWebContentSecurityPolicy));
  return res;
}

}  // namespace

void AddWebRoutes(net::Router* router, std::span<const WebAsset> assets) {
  auto table = std::make_shared<Table>();
  for (const WebAsset& a : assets) {
    Served s{ContentTypeFor(a.path), a.body, EtagFor(a.body), HasContentHash(a.path)};
    table->emplace(std::string(a.path), std::move(s));
  }
  if (!table->contains("/index.html")) {
    table->emplace("/index.html",
                   Served{ContentTypeFor(".html"), kNotBuiltPage, EtagFor(kNotBuiltPage), false});
  }
  std::shared_ptr<const Table> shared = std::move(table);
  auto index = [shared](const net::HttpRequest& req) {
    return Serve(shared->find("/index.html")->second, req);
  };
  router->Handle("GET", "/", index);
  router->Handle("GET", "/index.html", index);
  router->HandlePrefix("GET", "/assets/", [shared](const net::HttpRequest& req) {
    auto it = shared->find(req.path);
    return it == shared->end() ? NotFound(req) : Serve(it->second, req);
  });
}

}  // namespace vigil::api
