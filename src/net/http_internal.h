// Private to vigil_net: the Boost-free pieces of the server and client
// (request-target parsing, response serialisation), kept out of the Beast
// translation units so they compile fast and can be unit-tested directly.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "net/http_server.h"

namespace vigil::net {

// Splits an origin-form (or absolute-form) target into the request's path and
// query. InvalidArgument on a target that is not "/..." or has bad escapes.
Status ParseTarget(std::string_view target, HttpRequest* req);

// "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 IMF-fixdate).
std::string HttpDate(std::time_t t);

const char* ReasonPhrase(int status);
// 1xx, 204 and 304 responses carry no body (RFC 9110 6.4.1).
bool StatusAllowsBody(int status);

// Status line and header fields up to and including the blank line. Adds
// Content-Type and Content-Length, Date, Connection and the default security
// headers; drops extra fields that the server owns or that are not valid
// (a CR or LF in a value would let a handler split the response).
std::string SerializeResponseHead(const HttpResponse& res, bool keep_alive, bool http10,
                                  const std::string& date);

// The 404 or 405 for a request that matched no route.
HttpResponse NoRouteResponse(const HttpRequest& req, const Router::Match& match);

// The value of a Content-Length field that the parser has already validated
// ("42", or a list of equal values "42, 42"). Read from the field rather than
// through Beast's boost::optional accessor, which trips GCC 12's
// -Wmaybe-uninitialized in sanitizer builds.
std::optional<uint64_t> ParseContentLength(std::string_view field);

bool IsHeaderToken(std::string_view s);
bool IsHeaderValue(std::string_view s);

}  // namespace vigil::net
