// LogAgent: the agent side of the log pipeline, end to end on one thread:
//
//   discover ─► tail ─► envelope ─► encoding ─► multiline ─► level ─► volume ─► batch ─► send
//
// Every few seconds it asks discovery which files to follow; it reads new
// bytes when the file watcher says something changed, turns them into
// records, and sends them as one wire frame (kind 2) through `send` (the
// in-process ingest, or HTTP to a server). A checkpoint advances only after
// the send succeeded; while the server is away the agent retries with backoff
// and reads nothing more: the files are the buffer, so memory stays bounded
// and nothing is dropped (docs/log-agent.md).
//
// Thread safety: Start/Stop from the owning thread; Stats() from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collect/logs/checkpoint.h"
#include "collect/logs/file_watcher.h"
#include "collect/logs/tailer.h"
#include "collect/logs/volume.h"
#include "core/env.h"
#include "core/status.h"
#include "discover/log_sources.h"
#include "parse/logs/envelope.h"
#include "parse/logs/multiline.h"
#include "ship/backoff.h"

namespace vigil::collect::logs {

struct LogAgentOptions {
  std::string node;       // the agent's node name (wire source)
  std::string state_dir;  // checkpoints live here
  discover::DiscoveryOptions discovery;
  // Replaces discovery (tests, `vigil run` spool only, ...) when set.
  std::function<std::vector<discover::LogSource>()> discover_override;
  // Sources known from elsewhere, added to discovery's at every round (a
  // path discovery also found keeps discovery's labels): the files of jobs
  // that died before discovery could see their process
  // (JobTracker::ShortLivedLogSources). Called on the agent's thread.
  std::function<std::vector<discover::LogSource>()> extra_sources;
  // The id of the job run a source belongs to ("" when none is known):
  // its `run` label, from its writer's pid or its container
  // (discover::HasRunAnchor), so that two runs of one script (`job="train"`
  // both) keep their lines and training series apart (JobTracker::RunIdOf).
  // When a new source's run is
  // not known, `refresh_runs` (if set) has the tracker look once more
  // (JobTracker::Refresh: one pass, bounded wait) and the agent asks again,
  // once per discovery pass; a source still unknown is followed without the
  // label. Both are called on the agent's thread.
  std::function<std::string(const discover::LogSource&)> run_of;
  std::function<void()> refresh_runs;
  // Process discovery walks every process's fd table (docs/discovery.md
  // "Cost"); a `vigil run` job's files are found at once from the spool's
  // inotify event, and a tailed file's lines never wait for discovery.
  int64_t discovery_interval_ms = 5000;
  // A source no longer discovered is closed once read to its end and idle this long.
  int64_t close_after_ms = 60'000;
  // A file seen at the agent's first discovery with no checkpoint is read
  // from its start when at most this big, else from its end (a 50 GB log
  // of last month is not news).
  uint64_t read_existing_max_bytes = 16u << 20;

  size_t batch_max_bytes = 1u << 20;  // of line text per frame
  // A line waits at most this long to be sent: a batch is sent when it is
  // this old or full, so lines of many files arriving one by one travel
  // together (one store sync and one checkpoint update for all of them).
  int64_t batch_max_delay_ms = 200;
  // Acknowledged offsets reach the checkpoint file at most this often
  // (CheckpointStoreOptions::ack_persist_interval_ms): after a crash the
  // agent reads up to this much again and the server drops it.
  int64_t checkpoint_persist_interval_ms = 5000;
  // Between these, only files the watcher saw change are read. The full
  // pass is the safety net for writes inotify does not report (NFS, some
  // overlay lower layers): a stat of every followed file, so not every second.
  int64_t full_pass_interval_ms = 5000;
  size_t read_chunk_bytes = 256u << 10;  // per ReadSome call

