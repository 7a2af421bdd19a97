#include "ship/outbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/env_wrapper.h"
#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "core/wal_segments.h"

namespace vigil::ship {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A server that is up, down, or refusing, and records what it took. Hold()
// parks the next Send until Release(), to catch a frame in flight.
class FakeTransport final : public Transport {
 public:
  enum class Mode { kUp, kDown, kRefuse };

  Status Send(std::string_view frame) override {
    std::unique_lock lock(mu_);
    ++calls_;
    if (held_) {
      ++parked_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !held_; });
      --parked_;
      if (!held_result_.ok()) return std::exchange(held_result_, Status::Ok());
    }
    if (fail_next_ > 0) {
      --fail_next_;
      return Unavailable("fake server: down for now");
    }
    if (fail_every_ > 0 && calls_ % fail_every_ == 0) return Unavailable("fake server: flaky");
    if (mode_ == Mode::kDown) return Unavailable("fake server: down");
    if (mode_ == Mode::kRefuse ||
        (!refuse_marker_.empty() && frame.find(refuse_marker_) != std::string_view::npos)) {
      return InvalidArgument("fake server: bad frame");
    }
    received_.emplace_back(frame);
    cv_.notify_all();
    return Status::Ok();
  }

  void SetMode(Mode m) {
    std::lock_guard lock(mu_);
    mode_ = m;
  }
  void FailNext(int n) {
    std::lock_guard lock(mu_);
    fail_next_ = n;
  }
  void FailEvery(int n) {
    std::lock_guard lock(mu_);
    fail_every_ = n;
  }
  void RefuseContaining(std::string marker) {
    std::lock_guard lock(mu_);
    refuse_marker_ = std::move(marker);
  }
  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  // Lets a parked Send go on; it returns `result` instead of delivering if
  // that is an error.
  void Release(Status result = Status::Ok()) {
    std::lock_guard lock(mu_);
    held_ = false;
    held_result_ = std::move(result);
    cv_.notify_all();
  }
  bool WaitParked(milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return parked_ > 0; });
  }
  bool WaitReceived(size_t n, milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return received_.size() >= n; });
  }
  std::vector<std::string> Received() {
    std::lock_guard lock(mu_);
    return received_;
  }
  int calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  Mode mode_ = Mode::kUp;
  int fail_next_ = 0;
  int fail_every_ = 0;
  int calls_ = 0;
  std::string refuse_marker_;
  bool held_ = false;
  int parked_ = 0;
  Status held_result_;
  std::vector<std::string> received_;
};

// Counts fdatasyncs of appendable files and atomic rewrites (the ACK file).
class CountingEnv final : public EnvWrapper {
 public:
  explicit CountingEnv(Env* base) : EnvWrapper(base) {}

  Result<std::unique_ptr<AppendableFile>> OpenAppendable(const std::string& p) override {
    auto f = EnvWrapper::OpenAppendable(p);
    if (!f.ok()) return f.status();
    return std::unique_ptr<AppendableFile>(new File(std::move(f).value(), &syncs));
  }
  Status WriteFileAtomic(const std::string& p, std::string_view d) override {
    ++atomic_writes;
    return EnvWrapper::WriteFileAtomic(p, d);
  }

  std::atomic<int> syncs{0};
  std::atomic<int> atomic_writes{0};

 private:
  class File final : public AppendableFile {
   public:
    File(std::unique_ptr<AppendableFile> base, std::atomic<int>* syncs)
        : base_(std::move(base)), syncs_(syncs) {}
    Status Append(std::string_view d) override { return base_->Append(d); }
    Status Sync() override {
      ++*syncs_;
      return base_->Sync();
    }
    Status Close() override { return base_->Close(); }
    uint64_t Size() const override { return base_->Size(); }

   private:
    std::unique_ptr<AppendableFile> base_;
    std::atomic<int>* syncs_;
  };
};

