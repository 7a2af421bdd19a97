#include "ship/outbox.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "core/coding.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/thread_name.h"
#include "core/wal_segments.h"
#include "wire/frame.h"

namespace vigil::ship {
namespace {

// Frame header and CRC around the largest payload a server takes.
static_assert(kMaxOutboxFrameBytes > wire::kMaxPayloadBytes + 64);

constexpr size_t kWalHeader = 8;  // fixed32 body length + fixed32 crc32c (wal_segments.h)
constexpr size_t kTimeBytes = 8;  // fixed64 enqueue time, the body's start
constexpr uint32_t kMaxBodyBytes = kMaxOutboxFrameBytes + kTimeBytes;
// Segments hold at most segment_bytes or one larger record, but the option
// may have shrunk since a segment was written: replay reads whatever it meets
// (as the log store does) rather than cutting a valid segment short.
constexpr size_t kMaxSegmentReadBytes = size_t{8} << 30;
// The sender's in-memory segment copy drops its consumed start past this.
constexpr size_t kCompactBytes = 64u << 10;

constexpr char kAckName[] = "ACK";
// Names the segment being written. Rewriting it atomically is how the
// directory gets fsync'ed (Env has no call of its own for that), so that a
// new segment's name is as durable as its first synced record.
constexpr char kSegmentName[] = "SEGMENT";
constexpr std::string_view kAckMagic = "VOA1";
constexpr size_t kAckBytes = 4 + 8 + 8 + 4;

unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

// A frame's place: the segment and the record's index in it.
struct Position {
  uint64_t segment = 0;
  uint64_t index = 0;
  bool operator==(const Position&) const = default;
  bool operator<(const Position& o) const {
    return segment != o.segment ? segment < o.segment : index < o.index;
  }
};

std::string EncodeAck(Position p) {
  std::string out(kAckMagic);
  PutFixed64(&out, p.segment);
  PutFixed64(&out, p.index);
  PutFixed32(&out, Crc32c(out));
  return out;
}

std::optional<Position> DecodeAck(std::string_view data) {
  if (data.size() != kAckBytes || data.substr(0, 4) != kAckMagic) return std::nullopt;
  if (Crc32c(data.substr(0, kAckBytes - 4)) != DecodeFixed32(data.data() + kAckBytes - 4)) {
    return std::nullopt;
  }
  return Position{DecodeFixed64(data.data() + 4), DecodeFixed64(data.data() + 12)};
}

struct Record {
  int64_t enqueue_ms = 0;
  std::string_view frame;
  size_t size = 0;  // framed, on disk
};

// The record at data[pos], or false when it is torn or garbled.
bool ParseRecord(std::string_view data, size_t pos, Record* r) {
  if (pos > data.size() || data.size() - pos < kWalHeader) return false;
  uint32_t len = DecodeFixed32(data.data() + pos);
  uint32_t crc = DecodeFixed32(data.data() + pos + 4);
  if (len <= kTimeBytes || len > kMaxBodyBytes || len > data.size() - pos - kWalHeader)
    return false;
  std::string_view body = data.substr(pos + kWalHeader, len);
  if (Crc32c(body) != crc) return false;
  r->enqueue_ms = static_cast<int64_t>(DecodeFixed64(body.data()));
  r->frame = body.substr(kTimeBytes);
  r->size = kWalHeader + len;
  return true;
}

// The index entry of one segment file.
struct Segment {
  uint64_t number = 0;
  uint64_t records = 0;   // written to it
  uint64_t frames = 0;    // of those, still queued (the in-flight one included)
  uint64_t bytes = 0;     // their frame bytes
  int64_t oldest_ms = 0;  // enqueue time of the first queued one
  int64_t newest_ms = 0;
};

// The sender's copy of the head segment (docs/outbox.md "Memory").
struct Cursor {
  uint64_t segment = 0;  // 0: none loaded
  std::string data;      // framed records; `pos` is that of record `index`
  size_t pos = 0;
  uint64_t index = 0;
};

struct InFlight {
  bool active = false;
  bool evicted = false;  // its segment was dropped while Send ran
  uint64_t segment = 0;
  uint64_t index = 0;
  uint64_t bytes = 0;
  size_t record_size = 0;
};

// Drops, refusals, rejections and failed sends are logged when a run of them
// starts and summed up when it ends, so a long outage is a few lines.
struct Episode {
  bool active = false;
  uint64_t frames = 0;
  uint64_t bytes = 0;
};

struct Attempt {
  Status status;
  bool attempted = false;  // false: nothing was queued
  bool sent = false;
};

}  // namespace

struct Outbox::Impl {
  Impl(OutboxOptions o, Transport* t)
      : options(std::move(o)),
        env(options.env != nullptr ? options.env : Env::Default()),
        transport(t),
        ack_path(JoinPath(options.dir, kAckName)) {}

