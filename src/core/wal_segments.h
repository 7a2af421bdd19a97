// Write-ahead log segments, shared by the metrics and log stores and the
// agent's outbox (ship/outbox.h): numbered
// files <dir>/NNNNNNNN.wal, each a sequence of frames
//
//   fixed32 length of body | fixed32 crc32c of body | body
//
// What a body holds is each store's business (docs/tsdb.md, docs/logstore.md).
// A crash can leave a torn or garbled tail; replay stops a segment at its
// first frame that fails a check (length, checksum, or the store's own parse
// of the body) and cuts the file back to the valid prefix, so no writer ever
// appends behind garbage (writers also always start a fresh segment).
//
// Thread safety: none; each store serialises its calls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"

namespace vigil {

// Appends one framed body to `dst`.
void AppendWalFrame(std::string* dst, std::string_view body);

std::string WalSegmentPath(const std::string& wal_dir, uint64_t segment);
// Segment numbers present in wal_dir, ascending (other files are ignored).
Result<std::vector<uint64_t>> ListWalSegments(Env* env, const std::string& wal_dir);

class WalWriter {
 public:
  // Starts writing a fresh segment numbered `segment`. Bodies above
  // max_body_bytes are refused (the reader takes them as corruption).
  static Result<std::unique_ptr<WalWriter>> Open(Env* env, std::string wal_dir, uint64_t segment,
                                                 uint32_t max_body_bytes);
  // Frames and appends one body. Not durable until Sync.
  Status Add(std::string_view body);
  // Appends already framed bytes (AppendWalFrame), for group commit.
  Status Write(std::string_view frames);
  Status Sync();
  // Syncs and closes the current segment and starts the next one.
  Status Rotate();
  Status Close();
  uint64_t segment() const { return segment_; }
  uint64_t segment_bytes() const { return file_ ? file_->Size() : 0; }
  bool dirty() const { return dirty_; }

 private:
  WalWriter(Env* env, std::string dir, uint32_t max_body_bytes)
      : env_(env), dir_(std::move(dir)), max_body_bytes_(max_body_bytes) {}
  Status OpenSegment(uint64_t segment);

  Env* env_;
  std::string dir_;
  uint32_t max_body_bytes_;
  uint64_t segment_ = 0;
  std::unique_ptr<AppendableFile> file_;
  bool dirty_ = false;
  std::string frame_;  // reused buffer
};

struct WalReplayStats {
  uint64_t segments = 0;
  uint64_t records = 0;
  uint64_t truncated_bytes = 0;  // cut from torn or corrupt tails
  uint64_t torn_segments = 0;
};

struct WalReplayOptions {
  uint32_t max_body_bytes = 0;
  size_t max_segment_bytes = 0;  // larger segments are read only this far
  // True when a body whose checksum holds also parses; false ends the valid
  // log there, like a torn frame.
  std::function<bool(std::string_view body)> body_ok;
};

// Calls `fn(segment, body)` for every valid frame of every segment, in order.
// A segment whose tail fails its checks is truncated to its valid prefix;
// replay goes on with the next segment. `fn` returning an error stops replay.
Result<WalReplayStats> ReplayWal(Env* env, const std::string& wal_dir,
                                 const WalReplayOptions& options,
                                 const std::function<Status(uint64_t, std::string_view)>& fn);

}  // namespace vigil
