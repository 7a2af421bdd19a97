// Fuzz target: the jobs snapshot decoder (wire frame kind 4, docs/wire.md
// "Jobs snapshot payload"): JSON from any agent that reaches a server.
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

#include "wire/jobs.h"

namespace {

namespace wire = vigil::wire;

bool StringOk(const std::string& s) { return s.size() <= wire::kMaxJobsStringBytes; }

bool EventOk(const wire::KernelEventRecord& k) {
  if (k.event.kind.empty() || !StringOk(k.event.kind)) return false;
  if (k.event.details.size() > wire::kMaxJobEventDetails) return false;
  for (const auto& d : k.event.details) {
    if (!StringOk(d.key) || !StringOk(d.value)) return false;
  }
  return true;
}

// What a decode hands to a reader is always within the bounds it promises.
bool WithinBounds(const wire::JobsSnapshot& s) {
  if (s.node.size() > wire::kMaxJobsNodeBytes) return false;
  if (s.jobs.size() > wire::kMaxSnapshotJobs) return false;
  if (s.node_events.size() > wire::kMaxNodeKernelEvents) return false;
  for (const auto& e : s.node_events) {
    if (!EventOk(e.kernel) || !StringOk(e.job_id)) return false;
  }
  for (const auto& j : s.jobs) {
    if (j.id.empty()) return false;
    for (const std::string* t : {&j.id, &j.name, &j.kind, &j.framework, &j.launcher, &j.trainer,
                                 &j.container_id, &j.user, &j.master_addr}) {
      if (!StringOk(*t)) return false;
    }
    if (j.uid != wire::kUnknownJobUid && (j.uid < 0 || j.uid > wire::kMaxJobUid)) return false;
    if (j.processes.size() > wire::kMaxJobProcesses) return false;
    for (const auto& p : j.processes) {
      if (!StringOk(p.role) || !StringOk(p.cmdline)) return false;
    }
    if (j.run_exit && !StringOk(j.run_exit->signal_name)) return false;
    if (j.kernel_events.size() > wire::kMaxJobKernelEvents) return false;
    for (const auto& k : j.kernel_events) {
      if (!EventOk(k)) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto snapshot = wire::DecodeJobsSnapshot(in);
  if (!snapshot.ok()) return 0;
  if (!WithinBounds(*snapshot)) std::abort();
  // Whatever decodes re-encodes to a document that decodes the same, and
  // encoding that again changes nothing.
  const std::string encoded = wire::EncodeJobsSnapshot(*snapshot);
  auto again = wire::DecodeJobsSnapshot(encoded);
  if (!again.ok() || !(*again == *snapshot)) std::abort();
  if (wire::EncodeJobsSnapshot(*again) != encoded) std::abort();
  if (wire::JobsKey(again->jobs) != wire::JobsKey(snapshot->jobs)) std::abort();
  return 0;
}
