// Process starts and exits as they happen, from the kernel's process events
// connector (netlink NETLINK_CONNECTOR, CN_IDX_PROC), or, where that is not
// permitted (it needs CAP_NET_ADMIN before Linux 6.6) or not built into the
// kernel, from a cheap poll of /proc's pid list. A job that crashes at start-up lives less
// than a second, far less than a detection pass: without this its crash is
// never seen (docs/discovery.md "Process events").
//
// Thread safety: ProcEventSource is used from one thread (the process
// watcher's). DecodeProcEvents is a pure function.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"

namespace vigil::discover {

struct ProcEvent {
  enum class Kind { kExec, kExit };
  Kind kind = Kind::kExec;
  int pid = 0;          // the process (thread group): events of other threads are dropped
  int64_t time_ns = 0;  // since boot (the connector's); 0 from the poll
  // Exit only, from the connector: the wait status, as waitpid gives it.
  std::optional<int> exit_code;    // WEXITSTATUS when it exited
  std::optional<int> exit_signal;  // WTERMSIG when a signal killed it
  bool operator==(const ProcEvent&) const = default;
};

// Decodes what one recv() on a connector socket returned: netlink messages,
// each a cn_msg holding a proc_event. Exec and exit events of a process
// (pid == tgid) are kept; forks, thread exits, uid/comm changes and anything
// malformed or truncated are skipped, never read past `bytes`.
std::vector<ProcEvent> DecodeProcEvents(std::string_view bytes);

// The kernel's answer to a subscription, in what one recv() returned: the
// errno it carries (0: listening; EPERM: refused, e.g. CAP_NET_ADMIN only in
// a container's user namespace), or nullopt when the bytes hold no answer.
std::optional<int> DecodeProcAck(std::string_view bytes);

class ProcEventSource {
 public:
  virtual ~ProcEventSource() = default;
  // Waits at most timeout_ms for events and appends them. A failure means
  // the source is broken for good (the caller falls back to the poll).
  virtual Status Wait(int timeout_ms, std::vector<ProcEvent>* out) = 0;
  // "connector" or "poll".
  virtual const char* mode() const = 0;
};

// The connector, once the kernel has said it listens (it answers the
// subscription; waited for up to a second). FailedPrecondition without
// CAP_NET_ADMIN (at bind, or in the kernel's answer); Unavailable where the
// kernel has no connector or does not answer.
Result<std::unique_ptr<ProcEventSource>> OpenProcConnector();

// The fallback: every `interval_ms`, the pids in `proc_root` that were not
// there last time are exec events, and those that left are exit events
// (with no status). It costs a readdir of /proc; a process that lives less
// than the interval may be missed. It takes its first look when made: what
// ran before is the detection pass's.
std::unique_ptr<ProcEventSource> NewProcPoller(Env* env, std::string proc_root, int interval_ms);

}  // namespace vigil::discover
