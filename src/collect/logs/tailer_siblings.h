// Rotated siblings of a followed file: the names rotators give its rotated
// generations and copies, a bounded listing of them, and the reader of a
// gzip-compressed copy. The tailer uses them to find the copy a copytruncate
// left behind and the generations a job rotated away before discovery first
// saw its log (docs/tailer.md "Rotated copies and early rotations").
//
// Untrusted input: directory entries and file contents are whatever is on
// disk. Every function here bounds its work (entries looked at, bytes
// inflated) and reports, never crashes, on odd content.
//
// Thread safety: pure functions over the file system; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/status.h"

namespace vigil::collect::logs {

// True when directory entry `name` is what a rotator calls a rotated
// generation of the file named `live` in the same directory:
//   "app.log.1"  "app.log-20261201"  "app.log.2026-12-01"  "app.log.1.gz"
//   "app-20261201.log" (logrotate's dateext with the extension kept last)
// i.e. the live name (or its stem, for an extension kept last), a '.', '-'
// or '_', then a rotation suffix (digits first; digits, '-', '_', '.', ':',
// 'T', 'Z' after), then optionally a compression extension. The live name
// itself is not its own sibling.
bool IsRotatedSiblingName(std::string_view live, std::string_view name);

struct RotatedSibling {
  std::string path;
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;     // Unix epoch nanoseconds
  bool compressed = false;  // discover::IsRotatedCompressed(path)
};

// The regular files next to `path` whose names are IsRotatedSiblingName of
// it, newest (by mtime) first. Looks at most `max_scan` directory entries and
// keeps the newest `max_keep`. An unreadable directory yields none.
std::vector<RotatedSibling> ListRotatedSiblings(Env* env, const std::string& path, size_t max_scan,
                                                size_t max_keep);

// A gzip-compressed copy inflated far enough to check it and read it on.
struct InflatedCopy {
  // An anonymous memory file (memfd, close it) holding the inflated bytes
  // from `from` on at their own offsets (the bytes before are a hole), so it
  // reads like the uncompressed copy; its size is `size`.
  int fd = -1;
  uint64_t size = 0;      // inflated bytes (the copy's length when `complete`)
  bool complete = false;  // the gzip stream ended (not cut, not still being written)
  std::string head;       // the first head_len bytes (fewer when the copy is shorter)
  std::string window;     // bytes [window_end - window_len, window_end), when present
};

// True when this build can read gzip copies (zlib was found at build time).
bool CanInflateGzip();

// Inflates the gzip file at `path` (a ".gz" name; concatenated members are
// one stream, as gzip -d reads them). Stops after `max_total` inflated
// bytes (complete = false then). Unimplemented without zlib; IoError on an
// unreadable file; a stream cut short or damaged (bad data, failed CRC)
// yields what inflated before, with complete = false.
Result<InflatedCopy> InflateGzipCopy(const std::string& path, size_t head_len, uint64_t window_end,
                                     size_t window_len, uint64_t from, uint64_t max_total);

}  // namespace vigil::collect::logs
