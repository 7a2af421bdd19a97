// CollectionLoop: runs every metric collector once per interval and hands the
// pass's batch, as an encoded wire frame, to a sink (the ship stage) — or, in
// `vigil up`, the batch itself to the in-process ingester (a BatchSink), as
// log batches are: encoding and decoding a frame nobody sends cost about a
// tenth of the process's CPU (docs/design-notes.md).
//
// Passes start on interval boundaries of the wall clock (…:01.000, …:02.000),
// and every sample of a pass carries that boundary as its timestamp: regular
// timestamps cost almost nothing in the chunk codec, and series of different
// collectors line up for queries. A pass that overruns skips the missed ticks
// rather than bunching passes up.
//
// The loop adds its own health per collector (vigil_collector_success,
// vigil_collector_duration_seconds) and the agent process's resource use
// (process_resident_memory_bytes, process_cpu_seconds_total, ...).
//
// Thread safety: Start()/Stop() from one owning thread; the loop runs on its
// own thread. Stats() may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collect/metrics/collector.h"
#include "core/env.h"

namespace vigil::collect {

struct LoopOptions {
  std::string source;  // node name stamped on every batch
  int64_t interval_ms = 1000;
  Env* env = Env::Default();
  bool compress = false;  // zstd the frames (for a remote transport)
};

struct LoopStats {
  uint64_t passes = 0;
  uint64_t sink_errors = 0;
  uint64_t skipped_ticks = 0;  // ticks missed because a pass overran
};

class CollectionLoop {
 public:
  // Receives each encoded frame; a non-OK status is counted and logged.
  using FrameSink = std::function<Status(std::string frame)>;
  // Receives each pass's batch, to take or copy from as it likes.
  using BatchSink = std::function<Status(wire::MetricBatch* batch)>;

  CollectionLoop(LoopOptions options, std::vector<std::unique_ptr<MetricCollector>> collectors,
                 FrameSink sink);
  CollectionLoop(LoopOptions options, std::vector<std::unique_ptr<MetricCollector>> collectors,
                 BatchSink sink);
  ~CollectionLoop();

  void Start();
  void Stop();
  // Runs one pass now for the given timestamp (tests, and the loop itself).
  void RunPass(int64_t t_ms);
  LoopStats Stats() const;

 private:
  void Run();
  void AddProcessMetrics(wire::MetricBatchBuilder* b);
  void LogIfChanged(const std::string& collector, const Status& st);

  LoopOptions options_;
  std::vector<std::unique_ptr<MetricCollector>> collectors_;
  FrameSink sink_;  // one of the two is set
  BatchSink batch_sink_;
  uint64_t next_sequence_;                         // only touched by the pass thread
  std::map<std::string, std::string> last_error_;  // collector -> last error; pass thread only
  double boot_time_s_ = -1;                        // read once; pass thread only

  std::mutex mu_;  // guards stop_ and the cv wait
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;

  std::atomic<uint64_t> passes_{0};
  std::atomic<uint64_t> sink_errors_{0};
  bool sink_ok_ = true;  // the last delivery worked (loop thread only)
  std::atomic<uint64_t> skipped_ticks_{0};
};

}  // namespace vigil::collect
