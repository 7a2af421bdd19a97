// Internals of FileTailer shared by its translation units: tailer.cc (lines,
// rotation, restart) and tailer_copies.cc (copytruncate copies, early
// rotations). Not a public header: other modules include collect/logs/tailer.h.
//
// Thread safety: as FileTailer (none; one thread at a time).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collect/logs/tailer.h"
#include "core/status.h"

namespace vigil::collect::logs {

// One open file in one generation, with the line splitter's state.
//
// Offsets: bytes before `consumed` are handed out (checkpointable); bytes in
// [consumed, read_pos) are the held start of an incomplete line (`pending`),
// except in skip mode, where pending is empty and consumed == read_pos.
struct FileTailer::Source {
  int fd = -1;
  std::string path;  // for messages
  SourceIdentity id;
  int64_t btime_ns = 0;
  bool fixed = false;        // id.fp/fp_len decided
  bool emitted_any = false;  // a chunk of this source_id was handed out (or checkpointed)
  uint64_t read_pos = 0;
  uint64_t consumed = 0;
  uint64_t last_size = 0;
  std::string pending;
  bool skipping = false;       // discarding the tail of an over-long line
  bool after_partial = false;  // the line at `consumed` follows a flushed partial
  int64_t last_growth_ms = 0;
  int64_t detached_ms = -1;  // >= 0 once rotated away or deleted
  bool force_finish = false;
  bool done = false;
  // The last bytes handed out: [seam_end - seam.size(), seam_end).
  std::string seam;
  uint64_t seam_end = 0;
  // A truncated generation looking for its copy (fd < 0 until found).
  bool hunting = false;
  int64_t hunt_until_ms = 0;
  int64_t next_hunt_ms = 0;
  int64_t last_read_unix_ms = 0;  // of the truncated file: copies are made after it
  uint64_t gz_bytes_tried = 0;    // gzip candidates' sizes at the last inflate pass
  uint64_t short_copy_bytes = 0;  // in candidates shorter than our offset, at the last look
  uint64_t seen_size = 0;         // the truncated file's size at our last look before it
  bool is_copy = false;           // reading the copy (fd is another file) of this generation

  ~Source() {
    if (fd >= 0) ::close(fd);
  }
  ResumeState resume() const {
    if (skipping) return ResumeState::kSkipToNewline;
    return after_partial ? ResumeState::kAfterPartial : ResumeState::kLineStart;
  }
};

namespace tailer_internal {

using Source = FileTailer::Source;

// The last bytes handed out that a copytruncate's copy must also hold at the
// same offset: with the head fingerprint, they tell our copy from an older
// generation's that began with the same bytes (same inode, same birth time).
inline constexpr size_t kSeamBytes = 64;

// pread of up to n bytes at off (fewer at the end of the file).
Status ReadAt(int fd, uint64_t off, size_t n, std::string* out, const std::string& path);
Result<uint64_t> FileSizeOf(const Source& s);
// Opens a regular file (O_NONBLOCK: a FIFO never blocks) as a new source:
// dev, ino and birth time filled in, nothing read.
Result<std::unique_ptr<Source>> OpenSource(const std::string& path, int64_t now);
// Emits the held partial line (kLogFlagPartial), if any.
void FlushPartial(Source& s, size_t max_line, int64_t read_ns, TailerStats* stats,
                  std::vector<RawLine>* out);
// Starts chunk `c` at the source's consumed offset, for `path`.
void Header(const Source& s, const std::string& path, TailChunk* c);

}  // namespace tailer_internal
}  // namespace vigil::collect::logs
