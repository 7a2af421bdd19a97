#include "collect/logs/tailer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include "collect/logs/tailer_internal.h"
#include "core/strings.h"
#include "discover/log_sources.h"
#include "wire/log_batch.h"

namespace vigil::collect::logs {

using tailer_internal::FileSizeOf;
using tailer_internal::FlushPartial;
using tailer_internal::Header;
using tailer_internal::kSeamBytes;
using tailer_internal::OpenSource;
using tailer_internal::ReadAt;
using tailer_internal::Source;

namespace {

constexpr size_t kReadBlock = 64u << 10;
// What a log line typically takes, newline included: sizes a chunk's vector.
constexpr size_t kTypicalLineBytes = 100;

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Birth time when the file system keeps one: it tells a reused inode from the
// file that had it even when both start with the same bytes.
int64_t BirthTimeNs(int fd) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &stx) != 0) return 0;
  if ((stx.stx_mask & STATX_BTIME) == 0) return 0;
  return static_cast<int64_t>(stx.stx_btime.tv_sec) * 1000000000 + stx.stx_btime.tv_nsec;
}

}  // namespace

namespace tailer_internal {

Status ReadAt(int fd, uint64_t off, size_t n, std::string* out, const std::string& path) {
  out->resize(n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = NoEintr([&] { return ::pread(fd, out->data() + got, n - got, off + got); });
    if (r < 0) return ErrnoStatus("read", path, errno);
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  out->resize(got);
  return Status::Ok();
}

}  // namespace tailer_internal

namespace tailer_internal {

Result<uint64_t> FileSizeOf(const Source& s) {
  struct stat st {};
  if (::fstat(s.fd, &st) != 0) return ErrnoStatus("stat", s.path, errno);
  return static_cast<uint64_t>(st.st_size);
}

Result<std::unique_ptr<Source>> OpenSource(const std::string& path, int64_t now) {
  // O_NONBLOCK: a FIFO at the path must not block the agent in open().
  int fd = NoEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); });
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(path + " does not exist");
    return ErrnoStatus("open", path, errno);
  }
  auto s = std::make_unique<Source>();
  s->fd = fd;
  s->path = path;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoStatus("stat", path, errno);
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + " is not a regular file; not tailed");
  s->id.dev = static_cast<uint64_t>(st.st_dev);
  s->id.ino = static_cast<uint64_t>(st.st_ino);
  s->btime_ns = BirthTimeNs(fd);
  s->last_growth_ms = now;
  return s;
}

}  // namespace tailer_internal

namespace {

Result<uint64_t> HeadFingerprint(const Source& s, uint32_t len, std::string* scratch) {
  VIGIL_RETURN_IF_ERROR(ReadAt(s.fd, 0, len, scratch, s.path));
  if (scratch->size() < len) return NotFound("file shorter than its fingerprint");
  return FingerprintBytes(s.btime_ns, *scratch);
}

// True when the file still holds the bytes `id` fingerprinted, at least
// `offset` long.
bool Verify(const Source& s, const SourceIdentity& id, uint64_t offset, std::string* scratch) {
  auto size = FileSizeOf(s);
  if (!size.ok() || *size < offset || *size < id.fp_len) return false;
  auto fp = HeadFingerprint(s, id.fp_len, scratch);
  return fp.ok() && *fp == id.fp;
}

}  // namespace

uint64_t FingerprintBytes(int64_t btime_ns, std::string_view head) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 1099511628211ull;
    }
  };
  uint64_t len = head.size();
  mix(&btime_ns, sizeof(btime_ns));
  mix(&len, sizeof(len));
  mix(head.data(), head.size());
  return h;
}

SourceCheckpoint TailChunk::StartCheckpoint() const {
  SourceCheckpoint cp;
  cp.path = path;
  cp.identity = identity;
  cp.offset = start_offset;
  cp.resume = start_resume;
  return cp;
}

SourceCheckpoint TailChunk::EndCheckpoint() const {
  SourceCheckpoint cp;
  cp.path = path;
  cp.identity = identity;
  cp.offset = end_offset;
  cp.resume = end_resume;
  return cp;
}

