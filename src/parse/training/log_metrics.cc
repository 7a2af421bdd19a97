// The extractor's entry points (log_metrics.h). LogMetricExtractor::Extract
// is the dispatcher: it rejects most lines in one vectorised pass, strips
// ANSI escapes, splits '\r'-separated progress updates and takes out what
// an update repeats of the one before; SegmentParser::Parse runs the scans
// of each family of forms over an update and Finish decides what of their
// candidates is a metric and attaches the step. The families live in
// log_metrics_{pairs,progress,frameworks}.cc and share
// log_metrics_internal.h; see there for the layout.
#include "parse/training/log_metrics.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

#include "core/json_writer.h"
#include "parse/training/log_metrics_internal.h"

namespace vigil::parse::training {
namespace internal {

// Whether `s` holds one of `pairs` (two lower-case letters each, any case
// in `s`): the gates of the scans that read words. Sixteen bytes at a time;
// a pair across two blocks is seen through the carried last byte.
bool LetterPairs(std::string_view s, std::string_view pairs) {
  uint32_t carry[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < s.size(); i += 16) {
    Bytes16 lower = Load16(s, i) | 0x20;
    size_t width = std::min<size_t>(16, s.size() - i);
    for (size_t p = 0, k = 0; p + 1 < pairs.size() && k < 4; p += 2, ++k) {
      uint32_t first = BitMask(lower == pairs[p]);
      uint32_t second = BitMask(lower == pairs[p + 1]);
      if ((((first << 1) | carry[k]) & second) != 0) return true;
      carry[k] = (first >> (width - 1)) & 1;
    }
  }
  return false;
}

// The scans, one family of forms each, then the gate. A tqdm bar is looked
// for first: one found turns off the other layouts, and no pair is read
// inside it.
void SegmentParser::Parse(std::vector<MetricSample>* out) {
  if (line_.bracket) ScanTqdm();  // it starts at the '[' of the times
  if (tqdm_begin_ == std::string_view::npos) {
    bool training_row = false;
    if ((!train_columns_->empty() || !val_columns_->empty() || TableHeader(s_)) &&
        ScanYolo(s_, 0, &training_row)) {
      structured_ = true;
    }
    ScanKeras();
  }
  if (line_.paren) ScanMMEngine();  // all its forms hold a '('
  // Darknet's lines start with the iteration's number and a ':'.
  if (size_t f = s_.find_first_not_of(" \t"); f != std::string_view::npos && IsDigit(s_[f])) {
    ScanDarknet();
  }
  ScanHeads();
  ScanPairs();
  if (head_colon_ != std::string_view::npos && tqdm_begin_ == std::string_view::npos) {
    ScanCells(s_.substr(head_colon_ + 1), head_colon_ + 1, ",");
  }
  if (tqdm_begin_ == std::string_view::npos && line_.pipes &&
      (whole_ || std::count(s_.begin(), s_.end(), '|') >= 2)) {
    ScanCells(s_, 0, "|");
  }
  // Cells between " : " (Marian: "Ep. 1 : Up. 500 : Sen. 350559 : Cost 9.89 *
  // 10696858 : Time 482.42s : 22173.46 words/s : L.r. 9.3750e-06").
  if (tqdm_begin_ == std::string_view::npos && spaced_colons_ >= 2) ScanCells(s_, 0, " : ");
  // Cells between tabs: PyTorch's ImageNet example, "Time  0.738 ( 0.738)\tLoss ...".
  if (tqdm_begin_ == std::string_view::npos && line_.tab &&
      s_.find('\t') != std::string_view::npos) {
    ScanCells(s_, 0, "\t");
  }
  // A box drawn with U+2502 (Ray's result tables: "│ loss    0.6204 │").
  constexpr std::string_view kBoxBar = "\xe2\x94\x82";
  if (tqdm_begin_ == std::string_view::npos && line_.wide &&
      s_.find(kBoxBar) != std::string_view::npos) {
    ScanCells(s_, 0, kBoxBar);
  }
  // The scans of words read only a line that may name a training metric.
  bool pairs = std::any_of(
      found_.begin(), found_.begin() + static_cast<std::ptrdiff_t>(count_),
      [](const Candidate& c) { return c.source == Source::kPair || c.source == Source::kCell; });
  // With pairs, a line may still hold its loss as a name and a number
  // ("===> Epoch[4](1280/301): Loss 0.7165      LR: 9.904e-02").
  bool loss = std::any_of(found_.begin(), found_.begin() + static_cast<std::ptrdiff_t>(count_),
                          [](const Candidate& c) {
                            return c.fixed_len == 4 && std::string_view(c.fixed, 4) == "loss";
                          });
  // "Cost", a bare name of the loss (log_metrics_names.cc), before its
  // number beside other pairs: PaddlePaddle's "Pass 0, Batch 100, Cost 0.52,
  // {'classification_error_evaluator': 0.83}". Only the capitalised word is
  // looked for: a 'C' is rare in a log line, an 'o' is not.
  auto names_cost = [&] { return s_.find("Cost ") != std::string_view::npos; };
  auto names_loss = [&] {
    return s_.find("loss") != std::string_view::npos || s_.find("Loss") != std::string_view::npos ||
           s_.find("LOSS") != std::string_view::npos || names_cost();
  };
  if (pairs ? !loss && names_loss() : LetterPairs(s_, kMetricPairs)) {
    ScanWordRuns();
    if (count_ == 0) ScanMessageTail();
  }
  Finish(out);
}

// Decides what of the candidates is a metric: the gate for lines in no
// known format, the step, the order, and attaches the step to the rest.
void SegmentParser::Finish(std::vector<MetricSample>* out) {
  if (count_ == 0) return;
  auto is_pair = [](const Candidate& c) {
    return c.source == Source::kPair || c.source == Source::kCell;
  };
  size_t pairs = 0;
  bool metric_looking = false;
  bool strong_head = false;
  bool in_order = true;  // found in order of appearance: no sort needed
  for (size_t i = 0; i < count_; ++i) {
    const Candidate& c = found_[i];
    if (i > 0 && found_[i - 1].pos > c.pos) in_order = false;
    if (is_pair(c)) {
      ++pairs;
      metric_looking |= c.metric_looking;
    }
    if (c.source == Source::kHead && c.strong) strong_head = true;
  }
  std::string_view tail = Trim(s_);
  bool dump_line = pairs == 1 && !tail.empty() && tail.back() == ',';  // "lr=5e-05," in a config
  bool gate = structured_ || strong_head || (metric_looking && !dump_line && !config_);
  // A key written twice ("weight(decay=0.0), bias(decay=0.0)") names no
  // one value. The pairs and their names are listed once, not per
  // comparison (left uninitialised: only the first `listed` are read).
  struct Listed {
    size_t pos;
    const char* name;
    size_t name_len;
  };
  Listed listed[kMaxSamplesPerSegment];
  size_t listed_count = 0;
  if (gate && pairs > 1) {
    for (size_t i = 0; i < count_; ++i) {
      if (!is_pair(found_[i])) continue;
      std::string_view name = Written(found_[i]);
      listed[listed_count++] = Listed{found_[i].pos, name.data(), name.size()};
    }
  }
  // Cells of a table that repeat a name are a second group of the same
  // columns (CenterNet appends its validation results to the epoch's line):
  // the first is kept.
  auto repeated = [&](const Candidate& c) {
    std::string_view name = Written(c);
    for (size_t i = 0; i < listed_count; ++i) {
      const Listed& o = listed[i];
      if (c.source == Source::kCell && o.pos > c.pos) continue;
      if (o.name_len == name.size() && o.pos != c.pos &&
          std::string_view(o.name, o.name_len) == name) {
        return true;
      }
    }
    return false;
  };
  size_t kept_pairs = 0;
  for (size_t i = 0; i < count_; ++i) {
    Candidate& c = found_[i];
    c.keep =
        !is_pair(c) || (gate && !(c.multi_word && !c.metric_looking && pairs < 2) && !repeated(c));
    if (c.keep && is_pair(c)) ++kept_pairs;
  }
  if (kept_pairs > 1) KeepBestNamed();
  for (size_t i = 0; i < count_; ++i) {
    Candidate& c = found_[i];
    if (c.keep && c.fixed_len == 4 && std::string_view(c.fixed, 4) == "loss" &&
        LetterPairs(s_.substr(0, c.pos), kPhasePairs)) {
      std::string_view phase = PhaseLossBefore(c.pos);
      if (!phase.empty()) c.SetFixed(phase);
    }
  }
  // A head in prose ("resuming from epoch 3") counts only next to pairs.
  for (size_t i = 0; i < count_; ++i) {
    Candidate& c = found_[i];
    if (c.source == Source::kHead && !c.strong && kept_pairs == 0 && !structured_) c.keep = false;
  }
  // Output in order of appearance: a stable insertion sort of at most
  // kMaxSamplesPerSegment indexes, mostly in order already.
  std::array<uint8_t, kMaxSamplesPerSegment> order;
  for (size_t i = 0; i < count_; ++i) {
    size_t j = i;
    if (in_order) {
      order[i] = static_cast<uint8_t>(i);
      continue;
    }
    while (j > 0 && found_[order[j - 1]].pos > found_[i].pos) {
      order[j] = order[j - 1];
      --j;
    }
    order[j] = static_cast<uint8_t>(i);
  }
  const Candidate* step = nullptr;
  for (size_t k = 0; k < count_; ++k) {
    const Candidate& c = found_[order[k]];
    if (c.keep && c.is_step && (step == nullptr || c.step_rank < step->step_rank)) step = &c;
  }
  // The step as a plain integer: an optional<int64_t> copied whole was read
  // back from the stack before its two stores had landed (a store-forwarding
  // stall per sample).
  int64_t step_value = step != nullptr ? static_cast<int64_t>(step->value) : 0;
  size_t last_pos = std::string_view::npos;
  for (size_t k = 0; k < count_; ++k) {
    const Candidate& c = found_[order[k]];
    if (!c.keep || c.pos == last_pos) continue;  // one value read two ways
    if (c.is_step && &c != step) continue;
    last_pos = c.pos;
    MetricSample& sample = out->emplace_back();
    std::string_view name = Name(c);
    sample.name.append(name.data(), name.size());  // into an empty string: cheaper than assign
    sample.value = c.value;
    if (step != nullptr) sample.step.emplace(step_value);
  }
}

// The loss on a validation or test line is not the training loss: fairseq's
// "| valid | epoch 002 | valid on 'valid' subset | loss 9.393", "Eval: loss
// 0.5". A phase is a word standing alone before the loss ("valid", not
// "valid_loss" or "/data/test/"), and a "train" after it takes it back.
std::string_view SegmentParser::PhaseLossBefore(size_t pos) const {
  // Caffe reports each output blob after the iteration's total:
  // "Train net output #0: loss = 51.5 (* 1 = 51.5 loss)", "Test net output".
  std::string_view head = s_.substr(0, std::min(pos, s_.size()));
  if (head.find(" net output #") != std::string_view::npos) {
    return head.find("Test net output #") != std::string_view::npos ? "test_loss" : "output_loss";
  }
  struct Phase {
    std::string_view word, loss;
  };
  static constexpr Phase kPhases[] = {{"valid", "valid_loss"},     {"validation", "val_loss"},
                                      {"val", "val_loss"},         {"eval", "eval_loss"},
                                      {"evaluation", "eval_loss"}, {"evaluating", "eval_loss"},
                                      {"test", "test_loss"},       {"testing", "test_loss"}};
  std::string_view found;
  std::string_view s = s_.substr(0, std::min(pos, s_.size()));
  for (size_t i = 0; i < s.size();) {
    if (!IsAlpha(s[i])) {
      ++i;
      continue;
    }
    size_t b = i;
    while (i < s.size() && IsAlpha(s[i])) ++i;
    bool alone = (b == 0 || !(IsKeyChar(s[b - 1]) || s[b - 1] == '@')) &&
                 (i == s.size() || !(IsKeyChar(s[i]) || s[i] == '@'));
    if (!alone) continue;
    std::string_view word = s.substr(b, i - b);
    if (EqualsLower(word, "train") || EqualsLower(word, "training")) found = {};
    for (const Phase& p : kPhases) {
      if (EqualsLower(word, p.word)) found = p.loss;
    }
  }
  return found;
}

void SegmentParser::KeepBestNamed() {
  // Most lines name each metric once: a mask of (length, first byte) of
  // the canonical names shows that without comparing pairs.
  uint64_t seen = 0;
  bool clash = false;
  for (size_t i = 0; i < count_ && !clash; ++i) {
    const Candidate& c = found_[i];
    if (!c.keep || c.fixed_len == 0 || c.is_step) continue;
    // Distinct for every canonical name (loss, learning_rate, grad_norm, epoch, the rates).
    uint64_t h = c.fixed_len * 5 + static_cast<uint8_t>(c.fixed[0]) * 3 +
                 static_cast<uint8_t>(c.fixed[c.fixed_len - 1]);
    uint64_t bit = uint64_t{1} << (h & 63);
    clash = (seen & bit) != 0;
    seen |= bit;
  }
  if (!clash) return;
  for (size_t i = 0; i < count_; ++i) {
    Candidate& c = found_[i];
    auto keyed = [](const Candidate& k) {
      return k.keep && k.fixed_len > 0 && !k.is_step &&
             (k.source == Source::kPair || k.source == Source::kCell);
    };
    if (!keyed(c)) continue;
    std::string_view name(c.fixed, c.fixed_len);
    for (size_t j = 0; j < count_ && c.fixed_len > 0; ++j) {
      const Candidate& o = found_[j];
      if (j == i || !keyed(o) || o.pos == c.pos || std::string_view(o.fixed, o.fixed_len) != name) {
        continue;
      }
      // Drop c when o names the metric more directly, or as directly and first.
      // c then goes by the name it was written with: "loss=0.5,
      // reduced_train_loss=0.7" keeps both, and the loss is the first.
      if (o.alias_rank < c.alias_rank || (o.alias_rank == c.alias_rank && o.pos < c.pos)) {
        c.fixed = nullptr;
        c.fixed_len = 0;
      }
    }
  }
}

}  // namespace internal

namespace {

using internal::AnyByte;
using internal::BitMask;
using internal::Bytes16;
using internal::ClassOf;
using internal::EqualsLower;
using internal::HeadBits;
using internal::IsDigit;
using internal::kDigitBit;
using internal::kMaxBlocks;
using internal::kSepBit;
using internal::LineBytes;
using internal::Load16;
using internal::Lower;
using internal::PairBits;
using internal::Trim;

// Fills *b (see LineBytes) from one pass over the line.
void ScanLineBytes(std::string_view line, LineBytes* b) {
  // The flags are gathered as vectors (re-reading bytes is harmless to
  // them), the '|' count as bits.
  Bytes16 controls{}, cr{}, paren{}, bracket{}, tab{}, wide{};
  uint32_t pipe = 0, pipes = 0;
  size_t block = 0;
  for (size_t i = 0; i < line.size(); i += 16, ++block) {
    // The last block of a line of 16 bytes or more is read as the line's
    // last 16 bytes and its bits shifted down past those already seen: a
    // copy of fewer bytes into a zeroed block stalls the load after it.
    Bytes16 v;
    size_t at = i;
    if (i + 16 <= line.size()) {
      std::memcpy(&v, line.data() + i, 16);
    } else if (line.size() >= 16) {
      at = line.size() - 16;
      std::memcpy(&v, line.data() + at, 16);
    } else {
      v = Load16(line, i);
    }
    unsigned shift = static_cast<unsigned>(i - at);
    controls |= reinterpret_cast<Bytes16>((v == '\x1b') | (v == '\b'));
    cr |= reinterpret_cast<Bytes16>(v == '\r');
    paren |= reinterpret_cast<Bytes16>(v == '(');
    bracket |= reinterpret_cast<Bytes16>(v == '[');
    tab |= reinterpret_cast<Bytes16>(v == '\t');
    wide |= reinterpret_cast<Bytes16>(v >= 0x80);
    uint32_t here = BitMask(v == '|') >> shift;
    if (here != 0) {  // a second '|', in this block or after an earlier one
      pipes |= pipe | (here & (here - 1));
      pipe = here;
    }
    if (block < kMaxBlocks) {
      b->pair_bits[block] = PairBits(v, line, at) >> shift;
      b->head_bits[block] = HeadBits(v, line, at) >> shift;
    }
  }
  b->controls = AnyByte(controls);
  b->cr = AnyByte(cr);
  b->paren = AnyByte(paren);
  b->bracket = AnyByte(bracket);
  b->pipes = pipes != 0;
  b->tab = AnyByte(tab);
  b->wide = AnyByte(wide);
  b->blocks = std::min(block, kMaxBlocks);
}

bool SameSample(const MetricSample& a, const MetricSample& b) {
  if (a.name != b.name || a.step != b.step) return false;
  if (std::isnan(a.value)) return std::isnan(b.value);
  return a.value == b.value;
}

// Copies s into *out without ANSI escape sequences (CSI "ESC [ ... final",
// OSC "ESC ] ... BEL or ESC \", and two-byte escapes) and backspaces.
void StripControls(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\b') continue;
    if (c != '\x1b') {
      out->push_back(c);
      continue;
    }
    if (i + 1 >= s.size()) break;
    char kind = s[++i];
    if (kind == '[') {
      ++i;
      while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
    } else if (kind == ']') {
      ++i;
      while (i < s.size() && s[i] != '\a' &&
             !(s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '\\')) {
        ++i;
      }
      if (i < s.size() && s[i] == '\x1b') ++i;
    }
  }
}

bool EndsInNumber(std::string_view line) {
  size_t e = line.size();
  while (e > 0 && (line[e - 1] == ' ' || line[e - 1] == '\t')) --e;
  if (e > 0 && line[e - 1] == '.') --e;                         // the end of a sentence
  return e >= 3 && IsDigit(line[e - 1]) && line[e - 2] != ' ';  // "LR 0.0001", not "epoch 3"
}

// Whether the line could hold a metric at all: a separator ('=' ':' '|'
// '/'), and a digit or a non-finite word. Most log lines stop here.
bool MayHoldMetric(std::string_view line, bool table_rows) {
  Bytes16 seps = {}, digits = {};
  size_t i = 0;
  for (; i + 16 <= line.size(); i += 16) {
    Bytes16 v;
    std::memcpy(&v, line.data() + i, 16);
    seps |= reinterpret_cast<Bytes16>((v == '=') | (v == ':') | (v == '|') | (v == '/'));
    digits |= reinterpret_cast<Bytes16>(static_cast<Bytes16>(v - '0') < 10);
    if (AnyByte(seps) && AnyByte(digits)) return true;
  }
  bool sep = AnyByte(seps), digit = AnyByte(digits);
  for (; i < line.size(); ++i) {
    uint8_t c = ClassOf(line[i]);
    sep = sep || (c & kSepBit);
    digit = digit || (c & kDigitBit);
  }
  // YOLO's "all 128 929 ..."; a message that ends in a number may be a
  // name and its value ("LR 0.000100", "Changing lr from 1 to 0.8").
  // A row of a box drawn with U+2502 ("│ loss    0.6204 │", Ray).
  // Or names and numbers with no separator at all ("11.8750 loss, 1e-12 LR").
  if (!sep) {
    return (table_rows && digit) || EndsInNumber(line) ||
           (digit && line.find("\xe2\x94\x82") != std::string_view::npos) ||
           (digit && internal::LetterPairs(line, internal::kMetricPairs));
  }
  if (digit) return true;
  for (size_t k = 0; k + 3 <= line.size(); ++k) {
    char c = Lower(line[k]);
    if ((c == 'n' || c == 'i') &&
        (EqualsLower(line.substr(k, 3), "nan") || EqualsLower(line.substr(k, 3), "inf"))) {
      return true;
    }
  }
  return false;
}

// Python repr's rule for where scientific notation starts, without its
// trailing ".0": 100, 0.0001, 1e-05, 1e+16.
void AppendShortest(std::string* out, double v) {
  if (std::isnan(v)) {
    out->append("\"nan\"");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "\"inf\"" : "\"-inf\"");
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
  size_t e = sci.find('e');
  std::string_view mantissa = sci.substr(0, e);
  int exp = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+'), sci.data() + sci.size(), exp);
  bool negative = !mantissa.empty() && mantissa[0] == '-';
  std::string digits;
  for (char c : mantissa) {
    if (IsDigit(c)) digits.push_back(c);
  }
  if (negative) out->push_back('-');
  if (exp < -4 || exp >= 16) {
    out->push_back(digits[0]);
    if (digits.size() > 1) {
      out->push_back('.');
      out->append(digits, 1);
    }
    out->push_back('e');
    out->push_back(exp < 0 ? '-' : '+');
    int a = exp < 0 ? -exp : exp;
    if (a < 10) out->push_back('0');
    out->append(std::to_string(a));
    return;
  }
  if (exp < 0) {
    out->append("0.");
    out->append(static_cast<size_t>(-exp - 1), '0');
    out->append(digits);
    return;
  }
  size_t int_len = static_cast<size_t>(exp) + 1;
  if (digits.size() <= int_len) {
    out->append(digits);
    out->append(int_len - digits.size(), '0');
    return;
  }
  out->append(digits, 0, int_len);
  out->push_back('.');
  out->append(digits, int_len);
}

}  // namespace

