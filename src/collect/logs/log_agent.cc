#include "collect/logs/log_agent.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "collect/logs/file_watcher.h"
#include "core/log.h"
#include "core/thread_name.h"
#include "parse/logs/encoding.h"
#include "wire/frame.h"
#include "wire/log_batch.h"

namespace vigil::collect::logs {

// One followed path and its parsing state. Docker and CRI files interleave
// stdout and stderr: each gets its own multiline joiner and its own wire
// stream ("<source_id>#stdout"), whose offsets then rise on their own
// (docs/log-agent.md "Streams of one file").
struct LogAgent::Source {
  discover::LogSource spec;
  std::unique_ptr<FileTailer> tailer;
  std::unique_ptr<parse::logs::EncodingNormalizer> encoding;
  std::unique_ptr<parse::logs::EnvelopeParser> envelope;
  // By stream name ("" for plain); std::less<> finds a string_view without a copy.
  std::map<std::string, parse::logs::MultilineJoiner, std::less<>> joiners;
  std::unique_ptr<VolumeController> volume;

  // The source (file generation) the pipeline state belongs to.
  std::string sid;
  std::string path;
  SourceIdentity identity;
  uint64_t consumed_end = 0;  // the tailer has consumed the file up to here
  ResumeState consumed_resume = ResumeState::kLineStart;
  // Per wire stream id ("<sid>" or "<sid>#stdout"): the end offset the
  // server has acknowledged.
  std::map<std::string, uint64_t> acked_end;
  uint64_t sid_start = 0;
  uint64_t checkpointed = 0;  // offset of the last checkpoint committed for sid

  bool discovered = true;
  int64_t last_discovered_ms = 0;
  int64_t last_data_ms = 0;

  void ResetPipeline(const LogAgentOptions& o) {
    encoding = std::make_unique<parse::logs::EncodingNormalizer>();
    parse::logs::EnvelopeOptions eo = o.envelope;
    eo.format = spec.format == discover::LogFormat::kDockerJson
                    ? parse::logs::EnvelopeFormat::kDocker
                : spec.format == discover::LogFormat::kCri ? parse::logs::EnvelopeFormat::kCri
                                                           : parse::logs::EnvelopeFormat::kPlain;
    envelope = std::make_unique<parse::logs::EnvelopeParser>(eo);
    joiners.clear();
    acked_end.clear();
    checkpointed = 0;
  }

  std::string StreamId(std::string_view stream) const {
    return stream.empty() ? sid : sid + "#" + std::string(stream);
  }

  parse::logs::MultilineJoiner& Joiner(std::string_view stream,
                                       const parse::logs::MultilineOptions& o) {
    auto it = joiners.find(stream);
    if (it == joiners.end())
      it = joiners.emplace(std::string(stream), parse::logs::MultilineJoiner(o)).first;
    return it->second;
  }

  // The first offset a stream still holds back (a partial piece or a
  // record being joined): nothing from it on may be acknowledged yet.
  uint64_t HeldFrom(const std::string* stream) const {
    uint64_t held = consumed_end;
    if (auto p = envelope->PendingStartOffset()) held = std::min(held, *p);
    for (const auto& [name, j] : joiners) {
      if (stream != nullptr && name != *stream) continue;
      if (auto p = j.PendingStartOffset()) held = std::min(held, *p);
    }
    return held;
  }
};

struct LogAgent::Batch {
  wire::LogBatch wire;
  size_t bytes = 0;
  int64_t first_ms = 0;
  struct StreamRef {
    Source* source;
    std::string stream;  // stream name within the source
    uint64_t last_record_offset = 0;
    bool has_records = false;
    bool frozen = false;  // its source moved on to a new file: end_offset is final
  };
  std::vector<StreamRef> refs;  // parallel to wire.streams
  // Filled when the batch is sealed, applied once acknowledged.
  std::vector<SourceCheckpoint> commits;
  std::vector<Source*> commit_sources;  // parallel to commits
  std::vector<std::string> forgets;
  // Streams that report bytes lost unread (AddLoss), appended to
  // wire.streams when the batch is sealed, after the streams refs describe.
  std::vector<wire::LogStream> losses;
  bool sealed = false;

  bool empty() const { return wire.streams.empty() && losses.empty(); }

