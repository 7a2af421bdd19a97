// Checkpoints of the file tailer: how far each log source has been
// acknowledged by the server, kept durably under the agent's state dir so a
// restarted agent neither loses nor repeats lines (docs/tailer.md).
//
// A source is one byte sequence: a file (device + inode), pinned by a
// fingerprint of its first bytes, in one generation (a truncation starts the
// next). Its source_id, "file:<dev>:<ino>:<fp hex>:<generation>", is what
// wire::LogStream carries and what the server deduplicates offsets on.
//
// Storage: one file, <state_dir>/tail-checkpoints, rewritten whole with
// Env::WriteFileAtomic, so a kill -9 at any instant leaves the old or the new
// content, never a mix. Pins and forgets are written at once; acknowledged
// offsets may be written at most every `ack_persist_interval_ms` (the agent
// uses 1 s): an offset that lags on disk only makes a restarted agent read
// again lines the server already has, and the server drops them (it
// deduplicates on source offsets). One write a second instead of one per
// batch: each write is an fsync of the file and of its directory. A CRC-32C trailer catches a file
// that was damaged some other way; such a file is moved aside and the store starts empty (lines are
// then re-read and the server drops what it already has).
//
// Thread safety: all methods of CheckpointStore are safe to call from several
// threads; one mutex guards the map and serializes the file writes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"

namespace vigil::collect::logs {

// What the bytes a source's offsets refer to are.
struct SourceIdentity {
  uint64_t dev = 0;
  uint64_t ino = 0;
  // Hash of the file's birth time (when the file system reports one), of
  // fp_len and of the first fp_len bytes (fp_len <= kFingerprintBytes, fixed
  // when the source is first seen with data).
  uint64_t fp = 0;
  uint32_t fp_len = 0;
  uint64_t generation = 0;  // +1 on each truncation of the same inode

  // "file:<dev>:<ino>:<16 hex digits of fp>:<generation>".
  std::string SourceId() const;
  bool operator==(const SourceIdentity&) const = default;
};

// Bytes of a file's head the fingerprint covers once the file has that many.
inline constexpr uint32_t kFingerprintBytes = 1024;

// Where reading resumes inside the byte stream at `offset`.
enum class ResumeState : uint8_t {
  kLineStart = 0,      // offset is the first byte of a line
  kSkipToNewline = 1,  // inside an over-long line whose head was emitted: skip to '\n'
  kAfterPartial = 2,   // just past a line flushed as partial: an empty remainder is dropped
};

struct SourceCheckpoint {
  std::string path;  // the path the tailer follows (not the rotated name)
  SourceIdentity identity;
  uint64_t offset = 0;  // acknowledged up to here (exclusive)
  ResumeState resume = ResumeState::kLineStart;
  int64_t updated_ms = 0;  // wall clock of the last commit; set by the store

  std::string source_id() const { return identity.SourceId(); }
  bool operator==(const SourceCheckpoint&) const = default;
};

struct CheckpointStoreOptions {
  // Entries kept at most; past it the least recently updated are dropped
  // (their files are then read again from the start if they still exist).
  size_t max_entries = 10000;
  // CommitMany(.., Persist::kWhenDue) writes the file at most this often
  // (monotonic clock); 0: at every commit.
  int64_t ack_persist_interval_ms = 0;
};

// When a commit reaches the disk.
enum class Persist {
  kNow,      // before CommitMany returns
  kWhenDue,  // now if ack_persist_interval_ms has passed since the last write,
             // else at a later PersistIfDue / Flush / commit
};

class CheckpointStore {
 public:
  // Loads <state_dir>/tail-checkpoints (creating state_dir if needed).
  static Result<std::unique_ptr<CheckpointStore>> Open(Env* env, std::string state_dir,
                                                       CheckpointStoreOptions options = {});

  // Records that the server acknowledged cp.source_id() up to cp.offset and
  // persists the map. Call only after the acknowledgement, except to pin a
  // new source at its start offset before shipping it (see FileTailer). An
  // offset lower than the one stored is ignored: offsets never go back.
  Status Commit(const SourceCheckpoint& cp);
  // Several commits, one file write (now or deferred, see Persist).
  Status CommitMany(std::span<const SourceCheckpoint> cps, Persist when = Persist::kNow);
  // Writes deferred commits when ack_persist_interval_ms has passed since
  // the last write; Flush writes them now. Both are no-ops when none wait.
  Status PersistIfDue();
  Status Flush();
  // Whether commits wait for a write.
  bool dirty() const;
  // Drops a source: it is finished (rotated away, deleted, truncated) and
  // acknowledged to its end, or reported lost. Unknown ids are fine.
  Status Forget(const std::string& source_id);
  Status ForgetMany(std::span<const std::string> source_ids);

  std::optional<SourceCheckpoint> Get(const std::string& source_id) const;
  // Every entry whose path is `path`, oldest update first: what FileTailer
  // takes to resume that path.
  std::vector<SourceCheckpoint> ForPath(const std::string& path) const;
  std::vector<SourceCheckpoint> All() const;
  size_t size() const;

  // True when Open found a damaged file and started empty.
  bool recovered_from_corruption() const { return recovered_; }
  const std::string& file_path() const { return file_; }

 private:
  CheckpointStore(Env* env, std::string file, CheckpointStoreOptions options)
      : env_(env), file_(std::move(file)), options_(options) {}
  void PutLocked(const SourceCheckpoint& cp, int64_t now_ms);
  void EvictLocked();
  Status PersistLocked();
  bool DueLocked() const;

  Env* env_;
  std::string file_;
  CheckpointStoreOptions options_;
  bool recovered_ = false;
  mutable std::mutex mu_;
  std::map<std::string, SourceCheckpoint> entries_;  // guarded by mu_; key: source_id
  bool dirty_ = false;                               // guarded by mu_: commits not written
  int64_t last_persist_ms_ = INT64_MIN / 2;          // guarded by mu_; monotonic
};

// The file format, exposed for tests and tools.
std::string EncodeCheckpoints(std::span<const SourceCheckpoint> cps);
// Fails (Corruption) on a bad header, line or checksum; never crashes.
Result<std::vector<SourceCheckpoint>> DecodeCheckpoints(std::string_view data);

}  // namespace vigil::collect::logs
