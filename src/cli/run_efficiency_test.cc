// The `vigil run` efficiency line: finding the run among the jobs API's jobs
// and reading its report's line, from answers as the server writes them.
#include "cli/run_efficiency.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "net/http_server.h"

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

// PrintRunEfficiency against a server answering as the jobs API does: the
// run is listed running at first, then ended; the line follows its report.
class PrintRunEfficiencyTest : public ::testing::Test {
 protected:
  void Serve(bool with_gpu) {
    net::Router router;
    router.Handle("GET", "/api/v1/jobs", [this, with_gpu](const net::HttpRequest&) {
      const bool ended = ++job_polls_ >= 3;
      json job = {{"id", "run-4242-1"},
                  {"name", "train"},
                  {"node", "gpu 1"},
                  {"start_time_ms", kStart + 100},
                  {"end_time_ms", ended ? json(kStart + 20'000) : json()},
                  {"processes", json::array({{{"pid", 4242}}})},
                  {"gpus", with_gpu ? json::array({{{"gpu", "0"}}}) : json::array()}};
      return net::HttpResponse::Json(
          200, json{{"status", "success"}, {"data", {{"jobs", json::array({job})}}}}.dump());
    });
    router.Handle("GET", "/api/v1/jobs/efficiency", [this](const net::HttpRequest& req) {
      ++report_asks_;
      std::lock_guard lock(mu_);
      query_ = req.target;
      return net::HttpResponse::Json(200, R"({"status":"success","data":{"job_id":"run-4242-1",
        "name":"train","efficiency":{"summary":"GPU busy 70%, idle 30%"}}})");
    });
    net::HttpServer::Options o;
    o.listen = "127.0.0.1:0";
    server_ = std::make_unique<net::HttpServer>(o, std::move(router));
    ASSERT_TRUE(server_->Start().ok());
    ::setenv("VIGIL_URL", ("http://127.0.0.1:" + std::to_string(server_->bound_port())).c_str(), 1);
  }
  void TearDown() override { ::unsetenv("VIGIL_URL"); }

  std::string Printed(int64_t wait_ms) {
    ::testing::internal::CaptureStderr();
    PrintRunEfficiency("", 4242, kStart, wait_ms);
    return ::testing::internal::GetCapturedStderr();
  }

  std::atomic<int> job_polls_{0};
  std::atomic<int> report_asks_{0};
  std::mutex mu_;
  std::string query_;                        // guarded by mu_ (written by the server's threads)
  std::unique_ptr<net::HttpServer> server_;  // last: stopped before what its handlers use
};

TEST_F(PrintRunEfficiencyTest, WaitsForTheRunToEndThenPrintsItsLine) {
  Serve(true);
  EXPECT_EQ(Printed(10'000), "vigil run: train: GPU busy 70%, idle 30%\n");
  EXPECT_EQ(job_polls_, 3);  // until the server saw it end
  EXPECT_EQ(report_asks_, 1);
  std::lock_guard lock(mu_);
  EXPECT_NE(query_.find("id=run-4242-1&node=gpu%201"), std::string::npos) << query_;
}

TEST_F(PrintRunEfficiencyTest, ARunWithoutAGpuPrintsNothing) {
  Serve(false);
  EXPECT_EQ(Printed(10'000), "");
  EXPECT_EQ(report_asks_, 0);
}

TEST_F(PrintRunEfficiencyTest, NoInstanceNoLineNoWait) {
  ::setenv("VIGIL_URL", "http://127.0.0.1:1", 1);  // nothing listens
  EXPECT_EQ(Printed(10'000), "");
}

}  // namespace
}  // namespace vigil::cli