// "f<i>", padded with '.' to `size` bytes.
std::string F(int i, size_t size = 0) {
  std::string s = "f" + std::to_string(i);
  if (s.size() < size) s.append(size - s.size(), '.');
  return s;
}

std::vector<std::string> Frames(int from, int to, size_t size = 0) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(F(i, size));
  return out;
}

std::vector<std::string> WalFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".wal") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class OutboxTest : public ::testing::Test {
 protected:
  OutboxOptions Options() {
    OutboxOptions o;
    o.dir = dir_.Join("outbox");
    o.env = &env_;
    o.backoff = {.initial_ms = 1, .max_ms = 8, .multiplier = 2.0, .jitter = 0.5};
    o.name = "test";
    return o;
  }
  std::unique_ptr<Outbox> MustOpen(const OutboxOptions& o) {
    auto r = Outbox::Open(o, &transport_);
    if (!r.ok()) {
      ADD_FAILURE() << r.status().ToString();
      return nullptr;
    }
    return std::move(r).value();
  }
  void EnqueueAll(Outbox* box, const std::vector<std::string>& frames) {
    for (const auto& f : frames) ASSERT_TRUE(box->Enqueue(f).ok()) << f;
  }
  // What a crash would leave now: the files as they are (the page cache
  // survives a process crash), copied while the outbox is still open.
  std::string CrashImage(const std::string& dir) {
    std::string image = dir_.Join("crash" + std::to_string(++images_));
    fs::copy(dir, image, fs::copy_options::recursive);
    return image;
  }

  TempDir dir_;
  ManualClockEnv env_{ManualClockEnv::kDefaultStartMs, /*follow_monotonic=*/true};
  FakeTransport transport_;
  int images_ = 0;
};

TEST_F(OutboxTest, DeliversFramesInOrder) {
  auto box = MustOpen(Options());
  ASSERT_TRUE(box);
  EnqueueAll(box.get(), Frames(0, 10));
  EXPECT_EQ(box->Stats().queued_frames, 10u);
  EXPECT_EQ(box->Stats().oldest_queued_ms, env_.now);
  EXPECT_EQ(box->Drain(), 10u);
  EXPECT_EQ(transport_.Received(), Frames(0, 10));
  OutboxStats s = box->Stats();
  EXPECT_EQ(s.enqueued_frames, 10u);
  EXPECT_EQ(s.sent_frames, 10u);
  EXPECT_EQ(s.sent_bytes, 20u);  // "f0".."f9"
  EXPECT_EQ(s.queued_frames, 0u);
  EXPECT_EQ(s.queued_bytes, 0u);
  EXPECT_EQ(s.oldest_queued_ms, 0);
  EXPECT_EQ(s.last_success_ms, env_.now);
  EXPECT_TRUE(box->SendOne().ok());  // empty
  EXPECT_EQ(transport_.calls(), 10);
}

TEST_F(OutboxTest, OutageDeliversEverythingOnceOldestFirst) {
  auto box = MustOpen(Options());
  ASSERT_TRUE(box);
  transport_.SetMode(FakeTransport::Mode::kDown);
  EnqueueAll(box.get(), Frames(0, 5));
  EXPECT_EQ(box->Drain(), 0u);
  EXPECT_EQ(box->SendOne().code(), StatusCode::kUnavailable);
  EnqueueAll(box.get(), Frames(5, 10));
  OutboxStats s = box->Stats();
  EXPECT_EQ(s.send_failures, 2u);
  EXPECT_EQ(s.queued_frames, 10u);
  EXPECT_NE(s.last_error.find("down"), std::string::npos);

  transport_.SetMode(FakeTransport::Mode::kUp);
  EXPECT_EQ(box->Drain(), 10u);
  EXPECT_EQ(transport_.Received(), Frames(0, 10));
  EXPECT_EQ(box->Stats().queued_frames, 0u);
}

