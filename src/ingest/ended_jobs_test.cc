#include "ingest/ended_jobs.h"

#include <gtest/gtest.h>

namespace vigil::ingest {
namespace {

wire::JobRecord Job(const std::string& id, const std::string& name, bool ended, int64_t end = 0) {
  wire::JobRecord j;
  j.id = id;
  j.name = name;
  j.ended = ended;
  j.last_seen_ms = end;
  if (ended) j.run_exit = wire::RunExitRecord{end, 0, 0, ""};
  return j;
}

wire::JobsSnapshot Snap(std::vector<wire::JobRecord> jobs) {
  wire::JobsSnapshot s;
  s.node = "n1";
  s.jobs = std::move(jobs);
  return s;
}

std::vector<std::string> Due(EndedJobs* e, int64_t now) {
  std::vector<std::string> out;
  for (const EndedJob& j : e->TakeDue("n1", now))
    out.push_back(j.name + "@" + std::to_string(j.end_ms) + (j.name_running ? " (name runs)" : ""));
  return out;
}

using V = std::vector<std::string>;

// A job is due once, when the grace after the snapshot that said it ended
// has passed (the server's clock), with its end time.
TEST(EndedJobsTest, AnEndedJobIsDueOnceAfterTheGrace) {
  EndedJobs e;  // grace 30 s
  e.Note(Snap({Job("1", "train", false)}), 100'000);
  EXPECT_EQ(Due(&e, 100'000), V{});
  e.Note(Snap({Job("1", "train", true, 104'000)}), 110'000);
  EXPECT_EQ(Due(&e, 139'999), V{});
  e.Note(Snap({Job("1", "train", true, 104'000)}), 120'000);  // seen again: still from 110 s
  EXPECT_EQ(Due(&e, 140'000), V{"train@104000"});
  EXPECT_EQ(Due(&e, 200'000), V{});
  e.Note(Snap({Job("1", "train", true, 104'000)}), 210'000);
  EXPECT_EQ(Due(&e, 300'000), V{});
}

// A rerun under the same name writes the same series (the ingester then
// ends only the ended run's own, by `run`); a job that ended long
// before the server heard of it (restart, outage) has faded already; other
// nodes are apart.
TEST(EndedJobsTest, RerunsOldEndsAndOtherNodesAreLeftAlone) {
  EndedJobs e;
  e.Note(Snap({Job("1", "train", true, 1'100'000), Job("2", "train", false),
               Job("3", "eval", true, 1'100'000), Job("4", "old", true, 1'000)}),
         1'110'000);
  EXPECT_EQ(Due(&e, 1'140'000), (V{"train@1100000 (name runs)", "eval@1100000"}));
  EXPECT_TRUE(e.TakeDue("n2", 1'140'000).empty());
}

}  // namespace
}  // namespace vigil::ingest
