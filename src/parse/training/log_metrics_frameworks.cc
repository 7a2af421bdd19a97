// Line formats with a fixed shape that no key=value scan reads whole:
//  - counter heads, a word and its number ("Epoch 3/10", "iter 100:",
//    "iteration 100/ 500000 |", "Train Epoch: 1 [...]"), as PyTorch's
//    examples, nanoGPT, Megatron and hand-written loops print them;
//  - the cells after a head or between '|' that have no separator
//    (nanoGPT's "iter 100: loss 2.34, time 12.3ms", fairseq's and llm.c's
//    "| loss 7.1 | ppl 119.5 |", "| 15424 tok/s");
//  - Ultralytics YOLO's tables, whose rows are bare values under a header
//    printed once (kept by the extractor across lines);
//  - MMEngine's "Epoch(train) [1][50/500]" (MMDetection and the rest).
// Separate because each is read by its layout and needs its own state or
// position rules; the key: value pairs on the same lines are read by
// log_metrics_pairs.cc.
#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "parse/training/log_metrics_internal.h"

namespace vigil::parse::training::internal {

// YOLO's training table header "      Epoch    GPU_mem   box_loss ..." has
// neither digits nor separators; its first word is enough to look closer.
bool TableHeader(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 64 && IsSpace(line[i])) ++i;
  return line.substr(i, 6) == "Epoch " && line.find("GPU_mem") != std::string_view::npos;
}

// "Epoch 3/10", "Epoch [1/5], Step [100/600]", "iter 100:", "step    1/74 |",
// "iteration      100/  500000 |": a counter word, then its number.
void SegmentParser::ScanHeads() {
  std::string_view s = s_;
  size_t first_text = 0;
  while (first_text < s.size() && IsSpace(s[first_text])) ++first_text;
  // Visits only where a counter word may start (HeadBits), found 16 bytes
  // at a time.
  size_t next = 0;  // the end of the last word or head read
  for (size_t base = 0, block = 0; base < s.size() && !Full(); base += 16, ++block) {
    uint32_t bits = whole_ && block < line_.blocks ? line_.head_bits[block]
                                                   : HeadBits(Load16(s, base), s, base);
    for (; bits != 0 && !Full(); bits &= bits - 1) {
      size_t i = base + static_cast<size_t>(std::countr_zero(bits));
      if (i < next) continue;
      next = ReadHead(i, first_text);
    }
  }
}

// The counter word at s_[i] and its number; returns where to look on.
size_t SegmentParser::ReadHead(size_t i, size_t first_text) {
  std::string_view s = s_;
  // "epoch" goes on with a 'p', "step", "iter" and "iteration" with a 't':
  // most words are turned down here. (No other start lies inside the word,
  // so looking on right after its first byte is the same as after its end.)
  char second = i + 1 < s.size() ? Lower(s[i + 1]) : '\0';
  if (second != (Lower(s[i]) == 'e' ? 'p' : 't')) return i + 1;
  size_t w = i;
  while (w < s.size() && IsAlpha(s[w])) ++w;
  std::string_view word = s.substr(i, w - i);
  bool epoch = EqualsLower(word, "epoch");
  if (!epoch && !EqualsLower(word, "step") && !EqualsLower(word, "iter") &&
      !EqualsLower(word, "iteration")) {
    return w + 1;
  }
  size_t j = w;
  if (j < s.size() && s[j] == ':') ++j;  // PyTorch's example: "Train Epoch: 1 [...]"
  size_t spaces = 0;
  while (j < s.size() && IsSpace(s[j]) && spaces < 16) ++j, ++spaces;
  bool bracket = j < s.size() && s[j] == '[';
  if (bracket) ++j;
  if (spaces == 0 && !bracket) return i + 1;
  while (j < s.size() && IsSpace(s[j]) && bracket) ++j;
  size_t num = j;
  int64_t n = 0;
  while (j < s.size() && IsDigit(s[j]) && j - num < 15) n = n * 10 + (s[j++] - '0');
  if (j == num || (j < s.size() && (IsWordChar(s[j]) || s[j] == '.'))) return i + 1;
  size_t k = j;
  while (k < s.size() && IsSpace(s[k]) && k - j < 8) ++k;
  if (k < s.size() && s[k] == '/') {
    ++k;
    while (k < s.size() && IsSpace(s[k]) && k - j < 16) ++k;
    size_t total = k;
    while (k < s.size() && IsDigit(s[k]) && k - total < 15) ++k;
    if (k == total && !(k < s.size() && s[k] == '?')) return i + 1;
    if (k == total) ++k;
    j = k;
  }
  if (bracket) {
    if (j >= s.size() || s[j] != ']') return i + 1;
    ++j;
  }
  size_t f = j;
  while (f < s.size() && IsSpace(s[f])) ++f;
  // Set off by the end or a delimiter; "Step 1: check the drivers" is prose,
  // so text after a ':' makes the head count only next to pairs.
  bool set_off = f == s.size() || s[f] == ',' || s[f] == '|' || s[f] == ']' ||
                 (s[f] == ':' && Trim(s.substr(f + 1)).empty());
  if (f < s.size() && s[f] == ':' && head_colon_ == std::string_view::npos) head_colon_ = f;
  Candidate* head = Add(num, epoch ? "epoch" : "step", static_cast<double>(n), Source::kHead);
  if (head != nullptr) {
    head->is_step = !epoch;
    head->strong = set_off && i == first_text;
  }
  return std::max(j, i + 1);
}

