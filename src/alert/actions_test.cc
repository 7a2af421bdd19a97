// The optional actions on a real alerts.db with a manual clock: scheduled
// by a firing alert (once), run after the confirm window with the VIGIL_*
// environment, cancelled ones never, dry runs only recorded, the timeout
// kills, output bounded, and a restart never runs one twice.
#include "alert/actions.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "alert/alert_store.h"
#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "store/common/sqlite.h"

namespace vigil::alert {
namespace {

constexpr int64_t kWindow = 60'000;

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Sample Finished(const std::string& job, const std::string& run) {
  Sample s;
  s.labels = {{"job", job}, {"node", "n1"}, {"run", run}};
  s.value = 1;
  s.fire = s.hold = true;
  s.owner = "alice";
  s.description_en = "Ran 2h on 8 GPUs";
  s.description_zh = "运行 2h";
  return s;
}

const LevelKey kFinished{"job_finished", Severity::kInfo, 0, 0};

class ActionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    marker_ = dir_.path() + "/marker";
    spec_.name = "stop-instance";
    spec_.command = {"/bin/sh", "-c",
                     "echo \"$VIGIL_ACTION $VIGIL_ALERT $VIGIL_JOB $VIGIL_NODE $VIGIL_RUN "
                     "$VIGIL_OWNER\" >> " +
                         marker_ + "; echo stopped"};
    spec_.dry_run = false;
    spec_.confirm_window_ms = kWindow;
    spec_.timeout_ms = 10'000;
  }
  void Open(std::vector<ActionSpec> specs) {
    runner_.reset();
    store_.reset();
    AlertStoreOptions o;
    o.path = dir_.path() + "/alerts.db";
    auto store = AlertStore::Open(o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    ActionsOptions ao;
    ao.actions = std::move(specs);
    ao.external_url = "http://vigil:9300";
    auto r = ActionRunner::Open(store_->db(), &mu_, &env_, ao);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    runner_ = std::move(r).value();
  }
  // One evaluation of job_finished with `samples`; returns them annotated.
  std::vector<Sample> Observe(std::vector<Sample> samples, const LevelKey& level = kFinished,
                              const std::map<std::string, Alert>& active = {}) {
    std::lock_guard lock(mu_);
    runner_->ObserveLocked(level, active, &samples, env_.NowMillis());
    return samples;
  }
  ActionEntry Only() {
    auto list = runner_->List(100);
    EXPECT_TRUE(list.ok());
    EXPECT_EQ(list->size(), 1u);
    return list->empty() ? ActionEntry{} : list->front();
  }
  // The action with no confirm window, run for one finished run.
  ActionEntry RunOnce() {
    spec_.confirm_window_ms = 0;
    Open({spec_});
    Observe({Finished("train-a", "r1")});
    runner_->RunDue();
    return Only();
  }
  void Exec(const std::string& sql) {
    std::lock_guard lock(mu_);
    ASSERT_TRUE(store_->db()->Exec(sql).ok());
  }

  TempDir dir_;
  ManualClockEnv env_;
  std::mutex mu_;
  std::unique_ptr<AlertStore> store_;
  std::unique_ptr<ActionRunner> runner_;
  ActionSpec spec_;
  std::string marker_;
};

TEST_F(ActionsTest, RunsOnceAfterTheConfirmWindowWithItsEnvironment) {
  Open({spec_});
  std::vector<Sample> out = Observe({Finished("train-a", "r1")});
  ActionEntry e = Only();
  EXPECT_EQ(e.state, ActionState::kScheduled);
  EXPECT_EQ(e.run_at_ms, env_.NowMillis() + kWindow);
  EXPECT_EQ(e.owner, "alice");
  // The description keeps the run's summary and gains the line, both languages.
  EXPECT_EQ(out[0].description_en,
            "Ran 2h on 8 GPUs\nAction stop-instance will run at 00:01:00 UTC unless cancelled: "
            "http://vigil:9300/#actions&id=" +
                std::to_string(e.id));
  EXPECT_NE(out[0].description_zh.find("操作 stop-instance 将于 00:01:00 UTC 执行"),
            std::string::npos);
  // Later evaluations of the same run schedule nothing more.
  Observe({Finished("train-a", "r1")});
  Only();

  runner_->RunDue();
  EXPECT_FALSE(env_.FileExists(marker_)) << "not before its window ends";
  env_.now += kWindow;
  runner_->RunDue();
  runner_->RunDue();
  EXPECT_EQ(ReadAll(marker_), "stop-instance job_finished train-a n1 r1 alice\n");
  e = Only();
  EXPECT_EQ(e.state, ActionState::kRan);
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_EQ(e.output, "stopped\n");
  EXPECT_EQ(e.started_ms, env_.NowMillis());
  EXPECT_EQ(e.finished_ms, env_.NowMillis());
}

TEST_F(ActionsTest, MatchIsAGlobOnTheAlertsLabels) {
  spec_.match = {{"job", "train-*"}};
  Open({spec_});
  std::vector<Sample> out = Observe({Finished("eval-1", "r1")});
  EXPECT_EQ(out[0].description_en, "Ran 2h on 8 GPUs");
  EXPECT_TRUE(runner_->List(10)->empty());
  Observe({Finished("train-7", "r2")});
  EXPECT_EQ(Only().labels, AlertLabels("job_finished", Severity::kInfo,
                                       {{"job", "train-7"}, {"node", "n1"}, {"run", "r2"}}));
}

TEST_F(ActionsTest, ACancelledActionNeverRuns) {
  Open({spec_});
  Observe({Finished("train-a", "r1")});
  const int64_t id = Only().id;
  auto cancelled = runner_->Cancel(id, "alice");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ(cancelled->state, ActionState::kCancelled);
  EXPECT_EQ(cancelled->cancelled_by, "alice");
  EXPECT_EQ(cancelled->finished_ms, env_.NowMillis());
  // The description now says so.
  EXPECT_NE(Observe({Finished("train-a", "r1")})[0].description_en.find(
                "Action stop-instance was cancelled by alice"),
            std::string::npos);
  env_.now += 2 * kWindow;
  runner_->RunDue();
  EXPECT_FALSE(env_.FileExists(marker_));
  EXPECT_EQ(runner_->Cancel(id, "bob").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(runner_->Cancel(id + 100, "bob").status().code(), StatusCode::kNotFound);
}

TEST_F(ActionsTest, CancellingOnceItRanIsRefused) {
  ASSERT_EQ(RunOnce().state, ActionState::kRan);
  auto refused = runner_->Cancel(Only().id, "alice");
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("it is ran"), std::string::npos);
}

TEST_F(ActionsTest, ADryRunOnlyRecordsWhatItWouldHaveRun) {
  spec_.dry_run = true;
  Open({spec_});
  std::vector<Sample> out = Observe({Finished("train-a", "r1")});
  EXPECT_NE(out[0].description_en.find("(dry run: nothing will run) will be recorded at"),
            std::string::npos);
  env_.now += kWindow;
  runner_->RunDue();
  EXPECT_FALSE(env_.FileExists(marker_));
  ActionEntry e = Only();
  EXPECT_EQ(e.state, ActionState::kDryRun);
  EXPECT_FALSE(e.exit_code.has_value());
  EXPECT_EQ(e.output.rfind("dry run: would have run /bin/sh -c echo", 0), 0u) << e.output;
}

TEST_F(ActionsTest, TheTimeoutKillsTheCommandAndWhatItStarted) {
  spec_.command = {"/bin/sh", "-c", "echo started; sleep 30 & sleep 30"};
  spec_.timeout_ms = 300;
  const auto t0 = std::chrono::steady_clock::now();
  ActionEntry e = RunOnce();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(e.state, ActionState::kFailed);
  EXPECT_EQ(e.error, "killed after its timeout of 300ms");
  EXPECT_EQ(e.output, "started\n");
  EXPECT_FALSE(e.exit_code.has_value());
}

TEST_F(ActionsTest, OutputIsBoundedAndAFailureKeepsItsStatus) {
  spec_.command = {"/bin/sh", "-c", "head -c 10000 /dev/zero | tr '\\0' x; exit 3"};
  ActionEntry e = RunOnce();
  EXPECT_EQ(e.state, ActionState::kFailed);
  EXPECT_EQ(e.exit_code, 3);
  EXPECT_EQ(e.error, "exited with status 3");
  EXPECT_EQ(e.output, std::string(4096, 'x'));
  EXPECT_TRUE(e.output_truncated);
}

TEST_F(ActionsTest, AProgramThatCannotStartFails) {
  spec_.command = {"/nonexistent/stop-instance"};
  ActionEntry e = RunOnce();
  EXPECT_EQ(e.state, ActionState::kFailed);
  EXPECT_EQ(e.error, "cannot start /nonexistent/stop-instance: No such file or directory");
}

TEST_F(ActionsTest, ARestartNeverRunsAnActionTwice) {
  Open({spec_});
  Observe({Finished("train-a", "r1")});
  env_.now += kWindow;
  runner_->RunDue();
  ASSERT_EQ(ReadAll(marker_).size(), 47u);
  Open({spec_});  // a restart
  Observe({Finished("train-a", "r1")});
  runner_->RunDue();
  EXPECT_EQ(ReadAll(marker_).size(), 47u);
  EXPECT_EQ(Only().state, ActionState::kRan);
}

TEST_F(ActionsTest, ARestartDuringItsCommandMarksItFailed) {
  Open({spec_});
  Observe({Finished("train-a", "r1")});
  Exec("UPDATE actions SET state = 'running'");  // as if Vigil died mid-command
  Open({spec_});
  env_.now += kWindow;
  runner_->RunDue();
  EXPECT_FALSE(env_.FileExists(marker_));
  ActionEntry e = Only();
  EXPECT_EQ(e.state, ActionState::kFailed);
  EXPECT_EQ(e.error, "interrupted: Vigil stopped while it ran");
}

TEST_F(ActionsTest, ATimeThatPassedWhileDownRunsIfRecentElseIsMissed) {
  Open({spec_});
  Observe({Finished("train-a", "r1")});
  Observe({Finished("train-b", "r2")});
  Exec("UPDATE actions SET run_at_ms = run_at_ms - 3 * 60000 WHERE trigger_key LIKE '%r2'");
  env_.now += kWindow + kWindow / 2;  // down from before r1's time until half a window past it
  Open({spec_});
  runner_->RunDue();
  auto list = runner_->List(10);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].state, ActionState::kMissed);
  EXPECT_EQ((*list)[1].state, ActionState::kRan);
  EXPECT_EQ(ReadAll(marker_), "stop-instance job_finished train-a n1 r1 alice\n");
}

