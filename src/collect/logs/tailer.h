// FileTailer: follows one log file path and hands out its complete lines,
// with byte offsets, across rotation (rename+create, copytruncate), deletion
// and agent restarts. Rules and guarantees are in docs/tailer.md.
//
// Pull-based: the agent calls ReadSome() when FileWatcher says something may
// have changed (and on a timer); each call reads a bounded amount and returns
// one TailChunk about exactly one source (one source_id). When a rotated file
// is still being drained, its chunks come before the new file's; so do those
// of a truncated generation's copy (copytruncate), read from where reading
// had stopped, and of generations rotated away before the path was first
// opened (TailerOptions::rotated_since_ms).
//
// Delivery contract with the caller (the agent loop):
//  - Ship chunk.lines as one wire::LogStream {source_id, start_offset,
//    end_offset}; a chunk may consume bytes without lines (the skipped tail of
//    an over-long line): still ship its range, the server then moves on.
//  - When chunk.first_of_source, CheckpointStore::Commit(chunk.StartCheckpoint())
//    before shipping it: that pins the source's fingerprint, so a restart
//    recognises the same bytes under the same source_id.
//  - After the server acknowledged through chunk.end_offset,
//    Commit(chunk.EndCheckpoint()); once a chunk in finished_sources is
//    acknowledged (and for every entry of `lost`), Forget() that source.
//  - On restart, FileTailer::Open(path, options, store.ForPath(path)).
//
// Thread safety: none; one FileTailer is used by one thread at a time.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collect/logs/checkpoint.h"
#include "core/env.h"
#include "core/status.h"

namespace vigil::collect::logs {

// A line as read, before parsing: bytes without the '\n' (and without the
// '\r' of a "\r\n"), flags from wire::kLogFlag*.
struct RawLine {
  uint64_t offset = 0;  // byte offset of its first byte in the source
  std::string bytes;
  uint8_t flags = 0;  // wire::kLogFlagTruncated, wire::kLogFlagPartial
  int64_t read_time_ns = 0;
  bool operator==(const RawLine&) const = default;
};

// Lines that cannot be delivered, reported once: a source the tailer was
// asked to resume but could no longer find (its lines after the checkpoint
// offset are gone), or bytes a copytruncate took away that no readable copy
// holds (docs/tailer.md "Rotated copies and early rotations").
struct LostSource {
  SourceCheckpoint checkpoint;
  std::string reason;  // says what happened, and how many bytes when known
  // At least this many bytes are gone; 0 when unknown (the file is gone, or
  // its copy is compressed in a form this build cannot read).
  uint64_t lost_bytes = 0;
};

struct TailChunk {
  std::string path;
  std::string source_id;  // empty when the tailer has no readable source now
  SourceIdentity identity;
  uint64_t start_offset = 0;  // where this chunk's consumed range begins
  uint64_t end_offset = 0;    // just past the last byte consumed
  ResumeState start_resume = ResumeState::kLineStart;
  ResumeState end_resume = ResumeState::kLineStart;
  std::vector<RawLine> lines;
  bool first_of_source = false;  // first chunk of a new source_id: pin it
  // Sources that ended with this chunk (at most this chunk's source_id):
  // rotated away or deleted and drained, or truncated (a new generation
  // follows). Nothing more will come from them.
  std::vector<std::string> finished_sources;
  // Lines that cannot be delivered (LostSource), each reported once.
  std::vector<LostSource> lost;

  bool finished() const { return !finished_sources.empty(); }
  // Nothing to ship, commit or forget.
  bool empty() const {
    return lines.empty() && start_offset == end_offset && finished_sources.empty() && lost.empty();
  }
  SourceCheckpoint StartCheckpoint() const;
  SourceCheckpoint EndCheckpoint() const;
};

struct TailerOptions {
  // Lines longer than this are cut: the head is emitted with kLogFlagTruncated,
  // the rest up to the newline is consumed unread. Memory per source stays
  // below max_line_bytes + 64 KiB.
  size_t max_line_bytes = 1u << 20;
  // A last line without '\n' is held until it completes, or emitted with
  // kLogFlagPartial after this long without the file growing.
  int64_t partial_flush_ms = 5000;
  // A rotated-away or deleted file is kept open and read for this long after
  // its last growth (writers reopen their log a little after the rename).
  int64_t rotate_wait_ms = 5000;
  // With no checkpoint for the file found at Open, start at its end (only
  // lines written from now on) instead of its beginning.
  bool start_at_end = false;
  // Rotated files drained at once at most; past it the oldest is finished as
  // soon as it is read to its end.
  size_t max_draining = 8;
  // Directory entries examined when looking for a file rotated while down,
  // a copytruncate's copy or early rotations.
  size_t max_sibling_scan = 4096;
  // On a truncation, the newest this many rotated siblings (tailer_siblings.h)
  // are checked for the copy a copytruncate made; its lines past our offset
  // are read before the truncated file's next generation.
  size_t max_copy_candidates = 16;
  // A gzip-compressed copy is inflated at most this far (CPU), and what
  // lies past our offset is held in memory while it is read (RSS); what lies
  // beyond the bound is reported lost.
  uint64_t max_inflate_bytes = 64u << 20;
  // Unix epoch ms; 0: off. With no checkpoint for the path, Open also reads
  // its rotated siblings modified at or after this time (a job's logs that
  // were rotated away before discovery first saw the file: pass the job's
  // start time), oldest first and before the file itself, at most
  // max_draining of them (more are reported lost).
  int64_t rotated_since_ms = 0;
  // Clock (MonotonicMillis for timeouts, NowMillis for read_time_ns) and
  // directory listing. nullptr: Env::Default().
  Env* env = nullptr;
};

struct TailerStats {
  uint64_t lines = 0;
  uint64_t bytes_consumed = 0;
  uint64_t truncated_lines = 0;
  uint64_t partial_lines = 0;
  uint64_t rotations = 0;     // path switched to another file or vanished
  uint64_t truncations = 0;   // copytruncate / truncation: new generation
  uint64_t lost_sources = 0;  // checkpointed sources not found on restart
  uint64_t finished_sources = 0;
  uint64_t copies_read = 0;       // truncations whose copy was found and read from our offset
  uint64_t lost_truncations = 0;  // truncations whose unread bytes no readable copy holds
  uint64_t lost_bytes = 0;        // bytes known lost (a lower bound): truncations, early rotations
  uint64_t early_rotations_read = 0;  // rotated siblings read at Open (rotated_since_ms)
};

class FileTailer {
 public:
  // Follows `path` (which need not exist yet). `checkpoints` are this path's
  // entries from CheckpointStore::ForPath. Fails on a compressed rotated file
  // (discover::IsRotatedCompressed) or a path that is not a regular file.
  static Result<std::unique_ptr<FileTailer>> Open(std::string path, TailerOptions options = {},
                                                  std::vector<SourceCheckpoint> checkpoints = {});
  ~FileTailer();
  FileTailer(const FileTailer&) = delete;
  FileTailer& operator=(const FileTailer&) = delete;

