// LogStoreImpl: the state behind LogStore (log_store.h). Split over
// log_store.cc (open, recovery, append), log_store_maintain.cc (cutting
// blocks, checkpoints, retention) and log_store_query.cc (reads).
//
// Locks, always taken in this order:
//   maintain_mu_  serialises Maintain and Close (the block cutter).
//   sync_mu_      guards wal_'s file operations and durable_pos_; the group
//                 commit leader writes pending_ and fdatasyncs under it.
//   mu_           guards everything else in memory: streams, heads, block
//                 index, sources, counters, pending_ (encoded WAL frames not
//                 yet written), and the wal_ pointer's segment number.
// Partition has its own leaf mutex; it is never held while taking one of these.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/dir_size_cache.h"
#include "store/logs/catalog.h"
#include "store/logs/format.h"
#include "store/logs/log_store.h"
#include "store/logs/partition.h"
#include "store/logs/wal.h"

namespace vigil::logstore {

// A line in a stream's in-memory head. Its text lives in one of the head's
// chunks, so the head costs a few large buffers per stream rather than one
// heap block per line.
struct HeadLine {
  uint64_t line_no = 0;
  uint64_t seq = 0;
  int64_t time_ns = 0;
  uint32_t chunk = 0;   // Head::Chunk id (counts up per head, wraps)
  uint32_t offset = 0;  // into that chunk
  uint32_t length = 0;
  uint32_t segment = 0;  // WAL segment holding the line
  uint8_t level = 0;
  uint8_t flags = 0;
};

// Head text is written into fixed chunks that are never reallocated or
// moved: a cut job reads its lines in place (no copy of the head) while
// appends fill the rest of the last chunk, and a chunk is freed once every
// line in it went into a block. Bytes below `used` are never written again.
struct HeadChunk {
  std::unique_ptr<char[]> data;
  uint32_t capacity = 0;
  uint32_t used = 0;
};

struct Head {
  static constexpr uint32_t kFirstChunkBytes = 4u << 10;
  static constexpr uint32_t kChunkBytes = 64u << 10;  // larger lines get a chunk of their own
  std::vector<HeadLine> lines;                        // ascending line_no (append order)
  // Chunks in id order: chunks[i] has id first_chunk + i. Shared with the cut
  // jobs encoding lines out of them.
  std::vector<std::shared_ptr<HeadChunk>> chunks;
  uint32_t first_chunk = 0;
  size_t bytes = 0;              // text of `lines`
  int64_t first_arrival_ms = 0;  // wall time the oldest line arrived
  std::string_view Text(const HeadLine& l) const {
    return {chunks[l.chunk - first_chunk]->data.get() + l.offset, l.length};
  }
  void Add(HeadLine l, std::string_view line);
  // Drops the lines whose line_no falls in one of `ranges` (sorted,
  // disjoint, inclusive) and frees the chunks no kept line uses.
  void Remove(const std::vector<std::pair<uint64_t, uint64_t>>& ranges);
};

// A block in the in-memory index. The partition is shared because a query
// that copied the entry may still read it after retention dropped the day:
// the open connection keeps the unlinked file readable until the last user.
struct BlockRef {
  BlockHeader header;
  int64_t rowid = 0;
  uint64_t disk_bytes = 0;
  std::shared_ptr<Partition> part;
  // The token filter, kept in memory while the store's filter budget lasts
  // (newest blocks first), so keyword queries touch disk only for blocks
  // that may match. Null: read it from the partition.
  std::shared_ptr<const std::string> filter;
};

struct Stream {
  uint64_t id = 0;
  std::shared_ptr<const wire::Labels> labels;
  uint64_t next_line = 0;
  uint64_t head_floor = 0;  // as last checkpointed
  int64_t min_time = INT64_MAX;
  int64_t max_time = INT64_MIN;
  Head head;
  std::vector<BlockRef> blocks;  // ascending first_line_no
  bool dirty = false;            // changed since the last catalog snapshot
};

// A source as the catalog keeps it, plus whether it changed since the last
// catalog snapshot.
struct Source : CatalogSource {
  bool dirty = false;
};

// One block's worth of lines of a head, encoded in place: the views point
// into the head's chunks, which the job keeps alive.
struct CutJob {
  uint64_t stream_id = 0;
  uint64_t first_line_no = 0;
  size_t bytes = 0;
  std::vector<BlockLine> lines;
  std::vector<std::shared_ptr<const HeadChunk>> chunks;
  NewBlock block;
};

class LogStoreImpl final : public LogStore {
 public:
  explicit LogStoreImpl(const Options& options);
  ~LogStoreImpl() override;

