#include "scenario.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

namespace fake_nvml {
namespace {

const std::set<std::string>& Signals() {
  static const std::set<std::string> kSignals = {"gpu_util",          "mem_util",
                                                 "mem_used_mib",      "temp",
                                                 "power_w",           "sm_clock",
                                                 "mem_clock",         "pcie_tx_kbs",
                                                 "pcie_rx_kbs",       "clock_event_reasons",
                                                 "ecc_sbe_volatile",  "ecc_dbe_volatile",
                                                 "ecc_sbe_aggregate", "ecc_dbe_aggregate",
                                                 "gpm_gr_util",       "gpm_sm_util",
                                                 "gpm_sm_occupancy",  "gpm_tensor_util",
                                                 "gpm_dram_util",     "gpm_fp64_util",
                                                 "gpm_fp32_util",     "gpm_fp16_util"};
  return kSignals;
}

uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Splits a line into words; "double quoted" words may hold spaces; '#' starts
// a comment outside quotes.
bool Tokenize(const std::string& line, std::vector<std::string>* out) {
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == '#') break;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    std::string word;
    if (c == '"') {
      size_t end = line.find('"', i + 1);
      if (end == std::string::npos) return false;
      word = line.substr(i + 1, end - i - 1);
      i = end + 1;
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '#' &&
             line[i] != '\r') {
        word += line[i++];
      }
    }
    out->push_back(word);
  }
  return true;
}

bool Number(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*v);
}

bool Selection(const std::string& s, int gpu_count, std::vector<int>* out) {
  if (s == "all") {
    for (int i = 0; i < gpu_count; ++i) out->push_back(i);
    return gpu_count > 0;
  }
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    size_t dash = part.find('-');
    double a = 0, b = 0;
    if (dash == std::string::npos) {
      if (!Number(part, &a)) return false;
      b = a;
    } else if (!Number(part.substr(0, dash), &a) || !Number(part.substr(dash + 1), &b)) {
      return false;
    }
    for (int i = static_cast<int>(a); i <= static_cast<int>(b); ++i) {
      if (i < 0 || i >= gpu_count) return false;
      out->push_back(i);
    }
  }
  return !out->empty();
}

int ErrorCode(const std::string& s) {
  static const std::pair<const char*, int> kNames[] = {{"UNINITIALIZED", 1},
                                                       {"INVALID_ARGUMENT", 2},
                                                       {"NOT_SUPPORTED", 3},
                                                       {"NO_PERMISSION", 4},
                                                       {"NOT_FOUND", 6},
                                                       {"DRIVER_NOT_LOADED", 9},
                                                       {"TIMEOUT", 10},
                                                       {"IRQ_ISSUE", 11},
                                                       {"GPU_IS_LOST", 15},
                                                       {"RESET_REQUIRED", 16},
                                                       {"LIB_RM_VERSION_MISMATCH", 18},
                                                       {"NO_DATA", 21},
                                                       {"UNKNOWN", 999}};
  for (const auto& [name, code] : kNames) {
    if (s == name) return code;
  }
  double v = 0;
  return Number(s, &v) ? static_cast<int>(v) : -1;
}

// Reads "key value" option pairs after position `i`.
bool Options(const std::vector<std::string>& w, size_t i, std::map<std::string, double>* out,
             std::set<std::string> flags, std::string* bad) {
  while (i < w.size()) {
    if (flags.count(w[i]) != 0) {
      (*out)[w[i++]] = 1;
      continue;
    }
    double v = 0;
    if (i + 1 >= w.size() || !Number(w[i + 1], &v)) {
      *bad = w[i];
      return false;
    }
    (*out)[w[i]] = v;
    i += 2;
  }
  return true;
}
}  // namespace

bool IsKnownSignal(const std::string& name) { return Signals().count(name) != 0; }

bool DefaultComputeCapability(const std::string& model, int* major, int* minor) {
  // The models the scenarios use, with NVIDIA's published capabilities
  // (https://developer.nvidia.com/cuda-gpus). A name matches when it holds
  // the word: "A100" is not an "A10", "L40S" not an "L40".
  static const struct {
    const char* word;
    int major, minor;
  } kModels[] = {{"V100", 7, 0},  {"T4", 7, 5},   {"A100", 8, 0}, {"A30", 8, 0},
                 {"A10", 8, 6},   {"A40", 8, 6},  {"L4", 8, 9},   {"L40", 8, 9},
                 {"L40S", 8, 9},  {"H100", 9, 0}, {"H200", 9, 0}, {"GH200", 9, 0},
                 {"B200", 10, 0}, {"3090", 8, 6}, {"4090", 8, 9}, {"5090", 12, 0}};
  std::vector<std::string> words;
  std::string cur;
  for (char c : model + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += c;
    } else if (!cur.empty()) {
      words.push_back(cur);
      cur.clear();
    }
  }
  for (const auto& m : kModels) {
    if (std::find(words.begin(), words.end(), m.word) != words.end()) {
      *major = m.major;
      *minor = m.minor;
      return true;
    }
  }
  return false;
}