  // Bytes the tailer knows it lost (LostSource::lost_bytes) travel on a
  // stream of their own: id "<lost generation's source_id>#lost", the
  // source's labels, no records, and the lost range [offset, offset + bytes)
  // as its offsets.
  //
  // Not on the stream that continues the source (the lost generation's, or
  // the next one's): the server adds a stream's counters only when its end
  // offset moves past the one it committed for that source id, which is how
  // a retried batch's counters are not added twice, and those streams often
  // do not move in the batch that reports the loss (everything read before
  // it was acknowledged; the next generation has nothing yet). This stream
  // moves by the lost range exactly once: a retry of the batch, or the same
  // loss reported again after an agent restart, ends where the server has
  // committed and adds nothing, and a later loss of the same generation lies
  // past it. It shadows no line: no record is ever sent under a "#lost" id.
  // The labels are the file's: for a Docker or CRI file, without `stream`,
  // as bytes lost unread belong to no stream that can be named.
  void AddLoss(const Source& src, const LostSource& lost) {
    wire::LogStream s;
    s.source_id = lost.checkpoint.source_id() + "#lost";
    s.labels = src.spec.labels;
    s.start_offset = lost.checkpoint.offset;
    s.end_offset = lost.checkpoint.offset + lost.lost_bytes;
    s.counters.lost_bytes = lost.lost_bytes;
    losses.push_back(std::move(s));
  }

  // Runs once per record: matches by source and stream name rather than
  // building the stream id (a heap string) each time. Equivalent, because a
  // source's refs are frozen whenever its sid changes, so a live ref's id is
  // always src.StreamId(ref.stream).
  size_t StreamFor(Source& src, std::string_view stream) {
    for (size_t i = 0; i < refs.size(); ++i) {
      if (refs[i].source == &src && !refs[i].frozen && refs[i].stream == stream) return i;
    }
    wire::LogStream s;
    s.source_id = src.StreamId(stream);
    s.labels = src.spec.labels;
    if (!stream.empty()) {
      auto it =
          std::lower_bound(s.labels.begin(), s.labels.end(), std::string_view("stream"),
                           [](const wire::Label& l, std::string_view n) { return l.name < n; });
      if (it == s.labels.end() || it->name != "stream") {
        s.labels.insert(it, {"stream", std::string(stream)});
      }
    }
    auto acked = src.acked_end.find(s.source_id);
    s.start_offset = acked != src.acked_end.end() ? acked->second : src.sid_start;
    s.end_offset = s.start_offset;
    wire.streams.push_back(std::move(s));
    refs.push_back({&src, std::string(stream)});
    return refs.size() - 1;
  }

  // How far a stream of this batch may be acknowledged: up to what its
  // source still holds back, and past every record it carries.
  void SetEnd(size_t i) {
    StreamRef& ref = refs[i];
    wire::LogStream& ws = wire.streams[i];
    uint64_t end = ref.source->HeldFrom(&ref.stream);
    if (ref.has_records) end = std::max(end, ref.last_record_offset + 1);
    ws.end_offset = std::max(end, ws.start_offset);
  }

  void AddRecord(Source& src, std::string_view stream, wire::LogRecord r, int64_t now_ms) {
    size_t i = StreamFor(src, stream);  // the joiner has set r.level
    if (r.flags & wire::kLogFlagTruncated) ++wire.streams[i].counters.truncated_lines;
    if (src.volume->Admit(r.level, now_ms) != VolumeDecision::kKeep) return;
    if (first_ms == 0) first_ms = now_ms;
    bytes += r.line.size();
    refs[i].last_record_offset = r.offset;
    refs[i].has_records = true;
    wire.streams[i].records.push_back(std::move(r));
  }
};

LogAgent::LogAgent(LogAgentOptions options, Sender send)
    : options_(std::move(options)),
      env_(options_.env != nullptr ? options_.env : Env::Default()),
      send_(std::move(send)),
      backoff_(options_.backoff) {
  if (options_.tailer.env == nullptr) options_.tailer.env = env_;
  // Sequences keep rising across restarts (docs/wire.md).
  sequence_ = static_cast<uint64_t>(env_->NowMillis()) * 1000;
}

LogAgent::~LogAgent() { Stop(); }

Status LogAgent::Start() {
  VIGIL_ASSIGN_OR_RETURN(checkpoints_, OpenCheckpoints());
  if (checkpoints_->recovered_from_corruption()) {
    Log(LogLevel::kWarn,
        "log checkpoints were damaged and were reset; files are read again and the server "
        "drops what it already has");
  }
  VIGIL_ASSIGN_OR_RETURN(watcher_, FileWatcher::Create());
  WatchSpool();
  thread_ = std::thread([this] { Loop(); });
  NameThread(thread_, "vigil-logs");
  return Status::Ok();
}

void LogAgent::Stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  if (watcher_) watcher_->Wake();
  wait_cv_.notify_all();
  thread_.join();
}

