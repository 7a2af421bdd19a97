#include "net/curl_lib.h"

#include <dlfcn.h>

#include <mutex>

namespace vigil::net {
namespace {

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return *fn != nullptr;
}

}  // namespace

const Curl& LoadCurl() {
  static Curl curl;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      curl.status = FailedPrecondition(
          "HTTPS and SMTP channels need libcurl, which is not installed (Debian: apt install "
          "libcurl4)");
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

}  // namespace vigil::net