std::string CanonicalMetricName(std::string_view key) {
  char buf[internal::kMaxNameLen];
  std::string_view lower;
  if (!internal::LowerKey(key, buf, &lower)) return std::string(key);
  std::string_view canonical = internal::CanonicalOfLower(lower);
  return canonical.empty() ? std::string(key) : std::string(canonical);
}

bool LogMetricExtractor::JsonRecordMember(std::string_view text) {
  constexpr size_t kMaxJsonDepth = 16;
  std::string_view t = Trim(text);
  if (t.empty()) return false;
  char first = t.front(), last = t.back();
  // Outside JSON only a line ending in an opening brace, or opening one it
  // does not close, starts it; inside,
  // a line that is no JSON text ends it. The rest of a log costs a few
  // byte reads a line.
  if (json_open_.empty()) {
    if (last != '{' && last != '[' && !(first == '{' && last != '}')) return false;
  } else if (first != '"' && first != '{' && first != '[' && first != '}' && first != ']' &&
             !internal::IsDigit(first) && first != '-') {
    json_open_.clear();
    json_counter_ = false;
    return false;
  }
  bool member = false;
  // "{"iter": 120000, ": the object opens, and its first member follows.
  if (first == '{' && !Trim(t.substr(1)).empty() && Trim(t.substr(1)).front() == '"' &&
      json_open_.size() < kMaxJsonDepth) {
    json_open_.push_back('{');
    json_counter_ = false;
    t = Trim(t.substr(1));
    first = '"';
  }
  if (first == '"' && !json_open_.empty() && json_open_.back() == '{') {
    // "key": value at the object's own level, before any container it opens.
    size_t colon = t.find("\": ");
    bool records = json_open_.size() >= 2 && json_open_[json_open_.size() - 2] == '[';
    if (colon != std::string_view::npos && colon > 1) {
      char buf[internal::kMaxNameLen];
      std::string_view lower;
      char v = colon + 3 < t.size() ? t[colon + 3] : '\0';
      bool numeric = internal::IsDigit(v) || v == '-' || v == '"';
      if (internal::LowerKey(t.substr(1, colon - 1), buf, &lower)) {
        // A counter, or a loss other than the training loss itself
        // (ESPnet's "main/loss_ctc"), says the object is a record of a
        // step; a configuration names settings.
        std::string_view c = internal::CanonicalOfLower(lower);
        if (c == "step" || c == "epoch" ||
            (c.empty() && numeric && lower.find("loss") != std::string_view::npos)) {
          json_counter_ = true;
        }
      }
      member = (records || (json_open_.size() == 1 && json_counter_)) && numeric;
    }
  }
  bool quoted = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '\\' && quoted) {
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && (c == '{' || c == '[')) {
      if (json_open_.size() >= kMaxJsonDepth) break;
      json_open_.push_back(c);
      if (c == '{') json_counter_ = false;
    } else if (!quoted && (c == '}' || c == ']') && !json_open_.empty()) {
      json_open_.pop_back();
      json_counter_ = false;
    }
  }
  return member;
}