LogAgentStats LogAgent::Stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

Result<size_t> LogAgent::RunOnce() {
  if (!checkpoints_) {
    VIGIL_ASSIGN_OR_RETURN(checkpoints_, OpenCheckpoints());
  }
  if (!watcher_) {
    VIGIL_ASSIGN_OR_RETURN(watcher_, FileWatcher::Create());
  }
  int64_t now = env_->MonotonicMillis();
  if (first_discovery_ || now - last_discovery_ms_ >= options_.discovery_interval_ms) {
    Discover(first_discovery_);
    first_discovery_ = false;
    last_discovery_ms_ = now;
  }
  size_t sent = 0;
  // A batch a failed send left behind goes first, as it was sealed.
  if (pending_) {
    size_t n = pending_->wire.RecordCount();
    VIGIL_RETURN_IF_ERROR(SendBatch(pending_.get(), /*retry_until_stopped=*/false));
    pending_.reset();
    sent += n;
  }
  bool more = true;
  while (more) {
    auto batch = std::make_unique<Batch>();
    more = ReadInto(batch.get(), nullptr);
    FlushIdle(batch.get(), /*all=*/false);
    if (batch->empty()) break;
    size_t n = batch->wire.RecordCount();
    Status st = SendBatch(batch.get(), /*retry_until_stopped=*/false);
    if (!st.ok() && st.code() != StatusCode::kInvalidArgument) {
      pending_ = std::move(batch);
      return st;
    }
    sent += n;
  }
  VIGIL_RETURN_IF_ERROR(checkpoints_->Flush());
  return sent;
}

Result<std::unique_ptr<CheckpointStore>> LogAgent::OpenCheckpoints() const {
  CheckpointStoreOptions o;
  o.ack_persist_interval_ms = options_.checkpoint_persist_interval_ms;
  return CheckpointStore::Open(env_, options_.state_dir, o);
}

void LogAgent::Loop() {
  Batch batch;
  bool more_to_read = true;
  while (!stop_) {
    int64_t now = env_->MonotonicMillis();
    FileChanges changes = watcher_->TakeChanges();
    // A full pass now and then catches what no event announced (a file
    // system without inotify events for it, a read that failed).
    bool full = more_to_read || now - last_full_pass_ms_ >= options_.full_pass_interval_ms;
    if (DiscoveryDue(now, changes)) {
      // The batch points at sources that discovery may close: send it first.
      if (!batch.empty()) {
        (void)SendBatch(&batch, /*retry_until_stopped=*/true);
        batch = Batch();
        if (stop_) break;
      }
      Discover(first_discovery_);
      first_discovery_ = false;
      last_discovery_ms_ = now;
      full = true;  // what it found is read at once
    }
    if (full) last_full_pass_ms_ = now;
    bool more = ReadInto(&batch, full ? nullptr : &changes);
    more_to_read = more;
    FlushIdle(&batch, /*all=*/false);
    now = env_->MonotonicMillis();
    int64_t until_due =
        batch.empty() ? INT64_MAX : batch.first_ms + options_.batch_max_delay_ms - now;
    if (!batch.empty() && (batch.bytes >= options_.batch_max_bytes || until_due <= 0)) {
      (void)SendBatch(&batch, /*retry_until_stopped=*/true);
      batch = Batch();
      continue;
    }
    if (!more) {
      Status st = checkpoints_->PersistIfDue();
      if (!st.ok()) Logf(LogLevel::kWarn, "log checkpoint: %s", st.ToString().c_str());
      int64_t until_discovery = last_discovery_ms_ + options_.discovery_interval_ms - now;
      if (batch.empty()) {
        watcher_->Wait(std::clamp<int64_t>(until_discovery, 1, 250));
      } else {
        // Lines of other files written meanwhile join this batch: one send,
        // one store sync and one checkpoint update for all of them.
        watcher_->Sleep(std::clamp<int64_t>(std::min(until_discovery, until_due), 1, 250));
      }
    }
  }
  // One last attempt for what was read; unsent lines are read again next time.
  if (!batch.empty()) (void)SendBatch(&batch, /*retry_until_stopped=*/false);
  Status st = checkpoints_->Flush();
  if (!st.ok()) Logf(LogLevel::kWarn, "log checkpoint: %s", st.ToString().c_str());
}

