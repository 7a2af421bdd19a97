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
// The same encoding carries a node's jobs from `vigil agent` to a central
// server (a snapshot: the jobs plus the node's kernel events; wire frame
// kind 4, docs/wire.md "Jobs").
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

// What one node knows about its jobs at one time.
struct JobsSnapshot {
  std::string node;  // "" in the history file (it is the local node's)
  int64_t time_ms = 0;
  std::vector<TrackedJob> jobs;
  std::vector<NodeKernelEvent> node_events;
};

// {"version":1,"node":...,"time_ms":...,"jobs":[...],"node_events":[...]}:
// every field of TrackedJob and NodeKernelEvent (docs/jobs.md "History").
std::string EncodeSnapshot(const JobsSnapshot& snapshot);
// The snapshot in `json`. InvalidArgument when it is not one (not JSON,
// another version); a job without an id or an event of an unknown kind is
// skipped, and unknown fields are ignored (a newer Vigil may add some).
Result<JobsSnapshot> DecodeSnapshot(std::string_view json);

// What a snapshot of `jobs` says in substance: which jobs, ended or not, and
// the evidence on them (not last_seen_ms of running ones, which moves at
// every pass). Writers compare it to skip rewriting what did not change.
std::string JobsKey(const std::vector<TrackedJob>& jobs);

// The history file's document: a snapshot of jobs alone.
std::string EncodeJobs(const std::vector<TrackedJob>& jobs);
Result<std::vector<TrackedJob>> DecodeJobs(std::string_view json);

// Reads `path`: no file is an empty history. A file that cannot be decoded
// is renamed aside to `path`.bad-<ms> (kept for a person to look at, never
// overwritten by the next save) and InvalidArgument names both.
Result<std::vector<TrackedJob>> LoadJobHistory(Env* env, const std::string& path);

// Writes `jobs` to `path` atomically, creating its directory.
Status SaveJobHistory(Env* env, const std::string& path, const std::vector<TrackedJob>& jobs);

}  // namespace vigil::collect::jobs
