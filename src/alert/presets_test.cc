// The query presets of the training and GPU-cost issue through the whole
// engine at their real durations (time_scale 1), on realistic runs: each
// fires on a bad one and stays quiet on a healthy one — a noisy decreasing
// loss, a steady throughput with small dips and evaluation pauses, a
// constant GPU memory after the model loads, busy GPUs with a spare.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "alert/engine.h"
#include "alert/test_store.h"
#include "core/manual_clock_env.h"
#include "core/temp_dir.h"

namespace vigil::alert {
namespace {

constexpr int kStepS = 15;  // the trainers log, the GPUs report, the engine evaluates

struct Point {
  std::string name;
  wire::Labels labels;  // sorted
  double v;
};

class PresetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.Open(tmp_.path(), &env_);
    db_ = store_.db.get();
    AlertEngineOptions ao;
    ao.store.path = tmp_.path() + "/alerts.db";
    AlertEngineSources s;
    s.query = store_.query.get();
    s.env = &env_;
    auto e = AlertEngine::Create(s, ao);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }
  void TearDown() override { store_.Close(); }

  // Plays `minutes`, a step every kStepS seconds: `points(t)` (seconds since
  // the start) is appended, then the engine evaluates.
  void Play(int minutes, const std::function<std::vector<Point>(int)>& points) {
    for (int t = 0; t <= minutes * 60; t += kStepS) {
      env_.now = start_ + t * 1000LL;
      wire::MetricBatch b;
      for (Point& p : points(t)) {
        wire::Series s{std::move(p.labels), {{env_.now, p.v}}};
        s.labels.insert(s.labels.begin(), {"__name__", p.name});
        b.series.push_back(std::move(s));
      }
      ASSERT_TRUE(db_->Append(b).ok());
      engine_->EvaluateOnce();
      for (const RuleStatus& r : engine_->Rules()) {
        // Job rules have no job reports here: never evaluated, "unknown".
        ASSERT_EQ(r.health, r.rule.source == RuleSource::kJob ? "unknown" : "ok")
            << r.rule.id << ": " << r.last_error;
      }
      for (const Alert& a : engine_->Active()) {
        std::string key = a.rule + "/" + SeverityName(a.severity);
        active_[Where(a)].insert(key);
        if (a.state != AlertState::kFiring) continue;
        if (fired_[Where(a)].insert(key).second) {
          first_[Where(a) + " " + key] = a;
          fired_at_min_[Where(a) + " " + key] = t / 60;
        }
      }
    }
  }

  // The run, GPU or node an alert is about.
  static std::string Where(const Alert& a) {
    if (!LabelOf(a, "run").empty()) return std::string(LabelOf(a, "run"));
    if (!LabelOf(a, "gpu").empty()) return "gpu " + std::string(LabelOf(a, "gpu"));
    return "node " + std::string(LabelOf(a, "node"));
  }

  // The alerts (rule/severity) that fired about `where`, of `rules` only.
  std::set<std::string> Fired(const std::string& where, const std::set<std::string>& rules) {
    std::set<std::string> out;
    for (const std::string& k : fired_[where]) {
      if (rules.count(k.substr(0, k.find('/')))) out.insert(k);
    }
    return out;
  }
  std::set<std::string> Active(const std::string& where, const std::set<std::string>& rules) {
    std::set<std::string> out;
    for (const std::string& k : active_[where]) {
      if (rules.count(k.substr(0, k.find('/')))) out.insert(k);
    }
    return out;
  }

  TempDir tmp_;
  const int64_t start_ = 1'764'000'000'000;
  ManualClockEnv env_{start_};
  TestStore store_;
  tsdb::Db* db_ = nullptr;
  std::unique_ptr<AlertEngine> engine_;
  std::map<std::string, std::set<std::string>> fired_, active_;
  std::map<std::string, Alert> first_;
  std::map<std::string, int> fired_at_min_;
};

const std::set<std::string> kTraining = {"training_loss_diverging", "training_loss_plateau",
                                         "training_grad_norm_spike", "training_throughput_drop"};

wire::Labels Run(const std::string& run) {
  return {{"job", "llama"}, {"node", "n1"}, {"run", run}, {"source", "/runs/" + run + ".log"}};
}

// One run's training series at t seconds. Healthy: a loss falling from ~3 to
// ~0.5 with +-15 % noise per line and a bad batch (2x) every 20 minutes; a
// grad norm around 1.2 (log-normal, sigma 0.3) with a 3x bump now and then;
// 12k tokens/s +-3 % with a checkpoint (one line at half speed) every 10
// minutes and an evaluation (no training lines) of 2 minutes every 30.
struct TrainingRun {
  std::string run;
  std::mt19937 rng;
  std::function<double(int, double)> loss = [](int, double l) { return l; };
  std::function<double(int, double)> grad = [](int, double g) { return g; };
  std::function<double(int, double)> tokens = [](int, double v) { return v; };
  int ends_s = 1 << 30;

