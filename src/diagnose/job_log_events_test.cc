#include "diagnose/job_log_events.h"

#include <gtest/gtest.h>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "parse/training/log_events.h"

namespace vigil::diagnose {
namespace {

constexpr int64_t kNow = 1'764'460'800'000;  // ms
constexpr int64_t kMs = 1'000'000;           // ns

// "cuda_oom@<time ms>" for each event: what a report would show.
std::vector<std::string> Names(const std::vector<TimedEvent>& events) {
  std::vector<std::string> out;
  for (const TimedEvent& e : events) {
    out.push_back(std::string(parse::training::EventKindName(e.event.kind)) + "@" +
                  std::to_string(e.time_ms - kNow));
  }
  return out;
}

class JobLogEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logstore::Options lo;
    lo.dir = tmp_.path() + "/logs";
    lo.env = &env_;
    lo.background_maintenance = false;
    lo.retention_days = 0;
    auto logs = logstore::LogStore::Open(lo);
    ASSERT_TRUE(logs.ok()) << logs.status().ToString();
    logs_ = std::move(*logs);
  }
  void TearDown() override { ASSERT_TRUE(logs_->Close().ok()); }

  // One batch of records of `job`'s stream `source` at t_ms after kNow.
  void Log(const std::string& job, int64_t t_ms, const std::vector<std::string>& records,
           const std::string& source = "stdout") {
    wire::LogBatch b;
    b.source = "gpu-1";
    wire::LogStream s;
    s.source_id = "file:" + job + "/" + source;
    s.labels = {{"job", job}, {"node", "gpu-1"}, {"stream", source}};
    uint64_t& offset = offsets_[s.source_id];
    s.start_offset = offset;
    for (const auto& text : records) {
      wire::LogRecord r;
      r.time_ns = (kNow + t_ms) * kMs;
      r.offset = offset;
      r.line = text;
      offset += text.size() + 1;
      s.records.push_back(r);
    }
    s.end_offset = offset;
    b.streams.push_back(s);
    ASSERT_TRUE(logs_->Append("gpu-1", b).ok());
  }

  static RunLines Of(const std::string& job) {
    RunLines r;
    r.matchers = {{logstore::MatchType::kEqual, "job", job},
                  {logstore::MatchType::kEqual, "node", "gpu-1"}};
    return r;
  }

  // What a reader that never saw the run finds now.
  std::vector<std::string> Fresh(const std::string& job, size_t window, const RunLines& lines) {
    JobLogEvents cold(window);
    return Names(cold.Get(*logs_, job, lines));
  }

  TempDir tmp_;
  ManualClockEnv env_{kNow};
  std::unique_ptr<logstore::LogStore> logs_;
  std::map<std::string, uint64_t> offsets_;
};

const char kTraceback[] =
    "Traceback (most recent call last):\n"
    "  File \"/work/train.py\", line 88, in <module>\n"
    "    loss.backward()\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0";

TEST_F(JobLogEventsTest, ReadingAsTheRunGoesFindsWhatOneFreshReadFinds) {
  JobLogEvents live(2000);
  const RunLines lines = Of("train");
  Log("train", 0, {"step 1 loss 2.5", "step 2 loss 2.4"});
  EXPECT_TRUE(live.Get(*logs_, "train", lines).empty());
  Log("train", 1000, {"WARNING: nan loss detected, stopping"});
  Log("train", 1500, {"epoch 1 done"}, "train.log");
  EXPECT_EQ(Names(live.Get(*logs_, "train", lines)), std::vector<std::string>{"nan_loss@1000"});
  // Another job's lines are not this run's.
  Log("other", 1700, {"Segmentation fault (core dumped)"});
  Log("train", 2000, {kTraceback});
  Log("train", 2000, {"NaN loss at step 120"}, "train.log");
  const std::vector<std::string> expected = {"nan_loss@1000", "cuda_oom@2000", "traceback@2000",
                                             "nan_loss@2000"};
  EXPECT_EQ(Names(live.Get(*logs_, "train", lines)), expected);
  EXPECT_EQ(Fresh("train", 2000, lines), expected);
  // Nothing new: the same events, not the same ones twice.
  EXPECT_EQ(Names(live.Get(*logs_, "train", lines)), expected);
}

