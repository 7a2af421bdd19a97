#include "ingest/ingester.h"

#include <gtest/gtest.h>

#include "core/temp_dir.h"
#include "wire/frame.h"

namespace vigil::ingest {
namespace {

class IngesterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tsdb::Options o;
    o.dir = tmp_.path();
    auto db = tsdb::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ingester_ = std::make_unique<Ingester>(db_.get());
  }
  void TearDown() override {
    ingester_.reset();
    if (db_) (void)db_->Close();
    db_.reset();
  }

  static std::string Frame(uint64_t seq, int64_t t, double v, bool compress = false) {
    wire::MetricBatchBuilder b("gpu-node-7", t);
    b.Family("node_load1", wire::MetricType::kGauge, "1m load average.");
    b.Add("node_load1", v);
    wire::MetricBatch batch = b.Release();
    batch.sequence = seq;
    return wire::EncodeFrame(wire::FrameKind::kMetrics, wire::EncodeMetricBatch(batch), compress);
  }

  std::vector<wire::Series> All() {
    auto r = db_->Select({{tsdb::MatchType::kEqual, "__name__", "node_load1"}}, 0, INT64_MAX);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::vector<wire::Series>{};
  }

  TempDir tmp_;
  std::unique_ptr<tsdb::Db> db_;
  std::unique_ptr<Ingester> ingester_;
};

TEST_F(IngesterTest, StoresSamplesTaggedWithTheirNode) {
  ASSERT_TRUE(ingester_->Receive(Frame(1, 1000, 0.5)).ok());
  ASSERT_TRUE(ingester_->Receive(Frame(2, 2000, 0.75, /*compress=*/true)).ok());
  auto series = All();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(wire::LabelsToString(series[0].labels),
            "{__name__=\"node_load1\",node=\"gpu-node-7\"}");
  ASSERT_EQ(series[0].samples.size(), 2u);
  EXPECT_EQ(series[0].samples[1].value, 0.75);
  EXPECT_EQ(ingester_->Stats().samples, 2u);
}

TEST_F(IngesterTest, RetriedBatchIsAcknowledgedButNotStoredTwice) {
  ASSERT_TRUE(ingester_->Receive(Frame(5, 1000, 1)).ok());
  ASSERT_TRUE(ingester_->Receive(Frame(5, 1000, 1)).ok());
  ASSERT_TRUE(ingester_->Receive(Frame(4, 500, 1)).ok());
  EXPECT_EQ(All()[0].samples.size(), 1u);
  EXPECT_EQ(ingester_->Stats().duplicate_batches, 2u);
}

TEST_F(IngesterTest, BadInputIsRejectedWithAReason) {
  EXPECT_EQ(ingester_->Receive("garbage").code(), StatusCode::kInvalidArgument);
  std::string f = Frame(1, 1000, 1);
  f[f.size() - 6] ^= 0x40;
  EXPECT_FALSE(ingester_->Receive(f).ok());

  wire::MetricBatchBuilder b("n", 1000);
  b.Add("bad-name", 1);
  std::string bad =
      wire::EncodeFrame(wire::FrameKind::kMetrics, wire::EncodeMetricBatch(b.batch()), false);
  Status st = ingester_->Receive(bad);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("bad-name"), std::string::npos);
  EXPECT_EQ(ingester_->Stats().rejected_batches, 3u);
  EXPECT_EQ(ingester_->Stats().batches, 0u);
}

}  // namespace
}  // namespace vigil::ingest
