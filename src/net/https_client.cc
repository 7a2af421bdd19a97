#include "net/https_client.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <mutex>

namespace vigil::net {
namespace {

// The libcurl entry points used, resolved once.
struct Curl {
  Status status = Status::Ok();
  CURLcode (*global_init)(long) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return *fn != nullptr;
}

const Curl& LoadCurl() {
  static Curl curl;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      curl.status = FailedPrecondition(
          "HTTPS channels need libcurl, which is not installed (Debian: apt install libcurl4)");
      return;
    }
    bool ok = Resolve(lib, "curl_global_init", &curl.global_init) &&
              Resolve(lib, "curl_easy_init", &curl.easy_init) &&
              Resolve(lib, "curl_easy_setopt", &curl.easy_setopt) &&
              Resolve(lib, "curl_easy_perform", &curl.easy_perform) &&
              Resolve(lib, "curl_easy_getinfo", &curl.easy_getinfo) &&
              Resolve(lib, "curl_easy_cleanup", &curl.easy_cleanup) &&
              Resolve(lib, "curl_easy_strerror", &curl.easy_strerror) &&
              Resolve(lib, "curl_slist_append", &curl.slist_append) &&
              Resolve(lib, "curl_slist_free_all", &curl.slist_free_all);
    if (!ok) {
      curl.status = FailedPrecondition("libcurl.so.4 lacks a function Vigil uses (too old?)");
      return;
    }
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      curl.status = FailedPrecondition("libcurl failed to initialise");
    }
  });
  return curl;
}

// The URL without its path and query, which for bots carry the secret
// (Slack's hook path, WeCom's key, DingTalk's access token): what errors say.
std::string Redacted(const std::string& url) {
  size_t scheme = url.find("://");
  size_t end = url.find_first_of("/?#", scheme == std::string::npos ? 0 : scheme + 3);
  return url.substr(0, end);
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

// Frees what a request allocated, whichever way it ends.
struct Handle {
  const Curl& curl;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  ~Handle() {
    if (headers != nullptr) curl.slist_free_all(headers);
    if (easy != nullptr) curl.easy_cleanup(easy);
  }
};

}  // namespace

Status HttpsAvailable() { return LoadCurl().status; }

Result<HttpResponse> HttpsFetch(const HttpClientRequest& request, const TlsOptions& tls) {
  const Curl& curl = LoadCurl();
  if (!curl.status.ok()) return curl.status;
  if (!request.url.starts_with("https://") && !request.url.starts_with("http://")) {
    return InvalidArgument("only http:// and https:// URLs are supported: " +
                           Redacted(request.url));
  }
  Handle h{curl};
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
    h.headers = curl.slist_append(h.headers, (name + ": " + value).c_str());
  }
  // libcurl adds "Expect: 100-continue" to large POSTs; vendors' APIs do
  // not need the extra round trip.
  h.headers = curl.slist_append(h.headers, "Expect:");
  set(CURLOPT_HTTPHEADER, h.headers);
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
