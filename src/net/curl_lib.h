// Private to vigil_net: libcurl, loaded with dlopen("libcurl.so.4") at the
// first use and never linked (https_client.h says why), shared by the HTTPS
// client and the SMTP client so the library is resolved once.
//
// Thread safety: LoadCurl may be called from any thread (std::call_once);
// the table it returns is immutable afterwards.
#pragma once

#include <curl/curl.h>

#include "core/status.h"

namespace vigil::net {

// The libcurl entry points Vigil uses.
struct Curl {
  Status status = Status::Ok();  // why libcurl cannot be used, if it cannot
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

// The table, loaded at the first call; check `status` before use.
const Curl& LoadCurl();

// Frees what a request allocated, whichever way it ends.
struct CurlHandle {
  const Curl& curl;
  CURL* easy = nullptr;
  curl_slist* list = nullptr;  // request headers (HTTP) or recipients (SMTP)
  ~CurlHandle() {
    if (list != nullptr) curl.slist_free_all(list);
    if (easy != nullptr) curl.easy_cleanup(easy);
  }
};

}  // namespace vigil::net
