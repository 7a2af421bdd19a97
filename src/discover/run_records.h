// `vigil run` records: the JSON sidecar the wrapper writes beside the output
// it spools (spool/run/<name>.<id>.json, src/cli/cmd_run.cc): the command's
// name and pid, when it started and, once it ended, its exit status or the
// signal that killed it. Job tracking reads them to know how a job ended
// where /proc cannot tell (collect/jobs/job_tracker.h).
//
// Thread safety: a pure function over the directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vigil::discover {

struct RunRecord {
  std::string name;
  std::string cmdline;  // the command's arguments joined by spaces, at most 4 KiB
  int pid = 0;          // the command's, not the wrapper's
  int64_t started_ms = 0;
  bool ended = false;
  int64_t ended_ms = 0;
  std::optional<int> exit_code;
  int signal = 0;
  std::string signal_name;  // "TERM", "KILL", ...
  // The owner of the record's file: the user `vigil run` ran as, when its
  // command's /proc entry is gone or unreadable. -1 when unknown.
  int64_t file_uid = -1;
};

// Every readable record in `spool_dir` (at most `limit`, any order);
// malformed or oversized files are skipped.
std::vector<RunRecord> ReadRunRecords(const std::string& spool_dir, size_t limit = 4096);

}  // namespace vigil::discover
