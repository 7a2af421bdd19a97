// Metrics survive a server outage exactly once (DESIGN.md "Roles": agents
// buffer and catch up without loss). An agent's collection loop ships an
// 8-GPU node's metrics every second through its outbox (ship/outbox.h) to a
// real ingester and metrics store; the server is away for 10 minutes of a
// simulated clock, some acknowledgements are lost on the way back (the server
// stored the frame, the agent never heard), and the agent restarts once with
// frames still queued. Afterwards every series holds every second of the
// hour-and-a-bit, once: no gap, no duplicate. A full outbox drops its oldest
// frames and says so in its stats and in the vigil_outbox_* metrics it ships.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "collect/metrics/collector.h"
#include "collect/metrics/loop.h"
#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "ingest/ingester.h"
#include "ship/outbox.h"
#include "ship/outbox_metrics.h"
#include "ship/transport.h"
#include "store/tsdb/db.h"

namespace vigil {
namespace {

constexpr int64_t kStart = 1'764'460'800'000;
constexpr int kGpus = 8;

// Eight GPUs' worth of DCGM-style gauges, values that move every pass.
class FakeGpus final : public collect::MetricCollector {
 public:
  std::string_view name() const override { return "fake_gpus"; }
  Status Collect(wire::MetricBatchBuilder* out) override {
    static const char* kNames[] = {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED",
                                   "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
                                   "DCGM_FI_DEV_SM_CLOCK"};
    ++pass_;
    for (const char* n : kNames) {
      out->Family(n, wire::MetricType::kGauge, "fake");
      for (int g = 0; g < kGpus; ++g) {
        out->Add(n, {{"gpu", std::to_string(g)}}, static_cast<double>((pass_ * 7 + g) % 100));
      }
    }
    return Status::Ok();
  }

 private:
  int64_t pass_ = 0;
};

// The network between agent and server: up, down, or up with the answer lost
// (the server stores the frame, the agent sees a failure and sends it again).
class Link final : public ship::Transport {
 public:
  enum class Mode { kUp, kDown, kAnswerLost };
  explicit Link(ingest::Ingester* server) : server_(server) {}
  Status Send(std::string_view frame) override {
    if (mode == Mode::kDown) return Unavailable("connection refused");
    Status st = server_->Receive(frame);
    if (mode == Mode::kAnswerLost && st.ok()) {
      ++answers_lost;
      return Unavailable("connection reset before the answer");
    }
    return st;
  }
  Mode mode = Mode::kUp;
  int answers_lost = 0;

 private:
  ingest::Ingester* server_;
};

class OutboxOutageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = dir_.path() + "/tsdb";
    o.env = &env_;
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    ingester_ = std::make_unique<ingest::Ingester>(db_.get());
    link_ = std::make_unique<Link>(ingester_.get());
  }
  void TearDown() override { ASSERT_TRUE(db_->Close().ok()); }

  std::unique_ptr<ship::Outbox> OpenOutbox(uint64_t max_bytes = 256ull << 20) {
    ship::OutboxOptions o;
    o.dir = dir_.path() + "/outbox";
    o.env = &env_;
    o.max_bytes = max_bytes;
    o.segment_bytes = 256u << 10;
    auto outbox = ship::Outbox::Open(o, link_.get());
    EXPECT_TRUE(outbox.ok()) << outbox.status().ToString();
    return outbox.ok() ? std::move(*outbox) : nullptr;
  }

  std::unique_ptr<collect::CollectionLoop> Loop(ship::Outbox* outbox) {
    collect::LoopOptions lo;
    lo.source = "gpu-node-1";
    lo.env = &env_;
    lo.compress = true;
    std::vector<std::unique_ptr<collect::MetricCollector>> collectors;
    collectors.push_back(std::make_unique<FakeGpus>());
    return std::make_unique<collect::CollectionLoop>(
        lo, std::move(collectors), [outbox](std::string frame) { return outbox->Enqueue(frame); });
  }

  // One collection pass a simulated second, the outbox trying to send after each.
  void Passes(collect::CollectionLoop* loop, ship::Outbox* outbox, int n) {
    for (int i = 0; i < n; ++i) {
      env_.now += 1000;
      loop->RunPass(env_.now);
      (void)outbox->Drain();
    }
  }

