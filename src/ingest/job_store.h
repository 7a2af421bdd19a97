// JobStore: the jobs of every node that reports to this server, this one's
// included. An agent finds its node's jobs and kernel events and sends a
// snapshot of them every few seconds (wire frame kind 4, wire/jobs.h); in
// `vigil up` the local tracker's snapshot arrives the same way, in-process,
// so the server has one path for jobs. The server keeps the newest per node,
// in memory and in one file per node under `dir`, so a node that went down
// is still listed, with its jobs as last reported, after the server restarts.
//
// A snapshot is state, not a stream: the newest replaces the one before, so
// a lost or repeated snapshot loses and duplicates nothing.
//
// Bounded: snapshots above wire::kMaxJobsSnapshotBytes are refused, at most
// max_nodes nodes are kept (the one heard from least recently goes).
//
// Thread safety: every method may be called concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "wire/jobs.h"

namespace vigil::ingest {

struct JobStoreOptions {
  std::string dir;     // "" keeps snapshots in memory only
  Env* env = nullptr;  // nullptr: Env::Default()
  size_t max_nodes = 4096;
  // A snapshot's file is rewritten when its jobs change in substance
  // (JobsKey), else at most this often.
  int64_t write_interval_ms = 60'000;
};

struct NodeJobs {
  wire::JobsSnapshot snapshot;  // snapshot.node names the node
  int64_t received_ms = 0;      // by this server's clock
};

class JobStore {
 public:
  // Reads the snapshots kept in `dir`; one that cannot be read is skipped
  // with a warning (the node's next report replaces it).
  explicit JobStore(JobStoreOptions options);

  // Keeps the snapshot in `payload` (a frame's). InvalidArgument for one
  // that is too big, not a snapshot, or names no node.
  Status Receive(std::string_view payload);

  // Every node's newest snapshot, by node name.
  std::vector<NodeJobs> Nodes() const;
  // When each node last reported (received_ms), by node name: what the
  // node_down rule reads every evaluation, without copying the snapshots.
  std::map<std::string, int64_t> LastReports() const;

 private:
  struct Entry {
    NodeJobs jobs;
    std::string written_key;  // JobsKey of what the file holds
    int64_t written_ms = 0;
  };
  std::string PathOf(const std::string& node) const;

  JobStoreOptions options_;
  Env* env_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> nodes_;  // guarded by mu_
};

}  // namespace vigil::ingest