  Status Init();
  Status Enqueue(std::string_view frame);
  void Start();
  void Stop();
  Attempt SendOneHoldingSendMu();
  size_t Drain();
  OutboxStats Stats() const;

  // Everything below is called with mu held, except where named otherwise.
  Status AppendLocked(std::string_view frame, int64_t now_ms);
  Status RotateLocked();
  Status SyncLocked();
  void MaybeSyncLocked(int64_t mono_ms);
  void EvictExpiredLocked(int64_t now_ms);
  void DropFrontLocked(const char* why);
  void RetireConsumedHeadLocked();
  void ConsumeHeadLocked(uint64_t frame_bytes, size_t record_size);
  void CountDropLocked(uint64_t frames, uint64_t bytes, const char* why);
  void RemoveSegmentFileLocked(uint64_t segment);
  // Finds the next frame to send and copies it to *frame (left empty when
  // none is queued). May release the lock while it reads a closed segment.
  Status PickLocked(std::unique_lock<std::mutex>& lock, std::string* frame);
  Status LoadCursorLocked(std::unique_lock<std::mutex>& lock);
  void ResolveLocked(const Status& st);
  void EndEpisodesLocked();
  Position AckPositionLocked() const { return {segments.front().number, head_index}; }
  // Milliseconds (Env monotonic clock) until a sync or an ACK write is due.
  std::optional<int64_t> HousekeepingDueInLocked();

  // Called with send_mu held and mu not held.
  void WriteAckHoldingSendMu(bool force);
  void HousekeepingHoldingSendMu();
  void Loop();

  const OutboxOptions options;
  Env* const env;
  Transport* const transport;
  const std::string ack_path;

  std::mutex send_mu;     // one sender at a time; ACK file writes
  mutable std::mutex mu;  // everything below
  std::condition_variable cv;