TEST_F(ActionsTest, AnActionNoLongerConfiguredIsCancelledByVigil) {
  Open({spec_});
  Observe({Finished("train-a", "r1")});
  Open({});
  ActionEntry e = Only();
  EXPECT_EQ(e.state, ActionState::kCancelled);
  EXPECT_EQ(e.cancelled_by, "vigil");
}

TEST_F(ActionsTest, GpusIdleIsScheduledOncePerIdleEpisode) {
  spec_.on = ActionTrigger::kGpusIdle;
  spec_.idle_for_ms = 3600'000;
  spec_.dry_run = true;
  Open({spec_});
  const Rule rule = IdleRule(spec_);
  EXPECT_EQ(rule.id, "gpus_idle_stop-instance");
  const LevelKey level{rule.id, Severity::kWarning, spec_.idle_for_ms, 0};
  Sample idle;
  idle.labels = {{"node", "n1"}};
  idle.value = 0;
  idle.fire = idle.hold = true;
  Alert pending;
  pending.labels = AlertLabels(rule.id, Severity::kWarning, idle.labels);
  pending.id = Fingerprint(pending.labels);
  pending.state = AlertState::kPending;
  pending.active_at_ms = env_.NowMillis();
  std::map<std::string, Alert> active = {{pending.id, pending}};
  // Pending, not yet idle for an hour: nothing.
  env_.now += 1000;
  EXPECT_TRUE(Observe({idle}, level, active)[0].description_en.empty());
  EXPECT_TRUE(runner_->List(10)->empty());
  // It fires: once, however many evaluations follow.
  env_.now += 3600'000;
  EXPECT_NE(Observe({idle}, level, active)[0].description_en.find("Action stop-instance"),
            std::string::npos);
  active[pending.id].state = AlertState::kFiring;
  Observe({idle}, level, active);
  EXPECT_EQ(runner_->List(10)->size(), 1u);
  // Used again, then idle for another hour: a new episode, a new action.
  active[pending.id].active_at_ms = env_.NowMillis() + 60'000;
  env_.now += 2 * 3600'000;
  Observe({idle}, level, active);
  EXPECT_EQ(runner_->List(10)->size(), 2u);
}

