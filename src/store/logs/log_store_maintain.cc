// LogStore maintenance: cutting heads into blocks, the catalog checkpoint,
// dropping WAL segments that hold nothing still needed, retention, the
// background thread and Close. The order of durable steps is what makes a
// crash at any point safe; docs/logstore.md "Recovery" walks through it.
#include <algorithm>
#include <chrono>
#include <thread>

#include "core/log.h"
#include "store/logs/log_store_impl.h"
#include "store/logs/recompress.h"

namespace vigil::logstore {
namespace {
constexpr int64_t kDayMs = 86400 * 1000;
constexpr int64_t kArchiveSliceMs = 250;
}  // namespace

Status LogStoreImpl::Maintain() {
  std::lock_guard maintain(maintain_mu_);
  {
    std::lock_guard lock(mu_);
    if (closed_) return FailedPrecondition("the log store is closed");
  }
  return MaintainLocked(false);
}

std::vector<CutJob> LogStoreImpl::CollectCutsLocked(int64_t now_ms, bool force) {
  std::vector<CutJob> jobs;
  for (auto& [id, s] : streams_) {
    const Head& h = s->head;
    if (h.lines.empty()) continue;
    bool due = force || h.lines.size() >= options_.block_max_lines ||
               h.bytes >= options_.block_max_bytes ||
               now_ms - h.first_arrival_ms >= options_.block_max_age_ms;
    if (!due) continue;
    CutJob* job = nullptr;
    for (const HeadLine& l : h.lines) {
      // A block holds consecutive line numbers (a failed earlier write can
      // leave a gap in the head), at most block_max_lines / _bytes.
      if (job == nullptr || l.line_no != job->first_line_no + job->lines.size() ||
          job->lines.size() >= options_.block_max_lines ||
          (job->bytes + l.length > options_.block_max_bytes && !job->lines.empty())) {
        jobs.emplace_back();
        job = &jobs.back();
        job->stream_id = id;
        job->first_line_no = l.line_no;
        job->lines.reserve(std::min(options_.block_max_lines, h.lines.size()));
      }
      // In place: chunks never move, and appends only write past `used`.
      const std::shared_ptr<HeadChunk>& c = h.chunks[l.chunk - h.first_chunk];
      if (job->chunks.empty() || job->chunks.back() != c) job->chunks.push_back(c);
      job->lines.push_back({l.time_ns, l.seq, l.level, l.flags, h.Text(l)});
      job->bytes += l.length;
    }
  }
  return jobs;
}

Result<std::shared_ptr<Partition>> LogStoreImpl::PartitionForDay(int64_t day) {
  {
    std::lock_guard lock(mu_);
    auto it = partitions_.find(day);
    if (it != partitions_.end()) return it->second;
  }
  // Only Maintain (under maintain_mu_) creates partitions: no race here.
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Partition> p,
                         Partition::Open(JoinPath(options_.dir, PartitionFileName(day)), day));
  std::shared_ptr<Partition> part(std::move(p));
  std::lock_guard lock(mu_);
  partitions_[day] = part;
  return part;
}

void LogStoreImpl::EncodeJob(CutJob* job) {
  BlockHeader& h = job->block.header;
  if (!encoder_) encoder_ = std::make_unique<BlockEncoder>();
  job->block.data = encoder_->Encode(job->lines, &h, &job->block.filter);
  // Encode sizes its output for the worst case (~ the raw size); the block
  // waits for the others of its round, so give the slack back now.
  job->block.data.shrink_to_fit();
  h.stream_id = job->stream_id;
  h.first_line_no = job->first_line_no;
  h.last_line_no = job->first_line_no + job->lines.size() - 1;
  // The lines are needed no more: their chunks may go as soon as the head
  // drops them.
  std::vector<BlockLine>().swap(job->lines);
  std::vector<std::shared_ptr<const HeadChunk>>().swap(job->chunks);
}

