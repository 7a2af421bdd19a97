#include "ingest/staleness.h"

#include <gtest/gtest.h>

#include <map>

#include "store/tsdb/stale.h"

namespace vigil::ingest {
namespace {

// A pass of `node` at t: one gauge per name in `gpus`.
wire::MetricBatch Pass(int64_t t, std::vector<std::string> gpus, const std::string& node = "n1") {
  wire::MetricBatchBuilder b(node, t);
  for (const auto& g : gpus) b.Add("util", {{"gpu", g}, {"node", node}}, 98);
  return b.Release();
}

// "gpu@t" of each marker, checking it is the stale NaN.
std::vector<std::string> Ended(const std::vector<wire::Series>& markers) {
  std::vector<std::string> out;
  for (const auto& m : markers) {
    EXPECT_EQ(m.samples.size(), 1u);
    EXPECT_TRUE(tsdb::IsStaleNaN(m.samples[0].value));
    out.push_back(std::string(wire::LabelValue(m.labels, "gpu")) + "@" +
                  std::to_string(m.samples[0].t_ms));
  }
  std::sort(out.begin(), out.end());
  return out;
}

using V = std::vector<std::string>;

// Store ids as a Db would give them: one per label set, never reused.
class Ids {
 public:
  std::vector<uint64_t> Of(const wire::MetricBatch& b) {
    std::vector<uint64_t> out;
    for (const auto& s : b.series) {
      auto [it, fresh] = ids_.try_emplace(wire::LabelsToString(s.labels), ids_.size() + 1);
      out.push_back(it->second);
    }
    return out;
  }

 private:
  std::map<std::string, uint64_t> ids_;
};

// Observe() with the batch's ids, as the ingester calls it.
class Tracker {
 public:
  explicit Tracker(StalenessOptions o = {}) : t_(o) {}
  std::vector<wire::Series> Observe(const std::string& key, const wire::MetricBatch& pass,
                                    const std::vector<std::string>* only_names = nullptr) {
    return t_.Observe(key, pass, ids_.Of(pass), only_names);
  }
  StalenessStats Stats() const { return t_.Stats(); }

 private:
  StalenessTracker t_;
  Ids ids_;
};

TEST(StalenessTrackerTest, ASeriesMissingFromThePassEndsAtThePassTime) {
  Tracker t;
  EXPECT_EQ(Ended(t.Observe("n1", Pass(1000, {"0", "1", "2"}))), V{});  // first pass
  EXPECT_EQ(Ended(t.Observe("n1", Pass(2000, {"0", "2"}))), V{"1@2000"});
  EXPECT_EQ(Ended(t.Observe("n1", Pass(3000, {"0", "2"}))), V{});          // marked once
  EXPECT_EQ(Ended(t.Observe("n1", Pass(4000, {"0", "1"}))), V{"2@4000"});  // 1 came back
  EXPECT_EQ(Ended(t.Observe("n1", Pass(5000, {}))), (V{"0@5000", "1@5000"}));
  EXPECT_EQ(t.Stats().markers, 4u);
  EXPECT_EQ(t.Stats().tracked_series, 0u);
}

TEST(StalenessTrackerTest, SourcesAreApart) {
  Tracker t;
  t.Observe("n1", Pass(1000, {"0"}, "n1"));
  t.Observe("n2", Pass(1000, {"0"}, "n2"));
  EXPECT_EQ(Ended(t.Observe("n2", Pass(2000, {}, "n2"))), V{"0@2000"});
  EXPECT_EQ(Ended(t.Observe("n1", Pass(2000, {"0"}, "n1"))), V{});
}

// An older pass, or a batch that is not a pass, changes nothing.
TEST(StalenessTrackerTest, OldPassesAndNonPasses) {
  Tracker t;
  t.Observe("n1", Pass(1000, {"0", "1"}));
  EXPECT_EQ(Ended(t.Observe("n1", Pass(2000, {"0"}))), V{"1@2000"});
  EXPECT_EQ(Ended(t.Observe("n1", Pass(1500, {}))), V{});
  EXPECT_EQ(t.Stats().old_passes, 1u);
  wire::MetricBatch pushed = Pass(3000, {});
  pushed.pass_time_ms = 0;
  EXPECT_EQ(Ended(t.Observe("n1", pushed)), V{});
  EXPECT_EQ(Ended(t.Observe("n1", Pass(3000, {}))), V{"0@3000"});
}

// Values with times of their own (TensorBoard scalars recorded earlier) are
// not the pass's: they are never tracked, so never marked.
TEST(StalenessTrackerTest, SamplesWithTimesOfTheirOwnAreNotTracked) {
  Tracker t;
  wire::MetricBatchBuilder b("n1", 1000);
  b.Add("util", {{"gpu", "0"}, {"node", "n1"}}, 98);
  b.AddAt("training_loss", {{"job", "j"}, {"node", "n1"}}, 0.5, 400);
  t.Observe("n1", b.Release());
  EXPECT_EQ(t.Stats().tracked_series, 1u);
  EXPECT_EQ(Ended(t.Observe("n1", Pass(2000, {"0"}))), V{});
}

// A Pushgateway POST replaces only the metric names it pushes.
TEST(StalenessTrackerTest, OnlyNamesLimitsWhatAPassReplaces) {
  Tracker t;
  wire::MetricBatchBuilder b("n1", 1000);
  b.Add("loss", {{"gpu", "a"}}, 1);
  b.Add("util", {{"gpu", "0"}}, 98);
  t.Observe("g", b.Release());
  wire::MetricBatchBuilder post("n1", 2000);
  post.Add("loss", {{"gpu", "b"}}, 1);
  std::vector<std::string> names = {"loss"};
  EXPECT_EQ(Ended(t.Observe("g", post.Release(), &names)), V{"a@2000"});
  EXPECT_EQ(Ended(t.Observe("g", Pass(3000, {}))), (V{"0@3000", "b@3000"}));
}

TEST(StalenessTrackerTest, BoundedSourcesAndSeries) {
  StalenessOptions o;
  o.max_sources = 2;
  o.max_series_per_source = 2;
  Tracker t(o);
  t.Observe("n1", Pass(1000, {"0", "1", "2"}));
  EXPECT_EQ(t.Stats().untracked_series, 1u);
  EXPECT_EQ(t.Stats().tracked_series, 2u);
  t.Observe("n2", Pass(1000, {"0"}, "n2"));
  t.Observe("n3", Pass(1000, {"0"}, "n3"));  // n1 is the least recent: forgotten
  EXPECT_EQ(t.Stats().sources_evicted, 1u);
  // A forgotten source starts again: no false markers.
  EXPECT_EQ(Ended(t.Observe("n1", Pass(2000, {}))), V{});
  EXPECT_EQ(Ended(t.Observe("n3", Pass(2000, {}, "n3"))), V{"0@2000"});
}

}  // namespace
}  // namespace vigil::ingest
