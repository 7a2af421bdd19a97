// Settings that trainers dump into their own output, which are the values
// in effect after the program merged its command line, configs and
// defaults (why they rank first, docs/job-settings.md "Precedence"):
//
//  * Hugging Face TrainingArguments / Seq2SeqTrainingArguments and TRL's
//    *Config dumps: "TrainingArguments(" then one "key=value," a line, ")";
//  * Hugging Face Trainer's "***** Running training *****" banner
//    ("Instantaneous batch size per device = 8", ...);
//  * argparse's "Namespace(lr=0.001, batch_size=32, ...)";
//  * Ultralytics' "engine/trainer: task=detect, ..., batch=16, workers=8"
//    and YOLOv5's "train: weights=..., epochs=300" and "hyperparameters:";
//  * the dot-leader tables of Megatron-LM's arguments and DeepSpeed's
//    engine configuration ("micro_batch_size ........ 4").
//
// Not read: metric records such as the Trainer's {'loss': 1.2,
// 'learning_rate': 4.9e-05}: that learning rate is the schedule's value at a
// step, not the setting.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "core/strings.h"
#include "parse/settings/settings_internal.h"

namespace vigil::parse::settings {
namespace {

using internal::Dialect;

// The line without ANSI escape sequences (YOLOv5 colours its prefixes).
std::string StripAnsi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      while (j < s.size() && !(s[j] >= '@' && s[j] <= '~')) ++j;
      i = j;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

bool IsKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

// "engine/trainer: a=1, b=2": Ultralytics' settings line, whose values are
// bare (no quotes): "data=coco.yaml, names=None".
void ReadCommaPairs(std::string_view s, const JobSettingsLimits& limits, JobSettings* out) {
  for (std::string_view pair : Split(s, ',')) {
    pair = TrimSpace(pair);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string_view key = pair.substr(0, eq);
    if (!std::all_of(key.begin(), key.end(), IsKeyChar)) continue;
    internal::AddSetting(key, pair.substr(eq + 1), true, "log", Dialect::kGeneric, limits, out);
  }
}

// Hugging Face Trainer's banner phrases, and the setting each gives.
// Megatron's first line ("using world size: 16, data-parallel-size: 4")
// too: its value ends at a comma.
struct Phrase {
  std::string_view text;
  std::string_view key;
  char separator = '=';
};
constexpr Phrase kBanner[] = {
    {"Instantaneous batch size per device", "batch_size"},
    {"Total train batch size (w. parallel, distributed & accumulation)", "global_batch_size"},
    {"Gradient Accumulation steps", "gradient_accumulation_steps"},
    {"Num Epochs", "epochs"},
    {"Total optimization steps", "max_steps"},
    {"using world size", "world_size", ':'},
};

bool ReadBanner(std::string_view t, const JobSettingsLimits& limits, JobSettings* out) {
  for (const Phrase& p : kBanner) {
    size_t at = t.find(p.text);
    if (at == std::string_view::npos) continue;
    std::string_view rest = TrimSpace(t.substr(at + p.text.size()));
    if (rest.empty() || rest[0] != p.separator) continue;
    rest = rest.substr(1);
    if (p.separator == ':') rest = rest.substr(0, rest.find(','));
    std::string value(TrimSpace(rest));
    value.erase(std::remove(value.begin(), value.end(), ','), value.end());  // "1,000"
    if (value.empty()) return false;
    JobSetting s;
    s.key = std::string(p.key);
    s.value = std::string(CutUtf8(value, limits.max_value_bytes));
    if (std::optional<double> d = ParseDouble(s.value); d && std::isfinite(*d)) s.number = d;
    s.source = "log";
    s.raw_key = std::string(p.text);
    out->Add(std::move(s), limits.max_settings);
    return true;
  }
  return false;
}

// "  micro_batch_size ............ 4" (Megatron), "[INFO] [config.py:1003:
// print]   gradient_accumulation_steps .. 1" (DeepSpeed); DeepSpeed pads a
// long key with two spaces and no dots ("train_micro_batch_size_per_gpu  1").
bool ReadDotLeader(std::string_view t, const JobSettingsLimits& limits, JobSettings* out) {
  size_t dots = t.find(" ..");
  bool deepspeed_print = t.find(":print]") != std::string_view::npos;
  size_t key_end, value_begin;
  if (dots != std::string_view::npos) {
    key_end = dots;
    value_begin = dots + 1;
    while (value_begin < t.size() && t[value_begin] == '.') ++value_begin;
  } else if (deepspeed_print) {
    size_t print = t.find(":print]") + 7;
    size_t kb = print;
    while (kb < t.size() && t[kb] == ' ') ++kb;
    key_end = kb;
    while (key_end < t.size() && IsKeyChar(t[key_end])) ++key_end;
    if (key_end + 2 > t.size() || t.substr(key_end, 2) != "  ") return false;
    value_begin = key_end;
  } else {
    return false;
  }
  size_t kb = key_end;
  while (kb > 0 && IsKeyChar(t[kb - 1])) --kb;
  if (kb == key_end) return false;
  std::string_view value = TrimSpace(t.substr(value_begin));
  if (value.empty() || value[0] == '{' || value[0] == '[') return false;
  // "stage=2 contiguous_gradients=True": a record, not one value.
  if (value.find('=') != std::string_view::npos) return false;
  return internal::AddSetting(t.substr(kb, key_end - kb), value, true, "log", Dialect::kDeepSpeed,
                              limits, out);
}

// "  per_device_train_batch_size=8," inside a TrainingArguments dump; false
// when the line is no member (the dump was cut, or this is the next record).
bool ReadDumpMember(std::string_view t, const JobSettingsLimits& limits, JobSettings* out) {
  t = TrimSpace(t);
  if (!t.empty() && t.back() == ',') t.remove_suffix(1);
  size_t eq = t.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  std::string_view key = t.substr(0, eq);
  if (!std::all_of(key.begin(), key.end(), IsKeyChar)) return false;
  std::string_view value = t.substr(eq + 1);
  if (!value.empty() && (value[0] == '{' || value[0] == '[')) return true;
  internal::AddSetting(key, value, true, "log", Dialect::kGeneric, limits, out);
  return true;
}

// Where a dump of dataclass arguments opens: "...TrainingArguments(",
// "SFTConfig(" at the end of the line.
bool OpensDump(std::string_view t) {
  t = TrimSpace(t);
  if (!EndsWith(t, "(")) return false;
  t.remove_suffix(1);
  return EndsWith(t, "Arguments") || EndsWith(t, "Config");
}

}  // namespace

namespace internal {

void ReadKwargs(std::string_view s, const std::string& prefix, std::string_view source,
                Dialect dialect, size_t depth, const JobSettingsLimits& limits, JobSettings* out) {
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',' || s[i] == '\t')) ++i;
    size_t kb = i;
    while (i < s.size() && IsKeyChar(s[i])) ++i;
    if (i == kb || i >= s.size() || s[i] != '=') return;
    std::string_view key = s.substr(kb, i - kb);
    size_t vb = ++i;
    int level = 0;
    char quote = 0;
    for (; i < s.size(); ++i) {
      char c = s[i];
      if (quote != 0) {
        if (c == '\\') {
          ++i;
        } else if (c == quote) {
          quote = 0;
        }
        continue;
      }
      if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '(' || c == '[' || c == '{') {
        ++level;
      } else if (c == ')' || c == ']' || c == '}') {
        if (level == 0) break;
        --level;
      } else if (c == ',' && level == 0) {
        break;
      }
    }
    std::string_view value = TrimSpace(s.substr(vb, i - vb));
    std::string name = prefix + std::string(key);
    if (StartsWith(value, "dict(")) {
      if (depth < limits.max_config_depth) {
        ReadKwargs(value.substr(5), name + ".", source, dialect, depth + 1, limits, out);
      }
    } else if (!value.empty() && value[0] != '[' && value[0] != '{' && value[0] != '(' &&
               value.find('(') == std::string_view::npos) {
      AddSetting(name, value, true, source, dialect, limits, out);
    }
    if (i < s.size() && s[i] == ')' && level == 0) return;
  }
}

}  // namespace internal