namespace {

// The cell without what it adds in parentheses at its end: a running
// average ("Loss 2.1274e+00 (1.5406e+00)", PyTorch's ImageNet example and
// its AverageMeter) or an aside (llm.c's "train loss 4.84 (took 2141 ms)").
std::string_view WithoutAside(std::string_view cell) {
  std::string_view t = Trim(cell);
  if (t.empty() || t.back() != ')') return cell;
  size_t open = t.rfind('(');
  if (open == std::string_view::npos || open == 0 || !IsSpace(t[open - 1])) return cell;
  return t.substr(0, open);
}

// Marian's "Cost 2.97881484 * 13341033 @ 2345 after 5203488403": a cost
// averaged over the target labels, times their count; the cell is its name
// and the average.
std::string_view WithoutCount(std::string_view t) {
  size_t times = t.find(" * ");
  if (times == std::string_view::npos) return t;
  std::string_view before = Trim(t.substr(0, times));
  size_t space = before.rfind(' ');
  double v;
  size_t end;
  if (space == std::string_view::npos || !ParseNumber(before, space + 1, &v, &end) ||
      end != before.size()) {
    return t;
  }
  return before;
}

}  // namespace

// "loss 2.3456", "time 123.45ms", "train loss 11.01", "15424 tok/s": a cell
// of a pipe table or of a comma list after a head.
bool SegmentParser::CellPair(std::string_view cell, size_t offset) {
  std::string_view t = Trim(WithoutCount(Trim(WithoutAside(cell))));
  if (t.empty()) return false;
  // Separators earlier in the cell ("eta 0:25:26 lr 0.000872", the Swin
  // Transformer's tab cells): its last name and number, if they stand apart.
  size_t sep = t.find_last_of("=:");
  if (sep != std::string_view::npos) {
    size_t last = t.rfind(' ');
    size_t name = last == std::string_view::npos ? 0 : t.rfind(' ', last - 1);
    if (last == std::string_view::npos || name == std::string_view::npos || name < sep)
      return false;
    t = t.substr(name + 1);
  }
  size_t lead = static_cast<size_t>(t.data() - cell.data());
  size_t last_space = t.rfind(' ');
  if (last_space == std::string_view::npos) return false;
  std::string_view tail = t.substr(last_space + 1);
  std::string_view head = Trim(t.substr(0, last_space));
  double v;
  size_t end;
  if (IsDigit(head.empty() ? 'x' : head[0]) || (head.size() > 1 && head[0] == '-')) {
    // "15424 tok/s": a value and its rate unit.
    if (!ParseNumber(head, 0, &v, &end) || end != head.size()) return false;
    Unit unit = ClassifyUnit(tail);
    if (unit.kind != UnitKind::kRate && unit.kind != UnitKind::kInverseRate) return false;
    if (unit.kind == UnitKind::kInverseRate) v = v == 0 ? 0 : 1 / v;
    Candidate* c = Add(offset + lead, unit.rate_name, v, Source::kCell);
    if (c != nullptr) c->metric_looking = true;
    return true;
  }
  if (!ParseNumber(tail, 0, &v, &end)) return false;
  Unit unit = ReadUnit(tail, end);
  if (unit.end != tail.size() || unit.kind == UnitKind::kUnknown) return false;
  size_t words = 1;
  for (char c : head) {
    if (c == ' ') ++words;
  }
  return KeyedCell(head, words, offset + lead + last_space + 1, v);
}

