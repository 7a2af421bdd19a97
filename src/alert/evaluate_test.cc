// The job-report checks and summary placeholders of the presets that need
// more than a query: job_straggler_rank on realistic multi-GPU jobs (a rank
// starved of input among busy ones, and healthy jobs whose GPUs differ by a
// few points), {value_duration} and {cost}.
#include "alert/evaluate.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "alert/rules.h"
#include "alert/tracker.h"

namespace vigil::alert {
namespace {

Rule Straggler() {
  for (Rule& r : Presets()) {
    if (r.id == "job_straggler_rank") return r;
  }
  ADD_FAILURE();
  return {};
}

diagnose::JobReport Job(int gpus, std::string state = "running") {
  diagnose::JobReport r;
  r.node = "n1";
  r.job.name = "train";
  r.job.id = "4242-1-ab";
  r.state = std::move(state);
  for (int g = 0; g < gpus; ++g) r.gpus.push_back({std::to_string(g), "GPU-" + std::to_string(g)});
  return r;
}

// Utilisation of n1's GPUs, by index.
JobContext Util(const std::vector<double>& util) {
  JobContext c;
  for (size_t g = 0; g < util.size(); ++g) c.gpu_util["n1/" + std::to_string(g)] = util[g];
  return c;
}

// Plays `minutes` of one evaluation a minute; the rule levels that fired.
std::set<std::string> Play(const std::vector<diagnose::JobReport>& reports,
                           const std::function<std::vector<double>(int)>& util, int minutes,
                           std::vector<Alert>* firing = nullptr) {
  Rule r = Straggler();
  AlertTracker tracker;
  std::set<std::string> fired;
  for (int m = 0; m <= minutes; ++m) {
    int64_t now = m * 60'000LL;
    for (const Level& level : r.levels) {
      LevelKey key{r.id, level.severity, level.for_ms, r.keep_firing_for_ms};
      tracker.Apply(key, JobSamples(r, level, reports, Util(util(m)), now), now);
    }
    for (const auto& [id, a] : tracker.active()) {
      if (a.state != AlertState::kFiring) continue;
      fired.insert(std::string(LabelOf(a, "gpu")) + "/" + SeverityName(a.severity));
      if (firing != nullptr) firing->push_back(a);
    }
  }
  return fired;
}

TEST(StragglerTest, OneStarvedRankOfEightWarns) {
  // GPU 5's rank waits on its data loader: 30-40 % while the others are at
  // 93-99 % (NCCL waits for it count as busy).
  std::vector<Alert> firing;
  auto fired = Play(
      {Job(8)},
      [](int m) {
        std::vector<double> u;
        for (int g = 0; g < 8; ++g) u.push_back(93 + (g * 7 + m) % 7);
        u[5] = m < 5 ? 95 : 30 + m % 10;
        return u;
      },
      30, &firing);
  EXPECT_EQ(fired, (std::set<std::string>{"5/warning"}));
  ASSERT_FALSE(firing.empty());
  const Alert& a = firing.back();
  EXPECT_EQ(LabelOf(a, "job"), "train");
  EXPECT_EQ(LabelOf(a, "run"), "4242-1-ab");
  EXPECT_EQ(LabelOf(a, "UUID"), "GPU-5");
  EXPECT_NE(a.summary_en.find("GPU 5 of job train on n1 lags the job's other GPUs"),
            std::string::npos)
      << a.summary_en;
  EXPECT_NE(a.summary_en.find("of their median utilisation (9"), std::string::npos) << a.summary_en;
}

TEST(StragglerTest, AHungRankGoesCritical) {
  auto fired = Play(
      {Job(4)},
      [](int m) {
        return std::vector<double>{97, 98, m < 3 ? 97.0 : 0.0, 96};
      },
      20);
  EXPECT_EQ(fired, (std::set<std::string>{"2/critical", "2/warning"}));
}

TEST(StragglerTest, HealthyJobsStayQuiet) {
  // Eight busy GPUs a few points apart, rank 0 a little lower (it logs and
  // checkpoints), and a dip of every GPU together (evaluation).
  auto busy = [](int m) {
    std::vector<double> u;
    for (int g = 0; g < 8; ++g) u.push_back(m % 10 == 0 ? 35 : 90 + (g * 3 + m) % 9);
    u[0] -= 12;
    return u;
  };
  EXPECT_TRUE(Play({Job(8)}, busy, 60).empty());
  // Idle together (loading, evaluating): the median is too low to compare.
  EXPECT_TRUE(Play(
                  {Job(4)},
                  [](int) {
                    return std::vector<double>{0, 1, 0, 12};
                  },
                  30)
                  .empty());
  // A one-GPU job has no other rank; an ended job none at all.
  EXPECT_TRUE(Play(
                  {Job(1)}, [](int) { return std::vector<double>{5}; }, 30)
                  .empty());
  EXPECT_TRUE(Play(
                  {Job(2, "completed")},
                  [](int) {
                    return std::vector<double>{0, 99};
                  },
                  30)
                  .empty());
}

TEST(StragglerTest, AGpuWithoutUtilisationIsLeftOut) {
  Rule r = Straggler();
  JobContext c = Util({95, 94});  // GPU 2 has no utilisation series
  auto samples = JobSamples(r, r.levels[0], {Job(3)}, c, 0);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_NEAR(samples[0].value, 100 * 95 / 94.5, 1e-9);
  EXPECT_FALSE(samples[0].fire);
}

// Whose alert it is: a job's alerts are its run's user's; a GPU's series
// alert is the user's whose running job holds the GPU; a node's, nobody's.
TEST(OwnerTest, ARunsAndAGpusAlertsAreTheirJobsUsers) {
  ScopeContext scope;
  scope.run_owner["n1/4242-1-ab"] = "alice";
  scope.gpu_owner["n1/1"] = "bob";
  EXPECT_EQ(OwnerOf({{"job", "train"}, {"node", "n1"}, {"run", "4242-1-ab"}}, scope), "alice");
  EXPECT_EQ(OwnerOf({{"gpu", "1"}, {"node", "n1"}}, scope), "bob");
  EXPECT_EQ(OwnerOf({{"gpu", "1"}, {"node", "n2"}}, scope), "");
  EXPECT_EQ(OwnerOf({{"mountpoint", "/"}, {"node", "n1"}}, scope), "");

  Rule r = Straggler();
  JobContext c = Util({95, 40});
  c.scope = scope;
  c.scope.run_owner["n1/4242-1-ab"] = "carol";
  auto samples = JobSamples(r, r.levels[0], {Job(2)}, c, 0);
  ASSERT_FALSE(samples.empty());
  for (const Sample& s : samples) EXPECT_EQ(s.owner, "carol");
  // The tracker keeps it on the alert.
  AlertTracker tracker;
  samples[0].fire = samples[0].hold = true;
  auto changed = tracker.Apply({r.id, Severity::kWarning, 0, 0}, {samples[0]}, 0);
  ASSERT_FALSE(changed.empty());
  EXPECT_EQ(changed[0].owner, "carol");
}

TEST(SummaryTest, ValueAsADuration) {
  EXPECT_EQ(FormatApproxDuration(0), "0s");
  EXPECT_EQ(FormatApproxDuration(44.6), "45s");
  EXPECT_EQ(FormatApproxDuration(725), "12m");
  EXPECT_EQ(FormatApproxDuration(5400), "1h30m");
  EXPECT_EQ(FormatApproxDuration(3 * 86400 + 4 * 3600 + 1200), "3d4h");
  EXPECT_EQ(RenderSummary("full in ~{value_duration} ({value} s)", {}, 725, 0, 0, 0),
            "full in ~12m (725 s)");
}

TEST(SummaryTest, CostIsGpusTimesPriceTimesFor) {
  Rule r;
  r.priced = true;
  r.price_per_gpu_hour = 3.2;
  r.currency = "USD";
  EXPECT_EQ(FormatCost(r, 8, 2 * 3'600'000), "51.2 USD");
  r.currency.clear();
  EXPECT_EQ(FormatCost(r, 1, 1'800'000), "1.6");
}

}  // namespace
}  // namespace vigil::alert
