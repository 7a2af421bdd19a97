// Db composition: open (catalog, persisted bounds, WAL replay), append and
// queries. Maintenance and shutdown live in db_maintain.cc.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <unordered_map>

#include "core/log.h"
#include "core/thread_name.h"
#include "store/tsdb/chunk_codec.h"
#include "store/tsdb/db_impl.h"
#include "store/tsdb/stale.h"

namespace vigil::tsdb {
namespace {

// Labels as the store keeps them: sorted, no empty values, unique names.
Status CheckLabels(const wire::Labels& labels) {
  if (labels.empty()) return InvalidArgument("a series needs at least one label");
  if (labels.size() > wire::kMaxLabelsPerSeries) {
    return InvalidArgument("series " + wire::LabelsToString(labels) + " has too many labels");
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    const auto& l = labels[i];
    if (l.name.empty() || l.name.size() + l.value.size() > wire::kMaxLabelBytes) {
      return InvalidArgument("series " + wire::LabelsToString(labels) + " has an invalid label");
    }
    if (i > 0 && labels[i - 1].name == l.name) {
      return InvalidArgument("series " + wire::LabelsToString(labels) + " repeats label " + l.name);
    }
  }
  return Status::Ok();
}

// Times outside 1970..9999 are rejected: day and window arithmetic stays far
// from overflow and every day has a YYYY-MM-DD partition name.
constexpr int64_t kMaxTimeMs = 253402300799999;  // 9999-12-31T23:59:59.999Z
bool TimeInRange(int64_t t_ms) { return t_ms >= 0 && t_ms <= kMaxTimeMs; }

Status CheckSamples(const wire::Series& s) {
  for (const auto& sample : s.samples) {
    if (!TimeInRange(sample.t_ms)) {
      return InvalidArgument("sample time " + std::to_string(sample.t_ms) + " of series " +
                             wire::LabelsToString(s.labels) +
                             " is outside 1970..9999 (milliseconds since the epoch expected)");
    }
  }
  return Status::Ok();
}

bool IsNormalized(const wire::Labels& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].value.empty()) return false;
    if (i > 0 && !(labels[i - 1] < labels[i])) return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<Db>> Db::Open(const Options& options) {
  if (options.dir.empty()) return InvalidArgument("tsdb: Options::dir is empty");
  if (options.env == nullptr) return InvalidArgument("tsdb: Options::env is null");
  if (options.chunk_window_ms <= 0 || options.retention_ms <= 0) {
    return InvalidArgument("tsdb: chunk_window_ms and retention_ms must be positive");
  }
  auto db = std::make_unique<DbImpl>(options);
  VIGIL_RETURN_IF_ERROR(db->Init().WithContext("opening metric store " + options.dir));
  return std::unique_ptr<Db>(std::move(db));
}

DbImpl::DbImpl(const Options& options)
    : options_(options),
      env_(options.env),
      wal_dir_(JoinPath(options.dir, "wal")),
      disk_bytes_(options.env, options.dir),
      head_(options.chunk_window_ms) {}

Status DbImpl::Init() {
  VIGIL_RETURN_IF_ERROR(env_->CreateDirs(wal_dir_));
  VIGIL_RETURN_IF_ERROR(LockDir());
  VIGIL_ASSIGN_OR_RETURN(catalog_, Catalog::Open(JoinPath(options_.dir, "catalog.db")));
  VIGIL_ASSIGN_OR_RETURN(store_, ChunkStore::Open(env_, JoinPath(options_.dir, "chunks")));
  VIGIL_RETURN_IF_ERROR(LoadCatalog());
  VIGIL_RETURN_IF_ERROR(LoadPersisted());
  VIGIL_RETURN_IF_ERROR(ReplayWal());
  VIGIL_RETURN_IF_ERROR(RefreshStoreMinTime());
  VIGIL_ASSIGN_OR_RETURN(std::vector<uint64_t> segments, ListWalSegments(env_, wal_dir_));
  uint64_t next_segment = segments.empty() ? 1 : segments.back() + 1;
  VIGIL_ASSIGN_OR_RETURN(wal_, OpenWalWriter(env_, wal_dir_, next_segment));
  bg_ = std::thread([this] { BackgroundLoop(); });
  NameThread(bg_, "vigil-tsdb");
  return Status::Ok();
}

// Two processes appending to one WAL would corrupt it. Env has no file
// locking, so this uses flock(2) directly; the kernel drops the lock when the
// process dies, so a crash never leaves the store locked.
Status DbImpl::LockDir() {
  std::string path = JoinPath(options_.dir, "LOCK");
  lock_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return ErrnoStatus("open", path, errno);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) < 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    return FailedPrecondition("another process has the metric store open (" + path +
                              " is locked); stop it first");
  }
  return Status::Ok();
}

