// Settings from config files: JSON (DeepSpeed, HF), a safe subset of YAML
// (Axolotl, LLaMA-Factory, Ultralytics, Lightning, Hydra/NeMo), TOML's
// tables and key = value, and the `name = value` lines of a Python config
// (nanoGPT's configurator). Nested keys are flattened ("zero_optimization.
// stage"); lists are skipped (a list is never one setting); only keys in the
// alias table are kept.
//
// The YAML reader is a subset on purpose (no dependency, nothing to
// execute): block maps by indentation, plain and quoted scalars, comments;
// lists, flow collections, block scalars, tags' contents and aliases are
// skipped. Depth is bounded by JobSettingsLimits::max_config_depth, and so
// is JSON's (checked before nlohmann recurses).
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/strings.h"
#include "parse/settings/settings_internal.h"

namespace vigil::parse::settings::internal {
namespace {

size_t Indent(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i;
}

// `text` up to a comment: '#' at the start or after a space, outside quotes.
std::string_view StripComment(std::string_view text) {
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if ((c == '"' || c == '\'') && (i == 0 || text[i - 1] == ' ' || text[i - 1] == ':')) {
      quote = c;
    } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      return TrimSpace(text.substr(0, i));
    }
  }
  return TrimSpace(text);
}

// The position of the ':' that ends a YAML key ("key: v", "key:"), npos
// when the line has none.
size_t KeyColon(std::string_view s) {
  size_t start = 0;
  if (!s.empty() && (s[0] == '"' || s[0] == '\'')) {
    size_t close = s.find(s[0], 1);
    if (close == std::string_view::npos) return std::string_view::npos;
    start = close + 1;
  }
  for (size_t i = start; i < s.size(); ++i) {
    if (s[i] == ':' && (i + 1 == s.size() || s[i + 1] == ' ' || s[i + 1] == '\t')) return i;
    if (start == 0 && (s[i] == ' ' && i + 1 < s.size() && s[i + 1] == '#')) break;
  }
  return std::string_view::npos;
}

std::string JoinPath(const std::vector<std::string>& parts, std::string_view leaf) {
  std::string out;
  for (const std::string& p : parts) {
    out += p;
    out += '.';
  }
  out += leaf;
  return out;
}

// The deepest nesting of a JSON text, counted outside strings.
size_t JsonDepth(std::string_view text) {
  size_t depth = 0, max = 0;
  bool in_string = false, escape = false;
  for (char c : text) {
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') max = std::max(max, ++depth);
    if ((c == '}' || c == ']') && depth > 0) --depth;
  }
  return max;
}

void FlattenJson(const nlohmann::json& j, const std::string& prefix, size_t depth,
                 std::string_view source, Dialect dialect, const JobSettingsLimits& limits,
                 JobSettings* out) {
  if (depth > limits.max_config_depth) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key().size() > 256) continue;
    std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    const nlohmann::json& v = it.value();
    if (v.is_object()) {
      FlattenJson(v, key, depth + 1, source, dialect, limits, out);
    } else if (v.is_string()) {
      AddSetting(key, v.get_ref<const std::string&>(), true, source, dialect, limits, out);
    } else if (v.is_boolean()) {
      AddSetting(key, v.get<bool>() ? "true" : "false", true, source, dialect, limits, out);
    } else if (v.is_number()) {
      AddSetting(key, v.dump(), true, source, dialect, limits, out);
    }
    // Arrays and nulls: no setting.
  }
}

// Brackets opened minus closed in `code`, outside quotes.
int Balance(std::string_view code) {
  int level = 0;
  char quote = 0;
  for (char c : code) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++level;
    } else if (c == ')' || c == ']' || c == '}') {
      --level;
    }
  }
  return level;
}

// A Python statement longer than this is not gathered (its settings are lost).
constexpr size_t kMaxStatement = 64 << 10;

// `name = dict(a=1, b=dict(c=2))`: the keyword arguments as name.a, name.b.c.
void ReadDict(std::string_view call, const std::string& name, std::string_view source,
              const JobSettingsLimits& limits, JobSettings* out) {
  if (!StartsWith(call, "dict(")) return;
  ReadKwargs(call.substr(5), name + ".", source, Dialect::kGeneric, 2, limits, out);
}

}  // namespace

Status ReadJson(std::string_view text, std::string_view source, const JobSettingsLimits& limits,
                JobSettings* out) {
  if (JsonDepth(text) > limits.max_config_depth) {
    return InvalidArgument(std::string(source) + ": JSON nested deeper than " +
                           std::to_string(limits.max_config_depth));
  }
  try {
    nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) return InvalidArgument(std::string(source) + ": not valid JSON");
    if (!j.is_object()) return Status::Ok();
    // A DeepSpeed config: its train_batch_size is the global batch.
    bool deepspeed = j.contains("zero_optimization") ||
                     j.contains("train_micro_batch_size_per_gpu") ||
                     j.contains("zero_allow_untested_optimizer");
    FlattenJson(j, "", 1, source, deepspeed ? Dialect::kDeepSpeed : Dialect::kGeneric, limits, out);
  } catch (const std::exception& e) {
    return InvalidArgument(std::string(source) + ": JSON not read (" + e.what() + ")");
  }
  return Status::Ok();
}

