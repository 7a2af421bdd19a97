// Outbox: a bounded, disk-backed FIFO queue of encoded wire frames in front of
// a Transport (`vigil agent --server URL`). Without it a frame the server
// does not take is lost; with it frames survive a server outage and an agent
// restart, and are delivered oldest-first when the server comes back.
// Format, policies and what a crash loses or repeats: docs/outbox.md.
//
// Storage: WAL segment files in `dir` (core/wal_segments.h), one record per
// frame (enqueue time + frame bytes), plus a small ACK file naming the first
// frame not yet acknowledged (and a SEGMENT file, for directory fsyncs).
// Queued frames are not kept in memory: an index (per segment: frames,
// bytes, oldest and newest enqueue time) is, and the sender reads the frames
// back from disk one segment at a time (while it is in the segment being
// written, new records are appended to that in-memory copy as well, so it
// never rereads a growing file). Memory is therefore one segment
// (segment_bytes, or one frame larger than that) plus the index.
//
// At-least-once: the ACK file is rewritten (atomically) at most every
// ack_interval_ms, when the sender stops and implicitly whenever a fully
// acknowledged segment is deleted, not after every frame. After a crash the
// frames acknowledged since the last ACK write that are still in a segment
// file are sent again. That is safe because the server deduplicates: metrics
// by per-source batch sequence, logs by source offsets, and jobs snapshots
// are state (docs/wire.md "Exactly-once in effect"). A clean Stop() repeats
// nothing.
//
// Durability: Enqueue writes the record (write(2)) before returning OK, so a
// process crash loses nothing. fdatasync is grouped: it runs when unsent
// records have waited sync_interval_ms (checked by Enqueue and the sender),
// at every segment rotation and at Stop(); records the server acknowledged
// before their sync came due are never synced at all, so a steady stream
// with the server up costs no fsync per frame. A power loss can therefore
// lose up to sync_interval_ms of frames the server had not yet taken.
// Callers that advance their own checkpoint on OK (kRefuseNew with log
// files) set sync_each_enqueue: then OK means the record is durable.
//
// Bounds: queued frame bytes <= max_bytes (disk use is that, 16 bytes per
// record, the consumed start of the oldest segment and the segment being
// written). Over budget, kDropOldest evicts whole oldest segments (at most
// segment_bytes each) and kRefuseNew refuses the new frame (Unavailable).
// Frames older than max_age_ms are dropped: whole segments whose newest
// frame expired, and single frames when the sender reaches them. Every drop
// is counted in OutboxStats and logged once per episode, never silently.
//
// Thread safety: Enqueue() and Stats() may be called from any thread, at any
// time, concurrently with the sender. Internally:
//   * Impl::mu (queue mutex) guards the index, the segment writer, the sender's
//     segment copy, the stats and the flags. Enqueue holds it while it writes
//     (and, when due, syncs) one record, and the sender holds it to read the
//     segment being written (at most segment_bytes, from the page cache).
//     Nobody holds it across Transport::Send, the ACK file write, or reading
//     a closed segment, so a slow Send never blocks Enqueue.
//   * Impl::send_mu (sender mutex) admits one sender at a time (the thread of
//     Start(), or a caller of SendOne()/Drain()), which is also what
//     Transport requires; it also serialises ACK file writes.
//     Lock order: send_mu before mu.
//   * a condition variable on mu wakes the sender: Enqueue wakes an idle
//     one; during a backoff only Stop() cuts the wait short, so retries stay
//     spaced however fast frames arrive.
// Stop() waits for an in-flight Send, so it takes at most the transport's
// own timeout (HttpTransport: 30 s by default).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/env.h"
#include "core/status.h"
#include "ship/backoff.h"
#include "ship/transport.h"