  std::vector<Point> At(int t) {
    std::uniform_real_distribution<double> u(-1, 1);
    std::lognormal_distribution<double> ln(0, 0.3);
    double n1 = u(rng), n2 = ln(rng), n3 = u(rng);
    if (t >= ends_s || t % 1800 >= 1680) return {};  // ended, or evaluating
    double l = (0.5 + 2.5 * std::exp(-t / 2400.0)) * (1 + 0.15 * n1);
    if (t % 1200 == 600) l *= 2;
    double g = 1.2 * n2 * (t % 900 == 450 ? 3 : 1);
    double v = 12000 * (1 + 0.03 * n3) * (t % 600 == 300 ? 0.5 : 1);
    return {{"training_loss", Run(run), loss(t, l)},
            {"training_grad_norm", Run(run), grad(t, g)},
            {"training_tokens_per_second", Run(run), tokens(t, v)},
            {"training_step", Run(run), static_cast<double>(t / 3)}};
  }
};

TEST_F(PresetsTest, TrainingRunsBadAndHealthy) {
  std::vector<TrainingRun> runs;
  runs.push_back({"healthy", std::mt19937(1)});
  // The loss blows up after an hour (x e every 8 minutes); the job dies at 100 min.
  TrainingRun diverge{"diverge", std::mt19937(2)};
  diverge.loss = [](int t, double l) { return t < 3600 ? l : l * std::exp((t - 3600) / 480.0); };
  diverge.ends_s = 6000;
  runs.push_back(std::move(diverge));
  // The loss stops improving at 40 minutes (+-5 % noise around its level).
  TrainingRun plateau{"plateau", std::mt19937(3)};
  plateau.loss = [rng = std::mt19937(33)](int t, double l) mutable {
    std::uniform_real_distribution<double> u(-1, 1);
    double level = 0.5 + 2.5 * std::exp(-2400 / 2400.0);
    return t < 2400 ? l : level * (1 + 0.05 * u(rng));
  };
  runs.push_back(std::move(plateau));
  // One gradient 40x the usual at 70 minutes, one 300x at 120.
  TrainingRun spiky{"spiky", std::mt19937(4)};
  spiky.grad = [](int t, double g) { return t == 4200 ? 48 : t == 7200 ? 360 : g; };
  runs.push_back(std::move(spiky));
  // Throughput down to 12 % for 10 minutes at 60 minutes (a bad node), and
  // to 40 % for 20 minutes at 100.
  TrainingRun slow{"slow", std::mt19937(5)};
  slow.tokens = [](int t, double v) {
    if (t >= 3600 && t < 4200) return v * 0.12;
    if (t >= 6000 && t < 7200) return v * 0.4;
    return v;
  };
  runs.push_back(std::move(slow));

  Play(180, [&](int t) {
    std::vector<Point> out;
    for (TrainingRun& r : runs) {
      for (Point& p : r.At(t)) out.push_back(std::move(p));
    }
    return out;
  });

  // The healthy run: never even pending.
  EXPECT_EQ(Active("healthy", kTraining), std::set<std::string>{});
  EXPECT_EQ(Fired("diverge", kTraining),
            (std::set<std::string>{"training_loss_diverging/critical",
                                   "training_loss_diverging/warning"}));
  EXPECT_LE(fired_at_min_["diverge training_loss_diverging/warning"], 70);
  EXPECT_EQ(Fired("plateau", kTraining), std::set<std::string>{"training_loss_plateau/warning"});
  EXPECT_EQ(Fired("spiky", kTraining), (std::set<std::string>{"training_grad_norm_spike/critical",
                                                              "training_grad_norm_spike/warning"}));
  EXPECT_EQ(fired_at_min_["spiky training_grad_norm_spike/warning"], 70);
  EXPECT_EQ(Fired("slow", kTraining), (std::set<std::string>{"training_throughput_drop/critical",
                                                             "training_throughput_drop/warning"}));
  EXPECT_LE(fired_at_min_["slow training_throughput_drop/critical"], 66);

  const Alert& d = first_["diverge training_loss_diverging/warning"];
  EXPECT_NE(d.summary_en.find("Job llama on n1: the loss is diverging, "), std::string::npos)
      << d.summary_en;
  EXPECT_EQ(LabelOf(d, "source"), "/runs/diverge.log");
  const Alert& s = first_["slow training_throughput_drop/critical"];
  EXPECT_EQ(LabelOf(s, "throughput"), "tokens_per_second");
  EXPECT_NEAR(s.value, 12, 2);
  EXPECT_NE(s.summary_en.find("tokens_per_second dropped to 1"), std::string::npos) << s.summary_en;
  const Alert& p = first_["plateau training_loss_plateau/warning"];
  EXPECT_LT(p.value, 0.5);
  EXPECT_NE(p.summary_zh.find("loss 停滞"), std::string::npos) << p.summary_zh;
}