bool SegmentParser::KeyedCell(std::string_view head, size_t words, size_t value_pos, double v) {
  // A bracketed name: "[Loss] 51566519.44" (a loguru format).
  if (head.size() > 2 && head.front() == '[' && head.back() == ']' && words == 1) {
    head = head.substr(1, head.size() - 2);
  }
  for (char c : head) {
    if (!IsKeyChar(c) && c != ' ') return false;
  }
  if (head.empty() || !IsAlpha(head[0]) || words > 2) return false;
  Key key;
  key.off = arena_->size();
  AppendNormalized(arena_, key.off, head, false);
  key.len = arena_->size() - key.off;
  key.multi_word = words > 1;
  return AddKeyed(value_pos, key, v, Source::kCell);
}

void SegmentParser::ScanCells(std::string_view region, size_t offset, std::string_view delim) {
  // Two cells with text, a name and a number, make a row of a two-column
  // table (Stable-Baselines3's "|    loss                 | 0.0227     |").
  std::string_view texts[2];
  size_t text_pos[2] = {0, 0}, texts_seen = 0;
  size_t b = 0;
  while (b <= region.size() && !Full()) {
    size_t e = region.find(delim, b);
    if (e == std::string_view::npos) e = region.size();
    std::string_view cell = region.substr(b, e - b);
    CellPair(cell, offset + b);
    std::string_view t = Trim(cell);
    if (!t.empty()) {
      if (texts_seen < 2) {
        texts[texts_seen] = t;
        text_pos[texts_seen] = offset + static_cast<size_t>(t.data() - region.data());
      }
      ++texts_seen;
    }
    b = e + delim.size();
  }
  double v;
  size_t end;
  if (texts_seen == 2 && ParseNumber(texts[1], 0, &v, &end) && end == texts[1].size() &&
      texts[0].find(' ') == std::string_view::npos) {
    KeyedCell(texts[0], 1, text_pos[1], v);
  }
}

// YOLO's table: "Epoch GPU_mem box_loss ... Size" heads training rows,
// "Class Images Instances Box(P R mAP50 mAP50-95)" heads validation rows.
bool SegmentParser::ScanYolo(std::string_view text, size_t offset, bool* training_row) {
  if (train_columns_->empty() && val_columns_->empty()) {
    // No header seen yet: only a header itself can be read, and its second
    // word says so ("Epoch GPU_mem ...", "Class Images ...").
    size_t i = 0;
    while (i < text.size() && IsSpace(text[i])) ++i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    while (i < text.size() && IsSpace(text[i])) ++i;
    size_t b = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    std::string_view second = text.substr(b, i - b);
    if (second != "GPU_mem" && second != "Images") return false;
  }
  std::array<std::string_view, kMaxColumns + 1> tokens;
  size_t n = 0;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    if (i == text.size()) break;
    size_t b = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    if (n > kMaxColumns) return false;
    tokens[n++] = text.substr(b, i - b);
  }
  if (n < 3 || n > kMaxColumns) return false;
  if (tokens[0] == "Epoch" && tokens[1] == "GPU_mem") {
    train_columns_->assign(tokens.begin(), tokens.begin() + n);
    return true;
  }
  if (tokens[0] == "Class" && tokens[1] == "Images") {
    val_columns_->clear();
    std::string group;
    for (size_t i = 0; i < n; ++i) {
      std::string_view t = tokens[i];
      size_t open = t.find('(');
      if (open != std::string_view::npos) {
        group = t.substr(0, open) == "Box" ? "" : std::string(t.substr(0, open)) + "_";
        t.remove_prefix(open + 1);
      }
      bool close = !t.empty() && t.back() == ')';
      if (close) t.remove_suffix(1);
      val_columns_->push_back(group + std::string(t));
      if (close) group.clear();
    }
    return true;
  }
  auto cell = [&](size_t i, const std::string& name) {
    double v;
    size_t end;
    std::string_view t = tokens[i];
    if (!ParseNumber(t, 0, &v, &end)) return;
    Add(offset + static_cast<size_t>(t.data() - text.data()), name, v, Source::kColumn);
  };
  auto numeric = [&](size_t from) {
    for (size_t i = from; i < n; ++i) {
      double v;
      size_t end;
      if (!ParseNumber(tokens[i], 0, &v, &end)) return false;
      Unit unit = ReadUnit(tokens[i], end);
      if (unit.end != tokens[i].size() || unit.kind == UnitKind::kUnknown) return false;
    }
    return true;
  };
  std::string_view epoch = tokens[0];
  size_t slash = epoch.find('/');
  if (n == train_columns_->size() && slash != std::string_view::npos && slash > 0) {
    for (size_t i = 0; i < slash; ++i) {
      if (!IsDigit(epoch[i])) return false;
    }
    double v;
    size_t end;
    if (!numeric(1) || !ParseNumber(epoch, 0, &v, &end) || end != slash) return false;
    Add(offset + static_cast<size_t>(epoch.data() - text.data()), "epoch", v, Source::kColumn);
    for (size_t i = 1; i < n; ++i) cell(i, (*train_columns_)[i]);
    *training_row = true;
    return true;
  }
  if (n == val_columns_->size() && tokens[0] == "all" && numeric(1)) {
    for (size_t i = 1; i < n; ++i) cell(i, (*val_columns_)[i]);
    return true;
  }
  return false;
}

