// FileTailer's copytruncate recovery and early rotations (docs/tailer.md
// "Rotated copies and early rotations"): the copy of a truncated generation
// is searched for among the path's rotated siblings and read from our offset
// before the next generation; generations rotated away before the path was
// first seen are read before it. The line splitting and rotation rules are
// in tailer.cc.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "collect/logs/tailer.h"
#include "collect/logs/tailer_internal.h"
#include "collect/logs/tailer_siblings.h"
#include "discover/log_sources.h"

namespace vigil::collect::logs {

using tailer_internal::FileSizeOf;
using tailer_internal::FlushPartial;
using tailer_internal::Header;
using tailer_internal::OpenSource;
using tailer_internal::ReadAt;
using tailer_internal::Source;

namespace {

// How often a truncated generation looks again for a copy that may still be
// being written or compressed (until rotate_wait_ms after the truncation).
constexpr int64_t kHuntRetryMs = 100;

}  // namespace

// A checkpointed generation of the file at the path that was truncated:
// its copy, found as on a live truncation but without the seam (it is not
// in the checkpoint), resumed at the checkpoint's offset. nullptr: none.
std::unique_ptr<FileTailer::Source> FileTailer::ResumeFromCopy(const SourceCheckpoint& cp,
                                                               int64_t now) {
  auto at_path = OpenSource(path_, now);  // the same inode: the original's birth time
  if (!at_path.ok()) return nullptr;
  auto s = std::make_unique<Source>();
  s->path = path_;
  s->id = cp.identity;
  s->btime_ns = (*at_path)->btime_ns;
  s->fixed = s->emitted_any = true;
  s->read_pos = s->consumed = cp.offset;
  s->skipping = cp.resume == ResumeState::kSkipToNewline;
  s->after_partial = cp.resume == ResumeState::kAfterPartial;
  std::string why;
  if (FindCopy(*s, now, &why) != CopySearch::kFound) return nullptr;
  ++stats_.copies_read;
  s->is_copy = true;
  s->force_finish = true;  // complete, as on a live truncation
  s->detached_ms = s->last_growth_ms = now;
  return s;
}

// A path first seen (no checkpoint) whose writer started at
// rotated_since_ms: generations it rotated away before we looked are read
// first, oldest first, as files being drained (each its own source, found
// again by inode after a restart like any rotated file).
void FileTailer::OpenEarlyRotations(const struct stat* at_path, int64_t now) {
  std::vector<RotatedSibling> sibs =
      ListRotatedSiblings(env_, path_, options_.max_sibling_scan, options_.max_sibling_scan);
  std::erase_if(sibs, [&](const RotatedSibling& r) {
    bool is_path = at_path != nullptr && r.dev == static_cast<uint64_t>(at_path->st_dev) &&
                   r.ino == static_cast<uint64_t>(at_path->st_ino);
    return is_path || r.mtime_ns / 1000000 < options_.rotated_since_ms;
  });
  for (size_t i = 0; i < sibs.size(); ++i) {  // newest first
    const RotatedSibling& r = sibs[i];
    Source gone;
    gone.id.dev = r.dev;
    gone.id.ino = r.ino;
    if (i >= options_.max_draining) {
      ReportLoss(gone, r.size,
                 "rotated before it was first seen, past the " +
                     std::to_string(options_.max_draining) + " newest read: " + r.path);
    } else if (r.compressed) {
      // Its bytes are gone from view; the compressed size is all we know.
      ReportLoss(gone, 0,
                 "rotated and compressed before it was first seen: " + r.path + " (" +
                     std::to_string(r.size) + " bytes compressed)");
    }
  }
  for (size_t i = std::min(sibs.size(), options_.max_draining); i-- > 0;) {  // oldest first
    if (sibs[i].compressed) continue;
    auto s = OpenSource(sibs[i].path, now);
    if (!s.ok()) continue;  // moved on since we listed it
    (*s)->id.generation = NextGeneration((*s)->id.dev, (*s)->id.ino);
    (*s)->detached_ms = now;
    draining_.push_back(std::move(s).value());
    ++stats_.early_rotations_read;
  }
}

// The truncated generation, without its file: it drains from its copy once
// that is found. Its held partial line stays held (the copy has it whole).
void FileTailer::StartCopyHunt(Source& truncated, int64_t now) {
  auto h = std::make_unique<Source>();
  h->path = path_;
  h->id = truncated.id;
  h->btime_ns = truncated.btime_ns;
  h->fixed = true;
  h->emitted_any = truncated.emitted_any;
  h->read_pos = truncated.read_pos;
  h->consumed = truncated.consumed;
  h->pending = std::move(truncated.pending);
  h->skipping = truncated.skipping;
  h->after_partial = truncated.after_partial;
  h->seam = std::move(truncated.seam);
  h->seam_end = truncated.seam_end;
  h->seen_size = std::max(truncated.last_size, truncated.read_pos);
  // When we last read from it, on the wall clock siblings' mtimes use.
  h->last_read_unix_ms = env_->NowMillis() - (now - truncated.last_growth_ms);
  h->hunting = true;
  h->detached_ms = h->last_growth_ms = h->next_hunt_ms = now;
  h->hunt_until_ms = now + options_.rotate_wait_ms;
  draining_.push_back(std::move(h));
  if (draining_.size() > options_.max_draining) draining_.front()->force_finish = true;
}

void FileTailer::Hunt(Source& s, int64_t now, TailChunk* out) {
  if (now < s.next_hunt_ms && !s.force_finish) return;
  std::string why;
  CopySearch found = FindCopy(s, now, &why);
  if (found == CopySearch::kFound) {
    // Read the copy from our offset: the held partial line is in it whole.
    ++stats_.copies_read;
    s.hunting = false;
    s.is_copy = true;
    s.read_pos = s.consumed;
    s.pending.clear();
    s.detached_ms = s.last_growth_ms = now;
    // A copy is complete before the truncation that made us look (copy,
    // then truncate), so it ends with its last byte: no rotate_wait, and the
    // generation's last lines are not held while the next one is read.
    s.force_finish = true;
    return;
  }
  if (found == CopySearch::kMaybeLater && now < s.hunt_until_ms && !s.force_finish) {
    s.next_hunt_ms = now + kHuntRetryMs;
    return;
  }
  // No copy: the generation ends here, as a truncation without one does.
  EndTruncatedGeneration(s, env_->NowMillis() * 1000000, out);
  s.emitted_any = true;
  s.done = true;
  // Bytes we saw but had not read are gone for sure; beyond them nothing is
  // known (a plain `: > file` after we read everything loses nothing).
  uint64_t unread = s.seen_size > s.read_pos ? s.seen_size - s.read_pos : 0;
  if (unread > 0 || !why.empty()) {
    ++stats_.lost_truncations;
    ReportLoss(s, unread,
               "truncated before it was read to its end; " +
                   (why.empty() ? std::string("no copy found") : why));
  }
}

namespace {

enum class CopyCheck { kMatch, kShort, kOther };

// Whether the file `fd` (size `size`) holds the bytes of generation `s`: the
// same head (hashed with the original's birth time, so a copy made by cp
// matches), at least up to our offset, and the last bytes we handed out.
CopyCheck CheckCopy(int fd, uint64_t size, const Source& s, std::string* scratch) {
  if (size < s.id.fp_len) return CopyCheck::kShort;  // too short to tell yet
  if (!ReadAt(fd, 0, s.id.fp_len, scratch, s.path).ok() || scratch->size() != s.id.fp_len ||
      FingerprintBytes(s.btime_ns, *scratch) != s.id.fp) {
    return CopyCheck::kOther;
  }
  if (size < s.consumed) return CopyCheck::kShort;
  if (s.seam.empty()) return CopyCheck::kMatch;
  uint64_t from = s.seam_end - s.seam.size();
  if (!ReadAt(fd, from, s.seam.size(), scratch, s.path).ok() || *scratch != s.seam) {
    return CopyCheck::kOther;
  }
  return CopyCheck::kMatch;
}

bool IsGzipName(std::string_view name) {
  return name.size() > 3 && (name.ends_with(".gz") || name.ends_with(".GZ") ||
                             name.ends_with(".Gz") || name.ends_with(".gZ"));
}

}  // namespace

void FileTailer::EndTruncatedGeneration(Source& s, int64_t read_ns, TailChunk* out) {
  Header(s, path_, out);
  FlushPartial(s, options_.max_line_bytes, read_ns, &stats_, &out->lines);
  out->end_offset = s.consumed;
  out->end_resume = s.resume();
  out->finished_sources.push_back(s.id.SourceId());
  out->first_of_source = !s.emitted_any;
  ++stats_.finished_sources;
}

// The copy among the path's newest rotated siblings: uncompressed ones first
// (logrotate compresses the copy after the truncation; while gzip runs both
// exist), then gzip ones. kMaybeLater: a copy that may still be being
// written or compressed was seen; look again.
FileTailer::CopySearch FileTailer::FindCopy(Source& s, int64_t now, std::string* why) {
  std::vector<RotatedSibling> sibs =
      ListRotatedSiblings(env_, path_, options_.max_sibling_scan, options_.max_copy_candidates);
  bool maybe_later = false;
  uint64_t short_bytes = 0;  // in candidates too short to be the copy yet
  for (const RotatedSibling& sib : sibs) {
    if (sib.compressed || (sib.dev == s.id.dev && sib.ino == s.id.ino)) continue;
    auto opened = OpenSource(sib.path, now);
    if (!opened.ok()) continue;  // compressed and removed since we listed: tried below
    auto size = FileSizeOf(**opened);
    if (!size.ok()) continue;
    CopyCheck k = CheckCopy((*opened)->fd, *size, s, &buf_);
    if (k == CopyCheck::kShort) short_bytes += *size;
    if (k != CopyCheck::kMatch) continue;
    s.fd = std::exchange((*opened)->fd, -1);
    s.path = sib.path;
    s.last_size = *size;
    return CopySearch::kFound;
  }
  // Compressed candidates: gzip ones cost a decompression each, so the
  // newest two, and only when they changed since the last look (a retry
  // while one is being written).
  uint64_t gz_bytes = 0;
  std::vector<const RotatedSibling*> gz;
  for (const RotatedSibling& sib : sibs) {
    if (!sib.compressed) continue;
    // Changed before our last read (1 s of slack for mtime granularity; gzip
    // keeps the copy's mtime): an earlier rotation, not this generation's
    // copy, and not worth a decompression.
    if (sib.mtime_ns / 1000000 < s.last_read_unix_ms - 1000) continue;
    if (!IsGzipName(sib.path)) {
      if (why->empty())
        *why = "a newer rotated copy " + sib.path + " is compressed in a form not read";
    } else if (!CanInflateGzip()) {
      *why = "its copy may be " + sib.path + ", gzip-compressed; this build cannot read gzip";
    } else if (gz.size() < 2) {
      gz.push_back(&sib);
      gz_bytes += sib.size + 1;
    }
  }
  if (gz_bytes != s.gz_bytes_tried) {
    s.gz_bytes_tried = gz_bytes;
    for (const RotatedSibling* sib : gz) {
      GzipCopy g = AdoptInflatedCopy(s, sib->path, why);
      if (g == GzipCopy::kAdopted) return CopySearch::kFound;
      if (g == GzipCopy::kStillWritten) maybe_later = true;
    }
  }
  // Short candidates that grew since the last look: a copy still being written.
  if (short_bytes > s.short_copy_bytes) maybe_later = true;
  s.short_copy_bytes = short_bytes;
  return maybe_later ? CopySearch::kMaybeLater : CopySearch::kNone;
}

// Inflates a gzip sibling into memory and, when it is this generation's
// copy, makes it the file the hunt reads.
FileTailer::GzipCopy FileTailer::AdoptInflatedCopy(Source& s, const std::string& gz,
                                                   std::string* why) {
  auto copy = InflateGzipCopy(gz, s.id.fp_len, s.seam_end, s.seam.size(), s.consumed,
                              options_.max_inflate_bytes);
  if (!copy.ok()) return GzipCopy::kNotOurs;
  bool ours = copy->head.size() == s.id.fp_len &&
              FingerprintBytes(s.btime_ns, copy->head) == s.id.fp && copy->window == s.seam;
  bool at_bound = copy->size >= options_.max_inflate_bytes;
  GzipCopy result = GzipCopy::kAdopted;
  if (!ours) {
    result = GzipCopy::kNotOurs;
  } else if (!copy->complete && !at_bound) {
    *why = "its copy " + gz + " is still being compressed";
    result = GzipCopy::kStillWritten;
  } else if (copy->size < s.consumed) {
    *why = "its copy " + gz + " inflates past the " + std::to_string(options_.max_inflate_bytes) +
           "-byte bound";
    result = GzipCopy::kNotOurs;
  }
  if (result != GzipCopy::kAdopted) {
    ::close(copy->fd);
    return result;
  }
  s.fd = copy->fd;
  s.path = gz;
  s.last_size = copy->size;
  if (!copy->complete) {
    // Cut at the bound: the rest of the copy is not read.
    ++stats_.lost_truncations;
    ReportLoss(s, 0,
               "its copy " + gz + " is read only to the " +
                   std::to_string(options_.max_inflate_bytes) + "-byte inflate bound");
    s.seen_size = 0;
  }
  return GzipCopy::kAdopted;
}

void FileTailer::ReportLoss(const Source& s, uint64_t bytes, std::string reason) {
  LostSource lost;
  lost.checkpoint.path = path_;
  lost.checkpoint.identity = s.id;
  lost.checkpoint.offset = s.consumed;
  lost.checkpoint.resume = s.resume();
  lost.lost_bytes = bytes;
  lost.reason = bytes > 0 ? reason + " (" + std::to_string(bytes) + " bytes lost)" : reason;
  lost_.push_back(std::move(lost));
  stats_.lost_bytes += bytes;
}

}  // namespace vigil::collect::logs
