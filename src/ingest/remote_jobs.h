// RemoteJobs: the jobs of the nodes whose agents report to this server. A
// `vigil agent` finds its node's jobs and kernel events (collect/jobs) and
// sends a snapshot of them every few seconds (wire frame kind 4, JSON as in
// collect/jobs/job_history.h); the server keeps the newest snapshot per node,
// in memory and in one file per node under `dir`, so a node that went down
// is still listed, with its jobs as last reported, after the server restarts.
//
// A snapshot is state, not a stream: the newest replaces the one before, so
// a lost or repeated snapshot loses and duplicates nothing.
//
// Bounded: snapshots above kMaxJobsSnapshotBytes are refused, at most
// max_nodes nodes are kept (the one heard from least recently goes).
//
// Thread safety: Receive() and Nodes() may be called concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "collect/jobs/job_history.h"
#include "core/env.h"
#include "core/status.h"

namespace vigil::ingest {

inline constexpr size_t kMaxJobsSnapshotBytes = 8u << 20;
inline constexpr size_t kMaxNodeNameBytes = 253;  // a DNS name

struct RemoteJobsOptions {
  std::string dir;     // "" keeps snapshots in memory only
  Env* env = nullptr;  // nullptr: Env::Default()
  size_t max_nodes = 4096;
  // A snapshot's file is rewritten when its jobs change in substance
  // (JobsKey), else at most this often.
  int64_t write_interval_ms = 60'000;
};

struct NodeJobs {
  collect::jobs::JobsSnapshot snapshot;  // snapshot.node names the node
  int64_t received_ms = 0;               // by this server's clock
};

class RemoteJobs {
 public:
  // Reads the snapshots kept in `dir`; one that cannot be read is skipped
  // with a warning (the node's next report replaces it).
  explicit RemoteJobs(RemoteJobsOptions options);

  // Keeps the snapshot in `payload` (a frame's). InvalidArgument for one
  // that is too big, not a snapshot, or names no node.
  Status Receive(std::string_view payload);

  // Every node's newest snapshot, by node name.
  std::vector<NodeJobs> Nodes() const;

 private:
  struct Entry {
    NodeJobs jobs;
    std::string written_key;  // JobsKey of what the file holds
    int64_t written_ms = 0;
  };
  std::string PathOf(const std::string& node) const;

  RemoteJobsOptions options_;
  Env* env_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> nodes_;  // guarded by mu_
};

}  // namespace vigil::ingest