Status LogStoreImpl::WriteBlocks(std::vector<CutJob>* jobs,
                                 std::vector<std::pair<uint64_t, uint64_t>>* floors) {
  // One thread: compression and the filter cost the same CPU either way, and
  // each encoding thread would hold its own buffers and filter tables.
  for (CutJob& job : *jobs) EncodeJob(&job);
  std::map<int64_t, std::vector<CutJob*>> by_day;
  for (CutJob& job : *jobs) by_day[DayOf(job.block.header.max_time)].push_back(&job);
  Status first_error;
  std::vector<BlockRef> written;
  for (auto& [day, day_jobs] : by_day) {
    auto part = PartitionForDay(day);
    Status st = part.status();
    if (st.ok()) {
      std::vector<const NewBlock*> blocks;
      for (CutJob* j : day_jobs) blocks.push_back(&j->block);
      auto ids = (*part)->Write(blocks);
      st = ids.status();
      for (size_t i = 0; st.ok() && i < day_jobs.size(); ++i) {
        const NewBlock& b = day_jobs[i]->block;
        written.push_back({b.header, (*ids)[i], b.filter.size() + b.data.size(), *part,
                           std::make_shared<const std::string>(std::move(b.filter))});
      }
    }
    // Other days still go ahead: a block's lines leave the head only once
    // that block is durable, and recovery skips exactly the lines in blocks.
    if (!st.ok() && first_error.ok()) first_error = st.WithContext("writing log blocks");
  }
  std::lock_guard lock(mu_);
  int64_t now = env_->NowMillis();
  std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> removed;
  for (BlockRef& b : written) {
    Stream& s = *streams_[b.header.stream_id];
    removed[s.id].emplace_back(b.header.first_line_no, b.header.last_line_no);
    head_lines_ -= b.header.lines();
    head_bytes_ -= b.header.raw_bytes;
    if (filter_bytes_ + b.filter->size() > options_.filter_memory_bytes) {
      b.filter.reset();
    } else {
      filter_bytes_ += b.filter->size();
    }
    auto pos =
        std::upper_bound(s.blocks.begin(), s.blocks.end(), b.header.first_line_no,
                         [](uint64_t v, const BlockRef& r) { return v < r.header.first_line_no; });
    s.blocks.insert(pos, std::move(b));
  }
  for (auto& [id, ranges] : removed) {
    Stream& s = *streams_[id];
    std::sort(ranges.begin(), ranges.end());
    s.head.Remove(ranges);
    if (!s.head.lines.empty()) s.head.first_arrival_ms = now;
    floors->emplace_back(id, s.head.lines.empty() ? s.next_line : s.head.lines.front().line_no);
  }
  return first_error;
}

Status LogStoreImpl::MaintainLocked(bool force) {
  int64_t now = env_->NowMillis();
  std::vector<CutJob> jobs;
  CatalogMeta meta;
  bool checkpoint = false;
  std::vector<CatalogStream> cstreams;
  std::vector<CatalogSource> csources;
  {
    std::lock_guard sync(sync_mu_);
    std::lock_guard lock(mu_);
    VIGIL_RETURN_IF_ERROR(FlushPendingLocked());
    jobs = CollectCutsLocked(now, force);
    bool wal_used = wal_->segment_bytes() > 0;
    if (!jobs.empty() || full_checkpoint_ ||
        (wal_used && now - last_checkpoint_ms_ >= options_.block_max_age_ms)) {
      // Records from here on go to a fresh segment, so the snapshot below is
      // exactly the effect of every segment before it.
      if (wal_used) {
        Status st = wal_->Rotate();
        if (!st.ok()) {
          failed_ = st.WithContext("rotating log WAL");
          return failed_;
        }
      }
      meta = {wal_->segment(), last_seq_, next_stream_id_, lines_, duplicates_};
      for (auto& [id, s] : streams_) {
        if (!full_checkpoint_ && !s->dirty) continue;
        cstreams.push_back({id, *s->labels, s->next_line, 0, s->min_time, s->max_time});
        s->dirty = false;
      }
      for (auto& [key, src] : sources_) {
        if (!full_checkpoint_ && !src.dirty) continue;
        csources.push_back(src);  // the catalog's part
        src.dirty = false;
      }
      full_checkpoint_ = false;
      checkpoint = true;
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> floors;
  Status blocks_st = WriteBlocks(&jobs, &floors);
  jobs.clear();
  if (checkpoint || !floors.empty()) {
    Status st = catalog_->Write(checkpoint ? &meta : nullptr, cstreams, csources, floors);
    if (!st.ok()) {
      std::lock_guard lock(mu_);
      full_checkpoint_ = true;  // the dirty marks of this snapshot are gone
      return st.WithContext("log catalog");
    }
    if (checkpoint) {
      checkpoint_segment_ = meta.wal_segment;
      last_checkpoint_ms_ = now;
    }
    std::lock_guard lock(mu_);
    for (const auto& [id, floor] : floors) streams_[id]->head_floor = floor;
  }
  VIGIL_RETURN_IF_ERROR(blocks_st);
  VIGIL_RETURN_IF_ERROR(DropWalSegments().WithContext("dropping log WAL segments"));
  return ApplyRetention(now);
}

Status LogStoreImpl::DropWalSegments() {
  uint64_t oldest = checkpoint_segment_;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, s] : streams_) {
      if (!s->head.lines.empty())
        oldest = std::min<uint64_t>(oldest, s->head.lines.front().segment);
    }
  }
  VIGIL_ASSIGN_OR_RETURN(std::vector<uint64_t> segments, ListWalSegments(env_, wal_dir_));
  for (uint64_t seg : segments) {
    if (seg >= oldest) break;
    VIGIL_RETURN_IF_ERROR(env_->RemoveFile(WalSegmentPath(wal_dir_, seg)));
  }
  return Status::Ok();
}