FileTailer::FileTailer(std::string path, TailerOptions options)
    : path_(std::move(path)), options_(options), env_(options.env ? options.env : Env::Default()) {
  if (options_.max_line_bytes == 0) options_.max_line_bytes = 1;
}

FileTailer::~FileTailer() = default;

Result<std::unique_ptr<FileTailer>> FileTailer::Open(std::string path, TailerOptions options,
                                                     std::vector<SourceCheckpoint> checkpoints) {
  if (path.empty()) return InvalidArgument("tailer needs a path");
  if (discover::IsRotatedCompressed(path)) {
    return InvalidArgument(path + " is a compressed rotated file; not tailed");
  }
  std::unique_ptr<FileTailer> t(new FileTailer(std::move(path), options));
  VIGIL_RETURN_IF_ERROR(t->Resume(std::move(checkpoints)));
  return t;
}

uint64_t FileTailer::NextGeneration(uint64_t dev, uint64_t ino) {
  if (generations_.size() > 4096) generations_.clear();
  auto it = generations_.find({dev, ino});
  uint64_t gen = it == generations_.end() ? 0 : it->second + 1;
  generations_[{dev, ino}] = gen;
  return gen;
}

// Rotated copies of the file that a checkpoint may now be in: everything in
// its directory but compressed rotations, listed once per Resume (bounded).
const std::vector<std::string>& FileTailer::Siblings(
    std::optional<std::vector<std::string>>* cache) {
  if (*cache) return **cache;
  cache->emplace();
  auto names = env_->ListDir(DirName(path_));
  if (names.ok()) {
    for (auto& n : *names) {
      if ((*cache)->size() >= options_.max_sibling_scan) break;
      if (!discover::IsRotatedCompressed(n)) (*cache)->push_back(JoinPath(DirName(path_), n));
    }
  }
  return **cache;
}

