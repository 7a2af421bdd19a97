// EndedJobs: when a job's training series have ended, so the ingester can
// give them a staleness marker (store/tsdb/stale.h) the way a collection pass
// does for the series it no longer has (staleness.h).
//
// Training series (training_*: read from log lines, TensorBoard and MLflow
// files) carry times of their own, so no pass says when they stop; the job's
// end does, which the node's jobs snapshot reports (wire/jobs.h). Without a
// marker a finished job's last loss reads as current for the whole lookback,
// and an alert on it fires on a job that is over.
//
// A job counts once its snapshot says `ended`, and only after `grace_ms` more
// on the server's clock: its last log lines and TensorBoard values may still
// be on their way (other threads, another outbox), and a marker written
// before them would make them out of order. The marker then goes at the
// job's end time, or just after the series' newest sample if that is later,
// so a value the job recorded before it ended is never dropped by it unless
// it arrives more than the grace after the snapshot that said the job ended.
// Series are found by the job's run (the `run` label); for series without
// one, a job with the name of one still running on the node is left alone (a
// rerun writes the same series). A job that ended more than
// `max_age_ms` ago when first seen ended (after a server restart, an outage):
// its series faded long ago.
//
// Bounded: per node, only the jobs of its newest snapshot are remembered
// (snapshots are bounded: wire::kMaxJobsSnapshotBytes), and at most max_nodes
// nodes (the least recently reported goes).
//
// Thread safety: all methods may be called concurrently; mu_ guards the map.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "wire/jobs.h"

namespace vigil::ingest {

struct EndedJobsOptions {
  int64_t grace_ms = 30'000;
  int64_t max_age_ms = 5 * 60'000;  // PromQL's lookback
  size_t max_nodes = 4096;
};

// A job whose training series should now end on `node` at `end_ms`: those
// of its run (the `run` label, its id), or, for series without one (older
// agents), those of its name unless `name_running` (a run of that name still
// runs on the node and writes the same series).
struct EndedJob {
  std::string node;
  std::string id;
  std::string name;
  int64_t end_ms = 0;
  bool name_running = false;
};

class EndedJobs {
 public:
  explicit EndedJobs(EndedJobsOptions options = {}) : options_(options) {}

  // Notes a node's newest snapshot, received at now_ms (server clock).
  void Note(const wire::JobsSnapshot& snapshot, int64_t now_ms);
  // The node's ended jobs whose grace has passed and that were not returned
  // before; each is returned once.
  std::vector<EndedJob> TakeDue(const std::string& node, int64_t now_ms);

 private:
  struct Job {
    std::string name;
    int64_t end_ms = 0;
    int64_t seen_ended_ms = 0;  // server clock
    bool done = false;          // returned, or never to be
  };
  struct Node {
    std::map<std::string, Job> jobs;   // ended ones, by job id
    std::vector<std::string> running;  // names of the jobs still running
    int64_t noted_ms = 0;
  };

  EndedJobsOptions options_;
  std::mutex mu_;
  std::map<std::string, Node> nodes_;  // guarded by mu_
};

}  // namespace vigil::ingest