Status DbImpl::LoadCatalog() {
  VIGIL_RETURN_IF_ERROR(catalog_->LoadSeries([this](uint64_t id, wire::Labels labels) {
    VIGIL_RETURN_IF_ERROR(index_.Add(id, labels).WithContext("catalog"));
    head_.GetOrCreate(id);
    next_id_ = std::max(next_id_, id + 1);
    return Status::Ok();
  }));
  std::vector<wire::MetricFamily> families;
  VIGIL_RETURN_IF_ERROR(catalog_->LoadFamilies(&families));
  for (auto& f : families) families_[f.name] = std::move(f);
  return Status::Ok();
}

// The newest persisted chunk of each series bounds WAL replay (no sample is
// applied twice) and gives Latest() its value after a restart.
Status DbImpl::LoadPersisted() {
  std::unordered_map<uint64_t, StoredChunk> newest;
  VIGIL_RETURN_IF_ERROR(store_->NewestChunks(&newest));
  for (const auto& [id, chunk] : newest) {
    HeadSeries* hs = head_.Find(id);
    if (hs == nullptr) continue;  // chunk of a series the catalog lost: unreachable
    std::vector<wire::Sample> samples;
    wire::Sample last{chunk.max_t, 0};
    bool decoded = DecodeChunk(chunk.data, &samples).ok() && !samples.empty();
    if (decoded) last = samples.back();
    head_.NotePersisted(hs, last);
    // An undecodable chunk still bounds replay, but has no value to show.
    if (!decoded) hs->has_last = false;
    max_time_ = std::max(max_time_, hs->last_t);
  }
  return Status::Ok();
}

Status DbImpl::ReplayWal() {
  auto stats = ::vigil::tsdb::ReplayWal(
      env_, wal_dir_, [this](uint64_t seg, std::string_view b) { return ApplyRecord(seg, b); });
  if (!stats.ok()) return stats.status();
  if (stats->truncated_bytes > 0) {
    // Expected after a crash: the unsynced tail of the last segment.
    Logf(LogLevel::kWarn, "tsdb: cut %llu bytes of torn WAL tail in %llu segment(s) under %s",
         static_cast<unsigned long long>(stats->truncated_bytes),
         static_cast<unsigned long long>(stats->torn_segments), wal_dir_.c_str());
  }
  return Status::Ok();
}

void DbImpl::AddSeriesLocked(uint64_t id, const wire::Labels& labels, uint64_t segment) {
  (void)index_.Add(id, labels);  // callers checked that neither id nor labels exist
  head_.GetOrCreate(id);
  next_id_ = std::max(next_id_, id + 1);
  new_series_.push_back({id, labels, segment});
}