void ReadYaml(std::string_view text, std::string_view source, const JobSettingsLimits& limits,
              JobSettings* out) {
  struct Level {
    size_t indent;
    std::string key;
  };
  std::vector<Level> stack;
  std::vector<std::string> parts;
  const size_t kNone = static_cast<size_t>(-1);
  size_t skip_deeper_than = kNone;  // inside a list or block scalar
  for (std::string_view line : Split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t indent = Indent(line);
    std::string_view body = line.substr(indent);
    if (body.empty() || body[0] == '#') continue;
    if (indent == 0 && (StartsWith(body, "---") || StartsWith(body, "..."))) {
      stack.clear();
      skip_deeper_than = kNone;
      continue;
    }
    if (skip_deeper_than != kNone) {
      if (indent > skip_deeper_than) continue;
      skip_deeper_than = kNone;
    }
    while (!stack.empty() && stack.back().indent >= indent) stack.pop_back();
    if (body[0] == '-' && (body.size() == 1 || body[1] == ' ')) {
      skip_deeper_than = indent;  // a list item and what it holds
      continue;
    }
    size_t colon = KeyColon(body);
    if (colon == std::string_view::npos || colon == 0 || colon > 256) continue;
    std::string_view key = Unquote(body.substr(0, colon));
    std::string_view value = StripComment(body.substr(colon + 1));
    if (stack.size() + 1 > limits.max_config_depth) {
      skip_deeper_than = indent;
      continue;
    }
    // Anchors name a value; tags type it ("!!float 1e-4").
    while (!value.empty() && (value[0] == '&' || value[0] == '!')) {
      size_t sp = value.find(' ');
      value = sp == std::string_view::npos ? std::string_view() : TrimSpace(value.substr(sp));
    }
    if (value.empty()) {
      stack.push_back({indent, std::string(key)});
      continue;
    }
    if (value[0] == '|' || value[0] == '>' || value[0] == '[' || value[0] == '{' ||
        value[0] == '*') {
      skip_deeper_than = indent;  // block scalar, flow collection (maybe multi-line), alias
      continue;
    }
    parts.clear();
    for (const Level& l : stack) parts.push_back(l.key);
    AddSetting(JoinPath(parts, key), value, true, source, Dialect::kGeneric, limits, out);
  }
}

void ReadKeyValueFile(std::string_view text, std::string_view source, bool python_style,
                      const JobSettingsLimits& limits, JobSettings* out) {
  std::string table;
  bool skip_table = false;     // [[array of tables]]
  int open_brackets = 0;       // a multi-line array or dict(...) being skipped
  bool in_multiline = false;   // """ or ''' string
  std::string dict, dict_key;  // a Python `name = dict(...)` being gathered
  for (std::string_view line : Split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (in_multiline) {
      if (line.find("\"\"\"") != std::string_view::npos ||
          line.find("'''") != std::string_view::npos) {
        in_multiline = false;
      }
      continue;
    }
    if (open_brackets > 0) {
      std::string_view code = StripComment(line);
      open_brackets += Balance(code);
      if (!dict_key.empty() && dict.size() < kMaxStatement) {
        dict += ' ';
        dict += code;
      }
      if (open_brackets <= 0) {
        open_brackets = 0;
        if (!dict_key.empty()) ReadDict(dict, dict_key, source, limits, out);
        dict_key.clear();
      }
      continue;
    }
    // Python: only top-level assignments (an indented line is in a block).
    if (python_style && !line.empty() && (line[0] == ' ' || line[0] == '\t')) continue;
    std::string_view body = TrimSpace(line);
    if (body.empty() || body[0] == '#') continue;
    if (!python_style && body[0] == '[') {
      skip_table = StartsWith(body, "[[");
      size_t close = body.find(']');
      table =
          close == std::string_view::npos ? "" : std::string(TrimSpace(body.substr(1, close - 1)));
      continue;
    }
    size_t eq = body.find('=');
    if (eq == std::string_view::npos || eq == 0 || skip_table) continue;
    if (eq + 1 < body.size() && body[eq + 1] == '=') continue;  // a comparison
    std::string_view key = TrimSpace(body.substr(0, eq));
    std::string_view value = StripComment(body.substr(eq + 1));
    if (python_style && !std::all_of(key.begin(), key.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        })) {
      continue;
    }
    if (StartsWith(value, "\"\"\"") || StartsWith(value, "'''")) {
      in_multiline = value.size() < 6 || !(EndsWith(value, "\"\"\"") || EndsWith(value, "'''"));
      continue;
    }
    if (!value.empty() && (value[0] == '"' || value[0] == '\'')) {
      // One string, or an expression that starts with one ('a' if x else 'b').
      size_t close = value.find(value[0], 1);
      if (close + 1 != value.size()) continue;
    } else if (!value.empty() &&
               (value[0] == '[' || value[0] == '{' || value.find('(') != std::string_view::npos)) {
      open_brackets = std::max(0, Balance(value));
      // MMEngine's `optim_wrapper = dict(optimizer=dict(lr=0.1))`, maybe
      // over several lines: read when it closes. Arrays, inline tables and
      // other calls give no setting.
      if (python_style && StartsWith(value, "dict(")) {
        dict.assign(value);
        dict_key.assign(key);
        if (open_brackets == 0) {
          ReadDict(dict, dict_key, source, limits, out);
          dict_key.clear();
        }
      }
      continue;
    }
    std::string path = table.empty() ? std::string(key) : table + "." + std::string(key);
    // TOML's quoted key parts: "a"."b" -> a.b
    path.erase(std::remove(path.begin(), path.end(), '"'), path.end());
    if (table.size() > 256 || path.size() > 512) continue;
    AddSetting(path, value, true, source, Dialect::kGeneric, limits, out);
  }
}

}  // namespace vigil::parse::settings::internal
