#include "net/https_client.h"

#include "net/curl_lib.h"

namespace vigil::net {
namespace {

// The URL without its path and query, which for bots carry the secret
// (Slack's hook path, WeCom's key, DingTalk's access token): what errors say.
// Credentials in the authority (user:password@) are left out too.
std::string Redacted(const std::string& url) {
  size_t scheme = url.find("://");
  size_t host = scheme == std::string::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", host);
  std::string authority = url.substr(host, end == std::string::npos ? end : end - host);
  size_t at = authority.rfind('@');
  if (at != std::string::npos) authority = authority.substr(at + 1);
  return url.substr(0, host) + authority;
}

struct Received {
  std::string body;
  size_t max = 0;
  bool too_large = false;
  std::string content_type;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<Received*>(user);
  size_t len = size * n;
  if (r->body.size() + len > r->max) {
    r->too_large = true;
    return 0;  // aborts the transfer
  }
  r->body.append(data, len);
  return len;
}

}  // namespace

Status HttpsAvailable() { return LoadCurl().status; }

Result<HttpResponse> HttpsFetch(const HttpClientRequest& request, const TlsOptions& tls) {
  const Curl& curl = LoadCurl();
  if (!curl.status.ok()) return curl.status;
  if (!request.url.starts_with("https://") && !request.url.starts_with("http://")) {
    return InvalidArgument("only http:// and https:// URLs are supported: " +
                           Redacted(request.url));
  }
  CurlHandle h{curl};
  h.easy = curl.easy_init();
  if (h.easy == nullptr) return Unavailable("libcurl could not make a handle");
  Received got;
  got.max = request.max_response_bytes;
  auto set = [&](CURLoption opt, auto value) { curl.easy_setopt(h.easy, opt, value); };
  set(CURLOPT_URL, request.url.c_str());
  set(CURLOPT_PROTOCOLS_STR, "http,https");
  set(CURLOPT_NOSIGNAL, 1L);
  set(CURLOPT_FOLLOWLOCATION, 0L);
  set(CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  set(CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT") {
    set(CURLOPT_POSTFIELDS, request.body.data());
    set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  for (const auto& [name, value] : request.headers.fields()) {
    h.list = curl.slist_append(h.list, (name + ": " + value).c_str());
  }
  // libcurl adds "Expect: 100-continue" to large POSTs; vendors' APIs do
  // not need the extra round trip.
  h.list = curl.slist_append(h.list, "Expect:");
  set(CURLOPT_HTTPHEADER, h.list);
  set(CURLOPT_WRITEFUNCTION, &OnBody);
  set(CURLOPT_WRITEDATA, &got);
  if (!tls.ca_file.empty()) set(CURLOPT_CAINFO, tls.ca_file.c_str());
  CURLcode rc = curl.easy_perform(h.easy);
  if (got.too_large) {
    return ResourceExhausted("response from " + Redacted(request.url) + " is larger than " +
                             std::to_string(request.max_response_bytes) + " bytes");
  }
  if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
    return InvalidArgument(std::string(curl.easy_strerror(rc)) + ": " + Redacted(request.url));
  }
  if (rc != CURLE_OK) {
    return Unavailable(Redacted(request.url) + ": " + curl.easy_strerror(rc));
  }
  long status = 0;
  curl.easy_getinfo(h.easy, CURLINFO_RESPONSE_CODE, &status);
  char* type = nullptr;
  curl.easy_getinfo(h.easy, CURLINFO_CONTENT_TYPE, &type);
  HttpResponse out;
  out.status = static_cast<int>(status);
  out.content_type = type != nullptr ? type : "";
  out.body = std::move(got.body);
  return out;
}

}  // namespace vigil::net