void LogMetricExtractor::NoteAnnouncement(std::string_view text,
                                          const std::vector<MetricSample>& out, size_t first) {
  if (Trim(text).back() != ':') return;
  for (size_t i = first; i < out.size(); ++i) {
    if (out[i].name == "step") {
      announced_ = 1;
      return;
    }
  }
}

bool LogMetricExtractor::AnnouncedMember(std::string_view text) {
  std::string_view t = Trim(text);
  if (announced_ == 1) {
    // The dict opens on the line right after its announcement.
    announced_ = 0;
    if (t.empty() || t.front() != '{') return false;
    announced_ = 2;
    t = Trim(t.substr(1));
  }
  // A member: a quoted key and a value that is no container, then ',' or
  // the dict's '}'.
  if (t.size() < 4 || (t.front() != '\'' && t.front() != '"') ||
      t.find_first_of("{[") != std::string_view::npos || (t.back() != ',' && t.back() != '}')) {
    announced_ = 0;
    return false;
  }
  if (t.back() == '}') announced_ = 0;
  return true;
}

void LogMetricExtractor::Extract(std::string_view line, std::vector<MetricSample>* out) {
  bool member = JsonRecordMember(line);
  if (announced_ != 0) [[unlikely]] {
    if (AnnouncedMember(line)) member = true;
  }
  if (!member && !MayHoldMetric(line, !val_columns_.empty()) && !internal::TableHeader(line)) {
    return;
  }
  LineBytes bytes;
  ScanLineBytes(line, &bytes);
  std::string_view text = line;
  if (bytes.controls) {
    StripControls(line, &clean_);
    text = clean_;
  }
  if (!bytes.cr) {
    // One update, the common case: the parser appends straight to *out.
    if (Trim(text).empty()) return;
    internal::SegmentParser parser(text, bytes, !bytes.controls, &names_, &key_memo_,
                                   &train_columns_, &val_columns_);
    if (member) parser.MarkRecordMember();
    size_t first = out->size();
    parser.Parse(out);
    // A step line ending in ':' announces the dict on the next line.
    if (char last = text.back(); last == ':' || last == ' ') [[unlikely]] {
      NoteAnnouncement(text, *out, first);
    }
    return;
  }
  // Several updates: each is parsed into *out, then what repeats a sample of
  // the previous update that gave any is taken out again.
  previous_.clear();
  size_t b = 0;
  while (b <= text.size()) {
    size_t e = text.find('\r', b);
    if (e == std::string_view::npos) e = text.size();
    std::string_view segment = text.substr(b, e - b);
    b = e + 1;
    if (Trim(segment).empty()) continue;
    size_t first = out->size();
    internal::SegmentParser(segment, bytes, false, &names_, &key_memo_, &train_columns_,
                            &val_columns_)
        .Parse(out);
    if (out->size() == first) continue;
    bool last = b > text.size();
    if (!last) segment_.assign(out->begin() + static_cast<std::ptrdiff_t>(first), out->end());
    auto repeated = [&](const MetricSample& sample) {
      return std::any_of(previous_.begin(), previous_.end(),
                         [&](const MetricSample& p) { return SameSample(p, sample); });
    };
    out->erase(
        std::remove_if(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(), repeated),
        out->end());
    if (!last) std::swap(previous_, segment_);
  }
}

std::string MetricSampleJson(int64_t line, const MetricSample& sample,
                             std::string_view position_key) {
  std::string out = "{";
  AppendJsonString(&out, position_key);
  out.append(": ");
  out.append(std::to_string(line));
  out.append(", \"metric\": ");
  AppendJsonString(&out, sample.name);
  out.append(", \"value\": ");
  AppendShortest(&out, sample.value);
  if (sample.step) {
    out.append(", \"step\": ");
    out.append(std::to_string(*sample.step));
  }
  out.push_back('}');
  return out;
}

std::string TrainingSeriesName(std::string_view metric) {
  std::string out(kTrainingMetricPrefix);
  for (char c : metric) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == ':';
    char m = ok ? c : '_';
    if (m == '_' && out.back() == '_') continue;  // "a / b" -> a_b, not a___b
    out.push_back(m);
  }
  while (out.size() > kTrainingMetricPrefix.size() && out.back() == '_') out.pop_back();
  return out;
}

}  // namespace vigil::parse::training
