// The parts of http_server.h that need no Boost: headers, router, addresses,
// percent-decoding and response serialisation.
#include <algorithm>
#include <cstdio>

#include "core/strings.h"
#include "net/http_internal.h"
#include "net/http_server.h"

namespace vigil::net {
namespace {

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Echoing a client's path into a response: printable ASCII only, bounded.
std::string Printable(std::string_view s) {
  constexpr size_t kMax = 256;
  std::string out;
  for (char c : s.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > kMax) out += "...";
  return out;
}

// Fields the server writes itself; a handler's copy is ignored.
bool IsServerOwnedField(std::string_view name) {
  for (std::string_view owned : {"content-length", "content-type", "connection", "date",
                                 "transfer-encoding", "keep-alive"}) {
    if (EqualsIgnoreCase(name, owned)) return true;
  }
  return false;
}

struct DefaultHeader {
  std::string_view name;
  std::string_view value;
};
// The UI is served from the same origin and never framed; responses are never
// content-sniffed into HTML, and links never leak the (token-bearing) URL.
constexpr DefaultHeader kSecurityHeaders[] = {
    {"X-Content-Type-Options", "nosniff"},
    {"X-Frame-Options", "DENY"},
    {"Referrer-Policy", "no-referrer"},
};

}  // namespace

void HttpHeaders::Add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

void HttpHeaders::Set(std::string_view name, std::string value) {
  std::erase_if(fields_, [&](const auto& f) { return EqualsIgnoreCase(f.first, name); });
  fields_.emplace_back(std::string(name), std::move(value));
}

std::optional<std::string_view> HttpHeaders::Get(std::string_view name) const {
  for (const auto& [n, v] : fields_) {
    if (EqualsIgnoreCase(n, name)) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<std::string_view> HttpRequest::Query(std::string_view key) const {
  for (const auto& [k, v] : query) {
    if (k == key) return std::string_view(v);
  }
  return std::nullopt;
}

std::vector<std::string_view> HttpRequest::QueryAll(std::string_view key) const {
  std::vector<std::string_view> out;
  for (const auto& [k, v] : query) {
    if (k == key) out.emplace_back(v);
  }
  return out;
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

Router& Router::Handle(std::string method, std::string path, HttpHandler handler,
                       RouteOptions options) {
  std::erase_if(routes_,
                [&](const Route& r) { return !r.prefix && r.method == method && r.path == path; });
  routes_.push_back({std::move(method), std::move(path), false, std::move(handler), options});
  return *this;
}

Router& Router::HandlePrefix(std::string method, std::string prefix, HttpHandler handler,
                             RouteOptions options) {
  std::erase_if(routes_,
                [&](const Route& r) { return r.prefix && r.method == method && r.path == prefix; });
  routes_.push_back({std::move(method), std::move(prefix), true, std::move(handler), options});
  return *this;
}

Router::Match Router::Find(std::string_view method, std::string_view path) const {
  // Most specific first: exact routes, then prefixes from longest to shortest.
  std::vector<const Route*> candidates;
  for (const Route& r : routes_) {
    if (!r.prefix && r.path == path) candidates.push_back(&r);
  }
  std::vector<const Route*> prefixes;
  for (const Route& r : routes_) {
    if (r.prefix && StartsWith(path, r.path)) prefixes.push_back(&r);
  }
  std::stable_sort(prefixes.begin(), prefixes.end(),
                   [](const Route* a, const Route* b) { return a->path.size() > b->path.size(); });
  candidates.insert(candidates.end(), prefixes.begin(), prefixes.end());

  Match match;
  for (const Route* r : candidates) {
    if (r->method == method || (method == "HEAD" && r->method == "GET")) {
      match.route = r;
      return match;
    }
  }
  std::vector<std::string> allowed;
  for (const Route* r : candidates) {
    allowed.push_back(r->method);
    if (r->method == "GET") allowed.emplace_back("HEAD");
  }
  std::sort(allowed.begin(), allowed.end());
  allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
  for (const auto& m : allowed) {
    if (!match.allow.empty()) match.allow += ", ";
    match.allow += m;
  }
  return match;
}

size_t Router::MaxBodyBytes(size_t server_default) const {
  size_t most = server_default;
  for (const Route& r : routes_) most = std::max(most, r.options.max_body_bytes);
  return most;
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument("invalid listen address \"" + Printable(text) +
                           "\": " + std::string(why) + " (want host:port, [::1]:port or :port)");
  };
  ListenAddress out;
  std::string_view port;
  if (StartsWith(text, "[")) {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return bad("missing ']'");
    out.host = std::string(text.substr(1, close - 1));
    if (out.host.empty()) return bad("empty IPv6 address");
    std::string_view rest = text.substr(close + 1);
    if (!StartsWith(rest, ":")) return bad("missing port");
    port = rest.substr(1);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("missing port");
    out.host = std::string(text.substr(0, colon));
    if (out.host.find(':') != std::string::npos) return bad("put an IPv6 address in brackets");
    port = text.substr(colon + 1);
  }
  auto p = ParseUint64(port);
  if (!p || *p > 65535) return bad("the port must be a number from 0 to 65535");
  out.port = static_cast<uint16_t>(*p);
  return out;
}

Result<std::string> PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      const bool complete = i + 2 < s.size();
      int hi = complete ? HexValue(s[i + 1]) : -1;
      int lo = complete ? HexValue(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return InvalidArgument("invalid percent-escape in \"" + Printable(s) + "\"");
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

Status ParseQueryString(std::string_view s, std::vector<std::pair<std::string, std::string>>* out) {
  for (std::string_view part : Split(s, '&')) {
    if (part.empty()) continue;
    size_t eq = part.find('=');
    std::string_view key = part.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : part.substr(eq + 1);
    VIGIL_ASSIGN_OR_RETURN(std::string k, PercentDecode(key, true));
    VIGIL_ASSIGN_OR_RETURN(std::string v, PercentDecode(value, true));
    out->emplace_back(std::move(k), std::move(v));
  }
  return Status::Ok();
}

Status ParseTarget(std::string_view target, HttpRequest* req) {
  req->target = std::string(target);
  // Absolute-form ("http://host/path"), which HTTP/1.1 servers must accept.
  for (std::string_view scheme : {"http://", "https://"}) {
    if (StartsWith(target, scheme)) {
      target.remove_prefix(scheme.size());
      size_t slash = target.find('/');
      target = slash == std::string_view::npos ? "/" : target.substr(slash);
    }
  }
  if (target.empty() || target[0] != '/') {
    return InvalidArgument("the request target must start with '/'");
  }
  target = target.substr(0, target.find('#'));
  size_t q = target.find('?');
  VIGIL_ASSIGN_OR_RETURN(req->path, PercentDecode(target.substr(0, q), false));
  if (req->path.find('\0') != std::string::npos) {
    return InvalidArgument("the request path contains a NUL byte");
  }
  req->query.clear();
  if (q != std::string_view::npos)
    VIGIL_RETURN_IF_ERROR(ParseQueryString(target.substr(q + 1), &req->query));
  return Status::Ok();
}

std::string HttpDate(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(buf, n);
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 206:
      return "Partial Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 507:
      return "Insufficient Storage";
    default:
      break;
  }
  return "Unknown";
}

bool StatusAllowsBody(int status) { return status >= 200 && status != 204 && status != 304; }

std::optional<uint64_t> ParseContentLength(std::string_view field) {
  field = TrimSpace(field.substr(0, field.find(',')));
  if (field.empty()) return std::nullopt;
  return ParseUint64(field);
}

bool IsHeaderToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

bool IsHeaderValue(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

std::string SerializeResponseHead(const HttpResponse& res, bool keep_alive, bool http10,
                                  const std::string& date) {
  int status = res.status >= 100 && res.status <= 999 ? res.status : 500;
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + ReasonPhrase(status) + "\r\n";
  auto field = [&out](std::string_view name, std::string_view value) {
    out.append(name).append(": ").append(value).append("\r\n");
  };
  if (StatusAllowsBody(status)) {
    field("Content-Type", IsHeaderValue(res.content_type) ? std::string_view(res.content_type)
                                                          : "application/octet-stream");
    field("Content-Length", std::to_string(res.body.size()));
  }
  field("Date", date);
  for (const auto& h : kSecurityHeaders) {
    if (!res.headers.Has(h.name)) field(h.name, h.value);
  }
  for (const auto& [name, value] : res.headers.fields()) {
    if (IsServerOwnedField(name) || !IsHeaderToken(name) || !IsHeaderValue(value)) continue;
    field(name, value);
  }
  if (!keep_alive) {
    field("Connection", "close");
  } else if (http10) {
    field("Connection", "keep-alive");
  }
  out += "\r\n";
  return out;
}

HttpResponse NoRouteResponse(const HttpRequest& req, const Router::Match& match) {
  if (match.allow.empty()) {
    return HttpResponse::Text(404, "404 not found: no route for " + Printable(req.path) + "\n");
  }
  HttpResponse res = HttpResponse::Text(405, "405 method not allowed: " + Printable(req.method) +
                                                 " is not allowed on " + Printable(req.path) +
                                                 "; allowed: " + match.allow + "\n");
  res.headers.Set("Allow", match.allow);
  return res;
}

}  // namespace vigil::net