Status DbImpl::ApplyRecord(uint64_t segment, std::string_view body) {
  WalRecord rec;
  VIGIL_RETURN_IF_ERROR(DecodeWalRecord(body, &rec));
  switch (rec.type) {
    case WalRecordType::kSeries:
      // Already in the catalog, or a conflicting leftover: the catalog wins.
      if (index_.LabelsOf(rec.series_id) != nullptr) break;
      if (index_.Find(rec.labels)) break;
      if (!CheckLabels(rec.labels).ok()) break;
      AddSeriesLocked(rec.series_id, rec.labels, segment);
      break;
    case WalRecordType::kFamily:
      families_[rec.family.name] = rec.family;
      new_families_.push_back({rec.family, segment});
      break;
    case WalRecordType::kSamples:
      for (const auto& s : rec.samples) {
        HeadSeries* hs = head_.Find(s.series_id);
        // Unknown ids come from a series record lost in a torn segment.
        if (hs == nullptr || !TimeInRange(s.t_ms)) continue;
        // At or before the series' last time means persisted already: skipped.
        if (head_.Append(hs, {s.t_ms, s.value}, segment)) max_time_ = std::max(max_time_, s.t_ms);
      }
      break;
  }
  return Status::Ok();
}

Status DbImpl::NoteFamilyLocked(const wire::MetricFamily& f, std::vector<std::string>* records) {
  if (f.name.empty()) return Status::Ok();
  auto it = families_.find(f.name);
  if (it != families_.end() && it->second == f) return Status::Ok();
  families_[f.name] = f;
  new_families_.push_back({f, wal_->segment()});
  records->push_back(EncodeFamilyRecord(f));
  return Status::Ok();
}

Result<uint64_t> DbImpl::SeriesIdLocked(const wire::Labels& labels,
                                        std::vector<std::string>* records) {
  if (auto id = index_.Find(labels)) return *id;
  uint64_t id = next_id_++;
  AddSeriesLocked(id, labels, wal_->segment());
  records->push_back(EncodeSeriesRecord(id, labels));
  return id;
}

Status DbImpl::Append(const wire::MetricBatch& batch, std::vector<uint64_t>* ids) {
  // Validate everything first: a bad batch changes nothing.
  std::vector<wire::Labels> normalized(batch.series.size());
  std::vector<const wire::Labels*> labels(batch.series.size());
  for (size_t i = 0; i < batch.series.size(); ++i) {
    labels[i] = &batch.series[i].labels;
    if (!IsNormalized(*labels[i])) {
      normalized[i] = *labels[i];
      wire::NormalizeLabels(&normalized[i]);
      labels[i] = &normalized[i];
    }
    VIGIL_RETURN_IF_ERROR(CheckLabels(*labels[i]));
    VIGIL_RETURN_IF_ERROR(CheckSamples(batch.series[i]));
  }
  std::lock_guard lock(mu_);
  if (closed_) return FailedPrecondition("the metric store is closed");
  std::vector<std::string> records;
  std::vector<WalSample> accepted;
  for (const auto& f : batch.families) VIGIL_RETURN_IF_ERROR(NoteFamilyLocked(f, &records));
  if (ids != nullptr) ids->clear();
  for (size_t i = 0; i < batch.series.size(); ++i) {
    VIGIL_ASSIGN_OR_RETURN(uint64_t id, SeriesIdLocked(*labels[i], &records));
    if (ids != nullptr) ids->push_back(id);
    HeadSeries* hs = head_.Find(id);
    for (const auto& s : batch.series[i].samples) {
      if (!head_.Append(hs, s, wal_->segment())) {
        ++samples_out_of_order_;
        continue;
      }
      accepted.push_back({id, s.t_ms, s.value});
      max_time_ = std::max(max_time_, s.t_ms);
    }
  }
  samples_appended_ += accepted.size();
  if (!accepted.empty()) records.push_back(EncodeSamplesRecord(accepted));
  for (const auto& r : records) {
    Status st = wal_->Add(r);
    if (st.ok()) continue;
    // A failed write may have left a partial frame; replay stops there, so
    // later records must go to a fresh segment or they would be unreachable.
    (void)wal_->Rotate();
    return st.WithContext("metric WAL");
  }
  if (options_.wal_sync_interval_ms <= 0) VIGIL_RETURN_IF_ERROR(wal_->Sync());
  if (wal_->segment_bytes() >= kWalSegmentBytes) VIGIL_RETURN_IF_ERROR(wal_->Rotate());
  return Status::Ok();
}