TEST_F(ActionsTest, HistoryIsBounded) {
  spec_.confirm_window_ms = 0;
  spec_.dry_run = true;
  Open({spec_});
  std::vector<Sample> runs;
  for (int i = 0; i < 1005; ++i) runs.push_back(Finished("j", "r" + std::to_string(i)));
  Observe(runs);
  runner_->RunDue();
  Observe({Finished("j", "last")});
  auto list = runner_->List(5000);
  EXPECT_EQ(list->size(), 1000u);
  EXPECT_EQ(list->front().labels, AlertLabels("job_finished", Severity::kInfo,
                                              {{"job", "j"}, {"node", "n1"}, {"run", "last"}}));
}

TEST(ValidateActions, RefusesByName) {
  ActionSpec a;
  a.name = "stop";
  a.command = {"stop-instance"};
  EXPECT_NE(ValidateActions({a}).message().find("notify.actions[0].command"), std::string::npos);
  a.command = {"/usr/bin/true"};
  EXPECT_TRUE(ValidateActions({a}).ok());
  EXPECT_NE(ValidateActions({a, a}).message().find("two actions named \"stop\""),
            std::string::npos);
  a.on = ActionTrigger::kGpusIdle;
  EXPECT_NE(ValidateActions({a}).message().find("idle_for is required"), std::string::npos);
  a.name = "a b";
  EXPECT_NE(ValidateActions({a}).message().find("notify.actions[0].name"), std::string::npos);
}

}  // namespace
}  // namespace vigil::alert