std::string FileTailer::Locate(const SourceCheckpoint& cp, const struct stat* at_path,
                               std::optional<std::vector<std::string>>* siblings, int64_t now,
                               bool* seen) {
  const auto& id = cp.identity;
  std::vector<std::string> candidates;
  if (at_path != nullptr && static_cast<uint64_t>(at_path->st_dev) == id.dev &&
      static_cast<uint64_t>(at_path->st_ino) == id.ino) {
    candidates.push_back(path_);
  } else {
    for (const auto& f : Siblings(siblings)) {
      struct stat st {};
      if (f == path_ || ::stat(f.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (static_cast<uint64_t>(st.st_dev) == id.dev &&
          static_cast<uint64_t>(st.st_ino) == id.ino) {
        candidates.push_back(f);
        break;
      }
    }
  }
  *seen = !candidates.empty();
  std::string found;
  for (const auto& f : candidates) {
    auto s = OpenSource(f, now);
    if (s.ok() && Verify(**s, id, cp.offset, &buf_)) found = f;
  }
  return found;
}

Status FileTailer::Resume(std::vector<SourceCheckpoint> checkpoints) {
  int64_t now = env_->MonotonicMillis();
  struct stat pst {};
  bool path_exists = ::stat(path_.c_str(), &pst) == 0;
  if (path_exists && !S_ISREG(pst.st_mode)) {
    return InvalidArgument(path_ + " is not a regular file; not tailed");
  }
  std::optional<std::vector<std::string>> siblings;  // listed when first needed
  // (dev, ino) -> best match: highest generation wins; the others are lost.
  CheckpointMatches matches;
  std::vector<std::unique_ptr<Source>> copies;  // earlier generations, read from their copies
  for (auto& cp : checkpoints) {
    const auto& id = cp.identity;
    auto key = std::make_pair(id.dev, id.ino);
    generations_[key] = std::max(generations_[key], id.generation);
    bool seen = false;
    std::string found = Locate(cp, path_exists ? &pst : nullptr, &siblings, now, &seen);
    if (found.empty() && seen && path_exists && pst.st_ino == id.ino && pst.st_dev == id.dev) {
      // Truncated while we were down, or while we read its copy: the copy
      // may still hold the rest.
      if (auto copy = ResumeFromCopy(cp, now)) {
        copies.push_back(std::move(copy));
        continue;
      }
    }
    if (found.empty()) {
      lost_.push_back({cp, seen ? "file no longer holds the checkpointed bytes"
                                : "file not found (deleted, compressed or moved away)"});
      continue;
    }
    auto it = matches.find(key);
    if (it != matches.end() && it->second.first.identity.generation > id.generation) {
      lost_.push_back({cp, "superseded by a later generation of the same file"});
      continue;
    }
    if (it != matches.end())
      lost_.push_back({it->second.first, "superseded by a later generation"});
    matches[key] = {cp, found};
  }
  stats_.lost_sources += lost_.size();
  Reopen(checkpoints, matches, now);
  // Earlier generations of the path's file: before anything else.
  draining_.insert(draining_.begin(), std::make_move_iterator(copies.begin()),
                   std::make_move_iterator(copies.end()));
  if (checkpoints.empty() && options_.rotated_since_ms > 0 && !options_.start_at_end) {
    OpenEarlyRotations(path_exists ? &pst : nullptr, now);
  }
  if (current_ || !path_exists) return Status::Ok();
  // The file at the path is new to us: rotated while we were down (start at
  // 0), or first seen (start where the options say).
  return OpenCurrent(options_.start_at_end && checkpoints.empty());
}

// Matched checkpoints become sources again, in checkpoint order: the one at
// the path is current, the rest drain.
void FileTailer::Reopen(const std::vector<SourceCheckpoint>& checkpoints,
                        const CheckpointMatches& matches, int64_t now) {
  for (const auto& cp : checkpoints) {
    auto it = matches.find({cp.identity.dev, cp.identity.ino});
    if (it == matches.end() || !(it->second.first == cp)) continue;
    auto opened = OpenSource(it->second.second, now);
    if (!opened.ok()) {  // renamed or removed since we looked
      lost_.push_back({cp, opened.status().ToString()});
      ++stats_.lost_sources;
      continue;
    }
    auto s = std::move(opened).value();
    s->id = cp.identity;
    s->fixed = true;
    s->emitted_any = true;
    s->read_pos = s->consumed = cp.offset;
    s->skipping = cp.resume == ResumeState::kSkipToNewline;
    s->after_partial = cp.resume == ResumeState::kAfterPartial;
    if (it->second.second == path_ && !current_) {
      current_ = std::move(s);
    } else {
      s->detached_ms = now;
      draining_.push_back(std::move(s));
    }
  }
  // More rotated files than we drain at once: the oldest go at their end.
  for (size_t i = 0; i + options_.max_draining < draining_.size(); ++i) {
    draining_[i]->force_finish = true;
  }
}

Status FileTailer::OpenCurrent(bool at_end) {
  int64_t now = env_->MonotonicMillis();
  auto s = OpenSource(path_, now);
  if (!s.ok()) {
    if (s.status().code() == StatusCode::kNotFound) return Status::Ok();  // raced a rename
    return s.status();
  }
  Source& src = **s;
  src.id.generation = NextGeneration(src.id.dev, src.id.ino);
  if (at_end) {
    VIGIL_ASSIGN_OR_RETURN(uint64_t size, FileSizeOf(src));
    src.read_pos = src.consumed = src.last_size = size;
    if (size > 0) {
      // Mid-line: the rest of that line began before us; skip it.
      VIGIL_RETURN_IF_ERROR(ReadAt(src.fd, size - 1, 1, &buf_, path_));
      src.skipping = buf_.size() == 1 && buf_[0] != '\n';
      uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(size, kFingerprintBytes));
      VIGIL_ASSIGN_OR_RETURN(src.id.fp, HeadFingerprint(src, len, &buf_));
      src.id.fp_len = len;
      src.fixed = true;
    }
  }
  current_ = std::move(s).value();
  return Status::Ok();
}

Status FileTailer::CheckPath(int64_t now, bool* changed) {
  *changed = false;
  struct stat st {};
  bool exists = ::stat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  if (current_ && (!exists || static_cast<uint64_t>(st.st_dev) != current_->id.dev ||
                   static_cast<uint64_t>(st.st_ino) != current_->id.ino)) {
    current_->detached_ms = now;
    draining_.push_back(std::move(current_));
    ++stats_.rotations;
    *changed = true;
    if (draining_.size() > options_.max_draining) draining_.front()->force_finish = true;
  }
  if (!current_ && exists) {
    VIGIL_RETURN_IF_ERROR(OpenCurrent(false));
    *changed = true;
  }
  return Status::Ok();
}

namespace {

// Splits `data` (read at s.read_pos) into lines appended to `out`.
void Split(Source& s, std::string_view data, size_t max_line, int64_t read_ns, TailerStats* stats,
           std::vector<RawLine>* out) {
  auto emit = [&](std::string_view bytes, uint8_t flags) {
    out->push_back(RawLine{s.consumed, std::string(bytes), flags, read_ns});
    ++stats->lines;
    if (flags & wire::kLogFlagTruncated) ++stats->truncated_lines;
  };
  while (!data.empty()) {
    if (s.skipping) {
      size_t nl = data.find('\n');
      size_t n = nl == std::string_view::npos ? data.size() : nl + 1;
      s.read_pos += n;
      s.consumed = s.read_pos;
      if (nl != std::string_view::npos) s.skipping = false;
      data.remove_prefix(n);
      continue;
    }
    size_t nl = data.find('\n');
    size_t take = nl == std::string_view::npos ? data.size() : nl;
    // Hold at most max_line + 1 bytes: the extra one may be the '\r' of a
    // "\r\n" that ends a line of exactly max_line bytes.
    if (s.pending.size() + take > max_line + 1) {
      if (s.pending.size() < max_line + 1) {
        size_t n = max_line + 1 - s.pending.size();
        s.pending.append(data.substr(0, n));
        s.read_pos += n;
        data.remove_prefix(n);
        continue;
      }
      emit(std::string_view(s.pending).substr(0, max_line), wire::kLogFlagTruncated);
      s.pending.clear();
      s.consumed = s.read_pos;
      s.skipping = true;
      s.after_partial = false;
      continue;
    }
    // A line that lies whole in `data` (the common case) is emitted from
    // there; only a line split across reads is gathered in `pending`.
    std::string_view line = data.substr(0, take);
    if (!s.pending.empty() || nl == std::string_view::npos) {
      s.pending.append(line);
      line = s.pending;
    }
    s.read_pos += take;
    data.remove_prefix(take);
    if (nl == std::string_view::npos) break;
    // Complete line.
    s.read_pos += 1;
    data.remove_prefix(1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max_line) {
      emit(line.substr(0, max_line), wire::kLogFlagTruncated);
    } else if (!(s.after_partial && line.empty())) {
      emit(line, 0);
    }
    s.pending.clear();
    s.consumed = s.read_pos;
    s.after_partial = false;
  }
  // A held line that can no longer fit is cut now, so memory and the
  // checkpoint do not wait for its newline.
  if (!s.skipping && s.pending.size() == max_line + 1 && s.pending.back() != '\r') {
    emit(std::string_view(s.pending).substr(0, max_line), wire::kLogFlagTruncated);
    s.pending.clear();
    s.consumed = s.read_pos;
    s.skipping = true;
    s.after_partial = false;
  }
}

bool Progress(const TailChunk& c) {
  return !c.lines.empty() || c.start_offset != c.end_offset || !c.finished_sources.empty();
}

}  // namespace

namespace tailer_internal {

void FlushPartial(Source& s, size_t max_line, int64_t read_ns, TailerStats* stats,
                  std::vector<RawLine>* out) {
  if (s.pending.empty()) return;
  uint8_t flags = wire::kLogFlagPartial;
  std::string_view bytes = s.pending;
  if (bytes.size() > max_line) {
    bytes = bytes.substr(0, max_line);
    flags |= wire::kLogFlagTruncated;
    ++stats->truncated_lines;
  }
  out->push_back(RawLine{s.consumed, std::string(bytes), flags, read_ns});
  ++stats->lines;
  ++stats->partial_lines;
  s.pending.clear();
  s.consumed = s.read_pos;
  s.after_partial = true;
}

void Header(const Source& s, const std::string& path, TailChunk* c) {
  c->path = path;
  c->identity = s.id;
  c->source_id = s.id.SourceId();
  c->start_offset = c->end_offset = s.consumed;
  c->start_resume = c->end_resume = s.resume();
}

}  // namespace tailer_internal

Status FileTailer::Pump(Source& s, bool is_current, size_t max_bytes, int64_t now, TailChunk* out) {
  if (s.hunting) {
    Hunt(s, now, out);
    if (s.hunting || s.done) return Status::Ok();
  }
  VIGIL_ASSIGN_OR_RETURN(uint64_t size, FileSizeOf(s));
  int64_t read_ns = env_->NowMillis() * 1000000;
  bool truncated = size < s.read_pos;
  if (!truncated && s.fixed && size != s.last_size) {
    // Truncated and rewritten past our offset between two looks: the head
    // no longer matches what we fingerprinted.
    truncated = !Verify(s, s.id, 0, &buf_);
  }
  if (truncated) {
    ++stats_.truncations;
    if (s.fixed && is_current) {
      // The bytes we had not read yet may be in a copy (copytruncate): the
      // generation ends once that is found and read, or known lost.
      StartCopyHunt(s, now);
    } else if (s.fixed) {
      EndTruncatedGeneration(s, read_ns, out);
    }
    if (!is_current) {
      s.done = true;
      return Status::Ok();
    }
    // Same inode, new content from offset 0: the next generation.
    s.id.generation = NextGeneration(s.id.dev, s.id.ino);
    s.id.fp = 0;
    s.id.fp_len = 0;
    s.fixed = s.emitted_any = s.skipping = s.after_partial = false;
    s.read_pos = s.consumed = s.last_size = s.seam_end = 0;
    s.pending.clear();
    s.seam.clear();
    s.last_growth_ms = now;
    return Status::Ok();
  }
  s.last_size = size;
  if (!s.fixed && size > 0) {
    // The fingerprint is fixed when data is first seen, over what exists
    // then (up to kFingerprintBytes); the checkpoint keeps fp_len.
    uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(size, kFingerprintBytes));
    VIGIL_ASSIGN_OR_RETURN(s.id.fp, HeadFingerprint(s, len, &buf_));
    s.id.fp_len = len;
    s.fixed = true;
  }
  if (!s.fixed) {
    // Never had data: nothing to finish or report.
    if (!is_current) s.done = true;
    return Status::Ok();
  }
  Header(s, path_, out);
  size_t budget = std::max<size_t>(max_bytes, 1);
  // Room for the lines about to be read, so a big chunk does not grow (and
  // move) its vector a dozen times; a guess, bounded by what is there.
  out->lines.reserve(out->lines.size() +
                     static_cast<size_t>(std::min<uint64_t>(budget, size - s.read_pos)) /
                         kTypicalLineBytes);
  while (budget > 0 && s.read_pos < size) {
    size_t n = static_cast<size_t>(std::min<uint64_t>({kReadBlock, budget, size - s.read_pos}));
    VIGIL_RETURN_IF_ERROR(ReadAt(s.fd, s.read_pos, n, &buf_, path_));
    if (buf_.empty()) break;  // shrank under us; the next call sees the truncation
    s.last_growth_ms = now;
    uint64_t before = s.consumed;
    Split(s, buf_, options_.max_line_bytes, read_ns, &stats_, &out->lines);
    stats_.bytes_consumed += s.consumed - before;
    // buf_ held [read_pos - size, read_pos); keep the bytes just before
    // `consumed` when they are in it (else the older seam stays true).
    uint64_t block = s.read_pos - buf_.size();
    if (s.consumed > block && s.consumed > s.seam_end) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kSeamBytes, s.consumed - block));
      s.seam.assign(buf_, static_cast<size_t>(s.consumed - block) - n, n);
      s.seam_end = s.consumed;
    }
    budget -= std::min(budget, buf_.size());
    // A line longer than the budget: keep going (bounded by max_line_bytes)
    // rather than return a chunk with no progress.
    if (budget == 0 && out->lines.empty() && s.consumed == out->start_offset) {
      budget = kReadBlock;
    }
  }
  bool at_eof = s.read_pos >= size;
  int64_t idle = now - s.last_growth_ms;
  bool finish = !is_current && at_eof &&
                (s.force_finish ||
                 now - std::max(s.detached_ms, s.last_growth_ms) >= options_.rotate_wait_ms);
  if (at_eof && !s.pending.empty() && (finish || idle >= options_.partial_flush_ms)) {
    FlushPartial(s, options_.max_line_bytes, read_ns, &stats_, &out->lines);
  }
  if (finish) {
    s.done = true;
    out->finished_sources.push_back(s.id.SourceId());
    ++stats_.finished_sources;
    if (s.is_copy && s.seen_size > s.read_pos) {
      ++stats_.lost_truncations;
      ReportLoss(s, s.seen_size - s.read_pos,
                 "copytruncate: written after its copy " + s.path + " was made");
    }
  }
  out->end_offset = s.consumed;
  out->end_resume = s.resume();
  if (Progress(*out)) {
    out->first_of_source = !s.emitted_any;
    s.emitted_any = true;
  }
  return Status::Ok();
}

