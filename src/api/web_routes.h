// The built-in web UI: index.html at "/" and the bundle under "/assets/",
// embedded into the binary at build time from web/dist (docs/web-ui.md).
//
// Every response carries a strict Content-Security-Policy (scripts and styles
// from this origin only, no inline script), so a label value that reached the
// page could not run as script even if the UI rendered it as HTML (it renders
// untrusted strings as text). Hashed asset names are cached for a year;
// index.html is revalidated with its ETag, so a new binary's UI shows at once.
#pragma once

#include <span>
#include <string_view>

#include "net/http_server.h"

namespace vigil::api {

struct WebAsset {
  std::string_view path;  // "/index.html", "/assets/app-7WADJLF7.js"
  std::string_view body;
};

// The assets embedded in this binary (generated from web/dist by
// cmake/embed_assets.cmake). Empty when the UI was not built: "/" then serves
// a page that says how to build it.
std::span<const WebAsset> EmbeddedWebAssets();

// The policy every UI response carries.
inline constexpr std::string_view kWebContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

// Registers GET "/", "/index.html" and the "/assets/" prefix. The assets must
// outlive the router (embedded ones are static).
void AddWebRoutes(net::Router* router, std::span<const WebAsset> assets);
inline void AddWebRoutes(net::Router* router) { AddWebRoutes(router, EmbeddedWebAssets()); }

}  // namespace vigil::api
