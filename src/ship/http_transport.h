// HttpTransport: delivers wire frames to a remote server's POST /api/v1/ingest
// (`vigil agent --server URL`). OK means the server answered 2xx, which it
// does only after storing the frame durably.
//
// Frames go over one keep-alive HTTP/1.1 connection (net::HttpConnection),
// opened on the first Send and reopened when the server closed it. A frame
// whose connection failed before any answer may reach the server twice (once
// on the dead connection, once on the new one); that is safe because the
// server deduplicates (metrics by batch sequence and timestamp, logs by source
// byte offsets; docs/design-notes.md).
//
// A 4xx answer (other than 408/429) is InvalidArgument: the server refuses
// this frame as it is, and sending it again will not help. Anything else
// (connection refused, timeout, 5xx) is Unavailable: retry later.
//
// Thread safety: Send() may be called from several threads; they take turns
// on the one connection (a Send waits for the one in flight).
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "net/http_client.h"
#include "ship/transport.h"

namespace vigil::ship {

class HttpTransport final : public Transport {
 public:
  // `server_url`: "http://host:port" (a trailing slash is fine). `timeout`
  // bounds each Send: connect (or reconnect), send and answer.
  explicit HttpTransport(std::string server_url,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));
  Status Send(std::string_view frame) override;

 private:
  std::string ingest_url_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  net::HttpConnection connection_;  // guarded by mu_
};

}  // namespace vigil::ship
