// Job history: the tracker's jobs written to one JSON file in the state
// directory (<home>/data/jobs.json) and read back at start, so that a run
// that crashed overnight is still listed, with its exit status and kernel
// events, after Vigil restarts (docs/jobs.md "History").
//
// The file is a jobs snapshot in the wire format (wire/jobs.h, docs/wire.md
// "Jobs"), the same document an agent sends the server: the tracker's own
// TrackedJob is converted to and from the wire's plain records here, so an
// agent refactor cannot change the protocol or the file by accident.
//
// The file is rewritten whole and atomically (temp file, fsync, rename) when
// the tracker's jobs change: the newest max_ended ended jobs and the running
// ones. Running jobs are in it so that a job which ends while Vigil is down is
// still known when it comes back; read back, every job counts as ended until
// detection sees it again.
//
// Thread safety: pure functions; the file functions touch only `path`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collect/jobs/job_tracker.h"
#include "core/env.h"
#include "core/status.h"
#include "wire/jobs.h"

namespace vigil::collect::jobs {

// A history file larger than this is not read (200 jobs take ~0.5 MB).
inline constexpr size_t kMaxJobHistoryBytes = wire::kMaxJobsSnapshotBytes;

// The tracker's job as the wire carries it, and back. A name the wire
// carries that this Vigil does not know (a job kind, framework or role from
// a newer one) reads back as unknown; an event of an unknown kind is dropped.
wire::JobRecord ToWire(const TrackedJob& job);
TrackedJob FromWire(const wire::JobRecord& record);
wire::NodeKernelEventRecord ToWire(const NodeKernelEvent& event);

// What a node knows about its jobs now: the snapshot an agent ships.
wire::JobsSnapshot SnapshotOf(std::string node, int64_t time_ms,
                              const std::vector<TrackedJob>& jobs,
                              const std::vector<NodeKernelEvent>& node_events);

// The snapshot's document, within wire::kMaxJobsSnapshotBytes: past it, the
// oldest ended jobs are left out (jobs are running first, then ended newest
// first, as JobTracker::Jobs() lists them), so the server and the next start
// can always read what was written.
std::string EncodeWithinBound(wire::JobsSnapshot snapshot);

// What `jobs` say in substance (wire::JobsKey): writers compare it to skip
// rewriting what did not change.
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
