// The exported rule file against Prometheus itself: the same input series go
// to Vigil's engine and to `promtool test rules` (Debian's prometheus), and
// at every evaluation promtool must see exactly the alerts Vigil fires, with
// the same labels and annotations — for every preset PromQL can express,
// with their hysteresis, `for` and `keep_firing_for`. Skipped without
// promtool.
#include "alert/prometheus_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>

#include "alert/engine.h"
#include "core/manual_clock_env.h"
#include "core/temp_dir.h"

namespace vigil::alert {
namespace {

constexpr int kSeconds = 100;

struct InputSeries {
  std::string name;
  wire::Labels labels;                        // sorted
  std::vector<std::optional<double>> values;  // one per second, nullopt: no sample
};

// Runs of `value` `count` seconds long; nullopt for a gap.
InputSeries Series(std::string name, wire::Labels labels,
                   std::vector<std::pair<std::optional<double>, int>> runs) {
  InputSeries s{std::move(name), std::move(labels), {}};
  std::sort(s.labels.begin(), s.labels.end(),
            [](const wire::Label& a, const wire::Label& b) { return a.name < b.name; });
  for (const auto& [v, n] : runs) s.values.insert(s.values.end(), n, v);
  s.values.resize(kSeconds + 1, s.values.empty() ? std::nullopt : s.values.back());
  return s;
}

// A value for every second from `f` (nullopt: no sample).
InputSeries Curve(std::string name, wire::Labels labels,
                  const std::function<std::optional<double>(int)>& f) {
  InputSeries s{std::move(name), std::move(labels), {}};
  std::sort(s.labels.begin(), s.labels.end(),
            [](const wire::Label& a, const wire::Label& b) { return a.name < b.name; });
  for (int t = 0; t <= kSeconds; ++t) s.values.push_back(f(t));
  return s;
}

wire::Labels Run(const std::string& run) {
  return {{"job", "train"}, {"node", "n1"}, {"run", run}};
}

wire::Labels Gpu(const std::string& gpu, const std::string& model) {
  return {{"gpu", gpu}, {"modelName", model}, {"node", "n1"}};
}

std::vector<InputSeries> Scenario() {
  const auto none = std::nullopt;
  std::vector<InputSeries> in;
  // GPU 0 reports its slowdown (90 °C): warning at 85, critical at 90,
  // holding down to 82 and 87; then it hovers at the warning threshold.
  in.push_back(
      Series("vigil_gpu_temp_slowdown_celsius", Gpu("0", "NVIDIA H100 80GB HBM3"), {{90, 1}}));
  in.push_back(Series("DCGM_FI_DEV_GPU_TEMP", Gpu("0", "NVIDIA H100 80GB HBM3"),
                      {{70, 5},
                       {86, 10},
                       {91, 10},
                       {88, 5},
                       {83, 5},
                       {70, 10},
                       {86, 3},
                       {84, 2},
                       {86, 2},
                       {84, 2},
                       {80, 60}}));
  // GPU 1 reports none: its model's fallback (92 °C); GPU 2: the default (90 °C).
  in.push_back(
      Series("vigil_gpu_temp_slowdown_celsius", Gpu("1", "Tesla P100-SXM2-16GB"), {{0, 1}}));
  in.push_back(Series("DCGM_FI_DEV_GPU_TEMP", Gpu("1", "Tesla P100-SXM2-16GB"),
                      {{80, 10}, {88, 20}, {60, 1}}));
  in.push_back(Series("DCGM_FI_DEV_GPU_TEMP", Gpu("2", "NVIDIA A40"), {{86, 20}, {60, 1}}));
  // Memory: 92 % then 98 % full, then back.
  in.push_back(Series("DCGM_FI_DEV_FB_USED", Gpu("0", "NVIDIA H100 80GB HBM3"),
                      {{50, 10}, {92, 10}, {98, 10}, {80, 1}}));
  in.push_back(Series("DCGM_FI_DEV_FB_FREE", Gpu("0", "NVIDIA H100 80GB HBM3"),
                      {{50, 10}, {8, 10}, {2, 10}, {20, 1}}));
  // Throttling: a thermal reason for 8 s (power capping never alerts).
  wire::Labels thermal = Gpu("0", "NVIDIA H100 80GB HBM3");
  thermal.push_back({"reason", "hw_thermal_slowdown"});
  in.push_back(Series("vigil_gpu_clock_event_reason_active", thermal, {{0, 20}, {1, 8}, {0, 1}}));
  wire::Labels cap = Gpu("0", "NVIDIA H100 80GB HBM3");
  cap.push_back({"reason", "sw_power_cap"});
  in.push_back(Series("vigil_gpu_clock_event_reason_active", cap, {{1, 1}}));
  // An uncorrectable ECC error; Xid 79 (critical) and 13 (warning).
  in.push_back(Series("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", Gpu("0", "NVIDIA H100 80GB HBM3"),
                      {{0, 30}, {1, 1}}));
  wire::Labels x79 = Gpu("2", "NVIDIA A40"), x13 = Gpu("1", "Tesla P100-SXM2-16GB");
  x79.push_back({"xid", "79"});
  x13.push_back({"xid", "13"});
  in.push_back(Series("vigil_gpu_xid_errors_total", x79, {{none, 10}, {0, 30}, {1, 1}}));
  in.push_back(Series("vigil_gpu_xid_errors_total", x13, {{0, 45}, {1, 1}}));
  // A GPU's first Xid of a code: the counter is born at 1 (no 0 before it).
  wire::Labels x48 = Gpu("0", "NVIDIA H100 80GB HBM3");
  x48.push_back({"xid", "48"});
  in.push_back(Series("vigil_gpu_xid_errors_total", x48, {{none, 35}, {1, 1}}));
  // GPU 2 lost at 50 s; the driver stops answering for 5 s at 55 s.
  in.push_back(Series("vigil_gpu_up", Gpu("2", "NVIDIA A40"), {{1, 50}, {0, 1}}));
  in.push_back(Series("vigil_gpu_driver_responsive", {{"node", "n1"}}, {{1, 55}, {0, 5}, {1, 1}}));
  // Host memory 95 % used for 12 s; /data 99 % full (a tmpfs never counts).
  in.push_back(Series("node_memory_MemTotal_bytes", {{"node", "n1"}}, {{1000, 1}}));
  in.push_back(
      Series("node_memory_MemAvailable_bytes", {{"node", "n1"}}, {{500, 60}, {50, 12}, {500, 1}}));
  for (const char* fs : {"ext4", "tmpfs"}) {
    wire::Labels l = {{"fstype", fs},
                      {"mountpoint", fs == std::string("ext4") ? "/data" : "/run"},
                      {"node", "n1"}};
    in.push_back(Series("node_filesystem_size_bytes", l, {{1000, 1}}));
    in.push_back(Series("node_filesystem_avail_bytes", l, {{500, 70}, {10, 1}}));
  }
  // GPU 1 holds 1 GB and computes nothing for 45 s.
  wire::Labels proc = Gpu("1", "Tesla P100-SXM2-16GB");
  proc.push_back({"pid", "4242"});
  in.push_back(Series("vigil_gpu_process_memory_bytes", proc, {{none, 5}, {1e9, 45}, {none, 1}}));
  in.push_back(
      Series("DCGM_FI_DEV_GPU_UTIL", Gpu("1", "Tesla P100-SXM2-16GB"), {{0, 50}, {60, 1}}));
  // Two H100s idle (one P100 alone is no idle GPU-hour per hour): GPU 3
  // works again at 50 s, GPU 0 at 70 s (one idle GPU holds the alert).
  in.push_back(
      Series("DCGM_FI_DEV_GPU_UTIL", Gpu("0", "NVIDIA H100 80GB HBM3"), {{0, 70}, {90, 1}}));
  in.push_back(
      Series("DCGM_FI_DEV_GPU_UTIL", Gpu("3", "NVIDIA H100 80GB HBM3"), {{0, 50}, {90, 1}}));
  // GPU 3's memory grows 20 MiB/s (full in ~18 min: warning), then 100 MiB/s
  // (~3 min: critical), then stays.
  auto used = [](int t) {
    return t < 30 ? 60000.0 + 20 * t : 60580.0 + 100 * (std::min(t, 49) - 29);
  };
  in.push_back(Curve("DCGM_FI_DEV_FB_USED", Gpu("3", "NVIDIA H100 80GB HBM3"),
                     [&](int t) { return used(t); }));
  in.push_back(Curve("DCGM_FI_DEV_FB_FREE", Gpu("3", "NVIDIA H100 80GB HBM3"),
                     [&](int t) { return 81559 - used(t); }));
  // Run r1: a noisy decreasing loss that rises to 2.5 at 40 s (warning) and
  // 5 at 50 s (critical), then falls back; its grad norm spikes 50x at 30 s
  // (warning) and 500x at 60 s (critical); its tokens/s drop to 10 % at
  // 40 s and to 40 % at 70 s.
  auto noise = [](int t) { return 0.02 * ((t * 7) % 5 - 2); };
  in.push_back(Curve("training_loss", Run("r1"), [&](int t) -> std::optional<double> {
    if (t >= 40 && t < 50) return 2.5;
    if (t >= 50 && t < 60) return 5.0;
    return 2.0 - 0.004 * t + noise(t);
  }));
  in.push_back(Curve("training_grad_norm", Run("r1"), [&](int t) -> std::optional<double> {
    return t == 30 ? 50 : t == 60 ? 500 : 1 + noise(t);
  }));
  in.push_back(Curve("training_tokens_per_second", Run("r1"), [](int t) -> std::optional<double> {
    if (t >= 40 && t < 50) return 100;
    if (t >= 70 && t < 80) return 400;
    return t % 7 == 0 ? 950 : 1000;
  }));
  // Run r2: its loss stops improving at 40 s, improves again at 85 s; its
  // samples/s stay steady.
  in.push_back(Curve("training_loss", Run("r2"), [](int t) -> std::optional<double> {
    return t < 40 ? 3.0 - 0.02 * t : t < 85 ? 2.2 : 2.0;
  }));
  in.push_back(Curve("training_samples_per_second", Run("r2"),
                     [](int t) -> std::optional<double> { return t % 5 == 0 ? 31 : 32; }));
  // Run r3: its falling loss turns NaN at 20 s, +Inf at 25 s, finite again at 30 s.
  in.push_back(Curve("training_loss", Run("r3"), [](int t) -> std::optional<double> {
    if (t >= 20 && t < 25) return std::nan("");
    if (t >= 25 && t < 30) return HUGE_VAL;
    return 1.5 - 0.01 * t;  // improving: no plateau
  }));
  return in;
}

std::string SeriesText(const InputSeries& s) {
  std::string out = s.name + "{";
  for (size_t i = 0; i < s.labels.size(); ++i) {
    out += (i ? "," : "") + s.labels[i].name + "=\"" + s.labels[i].value + "\"";
  }
  return out + "}";
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Prometheus' humanizeDuration (template.go), for seconds of 1 or more.
std::string HumanizeDuration(double v) {
  char buf[64];
  if (v < 1) {
    std::snprintf(buf, sizeof(buf), "%.4gs", v);  // the tests' values are not below 1
    return buf;
  }
  int64_t d = static_cast<int64_t>(v);
  int64_t s = d % 60, m = (d / 60) % 60, h = (d / 3600) % 24, days = d / 86400;
  if (days != 0) {
    std::snprintf(buf, sizeof(buf), "%lldd %lldh %lldm %llds", static_cast<long long>(days),
                  static_cast<long long>(h), static_cast<long long>(m), static_cast<long long>(s));
  } else if (h != 0) {
    std::snprintf(buf, sizeof(buf), "%lldh %lldm %llds", static_cast<long long>(h),
                  static_cast<long long>(m), static_cast<long long>(s));
  } else if (m != 0) {
    std::snprintf(buf, sizeof(buf), "%lldm %llds", static_cast<long long>(m),
                  static_cast<long long>(s));
  } else {
    std::snprintf(buf, sizeof(buf), "%.4gs", v);
  }
  return buf;
}

// A template as Prometheus expands it, for the values this test uses (Go's
// %v of a float is the shortest round trip, plain for exponents -4..5).
std::string Expand(std::string text, const Alert& a) {
  for (size_t at; (at = text.find("{{ $value }}")) != std::string::npos;) {
    text.replace(at, 12, query::FormatValue(a.value));
  }
  const std::string duration = "{{ $value | humanizeDuration }}";
  for (size_t at; (at = text.find(duration)) != std::string::npos;) {
    text.replace(at, duration.size(), HumanizeDuration(a.value));
  }
  // {cost}: {{ printf "%v * P * H" $value | query | first | value | printf "%.2f" }}
  const std::string cost = "{{ printf \"%v * ";
  for (size_t at; (at = text.find(cost)) != std::string::npos;) {
    size_t end = text.find(" }}", at);
    double price = 0, hours = 0;
    EXPECT_EQ(std::sscanf(text.c_str() + at + cost.size(), "%lf * %lf", &price, &hours), 2);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.2f", a.value * price * hours);
    text.replace(at, end + 3 - at, buf);
  }
  for (size_t at; (at = text.find("{{ $labels.")) != std::string::npos;) {
    size_t end = text.find(" }}", at);
    std::string name = text.substr(at + 11, end - at - 11);
    text.replace(at, end + 3 - at, std::string(LabelOf(a, name)));
  }
  return text;
}

TEST(PrometheusRulesTest, PromtoolFiresWhatVigilFires) {
  const char* promtool = std::getenv("VIGIL_PROMTOOL");
  if (promtool == nullptr || *promtool == '\0')
    GTEST_SKIP() << "promtool not found (Debian `prometheus`)";
  TempDir tmp;
  tsdb::Options o;
  o.dir = tmp.path() + "/tsdb";
  o.retention_ms = 100LL * 365 * 86'400'000;
  auto db = std::move(tsdb::Db::Open(o)).value();
  query::Engine query(db.get());
  ManualClockEnv env(0);
  AlertEngineOptions ao;
  ao.config.time_scale = 0.01;  // for 1m -> 600 ms, windows 1h -> 36 s
  auto rules = EffectiveRules(ao.config);
  ASSERT_TRUE(rules.ok());
  AlertEngineSources sources;
  sources.query = &query;
  sources.env = &env;
  auto engine = std::move(AlertEngine::Create(sources, ao)).value();

  // Vigil, one evaluation a second; what fires at each, by rule.
  std::vector<InputSeries> in = Scenario();
  std::vector<std::map<std::string, std::vector<Alert>>> firing(kSeconds + 1);
  std::set<std::string> fired_rules;
  for (int t = 0; t <= kSeconds; ++t) {
    env.now = t * 1000LL;
    wire::MetricBatch b;
    for (const InputSeries& s : in) {
      if (!s.values[t]) continue;
      wire::Series ws{s.labels, {{env.now, *s.values[t]}}};
      ws.labels.insert(ws.labels.begin(), {"__name__", s.name});
      b.series.push_back(std::move(ws));
    }
    ASSERT_TRUE(db->Append(b).ok());
    engine->EvaluateOnce();
    for (const Alert& a : engine->Active()) {
      if (a.state != AlertState::kFiring) continue;
      firing[t][a.rule].push_back(a);
      fired_rules.insert(a.rule);
    }
  }
  // Every query preset fires in this scenario (else it compares nothing),
  // and all but a lost GPU and a full disk resolve before its end.
  for (const Rule& r : *rules) {
    if (r.source == RuleSource::kQuery) {
      EXPECT_EQ(fired_rules.count(r.id), 1u) << r.id;
      if (r.id != "gpu_lost" && r.id != "disk_near_full") {
        EXPECT_EQ(firing[kSeconds].count(r.id), 0u) << r.id << " still firing at the end";
      }
    }
  }

  // A GPU's first Xid of a code fires (its counter is born at 1).
  bool first_xid = false;
  for (const auto& at : firing) {
    for (const Alert& a : at.count("gpu_xid") ? at.at("gpu_xid") : std::vector<Alert>{}) {
      first_xid |= LabelOf(a, "xid") == "48" && a.severity == Severity::kCritical;
    }
  }
  EXPECT_TRUE(first_xid);

  std::ofstream(tmp.path() + "/rules.yml") << PrometheusRuleFile(*rules, 1000);
  std::ofstream test(tmp.path() + "/test.yml");
  test << "rule_files: [rules.yml]\nevaluation_interval: 1s\ntests:\n  - interval: 1s\n"
       << "    input_series:\n";
  for (const InputSeries& s : in) {
    test << "      - series: '" << SeriesText(s) << "'\n        values: '";
    for (size_t i = 0; i < s.values.size(); ++i) {
      test << (i ? " " : "");
      if (s.values[i]) {
        test << query::FormatValue(*s.values[i]);
      } else {
        test << "_";
      }
    }
    test << "'\n";
  }
  test << "    alert_rule_test:\n";
  for (int t = 0; t <= kSeconds; ++t) {
    for (const Rule& r : *rules) {
      if (r.source != RuleSource::kQuery) continue;
      test << "      - eval_time: " << t << "s\n        alertname: " << r.id
           << "\n        exp_alerts:";
      const auto& alerts = firing[t][r.id];
      if (alerts.empty()) test << " []";
      test << "\n";
      for (const Alert& a : alerts) {
        const Level* level = nullptr;
        for (const Level& l : r.levels) {
          if (l.severity == a.severity) level = &l;
        }
        test << "          - exp_labels:\n";
        for (const wire::Label& l : a.labels) {
          if (l.name != "alertname")
            test << "              " << l.name << ": " << Quote(l.value) << "\n";
        }
        test << "            exp_annotations:\n"
             << "              summary: "
             << Quote(Expand(PrometheusSummary(r, *level, r.summary_en), a)) << "\n"
             << "              summary_zh: "
             << Quote(Expand(PrometheusSummary(r, *level, r.summary_zh), a)) << "\n";
      }
    }
  }
  test.close();
  std::string cmd = "cd " + tmp.path() + " && " + promtool + " test rules test.yml 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  int rc = ::pclose(p);
  EXPECT_EQ(rc, 0) << out.substr(0, 20000);
  (void)db->Close();
}

TEST(PrometheusRulesTest, ExportPassesPromtoolCheck) {
  const char* promtool = std::getenv("VIGIL_PROMTOOL");
  if (promtool == nullptr || *promtool == '\0')
    GTEST_SKIP() << "promtool not found (Debian `prometheus`)";
  TempDir tmp;
  auto rules = EffectiveRules({});
  ASSERT_TRUE(rules.ok());
  std::ofstream(tmp.path() + "/rules.yml") << PrometheusRuleFile(*rules, 1000);
  std::string cmd =
      std::string(promtool) + " check rules " + tmp.path() + "/rules.yml >/dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

}  // namespace
}  // namespace vigil::alert