bool LogAgent::DiscoveryDue(int64_t now, const FileChanges& changes) const {
  if (first_discovery_ || now - last_discovery_ms_ >= options_.discovery_interval_ms) return true;
  // A new file in `vigil run`'s spool is a job that just started: its lines
  // (a crash at start-up among them) are followed at once, not at the next
  // round. Not with a polled spool, which would look new at every pass.
  const std::string& spool = options_.discovery.run_spool_dir;
  bool news =
      retry_discovery_ || (!spool.empty() && !watcher_->polling() && changes.dirs.count(spool));
  return news && now - last_discovery_ms_ >= kMinDiscoveryGapMs;
}

void LogAgent::WatchSpool() {
  const std::string& spool = options_.discovery.run_spool_dir;
  if (spool.empty() || options_.discover_override) return;
  if (!env_->CreateDirs(spool).ok()) return;
  // A name no file has: every event in the directory marks the directory.
  (void)watcher_->Watch(JoinPath(spool, "*"));
}

bool LogAgent::LabelRun(discover::LogSource* spec) const {
  if (!options_.run_of || !discover::HasRunAnchor(*spec)) return true;  // no run to look for
  auto at = std::lower_bound(spec->labels.begin(), spec->labels.end(), std::string_view("run"),
                             [](const wire::Label& l, std::string_view n) { return l.name < n; });
  if (at != spec->labels.end() && at->name == "run") return true;  // named by its finder
  std::string run = options_.run_of(*spec);
  if (run.empty()) return false;
  spec->labels.insert(at, {"run", std::move(run)});
  return true;
}

std::set<std::string> LogAgent::LabelRuns(std::vector<discover::LogSource>* found) const {
  std::vector<discover::LogSource*> unknown;
  for (discover::LogSource& spec : *found) {
    bool followed = std::any_of(sources_.begin(), sources_.end(),
                                [&](const auto& s) { return s->spec.path == spec.path; });
    if (!followed && !LabelRun(&spec)) unknown.push_back(&spec);
  }
  // A new job's file is often found before the tracker has seen the job:
  // one tracker pass, then ask again (a stream's labels never change once
  // it is followed).
  std::set<std::string> still_unknown;
  if (unknown.empty()) return still_unknown;
  if (options_.refresh_runs) options_.refresh_runs();
  for (discover::LogSource* spec : unknown) {
    if (!LabelRun(spec)) still_unknown.insert(spec->path);
  }
  return still_unknown;
}

bool LogAgent::WaitForRun(const discover::LogSource& spec, const std::set<std::string>& unknown,
                          int64_t now) {
  const std::string& path = spec.path;
  // A spool file whose sidecar (with the job's pid) is not written yet.
  const std::string& spool = options_.discovery.run_spool_dir;
  const bool unanchored = !spool.empty() && spec.writer_pid == 0 && path.size() > spool.size() &&
                          path.compare(0, spool.size(), spool) == 0;
  if (!unknown.count(path) && !unanchored) return false;
  auto [it, first_seen] = run_wait_since_.emplace(path, now);
  (void)first_seen;
  if (now - it->second >= kRunWaitMs) return false;  // followed without the label
  retry_discovery_ = true;
  return true;
}