namespace {

// Appends the samples of chunk `c` in [mint, maxt] and before `below` to `out`.
Status DecodeInto(const StoredChunk& c, int64_t mint, int64_t maxt, int64_t below,
                  std::vector<wire::Sample>* out) {
  size_t start = out->size();
  Status st = DecodeChunk(c.data, out);
  if (!st.ok()) {
    out->resize(start);
    return st.WithContext("chunk of series " + std::to_string(c.series_id) + " at " +
                          std::to_string(c.min_t));
  }
  // Most chunks of a range query lie wholly inside it: nothing to filter.
  if (c.min_t >= mint && c.max_t <= maxt && c.max_t < below) return Status::Ok();
  auto first = out->begin() + static_cast<std::ptrdiff_t>(start);
  out->erase(std::remove_if(first, out->end(),
                            [&](const wire::Sample& s) {
                              return s.t_ms < mint || s.t_ms > maxt || s.t_ms >= below;
                            }),
             out->end());
  return Status::Ok();
}

// One matched series: what the head held at selection time and the bytes of
// its persisted chunks, decoded on demand.
struct SelectedSeries {
  uint64_t id = 0;
  wire::Labels labels;
  std::vector<wire::Sample> head;
  int64_t head_from = 0;  // persisted samples at or after this time are in `head`
  std::vector<StoredChunk> chunks;
};

class SelectionImpl final : public SeriesSelection {
 public:
  SelectionImpl(std::vector<SelectedSeries> series, int64_t mint, int64_t maxt)
      : series_(std::move(series)), mint_(mint), maxt_(maxt) {}

  size_t size() const override { return series_.size(); }
  const wire::Labels& labels(size_t i) const override { return series_[i].labels; }

  Status Samples(size_t i, std::vector<wire::Sample>* out) const override {
    out->clear();
    if (i >= series_.size()) return InvalidArgument("series index out of range");
    const SelectedSeries& s = series_[i];
    size_t expected = s.head.size();
    // count comes from disk: clamped, so a corrupt row cannot force a huge allocation.
    for (const auto& c : s.chunks) {
      expected += static_cast<size_t>(std::clamp<int64_t>(c.count, 0, 1 << 20));
    }
    out->reserve(expected);
    for (const auto& c : s.chunks) {
      VIGIL_RETURN_IF_ERROR(DecodeInto(c, mint_, maxt_, s.head_from, out));
    }
    out->insert(out->end(), s.head.begin(), s.head.end());
    return Status::Ok();
  }

 private:
  std::vector<SelectedSeries> series_;
  int64_t mint_, maxt_;
};

}  // namespace

Result<std::unique_ptr<SeriesSelection>> DbImpl::SelectSeries(const std::vector<Matcher>& matchers,
                                                              int64_t mint_ms,
                                                              int64_t maxt_ms) const {
  return SelectImpl(matchers, mint_ms, maxt_ms, /*last_only=*/false);
}

Result<std::unique_ptr<SeriesSelection>> DbImpl::SelectLast(const std::vector<Matcher>& matchers,
                                                            int64_t mint_ms,
                                                            int64_t maxt_ms) const {
  return SelectImpl(matchers, mint_ms, maxt_ms, /*last_only=*/true);
}

bool DbImpl::NewestKept(const HeadSeries& hs) const {
  if (hs.persisted_max_t == kNoTime || hs.last.t_ms > hs.persisted_max_t)
    return true;  // in the head
  return store_min_time_ != kNoTime && hs.last.t_ms >= store_min_time_;
}

