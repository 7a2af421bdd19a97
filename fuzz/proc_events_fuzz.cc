// Fuzz target: what the kernel's process events connector hands over
// (netlink datagrams, docs/discovery.md "Process events"), and the other
// untrusted text a job's identity rests on: /proc/<pid>/stat and job ids.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "discover/proc_events.h"
#include "discover/proc_snapshot.h"

namespace discover = vigil::discover;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // A datagram: never more events than 76-byte messages fit, each a process.
  for (const discover::ProcEvent& e : discover::DecodeProcEvents(in)) {
    if (e.pid <= 0) std::abort();
    if (e.kind == discover::ProcEvent::Kind::kExec && (e.exit_code || e.exit_signal)) std::abort();
    if (e.exit_code && (*e.exit_code < 0 || *e.exit_code > 255)) std::abort();
    if (e.exit_signal && (*e.exit_signal <= 0 || *e.exit_signal > 127)) std::abort();
  }
  if (discover::DecodeProcEvents(in).size() > size / 16 + 1) std::abort();
  if (auto err = discover::DecodeProcAck(in); err && *err < 0) std::abort();
  (void)discover::ParseProcStat(in);
  // An id that parses formats back to its first three parts.
  if (auto id = discover::ParseJobId(in)) {
    std::string again = discover::FormatJobId(id->pid, id->start_ticks, id->boot);
    auto round = discover::ParseJobId(again);
    if (!round || round->pid != id->pid || round->start_ticks != id->start_ticks ||
        round->boot != id->boot) {
      std::abort();
    }
  }
  return 0;
}
