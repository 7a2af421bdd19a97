// Write-ahead log of the log store's heads: numbered segment files
// wal/NNNNNNNN.wal, each a sequence of frames (layout in docs/logstore.md):
//
//   fixed32 length of body | fixed32 crc32c of body | body (format.h records)
//
// A crash can leave a torn tail; replay stops a segment at its first frame
// that fails a check and cuts the file back to the valid prefix, so no writer
// ever appends behind garbage (writers also always start a fresh segment).
//
// Thread safety: none; LogStoreImpl serialises all calls (see log_store_impl.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"

namespace vigil::logstore {

// Frames larger than this are taken as corruption, not allocated.
inline constexpr uint32_t kMaxWalFrameBytes = 512u << 20;

// Appends one framed record to `dst`.
void AppendWalFrame(std::string* dst, std::string_view body);

std::string WalSegmentPath(const std::string& wal_dir, uint64_t segment);
// Segment numbers present in wal_dir, ascending (other files are ignored).
Result<std::vector<uint64_t>> ListWalSegments(Env* env, const std::string& wal_dir);

class WalWriter {
 public:
  // Starts writing a fresh segment numbered `segment`.
  static Result<std::unique_ptr<WalWriter>> Open(Env* env, std::string wal_dir, uint64_t segment);
  // Appends already framed bytes (AppendWalFrame). Not durable until Sync.
  Status Write(std::string_view frames);
  Status Sync();
  // Syncs and closes the current segment and starts the next one.
  Status Rotate();
  Status Close();
  uint64_t segment() const { return segment_; }
  uint64_t segment_bytes() const { return file_ ? file_->Size() : 0; }

 private:
  WalWriter(Env* env, std::string dir) : env_(env), dir_(std::move(dir)) {}
  Status OpenSegment(uint64_t segment);

  Env* env_;
  std::string dir_;
  uint64_t segment_ = 0;
  std::unique_ptr<AppendableFile> file_;
  bool dirty_ = false;
};

struct WalReplayStats {
  uint64_t segments = 0;
  uint64_t records = 0;
  uint64_t truncated_bytes = 0;  // cut from torn or corrupt tails
  uint64_t torn_segments = 0;
};

// Calls fn(segment, body) for each valid frame of each segment, in order.
// `fn` returning an error stops replay with that error.
Result<WalReplayStats> ReplayWal(Env* env, const std::string& wal_dir,
                                 const std::function<Status(uint64_t, std::string_view)>& fn);

}  // namespace vigil::logstore