// MMEngine: "Epoch(train)  [1][ 50/500]", "Iter(train) [  50/1000]",
// "Epoch(val) [1][100/100]".
void SegmentParser::ScanMMEngine() {
  std::string_view s = s_;
  size_t at = s.find("(train)");
  bool train = at != std::string_view::npos;
  if (!train) at = s.find("(val)");
  if (!train && at == std::string_view::npos) at = s.find("(test)");
  if (at == std::string_view::npos || at < 4) return;
  bool epoch_based = at >= 5 && s.substr(at - 5, 5) == "Epoch";
  bool iter_based = s.substr(at - 4, 4) == "Iter";
  if (!epoch_based && !iter_based) return;
  size_t i = s.find(')', at) + 1;
  auto bracket = [&](int64_t* n, size_t* pos, bool* fraction) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i >= s.size() || s[i] != '[') return false;
    ++i;
    while (i < s.size() && IsSpace(s[i])) ++i;
    *pos = i;
    size_t b = i;
    *n = 0;
    while (i < s.size() && IsDigit(s[i]) && i - b < 15) *n = *n * 10 + (s[i++] - '0');
    if (i == b) return false;
    *fraction = i < s.size() && s[i] == '/';
    while (i < s.size() && s[i] != ']' && i - b < 32) ++i;
    if (i >= s.size() || s[i] != ']') return false;
    ++i;
    return true;
  };
  int64_t epoch = 0, iter = 0;
  size_t epoch_pos = 0, iter_pos = 0;
  bool fraction = false;
  if (epoch_based) {
    if (!bracket(&epoch, &epoch_pos, &fraction) || fraction) return;
    Add(epoch_pos, "epoch", static_cast<double>(epoch), Source::kFormat);
  }
  structured_ = true;
  if (!bracket(&iter, &iter_pos, &fraction) || !fraction || !train) return;
  Candidate* step = Add(iter_pos, "step", static_cast<double>(iter), Source::kFormat);
  if (step != nullptr) step->is_step = true;
}

// Darknet's (YOLO v2-v4) iteration line: "2267: 0.52, 0.61 avg, 0.001000
// rate, 3.43 seconds, 145088 images" — the iteration, this batch's loss, its
// running average and the learning rate, named after the values.
void SegmentParser::ScanDarknet() {
  std::string_view s = s_;
  size_t num;
  int64_t n;
  size_t i = LeadingCount(s, &num, &n);
  if (i == num || s.substr(i, 2) != ": ") return;
  i += 2;
  double loss, avg, rate;
  size_t loss_at = i, end;
  if (!ParseNumber(s, i, &loss, &end) || s.substr(end, 2) != ", ") return;
  i = end + 2;
  size_t avg_at = i;
  if (!ParseNumber(s, i, &avg, &end) || s.substr(end, 4) != " avg") return;
  i = end + 4;
  if (s.substr(i, 5) == " loss") i += 5;  // AlexeyAB's fork
  if (s.substr(i, 2) != ", ") return;
  i += 2;
  size_t rate_at = i;
  if (!ParseNumber(s, i, &rate, &end) || s.substr(end, 5) != " rate") return;
  structured_ = true;
  if (Candidate* step = Add(num, "step", static_cast<double>(n), Source::kFormat)) {
    step->is_step = true;
    step->strong = true;
  }
  Add(loss_at, "loss", loss, Source::kFormat);
  Add(avg_at, "avg_loss", avg, Source::kFormat);
  Add(rate_at, "learning_rate", rate, Source::kFormat);
}