  TailerOptions tailer;
  parse::logs::EnvelopeOptions envelope;
  parse::logs::MultilineOptions multiline;
  VolumeOptions volume;
  ship::BackoffOptions backoff;
  Env* env = nullptr;  // nullptr: Env::Default()
};

struct LogAgentStats {
  uint64_t sources = 0;  // files followed now
  uint64_t lines_read = 0;
  uint64_t bytes_read = 0;
  uint64_t records_sent = 0;
  uint64_t batches_sent = 0;
  uint64_t send_failures = 0;    // attempts that will be retried
  uint64_t batches_refused = 0;  // refused by the server as invalid (skipped, logged)
  uint64_t sampled_lines = 0;
  uint64_t filtered_lines = 0;
  uint64_t truncated_lines = 0;
  uint64_t lost_sources = 0;  // checkpointed files gone when we came back
  uint64_t lost_bytes = 0;    // known lost unread (tailer LostSource), sent to the server
  bool server_reachable = true;
};

class LogAgent {
 public:
  // Delivers one batch; OK once the server stored it durably.
  // InvalidArgument: refused for good (the batch is skipped, with a log line).
  // Anything else: retried with the same batch, after a backoff.
  // The sender may edit the batch's labels in place (the in-process ingester
  // adds the node label); it must leave records, offsets and ids alone.
  // In `vigil up` the batch goes to the server's ingester as is, with no wire
  // frame in between (no copy of the lines, no CRC, no allocation per line);
  // FrameSender() encodes it for a remote server.
  using Sender = std::function<Status(wire::LogBatch* batch)>;

  LogAgent(LogAgentOptions options, Sender send);
  ~LogAgent();  // Stop()s
  LogAgent(const LogAgent&) = delete;
  LogAgent& operator=(const LogAgent&) = delete;

  // Opens the checkpoint store and starts the agent's thread.
  Status Start();
  // Sends what has been read (one last attempt), then stops. Idempotent.
  void Stop();

  // One pass without a thread (tests): discover if due, read, send.
  // Returns the number of records sent.
  Result<size_t> RunOnce();

  LogAgentStats Stats() const;

 private:
  struct Source;
  struct Batch;

  void Loop();
  Result<std::unique_ptr<CheckpointStore>> OpenCheckpoints() const;
  void Discover(bool first);
  // Whether discovery runs now: its interval has passed, or a new file
  // appeared in the run spool (at most every kMinDiscoveryGapMs).
  bool DiscoveryDue(int64_t now, const FileChanges& changes) const;
  void WatchSpool();
  static constexpr int64_t kMinDiscoveryGapMs = 250;
  // Paths of new sources whose run is not known yet (LabelRun), after one
  // tracker refresh.
  std::set<std::string> LabelRuns(std::vector<discover::LogSource>* found) const;
  // Whether a new source of unknown run waits for the next discovery (at
  // most kRunWaitMs since first found) rather than being followed unlabelled.
  // So does a new spool file whose sidecar (naming its job's pid) is not
  // written yet.
  bool WaitForRun(const discover::LogSource& spec, const std::set<std::string>& unknown,
                  int64_t now);
  static constexpr int64_t kRunWaitMs = 3000;
  std::map<std::string, int64_t> run_wait_since_;  // agent thread only
  bool retry_discovery_ = false;                   // agent thread only
  // Reads what each source has (only those `only` marks, when given);
  // true when the batch filled up before every source was read.
  bool ReadInto(Batch* batch, const FileChanges* only);
  void ProcessChunk(Source& src, TailChunk chunk, Batch* batch);
  void FlushIdle(Batch* batch, bool all);
  Status SendBatch(Batch* batch, bool retry_until_stopped);
  void AfterAck(Batch* batch);

  LogAgentOptions options_;
  Env* env_;
  Sender send_;
  std::unique_ptr<CheckpointStore> checkpoints_;
  std::unique_ptr<class FileWatcher> watcher_;
  std::unique_ptr<discover::LogSourceDiscoverer> discoverer_;  // keeps a cache across rounds
  std::vector<std::unique_ptr<Source>> sources_;               // loop thread only
  std::unique_ptr<Batch> pending_;                             // read but not yet acknowledged
  int64_t last_discovery_ms_ = 0;
  int64_t last_full_pass_ms_ = 0;
  bool first_discovery_ = true;
  // Adds the `run` label from options_.run_of; false while the writer's run
  // is not known.
  bool LabelRun(discover::LogSource* spec) const;
  // Labels the new sources among `found` with their runs (LabelRun), with
  // one refresh of the tracker for those not known.
  uint64_t sequence_ = 0;
  ship::Backoff backoff_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex wait_mu_;  // guards nothing but the wait below
  std::condition_variable wait_cv_;

  mutable std::mutex stats_mu_;
  LogAgentStats stats_;  // guarded by stats_mu_
};

// A Sender that encodes each batch as a wire frame (kind 2, zstd when
// `compress`) and hands the bytes to `send_frame`: for a remote server, or a
// test that wants to see the bytes on the wire.
LogAgent::Sender FrameSender(std::function<Status(std::string_view frame)> send_frame,
                             bool compress);

}  // namespace vigil::collect::logs