  std::unique_ptr<WalWriter> writer;
  bool writer_broken = false;    // the last write failed: start a fresh segment
  bool name_synced = false;      // the directory entry of the segment being written is durable
  std::deque<Segment> segments;  // oldest first; back() is being written
  uint64_t head_index = 0;       // record index in front() of the next frame to send
  uint64_t queued_frames = 0;
  uint64_t queued_bytes = 0;
  Cursor cursor;
  InFlight inflight;
  int64_t dirty_since_ms = -1;  // monotonic time of the oldest unsynced write; -1: none
  Position ack_written;         // what the ACK file says
  int64_t ack_written_ms = 0;   // monotonic time it was last written (or tried)
  OutboxStats stats;            // counters; queued_* are filled in by Stats()
  Episode dropped_ep, refused_ep, rejected_ep;
  Episode outage_ep;              // frames: failed attempts; bytes != 0: announced
  int64_t outage_logged_ms = -1;  // monotonic
  std::string record;             // reused encode buffer
  bool started = false;
  bool stopping = false;
  bool closed = false;
  std::thread thread;
};

Status Outbox::Impl::Init() {
  std::lock_guard lock(mu);
  const std::string& dir = options.dir;
  VIGIL_RETURN_IF_ERROR(env->CreateDirs(dir).WithContext("outbox " + options.name));

  Position acked;
  if (env->FileExists(ack_path)) {
    VIGIL_ASSIGN_OR_RETURN(std::string data, env->ReadFile(ack_path, 4096));
    if (auto p = DecodeAck(data)) {
      acked = *p;
    } else {
      Logf(LogLevel::kWarn,
           "outbox %s: %s is not a valid ACK file; every queued frame will be sent again (the "
           "server deduplicates)",
           options.name.c_str(), ack_path.c_str());
    }
  }

  VIGIL_ASSIGN_OR_RETURN(std::vector<uint64_t> listed, ListWalSegments(env, dir));
  WalReplayOptions ro;
  ro.max_body_bytes = kMaxBodyBytes;
  ro.max_segment_bytes = kMaxSegmentReadBytes;
  ro.body_ok = [](std::string_view body) { return body.size() > kTimeBytes; };
  std::deque<Segment> found;
  VIGIL_ASSIGN_OR_RETURN(WalReplayStats replay,
                         ReplayWal(env, dir, ro, [&](uint64_t seg, std::string_view body) {
                           if (found.empty() || found.back().number != seg)
                             found.push_back(Segment{.number = seg});
                           Segment& s = found.back();
                           Position at{seg, s.records++};
                           if (at < acked) return Status::Ok();  // acknowledged before the restart
                           auto t = static_cast<int64_t>(DecodeFixed64(body.data()));
                           if (s.frames == 0) s.oldest_ms = t;
                           s.newest_ms = t;
                           ++s.frames;
                           s.bytes += body.size() - kTimeBytes;
                           return Status::Ok();
                         }));
  if (replay.truncated_bytes > 0) {
    Logf(LogLevel::kWarn, "outbox %s: cut %llu bytes of torn tail in %llu segment(s) of %s",
         options.name.c_str(), U(replay.truncated_bytes), U(replay.torn_segments), dir.c_str());
  }

  // Only acknowledged records precede `acked`, so the segments still queued
  // are a suffix and the first may be partly acknowledged.
  for (const Segment& s : found) {
    if (s.frames == 0) continue;
    if (segments.empty() && s.number == acked.segment) head_index = acked.index;
    segments.push_back(s);
    queued_frames += s.frames;
    queued_bytes += s.bytes;
  }
  uint64_t max_segment = acked.segment;
  for (uint64_t n : listed) {
    max_segment = std::max(max_segment, n);
    bool queued = std::any_of(segments.begin(), segments.end(),
                              [n](const Segment& s) { return s.number == n; });
    if (!queued) RemoveSegmentFileLocked(n);  // acknowledged, empty, or cut to nothing
  }

  // Never append to a replayed segment (its tail may just have been cut),
  // and never reuse a number the ACK file may name.
  uint64_t next = max_segment + 1;
  VIGIL_ASSIGN_OR_RETURN(writer, WalWriter::Open(env, dir, next, kMaxBodyBytes));
  segments.push_back(Segment{.number = next});
  ack_written = acked;
  ack_written_ms = env->MonotonicMillis();
  stats.replayed_frames = queued_frames;
  if (queued_frames > 0) {
    Logf(LogLevel::kInfo, "outbox %s: %llu frame(s) (%s) from an earlier run are queued in %s",
         options.name.c_str(), U(queued_frames), HumanBytes(queued_bytes).c_str(), dir.c_str());
  }
  return Status::Ok();
}

Status Outbox::Impl::Enqueue(std::string_view frame) {
  if (frame.empty()) return InvalidArgument("outbox " + options.name + ": empty frame");
  if (frame.size() > kMaxOutboxFrameBytes || frame.size() > options.max_bytes) {
    return InvalidArgument("outbox " + options.name + ": a frame of " + HumanBytes(frame.size()) +
                           " is larger than the outbox takes (" +
                           HumanBytes(std::min<uint64_t>(kMaxOutboxFrameBytes, options.max_bytes)) +
                           ")");
  }
  std::lock_guard lock(mu);
  if (stopping) return FailedPrecondition("outbox " + options.name + " is stopped");
  int64_t now = env->NowMillis();
  EvictExpiredLocked(now);
  if (queued_bytes + frame.size() > options.max_bytes) {
    if (options.full_policy == OutboxFullPolicy::kRefuseNew) {
      ++stats.refused_frames;
      if (!refused_ep.active) {
        Logf(LogLevel::kWarn,
             "outbox %s: full (%llu frames, %s of %s); refusing new frames until the server "
             "takes some",
             options.name.c_str(), U(queued_frames), HumanBytes(queued_bytes).c_str(),
             HumanBytes(options.max_bytes).c_str());
      }
      refused_ep.active = true;
      ++refused_ep.frames;
      return Unavailable("outbox " + options.name + " is full (" + HumanBytes(queued_bytes) +
                         " queued); the server has not taken frames, retry later");
    }
    while (queued_frames > 0 && queued_bytes + frame.size() > options.max_bytes) {
      DropFrontLocked("the queue is over its budget");
    }
  }
  VIGIL_RETURN_IF_ERROR(AppendLocked(frame, now));
  if (refused_ep.active) {
    Logf(LogLevel::kInfo, "outbox %s: accepting frames again after refusing %llu",
         options.name.c_str(), U(refused_ep.frames));
    refused_ep = {};
  }
  cv.notify_one();
  return Status::Ok();
}

Status Outbox::Impl::AppendLocked(std::string_view frame, int64_t now_ms) {
  size_t record_size = kWalHeader + kTimeBytes + frame.size();
  // A frame larger than a segment gets one of its own.
  bool full =
      writer->segment_bytes() > 0 && writer->segment_bytes() + record_size > options.segment_bytes;
  if (writer_broken || full) VIGIL_RETURN_IF_ERROR(RotateLocked());

  record.clear();
  PutFixed32(&record, static_cast<uint32_t>(kTimeBytes + frame.size()));
  PutFixed32(&record, 0);
  PutFixed64(&record, static_cast<uint64_t>(now_ms));
  record.append(frame);
  uint32_t crc = Crc32c(std::string_view(record).substr(kWalHeader));
  std::memcpy(record.data() + 4, &crc, 4);
  Status st = writer->Write(record);
  if (!st.ok()) {
    writer_broken = true;  // it may have left a partial record behind
    return st.WithContext("outbox " + options.name);
  }

  Segment& s = segments.back();
  ++s.records;
  if (s.frames == 0) s.oldest_ms = now_ms;
  s.newest_ms = now_ms;
  ++s.frames;
  s.bytes += frame.size();
  ++queued_frames;
  queued_bytes += frame.size();
  ++stats.enqueued_frames;
  if (cursor.segment == s.number) cursor.data.append(record);  // the sender reads it from here
  if (record.capacity() > 2 * options.segment_bytes) std::string().swap(record);

  int64_t mono = env->MonotonicMillis();
  if (!options.sync_each_enqueue) {
    if (dirty_since_ms < 0) dirty_since_ms = mono;
    MaybeSyncLocked(mono);
    return Status::Ok();
  }
  st = SyncLocked();
  if (!st.ok()) {
    // Queued, but perhaps not durable: the caller may enqueue it again (the
    // server deduplicates); later records go to a fresh segment.
    writer_broken = true;
    return st.WithContext("outbox " + options.name + ": syncing");
  }
  dirty_since_ms = -1;
  return Status::Ok();
}

Status Outbox::Impl::RotateLocked() {
  uint64_t old = writer->segment();
  Status st = writer->Rotate();  // syncs the old segment
  if (writer->segment() == old) {
    writer_broken = true;
    return st.WithContext("outbox " + options.name + ": starting a new segment");
  }
  if (!st.ok()) {
    Logf(LogLevel::kWarn, "outbox %s: closing segment %llu: %s", options.name.c_str(), U(old),
         st.ToString().c_str());
  }
  writer_broken = false;
  name_synced = false;
  dirty_since_ms = -1;
  segments.push_back(Segment{.number = writer->segment()});
  RetireConsumedHeadLocked();
  return Status::Ok();
}

Status Outbox::Impl::SyncLocked() {
  VIGIL_RETURN_IF_ERROR(writer->Sync());
  if (name_synced) return Status::Ok();
  VIGIL_RETURN_IF_ERROR(env->WriteFileAtomic(JoinPath(options.dir, kSegmentName),
                                             std::to_string(writer->segment()) + "\n"));
  name_synced = true;
  return Status::Ok();
}

void Outbox::Impl::MaybeSyncLocked(int64_t mono_ms) {
  if (dirty_since_ms < 0) return;
  // Only the segment being written has unsynced records. Once the server has
  // taken them all they need not be durable here: skipping the sync is what
  // keeps a steady stream with the server up free of fsyncs.
  if (segments.back().frames == 0) {
    dirty_since_ms = -1;
    return;
  }
  if (mono_ms - dirty_since_ms < options.sync_interval_ms) return;
  dirty_since_ms = -1;
  Status st = SyncLocked();
  if (!st.ok()) {
    writer_broken = true;
    Logf(LogLevel::kWarn, "outbox %s: %s", options.name.c_str(), st.ToString().c_str());
  }
}

void Outbox::Impl::EvictExpiredLocked(int64_t now_ms) {
  if (options.max_age_ms <= 0) return;
  int64_t cutoff = now_ms - options.max_age_ms;
  // Whole segments whose newest frame expired; single frames in the head
  // segment are dropped as the sender reaches them (PickLocked).
  while (queued_frames > 0 && segments.front().newest_ms < cutoff) {
    DropFrontLocked("they are older than max_age");
  }
}

// Forgets every queued frame of the oldest segment (an in-flight one is
// settled when its Send returns) and deletes the file, unless it is the one
// being written: that keeps its file until it rotates.
void Outbox::Impl::DropFrontLocked(const char* why) {
  Segment& f = segments.front();
  uint64_t frames = f.frames;
  uint64_t bytes = f.bytes;
  if (inflight.active && !inflight.evicted && inflight.segment == f.number) {
    inflight.evicted = true;
    --frames;
    bytes -= inflight.bytes;
  }
  queued_frames -= f.frames;
  queued_bytes -= f.bytes;
  CountDropLocked(frames, bytes, why);
  if (cursor.segment == f.number) cursor = Cursor{};
  if (segments.size() == 1) {
    head_index = f.records;
    f.frames = 0;
    f.bytes = 0;
    return;
  }
  RemoveSegmentFileLocked(f.number);
  segments.pop_front();
  head_index = 0;
  RetireConsumedHeadLocked();
}

// Deleting a fully consumed segment is itself an acknowledgement: replay
// never sees its records again, whatever the ACK file says.
void Outbox::Impl::RetireConsumedHeadLocked() {
  while (segments.size() > 1 && segments.front().frames == 0) {
    uint64_t n = segments.front().number;
    RemoveSegmentFileLocked(n);
    if (cursor.segment == n) cursor = Cursor{};
    segments.pop_front();
    head_index = 0;
  }
}

void Outbox::Impl::ConsumeHeadLocked(uint64_t frame_bytes, size_t record_size) {
  Segment& h = segments.front();
  ++head_index;
  --h.frames;
  h.bytes -= frame_bytes;
  --queued_frames;
  queued_bytes -= frame_bytes;
  if (cursor.segment == h.number) {
    cursor.pos += record_size;
    ++cursor.index;
    if (cursor.pos >= kCompactBytes && cursor.pos * 2 >= cursor.data.size()) {
      cursor.data.erase(0, cursor.pos);
      cursor.pos = 0;
    }
    Record next;
    if (h.frames > 0 && ParseRecord(cursor.data, cursor.pos, &next)) h.oldest_ms = next.enqueue_ms;
  }
  RetireConsumedHeadLocked();
}

void Outbox::Impl::CountDropLocked(uint64_t frames, uint64_t bytes, const char* why) {
  if (frames == 0) return;
  stats.dropped_frames += frames;
  stats.dropped_bytes += bytes;
  if (!dropped_ep.active) {
    Logf(LogLevel::kWarn,
         "outbox %s: dropped %llu of the oldest queued frame(s) (%s) because %s; further drops are "
         "counted until a frame gets through",
         options.name.c_str(), U(frames), HumanBytes(bytes).c_str(), why);
  }
  dropped_ep.active = true;
  dropped_ep.frames += frames;
  dropped_ep.bytes += bytes;
}

void Outbox::Impl::RemoveSegmentFileLocked(uint64_t segment) {
  std::string path = WalSegmentPath(options.dir, segment);
  Status st = env->RemoveFile(path);
  // Left behind, its records would be sent again after a restart: harmless.
  if (!st.ok() && st.code() != StatusCode::kNotFound)
    Logf(LogLevel::kWarn, "outbox %s: %s", options.name.c_str(), st.ToString().c_str());
}

Status Outbox::Impl::PickLocked(std::unique_lock<std::mutex>& lock, std::string* frame) {
  for (;;) {
    int64_t now = env->NowMillis();
    EvictExpiredLocked(now);
    RetireConsumedHeadLocked();
    if (queued_frames == 0) return Status::Ok();
    if (cursor.segment != segments.front().number) {
      VIGIL_RETURN_IF_ERROR(LoadCursorLocked(lock));
      continue;  // the queue may have changed while the lock was released
    }
    Record r;
    if (!ParseRecord(cursor.data, cursor.pos, &r)) {
      DropFrontLocked("their segment file is damaged");
      continue;
    }
    if (options.max_age_ms > 0 && r.enqueue_ms < now - options.max_age_ms) {
      ConsumeHeadLocked(r.frame.size(), r.size);
      CountDropLocked(1, r.frame.size(), "they are older than max_age");
      continue;
    }
    frame->assign(r.frame);
    inflight = InFlight{.active = true,
                        .segment = segments.front().number,
                        .index = head_index,
                        .bytes = r.frame.size(),
                        .record_size = r.size};
    return Status::Ok();
  }
}

Status Outbox::Impl::LoadCursorLocked(std::unique_lock<std::mutex>& lock) {
  const uint64_t seg = segments.front().number;
  const uint64_t skip = head_index;
  const std::string path = WalSegmentPath(options.dir, seg);
  Result<std::string> data = std::string();
  if (segments.size() == 1) {
    // The segment being written: read under the lock, so that no record is
    // appended between the read and attaching the copy (AppendLocked).
    data = env->ReadFile(path, kMaxSegmentReadBytes);
  } else {
    lock.unlock();
    data = env->ReadFile(path, kMaxSegmentReadBytes);
    lock.lock();
    if (segments.front().number != seg || head_index != skip || cursor.segment == seg) {
      return Status::Ok();
    }
  }
  if (!data.ok()) {
    if (data.status().code() != StatusCode::kNotFound) {
      return data.status().WithContext("outbox " + options.name);  // retried after a backoff
    }
    DropFrontLocked("their segment file is gone");
    return Status::Ok();
  }
  cursor = Cursor{.segment = seg, .data = std::move(data).value()};
  while (cursor.index < skip) {  // acknowledged before a restart
    Record r;
    if (!ParseRecord(cursor.data, cursor.pos, &r)) {
      DropFrontLocked("their segment file is damaged");
      return Status::Ok();
    }
    cursor.pos += r.size;
    ++cursor.index;
  }
  return Status::Ok();
}

void Outbox::Impl::ResolveLocked(const Status& st) {
  InFlight f = inflight;
  inflight = InFlight{};
  bool rejected = st.code() == StatusCode::kInvalidArgument;
  if (st.ok()) {
    ++stats.sent_frames;
    stats.sent_bytes += f.bytes;
    stats.last_success_ms = env->NowMillis();
    EndEpisodesLocked();
  } else if (rejected) {
    ++stats.rejected_frames;
    if (!rejected_ep.active) {
      Logf(LogLevel::kWarn,
           "outbox %s: the server refused a frame (%s); skipped it, and further refusals are "
           "counted until a frame is accepted",
           options.name.c_str(), st.ToString().c_str());
    }
    rejected_ep.active = true;
    ++rejected_ep.frames;
  } else {
    ++stats.send_failures;
    stats.last_error = st.ToString();
    // A flaky link would log two lines per blip: outages are announced at
    // most once a minute (the stats count every attempt).
    int64_t mono = env->MonotonicMillis();
    if (!outage_ep.active && (outage_logged_ms < 0 || mono - outage_logged_ms >= 60'000)) {
      Logf(LogLevel::kWarn,
           "outbox %s: send failed (%s); %llu frame(s) queued, retrying with backoff",
           options.name.c_str(), st.ToString().c_str(), U(queued_frames));
      outage_logged_ms = mono;
      outage_ep.bytes = 1;  // this episode was announced: announce its end too
    }
    outage_ep.active = true;
    ++outage_ep.frames;
  }
  if (f.evicted) {
    // Its segment is gone, so it cannot be retried.
    if (!st.ok() && !rejected) CountDropLocked(1, f.bytes, "they were evicted while being sent");
    return;
  }
  if (st.ok() || rejected) ConsumeHeadLocked(f.bytes, f.record_size);
}

void Outbox::Impl::EndEpisodesLocked() {
  if (outage_ep.active && outage_ep.bytes != 0) {
    Logf(LogLevel::kInfo, "outbox %s: the server takes frames again after %llu failed attempt(s)",
         options.name.c_str(), U(outage_ep.frames));
  }
  if (dropped_ep.active) {
    Logf(LogLevel::kWarn, "outbox %s: %llu frame(s) (%s) were dropped in all before this delivery",
         options.name.c_str(), U(dropped_ep.frames), HumanBytes(dropped_ep.bytes).c_str());
  }
  if (rejected_ep.active && rejected_ep.frames > 1) {
    Logf(LogLevel::kWarn, "outbox %s: %llu frame(s) refused by the server were skipped in all",
         options.name.c_str(), U(rejected_ep.frames));
  }
  outage_ep = dropped_ep = rejected_ep = Episode{};
}

std::optional<int64_t> Outbox::Impl::HousekeepingDueInLocked() {
  int64_t mono = env->MonotonicMillis();
  std::optional<int64_t> due;
  if (dirty_since_ms >= 0 && segments.back().frames > 0) {
    due = std::max<int64_t>(0, dirty_since_ms + options.sync_interval_ms - mono);
  }
  if (!(AckPositionLocked() == ack_written)) {
    int64_t ack_due = std::max<int64_t>(0, ack_written_ms + options.ack_interval_ms - mono);
    due = due ? std::min(*due, ack_due) : ack_due;
  }
  return due;
}

void Outbox::Impl::WriteAckHoldingSendMu(bool force) {
  Position pos;
  int64_t mono;
  {
    std::lock_guard lock(mu);
    pos = AckPositionLocked();
    mono = env->MonotonicMillis();
    if (pos == ack_written) return;
    if (!force && mono - ack_written_ms < options.ack_interval_ms) return;
  }
  // Outside mu: a stale position only means a few more frames sent again.
  Status st = env->WriteFileAtomic(ack_path, EncodeAck(pos));
  std::lock_guard lock(mu);
  ack_written_ms = mono;
  if (st.ok()) {
    ack_written = pos;
  } else {
    Logf(LogLevel::kWarn, "outbox %s: writing the ACK file: %s", options.name.c_str(),
         st.ToString().c_str());
  }
}

void Outbox::Impl::HousekeepingHoldingSendMu() {
  {
    std::lock_guard lock(mu);
    if (closed) return;
    MaybeSyncLocked(env->MonotonicMillis());
  }
  WriteAckHoldingSendMu(false);
}

Attempt Outbox::Impl::SendOneHoldingSendMu() {
  std::string frame;
  {
    std::unique_lock lock(mu);
    if (closed) return {FailedPrecondition("outbox " + options.name + " is stopped")};
    Status st = PickLocked(lock, &frame);
    if (!st.ok()) {
      ++stats.send_failures;
      stats.last_error = st.ToString();
      return {st};
    }
  }
  if (frame.empty()) {
    WriteAckHoldingSendMu(false);
    return {};
  }
  Status st = transport->Send(frame);
  {
    std::lock_guard lock(mu);
    ResolveLocked(st);
    MaybeSyncLocked(env->MonotonicMillis());
  }
  WriteAckHoldingSendMu(false);
  return {st, true, st.ok()};
}

size_t Outbox::Impl::Drain() {
  size_t sent = 0;
  for (;;) {
    {
      std::lock_guard lock(mu);
      if (stopping) break;
    }
    Attempt a;
    {
      std::lock_guard lock(send_mu);
      a = SendOneHoldingSendMu();
    }
    sent += a.sent ? 1 : 0;
    if (!a.attempted) break;
    if (!a.status.ok() && a.status.code() != StatusCode::kInvalidArgument) break;
  }
  return sent;
}

void Outbox::Impl::Loop() {
  using Clock = std::chrono::steady_clock;
  Backoff backoff(options.backoff);
  Clock::time_point retry_at{};
  for (;;) {
    {
      std::unique_lock lock(mu);
      if (stopping) return;
      Clock::time_point now = Clock::now();
      if (queued_frames == 0 || now < retry_at) {
        // Enqueue wakes an idle sender; in a backoff only the deadline, a
        // sync or ACK write coming due, or Stop() does (then the loop
        // simply waits again).
        Clock::time_point until = queued_frames > 0 ? retry_at : Clock::time_point::max();
        if (std::optional<int64_t> due = HousekeepingDueInLocked()) {
          until = std::min(until, now + std::chrono::milliseconds(*due));
        }
        if (until == Clock::time_point::max()) {
          cv.wait(lock);
        } else {
          cv.wait_until(lock, until);
        }
        if (stopping) return;
        lock.unlock();
        std::lock_guard send_lock(send_mu);
        HousekeepingHoldingSendMu();
        continue;
      }
    }
    Attempt a;
    {
      std::lock_guard send_lock(send_mu);
      a = SendOneHoldingSendMu();
    }
    if (a.status.ok() || a.status.code() == StatusCode::kInvalidArgument) {
      backoff.Reset();
      retry_at = {};
    } else {
      retry_at = Clock::now() + std::chrono::milliseconds(backoff.NextDelayMs());
    }
  }
}

void Outbox::Impl::Start() {
  std::lock_guard lock(mu);
  if (started || stopping) return;
  started = true;
  thread = std::thread([this] { Loop(); });
  NameThread(thread, "vigil-outbox");
}

void Outbox::Impl::Stop() {
  {
    std::lock_guard lock(mu);
    if (stopping) return;
    stopping = true;
  }
  cv.notify_all();
  if (thread.joinable()) thread.join();  // after at most the in-flight Send
  std::lock_guard send_lock(send_mu);    // a SendOne()/Drain() caller's Send, too
  {
    std::lock_guard lock(mu);
    closed = true;
    // Frames still queued must survive a power loss after a clean stop, too.
    Status st = segments.back().frames > 0 ? SyncLocked() : Status::Ok();
    Status closed_st = writer->Close();
    if (st.ok()) st = closed_st;
    if (!st.ok()) {
      Logf(LogLevel::kWarn, "outbox %s: %s", options.name.c_str(), st.ToString().c_str());
    }
    if (dropped_ep.active) {
      Logf(LogLevel::kWarn, "outbox %s: %llu frame(s) (%s) were dropped since the last delivery",
           options.name.c_str(), U(dropped_ep.frames), HumanBytes(dropped_ep.bytes).c_str());
    }
    if (queued_frames > 0) {
      Logf(LogLevel::kInfo, "outbox %s: stopping with %llu frame(s) (%s) queued in %s",
           options.name.c_str(), U(queued_frames), HumanBytes(queued_bytes).c_str(),
           options.dir.c_str());
    }
  }
  WriteAckHoldingSendMu(true);
}

OutboxStats Outbox::Impl::Stats() const {
  std::lock_guard lock(mu);
  OutboxStats s = stats;
  s.queued_frames = queued_frames;
  s.queued_bytes = queued_bytes;
  s.queued_segments = static_cast<uint64_t>(std::count_if(
      segments.begin(), segments.end(), [](const Segment& g) { return g.frames > 0; }));
  s.oldest_queued_ms = queued_frames > 0 ? segments.front().oldest_ms : 0;
  return s;
}

Result<std::unique_ptr<Outbox>> Outbox::Open(OutboxOptions options, Transport* transport) {
  if (options.dir.empty()) return InvalidArgument("outbox " + options.name + ": no directory");
  if (transport == nullptr) return InvalidArgument("outbox " + options.name + ": no transport");
  if (options.max_bytes == 0 || options.segment_bytes == 0) {
    return InvalidArgument("outbox " + options.name + ": max_bytes and segment_bytes must be > 0");
  }
  auto impl = std::make_unique<Impl>(std::move(options), transport);
  VIGIL_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<Outbox>(new Outbox(std::move(impl)));
}

Outbox::Outbox(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Outbox::~Outbox() { Stop(); }

Status Outbox::Enqueue(std::string_view frame) { return impl_->Enqueue(frame); }
void Outbox::Start() { impl_->Start(); }
void Outbox::Stop() { impl_->Stop(); }

Status Outbox::SendOne() {
  std::lock_guard lock(impl_->send_mu);
  return impl_->SendOneHoldingSendMu().status;
}

size_t Outbox::Drain() { return impl_->Drain(); }
OutboxStats Outbox::Stats() const { return impl_->Stats(); }

}  // namespace vigil::ship