// Names and numbers side by side with only spaces between, as hand-written
// loops print them: TensorFlow's tutorials' "Epoch 1 Batch 50 Loss 8.7892
// Accuracy 0.0123", "step 100 loss 2.34 lr 1e-4", "Iter 100/1000, loss 2.3,
// lr 0.01". Read only when one of the names is a training metric's (prose
// has numbers after words too: "Saved 12 files"), and only names that look
// like a metric's are kept.
namespace {

// The name before a number as one or two words: "Grad Norm 0.56",
// "Learning Rate 1.0e-04" name a training metric only together, so the word
// before `last` (one space apart, a word itself) joins it when the pair
// does and `last` alone does not. The key stays in the line: LowerKey reads
// the space as '_'.
template <typename IsTraining>
std::string_view TwoWordName(std::string_view s, std::string_view last,
                             const IsTraining& training_name) {
  size_t at = static_cast<size_t>(last.data() - s.data());
  if (at < 3 || s[at - 1] != ' ' || !IsWordChar(s[at - 2])) return last;
  size_t b = at - 2;
  while (b > 0 && IsWordChar(s[b - 1])) --b;
  if (!IsAlpha(s[b]) || (b > 0 && !IsSpace(s[b - 1]) && s[b - 1] != ',')) return last;
  std::string_view pair = s.substr(b, at + last.size() - b);
  if (!training_name(last)) return training_name(pair) ? pair : last;
  // A lower-case word before a training metric's name joins it: as a
  // qualifier ("train loss") or as the name of a part of it (icefall's
  // "batch avg ctc loss 0.0332" is the CTC loss, "sop loss" BERT's
  // sentence-order loss); the pair's own name then says which. Not a value
  // written as a word ("loss nan lr 0.00055784", CosyVoice).
  std::string_view word = pair.substr(0, pair.size() - last.size() - 1);
  double value;
  size_t end;
  bool joins = word[0] >= 'a' && word[0] <= 'z' && std::all_of(word.begin(), word.end(), IsAlpha) &&
               !ParseNumber(word, 0, &value, &end);
  return joins ? pair : last;
}

}  // namespace

void SegmentParser::ScanWordRuns() {
  std::string_view s = s_;
  // After a tqdm bar, what follows its "[times, rate]" (a log line glued on).
  size_t from = 0;
  if (tqdm_begin_ != std::string_view::npos) {
    size_t close = s.find(']', tqdm_end_);
    if (close == std::string_view::npos) return;
    from = close + 1;
  }
  struct Pair {
    std::string_view key;
    size_t value_pos;
    double value;
  };
  std::array<Pair, 16> pairs;
  size_t n = 0;
  bool training_metric = false;
  std::string_view prev;         // the token before
  std::string_view prev_number;  // the token before, when a number no name owns
  size_t prev_number_pos = 0;
  double prev_value = 0;
  for (size_t i = from; i < s.size() && n < pairs.size();) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    size_t b = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    std::string_view tok = s.substr(b, i - b);
    if (tok.empty()) break;
    std::string_view number = tok;
    if (number.back() == ',' || number.back() == ';') number.remove_suffix(1);
    double v;
    size_t end;
    // A number, or a non-finite word ("loss nan lr 0.00055784": CosyVoice).
    bool numeric = !number.empty() && (IsDigit(number[0]) || number[0] == '-' ||
                                       EqualsLower(number, "nan") || EqualsLower(number, "inf"));
    bool key_before = numeric && !prev.empty() && IsAlpha(prev[0]) &&
                      std::all_of(prev.begin(), prev.end(), IsWordChar);
    auto training_name = [&](std::string_view name) {
      char buf[kMaxNameLen];
      std::string_view lower;
      uint8_t rank;
      if (!LowerKey(name, buf, &lower)) return false;
      std::string_view c = CanonicalOfLower(lower, &rank);
      return c == "loss" || c == "learning_rate" || c == "grad_norm";
    };
    if (key_before && numeric && ParseNumber(number, 0, &v, &end) && end == number.size()) {
      std::string_view key = TwoWordName(s, prev, training_name);
      training_metric |= training_name(key);
      pairs[n++] = {key, b, v};
    } else if (!prev_number.empty() && n < pairs.size() && IsAlpha(tok[0])) {
      // The value first, then its name: tinygrad's "11.8750 loss, 1e-12 LR,".
      std::string_view name = tok;
      if (name.back() == ',') name.remove_suffix(1);
      if (!name.empty() && IsAlpha(name[0]) && std::all_of(name.begin(), name.end(), IsWordChar) &&
          training_name(name)) {
        training_metric = true;
        pairs[n++] = {name, prev_number_pos, prev_value};
      }
    }
    prev_number = {};
    // A number after "Step:" or "epoch=" is that key's: no name after it
    // takes it ("Step: 35 Lr 1.23e-05", NVIDIA's TF2 BERT).
    bool owned = key_before || (!prev.empty() && (prev.back() == ':' || prev.back() == '='));
    if (numeric && ParseNumber(number, 0, &v, &end) && end == number.size() && !owned) {
      prev_number = number;
      prev_number_pos = b;
      prev_value = v;
    }
    prev = tok;
  }
  if (!training_metric) return;
  for (size_t k = 0; k < n; ++k) {
    Key key;
    key.in_line = true;
    key.off = static_cast<size_t>(pairs[k].key.data() - s.data());
    key.len = pairs[k].key.size();
    size_t before = count_;
    if (!AddKeyed(pairs[k].value_pos, key, pairs[k].value, Source::kCell)) continue;
    Candidate& c = found_[before];
    if (!c.metric_looking && !c.is_step && Name(c) != "epoch") --count_;
  }
}