Result<std::unique_ptr<SeriesSelection>> DbImpl::SelectImpl(const std::vector<Matcher>& matchers,
                                                            int64_t mint_ms, int64_t maxt_ms,
                                                            bool last_only) const {
  std::vector<SelectedSeries> series;
  std::vector<uint64_t> ids;
  std::vector<uint64_t> read_ids;  // the series whose chunks are read
  {
    std::lock_guard lock(mu_);
    if (closed_) return FailedPrecondition("the metric store is closed");
    VIGIL_ASSIGN_OR_RETURN(ids, index_.Match(matchers));
    series.resize(ids.size());
    read_ids.reserve(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      series[i].id = ids[i];
      series[i].labels = *index_.LabelsOf(ids[i]);
      const HeadSeries* hs = last_only ? head_.Find(ids[i]) : nullptr;
      // hs->last is the newest sample accepted or persisted: in range (and
      // not since dropped by retention), it is the answer; before the range,
      // the series has nothing in it.
      if (hs != nullptr && hs->has_last && hs->last.t_ms <= maxt_ms && NewestKept(*hs)) {
        if (hs->last.t_ms >= mint_ms) series[i].head.push_back(hs->last);
        series[i].head_from = std::numeric_limits<int64_t>::min();
        continue;
      }
      series[i].head_from = head_.CopyRange(ids[i], mint_ms, maxt_ms, &series[i].head);
      read_ids.push_back(ids[i]);
    }
  }
  std::vector<StoredChunk> chunks;
  if (!read_ids.empty()) VIGIL_RETURN_IF_ERROR(store_->Read(read_ids, mint_ms, maxt_ms, &chunks));
  // Chunks come ordered by day, then series, then time: per series, by time.
  // ids are sorted, so a binary search finds each chunk's series.
  for (auto& c : chunks) {
    auto it = std::lower_bound(ids.begin(), ids.end(), c.series_id);
    if (it == ids.end() || *it != c.series_id) continue;
    series[static_cast<size_t>(it - ids.begin())].chunks.push_back(std::move(c));
  }
  std::sort(series.begin(), series.end(),
            [](const SelectedSeries& a, const SelectedSeries& b) { return a.labels < b.labels; });
  return std::unique_ptr<SeriesSelection>(
      std::make_unique<SelectionImpl>(std::move(series), mint_ms, maxt_ms));
}

Result<std::vector<wire::Series>> DbImpl::Select(const std::vector<Matcher>& matchers,
                                                 int64_t mint_ms, int64_t maxt_ms) const {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<SeriesSelection> sel,
                         SelectSeries(matchers, mint_ms, maxt_ms));
  std::vector<wire::Series> out;
  for (size_t i = 0; i < sel->size(); ++i) {
    wire::Series s{sel->labels(i), {}};
    VIGIL_RETURN_IF_ERROR(sel->Samples(i, &s.samples));
    // Values only: a staleness marker says there is no value (stale.h).
    std::erase_if(s.samples, [](const wire::Sample& x) { return IsStaleNaN(x.value); });
    if (!s.samples.empty()) out.push_back(std::move(s));
  }
  return out;
}

namespace {

// Whether the head holds a sample of `hs` in [mint, maxt].
bool HeadHasData(const HeadSeries& hs, int64_t mint, int64_t maxt) {
  auto has = [&](const ChunkBuffer& b) {
    auto lo = std::lower_bound(b.samples.begin(), b.samples.end(), mint,
                               [](const wire::Sample& s, int64_t t) { return s.t_ms < t; });
    return lo != b.samples.end() && lo->t_ms <= maxt;
  };
  for (const auto& b : hs.closed) {
    if (has(b)) return true;
  }
  return hs.has_open && has(hs.open);
}

}  // namespace

