// Job history: the tracker's jobs written to one JSON file in the state
// directory (<home>/data/jobs.json) and read back at start, so that a run
// that crashed overnight is still listed, with its exit status and kernel
// events, after Vigil restarts (docs/jobs.md "History").
//
// The file is a snapshot, rewritten whole and atomically (temp file, fsync,
// rename) when the tracker's jobs change: the newest max_ended ended jobs
// and the running ones. Running jobs are in it so that a job which ends
// while Vigil is down is still known when it comes back; read back, every
// job counts as ended until detection sees it again.
//
// Encoding and decoding are the same code that will carry an agent's jobs
// to a central server.
//
// Thread safety: pure functions; the file functions touch only `path`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collect/jobs/job_tracker.h"
#include "core/env.h"
#include "core/status.h"

namespace vigil::collect::jobs {

inline constexpr int kJobHistoryVersion = 1;
// A history file larger than this is not read (200 jobs take ~0.5 MB).
inline constexpr size_t kMaxJobHistoryBytes = 16u << 20;

// {"version":1,"jobs":[...]}: every field of TrackedJob (docs/jobs.md).
std::string EncodeJobs(const std::vector<TrackedJob>& jobs);

// The jobs in `json`. InvalidArgument when it is not a history document
// (not JSON, another version); a job entry without an id is skipped, and
// unknown fields are ignored (a newer Vigil may add some).
Result<std::vector<TrackedJob>> DecodeJobs(std::string_view json);

// Reads `path`: no file is an empty history. A file that cannot be decoded
// is renamed aside to `path`.bad-<ms> (kept for a person to look at, never
// overwritten by the next save) and InvalidArgument names both.
Result<std::vector<TrackedJob>> LoadJobHistory(Env* env, const std::string& path);

// Writes `jobs` to `path` atomically, creating its directory.
Status SaveJobHistory(Env* env, const std::string& path, const std::vector<TrackedJob>& jobs);

}  // namespace vigil::collect::jobs