void LogAgent::Discover(bool first) {
  std::vector<discover::LogSource> found;
  if (options_.discover_override) {
    found = options_.discover_override();
  } else {
    if (!discoverer_) {
      discoverer_ = std::make_unique<discover::LogSourceDiscoverer>(options_.discovery);
    }
    auto r = discoverer_->Discover();
    if (!r.ok()) {
      Logf(LogLevel::kWarn, "log discovery failed: %s", r.status().ToString().c_str());
      return;
    }
    found = std::move(r).value();
  }
  if (options_.extra_sources) {
    for (discover::LogSource& extra : options_.extra_sources()) {
      bool known = std::any_of(found.begin(), found.end(),
                               [&](const discover::LogSource& f) { return f.path == extra.path; });
      if (!known) found.push_back(std::move(extra));
    }
  }
  int64_t now = env_->MonotonicMillis();
  for (auto& s : sources_) s->discovered = false;
  const std::set<std::string> unknown_run = LabelRuns(&found);
  retry_discovery_ = false;
  std::erase_if(run_wait_since_, [&](const auto& e) {
    return std::none_of(found.begin(), found.end(),
                        [&](const discover::LogSource& f) { return f.path == e.first; });
  });
  for (auto& spec : found) {
    auto it = std::find_if(sources_.begin(), sources_.end(),
                           [&](const auto& s) { return s->spec.path == spec.path; });
    if (it != sources_.end()) {
      (*it)->discovered = true;
      (*it)->last_discovered_ms = now;
      continue;
    }
    // Found before its job's run is known (discovery right after a new
    // spool file): wait for the tracker a little (never longer than a
    // discovery interval), so that its lines carry their run's label. Its
    // lines wait in the file, from its start.
    if (!first && WaitForRun(spec, unknown_run, now)) continue;
    const bool at_start = first;
    TailerOptions to = options_.tailer;
    std::vector<SourceCheckpoint> cps = checkpoints_->ForPath(spec.path);
    if (cps.empty() && at_start) {
      // Already there when we started and never read: old news if large.
      struct stat st {};
      to.start_at_end = ::stat(spec.path.c_str(), &st) == 0 &&
                        static_cast<uint64_t>(st.st_size) > options_.read_existing_max_bytes;
    }
    // Appeared while we run: what its writer rotated away before we looked
    // comes first. (At our start, older rotations are not news.)
    if (cps.empty() && !at_start) to.rotated_since_ms = spec.started_ms;
    auto tailer = FileTailer::Open(spec.path, to, std::move(cps));
    if (!tailer.ok()) {
      Logf(LogLevel::kDebug, "not following %s: %s", spec.path.c_str(),
           tailer.status().ToString().c_str());
      continue;
    }
    auto src = std::make_unique<Source>();
    src->spec = std::move(spec);
    src->tailer = std::move(tailer).value();
    src->volume = std::make_unique<VolumeController>(options_.volume);
    src->ResetPipeline(options_);
    src->last_discovered_ms = now;
    src->last_data_ms = now;
    (void)watcher_->Watch(src->spec.path);
    sources_.push_back(std::move(src));
  }
  // Forget what is gone: read to its end, nothing held, quiet for a while.
  std::erase_if(sources_, [&](const std::unique_ptr<Source>& s) {
    bool idle = now - s->last_data_ms >= options_.close_after_ms;
    bool done = !s->tailer->HasOpenSources() || (idle && s->HeldFrom(nullptr) == s->consumed_end);
    if (s->discovered || !done) return false;
    watcher_->Unwatch(s->spec.path);
    return true;
  });
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.sources = sources_.size();
}

// Reads from every source until the batch is full or nothing is new. True
// when a source may have more right now.
bool LogAgent::ReadInto(Batch* batch, const FileChanges* only) {
  bool more = false;
  for (auto& src : sources_) {
    if (only != nullptr && !only->MayHaveChanged(src->spec.path)) continue;
    while (batch->bytes < options_.batch_max_bytes && !stop_) {
      auto chunk = src->tailer->ReadSome(options_.read_chunk_bytes);
      if (!chunk.ok()) {
        Logf(LogLevel::kDebug, "reading %s: %s", src->spec.path.c_str(),
             chunk.status().ToString().c_str());
        break;
      }
      if (chunk->empty()) break;
      bool full_read = chunk->end_offset - chunk->start_offset >= options_.read_chunk_bytes / 2;
      ProcessChunk(*src, std::move(chunk).value(), batch);
      if (!full_read) break;
    }
    if (batch->bytes >= options_.batch_max_bytes) {
      more = true;
      break;
    }
  }
  return more;
}

