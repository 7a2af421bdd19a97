// Transport: how the agent side delivers encoded wire frames (wire/frame.h) to
// a server. `vigil up` uses InProcessTransport; fleets get an HTTP transport
// with a durable queue later, without changing any collector.
//
// Thread safety: Send() may be called from one thread at a time.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace vigil::ship {

class Transport {
 public:
  virtual ~Transport() = default;
  // Delivers one frame. OK means the server has durably accepted it.
  virtual Status Send(std::string_view frame) = 0;
};

// Hands frames straight to a receiver in the same process (the server's
// ingest), through the same bytes a remote agent would send.
class InProcessTransport final : public Transport {
 public:
  using Receiver = std::function<Status(std::string_view frame)>;
  explicit InProcessTransport(Receiver receiver) : receiver_(std::move(receiver)) {}
  Status Send(std::string_view frame) override { return receiver_(frame); }

 private:
  Receiver receiver_;
};

}  // namespace vigil::ship
