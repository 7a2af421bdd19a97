// Progress bars: tqdm's, as Hugging Face, Lightning and most loops print
// it ("Epoch 1:  42%|████▏ | 420/1000 [00:21<00:29, 19.61it/s, loss=0.3]"),
// and Keras' ("100/100 [====] - 2s 20ms/step - loss: 0.3"). A tqdm bar
// gives the step (its counter) and a rate, a Keras bar the step; either
// makes the pairs on its line count without a gate. A tqdm bar that is no
// training loop's (a download, "Map", validation) gives nothing of its own. Bars are redrawn with
// '\r': the updates are split apart in LogMetricExtractor::Extract (log_metrics.cc). Separate
// because a bar is read by its layout, not by keys.
#include <string_view>

#include "parse/training/log_metrics_internal.h"

namespace vigil::parse::training::internal {
namespace {

// "00:21" or "1:02:03": the start of tqdm's elapsed time.
bool TimeAt(std::string_view s, size_t i) {
  size_t j = i;
  while (j < s.size() && IsDigit(s[j]) && j - i < 4) ++j;
  if (j == i || j + 2 >= s.size() || s[j] != ':' || !IsDigit(s[j + 1]) || !IsDigit(s[j + 2])) {
    return false;
  }
  j += 3;
  if (j + 2 < s.size() && s[j] == ':' && IsDigit(s[j + 1]) && IsDigit(s[j + 2])) j += 3;
  return j < s.size() && (s[j] == '<' || s[j] == ',' || s[j] == ']');
}

// A tqdm bar's description names what it counts. Only a training loop's
// bar gives a step and a rate: not "Loading checkpoint shards", "Map",
// "Validation DataLoader 0" or a download.
bool TrainingDescription(std::string_view desc) {
  desc = Trim(desc);
  while (!desc.empty() && (desc.back() == ':' || IsSpace(desc.back()))) desc.remove_suffix(1);
  if (desc.empty()) return true;
  if (StartsWithLower(desc, "epoch") &&
      (desc.size() == 5 || IsSpace(desc[5]) || IsDigit(desc[5]) || desc[5] == '[')) {
    return true;
  }
  static constexpr std::string_view kWords[] = {"training",  "train",      "steps", "step",
                                                "iteration", "iterations", "fit"};
  for (std::string_view w : kWords) {
    if (EqualsLower(desc, w)) return true;
  }
  return false;
}

}  // namespace

// tqdm: "desc: 42%|████▏ | 420/1000 [00:21<00:29, 19.61it/s, k=v]" and the
// forms without a total ("420it [00:21, 19.61it/s]").
void SegmentParser::ScanTqdm() {
  std::string_view s = s_;
  size_t open = 0;
  while (true) {
    open = s.find('[', open);
    if (open == std::string_view::npos) return;
    if (open >= 2 && s[open - 1] == ' ' && TimeAt(s, open + 1)) break;
    ++open;
  }
  // The counter: "420/1000", "420/?", "420it".
  size_t cend = open - 1;
  size_t cbegin = cend;
  while (cbegin > 0 && cend - cbegin < 32 && !IsSpace(s[cbegin - 1]) && s[cbegin - 1] != '|') {
    --cbegin;
  }
  std::string_view counter = s.substr(cbegin, cend - cbegin);
  size_t nd = 0;
  while (nd < counter.size() && IsDigit(counter[nd])) ++nd;
  bool integral = nd > 0 && nd < 16 && nd < counter.size() &&
                  (counter[nd] == '/' || counter.substr(nd) == "it");
  if (nd == 0) return;
  // The bar and percentage before it: "42%|████▏     | ".
  size_t desc_end = cbegin;
  if (cbegin >= 2 && s[cbegin - 1] == ' ' && s[cbegin - 2] == '|') {
    size_t bar = cbegin - 2;
    size_t floor = bar > 256 ? bar - 256 : 0;
    while (bar > floor && s[bar - 1] != '|') --bar;
    if (bar == floor) return;
    desc_end = bar - 1;
    size_t p = desc_end;
    if (p > 0 && s[p - 1] == '%') {
      --p;
      while (p > 0 && IsDigit(s[p - 1])) --p;
      while (p > 0 && s[p - 1] == ' ' && desc_end - p < 8) --p;
      desc_end = p;
    }
  } else if (cbegin > 0 && s[cbegin - 1] != ' ') {
    return;
  }
  tqdm_begin_ = desc_end;
  tqdm_end_ = open;
  std::string_view desc = s.substr(0, desc_end);
  while (!desc.empty() && (desc.back() == ':' || IsSpace(desc.back()))) desc.remove_suffix(1);
  bool training_row = false;
  bool yolo = !desc.empty() && ScanYolo(desc, 0, &training_row);
  bool training = training_row || (!yolo && TrainingDescription(desc));
  if (!training) return;
  structured_ = true;
  if (integral) {
    // The counter's nd (< 16) digits: a whole number, exact as a double.
    int64_t n = 0;
    for (size_t k = 0; k < nd; ++k) n = n * 10 + (counter[k] - '0');
    Candidate* c = Add(cbegin, "step", static_cast<double>(n), Source::kBar);
    if (c != nullptr) {
      c->is_step = true;
      c->step_rank = 1;
      c->strong = true;
    }
  }
  // The rate: the first field after the times.
  size_t comma = s.find(',', open);
  size_t close = s.find(']', open);
  if (comma == std::string_view::npos || (close != std::string_view::npos && close < comma)) {
    return;
  }
  size_t r = comma + 1;
  while (r < s.size() && IsSpace(s[r])) ++r;
  double v;
  size_t end;
  if (!ParseNumber(s, r, &v, &end)) return;
  size_t u = end;
  if (u < s.size() && s[u] == ' ') ++u;
  size_t ue = u;
  while (ue < s.size() && IsUnitChar(s[ue]) && ue - u <= kMaxUnitLen) ++ue;
  Unit unit = ClassifyUnit(s.substr(u, ue - u));
  if (unit.kind == UnitKind::kInverseRate) {
    v = v == 0 ? 0 : 1 / v;
  } else if (unit.kind != UnitKind::kRate) {
    return;
  }
  Candidate* rate = Add(r, unit.rate_name, v, Source::kBar);
  if (rate != nullptr) rate->strong = true;
}

// Keras: "100/100 [====] - 2s 20ms/step - loss: 0.3" and Keras 3's
// "100/100 ━━━━ 2s 20ms/step - loss: 0.3".
void SegmentParser::ScanKeras() {
  std::string_view s = s_;
  size_t num;
  int64_t n;
  size_t i = LeadingCount(s, &num, &n);
  if (i == num || i >= s.size() || s[i] != '/') return;
  ++i;
  size_t total = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i == total || i + 2 >= s.size() || s[i] != ' ') return;
  std::string_view bar = s.substr(i + 1);
  bool classic =
      bar[0] == '[' && bar.size() > 1 && (bar[1] == '=' || bar[1] == '.' || bar[1] == '>');
  bool heavy = bar.substr(0, 3) == "\xe2\x94\x81";  // U+2501 '━'
  if (!classic && !heavy) return;
  structured_ = true;
  Candidate* c = Add(num, "step", static_cast<double>(n), Source::kBar);
  if (c != nullptr) {
    c->is_step = true;
    c->step_rank = 1;
    c->strong = true;
  }
}

}  // namespace vigil::parse::training::internal
