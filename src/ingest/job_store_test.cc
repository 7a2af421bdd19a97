#include "ingest/job_store.h"

#include <gtest/gtest.h>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "ingest/ingester.h"
#include "wire/frame.h"

namespace vigil::ingest {
namespace {

std::string Snapshot(const std::string& node, std::vector<std::string> job_ids,
                     bool ended = false) {
  wire::JobsSnapshot s;
  s.node = node;
  s.time_ms = 1'764'460'800'000;
  for (const std::string& id : job_ids) {
    wire::JobRecord t;
    t.id = id;
    t.name = "train";
    t.ended = ended;
    s.jobs.push_back(t);
  }
  wire::NodeKernelEventRecord k;
  k.kernel.time_ms = 5;
  k.kernel.event.kind = "xid";
  k.kernel.event.details.push_back({"xid", "79", true});
  s.node_events.push_back(k);
  return wire::EncodeJobsSnapshot(s);
}

std::vector<std::string> NodesOf(const JobStore& r) {
  std::vector<std::string> out;
  for (const NodeJobs& n : r.Nodes()) {
    std::string jobs;
    for (const auto& t : n.snapshot.jobs) jobs += t.id + (t.ended ? "(ended)" : "") + ",";
    out.push_back(n.snapshot.node + ":" + jobs);
  }
  return out;
}

TEST(JobStoreTest, TheNewestSnapshotOfEachNodeIsKeptAndSurvivesARestart) {
  TempDir dir;
  ManualClockEnv env;
  JobStoreOptions o;
  o.dir = dir.path() + "/nodes";
  o.env = &env;
  {
    JobStore r(o);
    ASSERT_TRUE(r.Receive(Snapshot("gpu-1", {"a", "b"})).ok());
    ASSERT_TRUE(r.Receive(Snapshot("../../etc/passwd", {"c"})).ok());
    env.now += 10'000;
    ASSERT_TRUE(r.Receive(Snapshot("gpu-1", {"a"}, /*ended=*/true)).ok());  // replaces
    EXPECT_EQ(NodesOf(r), (std::vector<std::string>{"../../etc/passwd:c,", "gpu-1:a(ended),"}));
    auto nodes = r.Nodes();
    EXPECT_EQ(nodes[1].received_ms, env.now);
    ASSERT_EQ(nodes[1].snapshot.node_events.size(), 1u);
    EXPECT_EQ(nodes[1].snapshot.node_events[0].kernel.event.kind, "xid");
  }
  // Files are named by the node's hex, inside the directory.
  auto files = Env::Default()->ListDir(o.dir);
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 2u);
  for (const std::string& f : *files) EXPECT_EQ(f.find('/'), std::string::npos) << f;

  JobStore again(o);
  EXPECT_EQ(NodesOf(again), (std::vector<std::string>{"../../etc/passwd:c,", "gpu-1:a(ended),"}));
}

TEST(JobStoreTest, BadSnapshotsAreRefusedAndChangeNothing) {
  ManualClockEnv env;
  JobStoreOptions o;
  o.env = &env;
  JobStore r(o);
  ASSERT_TRUE(r.Receive(Snapshot("gpu-1", {"a"})).ok());
  EXPECT_EQ(r.Receive("{not json").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Receive(Snapshot("", {"x"})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Receive(Snapshot(std::string(300, 'n'), {"x"})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.Receive(std::string(wire::kMaxJobsSnapshotBytes + 1, ' ')).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(NodesOf(r), (std::vector<std::string>{"gpu-1:a,"}));
}

TEST(JobStoreTest, AtMostMaxNodesTheLeastRecentlyHeardGoes) {
  ManualClockEnv env;
  JobStoreOptions o;
  o.env = &env;
  o.max_nodes = 2;
  JobStore r(o);
  ASSERT_TRUE(r.Receive(Snapshot("n1", {"a"})).ok());
  env.now += 1;
  ASSERT_TRUE(r.Receive(Snapshot("n2", {"b"})).ok());
  env.now += 1;
  ASSERT_TRUE(r.Receive(Snapshot("n1", {"a"})).ok());  // n1 heard again
  env.now += 1;
  ASSERT_TRUE(r.Receive(Snapshot("n3", {"c"})).ok());
  EXPECT_EQ(NodesOf(r), (std::vector<std::string>{"n1:a,", "n3:c,"}));
}

TEST(JobStoreTest, TheIngesterTakesJobsFramesOnlyWhereTheyAreKept) {
  ManualClockEnv env;
  JobStoreOptions o;
  o.env = &env;
  JobStore r(o);
  IngesterOptions io;
  io.job_store = &r;
  Ingester ingester(nullptr, nullptr, io);
  std::string frame = wire::EncodeFrame(wire::FrameKind::kJobs, Snapshot("gpu-9", {"z"}), true);
  ASSERT_TRUE(ingester.Receive(frame).ok());
  EXPECT_EQ(NodesOf(r), (std::vector<std::string>{"gpu-9:z,"}));
  EXPECT_EQ(ingester.Stats().job_snapshots, 1u);

  Ingester without(nullptr);
  EXPECT_EQ(without.Receive(frame).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(without.Stats().rejected_batches, 1u);
}

}  // namespace
}  // namespace vigil::ingest