double DefaultSignal(const Gpu& gpu, const std::string& name) {
  if (name == "temp") return 30;
  if (name == "power_w") return std::min(60.0, gpu.power_limit_w);
  if (name == "sm_clock") return 345;
  if (name == "mem_clock") return gpu.mem_clock_max_mhz;
  return 0;
}

double Noise(uint64_t seed, double t) {
  double f = std::floor(t);
  auto at = [&](double x) {
    uint64_t h = Mix(seed ^ Mix(static_cast<uint64_t>(static_cast<int64_t>(x))));
    return static_cast<double>(h >> 11) / static_cast<double>(1ULL << 53) * 2.0 - 1.0;
  };
  double a = at(f), b = at(f + 1);
  return a + (b - a) * (t - f);
}

double Curve::At(double t, uint64_t seed) const {
  if (points.empty()) return 0;
  double tt = repeat_s > 0 ? std::fmod(std::max(t, 0.0), repeat_s) : t;
  double v = points.back().second;
  if (tt <= points.front().first) {
    v = points.front().second;
  } else {
    // Segment [t(i-1), t(i)): a step curve takes a point's value from its time on.
    for (size_t i = 1; i < points.size(); ++i) {
      if (tt >= points[i].first) continue;
      const auto& [t0, v0] = points[i - 1];
      const auto& [t1, v1] = points[i];
      v = step || t1 == t0 ? v0 : v0 + (v1 - v0) * (tt - t0) / (t1 - t0);
      break;
    }
  }
  if (noise > 0) v += noise * Noise(seed, t);
  return v;
}

