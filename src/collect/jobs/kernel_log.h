// KernelLog: what the kernel says about jobs' processes: the OOM killer
// ("Out of memory: Killed process 1234 (python)") and NVIDIA Xid errors
// ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, ..."), read from /dev/kmsg
// and classified by the same detector as job logs (training/log_events.h).
// A job whose process the OOM killer took is `crashed`/`oom_killed`, not
// merely killed by SIGKILL (verdict.h).
//
// /dev/kmsg gives one record per read: "<prio>,<seq>,<usec since boot>,<flags>;<text>"
// (continuation lines start with a space). Opened non-blocking, each Poll()
// reads what is there; the kernel's buffer holds the recent past, so
// events from before Vigil started are seen too. Reading needs root or
// CAP_SYSLOG where dmesg is restricted: otherwise Poll() fails once and the
// caller carries on without it.
//
// Thread safety: one caller at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "parse/training/log_events.h"

namespace vigil::collect::jobs {

struct KernelEvent {
  int64_t time_ms = 0;  // wall clock, from the record's time since boot
  int pid = 0;          // the process it concerns, 0 when the text names none
  parse::training::Event event;
};

// Parses one /dev/kmsg record's header and text; false for anything else.
bool ParseKmsgRecord(std::string_view record, uint64_t* usec_since_boot, std::string_view* text);

class KernelLog {
 public:
  // Times come from env's clocks (nullptr: Env::Default()).
  explicit KernelLog(std::string path = "/dev/kmsg", Env* env = nullptr);
  ~KernelLog();
  KernelLog(const KernelLog&) = delete;
  KernelLog& operator=(const KernelLog&) = delete;

  // Appends the events among the records that arrived since the last call.
  Status Poll(std::vector<KernelEvent>* out);

 private:
  void OnRecord(std::string_view record, int64_t boot_ms, std::vector<KernelEvent>* out);

  std::string path_;
  Env* env_;
  int fd_ = -1;
  std::string partial_;  // a regular file (tests) may split records
  parse::training::LogEventDetector detector_;
};

}  // namespace vigil::collect::jobs