void LogAgent::ProcessChunk(Source& src, TailChunk chunk, Batch* batch) {
  int64_t now_ms = env_->MonotonicMillis();
  if (batch->first_ms == 0) batch->first_ms = now_ms;
  for (const LostSource& lost : chunk.lost) {
    Logf(LogLevel::kWarn, "log lines lost: %s (%s)", lost.checkpoint.path.c_str(),
         lost.reason.c_str());
    batch->forgets.push_back(lost.checkpoint.source_id());
    if (lost.lost_bytes > 0) batch->AddLoss(src, lost);
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.lost_sources;
  }
  if (chunk.source_id.empty()) return;
  if (chunk.source_id != src.sid) {
    // A new file or generation: what the old one held was flushed when it
    // finished; its streams in this batch keep their final ends, and the
    // pipeline starts clean so no state crosses sources.
    for (size_t i = 0; i < batch->refs.size(); ++i) {
      if (batch->refs[i].source != &src || batch->refs[i].frozen) continue;
      batch->SetEnd(i);
      batch->refs[i].frozen = true;
    }
    src.ResetPipeline(options_);
    src.sid = chunk.source_id;
    src.sid_start = chunk.start_offset;
  }
  if (chunk.first_of_source) {
    // Pin the fingerprint before shipping (tailer.h "Delivery contract").
    Status st = checkpoints_->Commit(chunk.StartCheckpoint());
    if (!st.ok()) Logf(LogLevel::kWarn, "log checkpoint: %s", st.ToString().c_str());
  }
  src.path = chunk.path;
  src.identity = chunk.identity;
  src.consumed_end = chunk.end_offset;
  src.consumed_resume = chunk.end_resume;
  if (!chunk.lines.empty()) src.last_data_ms = now_ms;

  uint64_t bytes = 0;
  std::vector<wire::LogRecord> records;
  // The joiner of the previous line's stream: nearly every line of a chunk
  // goes to the same one, so the map is searched only when the stream
  // changes (joiners stay put in the map: it is not reset in this loop).
  parse::logs::MultilineJoiner* joiner = nullptr;
  std::string_view joiner_stream;
  for (RawLine& raw : chunk.lines) {
    bytes += raw.bytes.size() + 1;
    const parse::logs::EnvelopeRecord* er = src.envelope->Push(raw.bytes, raw.offset);
    if (er == nullptr) continue;
    uint8_t flags = er->flags | raw.flags;
    std::string_view text = src.encoding->Normalize(er->text, &flags);
    std::string_view stream = er->stream;
    int64_t t = er->time_ns != 0 ? er->time_ns : raw.read_time_ns;
    if (joiner == nullptr || stream != joiner_stream) {
      joiner = &src.Joiner(stream, options_.multiline);
      joiner_stream = stream;
    }
    records.clear();
    // `text` is most often raw.bytes itself: the record may take that buffer.
    joiner->Push(text, er->offset, t, flags, now_ms, &records, &raw.bytes);
    for (auto& r : records) batch->AddRecord(src, stream, std::move(r), now_ms);
  }
  if (chunk.finished()) {
    FlushIdle(batch, /*all=*/true);
    batch->forgets.insert(batch->forgets.end(), chunk.finished_sources.begin(),
                          chunk.finished_sources.end());
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.lines_read += chunk.lines.size();
  stats_.bytes_read += bytes;
}

// Emits records held past their timeout (or everything, for a finished
// source).
void LogAgent::FlushIdle(Batch* batch, bool all) {
  int64_t now_ms = env_->MonotonicMillis();
  std::vector<wire::LogRecord> records;
  for (auto& src : sources_) {
    if (src->sid.empty()) continue;
    bool flush_envelope = all || now_ms - src->last_data_ms >= options_.tailer.partial_flush_ms;
    if (flush_envelope) {
      while (const parse::logs::EnvelopeRecord* er = src->envelope->Flush()) {
        uint8_t flags = er->flags;
        std::string_view text = src->encoding->Normalize(er->text, &flags);
        src->Joiner(er->stream, options_.multiline)
            .Push(text, er->offset, er->time_ns != 0 ? er->time_ns : env_->NowMillis() * 1'000'000,
                  flags, now_ms, &records);
        // Push may emit an earlier record; the flushed one stays held until
        // the joiner's own flush below.
        for (auto& r : records) batch->AddRecord(*src, er->stream, std::move(r), now_ms);
        records.clear();
      }
    }
    for (auto& [stream, joiner] : src->joiners) {
      if (!joiner.holding()) continue;
      if (all) {
        joiner.FlushAll(&records);
      } else {
        joiner.Flush(now_ms, &records);
      }
      for (auto& r : records) batch->AddRecord(*src, stream, std::move(r), now_ms);
      records.clear();
    }
  }
}

Status LogAgent::SendBatch(Batch* batch, bool retry_until_stopped) {
  if (!batch->sealed) {
    // Seal: every source read in this batch reports how far it got (streams
    // for sources that produced no record still advance their offsets), its
    // volume counters, and the checkpoint to commit once acknowledged.
    std::vector<Source*> seen;
    for (const auto& ref : batch->refs) {
      if (std::find(seen.begin(), seen.end(), ref.source) == seen.end()) {
        seen.push_back(ref.source);
      }
    }
    for (auto& src : sources_) {
      if (src->sid.empty() || std::find(seen.begin(), seen.end(), src.get()) != seen.end()) {
        continue;
      }
      if (src->HeldFrom(nullptr) > std::max(src->checkpointed, src->sid_start)) {
        batch->StreamFor(*src, "");
        seen.push_back(src.get());
      }
    }
    for (size_t i = 0; i < batch->refs.size(); ++i) {
      if (!batch->refs[i].frozen) batch->SetEnd(i);
    }
    for (Source* src : seen) {
      size_t first = 0;
      while (batch->refs[first].source != src || batch->refs[first].frozen) {
        if (++first == batch->refs.size()) break;
      }
      if (first == batch->refs.size()) continue;  // only streams of a finished file
      wire::LogSourceCounters c = src->volume->TakeCounters();
      batch->wire.streams[first].counters.sampled_lines += c.sampled_lines;
      batch->wire.streams[first].counters.filtered_lines += c.filtered_lines;
      SourceCheckpoint cp;
      cp.path = src->path;
      cp.identity = src->identity;
      cp.offset = src->HeldFrom(nullptr);
      cp.resume = cp.offset == src->consumed_end ? src->consumed_resume : ResumeState::kLineStart;
      batch->commits.push_back(cp);
      batch->commit_sources.push_back(src);
    }
    for (wire::LogStream& loss : batch->losses) batch->wire.streams.push_back(std::move(loss));
    batch->losses.clear();
    batch->wire.source = options_.node;
    batch->sealed = true;
  }
  batch->wire.sequence = ++sequence_;
  while (true) {
    Status st = send_(&batch->wire);
    if (st.ok()) {
      backoff_.Reset();
      AfterAck(batch);
      return st;
    }
    if (st.code() == StatusCode::kInvalidArgument) {
      // Refused for good: sending it again would stop this agent forever.
      Logf(LogLevel::kError, "the server refused a log batch of %zu lines: %s",
           batch->wire.RecordCount(), st.ToString().c_str());
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        ++stats_.batches_refused;
      }
      AfterAck(batch);
      return st;
    }
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.send_failures;
      stats_.server_reachable = false;
    }
    if (backoff_.consecutive_failures() == 0) {
      Logf(LogLevel::kWarn, "cannot deliver logs (%s); retrying, reading paused",
           st.ToString().c_str());
    }
    if (!retry_until_stopped || stop_) return st;
    std::unique_lock<std::mutex> lock(wait_mu_);
    wait_cv_.wait_for(lock, std::chrono::milliseconds(backoff_.NextDelayMs()),
                      [this] { return stop_.load(); });
    if (stop_) return st;
  }
}