JobSettings SettingsFromLogLines(const std::vector<std::string>& lines,
                                 const JobSettingsLimits& limits) {
  JobSettings out;
  size_t n = std::min(lines.size(), limits.max_log_lines);
  if (n < lines.size()) {
    out.AddNote("log: " + std::to_string(lines.size()) + " lines, read the first " +
                std::to_string(n));
  }
  size_t in_dump = 0;  // lines left in an open TrainingArguments dump
  for (size_t i = 0; i < n; ++i) {
    std::string clean = StripAnsi(CutUtf8(lines[i], limits.max_line_bytes));
    std::string_view t = clean;
    if (in_dump > 0) {
      --in_dump;
      if (TrimSpace(t) == ")") {
        in_dump = 0;
        continue;
      }
      if (TrimSpace(t).empty() || ReadDumpMember(t, limits, &out)) continue;
      in_dump = 0;  // not a member: read the line as any other
    }
    if (OpensDump(t)) {
      in_dump = 1000;  // TrainingArguments has ~120 members
      continue;
    }
    if (size_t at = t.find("Namespace("); at != std::string_view::npos) {
      internal::ReadKwargs(t.substr(at + 10), "", "log", Dialect::kGeneric, 1, limits, &out);
      continue;
    }
    // A one-line dump: "TrainingArguments(output_dir=..., ...)".
    if (size_t at = t.find("Arguments(");
        at != std::string_view::npos && at + 10 < t.size() && IsKeyChar(t[at + 10])) {
      internal::ReadKwargs(t.substr(at + 10), "", "log", Dialect::kGeneric, 1, limits, &out);
      continue;
    }
    size_t yolo = t.find("engine/trainer: ");
    if (yolo == std::string_view::npos) yolo = t.find("engine\\trainer: ");
    if (yolo != std::string_view::npos) {
      ReadCommaPairs(t.substr(yolo + 16), limits, &out);
      continue;
    }
    std::string_view body = TrimSpace(t);
    if (StartsWith(body, "train: ") || StartsWith(body, "hyperparameters: ")) {
      ReadCommaPairs(body.substr(body.find(": ") + 2), limits, &out);
      continue;
    }
    if (ReadBanner(t, limits, &out)) continue;
    ReadDotLeader(t, limits, &out);
  }
  out.Finish();
  return out;
}

}  // namespace vigil::parse::settings
