// The `vigil run` efficiency line: finding the run among the jobs API's jobs
// and reading its report's line, from answers as the server writes them.
#include "cli/run_efficiency.h"

#include <gtest/gtest.h>

namespace vigil::cli {
namespace {

using nlohmann::json;

constexpr int64_t kStart = 1'764'460'800'000;

json Jobs() {
  return json::parse(R"([
    {"id":"4242-1-b","name":"old","start_time_ms":1764450000000,"end_time_ms":1764450600000,
     "processes":[{"pid":4242}]},
    {"id":"4242-9-b","name":"train","start_time_ms":1764460800120,"end_time_ms":null,
     "processes":[{"pid":4240,"role":"launcher"},{"pid":4242,"role":"rank"}]},
    {"id":"77-1-b","name":"other","start_time_ms":1764460801000,"processes":[{"pid":77}]}
  ])");
}

TEST(RunEfficiencyTest, TheRunIsTheJobWithItsPidStartedSinceTheWrapper) {
  const json jobs = Jobs();
  const json* job = FindRunJob(jobs, 4242, kStart);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ((*job)["name"], "train");  // not the older job that had the pid
  EXPECT_FALSE(JobEnded(*job));
  EXPECT_EQ(FindRunJob(jobs, 5, kStart), nullptr);
  EXPECT_EQ(FindRunJob(json::object(), 4242, kStart), nullptr);  // never throws
  EXPECT_EQ(FindRunJob(json::parse(R"([1, {"processes": 3}])"), 4242, kStart), nullptr);
  EXPECT_TRUE(JobEnded(jobs[0]));
}

TEST(RunEfficiencyTest, TheLineIsTheReportsSummary) {
  json answer = json::parse(R"j({"status":"success","data":{"job_id":"4242-9-b","name":"train",
    "efficiency":{"summary":"GPU busy 62%, input-bound 30%, idle 8% (0.16 GPU-h idle)"}}})j");
  EXPECT_EQ(EfficiencyLineOf(answer),
            "vigil run: train: GPU busy 62%, input-bound 30%, idle 8% (0.16 GPU-h idle)");
  // No shares (no GPU samples): no line.
  answer["data"]["efficiency"]["summary"] = "";
  EXPECT_EQ(EfficiencyLineOf(answer), std::nullopt);
  EXPECT_EQ(EfficiencyLineOf(json::parse(R"({"data":{"efficiency":null}})")), std::nullopt);
  EXPECT_EQ(EfficiencyLineOf(json::array()), std::nullopt);
  // A name with control characters does not reach the terminal as such.
  answer = json::parse(R"({"data":{"name":"a\u001b[2Jb","efficiency":{"summary":"GPU busy 1%"}}})");
  EXPECT_EQ(EfficiencyLineOf(answer)->find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace vigil::cli