Status LogStoreImpl::ApplyRetention(int64_t now_ms) {
  if (options_.retention_days <= 0) return Status::Ok();
  int64_t cutoff_ms = now_ms - static_cast<int64_t>(options_.retention_days) * kDayMs;
  std::vector<std::shared_ptr<Partition>> doomed;
  {
    std::lock_guard lock(mu_);
    for (auto it = partitions_.begin(); it != partitions_.end();) {
      if ((it->first + 1) * kDayMs > cutoff_ms) break;
      doomed.push_back(it->second);
      it = partitions_.erase(it);
    }
    if (doomed.empty()) return Status::Ok();
    for (auto& [id, s] : streams_) {
      std::erase_if(s->blocks, [&](const BlockRef& b) {
        bool gone = std::find(doomed.begin(), doomed.end(), b.part) != doomed.end();
        if (gone && b.filter) filter_bytes_ -= b.filter->size();
        return gone;
      });
    }
  }
  for (const auto& p : doomed) {
    Logf(LogLevel::kInfo, "log store: retention deletes %s", p->path().c_str());
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::string path = p->path() + suffix;
      if (env_->FileExists(path)) VIGIL_RETURN_IF_ERROR(env_->RemoveFile(path));
    }
  }
  return Status::Ok();
}

void LogStoreImpl::BackgroundLoop() {
  std::string last_error;
  std::unique_lock l(bg_mu_);
  while (!stop_) {
    bg_cv_.wait_for(l, std::chrono::seconds(1), [&] { return stop_ || wake_; });
    if (stop_) break;
    wake_ = false;
    l.unlock();
    Status st = Maintain();
    // One message per distinct failure, not one a second.
    if (!st.ok() && st.ToString() != last_error) {
      last_error = st.ToString();
      Logf(LogLevel::kError, "log store maintenance: %s", last_error.c_str());
    } else if (st.ok()) {
      last_error.clear();
    }
    ArchiveSlice();
    l.lock();
  }
}

// Outside maintain_mu_: the Archiver works through its own SQLite connection
// and changes only `data` of existing rows (recompress.h), so appends, cuts
// and queries go on meanwhile. Retention, which Append may also run, never
// deletes a file it works on: max_age_ms stops an hour short of its age.
// Close waits for a slice in progress (about budget_ms plus one block, or
// one VACUUM of a day file).
void LogStoreImpl::ArchiveSlice() {
  const int64_t pct = std::min(options_.archive_cpu_percent, 100);
  const int64_t start = env_->MonotonicMillis();
  if (pct <= 0 || start < next_archive_ms_) return;
  ArchiveOptions o = options_.archive;
  if (o.budget_ms <= 0) o.budget_ms = kArchiveSliceMs;
  if (options_.retention_days > 0) {
    o.max_age_ms = options_.retention_days * kDayMs - kDayMs / 24;
  }
  ArchiveStats stats;
  // A fresh Archiver per slice: its zstd context and buffers (~5 MiB) are
  // not held between slices.
  Status st = Archiver(o, env_).ArchiveDir(options_.dir, &stats);
  const int64_t spent = env_->MonotonicMillis() - start;
  next_archive_ms_ =
      start + spent +
      (st.ok() && stats.finished ? options_.archive_interval_ms : spent * (100 - pct) / pct);
  if (!st.ok()) Logf(LogLevel::kWarn, "log store archive: %s", st.ToString().c_str());
  for (const std::string& e : stats.errors) {
    Logf(LogLevel::kWarn, "log store archive: %s", e.c_str());
  }
  if (stats.recompressed > 0) {
    Logf(LogLevel::kInfo, "log store archive: %llu blocks, %llu -> %llu bytes of data",
         static_cast<unsigned long long>(stats.recompressed),
         static_cast<unsigned long long>(stats.data_before),
         static_cast<unsigned long long>(stats.data_after));
  }
}

Status LogStoreImpl::Close() {
  {
    std::lock_guard l(bg_mu_);
    stop_ = true;
    bg_cv_.notify_all();
  }
  if (bg_.joinable()) bg_.join();
  std::lock_guard maintain(maintain_mu_);
  {
    std::lock_guard lock(mu_);
    if (closed_) return Status::Ok();
  }
  Status st = MaintainLocked(true);
  std::lock_guard sync(sync_mu_);
  std::lock_guard lock(mu_);
  Status flushed = pending_.empty() ? Status::Ok() : FlushPendingLocked();
  Status wal_closed = wal_->Close();
  closed_ = true;
  if (!st.ok()) return st;
  return flushed.ok() ? wal_closed : flushed;
}

}  // namespace vigil::logstore