TEST_F(JobLogEventsTest, OnlyTheNewestWindowOfLinesCounts) {
  JobLogEvents live(5);
  const RunLines lines = Of("train");
  Log("train", 0, {"Segmentation fault (core dumped)", "step 1"});
  EXPECT_EQ(Names(live.Get(*logs_, "train", lines)), std::vector<std::string>{"segfault@0"});
  Log("train", 100, {"step 2", "step 3", "step 4"});
  EXPECT_EQ(Names(live.Get(*logs_, "train", lines)), std::vector<std::string>{"segfault@0"});
  Log("train", 200, {"step 5"});  // the segfault is now the sixth newest line
  EXPECT_TRUE(live.Get(*logs_, "train", lines).empty());
  EXPECT_TRUE(Fresh("train", 5, lines).empty());
}

TEST_F(JobLogEventsTest, MoreThanAWindowBetweenTwoReadsIsReadAfresh) {
  JobLogEvents live(4);
  const RunLines lines = Of("train");
  Log("train", 0, {"WARNING: nan loss detected, stopping"});
  EXPECT_EQ(live.Get(*logs_, "train", lines).size(), 1u);
  Log("train", 100, {"step 1", "step 2", "Segmentation fault (core dumped)", "step 3", "step 4"});
  EXPECT_EQ(Names(live.Get(*logs_, "train", lines)), std::vector<std::string>{"segfault@100"});
  EXPECT_EQ(Fresh("train", 4, lines), std::vector<std::string>{"segfault@100"});
}

TEST_F(JobLogEventsTest, AnEndedRunIgnoresLaterLinesAndAFinalOneIsNotReadAgain) {
  JobLogEvents live(2000);
  RunLines lines = Of("train");
  lines.start_ns = (kNow + 100) * kMs;
  lines.end_ns = (kNow + 5000) * kMs;
  Log("train", 0, {"Segmentation fault (core dumped)"});  // before the run
  Log("train", 1000, {"NaN loss at step 120"});
  EXPECT_EQ(Names(live.Get(*logs_, "train", lines)), std::vector<std::string>{"nan_loss@1000"});
  Log("train", 4000, {kTraceback});
  Log("train", 6000, {"WARNING: nan loss detected, stopping"});  // after its end
  lines.final = true;
  const std::vector<std::string> expected = {"nan_loss@1000", "cuda_oom@4000", "traceback@4000"};
  EXPECT_EQ(Names(live.Get(*logs_, "train", lines)), expected);
  EXPECT_EQ(Fresh("train", 2000, lines), expected);
  Log("train", 4500, {"Segmentation fault (core dumped)"});  // too late to count
  EXPECT_EQ(Names(live.Get(*logs_, "train", lines)), expected);
}

TEST_F(JobLogEventsTest, OtherMatchersReadTheRunAfreshAndForgottenRunsGo) {
  JobLogEvents live(2000);
  Log("a", 0, {"NaN loss at step 1"});
  Log("b", 0, {"Segmentation fault (core dumped)"});
  EXPECT_EQ(Names(live.Get(*logs_, "run-1", Of("a"))), std::vector<std::string>{"nan_loss@0"});
  // The same run, now known by other labels (its lines carry its run id).
  EXPECT_EQ(Names(live.Get(*logs_, "run-1", Of("b"))), std::vector<std::string>{"segfault@0"});
  live.Keep({});
  Log("a", 10, {"Segmentation fault (core dumped)"});
  EXPECT_EQ(Names(live.Get(*logs_, "run-1", Of("a"))),
            (std::vector<std::string>{"nan_loss@0", "segfault@10"}));
}

TEST_F(JobLogEventsTest, ARunWithLinesIsRememberedUntilForgotten) {
  JobLogEvents live(2000);
  RunLines lines = Of("train");
  lines.start_ns = (kNow + 100) * kMs;
  Log("train", 0, {"step 0"});  // before the run
  EXPECT_FALSE(live.HasLines(*logs_, "run-1", lines));
  Log("train", 200, {"step 1"});
  EXPECT_TRUE(live.HasLines(*logs_, "run-1", lines));
  // Remembered: not asked again (a store without the lines says the same).
  logstore::Options lo;
  lo.dir = tmp_.path() + "/empty";
  lo.env = &env_;
  lo.background_maintenance = false;
  auto empty = logstore::LogStore::Open(lo);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(live.HasLines(**empty, "run-1", lines));
  EXPECT_FALSE(live.HasLines(**empty, "run-2", lines));
  live.Keep({"run-2"});
  EXPECT_FALSE(live.HasLines(**empty, "run-1", lines));
  ASSERT_TRUE((*empty)->Close().ok());
}

}  // namespace
}  // namespace vigil::diagnose