bool ParseScenario(const std::string& text, Scenario* out, std::string* error) {
  Scenario s;
  std::stringstream in(text);
  std::string line;
  int n = 0;
  auto fail = [&](const std::string& what) {
    *error = "line " + std::to_string(n) + ": " + what;
    return false;
  };
  while (std::getline(in, line)) {
    ++n;
    std::vector<std::string> w;
    if (!Tokenize(line, &w)) return fail("unterminated quote");
    if (w.empty()) continue;
    const std::string& kw = w[0];
    double v = 0;
    if (kw == "driver_version" && w.size() == 2) {
      s.driver_version = w[1];
    } else if (kw == "nvml_version" && w.size() == 2) {
      s.nvml_version = w[1];
    } else if (kw == "cuda_version" && w.size() == 2 && Number(w[1], &v)) {
      // "12.4" -> 12040, as nvmlSystemGetCudaDriverVersion reports it.
      int major = static_cast<int>(v);
      int minor = static_cast<int>(std::lround((v - major) * 10));
      s.cuda_version = major * 1000 + minor * 10;
    } else if (kw == "gpus" && w.size() == 2 && Number(w[1], &v) && v >= 0 && v <= 64) {
      s.gpus.assign(static_cast<size_t>(v), Gpu());
    } else if (kw == "gpu" && w.size() >= 4) {
      std::vector<int> sel;
      if (!Selection(w[1], static_cast<int>(s.gpus.size()), &sel)) return fail("bad GPU selection");
      const std::string& key = w[2];
      const std::string& val = w[3];
      for (int g : sel) {
        Gpu& gpu = s.gpus[g];
        bool num = Number(val, &v);
        if (key == "model")
          gpu.model = val;
        else if (key == "uuid")
          gpu.uuid = val;
        else if (key == "pci_bus_id")
          gpu.pci_bus_id = val;
        else if (key == "compute_capability") {
          size_t dot = val.find('.');
          double maj = 0, min = 0;
          if (dot == std::string::npos || !Number(val.substr(0, dot), &maj) ||
              !Number(val.substr(dot + 1), &min) || maj < 1 || min < 0 || min > 9) {
            return fail("compute_capability takes X.Y, as 8.9");
          }
          gpu.cc_major = static_cast<int>(maj);
          gpu.cc_minor = static_cast<int>(min);
        } else if (key == "gpm" || key == "ecc") {
          if (val != "on" && val != "off") return fail(key + " takes on or off");
          (key == "gpm" ? gpu.gpm : gpu.ecc) = val == "on";
        } else if (!num)
          return fail("'" + key + "' needs a number");
        else if (key == "minor")
          gpu.minor = static_cast<int>(v);
        else if (key == "memory_total_mib")
          gpu.memory_total_mib = v;
        else if (key == "memory_reserved_mib")
          gpu.memory_reserved_mib = v;
        else if (key == "power_limit_w")
          gpu.power_limit_w = v;
        else if (key == "temp_slowdown_c")
          gpu.temp_slowdown_c = v;
        else if (key == "temp_shutdown_c")
          gpu.temp_shutdown_c = v;
        else if (key == "temp_max_c")
          gpu.temp_max_c = v;
        else if (key == "sm_clock_max_mhz")
          gpu.sm_clock_max_mhz = v;
        else if (key == "mem_clock_max_mhz")
          gpu.mem_clock_max_mhz = v;
        else if (key == "energy_start_j")
          gpu.energy_start_j = v;
        else
          return fail("unknown GPU attribute '" + key + "'");
      }
    } else if (kw == "curve" && w.size() >= 4) {
      std::vector<int> sel;
      if (!Selection(w[1], static_cast<int>(s.gpus.size()), &sel)) return fail("bad GPU selection");
      if (!IsKnownSignal(w[2])) return fail("unknown signal '" + w[2] + "'");
      Curve c;
      c.set = true;
      size_t i = 3;
      for (; i < w.size(); ++i) {
        size_t colon = w[i].find(':');
        if (colon == std::string::npos) break;
        double t = 0, val = 0;
        if (!Number(w[i].substr(0, colon), &t) || !Number(w[i].substr(colon + 1), &val)) {
          return fail("bad point '" + w[i] + "' (want seconds:value)");
        }
        if (!c.points.empty() && t < c.points.back().first)
          return fail("points must ascend in time");
        c.points.push_back({t, val});
      }
      if (c.points.empty()) return fail("a curve needs at least one t:v point");
      std::map<std::string, double> opt;
      std::string bad;
      if (!Options(w, i, &opt, {"step"}, &bad)) return fail("bad curve option '" + bad + "'");
      for (const auto& [k, val] : opt) {
        if (k == "repeat")
          c.repeat_s = val;
        else if (k == "noise")
          c.noise = val;
        else if (k == "step")
          c.step = true;
        else
          return fail("unknown curve option '" + k + "'");
      }
      for (int g : sel) s.gpus[g].curves[w[2]] = c;
    } else if (kw == "process" && w.size() >= 3) {
      std::vector<int> sel;
      if (!Selection(w[1], static_cast<int>(s.gpus.size()), &sel)) return fail("bad GPU selection");
      std::map<std::string, double> opt;
      std::string bad;
      if (!Options(w, 2, &opt, {}, &bad)) return fail("bad process option '" + bad + "'");
      if (opt.count("pid") == 0) return fail("a process needs a pid");
      for (size_t k = 0; k < sel.size(); ++k) {
        Process p;
        p.pid =
            static_cast<uint32_t>(opt["pid"] + (opt.count("pid_step") ? opt["pid_step"] : 0) * k);
        p.mem_mib = opt.count("mem_mib") ? opt["mem_mib"] : 0;
        if (opt.count("from")) p.from_s = opt["from"];
        if (opt.count("to")) p.to_s = opt["to"];
        s.gpus[sel[k]].processes.push_back(p);
      }
    } else if (kw == "xid" && w.size() >= 3) {
      std::vector<int> sel;
      if (!Selection(w[1], static_cast<int>(s.gpus.size()), &sel)) return fail("bad GPU selection");
      std::map<std::string, double> opt;
      std::string bad;
      if (!Options(w, 2, &opt, {}, &bad) || !opt.count("at") || !opt.count("code")) {
        return fail("xid wants: xid <gpus> at <seconds> code <xid>");
      }
      for (int g : sel) s.xids.push_back({g, opt["at"], static_cast<uint64_t>(opt["code"])});
    } else if (kw == "hang" && w.size() >= 2) {
      std::map<std::string, double> opt;
      std::string bad;
      if (!Options(w, 2, &opt, {}, &bad) || !opt.count("at") || !opt.count("for")) {
        return fail("hang wants: hang <function|all> at <seconds> for <seconds>");
      }
      s.hangs.push_back({w[1], opt["at"], opt["for"]});
    } else if (kw == "fail" && w.size() >= 4) {
      Failure f;
      if (!Selection(w[1], static_cast<int>(s.gpus.size()), &f.gpus))
        return fail("bad GPU selection");
      f.function = w[2];
      f.code = ErrorCode(w[3]);
      if (f.code < 0) return fail("unknown NVML error '" + w[3] + "'");
      std::map<std::string, double> opt;
      std::string bad;
      if (!Options(w, 4, &opt, {}, &bad)) return fail("bad fail option '" + bad + "'");
      if (opt.count("at")) f.at_s = opt["at"];
      if (opt.count("for")) f.for_s = opt["for"];
      s.failures.push_back(f);
    } else {
      return fail("cannot read '" + line + "'");
    }
  }
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    Gpu& g = s.gpus[i];
    if (g.minor < 0) g.minor = static_cast<int>(i);
    if (g.uuid.empty()) {
      uint64_t h = Mix(0xfeed0000ULL + i);
      char buf[64];
      std::snprintf(buf, sizeof(buf), "GPU-%08x-%04x-%04x-%04x-%012llx",
                    static_cast<unsigned>(h >> 32), static_cast<unsigned>((h >> 16) & 0xffff),
                    static_cast<unsigned>(h & 0xffff), static_cast<unsigned>(i),
                    static_cast<unsigned long long>(Mix(h) & 0xffffffffffffULL));
      g.uuid = buf;
    }
    if (g.pci_bus_id.empty()) {
      static const int kBuses[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
      char buf[32];
      std::snprintf(buf, sizeof(buf), "00000000:%02X:00.0",
                    i < 8 ? kBuses[i] : static_cast<int>(0x10 + i));
      g.pci_bus_id = buf;
    }
  }
  *out = std::move(s);
  return true;
}

}  // namespace fake_nvml
