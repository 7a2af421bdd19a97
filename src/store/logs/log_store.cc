// LogStore: opening, recovery and the append path (group-committed WAL).
#include <algorithm>
#include <cstring>

#include "core/coding.h"
#include "core/log.h"
#include "core/thread_name.h"
#include "store/logs/log_store_impl.h"

namespace vigil::logstore {
namespace {

std::string SourceKey(std::string_view node, std::string_view source_id) {
  std::string k(node);
  k.push_back('\0');
  k.append(source_id);
  return k;
}

std::string LabelsKey(const wire::Labels& labels) {
  std::string k;
  wire::PutLabels(&k, labels);
  return k;
}

bool Covered(const std::vector<std::pair<uint64_t, uint64_t>>* ranges, uint64_t line_no) {
  if (ranges == nullptr) return false;
  auto it = std::upper_bound(ranges->begin(), ranges->end(), std::make_pair(line_no, UINT64_MAX));
  return it != ranges->begin() && std::prev(it)->second >= line_no;
}

constexpr size_t kMaxLabelBytes = 4096;

Status ValidateBatch(const wire::LogBatch& batch) {
  for (const auto& s : batch.streams) {
    if (s.labels.size() > wire::kMaxLogLabels) {
      return InvalidArgument("log stream " + s.source_id + " has more than " +
                             std::to_string(wire::kMaxLogLabels) + " labels");
    }
    for (const auto& l : s.labels) {
      if (l.name.size() + l.value.size() > kMaxLabelBytes) {
        return InvalidArgument("log stream label " + l.name + " is longer than 4 KiB");
      }
    }
    // One stream is one WAL frame; replay takes larger frames for garbage.
    size_t stream_bytes = 0;
    for (const auto& r : s.records) stream_bytes += r.line.size() + 16;
    if (stream_bytes > kMaxWalFrameBytes / 2) {
      return InvalidArgument("log stream " + s.source_id + " carries more than 256 MiB");
    }
    for (const auto& r : s.records) {
      if (r.line.size() > wire::kMaxLogLineBytes) {
        return InvalidArgument("log line longer than " + std::to_string(wire::kMaxLogLineBytes) +
                               " bytes in source " + s.source_id);
      }
      if (static_cast<int>(r.level) >= wire::kLogLevelCount || r.flags > 0x0f) {
        return InvalidArgument("log record with unknown level or flags in " + s.source_id);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

void Head::Add(HeadLine l, std::string_view line) {
  const auto n = static_cast<uint32_t>(line.size());
  if (chunks.empty() || chunks.back()->capacity - chunks.back()->used < n) {
    // Small for a quiet stream, doubling up to kChunkBytes for a busy one.
    const uint32_t want =
        chunks.empty() ? kFirstChunkBytes : std::min(kChunkBytes, 2 * chunks.back()->capacity);
    auto c = std::make_shared<HeadChunk>();
    c->capacity = std::max(want, n);
    // Not value-initialised: only bytes below `used` are ever read.
    c->data.reset(new char[c->capacity]);
    chunks.push_back(std::move(c));
  }
  HeadChunk& c = *chunks.back();
  l.chunk = first_chunk + static_cast<uint32_t>(chunks.size() - 1);
  l.offset = c.used;
  l.length = n;
  if (n > 0) std::memcpy(c.data.get() + c.used, line.data(), n);
  c.used += n;
  bytes += n;
  lines.push_back(l);
}

void Head::Remove(const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  // Kept lines keep their text where it is: nothing moves, and a chunk is
  // freed once no kept line points into it (cuts take heads from the front,
  // so these are the oldest chunks).
  size_t kept = 0, r = 0;
  for (const HeadLine& l : lines) {
    while (r < ranges.size() && ranges[r].second < l.line_no) ++r;
    if (r < ranges.size() && ranges[r].first <= l.line_no) {
      bytes -= l.length;
      continue;
    }
    lines[kept++] = l;
  }
  lines.resize(kept);
  if (lines.empty()) {
    // An empty head gives its buffers back (a quiet stream holds nothing).
    first_chunk += static_cast<uint32_t>(chunks.size());
    chunks.clear();
    std::vector<HeadLine>().swap(lines);
    return;
  }
  const uint32_t drop = lines.front().chunk - first_chunk;
  if (drop > 0) {
    chunks.erase(chunks.begin(), chunks.begin() + drop);
    first_chunk += drop;
  }
}

Result<std::unique_ptr<LogStore>> LogStore::Open(const Options& options) {
  if (options.dir.empty()) return InvalidArgument("log store: Options::dir is empty");
  if (options.block_max_lines == 0 || options.block_max_bytes == 0) {
    return InvalidArgument("log store: block_max_lines and block_max_bytes must be positive");
  }
  // Blocks must stay decodable (format.cc caps a block's raw size at 256 MiB).
  Options o = options;
  o.block_max_bytes = std::min<size_t>(o.block_max_bytes, 64u << 20);
  o.block_max_lines = std::min<size_t>(o.block_max_lines, 1u << 20);
  auto store = std::make_unique<LogStoreImpl>(o);
  VIGIL_RETURN_IF_ERROR(store->Recover().WithContext("opening log store in " + options.dir));
  store->StartBackground();
  return std::unique_ptr<LogStore>(std::move(store));
}

LogStoreImpl::LogStoreImpl(const Options& options)
    : options_(options),
      env_(options.env != nullptr ? options.env : Env::Default()),
      wal_dir_(JoinPath(options.dir, "wal")),
      disk_bytes_(env_, options.dir) {}

LogStoreImpl::~LogStoreImpl() { (void)Close(); }

Stream* LogStoreImpl::NewStreamLocked(uint64_t id, wire::Labels labels) {
  auto s = std::make_unique<Stream>();
  s->id = id;
  stream_by_key_[LabelsKey(labels)] = id;
  s->labels = std::make_shared<const wire::Labels>(std::move(labels));
  s->dirty = true;
  next_stream_id_ = std::max(next_stream_id_, id + 1);
  Stream* raw = s.get();
  streams_[id] = std::move(s);
  return raw;
}

Status LogStoreImpl::Recover() {
  VIGIL_RETURN_IF_ERROR(env_->CreateDirs(wal_dir_));
  VIGIL_ASSIGN_OR_RETURN(catalog_, Catalog::Open(JoinPath(options_.dir, "catalog.db")));
  VIGIL_ASSIGN_OR_RETURN(CatalogContents cat, catalog_->Load());
  std::lock_guard lock(mu_);
  checkpoint_segment_ = cat.meta.wal_segment;
  last_seq_ = cat.meta.last_seq;
  next_stream_id_ = std::max<uint64_t>(1, cat.meta.next_stream_id);
  lines_ = cat.meta.lines;
  duplicates_ = cat.meta.duplicates;
  for (auto& cs : cat.streams) {
    Stream* s = NewStreamLocked(cs.id, std::move(cs.labels));
    s->next_line = cs.next_line;
    s->head_floor = cs.head_floor;
    s->min_time = cs.min_time;
    s->max_time = cs.max_time;
  }
  for (auto& cs : cat.sources) {
    Source src;
    static_cast<CatalogSource&>(src) = std::move(cs);
    std::string key = SourceKey(src.node, src.source_id);
    sources_[key] = std::move(src);
  }

  // Blocks first: WAL replay restores only lines that no block holds.
  std::vector<BlockRef> blocks;
  std::unordered_map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> covered;
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, env_->ListDir(options_.dir));
  for (const auto& name : names) {
    int64_t day = ParsePartitionFileName(name);
    if (day < 0) continue;
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<Partition> p,
                           Partition::Open(JoinPath(options_.dir, name), day));
    VIGIL_ASSIGN_OR_RETURN(std::vector<StoredBlockInfo> infos, p->Load());
    std::shared_ptr<Partition> part(std::move(p));
    partitions_[day] = part;
    for (const auto& info : infos) {
      blocks.push_back({info.header, info.rowid, info.disk_bytes, part});
      covered[info.header.stream_id].emplace_back(info.header.first_line_no,
                                                  info.header.last_line_no);
    }
  }
  for (auto& [id, ranges] : covered) std::sort(ranges.begin(), ranges.end());

  uint64_t max_segment = 0;
  VIGIL_ASSIGN_OR_RETURN(WalReplayStats stats,
                         ReplayWal(env_, wal_dir_, [&](uint64_t segment, std::string_view body) {
                           max_segment = std::max(max_segment, segment);
                           return ApplyReplayRecord(segment, body, covered);
                         }));
  if (stats.truncated_bytes > 0) {
    Logf(LogLevel::kWarn, "log store: cut %llu bytes of torn WAL tail in %llu segment(s)",
         static_cast<unsigned long long>(stats.truncated_bytes),
         static_cast<unsigned long long>(stats.torn_segments));
  }

  for (auto& b : blocks) {
    auto it = streams_.find(b.header.stream_id);
    if (it == streams_.end()) {
      Logf(LogLevel::kWarn, "log store: block of unknown stream %llu in %s ignored",
           static_cast<unsigned long long>(b.header.stream_id), b.part->path().c_str());
      continue;
    }
    Stream& s = *it->second;
    s.next_line = std::max(s.next_line, b.header.last_line_no + 1);
    last_seq_ = std::max(last_seq_, b.header.max_seq);
    s.blocks.push_back(std::move(b));
  }
  for (auto& [id, s] : streams_) {
    std::sort(s->blocks.begin(), s->blocks.end(), [](const BlockRef& a, const BlockRef& b) {
      return a.header.first_line_no < b.header.first_line_no;
    });
  }
  VIGIL_RETURN_IF_ERROR(LoadFiltersLocked());
  // Never append to a replayed segment: its tail was just cut back.
  uint64_t next_segment = std::max(max_segment + 1, checkpoint_segment_);
  VIGIL_ASSIGN_OR_RETURN(wal_, OpenWalWriter(env_, wal_dir_, next_segment));
  durable_seq_ = last_seq_;
  full_checkpoint_ = true;
  last_checkpoint_ms_ = env_->NowMillis();
  return Status::Ok();
}

// Keyword queries mostly look at recent days: their filters go into memory
// first, until the budget is spent.
Status LogStoreImpl::LoadFiltersLocked() {
  std::vector<BlockRef*> refs;
  for (auto& [id, s] : streams_) {
    for (auto& b : s->blocks) refs.push_back(&b);
  }
  std::sort(refs.begin(), refs.end(), [](const BlockRef* a, const BlockRef* b) {
    return a->header.max_time > b->header.max_time;
  });
  for (BlockRef* b : refs) {
    if (filter_bytes_ >= options_.filter_memory_bytes) break;
    VIGIL_ASSIGN_OR_RETURN(std::string f, b->part->ReadFilter(b->rowid));
    filter_bytes_ += f.size();
    b->filter = std::make_shared<const std::string>(std::move(f));
  }
  return Status::Ok();
}

Status LogStoreImpl::ApplyReplayRecord(
    uint64_t segment, std::string_view body,
    const std::unordered_map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>>& covered) {
  WalRecord rec;
  VIGIL_RETURN_IF_ERROR(DecodeWalRecord(body, &rec));
  if (rec.type == WalRecordType::kStream) {
    if (streams_.count(rec.stream_id) == 0) NewStreamLocked(rec.stream_id, std::move(rec.labels));
    return Status::Ok();
  }
  const WalLinesRecord& r = rec.lines;
  auto it = streams_.find(r.stream_id);
  if (it == streams_.end()) {
    // Only a lost segment can cause this; keep what can be kept.
    Logf(LogLevel::kWarn, "log store: WAL segment %llu names unknown stream %llu; record skipped",
         static_cast<unsigned long long>(segment), static_cast<unsigned long long>(r.stream_id));
    return Status::Ok();
  }
  Stream& s = *it->second;
  // Records before the checkpoint's segment are already in the catalog's
  // bookkeeping; only their lines may still be needed for the head.
  if (segment >= checkpoint_segment_) {
    Source& src = sources_[SourceKey(r.node, r.source_id)];
    if (src.node.empty() && src.source_id.empty()) {
      src.node = std::string(r.node);
      src.source_id = std::string(r.source_id);
    }
    src.stream_id = r.stream_id;
    src.end_offset = std::max(src.end_offset, r.end_offset);
    src.counters.sampled_lines += r.counters.sampled_lines;
    src.counters.filtered_lines += r.counters.filtered_lines;
    src.counters.truncated_lines += r.counters.truncated_lines;
    src.counters.lost_bytes += r.counters.lost_bytes;
    src.lines += r.lines.size();
    for (const auto& l : r.lines) src.bytes += l.text.size();
    src.dirty = true;
    lines_ += r.lines.size();
    duplicates_ += r.duplicates;
    s.dirty = true;
  }
  auto cov = covered.find(r.stream_id);
  const auto* ranges = cov == covered.end() ? nullptr : &cov->second;
  int64_t now = env_->NowMillis();
  for (size_t i = 0; i < r.lines.size(); ++i) {
    const WalLine& wl = r.lines[i];
    uint64_t line_no = r.first_line_no + i;
    uint64_t seq = r.first_seq + i;
    last_seq_ = std::max(last_seq_, seq);
    s.next_line = std::max(s.next_line, line_no + 1);
    s.min_time = std::min(s.min_time, wl.time_ns);
    s.max_time = std::max(s.max_time, wl.time_ns);
    if (line_no < s.head_floor || Covered(ranges, line_no)) continue;
    if (!s.head.lines.empty() && line_no <= s.head.lines.back().line_no) continue;
    if (s.head.lines.empty()) s.head.first_arrival_ms = now;
    s.head.Add(
        {line_no, seq, wl.time_ns, 0, 0, 0, static_cast<uint32_t>(segment), wl.level, wl.flags},
        wl.text);
    ++head_lines_;
    head_bytes_ += wl.text.size();
  }
  return Status::Ok();
}

Stream* LogStoreImpl::StreamForLabelsLocked(const wire::Labels& labels) {
  auto it = stream_by_key_.find(LabelsKey(labels));
  if (it != stream_by_key_.end()) return streams_[it->second].get();
  uint64_t id = next_stream_id_;
  Stream* s = NewStreamLocked(id, labels);
  std::string body;
  EncodeStreamRecord(&body, id, labels);
  AppendWalFrame(&pending_, body);
  return s;
}

Status LogStoreImpl::Append(std::string_view node, const wire::LogBatch& batch) {
  VIGIL_RETURN_IF_ERROR(ValidateBatch(batch));
  bool wake = false;
  uint64_t ticket;
  {
    std::lock_guard lock(mu_);
    if (closed_) return FailedPrecondition("the log store is closed");
    if (!failed_.ok()) return failed_;
    int64_t now = env_->NowMillis();
    ReserveWal(node, batch);
    for (const wire::LogStream& ls : batch.streams) {
      wire::Labels labels;
      labels.reserve(ls.labels.size() + 1);
      for (const auto& l : ls.labels) {
        if (l.name != "node") labels.push_back(l);
      }
      labels.push_back({"node", std::string(node)});
      wire::NormalizeLabels(&labels);
      Stream* s = StreamForLabelsLocked(labels);
      std::string skey = SourceKey(node, ls.source_id);
      auto sit = sources_.find(skey);
      bool known = sit != sources_.end();
      if (!known) {
        Source fresh;
        fresh.node = std::string(node);
        fresh.source_id = ls.source_id;
        sit = sources_.emplace(skey, std::move(fresh)).first;
      }
      Source& src = sit->second;
      uint64_t committed = src.end_offset;
      // A stream that ends at or before the committed offset was stored
      // before (a retried batch): nothing of it counts again, counters neither.
      bool all_dup = known && ls.end_offset <= committed;
      WalLinesRecord rec;
      rec.stream_id = s->id;
      rec.node = node;
      rec.source_id = ls.source_id;
      rec.end_offset = std::max(committed, ls.end_offset);
      if (!all_dup) rec.counters = ls.counters;
      uint64_t kept = 0;
      for (const auto& r : ls.records) kept += !all_dup && r.offset >= committed;
      rec.duplicates = ls.records.size() - kept;
      if (kept == 0 && rec.end_offset == committed && rec.counters == wire::LogSourceCounters{} &&
          rec.duplicates == 0 && known) {
        continue;
      }
      rec.first_line_no = s->next_line;
      rec.first_seq = last_seq_ + 1;
      // Frame written in place: header patched once the body is complete.
      size_t frame_at = pending_.size();
      pending_.append(8, '\0');
      EncodeLinesHeader(&pending_, rec, kept);
      if (kept > 0 && s->head.lines.empty()) s->head.first_arrival_ms = now;
      for (const auto& r : ls.records) {
        if (all_dup || r.offset < committed) continue;
        AddWalLine(&pending_, r.time_ns, static_cast<uint8_t>(r.level), r.flags, r.line);
        s->head.Add(
            {s->next_line++, ++last_seq_, r.time_ns, 0, 0, 0,
             static_cast<uint32_t>(wal_->segment()), static_cast<uint8_t>(r.level), r.flags},
            r.line);
        s->min_time = std::min(s->min_time, r.time_ns);
        s->max_time = std::max(s->max_time, r.time_ns);
        src.bytes += r.line.size();
        head_bytes_ += r.line.size();
      }
      std::string_view body = std::string_view(pending_).substr(frame_at + 8);
      char hdr[8];
      uint32_t len = static_cast<uint32_t>(body.size());
      uint32_t crc = Crc32c(body);
      std::memcpy(hdr, &len, 4);
      std::memcpy(hdr + 4, &crc, 4);
      pending_.replace(frame_at, 8, hdr, 8);
      src.stream_id = s->id;
      src.end_offset = rec.end_offset;
      src.counters.sampled_lines += rec.counters.sampled_lines;
      src.counters.filtered_lines += rec.counters.filtered_lines;
      src.counters.truncated_lines += rec.counters.truncated_lines;
      src.counters.lost_bytes += rec.counters.lost_bytes;
      src.lines += kept;
      src.dirty = true;
      s->dirty = true;
      lines_ += kept;
      head_lines_ += kept;
      duplicates_ += rec.duplicates;
      wake = wake || s->head.lines.size() >= options_.block_max_lines ||
             s->head.bytes >= options_.block_max_bytes;
    }
    ticket = appended_pos_ + pending_.size();
  }
  if (wake) WakeMaintenance();
  // Also when nothing was written: the offsets this call deduplicated against
  // may belong to a concurrent call that is not yet durable.
  VIGIL_RETURN_IF_ERROR(WaitDurable(ticket));
  return RelieveMemory();
}

// Makes room in pending_ for the batch's frames in one allocation of about
// the right size: std::string::reserve at least doubles, and this buffer is
// the size of a whole batch.
void LogStoreImpl::ReserveWal(std::string_view node, const wire::LogBatch& batch) {
  size_t need = 0;
  for (const wire::LogStream& ls : batch.streams) {
    need += 128 + ls.source_id.size() + node.size();
    for (const auto& l : ls.labels) need += 16 + l.name.size() + l.value.size();
    for (const auto& r : ls.records) need += r.line.size() + 16;
  }
  if (pending_.capacity() >= pending_.size() + need) return;
  std::string grown;
  grown.reserve(pending_.size() + need + need / 8);  // room for a slightly larger next batch
  grown.append(pending_);
  pending_.swap(grown);
}

// Backpressure: while the heads hold more than max_head_bytes (maintenance
// is behind), the appender cuts blocks itself; the acknowledgement, and so
// the agent's next read, waits for it.
Status LogStoreImpl::RelieveMemory() {
  auto over = [this] {
    std::lock_guard lock(mu_);
    return head_bytes_ > options_.max_head_bytes;
  };
  if (!over()) return Status::Ok();
  std::lock_guard maintain(maintain_mu_);
  if (!over()) return Status::Ok();
  VIGIL_RETURN_IF_ERROR(MaintainLocked(false));
  // Many streams each below their size cap: cut them all.
  if (over()) VIGIL_RETURN_IF_ERROR(MaintainLocked(true));
  return Status::Ok();
}

Status LogStoreImpl::FlushPendingLocked() {
  // Caller holds sync_mu_ and mu_.
  if (!failed_.ok()) return failed_;
  Status st = wal_->Write(pending_);
  if (st.ok()) st = wal_->Sync();
  if (!st.ok()) {
    failed_ = st.WithContext("log WAL");
    return failed_;
  }
  appended_pos_ += pending_.size();
  pending_.clear();
  durable_pos_ = appended_pos_;
  durable_seq_ = last_seq_;
  return Status::Ok();
}

Status LogStoreImpl::WaitDurable(uint64_t ticket) {
  std::lock_guard sync(sync_mu_);
  uint64_t target, target_seq;
  {
    std::lock_guard lock(mu_);
    if (durable_pos_ >= ticket) return Status::Ok();
    if (!failed_.ok()) return failed_;
    // Leader: takes everything encoded so far; followers find it durable.
    // The two buffers trade places, so neither is reallocated each time.
    write_buf_.clear();
    write_buf_.swap(pending_);
    appended_pos_ += write_buf_.size();
    target = appended_pos_;
    target_seq = last_seq_;
  }
  Status st = wal_->Write(write_buf_);
  if (st.ok()) st = wal_->Sync();
  std::lock_guard lock(mu_);
  if (!st.ok()) {
    failed_ = st.WithContext("log WAL (reopen the store to recover)");
    return failed_;
  }
  durable_pos_ = target;
  durable_seq_ = target_seq;
  if (pending_.empty()) {
    // Nobody appended while this was written (one appender, the usual case):
    // the written buffer takes the next frames and the other is freed, so the
    // WAL holds one batch's worth of memory, not two.
    write_buf_.clear();
    pending_.swap(write_buf_);
    std::string().swap(write_buf_);
  }
  return Status::Ok();
}

void LogStoreImpl::WakeMaintenance() {
  if (!options_.background_maintenance) return;
  std::lock_guard lock(bg_mu_);
  wake_ = true;
  bg_cv_.notify_one();
}

void LogStoreImpl::StartBackground() {
  if (options_.background_maintenance) {
    bg_ = std::thread([this] { BackgroundLoop(); });
    NameThread(bg_, "vigil-logstore");
  }
}

uint64_t LogStoreImpl::LastSeq() const {
  std::lock_guard lock(mu_);
  return last_seq_;
}

uint64_t LogStoreImpl::CommittedOffset(std::string_view node, std::string_view source_id) const {
  std::lock_guard lock(mu_);
  auto it = sources_.find(SourceKey(node, source_id));
  return it == sources_.end() ? 0 : it->second.end_offset;
}

std::vector<SourceTotals> LogStoreImpl::Sources() const {
  std::lock_guard lock(mu_);
  std::map<uint64_t, SourceTotals> by_stream;
  for (const auto& [key, src] : sources_) {
    auto it = streams_.find(src.stream_id);
    if (it == streams_.end()) continue;
    SourceTotals& t = by_stream[src.stream_id];
    t.stream_id = src.stream_id;
    t.labels = *it->second->labels;
    t.lines += src.lines;
    t.bytes += src.bytes;
    t.counters.sampled_lines += src.counters.sampled_lines;
    t.counters.filtered_lines += src.counters.filtered_lines;
    t.counters.truncated_lines += src.counters.truncated_lines;
    t.counters.lost_bytes += src.counters.lost_bytes;
  }
  std::vector<SourceTotals> out;
  for (auto& [id, t] : by_stream) out.push_back(std::move(t));
  std::sort(out.begin(), out.end(),
            [](const SourceTotals& a, const SourceTotals& b) { return a.labels < b.labels; });
  return out;
}

LogStoreStats LogStoreImpl::Stats() const {
  LogStoreStats st;
  {
    std::lock_guard lock(mu_);
    st.streams = streams_.size();
    st.lines = lines_;
    st.duplicate_lines = duplicates_;
    st.head_lines = head_lines_;
    st.head_bytes = head_bytes_;
    int64_t oldest = INT64_MAX;
    for (const auto& [id, s] : streams_) {
      st.blocks += s->blocks.size();
      for (const auto& b : s->blocks) oldest = std::min(oldest, b.header.min_time);
      for (const auto& l : s->head.lines) oldest = std::min(oldest, l.time_ns);
    }
    st.oldest_ns = oldest == INT64_MAX ? 0 : oldest;
  }
  auto size = disk_bytes_.Get();
  if (size.ok()) st.disk_bytes = *size;
  return st;
}

}  // namespace vigil::logstore
