// What a process is, read once from /proc and kept: the facts job detection
// needs (stat, cmdline, comm, maps, environ, cgroup, the uid in status) and what a job's report
// needs after the process is gone (its working directory, the files its
// stdout and stderr go to). A job that crashes at start-up (ImportError, a bad
// path, CUDA OOM on the first batch) lives less than a detection pass; its
// snapshot, taken when the kernel said it exec'd, lets detection judge it by
// the same rules after it died (JobDetectionOptions::departed).
//
// Also the facts that cannot move, which a job's identity rests on: a
// process's start time in clock ticks since boot (field 22 of
// /proc/<pid>/stat) and the boot id. The wall-clock start (boot time plus
// ticks) is recomputed from /proc/stat's btime, which NTP moves by a second
// now and then; it is for display only.
//
// Thread safety: pure functions over the files they read; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/env.h"
#include "core/status.h"

namespace vigil::discover {

// Read bounds, shared by DetectJobs and CaptureProcess (untrusted files).
inline constexpr size_t kMaxStatBytes = 4096;
inline constexpr size_t kMaxCmdlineBytes = 16 * 1024;
inline constexpr size_t kMaxCommBytes = 64;
inline constexpr size_t kMaxMapsBytes = 4 << 20;
inline constexpr size_t kMaxEnvironBytes = 64 * 1024;
inline constexpr size_t kMaxCgroupBytes = 16 * 1024;
// A snapshot keeps its maps as the libraries' paths only (CompactMaps): a
// PyTorch process maps a few hundred of them in thousands of lines.
inline constexpr size_t kMaxSnapshotMapsBytes = 64 * 1024;

// The fields of /proc/<pid>/stat that detection uses.
struct ProcStat {
  int ppid = 0;
  char state = '?';          // field 3: R, S, D, Z (zombie), X (dead), ...
  uint64_t start_ticks = 0;  // field 22: clock ticks after boot; never changes
};
// Parses after the ")" that ends comm (which may hold spaces and ')').
// nullopt when the text is not a stat line.
std::optional<ProcStat> ParseProcStat(std::string_view text);

struct ProcSnapshot {
  int pid = 0;
  uint64_t start_ticks = 0;
  // Raw texts, each cut at the bound above; empty when unreadable. `maps`
  // is compacted (CompactMaps), which is all EvidenceFromMaps reads.
  std::string stat, cmdline, comm, maps, environ, cgroup;
  bool maps_read = false;  // false: unreadable (another user's process)
  // The real uid of its `status` (ParseRealUid), -1 when unreadable: its
  // owner, once the process and its status are gone.
  int64_t uid = -1;
  std::string cwd;  // readlink of cwd, "" when unreadable
  // Regular files fd 1 and 2 point at (a redirect), "" otherwise (a tty, a
  // pipe, a socket, a deleted file).
  std::string stdout_path, stderr_path;
};

// Reads one process now. NotFound when it is gone; Unavailable for a kernel
// thread, a zombie or an unparsable stat (nothing to keep).
Result<ProcSnapshot> CaptureProcess(Env* env, const std::string& proc_root, int pid);

// The distinct paths of the shared libraries in the text of
// /proc/<pid>/maps, one a line, in order, at most kMaxSnapshotMapsBytes.
std::string CompactMaps(std::string_view maps);

// Reads maps again (a process maps its framework's libraries some
// milliseconds after exec, when it imports them). False when it is gone or
// unreadable now; the snapshot keeps what it had.
bool RefreshMaps(Env* env, const std::string& proc_root, ProcSnapshot* snap);

// Whether the process `pid` that started at `start_ticks` still runs:
// kGone only on proof (no /proc/<pid>, a zombie, or another process with that
// pid); kUnknown when /proc/<pid>/stat cannot be read or parsed for another
// reason (a transient failure is no proof of death).
enum class Liveness { kAlive, kGone, kUnknown };
Liveness ProcessLiveness(Env* env, const std::string& proc_root, int pid, uint64_t start_ticks);

// The first 8 hex digits of /proc/sys/kernel/random/boot_id, which tells
// this boot from the last (ticks restart at 0); "00000000" when unreadable.
std::string ReadBootId(Env* env, const std::string& proc_root);

// The parts of a detected job's id, "<pid>-<start ticks>-<boot>[-<ray job>]"
// (docs/jobs.md "Job ids"); nullopt for another form (`run-...` ids of
// `vigil run` records, ids of older versions).
struct JobIdParts {
  int pid = 0;
  uint64_t start_ticks = 0;
  std::string boot;
};
std::optional<JobIdParts> ParseJobId(std::string_view id);
std::string FormatJobId(int pid, uint64_t start_ticks, std::string_view boot);

}  // namespace vigil::discover