TEST_F(OutboxTest, ReopenAfterStopResumesAfterTheAcknowledgedFrame) {
  OutboxOptions o = Options();
  auto box = MustOpen(o);
  ASSERT_TRUE(box);
  EnqueueAll(box.get(), Frames(0, 6));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(box->SendOne().ok());
  box->Stop();  // writes the ACK file: a clean restart repeats nothing
  EXPECT_EQ(box->Enqueue("late").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(box->SendOne().code(), StatusCode::kFailedPrecondition);
  box->Stop();  // idempotent
  box.reset();

  box = MustOpen(o);
  ASSERT_TRUE(box);
  EXPECT_EQ(box->Stats().replayed_frames, 2u);
  EXPECT_EQ(box->Stats().queued_frames, 2u);
  EXPECT_EQ(box->Stats().queued_bytes, 4u);
  ASSERT_TRUE(box->Enqueue(F(6)).ok());
  EXPECT_EQ(box->Drain(), 3u);
  EXPECT_EQ(transport_.Received(), Frames(0, 7));

  box.reset();  // the destructor stops, too
  box = MustOpen(o);
  ASSERT_TRUE(box);
  EXPECT_EQ(box->Stats().queued_frames, 0u);
  EXPECT_EQ(WalFiles(o.dir).size(), 1u);  // only the new, empty segment
}

// The ACK file is written at most every ack_interval_ms: a crash sends again
// exactly the frames acknowledged since its last write.
TEST_F(OutboxTest, CrashSendsAgainOnlyFramesAcknowledgedSinceTheLastAckWrite) {
  OutboxOptions o = Options();
  o.ack_interval_ms = 1000;
  auto box = MustOpen(o);
  ASSERT_TRUE(box);
  EnqueueAll(box.get(), Frames(0, 10));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(box->SendOne().ok());  // f0..f2: no ACK write yet
  EXPECT_FALSE(fs::exists(o.dir + "/ACK"));
  env_.now += 1000;
  ASSERT_TRUE(box->SendOne().ok());  // f3, then the ACK file says "from f4"
  EXPECT_TRUE(fs::exists(o.dir + "/ACK"));
  ASSERT_TRUE(box->SendOne().ok());  // f4, f5: acknowledged after the ACK write
  ASSERT_TRUE(box->SendOne().ok());
  std::string image = CrashImage(o.dir);

  FakeTransport after;
  OutboxOptions io = o;
  io.dir = image;
  auto reopened = Outbox::Open(io, &after);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ((*reopened)->Stats().replayed_frames, 6u);
  EXPECT_EQ((*reopened)->Drain(), 6u);
  EXPECT_EQ(after.Received(), Frames(4, 10));  // f4, f5 again, then the rest once
}

// Deleting a fully acknowledged segment is an acknowledgement too, so the
// window is also at most one segment, even with no ACK write at all.
TEST_F(OutboxTest, CrashWindowIsAtMostOneSegment) {
  OutboxOptions o = Options();
  o.ack_interval_ms = 1'000'000;
  o.segment_bytes = 2 * (16 + 10);  // two 10-byte frames per segment
  auto box = MustOpen(o);
  ASSERT_TRUE(box);
  EnqueueAll(box.get(), Frames(0, 8, 10));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(box->SendOne().ok());
  EXPECT_FALSE(fs::exists(o.dir + "/ACK"));
  EXPECT_EQ(WalFiles(o.dir).size(), 2u);  // {f4,f5}, {f6,f7}
  std::string image = CrashImage(o.dir);

  FakeTransport after;
  OutboxOptions io = o;
  io.dir = image;
  auto reopened = Outbox::Open(io, &after);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ((*reopened)->Drain(), 4u);
  EXPECT_EQ(after.Received(), Frames(4, 8, 10));  // only f4 again
}

TEST_F(OutboxTest, TornTailLosesOnlyTheTornRecord) {
  for (bool garble : {false, true}) {
    SCOPED_TRACE(garble ? "garbled" : "truncated");
    OutboxOptions o = Options();
    o.dir = dir_.Join(garble ? "garbled" : "truncated");
    o.segment_bytes = 3 * (16 + 20);  // three 20-byte frames per segment
    auto box = MustOpen(o);
    ASSERT_TRUE(box);
    EnqueueAll(box.get(), Frames(0, 5, 20));
    std::string image = CrashImage(o.dir);
    box.reset();

    std::vector<std::string> files = WalFiles(image);
    ASSERT_EQ(files.size(), 2u);  // {f0,f1,f2}, {f3,f4}
    const std::string& last = files.back();
    ASSERT_EQ(fs::file_size(last), 2u * 36);
    if (garble) {
      std::fstream f(last, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(36 + 20);
      f.put('#');  // in f4's frame bytes: its checksum fails
    } else {
      fs::resize_file(last, 36 + 30);  // f4 cut short
    }

    FakeTransport after;
    OutboxOptions io = o;
    io.dir = image;
    auto reopened = Outbox::Open(io, &after);
    ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
    EXPECT_EQ((*reopened)->Stats().replayed_frames, 4u);
    ASSERT_TRUE((*reopened)->Enqueue(F(5, 20)).ok());
    EXPECT_EQ((*reopened)->Drain(), 5u);
    std::vector<std::string> want = Frames(0, 4, 20);
    want.push_back(F(5, 20));
    EXPECT_EQ(after.Received(), want);
  }
}

TEST_F(OutboxTest, DropOldestEvictsWholeOldestSegmentsAndCountsThem) {
  OutboxOptions o = Options();
  o.segment_bytes = 350;  // three 116-byte records per segment
  o.max_bytes = 1000;     // ten 100-byte frames
  auto box = MustOpen(o);
  ASSERT_TRUE(box);
  transport_.SetMode(FakeTransport::Mode::kDown);
  EnqueueAll(box.get(), Frames(0, 10, 100));
  EXPECT_EQ(box->Stats().dropped_frames, 0u);
  EnqueueAll(box.get(), Frames(10, 12, 100));  // f10 does not fit: {f0,f1,f2} go
  OutboxStats s = box->Stats();
  EXPECT_EQ(s.dropped_frames, 3u);
  EXPECT_EQ(s.dropped_bytes, 300u);
  EXPECT_EQ(s.queued_frames, 9u);
  EXPECT_EQ(s.queued_bytes, 900u);
  EXPECT_EQ(s.queued_segments, 3u);
  EXPECT_EQ(WalFiles(o.dir).size(), 3u);

  transport_.SetMode(FakeTransport::Mode::kUp);
  EXPECT_EQ(box->Drain(), 9u);
  EXPECT_EQ(transport_.Received(), Frames(3, 12, 100));
  EXPECT_EQ(WalFiles(o.dir).size(), 1u);  // the segment being written stays
}

TEST_F(OutboxTest, RefuseNewRefusesWhenFullAndCounts) {
  OutboxOptions o = Options();
  o.segment_bytes = 350;
  o.max_bytes = 1000;
  o.full_policy = OutboxFullPolicy::kRefuseNew;
  auto box = MustOpen(o);
  ASSERT_TRUE(box);
  transport_.SetMode(FakeTransport::Mode::kDown);
  EnqueueAll(box.get(), Frames(0, 10, 100));
  EXPECT_EQ(box->Enqueue(F(10, 100)).code(), StatusCode::kUnavailable);
  EXPECT_EQ(box->Enqueue(F(11, 100)).code(), StatusCode::kUnavailable);
  OutboxStats s = box->Stats();
  EXPECT_EQ(s.refused_frames, 2u);
  EXPECT_EQ(s.dropped_frames, 0u);
  EXPECT_EQ(s.queued_frames, 10u);

  transport_.SetMode(FakeTransport::Mode::kUp);
  ASSERT_TRUE(box->SendOne().ok());
  EXPECT_TRUE(box->Enqueue(F(10, 100)).ok());  // room again
  EXPECT_EQ(box->Drain(), 10u);
  EXPECT_EQ(transport_.Received(), Frames(0, 11, 100));
}

TEST_F(OutboxTest, FrameSizes) {
  OutboxOptions o = Options();
  o.segment_bytes = 350;
  o.max_bytes = 100'000;
  auto box = MustOpen(o);
  ASSERT_TRUE(box);
  EXPECT_EQ(box->Enqueue("").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(box->Enqueue(std::string(100'001, 'x')).code(), StatusCode::kInvalidArgument);
  // Larger than a segment: it gets a segment of its own.
  std::vector<std::string> frames = {F(0), F(1, 5000), F(2)};
  EnqueueAll(box.get(), frames);
  EXPECT_EQ(WalFiles(o.dir).size(), 3u);
  EXPECT_EQ(box->Drain(), 3u);
  EXPECT_EQ(transport_.Received(), frames);

  o.dir = dir_.Join("big");
  o.max_bytes = 1ull << 40;
  box = MustOpen(o);
  ASSERT_TRUE(box);
  EXPECT_EQ(box->Enqueue(std::string(kMaxOutboxFrameBytes + 1, 'x')).code(),
            StatusCode::kInvalidArgument);
}

TEST_F(OutboxTest, FramesOlderThanMaxAgeAreDropped) {
  OutboxOptions o = Options();
  o.max_age_ms = 60'000;
  o.segment_bytes = 3 * (16 + 10);
  auto box = MustOpen(o);
  ASSERT_TRUE(box);
  transport_.SetMode(FakeTransport::Mode::kDown);
  const int64_t t0 = env_.now;
  EnqueueAll(box.get(), Frames(0, 3, 10));  // segment 1, at t0
  env_.now += 30'000;
  EnqueueAll(box.get(), Frames(3, 4, 10));  // segment 2, at t0 + 30 s
  EXPECT_EQ(box->Stats().oldest_queued_ms, t0);
  env_.now += 31'000;  // f0..f2 are 61 s old
  EnqueueAll(box.get(), Frames(4, 6, 10));
  OutboxStats s = box->Stats();
  EXPECT_EQ(s.dropped_frames, 3u);  // segment 1 as a whole
  EXPECT_EQ(s.dropped_bytes, 30u);
  EXPECT_EQ(s.queued_frames, 3u);
  EXPECT_EQ(s.oldest_queued_ms, t0 + 30'000);

  env_.now += 40'000;  // f3 is 71 s old; f4, f5 40 s
  transport_.SetMode(FakeTransport::Mode::kUp);
  ASSERT_TRUE(box->SendOne().ok());  // drops f3 on the way, sends f4
  EXPECT_EQ(box->Stats().dropped_frames, 4u);
  EXPECT_EQ(box->Drain(), 1u);
  EXPECT_EQ(transport_.Received(), Frames(4, 6, 10));
  s = box->Stats();
  EXPECT_EQ(s.dropped_bytes, 40u);
  EXPECT_EQ(s.enqueued_frames, s.sent_frames + s.dropped_frames);
}

TEST_F(OutboxTest, FrameTheServerRejectsIsSkippedAndCounted) {
  auto box = MustOpen(Options());
  ASSERT_TRUE(box);
  transport_.RefuseContaining("bad");
  EnqueueAll(box.get(), {"f0", "bad1", "f2"});
  EXPECT_EQ(box->Drain(), 2u);
  EXPECT_EQ(transport_.Received(), (std::vector<std::string>{"f0", "f2"}));
  OutboxStats s = box->Stats();
  EXPECT_EQ(s.rejected_frames, 1u);
  EXPECT_EQ(s.sent_frames, 2u);
  EXPECT_EQ(s.send_failures, 0u);
  EXPECT_EQ(s.queued_frames, 0u);
}

// A frame whose segment is evicted while its Send runs is settled by what the
// Send returns: sent, or (a failure) dropped, since it cannot be retried.
TEST_F(OutboxTest, EvictionWhileAFrameIsInFlight) {
  for (bool send_fails : {false, true}) {
    SCOPED_TRACE(send_fails ? "send fails" : "send succeeds");
    OutboxOptions o = Options();
    o.dir = dir_.Join(send_fails ? "fails" : "succeeds");
    o.segment_bytes = 350;
    o.max_bytes = 1000;
    FakeTransport t;
    auto r = Outbox::Open(o, &t);
    ASSERT_TRUE(r.ok());
    Outbox* box = r->get();
    ASSERT_TRUE(box->Enqueue(F(0, 100)).ok());
    t.Hold();
    std::thread sender([&] { (void)box->SendOne(); });
    ASSERT_TRUE(t.WaitParked(milliseconds(10'000)));
    EnqueueAll(box, Frames(1, 12, 100));  // f10 evicts {f0 (in flight), f1, f2}
    EXPECT_EQ(box->Stats().dropped_frames, 2u);
    t.Release(send_fails ? Unavailable("gone") : Status::Ok());
    sender.join();
    OutboxStats s = box->Stats();
    EXPECT_EQ(s.sent_frames, send_fails ? 0u : 1u);
    EXPECT_EQ(s.dropped_frames, send_fails ? 3u : 2u);
    EXPECT_EQ(s.queued_frames, 9u);
    EXPECT_EQ(s.enqueued_frames, s.sent_frames + s.dropped_frames + s.queued_frames);
    EXPECT_EQ(box->Drain(), 9u);
    std::vector<std::string> want = send_fails ? Frames(3, 12, 100) : Frames(0, 1, 100);
    if (!send_fails) {
      for (auto& f : Frames(3, 12, 100)) want.push_back(f);
    }
    EXPECT_EQ(t.Received(), want);
  }
}

// With the server up, frames are taken before their sync comes due: no
// fsync at all. Unsent ones are synced once per sync_interval_ms.
TEST_F(OutboxTest, SyncsAreGroupedAndSkippedForDeliveredFrames) {
  CountingEnv counting(&env_);
  OutboxOptions o = Options();
  o.env = &counting;
  o.sync_interval_ms = 1000;
  o.ack_interval_ms = 5000;
  auto box = MustOpen(o);
  ASSERT_TRUE(box);
  for (int i = 0; i < 10; ++i) {  // one frame a second, delivered at once
    ASSERT_TRUE(box->Enqueue(F(i)).ok());
    ASSERT_TRUE(box->SendOne().ok());
    env_.now += 1000;
  }
  EXPECT_EQ(counting.syncs.load(), 0);
  EXPECT_EQ(counting.atomic_writes.load(), 1);  // the ACK file, at 5 s

  transport_.SetMode(FakeTransport::Mode::kDown);
  ASSERT_TRUE(box->Enqueue("g0").ok());
  env_.now += 500;
  ASSERT_TRUE(box->Enqueue("g1").ok());
  EXPECT_EQ(counting.syncs.load(), 0);
  env_.now += 600;
  ASSERT_TRUE(box->Enqueue("g2").ok());  // g0 has waited 1.1 s
  EXPECT_EQ(counting.syncs.load(), 1);
  EXPECT_EQ(counting.atomic_writes.load(), 2);  // and SEGMENT, for the directory
  ASSERT_TRUE(box->Enqueue("g3").ok());
  box.reset();
  EXPECT_EQ(counting.syncs.load(), 2);  // Stop syncs g3

  o.dir = dir_.Join("each");
  o.sync_each_enqueue = true;
  box = MustOpen(o);
  ASSERT_TRUE(box);
  int atomic_writes = counting.atomic_writes.load();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(box->Enqueue(F(i)).ok());
  EXPECT_EQ(counting.syncs.load(), 5);
  EXPECT_EQ(counting.atomic_writes.load(), atomic_writes + 1);  // SEGMENT, once per segment
}

class OutboxThreadTest : public ::testing::Test {
 protected:
  OutboxOptions Options() {
    OutboxOptions o;
    o.dir = dir_.Join("outbox");
    o.backoff = {.initial_ms = 1, .max_ms = 8, .multiplier = 2.0, .jitter = 0.5};
    o.name = "test";
    return o;
  }
  TempDir dir_;
  FakeTransport transport_;
};

TEST_F(OutboxThreadTest, SenderRetriesWithBackoffUntilTheServerTakesFrames) {
  transport_.FailNext(3);
  auto r = Outbox::Open(Options(), &transport_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Outbox* box = r->get();
  box->Start();
  box->Start();  // no second thread
  for (const auto& f : Frames(0, 20)) ASSERT_TRUE(box->Enqueue(f).ok());
  ASSERT_TRUE(transport_.WaitReceived(20, milliseconds(10'000)));
  box->Stop();
  EXPECT_EQ(transport_.Received(), Frames(0, 20));
  OutboxStats s = box->Stats();
  EXPECT_EQ(s.send_failures, 3u);
  EXPECT_EQ(s.sent_frames, 20u);
  EXPECT_EQ(s.queued_frames, 0u);
}

TEST_F(OutboxThreadTest, StopWaitsOnlyForTheSendInFlight) {
  auto r = Outbox::Open(Options(), &transport_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Outbox* box = r->get();
  transport_.Hold();
  box->Start();
  for (const auto& f : Frames(0, 3)) ASSERT_TRUE(box->Enqueue(f).ok());
  ASSERT_TRUE(transport_.WaitParked(milliseconds(10'000)));
  std::thread server([&] {
    std::this_thread::sleep_for(milliseconds(100));
    transport_.Release();
  });
  auto start = std::chrono::steady_clock::now();
  box->Stop();
  auto took = std::chrono::steady_clock::now() - start;
  server.join();
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_EQ(transport_.Received(), Frames(0, 1));  // the in-flight one; no more after Stop
  EXPECT_EQ(box->Stats().queued_frames, 2u);
}

// Runs under TSan: producers, the sender thread and a flaky server.
TEST_F(OutboxThreadTest, ConcurrentEnqueuesAreAllDeliveredOnce) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 250;
  transport_.FailEvery(13);
  OutboxOptions o = Options();
  o.segment_bytes = 4096;  // many rotations and deletions under way
  auto r = Outbox::Open(o, &transport_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Outbox* box = r->get();
  box->Start();
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([box, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string f = "t" + std::to_string(t) + "-" + std::to_string(i) + std::string(40, '.');
        EXPECT_TRUE(box->Enqueue(f).ok());
        if (i % 50 == 0) (void)box->Stats();
      }
    });
  }
  for (auto& p : producers) p.join();
  ASSERT_TRUE(transport_.WaitReceived(kThreads * kPerThread, milliseconds(60'000)));
  box->Stop();

  std::vector<std::string> got = transport_.Received();
  ASSERT_EQ(got.size(), size_t{kThreads * kPerThread});
  std::set<std::string> unique(got.begin(), got.end());
  EXPECT_EQ(unique.size(), got.size());
  std::vector<int> next(kThreads, 0);  // each producer's frames arrive in its order
  for (const auto& f : got) {
    size_t dash = f.find('-');
    int t = std::stoi(f.substr(1, dash - 1));
    int i = std::stoi(f.substr(dash + 1));
    EXPECT_EQ(i, next[t]) << f;
    next[t] = i + 1;
  }
  OutboxStats s = box->Stats();
  EXPECT_EQ(s.enqueued_frames, uint64_t{kThreads * kPerThread});
  EXPECT_EQ(s.sent_frames, uint64_t{kThreads * kPerThread});
  EXPECT_GT(s.send_failures, 0u);
  EXPECT_EQ(s.dropped_frames, 0u);
}

}  // namespace
}  // namespace vigil::ship