void LogAgent::AfterAck(Batch* batch) {
  for (size_t i = 0; i < batch->refs.size(); ++i) {
    if (batch->refs[i].frozen) continue;  // an old file's streams: finished
    batch->refs[i].source->acked_end[batch->wire.streams[i].source_id] =
        batch->wire.streams[i].end_offset;
  }
  for (size_t i = 0; i < batch->commits.size(); ++i) {
    batch->commit_sources[i]->checkpointed = batch->commits[i].offset;
  }
  Status st = checkpoints_->CommitMany(batch->commits, Persist::kWhenDue);
  if (st.ok() && !batch->forgets.empty()) st = checkpoints_->ForgetMany(batch->forgets);
  if (!st.ok()) Logf(LogLevel::kWarn, "log checkpoint: %s", st.ToString().c_str());
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.server_reachable = true;
  ++stats_.batches_sent;
  stats_.records_sent += batch->wire.RecordCount();
  for (const auto& s : batch->wire.streams) {
    stats_.sampled_lines += s.counters.sampled_lines;
    stats_.filtered_lines += s.counters.filtered_lines;
    stats_.truncated_lines += s.counters.truncated_lines;
    stats_.lost_bytes += s.counters.lost_bytes;
  }
}

LogAgent::Sender FrameSender(std::function<Status(std::string_view frame)> send_frame,
                             bool compress) {
  return [send_frame = std::move(send_frame), compress](wire::LogBatch* batch) {
    return send_frame(
        wire::EncodeFrame(wire::FrameKind::kLogs, wire::EncodeLogBatch(*batch), compress));
  };
}

}  // namespace vigil::collect::logs
