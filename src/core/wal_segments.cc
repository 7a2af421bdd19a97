#include "core/wal_segments.h"

#include <algorithm>
#include <cstdio>

#include "core/coding.h"
#include "core/strings.h"

namespace vigil {
namespace {

constexpr std::string_view kSegmentSuffix = ".wal";
constexpr size_t kFrameHeader = 8;

// Length of the valid prefix of a segment; calls fn for each valid frame.
Result<size_t> ScanSegment(std::string_view data, uint64_t segment, const WalReplayOptions& o,
                           uint64_t* records,
                           const std::function<Status(uint64_t, std::string_view)>& fn) {
  size_t pos = 0;
  while (data.size() - pos >= kFrameHeader) {
    uint32_t len = DecodeFixed32(data.data() + pos);
    uint32_t crc = DecodeFixed32(data.data() + pos + 4);
    if (len == 0 || len > o.max_body_bytes || len > data.size() - pos - kFrameHeader) break;
    std::string_view body = data.substr(pos + kFrameHeader, len);
    if (Crc32c(body) != crc) break;
    if (o.body_ok && !o.body_ok(body)) break;
    VIGIL_RETURN_IF_ERROR(fn(segment, body));
    ++*records;
    pos += kFrameHeader + len;
  }
  return pos;
}

}  // namespace

void AppendWalFrame(std::string* dst, std::string_view body) {
  PutFixed32(dst, static_cast<uint32_t>(body.size()));
  PutFixed32(dst, Crc32c(body));
  dst->append(body);
}

std::string WalSegmentPath(const std::string& wal_dir, uint64_t segment) {
  char name[32];
  std::snprintf(name, sizeof(name), "%08llu.wal", static_cast<unsigned long long>(segment));
  return JoinPath(wal_dir, name);
}

Result<std::vector<uint64_t>> ListWalSegments(Env* env, const std::string& wal_dir) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, env->ListDir(wal_dir));
  std::vector<uint64_t> out;
  for (const auto& n : names) {
    if (!EndsWith(n, kSegmentSuffix)) continue;
    auto num = ParseUint64(std::string_view(n).substr(0, n.size() - kSegmentSuffix.size()));
    if (num) out.push_back(*num);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::unique_ptr<WalWriter>> WalWriter::Open(Env* env, std::string wal_dir, uint64_t segment,
                                                   uint32_t max_body_bytes) {
  std::unique_ptr<WalWriter> w(new WalWriter(env, std::move(wal_dir), max_body_bytes));
  VIGIL_RETURN_IF_ERROR(w->OpenSegment(segment));
  return w;
}

Status WalWriter::OpenSegment(uint64_t segment) {
  VIGIL_ASSIGN_OR_RETURN(file_, env_->OpenAppendable(WalSegmentPath(dir_, segment)));
  segment_ = segment;
  return Status::Ok();
}

Status WalWriter::Add(std::string_view body) {
  if (body.size() > max_body_bytes_) return InvalidArgument("WAL record too large");
  frame_.clear();
  AppendWalFrame(&frame_, body);
  return Write(frame_);
}

Status WalWriter::Write(std::string_view frames) {
  if (!file_) return FailedPrecondition("WAL is closed");
  if (frames.empty()) return Status::Ok();
  dirty_ = true;
  return file_->Append(frames);
}

Status WalWriter::Sync() {
  if (!file_ || !dirty_) return Status::Ok();
  VIGIL_RETURN_IF_ERROR(file_->Sync());
  dirty_ = false;
  return Status::Ok();
}

Status WalWriter::Rotate() {
  // Moves on even if closing failed: after a write error the old segment may
  // end in a partial frame, and new records must not land behind it.
  Status closed = Close();
  VIGIL_RETURN_IF_ERROR(OpenSegment(segment_ + 1));
  return closed;
}

Status WalWriter::Close() {
  if (!file_) return Status::Ok();
  Status st = Sync();
  Status closed = file_->Close();
  file_.reset();
  dirty_ = false;
  return st.ok() ? closed : st;
}

Result<WalReplayStats> ReplayWal(Env* env, const std::string& wal_dir,
                                 const WalReplayOptions& options,
                                 const std::function<Status(uint64_t, std::string_view)>& fn) {
  WalReplayStats stats;
  VIGIL_ASSIGN_OR_RETURN(std::vector<uint64_t> segments, ListWalSegments(env, wal_dir));
  for (uint64_t seg : segments) {
    std::string path = WalSegmentPath(wal_dir, seg);
    VIGIL_ASSIGN_OR_RETURN(std::string data, env->ReadFile(path, options.max_segment_bytes));
    VIGIL_ASSIGN_OR_RETURN(size_t valid, ScanSegment(data, seg, options, &stats.records, fn));
    ++stats.segments;
    if (valid == data.size()) continue;
    // Cut the torn tail so that later appends and replays never meet it again.
    stats.truncated_bytes += data.size() - valid;
    ++stats.torn_segments;
    Status st = valid == 0 ? env->RemoveFile(path)
                           : env->WriteFileAtomic(path, std::string_view(data).substr(0, valid));
    VIGIL_RETURN_IF_ERROR(st.WithContext("truncating torn WAL segment " + path));
  }
  return stats;
}

}  // namespace vigil