wire::Labels Gpu(int gpu, const std::string& node = "n1") {
  return {{"UUID", node + "-GPU-" + std::to_string(gpu)},
          {"gpu", std::to_string(gpu)},
          {"modelName", "NVIDIA H100 80GB HBM3"},
          {"node", node}};
}

constexpr double kTotalMib = 81559;

std::vector<Point> Memory(int gpu, double used) {
  return {{"DCGM_FI_DEV_FB_USED", Gpu(gpu), used},
          {"DCGM_FI_DEV_FB_FREE", Gpu(gpu), kTotalMib - used}};
}

// The model loads in a minute (to `loaded` MiB).
double Load(int t, double loaded) { return t < 60 ? loaded * t / 60 : loaded; }

TEST_F(PresetsTest, GpuMemoryGrowingOnALeakNotOnALoadedModel) {
  Play(33, [](int t) {
    std::vector<Point> out;
    // GPU 0 leaks: 768 MiB more every 30 s from 6 minutes on (out of memory
    // at ~33 minutes).
    double leak = t < 360 ? 0 : 768.0 * ((t - 360) / 30);
    for (Point& p : Memory(0, Load(t, 40000) + leak)) out.push_back(std::move(p));
    // GPU 1 loads 60 GB, then stays, but for an evaluation that takes 2 GB
    // more for a minute every 10 minutes and the allocator's one more chunk
    // at 25 minutes.
    double used = Load(t, 60000) + (t % 600 >= 540 ? 2048 : 0) + (t >= 1500 ? 1024 : 0);
    for (Point& p : Memory(1, used)) out.push_back(std::move(p));
    // GPU 2 never changes.
    for (Point& p : Memory(2, 30000)) out.push_back(std::move(p));
    return out;
  });
  const std::set<std::string> rule = {"gpu_memory_growing"};
  EXPECT_EQ(Fired("gpu 0", rule),
            (std::set<std::string>{"gpu_memory_growing/critical", "gpu_memory_growing/warning"}));
  EXPECT_LT(fired_at_min_["gpu 0 gpu_memory_growing/warning"],
            fired_at_min_["gpu 0 gpu_memory_growing/critical"]);
  EXPECT_EQ(Active("gpu 1", rule), std::set<std::string>{});
  EXPECT_EQ(Active("gpu 2", rule), std::set<std::string>{});
  const Alert& w = first_["gpu 0 gpu_memory_growing/warning"];
  EXPECT_EQ(LabelOf(w, "UUID"), "n1-GPU-0");
  EXPECT_NE(w.summary_en.find("GPU 0 on n1 will be out of memory in ~"), std::string::npos)
      << w.summary_en;
  EXPECT_LT(w.value, 1800);
}

std::vector<Point> Util(const std::string& node, int gpu, double u) {
  return {{"DCGM_FI_DEV_GPU_UTIL", Gpu(gpu, node), u}};
}

TEST_F(PresetsTest, IdleGpuCostOnAnIdleNodeNotOnABusyOneWithASpare) {
  Play(120, [](int t) {
    std::vector<Point> out;
    for (int g = 0; g < 8; ++g) {
      // Node n1: eight H100s allocated to nothing (0-1 %).
      for (Point& p : Util("n1", g, (t / kStepS + g) % 3 == 0 ? 1 : 0)) {
        out.push_back(std::move(p));
      }
      // Node n2: busy (85-97 %), a checkpoint (0 %) for 2 minutes every
      // 30, and GPU 7 a spare.
      double u = g == 7 ? 0 : t % 1800 >= 900 && t % 1800 < 1020 ? 0 : 85 + (t / kStepS + g) % 13;
      for (Point& p : Util("n2", g, u)) out.push_back(std::move(p));
    }
    return out;
  });
  const std::set<std::string> rule = {"idle_gpu_cost"};
  EXPECT_EQ(Fired("node n1", rule), std::set<std::string>{"idle_gpu_cost/warning"});
  EXPECT_EQ(fired_at_min_["node n1 idle_gpu_cost/warning"], 60);
  EXPECT_EQ(Active("node n2", rule), std::set<std::string>{});
  const Alert& a = first_["node n1 idle_gpu_cost/warning"];
  EXPECT_EQ(a.value, 8);
  EXPECT_EQ(a.summary_en,
            "8 × NVIDIA H100 80GB HBM3 idle on n1 for 1h ≈ 20 USD (under 5% utilisation)");
}

}  // namespace
}  // namespace vigil::alert