// Rotated files and copies, oldest first: the first chunk with progress.
TailChunk FileTailer::PumpDraining(size_t max_bytes, int64_t now) {
  for (auto it = draining_.begin(); it != draining_.end();) {
    Source& s = **it;
    TailChunk c;
    if (!Pump(s, false, max_bytes, now, &c).ok()) {
      // An unreadable rotated file must not hold up the path forever.
      s.done = true;
      c = TailChunk();
      if (s.fixed) {
        Header(s, path_, &c);
        c.finished_sources.push_back(s.id.SourceId());
      }
    }
    it = s.done ? draining_.erase(it) : it + 1;
    if (Progress(c)) return c;
  }
  return TailChunk();
}

Result<TailChunk> FileTailer::ReadSome(size_t max_bytes) {
  int64_t now = env_->MonotonicMillis();
  auto with_lost = [this](TailChunk c) {
    c.lost = std::move(lost_);
    lost_.clear();
    ReleaseBuffers();
    return c;
  };
  bool path_checked = false;
  // Bounded: the path is checked once, and a truncation queues one hunt.
  for (int round = 0; round < 4; ++round) {
    // Rotated files and copies first: their lines were written before the
    // path's current file's.
    TailChunk d = PumpDraining(max_bytes, now);
    if (Progress(d)) return with_lost(std::move(d));
    if (!path_checked) {
      path_checked = true;
      bool changed = false;
      VIGIL_RETURN_IF_ERROR(CheckPath(now, &changed));
      if (changed) continue;
    }
    TailChunk c;
    c.path = path_;
    size_t draining_before = draining_.size();
    if (current_) VIGIL_RETURN_IF_ERROR(Pump(*current_, true, max_bytes, now, &c));
    // A truncation queued the hunt for its copy, whose lines come first.
    if (Progress(c) || draining_.size() == draining_before) return with_lost(std::move(c));
  }
  TailChunk c;
  c.path = path_;
  return with_lost(std::move(c));
}

// An agent follows hundreds of files, most of them idle: a tailer keeps no
// read buffer between calls, and a partial-line buffer only while it holds
// something.
void FileTailer::ReleaseBuffers() {
  constexpr size_t kKeep = 4096;
  if (buf_.capacity() > kKeep) std::string().swap(buf_);
  auto shrink = [](Source* src) {
    if (src != nullptr && src->pending.empty() && src->pending.capacity() > kKeep) {
      std::string().swap(src->pending);
    }
  };
  shrink(current_.get());
  for (auto& d : draining_) shrink(d.get());
}

bool FileTailer::HasOpenSources() const { return current_ != nullptr || !draining_.empty(); }

std::vector<std::string> FileTailer::OpenSourceIds() const {
  std::vector<std::string> out;
  for (const auto& s : draining_) {
    if (s->fixed) out.push_back(s->id.SourceId());
  }
  if (current_ && current_->fixed) out.push_back(current_->id.SourceId());
  return out;
}

}  // namespace vigil::collect::logs
