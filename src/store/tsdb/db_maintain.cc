// Db maintenance: cutting closed windows into persisted chunks, dropping WAL
// segments whose data is persisted, retention, the background thread and
// shutdown.
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/log.h"
#include "store/tsdb/chunk_codec.h"
#include "store/tsdb/db_impl.h"

namespace vigil::tsdb {

DbImpl::~DbImpl() { (void)Close(); }

// Series and families reach the catalog before the chunks that name them and
// before the WAL segments that recorded them are dropped.
Status DbImpl::PersistCatalog() {
  std::vector<std::pair<uint64_t, wire::Labels>> series;
  std::vector<wire::MetricFamily> families;
  {
    std::lock_guard lock(mu_);
    for (const auto& s : new_series_) series.emplace_back(s.id, s.labels);
    for (const auto& f : new_families_) families.push_back(f.family);
  }
  VIGIL_RETURN_IF_ERROR(catalog_->Write(series, families).WithContext("metric catalog"));
  std::lock_guard lock(mu_);
  // Only Maintain removes entries, so the first ones are those just written.
  new_series_.erase(new_series_.begin(), new_series_.begin() + static_cast<long>(series.size()));
  new_families_.erase(new_families_.begin(),
                      new_families_.begin() + static_cast<long>(families.size()));
  return Status::Ok();
}

// Writes closed windows day by day, oldest day first, one transaction per day.
// A failure stops at that day: what was written is a time prefix of every
// series, which is what WAL replay's "skip t <= persisted max" relies on.
Status DbImpl::PersistChunks(int64_t now_ms, std::vector<PendingChunk> pending) {
  std::map<int64_t, std::vector<StoredChunk>> by_day;
  std::map<int64_t, std::unordered_map<uint64_t, size_t>> counts_by_day;
  int64_t cutoff = now_ms - options_.retention_ms;
  for (auto& p : pending) {
    int64_t day = DayOf(p.window.start);
    ++counts_by_day[day][p.series_id];
    // A window already past retention would be deleted at once: not written.
    if ((day + 1) * kDayMs <= cutoff || p.samples.empty()) continue;
    by_day[day].push_back({p.series_id, p.samples.front().t_ms, p.samples.back().t_ms,
                           static_cast<int64_t>(p.samples.size()), EncodeChunk(p.samples)});
  }
  Status st;
  std::unordered_map<uint64_t, size_t> done;  // closed windows persisted, per series
  uint64_t written = 0;
  for (const auto& [day, counts] : counts_by_day) {
    auto chunks = by_day.find(day);
    if (chunks != by_day.end()) {
      st = store_->WriteDay(day, chunks->second);
      if (!st.ok()) break;
      written += chunks->second.size();
    }
    for (const auto& [id, n] : counts) done[id] += n;
  }
  std::lock_guard lock(mu_);
  for (const auto& [id, n] : done) head_.DropPersisted(id, n);
  persisted_chunks_ += written;
  return st.WithContext("persisting metric chunks");
}

uint64_t DbImpl::OldestNeededSegmentLocked() const {
  uint64_t oldest = head_.OldestNeededSegment(wal_->segment());
  for (const auto& s : new_series_) oldest = std::min(oldest, s.segment);
  for (const auto& f : new_families_) oldest = std::min(oldest, f.segment);
  return oldest;
}

Status DbImpl::DropWalSegments() {
  uint64_t oldest;
  {
    std::lock_guard lock(mu_);
    oldest = OldestNeededSegmentLocked();
  }
  VIGIL_ASSIGN_OR_RETURN(std::vector<uint64_t> segments, ListWalSegments(env_, wal_dir_));
  for (uint64_t seg : segments) {
    if (seg >= oldest) break;
    VIGIL_RETURN_IF_ERROR(env_->RemoveFile(WalSegmentPath(wal_dir_, seg)));
  }
  return Status::Ok();
}

Status DbImpl::Maintain() {
  std::lock_guard maintain(maintain_mu_);
  int64_t now = env_->NowMillis();
  std::vector<PendingChunk> pending;
  {
    std::lock_guard lock(mu_);
    if (closed_) return FailedPrecondition("the metric store is closed");
    head_.CloseEnded(now);
    pending = head_.CollectClosed();
    // New samples go to a fresh segment, so older ones soon hold only
    // persisted data and can be dropped.
    if (!pending.empty() && wal_->segment_bytes() > 0) {
      VIGIL_RETURN_IF_ERROR(wal_->Rotate().WithContext("metric WAL"));
    }
  }
  VIGIL_RETURN_IF_ERROR(PersistCatalog());
  VIGIL_RETURN_IF_ERROR(PersistChunks(now, std::move(pending)));
  VIGIL_RETURN_IF_ERROR(DropWalSegments().WithContext("dropping persisted WAL segments"));
  VIGIL_ASSIGN_OR_RETURN(int dropped, store_->DropDaysEndingBy(now - options_.retention_ms));
  (void)dropped;
  return RefreshStoreMinTime();
}

Status DbImpl::RefreshStoreMinTime() {
  VIGIL_ASSIGN_OR_RETURN(int64_t min, store_->MinTime());
  std::lock_guard lock(mu_);
  store_min_time_ = min;
  return Status::Ok();
}

void DbImpl::BackgroundLoop() {
  int64_t sync_every = std::max<int64_t>(options_.wal_sync_interval_ms, 10);
  int64_t next_sync = env_->MonotonicMillis() + sync_every;
  int64_t next_maintain = env_->MonotonicMillis() + kMaintainIntervalMs;
  std::string last_error;
  std::unique_lock lock(bg_mu_);
  while (!stop_) {
    int64_t wait = std::min(next_sync, next_maintain) - env_->MonotonicMillis();
    if (wait > 0) {
      bg_cv_.wait_for(lock, std::chrono::milliseconds(wait));
      continue;
    }
    lock.unlock();
    int64_t now = env_->MonotonicMillis();
    // Errors are retried on the next round and logged once per new message
    // (a full disk must not flood the log every second).
    Status st;
    bool maintained = false;
    if (now >= next_sync) {
      st = Sync();
      next_sync = now + sync_every;
    }
    if (st.ok() && now >= next_maintain) {
      st = Maintain();
      maintained = true;
      next_maintain = env_->MonotonicMillis() + kMaintainIntervalMs;
    }
    if (!st.ok() && st.code() != StatusCode::kFailedPrecondition && st.ToString() != last_error) {
      last_error = st.ToString();
      Logf(LogLevel::kError, "tsdb background: %s", last_error.c_str());
    }
    if (st.ok() && maintained) last_error.clear();
    lock.lock();
  }
}

Status DbImpl::Close() {
  {
    std::lock_guard lock(bg_mu_);
    stop_ = true;
  }
  bg_cv_.notify_all();
  if (bg_.joinable()) bg_.join();
  std::lock_guard maintain(maintain_mu_);
  Status st;
  {
    std::lock_guard lock(mu_);
    if (closed_) return Status::Ok();
    closed_ = true;
    if (wal_) st = wal_->Close().WithContext("closing metric WAL");
  }
  if (store_) store_->Close();
  if (catalog_) catalog_->Close();
  if (lock_fd_ >= 0) {
    ::flock(lock_fd_, LOCK_UN);
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  return st;
}

}  // namespace vigil::tsdb