  Status Recover();
  void StartBackground();

  Status Append(std::string_view node, const wire::LogBatch& batch) override;
  Result<QueryResult> Query(const LogQuery& query) const override;
  Result<std::vector<LogEntry>> Context(LineRef ref, size_t before, size_t after) const override;
  Result<std::vector<LogEntry>> Since(const LogQuery& query, uint64_t after_seq) const override;
  uint64_t LastSeq() const override;
  Result<LevelHistogram> Histogram(const LogQuery& query, int64_t step_ns) const override;
  std::vector<std::string> LabelNames(int64_t start_ns, int64_t end_ns) const override;
  std::vector<std::string> LabelValues(std::string_view name, int64_t start_ns,
                                       int64_t end_ns) const override;
  std::vector<SourceTotals> Sources() const override;
  uint64_t CommittedOffset(std::string_view node, std::string_view source_id) const override;
  Status Maintain() override;
  LogStoreStats Stats() const override;
  Status Close() override;

 private:
  // log_store.cc
  Stream* StreamForLabelsLocked(const wire::Labels& labels);
  Stream* NewStreamLocked(uint64_t id, wire::Labels labels);
  Status ApplyReplayRecord(
      uint64_t segment, std::string_view body,
      const std::unordered_map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>>& covered);
  void ReserveWal(std::string_view node, const wire::LogBatch& batch);
  Status RelieveMemory();
  Status WaitDurable(uint64_t ticket);
  Status LoadFiltersLocked();
  void WakeMaintenance();

  // log_store_maintain.cc
  Status MaintainLocked(bool force);
  std::vector<CutJob> CollectCutsLocked(int64_t now_ms, bool force);
  void EncodeJob(CutJob* job);
  Status WriteBlocks(std::vector<CutJob>* jobs, std::vector<std::pair<uint64_t, uint64_t>>* floors);
  Result<std::shared_ptr<Partition>> PartitionForDay(int64_t day);
  Status FlushPendingLocked();
  Status DropWalSegments();
  Status ApplyRetention(int64_t now_ms);
  void BackgroundLoop();
  void ArchiveSlice();

  const Options options_;
  Env* const env_;
  const std::string wal_dir_;
  mutable DirSizeCache disk_bytes_;   // Stats() is scraped every second
  std::unique_ptr<Catalog> catalog_;  // used under maintain_mu_ (and in Recover)
  // Encodes every block and its token filter (one zstd context, buffers
  // and tables of about 2 MiB in all), under maintain_mu_.
  std::unique_ptr<BlockEncoder> encoder_;

  std::mutex maintain_mu_;
  uint64_t checkpoint_segment_ = 0;  // catalog's wal_segment; under maintain_mu_
  int64_t last_checkpoint_ms_ = 0;   // under maintain_mu_
  int64_t next_archive_ms_ = 0;      // Env monotonic; background thread only

  std::mutex sync_mu_;
  std::unique_ptr<WalWriter> wal_;
  uint64_t durable_pos_ = 0;  // bytes of frames written and synced (also under mu_)
  std::string write_buf_;     // the leader's batch being written

  mutable std::mutex mu_;
  bool closed_ = false;
  Status failed_;  // sticky: a WAL write failed, appends are refused until reopen
  std::string pending_;
  uint64_t appended_pos_ = 0;  // bytes of frames ever encoded
  std::map<uint64_t, std::unique_ptr<Stream>> streams_;
  std::unordered_map<std::string, uint64_t> stream_by_key_;
  std::unordered_map<std::string, Source> sources_;  // key: node '\0' source_id
  std::map<int64_t, std::shared_ptr<Partition>> partitions_;
  uint64_t next_stream_id_ = 1;
  uint64_t last_seq_ = 0;
  // Newest seq known durable. Since() returns nothing newer, so a tail cursor
  // never passes a seq that a crash could hand out again to another line.
  uint64_t durable_seq_ = 0;
  uint64_t lines_ = 0;
  uint64_t duplicates_ = 0;
  uint64_t head_lines_ = 0;
  uint64_t head_bytes_ = 0;
  uint64_t filter_bytes_ = 0;    // of BlockRef::filter in memory
  bool full_checkpoint_ = true;  // next snapshot writes everything

  std::mutex bg_mu_;
  std::condition_variable bg_cv_;
  bool stop_ = false;
  bool wake_ = false;
  std::thread bg_;
};

}  // namespace vigil::logstore
