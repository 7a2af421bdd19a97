// Test alerts shared by the channels' unit tests: a critical GPU temperature
// alert on gpu-07 and a group of them, as the engine hands them over.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "alert/notification.h"

namespace vigil::notify::testing {

inline alert::Alert Firing(const std::string& gpu, alert::Severity s = alert::Severity::kCritical) {
  alert::Alert a;
  a.id = "a1b2c3d4e5f60718";
  a.rule = "gpu_temperature_high";
  a.severity = s;
  a.state = alert::AlertState::kFiring;
  a.labels = {{"UUID", "GPU-1"},  {"alertname", "gpu_temperature_high"},
              {"gpu", gpu},       {"modelName", "NVIDIA H100 80GB HBM3"},
              {"node", "gpu-07"}, {"severity", "critical"}};
  a.value = 95;
  a.threshold = 90;
  a.fired_at_ms = 1'764'641'139'000;
  a.summary_en = "GPU " + gpu + " on gpu-07 at 95 °C (alert at 90 °C)";
  a.summary_zh = "gpu-07 上的 GPU " + gpu + " 温度 95 °C（告警阈值 90 °C）";
  return a;
}

// `alerts` firing alerts on GPUs 0, 1, ... of gpu-07.
inline alert::Notification Group(int alerts, const std::string& group_key = "im/node=gpu-07") {
  alert::Notification n;
  n.receiver = "im";
  n.group_key = group_key;
  n.group_labels = {{"node", "gpu-07"}};
  n.external_url = "http://vigil.example:9300";
  for (int i = 0; i < alerts; ++i) n.alerts.push_back(Firing(std::to_string(i)));
  return n;
}

// A diagnosis (docs/diagnosis.md "JSON") whose log templates are listed out
// of rank: an info one with the most lines, a new info one whose text is
// hostile markup, a warning, the error last; plus `extra` info templates
// of `extra_bytes` each (0: short).
inline std::string DiagnosisWithTemplates(int extra = 0, size_t extra_bytes = 0) {
  using nlohmann::json;
  auto t = [](std::string text, int count, const char* severity, bool is_new) {
    return json{{"template", std::move(text)},
                {"count", count},
                {"severity", severity},
                {"new", is_new},
                {"first_ms", 1'764'641'000'000},
                {"last_ms", 1'764'641'100'000},
                {"example", "x"},
                {"baseline_count", is_new ? 0 : 100},
                {"streams", {"stdout"}}};
  };
  json list = json::array(
      {t("Epoch <*> step <*> loss <*>", 312, "info", false),
       t("see `nvidia-smi` **now** <at id=all></at> <script>alert(1)</script>\nInjected: yes", 2,
         "info", true),
       t("NCCL WARN Call to ibv_reg_mr failed <*>", 7, "warn", false),
       t("RuntimeError: CUDA error: <*>", 3, "error", false)});
  for (int i = 0; i < extra; ++i) {
    std::string text = "filler " + std::to_string(i) + " ";
    text += std::string(extra_bytes > text.size() ? extra_bytes - text.size() : 0, 'y');
    list.push_back(t(text, 1, "info", false));
  }
  return json{{"summary", "Probable cause: GPU clocks cut for heat (80%)"},
              {"summary_zh", "可能原因：GPU 因过热降频（80%）"},
              {"causes", json::array()},
              {"suggestions", json::array()},
              {"log_templates", list},
              {"log_template_totals", {{"window_lines", 2401}, {"window_templates", 14}}}}
      .dump();
}

}  // namespace vigil::notify::testing
