// Ingester: the server's entry for agent data. Decodes a wire frame,
// validates it, drops a batch it has already stored (retries), tags every
// series and log stream with the node it came from, and appends it to the
// metrics store (frame kind 1) or the log store (kind 2).
//
// Thread safety: Receive() may be called concurrently; the mutex guards the
// per-source sequence map and the counters.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/status.h"
#include "store/logs/log_store.h"
#include "store/tsdb/db.h"

namespace vigil::ingest {

// Every series stored from an agent carries node="<agent source>", so one
// server can hold a fleet (docs/wire.md).
inline constexpr std::string_view kNodeLabel = "node";

struct IngestStats {
  uint64_t batches = 0;
  uint64_t samples = 0;
  uint64_t duplicate_batches = 0;  // retried batches dropped by sequence
  uint64_t rejected_batches = 0;   // undecodable or invalid
  uint64_t log_batches = 0;
  uint64_t log_records = 0;  // received (the log store counts offset duplicates)
};

class Ingester {
 public:
  // `logs` may be null: log frames are then refused (a metrics-only server).
  explicit Ingester(tsdb::Db* db, logstore::LogStore* logs = nullptr) : db_(db), logs_(logs) {}

  // InvalidArgument/Corruption: the sender's data is bad (do not retry as is).
  // Other errors: the server could not store it now (retry).
  Status Receive(std::string_view frame);
  IngestStats Stats() const;

 private:
  Status ReceiveMetrics(std::string_view payload);
  Status ReceiveLogs(std::string_view payload);
  Status Reject(Status st);

  tsdb::Db* db_;
  logstore::LogStore* logs_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, uint64_t> last_sequence_;  // guarded by mu_
  IngestStats stats_;                                        // guarded by mu_
};

}  // namespace vigil::ingest
