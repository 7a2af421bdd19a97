// Archive recompression of old day partitions (docs/logstore.md "Archive
// recompression"). Ingest writes blocks at zstd level 1 (cheap, on the hot
// path); once a day is old enough, this pass rewrites each block's `data`
// blob with stronger zstd parameters, one block at a time, keeps the new blob
// only when it is smaller, and compacts the file. The block format does not
// change (any zstd level decodes), so readers never know.
//
// It works on the day file through its own SQLite connection, beside the
// store's: only `data` of existing rows changes (never a row id or summary,
// which the store keeps in memory), each batch of updates is one short write
// transaction, and VACUUM keeps the `INTEGER PRIMARY KEY` row ids. So queries
// and late-line writes may run meanwhile, and a kill at any point leaves
// every block readable (old blob or new one, both valid).
//
// Progress is kept in the partition: table `archive(key, value)`, key
// `archived_through` = the highest block id already recompressed. Block ids
// only grow (rows are never deleted), so blocks that late lines add to an old
// day later have larger ids and are picked up by the next pass; an
// interrupted pass resumes after its last committed batch.
//
// Thread safety: an Archiver is used by one thread at a time (it owns one
// zstd context and its buffers); distinct Archivers may run concurrently on
// distinct files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/status.h"

namespace vigil::logstore {

struct ArchiveOptions {
  // zstd parameters; 0 keeps the level's default for the block's size.
  // Defaults measured on training logs (bench/RESULTS.md "Logs", Updates
  // 2026-11-30 10:04 and 10:40): level 17 with 2^17-entry chain and hash
  // tables, a ~2 MiB context: 2.5x faster than level 19 for under 1% less
  // (zstd's own level-19 parameters need an 18 MiB context for a 600 KB
  // block and gain 0.5% more). The pass runs in the background on a CPU
  // budget, so speed is what decides how soon old days shrink.
  int level = 17;
  int window_log = 0;
  int chain_log = 17;
  int hash_log = 17;
  int search_log = 0;
  int min_match = 0;
  int target_length = 0;
  int strategy = 0;
  // A day file is due when its day ended at least this long ago (Env clock).
  int64_t min_age_ms = int64_t{86400} * 1000;
  // ... and not when it ended more than this long ago (0: no bound): the
  // store passes its retention, so a file is not worked on while retention
  // may delete it.
  int64_t max_age_ms = 0;
  // New blobs are committed in one transaction once they reach this many
  // bytes (or at the end of a slice): memory and write-lock time stay small.
  size_t txn_max_bytes = 1u << 20;
  // A slice stops between blocks once it has run this long (Env monotonic
  // clock; <= 0: no limit) or handled this many blocks; the next call goes on
  // after the last committed block.
  int64_t budget_ms = 0;
  uint64_t max_blocks = UINT64_MAX;
  // VACUUM when the free pages left by smaller blobs reach this fraction of
  // the file (and at least vacuum_min_bytes): one late block does not cost a
  // rewrite of the whole file; its free pages are reused by later inserts.
  double vacuum_min_fraction = 0.05;
  uint64_t vacuum_min_bytes = 256u << 10;
  // Compress and count, write nothing (what a pass would save).
  bool dry_run = false;
};

struct ArchiveStats {
  uint64_t blocks = 0;        // blocks looked at
  uint64_t recompressed = 0;  // new blob written (smaller)
  uint64_t kept = 0;          // new blob not smaller: left as it was
  uint64_t skipped = 0;       // not a readable block: left as it was, see errors
  uint64_t data_before = 0;   // `data` bytes of the blocks looked at
  uint64_t data_after = 0;    // the same blocks after the pass
  uint64_t raw_bytes = 0;     // their uncompressed payload
  uint64_t file_before = 0;   // the .db file (plus -wal) before and after
  uint64_t file_after = 0;
  uint64_t files = 0;  // partitions worked on
  bool vacuumed = false;
  bool finished = true;             // false: stopped by budget_ms / max_blocks
  double compress_seconds = 0;      // wall time in zstd (compressing)
  size_t context_bytes = 0;         // zstd compression context (ZSTD_sizeof_CCtx)
  std::vector<std::string> errors;  // blocks skipped, files that failed

  void Add(const ArchiveStats& o);
};

class Archiver {
 public:
  explicit Archiver(ArchiveOptions options, Env* env = nullptr);
  ~Archiver();
  Archiver(const Archiver&) = delete;
  Archiver& operator=(const Archiver&) = delete;

  // Whether a partition of this day (days since 1970-01-01) is old enough.
  bool Due(int64_t day) const;

  // Recompresses the blocks of one day file that no earlier pass did, then
  // compacts it if that freed enough. A block that does not decode is
  // skipped (named in stats->errors) and left as it is; so is any block when
  // its new blob is not smaller. Returns an error only for the file as a
  // whole (cannot open, not a partition, a write failed): blocks committed
  // before it keep their new blobs.
  Status ArchivePartition(const std::string& path, ArchiveStats* stats);

  // ArchivePartition on every due `YYYY-MM-DD.db` in dir, oldest first,
  // until the budget (one budget for the whole call) or max_blocks runs out.
  // A file that fails is reported in stats->errors and the others go on.
  Status ArchiveDir(const std::string& dir, ArchiveStats* stats);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil::logstore