// A message that is only a metric's name and its value, after whatever
// prefix the logger adds: nnU-Net's "2024-04-26 09:41:39.493872: train_loss
// 0.7088", SpeechBrain's "Changing lr from 1 to 0.8" (the new value). Only
// a key with a canonical name counts: "using pin_memory on device 0" is
// prose.
void SegmentParser::ScanMessageTail() {
  std::string_view s = s_;
  size_t e = s.size();
  while (e > 0 && IsSpace(s[e - 1])) --e;
  auto token_before = [&](size_t end) {
    size_t b = end;
    while (b > 0 && !IsSpace(s[b - 1])) --b;
    return s.substr(b, end - b);
  };
  auto before = [&](std::string_view t) {
    size_t b = static_cast<size_t>(t.data() - s.data());
    while (b > 0 && IsSpace(s[b - 1])) --b;
    return b;
  };
  std::string_view value = token_before(e);
  double v;
  size_t end;
  if (value.empty() || !ParseNumber(value, 0, &v, &end) || end != value.size()) return;
  std::string_view key = token_before(before(value));
  bool from_to = key == "to";
  if (from_to) {  // "<key> from <old> to <new>", "<key> to <new>"
    key = token_before(before(key));
    double ignored;
    if (!key.empty() && ParseNumber(key, 0, &ignored, &end) && end == key.size()) {
      std::string_view from = token_before(before(key));
      if (from != "from") return;
      key = token_before(before(from));
    }
  }
  if (key.empty() || !IsAlpha(key[0])) return;
  for (char c : key) {
    if (!IsKeyChar(c)) return;
  }
  // "Updating learning rate to 5e-05": a name of two words.
  auto canonical_of = [&](std::string_view k) {
    uint8_t rank;
    char buf[kMaxNameLen];
    std::string_view lower;
    if (!LowerKey(k, buf, &lower)) return std::string_view();
    std::string_view c = CanonicalOfLower(lower, &rank);
    return c == "loss" || c == "learning_rate" || c == "grad_norm" ? c : std::string_view();
  };
  if (from_to && canonical_of(key).empty()) {
    std::string_view first = token_before(before(key));
    if (first.empty() || !std::all_of(first.begin(), first.end(), IsAlpha)) return;
    key = s.substr(static_cast<size_t>(first.data() - s.data()),
                   static_cast<size_t>(key.data() + key.size() - first.data()));
  }
  // What stands before the key is nothing or ends the logger's prefix
  // (": ", "| ", "- ", "] ", "> "); for "from ... to", one verb may come
  // first ("Changing lr from").
  auto prefix_ends = [&](size_t at) {
    return at == 0 || s[at - 1] == ':' || s[at - 1] == '|' || s[at - 1] == '-' ||
           s[at - 1] == ']' || s[at - 1] == '>';
  };
  size_t at = before(key);
  if (!prefix_ends(at)) {
    std::string_view verb = token_before(at);
    bool word = !verb.empty() && std::all_of(verb.begin(), verb.end(), IsAlpha);
    if (!from_to || !word || !prefix_ends(before(verb))) return;
  }
  if (canonical_of(key).empty()) return;
  Key k;
  k.off = arena_->size();
  AppendNormalized(arena_, k.off, key, false);
  k.len = arena_->size() - k.off;
  AddKeyed(static_cast<size_t>(value.data() - s.data()), k, v, Source::kCell);
}

}  // namespace vigil::parse::training::internal