Result<std::vector<wire::Labels>> DbImpl::SeriesLabels(const std::vector<Matcher>& matchers,
                                                       int64_t mint_ms, int64_t maxt_ms) const {
  std::vector<wire::Labels> out;
  std::vector<uint64_t> ask_store;  // may have data in range only in persisted chunks
  std::vector<uint64_t> ids;
  {
    std::lock_guard lock(mu_);
    if (closed_) return FailedPrecondition("the metric store is closed");
    VIGIL_ASSIGN_OR_RETURN(ids, index_.Match(matchers));
    // Nothing older than this is kept (retention drops whole older days).
    int64_t oldest = head_.MinTime();
    if (store_min_time_ != kNoTime && (oldest == kNoTime || store_min_time_ < oldest)) {
      oldest = store_min_time_;
    }
    for (uint64_t id : ids) {
      const HeadSeries* hs = head_.Find(id);
      // last_t is the newest sample accepted or persisted: before the range
      // (or before everything still kept) means no data in it.
      if (hs == nullptr || hs->last_t == kNoTime || hs->last_t < mint_ms) continue;
      if (oldest == kNoTime || hs->last_t < oldest) continue;
      if (hs->last_t <= maxt_ms) {
        out.push_back(*index_.LabelsOf(id));  // its newest sample is in the range
      } else if (HeadHasData(*hs, mint_ms, maxt_ms)) {
        out.push_back(*index_.LabelsOf(id));
      } else {
        ask_store.push_back(id);
      }
    }
  }
  if (!ask_store.empty()) {
    std::vector<uint64_t> found;
    VIGIL_RETURN_IF_ERROR(store_->SeriesWithChunks(ask_store, mint_ms, maxt_ms, &found));
    std::lock_guard lock(mu_);
    for (uint64_t id : found) out.push_back(*index_.LabelsOf(id));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<LatestPoint> DbImpl::Latest(int64_t since_ms, bool with_labels) const {
  std::vector<LatestPoint> out;
  {
    std::lock_guard lock(mu_);
    out.reserve(head_.series().size());
    for (const auto& [id, hs] : head_.series()) {
      // A series whose newest sample is a staleness marker has ended.
      if (!hs.has_last || hs.last.t_ms < since_ms || IsStaleNaN(hs.last.value)) continue;
      LatestPoint& p = out.emplace_back();
      p.series_id = id;
      p.sample = hs.last;
      if (with_labels) p.labels = *index_.LabelsOf(id);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const LatestPoint& a, const LatestPoint& b) { return a.series_id < b.series_id; });
  return out;
}

std::optional<wire::Labels> DbImpl::LabelsOf(uint64_t series_id) const {
  std::lock_guard lock(mu_);
  const wire::Labels* labels = index_.LabelsOf(series_id);
  if (labels == nullptr) return std::nullopt;
  return *labels;
}

std::vector<wire::MetricFamily> DbImpl::Families() const {
  std::lock_guard lock(mu_);
  std::vector<wire::MetricFamily> out;
  out.reserve(families_.size());
  for (const auto& [name, f] : families_) out.push_back(f);
  return out;
}

Status DbImpl::Sync() {
  std::lock_guard lock(mu_);
  if (closed_) return FailedPrecondition("the metric store is closed");
  return wal_->Sync().WithContext("metric WAL");
}

DbStats DbImpl::Stats() const {
  DbStats s;
  {
    std::lock_guard lock(mu_);
    s.series = index_.size();
    s.samples_appended = samples_appended_;
    s.samples_out_of_order = samples_out_of_order_;
    s.head_samples = head_.sample_count();
    s.persisted_chunks = persisted_chunks_;
    s.max_time_ms = max_time_ == kNoTime ? 0 : max_time_;
    int64_t min = head_.MinTime();
    if (store_min_time_ != kNoTime && (min == kNoTime || store_min_time_ < min)) {
      min = store_min_time_;
    }
    s.min_time_ms = min == kNoTime ? 0 : min;
  }
  auto bytes = disk_bytes_.Get();
  s.disk_bytes = bytes.ok() ? *bytes : 0;
  return s;
}

}  // namespace vigil::tsdb
