// For the routes' tests: a request handed to the route a router has for it,
// as the server would hand it (no socket).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "net/http_server.h"

namespace vigil::api {

using HeaderFields = std::vector<std::pair<std::string, std::string>>;

// The answer of `router`'s route for `method` and `path`, with `body` and
// `fields` as the header; a failure (and 404) when there is no route.
inline net::HttpResponse CallRoute(const net::Router& router, const std::string& method,
                                   const std::string& path, const std::string& body,
                                   const HeaderFields& fields) {
  auto m = router.Find(method, path);
  EXPECT_NE(m.route, nullptr) << method << " " << path;
  if (m.route == nullptr) return net::HttpResponse::Text(404, "");
  net::HttpRequest req;
  req.method = method;
  req.path = path;
  req.body = body;
  for (const auto& [name, value] : fields) req.headers.Add(name, value);
  return m.route->handler(req);
}

}  // namespace vigil::api