namespace vigil::ship {

enum class OutboxFullPolicy {
  kDropOldest,  // metrics, jobs: newest data matters most
  kRefuseNew,   // logs: the caller keeps its files and checkpoints and retries
};

struct OutboxOptions {
  std::string dir;                        // e.g. <home>/agent/outbox-metrics; created if missing
  Env* env = nullptr;                     // nullptr: Env::Default()
  uint64_t max_bytes = 256ull << 20;      // budget of queued frame bytes
  int64_t max_age_ms = 24 * 3600 * 1000;  // older frames are dropped; <= 0: no limit
  OutboxFullPolicy full_policy = OutboxFullPolicy::kDropOldest;
  uint64_t segment_bytes = 4u << 20;  // a segment file is rotated at this size
  BackoffOptions backoff;
  std::string name = "metrics";  // for log messages
  // OK from Enqueue means fdatasync'ed (costs one fsync per frame).
  bool sync_each_enqueue = false;
  // Unsent records are synced once they have waited this long.
  int64_t sync_interval_ms = 1000;
  // The ACK file is rewritten at most this often while frames flow: the
  // frames a crash may send again.
  int64_t ack_interval_ms = 5000;
};

struct OutboxStats {
  uint64_t queued_frames = 0;  // waiting now
  uint64_t queued_bytes = 0;
  uint64_t queued_segments = 0;  // segment files holding waiting frames
  int64_t oldest_queued_ms = 0;  // enqueue time of the oldest waiting frame (0: none)
  uint64_t replayed_frames = 0;  // found waiting by Open (from an earlier run)
  uint64_t enqueued_frames = 0;  // Enqueue calls that returned OK
  uint64_t sent_frames = 0;      // acknowledged by the server
  uint64_t sent_bytes = 0;
  uint64_t dropped_frames = 0;  // evicted oldest-first (budget, age, unreadable)
  uint64_t dropped_bytes = 0;
  uint64_t refused_frames = 0;   // kRefuseNew: Enqueue said Unavailable because full
  uint64_t rejected_frames = 0;  // the server refused them (InvalidArgument); skipped
  uint64_t send_failures = 0;    // attempts that failed and will be retried
  int64_t last_success_ms = 0;   // wall time of the last acknowledged send (0: none)
  std::string last_error;        // of the last failed attempt
};

// Frames larger than this are refused (InvalidArgument): a little over what
// a server accepts (wire::kMaxPayloadBytes), so every frame it could take fits.
inline constexpr size_t kMaxOutboxFrameBytes = (64u << 20) + (1u << 20);

class Outbox {
 public:
  // Opens (creating) options.dir, replays what is queued there (a torn tail
  // after a crash is cut, as WAL replay does) and resumes after the last
  // acknowledged frame. `transport` must outlive the Outbox.
  static Result<std::unique_ptr<Outbox>> Open(OutboxOptions options, Transport* transport);
  ~Outbox();  // Stop()s

  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Appends one encoded frame; OK once it is written (and synced with
  // sync_each_enqueue). Over budget, kDropOldest evicts the oldest frames and
  // kRefuseNew returns Unavailable. InvalidArgument: empty, larger than
  // kMaxOutboxFrameBytes or than max_bytes. FailedPrecondition after Stop().
  Status Enqueue(std::string_view frame);

  // Starts the sender thread: it drains oldest-first (Send; on OK advance; on
  // InvalidArgument count, log, skip; otherwise back off and retry the same
  // frame). Meant for a real clock; with a manual clock tests call
  // SendOne()/Drain() instead. A second call does nothing.
  void Start();
  // Idempotent: stops the sender (an in-flight Send finishes), syncs, writes
  // the ACK file, closes. Enqueue and SendOne fail afterwards.
  void Stop();

  // One attempt to send the oldest frame (dropping expired ones on the way).
  // Returns the transport's status, or OK when nothing is queued.
  Status SendOne();
  // Sends until empty or a send fails (a rejected frame is skipped, not a
  // failure); returns how many the server acknowledged.
  size_t Drain();

  OutboxStats Stats() const;

 private:
  struct Impl;
  explicit Outbox(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil::ship
