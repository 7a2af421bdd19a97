// HTTPS (and plain HTTP) requests through libcurl, for the notification
// channels whose peers are vendors' HTTPS endpoints (Slack, Feishu, DingTalk,
// WeCom, the SMS gateway; SMTP is smtp_client.h). libcurl is loaded with
// dlopen("libcurl.so.4") at the first request (curl_lib.h), not linked: linking it (and what it
// pulls in) costs every `vigil up` about 5.5 MiB of resident memory, most of which never sends a
// message. Without libcurl a request fails with a message naming the
// package (Debian: libcurl4).
//
// Bounds as http_client.h: the whole exchange within `timeout`, the body
// within `max_response_bytes`; redirects are not followed; only http:// and
// https:// URLs are accepted. Certificates are verified against the system's
// store, or `ca_file` when given. Errors name the URL's scheme and host only:
// a bot's path and query carry its secret.
//
// Thread safety: HttpsFetch may be called from several threads at once (each
// call has its own curl handle; libcurl's global init runs once).
#pragma once

#include <string>

#include "core/status.h"
#include "net/http_client.h"

namespace vigil::net {

struct TlsOptions {
  std::string ca_file;  // PEM bundle to trust instead of the system's
};

// One request; a response with any status is a success (check its status),
// a failed Result means no response: Unavailable (connect, TLS, timeout),
// InvalidArgument (bad URL), ResourceExhausted (response too large),
// FailedPrecondition (libcurl missing).
Result<HttpResponse> HttpsFetch(const HttpClientRequest& request, const TlsOptions& tls = {});

// OK when libcurl can be loaded; else why not.
Status HttpsAvailable();

}  // namespace vigil::net