  // Reads at most about max_bytes of file data (at least one line's worth) and
  // returns one chunk. An empty() chunk means nothing new for now. Errors
  // (unreadable file) leave the tailer usable: call again later.
  Result<TailChunk> ReadSome(size_t max_bytes);

  // True while a file is open (the path's file, or rotated ones draining).
  // False after a deleted file was finished and nothing is at the path.
  bool HasOpenSources() const;
  // Source ids currently open, draining ones first (ids fixed so far).
  std::vector<std::string> OpenSourceIds() const;
  const std::string& path() const { return path_; }
  const TailerStats& stats() const { return stats_; }

  struct Source;  // one open file in one generation (tailer.cc)

 private:
  FileTailer(std::string path, TailerOptions options);
  Status Resume(std::vector<SourceCheckpoint> checkpoints);
  // (dev, ino) -> the checkpoint of that file to resume and the file it is in.
  using CheckpointMatches =
      std::map<std::pair<uint64_t, uint64_t>, std::pair<SourceCheckpoint, std::string>>;
  const std::vector<std::string>& Siblings(std::optional<std::vector<std::string>>* cache);
  // The file holding `cp`'s bytes now ("" for none): the path itself while its
  // inode is still there (`at_path`, nullptr when nothing is), else a rotated
  // sibling; *seen says whether a file with its inode exists at all.
  std::string Locate(const SourceCheckpoint& cp, const struct stat* at_path,
                     std::optional<std::vector<std::string>>* siblings, int64_t now, bool* seen);
  void Reopen(const std::vector<SourceCheckpoint>& checkpoints, const CheckpointMatches& matches,
              int64_t now);
  std::unique_ptr<Source> ResumeFromCopy(const SourceCheckpoint& cp, int64_t now);
  Status CheckPath(int64_t now, bool* changed);
  Status OpenCurrent(bool at_end);
  void OpenEarlyRotations(const struct stat* at_path, int64_t now);
  Status Pump(Source& s, bool is_current, size_t max_bytes, int64_t now, TailChunk* out);
  // Truncation of the current file: a hunt for its copy is queued in draining_.
  void StartCopyHunt(Source& truncated, int64_t now);
  // Ends a truncated generation whose unread bytes have no copy: its held
  // partial line, then the source finished in *out.
  void EndTruncatedGeneration(Source& s, int64_t read_ns, TailChunk* out);
  void Hunt(Source& s, int64_t now, TailChunk* out);
  enum class CopySearch { kFound, kMaybeLater, kNone };
  CopySearch FindCopy(Source& s, int64_t now, std::string* why);
  enum class GzipCopy { kAdopted, kNotOurs, kStillWritten };
  GzipCopy AdoptInflatedCopy(Source& s, const std::string& gz, std::string* why);
  void ReportLoss(const Source& s, uint64_t bytes, std::string reason);
  TailChunk PumpDraining(size_t max_bytes, int64_t now);
  uint64_t NextGeneration(uint64_t dev, uint64_t ino);
  void ReleaseBuffers();

  std::string path_;
  TailerOptions options_;
  Env* env_;
  std::unique_ptr<Source> current_;
  std::vector<std::unique_ptr<Source>> draining_;  // oldest first
  std::vector<LostSource> lost_;                   // to report with the next chunk
  // Highest generation used per (dev, ino), so a reused inode or a truncated
  // file never repeats a source_id. Bounded (cleared past 4096 entries).
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> generations_;
  std::string buf_;  // read buffer
  TailerStats stats_;
};

// The fingerprint of a file's head: FNV-1a 64 over birth time (0 when the
// file system has none), length and bytes. Exposed for tests and docs.
uint64_t FingerprintBytes(int64_t btime_ns, std::string_view head);

}  // namespace vigil::collect::logs
