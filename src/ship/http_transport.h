// HttpTransport: delivers wire frames to a remote server's POST /api/v1/ingest
// (`vigil agent --server URL`). OK means the server answered 2xx, which it
// does only after storing the frame durably.
//
// A 4xx answer (other than 408/429) is InvalidArgument: the server refuses
// this frame as it is, and sending it again will not help. Anything else
// (connection refused, timeout, 5xx) is Unavailable: retry later.
//
// Thread safety: Send() from one thread at a time (Transport's contract).
#pragma once

#include <chrono>
#include <string>

#include "ship/transport.h"

namespace vigil::ship {

class HttpTransport final : public Transport {
 public:
  // `server_url`: "http://host:port" (a trailing slash is fine).
  explicit HttpTransport(std::string server_url,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));
  Status Send(std::string_view frame) override;

 private:
  std::string ingest_url_;
  std::chrono::milliseconds timeout_;
};

}  // namespace vigil::ship