  // Every second from the first pass to the last, once, in every GPU series.
  void ExpectEverySecondOnce(int64_t first_ms, int64_t last_ms) {
    auto series =
        db_->Select({{tsdb::MatchType::kEqual, "__name__", "DCGM_FI_DEV_GPU_UTIL"}}, 0, INT64_MAX);
    ASSERT_TRUE(series.ok()) << series.status().ToString();
    ASSERT_EQ(series->size(), static_cast<size_t>(kGpus));
    for (const wire::Series& s : *series) {
      ASSERT_EQ(s.samples.size(), static_cast<size_t>((last_ms - first_ms) / 1000 + 1))
          << wire::LabelsToString(s.labels);
      for (size_t i = 0; i < s.samples.size(); ++i) {
        ASSERT_EQ(s.samples[i].t_ms, first_ms + static_cast<int64_t>(i) * 1000)
            << wire::LabelsToString(s.labels) << " sample " << i;
      }
    }
  }

  TempDir dir_;
  ManualClockEnv env_{kStart, /*follow_monotonic=*/true};
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<ingest::Ingester> ingester_;
  std::unique_ptr<Link> link_;
};

TEST_F(OutboxOutageTest, TenMinutesWithoutTheServerArriveExactlyOnce) {
  auto outbox = OpenOutbox();
  ASSERT_NE(outbox, nullptr);
  auto loop = Loop(outbox.get());
  const int64_t first = kStart + 1000;
  Passes(loop.get(), outbox.get(), 60);  // a minute with the server there
  EXPECT_EQ(outbox->Stats().queued_frames, 0u);

  link_->mode = Link::Mode::kDown;  // the server goes away for 10 minutes
  Passes(loop.get(), outbox.get(), 600);
  ship::OutboxStats during = outbox->Stats();
  EXPECT_EQ(during.queued_frames, 600u);
  EXPECT_GT(during.send_failures, 0u);
  EXPECT_EQ(during.dropped_frames, 0u);
  EXPECT_EQ(during.oldest_queued_ms, first + 60'000);

  // The agent restarts in the middle of it: what was queued is still there.
  loop.reset();
  outbox.reset();
  outbox = OpenOutbox();
  ASSERT_NE(outbox, nullptr);
  EXPECT_EQ(outbox->Stats().queued_frames, 600u);
  loop = Loop(outbox.get());

  // The server comes back, but the first answers are lost: those frames are
  // stored and sent again.
  link_->mode = Link::Mode::kAnswerLost;
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(outbox->SendOne().ok());
  link_->mode = Link::Mode::kUp;
  EXPECT_EQ(outbox->Drain(), 600u);
  EXPECT_EQ(outbox->Stats().queued_frames, 0u);
  Passes(loop.get(), outbox.get(), 60);

  ExpectEverySecondOnce(first, first + 719'000);
  ingest::IngestStats in = ingester_->Stats();
  EXPECT_EQ(link_->answers_lost, 3);
  // The same frame four times (three answers lost, then one heard): stored once.
  EXPECT_EQ(in.duplicate_batches, 3u);
  EXPECT_EQ(in.batches, 720u);
}

TEST_F(OutboxOutageTest, AFullOutboxDropsTheOldestAndSaysSo) {
  // Room for about two minutes of this node's frames.
  auto outbox = OpenOutbox(/*max_bytes=*/1u << 20);
  ASSERT_NE(outbox, nullptr);
  auto loop = Loop(outbox.get());
  link_->mode = Link::Mode::kDown;
  Passes(loop.get(), outbox.get(), 3600);
  ship::OutboxStats full = outbox->Stats();
  EXPECT_GT(full.dropped_frames, 0u);
  EXPECT_LE(full.queued_bytes, 1u << 20);
  EXPECT_EQ(full.dropped_frames + full.queued_frames, 3600u);  // each one dropped or kept

  // What the agent ships about itself says how many were dropped.
  wire::MetricBatchBuilder b("gpu-node-1", env_.now);
  ship::AddOutboxMetrics("metrics", full, env_.now, &b);
  bool said = false;
  for (const wire::Series& s : b.batch().series) {
    if (wire::MetricName(s.labels) == "vigil_outbox_dropped_frames_total") {
      said = s.samples[0].value == static_cast<double>(full.dropped_frames);
    }
  }
  EXPECT_TRUE(said);

  // The newest frames are the ones kept, and they arrive.
  link_->mode = Link::Mode::kUp;
  EXPECT_EQ(outbox->Drain(), full.queued_frames);
  auto series =
      db_->Select({{tsdb::MatchType::kEqual, "__name__", "DCGM_FI_DEV_GPU_UTIL"}}, 0, INT64_MAX);
  ASSERT_TRUE(series.ok());
  ASSERT_FALSE(series->empty());
  EXPECT_EQ((*series)[0].samples.back().t_ms, env_.now);
  EXPECT_EQ((*series)[0].samples.size(), full.queued_frames);
}

}  // namespace
}  // namespace vigil
